//! Selecting text with the mouse: a drag over a pane (in the grid or
//! zoom) or over the focused session selects from where the button went
//! down to where it is, and letting go copies the text through the
//! terminal (OSC 52), as copy mode's `y` does. A click that does not move
//! selects the pane as before. The selection is copy mode's (which shows
//! it and cuts the text), so it stays on its rows while output arrives;
//! dragging past the pane's top or bottom edge scrolls its history.
//!
//! A focused program that asked for the mouse (an editor, `htop`) gets
//! drags as its own; Shift-drag selects all the same.

use std::time::Instant;

use crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};
use vt100::MouseProtocolMode;

use crate::copymode::CopyMode;

use super::copy;
use super::layout::{focus_rows, inner, placements};
use super::model::{Drag, Effect, Mode, Model};

/// A mouse event, if it is a drag's: true when taken (a press only
/// notes where it was, and leaves the click to the grid).
pub fn mouse(m: &mut Model, ev: MouseEvent, now: Instant, fx: &mut Vec<Effect>) -> bool {
    match ev.kind {
        MouseEventKind::Down(MouseButton::Left) => {
            m.drag = press(m, ev);
            // In focus the press is the selection's, not a click.
            m.drag.as_ref().is_some_and(|d| d.focused)
        }
        MouseEventKind::Drag(MouseButton::Left) => {
            let Some(drag) = m.drag.as_mut() else {
                return false;
            };
            let first = !drag.moved;
            drag.moved = true;
            let drag = drag.clone();
            extend(m, &drag, ev, first);
            true
        }
        MouseEventKind::Up(MouseButton::Left) => {
            let Some(drag) = m.drag.take() else {
                return false;
            };
            if drag.moved {
                let Some(p) = m.pane_mut(&drag.id) else {
                    return true;
                };
                if let Some(mode) = &p.copy {
                    let outcome = mode.copy_selection(&mut p.term);
                    copy::done(m, &drag.id, outcome, now, fx);
                }
            }
            drag.moved || drag.focused
        }
        _ => false,
    }
}

/// The drag a left press starts, if it is over a session's text (and not
/// a focused program's that wants the mouse).
fn press(m: &Model, ev: MouseEvent) -> Option<Drag> {
    let at = Position::new(ev.column, ev.row);
    let (id, area, focused) = match &m.mode {
        Mode::Focus(id) => {
            let p = m.pane(id)?;
            let wants = p.term.screen().mouse_protocol_mode() != MouseProtocolMode::None;
            if wants && !ev.modifiers.contains(KeyModifiers::SHIFT) {
                return None;
            }
            let area = Rect::new(0, 0, m.size.0, focus_rows(m.size.1));
            (id.clone(), area, true)
        }
        Mode::Grid | Mode::Zoom(_) => {
            let (id, r) = placements(m)
                .rects
                .into_iter()
                .find(|(_, r)| inner(*r).contains(at))?;
            (id, inner(r), false)
        }
        _ => return None,
    };
    area.contains(at).then_some(Drag {
        id,
        area,
        focused,
        at: (ev.column, ev.row),
        moved: false,
    })
}

/// The button moved on: the selection runs from the press to here (the
/// first move starts it where the button went down). Copy mode sees the
/// pane's window as its view (`super::copy::extent`), so a row of the
/// pane is a row of copy mode's view.
fn extend(m: &mut Model, drag: &Drag, ev: MouseEvent, first: bool) {
    let Some(p) = m.pane_mut(&drag.id) else {
        return;
    };
    let a = drag.area;
    let (rows, cols) = (a.height, a.width);
    if rows == 0 || cols == 0 {
        return;
    }
    if first && p.copy.is_none() {
        copy::start_window(p, rows);
        p.copy = Some(CopyMode::new(copy::extent(p), None, false));
        copy::follow(p);
    }
    // A frame cell of the area to a cell of copy mode's view.
    let cell = |p: &super::model::Pane, (x, y): (u16, u16)| {
        let (_, col_off) = copy::view(p, rows, cols).offset();
        let last = copy::extent(p).rows.clamp(1, rows) - 1;
        let r = (y.clamp(a.y, a.y + rows - 1) - a.y).min(last);
        let c = x.clamp(a.x, a.x + cols - 1) - a.x;
        (r, c + col_off)
    };
    if first {
        let anchor = cell(p, drag.at);
        let ext = copy::extent(p);
        if let Some(mode) = &mut p.copy {
            mode.select(ext, anchor, anchor);
        }
    }
    // Past the top or bottom edge: the history scrolls a row.
    let by = if ev.row < a.y {
        -1
    } else if ev.row >= a.y + rows {
        1
    } else {
        0
    };
    let ext = copy::extent(p);
    if let Some(mode) = &mut p.copy
        && by != 0
    {
        mode.scroll(ext, by);
    }
    copy::follow(p);
    let to = cell(p, (ev.column, ev.row));
    let ext = copy::extent(p);
    if let Some(mode) = &mut p.copy {
        mode.drag_to(ext, to);
    }
    copy::follow(p);
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use crossterm::event::{KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};

    use crate::tui::layout::{inner, placements};
    use crate::tui::model::{Effect, Model, Msg, SessionMsg};
    use crate::tui::update::harness::*;
    use crate::tui::update::update;

    fn mouse(kind: MouseEventKind, column: u16, row: u16, shift: bool) -> Msg {
        Msg::Mouse(MouseEvent {
            kind,
            column,
            row,
            modifiers: if shift {
                KeyModifiers::SHIFT
            } else {
                KeyModifiers::NONE
            },
        })
    }

    /// Presses at `from`, drags through to `to` and lets go there.
    fn drag(m: &mut Model, from: (u16, u16), to: (u16, u16), shift: bool) -> Vec<Effect> {
        let now = Instant::now();
        let left = MouseButton::Left;
        let mut fx = update(
            m,
            mouse(MouseEventKind::Down(left), from.0, from.1, shift),
            now,
        );
        fx.extend(update(
            m,
            mouse(MouseEventKind::Drag(left), to.0, to.1, shift),
            now,
        ));
        fx.extend(update(
            m,
            mouse(MouseEventKind::Up(left), to.0, to.1, shift),
            now,
        ));
        fx
    }

    fn copied(fx: &[Effect]) -> Vec<String> {
        fx.iter()
            .filter_map(|e| match e {
                Effect::Clipboard(t) => Some(t.clone()),
                _ => None,
            })
            .collect()
    }

    fn text(m: &mut Model, id: &str, s: &str) {
        let msg = Msg::Session(id.into(), SessionMsg::Output(s.as_bytes().to_vec()));
        update(m, msg, Instant::now());
    }

    #[test]
    fn a_drag_over_a_pane_copies_the_text_between_press_and_release() {
        let now = Instant::now();
        let mut m = model(100, 31);
        live(&mut m, &["a", "b"], now);
        text(&mut m, "b", "alpha beta\r\ngamma delta\r\n$ ");
        let body = placements(&m)
            .rects
            .into_iter()
            .find(|(id, _)| id == "b")
            .map(|(_, r)| inner(r))
            .expect("b's pane");
        let fx = drag(
            &mut m,
            (body.x + 6, body.y),
            (body.x + 4, body.y + 1),
            false,
        );
        assert_eq!(copied(&fx), ["beta\ngamma"]);
        assert_eq!(notice(&m), "copied 2 lines");
        // The press selected the pane; the copy left it live.
        assert_eq!(sel(&m), "b");
        assert!(m.pane("b").is_some_and(|p| p.copy.is_none()));
        // A click that does not move copies nothing.
        let left = MouseButton::Left;
        let mut fx = update(
            &mut m,
            mouse(MouseEventKind::Down(left), body.x, body.y, false),
            now,
        );
        fx.extend(update(
            &mut m,
            mouse(MouseEventKind::Up(left), body.x, body.y, false),
            now,
        ));
        assert!(copied(&fx).is_empty(), "{fx:?}");
    }

    #[test]
    fn a_drag_in_focus_selects_unless_the_program_wants_the_mouse() {
        let now = Instant::now();
        let mut m = model(100, 31);
        live(&mut m, &["a"], now);
        update(&mut m, press(KeyCode::Enter), now);
        text(&mut m, "a", "one two three\r\n");
        let fx = drag(&mut m, (4, 0), (6, 0), false);
        assert_eq!(copied(&fx), ["two"]);
        // A program that asked for the mouse gets the drag; Shift-drag
        // still selects.
        text(&mut m, "a", "\x1b[?1002h\x1b[?1006h");
        let fx = drag(&mut m, (0, 0), (2, 0), false);
        assert!(copied(&fx).is_empty());
        assert!(!inputs(&fx).is_empty(), "the program got it: {fx:?}");
        let fx = drag(&mut m, (0, 0), (2, 0), true);
        assert_eq!(copied(&fx), ["one"]);
    }
}
