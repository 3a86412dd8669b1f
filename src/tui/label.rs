//! The dashboard's `L`: a new label for the selected session, typed in
//! the footer (see `view/bar.rs`) from the label it has, and sent as
//! LABEL. The session's answer, INFO marked `relabelled`, is what says it
//! took (`sessions::news`): a supervisor from before LABEL ignores it.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::form::push_label;
use super::model::{Effect, Mode, Model};
use crate::protocol::checked_label;

/// Opens the label's field for the selected session. Only a running
/// session takes one: an ended one's record is what it was.
pub fn open(m: &mut Model, now: Instant) {
    let Some(id) = m.selected.clone() else { return };
    let Some(p) = m.pane(&id) else { return };
    if p.ended() || p.lost.is_some() || p.orphan.is_some() {
        m.notify(
            format!("'{id}' is not running: only a running session takes a new label"),
            now,
        );
        return;
    }
    if let Some(host) = m.unreachable_host(&id) {
        m.notify(
            format!("{host} is unreachable: '{id}' cannot be labelled now"),
            now,
        );
        return;
    }
    let text = p.label.clone().unwrap_or_default();
    m.notice = None;
    m.mode = Mode::Label { id, text };
}

/// Pasted text: its first line goes into the field (what follows is no
/// label's).
pub fn paste(m: &mut Model, pasted: &str) {
    if let Mode::Label { text, .. } = &mut m.mode {
        for c in pasted.lines().next().unwrap_or_default().chars() {
            push_label(text, c);
        }
    }
}

/// A key while the label is typed: `Enter` gives it (empty: none), `Esc`
/// leaves it as it was; `Backspace` and `Ctrl-U` edit, as in the filter.
pub fn key(
    m: &mut Model,
    id: String,
    mut text: String,
    k: KeyEvent,
    now: Instant,
    fx: &mut Vec<Effect>,
) {
    match k.code {
        KeyCode::Esc => m.mode = Mode::Grid,
        KeyCode::Enter => {
            m.mode = Mode::Grid;
            // Ended while it was typed: its record is what it was.
            let Some(p) = m.pane_mut(&id).filter(|p| !p.ended()) else {
                m.notify(format!("'{id}' ended: its label is as it was"), now);
                return;
            };
            let label = match checked_label(&text) {
                Ok(label) => label,
                // Typed as it was, to mend: a zero-width space pasted alone.
                Err(why) => {
                    m.notify(why, now);
                    m.mode = Mode::Label { id, text };
                    return;
                }
            };
            // Said when the session's answer comes.
            p.labelling = true;
            fx.push(Effect::Label(id, label));
        }
        KeyCode::Backspace => {
            text.pop();
            m.mode = Mode::Label { id, text };
        }
        KeyCode::Char('u') if k.modifiers.contains(KeyModifiers::CONTROL) => {
            m.mode = Mode::Label {
                id,
                text: String::new(),
            };
        }
        KeyCode::Char(c) if !k.modifiers.contains(KeyModifiers::CONTROL) => {
            // Full: said, as the new-session form says it.
            if let Some(full) = push_label(&mut text, c) {
                m.notify(full, now);
            }
            m.mode = Mode::Label { id, text };
        }
        _ => {}
    }
}

/// What the notice says of a label the session took.
pub fn taken(id: &str, label: Option<&str>) -> String {
    match label {
        Some(l) => format!("labelled '{id}': {l}"),
        None => format!("'{id}' has no label now"),
    }
}
