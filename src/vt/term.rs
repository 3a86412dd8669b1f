//! One screen's terminal emulator: vt100 0.18 behind a guard.
//!
//! Session output is hostile input. Before it reaches the parser it is
//! read as the parser will read it ([`StringCap`]): OSC strings are cut at
//! [`MAX_STRING`] bytes, because the parser would otherwise buffer an
//! unterminated one without limit (it buffers no other escape string: DCS
//! data goes to a handler vt100 leaves empty, and SOS, PM and APC are
//! skipped), and invalid UTF-8 is made visible. A panic inside the parser
//! is caught: that screen's emulator is rebuilt and the rest of the
//! program carries on. Sizes are clamped before they reach the parser.
//!
//! A UTF-8 character cut by the end of a read is held back and parsed
//! with the next read, whole: vte 0.15, the parser inside vt100, can lose
//! the byte after a character completed by a later read
//! (alacritty/vte#159), and a pty read can end anywhere.
//!
//! A screen may parse lazily: output is read as it comes ([`Term::skim`])
//! and parsed when the screen is looked at, leaving out rows that scrolled
//! off unseen ([`super::skim`]); and it may sleep as its rendering. A
//! supervisor's screen does both (`vt::dozing`).

use std::borrow::Cow;
use std::collections::VecDeque;
use std::num::NonZeroU16;

use crate::protocol::{MAX_DIM, Size};
use crate::vt::budget::Budget;
use crate::vt::cap::{Landmarks, StringCap};
use crate::vt::kept::{Kept, Tally};
use crate::vt::runs::Lines;
use crate::vt::skim::{BOUND, Skim, Unparsed, last_drawn};
use crate::vt::tokenizer::Tokenizer;

pub use crate::vt::cap::MAX_STRING;

/// A screen's emulator.
pub struct Term<CB: vt100::Callbacks = ()> {
    pub(super) parser: vt100::Parser<Tally<CB>>,
    /// Output read and not parsed yet: half a character at most, but for a
    /// screen that parses lazily.
    pub(super) unparsed: Unparsed,
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
    /// Bytes given to the parser so far.
    parsed: u64,
    /// Whether the screen may be put to sleep ([`Term::sleep`]), and so
    /// keeps the main screen's rendering while an alternate one is shown.
    sleeps: bool,
    /// Rows that scrolled off are forgotten (see [`Term::grow_at_bottom`]).
    pub(super) at_bottom: bool,
    /// The main screen's rendering, taken as the program switched to the
    /// alternate screen (vt100 shows only the screen in use).
    behind: Option<Box<str>>,
    /// Whether skimming pays lately (a lazy screen's).
    budget: Budget,
    /// Runs of plain lines are kept without drawing them (a screen with a
    /// history's, see `vt::runs`); off only to test that it changes nothing.
    runs: bool,
    /// Where the parser stands after the bytes it was given, as the cap
    /// read them: in which sequence, and whether the main screen's line
    /// modes are plain (for `vt::runs`).
    tokens: Tokenizer,
    lines_plain: bool,
    /// The alternate screen as the program last left it, while its place
    /// on the main screen is known (see [`Left`]).
    left: Option<Box<Left>>,
}

/// What a program showed on its alternate screen as it left it, and where
/// on the main screen the output after that begins. A full-screen program
/// (Claude Code, Codex, an editor) leaves no history of its own: switching
/// back restores the main screen as it was before it started, so without
/// this its last screen, often the point of it (a conversation's end, an
/// error), is gone from `hm logs`, an ended session's record and its pane.
#[derive(Debug, Clone)]
struct Left {
    /// Its rows down to the last written: as drawn (SGR and text, to
    /// write again) and as text.
    formatted: Vec<String>,
    text: Vec<String>,
    /// The main screen's row, numbered as the history numbers rows, that
    /// the output after the switch back begins on (unknown until the
    /// switch is parsed).
    at: Option<u64>,
}

impl<CB: vt100::Callbacks> std::fmt::Debug for Term<CB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Term")
            .field("size", &self.size)
            .field("resets", &self.resets)
            .field("unparsed", &self.unparsed.bytes.len())
            .finish()
    }
}

/// What happens where a parse is cut (see [`Term::parse`]).
#[derive(Debug, Clone, Copy)]
enum Cut {
    Switch,
    /// Just before a switch back to the main screen, and just after it.
    Leaving,
    Left,
    Erase,
    Reset,
    /// Before an ED 2, or an ED 0 (`below`) that may start at the top left.
    Clear {
        below: bool,
    },
}

/// How many of `screen`'s rows, from the top, are written: down to the
/// last with anything on it but blanks.
pub fn rows_written(screen: &vt100::Screen) -> usize {
    let cols = screen.size().1.get();
    screen
        .rows(0, cols)
        .enumerate()
        .filter(|(_, row)| !row.trim_end().is_empty())
        .last()
        .map_or(0, |(i, _)| i + 1)
}

/// `screen`'s top `count` rows as history keeps them, made as vt100
/// makes those that scroll off, by a copy of the screen scrolled up
/// (SU). Not the screen itself: vt100 counts the rows it scrolls, and
/// pulls as many down when it grows, which the session's own screen
/// would not.
fn top_rows(screen: &vt100::Screen, count: usize) -> Option<VecDeque<Kept>> {
    if count == 0 {
        return None;
    }
    let (rows, cols) = screen.size();
    let mut copy = vt100::Parser::new_with_callbacks(rows, cols, 0, Tally::new(()));
    copy.callbacks_mut().keep = count;
    let drawn = screen.contents_formatted();
    crate::term::contain(move || {
        copy.process(drawn.as_bytes());
        copy.process(format!("\x1b[{count}S").as_bytes());
        std::mem::take(&mut copy.callbacks_mut().rows)
    })
}

/// Where the erase (`ESC [`, an optional `?`, digits, `J`) that ends at
/// `end` of `bytes` begins, if it is whole there.
fn erase_start(bytes: &[u8], end: usize) -> Option<usize> {
    let seq = bytes.get(..end)?.strip_suffix(b"J")?;
    let params = seq.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    let seq = &seq[..seq.len() - params];
    let seq = seq.strip_suffix(b"?").unwrap_or(seq);
    seq.strip_suffix(b"\x1b[").map(<[u8]>::len)
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
            unparsed: Unparsed::new(StringCap::default()),
            size: size.clamped(),
            scrollback: 0,
            back: 0,
            view: None,
            resets: 0,
            parsed: 0,
            sleeps: false,
            at_bottom: false,
            behind: None,
            budget: Budget::default(),
            runs: true,
            tokens: StringCap::default().tokens().clone(),
            lines_plain: true,
            left: None,
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

    /// Feeds session output and parses it; never panics.
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
        self.skim(bytes);
        self.settle();
    }

    /// Parses lazily from now on: [`Term::skim`] reads output without
    /// drawing it, and what scrolls off unseen before the screen is next
    /// [settled](Term::settle) is never drawn. Not for a screen that keeps
    /// a history, which must see every row. Such a screen also
    /// [grows at the bottom](Term::grow_at_bottom).
    pub fn parse_lazily(&mut self) {
        if self.scrollback == 0 {
            self.unparsed.skim = Some(Skim::new(self.size));
            self.at_bottom = true;
        }
    }

    /// How much output a lazy screen reads before it judges whether
    /// skimming paid, and how much it then parses at once if it did not
    /// (see `vt::budget`): for tests, whose output is small.
    pub fn skim_window(&mut self, window: usize, stretch: usize) {
        self.budget = Budget::new(window, stretch);
    }

    /// Forgets the rows that scrolled off, so that a screen made taller
    /// gets its new rows at the bottom, as a terminal without history
    /// does. vt100 otherwise counts every row that ever scrolled off the
    /// main screen and, when the screen grows, inserts as many blank rows
    /// at its top (an unbounded history's rows, which it does not have),
    /// moving what is shown down: a count a lazily parsed screen cannot
    /// keep, since rows it skipped never scrolled.
    pub fn grow_at_bottom(&mut self) {
        self.at_bottom = true;
    }

    /// Reads session output; parses it only as far as it must now (a
    /// terminal query, a title or anything else the callbacks report, a
    /// screen switch, a flood past [`BOUND`]), or all of it for a screen
    /// that does not [parse lazily](Term::parse_lazily). The screen shows
    /// what was parsed: [`Term::settle`] before looking.
    pub fn skim(&mut self, bytes: &[u8]) {
        if self.unparsed.skim.is_some() {
            if self.budget.eager() {
                self.budget.parsed_at_once(bytes.len());
                self.read_at_once(bytes);
                return;
            }
            self.budget.skimmed(bytes.len());
        }
        let mut rest = bytes;
        loop {
            let n = self.unparsed.take(rest);
            rest = &rest[n..];
            if self.unparsed.skim.as_ref().is_some_and(Skim::wants_parser) {
                self.settle();
            } else if self.unparsed.bytes.len() > BOUND {
                self.skip();
                if self.unparsed.bytes.len() > BOUND {
                    self.settle();
                }
            }
            if rest.is_empty() {
                return;
            }
        }
    }

    /// Reads and parses `bytes` as a screen that is not lazy does, while
    /// skimming does not pay (see `vt::budget`).
    fn read_at_once(&mut self, bytes: &[u8]) {
        self.settle();
        let skim = self.unparsed.skim.take();
        self.unparsed.take(bytes);
        self.unparsed.skim = skim;
        self.settle();
        if let Some(skim) = &mut self.unparsed.skim {
            // The skim did not see the text: what vt100 drew last is not
            // known to it, and everything it drew is parsed. A skip to
            // come puts back only a character the skim sees from here.
            skim.drawn_last(None);
        }
    }

    /// Parses everything read (but half a character at its end).
    pub fn settle(&mut self) {
        self.skip();
        if std::mem::take(&mut self.unparsed.at_junction) {
            // The skipped output left the cursor at the start of the
            // bottom row (see `vt::skim`).
            let rows = self.parser.screen().size().0;
            self.process(format!("\x1b[{rows};1H").as_bytes());
        }
        let bytes = std::mem::take(&mut self.unparsed.bytes);
        let whole = bytes.len() - self.unparsed.cap.unfinished_char(&bytes);
        if let Some(skim) = &mut self.unparsed.skim {
            // The text read last is whole as far as it is parsed.
            skim.end_text(&bytes[..whole]);
        }
        let at = std::mem::take(&mut self.unparsed.cap.unrendered.at);
        self.parse(&bytes[..whole], &at);
        // What is held back is text: the parser stands where the cap does.
        self.tokens.clone_from(self.unparsed.cap.tokens());
        self.lines_plain = self.unparsed.cap.unrendered.lines_plain(self.size.rows);
        self.unparsed.bytes = bytes;
        self.unparsed.bytes.drain(..whole);
        let inside = !self.unparsed.cap.in_ground();
        let kept = self.unparsed.bytes.len();
        let row = self.parser.screen().cursor_position().0;
        if let Some(skim) = &mut self.unparsed.skim {
            skim.parsed(self.size, row, inside, kept);
        }
    }

    /// Leaves unparsed what scrolled off unseen before the latest junction
    /// (see `vt::skim`), but for the state it set.
    fn skip(&mut self) {
        let Some(skim) = &mut self.unparsed.skim else {
            return;
        };
        let Some(junction) = skim.best.take() else {
            return;
        };
        let floor = skim.floor.min(junction.at);
        let states = skim.settings_before(junction.at);
        self.budget.skipped(junction.at - floor);
        let bytes = std::mem::take(&mut self.unparsed.bytes);
        // The end of a sequence the parser is inside, exactly; then what
        // the skipped output set, onto rows that will scroll off.
        let at = self.unparsed.cap.unrendered.at.before(floor);
        self.parse(&bytes[..floor], &at);
        // Rows go unseen, uncounted: where a screen left before them is
        // on the main screen is not known.
        self.left = None;
        for r in states {
            self.process(&bytes[r]);
        }
        if let Some(c) = junction.setter {
            self.process(c.encode_utf8(&mut [0; 4]).as_bytes());
        }
        self.unparsed.bytes = bytes;
        self.unparsed.bytes.drain(..junction.at);
        self.unparsed.cap.unrendered.at.drained(junction.at);
        if let Some(skim) = &mut self.unparsed.skim {
            skim.drained(junction.at);
        }
        self.unparsed.at_junction = true;
    }

    /// Parses `bytes`, in which the sequences noted in `at` end there.
    fn parse(&mut self, bytes: &[u8], at: &Landmarks) {
        // Where the bytes are cut, and what happens there: up to each
        // switch's final byte the main screen is still in use, so its
        // rendering is taken there, for a sleep to keep, and the rows it
        // scrolled off are forgotten before it is hidden; after each ED 3
        // the history kept so far goes; after each RIS, vt100's count of
        // rows gone starts over, and the history's with it; before each
        // clear of the whole screen, what it shows goes to the history.
        let mut cuts: Vec<(usize, Cut)> = Vec::new();
        if self.sleeps || self.at_bottom {
            let switches = at.to_alternate.iter();
            cuts.extend(switches.map(|end| (end.saturating_sub(1), Cut::Switch)));
        }
        cuts.extend(
            at.from_alternate
                .iter()
                .flat_map(|&end| [(end.saturating_sub(1), Cut::Leaving), (end, Cut::Left)]),
        );
        if self.scrollback > 0 {
            cuts.extend(at.erase_history.iter().map(|&end| (end, Cut::Erase)));
            cuts.extend(at.full_reset.iter().map(|&end| (end, Cut::Reset)));
            for (ends, below) in [(&at.clears, false), (&at.clears_below, true)] {
                let starts = ends.iter().filter_map(|&end| erase_start(bytes, end));
                cuts.extend(starts.map(|start| (start, Cut::Clear { below })));
            }
        }
        cuts.sort_by_key(|c| c.0);
        // A view scrolled back stays on its rows as new ones come.
        let end_before = (self.back > 0).then(|| self.history_end());
        let mut lines =
            (self.runs && self.scrollback > 0 && self.unparsed.skim.is_none()).then(|| {
                Lines::new(
                    self.tokens.clone(),
                    self.lines_plain,
                    &at.line_modes,
                    &self.unparsed.cap.unrendered,
                    self.size.rows,
                    self.resets,
                )
            });
        let mut from = 0;
        for (at, cut) in cuts {
            let at = at.clamp(from, bytes.len());
            self.parse_part(bytes, from, at, lines.as_mut());
            from = at;
            match cut {
                Cut::Leaving => self.leaving(),
                Cut::Left => self.left(),
                _ => {}
            }
            if self.parser.screen().alternate_screen() {
                continue;
            }
            match cut {
                Cut::Leaving | Cut::Left => {}
                Cut::Switch => {
                    if self.sleeps {
                        self.behind = Some(self.parser.screen().contents_formatted().into());
                    }
                    self.forget_scrolled();
                }
                Cut::Erase => self.parser.callbacks_mut().erase(),
                Cut::Reset => self.parser.callbacks_mut().reset(),
                Cut::Clear { below } => self.keep_before_clear(below),
            }
        }
        self.parse_part(bytes, from, bytes.len(), lines.as_mut());
        self.forget_scrolled();
        self.keep_view(end_before);
        if self.behind.is_some() && !self.parser.screen().alternate_screen() {
            self.behind = None;
        }
        // A screen left whose place has scrolled off is no use to keep (a
        // shell that ran an editor once would hold it for good).
        let top = self.history_end();
        if self
            .left
            .as_ref()
            .is_some_and(|l| l.at.is_some_and(|at| at < top))
        {
            self.left = None;
        }
    }

    /// A view scrolled back (`end_before`: where the history ended before
    /// the latest rows came) stays on its rows.
    fn keep_view(&mut self, end_before: Option<u64>) {
        if let Some(end_before) = end_before {
            let grew = self.history_end().saturating_sub(end_before);
            self.back = self.back.saturating_add(grew as usize);
            self.compose();
        }
    }

    /// A switch back to the main screen is about to be parsed (all of it
    /// but its final byte is): what the alternate screen shows is kept.
    fn leaving(&mut self) {
        let screen = self.parser.screen();
        if !screen.alternate_screen() {
            return;
        }
        let cols = screen.size().1.get();
        let used = rows_written(screen);
        self.left = (used > 0).then(|| {
            Box::new(Left {
                formatted: screen.rows_formatted(0, cols).take(used).collect(),
                text: screen.rows(0, cols).take(used).collect(),
                at: None,
            })
        });
    }

    /// A switch back to the main screen was parsed: the output after it
    /// begins on the cursor's row, or the next one if something is
    /// written there already.
    fn left(&mut self) {
        let screen = self.parser.screen();
        if screen.alternate_screen() {
            return;
        }
        let (row, col) = screen.cursor_position();
        let cols = screen.size().1.get();
        let taken = col > 0 || !screen.contents_between(row, 0, row, cols).trim().is_empty();
        let at = self.history_end() + u64::from(row) + u64::from(taken);
        if let Some(left) = self.left.as_mut().filter(|l| l.at.is_none()) {
            left.at = Some(at);
        }
    }

    /// Writes the alternate screen the program last left onto the main
    /// screen, as text in its colours, where the output after the switch
    /// back begins (that output moves down below it): the history then
    /// has it in its place. Once the session has ended (`hm logs` of it,
    /// its pane), never on a live screen: the program's drawing after it
    /// would land elsewhere than on its terminal, and the history would
    /// no longer be the one every reader of a running session shares.
    /// Nothing if the place has scrolled off, or the program is on its
    /// alternate screen.
    pub fn write_left(&mut self) {
        let Some(out) = self.take_left() else {
            return;
        };
        let end_before = (self.back > 0).then(|| self.history_end());
        self.process(&out);
        self.keep_view(end_before);
    }

    /// What [`write_left`](Self::write_left) parses, for a caller that
    /// must keep the bytes too (a restarted session's old output goes
    /// into its new supervisor's ring, which every replay reads); the
    /// left screen is gone from this one after.
    pub fn take_left(&mut self) -> Option<Vec<u8>> {
        let left = self.left.take()?;
        let screen = self.parser.screen();
        let top = self.history_end();
        let at = left.at.filter(|&at| at >= top)?;
        if screen.alternate_screen() {
            return None;
        }
        let (rows, cols) = (screen.size().0.get(), screen.size().1.get());
        let row = u16::try_from(at - top).ok()?;
        let row = row.min(rows);
        let used = u16::try_from(rows_written(screen)).unwrap_or(rows);
        let after: Vec<String> = screen
            .rows_formatted(0, cols)
            .take(usize::from(used))
            .skip(usize::from(row))
            .collect();
        // To the row before it, and down a line (scrolls if it is below
        // the bottom), and erased from there. From the top, not by ED 0
        // at the top left, which the history takes for a clear of the
        // whole screen and pushes the rows there into it (the bytes are
        // parsed again in a restarted session's ring: the resume line
        // went above the banner, and again below the conversation): the
        // rows below the first, then the first.
        let mut out = match row {
            0 => String::from("\x1b[2;1H\x1b[m\x1b[J\x1b[H\x1b[2K"),
            r => format!("\x1b[{r};1H\r\n\x1b[m\x1b[J"),
        };
        for r in left.formatted.iter().chain(&after) {
            out.push_str(r);
            out.push_str("\x1b[m\r\n");
        }
        Some(out.into_bytes())
    }

    /// The screen's text, each row a line; on the main screen, with the
    /// alternate screen the program last left in its place, if that is
    /// still on the screen (see [`Left`]).
    pub fn contents_with_left(&self) -> String {
        let screen = self.parser.screen();
        let cols = screen.size().1.get();
        let mut rows: Vec<String> = screen.rows(0, cols).collect();
        let top = self.history_end();
        let place = self
            .left
            .as_ref()
            .filter(|_| !screen.alternate_screen())
            .and_then(|l| Some((l, l.at.filter(|&at| at >= top)?)));
        if let Some((left, at)) = place {
            let row = usize::try_from(at - top)
                .unwrap_or(usize::MAX)
                .min(rows.len());
            rows.splice(row..row, left.text.iter().cloned());
        }
        rows.join("\n")
    }

    /// A clear of the whole main screen is about to be parsed: the rows
    /// written on it scroll off first, into the history, as a terminal
    /// that scrolls on clear (tmux's default) keeps them. Without it a
    /// history reader (`hm logs`, a pane scrolled back) lost every line
    /// still on the screen when a program cleared it: a build that printed
    /// fifty lines on a screen of forty, then cleared, left ten.
    /// ED 3 after it (`clear` in a shell) erases them with the rest.
    fn keep_before_clear(&mut self, below: bool) {
        let screen = self.parser.screen();
        if below && screen.cursor_position() != (0, 0) {
            return;
        }
        if let Some(kept) = top_rows(screen, rows_written(screen)) {
            self.parser.callbacks_mut().keep_rows(kept);
        }
        self.parser.callbacks_mut().cleared();
    }

    /// The main screen: the one shown, or a copy of the one under the
    /// alternate screen while that is (vt100 shows only the screen in
    /// use).
    fn main_screen(&self) -> Option<Cow<'_, vt100::Screen>> {
        let screen = self.parser.screen();
        if !screen.alternate_screen() {
            return Some(Cow::Borrowed(screen));
        }
        let (rows, cols) = screen.size();
        let mut copy = vt100::Parser::new(rows, cols, 0);
        *copy.screen_mut() = screen.clone();
        // 47 switches screens and does nothing else.
        crate::term::contain(move || {
            copy.process(b"\x1b[?47l");
            copy.screen().clone()
        })
        .map(Cow::Owned)
    }

    /// See [`Term::grow_at_bottom`]: the main screen's count of rows that
    /// scrolled off, cleared while it is the one in use (it scrolls only
    /// then; a switch away is cut at, see [`Term::parse`]).
    fn forget_scrolled(&mut self) {
        if self.at_bottom && !self.parser.screen().alternate_screen() {
            self.parser.screen_mut().clear_scrollback();
            // The history's count of rows gone goes with vt100's.
            self.parser.callbacks_mut().gone = 0;
            self.parser.callbacks_mut().owed = 0;
        }
    }

    /// Parses `bytes[from..to]`, keeping runs of plain lines if `lines`
    /// follows where the parse stands.
    fn parse_part(&mut self, bytes: &[u8], from: usize, to: usize, lines: Option<&mut Lines>) {
        match lines {
            Some(lines) => self.draw(bytes, from, to, lines),
            None => self.process(&bytes[from..to]),
        }
    }

    pub(super) fn process(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.parsed += bytes.len() as u64;
        let parser = &mut self.parser;
        if crate::term::contain(|| parser.process(bytes)).is_none() {
            self.rebuild();
        }
    }

    /// Parses every byte, runs of plain lines too (see `vt::runs`): the
    /// screen the fast way is held to.
    #[cfg(test)]
    pub(crate) fn draw_every_row(&mut self) {
        self.runs = false;
    }

    /// Lets the screen be put to sleep ([`Term::sleep`]) from now on.
    pub fn allow_sleep(&mut self) {
        self.sleeps = true;
    }

    /// Resizes the emulator (not the session); never panics. What was read
    /// before is parsed first, at the old size, as it was written for it.
    pub fn resize(&mut self, size: Size) {
        let size = size.clamped();
        if size == self.size {
            return;
        }
        self.settle();
        self.size = size;
        // The rows move, and are numbered anew.
        self.left = None;
        self.unparsed.cap.unrendered.resized();
        self.lines_plain = self.unparsed.cap.unrendered.lines_plain(size.rows);
        // A held half character stays held: the parser, too, would keep
        // it across a resize and draw it when the rest comes.
        let (rows, cols) = dims(size);
        // A history reads the main screen's rows as they were before a
        // change of width reshaped them (see `Tally::reshaping`).
        let reshapes = cols != self.parser.screen().size().1 && self.scrollback > 0;
        if reshapes {
            let now = self.main_screen().and_then(|main| {
                let all = usize::from(main.size().0.get());
                top_rows(&main, all)
            });
            self.parser.callbacks_mut().reshaping(now);
        }
        let parser = &mut self.parser;
        let before = parser.screen().size().0.get();
        // The parser's own resize, not the screen's: rows it pushes off
        // the top go to the history (see `Tally`, and for the rows it
        // pulls down growing).
        if crate::term::contain(|| parser.set_size(rows, cols)).is_none() {
            self.rebuild();
        } else {
            let after = rows.get();
            if after > before {
                self.settle_owed(before, after);
                let tally = self.parser.callbacks_mut();
                tally.grew(before, after);
            } else {
                self.parser.callbacks_mut().shrank(after);
            }
            if reshapes {
                let texts: Vec<String> = match self.main_screen() {
                    Some(main) => main.rows(0, cols.get()).collect(),
                    None => Vec::new(),
                };
                self.parser.callbacks_mut().reshaped(texts.into_iter());
            }
        }
        if self.back > 0 {
            self.compose();
        }
        self.counted_afresh();
    }

    /// The lines a lazy screen counts start over from the parser's cursor.
    fn counted_afresh(&mut self) {
        let inside = !self.unparsed.cap.in_ground();
        let kept = self.unparsed.bytes.len();
        let row = self.parser.screen().cursor_position().0;
        if let Some(skim) = &mut self.unparsed.skim {
            skim.parsed(self.size, row, inside, kept);
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
        self.left = None;
        // Half a character from before is no part of the new screen, as a
        // fresh parser would have none.
        let lazy = self.unparsed.skim.is_some();
        self.unparsed = Unparsed::new(StringCap::default());
        self.unparsed.cap.note_clears = self.scrollback > 0;
        self.tokens.clone_from(self.unparsed.cap.tokens());
        self.lines_plain = true;
        if lazy {
            self.parse_lazily();
        }
    }

    fn rebuild(&mut self) {
        self.resets += 1;
        self.reset();
    }

    /// Whether the screen can be put to sleep ([`Term::sleep`]) with
    /// nothing lost: not with a history, output unparsed (half a
    /// character, half a sequence), or a scroll region, origin mode,
    /// insert mode or autowrap off in force, which its rendering would not
    /// carry.
    pub fn can_sleep(&self) -> bool {
        let screen = self.parser.screen();
        let cap = &self.unparsed.cap;
        self.sleeps
            && self.scrollback == 0
            && self.unparsed.bytes.is_empty()
            && !self.unparsed.at_junction
            && cap.in_ground()
            && cap.unrendered.plain(self.size.rows)
            && (!screen.alternate_screen() || self.behind.is_some())
    }

    /// The screen put away as its rendering (see [`Asleep`]); what only
    /// [`Term::can_sleep`] allows loses nothing.
    pub fn sleep(mut self) -> Asleep<CB> {
        let screen = self.parser.screen();
        let alternate = screen.alternate_screen();
        let mut rendering = String::new();
        if let Some(main) = &self.behind {
            rendering.push_str(main);
            rendering.push_str("\x1b[?1049h");
        }
        rendering.push_str(&screen.state_formatted());
        let mut unparsed = self.unparsed;
        unparsed.bytes = Vec::new();
        if let Some(skim) = &mut unparsed.skim {
            // Woken, the parser's last character is the rendering's, not
            // the one drawn before the sleep.
            skim.drawn_last(last_drawn(rendering.as_bytes(), self.size));
        }
        Asleep {
            alternate,
            rendering: rendering.into_boxed_str(),
            callbacks: std::mem::take(self.parser.callbacks_mut()).inner,
            unparsed,
            size: self.size,
            resets: self.resets,
            at_bottom: self.at_bottom,
            budget: self.budget,
            left: self.left,
        }
    }

    /// The emulator back from its rendering, as it was put to sleep, with
    /// what was read since still to parse. The main screen behind an
    /// alternate one is taken again as the rendering switches, as it was
    /// when the program did.
    pub fn wake(asleep: Asleep<CB>) -> Self {
        let mut t = Term::with_callbacks(asleep.size, CB::default());
        t.allow_sleep();
        t.at_bottom = asleep.at_bottom;
        // Drawn with callbacks of its own: redrawing is no news.
        t.feed(asleep.rendering.as_bytes());
        *t.callbacks_mut() = asleep.callbacks;
        t.unparsed = asleep.unparsed;
        t.resets = asleep.resets;
        t.budget = asleep.budget;
        t.left = asleep.left;
        t
    }

    pub fn screen(&self) -> &vt100::Screen {
        self.parser.screen()
    }

    /// How many bytes the parser has been given: for a screen that parses
    /// lazily, what a flood cost it.
    pub fn parsed(&self) -> u64 {
        self.parsed
    }

    pub fn callbacks(&self) -> &CB {
        &self.parser.callbacks().inner
    }

    pub fn callbacks_mut(&mut self) -> &mut CB {
        &mut self.parser.callbacks_mut().inner
    }
}

/// A screen put to sleep ([`Term::sleep`]): its rendering, the escape
/// sequences that draw it on a blank screen of its size (vt100's
/// `state_formatted`: every cell with its attributes, the cursor, the
/// input modes; the main screen first, and the switch to the alternate
/// one, if that was in use), a few KiB where the emulator holds 32 bytes
/// a cell (352 KiB at 220x50); and the output read since, not parsed yet.
/// What the rendering does not carry: a saved cursor (DECSC); the states
/// it would lose more of keep the screen awake (see [`Term::sleep`]). The
/// character sets in use are no part of the screen here: the cap, which
/// sleeps with it, follows them (`vt::charset`).
pub struct Asleep<CB> {
    /// Whether the alternate screen was in use (asked without waking).
    alternate: bool,
    rendering: Box<str>,
    callbacks: CB,
    pub(super) unparsed: Unparsed,
    size: Size,
    resets: u32,
    at_bottom: bool,
    budget: Budget,
    left: Option<Box<Left>>,
}

impl<CB> Asleep<CB> {
    /// Reads output without waking (see [`Term::skim`]): `None` if it all
    /// waits unparsed, or how much was taken before the screen must wake
    /// to parse (a sequence that must be parsed now, or a flood).
    pub(crate) fn skim(&mut self, bytes: &[u8]) -> Option<usize> {
        let n = self.unparsed.take(bytes);
        (n < bytes.len() || self.unparsed.wants_parser()).then_some(n)
    }

    pub(crate) fn callbacks_mut(&mut self) -> &mut CB {
        &mut self.callbacks
    }
    /// Whether the alternate screen was in use: a switch is always
    /// parsed at once (see `vt::skim`), so what waits unparsed cannot
    /// have changed it.
    pub(crate) fn alternate(&self) -> bool {
        self.alternate
    }
}

impl<CB> std::fmt::Debug for Asleep<CB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Asleep")
            .field("size", &self.size)
            .field("rendering", &self.rendering.len())
            .field("unparsed", &self.unparsed.bytes.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vt::cap::StringCap;
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

    /// What Claude Code does: a line typed at a shell, its full screen,
    /// then back to the main screen and a last line there.
    const AGENT_RUN: &[u8] = b"$ claude\r\n\x1b[?1049h\x1b[2J\x1b[H\x1b[1mWelcome\x1b[m\x1b[3;1H> the answer is 42\x1b[5;1H? for shortcuts\x1b[?1049lResume with: claude --resume 7\r\n$ ";

    #[test]
    fn the_screen_a_program_left_is_put_back_in_its_place() {
        let size = Size { cols: 40, rows: 6 };
        let lines = |t: &mut Term| -> Vec<String> {
            t.logical_lines().into_iter().map(|l| l.text).collect()
        };
        // Read whole, and byte by byte: the switch back is where it is.
        for chunks in [
            vec![AGENT_RUN.to_vec()],
            AGENT_RUN.iter().map(|b| vec![*b]).collect(),
        ] {
            let mut t: Term = Term::with_scrollback(size, 100);
            for c in &chunks {
                t.feed(c);
            }
            // Until it is written, a terminal's behaviour: the full
            // screen is gone.
            assert_eq!(
                lines(&mut t),
                ["$ claude", "Resume with: claude --resume 7", "$"]
            );
            t.write_left();
            assert_eq!(
                lines(&mut t),
                [
                    "$ claude",
                    "Welcome",
                    "",
                    "> the answer is 42",
                    "",
                    "? for shortcuts",
                    "Resume with: claude --resume 7",
                    "$",
                ]
            );
            // In its colours.
            t.scroll_back(usize::MAX);
            let bold = t.shown().cell(1, 0).is_some_and(vt100::Cell::bold);
            assert!(bold, "Welcome is bold: {:?}", t.shown().contents());
        }
        // Twice is once.
        let mut t: Term = Term::with_scrollback(size, 100);
        t.feed(AGENT_RUN);
        t.write_left();
        let before = lines(&mut t);
        t.write_left();
        assert_eq!(lines(&mut t), before);
        // Later output that scrolled its place off leaves it out.
        let mut t: Term = Term::with_scrollback(size, 100);
        t.feed(AGENT_RUN);
        t.feed(b"\r\n1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n");
        let before = lines(&mut t);
        t.write_left();
        assert_eq!(lines(&mut t), before);
    }

    /// `hm restart` of Claude Code run straight under hm: its main screen
    /// was empty when it took the alternate one, so the screen it left
    /// goes back from the top. Its bytes, fed after the old output (the
    /// restarted session's ring), put the resume line under the
    /// conversation once: they cleared from the top left, which the
    /// history takes for a whole-screen clear, and pushed the resume line
    /// above the banner first.
    #[test]
    fn the_screen_left_from_the_top_goes_back_above_what_followed_once() {
        let size = Size { cols: 40, rows: 6 };
        let run = &AGENT_RUN[b"$ claude\r\n".len()..];
        let mut t: Term = Term::with_scrollback(size, 100);
        t.feed(run);
        let left = t.take_left().expect("the screen it left");
        let mut again: Term = Term::with_scrollback(size, 100);
        again.feed(run);
        again.feed(&left);
        let lines: Vec<String> = again.logical_lines().into_iter().map(|l| l.text).collect();
        assert_eq!(
            lines,
            [
                "Welcome",
                "",
                "> the answer is 42",
                "",
                "? for shortcuts",
                "Resume with: claude --resume 7",
                "$",
            ]
        );
    }

    #[test]
    fn the_screen_left_reads_in_its_place_on_a_lazy_screen_asleep_or_not() {
        let size = Size { cols: 40, rows: 12 };
        let mut t: Term = Term::new(size);
        t.parse_lazily();
        t.allow_sleep();
        t.feed(AGENT_RUN);
        let want = "$ claude\nWelcome\n\n> the answer is 42\n\n? for shortcuts\nResume with: claude --resume 7\n$";
        let trimmed = |s: String| {
            s.lines()
                .map(str::trim_end)
                .collect::<Vec<_>>()
                .join("\n")
                .trim_end()
                .to_owned()
        };
        assert_eq!(trimmed(t.contents_with_left()), want);
        assert!(t.can_sleep());
        let t = Term::wake(t.sleep());
        assert_eq!(trimmed(t.contents_with_left()), want);
        // The screen itself is the terminal's: it never shows it.
        assert_eq!(
            trimmed(t.screen().contents()),
            "$ claude\nResume with: claude --resume 7\n$"
        );
        // Back on a full screen, that is what it shows.
        let mut t = t;
        t.feed(b"\x1b[?1049hagain");
        assert_eq!(trimmed(t.contents_with_left()), "again");
        // Once its place has scrolled off, it is history, not the screen's.
        let mut t: Term = Term::new(Size { cols: 40, rows: 3 });
        t.feed(AGENT_RUN);
        t.feed(b"\r\n1\r\n2\r\n3\r\n");
        assert_eq!(trimmed(t.contents_with_left()), "2\n3");
    }

    /// A box as ncurses draws it under TERM=xterm (G0) and TERM=screen (G1
    /// and the shifts), then a line of plain text.
    const G0_BOX: &[u8] =
        b"\x1b(0lqqk\x1b(B\r\n\x1b(0x\x1b(B  \x1b(0x\x1b(B\r\n\x1b(0mqqj\x1b(B\r\nlqk";
    const G1_BOX: &[u8] = b"\x1b)0\x0elqqk\x0f\r\n\x0ex\x0f  \x0ex\x0f\r\n\x0emqqj\x0f\r\nlqk";
    const BOX: &str = "┌──┐\n│  │\n└──┘\nlqk";

    #[test]
    fn a_box_drawn_in_dec_special_graphics_shows_as_lines() {
        for input in [G0_BOX, G1_BOX] {
            let mut t = Term::new(Size { cols: 20, rows: 5 });
            t.feed(input);
            assert_eq!(text(&t).trim_end(), BOX, "{input:?}");
        }
    }

    #[test]
    fn a_box_split_anywhere_between_reads_shows_the_same() {
        for input in [G0_BOX, G1_BOX] {
            for at in 0..=input.len() {
                let mut t = Term::new(Size { cols: 20, rows: 5 });
                t.feed(&input[..at]);
                t.feed(&input[at..]);
                assert_eq!(text(&t).trim_end(), BOX, "{input:?} cut at {at}");
            }
        }
    }

    #[test]
    fn a_reset_puts_ascii_back() {
        for reset in [&b"\x1bc"[..], b"\x1b[!p"] {
            for set in [&b"\x1b(0"[..], b"\x1b)0\x0e"] {
                let mut t = Term::new(Size { cols: 20, rows: 2 });
                t.feed(set);
                t.feed(reset);
                t.feed(b"lqk");
                assert_eq!(text(&t).trim_end(), "lqk", "{set:?} {reset:?}");
            }
        }
    }

    #[test]
    fn rows_in_the_history_keep_the_lines() {
        // A screen with a history draws runs of plain lines from the bytes
        // (see `vt::runs`): the same rows either way.
        for every_row in [false, true] {
            let mut t: Term = Term::with_scrollback(Size { cols: 20, rows: 3 }, 100);
            if every_row {
                t.draw_every_row();
            }
            t.feed(G1_BOX);
            t.feed(b"\r\n\x1b(0");
            for i in 0..10 {
                t.feed(format!("{i} q\r\n").as_bytes());
            }
            let history = t.history();
            assert_eq!(history[..4], ["┌──┐", "│  │", "└──┘", "lqk"]);
            assert_eq!(history[4], "0 ─", "drawn every row: {every_row}");
        }
    }

    #[test]
    fn a_lazy_screen_follows_the_set_through_a_flood_it_skips() {
        let size = Size { cols: 40, rows: 5 };
        let mut lazy: Term = Term::new(size);
        lazy.parse_lazily();
        let mut eager: Term = Term::new(size);
        let mut flood = b"\x1b)0\x0e".to_vec();
        for i in 0..20_000 {
            flood.extend_from_slice(format!("{i} 0123456789\r\n").as_bytes());
        }
        flood.extend_from_slice(b"lqk\x0flqk");
        for t in [&mut lazy, &mut eager] {
            for read in flood.chunks(4095) {
                t.skim(read);
            }
            t.settle();
        }
        assert!(lazy.parsed() < flood.len() as u64 / 20, "it skipped");
        assert_eq!(lazy.screen().contents(), eager.screen().contents());
        assert!(text(&lazy).ends_with("┌─┐lqk"), "{}", text(&lazy));
    }

    #[test]
    fn a_screen_asleep_keeps_the_set_in_use() {
        let size = Size { cols: 20, rows: 3 };
        let mut d: crate::vt::dozing::Dozing<()> = crate::vt::dozing::Dozing::new(Term::new(size));
        d.skim(b"\x1b)0\x0ex");
        assert!(d.sleep());
        d.skim(b"q");
        assert!(d.asleep());
        assert_eq!(d.term().screen().contents().trim_end(), "│─");
    }
}
