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

/// Longest escape sequence held back while deciding.
pub const MAX_SEQ: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    /// Inside an escape sequence being collected in `buf`.
    Collect(Kind),
    /// Inside a string sequence (OSC, DCS...) that saw ESC: maybe ST.
    StringEsc(Kind),
    /// Passing through an over-long sequence until it ends.
    Pass(Kind),
    PassEsc(Kind),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Esc,
    Csi,
    /// OSC, DCS, APC, PM, SOS: terminated by BEL (OSC) or ST.
    Str,
}

/// Streaming filter; feed chunks with [`filter`](Self::filter), call
/// [`finish`](Self::finish) when the replay ends.
#[derive(Debug)]
pub struct QueryFilter {
    state: State,
    buf: Vec<u8>,
}

impl Default for QueryFilter {
    fn default() -> Self {
        Self::new()
    }
}

impl QueryFilter {
    pub fn new() -> Self {
        QueryFilter {
            state: State::Ground,
            buf: Vec::new(),
        }
    }

    /// Appends `input` minus any complete query to `out`.
    pub fn filter(&mut self, input: &[u8], out: &mut Vec<u8>) {
        for &b in input {
            self.byte(b, out);
        }
    }

    /// Ends filtering: a sequence still being collected is released, so
    /// that live output continuing it reaches the terminal intact.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.buf);
        self.state = State::Ground;
    }

    fn byte(&mut self, b: u8, out: &mut Vec<u8>) {
        match self.state {
            State::Ground => {
                if b == 0x1b {
                    self.buf.push(b);
                    self.state = State::Collect(Kind::Esc);
                } else {
                    out.push(b);
                }
            }
            State::Collect(Kind::Esc) => {
                self.buf.push(b);
                self.state = match b {
                    b'[' => State::Collect(Kind::Csi),
                    b']' | b'P' | b'_' | b'^' | b'X' => State::Collect(Kind::Str),
                    // Intermediate bytes (e.g. `ESC ( B`): keep collecting.
                    0x20..=0x2f => State::Collect(Kind::Esc),
                    _ => return self.complete(out),
                };
            }
            State::Collect(Kind::Csi) => {
                self.buf.push(b);
                if (0x40..=0x7e).contains(&b) {
                    return self.complete(out);
                }
                if b == 0x18 || b == 0x1a {
                    // CAN/SUB abort the sequence.
                    out.append(&mut self.buf);
                    self.state = State::Ground;
                    return;
                }
                self.check_len(Kind::Csi, out);
            }
            State::Collect(Kind::Str) => {
                self.buf.push(b);
                match b {
                    0x07 => self.complete(out),
                    0x1b => self.state = State::StringEsc(Kind::Str),
                    _ => self.check_len(Kind::Str, out),
                }
            }
            State::StringEsc(kind) => {
                self.buf.push(b);
                if b == b'\\' {
                    self.complete(out);
                } else {
                    self.state = State::Collect(kind);
                    self.check_len(kind, out);
                }
            }
            State::Pass(kind) => {
                out.push(b);
                self.state = match (kind, b) {
                    (Kind::Csi, 0x40..=0x7e) | (Kind::Str, 0x07) => State::Ground,
                    (Kind::Str, 0x1b) => State::PassEsc(kind),
                    _ => State::Pass(kind),
                };
            }
            State::PassEsc(kind) => {
                out.push(b);
                self.state = if b == b'\\' {
                    State::Ground
                } else {
                    State::Pass(kind)
                };
            }
        }
    }

    fn check_len(&mut self, kind: Kind, out: &mut Vec<u8>) {
        if self.buf.len() >= MAX_SEQ {
            out.append(&mut self.buf);
            self.state = State::Pass(kind);
        }
    }

    fn complete(&mut self, out: &mut Vec<u8>) {
        if !is_query(&self.buf) {
            out.extend_from_slice(&self.buf);
        }
        self.buf.clear();
        self.state = State::Ground;
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
