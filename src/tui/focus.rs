//! Focus: one session on the whole screen gets every key and every paste,
//! as its own terminal would send them, until the detach key brings back
//! the grid. Entering and leaving focus, and what the session is sent;
//! the bytes for a key are [`super::keys`]'s to make.

use std::time::Instant;

use crossterm::event::KeyEvent;

use super::copy;
use super::model::{Effect, Link, Mode, Model, Pane};
use crate::config::Action;
use crate::protocol::Act;
use crate::vt::keys;

/// Focuses a live session, unless there would be no key to come back with.
pub fn enter(m: &mut Model, id: String, now: Instant, fx: &mut Vec<Effect>) {
    let Some(p) = m.pane(&id) else { return };
    let refused = ended(m, p).or_else(|| match &p.link {
        Link::Problem(why) => Some(format!("'{id}': {why}")),
        Link::Connecting => Some(format!("'{id}' is still connecting")),
        Link::Live | Link::Gone => None,
    });
    if let Some(why) = refused {
        m.notify(why, now);
        return;
    }
    // Focused all the same (keys wait for it), but told.
    if p.unresponsive() {
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
    // Focus is for typing into the program: its live screen, at the
    // dashboard's size again if another client took it meanwhile.
    if let Some(p) = m.pane_mut(&id) {
        copy::leave(p);
        let _ = super::sizing::take_back(p);
    }
    // Brought to the front as `fg` would: a stopped program (Ctrl-Z
    // pressed in it earlier) is continued.
    let stopped = m.pane(&id).is_some_and(Pane::stopped);
    m.mode = Mode::Focus(id.clone());
    if stopped {
        let _ = resume(m, &id, now, fx);
    }
}

/// Why a session that is over ([`Pane::ended`]) takes no keys: one that
/// ended with what can be done with it instead, with the keys that do it;
/// focus and the raw attach say it alike.
pub fn ended(m: &Model, p: &Pane) -> Option<String> {
    let id = &p.id;
    if p.exit.is_some() {
        let key = |a: Action| m.keys.label(a).unwrap_or_default();
        return Some(format!(
            "'{id}' has ended: {} runs it again, {} shows its last screen",
            key(Action::Restart),
            key(Action::Zoom)
        ));
    }
    (p.link == Link::Gone).then(|| format!("'{id}' has no supervisor"))
}

/// Asks the supervisor to continue a stopped session (ACT's `continue`,
/// as `hm continue` sends it); the reply comes to
/// [`super::inbox::acted`], which says it. Refused with
/// why when it cannot be sent or one is on its way.
pub fn resume(m: &mut Model, id: &str, now: Instant, fx: &mut Vec<Effect>) -> Result<(), String> {
    let Some(p) = m.pane_mut(id) else {
        return Err(format!("no session '{id}'"));
    };
    if !p.askable() {
        return Err(format!("'{id}' is not connected"));
    }
    if p.answering.is_some() {
        return Err(format!("already answering '{id}'"));
    }
    p.send_act(Act::resume(), now, fx);
    Ok(())
}

/// Back from focus to where it was entered: the zoomed pane or the grid,
/// with the session's live screen (copy mode, if open, is over).
pub fn leave(m: &mut Model, id: &str) {
    if let Some(p) = m.pane_mut(id) {
        copy::leave(p);
    }
    m.mode = if std::mem::take(&mut m.inbox.after_focus) {
        // Entered from the inbox: back to the rest of what needs you.
        Mode::Inbox
    } else if m.zoom_after_focus {
        Mode::Zoom(id.to_string())
    } else {
        Mode::Grid
    };
}

/// A key in focus: the detach key leaves, Shift-PgUp/PgDn and the copy
/// key open copy mode, which then takes the keys; any other is typed into
/// the session as its terminal would encode it.
pub fn key(m: &mut Model, id: String, k: KeyEvent, now: Instant, fx: &mut Vec<Effect>) {
    if m.detach_key.is_some_and(|b| keys::is_byte(&k, b)) {
        leave(m, &id);
        return;
    }
    // The real terminal for this session, from focus as `a` from the grid.
    if m.attach_key.is_some_and(|b| keys::is_byte(&k, b)) {
        leave(m, &id);
        fx.push(Effect::RawAttach(id));
        return;
    }
    if copy::key(m, k, now, fx) {
        return;
    }
    // A stopped program reads nothing: the key continues it instead of
    // waiting in its terminal (`fg` and Enter, typed as a stopped Claude
    // Code asks, would reach it as a prompt).
    if m.pane(&id).is_some_and(Pane::stopped) {
        if m.pane(&id).is_some_and(|p| p.answering.is_none()) {
            match resume(m, &id, now, fx) {
                Ok(()) => m.notify(format!("continuing '{id}'; the key was not sent"), now),
                Err(why) => m.notify(format!("not continued: {why}"), now),
            }
        }
        return;
    }
    let app_cursor = m
        .pane(&id)
        .is_some_and(|p| p.term.screen().application_cursor());
    if let Some(bytes) = keys::encode(&k, app_cursor) {
        // The person typing is the session's most recent terminal: its
        // size first, so that the key reaches the program at the size the
        // person sees.
        if m.pane_mut(&id).is_some_and(super::sizing::take_back) {
            super::sizing::ask(m, now, fx);
        }
        fx.push(Effect::Input(id.clone(), bytes));
        // Keys into a session that has said nothing since the last ones,
        // or the first after a quiet while: asked whether it still
        // answers, as `hm attach` asks, so that a stopped supervisor is
        // said to be not responding rather than taking keys unseen.
        if let Some(p) = m.pane_mut(&id)
            && p.askable()
            && p.poll.keys(now)
        {
            fx.push(Effect::Status(id));
        }
    }
}

/// Text pasted in focus, bracketed when the session's program asked for
/// bracketed paste.
pub fn paste(m: &mut Model, id: &str, text: &str, now: Instant, fx: &mut Vec<Effect>) {
    // Pasting is typing: back to the live screen, as a terminal does.
    let taken = m.pane_mut(id).is_some_and(|p| {
        copy::leave(p);
        super::sizing::take_back(p)
    });
    if taken {
        super::sizing::ask(m, now, fx);
    }
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
    fx.push(Effect::Input(id.to_owned(), bytes));
}

/// A mouse event in focus, given to the program when it asked for mouse
/// reports (in its mode and encoding); `false` leaves it to the dashboard
/// (clicks, and the wheel for the pane's history).
pub fn mouse(m: &Model, ev: crossterm::event::MouseEvent, fx: &mut Vec<Effect>) -> bool {
    use crate::vt::mouse::{Action, Button, Event, encode};
    use crossterm::event::{KeyModifiers, MouseButton, MouseEventKind};
    let Mode::Focus(id) = &m.mode else {
        return false;
    };
    let Some(p) = m.pane(id) else {
        return false;
    };
    let screen = p.term.screen();
    let mode = screen.mouse_protocol_mode();
    if mode == vt100::MouseProtocolMode::None {
        return false;
    }
    let button = |b: MouseButton| match b {
        MouseButton::Left => Button::Left,
        MouseButton::Middle => Button::Middle,
        MouseButton::Right => Button::Right,
    };
    let (action, button) = match ev.kind {
        MouseEventKind::Down(b) => (Action::Press, button(b)),
        MouseEventKind::Up(b) => (Action::Release, button(b)),
        MouseEventKind::Drag(b) => (Action::Motion, button(b)),
        MouseEventKind::Moved => (Action::Motion, Button::None),
        MouseEventKind::ScrollUp => (Action::Press, Button::WheelUp),
        MouseEventKind::ScrollDown => (Action::Press, Button::WheelDown),
        // Sideways scrolling has no report in these encodings.
        MouseEventKind::ScrollLeft | MouseEventKind::ScrollRight => return true,
    };
    // Focus draws the session from the top-left corner; the bar under it
    // is the dashboard's.
    let (rows, cols) = screen.size();
    if ev.row >= rows.get() || ev.column >= cols.get() {
        return true;
    }
    let event = Event {
        action,
        button,
        col: ev.column,
        row: ev.row,
        shift: ev.modifiers.contains(KeyModifiers::SHIFT),
        alt: ev.modifiers.contains(KeyModifiers::ALT),
        ctrl: ev.modifiers.contains(KeyModifiers::CONTROL),
    };
    if let Some(bytes) = encode(mode, screen.mouse_protocol_encoding(), &event) {
        fx.push(Effect::Input(id.clone(), bytes));
    }
    true
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use crossterm::event::KeyCode;

    use crate::tui::model::{Effect, Mode, Msg, SessionMsg};
    use crate::tui::update::harness::*;
    use crate::tui::update::update;

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

    /// A key into a focused program that was stopped (Ctrl-Z) continues
    /// it and is not typed: `fg` and Enter, as a stopped Claude Code asks,
    /// would reach it as a prompt. Once it runs, keys are typed again.
    #[test]
    fn a_key_into_a_stopped_program_continues_it_and_is_not_typed() {
        let now = Instant::now();
        let mut m = model(100, 31);
        live(&mut m, &["a"], now);
        update(&mut m, st("a", crate::classify::ProcessState::Idle, 0), now);
        update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(m.mode, Mode::Focus("a".into()));
        let report = |detail: &str, state: crate::classify::ProcessState| {
            let r: crate::protocol::StateReport = serde_json::from_value(serde_json::json!({
                "state": state.name(), "state_byte": state.as_byte(),
                "primary": state.name(), "detail": detail, "health": "alive",
                "agent": "claude", "state_ms": 0, "signals": [],
            }))
            .expect("a state report");
            Msg::Session("a".into(), SessionMsg::State(r))
        };
        update(
            &mut m,
            report("stopped", crate::classify::ProcessState::Waiting),
            now,
        );
        let fx = update(&mut m, press(KeyCode::Char('f')), now);
        assert!(inputs(&fx).is_empty(), "the key was typed");
        let acts: Vec<_> = fx
            .iter()
            .filter_map(|e| match e {
                Effect::Act(id, a) => Some((id.as_str(), a.answer.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(acts, [("a", "continue")]);
        assert!(notice(&m).contains("continuing 'a'"), "{}", notice(&m));
        // The next key, before the program says it runs: not typed, not
        // asked twice.
        let fx = update(&mut m, press(KeyCode::Char('g')), now);
        assert!(inputs(&fx).is_empty() && !fx.iter().any(|e| matches!(e, Effect::Act(..))));
        let done = crate::protocol::Acted {
            ok: true,
            action: Some(crate::protocol::ActionRecord {
                answer: "continue".into(),
                ..Default::default()
            }),
            ..Default::default()
        };
        update(
            &mut m,
            Msg::Session("a".into(), SessionMsg::Acted(Box::new(done))),
            now,
        );
        assert_eq!(notice(&m), "continued 'a'");
        update(
            &mut m,
            report("ready", crate::classify::ProcessState::Idle),
            now,
        );
        let fx = update(&mut m, press(KeyCode::Char('h')), now);
        assert_eq!(inputs(&fx), [b"h".to_vec()]);
    }

    /// A session that takes keys and says nothing (its supervisor
    /// stopped) is asked whether it still answers, and said not to.
    #[test]
    fn keys_into_a_silent_session_ask_whether_it_answers() {
        let now = Instant::now();
        let mut m = model(100, 31);
        live(&mut m, &["a"], now);
        // It answered once, idle, and went quiet.
        update(
            &mut m,
            st("a", crate::classify::ProcessState::Idle, 5_000),
            now,
        );
        update(&mut m, press(KeyCode::Enter), now);
        let later = now + std::time::Duration::from_secs(5);
        let fx = update(&mut m, press(KeyCode::Char('x')), later);
        assert!(
            fx.iter()
                .any(|e| matches!(e, Effect::Status(id) if id == "a")),
            "{fx:?}"
        );
        // No answer: the tick after the answer's time says so.
        let late = later + std::time::Duration::from_secs(10);
        update(&mut m, Msg::Tick, late);
        assert_eq!(notice(&m), "'a' is not responding");
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

    /// INFO saying the session is `cols` x `rows`, with no terminal
    /// attached.
    fn sized(cols: u16, rows: u16) -> Msg {
        let info = crate::protocol::Info {
            cols,
            rows,
            terminals: Some(0),
            ..Default::default()
        };
        Msg::Session("a".into(), SessionMsg::Info(Box::new(info)))
    }

    /// Two dashboards in focus on one session: the second's size stands
    /// (this one says `held`) until a key here takes it back; they resized
    /// it back and forth for as long as both were in focus.
    #[test]
    fn a_size_another_dashboard_took_stands_until_a_key_here() {
        let t0 = Instant::now();
        let at = |s: u64| t0 + std::time::Duration::from_secs(s);
        let mut m = model(80, 24);
        live(&mut m, &["a"], t0);
        let fx = update(&mut m, press(KeyCode::Enter), t0);
        let ours = crate::protocol::Size { cols: 80, rows: 23 };
        assert_eq!(resizes(&fx), [("a".to_owned(), ours)]);
        // Every INFO asked so far says it took ours.
        while m.pane("a").is_some_and(|p| p.infos_out > 0) {
            update(&mut m, sized(80, 23), t0);
        }
        // The other dashboard's focus: 160x39, learned later, and again.
        for s in [2, 5, 9] {
            let fx = update(&mut m, sized(160, 39), at(s));
            assert!(resizes(&fx).is_empty(), "{fx:?}");
            let fx = update(
                &mut m,
                Msg::Session("a".into(), SessionMsg::Output(b"x".to_vec())),
                at(s),
            );
            assert!(resizes(&fx).is_empty(), "{fx:?}");
        }
        assert!(screen_text(&m, at(9)).contains("160x39 held"));
        // A key here: this dashboard is the most recent again.
        let fx = update(&mut m, press(KeyCode::Char('x')), at(10));
        assert_eq!(inputs(&fx), [b"x".to_vec()]);
        assert_eq!(resizes(&fx), [("a".to_owned(), ours)]);
        // The size before the key: it reaches the program at the size the
        // person sees.
        let first = |want: fn(&Effect) -> bool| fx.iter().position(want);
        assert!(
            first(|e| matches!(e, Effect::Resize(..))) < first(|e| matches!(e, Effect::Input(..))),
            "{fx:?}"
        );
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
}
