//! What keys, clicks and pastes mean to the dashboard: moving through the
//! grid and its pages, zoom, kill, new sessions, the filter, sorting and
//! help, and the prompts some of them open. In focus they are the
//! session's instead (see [`super::focus`]).

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEventKind};

use crate::paths;

use super::copy;
use super::focus;
use super::layout::placements;
use super::model::{Effect, Mode, Model, NewStep};
use super::sessions;

/// Two clicks this close together are a double click.
const DOUBLE_CLICK: Duration = Duration::from_millis(400);

/// What a key means in the mode the dashboard is in.
pub fn key(m: &mut Model, k: KeyEvent, now: Instant, fx: &mut Vec<Effect>) {
    match m.mode.clone() {
        // Every key but the detach key is the session's (or copy mode's,
        // when it is open).
        Mode::Focus(id) => focus::key(m, id, k, now, fx),
        Mode::ConfirmKill(id) => {
            m.mode = Mode::Grid;
            if let KeyCode::Char('y' | 'Y') = k.code {
                let size_too = !m.fit;
                let Some(p) = m.pane_mut(&id) else { return };
                if p.ended() {
                    // It ended while we asked.
                    return;
                }
                fx.push(Effect::Kill(id.clone()));
                // A question too: a supervisor that cannot act on the
                // kill (stopped) is then shown as not responding.
                sessions::poll(p, now, size_too, fx);
                if p.unresponsive() {
                    m.notify(
                        format!("'{id}' is not responding; killed once it resumes"),
                        now,
                    );
                } else {
                    m.notify(format!("killing '{id}'"), now);
                }
            }
        }
        Mode::NewSession {
            step,
            mut id,
            mut command,
        } => match (k.code, step) {
            (KeyCode::Esc, _) => m.mode = Mode::Grid,
            (KeyCode::Enter, NewStep::Id) => {
                // `host:id` starts it on that machine.
                let plain = match crate::remote::split_target(&id) {
                    Some((host, plain)) if m.hosts.iter().any(|h| h == host) => plain,
                    _ => id.as_str(),
                };
                if let Err(e) = paths::validate_id(plain) {
                    m.notify(e.to_string(), now);
                } else if let Some(pid) = m.pane(&id).and_then(|p| p.orphan) {
                    // Taking the id would lose the only record of it.
                    m.notify(format!("'{id}' is still held by pid {pid}"), now);
                } else if m.pane(&id).is_some_and(|p| !p.ended()) {
                    m.notify(format!("session '{id}' already exists"), now);
                } else {
                    m.mode = Mode::NewSession {
                        step: NewStep::Command,
                        id,
                        command,
                    };
                }
            }
            (KeyCode::Tab, NewStep::Command | NewStep::Dir | NewStep::Label) => {
                let step = match step {
                    NewStep::Command => NewStep::Dir,
                    NewStep::Dir => NewStep::Label,
                    _ => NewStep::Command,
                };
                m.mode = Mode::NewSession { step, id, command };
            }
            (KeyCode::Enter, NewStep::Command | NewStep::Dir | NewStep::Label) => {
                let command = if command.trim().is_empty() {
                    m.shell.clone()
                } else {
                    command
                };
                m.starting.insert(id.clone());
                let dir = m.new_dir.trim();
                fx.push(Effect::Spawn {
                    id: id.clone(),
                    command,
                    workdir: (!dir.is_empty() && dir != m.cwd).then(|| dir.to_owned()),
                    label: Some(m.new_label.trim().to_owned()).filter(|l| !l.is_empty()),
                });
                m.notify(format!("starting '{id}'…"), now);
                m.mode = Mode::Grid;
            }
            // Ctrl-U clears the field, as in a shell.
            (KeyCode::Char('u'), _) if k.modifiers.contains(KeyModifiers::CONTROL) => {
                match step {
                    NewStep::Id => id.clear(),
                    NewStep::Command => command.clear(),
                    NewStep::Dir => m.new_dir.clear(),
                    NewStep::Label => m.new_label.clear(),
                }
                m.mode = Mode::NewSession { step, id, command };
            }
            (KeyCode::Backspace, NewStep::Dir) => {
                m.new_dir.pop();
                m.mode = Mode::NewSession { step, id, command };
            }
            (KeyCode::Backspace, NewStep::Label) => {
                m.new_label.pop();
                m.mode = Mode::NewSession { step, id, command };
            }
            (KeyCode::Char(c), NewStep::Label) if !k.modifiers.contains(KeyModifiers::CONTROL) => {
                push_label(&mut m.new_label, c);
                m.mode = Mode::NewSession { step, id, command };
            }
            (KeyCode::Char(c), NewStep::Dir) if !k.modifiers.contains(KeyModifiers::CONTROL) => {
                m.new_dir.push(c);
                m.mode = Mode::NewSession { step, id, command };
            }
            (KeyCode::Backspace, NewStep::Id) => {
                id.pop();
                m.mode = Mode::NewSession { step, id, command };
            }
            (KeyCode::Backspace, NewStep::Command) => {
                command.pop();
                m.mode = Mode::NewSession { step, id, command };
            }
            (KeyCode::Char(c), NewStep::Id) if !k.modifiers.contains(KeyModifiers::CONTROL) => {
                if id.len() < paths::MAX_ID_LEN {
                    id.push(c);
                }
                m.mode = Mode::NewSession { step, id, command };
            }
            (KeyCode::Char(c), NewStep::Command)
                if !k.modifiers.contains(KeyModifiers::CONTROL) =>
            {
                command.push(c);
                m.mode = Mode::NewSession { step, id, command };
            }
            _ => {}
        },
        Mode::Filter => match k.code {
            KeyCode::Esc => {
                m.filter.clear();
                m.mode = Mode::Grid;
            }
            KeyCode::Enter => m.mode = Mode::Grid,
            KeyCode::Backspace => {
                m.filter.pop();
                m.page = 0;
            }
            // Ctrl-U clears the field, as in a shell.
            KeyCode::Char('u') if k.modifiers.contains(KeyModifiers::CONTROL) => {
                m.filter.clear();
                m.page = 0;
            }
            KeyCode::Char(c) if !k.modifiers.contains(KeyModifiers::CONTROL) => {
                m.filter.push(c);
                m.page = 0;
            }
            _ => {}
        },
        Mode::Help | Mode::Explain(_) => m.mode = Mode::Grid,
        Mode::Grid | Mode::Zoom(_) => grid_key(m, k, now, fx),
    }
}

fn grid_key(m: &mut Model, k: KeyEvent, now: Instant, fx: &mut Vec<Effect>) {
    // Shift-PgUp/PgDn, `[`, and every key while copy mode has a cursor.
    if copy::key(m, k, now, fx) {
        return;
    }
    let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
    let other = k.modifiers.intersects(
        KeyModifiers::ALT | KeyModifiers::SUPER | KeyModifiers::HYPER | KeyModifiers::META,
    );
    // Keys mean what they say: Ctrl-Z is not `z`, Alt-x is not `x`. The one
    // combination the grid takes is Ctrl-C; others are ignored.
    if other || (ctrl && k.code != KeyCode::Char('c')) {
        return;
    }
    match k.code {
        KeyCode::Char('q') => m.quit = true,
        KeyCode::Char('c') if ctrl => m.quit = true,
        KeyCode::Left | KeyCode::Char('h') => step(m, -1, 0),
        KeyCode::Right | KeyCode::Char('l') => step(m, 1, 0),
        KeyCode::Up | KeyCode::Char('k') => step(m, 0, -1),
        KeyCode::Down | KeyCode::Char('j') => step(m, 0, 1),
        KeyCode::Enter => {
            if let Some(id) = m.selected.clone() {
                focus::enter(m, id, now);
            }
        }
        // The real terminal for the selected session: a raw attach, back
        // here with the detach key.
        KeyCode::Char('a') => {
            if let Some(id) = m.selected.clone()
                && m.pane(&id).is_some_and(|p| !p.ended())
            {
                fx.push(Effect::RawAttach(id));
            }
        }
        KeyCode::Char('R') => super::lost::restore_key(m, now, fx),
        KeyCode::Char('r') => {
            if let Some(id) = m.selected.clone()
                && m.pane(&id).is_some_and(|p| p.ended() && p.orphan.is_none())
            {
                // The pane gives way to the new session when it is found.
                m.starting.insert(id.clone());
                m.panes.retain(|p| p.id != id);
                fx.push(Effect::Restart(id));
            }
        }
        KeyCode::Char('x') => {
            if let Some(id) = m.selected.clone() {
                match m.pane(&id) {
                    Some(p) if p.ended() => {
                        // Already over: `x` clears the pane away and
                        // forgets the session's record (an orphan's pane
                        // stays away while it is one).
                        if p.orphan.is_some() {
                            m.dismissed.insert(id.clone());
                        } else {
                            fx.push(Effect::Forget(id.clone()));
                        }
                        // The neighbour takes the selection, not the first
                        // pane: a second `x` must not land far away.
                        let at = m.visible_ids().iter().position(|i| *i == id);
                        m.panes.retain(|p| p.id != id);
                        let ids = m.visible_ids();
                        m.selected = at
                            .map(|i| i.min(ids.len().saturating_sub(1)))
                            .and_then(|i| ids.get(i).cloned());
                    }
                    Some(_) => m.mode = Mode::ConfirmKill(id),
                    None => {}
                }
            }
        }
        KeyCode::Char('z') => {
            m.mode = match (&m.mode, m.selected.clone()) {
                (Mode::Zoom(_), _) | (_, None) => Mode::Grid,
                (_, Some(id)) => Mode::Zoom(id),
            };
        }
        KeyCode::Esc if matches!(m.mode, Mode::Zoom(_)) => m.mode = Mode::Grid,
        // A filter kept with Enter is cleared the way it is while typed.
        KeyCode::Esc => m.filter.clear(),
        KeyCode::Char('+') => {
            let cur = placements(m).grid.cols;
            m.columns = Some(cur.saturating_add(1).min(16));
        }
        KeyCode::Char('-') => {
            let cur = placements(m).grid.cols;
            m.columns = Some(cur.saturating_sub(1).max(1));
        }
        KeyCode::Char('=') => m.columns = None,
        KeyCode::Char('n') => {
            let id = (1..)
                .map(|i| format!("s{i}"))
                .find(|c| m.pane(c).is_none())
                .unwrap_or_else(|| "s".into());
            m.new_dir = m.cwd.clone();
            m.new_label.clear();
            m.mode = Mode::NewSession {
                step: NewStep::Id,
                id,
                command: String::new(),
            };
        }
        KeyCode::Char('s') => {
            m.by_state = !m.by_state;
            m.page = 0;
            let how = if m.by_state {
                "sorted by state: needs you first, then the most recently active"
            } else {
                "sorted by id"
            };
            m.notify(how, now);
        }
        KeyCode::Char('/') => m.mode = Mode::Filter,
        KeyCode::Char('?') => m.mode = Mode::Help,
        KeyCode::Char('e') => {
            if let Some(id) = m.selected.clone() {
                m.mode = Mode::Explain(id);
            }
        }
        KeyCode::Tab => next_attention(m, now),
        KeyCode::PageDown => {
            let p = placements(m);
            m.page = (p.page + 1).min(p.pages - 1);
            m.selected = placements(m).rects.first().map(|(id, _)| id.clone());
        }
        KeyCode::PageUp => {
            let p = placements(m);
            m.page = p.page.saturating_sub(1);
            m.selected = placements(m).rects.first().map(|(id, _)| id.clone());
        }
        _ => {}
    }
}

/// Moves the selection by whole cells of the grid, across pages.
fn step(m: &mut Model, dx: i32, dy: i32) {
    let ids = m.visible_ids();
    if ids.is_empty() {
        return;
    }
    let cur = m
        .selected
        .as_ref()
        .and_then(|s| ids.iter().position(|i| i == s))
        .unwrap_or(0);
    let cols = i32::from(placements(m).grid.cols.max(1));
    let next = (cur as i32 + dx + dy * cols).clamp(0, ids.len() as i32 - 1) as usize;
    // The page follows (see `show_selected`).
    m.selected = Some(ids[next].clone());
    if let Mode::Zoom(_) = m.mode {
        m.mode = Mode::Zoom(ids[next].clone());
    }
}

/// Tab: the sessions that need their user, in one round: those waiting
/// (the longest waiting first), then those that finished work or ended, in
/// grid order. Each press selects the one after the selected in that round.
fn next_attention(m: &mut Model, now: Instant) {
    let ids = m.visible_ids();
    let mut waiting: Vec<(Instant, &String)> = ids
        .iter()
        .filter_map(|id| {
            let p = m.pane(id)?;
            p.waiting_since.filter(|_| p.waiting()).map(|t| (t, id))
        })
        .collect();
    waiting.sort();
    // Grid order, from the one after the selected.
    let start = m
        .selected
        .as_ref()
        .and_then(|s| ids.iter().position(|i| i == s))
        .map_or(0, |i| i + 1);
    let n = ids.len();
    let finished = (0..n)
        .map(|k| &ids[(start + k) % n])
        .filter(|id| m.pane(id).is_some_and(|p| p.attention && !p.waiting()));
    let round: Vec<&String> = waiting
        .into_iter()
        .map(|(_, id)| id)
        .chain(finished)
        .collect();
    let after = m
        .selected
        .as_ref()
        .and_then(|s| round.iter().position(|id| *id == s))
        .map_or(0, |i| i + 1);
    let found = round
        .get(after)
        .or(round.first())
        .filter(|id| Some(**id) != m.selected.as_ref())
        .map(|id| (*id).clone());
    match found {
        // The page follows (see `show_selected`).
        Some(id) => m.selected = Some(id),
        None => m.notify("no session needs attention", now),
    }
}

/// Pasted text: the focused session's, or typed into the open prompt.
pub fn paste(m: &mut Model, text: &str, fx: &mut Vec<Effect>) {
    match &m.mode {
        Mode::Focus(id) => {
            let id = id.clone();
            focus::paste(m, &id, text, fx);
        }
        Mode::Filter => m.filter.push_str(text.trim()),
        Mode::NewSession { step, id, command } => {
            let (mut id, mut command) = (id.clone(), command.clone());
            match step {
                NewStep::Id => id.push_str(text.trim()),
                NewStep::Command => command.push_str(text),
                NewStep::Dir => m.new_dir.push_str(text.trim()),
                NewStep::Label => text
                    .trim()
                    .chars()
                    .for_each(|c| push_label(&mut m.new_label, c)),
            }
            m.mode = Mode::NewSession {
                step: *step,
                id,
                command,
            };
        }
        _ => {}
    }
}

/// A click selects a pane; a second on the same cell soon after focuses
/// it. The wheel scrolls a pane's history (see [`copy::wheel`]).
pub fn mouse(m: &mut Model, ev: crossterm::event::MouseEvent, now: Instant) {
    if matches!(
        ev.kind,
        MouseEventKind::ScrollUp | MouseEventKind::ScrollDown
    ) {
        copy::wheel(m, ev);
        return;
    }
    if ev.kind != MouseEventKind::Down(MouseButton::Left)
        || !matches!(m.mode, Mode::Grid | Mode::Zoom(_))
    {
        return;
    }
    let hit = placements(m)
        .rects
        .into_iter()
        .find(|(_, r)| r.contains(ratatui::layout::Position::new(ev.column, ev.row)))
        .map(|(id, _)| id);
    let Some(id) = hit else { return };
    let double = m.last_click.is_some_and(|(t, c, r)| {
        now.duration_since(t) < DOUBLE_CLICK && c == ev.column && r == ev.row
    });
    m.selected = Some(id.clone());
    m.last_click = Some((now, ev.column, ev.row));
    if double {
        m.last_click = None;
        focus::enter(m, id, now);
    }
}

#[cfg(test)]
mod tests;

/// A label is what `hm run --label` takes: one line of at most
/// [`MAX_LABEL`] printable characters; what would break that is not typed.
fn push_label(label: &mut String, c: char) {
    if !c.is_control() && label.chars().count() < MAX_LABEL {
        label.push(c);
    }
}

/// The longest label `hm run --label` accepts.
const MAX_LABEL: usize = 60;
