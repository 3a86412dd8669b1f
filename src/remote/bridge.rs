//! The local end of a bridge: runs `ssh HOST hm proxy` and mounts the
//! remote sessions as a socket directory of this machine (see
//! [`super`]).

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::process::{Child, ChildStderr, ChildStdout, Command};
use tokio::sync::{mpsc, oneshot};

use super::mux::{self, Hello, Sessions};
use crate::paths::{self, SocketDir};

/// How long ssh and the remote `hm` may take to say hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(20);
/// The environment variable that overrides `ssh_command`, as
/// `GIT_SSH_COMMAND` does git's.
pub const SSH_COMMAND_ENV: &str = "HM_SSH_COMMAND";

/// A machine to reach: `[user@]host[:port]`, and the `hm` to run there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    /// What the user called it (`box`, `me@box:2222`); panes say this.
    pub name: String,
    /// `[user@]host` as ssh takes it.
    pub destination: String,
    pub port: Option<u16>,
    /// The remote `hm`: a name on the remote PATH, or a path.
    pub hm: String,
}

impl Host {
    /// Parses `[user@]host[:port]`.
    pub fn parse(spec: &str) -> Result<Host, MountError> {
        let bad = || MountError::BadHost(paths::sanitize(spec));
        let (destination, port) = match spec.rsplit_once(':') {
            Some((d, p)) => (d, Some(p.parse::<u16>().map_err(|_| bad())?)),
            None => (spec, None),
        };
        let host = destination.rsplit('@').next().unwrap_or("");
        // Nothing ssh would read as an option, and nothing a shell would
        // make more of.
        let fine = |s: &str| {
            !s.is_empty()
                && !s.starts_with('-')
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-@".contains(c))
        };
        if !fine(destination) || host.is_empty() {
            return Err(bad());
        }
        Ok(Host {
            name: spec.to_owned(),
            destination: destination.to_owned(),
            port,
            hm: "hm".to_owned(),
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum MountError {
    #[error("'{0}' is not a host: give [user@]host[:port]")]
    BadHost(String),
    #[error("{host}: cannot run the ssh command '{command}': {source}")]
    Spawn {
        host: String,
        command: String,
        source: std::io::Error,
    },
    #[error("{host}: ssh could not connect: {said}")]
    Ssh { host: String, said: String },
    #[error(
        "{host}: no '{hm}' on the remote PATH ({said}); install hm there, or set `hm` for this host in [[hosts]]"
    )]
    NoRemoteHm {
        host: String,
        hm: String,
        said: String,
    },
    #[error("{host}: the remote hm cannot serve this one ({said}); update hm there to {ours}")]
    Incompatible {
        host: String,
        said: String,
        ours: String,
    },
    #[error("{host}: no answer from ssh within {} s", HELLO_TIMEOUT.as_secs())]
    Timeout { host: String },
    #[error("{host}: the connection ended: {said}")]
    Lost { host: String, said: String },
    #[error("cannot make the local directory for {host}: {source}")]
    Dir {
        host: String,
        #[source]
        source: std::io::Error,
    },
}

/// The ssh command line to use: `HM_SSH_COMMAND`, else the config's
/// `ssh_command`, else `ssh`.
pub fn ssh_command(configured: Option<&str>) -> String {
    std::env::var(SSH_COMMAND_ENV)
        .ok()
        .filter(|s| !s.trim().is_empty())
        .or_else(|| configured.map(str::to_owned))
        .unwrap_or_else(|| "ssh".to_owned())
}

/// A remote machine's sessions, served from a local directory while this
/// lives.
#[derive(Debug)]
pub struct Mount {
    dir: PathBuf,
    sessions: Sessions,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Mount {
    /// Connects to `host` and mounts its sessions; returns once they are
    /// served, or why they cannot be.
    pub fn start(host: &Host, ssh_command: &str) -> Result<Mount, MountError> {
        let dir = mount_dir(host)?;
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = oneshot::channel();
        let (h, c, d) = (host.clone(), ssh_command.to_owned(), dir.clone());
        let thread = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(run(h, c, d, ready_tx, stop_rx));
        });
        let mut mount = Mount {
            dir,
            sessions: Sessions::default(),
            stop: Some(stop_tx),
            thread: Some(thread),
        };
        match ready_rx.recv() {
            Ok(Ok(sessions)) => {
                mount.sessions = sessions;
                Ok(mount)
            }
            Ok(Err(e)) => Err(e),
            Err(_) => Err(MountError::Lost {
                host: host.name.clone(),
                said: "the bridge stopped".into(),
            }),
        }
    }

    /// The directory to use as the socket dir.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// What the remote had when mounted.
    pub fn sessions(&self) -> &Sessions {
        &self.sessions
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What a [`Spawner`] asks of its link's host.
#[derive(Debug)]
enum SpawnRequest {
    /// Start a session, and where the answer goes.
    New(mux::NewSession, SpawnReply),
    /// Forget an ended session's record.
    Forget(String),
}
/// Where the answer to a start goes.
type SpawnReply = std::sync::mpsc::Sender<Result<(), String>>;

/// Starts sessions on a [`Link`]'s host (the dashboard's `n` with a host);
/// cheap to clone, usable from any thread.
#[derive(Debug, Clone)]
pub struct Spawner {
    name: String,
    tx: mpsc::UnboundedSender<SpawnRequest>,
    state: std::sync::Arc<std::sync::Mutex<LinkState>>,
}

impl Spawner {
    /// Starts `req` there and waits until the session is served here too.
    pub fn spawn(&self, req: mux::NewSession) -> Result<(), String> {
        self.usable()?;
        let (tx, rx) = std::sync::mpsc::channel();
        self.tx
            .send(SpawnRequest::New(req, tx))
            .map_err(|_| format!("{}: the link stopped", self.name))?;
        rx.recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| Err(format!("{}: no answer", self.name)))
    }

    /// Ok if the host is up; else why not, for a person.
    fn usable(&self) -> Result<(), String> {
        match self.state.lock().map(|s| s.clone()) {
            Ok(LinkState::Up) => Ok(()),
            Ok(LinkState::Connecting) => Err(format!(
                "{} is still connecting; try again in a moment",
                self.name
            )),
            _ => Err(format!("{} is unreachable", self.name)),
        }
    }

    /// Whether the link's host is up: its sessions served here.
    pub fn up(&self) -> bool {
        self.state.lock().is_ok_and(|s| *s == LinkState::Up)
    }

    /// Forgets the record of ended session `id` there (`hm rm`), without
    /// waiting: the host's next list no longer has it.
    pub fn forget(&self, id: &str) -> Result<(), String> {
        self.usable()?;
        self.tx
            .send(SpawnRequest::Forget(id.to_owned()))
            .map_err(|_| format!("{}: the link stopped", self.name))
    }
}

/// Where a [`Link`] stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkState {
    /// Connecting, for the first time or again.
    Connecting,
    /// The remote sessions are served in the link's directory.
    Up,
    /// Down since `since` (wall clock, ms) for `why`; the next try is at
    /// `retry_unix_ms`.
    Down {
        since_unix_ms: u64,
        why: String,
        retry_unix_ms: u64,
    },
}

/// The first and the longest wait between tries to reach a host.
const BACKOFF_FIRST: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(30);
/// How often a link asks for the list of sessions, so new ones appear.
const WATCH_EVERY: Duration = Duration::from_secs(2);

/// A host kept mounted for as long as this lives: connected in the
/// background, reconnected with backoff when it drops, always in the
/// same directory (so a session keeps its socket path across
/// reconnects). `changed` is called on every change of state or of the
/// sessions mounted, from the link's own thread.
#[derive(Debug)]
pub struct Link {
    dir: PathBuf,
    state: std::sync::Arc<std::sync::Mutex<LinkState>>,
    spawner: Spawner,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Link {
    pub fn start(
        host: &Host,
        ssh_command: &str,
        changed: impl Fn() + Send + 'static,
    ) -> Result<Link, MountError> {
        let dir = mount_dir(host)?;
        let state = std::sync::Arc::new(std::sync::Mutex::new(LinkState::Connecting));
        let (spawn_tx, mut spawn_rx) = mpsc::unbounded_channel::<SpawnRequest>();
        let spawner = Spawner {
            name: host.name.clone(),
            tx: spawn_tx,
            state: state.clone(),
        };
        let (stop_tx, mut stop_rx) = oneshot::channel();
        let (h, c, d, st) = (
            host.clone(),
            ssh_command.to_owned(),
            dir.clone(),
            state.clone(),
        );
        let thread = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            let set = |s: LinkState| {
                if let Ok(mut cur) = st.lock() {
                    *cur = s;
                }
                changed();
            };
            rt.block_on(async {
                let mut wait = BACKOFF_FIRST;
                let mut down_since: Option<u64> = None;
                loop {
                    set(LinkState::Connecting);
                    let why = match connect(&h, &c).await {
                        Ok(conn) => {
                            wait = BACKOFF_FIRST;
                            let lost = |o: &Outcome| match o {
                                Outcome::Stopped => None,
                                Outcome::Lost(said) if said.is_empty() => {
                                    Some(format!("{}: the connection ended", h.name))
                                }
                                Outcome::Lost(said) => {
                                    Some(format!("{}: the connection ended: {said}", h.name))
                                }
                            };
                            // Down before the sessions' sockets close, so a
                            // client that sees its connection end can tell a
                            // host gone from a session that ended.
                            let lost_at = std::cell::Cell::new(None);
                            let went_down = |o: &Outcome| {
                                if let Some(why) = lost(o) {
                                    let now = crate::clock::unix_ms();
                                    lost_at.set(Some(now));
                                    set(LinkState::Down {
                                        since_unix_ms: now,
                                        why,
                                        retry_unix_ms: now + wait.as_millis() as u64,
                                    });
                                }
                            };
                            let outcome = serve(
                                conn,
                                &d,
                                &mut stop_rx,
                                Some((WATCH_EVERY, &mut spawn_rx)),
                                None,
                                // Up once its sessions can be connected to.
                                &|| set(LinkState::Up),
                                &went_down,
                            )
                            .await;
                            match lost(&outcome) {
                                Some(why) => {
                                    down_since = lost_at.get();
                                    why
                                }
                                None => return,
                            }
                        }
                        Err(e) => e.to_string(),
                    };
                    let now = crate::clock::unix_ms();
                    let since = *down_since.get_or_insert(now);
                    set(LinkState::Down {
                        since_unix_ms: since,
                        why,
                        retry_unix_ms: now + wait.as_millis() as u64,
                    });
                    tokio::select! {
                        _ = &mut stop_rx => return,
                        () = tokio::time::sleep(wait) => {}
                    }
                    wait = (wait * 2).min(BACKOFF_MAX);
                }
            });
        });
        Ok(Link {
            dir,
            state,
            spawner,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    /// The directory the host's sessions are served in (empty while down).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Starts sessions on this link's host.
    pub fn spawner(&self) -> Spawner {
        self.spawner.clone()
    }

    pub fn state(&self) -> LinkState {
        self.state
            .lock()
            .map_or(LinkState::Connecting, |s| s.clone())
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A new private directory for `host`'s mount.
fn mount_dir(host: &Host) -> Result<PathBuf, MountError> {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "hm-remote-{}-{}-{}",
        nix::unistd::geteuid().as_raw(),
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    SocketDir::ensure(&dir).map_err(|e| MountError::Dir {
        host: host.name.clone(),
        source: std::io::Error::other(e.to_string()),
    })?;
    Ok(dir)
}

/// Starts `ssh ... HOST hm proxy`.
fn spawn_ssh(host: &Host, ssh_command: &str) -> Result<Child, MountError> {
    let mut args: Vec<String> = vec![
        "-T".into(),
        // A password or passphrase prompt would hang a dashboard: fail.
        "-o".into(),
        "BatchMode=yes".into(),
    ];
    if let Some(p) = host.port {
        args.extend(["-p".into(), p.to_string()]);
    }
    args.push(host.destination.clone());
    args.push(host.hm.clone());
    args.push("proxy".into());
    // The command is the user's to write (`ssh -F FILE`), so a shell
    // splits it, as git does with GIT_SSH_COMMAND.
    Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("{ssh_command} \"$@\""))
        .arg("hm-ssh")
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| MountError::Spawn {
            host: host.name.clone(),
            command: ssh_command.to_owned(),
            source,
        })
}

/// The last non-empty line ssh or the remote printed.
async fn last_words(stderr: &mut Option<ChildStderr>) -> String {
    let mut text = String::new();
    if let Some(e) = stderr.as_mut() {
        let _ = tokio::time::timeout(Duration::from_secs(2), e.read_to_string(&mut text)).await;
    }
    paths::sanitize(
        text.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim(),
    )
}

/// Why the bridge never said hello, from how ssh ended.
async fn never_greeted(
    host: &Host,
    child: &mut Child,
    stderr: &mut Option<ChildStderr>,
) -> MountError {
    let said = last_words(stderr).await;
    let code = tokio::time::timeout(Duration::from_secs(2), child.wait())
        .await
        .ok()
        .and_then(Result::ok)
        .and_then(|s| s.code());
    let name = host.name.clone();
    if code == Some(127) || said.contains("not found") || said.contains("No such file") {
        return MountError::NoRemoteHm {
            host: name,
            hm: host.hm.clone(),
            said,
        };
    }
    if code == Some(255) {
        return MountError::Ssh { host: name, said };
    }
    if said.contains("unrecognized subcommand") || said.contains("proxy") {
        return MountError::Incompatible {
            host: name,
            said,
            ours: env!("CARGO_PKG_VERSION").to_owned(),
        };
    }
    MountError::Lost { host: name, said }
}

/// Reads frames from ssh's stdout until `want` says one is the answer.
async fn read_until(
    out: &mut ChildStdout,
    decoder: &mut mux::Decoder,
    pending: &mut Vec<mux::Frame>,
    want: u8,
) -> Option<mux::Frame> {
    let mut buf = vec![0u8; mux::CHUNK];
    loop {
        if let Some(i) = pending.iter().position(|f| f.ty == want) {
            return Some(pending.remove(i));
        }
        let n = out.read(&mut buf).await.ok().filter(|&n| n > 0)?;
        pending.extend(decoder.push(&buf[..n]).ok()?);
    }
}

/// A bridge that said hello and listed its sessions.
struct Connected {
    child: Child,
    stdin: tokio::process::ChildStdin,
    stdout: ChildStdout,
    stderr: Option<ChildStderr>,
    decoder: mux::Decoder,
    pending: Vec<mux::Frame>,
    sessions: Sessions,
}

/// Runs ssh, exchanges HELLO and gets the list of sessions.
async fn connect(host: &Host, ssh_command: &str) -> Result<Connected, MountError> {
    let mut child = spawn_ssh(host, ssh_command)?;
    let lost = |said: &str| MountError::Lost {
        host: host.name.clone(),
        said: said.to_owned(),
    };
    let (Some(mut stdin), Some(mut stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(lost("ssh has no stdin or stdout"));
    };
    let mut stderr = child.stderr.take();
    let mut decoder = mux::Decoder::default();
    let mut pending = Vec::new();

    // HELLO both ways, then the list of sessions.
    let hello = serde_json::to_vec(&Hello::ours()).unwrap_or_default();
    let mut greeting = mux::encode(mux::HELLO, 0, &hello);
    greeting.extend(mux::encode(mux::LIST, 0, &[]));
    let _ = stdin.write_all(&greeting).await;
    let theirs = tokio::time::timeout(
        HELLO_TIMEOUT,
        read_until(&mut stdout, &mut decoder, &mut pending, mux::HELLO),
    )
    .await;
    let theirs = match theirs {
        Err(_) => {
            return Err(MountError::Timeout {
                host: host.name.clone(),
            });
        }
        Ok(None) => return Err(never_greeted(host, &mut child, &mut stderr).await),
        Ok(Some(f)) => serde_json::from_slice::<Hello>(&f.payload).ok(),
    };
    if theirs.as_ref().is_none_or(|h| h.proto != mux::PROTO) {
        let said = theirs.map_or_else(
            || "it sent no greeting hm can read".to_owned(),
            |h| format!("hm {} speaks bridge protocol {}", h.version, h.proto),
        );
        return Err(MountError::Incompatible {
            host: host.name.clone(),
            said,
            ours: env!("CARGO_PKG_VERSION").to_owned(),
        });
    }
    let Some(list) = read_until(&mut stdout, &mut decoder, &mut pending, mux::SESSIONS).await
    else {
        return Err(lost(&last_words(&mut stderr).await));
    };
    let sessions: Sessions = serde_json::from_slice(&list.payload).unwrap_or_default();
    Ok(Connected {
        child,
        stdin,
        stdout,
        stderr,
        decoder,
        pending,
        sessions,
    })
}

/// Why serving a bridge ended.
enum Outcome {
    /// Asked to stop.
    Stopped,
    /// The connection ended; what ssh said last.
    Lost(String),
}

type Ready = std::sync::mpsc::Sender<Result<Sessions, MountError>>;

/// [`Mount`]'s thread: connect once, then serve.
async fn run(
    host: Host,
    ssh_command: String,
    dir: PathBuf,
    ready: Ready,
    mut stop: oneshot::Receiver<()>,
) {
    match connect(&host, &ssh_command).await {
        Ok(c) => {
            let _ = serve(c, &dir, &mut stop, None, Some(ready), &|| {}, &|_| {}).await;
        }
        Err(e) => {
            let _ = ready.send(Err(e));
        }
    }
}

/// Serves the remote sessions in `dir` until asked to stop or the
/// connection ends; with `watch`, asks for the list that often, so new
/// sessions appear.
async fn serve(
    c: Connected,
    dir: &Path,
    stop: &mut oneshot::Receiver<()>,
    watch: Option<(Duration, &mut mpsc::UnboundedReceiver<SpawnRequest>)>,
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
    let mut waiting_mount: Vec<(String, SpawnReply, tokio::time::Instant)> = Vec::new();
    let mut next_req = 0x8000_0000u32;
    let Connected {
        mut child,
        mut stdin,
        mut stdout,
        mut stderr,
        mut decoder,
        mut pending,
        sessions,
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
    let mut chans: HashMap<u32, mpsc::UnboundedSender<Vec<u8>>> = HashMap::new();
    let mut next_chan = 1u32;
    let mut buf = vec![0u8; mux::CHUNK];
    // After a connection closes, a session may have ended: the list is
    // asked again a few times, until it has settled.
    let mut relist_until: Option<tokio::time::Instant> = None;
    let mut relist = tokio::time::interval(RELIST_EVERY);
    let mut watching = watch.map(tokio::time::interval);
    let ended = loop {
        let relisting = relist_until.is_some_and(|t| tokio::time::Instant::now() < t);
        tokio::select! {
            _ = &mut *stop => break Outcome::Stopped,
            _ = relist.tick(), if relisting => {
                let _ = to_ssh.send(mux::encode(mux::LIST, 0, &[])).await;
            }
            _ = async { watching.as_mut().expect("guarded").tick().await }, if watching.is_some() => {
                let _ = to_ssh.send(mux::encode(mux::LIST, 0, &[])).await;
                // A start whose session never showed is answered anyway.
                let now = tokio::time::Instant::now();
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
                SpawnRequest::New(req, reply) => {
                    let id = next_req;
                    next_req = next_req.wrapping_add(1) | 0x8000_0000;
                    let body = serde_json::to_vec(&req).unwrap_or_default();
                    starting.insert(id, (req.id.clone(), reply));
                    let _ = to_ssh.send(mux::encode(mux::NEW, id, &body)).await;
                }
                SpawnRequest::Forget(id) => {
                    let _ = to_ssh.send(mux::encode(mux::FORGET, 0, id.as_bytes())).await;
                }
            },
            Some((id, client)) = accepted.recv() => {
                let chan = next_chan;
                next_chan = next_chan.wrapping_add(1).max(1);
                let (tx, rx) = mpsc::unbounded_channel();
                chans.insert(chan, tx);
                let _ = to_ssh.send(mux::encode(mux::OPEN, chan, id.as_bytes())).await;
                mux::relay(client, chan, rx, to_ssh.clone());
            }
            read = stdout.read(&mut buf) => {
                let n = match read {
                    Ok(n) if n > 0 => n,
                    _ => break Outcome::Lost(last_words(&mut stderr).await),
                };
                let Ok(frames) = decoder.push(&buf[..n]) else {
                    break Outcome::Lost("the remote hm sent a frame over the limit".into());
                };
                for f in pending.drain(..).chain(frames) {
                    match f.ty {
                        mux::DATA => {
                            if let Some(tx) = chans.get(&f.chan) {
                                let _ = tx.send(f.payload);
                            }
                        }
                        mux::CLOSE => {
                            // Dropping its sender closes the client's socket.
                            chans.remove(&f.chan);
                            relist_until = Some(tokio::time::Instant::now() + RELIST_FOR);
                            relist.reset_immediately();
                        }
                        mux::SESSIONS => {
                            let now: Sessions =
                                serde_json::from_slice(&f.payload).unwrap_or_default();
                            remount(dir, &now, &mut mounted, &accepted_tx);
                            waiting_mount.retain(|(id, reply, _)| {
                                let there = now.running.contains(id);
                                if there {
                                    let _ = reply.send(Ok(()));
                                }
                                !there
                            });
                        }
                        mux::STARTED => {
                            let Some((id, reply)) = starting.remove(&f.chan) else {
                                continue;
                            };
                            let answer: mux::Started =
                                serde_json::from_slice(&f.payload).unwrap_or_default();
                            match answer.error {
                                Some(e) => {
                                    let _ = reply.send(Err(paths::sanitize(&e)));
                                }
                                None => {
                                    // Answered once it is served here too.
                                    let until = tokio::time::Instant::now() + Duration::from_secs(5);
                                    waiting_mount.push((id, reply, until));
                                    let _ = to_ssh.send(mux::encode(mux::LIST, 0, &[])).await;
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
    };
    // The connection is gone or no longer wanted: every client sees its
    // session close, after whoever watches has been told why.
    ending(&ended);
    chans.clear();
    drop(mounted);
    drop(to_ssh);
    writer.abort();
    let _ = child.start_kill();
    let _ = child.wait().await;
    ended
}

/// How often, and for how long after a connection closed, the list of
/// sessions is asked for again.
const RELIST_EVERY: Duration = Duration::from_millis(200);
const RELIST_FOR: Duration = Duration::from_secs(3);

/// A mounted session: its pid file's lock (held: the session runs) and
/// the task accepting on its socket.
#[derive(Debug)]
struct Served {
    _lock: nix::fcntl::Flock<std::fs::File>,
    accept: tokio::task::JoinHandle<()>,
    paths: paths::SessionPaths,
}

impl Drop for Served {
    fn drop(&mut self) {
        // Files first, then the lock: a client that finds the lock free
        // finds no socket either, as with a supervisor that ended.
        self.accept.abort();
        let _ = std::fs::remove_file(&self.paths.sock);
        let _ = std::fs::remove_file(&self.paths.pid);
    }
}

/// Brings the mount in line with `now`: sessions that ended are taken
/// down, new ones served, and records of ended ones copied.
fn remount(
    dir: &Path,
    now: &Sessions,
    mounted: &mut HashMap<String, Served>,
    accepted: &mpsc::UnboundedSender<(String, UnixStream)>,
) {
    mounted.retain(|id, _| now.running.contains(id));
    for id in &now.running {
        if !mounted.contains_key(id) {
            match serve_session(dir, id, accepted.clone()) {
                Ok(s) => {
                    mounted.insert(id.clone(), s);
                }
                Err(e) => tracing::debug!("cannot mount {id}: {e}"),
            }
        }
    }
    // The mount's records follow the host's: new or changed ones written
    // (only those: a write is a file synced to disk, and the host is
    // listed every 2 s), and those forgotten there, or of sessions started
    // again, removed.
    let mut here: HashMap<String, crate::supervisor::ended::Ended> =
        crate::supervisor::ended::list(dir)
            .into_iter()
            .map(|r| (r.id.clone(), r))
            .collect();
    for record in &now.ended {
        if let Ok(r) = serde_json::from_value::<crate::supervisor::ended::Ended>(record.clone())
            && paths::validate_id(&r.id).is_ok()
            && here.remove(&r.id).as_ref() != Some(&r)
        {
            let _ = crate::supervisor::ended::write(dir, &r);
        }
    }
    for id in here.keys() {
        let _ = crate::supervisor::ended::remove(dir, id);
    }
}

/// Makes `<id>.sock` and a locked `<id>.pid` in `dir`, and hands every
/// connection to the socket to `accepted`.
fn serve_session(
    dir: &Path,
    id: &str,
    accepted: mpsc::UnboundedSender<(String, UnixStream)>,
) -> std::io::Result<Served> {
    let p = paths::SessionPaths::new(dir, id).map_err(std::io::Error::other)?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .read(true)
        .open(&p.pid)?;
    let lock = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock)
        .map_err(|(_, e)| std::io::Error::from(e))?;
    let listener = UnixListener::bind(&p.sock)?;
    std::fs::set_permissions(&p.sock, std::fs::Permissions::from_mode(0o600))?;
    let name = id.to_owned();
    let accept = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            if accepted.send((name.clone(), stream)).is_err() {
                return;
            }
        }
    });
    Ok(Served {
        _lock: lock,
        accept,
        paths: p,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_parse_as_ssh_takes_them() {
        let h = Host::parse("me@box:2222").expect("a host");
        assert_eq!((h.destination.as_str(), h.port), ("me@box", Some(2222)));
        let h = Host::parse("box.example.org").expect("a host");
        assert_eq!((h.destination.as_str(), h.port), ("box.example.org", None));
        for bad in ["", "-oProxyCommand=x", "box:99999", "box;rm", "me@", "a b"] {
            assert!(Host::parse(bad).is_err(), "{bad}");
        }
    }
}
