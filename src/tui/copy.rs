//! A pane's history in the dashboard: the wheel and Shift-PgUp/PgDn scroll
//! it, `[` (in the grid or zoom) and the copy key (in focus) open copy
//! mode on it, and while copy mode has a cursor it takes the keys. The
//! mode itself is [`crate::copymode`]'s, shared with `hm attach`; here is
//! which pane it is on, what a key or a wheel notch means to it, and
//! keeping the pane's emulator scrolled to where the mode's view is.
//!
//! In focus, scrolling back is copy mode with a cursor, since every other
//! key there is the program's; in the grid and zoom it only scrolls, and
//! keys keep their meaning until `[`. A program in focus that asked for
//! the mouse gets the wheel (its own scrolling), not the dashboard.
//!
//! A pane is often smaller than its session's screen. Copy mode then sees
//! the pane's window as its view ([`extent`]): scrolling back first moves
//! the window up the live screen, then into the history, row by row, and
//! the rows under the window (blank) are not part of it.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use vt100::MouseProtocolMode;

use crate::copymode::{CopyMode, Extent, History, Key, Line, Outcome, RowNo};

use super::layout::{inner, placements};
use super::model::{CopyWindow, Effect, Mode, Model, Pane};
use super::screen::{self, View};
use crate::vt::keys;

/// Rows a notch of the wheel scrolls.
const WHEEL_ROWS: i64 = 3;

/// The pane keys go to: the focused one, or the selected one in the grid
/// and zoom.
fn target(m: &Model) -> Option<String> {
    match &m.mode {
        Mode::Focus(id) => Some(id.clone()),
        Mode::Grid | Mode::Zoom(_) => m.selected.clone(),
        _ => None,
    }
}

/// How many of the session's rows its pane shows (a page to scroll): the
/// screen less the bar in focus, the pane's inside in the grid.
fn shown_rows(m: &Model, id: &str) -> u16 {
    match &m.mode {
        Mode::Focus(_) => super::layout::focus_rows(m.size.1),
        _ => placements(m)
            .rects
            .into_iter()
            .find(|(p, _)| p == id)
            .map_or(u16::MAX, |(_, r)| inner(r).height),
    }
}

/// A key in the grid, zoom or focus that is copy mode's: true if taken.
/// The detach key in focus is checked before (it always goes back). In
/// focus Shift-PgUp/PgDn scroll and the copy key opens copy mode; in the
/// grid and zoom those are actions of the keymap ([`page`], [`open`]).
pub fn key(m: &mut Model, k: KeyEvent, now: Instant, fx: &mut Vec<Effect>) -> bool {
    let Some(id) = target(m) else { return false };
    let focused = matches!(m.mode, Mode::Focus(_));
    let copy_key = m.copy_key;
    let shown = shown_rows(m, &id);
    let Some(p) = m.pane_mut(&id) else {
        return false;
    };
    let shift = k.modifiers.contains(KeyModifiers::SHIFT);
    let page = match k.code {
        KeyCode::PageUp if shift && focused => Some(-1),
        KeyCode::PageDown if shift && focused => Some(1),
        _ => None,
    };
    // Shift-PgUp/PgDn scroll a page in focus: a terminal keeps them for
    // its own scrollback, and a program never gets them.
    if let Some(dir) = page {
        if p.copy.is_none() {
            start_window(p, shown);
        }
        let rows = i64::from(extent(p).rows.max(2) - 1);
        scroll(p, focused, dir * rows);
        return true;
    }
    let ext = extent(p);
    if let Some(mode) = p.copy.as_mut().filter(|c| c.takes_keys()) {
        // The copy key again leaves, as it opened.
        if focused && copy_key.is_some_and(|b| keys::is_byte(&k, b)) {
            leave(p);
            return true;
        }
        let Some(key) = copy_key_of(&k) else {
            return true;
        };
        let outcome = mode.key(
            &mut Windowed {
                term: &mut p.term,
                ext,
            },
            key,
        );
        done(m, &id, outcome, now, fx);
        return true;
    }
    if focused && copy_key.is_some_and(|b| keys::is_byte(&k, b)) {
        open_on(p, shown);
        return true;
    }
    false
}

/// Scrolls the selected pane's history a page (`dir` -1 up, 1 down).
pub fn page(m: &mut Model, dir: i64) {
    let Some(id) = target(m) else { return };
    let focused = matches!(m.mode, Mode::Focus(_));
    let shown = shown_rows(m, &id);
    let Some(p) = m.pane_mut(&id) else { return };
    if p.copy.is_none() {
        start_window(p, shown);
    }
    let rows = i64::from(extent(p).rows.max(2) - 1);
    scroll(p, focused, dir * rows);
}

/// Copy mode, with its cursor, on the selected pane (`[`).
pub fn open(m: &mut Model) {
    let Some(id) = target(m) else { return };
    let shown = shown_rows(m, &id);
    if let Some(p) = m.pane_mut(&id) {
        open_on(p, shown);
    }
}

/// Copy mode with a cursor on `p`, `shown` rows of it in view: where it
/// is scrolled to, or at the program's cursor.
fn open_on(p: &mut Pane, shown: u16) {
    if p.copy.is_none() {
        start_window(p, shown);
    }
    let ext = extent(p);
    match &mut p.copy {
        // Scrolled already: the cursor joins it there.
        Some(mode) => mode.take_keys(ext),
        None => {
            let cursor = program_cursor(p, ext);
            p.copy = Some(CopyMode::new(ext, Some(cursor), false));
        }
    }
    follow(p);
}

/// What a key (or a mouse selection) came to: over, or copied (over
/// too).
pub(super) fn done(m: &mut Model, id: &str, outcome: Outcome, now: Instant, fx: &mut Vec<Effect>) {
    let Some(p) = m.pane_mut(id) else { return };
    match outcome {
        Outcome::Stay => follow(p),
        Outcome::Leave => {
            leave(p);
            m.left_copy = !matches!(m.mode, Mode::Focus(_));
        }
        Outcome::Copied { text, lines } => {
            leave(p);
            m.left_copy = !matches!(m.mode, Mode::Focus(_));
            let what = if lines == 1 {
                "copied 1 line".to_owned()
            } else {
                format!("copied {lines} lines")
            };
            m.notify(what, now);
            fx.push(Effect::Clipboard(text));
        }
    }
}

/// Scrolls a pane's history `by` rows (up when negative), entering the
/// scrolled view if need be; in focus the view has a cursor and takes
/// the keys. Back at the live screen, a view entered so ends.
fn scroll(p: &mut Pane, focused: bool, by: i64) {
    let ext = extent(p);
    let cursor = focused.then(|| program_cursor(p, ext));
    let mode = p
        .copy
        .get_or_insert_with(|| CopyMode::new(ext, cursor, true));
    match mode.scroll(ext, by) {
        Outcome::Stay => follow(p),
        _ => leave(p),
    }
}

/// The wheel: over a pane in the grid or zoom it scrolls that pane; in
/// focus it scrolls the focused one, unless its program asked for the
/// mouse (the wheel is then its own, and not stolen).
pub fn wheel(m: &mut Model, ev: MouseEvent) {
    let by = match ev.kind {
        MouseEventKind::ScrollUp => -WHEEL_ROWS,
        MouseEventKind::ScrollDown => WHEEL_ROWS,
        _ => return,
    };
    let (id, focused) = match &m.mode {
        Mode::Focus(id) => (id.clone(), true),
        Mode::Grid | Mode::Zoom(_) => {
            let at = ratatui::layout::Position::new(ev.column, ev.row);
            let hit = placements(m)
                .rects
                .into_iter()
                .find(|(_, r)| inner(*r).contains(at));
            let Some((id, _)) = hit else { return };
            (id, false)
        }
        _ => return,
    };
    let shown = shown_rows(m, &id);
    let Some(p) = m.pane_mut(&id) else { return };
    if focused && p.term.screen().mouse_protocol_mode() != MouseProtocolMode::None {
        return;
    }
    if p.copy.is_none() {
        start_window(p, shown);
    }
    scroll(p, focused, by);
}

/// What of the emulator's screen a view of `rows` x `cols` shows while
/// copy mode is open: its window (see [`extent`]), with its cursor's
/// column in sight; without copy mode, the rows around the program's
/// cursor (focus draws that; a pane in the grid draws its window,
/// `super::window`). The drawing and the mouse both go by it.
pub fn view(p: &Pane, rows: u16, cols: u16) -> View<'_> {
    let Some(mode) = &p.copy else {
        return screen::view(&p.term, rows, cols);
    };
    // `view_around` puts the cell on the view's last row, and its column
    // at the right edge when it must scroll: asked for half a view to the
    // right of the cursor, it puts the cursor in the middle, with what
    // follows it in sight (a search's match, found far right in a narrow
    // pane, was hidden under the edge's `›`).
    let top = window_top(p);
    let col = mode
        .cursor_cell(extent(p))
        .map_or(0, |(_, c)| c.saturating_add(cols / 2));
    screen::view_around(
        &p.term,
        rows,
        cols,
        (top.saturating_add(rows.saturating_sub(1)), col),
    )
}

/// Back to the live screen.
pub fn leave(p: &mut Pane) {
    p.copy = None;
    p.term.scroll_back(0);
}

/// Keeps the pane's emulator scrolled to where its copy mode's view is,
/// after output, a resize or a key: the view stays on the rows it shows
/// while new ones arrive. A view that only scrolled and finds itself at
/// the live screen (the history was cleared) ends.
pub fn follow(p: &mut Pane) {
    let ext = extent(p);
    let above = usize::from(live_top(p));
    let Some(mode) = &mut p.copy else { return };
    if mode.clamp(ext) == Outcome::Leave {
        leave(p);
        return;
    }
    // The rows above the window on the live screen are passed first; the
    // emulator scrolls for the rest.
    p.term.scroll_back(mode.back(ext).saturating_sub(above));
}

/// The window copy mode starts from: the pane's `rows` as the pane shows
/// them on the live screen.
pub(super) fn start_window(p: &mut Pane, rows: u16) {
    let screen = p.term.size().rows;
    let rows = rows.clamp(1, screen);
    let top = super::window::live_top(p, rows);
    p.copy_window = CopyWindow {
        rows,
        below: screen - rows - top.min(screen - rows),
    };
}

/// The window's first row on the live screen.
fn live_top(p: &Pane) -> u16 {
    let screen = p.term.size().rows;
    let rows = extent(p).rows;
    screen - rows - p.copy_window.below.min(screen - rows)
}

/// The history as copy mode sees it in this pane: a view of the pane's
/// rows, ending where the pane's window ended on the live screen.
pub fn extent(p: &Pane) -> Extent {
    let mut ext = p.term.extent();
    let w = p.copy_window;
    if w.rows > 0 && w.rows < ext.rows {
        let below = w.below.min(ext.rows - w.rows);
        ext.rows_kept = ext.rows_kept.saturating_sub(usize::from(below));
        ext.rows = w.rows;
    }
    ext
}

/// The screen row (of the emulator, as scrolled) that copy mode's view
/// starts at.
pub fn window_top(p: &Pane) -> u16 {
    let top = live_top(p);
    let back = p.copy.as_ref().map_or(0, |m| m.back(extent(p)));
    top - u16::try_from(back.min(usize::from(top))).unwrap_or(top)
}

/// Keeps the rows copy mode's view has in step with the pane it is drawn
/// in, after the layout changed (zoom, a resize, focus).
pub fn relayout(m: &mut Model) {
    if m.panes.iter().all(|p| p.copy.is_none()) {
        return;
    }
    let ids: Vec<String> = m
        .panes
        .iter()
        .filter(|p| p.copy.is_some())
        .map(|p| p.id.clone())
        .collect();
    for id in ids {
        let shown = shown_rows(m, &id);
        if let Some(p) = m.pane_mut(&id)
            && p.copy_window.rows != shown.min(p.term.size().rows)
        {
            p.copy_window.rows = shown.min(p.term.size().rows);
            follow(p);
        }
    }
}

/// The program's cursor as a cell of copy mode's view.
fn program_cursor(p: &Pane, ext: Extent) -> (u16, u16) {
    let (r, c) = p.term.screen().cursor_position();
    let row = r.saturating_sub(live_top(p));
    (row.min(ext.rows.saturating_sub(1)), c)
}

/// A pane's emulator read by copy mode through the pane's window.
struct Windowed<'a> {
    term: &'a mut crate::vt::term::Term<crate::vt::mouse::Modes>,
    ext: Extent,
}

impl History for Windowed<'_> {
    fn extent(&self) -> Extent {
        self.ext
    }

    fn lines(&mut self, from: RowNo, to: RowNo) -> Vec<Line> {
        self.term.lines(from, to)
    }
}

/// A key event as copy mode reads it; `None` for keys it has no use for
/// (Alt combinations, function keys).
fn copy_key_of(k: &KeyEvent) -> Option<Key> {
    let m = k.modifiers;
    if m.intersects(
        KeyModifiers::ALT | KeyModifiers::SUPER | KeyModifiers::HYPER | KeyModifiers::META,
    ) {
        return None;
    }
    Some(match k.code {
        KeyCode::Char(c) if m.contains(KeyModifiers::CONTROL) => Key::Ctrl(c.to_ascii_lowercase()),
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::Left => Key::Left,
        KeyCode::Right => Key::Right,
        KeyCode::PageUp => Key::PageUp,
        KeyCode::PageDown => Key::PageDown,
        KeyCode::Home => Key::Home,
        KeyCode::End => Key::End,
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        KeyCode::Backspace => Key::Backspace,
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
