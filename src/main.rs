//! `hm`: parse arguments, dispatch, print the error chain once and choose
//! the exit code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = heimdall::cli::Cli::parse();
    match heimdall::cmd::dispatch(cli) {
        Ok(code) => ExitCode::from(u8::try_from(code.clamp(0, 255)).unwrap_or(1)),
        Err(err) => {
            // A closed stdout (`hm ls | head`) is not worth a message.
            if heimdall::cmd::is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("hm: {}", heimdall::error::describe(&err));
            ExitCode::from(heimdall::cmd::exit_code_for(&err))
        }
    }
}
