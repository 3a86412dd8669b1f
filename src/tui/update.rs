//! `update(model, msg, now) -> effects`: every decision the dashboard
//! makes, as plain data in and out, so it is tested without a terminal.

use std::time::{Duration, Instant};

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEventKind,
};
use ratatui::layout::Rect;

use crate::classify::ProcessState;
use crate::paths;
use crate::protocol::{self, Size, client as ct};

use super::keys;
use super::layout::{self, Grid};
use super::model::{Effect, Link, Mode, Model, Msg, NewStep, Pane, SessionMsg};

/// While output flows, a session's state is asked at most this often.
const POLL_EVERY: Duration = Duration::from_secs(1);
/// Busy for less than this and then idle is not "work finished": a prompt
/// redrawn after a resize, say. It does not ask for attention.
const MIN_WORK: Duration = Duration::from_secs(2);
/// Two clicks this close together are a double click.
const DOUBLE_CLICK: Duration = Duration::from_millis(400);

/// Where the visible panes of the current page are drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub grid: Grid,
    pub pages: usize,
    pub page: usize,
    pub rects: Vec<(String, Rect)>,
}

/// The area above the footer.
pub fn grid_area(size: (u16, u16)) -> Rect {
    Rect::new(0, 0, size.0, size.1.saturating_sub(1))
}

pub fn placements(m: &Model) -> Placement {
    let area = grid_area(m.size);
    if let Mode::Zoom(id) = &m.mode {
        return Placement {
            grid: Grid { cols: 1, rows: 1 },
            pages: 1,
            page: 0,
            rects: vec![(id.clone(), area)],
        };
    }
    let ids = m.visible_ids();
    let grid = layout::grid(area, ids.len(), m.columns);
    let per = grid.per_page().max(1);
    let pages = ids.len().div_ceil(per).max(1);
    let page = m.page.min(pages - 1);
    let on_page: Vec<String> = ids.into_iter().skip(page * per).take(per).collect();
    let rects = layout::cells(area, grid, on_page.len());
    Placement {
        grid,
        pages,
        page,
        rects: on_page.into_iter().zip(rects).collect(),
    }
}

/// The inside of a bordered pane.
pub fn inner(r: Rect) -> Rect {
    Rect::new(
        r.x.saturating_add(1),
        r.y.saturating_add(1),
        r.width.saturating_sub(2),
        r.height.saturating_sub(2),
    )
}

pub fn update(m: &mut Model, msg: Msg, now: Instant) -> Vec<Effect> {
    let mut fx = Vec::new();
    match msg {
        Msg::Key(k) if k.kind != KeyEventKind::Release => key(m, k, now, &mut fx),
        Msg::Key(_) => {}
        Msg::Paste(text) => paste(m, &text, &mut fx),
        Msg::Mouse(ev) => mouse(m, ev, now),
        Msg::Resize(c, r) => m.size = (c, r),
        Msg::Tick => tick(m, now, &mut fx),
        Msg::Found(ids) => found(m, ids, &mut fx),
        Msg::Session(id, sm) => session(m, &id, sm, now, &mut fx),
        Msg::Started(id, result) => match result {
            Ok(()) => {
                m.selected = Some(id.clone());
                m.notify(format!("started session '{id}'"), now);
            }
            Err(e) => m.notify(format!("could not start '{id}': {e}"), now),
        },
    }
    if m.selected.is_none() || m.selected.as_ref().is_some_and(|s| m.pane(s).is_none()) {
        m.selected = m.visible_ids().into_iter().next();
    }
    clear_attention_of_selected(m);
    fit(m, &mut fx);
    fx
}

fn clear_attention_of_selected(m: &mut Model) {
    if let Some(id) = m.selected.clone() {
        if let Some(p) = m.pane_mut(&id) {
            p.attention = false;
        }
    }
}

/// Resizes sessions (and their emulators) to what they are shown in.
fn fit(m: &mut Model, fx: &mut Vec<Effect>) {
    let targets: Vec<(String, Size)> = match &m.mode {
        Mode::Focus(id) => vec![(
            id.clone(),
            Size {
                cols: m.size.0,
                rows: m.size.1,
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
    let fit_sessions = m.fit;
    for (id, size) in targets {
        let size = size.clamped();
        let Some(p) = m.pane_mut(&id) else { continue };
        if p.exit.is_some() || p.link != Link::Live {
            continue;
        }
        if fit_sessions {
            if p.applied != Some(size) {
                p.applied = Some(size);
                p.term.resize(size);
                fx.push(Effect::Send(
                    id,
                    protocol::frame(ct::RESIZE, &size.encode()),
                ));
            }
        } else if let Some(s) = p.session_size {
            p.term.resize(s);
        }
    }
}

fn poll(p: &mut Pane, now: Instant, fx: &mut Vec<Effect>) {
    if !p.poll_in_flight && p.link == Link::Live && p.exit.is_none() {
        p.poll_in_flight = true;
        p.last_poll = Some(now);
        fx.push(Effect::Send(p.id.clone(), protocol::frame(ct::STATUS, &[])));
    }
}

fn tick(m: &mut Model, now: Instant, fx: &mut Vec<Effect>) {
    for p in &mut m.panes {
        if p.idle_check.is_some_and(|t| now >= t) {
            p.idle_check = None;
            poll(p, now, fx);
        }
    }
    if m.notice
        .as_ref()
        .is_some_and(|(_, at)| now.duration_since(*at) > Duration::from_secs(5))
    {
        m.notice = None;
    }
}

fn found(m: &mut Model, ids: Vec<String>, fx: &mut Vec<Effect>) {
    for id in ids {
        if m.pane(&id)
            .is_none_or(|p| p.link == Link::Gone && p.exit.is_some())
        {
            m.panes.retain(|p| p.id != id);
            m.panes.push(Pane::new(id.clone()));
            fx.push(Effect::Connect(id));
        }
    }
    m.panes.sort_by(|a, b| a.id.cmp(&b.id));
}

fn session(m: &mut Model, id: &str, sm: SessionMsg, now: Instant, fx: &mut Vec<Effect>) {
    let selected = m.selected.as_deref() == Some(id);
    let focused = m.mode == Mode::Focus(id.to_string());
    let bell = m.bell;
    let Some(p) = m.pane_mut(id) else { return };
    match sm {
        SessionMsg::Connected => {
            p.link = Link::Live;
            p.applied = None;
            p.term.reset();
            p.poll_in_flight = true;
            p.last_poll = Some(now);
        }
        SessionMsg::Output(bytes) => {
            p.term.feed(&bytes);
            p.last_output = Some(now);
            p.idle_check = Some(now + p.idle_threshold + Duration::from_millis(100));
            let shown_idle = p
                .status
                .is_none_or(|(s, _)| s.state == ProcessState::Idle.as_byte());
            if shown_idle || p.last_poll.is_none_or(|t| now >= t + POLL_EVERY) {
                poll(p, now, fx);
            }
        }
        SessionMsg::Status(s) => {
            p.poll_in_flight = false;
            p.status = Some((s, now));
            if p.busy() {
                // Ask again when the silence so far would reach the idle
                // threshold, rather than a full threshold after our question.
                let left = p.idle_threshold.saturating_sub(Duration::from_millis(u64::from(s.idle_ms)));
                let at = now + left + Duration::from_millis(100);
                p.idle_check = Some(p.idle_check.map_or(at, |t| t.min(at)));
                // Dated from when the state began, not when we asked.
                let began = now
                    .checked_sub(Duration::from_millis(u64::from(s.state_ms)))
                    .unwrap_or(now);
                p.busy_since = Some(p.busy_since.map_or(began, |b| b.min(began)));
                return;
            }
            let worked = p
                .busy_since
                .take()
                .is_some_and(|b| now.duration_since(b) >= MIN_WORK);
            if worked && !selected && !focused {
                p.attention = true;
                if bell {
                    fx.push(Effect::Bell);
                }
            }
        }
        SessionMsg::Info(v) => {
            if let Some(ms) = v.get("idle_threshold_ms").and_then(|x| x.as_u64()) {
                p.idle_threshold = Duration::from_millis(ms);
            }
            if let Some(cmd) = v.get("command").and_then(|c| c.as_array()) {
                let words: Vec<&str> = cmd.iter().filter_map(|w| w.as_str()).collect();
                p.command = Some(paths::sanitize(&words.join(" ")));
            }
            let dim = |k: &str| {
                v.get(k)
                    .and_then(|x| x.as_u64())
                    .and_then(|x| u16::try_from(x).ok())
            };
            if let (Some(cols), Some(rows)) = (dim("cols"), dim("rows")) {
                p.session_size = Some(Size { cols, rows });
            }
        }
        SessionMsg::Exit(code) => {
            p.exit = Some(code);
            if !focused {
                p.attention = !selected;
                if bell && !selected {
                    fx.push(Effect::Bell);
                }
            }
            if focused {
                m.mode = Mode::Grid;
                m.notify(format!("session '{id}' exited with code {code}"), now);
            }
        }
        SessionMsg::Problem(why) => {
            p.link = Link::Problem(why);
        }
        SessionMsg::Closed => {
            p.link = Link::Gone;
            if p.exit.is_none() {
                p.attention = !selected;
            }
            if focused {
                m.mode = Mode::Grid;
            }
        }
    }
}

fn key(m: &mut Model, k: KeyEvent, now: Instant, fx: &mut Vec<Effect>) {
    match m.mode.clone() {
        Mode::Focus(id) => {
            if m.detach_key.is_some_and(|b| keys::is_byte(&k, b)) {
                m.mode = Mode::Grid;
                return;
            }
            let app_cursor = m
                .pane(&id)
                .is_some_and(|p| p.term.screen().application_cursor());
            if let Some(bytes) = keys::encode(&k, app_cursor) {
                fx.push(Effect::Send(id, protocol::frame(ct::INPUT, &bytes)));
            }
        }
        Mode::ConfirmKill(id) => {
            if let KeyCode::Char('y' | 'Y') = k.code {
                // u32::MAX: the session's own grace period, and EXIT back.
                fx.push(Effect::Send(
                    id.clone(),
                    protocol::frame(ct::KILL, &u32::MAX.to_be_bytes()),
                ));
                m.notify(format!("killing '{id}'"), now);
            }
            m.mode = Mode::Grid;
        }
        Mode::NewSession {
            step,
            mut id,
            mut command,
        } => match (k.code, step) {
            (KeyCode::Esc, _) => m.mode = Mode::Grid,
            (KeyCode::Enter, NewStep::Id) => {
                if let Err(e) = paths::validate_id(&id) {
                    m.notify(e.to_string(), now);
                } else if m.pane(&id).is_some_and(|p| p.exit.is_none()) {
                    m.notify(format!("session '{id}' already exists"), now);
                } else {
                    m.mode = Mode::NewSession {
                        step: NewStep::Command,
                        id,
                        command,
                    };
                }
            }
            (KeyCode::Enter, NewStep::Command) => {
                let command = if command.trim().is_empty() {
                    m.shell.clone()
                } else {
                    command
                };
                fx.push(Effect::Spawn {
                    id: id.clone(),
                    command,
                });
                m.notify(format!("starting '{id}'…"), now);
                m.mode = Mode::Grid;
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
            KeyCode::Char(c) if !k.modifiers.contains(KeyModifiers::CONTROL) => {
                m.filter.push(c);
                m.page = 0;
            }
            _ => {}
        },
        Mode::Help => m.mode = Mode::Grid,
        Mode::Grid | Mode::Zoom(_) => grid_key(m, k, now),
    }
}

fn grid_key(m: &mut Model, k: KeyEvent, now: Instant) {
    let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
    match k.code {
        KeyCode::Char('q') => m.quit = true,
        KeyCode::Char('c') if ctrl => m.quit = true,
        KeyCode::Left | KeyCode::Char('h') => step(m, -1, 0),
        KeyCode::Right | KeyCode::Char('l') => step(m, 1, 0),
        KeyCode::Up | KeyCode::Char('k') => step(m, 0, -1),
        KeyCode::Down | KeyCode::Char('j') => step(m, 0, 1),
        KeyCode::Enter => {
            if let Some(id) = m.selected.clone().filter(|id| {
                m.pane(id)
                    .is_some_and(|p| p.exit.is_none() && p.link == Link::Live)
            }) {
                m.mode = Mode::Focus(id);
            }
        }
        KeyCode::Char('x') => {
            if let Some(id) = m.selected.clone() {
                match m.pane(&id) {
                    Some(p) if p.exit.is_some() || p.link == Link::Gone => {
                        // Already over: `x` just clears the pane away.
                        m.panes.retain(|p| p.id != id);
                        m.selected = None;
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
            m.mode = Mode::NewSession {
                step: NewStep::Id,
                id,
                command: String::new(),
            };
        }
        KeyCode::Char('/') => m.mode = Mode::Filter,
        KeyCode::Char('?') => m.mode = Mode::Help,
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
    m.selected = Some(ids[next].clone());
    let per = placements(m).grid.per_page().max(1);
    m.page = next / per;
    if let Mode::Zoom(_) = m.mode {
        m.mode = Mode::Zoom(ids[next].clone());
    }
}

/// Tab: the next session (after the selected one) that needs attention.
fn next_attention(m: &mut Model, now: Instant) {
    let ids = m.visible_ids();
    let start = m
        .selected
        .as_ref()
        .and_then(|s| ids.iter().position(|i| i == s))
        .map_or(0, |i| i + 1);
    let n = ids.len();
    let found = (0..n)
        .map(|k| &ids[(start + k) % n.max(1)])
        .find(|id| m.pane(id).is_some_and(|p| p.attention))
        .cloned();
    match found {
        Some(id) => {
            let per = placements(m).grid.per_page().max(1);
            m.page = ids.iter().position(|i| *i == id).unwrap_or(0) / per;
            m.selected = Some(id);
        }
        None => m.notify("no session needs attention", now),
    }
}

fn paste(m: &mut Model, text: &str, fx: &mut Vec<Effect>) {
    match &m.mode {
        Mode::Focus(id) => {
            let bracketed = m
                .pane(id)
                .is_some_and(|p| p.term.screen().bracketed_paste());
            let mut bytes = Vec::new();
            if bracketed {
                bytes.extend_from_slice(b"\x1b[200~");
            }
            bytes.extend_from_slice(text.as_bytes());
            if bracketed {
                bytes.extend_from_slice(b"\x1b[201~");
            }
            fx.push(Effect::Send(id.clone(), protocol::frame(ct::INPUT, &bytes)));
        }
        Mode::Filter => m.filter.push_str(text.trim()),
        Mode::NewSession { step, id, command } => {
            let (mut id, mut command) = (id.clone(), command.clone());
            match step {
                NewStep::Id => id.push_str(text.trim()),
                NewStep::Command => command.push_str(text),
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

fn mouse(m: &mut Model, ev: crossterm::event::MouseEvent, now: Instant) {
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
    if double
        && m.pane(&id)
            .is_some_and(|p| p.exit.is_none() && p.link == Link::Live)
    {
        m.mode = Mode::Focus(id);
        m.last_click = None;
    }
}
