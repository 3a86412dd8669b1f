//! `hm events [--json]`: one line per state change of any session, as the
//! supervisors push them (STATE frames), with sessions appearing (a new
//! socket in the socket dir, seen by inotify) and ending (EXIT). Nothing
//! is polled.

use std::cell::RefCell;
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, Result};
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};

use crate::cli::EventsArgs;
use crate::client;
use crate::client::view::SessionView;
use crate::clock;
use crate::config::Config;
use crate::liveness::{self, Liveness};
use crate::paths::{self, SessionPaths};
use crate::protocol::{Reply, Request, StateReport, Subscribe, conn};

/// One line of output: what happened, and the session as it is now.
#[derive(Debug, serde::Serialize)]
struct Event<'a> {
    time_unix_ms: u64,
    /// `snapshot` (a session's state when `hm events` started), `started`
    /// (a session that appeared later, as first seen), `state` (a change),
    /// `dialog` (the same state, its dialog or signals changed), `ended`,
    /// or `gone` (the connection closed with no EXIT).
    event: &'a str,
    #[serde(flatten)]
    session: &'a SessionView,
}

/// The id column's width: the longest id seen (the sessions listed at the
/// start, then any longer one that comes), at least 16, so that the
/// states line up under each other.
static ID_WIDTH: AtomicUsize = AtomicUsize::new(16);

fn print(json: bool, event: &str, session: &SessionView) {
    let mut out = std::io::stdout().lock();
    let time_unix_ms = clock::unix_ms();
    let line = if json {
        let e = Event {
            time_unix_ms,
            event,
            session,
        };
        serde_json::to_string(&e).unwrap_or_default()
    } else {
        let what = match event {
            // What it is now, as `hm ls` lists it.
            "gone" if session.lost => "gone: lost with its supervisor".to_owned(),
            "gone" if session.orphaned => match session.pid {
                Some(pid) => format!("gone: orphaned, its program (pid {pid}) runs on"),
                None => "gone: orphaned".to_owned(),
            },
            "gone" => "gone".to_owned(),
            _ => session.label(),
        };
        let id = paths::sanitize(&session.id);
        let width = id.chars().count();
        let width = ID_WIDTH.fetch_max(width, Ordering::Relaxed).max(width);
        format!("{}  {id:<width$} {what}", clock_text(time_unix_ms))
    };
    // A closed pipe (`hm events | head`) ends the command: nothing to do.
    if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
        std::process::exit(0);
    }
}

/// What a session says of itself in a line: its label, and the dialog
/// it waits at, by number.
type Said = (String, Option<u64>);

fn said(view: &SessionView) -> Said {
    (view.label(), view.dialog.as_ref().map(|d| d.id))
}

/// What a STATE push after `event` is, given what the session said
/// before and after it: `dialog` when a change leaves the label as it was
/// and shows no other dialog than before (the one drawn after the
/// agent's own word that it waits); another dialog is a new question.
fn event_kind(event: &'static str, before: &Said, after: &Said) -> &'static str {
    let same_dialog = match (before.1, after.1) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    };
    if event == "state" && before.0 == after.0 && same_dialog {
        "dialog"
    } else {
        event
    }
}

/// `HH:MM:SS.mmm` in UTC.
fn clock_text(unix_ms: u64) -> String {
    let s = unix_ms / 1000;
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        (s / 3600) % 24,
        (s / 60) % 60,
        s % 60,
        unix_ms % 1000
    )
}

/// A session's place among the snapshot's: its first line waits for the
/// one before it (its first line printed, or its task gone), and lets the
/// one after it go. The sessions are asked at once, and their snapshot
/// lines came in the order the answers did (`s2, s1, s5, ...`).
#[derive(Default)]
struct Turn {
    after: Option<tokio::sync::oneshot::Receiver<()>>,
    then: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Turn {
    /// Until the session before has printed its first line: at most an
    /// answer's time, so that a stopped supervisor does not hold the
    /// others' lines.
    async fn wait(&mut self) {
        if let Some(before) = self.after.take() {
            let _ = tokio::time::timeout(crate::client::ANSWER_TIMEOUT, before).await;
        }
    }

    /// This session's first line is out.
    fn done(&mut self) {
        if let Some(next) = self.then.take() {
            let _ = next.send(());
        }
    }
}

/// Follows one session until it ends or its supervisor goes; `first` is
/// what its first line is called (`snapshot` or `started`). True when it
/// was left orphaned: its program runs on, and its end is still to come
/// (see [`events`]).
async fn follow(
    sock: PathBuf,
    id: String,
    json: bool,
    first: &'static str,
    mut turn: Turn,
) -> bool {
    // A socket that has just appeared may not listen yet.
    let mut tries = 0;
    let (mut r, mut w) = loop {
        match conn::connect(&sock).await {
            Ok(c) => break c,
            Err(_) if tries < 40 => {
                tries += 1;
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            // Gone before it could be asked (a program that ends at
            // once): how it ended, from its record.
            Err(_) => {
                turn.wait().await;
                print_record(&sock, &id, json).await;
                return false;
            }
        }
    };
    let states = Subscribe {
        state: true,
        ..Subscribe::default()
    };
    // INFO first: what the session is (its command, label, pid), which
    // STATE frames do not repeat.
    if conn::ask(&mut w, &[Request::Info, Request::Subscribe(states)])
        .await
        .is_err()
    {
        turn.wait().await;
        print_record(&sock, &id, json).await;
        return false;
    }
    let mut view = SessionView {
        id: id.clone(),
        ..SessionView::default()
    };
    let mut event = first;
    // STATE pushes not printed yet: each waits for an INFO asked after it,
    // so that what STATE does not carry (the size, the label) is of then,
    // not of when the command started (a resize was never seen).
    let mut held: Vec<StateReport> = Vec::new();
    let mut asking = true;
    loop {
        let frame = match r.recv().await {
            Ok(Some(f)) => f,
            _ => break,
        };
        // What this client cannot read is skipped.
        match conn::decode(frame) {
            // A new label, told: no answer to the INFO asked. It is said
            // with the next state, which asks again.
            Ok(Reply::Info(info)) if info.relabelled => {}
            Ok(Reply::Info(info)) => {
                asking = false;
                let fresh = SessionView::described(&id, &info);
                if held.is_empty() {
                    view = fresh;
                } else {
                    // Their states as pushed, in order, on what is now.
                    let before = said(&view);
                    view = fresh;
                    turn.wait().await;
                    show(&mut view, &mut held, &mut event, before, json);
                    turn.done();
                }
            }
            Ok(Reply::State(report)) => {
                held.push(*report);
                if !asking {
                    asking = conn::ask(&mut w, &[Request::Info]).await.is_ok();
                    if !asking {
                        break;
                    }
                }
            }
            Ok(Reply::Exit(code)) => {
                let before = said(&view);
                turn.wait().await;
                show(&mut view, &mut held, &mut event, before, json);
                view.exited(code, clock::unix_ms());
                // Whether its end was asked for (hm kill) is in the record
                // the supervisor writes once its clients have their EXIT:
                // let go, and read it. Without it an `hm kill` read
                // `exited with code 129`, `killed: false`.
                drop((r, w));
                if let Some(r) = record(&sock, &id).await {
                    view.killed = r.killed;
                    view.ended_unix_ms = Some(r.ended_unix_ms);
                }
                print(json, "ended", &view);
                return false;
            }
            _ => {}
        }
    }
    let before = said(&view);
    turn.wait().await;
    show(&mut view, &mut held, &mut event, before, json);
    drop((r, w));
    // A session that ends as it is asked is let go without an EXIT (its
    // supervisor ends what it has not served): its record says how it
    // ended. Such a one read `gone`, as if its supervisor had died.
    if print_record(&sock, &id, json).await {
        return false;
    }
    // Its supervisor went without a word (SIGKILL): what is left is what
    // `hm ls` lists, lost or orphaned, not the last state it pushed.
    let dir = sock.parent().map(PathBuf::from).unwrap_or_default();
    let left = {
        let id = id.clone();
        tokio::task::spawn_blocking(move || left_of(&dir, &id))
            .await
            .ok()
            .flatten()
    };
    if let Some(left) = left {
        view = left;
    } else {
        view.alive = false;
    }
    view.error = Some("supervisor gone".to_owned());
    print(json, "gone", &view);
    view.orphaned
}

/// Session `id` of `dir` as `hm ls` lists it once its supervisor is gone
/// without a record: its program outliving it, or lost for `hm restore`.
fn left_of(dir: &std::path::Path, id: &str) -> Option<SessionView> {
    crate::client::after_hangup(dir, id);
    if let Some(orphan) = crate::client::unlive(dir, id).filter(|v| v.orphaned) {
        return Some(orphan);
    }
    let lost = crate::lost::get(dir, id)?;
    Some(SessionView::lost(&lost.manifest, lost.restartable()))
}

/// Prints the `ended` line of session `id` from its record, if it left
/// one; whether it did.
async fn print_record(sock: &std::path::Path, id: &str, json: bool) -> bool {
    let Some(r) = record(sock, id).await else {
        return false;
    };
    print(json, "ended", &SessionView::ended(&r));
    true
}

/// The record of session `id` beside `sock`, once its supervisor has
/// written it, or has gone without one.
async fn record(sock: &std::path::Path, id: &str) -> Option<crate::ended::Ended> {
    let dir = sock.parent().map(PathBuf::from).unwrap_or_default();
    let id = id.to_owned();
    let deadline = std::time::Instant::now() + crate::client::ANSWER_TIMEOUT;
    tokio::task::spawn_blocking(move || crate::client::ended_meanwhile(&dir, &id, deadline))
        .await
        .ok()
        .flatten()
}

/// Prints the `held` STATE pushes in order, each applied to `view`;
/// `before` is what the line printed last said.
fn show(
    view: &mut SessionView,
    held: &mut Vec<StateReport>,
    event: &mut &'static str,
    mut before: Said,
    json: bool,
) {
    for report in held.drain(..) {
        view.apply(&report);
        // A push that changes what the session is doing is a state
        // change; one that changes only what it shows of it (the dialog
        // drawn after the agent's own word that it waits) is `dialog` for
        // scripts and no new line for people, to whom it said `waiting ·
        // permission` twice.
        let now = said(view);
        let kind = event_kind(event, &before, &now);
        if json || kind != "dialog" {
            print(json, kind, view);
        }
        before = now;
        *event = "state";
    }
}

/// The sessions being followed, and those left orphaned (their program
/// runs on without a supervisor to push its end).
#[derive(Clone, Default)]
struct Followed {
    live: Rc<RefCell<HashSet<String>>>,
    orphans: Rc<RefCell<HashSet<String>>>,
    /// The sessions asked for (`hm events ID...`); empty for all.
    only: Rc<HashSet<String>>,
}

impl Followed {
    fn wanted(&self, id: &str) -> bool {
        self.only.is_empty() || self.only.contains(id)
    }
}

/// Starts following every live session in `dir` not followed yet; `first`
/// names their first lines.
fn follow_new(dir: &Path, seen: &Followed, json: bool, first: &'static str) {
    let Ok(ids) = paths::list_ids(dir) else {
        return;
    };
    // Their first lines in the order of their ids.
    let mut before = None;
    for id in ids {
        if seen.live.borrow().contains(&id) || !seen.wanted(&id) {
            continue;
        }
        let Ok(session) = SessionPaths::new(dir, &id) else {
            continue;
        };
        if liveness::probe(&session.pid, &session.sock, false) != Liveness::Running {
            continue;
        }
        // Before any of them prints: the tasks run once this returns.
        ID_WIDTH.fetch_max(paths::sanitize(&id).chars().count(), Ordering::Relaxed);
        seen.live.borrow_mut().insert(id.clone());
        let seen = seen.clone();
        let (then, after) = tokio::sync::oneshot::channel();
        let turn = Turn {
            after: before.replace(after),
            then: Some(then),
        };
        tokio::task::spawn_local(async move {
            let orphaned = follow(session.sock.clone(), id.clone(), json, first, turn).await;
            // A later session may take the same id.
            seen.live.borrow_mut().remove(&id);
            if orphaned {
                seen.orphans.borrow_mut().insert(id);
            }
        });
    }
}

pub fn events(args: EventsArgs, config: &Config) -> Result<i32> {
    let dir = client::socket_dir(&args.dir, config);
    // Made as a supervisor makes it, so that sessions started later use it.
    paths::SocketDir::ensure(&dir)?;
    // Watch before listing: a session that starts in between is seen by
    // one or the other (and followed once).
    let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)
        .context("cannot watch the socket dir (inotify)")?;
    inotify
        .add_watch(&dir, AddWatchFlags::IN_CREATE | AddWatchFlags::IN_MOVED_TO)
        .with_context(|| format!("cannot watch '{}'", dir.display()))?;
    let rt = client::runtime()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async move {
        // Readiness on a duplicate; the events are read through `inotify`.
        let dup = std::os::fd::AsFd::as_fd(&inotify)
            .try_clone_to_owned()
            .context("cannot watch the socket dir")?;
        let watch = crate::fd::register(dup, tokio::io::Interest::READABLE)
            .context("cannot watch the socket dir")?;
        let seen = Followed {
            only: Rc::new(args.ids.iter().cloned().collect()),
            ..Followed::default()
        };
        // A session asked for that is not there: said, as a typo would
        // otherwise wait in silence; its events print once it starts.
        let listed = paths::list_ids(&dir).unwrap_or_default();
        for id in &args.ids {
            paths::validate_id(id)?;
            if !listed.contains(id) && !crate::ended::path(&dir, id).exists() {
                eprintln!(
                    "hm: no session '{}' yet (hm ls lists them); its events print once it starts",
                    paths::sanitize(id)
                );
            }
        }
        follow_new(&dir, &seen, args.json, "snapshot");
        loop {
            let mut guard = watch
                .readable()
                .await
                .context("cannot watch the socket dir")?;
            // Drain, then look: a socket appearing is a session starting
            // (its pid file lock is taken before the socket is bound).
            // An orphan's end has no supervisor to push it: `hm kill`
            // ending its program writes its record, which says how.
            let mut any = false;
            let mut records = Vec::new();
            while let Ok(events) = inotify.read_events() {
                if events.is_empty() {
                    break;
                }
                for name in events.iter().filter_map(|e| e.name.as_ref()) {
                    let name = name.to_string_lossy();
                    any |= name.ends_with(".sock");
                    if let Some(id) = name.strip_suffix(".ended") {
                        records.push(id.to_owned());
                    }
                }
            }
            guard.clear_ready();
            if any {
                follow_new(&dir, &seen, args.json, "started");
            }
            for id in records.into_iter().filter(|id| seen.wanted(id)) {
                if seen.orphans.borrow_mut().remove(&id)
                    && let Ok(session) = SessionPaths::new(&dir, &id)
                {
                    tokio::task::spawn_local(async move {
                        print_record(&session.sock, &id, args.json).await;
                    });
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::event_kind;

    #[test]
    fn a_push_that_keeps_the_state_is_a_dialog_event() {
        let w = |d: Option<u64>| ("waiting · permission".to_owned(), d);
        assert_eq!(event_kind("state", &w(None), &w(None)), "dialog");
        // The dialog drawn after the agent's word that it waits.
        assert_eq!(event_kind("state", &w(None), &w(Some(1))), "dialog");
        // Another dialog: a new question, a line of its own.
        assert_eq!(event_kind("state", &w(Some(1)), &w(Some(2))), "state");
        let thinking = ("active · thinking".to_owned(), None);
        assert_eq!(event_kind("state", &thinking, &w(None)), "state");
        // A session's first line is what it is, whatever came before.
        assert_eq!(event_kind("snapshot", &w(None), &w(None)), "snapshot");
        assert_eq!(
            event_kind("started", &(String::new(), None), &w(None)),
            "started"
        );
    }
}
