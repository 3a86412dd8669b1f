//! What another machine dropping costs the dashboard: `hm tui` over the
//! local sessions and a host (`[[hosts]]`, reached through the harness's
//! own sshd) whose sessions each keep a full scrollback. Selection keys
//! are typed without a break: first for a while with the host up, then,
//! [`DROPS`] times, from the moment the host's `hm proxy` is killed until
//! well after the link has come back and every pane of the host has
//! replayed its session again. Each stretch gives the key-to-screen
//! latencies and the longest time the screen went without a frame (the
//! local streaming panes keep it redrawing at the frame rate).

use std::path::Path;
use std::time::{Duration, Instant};

use heimdall::protocol::Size;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::keys::{self, Keys};
use crate::peers::{self, Bench, HmSession};
use crate::screen::Screen;
use crate::sshd::{self, Sshd};

/// Keys with the host up, before the first drop.
pub const BEFORE: Duration = Duration::from_secs(4);
/// Keys from each drop on: the link notices at once, waits 1 s and
/// reconnects, and every pane replays; this leaves time to spare.
pub const AFTER: Duration = Duration::from_secs(8);
/// Drops, one after another, in the same dashboard.
pub const DROPS: usize = 3;

/// One drop: its keys, and when things happened (ms after the kill).
#[derive(Debug, Default)]
pub struct Drop1 {
    pub keys: Keys,
    /// The longest gap between frames: how long, and when it ended.
    pub gap_ms: Option<f64>,
    pub gap_at_ms: Option<f64>,
    pub slowest_key_at_ms: Option<f64>,
    /// Until a pane says the host is down.
    pub seen_down_ms: Option<f64>,
    /// Until no pane says it is down or connecting.
    pub back_ms: Option<f64>,
}

/// What a host going away cost.
#[derive(Debug, Default)]
pub struct HostDrop {
    pub remote_sessions: usize,
    pub before: Keys,
    pub gap_before_ms: Option<f64>,
    pub drops: Vec<Drop1>,
}

/// What the host's panes say while it is down, or coming back (their
/// bottom border, cut to the pane's width: one of these survives the cut).
pub fn says_down(screen: &str) -> bool {
    ["unreachable", "retrying", "connecting"]
        .iter()
        .any(|w| screen.contains(w))
}

/// Kills the host's proxies and types keys for [`AFTER`].
fn drop_once(screen: &mut Screen, sshd: &Sshd) -> Result<Drop1, String> {
    let proxies = sshd.proxies();
    if proxies.is_empty() {
        return Err("no hm proxy to kill".into());
    }
    screen.reads = Some(Vec::new());
    let killed = Instant::now();
    for pid in proxies {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
    let (mut down, mut back) = (None, None);
    let keys = keys::selection_for(screen, AFTER, |c| {
        let says = says_down(c);
        if says && down.is_none() {
            down = Some(killed.elapsed());
        }
        if !says && down.is_some() && back.is_none() {
            back = Some(killed.elapsed());
        }
    });
    let since = |t: Instant| t.saturating_duration_since(killed).as_secs_f64() * 1e3;
    let gap = keys::longest_gap(screen.reads.as_deref().unwrap_or_default());
    screen.reads = None;
    Ok(Drop1 {
        gap_ms: gap.map(|g| g.1),
        gap_at_ms: gap.map(|g| since(g.0)),
        slowest_key_at_ms: keys.slowest().map(|k| since(k.0)),
        seen_down_ms: down.map(|d| d.as_secs_f64() * 1e3),
        back_ms: back.map(|d| d.as_secs_f64() * 1e3),
        keys,
    })
}

/// The host's sessions each write `history` (an argv for `hm run`) and
/// then sit quiet; the dashboard shows them beside `local_dir`'s.
pub fn measure(
    b: &Bench,
    local_dir: &Path,
    size: Size,
    remote_sessions: usize,
    history: &dyn Fn(&Path) -> Vec<String>,
) -> Result<HostDrop, String> {
    let sshd = Sshd::start(b)?;
    let remote_dir = sshd.remote_dir();
    let done: Vec<_> = (0..remote_sessions)
        .map(|_| b.path(&b.name("done")))
        .collect();
    let remote: Vec<HmSession> = done
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let argv = history(d);
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            b.spawn_hm(&remote_dir, &format!("r{i:02}"), &argv)
        })
        .collect();
    for s in &remote {
        s.wait_ready();
    }
    peers::wait_for("the host's sessions to write their history", || {
        done.iter().all(|d| d.exists())
    });
    let config = b.path(&format!("{}.toml", b.name("hosts")));
    let hm = b.hm.display().to_string();
    std::fs::write(
        &config,
        format!("[[hosts]]\nname = \"{}\"\nhm = \"{hm}\"\n", sshd::HOST),
    )
    .map_err(|e| e.to_string())?;
    let (config, dir) = (
        config.display().to_string(),
        local_dir.display().to_string(),
    );
    let ssh = sshd.ssh_command();
    // The mount's private directory goes in the sandbox, removed with it
    // even if the dashboard is killed.
    let tmp = b.root.display().to_string();
    let mut screen = Screen::start(
        b,
        &[&hm, "--config", &config, "tui", "--socket-dir", &dir],
        size,
        &[("HM_SSH_COMMAND", &ssh), ("TMPDIR", &tmp)],
    );
    let first = format!("{}:r00", sshd::HOST);
    let up = screen.until(Duration::from_secs(30), |c| {
        c.contains(&first) && !says_down(c)
    });
    if up.is_none() {
        return Err(format!("the host's panes never came up ({first})"));
    }
    // Every remote pane subscribed and replayed.
    screen.drain(Duration::from_secs(3));

    let mut r = HostDrop {
        remote_sessions,
        ..HostDrop::default()
    };
    screen.reads = Some(Vec::new());
    r.before = keys::selection_for(&mut screen, BEFORE, |_| {});
    r.gap_before_ms = keys::longest_gap(screen.reads.as_deref().unwrap_or_default()).map(|g| g.1);
    for _ in 0..DROPS {
        let d = drop_once(&mut screen, &sshd)?;
        eprintln!(
            "e2e: scale: host drop: slowest key {:.1} ms, longest gap {:.1} ms",
            d.keys.max_ms().unwrap_or(f64::NAN),
            d.gap_ms.unwrap_or(f64::NAN)
        );
        r.drops.push(d);
    }
    // Quit with a key, so the dashboard's link takes its mount down.
    screen.send(b"q");
    screen.drain(Duration::from_millis(300));
    drop(screen);
    drop(remote);
    drop(sshd);
    Ok(r)
}
