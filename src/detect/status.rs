//! The program status protocol (OSC 7501): what a program says of its own
//! state, once its terminal has answered the probe `ESC ] 7501 ; ?`.
//!
//! A record's body (what follows `7501;`) is `:`-separated `key=value`
//! fields: `state=idle|working|blocked|done|error|clear`, then optionally
//! `app`, `id` (a child: a subagent, a background shell), `kind`
//! (`permission`, `question`, `auth`, with `blocked`), `progress` (0-100),
//! and base64 `title` and `msg`. Claude Code 2.1.330 sends these; the
//! grammar and what it sends when are in `tests/corpus/README.md`.
//!
//! The program is not trusted: a body is parsed only up to
//! [`MAX_BODY`] bytes, unknown keys are skipped, a bad field rejects the
//! record (the previous state stands), and decoded text is cut short.

use base64::Engine as _;

use crate::verdict::{Detail, Primary};

/// Longest record body parsed, in bytes (a 2048-character message in
/// base64 fits, with room for the other fields).
pub const MAX_BODY: usize = crate::vt::events::MAX_RECORD;
/// Longest decoded `title` or `msg` kept, in characters.
pub const MAX_TEXT: usize = 240;
/// Longest child id accepted.
pub const MAX_ID: usize = 64;
/// Most children remembered at once (the protocol says 32).
pub const MAX_CHILDREN: usize = 32;

/// What a record says the program (or one of its children) is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Idle,
    Working,
    Blocked,
    Done,
    Error,
    /// The record withdraws an earlier one (a child finished; the program
    /// is exiting).
    Clear,
}

impl State {
    pub fn name(self) -> &'static str {
        match self {
            State::Idle => "idle",
            State::Working => "working",
            State::Blocked => "blocked",
            State::Done => "done",
            State::Error => "error",
            State::Clear => "clear",
        }
    }

    fn parse(s: &str) -> Option<State> {
        Some(match s {
            "idle" => State::Idle,
            "working" => State::Working,
            "blocked" => State::Blocked,
            "done" => State::Done,
            "error" => State::Error,
            "clear" => State::Clear,
            _ => return None,
        })
    }
}

/// One parsed record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub state: State,
    pub app: Option<String>,
    /// Set for a child's record; the program's own record has none.
    pub id: Option<String>,
    pub kind: Option<String>,
    pub progress: Option<u8>,
    pub title: Option<String>,
    pub msg: Option<String>,
}

/// Why a record was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error("record longer than {MAX_BODY} bytes")]
    TooLong,
    #[error("record has no state")]
    NoState,
    #[error("unknown state '{0}'")]
    BadState(String),
    #[error("bad {0} field")]
    BadField(&'static str),
}

fn is_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '+' | '-')
}

/// Decodes base64 text, keeping at most [`MAX_TEXT`] characters with
/// control characters removed (the text is shown in `hm explain`).
fn decode_text(b64: &str, field: &'static str) -> Result<String, RecordError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|_| RecordError::BadField(field))?;
    Ok(String::from_utf8_lossy(&bytes)
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_TEXT)
        .collect())
}

impl Record {
    /// Parses a record body (what follows `ESC ] 7501 ;`).
    pub fn parse(body: &str) -> Result<Record, RecordError> {
        if body.len() > MAX_BODY {
            return Err(RecordError::TooLong);
        }
        let mut state = None;
        let mut r = Record {
            state: State::Clear,
            app: None,
            id: None,
            kind: None,
            progress: None,
            title: None,
            msg: None,
        };
        for field in body.split(':') {
            let Some((key, value)) = field.split_once('=') else {
                continue;
            };
            match key {
                "state" => {
                    state =
                        Some(State::parse(value).ok_or_else(|| {
                            RecordError::BadState(value.chars().take(20).collect())
                        })?);
                }
                "app" => {
                    r.app = Some(
                        value
                            .chars()
                            .filter(|&c| is_id_char(c))
                            .take(MAX_ID)
                            .collect(),
                    )
                }
                "id" => {
                    if value.is_empty() || value.len() > MAX_ID || !value.chars().all(is_id_char) {
                        return Err(RecordError::BadField("id"));
                    }
                    r.id = Some(value.to_owned());
                }
                "kind" => {
                    if value.len() > MAX_ID || !value.chars().all(is_id_char) {
                        return Err(RecordError::BadField("kind"));
                    }
                    r.kind = Some(value.to_owned());
                }
                "progress" => {
                    let p: u8 = value
                        .parse()
                        .map_err(|_| RecordError::BadField("progress"))?;
                    if p > 100 {
                        return Err(RecordError::BadField("progress"));
                    }
                    r.progress = Some(p);
                }
                "title" => r.title = Some(decode_text(value, "title")?),
                "msg" => r.msg = Some(decode_text(value, "msg")?),
                // Later revisions may add keys; they do not change the state.
                _ => {}
            }
        }
        r.state = state.ok_or(RecordError::NoState)?;
        Ok(r)
    }

    /// The two-level status the program's own record means. `None` for a
    /// `clear`, which says nothing about what comes next.
    pub fn status(&self) -> Option<(Primary, Option<Detail>)> {
        Some(match self.state {
            State::Idle => (Primary::Idle, Some(Detail::Ready)),
            State::Done => (Primary::Idle, Some(Detail::Finished)),
            State::Error => (Primary::Idle, Some(Detail::Error)),
            // A message names the tool call under way; without one the
            // model is thinking (or retrying, which the screen tells).
            State::Working if self.msg.is_some() => (Primary::Active, Some(Detail::UsingTools)),
            State::Working => (Primary::Active, Some(Detail::Thinking)),
            State::Blocked => {
                let msg = self.msg.as_deref().unwrap_or("");
                let detail = match self.kind.as_deref() {
                    Some("question") => Some(Detail::Question),
                    Some("permission") if msg == "approve plan" => Some(Detail::PlanApproval),
                    Some("permission") if msg == "trust this folder" => Some(Detail::FolderTrust),
                    Some("permission") => Some(Detail::Permission),
                    Some("auth") => Some(Detail::Input),
                    _ => None,
                };
                (Primary::Waiting, detail)
            }
            State::Clear => return None,
        })
    }

    /// A short human form for `hm explain`: `blocked (permission): approve
    /// Bash: rm -rf build`.
    pub fn describe(&self) -> String {
        let mut s = self.state.name().to_owned();
        if let Some(k) = &self.kind {
            s.push_str(&format!(" ({k})"));
        }
        if let Some(p) = self.progress {
            s.push_str(&format!(" {p}%"));
        }
        if let Some(t) = self.title.as_deref().or(self.msg.as_deref()) {
            s.push_str(": ");
            s.push_str(t);
        }
        s
    }
}

pub use crate::verdict::Child;

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    #[test]
    fn the_records_claude_code_sends_are_read() {
        let r = Record::parse("state=idle:app=claude-code").expect("idle");
        assert_eq!(r.state, State::Idle);
        assert_eq!(r.app.as_deref(), Some("claude-code"));
        assert_eq!(r.status(), Some((Primary::Idle, Some(Detail::Ready))));

        let body = format!(
            "state=blocked:app=claude-code:kind=permission:msg={}",
            b64("approve Bash: rm -rf build && make all")
        );
        let r = Record::parse(&body).expect("blocked");
        assert_eq!(
            r.status(),
            Some((Primary::Waiting, Some(Detail::Permission)))
        );
        assert_eq!(
            r.msg.as_deref(),
            Some("approve Bash: rm -rf build && make all")
        );
        assert_eq!(
            r.describe(),
            "blocked (permission): approve Bash: rm -rf build && make all"
        );

        let plan = format!(
            "state=blocked:app=claude-code:kind=permission:msg={}",
            b64("approve plan")
        );
        assert_eq!(
            Record::parse(&plan).expect("plan").status(),
            Some((Primary::Waiting, Some(Detail::PlanApproval)))
        );
        let trust = format!(
            "state=blocked:app=claude-code:kind=permission:msg={}",
            b64("trust this folder")
        );
        assert_eq!(
            Record::parse(&trust).expect("trust").status(),
            Some((Primary::Waiting, Some(Detail::FolderTrust)))
        );
        let q = format!(
            "state=blocked:app=claude-code:kind=question:msg={}",
            b64("answer: Which?")
        );
        assert_eq!(
            Record::parse(&q).expect("question").status(),
            Some((Primary::Waiting, Some(Detail::Question)))
        );
        let open = format!("state=blocked:app=claude-code:msg={}", b64("dialog open"));
        assert_eq!(
            Record::parse(&open).expect("open").status(),
            Some((Primary::Waiting, None))
        );

        let child = format!(
            "state=working:app=claude-code:id=a7524d465a303106b:title={}",
            b64("Count lines in hello.py")
        );
        let r = Record::parse(&child).expect("child");
        assert_eq!(r.id.as_deref(), Some("a7524d465a303106b"));
        assert_eq!(r.title.as_deref(), Some("Count lines in hello.py"));

        let r = Record::parse("state=clear:id=a7524d465a303106b").expect("clear child");
        assert_eq!((r.state, r.status()), (State::Clear, None));
        assert_eq!(
            Record::parse("state=done:app=claude-code")
                .expect("done")
                .status(),
            Some((Primary::Idle, Some(Detail::Finished)))
        );
        let tool = format!(
            "state=working:app=claude-code:msg={}",
            b64("Reading hello.py")
        );
        assert_eq!(
            Record::parse(&tool).expect("tool").status(),
            Some((Primary::Active, Some(Detail::UsingTools)))
        );
    }

    #[test]
    fn bad_records_are_refused_not_guessed() {
        assert_eq!(Record::parse("app=claude-code"), Err(RecordError::NoState));
        assert!(matches!(
            Record::parse("state=asleep"),
            Err(RecordError::BadState(_))
        ));
        assert_eq!(
            Record::parse("state=blocked:msg=!!!"),
            Err(RecordError::BadField("msg"))
        );
        assert_eq!(
            Record::parse("state=idle:id=a b"),
            Err(RecordError::BadField("id"))
        );
        assert_eq!(
            Record::parse("state=idle:progress=101"),
            Err(RecordError::BadField("progress"))
        );
        assert_eq!(
            Record::parse(&format!("state=idle:x={}", "a".repeat(MAX_BODY))),
            Err(RecordError::TooLong)
        );
        // Keys a later revision adds are skipped.
        assert_eq!(
            Record::parse("state=idle:app=x:future=1").map(|r| r.state),
            Ok(State::Idle)
        );
    }

    #[test]
    fn decoded_text_is_short_and_has_no_controls() {
        let msg = format!("\u{1b}[2J{}", "x".repeat(1000));
        let r = Record::parse(&format!("state=blocked:kind=question:msg={}", b64(&msg)))
            .expect("parse");
        let m = r.msg.expect("msg");
        assert!(!m.contains('\u{1b}'));
        assert_eq!(m.chars().count(), MAX_TEXT);
    }

    proptest::proptest! {
        #[test]
        fn any_body_is_parsed_or_refused_without_panic(body in ".{0,400}") {
            let _ = Record::parse(&body).map(|r| (r.status(), r.describe()));
        }

        #[test]
        fn any_field_values_are_safe(
            state in "(idle|working|blocked|done|error|clear|[a-z]{0,8})",
            id in "[ -~]{0,80}",
            kind in "[ -~]{0,20}",
            msg in "[A-Za-z0-9+/=]{0,200}",
        ) {
            let body = format!("state={state}:app=x:id={id}:kind={kind}:msg={msg}");
            if let Ok(r) = Record::parse(&body) {
                proptest::prop_assert!(r.id.as_ref().is_none_or(|i| i.len() <= MAX_ID));
                proptest::prop_assert!(r.msg.as_ref().is_none_or(|m| m.chars().count() <= MAX_TEXT));
            }
        }
    }
}
