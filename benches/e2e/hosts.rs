//! Several machines in one grid (issue 15): three hosts of quiet sessions
//! over ssh, shown by one dashboard; and one session reached through the
//! bridge (`hm attach HOST:ID`, ssh, `hm proxy`) beside the same kind of
//! session attached locally: keystroke echo and throughput, measured side
//! by side in one run.
//!
//! The hosts are names in the ssh client config of one private sshd on
//! 127.0.0.1 (`sshd.rs`), each with its own remote socket dir: three
//! mounts, three ssh connections, three `hm proxy`. The sessions there are
//! started by the harness directly in those dirs, as `hm run` on each
//! machine would. Everything started is killed by pid: the sessions by
//! their guards, the sshd and what it forked by its own.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::Config;
use crate::echo::{self, Target};
use crate::peers::{self, Bench, HmSession};
use crate::report::{Checks, Table, median, num, percentile};
use crate::scale::{self, says_down};
use crate::screen::{self, Screen};
use crate::sshd::Sshd;
use crate::sys::{self, Mem};
use crate::throughput::{self, Kind, Run, Via};
use crate::{peers::PtyProc, sink};

/// The hosts' names in the ssh client config and in `[[hosts]]`.
const HOSTS: [&str; 3] = ["h1", "h2", "h3"];
/// The local session's id.
const LOCAL: &str = "a0";
/// Dashboards started for the first paint; the median is reported.
const PAINTS: usize = 3;
/// How long a dashboard may take to show every remote pane.
const PAINT_LIMIT: Duration = Duration::from_secs(30);

#[derive(Debug, Default)]
pub struct Report {
    /// Until every remote pane is in the grid, the first page drawn and no
    /// pane waiting for its host.
    pub paint_ms: Vec<f64>,
    /// Until the third host's panes are on screen, after turning to the
    /// last page once the first was complete (the page turns included).
    pub last_page_ms: Vec<f64>,
    pub mem: Option<Mem>,
    /// Echo times (µs) and keys lost: through the local attach, and
    /// through the bridge.
    pub echo_local: (Vec<f64>, usize),
    pub echo_ssh: (Vec<f64>, usize),
    pub local: Vec<Run>,
    pub ssh: Vec<Run>,
}

/// Everything a dashboard or an attach needs to reach the hosts.
struct Reach {
    config: PathBuf,
    env: Vec<(String, String)>,
}

impl Reach {
    fn env(&self) -> Vec<(&str, &str)> {
        self.env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    }
}

/// Whether the dashboard's grid holds `total` panes, the first page
/// shown: the footer's page count is what `total` panes make at the
/// number that page shows. Layout-free: a grid with a host missing has
/// fewer pages or bigger panes.
fn whole(v: &vt100::Screen, total: usize) -> bool {
    let per_page = screen::panes(v);
    let (page, pages) =
        screen::page_of(v.contents().lines().last().unwrap_or("")).unwrap_or((1, 1));
    page == 1 && per_page > 0 && pages == total.div_ceil(per_page)
}

/// One dashboard: the time until every remote pane is there, then until
/// the last page shows the third host's.
fn paint_once(b: &Bench, local: &Path, reach: &Reach, total: usize) -> (Option<f64>, Option<f64>) {
    let hm = b.hm.display().to_string();
    let (config, dir) = (
        reach.config.display().to_string(),
        local.display().to_string(),
    );
    let t0 = Instant::now();
    let mut s = Screen::start(
        b,
        &[&hm, "--config", &config, "tui", "--socket-dir", &dir],
        scale::SIZE,
        &reach.env(),
    );
    let first = format!("{}:r00", HOSTS[0]);
    let painted = s.until_cells(PAINT_LIMIT, |v| {
        let c = v.contents();
        whole(v, total) && c.contains(&first) && !says_down(&c)
    });
    let paint = painted.map(|_| t0.elapsed().as_secs_f64() * 1e3);
    if paint.is_none() {
        let c = s.contents();
        let down: Vec<&str> = c.lines().filter(|l| says_down(l)).take(3).collect();
        eprintln!(
            "e2e: hosts: the grid never held all {total} panes: {} panes on the page; footer: {}; lines saying down: {down:?}",
            screen::panes(s.vt.screen()),
            s.footer()
        );
    }
    let mut last = None;
    if paint.is_some() {
        let t1 = Instant::now();
        let third = format!("{}:r", HOSTS[2]);
        for _ in 1..s.page().1 {
            s.send(b"\x1b[6~");
            s.drain(Duration::from_millis(20));
        }
        last = s
            .until(PAINT_LIMIT, |c| c.contains(&third) && !says_down(c))
            .map(|_| t1.elapsed().as_secs_f64() * 1e3);
    }
    // Quit with a key, so that each link takes its mount down.
    s.send(b"q");
    s.drain(Duration::from_millis(300));
    (paint, last)
}

/// The settled dashboard's memory.
fn settled_mem(b: &Bench, local: &Path, reach: &Reach) -> Option<Mem> {
    let hm = b.hm.display().to_string();
    let (config, dir) = (
        reach.config.display().to_string(),
        local.display().to_string(),
    );
    let mut s = Screen::start(
        b,
        &[&hm, "--config", &config, "tui", "--socket-dir", &dir],
        scale::SIZE,
        &reach.env(),
    );
    s.drain(Duration::from_secs(5));
    let m = Mem::of(s.proc.pid);
    s.send(b"q");
    s.drain(Duration::from_millis(300));
    m
}

/// `cat` on a raw tty in a session here and one on the first host, each
/// behind an `hm attach` of its own; echo times taken in interleaved
/// rounds. Each target's samples and lost keys, local first.
type Echoes = [(Vec<f64>, usize); 2];

fn echo(b: &Bench, sshd: &Sshd, reach: &Reach, cfg: &Config) -> Echoes {
    let argv = ["sh", "-c", peers::ECHO_SCRIPT];
    let local = b.hm_session(&argv);
    let remote_dir = sshd.remote_dir_of(HOSTS[0]).expect("a host");
    let remote = b.spawn_hm(&remote_dir, &b.name("echo"), &argv);
    remote.wait_ready();
    let a = local.attach_argv(&b.hm);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let la = b.pty(&a);
    let via = via(sshd, reach);
    let r = via.attach_argv(&b.hm, &remote.id);
    let r: Vec<&str> = r.iter().map(String::as_str).collect();
    let size = heimdall::protocol::Size {
        cols: peers::COLS,
        rows: peers::ROWS,
    };
    let ra: PtyProc = b.pty_with(&r, size, &reach.env());
    la.settle(Duration::from_millis(300), Duration::from_secs(3));
    // Quiet while ssh connects and the host is mounted, then drawn.
    ra.settle(Duration::from_secs(2), Duration::from_secs(20));
    ra.settle(Duration::from_millis(300), Duration::from_secs(3));
    let mut targets = vec![
        Target::attach("hm-attach", la, Some(local.pid())),
        Target::attach("hm-attach-ssh", ra, Some(remote.pid())),
    ];
    echo::measure(&mut targets, cfg.samples, cfg.gap);
    let out = [0, 1].map(|i| (targets[i].samples.clone(), targets[i].lost));
    // The attaches go first, then the sessions.
    drop(targets);
    drop(remote);
    drop(local);
    out
}

fn via(sshd: &Sshd, reach: &Reach) -> Via {
    Via {
        dir: sshd.remote_dir_of(HOSTS[0]).expect("a host"),
        host: HOSTS[0].into(),
        config: reach.config.clone(),
        env: reach.env.clone(),
    }
}

/// One stream through `hm attach ID` and through `hm attach HOST:ID`,
/// alternating which goes first.
fn throughput(b: &Bench, sshd: &Sshd, reach: &Reach, cfg: &Config) -> (Vec<Run>, Vec<Run>) {
    let mut want = sink::payload(cfg.mib << 20);
    let payload = b.path("hosts-payload.bin");
    std::fs::write(&payload, &want).expect("write the payload");
    want.extend_from_slice(sink::MARKER);
    let want = Arc::new(want);
    let via = via(sshd, reach);
    let (mut local, mut ssh) = (Vec::new(), Vec::new());
    for rep in 0..cfg.reps {
        let order = if rep % 2 == 0 {
            [Kind::HmAttach, Kind::HmAttachSsh]
        } else {
            [Kind::HmAttachSsh, Kind::HmAttach]
        };
        for kind in order {
            let r = throughput::run_once_via(b, kind, 1, &want, &payload, Some(&via));
            eprintln!(
                "e2e: hosts: {} rep {}: {:.1} MiB/s",
                kind.name(),
                rep + 1,
                r.goodput()
            );
            match kind {
                Kind::HmAttachSsh => ssh.push(r),
                _ => local.push(r),
            }
        }
    }
    (local, ssh)
}

pub fn measure(b: &Bench, cfg: &Config) -> Result<Report, String> {
    let per_host = cfg.hosts_sessions;
    let sshd = Sshd::start_hosts(b, &HOSTS)?;
    let mut remote: Vec<HmSession> = Vec::new();
    for host in HOSTS {
        let dir = sshd.remote_dir_of(host).ok_or("no such host")?;
        let plan = (0..per_host)
            .map(|i| {
                (
                    format!("r{i:02}"),
                    vec!["sleep".to_string(), "1000000".to_string()],
                )
            })
            .collect();
        remote.extend(scale::start_all(b, &dir, plan));
    }
    // One local session beside them. It is there from the start, so it
    // is selected, and the page shown is the one holding it: its id sorts
    // first (before `h1:`), so that page is the first.
    let local_dir = b.path(&b.name("hosts-local"));
    let local = scale::start_all(
        b,
        &local_dir,
        vec![(LOCAL.into(), vec!["sleep".into(), "1000000".into()])],
    );
    let config = b.path(&format!("{}.toml", b.name("hosts")));
    let hm = b.hm.display().to_string();
    let entries: String = HOSTS
        .iter()
        .map(|h| format!("[[hosts]]\nname = \"{h}\"\nhm = \"{hm}\"\n\n"))
        .collect();
    std::fs::write(&config, entries).map_err(|e| e.to_string())?;
    let reach = Reach {
        config,
        // The mounts' private directories go in the sandbox, removed with
        // it even if a dashboard is killed.
        env: vec![
            ("HM_SSH_COMMAND".into(), sshd.ssh_command()),
            ("TMPDIR".into(), b.root.display().to_string()),
        ],
    };
    eprintln!(
        "e2e: hosts: {} sessions on {} hosts up",
        remote.len(),
        HOSTS.len()
    );
    let mut r = Report::default();
    let total = per_host * HOSTS.len() + local.len();
    for _ in 0..PAINTS {
        let (paint, last) = paint_once(b, &local_dir, &reach, total);
        r.paint_ms.extend(paint);
        r.last_page_ms.extend(last);
    }
    r.mem = settled_mem(b, &local_dir, &reach);
    eprintln!("e2e: hosts: first paints measured");
    drop(remote);
    drop(local);
    [r.echo_local, r.echo_ssh] = echo(b, &sshd, &reach, cfg);
    eprintln!("e2e: hosts: echo measured");
    (r.local, r.ssh) = throughput(b, &sshd, &reach, cfg);
    drop(sshd);
    Ok(r)
}

/// The section of the run: measure, tabulate, check.
pub fn section(b: &Bench, cfg: &Config, checks: &mut Checks) -> Table {
    let n = cfg.hosts_sessions;
    let mut t = Table::new(
        &format!(
            "{} hosts × {n} sessions over ssh (loopback), and one session through the bridge",
            HOSTS.len()
        ),
        &["measure", "value"],
    );
    let load = sys::Load::now();
    let r = match measure(b, cfg) {
        Ok(r) => r,
        Err(why) => {
            t.note(&format!("skipped: {why}"));
            checks.add(
                "hosts: first paint of every remote pane",
                "≤ 2 s",
                "skipped".into(),
                None,
            );
            return t;
        }
    };
    let all = n * HOSTS.len();
    let paint = median(&r.paint_ms);
    t.row(&[
        format!("first paint: every one of the {all} remote panes in the grid, the first page drawn (ms, median of {PAINTS}; each)"),
        format!("{} ({})", num(paint), list(&r.paint_ms)),
    ]);
    t.row(&[
        "then `PgDn` to the last page, until the third host's panes show (ms, each)".into(),
        list(&r.last_page_ms),
    ]);
    t.row(&[
        "dashboard RSS / PSS after 5 s".into(),
        scale::mem_cell(r.mem),
    ]);
    let p = |e: &(Vec<f64>, usize), q: f64| percentile(&e.0, q);
    let (local, ssh) = (&r.echo_local, &r.echo_ssh);
    for (name, e) in [
        ("`hm attach ID` (local)", local),
        ("`hm attach h1:ID` (ssh)", ssh),
    ] {
        t.row(&[
            format!("echo through {name}: µs p50 / p99 (lost)"),
            format!("{} / {} ({})", num(p(e, 50.0)), num(p(e, 99.0)), e.1),
        ]);
    }
    let add50 = p(ssh, 50.0).zip(p(local, 50.0)).map(|(a, b)| (a - b) / 1e3);
    let add99 = p(ssh, 99.0).zip(p(local, 99.0)).map(|(a, b)| (a - b) / 1e3);
    t.row(&[
        "echo: what the bridge adds, ms p50 / p99".into(),
        format!("{} / {}", num(add50), num(add99)),
    ]);
    let good = |v: &[Run]| median(&v.iter().map(Run::goodput).collect::<Vec<_>>());
    let exact = |v: &[Run]| v.iter().all(|r| r.exact);
    let (gl, gs) = (good(&r.local), good(&r.ssh));
    let ratio = gs.zip(gl).map(|(s, l)| s / l);
    t.row(&[
        format!(
            "throughput, {} MiB to one attach: local / ssh MiB/s (median of {}); ssh ÷ local",
            cfg.mib, cfg.reps
        ),
        format!("{} / {}; {}", num(gl), num(gs), num(ratio)),
    ]);
    t.row(&[
        "… byte-exact: local / ssh".into(),
        format!("{} / {}", exact(&r.local), exact(&r.ssh)),
    ]);
    checks.add(
        &format!(
            "hosts: first paint of all {all} remote panes ({} hosts)",
            HOSTS.len()
        ),
        "≤ 2 s",
        format!("{} ms", num(paint)),
        paint.map(|p| p <= 2000.0 && r.paint_ms.len() == PAINTS),
    );
    checks.add(
        "hosts: echo, what the bridge adds at p50",
        "≤ 5 ms",
        format!("{} ms (p99 {} ms)", num(add50), num(add99)),
        add50.map(|a| a <= 5.0 && ssh.1 == 0),
    );
    checks.add(
        "hosts: throughput through the bridge",
        "≥ 0.5 × local",
        format!("{} ×", num(ratio)),
        ratio.map(|x| x >= 0.5 && exact(&r.ssh)),
    );
    t.note(&format!(
        "Hosts `h1`..`h3` are one private sshd on 127.0.0.1 under three names, each with its own socket dir; {n} sessions `r00`.. of `sleep` on each, one local session (`a0`, first in the grid) beside them. Echo: `cat` on a raw tty, {} keystrokes per target, {} µs apart, interleaved. Foreign CPU share: {:.2}.",
        cfg.samples,
        cfg.gap.as_micros(),
        load.foreign_since()
    ));
    t
}

fn list(v: &[f64]) -> String {
    if v.is_empty() {
        return "–".into();
    }
    v.iter()
        .map(|x| num(Some(*x)))
        .collect::<Vec<_>>()
        .join(", ")
}
