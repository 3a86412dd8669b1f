//! Runs of plain lines, kept as history without the parser drawing them.
//!
//! A screen that keeps a history (`hm logs`, a pane's history, copy mode)
//! is filled from whole replays, where vt100 costs twice what it costs a
//! screen without one: every row that scrolls off is drawn cell by cell,
//! then formatted again as it leaves ([`super::kept`]). Most of a replay
//! is lines of text: this finds runs of them and makes the rows that
//! scroll off straight from the bytes, exactly as vt100 would have.
//!
//! Why the bytes alone decide those rows. The main screen is in use, a
//! line feed on the bottom row scrolls the whole screen, text goes on
//! from the cursor and wraps at the last column
//! (`Unrendered::lines_plain`, in `vt::cap`), the
//! parser is in ground state and the cursor is at the start of a blank
//! bottom row. Then printable ASCII, SGR sequences and CR LF only ever
//! write the bottom row from its start: a line of `n` characters at width
//! `w` makes `max(1, ceil(n / w))` rows, each but the last wrapped (vt100
//! marks a row only when a character actually wraps, so a line of
//! exactly `w` characters does not), each scrolling off as the next
//! begins, with the attributes the SGR sequences before each character
//! set. Anything else ends the run and goes to the parser as before.
//!
//! How the screen ends as vt100 would leave it (`Term::draw`). Of a run
//! that completes `m` rows on a screen of `r`, the screen's other `r - 1`
//! rows scroll off first: the parser scrolls them off (SU), so its
//! callback keeps them as always. The next `m - r + 1` rows are kept from
//! the bytes, and the row the run began on is scrolled off too, muted,
//! so that the screen is all rows vt100 reset. Then vt100 draws the last
//! rows from the bytes they came from, from the top left corner: they
//! fill the screen without scrolling, ending where the run ends, with its
//! attributes. It also draws the run's last character on the row it
//! scrolls off if none of those rows has one, for REP. What vt100 keeps
//! besides (the saved cursor, modes, the other screen) no part of this
//! touches.
//!
//! vt100 counts every row that scrolls off, a count that decides how
//! many blank rows it pulls down when the screen grows (see
//! [`super::kept`]). Scrolling it once per kept row would cost as much as
//! the rest of a run (a row of cells cleared each time), so the rows are
//! owed instead (`Tally::owed`), and settled where
//! the count is acted on, a resize that grows the screen
//! (`Term::settle_owed`): the rows vt100 should have pulled and did not
//! are put in (SD), and the cursor and the saved cursor go down with
//! them, on the screen alone in a parser of its own, since the session's
//! may be inside a sequence. ED 3 and RIS start the count over, owed rows
//! with it.
//!
//! `vt::runs::tests` holds a screen that keeps runs this way to one that
//! parses everything, on random output and resizes.

use vt100::Color;

use super::cap::{Unrendered, colours};
use super::tokenizer::{Tokenizer, find_esc};

/// Most parameters of an SGR sequence a run takes; vte keeps 32.
const MAX_PARAMS: usize = 16;

/// SGR attributes, as vt100 keeps them (its own type is private).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Attrs {
    pub(super) fg: Color,
    pub(super) bg: Color,
    /// 0 normal, 1 bold, 2 dim: vt100 keeps one of them.
    pub(super) intensity: u8,
    pub(super) italic: bool,
    pub(super) underline: bool,
    pub(super) inverse: bool,
}

impl Attrs {
    /// The attributes text is drawn with now.
    pub(super) fn of(screen: &vt100::Screen) -> Attrs {
        let intensity = if screen.bold() {
            1
        } else {
            u8::from(screen.dim()) * 2
        };
        Attrs {
            fg: screen.fgcolor(),
            bg: screen.bgcolor(),
            intensity,
            italic: screen.italic(),
            underline: screen.underline(),
            inverse: screen.inverse(),
        }
    }

    /// An SGR sequence's parameters applied as vt100 applies them; `None`
    /// if vt100 would stop short or report the sequence as unhandled.
    pub(super) fn apply(mut self, params: &[u16]) -> Option<Attrs> {
        let mut params = params.iter().copied();
        while let Some(p) = params.next() {
            match p {
                0 => self = Attrs::default(),
                1 | 2 => self.intensity = p as u8,
                22 => self.intensity = 0,
                3 | 23 => self.italic = p == 3,
                4 | 24 => self.underline = p == 4,
                7 | 27 => self.inverse = p == 7,
                30..=37 => self.fg = Color::Idx((p - 30) as u8),
                90..=97 => self.fg = Color::Idx((p - 82) as u8),
                39 => self.fg = Color::Default,
                40..=47 => self.bg = Color::Idx((p - 40) as u8),
                100..=107 => self.bg = Color::Idx((p - 92) as u8),
                49 => self.bg = Color::Default,
                38 | 48 => {
                    let kind = params.next()?;
                    let mut byte = || params.next().and_then(|v| u8::try_from(v).ok());
                    let colour = match kind {
                        5 => Color::Idx(byte()?),
                        2 => {
                            let (r, g, b) = (byte()?, byte()?, byte()?);
                            Color::Rgb(r, g, b)
                        }
                        _ => return None,
                    };
                    if p == 38 {
                        self.fg = colour;
                    } else {
                        self.bg = colour;
                    }
                }
                _ => return None,
            }
        }
        Some(self)
    }

    /// What vt100 writes going from attributes `from` to these
    /// (`Attrs::write_escape_code_diff_fmt`, the text of its basic
    /// formatted rows).
    pub(super) fn write_diff(&self, from: &Attrs, out: &mut String) {
        if self != from && *self == Attrs::default() {
            out.push_str("\x1b[m");
            return;
        }
        let mut params = Params::new(out);
        if self.fg != from.fg {
            params.colour(self.fg, 30);
        }
        if self.bg != from.bg {
            params.colour(self.bg, 40);
        }
        if self.intensity != from.intensity {
            params.push(match self.intensity {
                0 => 22,
                i => u16::from(i),
            });
        }
        for (now, before, on) in [
            (self.italic, from.italic, 3),
            (self.underline, from.underline, 4),
            (self.inverse, from.inverse, 7),
        ] {
            if now != before {
                params.push(if now { on } else { on + 20 });
            }
        }
        params.end();
    }
}

/// An SGR sequence being written, as vt100 writes one.
pub(super) struct Params<'a> {
    pub(super) out: &'a mut String,
    pub(super) any: bool,
}

impl<'a> Params<'a> {
    pub(super) fn new(out: &'a mut String) -> Self {
        Params { out, any: false }
    }

    pub(super) fn push(&mut self, v: u16) {
        self.out.push_str(if self.any { ";" } else { "\x1b[" });
        self.any = true;
        // At most 255 (a colour's part) or 107 (a code).
        let (h, t, u) = (v / 100, v / 10 % 10, v % 10);
        if h > 0 {
            self.out.push(char::from(b'0' + h as u8));
        }
        if v >= 10 {
            self.out.push(char::from(b'0' + t as u8));
        }
        self.out.push(char::from(b'0' + u as u8));
    }

    /// A colour, `base` 30 for the foreground, 40 for the background.
    pub(super) fn colour(&mut self, c: Color, base: u16) {
        match c {
            Color::Default => self.push(base + 9),
            Color::Idx(i) if i < 8 => self.push(base + u16::from(i)),
            Color::Idx(i) if i < 16 => self.push(base + 52 + u16::from(i)),
            Color::Idx(i) => {
                for v in [base + 8, 5, u16::from(i)] {
                    self.push(v);
                }
            }
            Color::Rgb(r, g, b) => {
                for v in [base + 8, 2, u16::from(r), u16::from(g), u16::from(b)] {
                    self.push(v);
                }
            }
        }
    }

    pub(super) fn end(self) {
        if self.any {
            self.out.push('m');
        }
    }
}

/// The SGR sequence at the start of `bytes`, if it is one a run takes
/// (`ESC [`, decimal parameters and `m`, nothing else, that vt100 acts on
/// in full): its length, and the attributes `attrs` become.
pub(super) fn sgr(bytes: &[u8], attrs: Attrs) -> Option<(usize, Attrs)> {
    let body = bytes.strip_prefix(b"\x1b[")?;
    let mut params = [0u16; MAX_PARAMS];
    let (mut n, mut digits) = (0, 0);
    for (i, &b) in body.iter().enumerate() {
        match b {
            b'0'..=b'9' if digits < 3 => {
                params[n] = params[n] * 10 + u16::from(b - b'0');
                digits += 1;
            }
            b';' if n + 1 < MAX_PARAMS => {
                n += 1;
                digits = 0;
            }
            // An empty list is a single 0, as vt100 reads it.
            b'm' => return Some((i + 3, attrs.apply(&params[..=n])?)),
            _ => return None,
        }
    }
    None
}

/// How many bytes at the start of `bytes` are printable ASCII.
pub(super) fn printable(bytes: &[u8]) -> usize {
    const LANES: u64 = u64::from_ne_bytes([1; 8]);
    let mut n = 0;
    for word in bytes.chunks_exact(8) {
        let mut w = [0; 8];
        w.copy_from_slice(word);
        let w = u64::from_ne_bytes(w);
        // Some byte below 0x20, or from 0x7f up (the classic tests).
        let below = w.wrapping_sub(LANES * 0x20) & !w;
        let above = w.wrapping_add(LANES) | w;
        if (below | above) & (LANES * 0x80) != 0 {
            break;
        }
        n += 8;
    }
    n + bytes[n..]
        .iter()
        .position(|b| !(0x20..=0x7e).contains(b))
        .unwrap_or(bytes.len() - n)
}

/// A row a run completes: the bytes that draw it, the attributes in force
/// where they start, and the first of the run's SGR sequences from there.
#[derive(Debug, Clone, Copy)]
pub(super) struct Row {
    pub(super) from: usize,
    pub(super) to: usize,
    pub(super) attrs: Attrs,
    pub(super) sgr: usize,
    pub(super) wrapped: bool,
}

/// An SGR sequence of a run: where it is, and the attributes after it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sgr {
    pub(super) from: usize,
    pub(super) to: usize,
    pub(super) attrs: Attrs,
}

/// What a run of plain lines draws (see the module's comment).
#[derive(Debug, Default)]
pub(super) struct Run {
    /// Where it ends: the bytes it takes.
    pub(super) end: usize,
    /// The rows it completes, which scroll off as the next begins.
    pub(super) rows: Vec<Row>,
    /// Its SGR sequences.
    pub(super) sgrs: Vec<Sgr>,
    /// Where its last character is.
    pub(super) last_char: Option<usize>,
    /// A row being formatted.
    pub(super) scratch: String,
}

impl Run {
    /// Reads the run at the start of `bytes` on a screen `cols` wide, the
    /// attributes `attrs` in force.
    pub(super) fn read(&mut self, bytes: &[u8], cols: u16, mut attrs: Attrs) {
        let cols = usize::from(cols);
        self.rows.clear();
        self.sgrs.clear();
        self.last_char = None;
        let (mut at, mut col) = (0, 0);
        let mut row = Row {
            from: 0,
            to: 0,
            attrs,
            sgr: 0,
            wrapped: false,
        };
        while let Some(&b) = bytes.get(at) {
            match b {
                0x20..=0x7e => {
                    let end = at + printable(&bytes[at..]);
                    while at < end {
                        if col == cols {
                            // The next character wraps: the row is done.
                            self.rows.push(Row {
                                to: at,
                                wrapped: true,
                                ..row
                            });
                            col = 0;
                            row = Row {
                                from: at,
                                to: at,
                                attrs,
                                sgr: self.sgrs.len(),
                                wrapped: false,
                            };
                        }
                        let take = (cols - col).min(end - at);
                        col += take;
                        at += take;
                    }
                    self.last_char = Some(end - 1);
                }
                0x1b => {
                    let Some((len, next)) = sgr(&bytes[at..], attrs) else {
                        break;
                    };
                    attrs = next;
                    self.sgrs.push(Sgr {
                        from: at,
                        to: at + len,
                        attrs,
                    });
                    at += len;
                }
                b'\r' if bytes.get(at + 1) == Some(&b'\n') => {
                    self.rows.push(Row { to: at, ..row });
                    at += 2;
                    col = 0;
                    row = Row {
                        from: at,
                        to: at,
                        attrs,
                        sgr: self.sgrs.len(),
                        wrapped: false,
                    };
                }
                _ => break,
            }
        }
        self.end = at;
    }

    /// The row as vt100 formats it when it scrolls off (cells from
    /// default attributes, `Row::write_contents_formatted_basic`): each
    /// character after the attributes that changed since the one before.
    /// `text`: the run's bytes, all of them printable ASCII or SGR.
    pub(super) fn format(&mut self, text: &str, row: Row) -> Box<str> {
        let sgrs = &self.sgrs[row.sgr..];
        let plain = row.attrs == Attrs::default();
        if plain && sgrs.first().is_none_or(|s| s.from >= row.to) {
            return text[row.from..row.to].into();
        }
        let out = &mut self.scratch;
        out.clear();
        let (mut attrs, mut written, mut at) = (row.attrs, Attrs::default(), row.from);
        for next in sgrs.iter().map(Some).chain([None]) {
            let end = next.map_or(row.to, |s| s.from.min(row.to));
            if end > at {
                attrs.write_diff(&written, out);
                written = attrs;
                out.push_str(&text[at..end]);
            }
            match next {
                Some(s) if s.from < row.to => (attrs, at) = (s.attrs, s.to),
                _ => break,
            }
        }
        out.as_str().into()
    }
}

/// Where a parse stands, for the runs in it: whether the parser is in
/// ground state, whether the line modes are plain, and whether the cursor
/// is known to be at the start of a blank bottom row.
pub(super) struct Lines {
    /// The parser's state, followed through what it is given.
    pub(super) tokens: Tokenizer,
    /// Line modes are plain before `until` (as they were when the parse
    /// began), and from `from` on (as they are now); what is between is
    /// not known.
    pub(super) until: usize,
    pub(super) from: usize,
    /// A line feed just scrolled the screen, which left the cursor on a
    /// blank bottom row.
    pub(super) scrolled: bool,
    /// The parser had been rebuilt this many times: a rebuild mid-parse
    /// leaves what was followed behind.
    pub(super) resets: u32,
    pub(super) run: Run,
}

impl Lines {
    /// For bytes that begin with the parser in `tokens`' state and the
    /// line modes `before` (plain or not), in which the sequences that
    /// change them end at `changes`, and after which `unrendered` is left.
    pub(super) fn new(
        tokens: Tokenizer,
        before: bool,
        changes: &[usize],
        unrendered: &Unrendered,
        rows: u16,
        resets: u32,
    ) -> Lines {
        let (until, from) = match (changes.first(), changes.last()) {
            (Some(&first), Some(&last)) => (if before { first } else { 0 }, last),
            _ => (0, 0),
        };
        let from = if unrendered.lines_plain(rows) {
            from
        } else {
            usize::MAX
        };
        Lines {
            tokens,
            until,
            from,
            scrolled: false,
            resets,
            run: Run::default(),
        }
    }

    pub(super) fn plain_at(&self, at: usize) -> bool {
        at < self.until || at >= self.from
    }

    /// The parser was given `bytes`.
    pub(super) fn follow(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.tokens.in_ground() {
                let Some(esc) = find_esc(bytes) else {
                    return;
                };
                bytes = &bytes[esc..];
                // An SGR sequence ends where it began, in ground.
                if let Some(n) = colours(bytes) {
                    bytes = &bytes[n..];
                    continue;
                }
            }
            let n = self.tokens.run(bytes);
            if let Some((&b, rest)) = bytes[n..].split_first() {
                self.tokens.advance(b);
                bytes = rest;
            } else {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests;
