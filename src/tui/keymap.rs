//! What keys, clicks and pastes mean to the dashboard: the grid's actions
//! (moving through the grid and its pages, zoom, kill, new sessions, the
//! filter, sorting, the inbox and help), done by the keys `[tui.keys]`
//! gives them (see [`super::bindings`]), and which part takes a key in the
//! other modes: the prompts, the new-session form ([`super::form`]), the
//! inbox ([`super::inbox`]). In focus keys are the session's instead (see
//! [`super::focus`]).

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEventKind};

use crate::config::Action;

use super::bindings;
use super::copy;
use super::focus;
use super::form;
use super::inbox;
use super::layout::placements;
use super::model::{Effect, Mode, Model, Pane};
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
                // Its host's link may be stalled, not closed: the kill would
                // wait in it and end the session whenever the host came
                // back, long after the person stopped expecting it.
                if let Some(host) = m.unreachable_host(&id) {
                    m.notify(
                        format!("not killed: {host} is unreachable; nothing was sent"),
                        now,
                    );
                    return;
                }
                let size_too = !m.fit;
                let Some(p) = m.pane_mut(&id) else { return };
                if let Some(pid) = p.orphan {
                    // Its supervisor is gone: `hm kill` stops the program.
                    fx.push(Effect::KillOrphan(id.clone()));
                    m.notify(format!("stopping '{id}' (pid {pid})…"), now);
                    return;
                }
                if p.ended() {
                    // It ended while we asked.
                    return;
                }
                fx.push(Effect::Kill(id.clone()));
                p.killed = true;
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
        Mode::ConfirmForget(id) => {
            m.mode = Mode::Grid;
            // Restarted or forgotten elsewhere while we asked: nothing to do.
            if let KeyCode::Char('y' | 'Y') = k.code
                && m.pane(&id).is_some_and(|p| p.ended())
            {
                fx.push(Effect::Forget(id.clone()));
                clear(m, &id);
                m.notify(format!("forgot '{id}'"), now);
            }
        }
        Mode::ConfirmRestart(id) => {
            m.mode = Mode::Grid;
            // Restarted or forgotten elsewhere while we asked: nothing to do.
            if let KeyCode::Char('y' | 'Y') = k.code
                && m.pane(&id).is_some_and(|p| p.ended() && p.orphan.is_none())
            {
                // The pane gives way to the new session when it is found.
                m.starting.insert(id.clone());
                m.panes.retain(|p| p.id != id);
                fx.push(Effect::Restart(id));
            }
        }
        Mode::NewSession { step, id, command } => form::key(m, (step, id, command), k, now, fx),
        Mode::Label { id, text } => super::label::key(m, id, text, k, now, fx),
        Mode::Inbox => inbox::key(m, k, now, fx),
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
        // `b` turns to the badges' page; any other key closes (the help
        // key too, as a toggle).
        Mode::Help if !m.help_badges && k.code == KeyCode::Char('b') && k.modifiers.is_empty() => {
            m.help_badges = true;
            m.help_scroll = 0;
        }
        // Where the screen is too short for the page, the arrows (and
        // `j`/`k`, the pages, Space) scroll it instead.
        Mode::Help if help_scrolled(m, k) => {}
        Mode::Help | Mode::Explain(_) => m.mode = Mode::Grid,
        Mode::Grid | Mode::Zoom(_) => grid_key(m, k, now, fx),
    }
}

/// The selected pane when it shows its history scrolled back.
fn scrolled_back(m: &mut Model) -> Option<&mut Pane> {
    let id = m.selected.clone()?;
    m.pane_mut(&id).filter(|p| p.copy.is_some())
}

fn grid_key(m: &mut Model, k: KeyEvent, now: Instant, fx: &mut Vec<Effect>) {
    // Every key while copy mode has a cursor.
    if copy::key(m, k, now, fx) {
        return;
    }
    let left_copy = std::mem::take(&mut m.left_copy);
    // Keys mean what they say: Ctrl-Z is not `z`, Alt-x is not `x`; a
    // key the keymap does not name does nothing.
    let Some(action) = bindings::action(m, &k) else {
        return;
    };
    match action {
        // A pane scrolled back is left first, as a pager is: Esc, and the
        // quit key too (pressed there to stop reading, not to close the
        // dashboard).
        Action::Back | Action::Quit if scrolled_back(m).is_some() => {
            if let Some(p) = scrolled_back(m) {
                copy::leave(p);
            }
            if action == Action::Quit {
                let again = m.keys.label(Action::Quit).unwrap_or_default();
                m.notify(format!("back to the live screen; {again} again quits"), now);
            }
        }
        // Right after copy mode (`y` copies and leaves it; the README's
        // `q` to leave then closed the dashboard).
        Action::Quit if left_copy => {
            let again = m.keys.label(Action::Quit).unwrap_or_default();
            m.notify(format!("out of copy mode; {again} again quits"), now);
        }
        Action::Quit => m.quit = true,
        Action::Left => step(m, -1, 0),
        Action::Right => step(m, 1, 0),
        Action::Up => step(m, 0, -1),
        Action::Down => step(m, 0, 1),
        Action::Focus => {
            if let Some(id) = m.selected.clone() {
                focus::enter(m, id, now, fx);
            }
        }
        // The real terminal for the selected session: a raw attach, back
        // here with the detach key.
        Action::Attach => {
            let Some(p) = m.selected.as_deref().and_then(|id| m.pane(id)) else {
                return;
            };
            // Over, it did nothing and said nothing.
            match focus::ended(m, p) {
                Some(why) => m.notify(why, now),
                None => fx.push(Effect::RawAttach(p.id.clone())),
            }
        }
        Action::Restore => super::lost::restore_key(m, now, fx),
        Action::Restart => {
            let Some(id) = m.selected.clone() else { return };
            match m.pane(&id) {
                Some(p) if p.ended() && p.orphan.is_none() => m.mode = Mode::ConfirmRestart(id),
                // A key that does nothing says why, rather than nothing.
                Some(p) if p.orphan.is_some() => m.notify(
                    format!("'{id}' still runs without its supervisor; x stops it first"),
                    now,
                ),
                Some(p) if p.lost.is_some() => {
                    m.notify(format!("'{id}' was lost; R restores it"), now);
                }
                Some(_) => m.notify(
                    format!("'{id}' is running; r starts a session again once it has ended"),
                    now,
                ),
                None => {}
            }
        }
        Action::Kill => kill(m),
        Action::Zoom => {
            m.mode = match (&m.mode, m.selected.clone()) {
                (Mode::Zoom(_), _) | (_, None) => Mode::Grid,
                (_, Some(id)) => Mode::Zoom(id),
            };
        }
        Action::Back if matches!(m.mode, Mode::Zoom(_)) => m.mode = Mode::Grid,
        // A filter kept with Enter is cleared the way it is while typed.
        Action::Back => m.filter.clear(),
        Action::MoreColumns => {
            let cur = placements(m).grid.cols;
            m.columns = Some(cur.saturating_add(1).min(16));
            // The width, or the panes there are, may allow no more: say
            // so rather than nothing.
            if placements(m).grid.cols == cur {
                m.columns = Some(cur);
                let why = if usize::from(cur) >= m.visible_ids().len() {
                    format!("{cur} columns: one for each pane")
                } else {
                    format!("{cur} columns are as many as fit")
                };
                m.notify(why, now);
            }
        }
        Action::FewerColumns => {
            let cur = placements(m).grid.cols;
            m.columns = Some(cur.saturating_sub(1).max(1));
            if cur <= 1 {
                m.notify("one column is the fewest", now);
            }
        }
        Action::AutoColumns => m.columns = None,
        Action::New => form::open(m),
        Action::Label => super::label::open(m, now),
        Action::Sort => {
            m.by_state = !m.by_state;
            m.page = 0;
            let how = if m.by_state {
                "sorted by state: needs you first, then what printed in the last minute"
            } else {
                "sorted by id, the ended last"
            };
            m.notify(how, now);
        }
        Action::Filter => m.mode = Mode::Filter,
        Action::Help => {
            m.mode = Mode::Help;
            m.help_badges = false;
            m.help_scroll = 0;
        }
        Action::Explain => {
            if let Some(id) = m.selected.clone() {
                // The signals as they are now, not as the state began.
                if m.pane(&id).is_some_and(|p| p.askable() && !p.ended()) {
                    fx.push(Effect::Info(id.clone()));
                }
                m.mode = Mode::Explain(id);
            }
        }
        Action::Next => next_attention(m, now),
        Action::Inbox => inbox::open(m, now, fx),
        Action::NextPage => {
            let p = placements(m);
            m.page = (p.page + 1).min(p.pages - 1);
            m.selected = placements(m).rects.first().map(|(id, _)| id.clone());
        }
        Action::PrevPage => {
            let p = placements(m);
            m.page = p.page.saturating_sub(1);
            m.selected = placements(m).rects.first().map(|(id, _)| id.clone());
        }
        Action::ScrollUp => copy::page(m, -1),
        Action::ScrollDown => copy::page(m, 1),
        Action::CopyMode => copy::open(m),
    }
}

/// `x`: kill the selected session, or forget one that ended, after
/// asking. A program that outlived its supervisor here is stopped as `hm
/// kill` stops it, after asking too; another machine's orphan's pane is
/// cleared at once (nothing there is deleted) and stays away while it is
/// one.
fn kill(m: &mut Model) {
    let Some(id) = m.selected.clone() else { return };
    match m.pane(&id) {
        Some(p) if p.orphan.is_some() && crate::remote::split_target(&id).is_none() => {
            m.notice = None;
            m.mode = Mode::ConfirmKill(id);
        }
        Some(p) if p.ended() && p.orphan.is_some() => {
            m.dismissed.insert(id.clone());
            clear(m, &id);
        }
        // The question alone in the footer, not an older notice with it.
        Some(p) if p.ended() => {
            m.notice = None;
            m.mode = Mode::ConfirmForget(id);
        }
        Some(_) => {
            m.notice = None;
            m.mode = Mode::ConfirmKill(id);
        }
        None => {}
    }
}

/// Takes an ended session's pane away. The neighbour takes the selection,
/// not the first pane: a second `x` must not land far away.
fn clear(m: &mut Model, id: &str) {
    let at = m.visible_ids().iter().position(|i| i == id);
    m.panes.retain(|p| p.id != id);
    let ids = m.visible_ids();
    m.selected = at
        .map(|i| i.min(ids.len().saturating_sub(1)))
        .and_then(|i| ids.get(i).cloned());
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
    let p = placements(m);
    let next = if dy == 0 {
        cur as i32 + dx
    } else {
        vertical(m, &p, cur, ids.len(), dy < 0) as i32
    };
    let next = next.clamp(0, ids.len() as i32 - 1) as usize;
    // The page follows (see `show_selected`).
    m.selected = Some(ids[next].clone());
    if let Mode::Zoom(_) = m.mode {
        m.mode = Mode::Zoom(ids[next].clone());
    }
}

/// Scrolls the help by key `k` if the screen is too short for it all and
/// `k` is a scrolling key; false otherwise (the key closes it).
fn help_scrolled(m: &mut Model, k: KeyEvent) -> bool {
    let max = crate::tui::view::help_scroll_max(m, m.size);
    if max == 0 || !k.modifiers.difference(KeyModifiers::SHIFT).is_empty() {
        return false;
    }
    let page = m.size.1.saturating_sub(3).max(1);
    let at = m.help_scroll.min(max);
    m.help_scroll = match k.code {
        KeyCode::Down | KeyCode::Char('j') => at.saturating_add(1),
        KeyCode::Up | KeyCode::Char('k') => at.saturating_sub(1),
        KeyCode::PageDown | KeyCode::Char(' ') => at.saturating_add(page),
        KeyCode::PageUp => at.saturating_sub(page),
        KeyCode::Home | KeyCode::Char('g') => 0,
        KeyCode::End | KeyCode::Char('G') => max,
        _ => return false,
    }
    .min(max);
    true
}

/// The pane a row above (`up`) or below the `cur`th of `n` visible ones:
/// on its page by that page's grid (a last page of fewer panes has its
/// own, see `layout::Placement::shape`), else in the page before (its
/// bottom row) or after (its top row), at the same column or the nearest.
/// At the top of the first page or the bottom of the last it stays.
fn vertical(m: &Model, p: &crate::tui::layout::Placement, cur: usize, n: usize, up: bool) -> usize {
    use crate::tui::layout;
    let per = p.grid.per_page().max(1);
    let on_page = |k: usize| n.saturating_sub(k * per).min(per);
    let cols_of = |k: usize| {
        let area = layout::grid_area(m.size);
        let g = layout::page_grid(area, p.grid, p.pages, on_page(k), m.columns, p.title_w);
        usize::from(g.cols.max(1))
    };
    let page = cur / per;
    let (start, count, cols) = (page * per, on_page(page), cols_of(page));
    let (on, col) = (cur - start, (cur - start) % cols);
    if up {
        if on >= cols {
            return cur - cols;
        }
        if page == 0 {
            return cur;
        }
        let (before, g) = (start - per, cols_of(page - 1));
        return before + ((per - 1) / g * g + col.min(g - 1)).min(per - 1);
    }
    if on + cols < count {
        return cur + cols;
    }
    // A shorter row below: its last pane.
    if on / cols < (count - 1) / cols {
        return start + count - 1;
    }
    let after = start + per;
    if after >= n {
        return cur;
    }
    after + col.min(cols_of(page + 1) - 1).min(on_page(page + 1) - 1)
}

/// Tab: the sessions that need their user, in one round: those waiting
/// (the longest waiting first), then those that finished work or ended, in
/// grid order. Each press selects the one after the selected in that
/// round; the last goes round to the first. One Tab selected goes on from
/// its place in the grid once looking at it has taken its mark.
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
    let waiting: Vec<&String> = waiting.into_iter().map(|(_, id)| id).collect();
    let finished: Vec<(usize, &String)> = ids
        .iter()
        .enumerate()
        .filter(|(_, id)| m.pane(id).is_some_and(|p| p.attention && !p.waiting()))
        .collect();
    let selected = m.selected.as_ref();
    let at = selected.and_then(|s| ids.iter().position(|i| i == s));
    let after = if let Some(i) = selected.and_then(|s| waiting.iter().position(|id| *id == s)) {
        i + 1
    } else if let Some(i) = selected.and_then(|s| finished.iter().position(|(_, id)| *id == s)) {
        waiting.len() + i + 1
    } else if let Some(at) = at.filter(|_| m.tabbed.as_ref() == selected) {
        // A finished one, looked at since Tab came to it: the next in the
        // grid after it.
        waiting.len() + finished.iter().take_while(|(i, _)| *i < at).count()
    } else {
        0
    };
    let waited = waiting.len();
    let round: Vec<&String> = waiting
        .into_iter()
        .chain(finished.into_iter().map(|(_, id)| id))
        .collect();
    let index = if after < round.len() { after } else { 0 };
    let found = round
        .get(index)
        .filter(|id| Some(**id) != selected)
        .map(|id| (*id).clone());
    // Only a finished one keeps its place: one that waited and was
    // answered is done with, and the round starts again at who waits.
    m.tabbed = found.clone().filter(|_| index >= waited);
    match found {
        // The page follows (see `show_selected`). A word of an earlier Tab
        // that none needed you goes: it stood beside the one Tab came to.
        Some(id) => {
            m.selected = Some(id);
            let tabs_word = |n: &str| n.starts_with("no session") || n.starts_with("only '");
            if m.notice.as_ref().is_some_and(|(n, _)| tabs_word(n)) {
                m.notice = None;
            }
        }
        // The one in the round is the selected: said so, beside the
        // footer's `1 needs you`.
        None if !round.is_empty() => {
            let id = m.selected.clone().unwrap_or_default();
            let what = if m.pane(&id).is_some_and(|p| p.waiting()) {
                "needs you"
            } else {
                "needs attention"
            };
            m.notify(format!("only '{id}', selected, {what}"), now);
        }
        None => {
            // Those the filter hides: Tab is the way to who needs you, so
            // the filter goes, said (it said only that the filter hid
            // them, beside the footer's `⇥ next`).
            let hidden = m
                .panes
                .iter()
                .any(|p| (p.waiting() || p.attention) && !ids.contains(&p.id));
            if hidden && !m.filter.is_empty() {
                let filter = std::mem::take(&mut m.filter);
                m.page = 0;
                next_attention(m, now);
                let to = m.selected.clone().unwrap_or_default();
                m.notify(format!("filter '{filter}' cleared: it hid '{to}'"), now);
                return;
            }
            m.notify("no session needs attention", now);
        }
    }
}

/// Pasted text: the focused session's, or typed into the open prompt.
pub fn paste(m: &mut Model, text: &str, now: Instant, fx: &mut Vec<Effect>) {
    match &m.mode {
        Mode::Focus(id) => {
            let id = id.clone();
            focus::paste(m, &id, text, now, fx);
        }
        Mode::Filter => m.filter.push_str(text.trim()),
        Mode::NewSession { .. } => form::paste(m, text),
        Mode::Label { .. } => super::label::paste(m, text),
        _ => {}
    }
}

/// A click selects a pane; a second on the same cell soon after focuses
/// it. The wheel scrolls a pane's history (see [`copy::wheel`]).
pub fn mouse(m: &mut Model, ev: crossterm::event::MouseEvent, now: Instant, fx: &mut Vec<Effect>) {
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
        focus::enter(m, id, now, fx);
    }
}

#[cfg(test)]
mod tests;
