//! A minimal protocol client for setting up measurements: connect, ask
//! STATUS, subscribe. The measuring loops then take its socket and read it
//! themselves, non-blocking.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use heimdall::protocol::{self, Assembler, ClientType, Frame, ServerType};

/// How long anything may take to come up before the harness gives up.
pub const PATIENCE: Duration = Duration::from_secs(15);

/// A minimal protocol client, blocking until [`Peer::nonblocking`].
#[derive(Debug)]
pub struct Peer {
    pub stream: UnixStream,
    asm: Assembler,
    frames: Vec<Frame>,
}

impl Peer {
    pub fn connect(sock: &Path) -> io::Result<Peer> {
        let mut stream = UnixStream::connect(sock)?;
        stream.set_read_timeout(Some(PATIENCE))?;
        let mut mode = [0u8; 1];
        stream.read_exact(&mut mode)?;
        if mode[0] != protocol::MODE_BINARY {
            return Err(io::Error::other("not a heimdall session"));
        }
        Ok(Peer {
            stream,
            asm: Assembler::default(),
            frames: Vec::new(),
        })
    }

    pub fn send(&mut self, ty: u8, payload: &[u8]) -> io::Result<()> {
        self.stream.write_all(&protocol::frame(ty, payload))
    }

    /// The next frame of type `ty`; others are skipped.
    pub fn expect(&mut self, ty: u8) -> io::Result<Frame> {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            if let Some(i) = self.frames.iter().position(|f| f.ty == ty) {
                let f = self.frames.remove(i);
                self.frames.drain(..i);
                return Ok(f);
            }
            self.frames.clear();
            let n = self.stream.read(&mut buf)?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            self.asm
                .push(&buf[..n], &mut self.frames)
                .map_err(io::Error::other)?;
        }
    }

    pub fn status(&mut self) -> io::Result<Frame> {
        self.send(ClientType::Status as u8, &[])?;
        self.expect(ServerType::StatusResp as u8)
    }

    /// Subscribes and returns once the supervisor has registered it (the
    /// STATUS sent after SUBSCRIBE is answered in order).
    pub fn subscribe(&mut self, flags: &[u8]) -> io::Result<()> {
        let mut both = protocol::frame(ClientType::Subscribe as u8, flags);
        both.extend(protocol::frame(ClientType::Status as u8, &[]));
        self.stream.write_all(&both)?;
        self.expect(ServerType::StatusResp as u8).map(drop)
    }

    /// For the measuring loops; only call when no frame is buffered.
    pub fn nonblocking(self) -> UnixStream {
        assert!(self.frames.is_empty(), "e2e: frames left behind");
        self.stream
            .set_nonblocking(true)
            .expect("make the socket non-blocking");
        self.stream
    }
}
