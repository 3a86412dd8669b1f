//! `hm tui` end to end: the real dashboard in a real pty, rendered by
//! vt100, against real `hm run` sessions (and a few fake supervisors that
//! misbehave), asserting on what the user would see.

use crate::common;
use crate::common::terminal;

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};

use common::tmux::Tmux;
use common::{HM, Reaper, Sandbox, Session, fake, sleepers, wait_until};
use heimdall::protocol::{self, ClientType, ServerType, Status};
use nix::sys::signal::{Signal, kill};
use nix::sys::termios::LocalFlags;
use nix::unistd::Pid;
use terminal::Terminal;
use vt100::{MouseProtocolEncoding, MouseProtocolMode};

const ROWS: u16 = 24;
const COLS: u16 = 80;

const SHELL: &[&str] = &["bash", "--norc", "--noprofile", "-i"];

/// Ctrl-\, the default detach key.
const DETACH: &[u8] = b"\x1c";

/// `hm tui --socket-dir DIR EXTRA` in a fresh terminal, not waited for.
fn start_tui(sb: &Sandbox, extra: &[&str], (rows, cols): (u16, u16), no_color: bool) -> Terminal {
    let mut args: Vec<OsString> = vec!["tui".into(), "--socket-dir".into(), sb.dir().into()];
    args.extend(extra.iter().map(OsString::from));
    Terminal::start(
        HM.as_ref(),
        &args,
        &sb.terminal_env(&[
            ("SHELL", "/bin/sh"),
            ("NO_COLOR", if no_color { "1" } else { "" }),
        ]),
        sb.path(),
        (rows, cols),
        "$ hm tui",
    )
}

/// The grid's footer, with sessions or none (`q quit` stays at every
/// width; `move` is offered only where there is a pane to move over).
fn footer_shown(t: &Terminal) -> bool {
    t.last_row().contains("quit") && t.screen().alternate_screen()
}

/// The dashboard on an 80x24 terminal, once it has painted.
fn tui(sb: &Sandbox) -> Terminal {
    tui_sized(sb, &[], (ROWS, COLS))
}

fn tui_sized(sb: &Sandbox, extra: &[&str], size: (u16, u16)) -> Terminal {
    let mut t = start_tui(sb, extra, size, false);
    t.wait_for("the dashboard", footer_shown);
    t
}

/// One pane as drawn: its top border (title and state), the text inside
/// and the bottom border (idle time or problem), found by its title.
#[derive(Debug)]
struct Pane {
    /// Columns inside the borders.
    cols: usize,
    top: String,
    body: Vec<String>,
    bottom: String,
}

impl Pane {
    /// The size of the inside, (rows, cols).
    fn inner(&self) -> (usize, usize) {
        (self.body.len(), self.cols)
    }

    fn shows(&self, text: &str) -> bool {
        self.body.iter().any(|l| l.contains(text))
    }

    /// The largest N in the `tick-N` lines shown.
    fn last_tick(&self) -> Option<u64> {
        self.body
            .iter()
            .filter_map(|l| l.trim().strip_prefix("tick-")?.parse().ok())
            .max()
    }
}

fn cell(s: &vt100::Screen, r: u16, c: u16) -> &str {
    match s.cell(r, c) {
        Some(cell) if cell.is_wide_continuation() => "",
        Some(cell) if cell.has_contents() => cell.contents(),
        _ => " ",
    }
}

fn pane(t: &Terminal, id: &str) -> Option<Pane> {
    let s = t.screen();
    let (rows, cols) = (s.size().0.get(), s.size().1.get());
    let title = format!(" {id} ");
    for r in 0..rows {
        for c in 0..cols {
            if !matches!(cell(s, r, c), "╭" | "┏") {
                continue;
            }
            let end = (c + 1 + title.len() as u16).min(cols);
            let here: String = (c + 1..end).map(|x| cell(s, r, x)).collect();
            if here != title {
                continue;
            }
            let right = (c + 1..cols).find(|&x| matches!(cell(s, r, x), "╮" | "┓"))?;
            let bottom = (r + 1..rows).find(|&y| matches!(cell(s, y, c), "╰" | "┗"))?;
            let line = |y: u16| (c + 1..right).map(|x| cell(s, y, x)).collect::<String>();
            return Some(Pane {
                cols: usize::from(right - c - 1),
                top: line(r),
                body: (r + 1..bottom).map(line).collect(),
                bottom: line(bottom),
            });
        }
    }
    None
}

fn pane_shows(t: &Terminal, id: &str, text: &str) -> bool {
    pane(t, id).is_some_and(|p| p.shows(text))
}

/// A session that prints `tick-N` a few times a second.
fn ticking(sb: &Sandbox, id: &str) -> Session {
    sb.start(
        id,
        &[],
        &[
            "sh",
            "-c",
            "i=0; while :; do i=$((i+1)); echo tick-$i; sleep 0.2; done",
        ],
    )
}

/// Waits until `id`'s pane shows a tick at least `more` after the one it
/// shows now: its output is still arriving.
fn keeps_ticking(t: &mut Terminal, id: &str, more: u64) {
    t.wait_for("the first ticks", |t| {
        pane(t, id).and_then(|p| p.last_tick()).is_some()
    });
    let seen = pane(t, id).and_then(|p| p.last_tick()).unwrap_or(0);
    t.wait_for("more ticks", |t| {
        pane(t, id)
            .and_then(|p| p.last_tick())
            .is_some_and(|n| n >= seen + more)
    });
}

/// A session's pty size (rows, cols), as its supervisor reports it.
fn session_size(sb: &Sandbox, id: &str) -> Option<(u16, u16)> {
    let mut raw = common::Raw::connect(&sb.sock(id)).ok()?;
    raw.send(ClientType::Info as u8, &[]);
    let info: serde_json::Value =
        serde_json::from_slice(&raw.expect(ServerType::Info as u8).payload).ok()?;
    let dim = |k: &str| info.get(k)?.as_u64().and_then(|v| u16::try_from(v).ok());
    Some((dim("rows")?, dim("cols")?))
}

/// The seed protocol and nothing more: binary mode, STATUS, SUBSCRIBE,
/// and silence for frame types it does not know (INFO among them).
fn seed_supervisor(s: UnixStream) {
    fake::answer(s, |ty| match ClientType::try_from(ty) {
        Ok(ClientType::Status) => {
            let st = Status {
                pid: 4242,
                idle_ms: 7000,
                alive: true,
                state: 0,
                state_ms: 7000,
            };
            let payload = st.encode();
            assert_eq!(payload.len(), 15);
            Some(protocol::frame(ServerType::StatusResp as u8, &payload))
        }
        Ok(ClientType::Subscribe) => {
            let mut out = protocol::frame(ServerType::Output as u8, b"seed says hello\r\n");
            out.extend(protocol::frame(ServerType::Output as u8, b"old-prompt$ "));
            Some(out)
        }
        _ => None,
    });
}

/// Accepts and never says a word, not even the mode byte.
fn mute_supervisor(s: UnixStream) {
    let mut s = s;
    let mut buf = [0u8; 4096];
    while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
}

/// Binary mode, then a frame no supervisor would send, then junk.
fn garbage_supervisor(mut s: UnixStream) {
    let _ = s.write_all(&[protocol::MODE_BINARY]);
    let _ = s.write_all(&protocol::header(ServerType::Output as u8, u32::MAX));
    let _ = s.write_all(&[0xff; 64]);
    let mut buf = [0u8; 4096];
    while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
}

/// The user's terminal after the dashboard is gone: the main screen, every
/// mode off, title and termios as they were.
fn assert_restored(t: &Terminal) {
    let s = t.screen();
    assert!(!s.alternate_screen(), "still on the alternate screen");
    assert!(!s.hide_cursor(), "cursor left hidden");
    assert_eq!(s.mouse_protocol_mode(), MouseProtocolMode::None);
    assert_eq!(s.mouse_protocol_encoding(), MouseProtocolEncoding::Default);
    assert!(!s.bracketed_paste(), "bracketed paste left on");
    assert!(!s.application_cursor(), "application cursor left on");
    assert_eq!(t.model().title, "outer", "window title not restored");
    let now = t.termios();
    assert!(
        now.local_flags
            .contains(LocalFlags::ECHO | LocalFlags::ICANON | LocalFlags::ISIG),
        "terminal left in raw mode: {:?}",
        now.local_flags
    );
    assert_eq!(now, terminal::pristine_termios(), "termios not restored");
    assert_eq!(t.lines(), ["$ hm tui"], "the screen as it was");
}

#[test]
fn each_session_gets_a_pane_with_its_output_and_state() {
    let sb = Sandbox::new();
    let quick = ["--idle-threshold-ms", "300"];
    let _a = sb.start(
        "alpha",
        &quick,
        &["sh", "-c", "echo hello-alpha; exec sleep 600"],
    );
    let _b = sb.start(
        "beta",
        &quick,
        &["sh", "-c", "echo hello-beta; exec sleep 600"],
    );
    let mut t = tui(&sb);
    for (id, text) in [("alpha", "hello-alpha"), ("beta", "hello-beta")] {
        t.wait_for("the pane with its output and state", |t| {
            pane(t, id).is_some_and(|p| p.shows(text) && p.top.contains(" idle "))
        });
    }
    let a = pane(&t, "alpha").expect("alpha");
    assert!(a.bottom.contains("idle"), "{a:?}");
    // In colour: the footer has the dark theme's background.
    let footer = t.screen().cell(ROWS - 1, 5).expect("a footer cell");
    assert_eq!(footer.bgcolor(), vt100::Color::Idx(236));
}

/// A session that ended well (code 0, or killed by a person) is not
/// painted as a failure: every ended badge had the `dead` state's red,
/// `exited 0` as `exited 3`.
#[test]
fn an_ended_badge_says_whether_it_failed() {
    let sb = Sandbox::new();
    let _ok = sb.start("ok", &[], &["sh", "-c", "read x; echo done"]);
    let _bad = sb.start("bad", &[], &["sh", "-c", "read x; echo oops; exit 3"]);
    let mut t = tui(&sb);
    t.wait_for("both panes", |t| {
        pane(t, "ok").is_some() && pane(t, "bad").is_some()
    });
    for id in ["ok", "bad"] {
        let out = sb.cmd(&["send", id, "", "--enter"]);
        assert!(out.status.success(), "{}", common::stderr(&out));
    }
    // Where a badge's text is on the screen: its first cell's background.
    let badge_bg = |t: &Terminal, text: &str| {
        (0..ROWS).find_map(|r| {
            let row = t.row(r);
            let at = row.find(text)?;
            let col = row[..at].chars().count() as u16;
            t.screen().cell(r, col + 1).map(|c| c.bgcolor())
        })
    };
    t.wait_for("both ended", |t| {
        badge_bg(t, " exited 0").is_some() && badge_bg(t, " exited 3").is_some()
    });
    assert_eq!(badge_bg(&t, " exited 3"), Some(vt100::Color::Idx(124)));
    let ok = badge_bg(&t, " exited 0");
    assert_eq!(
        ok,
        Some(vt100::Color::Idx(246)),
        "exited 0 in the dark theme's ended_well"
    );
}

/// What a program drew once, before the oldest byte its supervisor still
/// keeps (an agent's banner above a status line it then redrew thousands
/// of times in place), is on its screen and in its pane: the replay alone
/// left it out, and a dashboard started after showed the rows under it
/// too high, a waiting dialog's pane blank.
#[test]
fn a_pane_shows_what_was_drawn_before_the_kept_output() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "agent",
        &["--rows", "8", "--cols", "60", "--scrollback-bytes", "2048"],
        &["sh", "-c", common::BANNER_THEN_REDRAWS],
    );
    common::wait_until("the program to draw its last row", || {
        common::stdout(&sb.cmd(&["logs", "agent", "--screen"])).contains("ASK-ROW")
    });
    let mut t = tui(&sb);
    t.wait_for("the pane with the banner above the last row", |t| {
        pane(t, "agent").is_some_and(|p| {
            p.body.first().is_some_and(|r| r.starts_with("BANNER-ROW"))
                && p.body.get(1).is_some_and(|r| r.starts_with("ASK-ROW"))
        })
    });
}

/// A full-screen program (`top`: the alternate screen, its cursor hidden)
/// taller than its pane is shown from its top, where its summary is, not
/// from its last rows as a shell is.
#[test]
fn a_full_screen_program_taller_than_its_pane_shows_its_top() {
    let sb = Sandbox::new();
    // As `top` draws: on the main screen, cursor keys in application mode.
    let draw = |screen: &str| {
        format!(
            "printf '{screen}\\033[?25l\\033[H\\033[2J'; echo SUMMARY-ROW; \
             for i in $(seq 2 39); do echo row-$i; done; printf row-40; exec sleep 600"
        )
    };
    let _top = sb.start(
        "top",
        &["--rows", "40"],
        &["sh", "-c", &draw("\\033[?1h\\033=")],
    );
    let _full = sb.start(
        "full",
        &["--rows", "40"],
        &["sh", "-c", &draw("\\033[?1049h")],
    );
    let mut t = tui(&sb);
    for id in ["top", "full"] {
        t.wait_for("the program's top row in its pane", |t| {
            pane(t, id).is_some_and(|p| p.shows("SUMMARY-ROW") && p.shows("row-2 "))
        });
        let p = pane(&t, id).expect("the pane");
        assert!(!p.shows("row-40"), "{p:?}");
    }
}

#[test]
fn a_new_session_appears_without_a_keypress() {
    let sb = Sandbox::new();
    let mut t = tui(&sb);
    assert!(t.contains("No sessions yet."), "{:?}", t.lines());
    let _late = sb.start("late", &[], &["sh", "-c", "echo i-am-late; exec sleep 600"]);
    t.wait_for("the new session's pane", |t| {
        pane_shows(t, "late", "i-am-late")
    });
    assert!(!t.contains("No sessions yet."));
}

#[test]
fn focus_sends_keys_to_the_session_and_the_detach_key_returns() {
    let sb = Sandbox::new();
    let _s = sb.start("sh", &[], SHELL);
    let mut t = tui(&sb);
    t.wait_for("the shell's prompt", |t| {
        pane(t, "sh").is_some_and(|p| p.shows("bash-") && !p.bottom.contains("connecting"))
    });
    t.send(b"\r");
    t.wait_for("focus: the session on the screen, a bar under it", |t| {
        !t.last_row().contains("move") && pane(t, "sh").is_none()
    });
    t.wait_for("the bar: the session, its state, the way back", |t| {
        let bar = t.last_row();
        bar.starts_with(" sh ") && bar.contains("back to the grid")
    });
    t.send(b"echo typed-$((6*7))\r");
    t.wait_for("the command's output", |t| t.has_line("typed-42"));
    t.send(DETACH);
    t.wait_for("the grid again, with what was typed", |t| {
        footer_shown(t) && pane_shows(t, "sh", "typed-42")
    });
    // Back in the grid, keys drive the dashboard, not the session.
    t.send(b"?");
    t.wait_for("the help", |t| t.contains("back from focus to the grid"));
    t.send(b"q");
    t.wait_for("the help closed", |t| !t.contains("back from focus"));
}

/// Focused on a session whose supervisor stops answering, the bar says
/// so where the state was, as the pane does in the grid: it showed the
/// last state with its timer running on, over a screen that no longer
/// changed and keys that went nowhere.
#[test]
fn focus_says_when_its_session_stops_answering() {
    let sb = Sandbox::new();
    let _s = sb.start("sh", &[], SHELL);
    let supervisor = sb.status_json("sh")["supervisor_pid"]
        .as_i64()
        .expect("supervisor_pid") as i32;
    let mut t = tui(&sb);
    t.wait_for("the shell's prompt", |t| {
        pane(t, "sh").is_some_and(|p| p.shows("bash-") && !p.bottom.contains("connecting"))
    });
    t.send(b"\r");
    t.wait_for("the bar with the state", |t| {
        let bar = t.last_row();
        bar.starts_with(" sh ") && bar.contains(" idle")
    });
    let pid = nix::unistd::Pid::from_raw(supervisor);
    kill(pid, Signal::SIGSTOP).expect("stop the supervisor");
    // Continued however the test ends.
    struct Cont(nix::unistd::Pid);
    impl Drop for Cont {
        fn drop(&mut self) {
            let _ = kill(self.0, Signal::SIGCONT);
        }
    }
    let cont = Cont(pid);
    t.send(b"echo typed\r");
    t.wait_for("'not responding' in the bar", |t| {
        let bar = t.last_row();
        bar.contains("not responding") && !bar.contains(" idle")
    });
    drop(cont);
    t.wait_for("the state again", |t| {
        let bar = t.last_row();
        bar.contains(" idle") && !bar.contains("not responding")
    });
}

#[test]
fn kill_asks_first_and_only_yes_kills() {
    let sb = Sandbox::new();
    let mut s = sb.start("victim", &[], &["sh", "-c", "echo alive; exec sleep 600"]);
    let mut t = tui(&sb);
    t.wait_for("the pane", |t| pane_shows(t, "victim", "alive"));
    t.send(b"x");
    t.wait_for("the question", |t| t.contains("Kill session 'victim'?"));
    t.send(b"n");
    t.wait_for("the question gone", |t| !t.contains("Kill session"));
    // Asked and answered: still running.
    let st = s.raw().status().expect("a status");
    assert!(st.alive);
    assert!(s.child.try_wait().expect("try_wait").is_none());

    t.send(b"x");
    t.wait_for("the question again", |t| {
        t.contains("Kill session 'victim'?")
    });
    t.send(b"y");
    t.wait_for("the pane marked exited", |t| {
        pane(t, "victim").is_some_and(|p| {
            (p.bottom.contains("killed by SIGTERM (exit code 143)")
                || p.bottom.contains(" killed SIGTERM "))
                && p.top.contains("killed SIGTERM")
        })
    });
    s.wait_exit();
}

/// A program that takes SIGTERM and exits with a code of its own (as
/// `less` does) was killed, not failed.
#[test]
fn a_program_killed_from_the_dashboard_is_not_said_to_have_failed() {
    let sb = Sandbox::new();
    let mut s = sb.start(
        "pager",
        &[],
        &[
            "sh",
            "-c",
            "trap 'exit 15' TERM; echo alive; while :; do sleep 0.05; done",
        ],
    );
    let mut t = tui(&sb);
    t.wait_for("the pane", |t| pane_shows(t, "pager", "alive"));
    t.send(b"x");
    t.wait_for("the question", |t| t.contains("Kill session 'pager'?"));
    t.send(b"y");
    t.wait_for("the pane marked killed", |t| {
        pane(t, "pager").is_some_and(|p| p.top.contains("killed (exit 15)"))
    });
    assert!(!t.contains("exited 15"));
    s.wait_exit();
}

/// `n`, then `id` typed (none: the command names it) and Enter, up to
/// the prompt for a command (which offers the shell for an empty one).
fn open_form(t: &mut Terminal, id: &str) {
    t.send(b"n");
    t.wait_for("the prompt for an id", |t| {
        t.contains("id:         ▏(empty: the command's name)")
    });
    t.send(format!("{id}\r").as_bytes());
    t.wait_for("the prompt for a command", |t| {
        t.contains("command:    ▏(empty: /bin/sh)")
    });
}

/// The form, the id `s1`, then `command`.
fn start_s1(t: &mut Terminal, command: &str) {
    open_form(t, "s1");
    t.send(format!("{command}\r").as_bytes());
}

/// No id typed: the session is named after its command, as `hm run`
/// names one, and the form shows the name as the command is typed.
#[test]
fn a_session_started_with_no_id_is_named_after_its_command() {
    let sb = Sandbox::new();
    let _reaper = Reaper(sb.sock_dir.clone());
    let mut t = tui(&sb);
    open_form(&mut t, "");
    t.wait_for("the shell's name for an empty command", |t| {
        t.contains("id:         sh ")
    });
    t.send(b"sleep 600");
    t.wait_for("the name of the command typed", |t| {
        t.contains("id:         sleep")
    });
    t.send(b"\r");
    t.wait_for("the pane named after it", |t| {
        pane(t, "sleep").is_some() && !t.contains("command:")
    });
    let out = sb.cmd(&["kill", "sleep"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
}

/// A key typed before the command, as in a shell (`KEY=… gemini`), is
/// the program's environment: the program is the command's first word
/// after it (named after it, its own classifier), and the key is in no
/// argv, neither `hm status --json`'s nor the supervisor's in `ps`.
#[test]
fn a_key_typed_before_the_command_is_its_environment_not_its_words() {
    let sb = Sandbox::new();
    let _reaper = Reaper(sb.sock_dir.clone());
    let mut t = tui(&sb);
    open_form(&mut t, "");
    t.send(b"FORM_API_KEY=k-2718 sh -c 'echo got-$FORM_API_KEY; exec sleep 600'");
    t.wait_for("the id named after the program, not the key", |t| {
        t.contains("id:         sh ")
    });
    t.send(b"\r");
    t.wait_for("the program saw its key", |t| {
        pane_shows(t, "sh", "got-k-2718")
    });
    let v = sb.status_json("sh");
    assert_eq!(
        v["command"],
        serde_json::json!(["sh", "-c", "echo got-$FORM_API_KEY; exec sleep 600"]),
        "{v}"
    );
    assert!(!v.to_string().contains("k-2718"), "{v}");
    // Its first line is the supervisor's pid.
    let pids = std::fs::read_to_string(sb.sock_dir.join("sh.pid")).expect("the pid file");
    let supervisor = pids.lines().next().expect("a pid");
    let argv = std::fs::read(format!("/proc/{supervisor}/cmdline")).expect("its cmdline");
    assert!(
        !String::from_utf8_lossy(&argv).contains("k-2718"),
        "{}",
        String::from_utf8_lossy(&argv)
    );
    let out = sb.cmd(&["kill", "sh"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
}

/// A command that cannot start brings the form back as it was filled in,
/// saying why in it: it was thrown away, the reason cut off in the
/// footer, and everything had to be typed again.
#[test]
fn a_command_that_cannot_start_brings_the_form_back() {
    let sb = Sandbox::new();
    let _reaper = Reaper(sb.sock_dir.clone());
    let mut t = tui(&sb);
    start_s1(&mut t, "nonexistent-command-xyz --flag");
    t.wait_for("the form again, saying why", |t| {
        t.contains("could not start 's1'")
            && t.contains("command:    nonexistent-command-xyz --flag")
    });
    // Fixed and started.
    t.send(b"\x15sleep 600\r");
    t.wait_for("the session running", |t| {
        pane(t, "s1").is_some() && !t.contains("command:")
    });
}

/// The directory typed into the form as a shell reads it: `~/proj` is
/// the home's `proj`; it was looked for under the dashboard's directory.
#[test]
fn the_forms_directory_starts_at_home_for_a_tilde() {
    let sb = Sandbox::new();
    let _reaper = Reaper(sb.sock_dir.clone());
    // The sandbox is the home of what it runs.
    std::fs::create_dir_all(sb.path().join("proj")).expect("dir");
    let mut t = tui(&sb);
    open_form(&mut t, "s1");
    t.send(b"sleep 600\t\x15~/proj\r");
    t.wait_for("the session running", |t| {
        pane(t, "s1").is_some() && !t.contains("command:")
    });
    let v = sb.status_json("s1");
    let want = sb.path().join("proj");
    assert_eq!(v["workdir"], want.to_str().expect("utf-8"), "{v}");
}

#[test]
fn a_session_started_from_the_dashboard_takes_a_label() {
    let sb = Sandbox::new();
    let _reaper = Reaper(sb.sock_dir.clone());
    let mut t = tui(&sb);
    open_form(&mut t, "s1");
    t.send(b"echo labelled; exec sleep 600\t\t");
    t.wait_for("the label field", |t| t.contains("label:      ▏"));
    t.send(b"nightly build\r");
    t.wait_for("the new pane", |t| pane_shows(t, "s1", "labelled"));
    let ls = sb.cmd(&["ls"]);
    assert!(
        common::stdout(&ls).contains("[nightly build] sh -c 'echo labelled; exec sleep 600'"),
        "{}",
        common::stdout(&ls)
    );
    let out = sb.cmd(&["kill", "s1"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
}

/// A label given with `hm label` while the dashboard shows the session
/// is in its pane's title at once, as the supervisor tells it.
#[test]
fn a_label_given_meanwhile_shows_in_the_pane() {
    let sb = Sandbox::new();
    let _s = sb.start("lb", &[], &["sleep", "600"]);
    let mut t = tui(&sb);
    t.wait_for("the pane", |t| pane(t, "lb").is_some());
    let out = sb.cmd(&["label", "lb", "deploy watch"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    t.wait_for("the label in the pane's title", |t| {
        pane(t, "lb").is_some_and(|p| p.top.contains("deploy watch"))
    });
}

/// `L` gives the selected session a new label, typed in the footer from
/// the one it has: the pane's title and `hm ls` say it. `Esc` leaves the
/// label as it was.
#[test]
fn l_labels_the_selected_session_from_the_dashboard() {
    let sb = Sandbox::new();
    let _s = sb.start("lb", &["--label", "old"], &["sleep", "600"]);
    let mut t = tui(&sb);
    t.wait_for("the pane with its label", |t| {
        pane(t, "lb").is_some_and(|p| p.top.contains("old"))
    });
    t.send(b"L");
    t.wait_for("the label in the footer, to edit", |t| {
        t.last_row().contains("label lb") && t.last_row().contains("old▏")
    });
    // Ctrl-U empties the field first.
    t.send(b"\x15deploy watch\r");
    t.wait_for("the new label in the pane's title, and the notice", |t| {
        pane(t, "lb").is_some_and(|p| p.top.contains("deploy watch"))
            && t.last_row().contains("labelled 'lb': deploy watch")
    });
    let ls = common::stdout(&sb.cmd(&["ls"]));
    assert!(ls.contains("[deploy watch] sleep 600"), "{ls}");
    t.send(b"L");
    t.wait_for("the label in the footer again", |t| {
        t.last_row().contains("deploy watch▏")
    });
    t.send(b"\x15other");
    t.wait_for("the text typed", |t| t.last_row().contains("other▏"));
    t.send(b"\x1b");
    t.wait_for("the grid's footer", footer_shown);
    let ls = common::stdout(&sb.cmd(&["ls"]));
    assert!(ls.contains("[deploy watch] sleep 600"), "{ls}");
}

/// A plain command typed into the form runs as its words, not behind
/// `sh -c`: an agent started with arguments is that agent, classified and
/// hooked as `hm run claude ...` would be. A command with shell syntax
/// still goes to a shell.
#[test]
fn a_plain_command_from_the_dashboard_runs_as_its_words() {
    let sb = Sandbox::new();
    let _reaper = Reaper(sb.sock_dir.clone());
    // A stand-in named as the agent is: what matters is the name.
    let claude = sb.path().join("claude");
    std::fs::write(
        &claude,
        "#!/bin/sh\necho stand-in-$((6*7))\nexec sleep 600\n",
    )
    .expect("script");
    std::fs::set_permissions(&claude, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let mut t = tui(&sb);
    start_s1(
        &mut t,
        &format!("{} --permission-mode 'default'", claude.display()),
    );
    t.wait_for("the new pane", |t| pane_shows(t, "s1", "stand-in-42"));
    let out = sb.cmd(&["status", "s1", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["classifier"], "agent", "{v}");
    let argv = v["command"].as_array().expect("argv");
    assert_eq!(argv[0], claude.to_str().expect("utf-8"), "{v}");
    assert!(argv.iter().any(|a| a == "--permission-mode"), "{v}");
    assert!(argv.iter().any(|a| a == "default"), "{v}");
    let out = sb.cmd(&["kill", "s1"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
}

#[test]
fn a_session_started_from_the_dashboard_shows_up() {
    let sb = Sandbox::new();
    let _reaper = Reaper(sb.sock_dir.clone());
    let mut t = tui(&sb);
    start_s1(&mut t, "echo born-in-$((1+2)); exec sleep 600");
    t.wait_for("the new pane with its output", |t| {
        pane_shows(t, "s1", "born-in-3")
    });
    assert!(sb.sock_dir.join("s1.pid").exists());
    let ls = sb.cmd(&["ls"]);
    assert!(common::stdout(&ls).contains("s1"), "{ls:?}");

    // Its supervisor is the dashboard's child: once the session ends, the
    // dashboard reaps it rather than keeping a zombie until it quits.
    let out = sb.cmd(&["kill", "s1"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    t.wait_for("the end shown", |t| {
        pane(t, "s1").is_some_and(|p| p.bottom.contains("exited"))
    });
    // No child left at all: not running and not a zombie, so reaped.
    let children = |t: &Terminal| {
        let ppid = format!("PPid:\t{}", t.pid());
        std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| std::fs::read_to_string(e.path().join("status")).ok())
            .filter(|st| st.lines().any(|l| l == ppid))
            .count()
    };
    t.wait_for("the supervisor reaped", |t| children(t) == 0);
    assert!(t.try_exit().is_none());
}

#[test]
fn a_session_started_from_the_dashboard_that_ends_at_once_keeps_its_output() {
    let sb = Sandbox::new();
    let _reaper = Reaper(sb.sock_dir.clone());
    let mut t = tui(&sb);
    start_s1(&mut t, "echo said-$((6*7)); exit 3");
    // The dashboard held still from the supervisor's start until it has
    // dealt with the program's end: the dashboard comes too late, as it
    // may when busy. Looked for without a pause, to stop it in time.
    let pid_file = sb.sock_dir.join("s1.pid");
    let deadline = std::time::Instant::now() + common::PATIENCE;
    while !pid_file.exists() {
        assert!(std::time::Instant::now() < deadline, "no supervisor");
        std::thread::yield_now();
    }
    kill(t.pid(), Signal::SIGSTOP).expect("stop the dashboard");
    let log = sb.sock_dir.join("s1.log");
    wait_until("the program's end dealt with", || {
        std::fs::read_to_string(&log)
            .is_ok_and(|l| l.contains("session ended") || l.contains("launcher's attach"))
    });
    kill(t.pid(), Signal::SIGCONT).expect("continue the dashboard");
    // Not "supervisor gone" with an empty pane: its output and code.
    t.wait_for("the pane with its output and exit code", |t| {
        pane(t, "s1").is_some_and(|p| p.shows("said-42") && p.bottom.contains("exited 3"))
    });
    // `r` asks first, naming what runs again; `y` runs it again and
    // says so in its own words.
    t.send(b"r");
    t.wait_for("the question", |t| {
        t.contains("Run session 's1' again?")
            && t.contains("echo said-$((6*7)); exit 3")
            && t.contains("run 's1' again?")
    });
    t.send(b"y");
    t.wait_for("the notice of the restart", |t| {
        t.contains("restarted 's1'")
    });
}

/// A session that ends at once, and `hm restart` of it from another
/// terminal: the pane shows each run's lines and end, however short it
/// ran (found in its last moments, the pane stayed `gone` and empty; and
/// it kept the first run's lines and time when the second ended between
/// two looks).
#[test]
fn a_pane_shows_the_new_run_of_a_session_restarted_elsewhere() {
    let sb = Sandbox::new();
    let _reaper = Reaper(sb.sock_dir.clone());
    let script = "if [ -e ran ]; then echo second-$((6*7)); exit 5; fi; \
                  touch ran; echo first-$((6*7)); exit 4";
    let out = sb
        .hm()
        .args(["run", "--bg", "--id", "quick", "--socket-dir", sb.dir()])
        .args(["--", "sh", "-c", script])
        .output()
        .expect("hm run");
    assert!(out.status.success(), "{}", common::stderr(&out));
    let mut t = tui(&sb);
    t.wait_for("the first run's end", |t| {
        pane(t, "quick").is_some_and(|p| p.shows("first-42") && p.bottom.contains("exited 4"))
    });
    let out = sb.cmd(&["restart", "quick"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    t.wait_for("the second run's end", |t| {
        pane(t, "quick").is_some_and(|p| p.shows("second-42") && p.bottom.contains("exited 5"))
    });
}

/// `[tui] fit_sessions = true` (off by default): each session is fitted to
/// its pane, and focus gives it the terminal less the bar.
#[test]
fn with_fit_sessions_panes_resize_their_sessions_and_focus_takes_all_but_its_bar() {
    let sb = Sandbox::new();
    let config = sb.path().join("config/heimdall");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(config.join("heimdall.toml"), "[tui]\nfit_sessions = true\n").expect("config");
    // Says its size at start and on every change.
    let _s = sb.start(
        "size",
        &[],
        &[
            "sh",
            "-c",
            "trap 'stty size' WINCH; stty size; while :; do sleep 0.05; done",
        ],
    );
    let mut t = tui_sized(&sb, &[], (30, 100));
    let fits = |t: &Terminal| {
        pane(t, "size").is_some_and(|p| {
            let (rows, cols) = p.inner();
            p.shows(&format!("{rows} {cols}"))
        })
    };
    t.wait_for("the session at its pane's inner size", fits);
    assert_eq!(pane(&t, "size").expect("pane").inner(), (27, 98));

    t.send(b"\r");
    t.wait_for(
        "the session at the terminal's size, less the focus bar",
        |t| t.has_line("29 100"),
    );
    t.send(DETACH);
    t.wait_for("the grid", footer_shown);

    t.resize(26, 90);
    t.wait_for("the session at the new pane size", |t| {
        pane(t, "size").is_some_and(|p| p.inner() == (23, 88) && p.shows("23 88"))
    });
}

/// By default a session keeps its own size in the grid; focus gives it
/// the dashboard's, less the bar.
#[test]
fn a_session_keeps_its_own_size_until_focused() {
    let sb = Sandbox::new();
    let _s = sb.start("own", &["--cols", "120", "--rows", "40"], SHELL);
    let mut t = tui_sized(&sb, &[], (30, 100));
    t.wait_for("the pane", |t| pane_shows(t, "own", "bash-"));
    assert_eq!(session_size(&sb, "own"), Some((40, 120)));
    t.send(b"\r");
    t.wait_for("focus", |t| !t.last_row().contains("move"));
    t.send(b"stty size\r");
    t.wait_for("the dashboard's size", |t| t.has_line("29 100"));
}

#[test]
fn quit_restores_the_terminal_and_leaves_sessions_running() {
    let sb = Sandbox::new();
    let mut s = sb.start(
        "stays",
        &[],
        &["sh", "-c", "echo still-here; exec sleep 600"],
    );
    let mut t = tui(&sb);
    t.wait_for("the pane", |t| pane_shows(t, "stays", "still-here"));
    assert!(t.screen().alternate_screen());
    t.send(b"q");
    assert_eq!(t.wait_exit(), 0);
    // The last output is read with the exit.
    t.wait_for("the screen restored", |t| !t.screen().alternate_screen());
    assert_restored(&t);
    assert!(s.raw().status().expect("a status").alive);
    assert!(s.child.try_wait().expect("try_wait").is_none());
}

#[test]
fn a_signal_ends_the_dashboard_with_its_code_and_the_terminal_restored() {
    let sb = Sandbox::new();
    let _s = sb.start("stays", &[], &["sh", "-c", "echo here; exec sleep 600"]);
    for (sig, code) in [(Signal::SIGTERM, 143), (Signal::SIGHUP, 129)] {
        let mut t = tui(&sb);
        t.wait_for("the pane", |t| pane_shows(t, "stays", "here"));
        t.signal(sig);
        assert_eq!(t.wait_exit(), code, "{sig}");
        t.wait_for("the screen restored", |t| !t.screen().alternate_screen());
        assert_restored(&t);
    }
}

#[test]
fn a_supervisor_that_knows_none_of_our_extensions_still_shows() {
    let sb = Sandbox::new();
    let _old = fake::listen(&sb, "old", seed_supervisor);
    let mut t = tui(&sb);
    t.wait_for("its output and state", |t| {
        pane(t, "old").is_some_and(|p| {
            p.shows("seed says hello") && p.shows("old-prompt$") && p.top.contains(" idle ")
        })
    });
    let p = pane(&t, "old").expect("pane");
    assert!(!p.bottom.contains("connecting"), "{p:?}");
}

#[test]
fn bad_supervisors_affect_only_their_own_pane() {
    let sb = Sandbox::new();
    let _good = ticking(&sb, "good");
    let _mute = fake::listen(&sb, "mute", mute_supervisor);
    let _junk = fake::listen(&sb, "junk", garbage_supervisor);
    // Locked (so alive) but nobody listens on the socket.
    let _deaf = fake::locked_pid_file(&sb, "deaf");
    drop(UnixListener::bind(sb.sock("deaf")).expect("bind"));
    // Left behind by a crash: not locked, so not a session at all.
    std::fs::write(sb.sock_dir.join("stale.pid"), "1\n1\n").expect("stale pid");
    drop(UnixListener::bind(sb.sock("stale")).expect("bind"));

    let mut t = tui_sized(&sb, &[], (30, 100));
    t.wait_for("every bad pane's problem", |t| {
        let problem = |id: &str, what: &str| pane(t, id).is_some_and(|p| p.bottom.contains(what));
        // Long reasons are cut to the pane's width; their ends show.
        problem("mute", "not responding")
            && problem("junk", "4294967295 payload bytes")
            && problem("deaf", "Connection refused")
    });
    keeps_ticking(&mut t, "good", 5);
    assert!(pane(&t, "stale").is_none(), "a stale session is no session");
    assert!(t.try_exit().is_none());
}

#[test]
fn a_program_outliving_its_killed_supervisor_is_shown_as_orphaned() {
    let sb = Sandbox::new();
    let marker = format!("5009.{}", std::process::id());
    // The program ignores the hang-up its supervisor's death sends it. The
    // session's guard kills it by the pid file, which is kept for it.
    let script = format!("trap '' HUP; echo up; exec sleep {marker}");
    let mut s = sb.start("stray", &[], &["sh", "-c", &script]);
    let program = s.child_pid().expect("program pid");
    let mut t = tui_sized(&sb, &[], (30, 120));
    t.wait_for("the pane", |t| pane_shows(t, "stray", "up"));
    kill(Pid::from_raw(s.child.id() as i32), Signal::SIGKILL).expect("kill");
    s.wait_exit();
    t.wait_for("the orphan named", |t| {
        pane(t, "stray").is_some_and(|p| {
            p.top.contains("orphaned") && p.bottom.contains(&format!("pid {program} runs on"))
        }) && t.contains("lost its supervisor: hm kill stray stops it")
    });
    assert!(
        !pane(&t, "stray").expect("pane").top.contains(" dead "),
        "it is not"
    );
    assert_eq!(sleepers(&marker), vec![program], "never signalled by hm");
    // Once it ends, the pane stops naming a pid that may be reused.
    kill(Pid::from_raw(program), Signal::SIGKILL).expect("kill the program");
    t.wait_for("the orphan's end", |t| {
        pane(t, "stray").is_some_and(|p| {
            p.top.contains(" gone ")
                && p.bottom.contains("supervisor gone")
                && !p.bottom.contains("pid")
        })
    });
    assert!(t.try_exit().is_none());
}

/// A shell ends on the hang-up its supervisor's death sends it, after a
/// moment (bash writes its history first): its pane goes straight to its
/// end, never `orphaned` on the way (it said so for a second, naming a
/// pid that was about to end).
#[test]
fn a_shell_whose_supervisor_was_killed_is_never_shown_orphaned() {
    let sb = Sandbox::new();
    let script = "trap 'sleep 0.3; exit 129' HUP; echo up; while :; do sleep 0.05; done";
    let mut s = sb.start("sh", &[], &["sh", "-c", script]);
    let mut t = tui_sized(&sb, &[], (30, 120));
    t.wait_for("the shell's prompt", |t| pane_shows(t, "sh", "up"));
    kill(Pid::from_raw(s.child.id() as i32), Signal::SIGKILL).expect("kill");
    s.wait_exit();
    let orphaned = std::cell::Cell::new(false);
    t.wait_for("the pane's end", |t| {
        let p = pane(t, "sh");
        if p.as_ref().is_some_and(|p| p.top.contains("orphaned"))
            || t.contains("lost its supervisor")
        {
            orphaned.set(true);
        }
        p.is_some_and(|p| p.bottom.contains("supervisor gone") && !p.bottom.contains("pid"))
    });
    assert!(!orphaned.get(), "{:?}", t.lines());
}

#[test]
fn an_orphan_from_before_the_dashboard_started_is_shown() {
    let sb = Sandbox::new();
    let marker = format!("5010.{}", std::process::id());
    let orphan = common::orphan(&sb, "early", &marker);
    let program = orphan.pid;
    let mut t = tui_sized(&sb, &[], (30, 120));
    t.wait_for("the orphan named", |t| {
        pane(t, "early").is_some_and(|p| {
            p.top.contains("orphaned") && p.bottom.contains(&format!("pid {program} runs on"))
        })
    });
    // x stops it, as hm kill does, after asking.
    t.send(b"x");
    t.wait_for("the question", |t| {
        t.contains("Kill session 'early'?") && t.contains(&format!("pid {program}, outlived"))
    });
    t.send(b"y");
    t.wait_for("it to be stopped", |t| {
        t.contains("was stopped with SIGTERM") && sleepers(&marker).is_empty()
    });
    // Its pane says how it ended, as any killed session's does (it said
    // `gone` until cleared by hand).
    t.wait_for("its pane to say it was killed", |t| {
        pane(t, "early").is_some_and(|p| p.top.contains("killed SIGTERM"))
    });
    assert!(t.try_exit().is_none());
}

/// Output no terminal should have to take, then a line that must show.
const HOSTILE: &str = r#"
printf '\033]0;'; head -c 200000 /dev/zero | tr '\0' x
printf '\033[99999999;99999999H\033[4294967295C\033[99999999L\033[?99999999h'
printf '\377\376\303(\r\n\355\240\200\r\n'
i=0
while [ $i -lt 40 ]; do
  printf '%s\r\n' 'a你好你好你好你好你好你好你好你好你好你好你好你好你好你好你好你好你好你好你好你好你好你好你好'
  i=$((i+1))
done
printf '\033P'; head -c 100000 /dev/zero | tr '\0' y
printf '\033\\\r\n'
echo survived-hostile
exec sleep 600
"#;

#[test]
fn hostile_output_never_crashes_the_dashboard() {
    let sb = Sandbox::new();
    let script = sb.path().join("hostile.sh");
    std::fs::write(&script, HOSTILE).expect("write script");
    let script = script.to_str().expect("utf-8").to_string();
    let _calm = ticking(&sb, "calm");
    let _evil = sb.start("evil", &[], &["sh", &script]);
    let mut t = tui(&sb);
    t.wait_for("the line after the hostile output", |t| {
        pane_shows(t, "evil", "survived-hostile")
    });
    // Wide characters land on every column edge as the panes change size.
    for (rows, cols) in [(25, 81), (13, 47), (30, 101), (9, 33), (40, 133), (24, 80)] {
        t.resize(rows, cols);
        t.wait_for("a repaint at the new size", |t| {
            t.last_row().contains("move") || cols < 40
        });
        assert!(
            t.try_exit().is_none(),
            "the dashboard died at {rows}x{cols}"
        );
    }
    // Focused, at the edge of the whole screen too. Keys wait until the
    // last resize is drawn: crossterm can hold back a key that arrives
    // together with SIGWINCH until the next one (see docs/tui.md).
    t.wait_for("both panes drawn at 80 columns", |t| {
        pane(t, "evil").is_some_and(|p| p.cols < 40 && p.shows("survived-hostile"))
            && pane(t, "calm").is_some()
    });
    t.send(b"l");
    t.send(b"\r");
    t.wait_for("focus", |_| session_size(&sb, "evil") == Some((23, 80)));
    t.resize(24, 79);
    t.wait_for("the focused session resized", |_| {
        session_size(&sb, "evil") == Some((23, 79))
    });
    t.send(DETACH);
    t.wait_for("the grid", footer_shown);
    keeps_ticking(&mut t, "calm", 3);
    assert!(t.try_exit().is_none());
}

/// NO_COLOR takes the dashboard's own colours away, not the sessions':
/// what a program printed red and bold is drawn so (crossterm, which
/// draws the frame, dropped every colour it was given under NO_COLOR).
#[test]
fn no_color_draws_without_colours() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "plain",
        &[],
        &[
            "sh",
            "-c",
            "printf 'plain-text \\033[1;31mred\\033[0m\\n'; exec sleep 600",
        ],
    );
    let mut t = start_tui(&sb, &[], (ROWS, COLS), true);
    t.wait_for("the pane", |t| {
        pane(t, "plain").is_some_and(|p| p.shows("plain-text red") && !p.top.contains('…'))
    });
    let s = t.screen();
    // Where the session's `red` is: after `plain-text ` in its pane.
    let red_at: Vec<(u16, u16)> = (0..ROWS)
        .filter_map(|r| {
            let row = s.contents_between(r, 0, r, COLS);
            let at = row.find("plain-text red")?;
            let col = row[..at].chars().count() as u16 + 11;
            Some((r, col))
        })
        .collect();
    assert_eq!(red_at.len(), 1, "one pane shows it");
    let (red_row, red_col) = red_at[0];
    for r in 0..ROWS {
        for c in 0..COLS {
            let cell = s.cell(r, c).expect("cell");
            if r == red_row && (red_col..red_col + 3).contains(&c) {
                assert_eq!(cell.fgcolor(), vt100::Color::Idx(1), "the session's red");
                assert!(cell.bold(), "the session's bold");
                continue;
            }
            assert_eq!(
                (cell.fgcolor(), cell.bgcolor()),
                (vt100::Color::Default, vt100::Color::Default),
                "colour at {r},{c}: {:?}",
                cell.contents()
            );
        }
    }
    // The footer is still marked, in reverse video.
    assert!(s.cell(ROWS - 1, 5).expect("cell").inverse());
}

#[test]
fn the_light_theme_paints() {
    let sb = Sandbox::new();
    let _s = sb.start("sunny", &[], &["sh", "-c", "echo bright; exec sleep 600"]);
    let mut t = tui_sized(&sb, &["--theme", "light"], (ROWS, COLS));
    t.wait_for("the pane", |t| pane_shows(t, "sunny", "bright"));
    let footer = t.screen().cell(ROWS - 1, 5).expect("a footer cell");
    assert_eq!(footer.bgcolor(), vt100::Color::Idx(254));
}

/// A terminal that says it cannot draw (an editor's shell buffer) is
/// told so in a line, and left as it was.
#[test]
fn a_dumb_terminal_is_refused_before_touching_it() {
    let sb = Sandbox::new();
    let args: Vec<OsString> = vec!["tui".into(), "--socket-dir".into(), sb.dir().into()];
    let mut t = Terminal::start(
        HM.as_ref(),
        &args,
        &sb.terminal_env(&[("TERM", "dumb")]),
        sb.path(),
        (ROWS, COLS),
        "$ hm tui",
    );
    assert_ne!(t.wait_exit(), 0);
    t.wait_for("the error", |t| {
        t.contains("this terminal (TERM=dumb) cannot draw the dashboard")
    });
    assert!(!t.screen().alternate_screen());
    assert_eq!(t.termios(), terminal::pristine_termios());
}

#[test]
fn an_unknown_theme_fails_before_touching_the_terminal() {
    let sb = Sandbox::new();
    let mut t = start_tui(&sb, &["--theme", "neon"], (ROWS, COLS), false);
    let code = t.wait_exit();
    assert_ne!(code, 0);
    t.wait_for("the error", |t| {
        t.contains("unknown theme 'neon' (available: dark, light, high-contrast)")
    });
    assert!(!t.screen().alternate_screen());
    assert_eq!(t.termios(), terminal::pristine_termios());
    assert!(!sb.sock_dir.exists(), "nothing made either");
}

#[test]
fn an_unknown_theme_in_the_config_file_is_named_with_its_line() {
    let sb = Sandbox::new();
    let config = sb.path().join("config/heimdall/heimdall.toml");
    std::fs::create_dir_all(config.parent().expect("dir")).expect("mkdir");
    std::fs::write(&config, "# mine\n[tui]\ntheme = \"neon\"\n").expect("config");
    let mut t = start_tui(&sb, &[], (ROWS, COLS), false);
    assert_ne!(t.wait_exit(), 0);
    let want = format!(
        "{}:3: invalid value for 'tui.theme': unknown theme 'neon'",
        config.display()
    );
    t.wait_for("the error", |t| t.contains(&want));
    assert!(!t.screen().alternate_screen());
}

#[test]
fn fifty_sessions_paint_with_a_page_footer() {
    let sb = Sandbox::new();
    let (ids, sessions) = sleepers_answering(&sb, 50);
    // Nine readable panes to a page on 80x24, within the usual patience
    // (the benchmarks measure how fast).
    let mut t = tui(&sb);
    t.wait_for("the first page, paged", |t| {
        t.last_row().contains("page 1/6") && (0..9).all(|i| pane(t, &ids[i]).is_some())
    });
    assert!(pane(&t, "job09").is_none(), "not on the first page");
    t.send(b"\x1b[6~");
    t.wait_for("the second page", |t| {
        t.last_row().contains("page 2/6") && pane(t, "job09").is_some()
    });
    drop(sessions);
}

/// With `desktop_notify` set, the terminal the dashboard runs in is asked
/// for a desktop notification when a session not looked at ends: the
/// sequence reaches the terminal as the config names it, with the session
/// and its exit code, and one that is looked at asks for none.
#[test]
fn a_session_ending_out_of_sight_asks_the_terminal_for_a_desktop_notification() {
    let sb = Sandbox::new();
    std::fs::write(
        sb.path().join("heimdall.toml"),
        "[tui]\ndesktop_notify = \"osc9\"\n",
    )
    .expect("config");
    // "aaa" is selected (first in the grid); "zzz" is out of sight.
    let _seen = sb.start("aaa", &[], &["sh", "-c", "echo seen; exec sleep 600"]);
    let mut gone = sb.start("zzz", &[], &["sh", "-c", "echo ready; read x; exit 3"]);
    let mut t = tui(&sb);
    t.wait_for("both panes", |t| {
        pane_shows(t, "aaa", "seen") && pane_shows(t, "zzz", "ready")
    });
    t.record();
    gone.raw().send(ClientType::Input as u8, b"\n");
    t.wait_for("the notification", |t| {
        let raw = String::from_utf8_lossy(t.recorded()).into_owned();
        raw.contains("\x1b]9;zzz: exited with code 3\x07")
    });
    gone.wait_exit();
    let raw = String::from_utf8_lossy(t.recorded()).into_owned();
    assert!(!raw.contains("\x1b]9;aaa"), "{raw:?}");
}

/// A stand-in for Codex CLI at its command approval about `$2` (as
/// `answer.rs` draws it); once it gets a key it writes the key's bytes,
/// as hex, into file `$1` and goes on without the dialog. Named `codex`.
const CODEX_ASKING: &str = r#"#!/bin/bash
while [ "$1" = -c ]; do shift 2; done
stty raw -echo
printf '  >_ OpenAI Codex (v0.169.0)\r\n\r\n'
printf '\342\200\242 Running %s\r\n\r\n' "$2"
printf '  Would you like to run the following command?\r\n\r\n'
printf '  Environment: local\r\n\r\n'
printf '  $ %s\r\n\r\n' "$2"
printf '\342\200\272 1. Yes, proceed (y)\r\n'
printf '  2. Yes, and don'"'"'t ask again for commands that start with `%s` (p)\r\n' "$2"
printf '  3. No, and tell Codex what to do differently (esc)\r\n\r\n'
printf '  Press enter to confirm or esc to cancel'
keys=$(dd bs=64 count=1 2>/dev/null | od -An -tx1 | tr -d ' \n')
printf '%s\n' "$keys" > "$1.tmp" && mv "$1.tmp" "$1"
printf '\033[H\033[2Jran it\r\n'
exec sleep 600
"#;

/// A dialog an `[[automation]]` entry answers calls nobody: no desktop
/// notification, no mark, while one no entry answers does. Each
/// supervisor says in its pushed state that a rule will answer.
#[test]
fn a_dialog_an_automation_rule_answers_calls_nobody() {
    let sb = Sandbox::new();
    std::fs::write(
        sb.path().join("heimdall.toml"),
        "[tui]\ndesktop_notify = \"osc9\"\n\n[[automation]]\nagent = \"codex\"\n\
         detail = \"permission\"\nsubject = '^cargo test'\naction = \"approve\"\n\
         dwell_ms = 1500\n",
    )
    .expect("config");
    let bin = sb.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin dir");
    let codex = bin.join("codex");
    std::fs::write(&codex, CODEX_ASKING).expect("stand-in");
    std::fs::set_permissions(&codex, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("executable");
    let codex = codex.to_str().expect("utf-8");
    let _seen = sb.start("aaa", &[], &["sh", "-c", "echo seen; exec sleep 600"]);
    let mut t = tui(&sb);
    t.wait_for("the first pane", |t| pane_shows(t, "aaa", "seen"));
    t.record();
    let got = sb.path().join("auto.got");
    let _auto = sb.start(
        "auto",
        &[],
        &[codex, got.to_str().expect("utf-8"), "cargo test"],
    );
    t.wait_for("its pane", |t| pane(t, "auto").is_some());
    let hand_got = sb.path().join("hand.got");
    let _hand = sb.start(
        "hand",
        &[],
        &[codex, hand_got.to_str().expect("utf-8"), "rm -rf build"],
    );
    // The rule approved it (`y`), and it went on.
    wait_until("the rule's answer", || {
        std::fs::read_to_string(&got).is_ok_and(|k| k.trim() == "79")
    });
    t.wait_for("the call to the other", |t| {
        String::from_utf8_lossy(t.recorded()).contains("\x1b]9;hand: waiting · permission\x07")
    });
    t.wait_for("the answered one at work", |t| {
        pane_shows(t, "auto", "ran it")
    });
    let raw = String::from_utf8_lossy(t.recorded()).into_owned();
    assert!(!raw.contains("\x1b]9;auto"), "{raw:?}");
    let auto = pane(&t, "auto").expect("its pane");
    assert!(!auto.top.contains('●'), "{auto:?}");
    assert!(pane(&t, "hand").expect("its pane").top.contains('●'));
    // What the supervisor says of the dialog no rule answers: nothing.
    let v = sb.status_json("hand");
    assert!(v["dialog"]["automation_in_ms"].is_null(), "{v}");
}

/// Shift-PgUp and Shift-PgDn as xterm sends them.
const SHIFT_PGUP: &[u8] = b"\x1b[5;2~";
const SHIFT_PGDN: &[u8] = b"\x1b[6;2~";

/// A wheel notch up (or down) at the 0-based cell, SGR-encoded as the
/// dashboard asked its terminal to report the mouse.
fn wheel(up: bool, row: u16, col: u16) -> Vec<u8> {
    format!(
        "\x1b[<{};{};{}M",
        if up { 64 } else { 65 },
        col + 1,
        row + 1
    )
    .into_bytes()
}

/// A session that printed `seq 1 200` and waits at a bash prompt.
fn seq_then_shell(sb: &Sandbox, id: &str) -> Session {
    sb.start(
        id,
        &[],
        &["sh", "-c", "seq 1 200; exec bash --norc --noprofile -i"],
    )
}

/// The pane's first row of text, trimmed.
fn first_row(t: &Terminal, id: &str) -> String {
    pane(t, id)
        .and_then(|p| p.body.first().map(|l| l.trim().to_owned()))
        .unwrap_or_default()
}

#[test]
fn a_panes_history_is_reached_with_shift_page_up_and_the_wheel() {
    let sb = Sandbox::new();
    let _s = seq_then_shell(&sb, "sq");
    let mut t = tui(&sb);
    t.wait_for("the prompt under the numbers", |t| {
        pane(t, "sq").is_some_and(|p| p.shows("bash-") && p.shows("200"))
    });
    // Shift-PgUp in the grid: the selected pane goes back a page at a
    // time, and says how far; line 1 is reachable.
    t.send(SHIFT_PGUP);
    t.wait_for("the pane scrolled back", |t| {
        pane(t, "sq").is_some_and(|p| p.bottom.contains("[+") && !p.shows("bash-"))
    });
    // 200 lines are at most 20 pages of the smallest pane.
    for _ in 0..30 {
        if t.holds_within(std::time::Duration::from_millis(300), |t| {
            first_row(t, "sq").starts_with("1 ") || first_row(t, "sq") == "1"
        }) {
            break;
        }
        t.send(SHIFT_PGUP);
    }
    assert!(first_row(&t, "sq").starts_with('1'), "{:?}", pane(&t, "sq"));
    // Back down: live again, the marker gone.
    for _ in 0..20 {
        t.send(SHIFT_PGDN);
    }
    t.wait_for("the live screen again", |t| {
        pane(t, "sq").is_some_and(|p| p.shows("bash-") && !p.bottom.contains("[+"))
    });
    // The wheel over the pane scrolls it as well.
    let (row, col) = (5, 10);
    t.send(&wheel(true, row, col));
    t.wait_for("the wheel's scroll", |t| {
        pane(t, "sq").is_some_and(|p| p.bottom.contains("[+3/"))
    });
    t.send(&wheel(false, row, col));
    t.wait_for("back down", |t| {
        pane(t, "sq").is_some_and(|p| !p.bottom.contains("[+"))
    });
    // In focus Shift-PgUp is the dashboard's, never typed: bash gets no
    // `2~`. `q` leaves copy mode, and keys are typed again.
    t.send(b"\r");
    t.wait_for("focus", |t| t.last_row().contains("back to the grid"));
    t.send(SHIFT_PGUP);
    t.wait_for("copy mode in focus", |t| {
        t.row(0).contains("copy [+") && t.last_row().contains(" copy ")
    });
    t.send(b"q");
    t.wait_for("the live screen", |t| {
        t.last_row().contains("back to the grid")
    });
    t.send(b"echo typed-$((6*7))\r");
    t.wait_for("the command's output", |t| t.has_line("typed-42"));
    assert!(
        !t.contains("2~"),
        "Shift-PgUp reached the shell: {:?}",
        t.lines()
    );
}

#[test]
fn copy_mode_searches_the_history_and_copies_through_osc_52() {
    let sb = Sandbox::new();
    let _s = seq_then_shell(&sb, "sq");
    let mut t = tui(&sb);
    t.wait_for("the prompt", |t| {
        pane(t, "sq").is_some_and(|p| p.shows("bash-") && p.shows("200"))
    });
    // `[` opens copy mode on the selected pane; `?` searches up.
    t.send(b"[");
    t.wait_for("copy mode", |t| t.last_row().contains(" copy "));
    t.send(b"?150\r");
    t.wait_for("the match in view", |t| {
        pane(t, "sq").is_some_and(|p| p.body.iter().any(|l| l.trim() == "150"))
            // Where it is, on the bottom border: over the first row it hid
            // what was being read.
            && pane(t, "sq").is_some_and(|p| p.bottom.contains("copy [+"))
    });
    // The search bar does not take over the grid's `/` filter.
    assert!(!t.last_row().contains("/150"), "{}", t.last_row());
    t.record();
    // Select that line and the next to its end, and copy.
    t.send(b"vj$y");
    t.wait_for("the notice", |t| t.last_row().contains("copied 2 lines"));
    t.wait_for("OSC 52 with the two lines", |t| {
        // base64 of "150\n151"
        String::from_utf8_lossy(t.recorded()).contains("\x1b]52;c;MTUwCjE1MQ==\x07")
    });
    t.wait_for("the live screen", |t| {
        pane(t, "sq").is_some_and(|p| p.shows("bash-") && !p.body[0].contains("[+"))
    });
    // A search for nothing says so, and `q` leaves.
    t.send(b"[/no-such-line\r");
    t.wait_for("not found", |t| {
        t.last_row().contains("not found: no-such-line")
    });
    t.send(b"q");
    t.wait_for("the grid's footer", footer_shown);
}

/// A shell `a-sh` and `b-asks`, a session waiting for an answer (the
/// `agent` classifier sees its `read` of the terminal).
fn shell_and_asker(sb: &Sandbox) -> (Session, Session) {
    (
        sb.start("a-sh", &[], SHELL),
        sb.start(
            "b-asks",
            &["--classifier", "agent"],
            &["bash", "-c", "read -p 'Continue? [y/N] ' x; sleep 600"],
        ),
    )
}

/// `a` hands the terminal to a raw attach of the selected session: what
/// is typed reaches the program byte for byte, the bar counts the other
/// sessions that need you, and the detach key comes back to the dashboard
/// as it was, with none of the program's modes left on.
#[test]
fn a_raw_attach_from_the_grid_and_back() {
    let sb = Sandbox::new();
    let _sessions = shell_and_asker(&sb);
    let mut t = tui(&sb);
    t.wait_for("the shell's prompt", |t| {
        pane(t, "a-sh").is_some_and(|p| p.shows("bash-") && !p.bottom.contains("connecting"))
    });
    t.send(b"a");
    t.wait_for("the attach: the shell on the whole screen, its bar", |t| {
        !footer_shown(t) && t.last_row().contains("hm · a-sh") && t.last_row().contains("dashboard")
    });
    t.wait_for("the other session counted as needing you", |t| {
        t.last_row().contains("1 needs you")
    });
    // Bytes no key encoder would make (a kitty-keyboard Ctrl-a) arrive as
    // they were sent.
    // The program switches the kitty keyboard protocol on; a key in it
    // (Ctrl-a as CSI u) reaches it as the terminal sent it.
    t.send(b"printf '\\033[>1u'; cat -v\r");
    t.send(b"\x1b[97;5u\r");
    t.wait_for("the sequence, byte for byte", |t| t.contains("^[[97;5u"));
    t.send(b"\x04");
    // The program turns modes on; leaving must not keep them.
    t.send(b"printf '\\033[?1003h\\033[?1005h\\033[?1h'; echo raw-$((6*7))\r");
    t.wait_for("the command's output", |t| t.has_line("raw-42"));
    t.send(DETACH);
    t.wait_for("the dashboard again, with what was typed", |t| {
        footer_shown(t) && pane_shows(t, "a-sh", "raw-42")
    });
    // The dashboard's own modes, not the program's.
    let s = t.screen();
    assert!(s.alternate_screen());
    assert_eq!(s.mouse_protocol_mode(), MouseProtocolMode::ButtonMotion);
    assert_eq!(s.mouse_protocol_encoding(), MouseProtocolEncoding::Sgr);
    assert!(
        !s.application_cursor(),
        "the program's application cursor left on"
    );
    // The keyboard is the dashboard's again.
    t.send(b"?");
    t.wait_for("the help", |t| t.contains("raw attach"));
    t.send(b"q");
    t.wait_for("the help closed", |t| !t.contains("raw attach"));
    t.send(b"q");
    assert_eq!(t.wait_exit(), 0);
    assert_restored(&t);
}

/// From focus, `attach_key` (here Ctrl-T) starts a raw attach; the
/// next-session key (`next_key`, here Ctrl-G) leaves it for the dashboard
/// with the next session that needs you selected.
#[test]
fn the_next_key_leaves_a_raw_attach_for_the_session_that_needs_you() {
    let sb = Sandbox::new();
    let dir = sb.path().join("config/heimdall");
    std::fs::create_dir_all(&dir).expect("config dir");
    std::fs::write(
        dir.join("heimdall.toml"),
        "next_key = \"ctrl-g\"\nattach_key = \"ctrl-t\"\n",
    )
    .expect("config");
    let _sessions = shell_and_asker(&sb);
    let mut t = tui(&sb);
    t.wait_for("the shell's prompt", |t| {
        pane(t, "a-sh").is_some_and(|p| p.shows("bash-")) && t.row(0).contains("┏ a-sh")
    });
    // From focus, the raw-attach key (`attach_key`) does what `a` does.
    t.send(b"\r");
    t.wait_for("focus", |t| t.last_row().contains("back to the grid"));
    t.send(b"\x14");
    t.wait_for("the bar naming the next key", |t| {
        t.last_row().contains("1 needs you") && t.last_row().contains("Ctrl-G next")
    });
    t.send(b"\x07");
    t.wait_for("the dashboard, the waiting session selected", |t| {
        footer_shown(t) && t.row(0).contains("┏ b-asks")
    });
}

/// Emulated focus gives the program the mouse events it asked for, in the
/// encoding it asked for (here SGR), and focus in/out when it asked for
/// those (`?1004`): entering focus is focus in, leaving it focus out.
#[test]
fn focus_forwards_the_mouse_and_focus_reports_a_program_asked_for() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "mouse",
        &[],
        &[
            "sh",
            "-c",
            "printf '\\033[?1000h\\033[?1006h\\033[?1004hready\\n'; exec cat -v",
        ],
    );
    let mut t = tui(&sb);
    t.wait_for("the program ready", |t| pane_shows(t, "mouse", "ready"));
    t.send(b"\r");
    t.wait_for("focus, and the program told it has the user", |t| {
        !footer_shown(t) && t.contains("^[[I")
    });
    // The user's terminal reports a click at column 5, row 3 (SGR).
    t.send(b"\x1b[<0;5;3M\x1b[<0;5;3m");
    t.send(b"\r");
    t.wait_for("the click, as the program asked for it", |t| {
        t.contains("^[[<0;5;3M^[[<0;5;3m")
    });
    t.send(DETACH);
    t.wait_for("the grid, and the program told it lost the user", |t| {
        footer_shown(t) && pane_shows(t, "mouse", "^[[O")
    });
}

/// A session someone is attached to keeps that terminal's size: with
/// `fit_sessions` the dashboard does not shrink it to its pane, shows it
/// at its size and says so, and fits it again once the attach has gone.
#[test]
fn with_fit_sessions_a_session_held_by_an_attach_is_not_shrunk_and_its_pane_says_so() {
    let sb = Sandbox::new();
    let config = sb.path().join("config/heimdall");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(config.join("heimdall.toml"), "[tui]\nfit_sessions = true\n").expect("config");
    let _s = sb.start(
        "held",
        &[],
        &[
            "sh",
            "-c",
            "trap 'echo winch' WINCH; while :; do sleep 0.2; done",
        ],
    );
    let mut person = Terminal::start(
        HM.as_ref(),
        &[
            "attach".into(),
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
    let mut t = tui(&sb);
    t.wait_for("the pane marked as held at the attach's size", |t| {
        pane(t, "held").is_some_and(|p| p.bottom.contains("100x29 held"))
    });
    assert_eq!(session_size(&sb, "held"), Some((29, 100)), "not shrunk");
    person.send(DETACH);
    assert_eq!(person.wait_exit(), 0);
    t.wait_for("the pane fitted again, unmarked", |t| {
        pane(t, "held").is_some_and(|p| !p.bottom.contains("held "))
    });
    let fitted = session_size(&sb, "held").expect("a size");
    assert!(fitted.1 < 100, "{fitted:?}");
}

/// Grapheme clusters come out whole in tmux, a terminal that draws them as
/// one: a family emoji (joined by ZWJ), a combining accent, a flag, a
/// heart with its emoji selector and CJK, each where the session's screen
/// has it, in a pane and in focus; nothing of one spills into the next
/// column (before, the family's pieces went out one by one and tmux joined
/// them across the cursor moves: `A 👨‍👩  ‍👧   B`).
#[test]
fn grapheme_clusters_render_whole_in_panes_and_focus() {
    let sb = Sandbox::new();
    if !common::tmux::available() {
        println!("skipped: tmux is not installed");
        return;
    }
    let text = "A \u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467} B | e\u{301} | \u{1F1E9}\u{1F1EA} | \u{2764}\u{FE0F} | \u{4E2D}\u{6587} |";
    let printf = format!("printf '{text}\\n'; exec sleep 600");
    let _s = sb.start("emoji", &[], &["sh", "-c", &printf]);
    let tui = format!("{HM} tui --socket-dir {}", sb.dir());
    let Some(tmux) = Tmux::start(&sb, &tui, (100, 20)) else {
        println!("skipped: tmux could not start");
        return;
    };
    // vt100 keeps the family in three cells (six columns): the rest of the
    // row stays in its columns, after blanks where the pieces were.
    let shown = "A \u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}     B | e\u{301} | \u{1F1E9}\u{1F1EA} | \u{2764}\u{FE0F}  | \u{4E2D}\u{6587} |";
    wait_until("the line whole in its pane", || {
        tmux.capture().contains(shown)
    });
    tmux.keys("Enter");
    wait_until("the line whole in focus", || {
        tmux.capture()
            .lines()
            .next()
            .is_some_and(|l| l.trim_end() == shown)
    });
}

/// Bytes that are not UTF-8 (`\xff\xfe`) show as U+FFFD, one each, in
/// a pane and in focus, and the text around them stays in its columns
/// (vt100 alone drops them: `ab`).
#[test]
fn invalid_utf8_shows_as_replacement_characters() {
    let sb = Sandbox::new();
    if !common::tmux::available() {
        println!("skipped: tmux is not installed");
        return;
    }
    let _s = sb.start(
        "bytes",
        &[],
        &["sh", "-c", "printf 'a\\377\\376b|\\n'; exec sleep 600"],
    );
    let tui = format!("{HM} tui --socket-dir {}", sb.dir());
    let Some(tmux) = Tmux::start(&sb, &tui, (100, 20)) else {
        println!("skipped: tmux could not start");
        return;
    };
    wait_until("the replacement characters in the pane", || {
        tmux.capture().contains("a\u{FFFD}\u{FFFD}b|")
    });
    tmux.keys("Enter");
    wait_until("the replacement characters in focus", || {
        tmux.capture()
            .lines()
            .next()
            .is_some_and(|l| l.trim_end() == "a\u{FFFD}\u{FFFD}b|")
    });
}

/// A plain script at a `[y/N]` question, started with no flags, needs
/// you in the dashboard: counted in the footer, its pane's state waiting.
#[test]
fn a_plain_script_asking_needs_you_in_the_dashboard() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "ask",
        &[],
        &["bash", "-c", "read -p 'Continue? [y/N] ' x; exec sleep 600"],
    );
    let mut t = tui(&sb);
    t.wait_for("the question counted as needing you", |t| {
        t.last_row().contains("1 needs you")
            && pane(t, "ask").is_some_and(|p| p.shows("Continue? [y/N]") && p.top.contains("wait"))
    });
}

/// `n` sessions `job00`.. running `sleep`, once each answers.
fn sleepers_answering(sb: &Sandbox, n: usize) -> (Vec<String>, Vec<Session>) {
    let ids: Vec<String> = (0..n).map(|i| format!("job{i:02}")).collect();
    let sessions = ids
        .iter()
        .map(|id| sb.spawn(id, &[], &["sleep", "600"]))
        .collect();
    wait_until("every session to answer", || {
        ids.iter()
            .all(|id| common::Raw::connect(&sb.sock(id)).is_ok())
    });
    (ids, sessions)
}

/// `hm tui` started by `sh` with these descriptor limits (`ulimit -Sn`,
/// `ulimit -Hn`), on a 200x60 terminal (72 panes to a page).
fn tui_limited(sb: &Sandbox, soft: u32, hard: u32) -> Terminal {
    let script = format!("ulimit -Sn {soft} && ulimit -Hn {hard} && exec \"$0\" \"$@\"");
    let mut args: Vec<OsString> = vec!["-c".into(), script.into(), HM.into()];
    args.extend(["tui".into(), "--socket-dir".into(), sb.dir().into()]);
    let mut t = Terminal::start(
        "/bin/sh".as_ref(),
        &args,
        &sb.terminal_env(&[("SHELL", "/bin/sh")]),
        sb.path(),
        (60, 200),
        "$ hm tui",
    );
    t.wait_for("the dashboard", footer_shown);
    t
}

/// Whether `id`'s pane says `text` on its border (state, timer, problem).
fn edge_shows(t: &Terminal, id: &str, text: &str) -> bool {
    pane(t, id).is_some_and(|p| p.top.contains(text) || p.bottom.contains(text))
}

fn open_fds(pid: Pid) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// A soft limit below the sessions' number is raised to the hard one, so
/// every session connects, on one descriptor each; and a session started
/// from the dashboard gets the user's limit, not the raised one.
#[test]
fn a_low_soft_descriptor_limit_is_raised_and_new_sessions_keep_the_users() {
    let sb = Sandbox::new();
    let (ids, sessions) = sleepers_answering(&sb, 40);
    let mut t = tui_limited(&sb, 24, 400);
    t.wait_for("every pane live", |t| {
        ids.iter().all(|id| edge_shows(t, id, "idle"))
    });
    assert!(!t.contains("out of open files"));
    let fds = open_fds(t.pid());
    assert!(
        fds <= ids.len() + 24,
        "{fds} descriptors for {} sessions: more than one each",
        ids.len()
    );
    t.send(b"n");
    t.wait_for("the prompt for an id", |t| t.contains("id:"));
    t.send(b"\x15limits\r");
    t.wait_for("the prompt for a command", |t| t.contains("command:"));
    t.send(b"sh -c 'echo soft=$(ulimit -Sn) hard=$(ulimit -Hn); sleep 600'\r");
    t.wait_for("the new session's limits", |t| {
        pane_shows(t, "limits", "soft=24 hard=400")
    });
    let _ = std::process::Command::new(HM)
        .args(["kill", "--socket-dir"])
        .arg(sb.dir())
        .arg("limits")
        .output();
    drop(sessions);
}

/// At the hard limit the sessions past it are not called gone: their
/// panes say what is wrong, the footer says whose limit it is, and the
/// ones that did connect work on.
#[test]
fn sessions_past_the_hard_descriptor_limit_say_so_and_are_not_called_gone() {
    let sb = Sandbox::new();
    let (ids, sessions) = sleepers_answering(&sb, 50);
    let mut t = tui_limited(&sb, 40, 40);
    t.wait_for("the panes past the limit saying why", |t| {
        t.contains("out of open files") && t.last_row().contains("limit of 40 open files")
    });
    t.wait_for("the others live", |t| {
        ids.iter().filter(|id| edge_shows(t, id, "idle")).count() >= 20
    });
    for id in &ids {
        let p = pane(&t, id).unwrap_or_else(|| panic!("no pane for {id}"));
        assert!(
            !p.top.contains("dead") && !p.bottom.contains("gone"),
            "{id} is called ended: {p:?}"
        );
    }
    drop(sessions);
}
