//! What of a burst of output a screen that parses lazily must draw.
//!
//! A supervisor's screen is read only now and then (a settle, a query it
//! answers, INFO or SCREEN), while a flood can bring megabytes between two
//! reads. Parsing all of it costs about 13 ms per MiB; most of it scrolls
//! off the top before anyone could see it. [`Skim`] watches the output as
//! [`StringCap`](super::cap::StringCap) reads it, through the one tokenizer,
//! and finds a *junction*: a point after which the bytes alone decide the
//! screen, so that everything before it can be left unparsed but for the
//! state it sets.
//!
//! Why a junction is exact. While nothing can move the cursor up (the
//! output is text, line feeds, carriage returns, erasing within a line,
//! colours and modes: [`Effect::None`] and [`Effect::State`] below), every
//! line feed moves the cursor one row down or scrolls the screen, so after
//! `rows - 1` of them the cursor is on the bottom row, wherever it was.
//! If the scroll region is the whole screen and origin mode is off
//! (`Unrendered::scrolls_whole`), a carriage return there puts it at
//! (bottom, 0): a known place. After `rows` more line feeds, each of which
//! scrolls the whole screen, every row that was on the screen at the
//! carriage return has scrolled off, and every row on it was drawn by the
//! bytes after the return, from the known cursor. What the skipped bytes
//! left besides rows and the cursor is kept: the sequences that set state
//! are parsed (in order, onto the doomed screen), and so is the last
//! character drawn, which REP repeats. Anything that could break the
//! argument moves the next junction past it ([`Effect::Moves`]), or is
//! parsed at once ([`Effect::Now`]): terminal queries and everything else
//! the screen's callbacks report (titles, bells, notifications: they must
//! be seen when they come), screen switches (the main screen behind must
//! be exact) and the saved cursor.
//!
//! `tests/vt_lazy.rs` holds lazy parsing to eager parsing on random
//! output, screen for screen and query answer for query answer.

use std::collections::VecDeque;
use std::ops::Range;

use unicode_width::UnicodeWidthChar;

use super::cap::{Csi, StringCap, Unrendered, Watcher};
use super::tokenizer::{Ended, Kind, Seq, Step};
use crate::protocol::Size;

/// Output held unparsed before a screen that skims parses what it must
/// anyway: a few screens of a flood, however long it runs.
pub const BOUND: usize = 64 * 1024;

/// A junction: a carriage return on the bottom row.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Junction {
    /// Its place in the unparsed output.
    pub at: usize,
    /// Line feeds before it.
    lfs: u64,
    /// The last character that set vt100's `last_char` before it.
    pub setter: Option<char>,
}

/// A sequence that sets state, where it is in the unparsed output.
#[derive(Debug, Clone)]
struct Setting {
    at: Range<usize>,
    /// For SGR: whether it sets the colours from scratch.
    colours: Option<bool>,
}

/// What a sequence does to the screen, as far as skimming is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    /// Draws within the cursor's row, moves the cursor along it or down,
    /// or nothing at all.
    None,
    /// Sets state that outlives the rows (modes, cursor style): parsed
    /// even when skipped.
    State,
    /// SGR: sets the colours in effect, from scratch if `resets` (its
    /// first parameter is 0 or missing), so that earlier ones need not be
    /// parsed.
    Colours { resets: bool },
    /// May move the cursor up or keep rows on the screen.
    Moves,
    /// Sets state and may move the cursor (DECSTBM, origin mode).
    StateMoves,
    /// Must be parsed where it stands, now.
    Now,
}

/// Finds junctions in output as it is read (see the module's comment).
/// Positions are offsets into the output read and not yet parsed.
#[derive(Debug, Clone)]
pub(crate) struct Skim {
    rows: u16,
    cols: u16,
    /// Line feeds since the cursor could last have moved up: at `rows - 1`
    /// it is on the bottom row.
    down: u32,
    /// Line feeds read: the clock junctions are confirmed by.
    lfs: u64,
    /// Carriage returns on the bottom row not yet followed by a screen of
    /// line feeds, oldest first, the last of each line.
    pending: VecDeque<Junction>,
    /// The latest one that was: everything before it may be skipped.
    pub best: Option<Junction>,
    /// Where the text being read began.
    text_from: Option<usize>,
    /// The last character read that sets vt100's `last_char`.
    setter: Option<char>,
    /// Sequences that set state, where they are.
    states: Vec<Setting>,
    /// Where the sequence being read began.
    seq_from: usize,
    /// The last sequence read, if half of a clear: which half, and where.
    last_part: Option<(ClearPart, usize, usize)>,
    /// Output before this must be parsed before anything is skipped: the
    /// parser was left inside a sequence, and this is where it ends.
    pub floor: usize,
    /// The parser was left inside a sequence; `floor` is set once out.
    inside: bool,
    /// Something was read that must be parsed now.
    now: bool,
}

impl Skim {
    pub(crate) fn new(size: Size) -> Skim {
        Skim {
            rows: size.rows.max(1),
            cols: size.cols.max(1),
            down: 0,
            lfs: 0,
            pending: VecDeque::new(),
            best: None,
            text_from: None,
            setter: None,
            states: Vec::new(),
            seq_from: 0,
            last_part: None,
            floor: 0,
            inside: false,
            now: false,
        }
    }

    /// Everything up to here was parsed, the parser's cursor is on `row`,
    /// and it is `inside` a sequence or not; `kept`: bytes still unparsed
    /// at the front (half a character).
    pub(crate) fn parsed(&mut self, size: Size, row: u16, inside: bool, kept: usize) {
        let setter = self.setter;
        // Half a character kept is text, at the front.
        let text = (kept > 0).then_some(0);
        *self = Skim::new(size);
        self.down = u32::from(row);
        self.inside = inside;
        self.setter = setter;
        self.text_from = text;
    }

    /// The output before `n` was skipped or parsed: positions move down.
    pub(crate) fn drained(&mut self, n: usize) {
        for j in &mut self.pending {
            j.at -= n;
        }
        self.states.retain(|s| s.at.start >= n);
        for s in &mut self.states {
            s.at = s.at.start - n..s.at.end - n;
        }
        self.text_from = self.text_from.map(|t| t.saturating_sub(n));
        self.seq_from = self.seq_from.saturating_sub(n);
        self.last_part = None;
        self.floor = self.floor.saturating_sub(n);
    }

    /// The sequences before `at` whose state must be parsed when what is
    /// before `at` is skipped, in order: colours only from the last that
    /// set them from scratch.
    pub(crate) fn settings_before(&self, at: usize) -> Vec<Range<usize>> {
        let before = self.states.partition_point(|s| s.at.end <= at);
        let fresh = self.states[..before]
            .iter()
            .rposition(|s| s.colours == Some(true))
            .unwrap_or(0);
        self.states[..before]
            .iter()
            .enumerate()
            .filter(|(i, s)| s.colours.is_none() || *i >= fresh)
            .map(|(_, s)| s.at.clone())
            .collect()
    }

    /// The parser's last character drawn is `c` (it was woken from a
    /// rendering, see [`last_drawn`]).
    pub(crate) fn drawn_last(&mut self, c: Option<char>) {
        self.setter = c;
    }

    /// Whether something read must be parsed before reading on.
    pub(crate) fn wants_parser(&self) -> bool {
        self.now
    }

    /// The reader is in ground state at `at`.
    pub(super) fn ground(&mut self, at: usize) {
        if std::mem::take(&mut self.inside) {
            self.floor = at;
        }
    }

    /// Text begins at `at` (or goes on).
    pub(super) fn text(&mut self, at: usize) {
        self.text_from.get_or_insert(at);
    }

    /// The text read so far ends where `out` does.
    pub(crate) fn end_text(&mut self, out: &[u8]) {
        if let Some(from) = self.text_from.take()
            && let Some(c) = last_setter(&out[from.min(out.len())..], self.cols)
        {
            self.setter = Some(c);
        }
    }

    /// A control in ground state, the last byte of `out`.
    pub(super) fn control(&mut self, b: u8, out: &[u8], state: &Unrendered) {
        let at = out.len() - 1;
        self.end_text(&out[..at]);
        match b {
            // vt100 takes VT and FF for line feeds.
            0x0a..=0x0c => self.line_feed(),
            0x0d => self.carriage_return(at, state),
            0x07 => self.now = true,
            _ => {}
        }
    }

    fn line_feed(&mut self) {
        self.lfs += 1;
        self.down = self.down.saturating_add(1);
        let rows = u64::from(self.rows);
        while let Some(j) = self.pending.front()
            && self.lfs - j.lfs >= rows
        {
            self.best = self.pending.pop_front();
        }
    }

    fn carriage_return(&mut self, at: usize, state: &Unrendered) {
        if self.down + 1 < u32::from(self.rows) || !state.scrolls_whole(self.rows) {
            return;
        }
        let j = Junction {
            at,
            lfs: self.lfs,
            setter: self.setter,
        };
        match self.pending.back_mut() {
            Some(last) if last.lfs == self.lfs => *last = j,
            _ => self.pending.push_back(j),
        }
    }

    /// A byte of a sequence was read: `step`, with `seq` as the tokenizer
    /// has it, `b` the byte, `at` where it went in the output and `end`
    /// where the output ends now.
    pub(super) fn step(&mut self, step: Step, seq: &Seq<'_>, b: u8, at: usize, end: usize) {
        let effect = match step {
            // A string ended by the ESC that begins the next sequence.
            Step::Open(ended) => {
                let effect = match ended {
                    Some(Ended::Acted) if seq.kind == Kind::Osc => Effect::Now,
                    _ => Effect::None,
                };
                self.seq_from = at;
                effect
            }
            // BEL is executed inside a sequence too.
            Step::Control if b == 0x07 => Effect::Now,
            Step::End(Ended::Acted) => {
                if seq.kind == Kind::Esc && seq.collected == b"c" {
                    // RIS forgets the last character too.
                    self.setter = None;
                }
                self.clearing(seq, b, end);
                effect(seq, b)
            }
            Step::Cancel(Ended::Acted) if seq.kind == Kind::Osc => Effect::Now,
            _ => Effect::None,
        };
        match effect {
            Effect::None => {}
            Effect::Now => self.now = true,
            Effect::Moves => self.moved(),
            Effect::State | Effect::Colours { .. } | Effect::StateMoves => {
                // A sequence the parser is already inside is parsed whole
                // (it is before the floor).
                if !self.inside {
                    self.states.push(Setting {
                        at: self.seq_from..end,
                        colours: match effect {
                            Effect::Colours { resets } => Some(resets),
                            _ => None,
                        },
                    });
                }
                if effect == Effect::StateMoves {
                    self.moved();
                }
            }
        }
    }

    /// A screen cleared and the cursor placed, by two sequences side by
    /// side (`CSI H CSI 2 J`, as `clear` and full-screen programs redraw,
    /// or the other way round), is a junction of its own: what was on the
    /// screen, and where the cursor was, no longer matter. The pair is
    /// parsed; what came before is skipped but for its state.
    fn clearing(&mut self, seq: &Seq<'_>, fin: u8, end: usize) {
        let part = clear_part(seq, fin);
        let pair = match (part, self.last_part) {
            (Some(a), Some((b, from, to))) if a != b && to == self.seq_from && !self.inside => {
                Some(from)
            }
            _ => None,
        };
        // A sequence begun before the parser last stopped is no junction.
        self.last_part = part
            .filter(|_| !self.inside)
            .map(|p| (p, self.seq_from, end));
        if let Some(at) = pair {
            self.best = Some(Junction {
                at,
                lfs: self.lfs,
                setter: self.setter,
            });
            self.pending.clear();
        }
    }

    /// The cursor may have moved up: lines are counted afresh.
    fn moved(&mut self) {
        self.down = 0;
        self.pending.clear();
    }
}

/// Half of a clear (see `Skim::clearing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClearPart {
    /// CUP or HVP: the cursor placed.
    Place,
    /// ED 2 (or DECSED 2): every cell erased.
    Erase,
}

fn clear_part(seq: &Seq<'_>, fin: u8) -> Option<ClearPart> {
    let (body, _) = seq.csi()?;
    let csi = Csi::read(body);
    if !csi.intermediates.is_empty() {
        return None;
    }
    match (csi.private, fin) {
        (None, b'H' | b'f') => Some(ClearPart::Place),
        (None | Some(b'?'), b'J') if csi.values().next() == Some(Some(2)) => Some(ClearPart::Erase),
        _ => None,
    }
}

/// What a sequence that ended with `fin` does, as vt100 0.18 dispatches it.
fn effect(seq: &Seq<'_>, fin: u8) -> Effect {
    match seq.kind {
        // Titles, notifications, status records: reported, so parsed now.
        Kind::Osc => Effect::Now,
        // vt100 does nothing with these.
        Kind::Dcs | Kind::Sos | Kind::Pm | Kind::Apc => Effect::None,
        Kind::Esc => match seq.collected {
            // DECSC, DECRC and RIS.
            b"7" | b"8" | b"c" => Effect::Now,
            // Keypad modes.
            b"=" | b">" => Effect::State,
            // RI: up, or scrolls down.
            b"M" => Effect::Moves,
            _ => Effect::None,
        },
        Kind::Csi => csi_effect(seq, fin),
    }
}

fn csi_effect(seq: &Seq<'_>, fin: u8) -> Effect {
    // Queries (device attributes, status, cursor position).
    if matches!(fin, b'c' | b'n') {
        return Effect::Now;
    }
    let Some((body, _)) = seq.csi() else {
        // Too long to read whole: its final byte is all that is known.
        return match fin {
            b'h' | b'l' => Effect::Now,
            _ => Effect::StateMoves,
        };
    };
    let csi = Csi::read(body);
    match (csi.private, csi.intermediates.first(), fin) {
        (None, None, b'm') => Effect::Colours {
            resets: matches!(csi.values().next(), None | Some(Some(0))),
        },
        (None, None, b'r') => Effect::StateMoves,
        // CUU, CPL, CUP, HVP, VPA, IL, DL, SD.
        (None, None, b'A' | b'F' | b'H' | b'f' | b'd' | b'L' | b'M' | b'T') => Effect::Moves,
        (Some(b'?'), _, b'h' | b'l') => {
            if csi.too_many()
                || csi
                    .values()
                    .any(|v| matches!(v, Some(47 | 1047 | 1048 | 1049)))
            {
                Effect::Now
            } else if csi.values().any(|v| v == Some(6)) {
                Effect::StateMoves
            } else {
                Effect::State
            }
        }
        // DECSCUSR: the cursor's shape.
        (None, Some(b' '), b'q') => Effect::State,
        _ => Effect::None,
    }
}

/// The character vt100 remembers as the last drawn (REP repeats it) once
/// it has parsed `bytes` on a screen of `size`, if they draw one: read as
/// a skimming screen reads, so that a screen woken from its rendering
/// knows what the rendering left.
pub(crate) fn last_drawn(bytes: &[u8], size: Size) -> Option<char> {
    let mut cap = StringCap::default();
    let mut skim = Skim::new(size);
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let n = cap.skim(rest, &mut out, &mut skim);
        rest = &rest[n..];
        skim.now = false;
    }
    skim.end_text(&out);
    skim.setter
}

/// The last character of `text` after which vt100's `last_char` is that
/// character: one it draws in a cell of its own (not a control, U+FFFD, a
/// C1 character, a zero-width one, or one wider than the screen).
fn last_setter(text: &[u8], cols: u16) -> Option<char> {
    if let Some(&b) = text.last()
        && (0x20..0x7f).contains(&b)
    {
        return Some(char::from(b));
    }
    let text = std::str::from_utf8(text).ok()?;
    text.chars().rev().find(|&c| sets_last_char(c, cols))
}

/// Whether vt100 0.18 remembers `c` as the last character drawn (its
/// `print` and `calculate_width`, with the same unicode-width).
pub(crate) fn sets_last_char(c: char, cols: u16) -> bool {
    if c == '\u{fffd}' || ('\u{80}'..'\u{a0}').contains(&c) {
        return false;
    }
    match c.width() {
        None => u32::from(c) >= 256,
        Some(0) => false,
        Some(w) => w.min(2) <= usize::from(cols),
    }
}

/// Output read but not parsed yet, and what was read of it.
#[derive(Debug)]
pub(crate) struct Unparsed {
    pub cap: StringCap,
    /// The bytes, as the parser is to get them.
    pub bytes: Vec<u8>,
    /// Where rows may be skipped; `None` for a screen that parses every
    /// byte (one that keeps a history).
    pub skim: Option<Skim>,
    /// The bytes begin at a junction: the parser's cursor goes to the
    /// bottom row before them.
    pub at_junction: bool,
}

impl Unparsed {
    pub(crate) fn new(cap: StringCap) -> Unparsed {
        Unparsed {
            cap,
            bytes: Vec::new(),
            skim: None,
            at_junction: false,
        }
    }

    /// Reads `input` for the parser: everything, or as far as a sequence
    /// that must be parsed now (see [`Unparsed::wants_parser`]).
    pub(crate) fn take(&mut self, input: &[u8]) -> usize {
        match &mut self.skim {
            Some(skim) => self.cap.skim(input, &mut self.bytes, skim),
            None => {
                self.cap.filter(input, &mut self.bytes);
                input.len()
            }
        }
    }

    /// Whether the parser must run before more is read: a sequence that
    /// must be parsed now was read, or a flood is past [`BOUND`].
    pub(crate) fn wants_parser(&self) -> bool {
        self.skim.as_ref().is_some_and(Skim::wants_parser) || self.bytes.len() > BOUND
    }
}

/// The cap tells the skim what each byte is.
impl Watcher for Skim {
    fn wants_parser(&self) -> bool {
        Skim::wants_parser(self)
    }
    fn ground(&mut self, at: usize) {
        Skim::ground(self, at);
    }
    fn text(&mut self, at: usize) {
        Skim::text(self, at);
    }
    fn end_text(&mut self, out: &[u8]) {
        Skim::end_text(self, out);
    }
    fn control(&mut self, b: u8, out: &[u8], state: &Unrendered) {
        Skim::control(self, b, out, state);
    }
    fn step(&mut self, step: Step, seq: &Seq<'_>, b: u8, at: usize, end: usize) {
        Skim::step(self, step, seq, b, at, end);
    }
}
