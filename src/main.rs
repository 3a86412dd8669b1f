//! `hm`: parse arguments, dispatch, print the error chain once and choose
//! the exit code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // An agent's hook: no argument parsing that could fail (an exit status
    // of 2 makes Claude Code block the tool), straight to the report.
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if args.get(1).is_some_and(|a| a == "hook")
        && !args.iter().skip(2).any(|a| a == "--help" || a == "-h")
    {
        heimdall::cmd::hook::run(&args[2..]);
        return ExitCode::SUCCESS;
    }
    // Signals blocked by whoever started us would stay pending: a
    // supervisor deaf to SIGTERM, a dashboard to SIGHUP. The mask is
    // inherited, and no thread is running yet, so every later one gets this.
    let _ = nix::sys::signal::SigSet::empty().thread_set_mask();
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
