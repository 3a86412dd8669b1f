//! A screen's history: the rows that scrolled off the top of its main
//! screen, kept as they left it and numbered so that a row keeps its
//! number while more output arrives and the oldest rows are dropped; read
//! as text, and shown scrolled back.
//!
//! The rows themselves are kept by the emulator's callbacks
//! ([`crate::vt::kept`]); here they are read, by number, as rows or as
//! the program's lines, and drawn scrolled back.
//!
//! Rows are numbered by [`RowNo`]: a row's place in the history plus the
//! rows dropped before it, which [`Tally`] counts.

use std::fmt::Write as _;

use unicode_width::UnicodeWidthChar;

use crate::copymode::{self, Extent, Line, RowNo};
use crate::vt::kept::Tally;
use crate::vt::lines::{self, Logical};
use crate::vt::term::Term;

impl<CB: vt100::Callbacks + Default> Term<CB> {
    fn tally(&self) -> &Tally<CB> {
        self.parser.callbacks()
    }

    /// The most history rows kept.
    pub fn history_capacity(&self) -> usize {
        self.tally().keep
    }

    /// Keeps at most `keep` history rows from now on, dropping the oldest
    /// beyond it now (for a reader done with them).
    pub fn trim_history(&mut self, keep: usize) {
        self.scrollback = keep;
        let tally = self.parser.callbacks_mut();
        tally.keep = keep;
        while tally.rows.len() > keep {
            tally.rows.pop_front();
            tally.dropped += 1;
        }
    }

    /// The number of the oldest row kept: how many were dropped before it.
    pub fn first_row(&self) -> u64 {
        self.tally().dropped
    }

    /// The number of the row after the newest history row: the main
    /// screen's top row.
    pub fn history_end(&self) -> u64 {
        self.first_row() + self.tally().rows.len() as u64
    }

    /// How far the main screen's rows have moved in numbering, all told
    /// (rows a taller screen pulled down, and dropped again as they left,
    /// see [`crate::vt::kept`]): a reader that names screen rows by number
    /// adds the change since it last looked.
    pub fn rows_moved(&self) -> i64 {
        self.tally().moved
    }

    /// Rows at the top of the main screen that a taller screen pulled
    /// down blank and nothing has written since they came.
    pub fn rows_pulled(&self) -> u64 {
        self.tally().pulled
    }

    /// History rows above the screen. On the alternate screen, the main
    /// screen's history all the same: what a full-screen program draws is
    /// no history, but what was written before it still is.
    pub fn history_len(&self) -> usize {
        self.tally().rows.len()
    }

    /// Rows kept: the history's and the screen's.
    pub fn rows_kept(&self) -> usize {
        self.history_len() + usize::from(self.size().rows)
    }

    /// Shows the screen `back` rows up into its history (0: the live
    /// screen), as far as there is history.
    pub fn scroll_back(&mut self, back: usize) {
        let back = back.min(self.history_len());
        if back == self.back && (back == 0) == self.view.is_none() {
            return;
        }
        self.back = back;
        self.compose();
    }

    /// How far up the screen is shown (see [`scroll_back`](Self::scroll_back)).
    pub fn scrolled_back(&self) -> usize {
        self.back
    }

    /// The screen as shown: scrolled back into the history, or the live
    /// one. Everything else about the session (its cursor, its modes)
    /// is the live screen's ([`Term::screen`]).
    pub fn shown(&self) -> &vt100::Screen {
        match &self.view {
            Some(v) => v.screen(),
            None => self.screen(),
        }
    }

    /// Draws the view [`Term::scrolled_back`] rows up: the history rows
    /// there above as much of the live screen as fits, on a screen of its
    /// own (a row wider than the screen, kept whole from before the
    /// session narrowed, cut at its edge and marked there with a dim
    /// [`CUT_MARK`], as a pane marks a row that goes on past it).
    pub(super) fn compose(&mut self) {
        self.back = self.back.min(self.history_len());
        if self.back == 0 {
            self.view = None;
            return;
        }
        let crate::protocol::Size { cols, rows } = self.size();
        let hist = self.history_len();
        let top = hist - self.back;
        let from_history = self.back.min(usize::from(rows));
        let mut out: Vec<u8> = Vec::new();
        if from_history < usize::from(rows) {
            out.extend_from_slice(self.screen().contents_formatted().as_bytes());
        }
        // Plain drawing from here: no region, no wrap, no cursor.
        out.extend_from_slice(b"\x1b[0m\x1b[r\x1b[?6l\x1b[?7l\x1b[?25l");
        if from_history < usize::from(rows) {
            let _ = write!(Bytes(&mut out), "\x1b[{from_history}T");
        }
        let kept = &self.tally().rows;
        for (i, row) in kept.range(top..top + from_history).enumerate() {
            let _ = write!(Bytes(&mut out), "\x1b[{};1H\x1b[0m", i + 1);
            let (mut shown, wider) = cut(&row.formatted, cols);
            if wider {
                // Its last column is the mark's.
                shown = cut(&row.formatted, cols.saturating_sub(1)).0;
            }
            out.extend_from_slice(shown.as_bytes());
            if wider && cols > 1 {
                let _ = write!(Bytes(&mut out), "\x1b[{};{cols}H\x1b[0;2m{CUT_MARK}", i + 1);
            }
        }
        let (r, c) = super::term::dims(self.size());
        let mut view = vt100::Parser::new(r, c, 0);
        if crate::term::contain(|| view.process(&out)).is_some() {
            self.view = Some(Box::new(view));
        } else {
            self.back = 0;
            self.view = None;
        }
    }

    /// Every row as text, oldest first: the history, then the screen.
    pub fn history(&mut self) -> Vec<String> {
        self.history_between(0, usize::MAX)
    }

    /// Rows `from..to` of [`history`](Self::history) (clamped).
    pub fn history_between(&mut self, from: usize, to: usize) -> Vec<String> {
        self.rows_between(from, to)
            .into_iter()
            .map(|r| r.text)
            .collect()
    }

    /// Rows `from..to` of the history and the screen, counted from the
    /// oldest kept (clamped), with whether each wraps into the next. A
    /// history row is read whole: one that scrolled off before the screen
    /// narrowed is wider than the screen is now.
    pub fn rows_between(&mut self, from: usize, to: usize) -> Vec<Line> {
        let hist = self.history_len();
        let to = to.min(self.rows_kept());
        let mut lines: Vec<Line> = Vec::with_capacity(to.saturating_sub(from));
        if from < hist {
            let kept = &self.tally().rows;
            lines.extend(kept.range(from..to.min(hist)).map(|k| Line {
                text: k.text(),
                wrapped: k.wrapped,
            }));
        }
        if to > hist {
            let screen = self.screen();
            let first = from.saturating_sub(hist);
            let cols = self.size().cols;
            let tally = self.tally();
            for (i, text) in screen.rows(0, cols).enumerate().skip(first) {
                if hist + i >= to {
                    break;
                }
                let wrapped = u16::try_from(i).is_ok_and(|r| screen.row_wrapped(r));
                // Reshaped by a change of width and untouched since: the
                // row as the program wrote it.
                let line = match tally.as_written_on_screen(i, &text, wrapped) {
                    Some(was) => Line {
                        text: was.text(),
                        wrapped: was.wrapped,
                    },
                    None => Line { text, wrapped },
                };
                lines.push(line);
            }
        }
        lines
    }

    /// Every logical line kept, oldest first: the history's and the
    /// screen's rows joined where the output wrapped (see
    /// [`crate::vt::lines`]), as [`crate::vt::marks::known`] has them;
    /// blank rows at the screen's bottom dropped.
    /// The blank rows a taller screen pulled down on its top (see
    /// [`crate::vt::kept`]) are none of the program's: no lines of their
    /// own, and a line that wrapped into them, its first rows scrolled
    /// off, goes on below them.
    pub fn logical_lines(&mut self) -> Vec<Logical> {
        let mut rows = self.rows_between(0, usize::MAX);
        let top = self.history_len();
        let pulled = usize::try_from(self.rows_pulled()).unwrap_or(usize::MAX);
        let end = top.saturating_add(pulled).min(rows.len());
        // Pulled down and still blank (one written since is the
        // program's): a row above that wraps goes on through it.
        let mut stand_in = vec![false; end.saturating_sub(top)];
        for i in top..end {
            if rows[i].text.is_empty() && !rows[i].wrapped {
                stand_in[i - top] = true;
                rows[i].wrapped = i > 0 && rows[i - 1].wrapped;
            }
        }
        let only_stand_ins = |l: &Logical| {
            (l.row..l.row + l.rows).all(|i| {
                i.checked_sub(top)
                    .and_then(|i| stand_in.get(i))
                    .is_some_and(|s| *s)
            })
        };
        // Nor are rows of cells no byte wrote (a replay that began after
        // output was dropped, see `vt::marks`).
        let mut lines: Vec<Logical> = lines::join(&rows)
            .into_iter()
            .filter(|l| !only_stand_ins(l))
            .filter_map(|l| {
                let text = crate::vt::marks::known(l.text)?;
                Some(Logical { text, ..l })
            })
            .collect();
        while lines.last().is_some_and(|l| l.text.is_empty()) {
            lines.pop();
        }
        lines
    }

    /// The history row the cursor is on: the rows before it are finished
    /// lines (for following output as text).
    pub fn cursor_history_row(&self) -> usize {
        self.history_len() + usize::from(self.screen().cursor_position().0)
    }
}

/// Drawn in the last column of a row that goes on past it: a history row
/// wider than the screen, a pane's row wider than the pane.
pub const CUT_MARK: &str = "›";

/// Appends `fmt::Write` text to bytes.
struct Bytes<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Bytes<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// A kept row's formatted text up to `cols` columns: its SGR sequences
/// kept, characters past the edge left out (with wrapping off, they would
/// all land on the last column); and whether any were.
fn cut(formatted: &str, cols: u16) -> (String, bool) {
    let mut out = String::with_capacity(formatted.len());
    let mut used = 0usize;
    let mut chars = formatted.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            out.push(c);
            for d in chars.by_ref() {
                out.push(d);
                if d == 'm' {
                    break;
                }
            }
            continue;
        }
        let w = UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > usize::from(cols) {
            return (out, true);
        }
        used += w;
        out.push(c);
    }
    (out, false)
}

/// Copy mode reads a screen's history by row numbers.
impl<CB: vt100::Callbacks + Default> copymode::History for Term<CB> {
    fn extent(&self) -> Extent {
        Extent {
            first: self.first_row(),
            rows_kept: self.rows_kept(),
            rows: self.size().rows,
            cols: self.size().cols,
        }
    }

    fn lines(&mut self, from: RowNo, to: RowNo) -> Vec<Line> {
        let first = self.first_row();
        let index = |n: RowNo| usize::try_from(n.saturating_sub(first)).unwrap_or(usize::MAX);
        self.rows_between(index(from), index(to))
    }
}

#[cfg(test)]
mod tests;
