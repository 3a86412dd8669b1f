//! The dashboard over a thousand sessions: first paint, memory, open
//! files and idle cost; whether it stays usable (a filter narrowing the
//! grid to one pane, a page change); and the same dashboard under a soft
//! limit of 1024 open files: whether every pane still connects, and
//! whether `n` still starts a session.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::peers::Bench;
use crate::scale::{self, Over};
use crate::screen::{self, Screen};
use crate::sys::{self, Mem};

/// How long the dashboard is given to connect to every session and ask
/// each its state (each quiet one once more at its 3 s idle threshold)
/// before it is measured.
pub const SETTLE: Duration = Duration::from_secs(8);
/// Filters typed, and page changes.
const FILTERS: usize = 5;
const PAGE_CHANGES: usize = 10;
/// A key whose effect is not on screen by then counts as lost.
const LOST_AFTER: Duration = Duration::from_secs(3);
const PG_DN: &[u8] = b"\x1b[6~";
const PG_UP: &[u8] = b"\x1b[5~";

#[derive(Debug, Default)]
pub struct Dash {
    pub first_paint_ms: Vec<f64>,
    pub mem: Option<Mem>,
    pub fds: Option<usize>,
    pub threads: Option<u64>,
    pub idle: Option<Over>,
    pub filter_ms: Vec<f64>,
    pub page_ms: Vec<f64>,
    pub pages: usize,
    /// Filters and page changes never seen on screen.
    pub lost: usize,
}

/// The dashboard under the soft limit.
#[derive(Debug, Default)]
pub struct Limited {
    pub first_paint_ms: Option<f64>,
    pub pages: usize,
    pub fds: Option<usize>,
    pub mem: Option<Mem>,
    /// Panes whose bottom border ends in `idle ...`, over every page.
    pub panes_fine: Option<usize>,
    /// What the other panes' bottom borders say, each text once.
    pub problems: Vec<String>,
    pub footer: String,
    /// The footer's notice after `n` (the text before the key hints).
    pub new_session: Option<String>,
    pub started: bool,
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// One page change: `PgDn` unless on the last page; the time until the
/// footer shows the new page number.
fn turn_page(s: &mut Screen) -> Option<f64> {
    let (page, pages) = s.page();
    let (key, want) = if page < pages {
        (PG_DN, page + 1)
    } else {
        (PG_UP, page.saturating_sub(1).max(1))
    };
    let t = Instant::now();
    s.send(key);
    let seen = s.until_cells(LOST_AFTER, |v| {
        screen::page_of(v.contents().lines().last().unwrap_or("")) == Some((want, pages))
    });
    seen.map(|_| ms(t))
}

pub fn measure(b: &Bench, dir: &Path, first: &str, last: &str, idle: Duration) -> Dash {
    let mut d = Dash {
        first_paint_ms: scale::first_paints(b, dir, first),
        ..Dash::default()
    };
    let mut s = scale::dashboard(b, dir);
    s.until(Duration::from_secs(10), |c| c.contains(first));
    s.drain(SETTLE);
    let pid = s.proc.pid;
    d.mem = Mem::of(pid);
    d.fds = sys::fds(pid);
    d.threads = sys::threads(pid);
    (d.idle, _) = scale::usage_over(&mut s, &[pid], idle);
    d.pages = s.page().1;
    for _ in 0..PAGE_CHANGES {
        match turn_page(&mut s) {
            Some(v) => d.page_ms.push(v),
            None => d.lost += 1,
        }
        s.drain(Duration::from_millis(200));
    }
    for _ in 0..FILTERS {
        let t = Instant::now();
        s.send(format!("/{last}").as_bytes());
        match s.until_cells(LOST_AFTER, |v| screen::panes(v) == 1) {
            Some(_) => d.filter_ms.push(ms(t)),
            None => d.lost += 1,
        }
        // Esc clears the filter and leaves the prompt: the grid is whole
        // again.
        s.send(b"\x1b");
        s.until_cells(LOST_AFTER, |v| screen::panes(v) > 1);
        s.drain(Duration::from_millis(200));
    }
    s.send(b"q");
    s.drain(Duration::from_millis(300));
    d
}

/// What the panes' bottom borders say on the screen shown: how many say
/// `idle`, and the other texts.
fn borders(v: &vt100::Screen) -> (usize, Vec<String>) {
    let (mut fine, mut other) = (0, Vec::new());
    for line in v.contents().lines() {
        for seg in line.split(['╰', '┗']).skip(1) {
            let end = seg.find(['╯', '┛']).unwrap_or(seg.len());
            // The program's directory, a rule, then the link's state.
            let text = seg[..end]
                .rsplit(['─', '━'])
                .map(str::trim)
                .find(|t| !t.is_empty())
                .unwrap_or("");
            if text.starts_with("idle") {
                fine += 1;
            } else {
                other.push(text.to_string());
            }
        }
    }
    (fine, other)
}

/// The dashboard started with the soft limit on open files at
/// [`super::NOFILE`]: every page looked at, then `n` typed.
pub fn limited(b: &Bench, dir: &Path, first: &str, last: &str) -> Limited {
    let mut l = Limited::default();
    let hm = b.hm.display().to_string();
    let d = dir.display().to_string();
    let lim = super::limited();
    let argv = [
        lim[0].as_str(),
        lim[1].as_str(),
        &hm,
        "tui",
        "--socket-dir",
        &d,
    ];
    let t0 = Instant::now();
    let mut s = Screen::start(b, &argv, scale::SIZE, &[]);
    l.first_paint_ms = s
        .until(Duration::from_secs(10), |c| c.contains(first))
        .map(|_| ms(t0));
    s.drain(SETTLE);
    let pid = s.proc.pid;
    l.fds = sys::fds(pid);
    l.mem = Mem::of(pid);
    // The footer's parts, without the spaces that align them.
    l.footer = s
        .footer()
        .split("   ")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" … ");
    l.pages = s.page().1;
    // From the first page to the last, reading each pane's border.
    while s.page().0 > 1 {
        turn_page(&mut s);
    }
    let mut fine = 0;
    let mut seen_last = false;
    for page in 1..=l.pages {
        if page > 1 && turn_page(&mut s).is_none() {
            break;
        }
        // Its panes' borders drawn anew.
        s.drain(Duration::from_millis(300));
        let (f, other) = borders(s.vt.screen());
        fine += f;
        seen_last |= s.contents().contains(last);
        for o in other {
            if !l.problems.contains(&o) && l.problems.len() < 6 {
                l.problems.push(o);
            }
        }
    }
    l.panes_fine = seen_last.then_some(fine);
    // `n`, the id `s1`, a command.
    s.send(b"n");
    s.drain(Duration::from_millis(300));
    s.send(b"s1\r");
    s.drain(Duration::from_millis(300));
    s.send(b"sleep 1000000\r");
    let seen = s.until(Duration::from_secs(10), |c| {
        let foot = c.lines().last().unwrap_or("");
        foot.contains("started session") || foot.contains("could not start")
    });
    if seen.is_some() {
        let foot = s.footer();
        let notice = foot.split("←↓↑→").next().unwrap_or(&foot).trim();
        l.new_session = Some(notice.to_string());
    } else {
        l.new_session = Some(s.footer());
    }
    let pid_file = dir.join("s1.pid");
    l.started = std::fs::read_to_string(&pid_file).is_ok_and(|t| !t.is_empty());
    s.send(b"q");
    s.drain(Duration::from_millis(300));
    drop(s);
    // The session the dashboard started: its supervisor and its program,
    // by the pids in its pid file.
    if let Ok(text) = std::fs::read_to_string(&pid_file) {
        let pids: Vec<i32> = text
            .lines()
            .take(2)
            .filter_map(|p| p.trim().parse().ok())
            .collect();
        for (i, pid) in pids.iter().enumerate().rev() {
            sys::kill_and_reap(*pid, i == 1);
        }
    }
    l
}
