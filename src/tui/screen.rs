//! A session's screen drawn into ratatui: the window of it a pane or the
//! focused view shows (around the cursor when the pane is smaller than
//! the screen), and each vt100 cell as tui-term's `Cell`. The emulator
//! itself (`vt::term`) knows nothing of ratatui; tui-term renders these
//! views of vt100 0.18 screens (its own default backend is vt100 0.16).

use bytemuck::TransparentWrapper;
use ratatui::style::{Color, Modifier, Style};

use crate::vt::term::Term;

/// A view of the whole screen, or of the part of it around the cursor
/// when the pane is smaller than the session's screen.
pub fn view<CB: vt100::Callbacks + Default>(term: &Term<CB>, rows: u16, cols: u16) -> View<'_> {
    view_around(term, rows, cols, term.screen().cursor_position())
}

/// A view of the whole screen, or of the part of it around `(row, col)`
/// when the pane is smaller: in copy mode, its cursor's cell.
pub fn view_around<CB: vt100::Callbacks + Default>(
    term: &Term<CB>,
    rows: u16,
    cols: u16,
    (crow, ccol): (u16, u16),
) -> View<'_> {
    let screen = term.shown();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Size;

    #[test]
    fn a_small_view_follows_the_cursor() {
        let mut t = Term::new(Size { cols: 20, rows: 10 });
        t.feed(b"\x1b[9;15Hhere");
        let v = view(&t, 4, 10);
        use tui_term::widget::Screen;
        let (r, c) = v.cursor_position();
        assert!(r < 4 && c < 10, "{r},{c}");
        assert_eq!(
            v.cell(r, c - 4).map(|c| c.0.contents().to_string()),
            Some("h".into())
        );
    }
}
