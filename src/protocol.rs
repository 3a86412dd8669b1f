//! The wire protocol: frame types, payload layouts, limits and a pure,
//! incremental, allocation-free frame splitter.
//!
//! Every frame is `[type: u8][length: u32 BE][payload]`; on connect the
//! supervisor writes one unframed mode byte (`0x00`). Layouts are pinned by
//! golden tests below and documented in `docs/protocol.md`. This module does
//! no I/O: [`conn`] wraps it for async sockets.

pub mod act;
pub mod conn;
pub mod mark;
pub mod message;
pub mod report;
pub use act::{Act, Acted, ActionRecord, AutomationInfo, DialogInfo, DialogOption};
pub use mark::{JournalInfo, MARK_EVERY_MS, Mark};
pub use message::{ClientType, Info, Kill, Reply, Request, Screen, ServerType, Subscribe};

use std::fmt;

/// The unframed byte the supervisor writes first: binary framing.
pub const MODE_BINARY: u8 = 0x00;
/// `[type][len u32 BE]`.
pub const HEADER_LEN: usize = 5;
/// Largest payload any frame may declare; longer is a protocol error that
/// is detected from the header, before anything is read or allocated.
pub const MAX_PAYLOAD: u32 = 1 << 20;
/// Largest OUTPUT payload the supervisor sends. Big enough that a full
/// 64 KiB scrollback replays in one or two frames, small enough to bound
/// what a slow client's in-flight frame pins.
pub const MAX_OUTPUT_FRAME: usize = 64 * 1024;
/// Exact size of a STATUS_RESP payload.
pub const STATUS_LEN: usize = 15;

/// The largest ACT payload a supervisor takes; longer is a protocol error.
pub const MAX_ACT_PAYLOAD: u32 = 4096;

/// The most characters a label (`hm run --label`, `hm label`) has.
pub const LABEL_MAX_CHARS: usize = 60;
/// The largest LABEL payload a supervisor takes: [`LABEL_MAX_CHARS`] of
/// four bytes each; longer is a protocol error.
pub const MAX_LABEL_PAYLOAD: u32 = 4 * LABEL_MAX_CHARS as u32;

/// A label as people give it, trimmed: one line of at most
/// [`LABEL_MAX_CHARS`] printable characters, or what is wrong with it.
/// The supervisor checks what LABEL asks by the same rule as `hm run
/// --label`'s.
pub fn checked_label(s: &str) -> Result<String, String> {
    // Control characters, the line and paragraph separators, the marks
    // that turn text around (it would read backwards in `hm ls`), and
    // what shows nothing (zero-width spaces and joiners, the byte-order
    // mark, tag characters: a label of them alone was blank).
    let unprintable = |c: char| {
        c.is_control()
            || crate::paths::invisible(c)
            || matches!(c, '\u{2028}' | '\u{2029}' | '\u{e0000}'..='\u{e007f}')
    };
    let s = s.trim();
    // Nor may it begin with a mark that belongs on a character before it
    // (a lone accent sat on `hm ls`'s bracket).
    let leads_with_mark = s
        .chars()
        .next()
        .is_some_and(|c| unicode_width::UnicodeWidthChar::width(c) == Some(0));
    if s.chars().any(unprintable) || leads_with_mark {
        return Err("a label is one line of printable text".into());
    }
    if s.chars().count() > LABEL_MAX_CHARS {
        return Err(format!("a label is at most {LABEL_MAX_CHARS} characters"));
    }
    Ok(s.to_owned())
}

/// SUBSCRIBE payload extension: a flags byte. An empty payload (the seed
/// protocol) means no flags.
pub const SUBSCRIBE_MARK_REPLAY: u8 = 0x01;
/// SUBSCRIBE flag: the subscription of whoever launched the session (`hm
/// run`'s attach, or the dashboard), which a supervisor started with
/// `--await-attach` waits for.
pub const SUBSCRIBE_LAUNCHER: u8 = 0x02;
/// SUBSCRIBE flag: this subscriber is a person's terminal (`hm attach`),
/// which answers the program's terminal queries itself; while none is
/// subscribed, the supervisor answers them.
pub const SUBSCRIBE_TERMINAL: u8 = 0x04;
/// SUBSCRIBE flag: push a STATE frame now and on every state change.
pub const SUBSCRIBE_STATE: u8 = 0x08;
/// SUBSCRIBE flag: MARK frames in the stream, at each point where the
/// session's size changed (and every few seconds of output, with the
/// time), the first before the replay; the replay then starts at a line
/// or escape sequence start (see `docs/protocol.md`).
pub const SUBSCRIBE_MARKS: u8 = 0x10;
/// SUBSCRIBE flag: end the replay with an OUTPUT frame that draws the
/// screen as the supervisor has it, when the replay does not start with
/// the session's first byte (what was drawn before the ring's oldest byte
/// and never redrawn is on the screen, not in the replay).
pub const SUBSCRIBE_SCREEN: u8 = 0x20;

/// Codes carried by an ERROR frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum ErrorCode {
    /// A frame declared a payload over [`MAX_PAYLOAD`].
    FrameTooLarge = 1,
    /// A payload had the wrong size or content for its type.
    MalformedPayload = 2,
    /// The subscriber made no progress for too long and was cut off.
    TooSlow = 3,
    /// The supervisor is at its connection limit.
    TooManyConnections = 4,
    /// The request could not be carried out (e.g. INPUT after the child exited).
    Unavailable = 5,
}

impl ErrorCode {
    pub fn from_u16(code: u16) -> Option<Self> {
        [
            ErrorCode::FrameTooLarge,
            ErrorCode::MalformedPayload,
            ErrorCode::TooSlow,
            ErrorCode::TooManyConnections,
            ErrorCode::Unavailable,
        ]
        .into_iter()
        .find(|c| *c as u16 == code)
    }
}

/// The 5-byte header of a frame.
pub fn header(ty: u8, len: u32) -> [u8; HEADER_LEN] {
    let l = len.to_be_bytes();
    [ty, l[0], l[1], l[2], l[3]]
}

/// A whole frame as one buffer (for small frames; OUTPUT is written with
/// `writev` from the ring instead).
pub fn frame(ty: u8, payload: &[u8]) -> Vec<u8> {
    let len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(&header(ty, len));
    out.extend_from_slice(payload);
    out
}

/// The STATUS_RESP payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    /// The child's pid.
    pub pid: u32,
    /// Milliseconds since the last pty output (or since start).
    pub idle_ms: u32,
    pub alive: bool,
    /// A classifier state byte (see `classify::ProcessState`).
    pub state: u8,
    /// Milliseconds in the current state.
    pub state_ms: u32,
}

impl Status {
    pub fn encode(&self) -> [u8; STATUS_LEN] {
        let mut b = [0u8; STATUS_LEN];
        b[0..4].copy_from_slice(&self.pid.to_be_bytes());
        b[4..8].copy_from_slice(&self.idle_ms.to_be_bytes());
        b[8] = u8::from(self.alive);
        b[9] = self.state;
        b[10..14].copy_from_slice(&self.state_ms.to_be_bytes());
        b[14] = 0;
        b
    }

    /// Accepts 14 bytes or more: the trailing reserved byte carries nothing.
    pub fn decode(p: &[u8]) -> Result<Self, PayloadError> {
        if p.len() < STATUS_LEN - 1 {
            return Err(PayloadError::Length {
                what: "STATUS_RESP",
                expected: STATUS_LEN,
                got: p.len(),
            });
        }
        Ok(Status {
            pid: be32(&p[0..4]),
            idle_ms: be32(&p[4..8]),
            alive: p[8] != 0,
            state: p[9],
            state_ms: be32(&p[10..14]),
        })
    }
}

/// A session's state as STATE frames, and INFO's `state` field, carry it
/// (JSON): the state byte and its name, the two-level verdict, and the
/// signals behind it (empty for the timing classifiers).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StateReport {
    pub state: String,
    pub state_byte: u8,
    pub primary: crate::verdict::Primary,
    pub detail: Option<crate::verdict::Detail>,
    pub health: crate::verdict::Health,
    pub agent: Option<String>,
    /// Milliseconds in this state when reported.
    pub state_ms: u64,
    pub signals: Vec<crate::verdict::Signal>,
    /// What the program reported of its children (subagents, background
    /// shells) through the status protocol; absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<crate::verdict::Child>,
    /// The dialog the session waits at, when the verdict stands on one the
    /// screen shows: what it asks about, where, and its identity for an
    /// answer (ACT's `dialog`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialog: Option<Box<DialogInfo>>,
    /// Milliseconds since the program last printed, when reported (absent
    /// from older supervisors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_ms: Option<u64>,
    /// The session clock when reported: what `signals[].since_ms` and
    /// `children[].since_ms` count from, so a client can tell their ages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_ms: Option<u64>,
}

impl StateReport {
    /// When the session came to this state, in the session clock (`None`
    /// from a supervisor that does not say its clock).
    pub fn began_ms(&self) -> Option<u64> {
        self.clock_ms.map(|c| c.saturating_sub(self.state_ms))
    }

    /// Whether it says an agent's turn is over (see
    /// [`crate::verdict::turn_over`]).
    pub fn turn_over(&self) -> Option<bool> {
        crate::verdict::turn_over(
            self.primary,
            self.detail,
            self.agent.as_deref(),
            &self.signals,
        )
    }

    /// Whether `other` says something different to a person (the time in
    /// the state and the signals' wording may move without a change; the
    /// end of an agent's turn behind a draft typed ahead is one).
    pub fn differs(&self, other: &StateReport) -> bool {
        (
            self.state_byte,
            self.detail,
            self.health,
            self.children.len(),
            self.dialog.as_ref().map(|d| (d.id, &d.fingerprint)),
            self.progress(),
            self.turn_over(),
        ) != (
            other.state_byte,
            other.detail,
            other.health,
            other.children.len(),
            other.dialog.as_ref().map(|d| (d.id, &d.fingerprint)),
            other.progress(),
            other.turn_over(),
        )
    }

    /// How far the program says it is (`40 %`), when an OSC 9;4 progress
    /// report is what the verdict stands on.
    pub fn progress(&self) -> Option<&str> {
        let first = self.signals.first()?;
        crate::verdict::progress(&first.rule, &first.text)
    }

    /// Whether the program is stopped by a signal (detail `stopped`), and
    /// waits for ACT's `continue`.
    pub fn stopped(&self) -> bool {
        self.detail == Some(crate::verdict::Detail::Stopped)
    }

    /// `waiting · permission`, or the state's name.
    pub fn label(&self) -> String {
        match self.detail {
            Some(d) => format!("{} · {}", self.state, d.name()),
            None => self.state.clone(),
        }
    }
}

/// RESIZE payload: `[cols u16 BE][rows u16 BE]`, exactly 4 bytes; as
/// JSON `{"cols", "rows"}` (a remote NEW's start size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Size {
    pub cols: u16,
    pub rows: u16,
}

/// Sizes are clamped to this range before they reach a pty or an emulator:
/// 0 breaks programs that divide by the width, and huge sizes make
/// emulators allocate gigabytes.
pub const MIN_DIM: u16 = 1;
pub const MAX_DIM: u16 = 4096;

impl Size {
    pub fn encode(&self) -> [u8; 4] {
        let c = self.cols.to_be_bytes();
        let r = self.rows.to_be_bytes();
        [c[0], c[1], r[0], r[1]]
    }

    pub fn decode(p: &[u8]) -> Result<Self, PayloadError> {
        match p {
            [c0, c1, r0, r1] => Ok(Size {
                cols: u16::from_be_bytes([*c0, *c1]),
                rows: u16::from_be_bytes([*r0, *r1]),
            }),
            _ => Err(PayloadError::Length {
                what: "RESIZE",
                expected: 4,
                got: p.len(),
            }),
        }
    }

    pub fn clamped(self) -> Self {
        Size {
            cols: self.cols.clamp(MIN_DIM, MAX_DIM),
            rows: self.rows.clamp(MIN_DIM, MAX_DIM),
        }
    }
}

/// EXIT payload: the child's exit code as i32 BE.
pub fn encode_exit(code: i32) -> [u8; 4] {
    code.to_be_bytes()
}

pub fn decode_exit(p: &[u8]) -> Result<i32, PayloadError> {
    match p {
        [a, b, c, d] => Ok(i32::from_be_bytes([*a, *b, *c, *d])),
        _ => Err(PayloadError::Length {
            what: "EXIT",
            expected: 4,
            got: p.len(),
        }),
    }
}

/// KILL payload extension: empty means "the supervisor's configured grace",
/// 4 bytes are a grace period in milliseconds (u32 BE).
pub fn decode_kill(p: &[u8]) -> Option<u32> {
    match p {
        [a, b, c, d] => Some(u32::from_be_bytes([*a, *b, *c, *d])),
        _ => None,
    }
}

pub fn encode_error(code: ErrorCode, message: &str) -> Vec<u8> {
    let mut p = Vec::with_capacity(2 + message.len());
    p.extend_from_slice(&(code as u16).to_be_bytes());
    p.extend_from_slice(message.as_bytes());
    p
}

/// Decodes an ERROR payload; the message is decoded lossily because it is
/// only ever shown to a person.
pub fn decode_error(p: &[u8]) -> (u16, String) {
    match p {
        [a, b, rest @ ..] => (
            u16::from_be_bytes([*a, *b]),
            String::from_utf8_lossy(rest).into_owned(),
        ),
        _ => (0, String::from("malformed error frame")),
    }
}

fn be32(b: &[u8]) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[..4]);
    u32::from_be_bytes(a)
}

/// A payload that does not fit its frame type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    #[error("{what} payload must be {expected} bytes, got {got}")]
    Length {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    #[error("unreadable {what} payload: {reason}")]
    Json { what: &'static str, reason: String },
    #[error("{what} payload must be at most {max} bytes, got {got}")]
    TooLong {
        what: &'static str,
        max: usize,
        got: usize,
    },
    #[error("{reason}")]
    Label { reason: String },
}

/// A frame header that cannot be accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("frame type 0x{ty:02x} declares {len} payload bytes, over the {max}-byte limit")]
    TooLarge { ty: u8, len: u32, max: u32 },
}

/// One step of frame splitting.
#[derive(PartialEq, Eq)]
pub enum Piece<'a> {
    /// A header was completed.
    Start { ty: u8, len: u32 },
    /// Some payload bytes of the current frame (never empty).
    Data(&'a [u8]),
    /// The current frame is complete.
    End { ty: u8 },
}

impl fmt::Debug for Piece<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Piece::Start { ty, len } => write!(f, "Start(0x{ty:02x}, {len})"),
            Piece::Data(d) => write!(f, "Data({} bytes)", d.len()),
            Piece::End { ty } => write!(f, "End(0x{ty:02x})"),
        }
    }
}

/// Splits a byte stream into frame pieces without buffering payloads, so a
/// peer declaring a huge frame costs nothing until it actually sends bytes,
/// and INPUT can be streamed straight to the pty.
///
/// Feed it whatever a read returned, in any chunking; the sequence of
/// pieces (with `Data` pieces concatenated) is the same.
#[derive(Debug, Clone)]
pub struct Splitter {
    max_payload: u32,
    state: SplitState,
}

#[derive(Debug, Clone, Copy)]
enum SplitState {
    Header { buf: [u8; HEADER_LEN], have: usize },
    Payload { ty: u8, remaining: u32 },
    Finish { ty: u8 },
}

impl Default for Splitter {
    fn default() -> Self {
        Self::new(MAX_PAYLOAD)
    }
}

impl Splitter {
    pub fn new(max_payload: u32) -> Self {
        Splitter {
            max_payload,
            state: SplitState::Header {
                buf: [0; HEADER_LEN],
                have: 0,
            },
        }
    }

    /// True when no frame is partly received.
    pub fn at_boundary(&self) -> bool {
        matches!(self.state, SplitState::Header { have: 0, .. })
    }

    /// True when the current frame is complete and the next call returns
    /// its [`Piece::End`] without needing input.
    pub fn end_pending(&self) -> bool {
        matches!(self.state, SplitState::Finish { .. })
    }

    /// Consumes a prefix of `input` and returns how much was used and the
    /// next piece, if one is complete. Call again with the rest until it
    /// returns `(0, None)` (all input consumed into a partial header).
    pub fn next<'a>(&mut self, input: &'a [u8]) -> Result<(usize, Option<Piece<'a>>), FrameError> {
        match &mut self.state {
            SplitState::Header { buf, have } => {
                let take = (HEADER_LEN - *have).min(input.len());
                buf[*have..*have + take].copy_from_slice(&input[..take]);
                *have += take;
                if *have < HEADER_LEN {
                    return Ok((take, None));
                }
                let ty = buf[0];
                let len = be32(&buf[1..5]);
                if len > self.max_payload {
                    return Err(FrameError::TooLarge {
                        ty,
                        len,
                        max: self.max_payload,
                    });
                }
                self.state = if len == 0 {
                    SplitState::Finish { ty }
                } else {
                    SplitState::Payload { ty, remaining: len }
                };
                Ok((take, Some(Piece::Start { ty, len })))
            }
            SplitState::Payload { ty, remaining } => {
                if input.is_empty() {
                    return Ok((0, None));
                }
                let take = input.len().min(*remaining as usize);
                // `take` fits in u32 because it is at most `remaining`.
                *remaining -= take as u32;
                if *remaining == 0 {
                    self.state = SplitState::Finish { ty: *ty };
                }
                Ok((take, Some(Piece::Data(&input[..take]))))
            }
            SplitState::Finish { ty } => {
                let ty = *ty;
                self.state = SplitState::Header {
                    buf: [0; HEADER_LEN],
                    have: 0,
                };
                Ok((0, Some(Piece::End { ty })))
            }
        }
    }
}

/// A complete frame, owned. Used by clients, whose frames are few and large.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub ty: u8,
    pub payload: Vec<u8>,
}

/// Reassembles whole frames on top of [`Splitter`]. Payload memory grows
/// only as bytes arrive, so a lying length field cannot make it allocate.
#[derive(Debug, Default)]
pub struct Assembler {
    splitter: Splitter,
    current: Vec<u8>,
}

impl Assembler {
    pub fn new(max_payload: u32) -> Self {
        Assembler {
            splitter: Splitter::new(max_payload),
            current: Vec::new(),
        }
    }

    /// Feeds `input`, appending every completed frame to `out`.
    pub fn push(&mut self, mut input: &[u8], out: &mut Vec<Frame>) -> Result<(), FrameError> {
        loop {
            let (used, piece) = self.splitter.next(input)?;
            input = &input[used..];
            match piece {
                Some(Piece::Start { .. }) => self.current.clear(),
                Some(Piece::Data(d)) => self.current.extend_from_slice(d),
                Some(Piece::End { ty }) => out.push(Frame {
                    ty,
                    payload: std::mem::take(&mut self.current),
                }),
                None => return Ok(()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn golden_status_frame_is_20_bytes() {
        let s = Status {
            pid: 0x0102_0304,
            idle_ms: 1500,
            alive: true,
            state: 0x04,
            state_ms: 250,
        };
        let f = frame(ServerType::StatusResp as u8, &s.encode());
        assert_eq!(
            f,
            [
                0x82, 0, 0, 0, 15, 1, 2, 3, 4, 0, 0, 0x05, 0xdc, 1, 4, 0, 0, 0, 0xfa, 0
            ]
        );
        assert_eq!(Status::decode(&f[5..]), Ok(s));
    }

    #[test]
    fn golden_exit_and_resize() {
        assert_eq!(
            frame(ServerType::Exit as u8, &encode_exit(137)),
            [0x83, 0, 0, 0, 4, 0, 0, 0, 0x89]
        );
        assert_eq!(
            Size {
                cols: 120,
                rows: 40
            }
            .encode(),
            [0, 0x78, 0, 0x28]
        );
        assert_eq!(frame(ClientType::Subscribe as u8, &[]), [0x02, 0, 0, 0, 0]);
        assert_eq!(decode_exit(&encode_exit(-1)), Ok(-1));
    }

    #[test]
    fn resize_must_be_four_bytes() {
        assert!(Size::decode(&[0, 1, 0]).is_err());
        assert!(Size::decode(&[0, 1, 0, 2, 9]).is_err());
        let s = Size::decode(&[0, 0, 0xff, 0xff]).map(Size::clamped);
        assert_eq!(
            s,
            Ok(Size {
                cols: 1,
                rows: 4096
            })
        );
    }

    #[test]
    fn oversized_length_is_rejected_from_the_header() {
        let mut sp = Splitter::default();
        let hdr = header(ClientType::Input as u8, MAX_PAYLOAD + 1);
        assert!(matches!(sp.next(&hdr), Err(FrameError::TooLarge { .. })));
        let mut sp = Splitter::default();
        let hdr = header(ClientType::Input as u8, MAX_PAYLOAD);
        assert!(matches!(sp.next(&hdr), Ok((5, Some(Piece::Start { .. })))));
    }

    #[test]
    fn error_payload_round_trips() {
        let p = encode_error(ErrorCode::MalformedPayload, "bad resize");
        assert_eq!(decode_error(&p), (2, "bad resize".to_string()));
        assert_eq!(decode_error(&[1]).0, 0);
    }

    fn assemble_chunked(bytes: &[u8], cuts: &[usize]) -> Vec<Frame> {
        let mut asm = Assembler::default();
        let mut out = Vec::new();
        let mut pos = 0;
        for &c in cuts {
            let end = (pos + c).min(bytes.len());
            asm.push(&bytes[pos..end], &mut out).expect("valid stream");
            pos = end;
        }
        asm.push(&bytes[pos..], &mut out).expect("valid stream");
        out
    }

    proptest! {
        /// Any RESIZE payload becomes a size a pty and an emulator accept,
        /// and one already in range is left alone.
        #[test]
        fn resize_values_are_clamped_into_range(cols in any::<u16>(), rows in any::<u16>()) {
            let c = Size { cols, rows }.clamped();
            prop_assert!((MIN_DIM..=MAX_DIM).contains(&c.cols));
            prop_assert!((MIN_DIM..=MAX_DIM).contains(&c.rows));
            prop_assert_eq!(c.cols, cols.clamp(MIN_DIM, MAX_DIM));
            prop_assert_eq!(c.rows, rows.clamp(MIN_DIM, MAX_DIM));
            prop_assert_eq!(Size::decode(&Size { cols, rows }.encode()).map(Size::clamped).ok(), Some(c));
        }

        #[test]
        fn frames_round_trip_however_the_stream_is_cut(
            frames in proptest::collection::vec((any::<u8>(), proptest::collection::vec(any::<u8>(), 0..300)), 0..20),
            cuts in proptest::collection::vec(0usize..64, 0..40),
        ) {
            let mut bytes = Vec::new();
            for (ty, p) in &frames {
                bytes.extend(frame(*ty, p));
            }
            let got = assemble_chunked(&bytes, &cuts);
            let want: Vec<Frame> = frames.iter().map(|(ty, p)| Frame { ty: *ty, payload: p.clone() }).collect();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn status_round_trips(pid: u32, idle_ms: u32, alive: bool, state: u8, state_ms: u32) {
            let s = Status { pid, idle_ms, alive, state, state_ms };
            prop_assert_eq!(Status::decode(&s.encode()), Ok(s));
        }

        #[test]
        fn splitter_never_panics_on_garbage(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
            let mut asm = Assembler::new(4096);
            let mut out = Vec::new();
            let _ = asm.push(&bytes, &mut out);
            prop_assert!(out.iter().all(|f| f.payload.len() <= 4096));
        }
    }
}
