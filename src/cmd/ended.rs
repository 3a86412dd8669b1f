//! What to do with sessions that ended: `hm rm ID`, `hm clean` and
//! `hm restart ID` (see `crate::ended` for the records).

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::cli::{CleanArgs, EndedArgs, RmArgs};
use crate::client;
use crate::config::Config;
use crate::ended;
use crate::liveness::{self, Liveness};
use crate::paths::{self, SessionPaths};

/// Whether a supervisor runs session `id` in `dir` (the lock says).
fn running(dir: &Path, id: &str) -> bool {
    SessionPaths::new(dir, id).is_ok_and(|s| {
        matches!(
            liveness::probe(&s.pid, &s.sock, false),
            Liveness::Running | Liveness::Orphaned(_)
        )
    })
}

/// The record of `id`, or why there is none to act on.
fn record(dir: &Path, id: &str) -> Result<ended::Ended> {
    paths::validate_id(id)?;
    // A record beside a supervisor still running is a session in its last
    // moments (one that starts removes the record): its supervisor lets go
    // of the lock once it has written it. `hm wait ID`, then `hm rm ID`.
    if client::ended_session(dir, id).is_some()
        && let Ok(paths) = SessionPaths::new(dir, id)
    {
        client::lock_released(&paths, client::answer_deadline());
    }
    if running(dir, id) {
        bail!("session '{id}' is running; stop it first with 'hm kill {id}'");
    }
    // After a reboot, its manifest has what the record had.
    ended::get(dir, id).with_context(|| {
        format!(
            "no ended session named '{}' in {} (see 'hm ls')",
            paths::sanitize(id),
            dir.display()
        )
    })
}

/// Forgets an ended session: its record and its log.
fn forget(dir: &Path, id: &str) -> Result<()> {
    ended::forget(dir, id).with_context(|| format!("cannot remove the record of '{id}'"))
}

pub fn rm(args: RmArgs, config: &Config) -> Result<i32> {
    let dir = client::socket_dir(&args.dir, config);
    rm_each(&args.ids, |id| rm_one(&dir, id))
}

/// Forgets each of `ids` with `forget`, saying what it removed: one id's
/// error is the command's; of several, each that cannot be forgotten is
/// told on its own line and the others go all the same.
fn rm_each(ids: &[String], forget: impl Fn(&str) -> Result<String>) -> Result<i32> {
    if let [one] = ids {
        println!("{}", forget(one)?);
        return Ok(0);
    }
    let mut failed = false;
    for id in ids {
        match forget(id) {
            Ok(said) => println!("{said}"),
            Err(e) => {
                failed = true;
                eprintln!("hm: {}", crate::error::describe(&e));
            }
        }
    }
    Ok(i32::from(failed))
}

/// Forgets session `id` that ended or was lost; what was removed, for a
/// person (a silent success left them to run `hm ls` to know).
fn rm_one(dir: &Path, id: &str) -> Result<String> {
    // A session lost with its supervisor has a manifest and no record
    // (the machine restarted): `hm rm` forgets it too. One whose manifest
    // says it ended is an ended one, record or not.
    if ended::get(dir, id).is_none() && !running(dir, id) && crate::restore::kept(id, dir).is_some()
    {
        ended::forget(dir, id)?;
        return Ok(format!("removed the lost session '{id}'"));
    }
    let r = record(dir, id)?;
    // Its supervisor stopped by a signal: listed as lost, and so said.
    let lost = crate::lost::holds(dir, &r.id);
    forget(dir, &r.id)?;
    if lost {
        return Ok(format!(
            "removed the lost session '{}' (exit code {})",
            r.id, r.exit_code
        ));
    }
    // After a comma: `(killed (exit 0))` nested its parentheses.
    Ok(format!(
        "removed '{}', {}",
        r.id,
        client::ended_short(r.exit_code, r.killed)
    ))
}

/// Forgets every session that ended: its record, and the manifests left
/// of sessions that ended or were lost without a way back (the machine
/// restarted since); the lost sessions `hm restore` would start are kept.
pub fn clean(args: CleanArgs, config: &Config) -> Result<i32> {
    let dir = client::socket_dir(&args.dir, config);
    let mut n = 0;
    for r in ended::list(&dir) {
        if !running(&dir, &r.id) {
            forget(&dir, &r.id)?;
            n += 1;
        }
    }
    let (mut kept, mut lost_gone) = (0, 0);
    if let Some(state) = crate::restore::sessions_dir() {
        let lost = crate::lost::list(&dir);
        for (id, m) in crate::restore::manifest::list(&state) {
            let Ok(m) = m else { continue };
            if Path::new(&m.socket_dir) != dir || running(&dir, &id) {
                continue;
            }
            let restartable = lost
                .iter()
                .find(|l| l.id == id)
                .map(crate::lost::Lost::restartable);
            match restartable {
                Some(true) => kept += 1,
                // Lost without a way back: said apart, not as ended.
                Some(false) => {
                    ended::forget(&dir, &id)?;
                    lost_gone += 1;
                }
                // Ended, its record gone with the machine's restart.
                None if !m.lost() => {
                    ended::forget(&dir, &id)?;
                    n += 1;
                }
                // Lost, of another machine: not this one's to forget.
                None => {}
            }
        }
    }
    let s = if n == 1 { "" } else { "s" };
    let mut out = std::io::stdout().lock();
    writeln!(out, "removed {n} ended session{s}")?;
    if lost_gone > 0 {
        let s = if lost_gone == 1 { "" } else { "s" };
        writeln!(
            out,
            "removed {lost_gone} lost session{s} that 'hm restore' would not start"
        )?;
    }
    if kept > 0 {
        let s = if kept == 1 { "" } else { "s" };
        writeln!(
            out,
            "kept {kept} lost session{s} for 'hm restore' ('hm rm ID' forgets one)"
        )?;
    }
    Ok(0)
}

/// Starts the session again with the same id, command, directory and
/// classifier, in the background, as `hm run --bg` does.
pub fn restart(args: EndedArgs, config: &Config, config_path: Option<&Path>) -> Result<i32> {
    let dir = client::socket_dir(&args.dir, config);
    // A session lost with its supervisor is started again from its
    // manifest, as it was, afresh (`hm restore` brings back its history
    // and its conversation).
    let lost = ended::get(&dir, &args.id)
        .is_none()
        .then(|| crate::restore::kept(&args.id, &dir))
        .flatten()
        .filter(|m| m.lost() && !running(&dir, &args.id));
    // Its old output comes back with it, as with `hm restore`: the new
    // supervisor claims the lost one's manifest and history.
    let restoring_lost = lost.as_ref().map(|m| m.instance.clone());
    // Started again in the environment it started in, as `hm restore`
    // starts one.
    let mut start_env = lost.clone();
    let r = match lost {
        Some(m) => ended::Ended {
            id: m.id,
            command: m.argv,
            workdir: m.workdir,
            classifier: m.classifier.name,
            started_unix_ms: m.started_unix_ms,
            ended_unix_ms: m.started_unix_ms,
            exit_code: 0,
            last_lines: Vec::new(),
            label: m.label,
            cols: m.cols,
            rows: m.rows,
            killed: false,
        },
        None => record(&dir, &args.id)?,
    };
    if r.command.is_empty() {
        bail!("the record of '{}' has no command", r.id);
    }
    let mut r = r;
    r.workdir = workdir(&r, &dir)?;
    let restoring = match restoring_lost {
        Some(instance) => Some(instance),
        None => {
            let kept = crate::restore::kept(&r.id, &dir).filter(|m| m.argv == r.command);
            // Its manifest as a session that ended here (`lost` is true of
            // one with no end too): its output and its environment come
            // back with it.
            let ended_here = kept.as_ref().filter(|m| !m.lost()).cloned();
            let command = if args.fresh {
                fresh_command(&r.command)
            } else {
                let resumes = kept.as_ref().and_then(|m| resumed(&r, m));
                // Said, not left to be found: its conversation is gone.
                if resumes.is_none()
                    && let Some((agent, _)) = crate::lost::resume::agent_of(&r.command)
                {
                    let name = agent.name();
                    eprintln!(
                        "hm: '{}' starts a new {name} conversation: hm never learned the last \
                         one's id (see 'hm setup {name}')",
                        r.id
                    );
                }
                resumes
            };
            r.command = command.unwrap_or(r.command);
            // An ended one's output kept for `hm restore` comes back too,
            // under a mark, before its next run.
            let instance = ended_here.as_ref().map(|m| m.instance.clone());
            // And it runs in the environment it started in, not in that of
            // whoever restarts it: a dashboard's `r` ran Claude Code given
            // `ANTHROPIC_BASE_URL=… claude` in the form without it, and it
            // said "Not logged in".
            start_env = ended_here;
            instance
        }
    };
    let exe = std::env::current_exe().context("cannot find the hm executable")?;
    let mut cmd = std::process::Command::new(exe);
    if let Some(c) = config_path {
        cmd.arg("--config").arg(c);
    }
    cmd.args(["run", "--bg", "--id", &r.id, "--workdir", &r.workdir]);
    if args.await_attach {
        cmd.arg("--await-attach");
    }
    cmd.args(["--classifier", &r.classifier]);
    if let Some(label) = &r.label {
        cmd.args(["--label", label]);
    }
    if r.cols > 0 && r.rows > 0 {
        cmd.args(["--cols", &r.cols.to_string(), "--rows", &r.rows.to_string()]);
    }
    if let Some(instance) = &restoring {
        cmd.arg("--restoring").arg(instance).arg("--restarting");
    }
    cmd.arg("--socket-dir").arg(&dir).arg("--").args(&r.command);
    if let Some(m) = &start_env {
        let missing = crate::restore::environ::apply(&mut cmd, m);
        if let Some(note) = crate::restore::environ::missing_note(&r.id, &missing) {
            eprintln!("hm: {note}");
        }
    }
    let status = cmd.status().context("cannot start hm run")?;
    Ok(status.code().unwrap_or(1))
}

/// Where `hm restart` runs session `r`: its directory while it is one.
/// When it is gone, a shell starts where it was last (its manifest says),
/// else at home, and says so; anything else is refused with what to do,
/// not sent to `hm run` to fail on a bare "No such file or directory"
/// (the rule, and why: `crate::lost::plan`).
fn workdir(r: &ended::Ended, dir: &Path) -> Result<String> {
    if Path::new(&r.workdir).is_dir() {
        return Ok(r.workdir.clone());
    }
    let id = &r.id;
    let gone = paths::printable(&r.workdir);
    if !crate::lost::plan::shell(&r.command) {
        bail!(
            "cannot restart '{id}': its directory '{gone}' no longer exists, and only a shell is \
             started in another (put the directory back, or 'hm rm {id}' forgets it)"
        );
    }
    let kept = crate::restore::kept(id, dir).filter(|m| m.argv == r.command);
    let last = kept.as_ref().and_then(|m| m.cwd.as_deref());
    let Some(there) = crate::lost::plan::shell_home(last.as_slice()) else {
        bail!(
            "cannot restart '{id}': its directory '{gone}' no longer exists, nor does a home \
             directory to start it in (put the directory back, or 'hm rm {id}' forgets it)"
        );
    };
    eprintln!(
        "hm: restarting '{id}' in {} (its directory {gone} no longer exists)",
        paths::printable(&there)
    );
    Ok(there)
}

/// An agent's command to resume the conversation of session `r` (that
/// ended), as `hm restore` would resume it ([`crate::lost::plan::resumption`]).
/// Said on stderr.
fn resumed(r: &ended::Ended, kept: &crate::restore::manifest::Manifest) -> Option<Vec<String>> {
    let plan = crate::lost::plan::resumption(kept, &r.command)?;
    if let crate::lost::plan::Kind::Resume { agent, id } = &plan.kind {
        eprintln!(
            "hm: '{}' resumes {} conversation {id} ('hm restart --fresh {}' starts a new one)",
            r.id,
            agent.name(),
            r.id
        );
    }
    Some(plan.argv)
}

/// The command of an agent that resumed or picked a conversation, without
/// that (`hm restart --fresh`, after a restart that resumed); `None` for
/// any other, which runs as it was.
fn fresh_command(command: &[String]) -> Option<Vec<String>> {
    use crate::lost::resume;
    let (agent, at) = resume::agent_of(command)?;
    let own = resume::fresh(agent, &command[at..])?;
    Some(resume::with_own(command, at, own))
}

/// `hm rm HOST:ID ...` and `hm restart HOST:ID`: the records of sessions
/// that ended on another machine, forgotten or started again there
/// through a link to it, as the dashboard's `x` and `r` do.
pub mod remote {
    use anyhow::{Result, bail};

    use crate::config::Config;
    use crate::remote::{Host, Link, LinkState, split_target, ssh_command};

    /// The one host all of `targets` name (`None` if all are local),
    /// each id without it; several hosts, or some local, are refused.
    pub fn host_of(targets: &[String]) -> Result<Option<(String, Vec<String>)>> {
        let split: Vec<Option<(&str, &str)>> = targets.iter().map(|t| split_target(t)).collect();
        let Some(Some((host, _))) = split.first() else {
            if split.iter().any(Option::is_some) {
                bail!("give sessions of one machine at a time (all HOST:ID, or all local)");
            }
            return Ok(None);
        };
        if split.iter().any(|s| s.is_none_or(|(h, _)| h != *host)) {
            bail!("give sessions of one machine at a time (all HOST:ID, or all local)");
        }
        let ids = split
            .iter()
            .flatten()
            .map(|(_, id)| (*id).to_owned())
            .collect();
        Ok(Some(((*host).to_owned(), ids)))
    }

    /// A link to `host`, once its sessions are served here; why not if
    /// it cannot be reached.
    pub fn link(host: &str, config: &Config) -> Result<Link> {
        // An address that cannot be one is a command line that cannot mean
        // anything (exit 2), as an id no session can have is.
        let host =
            Host::resolve(host, &config.hosts).map_err(|e| crate::cmd::Usage(e.to_string()))?;
        let (tx, rx) = std::sync::mpsc::channel();
        let link = Link::start(
            &host,
            &ssh_command(config.ssh_command.as_deref()),
            move || {
                let _ = tx.send(());
            },
        )?;
        // ssh's own timeouts end a try (the link's first answer is
        // bounded by its hello timeout); this only keeps a link thread
        // that stopped from holding the command.
        while rx.recv_timeout(std::time::Duration::from_secs(60)).is_ok() {
            match link.state() {
                LinkState::Up => return Ok(link),
                LinkState::Down { why, .. } => bail!("{why}"),
                LinkState::Connecting => {}
            }
        }
        bail!("{}: no answer", host.name)
    }

    /// The record of ended session `id` in the link's directory, or why
    /// there is none to act on, naming it `host:id`.
    fn record(link: &Link, host: &str, id: &str) -> Result<crate::ended::Ended> {
        crate::paths::validate_id(id)?;
        if super::running(link.dir(), id) {
            bail!("session '{host}:{id}' is running; stop it first with 'hm kill {host}:{id}'");
        }
        match crate::ended::records(link.dir())
            .into_iter()
            .find(|r| r.id == id)
        {
            Some(r) => Ok(r),
            None => bail!(
                "no ended session named '{}' on {host} (see 'hm ls --host {host}')",
                crate::paths::sanitize(id)
            ),
        }
    }

    /// Forgets each of `ids` there; one that cannot be does not keep the
    /// others (each is told on its own line).
    pub fn rm(host: &str, ids: &[String], config: &Config) -> Result<i32> {
        let link = link(host, config)?;
        let spawner = link.spawner();
        // Said as a local `hm rm` says it.
        let forget = |id: &str| -> Result<String> {
            let r = record(&link, host, id)?;
            spawner.forget_now(&r.id).map_err(anyhow::Error::msg)?;
            Ok(format!(
                "removed '{host}:{}', {}",
                r.id,
                crate::client::ended_short(r.exit_code, r.killed)
            ))
        };
        super::rm_each(ids, forget)
    }

    /// Starts ended session `id` there again, as it ran, and prints its
    /// name, as `hm restart ID` does.
    pub fn restart(host: &str, id: &str, config: &Config) -> Result<i32> {
        let link = link(host, config)?;
        let r = record(&link, host, id)?;
        if r.command.is_empty() {
            bail!("the record of '{host}:{id}' has no command");
        }
        link.spawner().restart(r).map_err(anyhow::Error::msg)?;
        println!("{host}:{id}");
        Ok(0)
    }
}
