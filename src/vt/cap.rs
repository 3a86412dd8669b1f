//! Session output read the way the parser will read it, on its way to
//! the parser: OSC strings cut at [`MAX_STRING`], invalid UTF-8 made
//! visible, the end of a read inside a character found, and the state
//! that a screen's rendering does not carry followed ([`Unrendered`]).
//! For a screen that parses lazily it also tells a [`Watcher`] (`vt::skim`) what each byte
//! is, so that rows which scroll off unseen need not be drawn.

use super::charset::Charsets;
use super::tokenizer::{Ended, Kind, Seq, Step, Tokenizer, find_control, find_esc};
use super::utf8::Utf8Text;

/// Longest escape string passed to the parser; the rest is dropped.
pub const MAX_STRING: usize = 64 * 1024;

/// Bytes of a sequence [`StringCap`] keeps: a scroll region's or a mode
/// list's parameters. A longer one leaves [`Unrendered`] not knowing.
const KEPT: usize = 32;

/// Cuts OSC strings longer than [`MAX_STRING`], keeping their terminator
/// so the parser leaves the string state. It reads the output as the
/// parser does ([`Tokenizer`]): counting any other string as well would
/// drop output after one the parser has already left (a DCS ends at an
/// 8-bit ST, a byte that is OSC text), as the tui_screen fuzz target found.
///
/// Since it reads every byte as the parser will, it also tells where a
/// read ends inside a UTF-8 character of text ([`unfinished_char`]).
///
/// [`unfinished_char`]: StringCap::unfinished_char
#[derive(Debug, Clone)]
pub(crate) struct StringCap {
    tokens: Tokenizer,
    /// [`MAX_STRING`]; smaller in the fuzz target, so that cutting shows up
    /// in short inputs.
    limit: usize,
    /// How many of the last bytes passed on are ones the parser reads in
    /// ground state, as text or controls (saturating): only those can be
    /// the start of a character.
    ground_run: usize,
    /// State set by sequences the screen's rendering does not carry.
    pub(super) unrendered: Unrendered,
    /// Where the text stands in UTF-8: invalid sequences are shown.
    utf8: Utf8Text,
    /// The character sets in use: text in DEC Special Graphics is passed
    /// on as the characters it stands for (vt100 ignores the sets).
    charsets: Charsets,
    /// Clears of the whole screen are noted (a screen with a history
    /// keeps what they erase); off, an ED 0 in every redraw costs nothing.
    pub(super) note_clears: bool,
}

impl Default for StringCap {
    fn default() -> Self {
        Self::with_limit(MAX_STRING)
    }
}

impl StringCap {
    pub(crate) fn with_limit(limit: usize) -> Self {
        StringCap {
            // Of a string only the length matters; of a CSI, whether it
            // set a mode [`Unrendered`] watches, which fits in this.
            tokens: Tokenizer::new(KEPT),
            limit,
            ground_run: 0,
            unrendered: Unrendered::default(),
            utf8: Utf8Text::default(),
            charsets: Charsets::default(),
            note_clears: false,
        }
    }

    /// Outside any sequence, as the parser is after the bytes passed on.
    pub(crate) fn in_ground(&self) -> bool {
        self.tokens.in_ground()
    }

    /// Where the parser stands after the bytes passed on.
    pub(super) fn tokens(&self) -> &Tokenizer {
        &self.tokens
    }

    /// How many bytes at the end of `out`, what [`filter`](Self::filter)
    /// passed on, begin a UTF-8 character whose rest has not come: bytes
    /// the parser reads as text, in ground state, and would wait on. An
    /// unfinished character inside an escape sequence is not text (vte
    /// ignores those bytes, or keeps them as the string's), and neither
    /// is a lead byte before an 8-bit ST that took the parser back to
    /// ground.
    pub(crate) fn unfinished_char(&self, out: &[u8]) -> usize {
        if !self.tokens.in_ground() {
            return 0;
        }
        let text = out.len().min(self.ground_run).min(3);
        unfinished_utf8(&out[out.len() - text..])
    }

    /// Passes `input` on to `out` as the parser is to get it.
    pub(crate) fn filter(&mut self, input: &[u8], out: &mut Vec<u8>) {
        self.read::<Unwatched>(input, out, None);
    }

    /// The same, telling `skim` what each byte is. It stops after a
    /// sequence that needs the parser now ([`Watcher::wants_parser`]), once
    /// the terminal is out of sequences again: how many bytes it took.
    pub(super) fn skim(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        skim: &mut impl Watcher,
    ) -> usize {
        self.read(input, out, Some(skim))
    }

    fn read<W: Watcher>(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        mut skim: Option<&mut W>,
    ) -> usize {
        let mut rest = input;
        loop {
            if self.tokens.in_ground() {
                if let Some(s) = skim.as_deref_mut() {
                    s.ground(out.len());
                    if s.wants_parser() {
                        return input.len() - rest.len();
                    }
                }
                // Text up to the next ESC changes nothing: one copy. A
                // screen that skims stops at every control, to count lines.
                let n = if skim.is_some() {
                    find_control(rest)
                } else {
                    find_esc(rest)
                };
                let n = n.unwrap_or(rest.len());
                if let Some(s) = skim.as_deref_mut()
                    && n > 0
                {
                    s.text(out.len());
                }
                if skim.is_some() {
                    self.charsets.push_text(&rest[..n], &mut self.utf8, out);
                } else {
                    self.charsets.push(&rest[..n], &mut self.utf8, out);
                }
                rest = &rest[n..];
                self.ground_run = self.ground_run.saturating_add(n);
                if let Some(s) = skim.as_deref_mut()
                    && let Some((&b, tail)) = rest.split_first()
                    && b != 0x1b
                {
                    // A control in ground: it ends the text before it (a
                    // character it cuts short is an invalid one).
                    self.utf8.control(b, out);
                    self.charsets.control(b);
                    rest = tail;
                    self.ground_run = self.ground_run.saturating_add(1);
                    s.control(b, out, &self.unrendered);
                    continue;
                }
                if skim.is_none()
                    && let Some(n) = colours(rest)
                {
                    // An SGR sequence, the most common by far, in one copy:
                    // it ends where it began, in ground, and changes
                    // nothing watched here.
                    self.utf8.interrupt(out);
                    out.extend_from_slice(&rest[..n]);
                    rest = &rest[n..];
                    self.ground_run = 0;
                    continue;
                }
            }
            if !self.tokens.in_ground() {
                // Parameters and string text in one copy, as far as a
                // string stays within the limit.
                let before = self.tokens.seq().len;
                let n = self.tokens.run(rest);
                if n > 0 {
                    let keep = if self.tokens.seq().kind == Kind::Osc {
                        self.limit.saturating_sub(before).min(n)
                    } else {
                        n
                    };
                    out.extend_from_slice(&rest[..keep]);
                    rest = &rest[n..];
                    self.ground_run = 0;
                }
            }
            let Some((&b, tail)) = rest.split_first() else {
                return input.len();
            };
            rest = tail;
            // ESC, or a byte of a sequence: not text (a character it cuts
            // short is an invalid one).
            self.utf8.interrupt(out);
            if let Some(s) = skim.as_deref_mut() {
                s.end_text(out);
            }
            self.ground_run = 0;
            let at = out.len();
            let step = self.tokens.advance(b);
            let seq = self.tokens.seq();
            if step == Step::Control {
                // Executed inside a sequence: SO and SI shift there too.
                self.charsets.control(b);
            }
            if step == Step::End(Ended::Acted) {
                self.charsets.saw(&seq, b);
                let mut seen = self.unrendered.saw(&seq, b);
                seen.clears &= self.note_clears;
                seen.clears_below &= self.note_clears;
                self.unrendered.at.push(seen, out.len() + 1);
            }
            let over = step == Step::Part && seq.kind == Kind::Osc && seq.len > self.limit;
            if !over {
                out.push(b);
            }
            if let Some(s) = skim.as_deref_mut() {
                s.step(step, &seq, b, at, out.len());
            }
        }
    }
}

/// The length of the SGR sequence at the start of `bytes`, if it is a
/// whole one of decimal parameters: `ESC [`, digits and `;`, `m`.
pub(super) fn colours(bytes: &[u8]) -> Option<usize> {
    let body = bytes.strip_prefix(b"\x1b[")?;
    let n = body.iter().position(|b| !matches!(b, b'0'..=b'9' | b';'))?;
    (body[n] == b'm').then_some(n + 3)
}

/// What a screen that parses lazily (`vt::skim`) is told of each piece
/// of output as the cap reads it. A trait of the cap's, so that the cap
/// knows nothing of the screen that listens.
pub(super) trait Watcher {
    /// Whether the parser must see what was read so far now.
    fn wants_parser(&self) -> bool;
    /// The terminal is out of sequences, `at` bytes into the output.
    fn ground(&mut self, at: usize);
    /// Text starts `at` bytes into the output.
    fn text(&mut self, at: usize);
    /// The text before a sequence or a control ends.
    fn end_text(&mut self, out: &[u8]);
    /// Control `b` in ground, with the terminal state in force.
    fn control(&mut self, b: u8, out: &[u8], state: &Unrendered);
    /// A byte `b` of a sequence, read as `step`, written at `at..end`.
    fn step(&mut self, step: Step, seq: &Seq<'_>, b: u8, at: usize, end: usize);
}

/// The plain filter's: nobody listens.
struct Unwatched;

impl Watcher for Unwatched {
    fn wants_parser(&self) -> bool {
        false
    }
    fn ground(&mut self, _: usize) {}
    fn text(&mut self, _: usize) {}
    fn end_text(&mut self, _: &[u8]) {}
    fn control(&mut self, _: u8, _: &[u8], _: &Unrendered) {}
    fn step(&mut self, _: Step, _: &Seq<'_>, _: u8, _: usize, _: usize) {}
}

/// Terminal state that a screen's rendering (vt100's `state_formatted`)
/// does not carry, and that changes how later output lands: a screen that
/// has any of it in force is not put to sleep, and lines are not counted
/// as scrolling the whole screen. It follows vt100 0.18 exactly where
/// vt100 acts (the scroll region and origin mode of each of its two
/// screens, which DECSC, DECRC and 1049 save and restore), and keeps what
/// vt100 ignores but a rendering would lose anyway (insert mode, autowrap
/// off) on the safe side.
#[derive(Debug, Clone, Default)]
pub(super) struct Unrendered {
    /// The main screen's and the alternate screen's.
    grids: [GridState; 2],
    /// Which of them is in use.
    alternate: bool,
    /// IRM: text pushes the rest of the line right.
    insert: bool,
    /// DECAWM off: text at the last column stays there.
    no_wrap: bool,
    /// A sequence too long to read may have changed any of it: nothing is
    /// known until a reset (RIS) says so again.
    unknown: bool,
    /// Where, in the bytes passed on, the sequences a screen's parse is
    /// cut at end.
    pub(super) at: Landmarks,
}

/// Where, in the bytes passed on, sequences end that a screen's parse
/// is cut at (see `Term::parse`).
#[derive(Debug, Clone, Default)]
pub(super) struct Landmarks {
    /// Those that switch to the alternate screen.
    pub to_alternate: Vec<usize>,
    /// Those that switch back to the main screen.
    pub from_alternate: Vec<usize>,
    /// ED 3 (erase saved lines): the history kept so far goes there.
    pub erase_history: Vec<usize>,
    /// ED 2 (erase the whole screen): what it shows goes to the history
    /// first.
    pub clears: Vec<usize>,
    /// ED 0 (erase below): the same when the cursor is at the top left.
    pub clears_below: Vec<usize>,
    /// RIS: a new screen, which has counted no rows gone.
    pub full_reset: Vec<usize>,
    /// Those that changed how text and line feeds land on the main screen
    /// ([`Unrendered::lines_plain`]).
    pub line_modes: Vec<usize>,
}

/// What a sequence was, of what [`Landmarks`] notes.
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    switches: bool,
    leaves: bool,
    erases: bool,
    clears: bool,
    clears_below: bool,
    resets: bool,
    changes: bool,
}

impl Landmarks {
    fn push(&mut self, seen: Seen, end: usize) {
        for (yes, v) in [
            (seen.switches, &mut self.to_alternate),
            (seen.leaves, &mut self.from_alternate),
            (seen.erases, &mut self.erase_history),
            (seen.clears, &mut self.clears),
            (seen.clears_below, &mut self.clears_below),
            (seen.resets, &mut self.full_reset),
            (seen.changes, &mut self.line_modes),
        ] {
            if yes {
                v.push(end);
            }
        }
    }

    fn each(&mut self) -> [&mut Vec<usize>; 7] {
        [
            &mut self.to_alternate,
            &mut self.from_alternate,
            &mut self.erase_history,
            &mut self.clears,
            &mut self.clears_below,
            &mut self.full_reset,
            &mut self.line_modes,
        ]
    }

    /// Those before `end` (or at it).
    pub(super) fn before(&self, end: usize) -> Landmarks {
        let mut b = self.clone();
        for v in b.each() {
            v.retain(|&at| at <= end);
        }
        b
    }

    /// The bytes before `n` are gone: those after, moved down.
    pub(super) fn drained(&mut self, n: usize) {
        for v in self.each() {
            v.retain(|&at| at > n);
            for at in v.iter_mut() {
                *at -= n;
            }
        }
    }
}

/// What decides how text and line feeds land on the main screen.
type LineModes = (bool, bool, bool, bool, Option<Vec<u8>>);

/// What one of vt100's two screens keeps.
#[derive(Debug, Clone, Default)]
struct GridState {
    /// DECSTBM's parameters while a region is set.
    region: Option<Vec<u8>>,
    /// DECOM: cursor positions relative to the region.
    origin: bool,
    /// Origin mode as DECSC saved it.
    saved_origin: bool,
}

impl Unrendered {
    fn grid(&mut self) -> &mut GridState {
        &mut self.grids[usize::from(self.alternate)]
    }

    /// A sequence the terminal acts on ended with the byte `fin`: what it
    /// was, of what [`Landmarks`] notes.
    fn saw(&mut self, seq: &Seq<'_>, fin: u8) -> Seen {
        // Only these may change a mode (SGR, the most common, may not).
        let watched = match seq.kind {
            Kind::Esc => matches!(seq.collected, b"c" | b"7" | b"8"),
            Kind::Csi => matches!(fin, b'r' | b'h' | b'l'),
            _ => false,
        };
        let before = watched.then(|| self.line_modes());
        let mut seen = self.act(seq, fin);
        if let Some(before) = before {
            seen.changes = self.line_modes() != before;
        }
        seen
    }

    fn line_modes(&self) -> LineModes {
        let main = &self.grids[0];
        let region = main.region.clone();
        (self.insert, self.no_wrap, self.unknown, main.origin, region)
    }

    fn act(&mut self, seq: &Seq<'_>, fin: u8) -> Seen {
        match (seq.kind, seq.collected) {
            (Kind::Esc, b"c") => {
                // RIS: everything back to its default.
                let at = std::mem::take(&mut self.at);
                *self = Unrendered {
                    at,
                    ..Unrendered::default()
                };
                return Seen {
                    resets: true,
                    ..Seen::default()
                };
            }
            (Kind::Esc, b"7") => {
                let g = self.grid();
                g.saved_origin = g.origin;
            }
            (Kind::Esc, b"8") => {
                let g = self.grid();
                g.origin = g.saved_origin;
            }
            (Kind::Csi, _) => return self.csi(seq, fin),
            _ => {}
        }
        Seen::default()
    }

    fn csi(&mut self, seq: &Seq<'_>, fin: u8) -> Seen {
        let mut seen = Seen::default();
        if fin == b'J' {
            // ED (or DECSED) exactly: 3 erases saved lines, 2 the screen,
            // 0 what is below the cursor.
            let param = seq
                .csi()
                .map(|(body, _)| body.strip_prefix(b"?").unwrap_or(body));
            seen.erases = param == Some(b"3");
            seen.clears = param == Some(b"2");
            seen.clears_below = matches!(param, Some(b"" | b"0"));
            return seen;
        }
        if !matches!(fin, b'r' | b'h' | b'l') {
            return seen;
        }
        let Some((body, _)) = seq.csi() else {
            // Cut short: what it set cannot be told.
            self.unknown = true;
            return seen;
        };
        let csi = Csi::read(body);
        match (csi.private, csi.intermediates, fin) {
            (None, b"", b'r') => {
                self.grid().region = (!csi.params.is_empty()).then(|| csi.params.to_vec());
            }
            (None, b"", b'h' | b'l') if csi.values().any(|v| v == Some(4)) => {
                self.insert = fin == b'h';
            }
            // vt100 reads only the first intermediate, the marker.
            (Some(b'?'), _, b'h' | b'l') => {
                if csi.too_many() {
                    self.unknown = true;
                    return seen;
                }
                let on = fin == b'h';
                for v in csi.values() {
                    match v {
                        Some(6) => self.grid().origin = on,
                        Some(7) => self.no_wrap = !on,
                        Some(47) => {
                            self.alternate = on;
                            seen.switches |= on;
                            seen.leaves |= !on;
                        }
                        Some(1047) => {
                            seen.switches |= on;
                            seen.leaves |= !on;
                        }
                        Some(1049) if on => {
                            // DECSC, a cleared alternate screen, then the switch.
                            let g = self.grid();
                            g.saved_origin = g.origin;
                            self.grids[1] = GridState::default();
                            self.alternate = true;
                            seen.switches = true;
                        }
                        Some(1049) => {
                            seen.leaves = true;
                            self.alternate = false;
                            let g = self.grid();
                            g.origin = g.saved_origin;
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        seen
    }

    /// Whether none of it is in force on a screen of `rows` (a region of
    /// the whole screen is none).
    pub(super) fn plain(&self, rows: u16) -> bool {
        !self.insert && !self.no_wrap && self.scrolls_whole(rows)
    }

    /// Whether a line feed on the bottom row scrolls the whole screen of
    /// `rows` and a cursor position is the screen's own: no scroll region,
    /// no origin mode, nothing unknown.
    pub(super) fn scrolls_whole(&self, rows: u16) -> bool {
        let g = &self.grids[usize::from(self.alternate)];
        !self.unknown && !g.origin && g.region.as_deref().is_none_or(|p| whole(p, rows))
    }

    /// Whether, on the main screen of `rows`, text goes on from the cursor
    /// and wraps at the last column, and a line feed on the bottom row
    /// scrolls the whole screen (see `vt::runs`): none of it in force there
    /// (whichever screen is in use), and nothing unknown.
    pub(super) fn lines_plain(&self, rows: u16) -> bool {
        let main = &self.grids[0];
        !self.insert
            && !self.no_wrap
            && !self.unknown
            && !main.origin
            && main.region.as_deref().is_none_or(|p| whole(p, rows))
    }

    /// Whether origin mode is on for the main screen.
    pub(super) fn main_origin(&self) -> bool {
        self.grids[0].origin
    }

    /// A resize: vt100 drops both screens' scroll regions, as xterm does.
    pub(super) fn resized(&mut self) {
        for g in &mut self.grids {
            g.region = None;
        }
    }
}

/// Whether DECSTBM with parameters `params` sets the whole screen of
/// `rows` as its region, as vt100 reads it: a missing or 0 top is 1, a
/// missing or 0 bottom the last row, a bottom past the screen is its last
/// row, and a region that is not at least two rows is the whole screen.
fn whole(params: &[u8], rows: u16) -> bool {
    let csi = Csi::read(params);
    let mut values = csi.firsts();
    let top = values.next().flatten().unwrap_or(0).max(1);
    let bottom = match values.next().flatten().unwrap_or(0) {
        0 => rows,
        b => b.min(rows),
    };
    let (top, bottom) = (top - 1, bottom.saturating_sub(1));
    top >= bottom || (top == 0 && bottom + 1 >= rows)
}

/// A CSI's body as vte hands it to vt100: a private marker, parameters
/// (`;` between them, `:` between sub-parameters), intermediates.
#[derive(Debug, Clone, Copy)]
pub(super) struct Csi<'a> {
    pub private: Option<u8>,
    pub params: &'a [u8],
    pub intermediates: &'a [u8],
}

impl<'a> Csi<'a> {
    pub(super) fn read(body: &'a [u8]) -> Csi<'a> {
        let (private, rest) = match body.split_first() {
            Some((&p, rest)) if matches!(p, b'<'..=b'?') => (Some(p), rest),
            _ => (None, body),
        };
        let n = rest
            .iter()
            .position(|b| !(b'0'..=b';').contains(b))
            .unwrap_or(rest.len());
        Csi {
            private,
            params: &rest[..n],
            intermediates: &rest[n..],
        }
    }

    /// Each parameter's value, `None` for one with sub-parameters (which
    /// matches no mode), as vte counts: saturating, empty is 0.
    pub(super) fn values(&self) -> impl Iterator<Item = Option<u16>> + '_ {
        self.split()
            .map(|p| (!p.contains(&b':')).then(|| number(p)))
    }

    /// Each parameter's first value, as vt100 reads a position.
    fn firsts(&self) -> impl Iterator<Item = Option<u16>> + '_ {
        self.split()
            .map(|p| p.split(|&b| b == b':').next().map(number))
    }

    fn split(&self) -> impl Iterator<Item = &'a [u8]> {
        let params = self.params;
        (!params.is_empty())
            .then(|| params.split(|&b| b == b';'))
            .into_iter()
            .flatten()
    }

    /// More values than vte keeps (32, sub-parameters included): the rest
    /// would be dropped there.
    pub(super) fn too_many(&self) -> bool {
        self.params
            .iter()
            .filter(|&&b| b == b';' || b == b':')
            .count()
            >= 32
    }
}

fn number(digits: &[u8]) -> u16 {
    digits.iter().fold(0u16, |n, &d| {
        n.saturating_mul(10)
            .saturating_add(u16::from(d.saturating_sub(b'0')))
    })
}

/// The length of the unfinished UTF-8 character that ends `bytes` (0 if
/// none): the suffix of at most three bytes that `str::from_utf8` finds
/// cut short rather than invalid. Invalid bytes are not held: vte draws
/// them as they come, read whole or in parts.
pub(crate) fn unfinished_utf8(bytes: &[u8]) -> usize {
    if bytes.last().is_none_or(u8::is_ascii) {
        return 0;
    }
    (1..=bytes.len().min(3))
        .find(|&k| {
            matches!(
                std::str::from_utf8(&bytes[bytes.len() - k..]),
                Err(e) if e.valid_up_to() == 0 && e.error_len().is_none()
            )
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_between_esc_and_the_string_do_not_hide_it() {
        // The parser executes the controls and still starts the OSC; the
        // cap must count it too.
        for intro in [&b"\x1b\x00]0;"[..], b"\x1b\x07\n]0;", b"\x1b\x7f\xff]0;"] {
            let mut cap = StringCap::default();
            let mut out = Vec::new();
            cap.filter(intro, &mut out);
            cap.filter(&vec![b'x'; MAX_STRING * 2], &mut out);
            cap.filter(b"\x07after", &mut out);
            assert!(out.len() < MAX_STRING + 100, "{intro:?}: {}", out.len());
            assert!(out.ends_with(b"\x07after"));
        }
    }

    #[test]
    fn only_text_is_held_back() {
        let held = |input: &[u8]| {
            let mut cap = StringCap::default();
            let mut out = Vec::new();
            cap.filter(input, &mut out);
            cap.unfinished_char(&out)
        };
        assert_eq!(held(b"ab\xf0\x9f"), 2);
        assert_eq!(held(b"ab\xf0\x9f\x98\x80"), 0);
        assert_eq!(held(b"ab\xc3"), 1);
        // Inside a sequence these bytes are no text; the parser drops them
        // or keeps them as the string's, and must have them now.
        assert_eq!(held(b"\x1b]0;caf\xc3"), 0);
        assert_eq!(held(b"\x1b[\xe2"), 0);
        // An 8-bit ST ends DCS data: the lead byte before it was data.
        assert_eq!(held(b"\x1bPq\xf0\x9c"), 0);
    }

    #[test]
    fn unfinished_means_cut_short_not_invalid() {
        for (bytes, held) in [
            (&b""[..], 0),
            (b"abc", 0),
            (b"a\xc3", 1),
            (b"\xe2\x94", 2),
            (b"\xf0\x9f\x98", 3),
            (b"\xc3\xa9", 0),
            (b"\xa9", 0),
            // Never the start of a character: vte draws them at once.
            (b"\xe0\x80", 0),
            (b"\xed\xa0", 0),
            (b"\xf4\x90", 0),
            (b"\xf8", 0),
        ] {
            assert_eq!(unfinished_utf8(bytes), held, "{bytes:?}");
        }
    }
}
