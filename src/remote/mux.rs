//! The bridge protocol between a [`super::Mount`] and `hm proxy`: frames
//! over the ssh connection's stdin and stdout.
//!
//! ```text
//! [type u8][channel u32 BE][length u32 BE][payload]
//! ```
//!
//! | type | name | direction | payload |
//! |---|---|---|---|
//! | `0x01` | HELLO | both, first | JSON `{"proto": 1, "version": "..."}` |
//! | `0x02` | LIST | mount → proxy | empty |
//! | `0x03` | SESSIONS | proxy → mount | JSON `{"running": [ids], "ended": [records]}` |
//! | `0x04` | OPEN | mount → proxy | the session id; the channel is the mount's choice |
//! | `0x05` | DATA | both | bytes of the channel's connection |
//! | `0x06` | CLOSE | both | empty, or why (UTF-8) |
//! | `0x07` | NEW | mount → proxy | JSON [`NewSession`]; the channel number names the request |
//! | `0x08` | STARTED | proxy → mount | JSON [`Started`], on the request's channel number |
//! | `0x09` | FORGET | mount → proxy | the id of an ended session, whose record goes (`hm rm`); answered with SESSIONS |
//! | `0x0A` | GONE | both | empty: the channel's connection closed entirely on the sender's side; close it entirely |
//! | `0x0B` | PING | both | empty: the sender is there (every [`KEEPALIVE`]) |
//!
//! A channel is one client connection to one session socket; its bytes
//! are the session protocol's, untouched. CLOSE passes on the end of a
//! connection's input (a half-close, after which it may still read);
//! GONE that it went entirely, so that nothing on the other side (a
//! supervisor counting a terminal that holds the size) waits for a
//! client that is no more. A peer that said in HELLO that it keeps alive
//! and has sent nothing for [`SILENT_LIMIT`] keepalives is gone too: the
//! link dropped. Unknown types are skipped.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// This protocol's version; a peer with another is refused at HELLO.
pub const PROTO: u32 = 1;
/// Largest payload a peer sends or accepts.
pub const MAX_PAYLOAD: usize = 1 << 20;
/// DATA payloads are cut to this, so channels take turns.
pub const CHUNK: usize = 64 * 1024;

pub const HELLO: u8 = 0x01;
pub const LIST: u8 = 0x02;
pub const SESSIONS: u8 = 0x03;
pub const OPEN: u8 = 0x04;
pub const DATA: u8 = 0x05;
pub const CLOSE: u8 = 0x06;
pub const NEW: u8 = 0x07;
pub const STARTED: u8 = 0x08;
pub const FORGET: u8 = 0x09;
pub const GONE: u8 = 0x0A;
pub const PING: u8 = 0x0B;

/// How long a channel the peer has closed entirely may take to write
/// what the peer sent before (see [`Channel::gone`]).
pub const GONE_FLUSH: Duration = Duration::from_secs(5);
/// How often each side says it is there.
pub const KEEPALIVE: Duration = Duration::from_secs(5);
/// After this many of the peer's keepalives with nothing heard, the link
/// is taken for dropped (15 s: a link that drops silently, a network gone
/// rather than a connection closed, ends both sides within that).
pub const SILENT_LIMIT: u32 = 3;

const HEADER: usize = 9;

/// HELLO's payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    pub proto: u32,
    pub version: String,
    /// How often the sender sends PING, in ms; 0 (an older hm) for never,
    /// and then its silence means nothing.
    #[serde(default)]
    pub keepalive_ms: u64,
}

impl Hello {
    pub fn ours() -> Hello {
        Hello {
            proto: PROTO,
            version: env!("CARGO_PKG_VERSION").to_owned(),
            keepalive_ms: KEEPALIVE.as_millis() as u64,
        }
    }

    /// How long this peer may say nothing before it is taken for gone;
    /// `None` if it does not keep alive.
    pub fn silent_limit(&self) -> Option<Duration> {
        (self.keepalive_ms > 0).then(|| Duration::from_millis(self.keepalive_ms) * SILENT_LIMIT)
    }
}

/// SESSIONS' payload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Sessions {
    pub running: Vec<String>,
    /// Records of ended sessions, as the remote keeps them.
    pub ended: Vec<serde_json::Value>,
}

/// NEW's payload: a session to start on the proxy's machine (the
/// dashboard's `n` with a host).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewSession {
    pub id: String,
    pub command: String,
    /// The program's words exactly, for a session started again as it
    /// ran; `command` is then the same as one line, for a proxy of an
    /// older hm (which ignores this and runs that by `sh -c`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
    #[serde(default)]
    pub workdir: Option<String>,
    #[serde(default)]
    pub label: Option<String>,
    /// `hm run --classifier`; absent: hm chooses (a proxy of an older hm
    /// ignores it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classifier: Option<String>,
    /// The pty's size at the start (`hm run --cols/--rows`, the
    /// dashboard's own size, as it gives a session started here); absent:
    /// that machine's default. A proxy of an older hm ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<crate::protocol::Size>,
    /// An ended session started again as `hm restart ID` there starts it:
    /// an agent's conversation resumed and its old output put first, from
    /// what that machine kept. A proxy of an older hm ignores it and runs
    /// `argv` (the record's command) anew.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub restart: bool,
    /// Nobody attaches to it once it runs (`hm run --bg --host`): a
    /// program that ends at once is not kept waiting for an attach, seen
    /// there as `dead` for seconds. A proxy of an older hm ignores it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub background: bool,
}

/// STARTED's payload: `error` is why it did not start.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Started {
    pub error: Option<String>,
}

/// One frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub ty: u8,
    pub chan: u32,
    pub payload: Vec<u8>,
}

pub fn encode(ty: u8, chan: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.push(ty);
    out.extend_from_slice(&chan.to_be_bytes());
    out.extend_from_slice(
        &u32::try_from(payload.len())
            .unwrap_or(u32::MAX)
            .to_be_bytes(),
    );
    out.extend_from_slice(payload);
    out
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("bridge frame of {0} bytes is over the limit")]
pub struct TooLarge(pub usize);

/// Splits a byte stream into frames.
#[derive(Debug, Default)]
pub struct Decoder {
    buf: Vec<u8>,
}

impl Decoder {
    /// Adds bytes; returns the frames now whole.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<Frame>, TooLarge> {
        self.buf.extend_from_slice(bytes);
        let mut frames = Vec::new();
        let mut at = 0;
        while self.buf.len() - at >= HEADER {
            let h = &self.buf[at..at + HEADER];
            let len = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) as usize;
            if len > MAX_PAYLOAD {
                return Err(TooLarge(len));
            }
            if self.buf.len() - at - HEADER < len {
                break;
            }
            frames.push(Frame {
                ty: h[0],
                chan: u32::from_be_bytes([h[1], h[2], h[3], h[4]]),
                payload: self.buf[at + HEADER..at + HEADER + len].to_vec(),
            });
            at += HEADER + len;
        }
        self.buf.drain(..at);
        Ok(frames)
    }
}

/// One channel's connection, relayed at either end of the bridge (see
/// [`relay`]). Dropping it closes the connection entirely.
#[derive(Debug)]
pub struct Channel {
    /// What the peer sends for it; dropped when the peer closes it (the
    /// connection's sending side is shut then).
    to_stream: Option<mpsc::UnboundedSender<Vec<u8>>>,
    /// Told when everything the peer sent is written and the sending side
    /// shut (or writing failed).
    drained: Option<oneshot::Receiver<()>>,
    reader: JoinHandle<()>,
    writer: JoinHandle<()>,
}

impl Channel {
    /// Passes the peer's bytes on to the connection.
    pub fn send(&mut self, bytes: Vec<u8>) {
        if let Some(tx) = &self.to_stream {
            let _ = tx.send(bytes);
        }
    }

    /// The peer's CLOSE: what it sent is written, then the connection's
    /// sending side is shut; the connection may still speak.
    pub fn peer_closed(&mut self) {
        self.to_stream = None;
    }

    /// The peer's GONE: the connection closes entirely once what the peer
    /// sent before is written (at most [`GONE_FLUSH`] later, for a
    /// client that does not read). Closed at once, a session's last
    /// answer was lost whenever its DATA, CLOSE and GONE came together:
    /// a one-time question (`hm status box:x`, which asks and then ends
    /// its input) got nothing, and an EXIT could go missing.
    pub fn gone(mut self) {
        self.to_stream = None;
        let drained = self.drained.take();
        tokio::spawn(async move {
            if let Some(drained) = drained {
                let _ = tokio::time::timeout(GONE_FLUSH, drained).await;
            }
            drop(self);
        });
    }

    /// Whether the connection is over here: it went entirely, and the
    /// peer has been told (GONE).
    pub fn finished(&self) -> bool {
        self.reader.is_finished()
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        // The tasks own the connection's halves: aborted, they drop them,
        // and the connection closes entirely, at once.
        self.reader.abort();
        self.writer.abort();
    }
}

/// Relays one channel's connection, at either end of the bridge: what
/// the peer sends for it (through [`Channel::send`]) goes into `stream`,
/// and what `stream` says goes to the peer as DATA; the end of its input
/// as CLOSE, and its closing entirely (or breaking) as GONE.
pub fn relay(stream: UnixStream, chan: u32, to_peer: mpsc::Sender<Vec<u8>>) -> Channel {
    let (tx, mut from_peer) = mpsc::unbounded_channel::<Vec<u8>>();
    // Room to watch for the connection's closing entirely, on a
    // descriptor of its own: the writer's readiness stays the writer's.
    let room = crate::fd::watch_room(&stream).ok();
    let (mut rd, mut wr) = stream.into_split();
    let (broken_tx, mut broken) = oneshot::channel::<()>();
    let (drained_tx, drained) = oneshot::channel::<()>();
    let writer = tokio::spawn(async move {
        while let Some(bytes) = from_peer.recv().await {
            if wr.write_all(&bytes).await.is_err() {
                let _ = broken_tx.send(());
                return;
            }
        }
        let _ = wr.shutdown().await;
        let _ = drained_tx.send(());
        // Kept until the channel is dropped: ending here would drop
        // `broken_tx`, which the reader would take for a failed write.
        std::future::pending::<()>().await;
    });
    let reader = tokio::spawn(async move {
        let mut buf = vec![0u8; CHUNK];
        loop {
            let n = tokio::select! {
                r = rd.read(&mut buf) => r,
                _ = &mut broken => break,
            };
            match n {
                Ok(0) => {
                    if to_peer.send(encode(CLOSE, chan, b"")).await.is_err() {
                        return;
                    }
                    // Its input ended; it may still read. Gone once it
                    // closed entirely, or a write to it failed.
                    until_gone(rd.as_ref(), room.as_ref(), &mut broken).await;
                    break;
                }
                Ok(n) => {
                    if to_peer.send(encode(DATA, chan, &buf[..n])).await.is_err() {
                        return;
                    }
                }
                Err(_) => break,
            }
        }
        let _ = to_peer.send(encode(GONE, chan, b"")).await;
    });
    Channel {
        to_stream: Some(tx),
        drained: Some(drained),
        reader,
        writer,
    }
}

/// Waits until a connection whose input has ended is closed entirely (or
/// a write to it failed). Without a descriptor to watch (out of them), it
/// is known only from a failed write.
async fn until_gone(
    stream: &UnixStream,
    room: Option<&tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>>,
    broken: &mut oneshot::Receiver<()>,
) {
    loop {
        tokio::select! {
            r = crate::fd::room(room) => {
                if r.is_err() || crate::fd::hung_up(stream) {
                    return;
                }
            }
            _ = &mut *broken => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A channel closed entirely by the peer right after its last bytes
    /// (a supervisor answering a one-time question and closing) gives
    /// the connection those bytes, then its end.
    #[tokio::test]
    async fn the_peers_last_bytes_arrive_before_its_going() {
        for _ in 0..50 {
            let (ours, mut theirs) = UnixStream::pair().expect("pair");
            let (to_peer, _from_us) = mpsc::channel(16);
            let mut chan = relay(ours, 7, to_peer);
            chan.send(b"the answer".to_vec());
            chan.peer_closed();
            chan.gone();
            let mut got = Vec::new();
            tokio::time::timeout(Duration::from_secs(5), theirs.read_to_end(&mut got))
                .await
                .expect("the end comes")
                .expect("read");
            assert_eq!(got, b"the answer");
        }
    }

    #[test]
    fn frames_survive_any_split() {
        let mut bytes = encode(HELLO, 0, br#"{"proto":1}"#);
        bytes.extend(encode(DATA, 7, b"abc"));
        bytes.extend(encode(CLOSE, 7, b""));
        for cut in 0..bytes.len() {
            let mut d = Decoder::default();
            let mut got = d.push(&bytes[..cut]).expect("ok");
            got.extend(d.push(&bytes[cut..]).expect("ok"));
            assert_eq!(got.len(), 3, "cut at {cut}");
            assert_eq!(
                got[1],
                Frame {
                    ty: DATA,
                    chan: 7,
                    payload: b"abc".to_vec()
                }
            );
        }
    }

    #[test]
    fn an_oversized_frame_is_refused_before_it_is_read() {
        let mut d = Decoder::default();
        let header = encode(DATA, 1, &[]);
        let mut h = header.clone();
        h[5..9].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(d.push(&h), Err(TooLarge(u32::MAX as usize)));
    }
}
