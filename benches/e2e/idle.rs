//! An idle session over a fixed window: how often each process woke up and
//! how much CPU it used while nothing happened. All cases run side by side
//! in the same window, each in its own session.

use std::time::Duration;

use crate::peer::Peer;
use crate::peers::Bench;
use crate::sys::Usage;

#[derive(Debug)]
pub struct Row {
    pub name: String,
    pub usage: Option<Usage>,
}

/// The row of the agent session whose job runs silently.
pub const SILENT: &str = "hm supervisor, agent, silent job past stuck_after";

pub fn measure(b: &Bench, window: Duration) -> Vec<Row> {
    let sleep = ["sleep", "1000000"];
    let mut watched: Vec<(String, i32)> = Vec::new();

    let detached = b.hm_session(&sleep);
    watched.push(("hm supervisor, detached".into(), detached.pid()));

    // The agent classifier at rest (a shell at its prompt) and at a
    // question: no timer may run for either. A silent job is re-read with
    // backoff (docs/classifiers.md), which costs a few wake-ups early on.
    let agent = b.hm_session_with(
        &["--classifier", "agent"],
        &["bash", "--norc", "--noprofile", "-i"],
    );
    watched.push((
        "hm supervisor, agent, shell at its prompt".into(),
        agent.pid(),
    ));
    // Its screen still for longer than `stuck_after` (a second here, 60 s
    // by default) through the whole window: a job running silently is not
    // stuck, and the deadline that passed must not wake it again (it once
    // spun a core). The file's table chooses the classifier with it;
    // `--classifier agent` would start one afresh.
    let config = b.path("stuck-after-1s.toml");
    std::fs::write(&config, "[classifier.agent]\nstuck_after_ms = 1000\n").expect("config");
    let config = config.display().to_string();
    let silent = b.hm_session_with(&["--config", &config], &sleep);
    watched.push((SILENT.into(), silent.pid()));
    let asking = b.hm_session_with(
        &["--classifier", "agent"],
        &["sh", "-c", "printf 'Continue? [y/N] '; exec sleep 1000000"],
    );
    watched.push((
        "hm supervisor, agent, waiting at a question".into(),
        asking.pid(),
    ));

    let passive = b.hm_session(&sleep);
    let mut sub = Peer::connect(&passive.sock).expect("connect");
    sub.subscribe(&[]).expect("subscribe");
    watched.push(("hm supervisor, 1 passive subscriber".into(), passive.pid()));

    let attached = b.hm_session(&sleep);
    let argv = attached.attach_argv(&b.hm);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let attach = b.pty(&argv);
    watched.push(("hm supervisor, hm attach connected".into(), attached.pid()));
    watched.push(("hm attach client".into(), attach.pid));

    let mut dtach = Vec::new();
    let mut dtach_client = None;
    if b.dtach {
        let d1 = b.dtach_session(&sleep);
        watched.push(("dtach, detached".into(), d1.pid()));
        let d2 = b.dtach_session(&sleep);
        let sock = d2.sock.display().to_string();
        let c = b.pty(&["dtach", "-a", &sock, "-r", "none", "-E", "-z"]);
        watched.push(("dtach, client attached".into(), d2.pid()));
        watched.push(("dtach client".into(), c.pid));
        dtach.push(d1);
        dtach.push(d2);
        dtach_client = Some(c);
    }
    let mut tmux = Vec::new();
    let mut tmux_client = None;
    if b.tmux {
        let t1 = b.tmux_server();
        t1.new_session("idle", &sleep);
        if let Some(p) = t1.pid() {
            watched.push(("tmux server, detached".into(), p));
        }
        let t2 = b.tmux_server();
        t2.new_session("idle", &sleep);
        let argv = t2.attach_argv("idle");
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let c = b.pty(&argv);
        if let Some(p) = t2.pid() {
            watched.push(("tmux server, client attached".into(), p));
        }
        watched.push(("tmux client".into(), c.pid));
        tmux.push(t1);
        tmux.push(t2);
        tmux_client = Some(c);
    }
    // Let start-up activity (first status poll, first paint) pass.
    let quiet = Duration::from_millis(300);
    let max = Duration::from_secs(3);
    attach.settle(quiet, max);
    if let Some(c) = &dtach_client {
        c.settle(quiet, max);
    }
    if let Some(c) = &tmux_client {
        c.settle(quiet, max);
    }
    std::thread::sleep(Duration::from_secs(1));

    let before: Vec<Option<Usage>> = watched.iter().map(|w| Usage::of(w.1)).collect();
    std::thread::sleep(window);
    let rows = watched
        .iter()
        .zip(before)
        .map(|((name, pid), b0)| Row {
            name: name.clone(),
            usage: Usage::of(*pid).zip(b0).map(|(a, b)| a.since(b)),
        })
        .collect();
    drop(sub);
    drop(attach);
    drop(dtach_client);
    drop(tmux_client);
    rows
}
