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
    /// The screen rows' move in numbering when they were last looked at
    /// ([`Term::rows_moved`]): a resize moves them without rewriting them.
    moved: i64,
}

impl Follow {
    /// Following `term`, whose history was printed up to the cursor's line.
    pub fn new(term: &mut Term) -> Follow {
        let mut f = Follow {
            printed: 0,
            shown: VecDeque::new(),
            moved: term.rows_moved(),
        };
        f.printed = f.cursor_line(term).unwrap_or_else(|| term.history_end());
        // The screen's rows above the cursor were printed with the
        // history: rewritten (a clear, then new output), they come again.
        let top = term.history_end();
        if f.printed > top {
            let shown = rows(term, top, f.printed);
            f.shown = (top..).zip(shown.into_iter().map(|r| r.text)).collect();
        }
        f
    }

    /// Rows a resize moved are named by their new numbers.
    fn follow_moves(&mut self, term: &Term) {
        let by = term.rows_moved() - self.moved;
        self.moved = term.rows_moved();
        if by == 0 {
            return;
        }
        let shift = |r: RowNo| r.saturating_add_signed(by);
        self.printed = shift(self.printed);
        for (r, _) in &mut self.shown {
            *r = shift(*r);
        }
        // The blank rows pulled down on top count as printed blank: if the
        // program writes there (a clear, then new output), that is new.
        let top = term.history_end();
        for r in (top..top + term.rows_pulled()).rev() {
            if self.shown.front().is_none_or(|(first, _)| *first > r) {
                self.shown.push_front((r, String::new()));
            }
        }
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
        self.follow_moves(term);
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
        self.follow_moves(term);
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
        // Rows shown are in order, not always next to each other.
        let now = rows(term, from, to);
        let changed = self
            .shown
            .iter()
            .find(|(r, was)| {
                usize::try_from(r - from)
                    .ok()
                    .and_then(|i| now.get(i))
                    .is_some_and(|row| row.text != *was)
            })
            .map(|(r, _)| *r);
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
        lines::join(&got)
            .into_iter()
            .filter_map(|l| crate::vt::marks::known(l.text))
            .collect()
    }
}

/// The most lines one step of output fed to the emulator may hold: far
/// fewer than the history rows kept while following (`FOLLOW_ROWS`), so
/// that no row scrolls out of them before it is printed. A read of short
/// lines (64 KiB of `seq` is 10,000) lost thousands.
pub const STEP_LINES: usize = 1024;

/// `bytes` cut before each erase of the display (`CSI J`, `CSI 2 J`, ...),
/// cursor position (`CSI H`, which a clear begins with) and full reset
/// (`ESC c`): what the screen showed just before is read before it goes,
/// however the reads fell (a shell's echoed `clear` and the clear itself
/// often come in one). A sequence cut between reads is not found, and
/// the read is taken whole. Cut too after every [`STEP_LINES`] line
/// feeds.
pub fn in_steps(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut lines = 0;
        let cut = (1..rest.len())
            .find(|&i| {
                lines += usize::from(rest[i - 1] == b'\n');
                lines == STEP_LINES || (rest[i] == 0x1b && erases(&rest[i..]))
            })
            .unwrap_or(rest.len());
        let (piece, more) = rest.split_at(cut);
        rest = more;
        Some(piece)
    })
}

/// `seq` starts with an erase of the display, a cursor position or a
/// full reset.
fn erases(seq: &[u8]) -> bool {
    match seq {
        [0x1b, b'c', ..] => true,
        [0x1b, b'[', params @ ..] => {
            let n = params
                .iter()
                .take_while(|b| b.is_ascii_digit() || **b == b';')
                .count();
            matches!(params.get(n), Some(b'J' | b'H' | b'f'))
        }
        _ => false,
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
    fn the_screen_cleared_after_following_began_is_printed_anew() {
        let mut t = term();
        t.feed(b"a\r\nb\r\n");
        let mut f = Follow::new(&mut t);
        assert_eq!(step(&mut f, &mut t, b"\x1b[H\x1b[2Jx\r\n"), ["x"]);
    }

    /// A shell at the bottom of its screen, resized taller and back (the
    /// emulator pulls blank rows down on top, and drops them again): no
    /// line is printed twice, none is missed.
    #[test]
    fn resizing_prints_nothing_again() {
        let mut t = term();
        let many: String = (1..=30).map(|i| format!("line {i}\r\n")).collect();
        t.feed(many.as_bytes());
        let mut f = Follow::new(&mut t);
        for rows in [10, 4, 8, 2, 6, 4] {
            t.resize(Size { cols: 10, rows });
            assert!(f.complete(&mut t).is_empty(), "at {rows} rows");
        }
        assert_eq!(step(&mut f, &mut t, b"next\r\n"), ["next"]);
        // A full-screen program resized above it: the same.
        t.feed(b"\x1b[?1049h");
        for rows in [9, 3, 12, 4] {
            t.resize(Size { cols: 10, rows });
            assert!(step(&mut f, &mut t, b"\x1b[Hdrawn").is_empty());
        }
        t.feed(b"\x1b[?1049l");
        assert_eq!(step(&mut f, &mut t, b"back\r\n"), ["back"]);
        assert_eq!(step(&mut f, &mut t, b"$ clear\r\n"), ["$ clear"]);
        assert_eq!(
            step(&mut f, &mut t, b"\x1b[H\x1b[2J\x1b[3Jafter\r\n$ "),
            ["after"]
        );
    }

    /// A line the same read completes and clears away is printed.
    #[test]
    fn a_line_a_clear_in_the_same_read_erases_is_printed() {
        let mut t = term();
        let mut f = Follow::new(&mut t);
        let mut got = Vec::new();
        for piece in in_steps(b"$ clear\r\n\x1b[H\x1b[2J\x1b[3Jafter\r\n$ ") {
            t.feed(piece);
            got.extend(f.complete(&mut t));
        }
        assert_eq!(got, ["$ clear", "after"]);
        let pieces: Vec<&[u8]> = in_steps(b"a\x1b[Jb\x1b[1;2Hc\x1bcd\x1b[2Ke\x1b[3;1f").collect();
        let want: [&[u8]; 5] = [
            b"a",
            b"\x1b[Jb",
            b"\x1b[1;2Hc",
            b"\x1bcd\x1b[2Ke",
            b"\x1b[3;1f",
        ];
        assert_eq!(pieces, want);
    }

    /// Resized taller and back, then the screen cleared and written
    /// anew from its top, where blank rows were pulled down.
    #[test]
    fn a_clear_after_resizes_prints_what_follows() {
        let mut t = Term::with_scrollback(Size { cols: 60, rows: 10 }, 1000);
        let many: String = (1..=30).map(|i| format!("{i}\r\n")).collect();
        t.feed(b"$ seq 1 30\r\n");
        t.feed(many.as_bytes());
        t.feed(b"$ ");
        let mut f = Follow::new(&mut t);
        for rows in [30, 10, 25, 5, 12, 10] {
            t.resize(Size { cols: 60, rows });
            assert!(f.complete(&mut t).is_empty(), "at {rows} rows");
        }
        assert_eq!(
            step(&mut f, &mut t, b"clear; echo after\r\n"),
            ["$ clear; echo after"]
        );
        assert_eq!(
            step(&mut f, &mut t, b"\x1b[H\x1b[2J\x1b[3Jafter\r\n$ "),
            ["after"]
        );
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
