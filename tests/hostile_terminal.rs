//! Adversarial tests of the clients that take over a terminal, in a real
//! pty rendered by vt100: `hm attach` and `hm tui` in terminals of a cell or
//! two, the dashboard with a hundred sessions coming and going under it, a
//! session claiming an absurd size, and a 10 MB unterminated OSC.

use crate::common;
use crate::common::terminal;

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::os::unix::net::UnixStream;
use std::process::Stdio;

use common::{HM, Raw, Sandbox, Session, fake, stderr, wait_until};
use heimdall::protocol::{self, ClientType, ServerType, Status};
use nix::sys::termios::LocalFlags;
use terminal::Terminal;

/// Ctrl-\, the default detach key.
const DETACH: &[u8] = b"\x1c";

/// `hm ARGS` in a fresh `rows`×`cols` terminal, not waited for.
fn hm_in_terminal(sb: &Sandbox, args: &[&str], size: (u16, u16)) -> Terminal {
    let argv: Vec<OsString> = args.iter().map(OsString::from).collect();
    Terminal::start(
        HM.as_ref(),
        &argv,
        &sb.terminal_env(&[("SHELL", "/bin/sh"), ("NO_COLOR", "")]),
        sb.path(),
        size,
        &format!("$ hm {}", args[0]),
    )
}

/// The session's pty size (rows, cols), as its supervisor reports it.
fn session_size(sb: &Sandbox, id: &str) -> Option<(u64, u64)> {
    let mut raw = Raw::connect(&sb.sock(id)).ok()?;
    raw.send(ClientType::Info as u8, &[]);
    let info: serde_json::Value =
        serde_json::from_slice(&raw.expect(ServerType::Info as u8).payload).ok()?;
    Some((info["rows"].as_u64()?, info["cols"].as_u64()?))
}

fn raw_mode(t: &Terminal) -> bool {
    !t.termios().local_flags.contains(LocalFlags::ICANON)
}

/// After a client that took the terminal is gone: main screen, modes off,
/// termios as a new pty has it.
fn assert_terminal_restored(t: &Terminal) {
    let s = t.screen();
    assert!(!s.alternate_screen(), "still on the alternate screen");
    assert!(!s.hide_cursor(), "cursor left hidden");
    assert_eq!(s.mouse_protocol_mode(), vt100::MouseProtocolMode::None);
    assert!(!s.bracketed_paste(), "bracketed paste left on");
    assert_eq!(
        t.termios(),
        terminal::pristine_termios(),
        "termios not restored"
    );
}

/// The resident set's high-water mark of a process, in bytes.
fn peak_rss(pid: nix::unistd::Pid) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM");
    kb * 1024
}

const MIB: u64 = 1024 * 1024;
/// What a dashboard may use whatever its sessions do.
const RSS_BOUND: u64 = 200 * MIB;

#[test]
fn attach_in_a_terminal_of_one_or_two_cells_types_and_restores() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "tiny",
        &[],
        &["sh", "-c", "while read x; do echo \"got-$x\"; done"],
    );
    let mut sub = Raw::connect(&sb.sock("tiny")).expect("connect");
    sub.send(ClientType::Subscribe as u8, &[]);
    // (terminal rows, cols) and the session's size: the status bar takes
    // a row once there are two.
    for (size, session) in [((1, 1), (1, 1)), ((2, 2), (1, 2))] {
        let mut t = hm_in_terminal(&sb, &["attach", "tiny", "--socket-dir", sb.dir()], size);
        t.wait_for("attach to take the terminal", raw_mode);
        t.wait_for("the session sized to the terminal", |_| {
            session_size(&sb, "tiny") == Some(session)
        });
        let word = format!("in-{}x{}", size.0, size.1);
        t.send(format!("{word}\r").as_bytes());
        sub.output_until(format!("got-{word}\r\n").as_bytes());
        // Through the sizes nobody should have, and back.
        for (rows, cols) in [(1, 2), (2, 1), (1, 300), (300, 1), size] {
            t.resize(rows, cols);
            let rows_for_session = if rows >= 2 { rows - 1 } else { rows };
            t.wait_for("the session resized", |_| {
                session_size(&sb, "tiny") == Some((u64::from(rows_for_session), u64::from(cols)))
            });
        }
        t.send(b"again\r");
        sub.output_until(b"got-again\r\n");
        t.send(DETACH);
        assert_eq!(t.wait_exit(), 0, "{size:?}");
        t.wait_for("the terminal restored", |t| {
            !raw_mode(t) && !t.screen().alternate_screen()
        });
        assert_terminal_restored(&t);
    }
    let status = sb.cmd(&["status", "tiny"]);
    assert!(status.status.success(), "{}", stderr(&status));
}

/// The dashboard's footer is on the last row (too narrow for any hint,
/// it is still painted in the theme's footer colour); focus has none.
fn footer_painted(t: &Terminal) -> bool {
    let s = t.screen();
    let last = s.size().0.get() - 1;
    // Its background, or that of the count of sessions that need you,
    // which starts it (the session here reads its terminal: it needs you;
    // the dark theme's `waiting` is on 161).
    s.cell(last, 0)
        .is_some_and(|c| matches!(c.bgcolor(), vt100::Color::Idx(236) | vt100::Color::Idx(161)))
}

/// The inside of the only pane on a `rows`×`cols` dashboard, as the
/// session is sized (rows, cols): the grid is all but the footer row, the
/// pane's border takes a cell on each side, and sizes are at least 1.
fn pane_inner((rows, cols): (u16, u16)) -> (u64, u64) {
    let r = rows.saturating_sub(1).saturating_sub(2).max(1);
    let c = cols.saturating_sub(2).max(1);
    (u64::from(r), u64::from(c))
}

#[test]
fn the_dashboard_in_a_terminal_of_one_or_three_cells_works_and_quits() {
    let sb = Sandbox::new();
    // Fitting shows what the dashboard makes of each size.
    fit_sessions(&sb);
    let _s = sb.start(
        "small",
        &[],
        &["sh", "-c", "while read x; do echo \"got-$x\"; done"],
    );
    let mut sub = Raw::connect(&sb.sock("small")).expect("connect");
    sub.send(ClientType::Subscribe as u8, &[]);
    for size in [(1, 1), (3, 3)] {
        // A size no pane here has, so fitting shows.
        sub.send(
            ClientType::Resize as u8,
            &protocol::Size {
                cols: 220,
                rows: 50,
            }
            .encode(),
        );
        wait_until("the session at its own size", || {
            session_size(&sb, "small") == Some((50, 220))
        });
        let mut t = hm_in_terminal(&sb, &["tui", "--socket-dir", sb.dir()], size);
        t.wait_for("the dashboard to take the terminal", |t| {
            raw_mode(t) && t.screen().alternate_screen()
        });
        // Once connected, the dashboard fits the session to its pane,
        // however small (clamped to 1x1).
        t.wait_for("the session fitted to its pane", |_| {
            session_size(&sb, "small") == Some(pane_inner(size))
        });
        // Focus takes the terminal but the bar's row (a one-row terminal
        // has no bar), and typing reaches the session.
        t.send(b"\r");
        let rows = if size.0 >= 2 { size.0 - 1 } else { size.0 };
        let whole = (u64::from(rows), u64::from(size.1));
        t.wait_for(
            "focus: the session at the terminal's size, less the bar",
            |_| session_size(&sb, "small") == Some(whole),
        );
        let word = format!("hello-{}-{}", size.0, size.1);
        t.send(format!("{word}\r").as_bytes());
        sub.output_until(format!("got-{word}\r\n").as_bytes());
        t.send(DETACH);
        // Back in the grid before the terminal is resized: crossterm can
        // hold back a key that arrives with a resize (see docs/tui.md).
        t.wait_for("the grid again", footer_painted);
        // Through sizes nobody should have: each is laid out (the session
        // follows its pane) before the next.
        for (rows, cols) in [(1, 2), (2, 1), (1, 300), (300, 1), size] {
            t.resize(rows, cols);
            t.wait_for("the session fitted to its pane", |_| {
                session_size(&sb, "small") == Some(pane_inner((rows, cols)))
            });
        }
        // From tiny to usable: it paints its grid.
        t.resize(24, 80);
        t.wait_for("the grid at a usable size", |t| {
            t.last_row().contains("move") && t.contains(" small ")
        });
        t.resize(size.0, size.1);
        t.wait_for("the session fitted to its pane", |_| {
            session_size(&sb, "small") == Some(pane_inner(size))
        });
        t.send(b"q");
        assert_eq!(t.wait_exit(), 0, "{size:?}");
        t.wait_for("the terminal restored", |t| !t.screen().alternate_screen());
        assert_terminal_restored(&t);
    }
    let status = sb.cmd(&["status", "small"]);
    assert!(status.status.success(), "{}", stderr(&status));
}

/// One pane as drawn: its id and its top and bottom borders.
#[derive(Debug)]
struct Drawn {
    id: String,
    top: String,
    bottom: String,
}

impl Drawn {
    /// The title says how it ended (`exited 0`, `exited 3`, `killed
    /// SIGTERM`, `gone`, or in a narrow pane `✓`, `✗TERM`).
    fn ended(&self) -> bool {
        ["exited ", "killed ", " gone ", "✓", "✗"]
            .iter()
            .any(|w| self.top.contains(w))
    }

    /// Connected and answering: the bottom border counts its time since
    /// output (`idle 3s`, `quiet 3s`), or, waiting for its person, the
    /// title says so and the bottom border has no problem to report.
    fn live(&self) -> bool {
        let counting = self.bottom.contains(" idle ") || self.bottom.contains(" quiet ");
        let waiting = self.top.contains("waiting") || self.top.contains(" W ");
        let trouble = ["connecting", "gone", "not responding", "orphaned"]
            .iter()
            .any(|w| self.bottom.contains(w));
        (counting || (waiting && !trouble)) && !self.ended()
    }

    /// Ended with `code`: `exited 143`, or `killed by SIGTERM (exit code
    /// 143)` (`killed SIGTERM` in a narrow pane) once the dashboard knows
    /// it was killed.
    fn exited(&self, code: i32) -> bool {
        let signal = nix::sys::signal::Signal::try_from(code - 128)
            .map_or_else(|_| format!(" exit {code} "), |s| format!(" killed {s} "));
        self.ended()
            && (self.bottom.contains(&format!(" exited {code} "))
                || self.bottom.contains(&signal)
                || self.bottom.contains(&format!("(exit code {code})")))
    }

    /// Shown as over: exited with SIGTERM's code, or (the defect
    /// `a_session_killed_while_the_dashboard_resizes_it_shows_its_exit_code`
    /// shows) without a code.
    fn over(&self) -> bool {
        self.exited(143) || (self.ended() && self.bottom.contains("supervisor gone"))
    }
}

/// `[tui] fit_sessions = true` in the sandbox's config: the dashboard
/// resizes each session to its pane (off by default).
fn fit_sessions(sb: &Sandbox) {
    let config = sb.path().join("config/heimdall");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(config.join("heimdall.toml"), "[tui]\nfit_sessions = true\n").expect("config");
}

fn cell(s: &vt100::Screen, r: u16, c: u16) -> &str {
    match s.cell(r, c) {
        Some(cell) if cell.is_wide_continuation() => "",
        Some(cell) if cell.has_contents() => cell.contents(),
        _ => " ",
    }
}

/// Every pane on the screen, found by its top-left corner.
fn panes(t: &Terminal) -> Vec<Drawn> {
    let s = t.screen();
    let (rows, cols) = (s.size().0.get(), s.size().1.get());
    let mut out = Vec::new();
    for r in 0..rows {
        for c in 0..cols {
            if !matches!(cell(s, r, c), "╭" | "┏") {
                continue;
            }
            let Some(right) = (c + 1..cols).find(|&x| matches!(cell(s, r, x), "╮" | "┓"))
            else {
                continue;
            };
            let Some(bottom) = (r + 1..rows).find(|&y| matches!(cell(s, y, c), "╰" | "┗"))
            else {
                continue;
            };
            let line = |y: u16| (c + 1..right).map(|x| cell(s, y, x)).collect::<String>();
            let top = line(r);
            let Some(id) = top.split_whitespace().next() else {
                continue;
            };
            out.push(Drawn {
                id: id.to_string(),
                top: top.clone(),
                bottom: line(bottom),
            });
        }
    }
    out
}

fn ids_of(panes: &[Drawn]) -> BTreeSet<String> {
    panes.iter().map(|p| p.id.clone()).collect()
}

/// Reads what the terminal got for a moment (at most 20 ms).
fn pump(t: &mut Terminal) {
    let polls = std::cell::Cell::new(0);
    t.wait_for("one read", |_| {
        polls.set(polls.get() + 1);
        polls.get() > 1
    });
}

/// Sets the dashboard's filter to `text` (clearing the one before).
fn filter(t: &mut Terminal, old: &str, text: &str) {
    t.send(b"/");
    t.send(&vec![0x7f; old.len()]);
    t.send(text.as_bytes());
    t.send(b"\r");
}

/// The page indicator in the footer, (page, pages), if there is one.
fn page_of(t: &Terminal) -> Option<(usize, usize)> {
    let footer = t.last_row();
    let (_, rest) = footer.rsplit_once("page ")?;
    // Before where others wait or news is: `page 1/3, ● on 2,3`.
    let rest = rest.split(',').next()?;
    let (n, m) = rest.trim().split_once('/')?;
    Some((n.parse().ok()?, m.parse().ok()?))
}

/// Sessions started in waves of this many, ...
const WAVE: usize = 10;
/// ... this many waves; after each, all but one of the wave before are
/// killed.
const WAVES: usize = 10;

#[test]
fn the_dashboard_follows_a_hundred_sessions_coming_and_going() {
    let sb = Sandbox::new();
    // 30 panes to a page on 40x120.
    let mut t = hm_in_terminal(&sb, &["tui", "--socket-dir", sb.dir()], (40, 120));
    t.wait_for("the dashboard", |t| t.last_row().contains("q quit"));
    let wave_ids = |w: usize| -> Vec<String> {
        (0..WAVE)
            .map(|i| {
                if i == 0 {
                    format!("w{w}-keep")
                } else {
                    format!("w{w}-drop{i}")
                }
            })
            .collect()
    };
    let mut sessions: Vec<(String, Session)> = Vec::new();
    let mut killers: Vec<(String, std::process::Child)> = Vec::new();
    let mut shown_filter = String::new();
    for w in 0..=WAVES {
        // Kill the previous wave's droppers while this one starts.
        if w > 0 {
            for id in wave_ids(w - 1).into_iter().skip(1) {
                let mut c = sb.hm();
                c.args(["kill", &id, "--grace", "1"])
                    .arg("--socket-dir")
                    .arg(&sb.sock_dir)
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped());
                killers.push((id, c.spawn().expect("hm kill")));
            }
        }
        if w == WAVES {
            break;
        }
        let wave = wave_ids(w);
        for id in &wave {
            sessions.push((
                id.clone(),
                sb.spawn(id, &[], &["sh", "-c", "echo up; exec sleep 600"]),
            ));
        }
        // The dashboard finds the whole wave, live.
        let prefix = format!("w{w}-");
        filter(&mut t, &shown_filter, &prefix);
        shown_filter = prefix;
        let want: BTreeSet<String> = wave.iter().cloned().collect();
        t.wait_for("the new wave's panes, live", |t| {
            let p = panes(t);
            ids_of(&p) == want && p.iter().all(Drawn::live)
        });
        for (id, k) in killers.drain(..) {
            let out = k.wait_with_output().expect("hm kill");
            assert!(out.status.success(), "{id}: {}", stderr(&out));
        }
        assert!(t.try_exit().is_none(), "the dashboard died in wave {w}");
    }
    for (id, k) in killers.drain(..) {
        let out = k.wait_with_output().expect("hm kill");
        assert!(out.status.success(), "{id}: {}", stderr(&out));
    }
    let keep: BTreeSet<String> = (0..WAVES).map(|w| format!("w{w}-keep")).collect();
    for (id, s) in &mut sessions {
        if keep.contains(id) {
            assert!(s.child.try_wait().expect("try_wait").is_none(), "{id}");
        } else {
            assert_eq!(s.wait_exit(), 143, "{id}");
        }
    }

    // The live ones are exactly the kept ones, all on one page.
    filter(&mut t, &shown_filter, "keep");
    t.wait_for("exactly the live sessions", |t| {
        let p = panes(t);
        ids_of(&p) == keep && p.iter().all(Drawn::live) && page_of(t).is_none()
    });
    // Every one killed is there, marked as such, thirty to a page.
    filter(&mut t, "keep", "drop");
    let dropped: BTreeSet<String> = (0..WAVES)
        .flat_map(|w| wave_ids(w).into_iter().skip(1))
        .collect();
    let mut seen = BTreeSet::new();
    for page in 1..=3 {
        t.wait_for("a page of killed sessions", |t| {
            let p = panes(t);
            page_of(t) == Some((page, 3)) && p.len() == 30 && p.iter().all(Drawn::over)
        });
        seen.extend(ids_of(&panes(&t)));
        t.send(b"\x1b[6~");
    }
    assert_eq!(seen, dropped);
    // Without a filter: all hundred, on four pages, on the page that holds
    // the selection (the first pane of the last page of killed ones).
    filter(&mut t, "drop", "");
    t.wait_for("every pane, paged", |t| {
        page_of(t).is_some_and(|(_, n)| n == 4) && t.contains("┏")
    });
    t.send(b"q");
    t.expect_exit(0);
    t.wait_for("the terminal restored", |t| !t.screen().alternate_screen());
    assert_terminal_restored(&t);
}

/// A supervisor that claims a 65535x65535 terminal in INFO and otherwise
/// behaves.
fn huge_supervisor(s: UnixStream) {
    fake::answer(s, |ty| {
        match ClientType::try_from(ty) {
        Ok(ClientType::Info) => Some(protocol::frame(
            ServerType::Info as u8,
            br#"{"id":"huge","pid":4242,"command":["huge"],"cols":65535,"rows":65535,"idle_threshold_ms":3000}"#,
        )),
        Ok(ClientType::Status) => Some(protocol::frame(
            ServerType::StatusResp as u8,
            &Status {
                pid: 4242,
                idle_ms: 1000,
                alive: true,
                state: 0,
                state_ms: 1000,
            }
            .encode(),
        )),
        Ok(ClientType::Subscribe) => Some(protocol::frame(ServerType::Output as u8, b"huge says hello\r\n")),
        _ => None,
    }
    });
}

#[test]

fn an_absurd_session_size_without_fit_keeps_the_dashboard_small_and_responsive() {
    let sb = Sandbox::new();
    let lock = fake::listen(&sb, "huge", huge_supervisor);
    let _calm = sb.start("calm", &[], &["sh", "-c", "echo calm-here; exec sleep 600"]);
    let mut t = hm_in_terminal(
        &sb,
        &["tui", "--no-fit", "--socket-dir", sb.dir()],
        (24, 80),
    );
    t.wait_for("both panes", |t| {
        t.contains("huge says hello") && t.contains("calm-here")
    });
    // INFO came before the output, so the pane has taken the size it
    // claims (clamped to 4096x4096). Keys still work...
    t.send(b"?");
    t.wait_for("the help", |t| t.contains("back from focus to the grid"));
    t.send(b"?");
    t.wait_for("the help closed", |t| !t.contains("back from focus"));
    // ... but the memory is the point.
    let rss = peak_rss(t.pid());
    assert!(rss < RSS_BOUND, "the dashboard grew to {} MiB", rss / MIB);
    t.send(b"q");
    t.expect_exit(0);
    drop(lock);
}

#[test]
fn a_ten_megabyte_unterminated_osc_keeps_the_dashboard_small_and_responsive() {
    let sb = Sandbox::new();
    // Once told: 10 MB of OSC with no end; then, once told again, the end
    // and a line.
    let done = sb.path().join("flood-done");
    let script = format!(
        "stty -echo; echo osc-ready; read start; printf 'before-osc\\r\\n\\033]0;'; \
         head -c 10000000 /dev/zero | tr '\\0' x; \
         touch '{}'; read go; printf '\\007\\r\\nafter-osc\\r\\n'; exec sleep 600",
        done.display()
    );
    let s = sb.start("osc", &[], &["sh", "-c", &script]);
    let _calm = sb.start("calm", &[], &["sh", "-c", "echo calm-here; exec sleep 600"]);
    let mut t = hm_in_terminal(&sb, &["tui", "--socket-dir", sb.dir()], (24, 80));
    t.wait_for("the panes", |t| {
        let p = panes(t);
        t.contains("osc-ready")
            && t.contains("calm-here")
            && p.len() == 2
            && p.iter().all(Drawn::live)
    });
    // The dashboard is subscribed: it gets every byte from here on.
    s.raw().send(ClientType::Input as u8, b"start\n");
    t.wait_for("the flood to begin", |t| t.contains("before-osc"));
    // Keys are handled while the flood goes on.
    t.send(b"?");
    t.wait_for("the help", |t| t.contains("back from focus to the grid"));
    t.send(b"?");
    t.wait_for("the help closed", |t| !t.contains("back from focus"));
    // The session gets to the end of the string only as fast as the
    // dashboard reads it (give or take the supervisor's buffer).
    wait_until("the whole string to be written", || done.exists());
    // And with 10 MB of string open, keys still work.
    t.send(b"?");
    t.wait_for("the help", |t| t.contains("back from focus to the grid"));
    t.send(b"?");
    t.wait_for("the help closed", |t| !t.contains("back from focus"));
    s.raw().send(ClientType::Input as u8, b"go\n");
    // In order: all 10 MB went through the dashboard before this line.
    t.wait_for("the line after the string", |t| t.contains("after-osc"));
    // The string was taken as one, not shown as text.
    assert!(
        t.contains("before-osc") && !t.contains("xxxx"),
        "{:?}",
        t.lines()
    );
    let rss = peak_rss(t.pid());
    assert!(rss < RSS_BOUND, "the dashboard grew to {} MiB", rss / MIB);
    t.send(b"?");
    t.wait_for("the help", |t| t.contains("back from focus to the grid"));
    t.send(b"q");
    t.wait_for("the help closed", |t| !t.contains("back from focus"));
    t.send(b"q");
    t.expect_exit(0);
    t.wait_for("the terminal restored", |t| !t.screen().alternate_screen());
    assert_terminal_restored(&t);
    eprintln!("dashboard peak RSS after a 10 MB OSC: {} MiB", rss / MIB);
}

#[test]

fn a_session_killed_while_the_dashboard_resizes_it_shows_its_exit_code() {
    let sb = Sandbox::new();
    // The storm of RESIZE frames is fitting's.
    fit_sessions(&sb);
    let mut t = hm_in_terminal(&sb, &["tui", "--socket-dir", sb.dir()], (40, 120));
    t.wait_for("the dashboard", |t| t.last_row().contains("q quit"));
    let ids: Vec<String> = (0..30).map(|i| format!("k{i:02}")).collect();
    let mut sessions: Vec<Session> = ids
        .iter()
        .map(|id| sb.spawn(id, &[], &["sh", "-c", "echo up; exec sleep 600"]))
        .collect();
    t.wait_for("every pane, live", |t| {
        let p = panes(t);
        p.len() == ids.len() && p.iter().all(Drawn::live)
    });
    let mut killers: Vec<std::process::Child> = ids
        .iter()
        .map(|id| {
            let mut c = sb.hm();
            c.args(["kill", id, "--grace", "1"])
                .arg("--socket-dir")
                .arg(&sb.sock_dir)
                .stdout(Stdio::null());
            c.spawn().expect("hm kill")
        })
        .collect();
    // Each resize has the dashboard send every live pane a RESIZE.
    let mut i: u16 = 0;
    while killers
        .iter_mut()
        .any(|k| k.try_wait().expect("try_wait").is_none())
    {
        i += 1;
        t.resize(40 + i % 2, 120 - i % 3);
        pump(&mut t);
    }
    for s in &mut sessions {
        assert_eq!(s.wait_exit(), 143);
    }
    // A size none of the storm used (so the dashboard redraws all of it,
    // whatever frames were in flight), where all 30 panes fit on one page.
    t.resize(42, 126);
    t.wait_for("every pane with its exit code", |t| {
        let p = panes(t);
        p.len() == ids.len() && p.iter().all(|p| p.exited(143))
    });
}
