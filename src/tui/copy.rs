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

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use vt100::MouseProtocolMode;

use crate::copymode::{CopyMode, History, Key, Outcome};
use crate::vt::term::View;

use super::keys;
use super::layout::{inner, placements};
use super::model::{Effect, Mode, Model, Pane};

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

/// A key in the grid, zoom or focus that is copy mode's: true if taken.
/// The detach key in focus is checked before (it always goes back). In
/// focus Shift-PgUp/PgDn scroll and the copy key opens copy mode; in the
/// grid and zoom those are actions of the keymap ([`page`], [`open`]).
pub fn key(m: &mut Model, k: KeyEvent, now: Instant, fx: &mut Vec<Effect>) -> bool {
    let Some(id) = target(m) else { return false };
    let focused = matches!(m.mode, Mode::Focus(_));
    let copy_key = m.copy_key;
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
        let rows = i64::from(p.term.size().rows.max(2) - 1);
        scroll(p, focused, dir * rows);
        return true;
    }
    if let Some(mode) = p.copy.as_mut().filter(|c| c.takes_keys()) {
        // The copy key again leaves, as it opened.
        if focused && copy_key.is_some_and(|b| keys::is_byte(&k, b)) {
            leave(p);
            return true;
        }
        let Some(key) = copy_key_of(&k) else {
            return true;
        };
        let outcome = mode.key(&mut p.term, key);
        done(m, &id, outcome, now, fx);
        return true;
    }
    if focused && copy_key.is_some_and(|b| keys::is_byte(&k, b)) {
        open_on(p);
        return true;
    }
    false
}

/// Scrolls the selected pane's history a page (`dir` -1 up, 1 down).
pub fn page(m: &mut Model, dir: i64) {
    let Some(id) = target(m) else { return };
    let focused = matches!(m.mode, Mode::Focus(_));
    let Some(p) = m.pane_mut(&id) else { return };
    let rows = i64::from(p.term.size().rows.max(2) - 1);
    scroll(p, focused, dir * rows);
}

/// Copy mode, with its cursor, on the selected pane (`[`).
pub fn open(m: &mut Model) {
    let Some(id) = target(m) else { return };
    if let Some(p) = m.pane_mut(&id) {
        open_on(p);
    }
}

/// Copy mode with a cursor on `p`: where it is scrolled to, or at the
/// program's cursor.
fn open_on(p: &mut Pane) {
    let ext = p.term.extent();
    match &mut p.copy {
        // Scrolled already: the cursor joins it there.
        Some(mode) => mode.take_keys(ext),
        None => {
            let (r, c) = p.term.screen().cursor_position();
            p.copy = Some(CopyMode::new(ext, Some((r, c)), false));
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
        Outcome::Leave => leave(p),
        Outcome::Copied { text, lines } => {
            leave(p);
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
    let ext = p.term.extent();
    let mode = p.copy.get_or_insert_with(|| {
        let cursor = focused.then(|| p.term.screen().cursor_position());
        CopyMode::new(ext, cursor, true)
    });
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
    let Some(p) = m.pane_mut(&id) else { return };
    if focused && p.term.screen().mouse_protocol_mode() != MouseProtocolMode::None {
        return;
    }
    scroll(p, focused, by);
}

/// The window of the session's screen a pane (or focus) of `rows` x
/// `cols` shows: around copy mode's cursor while it has one, else around
/// the program's cursor. Drawing and the mouse both go by it.
pub fn view(p: &Pane, rows: u16, cols: u16) -> View<'_> {
    let cursor = p.copy.as_ref().and_then(|c| c.cursor_cell(p.term.extent()));
    match cursor {
        Some(cell) => p.term.view_around(rows, cols, cell),
        None => p.term.view(rows, cols),
    }
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
    let Some(mode) = &mut p.copy else { return };
    let ext = p.term.extent();
    if mode.clamp(ext) == Outcome::Leave {
        leave(p);
        return;
    }
    let back = mode.back(ext);
    p.term.scroll_back(back);
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
