//! The wire's messages, typed: frame types as enums, what a client asks
//! ([`Request`]) and what a supervisor sends ([`Reply`]), with the JSON
//! payloads of the extensions (INFO, SCREEN, STATE) as serde structs.
//!
//! Bytes are made and read only here, on both sides: a client says
//! `Request::Resize(size)` and matches on `Reply::Exit(code)`; the
//! supervisor decodes each whole frame with [`Request::decode`], matches on
//! the request and queues `Reply`s. Two payloads do not pass through here
//! whole, so that neither is held twice: INPUT, which the supervisor's
//! reader collects as it arrives, and OUTPUT, written from the ring with
//! [`super::header`].
//! The layouts are those of `docs/protocol.md`; the golden tests in
//! `protocol.rs` pin them.

use serde::{Deserialize, Serialize};

use super::act::{Act, Acted, ActionRecord, AutomationInfo, DialogInfo};
use super::{Frame, JournalInfo, Mark, PayloadError, Size, StateReport, Status, frame};

/// Frame types sent by clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ClientType {
    Input = 0x01,
    Subscribe = 0x02,
    Status = 0x03,
    Resize = 0x04,
    Kill = 0x05,
    /// Extension: ask for INFO.
    Info = 0x06,
    /// Extension: ask for SCREEN.
    Screen = 0x07,
    /// Extension: a hook report (`hm hook`), JSON; nothing is sent back.
    Report = 0x08,
    /// Extension: answer the dialog on the screen (JSON, see `act.rs`).
    Act = 0x09,
    /// Extension: give the session a new label (UTF-8 text; empty: none).
    Label = 0x0A,
}

impl ClientType {
    pub const ALL: [ClientType; 10] = [
        ClientType::Input,
        ClientType::Subscribe,
        ClientType::Status,
        ClientType::Resize,
        ClientType::Kill,
        ClientType::Info,
        ClientType::Screen,
        ClientType::Report,
        ClientType::Act,
        ClientType::Label,
    ];
}

impl TryFrom<u8> for ClientType {
    /// The unknown type byte.
    type Error = u8;

    fn try_from(b: u8) -> Result<Self, u8> {
        ClientType::ALL.into_iter().find(|t| *t as u8 == b).ok_or(b)
    }
}

/// Frame types sent by the supervisor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ServerType {
    Output = 0x81,
    StatusResp = 0x82,
    Exit = 0x83,
    /// Extension: `[code u16 BE][utf-8 message]`, before the supervisor
    /// closes a connection because of something the client did.
    Error = 0x84,
    /// Extension: the answer to INFO.
    Info = 0x85,
    /// Extension: the scrollback replay is over; what follows is live.
    ReplayEnd = 0x86,
    /// Extension: the session's state changed.
    State = 0x87,
    /// Extension: the answer to SCREEN.
    Screen = 0x88,
    /// Extension: the answer to ACT.
    Acted = 0x89,
    /// Extension: the journal at this point of the output.
    Mark = 0x8a,
}

impl ServerType {
    pub const ALL: [ServerType; 10] = [
        ServerType::Output,
        ServerType::StatusResp,
        ServerType::Exit,
        ServerType::Error,
        ServerType::Info,
        ServerType::ReplayEnd,
        ServerType::State,
        ServerType::Screen,
        ServerType::Acted,
        ServerType::Mark,
    ];
}

impl TryFrom<u8> for ServerType {
    /// The unknown type byte.
    type Error = u8;

    fn try_from(b: u8) -> Result<Self, u8> {
        ServerType::ALL.into_iter().find(|t| *t as u8 == b).ok_or(b)
    }
}

/// SUBSCRIBE's flags. None set is the seed protocol's empty payload.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Subscribe {
    /// Send REPLAY_END where the replay of the scrollback ends.
    pub mark_replay: bool,
    /// This is whoever launched the session (see `SUBSCRIBE_LAUNCHER`).
    pub launcher: bool,
    /// This is a person's terminal, which answers the program's queries.
    pub terminal: bool,
    /// Push STATE now and on every change of state.
    pub state: bool,
    /// MARK frames where the size changed (see `protocol/mark.rs`).
    pub marks: bool,
    /// The replay ends with the screen drawn as it stands (see
    /// `SUBSCRIBE_SCREEN`).
    pub screen: bool,
}

impl Subscribe {
    pub fn flags(self) -> u8 {
        let bit = |on: bool, flag: u8| if on { flag } else { 0 };
        bit(self.mark_replay, super::SUBSCRIBE_MARK_REPLAY)
            | bit(self.launcher, super::SUBSCRIBE_LAUNCHER)
            | bit(self.terminal, super::SUBSCRIBE_TERMINAL)
            | bit(self.state, super::SUBSCRIBE_STATE)
            | bit(self.marks, super::SUBSCRIBE_MARKS)
            | bit(self.screen, super::SUBSCRIBE_SCREEN)
    }

    pub fn from_flags(flags: u8) -> Self {
        Subscribe {
            mark_replay: flags & super::SUBSCRIBE_MARK_REPLAY != 0,
            launcher: flags & super::SUBSCRIBE_LAUNCHER != 0,
            terminal: flags & super::SUBSCRIBE_TERMINAL != 0,
            state: flags & super::SUBSCRIBE_STATE != 0,
            marks: flags & super::SUBSCRIBE_MARKS != 0,
            screen: flags & super::SUBSCRIBE_SCREEN != 0,
        }
    }
}

/// How a KILL asks the session to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kill {
    /// The seed form (empty payload): the session's own grace period, and
    /// nothing sent back.
    Plain,
    /// The session's own grace period, and EXIT sent back on this
    /// connection.
    AwaitExit,
    /// SIGTERM, then SIGKILL after this many milliseconds, and EXIT sent
    /// back on this connection.
    Grace(u32),
}

/// What a client asks of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request<'a> {
    /// Bytes for the program, as typed.
    Input(&'a [u8]),
    Subscribe(Subscribe),
    Status,
    Resize(Size),
    Kill(Kill),
    Info,
    Screen,
    /// What an agent's hook said (see [`crate::detect::hooks`]).
    Report(Box<super::report::Report>),
    /// Answer the dialog on the screen, if it still is as expected.
    Act(Act),
    /// The session's new label, checked (see [`super::checked_label`]);
    /// empty: none.
    Label(String),
}

impl Request<'_> {
    pub fn kind(&self) -> ClientType {
        match self {
            Request::Input(_) => ClientType::Input,
            Request::Subscribe(_) => ClientType::Subscribe,
            Request::Status => ClientType::Status,
            Request::Resize(_) => ClientType::Resize,
            Request::Kill(_) => ClientType::Kill,
            Request::Info => ClientType::Info,
            Request::Screen => ClientType::Screen,
            Request::Report(_) => ClientType::Report,
            Request::Act(_) => ClientType::Act,
            Request::Label(_) => ClientType::Label,
        }
    }

    /// The whole frame.
    pub fn encode(&self) -> Vec<u8> {
        let ty = self.kind() as u8;
        match self {
            Request::Input(bytes) => frame(ty, bytes),
            Request::Subscribe(s) if *s == Subscribe::default() => frame(ty, &[]),
            Request::Subscribe(s) => frame(ty, &[s.flags()]),
            Request::Resize(size) => frame(ty, &size.encode()),
            Request::Kill(Kill::Plain) => frame(ty, &[]),
            Request::Kill(Kill::AwaitExit) => frame(ty, &u32::MAX.to_be_bytes()),
            Request::Kill(Kill::Grace(ms)) => frame(ty, &ms.to_be_bytes()),
            Request::Status | Request::Info | Request::Screen => frame(ty, &[]),
            // A report is a handful of short strings: it always encodes.
            Request::Report(r) => frame(ty, &serde_json::to_vec(r).unwrap_or_default()),
            Request::Act(act) => frame(ty, &serde_json::to_vec(act).unwrap_or_default()),
            Request::Label(label) => frame(ty, label.as_bytes()),
        }
    }

    /// Appends the whole frame to `out` (several requests, one write).
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend(self.encode());
    }

    /// Reads the whole payload of a frame of type `ty`: what the
    /// supervisor carries out. INPUT borrows its bytes. A payload that is
    /// not what its type takes is an error, which the caller answers as
    /// the protocol says for that type (ERROR, an ACTED refusal, nothing).
    pub fn decode<'a>(ty: ClientType, payload: &'a [u8]) -> Result<Request<'a>, PayloadError> {
        let json = |what: &'static str, e: serde_json::Error| PayloadError::Json {
            what,
            reason: e.to_string(),
        };
        Ok(match ty {
            ClientType::Input => Request::Input(payload),
            // The flags byte is the extension; an empty payload is the seed's.
            ClientType::Subscribe => {
                Request::Subscribe(Subscribe::from_flags(payload.first().copied().unwrap_or(0)))
            }
            ClientType::Status => Request::Status,
            ClientType::Resize => Request::Resize(Size::decode(payload)?),
            // Four bytes are the extension's grace period; any other length
            // is read as the seed's KILL, as the first supervisors did.
            ClientType::Kill => Request::Kill(match super::decode_kill(payload) {
                Some(u32::MAX) => Kill::AwaitExit,
                Some(ms) => Kill::Grace(ms),
                None => Kill::Plain,
            }),
            ClientType::Info => Request::Info,
            ClientType::Screen => Request::Screen,
            ClientType::Report => {
                let max = super::report::MAX_REPORT;
                if payload.len() > max {
                    return Err(PayloadError::TooLong {
                        what: "REPORT",
                        max,
                        got: payload.len(),
                    });
                }
                Request::Report(Box::new(
                    serde_json::from_slice(payload).map_err(|e| json("REPORT", e))?,
                ))
            }
            ClientType::Act => {
                Request::Act(serde_json::from_slice(payload).map_err(|e| json("ACT", e))?)
            }
            ClientType::Label => {
                let max = super::MAX_LABEL_PAYLOAD as usize;
                if payload.len() > max {
                    return Err(PayloadError::TooLong {
                        what: "LABEL",
                        max,
                        got: payload.len(),
                    });
                }
                let text = std::str::from_utf8(payload).map_err(|_| PayloadError::Label {
                    reason: "a label is UTF-8 text".into(),
                })?;
                Request::Label(
                    super::checked_label(text).map_err(|reason| PayloadError::Label { reason })?,
                )
            }
        })
    }
}

/// What a supervisor sends.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Program output (scrollback replay first, then live).
    Output(Vec<u8>),
    Status(Status),
    /// The program's exit code (128 + signal when killed by one).
    Exit(i32),
    /// Why the supervisor is closing this connection; `code` is an
    /// [`ErrorCode`](super::ErrorCode) when known.
    Error {
        code: u16,
        message: String,
    },
    Info(Box<Info>),
    ReplayEnd,
    State(Box<StateReport>),
    Screen(Box<Screen>),
    Acted(Box<Acted>),
    /// The session's size (and the time) from here in the stream on.
    Mark(Mark),
    /// A frame type this client does not know; ignored, as the protocol
    /// says unknown frames must be.
    Unknown(u8),
}

impl Reply {
    /// ERROR: why the connection is being closed.
    pub fn error(code: super::ErrorCode, message: &str) -> Reply {
        Reply::Error {
            code: code as u16,
            message: message.to_owned(),
        }
    }

    pub fn kind(&self) -> Option<ServerType> {
        Some(match self {
            Reply::Output(_) => ServerType::Output,
            Reply::Status(_) => ServerType::StatusResp,
            Reply::Exit(_) => ServerType::Exit,
            Reply::Error { .. } => ServerType::Error,
            Reply::Info(_) => ServerType::Info,
            Reply::ReplayEnd => ServerType::ReplayEnd,
            Reply::State(_) => ServerType::State,
            Reply::Screen(_) => ServerType::Screen,
            Reply::Acted(_) => ServerType::Acted,
            Reply::Mark(_) => ServerType::Mark,
            Reply::Unknown(_) => return None,
        })
    }

    /// The whole frame, as a supervisor sends it (nothing for an unknown
    /// type, which only a client reads). The supervisor writes OUTPUT
    /// straight from its ring instead, with [`super::header`].
    pub fn encode(&self) -> Vec<u8> {
        let Some(ty) = self.kind() else {
            return Vec::new();
        };
        let ty = ty as u8;
        // The JSON payloads are plain data: they always serialise.
        let json = |v: Result<Vec<u8>, serde_json::Error>| v.unwrap_or_default();
        match self {
            Reply::Output(bytes) => frame(ty, bytes),
            Reply::Status(st) => frame(ty, &st.encode()),
            Reply::Exit(code) => frame(ty, &super::encode_exit(*code)),
            Reply::Error { code, message } => {
                let mut p = Vec::with_capacity(2 + message.len());
                p.extend_from_slice(&code.to_be_bytes());
                p.extend_from_slice(message.as_bytes());
                frame(ty, &p)
            }
            Reply::Info(info) => frame(ty, &json(serde_json::to_vec(info))),
            Reply::ReplayEnd => frame(ty, &[]),
            Reply::State(report) => frame(ty, &json(serde_json::to_vec(report))),
            Reply::Screen(screen) => frame(ty, &json(serde_json::to_vec(screen))),
            Reply::Acted(acted) => frame(ty, &json(serde_json::to_vec(acted))),
            Reply::Mark(mark) => frame(ty, &mark.encode()),
            Reply::Unknown(_) => Vec::new(),
        }
    }

    /// Reads a frame; a known type with a payload it cannot have is an
    /// error.
    pub fn decode(f: Frame) -> Result<Reply, PayloadError> {
        let Ok(ty) = ServerType::try_from(f.ty) else {
            return Ok(Reply::Unknown(f.ty));
        };
        let json = |what: &'static str, e: serde_json::Error| PayloadError::Json {
            what,
            reason: e.to_string(),
        };
        Ok(match ty {
            ServerType::Output => Reply::Output(f.payload),
            ServerType::StatusResp => Reply::Status(Status::decode(&f.payload)?),
            ServerType::Exit => Reply::Exit(super::decode_exit(&f.payload)?),
            ServerType::Error => {
                let (code, message) = super::decode_error(&f.payload);
                Reply::Error { code, message }
            }
            ServerType::Info => Reply::Info(Box::new(
                serde_json::from_slice(&f.payload).map_err(|e| json("INFO", e))?,
            )),
            ServerType::ReplayEnd => Reply::ReplayEnd,
            ServerType::State => Reply::State(Box::new(
                serde_json::from_slice(&f.payload).map_err(|e| json("STATE", e))?,
            )),
            ServerType::Screen => Reply::Screen(Box::new(
                serde_json::from_slice(&f.payload).map_err(|e| json("SCREEN", e))?,
            )),
            ServerType::Acted => Reply::Acted(Box::new(
                serde_json::from_slice(&f.payload).map_err(|e| json("ACTED", e))?,
            )),
            ServerType::Mark => Reply::Mark(Mark::decode(&f.payload)?),
        })
    }
}

/// The INFO payload: what a session is. Fields a supervisor does not send
/// (an older one) read as their defaults, and fields this client does not
/// know are ignored, so the extension can grow.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Info {
    pub id: String,
    /// The program's pid.
    pub pid: u32,
    pub supervisor_pid: u32,
    pub command: Vec<String>,
    pub workdir: String,
    /// The program's directory now (a shell's after its `cd`), where the
    /// system says; `None` from an older supervisor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Wall-clock start, for display only.
    pub started_unix_ms: u64,
    pub classifier: String,
    pub idle_threshold_ms: Option<u64>,
    /// The silence that makes it idle now: longer than the threshold for
    /// output at a steady beat (`top`). `None` from a supervisor that
    /// does not say, and for `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_after_ms: Option<u64>,
    pub cols: u16,
    pub rows: u16,
    pub scrollback_bytes: u64,
    /// The supervisor's hm version.
    pub version: String,
    /// A person's name for the session, besides its id.
    pub label: Option<String>,
    /// The supervisor answers the OSC 7501 probe itself: a client showing
    /// the output on a terminal must drop the probe, so that the program
    /// gets one answer.
    pub status_protocol: bool,
    /// How many people's terminals (`hm attach`) are attached: while any
    /// is, it sets the session's size and others' RESIZE is held. `None`
    /// from a supervisor that does not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terminals: Option<u32>,
    /// The state now, as STATE would say it.
    pub state: Option<StateReport>,
    /// What the detector holds as evidence (for `hm explain`); agents only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<serde_json::Value>,
    /// The dialog the verdict stands on now, if any; agents only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dialog: Option<DialogInfo>,
    /// The latest answers given to dialogs, oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<ActionRecord>,
    /// The `[[automation]]` rules this session runs with.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub automation: Vec<AutomationInfo>,
    /// What the output's journal holds (see `protocol/mark.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub journal: Option<JournalInfo>,
    /// Says a new label (LABEL): the answer to LABEL, or sent unasked to
    /// a subscriber that follows the state; no answer to an INFO asked.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub relabelled: bool,
}

impl Info {
    /// The session's terminal size.
    pub fn size(&self) -> Option<Size> {
        (self.cols > 0 && self.rows > 0).then_some(Size {
            cols: self.cols,
            rows: self.rows,
        })
    }
}

/// The SCREEN payload: the session's screen as text, with its size, the
/// cursor and the modes a client sending keys needs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Screen {
    pub cols: u16,
    pub rows: u16,
    pub cursor_row: u16,
    pub cursor_col: u16,
    pub alternate_screen: bool,
    /// Arrow keys are sent as SS3 (`ESC O A`) in this mode.
    pub application_cursor: bool,
    pub title: String,
    /// The rows, newline-separated, trailing blanks trimmed.
    pub text: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Assembler, ClientType, ErrorCode, ServerType};

    #[test]
    fn types_round_trip_through_their_bytes_and_match_the_seed_constants() {
        for t in ClientType::ALL {
            assert_eq!(ClientType::try_from(t as u8), Ok(t));
        }
        for t in ServerType::ALL {
            assert_eq!(ServerType::try_from(t as u8), Ok(t));
        }
        assert_eq!(ClientType::try_from(0x7e), Err(0x7e));
        assert_eq!(ServerType::try_from(0x01), Err(0x01));
        // The seed protocol's bytes (the Go client in seed 002 speaks them).
        let client: Vec<u8> = ClientType::ALL.iter().map(|t| *t as u8).collect();
        assert_eq!(
            client,
            [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a]
        );
        let server: Vec<u8> = ServerType::ALL.iter().map(|t| *t as u8).collect();
        assert_eq!(
            server,
            [0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a]
        );
    }

    /// LABEL carries its text as it is; what is no label (not UTF-8, a
    /// control character, too long) is refused saying why, and trimmed
    /// space is no part of one.
    #[test]
    fn a_label_decodes_only_when_it_is_one() {
        fn label(bytes: &[u8]) -> Result<Request<'_>, PayloadError> {
            Request::decode(ClientType::Label, bytes)
        }
        let sent = Request::Label("review PR 42 ✓".into()).encode();
        assert_eq!(sent[0], 0x0a);
        assert_eq!(
            label(&sent[5..]),
            Ok(Request::Label("review PR 42 ✓".into()))
        );
        assert_eq!(label(b"  spaced  "), Ok(Request::Label("spaced".into())));
        // Sixty once trimmed is a label.
        let sixty = format!("  {}  ", "x".repeat(60));
        assert_eq!(label(sixty.as_bytes()), Ok(Request::Label("x".repeat(60))));
        // A line separator, or a mark that turns the text around, is no
        // part of one line of text.
        for bad in [
            "a\u{2028}b",
            "a\u{202e}b",
            "\u{200b}",
            "\u{feff}",
            "\u{301}x",
        ] {
            assert!(label(bad.as_bytes()).is_err(), "{bad:?}");
        }
        assert_eq!(label(b""), Ok(Request::Label(String::new())));
        for bad in [&b"two\nlines"[..], b"\xff\xfe", "é".repeat(61).as_bytes()] {
            assert!(label(bad).is_err(), "{bad:?}");
        }
        assert!(label(&[b'x'; 241]).is_err());
    }

    fn one_frame(bytes: &[u8]) -> Frame {
        let mut out = Vec::new();
        Assembler::default().push(bytes, &mut out).expect("a frame");
        assert_eq!(out.len(), 1);
        out.remove(0)
    }

    #[test]
    fn requests_encode_as_the_seed_protocol_does() {
        let size = Size { cols: 80, rows: 24 };
        assert_eq!(
            Request::Resize(size).encode(),
            [0x04, 0, 0, 0, 4, 0, 80, 0, 24]
        );
        assert_eq!(Request::Kill(Kill::Plain).encode(), [0x05, 0, 0, 0, 0]);
        assert_eq!(
            Request::Kill(Kill::Grace(500)).encode(),
            [0x05, 0, 0, 0, 4, 0, 0, 1, 0xf4]
        );
        assert_eq!(
            Request::Subscribe(Subscribe::default()).encode(),
            [0x02, 0, 0, 0, 0]
        );
        let flags = Subscribe {
            mark_replay: true,
            state: true,
            ..Subscribe::default()
        };
        assert_eq!(Request::Subscribe(flags).encode(), [0x02, 0, 0, 0, 1, 0x09]);
        assert_eq!(Subscribe::from_flags(0x09), flags);
        assert_eq!(
            Request::Input(b"ls\r").encode(),
            [1, 0, 0, 0, 3, b'l', b's', b'\r']
        );
    }

    #[test]
    fn every_request_decodes_as_it_was_encoded() {
        let report = crate::protocol::report::Report {
            agent: "claude".into(),
            event: "Stop".into(),
            ..Default::default()
        };
        let act = Act {
            answer: "approve".into(),
            dialog: Some(7),
            ..Act::default()
        };
        let all = [
            Request::Input(b"ls\r"),
            Request::Subscribe(Subscribe::default()),
            Request::Subscribe(Subscribe::from_flags(0x0f)),
            Request::Status,
            Request::Resize(Size { cols: 80, rows: 24 }),
            Request::Kill(Kill::Plain),
            Request::Kill(Kill::AwaitExit),
            Request::Kill(Kill::Grace(500)),
            Request::Info,
            Request::Screen,
            Request::Report(Box::new(report)),
            Request::Act(act),
        ];
        for r in all {
            let f = one_frame(&r.encode());
            let ty = ClientType::try_from(f.ty).expect("a known type");
            assert_eq!(Request::decode(ty, &f.payload), Ok(r.clone()), "{r:?}");
        }
        // What the seed's supervisors read a KILL of another length as.
        assert_eq!(
            Request::decode(ClientType::Kill, &[0, 0, 1, 0, 0]),
            Ok(Request::Kill(Kill::Plain))
        );
        assert!(Request::decode(ClientType::Resize, &[0, 80]).is_err());
        assert!(Request::decode(ClientType::Act, b"{").is_err());
        let huge = vec![b' '; crate::protocol::report::MAX_REPORT + 1];
        assert!(Request::decode(ClientType::Report, &huge).is_err());
    }

    #[test]
    fn every_reply_decodes_as_it_was_encoded() {
        let all = [
            Reply::Output(b"hi".to_vec()),
            Reply::Status(Status {
                pid: 1,
                idle_ms: 2,
                alive: true,
                state: 5,
                state_ms: 3,
            }),
            Reply::Exit(-1),
            Reply::error(ErrorCode::TooSlow, "slow"),
            Reply::Info(Box::default()),
            Reply::ReplayEnd,
            Reply::Screen(Box::default()),
            Reply::Acted(Box::new(Acted {
                ok: false,
                reason: Some("no".into()),
                ..Acted::default()
            })),
            Reply::Mark(Mark {
                size: Size { cols: 9, rows: 4 },
                unix_ms: 7,
                alternate: true,
            }),
        ];
        for r in all {
            assert_eq!(
                Reply::decode(one_frame(&r.encode())),
                Ok(r.clone()),
                "{r:?}"
            );
        }
        assert_eq!(Reply::Unknown(0xee).encode(), Vec::<u8>::new());
    }

    #[test]
    fn replies_decode_typed_and_unknown_types_pass() {
        let exit = one_frame(&frame(ServerType::Exit as u8, &3i32.to_be_bytes()));
        assert_eq!(Reply::decode(exit), Ok(Reply::Exit(3)));
        let err = one_frame(&frame(
            ServerType::Error as u8,
            &super::super::encode_error(ErrorCode::TooSlow, "slow"),
        ));
        let reply = Reply::decode(err).expect("ERROR");
        assert_eq!(
            reply,
            Reply::Error {
                code: ErrorCode::TooSlow as u16,
                message: "slow".into()
            }
        );
        let unknown = one_frame(&frame(0xee, b"x"));
        assert_eq!(Reply::decode(unknown), Ok(Reply::Unknown(0xee)));
        let bad = one_frame(&frame(ServerType::Exit as u8, &[1]));
        assert!(Reply::decode(bad).is_err());
    }

    #[test]
    fn act_and_acted_carry_json_objects() {
        let act = Act {
            answer: "approve".into(),
            rule: Some("codex.permission".into()),
            ..Act::default()
        };
        let body = br#"{"answer":"approve","rule":"codex.permission"}"#;
        let mut golden = vec![0x09, 0, 0, 0, body.len() as u8];
        golden.extend_from_slice(body);
        assert_eq!(Request::Act(act).encode(), golden);
        let acted = one_frame(&frame(
            ServerType::Acted as u8,
            br#"{"ok":false,"reason":"no dialog","from_the_future":1}"#,
        ));
        let Ok(Reply::Acted(acted)) = Reply::decode(acted) else {
            panic!("not ACTED");
        };
        assert!(!acted.ok);
        assert_eq!(acted.reason.as_deref(), Some("no dialog"));
    }

    #[test]
    fn info_reads_what_an_older_or_newer_supervisor_sends() {
        let old = br#"{"id":"a","pid":7,"cols":100,"rows":30,"command":["sh"]}"#;
        let info: Info = serde_json::from_slice(old).expect("old INFO");
        assert_eq!(
            info.size(),
            Some(Size {
                cols: 100,
                rows: 30
            })
        );
        assert_eq!((info.pid, info.label.as_deref()), (7, None));
        let newer = br#"{"id":"a","some_future_field":{"x":1}}"#;
        let info: Info = serde_json::from_slice(newer).expect("newer INFO");
        assert_eq!(info.size(), None);
    }
}
