//! Serving a connected bridge: every connection to a mounted socket
//! becomes a channel over ssh, and what the host says (its list, a
//! channel's bytes, a start's answer) is carried out here.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::MountError;
use super::connect::{Connected, last_words};
use super::served::{Served, remount};
use crate::paths;
use crate::remote::mux::{self, Sessions};

/// What a [`super::super::Spawner`] asks of its link's host.
#[derive(Debug)]
pub(in crate::remote) enum Request {
    /// Start a session, and where the answer goes.
    New(mux::NewSession, SpawnReply),
    /// Forget an ended session's record; answered, if asked, once the
    /// host's list no longer has it.
    Forget(String, Option<SpawnReply>),
}
/// Where the answer to a start goes.
pub(in crate::remote) type SpawnReply = std::sync::mpsc::Sender<Result<(), String>>;

/// Why serving a bridge ended.
pub(in crate::remote) enum Outcome {
    /// Asked to stop.
    Stopped,
    /// The connection ended, or went silent; what ssh said last, or the
    /// bridge's own reason, and how long before this the host was last
    /// heard from (its silence: the host was gone from then, not from
    /// when the silence was judged too long).
    Lost(String, std::time::Duration),
}

/// Where a [`super::Mount`] hears that its sessions are served, or why
/// they cannot be.
pub(super) type Ready = std::sync::mpsc::Sender<Result<Sessions, MountError>>;

/// Serves the remote sessions in `dir` until asked to stop or the
/// connection ends (or goes silent: see [`mux::SILENT_LIMIT`]); with
/// `watch`, asks for the list that often, so new sessions appear. Ends
/// ssh, and every connection it served, before it returns.
pub(in crate::remote) async fn serve(
    c: Connected,
    dir: &Path,
    stop: &mut oneshot::Receiver<()>,
    watch: Option<(Duration, &mut mpsc::UnboundedReceiver<Request>)>,
    ready: Option<Ready>,
    mounted_now: &dyn Fn(),
    ending: &dyn Fn(&Outcome),
) -> Outcome {
    let (watch, mut spawns) = match watch {
        Some((every, rx)) => (Some(every), Some(rx)),
        None => (None, None),
    };
    // Sessions asked for and started there, answered once mounted here.
    let mut starting: HashMap<u32, (String, SpawnReply)> = HashMap::new();
    let mut waiting_mount: Vec<(String, SpawnReply, Instant)> = Vec::new();
    // Records asked to be forgotten there, answered once the list says so.
    let mut forgetting: Vec<(String, SpawnReply)> = Vec::new();
    let mut next_req = 0x8000_0000u32;
    let Connected {
        ssh,
        mut stdin,
        mut stdout,
        mut stderr,
        mut decoder,
        mut pending,
        sessions,
        theirs,
    } = c;
    let (to_ssh, mut to_ssh_rx) = mpsc::channel::<Vec<u8>>(64);
    let (accepted_tx, mut accepted) = mpsc::unbounded_channel::<(String, UnixStream)>();
    let mut mounted: HashMap<String, Served> = HashMap::new();
    remount(dir, &sessions, &mut mounted, &accepted_tx);
    // Ready once the sockets are there to connect to.
    mounted_now();
    if let Some(ready) = ready {
        let _ = ready.send(Ok(sessions));
    }

    let writer = tokio::spawn(async move {
        while let Some(frame) = to_ssh_rx.recv().await {
            if stdin.write_all(&frame).await.is_err() {
                break;
            }
        }
    });
    let mut chans: HashMap<u32, mux::Channel> = HashMap::new();
    let mut next_chan = 1u32;
    let mut buf = vec![0u8; mux::CHUNK];
    // After a connection closes, a session may have ended: the list is
    // asked again a few times, until it has settled.
    let mut relist_until: Option<Instant> = None;
    let mut relist = tokio::time::interval(RELIST_EVERY);
    let mut watching = watch.map(tokio::time::interval);
    let mut keepalive = tokio::time::interval(mux::KEEPALIVE);
    let mut heard = Instant::now();
    let ended = loop {
        let relisting = relist_until.is_some_and(|t| Instant::now() < t);
        tokio::select! {
            _ = &mut *stop => break Outcome::Stopped,
            _ = keepalive.tick() => {
                if let Some(limit) = theirs.silent_limit()
                    && heard.elapsed() > limit
                {
                    break Outcome::Lost(
                        format!("no word for {} s", limit.as_secs()),
                        heard.elapsed(),
                    );
                }
                // A queue that is full is not idle: nothing to add.
                let _ = to_ssh.try_send(mux::encode(mux::PING, 0, &[]));
                // Channels whose connections went entirely, told.
                chans.retain(|_, c| !c.finished());
            }
            // Asking again is skipped while ssh takes nothing: waiting
            // here would keep the silence above from being noticed.
            _ = relist.tick(), if relisting => {
                let _ = to_ssh.try_send(mux::encode(mux::LIST, 0, &[]));
            }
            _ = async { watching.as_mut().expect("guarded").tick().await }, if watching.is_some() => {
                let _ = to_ssh.try_send(mux::encode(mux::LIST, 0, &[]));
                // A start whose session never showed is answered anyway.
                let now = Instant::now();
                waiting_mount.retain(|(id, reply, until)| {
                    let late = *until <= now;
                    if late {
                        let _ = reply.send(Err(format!("'{id}' started there but is not listed")));
                    }
                    !late
                });
            }
            Some(ask) = async {
                match spawns.as_mut() {
                    Some(rx) => rx.recv().await,
                    None => std::future::pending().await,
                }
            } => match ask {
                Request::New(req, reply) => {
                    let id = next_req;
                    next_req = next_req.wrapping_add(1) | 0x8000_0000;
                    let body = serde_json::to_vec(&req).unwrap_or_default();
                    starting.insert(id, (req.id.clone(), reply));
                    let _ = to_ssh.send(mux::encode(mux::NEW, id, &body)).await;
                }
                Request::Forget(id, reply) => {
                    let _ = to_ssh.send(mux::encode(mux::FORGET, 0, id.as_bytes())).await;
                    if let Some(reply) = reply {
                        forgetting.push((id, reply));
                    }
                }
            },
            Some((id, client)) = accepted.recv() => {
                let chan = next_chan;
                next_chan = next_chan.wrapping_add(1).max(1);
                let _ = to_ssh.send(mux::encode(mux::OPEN, chan, id.as_bytes())).await;
                chans.insert(chan, mux::relay(client, chan, to_ssh.clone()));
            }
            read = stdout.read(&mut buf) => {
                let n = match read {
                    Ok(n) if n > 0 => n,
                    _ => break Outcome::Lost(last_words(&mut stderr).await, std::time::Duration::ZERO),
                };
                heard = Instant::now();
                let Ok(frames) = decoder.push(&buf[..n]) else {
                    break Outcome::Lost(
                        "the remote hm sent a frame over the limit".into(),
                        std::time::Duration::ZERO,
                    );
                };
                for f in pending.drain(..).chain(frames) {
                    match f.ty {
                        mux::DATA => {
                            if let Some(c) = chans.get_mut(&f.chan) {
                                c.send(f.payload);
                            }
                        }
                        mux::CLOSE => {
                            // The session's end: the client reads to the
                            // end of what it said, then its end.
                            if let Some(c) = chans.get_mut(&f.chan) {
                                c.peer_closed();
                            }
                            relist_until = Some(Instant::now() + RELIST_FOR);
                            relist.reset_immediately();
                        }
                        // Closed there entirely: so is the client's here,
                        // once it has been written what came before.
                        mux::GONE => {
                            if let Some(c) = chans.remove(&f.chan) {
                        c.gone();
                    }
                        }
                        mux::SESSIONS => {
                            let now: Sessions =
                                serde_json::from_slice(&f.payload).unwrap_or_default();
                            remount(dir, &now, &mut mounted, &accepted_tx);
                            // Served here now, or ended there already (a
                            // program that exits at once: its supervisor
                            // leaves before the list is made): started
                            // all the same, with nothing left to serve.
                            waiting_mount.retain(|(id, reply, _)| {
                                let there = now.running.contains(id)
                                    || now.ended.iter().any(|r| r["id"] == id.as_str());
                                if there {
                                    let _ = reply.send(Ok(()));
                                }
                                !there
                            });
                            // FORGET is answered with the list. A list
                            // that still has the record may be the answer
                            // to a LIST sent before it: the asker's own
                            // deadline ends the wait.
                            forgetting.retain(|(id, reply)| {
                                let kept = now.ended.iter().any(|r| r["id"] == id.as_str());
                                if !kept {
                                    let _ = reply.send(Ok(()));
                                }
                                kept
                            });
                        }
                        mux::STARTED => {
                            let Some((id, reply)) = starting.remove(&f.chan) else {
                                continue;
                            };
                            let answer: mux::Started =
                                serde_json::from_slice(&f.payload).unwrap_or_default();
                            match answer.error {
                                // Whole (a cut hid the command it says to
                                // run), but printable and bounded.
                                Some(e) => {
                                    let e: String = e.chars().take(400).collect();
                                    let _ = reply.send(Err(paths::printable(&e)));
                                }
                                None => {
                                    // Answered once it is served here too.
                                    let until = Instant::now() + Duration::from_secs(5);
                                    waiting_mount.push((id, reply, until));
                                    let _ = to_ssh.send(mux::encode(mux::LIST, 0, &[])).await;
                                }
                            }
                        }
                        // PING, and what a later version adds.
                        _ => {}
                    }
                }
            }
        }
    };
    // The connection is gone or no longer wanted: every client sees its
    // session close, after whoever watches has been told why; then ssh,
    // and what it started, end (the proxy there sees its input end).
    ending(&ended);
    chans.clear();
    drop(mounted);
    drop(to_ssh);
    writer.abort();
    ssh.end().await;
    ended
}

/// How often, and for how long after a connection closed, the list of
/// sessions is asked for again.
const RELIST_EVERY: Duration = Duration::from_millis(200);
const RELIST_FOR: Duration = Duration::from_secs(3);
