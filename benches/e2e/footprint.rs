//! Start-up time, memory per session, threads and listing time, at 1, 10
//! and 50 idle sessions (each running `sleep`). Only the serving processes
//! are counted: the supervisors, the dtach masters, the tmux server.

use std::os::unix::net::UnixStream;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::peer::Peer;
use crate::peers::{Bench, HmSession};
use crate::sys::{self, Mem};

#[derive(Debug, Default)]
pub struct Row {
    pub name: &'static str,
    pub startup_ms: Vec<f64>,
    /// One serving process with one session.
    pub one: Mem,
    /// Summed PSS (KiB) at each session count.
    pub pss: Vec<(usize, u64)>,
    pub threads: Option<u64>,
    /// Listing wall time (ms) at each session count.
    pub ls_ms: Vec<(usize, Vec<f64>)>,
}

impl Row {
    /// Extra PSS per session between the first and the last count.
    pub fn marginal_kib(&self) -> Option<f64> {
        let (n1, p1) = *self.pss.first()?;
        let (n2, p2) = *self.pss.last()?;
        (n2 > n1).then(|| (p2 as f64 - p1 as f64) / (n2 - n1) as f64)
    }
}

fn time_ms(f: impl FnOnce()) -> f64 {
    let t0 = Instant::now();
    f();
    t0.elapsed().as_secs_f64() * 1e3
}

fn settle_memory() {
    // Let lazily touched pages and the first log lines land.
    std::thread::sleep(Duration::from_millis(300));
}

pub fn hm(b: &Bench, counts: &[usize], ls_reps: usize) -> Row {
    hm_with(b, "hm", &[], &["sleep", "1000000"], counts, ls_reps)
}

/// Sessions classified by `agent`, each with a full 120×40 screen of text
/// and a question under it: the screen model and the verdict at their
/// largest for an idle session.
pub fn hm_agent(b: &Bench, counts: &[usize], ls_reps: usize) -> Row {
    hm_full_screen(b, "hm, agent, full screen", "agent", counts, ls_reps)
}

/// The same screenful under `simple`: what the screen costs, apart from
/// the agent classifier's rules.
pub fn hm_simple_full(b: &Bench, counts: &[usize], ls_reps: usize) -> Row {
    hm_full_screen(b, "hm, simple, full screen", "simple", counts, ls_reps)
}

/// A session's program that fills a 120×40 screen with text and asks a
/// question under it, then sleeps.
pub const FULL_SCREEN: &str = "i=0; while [ $i -lt 60 ]; do \
                  printf '%03d %s\\n' $i 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua'; \
                  i=$((i+1)); done; printf 'Continue? [y/N] '; exec sleep 1000000";

fn hm_full_screen(
    b: &Bench,
    name: &'static str,
    classifier: &str,
    counts: &[usize],
    ls_reps: usize,
) -> Row {
    hm_with(
        b,
        name,
        &["--classifier", classifier],
        &["sh", "-c", FULL_SCREEN],
        counts,
        ls_reps,
    )
}

fn hm_with(
    b: &Bench,
    name: &'static str,
    opts: &[&str],
    argv: &[&str],
    counts: &[usize],
    ls_reps: usize,
) -> Row {
    hm_kept(b, name, opts, argv, counts, ls_reps).0
}

/// Starts sessions one after another up to the largest of `counts`,
/// reading their memory at each count, and hands them over still
/// running (in one socket dir, ids `m000`, `m001`, ...).
pub fn hm_kept(
    b: &Bench,
    name: &'static str,
    opts: &[&str],
    argv: &[&str],
    counts: &[usize],
    ls_reps: usize,
) -> (Row, Vec<HmSession>) {
    let dir = b.path(&b.name("fp"));
    let mut row = Row {
        name,
        ..Row::default()
    };
    let max = counts.iter().copied().max().unwrap_or(1);
    let mut sessions = Vec::new();
    for i in 0..max {
        let id = format!("m{i:03}");
        let t0 = Instant::now();
        let s = b.spawn_hm_with(&dir, &id, opts, argv);
        let deadline = t0 + Duration::from_secs(15);
        while !Peer::connect(&s.sock).is_ok_and(|mut p| p.status().is_ok()) {
            assert!(
                Instant::now() < deadline,
                "e2e: session {id} never answered"
            );
            std::thread::sleep(Duration::from_micros(100));
        }
        row.startup_ms.push(t0.elapsed().as_secs_f64() * 1e3);
        s.wait_ready();
        sessions.push(s);
        let n = i + 1;
        if counts.contains(&n) {
            settle_memory();
            let mems: Vec<Mem> = sessions.iter().filter_map(|s| Mem::of(s.pid())).collect();
            if n == 1 {
                row.one = mems.first().copied().unwrap_or_default();
                row.threads = sys::threads(sessions[0].pid());
            }
            row.pss.push((n, mems.iter().map(|m| m.pss).sum()));
            if n == 1 || n == max {
                let ls: Vec<f64> = (0..ls_reps)
                    .map(|_| {
                        time_ms(|| {
                            let _ = b.hm().arg("ls").arg("--socket-dir").arg(&dir).status();
                        })
                    })
                    .collect();
                row.ls_ms.push((n, ls));
            }
        }
    }
    (row, sessions)
}

pub fn dtach(b: &Bench, counts: &[usize]) -> Row {
    let mut row = Row {
        name: "dtach",
        ..Row::default()
    };
    let max = counts.iter().copied().max().unwrap_or(1);
    let mut sessions = Vec::new();
    for i in 0..max {
        let sock = b.path(&format!("{}.dtach", b.name("fd")));
        let t0 = Instant::now();
        let s = b.spawn_dtach(&sock, &["sleep", "1000000"]);
        let deadline = t0 + Duration::from_secs(15);
        while UnixStream::connect(&sock).is_err() {
            assert!(Instant::now() < deadline, "e2e: dtach never listened");
            std::thread::sleep(Duration::from_micros(100));
        }
        row.startup_ms.push(t0.elapsed().as_secs_f64() * 1e3);
        sessions.push(s);
        let n = i + 1;
        if counts.contains(&n) {
            settle_memory();
            let mems: Vec<Mem> = sessions.iter().filter_map(|s| Mem::of(s.pid())).collect();
            if n == 1 {
                row.one = mems.first().copied().unwrap_or_default();
                row.threads = sys::threads(sessions[0].pid());
            }
            row.pss.push((n, mems.iter().map(|m| m.pss).sum()));
        }
    }
    row
}

pub fn tmux(b: &Bench, counts: &[usize], ls_reps: usize) -> Row {
    let mut row = Row {
        name: "tmux (one server)",
        ..Row::default()
    };
    let max = counts.iter().copied().max().unwrap_or(1);
    let t = b.tmux_server();
    for i in 0..max {
        let name = format!("m{i:03}");
        row.startup_ms
            .push(time_ms(|| t.new_session(&name, &["sleep", "1000000"])));
        let n = i + 1;
        if counts.contains(&n) {
            settle_memory();
            let pid = t.pid().unwrap_or(0);
            let m = Mem::of(pid).unwrap_or_default();
            if n == 1 {
                row.one = m;
                row.threads = sys::threads(pid);
            }
            row.pss.push((n, m.pss));
            if n == 1 || n == max {
                let ls: Vec<f64> = (0..ls_reps)
                    .map(|_| {
                        time_ms(|| {
                            let _ = t.cmd().arg("ls").stdout(Stdio::null()).status();
                        })
                    })
                    .collect();
                row.ls_ms.push((n, ls));
            }
        }
    }
    row
}
