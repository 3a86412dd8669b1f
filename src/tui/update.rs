//! `update(model, msg, now) -> effects`: every decision the dashboard
//! makes, as plain data in and out, so it is tested without a terminal.

use std::time::{Duration, Instant};

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEventKind,
};
use ratatui::layout::Rect;

use crate::classify::ProcessState;
use crate::paths;
use crate::protocol::Size;

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
    placements_in(m, m.size)
}

/// Placements on a screen of `size`, which the frame being drawn may have
/// even when the model has not heard of the change yet.
pub fn placements_in(m: &Model, size: (u16, u16)) -> Placement {
    let area = grid_area(size);
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

/// The largest emulator a session keeping its own size (no fit) gets:
/// wider than any real terminal, 4 MiB a screen.
pub const MAX_UNFIT: Size = Size {
    cols: 512,
    rows: 256,
};

pub fn update(m: &mut Model, msg: Msg, now: Instant) -> Vec<Effect> {
    let mut fx = Vec::new();
    // What a session says about itself (its output above all, the hot
    // path) never changes which panes there are or where they go.
    let same_layout = matches!(
        msg,
        Msg::Tick
            | Msg::Session(
                _,
                SessionMsg::Output(_) | SessionMsg::Status(_) | SessionMsg::Info(_)
            )
    );
    match msg {
        Msg::Key(k) if k.kind != KeyEventKind::Release => key(m, k, now, &mut fx),
        Msg::Key(_) => {}
        Msg::Paste(text) => paste(m, &text, &mut fx),
        Msg::Mouse(ev) => mouse(m, ev, now),
        Msg::Resize(c, r) => m.size = (c, r),
        Msg::Tick => tick(m, now, &mut fx),
        Msg::Found(ids) => found(m, ids, &mut fx),
        Msg::Orphans(ids) => orphans(m, ids, &mut fx),
        Msg::Ended(records) => ended(m, records, now),
        Msg::Session(id, sm) => session(m, &id, sm, now, &mut fx),
        Msg::Started(id, result) => {
            m.starting.remove(&id);
            match result {
                Ok(()) => {
                    // It is serving now: show it without waiting for the next
                    // scan, or the selection would fall back to another pane.
                    let mut connect = Vec::new();
                    found(m, vec![id.clone()], &mut connect);
                    fx.extend(connect.into_iter().map(|e| match e {
                        Effect::Connect(id) => Effect::ConnectStarted(id),
                        e => e,
                    }));
                    // The user asked to see it: a filter hiding it goes.
                    if !m.visible_ids().contains(&id) {
                        m.filter.clear();
                    }
                    m.selected = Some(id.clone());
                    m.notify(format!("started session '{id}'"), now);
                }
                Err(e) => m.notify(format!("could not start '{id}': {e}"), now),
            }
        }
    }
    // Enter and `x` act on the selection: it is always a pane on show.
    let visible = m.visible_ids();
    if m.selected.as_ref().is_none_or(|s| !visible.contains(s)) {
        m.selected = visible.into_iter().next();
    }
    if !same_layout {
        show_selected(m);
    }
    clear_attention_of_selected(m);
    fit(m, now, &mut fx);
    fx
}

/// Turns to the page holding the selection: after a resize or a pane
/// coming or going the pages are cut anew, and Enter or `x` must never act
/// on a pane that is not on screen.
fn show_selected(m: &mut Model) {
    let ids = m.visible_ids();
    if let Some(pos) = m
        .selected
        .as_ref()
        .and_then(|s| ids.iter().position(|i| i == s))
    {
        m.page = pos / placements(m).grid.per_page().max(1);
    }
}

fn clear_attention_of_selected(m: &mut Model) {
    if let Some(id) = m.selected.clone()
        && let Some(p) = m.pane_mut(&id)
    {
        p.attention = false;
    }
}

/// The rows a focused session gets: the terminal's, less the bar's (a
/// terminal of one row has no bar).
pub fn focus_rows(rows: u16) -> u16 {
    if rows >= 2 { rows - 1 } else { rows }
}

/// Resizes sessions (and their emulators) to what they are shown in.
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
                p.resized_at = Some(now);
                p.term.resize(size);
                fx.push(Effect::Resize(id, size));
            }
        } else if let Some(s) = p.session_size {
            p.term.resize(s);
        }
    }
}

/// Asks a session for its state. With `size_too` (sessions keep their own
/// size) INFO is asked as well: the protocol does not announce a resize
/// by another client, and a stale size would misdraw the pane.
fn poll(p: &mut Pane, now: Instant, size_too: bool, fx: &mut Vec<Effect>) {
    if !p.poll_in_flight && p.link == Link::Live && p.exit.is_none() {
        p.poll_in_flight = true;
        p.last_poll = Some(now);
        fx.push(Effect::Status(p.id.clone()));
        if size_too {
            fx.push(Effect::Info(p.id.clone()));
        }
    }
}

fn tick(m: &mut Model, now: Instant, fx: &mut Vec<Effect>) {
    let size_too = !m.fit;
    let mut silent = Vec::new();
    for p in &mut m.panes {
        if p.answer_due().is_some_and(|t| now >= t) {
            p.unresponsive = true;
            silent.push(p.id.clone());
        }
        if p.idle_check.is_some_and(|t| now >= t) {
            p.idle_check = None;
            poll(p, now, size_too, fx);
        }
    }
    match silent.as_slice() {
        [] => {}
        [id] => m.notify(format!("'{id}' is not responding"), now),
        many => m.notify(format!("{} sessions are not responding", many.len()), now),
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
        if m.starting.contains(&id) {
            continue;
        }
        // A pane whose session is over gives way to a new one of its id.
        if m.pane(&id).is_none_or(|p| p.link == Link::Gone) {
            m.panes.retain(|p| p.id != id);
            m.panes.push(Pane::new(id.clone()));
            fx.push(Effect::Connect(id));
        }
    }
    m.panes
        .sort_by(|a, b| crate::paths::natural_cmp(&a.id, &b.id));
}

/// Sessions whose program outlived its supervisor get a pane too (its
/// connection finds the supervisor gone and names the program), unless
/// cleared while orphaned; a cleared one is forgotten once it is not.
fn orphans(m: &mut Model, ids: Vec<String>, fx: &mut Vec<Effect>) {
    m.dismissed.retain(|d| ids.contains(d));
    let new: Vec<String> = ids
        .into_iter()
        .filter(|id| m.pane(id).is_none() && !m.dismissed.contains(id))
        .collect();
    if !new.is_empty() {
        found(m, new, fx);
    }
}

/// Ended sessions get a pane showing how they ended and their last
/// lines, as if the dashboard had watched them end (`x` forgets one, `r`
/// starts it again).
fn ended(m: &mut Model, records: Vec<crate::supervisor::ended::Ended>, now: Instant) {
    let unix_now = crate::clock::unix_ms();
    let mut added = false;
    for r in records {
        if m.pane(&r.id).is_some() || m.starting.contains(&r.id) {
            continue;
        }
        let mut p = Pane::new(r.id.clone());
        p.exit = Some(r.exit_code);
        p.link = Link::Gone;
        p.command = Some(r.command.join(" "));
        p.workdir = Some(r.workdir.clone());
        p.label = r.label.clone();
        let ago = std::time::Duration::from_millis(unix_now.saturating_sub(r.ended_unix_ms));
        p.ended_at = Some(now.checked_sub(ago).unwrap_or(now));
        let text: Vec<String> = r.last_lines.iter().map(|l| format!("{l}\r\n")).collect();
        p.term.feed(text.concat().as_bytes());
        m.panes.push(p);
        added = true;
    }
    if added {
        m.panes
            .sort_by(|a, b| crate::paths::natural_cmp(&a.id, &b.id));
        if m.selected.is_none() {
            m.selected = m.visible_ids().first().cloned();
        }
    }
}

fn session(m: &mut Model, id: &str, sm: SessionMsg, now: Instant, fx: &mut Vec<Effect>) {
    let selected = m.selected.as_deref() == Some(id);
    let focused = m.mode == Mode::Focus(id.to_string());
    let bell = m.bell;
    let desktop = m.desktop;
    let size_too = !m.fit;
    // The bell and the desktop notification, as configured.
    let alert = |fx: &mut Vec<Effect>, what: String| {
        if bell {
            fx.push(Effect::Bell);
        }
        if desktop {
            fx.push(Effect::Desktop(format!("{id}: {what}")));
        }
    };
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
            // Once work is under way, all its output is work.
            if p.busy_since.is_some() || !p.redrawing(now) {
                p.last_work = Some(now);
                p.busy_since.get_or_insert(now);
            }
            p.idle_check = Some(now + p.idle_threshold + Duration::from_millis(100));
            let shown_idle = p
                .status
                .is_none_or(|(s, _)| s.state == ProcessState::Idle.as_byte());
            if shown_idle || p.last_poll.is_none_or(|t| now >= t + POLL_EVERY) {
                poll(p, now, size_too, fx);
            }
        }
        SessionMsg::State(report) => {
            // The pushed state stands until the next STATUS answer; the
            // timers keep what STATUS said of them.
            if let Some((s, at)) = &mut p.status {
                s.state = report.state_byte;
                s.state_ms = u32::try_from(report.state_ms).unwrap_or(u32::MAX);
                *at = now;
            }
            p.report = Some(report);
            if note_waiting(p, now) && !selected && !focused {
                alert(fx, p.state_label().unwrap_or_else(|| "waiting".into()));
            }
            if !p.busy() {
                p.busy_since = None;
            }
        }
        SessionMsg::Status(s) => {
            p.poll_in_flight = false;
            p.unresponsive = false;
            p.status = Some((s, now));
            if note_waiting(p, now) && !selected && !focused {
                alert(fx, p.state_label().unwrap_or_else(|| "waiting".into()));
            }
            if p.busy() {
                // Ask again when the silence so far would reach the idle
                // threshold, rather than a full threshold after our question.
                let left = p
                    .idle_threshold
                    .saturating_sub(Duration::from_millis(u64::from(s.idle_ms)));
                let at = now + left + Duration::from_millis(100);
                p.idle_check = Some(p.idle_check.map_or(at, |t| t.min(at)));
                // Dated from when the state began, not when we asked.
                let began = now
                    .checked_sub(Duration::from_millis(u64::from(s.state_ms)))
                    .unwrap_or(now);
                if p.busy_since.is_some() || !p.redrawing(began) {
                    p.busy_since = Some(p.busy_since.map_or(began, |b| b.min(began)));
                }
                return;
            }
            // Work is measured to the last output, not to when idle was
            // seen: the `simple` classifier stays busy for its whole idle
            // threshold after any output, so a prompt redrawn after a
            // resize would otherwise always count as 3 s of work.
            let worked = p
                .busy_since
                .take()
                .zip(p.last_work)
                .is_some_and(|(b, last)| last.saturating_duration_since(b) >= MIN_WORK);
            if worked && !selected && !focused {
                p.attention = true;
                alert(fx, "finished".into());
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
            if let Some(dir) = v.get("workdir").and_then(|d| d.as_str()) {
                p.workdir = Some(dir.to_owned());
            }
            p.label = v
                .get("label")
                .and_then(|l| l.as_str())
                .filter(|l| !l.is_empty())
                .map(paths::sanitize);
            if let Some(Size { cols, rows }) = Size::from_info(&v) {
                // An emulator holds its whole screen (32 bytes a cell), so a
                // session sized absurdly by some client is shown at most
                // this big rather than costing gigabytes.
                p.session_size = Some(Size {
                    cols: cols.clamp(1, MAX_UNFIT.cols),
                    rows: rows.clamp(1, MAX_UNFIT.rows),
                });
            }
        }
        SessionMsg::Exit(code) => {
            p.exit = Some(code);
            p.ended_at.get_or_insert(now);
            if !focused {
                p.attention = !selected;
                if !selected {
                    alert(fx, format!("exited with code {code}"));
                }
            }
            // Focused, or being asked about a kill that is now moot.
            let asked = m.mode == Mode::ConfirmKill(id.to_string());
            if focused {
                end_focus(m, id);
            } else if asked {
                m.mode = Mode::Grid;
            }
            if focused || asked {
                m.notify(format!("session '{id}' exited with code {code}"), now);
            }
        }
        SessionMsg::Problem(why) => {
            p.link = Link::Problem(why);
        }
        SessionMsg::Closed(orphan) => {
            let was_orphan = p.orphan.is_some();
            p.link = Link::Gone;
            p.ended_at.get_or_insert(now);
            p.orphan = orphan.filter(|_| p.exit.is_none());
            // An orphan that ended is old news, not a new call for attention.
            if p.exit.is_none() && !was_orphan {
                p.attention = !selected;
            }
            let orphan_ended = was_orphan && p.orphan.is_none();
            let lost = format!("'{id}' lost its supervisor");
            if orphan_ended {
                // The pid it names is gone, and may soon be another's.
                if m.notice.as_ref().is_some_and(|(n, _)| n.starts_with(&lost)) {
                    m.notice = None;
                }
            } else if let Some(pid) = p.orphan {
                // Short enough for the footer; `hm ls` says it at length.
                m.notify(
                    format!(
                        "'{id}' lost its supervisor; pid {pid} runs on ('kill {pid}' stops it)"
                    ),
                    now,
                );
            }
            if focused {
                end_focus(m, id);
            } else if m.mode == Mode::ConfirmKill(id.to_string()) {
                m.mode = Mode::Grid;
            }
        }
    }
}

/// Back from focus to where it was entered: the zoomed pane or the grid.
fn end_focus(m: &mut Model, id: &str) {
    m.mode = if m.zoom_after_focus {
        Mode::Zoom(id.to_string())
    } else {
        Mode::Grid
    };
}

fn key(m: &mut Model, k: KeyEvent, now: Instant, fx: &mut Vec<Effect>) {
    match m.mode.clone() {
        Mode::Focus(id) => {
            if m.detach_key.is_some_and(|b| keys::is_byte(&k, b)) {
                end_focus(m, &id);
                return;
            }
            let app_cursor = m
                .pane(&id)
                .is_some_and(|p| p.term.screen().application_cursor());
            if let Some(bytes) = keys::encode(&k, app_cursor) {
                fx.push(Effect::Input(id, bytes));
            }
        }
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
                poll(p, now, size_too, fx);
                if p.unresponsive {
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
                if let Err(e) = paths::validate_id(&id) {
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
            (KeyCode::Tab, NewStep::Command | NewStep::Dir) => {
                let step = if step == NewStep::Dir {
                    NewStep::Command
                } else {
                    NewStep::Dir
                };
                m.mode = Mode::NewSession { step, id, command };
            }
            (KeyCode::Enter, NewStep::Command | NewStep::Dir) => {
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
                }
                m.mode = Mode::NewSession { step, id, command };
            }
            (KeyCode::Backspace, NewStep::Dir) => {
                m.new_dir.pop();
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
                focus(m, id, now);
            }
        }
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

/// Notes when a session starts or stops waiting for its user; true when
/// it has just started (worth a bell). Waiting asks for attention until
/// the pane is looked at, like finished work.
fn note_waiting(p: &mut Pane, now: Instant) -> bool {
    if !p.waiting() {
        p.waiting_since = None;
        return false;
    }
    if p.waiting_since.is_some() {
        return false;
    }
    p.waiting_since = Some(now);
    p.attention = true;
    true
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
            fx.push(Effect::Input(id.clone(), bytes));
        }
        Mode::Filter => m.filter.push_str(text.trim()),
        Mode::NewSession { step, id, command } => {
            let (mut id, mut command) = (id.clone(), command.clone());
            match step {
                NewStep::Id => id.push_str(text.trim()),
                NewStep::Command => command.push_str(text),
                NewStep::Dir => m.new_dir.push_str(text.trim()),
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
    if double {
        m.last_click = None;
        focus(m, id, now);
    }
}

/// Focuses a live session, unless there would be no key to come back with.
fn focus(m: &mut Model, id: String, now: Instant) {
    let Some(p) = m.pane(&id) else { return };
    let refused = match &p.link {
        _ if p.exit.is_some() => Some(format!("'{id}' has exited")),
        Link::Gone => Some(format!("'{id}' has no supervisor")),
        Link::Problem(why) => Some(format!("'{id}': {why}")),
        Link::Connecting => Some(format!("'{id}' is still connecting")),
        Link::Live => None,
    };
    if let Some(why) = refused {
        m.notify(why, now);
        return;
    }
    // Focused all the same (keys wait for it), but told.
    if p.unresponsive {
        m.notify(format!("'{id}' is not responding"), now);
    }
    if m.detach_key.is_none() {
        // Every key would go to the session, with no way back to the grid.
        m.notify(
            "focus needs a detach key: detach_key is \"none\" in the config",
            now,
        );
        return;
    }
    m.zoom_after_focus = matches!(m.mode, Mode::Zoom(_));
    m.mode = Mode::Focus(id);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Status;
    use crate::tui::theme::Theme;
    use crossterm::event::MouseEvent;

    fn model(cols: u16, rows: u16) -> Model {
        Model::new(
            Theme::by_name("dark").expect("built-in theme"),
            (cols, rows),
        )
    }

    /// Sessions found and connected, as the run loop would report them.
    fn live(m: &mut Model, ids: &[&str], now: Instant) -> Vec<Effect> {
        let mut fx = update(
            m,
            Msg::Found(ids.iter().map(|s| s.to_string()).collect()),
            now,
        );
        for id in ids {
            fx.extend(update(
                m,
                Msg::Session(id.to_string(), SessionMsg::Connected),
                now,
            ));
        }
        fx
    }

    fn press(code: KeyCode) -> Msg {
        Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn ctrl(c: char) -> Msg {
        Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
    }

    fn typed(m: &mut Model, text: &str, now: Instant) -> Vec<Effect> {
        text.chars()
            .flat_map(|c| update(m, press(KeyCode::Char(c)), now))
            .collect()
    }

    fn st(id: &str, state: ProcessState, state_ms: u32) -> Msg {
        Msg::Session(
            id.into(),
            SessionMsg::Status(Status {
                pid: 42,
                idle_ms: 0,
                alive: state != ProcessState::Dead,
                state: state.as_byte(),
                state_ms,
            }),
        )
    }

    /// What the effects ask of sessions, in order: input, resizes,
    /// questions and kills (connections, alerts and starts left out).
    fn requests(fx: &[Effect]) -> Vec<&Effect> {
        fx.iter()
            .filter(|e| {
                matches!(
                    e,
                    Effect::Input(..)
                        | Effect::Resize(..)
                        | Effect::Status(_)
                        | Effect::Info(_)
                        | Effect::Kill(_)
                )
            })
            .collect()
    }

    fn resizes(fx: &[Effect]) -> Vec<(String, Size)> {
        fx.iter()
            .filter_map(|e| match e {
                Effect::Resize(id, size) => Some((id.clone(), *size)),
                _ => None,
            })
            .collect()
    }

    fn inputs(fx: &[Effect]) -> Vec<Vec<u8>> {
        fx.iter()
            .filter_map(|e| match e {
                Effect::Input(_, bytes) => Some(bytes.clone()),
                _ => None,
            })
            .collect()
    }

    fn kills(fx: &[Effect]) -> usize {
        fx.iter().filter(|e| matches!(e, Effect::Kill(_))).count()
    }

    /// What each pane on the current page should be resized to.
    fn inner_sizes(m: &Model) -> Vec<(String, Size)> {
        placements(m)
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
            .collect()
    }

    /// The footer's notice now, or "".
    fn notice(m: &Model) -> String {
        m.notice
            .as_ref()
            .map(|(n, _)| n.clone())
            .unwrap_or_default()
    }

    fn sel(m: &Model) -> &str {
        m.selected.as_deref().unwrap_or("<none>")
    }

    fn click(column: u16, row: u16) -> Msg {
        Msg::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column,
            row,
            modifiers: KeyModifiers::NONE,
        })
    }

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("p{i:02}")).collect()
    }

    #[test]
    fn found_sessions_get_one_connection_each_and_the_first_is_selected() {
        let now = Instant::now();
        let mut m = model(160, 49);
        let fx = update(&mut m, Msg::Found(vec!["b".into(), "a".into()]), now);
        assert_eq!(
            fx,
            vec![Effect::Connect("b".into()), Effect::Connect("a".into())]
        );
        assert_eq!(m.visible_ids(), ["a", "b"]);
        assert_eq!(sel(&m), "a");
        let again = update(&mut m, Msg::Found(vec!["a".into(), "b".into()]), now);
        assert!(again.is_empty(), "{again:?}");
    }

    #[test]
    fn arrows_and_hjkl_move_the_selection_by_grid_cells() {
        let now = Instant::now();
        let mut m = model(160, 49);
        live(&mut m, &["a", "b", "c", "d"], now);
        assert_eq!(placements(&m).grid, Grid { cols: 2, rows: 2 });
        assert_eq!(sel(&m), "a");
        let moves = [
            (KeyCode::Right, "b"),
            (KeyCode::Down, "d"),
            (KeyCode::Left, "c"),
            (KeyCode::Up, "a"),
            (KeyCode::Left, "a"),
            (KeyCode::Up, "a"),
            (KeyCode::Char('l'), "b"),
            (KeyCode::Char('j'), "d"),
            (KeyCode::Down, "d"),
            (KeyCode::Right, "d"),
            (KeyCode::Char('h'), "c"),
            (KeyCode::Char('k'), "a"),
        ];
        for (code, want) in moves {
            let fx = update(&mut m, press(code), now);
            assert_eq!(sel(&m), want, "after {code:?}");
            assert!(resizes(&fx).is_empty(), "moving resizes nothing");
        }
    }

    #[test]
    fn pages_turn_with_pgdn_pgup_and_follow_the_selection() {
        let now = Instant::now();
        let mut m = model(80, 25);
        let names = ids(30);
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        live(&mut m, &refs, now);
        let p = placements(&m);
        let per = p.grid.per_page();
        assert!(p.pages > 1 && per < 30, "{p:?}");
        assert_eq!((p.page, p.rects[0].0.as_str()), (0, "p00"));

        update(&mut m, press(KeyCode::PageDown), now);
        let p = placements(&m);
        assert_eq!(p.page, 1);
        assert_eq!(sel(&m), names[per]);
        assert_eq!(p.rects[0].0, names[per]);

        update(&mut m, press(KeyCode::PageUp), now);
        assert_eq!((placements(&m).page, sel(&m)), (0, "p00"));
        update(&mut m, press(KeyCode::PageUp), now);
        assert_eq!(placements(&m).page, 0, "no page before the first");

        // Walking off the end of a page turns it.
        for _ in 0..per {
            update(&mut m, press(KeyCode::Right), now);
        }
        assert_eq!((placements(&m).page, sel(&m)), (1, names[per].as_str()));

        for _ in 0..10 {
            update(&mut m, press(KeyCode::PageDown), now);
        }
        let p = placements(&m);
        assert_eq!(p.page, p.pages - 1, "no page after the last");
    }

    #[test]
    fn tab_goes_to_the_next_session_that_needs_attention() {
        let now = Instant::now();
        let mut m = model(160, 49);
        live(&mut m, &["a", "b", "c", "d"], now);
        update(&mut m, press(KeyCode::Tab), now);
        assert_eq!(sel(&m), "a");
        assert_eq!(
            m.notice.as_ref().map(|(t, _)| t.as_str()),
            Some("no session needs attention")
        );
        for id in ["b", "d"] {
            m.pane_mut(id).expect("pane").attention = true;
        }
        update(&mut m, press(KeyCode::Tab), now);
        assert_eq!(sel(&m), "b");
        assert!(!m.pane("b").expect("pane").attention, "looking clears it");
        update(&mut m, press(KeyCode::Tab), now);
        assert_eq!(sel(&m), "d");
        update(&mut m, press(KeyCode::Tab), now);
        assert_eq!(sel(&m), "d", "nothing left to look at");
    }

    #[test]
    fn without_a_detach_key_focus_is_refused_not_a_trap() {
        let now = Instant::now();
        let mut m = model(100, 31);
        m.detach_key = None;
        live(&mut m, &["a"], now);
        update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(m.mode, Mode::Grid);
        let notice = notice(&m);
        assert!(notice.contains("detach key"), "{notice}");
    }

    #[test]
    fn a_resize_keeps_the_selection_on_screen() {
        let now = Instant::now();
        let mut m = model(80, 24);
        live(&mut m, &["a", "b", "c", "d", "e"], now);
        assert_eq!(placements(&m).pages, 1);
        update(&mut m, press(KeyCode::Right), now);
        update(&mut m, press(KeyCode::Right), now);
        let chosen = sel(&m).to_string();
        update(&mut m, Msg::Resize(30, 8), now);
        let p = placements(&m);
        assert!(p.pages > 1, "{p:?}");
        assert_eq!(sel(&m), chosen);
        assert!(p.rects.iter().any(|(id, _)| *id == chosen), "{p:?}");
        // Enter focuses what is on screen.
        update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(m.mode, Mode::Focus(chosen));
    }

    #[test]
    fn tab_turns_to_the_page_of_the_session() {
        let now = Instant::now();
        let mut m = model(80, 25);
        let names = ids(30);
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        live(&mut m, &refs, now);
        m.pane_mut("p29").expect("pane").attention = true;
        update(&mut m, press(KeyCode::Tab), now);
        let p = placements(&m);
        assert_eq!(sel(&m), "p29");
        assert_eq!(p.page, p.pages - 1);
        assert!(p.rects.iter().any(|(id, _)| id == "p29"));
    }

    #[test]
    fn finished_work_asks_for_attention_only_after_two_seconds_of_it() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut m = model(160, 49);
        m.bell = true;
        live(&mut m, &["a", "b"], t0);
        assert_eq!(sel(&m), "a");

        let out = |id: &str| Msg::Session(id.into(), SessionMsg::Output(b"x".to_vec()));
        // A prompt redrawn: one burst of output, busy until the idle
        // threshold (3 s) has passed in silence, then idle. Not work.
        update(&mut m, out("b"), at(0));
        update(&mut m, st("b", ProcessState::Active, 0), at(0));
        let fx = update(&mut m, st("b", ProcessState::Idle, 0), at(3100));
        assert!(!m.pane("b").expect("pane").attention);
        assert!(!fx.contains(&Effect::Bell));

        // Output for 1.9 s: still not work.
        update(&mut m, out("b"), at(4000));
        update(&mut m, st("b", ProcessState::Active, 0), at(4000));
        update(&mut m, out("b"), at(5900));
        update(&mut m, st("b", ProcessState::Idle, 0), at(9000));
        assert!(!m.pane("b").expect("pane").attention);

        // Output for two seconds, then idle: done, and it rings.
        update(&mut m, out("b"), at(10_000));
        update(&mut m, st("b", ProcessState::Active, 0), at(10_000));
        update(&mut m, out("b"), at(11_000));
        update(&mut m, st("b", ProcessState::Active, 1000), at(11_000));
        update(&mut m, out("b"), at(12_000));
        let fx = update(&mut m, st("b", ProcessState::Idle, 0), at(15_100));
        assert!(m.pane("b").expect("pane").attention);
        assert!(fx.contains(&Effect::Bell));

        // Idle again after idle is no new news.
        m.pane_mut("b").expect("pane").attention = false;
        let fx = update(&mut m, st("b", ProcessState::Idle, 0), at(16_000));
        assert!(!m.pane("b").expect("pane").attention);
        assert!(fx.is_empty(), "{fx:?}");
    }

    #[test]
    fn a_pane_whose_supervisor_is_gone_gives_way_to_a_new_session_of_its_id() {
        let now = Instant::now();
        let mut m = model(160, 49);
        live(&mut m, &["a", "b", "c"], now);
        update(
            &mut m,
            Msg::Session("b".into(), SessionMsg::Closed(None)),
            now,
        );
        update(
            &mut m,
            Msg::Session("c".into(), SessionMsg::Closed(Some(42))),
            now,
        );
        // `n` may take b's id; c's program still runs under it.
        for (id, refused) in [("b", false), ("c", true)] {
            update(&mut m, press(KeyCode::Char('n')), now);
            update(&mut m, ctrl('u'), now);
            typed(&mut m, id, now);
            update(&mut m, press(KeyCode::Enter), now);
            let asks_command = matches!(
                m.mode,
                Mode::NewSession {
                    step: NewStep::Command,
                    ..
                }
            );
            assert_eq!(asks_command, !refused, "{id}: {}", notice(&m));
            update(&mut m, press(KeyCode::Esc), now);
        }
        assert!(notice(&m).contains("pid 42"), "{}", notice(&m));
        // A session of b's id found running replaces the pane.
        let fx = update(&mut m, Msg::Found(vec!["a".into(), "b".into()]), now);
        assert_eq!(fx, vec![Effect::Connect("b".into())]);
        assert_eq!(m.pane("b").expect("pane").link, Link::Connecting);
    }

    #[test]
    fn the_selection_is_always_on_show_whatever_the_filter() {
        let now = Instant::now();
        let mut m = model(160, 49);
        live(&mut m, &["a", "lessy", "ticker"], now);
        m.selected = Some("lessy".into());
        update(&mut m, press(KeyCode::Char('/')), now);
        typed(&mut m, "ti", now);
        update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(sel(&m), "ticker");
        // A session started while a filter hides it: the filter goes.
        update(&mut m, press(KeyCode::Char('/')), now);
        typed(&mut m, "zzz", now);
        update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(sel(&m), "<none>");
        let fx = update(&mut m, Msg::Started("newf".into(), Ok(())), now);
        assert!(fx.contains(&Effect::ConnectStarted("newf".into())));
        assert_eq!(m.filter, "");
        assert_eq!(sel(&m), "newf");
    }

    #[test]
    fn a_session_being_started_is_left_to_its_own_connection() {
        let now = Instant::now();
        let mut m = model(160, 49);
        m.shell = "/bin/sh".into();
        update(&mut m, press(KeyCode::Char('n')), now);
        update(&mut m, press(KeyCode::Enter), now);
        update(&mut m, press(KeyCode::Enter), now);
        // The scan finds it before the start says it is serving.
        let fx = update(&mut m, Msg::Found(vec!["s1".into()]), now);
        assert!(fx.is_empty(), "{fx:?}");
        let fx = update(&mut m, Msg::Started("s1".into(), Ok(())), now);
        assert_eq!(fx, vec![Effect::ConnectStarted("s1".into())]);
        // Once started, it is like any other.
        let fx = update(&mut m, Msg::Found(vec!["s1".into()]), now);
        assert!(fx.is_empty(), "{fx:?}");
    }

    #[test]
    fn clearing_an_ended_pane_selects_its_neighbour() {
        let now = Instant::now();
        let mut m = model(160, 49);
        live(&mut m, &["a", "b", "c", "d"], now);
        for (gone, next) in [("b", "c"), ("d", "c")] {
            update(&mut m, Msg::Session(gone.into(), SessionMsg::Exit(0)), now);
            m.selected = Some(gone.into());
            update(&mut m, press(KeyCode::Char('x')), now);
            assert!(m.pane(gone).is_none());
            assert_eq!(sel(&m), next);
        }
    }

    #[test]
    fn sessions_that_ended_unseen_get_a_pane_that_x_forgets_and_r_restarts() {
        let now = Instant::now();
        let mut m = model(160, 49);
        live(&mut m, &["a"], now);
        let record = |id: &str| crate::supervisor::ended::Ended {
            id: id.into(),
            command: vec!["sh".into(), "-c".into(), "exit 3".into()],
            workdir: "/".into(),
            classifier: "simple".into(),
            started_unix_ms: 0,
            ended_unix_ms: crate::clock::unix_ms(),
            exit_code: 3,
            last_lines: vec!["bye".into()],
            label: None,
            cols: 80,
            rows: 24,
        };
        update(
            &mut m,
            Msg::Ended(vec![record("b"), record("c"), record("a")]),
            now,
        );
        let b = m.pane("b").expect("a pane for an ended session");
        assert!(b.ended());
        assert_eq!(b.exit, Some(3));
        assert!(b.term.screen().contents().contains("bye"));
        assert!(
            !m.pane("a").is_some_and(Pane::ended),
            "a live pane stays live"
        );
        m.selected = Some("b".into());
        let fx = update(&mut m, press(KeyCode::Char('x')), now);
        // (The layout changed: the others may be resized too.)
        assert!(fx.contains(&Effect::Forget("b".into())), "{fx:?}");
        assert!(m.pane("b").is_none());
        m.selected = Some("c".into());
        let fx = update(&mut m, press(KeyCode::Char('r')), now);
        assert!(fx.contains(&Effect::Restart("c".into())), "{fx:?}");
        assert!(m.starting.contains("c"));
        // Until it starts, its record does not bring the old pane back.
        update(&mut m, Msg::Ended(vec![record("c")]), now);
        assert!(m.pane("c").is_none());
        // `r` on a live session does nothing.
        m.selected = Some("a".into());
        let fx = update(&mut m, press(KeyCode::Char('r')), now);
        assert!(
            !fx.iter().any(|e| matches!(e, Effect::Restart(_))),
            "{fx:?}"
        );
    }

    #[test]
    fn redraws_after_our_resizes_are_not_work() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut m = model(160, 49);
        m.bell = true;
        live(&mut m, &["a", "b"], t0);
        let out = |id: &str| Msg::Session(id.into(), SessionMsg::Output(b"$ ".to_vec()));
        // The prompt redrawn after the resize that came with connecting,
        // then after two layout changes, each while the last redraw still
        // keeps the classifier busy.
        update(&mut m, out("b"), at(10));
        update(&mut m, st("b", ProcessState::Active, 0), at(20));
        for (key, t) in [(KeyCode::Char('-'), 2500), (KeyCode::Char('='), 5000)] {
            let fx = update(&mut m, press(key), at(t));
            assert!(
                fx.iter()
                    .any(|e| matches!(e, Effect::Resize(id, _) if id == "b")),
                "b resized: {fx:?}"
            );
            update(&mut m, out("b"), at(t + 10));
            update(&mut m, st("b", ProcessState::Active, 0), at(t + 20));
        }
        let fx = update(&mut m, st("b", ProcessState::Idle, 0), at(8100));
        assert!(!m.pane("b").expect("pane").attention);
        assert!(!fx.contains(&Effect::Bell));
        // Work after that still counts.
        update(&mut m, out("b"), at(10_000));
        update(&mut m, st("b", ProcessState::Active, 0), at(10_010));
        update(&mut m, out("b"), at(12_500));
        let fx = update(&mut m, st("b", ProcessState::Idle, 0), at(15_600));
        assert!(m.pane("b").expect("pane").attention);
        assert!(fx.contains(&Effect::Bell));
    }

    #[test]
    fn work_is_dated_from_when_the_state_began_not_when_it_was_seen() {
        let t0 = Instant::now() + Duration::from_secs(10);
        let mut m = model(160, 49);
        live(&mut m, &["a", "b"], t0);
        // First seen busy, but it has been for 5 s already.
        update(&mut m, st("b", ProcessState::Streaming, 5000), t0);
        update(
            &mut m,
            Msg::Session("b".into(), SessionMsg::Output(b"x".to_vec())),
            t0,
        );
        update(
            &mut m,
            st("b", ProcessState::Idle, 0),
            t0 + Duration::from_millis(100),
        );
        assert!(m.pane("b").expect("pane").attention);
    }

    #[test]
    fn the_selected_session_never_asks_for_attention_and_bell_is_opt_in() {
        let t0 = Instant::now();
        let mut m = model(160, 49);
        live(&mut m, &["a", "b"], t0);
        // Well after the resizes that came with connecting.
        let w = t0 + Duration::from_millis(1500);
        update(&mut m, st("a", ProcessState::Active, 0), w);
        update(&mut m, st("b", ProcessState::Active, 0), w);
        for id in ["a", "b"] {
            let out = Msg::Session(id.into(), SessionMsg::Output(b"x".to_vec()));
            update(&mut m, out, w + Duration::from_millis(2500));
        }
        let later = w + Duration::from_secs(6);
        update(&mut m, st("a", ProcessState::Idle, 0), later);
        let fx = update(&mut m, st("b", ProcessState::Idle, 0), later);
        assert!(!m.pane("a").expect("pane").attention, "selected");
        assert!(m.pane("b").expect("pane").attention);
        assert!(!fx.contains(&Effect::Bell), "bell is off by default");
    }

    #[test]
    fn the_new_session_prompt_takes_a_directory_after_tab() {
        let now = Instant::now();
        let mut m = model(160, 49);
        m.cwd = "/home/u/here".into();
        live(&mut m, &["a"], now);
        update(&mut m, press(KeyCode::Char('n')), now);
        update(&mut m, press(KeyCode::Enter), now);
        typed(&mut m, "make", now);
        update(&mut m, press(KeyCode::Tab), now);
        assert_eq!(m.new_dir, "/home/u/here", "the dashboard's directory first");
        let ctrl_u = Msg::Key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        update(&mut m, ctrl_u, now);
        typed(&mut m, "/srv/app", now);
        let fx = update(&mut m, press(KeyCode::Enter), now);
        assert!(
            fx.iter().any(
                |e| matches!(e, Effect::Spawn { command, workdir: Some(w), .. }
                if command == "make" && w == "/srv/app")
            ),
            "{fx:?}"
        );
    }

    #[test]
    fn s_sorts_by_state_needs_you_first_then_the_most_recently_active() {
        let t0 = Instant::now();
        let mut m = model(160, 49);
        live(&mut m, &["a", "b", "c", "d"], t0);
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        m.pane_mut("a").expect("a").last_output = Some(at(10));
        m.pane_mut("b").expect("b").last_output = Some(at(30));
        for (id, since) in [("c", 20), ("d", 5)] {
            let p = m.pane_mut(id).expect("pane");
            p.status = Some((
                Status {
                    pid: 1,
                    idle_ms: 0,
                    alive: true,
                    state: ProcessState::Waiting.as_byte(),
                    state_ms: 0,
                },
                at(since),
            ));
            p.waiting_since = Some(at(since));
        }
        assert_eq!(m.visible_ids(), ["a", "b", "c", "d"]);
        update(&mut m, press(KeyCode::Char('s')), at(40));
        assert_eq!(m.visible_ids(), ["d", "c", "b", "a"]);
        update(&mut m, press(KeyCode::Char('s')), at(40));
        assert_eq!(m.visible_ids(), ["a", "b", "c", "d"]);
    }

    #[test]
    fn slash_again_edits_the_filter_and_ctrl_u_clears_it() {
        let now = Instant::now();
        let mut m = model(160, 49);
        live(&mut m, &["api", "app", "db"], now);
        update(&mut m, press(KeyCode::Char('/')), now);
        typed(&mut m, "ap", now);
        update(&mut m, press(KeyCode::Enter), now);
        update(&mut m, press(KeyCode::Char('/')), now);
        typed(&mut m, "i", now);
        assert_eq!(m.filter, "api", "the filter is edited, not replaced");
        let ctrl_u = Msg::Key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        update(&mut m, ctrl_u, now);
        assert_eq!(m.filter, "");
        assert_eq!(m.mode, Mode::Filter);
    }

    #[test]
    fn control_and_alt_combinations_are_not_the_plain_letter() {
        let now = Instant::now();
        let mut m = model(160, 49);
        live(&mut m, &["a", "b"], now);
        let with = |c: char, mods: KeyModifiers| Msg::Key(KeyEvent::new(KeyCode::Char(c), mods));
        update(&mut m, with('z', KeyModifiers::CONTROL), now);
        assert_eq!(m.mode, Mode::Grid, "Ctrl-Z does not zoom");
        update(&mut m, with('x', KeyModifiers::CONTROL), now);
        assert_eq!(m.mode, Mode::Grid, "Ctrl-X does not ask to kill");
        update(&mut m, with('q', KeyModifiers::ALT), now);
        assert!(!m.quit, "Alt-Q does not quit");
        update(&mut m, with('q', KeyModifiers::CONTROL), now);
        assert!(!m.quit, "Ctrl-Q does not quit");
        update(&mut m, with('c', KeyModifiers::CONTROL), now);
        assert!(m.quit, "Ctrl-C quits");
    }

    #[test]
    fn desktop_notifications_tell_what_happened_to_which_session() {
        let now = Instant::now();
        let mut m = model(160, 49);
        m.desktop = true;
        live(&mut m, &["a", "b"], now);
        let fx = update(&mut m, Msg::Session("b".into(), SessionMsg::Exit(3)), now);
        assert_eq!(fx, vec![Effect::Desktop("b: exited with code 3".into())]);
        // Not for the session being looked at.
        let fx = update(&mut m, Msg::Session("a".into(), SessionMsg::Exit(0)), now);
        assert!(
            !fx.iter().any(|e| matches!(e, Effect::Desktop(_))),
            "{fx:?}"
        );
    }

    #[test]
    fn exit_asks_for_attention_unless_the_pane_is_selected() {
        let now = Instant::now();
        let mut m = model(160, 49);
        m.bell = true;
        live(&mut m, &["a", "b"], now);
        let fx = update(&mut m, Msg::Session("b".into(), SessionMsg::Exit(3)), now);
        let b = m.pane("b").expect("pane");
        assert!(b.attention);
        assert_eq!(b.exit, Some(3));
        assert_eq!(b.state(), Some(ProcessState::Dead.as_byte()));
        assert_eq!(fx, vec![Effect::Bell]);
        let fx = update(&mut m, Msg::Session("a".into(), SessionMsg::Exit(0)), now);
        assert!(!m.pane("a").expect("pane").attention);
        assert!(fx.is_empty(), "{fx:?}");
    }

    #[test]
    fn kill_asks_first_and_y_sends_kill_with_the_sessions_own_grace() {
        let now = Instant::now();
        let mut m = model(160, 49);
        live(&mut m, &["a", "b"], now);
        let fx = update(&mut m, press(KeyCode::Char('x')), now);
        assert_eq!(m.mode, Mode::ConfirmKill("a".into()));
        assert!(fx.is_empty(), "nothing happens before the answer: {fx:?}");
        let fx = update(&mut m, press(KeyCode::Char('y')), now);
        assert_eq!(m.mode, Mode::Grid);
        assert_eq!(requests(&fx), [&Effect::Kill("a".into())]);
    }

    #[test]
    fn a_session_that_does_not_answer_is_shown_so_and_a_kill_says_it_waits() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut m = model(160, 49);
        live(&mut m, &["a", "b"], t0);
        update(&mut m, st("a", ProcessState::Idle, 0), at(10));
        update(&mut m, st("b", ProcessState::Idle, 0), at(10));
        // The kill asks a question too.
        update(&mut m, press(KeyCode::Char('x')), at(1000));
        let fx = update(&mut m, press(KeyCode::Char('y')), at(1000));
        assert_eq!(
            requests(&fx),
            [&Effect::Kill("a".into()), &Effect::Status("a".into())]
        );
        assert_eq!(m.next_check(), Some(at(3000)));
        update(&mut m, Msg::Tick, at(3000));
        assert!(m.pane("a").expect("pane").unresponsive);
        assert!(!m.pane("b").expect("pane").unresponsive);
        assert_eq!(notice(&m), "'a' is not responding");
        // Enter focuses (keys wait for it) but says so.
        update(&mut m, press(KeyCode::Enter), at(3100));
        assert_eq!(m.mode, Mode::Focus("a".into()));
        assert_eq!(notice(&m), "'a' is not responding");
        update(&mut m, ctrl('\\'), at(3150));
        update(&mut m, press(KeyCode::Char('x')), at(3200));
        update(&mut m, press(KeyCode::Char('y')), at(3200));
        assert!(
            notice(&m).contains("killed once it resumes"),
            "{}",
            notice(&m)
        );
        // An answer ends it.
        update(&mut m, st("a", ProcessState::Idle, 0), at(4000));
        assert!(!m.pane("a").expect("pane").unresponsive);
    }

    #[test]
    fn a_kill_question_about_a_session_that_exits_goes_away() {
        let now = Instant::now();
        let mut m = model(160, 49);
        live(&mut m, &["a"], now);
        update(&mut m, press(KeyCode::Char('x')), now);
        assert_eq!(m.mode, Mode::ConfirmKill("a".into()));
        update(&mut m, Msg::Session("a".into(), SessionMsg::Exit(9)), now);
        assert_eq!(m.mode, Mode::Grid);
        assert_eq!(notice(&m), "session 'a' exited with code 9");
        // A late `y` kills nothing.
        let fx = update(&mut m, press(KeyCode::Char('y')), now);
        assert!(requests(&fx).is_empty(), "{fx:?}");
    }

    #[test]
    fn an_ended_sessions_timer_counts_from_its_end() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut m = model(160, 49);
        live(&mut m, &["a", "b"], t0);
        for id in ["a", "b"] {
            update(&mut m, st(id, ProcessState::Idle, 25_000), t0);
        }
        update(
            &mut m,
            Msg::Session("a".into(), SessionMsg::Closed(None)),
            at(1000),
        );
        update(
            &mut m,
            Msg::Session("b".into(), SessionMsg::Exit(0)),
            at(2000),
        );
        update(
            &mut m,
            Msg::Session("b".into(), SessionMsg::Closed(None)),
            at(2500),
        );
        assert_eq!(m.pane("a").and_then(|p| p.state_ms(at(4000))), Some(3000));
        assert_eq!(m.pane("b").and_then(|p| p.state_ms(at(4000))), Some(2000));
    }

    #[test]
    fn focus_entered_from_zoom_returns_to_it() {
        let now = Instant::now();
        let mut m = model(100, 31);
        live(&mut m, &["a", "b"], now);
        update(&mut m, press(KeyCode::Char('z')), now);
        update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(m.mode, Mode::Focus("a".into()));
        update(&mut m, ctrl('\\'), now);
        assert_eq!(m.mode, Mode::Zoom("a".into()));
        // From the grid, back to the grid; also when the session ends.
        update(&mut m, press(KeyCode::Esc), now);
        update(&mut m, press(KeyCode::Enter), now);
        update(&mut m, Msg::Session("a".into(), SessionMsg::Exit(0)), now);
        assert_eq!(m.mode, Mode::Grid);
    }

    #[test]
    fn esc_in_the_grid_clears_a_kept_filter() {
        let now = Instant::now();
        let mut m = model(100, 31);
        live(&mut m, &["api", "db"], now);
        update(&mut m, press(KeyCode::Char('/')), now);
        typed(&mut m, "db", now);
        update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(m.visible_ids(), ["db"]);
        update(&mut m, press(KeyCode::Esc), now);
        assert_eq!(m.filter, "");
        assert_eq!(m.visible_ids(), ["api", "db"]);
    }

    #[test]
    fn the_notice_naming_an_orphans_pid_goes_when_the_orphan_ends() {
        let now = Instant::now();
        let mut m = model(160, 49);
        live(&mut m, &["a"], now);
        update(
            &mut m,
            Msg::Session("a".into(), SessionMsg::Closed(Some(42))),
            now,
        );
        assert!(notice(&m).contains("pid 42"), "{}", notice(&m));
        update(
            &mut m,
            Msg::Session("a".into(), SessionMsg::Closed(None)),
            now,
        );
        assert_eq!(notice(&m), "");
        assert_eq!(m.pane("a").and_then(|p| p.orphan), None);
    }

    #[test]
    fn kill_answered_n_or_anything_else_kills_nothing() {
        let now = Instant::now();
        let mut m = model(160, 49);
        live(&mut m, &["a"], now);
        for answer in [KeyCode::Char('n'), KeyCode::Esc, KeyCode::Enter] {
            update(&mut m, press(KeyCode::Char('x')), now);
            assert_eq!(m.mode, Mode::ConfirmKill("a".into()));
            let fx = update(&mut m, press(answer), now);
            assert_eq!(m.mode, Mode::Grid, "{answer:?}");
            assert!(fx.is_empty(), "{answer:?}: {fx:?}");
        }
        assert!(m.pane("a").is_some());
    }

    #[test]
    fn x_on_a_finished_session_clears_its_pane_without_asking() {
        let now = Instant::now();
        let mut m = model(160, 49);
        live(&mut m, &["a", "b"], now);
        update(&mut m, Msg::Session("a".into(), SessionMsg::Exit(0)), now);
        update(
            &mut m,
            Msg::Session("a".into(), SessionMsg::Closed(None)),
            now,
        );
        let fx = update(&mut m, press(KeyCode::Char('x')), now);
        assert_eq!(m.mode, Mode::Grid);
        assert_eq!(kills(&fx), 0, "{fx:?}");
        assert_eq!(m.visible_ids(), ["b"]);
        assert_eq!(sel(&m), "b");
    }

    #[test]
    fn a_program_outliving_its_supervisor_is_named_and_cleared_like_an_ended_one() {
        let now = Instant::now();
        let mut m = model(160, 49);
        live(&mut m, &["a", "b"], now);
        update(
            &mut m,
            Msg::Session("a".into(), SessionMsg::Closed(Some(4321))),
            now,
        );
        let p = m.pane("a").expect("pane");
        assert_eq!((p.orphan, p.state()), (Some(4321), None), "not dead");
        let notice = notice(&m);
        assert!(notice.contains("kill 4321"), "{notice}");
        // Its end: no pid named any more, dead, and no new call.
        m.pane_mut("a").expect("pane").attention = false;
        update(
            &mut m,
            Msg::Session("a".into(), SessionMsg::Closed(None)),
            now,
        );
        let p = m.pane("a").expect("pane");
        assert_eq!(p.orphan, None);
        assert_eq!(p.state(), Some(ProcessState::Dead.as_byte()));
        assert!(!p.attention);
        let fx = update(&mut m, press(KeyCode::Char('x')), now);
        assert_eq!(kills(&fx), 0, "the program is not the dashboard's to kill");
        assert_eq!(m.visible_ids(), ["b"]);
    }

    #[test]
    fn orphans_get_a_pane_until_cleared_and_a_cleared_one_is_forgotten_once_gone() {
        let now = Instant::now();
        let mut m = model(160, 49);
        live(&mut m, &["a"], now);
        let fx = update(&mut m, Msg::Orphans(vec!["o".into()]), now);
        assert!(fx.contains(&Effect::Connect("o".into())), "{fx:?}");
        update(
            &mut m,
            Msg::Session("o".into(), SessionMsg::Closed(Some(77))),
            now,
        );
        m.selected = Some("o".into());
        update(&mut m, press(KeyCode::Char('x')), now);
        assert_eq!(m.visible_ids(), ["a"]);
        let fx = update(&mut m, Msg::Orphans(vec!["o".into()]), now);
        assert!(fx.is_empty() && m.pane("o").is_none(), "stays cleared");
        // No longer an orphan, then one again (another program): shown.
        update(&mut m, Msg::Orphans(Vec::new()), now);
        update(&mut m, Msg::Orphans(vec!["o".into()]), now);
        assert!(m.pane("o").is_some());
    }

    #[test]
    fn the_next_idle_check_is_the_earliest_pane_due() {
        let now = Instant::now();
        let mut m = model(160, 49);
        live(&mut m, &["a", "b"], now);
        // Answered: no question is waiting for one.
        update(&mut m, st("a", ProcessState::Idle, 0), now);
        update(&mut m, st("b", ProcessState::Idle, 0), now);
        for p in &mut m.panes {
            p.idle_check = None;
        }
        assert_eq!(m.next_check(), None, "an idle dashboard arms nothing");
        let soon = now + Duration::from_millis(1500);
        let out = |id: &str| Msg::Session(id.into(), SessionMsg::Output(b"x".to_vec()));
        update(&mut m, out("b"), now);
        update(&mut m, st("b", ProcessState::Active, 0), now);
        update(&mut m, out("a"), soon);
        update(&mut m, st("a", ProcessState::Active, 0), soon);
        let due = m.next_check().expect("armed");
        assert_eq!(Some(due), m.pane("b").and_then(|p| p.idle_check));
        update(&mut m, Msg::Tick, due);
        assert_eq!(m.next_check(), m.pane("a").and_then(|p| p.idle_check));
        assert!(m.next_check().is_some_and(|t| t > due));
    }

    #[test]
    fn enter_focuses_a_live_session_and_the_detach_key_returns() {
        let now = Instant::now();
        let mut m = model(100, 31);
        update(&mut m, Msg::Found(vec!["a".into()]), now);
        update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(m.mode, Mode::Grid, "not connected yet");
        update(&mut m, Msg::Session("a".into(), SessionMsg::Connected), now);
        update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(m.mode, Mode::Focus("a".into()));
        let fx = update(&mut m, ctrl('\\'), now);
        assert_eq!(m.mode, Mode::Grid);
        assert!(inputs(&fx).is_empty(), "the detach key is not typed");

        // Another detach key; the default one is then just a key.
        m.detach_key = Some(0x1d);
        update(&mut m, press(KeyCode::Enter), now);
        let fx = update(&mut m, ctrl('\\'), now);
        assert_eq!(inputs(&fx), [vec![0x1c]]);
        update(&mut m, ctrl(']'), now);
        assert_eq!(m.mode, Mode::Grid);
    }

    #[test]
    fn focus_ends_when_the_session_exits() {
        let now = Instant::now();
        let mut m = model(100, 31);
        live(&mut m, &["a"], now);
        update(&mut m, press(KeyCode::Enter), now);
        update(&mut m, Msg::Session("a".into(), SessionMsg::Exit(7)), now);
        assert_eq!(m.mode, Mode::Grid);
        assert!(
            !m.pane("a").expect("pane").attention,
            "it was being looked at"
        );
        let notice = notice(&m);
        assert!(notice.contains("exited with code 7"), "{notice}");
    }

    #[test]
    fn keys_in_focus_become_input_for_that_session_only() {
        let now = Instant::now();
        let mut m = model(100, 31);
        live(&mut m, &["a", "b"], now);
        update(&mut m, press(KeyCode::Right), now);
        update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(m.mode, Mode::Focus("b".into()));
        let mut fx = Vec::new();
        for msg in [
            press(KeyCode::Char('q')),
            ctrl('c'),
            press(KeyCode::Up),
            press(KeyCode::Enter),
            press(KeyCode::Char('x')),
            press(KeyCode::Tab),
        ] {
            fx.extend(update(&mut m, msg, now));
        }
        assert!(!m.quit, "q and Ctrl-C are the session's in focus");
        assert_eq!(m.mode, Mode::Focus("b".into()));
        assert!(
            requests(&fx)
                .iter()
                .all(|e| matches!(e, Effect::Input(id, _) if id == "b")),
            "{fx:?}"
        );
        assert_eq!(
            inputs(&fx),
            [
                b"q".to_vec(),
                vec![3],
                b"\x1b[A".to_vec(),
                b"\r".to_vec(),
                b"x".to_vec(),
                b"\t".to_vec()
            ]
        );
        // The session's own modes decide the encoding.
        update(
            &mut m,
            Msg::Session(
                "b".into(),
                SessionMsg::Output(b"\x1b[?1h\x1b[?2004h".to_vec()),
            ),
            now,
        );
        let fx = update(&mut m, press(KeyCode::Up), now);
        assert_eq!(inputs(&fx), [b"\x1bOA".to_vec()]);
        let fx = update(&mut m, Msg::Paste("hi".into()), now);
        assert_eq!(inputs(&fx), [b"\x1b[200~hi\x1b[201~".to_vec()]);
    }

    #[test]
    fn new_session_prompt_defaults_to_s1_and_the_shell() {
        let now = Instant::now();
        let mut m = model(100, 31);
        m.shell = "/bin/test-shell".into();
        update(&mut m, press(KeyCode::Char('n')), now);
        assert_eq!(
            m.mode,
            Mode::NewSession {
                step: NewStep::Id,
                id: "s1".into(),
                command: String::new()
            }
        );
        let fx = update(&mut m, press(KeyCode::Enter), now);
        assert!(fx.is_empty());
        assert!(matches!(
            m.mode,
            Mode::NewSession {
                step: NewStep::Command,
                ..
            }
        ));
        let fx = update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(
            fx,
            vec![Effect::Spawn {
                workdir: None,
                id: "s1".into(),
                command: "/bin/test-shell".into()
            }]
        );
        assert_eq!(m.mode, Mode::Grid);
        let fx = update(&mut m, Msg::Started("s1".into(), Ok(())), now);
        assert_eq!(fx, vec![Effect::ConnectStarted("s1".into())]);
        assert_eq!(sel(&m), "s1");
    }

    #[test]
    fn new_session_takes_a_typed_id_and_command() {
        let now = Instant::now();
        let mut m = model(100, 31);
        live(&mut m, &["s1"], now);
        update(&mut m, press(KeyCode::Char('n')), now);
        let Mode::NewSession { id, .. } = &m.mode else {
            panic!("{:?}", m.mode)
        };
        assert_eq!(id, "s2", "the first free default");
        let ctrl_u = KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL);
        update(&mut m, Msg::Key(ctrl_u), now);
        typed(&mut m, "api", now);
        update(&mut m, press(KeyCode::Enter), now);
        typed(&mut m, "make testx", now);
        update(&mut m, press(KeyCode::Backspace), now);
        let fx = update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(
            fx,
            vec![Effect::Spawn {
                id: "api".into(),
                command: "make test".into(),
                workdir: None,
            }]
        );
        // Up before the next scan finds it, and selected among the others.
        let fx = update(&mut m, Msg::Started("api".into(), Ok(())), now);
        assert_eq!(fx[0], Effect::ConnectStarted("api".into()));
        assert_eq!(sel(&m), "api");
        let fx = update(&mut m, Msg::Found(vec!["api".into(), "s1".into()]), now);
        assert!(
            !fx.iter().any(|e| matches!(e, Effect::Connect(_))),
            "{fx:?}"
        );
        let fx = update(&mut m, Msg::Started("x".into(), Err("no".into())), now);
        assert!(fx.is_empty());
        assert_eq!(sel(&m), "api");
    }

    #[test]
    fn new_session_refuses_bad_and_taken_ids_and_esc_cancels() {
        let now = Instant::now();
        let mut m = model(100, 31);
        live(&mut m, &["s1"], now);
        update(&mut m, press(KeyCode::Char('n')), now);
        update(&mut m, press(KeyCode::Backspace), now);
        typed(&mut m, "1", now);
        update(&mut m, press(KeyCode::Enter), now);
        assert!(matches!(
            m.mode,
            Mode::NewSession {
                step: NewStep::Id,
                ..
            }
        ));
        let notice = notice(&m);
        assert!(notice.contains("already exists"), "{notice}");
        typed(&mut m, "/x", now);
        update(&mut m, press(KeyCode::Enter), now);
        assert!(matches!(
            m.mode,
            Mode::NewSession {
                step: NewStep::Id,
                ..
            }
        ));
        let fx = update(&mut m, press(KeyCode::Esc), now);
        assert_eq!(m.mode, Mode::Grid);
        assert!(fx.is_empty());
        assert!(!m.quit);
    }

    #[test]
    fn filter_narrows_the_grid_and_esc_clears_it() {
        let now = Instant::now();
        let mut m = model(160, 49);
        live(&mut m, &["api", "db", "web-api"], now);
        update(&mut m, press(KeyCode::Char('/')), now);
        assert_eq!(m.mode, Mode::Filter);
        typed(&mut m, "apx", now);
        assert!(m.visible_ids().is_empty());
        assert!(placements(&m).rects.is_empty());
        update(&mut m, press(KeyCode::Backspace), now);
        update(&mut m, press(KeyCode::Char('i')), now);
        assert_eq!(m.visible_ids(), ["api", "web-api"]);
        update(&mut m, press(KeyCode::Enter), now);
        assert_eq!((m.mode.clone(), m.filter.as_str()), (Mode::Grid, "api"));
        assert_eq!(placements(&m).rects.len(), 2);
        // q in the filter is text, not quit.
        update(&mut m, press(KeyCode::Char('/')), now);
        typed(&mut m, "q", now);
        assert!(!m.quit);
        update(&mut m, press(KeyCode::Esc), now);
        assert_eq!(m.filter, "");
        assert_eq!(m.visible_ids().len(), 3);
    }

    #[test]
    fn fit_resizes_each_session_to_its_pane_whenever_the_layout_changes() {
        let now = Instant::now();
        let mut m = model(100, 31);
        let fx = live(&mut m, &["a", "b"], now);
        let want = inner_sizes(&m);
        assert_eq!(want.len(), 2);
        assert_eq!(resizes(&fx), want);
        for (id, size) in &want {
            assert_eq!(m.pane(id).expect("pane").term.size(), *size);
        }

        // Nothing changed: nothing sent.
        let fx = update(&mut m, Msg::Tick, now);
        assert!(resizes(&fx).is_empty(), "{fx:?}");

        // The terminal grows.
        let fx = update(&mut m, Msg::Resize(120, 41), now);
        let want = inner_sizes(&m);
        assert_eq!(resizes(&fx), want);

        // A third session changes every pane.
        let fx = live(&mut m, &["c"], now);
        let mut got = resizes(&fx);
        got.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(got, inner_sizes(&m));

        // Focus takes the whole terminal but the bar's row, and back.
        let fx = update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(
            resizes(&fx),
            [(
                "a".to_string(),
                Size {
                    cols: 120,
                    rows: 40
                }
            )]
        );
        let fx = update(&mut m, ctrl('\\'), now);
        let a = inner_sizes(&m).into_iter().find(|(id, _)| id == "a");
        assert_eq!(resizes(&fx), a.into_iter().collect::<Vec<_>>());

        // Zoom: the selected pane fills the grid area.
        let fx = update(&mut m, press(KeyCode::Char('z')), now);
        let i = inner(grid_area(m.size));
        assert_eq!(
            resizes(&fx),
            [(
                "a".to_string(),
                Size {
                    cols: i.width,
                    rows: i.height
                }
            )]
        );
    }

    #[test]
    fn a_reconnected_session_is_resized_again() {
        let now = Instant::now();
        let mut m = model(100, 31);
        live(&mut m, &["a"], now);
        update(
            &mut m,
            Msg::Session("a".into(), SessionMsg::Problem("gone".into())),
            now,
        );
        let fx = update(&mut m, Msg::Session("a".into(), SessionMsg::Connected), now);
        assert_eq!(resizes(&fx), inner_sizes(&m));
    }

    #[test]
    fn without_fit_no_session_is_resized_and_panes_show_the_sessions_size() {
        let now = Instant::now();
        let mut m = model(100, 31);
        m.fit = false;
        let mut fx = live(&mut m, &["a", "b"], now);
        fx.extend(update(&mut m, Msg::Resize(120, 41), now));
        fx.extend(update(&mut m, press(KeyCode::Enter), now));
        fx.extend(update(&mut m, ctrl('\\'), now));
        assert!(resizes(&fx).is_empty(), "{fx:?}");
        let info = serde_json::json!({ "cols": 132, "rows": 43, "command": ["vim"] });
        update(
            &mut m,
            Msg::Session("a".into(), SessionMsg::Info(info)),
            now,
        );
        let a = m.pane("a").expect("pane");
        assert_eq!(
            a.term.size(),
            Size {
                cols: 132,
                rows: 43
            }
        );
        assert_eq!(a.command.as_deref(), Some("vim"));
    }

    #[test]
    fn without_fit_a_size_change_by_another_client_is_learned_when_output_settles() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut m = model(100, 31);
        m.fit = false;
        live(&mut m, &["a"], t0);
        update(&mut m, st("a", ProcessState::Idle, 0), at(10));
        // The program redraws after someone else resized it; the poll that
        // output causes asks the size as well.
        let fx = update(
            &mut m,
            Msg::Session("a".into(), SessionMsg::Output(b"redraw".to_vec())),
            at(20),
        );
        assert_eq!(
            requests(&fx),
            [&Effect::Status("a".into()), &Effect::Info("a".into())]
        );
        let info = serde_json::json!({ "cols": 100, "rows": 30 });
        update(
            &mut m,
            Msg::Session("a".into(), SessionMsg::Info(info)),
            at(30),
        );
        assert_eq!(
            m.pane("a").expect("pane").term.size(),
            Size {
                cols: 100,
                rows: 30
            }
        );
        // With fit on, the dashboard sets sizes itself and asks no INFO.
        let mut m = model(100, 31);
        live(&mut m, &["a"], t0);
        update(&mut m, st("a", ProcessState::Idle, 0), at(10));
        let fx = update(
            &mut m,
            Msg::Session("a".into(), SessionMsg::Output(b"x".to_vec())),
            at(20),
        );
        assert!(!fx.iter().any(|e| matches!(e, Effect::Info(_))), "{fx:?}");
    }

    #[test]
    fn a_click_selects_and_a_double_click_focuses() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut m = model(160, 49);
        live(&mut m, &["a", "b", "c", "d"], t0);
        let rect = |m: &Model, id: &str| {
            placements(m)
                .rects
                .into_iter()
                .find(|(i, _)| i == id)
                .map(|(_, r)| r)
                .expect("placed")
        };
        let d = rect(&m, "d");
        let (x, y) = (d.x + 3, d.y + 2);
        update(&mut m, click(x, y), at(0));
        assert_eq!((sel(&m), &m.mode), ("d", &Mode::Grid));
        // Too slow for a double click.
        update(&mut m, click(x, y), at(500));
        assert_eq!(m.mode, Mode::Grid);
        update(&mut m, click(x, y), at(700));
        assert_eq!(m.mode, Mode::Focus("d".into()));
        update(&mut m, ctrl('\\'), at(800));

        // Two quick clicks in different places are two single clicks.
        let b = rect(&m, "b");
        update(&mut m, click(b.x + 1, b.y + 1), at(2000));
        update(&mut m, click(b.x + 2, b.y + 1), at(2100));
        assert_eq!((sel(&m), &m.mode), ("b", &Mode::Grid));
        // The footer is no pane.
        let footer = m.size.1 - 1;
        update(&mut m, click(1, footer), at(3000));
        assert_eq!(sel(&m), "b");
    }

    #[test]
    fn q_quits_and_help_closes_on_any_key() {
        let now = Instant::now();
        let mut m = model(100, 31);
        update(&mut m, press(KeyCode::Char('?')), now);
        assert_eq!(m.mode, Mode::Help);
        update(&mut m, press(KeyCode::Char('q')), now);
        assert_eq!(m.mode, Mode::Grid);
        assert!(!m.quit, "the key that closes help does only that");
        update(&mut m, press(KeyCode::Char('q')), now);
        assert!(m.quit);
    }

    #[test]
    fn output_asks_for_the_state_at_most_once_a_second_while_busy() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut m = model(100, 31);
        live(&mut m, &["a"], t0);
        // The hello's STATUS is in flight until answered.
        let out = |m: &mut Model, t| {
            let fx = update(
                m,
                Msg::Session("a".into(), SessionMsg::Output(b"x".to_vec())),
                t,
            );
            fx.iter().filter(|e| matches!(e, Effect::Status(_))).count()
        };
        assert_eq!(out(&mut m, at(10)), 0);
        update(&mut m, st("a", ProcessState::Idle, 0), at(20));
        assert_eq!(out(&mut m, at(30)), 1, "shown idle: ask at once");
        update(&mut m, st("a", ProcessState::Active, 0), at(40));
        assert_eq!(out(&mut m, at(500)), 0);
        assert_eq!(out(&mut m, at(1100)), 1);
        // Quiet for the idle threshold: the tick asks again.
        update(&mut m, st("a", ProcessState::Active, 1000), at(1200));
        let fx = update(&mut m, Msg::Tick, at(1100 + 3000 + 200));
        assert_eq!(requests(&fx), [&Effect::Status("a".into())]);
    }
}
