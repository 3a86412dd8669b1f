//! What a pane shows of its history: where its view is (`[+120/2000]`,
//! with `copy` while copy mode takes the keys), and copy mode's cursor and
//! selection over the session's cells. Drawn over the emulator's screen
//! after it, in the pane or in focus alike; the emulator itself is already
//! scrolled to the view (`tui::copy::follow`).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::Span;

use crate::tui::copy;
use crate::tui::model::{Model, Pane};
use crate::tui::screen::View;

/// What of the emulator's screen a view of `rows` shows: scrolled back,
/// copy mode's window (see `tui::copy::extent`), with its cursor's column
/// in sight; live, the rows around the program's cursor.
pub(super) fn view<'a>(p: &'a Pane, rows: u16, cols: u16) -> View<'a> {
    copy::view(p, rows, cols)
}

/// Draws the marker, the selection and the cursor of a pane's copy mode
/// over `area`, where `v` was drawn.
/// `marker_y` is the row copy mode's `copy [+12/340]` goes on, at its
/// left or right: a pane's bottom border, where it hides none of the rows
/// it is about.
/// What copy mode shows on the pane's bottom border: ` copy [+105/244] `
/// (`copy` while it takes keys), or `None` out of copy mode.
pub(super) fn marker(p: &Pane) -> Option<String> {
    let copy = p.copy.as_ref()?;
    let marker = copy.marker(copy::extent(p));
    Some(if copy.takes_keys() {
        format!(" copy {marker} ")
    } else {
        format!(" {marker} ")
    })
}

pub(super) fn overlay(
    m: &Model,
    p: &Pane,
    v: &View<'_>,
    area: Rect,
    marker_y: u16,
    marker_left: bool,
    f: &mut Frame<'_>,
) {
    let Some(copy) = &p.copy else { return };
    let ext = copy::extent(p);
    let (row_off, col_off) = v.offset();
    // Copy mode's rows are its window's: the view's first row is the
    // window's `skip`.
    let skip = row_off.saturating_sub(copy::window_top(p));
    let buf = f.buffer_mut();
    // Window cell (row, col) to the frame's, if it is shown.
    let at = |row: u16, col: u16| -> Option<(u16, u16)> {
        let (r, c) = (row.checked_sub(skip)?, col.checked_sub(col_off)?);
        (r < area.height && c < area.width).then(|| (area.x + c, area.y + r))
    };
    for row in skip..skip.saturating_add(area.height) {
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
    let text = marker(p).unwrap_or_default();
    let w = (text.chars().count() as u16).min(area.width);
    let x = if marker_left {
        area.x
    } else {
        area.x + area.width - w
    };
    let spot = Rect::new(x, marker_y, w, 1.min(area.height));
    f.render_widget(Span::styled(text, m.theme.footer_key), spot);
}
