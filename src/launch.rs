//! Starting a supervisor in the background: `hm run` (unless `--detach`)
//! and the dashboard's `n` both run `hm run --detach --notify-ready` in a
//! session of its own and wait until it says the command runs, or why not.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::pty;

/// A background supervisor that failed to start; its own message is shown.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct LaunchFailed {
    pub message: String,
    pub code: i32,
}

/// What a session started from the dashboard (`n`) is: its command (its
/// words run as they are when it is one plain command, else by `sh -c`:
/// see [`plain_command`]), where it starts, its label, its size and its
/// classifier.
#[derive(Debug, Clone)]
pub struct Detached<'a> {
    pub command: &'a str,
    /// The program's words exactly (a session started again as it ran),
    /// instead of `command`.
    pub argv: Option<&'a [String]>,
    pub workdir: Option<&'a Path>,
    pub label: Option<&'a str>,
    pub size: Option<crate::protocol::Size>,
    /// `hm run --classifier`; `None`: hm chooses.
    pub classifier: Option<&'a str>,
    /// Whether someone attaches to it once it runs (the dashboard's pane,
    /// `hm run --host` without `--bg`): a program that ends at once then
    /// waits a moment for them, to be seen ending.
    pub awaited: bool,
}

/// Starts a background supervisor for `command` (see [`Detached`]) and
/// waits until it runs, at `size`, else at the size `hm run` gives a
/// session with no terminal. Used by `hm proxy`, which must reap the
/// supervisor it gets back once it exits.
pub fn start_detached(
    id: &str,
    dir: &Path,
    config_path: Option<&Path>,
    (command, argv): (&str, Option<&[String]>),
    (workdir, label, classifier): (Option<&Path>, Option<&str>, Option<&str>),
    (size, awaited): (Option<crate::protocol::Size>, bool),
) -> Result<Child> {
    let what = Detached {
        command,
        argv,
        workdir,
        label,
        size,
        classifier,
        awaited,
    };
    start(id, dir, config_path, what)
}

/// Starts a background supervisor for a session started from the
/// dashboard and waits until it runs. The dashboard must reap the
/// supervisor it gets back once it exits.
pub fn start(
    id: &str,
    dir: &Path,
    config_path: Option<&Path>,
    what: Detached<'_>,
) -> Result<Child> {
    let Detached {
        command,
        argv,
        workdir,
        label,
        size,
        classifier,
        awaited,
    } = what;
    let mut cmd = supervisor_command(id, dir, config_path, awaited)?;
    outside_multiplexer(&mut cmd);
    if let Some(s) = size {
        cmd.args(["--cols", &s.cols.to_string(), "--rows", &s.rows.to_string()]);
    }
    if let Some(w) = workdir {
        cmd.arg("--workdir").arg(home_expanded(w));
    }
    if let Some(l) = label {
        cmd.arg("--label").arg(l);
    }
    if let Some(c) = classifier {
        cmd.arg("--classifier").arg(c);
    }
    cmd.arg("--");
    if let Some(argv) = argv.filter(|a| !a.is_empty()) {
        cmd.args(argv);
        return wait_ready(cmd);
    }
    if command.trim().is_empty() {
        bail!("no command given");
    }
    match plain_command(command) {
        // The assignments go to the supervisor's environment, which its
        // program inherits: a key typed before an agent stays out of every
        // argv (`ps`, `hm status --json`) and out of the ended record.
        Some((env, words)) => cmd.envs(env).args(words),
        None => cmd.args(["sh", "-c", command]),
    };
    wait_ready(cmd)
}

/// A variable's name and value, set before a command.
pub(crate) type Assigned = (String, String);

/// A command line as a shell would run it without being needed: the
/// `NAME=value` assignments before its program (values without shell
/// syntax), and the words of the plain command after them
/// ([`plain_words`]). `GEMINI_API_KEY=… gemini` is `gemini` with that key
/// in its environment, as in a shell, where `sh -c` showed the key in the
/// session's command and hid the agent behind the shell. `None`: it needs
/// a shell (an assignment alone is one as well).
pub(crate) fn plain_command(line: &str) -> Option<(Vec<Assigned>, Vec<String>)> {
    let mut env = Vec::new();
    let mut rest = line;
    while let Some((var, after)) = assignment(rest) {
        env.push(var);
        rest = after;
    }
    if !env.is_empty() && rest.trim().is_empty() {
        return None;
    }
    Some((env, plain_words(rest)?))
}

/// The `NAME=value` that `line` begins with, and the line after it; `None`
/// when it begins with anything else, or with a value a shell would
/// expand (`X=$(cmd)`, `X=~/bin`).
fn assignment(line: &str) -> Option<(Assigned, &str)> {
    let line = line.trim_start();
    let (name, rest) = line.split_once('=')?;
    let mut chars = name.chars();
    let named = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !named {
        return None;
    }
    // The value ends at the first blank outside quotes.
    let mut quote = None;
    let mut escaped = false;
    let mut end = rest.len();
    for (i, c) in rest.char_indices() {
        match (quote, c) {
            _ if escaped => escaped = false,
            (Some('\''), '\'') => quote = None,
            (Some('\''), _) => {}
            (_, '\\') => escaped = true,
            (Some('"'), '"') => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            (None, c) if c.is_whitespace() => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let raw = &rest[..end];
    if quote.is_some() || raw.contains(SHELL_SYNTAX) {
        return None;
    }
    let value = match shlex::split(raw)?.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        _ => return None,
    };
    Some(((name.to_owned(), value), &rest[end..]))
}

/// What makes a shell do more than split a line into words.
pub(crate) const SHELL_SYNTAX: &[char] = &[
    '|', '&', ';', '<', '>', '(', ')', '$', '`', '*', '?', '[', ']', '{', '}', '~', '#', '!', '\n',
    '\r',
];

/// `dir` with a leading `~` or `~/` as a shell reads it, this machine's
/// home (where the session starts: `hm proxy` on another machine): the
/// dashboard's form takes a directory as it is typed, and `~/src` was
/// looked for under the dashboard's own directory.
fn home_expanded(dir: &Path) -> std::path::PathBuf {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    dir.to_str()
        .filter(|d| d.starts_with('~'))
        .and_then(|d| crate::paths::expand_tilde(d, home.as_deref()).ok())
        .unwrap_or_else(|| dir.to_owned())
}

/// Words a shell runs itself rather than as a program.
pub(crate) const SHELL_OWN: &[&str] = &[
    "exec", "cd", ".", "source", "eval", "export", "set", "unset", "alias", "time", "if", "for",
    "while", "until", "case", "command", "builtin", "trap", "ulimit", "umask", "read", "wait",
    "exit", "return", "shift", "readonly", "local", "declare", "typeset", "let", "function",
    "select", "coproc",
];

/// The words of `line` when it is one plain command, which a shell would
/// run as just those words: quotes and backslashes only, no pipe,
/// redirection, variable, glob, list, comment or leading assignment, and
/// not a shell's own command (`exec`, `cd`, `time`, ...). `None`: it needs
/// a shell. Run as its words, the program is the session's own: `claude
/// --permission-mode default` typed into the dashboard gets the agent's
/// classifier and hooks, which `sh -c` in front of it hid.
pub(crate) fn plain_words(line: &str) -> Option<Vec<String>> {
    if let Some(words) = shell_told(line) {
        return Some(words);
    }
    if line.contains(SHELL_SYNTAX) {
        return None;
    }
    let words = shlex::split(line)?;
    let first = words.first()?;
    (!first.contains('=') && !SHELL_OWN.contains(&first.as_str())).then_some(words)
}

/// `sh -c 'SCRIPT'` typed whole (a shell, `-c`, one single-quoted script
/// and nothing after it): the shell and its script as they are, where
/// `sh -c` in front of them made the session's command `sh -c sh -c
/// '...'`. A single-quoted script holds no quote and no escape, so it is
/// exactly the text between the quotes.
fn shell_told(line: &str) -> Option<Vec<String>> {
    let line = line.trim();
    let (shell, rest) = line.split_once(' ')?;
    let name = shell.rsplit('/').next()?;
    if !matches!(name, "sh" | "bash" | "dash" | "zsh") || shell.contains(['$', '`', '~', '*']) {
        return None;
    }
    let script = rest.trim_start().strip_prefix("-c")?.trim_start();
    let script = script.strip_prefix('\'')?.strip_suffix('\'')?;
    (!script.contains('\'')).then(|| vec![shell.to_owned(), "-c".to_owned(), script.to_owned()])
}

/// Leaves out of `cmd`'s environment what describes the terminal
/// multiplexer the dashboard runs in (tmux, screen, zellij): a session
/// runs in hm's terminal, not in that one, and a program told otherwise
/// talks to the wrong multiplexer (Claude Code warned about tmux's focus
/// events).
pub(crate) fn outside_multiplexer(cmd: &mut Command) {
    for (name, _) in std::env::vars_os() {
        let named = name
            .to_str()
            .is_some_and(|n| matches!(n, "TMUX" | "TMUX_PANE" | "STY") || n.starts_with("ZELLIJ"));
        if named {
            cmd.env_remove(&name);
        }
    }
}

/// Quotes `s` for a POSIX shell: agents run hook commands through one,
/// and a command of several words is run by `sh -c` (see
/// [`start_detached`]).
pub(crate) fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@".contains(&b))
    {
        return s.to_owned();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A command's words as the one string [`start_detached`] takes, which
/// `sh -c` splits back into the same words.
pub(crate) fn command_line(words: &[String]) -> String {
    words
        .iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `hm [--config PATH] run --detach ...` for a background supervisor of
/// session `id` in `dir`. It says when it is ready (see [`wait_ready`]) and
/// keeps a command that ends at once for its launcher's subscription, which
/// `hm run` and the dashboard make right after (see
/// `Options::await_attach`).
pub(crate) fn supervisor_command(
    id: &str,
    dir: &Path,
    config_path: Option<&Path>,
    await_attach: bool,
) -> Result<Command> {
    let exe = std::env::current_exe().context("cannot find the hm executable")?;
    let mut cmd = Command::new(exe);
    if let Some(c) = config_path {
        cmd.arg("--config").arg(c);
    }
    cmd.args(["run", "--detach", "--notify-ready"]);
    if await_attach {
        cmd.arg("--await-attach");
    }
    cmd.args(["--id", id]);
    cmd.arg("--socket-dir").arg(dir);
    Ok(cmd)
}

/// Runs `cmd` (an `hm run --detach --notify-ready`) in its own session and
/// waits for its readiness line, or returns its own error message. The
/// supervisor stays our child.
pub(crate) fn wait_ready(mut cmd: Command) -> Result<Child> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    pty::new_session_on_spawn(&mut cmd);
    crate::fd::keep_user_limit_on_spawn(&mut cmd);
    let mut child = cmd.spawn().context("cannot start the supervisor")?;
    let Some(stderr) = child.stderr.take() else {
        bail!("cannot read the supervisor's output");
    };
    let mut said = String::new();
    for line in BufReader::new(stderr).lines() {
        let line = line.unwrap_or_default();
        if line == "ready" {
            return Ok(child);
        }
        said.push_str(&line);
        said.push('\n');
    }
    let status = child.wait().context("cannot wait for the supervisor")?;
    let message = said
        .trim()
        .strip_prefix("hm: ")
        .unwrap_or(said.trim())
        .to_string();
    Err(LaunchFailed {
        message: if message.is_empty() {
            format!("the supervisor exited ({status}) without saying why")
        } else {
            message
        },
        code: status.code().unwrap_or(1),
    }
    .into())
}

#[cfg(test)]
mod tests {
    use super::{plain_command, plain_words};

    /// The words, each ended by `|` (to see where one ends).
    fn words(line: &str) -> Option<String> {
        plain_words(line).map(|w| w.iter().map(|w| format!("{w}|")).collect())
    }

    #[test]
    fn a_plain_command_runs_as_its_words() {
        assert_eq!(
            words("claude --permission-mode default"),
            Some("claude|--permission-mode|default|".into())
        );
        assert_eq!(
            words("env ANTHROPIC_BASE_URL=http://127.0.0.1:9 claude"),
            Some("env|ANTHROPIC_BASE_URL=http://127.0.0.1:9|claude|".into())
        );
        assert_eq!(
            words(r#"aider --message "fix it" 'a b'"#),
            Some("aider|--message|fix it|a b|".into())
        );
        // A shell told its script, typed whole: as typed, not in another.
        assert_eq!(
            words("sh -c 'for i in $(seq 3); do echo $i; done'"),
            Some("sh|-c|for i in $(seq 3); do echo $i; done|".into())
        );
        assert_eq!(
            words("/bin/bash -c 'make | tee log'"),
            Some("/bin/bash|-c|make | tee log|".into())
        );
    }

    #[test]
    fn what_needs_a_shell_goes_to_one() {
        for line in [
            "make | tee log",
            "npm test && echo ok",
            "X=1 claude",
            "echo $HOME",
            "ls *.rs",
            "cd /tmp",
            "exec claude",
            "time make",
            "sleep 1; echo done",
            "cat < in",
            "echo `date`",
            "ls ~",
            "echo 'unterminated",
            // More than the one quoted script: a shell's to read.
            "sh -c 'make' | tee log",
            "sh -c 'x' && ls",
        ] {
            assert_eq!(words(line), None, "{line}");
        }
    }

    /// Assignments before a plain command: its environment, the rest its
    /// words; anything a shell would expand or run keeps the shell.
    #[test]
    fn assignments_before_a_plain_command_are_its_environment() {
        let split = |line: &str| {
            plain_command(line).map(|(env, words)| {
                let env: Vec<String> = env.iter().map(|(n, v)| format!("{n}={v}")).collect();
                (env.join(" "), words.join("|"))
            })
        };
        let got = |env: &str, words: &str| Some((env.to_owned(), words.to_owned()));
        assert_eq!(
            split("GEMINI_API_KEY=k-1 gemini -m pro"),
            got("GEMINI_API_KEY=k-1", "gemini|-m|pro")
        );
        assert_eq!(
            split(r#"  A='one two' B="x y" _C= claude"#),
            got("A=one two B=x y _C=", "claude")
        );
        // Its own shell script, typed whole, after them.
        assert_eq!(split("T=1 sh -c 'echo $T'"), got("T=1", "sh|-c|echo $T"));
        assert_eq!(split("make test"), got("", "make|test"));
        for line in [
            "X=1",
            "X=1 Y=2  ",
            "X=$HOME claude",
            "X=$(id) claude",
            "X=~/bin claude",
            "X='unterminated claude",
            "X=1 make | tee log",
            "X=1 cd /tmp",
            "1X=2 claude",
            "A-B=2 claude",
        ] {
            assert_eq!(split(line), None, "{line}");
        }
    }
}
