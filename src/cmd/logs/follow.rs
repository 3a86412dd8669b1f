//! `hm logs --follow`: each line printed once it is complete, whole and in
//! order. A line is complete when the cursor has left it for a later line
//! (the program went on to the next one); what the program writes on the
//! alternate screen is not history and is not printed. A line printed
//! while still on the screen can change afterwards (a clear, then new
//! output; a status area redrawn above the cursor): from the first row
//! that no longer shows what was printed, the lines are printed again as
//! they complete, so nothing written is missed. Rows are named by their
//! numbers in the emulator's history ([`crate::vt::history`]), which stay
//! put as rows scroll off.

use std::collections::VecDeque;

use crate::copymode::{Line, RowNo};
use crate::vt::lines;
use crate::vt::term::Term;

/// What has been printed of a session being followed.
#[derive(Debug)]
pub struct Follow {
    /// Rows before this one have been printed.
    printed: RowNo,
    /// Rows printed that were on the screen then, with their text: a row
    /// still on the screen that shows something else now was rewritten.
    shown: VecDeque<(RowNo, String)>,
}

impl Follow {
    /// Following `term`, whose history was printed up to the cursor's line.
    pub fn new(term: &mut Term) -> Follow {
        let mut f = Follow {
            printed: 0,
            shown: VecDeque::new(),
        };
        f.printed = f.cursor_line(term).unwrap_or_else(|| term.history_end());
        f
    }

    /// Rows before this one have been printed.
    pub fn printed(&self) -> RowNo {
        self.printed
    }

    /// The first row of the line the cursor is on, on the main screen.
    fn cursor_line(&self, term: &mut Term) -> Option<RowNo> {
        if term.screen().alternate_screen() {
            return None;
        }
        let top = term.history_end();
        let mut start = top + u64::from(term.screen().cursor_position().0);
        let first = term.first_row();
        while start > first
            && rows(term, start - 1, start)
                .first()
                .is_some_and(|r| r.wrapped)
        {
            start -= 1;
        }
        Some(start)
    }

    /// The lines completed since the last call.
    pub fn complete(&mut self, term: &mut Term) -> Vec<String> {
        let Some(end) = self.cursor_line(term) else {
            return Vec::new();
        };
        self.recheck(term);
        self.print(term, end)
    }

    /// The session ended: the lines not printed yet, its last one too
    /// (blank rows at the bottom of the screen left out).
    pub fn rest(&mut self, term: &mut Term) -> Vec<String> {
        if term.screen().alternate_screen() {
            return Vec::new();
        }
        self.recheck(term);
        let end = term.history_end() + u64::from(term.size().rows);
        let mut out = self.print(term, end);
        while out.last().is_some_and(String::is_empty) {
            out.pop();
        }
        out
    }

    /// Rows printed that scrolled off are final; one still on the screen
    /// that no longer shows what was printed has everything from it
    /// printed again.
    fn recheck(&mut self, term: &mut Term) {
        let top = term.history_end();
        while self.shown.front().is_some_and(|(r, _)| *r < top) {
            self.shown.pop_front();
        }
        let Some(&(from, _)) = self.shown.front() else {
            return;
        };
        let to = self.shown.back().map_or(from, |(r, _)| r + 1);
        let now = rows(term, from, to);
        let changed = self
            .shown
            .iter()
            .zip(&now)
            .find(|((_, was), row)| *was != row.text)
            .map(|((r, _), _)| *r);
        if let Some(row) = changed {
            // From the start of that row's line.
            let mut start = row;
            while start > top
                && rows(term, start - 1, start)
                    .first()
                    .is_some_and(|r| r.wrapped)
            {
                start -= 1;
            }
            self.shown.retain(|(r, _)| *r < start);
            self.printed = self.printed.min(start);
        }
    }

    /// Prints the lines of rows `printed..end`.
    fn print(&mut self, term: &mut Term, end: RowNo) -> Vec<String> {
        let from = self.printed.max(term.first_row());
        if end <= from {
            return Vec::new();
        }
        let got = rows(term, from, end);
        let top = term.history_end();
        for (i, row) in got.iter().enumerate() {
            let r = from + i as u64;
            if r >= top {
                self.shown.push_back((r, row.text.clone()));
            }
        }
        self.printed = from + got.len() as u64;
        lines::join(&got).into_iter().map(|l| l.text).collect()
    }
}

/// Rows `from..to`, by number.
fn rows(term: &mut Term, from: RowNo, to: RowNo) -> Vec<Line> {
    let first = term.first_row();
    let index = |n: RowNo| usize::try_from(n.saturating_sub(first)).unwrap_or(usize::MAX);
    term.rows_between(index(from), index(to))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Size;

    fn term() -> Term {
        Term::with_scrollback(Size { cols: 10, rows: 4 }, 1000)
    }

    /// Feeds `bytes` and returns what is printed.
    fn step(f: &mut Follow, t: &mut Term, bytes: &[u8]) -> Vec<String> {
        t.feed(bytes);
        f.complete(t)
    }

    #[test]
    fn each_line_once_whole_when_the_next_begins() {
        let mut t = term();
        t.feed(b"old\r\n");
        let mut f = Follow::new(&mut t);
        assert_eq!(step(&mut f, &mut t, b"abcdefghijklm"), Vec::<String>::new());
        assert_eq!(step(&mut f, &mut t, b"n\r\n"), ["abcdefghijklmn"]);
        let many: String = (1..=20).map(|i| format!("line {i}\r\n")).collect();
        let got = step(&mut f, &mut t, many.as_bytes());
        let want: Vec<String> = (1..=20).map(|i| format!("line {i}")).collect();
        assert_eq!(got, want);
        // A carriage return redraws the line in place: printed once, last.
        assert!(step(&mut f, &mut t, b"10%\r50%\r100%").is_empty());
        assert_eq!(f.rest(&mut t), ["100%"]);
    }

    #[test]
    fn a_cleared_screen_written_anew_is_printed_and_a_redraw_is_not() {
        let mut t = term();
        let mut f = Follow::new(&mut t);
        assert_eq!(step(&mut f, &mut t, b"one\r\ntwo\r\n"), ["one", "two"]);
        // The same rows drawn again: nothing new.
        assert!(step(&mut f, &mut t, b"\x1b[Hone\r\ntwo\r\n").is_empty());
        // Cleared and written anew: the new lines.
        assert_eq!(
            step(&mut f, &mut t, b"\x1b[H\x1b[2Jthree\r\nfour\r\n"),
            ["three", "four"]
        );
        // The alternate screen is no history.
        assert!(step(&mut f, &mut t, b"\x1b[?1049hfull\r\nscreen\r\n").is_empty());
        assert!(f.rest(&mut t).is_empty());
    }
}
