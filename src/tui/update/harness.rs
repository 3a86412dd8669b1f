//! A dashboard driven as the run loop drives it, for the tests of
//! `update` and the parts it hands messages to, and what they read back:
//! the model, and the effects by kind.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};

use crate::classify::ProcessState;
use crate::protocol::{Size, Status};
use crate::theme::Theme;
use crate::tui::layout::{inner, placements};
use crate::tui::model::{Effect, Model, Msg, SessionMsg};

use super::update;

pub fn model(cols: u16, rows: u16) -> Model {
    Model::new(
        Theme::by_name("dark").expect("built-in theme"),
        (cols, rows),
    )
}

/// A frame of the model drawn at `now`: its cells, with their styles.
pub fn drawn(m: &Model, now: Instant) -> ratatui::buffer::Buffer {
    let (w, h) = m.size;
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).expect("terminal");
    t.draw(|f| crate::tui::view::view(m, f, now)).expect("draw");
    t.backend().buffer().clone()
}

/// A frame of the model drawn at `now`, as text: its rows joined by
/// newlines.
pub fn screen_text(m: &Model, now: Instant) -> String {
    let (w, h) = m.size;
    let buf = drawn(m, now);
    (0..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Sessions found and connected, as the run loop would report them.
pub fn live(m: &mut Model, ids: &[&str], now: Instant) -> Vec<Effect> {
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

pub fn press(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

pub fn ctrl(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

pub fn typed(m: &mut Model, text: &str, now: Instant) -> Vec<Effect> {
    text.chars()
        .flat_map(|c| update(m, press(KeyCode::Char(c)), now))
        .collect()
}

pub fn st(id: &str, state: ProcessState, state_ms: u32) -> Msg {
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
pub fn requests(fx: &[Effect]) -> Vec<&Effect> {
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

pub fn resizes(fx: &[Effect]) -> Vec<(String, Size)> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Resize(id, size) => Some((id.clone(), *size)),
            _ => None,
        })
        .collect()
}

pub fn inputs(fx: &[Effect]) -> Vec<Vec<u8>> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Input(_, bytes) => Some(bytes.clone()),
            _ => None,
        })
        .collect()
}

pub fn kills(fx: &[Effect]) -> usize {
    fx.iter().filter(|e| matches!(e, Effect::Kill(_))).count()
}

/// What each pane on the current page should be resized to.
pub fn inner_sizes(m: &Model) -> Vec<(String, Size)> {
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
pub fn notice(m: &Model) -> String {
    m.notice
        .as_ref()
        .map(|(n, _)| n.clone())
        .unwrap_or_default()
}

pub fn sel(m: &Model) -> &str {
    m.selected.as_deref().unwrap_or("<none>")
}

pub fn click(column: u16, row: u16) -> Msg {
    Msg::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column,
        row,
        modifiers: KeyModifiers::NONE,
    })
}

pub fn ids(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("p{i:02}")).collect()
}
