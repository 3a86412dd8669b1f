//! How soon a verdict follows the screen: a program under `--classifier
//! agent` asks a question again and again, and the harness times, from the
//! moment the question's bytes reach it, the pushed STATE frame that says
//! `waiting` and the first STATUS answer (what `hm status` prints) that
//! carries the waiting byte; then, after it answers, the push that says the
//! session is no longer waiting.

use std::io::{self, Read};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use heimdall::protocol::{self, Assembler, ClientType, Frame, ServerType, Status};

use crate::peer::Peer;
use crate::peers::{Bench, PATIENCE};

/// The state byte of `waiting` (docs/protocol.md).
const WAITING: u8 = 0x05;

#[derive(Debug, Default)]
pub struct Latencies {
    /// Question on the wire → STATE push of `waiting` (ms).
    pub push_ms: Vec<f64>,
    /// Question on the wire → STATUS with the waiting byte (ms).
    pub status_ms: Vec<f64>,
    /// Answer sent → STATE push of anything but `waiting` (ms).
    pub clear_ms: Vec<f64>,
}

/// The watching connection: output and state pushes, with arrival times.
struct Watch {
    stream: UnixStream,
    asm: Assembler,
    frames: Vec<Frame>,
}

impl Watch {
    /// The frames that arrive within `wait`, stamped on arrival.
    fn frames(&mut self, wait: Duration) -> io::Result<Vec<(Instant, Frame)>> {
        self.stream.set_read_timeout(Some(wait))?;
        let mut buf = [0u8; 64 * 1024];
        match self.stream.read(&mut buf) {
            Ok(0) => Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                let at = Instant::now();
                self.asm
                    .push(&buf[..n], &mut self.frames)
                    .map_err(io::Error::other)?;
                Ok(self.frames.drain(..).map(|f| (at, f)).collect())
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                Ok(Vec::new())
            }
            Err(e) => Err(e),
        }
    }

    fn send(&mut self, ty: u8, payload: &[u8]) -> io::Result<()> {
        use std::io::Write;
        self.stream.write_all(&protocol::frame(ty, payload))
    }
}

fn is_waiting(f: &Frame) -> bool {
    serde_json::from_slice::<serde_json::Value>(&f.payload).is_ok_and(|v| v["primary"] == "waiting")
}

pub fn measure(b: &Bench, reps: usize) -> Latencies {
    // Each question waits for the harness to open a fifo (not the
    // terminal: a script reading its terminal is itself waiting).
    let gate = b.fifo();
    let script = format!(
        "while :; do cat {} >/dev/null; printf 'Continue? [y/N] '; read x; printf '\\033[H\\033[2J'; done",
        gate.display()
    );
    let s = b.hm_session_with(&["--classifier", "agent"], &["sh", "-c", &script]);
    let peer = Peer::connect(&s.sock).expect("connect");
    let mut watch = Watch {
        stream: peer.nonblocking(),
        asm: Assembler::default(),
        frames: Vec::new(),
    };
    watch.stream.set_nonblocking(false).expect("blocking reads");
    watch
        .send(ClientType::Subscribe as u8, &[protocol::SUBSCRIBE_STATE])
        .expect("subscribe");
    let mut poll = Peer::connect(&s.sock).expect("connect");
    let mut out = Latencies::default();
    for _ in 0..reps {
        crate::peers::open_gate(&gate);
        let deadline = Instant::now() + PATIENCE;
        let mut seen = Vec::new();
        let (mut shown, mut pushed, mut status) = (None, None, None);
        while pushed.is_none() || status.is_none() {
            assert!(
                Instant::now() < deadline,
                "e2e: the question was never seen as waiting"
            );
            for (at, f) in watch.frames(Duration::from_millis(1)).expect("read") {
                if f.ty == ServerType::Output as u8 && shown.is_none() {
                    seen.extend_from_slice(&f.payload);
                    if seen.windows(6).any(|w| w == b"[y/N] ") {
                        shown = Some(at);
                    }
                }
                if f.ty == ServerType::State as u8 && pushed.is_none() && is_waiting(&f) {
                    pushed = Some(at);
                }
            }
            if shown.is_some() && status.is_none() {
                let f = poll.status().expect("status");
                let st = Status::decode(&f.payload).expect("a valid STATUS");
                if st.state == WAITING {
                    status = Some(Instant::now());
                }
            }
        }
        let shown = shown.expect("the question was shown before it was seen");
        let ms = |t: Instant| t.saturating_duration_since(shown).as_secs_f64() * 1e3;
        out.push_ms.push(ms(pushed.expect("pushed")));
        out.status_ms.push(ms(status.expect("status")));

        let answered = Instant::now();
        watch.send(ClientType::Input as u8, b"n\r").expect("send");
        loop {
            assert!(
                Instant::now() < answered + PATIENCE,
                "e2e: still waiting after the answer"
            );
            let frames = watch.frames(Duration::from_millis(5)).expect("read");
            if let Some((at, _)) = frames
                .iter()
                .find(|(_, f)| f.ty == ServerType::State as u8 && !is_waiting(f))
            {
                out.clear_ms
                    .push(at.duration_since(answered).as_secs_f64() * 1e3);
                break;
            }
        }
    }
    out
}
