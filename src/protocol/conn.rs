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
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, Interest};
use tokio::net::UnixStream;

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
    let stream = UnixStream::connect(path)
        .await
        .map_err(|source| ConnError::Connect {
            path: path.to_path_buf(),
            source,
        })?;
    let uid = stream.peer_cred()?.uid();
    let me = nix::unistd::geteuid().as_raw();
    if uid != me && uid != 0 {
        return Err(ConnError::ForeignServer {
            path: path.to_path_buf(),
            uid,
        });
    }
    let mut stream = stream;
    let mut mode = [0u8; 1];
    match stream.read_exact(&mut mode).await {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Err(ConnError::Closed),
        Err(e) => return Err(e.into()),
    }
    if mode[0] != MODE_BINARY {
        return Err(ConnError::NotHeimdall {
            path: path.to_path_buf(),
            mode: mode[0],
        });
    }
    let sock = Arc::new(OwnedFd::from(stream.into_std()?));
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
            match nix::unistd::write(&self.sock, frames) {
                Ok(n) => frames = &frames[n..],
                Err(nix::Error::EINTR) => {}
                Err(nix::Error::EAGAIN) => {
                    if watch.is_none() {
                        watch = Some(crate::fd::watch_room(&self.sock)?);
                    }
                    crate::fd::room(watch.as_ref()).await?;
                }
                Err(e) => return Err(e.into()),
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
    loop {
        if let Reply::Status(s) = r.expect().await? {
            return Ok(s);
        }
    }
}

/// Asks for the session's current screen (SCREEN).
pub async fn query_screen(r: &mut Reader, w: &mut Writer) -> Result<Screen, ConnError> {
    ask(w, &[Request::Screen]).await?;
    loop {
        if let Reply::Screen(s) = r.expect().await? {
            return Ok(*s);
        }
    }
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
