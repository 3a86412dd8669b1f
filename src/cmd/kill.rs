//! `hm kill ID`: SIGTERM (and SIGCONT) to the session's process group,
//! SIGKILL after the grace period, and wait until the session is gone. A
//! program that outlived its supervisor is stopped the same way, from here.

use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::cli::KillArgs;
use crate::client::{self, find_session};
use crate::config::Config;
use crate::liveness::{self, Liveness};
use crate::paths::SessionPaths;
use crate::protocol::{Kill, Reply, Request, conn};

const MAX_GRACE_S: f64 = crate::config::MAX_KILL_GRACE_MS as f64 / 1000.0;

pub fn kill(args: KillArgs, config: &Config) -> Result<i32> {
    let grace_ms = match args.grace {
        // The same bound as `kill_grace_ms` in the config.
        Some(s) if !(0.0..=MAX_GRACE_S).contains(&s) || s.is_nan() => {
            super::usage!("invalid --grace '{s}': give seconds between 0 and {MAX_GRACE_S}")
        }
        Some(s) => (s * 1000.0).round() as u32,
        // The session's own configured grace period.
        None => u32::MAX,
    };
    let dir = client::socket_dir(&args.dir, config);
    let ids = if args.all {
        // A program that outlived its supervisor runs too.
        let (mut running, orphans) = crate::liveness::scan(&dir);
        running.extend(orphans);
        if running.is_empty() {
            match &args.host {
                Some(host) => println!("no running sessions on {}", crate::paths::sanitize(host)),
                None => println!("no running sessions"),
            }
            return Ok(0);
        }
        running.sort_by(|a, b| crate::paths::natural_cmp(a, b));
        running
    } else {
        args.ids
    };
    if let [one] = ids.as_slice() {
        println!("{}", kill_one(&dir, one, grace_ms, config.kill_grace_ms)?);
        return Ok(0);
    }
    // Several: stopped at once (each may take its grace period), each
    // told on its own line, an error about one not stopping the others.
    let results: Vec<Result<String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = ids
            .iter()
            .map(|id| scope.spawn(|| kill_one(&dir, id, grace_ms, config.kill_grace_ms)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("the kill failed")))
            })
            .collect()
    });
    let mut failed = false;
    for r in results {
        match r {
            Ok(line) => println!("{line}"),
            Err(e) => {
                failed = true;
                eprintln!("hm: {}", crate::error::describe(&e));
            }
        }
    }
    Ok(i32::from(failed))
}

/// Stops one session and waits until it is gone: what to tell the user.
fn kill_one(
    dir: &std::path::Path,
    id: &str,
    grace_ms: u32,
    configured_grace: u64,
) -> Result<String> {
    if let Some((paths, pid)) = orphaned(dir, id) {
        // Its supervisor's own grace period went with it: the
        // configuration's.
        let grace = match grace_ms {
            u32::MAX => configured_grace,
            g => u64::from(g),
        };
        return kill_orphan(dir, &paths, pid, Duration::from_millis(grace));
    }
    let session = find_session(dir, id)?;
    // Long enough for the grace period, SIGKILL and delivery of the last
    // output; a supervisor that is itself stuck is reported, not waited on
    // forever.
    // The session may have been started with a grace period we do not
    // know; wait as long as the longest one config allows.
    let grace = match grace_ms {
        u32::MAX => crate::config::MAX_KILL_GRACE_MS,
        g => u64::from(g),
    };
    let patience = Duration::from_millis(grace) + Duration::from_secs(10);
    let code = client::runtime()?.block_on(async {
        // A supervisor that cannot answer STATUS now would not act on KILL
        // either: say so at once rather than after the longest grace.
        let (mut r, mut w) = client::answered(&session.id, async {
            let (mut r, mut w) = conn::connect(&session.sock).await?;
            conn::query_status(&mut r, &mut w).await?;
            Ok((r, w))
        })
        .await?;
        // A session ending on its own just now is told by the reader.
        let kill = match grace_ms {
            u32::MAX => Kill::AwaitExit,
            g => Kill::Grace(g),
        };
        conn::ask(&mut w, &[Request::Kill(kill)]).await?;
        let wait = async {
            let mut code = None;
            // EXIT (our supervisors) or end of stream (any supervisor).
            while let Some(reply) = r.reply().await? {
                if let Reply::Exit(c) = reply {
                    code = Some(c);
                }
            }
            anyhow::Ok(code)
        };
        // A program that ignores SIGTERM leaves a person at a silent
        // terminal for the whole grace period: said once, after a second.
        tokio::pin!(wait);
        let first = Duration::from_secs(1);
        // (`patience` is ten seconds more than the grace period.)
        match tokio::time::timeout(first, &mut wait).await {
            Ok(done) => done,
            Err(_) => {
                if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
                    let when = match grace_ms {
                        u32::MAX => "when its grace period ends".to_owned(),
                        g => format!("in {}", client::human_ms(u64::from(g).saturating_sub(1000))),
                    };
                    eprintln!(
                        "hm: '{}' is still running a second after SIGTERM: SIGKILL {when}",
                        client::shown_id(&session.id)
                    );
                }
                tokio::time::timeout(patience.saturating_sub(first), wait)
                    .await
                    .context("the session did not stop in time")?
            }
        }
    });
    // Ended by itself as it was asked: gone, as asked.
    let code = match code {
        Err(e) => match client::ended_instead(dir, &session.id, &e) {
            Some(r) => Some(r.exit_code),
            None => return Err(client::or_lost(dir, &session.id, e)),
        },
        Ok(code) => code,
    };
    // The supervisor removes its files, then exits and so drops its lock.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    if !client::lock_released(&session, deadline) {
        bail!(
            "session '{}' still holds its lock after exiting",
            client::shown_id(&session.id)
        );
    }
    // The connection closed without an EXIT (over a mount, say, as the
    // supervisor went): its record says how it ended.
    let code = code.or_else(|| {
        client::ended_meanwhile(dir, &session.id, client::answer_deadline()).map(|r| r.exit_code)
    });
    // Killed, as the dashboard and hm ls say it, unless the record says
    // the program ended on its own just before the kill reached it.
    let killed = client::ended_session(dir, &session.id).is_none_or(|r| r.killed);
    Ok(match code {
        Some(c) => format!(
            "session '{}' {}",
            client::shown_id(&session.id),
            client::exited_with(c, killed)
        ),
        None => format!("session '{}' ended", client::shown_id(&session.id)),
    })
}

/// Session `id`'s paths and its program's pid, if that program outlived
/// its supervisor (killed with SIGKILL, or dead of a bug).
fn orphaned(dir: &std::path::Path, id: &str) -> Option<(SessionPaths, u32)> {
    let paths = SessionPaths::new(dir, id).ok()?;
    match liveness::probe(&paths.pid, &paths.sock, false) {
        Liveness::Orphaned(pid) => Some((paths, pid)),
        _ => None,
    }
}

/// Stops a program that outlived its supervisor, as a supervisor stops
/// its own: SIGTERM and SIGCONT to its process group, SIGKILL after
/// `grace`. Its pid file names it with its start time, so a pid used again
/// by another program is never signalled ([`liveness::probe`] checked it,
/// and it is checked again before the SIGKILL). Nothing waits for it, so
/// its exit code is not known; its manifest says it was killed, so that it
/// is not listed lost for `hm restore`, and a record says so as any
/// killed session's does.
fn kill_orphan(
    dir: &std::path::Path,
    paths: &SessionPaths,
    pid: u32,
    grace: Duration,
) -> Result<String> {
    use nix::sys::signal::{Signal, kill, killpg};
    use nix::unistd::{Pid, getpgid};
    let p = Pid::from_raw(i32::try_from(pid).context("a pid out of range")?);
    let identity = liveness::identity(pid);
    let same = || identity.is_some() && liveness::identity(pid) == identity;
    // The supervisor made it the leader of a group of its own; a program
    // that left that group is signalled alone.
    let group = getpgid(Some(p)).is_ok_and(|g| g == p);
    let signal = |sig: Signal| {
        let _ = if group { killpg(p, sig) } else { kill(p, sig) };
    };
    let gone_within = |t: Duration| {
        let deadline = std::time::Instant::now() + t;
        while same() {
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    };
    signal(Signal::SIGTERM);
    signal(Signal::SIGCONT);
    let mut how = Signal::SIGTERM;
    if !gone_within(grace) {
        if same() {
            signal(Signal::SIGKILL);
        }
        how = Signal::SIGKILL;
        if !gone_within(Duration::from_secs(5)) {
            bail!(
                "the program of session '{}' (pid {pid}) did not end after SIGKILL",
                client::shown_id(&paths.id)
            );
        }
    }
    // Its files go as a supervisor's would (the probe clears a stale
    // session's socket and pid file).
    let _ = liveness::probe(&paths.pid, &paths.sock, true);
    let code = 128 + how as i32;
    if let Some(state) = crate::restore::sessions_dir()
        && let Some(mut m) = crate::restore::kept(&paths.id, dir).filter(|m| m.lost())
    {
        let now = crate::clock::unix_ms();
        m.ended = Some(crate::restore::manifest::End {
            signaled: false,
            unix_ms: now,
            how: crate::restore::manifest::EndHow::Killed,
            code,
        });
        let _ = crate::restore::manifest::write(&state, &m);
        // Listed as killed until `hm rm`, as its supervisor would have left
        // it, with the output kept for `hm restore` (`hm logs`, the
        // dashboard's pane): it vanished, and a running dashboard kept a
        // pane that said only `gone`.
        let record = crate::ended::Ended {
            last_lines: crate::ended::kept_last_lines(&state, &m),
            id: m.id,
            command: m.argv,
            workdir: m.cwd.unwrap_or(m.workdir),
            classifier: m.classifier.name,
            started_unix_ms: m.started_unix_ms,
            ended_unix_ms: now,
            exit_code: code,
            label: m.label,
            cols: m.cols,
            rows: m.rows,
            killed: true,
        };
        if let Err(e) = crate::ended::write(dir, &record) {
            eprintln!(
                "hm: cannot keep the record of '{}': {e}",
                client::shown_id(&paths.id)
            );
        }
    }
    Ok(format!(
        "session '{}': its program (pid {pid}), which outlived its supervisor, was stopped \
         with {}",
        client::shown_id(&paths.id),
        how.as_str()
    ))
}
