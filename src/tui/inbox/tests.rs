//! The inbox driven through `update`, as the run loop drives it: its
//! order, its keys, the answers it sends and what it makes of the
//! replies; and the rows as drawn.

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use crate::classify::ProcessState;
use crate::protocol::{Act, Acted, ActionRecord, DialogInfo, Info, StateReport};
use crate::tui::model::{Effect, Mode, Model, Msg, SessionMsg};
use crate::tui::update::harness::*;
use crate::tui::update::update;

/// The session's pushed state: waiting with `detail`, for `ms`, at no
/// dialog hm knows.
fn waiting(id: &str, detail: &str, ms: u64) -> Msg {
    waiting_at(id, detail, ms, None)
}

/// The session's pushed state: waiting with `detail`, for `ms`, at `d`.
fn waiting_at(id: &str, detail: &str, ms: u64, d: Option<DialogInfo>) -> Msg {
    let mut r: StateReport = serde_json::from_value(serde_json::json!({
        "state": "waiting",
        "state_byte": ProcessState::Waiting.as_byte(),
        "primary": "waiting",
        "detail": detail,
        "health": "alive",
        "agent": "claude",
        "state_ms": ms,
        "signals": [{"source": "status_protocol", "rule": "status.blocked",
                     "text": format!("{id} asks"), "since_ms": 0}],
    }))
    .expect("a state report");
    r.dialog = d.map(Box::new);
    Msg::Session(id.into(), SessionMsg::State(r))
}

/// Dialog number `n`, of `rule`, about `subject`.
fn dialog(rule: &str, subject: &str, n: u64) -> DialogInfo {
    DialogInfo {
        id: n,
        rule: rule.into(),
        subject: Some(subject.into()),
        fingerprint: format!("f{n}"),
        answers: vec!["approve".into(), "deny".into()],
        ..Default::default()
    }
}

/// INFO saying the session shows `d`.
fn info(id: &str, d: Option<DialogInfo>) -> Msg {
    Msg::Session(
        id.into(),
        SessionMsg::Info(Box::new(Info {
            dialog: d,
            ..Default::default()
        })),
    )
}

/// Sessions `a`..: live, then those in `waits` waiting (at dialog 1 of
/// theirs each), for the given ms.
fn scene(ids: &[&str], waits: &[(&str, &str, u32)], now: Instant) -> Model {
    let mut m = model(80, 24);
    live(&mut m, ids, now);
    for id in ids {
        update(&mut m, st(id, ProcessState::Idle, 1000), now);
    }
    for (id, detail, ms) in waits {
        update(&mut m, st(id, ProcessState::Waiting, *ms), now);
        let d = dialog(&format!("claude.{detail}"), &format!("cmd of {id}"), 1);
        update(&mut m, waiting_at(id, detail, u64::from(*ms), Some(d)), now);
    }
    m
}

/// [`scene`] with the inbox open and drawn once.
fn opened(ids: &[&str], waits: &[(&str, &str, u32)], now: Instant) -> Model {
    let mut m = scene(ids, waits, now);
    update(&mut m, press(KeyCode::Char('i')), now);
    draw(&mut m, now);
    m
}

/// A frame drawn now, as the run loop draws one, and its text.
fn draw(m: &mut Model, now: Instant) -> String {
    let text = screen_text(m, now);
    crate::tui::inbox::drawn(m, now);
    text
}

fn acts(fx: &[Effect]) -> Vec<(String, Act)> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Act(id, a) => Some((id.clone(), a.clone())),
            _ => None,
        })
        .collect()
}

fn said(m: &Model) -> String {
    m.inbox
        .said
        .as_ref()
        .map_or("", |s| s.text.as_str())
        .to_owned()
}

#[test]
fn the_inbox_lists_who_waits_the_longest_waiting_first() {
    let now = Instant::now();
    let mut m = scene(
        &["a", "b", "c", "d"],
        &[("b", "permission", 5_000), ("d", "question", 90_000)],
        now,
    );
    let fx = update(&mut m, press(KeyCode::Char('i')), now);
    assert_eq!(m.mode, Mode::Inbox);
    // The dialogs came with the states: nothing to ask.
    assert!(requests(&fx).is_empty(), "{fx:?}");
    let screen = draw(&mut m, now);
    let d = screen.find("cmd of d").expect(&screen);
    let b = screen.find("cmd of b").expect(&screen);
    assert!(d < b, "the longest waiting first:\n{screen}");
    assert!(
        screen.contains("question") && screen.contains("1m30s"),
        "{screen}"
    );
    assert!(screen.contains("needs you · 2"), "{screen}");
    assert!(!screen.contains("cmd of a"), "{screen}");
    // Its dialog has keys for both: the footer offers them.
    let screen = draw(&mut m, now);
    assert!(
        screen.contains("y approve") && screen.contains("n deny"),
        "{screen}"
    );
    let ids: Vec<&str> = m.inbox.shown.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["d", "b"]);
    assert_eq!(m.inbox.selected.as_deref(), Some("d"));
    // The one that waited since long ago, and the one that starts now.
    update(&mut m, st("a", ProcessState::Waiting, 0), now);
    update(&mut m, waiting("a", "input", 0), now);
    draw(&mut m, now + Duration::from_secs(1));
    let ids: Vec<&str> = m.inbox.shown.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["d", "b", "a"]);
}

#[test]
fn keys_move_over_the_rows_drawn_and_esc_closes() {
    let now = Instant::now();
    let mut m = scene(
        &["a", "b", "c"],
        &[
            ("a", "permission", 3_000),
            ("b", "permission", 2_000),
            ("c", "question", 1_000),
        ],
        now,
    );
    update(&mut m, press(KeyCode::Char('i')), now);
    draw(&mut m, now);
    let sel = |m: &Model| m.inbox.selected.clone().unwrap_or_default();
    assert_eq!(sel(&m), "a");
    for (key, want) in [
        (KeyCode::Char('j'), "b"),
        (KeyCode::Down, "c"),
        (KeyCode::Down, "c"),
        (KeyCode::Char('k'), "b"),
        (KeyCode::Up, "a"),
        (KeyCode::Up, "a"),
        (KeyCode::End, "c"),
        (KeyCode::Home, "a"),
    ] {
        update(&mut m, press(key), now);
        assert_eq!(sel(&m), want, "after {key:?}");
    }
    // `q` closes the inbox; it does not quit.
    update(&mut m, press(KeyCode::Char('q')), now);
    assert_eq!(m.mode, Mode::Grid);
    assert!(!m.quit);
    update(&mut m, press(KeyCode::Char('i')), now);
    update(&mut m, press(KeyCode::Esc), now);
    assert_eq!(m.mode, Mode::Grid);
}

#[test]
fn a_row_that_leaves_gives_its_place_to_the_next() {
    let now = Instant::now();
    let mut m = scene(
        &["a", "b", "c"],
        &[
            ("a", "permission", 3_000),
            ("b", "permission", 2_000),
            ("c", "question", 1_000),
        ],
        now,
    );
    update(&mut m, press(KeyCode::Char('i')), now);
    draw(&mut m, now);
    update(&mut m, press(KeyCode::Down), now);
    assert_eq!(m.inbox.selected.as_deref(), Some("b"));
    // b is answered elsewhere: c takes its place, and is what is lit.
    update(&mut m, st("b", ProcessState::Active, 0), now);
    let screen = draw(&mut m, now);
    assert_eq!(m.inbox.selected.as_deref(), Some("c"));
    let lit = screen
        .lines()
        .find(|l| l.contains('▸'))
        .expect("a selected row");
    assert!(lit.contains("cmd of c"), "{screen}");
}

/// `y` pressed twice: the first approves a, whose row leaves; b takes its
/// place under the second, which must not approve b unseen. A moment
/// later, or once the person moves, b is answered as any row.
#[test]
fn a_second_y_does_not_answer_the_row_that_just_took_the_answered_ones_place() {
    let now = Instant::now();
    let two = [("a", "permission", 3_000), ("b", "permission", 2_000)];
    let mut m = opened(&["a", "b"], &two, now);
    let fx = update(&mut m, press(KeyCode::Char('y')), now);
    assert_eq!(acts(&fx).len(), 1);
    update(&mut m, st("a", ProcessState::Active, 0), now);
    let soon = now + Duration::from_millis(100);
    draw(&mut m, soon);
    assert_eq!(m.inbox.selected.as_deref(), Some("b"));
    let fx = update(&mut m, press(KeyCode::Char('y')), soon);
    assert!(acts(&fx).is_empty(), "{fx:?}");
    assert!(said(&m).contains("'b' just took the place"), "{}", said(&m));
    // Pressed again, it is meant for b: answered, however soon.
    let fx = update(&mut m, press(KeyCode::Char('n')), soon);
    assert_eq!(acts(&fx)[0].0, "b");
    // A key a moment after the move is answered at once.
    let mut m = opened(&["a", "b"], &two, now);
    update(&mut m, st("a", ProcessState::Active, 0), now);
    draw(&mut m, now);
    let fx = update(
        &mut m,
        press(KeyCode::Char('y')),
        now + Duration::from_secs(1),
    );
    assert_eq!(acts(&fx)[0].0, "b");
    // Moved to by the person: at once.
    let three = [two[0], two[1], ("c", "permission", 1_000)];
    let mut m = opened(&["a", "b", "c"], &three, now);
    update(&mut m, st("a", ProcessState::Active, 0), now);
    draw(&mut m, now);
    update(&mut m, press(KeyCode::Down), now);
    let fx = update(&mut m, press(KeyCode::Char('y')), now);
    assert_eq!(acts(&fx)[0].0, "c");
}

#[test]
fn enter_focuses_the_selected_session_and_leaving_comes_back_to_the_inbox() {
    let now = Instant::now();
    let mut m = scene(&["a", "b"], &[("b", "permission", 3_000)], now);
    update(&mut m, press(KeyCode::Char('i')), now);
    draw(&mut m, now);
    update(&mut m, press(KeyCode::Enter), now);
    assert_eq!(m.mode, Mode::Focus("b".into()));
    assert_eq!(sel(&m), "b");
    let bar = draw(&mut m, now).lines().last().unwrap_or("").to_string();
    assert!(bar.contains("Ctrl-\\ back to the inbox"), "{bar}");
    update(&mut m, ctrl('\\'), now);
    assert_eq!(m.mode, Mode::Inbox);
    // From the grid, focus goes back to the grid as before.
    update(&mut m, press(KeyCode::Esc), now);
    update(&mut m, press(KeyCode::Enter), now);
    update(&mut m, ctrl('\\'), now);
    assert_eq!(m.mode, Mode::Grid);
}

#[test]
fn y_and_n_send_the_answer_for_the_dialog_drawn_not_a_newer_one() {
    let now = Instant::now();
    let mut m = scene(&["a"], &[("a", "permission", 3_000)], now);
    update(&mut m, press(KeyCode::Char('i')), now);
    draw(&mut m, now);
    // The dialog changes after the frame the person saw, before the key.
    let newer = dialog("claude.permission", "rm -rf /", 2);
    update(
        &mut m,
        waiting_at("a", "permission", 3_000, Some(newer)),
        now,
    );
    let fx = update(&mut m, press(KeyCode::Char('y')), now);
    assert_eq!(
        acts(&fx),
        [(
            "a".to_string(),
            Act {
                answer: "approve".into(),
                rule: Some("claude.permission".into()),
                dialog: Some(1),
                ..Default::default()
            }
        )]
    );
    assert!(said(&m).contains("approving claude.permission in 'a'"));
    // A second key while the first is on its way sends nothing.
    let fx = update(&mut m, press(KeyCode::Char('n')), now);
    assert!(acts(&fx).is_empty());
    assert!(said(&m).contains("already answering"), "{}", said(&m));
}

#[test]
fn a_refusal_is_shown_with_the_dialog_there_now() {
    let now = Instant::now();
    let mut m = scene(&["a"], &[("a", "permission", 3_000)], now);
    update(&mut m, press(KeyCode::Char('i')), now);
    draw(&mut m, now);
    update(&mut m, press(KeyCode::Char('n')), now);
    let refused = Acted {
        ok: false,
        reason: Some("the dialog in 'a' changed: now asking about 'rm -rf /'".into()),
        dialog: Some(Box::new(dialog("claude.permission", "rm -rf /", 2))),
        ..Default::default()
    };
    update(
        &mut m,
        Msg::Session("a".into(), SessionMsg::Acted(Box::new(refused))),
        now,
    );
    assert_eq!(
        said(&m),
        "not answered: the dialog in 'a' changed: now asking about 'rm -rf /'"
    );
    assert!(m.inbox.said.as_ref().is_some_and(|s| s.refused));
    assert!(m.pane("a").is_some_and(|p| p.answering.is_none()));
    // The row shows the dialog there now, which `y` then answers.
    let screen = draw(&mut m, now);
    assert!(
        screen.contains("not answered: the dialog in 'a' changed"),
        "{screen}"
    );
    assert!(screen.contains("rm -rf /"), "{screen}");
    let fx = update(&mut m, press(KeyCode::Char('y')), now);
    assert_eq!(acts(&fx)[0].1.dialog, Some(2));
    // A supervisor that says nothing of the dialog now is asked.
    let refused = Acted {
        ok: false,
        reason: Some("no".into()),
        ..Default::default()
    };
    let fx = update(
        &mut m,
        Msg::Session("a".into(), SessionMsg::Acted(Box::new(refused))),
        now,
    );
    assert!(fx.contains(&Effect::Info("a".into())), "{fx:?}");
}

#[test]
fn a_supervisor_that_numbers_no_dialogs_is_answered_by_fingerprint() {
    let now = Instant::now();
    let mut m = scene(&["a"], &[], now);
    update(&mut m, st("a", ProcessState::Waiting, 1_000), now);
    update(&mut m, waiting("a", "permission", 1_000), now);
    // An older hm: no dialog pushed; INFO's, without an id.
    let fx = update(&mut m, press(KeyCode::Char('i')), now);
    assert!(fx.contains(&Effect::Info("a".into())), "{fx:?}");
    update(
        &mut m,
        info("a", Some(dialog("codex.permission", "ls", 0))),
        now,
    );
    draw(&mut m, now);
    let fx = update(&mut m, press(KeyCode::Char('y')), now);
    let act = &acts(&fx)[0].1;
    assert_eq!((act.dialog, act.fingerprint.as_deref()), (None, Some("f0")));
}

#[test]
fn an_answer_given_is_said_and_one_too_soon_is_sent_again_when_due() {
    let now = Instant::now();
    let mut m = scene(&["a"], &[("a", "permission", 3_000)], now);
    update(&mut m, press(KeyCode::Char('i')), now);
    draw(&mut m, now);
    update(&mut m, press(KeyCode::Char('y')), now);
    // Too new: asked again after the time the supervisor gives.
    let soon = Acted {
        ok: false,
        reason: Some("drawn 100 ms ago".into()),
        retry_in_ms: Some(400),
        ..Default::default()
    };
    update(
        &mut m,
        Msg::Session("a".into(), SessionMsg::Acted(Box::new(soon))),
        now,
    );
    let due = m.next_check().expect("a check armed");
    assert!(due <= now + Duration::from_millis(420), "{due:?}");
    assert!(acts(&update(&mut m, Msg::Tick, now)).is_empty());
    let later = now + Duration::from_millis(420);
    let fx = update(&mut m, Msg::Tick, later);
    assert_eq!(acts(&fx).len(), 1, "{fx:?}");
    approved(&mut m, Some("cmd of a"), later);
    assert_eq!(
        said(&m),
        "approved claude.permission in 'a': cmd of a (keys: 1)"
    );
    assert!(!m.inbox.said.as_ref().is_some_and(|s| s.refused));
    assert_eq!(notice(&m), said(&m));
    // Its dialog still stands (the program has not redrawn yet): the row
    // says it was answered, not what it asks, which invited a second
    // answer; another dialog is asked about again.
    let screen = draw(&mut m, later);
    assert!(
        screen.contains("answered; it has not gone on yet…"),
        "{screen}"
    );
    // A second answer to it is not sent: it would go to what comes next.
    let fx = update(&mut m, press(KeyCode::Char('y')), later);
    assert!(acts(&fx).is_empty(), "{fx:?}");
    assert_eq!(
        said(&m),
        "not answered: 'a' was answered and has not gone on yet; Enter focuses it"
    );
    let next = dialog("claude.permission", "next cmd", 2);
    update(&mut m, waiting_at("a", "permission", 0, Some(next)), later);
    let screen = draw(&mut m, later);
    assert!(!screen.contains("answered;"), "{screen}");
    assert!(screen.contains("next cmd"), "{screen}");
}

/// Answered from the inbox is looked at: the grid does not mark it as
/// news afterwards. A refused answer leaves the mark.
#[test]
fn a_session_answered_from_the_inbox_keeps_no_mark() {
    let now = Instant::now();
    let mut m = scene(&["a", "b"], &[("b", "permission", 3_000)], now);
    assert_eq!(m.selected.as_deref(), Some("a"));
    assert!(m.pane("b").is_some_and(|p| p.attention), "b began to wait");
    update(&mut m, press(KeyCode::Char('i')), now);
    draw(&mut m, now);
    update(&mut m, press(KeyCode::Char('y')), now);
    let refused = Acted {
        ok: false,
        reason: Some("the dialog is gone".into()),
        ..Default::default()
    };
    update(
        &mut m,
        Msg::Session("b".into(), SessionMsg::Acted(Box::new(refused))),
        now,
    );
    assert!(m.pane("b").is_some_and(|p| p.attention), "not answered");
    update(
        &mut m,
        press(KeyCode::Char('y')),
        now + Duration::from_secs(3),
    );
    let done = Acted {
        ok: true,
        ..Default::default()
    };
    update(
        &mut m,
        Msg::Session("b".into(), SessionMsg::Acted(Box::new(done))),
        now + Duration::from_secs(3),
    );
    assert!(m.pane("b").is_some_and(|p| !p.attention), "answered");
}

/// In a narrow inbox an id is cut in its middle, as a pane's title cuts
/// it: two ids of one task were cut to the same row.
#[test]
fn a_long_id_is_cut_in_its_middle() {
    let now = Instant::now();
    let mut m = model(60, 24);
    let ids = [
        "claude-refactor-backend-extend-1",
        "claude-refactor-backend-extend-2",
    ];
    live(&mut m, &ids, now);
    for (n, id) in ids.iter().enumerate() {
        update(&mut m, st(id, ProcessState::Waiting, 3_000), now);
        let d = dialog("claude.permission", "Deploy to production", n as u64 + 1);
        update(&mut m, waiting_at(id, "permission", 3_000, Some(d)), now);
    }
    update(&mut m, press(KeyCode::Char('i')), now);
    let text = draw(&mut m, now);
    for end in ["…end-extend-1", "…end-extend-2"] {
        assert!(text.contains(end), "{end} in\n{text}");
    }
}

/// A stopped supervisor (or a stalled link) reads the answer when it
/// resumes, and uses it if the dialog is still there: the inbox says the
/// answer is late, not that nothing was sent, and reports the reply when
/// it comes; one that never replies is given up in the end.
#[test]
fn an_answer_not_replied_to_is_late_then_reported_or_given_up() {
    let now = Instant::now();
    let mut m = scene(&["a"], &[("a", "permission", 3_000)], now);
    update(&mut m, press(KeyCode::Char('i')), now);
    draw(&mut m, now);
    update(&mut m, press(KeyCode::Char('y')), now);
    update(&mut m, Msg::Tick, now + Duration::from_secs(4));
    assert!(said(&m).contains("no reply from 'a' yet"), "{}", said(&m));
    assert!(!said(&m).contains("older"), "{}", said(&m));
    assert!(m.pane("a").is_some_and(|p| p.answering.is_some()));
    assert!(draw(&mut m, now).contains("sent, no reply yet"));
    // A second y waits for the first.
    update(
        &mut m,
        press(KeyCode::Char('y')),
        now + Duration::from_secs(5),
    );
    assert_eq!(said(&m), "already answering 'a' (no reply yet)");
    approved(&mut m, None, now + Duration::from_secs(20));
    assert_eq!(said(&m), "approved claude.permission in 'a' (keys: 1)");

    // Its next dialog, answered and never replied to.
    let next = dialog("claude.permission", "cmd of a", 2);
    update(
        &mut m,
        waiting_at("a", "permission", 0, Some(next)),
        now + Duration::from_secs(20),
    );
    draw(&mut m, now + Duration::from_secs(20));
    update(
        &mut m,
        press(KeyCode::Char('n')),
        now + Duration::from_secs(21),
    );
    assert!(m.pane("a").is_some_and(|p| p.answering.is_some()));
    update(&mut m, Msg::Tick, now + Duration::from_secs(90));
    assert!(m.pane("a").is_some_and(|p| p.answering.is_none()));
}

/// `a`'s supervisor says it approved its permission dialog with `1`.
fn approved(m: &mut Model, subject: Option<&str>, at: Instant) {
    let done = Acted {
        ok: true,
        action: Some(ActionRecord {
            answer: "approve".into(),
            rule: "claude.permission".into(),
            subject: subject.map(str::to_owned),
            keys: vec!["1".into()],
            ..Default::default()
        }),
        ..Default::default()
    };
    update(
        m,
        Msg::Session("a".into(), SessionMsg::Acted(Box::new(done))),
        at,
    );
}

#[test]
fn without_a_dialog_or_its_keys_nothing_is_sent_and_it_says_why() {
    let now = Instant::now();
    let mut m = scene(&["a", "b"], &[("a", "input", 3_000)], now);
    // `a` waits on the program's own word: no dialog on its screen.
    update(&mut m, waiting("a", "input", 3_000), now);
    // `b` shows a question its rules know no keys to approve.
    update(&mut m, st("b", ProcessState::Waiting, 1_000), now);
    let mut q = dialog("claude.question", "Which database?", 1);
    q.answers.clear();
    update(&mut m, waiting_at("b", "question", 1_000, Some(q)), now);
    update(&mut m, press(KeyCode::Char('i')), now);
    let screen = draw(&mut m, now);
    // Nothing `y` or `n` could send: the footer does not offer them.
    assert!(!screen.contains("y approve"), "{screen}");
    update(&mut m, press(KeyCode::Down), now);
    let screen = draw(&mut m, now);
    assert!(screen.contains("Which database?"), "{screen}");
    assert!(
        !screen.contains("y approve") && !screen.contains("n deny"),
        "{screen}"
    );
    update(&mut m, press(KeyCode::Up), now);
    draw(&mut m, now);
    let fx = update(&mut m, press(KeyCode::Char('y')), now);
    assert!(acts(&fx).is_empty());
    assert!(
        said(&m).contains("hm sees no dialog it can approve in 'a'"),
        "{}",
        said(&m)
    );
    update(&mut m, press(KeyCode::Down), now);
    let fx = update(&mut m, press(KeyCode::Char('y')), now);
    assert!(acts(&fx).is_empty());
    assert!(
        said(&m).contains("which hm cannot approve: Enter focuses it, to answer it yourself"),
        "{}",
        said(&m)
    );
    // Answered by hand in focus: back in the inbox, the refusal is gone.
    update(&mut m, press(KeyCode::Enter), now);
    assert_eq!(m.mode, Mode::Focus("b".into()));
    update(&mut m, ctrl('\\'), now);
    assert_eq!(m.mode, Mode::Inbox);
    assert!(m.inbox.said.is_none(), "{}", said(&m));
}

#[test]
fn the_dialog_comes_and_goes_with_the_pushed_state() {
    let now = Instant::now();
    let mut m = scene(&["a"], &[], now);
    update(&mut m, st("a", ProcessState::Waiting, 0), now);
    // Claude Code says it waits before it draws the dialog; the dialog
    // comes with the next state pushed.
    let fx = update(&mut m, waiting("a", "permission", 0), now);
    assert!(requests(&fx).is_empty(), "{fx:?}");
    assert!(m.pane("a").is_some_and(|p| p.dialog.is_none()));
    let d = dialog("claude.permission", "ls", 4);
    update(&mut m, waiting_at("a", "permission", 50, Some(d)), now);
    assert!(
        m.pane("a")
            .is_some_and(|p| p.dialog.as_ref().is_some_and(|d| d.id == 4))
    );
    // Done waiting: the dialog is forgotten.
    update(&mut m, st("a", ProcessState::Active, 0), now);
    let active: StateReport = serde_json::from_value(serde_json::json!({
        "state": "active", "state_byte": ProcessState::Active.as_byte(),
        "primary": "active", "detail": null, "health": "alive", "agent": null,
        "state_ms": 0, "signals": []
    }))
    .expect("report");
    update(
        &mut m,
        Msg::Session("a".into(), SessionMsg::State(active)),
        now,
    );
    assert!(m.pane("a").is_some_and(|p| p.dialog.is_none()));
}

#[test]
fn the_footer_counts_who_needs_you_and_names_the_inbox_key_at_80_columns() {
    let now = Instant::now();
    let mut m = scene(
        &["a", "b", "c"],
        &[("a", "permission", 3_000), ("c", "input", 1_000)],
        now,
    );
    m.notify(
        "a notice long enough to crowd the hints out of the footer",
        now,
    );
    let screen = draw(&mut m, now);
    let footer = screen.lines().last().expect("a footer").to_string();
    // First, whatever else wants the room.
    assert!(footer.starts_with(" 2 need you  i inbox"), "{footer}");
    // Without the notice the hints are back, help and quit first.
    m.notice = None;
    let footer = draw(&mut m, now)
        .lines()
        .last()
        .expect("a footer")
        .to_string();
    assert!(footer.starts_with(" 2 need you  i inbox"), "{footer}");
    assert!(
        footer.contains("? help") && footer.contains("q quit"),
        "{footer}"
    );
}

#[test]
fn the_selected_dialog_is_shown_with_its_own_rows() {
    let now = Instant::now();
    let mut m = scene(&["a"], &[], now);
    let screen = "working...\r\n Bash command\r\n   rm -rf build\r\n Do you want to proceed?\r\n \u{276f} 1. Yes\r\n   2. No\r\n";
    update(
        &mut m,
        Msg::Session("a".into(), SessionMsg::Output(screen.as_bytes().to_vec())),
        now,
    );
    update(&mut m, st("a", ProcessState::Waiting, 1_000), now);
    let mut d = dialog("claude.permission", "rm -rf build", 3);
    d.screen_rows = Some((1, 5));
    update(&mut m, waiting_at("a", "permission", 1_000, Some(d)), now);
    update(&mut m, press(KeyCode::Char('i')), now);
    let text = draw(&mut m, now);
    // The last of each: the pane behind shows them too.
    let at = |s: &str| {
        text.rfind(s)
            .unwrap_or_else(|| panic!("no {s:?} in\n{text}"))
    };
    // The dialog's rows in order, under its header; not the rows around.
    assert!(at("a · claude.permission · approve, deny") < at("Bash command"));
    assert!(at("Bash command") < at("Do you want to proceed?"));
    assert!(at("Do you want to proceed?") < at("2. No"));
    // Not the rows around it.
    assert!(
        !text
            .lines()
            .filter(|l| l.starts_with('│'))
            .any(|l| l.contains("working...")),
        "{text}"
    );
}

/// Claude Code's suspended screen is a dialog of its rules with no keys:
/// the row offers what `y` does to a stopped program, not to answer it
/// by hand.
#[test]
fn a_stopped_agent_at_its_suspended_screen_offers_y_to_continue() {
    let now = Instant::now();
    let mut m = scene(&["cc"], &[], now);
    update(&mut m, st("cc", ProcessState::Waiting, 1_000), now);
    let mut d = dialog("claude.suspended", "Claude Code is suspended", 2);
    d.answers.clear();
    update(&mut m, waiting_at("cc", "stopped", 1_000, Some(d)), now);
    update(&mut m, press(KeyCode::Char('i')), now);
    let text = draw(&mut m, now);
    assert!(text.contains("cc · stopped · y continues it"), "{text}");
    assert!(!text.contains("no keys known"), "{text}");
}

/// Session `a`, `cols` wide, showing `screen` and waiting at `d`: the
/// inbox opened over it, as drawn.
fn asking_wide(m: &mut Model, cols: u16, screen: &str, d: DialogInfo, now: Instant) -> String {
    m.pane_mut("a")
        .expect("a")
        .term
        .resize(crate::protocol::Size { cols, rows: 24 });
    update(
        m,
        Msg::Session("a".into(), SessionMsg::Output(screen.as_bytes().to_vec())),
        now,
    );
    update(m, st("a", ProcessState::Waiting, 1_000), now);
    update(m, waiting_at("a", "permission", 1_000, Some(d)), now);
    update(m, press(KeyCode::Char('i')), now);
    draw(m, now)
}

/// Claude Code 2.1.330's notice that auto mode cannot check its actions,
/// from a 120-column session in an 80x24 dashboard: too long to wrap
/// every row, it keeps its keys whole (`Enter to stay in auto mode ·
/// ... · Esc to cancel`), which the paragraphs above took the room of.
#[test]
fn a_long_notice_keeps_its_keys_whole() {
    let now = Instant::now();
    let mut m = scene(&["a"], &[], now);
    let keys = "Enter to stay in auto mode · shift+Tab to leave for accept edits mode and stop · \
                Esc to cancel";
    let paragraph = "Or you can leave for accept edits mode, which has no safety check, and auto \
                     mode stays off. These then run";
    let mut screen = String::from("  Auto mode can't check actions in this session\r\n\r\n");
    for _ in 0..8 {
        screen.push_str(&format!("  {paragraph}\r\n"));
    }
    screen.push_str(&format!("\r\n  {keys}\r\n"));
    let mut d = dialog("claude.auto_mode_unchecked", "for i in 1 2 3", 3);
    d.screen_rows = Some((0, 11));
    let text = asking_wide(&mut m, 120, &screen, d, now);
    let inside: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split('│').nth(1))
        .map(str::trim)
        .collect();
    let first = inside
        .iter()
        .position(|l| l.starts_with("Enter to stay"))
        .unwrap_or_else(|| panic!("{text}"));
    let joined = inside[first..first + 2].join(" ");
    assert_eq!(joined, keys, "{text}");
}

/// A dialog row wider than the inbox goes on under itself while there is
/// room: the command an 80-column session asks about, whole, broken
/// between words, the rest indented under its start.
#[test]
fn a_dialog_row_wider_than_the_inbox_is_wrapped_not_cut() {
    let now = Instant::now();
    let mut m = scene(&["a"], &[], now);
    let command = "cargo test --workspace --all-features --release -- --nocapture \
                   --test-threads 1 the_integration_suite_that_runs_last"
        .to_owned();
    let screen = format!(
        " Bash command\r\n\r\n   {command}\r\n Do you want to proceed?\r\n \u{276f} 1. Yes\r\n   2. No\r\n"
    );
    // The session's terminal is wider than the inbox: one row of it.
    let mut d = dialog("claude.permission", &command, 3);
    d.screen_rows = Some((0, 6));
    let text = asking_wide(&mut m, 160, &screen, d, now);
    let inside: Vec<&str> = text.lines().filter_map(|l| l.split('│').nth(1)).collect();
    let first = inside
        .iter()
        .position(|l| l.trim_start().starts_with("cargo test"))
        .unwrap_or_else(|| panic!("{text}"));
    let at = |l: &str| l.len() - l.trim_start().len();
    let pieces: Vec<&str> = inside[first..]
        .iter()
        .take_while(|l| !l.contains("Do you want"))
        .copied()
        .collect();
    assert!(pieces.len() > 1, "{text}");
    // Every piece after the first is indented under it, and whole words
    // joined by one space give the command back.
    assert!(
        pieces[1..].iter().all(|l| at(l) == at(pieces[0]) + 2),
        "{text}"
    );
    let joined: Vec<&str> = pieces.iter().map(|l| l.trim()).collect();
    assert_eq!(joined.join(" "), command, "{text}");
    assert!(text.contains("2. No"), "{text}");
}

#[test]
fn focus_at_80_columns_names_the_others_waiting_where_there_is_room() {
    let now = Instant::now();
    let mut m = scene(
        &["a-long-id", "b"],
        &[("a-long-id", "permission", 3_000), ("b", "question", 1_000)],
        now,
    );
    update(&mut m, press(KeyCode::Enter), now);
    assert_eq!(m.mode, Mode::Focus("a-long-id".into()));
    let bar = draw(&mut m, now).lines().last().unwrap_or("").to_string();
    // Named where there is room.
    assert!(bar.trim_end().ends_with("1 needs you: b"), "{bar}");
    // Too many names for 80 columns: the count alone.
    let ids = [
        "a-long-id",
        "second-long-id",
        "third-long-id",
        "fourth-long-id",
    ];
    let waits: Vec<(&str, &str, u32)> = ids.iter().map(|id| (*id, "question", 1_000)).collect();
    let mut m = scene(&ids, &waits, now);
    update(&mut m, press(KeyCode::Enter), now);
    let bar = draw(&mut m, now).lines().last().unwrap_or("").to_string();
    assert!(bar.trim_end().ends_with("3 need you"), "{bar}");
}

/// A label and a held size take room too: the count of the others who
/// need you was cut into (`1 need yo`) at 80 columns.
#[test]
fn focus_at_80_columns_never_cuts_the_count_of_those_who_need_you() {
    let now = Instant::now();
    let mut m = scene(
        &["a-claude-on-the-parser", "b-with-a-longer-id"],
        &[
            ("a-claude-on-the-parser", "permission", 3_000),
            ("b-with-a-longer-id", "question", 1_000),
        ],
        now,
    );
    let p = m.pane_mut("a-claude-on-the-parser").expect("pane");
    p.label = Some("refactor the parser".into());
    p.held = true;
    p.session_size = Some(crate::protocol::Size {
        cols: 200,
        rows: 50,
    });
    update(&mut m, press(KeyCode::Enter), now);
    assert_eq!(m.mode, Mode::Focus("a-claude-on-the-parser".into()));
    let bar = draw(&mut m, now).lines().last().unwrap_or("").to_string();
    // The way back says less first, and the size it is held at stays.
    assert!(bar.contains("Ctrl-\\ back "), "{bar}");
    assert!(bar.contains("200x50 held"), "{bar}");
    assert!(bar.trim_end().ends_with(" 1 needs you"), "{bar}");
    // Narrower still, the held size goes before the count does.
    m.size.0 = 72;
    let bar = draw(&mut m, now).lines().last().unwrap_or("").to_string();
    assert!(bar.contains("Ctrl-\\ back "), "{bar}");
    assert!(!bar.contains("held"), "{bar}");
    assert!(bar.trim_end().ends_with(" 1 needs you"), "{bar}");
}

#[test]
fn a_session_not_connected_is_not_sent_an_answer() {
    let now = Instant::now();
    let mut m = scene(&["a"], &[("a", "permission", 3_000)], now);
    update(&mut m, press(KeyCode::Char('i')), now);
    draw(&mut m, now);
    let lost = SessionMsg::Problem {
        why: "not responding".into(),
        notice: None,
    };
    update(&mut m, Msg::Session("a".into(), lost), now);
    let fx = update(&mut m, press(KeyCode::Char('y')), now);
    assert!(acts(&fx).is_empty(), "{fx:?}");
    assert_eq!(
        said(&m),
        "not answered: 'a': not responding; nothing was sent"
    );
}

/// The inbox's row of a plain program that printed `out` and waits
/// reading its terminal (the simple classifier's word), and the frame.
fn plain_row(out: &str) -> (String, String) {
    let now = Instant::now();
    let mut m = scene(&["a"], &[], now);
    update(
        &mut m,
        Msg::Session("a".into(), SessionMsg::Output(out.as_bytes().to_vec())),
        now,
    );
    update(&mut m, st("a", ProcessState::Waiting, 1_000), now);
    let mut r: StateReport = serde_json::from_value(serde_json::json!({
        "state": "waiting", "state_byte": ProcessState::Waiting.as_byte(),
        "primary": "waiting", "detail": "input", "health": "alive", "agent": null,
        "state_ms": 1000,
        "signals": [{"source": "process", "rule": "process.reading", "text": "bash", "since_ms": 0}],
    }))
    .expect("report");
    r.dialog = None;
    update(&mut m, Msg::Session("a".into(), SessionMsg::State(r)), now);
    update(&mut m, press(KeyCode::Char('i')), now);
    let text = draw(&mut m, now);
    let row = text
        .lines()
        .find(|l| l.contains("▸ a "))
        .expect(&text)
        .to_owned();
    (row, text)
}

#[test]
fn a_plain_program_waiting_shows_the_line_it_asks_on() {
    let (row, text) = plain_row("working\r\nDrop table users? [y/N] ");
    assert!(row.contains("Drop table users? [y/N]"), "{text}");
}

/// One that printed what it asks and a newline, its cursor on a blank
/// row: the row says the line above it, not `…`.
#[test]
fn a_program_waiting_below_its_words_shows_them() {
    let (row, text) = plain_row("VITE ready\r\n  press h + enter to show help\r\n");
    assert!(row.contains("press h + enter to show help"), "{text}");
}

/// What is seen of the dialog of `frame` (a fixture screen of 120x28),
/// read with the real rules as a supervisor reports it.
struct Seen {
    /// The inbox's rows under its header.
    inbox: Vec<String>,
    subject: Option<String>,
    /// The rows a pane of 6 rows shows of it.
    pane: Vec<String>,
}

fn inbox_of(frame: &str, detail: crate::detect::Detail) -> Seen {
    inbox_at(frame, detail, 120, (160, 50))
}

/// [`inbox_of`] with the session `cols` wide, in a dashboard of `size`.
fn inbox_at(frame: &str, detail: crate::detect::Detail, cols: u16, size: (u16, u16)) -> Seen {
    let now = Instant::now();
    let mut m = scene(&["a"], &[], now);
    m.size = size;
    let p = m.pane_mut("a").expect("pane");
    p.term.resize(crate::protocol::Size { cols, rows: 28 });
    let output = frame.trim_end_matches('\n').replace('\n', "\r\n");
    update(
        &mut m,
        Msg::Session("a".into(), SessionMsg::Output(output.into_bytes())),
        now,
    );
    let rules = crate::detect::rules::builtin();
    let screen = m.pane("a").expect("pane").term.screen().clone();
    let d =
        crate::detect::dialog::find(&rules, Some("claude"), &screen, detail).expect("the dialog");
    let subject = d.subject.clone();
    let info = DialogInfo {
        id: 1,
        rule: d.rule,
        subject: d.subject,
        fingerprint: d.fingerprint,
        screen_rows: d.screen_rows,
        answers: vec!["approve".into(), "deny".into()],
        ..Default::default()
    };
    update(&mut m, st("a", ProcessState::Waiting, 1_000), now);
    update(
        &mut m,
        waiting_at("a", "permission", 1_000, Some(info)),
        now,
    );
    let p = m.pane("a").expect("pane");
    let texts: Vec<String> = p.term.screen().rows(0, cols).collect();
    let pane = crate::tui::window::shown_rows(p, 6)
        .into_iter()
        .map(|r| texts[usize::from(r)].trim_end().to_owned())
        .collect();
    update(&mut m, press(KeyCode::Char('i')), now);
    let text = draw(&mut m, now);
    // The inbox's rows under the dialog's header (the list's row above
    // names the subject), inside its borders.
    let inbox = text
        .lines()
        .filter_map(|l| l.split_once('│').map(|(_, rest)| rest.to_owned()))
        .skip_while(|l| !l.contains("a · claude.permission · approve, deny"))
        .collect();
    Seen {
        inbox,
        subject,
        pane,
    }
}

/// Where `s` is in `rows`, which must have it.
fn row_of(rows: &[String], s: &str) -> usize {
    rows.iter()
        .position(|l| l.contains(s))
        .unwrap_or_else(|| panic!("no {s:?} in\n{}", rows.join("\n")))
}

/// Claude Code asks "Do you want to proceed?" under the command it would
/// run: the inbox shows the command too (it began at the question), read
/// from the real screen with the real rules, as a supervisor reports it.
#[test]
fn a_permission_is_shown_with_the_command_it_asks_about() {
    let frame = include_str!("../../../tests/fixtures/screens/claude330_permission/frame.txt");
    let Seen { inbox, subject, .. } = inbox_of(frame, crate::detect::Detail::Permission);
    let command = "for i in 1 2 3 4 5; do echo step $i; sleep 1.5; done";
    assert_eq!(subject.as_deref(), Some(command));
    let at = |s: &str| row_of(&inbox, s);
    assert!(at(command) < at("Do you want to proceed?"));
    assert!(at("Do you want to proceed?") < at("3. No"));
    // The dashed rules around the command say nothing.
    assert!(
        !inbox.iter().any(|l| l.contains("╌╌╌╌")),
        "{}",
        inbox.join("\n")
    );
}

/// An edit names its file in its question too (`make this edit to
/// hello.py?`): the inbox shows the file and the diff above the question,
/// where it began at the question and showed no diff.
#[test]
fn an_edit_permission_is_shown_with_its_diff() {
    let frame = include_str!("../../../tests/fixtures/screens/claude_edit_permission/frame.txt");
    let Seen {
        inbox,
        subject,
        pane,
    } = inbox_of(frame, crate::detect::Detail::Permission);
    assert_eq!(subject.as_deref(), Some("hello.py"));
    let at = |s: &str| row_of(&inbox, s);
    assert!(at("hello.py") < at(r#"1 -print("hello")"#));
    assert!(at(r#"1 -print("hello")"#) < at(r#"1 +print("hello, world")"#));
    assert!(at(r#"1 +print("hello, world")"#) < at("Do you want to make this edit"));
    assert!(at("Do you want to make this edit") < at("3. No"));
    // Not the conversation above the dialog's box.
    assert!(
        !inbox.iter().any(|l| l.contains("Update(hello.py)")),
        "{}",
        inbox.join("\n")
    );
    // A pane too short for all of it: the file, the question and its
    // options; the diff only where there is room.
    assert_eq!(
        pane,
        [
            " hello.py",
            " Do you want to make this edit to hello.py?",
            " ❯ 1. Yes",
            "   2. Yes, allow all edits during this session (shift+tab)",
            "   3. No",
            " Esc to cancel · Tab to amend",
        ],
        "{pane:#?}"
    );
}

/// Claude Code's folder trust in a pane of 6 rows (an 80x24 dashboard's):
/// the folder, the question's first row, and the choices down, its long
/// question giving way (the pane showed the question's paragraph and
/// never the choices).
#[test]
fn a_folder_trust_in_a_small_pane_shows_its_choices() {
    let frame = include_str!("../../../tests/fixtures/screens/claude330_folder_trust/frame.txt");
    let Seen { pane, .. } = inbox_of(frame, crate::detect::Detail::FolderTrust);
    assert!(pane.iter().any(|r| r.contains("❯ No, exit")), "{pane:#?}");
    assert!(
        pane.iter().any(|r| r.contains("Yes, I trust this folder")),
        "{pane:#?}"
    );
    assert!(
        pane.iter().any(|r| r.contains("Quick safety check")),
        "{pane:#?}"
    );
    assert!(pane.iter().any(|r| r.ends_with("/proj")), "{pane:#?}");
}

/// Codex's command approval in a pane too short for it: its selected
/// option, `› 1. Yes, proceed (y)`, is among the choices kept (read as
/// no choice, it gave way with the question, and the pane showed only
/// options 2 and 3).
#[test]
fn codexs_selected_option_is_kept_in_a_small_pane() {
    let frame = include_str!("../../../tests/fixtures/screens/codex_permission/frame.txt");
    let now = Instant::now();
    let mut m = scene(&["a"], &[], now);
    let p = m.pane_mut("a").expect("pane");
    p.term.resize(crate::protocol::Size {
        cols: 120,
        rows: 28,
    });
    let output = frame.trim_end_matches('\n').replace('\n', "\r\n");
    update(
        &mut m,
        Msg::Session("a".into(), SessionMsg::Output(output.into_bytes())),
        now,
    );
    let rules = crate::detect::rules::builtin();
    let screen = m.pane("a").expect("pane").term.screen().clone();
    let d = crate::detect::dialog::find(
        &rules,
        Some("codex"),
        &screen,
        crate::detect::Detail::Permission,
    )
    .expect("the dialog");
    let info = DialogInfo {
        id: 1,
        rule: d.rule,
        subject: d.subject,
        fingerprint: d.fingerprint,
        screen_rows: d.screen_rows,
        ..Default::default()
    };
    update(&mut m, st("a", ProcessState::Waiting, 1_000), now);
    update(
        &mut m,
        waiting_at("a", "permission", 1_000, Some(info)),
        now,
    );
    let p = m.pane("a").expect("pane");
    let texts: Vec<String> = p.term.screen().rows(0, 120).collect();
    let pane: Vec<String> = crate::tui::window::shown_rows(p, 5)
        .into_iter()
        .map(|r| texts[usize::from(r)].trim_end().to_owned())
        .collect();
    assert!(
        pane.iter().any(|r| r.contains("› 1. Yes, proceed (y)")),
        "{pane:#?}"
    );
    assert!(pane.iter().any(|r| r.contains("3. No")), "{pane:#?}");
}

/// An option Claude Code wrapped under itself at 80 columns is wrapped
/// once in the inbox, not each of its rows again (a word of the first
/// was left on a row alone). The edit dialog of the corpus's fixture,
/// its second option as Claude Code 2.1.330 words and wraps it at 80.
#[test]
fn an_option_the_agent_wrapped_is_wrapped_once() {
    let frame = include_str!("../../../tests/fixtures/screens/claude_edit_permission/frame.txt")
        .replace(
            "   2. Yes, allow all edits during this session (shift+tab)",
            "   2. Yes, and switch to accept edits (auto-approve file edits and common file\n      \
             commands) for this session (shift+tab)",
        );
    let Seen { inbox, .. } = inbox_at(&frame, crate::detect::Detail::Permission, 80, (80, 24));
    let at = |s: &str| row_of(&inbox, s);
    let second = at("2. Yes, and switch");
    assert!(
        inbox[second + 1].trim_start().starts_with("file commands)"),
        "{}",
        inbox.join("\n")
    );
    assert!(
        !inbox
            .iter()
            .any(|l| l.trim().trim_end_matches('│').trim() == "file")
    );
}

/// `y` pressed twice on one session that asks twice in a row (a deploy
/// script: staging, then production; Claude Code: one command, then the
/// next): the second must not approve the next question unread. Its
/// dialog going is said as such, and the new one, once it has stood a
/// moment (or on the key pressed again), is answered.
#[test]
fn a_second_y_does_not_answer_the_next_question_of_the_same_session() {
    let now = Instant::now();
    let mut m = opened(&["a"], &[("a", "input", 3_000)], now);
    let fx = update(&mut m, press(KeyCode::Char('y')), now);
    assert_eq!(acts(&fx).len(), 1);
    let done = Acted {
        ok: true,
        ..Default::default()
    };
    update(
        &mut m,
        Msg::Session("a".into(), SessionMsg::Acted(Box::new(done))),
        now,
    );
    // Answered: the dialog goes, and a key now says why it does nothing.
    let t1 = now + Duration::from_millis(100);
    update(&mut m, waiting_at("a", "input", 3_000, None), t1);
    draw(&mut m, t1);
    let fx = update(&mut m, press(KeyCode::Char('y')), t1);
    assert!(acts(&fx).is_empty(), "{fx:?}");
    assert!(
        said(&m).contains("'a' was answered just now"),
        "{}",
        said(&m)
    );
    // The next question, in the same row: not answered by a key at once.
    let t2 = now + Duration::from_millis(400);
    let next = dialog("claude.input", "deploy to PRODUCTION", 2);
    update(&mut m, waiting_at("a", "input", 0, Some(next)), t2);
    draw(&mut m, t2);
    let fx = update(
        &mut m,
        press(KeyCode::Char('y')),
        t2 + Duration::from_millis(300),
    );
    assert!(acts(&fx).is_empty(), "{fx:?}");
    assert!(
        said(&m).contains("'a' asks something new just now"),
        "{}",
        said(&m)
    );
    // Pressed again, it is meant for what is shown: dialog 2.
    let fx = update(
        &mut m,
        press(KeyCode::Char('y')),
        t2 + Duration::from_millis(400),
    );
    assert_eq!(acts(&fx)[0].1.dialog, Some(2), "{fx:?}");
    // The same dialog drawn again (its rows changed, its number kept) is
    // no new question.
    let mut m = opened(&["a"], &[("a", "input", 3_000)], now);
    let mut same = dialog("claude.input", "cmd of a", 1);
    same.fingerprint = "other rows".into();
    update(&mut m, waiting_at("a", "input", 3_000, Some(same)), t1);
    draw(&mut m, t1);
    let fx = update(&mut m, press(KeyCode::Char('y')), t1);
    assert_eq!(acts(&fx).len(), 1, "{}", said(&m));
}

/// Too narrow for all the answers, the footer offers them in order as far
/// as they fit: never `n deny` without `y approve` (40 columns dropped
/// `y approve`, which did not fit, and kept the shorter `n deny`).
#[test]
fn a_narrow_footer_offers_the_answers_in_order() {
    let now = Instant::now();
    let mut m = opened(&["a", "b"], &[("b", "permission", 5_000)], now);
    let footer = |m: &mut Model| draw(m, now).lines().last().unwrap_or_default().to_owned();
    let wide = footer(&mut m);
    assert!(
        wide.contains("y approve") && wide.contains("n deny"),
        "{wide}"
    );
    for cols in [40, 44, 48] {
        update(&mut m, Msg::Resize(cols, 12), now);
        let narrow = footer(&mut m);
        assert!(
            narrow.contains("y approve") || !narrow.contains("n deny"),
            "at {cols}: {narrow}"
        );
        assert!(narrow.contains("Esc close"), "at {cols}: {narrow}");
    }
}

/// At 80 columns the footer of Claude Code's edit approval offers every
/// answer, its three options' digits too: `1 needs you`, which the box's
/// title says already, left no room for `1-3 choose`.
#[test]
fn an_edit_approval_at_80_columns_offers_every_answer() {
    let now = Instant::now();
    let mut m = scene(&["cc"], &[], now);
    let options = ["Yes", "Yes, and switch to accept edits", "No"]
        .iter()
        .zip(1..)
        .map(|(label, number)| crate::protocol::DialogOption {
            number,
            label: (*label).into(),
        })
        .collect();
    let d = DialogInfo {
        answers: ["approve", "deny", "always", "choose"]
            .map(Into::into)
            .to_vec(),
        options,
        ..dialog("claude.permission", "hello.py", 1)
    };
    update(&mut m, st("cc", ProcessState::Waiting, 9_000), now);
    update(&mut m, waiting_at("cc", "permission", 9_000, Some(d)), now);
    update(&mut m, press(KeyCode::Char('i')), now);
    let screen = draw(&mut m, now);
    assert!(screen.contains("needs you · 1"), "{screen}");
    let footer = screen.lines().last().unwrap_or_default();
    for hint in ["y approve", "n deny", "a always", "1-3 choose", "Esc close"] {
        assert!(footer.contains(hint), "{hint}: {footer}");
    }
}

/// An empty inbox offers only to close, and a `y` there says why it does
/// nothing (it offered `y approve` and did nothing, silently).
#[test]
fn an_empty_inbox_offers_only_to_close_and_says_why_y_does_nothing() {
    let now = Instant::now();
    let mut m = opened(&["a"], &[], now);
    let screen = draw(&mut m, now);
    let footer = screen.lines().last().unwrap_or_default().to_owned();
    assert!(footer.contains("Esc close"), "{footer}");
    assert!(!footer.contains("approve"), "{footer}");
    let fx = update(&mut m, press(KeyCode::Char('y')), now);
    assert!(acts(&fx).is_empty());
    assert_eq!(said(&m), "nothing to approve: no session is waiting");
    let screen = draw(&mut m, now);
    assert!(
        screen.contains("nothing to approve: no session is waiting"),
        "{screen}"
    );
}

/// A host whose link is down may only be stalled: an answer sent into it
/// would be acted on whenever it came back. None is sent, and the inbox
/// says why.
#[test]
fn a_session_on_an_unreachable_host_is_not_sent_an_answer() {
    let now = Instant::now();
    let mut m = opened(&["box:a"], &[("box:a", "permission", 3_000)], now);
    m.hosts_down.insert("box".into(), (0, now));
    let fx = update(&mut m, press(KeyCode::Char('y')), now);
    assert!(acts(&fx).is_empty(), "{fx:?}");
    assert_eq!(
        said(&m),
        "not answered: box is unreachable; nothing was sent"
    );
}

/// A session on a host that dropped: its row says so, and how long it has
/// waited stops where the host was last heard from, as its pane's timer
/// does.
#[test]
fn a_row_of_an_unreachable_host_says_so_and_stops_counting() {
    let now = Instant::now();
    let mut m = opened(&["box:a"], &[("box:a", "permission", 3_000)], now);
    let since = crate::clock::unix_ms();
    m.hosts_down.insert("box".into(), (since, now));
    let later = now + Duration::from_secs(10);
    let screen = draw(&mut m, later);
    let row = screen
        .lines()
        .find(|l| l.contains("▸ a "))
        .unwrap_or_else(|| panic!("{screen}"));
    let down = format!(
        "box unreachable since {}",
        crate::clock::local_time_of_day(since)
    );
    assert!(row.contains(&down), "{row}");
    assert!(row.contains(" 3s "), "{row}");
    // Back up: the question again, and the time as it runs.
    m.hosts_down.clear();
    let screen = draw(&mut m, later);
    assert!(!screen.contains("unreachable"), "{screen}");
    assert!(screen.contains(" 13s "), "{screen}");
}

#[test]
fn an_empty_inbox_says_so_whole_on_a_narrow_terminal() {
    let now = Instant::now();
    let mut m = scene(&["a"], &[], now);
    m.size = (50, 14);
    update(&mut m, press(KeyCode::Char('i')), now);
    let screen = draw(&mut m, now);
    // Its words, wrapped inside the box, none cut at its edge.
    let words: Vec<&str> = screen
        .lines()
        .map(|l| l.trim_matches(|c: char| c == '│' || c.is_whitespace()))
        .skip_while(|l| !l.starts_with("Nothing needs you"))
        .take(2)
        .collect();
    assert_eq!(
        words.join(" "),
        "Nothing needs you: no session is waiting for an answer.",
        "{screen}"
    );
}

/// An id longer than 24 is whole in the inbox at 80 columns: it is what
/// `hm approve` takes, and it was cut to 24 with room to spare.
#[test]
fn a_long_id_is_whole_in_the_inbox_at_80_columns() {
    let now = Instant::now();
    let id = "frontend-refactor-of-the-parser";
    let mut m = opened(&[id], &[(id, "permission", 3_000)], now);
    let text = draw(&mut m, now);
    let row = text
        .lines()
        .find(|l| l.contains("frontend-"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains(&format!("▸ {id}  ")), "{text}");
    // The subject keeps its first columns.
    assert!(row.contains("cmd of"), "{text}");
}

/// What an answer came to is said under the inbox's list, once: the
/// footer said it again, and at 80 columns, too long for the footer, it
/// went above it over the box's last rows. Closed, the footer says it.
#[test]
fn an_answer_is_said_once_in_the_inbox_and_in_the_footer_after() {
    let now = Instant::now();
    let mut m = opened(&["a", "b"], &[("a", "permission", 3_000)], now);
    update(&mut m, press(KeyCode::Char('y')), now);
    let subject = "cargo test --workspace --all-features -- --include-ignored";
    approved(&mut m, Some(subject), now);
    let text = said(&m);
    assert!(text.chars().count() > 60, "long enough to wrap: {text}");
    let screen = draw(&mut m, now);
    assert_eq!(
        screen.matches("approved claude.permission").count(),
        1,
        "{screen}"
    );
    update(&mut m, press(KeyCode::Esc), now);
    assert_eq!(m.mode, Mode::Grid);
    let screen = draw(&mut m, now);
    assert!(
        screen.contains("approved claude.permission in 'a'"),
        "{screen}"
    );
}

/// The HOST column is there while another machine's session asks, and
/// not with hosts configured and only local ones asking: `local` on
/// every row took the subject's room at 80 columns.
#[test]
fn the_host_column_is_there_only_for_another_machines_session() {
    let now = Instant::now();
    let mut m = opened(&["a"], &[("a", "permission", 3_000)], now);
    m.hosts = vec!["box".into()];
    let screen = draw(&mut m, now);
    assert!(
        screen.contains("ID") && !screen.contains("HOST"),
        "{screen}"
    );
    let mut m = opened(
        &["a", "box:b"],
        &[("a", "permission", 3_000), ("box:b", "permission", 2_000)],
        now,
    );
    m.hosts = vec!["box".into()];
    let screen = draw(&mut m, now);
    assert!(
        screen.contains("HOST") && screen.contains("local"),
        "{screen}"
    );
}

/// What a boxed dialog says, read off the screen without a subject, is
/// listed without the box's sides: Gemini CLI's row read `│ Apply this
/// change? │`.
#[test]
fn a_line_read_off_a_box_loses_its_sides() {
    let now = Instant::now();
    let mut m = scene(&["g"], &[], now);
    update(&mut m, st("g", ProcessState::Waiting, 0), now);
    let mut r: StateReport = serde_json::from_value(serde_json::json!({
        "state": "waiting",
        "state_byte": ProcessState::Waiting.as_byte(),
        "primary": "waiting",
        "detail": "permission",
        "health": "alive",
        "agent": "gemini",
        "state_ms": 0,
        "signals": [{"source": "screen", "rule": "gemini.edit",
                     "text": "│ Apply this change?                     │", "since_ms": 0}],
    }))
    .expect("a state report");
    r.dialog = None;
    update(&mut m, Msg::Session("g".into(), SessionMsg::State(r)), now);
    let rows = super::rows(&m, now);
    assert_eq!(rows[0].subject.as_deref(), Some("Apply this change?"));
}
