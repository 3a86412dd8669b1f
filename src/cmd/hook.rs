//! `hm hook AGENT [PAYLOAD]`: an agent's hook command. Reads the hook's
//! payload (JSON on stdin, or the last argument as Codex's `notify` gives
//! it), finds the session (`--socket`, or `HM_SOCKET` in the environment),
//! and sends the supervisor a REPORT.
//!
//! An agent waits for its hooks, and some read meaning into their exit
//! status and output (Claude Code blocks a tool on exit status 2, and
//! adds a `UserPromptSubmit` hook's output to the prompt). So this command
//! prints nothing, exits 0 whatever happens, and gives up rather than
//! wait: outside a session, with a supervisor gone, or on a payload it
//! cannot read, it does nothing.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::time::Duration;

use crate::detect::hooks::Report;
use crate::protocol::Request;

/// The environment variable a supervisor sets in its program's
/// environment: the path of its socket.
pub const SOCKET_ENV: &str = "HM_SOCKET";
/// Longest payload read; the rest of stdin is drained unread.
const MAX_PAYLOAD: u64 = 4 << 20;
/// How long the payload may take to arrive, and the supervisor to take
/// the report: a hook must never hold its agent up for long.
const PATIENCE: Duration = Duration::from_millis(500);

/// Runs the hook with the arguments after `hook`; never fails.
///
/// Forms: `AGENT [--socket PATH] [--then PROGRAM [ARGS...]] [PAYLOAD]`.
/// The payload is read from stdin unless given as the last argument (as
/// Codex's `notify` gives it). `--socket` names the session (`hm run`
/// writes it into the hooks it installs, so that a program clearing its
/// environment still reports); otherwise `HM_SOCKET` does. `--then` runs
/// the user's own Codex `notify` program with the payload after reporting.
pub fn run(args: &[String]) {
    let (agent, mut rest) = args
        .split_first()
        .map_or(("", &[][..]), |(a, r)| (a.as_str(), r));
    let mut socket = std::env::var_os(SOCKET_ENV).filter(|s| !s.is_empty());
    if rest.first().is_some_and(|a| a == "--socket") {
        socket = rest.get(1).map(Into::into);
        rest = rest.get(2..).unwrap_or_default();
    }
    let (then, payload) = match rest.split_last() {
        Some((payload, before)) if before.first().is_some_and(|a| a == "--then") => {
            (&before[1..], Some(payload))
        }
        Some((payload, _)) => (&[][..], Some(payload)),
        None => (&[][..], None),
    };
    // Read whatever the agent writes, session or not: a hook that leaves
    // before reading would fail the agent's write.
    let stdin = payload.is_none().then(stdin_payload).flatten();
    if let Some(socket) = socket.filter(|_| !agent.is_empty()) {
        let report = match payload {
            Some(p) => serde_json::from_str(p)
                .ok()
                .and_then(|v| Report::from_codex_notify(&v))
                .filter(|r| r.session.as_deref().is_none_or(codex_thread_saved)),
            None => stdin.and_then(|v| Report::from_payload(agent, &v)),
        };
        if let Some(report) = report {
            send(std::path::Path::new(&socket), &report);
        }
    }
    // The user's own notify program runs as it would without hm, in or
    // out of a session, and is not waited for.
    if let (Some((program, args)), Some(payload)) = (then.split_first(), payload) {
        let _ = std::process::Command::new(program)
            .args(args)
            .arg(payload)
            .stdin(std::process::Stdio::null())
            .spawn();
    }
}

/// Whether Codex saved thread `id`: a rollout file named after it under
/// `$CODEX_HOME/sessions/YYYY/MM/DD/`.
///
/// Codex runs side threads of its own (one writes the task's title from
/// the first prompt) and calls `notify` at the end of their turns too.
/// Such a thread is not saved and is not the conversation on the screen:
/// believed, its report would mark the session idle in the middle of the
/// real turn, and name a conversation `codex resume` cannot find. Where
/// there is no `sessions` directory (a Codex that keeps threads some other
/// way) every thread is believed.
fn codex_thread_saved(id: &str) -> bool {
    let home = crate::agent_hooks::codex_home(|name| std::env::var_os(name));
    home.is_none_or(|home| rollout_names(&home.join("sessions"), id))
}

/// Whether `sessions` (Codex's dated tree of rollouts) holds one named
/// after thread `id`, or does not exist. The newest days are read first
/// (a thread's turns land in the file of the day it began, usually
/// today), and the walk is bounded, so a hook stays quick in a home
/// of years of threads.
fn rollout_names(sessions: &std::path::Path, id: &str) -> bool {
    /// Directory entries read at most before the thread counts as saved.
    const MAX_ENTRIES: usize = 50_000;
    fn newest_first(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort_unstable_by(|a, b| b.cmp(a));
        entries
    }
    if !sessions.is_dir() {
        return true;
    }
    let wanted = format!("-{id}.jsonl");
    let mut read = 0;
    let mut dirs = vec![(sessions.to_path_buf(), 0u8)];
    while let Some((dir, depth)) = dirs.pop() {
        let entries = newest_first(&dir);
        read += entries.len();
        if read > MAX_ENTRIES {
            return true;
        }
        if depth == 3 {
            if entries.iter().any(|f| {
                f.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(&wanted))
            }) {
                return true;
            }
        } else {
            // Pushed oldest first, so the newest is walked first.
            dirs.extend(
                entries
                    .into_iter()
                    .rev()
                    .filter(|p| p.is_dir())
                    .map(|p| (p, depth + 1)),
            );
        }
    }
    false
}

/// The JSON on stdin, if it comes in time and parses. A terminal is not
/// read: that is a person trying the command, not an agent.
fn stdin_payload() -> Option<serde_json::Value> {
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        return None;
    }
    let (tx, rx) = mpsc::channel();
    // A thread, so that a writer that never closes costs only PATIENCE;
    // the process exits without waiting for it.
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut bytes = Vec::new();
        let read = (&mut stdin).take(MAX_PAYLOAD).read_to_end(&mut bytes);
        // A payload larger than the bound is drained, so that the agent's
        // write does not fail; it is not parsed.
        let drained = std::io::copy(&mut stdin, &mut std::io::sink()).unwrap_or(0);
        let _ = tx.send((read.is_ok() && drained == 0).then_some(bytes));
    });
    let bytes = rx.recv_timeout(PATIENCE).ok()??;
    serde_json::from_slice(&bytes).ok()
}

/// Sends the report, then a STATUS, and waits (briefly) for its answer:
/// the supervisor has then taken the report before the agent goes on, so
/// the next hook's report cannot overtake this one.
fn send(socket: &std::path::Path, report: &Report) {
    let Ok(mut sock) = UnixStream::connect(socket) else {
        return;
    };
    let _ = sock.set_write_timeout(Some(PATIENCE));
    let _ = sock.set_read_timeout(Some(PATIENCE));
    let mut frames = Request::Report(Box::new(report.clone())).encode();
    Request::Status.encode_into(&mut frames);
    if sock.write_all(&frames).is_err() {
        return;
    }
    let mut answer = [0u8; 64];
    let _ = sock.read(&mut answer);
}

#[cfg(test)]
mod tests {
    use super::rollout_names;

    #[test]
    fn a_codex_thread_counts_only_if_a_rollout_names_it() {
        let home = tempfile::tempdir().expect("temp dir");
        let sessions = home.path().join("sessions");
        // No sessions directory: nothing to tell threads apart by.
        assert!(rollout_names(&sessions, "t1"));
        let day = sessions.join("2026/11/27");
        std::fs::create_dir_all(&day).expect("day");
        std::fs::create_dir_all(sessions.join("2026/11/28")).expect("today");
        std::fs::write(day.join("rollout-2026-11-27T10-00-00-t1.jsonl"), "").expect("rollout");
        assert!(
            rollout_names(&sessions, "t1"),
            "a thread from an earlier day"
        );
        assert!(
            !rollout_names(&sessions, "t2"),
            "a side thread Codex did not save"
        );
        assert!(
            !rollout_names(&sessions, "1"),
            "a part of an id is not the id"
        );
    }
}
