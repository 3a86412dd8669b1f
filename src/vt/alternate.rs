//! Whether output leaves its terminal on the alternate screen, read as it
//! goes: the switches a program makes (`CSI ? 47 h`, `1047`, `1049`, and
//! `l` back; a full reset, `ESC c`, goes back too), found by the tokenizer
//! every output filter shares, without an emulator. The supervisor's
//! journal records where each falls, so that a replay that starts after
//! a full-screen program took the alternate screen (its switch long gone
//! from the kept bytes) starts on it too, and its drawing is not taken
//! for history.

use super::tokenizer::{Ended, Kind, Step, Tokenizer, find_esc};

/// Bytes of a sequence kept: enough for a list of mode parameters.
const CAP: usize = 64;

#[derive(Debug, Clone)]
pub struct Alternate {
    tokens: Tokenizer,
    on: bool,
}

impl Default for Alternate {
    fn default() -> Self {
        Alternate {
            tokens: Tokenizer::new(CAP),
            on: false,
        }
    }
}

impl Alternate {
    /// Whether the output so far left the terminal on the alternate
    /// screen.
    pub fn on(&self) -> bool {
        self.on
    }

    /// Reads `bytes` (sequences may be cut anywhere between calls): for
    /// each change of screen, the index in `bytes` of the first byte after
    /// the sequence that made it, and whether the alternate screen is in
    /// use from there.
    pub fn scan(&mut self, bytes: &[u8], mut switched: impl FnMut(usize, bool)) {
        let mut i = 0;
        while i < bytes.len() {
            if self.tokens.in_ground() {
                // Text up to the next ESC switches nothing.
                match find_esc(&bytes[i..]) {
                    Some(n) => i += n,
                    None => return,
                }
            } else {
                // Parameters and string data in one go.
                i += self.tokens.run(&bytes[i..]);
                if i >= bytes.len() {
                    return;
                }
            }
            let step = self.tokens.advance(bytes[i]);
            i += 1;
            if step != Step::End(Ended::Acted) {
                continue;
            }
            let seq = self.tokens.seq();
            let now = match seq.kind {
                Kind::Esc if seq.collected == b"c" => Some(false),
                Kind::Csi => seq.csi().and_then(|(body, fin)| switch(body, fin)),
                _ => None,
            };
            if let Some(on) = now.filter(|&on| on != self.on) {
                self.on = on;
                switched(i, on);
            }
        }
    }
}

/// What a CSI does to the screen: `Some(true)` for `? … 1049 … h` (or 47,
/// 1047), `Some(false)` for `l`. Sub-parameters (`1049:1`) and
/// intermediates make it something else.
fn switch(body: &[u8], fin: u8) -> Option<bool> {
    let params = body.strip_prefix(b"?")?;
    if !matches!(fin, b'h' | b'l') || params.iter().any(|&c| (0x20..=0x2f).contains(&c)) {
        return None;
    }
    let screen = |p: &[u8]| {
        std::str::from_utf8(p)
            .ok()
            .and_then(|s| s.parse::<u32>().ok())
            .is_some_and(|n| matches!(n, 47 | 1047 | 1049))
    };
    params
        .split(|&c| c == b';')
        .any(screen)
        .then_some(fin == b'h')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn switches(pieces: &[&[u8]]) -> Vec<(usize, bool)> {
        let mut a = Alternate::default();
        let mut out = Vec::new();
        let mut base = 0;
        for p in pieces {
            a.scan(p, |i, on| out.push((base + i, on)));
            base += p.len();
        }
        out
    }

    #[test]
    fn switches_are_found_where_they_end_however_the_output_is_cut() {
        let out = b"ab\x1b[?1049hdraw\x1b[?25;47l\x1b[?1049h\x1bc tail";
        let want = vec![(10, true), (23, false), (31, true), (33, false)];
        assert_eq!(switches(&[out]), want);
        let bytes: Vec<&[u8]> = out.chunks(1).collect();
        assert_eq!(switches(&bytes), want);
        let halves: Vec<&[u8]> = out.chunks(5).collect();
        assert_eq!(switches(&halves), want);
    }

    #[test]
    fn what_is_no_switch_is_passed_over() {
        // Not private, a sub-parameter, another mode, a switch inside a
        // string, a switch to where it already is.
        let out = b"\x1b[1049h\x1b[?1049:1h\x1b[?25h\x1b]0;\x1b[?1049h";
        assert_eq!(switches(&[out]), [(out.len(), true)]);
        assert!(switches(&[b"\x1b[?1049l"]).is_empty());
        assert!(switches(&[b"\x1b]2;title \x9b?1049h\x07"]).is_empty());
    }
}
