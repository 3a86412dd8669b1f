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
                .and_then(|v| Report::from_codex_notify(&v)),
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
