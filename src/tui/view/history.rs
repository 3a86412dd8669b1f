//! What a pane shows of its history: where its view is (`[+120/2000]`,
//! with `copy` while copy mode takes the keys), and copy mode's cursor and
//! selection over the session's cells. Drawn over the emulator's screen
//! after it, in the pane or in focus alike; the emulator itself is already
//! scrolled to the view (`tui::copy::follow`).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::Span;

use super::screen::{self, View};
use crate::copymode::History;
use crate::tui::model::{Model, Pane};

/// The cell of the emulator's screen the view should keep in sight: copy
/// mode's cursor while it has one, else the program's cursor.
pub(super) fn view<'a>(p: &'a Pane, rows: u16, cols: u16) -> View<'a> {
    let cursor = p.copy.as_ref().and_then(|c| c.cursor_cell(p.term.extent()));
    match cursor {
        Some(cell) => screen::view_around(&p.term, rows, cols, cell),
        None => screen::view(&p.term, rows, cols),
    }
}

/// Draws the marker, the selection and the cursor of a pane's copy mode
/// over `area`, where `v` was drawn.
pub(super) fn overlay(m: &Model, p: &Pane, v: &View<'_>, area: Rect, f: &mut Frame<'_>) {
    let Some(copy) = &p.copy else { return };
    let ext = p.term.extent();
    let (row_off, col_off) = v.offset();
    let buf = f.buffer_mut();
    // Screen cell (row, col) to the frame's, if it is shown.
    let at = |row: u16, col: u16| -> Option<(u16, u16)> {
        let (r, c) = (row.checked_sub(row_off)?, col.checked_sub(col_off)?);
        (r < area.height && c < area.width).then(|| (area.x + c, area.y + r))
    };
    for row in row_off..row_off.saturating_add(area.height) {
        let Some((from, to)) = copy.selected_in_row(ext, row) else {
            continue;
        };
        for col in from..=to {
            if let Some(xy) = at(row, col) {
                let cell = &mut buf[xy];
                cell.set_style(cell.style().add_modifier(Modifier::REVERSED));
            }
        }
    }
    if let Some((row, col)) = copy.cursor_cell(ext)
        && let Some(xy) = at(row, col)
    {
        // Told apart from the selection it may be in.
        let cell = &mut buf[xy];
        cell.modifier.remove(Modifier::REVERSED);
        cell.set_style(m.theme.footer_key);
    }
    let mut marker = copy.marker(ext);
    if copy.takes_keys() {
        marker = format!("copy {marker}");
    }
    let text = format!(" {marker} ");
    let w = (text.chars().count() as u16).min(area.width);
    let spot = Rect::new(area.x + area.width - w, area.y, w, 1.min(area.height));
    f.render_widget(Span::styled(text, m.theme.footer_key), spot);
}
