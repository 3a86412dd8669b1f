//! `hm hook` end to end: a real supervisor, reports sent by the real `hm`
//! binary as an agent's hook would run it, and what `hm status` and
//! `hm explain` then say. The agents themselves are in `agents_live.rs`.

use crate::common;

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{HM, Sandbox, stderr, stdout, wait_until};

/// Runs `hm hook ARGS` with `stdin` as its payload and `socket` (if any)
/// as `HM_SOCKET`, as an agent would.
fn hook(args: &[&str], socket: Option<&std::path::Path>, stdin: &str) -> Output {
    let mut c = Command::new(HM);
    c.arg("hook")
        .args(args)
        .env_remove("HM_SOCKET")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(s) = socket {
        c.env("HM_SOCKET", s);
    }
    let mut child = c.spawn().expect("run hm hook");
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin.as_bytes()).expect("payload");
    drop(input);
    child.wait_with_output().expect("hm hook ends")
}

/// Exit 0 and not a byte on stdout or stderr: what an agent must see.
fn silent(out: &Output) {
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
}

fn status(sb: &Sandbox, id: &str) -> serde_json::Value {
    serde_json::from_slice(&sb.cmd(&["status", id, "--json"]).stdout).expect("json")
}

const PERMISSION: &str = r#"{"hook_event_name": "PermissionRequest", "tool_name": "Bash",
    "tool_input": {"command": "rm -rf build"}, "session_id": "s"}"#;
const STOP: &str = r#"{"hook_event_name": "Stop", "session_id": "s"}"#;

#[test]
fn a_report_makes_the_session_wait_and_the_next_one_ends_it() {
    let sb = Sandbox::new();
    let _s = sb.start("ag", &["--classifier", "agent"], &["sleep", "600"]);
    let sock = sb.sock("ag");
    silent(&hook(&["claude"], Some(&sock), PERMISSION));
    // The hook waits until the supervisor has taken the report.
    let v = status(&sb, "ag");
    assert_eq!(
        (v["primary"].as_str(), v["detail"].as_str()),
        (Some("waiting"), Some("permission")),
        "{v}"
    );
    assert_eq!(v["signals"][0]["rule"], "hook.PermissionRequest", "{v}");
    let why = stdout(&sb.cmd(&["explain", "ag"]));
    assert!(
        why.contains("PermissionRequest Bash: rm -rf build"),
        "{why}"
    );
    silent(&hook(&["claude"], Some(&sock), STOP));
    let v = status(&sb, "ag");
    assert_eq!(
        (v["primary"].as_str(), v["detail"].as_str()),
        (Some("idle"), Some("finished")),
        "{v}"
    );
    // Codex's notify form: the payload as the last argument, and the
    // socket named on the command line (as `hm run` installs it).
    let sock_arg = sock.to_str().expect("utf-8");
    silent(&hook(&["claude"], Some(&sock), PERMISSION));
    let notify = r#"{"type": "agent-turn-complete", "last-assistant-message": "Done."}"#;
    silent(&hook(&["codex", "--socket", sock_arg, notify], None, ""));
    let v = status(&sb, "ag");
    assert_eq!(v["signals"][0]["rule"], "hook.agent-turn-complete", "{v}");
}

#[test]
fn hooks_can_be_switched_off() {
    let sb = Sandbox::new();
    let dir = sb.path().join("config/heimdall");
    std::fs::create_dir_all(&dir).expect("config dir");
    std::fs::write(
        dir.join("heimdall.toml"),
        "[classifier.agent]\nhooks = false\n",
    )
    .expect("config");
    let _s = sb.start("off", &[], &["sleep", "600"]);
    silent(&hook(&["claude"], Some(&sb.sock("off")), PERMISSION));
    let v = status(&sb, "off");
    assert_ne!(v["primary"], "waiting", "{v}");
}

#[test]
fn outside_a_session_or_on_bad_input_a_hook_does_nothing_quietly() {
    let sb = Sandbox::new();
    // No session at all.
    silent(&hook(&["claude"], None, PERMISSION));
    // A session that is gone.
    silent(&hook(
        &["claude"],
        Some(&sb.path().join("gone.sock")),
        PERMISSION,
    ));
    // Arguments no form takes, and payloads that are not a hook's.
    let _s = sb.start("bad", &["--classifier", "agent"], &["sleep", "600"]);
    let sock = sb.sock("bad");
    silent(&hook(&[], Some(&sock), PERMISSION));
    silent(&hook(&["claude", "--socket"], None, PERMISSION));
    silent(&hook(&["claude"], Some(&sock), "not json {"));
    silent(&hook(&["claude"], Some(&sock), &"[".repeat(100_000)));
    silent(&hook(&["claude"], Some(&sock), r#"{"no_event": 1}"#));
    silent(&hook(&["gemini", "--then"], Some(&sock), ""));
    let v = status(&sb, "bad");
    assert_ne!(v["primary"], "waiting", "{v}");
    // The session took no harm.
    silent(&hook(&["claude"], Some(&sock), PERMISSION));
    assert_eq!(status(&sb, "bad")["primary"], "waiting");
}

#[test]
fn a_payload_that_never_ends_does_not_hold_the_agent() {
    let sb = Sandbox::new();
    let _s = sb.start("slow", &["--classifier", "agent"], &["sleep", "600"]);
    let mut child = Command::new(HM)
        .args(["hook", "claude"])
        .env("HM_SOCKET", sb.sock("slow"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run hm hook");
    // The writer keeps stdin open and says nothing.
    let _stdin = child.stdin.take();
    let started = Instant::now();
    wait_until("the hook to give up", || {
        child.try_wait().expect("try_wait").is_some()
    });
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(child.wait().expect("status").code(), Some(0));
}

#[test]
fn setup_prints_each_agents_snippet() {
    let sb = Sandbox::new();
    let setup = |agent: &str| {
        sb.hm()
            .args(["setup", agent])
            .output()
            .expect("run hm setup")
    };
    let claude = stdout(&setup("claude"));
    let json_start = claude.find('{').expect("json");
    let v: serde_json::Value = serde_json::from_str(&claude[json_start..]).expect("valid json");
    let cmd = v["hooks"]["PermissionRequest"][0]["hooks"][0]["command"]
        .as_str()
        .expect("a command");
    assert!(cmd.ends_with(" hook claude"), "{cmd}");
    let codex = stdout(&setup("codex"));
    assert!(codex.contains("notify = [\""), "{codex}");
    let gemini = stdout(&setup("gemini"));
    assert!(gemini.contains("\"AfterAgent\""), "{gemini}");
    // Only root with a root-owned socket dir gets Gemini's hooks from `hm
    // run`; the sandbox's socket dir is under /tmp, so the snippet says
    // so, and why, rather than promising them.
    assert!(
        gemini.starts_with("# hm cannot give Gemini CLI its hooks by itself here: "),
        "{gemini}"
    );
    assert!(!gemini.contains("by itself here (hm run"), "{gemini}");
    let bad = setup("vim");
    assert!(!bad.status.success());
}

/// Claude Code prints, as it exits, the command that resumes its
/// conversation: `claude --settings <socket dir>/ID.hooks.json ... --resume
/// ID`. The settings file stays while the session's record does, so that
/// command works; `hm rm` takes it with the record.
#[test]
fn the_hook_settings_a_claude_session_was_started_with_outlive_it_until_forgotten() {
    let sb = Sandbox::new();
    // A stand-in `claude` that prints its arguments, as the real one
    // prints its resume command, and exits.
    let claude = sb.program("claude", "#!/bin/sh\necho \"claude $*\"\nexit 0\n");
    let claude = claude.to_str().expect("utf-8");
    let mut s = sb.spawn(
        "cc",
        &["--classifier", "agent"],
        &[claude, "--resume", "abc"],
    );
    assert_eq!(s.wait_exit(), 0);
    let settings = sb.sock_dir.join("cc.hooks.json");
    let said = stdout(&sb.cmd(&["logs", "cc"]));
    assert!(
        said.contains(&format!("--settings {}", settings.display())),
        "{said}"
    );
    let text = std::fs::read_to_string(&settings).expect("the settings outlive the session");
    assert!(text.contains("hook claude"), "{text}");
    let out = sb.cmd(&["rm", "cc"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!settings.exists(), "forgotten with the record");
}

/// Gemini CLI started where hm cannot give it its hooks, and with none in
/// its settings, will never tell hm its conversation: `hm run` says so as
/// it starts it, not `hm restore` after a crash. Once `hm setup gemini`'s
/// hooks are in the user's settings, nothing is said.
#[test]
fn gemini_without_hooks_is_said_to_be_unresumable_as_it_starts() {
    let sb = Sandbox::new();
    if heimdall::agent_hooks::gemini_automatic(&sb.sock_dir).is_ok() {
        println!("skipped: hm gives Gemini CLI its hooks itself with this socket dir");
        return;
    }
    let _reaper = common::Reaper(sb.sock_dir.clone());
    let gemini = sb.program("gemini", "#!/bin/sh\nexec sleep 600\n");
    let gemini = gemini.to_str().expect("utf-8");
    let run = |id: &str, program: &str| {
        let out = sb
            .hm()
            .args([
                "run",
                "--bg",
                "--socket-dir",
                sb.dir(),
                "--id",
                id,
                "--",
                program,
            ])
            .output()
            .expect("hm run");
        assert!(out.status.success(), "{}", stderr(&out));
        stderr(&out)
    };
    let said = run("g1", gemini);
    assert!(
        said.contains("hm: note: Gemini CLI has no hm hooks here, so it cannot be resumed after a crash or a reboot ('hm setup gemini' prints them)"),
        "{said}"
    );
    let other = sb.program("notgemini", "#!/bin/sh\nexec sleep 600\n");
    assert!(!run("o1", other.to_str().expect("utf-8")).contains("note"));
    // The hooks `hm setup gemini` prints, in the user's settings.
    let snippet = stdout(&sb.hm().args(["setup", "gemini"]).output().expect("setup"));
    let json = &snippet[snippet.find('{').expect("json")..];
    std::fs::create_dir_all(sb.path().join(".gemini")).expect("mkdir");
    std::fs::write(sb.path().join(".gemini/settings.json"), json).expect("settings");
    assert!(!run("g2", gemini).contains("note"));
    let listed = stdout(&sb.cmd(&["ls"]));
    assert_eq!(listed.lines().count(), 4, "{listed}");
}
