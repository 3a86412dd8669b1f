//! An async, framed client connection to a supervisor socket.
//!
//! Used by every built-in client (`attach`, `status`, `ls`, `kill`, `tui`).
//! Before sending anything it checks that the socket is served by our own
//! user and that the peer speaks binary framing.

use std::collections::VecDeque;
use std::io;
use std::path::{Path, PathBuf};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use super::{
    Assembler, Frame, FrameError, MAX_PAYLOAD, MODE_BINARY, Status, client, frame, server,
};

#[derive(Debug, thiserror::Error)]
pub enum ConnError {
    #[error("cannot connect to '{}': {source}", path.display())]
    Connect { path: PathBuf, source: io::Error },
    #[error("'{}' is served by uid {uid}, not by you; refusing to talk to it", path.display())]
    ForeignServer { path: PathBuf, uid: u32 },
    #[error("'{}' is not a heimdall session (mode byte 0x{mode:02x})", path.display())]
    NotHeimdall { path: PathBuf, mode: u8 },
    #[error("the session closed the connection")]
    Closed,
    #[error("the session sent a bad frame: {0}")]
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
    half: OwnedReadHalf,
    asm: Assembler,
    ready: VecDeque<Frame>,
    buf: Vec<u8>,
}

/// Writing half: each frame is written with one `write_all`.
#[derive(Debug)]
pub struct Writer {
    half: OwnedWriteHalf,
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
    let (mut r, w) = stream.into_split();
    let mut mode = [0u8; 1];
    match r.read_exact(&mut mode).await {
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
    Ok((
        Reader {
            half: r,
            asm: Assembler::new(MAX_PAYLOAD),
            ready: VecDeque::new(),
            buf: vec![0; 64 * 1024],
        },
        Writer { half: w },
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
            let n = self.half.read(&mut self.buf).await?;
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
        self.half.write_all(&frame(ty, payload)).await
    }

    /// Writes already-encoded frames in one go.
    pub async fn send_raw(&mut self, frames: &[u8]) -> io::Result<()> {
        self.half.write_all(frames).await
    }
}

/// Asks for STATUS on an otherwise idle connection.
pub async fn query_status(r: &mut Reader, w: &mut Writer) -> Result<Status, ConnError> {
    w.send(client::STATUS, &[]).await?;
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
pub async fn query_info_status(
    r: &mut Reader,
    w: &mut Writer,
) -> Result<(Option<serde_json::Value>, Status), ConnError> {
    let mut both = frame(client::INFO, &[]);
    both.extend(frame(client::STATUS, &[]));
    w.half.write_all(&both).await?;
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
