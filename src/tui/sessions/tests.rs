//! Session handling driven through `update`, as the run loop drives it.

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use crate::classify::ProcessState;
use crate::protocol::Size;
use crate::tui::layout::placements;
use crate::tui::model::{Effect, Link, Mode, Model, Msg, NewStep, Pane, SessionMsg};
use crate::tui::update::harness::*;
use crate::tui::update::update;

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
fn a_session_being_started_is_left_to_its_own_connection() {
    let now = Instant::now();
    let mut m = model(160, 49);
    m.shell = "/bin/sh".into();
    update(&mut m, press(KeyCode::Char('n')), now);
    update(&mut m, press(KeyCode::Enter), now);
    update(&mut m, press(KeyCode::Enter), now);
    // The scan finds it before the start says it is serving.
    let fx = update(&mut m, Msg::Found(vec!["sh".into()]), now);
    assert!(fx.is_empty(), "{fx:?}");
    let fx = update(&mut m, Msg::Started("sh".into(), Ok(None)), now);
    assert_eq!(fx, vec![Effect::ConnectStarted("sh".into())]);
    // Once started, it is like any other.
    let fx = update(&mut m, Msg::Found(vec!["sh".into()]), now);
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
        if refused {
            assert!(notice(&m).contains("pid 42"), "{}", notice(&m));
        }
        // Esc takes the form's complaint with it.
        update(&mut m, press(KeyCode::Esc), now);
        assert_eq!(notice(&m), "");
    }
    // A session of b's id found running replaces the pane.
    let fx = update(&mut m, Msg::Found(vec!["a".into(), "b".into()]), now);
    assert_eq!(fx, vec![Effect::Connect("b".into())]);
    assert_eq!(m.pane("b").expect("pane").link, Link::Connecting);
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
    // Here, x asks to stop the program (`hm kill`); n keeps it.
    update(&mut m, press(KeyCode::Char('x')), now);
    assert_eq!(m.mode, Mode::ConfirmKill("o".into()));
    update(&mut m, press(KeyCode::Char('n')), now);
    assert_eq!(m.visible_ids(), ["a", "o"]);
    update(&mut m, press(KeyCode::Char('x')), now);
    let fx = update(&mut m, press(KeyCode::Char('y')), now);
    assert_eq!(fx, vec![Effect::KillOrphan("o".into())]);
    assert!(
        notice(&m).starts_with("stopping 'o' (pid 77)"),
        "{}",
        notice(&m)
    );
    // Gone: the pane goes as an ended one's does.
    update(&mut m, Msg::Orphans(Vec::new()), now);
    update(
        &mut m,
        Msg::Session("o".into(), SessionMsg::Closed(None)),
        now,
    );
    update(&mut m, press(KeyCode::Char('x')), now);
    update(&mut m, press(KeyCode::Char('y')), now);
    assert_eq!(m.visible_ids(), ["a"]);
}

#[test]
fn another_machines_orphan_is_cleared_and_stays_cleared_while_it_is_one() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["a"], now);
    update(&mut m, Msg::Orphans(vec!["box:o".into()]), now);
    update(
        &mut m,
        Msg::Session("box:o".into(), SessionMsg::Closed(Some(77))),
        now,
    );
    m.selected = Some("box:o".into());
    update(&mut m, press(KeyCode::Char('x')), now);
    assert_eq!(m.visible_ids(), ["a"]);
    let fx = update(&mut m, Msg::Orphans(vec!["box:o".into()]), now);
    assert!(fx.is_empty() && m.pane("box:o").is_none(), "stays cleared");
    // No longer an orphan, then one again (another program): shown.
    update(&mut m, Msg::Orphans(Vec::new()), now);
    update(&mut m, Msg::Orphans(vec!["box:o".into()]), now);
    assert!(m.pane("box:o").is_some());
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
    assert!(notice.contains("hm kill a stops it"), "{notice}");
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
    update(&mut m, press(KeyCode::Char('x')), now);
    let fx = update(&mut m, press(KeyCode::Char('y')), now);
    assert_eq!(kills(&fx), 0, "the program is not the dashboard's to kill");
    assert_eq!(m.visible_ids(), ["b"]);
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
    assert!(notice(&m).contains("hm kill a stops it"), "{}", notice(&m));
    update(
        &mut m,
        Msg::Session("a".into(), SessionMsg::Closed(None)),
        now,
    );
    assert_eq!(notice(&m), "");
    assert_eq!(m.pane("a").and_then(|p| p.orphan), None);
}

/// The record of `id`, which ran `true` and exited 0 at `ended_unix_ms`.
fn record(id: &str, ended_unix_ms: u64) -> crate::ended::Ended {
    crate::ended::Ended {
        id: id.into(),
        command: vec!["true".into()],
        workdir: "/".into(),
        classifier: "simple".into(),
        started_unix_ms: 0,
        ended_unix_ms,
        exit_code: 0,
        last_lines: vec![],
        label: None,
        cols: 80,
        rows: 24,
        killed: false,
    }
}

/// The running come first in the grid, each group by id: a day's ended
/// runs (a socket dir keeps 50 records) sorting among them by id pushed
/// the sessions still running onto later pages. One that ends goes after
/// them.
#[test]
fn the_running_fill_the_first_pages_and_the_ended_follow() {
    let now = Instant::now();
    let mut m = model(80, 25);
    let running: Vec<String> = (0..6).map(|i| format!("b{i}")).collect();
    let refs: Vec<&str> = running.iter().map(String::as_str).collect();
    live(&mut m, &refs, now);
    let ended: Vec<_> = (0..20)
        .map(|i| record(&format!("a{i:02}"), 1_000 + i))
        .collect();
    update(&mut m, Msg::Ended(ended), now);
    let p = placements(&m);
    assert!(p.pages > 1, "{p:?}");
    let first: Vec<&str> = p.rects.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(first[..6], refs[..], "{first:?}");
    assert_eq!(first[6], "a00");

    update(&mut m, Msg::Session("b1".into(), SessionMsg::Exit(0)), now);
    let order = m.visible_ids();
    assert_eq!(order[..5], ["b0", "b2", "b3", "b4", "b5"]);
    assert_eq!(order[5..8], ["a00", "a01", "a02"]);
    assert_eq!(order.last().map(String::as_str), Some("b1"));
}

/// A session that ended while the dashboard was open, before it ever saw
/// it run (a command that fails at once), is told as one seen ending:
/// marked, with the bell and the notification. One that ended before
/// the dashboard opened is not news.
#[test]
fn a_session_ending_before_it_was_seen_running_is_told_if_the_dashboard_was_open() {
    let now = Instant::now();
    let mut m = model(160, 49);
    m.bell = true;
    m.desktop = true;
    m.opened_unix_ms = 1_000_000;
    live(&mut m, &["a"], now);
    let failed = crate::ended::Ended {
        exit_code: 3,
        ..record("quick", 1_000_500)
    };
    let listed = vec![record("old", 999_000), failed];
    let fx = update(&mut m, Msg::Ended(listed.clone()), now);
    assert!(m.pane("quick").expect("pane").attention);
    assert!(!m.pane("old").expect("pane").attention);
    assert_eq!(
        fx.iter()
            .filter(|e| matches!(e, Effect::Bell | Effect::Desktop(_)))
            .collect::<Vec<_>>(),
        [
            &Effect::Bell,
            &Effect::Desktop("quick: exited with code 3".into())
        ]
    );
    // Listed again: no news.
    let fx = update(&mut m, Msg::Ended(listed), now);
    assert!(fx.is_empty(), "{fx:?}");
}

/// Focused when `hm kill` ends it elsewhere: the footer first says only
/// how it exited, then, once its record says someone ended it, says so in
/// `hm kill`'s words.
#[test]
fn the_footer_says_killed_once_the_record_says_so() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["a"], now);
    m.mode = Mode::Focus("a".into());
    update(&mut m, Msg::Session("a".into(), SessionMsg::Exit(143)), now);
    assert_eq!(notice(&m), "session 'a' exited with code 143");
    let killed = crate::ended::Ended {
        exit_code: 143,
        killed: true,
        ..record("a", crate::clock::unix_ms())
    };
    update(&mut m, Msg::Ended(vec![killed]), now);
    assert_eq!(notice(&m), "session 'a' killed by SIGTERM (exit code 143)");
}

/// A session that ended after the dashboard was last quit asks for a
/// look when the dashboard comes back, as one seen ending would; one that
/// ended before it was quit had been seen. With no record of the
/// dashboard's last run (the first here), a failure asks for a look (it
/// went unmarked, uncounted, skipped by Tab); an end asked for or a
/// success is not claimed.
#[test]
fn sessions_that_ended_since_the_dashboard_was_left_are_marked() {
    let now = Instant::now();
    let left = crate::clock::unix_ms() - 60_000;
    let cases = [
        (Some(left), (false, true, true, false)),
        (None, (false, false, true, false)),
    ];
    for (last_run, marked) in cases {
        let mut m = model(160, 49);
        m.left_unix_ms = last_run;
        // `a-old` first: the selected pane is looked at already.
        let failed = crate::ended::Ended {
            exit_code: 3,
            ..record("c-failed", left + 2_000)
        };
        let killed = crate::ended::Ended {
            exit_code: 143,
            killed: true,
            ..record("d-killed", left - 2_000)
        };
        let records = vec![
            record("a-old", left - 1_000),
            record("b-new", left + 1_000),
            failed,
            killed,
        ];
        update(&mut m, Msg::Ended(records), now);
        let seen = |id: &str| m.pane(id).is_some_and(|p| p.attention);
        assert_eq!(
            (
                seen("a-old"),
                seen("b-new"),
                seen("c-failed"),
                seen("d-killed")
            ),
            marked,
            "{last_run:?}"
        );
    }
}

/// The `●` marks left when the dashboard was quit come back with their
/// panes: a running session's with its first INFO, unless it is a new
/// session under the id (started after the quit); an ended one's with its
/// record.
#[test]
fn marks_left_when_the_dashboard_was_quit_come_back() {
    let now = Instant::now();
    let left = crate::clock::unix_ms() - 60_000;
    let mut m = model(160, 49);
    m.left_unix_ms = Some(left);
    m.marked_before = ["a-sel", "b-same", "c-new", "d-ended"]
        .map(String::from)
        .into();
    live(&mut m, &["a-sel", "b-same", "c-new", "e-unmarked"], now);
    for (id, started) in [
        ("a-sel", left - 5_000),
        ("b-same", left - 5_000),
        ("c-new", left + 5_000),
        ("e-unmarked", left - 5_000),
    ] {
        let info = crate::protocol::Info {
            id: id.into(),
            started_unix_ms: started,
            ..Default::default()
        };
        update(
            &mut m,
            Msg::Session(id.into(), SessionMsg::Info(Box::new(info))),
            now,
        );
    }
    update(
        &mut m,
        Msg::Ended(vec![record("d-ended", left - 1_000)]),
        now,
    );
    let marked = |m: &Model| -> Vec<String> {
        m.panes
            .iter()
            .filter(|p| p.attention)
            .map(|p| p.id.clone())
            .collect()
    };
    // The selected pane is looked at once it has been for a moment.
    assert_eq!(sel(&m), "a-sel");
    assert_eq!(marked(&m), ["a-sel", "b-same", "d-ended"]);
    update(&mut m, Msg::Tick, now + crate::tui::model::LOOK);
    assert_eq!(marked(&m), ["b-same", "d-ended"]);
    assert!(m.marked_before.is_empty(), "{:?}", m.marked_before);
}

#[test]
fn sessions_that_ended_unseen_get_a_pane_that_x_forgets_once_asked_and_r_restarts() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["a"], now);
    let record = |id: &str| crate::ended::Ended {
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
        killed: false,
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
    // `x` asks first: forgetting deletes what `hm restart` would need.
    let fx = update(&mut m, press(KeyCode::Char('x')), now);
    assert_eq!(m.mode, Mode::ConfirmForget("b".into()));
    assert!(!fx.contains(&Effect::Forget("b".into())), "{fx:?}");
    let fx = update(&mut m, press(KeyCode::Char('n')), now);
    assert_eq!(m.mode, Mode::Grid);
    assert!(!fx.contains(&Effect::Forget("b".into())), "{fx:?}");
    assert!(m.pane("b").is_some());
    update(&mut m, press(KeyCode::Char('x')), now);
    let fx = update(&mut m, press(KeyCode::Char('y')), now);
    // (The layout changed: the others may be resized too.)
    assert!(fx.contains(&Effect::Forget("b".into())), "{fx:?}");
    assert!(m.pane("b").is_none());
    m.selected = Some("c".into());
    // Asked first: its command does again what it did.
    let fx = update(&mut m, press(KeyCode::Char('r')), now);
    assert_eq!(m.mode, Mode::ConfirmRestart("c".into()));
    assert!(fx.is_empty(), "{fx:?}");
    let fx = update(&mut m, press(KeyCode::Char('n')), now);
    assert_eq!(m.mode, Mode::Grid);
    assert!(fx.is_empty(), "{fx:?}");
    assert!(m.pane("c").is_some());
    update(&mut m, press(KeyCode::Char('r')), now);
    let fx = update(&mut m, press(KeyCode::Char('y')), now);
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

/// `hm rm`, `hm clean` (and `x` in another dashboard) remove the record:
/// the pane goes at the next scan. A session whose supervisor died
/// leaves no record, and its pane stays; so does one on a host that
/// cannot be looked at now.
#[test]
fn a_pane_goes_when_its_sessions_record_is_forgotten_elsewhere() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["a", "crashed", "h:r"], now);
    let record = |id: &str| crate::ended::Ended {
        id: id.into(),
        command: vec!["true".into()],
        workdir: "/".into(),
        classifier: "simple".into(),
        started_unix_ms: 0,
        ended_unix_ms: crate::clock::unix_ms(),
        exit_code: 0,
        last_lines: Vec::new(),
        label: None,
        cols: 80,
        rows: 24,
        killed: false,
    };
    for id in ["a", "h:r"] {
        update(&mut m, Msg::Session(id.into(), SessionMsg::Exit(0)), now);
        update(
            &mut m,
            Msg::Session(id.into(), SessionMsg::Closed(None)),
            now,
        );
    }
    update(
        &mut m,
        Msg::Session("crashed".into(), SessionMsg::Closed(None)),
        now,
    );
    // The records appear, then the ended ones unseen ("b") get panes too.
    update(
        &mut m,
        Msg::Ended(vec![record("a"), record("b"), record("h:r")]),
        now,
    );
    assert!(
        ["a", "b", "crashed", "h:r"]
            .iter()
            .all(|id| m.pane(id).is_some())
    );
    // `hm clean` here; the host "h" cannot be reached.
    update(
        &mut m,
        Msg::Hosts {
            problems: [("h".to_string(), "h: unreachable".to_string())].into(),
            down: Default::default(),
            news: Vec::new(),
        },
        now,
    );
    update(&mut m, Msg::Ended(Vec::new()), now);
    assert!(m.pane("a").is_none() && m.pane("b").is_none());
    assert!(m.pane("crashed").is_some(), "no record was ever seen");
    assert!(m.pane("h:r").is_some(), "its host is not looked at");
    // Back, and its record gone there too.
    update(
        &mut m,
        Msg::Hosts {
            problems: Default::default(),
            down: Default::default(),
            news: Vec::new(),
        },
        now,
    );
    update(&mut m, Msg::Ended(Vec::new()), now);
    assert!(m.pane("h:r").is_none());
    // A socket dir keeps the newest records only: one trimmed off the end
    // of a full list was not forgotten, and its pane stays.
    let mut old = record("old");
    old.ended_unix_ms -= 60_000;
    update(&mut m, Msg::Ended(vec![old]), now);
    assert!(m.pane("old").is_some());
    let full: Vec<_> = (0..crate::ended::KEEP)
        .map(|i| record(&format!("n{i}")))
        .collect();
    update(&mut m, Msg::Ended(full.clone()), now);
    assert!(m.pane("old").is_some(), "trimmed, not forgotten");
    // Trimmed beside one that ended in the same ms, which is kept.
    let mut twin = record("twin");
    twin.ended_unix_ms = full[0].ended_unix_ms - 30_000;
    let mut with_twin = full.clone();
    with_twin.push(twin.clone());
    update(&mut m, Msg::Ended(with_twin), now);
    let mut tied = full[1..].to_vec();
    let mut kept = twin.clone();
    kept.id = "twin0".into();
    tied.push(kept);
    update(&mut m, Msg::Ended(tied), now);
    assert!(
        m.pane("twin").is_some(),
        "trimmed at the same ms, not forgotten"
    );
    // One of the newest gone from a full list was forgotten.
    update(&mut m, Msg::Ended(full[1..].to_vec()), now);
    assert!(m.pane("n0").is_none());
}

/// A session removed (`hm rm`) before any look listed its record
/// (`hm wait`, then `hm rm`, within the scan's second) had no record seen,
/// and its pane stayed for good. Once its record has had time to be
/// written, a look that does not list it forgets the pane; one trimmed
/// off a full list is kept, as above.
#[test]
fn a_pane_goes_when_its_session_is_removed_before_its_record_is_seen() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut m = model(160, 49);
    live(&mut m, &["quick", "kept"], t0);
    for id in ["quick", "kept"] {
        update(&mut m, Msg::Session(id.into(), SessionMsg::Exit(6)), at(10));
        update(
            &mut m,
            Msg::Session(id.into(), SessionMsg::Closed(None)),
            at(10),
        );
    }
    // Looked at before its record was written: it stays.
    update(&mut m, Msg::Ended(Vec::new()), at(500));
    assert!(m.pane("quick").is_some());
    // Later, still not listed: removed meanwhile.
    let newer = |i: usize| crate::ended::Ended {
        id: format!("n{i}"),
        command: vec!["true".into()],
        workdir: "/".into(),
        classifier: "simple".into(),
        started_unix_ms: 0,
        ended_unix_ms: crate::clock::unix_ms() + 1000,
        exit_code: 0,
        last_lines: Vec::new(),
        label: None,
        cols: 80,
        rows: 24,
        killed: false,
    };
    // A full list of newer records: "kept" may have been trimmed.
    let full: Vec<_> = (0..crate::ended::KEEP).map(newer).collect();
    update(&mut m, Msg::Ended(full), at(2500));
    assert!(m.pane("kept").is_some(), "trimmed, not forgotten");
    update(&mut m, Msg::Ended(Vec::new()), at(2600));
    assert!(m.pane("quick").is_none() && m.pane("kept").is_none());
}

/// A session held at another size by an attach elsewhere is held no
/// more once it ends: its pane kept saying "100x29 held".
#[test]
fn an_ended_session_is_not_held() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["vim"], now);
    m.panes.iter_mut().for_each(|p| p.held = true);
    update(&mut m, Msg::Session("vim".into(), SessionMsg::Exit(0)), now);
    assert!(m.pane("vim").is_some_and(|p| !p.held));
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

/// Killed from this dashboard: its end is what was asked for, not news,
/// though the selection moved on while it took its grace period.
#[test]
fn a_session_killed_here_is_not_marked_when_it_ends() {
    let now = Instant::now();
    let mut m = model(160, 49);
    m.bell = true;
    live(&mut m, &["a", "b"], now);
    assert_eq!(sel(&m), "a");
    update(&mut m, press(KeyCode::Char('x')), now);
    let fx = update(&mut m, press(KeyCode::Char('y')), now);
    assert_eq!(kills(&fx), 1);
    update(&mut m, press(KeyCode::Right), now);
    assert_eq!(sel(&m), "b");
    let fx = update(&mut m, Msg::Session("a".into(), SessionMsg::Exit(143)), now);
    assert!(!m.pane("a").expect("pane").attention);
    assert!(!fx.contains(&Effect::Bell), "{fx:?}");
    // The footer answers the kill.
    assert_eq!(notice(&m), "session 'a' killed by SIGTERM (exit code 143)");
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

/// A dashboard connecting to a session that waits hears STATUS before the
/// pushed state that says at what: the notification says it all the same
/// (`b: waiting · permission`, not `b: waiting`), once; without a push it
/// goes out plain half a second later.
#[test]
fn a_waiting_notification_says_at_what_though_status_came_first() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut m = model(160, 49);
    m.desktop = true;
    live(&mut m, &["a", "b", "c"], t0);
    let pushed = |id: &str| {
        let r: crate::protocol::StateReport = serde_json::from_value(serde_json::json!({
            "state": "waiting",
            "state_byte": ProcessState::Waiting.as_byte(),
            "primary": "waiting",
            "detail": "permission",
            "health": "alive",
            "state_ms": 4000,
            "signals": [],
        }))
        .expect("a state report");
        Msg::Session(id.into(), SessionMsg::State(r))
    };
    let desktop = |fx: &[Effect]| {
        fx.iter()
            .filter_map(|e| match e {
                Effect::Desktop(text) => Some(text.clone()),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let fx = update(&mut m, st("b", ProcessState::Waiting, 4000), at(5));
    assert_eq!(desktop(&fx), Vec::<String>::new());
    let fx = update(&mut m, pushed("b"), at(6));
    assert_eq!(desktop(&fx), ["b: waiting · permission"]);
    let fx = update(&mut m, Msg::Tick, at(1000));
    assert_eq!(desktop(&fx), Vec::<String>::new());

    update(&mut m, st("c", ProcessState::Waiting, 4000), at(1000));
    let fx = update(&mut m, Msg::Tick, at(1200));
    assert_eq!(desktop(&fx), Vec::<String>::new());
    let fx = update(&mut m, Msg::Tick, at(1600));
    assert_eq!(desktop(&fx), ["c: waiting"]);
    let fx = update(&mut m, Msg::Tick, at(2600));
    assert_eq!(desktop(&fx), Vec::<String>::new());
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

/// A STATE push of session `id` running `agent`, in that state for `ms`.
fn turn_pushed(
    (id, agent): (&str, &str),
    primary: &str,
    detail: &str,
    state: ProcessState,
    ms: u64,
) -> Msg {
    let r: crate::protocol::StateReport = serde_json::from_value(serde_json::json!({
        "state": primary,
        "state_byte": state.as_byte(),
        "primary": primary,
        "detail": detail,
        "health": "alive",
        "agent": agent,
        "state_ms": ms,
        "signals": [],
    }))
    .expect("a state report");
    Msg::Session(id.into(), SessionMsg::State(r))
}

/// An agent's work is its turn: busy for seconds as it starts, then at
/// its prompt (`idle · ready`), it finished nothing (every Gemini CLI
/// start was marked `●` and notified); back at its prompt after a turn
/// (`idle · finished`) it did, once.
#[test]
fn an_agent_finishes_a_turn_not_its_start() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut m = model(160, 49);
    m.bell = true;
    live(&mut m, &["a", "gm"], t0);
    let pushed = |primary: &str, detail: &str, state: ProcessState| {
        turn_pushed(("gm", "gemini"), primary, detail, state, 0)
    };
    let out = || Msg::Session("gm".into(), SessionMsg::Output(b"x".to_vec()));
    let busy_for_5s = |m: &mut Model, from: u64| {
        update(
            m,
            pushed("active", "thinking", ProcessState::Active),
            at(from),
        );
        for ms in (from..=from + 5_000).step_by(500) {
            update(m, out(), at(ms));
        }
    };
    // Starting up, then at its prompt: nothing finished.
    update(&mut m, pushed("idle", "ready", ProcessState::Idle), at(0));
    busy_for_5s(&mut m, 1_000);
    let fx = update(
        &mut m,
        pushed("idle", "ready", ProcessState::Idle),
        at(9_000),
    );
    assert!(!m.pane("gm").expect("pane").attention);
    assert!(!fx.contains(&Effect::Bell), "{fx:?}");
    // A turn, then its end.
    busy_for_5s(&mut m, 10_000);
    let fx = update(
        &mut m,
        pushed("idle", "finished", ProcessState::Idle),
        at(18_000),
    );
    assert!(m.pane("gm").expect("pane").attention);
    assert!(fx.contains(&Effect::Bell), "{fx:?}");
    // Said again while it rests: no new news.
    m.pane_mut("gm").expect("pane").attention = false;
    let fx = update(
        &mut m,
        pushed("idle", "finished", ProcessState::Idle),
        at(20_000),
    );
    assert!(!m.pane("gm").expect("pane").attention);
    assert!(!fx.contains(&Effect::Bell), "{fx:?}");
}

/// A stop (Ctrl-Z, `waiting · stopped`) is no part of a turn: a finished
/// turn stopped and continued is not finished anew (the inbox's `y` on
/// the stop marked it `●` at once), a turn stopped in its middle still
/// is once it ends.
#[test]
fn a_stop_and_its_continue_are_no_turn() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut m = model(160, 49);
    live(&mut m, &["a", "cc"], t0);
    let pushed = |primary: &str, detail: &str, state: ProcessState| {
        turn_pushed(("cc", "claude"), primary, detail, state, 0)
    };
    let idle = |d| pushed("idle", d, ProcessState::Idle);
    let stopped = || pushed("waiting", "stopped", ProcessState::Waiting);
    update(&mut m, idle("ready"), at(0));
    update(
        &mut m,
        pushed("active", "thinking", ProcessState::Active),
        at(1_000),
    );
    update(&mut m, idle("finished"), at(5_000));
    m.pane_mut("cc").expect("pane").attention = false;
    update(&mut m, stopped(), at(6_000));
    m.pane_mut("cc").expect("pane").attention = false;
    update(&mut m, idle("finished"), at(7_000));
    assert!(!m.pane("cc").expect("pane").attention);
    // Stopped in the middle of a turn: its end is news.
    update(
        &mut m,
        pushed("active", "thinking", ProcessState::Active),
        at(8_000),
    );
    update(&mut m, stopped(), at(9_000));
    m.pane_mut("cc").expect("pane").attention = false;
    update(
        &mut m,
        pushed("active", "thinking", ProcessState::Active),
        at(10_000),
    );
    update(&mut m, idle("finished"), at(12_000));
    assert!(m.pane("cc").expect("pane").attention);
}

/// A turn an error ended (`idle · error`: the API failed after its
/// retries) is news as a finished one is, called by its name: it was
/// marked nowhere, and the person found minutes later that nothing had
/// happened.
#[test]
fn a_turn_an_error_ended_asks_for_attention() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut m = model(160, 49);
    m.desktop = true;
    live(&mut m, &["a", "cc"], t0);
    let pushed = |primary: &str, detail: &str, state: ProcessState| {
        turn_pushed(("cc", "claude"), primary, detail, state, 0)
    };
    update(&mut m, pushed("idle", "ready", ProcessState::Idle), at(0));
    update(
        &mut m,
        pushed("active", "retrying", ProcessState::Active),
        at(1_000),
    );
    let fx = update(
        &mut m,
        pushed("idle", "error", ProcessState::Idle),
        at(9_000),
    );
    assert!(m.pane("cc").expect("pane").attention);
    assert!(fx.contains(&Effect::Desktop("cc: error".into())), "{fx:?}");
}

/// A draft typed while the agent worked is still in its prompt when the
/// turn ends (`idle · prompt_editing`, with the detector's signal that the
/// turn is over): finished all the same. Typed at rest, it is no news.
#[test]
fn a_turn_that_ends_with_a_draft_typed_ahead_is_finished() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut m = model(160, 49);
    m.bell = true;
    live(&mut m, &["a", "cc"], t0);
    let pushed = |primary: &str, detail: &str, state: ProcessState| {
        turn_pushed(("cc", "claude"), primary, detail, state, 0)
    };
    let over = |mut msg: Msg| {
        if let Msg::Session(_, SessionMsg::State(r)) = &mut msg {
            r.signals.push(crate::detect::Signal {
                source: crate::detect::Source::Timing,
                rule: crate::detect::TURN_OVER.into(),
                text: "back at its prompt after its turn, a draft typed".into(),
                since_ms: 0,
            });
        }
        msg
    };
    let out = || Msg::Session("cc".into(), SessionMsg::Output(b"x".to_vec()));
    update(&mut m, pushed("idle", "ready", ProcessState::Idle), at(0));
    // A draft typed at rest.
    let fx = update(
        &mut m,
        pushed("idle", "prompt_editing", ProcessState::Idle),
        at(1_000),
    );
    assert!(!m.pane("cc").expect("pane").attention);
    assert!(!fx.contains(&Effect::Bell), "{fx:?}");
    // Sent; another typed while it works; the turn ends.
    update(
        &mut m,
        pushed("active", "thinking", ProcessState::Active),
        at(2_000),
    );
    for ms in (2_000..=8_000).step_by(500) {
        update(&mut m, out(), at(ms));
    }
    let fx = update(
        &mut m,
        over(pushed("idle", "prompt_editing", ProcessState::Idle)),
        at(9_000),
    );
    assert!(m.pane("cc").expect("pane").attention);
    assert!(fx.contains(&Effect::Bell), "{fx:?}");
    // The draft deleted, the prompt empty: the same turn, no news twice.
    m.pane_mut("cc").expect("pane").attention = false;
    let fx = update(
        &mut m,
        pushed("idle", "finished", ProcessState::Idle),
        at(10_000),
    );
    assert!(!m.pane("cc").expect("pane").attention);
    assert!(!fx.contains(&Effect::Bell), "{fx:?}");
}

/// Claude Code redraws its prompt after its turn is over, and the push
/// saying so is dated back to the turn's end, before that redraw: the
/// turn is finished all the same (no turn that ended on its own was
/// marked, while the dashboard took the push for one about a silence
/// already judged).
#[test]
fn a_turn_is_finished_though_output_came_after_its_end() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut m = model(160, 49);
    m.bell = true;
    live(&mut m, &["a", "cc"], t0);
    let pushed = |primary: &str, detail: &str, state: ProcessState, ms: u64| {
        turn_pushed(("cc", "claude"), primary, detail, state, ms)
    };
    let out = || Msg::Session("cc".into(), SessionMsg::Output(b"x".to_vec()));
    update(
        &mut m,
        pushed("idle", "ready", ProcessState::Idle, 0),
        at(0),
    );
    update(
        &mut m,
        pushed("active", "thinking", ProcessState::Active, 0),
        at(1_000),
    );
    for ms in (1_000..=8_000).step_by(500) {
        update(&mut m, out(), at(ms));
    }
    // The turn ended at 7.6 s; its prompt redrawn at 8 s; said at 8.2 s.
    let fx = update(
        &mut m,
        pushed("idle", "finished", ProcessState::Idle, 600),
        at(8_200),
    );
    assert!(m.pane("cc").expect("pane").attention);
    assert!(fx.contains(&Effect::Bell), "{fx:?}");
}

/// The replay a connection starts with is what the session did before,
/// not work seen now: a session that printed one line 2.2 s before the
/// dashboard opened and went quiet is no finished work (every pane of a
/// dashboard opened after `hm restore` was marked `●`), while one that
/// goes on printing is.
#[test]
fn the_replay_on_connecting_is_not_work() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut m = model(160, 49);
    m.bell = true;
    live(&mut m, &["a", "b", "c"], at(2200));
    let replay = |id: &str| Msg::Session(id.into(), SessionMsg::Replayed(b"one line\r\n".to_vec()));
    let status = |id: &str, state: ProcessState, state_ms: u32, idle_ms: u32| {
        Msg::Session(
            id.into(),
            SessionMsg::Status(crate::protocol::Status {
                pid: 42,
                idle_ms,
                alive: true,
                state: state.as_byte(),
                state_ms,
            }),
        )
    };
    // The STATUS answer comes before the replay.
    // b printed its line as it started and nothing since.
    update(
        &mut m,
        status("b", ProcessState::Active, 2200, 2200),
        at(2210),
    );
    // c has printed all along.
    update(
        &mut m,
        status("c", ProcessState::Active, 10_000, 30),
        at(2210),
    );
    for id in ["b", "c"] {
        update(&mut m, replay(id), at(2220));
    }
    assert_eq!(m.pane("b").expect("pane").idle_ms(at(2220)), Some(2210));
    update(
        &mut m,
        Msg::Session("c".into(), SessionMsg::Output(b"more\r\n".to_vec())),
        at(2500),
    );
    let fx = update(&mut m, status("b", ProcessState::Idle, 0, 3000), at(3200));
    assert!(!m.pane("b").expect("pane").attention);
    assert!(!fx.contains(&Effect::Bell), "{fx:?}");
    let fx = update(&mut m, status("c", ProcessState::Idle, 0, 3000), at(5500));
    assert!(m.pane("c").expect("pane").attention);
    assert!(fx.contains(&Effect::Bell), "{fx:?}");
}

/// Session `id`'s pushed STATE: `state`, just begun.
fn pushed(id: &str, state: ProcessState) -> Msg {
    pushed_after(id, state, 0)
}

/// The same, in that state for `ms` already.
fn pushed_after(id: &str, state: ProcessState, ms: u64) -> Msg {
    let r: crate::protocol::StateReport = serde_json::from_value(serde_json::json!({
        "state": crate::classify::state_name(state.as_byte()),
        "state_byte": state.as_byte(),
        "primary": crate::classify::state_name(state.as_byte()),
        "health": "alive",
        "state_ms": ms,
        "signals": [],
    }))
    .expect("a state report");
    Msg::Session(id.into(), SessionMsg::State(r))
}

/// The dashboard hears of a state change first from the push (STATE):
/// the end of work it tells asks for a look as a STATUS answer would (it
/// took the work away, and no pane was ever marked `●`).
#[test]
fn work_ended_by_a_pushed_state_asks_for_attention_once() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut m = model(160, 49);
    m.bell = true;
    live(&mut m, &["a", "b"], t0);
    let out = |id: &str| Msg::Session(id.into(), SessionMsg::Output(b"x".to_vec()));
    let pushed = |state: ProcessState| pushed("b", state);
    update(&mut m, out("b"), at(0));
    update(&mut m, st("b", ProcessState::Active, 0), at(0));
    update(&mut m, out("b"), at(1_000));
    update(&mut m, out("b"), at(2_500));
    let fx = update(&mut m, pushed(ProcessState::Idle), at(3_000));
    assert!(m.pane("b").expect("pane").attention);
    assert!(fx.contains(&Effect::Bell), "{fx:?}");
    // The STATUS answer that follows is no new news.
    let fx = update(&mut m, st("b", ProcessState::Idle, 0), at(3_100));
    assert!(!fx.contains(&Effect::Bell), "{fx:?}");
}

#[test]
fn redraws_after_our_resizes_are_not_work() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut m = model(160, 49);
    m.fit = true;
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
    assert_eq!(
        requests(&fx),
        [&Effect::Status("a".into()), &Effect::Info("a".into())]
    );
}

/// A question asked as output came can be answered "active" for a shell
/// whose prompt is about to come back; settled idle again, where the
/// supervisor last pushed, it pushes nothing. The session is asked again
/// once its output has stopped, rather than at its idle threshold (ten
/// minutes for some): the pane said "active" until then.
#[test]
fn a_session_asked_as_its_output_came_is_asked_again_once_it_stops() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut m = model(100, 31);
    live(&mut m, &["a"], t0);
    update(&mut m, st("a", ProcessState::Idle, 0), at(10));
    let out = |text: &[u8]| Msg::Session("a".into(), SessionMsg::Output(text.to_vec()));
    let fx = update(&mut m, out(b"echo hi\r\n"), at(1000));
    assert!(fx.contains(&Effect::Status("a".into())), "{fx:?}");
    update(&mut m, st("a", ProcessState::Active, 0), at(1005));
    update(&mut m, out(b"hi\r\n$ "), at(1020));
    let settled = at(1020) + crate::client::poll::SETTLED_AFTER;
    assert_eq!(m.next_check(), Some(settled));
    let fx = update(&mut m, Msg::Tick, settled);
    assert!(fx.contains(&Effect::Status("a".into())), "{fx:?}");
    update(&mut m, st("a", ProcessState::Idle, 0), settled);
    let a = m.pane("a").expect("pane a");
    assert_eq!(a.state(), Some(ProcessState::Idle.as_byte()));
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
        p.poll.clear_idle_check();
    }
    assert_eq!(m.next_check(), None, "an idle dashboard arms nothing");
    let soon = now + Duration::from_millis(1500);
    let out = |id: &str| Msg::Session(id.into(), SessionMsg::Output(b"x".to_vec()));
    update(&mut m, out("b"), now);
    update(&mut m, st("b", ProcessState::Active, 0), now);
    update(&mut m, out("a"), soon);
    update(&mut m, st("a", ProcessState::Active, 0), soon);
    let due = m.next_check().expect("armed");
    assert_eq!(Some(due), m.pane("b").and_then(|p| p.poll.idle_check()));
    update(&mut m, Msg::Tick, due);
    assert_eq!(
        m.next_check(),
        m.pane("a").and_then(|p| p.poll.idle_check())
    );
    assert!(m.next_check().is_some_and(|t| t > due));
    // A session that ends with a check armed arms nothing more: a check
    // left due would wake the run loop at once, over and over.
    update(&mut m, st("b", ProcessState::Idle, 0), due);
    update(&mut m, Msg::Session("a".into(), SessionMsg::Exit(0)), due);
    // The first check was b's question about how its output settled; its
    // idle threshold's is left, and nothing after it.
    let last = m.next_check().expect("b's idle check");
    assert_eq!(Some(last), m.pane("b").and_then(|p| p.poll.idle_check()));
    update(&mut m, Msg::Tick, last);
    update(&mut m, st("b", ProcessState::Idle, 0), last);
    assert_eq!(m.next_check(), None);
    update(&mut m, Msg::Tick, due + Duration::from_secs(10));
    assert_eq!(m.next_check(), None);
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
        [
            &Effect::Kill("a".into()),
            &Effect::Status("a".into()),
            &Effect::Info("a".into())
        ]
    );
    assert_eq!(m.next_check(), Some(at(3000)));
    update(&mut m, Msg::Tick, at(3000));
    assert!(m.pane("a").expect("pane").unresponsive());
    assert!(!m.pane("b").expect("pane").unresponsive());
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
    assert!(!m.pane("a").expect("pane").unresponsive());
}

#[test]
fn a_size_change_by_another_client_is_learned_when_output_settles() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut m = model(100, 31);
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
    let info = Box::new(crate::protocol::Info {
        cols: 100,
        rows: 30,
        ..Default::default()
    });
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
    m.fit = true;
    live(&mut m, &["a"], t0);
    update(&mut m, st("a", ProcessState::Idle, 0), at(10));
    let fx = update(
        &mut m,
        Msg::Session("a".into(), SessionMsg::Output(b"x".to_vec())),
        at(20),
    );
    assert!(!fx.iter().any(|e| matches!(e, Effect::Info(_))), "{fx:?}");
}

/// Unless `history_lines` is set, many panes share a budget of rows
/// (a pane's rows cost 32 bytes a column): each keeps the default up to
/// 20 panes, a share beyond, and at least 100.
#[test]
fn many_panes_share_the_history_unless_its_depth_is_set() {
    let now = Instant::now();
    let kept = |m: &Model, id: &str| {
        m.pane(id)
            .map(|p| p.term.history_capacity())
            .unwrap_or_default()
    };
    let ids = |n: usize| (0..n).map(|i| format!("s{i}")).collect::<Vec<_>>();
    for (panes, shared, set, want) in [
        (8, true, 1000, 1000),
        (20, true, 1000, 1000),
        (40, true, 1000, 500),
        (200, true, 1000, 100),
        (400, true, 1000, 100),
        (200, true, 50, 50),
        (200, false, 1000, 1000),
    ] {
        let mut m = model(160, 49);
        m.history_lines = set;
        m.history_shared = shared;
        update(&mut m, Msg::Found(ids(panes)), now);
        assert_eq!(kept(&m, "s0"), want, "{panes} panes, shared {shared}");
    }
}

/// A pane made among few keeps the default until it connects again, and
/// then takes its share among the many there are by then.
#[test]
fn a_pane_connected_again_takes_its_share_of_history_as_it_is_now() {
    let now = Instant::now();
    let mut m = model(160, 49);
    m.history_shared = true;
    let kept = |m: &Model, id: &str| {
        m.pane(id)
            .map(|p| p.term.history_capacity())
            .unwrap_or_default()
    };
    update(&mut m, Msg::Found(vec!["s0".into()]), now);
    assert_eq!(kept(&m, "s0"), 1000);
    let many: Vec<String> = (0..200).map(|i| format!("s{i}")).collect();
    update(&mut m, Msg::Found(many), now);
    assert_eq!((kept(&m, "s0"), kept(&m, "s199")), (1000, 100));
    update(
        &mut m,
        Msg::Session("s0".into(), SessionMsg::Connected),
        now,
    );
    assert_eq!(kept(&m, "s0"), 100);
}

/// The pane selected when the dashboard was quit is selected again when
/// its session is found, however late; a key pressed before then has
/// chosen, and stands.
#[test]
fn the_selection_left_at_quit_comes_back_unless_a_key_chose_first() {
    let now = Instant::now();
    let mut m = model(160, 49);
    m.selected_before = Some("c".into());
    live(&mut m, &["a", "b"], now);
    assert_eq!(sel(&m), "a");
    live(&mut m, &["c"], now);
    assert_eq!(sel(&m), "c");
    assert_eq!(m.selected_before, None);

    let mut m = model(160, 49);
    m.selected_before = Some("c".into());
    live(&mut m, &["a", "b"], now);
    update(&mut m, press(KeyCode::Right), now);
    assert_eq!(sel(&m), "b");
    live(&mut m, &["c"], now);
    assert_eq!(sel(&m), "b");
}

/// A full-screen program (Claude Code) takes its last screen with it as
/// it exits: the pane of the session that ended shows it again, in its
/// place, above what it wrote after; not while it runs.
#[test]
fn an_ended_pane_shows_the_full_screen_its_program_left() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["a"], now);
    let out = b"\x1b[?1049h\x1b[H> the answer is 42\x1b[3;1H? for shortcuts\x1b[?1049lResume this session with: claude --resume 7\r\n";
    update(
        &mut m,
        Msg::Session("a".into(), SessionMsg::Output(out.to_vec())),
        now,
    );
    let text = |m: &Model| {
        m.pane("a")
            .map(|p| p.term.screen().contents())
            .unwrap_or_default()
    };
    assert!(!text(&m).contains("the answer"), "{}", text(&m));
    update(&mut m, Msg::Session("a".into(), SessionMsg::Exit(0)), now);
    let shown = text(&m);
    let at = |s: &str| shown.find(s);
    assert!(
        at("the answer is 42") < at("? for shortcuts") && at("? for shortcuts") < at("Resume"),
        "{shown}"
    );
    assert!(at("the answer is 42").is_some(), "{shown}");
}

/// An ended session run again elsewhere (`hm restart`) that ended again
/// between two looks: its pane shows the new run's lines, code and time,
/// marked, not the first run's.
#[test]
fn a_session_that_ended_again_unseen_shows_its_new_end() {
    let now = Instant::now();
    let mut m = model(160, 49);
    // Selected, so that the other's mark is not taken as looked at.
    live(&mut m, &["a"], now);
    let first = crate::clock::unix_ms() - 60_000;
    let ended = |at: u64, code: i32, line: &str| crate::ended::Ended {
        exit_code: code,
        last_lines: vec![line.into()],
        ..record("quick", at)
    };
    update(&mut m, Msg::Ended(vec![ended(first, 4, "run-1")]), now);
    let shows = |m: &Model, text: &str| {
        m.pane("quick")
            .is_some_and(|p| p.term.screen().contents().contains(text))
    };
    assert!(shows(&m, "run-1"));
    // The same record again changes nothing.
    update(&mut m, Msg::Ended(vec![ended(first, 4, "run-1")]), now);
    assert!(shows(&m, "run-1"));
    let later = first + 50_000;
    update(&mut m, Msg::Ended(vec![ended(later, 5, "run-2")]), now);
    let p = m.pane("quick").expect("its pane");
    assert!(shows(&m, "run-2") && !shows(&m, "run-1"));
    assert_eq!(p.exit, Some(5));
    assert_eq!(p.recorded, Some(later));
    assert!(p.attention, "not seen ending");
    assert_eq!(m.panes.len(), 2);
}

/// Seen ending, its record not read yet, then run anew elsewhere and
/// ended between two looks: the record, of another run than the one it
/// watched (started later), makes the pane again.
#[test]
fn a_record_of_another_run_than_the_one_watched_makes_the_pane_again() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["a", "quick"], now);
    let first = crate::clock::unix_ms() - 60_000;
    let info = crate::protocol::Info {
        started_unix_ms: first,
        ..Default::default()
    };
    let to = |m: &mut Model, sm: SessionMsg| update(m, Msg::Session("quick".into(), sm), now);
    to(&mut m, SessionMsg::Info(Box::new(info)));
    to(&mut m, SessionMsg::Output(b"run-1\r\n".to_vec()));
    to(&mut m, SessionMsg::Exit(4));
    to(&mut m, SessionMsg::Closed(None));
    let second = crate::ended::Ended {
        started_unix_ms: first + 30_000,
        exit_code: 5,
        last_lines: vec!["run-2".into()],
        ..record("quick", first + 30_010)
    };
    update(&mut m, Msg::Ended(vec![second]), now);
    let p = m.pane("quick").expect("its pane");
    assert!(p.term.screen().contents().contains("run-2"));
    assert_eq!(p.exit, Some(5));
    // Its own run's record changes nothing.
    let mut m = model(160, 49);
    live(&mut m, &["a", "quick"], now);
    let info = crate::protocol::Info {
        started_unix_ms: first,
        ..Default::default()
    };
    to(&mut m, SessionMsg::Info(Box::new(info)));
    to(&mut m, SessionMsg::Output(b"run-1\r\n".to_vec()));
    to(&mut m, SessionMsg::Exit(4));
    to(&mut m, SessionMsg::Closed(None));
    let own = crate::ended::Ended {
        started_unix_ms: first,
        exit_code: 4,
        last_lines: vec!["its last line".into()],
        ..record("quick", first + 10)
    };
    update(&mut m, Msg::Ended(vec![own]), now);
    let p = m.pane("quick").expect("its pane");
    let shown = p.term.screen().contents();
    assert!(
        shown.contains("run-1") && !shown.contains("its last line"),
        "{shown}"
    );
}

/// `top` redraws every 3 s, just past the `simple` classifier's idle
/// threshold: each redraw's output comes before the STATE saying the
/// silence made it idle. Each redraw is one short piece of work, not the
/// one before grown to 3 s, finished at each (its `●` came back every
/// 3 s). Work of 2 s or more before such a silence is finished work.
#[test]
fn output_after_a_silence_is_new_work_though_the_idle_state_comes_after_it() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut m = model(160, 49);
    live(&mut m, &["a", "top"], t0);
    // Its first STATUS answer: the pushes change the state it gave.
    let status = crate::protocol::Status {
        pid: 42,
        idle_ms: 0,
        alive: true,
        state: ProcessState::Idle.as_byte(),
        state_ms: 0,
    };
    update(
        &mut m,
        Msg::Session("top".into(), SessionMsg::Status(status)),
        t0,
    );
    let out = || Msg::Session("top".into(), SessionMsg::Output(b"x".to_vec()));
    let pushed = |state: ProcessState| pushed("top", state);
    // A redraw, then 3.05 s later the next, before the push of the idle
    // the silence between them was (since 50 ms before the redraw; a
    // supervisor of this version pushes none once the beat is known).
    let redraw = |m: &mut Model, t: u64| {
        update(m, out(), at(t));
        update(m, pushed_after("top", ProcessState::Idle, 51), at(t + 1));
        update(m, pushed(ProcessState::Active), at(t + 1));
        update(m, out(), at(t + 40));
        update(m, Msg::Tick, at(t + 1_500));
    };
    for n in 0..6 {
        redraw(&mut m, 1_000 + n * 3_050);
        assert!(!m.pane("top").expect("pane").attention, "redraw {n}");
    }
    // Work: output for 2.5 s, then a silence, then output again.
    let t = 30_000;
    for ms in [0, 1_000, 2_000, 2_500] {
        update(&mut m, out(), at(t + ms));
    }
    redraw(&mut m, t + 2_500 + 3_100);
    assert!(m.pane("top").expect("pane").attention);
}

/// `top`'s redraws come about 3 s apart, some a little under, some a
/// little over the idle threshold: two close enough made one piece of
/// work of 3 s, finished (`●`) at the next silence just past 3 s. Once
/// its beat is known, the silence that ends its work is a beat and a
/// half, as its supervisor's classifier has it: it is one long piece.
#[test]
fn output_at_a_steady_beat_is_one_piece_of_work() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut m = model(160, 49);
    live(&mut m, &["a", "top"], t0);
    let out = || Msg::Session("top".into(), SessionMsg::Output(b"x".to_vec()));
    let mut t = 1_000;
    for (n, gap) in [3_020, 2_990, 3_030, 2_980, 3_040, 2_970, 3_050, 3_010]
        .into_iter()
        .enumerate()
    {
        t += gap;
        update(&mut m, out(), at(t));
        update(&mut m, Msg::Tick, at(t + 1_500));
        // Marked, maybe, while its beat was not known yet (three gaps
        // alike), and looked at.
        let p = m.pane_mut("top").expect("pane");
        if n < 3 {
            p.attention = false;
        }
        assert!(!p.attention, "redraw {n}");
    }
}

/// A connection made again after a drop (a host unreachable for a few
/// seconds) is no silence of the program's: a session printing every
/// second came back marked as having finished its work.
#[test]
fn a_silence_while_disconnected_finishes_no_work() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut m = model(160, 49);
    live(&mut m, &["a", "loop"], t0);
    let out = || Msg::Session("loop".into(), SessionMsg::Output(b"tick\n".to_vec()));
    for s in 1..=10 {
        update(&mut m, out(), at(s * 1_000));
    }
    let problem = SessionMsg::Problem {
        why: "unreachable".into(),
        notice: None,
    };
    update(&mut m, Msg::Session("loop".into(), problem), at(10_500));
    update(
        &mut m,
        Msg::Session("loop".into(), SessionMsg::Connected),
        at(16_000),
    );
    update(&mut m, out(), at(16_100));
    update(&mut m, Msg::Tick, at(16_200));
    assert!(!m.pane("loop").expect("pane").attention);
}

/// A session of a host already said to be unreachable goes quiet as its
/// link did: it is not news again as `not responding`, which read as if
/// the host had come back and the session had hung.
#[test]
fn a_session_of_an_unreachable_host_is_not_said_not_to_respond() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut m = model(160, 49);
    live(&mut m, &["box:a"], t0);
    update(&mut m, st("box:a", ProcessState::Idle, 0), at(10));
    // A question sent (the kill asks one), then the link drops.
    update(&mut m, press(KeyCode::Char('x')), at(1000));
    update(&mut m, press(KeyCode::Char('y')), at(1000));
    m.notify("box: the connection ended", at(1500));
    m.hosts_down.insert("box".into(), (0, at(1500)));
    update(&mut m, Msg::Tick, at(3000));
    assert!(m.pane("box:a").expect("pane").unresponsive());
    assert!(!notice(&m).contains("not responding"), "{}", notice(&m));
}

/// A dashboard started while `top` has redrawn for minutes: its
/// supervisor says it is active, for minutes, and that a silence of a
/// beat and a half makes it idle. The first redraw past 3 s is no end of
/// work (it was marked `●` before the dashboard learnt the beat itself).
#[test]
fn a_beat_the_supervisor_knows_is_not_taken_for_an_end() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut m = model(160, 49);
    live(&mut m, &["a", "top"], t0);
    let info = crate::protocol::Info {
        idle_threshold_ms: Some(3_000),
        idle_after_ms: Some(4_575),
        ..Default::default()
    };
    update(
        &mut m,
        Msg::Session("top".into(), SessionMsg::Info(Box::new(info))),
        t0,
    );
    update(&mut m, st("top", ProcessState::Active, 480_000), at(10));
    let out = || Msg::Session("top".into(), SessionMsg::Output(b"x".to_vec()));
    for n in 0..3 {
        update(&mut m, out(), at(1_000 + n * 3_050));
        update(&mut m, Msg::Tick, at(2_000 + n * 3_050));
        assert!(!m.pane("top").expect("pane").attention, "redraw {n}");
    }
}

/// Session `id`'s pushed STATE: waiting at dialog `dialog`, which a rule
/// answers in `auto_ms` when that is given.
fn at_dialog(id: &str, dialog: u64, auto_ms: Option<u64>) -> Msg {
    let waiting = turn_pushed(
        (id, "codex"),
        "waiting",
        "permission",
        ProcessState::Waiting,
        0,
    );
    let Msg::Session(id, SessionMsg::State(mut r)) = waiting else {
        unreachable!("a state push")
    };
    r.dialog = Some(Box::new(crate::protocol::DialogInfo {
        id: dialog,
        rule: "codex.permission".into(),
        fingerprint: "f".into(),
        automation_in_ms: auto_ms,
        ..Default::default()
    }));
    Msg::Session(id, SessionMsg::State(r))
}

/// A dialog an `[[automation]]` entry answers after its dwell calls
/// nobody: no bell, no notification, no mark, unless it still stands
/// once the rule should have answered it, or another dialog no rule
/// answers comes after it in the same wait.
#[test]
fn a_dialog_a_rule_answers_calls_nobody_unless_it_stays() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut m = model(160, 49);
    m.bell = true;
    live(&mut m, &["a", "b", "c"], t0);
    let called = |m: &Model, id: &str, fx: &[Effect]| {
        (
            m.pane(id).expect("pane").attention,
            fx.contains(&Effect::Bell),
        )
    };
    // Answered in time: nothing, before or after.
    update(&mut m, st("b", ProcessState::Active, 0), at(0));
    let fx = update(&mut m, at_dialog("b", 1, Some(1500)), at(0));
    assert!(m.pane("b").expect("pane").waiting());
    assert_eq!(called(&m, "b", &fx), (false, false));
    let fx = update(&mut m, Msg::Tick, at(1400));
    assert_eq!(called(&m, "b", &fx), (false, false));
    update(&mut m, pushed("b", ProcessState::Active), at(1600));
    let fx = update(&mut m, Msg::Tick, at(9000));
    assert_eq!(called(&m, "b", &fx), (false, false));

    // STATUS first, as on connecting: its mark is taken back by the push.
    let fx = update(&mut m, st("c", ProcessState::Waiting, 0), at(10_000));
    assert_eq!(called(&m, "c", &fx), (true, false));
    let fx = update(&mut m, at_dialog("c", 4, Some(1500)), at(10_010));
    assert_eq!(called(&m, "c", &fx), (false, false));
    // Not answered after all (the program took no key): called then.
    let fx = update(&mut m, Msg::Tick, at(13_000));
    assert_eq!(called(&m, "c", &fx), (false, false));
    let fx = update(&mut m, Msg::Tick, at(13_600));
    assert_eq!(called(&m, "c", &fx), (true, true));

    // Answered, and the next question in the same wait is no rule's.
    let fx = update(&mut m, at_dialog("b", 2, Some(1500)), at(20_000));
    assert_eq!(called(&m, "b", &fx), (false, false));
    let fx = update(&mut m, at_dialog("b", 3, None), at(21_600));
    assert_eq!(called(&m, "b", &fx), (true, true));

    // Two a rule answers, one after the other in the same wait: the
    // second's own time counts, not the first's.
    update(&mut m, pushed("b", ProcessState::Active), at(30_000));
    // (Looked at since it was called.)
    m.pane_mut("b").expect("pane").attention = false;
    let fx = update(&mut m, at_dialog("b", 5, Some(3000)), at(31_000));
    assert_eq!(called(&m, "b", &fx), (false, false));
    let fx = update(&mut m, at_dialog("b", 6, Some(3000)), at(34_050));
    assert_eq!(called(&m, "b", &fx), (false, false));
    let fx = update(&mut m, Msg::Tick, at(36_100));
    assert_eq!(called(&m, "b", &fx), (false, false));
    let fx = update(&mut m, Msg::Tick, at(39_100));
    assert_eq!(called(&m, "b", &fx), (true, true));
}

/// A session killed with `x` goes among the ended at the back of the
/// grid; the selection stays in its place, on the one that takes it: it
/// followed the killed one to the ended on the last page.
#[test]
fn the_selection_stays_in_place_when_the_selected_session_is_killed() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["a", "b", "c"], now);
    assert_eq!(sel(&m), "a");
    update(&mut m, press(KeyCode::Char('x')), now);
    update(&mut m, press(KeyCode::Char('y')), now);
    update(&mut m, Msg::Session("a".into(), SessionMsg::Exit(143)), now);
    assert_eq!(m.visible_ids(), ["b", "c", "a"]);
    assert_eq!(sel(&m), "b");
    // The one in its place now, whatever it is.
    m.selected = Some("c".into());
    update(&mut m, press(KeyCode::Char('x')), now);
    update(&mut m, press(KeyCode::Char('y')), now);
    update(&mut m, Msg::Session("c".into(), SessionMsg::Exit(143)), now);
    assert_eq!(m.visible_ids(), ["b", "a", "c"]);
    assert_eq!(sel(&m), "a");
    // One that ends by itself keeps the selection: its end is to be seen.
    m.selected = Some("b".into());
    update(&mut m, Msg::Session("b".into(), SessionMsg::Exit(0)), now);
    assert_eq!(sel(&m), "b");
    // Killed from its zoom: the zoom and the selection stay on it.
    live(&mut m, &["d", "e"], now);
    m.selected = Some("d".into());
    update(&mut m, press(KeyCode::Char('z')), now);
    update(&mut m, press(KeyCode::Char('x')), now);
    update(&mut m, press(KeyCode::Char('y')), now);
    update(&mut m, Msg::Session("d".into(), SessionMsg::Exit(143)), now);
    assert_eq!(m.mode, Mode::Zoom("d".into()));
    assert_eq!(sel(&m), "d");
}

/// A pushed state's `idle_ms` moves the pane's last output on: output the
/// dashboard did not read (a session in focus has a connection of its
/// own) left `quiet 28s` on the bottom border under the title's `active
/// 0s`.
#[test]
fn a_pushed_state_says_when_the_program_last_printed() {
    let now = Instant::now();
    let mut m = model(160, 49);
    live(&mut m, &["a"], now);
    update(&mut m, st("a", ProcessState::Idle, 28_000), now);
    let old = crate::protocol::Status {
        pid: 42,
        idle_ms: 28_000,
        alive: true,
        state: ProcessState::Idle.as_byte(),
        state_ms: 28_000,
    };
    update(
        &mut m,
        Msg::Session("a".into(), SessionMsg::Status(old)),
        now,
    );
    let later = now + Duration::from_secs(2);
    let r: crate::protocol::StateReport = serde_json::from_value(serde_json::json!({
        "state": "active",
        "state_byte": ProcessState::Active.as_byte(),
        "primary": "active",
        "health": "alive",
        "state_ms": 0,
        "idle_ms": 100,
        "signals": [],
    }))
    .expect("a state report");
    update(
        &mut m,
        Msg::Session("a".into(), SessionMsg::State(r.clone())),
        later,
    );
    assert_eq!(m.pane("a").and_then(|p| p.idle_ms(later)), Some(100));
    // From an older supervisor, which does not say: the time runs on.
    let older = crate::protocol::StateReport { idle_ms: None, ..r };
    let then = later + Duration::from_secs(3);
    update(
        &mut m,
        Msg::Session("a".into(), SessionMsg::State(older)),
        then,
    );
    assert_eq!(m.pane("a").and_then(|p| p.idle_ms(then)), Some(3_100));
}
