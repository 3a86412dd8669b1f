//! `hm proxy`: serves this user's socket directory over stdin and stdout
//! (the far end of an ssh connection that a [`super::Mount`] started).
//!
//! It lists the sessions and relays channels to their sockets, with the
//! same checks as any local client (the directory is ours and private,
//! the socket is served by us, the id is a valid one); it starts a
//! session only when asked to (NEW), and reads nothing else. Nothing it
//! relays is interpreted: a channel's bytes are the session protocol's.
//!
//! It never outlives its mount: it ends when its input ends (ssh went)
//! or when the mount, which keeps alive, has said nothing for too long
//! (the link dropped silently), and every connection it made to a
//! session closes entirely then, so no session waits on a client that is
//! gone (see [`mux`]).

use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::mux::{self, Hello, Sessions};
use crate::liveness::{self, Liveness};
use crate::paths::{self, SessionPaths};

/// Serves until stdin ends, or the mount goes silent; returns the exit
/// code.
pub fn run(dir: &Path) -> Result<i32> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let code = rt.block_on(serve(dir.to_path_buf()));
    // Reading stdin and writing stdout are blocking threads, which a peer
    // that went silent can hold forever: not waited for.
    rt.shutdown_timeout(Duration::from_millis(100));
    code
}

/// The sessions in `dir` now.
fn sessions(dir: &Path) -> Sessions {
    if paths::SocketDir::check(dir).is_err() {
        return Sessions::default();
    }
    let running = paths::list_ids(dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|id| {
            SessionPaths::new(dir, id)
                .is_ok_and(|p| liveness::probe(&p.pid, &p.sock, false) == Liveness::Running)
        })
        .collect();
    let ended = crate::ended::list(dir)
        .into_iter()
        .filter_map(|r| serde_json::to_value(r).ok())
        .collect();
    Sessions { running, ended }
}

/// Starts a session here, as `hm run` in the background would; its
/// supervisor is reaped by a thread of its own.
fn start(dir: &Path, r: &mux::NewSession) -> Result<(), String> {
    paths::validate_id(&r.id).map_err(|e| e.to_string())?;
    paths::SocketDir::ensure(dir).map_err(|e| e.to_string())?;
    if r.restart {
        return restart(dir, &r.id);
    }
    // No command: this machine's shell, as the dashboard's form says (its
    // own `$SHELL` may not be there, or not be the user's here).
    let shell;
    let command = if r.command.trim().is_empty() {
        shell = std::env::var("SHELL")
            .ok()
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| "/bin/sh".to_owned());
        &shell
    } else {
        &r.command
    };
    let child = crate::launch::start_detached(
        &r.id,
        dir,
        None,
        (command, r.argv.as_deref()),
        (
            r.workdir.as_deref().map(Path::new),
            r.label.as_deref(),
            r.classifier.as_deref(),
        ),
        (r.size.map(crate::protocol::Size::clamped), !r.background),
    )
    .map_err(|e| crate::error::describe(&e))?;
    std::thread::spawn(move || {
        let mut child = child;
        let _ = child.wait();
    });
    Ok(())
}

/// Starts ended session `id` again by this machine's own `hm restart`,
/// which resumes an agent's conversation and puts the old output first
/// from what was kept here; its one-line error is the reply's.
fn restart(dir: &Path, id: &str) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find hm here: {e}"))?;
    let out = std::process::Command::new(exe)
        .arg("restart")
        .arg(id)
        .arg("--socket-dir")
        .arg(dir)
        // The proxy's stdout is the link itself.
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run hm restart here: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let last = said
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    Err(last.strip_prefix("hm: ").unwrap_or(last).trim().to_owned())
}

/// Connects to session `id`'s socket, as a local client would.
async fn open(dir: &Path, id: &str) -> Result<UnixStream, String> {
    let p = SessionPaths::new(dir, id).map_err(|e| e.to_string())?;
    paths::SocketDir::check(dir).map_err(|e| e.to_string())?;
    let stream = UnixStream::connect(&p.sock)
        .await
        .map_err(|e| format!("no session '{id}': {e}"))?;
    let uid = stream.peer_cred().map_err(|e| e.to_string())?.uid();
    if uid != nix::unistd::geteuid().as_raw() && uid != 0 {
        return Err(format!("session '{id}' is served by uid {uid}, not by us"));
    }
    Ok(stream)
}

async fn serve(dir: PathBuf) -> Result<i32> {
    let (out_tx, mut out_rx) = mpsc::channel::<Vec<u8>>(64);
    let writer = tokio::spawn(async move {
        let mut out = tokio::io::stdout();
        while let Some(frame) = out_rx.recv().await {
            if out.write_all(&frame).await.is_err() || out.flush().await.is_err() {
                break;
            }
        }
    });
    let hello = serde_json::to_vec(&Hello::ours())?;
    let _ = out_tx.send(mux::encode(mux::HELLO, 0, &hello)).await;

    // When the mount was last heard from, and how long it may say nothing
    // (from its HELLO). Watched apart from the frames, whose handling may
    // wait for a stdout that a dropped link no longer drains.
    let heard = Cell::new(Instant::now());
    let limit = Cell::new(None);
    let code = tokio::select! {
        code = frames(&dir, &out_tx, &heard, &limit) => code?,
        () = keep_alive(&out_tx, &heard, &limit) => 0,
    };
    // Every channel went with `frames`: each session sees its connection
    // close entirely, so nobody waits on a client that is gone. What is
    // queued goes out if stdout still takes it.
    drop(out_tx);
    let _ = tokio::time::timeout(Duration::from_secs(1), writer).await;
    Ok(code)
}

/// Says PING every [`mux::KEEPALIVE`]; returns once the mount has said
/// nothing for longer than it may.
async fn keep_alive(
    out: &mpsc::Sender<Vec<u8>>,
    heard: &Cell<Instant>,
    limit: &Cell<Option<Duration>>,
) {
    let mut tick = tokio::time::interval(mux::KEEPALIVE);
    loop {
        tick.tick().await;
        if limit.get().is_some_and(|l| heard.get().elapsed() > l) {
            return;
        }
        // A queue that is full is not idle: nothing to add.
        let _ = out.try_send(mux::encode(mux::PING, 0, &[]));
    }
}

/// Reads the mount's frames and carries them out, until stdin ends; the
/// exit code.
async fn frames(
    dir: &Path,
    out_tx: &mpsc::Sender<Vec<u8>>,
    heard: &Cell<Instant>,
    limit: &Cell<Option<Duration>>,
) -> Result<i32> {
    let mut stdin = tokio::io::stdin();
    let mut decoder = mux::Decoder::default();
    let mut chans: HashMap<u32, mux::Channel> = HashMap::new();
    let mut greeted = false;
    let mut buf = vec![0u8; mux::CHUNK];
    loop {
        let n = match stdin.read(&mut buf).await {
            Ok(0) | Err(_) => return Ok(0),
            Ok(n) => n,
        };
        heard.set(Instant::now());
        let Ok(frames) = decoder.push(&buf[..n]) else {
            return Ok(1);
        };
        // Channels whose connections went entirely, the mount told.
        chans.retain(|_, c| !c.finished());
        for f in frames {
            if !greeted {
                // The first frame must be a HELLO we can speak.
                let theirs: Option<Hello> = (f.ty == mux::HELLO)
                    .then(|| serde_json::from_slice(&f.payload).ok())
                    .flatten();
                match theirs {
                    Some(h) if h.proto == mux::PROTO => limit.set(h.silent_limit()),
                    _ => return Ok(1),
                }
                greeted = true;
                continue;
            }
            match f.ty {
                mux::LIST => {
                    let list = serde_json::to_vec(&sessions(dir))?;
                    let _ = out_tx.send(mux::encode(mux::SESSIONS, 0, &list)).await;
                }
                // An ended session's record, as `hm rm` here would; what
                // is left is listed back.
                mux::FORGET => {
                    if let Ok(id) = std::str::from_utf8(&f.payload)
                        && paths::validate_id(id).is_ok()
                    {
                        let _ = crate::ended::forget(dir, id);
                    }
                    let list = serde_json::to_vec(&sessions(dir))?;
                    let _ = out_tx.send(mux::encode(mux::SESSIONS, 0, &list)).await;
                }
                mux::OPEN => {
                    let id = String::from_utf8_lossy(&f.payload).into_owned();
                    match open(dir, &id).await {
                        Ok(stream) => {
                            chans.insert(f.chan, mux::relay(stream, f.chan, out_tx.clone()));
                        }
                        Err(why) => {
                            let _ = out_tx
                                .send(mux::encode(mux::CLOSE, f.chan, why.as_bytes()))
                                .await;
                        }
                    }
                }
                mux::DATA => {
                    if let Some(c) = chans.get_mut(&f.chan) {
                        c.send(f.payload);
                    }
                }
                // The client's input ended: so does the session's from
                // it, which may still answer; its own end comes back as
                // a CLOSE from the relay.
                mux::CLOSE => {
                    if let Some(c) = chans.get_mut(&f.chan) {
                        c.peer_closed();
                    }
                }
                // The client went entirely: the session sees its
                // connection close once what the client sent is written.
                mux::GONE => {
                    if let Some(c) = chans.remove(&f.chan) {
                        c.gone();
                    }
                }
                // The only way a proxy starts anything: asked, for one
                // session, as the dashboard's `n` would here.
                mux::NEW => {
                    let out = out_tx.clone();
                    let dir = dir.to_path_buf();
                    let req: Option<mux::NewSession> = serde_json::from_slice(&f.payload).ok();
                    tokio::task::spawn_blocking(move || {
                        let error = match req {
                            Some(r) => start(&dir, &r).err(),
                            None => Some("a request hm cannot read".to_owned()),
                        };
                        let reply = serde_json::to_vec(&mux::Started { error }).unwrap_or_default();
                        let _ = out.blocking_send(mux::encode(mux::STARTED, f.chan, &reply));
                    });
                }
                // PING, and what a later version adds.
                _ => {}
            }
        }
    }
}
