//! Carrying out the effects [`super::update`] asks for: requests become
//! frames and go to the session's connection task, sessions are started,
//! restarted and forgotten (here or on another machine, through its
//! link), and what is meant for the user's terminal (the bell, a desktop
//! notification, the clipboard) is written to it. Results come back to
//! the run loop as messages; nothing here reads or changes the model.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use tokio::sync::mpsc;

use crate::protocol::{Kill, Request};
use crate::remote::Spawner;

use super::Options;
use super::connection;
use super::model::{Effect, Msg};

/// What carrying out effects needs: where results go, each session's
/// connection, and the supervisors the dashboard started.
pub struct Apply {
    pub tx: mpsc::Sender<Msg>,
    senders: HashMap<String, mpsc::UnboundedSender<Vec<u8>>>,
    pub started: Started,
}

impl Apply {
    pub fn new(tx: mpsc::Sender<Msg>) -> Apply {
        Apply {
            tx,
            senders: HashMap::new(),
            started: Started::default(),
        }
    }

    /// Carries out `fx`; returns the session to raw-attach to, if one was
    /// asked for (the run loop does that: it owns the terminal).
    pub fn apply(&mut self, fx: Vec<Effect>, opts: &Options) -> Option<String> {
        let mut raw = None;
        for e in fx {
            match e {
                Effect::RawAttach(id) => raw = Some(id),
                e => self.one(e, opts),
            }
        }
        raw
    }

    fn one(&mut self, e: Effect, opts: &Options) {
        let senders = &mut self.senders;
        match e {
            Effect::RawAttach(_) => {}
            // Requests become frames here, where they are written, and
            // nowhere else: the dashboard's decisions know no wire format.
            Effect::Input(id, bytes) => {
                connection::write(senders, &id, Request::Input(&bytes).encode())
            }
            Effect::Resize(id, size) => {
                connection::write(senders, &id, Request::Resize(size).encode());
            }
            Effect::Status(id) => connection::write(senders, &id, Request::Status.encode()),
            Effect::Info(id) => connection::write(senders, &id, Request::Info.encode()),
            Effect::Act(id, act) => connection::write(senders, &id, Request::Act(act).encode()),
            // The session's own grace period, and EXIT back.
            Effect::Kill(id) => {
                connection::write(senders, &id, Request::Kill(Kill::AwaitExit).encode())
            }
            Effect::Label(id, text) => {
                connection::write(senders, &id, Request::Label(text).encode())
            }
            Effect::Connect(id) => {
                let (dir, plain, host) = session_at(opts, &id);
                connection::connect(id, &plain, false, (&dir, host), &self.tx, senders);
            }
            Effect::ConnectStarted(id) => {
                let (dir, plain, host) = session_at(opts, &id);
                connection::connect(id, &plain, true, (&dir, host), &self.tx, senders);
            }
            Effect::Spawn {
                id,
                command,
                workdir,
                label,
                classifier,
            } => self.spawn(opts, id, command, (workdir, label, classifier)),
            Effect::Bell => {
                let _ = std::io::stdout().write_all(b"\x07");
            }
            Effect::Desktop(text) => {
                // Text only: nothing of a session's may end the sequence.
                let text: String = text.chars().filter(|c| !c.is_control()).take(200).collect();
                let seq = match opts.desktop_notify {
                    Some(crate::config::DesktopNotify::Osc9) => format!("\x1b]9;{text}\x07"),
                    Some(crate::config::DesktopNotify::Osc777) => {
                        format!("\x1b]777;notify;hm;{text}\x07")
                    }
                    None => String::new(),
                };
                let _ = std::io::stdout().write_all(seq.as_bytes());
            }
            Effect::Clipboard(text) => {
                let _ = std::io::stdout().write_all(&crate::copymode::osc52(&text));
                let _ = std::io::stdout().flush();
            }
            Effect::Forget(id) => match remote_session(opts, &id) {
                // Gone from the mount at once, and from the host by its link.
                Some((spawner, dir, plain)) => {
                    let _ = crate::ended::remove(&dir, plain);
                    let _ = spawner.forget(plain);
                }
                None => {
                    let _ = crate::ended::forget(&opts.dir, &id);
                }
            },
            Effect::Restart(id) => self.restart(opts, id),
            Effect::KillOrphan(id) => {
                let (tx, dir) = (self.tx.clone(), opts.dir.clone());
                let config = opts.config_path.clone();
                std::thread::spawn(move || {
                    let result = kill_orphan(&id, &dir, config.as_deref());
                    let _ = tx.blocking_send(Msg::OrphanKilled(id, result));
                });
            }
            Effect::Restore(ids, also) => {
                let (tx, dir) = (self.tx.clone(), opts.dir.clone());
                let config = opts.config_path.clone();
                std::thread::spawn(move || {
                    let mut results = restore(&ids, &dir, config.as_deref());
                    let mut said = restored(&results);
                    // The last word stays: it keeps why one was left out.
                    if let Some(also) = also {
                        said = format!("{said}; {also}");
                    }
                    // Each comes up as it is told; the failures first, so
                    // that the last word, which stays, is the whole.
                    results.sort_by_key(|(_, r)| r.is_ok());
                    for (id, result) in results {
                        let said = Some(said.clone());
                        let _ = tx.blocking_send(Msg::Started(id, result.map(|_| said)));
                    }
                });
            }
        }
    }

    /// `n`: a session started here, or on another machine for `host:id`;
    /// [`Msg::Started`] says how it went.
    fn spawn(
        &self,
        opts: &Options,
        id: String,
        command: String,
        (workdir, label, classifier): (Option<String>, Option<String>, Option<String>),
    ) {
        let tx = self.tx.clone();
        // The size of a person's terminal: the dashboard's, less its bar,
        // which focus gives it too (not a pane's); another machine's
        // session starts at it as well.
        let size = crossterm::terminal::size()
            .ok()
            .map(|(cols, rows)| crate::protocol::Size {
                cols,
                rows: super::layout::focus_rows(rows),
            });
        // `host:id`: started on that machine, through its link.
        if let Some((host, plain)) = crate::remote::split_target(&id)
            && let Some((_, spawner)) = opts.spawners.iter().find(|(n, _)| n == host)
        {
            let spawner = spawner.clone();
            let req = crate::remote::mux::NewSession {
                id: plain.to_owned(),
                command,
                argv: None,
                workdir,
                label,
                classifier,
                size,
                restart: false,
                background: false,
            };
            std::thread::spawn(move || {
                let result = spawner.spawn(req).map(|()| None);
                let _ = tx.blocking_send(Msg::Started(id, result));
            });
            return;
        }
        let dir = opts.dir.clone();
        let config = opts.config_path.clone();
        let started = self.started.clone();
        std::thread::spawn(move || {
            let what = crate::launch::Detached {
                command: &command,
                argv: None,
                workdir: workdir.as_deref().map(Path::new),
                label: label.as_deref(),
                size,
                classifier: classifier.as_deref(),
                awaited: true,
            };
            // Said as it starts, not found out after a crash.
            let words: Vec<std::ffi::OsString> = crate::launch::plain_command(&command)
                .map(|(_, words)| words.into_iter().map(Into::into).collect())
                .unwrap_or_default();
            let said = crate::agent_hooks::gemini_unhooked(&words, &dir)
                .then(|| format!("started '{id}': {}", crate::agent_hooks::GEMINI_UNHOOKED));
            let result = crate::launch::start(&id, &dir, config.as_deref(), what)
                .map(|child| started.adopt(child))
                .map(|()| said)
                .map_err(|e| crate::error::describe(&e));
            let _ = tx.blocking_send(Msg::Started(id, result));
        });
    }

    /// `r` on an ended session: `hm restart`, or on another machine the
    /// record's command started there anew.
    fn restart(&self, opts: &Options, id: String) {
        let tx = self.tx.clone();
        if let Some((spawner, dir, plain)) = remote_session(opts, &id) {
            let record = crate::ended::records(&dir)
                .into_iter()
                .find(|r| r.id == plain);
            let spawner = spawner.clone();
            std::thread::spawn(move || {
                let result = match record {
                    Some(r) => spawner
                        .restart(r)
                        .map(|()| Some(format!("restarted '{id}'"))),
                    None => Err("its record is gone there".to_owned()),
                };
                let _ = tx.blocking_send(Msg::Started(id, result));
            });
            return;
        }
        let dir = opts.dir.clone();
        let config = opts.config_path.clone();
        std::thread::spawn(move || {
            // Decided before the restart, which replaces the record. An
            // agent whose conversation hm never learned (its hooks not
            // installed) starts a new one, and the notice says so: Claude
            // and Codex said they resumed, and Gemini said nothing.
            let record = crate::ended::get(&dir, &id);
            let kept = crate::restore::kept(&id, &dir);
            let agent = record
                .as_ref()
                .and_then(|r| crate::lost::resume::agent_of(&r.command))
                .map(|(agent, _)| agent);
            let resumes = record
                .as_ref()
                .and_then(|r| crate::lost::plan::resumption(kept.as_ref()?, &r.command))
                .and_then(|plan| match plan.kind {
                    crate::lost::plan::Kind::Resume { agent, .. } => Some(format!(
                        "restarted '{id}', resuming its {} conversation",
                        agent.name()
                    )),
                    _ => None,
                })
                .unwrap_or_else(|| match agent {
                    Some(agent) => format!(
                        "restarted '{id}' in a new {} conversation: hm never learned the \
                         last one's id (see 'hm setup {}')",
                        agent.name(),
                        agent.name()
                    ),
                    None => format!("restarted '{id}'"),
                });
            // It starts in the environment it started in, its secrets'
            // values taken from ours, where `hm restart` takes it from its
            // manifest (the same run's, ended here): one we lack is said,
            // as `R` says it, or Claude Code says only "Not logged in".
            let missing = kept
                .filter(|m| !m.lost() && record.as_ref().is_some_and(|r| m.argv == r.command))
                .map(|m| crate::restore::environ::missing(&m))
                .unwrap_or_default();
            let said = match without(&id, &missing) {
                Some(w) => format!("{resumes}; {w}"),
                None => resumes,
            };
            let result = restart(&id, &dir, config.as_deref()).map(|()| Some(said));
            let _ = tx.blocking_send(Msg::Started(id, result));
        });
    }
}

/// `hm restart ID`, as a child of ours: its result is the session's start.
fn restart(id: &str, dir: &Path, config: Option<&Path>) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = std::process::Command::new(exe);
    if let Some(c) = config {
        cmd.arg("--config").arg(c);
    }
    crate::launch::outside_multiplexer(&mut cmd);
    let out = cmd
        .args(["restart", id, "--await-attach", "--socket-dir"])
        .arg(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        let said = String::from_utf8_lossy(&out.stderr);
        Err(said.trim().trim_start_matches("hm: ").to_owned())
    }
}

/// `hm kill ID` of a session whose program outlived its supervisor, as a
/// child of ours: what it said, or why it could not.
fn kill_orphan(id: &str, dir: &Path, config: Option<&Path>) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = std::process::Command::new(exe);
    if let Some(c) = config {
        cmd.arg("--config").arg(c);
    }
    let out = cmd
        .args(["kill", id, "--socket-dir"])
        .arg(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    let said = |b: &[u8]| String::from_utf8_lossy(b).trim().to_owned();
    if out.status.success() {
        Ok(said(&out.stdout))
    } else {
        Err(said(&out.stderr).trim_start_matches("hm: ").to_owned())
    }
}

/// `hm restore IDS`, as a child of ours: each session's start, or why not.
/// What `R` says once its sessions are up: `restored 'a'`, or for several
/// `restored 2 of 3 sessions: 'a', 'b'; cannot restore 'c': ...` (each
/// session's own notice would replace the one before, and the last alone
/// was read).
/// A session that started without secrets it had is said so, as `hm
/// restore` says it: an agent brought back without its API key only says
/// "Not logged in" once it is asked something.
fn restored(results: &[(String, Restored)]) -> String {
    let up: Vec<String> = results
        .iter()
        .filter(|(_, r)| r.is_ok())
        .map(|(id, _)| format!("'{id}'"))
        .collect();
    if let [(id, Ok(missing))] = results {
        return match without(id, missing) {
            Some(w) => format!("restored {w}"),
            None => format!("restored '{id}'"),
        };
    }
    let first_without = results
        .iter()
        .find_map(|(id, r)| without(id, r.as_ref().ok()?))
        .map(|w| format!("; {w}"))
        .unwrap_or_default();
    let first_failure = results
        .iter()
        .find_map(|(_, r)| r.as_ref().err())
        .map(|why| format!("; {why}"))
        .unwrap_or_default();
    format!(
        "restored {} of {} sessions: {}{first_without}{first_failure}",
        up.len(),
        results.len(),
        up.join(", ")
    )
}

/// How a session `R` restored started: the secrets it had that the
/// dashboard's environment has no value for; or why it did not start.
type Restored = Result<Vec<String>, String>;

/// `'id' without NAMES, which ... not set here`, if `missing` names any.
fn without(id: &str, missing: &[String]) -> Option<String> {
    let (last, first) = missing.split_last()?;
    let (names, is) = match first {
        [] => (last.clone(), "is"),
        _ => (format!("{} and {last}", first.join(", ")), "are"),
    };
    Some(format!("'{id}' without {names}, which {is} not set here"))
}

fn restore(ids: &[String], dir: &Path, config: Option<&Path>) -> Vec<(String, Restored)> {
    // As the restore run below finds them (it has this environment), from
    // the manifests as they are before it: a restored session keeps a new
    // one, without the secrets it no longer has.
    let missing: Vec<Vec<String>> = ids
        .iter()
        .map(|id| {
            crate::restore::kept(id, dir)
                .map(|m| crate::restore::environ::missing(&m))
                .unwrap_or_default()
        })
        .collect();
    let out = std::env::current_exe().and_then(|exe| {
        let mut cmd = std::process::Command::new(exe);
        if let Some(c) = config {
            cmd.arg("--config").arg(c);
        }
        crate::launch::outside_multiplexer(&mut cmd);
        cmd.arg("restore")
            .args(ids)
            .arg("--socket-dir")
            .arg(dir)
            .stdin(std::process::Stdio::null())
            .output()
    });
    let said = match &out {
        Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
        Err(e) => e.to_string(),
    };
    ids.iter()
        .zip(missing)
        .map(|(id, missing)| {
            // Its own line of what went wrong, if there is one.
            let why = said
                .lines()
                .find(|l| l.contains(&format!("'{id}'")))
                .map(|l| l.trim_start_matches("hm: ").to_owned());
            let up = out.is_ok() && crate::liveness::held(dir, id);
            let result = match (up, why) {
                (true, _) => Ok(missing),
                (false, Some(why)) => Err(why),
                (false, None) => Err(said.trim().trim_start_matches("hm: ").to_owned()),
            };
            (id.clone(), result)
        })
        .collect()
}

/// A `host:id` pane's link, mount and plain id; `None` for a local one.
fn remote_session<'a>(opts: &'a Options, key: &'a str) -> Option<(&'a Spawner, PathBuf, &'a str)> {
    let (host, id) = crate::remote::split_target(key)?;
    let (_, spawner) = opts.spawners.iter().find(|(n, _)| n == host)?;
    let (_, dir) = opts.remote_dirs.iter().find(|(n, _)| n == host)?;
    Some((spawner, dir.clone(), id))
}

/// Where a pane's session lives: `host:id` in that host's mount, with the
/// host's link; a plain id in the socket dir.
pub fn session_at(opts: &Options, key: &str) -> (PathBuf, String, Option<Spawner>) {
    match remote_session(opts, key) {
        Some((spawner, dir, id)) => (dir, id.to_owned(), Some(spawner.clone())),
        None => (opts.dir.clone(), key.to_owned(), None),
    }
}

/// The supervisors the dashboard started (`n`): its children, reaped once
/// they exit rather than left as zombies until the dashboard quits.
#[derive(Debug, Default, Clone)]
pub struct Started(std::sync::Arc<std::sync::Mutex<Vec<std::process::Child>>>);

impl Started {
    fn adopt(&self, child: std::process::Child) {
        if let Ok(mut v) = self.0.lock() {
            v.push(child);
        }
    }

    /// Reaps those that have exited; called on the dashboard's tick.
    pub fn reap(&self) {
        if let Ok(mut v) = self.0.lock() {
            v.retain_mut(|c| matches!(c.try_wait(), Ok(None)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::restored;

    #[test]
    fn r_says_every_session_it_restored_and_the_first_it_could_not() {
        let ok = |id: &str| (id.to_owned(), Ok(Vec::new()));
        assert_eq!(restored(&[ok("a")]), "restored 'a'");
        assert_eq!(
            restored(&[ok("a"), ok("b"), ok("c")]),
            "restored 3 of 3 sessions: 'a', 'b', 'c'"
        );
        let failed = ("c".to_owned(), Err("cannot restore 'c': gone".to_owned()));
        assert_eq!(
            restored(&[ok("a"), failed, ok("b")]),
            "restored 2 of 3 sessions: 'a', 'b'; cannot restore 'c': gone"
        );
    }

    #[test]
    fn r_says_which_secrets_a_session_started_without() {
        let key = |id: &str, names: &[&str]| {
            let names = names.iter().map(|n| (*n).to_owned()).collect();
            (id.to_owned(), Ok(names))
        };
        assert_eq!(
            restored(&[key("cc", &["ANTHROPIC_API_KEY"])]),
            "restored 'cc' without ANTHROPIC_API_KEY, which is not set here"
        );
        assert_eq!(
            restored(&[key("a", &[]), key("cx", &["OPENAI_API_KEY", "X_TOKEN"])]),
            "restored 2 of 2 sessions: 'a', 'cx'; 'cx' without OPENAI_API_KEY and X_TOKEN, which are not set here"
        );
    }
}
