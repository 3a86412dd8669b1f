use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};

use crate::tui::layout::{inner, placements};
use crate::tui::model::{Effect, Mode, Model, Msg, SessionMsg};
use crate::tui::update::harness::*;
use crate::tui::update::update;

fn shift(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::SHIFT))
}

fn wheel(kind: MouseEventKind, column: u16, row: u16) -> Msg {
    Msg::Mouse(MouseEvent {
        kind,
        column,
        row,
        modifiers: KeyModifiers::NONE,
    })
}

/// `seq 1 n` then a prompt, as the session's output.
fn seq(m: &mut Model, id: &str, n: usize, now: Instant) {
    let text: String = (1..=n).map(|i| format!("{i}\r\n")).collect();
    update(
        m,
        Msg::Session(
            id.into(),
            SessionMsg::Output(format!("{text}$ ").into_bytes()),
        ),
        now,
    );
}

/// The pane's screen as shown: its rows, top to bottom.
fn shown(m: &Model, id: &str) -> Vec<String> {
    let t = &m.pane(id).expect("pane").term;
    t.shown()
        .rows(0, t.size().cols)
        .map(|r| r.trim_end().to_owned())
        .collect()
}

fn clipboard(fx: &[Effect]) -> Vec<String> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Clipboard(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn shift_page_up_in_focus_scrolls_back_and_is_not_typed() {
    let now = Instant::now();
    let mut m = model(80, 24);
    live(&mut m, &["a"], now);
    update(&mut m, press(KeyCode::Enter), now);
    seq(&mut m, "a", 200, now);
    assert_eq!(shown(&m, "a").last().map(String::as_str), Some("$"));
    let fx = update(&mut m, shift(KeyCode::PageUp), now);
    assert!(inputs(&fx).is_empty(), "nothing typed: {fx:?}");
    let p = m.pane("a").expect("pane");
    assert!(p.copy.as_ref().is_some_and(|c| c.takes_keys()));
    assert!(!shown(&m, "a").contains(&"$".to_string()));
    // To the top: line 1 is there.
    for _ in 0..20 {
        update(&mut m, shift(KeyCode::PageUp), now);
    }
    assert_eq!(shown(&m, "a")[0], "1");
    // Keys are copy mode's now, not the program's.
    let fx = typed(&mut m, "jjkx", now);
    assert!(inputs(&fx).is_empty(), "{fx:?}");
    // `q` goes back to the live screen; keys are typed again.
    update(&mut m, press(KeyCode::Char('q')), now);
    assert!(m.pane("a").expect("pane").copy.is_none());
    assert_eq!(shown(&m, "a").last().map(String::as_str), Some("$"));
    let fx = typed(&mut m, "x", now);
    assert_eq!(inputs(&fx), [b"x".to_vec()]);
}

#[test]
fn scrolled_down_to_the_bottom_in_focus_the_program_gets_keys_again() {
    let now = Instant::now();
    let mut m = model(80, 24);
    live(&mut m, &["a"], now);
    update(&mut m, press(KeyCode::Enter), now);
    seq(&mut m, "a", 100, now);
    update(&mut m, shift(KeyCode::PageUp), now);
    update(&mut m, shift(KeyCode::PageDown), now);
    assert!(m.pane("a").expect("pane").copy.is_none());
    // The detach key leaves focus, and copy mode with it.
    update(&mut m, shift(KeyCode::PageUp), now);
    update(&mut m, ctrl('\\'), now);
    assert_eq!(m.mode, Mode::Grid);
    assert!(m.pane("a").expect("pane").copy.is_none());
}

#[test]
fn the_wheel_scrolls_the_pane_under_it_and_keys_keep_their_meaning() {
    let now = Instant::now();
    let mut m = model(100, 31);
    live(&mut m, &["a", "b"], now);
    seq(&mut m, "b", 100, now);
    let (_, rect) = placements(&m)
        .rects
        .into_iter()
        .find(|(id, _)| id == "b")
        .expect("b's pane");
    let body = inner(rect);
    update(
        &mut m,
        wheel(MouseEventKind::ScrollUp, body.x + 2, body.y + 2),
        now,
    );
    let b = m.pane("b").expect("pane");
    assert!(b.copy.as_ref().is_some_and(|c| !c.takes_keys()));
    assert_eq!(b.term.scrolled_back(), 3);
    assert_eq!(sel(&m), "a", "the wheel does not select");
    // A key still moves the selection; the pane stays scrolled.
    update(&mut m, press(KeyCode::Right), now);
    assert_eq!(sel(&m), "b");
    assert_eq!(m.pane("b").expect("pane").term.scrolled_back(), 3);
    // Wheel down to the live screen: scrolled no more.
    update(
        &mut m,
        wheel(MouseEventKind::ScrollDown, body.x + 2, body.y + 2),
        now,
    );
    assert!(m.pane("b").expect("pane").copy.is_none());
    // On a border, or off every pane, the wheel does nothing.
    update(&mut m, wheel(MouseEventKind::ScrollUp, rect.x, rect.y), now);
    assert!(m.pane("b").expect("pane").copy.is_none());
}

#[test]
fn new_output_does_not_pull_a_scrolled_pane_down() {
    let now = Instant::now();
    let mut m = model(80, 24);
    live(&mut m, &["a"], now);
    seq(&mut m, "a", 100, now);
    update(&mut m, shift(KeyCode::PageUp), now);
    let before = shown(&m, "a");
    update(
        &mut m,
        Msg::Session(
            "a".into(),
            SessionMsg::Output(b"more\r\nand more\r\n".to_vec()),
        ),
        now,
    );
    assert_eq!(shown(&m, "a"), before);
    // A resize keeps the rows shown too (the top one, at least).
    update(&mut m, Msg::Resize(90, 30), now);
    assert_eq!(shown(&m, "a")[0], before[0]);
}

#[test]
fn copy_mode_selects_and_copies_to_the_clipboard() {
    let now = Instant::now();
    let mut m = model(80, 24);
    live(&mut m, &["a"], now);
    seq(&mut m, "a", 50, now);
    update(&mut m, press(KeyCode::Char('z')), now);
    update(&mut m, press(KeyCode::Char('[')), now);
    assert!(m.pane("a").expect("pane").copy.is_some());
    // `/` searches (it is not the filter here), then v, j, y.
    typed(&mut m, "?17", now);
    assert_eq!(m.mode, Mode::Zoom("a".into()));
    update(&mut m, press(KeyCode::Enter), now);
    typed(&mut m, "vj$", now);
    let fx = typed(&mut m, "y", now);
    assert_eq!(clipboard(&fx), ["17\n18"]);
    assert_eq!(notice(&m), "copied 2 lines");
    assert!(m.pane("a").expect("pane").copy.is_none());
    assert_eq!(m.mode, Mode::Zoom("a".into()), "still zoomed");
    // The copy key opens copy mode in focus, on the cursor's row.
    update(&mut m, press(KeyCode::Enter), now);
    update(&mut m, ctrl(']'), now);
    let fx = typed(&mut m, "y", now);
    assert_eq!(clipboard(&fx), ["$"]);
    assert_eq!(notice(&m), "copied 1 line");
    // The copy key again leaves.
    update(&mut m, ctrl(']'), now);
    assert!(m.pane("a").expect("pane").copy.is_some());
    update(&mut m, ctrl(']'), now);
    assert!(m.pane("a").expect("pane").copy.is_none());
}

#[test]
fn the_wheel_in_focus_is_the_programs_when_it_asked_for_the_mouse() {
    let now = Instant::now();
    let mut m = model(80, 24);
    live(&mut m, &["a"], now);
    seq(&mut m, "a", 100, now);
    update(&mut m, press(KeyCode::Enter), now);
    update(
        &mut m,
        Msg::Session(
            "a".into(),
            SessionMsg::Output(b"\x1b[?1000h\x1b[?1006h".to_vec()),
        ),
        now,
    );
    update(&mut m, wheel(MouseEventKind::ScrollUp, 5, 5), now);
    assert!(m.pane("a").expect("pane").copy.is_none());
    // Without it, the wheel scrolls (and copy mode takes the keys).
    update(
        &mut m,
        Msg::Session("a".into(), SessionMsg::Output(b"\x1b[?1000l".to_vec())),
        now,
    );
    update(&mut m, wheel(MouseEventKind::ScrollUp, 5, 5), now);
    assert!(
        m.pane("a")
            .expect("pane")
            .copy
            .as_ref()
            .is_some_and(|c| c.takes_keys())
    );
}

#[test]
fn a_reconnect_ends_copy_mode_and_the_replay_fills_the_history() {
    let now = Instant::now();
    let mut m = model(80, 24);
    live(&mut m, &["a"], now);
    seq(&mut m, "a", 100, now);
    update(&mut m, shift(KeyCode::PageUp), now);
    update(&mut m, Msg::Session("a".into(), SessionMsg::Connected), now);
    assert!(m.pane("a").expect("pane").copy.is_none());
    // An empty history: nothing to scroll to.
    update(&mut m, shift(KeyCode::PageUp), now);
    assert!(m.pane("a").expect("pane").copy.is_none());
    seq(&mut m, "a", 100, now);
    update(&mut m, shift(KeyCode::PageUp), now);
    assert!(m.pane("a").expect("pane").copy.is_some());
}

/// In the grid, a pane scrolled back is left with Esc, and with the quit
/// key, which then quits only when pressed again.
#[test]
fn esc_and_q_take_a_scrolled_pane_back_to_its_live_screen_before_quitting() {
    let now = Instant::now();
    let mut m = model(80, 24);
    live(&mut m, &["a"], now);
    seq(&mut m, "a", 200, now);
    let scrolled = |m: &Model| m.pane("a").expect("pane").copy.is_some();
    update(&mut m, shift(KeyCode::PageUp), now);
    assert!(scrolled(&m));
    assert!(screen_text(&m, now).contains("Esc live"));
    update(&mut m, press(KeyCode::Esc), now);
    assert!(!scrolled(&m));
    assert_eq!(shown(&m, "a").last().map(String::as_str), Some("$"));
    update(&mut m, shift(KeyCode::PageUp), now);
    update(&mut m, press(KeyCode::Char('q')), now);
    assert!(!scrolled(&m) && !m.quit);
    assert_eq!(notice(&m), "back to the live screen; q again quits");
    update(&mut m, press(KeyCode::Char('q')), now);
    assert!(m.quit);
}

/// `y` copies and leaves copy mode: the `q` a person then presses to
/// leave it (as the README says) does not close the dashboard; pressed
/// again, it does. Another key between them makes `q` quit at once.
#[test]
fn q_right_after_copying_does_not_quit() {
    let now = Instant::now();
    let mut m = model(80, 24);
    live(&mut m, &["a"], now);
    seq(&mut m, "a", 50, now);
    for c in ['[', 'k', 'v', 'y'] {
        update(&mut m, press(KeyCode::Char(c)), now);
    }
    assert!(m.pane("a").expect("pane").copy.is_none(), "y left it");
    assert_eq!(notice(&m), "copied 1 line");
    update(&mut m, press(KeyCode::Char('q')), now);
    assert!(!m.quit);
    assert_eq!(notice(&m), "out of copy mode; q again quits");
    update(&mut m, press(KeyCode::Char('q')), now);
    assert!(m.quit);

    let mut m = model(80, 24);
    live(&mut m, &["a"], now);
    seq(&mut m, "a", 50, now);
    for c in ['[', 'q', 'j', 'q'] {
        update(&mut m, press(KeyCode::Char(c)), now);
    }
    assert!(m.quit, "a key between: q quits");
}

/// A search's match far to the right of a narrow pane is shown with what
/// follows it, the cursor in the middle of the view: the view put the
/// cursor on the pane's last column, under the edge's `›`, and the match
/// out of sight. A row shown from past its start is marked `‹`.
#[test]
fn a_match_past_a_narrow_panes_edge_is_in_sight() {
    let now = Instant::now();
    let mut m = model(60, 20);
    live(&mut m, &["a", "b", "c", "d"], now);
    let line = format!("{}tick 5 done\r\n$ ", "the quick brown fox ".repeat(3));
    update(
        &mut m,
        Msg::Session("a".into(), SessionMsg::Output(line.into_bytes())),
        now,
    );
    update(&mut m, press(KeyCode::Char('[')), now);
    typed(&mut m, "?tick 5", now);
    update(&mut m, press(KeyCode::Enter), now);
    let screen = screen_text(&m, now);
    let row = screen
        .lines()
        .find(|l| l.contains("tick 5 done"))
        .unwrap_or_else(|| panic!("the match in sight:\n{screen}"));
    assert!(row.contains("‹"), "{row}");
}
