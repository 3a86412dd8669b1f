//! One task per session: its connection, subscribed for output and
//! pushed states, forwarding what comes as messages to the dashboard's
//! update and writing the requests the update makes, reconnecting after
//! errors until the session is gone.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use tokio::sync::mpsc;

use super::model::{Msg, SessionMsg};
use crate::liveness::{self, Liveness};
use crate::paths::{self, SessionPaths};
use crate::protocol::{Reply, Request, ServerType, Subscribe, conn};

/// How often an orphaned program is looked at again (see [`watch_orphan`]).
const ORPHAN_RECHECK: Duration = Duration::from_secs(2);
/// A session that does not answer its connection this fast is "not
/// responding" (and retried), rather than holding anything up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Hands a frame to the task holding `id`'s connection, if there is one:
/// a session whose connection is gone has nobody to tell.
pub fn write(senders: &HashMap<String, mpsc::UnboundedSender<Vec<u8>>>, id: &str, frame: Vec<u8>) {
    if let Some(s) = senders.get(id) {
        let _ = s.send(frame);
    }
}

/// Starts the task that keeps `id`'s connection; `launched` if we started
/// the session.
/// `id` is the pane's (`host:id` for another machine's session), `plain`
/// the session's own id in `dir`; `host` the link of another machine's.
pub fn connect(
    id: String,
    plain: &str,
    launched: bool,
    (dir, host): (&Path, Option<crate::remote::Spawner>),
    tx: &mpsc::Sender<Msg>,
    senders: &mut HashMap<String, mpsc::UnboundedSender<Vec<u8>>>,
) {
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    senders.insert(id.clone(), cmd_tx);
    if let Ok(p) = SessionPaths::new(dir, plain) {
        let where_ = Where {
            dir: dir.to_path_buf(),
            host,
        };
        tokio::task::spawn_local(session_task(id, p, where_, tx.clone(), cmd_rx, launched));
    }
}

/// Where a session is: its socket dir, and for another machine's session
/// (the dir is that host's mount) the host's link.
struct Where {
    dir: std::path::PathBuf,
    host: Option<crate::remote::Spawner>,
}

impl Where {
    /// Whether a session found gone is only unreachable: its host is down,
    /// and the mount took its socket down with the connection.
    fn host_down(&self) -> bool {
        self.host.as_ref().is_some_and(|h| !h.up())
    }

    /// How another machine's session ended, from the record its host
    /// listed: its connection may have been lost before its EXIT came.
    fn exit_code(&self, plain: &str) -> Option<i32> {
        self.host.as_ref()?;
        crate::ended::records(&self.dir)
            .into_iter()
            .find(|r| r.id == plain)
            .map(|r| r.exit_code)
    }
}

/// One session's connection: subscribe, forward what comes, send what the
/// dashboard asks, reconnect after errors until the session is gone.
async fn session_task(
    id: String,
    paths: SessionPaths,
    where_: Where,
    tx: mpsc::Sender<Msg>,
    mut cmds: mpsc::UnboundedReceiver<Vec<u8>>,
    mut launched: bool,
) {
    let mut backoff = Duration::from_millis(200);
    loop {
        let problem = match tokio::time::timeout(CONNECT_TIMEOUT, conn::connect(&paths.sock)).await
        {
            Ok(Ok((r, w))) => match serve(&id, r, w, &tx, &mut cmds, launched).await {
                Ok(Ended::Exited) => {
                    // Over. Connecting again would replay its end; its
                    // supervisor may stay a moment (for a launcher's
                    // attach, say), and the pane is gone once it has left.
                    let mut pause = Duration::from_millis(50);
                    while liveness::probe(&paths.pid, &paths.sock, false) == Liveness::Running {
                        tokio::time::sleep(pause).await;
                        pause = (pause * 2).min(Duration::from_secs(1));
                    }
                    let _ = tx
                        .send(Msg::Session(id.clone(), SessionMsg::Closed(None)))
                        .await;
                    return;
                }
                Ok(Ended::Closed) => None,
                Err(why) => Some((why, None)),
            },
            // The pane has no room for the limit and what to do about it;
            // the footer has.
            Ok(Err(e)) if crate::error::out_of_files(&e) => Some((
                "out of open files".to_string(),
                Some(crate::error::limit_note()),
            )),
            Ok(Err(e)) => Some((crate::error::one_line(&e), None)),
            Err(_) => Some(("not responding".to_string(), None)),
        };
        // Only the first subscription is the launcher's: a later one may
        // reach a newer session of the id, which waits for its own.
        launched = false;
        let gone = match hung_up(&paths).await {
            Liveness::Running => None,
            Liveness::Orphaned(pid) => Some(Some(pid)),
            // Its host dropped: the session is not known to have ended; the
            // pane says the host is down, and is connected again once it
            // is up (and ends then if the session did meanwhile).
            Liveness::Stale | Liveness::Missing if where_.host_down() => None,
            Liveness::Stale | Liveness::Missing => Some(None),
        };
        if let Some(orphan) = gone {
            if let Some(code) = where_.exit_code(&paths.id) {
                let _ = tx
                    .send(Msg::Session(id.clone(), SessionMsg::Exit(code)))
                    .await;
            }
            let _ = tx
                .send(Msg::Session(id.clone(), SessionMsg::Closed(orphan)))
                .await;
            if orphan.is_some() {
                watch_orphan(&id, &paths, &tx).await;
            }
            return;
        }
        if let Some((why, notice)) = problem {
            let why = paths::sanitize(&why);
            let notice = notice.map(|n| paths::sanitize(&n));
            if tx
                .send(Msg::Session(
                    id.clone(),
                    SessionMsg::Problem { why, notice },
                ))
                .await
                .is_err()
            {
                return;
            }
        }
        match where_.host.as_ref().filter(|h| !h.up()) {
            // Its host is down: connected again the moment it is back.
            Some(host) => host.until_up().await,
            None => {
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        }
    }
}

/// How long a program whose supervisor just went has to end on the
/// hang-up its terminal's close sends it (a shell takes a few
/// milliseconds) before its pane says it outlived it.
const HANGUP_GRACE: Duration = Duration::from_secs(1);

/// What is left of a session whose connection closed: a program still
/// running after its supervisor went is given [`HANGUP_GRACE`] to end
/// before it counts as orphaned. A shell showed `orphaned` for a second
/// on its way to lost.
async fn hung_up(paths: &SessionPaths) -> Liveness {
    let deadline = tokio::time::Instant::now() + HANGUP_GRACE;
    loop {
        let now = liveness::probe(&paths.pid, &paths.sock, false);
        if !matches!(now, Liveness::Orphaned(_)) || tokio::time::Instant::now() >= deadline {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Looks again, every [`ORPHAN_RECHECK`], at a session whose program
/// outlived its supervisor, and says once it has ended: the pane must not
/// name a pid that may since belong to another process.
async fn watch_orphan(id: &str, paths: &SessionPaths, tx: &mpsc::Sender<Msg>) {
    loop {
        tokio::time::sleep(ORPHAN_RECHECK).await;
        match liveness::probe(&paths.pid, &paths.sock, false) {
            Liveness::Orphaned(_) => continue,
            // A new session took the id; its own connection speaks for it.
            Liveness::Running => return,
            Liveness::Stale | Liveness::Missing => {}
        }
        let _ = tx
            .send(Msg::Session(id.to_string(), SessionMsg::Closed(None)))
            .await;
        return;
    }
}

enum Ended {
    Exited,
    Closed,
}

async fn serve(
    id: &str,
    mut r: conn::Reader,
    mut w: conn::Writer,
    tx: &mpsc::Sender<Msg>,
    cmds: &mut mpsc::UnboundedReceiver<Vec<u8>>,
    launched: bool,
) -> Result<Ended, String> {
    let send = |m: SessionMsg| tx.send(Msg::Session(id.to_string(), m));
    // Started by us: ours is the subscription its supervisor waits for.
    // State changes are pushed: `waiting` shows the moment it begins.
    // The journal's marks: the pane's emulator takes each size where it
    // falls in the output (its history is then the session's).
    // The replay ends with the screen as the supervisor has it: an agent's
    // banner drawn before the ring's oldest byte is on its screen, not in
    // the replay, and the dialog under it was shown rows too high.
    // The replay's end is marked: what comes before it (and the screen
    // drawn right after) is not the session working now.
    let subscribe = Subscribe {
        launcher: launched,
        mark_replay: true,
        state: true,
        marks: true,
        screen: true,
        ..Subscribe::default()
    };
    let hello = [
        Request::Info,
        Request::Subscribe(subscribe),
        Request::Status,
    ];
    w.requests(&hello).await.map_err(|e| e.to_string())?;
    send(SessionMsg::Connected)
        .await
        .map_err(|e| e.to_string())?;
    let mut exited = false;
    // A write fails when the supervisor has just closed, typically right
    // after it sent EXIT: what it sent is still read before giving up, or
    // the pane would lose its exit code.
    let mut broken: Option<String> = None;
    let mut replaying = true;
    // A replay that does not start at the session's first byte (INFO,
    // answered before it, says) ends with the screen drawn: the OUTPUT
    // frame right after REPLAY_END.
    let mut cut = false;
    let mut repaint_next = false;
    loop {
        tokio::select! {
            f = r.recv() => {
                let Some(f) = f.map_err(|e| crate::error::one_line(&e))? else {
                    return match broken {
                        Some(why) if !exited => Err(why),
                        _ if exited => Ok(Ended::Exited),
                        _ => Ok(Ended::Closed),
                    };
                };
                let status = f.ty == ServerType::StatusResp as u8;
                let reply = match conn::decode(f) {
                    Ok(r) => r,
                    // A STATUS that cannot be read is a broken session;
                    // a newer supervisor's INFO or STATE this version
                    // cannot read is passed over (STATUS still gives the
                    // state byte).
                    Err(e) if status => return Err(crate::error::one_line(&e)),
                    Err(_) => continue,
                };
                let repaint = std::mem::take(&mut repaint_next);
                let msg = match reply {
                    Reply::Output(bytes) if replaying || repaint => SessionMsg::Replayed(bytes),
                    Reply::Output(bytes) => SessionMsg::Output(bytes),
                    Reply::ReplayEnd => {
                        replaying = false;
                        repaint_next = cut;
                        continue;
                    }
                    Reply::Status(s) => SessionMsg::Status(s),
                    Reply::Info(info) => {
                        // A new label, told, says nothing of the replay.
                        if replaying && !info.relabelled {
                            cut = info.journal.as_ref().is_some_and(|j| !j.whole);
                        }
                        SessionMsg::Info(info)
                    }
                    Reply::State(report) => SessionMsg::State(*report),
                    Reply::Mark(mark) => SessionMsg::Mark(mark),
                    Reply::Acted(acted) => SessionMsg::Acted(acted),
                    Reply::Exit(code) => {
                        exited = true;
                        SessionMsg::Exit(code)
                    }
                    Reply::Error { message, .. } => return Err(message),
                    _ => continue,
                };
                if send(msg).await.is_err() {
                    return Ok(Ended::Closed);
                }
            }
            c = cmds.recv(), if broken.is_none() => match c {
                Some(bytes) => {
                    if let Err(e) = w.send_raw(&bytes).await {
                        broken = Some(e.to_string());
                    }
                }
                None => return Ok(Ended::Closed),
            },
        }
    }
}
