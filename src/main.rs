//! `hm`: parse arguments, dispatch, print the error chain once and choose
//! the exit code.

use std::io::Write;
use std::process::ExitCode;

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
    let cli = match parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    match heimdall::cmd::dispatch(cli) {
        Ok(code) => ExitCode::from(u8::try_from(code.clamp(0, 255)).unwrap_or(1)),
        Err(err) => {
            // A closed stdout (`hm ls | head`) is not worth a message.
            if heimdall::cmd::is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            // Not `eprintln!`, which panics when standard error is a
            // terminal that is gone (a dashboard whose window closed).
            let _ = writeln!(std::io::stderr(), "hm: {}", heimdall::error::describe(&err));
            ExitCode::from(heimdall::cmd::exit_code_for(&err))
        }
    }
}

/// The command line, parsed in a frame of its own: never inlined into
/// `main`, whose frame stays on the stack for as long as a supervisor runs
/// (clap's temporaries would keep their stack pages resident).
///
/// Help and version are printed as clap prints them; a mistake is one
/// line on standard error, exit status 2, as every other error of `hm` is.
#[inline(never)]
fn parse() -> Result<heimdall::cli::Cli, ExitCode> {
    use clap::Parser;
    use clap::error::ErrorKind;
    heimdall::cli::Cli::try_parse().map_err(|err| {
        if matches!(
            err.kind(),
            ErrorKind::DisplayHelp
                | ErrorKind::DisplayVersion
                | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        ) {
            let _ = err.print();
            return ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2));
        }
        let said = heimdall::cli::one_line(&err.render().to_string());
        let _ = writeln!(std::io::stderr(), "hm: {said}");
        ExitCode::from(2)
    })
}
