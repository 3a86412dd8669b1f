//! Copy mode in `hm attach`: the session's history, read from a fresh
//! replay of what its supervisor kept into an emulator of the session's
//! size, drawn over the rows above the status bar and browsed with
//! [`crate::copymode`], the dashboard's own copy mode. Pure: bytes and
//! keys in, bytes for the terminal out; `session` does the I/O.
//!
//! The user's terminal keeps no history of an attached session (attach
//! runs on its alternate screen), so this emulator is the history. It
//! lives only while copy mode is open.

use crate::copymode::{CopyMode, History, Outcome};
use crate::protocol::Size;
use crate::theme::Theme;
use crate::vt::term::Term;

use super::keys::Input;
use super::statusbar;

/// Rows a notch of the wheel scrolls.
const WHEEL_ROWS: i64 = 3;

/// Copy mode's state in attach.
#[derive(Debug)]
pub struct CopyView {
    /// The session's output since the replay's start, with its history.
    hist: Term,
    /// Until the replay is in, `None`: there is nothing to show yet.
    mode: Option<CopyMode>,
    /// Opened with Shift-PgUp: a page up once the history is in, and
    /// scrolling back down ends it.
    page_first: bool,
    /// The top row last painted, and whether the live screen's rows were
    /// among those shown (they change with output; history rows do not).
    painted: Option<(u64, bool)>,
    /// The output comes with the journal's marks (see [`CopyView::mark`]).
    marks: bool,
    /// The rows above the bar: where the view is drawn.
    shown: Size,
}

impl CopyView {
    /// Copy mode for a session of `size`, keeping `lines` rows of history.
    pub fn new(size: Size, lines: usize, page_first: bool) -> CopyView {
        CopyView {
            hist: Term::with_scrollback(size, lines),
            mode: None,
            page_first,
            painted: None,
            marks: false,
            shown: size,
        }
    }

    /// Whether the history is in and the keys do something.
    pub fn ready(&self) -> bool {
        self.mode.is_some()
    }

    /// Session output, replayed or live.
    pub fn output(&mut self, bytes: &[u8]) -> Outcome {
        self.hist.feed(bytes);
        self.settle()
    }

    /// The replay is in: copy mode starts on the live screen, its cursor
    /// where the program's is (a page up when opened with Shift-PgUp).
    pub fn replay_end(&mut self) -> Outcome {
        let ext = self.hist.extent();
        let cursor = self.hist.screen().cursor_position();
        let mut mode = CopyMode::new(ext, Some(cursor), self.page_first);
        let outcome = if self.page_first {
            mode.scroll(ext, -page(ext.rows))
        } else {
            Outcome::Stay
        };
        self.mode = Some(mode);
        outcome
    }

    /// A key, a page or a notch of the wheel.
    pub fn input(&mut self, input: Input) -> Outcome {
        let Some(mode) = &mut self.mode else {
            return Outcome::Stay;
        };
        let ext = self.hist.extent();
        match input {
            Input::Key(k) => mode.key(&mut self.hist, k),
            Input::Page(dir) => mode.scroll(ext, dir * page(ext.rows)),
            Input::Wheel(dir) => mode.scroll(ext, dir * WHEEL_ROWS),
        }
    }

    /// The session was resized (the terminal was): what is shown is
    /// drawn again at once. The history's emulator takes the size where
    /// the output says ([`CopyView::mark`]); from a supervisor without
    /// marks, now.
    pub fn resize(&mut self, size: Size) {
        self.shown = size;
        if !self.marks {
            self.hist.resize(size);
        }
        self.painted = None;
        self.settle();
    }

    /// A mark of the journal: the output from here on is at its size (and
    /// the first says on which screen the replay starts).
    pub fn mark(&mut self, mark: &crate::protocol::Mark) {
        let first = !std::mem::replace(&mut self.marks, true);
        self.hist.take_mark(mark, first);
        self.painted = None;
        self.settle();
    }

    /// Keeps the view on its rows after output or a resize.
    fn settle(&mut self) -> Outcome {
        let ext = self.hist.extent();
        self.mode.as_mut().map_or(Outcome::Stay, |m| m.clamp(ext))
    }

    /// Draws the view over the rows above the bar, when what it shows has
    /// changed (or always, with `force`): each cell as the program drew it,
    /// the selection reversed, the cursor in the theme's key style.
    pub fn paint(&mut self, out: &mut Vec<u8>, theme: &Theme, force: bool) {
        let Some(mode) = &self.mode else { return };
        let ext = self.hist.extent();
        let back = mode.back(ext);
        let top = ext.live_top() - back as u64;
        let live = back < usize::from(ext.rows);
        if !force && !live && self.painted == Some((top, live)) {
            return;
        }
        self.painted = Some((top, live));
        self.hist.scroll_back(back);
        let screen = self.hist.shown();
        let cursor = mode.cursor_cell(ext);
        // Wrapping off while drawing, so a full last column cannot scroll.
        out.extend_from_slice(b"\x1b[?7l");
        // No further than the terminal: the session may be another
        // terminal's size for a moment.
        for row in 0..ext.rows.min(self.shown.rows) {
            out.extend_from_slice(format!("\x1b[{};1H\x1b[0m", row + 1).as_bytes());
            let selected = mode.selected_in_row(ext, row);
            let mut last = String::new();
            let mut drawn = 0;
            for col in 0..ext.cols.min(self.shown.cols) {
                let Some(cell) = screen.cell(row, col) else {
                    break;
                };
                drawn = col + 1;
                if cell.is_wide_continuation() {
                    continue;
                }
                let mut style = cell_sgr(cell);
                if selected.is_some_and(|(a, b)| (a..=b).contains(&col)) {
                    style.push_str(";7");
                }
                let style = if cursor == Some((row, col)) {
                    statusbar::sgr(theme.footer_key)
                } else {
                    format!("\x1b[{style}m")
                };
                if style != last {
                    out.extend_from_slice(style.as_bytes());
                    last = style;
                }
                if cell.has_contents() {
                    out.extend_from_slice(cell.contents().as_bytes());
                } else {
                    out.push(b' ');
                }
            }
            out.extend_from_slice(b"\x1b[0m");
            // The rest of a row drawn short of the terminal's edge is
            // cleared. Not after a full one: the cursor stays on the last
            // column once it is written, and the erase took that column.
            if drawn < self.shown.cols {
                out.extend_from_slice(b"\x1b[K");
            }
        }
        out.extend_from_slice(b"\x1b[0m\x1b[?7h");
    }

    /// The bar: where the view is, and the search being typed, what the
    /// last key came to, or what the keys do.
    pub fn bar(&self, id: &str, cols: u16, row: u16, theme: &Theme) -> Vec<u8> {
        let Some(mode) = &self.mode else {
            return statusbar::render_copy(id, cols, row, "", "reading the history…", theme);
        };
        let text = mode
            .status()
            .map(|s| crate::paths::sanitize(&s))
            .unwrap_or_else(|| "q leaves  / ? search  v select  y copies".into());
        let marker = mode.marker(self.hist.extent());
        statusbar::render_copy(id, cols, row, &marker, &text, theme)
    }

    /// The program's screen as plain text (for when it ends while copy
    /// mode is open), blank rows at the end dropped.
    pub fn last_screen(&mut self) -> Vec<String> {
        if self.hist.screen().alternate_screen() {
            return Vec::new();
        }
        self.hist.scroll_back(0);
        let mut lines: Vec<String> = self
            .hist
            .screen()
            .contents()
            .lines()
            .map(|l| l.trim_end().to_owned())
            .collect();
        while lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        lines
    }
}

/// A page: the view's rows but one, so a row of context stays.
fn page(rows: u16) -> i64 {
    i64::from(rows.max(2) - 1)
}

/// The SGR parameters of a cell's attributes, after a reset (`0`).
fn cell_sgr(c: &vt100::Cell) -> String {
    let mut s = String::from("0");
    for (on, code) in [
        (c.bold(), "1"),
        (c.dim(), "2"),
        (c.italic(), "3"),
        (c.underline(), "4"),
        (c.inverse(), "7"),
    ] {
        if on {
            s.push(';');
            s.push_str(code);
        }
    }
    for (colour, base) in [(c.fgcolor(), 30u8), (c.bgcolor(), 40)] {
        match colour {
            vt100::Color::Default => {}
            vt100::Color::Idx(i) if i < 8 => s.push_str(&format!(";{}", base + i)),
            vt100::Color::Idx(i) if i < 16 => s.push_str(&format!(";{}", base + 60 + i - 8)),
            vt100::Color::Idx(i) => s.push_str(&format!(";{};5;{i}", base + 8)),
            vt100::Color::Rgb(r, g, b) => s.push_str(&format!(";{};2;{r};{g};{b}", base + 8)),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::copymode::Key;

    /// What the terminal shows after `out`, on a screen of `size` (the
    /// view's rows plus the bar's).
    fn shown(out: &[u8], size: Size) -> vt100::Parser {
        let nz = |n: u16| std::num::NonZeroU16::new(n).expect("non-zero");
        let mut p = vt100::Parser::new(nz(size.rows + 1), nz(size.cols), 0);
        p.process(out);
        p
    }

    fn seq(n: usize) -> Vec<u8> {
        let text: String = (1..=n).map(|i| format!("{i}\r\n")).collect();
        format!("{text}\x1b[1;31m$\x1b[m ").into_bytes()
    }

    const SIZE: Size = Size { cols: 50, rows: 5 };

    #[test]
    fn shift_page_up_shows_the_page_above_and_the_bar_says_where() {
        let theme = Theme::by_name("dark").expect("theme");
        let mut v = CopyView::new(SIZE, 100, true);
        assert!(!v.ready());
        v.output(&seq(50));
        assert_eq!(v.replay_end(), Outcome::Stay);
        let mut out = Vec::new();
        v.paint(&mut out, &theme, false);
        out.extend(v.bar("s", SIZE.cols, SIZE.rows + 1, &theme));
        let p = shown(&out, SIZE);
        let rows: Vec<String> = p
            .screen()
            .rows(0, 50)
            .map(|r| r.trim_end().to_owned())
            .collect();
        assert_eq!(rows[..5], ["43", "44", "45", "46", "47"]);
        assert!(rows[5].contains("copy [+4/46]"), "{rows:?}");
        // Scrolling back down to the live screen ends it.
        assert_eq!(v.input(Input::Page(1)), Outcome::Leave);
    }

    #[test]
    fn keys_search_and_copy_and_the_colours_are_kept() {
        let theme = Theme::by_name("dark").expect("theme");
        let mut v = CopyView::new(SIZE, 100, false);
        v.output(&seq(50));
        v.replay_end();
        let mut out = Vec::new();
        v.paint(&mut out, &theme, true);
        let p = shown(&out, SIZE);
        assert_eq!(
            p.screen().cell(4, 0).map(|c| c.fgcolor()),
            Some(vt100::Color::Idx(1))
        );
        assert!(p.screen().cell(4, 0).is_some_and(vt100::Cell::bold));
        for c in "?17".chars() {
            v.input(Input::Key(Key::Char(c)));
        }
        let mut bar = v.bar("s", SIZE.cols, SIZE.rows + 1, &theme);
        assert!(String::from_utf8_lossy(&bar).contains("?17"));
        v.input(Input::Key(Key::Enter));
        bar = Vec::new();
        v.paint(&mut bar, &theme, false);
        let p = shown(&bar, SIZE);
        assert!(
            p.screen().contents().contains("17"),
            "{}",
            p.screen().contents()
        );
        for k in [Key::Char('v'), Key::Char('j'), Key::Char('$')] {
            v.input(Input::Key(k));
        }
        assert_eq!(
            v.input(Input::Key(Key::Char('y'))),
            Outcome::Copied {
                text: "17\n18".into(),
                lines: 2
            }
        );
    }

    #[test]
    fn new_output_does_not_move_the_view_and_only_live_rows_are_repainted() {
        let theme = Theme::by_name("dark").expect("theme");
        let mut v = CopyView::new(SIZE, 100, true);
        v.output(&seq(50));
        v.replay_end();
        v.input(Input::Page(-1));
        let mut out = Vec::new();
        v.paint(&mut out, &theme, false);
        assert!(!out.is_empty());
        v.output(b"more\r\n");
        let mut again = Vec::new();
        v.paint(&mut again, &theme, false);
        assert!(again.is_empty(), "the rows shown did not change");
        let p = shown(&out, SIZE);
        assert_eq!(
            p.screen()
                .rows(0, 50)
                .next()
                .map(|r| r.trim_end().to_owned()),
            Some("39".into())
        );
        // Keys before the history is in do nothing.
        let mut early = CopyView::new(SIZE, 100, false);
        assert_eq!(early.input(Input::Key(Key::Char('q'))), Outcome::Stay);
        assert!(String::from_utf8_lossy(&early.bar("s", 50, 6, &theme)).contains("reading"));
    }
}
