//! The sizes of sessions, as the dashboard sees them: what it asks a
//! session to take (a RESIZE: only for focus, where the person at the
//! dashboard is its terminal, or for every pane with `[tui]
//! fit_sessions`), and what it learns a session has (INFO: its size, and
//! whether a person's terminal attached elsewhere holds it). A pane's
//! emulator is kept at the session's own size; the pane shows a window
//! onto it (`super::window`).

use std::time::Instant;

use crate::protocol::{Info, Size};

use super::copy;
use super::layout::{MAX_UNFIT, focus_rows, inner, placements};
use super::model::{Effect, Link, Mode, Model, Pane};

/// After any message: the sizes the dashboard asks for now.
pub fn ask(m: &mut Model, now: Instant, fx: &mut Vec<Effect>) {
    if m.fit {
        fit(m, now, fx);
    } else {
        size_focused(m, now, fx);
    }
}

/// Asks the session for its metadata and size (INFO).
pub fn ask_info(p: &mut Pane, fx: &mut Vec<Effect>) {
    p.infos_out += 1;
    fx.push(Effect::Info(p.id.clone()));
}

/// Asks the session to take `size` (RESIZE), and whether it took (INFO):
/// a person's terminal attached elsewhere keeps its own. The emulator
/// takes the size at once unless the session is held, so the program's
/// redraw is laid out as it means it; or, when the session's output
/// brings its journal's marks, where the output says (see `Pane::marks`).
fn ask_size(p: &mut Pane, size: Size, now: Instant, fx: &mut Vec<Effect>) {
    p.applied = Some(size);
    p.resized_at = Some(now);
    if !p.held && !p.marks {
        p.term.resize(size);
    }
    p.infos_stale = p.infos_out;
    fx.push(Effect::Resize(p.id.clone(), size));
    ask_info(p, fx);
}

/// How soon after our own RESIZE a size other than the one asked for is
/// taken for another client's doing, to be undone by the focus: not at
/// once, so that a size the supervisor will not take cannot start a
/// RESIZE and INFO at every message.
const REFIT_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// What an INFO answer says of the session's size.
pub fn learned(p: &mut Pane, info: &Info, now: Instant) {
    p.infos_out = p.infos_out.saturating_sub(1);
    // Asked before our last RESIZE: its size is the old one.
    let stale = p.infos_stale > 0;
    p.infos_stale = p.infos_stale.saturating_sub(1);
    if let Some(size) = info.size().filter(|_| !stale) {
        let shown = shown(size);
        p.session_size = Some(shown);
        // A person's terminal attached elsewhere sets the size; a
        // supervisor that does not say so is seen holding it by
        // not taking the size we asked for.
        let was_held = p.held;
        p.held = match info.terminals {
            Some(n) => n > 0,
            None => p.applied.is_some_and(|a| a != size),
        };
        // Free, and not at the size we asked for: another client set it
        // since. An attach that has left kept its size: asked for again
        // (if the pane is in focus here, the person looking at it is its
        // terminal). Anyone else (a second dashboard's focus) is the more
        // recent: theirs until a key here takes it back (`take_back`);
        // asked for again at once, the two resized it for as long as both
        // were in focus.
        let settled = p
            .resized_at
            .is_none_or(|t| now.saturating_duration_since(t) >= REFIT_AFTER);
        let elsewhere = p.applied.is_some_and(|a| a != size);
        if info.terminals.is_some() && !p.held && settled && elsewhere {
            if was_held {
                p.applied = None;
            } else {
                p.taken = true;
            }
        }
        if !elsewhere {
            p.taken = false;
        }
        // The pane is a window onto the session's own screen: its
        // emulator is at the session's size (held or not); with marks,
        // it takes that size where the output says.
        if !p.marks {
            p.term.resize(shown);
        }
        copy::follow(p);
    } else if let Some(n) = info.terminals {
        p.held = n > 0;
    }
}

/// The person here typed into (or focused) a session another client
/// resized since: the dashboard's size is asked for again. Whether it was.
pub fn take_back(p: &mut Pane) -> bool {
    let taken = std::mem::take(&mut p.taken);
    if taken {
        p.applied = None;
    }
    taken
}

/// The size a session's emulator is kept at: the session's, but at most
/// [`MAX_UNFIT`] (an emulator holds its whole screen, 32 bytes a cell,
/// so a session sized absurdly by some client costs no gigabytes).
pub fn shown(size: Size) -> Size {
    Size {
        cols: size.cols.clamp(1, MAX_UNFIT.cols),
        rows: size.rows.clamp(1, MAX_UNFIT.rows),
    }
}

/// The focused session takes the dashboard's size less the bar's row,
/// as a person's terminal gives it (and keeps it when focus ends: a
/// session has one size, and the grid shows a window onto it). Nothing
/// else in the dashboard resizes a session: pages, zoom, the terminal
/// resized and sessions coming and going send no RESIZE.
fn size_focused(m: &mut Model, now: Instant, fx: &mut Vec<Effect>) {
    let Mode::Focus(id) = &m.mode else { return };
    let want = Size {
        cols: m.size.0,
        rows: focus_rows(m.size.1),
    }
    .clamped();
    let id = id.clone();
    let Some(p) = m.pane_mut(&id) else { return };
    if p.exit.is_some() || p.link != Link::Live || p.applied == Some(want) {
        return;
    }
    if p.session_size == Some(want) && !p.held {
        // Already its size: a RESIZE would only make the program redraw.
        p.applied = Some(want);
        return;
    }
    ask_size(p, want, now, fx);
    copy::follow(p);
}

/// With `fit_sessions`: resizes sessions (and their emulators) to what
/// they are shown in.
fn fit(m: &mut Model, now: Instant, fx: &mut Vec<Effect>) {
    let targets: Vec<(String, Size)> = match &m.mode {
        // All but the bottom row, which says where you are.
        Mode::Focus(id) => vec![(
            id.clone(),
            Size {
                cols: m.size.0,
                rows: focus_rows(m.size.1),
            },
        )],
        _ => placements(m)
            .rects
            .into_iter()
            .map(|(id, r)| {
                let i = inner(r);
                (
                    id,
                    Size {
                        cols: i.width,
                        rows: i.height,
                    },
                )
            })
            .collect(),
    };
    for (id, size) in targets {
        let size = size.clamped();
        let Some(p) = m.pane_mut(&id) else { continue };
        if p.exit.is_some() || p.link != Link::Live || p.applied == Some(size) {
            continue;
        }
        ask_size(p, size, now, fx);
        copy::follow(p);
    }
}
