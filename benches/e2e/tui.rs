//! `hm tui`, driven through a pty and read back through a terminal
//! emulator (vt100): first paint with many sessions, wake-ups when all of
//! them are idle, CPU with many sessions streaming, and key-to-screen
//! latency in a focused pane while the others stream.
//!
//! The dashboard's key bindings are assumed as they are today: sessions
//! are sorted by id, the first is selected, Enter focuses it and keys then
//! go to it. If they change, change [`focus_first`].

use std::time::{Duration, Instant};

use heimdall::protocol::Size;

use crate::Config;
use crate::peers::{self, Bench, COLS, HmSession, ROWS};
use crate::report::{Checks, Table, median, num, percentile};
use crate::screen::Screen;
use crate::sys;
use crate::sys::Usage;

#[derive(Debug, Default)]
pub struct Report {
    pub first_paint_ms: Vec<f64>,
    pub idle_sessions: usize,
    pub idle_tui: Option<(Usage, f64)>,
    pub idle_supervisors: Option<(Usage, f64)>,
    pub streaming_sessions: usize,
    pub streaming_tui: Option<(Usage, f64)>,
    pub key_us: Vec<f64>,
    pub key_lost: usize,
}

/// True when this build of `hm` has a dashboard.
pub fn available(b: &Bench) -> bool {
    b.hm()
        .args(["tui", "--help"])
        .status()
        .is_ok_and(|s| s.success())
}

/// `hm tui` on socket dir `dir`, in a pty of the usual size.
fn dashboard(b: &Bench, dir: &std::path::Path) -> Screen {
    let hm = b.hm.display().to_string();
    let dir = dir.display().to_string();
    let size = Size {
        cols: COLS,
        rows: ROWS,
    };
    Screen::start(b, &[&hm, "tui", "--socket-dir", &dir], size, &[])
}

pub fn sessions(b: &Bench, dir: &std::path::Path, n: usize, argv: &[&str]) -> Vec<HmSession> {
    (0..n)
        .map(|i| {
            let s = b.spawn_hm(dir, &format!("p{i:03}"), argv);
            s.wait_ready();
            s
        })
        .collect()
}

/// Focuses the first session (Enter), as a person would.
fn focus_first(screen: &mut Screen) {
    screen.send(b"\r");
    screen.pump(Duration::from_millis(300));
}

pub fn measure(
    b: &Bench,
    many: usize,
    streaming: usize,
    samples: usize,
    window: Duration,
) -> Report {
    let mut r = Report {
        idle_sessions: many,
        streaming_sessions: streaming,
        ..Report::default()
    };
    // First paint and idle: `many` quiet sessions.
    let dir = b.path(&b.name("tui"));
    let idle = sessions(b, &dir, many, &["sleep", "1000000"]);
    for _ in 0..3 {
        let t0 = Instant::now();
        let mut screen = dashboard(b, &dir);
        if screen
            .until(Duration::from_secs(10), |c| c.contains("p000"))
            .is_some()
        {
            r.first_paint_ms.push(t0.elapsed().as_secs_f64() * 1e3);
        }
        drop(screen);
    }
    let mut screen = dashboard(b, &dir);
    screen.until(Duration::from_secs(10), |c| c.contains("p000"));
    // Let every pane connect and replay, then watch it idle.
    let settle = Instant::now() + Duration::from_secs(3);
    while Instant::now() < settle {
        screen.pump(Duration::from_millis(100));
    }
    let sup: Vec<i32> = idle.iter().map(HmSession::pid).collect();
    let tui_pid = screen.proc.pid;
    let all: Vec<i32> = std::iter::once(tui_pid)
        .chain(sup.iter().copied())
        .collect();
    let before: Vec<Option<Usage>> = all.iter().map(|&p| Usage::of(p)).collect();
    let t0 = Instant::now();
    // Keep draining the pty so the dashboard never blocks on it.
    while t0.elapsed() < window {
        screen.pump(Duration::from_millis(200));
    }
    let secs = t0.elapsed().as_secs_f64();
    let after: Vec<Option<Usage>> = all.iter().map(|&p| Usage::of(p)).collect();
    let delta = |range: std::ops::Range<usize>| -> Option<Usage> {
        range.into_iter().try_fold(Usage::default(), |acc, i| {
            let mut sum = acc;
            sum.add(after[i]?.since(before[i]?));
            Some(sum)
        })
    };
    r.idle_tui = delta(0..1).map(|u| (u, secs));
    r.idle_supervisors = delta(1..all.len()).map(|u| (u, secs));
    drop(screen);
    drop(idle);

    // Streaming: one echo session (selected first) and `streaming` others
    // writing an 80-byte line every 10 ms.
    let dir = b.path(&b.name("tui"));
    let echo = b.spawn_hm(&dir, "a-echo", &["sh", "-c", peers::ECHO_SCRIPT]);
    echo.wait_ready();
    let exe = std::env::current_exe()
        .expect("own path")
        .display()
        .to_string();
    let busy = sessions(
        b,
        &dir,
        streaming,
        &[&exe, "--hm-bench-writer", "0", "80", "10000"],
    );
    let mut screen = dashboard(b, &dir);
    screen.until(Duration::from_secs(10), |c| c.contains("a-echo"));
    let warm = Instant::now() + Duration::from_secs(2);
    while Instant::now() < warm {
        screen.pump(Duration::from_millis(50));
    }
    let tui_pid = screen.proc.pid;
    let t0 = Instant::now();
    let before = Usage::of(tui_pid);
    while t0.elapsed() < window.min(Duration::from_secs(5)) {
        screen.pump(Duration::from_millis(50));
    }
    r.streaming_tui = Usage::of(tui_pid)
        .zip(before)
        .map(|(a, b)| (a.since(b), t0.elapsed().as_secs_f64()));

    focus_first(&mut screen);
    let count = |c: &str| c.bytes().filter(|&x| x == b'@').count();
    let mut seen = count(&screen.vt.screen().contents());
    for i in 0..samples + 20 {
        let t = Instant::now();
        screen.send(b"@");
        let want = seen + 1;
        match screen.until(Duration::from_secs(1), |c| count(c) >= want) {
            Some(_) if i >= 20 => r.key_us.push(t.elapsed().as_secs_f64() * 1e6),
            Some(_) => {}
            None => r.key_lost += 1,
        }
        seen = count(&screen.vt.screen().contents());
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(screen);
    drop(busy);
    drop(echo);
    r
}

/// The dashboard section of the run: measure, tabulate, check.
pub fn section(b: &Bench, cfg: &Config, checks: &mut Checks) -> Table {
    let mut t = Table::new("Dashboard (`hm tui`)", &["measure", "value"]);
    if !available(b) {
        println!("\nskipped: hm tui not built");
        t.note("skipped: hm tui not built");
        for what in [
            "tui key-to-screen p99, 16 streaming",
            "tui first paint, 50 sessions",
            "tui wake-ups, all idle",
        ] {
            checks.add(what, "see issue", "skipped".into(), None);
        }
        return t;
    }
    let load = sys::Load::now();
    let samples = (cfg.samples / 10).max(20);
    let r = measure(b, cfg.sessions, 16, samples, cfg.idle);
    let paint = median(&r.first_paint_ms);
    let p50 = median(&r.key_us).map(|v| v / 1e3);
    let p99 = percentile(&r.key_us, 99.0).map(|v| v / 1e3);
    let rate = |u: Option<(sys::Usage, f64)>| {
        u.map(|(u, s)| (u.ctxsw as f64 / s, u.cpu_ns as f64 / 1e6 / s))
    };
    let idle = rate(r.idle_tui);
    let idle_sup = rate(r.idle_supervisors);
    let stream = rate(r.streaming_tui);
    t.row(&[
        format!(
            "first paint, {} sessions (ms, median of 3)",
            r.idle_sessions
        ),
        num(paint),
    ]);
    t.row(&[
        format!("all {} idle: tui wake-ups/s, CPU ms/s", r.idle_sessions),
        format!("{} / {}", num(idle.map(|x| x.0)), num(idle.map(|x| x.1))),
    ]);
    t.row(&[
        format!(
            "all {} idle: supervisors' wake-ups/s (sum)",
            r.idle_sessions
        ),
        num(idle_sup.map(|x| x.0)),
    ]);
    t.row(&[
        format!(
            "{} sessions streaming 8 KB/s each: tui CPU ms/s, wake-ups/s",
            r.streaming_sessions
        ),
        format!(
            "{} / {}",
            num(stream.map(|x| x.1)),
            num(stream.map(|x| x.0))
        ),
    ]);
    t.row(&[
        format!(
            "key-to-screen in a focused pane, {} streaming (ms p50 / p99, {} keys, {} lost)",
            r.streaming_sessions,
            r.key_us.len(),
            r.key_lost
        ),
        format!("{} / {}", num(p50), num(p99)),
    ]);
    checks.add(
        "tui key-to-screen p99, 16 streaming",
        "≤ 50 ms",
        format!("{} ms", num(p99)),
        p99.map(|p| p <= 50.0 && r.key_lost == 0),
    );
    checks.add(
        &format!("tui first paint, {} sessions", r.idle_sessions),
        "≤ 500 ms",
        format!("{} ms", num(paint)),
        paint.map(|p| p <= 500.0),
    );
    checks.add(
        "tui wake-ups, all idle",
        "≤ ~1 /s",
        format!("{} /s", num(idle.map(|x| x.0))),
        idle.map(|x| x.0 <= 1.5),
    );
    t.note(&format!("Foreign CPU share: {:.2}.", load.foreign_since()));
    t
}
