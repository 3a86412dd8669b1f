//! An async, framed client connection to a supervisor socket.
//!
//! Used by every built-in client (`attach`, `status`, `ls`, `kill`, `tui`).
//! Before sending anything it checks that the socket is served by our own
//! user and that the peer speaks binary framing.
//!
//! The socket is watched for reading only. Watched for room to write too,
//! every frame the supervisor takes would wake the client (each write's
//! completion raises an EPOLLOUT edge): an idle `hm attach` woke once per
//! keystroke for nothing, in the middle of the echo's round trip. A write
//! that finds the socket full watches for room until it is done.
//!
//! Both halves share the one descriptor: a dashboard holds a connection
//! per session, and a duplicate for the writer doubled its descriptors
//! (1000 sessions took 2000 of them, past the common `ulimit -n` of 1024).

use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

use super::{
    Assembler, Frame, FrameError, Info, MAX_PAYLOAD, MODE_BINARY, Reply, Request, Screen,
    ServerType, Status,
};

#[derive(Debug, thiserror::Error)]
pub enum ConnError {
    #[error("cannot connect to '{}'", path.display())]
    Connect { path: PathBuf, source: io::Error },
    #[error("'{}' is served by uid {uid}, not by you; refusing to talk to it", path.display())]
    ForeignServer { path: PathBuf, uid: u32 },
    #[error("'{}' is not a heimdall session (mode byte 0x{mode:02x})", path.display())]
    NotHeimdall { path: PathBuf, mode: u8 },
    #[error("the session closed the connection")]
    Closed,
    #[error("the session sent a bad frame")]
    Protocol(#[from] FrameError),
    #[error("the session refused the request: {0}")]
    Refused(String),
    #[error("unexpected reply from the session: {0}")]
    Unexpected(String),
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl ConnError {
    /// Whether the connection went away under the client (reset, closed,
    /// the socket gone): what a session that ends as it is asked looks
    /// like, as its supervisor closes every connection on its way out.
    pub fn lost(&self) -> bool {
        match self {
            ConnError::Closed => true,
            ConnError::Connect { source, .. } | ConnError::Io(source) => lost_kind(source.kind()),
            _ => false,
        }
    }
}

/// The kinds of I/O error a connection to a supervisor that just exited
/// fails with.
pub fn lost_kind(kind: io::ErrorKind) -> bool {
    matches!(
        kind,
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::UnexpectedEof
            | io::ErrorKind::NotFound
    )
}

/// What a connection reads at once at first: enough for a quiet
/// session's frames, and little to hold for each of a dashboard's
/// thousand connections.
const READ_MIN: usize = 4 * 1024;
/// What it grows to once reads fill the buffer: a stream's throughput
/// needs big reads, and only streams grow it.
const READ_MAX: usize = 64 * 1024;

/// Reading half: yields whole frames.
#[derive(Debug)]
pub struct Reader {
    sock: AsyncFd<Arc<OwnedFd>>,
    asm: Assembler,
    ready: VecDeque<Frame>,
    buf: Vec<u8>,
}

/// Writing half: frames are written whole, in order.
#[derive(Debug)]
pub struct Writer {
    sock: Arc<OwnedFd>,
}

/// Connects, verifies the server's uid and reads the mode byte.
pub async fn connect(path: &Path) -> Result<(Reader, Writer), ConnError> {
    let (mut reader, writer) = open(path)?;
    reader.check_mode(path).await?;
    Ok((reader, writer))
}

/// Connects, sends `reqs` at once and closes the sending half: for a
/// one-time question (`hm ls`, `hm status`). The requests go out before
/// the mode byte is read, and the end of them with them, so the
/// supervisor reads the question, answers and closes in the one wake-up
/// the connection gives it, where waiting for the mode byte first cost it
/// three (the connection, the question, the hang-up) and the client a
/// round trip. The mode byte is still checked, first in what comes back.
pub async fn ask_once(path: &Path, reqs: &[Request<'_>]) -> Result<Reader, ConnError> {
    let (mut reader, mut writer) = open(path)?;
    ask(&mut writer, reqs).await?;
    // Not connected any more means the supervisor went: the reader says
    // how (end of stream).
    match nix::sys::socket::shutdown(writer.sock.as_raw_fd(), nix::sys::socket::Shutdown::Write) {
        Ok(()) | Err(nix::Error::ENOTCONN) => {}
        Err(e) => return Err(io::Error::from(e).into()),
    }
    reader.check_mode(path).await?;
    Ok(reader)
}

/// Connects and verifies the server's uid, reading nothing yet.
///
/// The socket is made and connected here and registered with the runtime
/// once: tokio's connect registered it, asked it for its error and then
/// it was taken out and registered again for reading only (three system
/// calls more for each of the fifty connections of an `hm ls`). A Unix
/// socket connects at once or not at all (a full backlog), so there is
/// nothing to wait for.
fn open(path: &Path) -> Result<(Reader, Writer), ConnError> {
    use nix::sys::socket::{
        AddressFamily, SockFlag, SockType, UnixAddr, getsockopt, socket, sockopt::PeerCredentials,
    };
    let connect_err = |e: nix::Error| ConnError::Connect {
        path: path.to_path_buf(),
        source: e.into(),
    };
    let sock = socket(
        AddressFamily::Unix,
        SockType::Stream,
        SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC,
        None,
    )
    .map_err(connect_err)?;
    let addr = UnixAddr::new(path).map_err(connect_err)?;
    nix::sys::socket::connect(sock.as_raw_fd(), &addr).map_err(connect_err)?;
    let uid = getsockopt(&sock, PeerCredentials)
        .map_err(io::Error::from)?
        .uid();
    let me = nix::unistd::geteuid().as_raw();
    if uid != me && uid != 0 {
        return Err(ConnError::ForeignServer {
            path: path.to_path_buf(),
            uid,
        });
    }
    let sock = Arc::new(sock);
    let writer = Writer {
        sock: Arc::clone(&sock),
    };
    Ok((
        Reader {
            sock: crate::fd::register(sock, Interest::READABLE)?,
            asm: Assembler::new(MAX_PAYLOAD),
            ready: VecDeque::new(),
            buf: vec![0; READ_MIN],
        },
        writer,
    ))
}

impl Reader {
    /// Reads the mode byte the supervisor sends first, and whatever frames
    /// came with it in the same read.
    async fn check_mode(&mut self, path: &Path) -> Result<(), ConnError> {
        let n = crate::fd::read_some(&self.sock, &mut self.buf).await?;
        let Some(&mode) = self.buf[..n].first() else {
            return Err(ConnError::Closed);
        };
        if mode != MODE_BINARY {
            return Err(ConnError::NotHeimdall {
                path: path.to_path_buf(),
                mode,
            });
        }
        let mut out = Vec::new();
        self.asm.push(&self.buf[1..n], &mut out)?;
        self.ready.extend(out);
        Ok(())
    }

    /// The next frame, or `None` when the supervisor closed the connection
    /// at a frame boundary.
    pub async fn recv(&mut self) -> Result<Option<Frame>, ConnError> {
        loop {
            if let Some(f) = self.ready.pop_front() {
                return Ok(Some(f));
            }
            let n = crate::fd::read_some(&self.sock, &mut self.buf).await?;
            if n == 0 {
                return Ok(None);
            }
            let mut out = Vec::new();
            self.asm.push(&self.buf[..n], &mut out)?;
            self.ready.extend(out);
            if n == self.buf.len() && n < READ_MAX {
                self.buf.resize(n * 2, 0);
            }
        }
    }

    /// Frames already received and decoded, without waiting.
    pub fn take_ready(&mut self) -> impl Iterator<Item = Frame> + '_ {
        self.ready.drain(..)
    }

    /// The next message, or `None` when the supervisor closed the
    /// connection at a frame boundary.
    pub async fn reply(&mut self) -> Result<Option<Reply>, ConnError> {
        match self.recv().await? {
            Some(f) => decode(f).map(Some),
            None => Ok(None),
        }
    }

    /// Like [`reply`](Self::reply) but an ERROR becomes `Err(Refused)` and
    /// end of stream becomes `Err(Closed)`.
    pub async fn expect(&mut self) -> Result<Reply, ConnError> {
        match self.reply().await? {
            Some(Reply::Error { message, .. }) => Err(ConnError::Refused(message)),
            Some(r) => Ok(r),
            None => Err(ConnError::Closed),
        }
    }
}

/// A frame as a [`Reply`]; a payload that does not fit its type is the
/// session's mistake.
pub fn decode(f: Frame) -> Result<Reply, ConnError> {
    Reply::decode(f).map_err(|e| ConnError::Unexpected(e.to_string()))
}

impl Writer {
    /// Sends one request.
    pub async fn request(&mut self, req: &Request<'_>) -> io::Result<()> {
        self.send_raw(&req.encode()).await
    }

    /// Sends requests in one write.
    pub async fn requests(&mut self, reqs: &[Request<'_>]) -> io::Result<()> {
        let mut frames = Vec::new();
        for r in reqs {
            r.encode_into(&mut frames);
        }
        self.send_raw(&frames).await
    }

    /// Writes already-encoded frames, all of them. Cancel-safe only in
    /// that nothing is written twice; a cancelled call may have written
    /// part of `frames`.
    pub async fn send_raw(&mut self, mut frames: &[u8]) -> io::Result<()> {
        // Watched for room only while the socket is full (see the module).
        let mut watch: Option<AsyncFd<OwnedFd>> = None;
        while !frames.is_empty() {
            match crate::fd::write_now(&self.sock, frames)? {
                0 => {
                    if watch.is_none() {
                        watch = Some(crate::fd::watch_room(&self.sock)?);
                    }
                    crate::fd::room(watch.as_ref()).await?;
                }
                n => frames = &frames[n..],
            }
        }
        Ok(())
    }
}

/// Whether a failed write means the supervisor has closed the connection.
/// What it sent before closing (an EXIT, typically) is still there to be
/// read, so the reader should tell how things ended, not the writer.
pub fn closed_by_peer(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
    )
}

/// Sends questions whose answers are read next: a connection the session
/// has closed is told by the reader (end of stream, or an EXIT before it).
pub async fn ask(w: &mut Writer, reqs: &[Request<'_>]) -> Result<(), ConnError> {
    match w.requests(reqs).await {
        Err(e) if !closed_by_peer(&e) => Err(e.into()),
        _ => Ok(()),
    }
}

/// Asks for STATUS on an otherwise idle connection.
pub async fn query_status(r: &mut Reader, w: &mut Writer) -> Result<Status, ConnError> {
    ask(w, &[Request::Status]).await?;
    read_status(r).await
}

/// Asks for the session's current screen (SCREEN).
pub async fn query_screen(r: &mut Reader, w: &mut Writer) -> Result<Screen, ConnError> {
    ask(w, &[Request::Screen]).await?;
    read_screen(r).await
}

/// Asks for INFO then STATUS. A supervisor without the INFO extension
/// ignores the unknown request, so the STATUS answer arriving first means
/// "no INFO available" rather than a hang; nor does an INFO this client
/// cannot read cost the STATUS.
pub async fn query_info_status(
    r: &mut Reader,
    w: &mut Writer,
) -> Result<(Option<Info>, Status), ConnError> {
    ask(w, &[Request::Info, Request::Status]).await?;
    read_info_status(r).await
}

/// The session's STATUS, asked on a connection of its own
/// ([`ask_once`]).
pub async fn status_at(path: &Path) -> Result<Status, ConnError> {
    read_status(&mut ask_once(path, &[Request::Status]).await?).await
}

/// The session's screen, asked on a connection of its own.
pub async fn screen_at(path: &Path) -> Result<Screen, ConnError> {
    read_screen(&mut ask_once(path, &[Request::Screen]).await?).await
}

/// INFO and STATUS (see [`query_info_status`]), asked on a connection of
/// its own.
pub async fn info_status_at(path: &Path) -> Result<(Option<Info>, Status), ConnError> {
    read_info_status(&mut ask_once(path, &[Request::Info, Request::Status]).await?).await
}

/// The screen, INFO and STATUS, asked together on a connection of its own.
pub async fn screen_info_status_at(
    path: &Path,
) -> Result<(Screen, Option<Info>, Status), ConnError> {
    let mut r = ask_once(path, &[Request::Screen, Request::Info, Request::Status]).await?;
    let screen = read_screen(&mut r).await?;
    let (info, status) = read_info_status(&mut r).await?;
    Ok((screen, info, status))
}

async fn read_status(r: &mut Reader) -> Result<Status, ConnError> {
    loop {
        if let Reply::Status(s) = r.expect().await? {
            return Ok(s);
        }
    }
}

async fn read_screen(r: &mut Reader) -> Result<Screen, ConnError> {
    loop {
        if let Reply::Screen(s) = r.expect().await? {
            return Ok(*s);
        }
    }
}

async fn read_info_status(r: &mut Reader) -> Result<(Option<Info>, Status), ConnError> {
    let mut info = None;
    loop {
        let Some(f) = r.recv().await? else {
            return Err(ConnError::Closed);
        };
        if f.ty == ServerType::Info as u8 {
            info = serde_json::from_slice(&f.payload).ok();
            continue;
        }
        match decode(f)? {
            Reply::Status(s) => return Ok((info, s)),
            Reply::Error { message, .. } => return Err(ConnError::Refused(message)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A one-time question goes out whole, its end with it, before the
    /// mode byte is read: a server that answers only once it has read to
    /// the end of the question (which waiting for the mode byte first
    /// would never let it do) is answered, and its mode byte checked.
    #[tokio::test]
    async fn a_one_time_question_is_sent_and_ended_before_the_mode_byte() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.sock");
        let listener = tokio::net::UnixListener::bind(&path).expect("bind");
        let status = Status {
            pid: 42,
            idle_ms: 7,
            alive: true,
            state: 1,
            state_ms: 3,
        };
        let server = tokio::spawn(async move {
            let (mut sock, _) = listener.accept().await.expect("accept");
            let mut asked = Vec::new();
            sock.read_to_end(&mut asked).await.expect("read");
            let mut answer = vec![MODE_BINARY];
            answer.extend(Reply::Status(status).encode());
            sock.write_all(&answer).await.expect("write");
            asked
        });
        let got = tokio::time::timeout(std::time::Duration::from_secs(5), status_at(&path))
            .await
            .expect("answered without waiting for the mode byte first")
            .expect("status");
        assert_eq!(got, status);
        assert_eq!(server.await.expect("server"), Request::Status.encode());
    }

    /// What is not a heimdall session is still told as such.
    #[tokio::test]
    async fn a_one_time_question_checks_the_mode_byte() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.sock");
        let listener = tokio::net::UnixListener::bind(&path).expect("bind");
        let server = tokio::spawn(async move {
            let (mut sock, _) = listener.accept().await.expect("accept");
            sock.write_all(b"SSH-2.0-x\r\n").await.expect("write");
        });
        let err = status_at(&path).await.expect_err("not heimdall");
        assert!(
            matches!(err, ConnError::NotHeimdall { mode: b'S', .. }),
            "{err:?}"
        );
        server.await.expect("server");
    }
}
