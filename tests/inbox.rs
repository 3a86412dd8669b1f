//! The dashboard's inbox and mouse, end to end: the real `hm tui` in a
//! real tmux (80x24 and 200x50), over real supervisors running stand-ins
//! that draw an agent's dialog, a `[y/N]` script, a shell and a build,
//! and a real Claude Code under the corpus's mock API. What is asserted
//! is what the person sees in tmux, and what the programs got.

use crate::common;

use std::path::PathBuf;
use std::time::Duration;

use common::tmux::{self, Tmux};
use common::{HM, Sandbox, Session, wait_until};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// A stand-in for Codex CLI 0.169 at its command approval (as in
/// `answer.rs`): the dialog about command `$2`; the bytes of the first
/// keys pressed go, as hex, into file `$1`, and the dialog goes (as the
/// CLI goes on with its work). With `$3` (a fifo) and `$4`,
/// once the fifo is opened the dialog is drawn anew about command `$4`,
/// and file `$5` says it was. Named `codex`, so that hm takes it for
/// Codex.
const FAKE_CODEX: &str = r#"#!/bin/bash
while [ "$1" = -c ]; do shift 2; done
got=$1 cmd=$2 gate=$3 then=$4 drawn=$5
stty raw -echo
draw() {
  printf '\033[H\033[2J  >_ OpenAI Codex (v0.169.0)\r\n\r\n'
  printf '\342\200\242 Running %s\r\n\r\n' "$1"
  printf '  Would you like to run the following command?\r\n\r\n'
  printf '  Environment: local\r\n\r\n'
  printf '  $ %s\r\n\r\n' "$1"
  printf '\342\200\272 1. Yes, proceed (y)\r\n'
  printf '  2. Yes, and don'"'"'t ask again for commands that start with `%s` (p)\r\n' "$1"
  printf '  3. No, and tell Codex what to do differently (esc)\r\n\r\n'
  printf '  Press enter to confirm or esc to cancel'
}
draw "$cmd"
if [ -n "$gate" ]; then
  ( cat "$gate" >/dev/null; draw "$then"; : > "$drawn" ) &
fi
hex() { od -An -tx1 | tr -d ' \n'; }
keys=$(dd bs=64 count=1 2>/dev/null | hex)
printf '%s\n' "$keys" > "$got.tmp" && mv "$got.tmp" "$got"
printf '\033[H\033[2Jgot %s\r\n' "$keys"
exec sleep 600
"#;

/// The stand-in at `<sandbox>/bin/codex`.
fn fake_codex(sb: &Sandbox) -> String {
    let bin = sb.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin dir");
    let path = bin.join("codex");
    if !path.exists() {
        std::fs::write(&path, FAKE_CODEX).expect("write the stand-in");
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("make it executable");
    }
    path.to_str().expect("utf-8 path").to_owned()
}

fn got_file(sb: &Sandbox, id: &str) -> PathBuf {
    sb.path().join(format!("{id}.got"))
}

/// Session `id` running the stand-in at a dialog about `cmd`.
fn codex_at(sb: &Sandbox, id: &str, cmd: &str) -> Session {
    let codex = fake_codex(sb);
    let got = got_file(sb, id);
    sb.start(id, &[], &[&codex, got.to_str().expect("utf-8"), cmd])
}

fn explain(sb: &Sandbox, id: &str) -> serde_json::Value {
    let out = sb.cmd(&["explain", id, "--json"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    serde_json::from_slice(&out.stdout).expect("json")
}

/// Waits until `id`'s supervisor shows a dialog about `subject`.
fn dialog_about(sb: &Sandbox, id: &str, subject: &str) {
    wait_until(&format!("{id} asking about {subject}"), || {
        explain(sb, id)["dialog"]["subject"] == subject
    });
}

/// `hm tui` on the sandbox's sessions in tmux; `None` (said) without tmux.
fn dashboard(sb: &Sandbox, size: (u16, u16)) -> Option<Tmux> {
    if !tmux::available() {
        println!("skipped: tmux is not installed");
        return None;
    }
    let command = format!("{HM} tui --socket-dir {}", sb.dir());
    let t = Tmux::start(sb, &command, size);
    if t.is_none() {
        println!("skipped: tmux could not start");
    }
    t
}

/// Waits until tmux shows what `cond` looks for; the screen if it never
/// does.
fn shows(t: &Tmux, what: &str, cond: impl Fn(&str) -> bool) {
    let deadline = std::time::Instant::now() + common::PATIENCE;
    loop {
        let screen = t.capture();
        if cond(&screen) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}; screen:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The inbox's text as one line: its rows joined, without the frame, so
/// that what wraps reads on.
fn flat(screen: &str) -> String {
    screen
        .lines()
        .map(|l| l.trim_matches(|c| c == '│' || c == ' '))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The inbox row of session `id`, as drawn.
fn row<'a>(screen: &'a str, id: &str) -> Option<&'a str> {
    // Its first column, after the inbox's frame: the selection's mark or
    // blanks, then the id.
    let (marked, plain) = (format!("│▸ {id} "), format!("│  {id} "));
    screen
        .lines()
        .find(|l| l.contains(&marked) || l.contains(&plain))
}

/// The eleven-session day's sessions but the first dialog (`cx1`): another
/// dialog of an agent, two `[y/N]` scripts (one under the `agent`
/// classifier, one with no flag: both answered from the inbox), a shell,
/// a build.
fn busy_day(sb: &Sandbox) -> Vec<Session> {
    vec![
        codex_at(sb, "cx2", "npm run build -- --production"),
        sb.start(
            "ask",
            &["--classifier", "agent"],
            &[
                "bash",
                "-c",
                "read -p 'Drop table users? [y/N] ' x; echo answered $x; sleep 600",
            ],
        ),
        // With no flag: the timing classifier. The process says the
        // program asks, and the generic rules read its question.
        sb.start(
            "plain",
            &[],
            &[
                "bash",
                "-c",
                "read -p 'Restart nginx? [y/N] ' x; echo restarted $x; sleep 600",
            ],
        ),
        sb.start("sh", &[], &["bash", "--norc", "--noprofile", "-i"]),
        sb.start(
            "build",
            &[],
            &[
                "sh",
                "-c",
                "i=0; while :; do i=$((i+1)); echo compiling crate-$i; sleep 0.3; done",
            ],
        ),
    ]
}

/// Every waiting session's id and subject readable on the first screen of
/// the inbox, at 80x24 and at 200x50; the footer says how many and which
/// key; `y` on a row answers that session's dialog (and only it).
#[test]
fn every_waiting_session_and_what_it_asks_is_on_the_inbox_first_screen() {
    let sb = Sandbox::new();
    // cx1 waits longest: a second before the others start.
    let first = codex_at(&sb, "cx1", "cargo test --all");
    wait_until("cx1 waiting a second", || {
        let v: serde_json::Value =
            serde_json::from_slice(&sb.cmd(&["status", "cx1", "--json"]).stdout)
                .unwrap_or_default();
        v["primary"] == "waiting" && v["state_ms"].as_u64().is_some_and(|ms| ms >= 1000)
    });
    let _sessions = (first, busy_day(&sb));
    dialog_about(&sb, "cx1", "cargo test --all");
    dialog_about(&sb, "cx2", "npm run build -- --production");
    let Some(t) = dashboard(&sb, (80, 24)) else {
        return;
    };
    shows(&t, "the footer counting four", |s| {
        footer(s).is_some_and(|l| l.starts_with(" 4 need you  i inbox"))
    });
    t.keys("i");
    let waiting = [
        ("cx1", "cargo test --all"),
        ("cx2", "npm run build -- --production"),
        ("ask", "Drop table users? [y/N]"),
        ("plain", "Restart nginx? [y/N]"),
    ];
    for size in [(80, 24), (200, 50)] {
        t.resize(size.0, size.1);
        // Each row whole (the idle ones not among them), the longest
        // waiting first: cx1, which started first, at the top.
        shows(&t, &format!("every row at {size:?}"), |s| {
            let at = |id: &str| row(s, id).and_then(|r| s.find(r));
            s.lines().count() == usize::from(size.1)
                && s.contains("needs you · 4")
                && waiting
                    .iter()
                    .all(|(id, about)| row(s, id).is_some_and(|r| r.contains(about)))
                && row(s, "sh").is_none()
                && row(s, "build").is_none()
                && at("cx1") < at("cx2")
                && at("cx1") < at("ask")
        });
    }
    // Two keys from the grid: `i`, `y` on the first row.
    t.keys("y");
    shows(&t, "the answer said", |s| {
        s.contains("approved codex.permission in 'cx1': cargo test --all (keys: y)")
    });
    wait_until("cx1 to get its key", || got_file(&sb, "cx1").exists());
    let got = std::fs::read_to_string(got_file(&sb, "cx1")).expect("read");
    assert_eq!(got.trim(), "79", "exactly codex's approve key");
    shows(&t, "cx1 gone from the inbox", |s| {
        row(s, "cx1").is_none() && s.contains("needs you · 3")
    });
    assert!(!got_file(&sb, "cx2").exists(), "cx2 got a key");
    // `n` on cx2 denies it with codex's deny key.
    select(&t, "cx2");
    press_answer(&t, "cx2", "n");
    wait_until("cx2 to get its key", || got_file(&sb, "cx2").exists());
    let got = std::fs::read_to_string(got_file(&sb, "cx2")).expect("read");
    assert_eq!(got.trim(), "1b", "codex's deny key (Esc)");
    // The list settled (a row leaving moves the selection) before the next.
    shows(&t, "cx2 gone from the inbox", |s| row(s, "cx2").is_none());
    // `y` on the `[y/N]` script types `y` and Enter: it goes on.
    select(&t, "ask");
    press_answer(&t, "ask", "y");
    shows(&t, "the script answered", |s| {
        flat(s).contains("approved input.yes_no in 'ask'")
    });
    wait_until("the script to take the answer", || {
        common::stdout(&sb.cmd(&["logs", "ask", "--screen"])).contains("answered y")
    });
    // The script with no flag is answered the same way.
    shows(&t, "ask answered", |s| row(s, "ask").is_none());
    select(&t, "plain");
    press_answer(&t, "plain", "y");
    shows(&t, "the plain script answered", |s| {
        flat(s).contains("approved input.yes_no in 'plain'")
    });
    wait_until("the plain script to take the answer", || {
        common::stdout(&sb.cmd(&["logs", "plain", "--screen"])).contains("restarted y")
    });
}

/// `a` in the inbox approves with the dialog's own option not to be asked
/// again, which the footer offers only where the dialog shows one.
#[test]
fn a_in_the_inbox_approves_and_stops_the_asking_where_the_dialog_offers_it() {
    let sb = Sandbox::new();
    let _cx = codex_at(&sb, "cx", "cargo fmt");
    let _yn = sb.start(
        "ask",
        &[],
        &[
            "sh",
            "-c",
            "printf 'Drop table users? [y/N] '; read a; exec sleep 600",
        ],
    );
    dialog_about(&sb, "cx", "cargo fmt");
    let Some(t) = dashboard(&sb, (80, 24)) else {
        return;
    };
    shows(&t, "two waiting", |s| s.contains("2 need you"));
    t.keys("i");
    select(&t, "ask");
    // A `[y/N]` has no such option: not offered, and refused if pressed.
    shows(&t, "the footer without it", |s| {
        footer(s).is_some_and(|l| l.contains("y approve") && !l.contains("a always"))
    });
    t.keys("a");
    shows(&t, "the refusal", |s| {
        flat(s).contains("with no option not to be asked again")
    });
    select(&t, "cx");
    shows(&t, "the footer offering it", |s| {
        footer(s).is_some_and(|l| l.contains("a always"))
    });
    press_answer(&t, "cx", "a");
    shows(&t, "the answer said", |s| {
        flat(s).contains("always approved codex.permission in 'cx': cargo fmt (keys: p)")
    });
    wait_until("cx to get its key", || got_file(&sb, "cx").exists());
    let got = std::fs::read_to_string(got_file(&sb, "cx")).expect("read");
    assert_eq!(got.trim(), "70", "codex's key for `don't ask again` (p)");
    // The refused `a` reached nobody: the question stands as it was.
    let screen = common::stdout(&sb.cmd(&["logs", "ask", "--screen"]));
    assert!(
        screen.trim_end().ends_with("Drop table users? [y/N]"),
        "the script got a key: {screen}"
    );
}

/// A digit in the inbox chooses that option of the selected dialog where
/// it numbers options hm can choose (Claude Code's question), as the
/// footer offers; elsewhere, and past its last option, it is refused and
/// nothing is sent.
#[test]
fn a_digit_in_the_inbox_chooses_that_option_of_the_question() {
    let sb = Sandbox::new();
    let claude = crate::answer::fake_claude_question(&sb);
    let got = got_file(&sb, "cc");
    let _cc = sb.start("cc", &[], &[&claude, got.to_str().expect("utf-8")]);
    let _cx = codex_at(&sb, "cx", "cargo fmt");
    dialog_about(&sb, "cc", "Which greeting should hello.py print?");
    dialog_about(&sb, "cx", "cargo fmt");
    let Some(t) = dashboard(&sb, (80, 24)) else {
        return;
    };
    shows(&t, "two waiting", |s| s.contains("2 need you"));
    t.keys("i");
    select(&t, "cx");
    // Codex's options are not chosen by digit: not offered, and refused.
    shows(&t, "the footer without a choice", |s| {
        footer(s).is_some_and(|l| l.contains("y approve") && !l.contains("choose"))
    });
    t.keys("2");
    shows(&t, "the refusal", |s| {
        flat(s).contains(
            "'cx' shows codex.permission, with no options hm can choose: \
             press y to approve, n to deny, a to always approve",
        )
    });
    select(&t, "cc");
    shows(
        &t,
        "the question's options and the footer offering them",
        |s| {
            s.contains("2. Hi there")
                && footer(s).is_some_and(|l| l.contains("1-4 choose") && !l.contains("y approve"))
        },
    );
    t.keys("7");
    shows(&t, "no option 7", |s| {
        flat(s).contains("not answered: 'cc' has no option 7: its options are 1 to 4")
    });
    // A question is not approved: the refusal says which keys answer it.
    t.keys("y");
    shows(&t, "y refused", |s| {
        flat(s).contains("'cc' shows claude.question, which hm cannot approve: press 1-4 to choose")
    });
    press_answer(&t, "cc", "2");
    shows(&t, "the choice said", |s| {
        flat(s).contains("chose option 2 of claude.question in 'cc'")
    });
    wait_until("cc to get its key", || got.exists());
    let keys = std::fs::read_to_string(&got).expect("read");
    assert_eq!(keys.trim(), "32", "option 2's digit, once");
    // The refused digits reached nobody.
    assert!(!got_file(&sb, "cx").exists(), "codex got a key");
}

/// Moves the inbox's selection to `id`'s row, a key at a time, each
/// seen drawn before the next (a key read after the screen was looked at
/// would move it on).
/// Presses the answer `key` on `id`, lit: if the row came up under the
/// selection a moment ago (the answered one above it left), or its dialog
/// changed a moment ago, the key is refused and says so, and the second
/// press answers, as a person's would.
fn press_answer(t: &Tmux, id: &str, key: &str) {
    // Also held: a dialog that changed under the key (an agent's own word
    // that it asks, then the dialog it draws).
    let held = format!("press {key} again");
    let answering = format!(" in '{id}'");
    t.keys(key);
    shows(t, &format!("{id} answered or held"), |s| {
        let s = flat(s);
        s.contains(&held) || s.contains(&answering)
    });
    if flat(&t.capture()).contains(&held) {
        t.keys(key);
    }
}

/// The dashboard's bottom row: its footer, or its focus bar.
fn footer(screen: &str) -> Option<&str> {
    screen.lines().last()
}

fn select(t: &Tmux, id: &str) {
    let lit = |s: &str| s.lines().position(|l| l.contains("│▸ "));
    let want = |s: &str| row(s, id).and_then(|r| s.lines().position(|l| l == r));
    for _ in 0..20 {
        // A whole frame (one caught while drawn may lack the rows).
        shows(t, &format!("the rows, {id}'s among them"), |s| {
            lit(s).is_some() && want(s).is_some()
        });
        let screen = t.capture();
        let (Some(at), Some(want)) = (lit(&screen), want(&screen)) else {
            continue;
        };
        if at == want {
            return;
        }
        t.keys(if want > at { "j" } else { "k" });
        shows(t, "the selection moved", |s| lit(s) != Some(at));
    }
    panic!("could not select {id}:\n{}", t.capture());
}

/// A dialog that changes between the showing and the `y` is refused, not
/// answered: the person saw `cargo test`, the program now asks about
/// `rm -rf target`, and no key reaches it; the inbox says so and shows
/// the new question, which `y` then answers.
///
/// Made certain rather than raced: the supervisor is stopped while the
/// program draws the new dialog and the dashboard sends the answer, so
/// the dashboard cannot have heard of it; resumed, the supervisor reads
/// the program's output (there first) before the answer.
#[test]
fn a_dialog_that_changed_after_it_was_shown_is_refused_not_answered() {
    let sb = Sandbox::new();
    let codex = fake_codex(&sb);
    let got = got_file(&sb, "cx");
    let gate = common::gate(&sb, "redraw");
    let drawn = sb.path().join("redrawn");
    let s = sb.start(
        "cx",
        &[],
        &[
            &codex,
            got.to_str().expect("utf-8"),
            "cargo test",
            gate.to_str().expect("utf-8"),
            "rm -rf target",
            drawn.to_str().expect("utf-8"),
        ],
    );
    dialog_about(&sb, "cx", "cargo test");
    let Some(t) = dashboard(&sb, (80, 24)) else {
        return;
    };
    shows(&t, "one waiting", |s| s.contains("1 needs you"));
    t.keys("i");
    shows(&t, "the row about cargo test", |s| {
        row(s, "cx").is_some_and(|r| r.contains("cargo test"))
    });
    let supervisor = Pid::from_raw(s.child.id() as i32);
    kill(supervisor, Signal::SIGSTOP).expect("stop the supervisor");
    let resume = Resume(supervisor);
    common::open_gate(&gate);
    wait_until("the program to draw its new dialog", || drawn.exists());
    t.keys("y");
    shows(&t, "the answer on its way", |s| {
        s.contains("approving codex.permission in 'cx'")
    });
    drop(resume);
    shows(&t, "the refusal", |s| {
        let s = flat(s);
        s.contains("not answered: the dialog in 'cx' changed: now asking about 'rm -rf target'")
            && s.contains("nothing was sent")
    });
    shows(&t, "the row showing the new question", |s| {
        row(s, "cx").is_some_and(|r| r.contains("rm -rf target"))
    });
    assert!(!got.exists(), "the changed dialog got keys");
    // What is shown now is answered.
    t.keys("y");
    shows(&t, "the answer said", |s| {
        s.contains("approved codex.permission in 'cx': rm -rf target")
    });
    wait_until("the key", || got.exists());
    assert_eq!(std::fs::read_to_string(&got).expect("read").trim(), "79");
}

/// Continues a stopped process when dropped (also when a test fails).
struct Resume(Pid);

impl Drop for Resume {
    fn drop(&mut self) {
        let _ = kill(self.0, Signal::SIGCONT);
    }
}

/// A mouse drag over a pane selects its text, and letting go copies it:
/// OSC 52 through tmux (`set-clipboard on`) into tmux's paste buffer. In
/// focus the same.
#[test]
fn a_mouse_drag_copies_a_panes_text_through_osc_52() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "words",
        &[],
        &[
            "sh",
            "-c",
            "printf 'alpha beta\\ngamma delta\\n'; exec sleep 600",
        ],
    );
    let Some(t) = dashboard(&sb, (80, 24)) else {
        return;
    };
    shows(&t, "the pane's text", |s| s.contains("gamma delta"));
    let screen = t.capture();
    // The pane's first text row, and its column.
    let (y, line) = screen
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("alpha beta"))
        .expect("the text");
    let x = line.find("alpha").expect("alpha");
    let x = line[..x].chars().count();
    // SGR reports are 1-based: press on `beta`, drag to the end of
    // `gamma` on the next row, let go.
    let (col, row) = (x + 1, y + 1);
    let report = |b: u8, c: usize, r: usize, end: char| format!("\x1b[<{b};{c};{r}{end}");
    let drag = [
        report(0, col + 6, row, 'M'),
        report(32, col + 3, row + 1, 'M'),
        report(32, col + 4, row + 1, 'M'),
        report(0, col + 4, row + 1, 'm'),
    ]
    .concat();
    t.bytes(drag.as_bytes());
    shows(&t, "the notice", |s| s.contains("copied 2 lines"));
    wait_until("the copy in tmux's buffer", || {
        t.buffer().is_some_and(|b| b == "beta\ngamma")
    });
    // In focus: the whole first row.
    t.keys("Enter");
    shows(&t, "focus", |s| s.contains("back to the grid"));
    let screen = t.capture();
    let y = screen
        .lines()
        .position(|l| l.starts_with("alpha beta"))
        .expect("the text in focus");
    t.bytes(
        [
            report(0, 1, y + 1, 'M'),
            report(32, 10, y + 1, 'M'),
            report(0, 10, y + 1, 'm'),
        ]
        .concat()
        .as_bytes(),
    );
    wait_until("the focused copy in tmux's buffer", || {
        t.buffer().is_some_and(|b| b == "alpha beta")
    });
}

/// The real Claude Code, where it and tmux are here to test the inbox
/// with; else why not, printed, and `None`.
fn claude_in_tmux() -> Option<std::path::PathBuf> {
    let cc = match crate::agents_live::claude() {
        Ok(bin) => bin,
        Err(why) => {
            println!(
                "skipped: Claude Code {} is not available: {why}",
                crate::agents_live::CLAUDE_VERSION
            );
            return None;
        }
    };
    if !tmux::available() {
        println!("skipped: tmux is not installed");
        return None;
    }
    Some(cc)
}

/// `i`, `y`: a real Claude Code waiting at its permission dialog is
/// approved from the inbox, and goes on to run the command.
#[test]
fn claude_code_approved_from_the_inbox_in_two_keys_goes_on() {
    let Some(cc) = claude_in_tmux() else { return };
    let sb = Sandbox::new();
    let scenario = serde_json::json!({"turns": [
        {"kind": "tool", "text": "I'll run the loop for you.", "pre_delay": 0.5, "chunk_delay": 0.05,
         "tool": {"name": "Bash", "input": {
            "command": "for i in 1 2 3; do echo step $i >> steps.txt; done",
            "description": "Write three steps to steps.txt"}}},
        {"kind": "text", "text": "The loop wrote three steps.", "pre_delay": 0.5, "chunk_delay": 0.05}
    ]});
    let (_agent, proj) = crate::agents_live::start_claude(&sb, &cc, "default", scenario);
    let Some(t) = dashboard(&sb, (120, 40)) else {
        return;
    };
    crate::agents_live::type_prompt(&sb, "? for shortcuts", "run the loop that writes steps.txt");
    crate::agents_live::dialog_state(&sb, "waiting", "permission", "Do you want to proceed?");
    shows(&t, "Claude Code counted", |s| s.contains("1 needs you"));
    t.keys("i");
    // The dialog as the supervisor found it (not only the program's own
    // word that it waits, which comes first).
    shows(&t, "its row, with the command", |s| {
        row(s, "cc").is_some_and(|r| r.contains("permission") && r.contains("for i in 1 2 3"))
            && s.contains("cc · claude.permission · approve, deny")
    });
    t.keys("y");
    // A key in the 800 ms after the dialog arrived (Claude's hook says it
    // waits before its dialog is drawn) is refused, as a person reading
    // it would want; pressed again, as the inbox then says, it answers.
    shows(&t, "the answer said, or the key held back", |s| {
        s.contains("approved claude.permission in 'cc'") || s.contains("press y again")
    });
    if !t.capture().contains("approved claude.permission in 'cc'") {
        t.keys("y");
    }
    shows(&t, "the answer said", |s| {
        s.contains("approved claude.permission in 'cc'")
    });
    crate::agents_live::until(&sb, "idle after the turn", Duration::from_secs(60), |v| {
        v["primary"] == "idle"
    });
    let steps = std::fs::read_to_string(proj.join("steps.txt")).unwrap_or_default();
    assert_eq!(
        steps, "step 1\nstep 2\nstep 3\n",
        "the approved command ran"
    );
    shows(&t, "nobody waiting", |s| {
        s.contains("needs you · 0") && !s.contains("need you")
    });
}

/// A real Claude Code's question, answered from the inbox at 80x24 with
/// the option's digit: the footer offers the choice, the digit picks
/// `2. Hi there`, and Claude Code goes on with that answer.
#[test]
fn claude_codes_question_is_chosen_from_the_inbox_with_a_digit() {
    let Some(cc) = claude_in_tmux() else { return };
    let sb = Sandbox::new();
    let scenario = crate::agents_live::greeting_question();
    let (_agent, _proj) = crate::agents_live::start_claude(&sb, &cc, "default", scenario);
    let Some(t) = dashboard(&sb, (80, 24)) else {
        return;
    };
    crate::agents_live::type_prompt(
        &sb,
        "? for shortcuts",
        "change the greeting, ask me which one",
    );
    dialog_about(&sb, "cc", "Which greeting should hello.py print?");
    shows(&t, "Claude Code counted", |s| s.contains("1 needs you"));
    t.keys("i");
    shows(
        &t,
        "its question, its options and the choice offered",
        |s| {
            row(s, "cc").is_some_and(|r| r.contains("question") && r.contains("Which greeting"))
                && s.contains("2. Hi there")
                && footer(s).is_some_and(|l| l.contains("1-4 choose"))
        },
    );
    press_answer(&t, "cc", "2");
    shows(&t, "the choice said", |s| {
        flat(s).contains("chose option 2 of claude.question in 'cc'")
    });
    crate::agents_live::until(&sb, "idle after the turn", Duration::from_secs(60), |v| {
        v["primary"] == "idle"
    });
    let screen = common::stdout(&sb.cmd(&["logs", "cc", "--screen"]));
    assert!(
        screen.contains("→ Hi there"),
        "the answer Claude Code took: {screen}"
    );
}

/// `y` on a `[y/N]` question types `y`, and Enter only once the line shows
/// it typed: a program reading the one key (`read -n 1`) has gone on by
/// then, and the next question gets no Enter meant for nothing.
#[test]
fn a_yes_no_question_read_as_one_key_gets_no_enter() {
    let sb = Sandbox::new();
    let script = "read -n 1 -p 'Continue? [y/N] ' x; echo; echo got=$x; \
                  read -p 'Name: ' n; echo name=[$n]; sleep 600";
    let _s = sb.start("one", &["--classifier", "agent"], &["bash", "-c", script]);
    wait_until("the question", || {
        explain(&sb, "one")["dialog"]["rule"] == "input.yes_no"
    });
    // `hm approve` returns once the answer is over, and that is no
    // failure: the program took what it needed.
    let out = sb.cmd(&["approve", "one"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let screen = || common::stdout(&sb.cmd(&["logs", "one", "--screen"]));
    assert!(screen().contains("got=y"), "{}", screen());
    // The supervisor gave the Enter up, as soon as the program left its
    // question's row (not at the end of its 5 s wait for the line to show
    // the `y`), and says so in the record.
    let action = explain(&sb, "one")["actions"]
        .as_array()
        .and_then(|a| a.last())
        .cloned()
        .expect("the answer's record");
    let why = action["unfinished"].as_str().unwrap_or_default();
    assert!(
        why.starts_with("the program went on from its question"),
        "{action}"
    );
    // And `hm explain` says it so, not as an answer stopped short.
    let text = common::stdout(&sb.cmd(&["explain", "one"]));
    assert!(
        text.contains("    the program went on from its question"),
        "{text}"
    );
    assert!(!text.contains("stopped short"), "{text}");
    assert!(!screen().contains("name=["), "{}", screen());
}

/// Writes the sandbox's config file (where `hm` looks for it).
fn config(sb: &Sandbox, text: &str) -> PathBuf {
    let path = sb.path().join("config/heimdall/heimdall.toml");
    std::fs::create_dir_all(path.parent().expect("a dir")).expect("config dir");
    std::fs::write(&path, text).expect("write the config");
    path
}

/// The keys `[tui.keys]` gives are the dashboard's, `?` lists them, and
/// the keys given away do nothing.
#[test]
fn the_configured_keys_are_the_dashboards_and_help_lists_them() {
    let sb = Sandbox::new();
    config(&sb, "[tui.keys]\ninbox = \"f2\"\nquit = \"Q\"\n");
    let _s = codex_at(&sb, "cx", "make deploy");
    let Some(t) = dashboard(&sb, (80, 24)) else {
        return;
    };
    shows(&t, "the footer with the inbox's key", |s| {
        footer(s).is_some_and(|l| l.starts_with(" 1 needs you  F2 inbox") && l.contains("Q quit"))
    });
    t.keys("?");
    shows(&t, "the help with the keys in effect", |s| {
        s.lines()
            .any(|l| l.contains("│F2 ") && l.contains("inbox: who needs you"))
            && s.lines().any(|l| l.contains("│Q ") && l.contains("quit"))
    });
    t.keys("Escape");
    shows(&t, "the help closed", |s| !s.contains("move the selection"));
    // `i` and `q` are nobody's now.
    t.keys("i");
    t.keys("q");
    t.keys("F2");
    shows(&t, "the inbox, on F2", |s| row(s, "cx").is_some());
    // Esc seen alone before the next key (an Esc the program reads with
    // a key after it is Alt and that key).
    t.keys("Escape");
    shows(&t, "the inbox closed", |s| !s.contains("needs you · "));
    let pid = t.pane_pid().expect("the dashboard's pid");
    t.keys("Q");
    wait_until("the dashboard to quit on Q", || {
        kill(Pid::from_raw(pid), None).is_err()
    });
}

/// A key the file gives to one action leaves another without any unasked:
/// the dashboard says so as it starts.
#[test]
fn an_action_left_without_a_key_is_said_at_the_start() {
    let sb = Sandbox::new();
    config(&sb, "[tui.keys]\nnew = \"x\"\n");
    let _s = sb.start("s1", &[], &["sleep", "600"]);
    let Some(t) = dashboard(&sb, (80, 24)) else {
        return;
    };
    shows(&t, "the warning, whole, above the footer", |s| {
        let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
        flat.contains("[tui.keys]: kill has no key (x is new's now); give it one or write kill = [] to mean it")
    });
    shows(&t, "the footer without a kill key", |s| {
        footer(s).is_some_and(|l| l.contains("x new") && !l.contains("kill"))
    });
}

/// A key bound twice stops every command at once with the file and line,
/// before the dashboard touches the terminal.
#[test]
fn a_key_bound_twice_is_an_error_naming_its_line() {
    let sb = Sandbox::new();
    let path = config(
        &sb,
        "[tui]\nbell = true\n[tui.keys]\nzoom = \"z\"\nquit = [\"q\", \"z\"]\n",
    );
    let out = sb.cmd(&["tui"]);
    assert!(!out.status.success());
    assert_eq!(
        common::stderr(&out).trim(),
        format!(
            "hm: {}:5: invalid value for 'tui.keys.quit': z is bound to 'zoom' on line 4: \
             a key does one thing",
            path.display()
        )
    );
    config(&sb, "[tui.keys]\nteleport = \"t\"\n");
    let err = common::stderr(&sb.cmd(&["tui"]));
    assert!(
        err.starts_with(&format!(
            "hm: {}:2: unknown key 'tui.keys.teleport' (expected one of: left, down,",
            path.display()
        )),
        "{err}"
    );
}

/// Claude Code's plan approval asks about its plan, which it prints some
/// twenty rows above the question: the inbox shows the plan above the
/// question and its options, and lists it as the row's subject. The
/// session shows the recording's screen as Claude Code 2.1.330 drew it
/// at its plan approval (`tests/corpus/claude330_plan_approval.cast`, up
/// to a moment its labels give as waiting at the plan).
#[test]
fn the_inbox_shows_the_plan_a_plan_approval_asks_about() {
    use heimdall::detect::offline::Cast;
    let sb = Sandbox::new();
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let cast = Cast::load(&corpus.join("claude330_plan_approval.cast")).expect("the recording");
    let screen: Vec<u8> = cast
        .output
        .iter()
        .take_while(|(ms, _)| *ms <= 14_300)
        .flat_map(|(_, bytes)| bytes.iter().copied())
        .collect();
    let drawn = sb.path().join("plan-approval.bytes");
    std::fs::write(&drawn, screen).expect("write the screen's bytes");
    // `cat` draws it, not Claude Code: what the process says is off, as
    // for any replay.
    let config = sb.path().join("replay.toml");
    std::fs::write(&config, "[classifier.agent]\nprocess_evidence = false\n").expect("config");
    let (cols, rows) = (cast.size.cols.to_string(), cast.size.rows.to_string());
    let script = format!("stty raw -echo; cat '{}'; exec sleep 600", drawn.display());
    let _s = sb.start(
        "cc",
        &[
            "--config",
            config.to_str().expect("utf-8 path"),
            "--classifier",
            "agent",
            "--cols",
            &cols,
            "--rows",
            &rows,
        ],
        &["sh", "-c", &script],
    );
    const PLAN: &str =
        "Plan 1. Update hello.py to print a friendlier greeting. 2. Run it to verify.";
    dialog_about(&sb, "cc", PLAN);
    let Some(t) = dashboard(&sb, (120, 40)) else {
        return;
    };
    shows(&t, "the footer counting one", |s| {
        footer(s).is_some_and(|l| l.starts_with(" 1 needs you  i inbox"))
    });
    t.keys("i");
    // Under the list: which dialog, then the plan, then the question and
    // its options.
    shows(&t, "the plan above the question and its options", |s| {
        let lines: Vec<&str> = s.lines().collect();
        let at = |what: &str, from: usize| (from..lines.len()).find(|&i| lines[i].contains(what));
        let Some(header) = at("cc · claude.plan_approval · approve", 0) else {
            return false;
        };
        let plan = at("Plan 1. Update hello.py", header);
        let question = at("Would you like to", header);
        let option = at("2. Yes, manually approve edits", header);
        plan == Some(header + 1)
            && matches!((question, option), (Some(q), Some(o)) if header + 1 < q && q < o)
    });
}

/// A stopped program is in the inbox with what stopped it, and the way
/// on: `y` continues it there, and so does focusing it (Enter), as `fg`
/// would.
#[test]
fn a_stopped_program_is_continued_from_the_inbox_or_by_focusing_it() {
    let sb = Sandbox::new();
    let stops = "echo before; kill -STOP $$; echo after-continue; exec sleep 600";
    let _s = (
        sb.start("one", &[], &["sh", "-c", stops]),
        sb.start("two", &[], &["sh", "-c", stops]),
    );
    for id in ["one", "two"] {
        wait_until(&format!("{id} stopped"), || {
            common::stdout(&sb.cmd(&["status", id])).contains("waiting · stopped")
        });
    }
    let Some(t) = dashboard(&sb, (100, 30)) else {
        return;
    };
    shows(&t, "the footer counting two", |s| s.contains("2 need you"));
    t.keys("i");
    shows(&t, "both rows and the way on", |s| {
        ["one", "two"]
            .iter()
            .all(|id| row(s, id).is_some_and(|r| r.contains("stopped by SIGSTOP")))
    });
    select(&t, "one");
    shows(&t, "the key that continues it", |s| {
        flat(s).contains("one · stopped · y continues it") && s.contains("y continue")
    });
    t.keys("y");
    shows(&t, "the answer said", |s| {
        flat(s).contains("continued 'one' (stopped by SIGSTOP)")
    });
    wait_until("one to go on", || {
        common::stdout(&sb.cmd(&["logs", "one", "--screen"])).contains("after-continue")
    });
    shows(&t, "one gone from the inbox", |s| row(s, "one").is_none());
    // Enter focuses `two`, which brings it to the front.
    select(&t, "two");
    t.keys("Enter");
    wait_until("two to go on", || {
        common::stdout(&sb.cmd(&["logs", "two", "--screen"])).contains("after-continue")
    });
    shows(&t, "its output in focus", |s| s.contains("after-continue"));
}
