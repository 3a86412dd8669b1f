//! Command-line types (clap). No logic beyond parsing lives here.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::config::LogLevel;

#[derive(Debug, Parser)]
#[command(
    name = "hm",
    version,
    about = "Supervise long-lived terminal sessions and see them all at once",
    propagate_version = true,
    disable_help_subcommand = false
)]
pub struct Cli {
    /// Use this config file instead of searching for heimdall.toml
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,

    /// Directory holding session sockets, for the command that follows
    /// (which may also take it after its name)
    #[arg(long, value_name = "DIR")]
    pub socket_dir: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

// Each subcommand's arguments are built only when it is the one parsed
// (clap's `defer`): a supervisor is one process per session, and the
// arguments of the other 24 commands, built and freed to parse `hm run`,
// left 24 KiB of its heap dirty for the session's life. Help, completions
// and man pages build the whole tree as before. A deferred part is applied
// last, so a struct of arguments carries no doc comment: it would replace
// the command's own line (a test checks every command).
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Start a session (and attach to it, unless --detach)
    Run(RunArgs),
    /// Attach this terminal to a running session
    Attach(AttachArgs),
    /// Show one session's state
    Status(StatusArgs),
    /// List sessions
    Ls(LsArgs),
    /// Stop a session: SIGTERM, then SIGKILL after a grace period
    Kill(KillArgs),
    /// The dashboard: every session at once
    Tui(TuiArgs),
    /// Why a session is in its state: the signals and the evidence
    Explain(ExplainArgs),
    /// Save a session's screen and verdict as a fixture for `hm replay`
    Capture(CaptureArgs),
    /// Classify a saved screen or a recording at a given time, offline
    Classify(ClassifyArgs),
    /// Check fixture cases (saved screens, recordings with labels)
    Replay(ReplayArgs),
    /// Wait until a session is in a state (waiting, idle, ...) or exits
    Wait(WaitArgs),
    /// Type text or keys into a session
    Send(SendArgs),
    /// Print a session's output history as text, or its current screen
    Logs(LogsArgs),
    /// Print one line per state change of any session, as it happens
    Events(EventsArgs),
    /// Forget sessions that ended (their records and logs)
    Rm(RmArgs),
    /// Forget every session that ended
    Clean(CleanArgs),
    /// Start a session that ended again: same id, command, directory; an
    /// agent resumes its conversation when hm knows it (--fresh: a new one)
    Restart(EndedArgs),
    /// Start again the sessions lost when the machine restarted (or their
    /// supervisor was killed): agents resume their conversation, shells
    /// start in their directory, `hm run --restore` commands run again
    Restore(RestoreArgs),
    /// Print a shell completion script: hm completions bash > ~/.local/share/bash-completion/completions/hm
    Completions(CompletionsArgs),
    /// Print the man page (roff): hm man > hm.1; or write one page per
    /// command into a directory: hm man --dir ~/.local/share/man/man1
    Man(ManArgs),
    /// Approve the dialog a session waits at (a permission, a plan, a
    /// folder to trust), with the keys its agent's rules give
    Approve(ApproveArgs),
    /// Deny the dialog a session waits at, with the keys its agent's rules
    /// give
    Deny(AnswerArgs),
    /// Choose an option of the dialog a session waits at, by its number
    /// (Claude Code's question: hm choose cc 2 picks `2. Hi there`)
    Choose(ChooseArgs),
    /// Continue a session whose program is stopped (Ctrl-Z, SIGSTOP), as
    /// a shell's fg would: hm status says `waiting · stopped`
    Continue(ContinueArgs),
    /// Give a running session a new label, a name for people beside its id
    /// (hm label cc1 review PR 42); with no text, take it away
    Label(LabelArgs),
    /// An agent's hook command (hm run installs it for known agents; see
    /// hm setup): hm hook claude|codex|gemini [PAYLOAD]. Sends what the
    /// agent reports to its session; prints nothing, always exits 0
    Hook(HookArgs),
    /// Print the hook set-up for an agent started outside hm run (hm
    /// setup claude|codex|gemini), or the unit that restores sessions at
    /// login (hm setup autostart)
    Setup(SetupArgs),
    /// Serve this machine's sessions over stdin and stdout, for a
    /// dashboard or command on another machine (ssh HOST hm proxy)
    Proxy(ProxyArgs),
}

/// clap's report of a mistake, made one line: its message, the items it
/// lists under it (the arguments missing, the values possible), its tip
/// and the usage, in clap's own words. clap's report is five to nine
/// lines, most of them blank or the same for every mistake.
pub fn one_line(report: &str) -> String {
    let mut said = String::new();
    let mut usage = None;
    let mut listing = false;
    for line in report.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(u) = line.strip_prefix("Usage: ") {
            usage = Some(u);
        } else if line.starts_with("For more information") {
        } else if let Some(tip) = line.strip_prefix("tip: ") {
            said.push_str("; ");
            said.push_str(tip);
            listing = false;
        } else if said.is_empty() {
            said.push_str(line.strip_prefix("error: ").unwrap_or(line));
            listing = said.ends_with(':');
        } else {
            let after = if said.ends_with(':') || !listing {
                " "
            } else {
                ", "
            };
            said.push_str(after);
            said.push_str(line);
            listing = listing || said.ends_with(':');
        }
    }
    match usage {
        Some(usage) => format!("{said} (usage: {usage})"),
        None => said,
    }
}

impl Command {
    /// Where the command looks for sessions, for a command that does.
    pub fn dir_mut(&mut self) -> Option<&mut DirArgs> {
        Some(match self {
            Command::Run(a) => &mut a.dir,
            Command::Attach(a) => &mut a.dir,
            Command::Status(a) => &mut a.dir,
            Command::Ls(a) => &mut a.dir,
            Command::Kill(a) => &mut a.dir,
            Command::Tui(a) => &mut a.dir,
            Command::Explain(a) => &mut a.dir,
            Command::Capture(a) => &mut a.dir,
            Command::Wait(a) => &mut a.dir,
            Command::Send(a) => &mut a.dir,
            Command::Logs(a) => &mut a.dir,
            Command::Events(a) => &mut a.dir,
            Command::Rm(a) => &mut a.dir,
            Command::Clean(a) => &mut a.dir,
            Command::Restart(a) => &mut a.dir,
            Command::Restore(a) => &mut a.dir,
            Command::Approve(a) => &mut a.answer.dir,
            Command::Deny(a) => &mut a.dir,
            Command::Choose(a) => &mut a.answer.dir,
            Command::Continue(a) => &mut a.dir,
            Command::Label(a) => &mut a.dir,
            Command::Proxy(a) => &mut a.dir,
            Command::Classify(_)
            | Command::Replay(_)
            | Command::Completions(_)
            | Command::Man(_)
            | Command::Hook(_)
            | Command::Setup(_) => return None,
        })
    }
}

#[derive(Debug, Args)]
pub struct ProxyArgs {
    #[command(flatten)]
    pub dir: DirArgs,
}

#[derive(Debug, Args)]
pub struct HookArgs {
    /// The agent, then the payload when the agent passes it as an
    /// argument (Codex's notify); otherwise the payload is read from stdin
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

#[derive(Debug, Args)]
pub struct SetupArgs {
    /// claude, codex or gemini (their hooks), or autostart (a systemd user
    /// unit that runs hm restore at login)
    #[arg(value_parser = ["claude", "codex", "gemini", "autostart"])]
    pub agent: String,
    /// autostart: write the unit into ~/.config/systemd/user and enable
    /// it, instead of printing it
    #[arg(long)]
    pub install: bool,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Exits 0 when every lost session it could start was started: one left \
by choice (a command not started with `hm run --restore`) is said on stderr and is no failure. \
Exits 1 when one it should have started did not start, a manifest could not be read, a lost \
session's program still runs without its supervisor (`hm kill ID` stops it), or a session \
named on the command line is not one it can restore (one still running is no error)."
)]
pub struct RestoreArgs {
    /// Only these sessions [default: every lost session]
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
    /// Print what would be started, and start nothing
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub dir: DirArgs,
}

#[derive(Debug, Args)]
pub struct AnswerArgs {
    /// Session id
    pub id: String,
    /// Only if the dialog is still the one with this id (as `hm status`,
    /// `hm explain` or the dashboard's inbox showed it): a dialog shown
    /// since, even one that looks the same, is refused
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub dialog: Option<u64>,
    /// Only if the dialog is the one this screen rule recognises (as `hm
    /// explain` names it, e.g. codex.permission)
    #[arg(long, value_name = "RULE")]
    pub rule: Option<String>,
    /// Only if the dialog is exactly the one `hm explain --json` showed
    /// (its dialog's fingerprint)
    #[arg(long, value_name = "HEX")]
    pub fingerprint: Option<String>,
    /// Only if what the dialog asks about (the command, the file, the
    /// folder) matches this regex
    #[arg(long, value_name = "REGEX")]
    pub subject: Option<String>,
    #[command(flatten)]
    pub dir: DirArgs,
    /// Print what was done (or why not) as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ApproveArgs {
    #[command(flatten)]
    pub answer: AnswerArgs,
    /// With the dialog's own option not to be asked again for the like
    /// (Claude Code's "switch to accept edits ... for this session" or
    /// "don't ask again for ...", Codex's "don't ask again for commands
    /// that start with ...", Gemini CLI's "Allow for this session");
    /// refused where the dialog has none
    #[arg(long)]
    pub always: bool,
}

#[derive(Debug, Args)]
pub struct ChooseArgs {
    #[command(flatten)]
    pub answer: AnswerArgs,
    /// The option's number, as the dialog shows it (`2. Hi there`: 2);
    /// hm status and the dashboard's inbox list them
    #[arg(value_name = "OPTION", value_parser = parse_option)]
    pub option: u8,
}

/// `hm choose`'s option: a digit as dialogs number them (clap's own words
/// were `invalid digit found in string` and `0 is not in 1..=9`).
fn parse_option(s: &str) -> Result<u8, String> {
    s.trim()
        .parse::<u8>()
        .ok()
        .filter(|n| (1..=9).contains(n))
        .ok_or_else(|| {
            "the option's number, 1 to 9, as the dialog shows it ('2. Hi there': 2)".into()
        })
}

#[derive(Debug, Args)]
pub struct LabelArgs {
    /// Session id
    pub id: String,
    /// The label: one line of at most 60 characters (words after the id
    /// are joined with spaces); none takes the label away
    #[arg(value_name = "TEXT")]
    pub text: Vec<String>,
    #[command(flatten)]
    pub dir: DirArgs,
}

#[derive(Debug, Args)]
pub struct ContinueArgs {
    /// Session id
    pub id: String,
    #[command(flatten)]
    pub dir: DirArgs,
    /// Print what was done (or why not) as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write hm.1 and hm-COMMAND.1 for every command into DIR
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct EndedArgs {
    /// Session id
    pub id: String,
    #[command(flatten)]
    pub dir: DirArgs,
    /// Internal: keep the session's end for the caller's subscription
    /// (the dashboard's `r`, which connects right after)
    #[arg(long, hide = true)]
    pub await_attach: bool,
    /// An agent starts a new conversation (without it, one whose
    /// conversation hm knows resumes it, as `hm restore` does)
    #[arg(long)]
    pub fresh: bool,
}

#[derive(Debug, Args)]
pub struct RmArgs {
    /// Session ids (each forgotten on its own: one that cannot be does
    /// not keep the others)
    #[arg(required = true, value_name = "ID")]
    pub ids: Vec<String>,
    #[command(flatten)]
    pub dir: DirArgs,
}

#[derive(Debug, Args)]
pub struct CleanArgs {
    #[command(flatten)]
    pub dir: DirArgs,
}

#[derive(Debug, Args)]
pub struct EventsArgs {
    /// Only these sessions (all, and those that start later, without)
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
    #[command(flatten)]
    pub dir: DirArgs,
    /// One JSON object per line: time_unix_ms, event (snapshot, started,
    /// state, dialog, ended, gone) and the keys of `hm status --json`
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct WaitArgs {
    /// Session id; several to wait for the first of them to be in the
    /// state
    #[arg(required = true)]
    pub ids: Vec<String>,
    /// The state to wait for: a primary state (waiting, idle, active,
    /// stuck, dead, unknown), a detail (permission, input, ...), a state
    /// name (thinking, ...) or exited; several (repeated, or with commas)
    /// to wait for any
    #[arg(long, required = true, value_name = "NAME", value_delimiter = ',',
          value_parser = clap::builder::PossibleValuesParser::new(STATE_NAMES))]
    pub state: Vec<String>,
    /// Give up after this many seconds (exit 1)
    #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
    pub timeout: Option<f64>,
    /// Only a change into the state counts, not being in it as the wait
    /// begins: a session just started is idle until its first output, so
    /// `hm run --bg ...; hm wait ID --state idle --change` waits for its
    /// work to end
    #[arg(long)]
    pub change: bool,
    #[command(flatten)]
    pub dir: DirArgs,
    /// Print the state reached as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SendArgs {
    /// Session id
    pub id: String,
    /// Text to type (words are joined with spaces), or key names with --keys
    #[arg(value_name = "TEXT")]
    pub text: Vec<String>,
    /// Press Enter after the text (sent 150 ms after it, so that a
    /// program that takes fast typing for a paste, as Codex does, sends
    /// the prompt rather than adding a new line)
    #[arg(long)]
    pub enter: bool,
    /// The words are key names as tmux names them: Enter, Tab, Escape,
    /// BSpace, Up, Down, Left, Right, Home, End, PageUp (PgUp), PageDown
    /// (PgDn), F1-F24, or one character, after any of C- (control), M-
    /// (meta), S- (shift): C-c, M-x, C-Left, S-Up
    #[arg(long)]
    pub keys: bool,
    /// Type the text even into an agent's dialog (a permission, a
    /// question), which it would answer: without it, that is refused
    /// (hm approve, deny and choose answer one)
    #[arg(long)]
    pub force: bool,
    /// Then wait for the turn it started to end: the session idle again
    /// (an agent's turn over) or waiting for you, in a state it entered
    /// after the send; printed as hm wait prints it. A program that
    /// shows no change is done once it has printed and gone quiet
    #[arg(long)]
    pub wait: bool,
    /// With --wait, give up after this many seconds (exit 1)
    #[arg(
        long,
        value_name = "SECS",
        requires = "wait",
        allow_negative_numbers = true
    )]
    pub timeout: Option<f64>,
    /// With --wait, print the state reached as JSON
    #[arg(long, requires = "wait")]
    pub json: bool,
    #[command(flatten)]
    pub dir: DirArgs,
}

#[derive(Debug, Args)]
pub struct LogsArgs {
    /// Session id
    pub id: String,
    /// Only the last N lines
    #[arg(short = 'n', long, value_name = "N", allow_negative_numbers = true)]
    pub lines: Option<usize>,
    /// The output as the program wrote it, escape sequences and all
    #[arg(long)]
    pub raw: bool,
    /// The current screen instead of the history
    #[arg(long)]
    pub screen: bool,
    /// Keep printing lines as the session writes them, until it ends
    #[arg(long, short = 'f')]
    pub follow: bool,
    /// Only what was written in the last DURATION: 90s, 10m, 2h, 1d, 1h30m
    #[arg(long, value_name = "DURATION", value_parser = parse_since)]
    pub since: Option<u64>,
    /// Only lines matching REGEX (a pattern without capitals matches
    /// either case), as grep prints them
    #[arg(long, value_name = "REGEX")]
    pub grep: Option<String>,
    /// With --grep: N lines of context before and after each match
    #[arg(
        short = 'C',
        long = "context",
        value_name = "N",
        requires = "grep",
        allow_negative_numbers = true
    )]
    pub context: Option<usize>,
    /// Rows of at most N columns, as a terminal that wide shows the lines,
    /// instead of whole lines
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..), allow_negative_numbers = true)]
    pub width: Option<u16>,
    #[command(flatten)]
    pub dir: DirArgs,
}

/// `--since`: a duration as a person writes one (`90s`, `10m`, `2h`,
/// `1d`, `1h30m`), in milliseconds.
fn parse_since(s: &str) -> Result<u64, String> {
    let bad = || format!("'{s}' is not a duration: write it as 90s, 10m, 2h, 1d or 1h30m");
    let mut total: u64 = 0;
    let mut digits = String::new();
    let mut any = false;
    for c in s.trim().chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit: u64 = match c {
            's' => 1_000,
            'm' => 60_000,
            'h' => 3_600_000,
            'd' => 86_400_000,
            _ => return Err(bad()),
        };
        let n: u64 = digits.parse().map_err(|_| bad())?;
        total = n
            .checked_mul(unit)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(bad)?;
        digits.clear();
        any = true;
    }
    if !digits.is_empty() || !any {
        return Err(bad());
    }
    Ok(total)
}

// Where to look for sessions. A plain comment, as on every struct of
// arguments: with `defer`, a doc comment here would become the about of
// each command it is flattened into.
#[derive(Debug, Args, Clone, Default)]
pub struct DirArgs {
    /// Directory holding session sockets [default: $HM_SOCKET_DIR, else
    /// socket_dir of the config, else $XDG_RUNTIME_DIR/heimdall or
    /// /tmp/heimdall-$UID]
    #[arg(long, value_name = "DIR")]
    pub socket_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Session id: letters, digits, '.', '_' or '-', starting with a letter or digit (at most 64)
    /// [default: the command's name, with -2, -3, ... if that is taken]
    #[arg(long, allow_hyphen_values = true)]
    pub id: Option<String>,

    /// Run the supervisor in the foreground with no terminal UI (for
    /// systemd and scripts that keep it)
    #[arg(long)]
    pub detach: bool,

    /// Start the session in the background, independent of this terminal,
    /// print its id and return
    #[arg(long, conflicts_with = "detach")]
    pub bg: bool,

    /// Working directory of the command [default: current directory; with
    /// --host, home there]
    // `--dir` too: the dashboard's form calls the field `dir:`, and clap's
    // answer to `--dir` was a tip to pass it as the command's argument.
    #[arg(long, value_name = "DIR", visible_alias = "dir")]
    pub workdir: Option<PathBuf>,

    /// A name for people, shown beside the id (hm ls, hm status, the
    /// dashboard)
    // Checked by `label` after parsing, not by clap: clap's refusal
    // echoed the text as given, and a terminal acted on its escapes.
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,

    /// Start the session on another machine, over ssh, by its own hm: a
    /// [[hosts]] name or [user@]host[:port] (`--id HOST:ID` says the same);
    /// with --bg prints HOST:ID, else attaches to it
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,

    #[command(flatten)]
    pub dir: DirArgs,

    /// Terminal width given to the command [default: the terminal's, else [tui] session_size]
    // A zero became a 1x1 terminal without a word.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub cols: Option<u16>,

    /// Terminal height given to the command [default: the terminal's less the attach bar, else [tui] session_size]
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub rows: Option<u16>,

    /// Bytes of output kept for clients that attach later
    #[arg(long, value_name = "BYTES")]
    pub scrollback_bytes: Option<usize>,

    /// State classifier: simple, claude, agent or none [default: agent for coding agents (claude, codex, gemini, aider, opencode, qwen, pi) and interactive shells, else simple]
    #[arg(long, value_name = "NAME")]
    pub classifier: Option<String>,

    /// Silence (ms) before a session counts as idle
    #[arg(long, value_name = "MS", allow_negative_numbers = true)]
    pub idle_threshold_ms: Option<u64>,

    /// How long (ms) a new state must hold before it is reported (claude)
    #[arg(long, value_name = "MS", allow_negative_numbers = true)]
    pub debounce_ms: Option<u64>,

    /// Signal the whole process group (true) or only the command (false)
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub kill_process_group: Option<bool>,

    /// Name of the variable that tells the command its session id
    #[arg(long, value_name = "NAME")]
    pub session_env_var: Option<String>,

    /// Log file [default: <socket-dir>/<id>.log]
    #[arg(long, value_name = "PATH")]
    pub log_file: Option<PathBuf>,

    /// Log level: error, warn, info, debug or trace
    #[arg(long, value_name = "LEVEL")]
    pub log_level: Option<LogLevel>,

    /// Run the command again when `hm restore` brings the session back
    /// after a reboot (agents are resumed and shells restarted without it)
    #[arg(long)]
    pub restore: bool,

    /// Internal: the lost session's manifest (its instance) that this
    /// start restores, given by `hm restore`
    #[arg(long, hide = true, value_name = "INSTANCE")]
    pub restoring: Option<String>,

    /// Internal: the restore is `hm restart`'s (its mark says restarted)
    #[arg(long, hide = true, requires = "restoring")]
    pub restarting: bool,

    /// Internal: report readiness on stderr, used by `hm run` to start a
    /// background supervisor
    #[arg(long, hide = true)]
    pub notify_ready: bool,

    /// Internal: keep the end of the session for the launcher's subscription,
    /// used by `hm run` (without --detach) and the dashboard, which connect
    /// right after the start
    #[arg(long, hide = true)]
    pub await_attach: bool,

    /// The command to run (after `--` when it has options of its own, or
    /// to be safe); options of hm go before it
    // Not allow_hyphen_values: a mistyped option of hm must be an error,
    // not the command. Words after the first are the command's anyway.
    #[arg(required = true, trailing_var_arg = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Keys while attached: Ctrl-\\ detaches, and the session goes on \
(`detach_key` in heimdall.toml); Ctrl-] or Shift-PgUp opens its history (`copy_key`)."
)]
pub struct AttachArgs {
    /// Session id
    pub id: String,
    #[command(flatten)]
    pub dir: DirArgs,
    /// Watch only: no key reaches the program (the detach key and the
    /// history's still work), and while someone works in the session (an
    /// hm attach) it keeps their size
    #[arg(long, short = 'r')]
    pub read_only: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Session id
    pub id: String,
    #[command(flatten)]
    pub dir: DirArgs,
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct LsArgs {
    #[command(flatten)]
    pub dir: DirArgs,
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
    /// Print only the session ids, one a line (for scripts and the shell
    /// completions)
    #[arg(long, conflicts_with = "json")]
    pub ids: bool,
    /// List the sessions of another machine, over ssh: [user@]host[:port]
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// Only the sessions in this state: waiting (those that need you),
    /// idle, active, stuck, unknown, ended (or exited), lost, orphaned, or
    /// any name `hm wait --state` takes (input, permission, thinking, ...)
    #[arg(long, value_name = "STATE",
          value_parser = clap::builder::PossibleValuesParser::new(ls_states()))]
    pub state: Option<String>,
    /// Only the sessions COMMAND acts on (`attach`: those running; `rm`:
    /// those ended or lost): what the shell completions offer
    #[arg(long = "for", value_name = "COMMAND", hide = true, requires = "ids")]
    pub for_command: Option<String>,
}

/// What `hm ls --state` takes: how a session stopped running (`ended`,
/// `lost`, `orphaned`), and every name `hm wait --state` takes (a
/// detail, `input`, lists those waiting for one): the same words in both.
pub fn ls_states() -> Vec<&'static str> {
    let mut names = vec!["lost", "orphaned"];
    names.extend(STATE_NAMES);
    names
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Session id
    pub id: String,
    #[command(flatten)]
    pub dir: DirArgs,
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// Session id
    pub id: String,
    #[command(flatten)]
    pub dir: DirArgs,
    /// Directory to write the case to (frame.txt and expected.txt)
    #[arg(long, value_name = "DIR")]
    pub fixture: PathBuf,
}

#[derive(Debug, Args)]
// Ids or --all, and the usage line of a call with neither says so (it
// said `hm kill <ID>...`, --all nowhere).
#[command(group(clap::ArgGroup::new("which").required(true).args(["ids", "all"])))]
pub struct KillArgs {
    /// Session ids (several are stopped at once)
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
    /// Stop every running session (those that ended are left as they are)
    #[arg(long, conflicts_with = "ids")]
    pub all: bool,
    /// The sessions of another machine, over ssh: a [[hosts]] name or
    /// [user@]host[:port] (`hm kill HOST:ID` says the same for one id)
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    #[command(flatten)]
    pub dir: DirArgs,
    /// Seconds between SIGTERM and SIGKILL [default: kill_grace_ms from config, 5 s]
    #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
    pub grace: Option<f64>,
}

#[derive(Debug, Args)]
pub struct TuiArgs {
    #[command(flatten)]
    pub dir: DirArgs,
    /// Colour theme: dark, light or high-contrast [default: [tui] theme, else dark]
    #[arg(long, value_name = "NAME")]
    pub theme: Option<String>,
    /// Do not fit sessions to their panes even with [tui] fit_sessions = true (off by default)
    #[arg(long)]
    pub no_fit: bool,
    /// Also show the sessions of this machine, over ssh: a [[hosts]] name
    /// or [user@]host[:port] (repeatable; [[hosts]] entries are shown too)
    #[arg(long = "host", value_name = "HOST")]
    pub hosts: Vec<String>,
}

/// `--label`'s text, trimmed: see [`crate::protocol::checked_label`].
pub fn label(s: &str) -> Result<String, String> {
    crate::protocol::checked_label(s)
}

// Classify a saved screen (plain text) or an asciicast recording.
#[derive(Debug, Clone, clap::Args)]
pub struct ClassifyArgs {
    /// A screen saved as text, or an asciicast v2 recording (`.cast`).
    #[arg(long)]
    pub path: PathBuf,
    /// Print the verdict as JSON (the form `hm status --json` uses).
    #[arg(long)]
    pub json: bool,
    /// For a recording: classify the screen at this many seconds
    /// (default: its end).
    #[arg(long, value_name = "SECONDS")]
    pub at: Option<f64>,
    /// The command the session runs, naming the agent before its screen
    /// does (e.g. `claude`).
    #[arg(long, value_name = "CMD")]
    pub command: Option<String>,
    /// Also print the evidence table.
    #[arg(long)]
    pub explain: bool,
}

// Check the classifier against saved fixture cases.
#[derive(Debug, Clone, clap::Args)]
pub struct ReplayArgs {
    /// A case directory, or a directory searched for cases.
    #[arg(long)]
    pub path: PathBuf,
}

/// What `--state` may name: the primary states, the details, the state
/// bytes' names, and `exited` or `ended` (checked by clap, and offered by
/// the shell completions).
pub const STATE_NAMES: &[&str] = &[
    "idle",
    "active",
    "waiting",
    "stuck",
    "dead",
    "unknown",
    "exited",
    "ended",
    "thinking",
    "streaming",
    "tool_use",
    "using_tools",
    "responding",
    "compacting",
    "retrying",
    "running",
    "permission",
    "question",
    "plan_approval",
    "folder_trust",
    "survey",
    "diff",
    "external_editor",
    "onboarding",
    "input",
    "ready",
    "prompt_editing",
    "finished",
    "error",
];

#[cfg(test)]
mod tests {
    use super::{one_line, parse_since};

    /// What clap says of a mistake, in one line with all of its words.
    #[test]
    fn a_mistake_on_the_command_line_is_one_line() {
        use clap::Parser;
        let said = |args: &[&str]| {
            let err = super::Cli::try_parse_from(args).expect_err("a mistake");
            one_line(&err.render().to_string())
        };
        assert_eq!(
            said(&["hm", "attach"]),
            "the following required arguments were not provided: <ID> (usage: hm attach <ID>)"
        );
        assert_eq!(
            said(&["hm", "kil"]),
            "unrecognized subcommand 'kil'; a similar subcommand exists: 'kill' \
             (usage: hm [OPTIONS] <COMMAND>)"
        );
        assert_eq!(
            said(&["hm", "ls", "--bogus"]),
            "unexpected argument '--bogus' found (usage: hm ls [OPTIONS])"
        );
        let listed = said(&["hm", "wait", "x", "--state", "sleepy"]);
        assert!(
            listed.starts_with("invalid value 'sleepy' for '--state"),
            "{listed}"
        );
        assert!(!listed.contains('\n'), "{listed}");
        assert_eq!(
            one_line("error: missing:\n  <A>\n  <B>...\n\nUsage: x <A> <B>...\n"),
            "missing: <A>, <B>... (usage: x <A> <B>...)"
        );
    }

    /// A command's arguments are built only when it is used (`defer`), so
    /// what they set last wins: a doc comment on a struct of arguments
    /// once replaced every command's own line in its help ("Where to look
    /// for sessions" atop `hm run --help`).
    #[test]
    fn each_command_says_in_its_help_what_the_list_says() {
        use clap::CommandFactory;
        let about = |c: &clap::Command| c.get_about().map(|a| a.to_string()).unwrap_or_default();
        let mut cli = super::Cli::command();
        let listed: Vec<(String, String)> = cli
            .get_subcommands()
            .map(|c| (c.get_name().to_owned(), about(c)))
            .collect();
        // Builds every command, deferred parts included.
        cli.build();
        for (name, line) in listed {
            let built = cli.find_subcommand(&name).expect("listed");
            assert!(!line.is_empty(), "{name} has no line in the list");
            assert_eq!(about(built), line, "hm {name} --help");
        }
    }

    #[test]
    fn durations_for_since_read_as_written() {
        assert_eq!(parse_since("90s"), Ok(90_000));
        assert_eq!(parse_since("10m"), Ok(600_000));
        assert_eq!(parse_since("1h30m"), Ok(5_400_000));
        assert_eq!(parse_since("2d"), Ok(172_800_000));
        for bad in ["", "10", "m", "10x", "1.5h", "-3m", "99999999999999999999s"] {
            let e = parse_since(bad).expect_err(bad);
            assert!(e.contains("not a duration"), "{e}");
        }
    }
}
