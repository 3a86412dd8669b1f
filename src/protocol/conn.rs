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

use std::collections::VecDeque;
use std::io;
use std::path::{Path, PathBuf};

use std::os::fd::OwnedFd;

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, Interest};
use tokio::net::UnixStream;

use super::{
    Assembler, Frame, FrameError, MAX_PAYLOAD, MODE_BINARY, Status, client, frame, server,
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

/// Reading half: yields whole frames.
#[derive(Debug)]
pub struct Reader {
    sock: AsyncFd<OwnedFd>,
    asm: Assembler,
    ready: VecDeque<Frame>,
    buf: Vec<u8>,
}

/// Writing half: frames are written whole, in order.
#[derive(Debug)]
pub struct Writer {
    sock: OwnedFd,
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
    let sock = OwnedFd::from(stream.into_std()?);
    let writer = Writer {
        sock: sock.try_clone()?,
    };
    Ok((
        Reader {
            sock: crate::pty::register_fd_for(sock, Interest::READABLE)?,
            asm: Assembler::new(MAX_PAYLOAD),
            ready: VecDeque::new(),
            buf: vec![0; 64 * 1024],
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
            let n = crate::pty::read_some(&self.sock, &mut self.buf).await?;
            if n == 0 {
                return Ok(None);
            }
            let mut out = Vec::new();
            self.asm.push(&self.buf[..n], &mut out)?;
            self.ready.extend(out);
        }
    }

    /// Frames already received and decoded, without waiting.
    pub fn take_ready(&mut self) -> impl Iterator<Item = Frame> + '_ {
        self.ready.drain(..)
    }

    /// Like [`recv`](Self::recv) but an ERROR frame becomes `Err(Refused)`
    /// and end of stream becomes `Err(Closed)`.
    pub async fn expect(&mut self) -> Result<Frame, ConnError> {
        match self.recv().await? {
            Some(f) if f.ty == server::ERROR => {
                Err(ConnError::Refused(super::decode_error(&f.payload).1))
            }
            Some(f) => Ok(f),
            None => Err(ConnError::Closed),
        }
    }
}

impl Writer {
    pub async fn send(&mut self, ty: u8, payload: &[u8]) -> io::Result<()> {
        self.send_raw(&frame(ty, payload)).await
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
                        watch = Some(crate::pty::watch_room(&self.sock)?);
                    }
                    crate::pty::room(watch.as_ref()).await?;
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

/// Sends a question whose answer is read next: a connection the session
/// has closed is told by the reader (end of stream, or an EXIT before it).
pub async fn ask(w: &mut Writer, frames: &[u8]) -> Result<(), ConnError> {
    match w.send_raw(frames).await {
        Err(e) if !closed_by_peer(&e) => Err(e.into()),
        _ => Ok(()),
    }
}

/// Asks for STATUS on an otherwise idle connection.
pub async fn query_status(r: &mut Reader, w: &mut Writer) -> Result<Status, ConnError> {
    ask(w, &frame(client::STATUS, &[])).await?;
    loop {
        let f = r.expect().await?;
        if f.ty == server::STATUS_RESP {
            return Status::decode(&f.payload).map_err(|e| ConnError::Unexpected(e.to_string()));
        }
    }
}

/// Asks for INFO then STATUS. A supervisor without the INFO extension
/// ignores the unknown request, so the STATUS answer arriving first means
/// "no INFO available" rather than a hang.
/// Asks for the session's current screen (SCREEN), as JSON.
pub async fn query_screen(r: &mut Reader, w: &mut Writer) -> Result<serde_json::Value, ConnError> {
    ask(w, &frame(client::SCREEN, &[])).await?;
    loop {
        let f = r.expect().await?;
        if f.ty == server::SCREEN {
            return serde_json::from_slice(&f.payload)
                .map_err(|e| ConnError::Unexpected(format!("unreadable SCREEN: {e}")));
        }
    }
}

pub async fn query_info_status(
    r: &mut Reader,
    w: &mut Writer,
) -> Result<(Option<serde_json::Value>, Status), ConnError> {
    let mut both = frame(client::INFO, &[]);
    both.extend(frame(client::STATUS, &[]));
    ask(w, &both).await?;
    let mut info = None;
    loop {
        let f = r.expect().await?;
        match f.ty {
            server::INFO => info = serde_json::from_slice(&f.payload).ok(),
            server::STATUS_RESP => {
                let s =
                    Status::decode(&f.payload).map_err(|e| ConnError::Unexpected(e.to_string()))?;
                return Ok((info, s));
            }
            _ => {}
        }
    }
}
