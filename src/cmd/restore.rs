//! `hm restore [ID...] [--dry-run]`: starts again the sessions that were
//! running when their supervisor went away without ending them (the
//! machine restarted, the supervisor was killed), from their manifests
//! (`crate::restore`): same id, label, directory, size and classifier,
//! agents resumed as the same conversation, shells in their directory
//! (gone: where they started, else home, said in a line), commands run
//! again if they were started with `hm run --restore`. It ends with a
//! line saying how many it started, none included.
//!
//! Sessions start [`Config::restore_parallel`] at a time, each waited for
//! until it answers its first STATUS, so that two hundred of them never
//! fork at once. Two restores at once never start a session twice: each
//! start takes the session's lock, and under it checks that the manifest
//! is still the lost one this restore read (`supervisor/keeper.rs`).
//! A manifest that cannot be read is named and left as it is.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};

use crate::cli::RestoreArgs;
use crate::client;
use crate::config::Config;
use crate::launch::{supervisor_command, wait_ready};
use crate::liveness::{self, Liveness};
use crate::lost::plan::{self, Refusal, Restart};
use crate::paths::{self, SessionPaths};
use crate::protocol::conn;
use crate::restore::manifest::{self, Manifest};

/// How long a started session may take to answer its first STATUS.
const FIRST_STATUS: Duration = Duration::from_secs(30);

/// A lost session to start, and how.
#[derive(Debug)]
struct Job {
    m: Manifest,
    restart: Restart,
}

/// What the manifests say, before anything starts.
#[derive(Debug, Default)]
struct Survey {
    jobs: Vec<Job>,
    /// Lines for stderr: what is not restored, and why.
    notes: Vec<String>,
    /// Something could not be read or restored (exit 1).
    failed: bool,
    /// The socket dirs of lost sessions elsewhere.
    elsewhere: Vec<String>,
    /// Lost sessions of this dir named in `notes` as not restored.
    left: usize,
}

pub fn restore(args: RestoreArgs, config: &Config, config_path: Option<&Path>) -> Result<i32> {
    let dir = client::socket_dir(&args.dir, config);
    for id in &args.ids {
        paths::validate_id(id)?;
    }
    let state = crate::restore::sessions_dir()
        .context("no state directory to restore from: set HOME or XDG_STATE_HOME")?;
    let survey = survey(&state, &dir, &args.ids, args.dry_run);
    for note in &survey.notes {
        eprintln!("hm: {note}");
    }
    let mut out = std::io::stdout().lock();
    if !survey.elsewhere.is_empty() {
        let mut dirs = survey.elsewhere.clone();
        dirs.sort();
        dirs.dedup();
        for d in &dirs {
            let n = survey.elsewhere.iter().filter(|e| *e == d).count();
            eprintln!(
                "hm: {n} lost session{} of socket dir '{d}' not restored here: hm restore --socket-dir {}",
                if n == 1 { "" } else { "s" },
                crate::launch::shell_quote(d)
            );
        }
    }
    if survey.jobs.is_empty() {
        // Said last, as when some are restored: the lines above alone
        // left a person to work out that nothing had started.
        match survey.left {
            0 if survey.notes.is_empty() => {
                writeln!(out, "no lost sessions to restore in {}", dir.display())?;
            }
            0 => writeln!(out, "nothing to restore")?,
            n => writeln!(
                out,
                "nothing to restore: {n} lost session{} not restored (said above)",
                if n == 1 { "" } else { "s" }
            )?,
        }
        return Ok(i32::from(survey.failed));
    }
    if args.dry_run {
        for job in &survey.jobs {
            writeln!(out, "would restore {}", describe(job))?;
        }
        return Ok(i32::from(survey.failed));
    }
    drop(out);
    let parallel = config.restore_parallel.max(1);
    let started = start_all(&survey.jobs, parallel, &dir, config_path);
    let n = started.iter().filter(|ok| **ok).count();
    let mut out = std::io::stdout().lock();
    // The sessions named on stderr count too: "4 of 4" read as all of
    // them, with ten more left, and "7 of 7; 1 more" as a sum to do.
    let total = survey.jobs.len() + survey.left;
    let left = match survey.left {
        0 => String::new(),
        n => format!(" ({n} not restored: said above)"),
    };
    writeln!(
        out,
        "restored {n} of {total} lost session{}{left}",
        if total == 1 { "" } else { "s" }
    )?;
    Ok(i32::from(survey.failed || n < survey.jobs.len()))
}

/// Reads every manifest (or those of `ids`) and decides what to start;
/// `dry_run` only changes how a shell started elsewhere is said.
fn survey(state: &Path, dir: &Path, ids: &[String], dry_run: bool) -> Survey {
    let host = crate::restore::host_name();
    let mut s = Survey::default();
    let all = manifest::list(state);
    for id in ids {
        if !all.iter().any(|(i, _)| i == id) {
            s.notes.push(format!(
                "no lost session named '{}' (see 'hm ls')",
                paths::sanitize(id)
            ));
            s.failed = true;
        }
    }
    // Commands not started with `hm run --restore`, left by choice: more
    // than a few are said in one line (after a reboot, 24 such lines hid
    // the 6 that mattered).
    let mut not_rerun: Vec<String> = Vec::new();
    for (id, m) in all {
        let named = ids.contains(&id);
        if !ids.is_empty() && !named {
            continue;
        }
        let m = match m {
            Ok(m) => m,
            Err(manifest::ReadError::Missing) => continue,
            Err(e) => {
                s.notes.push(format!(
                    "cannot read the manifest of '{id}' ('{}'): {e}; it is left as it is",
                    manifest::path(state, &id).display()
                ));
                s.failed = true;
                s.left += 1;
                continue;
            }
        };
        if Path::new(&m.socket_dir) != dir {
            if named {
                s.notes.push(format!(
                    "'{id}' is a session of socket dir '{}': hm restore --socket-dir {} {id}",
                    m.socket_dir,
                    crate::launch::shell_quote(&m.socket_dir)
                ));
                s.failed = true;
            } else if m.lost() && (m.host.is_empty() || m.host == host) {
                s.elsewhere.push(m.socket_dir.clone());
            }
            continue;
        }
        if !m.host.is_empty() && m.host != host {
            if named {
                s.notes.push(format!(
                    "'{id}' ran on the machine '{}'; restore it there",
                    paths::sanitize(&m.host)
                ));
                s.failed = true;
            }
            continue;
        }
        if !m.lost() {
            if named {
                let how = match m.ended.map(|e| e.how) {
                    Some(manifest::EndHow::Killed) => "it was stopped with hm kill",
                    _ => "its program exited",
                };
                s.notes.push(format!(
                    "'{id}' is not lost: {how} ('hm restart {id}' runs it again)"
                ));
                s.failed = true;
            }
            continue;
        }
        if let Ok(p) = SessionPaths::new(dir, &id) {
            match liveness::probe(&p.pid, &p.sock, false) {
                Liveness::Running => {
                    if named {
                        s.notes
                            .push(format!("'{id}' is running; nothing to restore"));
                    }
                    continue;
                }
                Liveness::Orphaned(pid) => {
                    s.notes.push(format!(
                        "not restoring '{id}': {}",
                        client::orphaned(&id, pid)
                    ));
                    s.failed = true;
                    s.left += 1;
                    continue;
                }
                Liveness::Stale | Liveness::Missing => {}
            }
        }
        match plan::now(&m) {
            Ok(restart) => {
                if let Some(why) = restart.elsewhere() {
                    s.notes.push(format!(
                        "{} '{id}' in {} ({why})",
                        if dry_run {
                            "would restore"
                        } else {
                            "restoring"
                        },
                        paths::printable(&restart.workdir)
                    ));
                }
                let missing = crate::restore::environ::missing(&m);
                s.notes
                    .extend(crate::restore::environ::missing_note(&id, &missing));
                s.jobs.push(Job { m, restart });
            }
            Err(why) => {
                // Kept: not restored by choice. Failed: could have been.
                let chosen = why.chosen();
                s.failed |= named || !chosen;
                s.left += 1;
                if why == Refusal::NotRerun && !named {
                    not_rerun.push(id);
                    continue;
                }
                let way_out = if chosen || matches!(why, Refusal::NoDirectory(_)) {
                    format!(" {}", why.way_out(&id))
                } else {
                    String::new()
                };
                s.notes
                    .push(format!("not restoring '{id}': {why}{way_out}"));
            }
        }
    }
    if not_rerun.len() > FOLD_AFTER {
        let shown: Vec<String> = not_rerun
            .iter()
            .take(FOLD_AFTER)
            .map(|id| format!("'{id}'"))
            .collect();
        s.notes.push(format!(
            "not restoring {} sessions whose commands run again only if started with 'hm run \
             --restore' ({}, ...): 'hm restart ID' runs one as it was, 'hm clean' forgets them",
            not_rerun.len(),
            shown.join(", ")
        ));
    } else {
        for id in not_rerun {
            let why = Refusal::NotRerun;
            s.notes
                .push(format!("not restoring '{id}': {why} {}", why.way_out(&id)));
        }
    }
    s
}

/// How many sessions left for want of `hm run --restore` are named one
/// line each; more are said in one.
const FOLD_AFTER: usize = 3;

/// `'api' [label]: npm run dev (in /srv/app, 120x40; run again)`.
fn describe(job: &Job) -> String {
    let m = &job.m;
    let label = m
        .label
        .as_deref()
        .map(|l| format!(" [{}]", paths::sanitize(l)))
        .unwrap_or_default();
    // Its environment is the one it started in, but for what is said.
    // Only the secrets this shell has come from here: the others, said
    // on stderr, it starts without (the line said `ANTHROPIC_API_KEY from
    // here` beside the word that it was not set here).
    let missing = crate::restore::environ::missing(m);
    let here: Vec<&str> = m
        .secret_env
        .iter()
        .filter(|s| !missing.contains(s))
        .map(String::as_str)
        .collect();
    let env = match &m.environ {
        None => "; in this shell's environment".to_owned(),
        Some(_) if here.is_empty() => String::new(),
        Some(_) => format!("; {} from here", here.join(", ")),
    };
    format!(
        "'{}'{label}: {} (in {}, {}x{}; {}{env})",
        m.id,
        // Whole, as `hm status` shows a command: a resumed conversation's
        // id was cut at 80 characters, piped or not.
        paths::command_for_people(&job.restart.argv),
        paths::printable(&job.restart.workdir),
        m.cols,
        m.rows,
        job.restart.kind.describe()
    )
}

/// Starts the jobs, `parallel` at a time, each waited for until it answers
/// its first STATUS; prints a line for each as it is done. Whether each
/// started, in order.
fn start_all(jobs: &[Job], parallel: usize, dir: &Path, config: Option<&Path>) -> Vec<bool> {
    let next = AtomicUsize::new(0);
    let done = Mutex::new(vec![false; jobs.len()]);
    std::thread::scope(|scope| {
        for _ in 0..parallel.min(jobs.len()) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let result = start(job, dir, config);
                    let line = match &result {
                        Ok(true) => format!("restored {}\n", describe(job)),
                        Ok(false) => format!(
                            "'{}' was restored meanwhile by another hm restore\n",
                            job.m.id
                        ),
                        Err(e) => format!(
                            "hm: cannot restore '{}': {}\n",
                            job.m.id,
                            crate::error::describe(e)
                        ),
                    };
                    if result.is_ok() {
                        let _ = std::io::stdout().lock().write_all(line.as_bytes());
                    } else {
                        let _ = std::io::stderr().lock().write_all(line.as_bytes());
                    }
                    if let Ok(mut d) = done.lock() {
                        d[i] = result.is_ok();
                    }
                }
            });
        }
    });
    done.into_inner().unwrap_or_default()
}

/// Starts one session (its supervisor, in a session of its own, as
/// `hm run --bg` does) and waits for its first STATUS. False if another
/// restore took it first (its lock, or its manifest, said so).
fn start(job: &Job, dir: &Path, config: Option<&Path>) -> Result<bool> {
    let m = &job.m;
    let mut cmd = supervisor_command(&m.id, dir, config, false)?;
    cmd.arg("--workdir").arg(&job.restart.workdir);
    cmd.args(["--cols", &m.cols.to_string(), "--rows", &m.rows.to_string()]);
    if let Some(label) = &m.label {
        cmd.arg("--label").arg(label);
    }
    cmd.args(["--classifier", &m.classifier.name]);
    if m.rerun {
        cmd.arg("--restore");
    }
    cmd.arg("--restoring").arg(&m.instance);
    cmd.arg("--").args(&job.restart.argv);
    // In the environment it started in; the secrets missing here were
    // said by the survey.
    crate::restore::environ::apply(&mut cmd, m);
    // The supervisor runs on when we exit; until then it is our child.
    match wait_ready(cmd) {
        Ok(child) => drop(child),
        Err(_) if taken_meanwhile(dir, m) => return Ok(false),
        Err(e) => return Err(e),
    }
    let sock: PathBuf = dir.join(format!("{}.sock", m.id));
    let rt = client::runtime()?;
    rt.block_on(async { tokio::time::timeout(FIRST_STATUS, conn::status_at(&sock)).await })
        .map_err(|_| {
            anyhow::anyhow!(
                "it started but did not answer within {} s (see 'hm status {}')",
                FIRST_STATUS.as_secs(),
                m.id
            )
        })?
        .context("it started but its first answer failed")?;
    Ok(true)
}

/// Whether a start that failed lost to another restore: the session runs,
/// or its manifest is no longer the lost one this restore read.
fn taken_meanwhile(dir: &Path, m: &Manifest) -> bool {
    let state = crate::restore::sessions_dir();
    crate::liveness::held(dir, &m.id)
        || state
            .is_some_and(|s| manifest::read(&s, &m.id).is_ok_and(|now| now.instance != m.instance))
}
