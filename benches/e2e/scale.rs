//! The dashboard at scale (issue 15): one `hm tui` in a 200x60 pty over
//! 200 sessions. With every session quiet: first paint, memory and idle
//! wake-ups. With 20 of them streaming: CPU, and key-to-screen for two
//! keys that change the grid; the inbox (issue 22): opening it, and a
//! session starting to ask to its row there. With another machine's sessions in the grid
//! too: what that machine dropping costs the frames. And memory once every
//! session has a full scrollback for the dashboard to replay.
//!
//! The sessions are `hm run --detach` supervisors, children of the
//! harness, each killed by pid when its guard drops. The streaming ones
//! sort first, so they are on the page shown: the dashboard draws them.

mod host;
mod inbox;
mod keys;
pub mod sizes;

use std::path::Path;
use std::time::{Duration, Instant};

use heimdall::protocol::Size;

use crate::Config;
use crate::peers::{self, Bench, HmSession};
use crate::report::{Checks, Table, median, num, percentile};
use crate::screen::Screen;
use crate::sys::{self, Mem, Usage};

pub use host::{HostDrop, says_down};
pub use keys::Keys;

/// The dashboard's terminal.
pub const SIZE: Size = Size {
    cols: 200,
    rows: 60,
};
/// Sessions on the other machine, each with a full scrollback to replay
/// when its host comes back.
const REMOTE_SESSIONS: usize = 20;
/// `history_lines` of the other dashboards over full scrollbacks: what
/// the panes' histories cost.
const SMALLER_HISTORIES: [usize; 2] = [0, 100];
/// Lines each session writes before the full-scrollback dashboard starts:
/// 80 KB, more than the 64 KiB a supervisor keeps by default.
const HISTORY_LINES_WRITTEN: usize = 1000;
/// A streaming session's output: an 80-byte line every 10 ms (8 KB/s), as
/// in the `tui` section.
const LINE: &str = "80";
const LINE_GAP_US: &str = "10000";
/// How long the dashboard over full scrollbacks is given to replay them
/// all before its memory is read.
const FULL_SETTLE: Duration = Duration::from_secs(8);

/// What a process used, and over how many seconds.
pub type Over = (Usage, f64);

#[derive(Debug, Default)]
pub struct Report {
    pub sessions: usize,
    pub streaming: usize,
    pub first_paint_ms: Vec<f64>,
    pub mem_quiet: Option<Mem>,
    pub idle_tui: Option<Over>,
    pub idle_supervisors: Option<Over>,
    pub stream_tui: Option<Over>,
    pub select: Keys,
    pub help: Keys,
    pub inbox: inbox::Report,
    pub mem_streamed: Option<Mem>,
    pub host: Option<Result<HostDrop, String>>,
    pub full_first_paint_ms: Vec<f64>,
    pub full_cpu: Option<Over>,
    pub mem_full: Option<Mem>,
    /// The same with fewer `history_lines` ([`SMALLER_HISTORIES`]).
    pub mem_full_smaller: Vec<(usize, Option<Mem>)>,
}

/// `hm tui` on `dir` in a pty of [`SIZE`].
pub fn dashboard(b: &Bench, dir: &Path) -> Screen {
    let hm = b.hm.display().to_string();
    let dir = dir.display().to_string();
    Screen::start(b, &[&hm, "tui", "--socket-dir", &dir], SIZE, &[])
}

/// The dashboard's memory once it has replayed every session, after
/// `settle`; with `config` as its config file, if given.
fn settled(
    b: &Bench,
    dir: &Path,
    config: Option<&Path>,
    settle: Duration,
) -> (Option<Mem>, Option<Over>) {
    let hm = b.hm.display().to_string();
    let dir = dir.display().to_string();
    let config = config.map(|c| c.display().to_string());
    let mut argv = vec![hm.as_str()];
    if let Some(c) = &config {
        argv.extend(["--config", c]);
    }
    argv.extend(["tui", "--socket-dir", &dir]);
    let mut screen = Screen::start(b, &argv, SIZE, &[]);
    let t0 = Instant::now();
    let before = Usage::of(screen.proc.pid);
    screen.drain(settle);
    let cpu = Usage::of(screen.proc.pid)
        .zip(before)
        .map(|(a, b)| (a.since(b), t0.elapsed().as_secs_f64()));
    (Mem::of(screen.proc.pid), cpu)
}

/// Starts every session, then waits for each: the supervisors come up
/// side by side rather than one after another.
pub fn start_all(b: &Bench, dir: &Path, sessions: Vec<(String, Vec<String>)>) -> Vec<HmSession> {
    let started: Vec<HmSession> = sessions
        .iter()
        .map(|(id, argv)| {
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            b.spawn_hm(dir, id, &argv)
        })
        .collect();
    for s in &started {
        s.wait_ready();
    }
    started
}

/// Three dashboards started one after another, each timed until the
/// first session's id is on its screen.
pub fn first_paints(b: &Bench, dir: &Path, first: &str) -> Vec<f64> {
    let mut ms = Vec::new();
    for _ in 0..3 {
        let t0 = Instant::now();
        let mut screen = dashboard(b, dir);
        if screen
            .until(Duration::from_secs(10), |c| c.contains(first))
            .is_some()
        {
            ms.push(t0.elapsed().as_secs_f64() * 1e3);
        }
    }
    ms
}

/// Usage of each of `pids` over `window`, while the dashboard's output is
/// drained; the first pid alone, and the rest summed.
pub fn usage_over(
    screen: &mut Screen,
    pids: &[i32],
    window: Duration,
) -> (Option<Over>, Option<Over>) {
    let before: Vec<Option<Usage>> = pids.iter().map(|&p| Usage::of(p)).collect();
    let t0 = Instant::now();
    screen.drain(window);
    let secs = t0.elapsed().as_secs_f64();
    let after: Vec<Option<Usage>> = pids.iter().map(|&p| Usage::of(p)).collect();
    let delta = |range: std::ops::Range<usize>| -> Option<Over> {
        let sum = range.into_iter().try_fold(Usage::default(), |acc, i| {
            let mut sum = acc;
            sum.add(after[i]?.since(before[i]?));
            Some(sum)
        })?;
        Some((sum, secs))
    };
    (delta(0..1), delta(1..pids.len()))
}

pub fn measure(
    b: &Bench,
    sessions: usize,
    streaming: usize,
    samples: usize,
    idle: Duration,
) -> Report {
    let streaming = streaming.min(sessions);
    let mut r = Report {
        sessions,
        streaming,
        ..Report::default()
    };
    let exe = std::env::current_exe()
        .expect("own path")
        .display()
        .to_string();
    let writer = format!("'{exe}' --hm-bench-writer 0 {LINE} {LINE_GAP_US}");

    // Quiet: the streaming sessions wait at a gate (a fifo) until the
    // harness opens it; the others sleep.
    let dir = b.path(&b.name("scale"));
    let gates: Vec<_> = (0..streaming).map(|_| b.fifo()).collect();
    // The last few ask, when let (see `inbox`).
    let askers = inbox::ASKERS.min(sessions.saturating_sub(streaming));
    let plan = (0..sessions - askers)
        .map(|i| {
            let argv = match gates.get(i) {
                Some(g) => vec![
                    "sh".into(),
                    "-c".into(),
                    format!("read x < '{}'; exec {writer}", g.display()),
                ],
                None => vec!["sleep".into(), "1000000".into()],
            };
            (format!("p{i:03}"), argv)
        })
        .collect();
    let local = start_all(b, &dir, plan);
    let askers = inbox::start(
        b,
        &dir,
        (sessions - askers..sessions)
            .map(|i| format!("p{i:03}"))
            .collect(),
    );
    eprintln!("e2e: scale: {sessions} sessions up");
    r.first_paint_ms = first_paints(b, &dir, "p000");

    let mut screen = dashboard(b, &dir);
    screen.until(Duration::from_secs(10), |c| c.contains("p000"));
    // Every pane connects, replays and is asked its state; each quiet
    // session is asked once more at its idle threshold (3 s).
    screen.drain(Duration::from_secs(5));
    r.mem_quiet = Mem::of(screen.proc.pid);
    let pids: Vec<i32> = std::iter::once(screen.proc.pid)
        .chain(local.iter().map(HmSession::pid))
        .collect();
    (r.idle_tui, r.idle_supervisors) = usage_over(&mut screen, &pids, idle);
    eprintln!("e2e: scale: idle measured");

    for g in &gates {
        peers::open_gate(g);
    }
    screen.drain(Duration::from_secs(2));
    let tui_pid = screen.proc.pid;
    (r.stream_tui, _) = usage_over(&mut screen, &[tui_pid], Duration::from_secs(5));
    let warm = 10;
    r.select = keys::selection(&mut screen, samples, warm);
    r.help = keys::help(&mut screen, samples, warm);
    r.inbox = inbox::measure(&mut screen, &askers, samples, warm);
    r.mem_streamed = Mem::of(screen.proc.pid);
    drop(screen);
    drop(askers);
    eprintln!("e2e: scale: keys measured");

    // Each writes more than its supervisor keeps, then sleeps.
    let history = |done: &Path| {
        vec![
            exe.clone(),
            "--hm-bench-writer".into(),
            HISTORY_LINES_WRITTEN.to_string(),
            LINE.into(),
            "0".into(),
            done.display().to_string(),
        ]
    };
    r.host = Some(host::measure(b, &dir, SIZE, REMOTE_SESSIONS, &history));
    drop(local);
    eprintln!("e2e: scale: host drops measured");

    // Full: every session has written more than its supervisor keeps, so
    // the dashboard replays a full scrollback into every pane.
    let dir = b.path(&b.name("scale"));
    let done: Vec<_> = (0..sessions).map(|_| b.path(&b.name("done"))).collect();
    let plan = done
        .iter()
        .enumerate()
        .map(|(i, d)| (format!("p{i:03}"), history(d)))
        .collect();
    let full = start_all(b, &dir, plan);
    peers::wait_for("every session to write its history", || {
        done.iter().all(|d| d.exists())
    });
    r.full_first_paint_ms = first_paints(b, &dir, "p000");
    (r.mem_full, r.full_cpu) = settled(b, &dir, None, FULL_SETTLE);
    for lines in SMALLER_HISTORIES {
        let config = b.path(&format!("{}.toml", b.name("history")));
        std::fs::write(&config, format!("history_lines = {lines}\n")).expect("write a config");
        let (mem, _) = settled(b, &dir, Some(&config), FULL_SETTLE);
        r.mem_full_smaller.push((lines, mem));
    }
    drop(full);
    r
}

pub fn mem_cell(m: Option<Mem>) -> String {
    m.map_or("–".into(), |m| {
        format!(
            "{:.1} / {:.1} MiB",
            m.rss as f64 / 1024.0,
            m.pss as f64 / 1024.0
        )
    })
}

pub fn keys_cell(k: &Keys) -> String {
    let ms = |v: Option<f64>| num(v.map(|x| x / 1e3));
    format!(
        "{} / {} / {} ({} keys, {} lost)",
        ms(median(&k.us)),
        ms(percentile(&k.us, 99.0)),
        num(k.max_ms()),
        k.us.len(),
        k.lost
    )
}

/// The scale section of the run: measure, tabulate, check.
pub fn section(b: &Bench, cfg: &Config, checks: &mut Checks) -> Table {
    let mut t = Table::new(
        "Dashboard at scale (`hm tui` in a 200x60 pty)",
        &["measure", "value"],
    );
    if !crate::tui::available(b) {
        t.note("skipped: hm tui not built");
        return t;
    }
    let load = sys::Load::now();
    let samples = (cfg.samples / 20).max(20);
    let r = measure(
        b,
        cfg.scale_sessions,
        cfg.scale_streaming,
        samples,
        cfg.idle,
    );
    let (n, s) = (r.sessions, r.streaming);
    let rate =
        |u: Option<Over>| u.map(|(u, secs)| (u.ctxsw as f64 / secs, u.cpu_ns as f64 / 1e6 / secs));
    let paint = median(&r.first_paint_ms);
    let idle = rate(r.idle_tui);
    let stream = rate(r.stream_tui);
    t.row(&[
        format!("first paint, {n} quiet sessions (ms, median of 3)"),
        num(paint),
    ]);
    t.row(&[
        format!("tui RSS / PSS, {n} quiet sessions"),
        mem_cell(r.mem_quiet),
    ]);
    t.row(&[
        format!("all {n} idle: tui wake-ups/s, CPU ms/s"),
        format!("{} / {}", num(idle.map(|x| x.0)), num(idle.map(|x| x.1))),
    ]);
    t.row(&[
        format!("all {n} idle: supervisors' wake-ups/s (sum)"),
        num(rate(r.idle_supervisors).map(|x| x.0)),
    ]);
    t.row(&[
        format!("{s} of {n} streaming 8 KB/s each: tui CPU ms/s, wake-ups/s"),
        format!(
            "{} / {}",
            num(stream.map(|x| x.1)),
            num(stream.map(|x| x.0))
        ),
    ]);
    t.row(&[
        format!("key-to-screen, selection moves (`l`/`h`), {s} streaming (ms p50 / p99 / max)"),
        keys_cell(&r.select),
    ]);
    t.row(&[
        format!("key-to-screen, help open/close (`?`), {s} streaming (ms p50 / p99 / max)"),
        keys_cell(&r.help),
    ]);
    t.row(&[
        format!(
            "key-to-screen, inbox open/close (`i`, `Esc`), {} waiting, {s} streaming (ms p50 / p99 / max)",
            inbox::ASKERS / 2
        ),
        keys_cell(&r.inbox.keys),
    ]);
    t.row(&[
        "a session starting to ask → its row in the open inbox (ms p50 / p99 / max)".into(),
        keys_cell(&r.inbox.rows),
    ]);
    t.row(&[
        format!("tui RSS / PSS after {s} streamed"),
        mem_cell(r.mem_streamed),
    ]);
    let p99 = |k: &Keys| percentile(&k.us, 99.0).map(|v| v / 1e3);
    for (what, k) in [("selection", &r.select), ("help", &r.help)] {
        checks.add(
            &format!("scale: key-to-screen p99 ({what}), {s} of {n} streaming"),
            "≤ 50 ms",
            format!("{} ms, {} lost", num(p99(k)), k.lost),
            p99(k).map(|p| p <= 50.0 && k.lost == 0),
        );
    }
    checks.add(
        &format!("scale: opening the inbox, key-to-screen p99, {s} of {n} streaming"),
        "≤ 50 ms",
        format!("{} ms, {} lost", num(p99(&r.inbox.keys)), r.inbox.keys.lost),
        p99(&r.inbox.keys).map(|p| p <= 50.0 && r.inbox.keys.lost == 0),
    );
    let row_max = r.inbox.rows.max_ms();
    checks.add(
        &format!("scale: a session asking → its inbox row, {n} sessions"),
        "≤ 300 ms",
        format!("{} ms, {} lost", num(row_max), r.inbox.rows.lost),
        row_max.map(|m| m <= 300.0 && r.inbox.rows.lost == 0),
    );
    checks.add(
        &format!("scale: first paint, {n} sessions"),
        "≤ 1000 ms",
        format!("{} ms", num(paint)),
        paint.map(|p| p <= 1000.0),
    );
    checks.add(
        &format!("scale: tui wake-ups, {n} idle"),
        "≤ 1 /s",
        format!("{} /s", num(idle.map(|x| x.0))),
        idle.map(|x| x.0 <= 1.0),
    );
    let mib = |m: Option<Mem>| m.map(|m| m.rss as f64 / 1024.0);
    checks.add(
        &format!("scale: tui RSS, {n} quiet sessions"),
        "≤ 100 MiB",
        format!("{} MiB", num(mib(r.mem_quiet))),
        mib(r.mem_quiet).map(|m| m <= 100.0),
    );
    match &r.host {
        Some(Ok(h)) => host_rows(&mut t, checks, h),
        Some(Err(why)) => {
            t.note(&format!("host drop skipped: {why}"));
            checks.add(
                "scale: a host dropping, longest frame gap",
                "≤ 50 ms",
                "skipped".into(),
                None,
            );
        }
        None => {}
    }
    let full_paint = median(&r.full_first_paint_ms);
    let full = rate(r.full_cpu);
    t.row(&[
        format!("{n} sessions with a full 64 KiB scrollback: first paint (ms, median of 3)"),
        num(full_paint),
    ]);
    t.row(&[
        format!("{n} full scrollbacks: tui RSS / PSS after 8 s"),
        mem_cell(r.mem_full),
    ]);
    for (lines, mem) in &r.mem_full_smaller {
        t.row(&[
            format!("the same with `history_lines = {lines}`: tui RSS / PSS"),
            mem_cell(*mem),
        ]);
    }
    t.row(&[
        "full scrollbacks: tui CPU over its first 8 s (ms/s)".into(),
        num(full.map(|x| x.1)),
    ]);
    checks.add(
        &format!("scale: tui RSS, {n} full scrollbacks"),
        "≤ 100 MiB",
        format!("{} MiB", num(mib(r.mem_full))),
        mib(r.mem_full).map(|m| m <= 100.0),
    );
    t.note(&format!(
        "{n} sessions of 120x40, `p000`.. in natural order; the first {s} stream (on the page shown). Key-to-screen: {samples} keys each after 10 warm-ups, 10-44 ms apart (at every phase of the 30 Hz frame clock). Foreign CPU share: {:.2}.",
        load.foreign_since()
    ));
    t
}

/// The rows and the check of the host drops.
fn host_rows(t: &mut Table, checks: &mut Checks, h: &HostDrop) {
    let mut after = Keys::default();
    for d in &h.drops {
        after.us.extend(&d.keys.us);
        after.at.extend(&d.keys.at);
        after.lost += d.keys.lost;
    }
    let worst_gap = h
        .drops
        .iter()
        .map(|d| d.gap_ms)
        .try_fold(0.0f64, |w, g| g.map(|g| w.max(g)));
    let worst_key = after.max_ms();
    t.row(&[
        format!(
            "host up ({} sessions there, quiet), {} s: key-to-screen ms p50 / p99 / max; longest frame gap",
            h.remote_sessions,
            host::BEFORE.as_secs()
        ),
        format!("{}; {} ms", keys_cell(&h.before), num(h.gap_before_ms)),
    ]);
    t.row(&[
        format!(
            "host dropped {} times (its proxy killed), {} s from each kill: the same",
            h.drops.len(),
            host::AFTER.as_secs()
        ),
        format!("{}; {} ms", keys_cell(&after), num(worst_gap)),
    ]);
    let each =
        |f: &dyn Fn(&host::Drop1) -> String| h.drops.iter().map(f).collect::<Vec<_>>().join("; ");
    t.row(&[
        "each drop: slowest key ms (typed at ms after the kill), longest gap ms (ended at)".into(),
        each(&|d| {
            format!(
                "{} ({}), {} ({})",
                num(d.keys.max_ms()),
                num(d.slowest_key_at_ms),
                num(d.gap_ms),
                num(d.gap_at_ms)
            )
        }),
    ]);
    t.row(&[
        "each drop: shown down / shown back, ms after the kill".into(),
        each(&|d| format!("{} / {}", num(d.seen_down_ms), num(d.back_ms))),
    ]);
    checks.add(
        "scale: a host dropping, longest frame gap and slowest key",
        "≤ 50 ms",
        format!("{} ms, {} ms", num(worst_gap), num(worst_key)),
        worst_gap
            .zip(worst_key)
            .map(|(g, k)| g <= 50.0 && k <= 50.0 && after.lost == 0),
    );
}
