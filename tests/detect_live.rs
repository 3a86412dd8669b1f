//! The agent classifier and the screen model through a real supervisor:
//! real ptys, real programs, the verdict as `hm status`, `hm explain`,
//! STATE frames and `hm capture` give it.

use crate::common;

use common::{Raw, Sandbox, stderr, stdout};
use heimdall::protocol::{self, ClientType, ServerType};

/// Waits until `hm status --json` shows `primary` (and `detail`, if
/// given), and returns that answer.
fn wait_for_state(
    sb: &Sandbox,
    id: &str,
    primary: &str,
    detail: Option<&str>,
) -> serde_json::Value {
    wait_for(sb, id, &format!("{primary} {detail:?}"), |v| {
        v["primary"] == primary && detail.is_none_or(|d| v["detail"] == d)
    })
}

/// Waits until `hm status --json` satisfies `ok`, and returns that answer.
fn wait_for(
    sb: &Sandbox,
    id: &str,
    what: &str,
    ok: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let deadline = std::time::Instant::now() + common::PATIENCE;
    loop {
        let last = sb.status_json(id);
        if ok(&last) {
            return last;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for '{id}' to be {what}; last answer: {last}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_plain_program_asking_a_question_is_waiting_for_input() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "ask",
        &["--classifier", "agent"],
        &[
            "bash",
            "-c",
            "sleep 1; printf 'Apply these changes? [y/N] '; read x; echo \"got $x\"; sleep 30",
        ],
    );
    let v = wait_for_state(&sb, "ask", "waiting", Some("input"));
    assert_eq!(v["state"], "waiting");
    let signals = v["signals"].as_array().expect("signals");
    assert!(!signals.is_empty(), "a verdict carries its reasons: {v}");
    // People see primary and detail, and why.
    let text = stdout(&sb.cmd(&["status", "ask"]));
    assert!(text.contains("state:    waiting · input"), "{text}");
    let ls = stdout(&sb.cmd(&["ls"]));
    assert!(ls.contains("waiting · input"), "{ls}");
    let why = sb.cmd(&["explain", "ask"]);
    assert!(why.status.success(), "{}", stderr(&why));
    let why = stdout(&why);
    assert!(why.contains("ask: waiting · input"), "{why}");
    assert!(why.contains("signals, strongest first:"), "{why}");
    // Answered, it is no longer waiting.
    let mut raw = Raw::connect(&sb.sock("ask")).expect("connect");
    raw.send(ClientType::Input as u8, b"y\r");
    wait_for(&sb, "ask", "no longer waiting", |v| {
        v["primary"] != "waiting"
    });
}

#[test]
fn text_typed_at_a_shell_prompt_never_makes_a_dialog() {
    let sb = Sandbox::new();
    let (_s, mut raw) = common::bash_with_typed(&sb, "typed", "Do you want to proceed? [y/N]");
    // Typed, not submitted: whatever the verdict settles on, it is never
    // "waiting".
    common::never_waiting(&sb, "typed", 30, "typed text");
    raw.send(ClientType::Input as u8, b"\r");
    raw.output_until(b"[y/N]\r\n");
    common::never_waiting(&sb, "typed", 30, "echoed text");
}

#[test]
fn state_changes_are_pushed_to_subscribers_that_ask() {
    let sb = Sandbox::new();
    // The program waits at a fifo, not at the terminal (a program reading
    // its terminal is already waiting for input), until the test opens it.
    let gate = common::gate(&sb, "gate");
    let script = format!(
        "cat {} >/dev/null; printf 'Continue? [y/N] '; read x; sleep 30",
        gate.display()
    );
    let _s = sb.start("push", &["--classifier", "agent"], &["bash", "-c", &script]);
    let mut raw = Raw::connect(&sb.sock("push")).expect("connect");
    raw.send(ClientType::Subscribe as u8, &[protocol::SUBSCRIBE_STATE]);
    // The state as it is comes at once, before the question is asked.
    let first = raw.expect(ServerType::State as u8);
    let first: serde_json::Value = serde_json::from_slice(&first.payload).expect("json");
    assert!(first["state_byte"].is_u64(), "{first}");
    assert_ne!(first["primary"], "waiting", "{first}");
    // Then every change, until the question is up.
    drop(
        std::fs::OpenOptions::new()
            .write(true)
            .open(&gate)
            .expect("open the gate"),
    );
    let deadline = std::time::Instant::now() + common::PATIENCE;
    loop {
        let f = raw.expect(ServerType::State as u8);
        let v: serde_json::Value = serde_json::from_slice(&f.payload).expect("json");
        assert!(v["state_byte"].is_u64(), "{v}");
        if v["primary"] == "waiting" {
            assert_eq!(v["detail"], "input", "{v}");
            assert_eq!(v["state_byte"], 5, "{v}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no waiting pushed");
    }
}

#[test]
fn queries_are_answered_while_no_terminal_is_attached() {
    let sb = Sandbox::new();
    // Asks where the cursor is after moving it, as fish and the agent CLIs
    // do at start-up, and says whether an answer came.
    let script = "read go; printf '\\033[3;5H\\033[6n'; \
                  if IFS= read -rs -d R -t 3 r; then echo \"answered:${r#?}\"; else echo unanswered; fi; \
                  sleep 30";
    let _s = sb.start("q", &[], &["bash", "-c", script]);
    let mut raw = Raw::connect(&sb.sock("q")).expect("connect");
    raw.send(ClientType::Subscribe as u8, &[]);
    raw.send(ClientType::Input as u8, b"go\r");
    raw.output_until(b"answered:[3;5");
}

#[test]
fn an_attached_terminal_answers_queries_and_the_supervisor_does_not() {
    let sb = Sandbox::new();
    let script = "read go; printf '\\033[6n'; \
                  if IFS= read -rs -d R -t 2 r; then echo \"answered:${r#?}\"; else echo unanswered; fi; \
                  sleep 30";
    let _s = sb.start("t", &[], &["bash", "-c", script]);
    let mut raw = Raw::connect(&sb.sock("t")).expect("connect");
    // This subscriber says it is a terminal, but answers nothing: the
    // program must not get a second answer from the supervisor.
    raw.send(ClientType::Subscribe as u8, &[protocol::SUBSCRIBE_TERMINAL]);
    raw.send(ClientType::Input as u8, b"go\r");
    raw.output_until(b"unanswered");
}

#[test]
fn the_agent_classifier_is_the_default_for_a_known_agent() {
    let sb = Sandbox::new();
    let bin = sb.path().join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let fake = bin.join("codex");
    std::fs::write(&fake, "#!/bin/sh\nsleep 30\n").expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let fake = fake.to_str().expect("utf-8");
    let _a = sb.start("agent", &[], &[fake]);
    let _b = sb.start("plain", &[], &["sleep", "30"]);
    let _c = sb.start("chosen", &["--classifier", "simple"], &[fake]);
    let classifier = |id: &str| {
        let mut raw = Raw::connect(&sb.sock(id)).expect("connect");
        raw.send(ClientType::Info as u8, &[]);
        let f = raw.expect(ServerType::Info as u8);
        let v: serde_json::Value = serde_json::from_slice(&f.payload).expect("json");
        v["classifier"].as_str().unwrap_or_default().to_string()
    };
    assert_eq!(classifier("agent"), "agent");
    assert_eq!(classifier("plain"), "simple");
    assert_eq!(classifier("chosen"), "simple");
}

/// `hm replay --path CASE` passes.
fn assert_replays(sb: &Sandbox, case: &std::path::Path) {
    let replayed = sb
        .hm()
        .args(["replay", "--path"])
        .arg(case)
        .output()
        .expect("run hm replay");
    assert!(
        replayed.status.success(),
        "{}{}",
        stdout(&replayed),
        stderr(&replayed)
    );
}

#[test]
fn capture_saves_the_screen_and_verdict_as_a_fixture() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "cap",
        &["--classifier", "agent", "--cols", "60", "--rows", "10"],
        &[
            "bash",
            "-c",
            "printf 'Overwrite config.toml? [y/N] '; read x; sleep 30",
        ],
    );
    wait_for_state(&sb, "cap", "waiting", Some("input"));
    let case = sb.path().join("fixtures").join("cap");
    let out = sb.cmd(&["capture", "cap", "--fixture", case.to_str().expect("utf-8")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let frame = std::fs::read_to_string(case.join("frame.txt")).expect("frame");
    assert!(
        frame.starts_with("Overwrite config.toml? [y/N]"),
        "{frame:?}"
    );
    let expected = std::fs::read_to_string(case.join("expected.txt")).expect("expected");
    assert!(expected.starts_with("waiting input\n"), "{expected}");
    assert!(expected.contains("size: 60x10"), "{expected}");
    // What was saved is what `hm replay` checks, and it passes.
    assert_replays(&sb, &case);
    // A second capture into the same case is refused, not an overwrite.
    let again = sb.cmd(&["capture", "cap", "--fixture", case.to_str().expect("utf-8")]);
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("already holds a fixture"),
        "{}",
        stderr(&again)
    );
}

/// Starts the status-protocol program under `classifier` and lets it ask:
/// what it printed about the replies it got (ESC shown as `ESC`).
fn probe_exchange(
    sb: &Sandbox,
    classifier: &str,
) -> (common::StatusProgram, common::Session, String) {
    let prog = common::StatusProgram::new(sb);
    let s = sb.start(
        "st",
        &["--classifier", classifier],
        &["bash", "-c", &prog.script],
    );
    let mut raw = Raw::connect(&sb.sock("st")).expect("connect");
    raw.send(ClientType::Subscribe as u8, &[]);
    common::open_gate(&prog.gates[0]);
    let out = String::from_utf8_lossy(&raw.output_until(b"ANSWERED")).replace('\u{1b}', "ESC");
    (prog, s, out)
}

#[test]
fn the_status_probe_is_answered_first_and_the_records_decide() {
    let sb = Sandbox::new();
    let (prog, _s, out) = probe_exchange(&sb, "agent");
    assert!(out.contains("ANSWER-FIRST"), "{out}");
    common::open_gate(&prog.gates[1]);
    // The program's own record: waiting for permission, with its text,
    // though nothing on the screen shows a dialog.
    let v = wait_for_state(&sb, "st", "waiting", Some("permission"));
    assert_eq!(v["signals"][0]["source"], "status_protocol", "{v}");
    // And a child, in the record that follows.
    wait_for(&sb, "st", "reporting its child", |v| {
        v["children"][0]["title"] == "Background sleep"
    });
    let why = stdout(&sb.cmd(&["explain", "st"]));
    assert!(why.contains("approve Bash: rm -rf build"), "{why}");
    assert!(why.contains("status.child bzytm4a8d"), "{why}");
    common::open_gate(&prog.gates[2]);
    wait_for_state(&sb, "st", "active", None);
}

#[test]
fn without_the_agent_classifier_the_probe_goes_unanswered() {
    let sb = Sandbox::new();
    // Only the supervisor's DA1 answer: nobody reads the records, so the
    // program is not told to send them.
    let (_prog, _s, out) = probe_exchange(&sb, "simple");
    let verdict = out.split("ANSWER-").nth(1).unwrap_or_default();
    assert!(verdict.starts_with("WRONG"), "{out}");
    assert!(!verdict.contains("7501"), "{out}");
}

#[test]
fn a_capture_of_a_verdict_the_screen_cannot_show_says_so_and_still_replays() {
    let sb = Sandbox::new();
    // A silent `read`: waiting by the process facts; the screen is empty.
    let _s = sb.start(
        "silent",
        &["--classifier", "agent"],
        &["bash", "-c", "read x; sleep 30"],
    );
    wait_for_state(&sb, "silent", "waiting", Some("input"));
    let case = sb.path().join("fixtures").join("silent");
    let out = sb.cmd(&[
        "capture",
        "silent",
        "--fixture",
        case.to_str().expect("utf-8"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(
        said.contains("live it is waiting · input, decided by process"),
        "{said}"
    );
    assert_replays(&sb, &case);
}

#[test]
fn a_script_asking_without_a_word_is_pushed_as_waiting() {
    let sb = Sandbox::new();
    // Nothing is drawn when the read begins: only the process facts, read
    // again while the job runs silently, can tell.
    let _s = sb.start(
        "silent",
        &["--classifier", "agent"],
        &["bash", "-c", "sleep 2; read x; sleep 30"],
    );
    let mut raw = Raw::connect(&sb.sock("silent")).expect("connect");
    raw.send(ClientType::Subscribe as u8, &[protocol::SUBSCRIBE_STATE]);
    let deadline = std::time::Instant::now() + common::PATIENCE;
    loop {
        let f = raw.expect(ServerType::State as u8);
        let v: serde_json::Value = serde_json::from_slice(&f.payload).expect("json");
        if v["primary"] == "waiting" {
            assert_eq!(v["detail"], "input", "{v}");
            break;
        }
        assert_eq!(v["primary"], "active", "a silent job runs: {v}");
        assert!(std::time::Instant::now() < deadline, "no waiting pushed");
    }
}

#[test]
fn a_python_script_asking_is_waiting_for_input() {
    if std::process::Command::new("python3")
        .arg("-V")
        .output()
        .is_err()
    {
        println!("skipped: python3 is not installed");
        return;
    }
    let sb = Sandbox::new();
    let _s = sb.start(
        "py",
        &["--classifier", "agent"],
        &["python3", "-c", "input('Your name? ')"],
    );
    wait_for_state(&sb, "py", "waiting", Some("input"));
}

#[test]
fn a_question_typed_after_a_prompt_with_spaces_is_prompt_editing() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "fedora",
        &["--classifier", "agent"],
        &["bash", "--norc", "--noprofile", "-i"],
    );
    let mut raw = Raw::connect(&sb.sock("fedora")).expect("connect");
    raw.send(ClientType::Subscribe as u8, &[]);
    raw.send(ClientType::Input as u8, b"PS1='[\\u@\\h \\W]$ '\r");
    // The echoed command line has `]$ ` once, the new prompt again.
    let mut seen = 0;
    while seen < 2 {
        seen += raw
            .output_until(b"]$ ")
            .windows(3)
            .filter(|w| w == b"]$ ")
            .count();
    }
    raw.send(ClientType::Input as u8, b"echo Continue? [y/N]");
    raw.output_until(b"[y/N]");
    let v = wait_for_state(&sb, "fedora", "idle", Some("prompt_editing"));
    assert_eq!(v["signals"][0]["rule"], "process.at_prompt", "{v}");
    for _ in 0..20 {
        let v = sb.status_json("fedora");
        assert_ne!(v["primary"], "waiting", "typed text made a dialog: {v}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// An agent a person starts by typing its name at a shell session's prompt
/// (`hm run -- bash`, no classifier chosen) is found by the process in
/// front of the terminal, and its dialog read by its rules. The agent is a
/// stand-in named `opencode` that prints opencode 1.18.33's recorded
/// output (tests/corpus, recorded for this project) up to its permission
/// dialog, then sleeps.
#[test]
fn an_agent_typed_at_a_shell_prompt_is_found_and_read() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let bin = sb.path().join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let cast = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus/opencode_bash_permission.cast");
    let player = bin.join("opencode");
    std::fs::write(
        &player,
        format!(
            "#!/usr/bin/env python3\nimport json, os, time\n\
             lines = open({:?}).read().splitlines()[1:]\n\
             for l in lines:\n    t, kind, data = json.loads(l)\n\
             \x20   if t > 36.0:\n        break\n\
             \x20   if kind == 'o':\n        os.write(1, data.encode())\n\
             time.sleep(60)\n",
            cast.to_str().expect("utf-8")
        ),
    )
    .expect("write the stand-in");
    std::fs::set_permissions(&player, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let _s = sb.start(
        "sh",
        &["--cols", "120", "--rows", "40"],
        &["bash", "--norc", "--noprofile", "-i"],
    );
    wait_for_state(&sb, "sh", "idle", None);
    let mut raw = Raw::connect(&sb.sock("sh")).expect("connect");
    raw.send(
        ClientType::Input as u8,
        format!("{}\r", player.to_str().expect("utf-8")).as_bytes(),
    );
    let mut last = serde_json::Value::Null;
    common::wait_until("opencode's permission dialog", || {
        last = sb.status_json("sh");
        last["primary"] == "waiting" && last["detail"] == "permission"
    });
    assert_eq!(last["agent"], "opencode", "{last}");
}
