//! A screen's history: the rows that scrolled off its top, as vt100 keeps
//! them, numbered so that a row keeps its number while more output
//! arrives and the oldest rows are dropped; read as text, and shown
//! scrolled back.
//!
//! vt100 addresses its history by offset from the live screen, and says
//! nothing when it drops a row. Numbers that stay put are what a view
//! left on old output (copy mode, a pane scrolled back) needs, so
//! [`Tally`] counts the rows dropped, and a row's number is its place in
//! the history plus that count.

use crate::copymode::{self, Extent, Line, RowNo};
use crate::vt::term::Term;

/// The callbacks a [`Term`]'s parser runs: the caller's own, and a count
/// of the history rows dropped off the top.
#[derive(Debug, Default)]
pub struct Tally<CB> {
    pub(crate) inner: CB,
    /// Rows of the main screen's history dropped so far (the oldest,
    /// pushed out by new ones or by a resize, or erased).
    dropped: u64,
}

impl<CB> Tally<CB> {
    pub(crate) fn new(inner: CB) -> Self {
        Tally { inner, dropped: 0 }
    }
}

// Everything is passed on as it is; `on_scroll` is counted first.
impl<CB: vt100::Callbacks> vt100::Callbacks for Tally<CB> {
    fn audible_bell(&mut self, s: &mut vt100::Screen) {
        self.inner.audible_bell(s);
    }
    fn visual_bell(&mut self, s: &mut vt100::Screen) {
        self.inner.visual_bell(s);
    }
    fn resize(&mut self, s: &mut vt100::Screen, request: (u16, u16)) {
        self.inner.resize(s, request);
    }
    fn set_window_icon_name(&mut self, s: &mut vt100::Screen, name: &[u8]) {
        self.inner.set_window_icon_name(s, name);
    }
    fn set_window_title(&mut self, s: &mut vt100::Screen, title: &[u8]) {
        self.inner.set_window_title(s, title);
    }
    fn copy_to_clipboard(&mut self, s: &mut vt100::Screen, ty: &[u8], data: &[u8]) {
        self.inner.copy_to_clipboard(s, ty, data);
    }
    fn paste_from_clipboard(&mut self, s: &mut vt100::Screen, ty: &[u8]) {
        self.inner.paste_from_clipboard(s, ty);
    }
    fn unhandled_char(&mut self, s: &mut vt100::Screen, c: char) {
        self.inner.unhandled_char(s, c);
    }
    fn unhandled_control(&mut self, s: &mut vt100::Screen, b: u8) {
        self.inner.unhandled_control(s, b);
    }
    fn unhandled_escape(&mut self, s: &mut vt100::Screen, i1: Option<u8>, i2: Option<u8>, b: u8) {
        self.inner.unhandled_escape(s, i1, i2, b);
    }
    fn unhandled_csi(
        &mut self,
        s: &mut vt100::Screen,
        i1: Option<u8>,
        i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        self.inner.unhandled_csi(s, i1, i2, params, c);
    }
    fn unhandled_osc(&mut self, s: &mut vt100::Screen, params: &[&[u8]]) {
        self.inner.unhandled_osc(s, params);
    }
    fn on_scroll(&mut self, row: vt100::capture::RowContents<'_>, alternate_screen: bool) {
        // The alternate screen keeps no history: its rows are not numbered.
        if !alternate_screen {
            self.dropped += 1;
        }
        self.inner.on_scroll(row, alternate_screen);
    }
}

impl<CB: vt100::Callbacks + Default> Term<CB> {
    /// The number of the oldest row kept: how many were dropped before it.
    pub fn first_row(&self) -> u64 {
        self.parser.callbacks().dropped
    }

    /// Rows kept: the history's and the screen's (on the alternate
    /// screen, which keeps none, only the screen's).
    pub fn rows_kept(&self) -> usize {
        let screen = self.screen();
        screen.scrollback_len() + usize::from(screen.size().0.get())
    }

    /// Shows the screen `back` rows up into its history (0: the live
    /// screen), as far as there is history.
    pub fn scroll_back(&mut self, back: usize) {
        self.parser.screen_mut().set_scrollback(back);
    }

    /// How far up the screen is shown (see [`scroll_back`](Self::scroll_back)).
    pub fn scrolled_back(&self) -> usize {
        self.screen().scrollback()
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
    /// oldest kept (clamped), with whether each wraps into the next. The
    /// view is left where it was.
    pub fn rows_between(&mut self, from: usize, to: usize) -> Vec<Line> {
        let cols = self.size().cols;
        let screen = self.parser.screen_mut();
        let was = screen.scrollback();
        let len = screen.scrollback_len();
        let rows = usize::from(screen.size().0.get());
        let to = to.min(len + rows);
        let mut lines: Vec<Line> = Vec::with_capacity(to.saturating_sub(from));
        let mut next = from;
        while next < to {
            // vt100 reads only the rows in view: scrolled back `off` rows,
            // the first row shown is row `len - off` of the whole history.
            let off = len.saturating_sub(next);
            screen.set_scrollback(off);
            let first = len - off;
            let before = next;
            for (i, text) in screen.rows(0, cols).enumerate() {
                if first + i == next && next < to {
                    let wrapped = u16::try_from(i).is_ok_and(|r| screen.row_wrapped(r));
                    lines.push(Line { text, wrapped });
                    next += 1;
                }
            }
            if next == before {
                break;
            }
        }
        screen.set_scrollback(was);
        lines
    }

    /// The history row the cursor is on: the rows before it are finished
    /// lines (for following output as text).
    pub fn cursor_history_row(&self) -> usize {
        let screen = self.screen();
        screen.scrollback_len() + usize::from(screen.cursor_position().0)
    }
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
mod tests {
    use crate::protocol::Size;
    use crate::vt::term::Term;

    fn lines(n: usize) -> Vec<u8> {
        (1..=n)
            .map(|i| format!("line {i}\r\n"))
            .collect::<String>()
            .into_bytes()
    }

    #[test]
    fn a_row_keeps_its_number_when_old_rows_are_dropped() {
        let mut t: Term = Term::with_scrollback(Size { cols: 20, rows: 4 }, 10);
        t.feed(&lines(8));
        assert_eq!(t.first_row(), 0);
        // "line 3" is the third row kept.
        assert_eq!(t.history_between(2, 3), ["line 3"]);
        t.feed(&lines(20));
        // History holds 10; the screen's rows above them are gone.
        assert_eq!(t.rows_kept(), 14);
        let first = t.first_row();
        assert!(first > 0);
        let all = t.history();
        assert_eq!(all.len(), 14);
        assert_eq!(all[13], "");
        assert_eq!(all[12], "line 20");
    }

    #[test]
    fn a_shrinking_resize_counts_the_rows_it_drops() {
        let mut t: Term = Term::with_scrollback(Size { cols: 20, rows: 10 }, 2);
        t.feed(&lines(9));
        t.resize(Size { cols: 20, rows: 3 });
        // Seven rows go up into a history of two: five are dropped.
        assert_eq!(t.first_row(), 5);
        assert_eq!(t.history(), ["line 6", "line 7", "line 8", "line 9", ""]);
    }

    #[test]
    fn reading_the_history_leaves_the_view_where_it_was() {
        let mut t: Term = Term::with_scrollback(Size { cols: 20, rows: 3 }, 50);
        t.feed(&lines(30));
        t.scroll_back(5);
        let wanted = t.screen().contents();
        let _ = t.history();
        assert_eq!(t.scrolled_back(), 5);
        assert_eq!(t.screen().contents(), wanted);
    }

    #[test]
    fn a_long_line_is_read_as_rows_that_wrap() {
        let mut t: Term = Term::with_scrollback(Size { cols: 5, rows: 3 }, 10);
        t.feed(b"abcdefgh\r\nxy\r\n");
        let rows = t.rows_between(0, 3);
        assert_eq!(rows[0].text, "abcde");
        assert!(rows[0].wrapped);
        assert_eq!(rows[1].text, "fgh");
        assert!(!rows[1].wrapped);
        assert_eq!(rows[2].text, "xy");
    }
}
