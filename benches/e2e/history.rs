//! What the dashboard's pane history costs in memory: `hm tui` with
//! sessions whose output fills every pane's history, for several
//! `history_lines`, its resident memory read from `smaps_rollup`.
//!
//! Each session is 120×40 and has written 3000 rows of 120 characters
//! (or 40, to show what short lines cost), all kept by its supervisor
//! (`--scrollback-bytes 1 MiB`), so the replay fills the history. The
//! dashboard runs with `--no-fit`: its panes keep the sessions' own
//! 120-column size, so every history row is a full 120-cell row, the
//! dearest kind (vt100 trims trailing blanks off rows that scroll into the
//! history).

use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use crate::Config;
use crate::peers::{Bench, HmSession, PtyProc};
use crate::report::{Checks, Table};
use crate::sys::Mem;

/// Rows each session writes: more than any depth measured.
const ROWS_WRITTEN: usize = 3000;
/// The cases measured, (depth, characters a row); the first is the
/// baseline.
const CASES: [(usize, usize); 4] = [(0, 120), (1000, 120), (2000, 120), (1000, 40)];

/// Drains the dashboard's pty for `d`, so it never blocks on it.
fn drain(p: &PtyProc, d: Duration) {
    let mut buf = vec![0u8; 256 * 1024];
    let end = Instant::now() + d;
    while Instant::now() < end {
        let mut fds = [PollFd::new(p.fd(), PollFlags::POLLIN)];
        let _ = poll(&mut fds, PollTimeout::from(50u8));
        while matches!(nix::unistd::read(p.fd(), &mut buf), Ok(n) if n > 0) {}
    }
}

/// The dashboard's memory (KiB) with `n` full sessions and `depth` rows
/// of history a pane.
fn dashboard_mem(b: &Bench, n: usize, depth: usize, width: usize) -> Option<Mem> {
    let dir = b.path(&b.name("hist"));
    let exe = std::env::current_exe().ok()?.display().to_string();
    let rows = ROWS_WRITTEN.to_string();
    let line = (width + 2).to_string();
    let sessions: Vec<HmSession> = (0..n)
        .map(|i| {
            let s = b.spawn_hm_with(
                &dir,
                &format!("h{i:02}"),
                &["--scrollback-bytes", "1048576"],
                &[&exe, "--hm-bench-writer", &rows, &line, "0"],
            );
            s.wait_ready();
            s
        })
        .collect();
    let config = b.path(&format!("{}.toml", b.name("hist")));
    std::fs::write(&config, format!("history_lines = {depth}\n")).ok()?;
    let hm = b.hm.display().to_string();
    let (config, dir_s) = (config.display().to_string(), dir.display().to_string());
    let tui = b.pty(&[
        &hm,
        "--config",
        &config,
        "tui",
        "--no-fit",
        "--socket-dir",
        &dir_s,
    ]);
    // Every pane connects and replays its session's 366 KB; then the
    // memory settles.
    drain(&tui, Duration::from_secs(5));
    let mem = Mem::of(tui.pid);
    drop(tui);
    drop(sessions);
    mem
}

/// The history section: the dashboard's RSS by depth, and what a pane's
/// thousand rows come to.
pub fn section(b: &Bench, cfg: &Config, _checks: &mut Checks) -> Table {
    let n = cfg.sessions.min(16);
    let mut t = Table::new(
        "Dashboard history memory (`history_lines`)",
        &[
            "history_lines",
            "row",
            "tui RSS KiB",
            "private KiB",
            "KiB a pane per 1000 rows",
        ],
    );
    let mut base: Option<Mem> = None;
    for (depth, width) in CASES {
        let Some(m) = dashboard_mem(b, n, depth, width) else {
            t.row(&[
                depth.to_string(),
                format!("{width} chars"),
                "-".into(),
                "-".into(),
                "-".into(),
            ]);
            continue;
        };
        let per_thousand = base.filter(|_| depth > 0).map(|b0| {
            m.private.saturating_sub(b0.private) as f64 / n as f64 / (depth as f64 / 1000.0)
        });
        if depth == 0 {
            base = Some(m);
        }
        t.row(&[
            depth.to_string(),
            format!("{width} chars"),
            m.rss.to_string(),
            m.private.to_string(),
            per_thousand.map_or("-".into(), |k| format!("{k:.0}")),
        ]);
    }
    t.note(&format!(
        "{n} sessions of 120x40, each with {ROWS_WRITTEN} rows replayed; `hm tui --no-fit` \
         in a 120x40 pty, so rows are as wide as written. Per pane: the private memory over \
         the depth-0 run, divided by the sessions."
    ));
    t
}
