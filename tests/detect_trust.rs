//! Nothing a program prints can steer hm: through real supervisors, a
//! screen that copies an agent's dialog is not answered by automation
//! unless the process that runs the session is that agent, and a status
//! record (OSC 7501) counts only while the process that asked for the
//! protocol is in front of the terminal.

use crate::common;

use std::path::{Path, PathBuf};

use common::{Raw, Sandbox, stderr, stdout};
use heimdall::protocol::ClientType;

/// Claude Code 2.1.330's Bash permission dialog, as it draws it
/// (`tests/fixtures/screens/claude330_permission`).
const CLAUDE_PERMISSION: &str = include_str!("fixtures/screens/claude330_permission/frame.txt");

/// Reads keys in raw mode for up to 20 s and writes the first ones, as
/// hex, to the file named by its argument.
const READER: &str = r#"
import os, select, sys, termios, tty
fd = sys.stdin.fileno()
# Now, not after flushing: a key that came while Python started is kept.
tty.setraw(fd, termios.TCSANOW)
ready, _, _ = select.select([fd], [], [], 20)
if ready:
    keys = os.read(fd, 64).hex()
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(keys)
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    select.select([fd], [], [], 20)
"#;

/// Asks whether the terminal speaks the status protocol, waits for the
/// answer to the device-attributes query that follows, says whether the
/// probe was answered, and exits.
const PROBE: &str = r#"
import os, select, sys, termios, tty
fd = sys.stdin.fileno()
old = termios.tcgetattr(fd)
tty.setraw(fd)
os.write(1, b"\x1b]7501;?\x07\x1b[c")
got = b""
while not (b"\x1b[?" in got and got.endswith(b"c")):
    ready, _, _ = select.select([fd], [], [], 5)
    if not ready:
        break
    got += os.read(fd, 256)
termios.tcsetattr(fd, termios.TCSADRAIN, old)
print("PROBE-" + ("ANSWERED" if got.startswith(b"\x1b]7501;?") else "IGNORED"))
"#;

fn write(sb: &Sandbox, name: &str, text: &str) -> PathBuf {
    let p = sb.path().join(name);
    std::fs::write(&p, text).expect("write");
    p
}

fn explain_json(sb: &Sandbox, id: &str) -> serde_json::Value {
    let out = sb.cmd(&["explain", id, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("json")
}

/// An `[[automation]]` entry that approves any permission dialog after
/// 100 ms, in a config that gives every session the `agent` classifier.
fn approving_config(sb: &Sandbox) -> String {
    let p = write(
        sb,
        "heimdall.toml",
        "classifier = \"agent\"\n\n[[automation]]\nstate = \"waiting\"\n\
         detail = \"permission\"\naction = \"approve\"\ndwell_ms = 100\n",
    );
    p.to_str().expect("utf-8").to_owned()
}

/// Waits until `id` has been `waiting · permission` for well past the
/// automation's dwell, so that an answer due would have been given.
fn wait_past_the_dwell(sb: &Sandbox, id: &str) {
    common::wait_until("waiting · permission for 1.5 s", || {
        let v = sb.status_json(id);
        v["primary"] == "waiting"
            && v["detail"] == "permission"
            && v["state_ms"].as_u64().is_some_and(|ms| ms >= 1_500)
    });
}

fn identity_row(why: &serde_json::Value) -> serde_json::Value {
    why["evidence"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["rule"] == "agent.identity"))
        .cloned()
        .unwrap_or_else(|| panic!("no identity row: {why}"))
}

#[test]
fn a_screen_copying_an_agents_dialog_is_not_answered_by_automation() {
    let sb = Sandbox::new();
    let conf = approving_config(&sb);
    let perm = write(&sb, "perm.txt", CLAUDE_PERMISSION);
    let reader = write(&sb, "reader.py", READER);
    let got = sb.path().join("plain.got");
    let script = format!(
        "stty -icanon -echo; cat {}; exec python3 {} {}",
        perm.display(),
        reader.display(),
        got.display()
    );
    let _s = sb.start("plain", &["--config", &conf], &["sh", "-c", &script]);
    wait_past_the_dwell(&sb, "plain");
    assert!(
        !got.exists(),
        "the program was sent keys: {:?}",
        std::fs::read_to_string(&got)
    );
    let why = explain_json(&sb, "plain");
    assert_eq!(why["actions"], serde_json::json!([]), "{why}");
    assert!(why["automation"][0]["due_in_ms"].is_null(), "{why}");
    // The screen may name Claude; automation goes by what runs.
    let id = identity_row(&why);
    assert!(
        id["value"].as_str().is_some_and(|v| v.starts_with("none")),
        "{id}"
    );
    let text = stdout(&sb.cmd(&["explain", "plain"]));
    assert!(
        text.contains("agent.identity") && text.contains("automation answers no dialog here"),
        "{text}"
    );

    // The same screen from a program whose command is Claude's is answered:
    // the test would see an answer if one were given.
    let bin = sb.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let claude = bin.join("claude");
    let got = sb.path().join("cc.got");
    std::fs::write(
        &claude,
        format!(
            "#!/bin/sh\nstty -icanon -echo\ncat {}\nexec python3 {} {}\n",
            perm.display(),
            reader.display(),
            got.display()
        ),
    )
    .expect("write the stand-in");
    std::fs::set_permissions(&claude, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let _c = sb.start(
        "cc",
        &["--config", &conf],
        &[claude.to_str().expect("utf-8")],
    );
    // Named by its command once the reader runs; until the script execs
    // it, the script itself (named `claude`) may be what is in front.
    common::wait_until("Claude named by the session's command", || {
        let id = identity_row(&explain_json(&sb, "cc"));
        id["source"] == "command"
            && id["value"]
                .as_str()
                .is_some_and(|v| v.starts_with("claude"))
    });
    assert_eq!(keys_got(&got), "31", "Claude's approve key, 1");
}

fn keys_got(file: &Path) -> String {
    common::wait_until("the program to get keys", || file.exists());
    std::fs::read_to_string(file)
        .expect("read")
        .trim()
        .to_owned()
}

/// A record of a permission dialog, as Claude Code sends it.
const BLOCKED: &str = "\x1b]7501;state=blocked:app=claude-code:kind=permission:\
                       msg=YXBwcm92ZSBCYXNoOiBybSAtcmYgYnVpbGQ=\x07";

/// The same, as a Python bytes literal.
const BLOCKED_PY: &str = r#"b"\x1b]7501;state=blocked:app=claude-code:kind=permission:msg=YXBwcm92ZSBCYXNoOiBybSAtcmYgYnVpbGQ=\x07""#;

/// No record of session `id` counts: it does not wait, and no evidence
/// comes from the status protocol.
fn assert_untrusted(sb: &Sandbox, id: &str) {
    let v = sb.status_json(id);
    assert_ne!(v["primary"], "waiting", "a record nobody asked for: {v}");
    let why = explain_json(sb, id);
    let rows = why["evidence"].as_array().expect("evidence");
    assert!(
        rows.iter().all(|r| r["source"] != "status_protocol"),
        "{why}"
    );
}

#[test]
fn a_status_record_printed_after_its_asker_left_is_not_trusted() {
    let sb = Sandbox::new();
    let probe = write(&sb, "probe.py", PROBE);
    let record = write(&sb, "record.txt", BLOCKED);
    let gate = common::gate(&sb, "gate");
    // The prober asks, is answered and exits; then, in the same process
    // group, `cat` prints a record of a permission dialog.
    let script = format!(
        "python3 {}; cat {} >/dev/null; cat {}; echo; echo PRINTED; exec sleep 60",
        probe.display(),
        gate.display(),
        record.display()
    );
    let _s = sb.start("st", &["--classifier", "agent"], &["bash", "-c", &script]);
    let mut raw = Raw::connect(&sb.sock("st")).expect("connect");
    raw.send(ClientType::Subscribe as u8, &[]);
    raw.output_until(b"PROBE-ANSWERED");
    common::open_gate(&gate);
    raw.output_until(b"PRINTED");
    // The record was taken (or not) when it was read, before `PRINTED`.
    assert_untrusted(&sb, "st");
}

#[test]
fn a_status_record_printed_after_its_asker_ran_another_program_is_not_trusted() {
    let sb = Sandbox::new();
    let record = write(&sb, "record.txt", BLOCKED);
    let gate = common::gate(&sb, "gate");
    // The prober asks, is answered, and `exec`s a shell in its own
    // process (same pid, same start time) that prints a record of a
    // permission dialog: the program that was answered is gone.
    let then = format!(
        "cat {} >/dev/null; cat {}; echo; echo PRINTED; exec sleep 60",
        gate.display(),
        record.display()
    );
    let prober = write(
        &sb,
        "prober.py",
        &format!("{PROBE}\nos.execvp('sh', ['sh', '-c', {then:?}])\n"),
    );
    let _s = sb.start(
        "st",
        &["--classifier", "agent"],
        &["python3", prober.to_str().expect("utf-8")],
    );
    let mut raw = Raw::connect(&sb.sock("st")).expect("connect");
    raw.send(ClientType::Subscribe as u8, &[]);
    raw.output_until(b"PROBE-ANSWERED");
    common::open_gate(&gate);
    raw.output_until(b"PRINTED");
    assert_untrusted(&sb, "st");
}

#[test]
fn a_record_from_the_asker_still_in_front_counts_and_ends_with_it() {
    let sb = Sandbox::new();
    let gate = common::gate(&sb, "gate");
    // The asker itself sends the record, then exits; the shell that ran it
    // goes on in front of the terminal.
    let asker = write(
        &sb,
        "asker.py",
        &format!(
            "{PROBE}\nos.write(1, {})\nopen({:?}).read()\n",
            BLOCKED_PY,
            gate.display().to_string()
        ),
    );
    let script = format!(
        "python3 {}; echo ASKER-GONE; exec sleep 60",
        asker.display()
    );
    let _s = sb.start("st", &["--classifier", "agent"], &["bash", "-c", &script]);
    common::wait_until("the record to count", || {
        let v = sb.status_json("st");
        v["primary"] == "waiting" && v["signals"][0]["source"] == "status_protocol"
    });
    let mut raw = Raw::connect(&sb.sock("st")).expect("connect");
    raw.send(ClientType::Subscribe as u8, &[]);
    common::open_gate(&gate);
    raw.output_until(b"ASKER-GONE");
    common::wait_until("the record to end with its asker", || {
        sb.status_json("st")["primary"] != "waiting"
    });
}

/// Codex sends its records without probing first: a record naming the
/// agent the process in front is counts, while the same record from a
/// program that is no such agent does not.
#[test]
fn an_agents_record_sent_without_a_probe_counts_only_from_that_agent() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let bin = sb.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let gate = common::gate(&sb, "gate");
    // Prints Codex's record of a command to approve, then waits for the
    // gate, in its own process (a stand-in for Codex 0.169, which sends
    // `state=blocked:app=codex:kind=permission` unasked).
    let body = format!(
        "#!/usr/bin/env python3\nimport os\n\
         os.write(1, b\"\\x1b]7501;state=blocked:app=codex:kind=permission\\x1b\\\\\")\n\
         open({:?}).read()\n",
        gate.display().to_string()
    );
    for name in ["codex", "printer"] {
        let path = bin.join(name);
        std::fs::write(&path, &body).expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let _codex = sb.start(
        "codex",
        &["--classifier", "agent"],
        &[bin.join("codex").to_str().expect("utf-8")],
    );
    common::wait_until("Codex's own record to count", || {
        let v = sb.status_json("codex");
        v["primary"] == "waiting"
            && v["detail"] == "permission"
            && v["signals"][0]["source"] == "status_protocol"
    });
    let _printer = sb.start(
        "printer",
        &["--classifier", "agent"],
        &[bin.join("printer").to_str().expect("utf-8")],
    );
    let mut raw = Raw::connect(&sb.sock("printer")).expect("connect");
    raw.send(ClientType::Subscribe as u8, &[]);
    raw.output_until(b"7501");
    assert_untrusted(&sb, "printer");
    common::open_gate(&gate);
}
