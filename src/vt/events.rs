//! What a program says to its terminal besides drawing the screen.
//!
//! vt100 draws the screen and hands everything it does not act on to its
//! callbacks. The [`Recorder`] turns those into [`TermEvent`]s, in order,
//! for the supervisor to take after each read: window titles and
//! notifications are evidence for the state detector, queries are what the
//! supervisor may have to answer while no terminal is attached.
//!
//! Everything here is bounded: a title or a message is cut at
//! [`MAX_TEXT`] bytes, and at most [`MAX_EVENTS`] events wait to be taken
//! (a program that floods bells loses the excess, not memory).

/// Longest title or notification text kept, in bytes.
pub const MAX_TEXT: usize = 1024;
/// Most events held between two [`Recorder::take`]s.
pub const MAX_EVENTS: usize = 256;

/// Longest OSC 7501 status record passed on (longer than any title: a
/// record carries base64 text); `detect::status` parses what is passed.
pub const MAX_RECORD: usize = 16 * 1024;

/// A terminal query a program may wait on an answer to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Query {
    /// `CSI c` / `CSI 0 c`: primary device attributes.
    PrimaryAttributes,
    /// `CSI > c`: secondary device attributes.
    SecondaryAttributes,
    /// `CSI 5 n`: device status.
    DeviceStatus,
    /// `CSI 6 n`: cursor position; where the cursor was when it was asked
    /// (0-based), since the answer must not see output that followed.
    CursorPosition { row: u16, col: u16 },
    /// `OSC 7501 ; ?`: does the terminal speak the program status protocol.
    StatusProtocol,
}

impl Query {
    /// What a terminal answers, for the queries hm answers while no
    /// terminal of a person's is attached: an xterm-like VT220 with
    /// colours; and the status protocol's probe, which the supervisor
    /// answers itself when its detector reads the records.
    pub fn answer(self) -> Option<Vec<u8>> {
        Some(match self {
            Query::PrimaryAttributes => b"\x1b[?62;22c".to_vec(),
            Query::SecondaryAttributes => b"\x1b[>1;10;0c".to_vec(),
            Query::DeviceStatus => b"\x1b[0n".to_vec(),
            Query::CursorPosition { row, col } => {
                format!("\x1b[{};{}R", u32::from(row) + 1, u32::from(col) + 1).into_bytes()
            }
            // "Yes": a status reply starts with `?` (what follows is the
            // protocol revision, which no program checks yet).
            Query::StatusProtocol => b"\x1b]7501;?\x1b\\".to_vec(),
        })
    }
}

/// One thing the program said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TermEvent {
    /// OSC 0 or OSC 2.
    Title(String),
    /// BEL outside a string.
    Bell,
    /// A desktop notification: OSC 9 (`ESC ] 9 ; text`) or OSC 777
    /// (`ESC ] 777 ; notify ; title ; body`).
    Notify(String),
    /// An OSC 7501 status record (not the probe), its body after `7501;`.
    StatusRecord(String),
    Query(Query),
    /// OSC 9 ; 4 ; STATE ; PERCENT (ConEmu's, Windows Terminal's and
    /// others' progress report).
    Progress(Progress),
    /// OSC 133 shell integration (FinalTerm's marks, which bash, zsh and
    /// fish emit with their integration scripts).
    Shell(ShellMark),
}

/// A progress report: what state the progress is in, and how far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// `0`: no progress any more.
    Cleared,
    /// `1`: going, at this percentage.
    Running(u8),
    /// `2`: going, in error, at this percentage.
    Error(u8),
    /// `3`: going, how far not known.
    Indeterminate,
    /// `4`: paused, at this percentage.
    Paused(u8),
}

/// A shell integration mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellMark {
    /// `A`: the prompt starts.
    PromptStart,
    /// `B`: the prompt ends; what follows is typed.
    CommandStart,
    /// `C`: the command was entered and runs.
    CommandExecuted,
    /// `D[;CODE]`: the command finished, with its exit code if given.
    CommandFinished(Option<i32>),
}

/// vt100 callbacks that collect [`TermEvent`]s.
#[derive(Debug, Default)]
pub struct Recorder {
    events: Vec<TermEvent>,
    /// Events dropped since the last take because [`MAX_EVENTS`] were
    /// already waiting.
    pub dropped: u64,
    /// The window title now (OSC 0/2), cut as [`TermEvent::Title`] is.
    pub title: String,
}

impl Recorder {
    /// The events since the last call, oldest first.
    pub fn take(&mut self) -> Vec<TermEvent> {
        self.dropped = 0;
        std::mem::take(&mut self.events)
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    fn push(&mut self, event: TermEvent) {
        if self.events.len() < MAX_EVENTS {
            self.events.push(event);
        } else {
            self.dropped += 1;
        }
    }
}

/// Text of at most [`MAX_TEXT`] bytes, cut at a character boundary.
fn text(bytes: &[u8]) -> String {
    let mut s = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_TEXT)]).into_owned();
    if bytes.len() > MAX_TEXT {
        // The cut may have split a character into U+FFFD; drop it.
        while s.ends_with('\u{FFFD}') {
            s.pop();
        }
    }
    s
}

/// OSC 9 ; 4's fields after the `4`: a state and a percentage, clamped to
/// 100 (a missing or unreadable percentage is 0).
fn progress(fields: &[&[u8]]) -> Option<Progress> {
    let num = |i: usize| -> Option<u32> {
        fields
            .get(i)
            .and_then(|f| std::str::from_utf8(f).ok())
            .and_then(|f| f.parse().ok())
    };
    let pct = u8::try_from(num(1).unwrap_or(0).min(100)).unwrap_or(100);
    Some(match num(0).unwrap_or(0) {
        0 => Progress::Cleared,
        1 => Progress::Running(pct),
        2 => Progress::Error(pct),
        3 => Progress::Indeterminate,
        4 => Progress::Paused(pct),
        _ => return None,
    })
}

impl vt100::Callbacks for Recorder {
    fn audible_bell(&mut self, _: &mut vt100::Screen) {
        self.push(TermEvent::Bell);
    }

    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.title = text(title);
        self.push(TermEvent::Title(self.title.clone()));
    }

    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        _i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        let first = params.first().and_then(|p| p.first()).copied().unwrap_or(0);
        let query = match (i1, c, first) {
            (None, 'c', 0) => Query::PrimaryAttributes,
            (Some(b'>'), 'c', 0) => Query::SecondaryAttributes,
            (None, 'n', 5) => Query::DeviceStatus,
            (None, 'n', 6) => {
                let (row, col) = screen.cursor_position();
                Query::CursorPosition { row, col }
            }
            _ => return,
        };
        self.push(TermEvent::Query(query));
    }

    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        match params {
            // OSC 9 ; 4 ; ... is a progress report, not a message.
            [b"9", b"4", rest @ ..] => {
                if let Some(p) = progress(rest) {
                    self.push(TermEvent::Progress(p));
                }
            }
            [b"9", rest @ ..] if !rest.is_empty() => {
                self.push(TermEvent::Notify(text(&rest.join(&b';'))));
            }
            [b"133", mark, rest @ ..] => {
                let code = rest
                    .first()
                    .and_then(|c| std::str::from_utf8(c).ok())
                    .and_then(|c| c.parse().ok());
                let mark = match *mark {
                    b"A" => ShellMark::PromptStart,
                    b"B" => ShellMark::CommandStart,
                    b"C" => ShellMark::CommandExecuted,
                    b"D" => ShellMark::CommandFinished(code),
                    _ => return,
                };
                self.push(TermEvent::Shell(mark));
            }
            [b"777", b"notify", rest @ ..] => {
                self.push(TermEvent::Notify(text(&rest.join(&b':'))));
            }
            [b"7501", body @ ..] => {
                // vt100 splits the body at every ';'; the protocol's fields
                // are ':'-separated, so a ';' is part of the data.
                let body = body.join(&b';');
                if body.first() == Some(&b'?') {
                    self.push(TermEvent::Query(Query::StatusProtocol));
                } else if body.len() <= MAX_RECORD {
                    // Longer than any title: a record carries base64 text.
                    self.push(TermEvent::StatusRecord(
                        String::from_utf8_lossy(&body).into_owned(),
                    ));
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Size;
    use crate::vt::term::Term;

    fn events(bytes: &[u8]) -> Vec<TermEvent> {
        let mut t = Term::with_callbacks(Size { cols: 80, rows: 24 }, Recorder::default());
        t.feed(bytes);
        t.callbacks_mut().take()
    }

    #[test]
    fn progress_and_shell_marks_are_recorded() {
        assert_eq!(
            events(
                b"\x1b]9;4;1;40\x07\x1b]9;4;3\x07\x1b]9;4;1;900\x07\x1b]9;4;0\x07\x1b]9;4;7\x07"
            ),
            vec![
                TermEvent::Progress(Progress::Running(40)),
                TermEvent::Progress(Progress::Indeterminate),
                TermEvent::Progress(Progress::Running(100)),
                TermEvent::Progress(Progress::Cleared),
            ]
        );
        assert_eq!(
            events(
                b"\x1b]133;A\x07$ \x1b]133;B\x07ls\r\n\x1b]133;C\x07\x1b]133;D;2\x07\x1b]133;D\x07"
            ),
            vec![
                TermEvent::Shell(ShellMark::PromptStart),
                TermEvent::Shell(ShellMark::CommandStart),
                TermEvent::Shell(ShellMark::CommandExecuted),
                TermEvent::Shell(ShellMark::CommandFinished(Some(2))),
                TermEvent::Shell(ShellMark::CommandFinished(None)),
            ]
        );
    }

    #[test]
    fn titles_bells_and_notifications_are_recorded_in_order() {
        assert_eq!(
            events(b"\x1b]0;\xe2\x9c\xb3 Claude Code\x07a\x07\x1b]9;done\x1b\\\x1b]777;notify;hm;needs you\x07"),
            vec![
                TermEvent::Title("✳ Claude Code".into()),
                TermEvent::Bell,
                TermEvent::Notify("done".into()),
                TermEvent::Notify("hm:needs you".into()),
            ]
        );
    }

    #[test]
    fn queries_are_recognised() {
        assert_eq!(
            events(b"\x1b]7501;?\x07\x1b[c\x1b[>c\x1b[3;5H\x1b[6nab\x1b[5n\x1b[1c"),
            vec![
                TermEvent::Query(Query::StatusProtocol),
                TermEvent::Query(Query::PrimaryAttributes),
                TermEvent::Query(Query::SecondaryAttributes),
                TermEvent::Query(Query::CursorPosition { row: 2, col: 4 }),
                TermEvent::Query(Query::DeviceStatus),
            ]
        );
    }

    #[test]
    fn answers_are_what_a_terminal_says() {
        assert_eq!(
            Query::CursorPosition { row: 2, col: 4 }.answer().as_deref(),
            Some(&b"\x1b[3;5R"[..])
        );
        assert_eq!(
            Query::DeviceStatus.answer().as_deref(),
            Some(&b"\x1b[0n"[..])
        );
        assert!(
            Query::PrimaryAttributes
                .answer()
                .is_some_and(|a| a.ends_with(b"c"))
        );
        assert_eq!(
            Query::StatusProtocol.answer().as_deref(),
            Some(&b"\x1b]7501;?\x1b\\"[..])
        );
    }

    #[test]
    fn status_records_keep_their_body() {
        assert_eq!(
            events(b"\x1b]7501;state=idle:app=claude-code\x07"),
            vec![TermEvent::StatusRecord("state=idle:app=claude-code".into())]
        );
    }

    #[test]
    fn progress_reports_are_not_notifications() {
        assert_eq!(
            events(b"\x1b]9;4;1;50\x07"),
            vec![TermEvent::Progress(Progress::Running(50))]
        );
    }

    #[test]
    fn long_titles_are_cut_and_floods_bounded() {
        let mut long = b"\x1b]2;".to_vec();
        long.extend(std::iter::repeat_n("é".as_bytes(), 2000).flatten());
        long.push(7);
        match &events(&long)[..] {
            [TermEvent::Title(t)] => assert!(t.len() <= MAX_TEXT && t.chars().all(|c| c == 'é')),
            other => panic!("{other:?}"),
        }
        assert_eq!(events(&[7; 1000]).len(), MAX_EVENTS);
    }
}
