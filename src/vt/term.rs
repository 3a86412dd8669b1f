//! One pane's terminal emulator: vt100 0.18 behind a guard.
//!
//! Session output is hostile input. Before it reaches the parser, OSC
//! strings are cut at [`MAX_STRING`] bytes, because the parser would
//! otherwise buffer an unterminated one without limit (it buffers no other
//! escape string: DCS data goes to a handler vt100 leaves empty, and SOS,
//! PM and APC are skipped). A
//! panic inside the parser is caught: that pane's emulator is rebuilt and
//! the rest of the dashboard carries on. Sizes are clamped before they reach
//! the parser. The views implement tui-term's `Screen` trait, so tui-term
//! renders vt100 0.18 screens (its own default backend is vt100 0.16).
//!
//! A UTF-8 character cut by the end of a read is held back and fed with the
//! next read, whole: vte 0.15, the parser inside vt100, can lose the byte
//! after a character completed by a later read (alacritty/vte#159), and a
//! pty read can end anywhere.

use std::num::NonZeroU16;

use bytemuck::TransparentWrapper;
use ratatui::style::{Color, Modifier, Style};

use crate::protocol::{MAX_DIM, Size};
use crate::vt::kept::Tally;
use crate::vt::tokenizer::{Ended, Kind, Seq, Step, Tokenizer};

/// Longest escape string passed to the parser; the rest is dropped.
pub const MAX_STRING: usize = 64 * 1024;

/// A pane's emulator.
pub struct Term<CB: vt100::Callbacks = ()> {
    pub(super) parser: vt100::Parser<Tally<CB>>,
    cap: StringCap,
    size: Size,
    /// Rows of history kept after they scroll off (0 but for history
    /// readers); the parser itself keeps none (see [`crate::vt::kept`]).
    pub(super) scrollback: usize,
    /// How many rows up into the history the view is, and the screen
    /// shown there (history rows above the live ones), while it is.
    pub(super) back: usize,
    pub(super) view: Option<Box<vt100::Parser>>,
    /// How many times the parser panicked and was rebuilt.
    pub resets: u32,
    /// The start of a UTF-8 character that ended the last read (at most
    /// three bytes), not yet given to the parser; see [`Term::feed`].
    held: Vec<u8>,
    /// Whether the screen may be put to sleep ([`Term::sleep`]), and so
    /// keeps the main screen's rendering while an alternate one is shown.
    sleeps: bool,
    /// The main screen's rendering, taken as the program switched to the
    /// alternate screen (vt100 shows only the screen in use).
    behind: Option<Box<str>>,
}

impl<CB: vt100::Callbacks> std::fmt::Debug for Term<CB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Term")
            .field("size", &self.size)
            .field("resets", &self.resets)
            .finish()
    }
}

pub(super) fn dims(size: Size) -> (NonZeroU16, NonZeroU16) {
    let clamp = |v: u16| NonZeroU16::new(v.clamp(1, MAX_DIM)).unwrap_or(NonZeroU16::MIN);
    (clamp(size.rows), clamp(size.cols))
}

impl Term {
    pub fn new(size: Size) -> Term {
        Term::with_callbacks(size, ())
    }
}

impl<CB: vt100::Callbacks + Default> Term<CB> {
    /// An emulator that reports what vt100 does not act on (titles, bells,
    /// queries, other OSC strings) to `callbacks`.
    pub fn with_callbacks(size: Size, callbacks: CB) -> Self {
        let (rows, cols) = dims(size);
        Term {
            parser: vt100::Parser::new_with_callbacks(rows, cols, 0, Tally::new(callbacks)),
            cap: StringCap::default(),
            size: size.clamped(),
            scrollback: 0,
            back: 0,
            view: None,
            resets: 0,
            held: Vec::new(),
            sleeps: false,
            behind: None,
        }
    }

    /// An emulator that keeps up to `lines` rows that scrolled off the
    /// top of its main screen: a session's history, to read as text and
    /// to show scrolled back.
    pub fn with_scrollback(size: Size, lines: usize) -> Self {
        let mut t = Term::with_callbacks(size, CB::default());
        t.scrollback = lines;
        t.reset();
        t
    }

    /// Keeps `lines` rows of history from the next [`Term::reset`] on (a
    /// fresh replay fills it again).
    pub fn keep_history(&mut self, lines: usize) {
        self.scrollback = lines;
    }

    pub fn size(&self) -> Size {
        self.size
    }

    /// Feeds session output; never panics.
    ///
    /// The parser never gets a read that ends inside a UTF-8 character of
    /// text: vte 0.15 would keep the start and complete it from the next
    /// read, but it counts the bytes of that read it checked, not those
    /// the character took, so when another non-ASCII character follows
    /// closely it skips the byte after the first (`é` cut after its first
    /// byte, then `\x07é`, loses the bell; alacritty/vte#159). So those bytes are held back
    /// here and go first in the next read, and vte only ever sees whole
    /// characters. Bytes of an escape sequence are not text and are never
    /// held.
    pub fn feed(&mut self, bytes: &[u8]) {
        let mut filtered = Vec::with_capacity(self.held.len() + bytes.len());
        filtered.extend_from_slice(&self.held);
        self.held.clear();
        self.cap.filter(bytes, &mut filtered);
        let whole = filtered.len() - self.cap.unfinished_char(&filtered);
        self.held.extend_from_slice(&filtered[whole..]);
        filtered.truncate(whole);
        let switches = std::mem::take(&mut self.cap.unrendered.to_alternate);
        let erasures = std::mem::take(&mut self.cap.unrendered.erase_history);
        // Where the bytes are cut, and what happens there: up to each
        // switch's final byte the main screen is still in use, and its
        // rendering is taken there, for a sleep to keep; after each ED 3
        // the history kept so far goes.
        let mut cuts: Vec<(usize, bool)> = Vec::new();
        if self.sleeps {
            cuts.extend(switches.iter().map(|end| (end.saturating_sub(1), true)));
        }
        if self.scrollback > 0 {
            cuts.extend(erasures.iter().map(|end| (*end, false)));
        }
        cuts.sort_by_key(|c| c.0);
        // A view scrolled back stays on its rows as new ones come.
        let end_before = self.history_end();
        let mut from = 0;
        for (at, switch) in cuts {
            let at = at.clamp(from, whole);
            self.process(&filtered[from..at]);
            from = at;
            let main = !self.parser.screen().alternate_screen();
            if switch && main {
                self.behind = Some(self.parser.screen().contents_formatted().into());
            } else if !switch && main {
                self.parser.callbacks_mut().erase();
            }
        }
        self.process(&filtered[from..]);
        if self.back > 0 {
            let grew = self.history_end().saturating_sub(end_before);
            self.back = self.back.saturating_add(grew as usize);
            self.compose();
        }
        if self.behind.is_some() && !self.parser.screen().alternate_screen() {
            self.behind = None;
        }
    }

    fn process(&mut self, bytes: &[u8]) {
        let parser = &mut self.parser;
        if crate::term::contain(|| parser.process(bytes)).is_none() {
            self.rebuild();
        }
    }

    /// Lets the screen be put to sleep ([`Term::sleep`]) from now on.
    pub fn allow_sleep(&mut self) {
        self.sleeps = true;
    }

    /// Resizes the emulator (not the session); never panics.
    pub fn resize(&mut self, size: Size) {
        let size = size.clamped();
        if size == self.size {
            return;
        }
        self.size = size;
        // The parser forgets the scroll region on a resize, as xterm does.
        self.cap.unrendered.region = None;
        // A held half character stays held: the parser, too, would keep
        // it across a resize and draw it when the rest comes.
        let (rows, cols) = dims(size);
        let parser = &mut self.parser;
        let before = parser.screen().size().0.get();
        // The parser's own resize, not the screen's: rows it pushes off
        // the top go to the history (see `Tally`, and for the rows it
        // pulls down growing).
        if crate::term::contain(|| parser.set_size(rows, cols)).is_none() {
            self.rebuild();
        } else {
            let tally = self.parser.callbacks_mut();
            let after = rows.get();
            if after > before {
                tally.grew(before, after);
            } else {
                tally.shrank(after);
            }
        }
        if self.back > 0 {
            self.compose();
        }
    }

    /// Starts over with an empty screen, e.g. before a fresh replay.
    pub fn reset(&mut self) {
        let (rows, cols) = dims(self.size);
        // The callbacks keep what they collected; only the screen, and
        // the history, start over.
        let mut callbacks = std::mem::take(self.parser.callbacks_mut());
        callbacks.start_over(self.scrollback);
        self.parser = vt100::Parser::new_with_callbacks(rows, cols, 0, callbacks);
        self.back = 0;
        self.view = None;
        self.cap = StringCap::default();
        // Half a character from before is no part of the new screen, as a
        // fresh parser would have none.
        self.held.clear();
    }

    fn rebuild(&mut self) {
        self.resets += 1;
        self.reset();
    }

    /// Whether the screen can be put to sleep ([`Term::sleep`]) with
    /// nothing lost: not with a history, half a character or half a
    /// sequence held, or a scroll region, origin mode, insert mode or
    /// autowrap off in force, which its rendering would not carry.
    pub fn can_sleep(&self) -> bool {
        let screen = self.parser.screen();
        self.sleeps
            && self.scrollback == 0
            && self.held.is_empty()
            && self.cap.tokens.in_ground()
            && self.cap.unrendered.plain(self.size.rows)
            && (!screen.alternate_screen() || self.behind.is_some())
    }

    /// The screen put away as its rendering (see [`Asleep`]); what only
    /// [`Term::can_sleep`] allows loses nothing.
    pub fn sleep(mut self) -> Asleep<CB> {
        let screen = self.parser.screen();
        let mut rendering = String::new();
        if let Some(main) = &self.behind {
            rendering.push_str(main);
            rendering.push_str("\x1b[?1049h");
        }
        rendering.push_str(&screen.state_formatted());
        Asleep {
            alternate: screen.alternate_screen(),
            rendering: rendering.into_boxed_str(),
            callbacks: std::mem::take(self.callbacks_mut()),
            cap: self.cap,
            size: self.size,
            resets: self.resets,
        }
    }

    /// The emulator back from its rendering, as it was put to sleep. The
    /// main screen behind an alternate one is taken again as the
    /// rendering switches, as it was when the program did.
    pub fn wake(asleep: Asleep<CB>) -> Self {
        let mut t = Term::with_callbacks(asleep.size, CB::default());
        t.allow_sleep();
        // Drawn with callbacks of its own: redrawing is no news.
        t.feed(asleep.rendering.as_bytes());
        *t.callbacks_mut() = asleep.callbacks;
        t.cap = asleep.cap;
        t.resets = asleep.resets;
        t
    }

    pub fn screen(&self) -> &vt100::Screen {
        self.parser.screen()
    }

    pub fn callbacks(&self) -> &CB {
        &self.parser.callbacks().inner
    }

    pub fn callbacks_mut(&mut self) -> &mut CB {
        &mut self.parser.callbacks_mut().inner
    }

    /// A view of the whole screen, or of the part of it around the cursor
    /// when the pane is smaller than the session's screen.
    pub fn view(&self, rows: u16, cols: u16) -> View<'_> {
        self.view_around(rows, cols, self.screen().cursor_position())
    }

    /// A view of the whole screen, or of the part of it around `(row,
    /// col)` when the pane is smaller: in copy mode, its cursor's cell.
    pub fn view_around(&self, rows: u16, cols: u16, (crow, ccol): (u16, u16)) -> View<'_> {
        let screen = self.shown();
        let (srows, scols) = screen.size();
        let offset = |len: u16, avail: u16, cursor: u16| -> u16 {
            if len <= avail {
                0
            } else {
                // Keep the cursor in view, as near the bottom/right edge of
                // the window as the screen allows.
                cursor
                    .saturating_sub(avail.saturating_sub(1))
                    .min(len - avail)
            }
        };
        View {
            screen,
            row_off: offset(srows.get(), rows, crow),
            col_off: offset(scols.get(), cols, ccol),
        }
    }
}

/// A screen put to sleep ([`Term::sleep`]): its rendering, the escape
/// sequences that draw it on a blank screen of its size (vt100's
/// `state_formatted`: every cell with its attributes, the cursor, the
/// input modes; the main screen first, and the switch to the alternate
/// one, if that was in use), a few KiB where the emulator holds 32 bytes
/// a cell (352 KiB at 220x50). What the rendering does not carry: a saved
/// cursor (DECSC) and character sets; the states it would lose more of
/// keep the screen awake (see [`Term::sleep`]).
pub struct Asleep<CB> {
    /// Whether the alternate screen was in use (asked without waking).
    alternate: bool,
    rendering: Box<str>,
    callbacks: CB,
    cap: StringCap,
    size: Size,
    resets: u32,
}

impl<CB> std::fmt::Debug for Asleep<CB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Asleep")
            .field("size", &self.size)
            .field("rendering", &self.rendering.len())
            .finish()
    }
}

/// A screen that sleeps when told ([`Dozing::sleep`]) and wakes when next
/// used: a supervisor's, put to sleep while its session rests.
pub struct Dozing<CB: vt100::Callbacks> {
    awake: Option<Term<CB>>,
    asleep: Option<Asleep<CB>>,
    /// The size to start over at if neither is there (never, but a blank
    /// screen is the answer rather than a panic).
    size: Size,
}

impl<CB: vt100::Callbacks + Default> Dozing<CB> {
    pub fn new(mut term: Term<CB>) -> Self {
        term.allow_sleep();
        Dozing {
            size: term.size(),
            awake: Some(term),
            asleep: None,
        }
    }

    /// The screen, woken if it slept.
    pub fn term(&mut self) -> &mut Term<CB> {
        let size = self.size;
        let asleep = &mut self.asleep;
        self.awake.get_or_insert_with(|| match asleep.take() {
            Some(a) => Term::wake(a),
            None => {
                let mut t = Term::with_callbacks(size, CB::default());
                t.allow_sleep();
                t
            }
        })
    }

    /// Puts the screen to sleep, if what it shows allows (see
    /// [`Term::sleep`]); true if it sleeps now.
    pub fn sleep(&mut self) -> bool {
        if let Some(t) = self.awake.take_if(|t| t.can_sleep()) {
            self.size = t.size();
            self.asleep = Some(t.sleep());
        }
        self.asleep.is_some()
    }

    pub fn asleep(&self) -> bool {
        self.asleep.is_some()
    }

    /// Whether the alternate screen is in use, without waking the screen.
    pub fn alternate(&self) -> bool {
        match (&self.awake, &self.asleep) {
            (Some(t), _) => t.screen().alternate_screen(),
            (None, Some(a)) => a.alternate,
            (None, None) => false,
        }
    }
}

impl<CB: vt100::Callbacks> std::fmt::Debug for Dozing<CB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dozing")
            .field("asleep", &self.asleep.is_some())
            .field("size", &self.size)
            .finish()
    }
}

/// A window onto a screen, for tui-term.
#[derive(Clone, Copy)]
pub struct View<'a> {
    screen: &'a vt100::Screen,
    row_off: u16,
    col_off: u16,
}

impl std::fmt::Debug for View<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "View(+{}, +{})", self.row_off, self.col_off)
    }
}

/// A vt100 cell as tui-term's `Cell`.
#[derive(Debug, TransparentWrapper)]
#[repr(transparent)]
pub struct PaneCell(vt100::Cell);

impl View<'_> {
    /// The screen's row and column shown at the view's top left.
    pub fn offset(&self) -> (u16, u16) {
        (self.row_off, self.col_off)
    }

    /// Whether the cell shown at `row`, `col` of the view is a wide
    /// character (its right half falls in the next column).
    pub fn wide_at(&self, row: u16, col: u16) -> bool {
        use tui_term::widget::Screen as _;
        self.cell(row, col).is_some_and(|c| c.0.is_wide())
    }
}

impl tui_term::widget::Screen for View<'_> {
    type C = PaneCell;

    fn cell(&self, row: u16, col: u16) -> Option<&PaneCell> {
        let cell = self.screen.cell(
            row.checked_add(self.row_off)?,
            col.checked_add(self.col_off)?,
        )?;
        Some(PaneCell::wrap_ref(cell))
    }

    fn hide_cursor(&self) -> bool {
        self.screen.hide_cursor()
    }

    fn cursor_position(&self) -> (u16, u16) {
        let (r, c) = self.screen.cursor_position();
        (
            r.saturating_sub(self.row_off),
            c.saturating_sub(self.col_off),
        )
    }
}

impl tui_term::widget::Cell for PaneCell {
    fn has_contents(&self) -> bool {
        self.0.has_contents()
    }

    fn apply(&self, cell: &mut ratatui::buffer::Cell) {
        let c = &self.0;
        if c.has_contents() {
            cell.set_symbol(c.contents());
        }
        let mut m = Modifier::empty();
        for (on, bit) in [
            (c.bold(), Modifier::BOLD),
            (c.dim(), Modifier::DIM),
            (c.italic(), Modifier::ITALIC),
            (c.underline(), Modifier::UNDERLINED),
            (c.inverse(), Modifier::REVERSED),
        ] {
            if on {
                m |= bit;
            }
        }
        cell.set_style(
            Style::reset()
                .fg(color(c.fgcolor()))
                .bg(color(c.bgcolor()))
                .add_modifier(m),
        );
    }
}

fn color(c: vt100::Color) -> Color {
    match c {
        vt100::Color::Default => Color::Reset,
        vt100::Color::Idx(i) => Color::Indexed(i),
        vt100::Color::Rgb(r, g, b) => Color::Rgb(r, g, b),
    }
}

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
#[derive(Debug)]
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
    unrendered: Unrendered,
    /// Where the text stands in UTF-8: invalid sequences are shown.
    utf8: super::utf8::Utf8Text,
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
            tokens: Tokenizer::new(UNRENDERED_CAP),
            limit,
            ground_run: 0,
            unrendered: Unrendered::default(),
            utf8: super::utf8::Utf8Text::default(),
        }
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

    pub(crate) fn filter(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let mut rest = input;
        loop {
            if self.tokens.in_ground() {
                // Text up to the next ESC changes nothing: one copy.
                let n = rest.iter().position(|&b| b == 0x1b).unwrap_or(rest.len());
                self.utf8.push(&rest[..n], out);
                rest = &rest[n..];
                self.ground_run = self.ground_run.saturating_add(n);
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
                return;
            };
            rest = tail;
            // ESC, or a byte of a sequence: not text (a character it cuts
            // short is an invalid one).
            self.utf8.interrupt(out);
            self.ground_run = 0;
            let step = self.tokens.advance(b);
            let seq = self.tokens.seq();
            if step == Step::End(Ended::Acted) {
                self.unrendered.saw(&seq);
                if std::mem::take(&mut self.unrendered.switching) {
                    self.unrendered.to_alternate.push(out.len() + 1);
                }
                if std::mem::take(&mut self.unrendered.erasing) {
                    self.unrendered.erase_history.push(out.len() + 1);
                }
            }
            let over = step == Step::Part && seq.kind == Kind::Osc && seq.len > self.limit;
            if !over {
                out.push(b);
            }
        }
    }
}

/// Bytes of a sequence [`StringCap`] keeps: a scroll region's or a mode
/// list's parameters.
const UNRENDERED_CAP: usize = 32;

/// Terminal state that a screen's rendering (vt100's `state_formatted`)
/// does not carry, and that changes how later output lands: a screen that
/// has any of it in force is not put to sleep ([`Term::sleep`]).
#[derive(Debug, Clone, Default)]
struct Unrendered {
    /// DECSTBM's parameters, until reset (a resize or `CSI r`).
    region: Option<Vec<u8>>,
    /// DECOM: cursor positions relative to the region.
    origin: bool,
    /// IRM: text pushes the rest of the line right.
    insert: bool,
    /// DECAWM off: text at the last column stays there.
    no_wrap: bool,
    /// Where, in the bytes passed on by the last filtering, sequences that
    /// switch to the alternate screen end (see [`Term::feed`]).
    to_alternate: Vec<usize>,
    /// The sequence just seen switches to the alternate screen.
    switching: bool,
    /// Where, likewise, ED 3 (erase saved lines) sequences end: the
    /// history kept so far goes there.
    erase_history: Vec<usize>,
    /// The sequence just seen is ED 3.
    erasing: bool,
}

impl Unrendered {
    fn saw(&mut self, seq: &Seq<'_>) {
        if seq.kind == Kind::Esc && seq.collected == b"c" {
            // RIS: everything back to its default.
            let to_alternate = std::mem::take(&mut self.to_alternate);
            let erase_history = std::mem::take(&mut self.erase_history);
            *self = Unrendered {
                to_alternate,
                erase_history,
                ..Unrendered::default()
            };
            return;
        }
        // A CSI too long to keep is neither of these.
        let Some((body, fin)) = seq.csi() else {
            return;
        };
        let (private, params) = match body.strip_prefix(b"?") {
            Some(rest) => (true, rest),
            None => (false, body),
        };
        match fin {
            b'r' if !private => self.region = (!body.is_empty()).then(|| body.to_vec()),
            b'J' if params == b"3" => self.erasing = true,
            b'h' | b'l' => {
                let on = fin == b'h';
                for p in params.split(|&c| c == b';') {
                    match (private, p) {
                        (true, b"6") => self.origin = on,
                        (true, b"7") => self.no_wrap = !on,
                        (false, b"4") => self.insert = on,
                        (true, b"47" | b"1047" | b"1049") if on => self.switching = true,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    /// Whether none of it is in force on a screen of `rows` (a region of
    /// the whole screen is none).
    fn plain(&self, rows: u16) -> bool {
        // A parameter left out is 0, the default; one that is no number
        // makes the region unknown, so not the whole screen.
        let param = |p: Option<&[u8]>| match p {
            None | Some(b"") => Some(0),
            Some(p) => std::str::from_utf8(p).ok()?.parse::<u32>().ok(),
        };
        let whole = |body: &[u8]| {
            let mut parts = body.split(|&c| c == b';');
            match (param(parts.next()), param(parts.next())) {
                (Some(top), Some(bottom)) => top <= 1 && (bottom == 0 || bottom >= u32::from(rows)),
                _ => false,
            }
        };
        !self.origin && !self.insert && !self.no_wrap && self.region.as_deref().is_none_or(whole)
    }
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
    use crate::vt::events::{Recorder, TermEvent};

    fn text(t: &Term) -> String {
        t.screen().contents()
    }

    #[test]
    fn hostile_inputs_never_escape() {
        let mut t = Term::new(Size { cols: 1, rows: 1 });
        t.feed("你好abc\r\ndef".as_bytes());
        t.resize(Size { cols: 0, rows: 0 });
        t.feed(b"\x1b[8;0;0t\x1b[999999;999999H\x1b[K");
        t.resize(Size {
            cols: u16::MAX,
            rows: 2,
        });
        assert_eq!(
            t.size(),
            Size {
                cols: 4096,
                rows: 2
            }
        );
        let mut t = Term::new(Size { cols: 10, rows: 3 });
        t.feed("123456789你".as_bytes());
        t.resize(Size { cols: 9, rows: 3 });
        t.feed(b"\x1b[K\xff\xfe invalid utf8");
        assert!(text(&t).contains("invalid utf8"));
    }

    #[test]
    fn unterminated_strings_are_capped() {
        let mut cap = StringCap::default();
        let mut out = Vec::new();
        let mut input = b"\x1b]0;".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_STRING * 4));
        input.extend(b"\x07after");
        cap.filter(&input, &mut out);
        assert!(out.len() < MAX_STRING + 100, "{}", out.len());
        assert!(out.ends_with(b"\x07after"));
        let mut t = Term::new(Size { cols: 20, rows: 2 });
        t.feed(&input);
        assert!(text(&t).contains("after"));
    }

    #[test]
    fn output_after_a_string_ended_by_another_escape_is_kept() {
        // ESC ends a string whatever follows it, in the parser as in
        // xterm: what comes after a capped, unterminated title is shown.
        let mut t = Term::new(Size { cols: 40, rows: 3 });
        t.feed(b"\x1b]0;");
        t.feed(&vec![b'x'; MAX_STRING * 2]);
        t.feed(b"\x1b[Hafter-cap");
        assert!(text(&t).contains("after-cap"), "{:?}", text(&t));
        // A short string ended that way must not make the cap count the
        // ordinary output after it.
        let mut t = Term::new(Size { cols: 40, rows: 3 });
        t.feed(b"\x1b]0;title\x1b[m");
        for _ in 0..3 {
            t.feed(&b"0123456789".repeat(MAX_STRING / 10));
        }
        t.feed(b"\x1b[2J\x1b[Hstill-here");
        assert!(text(&t).contains("still-here"), "{:?}", text(&t));
        // CAN and SUB abort a string too.
        let mut t = Term::new(Size { cols: 40, rows: 3 });
        t.feed(b"\x1b]0;");
        t.feed(&vec![b'x'; MAX_STRING * 2]);
        t.feed(b"\x18after-can");
        assert!(text(&t).contains("after-can"), "{:?}", text(&t));
    }

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
    fn only_osc_is_cut_so_output_after_other_strings_is_kept() {
        // A long DCS ended by an 8-bit ST: the parser shows what follows.
        let mut t = Term::new(Size { cols: 40, rows: 2 });
        t.feed(b"\x1bPq");
        t.feed(&vec![b'#'; MAX_STRING * 2]);
        t.feed(b"\x9cafter-dcs");
        assert!(text(&t).contains("after-dcs"), "{:?}", text(&t));
    }

    /// What a screen shows and what the program said besides, after
    /// `chunks` were fed one read each.
    fn fed(chunks: &[&[u8]]) -> (String, Vec<TermEvent>) {
        let mut t = Term::with_callbacks(Size { cols: 20, rows: 2 }, Recorder::default());
        for chunk in chunks {
            t.feed(chunk);
        }
        let events = t.callbacks_mut().take();
        (t.screen().contents(), events)
    }

    #[test]
    fn a_character_split_between_reads_keeps_what_follows_it() {
        // vte 0.15 completes a character cut by a read from the next read,
        // and then skips the bytes it checked, not those the character
        // took: the BEL after it was lost (alacritty/vte#159).
        assert_eq!(
            fed(&[b"\xc3", b"\xa9\x07\xc3\xa9"]),
            ("\u{e9}\u{e9}".to_owned(), vec![TermEvent::Bell])
        );
        // So was the text after it: the upstream report's example.
        assert_eq!(
            fed(&[b"B\xcc", b"\x81C\xe2\x94\x80"]).0,
            "B\u{301}C\u{2500}"
        );
        // Cut anywhere, a stream shows what it shows whole.
        for whole in [
            "\u{e9}A\u{2500}\x1b[31mX\u{1f600}\x07\u{e9}".as_bytes(),
            "B\u{301}C\u{2500}\u{e9}\x1b]0;t\u{e9}\x07\u{e9}".as_bytes(),
            b"\xc3\x1b[32mY\xe2\x94Z\xf0\x9f\x98",
        ] {
            for at in 0..=whole.len() {
                let (a, b) = whole.split_at(at);
                assert_eq!(fed(&[a, b]), fed(&[whole]), "{whole:?} cut at {at}");
            }
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

    #[test]
    fn a_reset_drops_a_held_half_character() {
        let mut t = Term::new(Size { cols: 20, rows: 2 });
        t.feed(b"\xc3");
        t.reset();
        t.feed(b"\xa9ok");
        let mut fresh = Term::new(Size { cols: 20, rows: 2 });
        fresh.feed(b"\xa9ok");
        assert_eq!(text(&t), text(&fresh));
        assert!(!text(&t).contains('\u{e9}'), "{:?}", text(&t));
    }

    #[test]
    fn a_resize_keeps_a_held_half_character() {
        let mut t = Term::new(Size { cols: 20, rows: 2 });
        t.feed(b"\xc3");
        t.resize(Size { cols: 30, rows: 3 });
        t.feed(b"\xa9ok");
        assert_eq!(text(&t), "\u{e9}ok");
    }

    #[test]
    fn a_small_view_follows_the_cursor() {
        let mut t = Term::new(Size { cols: 20, rows: 10 });
        t.feed(b"\x1b[9;15Hhere");
        let v = t.view(4, 10);
        use tui_term::widget::Screen;
        let (r, c) = v.cursor_position();
        assert!(r < 4 && c < 10, "{r},{c}");
        assert_eq!(
            v.cell(r, c - 4).map(|c| c.0.contents().to_string()),
            Some("h".into())
        );
    }
}
