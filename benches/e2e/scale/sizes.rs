//! Issue 22's targets, part of the dashboard at scale: one `hm tui` over
//! 200 sessions (20 of them streaming) in an 80x24 and in a 200x50
//! terminal: first paint, key-to-screen, memory, and what a layout change
//! costs the sessions. Sessions keep their own size, so pages, zoom, the
//! column count and the terminal resized must send none of them a RESIZE:
//! each quiet session is this harness (`--hm-bench-winch FILE`), counting
//! the SIGWINCHes it gets, which is what a RESIZE that changes its size
//! does to a program.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use heimdall::protocol::Size;

use super::keys::{self, Keys};
use super::{Over, keys_cell, mem_cell, start_all, usage_over};
use crate::Config;
use crate::peers::Bench;
use crate::report::{Checks, Table, median, num, percentile};
use crate::screen::Screen;
use crate::sys::{self, Mem};

/// The terminals the dashboard is measured in.
pub const SIZES: [Size; 2] = [
    Size { cols: 80, rows: 24 },
    Size {
        cols: 200,
        rows: 50,
    },
];

/// What one terminal size gave.
#[derive(Debug)]
pub struct Sized {
    pub size: Size,
    pub first_paint_ms: Vec<f64>,
    pub keys: Keys,
    pub mem: Option<Mem>,
    pub stream_tui: Option<Over>,
    /// SIGWINCHes the quiet sessions got from pages, zoom, columns and
    /// two terminal resizes.
    pub winches: Option<u64>,
    /// How many layout changes were made.
    pub changes: usize,
}

/// `--hm-bench-winch FILE`: sleeps, and appends a byte to FILE for each
/// SIGWINCH, until killed.
pub fn winch_counter(args: &[String]) -> ! {
    use nix::sys::signal::{SigSet, SigmaskHow, Signal, sigprocmask};
    let path = args.first().expect("--hm-bench-winch FILE");
    let mut set = SigSet::empty();
    set.add(Signal::SIGWINCH);
    sigprocmask(SigmaskHow::SIG_BLOCK, Some(&set), None).expect("block SIGWINCH");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open the count");
    loop {
        if set.wait().is_ok() {
            let _ = file.write_all(b"w");
        }
    }
}

/// SIGWINCHes counted so far in `files`.
fn counted(files: &[PathBuf]) -> u64 {
    files
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum()
}

fn dashboard(b: &Bench, dir: &Path, size: Size) -> Screen {
    let hm = b.hm.display().to_string();
    let dir = dir.display().to_string();
    Screen::start(b, &[&hm, "tui", "--socket-dir", &dir], size, &[])
}

/// Resizes the dashboard's terminal (its program gets SIGWINCH) and the
/// harness's emulator with it.
fn resize(screen: &mut Screen, size: Size) {
    let _ = heimdall::pty::resize(&screen.proc.master, size);
    screen.vt.screen_mut().set_size(
        std::num::NonZeroU16::new(size.rows).unwrap_or(std::num::NonZeroU16::MIN),
        std::num::NonZeroU16::new(size.cols).unwrap_or(std::num::NonZeroU16::MIN),
    );
}

pub fn measure(b: &Bench, sessions: usize, streaming: usize, samples: usize) -> Vec<Sized> {
    let streaming = streaming.min(sessions);
    let exe = std::env::current_exe()
        .expect("own path")
        .display()
        .to_string();
    let dir = b.path(&b.name("sizes"));
    let mut counts = Vec::new();
    let plan = (0..sessions)
        .map(|i| {
            let argv = if i < streaming {
                vec![
                    exe.clone(),
                    "--hm-bench-writer".into(),
                    "0".into(),
                    "80".into(),
                    "10000".into(),
                ]
            } else {
                let f = b.path(&b.name("winch"));
                counts.push(f.clone());
                vec![
                    exe.clone(),
                    "--hm-bench-winch".into(),
                    f.display().to_string(),
                ]
            };
            (format!("p{i:03}"), argv)
        })
        .collect();
    let all = start_all(b, &dir, plan);
    eprintln!("e2e: sizes: {sessions} sessions up");
    let mut out = Vec::new();
    for size in SIZES {
        let mut first_paint_ms = Vec::new();
        for _ in 0..3 {
            let t0 = Instant::now();
            let mut screen = dashboard(b, &dir, size);
            if screen
                .until(Duration::from_secs(10), |c| c.contains("p000"))
                .is_some()
            {
                first_paint_ms.push(t0.elapsed().as_secs_f64() * 1e3);
            }
        }
        let mut screen = dashboard(b, &dir, size);
        screen.until(Duration::from_secs(10), |c| c.contains("p000"));
        // Every pane connects, replays and is asked its state.
        screen.drain(Duration::from_secs(5));
        let pid = screen.proc.pid;
        let (stream_tui, _) = usage_over(&mut screen, &[pid], Duration::from_secs(5));
        let keys = keys::selection(&mut screen, samples, 10);
        let mem = Mem::of(pid);
        // Layout changes; each is drawn before the next.
        let before = counted(&counts);
        let other = Size {
            cols: size.cols / 2 + 7,
            rows: size.rows / 2 + 3,
        };
        let mut changes = 0;
        for key in [&b"\x1b[6~"[..], b"\x1b[5~", b"z", b"\x1b", b"+", b"-", b"="] {
            screen.send(key);
            screen.drain(Duration::from_millis(300));
            changes += 1;
        }
        for s in [other, size] {
            resize(&mut screen, s);
            screen.drain(Duration::from_millis(500));
            changes += 1;
        }
        // Anything sent has reached the sessions by now.
        screen.drain(Duration::from_secs(1));
        let winches = Some(counted(&counts).saturating_sub(before));
        out.push(Sized {
            size,
            first_paint_ms,
            keys,
            mem,
            stream_tui,
            winches,
            changes,
        });
        drop(screen);
        eprintln!("e2e: sizes: {}x{} measured", size.cols, size.rows);
    }
    drop(all);
    out
}

/// The section: measure, tabulate, check.
pub fn section(b: &Bench, cfg: &Config, checks: &mut Checks) -> Table {
    let mut t = Table::new(
        "Dashboard sizes (issue 22: `hm tui` at 80x24 and 200x50)",
        &["measure", "value"],
    );
    if !crate::tui::available(b) {
        t.note("skipped: hm tui not built");
        return t;
    }
    let load = sys::Load::now();
    let samples = (cfg.samples / 20).max(20);
    let (n, s) = (
        cfg.scale_sessions,
        cfg.scale_streaming.min(cfg.scale_sessions),
    );
    let runs = measure(b, n, s, samples);
    let mib = |m: Option<Mem>| m.map(|m| m.rss as f64 / 1024.0);
    for r in &runs {
        let at = format!("{}x{}", r.size.cols, r.size.rows);
        let paint = median(&r.first_paint_ms);
        let p99 = percentile(&r.keys.us, 99.0).map(|v| v / 1e3);
        let cpu = r.stream_tui.map(|(u, secs)| u.cpu_ns as f64 / 1e6 / secs);
        t.row(&[
            format!("{at}: first paint, {n} sessions (ms, median of 3)"),
            num(paint),
        ]);
        t.row(&[
            format!("{at}: key-to-screen, selection moves, {s} streaming (ms p50 / p99 / max)"),
            keys_cell(&r.keys),
        ]);
        t.row(&[format!("{at}: tui RSS / PSS"), mem_cell(r.mem)]);
        t.row(&[format!("{at}: tui CPU ms/s, {s} streaming"), num(cpu)]);
        t.row(&[
            format!(
                "{at}: SIGWINCHes the {} quiet sessions got from {} layout changes",
                n - s,
                r.changes
            ),
            r.winches.map_or("–".into(), |w| w.to_string()),
        ]);
        checks.add(
            &format!("sizes {at}: first paint, {n} sessions"),
            "≤ 300 ms",
            format!("{} ms", num(paint)),
            paint.map(|p| p <= 300.0),
        );
        checks.add(
            &format!("sizes {at}: key-to-screen p99, {s} of {n} streaming"),
            "≤ 50 ms",
            format!("{} ms, {} lost", num(p99), r.keys.lost),
            p99.map(|p| p <= 50.0 && r.keys.lost == 0),
        );
        checks.add(
            &format!("sizes {at}: tui RSS, {n} sessions"),
            "≤ 150 MiB",
            format!("{} MiB", num(mib(r.mem))),
            mib(r.mem).map(|m| m <= 150.0),
        );
        checks.add(
            &format!("sizes {at}: RESIZE sent by pages, zoom, columns, resizes"),
            "0",
            r.winches.map_or("–".into(), |w| w.to_string()),
            r.winches.map(|w| w == 0),
        );
    }
    t.note(&format!(
        "{n} sessions at their own size, `p000`.. in natural order; the first {s} write an 80-byte line every 10 ms, the others count their SIGWINCHes. Layout changes: PgDn, PgUp, z, Esc, +, -, =, the terminal resized to about half and back, each drawn before the next. Foreign CPU share: {:.2}.",
        load.foreign_since()
    ));
    t
}
