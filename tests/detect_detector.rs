//! The detector's memory in synthetic time: health (stuck, recovered,
//! dead), wake-ups, and process facts.

use heimdall::detect::{Detail, Detector, Health, Primary, ProcessFacts, Settings};
use heimdall::protocol::Size;
use heimdall::vt::events::Recorder;
use heimdall::vt::term::Term;

const RULE: &str =
    "────────────────────────────────────────────────────────────────────────────────";

fn term() -> Term<Recorder> {
    Term::with_callbacks(Size { cols: 80, rows: 24 }, Recorder::default())
}

/// A Claude Code screen: a spinner line with `counter` seconds when busy,
/// the empty prompt box always.
fn claude(busy: Option<u32>) -> String {
    let spinner = match busy {
        Some(s) => format!("✶ Pondering… ({s}s · ↓ 3 tokens)"),
        None => "✻ Worked for 3s".to_owned(),
    };
    format!(
        "\u{1b}[H\u{1b}[2J ▐▛███▜▌   Claude Code v2.1.197\r\n\r\n{spinner}\r\n\r\n{RULE}\r\n❯\u{a0}\r\n{RULE}\r\n  esc to interrupt"
    )
}

fn settings() -> Settings {
    Settings {
        idle_threshold_ms: 3_000,
        stuck_after_ms: 60_000,
        process_evidence: true,
        status_protocol: true,
        hooks: true,
    }
}

#[test]
fn a_spinner_that_stops_moving_turns_stuck_then_recovered() {
    let mut t = term();
    let mut d = Detector::new(settings(), &["claude".to_owned()], 0);
    t.feed(claude(Some(1)).as_bytes());
    d.output(b"x", 0);
    let v = d.verdict(t.screen(), 100);
    assert_eq!((v.primary, v.health), (Primary::Active, Health::Alive));
    assert_eq!(d.wake_at(), Some(60_100));
    let v = d.verdict(t.screen(), 60_100);
    assert_eq!((v.primary, v.health), (Primary::Stuck, Health::Stuck));
    assert_eq!(d.wake_at(), None);
    t.feed(claude(Some(61)).as_bytes());
    let v = d.verdict(t.screen(), 61_000);
    assert_eq!((v.primary, v.health), (Primary::Active, Health::Recovered));
    // Active again since it moved, not since before it was stuck.
    assert!(v.since_ms >= 60_100, "{v:?}");
    let v = d.verdict(t.screen(), 71_000);
    assert_eq!(v.health, Health::Alive);
}

#[test]
fn a_counting_spinner_is_never_stuck() {
    let mut t = term();
    let mut d = Detector::new(settings(), &["claude".to_owned()], 0);
    for s in 0..130u32 {
        t.feed(claude(Some(s)).as_bytes());
        d.output(b"x", u64::from(s) * 1_000);
        let v = d.verdict(t.screen(), u64::from(s) * 1_000 + 500);
        assert_eq!(v.primary, Primary::Active, "at {s}s");
    }
}

#[test]
fn idle_needs_no_wake_up() {
    let mut t = term();
    let mut d = Detector::new(settings(), &["claude".to_owned()], 0);
    t.feed(claude(None).as_bytes());
    // The footer still says esc to interrupt in this synthetic screen only
    // when busy; without the spinner the prompt box decides.
    t.feed(b"\x1b[8;1H\x1b[2K  ? for shortcuts");
    let v = d.verdict(t.screen(), 5_000);
    assert_eq!((v.primary, v.detail), (Primary::Idle, Some(Detail::Ready)));
    assert_eq!(d.wake_at(), None);
}

#[test]
fn output_alone_is_running_until_the_idle_threshold() {
    let mut t = term();
    let mut d = Detector::new(settings(), &[], 0);
    t.feed(b"compiling module 1\r\ncompiling module 2\r\n");
    d.output(b"compiling", 1_000);
    let v = d.verdict(t.screen(), 1_100);
    assert_eq!(
        (v.primary, v.detail),
        (Primary::Active, Some(Detail::Running))
    );
    assert_eq!(d.wake_at(), Some(4_000));
}

#[test]
fn ended_is_dead_and_stays_dead() {
    let mut t = term();
    let mut d = Detector::new(settings(), &["bash".to_owned()], 0);
    t.feed(b"dev@box:~$ ");
    assert_eq!(d.verdict(t.screen(), 100).primary, Primary::Idle);
    d.ended(200);
    let v = d.verdict(t.screen(), 300);
    assert_eq!(
        (v.primary, v.health, v.since_ms),
        (Primary::Dead, Health::Dead, 200)
    );
    assert_eq!(d.wake_at(), None);
}

#[test]
fn a_silent_job_past_stuck_after_is_running_and_wakes_no_sooner_than_its_next_check() {
    let mut t = term();
    let mut d = Detector::new(settings(), &["bash".to_owned()], 0);
    t.feed(b"dev@box:~$ make\r\n");
    d.output(b"make", 0);
    let job = || ProcessFacts {
        foreground_is_session: false,
        foreground_command: "make".to_owned(),
        ..ProcessFacts::default()
    };
    d.process(job(), 0);
    let v = d.verdict(t.screen(), 100);
    assert_eq!(v.primary, Primary::Active, "{v:?}");
    // Past `stuck_after` with the screen unchanged: a job that prints
    // nothing is running, not stuck, and no deadline already passed may
    // be asked for again (the supervisor's tracker would look at once,
    // and again, on a core).
    for at in [60_100, 61_000, 90_000, 200_000] {
        d.process(job(), at);
        let v = d.verdict(t.screen(), at);
        assert_eq!((v.primary, v.health), (Primary::Active, Health::Alive));
        let wake = d.wake_at();
        assert!(wake.is_none_or(|w| w > at), "woken at {wake:?}, at {at}");
    }
    // It prints at last: it was never stuck, so it has not recovered.
    t.feed(b"make: Nothing to be done.\r\n");
    d.output(b"make", 201_000);
    d.process(job(), 201_000);
    let v = d.verdict(t.screen(), 201_100);
    assert_eq!((v.primary, v.health), (Primary::Active, Health::Alive));
}

#[test]
fn a_foreground_job_reading_the_terminal_is_waiting_for_input() {
    let mut t = term();
    let mut d = Detector::new(settings(), &["bash".to_owned()], 0);
    t.feed(b"dev@box:~$ ./deploy\r\n");
    d.process(
        ProcessFacts {
            foreground_is_session: false,
            reading_terminal: true,
            canonical: true,
            foreground_command: "deploy".to_owned(),
            ..ProcessFacts::default()
        },
        1_000,
    );
    let v = d.verdict(t.screen(), 1_000);
    assert_eq!(
        (v.primary, v.detail),
        (Primary::Waiting, Some(Detail::Input))
    );
}

#[test]
fn the_sessions_own_shell_reading_is_idle() {
    let mut t = term();
    let mut d = Detector::new(settings(), &["bash".to_owned()], 0);
    t.feed(b"weird prompt without a sigil ");
    d.process(
        ProcessFacts {
            foreground_is_session: true,
            reading_terminal: true,
            canonical: false,
            foreground_command: "bash".to_owned(),
            ..ProcessFacts::default()
        },
        1_000,
    );
    let v = d.verdict(t.screen(), 1_000);
    assert_eq!((v.primary, v.detail), (Primary::Idle, Some(Detail::Ready)));
}

#[test]
fn an_editor_in_the_foreground_is_not_waiting() {
    let mut t = term();
    let mut d = Detector::new(settings(), &["bash".to_owned()], 0);
    t.feed(b"\x1b[?1049h\x1b[H~\r\n~\r\n~\r\n\"notes.txt\" 3L");
    let facts = ProcessFacts {
        foreground_is_session: false,
        reading_terminal: true,
        canonical: false,
        foreground_command: "vim".to_owned(),
        ..ProcessFacts::default()
    };
    d.verdict(t.screen(), 900);
    d.process(facts, 1_000);
    let v = d.verdict(t.screen(), 1_000);
    assert_eq!(v.primary, Primary::Idle);
}

#[test]
fn the_evidence_table_names_its_rows() {
    let mut t = term();
    let mut d = Detector::new(settings(), &["claude".to_owned()], 0);
    t.feed(claude(Some(2)).as_bytes());
    d.verdict(t.screen(), 100);
    let rows = d.evidence(100);
    assert!(rows.iter().any(|r| r.rule == "claude.spinner"), "{rows:?}");
    assert!(serde_json::to_string(&rows).is_ok());
}

#[test]
fn a_silent_job_is_read_again_ever_more_rarely() {
    let t = term();
    let mut d = Detector::new(
        settings(),
        &["bash".to_owned(), "-c".to_owned(), "sleep 600".to_owned()],
        0,
    );
    let facts = ProcessFacts {
        foreground_is_session: true,
        reading_terminal: false,
        canonical: true,
        foreground_command: "sleep".to_owned(),
        ..ProcessFacts::default()
    };
    let mut now = 0;
    let mut waits = Vec::new();
    for _ in 0..8 {
        d.process(facts.clone(), now);
        let v = d.verdict(t.screen(), now);
        assert_eq!(
            (v.primary, v.detail),
            (Primary::Active, Some(Detail::Running)),
            "{v:?}"
        );
        let next = d.wake_at().expect("a silent job is re-read");
        waits.push(next - now);
        now = next;
    }
    assert_eq!(waits[0], 1_000, "{waits:?}");
    assert!(waits.windows(2).all(|w| w[1] >= w[0]), "{waits:?}");
    assert!(waits[7] >= 7_000, "the waits grow: {waits:?}");
}

/// Feeds `bytes` to the screen and its events to the detector.
fn feed(t: &mut Term<Recorder>, d: &mut Detector, bytes: &[u8], now: u64) {
    t.feed(bytes);
    for e in t.callbacks_mut().take() {
        d.event(&e, now);
    }
    d.output(bytes, now);
}

#[test]
fn a_progress_report_is_work_with_its_percentage_until_cleared() {
    let mut t = term();
    let mut d = Detector::new(settings(), &["cargo".to_owned()], 0);
    feed(&mut t, &mut d, b"\x1b]9;4;1;40\x07", 100);
    // Long after the output, the report still says it works.
    let v = d.verdict(t.screen(), 10_000);
    assert_eq!(
        (v.primary, v.detail),
        (Primary::Active, Some(Detail::Running))
    );
    assert_eq!(v.signals[0].rule, "progress.running");
    assert_eq!(v.signals[0].text, "40 %");
    feed(&mut t, &mut d, b"\x1b]9;4;0\x07", 10_100);
    let v = d.verdict(t.screen(), 20_000);
    assert_ne!(v.primary, Primary::Active, "{v:?}");
}

#[test]
fn shell_integration_marks_say_prompt_command_and_exit_code() {
    let mut t = term();
    let mut d = Detector::new(settings(), &["bash".to_owned()], 0);
    let prompt = b"\x1b]133;A\x07dev@box:~$ \x1b]133;B\x07";
    feed(&mut t, &mut d, prompt, 100);
    let v = d.verdict(t.screen(), 200);
    assert_eq!((v.primary, v.detail), (Primary::Idle, Some(Detail::Ready)));
    feed(&mut t, &mut d, b"make\r\n\x1b]133;C\x07", 300);
    // Running, even silent for a long while.
    let v = d.verdict(t.screen(), 9_000);
    assert_eq!(
        (v.primary, v.detail),
        (Primary::Active, Some(Detail::Running))
    );
    assert_eq!(v.signals[0].rule, "shell.command");
    feed(&mut t, &mut d, b"\x1b]133;D;2\x07", 9_100);
    feed(&mut t, &mut d, prompt, 9_100);
    let v = d.verdict(t.screen(), 9_200);
    assert_eq!((v.primary, v.detail), (Primary::Idle, Some(Detail::Error)));
    assert_eq!(v.signals[0].text, "exit 2");
    // A question typed at the prompt is typed text, not a question.
    feed(&mut t, &mut d, b"echo 'Continue? [y/N] '", 9_300);
    let v = d.verdict(t.screen(), 9_400);
    assert_eq!(v.primary, Primary::Idle, "{v:?}");
    feed(
        &mut t,
        &mut d,
        b"\r\n\x1b]133;C\x07Continue? [y/N] \r\n\x1b]133;D;0\x07",
        9_500,
    );
    feed(&mut t, &mut d, prompt, 9_500);
    let v = d.verdict(t.screen(), 9_600);
    assert_eq!(
        (v.primary, v.detail),
        (Primary::Idle, Some(Detail::Finished))
    );
}

#[test]
fn an_agent_waiting_on_the_editor_it_ran_is_waiting_on_an_external_editor() {
    // Claude Code's Ctrl-G: `vi` on the prompt file, in Claude's own
    // process group, with Claude waiting for it. The editor draws no
    // file name once typing starts: the process facts tell.
    let mut t = term();
    let mut d = Detector::new(settings(), &["claude".to_owned()], 0);
    t.feed(b"\x1b[?1049h\x1b[Hdraft a longer prompt\r\n~\r\n~\r\n-- INSERT --");
    let facts = ProcessFacts {
        foreground_is_session: true,
        reading_terminal: true,
        canonical: false,
        foreground_command: "claude.exe".to_owned(),
        foreground_names: vec!["vi".to_owned()],
        handed_over_by: vec!["claude.exe".to_owned(), "claude.exe".to_owned()],
        ..ProcessFacts::default()
    };
    d.process(facts.clone(), 1_000);
    let v = d.verdict(t.screen(), 1_000);
    assert_eq!(
        (v.primary, v.detail),
        (Primary::Waiting, Some(Detail::ExternalEditor)),
        "{v:?}"
    );
    assert_eq!(v.signals[0].rule, "process.editor");
    // The agent the session runs is still Claude, and it is what
    // automation would act for.
    assert_eq!(v.agent.as_deref(), Some("claude"));
    assert_eq!(d.identity().map(|(a, _)| a), Some("claude"));
    // Started by typing `claude` at a shell: the same.
    let mut d = Detector::new(settings(), &["bash".to_owned()], 0);
    d.process(
        ProcessFacts {
            foreground_is_session: false,
            ..facts
        },
        1_000,
    );
    let v = d.verdict(t.screen(), 1_000);
    assert_eq!(
        (v.primary, v.detail),
        (Primary::Waiting, Some(Detail::ExternalEditor)),
        "{v:?}"
    );
    assert_eq!(d.identity().map(|(a, _)| a), Some("claude"));
}

/// A screen fixture's frame, its header lines (`#`, `command:`) left out.
fn fixture_screen(name: &str) -> Term<Recorder> {
    let path = format!(
        "{}/tests/fixtures/screens/{name}/frame.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).expect("the fixture");
    let body: Vec<&str> = text
        .lines()
        .skip_while(|l| l.starts_with('#') || l.starts_with("command:"))
        .collect();
    heimdall::detect::offline::text_screen(&body.join("\n"))
}

/// The dashboard's focus resizes a session, and its agent redraws: a
/// screen read halfway through (blank) does not end the wait, so the
/// wait's time goes on from when the dialog came (it started again at 0
/// and the inbox's order, longest waiting first, went with it).
#[test]
fn a_dialog_redrawn_for_a_new_size_keeps_its_time() {
    let dialog = fixture_screen("gemini_permission");
    let blank = term();
    let mut d = Detector::new(settings(), &["gemini".to_owned()], 0);
    let v = d.verdict(dialog.screen(), 1_000);
    assert_eq!(v.primary, Primary::Waiting, "{v:?}");
    let since = v.since_ms;
    d.resized(5_000);
    let v = d.verdict(blank.screen(), 5_010);
    assert_eq!((v.primary, v.since_ms), (Primary::Waiting, since));
    // Looked at again when the grace is over, if nothing comes before.
    assert_eq!(d.wake_at(), Some(6_000));
    let v = d.verdict(dialog.screen(), 5_100);
    assert_eq!((v.primary, v.since_ms), (Primary::Waiting, since));
    // A screen that stays otherwise after the grace is a change.
    d.resized(7_000);
    d.verdict(blank.screen(), 7_010);
    let v = d.verdict(blank.screen(), 8_000);
    assert_ne!(v.primary, Primary::Waiting, "{v:?}");
    // The program's end is never held back.
    d.resized(9_000);
    d.ended(9_010);
    let v = d.verdict(dialog.screen(), 9_020);
    assert_eq!(v.primary, Primary::Dead);
}

/// `claude` typed at a shell, then quit: the shell is in front again. The
/// title Claude set and its last screen, still showing above the prompt,
/// no longer make the session Claude's (`hm explain` named it, and its
/// rules read the shell).
#[test]
fn an_agent_quit_at_a_shell_is_no_longer_the_sessions_agent() {
    let mut t = term();
    let mut d = Detector::new(settings(), &["bash".to_owned()], 0);
    let claude_in_front = ProcessFacts {
        foreground_is_session: false,
        reading_terminal: true,
        canonical: false,
        foreground_command: "claude".to_owned(),
        foreground_names: vec!["claude".to_owned()],
        ..ProcessFacts::default()
    };
    feed(&mut t, &mut d, b"\x1b]0;\xe2\x9c\xb3 Claude Code\x07", 100);
    feed(&mut t, &mut d, claude(None).as_bytes(), 100);
    d.process(claude_in_front, 1_000);
    let v = d.verdict(t.screen(), 1_000);
    assert_eq!(v.agent.as_deref(), Some("claude"), "{v:?}");
    // Quit: the screen stays, a prompt comes under it, the title stays.
    feed(&mut t, &mut d, b"\r\n$ ", 2_000);
    let shell_in_front = ProcessFacts {
        foreground_is_session: true,
        reading_terminal: true,
        canonical: false,
        foreground_command: "bash".to_owned(),
        foreground_names: vec!["bash".to_owned()],
        ..ProcessFacts::default()
    };
    d.process(shell_in_front.clone(), 6_000);
    let v = d.verdict(t.screen(), 6_000);
    assert_ne!(v.agent.as_deref(), Some("claude"), "{v:?}");
    assert_eq!((v.primary, v.detail), (Primary::Idle, Some(Detail::Ready)));
    assert_eq!(d.identity(), None);
    // Its screen drawn again (the shell clears nothing): still the shell.
    feed(&mut t, &mut d, claude(None).as_bytes(), 7_000);
    d.process(shell_in_front, 8_000);
    let v = d.verdict(t.screen(), 8_000);
    assert_ne!(v.agent.as_deref(), Some("claude"), "{v:?}");
}

/// Back at its prompt after a turn, an agent has finished it, though its
/// screen alone says only that the prompt is there; busy starting up and
/// then at its prompt, it has finished nothing, nor busy at its prompt
/// with no keys given (Gemini CLI redrawing as it starts, which notified
/// `finished` at every start).
#[test]
fn an_agent_back_at_its_prompt_after_a_turn_has_finished_it() {
    let mut t = term();
    let mut d = Detector::new(settings(), &["claude".to_owned()], 0);
    // At rest: no spinner, no `esc to interrupt`.
    let resting = || {
        format!(
            "\u{1b}[H\u{1b}[2J ▐▛███▜▌   Claude Code v2.1.197\r\n\r\n● Done.\r\n\r\n{RULE}\r\n❯\u{a0}\r\n{RULE}\r\n  ? for shortcuts"
        )
    };
    let at = |t: &mut Term<Recorder>, d: &mut Detector, screen: String, ms: u64| {
        feed(t, d, screen.as_bytes(), ms);
        let v = d.verdict(t.screen(), ms + 5_000);
        (v.primary, v.detail)
    };
    // Starting up: work, then the prompt.
    assert_eq!(at(&mut t, &mut d, claude(Some(1)), 0).0, Primary::Active);
    assert_eq!(
        at(&mut t, &mut d, resting(), 10_000),
        (Primary::Idle, Some(Detail::Ready))
    );
    // Busy again at its prompt, by itself: no turn.
    assert_eq!(
        at(&mut t, &mut d, claude(Some(2)), 15_000).0,
        Primary::Active
    );
    assert_eq!(
        at(&mut t, &mut d, resting(), 17_000),
        (Primary::Idle, Some(Detail::Ready))
    );
    // A turn: keys, then work.
    d.typed();
    assert_eq!(
        at(&mut t, &mut d, claude(Some(3)), 20_000).0,
        Primary::Active
    );
    assert_eq!(
        at(&mut t, &mut d, resting(), 30_000),
        (Primary::Idle, Some(Detail::Finished))
    );
    // Said again while it rests.
    let v = d.verdict(t.screen(), 36_000);
    assert_eq!(v.detail, Some(Detail::Finished));
    // Busy after it with no keys: not another turn.
    assert_eq!(
        at(&mut t, &mut d, claude(Some(4)), 40_000).0,
        Primary::Active
    );
    assert_eq!(
        at(&mut t, &mut d, resting(), 50_000),
        (Primary::Idle, Some(Detail::Ready))
    );
}

/// A draft typed while the agent worked stays in its prompt when the turn
/// ends: the detail says `prompt_editing`, and a signal says the turn is
/// over all the same (nothing marked the end of such a turn: the
/// dashboard's `●` and `[[notify]]`'s `finished` go by it). A draft typed
/// at rest, after no turn, says nothing of one.
#[test]
fn a_turn_that_ends_with_a_draft_typed_ahead_is_over() {
    let mut t = term();
    let mut d = Detector::new(settings(), &["claude".to_owned()], 0);
    let resting = |draft: &str| {
        format!(
            "\u{1b}[H\u{1b}[2J ▐▛███▜▌   Claude Code v2.1.197\r\n\r\n● Done.\r\n\r\n{RULE}\r\n❯\u{a0}{draft}\r\n{RULE}\r\n  ? for shortcuts"
        )
    };
    let at = |t: &mut Term<Recorder>, d: &mut Detector, screen: String, ms: u64| {
        feed(t, d, screen.as_bytes(), ms);
        d.verdict(t.screen(), ms + 5_000)
    };
    let over = |v: &heimdall::detect::Verdict| {
        v.signals
            .iter()
            .any(|s| s.rule == heimdall::detect::TURN_OVER)
    };
    assert_eq!(
        at(&mut t, &mut d, claude(Some(1)), 0).primary,
        Primary::Active
    );
    // At rest with a draft, no turn behind it.
    let v = at(&mut t, &mut d, resting("fix the"), 10_000);
    assert_eq!(
        (v.primary, v.detail),
        (Primary::Idle, Some(Detail::PromptEditing))
    );
    assert!(!over(&v), "{v:?}");
    // A turn, a draft typed during it, then its end.
    d.typed();
    assert_eq!(
        at(&mut t, &mut d, claude(Some(3)), 20_000).primary,
        Primary::Active
    );
    d.typed();
    let v = at(&mut t, &mut d, resting("now the docs"), 30_000);
    assert_eq!(
        (v.primary, v.detail),
        (Primary::Idle, Some(Detail::PromptEditing))
    );
    assert!(over(&v), "{v:?}");
    // The draft sent: its Enter looked at before the agent redrew (the
    // look right after `hm send`'s Enter) is still the next turn's.
    d.typed();
    let v = d.verdict(t.screen(), 35_100);
    assert_eq!(v.detail, Some(Detail::PromptEditing));
    assert_eq!(
        at(&mut t, &mut d, claude(Some(5)), 36_000).primary,
        Primary::Active
    );
    d.typed();
    let v = at(&mut t, &mut d, resting("and the tests"), 42_000);
    assert!(over(&v), "{v:?}");
    // Busy again by itself, no keys: no new turn to be over (Gemini CLI
    // redraws at its prompt; each redraw was the end of another).
    assert_eq!(
        at(&mut t, &mut d, claude(Some(4)), 48_000).primary,
        Primary::Active
    );
    let v = at(&mut t, &mut d, resting("and the tests"), 54_000);
    assert_eq!(v.detail, Some(Detail::PromptEditing));
    assert!(!over(&v), "{v:?}");
}

/// A draft typed at the prompt after a finished turn, then deleted: the
/// same turn is over throughout, the draft is no new work (its deletion
/// read `finished` anew, a second `●` and `[[notify]]` run).
#[test]
fn a_draft_typed_and_deleted_after_a_turn_is_the_same_turn() {
    let mut t = term();
    let mut d = Detector::new(settings(), &["claude".to_owned()], 0);
    let resting = |draft: &str| {
        format!(
            "\u{1b}[H\u{1b}[2J ▐▛███▜▌   Claude Code v2.1.197\r\n\r\n● Done.\r\n\r\n{RULE}\r\n❯\u{a0}{draft}\r\n{RULE}\r\n  ? for shortcuts"
        )
    };
    let at = |t: &mut Term<Recorder>, d: &mut Detector, screen: String, ms: u64| {
        feed(t, d, screen.as_bytes(), ms);
        d.verdict(t.screen(), ms + 5_000)
    };
    let over = |v: &heimdall::detect::Verdict| {
        v.detail == Some(Detail::Finished)
            || v.signals
                .iter()
                .any(|s| s.rule == heimdall::detect::TURN_OVER)
    };
    at(&mut t, &mut d, claude(Some(1)), 0);
    at(&mut t, &mut d, resting(""), 10_000);
    d.typed();
    at(&mut t, &mut d, claude(Some(3)), 20_000);
    let v = at(&mut t, &mut d, resting(""), 30_000);
    assert_eq!(v.detail, Some(Detail::Finished));
    d.typed();
    let v = at(&mut t, &mut d, resting("abc"), 40_000);
    assert_eq!(v.detail, Some(Detail::PromptEditing));
    assert!(over(&v), "{v:?}");
    d.typed();
    let v = at(&mut t, &mut d, resting(""), 50_000);
    assert!(over(&v), "{v:?}");
}
