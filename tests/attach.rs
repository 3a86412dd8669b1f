//! `hm attach` and launch-and-attach `hm run`, driven through a real pty
//! whose output is rendered by vt100: what the user sees while attached,
//! and the state their terminal is left in on every way out.

use crate::common;
use crate::common::terminal;

use std::ffi::OsString;
use std::os::unix::fs::DirBuilderExt;
use std::time::{Duration, Instant};

use common::{HM, Raw, Sandbox, wait_until};
use heimdall::protocol::{ClientType, ServerType};
use nix::sys::signal::{Signal, kill};
use nix::sys::termios::LocalFlags;
use nix::unistd::Pid;
use terminal::Terminal;
use vt100::{MouseProtocolEncoding, MouseProtocolMode};

const ROWS: u16 = 24;
const COLS: u16 = 80;

/// Every mode a full-screen program may switch on, and a window title.
const MODES_ON: &str = r"\033[?1000h\033[?1006h\033[?2004h\033[?1h\033=\033[?1004h\033[?25l\033]0;evil\007\033[>1u\033[4h\033[20h\033[?5h\033[?69h";

const SHELL: &[&str] = &["bash", "--norc", "--noprofile", "-i"];

/// Runs `hm ARGS` in a fresh ROWS×COLS terminal, with the sandbox's
/// environment.
fn hm_in_terminal(sb: &Sandbox, args: &[&str]) -> Terminal {
    let argv: Vec<OsString> = args.iter().map(OsString::from).collect();
    let shown: Vec<&str> = args.iter().copied().take(2).collect();
    Terminal::start(
        HM.as_ref(),
        &argv,
        &sb.terminal_env(&[
            // Lets a test make the client panic (Ctrl-G) to check the restore.
            ("HEIMDALL_TEST_PANIC", "1"),
        ]),
        sb.path(),
        (ROWS, COLS),
        &format!("$ hm {}", shown.join(" ")),
    )
}

/// Whether `id`'s status bar is on the last row.
fn bar_shown(t: &Terminal, id: &str) -> bool {
    t.last_row().starts_with(&format!(" hm · {id} "))
}

/// `hm attach ID` in a new terminal, once the status bar is up.
fn attach(sb: &Sandbox, id: &str) -> Terminal {
    let mut t = hm_in_terminal(sb, &["attach", id, "--socket-dir", sb.dir()]);
    t.wait_for("the status bar", |t| bar_shown(t, id));
    t
}

/// How many people's terminals the supervisor of `id` counts (INFO).
fn attached_terminals(sb: &Sandbox, id: &str) -> u64 {
    let mut raw = Raw::connect(&sb.sock(id)).expect("connect");
    raw.send(ClientType::Info as u8, &[]);
    let info = raw.expect(ServerType::Info as u8);
    let v: serde_json::Value = serde_json::from_slice(&info.payload).expect("INFO is JSON");
    v["terminals"].as_u64().unwrap_or(0)
}

/// What the user's terminal must look like after any attach ends: back on
/// the main screen showing what it showed before, every mode the child set
/// switched off, the title and termios as they were.
fn assert_restored(t: &Terminal) {
    let s = t.screen();
    assert!(!s.alternate_screen(), "still on the alternate screen");
    assert!(!s.hide_cursor(), "cursor left hidden");
    assert_eq!(s.mouse_protocol_mode(), MouseProtocolMode::None);
    assert_eq!(s.mouse_protocol_encoding(), MouseProtocolEncoding::Default);
    assert!(!s.bracketed_paste(), "bracketed paste left on");
    assert!(!s.application_cursor(), "application cursor left on");
    assert!(!s.application_keypad(), "application keypad left on");
    let m = t.model();
    assert!(!m.focus_events, "focus events left on");
    assert_eq!(m.kitty_flags, 0, "kitty keyboard flags left set");
    assert_eq!(m.scroll_region, None, "scroll region left set");
    assert!(
        m.other_modes.is_empty(),
        "modes left set: {:?}",
        m.other_modes
    );
    assert_eq!(m.title, "outer", "window title not restored");
    let now = t.termios();
    assert!(
        now.local_flags
            .contains(LocalFlags::ECHO | LocalFlags::ICANON | LocalFlags::ISIG),
        "terminal left in raw mode: {:?}",
        now.local_flags
    );
    assert_eq!(
        now,
        terminal::pristine_termios(),
        "termios not restored exactly"
    );
}

/// The one line `hm` left on the main screen, under the prompt that ran
/// it: the user's screen is as it was, plus that line.
fn closing_line(t: &Terminal) -> String {
    let lines = t.lines();
    assert_eq!(
        lines.len(),
        2,
        "expected the prompt and one line: {lines:#?}"
    );
    assert!(lines[0].starts_with("$ hm "), "{lines:#?}");
    lines[1].clone()
}

/// After a session ended: the prompt, the session's last screen (as plain
/// lines), and the closing line, which is returned with the middle.
fn last_screen_and_closing_line(t: &Terminal) -> (Vec<String>, String) {
    let mut lines = t.lines();
    assert!(lines.len() >= 2, "{lines:#?}");
    assert!(lines[0].starts_with("$ hm "), "{lines:#?}");
    let last = lines.pop().expect("closing line");
    (lines.split_off(1), last)
}

#[test]
fn attach_shows_the_session_above_a_status_bar_one_row_short() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "api",
        &[],
        &[
            "sh",
            "-c",
            "echo hello-from-child; read x; stty size; exec cat",
        ],
    );
    let mut t = attach(&sb, "api");
    t.wait_for("the child's output", |t| t.has_line("hello-from-child"));
    assert!(
        t.screen().alternate_screen(),
        "attach uses the alternate screen"
    );
    // Once the state is known the bar shows it, with the time in it, on
    // the right, after the way out.
    t.wait_for("the state in the bar", |t| {
        let bar = t.last_row();
        let words: Vec<&str> = bar.split_whitespace().collect();
        // `idle 2s`, or with what it waits for: `waiting · input 2s`.
        let time = words.last().copied().unwrap_or("");
        words.len() >= 9
            && words[3..7] == ["Ctrl-\\", "detaches", "Ctrl-]", "history"]
            && ["idle", "active", "waiting"].contains(&words[7])
            && time.ends_with('s')
            && time.starts_with(|c: char| c.is_ascii_digit())
    });
    t.send(b"\r");
    t.wait_for("stty size", |t| {
        t.has_line(&format!("{} {}", ROWS - 1, COLS))
    });
    assert!(bar_shown(&t, "api"));
}

/// The bar follows the session's state as the supervisor sees it, not at
/// the client's next question: with an idle threshold of ten minutes, a
/// bar that waited for one would say "active" at the prompt all along
/// (asked when output came, not again within a second of that). Output
/// in the first second after attaching is taken for a redraw for its size,
/// so the work goes on for longer than that. It says what the session
/// waits for, as the dashboard and `hm ls` do.
#[test]
fn the_bar_shows_a_prompt_as_waiting_as_soon_as_the_session_does() {
    let sb = Sandbox::new();
    // Quiet (not reading the terminal, which would count as waiting) until
    // the test says go.
    let _s = sb.start(
        "ask",
        &["--idle-threshold-ms", "600000"],
        &[
            "sh",
            "-c",
            "until [ -e go ]; do sleep 0.05; done; echo working; sleep 1.2; \
             echo more; sleep 0.3; printf 'Continue? [y/n] '; read x; exec cat",
        ],
    );
    let mut t = attach(&sb, "ask");
    t.wait_for("an idle bar", |t| t.last_row().contains("idle"));
    std::fs::write(sb.path().join("go"), "").expect("write the go file");
    t.wait_for("the prompt", |t| t.contains("Continue? [y/n]"));
    // And at what, as `hm ls` says it.
    t.wait_for("a bar waiting for input", |t| {
        t.last_row().contains("waiting · input")
    });
    let ls = sb.cmd(&["ls"]);
    assert!(
        String::from_utf8_lossy(&ls.stdout).contains("waiting · input"),
        "{ls:?}"
    );
}

/// The bar shows the state `hm status` shows: a shell given a short
/// command is "active" for the moment before its screen settles, and a
/// question asked then (as attach asks when keys go in) said so, while the
/// supervisor's settled verdict stayed idle and so was never pushed. With
/// an idle threshold of ten minutes the bar said "active" until then.
#[test]
fn a_short_command_leaves_the_bar_idle_as_hm_status_says() {
    let sb = Sandbox::new();
    let _s = sb.start("quick", &["--idle-threshold-ms", "600000"], SHELL);
    let mut t = attach(&sb, "quick");
    t.wait_for("an idle bar", |t| t.last_row().contains("idle"));
    let quiet_for = |ms: u64| {
        wait_until(&format!("hm status to say idle, quiet for {ms} ms"), || {
            let status = sb.cmd(&["status", "quick", "--json"]);
            serde_json::from_slice::<serde_json::Value>(&status.stdout).is_ok_and(|j| {
                j["state"] == "idle" && j["idle_ms"].as_u64().is_some_and(|q| q >= ms)
            })
        });
    };
    for n in 1..=2 {
        // Keys after a quiet second are asked about (is the session still
        // answering?), and the answer comes before the shell's screen
        // has settled.
        quiet_for(1200);
        // Typed, then entered, as a person (or tmux) sends them.
        t.send(format!("echo quick-{n}").as_bytes());
        t.send(b"\r");
        t.wait_for("the command's output", |t| {
            t.has_line(&format!("quick-{n}"))
        });
        // Once the shell has been quiet a while, its screen has settled.
        quiet_for(300);
        t.wait_for("an idle bar, as hm status says", |t| {
            t.last_row().contains("idle")
        });
    }
}

#[test]
fn typing_reaches_the_child() {
    let sb = Sandbox::new();
    let _s = sb.start("sh", &[], SHELL);
    let mut t = attach(&sb, "sh");
    t.send(b"echo typed-$((1+1))\r");
    t.wait_for("the command's output", |t| t.has_line("typed-2"));
}

#[test]
fn resizing_the_terminal_resizes_the_session_and_moves_the_bar() {
    let sb = Sandbox::new();
    let _s = sb.start("rs", &[], SHELL);
    let mut t = attach(&sb, "rs");
    t.resize(30, 100);
    t.wait_for("the bar on the new last row", |t| bar_shown(t, "rs"));
    t.send(b"stty size\r");
    t.wait_for("the new size in the child", |t| t.has_line("29 100"));
    assert!(bar_shown(&t, "rs"));
}

/// The bar names the session as `hm ls` does: its label (`hm run
/// --label`) after its id, where the keys leave room; in a narrow
/// terminal the way out stays and the label goes.
#[test]
fn the_bar_shows_the_label_where_the_keys_leave_room() {
    let sb = Sandbox::new();
    let _s = sb.start("lab", &["--label", "review PR 42"], SHELL);
    let mut t = attach(&sb, "lab");
    t.wait_for("the label after the id, and the keys", |t| {
        let bar = t.last_row();
        bar.starts_with(" hm · lab · review PR 42 ") && bar.contains("Ctrl-\\ detaches")
    });
    t.resize(ROWS, 48);
    t.wait_for("the way out kept, the label gone", |t| {
        let bar = t.last_row();
        bar.starts_with(" hm · lab ") && bar.contains("Ctrl-\\ detaches") && !bar.contains("review")
    });
}

/// A terminal shrunk while the cursor is on its last row keeps the cursor
/// there, on what becomes the bar's row: below the scroll region set for
/// the new size, where output never scrolls and the next bar covers it.
/// The output after the shrink must show above the bar.
#[test]
fn output_after_shrinking_with_the_cursor_at_the_bottom_shows_above_the_bar() {
    let sb = Sandbox::new();
    let _s = sb.start("shrink", &[], SHELL);
    let mut t = attach(&sb, "shrink");
    t.send(b"seq 1 60\r");
    t.wait_for("the cursor on the last row above the bar", |t| {
        t.has_line("60") && t.screen().cursor_position().0 == ROWS - 2
    });
    t.resize(ROWS - 4, COLS);
    t.wait_for("the bar on the new last row", |t| {
        bar_shown(t, "shrink") && t.screen().size().0.get() == ROWS - 4
    });
    t.send(b"echo after-$((6*7))\r");
    t.wait_for("the output above the bar", |t| {
        let rows = t.screen().size().0.get();
        (0..rows - 1).any(|r| t.row(r) == "after-42")
    });
    assert!(bar_shown(&t, "shrink"), "the bar is still drawn");
}

/// A terminal grown while attached keeps what it showed where it was,
/// the old bar included, which output then ran into: only the new last
/// row holds a bar.
#[test]
fn growing_the_terminal_leaves_no_old_bar_behind() {
    let sb = Sandbox::new();
    let _s = sb.start("grow", &[], SHELL);
    let mut t = attach(&sb, "grow");
    t.resize(ROWS + 6, COLS);
    t.wait_for("the bar on the new last row", |t| {
        bar_shown(t, "grow") && t.screen().size().0.get() == ROWS + 6
    });
    t.send(b"echo grown-$((6*7))\r");
    t.wait_for("the output", |t| t.has_line("grown-42"));
    let rows = t.screen().size().0.get();
    let bars: Vec<u16> = (0..rows)
        .filter(|&r| t.row(r).contains("detaches"))
        .collect();
    assert_eq!(bars, [rows - 1], "one bar, on the last row");
}

#[test]
fn several_clients_see_the_same_session() {
    let sb = Sandbox::new();
    let _s = sb.start("two", &[], SHELL);
    let mut a = attach(&sb, "two");
    let mut b = attach(&sb, "two");
    a.send(b"echo both-$((2+3))\r");
    a.wait_for("output in the typing client", |t| t.has_line("both-5"));
    b.wait_for("output in the other client", |t| t.has_line("both-5"));
}

/// `hm attach --read-only` watches: the session's output shows, no key
/// reaches it (the bar says so), the size of whoever works in it stays
/// (the bar says that too) until they leave, and the detach key still
/// leaves.
#[test]
fn a_read_only_attach_shows_the_session_and_types_nothing() {
    let sb = Sandbox::new();
    let _s = sb.start("ro", &[], SHELL);
    let mut worker = attach(&sb, "ro");
    let mut t = hm_in_terminal(
        &sb,
        &["attach", "--read-only", "ro", "--socket-dir", sb.dir()],
    );
    t.wait_for("the bar, saying it watches", |t| {
        bar_shown(t, "ro") && t.last_row().contains("read-only")
    });
    // The watcher's terminal is no size for the session while the
    // worker's is attached, at first or when it changes.
    t.resize(30, 100);
    t.wait_for("the bar on the new last row", |t| bar_shown(t, "ro"));
    // An arrow is a key typed too (it begins with ESC, as the terminal's
    // answers to queries do, which are not).
    t.send(b"\x1b[A");
    t.wait_for("the bar saying where the arrow went", |t| {
        t.last_row().contains("read-only: Ctrl-\\ detaches")
    });
    t.send(b"echo typed-$((1+1))\r");
    // Typed after the watcher's keys were dealt with: typed, they would
    // have run first.
    worker.send(b"echo worked-$((2+2)); stty size\r");
    for (who, term) in [("watcher", &mut t), ("worker", &mut worker)] {
        term.wait_for(
            &format!("the worker's command in the {who}'s terminal"),
            |t| t.has_line("worked-4") && t.has_line("23 80"),
        );
        assert!(!term.has_line("typed-2"), "{who}: {:#?}", term.lines());
    }
    // Its bar says the size is another's, until the worker leaves and
    // the session takes the watcher's (said at its next output).
    t.wait_for("the size held for the worker, in the bar", |t| {
        t.last_row().contains("read-only, 80x23 held")
    });
    worker.send(b"\x1c");
    assert_eq!(worker.wait_exit(), 0);
    let sent = sb.cmd(&["send", "ro", "stty size", "--enter"]);
    assert!(sent.status.success(), "{}", common::stderr(&sent));
    t.wait_for("the watcher's size, no longer held", |t| {
        t.has_line("29 100")
            && t.last_row().contains("read-only ")
            && !t.last_row().contains("held")
    });
    t.send(b"\x1c");
    assert_eq!(t.wait_exit(), 0);
    t.wait_for("the closing line", |t| t.lines().len() >= 2);
    assert_eq!(closing_line(&t), "[detached from session ro]");
}

#[test]
fn detach_key_inside_a_paste_or_a_burst_is_typed_not_obeyed() {
    let sb = Sandbox::new();
    // The child sees every byte: no signals, no line editing, no echo.
    let _s = sb.start(
        "paste",
        &[],
        &[
            "sh",
            "-c",
            "stty -isig -icanon -echo; echo ready; exec cat -v",
        ],
    );
    let mut t = attach(&sb, "paste");
    t.wait_for("the child", |t| t.has_line("ready"));
    t.send(b"\x1b[200~abc\x1cdef\x1b[201~");
    t.wait_for("the paste in the child", |t| {
        t.contains(r"^[[200~abc^\def^[[201~")
    });
    t.send(b"x\x1cy");
    t.wait_for("the burst in the child", |t| t.contains(r"x^\y"));
    // A paste that arrives in pieces, the key alone in the middle of it.
    t.send(b"\x1b[200~p");
    t.wait_for("the start of the paste", |t| t.contains("^[[200~p"));
    t.send(b"\x1c");
    t.wait_for("the key inside the paste", |t| t.contains(r"^[[200~p^\"));
    t.send(b"q\x1b[201~");
    t.wait_for("the end of the paste", |t| t.contains(r"p^\q^[[201~"));
    assert!(t.try_exit().is_none(), "a pasted detach key detached");
    // After the paste, the key on its own detaches again.
    t.send(b"\x1c");
    t.expect_exit(0);
    t.wait_for("the detach message", |t| {
        t.contains("[detached from session paste]")
    });
}

/// How a test ends an attachment.
#[derive(Debug, Clone, Copy)]
enum Ending {
    DetachKey,
    ChildExit,
    Signal(Signal),
    SupervisorKilled,
    Panic,
}

/// Attaches to a child that switches on every mode, ends the attachment
/// as `ending` says, and checks the terminal is restored. Returns the
/// sandbox and session so callers can look further.
fn end_attachment(ending: Ending) -> (Sandbox, common::Session, i32, String) {
    let sb = Sandbox::new();
    let script = format!("read x; printf '{MODES_ON}'; echo modes-on; read y; exit 7");
    let mut session = sb.start("modes", &[], &["sh", "-c", &script]);
    let mut t = attach(&sb, "modes");
    t.send(b"go\r");
    t.wait_for("every mode switched on", |t| {
        let s = t.screen();
        t.has_line("modes-on")
            && s.mouse_protocol_mode() == MouseProtocolMode::PressRelease
            && s.mouse_protocol_encoding() == MouseProtocolEncoding::Sgr
            && s.bracketed_paste()
            && s.application_cursor()
            && s.application_keypad()
            && s.hide_cursor()
            && t.model().focus_events
            && t.model().kitty_flags == 1
            && t.model().title == "evil"
    });
    let started = Instant::now();
    match ending {
        Ending::DetachKey => t.send(b"\x1c"),
        Ending::ChildExit => t.send(b"\r"),
        Ending::Signal(sig) => t.signal(sig),
        Ending::SupervisorKilled => session.child.kill().expect("kill the supervisor"),
        Ending::Panic => t.send(b"\x07"),
    }
    let code = t.wait_exit();
    let took = started.elapsed();
    // The message is printed after the terminal is restored, so once it is
    // on screen everything before it has been seen.
    t.wait_for("the closing message", |t| {
        t.lines().len() >= 2 && !t.screen().alternate_screen()
    });
    assert_restored(&t);
    let message = match ending {
        Ending::ChildExit => {
            // The child's last screen stays, as plain text: the modes it
            // switched on are off (checked above).
            let (screen, message) = last_screen_and_closing_line(&t);
            assert_eq!(screen, ["go", "modes-on"], "{screen:#?}");
            message
        }
        _ => closing_line(&t),
    };
    if matches!(ending, Ending::SupervisorKilled) {
        // Requirement: noticed within a second. Allow for a loaded machine.
        assert!(
            took < Duration::from_millis(1500),
            "took {took:?} to notice"
        );
    }
    (sb, session, code, message)
}

#[test]
fn detaching_restores_the_terminal_and_leaves_the_session_running() {
    let (sb, _session, code, message) = end_attachment(Ending::DetachKey);
    assert_eq!(code, 0);
    assert_eq!(message, "[detached from session modes]");
    let status = sb.cmd(&["status", "modes"]);
    assert!(status.status.success(), "{}", common::stderr(&status));
}

#[test]
fn child_exit_restores_the_terminal_and_passes_on_the_exit_code() {
    let (_sb, _session, code, message) = end_attachment(Ending::ChildExit);
    assert_eq!(message, "[session exited with code 7]");
    assert_eq!(code, 7);
}

/// `hm run --id ID -- sh -c SCRIPT` (attached) in a new terminal.
fn run_attached(sb: &Sandbox, id: &str, script: &str) -> Terminal {
    let dir = sb.dir();
    hm_in_terminal(
        sb,
        &[
            "run",
            "--id",
            id,
            "--socket-dir",
            dir,
            "--",
            "sh",
            "-c",
            script,
        ],
    )
}

#[test]
fn a_short_command_run_attached_leaves_its_output_on_screen() {
    let sb = Sandbox::new();
    let script = "printf '\\033[1mfirst\\033[0m line\\n'; echo second line; exit 3";
    let mut t = run_attached(&sb, "brief", script);
    t.expect_exit(3);
    t.wait_for("the closing message", |t| {
        t.contains("[session exited with code 3]")
    });
    let (screen, message) = last_screen_and_closing_line(&t);
    assert_eq!(screen, ["first line", "second line"]);
    assert_eq!(message, "[session exited with code 3]");
    assert!(
        !t.screen().cell(1, 0).is_some_and(|c| c.bold()),
        "plain text only"
    );
}

#[test]
fn a_session_that_ends_while_attach_is_stopped_still_gives_its_exit_code() {
    let sb = Sandbox::new();
    let mut t = run_attached(&sb, "paused", "read x; echo bye; exit 3");
    // The bar says the program waits at its `read`: the first output
    // after waking makes attach ask for STATUS, a write into a connection
    // the supervisor has closed.
    t.wait_for("a waiting bar", |t| {
        bar_shown(t, "paused") && t.last_row().contains("waiting")
    });
    kill(t.pid(), Signal::SIGSTOP).expect("stop attach");
    let mut other = common::Raw::connect(&sb.sock("paused")).expect("connect");
    other.send(ClientType::Input as u8, b"\n");
    // Its EXIT written, the supervisor leaves.
    wait_until("the supervisor to leave", || !sb.sock("paused").exists());
    t.send(b"k");
    // Taken in while attach is stopped (raw, so not echoed); a key still
    // on its way when the terminal is put back would echo as the shell's.
    wait_until("the key in the terminal's input", || t.unread_input() == 1);
    kill(t.pid(), Signal::SIGCONT).expect("continue attach");
    t.expect_exit(3);
    t.wait_for("the closing message", |t| {
        t.contains("[session exited with code 3]")
    });
    let (screen, message) = last_screen_and_closing_line(&t);
    assert_eq!(screen, ["bye"], "{:#?}", t.lines());
    assert_eq!(message, "[session exited with code 3]");
    // Read by attach or dropped with the terminal put back: not left for
    // the shell that reads next.
    assert_eq!(t.unread_input(), 0, "the key left for the shell");
}

#[test]
fn a_session_killed_while_attached_says_so_in_hm_kills_words() {
    let sb = Sandbox::new();
    let mut t = run_attached(&sb, "victim", "echo up; exec sleep 600");
    t.wait_for("the program's output", |t| t.has_line("up"));
    let out = sb.cmd(&["kill", "victim"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    t.expect_exit(143);
    let message = "[session killed by SIGTERM (exit code 143)]";
    t.wait_for("the closing message", |t| t.contains(message));
    assert!(!t.contains("exited with code"), "{:#?}", t.lines());
}

#[test]
fn the_last_screen_is_what_followed_the_programs_alternate_screen() {
    let sb = Sandbox::new();
    // A full-screen phase, then the error written with the switch back in
    // one write; a redundant switch back changes nothing.
    let script = "printf '\\033[?1049hfull-screen\\n'; read x; \
                  printf '\\033[?1049lerror: boom\\n\\033[?1049l'; exit 2";
    let mut t = run_attached(&sb, "phases", script);
    t.wait_for("the full-screen phase", |t| t.has_line("full-screen"));
    t.send(b"\r");
    t.expect_exit(2);
    t.wait_for("the closing message", |t| {
        t.contains("[session exited with code 2]")
    });
    let (screen, _) = last_screen_and_closing_line(&t);
    assert_eq!(screen, ["error: boom"]);
}

#[test]
fn a_supervisor_that_does_not_answer_is_shown_as_such() {
    let sb = Sandbox::new();
    let s = sb.start("frozen", &[], &["sh", "-c", "echo alive; exec cat"]);
    let sup = Pid::from_raw(s.child.id() as i32);
    // Stopped before we come: refused, the terminal untouched.
    kill(sup, Signal::SIGSTOP).expect("stop the supervisor");
    let mut t = hm_in_terminal(&sb, &["attach", "frozen", "--socket-dir", sb.dir()]);
    t.expect_exit(1);
    t.wait_for("the error", |t| {
        t.contains("hm: session 'frozen' is not responding")
    });
    assert!(!t.screen().alternate_screen());
    kill(sup, Signal::SIGCONT).expect("continue");
    // Stopped while we are attached: typing finds out, and the bar says so.
    let mut t = attach(&sb, "frozen");
    t.wait_for("the session", |t| t.has_line("alive"));
    // Output, then 2 s of silence (as the supervisor counts it): attach
    // asked nothing since before the echo (`cat` reading its terminal
    // waits for input, so output is no news), so its last question is
    // over 2 s old.
    t.send(b"y\r");
    t.wait_for("the echo", |t| t.has_line("y"));
    common::wait_until("2 s of silence", || {
        let out = sb.cmd(&["status", "frozen", "--json"]);
        serde_json::from_slice::<serde_json::Value>(&out.stdout)
            .is_ok_and(|v| v["idle_ms"].as_u64().is_some_and(|ms| ms >= 2000))
    });
    kill(sup, Signal::SIGSTOP).expect("stop the supervisor");
    // One key after a quiet spell makes attach ask; it says so once the
    // question has gone unanswered for 2 s.
    t.send(b"x");
    let unanswered = |t: &Terminal| t.last_row().trim_end().ends_with("not responding");
    assert!(
        t.holds_within(Duration::from_secs(4), unanswered),
        "never said: {:#?}",
        t.lines()
    );
    kill(sup, Signal::SIGCONT).expect("continue");
    t.wait_for("the key's echo and a state again", |t| {
        t.has_line("x") && !t.last_row().contains("not responding")
    });
    // However soon after the last question: keys met with silence ask.
    kill(sup, Signal::SIGSTOP).expect("stop the supervisor again");
    let mut typed = 1;
    loop {
        t.send(b"x");
        typed += 1;
        if t.holds_within(Duration::from_secs(3), unanswered) {
            break;
        }
        assert!(typed < 10, "never said: {:?}", t.last_row());
    }
    kill(sup, Signal::SIGCONT).expect("continue");
    let echo = "x".repeat(typed);
    t.wait_for("the keys' echo and a state again", |t| {
        t.has_line(&echo) && !t.last_row().contains("not responding")
    });
    t.send(b"\x1c");
    t.expect_exit(0);
}

#[test]
fn sigterm_restores_the_terminal() {
    let (sb, _session, code, message) = end_attachment(Ending::Signal(Signal::SIGTERM));
    assert_eq!(code, 143);
    assert_eq!(message, "[detached from session modes: SIGTERM]");
    assert!(sb.cmd(&["status", "modes"]).status.success());
}

#[test]
fn sighup_restores_the_terminal() {
    let (_sb, _session, code, message) = end_attachment(Ending::Signal(Signal::SIGHUP));
    assert_eq!(code, 129);
    assert_eq!(message, "[detached from session modes: SIGHUP]");
}

#[test]
fn sigint_restores_the_terminal() {
    let (_sb, _session, code, message) = end_attachment(Ending::Signal(Signal::SIGINT));
    assert_eq!(code, 130);
    assert_eq!(message, "[detached from session modes: SIGINT]");
}

#[test]
fn killed_supervisor_is_noticed_at_once_and_the_terminal_restored() {
    let (_sb, _session, code, message) = end_attachment(Ending::SupervisorKilled);
    assert_ne!(code, 0);
    assert!(
        message.starts_with("[lost connection to session modes"),
        "{message}"
    );
}

#[test]
fn a_panic_in_the_client_restores_the_terminal() {
    let (sb, _session, code, message) = end_attachment(Ending::Panic);
    assert_eq!(code, 101, "a panic exits 101");
    assert!(message.starts_with("hm: internal error: "), "{message}");
    // The session is untouched by its client's crash.
    assert!(sb.cmd(&["status", "modes"]).status.success());
}

#[test]
fn run_without_a_terminal_starts_nothing() {
    let sb = Sandbox::new();
    // Standard input is /dev/null here.
    let out = sb.cmd(&["run", "--id", "blind", "--", "sleep", "30"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        common::stderr(&out),
        "hm: cannot attach: standard input is not a terminal \
         (add --bg to start the session in the background, or --detach to \
         supervise it here)\n"
    );
    let left: Vec<_> = std::fs::read_dir(&sb.sock_dir)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn attach_without_a_terminal_fails_without_touching_stdout() {
    let sb = Sandbox::new();
    let _s = sb.start("tty", &[], &["cat"]);
    let out = sb.cmd(&["attach", "tty"]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty(), "stdout: {:?}", common::stdout(&out));
    assert_eq!(
        common::stderr(&out),
        "hm: attach needs a terminal, but standard input is not one\n"
    );
    // A terminal for input but not for output.
    let target = sb.path().join("out.txt");
    let script = r#"exec "$0" attach tty --socket-dir "$1" > "$2""#;
    let mut t = Terminal::start(
        "sh".as_ref(),
        &[
            "-c".into(),
            script.into(),
            HM.into(),
            sb.dir().into(),
            target.clone().into(),
        ],
        &sb.terminal_env(&[("HEIMDALL_TEST_PANIC", "1")]),
        sb.path(),
        (ROWS, COLS),
        "$ hm attach tty > out.txt",
    );
    t.expect_exit(1);
    t.wait_for("the error", |t| {
        t.has_line("hm: attach needs a terminal, but standard output is not one")
    });
    assert!(!t.screen().alternate_screen());
    assert_eq!(t.termios(), terminal::pristine_termios());
    assert_eq!(std::fs::read(&target).expect("read out.txt"), b"");
}

/// What a program drew once, before the oldest byte its supervisor still
/// keeps, is on the attached terminal where it is on the session's
/// screen: the replay alone left it out and showed the rows under it too
/// high (a waiting agent's dialog under a banner drawn at its start).
#[test]
fn attach_shows_what_was_drawn_before_the_kept_output() {
    let sb = Sandbox::new();
    // The size the terminal gives it, so attaching redraws nothing.
    let rows = (ROWS - 1).to_string();
    let cols = COLS.to_string();
    let _s = sb.start(
        "agent",
        &[
            "--rows",
            &rows,
            "--cols",
            &cols,
            "--scrollback-bytes",
            "2048",
        ],
        &["sh", "-c", common::BANNER_THEN_REDRAWS],
    );
    common::wait_until("the program to draw its last row", || {
        common::stdout(&sb.cmd(&["logs", "agent", "--screen"])).contains("ASK-ROW")
    });
    let mut t = attach(&sb, "agent");
    t.wait_for("the banner above the last row", |t| {
        let mut lines = t.screen().rows(0, COLS);
        lines.next().is_some_and(|r| r.starts_with("BANNER-ROW"))
            && lines.next().is_some_and(|r| r.starts_with("ASK-ROW"))
    });
}

#[test]
fn attach_to_a_missing_session_says_where_it_looked() {
    let sb = Sandbox::new();
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&sb.sock_dir)
        .expect("mkdir");
    let mut t = hm_in_terminal(&sb, &["attach", "nope", "--socket-dir", sb.dir()]);
    t.expect_exit(1);
    let expected = format!("hm: no session named 'nope' in {} (see 'hm ls')", sb.dir());
    t.wait_for("the error", |t| t.has_line(&expected));
    assert!(!t.screen().alternate_screen());
    assert_eq!(t.termios(), terminal::pristine_termios());
}

#[test]
fn replayed_queries_go_unanswered_while_live_ones_are_answered() {
    let sb = Sandbox::new();
    // The history asks for device attributes, the cursor position and the
    // background colour while nobody is attached: the supervisor answers the
    // first three from its own screen (it does not know the colour), and
    // the terminal that attaches later must not answer them again. Then the
    // child shows what reached its input, asks once more live, and shows
    // every byte it gets after that.
    let script = r#"printf '\033[c\033[6n\033[>c\033]11;?\007history-ready\n'
IFS= read -r line
printf 'got:%s\n' "$line" | cat -v
printf 'live-query\033[c\n'
exec cat -v"#;
    let _s = sb.start("q", &[], &["sh", "-c", script]);
    // The queries must be history when the terminal attaches, not live.
    Raw::connect(&sb.sock("q"))
        .map(|mut r| {
            r.send(ClientType::Subscribe as u8, &[]);
            r.output_until(b"history-ready");
        })
        .expect("connect");
    let mut t = attach(&sb, "q");
    t.wait_for("the replayed history", |t| t.has_line("history-ready"));
    assert_eq!(
        t.model().answered,
        0,
        "the terminal was asked replayed queries"
    );
    // Any answer to the replay would have been typed before this line.
    t.send(b"probe\r");
    t.wait_for("what the child read", |t| t.contains("got:"));
    let got: Vec<String> = t
        .lines()
        .into_iter()
        .filter(|l| l.contains("got:"))
        .collect();
    // Exactly one answer to each replayed query, the supervisor's, given
    // when it was asked; none from the attached terminal.
    assert_eq!(
        got,
        ["got:^[[?62;22c^[[1;1R^[[>1;10;0cprobe"],
        "replayed queries were answered twice, or not by the supervisor"
    );
    // The live query is answered, and the answer reaches the child.
    t.wait_for("the live query", |t| t.has_line("live-query"));
    t.wait_for("the answer to it", |t| t.model().answered == 1);
    t.send(b"\r");
    // Echoed by the child's terminal as it arrived, then printed by `cat`.
    t.wait_for("the answer in the child", |t| {
        t.screen().contents().matches("^[[?1;2c").count() == 2
    });
}

#[test]
fn an_attached_terminal_never_sees_the_status_probe_the_supervisor_answers() {
    let sb = Sandbox::new();
    let prog = common::StatusProgram::new(&sb);
    let _s = sb.start(
        "st",
        &["--classifier", "agent"],
        &["bash", "-c", &prog.script],
    );
    let mut t = attach(&sb, "st");
    t.record();
    // The bar is drawn once `hm attach` has sent SUBSCRIBE; the program
    // asks only once the supervisor has taken it (until then, it would
    // answer the query itself, as for a session nobody is attached to).
    wait_until("the supervisor to count the terminal", || {
        attached_terminals(&sb, "st") == 1
    });
    common::open_gate(&prog.gates[0]);
    t.wait_for("the program's verdict on its replies", |t| {
        t.contains("ANSWERED")
    });
    // The terminal answered the DA1 query; the probe never reached it (a
    // terminal that speaks the protocol would answer it a second time),
    // and the supervisor's status answer came before the terminal's.
    let seen = String::from_utf8_lossy(t.recorded()).replace('\u{1b}', "ESC");
    assert!(
        !seen.contains("7501"),
        "the probe reached the terminal: {seen}"
    );
    assert_eq!(t.model().answered, 1, "{seen}");
    assert!(t.contains("ANSWER-FIRST"), "{}", t.screen().contents());
}

#[test]
fn status_bar_survives_a_clear_and_a_scroll_region_reset() {
    let sb = Sandbox::new();
    // The reset and the lines after it come in one write.
    let script = r#"read a
printf '\033[H\033[2J\033[3J'; echo cleared
read b
i=0; s=''; while [ $i -lt 60 ]; do s="${s}line-$i\n"; i=$((i+1)); done
printf "\033[r${s}scrolled\n"
exec cat"#;
    let _s = sb.start("bar", &[], &["sh", "-c", script]);
    let mut t = attach(&sb, "bar");
    t.send(b"\r");
    t.wait_for("the cleared screen with its bar", |t| {
        t.has_line("cleared") && bar_shown(t, "bar")
    });
    t.send(b"\r");
    t.wait_for("the scrolled screen with its bar", |t| {
        t.has_line("scrolled") && bar_shown(t, "bar")
    });
    // The child's last row is the one above the bar, and what it prints
    // next scrolls there too, leaving the bar alone. (`cat` and the echo
    // of the typing each show the word.)
    for n in 0..3 {
        let word = format!("after-{n}");
        t.send(format!("{word}\r").as_bytes());
        t.wait_for("the child's next line", |t| {
            t.row(ROWS - 3) == word && t.row(ROWS - 4) == word
        });
        assert!(bar_shown(&t, "bar"), "bar overwritten: {:#?}", t.lines());
        assert_eq!(t.screen().cursor_position(), (ROWS - 2, 0));
    }
}

#[test]
fn a_scroll_region_the_child_sets_keeps_working() {
    let sb = Sandbox::new();
    // Like an editor scrolling one window: rows 5 to 10 scroll, the rows
    // around them stay. Setting the region and scrolling in it are
    // separate writes.
    let script = r#"read a
printf '\033[H\033[2J'; i=1; while [ $i -le 20 ]; do echo row-$i; i=$((i+1)); done
printf '\033[5;10r'
read b
printf '\033[10;1H\033[Knew-a\nnew-b'
exec cat"#;
    let _s = sb.start("region", &[], &["sh", "-c", script]);
    let mut t = attach(&sb, "region");
    t.send(b"\r");
    t.wait_for("the rows", |t| t.has_line("row-20"));
    t.send(b"\r");
    t.wait_for("the scrolled window", |t| t.has_line("new-b"));
    let rows: Vec<String> = (0..20).map(|r| t.row(r)).collect();
    let expected: Vec<String> = (1..=4)
        .chain(6..=9)
        .map(|n| format!("row-{n}"))
        .chain(["new-a".to_string(), "new-b".to_string()])
        .chain((11..=20).map(|n| format!("row-{n}")))
        .collect();
    assert_eq!(rows, expected);
    assert!(bar_shown(&t, "region"));
}

/// Kills, on drop, a session that `hm run` started in the background.
struct Launched<'a> {
    sb: &'a Sandbox,
    id: &'a str,
}

impl Launched<'_> {
    /// (supervisor pid, child pid) from the session's pid file.
    fn pids(&self) -> Option<(i32, i32)> {
        let text =
            std::fs::read_to_string(self.sb.sock_dir.join(format!("{}.pid", self.id))).ok()?;
        let mut lines = text.lines().map(|l| l.trim().parse::<i32>().ok());
        Some((lines.next()??, lines.next()??))
    }
}

impl Drop for Launched<'_> {
    fn drop(&mut self) {
        use nix::sys::signal::kill;
        use nix::unistd::Pid;
        if let Some((supervisor, child)) = self.pids() {
            if child > 1 {
                let _ = kill(Pid::from_raw(-child), Signal::SIGKILL);
            }
            if supervisor > 1 {
                let _ = kill(Pid::from_raw(supervisor), Signal::SIGKILL);
            }
        }
    }
}

/// The session id of a process, from `/proc/PID/stat`.
fn sid_of(pid: i32) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read stat");
    // Fields after the command name, which is in parentheses: state, ppid,
    // pgrp, session.
    let rest = &stat[stat.rfind(')').expect("comm") + 2..];
    rest.split(' ')
        .nth(3)
        .expect("session field")
        .parse()
        .expect("sid")
}

#[test]
fn run_without_detach_attaches_and_the_session_outlives_its_terminal() {
    let sb = Sandbox::new();
    let mut args = vec!["run", "--id", "live", "--socket-dir", sb.dir(), "--"];
    args.extend_from_slice(SHELL);
    let mut t = hm_in_terminal(&sb, &args);
    let launched = Launched {
        sb: &sb,
        id: "live",
    };
    t.wait_for("the status bar", |t| bar_shown(t, "live"));
    t.send(b"echo earlier-$((3*3))\r");
    t.wait_for("the command's output", |t| t.has_line("earlier-9"));
    let (supervisor, _) = launched.pids().expect("pid file");
    assert_ne!(
        sid_of(supervisor),
        t.pid().as_raw(),
        "the supervisor shares the terminal's session"
    );
    assert_eq!(
        sid_of(supervisor),
        supervisor,
        "the supervisor leads a session"
    );
    // Closing the window hangs up the attach client, and only it. (Whether
    // the client sees the signal or the dead terminal first is a race.)
    t.close();
    let code = t.wait_exit();
    assert!(matches!(code, 1 | 129), "exit code {code}");
    let status = sb.cmd(&["status", "live"]);
    assert!(status.status.success(), "{}", common::stderr(&status));
    let ls = sb.cmd(&["ls"]);
    assert!(
        common::stdout(&ls).contains("live"),
        "{}",
        common::stdout(&ls)
    );
    // And the session is there to come back to.
    let mut again = attach(&sb, "live");
    again.wait_for("the earlier output", |t| t.has_line("earlier-9"));
    again.send(b"\x1c");
    again.expect_exit(0);
}

#[test]
fn run_without_an_id_names_the_session_after_the_command() {
    let sb = Sandbox::new();
    let _first = Launched { sb: &sb, id: "sh" };
    let _second = Launched {
        sb: &sb,
        id: "sh-2",
    };
    let argv = ["run", "--socket-dir", sb.dir(), "--", "sh", "-c", "read x"];
    for id in ["sh", "sh-2"] {
        let mut t = hm_in_terminal(&sb, &argv);
        t.wait_for("the status bar", |t| bar_shown(t, id));
        t.send(b"\x1c");
        t.expect_exit(0);
        t.wait_for("the detach message", |t| {
            t.contains(&format!("[detached from session {id}]"))
        });
    }
    let ls = common::stdout(&sb.cmd(&["ls", "--json"]));
    assert!(
        ls.contains("\"id\":\"sh\"") && ls.contains("\"id\":\"sh-2\""),
        "{ls}"
    );
}

#[test]
fn runs_without_an_id_started_together_take_different_names() {
    let sb = Sandbox::new();
    let _guards: Vec<Launched> = ["sh", "sh-2", "sh-3"]
        .into_iter()
        .map(|id| Launched { sb: &sb, id })
        .collect();
    let argv = ["run", "--socket-dir", sb.dir(), "--", "sh", "-c", "read x"];
    let mut ts: Vec<Terminal> = (0..3).map(|_| hm_in_terminal(&sb, &argv)).collect();
    let mut ids = Vec::new();
    for t in &mut ts {
        t.wait_for("a status bar", |t| t.last_row().starts_with(" hm · sh"));
        let bar = t.last_row();
        ids.push(
            bar.split_whitespace()
                .nth(2)
                .unwrap_or_default()
                .to_string(),
        );
        t.send(b"\x1c");
        t.expect_exit(0);
    }
    ids.sort();
    assert_eq!(ids, ["sh", "sh-2", "sh-3"]);
}

#[test]
fn run_over_an_orphans_id_says_what_it_replaces() {
    let sb = Sandbox::new();
    let marker = format!("5009.{}", std::process::id());
    let program = common::orphan(&sb, "again", &marker);
    let mut t = run_attached(&sb, "again", "exit 0");
    t.expect_exit(0);
    t.wait_for("the warning", |t| {
        t.contains("hm: warning:") && t.contains(&format!("kill {}", program.pid))
    });
}

#[test]
fn run_reports_why_the_command_could_not_start() {
    let sb = Sandbox::new();
    let mut t = hm_in_terminal(
        &sb,
        &[
            "run",
            "--id",
            "y",
            "--socket-dir",
            sb.dir(),
            "--",
            "nosuchcmd-xyz",
        ],
    );
    t.expect_exit(127);
    t.wait_for("the error", |t| {
        t.has_line("hm: cannot run 'nosuchcmd-xyz': No such file or directory")
    });
    assert!(!t.screen().alternate_screen());
    assert_eq!(t.termios(), terminal::pristine_termios());
    // Nothing is left behind in the socket dir.
    let left: Vec<_> = std::fs::read_dir(&sb.sock_dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn run_of_a_live_id_says_it_is_already_running() {
    let sb = Sandbox::new();
    let _s = sb.start("busy", &[], &["cat"]);
    let mut t = hm_in_terminal(
        &sb,
        &["run", "--id", "busy", "--socket-dir", sb.dir(), "--", "sh"],
    );
    t.expect_exit(1);
    t.wait_for("the error", |t| {
        t.contains("session 'busy' is already running") && t.contains("hm attach busy")
    });
    assert!(!t.screen().alternate_screen());
}

#[test]
fn run_with_a_bad_config_names_the_key_and_the_file() {
    let sb = Sandbox::new();
    let config = sb.path().join("bad.toml");
    std::fs::write(&config, "no_such_key = 1\n").expect("write config");
    let mut t = hm_in_terminal(
        &sb,
        &[
            "--config",
            config.to_str().expect("utf-8"),
            "run",
            "--id",
            "z",
            "--socket-dir",
            sb.dir(),
            "--",
            "sh",
        ],
    );
    assert_ne!(t.wait_exit(), 0);
    t.wait_for("the error", |t| {
        t.contains("unknown key 'no_such_key'") && t.contains("bad.toml")
    });
    assert!(!t.screen().alternate_screen());
    wait_until("nothing to be running", || {
        !sb.sock_dir.join("z.sock").exists()
    });
}

#[test]
fn a_child_leaving_its_alternate_screen_does_not_draw_over_the_users() {
    let sb = Sandbox::new();
    let script = r#"read a
printf '\033[?1049h\033[Hfull-screen-app\n'
read b
printf '\033[?1049lback-in-the-shell\n'
exec cat"#;
    let _s = sb.start("alt", &[], &["sh", "-c", script]);
    let mut t = attach(&sb, "alt");
    t.send(b"\r");
    t.wait_for("the full-screen program", |t| t.has_line("full-screen-app"));
    t.send(b"\r");
    t.wait_for("the child's own screen back", |t| {
        t.has_line("back-in-the-shell")
    });
    assert!(
        t.screen().alternate_screen(),
        "the user's main screen is in use"
    );
    assert!(!t.has_line("full-screen-app"), "{:#?}", t.lines());
    assert!(bar_shown(&t, "alt"));
    t.send(b"\x1c");
    t.expect_exit(0);
    t.wait_for("the detach message", |t| {
        t.contains("[detached from session alt]")
    });
    assert_eq!(closing_line(&t), "[detached from session alt]");
}

#[test]
fn screen_switches_split_or_combined_with_other_modes_stay_off_the_users_screen() {
    let sb = Sandbox::new();
    // The first switch arrives in two writes, with application cursor keys
    // set in the same sequence; the last one hides the cursor as it leaves.
    let script = r#"stty -echo
read a
printf 'main-text\n\033[?10'
read b
printf '49;1happ-text\n'
read c
printf '\033[?1047l\033[?47h\033[?25;1049lshell-text\n'
exec cat"#;
    let _s = sb.start("split", &[], &["sh", "-c", script]);
    let mut t = attach(&sb, "split");
    t.send(b"\r");
    t.wait_for("the first half", |t| t.has_line("main-text"));
    t.send(b"\r");
    t.wait_for("the full-screen program", |t| t.has_line("app-text"));
    let s = t.screen();
    assert!(s.alternate_screen(), "the user's main screen is in use");
    assert!(
        s.application_cursor(),
        "the mode set with the switch is lost"
    );
    assert!(!t.has_line("main-text"), "not cleared: {:#?}", t.lines());
    assert!(!t.contains("49;1h"), "the switch was cut: {:#?}", t.lines());
    assert!(bar_shown(&t, "split"));
    t.send(b"\r");
    t.wait_for("the child's own screen back", |t| t.has_line("shell-text"));
    let s = t.screen();
    assert!(s.alternate_screen(), "the user's main screen is in use");
    assert!(s.hide_cursor(), "the mode reset with the switch is lost");
    assert_eq!(t.row(0), "shell-text", "{:#?}", t.lines());
    assert!(!t.has_line("app-text"), "not cleared: {:#?}", t.lines());
    assert!(bar_shown(&t, "split"));
    t.send(b"\x1c");
    t.expect_exit(0);
    t.wait_for("the detach message", |t| {
        t.contains("[detached from session split]")
    });
    assert_eq!(closing_line(&t), "[detached from session split]");
}

/// The text a terminal was sent, without `hm attach`'s status bar (drawn
/// between ESC 7 and ESC 8) and without escape sequences.
fn printed_text(bytes: &[u8]) -> String {
    let mut text = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i..] {
            [0x1b, b'7', ..] => {
                let rest = &bytes[i..];
                i += rest
                    .windows(2)
                    .position(|w| w == b"\x1b8")
                    .map_or(rest.len(), |p| p + 2);
            }
            [0x1b, b'[', ..] => {
                i += 2;
                while i < bytes.len() && !(0x40..=0x7e).contains(&bytes[i]) {
                    i += 1;
                }
                i += 1;
            }
            [0x1b, _, ..] => i += 2,
            [b, ..] => {
                text.push(b);
                i += 1;
            }
            [] => unreachable!(),
        }
    }
    String::from_utf8_lossy(&text).into_owned()
}

/// A terminal that stops reading (a suspended tmux client, a stalled ssh
/// link) makes attach wait for room, never drop: once the terminal reads
/// again, every byte arrives, in order.
#[test]
fn a_terminal_that_stops_reading_gets_everything_once_it_reads_again() {
    let sb = Sandbox::new();
    let s = sb.start(
        "flood",
        &[],
        &[
            "sh",
            "-c",
            "read go; seq 1 60000; echo SEQ-DONE; exec sleep 600",
        ],
    );
    let mut t = attach(&sb, "flood");
    t.record();
    t.send(b"\r");
    // The terminal is not read while the whole stream (six times what a
    // pty holds) reaches the supervisor and attach.
    let mut side = s.raw();
    side.send(ClientType::Subscribe as u8, &[]);
    side.output_until(b"SEQ-DONE");
    t.wait_for("the end of the stream", |t| t.has_line("SEQ-DONE"));
    let printed = printed_text(t.recorded());
    let expected: String = (1..=60000).map(|i| format!("{i}\r\n")).collect();
    assert!(
        printed.contains(&format!("{expected}SEQ-DONE")),
        "lines lost or out of order; {} bytes printed",
        printed.len()
    );
}

/// Ctrl-], the default copy key; Shift-PgUp and Shift-PgDn as xterm sends
/// them.
const COPY_KEY: &[u8] = b"\x1d";
const SHIFT_PGUP: &[u8] = b"\x1b[5;2~";
const SHIFT_PGDN: &[u8] = b"\x1b[6;2~";

/// The rows above the bar, as shown.
fn above_bar(t: &Terminal) -> Vec<String> {
    (0..ROWS - 1).map(|r| t.row(r)).collect()
}

#[test]
fn copy_mode_shows_the_history_searches_copies_and_leaves_the_live_screen_as_it_was() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "sq",
        &[],
        &["sh", "-c", "seq 1 200; exec bash --norc --noprofile -i"],
    );
    let mut t = attach(&sb, "sq");
    t.wait_for("the prompt under the numbers", |t| {
        t.contains("bash-") && t.has_line("200") && t.last_row().contains("Ctrl-] history")
    });
    let live = above_bar(&t);
    // The copy key: the history, the cursor on the prompt, the bar saying
    // where the view is.
    t.send(COPY_KEY);
    t.wait_for("copy mode", |t| t.last_row().contains("copy [+0/"));
    // To the oldest row: line 1, which scrolled off long ago.
    t.send(b"g");
    t.wait_for("line 1", |t| {
        t.row(0) == "1" && t.last_row().contains("copy [+")
    });
    // A search, a selection of two lines, the copy.
    t.send(b"/150\r");
    t.wait_for("the match", |t| t.has_line("150") && !t.has_line("1"));
    t.record();
    t.send(b"vj$y");
    t.wait_for("OSC 52 with the two lines", |t| {
        String::from_utf8_lossy(t.recorded()).contains("\x1b]52;c;MTUwCjE1MQ==\x07")
    });
    // Leaving shows the live screen exactly as it was, and says what was
    // copied.
    t.wait_for("the live screen again", |t| above_bar(t) == live);
    t.wait_for("the notice", |t| t.last_row().contains("copied 2 lines"));
    assert!(!t.screen().hide_cursor(), "the cursor is shown again");
    // Shift-PgUp opens it a page up; Shift-PgDn back to the bottom leaves.
    t.send(SHIFT_PGUP);
    t.wait_for("a page up", |t| {
        t.last_row().contains("copy [+22/") && !t.contains("bash-")
    });
    t.send(SHIFT_PGDN);
    t.wait_for("the live screen again", |t| above_bar(t) == live);
    // A page down too many, at the bottom already, is no key for the
    // program either (bash showed `2~2~` at its prompt).
    t.send(SHIFT_PGDN);
    t.send(SHIFT_PGDN);
    // Keys reach the program again, and Shift-PgUp/PgDn never did.
    t.send(b"echo typed-$((6*7))\r");
    t.wait_for("the command's output", |t| t.has_line("typed-42"));
    assert!(!t.contains("2~"), "{:?}", t.lines());
    // `q` leaves too, and the detach key works in copy mode.
    t.send(COPY_KEY);
    t.wait_for("copy mode", |t| t.last_row().contains("copy [+0/"));
    t.send(b"q");
    t.wait_for("live", |t| t.last_row().contains("Ctrl-] history"));
    t.send(COPY_KEY);
    t.wait_for("copy mode", |t| t.last_row().contains("copy [+0/"));
    t.send(b"\x1c");
    t.expect_exit(0);
    t.wait_for("the detach message", |t| {
        t.contains("[detached from session sq]")
    });
    assert_restored(&t);
}

/// Attaching brings a stopped program to the front, as `fg` would; a key
/// typed while it is stopped again continues it and is not typed (a
/// stopped Claude Code asks for `fg` and Enter, which would reach it as
/// a prompt).
#[test]
fn attach_continues_a_stopped_program_and_a_key_continues_it_again() {
    let sb = Sandbox::new();
    let script = "echo before; kill -STOP $$; echo after-one; kill -STOP $$; \
                  echo after-two; read x; echo got-$x; exec sleep 600";
    let _s = sb.start("job", &[], &["sh", "-c", script]);
    let stopped = || common::stdout(&sb.cmd(&["status", "job"])).contains("waiting · stopped");
    common::wait_until("the program stopped", stopped);
    let mut t = attach(&sb, "job");
    t.wait_for("the program continued", |t| t.has_line("after-one"));
    common::wait_until("the program stopped again", stopped);
    t.wait_for("the bar to say so", |t| t.last_row().contains("stopped"));
    t.send(b"z");
    t.wait_for("the key to continue it", |t| t.has_line("after-two"));
    // Keys are typed again once the bar no longer says it is stopped.
    t.wait_for("the bar to say it reads", |t| {
        t.last_row().contains("waiting · input")
    });
    t.send(b"ok\r");
    t.wait_for("the line read, without the key", |t| t.has_line("got-ok"));
}

/// `hm run --detach` typed at a terminal does not return: it is the
/// supervisor, for systemd. It says so, and names --bg, which returns.
#[test]
fn run_detach_at_a_terminal_says_it_supervises_here() {
    let sb = Sandbox::new();
    let mut t = hm_in_terminal(
        &sb,
        &[
            "run",
            "--detach",
            "--id",
            "fg",
            "--socket-dir",
            sb.dir(),
            "--",
            "sleep",
            "30",
        ],
    );
    t.wait_for("the note", |t| {
        t.contains("supervising here until the session ends") && t.contains("--bg starts it")
    });
    common::wait_until("the session", || sb.cmd(&["status", "fg"]).status.success());
    assert!(sb.cmd(&["kill", "fg"]).status.success());
}
