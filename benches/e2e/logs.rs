//! `hm logs` of a full 1 MiB scrollback, timed from start to exit (its
//! output to /dev/null), with its peak memory: plain 80-byte lines written
//! at one size, and coloured lines written in eight pieces with the
//! session resized before each (eight marks in the replay, the sizes
//! going 120x40, 80x24, 200x50, 40x12 and round again). Also `--width
//! 80` and `--grep` on the plain one.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use heimdall::protocol::{ClientType, Size};

use crate::Config;
use crate::peer::Peer;
use crate::peers::{self, Bench};
use crate::report::{Checks, Table, median, num};
use crate::sys;

const MIB: usize = 1 << 20;
/// Runs of `hm logs` per case.
const REPS: usize = 7;

/// Coloured lines, like a build log.
fn coloured(bytes: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while out.len() < bytes {
        out.extend_from_slice(
            format!(
                "\x1b[1;3{}m{:>6}\x1b[0m  src/module_{}.rs  \x1b[2mcompiling\x1b[0m {}\r\n",
                i % 8,
                i,
                i % 97,
                "=".repeat(i % 40)
            )
            .as_bytes(),
        );
        i += 1;
    }
    out
}

/// One `hm logs` run: wall time in ms.
fn run(b: &Bench, dir: &str, args: &[&str]) -> f64 {
    let t0 = Instant::now();
    let exit = b
        .hm()
        .arg("logs")
        .args(args)
        .args(["--socket-dir", dir])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run hm logs");
    assert!(exit.success(), "e2e: hm logs failed");
    t0.elapsed().as_secs_f64() * 1e3
}

/// The largest peak RSS (KiB) of any child reaped so far.
fn children_max_rss_kib() -> i64 {
    use nix::sys::resource::{UsageWho, getrusage};
    getrusage(UsageWho::RUSAGE_CHILDREN).map_or(0, |u| u.max_rss())
}

/// Resizes a session from a client of its own.
fn resize(sock: &std::path::Path, size: Size) {
    let mut p = Peer::connect(sock).expect("connect");
    p.send(ClientType::Resize as u8, &size.encode())
        .expect("resize");
    p.status().expect("answered");
}

pub fn section(b: &Bench, _cfg: &Config, checks: &mut Checks) -> Table {
    let load = sys::Load::now();
    let dir = b.path(&b.name("logs"));
    let dir_s = dir.display().to_string();
    let mut t = Table::new(
        "`hm logs` of a full 1 MiB scrollback (start to exit, output to /dev/null)",
        &[
            "history",
            "arguments",
            "ms (median)",
            "ms (max)",
            "peak RSS KiB",
        ],
    );
    // Plain lines, one size.
    let plain = b.path("logs-plain.bin");
    std::fs::write(&plain, crate::sink::payload(MIB + MIB / 8)).expect("payload");
    let done = b.path(&b.name("done"));
    let script = format!(
        "cat '{}'; touch '{}'; exec sleep 1000000",
        plain.display(),
        done.display()
    );
    let s = b.spawn_hm_with(
        &dir,
        "plain",
        &["--scrollback-bytes", "1048576"],
        &["sh", "-c", &script],
    );
    s.wait_ready();
    peers::wait_for("the plain output", || done.exists());
    // Coloured, in eight pieces, each at a new size: piece `i` through
    // fifo `i`, which the session opens once it has written piece `i-1`.
    let fifos: Vec<std::path::PathBuf> = (0..8).map(|_| b.path(&b.name("fifo"))).collect();
    for f in &fifos {
        let made = Command::new("mkfifo")
            .arg(f)
            .status()
            .is_ok_and(|s| s.success());
        assert!(made, "e2e: mkfifo");
    }
    let done2 = b.path(&b.name("done"));
    let cats: Vec<String> = fifos
        .iter()
        .map(|f| format!("cat '{}'", f.display()))
        .collect();
    let script = format!(
        "{}; touch '{}'; exec sleep 1000000",
        cats.join("; "),
        done2.display()
    );
    let c = b.spawn_hm_with(
        &dir,
        "coloured",
        &["--scrollback-bytes", "1048576"],
        &["sh", "-c", &script],
    );
    c.wait_ready();
    let piece = coloured(MIB / 8 + 4096);
    let sizes = [
        Size {
            cols: 120,
            rows: 40,
        },
        Size { cols: 80, rows: 24 },
        Size {
            cols: 200,
            rows: 50,
        },
        Size { cols: 40, rows: 12 },
    ];
    for (i, fifo) in fifos.iter().enumerate() {
        resize(&c.sock, sizes[i % sizes.len()]);
        let mut w = std::fs::OpenOptions::new()
            .write(true)
            .open(fifo)
            .expect("open the fifo");
        w.write_all(&piece).expect("write a piece");
    }
    peers::wait_for("the coloured output", || done2.exists());
    std::thread::sleep(Duration::from_millis(200));
    let cases: [(&str, &str, Vec<&str>); 4] = [
        ("plain, 1 size", "", vec!["plain"]),
        (
            "plain, 1 size",
            "--width 80",
            vec!["plain", "--width", "80"],
        ),
        (
            "plain, 1 size",
            "--grep '99 a'",
            vec!["plain", "--grep", "99 a"],
        ),
        ("coloured, 8 sizes", "", vec!["coloured"]),
    ];
    for (history, shown, args) in cases {
        let ms: Vec<f64> = (0..REPS).map(|_| run(b, &dir_s, &args)).collect();
        let rss = children_max_rss_kib();
        let med = median(&ms);
        t.row(&[
            history.into(),
            if shown.is_empty() {
                "–".into()
            } else {
                format!("`{shown}`")
            },
            num(med),
            num(ms.iter().copied().reduce(f64::max)),
            rss.to_string(),
        ]);
        if shown.is_empty() {
            checks.add(
                &format!("hm logs of a full 1 MiB scrollback ({history})"),
                "≤ 300 ms",
                format!("{} ms", num(med)),
                med.map(|m| m <= 300.0),
            );
        }
    }
    drop((s, c));
    t.note(&format!(
        "{REPS} runs each; the sessions keep 1 MiB (`--scrollback-bytes 1048576`) and wrote \
         a little more. Peak RSS: the largest of any child so far (getrusage), so an upper \
         bound for the later rows. Foreign CPU share: {:.2}.",
        load.foreign_since()
    ));
    t
}
