//! How a terminal splits its input into text, controls and escape
//! sequences: the one tokenizer behind every filter that reads session
//! output (the replay query filter, the screen-switch rewriter, the status
//! bar's damage scanner and the emulator's string cap).
//!
//! It follows vte 0.15's state machine (the parser inside vt100 0.18, and
//! the one alacritty uses), byte for byte, because the filters exist to
//! predict what a terminal will do: a filter that splits differently is
//! one an attacker can slip a sequence past. In particular:
//!
//! - ESC starts a new sequence wherever it appears; CAN and SUB end one.
//! - C0 controls inside a CSI or ESC sequence are executed where they
//!   stand and the sequence goes on (`ESC [ CR 2 J` is a CR and an erase);
//!   inside DCS headers, OSC, SOS, PM and APC they are ignored.
//! - DEL and bytes from 0x80 up inside a sequence are ignored, except as
//!   OSC and DCS data; 0x9C (8-bit ST) ends DCS data but not an OSC.
//! - An OSC ends at BEL, CAN, SUB or ESC (so `ESC \`, ST, is the string's
//!   end followed by an ESC sequence of its own).
//!
//! `tests/tokenizer_vte.rs` checks the agreement against vte itself on
//! random and hostile input, and so does the `tokenizer` fuzz target.
//!
//! The tokenizer never holds output: it reports what each byte is, and
//! keeps what the terminal collects of the current sequence (bounded by a
//! cap chosen by its user) so the user can decide what the sequence means.

/// What a byte is to the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Text outside any sequence (printable, or part of a UTF-8 character).
    Text,
    /// A C0 control the terminal executes here, inside a sequence or not.
    Control,
    /// ESC, starting a sequence. `Some` when it ended an open one, with how.
    Open(Option<Ended>),
    /// Part of the open sequence that the terminal keeps: a parameter, an
    /// intermediate, string or DCS data.
    Part,
    /// Inside the open sequence, a byte the terminal ignores.
    Ignored,
    /// The last byte of the open sequence (a final byte, BEL ending an OSC,
    /// 8-bit ST ending DCS data).
    End(Ended),
    /// CAN or SUB: the open sequence ended, and the control is executed.
    Cancel(Ended),
}

/// How a sequence ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The terminal acts on it: dispatched (an OSC or DCS string ended by
    /// ESC, CAN or SUB is dispatched too).
    Acted,
    /// The terminal drops it: abandoned half-way, or malformed.
    Dropped,
}

/// What kind of sequence is open (or just ended).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `ESC`, any intermediates and a final byte; also an ESC whose next
    /// byte has not come yet.
    Esc,
    /// `ESC [`.
    Csi,
    /// `ESC ]`.
    Osc,
    /// `ESC P`.
    Dcs,
    /// `ESC X`, `ESC ^` and `ESC _`: strings vte skips whole (kitty
    /// answers graphics queries sent as APC, so they are told apart).
    Sos,
    Pm,
    Apc,
}

impl Kind {
    /// Strings are dispatched when ESC, CAN or SUB ends them.
    pub fn is_string(self) -> bool {
        matches!(
            self,
            Kind::Osc | Kind::Dcs | Kind::Sos | Kind::Pm | Kind::Apc
        )
    }
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    #[default]
    Ground,
    Escape,
    EscInt,
    CsiEntry,
    CsiParam,
    CsiInt,
    /// A malformed CSI, skipped up to its final byte.
    CsiIgnore,
    DcsEntry,
    DcsParam,
    DcsInt,
    DcsIgnore,
    DcsData,
    Osc,
    /// SOS, PM and APC.
    Skip,
}

/// Streaming tokenizer: feed bytes with [`advance`](Self::advance), read
/// the sequence with [`seq`](Self::seq).
#[derive(Debug, Clone)]
pub struct Tokenizer {
    state: State,
    kind: Kind,
    /// What the terminal collects of the sequence: for ESC, intermediates
    /// and the final byte; for CSI and the DCS header, everything after the
    /// introducer but executed controls and ignored bytes; for strings,
    /// their data. At most `cap` bytes.
    collected: Vec<u8>,
    cap: usize,
    truncated: bool,
    /// Bytes since the sequence's introducer (`[`, `]`, `P`...), whatever
    /// they were; for a plain escape, since its ESC.
    len: usize,
    /// The sequence that just ended stays readable until the next byte.
    stale: bool,
}

impl Tokenizer {
    /// A tokenizer keeping at most `cap` bytes of each sequence.
    pub fn new(cap: usize) -> Self {
        Tokenizer {
            state: State::Ground,
            kind: Kind::Esc,
            collected: Vec::new(),
            cap,
            truncated: false,
            len: 0,
            stale: false,
        }
    }

    /// Outside any sequence: text up to the next ESC can be skipped in
    /// bulk (controls there are executed and change no state).
    pub fn in_ground(&self) -> bool {
        self.state == State::Ground
    }

    /// The open sequence, or the one that ended at the last byte.
    pub fn seq(&self) -> Seq<'_> {
        Seq {
            kind: self.kind,
            collected: &self.collected,
            truncated: self.truncated,
            len: self.len,
        }
    }

    /// Takes one byte; says what it is.
    pub fn advance(&mut self, b: u8) -> Step {
        if self.stale {
            self.stale = false;
            self.kind = Kind::Esc;
            self.collected.clear();
            self.truncated = false;
            self.len = 0;
        }
        if self.state == State::Ground {
            return match b {
                0x1b => self.open(None),
                0x00..=0x1f => Step::Control,
                _ => Step::Text,
            };
        }
        self.len += 1;
        // What vte does in every state but DCS data, which has its own ends.
        if self.state != State::DcsData {
            match b {
                0x1b => {
                    let ended = self.ended_by_interruption();
                    return self.open(Some(ended));
                }
                0x18 | 0x1a => {
                    let ended = self.ended_by_interruption();
                    return self.finish(Step::Cancel(ended));
                }
                _ => {}
            }
        }
        match self.state {
            State::Ground => unreachable!("handled above"),
            State::Escape => self.escape(b),
            State::EscInt => match b {
                0x00..=0x1f => Step::Control,
                0x20..=0x2f => self.keep(b),
                0x30..=0x7e => {
                    self.keep(b);
                    self.finish(Step::End(Ended::Acted))
                }
                _ => Step::Ignored,
            },
            State::CsiEntry | State::CsiParam | State::CsiInt | State::CsiIgnore => self.csi(b),
            State::DcsEntry | State::DcsParam | State::DcsInt | State::DcsIgnore => {
                self.dcs_head(b)
            }
            State::DcsData => match b {
                0x1b => self.open(Some(Ended::Acted)),
                0x18 | 0x1a => self.finish(Step::Cancel(Ended::Acted)),
                0x9c => self.finish(Step::End(Ended::Acted)),
                0x00..=0x7e => self.keep(b),
                _ => Step::Ignored,
            },
            State::Osc => match b {
                0x07 => self.finish(Step::End(Ended::Acted)),
                0x00..=0x1f => Step::Ignored,
                _ => self.keep(b),
            },
            State::Skip => self.keep(b),
        }
    }

    /// How many bytes at the start of `bytes` go on the open sequence as
    /// parts the terminal keeps, with nothing else to say about them: a
    /// CSI's parameters, an OSC's text. They are taken as
    /// [`advance`](Self::advance) would take them one by one (each would be
    /// a [`Step::Part`]), so a filter can pass a run on in one copy instead
    /// of a call per byte; 0 when the next byte needs `advance`.
    pub fn run(&mut self, bytes: &[u8]) -> usize {
        if self.stale {
            return 0;
        }
        let n = match self.state {
            State::CsiEntry | State::CsiParam => {
                let n = bytes
                    .iter()
                    .position(|b| !(0x30..=0x3b).contains(b))
                    .unwrap_or(bytes.len());
                if n > 0 {
                    self.state = State::CsiParam;
                }
                n
            }
            // Everything from 0x20 up is OSC text, 8-bit bytes included.
            State::Osc => bytes.iter().position(|&b| b < 0x20).unwrap_or(bytes.len()),
            _ => 0,
        };
        let room = self.cap.saturating_sub(self.collected.len());
        self.collected.extend_from_slice(&bytes[..n.min(room)]);
        self.truncated |= n > room;
        self.len += n;
        n
    }

    fn escape(&mut self, b: u8) -> Step {
        let (state, kind) = match b {
            0x00..=0x1f => return Step::Control,
            0x20..=0x2f => {
                self.state = State::EscInt;
                return self.keep(b);
            }
            b'[' => (State::CsiEntry, Kind::Csi),
            b']' => (State::Osc, Kind::Osc),
            b'P' => (State::DcsEntry, Kind::Dcs),
            b'X' => (State::Skip, Kind::Sos),
            b'^' => (State::Skip, Kind::Pm),
            b'_' => (State::Skip, Kind::Apc),
            0x30..=0x7e => {
                self.keep(b);
                return self.finish(Step::End(Ended::Acted));
            }
            _ => return Step::Ignored,
        };
        self.state = state;
        self.kind = kind;
        // A string's length is its own, from after the introducer: what an
        // ESC drags along before it (ignored bytes, executed controls)
        // does not count, or a cap on it would cut the introducer itself.
        self.len = 0;
        Step::Part
    }

    fn csi(&mut self, b: u8) -> Step {
        match (self.state, b) {
            (_, 0x00..=0x1f) => Step::Control,
            (State::CsiIgnore, 0x40..=0x7e) => {
                self.keep(b);
                self.finish(Step::End(Ended::Dropped))
            }
            (State::CsiIgnore, 0x20..=0x3f) => self.keep(b),
            (_, 0x40..=0x7e) => {
                self.keep(b);
                self.finish(Step::End(Ended::Acted))
            }
            // Intermediates; a parameter after one is malformed.
            (_, 0x20..=0x2f) => {
                self.state = State::CsiInt;
                self.keep(b)
            }
            (State::CsiInt, 0x30..=0x3f) => {
                self.state = State::CsiIgnore;
                self.keep(b)
            }
            // A private marker is one only first.
            (State::CsiParam, 0x3c..=0x3f) => {
                self.state = State::CsiIgnore;
                self.keep(b)
            }
            (_, 0x30..=0x3f) => {
                self.state = State::CsiParam;
                self.keep(b)
            }
            _ => Step::Ignored,
        }
    }

    fn dcs_head(&mut self, b: u8) -> Step {
        match (self.state, b) {
            (_, 0x00..=0x1f) => Step::Ignored,
            (State::DcsIgnore, _) => Step::Ignored,
            (_, 0x40..=0x7e) => {
                self.state = State::DcsData;
                self.keep(b)
            }
            (_, 0x20..=0x2f) => {
                self.state = State::DcsInt;
                self.keep(b)
            }
            (State::DcsInt, 0x30..=0x3f) | (State::DcsParam, 0x3c..=0x3f) => {
                self.state = State::DcsIgnore;
                Step::Ignored
            }
            (_, 0x30..=0x3f) => {
                self.state = State::DcsParam;
                self.keep(b)
            }
            _ => Step::Ignored,
        }
    }

    /// How ESC, CAN or SUB ends the open sequence: strings are dispatched,
    /// anything else is abandoned.
    fn ended_by_interruption(&self) -> Ended {
        match self.state {
            State::Osc | State::DcsData => Ended::Acted,
            _ => Ended::Dropped,
        }
    }

    fn open(&mut self, ended: Option<Ended>) -> Step {
        if ended.is_some() {
            // The ended sequence stays readable until the next byte; this
            // ESC is the first of the new one.
            self.stale = true;
        } else {
            self.kind = Kind::Esc;
            self.collected.clear();
            self.truncated = false;
            self.len = 0;
        }
        self.state = State::Escape;
        Step::Open(ended)
    }

    fn finish(&mut self, step: Step) -> Step {
        self.state = State::Ground;
        self.stale = true;
        step
    }

    fn keep(&mut self, b: u8) -> Step {
        if self.collected.len() < self.cap {
            self.collected.push(b);
        } else {
            self.truncated = true;
        }
        Step::Part
    }
}

/// A sequence as the terminal collected it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seq<'a> {
    pub kind: Kind,
    /// See [`Tokenizer`]'s field of that name.
    pub collected: &'a [u8],
    /// More was collected than the cap keeps.
    pub truncated: bool,
    /// Bytes since its introducer (for a plain escape, its ESC).
    pub len: usize,
}

impl Seq<'_> {
    /// A CSI's parameter bytes (private marker included) and intermediates,
    /// and its final byte.
    pub fn csi(&self) -> Option<(&[u8], u8)> {
        match (self.kind, self.collected.split_last()) {
            (Kind::Csi, Some((&fin, body))) if !self.truncated => Some((body, fin)),
            _ => None,
        }
    }
}

/// Where the next ESC is: text before it can be passed over in bulk, as
/// every filter of output does in ground state.
pub fn find_esc(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(0x1b, bytes)
}

/// Where the next C0 control (or ESC) is: text before it is only text.
/// No `memchr` searches for a range of bytes, so this one looks at eight
/// at a time while a word has none, then byte by byte. Text between
/// controls is most of a flood, and this is the one look each of its
/// bytes gets.
pub fn find_control(bytes: &[u8]) -> Option<usize> {
    let mut from = 0;
    for w in bytes.chunks_exact(8) {
        if has_below(u64::from_ne_bytes(w.try_into().unwrap_or([0; 8])), 0x20) {
            break;
        }
        from += 8;
    }
    bytes[from..]
        .iter()
        .position(|&b| b < 0x20)
        .map(|i| from + i)
}

/// Whether some byte of `word` is below `n` (at most 0x80): the classic
/// word-at-a-time test, exact for whether there is one.
fn has_below(word: u64, n: u8) -> bool {
    let ones = u64::from_ne_bytes([1; 8]);
    let highs = u64::from_ne_bytes([0x80; 8]);
    word.wrapping_sub(ones * u64::from(n)) & !word & highs != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each byte's step, as letters: t text, c control, o open, O open
    /// ending a sequence, p part, i ignored, e end, d dropped end, x cancel.
    fn steps(input: &[u8]) -> String {
        let mut t = Tokenizer::new(64);
        input
            .iter()
            .map(|&b| match t.advance(b) {
                Step::Text => 't',
                Step::Control => 'c',
                Step::Open(None) => 'o',
                Step::Open(Some(_)) => 'O',
                Step::Part => 'p',
                Step::Ignored => 'i',
                Step::End(Ended::Acted) => 'e',
                Step::End(Ended::Dropped) => 'd',
                Step::Cancel(_) => 'x',
            })
            .collect()
    }

    #[test]
    fn a_control_inside_a_csi_is_executed_and_the_sequence_goes_on() {
        assert_eq!(steps(b"\x1b[\r2J"), "opcpe");
        let mut t = Tokenizer::new(64);
        for &b in b"\x1b[1;5\rr" {
            t.advance(b);
        }
        assert_eq!(t.seq().csi(), Some((&b"1;5"[..], b'r')));
    }

    #[test]
    fn strings_end_at_bel_esc_can_and_sub_and_ignore_controls() {
        assert_eq!(steps(b"\x1b]0;a\nb\x07"), "oppppipe");
        assert_eq!(steps(b"\x1b]0;a\x1b\\"), "oppppOe");
        assert_eq!(steps(b"\x1b]0\x18x"), "oppxt");
        // 8-bit ST ends DCS data, not an OSC.
        assert_eq!(steps(b"\x1bPq#\x9cx"), "opppet");
        assert_eq!(steps(b"\x1b]0\x9cx"), "opppp");
    }

    #[test]
    fn the_ended_sequence_is_readable_until_the_next_byte() {
        let mut t = Tokenizer::new(64);
        for &b in b"\x1b]11;?" {
            t.advance(b);
        }
        assert_eq!(t.advance(0x1b), Step::Open(Some(Ended::Acted)));
        assert_eq!((t.seq().kind, t.seq().collected), (Kind::Osc, &b"11;?"[..]));
        assert_eq!(t.advance(b'\\'), Step::End(Ended::Acted));
        assert_eq!((t.seq().kind, t.seq().collected), (Kind::Esc, &b"\\"[..]));
    }

    #[test]
    fn malformed_csi_is_dropped_at_its_final_byte() {
        assert_eq!(steps(b"\x1b[1?h"), "opppd");
        assert_eq!(steps(b"\x1b[ 1h"), "opppd");
        assert_eq!(steps(b"\x1b[?1049h"), "oppppppe");
    }

    #[test]
    fn high_bytes_and_del_inside_a_sequence_are_ignored() {
        assert_eq!(steps(b"\x1b\x80[\x7f?\xff1h"), "oipipipe");
    }

    #[test]
    fn a_run_is_what_advance_would_take_as_parts() {
        let input = b"\x1b[38;5;123mx\x1b]0;a title\x07y";
        let mut one = Tokenizer::new(64);
        let mut by_run = Tokenizer::new(64);
        let mut i = 0;
        while i < input.len() {
            let n = by_run.run(&input[i..]);
            for &b in &input[i..i + n] {
                assert_eq!(one.advance(b), Step::Part, "byte {i}");
            }
            i += n;
            if i < input.len() {
                assert_eq!(one.advance(input[i]), by_run.advance(input[i]), "byte {i}");
                assert_eq!(one.seq(), by_run.seq());
                i += 1;
            }
        }
    }

    #[test]
    fn what_is_kept_is_capped() {
        let mut t = Tokenizer::new(4);
        for &b in b"\x1b]0;abcdef\x07" {
            t.advance(b);
        }
        let s = t.seq();
        assert_eq!((s.collected, s.truncated, s.len), (&b"0;ab"[..], true, 9));
    }

    #[test]
    fn the_fast_searches_find_what_a_byte_search_does() {
        for b in 0..=255u8 {
            for len in [1usize, 7, 8, 9, 16, 23, 33, 70] {
                for at in 0..len {
                    for fill in [b'a', 0x80, 0xff, 0x20] {
                        let mut bytes = vec![fill; len];
                        bytes[at] = b;
                        let control = bytes.iter().position(|&b| b < 0x20);
                        let esc = bytes.iter().position(|&b| b == 0x1b);
                        assert_eq!(find_control(&bytes), control);
                        assert_eq!(find_esc(&bytes), esc);
                    }
                }
            }
        }
    }
}
