//! Removes terminal queries from replayed output.
//!
//! Replaying scrollback to a real terminal would make it answer every old
//! query in that history (device attributes, cursor position, colours,
//! settings), and the answers would arrive as keystrokes in the child's
//! input at some arbitrary later moment. During replay the attach client
//! passes output through this filter: every escape sequence that asks the
//! terminal to reply is dropped, everything else is kept byte for byte.
//! It is incremental, so sequences split across frames are handled, and
//! bounded: a sequence longer than [`MAX_SEQ`] is passed through as it
//! streams (no query is that long).
//!
//! It splits the stream the way a terminal does (vte's state machine, as
//! in alacritty and the dashboard's vt100): ESC starts a new sequence
//! wherever it appears, CAN and SUB abort one, controls inside a sequence
//! are executed rather than collected, and an escape string ends at BEL
//! (OSC), ST, any other ESC, CAN or SUB. Splitting any other way lets a
//! query through: `ESC [ ? ESC [ 6 n` is a cursor position request to a
//! terminal, and so is `ESC ] 11 ; ? ESC [` for the background colour.
//! When a dropped query was what ended the sequence before it (an aborted
//! CSI, a string ended by ESC), an ST takes its place, so that what
//! follows cannot join that sequence.

use crate::vt::tokenizer::{Ended, Kind, Seq, Step, Tokenizer, find_esc};

/// Longest escape sequence held back while deciding.
pub const MAX_SEQ: usize = 4096;

const ESC: u8 = 0x1b;
const ST: &[u8] = b"\x1b\\";

/// How a sequence ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// By its own last byte (final byte, BEL, ST, CAN or SUB in a string).
    Complete,
    /// Abandoned at CAN or SUB, or malformed: the terminal does not act on
    /// it.
    Aborted,
    /// By the ESC that starts the next sequence; a string is dispatched
    /// then, anything else abandoned.
    Esc { string: bool },
}

/// Streaming filter; feed chunks with [`filter`](Self::filter), call
/// [`finish`](Self::finish) when the replay ends.
#[derive(Debug)]
pub struct QueryFilter {
    tokens: Tokenizer,
    /// A sequence is open (held or passing).
    in_seq: bool,
    /// The raw bytes of the sequence being held, from its ESC.
    buf: Vec<u8>,
    /// The sequence in the form [`is_query`] reads (ESC, introducer, what
    /// the terminal collected), rebuilt for each decision.
    seq: Vec<u8>,
    /// The sequence is too long to hold and is being passed through.
    passing: bool,
    /// A string has just been ended by ESC, and was a query if `Some(true)`:
    /// the next byte tells whether the ESC was the start of ST.
    string_esc: Option<bool>,
    /// The output ends inside a sequence that the ESC starting the current
    /// one ends, in the terminal.
    open: bool,
    /// Drop only the status protocol's probe (live output from a
    /// supervisor that answers it), not every query (replay).
    probe_only: bool,
}

impl Default for QueryFilter {
    fn default() -> Self {
        Self::new()
    }
}

impl QueryFilter {
    pub fn new() -> Self {
        QueryFilter {
            tokens: Tokenizer::new(MAX_SEQ),
            in_seq: false,
            buf: Vec::new(),
            seq: Vec::new(),
            passing: false,
            string_esc: None,
            open: false,
            probe_only: false,
        }
    }

    /// A filter that drops only the OSC 7501 probe: for live output of a
    /// supervisor that answers the probe itself, so that the program does
    /// not get a second answer from a terminal that speaks the protocol.
    pub fn status_probe_only() -> Self {
        QueryFilter {
            probe_only: true,
            ..QueryFilter::new()
        }
    }

    /// Appends `input` minus any complete query to `out`.
    pub fn filter(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let mut rest = input;
        loop {
            if self.tokens.in_ground() && self.string_esc.is_none() {
                // Text between sequences goes through as it is, in one
                // copy: live output is mostly text.
                let n = find_esc(rest).unwrap_or(rest.len());
                out.extend_from_slice(&rest[..n]);
                rest = &rest[n..];
            }
            if self.string_esc.is_none() {
                // Parameters and string text are held (or passed) in one
                // copy, as they would be a byte at a time.
                let n = self.tokens.run(rest);
                if n > 0 {
                    self.hold_run(&rest[..n], out);
                    rest = &rest[n..];
                }
            }
            let Some((&b, tail)) = rest.split_first() else {
                return;
            };
            self.byte(b, out);
            rest = tail;
        }
    }

    /// Ends filtering: a sequence still being collected is released, so
    /// that live output continuing it reaches the terminal intact.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.buf);
        *self = QueryFilter {
            probe_only: self.probe_only,
            ..QueryFilter::new()
        };
    }

    fn byte(&mut self, b: u8, out: &mut Vec<u8>) {
        let step = self.tokens.advance(b);
        if let Some(query) = self.string_esc.take() {
            let seq = self.tokens.seq();
            if step == Step::End(Ended::Acted) && seq.kind == Kind::Esc && seq.collected == b"\\" {
                // ST: the string ends here, its terminator included.
                self.hold(b, out);
                return self.end(End::Complete, query, out);
            }
            // Any other byte: the ESC ended the string and starts the next
            // sequence, which this byte continues.
            self.buf.pop();
            self.end(End::Esc { string: true }, query, out);
            self.begin();
        }
        match step {
            Step::Text => out.push(b),
            Step::Control if !self.in_seq => out.push(b),
            Step::Control | Step::Part | Step::Ignored => self.hold(b, out),
            Step::Open(None) => self.begin(),
            Step::Open(Some(_)) if self.tokens.seq().kind.is_string() => {
                // Held even when passing, until the next byte says whether
                // it is ST or the start of a sequence to look at.
                self.string_esc = Some(self.is_dropped());
                self.buf.push(b);
            }
            Step::Open(Some(_)) => {
                self.end(End::Esc { string: false }, false, out);
                self.begin();
            }
            // A malformed CSI (`ESC [ ? " 0 $ p`) that vte skips is judged
            // as if it were whole: another terminal may answer it, and
            // dropping a query nobody answers costs nothing.
            Step::End(_) => {
                self.hold(b, out);
                let query = self.is_dropped();
                self.end(End::Complete, query, out);
            }
            Step::Cancel(_) => {
                self.hold(b, out);
                // A string is dispatched when cancelled; anything else is
                // abandoned.
                if self.tokens.seq().kind.is_string() {
                    let query = self.is_dropped();
                    self.end(End::Complete, query, out);
                } else {
                    self.end(End::Aborted, false, out);
                }
            }
        }
    }

    /// Whether the sequence just read is one this filter drops.
    fn is_dropped(&mut self) -> bool {
        if self.passing {
            return false;
        }
        let seq = self.tokens.seq();
        as_escape(seq, &mut self.seq);
        if self.probe_only {
            is_status_probe(&self.seq)
        } else {
            is_query(&self.seq)
        }
    }

    /// Starts a sequence at an ESC.
    fn begin(&mut self) {
        self.buf.clear();
        self.buf.push(ESC);
        self.passing = false;
        self.in_seq = true;
    }

    /// Takes a byte of the current sequence: held while the sequence is
    /// short enough to decide on, passed on once it is not.
    fn hold(&mut self, b: u8, out: &mut Vec<u8>) {
        if self.passing {
            out.append(&mut self.buf);
            out.push(b);
            return;
        }
        self.buf.push(b);
        if self.buf.len() > MAX_SEQ {
            out.append(&mut self.buf);
            self.passing = true;
        }
    }

    /// [`hold`](Self::hold) for a run of bytes.
    fn hold_run(&mut self, run: &[u8], out: &mut Vec<u8>) {
        if self.passing {
            out.append(&mut self.buf);
            out.extend_from_slice(run);
            return;
        }
        self.buf.extend_from_slice(run);
        if self.buf.len() > MAX_SEQ {
            out.append(&mut self.buf);
            self.passing = true;
        }
    }

    /// The current sequence has ended: drop it if it is a query (and the
    /// terminal would act on it), else release it.
    fn end(&mut self, how: End, query: bool, out: &mut Vec<u8>) {
        let acted_on = match how {
            End::Complete => true,
            End::Aborted => false,
            End::Esc { string } => string,
        };
        if acted_on && query {
            self.buf.clear();
            // The ESC of the dropped query ended the sequence before it; if
            // the next ESC does not take over (it does when this one ended
            // at an ESC too), ST must, or what follows would continue it.
            if how == End::Complete && self.open {
                out.extend_from_slice(ST);
                self.open = false;
            }
        } else {
            out.append(&mut self.buf);
            self.open = matches!(how, End::Esc { .. });
        }
        self.passing = false;
        self.in_seq = false;
    }
}

/// A sequence as raw bytes in the form [`is_query`] reads: ESC, the
/// introducer, and what the terminal collected (terminator left out).
fn as_escape(seq: Seq<'_>, out: &mut Vec<u8>) {
    out.clear();
    out.push(ESC);
    match seq.kind {
        Kind::Esc => {}
        Kind::Csi => out.push(b'['),
        Kind::Osc => out.push(b']'),
        Kind::Dcs => out.push(b'P'),
        Kind::Sos => out.push(b'X'),
        Kind::Pm => out.push(b'^'),
        Kind::Apc => out.push(b'_'),
    }
    out.extend_from_slice(seq.collected);
}

/// Whether a complete escape sequence is the OSC 7501 probe.
pub fn is_status_probe(seq: &[u8]) -> bool {
    match seq {
        [0x1b, b']', body @ ..] => strip_terminator(body).starts_with(b"7501;?"),
        _ => false,
    }
}

/// Whether a complete escape sequence asks the terminal for an answer.
pub fn is_query(seq: &[u8]) -> bool {
    match seq {
        // DECID, an old form of primary device attributes.
        [0x1b, b'Z'] => true,
        [0x1b, b'[', body @ .., fin] => csi_is_query(body, *fin),
        [0x1b, intro @ (b']' | b'P' | b'_'), body @ ..] => {
            let body = strip_terminator(body);
            match intro {
                // OSC whose last field is `?`: colour, clipboard, font queries.
                b']' => body.split(|&c| c == b';').next_back() == Some(b"?".as_slice()),
                // DECRQSS and XTGETTCAP.
                b'P' => body.starts_with(b"$q") || body.starts_with(b"+q"),
                // Kitty graphics protocol query.
                _ => body.starts_with(b"G") && body.windows(3).any(|w| w == b"a=q"),
            }
        }
        _ => false,
    }
}

fn strip_terminator(body: &[u8]) -> &[u8] {
    body.strip_suffix(b"\x1b\\")
        .or_else(|| body.strip_suffix(b"\x07"))
        .unwrap_or(body)
}

fn csi_is_query(body: &[u8], fin: u8) -> bool {
    let first_param = || -> Option<u32> {
        let digits: Vec<u8> = body
            .iter()
            .copied()
            .skip_while(|c| !c.is_ascii_digit())
            .take_while(u8::is_ascii_digit)
            .collect();
        std::str::from_utf8(&digits).ok()?.parse().ok()
    };
    match fin {
        // Primary, secondary and tertiary device attributes.
        b'c' => true,
        // Device status reports (cursor position, ...): all are queries.
        b'n' => !body.is_empty(),
        // DECRQM (mode query) ends in `$p`; XTVERSION is `CSI > q`.
        b'p' => body.ends_with(b"$"),
        b'q' => body.starts_with(b">"),
        // Window reports: sizes, positions, titles.
        b't' => matches!(
            first_param(),
            Some(11 | 13 | 14 | 15 | 16 | 18 | 19 | 20 | 21)
        ),
        // Kitty keyboard flags query.
        b'u' => body == b"?",
        // XTSMGRAPHICS and DECREQTPARM.
        b'S' => body.starts_with(b"?"),
        b'x' => matches!(body, b"" | b"0" | b"1"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn run(input: &[u8]) -> Vec<u8> {
        let mut f = QueryFilter::new();
        let mut out = Vec::new();
        f.filter(input, &mut out);
        f.finish(&mut out);
        out
    }

    #[test]
    fn drops_queries_and_keeps_everything_else() {
        let input = b"a\x1b[c\x1b[>c\x1b[6n\x1b[?6n\x1b]11;?\x07\x1b]4;1;?\x1b\\\x1bP$qm\x1b\\\x1b[?2004$p\x1b[>q\x1b[18t\x1b[?u\x1b_Gi=1,a=q;AAAA\x1b\\b";
        assert_eq!(run(input), b"ab");
        let keep = b"\x1b[1;31mred\x1b[0m\x1b]0;title\x07\x1b[2J\x1b[?1049h\x1b(B\x1b7\x1b8\x1b[22;0t\x1b]52;c;aGk=\x07";
        assert_eq!(run(keep), keep.to_vec());
    }

    #[test]
    fn the_probe_only_filter_drops_the_status_probe_and_nothing_else() {
        let mut f = QueryFilter::status_probe_only();
        let mut out = Vec::new();
        // Split anywhere, as frames split it.
        let input =
            b"a\x1b]7501;?\x07\x1b[cb\x1b]7501;state=idle:app=claude-code\x07c\x1b]7501;?\x1b\\d";
        for chunk in input.chunks(3) {
            f.filter(chunk, &mut out);
        }
        f.finish(&mut out);
        assert_eq!(
            out,
            b"a\x1b[cb\x1b]7501;state=idle:app=claude-code\x07cd".to_vec()
        );
        // Every query is dropped in replay, the probe among them.
        assert_eq!(run(b"x\x1b]7501;?\x07y"), b"xy");
    }

    #[test]
    fn long_strings_stream_through() {
        let mut input = b"\x1b]2;".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_SEQ * 2));
        input.extend(b"\x07after");
        assert_eq!(run(&input), input);
    }

    #[test]
    fn a_partial_sequence_is_released_at_the_end() {
        let mut f = QueryFilter::new();
        let mut out = Vec::new();
        f.filter(b"x\x1b[3", &mut out);
        assert_eq!(out, b"x");
        f.finish(&mut out);
        assert_eq!(out, b"x\x1b[3");
    }

    #[test]
    fn queries_are_found_however_a_terminal_would_split_them() {
        // ESC inside a CSI starts a new one (and ST stands in for the
        // dropped query as what ends the first); controls inside are
        // executed.
        assert_eq!(run(b"\x1b[?\x1b[6n"), b"\x1b[?\x1b\\");
        assert_eq!(run(b"\x1b\0\0[?2004$p"), b"");
        assert_eq!(run(b"\x1b[1\n8t"), b"");
        // A string ends at any ESC, CAN or SUB, and is acted on there.
        assert_eq!(run(b"\x1b]11;?\x1b[mtext"), b"\x1b[mtext");
        assert_eq!(run(b"\x1b]11;?\x18after"), b"after");
        assert_eq!(run(b"\x1b]11;\r?\x07"), b"");
        // BEL does not end a DCS; an 8-bit ST ends its data.
        assert_eq!(run(b"\x1bP\x07$qm\x1b\\"), b"");
        assert_eq!(run(b"\x1bP$qm\x9ctext"), b"text");
        // A CSI ended by ESC is not acted on: nothing to drop.
        assert_eq!(run(b"\x1b[6\x1b[m"), b"\x1b[6\x1b[m");
    }

    #[test]
    fn a_dropped_query_still_ends_what_came_before_it() {
        // Without the ST, `?` BEL would complete the OSC as a query, and
        // `2c` the CSI as a device attributes request.
        assert_eq!(run(b"\x1b]11;\x1b[6n?\x07"), b"\x1b]11;\x1b\\?\x07");
        assert_eq!(run(b"\x1b[1;\x1b[6n2c"), b"\x1b[1;\x1b\\2c");
        assert_eq!(run(b"\x1b\x1b[6nZ"), b"\x1b\x1b\\Z");
        // Nothing is added when the dropped query did not end anything.
        assert_eq!(run(b"a\x1b[6nb"), b"ab");
    }

    #[test]
    fn a_long_sequence_passes_but_the_query_after_it_does_not() {
        let mut input = b"\x1b[".to_vec();
        input.extend(std::iter::repeat_n(b'1', MAX_SEQ * 2));
        let passed = input.clone();
        input.extend(b"\x1b[c");
        let mut want = passed;
        want.extend(b"\x1b\\");
        assert_eq!(run(&input), want);
    }

    proptest! {
        #[test]
        fn chunking_does_not_matter(
            bytes in proptest::collection::vec(prop_oneof![Just(0x1bu8), Just(b'['), Just(b']'), Just(b'c'), Just(b'?'), Just(b';'), Just(0x07), Just(b'\\'), any::<u8>()], 0..300),
            cuts in proptest::collection::vec(0usize..20, 0..30),
        ) {
            let whole = run(&bytes);
            let mut f = QueryFilter::new();
            let mut out = Vec::new();
            let mut rest = &bytes[..];
            for c in cuts {
                let c = c.min(rest.len());
                f.filter(&rest[..c], &mut out);
                rest = &rest[c..];
            }
            f.filter(rest, &mut out);
            f.finish(&mut out);
            prop_assert_eq!(whole, out);
        }

        #[test]
        fn text_without_escapes_is_untouched(bytes in proptest::collection::vec(any::<u8>().prop_filter("no ESC", |b| *b != 0x1b), 0..500)) {
            prop_assert_eq!(run(&bytes), bytes);
        }
    }
}
