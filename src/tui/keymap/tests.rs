//! The keymap driven through `update`, as the run loop drives it.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::classify::ProcessState;
use crate::protocol::Status;
use crate::tui::layout::{Grid, placements};
use crate::tui::model::{Effect, Mode, Model, Msg, NewStep, SessionMsg};
use crate::tui::update::harness::*;
use crate::tui::update::update;

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

/// Arrows across a pane on the way to another leave its `●`: it was
/// passed, not looked at. Zoomed, it is looked at at once.
#[test]
fn the_selection_passing_over_a_pane_leaves_its_mark() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["a", "b", "c"], now);
    m.pane_mut("b").expect("pane").attention = true;
    update(&mut m, press(KeyCode::Right), now);
    assert_eq!(sel(&m), "b");
    let soon = now + Duration::from_millis(300);
    update(&mut m, Msg::Tick, soon);
    update(&mut m, press(KeyCode::Right), soon);
    assert_eq!(sel(&m), "c");
    let later = soon + crate::tui::model::LOOK;
    update(&mut m, Msg::Tick, later);
    assert!(m.pane("b").expect("pane").attention, "passed, not seen");
    update(&mut m, press(KeyCode::Left), later);
    update(&mut m, press(KeyCode::Char('z')), later);
    assert_eq!(m.mode, Mode::Zoom("b".into()));
    assert!(!m.pane("b").expect("pane").attention, "zoomed: seen");
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
    // The only one, already selected: said so, not that there is none.
    m.pane_mut("a").expect("pane").attention = true;
    update(&mut m, press(KeyCode::Tab), now);
    assert_eq!(sel(&m), "a");
    assert_eq!(
        m.notice.as_ref().map(|(t, _)| t.as_str()),
        Some("only 'a', selected, needs attention")
    );
    m.pane_mut("a").expect("pane").attention = false;
    for id in ["b", "d"] {
        m.pane_mut(id).expect("pane").attention = true;
    }
    update(&mut m, press(KeyCode::Tab), now);
    assert_eq!(sel(&m), "b");
    assert!(m.pane("b").expect("pane").attention, "not looked at yet");
    let later = now + crate::tui::model::LOOK;
    update(&mut m, Msg::Tick, later);
    assert!(!m.pane("b").expect("pane").attention, "looking clears it");
    update(&mut m, press(KeyCode::Tab), later);
    assert_eq!(sel(&m), "d");
    update(&mut m, press(KeyCode::Tab), later);
    assert_eq!(sel(&m), "d", "nothing left to look at");
}

/// With sessions waiting, Tab still comes to every finished one: those
/// waiting, the longest first, then the finished in grid order, and round
/// again. It went back to the waiting after the first finished one, as
/// the round began after the selected, and to the first waiting once
/// looking at a finished one had taken its mark.
#[test]
fn tab_goes_round_every_session_that_needs_you() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["a", "b", "c", "d", "e", "f"], now);
    for id in ["a", "b", "c", "d", "e", "f"] {
        update(&mut m, st(id, ProcessState::Idle, 1000), now);
    }
    update(&mut m, st("c", ProcessState::Waiting, 5000), now);
    update(&mut m, st("e", ProcessState::Waiting, 1000), now);
    for id in ["b", "d", "f"] {
        m.pane_mut(id).expect("pane").attention = true;
    }
    let mut seen = Vec::new();
    for _ in 0..6 {
        update(&mut m, press(KeyCode::Tab), now);
        seen.push(sel(&m).to_owned());
    }
    assert_eq!(seen, ["c", "e", "b", "d", "f", "c"]);

    // Looked at: b's mark goes, and Tab goes on from it.
    for _ in 0..2 {
        update(&mut m, press(KeyCode::Tab), now);
    }
    assert_eq!(sel(&m), "b");
    let later = now + crate::tui::model::LOOK;
    assert_eq!(m.next_check(), Some(later), "the look is a deadline");
    update(&mut m, Msg::Tick, later);
    assert!(!m.pane("b").expect("pane").attention);
    update(&mut m, press(KeyCode::Tab), later);
    assert_eq!(sel(&m), "d");

    // A waiting one answered: the round starts again at who waits.
    update(&mut m, press(KeyCode::Tab), later);
    update(&mut m, press(KeyCode::Tab), later);
    update(&mut m, press(KeyCode::Tab), later);
    assert_eq!(sel(&m), "e");
    // Answered in focus, which looks at it.
    m.pane_mut("e").expect("pane").attention = false;
    update(&mut m, st("e", ProcessState::Active, 0), later);
    update(&mut m, press(KeyCode::Tab), later);
    assert_eq!(sel(&m), "c");
}

/// Zoomed at 80 columns, the footer says how to leave the zoom: the hint
/// was among the first to go for want of room.
#[test]
fn a_zoom_at_80_columns_says_how_to_unzoom() {
    let now = Instant::now();
    let mut m = model(80, 24);
    live(&mut m, &["a", "b", "c"], now);
    update(&mut m, st("b", ProcessState::Waiting, 1000), now);
    update(&mut m, press(KeyCode::Char('z')), now);
    let text = screen_text(&m, now);
    let footer = text.lines().last().expect("a footer");
    assert!(footer.contains("z unzoom"), "{footer}");
    assert!(footer.contains("q quit"), "{footer}");
}

/// The footer's page says which others have sessions waiting: `1 needs
/// you` on page 1 did not say where.
#[test]
fn the_page_says_where_others_wait() {
    let now = Instant::now();
    let mut m = model(80, 24);
    let names = ids(12);
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    live(&mut m, &refs, now);
    update(&mut m, st("p11", ProcessState::Waiting, 1000), now);
    let footer = |m: &Model| {
        screen_text(m, now)
            .lines()
            .last()
            .unwrap_or("")
            .trim_end()
            .to_owned()
    };
    assert!(footer(&m).ends_with("page 1/2, W on 2"), "{}", footer(&m));
    // And where news not looked at is: a failure on page 2 said nothing
    // on page 1.
    m.pane_mut("p10").expect("pane").attention = true;
    assert!(
        footer(&m).ends_with("page 1/2, W on 2, ● on 2"),
        "{}",
        footer(&m)
    );
    update(&mut m, press(KeyCode::Tab), now);
    assert!(footer(&m).ends_with("page 2/2"), "{}", footer(&m));
}

/// `e` on an ended session says how and when it ended: its head said
/// ` dead   for 3m55s`, as if it were a state it was still in.
#[test]
fn explain_of_an_ended_session_says_how_and_when_it_ended() {
    let now = Instant::now();
    let mut m = model(100, 30);
    live(&mut m, &["a"], now);
    let p = m.pane_mut("a").expect("pane");
    p.exit = Some(3);
    p.ended_at = Some(now);
    let later = now + Duration::from_secs(235);
    update(&mut m, press(KeyCode::Char('e')), later);
    let text = screen_text(&m, later);
    assert!(text.contains(" exited 3   3m55s ago"), "{text}");
    assert!(text.contains("exited with code 3"), "{text}");
    assert!(!text.contains("dead"), "{text}");
}

/// A signal's text too long for `e` is cut where it says so: `rm -rf
/// dist-5 && make re` read as the command it was about.
#[test]
fn explain_marks_a_cut_signal() {
    let now = Instant::now();
    let mut m = model(120, 30);
    live(&mut m, &["a"], now);
    let long = format!(
        "approve Bash: rm -rf dist-5 && {}",
        "make release ".repeat(8)
    );
    let r: crate::protocol::StateReport = serde_json::from_value(serde_json::json!({
        "state": "waiting",
        "state_byte": ProcessState::Waiting.as_byte(),
        "primary": "waiting",
        "detail": "permission",
        "health": "alive",
        "state_ms": 0,
        "signals": [{"source": "hook", "rule": "hook.PermissionRequest",
                     "text": long, "since_ms": 0}],
    }))
    .expect("a state report");
    update(&mut m, Msg::Session("a".into(), SessionMsg::State(r)), now);
    update(&mut m, press(KeyCode::Char('e')), now);
    let text = screen_text(&m, now);
    let row = text
        .lines()
        .find(|l| l.contains("hook.PermissionRequest"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains("…\""), "{row}");
}

/// `a` on an ended pane says what can be done, as Enter does: it did
/// nothing and said nothing. On a live one it attaches.
#[test]
fn a_raw_attach_of_an_ended_session_says_why_not() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["a", "b"], now);
    m.pane_mut("a").expect("pane").exit = Some(3);
    let fx = update(&mut m, press(KeyCode::Char('a')), now);
    assert!(
        fx.iter().all(|e| !matches!(e, Effect::RawAttach(_))),
        "{fx:?}"
    );
    assert_eq!(
        m.notice.as_ref().map(|(t, _)| t.as_str()),
        Some("'a' has ended: r runs it again, z shows its last screen")
    );
    // Ended, `a` went after `b`.
    update(&mut m, press(KeyCode::Left), now);
    let fx = update(&mut m, press(KeyCode::Char('a')), now);
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::RawAttach(id) if id == "b")),
        "{fx:?}"
    );
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

/// A question at 80 columns keeps its keys whole over an older notice:
/// the one a kill left cut off the next question's `n keep`.
#[test]
fn a_question_in_the_footer_comes_before_an_older_notice() {
    let now = Instant::now();
    let mut m = model(80, 24);
    live(&mut m, &["build", "ticker"], now);
    update(
        &mut m,
        Msg::Session("build".into(), SessionMsg::Exit(0)),
        now,
    );
    m.selected = Some("ticker".into());
    update(&mut m, press(KeyCode::Char('x')), now);
    update(&mut m, press(KeyCode::Char('y')), now);
    update(
        &mut m,
        Msg::Session("ticker".into(), SessionMsg::Exit(143)),
        now,
    );
    assert!(notice(&m).contains("killed"), "{}", notice(&m));
    m.selected = Some("build".into());
    update(&mut m, press(KeyCode::Char('r')), now);
    assert_eq!(m.mode, Mode::ConfirmRestart("build".into()));
    let footer = screen_text(&m, now)
        .lines()
        .last()
        .unwrap_or_default()
        .to_owned();
    assert!(
        footer.contains("run 'build' again?  y run  n keep"),
        "{footer}"
    );
}

#[test]
fn kill_asks_first_and_y_sends_kill_with_the_sessions_own_grace() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["a", "b"], now);
    let fx = update(&mut m, press(KeyCode::Char('x')), now);
    assert_eq!(m.mode, Mode::ConfirmKill("a".into()));
    assert!(fx.is_empty(), "nothing happens before the answer: {fx:?}");
    // The footer says the keys of the question, not the grid's.
    let footer = screen_text(&m, now)
        .lines()
        .last()
        .unwrap_or_default()
        .to_owned();
    assert!(footer.contains("kill 'a'?  y kill  n keep"), "{footer}");
    assert!(!footer.contains("new"), "{footer}");
    let fx = update(&mut m, press(KeyCode::Char('y')), now);
    assert_eq!(m.mode, Mode::Grid);
    assert_eq!(requests(&fx), [&Effect::Kill("a".into())]);
    // Its end, whatever its code, is then a kill's, not a failure, and
    // the footer's "killing" is answered.
    assert_eq!(notice(&m), "killing 'a'");
    update(&mut m, Msg::Session("a".into(), SessionMsg::Exit(15)), now);
    assert!(m.pane("a").is_some_and(|p| p.killed));
    assert_eq!(notice(&m), "session 'a' killed (exit code 15)");
    assert!(!m.pane("b").is_some_and(|p| p.killed));
}

/// `r` on a running session, and `x` `y` on an ended one, say what they
/// did or why not; they said nothing.
#[test]
fn restart_of_a_live_session_and_forgetting_say_so() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["a"], now);
    let fx = update(&mut m, press(KeyCode::Char('r')), now);
    assert!(requests(&fx).is_empty(), "{fx:?}");
    assert_eq!(
        notice(&m),
        "'a' is running; r starts a session again once it has ended"
    );
    // R with nothing lost says so.
    let fx = update(&mut m, press(KeyCode::Char('R')), now);
    assert!(fx.is_empty(), "{fx:?}");
    assert_eq!(notice(&m), "no lost session to restore");
    update(&mut m, Msg::Session("a".into(), SessionMsg::Exit(0)), now);
    update(&mut m, press(KeyCode::Char('x')), now);
    assert_eq!(m.mode, Mode::ConfirmForget("a".into()));
    let fx = update(&mut m, press(KeyCode::Char('y')), now);
    assert!(fx.contains(&Effect::Forget("a".into())), "{fx:?}");
    assert_eq!(notice(&m), "forgot 'a'");
}

/// A kill into a stalled link would be carried out whenever the host
/// came back: none is sent, and the footer says why.
#[test]
fn kill_of_a_session_on_an_unreachable_host_is_not_sent() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["box:a"], now);
    m.hosts_down.insert("box".into(), (0, now));
    update(&mut m, press(KeyCode::Char('x')), now);
    assert_eq!(m.mode, Mode::ConfirmKill("box:a".into()));
    let fx = update(&mut m, press(KeyCode::Char('y')), now);
    assert!(requests(&fx).is_empty(), "{fx:?}");
    assert_eq!(
        notice(&m),
        "not killed: box is unreachable; nothing was sent"
    );
    assert!(!m.pane("box:a").is_some_and(|p| p.killed));
    // Back up, it is killed as any other.
    m.hosts_down.clear();
    update(&mut m, press(KeyCode::Char('x')), now);
    let fx = update(&mut m, press(KeyCode::Char('y')), now);
    assert_eq!(requests(&fx), [&Effect::Kill("box:a".into())]);
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
fn x_on_a_finished_session_asks_then_clears_its_pane() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["a", "b"], now);
    update(&mut m, Msg::Session("a".into(), SessionMsg::Exit(0)), now);
    update(
        &mut m,
        Msg::Session("a".into(), SessionMsg::Closed(None)),
        now,
    );
    update(&mut m, press(KeyCode::Char('x')), now);
    assert_eq!(m.mode, Mode::ConfirmForget("a".into()));
    let fx = update(&mut m, press(KeyCode::Char('y')), now);
    assert_eq!(m.mode, Mode::Grid);
    assert_eq!(kills(&fx), 0, "{fx:?}");
    assert!(fx.contains(&Effect::Forget("a".into())), "{fx:?}");
    assert_eq!(m.visible_ids(), ["b"]);
    assert_eq!(sel(&m), "b");
}

#[test]
fn clearing_an_ended_pane_selects_its_neighbour() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["a", "b", "c", "d"], now);
    // Ended, a pane goes after the running: `b` is last, beside `d`.
    for (gone, next) in [("b", "d"), ("d", "c")] {
        update(&mut m, Msg::Session(gone.into(), SessionMsg::Exit(0)), now);
        m.selected = Some(gone.into());
        update(&mut m, press(KeyCode::Char('x')), now);
        update(&mut m, press(KeyCode::Char('y')), now);
        assert!(m.pane(gone).is_none());
        assert_eq!(sel(&m), next);
    }
}

#[test]
fn new_session_prompt_names_it_after_the_command_or_the_shell() {
    let now = Instant::now();
    let mut m = model(100, 31);
    m.shell = "/bin/test-shell".into();
    update(&mut m, press(KeyCode::Char('n')), now);
    // The id starts empty, and Enter leaves it so: the command names it.
    assert_eq!(
        m.mode,
        Mode::NewSession {
            step: NewStep::Id,
            id: String::new(),
            command: String::new()
        }
    );
    let fx = update(&mut m, press(KeyCode::Enter), now);
    assert!(fx.is_empty());
    assert!(matches!(
        &m.mode,
        Mode::NewSession {
            step: NewStep::Command,
            id,
            ..
        } if id.is_empty()
    ));
    assert_eq!(crate::tui::form::placeholder(&m, "", ""), "test-shell");
    let fx = update(&mut m, press(KeyCode::Enter), now);
    assert_eq!(
        fx,
        vec![Effect::Spawn {
            workdir: None,
            id: "test-shell".into(),
            command: "/bin/test-shell".into(),
            label: None,
            classifier: None,
        }]
    );
    assert_eq!(m.mode, Mode::Grid);
    let fx = update(&mut m, Msg::Started("test-shell".into(), Ok(None)), now);
    assert_eq!(fx, vec![Effect::ConnectStarted("test-shell".into())]);
    assert_eq!(sel(&m), "test-shell");
}

/// As `hm run` names a session: the program's file name, past any
/// assignments and `exec`, made a valid id, and `-2`, `-3`, ... after one
/// a pane has (running, ended or lost alike).
#[test]
fn the_name_a_command_gives_is_its_program_and_free() {
    let now = Instant::now();
    let mut m = model(100, 31);
    live(&mut m, &["claude", "claude-2", "cargo"], now);
    let name = |m: &Model, c: &str| crate::tui::form::placeholder(m, "", c);
    assert_eq!(name(&m, "claude --resume"), "claude-3");
    assert_eq!(name(&m, "FOO=1 exec /usr/local/bin/codex"), "codex");
    assert_eq!(name(&m, "  cargo   watch"), "cargo-2");
    assert_eq!(name(&m, "./my build.sh"), "my");
    assert_eq!(name(&m, "'weird name'"), "weird");
    let fx = typed_command(&mut m, "claude --resume", now);
    assert!(
        matches!(&fx[..], [Effect::Spawn { id, .. }] if id == "claude-3"),
        "{fx:?}"
    );
}

/// `host:` alone names it after its command on that machine, free among
/// that machine's panes; a host not set up is no such prefix.
#[test]
fn a_host_alone_names_it_there_after_its_command() {
    let now = Instant::now();
    let mut m = model(100, 31);
    m.hosts = vec!["box".into()];
    live(&mut m, &["box:claude", "claude-2"], now);
    let name = |m: &Model, id: &str, c: &str| crate::tui::form::placeholder(m, id, c);
    assert_eq!(name(&m, "box:", "claude"), "box:claude-2");
    assert_eq!(name(&m, "box:", ""), "box:shell");
    assert_eq!(name(&m, "", "claude"), "claude");
    assert!(crate::tui::form::unnamed(&m, "box:"));
    assert!(!crate::tui::form::unnamed(&m, "elsewhere:"));
    update(&mut m, press(KeyCode::Char('n')), now);
    typed(&mut m, "box:", now);
    update(&mut m, press(KeyCode::Enter), now);
    typed(&mut m, "claude", now);
    let fx = update(&mut m, press(KeyCode::Enter), now);
    assert!(
        matches!(&fx[..], [Effect::Spawn { id, workdir: None, .. }] if id == "box:claude-2"),
        "{fx:?}"
    );
}

/// `n`, Enter on the empty id, `command`, Enter: the effects of the last.
fn typed_command(m: &mut Model, command: &str, now: Instant) -> Vec<Effect> {
    update(m, press(KeyCode::Char('n')), now);
    update(m, press(KeyCode::Enter), now);
    typed(m, command, now);
    update(m, press(KeyCode::Enter), now)
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
    assert_eq!(id, "", "nothing typed yet");
    // What is typed is the id (before, it was added to the default:
    // `s2api`).
    typed(&mut m, "apx", now);
    update(&mut m, press(KeyCode::Backspace), now);
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
            label: None,
            classifier: None,
        }]
    );
    // Up before the next scan finds it, and selected among the others.
    let fx = update(&mut m, Msg::Started("api".into(), Ok(None)), now);
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

/// `id` typed into the form's id and Enter: the form stays at the id,
/// and what the footer says why.
fn refused_id(m: &mut Model, id: &str, now: Instant) -> String {
    typed(m, id, now);
    update(m, press(KeyCode::Enter), now);
    assert!(matches!(
        m.mode,
        Mode::NewSession {
            step: NewStep::Id,
            ..
        }
    ));
    notice(m)
}

#[test]
fn new_session_refuses_bad_and_taken_ids_and_esc_cancels() {
    let now = Instant::now();
    let mut m = model(100, 31);
    live(&mut m, &["s1"], now);
    update(&mut m, press(KeyCode::Char('n')), now);
    let notice = refused_id(&mut m, "s1", now);
    assert!(notice.contains("already exists"), "{notice}");
    update(&mut m, ctrl('u'), now);
    // The rule whole within an 80-column footer.
    let rule = refused_id(&mut m, "s/x", now);
    assert!(
        rule.ends_with("(first a letter or digit)") && rule.chars().count() <= 78,
        "{rule}"
    );
    let fx = update(&mut m, press(KeyCode::Esc), now);
    assert_eq!(m.mode, Mode::Grid);
    assert!(fx.is_empty());
    assert!(!m.quit);
}

/// The id of a lost session is not taken by a new one at once: its
/// manifest and output wait for `R`. Enter again takes it, as `hm run
/// --id` does.
#[test]
fn new_session_refuses_a_lost_sessions_id_until_enter_again() {
    let now = Instant::now();
    let mut m = model(100, 31);
    live(&mut m, &["s1", "api"], now);
    if let Some(p) = m.panes.iter_mut().find(|p| p.id == "api") {
        p.lost = Some(crate::tui::model::Lost::Restartable);
        p.link = crate::tui::model::Link::Gone;
    }
    update(&mut m, press(KeyCode::Char('n')), now);
    let notice = refused_id(&mut m, "api", now);
    assert!(
        notice.contains("'api' was lost with its supervisor: R restores it"),
        "{notice}"
    );
    // One `R` does not restore says what does run it again.
    if let Some(p) = m.panes.iter_mut().find(|p| p.id == "api") {
        p.lost = Some(crate::tui::model::Lost::Refused("not kept".into()));
    }
    update(&mut m, press(KeyCode::Esc), now);
    update(&mut m, press(KeyCode::Char('n')), now);
    let notice = refused_id(&mut m, "api", now);
    assert!(
        notice.contains(
            "'api' was lost with its supervisor: r runs it again, x forgets it, Enter again replaces it"
        ),
        "{notice}"
    );
    update(&mut m, press(KeyCode::Enter), now);
    assert!(
        matches!(&m.mode, Mode::NewSession { step: NewStep::Command, id, .. } if id == "api"),
        "{:?}",
        m.mode
    );
    typed(&mut m, "sleep 9", now);
    let fx = update(&mut m, press(KeyCode::Enter), now);
    assert!(
        matches!(&fx[..], [Effect::Spawn { id, .. }] if id == "api"),
        "{fx:?}"
    );
}

/// Nor is an ended session's: its record and output would go without a
/// word (`hm run --id` says so). `r` keeps them; Enter again replaces it.
#[test]
fn new_session_refuses_an_ended_sessions_id_until_enter_again() {
    let now = Instant::now();
    let mut m = model(100, 31);
    live(&mut m, &["s1", "fg2"], now);
    update(&mut m, Msg::Session("fg2".into(), SessionMsg::Exit(4)), now);
    update(&mut m, press(KeyCode::Char('n')), now);
    let notice = refused_id(&mut m, "fg2", now);
    assert_eq!(
        notice,
        "'fg2' exited with code 4: Enter again replaces it and its output; r reruns it"
    );
    // Whole in the footer of an 80-column terminal.
    assert!(notice.chars().count() <= 78, "{notice}");
    update(&mut m, press(KeyCode::Enter), now);
    assert!(
        matches!(&m.mode, Mode::NewSession { step: NewStep::Command, id, .. } if id == "fg2"),
        "{:?}",
        m.mode
    );
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
fn s_sorts_by_state_needs_you_first_then_what_printed_lately_each_by_id() {
    let t0 = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["a", "b", "c", "d", "g"], t0);
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    // `a` never printed; `b` and `g` did, `g` last.
    m.pane_mut("b").expect("b").printed_at = Some(at(10));
    m.pane_mut("g").expect("g").printed_at = Some(at(30));
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
    // Two that ended: the one that ended last comes first, whatever they
    // printed before.
    live(&mut m, &["e", "f"], t0);
    for (id, printed, ended) in [("e", 35, 12), ("f", 1, 25)] {
        let p = m.pane_mut(id).expect("pane");
        p.printed_at = Some(at(printed));
        p.exit = Some(0);
        p.ended_at = Some(at(ended));
    }
    assert_eq!(m.visible_ids(), ["a", "b", "c", "d", "g", "e", "f"]);
    update(&mut m, press(KeyCode::Char('s')), at(40));
    let busy_first = ["d", "c", "b", "g", "a", "f", "e"];
    assert_eq!(m.visible_ids(), busy_first);
    // `b` prints again, now the latest: the busy keep their places.
    m.pane_mut("b").expect("b").printed_at = Some(at(45));
    update(&mut m, Msg::Tick, at(50));
    assert_eq!(m.visible_ids(), busy_first);
    // A minute later `b` and `g` are as quiet as `a`.
    update(&mut m, Msg::Tick, at(45 + 60_000));
    assert_eq!(m.visible_ids(), ["d", "c", "a", "b", "g", "f", "e"]);
    update(&mut m, press(KeyCode::Char('s')), at(60_100));
    assert_eq!(m.visible_ids(), ["a", "b", "c", "d", "g", "e", "f"]);
}

/// Claude Code repaints at its prompt now and then: that is not
/// printing, for the order by state, or every agent at rest sorted among
/// those that just printed, ahead of a shell that had.
#[test]
fn an_agents_redraws_at_rest_do_not_count_as_printing() {
    let t0 = Instant::now();
    let at = |s: u64| t0 + Duration::from_secs(s);
    let mut m = model(160, 49);
    live(&mut m, &["cc", "sh"], t0);
    for (id, agent) in [("cc", "claude"), ("sh", "shell")] {
        update(&mut m, st(id, ProcessState::Idle, 1000), t0);
        let r: crate::protocol::StateReport = serde_json::from_value(serde_json::json!({
            "state": "idle",
            "state_byte": ProcessState::Idle.as_byte(),
            "primary": "idle",
            "detail": "ready",
            "health": "alive",
            "agent": agent,
            "state_ms": 1000,
            "signals": [],
        }))
        .expect("a state report");
        update(&mut m, Msg::Session(id.into(), SessionMsg::State(r)), t0);
    }
    update(&mut m, press(KeyCode::Char('s')), t0);
    assert_eq!(m.visible_ids(), ["cc", "sh"]);
    for id in ["cc", "sh"] {
        let out = SessionMsg::Output(b"\x1b[5;1Hx".to_vec());
        update(&mut m, Msg::Session(id.into(), out), at(5));
    }
    update(&mut m, Msg::Tick, at(6));
    assert_eq!(m.visible_ids(), ["sh", "cc"]);
}

#[test]
fn new_session_takes_a_label_after_the_directory() {
    let now = Instant::now();
    let mut m = model(100, 31);
    update(&mut m, press(KeyCode::Char('n')), now);
    update(&mut m, press(KeyCode::Enter), now);
    typed(&mut m, "make", now);
    // Tab: the directory, Tab: the label (then the classifier, and back
    // to the command).
    update(&mut m, press(KeyCode::Tab), now);
    update(&mut m, press(KeyCode::Tab), now);
    assert!(matches!(
        m.mode,
        Mode::NewSession {
            step: NewStep::Label,
            ..
        }
    ));
    typed(&mut m, "nightly buildx", now);
    update(&mut m, press(KeyCode::Backspace), now);
    // A label is one line: a pasted newline is not taken, nor past 60.
    update(&mut m, Msg::Paste(format!("\n{}", "y".repeat(100))), now);
    let fx = update(&mut m, press(KeyCode::Enter), now);
    let want = format!("nightly build{}", "y".repeat(60 - 13));
    assert!(
        matches!(&fx[..], [Effect::Spawn { command, label: Some(l), .. }] if command == "make" && *l == want),
        "{fx:?}"
    );
    // The next form starts without it.
    update(&mut m, press(KeyCode::Char('n')), now);
    assert_eq!(m.new_label, "");
}

#[test]
fn an_overlay_opened_over_a_zoomed_pane_closes_back_to_the_zoom() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["a", "b", "c"], now);
    update(&mut m, press(KeyCode::Char('l')), now);
    update(&mut m, press(KeyCode::Char('z')), now);
    assert_eq!(m.mode, Mode::Zoom("b".into()));
    let zoomed = placements(&m).rects;
    for (open, close) in [
        (KeyCode::Char('?'), KeyCode::Esc),
        (KeyCode::Char('e'), KeyCode::Char('q')),
        (KeyCode::Char('i'), KeyCode::Esc),
        (KeyCode::Char('x'), KeyCode::Char('n')),
    ] {
        update(&mut m, press(open), now);
        assert!(
            m.mode.is_overlay(),
            "{open:?} opens an overlay: {:?}",
            m.mode
        );
        // Under it, the zoomed pane keeps the whole area (and its size).
        assert_eq!(placements(&m).rects, zoomed, "under {open:?}");
        if open == KeyCode::Char('e') {
            let text = screen_text(&m, now);
            assert!(text.contains("z unzoom"), "{text}");
        }
        update(&mut m, press(close), now);
        assert_eq!(m.mode, Mode::Zoom("b".into()), "after {open:?} {close:?}");
    }
    // Unzoomed, the same overlays close to the grid.
    update(&mut m, press(KeyCode::Char('z')), now);
    update(&mut m, press(KeyCode::Char('?')), now);
    update(&mut m, press(KeyCode::Esc), now);
    assert_eq!(m.mode, Mode::Grid);
    // The new session form given up goes back to the zoom too.
    update(&mut m, press(KeyCode::Char('z')), now);
    update(&mut m, press(KeyCode::Char('n')), now);
    assert!(matches!(m.mode, Mode::NewSession { .. }), "{:?}", m.mode);
    update(&mut m, press(KeyCode::Esc), now);
    assert_eq!(m.mode, Mode::Zoom("b".into()), "the form given up");
}

/// Three panes left over from a 3x3 page fill the last page rather than
/// its top third, and up and down move by that page's own rows.
#[test]
fn a_last_page_of_fewer_panes_fills_the_screen_and_moves_by_its_rows() {
    let now = Instant::now();
    let mut m = model(80, 24);
    let ids: Vec<String> = (1..=12).map(|i| format!("s{i:02}")).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    live(&mut m, &ids, now);
    let p = placements(&m);
    assert_eq!((p.grid, p.pages), (Grid { cols: 3, rows: 3 }, 2), "{p:?}");
    m.selected = Some("s01".into());
    for _ in 0..3 {
        update(&mut m, press(KeyCode::Char('j')), now);
    }
    assert_eq!(sel(&m), "s10");
    let p = placements(&m);
    assert_eq!(p.page, 1);
    let tallest = p.rects.iter().map(|(_, r)| r.height).max().unwrap_or(0);
    assert!(
        tallest > 23 / 3 + 1,
        "the last page's panes are taller: {p:?}"
    );
    // Up from the last page's top row: the page before's bottom row, at
    // the same column.
    update(&mut m, press(KeyCode::Char('k')), now);
    assert_eq!((placements(&m).page, sel(&m)), (0, "s07"));
    // And down again, onto the last page.
    update(&mut m, press(KeyCode::Char('j')), now);
    assert_eq!((placements(&m).page, sel(&m)), (1, "s10"));
    // Up on the first page's top row stays there.
    m.selected = Some("s02".into());
    update(&mut m, press(KeyCode::Char('k')), now);
    assert_eq!(sel(&m), "s02");
    // Thirteen: four on the last page, two by two. Down from the third
    // column of page 1's bottom row is the last page's top row, at its
    // nearest column; down from its bottom row stays.
    let mut m = model(80, 24);
    let ids: Vec<String> = (1..=13).map(|i| format!("s{i:02}")).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    live(&mut m, &ids, now);
    m.selected = Some("s09".into());
    update(&mut m, press(KeyCode::Char('j')), now);
    let p = placements(&m);
    assert_eq!(
        (p.page, p.shape, sel(&m)),
        (1, Grid { cols: 2, rows: 2 }, "s11"),
        "{p:?}"
    );
    update(&mut m, press(KeyCode::Char('j')), now);
    assert_eq!(sel(&m), "s13");
    update(&mut m, press(KeyCode::Char('j')), now);
    assert_eq!(sel(&m), "s13");
}

/// A session the form started that could not start brings the form back
/// as it was filled in, saying why in it; one that started does not, and
/// neither does another start's failure.
#[test]
fn a_start_that_fails_brings_the_form_back_filled_in() {
    let now = Instant::now();
    let mut m = model(100, 31);
    live(&mut m, &["s1"], now);
    update(&mut m, press(KeyCode::Char('n')), now);
    typed(&mut m, "api", now);
    update(&mut m, press(KeyCode::Enter), now);
    typed(&mut m, "nonexistent-command --flag", now);
    update(&mut m, press(KeyCode::Tab), now);
    update(&mut m, ctrl('u'), now);
    typed(&mut m, "/no/such/dir", now);
    update(&mut m, press(KeyCode::Enter), now);
    assert_eq!(m.mode, Mode::Grid);
    let why = "workdir '/no/such/dir': No such file or directory";
    update(&mut m, Msg::Started("api".into(), Err(why.into())), now);
    // At the directory, the field to fix.
    assert_eq!(
        m.mode,
        Mode::NewSession {
            step: NewStep::Dir,
            id: "api".into(),
            command: "nonexistent-command --flag".into(),
        }
    );
    assert_eq!(m.new_dir, "/no/such/dir");
    assert_eq!(notice(&m), format!("could not start 'api': {why}"));
    // Esc, and another start's failure says so in the footer only.
    update(&mut m, press(KeyCode::Esc), now);
    update(&mut m, Msg::Started("other".into(), Err("no".into())), now);
    assert_eq!(m.mode, Mode::Grid);
}

/// An id the form made up from the command comes back unmade: the
/// command fixed names the session. It came back as if typed, and the
/// fixed command started under the failed one's name.
#[test]
fn a_start_that_fails_brings_back_no_id_that_was_not_typed() {
    let now = Instant::now();
    let mut m = model(100, 31);
    live(&mut m, &["s1"], now);
    update(&mut m, press(KeyCode::Char('n')), now);
    update(&mut m, press(KeyCode::Enter), now);
    typed(&mut m, "nosuchcmd", now);
    update(&mut m, press(KeyCode::Enter), now);
    let why = "no such program";
    update(
        &mut m,
        Msg::Started("nosuchcmd".into(), Err(why.into())),
        now,
    );
    assert_eq!(
        m.mode,
        Mode::NewSession {
            step: NewStep::Command,
            id: String::new(),
            command: "nosuchcmd".into(),
        }
    );
    update(&mut m, ctrl('u'), now);
    typed(&mut m, "bash -c true", now);
    let fx = update(&mut m, press(KeyCode::Enter), now);
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::Spawn { id, .. } if id == "bash")),
        "{fx:?}"
    );
}

/// A kept filter whose only match is forgotten says so, not a blank grid.
#[test]
fn a_filter_left_with_no_match_says_so() {
    let now = Instant::now();
    let mut m = model(80, 24);
    live(&mut m, &["okdone", "shell"], now);
    typed(&mut m, "/okd", now);
    update(&mut m, press(KeyCode::Enter), now);
    update(
        &mut m,
        Msg::Session("okdone".into(), SessionMsg::Exit(0)),
        now,
    );
    update(&mut m, press(KeyCode::Char('x')), now);
    update(&mut m, press(KeyCode::Char('y')), now);
    let text = screen_text(&m, now);
    assert!(text.contains("no session matches 'okd'"), "{text}");
}

/// Enter on a session that ended says what can be done with it instead.
#[test]
fn enter_on_an_ended_session_offers_restart_and_zoom() {
    let now = Instant::now();
    let mut m = model(80, 24);
    live(&mut m, &["build"], now);
    update(
        &mut m,
        Msg::Session("build".into(), SessionMsg::Exit(3)),
        now,
    );
    update(&mut m, press(KeyCode::Enter), now);
    assert_eq!(m.mode, Mode::Grid);
    assert_eq!(
        notice(&m),
        "'build' has ended: r runs it again, z shows its last screen"
    );
}

/// Typing a filter selects the first pane that matches each letter; a
/// pane passed on the way was not looked at and keeps its `●`.
#[test]
fn a_filter_typed_leaves_the_marks_of_panes_it_passed() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["a", "zz1", "zz12"], now);
    for id in ["zz1", "zz12"] {
        m.pane_mut(id).expect("pane").attention = true;
    }
    update(&mut m, press(KeyCode::Char('/')), now);
    for c in "zz12".chars() {
        update(&mut m, press(KeyCode::Char(c)), now);
    }
    assert_eq!(sel(&m), "zz12");
    assert!(m.pane("zz1").expect("pane").attention, "passed, not seen");
    assert!(m.pane("zz12").expect("pane").attention, "still typing");
    update(&mut m, press(KeyCode::Esc), now);
    update(&mut m, Msg::Tick, now + crate::tui::model::LOOK);
    assert!(m.pane("zz1").expect("pane").attention, "passed, not seen");
    assert!(!m.pane("zz12").expect("pane").attention, "landed on");
}

/// The filter finds a session by its label too (a person's name for it,
/// shown in its title): `/refactor` found nothing of one labelled
/// "refactor parser".
#[test]
fn the_filter_finds_a_session_by_its_label() {
    let now = Instant::now();
    let mut m = model(80, 24);
    live(&mut m, &["cc1", "cc2"], now);
    m.pane_mut("cc2").expect("cc2").label = Some("refactor parser".into());
    typed(&mut m, "/refactor", now);
    update(&mut m, press(KeyCode::Enter), now);
    assert_eq!(m.visible_ids(), ["cc2"]);
}

/// Tab with a filter that hides the one that needs you clears it and
/// goes there, saying so: it only said the filter hid one, beside the
/// footer's `⇥ next`.
#[test]
fn tab_clears_a_filter_that_hides_who_needs_you() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["a", "b"], now);
    m.pane_mut("b").expect("pane").attention = true;
    typed(&mut m, "/a", now);
    update(&mut m, press(KeyCode::Enter), now);
    update(&mut m, press(KeyCode::Tab), now);
    assert_eq!(m.selected.as_deref(), Some("b"));
    assert_eq!(m.filter, "");
    assert_eq!(notice(&m), "filter 'a' cleared: it hid 'b'");
}

/// `Tab` with none needing you says so; once one does, the next `Tab`
/// goes to it, and the word that none does is gone.
#[test]
fn tabs_word_that_none_needs_you_goes_once_one_does() {
    let now = Instant::now();
    let mut m = model(80, 24);
    live(&mut m, &["a", "q1"], now);
    for id in ["a", "q1"] {
        update(&mut m, st(id, ProcessState::Idle, 1000), now);
    }
    update(&mut m, press(KeyCode::Tab), now);
    assert_eq!(notice(&m), "no session needs attention");
    update(&mut m, st("q1", ProcessState::Waiting, 0), now);
    update(&mut m, press(KeyCode::Tab), now);
    assert_eq!(sel(&m), "q1");
    assert_ne!(notice(&m), "no session needs attention");
}

/// `L` labels a running session from its label; on one that ended it
/// says why it does nothing (it did nothing and said nothing).
#[test]
fn l_labels_a_running_session_and_says_why_not_an_ended_one() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["a", "b"], now);
    m.pane_mut("a").expect("pane").label = Some("old".into());
    update(&mut m, press(KeyCode::Char('L')), now);
    assert_eq!(
        m.mode,
        Mode::Label {
            id: "a".into(),
            text: "old".into()
        }
    );
    for k in [KeyCode::Backspace, KeyCode::Char('X'), KeyCode::Enter] {
        update(&mut m, press(k), now);
    }
    assert_eq!(m.mode, Mode::Grid);
    m.pane_mut("b").expect("pane").exit = Some(0);
    update(&mut m, press(KeyCode::Right), now);
    assert_eq!(m.selected.as_deref(), Some("b"));
    update(&mut m, press(KeyCode::Char('L')), now);
    assert_eq!(m.mode, Mode::Grid);
    assert_eq!(
        m.notice.as_ref().map(|(t, _)| t.as_str()),
        Some("'b' is not running: only a running session takes a new label")
    );
}

/// A label `L` cannot give is said, not dropped without a word: the 61st
/// character, and a label of what shows nothing (pasted), which stays
/// typed to mend.
#[test]
fn l_says_why_a_character_or_a_label_is_refused() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["a"], now);
    update(&mut m, press(KeyCode::Char('L')), now);
    typed(&mut m, &"x".repeat(61), now);
    assert_eq!(notice(&m), "a label is at most 60 characters");
    let Mode::Label { text, .. } = &m.mode else {
        panic!("still typing: {:?}", m.mode);
    };
    assert_eq!(text.chars().count(), 60);
    update(&mut m, press(KeyCode::Esc), now);
    update(&mut m, press(KeyCode::Char('L')), now);
    update(&mut m, Msg::Paste("\u{200b}\u{200b}".into()), now);
    update(&mut m, press(KeyCode::Enter), now);
    assert_eq!(notice(&m), "a label is one line of printable text");
    assert_eq!(
        m.mode,
        Mode::Label {
            id: "a".into(),
            text: "\u{200b}\u{200b}".into()
        }
    );
}

/// At 80x24 a labelled agent's pane says its label before the badge's
/// detail, with the letter of its kind of work (`T` thinking, as the
/// legend has it) and the time: `cc2 essay on… ─── T 56s`; it said
/// `cc2 ess… ── A think 56s`.
#[test]
fn a_narrow_title_keeps_the_label_and_the_kind_of_work() {
    let now = Instant::now();
    let mut m = model(80, 24);
    live(
        &mut m,
        &["cc1", "cc2", "sh", "top", "py", "logs", "build", "yn"],
        now,
    );
    m.pane_mut("cc2").expect("pane").label = Some("essay on rust".into());
    let r: crate::protocol::StateReport = serde_json::from_value(serde_json::json!({
        "state": "active",
        "state_byte": ProcessState::Active.as_byte(),
        "primary": "active",
        "detail": "thinking",
        "health": "alive",
        "agent": "claude",
        "state_ms": 56_000,
        "signals": [],
    }))
    .expect("a state report");
    update(&mut m, st("cc2", ProcessState::Active, 56_000), now);
    update(
        &mut m,
        Msg::Session("cc2".into(), SessionMsg::State(r)),
        now,
    );
    let text = screen_text(&m, now);
    let title = text
        .lines()
        .find(|l| l.contains("cc2"))
        .expect("cc2's title");
    assert!(title.contains("cc2 essay on… ─── T 56s"), "{title}");
}

/// The focus bar sets the label apart from the state: without colour,
/// `prod deploy gate waiting · input` read as one run of words.
#[test]
fn the_focus_bar_sets_the_label_apart_from_the_state() {
    let now = Instant::now();
    let mut m = model(100, 30);
    live(&mut m, &["yn2"], now);
    m.pane_mut("yn2").expect("pane").label = Some("prod deploy gate".into());
    update(&mut m, st("yn2", ProcessState::Waiting, 13_000), now);
    update(&mut m, press(KeyCode::Enter), now);
    assert_eq!(m.mode, Mode::Focus("yn2".into()));
    let text = screen_text(&m, now);
    let bar = text.lines().last().expect("the focus bar");
    assert!(bar.contains("prod deploy gate  waiting"), "{bar}");
}
