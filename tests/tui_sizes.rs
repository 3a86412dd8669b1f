//! The dashboard and the sizes of sessions, end to end in tmux at 80x24
//! and 200x50: a session keeps its own size whatever the grid does (pages,
//! zoom, the terminal resized, sessions coming), focus gives it the
//! dashboard's size and leaving keeps it; a pane is a window onto the
//! session's screen, cut on the right, never wrapped, also when another
//! terminal holds the session; titles keep the id; ended sessions say how
//! they ended and go when forgotten elsewhere; sessions started from the
//! dashboard are not told they run in its tmux.

use crate::common;

use std::ffi::OsString;

use common::tmux::{Tmux, pane};
use common::{HM, Sandbox, Session, terminal::Terminal, wait_until};
use heimdall::protocol::{ClientType, ServerType};

/// A session's pty size (rows, cols) and its screen's text, as its
/// supervisor reports them (INFO, SCREEN).
fn size_and_screen(sb: &Sandbox, id: &str) -> ((u16, u16), String) {
    let mut raw = common::Raw::connect(&sb.sock(id)).expect("connect");
    raw.send(ClientType::Info as u8, &[]);
    let info: serde_json::Value =
        serde_json::from_slice(&raw.expect(ServerType::Info as u8).payload).expect("INFO json");
    raw.send(ClientType::Screen as u8, &[]);
    let screen: serde_json::Value =
        serde_json::from_slice(&raw.expect(ServerType::Screen as u8).payload).expect("SCREEN json");
    let dim = |k: &str| info[k].as_u64().and_then(|v| u16::try_from(v).ok());
    (
        (dim("rows").expect("rows"), dim("cols").expect("cols")),
        screen["text"].as_str().unwrap_or_default().to_owned(),
    )
}

/// Says its size when it starts and again on every SIGWINCH.
const SAYS_SIZE: &str = "trap 'echo winch $(stty size)' WINCH; echo start $(stty size); \
                         while :; do sleep 0.2; done";

fn skip_without_tmux() -> bool {
    if common::tmux::available() {
        return false;
    }
    println!("skipped: tmux is not installed");
    true
}

/// `hm tui` on the sandbox's socket dir in tmux, once it has painted.
fn dashboard(sb: &Sandbox, (cols, rows): (u16, u16), env: &str) -> Tmux {
    let command = format!("{env} {HM} tui --socket-dir {}", sb.dir());
    let tmux = Tmux::start(sb, &command, (cols, rows)).expect("tmux starts");
    wait_until("the dashboard's footer", || {
        tmux.capture().contains("q quit")
    });
    tmux
}

/// Waits until the dashboard's screen satisfies `cond`, saying what it
/// showed if it never does.
fn wait_screen(tmux: &Tmux, what: &str, cond: impl Fn(&[String]) -> bool) {
    let deadline = std::time::Instant::now() + common::PATIENCE;
    loop {
        let lines = tmux.lines();
        if cond(&lines) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}; screen:\n{}",
            lines.join("\n")
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Twelve sessions of 100x30 (more than a page at 80x24); pages, zoom,
/// columns, the terminal resized and a session starting change none of
/// their sizes: no SIGWINCH reaches them. Focus gives one the dashboard's
/// size less the bar, and it keeps that size back in the grid.
#[test]
fn a_session_keeps_its_size_whatever_the_grid_does() {
    if skip_without_tmux() {
        return;
    }
    for (cols, rows) in [(80, 24), (200, 50)] {
        let sb = Sandbox::new();
        let ids: Vec<String> = (1..=12).map(|i| format!("s{i:02}")).collect();
        let _sessions: Vec<Session> = ids
            .iter()
            .map(|id| {
                sb.start(
                    id,
                    &["--cols", "100", "--rows", "30"],
                    &["sh", "-c", SAYS_SIZE],
                )
            })
            .collect();
        let tmux = dashboard(&sb, (cols, rows), "");
        wait_screen(&tmux, "the first pane's size line", |l| {
            pane(l, "s01").is_some_and(|p| p.shows("start 30 100"))
        });
        for keys in ["PageDown", "PageUp", "z", "Escape", "+", "-", "="] {
            tmux.keys(keys);
        }
        tmux.resize(cols / 2 + 7, rows / 2 + 3);
        wait_screen(&tmux, "the smaller terminal drawn", |l| {
            l.len() == usize::from(rows / 2 + 3) && l.iter().any(|r| r.contains("s01"))
        });
        tmux.resize(cols, rows);
        // A session starting.
        let _late = sb.start(
            "s13",
            &["--cols", "100", "--rows", "30"],
            &["sh", "-c", SAYS_SIZE],
        );
        tmux.keys("PageDown");
        tmux.keys("PageUp");
        // Drawn at the full size again: its footer on the last row, and a
        // border across the whole width.
        wait_screen(&tmux, "the grid back at its size", |l| {
            l.len() == usize::from(rows)
                && l.last().is_some_and(|r| r.contains("move"))
                && l.first()
                    .is_some_and(|r| r.trim_end().chars().count() == usize::from(cols))
                && pane(l, "s01").is_some()
        });
        for id in ids.iter().chain(std::iter::once(&"s13".to_string())) {
            let (size, text) = size_and_screen(&sb, id);
            assert_eq!(size, (30, 100), "{id} at {cols}x{rows}");
            assert!(!text.contains("winch"), "{id} was resized: {text}");
        }
        // Focus: the dashboard's size less its bar; leaving keeps it.
        tmux.keys("Home");
        tmux.keys("Enter");
        let focused = (rows - 1, cols);
        wait_until("the focused session at the dashboard's size", || {
            size_and_screen(&sb, "s01").0 == focused
        });
        tmux.keys("C-\\");
        wait_screen(&tmux, "the grid again", |l| {
            l.last().is_some_and(|r| r.contains("move"))
        });
        tmux.keys("PageDown");
        tmux.keys("PageUp");
        wait_screen(&tmux, "the grid after a page and back", |l| {
            pane(l, "s01").is_some_and(|p| p.shows(&format!("winch {} {}", focused.0, focused.1)))
        });
        let (size, text) = size_and_screen(&sb, "s01");
        assert_eq!(size, focused, "leaving focus shrank it");
        assert_eq!(text.matches("winch").count(), 1, "{text}");
    }
}

/// Two dashboards in focus on one session: the later one's size stands,
/// the earlier one says `held` and leaves it so until a key typed there
/// takes it back. They resized it back and forth (a SIGWINCH every few
/// seconds, each a redraw) for as long as both stayed in focus.
#[test]
fn two_dashboards_in_focus_do_not_fight_over_a_sessions_size() {
    if skip_without_tmux() {
        return;
    }
    let sb = Sandbox::new();
    let _s = sb.start(
        "sh1",
        &["--cols", "100", "--rows", "30"],
        &["sh", "-c", SAYS_SIZE],
    );
    let first = dashboard(&sb, (120, 30), "");
    first.keys("Enter");
    wait_until("the first dashboard's size", || {
        size_and_screen(&sb, "sh1").0 == (29, 120)
    });
    let second = dashboard(&sb, (90, 20), "");
    second.keys("Enter");
    wait_until("the second dashboard's size", || {
        size_and_screen(&sb, "sh1").0 == (19, 90)
    });
    wait_screen(&first, "the first one saying it is held", |l| {
        l.last().is_some_and(|r| r.contains("90x19 held"))
    });
    // Left so: the first dashboard learns of it at each line the session
    // prints, and gave it its own size back each time.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while std::time::Instant::now() < until {
        assert_eq!(size_and_screen(&sb, "sh1").0, (19, 90), "taken back");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // A key in the first: its size again.
    first.keys("Enter");
    wait_until("the first dashboard's size again", || {
        size_and_screen(&sb, "sh1").0 == (29, 120)
    });
}

/// A line wider than the pane is cut at the pane's edge with a mark,
/// never wrapped onto the next row; so is a session held at another
/// terminal's size, which says `held` from the first paint and is not
/// garbled (before, it was drawn at the pane's size and the held screen's
/// rows ran into each other: `● Done: thelstepmrandand`).
#[test]
fn a_held_session_is_marked_at_once_and_shown_cut_not_garbled() {
    if skip_without_tmux() {
        return;
    }
    let sb = Sandbox::new();
    let line = "Done: the step ran and wrote its stamp to the build directory, all of it";
    let script = format!("printf '%s\\n' '{line}'; printf 'second row\\n'; exec sleep 600");
    let _s = sb.start("held", &[], &["sh", "-c", &script]);
    let mut person = Terminal::start(
        HM.as_ref(),
        &[
            OsString::from("attach"),
            "held".into(),
            "--socket-dir".into(),
            sb.dir().into(),
        ],
        &sb.terminal_env(&[]),
        sb.path(),
        (30, 100),
        "$ hm attach held",
    );
    person.wait_for("the attach's bar", |t| t.last_row().contains("held"));
    wait_until("the session at the attach's size", || {
        size_and_screen(&sb, "held").0 == (29, 100)
    });
    for (cols, rows) in [(80, 24), (200, 50)] {
        let tmux = dashboard(&sb, (cols, rows), "");
        wait_screen(&tmux, "the held pane", |l| {
            pane(l, "held").is_some_and(|p| p.bottom.contains("100x29 held"))
        });
        let p = pane(&tmux.lines(), "held").expect("pane");
        let row = p
            .body
            .iter()
            .position(|r| r.starts_with("Done: the step"))
            .expect("the line");
        let shown = p.body[row].trim_end_matches(['›', ' ']);
        assert!(line.starts_with(shown), "garbled: {:?}", p.body);
        if p.body[row].chars().count() < line.len() {
            assert!(p.body[row].ends_with('›'), "no cut mark: {:?}", p.body);
        }
        assert!(
            p.body[row + 1].starts_with("second row"),
            "wrapped: {:?}",
            p.body
        );
    }
    person.send(b"\x1c");
    assert_eq!(person.wait_exit(), 0);
}

/// The titles of three sessions waiting at 80x24 (three columns) keep
/// each 8-character id whole, with a short badge.
#[test]
fn titles_keep_the_id_at_80x24() {
    if skip_without_tmux() {
        return;
    }
    let sb = Sandbox::new();
    let ids = ["build-42", "agent007", "deploy-1"];
    let _s: Vec<Session> = ids
        .iter()
        .map(|id| {
            sb.start(
                id,
                &["--classifier", "agent"],
                &["bash", "-c", "read -p 'Drop table users? [y/N] ' x"],
            )
        })
        .collect();
    let tmux = dashboard(&sb, (80, 24), "");
    // Three columns (two would be chosen for three panes).
    tmux.keys("+");
    wait_screen(&tmux, "three panes side by side", |l| {
        l.first()
            .is_some_and(|r| r.matches(['╭', '┏']).count() == 3)
    });
    wait_screen(&tmux, "every pane waiting, its id whole", |l| {
        ids.iter().all(|id| {
            pane(l, id).is_some_and(|p| p.top.contains(" W ") || p.top.contains("waiting"))
        })
    });
    for id in ids {
        let p = pane(&tmux.lines(), id).expect("pane");
        assert!(p.shows("Drop table users? [y/N]"), "{p:?}");
    }
}

/// `exited 0` and `exited 3` in the titles; `hm rm` and `hm clean` take
/// the panes away in a running dashboard, and `hm restart` brings one back
/// live, each within a couple of seconds (the dashboard looks every
/// second).
#[test]
fn ended_sessions_say_how_and_leave_when_forgotten_elsewhere() {
    if skip_without_tmux() {
        return;
    }
    let sb = Sandbox::new();
    for (id, code) in [("ok", 0), ("bad", 3), ("old", 0)] {
        // Run again with `again` in its directory, it stays.
        let script = format!(
            "if [ -e again ]; then echo back-again; exec sleep 600; fi; echo said-{id}; exit {code}"
        );
        let mut s = sb.spawn(id, &[], &["sh", "-c", &script]);
        s.wait_exit();
    }
    let tmux = dashboard(&sb, (80, 24), "");
    wait_screen(&tmux, "the ended panes", |l| {
        pane(l, "ok").is_some_and(|p| p.top.contains("exited 0") && p.shows("said-ok"))
            && pane(l, "bad").is_some_and(|p| p.top.contains("exited 3"))
            && pane(l, "old").is_some()
    });
    let within = |what: &str, gone: &[&str], act: &dyn Fn()| {
        let t0 = std::time::Instant::now();
        act();
        wait_screen(&tmux, what, |l| gone.iter().all(|id| pane(l, id).is_none()));
        let took = t0.elapsed();
        // A second between looks, a frame, and room for a busy machine.
        assert!(took.as_secs_f64() < 3.0, "{what} took {took:?}");
    };
    within("the pane forgotten by hm rm", &["old"], &|| {
        assert!(sb.cmd(&["rm", "old"]).status.success());
    });
    // Started again elsewhere: live again, with its new output.
    std::fs::write(sb.path().join("again"), "").expect("write");
    let restarted = sb.cmd(&["restart", "bad"]);
    assert!(restarted.status.success(), "{restarted:?}");
    wait_screen(&tmux, "the restarted session", |l| {
        pane(l, "bad").is_some_and(|p| !p.top.contains("failed") && p.shows("back-again"))
    });
    within("the pane cleaned away", &["ok"], &|| {
        assert!(sb.cmd(&["clean"]).status.success());
    });
    let _ = sb.cmd(&["kill", "bad"]);
}

/// A session started with `n` in a dashboard running in tmux gets none of
/// tmux's (or screen's, or zellij's) variables, and the dashboard's size
/// less its bar.
#[test]
fn a_session_started_from_the_dashboard_is_not_told_it_runs_in_tmux() {
    if skip_without_tmux() {
        return;
    }
    let sb = Sandbox::new();
    let tmux = dashboard(
        &sb,
        (100, 30),
        "env STY=1.pts ZELLIJ=0 ZELLIJ_SESSION_NAME=z",
    );
    tmux.keys("n");
    wait_screen(&tmux, "the prompt for an id", |l| {
        l.iter().any(|r| r.contains("id:"))
    });
    tmux.keys("C-u");
    tmux.type_text("envcheck");
    tmux.keys("Enter");
    wait_screen(&tmux, "the prompt for a command", |l| {
        l.iter().any(|r| r.contains("command:"))
    });
    tmux.keys("C-u");
    tmux.type_text(
        "sh -c 'echo T=${TMUX:-none}/${TMUX_PANE:-none} S=${STY:-none} \
         Z=${ZELLIJ:-none}/${ZELLIJ_SESSION_NAME:-none} size=$(stty size); sleep 600'",
    );
    tmux.keys("Enter");
    wait_screen(&tmux, "the new session's environment", |l| {
        pane(l, "envcheck").is_some_and(|p| p.shows("T=none/none S=none Z=none/none size=29 100"))
    });
    let _ = sb.cmd(&["kill", "envcheck"]);
}
