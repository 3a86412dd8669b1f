//! `update(model, msg, now) -> effects`: every decision the dashboard
//! makes, as plain data in and out, so it is tested without a terminal.
//! Each message goes to the part that owns it ([`super::keymap`],
//! [`super::sessions`]); what must hold after any message is kept here:
//! the selection on show, and sessions sized to their panes.

use std::time::{Duration, Instant};

use crossterm::event::KeyEventKind;

use crate::protocol::Size;

use super::copy;
use super::keymap;
use super::layout::{focus_rows, inner, placements};
use super::model::{Effect, Link, Mode, Model, Msg, SessionMsg};
use super::sessions;

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
    let focused_before = focused(m);
    match msg {
        Msg::Key(k) if k.kind != KeyEventKind::Release => keymap::key(m, k, now, &mut fx),
        Msg::Key(_) => {}
        Msg::Paste(text) => keymap::paste(m, &text, &mut fx),
        Msg::Mouse(ev) => {
            if !super::focus::mouse(m, ev, &mut fx) {
                keymap::mouse(m, ev, now);
            }
        }
        Msg::Resize(c, r) => m.size = (c, r),
        Msg::Tick => {
            sessions::tick(m, now, &mut fx);
            expire_notice(m, now);
        }
        Msg::Found(ids) => sessions::found(m, ids, &mut fx),
        Msg::Orphans(ids) => sessions::orphans(m, ids, &mut fx),
        Msg::Ended(records) => sessions::ended(m, records, now),
        Msg::Session(id, sm) => sessions::news(m, &id, sm, now, &mut fx),
        Msg::Started(id, result) => sessions::started(m, id, result, now, &mut fx),
        Msg::Lost(lost) => super::lost::found(m, lost),
    }
    // A program that asked for focus reports (`?1004`) hears that it has
    // the user when focused, and that it lost them when left.
    let focused_after = focused(m);
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
                // A session whose output brings its marks is resized
                // where the output says (see `Pane::marks`).
                if !p.held && !p.marks {
                    p.term.resize(size);
                }
                copy::follow(p);
                fx.push(Effect::Resize(id.clone(), size));
                // Whether it took: a terminal attached elsewhere keeps
                // its size (INFO, answered after the RESIZE, says).
                fx.push(Effect::Info(id));
            }
        } else if let Some(s) = p.session_size.filter(|_| !p.marks) {
            p.term.resize(s);
            copy::follow(p);
        }
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
    use crate::tui::layout::grid_area;

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
        let fx = update(&mut m, Msg::Started("newf".into(), Ok(())), now);
        assert!(fx.contains(&Effect::ConnectStarted("newf".into())));
        assert_eq!(m.filter, "");
        assert_eq!(sel(&m), "newf");
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
        let info = Box::new(crate::protocol::Info {
            cols: 132,
            rows: 43,
            command: vec!["vim".into()],
            ..Default::default()
        });
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
}
