//! Copy mode: a session's history browsed with a cursor, searched and
//! copied, the same for both clients that show one: the dashboard draws it
//! in a pane, `hm attach` on the user's terminal. Neither is known here:
//! the history is read through [`History`], keys come as [`Key`]s, and
//! what the client must do comes back as an [`Outcome`]. Pure, and tested
//! with a plain list of lines.
//!
//! Rows are addressed by [`RowNo`], a number that stays with its row while
//! output arrives and the oldest rows are dropped, so a view left on old
//! output stays on it ([`crate::vt::history`] numbers them).
//!
//! A mode may only scroll (the mouse wheel or Shift-PgUp in the grid: keys
//! keep their meaning) or hold a cursor, which takes the keys: moving,
//! `/` and `?` to search, `v` to select, `y` to copy.
//!
//! Lines are the program's, not the screen's rows: a line the width cut
//! into rows (each row but its last wraps) is selected whole by `V`,
//! copied whole by `y`, joined again in any copy, and searched as one, so
//! a match may start on one row and end on the next.

mod mouse;
mod search;
mod text;

use search::{hits, line_of};
use text::{Class, class_at, cols, first_col, last_col, slice_cols};

/// A row's number: how many rows were kept before it, dropped ones
/// included.
pub type RowNo = u64;

/// What a history holds, and the size of the screen it ends with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    /// The oldest row still kept.
    pub first: RowNo,
    /// Rows kept: the history's and the screen's.
    pub rows_kept: usize,
    /// The screen's height: a view shows as many rows.
    pub rows: u16,
    pub cols: u16,
}

impl Extent {
    /// One past the newest row.
    pub fn end(&self) -> RowNo {
        self.first + self.rows_kept as u64
    }

    /// The top row of the live screen.
    pub fn live_top(&self) -> RowNo {
        self.end()
            .saturating_sub(u64::from(self.rows))
            .max(self.first)
    }

    /// Rows above the live screen.
    pub fn history(&self) -> usize {
        self.rows_kept.saturating_sub(usize::from(self.rows))
    }

    fn last(&self) -> RowNo {
        self.end().saturating_sub(1).max(self.first)
    }
}

/// One row of a history as text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Line {
    pub text: String,
    /// The row's text goes on in the next row (the width cut it).
    pub wrapped: bool,
}

/// Where copy mode reads a history.
pub trait History {
    fn extent(&self) -> Extent;
    /// Rows `from..to` (clamped to what is kept), oldest first.
    fn lines(&mut self, from: RowNo, to: RowNo) -> Vec<Line>;
}

/// A cell of the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    pub row: RowNo,
    pub col: u16,
}

/// A key as copy mode reads it, whichever client read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Char(char),
    /// A control key: `Ctrl('u')`.
    Ctrl(char),
    Up,
    Down,
    Left,
    Right,
    PageUp,
    PageDown,
    Home,
    End,
    Enter,
    Esc,
    Backspace,
}

/// What the client does after a key or a scroll.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Stay,
    /// Back to the live screen: copy mode is over.
    Leave,
    /// Copy `text` (it has `lines` lines) to the clipboard, then leave.
    Copied {
        text: String,
        lines: usize,
    },
}

/// The most text copied at once. Terminals cap what they take through
/// OSC 52 (some at 100 kB, some at a few MB), and a larger copy is not what
/// a person selecting with a cursor meant.
pub const MAX_COPY: usize = 1 << 20;

/// A search being typed after `/` or `?`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Prompt {
    backwards: bool,
    text: String,
}

/// Copy mode on one history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyMode {
    /// The row at the top of the view.
    top: RowNo,
    /// The cursor, when the mode takes the keys.
    cursor: Option<Pos>,
    /// Where the selection started (`v`, or `V` for whole lines).
    anchor: Option<Pos>,
    whole_lines: bool,
    /// With `V`, the first and last row of the lines the selection
    /// covers (a line the width cut into rows is selected whole).
    span: Option<(RowNo, RowNo)>,
    prompt: Option<Prompt>,
    /// The last search, for `n` and `N`.
    search: Option<Prompt>,
    /// What the last key came to (`not found`), until the next key.
    note: Option<String>,
    /// Entered by scrolling: scrolled down to the live screen again, with
    /// nothing selected, it ends, as a terminal's own scrollback does.
    ends_at_bottom: bool,
    /// The top row of the live screen when it was entered: scrolled down
    /// to there, it ends too. A pane whose program prints on moves the
    /// live screen a row a line, and Shift-PgDn after Shift-PgUp stopped
    /// short of it, the view held there while the program went on.
    entered_top: RowNo,
}

impl CopyMode {
    /// Copy mode on the live screen. With `cursor` (a cell of the screen)
    /// it takes the keys; `ends_at_bottom`: it ends when scrolled back
    /// down to the live screen.
    pub fn new(ext: Extent, cursor: Option<(u16, u16)>, ends_at_bottom: bool) -> CopyMode {
        let top = ext.live_top();
        let mut m = CopyMode {
            top,
            cursor: cursor.map(|(r, c)| Pos {
                row: top + u64::from(r),
                col: c,
            }),
            anchor: None,
            whole_lines: false,
            span: None,
            prompt: None,
            search: None,
            note: None,
            ends_at_bottom,
            entered_top: top,
        };
        m.clamp(ext);
        m
    }

    /// Whether the keys are the mode's (it has a cursor).
    pub fn takes_keys(&self) -> bool {
        self.cursor.is_some()
    }

    /// Gives a mode that only scrolls a cursor, on the bottom row of its
    /// view; it no longer ends by scrolling down.
    pub fn take_keys(&mut self, ext: Extent) {
        if self.cursor.is_none() {
            let row = (self.top + u64::from(ext.rows) - 1).min(ext.last());
            self.cursor = Some(Pos { row, col: 0 });
        }
        self.ends_at_bottom = false;
        self.clamp(ext);
    }

    /// How many rows above the live screen the view is.
    pub fn back(&self, ext: Extent) -> usize {
        let top = self.top.clamp(ext.first, ext.live_top());
        (ext.live_top() - top) as usize
    }

    /// The cursor's cell in the view, when it is in it.
    pub fn cursor_cell(&self, ext: Extent) -> Option<(u16, u16)> {
        let c = self.cursor?;
        let row = c.row.checked_sub(self.top)?;
        (row < u64::from(ext.rows)).then_some((row as u16, c.col))
    }

    /// The selected columns of the view's `row` (inclusive), if any.
    pub fn selected_in_row(&self, ext: Extent, row: u16) -> Option<(u16, u16)> {
        let (start, end) = self.selection()?;
        let at = self.top + u64::from(row);
        if at < start.row || at > end.row {
            return None;
        }
        let last = ext.cols.saturating_sub(1);
        let from = if at == start.row { start.col } else { 0 };
        let to = if at == end.row { end.col } else { last };
        Some((from.min(last), to.min(last)))
    }

    /// Where the view is, as tmux shows it: `[+120/2000]` is 120 rows up
    /// a history of 2000.
    pub fn marker(&self, ext: Extent) -> String {
        format!("[+{}/{}]", self.back(ext), ext.history())
    }

    /// The search being typed (`/text`), or what the last key came to.
    pub fn status(&self) -> Option<String> {
        if let Some(p) = &self.prompt {
            return Some(format!("{}{}", if p.backwards { '?' } else { '/' }, p.text));
        }
        self.note.clone()
    }

    /// Whether a search is being typed: every key is its text.
    pub fn prompting(&self) -> bool {
        self.prompt.is_some()
    }

    /// Keeps the view, the cursor and the selection on rows that are
    /// kept, after output or a resize. A mode that only scrolled and is
    /// back on the live screen (the history was cleared) is over.
    pub fn clamp(&mut self, ext: Extent) -> Outcome {
        self.top = self.top.clamp(ext.first, ext.live_top());
        let fit = |p: &mut Pos| {
            p.row = p.row.clamp(ext.first, ext.last());
            p.col = p.col.min(ext.cols.saturating_sub(1));
        };
        if let Some(c) = &mut self.cursor {
            fit(c);
        }
        if let Some(a) = &mut self.anchor {
            fit(a);
        }
        self.keep_cursor_in_view(ext);
        if self.ends_at_bottom && self.cursor.is_none() && self.top == ext.live_top() {
            Outcome::Leave
        } else {
            Outcome::Stay
        }
    }

    /// Scrolls the view `by` rows (up when negative), the cursor kept in
    /// it (the wheel, Shift-PgUp/PgDn).
    pub fn scroll(&mut self, ext: Extent, by: i64) -> Outcome {
        self.top = self
            .top
            .saturating_add_signed(by)
            .clamp(ext.first, ext.live_top());
        if let Some(c) = &mut self.cursor {
            let bottom = self.top + u64::from(ext.rows) - 1;
            c.row = c.row.clamp(self.top, bottom.min(ext.last()));
        }
        let idle = self.anchor.is_none() && self.prompt.is_none();
        let back = self.top == ext.live_top() || (by > 0 && self.top >= self.entered_top);
        if self.ends_at_bottom && idle && back {
            return Outcome::Leave;
        }
        Outcome::Stay
    }

    /// A key, when the mode takes the keys.
    pub fn key<H: History + ?Sized>(&mut self, hist: &mut H, key: Key) -> Outcome {
        let ext = hist.extent();
        self.clamp(ext);
        self.note = None;
        if self.prompt.is_some() {
            self.prompt_key(hist, key);
            return Outcome::Stay;
        }
        let Some(cur) = self.cursor else {
            return Outcome::Stay;
        };
        // Using the cursor is copying: scrolling down no longer ends it.
        self.ends_at_bottom = false;
        let rows = i64::from(ext.rows.max(1));
        let line = |hist: &mut H, row: RowNo| {
            hist.lines(row, row + 1)
                .pop()
                .map(|l| l.text)
                .unwrap_or_default()
        };
        let mut to = cur;
        match key {
            Key::Char('q') => return Outcome::Leave,
            Key::Esc if self.anchor.is_some() => self.anchor = None,
            Key::Esc | Key::Ctrl('c') => return Outcome::Leave,
            Key::Char('h') | Key::Left | Key::Backspace => to.col = cur.col.saturating_sub(1),
            Key::Char('l') | Key::Right => to.col = (cur.col + 1).min(ext.cols.saturating_sub(1)),
            Key::Char('k') | Key::Up => to.row = cur.row.saturating_sub(1),
            Key::Char('j') | Key::Down => to.row = cur.row + 1,
            Key::Char('0') | Key::Home => to.col = 0,
            Key::Char('^') => to.col = first_col(&line(hist, cur.row)),
            Key::Char('$') | Key::End => to.col = last_col(&line(hist, cur.row)),
            Key::Char('w') => to = self.word(hist, ext, cur, Motion::NextStart),
            Key::Char('b') => to = self.word(hist, ext, cur, Motion::Start),
            Key::Char('e') => to = self.word(hist, ext, cur, Motion::End),
            Key::Char('g') => {
                to = Pos {
                    row: ext.first,
                    col: 0,
                }
            }
            Key::Char('G') => {
                to = Pos {
                    row: ext.last(),
                    col: 0,
                }
            }
            Key::Char('H') => to.row = self.top,
            Key::Char('M') => to.row = self.top + (rows as u64 - 1) / 2,
            Key::Char('L') => to.row = self.top + rows as u64 - 1,
            Key::PageUp | Key::Ctrl('b') => return self.page(ext, -rows),
            Key::PageDown | Key::Ctrl('f') => return self.page(ext, rows),
            Key::Ctrl('u') => return self.page(ext, -(rows / 2).max(1)),
            Key::Ctrl('d') => return self.page(ext, (rows / 2).max(1)),
            Key::Char(c @ ('/' | '?')) => {
                self.prompt = Some(Prompt {
                    backwards: c == '?',
                    text: String::new(),
                });
            }
            Key::Char('n') => self.repeat(hist, false),
            Key::Char('N') => self.repeat(hist, true),
            Key::Char(c @ ('v' | ' ' | 'V')) => {
                let lines = c == 'V';
                if self.anchor.is_some() && self.whole_lines == lines {
                    self.anchor = None;
                } else {
                    self.anchor = Some(cur);
                    self.whole_lines = lines;
                }
            }
            Key::Char('y') | Key::Enter => return self.copy(hist),
            _ => {}
        }
        if to != cur {
            self.cursor = Some(to);
            self.clamp(ext);
        }
        self.span = self.whole_span(hist);
        Outcome::Stay
    }

    /// The rows of the whole lines a `V` selection covers.
    fn whole_span<H: History + ?Sized>(&self, hist: &mut H) -> Option<(RowNo, RowNo)> {
        if !self.whole_lines {
            return None;
        }
        let (a, c) = (self.anchor?, self.cursor?);
        let (top, bottom) = (a.row.min(c.row), a.row.max(c.row));
        Some((line_of(hist, top).0, line_of(hist, bottom).1))
    }

    /// Moves the view and the cursor a page (or half) together.
    fn page(&mut self, ext: Extent, by: i64) -> Outcome {
        if let Some(c) = &mut self.cursor {
            c.row = c.row.saturating_add_signed(by).clamp(ext.first, ext.last());
        }
        self.top = self
            .top
            .saturating_add_signed(by)
            .clamp(ext.first, ext.live_top());
        self.clamp(ext);
        Outcome::Stay
    }

    /// Scrolls the view as little as shows the cursor.
    fn keep_cursor_in_view(&mut self, ext: Extent) {
        let Some(c) = self.cursor else { return };
        let rows = u64::from(ext.rows.max(1));
        if c.row < self.top {
            self.top = c.row;
        } else if c.row >= self.top + rows {
            self.top = c.row + 1 - rows;
        }
        self.top = self.top.clamp(ext.first, ext.live_top());
    }

    /// Where a word motion goes from `at`, across rows: the start of the
    /// next word (`w`), of this or the previous one (`b`), or the end of
    /// this or the next one (`e`).
    fn word<H: History + ?Sized>(&self, hist: &mut H, ext: Extent, at: Pos, motion: Motion) -> Pos {
        let forward = motion != Motion::Start;
        // A few screens at most: a long run of blank rows ends the search.
        let span = u64::from(ext.rows.max(1)) * 4;
        let (from, to) = if forward {
            (at.row, (at.row + span).min(ext.end()))
        } else {
            (at.row.saturating_sub(span).max(ext.first), at.row + 1)
        };
        let lines = hist.lines(from, to);
        // Every cell that starts a word (`w`, `b`) or ends one (`e`), in
        // order.
        let mut marks: Vec<Pos> = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            let row = from + i as u64;
            let mut prev: Option<(u16, Class)> = None;
            for (col, c) in cols(&l.text) {
                let class = class_at(c);
                let changed = prev.is_none_or(|(_, p)| p != class);
                match (motion, prev) {
                    (Motion::End, Some((end, p))) if changed && p != Class::Blank => {
                        marks.push(Pos { row, col: end });
                    }
                    (Motion::Start | Motion::NextStart, _) if changed && class != Class::Blank => {
                        marks.push(Pos { row, col });
                    }
                    _ => {}
                }
                prev = Some((col, class));
            }
            if let (Motion::End, Some((end, p))) = (motion, prev)
                && p != Class::Blank
            {
                marks.push(Pos { row, col: end });
            }
        }
        let found = if forward {
            marks.into_iter().find(|p| *p > at)
        } else {
            marks.into_iter().rev().find(|p| *p < at)
        };
        found.unwrap_or(at)
    }

    fn prompt_key<H: History + ?Sized>(&mut self, hist: &mut H, key: Key) {
        let Some(p) = &mut self.prompt else { return };
        match key {
            Key::Char(c) => p.text.push(c),
            Key::Backspace if p.text.is_empty() => self.prompt = None,
            Key::Backspace => {
                p.text.pop();
            }
            Key::Ctrl('u') => p.text.clear(),
            Key::Esc | Key::Ctrl('c') => self.prompt = None,
            Key::Enter => {
                let p = self.prompt.take().filter(|p| !p.text.is_empty());
                if let Some(p) = p {
                    self.search = Some(p.clone());
                    self.find(hist, &p.text, p.backwards);
                }
            }
            _ => {}
        }
    }

    /// `n` (the same way as the search) and `N` (the other way).
    fn repeat<H: History + ?Sized>(&mut self, hist: &mut H, reverse: bool) {
        match self.search.clone() {
            Some(s) => self.find(hist, &s.text, s.backwards != reverse),
            None => self.note = Some("no search yet: / or ? starts one".into()),
        }
    }

    /// Puts the cursor on the next match of `pattern` after it (before it,
    /// `backwards`), round the end of the history if need be. A pattern
    /// without capitals matches either case. Lines are searched whole: a
    /// match may go on past the end of a row the width cut.
    fn find<H: History + ?Sized>(&mut self, hist: &mut H, pattern: &str, backwards: bool) {
        let ext = hist.extent();
        let Some(at) = self.cursor else { return };
        let hits = hits(hist, ext, pattern);
        let found = if backwards {
            hits.iter().rev().find(|p| **p < at).map(|p| (*p, false))
        } else {
            hits.iter().find(|p| **p > at).map(|p| (*p, false))
        };
        // Round the end; the only match may be the cursor's own, and that
        // is where it stays.
        let found = found.or_else(|| {
            let round = if backwards { hits.last() } else { hits.first() };
            round.map(|p| (*p, true))
        });
        let Some((pos, wrapped)) = found else {
            self.note = Some(format!("not found: {pattern}"));
            return;
        };
        self.cursor = Some(pos);
        // A match out of view is shown in the middle of it.
        let rows = u64::from(ext.rows.max(1));
        if pos.row < self.top || pos.row >= self.top + rows {
            self.top = pos.row.saturating_sub(rows / 2);
        }
        self.clamp(ext);
        if wrapped {
            self.note = Some(if backwards {
                "search hit the top, went on from the bottom".into()
            } else {
                "search hit the bottom, went on from the top".into()
            });
        }
    }

    /// The selection's two ends in order, whole lines widened to the
    /// rows of the lines they are part of.
    fn selection(&self) -> Option<(Pos, Pos)> {
        let (a, c) = (self.anchor?, self.cursor?);
        let (mut start, mut end) = if a <= c { (a, c) } else { (c, a) };
        if self.whole_lines {
            if let Some((top, bottom)) = self.span {
                start.row = top.min(start.row);
                end.row = bottom.max(end.row);
            }
            start.col = 0;
            end.col = u16::MAX;
        }
        Some((start, end))
    }

    /// The selection as text (or the cursor's line, whole, when nothing
    /// is selected): rows that wrap are joined, trailing blanks dropped.
    fn copy<H: History + ?Sized>(&self, hist: &mut H) -> Outcome {
        let Some(cur) = self.cursor else {
            return Outcome::Leave;
        };
        let selection = self.selection().or_else(|| {
            let (top, bottom) = line_of(hist, cur.row);
            Some((
                Pos { row: top, col: 0 },
                Pos {
                    row: bottom,
                    col: u16::MAX,
                },
            ))
        });
        let Some((start, end)) = selection else {
            return Outcome::Leave;
        };
        let rows = hist.lines(start.row, end.row + 1);
        let mut text = String::new();
        let last = rows.len().saturating_sub(1);
        for (i, row) in rows.iter().enumerate() {
            let from = if i == 0 { start.col } else { 0 };
            let to = if i == last { end.col } else { u16::MAX };
            let part = slice_cols(&row.text, from, to);
            if i < last && row.wrapped {
                text.push_str(&part);
            } else {
                text.push_str(part.trim_end());
                if i < last {
                    text.push('\n');
                }
            }
            if text.len() > MAX_COPY {
                break;
            }
        }
        if text.len() > MAX_COPY {
            let mut cut = MAX_COPY;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        let lines = text.lines().count().max(1);
        Outcome::Copied { text, lines }
    }
}

/// The OSC 52 sequence that asks the user's terminal to put `text` on
/// the system clipboard (`c`), as tmux and editors do; a terminal that
/// does not allow it ignores it.
pub fn osc52(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    let mut out = Vec::with_capacity(b64.len() + 8);
    out.extend_from_slice(b"\x1b]52;c;");
    out.extend_from_slice(b64.as_bytes());
    out.push(0x07);
    out
}

/// A word motion of copy mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Motion {
    /// `w`: the start of the next word.
    NextStart,
    /// `b`: the start of this word, or of the previous one.
    Start,
    /// `e`: the end of this word, or of the next one.
    End,
}

#[cfg(test)]
mod tests;
