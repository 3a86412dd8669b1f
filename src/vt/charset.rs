//! The VT100 character sets a program switches between, followed on the
//! way to the parser: vt100 0.18 ignores them, so text a program draws in
//! DEC Special Graphics is turned into the Unicode characters it stands
//! for before the parser sees it.
//!
//! ncurses draws boxes that way (a Python `curses` window's `box()`,
//! dialog, whiptail, mc): `ESC ( 0` puts the graphics set into G0 and
//! `ESC ( B` puts ASCII back; under TERM=screen or tmux it puts the set
//! into G1 instead (`ESC ) 0`) and shifts to it with SO and back with SI.
//! Without this a pane showed `lqqqqk` where a terminal draws `┌────┐`.
//!
//! Only text is translated, only single ASCII bytes of it, and only while
//! the set in use is the graphics one: a UTF-8 character never is. The
//! state is the terminal's, not the screen's rendering's, so it lives
//! with the cap that reads every byte once (`vt::cap`), survives a screen
//! put to sleep, and goes back to ASCII on a full or a soft reset.
//!
//! While neither G0 nor G1 holds the graphics set (nearly always: `ESC ( B`
//! comes with every SGR reset in xterm's terminfo), text goes through
//! untouched; only the last shift in it is looked for, since a later
//! `ESC ) 0` makes a shift already in force matter.

use super::tokenizer::{Kind, Seq};
use super::utf8::Utf8Text;

/// Shift Out (LS1): G1 is the set in use.
const SO: u8 = 0x0e;
/// Shift In (LS0): G0 is the set in use.
const SI: u8 = 0x0f;

/// The first byte DEC Special Graphics redraws; it covers the rest of
/// the printable bytes, up to `~`.
const FIRST: u8 = 0x5f;

/// DEC Special Graphics, from `_` (0x5F) to `~` (0x7E), as the VT100 draws
/// them. The control pictures (HT, FF, CR, LF, NL, VT) and the scan lines
/// are the characters Unicode made for them; the blank at `_` is a space,
/// so that copied text stays plain.
const GRAPHICS: [char; 32] = [
    ' ',        // _ blank
    '\u{25c6}', // ` diamond
    '\u{2592}', // a checkerboard
    '\u{2409}', // b HT
    '\u{240c}', // c FF
    '\u{240d}', // d CR
    '\u{240a}', // e LF
    '\u{00b0}', // f degree
    '\u{00b1}', // g plus or minus
    '\u{2424}', // h NL
    '\u{240b}', // i VT
    '\u{2518}', // j lower right corner
    '\u{2510}', // k upper right corner
    '\u{250c}', // l upper left corner
    '\u{2514}', // m lower left corner
    '\u{253c}', // n crossing lines
    '\u{23ba}', // o scan line 1
    '\u{23bb}', // p scan line 3
    '\u{2500}', // q horizontal line (scan line 5)
    '\u{23bc}', // r scan line 7
    '\u{23bd}', // s scan line 9
    '\u{251c}', // t left tee
    '\u{2524}', // u right tee
    '\u{2534}', // v bottom tee
    '\u{252c}', // w top tee
    '\u{2502}', // x vertical line
    '\u{2264}', // y less than or equal
    '\u{2265}', // z greater than or equal
    '\u{03c0}', // { pi
    '\u{2260}', // | not equal
    '\u{00a3}', // } pound sign
    '\u{00b7}', // ~ centred dot
];

/// What `b` stands for in DEC Special Graphics, if it is one it redraws.
pub fn graphic(b: u8) -> Option<char> {
    let i = b.checked_sub(FIRST)?;
    GRAPHICS.get(usize::from(i)).copied()
}

/// Which sets G0 and G1 hold, and which of them is in use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Charsets {
    /// G0 and G1 hold DEC Special Graphics (otherwise ASCII: the national
    /// sets are not followed, and any other designation is taken as
    /// ASCII, as tmux takes it).
    g0: bool,
    g1: bool,
    /// SO is in force: G1 is the set in use.
    shifted: bool,
}

impl Charsets {
    /// Whether text is drawn from DEC Special Graphics now.
    pub(super) fn graphics(&self) -> bool {
        if self.shifted { self.g1 } else { self.g0 }
    }

    /// Passes `text` (ground-state bytes: text and C0 controls) on to `out`
    /// through `utf8`, each byte the graphics set redraws replaced by its
    /// character, and follows the shifts in it.
    #[inline]
    pub(super) fn push(&mut self, text: &[u8], utf8: &mut Utf8Text, out: &mut Vec<u8>) {
        if !self.g0 && !self.g1 {
            // Nothing to translate, whichever set is in use: one copy.
            utf8.push(text, out);
            if let Some(i) = memchr::memrchr2(SO, SI, text) {
                self.shifted = text[i] == SO;
            }
            return;
        }
        self.translate(text, utf8, out);
    }

    /// The same for text with no control in it (a skimming screen's, which
    /// meets each control on its own, see [`Charsets::control`]): no shift
    /// to look for.
    #[inline]
    pub(super) fn push_text(&mut self, text: &[u8], utf8: &mut Utf8Text, out: &mut Vec<u8>) {
        if self.graphics() {
            self.translate(text, utf8, out);
        } else {
            utf8.push(text, out);
        }
    }

    fn translate(&mut self, text: &[u8], utf8: &mut Utf8Text, out: &mut Vec<u8>) {
        let mut rest = text;
        while !rest.is_empty() {
            if !self.graphics() {
                // Up to and with the next shift, as it is.
                let n = memchr::memchr2(SO, SI, rest).map_or(rest.len(), |i| i + 1);
                utf8.push(&rest[..n], out);
                self.control(rest[n - 1]);
                rest = &rest[n..];
                continue;
            }
            let n = rest
                .iter()
                .position(|&b| graphic(b).is_some() || b == SO || b == SI)
                .unwrap_or(rest.len());
            utf8.push(&rest[..n], out);
            let Some(&b) = rest.get(n) else {
                return;
            };
            match graphic(b) {
                Some(c) => utf8.push(c.encode_utf8(&mut [0; 4]).as_bytes(), out),
                None => {
                    utf8.push(&[b], out);
                    self.control(b);
                }
            }
            rest = &rest[n + 1..];
        }
    }

    /// A C0 control the terminal executes (in ground or inside a
    /// sequence): SO and SI shift.
    pub(super) fn control(&mut self, b: u8) {
        match b {
            SO => self.shifted = true,
            SI => self.shifted = false,
            _ => {}
        }
    }

    /// A sequence the terminal acts on ended with `fin`: a designation of
    /// G0 or G1, or a reset (RIS, DECSTR) that puts ASCII back in both and
    /// G0 in use.
    pub(super) fn saw(&mut self, seq: &Seq<'_>, fin: u8) {
        match (seq.kind, seq.collected) {
            (Kind::Esc, [b'(', set]) => self.g0 = *set == b'0',
            (Kind::Esc, [b')', set]) => self.g1 = *set == b'0',
            (Kind::Esc, b"c") => *self = Charsets::default(),
            (Kind::Csi, _) if fin == b'p' && seq.csi() == Some((&b"!"[..], b'p')) => {
                *self = Charsets::default();
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vt::tokenizer::{Ended, Step, Tokenizer};

    /// `input` read as the cap reads it: text runs through
    /// [`Charsets::push`], sequences through the tokenizer.
    fn read(sets: &mut Charsets, input: &[u8]) -> String {
        let mut tokens = Tokenizer::new(32);
        let mut utf8 = Utf8Text::default();
        let mut out = Vec::new();
        for &b in input {
            if tokens.in_ground() && b != 0x1b {
                sets.push(&[b], &mut utf8, &mut out);
                continue;
            }
            let step = tokens.advance(b);
            match step {
                Step::Control => sets.control(b),
                Step::End(Ended::Acted) => sets.saw(&tokens.seq(), b),
                _ => {}
            }
        }
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn the_table_covers_underscore_to_tilde() {
        assert_eq!(graphic(b'^'), None);
        assert_eq!(graphic(b'_'), Some(' '));
        assert_eq!(graphic(b'~'), Some('·'));
        assert_eq!(graphic(0x7f), None);
        let drawn: String = (b'j'..=b'x').filter_map(graphic).collect();
        assert_eq!(drawn, "┘┐┌└┼⎺⎻─⎼⎽├┤┴┬│");
        let rest: String = b"`afgyz{|}".iter().filter_map(|&b| graphic(b)).collect();
        assert_eq!(rest, "◆▒°±≤≥π≠£");
    }

    #[test]
    fn g0_designated_draws_lines_until_ascii_is_back() {
        let mut sets = Charsets::default();
        let text = read(&mut sets, b"\x1b(0lqqk\x1b(B lqqk");
        assert_eq!(text, "┌──┐ lqqk");
        assert_eq!(sets, Charsets::default());
    }

    #[test]
    fn g1_is_drawn_from_between_shift_out_and_shift_in() {
        let mut sets = Charsets::default();
        let text = read(&mut sets, b"\x1b)0x\x0ex\x0fx\x0eq");
        assert_eq!(text, "x\x0e│\x0fx\x0e─");
        assert!(sets.graphics());
    }

    #[test]
    fn a_shift_before_the_designation_counts() {
        let mut sets = Charsets::default();
        assert_eq!(read(&mut sets, b"\x0eab"), "\x0eab");
        assert_eq!(read(&mut sets, b"\x1b)0q"), "─");
    }

    #[test]
    fn a_shift_inside_a_sequence_is_executed() {
        let mut sets = Charsets::default();
        assert_eq!(read(&mut sets, b"\x1b)0\x1b[\x0e1mq"), "─");
    }

    #[test]
    fn utf8_is_never_translated() {
        let mut sets = Charsets::default();
        assert_eq!(read(&mut sets, "\x1b(0é─q".as_bytes()), "é──");
    }

    #[test]
    fn resets_put_ascii_back() {
        for reset in [&b"\x1bc"[..], b"\x1b[!p"] {
            let mut sets = Charsets::default();
            read(&mut sets, b"\x1b(0\x1b)0\x0e");
            read(&mut sets, reset);
            assert_eq!(sets, Charsets::default(), "{reset:?}");
        }
        // Another CSI ending in p is no reset.
        let mut sets = Charsets::default();
        assert_eq!(read(&mut sets, b"\x1b(0\x1b[2pq"), "─");
    }

    #[test]
    fn other_sets_are_ascii() {
        let mut sets = Charsets::default();
        assert_eq!(read(&mut sets, b"\x1b(0\x1b(Aq\x1b(0q\x1b(1q"), "q─q");
    }
}
