//! History you can trust (issue 23), end to end: a full-screen program
//! redrawing on SIGWINCH is resized to 200x50, 80x24, 40x12 and back, with
//! a numbered 300-character pattern printed at each size; `hm logs` then
//! has every line of it once, whole and in order, then the program's one
//! screen, and the dashboard's and `hm attach`'s copy modes copy exactly
//! what `hm logs` prints. Also: `--width`, `--grep -C`, `--since`, a
//! line-exact `--follow`, a wrapped line copied whole through tmux's
//! `set-clipboard on`, a journal that stays within its bound however
//! often the size changes, and lines on a plain program's screen whole
//! whichever way the session is resized.

use crate::common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::history::{attach_copy, dashboard_copy, logs, resize};
use common::tmux::{self, Tmux};
use common::{HM, Raw, Sandbox, Session, gate, open_gate, stderr, wait_until};
use heimdall::protocol::{ClientType, Info, ServerType, Size};

/// A full-screen program: a box the size of its terminal with the size in
/// the middle, on the alternate screen, drawn again on SIGWINCH. On `p`
/// it prints five numbered lines of 300 characters on the main screen,
/// pushes them all up into the history, and goes back to its box.
const BOX: &str = r#"
import os, signal, sys, tty
n = 0
out = sys.stdout
def box():
    c, r = os.get_terminal_size(0)
    rows = []
    for i in range(r):
        if i in (0, r - 1):
            line = '+' + '-' * (c - 2) + '+'
        elif i == r // 2:
            line = '|' + f'{c}x{r}'.center(c - 2) + '|'
        else:
            line = '|' + ' ' * (c - 2) + '|'
        rows.append(line[:c])
    return '\x1b[H\x1b[2J' + '\r\n'.join(rows)
drawing = pending = False
def redraw(*_):
    # A SIGWINCH during a redraw (a client resizing in a loop) asks for
    # one more, after it: a write inside a write would fail.
    global drawing, pending
    if drawing:
        pending = True
        return
    drawing = True
    pending = True
    while pending:
        pending = False
        out.write(box())
        out.flush()
    drawing = False
def pattern(k):
    global n
    c, r = os.get_terminal_size(0)
    out.write('\x1b[?1049l\x1b[H\x1b[2J')
    for _ in range(k):
        n += 1
        out.write(f'{n:04d}:' + ''.join(chr(97 + (n + i) % 26) for i in range(295)) + '\r\n')
    used = k * -(-300 // c)
    out.write(f'\x1b[{min(used, r - 1)}S\x1b[H\x1b[?1049h' + box())
    out.flush()
tty.setraw(0)
signal.signal(signal.SIGWINCH, redraw)
out.write('\x1b[?1049h')
redraw()
while True:
    b = os.read(0, 1)
    if b == b'p':
        pattern(5)
    elif b in (b'q', b''):
        out.write('\x1b[?1049l')
        out.flush()
        break
"#;

/// The sizes the session goes through after starting at 120x40.
const SIZES: [(u16, u16); 4] = [(200, 50), (80, 24), (40, 12), (120, 40)];

/// Pattern line `n`: its number, then 295 letters.
fn pattern(n: usize) -> String {
    let body: String = (0..295)
        .map(|i| char::from(b'a' + ((n + i) % 26) as u8))
        .collect();
    format!("{n:04}:{body}")
}

/// `hm logs ID -f`, and its lines as they come.
fn follow(sb: &Sandbox, id: &str) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
    let mut child = sb
        .hm()
        .args(["logs", id, "-f", "--socket-dir", sb.dir()])
        .stdout(Stdio::piped())
        .spawn()
        .expect("hm logs -f");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// The box as the program draws it at `cols` x `rows`.
fn drawn_box(cols: u16, rows: u16) -> Vec<String> {
    let (c, r) = (usize::from(cols), usize::from(rows));
    (0..r)
        .map(|i| {
            if i == 0 || i == r - 1 {
                format!("+{}+", "-".repeat(c - 2))
            } else if i == r / 2 {
                format!("|{:^w$}|", format!("{cols}x{rows}"), w = c - 2)
            } else {
                format!("|{}|", " ".repeat(c - 2))
            }
        })
        .collect()
}

fn screen_shows(sb: &Sandbox, id: &str, text: &str) -> bool {
    sb.cmd(&["logs", id, "--screen"])
        .stdout
        .windows(text.len())
        .any(|w| w == text.as_bytes())
}

/// Session `box` through the resizes, five pattern lines printed at each
/// size once its box is drawn at that size.
fn resized_box(sb: &Sandbox) -> Session {
    let script = sb.path().join("box.py");
    std::fs::write(&script, BOX).expect("write the script");
    let script = script.to_str().expect("utf-8 path").to_owned();
    let s = sb.start(
        "box",
        &["--cols", "120", "--rows", "40"],
        &["python3", &script],
    );
    wait_until("the box at 120x40", || screen_shows(sb, "box", "120x40"));
    for (i, (cols, rows)) in SIZES.into_iter().enumerate() {
        resize(sb, "box", cols, rows);
        let size = format!("{cols}x{rows}");
        wait_until(&format!("the box at {size}"), || {
            screen_shows(sb, "box", &size)
        });
        assert!(sb.cmd(&["send", "box", "p"]).status.success());
        let last = pattern(5 * (i + 1));
        wait_until(&format!("pattern line {}", 5 * (i + 1)), || {
            logs(sb, "box", &[]).contains(&last)
        });
        // Drawn again after the lines.
        wait_until("the box", || screen_shows(sb, "box", &size));
    }
    s
}

#[test]
fn every_line_printed_between_resizes_is_in_hm_logs_once_whole_and_in_order() {
    let sb = Sandbox::new();
    let _s = resized_box(&sb);
    let lines = logs(&sb, "box", &[]);
    let want: Vec<String> = (1..=20).map(pattern).collect();
    // The history: the pattern, every line of it once, whole and in order,
    // nothing between; then the program's screen, once.
    assert_eq!(lines.len(), 20 + 40, "{:#?}", lines);
    assert_eq!(lines[..20], want[..], "the history");
    assert_eq!(lines[20..], drawn_box(120, 40)[..], "the screen");
    // `grep` finds a line by text past any width the session had.
    let tail = format!("^0013:.*{}$", &pattern(13)[250..]);
    assert_eq!(logs(&sb, "box", &["--grep", &tail]), [pattern(13)]);
    // With context, as grep prints it.
    let ctx = logs(&sb, "box", &["--grep", "^0007:", "-C", "1"]);
    assert_eq!(ctx, [pattern(6), pattern(7), pattern(8)]);
    let apart = logs(&sb, "box", &["--grep", "^000[27]:", "-C", "0"]);
    assert_eq!(apart, [pattern(2), "--".to_owned(), pattern(7)]);
    assert_eq!(
        logs(&sb, "box", &["--grep", "^0012:", "--lines", "1"]),
        [pattern(12)]
    );
    // `--width 40`: the rows of a 40-column terminal.
    let rows = logs(&sb, "box", &["--width", "40"]);
    assert!(rows.iter().all(|r| r.chars().count() <= 40), "{rows:?}");
    for n in 1..=20 {
        let at = (n - 1) * 8;
        assert_eq!(rows[at..at + 8].concat(), pattern(n), "line {n} folded");
    }
    // As written, the same bytes a plain subscriber gets from there.
    let raw = sb.cmd(&["logs", "box", "--raw"]);
    assert!(String::from_utf8_lossy(&raw.stdout).contains(&pattern(20)));
    // No line matches: nothing printed, exit 1, as grep.
    let none = sb.cmd(&["logs", "box", "--grep", "no such line"]);
    assert_eq!((none.status.code(), none.stdout.len()), (Some(1), 0));
    let bad = sb.cmd(&["logs", "box", "--grep", "("]);
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).trim_end() == "hm: --grep '(' is no regex: unclosed group at character 1",
        "{}",
        stderr(&bad)
    );
}

#[test]
fn the_dashboard_and_attach_copy_the_history_hm_logs_prints() {
    let sb = Sandbox::new();
    let _s = resized_box(&sb);
    let text = logs(&sb, "box", &[]).join("\n");
    assert!(text.contains(&pattern(20)));
    assert_eq!(
        dashboard_copy(&sb, "box", "120x40"),
        text,
        "the dashboard's history"
    );
    // A terminal of the session's size, with the bar below.
    assert_eq!(
        attach_copy(&sb, "box", (120, 41)),
        text,
        "hm attach's copy mode"
    );
}

/// `hm attach`'s copy mode in a real terminal (tmux) shows a row as wide
/// as the terminal whole: it erased each row's rest from the cursor,
/// which stays on the last column once that is written, and took the
/// last character of every full row.
#[test]
fn copy_mode_in_a_terminal_keeps_the_last_column() {
    if !tmux::available() {
        println!("skipped: tmux is not installed");
        return;
    }
    let sb = Sandbox::new();
    let full = format!("{}7", "0".repeat(39));
    let print = format!("printf 'before\\n{full}\\nafter\\n'; exec sleep 600");
    let _s = sb.start(
        "full",
        &["--cols", "40", "--rows", "12"],
        &["sh", "-c", &print],
    );
    wait_until("the line", || logs(&sb, "full", &[]).contains(&full));
    let attach = format!("{HM} attach full --socket-dir {}", sb.dir());
    let tmux = Tmux::start(&sb, &attach, (40, 13)).expect("tmux starts");
    wait_until("attach", || tmux.lines().contains(&full));
    tmux.keys("C-]");
    wait_until("copy mode", || tmux.capture().contains("copy [+"));
    assert!(tmux.lines().contains(&full), "{}", tmux.capture());
}

/// A 300-character line on a 40-column screen, copied whole from the row
/// in its middle, in `hm attach` and in the dashboard, each in tmux with
/// `set-clipboard on`: tmux's paste buffer gets the one line.
#[test]
fn a_wrapped_line_is_copied_whole_through_tmux() {
    if !tmux::available() {
        println!("skipped: tmux is not installed");
        return;
    }
    let sb = Sandbox::new();
    let line = pattern(7);
    let print = format!("printf 'before\\n{line}\\nafter\\n'; exec sleep 600");
    let _s = sb.start(
        "wrap",
        &["--cols", "40", "--rows", "12"],
        &["sh", "-c", &print],
    );
    wait_until("the line", || logs(&sb, "wrap", &[]).contains(&line));
    // hm attach in a tmux window of 40 columns: the session stays 40 wide.
    let attach = format!("{HM} attach wrap --socket-dir {}", sb.dir());
    let tmux = Tmux::start(&sb, &attach, (40, 13)).expect("tmux starts");
    wait_until("attach", || tmux.capture().contains("after"));
    tmux.keys("C-]");
    wait_until("copy mode", || tmux.capture().contains("copy [+"));
    // The cursor starts on the prompt's row (after "after"); up to the
    // line's fourth row.
    for key in ["k", "k", "k", "k", "k", "y"] {
        tmux.keys(key);
    }
    wait_until("the copy in tmux's buffer", || {
        tmux.buffer().is_some_and(|b| b == line)
    });
    drop(tmux);
    // The dashboard: `[`, then up to a row inside the line.
    let config = sb.path().join("config/heimdall/heimdall.toml");
    std::fs::create_dir_all(config.parent().expect("a dir")).expect("config dir");
    std::fs::write(&config, "[tui]\nfit_sessions = false\n").expect("config");
    let tui = format!("{HM} tui --socket-dir {}", sb.dir());
    let tmux = Tmux::start(&sb, &tui, (100, 30)).expect("tmux starts");
    wait_until("the dashboard", || tmux.capture().contains("before"));
    tmux.keys("[");
    wait_until("copy mode", || tmux.capture().contains("copy ["));
    for key in ["k", "k", "k", "k", "y"] {
        tmux.keys(key);
    }
    wait_until("the copy in tmux's buffer", || {
        tmux.buffer().is_some_and(|b| b == line)
    });
}

/// `--since`: only what was written in the last N seconds.
#[test]
fn since_keeps_what_was_written_lately() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "late",
        &[],
        &[
            "sh",
            "-c",
            "echo before; sleep 6; echo after; exec sleep 600",
        ],
    );
    wait_until("after", || {
        logs(&sb, "late", &[]).contains(&"after".to_owned())
    });
    // "before" is six seconds older than "after".
    assert_eq!(logs(&sb, "late", &["--since", "4s"]), ["after"]);
    assert_eq!(logs(&sb, "late", &["--since", "1h"]), ["before", "after"]);
    // Younger than an hour, with all its output kept: nothing to warn of
    // (it said the output was kept "from 6.2s ago only").
    let out = sb.cmd(&["logs", "late", "--since", "1h"]);
    assert_eq!(stderr(&out), "");
    // One that dropped its oldest output says from when it has it.
    let _small = sb.start(
        "small",
        &["--scrollback-bytes", "4096"],
        &["sh", "-c", "seq 1 3000; echo end; exec sleep 600"],
    );
    wait_until("end", || {
        logs(&sb, "small", &[]).contains(&"end".to_owned())
    });
    let out = sb.cmd(&["logs", "small", "--since", "1h"]);
    assert!(
        stderr(&out).contains("keeps its output from"),
        "{}",
        stderr(&out)
    );
    let bad = sb.cmd(&["logs", "late", "--since", "4 minutes"]);
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("is not a duration"),
        "{}",
        stderr(&bad)
    );
}

/// `--follow` prints each line once, whole, when the program goes on to
/// the next: a line written in pieces, a line redrawn in place, a screen
/// cleared and written anew; the last line when the session ends.
#[test]
fn follow_prints_each_line_once_whole() {
    let sb = Sandbox::new();
    let go = gate(&sb, "go");
    let long = pattern(3);
    let (a, b) = long.split_at(150);
    let script = format!(
        "printf 'old\\n'; cat {go} >/dev/null; printf '{a}'; sleep 0.3; printf '{b}\\n'; \
         i=1; while [ $i -le 30 ]; do echo \"line $i\"; i=$((i+1)); done; \
         printf '10%%\\r50%%\\r100%%\\n'; sleep 0.3; printf '\\033[H\\033[2Jfresh\\nend'",
        go = go.display()
    );
    let _s = sb.start(
        "flow",
        &["--cols", "40", "--rows", "12"],
        &["sh", "-c", &script],
    );
    wait_until("old", || logs(&sb, "flow", &[]).contains(&"old".to_owned()));
    let (mut follow, rx) = follow(&sb, "flow");
    let next = || {
        rx.recv_timeout(common::PATIENCE)
            .expect("a line from hm logs -f")
    };
    // The history first: then it follows.
    assert_eq!(next(), "old");
    open_gate(&go);
    let mut want = vec![long.clone()];
    want.extend((1..=30).map(|i| format!("line {i}")));
    want.extend(["100%".to_owned(), "fresh".to_owned()]);
    for w in &want {
        assert_eq!(&next(), w);
    }
    // The last line, unfinished, once the session ends.
    assert_eq!(next(), "end");
    assert!(rx.recv_timeout(common::PATIENCE).is_err(), "nothing more");
    assert!(follow.wait().expect("wait").success());
}

/// A flood of short lines, tens of thousands in a read, is followed
/// whole: each read was fed at once, and rows scrolled out of the history
/// kept while following before they were printed (`seq 1 60000` gave
/// 44,000 lines, silently).
#[test]
fn follow_misses_no_line_of_a_flood() {
    const LINES: usize = 60_000;
    let sb = Sandbox::new();
    let go = gate(&sb, "go");
    let script = format!(
        "printf 'ready\\n'; cat {go} >/dev/null; seq 1 {LINES}; printf end",
        go = go.display()
    );
    let _s = sb.start("flood", &[], &["sh", "-c", &script]);
    wait_until("ready", || {
        logs(&sb, "flood", &[]).contains(&"ready".to_owned())
    });
    let (mut follow, rx) = follow(&sb, "flood");
    let next = || {
        rx.recv_timeout(common::PATIENCE)
            .expect("a line from hm logs -f")
    };
    assert_eq!(next(), "ready");
    open_gate(&go);
    for n in 1..=LINES {
        let line = next();
        assert_eq!(line, n.to_string(), "line {n} of the flood");
    }
    assert_eq!(next(), "end");
    assert!(follow.wait().expect("wait").success());
}

/// A full-screen program that draws more than the supervisor keeps after
/// it took the alternate screen: the switch has fallen out of the kept
/// bytes, yet `hm logs` starts on the alternate screen, as the session
/// is, so its drawing is no history: only its screen is printed.
#[test]
fn a_replay_that_starts_after_the_switch_is_on_the_alternate_screen() {
    let sb = Sandbox::new();
    let script = "printf 'before\\n\\033[?1049h'; i=0; while [ $i -lt 8000 ]; do \
                  printf 'frame %05d\\r\\n' $i; i=$((i+1)); done; printf 'done'; exec sleep 600";
    let _s = sb.start(
        "full",
        &["--cols", "40", "--rows", "5"],
        &["sh", "-c", script],
    );
    wait_until("done", || screen_shows(&sb, "full", "done"));
    let lines = logs(&sb, "full", &[]);
    assert_eq!(
        lines,
        [
            "frame 07996",
            "frame 07997",
            "frame 07998",
            "frame 07999",
            "done"
        ],
        "the alternate screen, and no history"
    );
}

/// The session's INFO, through a raw client.
fn info(sb: &Sandbox, id: &str) -> Info {
    let mut raw = Raw::connect(&sb.sock(id)).expect("connect");
    raw.send(ClientType::Info as u8, &[]);
    let f = raw.expect(ServerType::Info as u8);
    serde_json::from_slice(&f.payload).expect("INFO")
}

/// A program that resizes itself 10,000 times (XTWINOPS, which the
/// supervisor ignores) and a client that sends RESIZE 3000 times, to a
/// program that redraws at each: the journal stays within its bound and
/// the history is still the program's.
#[test]
fn resizing_in_a_loop_keeps_the_journal_within_its_bound() {
    let sb = Sandbox::new();
    let xtwinops = "i=0; while [ $i -lt 10000 ]; do printf '\\033[8;%d;%dt' $((20+i%10)) $((60+i%40)); \
         i=$((i+1)); done; echo done; exec sleep 600";
    let _self = sb.start(
        "self",
        &["--cols", "100", "--rows", "30"],
        &["sh", "-c", xtwinops],
    );
    wait_until("done", || {
        logs(&sb, "self", &[]).contains(&"done".to_owned())
    });
    let i = info(&sb, "self");
    assert_eq!(
        (i.cols, i.rows),
        (100, 30),
        "a program does not resize its pty"
    );
    let j = i.journal.expect("INFO's journal");
    assert!(j.marks <= 2, "{j:?}");
    // A client resizing in a loop while the program is silent: the sizes
    // with no output between them are one mark.
    let _quiet = sb.start(
        "quiet",
        &["--cols", "100", "--rows", "30"],
        &["sh", "-c", "echo ready; exec cat"],
    );
    wait_until("ready", || {
        logs(&sb, "quiet", &[]).contains(&"ready".to_owned())
    });
    let before = info(&sb, "quiet").journal.expect("INFO's journal").marks;
    let mut raw = Raw::connect(&sb.sock("quiet")).expect("connect");
    for k in 0..3000u16 {
        raw.send(
            ClientType::Resize as u8,
            &Size {
                cols: 40 + k % 80,
                rows: 20,
            }
            .encode(),
        );
    }
    raw.status().expect("answered");
    assert!(
        sb.cmd(&["send", "quiet", "typed", "--enter"])
            .status
            .success()
    );
    wait_until("the echo", || {
        logs(&sb, "quiet", &[]).contains(&"typed".to_owned())
    });
    let after = info(&sb, "quiet").journal.expect("INFO's journal").marks;
    assert!(after <= before + 2, "{before} marks, then {after}");
    // A client resizing in a loop, the program redrawing each time.
    let _s = resized_box(&sb);
    let mut raw = Raw::connect(&sb.sock("box")).expect("connect");
    let started = Instant::now();
    for k in 0..3000u16 {
        let size = Size {
            cols: 40 + k % 80,
            rows: 10 + k % 30,
        };
        raw.send(ClientType::Resize as u8, &size.encode());
    }
    raw.status().expect("answered");
    resize(&sb, "box", 120, 40);
    wait_until("the box drawn again", || screen_shows(&sb, "box", "120x40"));
    let j = info(&sb, "box").journal.expect("INFO's journal");
    assert!(j.marks <= j.max_marks, "{j:?}");
    assert!(started.elapsed() < Duration::from_secs(60));
    // The history is what the 64 KiB kept of it (each resize a screenful
    // redrawn): whatever pattern lines are left, whole and in order, up
    // to its last; then the box, once, at the size it has now. Where the
    // kept bytes begin inside a batch of pattern lines, the program's
    // scroll (`CSI n S`) pushes up rows whose lines fell out of them:
    // those come out blank, and nothing else does.
    let lines = logs(&sb, "box", &[]);
    assert!(lines.len() >= 40, "{lines:#?}");
    let (history, screen) = lines.split_at(lines.len() - 40);
    assert_eq!(screen, drawn_box(120, 40), "the screen, once");
    let want: Vec<String> = (1..=20).map(pattern).collect();
    let got: Vec<String> = history.iter().filter(|l| !l.is_empty()).cloned().collect();
    assert_eq!(got[..], want[want.len() - got.len()..], "{history:#?}");
}

/// A screen cleared (ED 2, or ED 0 from the top left) goes to the history
/// first, as tmux keeps it: `hm logs` has every line printed, where it
/// kept only those that had scrolled off (ten of fifty lines on a screen
/// of forty), and `--follow` prints the same lines. A shell's `clear`
/// (ED 3 after) erases the history, as a terminal's.
#[test]
fn a_cleared_screen_is_history_in_hm_logs() {
    let sb = Sandbox::new();
    let script = "seq 1 25; printf '\\033[H\\033[2J'; echo after; \
                  printf 'x\\033[H\\033[J'; echo again; exec sleep 600";
    let _s = sb.start(
        "clears",
        &["--cols", "80", "--rows", "10"],
        &["sh", "-c", script],
    );
    let mut want: Vec<String> = (1..=25).map(|i| i.to_string()).collect();
    want.extend(["after", "x", "again"].map(String::from));
    wait_until("every line in hm logs", || logs(&sb, "clears", &[]) == want);
    let mut follow = sb
        .hm()
        .args(["logs", "clears", "--follow", "--socket-dir", sb.dir()])
        .stdout(Stdio::piped())
        .spawn()
        .expect("hm logs --follow");
    let out = follow.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let followed: Vec<String> = want
        .iter()
        .map_while(|_| rx.recv_timeout(common::PATIENCE).ok())
        .collect();
    let _ = follow.kill();
    let _ = follow.wait();
    assert_eq!(followed, want);

    let _c = sb.start(
        "shell-clear",
        &["--cols", "80", "--rows", "10"],
        &[
            "sh",
            "-c",
            "seq 1 5; printf '\\033[H\\033[2J\\033[3J'; echo fresh; exec sleep 600",
        ],
    );
    wait_until("only what came after clear", || {
        logs(&sb, "shell-clear", &[]) == ["fresh"]
    });
}

/// A line still on the screen when the session gets narrower is cut on
/// its screen (vt100 does not reflow), but it goes into the history whole
/// when it scrolls off: `hm logs` prints it as it was written.
#[test]
fn a_line_on_the_screen_when_the_session_narrows_is_whole_in_hm_logs() {
    let sb = Sandbox::new();
    let long = pattern(100);
    let script = format!("echo {long}; read go; seq 1 30; exec sleep 600");
    let _s = sb.start(
        "narrows",
        &["--cols", "120", "--rows", "10"],
        &["sh", "-c", &script],
    );
    wait_until("the long line", || {
        logs(&sb, "narrows", &[]).first() == Some(&long)
    });
    resize(&sb, "narrows", 40, 10);
    let out = sb.cmd(&["send", "narrows", "go", "--enter"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let mut want = vec![long.clone(), "go".to_owned()];
    want.extend((1..=30).map(|i| i.to_string()));
    wait_until("every line whole in hm logs", || {
        logs(&sb, "narrows", &[]) == want
    });
}

/// Lines still on the screen after the session got narrower are whole
/// in `hm logs` too, not only once they scroll off, and `--follow` does
/// not print them again (it printed them a second time, cut, as soon as
/// the program wrote after the resize).
#[test]
fn lines_on_the_screen_when_the_session_narrows_stay_whole_and_are_followed_once() {
    let sb = Sandbox::new();
    let lines: Vec<String> = (1..=3).map(|i| pattern(i)[..100].to_owned()).collect();
    let script = format!(
        "echo {}; echo {}; echo {}; read go; echo after; exec sleep 600",
        lines[0], lines[1], lines[2]
    );
    let _s = sb.start(
        "still",
        &["--cols", "120", "--rows", "10"],
        &["sh", "-c", &script],
    );
    wait_until("the long lines", || logs(&sb, "still", &[]) == lines);
    let (mut follow, rx) = follow(&sb, "still");
    let next = || {
        rx.recv_timeout(common::PATIENCE)
            .expect("a line from hm logs -f")
    };
    for l in &lines {
        assert_eq!(&next(), l);
    }
    resize(&sb, "still", 40, 10);
    let out = sb.cmd(&["send", "still", "go", "--enter"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let mut want = lines.clone();
    want.extend(["go".to_owned(), "after".to_owned()]);
    wait_until("the lines whole in hm logs after the resize", || {
        logs(&sb, "still", &[]) == want
    });
    assert_eq!(next(), "go", "the next line followed, nothing again");
    assert_eq!(next(), "after");
    let _ = follow.kill();
    let _ = follow.wait();
}

/// Prints `row NN `, 140 y's and ` ENDNN` (153 characters) for each line
/// it is asked for: as many lines as the number typed.
const ROWS: &str = r#"
stty -echo
y=$(printf '%0140d' 0 | tr 0 y)
i=0
while read k; do
  j=0
  while [ "$j" -lt "$k" ]; do
    i=$((i + 1)); j=$((j + 1))
    printf 'row %02d %s END%02d\n' "$i" "$y" "$i"
  done
done
"#;

/// Line `n` of [`ROWS`].
fn row_line(n: usize) -> String {
    format!("row {n:02} {} END{n:02}", "y".repeat(140))
}

/// Lines on the screen when the session gets wider, narrower, taller or
/// shorter are whole in `hm logs`, and `--follow` prints each once, whole.
/// They came out cut at the old width (widening forgot that their rows
/// wrapped), with the blank rows a taller screen pulls down on top
/// printed as empty lines before them.
#[test]
fn lines_on_the_screen_when_the_session_changes_size_are_whole_in_hm_logs() {
    let sb = Sandbox::new();
    let script = sb.program("rows.sh", ROWS);
    let script = script.to_str().expect("utf-8 path");
    let _s = sb.start("sizes", &["--cols", "60", "--rows", "19"], &["sh", script]);
    let (mut follow, rx) = follow(&sb, "sizes");
    let mut want: Vec<String> = Vec::new();
    let mut print = |count: usize, at: &str| {
        let out = sb.cmd(&["send", "sizes", &count.to_string(), "--enter"]);
        assert!(out.status.success(), "{}", common::stderr(&out));
        want.extend((want.len() + 1..=want.len() + count).map(row_line));
        let last = want.last().expect("a line").clone();
        wait_until(&format!("line {} in hm logs {at}", want.len()), || {
            logs(&sb, "sizes", &[]).contains(&last)
        });
        assert_eq!(logs(&sb, "sizes", &[]), want, "hm logs {at}");
        want.clone()
    };
    // Eight lines of three rows each: two of them scrolled off.
    print(8, "at 60x19");
    let sizes: [(u16, u16, usize); 7] = [
        (200, 50, 4),
        (60, 19, 3),
        (60, 45, 2),
        (150, 45, 2),
        (45, 12, 2),
        (130, 44, 2),
        (70, 30, 1),
    ];
    let mut all = Vec::new();
    for (cols, rows, count) in sizes {
        resize(&sb, "sizes", cols, rows);
        all = print(count, &format!("after the resize to {cols}x{rows}"));
    }
    for (i, line) in all.iter().enumerate() {
        let got = rx
            .recv_timeout(common::PATIENCE)
            .unwrap_or_else(|_| panic!("line {} from hm logs -f", i + 1));
        assert_eq!(&got, line, "hm logs -f, line {}", i + 1);
    }
    let _ = follow.kill();
    let _ = follow.wait();
    assert!(rx.try_recv().is_err(), "hm logs -f printed more");
}

/// A session that keeps no output (`--scrollback-bytes 0`) still has a
/// screen: `hm logs` prints it (it printed nothing).
#[test]
fn logs_of_a_session_that_keeps_no_output_print_its_screen() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "bare",
        &["--scrollback-bytes", "0"],
        &["sh", "-c", "seq 1 5; exec sleep 600"],
    );
    wait_until("its screen in hm logs", || {
        logs(&sb, "bare", &[]) == ["1", "2", "3", "4", "5"]
    });
    assert_eq!(logs(&sb, "bare", &["--grep", "4"]), ["4"]);
}
