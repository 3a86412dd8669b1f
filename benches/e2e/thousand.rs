//! A thousand idle sessions on one machine (issue 15): what `hm ls` and
//! the dashboard cost and whether they stay usable, what each supervisor
//! costs, and what still works under the common soft limit of 1024 open
//! files (`ulimit -n 1024`, the hard limit left as it is).
//!
//! The sessions are `hm run --detach` supervisors of `sleep`, started one
//! after another by the `memory` section's method
//! ([`footprint::hm_kept`]), so memory is read the same way; then, if
//! asked, as many again under `--classifier agent` with a full 120×40
//! screen. Every one is a child of the harness, killed by pid when its
//! guard drops; a session the dashboard starts (its `n`) is killed by the
//! pids in its pid file.

mod dashboard;

use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use crate::Config;
use crate::footprint::{self, Row};
use crate::peers::Bench;
use crate::report::{Checks, Table, median, num};
use crate::scale::{Over, mem_cell};
use crate::sys;

pub use dashboard::{Dash, Limited};

/// The small count whose total PSS is taken from the total at N, for the
/// marginal cost of one more supervisor.
const SMALL: usize = 10;
/// Runs of each `hm ls` timed.
const LS_REPS: usize = 7;
/// The soft limit on open files that the limited runs are given.
pub const NOFILE: u64 = 1024;

/// `prlimit` arguments that set the soft limit on open files to
/// [`NOFILE`] and leave the hard limit as it is, then exec the rest.
pub fn limited() -> [String; 2] {
    ["prlimit".into(), format!("--nofile={NOFILE}:")]
}

/// What one listing under the soft limit did.
#[derive(Debug, Default)]
pub struct LimitedLs {
    pub ok: bool,
    /// Rows of `hm ls --json`, and how many of them say `no answer`.
    pub rows: usize,
    pub no_answer: usize,
    /// Rows of the table `hm ls` prints (its header left out).
    pub table_rows: usize,
    pub ms: Vec<f64>,
    /// The first line it wrote to stderr, if any.
    pub stderr: String,
}

#[derive(Debug, Default)]
pub struct Report {
    pub sessions: usize,
    pub simple: Row,
    pub agent: Option<Row>,
    pub ls_ms: Vec<f64>,
    pub ls_json_ms: Vec<f64>,
    pub ls_limited: LimitedLs,
    pub dash: Dash,
    pub limited: Limited,
}

fn time_ms(mut f: impl FnMut()) -> Vec<f64> {
    (0..LS_REPS)
        .map(|_| {
            let t0 = Instant::now();
            f();
            t0.elapsed().as_secs_f64() * 1e3
        })
        .collect()
}

/// `hm ls` (and `--json`) over `dir`: timed, then once more each under
/// the soft limit, counted.
fn listings(b: &Bench, dir: &Path, r: &mut Report) {
    let ls = |wrapper: &[&str], json: bool| {
        let mut c = b.hm_via(wrapper);
        c.arg("ls").arg("--socket-dir").arg(dir);
        if json {
            c.arg("--json");
        }
        c
    };
    r.ls_ms = time_ms(|| {
        let _ = ls(&[], false).status();
    });
    r.ls_json_ms = time_ms(|| {
        let _ = ls(&[], true).status();
    });
    let lim = limited();
    let lim: Vec<&str> = lim.iter().map(String::as_str).collect();
    let l = &mut r.ls_limited;
    l.ms = time_ms(|| {
        let _ = ls(&lim, false).status();
    });
    let out = |mut c: std::process::Command| {
        c.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .ok()
    };
    if let Some(o) = out(ls(&lim, true)) {
        l.ok = o.status.success();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
        let rows = v.as_array().cloned().unwrap_or_default();
        l.rows = rows.len();
        l.no_answer = rows.iter().filter(|r| r.get("error").is_some()).count();
        l.stderr = String::from_utf8_lossy(&o.stderr)
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
    }
    if let Some(o) = out(ls(&lim, false)) {
        l.ok &= o.status.success();
        l.table_rows = String::from_utf8_lossy(&o.stdout)
            .lines()
            .count()
            .saturating_sub(1);
    }
}

pub fn measure(b: &Bench, cfg: &Config) -> Report {
    let n = cfg.thousand_sessions;
    let mut r = Report {
        sessions: n,
        ..Report::default()
    };
    // See `sections::memory`: a binary just built counts as private.
    nix::unistd::sync();
    let counts = [SMALL.min(n - 1), n];
    let (simple, sessions) = footprint::hm_kept(
        b,
        "hm, simple, sleep",
        &["--classifier", "simple"],
        &["sleep", "1000000"],
        &counts,
        0,
    );
    r.simple = simple;
    eprintln!("e2e: thousand: {n} sessions up");
    let dir = sessions[0].dir.clone();
    listings(b, &dir, &mut r);
    eprintln!("e2e: thousand: listings timed");
    let last = sessions[n - 1].id.clone();
    r.dash = dashboard::measure(b, &dir, &sessions[0].id, &last, cfg.idle);
    eprintln!("e2e: thousand: dashboard measured");
    r.limited = dashboard::limited(b, &dir, &sessions[0].id, &last);
    eprintln!("e2e: thousand: limited dashboard measured");
    drop(sessions);
    if cfg.thousand_agent {
        let (agent, sessions) = footprint::hm_kept(
            b,
            "hm, agent, full screen",
            &["--classifier", "agent"],
            &["sh", "-c", footprint::FULL_SCREEN],
            &counts,
            0,
        );
        r.agent = Some(agent);
        drop(sessions);
        eprintln!("e2e: thousand: agent sessions measured");
    }
    r
}

fn pss_cells(row: &Row) -> (String, String) {
    let per = row
        .pss
        .last()
        .map(|&(n, p)| p as f64 / n as f64)
        .filter(|_| !row.pss.is_empty());
    let totals = row
        .pss
        .iter()
        .map(|(n, p)| format!("{:.1} MiB @ {n}", *p as f64 / 1024.0))
        .collect::<Vec<_>>()
        .join(", ");
    (
        format!("{} / {} KiB", num(per), num(row.marginal_kib())),
        totals,
    )
}

fn rate(u: Option<Over>) -> Option<(f64, f64)> {
    u.map(|(u, secs)| (u.ctxsw as f64 / secs, u.cpu_ns as f64 / 1e6 / secs))
}

/// The section of the run: measure, tabulate, check.
pub fn section(b: &Bench, cfg: &Config, checks: &mut Checks) -> Table {
    let n = cfg.thousand_sessions;
    let mut t = Table::new(
        &format!("{n} idle sessions on one machine (`hm ls`; `hm tui` in a 200x60 pty)"),
        &["measure", "value"],
    );
    if !crate::tui::available(b) {
        t.note("skipped: hm tui not built");
        return t;
    }
    let load = sys::Load::now();
    let r = measure(b, cfg);
    let ms = |v: &[f64]| num(median(v));
    let max = |v: &[f64]| v.iter().copied().reduce(f64::max);
    t.row(&[
        format!("`hm run --detach` to first STATUS, up to {n} (ms median / max)"),
        format!(
            "{} / {}",
            ms(&r.simple.startup_ms),
            num(max(&r.simple.startup_ms))
        ),
    ]);
    t.row(&[
        format!("`hm ls`, {n} sessions (ms, median of {LS_REPS}; max)"),
        format!("{} ({})", ms(&r.ls_ms), num(max(&r.ls_ms))),
    ]);
    t.row(&[
        format!("`hm ls --json`, {n} sessions (ms, median of {LS_REPS}; max)"),
        format!("{} ({})", ms(&r.ls_json_ms), num(max(&r.ls_json_ms))),
    ]);
    let l = &r.ls_limited;
    t.row(&[
        format!("`hm ls` under `ulimit -Sn {NOFILE}`: ms; exit; rows (table / json); json rows saying `no answer`"),
        format!(
            "{}; {}; {} / {}; {}{}",
            ms(&l.ms),
            if l.ok { "0" } else { "failed" },
            l.table_rows,
            l.rows,
            l.no_answer,
            if l.stderr.is_empty() {
                String::new()
            } else {
                format!("; stderr: `{}`", l.stderr)
            }
        ),
    ]);
    let (simple_pss, simple_totals) = pss_cells(&r.simple);
    t.row(&[
        format!("PSS per supervisor, `simple`, `sleep`: total ÷ {n} / marginal ({SMALL} → {n})"),
        format!("{simple_pss} ({simple_totals})"),
    ]);
    if let Some(a) = &r.agent {
        let (pss, totals) = pss_cells(a);
        t.row(&[
            "the same, `agent`, full 120×40 screen and a question".into(),
            format!("{pss} ({totals})"),
        ]);
    }
    dashboard_rows(&mut t, &r);
    let ls = median(&r.ls_ms);
    checks.add(
        &format!("thousand: `hm ls` at {n} sessions"),
        "≤ 100 ms",
        format!("{} ms (`--json` {} ms)", num(ls), ms(&r.ls_json_ms)),
        ls.map(|v| v <= 100.0),
    );
    let marginal = r.simple.marginal_kib();
    checks.add(
        &format!("thousand: marginal PSS per supervisor ({SMALL} → {n})"),
        "≤ 350 KiB",
        format!("{} KiB", num(marginal)),
        marginal.map(|m| m <= 350.0),
    );
    let d = &r.dash;
    let rss = d.mem.map(|m| m.rss as f64 / 1024.0);
    checks.add(
        &format!("thousand: dashboard RSS, {n} quiet sessions"),
        "≤ 100 MiB",
        format!("{} MiB", num(rss)),
        rss.map(|m| m <= 100.0),
    );
    let worst = d
        .filter_ms
        .iter()
        .chain(&d.page_ms)
        .copied()
        .reduce(f64::max);
    checks.add(
        &format!("thousand: dashboard usable at {n}: filter to one pane, page change (slowest)"),
        "≤ 100 ms",
        format!(
            "{} ms ({} filters, {} page changes, {} lost)",
            num(worst),
            d.filter_ms.len(),
            d.page_ms.len(),
            d.lost
        ),
        worst.map(|w| w <= 100.0 && d.lost == 0),
    );
    let lim = &r.limited;
    let ls_ok = l.ok && l.rows == n && l.no_answer == 0;
    checks.add(
        &format!("thousand: nothing breaks at `ulimit -Sn {NOFILE}`, {n} sessions"),
        "`hm ls` lists all; dashboard shows all; `n` starts one",
        format!(
            "ls: {} of {n} answered; dashboard: {} of {n} panes without a problem; `n`: {}",
            l.rows - l.no_answer.min(l.rows),
            lim.panes_fine.map_or("?".into(), |p| p.to_string()),
            lim.new_session.as_deref().unwrap_or("no notice seen"),
        ),
        Some(ls_ok && lim.panes_fine == Some(n) && lim.started),
    );
    t.note(&format!(
        "Sessions `m000`.. of 120x40, each `sleep`; started one after another, each waited for. PSS from smaps_rollup, summed over the supervisors. Limited runs are started by `prlimit --nofile={NOFILE}:` (the soft limit; the hard one stays {}). Foreign CPU share: {:.2}.",
        hard_nofile().map_or("?".into(), |h| h.to_string()),
        load.foreign_since()
    ));
    t
}

fn dashboard_rows(t: &mut Table, r: &Report) {
    let n = r.sessions;
    let d = &r.dash;
    let max = |v: &[f64]| v.iter().copied().reduce(f64::max);
    t.row(&[
        format!("dashboard first paint, {n} sessions (ms, median of 3)"),
        num(median(&d.first_paint_ms)),
    ]);
    t.row(&[
        format!(
            "dashboard settled ({} s): RSS / PSS; open fds; threads",
            dashboard::SETTLE.as_secs()
        ),
        format!(
            "{}; {}; {}",
            mem_cell(d.mem),
            d.fds.map_or("?".into(), |f| f.to_string()),
            d.threads.map_or("?".into(), |f| f.to_string())
        ),
    ]);
    let idle = rate(d.idle);
    t.row(&[
        format!("all {n} idle: dashboard wake-ups/s, CPU ms/s"),
        format!("{} / {}", num(idle.map(|x| x.0)), num(idle.map(|x| x.1))),
    ]);
    t.row(&[
        format!("`/` and an id typed at once, until the grid shows that one pane (ms median / max of {})", d.filter_ms.len()),
        format!("{} / {}", num(median(&d.filter_ms)), num(max(&d.filter_ms))),
    ]);
    t.row(&[
        format!(
            "`PgDn` / `PgUp` until the footer shows the new page (ms median / max of {}); pages",
            d.page_ms.len()
        ),
        format!(
            "{} / {}; {}",
            num(median(&d.page_ms)),
            num(max(&d.page_ms)),
            d.pages
        ),
    ]);
    let l = &r.limited;
    t.row(&[
        format!("dashboard under `ulimit -Sn {NOFILE}`: first paint ms; pages; open fds"),
        format!(
            "{}; {}; {}",
            num(l.first_paint_ms),
            l.pages,
            l.fds.map_or("?".into(), |f| f.to_string())
        ),
    ]);
    t.row(&[
        format!("… panes without a problem (of {n}, over every page); problems seen"),
        format!(
            "{}; {}",
            l.panes_fine.map_or("?".into(), |p| p.to_string()),
            if l.problems.is_empty() {
                "none".into()
            } else {
                l.problems
                    .iter()
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ),
    ]);
    t.row(&[
        "… its footer once settled".into(),
        format!("`{}`", l.footer),
    ]);
    t.row(&[
        "… `n`, `s1`, Enter, `sleep 1000000`, Enter: the notice".into(),
        format!(
            "`{}`{}",
            l.new_session.as_deref().unwrap_or("none seen"),
            if l.started {
                ", and the session runs"
            } else {
                ""
            }
        ),
    ]);
    if let Some(m) = l.mem {
        t.row(&["… its RSS / PSS".into(), mem_cell(Some(m))]);
    }
}

/// This process's hard limit on open files, which the limited runs keep.
fn hard_nofile() -> Option<u64> {
    use nix::sys::resource::{Resource, getrlimit};
    getrlimit(Resource::RLIMIT_NOFILE).ok().map(|(_, h)| h)
}
