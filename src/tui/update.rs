//! `update(model, msg, now) -> effects`: every decision the dashboard
//! makes, as plain data in and out, so it is tested without a terminal.
//! Each message goes to the part that owns it ([`super::keymap`],
//! [`super::sessions`]); what must hold after any message is kept here:
//! the selection on show, and the focused session at the dashboard's
//! size (every session at its pane's, with `fit_sessions`).

use std::time::{Duration, Instant};

use crossterm::event::KeyEventKind;

use super::copy;
use super::keymap;
use super::layout::placements;
use super::model::{AttachEnd, Effect, LOOK, Mode, Model, Msg, SessionMsg};
use super::sessions;
use super::sizing;

/// Applies one message to the model and says what the run loop must do.
/// The session focus shows, if any.
fn focused(m: &Model) -> Option<String> {
    match &m.mode {
        Mode::Focus(id) => Some(id.clone()),
        _ => None,
    }
}

pub fn update(m: &mut Model, msg: Msg, now: Instant) -> Vec<Effect> {
    let mut fx = Vec::new();
    m.now = now;
    // What a session says about itself (its output above all, the hot
    // path) never changes which panes there are or where they go.
    let by_person = matches!(msg, Msg::Key(_) | Msg::Mouse(_) | Msg::Paste(_));
    let same_layout = matches!(
        msg,
        Msg::Tick
            | Msg::Session(
                _,
                SessionMsg::Output(_)
                    | SessionMsg::Replayed(_)
                    | SessionMsg::Status(_)
                    | SessionMsg::Info(_)
            )
    );
    let focused_before = focused(m);
    let mode_before = m.mode.clone();
    match msg {
        Msg::Key(k) if k.kind != KeyEventKind::Release => keymap::key(m, k, now, &mut fx),
        Msg::Key(_) => {}
        Msg::Paste(text) => keymap::paste(m, &text, now, &mut fx),
        Msg::Mouse(ev) => {
            // A drag selects text; other events are the focused program's
            // when it asked for the mouse, else the grid's.
            if !super::select::mouse(m, ev, now, &mut fx) && !super::focus::mouse(m, ev, &mut fx) {
                keymap::mouse(m, ev, now, &mut fx);
            }
        }
        Msg::Resize(c, r) => m.size = (c, r),
        Msg::Tick => {
            sessions::tick(m, now, &mut fx);
            super::inbox::tick(m, now, &mut fx);
            expire_notice(m, now);
        }
        Msg::Found(ids) => sessions::found(m, ids, &mut fx),
        Msg::Orphans(ids) => sessions::orphans(m, ids, &mut fx),
        Msg::Ended(records) => sessions::ended(m, records, now, &mut fx),
        Msg::Session(id, sm) => sessions::news(m, &id, sm, now, &mut fx),
        Msg::Started(id, result) => sessions::started(m, id, result, now, &mut fx),
        Msg::Hosts {
            problems,
            down,
            news,
        } => hosts(m, problems, down, news, now),
        Msg::BackFromAttach(id, end) => back_from_attach(m, id, end, now, &mut fx),
        Msg::Lost(lost) => super::lost::found(m, lost),
        Msg::OrphanKilled(id, result) => match result {
            Ok(said) => m.notify(said, now),
            Err(why) => m.notify(format!("could not stop '{id}': {why}"), now),
        },
    }
    // A program that asked for focus reports (`?1004`) hears that it has
    // the user when focused, and that it lost them when left.
    let focused_after = focused(m);
    // Focus asks for the dashboard's size once each time it is entered:
    // the session may have been given another size since.
    if focused_before != focused_after
        && let Some(p) = focused_after.as_deref().and_then(|id| m.pane_mut(id))
    {
        p.applied = None;
    }
    if focused_before != focused_after {
        for (id, gained) in [(focused_before, false), (focused_after, true)] {
            if let Some(id) = id
                && m.pane(&id)
                    .is_some_and(|p| p.term.callbacks().focus_reporting)
            {
                fx.push(Effect::Input(id, crate::vt::mouse::focus(gained).to_vec()));
            }
        }
    }
    keep_zoom(m, &mode_before);
    // A zoomed pane that went (forgotten, dropped) leaves the grid, not a
    // blank screen.
    if let Mode::Zoom(id) = &m.mode
        && m.pane(id).is_none()
    {
        m.mode = Mode::Grid;
    }
    // The pane selected when the dashboard was quit, once it is here; a
    // person who has moved since has chosen.
    if by_person {
        m.selected_before = None;
    }
    if let Some(id) = m
        .selected_before
        .take_if(|id| m.panes.iter().any(|p| p.id == *id))
    {
        m.selected = Some(id);
    }
    // Enter and `x` act on the selection: it is always a pane on show.
    let visible = m.visible_ids();
    if m.selected.as_ref().is_none_or(|s| !visible.contains(s)) {
        m.selected = visible.into_iter().next();
    }
    if !same_layout {
        show_selected(m);
    }
    // A pane selected by the filter as it is typed (the first that
    // matches `z` on the way to `zz12`) was not looked at: its mark stays.
    if m.mode != Mode::Filter {
        look_at_selected(m, now);
    }
    copy::relayout(m);
    sizing::ask(m, now, &mut fx);
    fx
}

/// An overlay opened over a zoomed pane remembers it, and closing the
/// overlay (`Esc`, an answer, a question made moot) goes back to the zoom
/// rather than to the grid. Focus entered from the inbox keeps it for the
/// inbox it returns to.
fn keep_zoom(m: &mut Model, before: &Mode) {
    if let Mode::Zoom(id) = before
        && m.mode.is_overlay()
    {
        m.zoom_under = Some(id.clone());
        return;
    }
    if before.is_overlay() && m.mode == Mode::Grid {
        if let Some(id) = m.zoom_under.take()
            && m.pane(&id).is_some()
        {
            m.mode = Mode::Zoom(id);
        }
        return;
    }
    let keeps = m.mode.is_overlay() || matches!(m.mode, Mode::Focus(_));
    if !keeps || m.zoom_under.as_ref().is_some_and(|id| m.pane(id).is_none()) {
        m.zoom_under = None;
    }
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

/// What the other machines' links say: which hosts are down and why, and
/// since when for those that dropped (kept as first known: the instant
/// does not move with each look).
fn hosts(
    m: &mut Model,
    problems: std::collections::HashMap<String, String>,
    down: std::collections::HashMap<String, u64>,
    news: Vec<String>,
    now: Instant,
) {
    m.host_problems = problems;
    let unix_now = crate::clock::unix_ms();
    m.hosts_down = down
        .into_iter()
        .map(|(host, since)| {
            let at = m.hosts_down.get(&host).map_or_else(
                || {
                    let ago = Duration::from_millis(unix_now.saturating_sub(since));
                    now.checked_sub(ago).unwrap_or(now)
                },
                |&(_, at)| at,
            );
            (host, (since, at))
        })
        .collect();
    for text in news {
        m.notify(text, now);
    }
}

/// Back from a raw attach: on to the next session that needs you if
/// asked (as `Tab`), or told how it ended. The session's size was the
/// attach's: it is fitted again.
fn back_from_attach(m: &mut Model, id: String, end: AttachEnd, now: Instant, fx: &mut Vec<Effect>) {
    match end {
        AttachEnd::Detached => {}
        AttachEnd::Next => {
            let tab = crossterm::event::KeyEvent::new(
                crossterm::event::KeyCode::Tab,
                crossterm::event::KeyModifiers::NONE,
            );
            keymap::key(m, tab, now, fx);
        }
        AttachEnd::Ended(why) | AttachEnd::Failed(why) => m.notify(format!("{id}: {why}"), now),
    }
    if let Some(p) = m.pane_mut(&id) {
        p.applied = None;
    }
}

/// The selected pane's `●` goes once it is looked at: zoomed, focused, or
/// selected for [`LOOK`] (the next tick clears it).
fn look_at_selected(m: &mut Model, now: Instant) {
    let Some(id) = m.selected.clone() else {
        m.looking = None;
        return;
    };
    let since = match &m.looking {
        Some((looked, since)) if *looked == id => *since,
        _ => {
            m.looking = Some((id.clone(), now));
            now
        }
    };
    let close = matches!(&m.mode, Mode::Zoom(z) | Mode::Focus(z) if *z == id);
    if (close || now.saturating_duration_since(since) >= LOOK)
        && let Some(p) = m.pane_mut(&id)
    {
        p.attention = false;
    }
}

/// A notice says what just happened: after five seconds it is old news
/// and leaves the footer to the hints.
fn expire_notice(m: &mut Model, now: Instant) {
    if m.notice
        .as_ref()
        .is_some_and(|(_, at)| now.duration_since(*at) > Duration::from_secs(5))
    {
        m.notice = None;
    }
}

#[cfg(test)]
pub(super) mod harness;

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use crossterm::event::KeyCode;

    use super::harness::*;
    use super::*;
    use crate::protocol::Size;
    use crate::tui::layout::{grid_area, inner};

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
        let fx = update(&mut m, Msg::Started("newf".into(), Ok(None)), now);
        assert!(fx.contains(&Effect::ConnectStarted("newf".into())));
        assert_eq!(m.filter, "");
        assert_eq!(sel(&m), "newf");
    }

    #[test]
    fn fit_resizes_each_session_to_its_pane_whenever_the_layout_changes() {
        let now = Instant::now();
        let mut m = model(100, 31);
        m.fit = true;
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
        m.fit = true;
        live(&mut m, &["a"], now);
        update(
            &mut m,
            Msg::Session(
                "a".into(),
                SessionMsg::Problem {
                    why: "gone".into(),
                    notice: None,
                },
            ),
            now,
        );
        let fx = update(&mut m, Msg::Session("a".into(), SessionMsg::Connected), now);
        assert_eq!(resizes(&fx), inner_sizes(&m));
    }

    #[test]
    fn the_info_asked_on_connecting_does_not_mark_a_fitted_session_held() {
        let now = Instant::now();
        let mut m = model(100, 31);
        m.fit = true;
        live(&mut m, &["a"], now);
        let fitted = inner_sizes(&m)[0].1;
        let info = || {
            let old = crate::protocol::Info {
                cols: 120,
                rows: 40,
                ..Default::default()
            };
            Msg::Session("a".into(), SessionMsg::Info(Box::new(old)))
        };
        // The greeting's INFO, answered before our RESIZE, gives the size
        // the session had: the pane stays at its own size, so the replay
        // that follows is laid out for it.
        update(&mut m, info(), now);
        let a = m.pane("a").expect("pane");
        assert!(!a.held);
        assert_eq!(a.term.size(), fitted);
        // The INFO asked after our RESIZE giving another size: a terminal
        // attached elsewhere holds the session.
        update(&mut m, info(), now);
        let a = m.pane("a").expect("pane");
        assert!(a.held);
        assert_eq!(
            a.term.size(),
            Size {
                cols: 120,
                rows: 40
            }
        );
    }

    fn info(cols: u16, rows: u16, terminals: Option<u32>) -> Msg {
        let info = Box::new(crate::protocol::Info {
            cols,
            rows,
            terminals,
            command: vec!["vim".into()],
            ..Default::default()
        });
        Msg::Session("a".into(), SessionMsg::Info(info))
    }

    #[test]
    fn no_layout_change_resizes_a_session_and_panes_show_its_own_size() {
        let now = Instant::now();
        let mut m = model(100, 31);
        let mut fx = live(&mut m, &["a", "b", "c"], now);
        update(&mut m, info(132, 43, Some(0)), now);
        // Every change of layout: the terminal, columns, pages, zoom, a
        // filter, a session coming and going.
        for msg in [
            Msg::Resize(120, 41),
            press(KeyCode::Char('+')),
            press(KeyCode::Char('-')),
            press(KeyCode::Char('=')),
            Msg::Resize(40, 10),
            press(KeyCode::PageDown),
            press(KeyCode::PageUp),
            Msg::Resize(100, 31),
            press(KeyCode::Char('z')),
            press(KeyCode::Esc),
            Msg::Found(vec!["a".into(), "b".into(), "c".into(), "d".into()]),
            Msg::Session("d".into(), SessionMsg::Connected),
            Msg::Session("d".into(), SessionMsg::Exit(0)),
        ] {
            fx.extend(update(&mut m, msg, now));
        }
        assert!(resizes(&fx).is_empty(), "{fx:?}");
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

    /// `+` where no more columns fit, and `-` at one, say so: they did
    /// nothing without a word.
    #[test]
    fn more_columns_than_fit_says_so() {
        let now = Instant::now();
        let mut m = model(80, 24);
        live(&mut m, &["a", "b", "c", "d", "e", "f", "g", "h"], now);
        let mut notices = Vec::new();
        for _ in 0..20 {
            update(&mut m, press(KeyCode::Char('+')), now);
            notices.extend(m.notice.take().map(|(t, _)| t));
        }
        assert!(
            notices
                .iter()
                .any(|n| n.ends_with("columns are as many as fit")),
            "{notices:?}"
        );
        for _ in 0..20 {
            update(&mut m, press(KeyCode::Char('-')), now);
        }
        assert_eq!(
            m.notice.map(|(t, _)| t).as_deref(),
            Some("one column is the fewest")
        );
        // Two panes: two columns hold them, and a third would be empty.
        let mut m = model(160, 48);
        live(&mut m, &["a", "b"], now);
        m.columns = Some(1);
        update(&mut m, press(KeyCode::Char('+')), now);
        update(&mut m, press(KeyCode::Char('+')), now);
        assert_eq!(placements(&m).grid.cols, 2);
        assert_eq!(
            m.notice.map(|(t, _)| t).as_deref(),
            Some("2 columns: one for each pane")
        );
    }

    #[test]
    fn focus_gives_the_session_the_dashboards_size_and_leaving_keeps_it() {
        let now = Instant::now();
        let mut m = model(100, 31);
        live(&mut m, &["a", "b"], now);
        update(&mut m, info(132, 43, Some(0)), now);
        let full = Size {
            cols: 100,
            rows: 30,
        };
        let fx = update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(resizes(&fx), [("a".to_string(), full)]);
        assert_eq!(m.pane("a").expect("pane").term.size(), full);
        // The INFO asked after the RESIZE says it took.
        update(&mut m, info(100, 30, Some(0)), now);
        // The terminal resized while focused: the session follows it.
        let fx = update(&mut m, Msg::Resize(90, 25), now);
        let smaller = Size { cols: 90, rows: 24 };
        assert_eq!(resizes(&fx), [("a".to_string(), smaller)]);
        update(&mut m, info(90, 24, Some(0)), now);
        // Back in the grid, it keeps that size; focused again at the same
        // size, nothing is sent.
        let mut fx = update(&mut m, ctrl('\\'), now);
        fx.extend(update(&mut m, press(KeyCode::Enter), now));
        fx.extend(update(&mut m, ctrl('\\'), now));
        assert!(resizes(&fx).is_empty(), "{fx:?}");
        assert_eq!(m.pane("a").expect("pane").term.size(), smaller);
        // Resized by someone else meanwhile, it is asked again.
        update(&mut m, info(200, 50, Some(0)), now);
        let fx = update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(resizes(&fx), [("a".to_string(), smaller)]);
    }

    #[test]
    fn a_session_an_attach_holds_is_marked_at_once_and_shown_at_its_size() {
        let now = Instant::now();
        let mut m = model(100, 31);
        live(&mut m, &["a"], now);
        // The greeting's INFO says a terminal is attached: held from the
        // first paint, at that terminal's size.
        update(&mut m, info(160, 39, Some(1)), now);
        let a = m.pane("a").expect("pane");
        assert!(a.held);
        assert_eq!(
            a.term.size(),
            Size {
                cols: 160,
                rows: 39
            }
        );
        // Focus asks for the dashboard's size; the supervisor holds it
        // back, and the pane stays at the attach's size.
        let fx = update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(resizes(&fx).len(), 1);
        update(&mut m, info(160, 39, Some(1)), now);
        let a = m.pane("a").expect("pane");
        assert!(a.held);
        assert_eq!(a.term.size().cols, 160);
        // The attach leaves; the held RESIZE applies.
        update(&mut m, info(100, 30, Some(0)), now);
        assert!(!m.pane("a").expect("pane").held);
    }

    /// In focus, the person at the dashboard is the session's terminal:
    /// a size an attach that has gone left behind is asked back, once the
    /// session is free; a second dashboard's focus keeps the size it gave
    /// until a key here (see `focus.rs`).
    #[test]
    fn a_focused_session_resized_by_another_client_is_asked_back() {
        let now = Instant::now();
        let mut m = model(100, 31);
        live(&mut m, &["a"], now);
        let ours = Size {
            cols: 100,
            rows: 30,
        };
        let fx = update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(resizes(&fx), [("a".to_string(), ours)]);
        update(&mut m, info(100, 30, Some(0)), now);
        // An attach from a bigger terminal takes it, and leaves.
        let later = now + Duration::from_secs(5);
        let fx = update(&mut m, info(160, 39, Some(1)), later);
        assert!(resizes(&fx).is_empty(), "{fx:?}");
        assert!(m.pane("a").expect("pane").held);
        let fx = update(&mut m, info(160, 39, Some(0)), later);
        assert_eq!(resizes(&fx), [("a".to_string(), ours)]);
        update(&mut m, info(100, 30, Some(0)), later);
        // Another dashboard's focus, no terminal attached: its size
        // stands, message after message, until a key here.
        for _ in 0..2 {
            let fx = update(
                &mut m,
                info(200, 49, Some(0)),
                later + Duration::from_secs(2),
            );
            assert!(resizes(&fx).is_empty(), "{fx:?}");
        }
        assert!(m.pane("a").expect("pane").taken);
        let fx = update(
            &mut m,
            press(KeyCode::Char('k')),
            later + Duration::from_secs(2),
        );
        assert_eq!(resizes(&fx), [("a".to_string(), ours)]);
        // Out of focus, nothing is asked: the grid shows a window onto
        // the session's own size.
        update(&mut m, ctrl('\\'), later + Duration::from_secs(5));
        let fx = update(
            &mut m,
            info(90, 20, Some(0)),
            later + Duration::from_secs(9),
        );
        assert!(resizes(&fx).is_empty(), "{fx:?}");
    }

    #[test]
    fn an_info_asked_before_our_resize_does_not_undo_it() {
        let now = Instant::now();
        let mut m = model(100, 31);
        live(&mut m, &["a"], now);
        // The greeting's INFO is still out when focus resizes.
        let fx = update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(resizes(&fx).len(), 1);
        update(&mut m, info(220, 50, Some(0)), now);
        let size = Size {
            cols: 100,
            rows: 30,
        };
        assert_eq!(m.pane("a").expect("pane").term.size(), size);
        // The one asked after it is the truth.
        update(&mut m, info(100, 30, Some(0)), now);
        assert_eq!(m.pane("a").expect("pane").term.size(), size);
        // A supervisor that does not say who is attached: a size other
        // than the one asked for means someone holds it.
        update(&mut m, info(150, 40, None), now);
        assert!(m.pane("a").expect("pane").held);
    }
}
