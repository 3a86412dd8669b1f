//! The real agent CLIs from npm (Claude Code 2.1.330, Codex CLI 0.169.0,
//! Gemini CLI 0.61.0) under `hm run`, offline against the corpus's mock
//! API (`tests/corpus/tools/mock_llm.py`): hm answers Claude Code's
//! status-protocol probe, and `hm status` follows each CLI to its dialog
//! (permission, question, plan approval; Codex's command approval) within
//! 1 s of the dialog being drawn, to `active` within 1 s of the answer, and
//! to `idle` at the end of the turn. `hm approve`, `hm deny` and an
//! `[[automation]]` entry answer their dialogs with the keys the rules
//! give, and the CLIs do what the answer says. After a simulated reboot,
//! `hm restore` brings each CLI back as the same conversation, by the id
//! its hooks reported: the next prompt goes to the API with the earlier
//! turn.
//!
//! The CLIs are looked for in `$HM_AGENT_CACHE` (default
//! `~/.cache/hm-agents`, where `.ci/run` installs them) and installed there
//! with npm when missing; without node, npm or python3 a test says why and
//! skips.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Sandbox, stderr, stdout};

pub(crate) const CLAUDE_VERSION: &str = "2.1.330";
const CODEX_VERSION: &str = "0.169.0";
const GEMINI_VERSION: &str = "0.61.0";
const API_KEY: &str = "sk-ant-mock-0123456789abcdefghij";

fn cache_dir(sub: &str) -> PathBuf {
    std::env::var_os("HM_AGENT_CACHE")
        .map_or_else(
            || {
                let home = std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into());
                Path::new(&home).join(".cache/hm-agents")
            },
            PathBuf::from,
        )
        .join(sub)
}

fn works(cmd: &mut Command) -> bool {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// An agent CLI from npm, installed into the cache if need be: the path
/// of its binary, or why there is none.
fn install(package: &str, version: &str, sub: &str, bin: &str) -> Result<PathBuf, String> {
    let missing: Vec<&str> = ["python3", "node", "npm"]
        .into_iter()
        .filter(|t| !works(Command::new(t).arg("--version")))
        .collect();
    if !missing.is_empty() {
        return Err(format!("{} not installed", missing.join(", ")));
    }
    let dir = cache_dir(sub);
    let bin = dir.join(bin);
    let right_version = |bin: &Path| {
        Command::new(bin)
            .arg("--version")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(version))
    };
    if right_version(&bin) {
        return Ok(bin);
    }
    let pkg = format!("{package}@{version}");
    let out = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(&dir)
        .arg(&pkg)
        .output()
        .map_err(|e| format!("cannot run npm: {e}"))?;
    if !out.status.success() || !right_version(&bin) {
        return Err(format!(
            "npm could not install {pkg}: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ));
    }
    Ok(bin)
}

pub(crate) fn claude() -> Result<PathBuf, String> {
    install(
        "@anthropic-ai/claude-code",
        CLAUDE_VERSION,
        "",
        "node_modules/@anthropic-ai/claude-code/bin/claude.exe",
    )
}

fn codex() -> Result<PathBuf, String> {
    install(
        "@openai/codex",
        CODEX_VERSION,
        "codex",
        "node_modules/.bin/codex",
    )
}

fn gemini() -> Result<PathBuf, String> {
    install(
        "@google/gemini-cli",
        GEMINI_VERSION,
        "gemini",
        "node_modules/.bin/gemini",
    )
}

/// The mock API, killed when dropped.
struct Mock(Child);

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the mock API on a port it chooses (two tests choosing free
/// ports themselves could choose the same one): the mock and its port.
fn start_mock(sb: &Sandbox, scenario: serde_json::Value) -> (Mock, u16) {
    let path = sb.path().join("scenario.json");
    std::fs::write(&path, scenario.to_string()).expect("write the scenario");
    let log = sb.path().join("mock.jsonl");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/tools/mock_llm.py");
    let child = Command::new("python3")
        .arg(script)
        .args(["--port", "0", "--scenario"])
        .arg(&path)
        .arg("--log")
        .arg(&log)
        // The requests' bodies too: what a resumed conversation sends.
        .arg("--dump-bodies")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the mock API");
    let mock = Mock(child);
    let port = std::cell::Cell::new(0u16);
    common::wait_until("the mock API to listen", || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let found = text.lines().find_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            (v["ev"] == "server_start").then(|| v["port"].as_u64())?
        });
        if let Some(p) = found.and_then(|p| u16::try_from(p).ok()) {
            port.set(p);
        }
        port.get() != 0
    });
    (mock, port.get())
}

/// A home in which Claude Code has been set up: no onboarding, the key
/// approved, the project trusted.
fn seed_home(sb: &Sandbox) -> (PathBuf, PathBuf) {
    let home = sb.path().join("home");
    let proj = sb.path().join("proj");
    std::fs::create_dir_all(home.join(".claude")).expect("home");
    std::fs::create_dir_all(&proj).expect("project");
    let config = serde_json::json!({
        "hasCompletedOnboarding": true,
        "lastOnboardingVersion": CLAUDE_VERSION,
        "theme": "dark",
        "numStartups": 3,
        "autoUpdates": false,
        "customApiKeyResponses": {"approved": [&API_KEY[API_KEY.len() - 20..]], "rejected": []},
        "projects": {proj.to_str().expect("utf-8"): {
            "hasTrustDialogAccepted": true, "allowedTools": [], "hasCompletedProjectOnboarding": true}},
    });
    std::fs::write(home.join(".claude.json"), config.to_string()).expect("seed");
    (home, proj)
}

pub(crate) fn status(sb: &Sandbox) -> serde_json::Value {
    let out = sb.cmd(&["status", "cc", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("json")
}

/// Polls `hm status` until `ok`, returning the answer and when it came.
pub(crate) fn until(
    sb: &Sandbox,
    what: &str,
    limit: Duration,
    ok: impl Fn(&serde_json::Value) -> bool,
) -> (serde_json::Value, Instant) {
    let deadline = Instant::now() + limit;
    loop {
        let v = status(sb);
        if ok(&v) {
            return (v, Instant::now());
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}; last: {v}\nscreen:\n{}",
            stdout(&sb.cmd(&["logs", "cc", "--screen"]))
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn on_screen(sb: &Sandbox, text: &str) -> bool {
    stdout(&sb.cmd(&["logs", "cc", "--screen"])).contains(text)
}

/// A session `cc` that `hm kill`s itself when dropped, and (for CLIs that
/// leave daemons behind, as Codex does) ends every process whose command
/// line names the sandbox.
pub(crate) struct Agent<'a> {
    sb: &'a Sandbox,
    mock: Mock,
}

impl Agent<'_> {
    /// Ends the mock API: the CLI finds nothing listening on its port.
    fn stop_api(&mut self) {
        let _ = self.mock.0.kill();
        let _ = self.mock.0.wait();
    }
}

impl Drop for Agent<'_> {
    fn drop(&mut self) {
        let _ = self.sb.cmd(&["kill", "cc", "--grace", "1"]);
        let mark = self.sb.path().to_string_lossy().into_owned();
        let me = std::process::id();
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            if pid == me {
                continue;
            }
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            if String::from_utf8_lossy(&cmdline).contains(&mark) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
    }
}

/// hm's config file in the sandbox.
fn config_file(sb: &Sandbox) -> PathBuf {
    sb.path().join("config/heimdall/heimdall.toml")
}

/// Starts `argv` (after `env -i` and `env`) as session `cc` under the
/// agent classifier in `proj`, with the mock API running `scenario`.
/// `prepare` gets the mock's port before the CLI starts (for a config
/// file that names it).
fn start<'a>(
    sb: &'a Sandbox,
    scenario: serde_json::Value,
    proj: &Path,
    env: &[String],
    argv: &[&str],
    prepare: impl FnOnce(u16),
) -> Agent<'a> {
    let (mock, port) = start_mock(sb, scenario);
    prepare(port);
    let env: Vec<String> = env
        .iter()
        .map(|e| e.replace("{port}", &port.to_string()))
        .collect();
    let out = sb
        .hm()
        .args(["run", "--bg", "--id", "cc"])
        // `--classifier` starts from the classifier's defaults: a test
        // with settings of its own chooses it in its config instead.
        .args(if config_file(sb).exists() {
            &[][..]
        } else {
            &["--classifier", "agent"][..]
        })
        .args([
            "--cols",
            "120",
            "--rows",
            "40",
            "--socket-dir",
            sb.dir(),
            "--workdir",
        ])
        .arg(proj)
        .args([
            "--",
            "env",
            "-i",
            "PATH=/usr/local/bin:/usr/bin:/bin",
            "SHELL=/bin/bash",
        ])
        .args([
            "TERM=xterm-256color",
            "LANG=C.UTF-8",
            "LC_ALL=C.UTF-8",
            "USER=dev",
        ])
        .args(&env)
        .args(argv)
        .output()
        .expect("run hm run --bg");
    assert!(out.status.success(), "{}", stderr(&out));
    Agent { sb, mock }
}

/// Claude Code in a seeded home, talking to the mock, ready at its prompt
/// with the status protocol on.
pub(crate) fn start_claude<'a>(
    sb: &'a Sandbox,
    cc: &Path,
    mode: &str,
    scenario: serde_json::Value,
) -> (Agent<'a>, PathBuf) {
    let (home, proj) = seed_home(sb);
    start_claude_in(sb, cc, mode, scenario, &home, &proj, true)
}

/// [`start_claude`] in a home already seeded, with or without the status
/// protocol (`[classifier.agent] status_protocol` in hm's config).
fn start_claude_in<'a>(
    sb: &'a Sandbox,
    cc: &Path,
    mode: &str,
    scenario: serde_json::Value,
    home: &Path,
    proj: &Path,
    status_protocol: bool,
) -> (Agent<'a>, PathBuf) {
    if !status_protocol {
        let file = config_file(sb);
        std::fs::create_dir_all(file.parent().expect("a dir")).expect("config dir");
        std::fs::write(file, "[classifier.agent]\nstatus_protocol = false\n").expect("config");
    }
    let env = [
        format!("HOME={}", home.display()),
        "ANTHROPIC_BASE_URL=http://127.0.0.1:{port}".to_owned(),
        format!("ANTHROPIC_API_KEY={API_KEY}"),
        "DISABLE_TELEMETRY=1".to_owned(),
        "DISABLE_AUTOUPDATER=1".to_owned(),
        "DISABLE_ERROR_REPORTING=1".to_owned(),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1".to_owned(),
    ];
    let cc = cc.to_str().expect("utf-8 path");
    let agent = start(
        sb,
        scenario,
        proj,
        &env,
        &[cc, "--permission-mode", mode],
        |_| {},
    );
    if status_protocol {
        // hm answered the probe: the CLI reports its own state.
        until(
            sb,
            "the status protocol's idle record",
            Duration::from_secs(30),
            |v| {
                v["signals"]
                    .as_array()
                    .is_some_and(|s| s.iter().any(|s| s["rule"] == "status.idle"))
            },
        );
    } else {
        until(
            sb,
            "Claude Code at its prompt",
            Duration::from_secs(30),
            |v| v["primary"] == "idle",
        );
    }
    (agent, proj.to_path_buf())
}

/// Waits for `primary · detail` and for `dialog` on the screen, and checks
/// that the state came no later than 1 s after the dialog.
pub(crate) fn dialog_state(
    sb: &Sandbox,
    primary: &str,
    detail: &str,
    dialog: &str,
) -> serde_json::Value {
    let (v, at) = until(
        sb,
        &format!("{primary} · {detail}"),
        Duration::from_secs(30),
        |v| v["primary"] == primary && v["detail"] == detail,
    );
    let by = Instant::now() + Duration::from_secs(5);
    while !on_screen(sb, dialog) {
        assert!(Instant::now() < by, "{dialog:?} never showed");
        std::thread::sleep(Duration::from_millis(20));
    }
    let shown = Instant::now();
    assert!(
        at <= shown + Duration::from_secs(1),
        "{primary} came {:?} after the dialog",
        at - shown
    );
    v
}

/// Presses `keys`, and checks the session is active within 1 s and idle
/// again when the turn ends. A dialog that has just been drawn may not
/// take keys yet (Claude Code's plan approval ignores them for a moment):
/// keys not taken within 1 s are pressed again, a few times.
fn answer_then_active_then_idle(sb: &Sandbox, keys: &[&str]) -> serde_json::Value {
    let mut args = vec!["send", "cc", "--keys"];
    args.extend(keys);
    let mut tries = 0;
    loop {
        tries += 1;
        let sent = sb.cmd(&args);
        assert!(sent.status.success(), "{}", stderr(&sent));
        let pressed = Instant::now();
        let taken = loop {
            if status(sb)["primary"] == "active" {
                break true;
            }
            if pressed.elapsed() > Duration::from_secs(1) {
                break false;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        if taken {
            break;
        }
        assert!(
            tries < 5,
            "not active within 1 s of the answer, {tries} times; screen:\n{}",
            stdout(&sb.cmd(&["logs", "cc", "--screen"]))
        );
    }
    until(
        sb,
        "idle at the end of the turn",
        Duration::from_secs(60),
        |v| v["primary"] == "idle",
    )
    .0
}

pub(crate) fn type_prompt(sb: &Sandbox, ready: &str, prompt: &str) {
    common::wait_until("the prompt", || on_screen(sb, ready));
    let sent = sb.cmd(&["send", "cc", prompt, "--enter"]);
    assert!(sent.status.success(), "{}", stderr(&sent));
}

/// Presses Enter until the CLI sends the typed prompt: the mock gets the
/// turn's request (one with a `seq`).
fn submit_until_asked(sb: &Sandbox) {
    let log = sb.path().join("mock.jsonl");
    let asked = || {
        std::fs::read_to_string(&log).is_ok_and(|l| {
            l.lines()
                .any(|r| r.contains("\"ev\": \"req\"") && r.contains("\"seq\""))
        })
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while !asked() {
        assert!(Instant::now() < deadline, "the CLI never took the prompt");
        let _ = sb.cmd(&["send", "cc", "--keys", "Enter"]);
        let taken = Instant::now() + Duration::from_millis(700);
        while Instant::now() < taken && !asked() {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

macro_rules! or_skip {
    ($found:expr, $what:expr) => {
        match $found {
            Ok(bin) => bin,
            Err(why) => {
                println!("skipped: {} is not available: {why}", $what);
                return;
            }
        }
    };
}

#[test]
fn claude_code_reports_its_permission_dialog_through_the_status_protocol() {
    let cc = or_skip!(claude(), format!("Claude Code {CLAUDE_VERSION}"));
    let sb = Sandbox::new();
    // A Bash tool call that writes (read-only commands run without asking),
    // then a short answer.
    let scenario = serde_json::json!({"turns": [
        {"kind": "tool", "text": "I'll run the loop for you.", "pre_delay": 0.5, "chunk_delay": 0.05,
         "tool": {"name": "Bash", "input": {
            "command": "for i in 1 2 3; do echo step $i >> steps.txt; done",
            "description": "Write three steps to steps.txt"}}},
        {"kind": "text", "text": "The loop wrote three steps.", "pre_delay": 0.5, "chunk_delay": 0.05}
    ]});
    let (_agent, proj) = start_claude(&sb, &cc, "default", scenario);
    type_prompt(&sb, "? for shortcuts", "run the loop that writes steps.txt");
    // waiting · permission, first on the program's own word.
    let v = dialog_state(&sb, "waiting", "permission", "Do you want to proceed?");
    assert_eq!(v["signals"][0]["source"], "status_protocol", "{v}");
    let why = stdout(&sb.cmd(&["explain", "cc"]));
    assert!(why.contains("approve Bash: for i in 1 2 3"), "{why}");
    // "1. Yes" is selected.
    let v = answer_then_active_then_idle(&sb, &["Enter"]);
    assert!(
        matches!(v["detail"].as_str(), Some("finished" | "ready")),
        "{v}"
    );
    let steps = std::fs::read_to_string(proj.join("steps.txt")).unwrap_or_default();
    assert_eq!(
        steps, "step 1\nstep 2\nstep 3\n",
        "the approved command ran"
    );
}

/// Without the status protocol (as behind tmux), the hooks `hm run`
/// installs report the dialog before it is drawn, the user's own hooks
/// still run, and the state follows the approval, which fires no hook.
#[test]
fn claude_code_hooks_report_its_permission_dialog() {
    let cc = or_skip!(claude(), format!("Claude Code {CLAUDE_VERSION}"));
    let sb = Sandbox::new();
    let scenario = serde_json::json!({"turns": [
        {"kind": "tool", "text": "I'll run the loop for you.", "pre_delay": 0.5, "chunk_delay": 0.05,
         "tool": {"name": "Bash", "input": {
            "command": "for i in 1 2 3; do echo step $i >> steps.txt; done",
            "description": "Write three steps to steps.txt"}}},
        {"kind": "text", "text": "The loop wrote three steps.", "pre_delay": 0.5, "chunk_delay": 0.05}
    ]});
    let (home, proj) = seed_home(&sb);
    // The user's own hook, in their own settings.
    let mark = sb.path().join("user-stop-hook-ran");
    let user = serde_json::json!({"hooks": {"Stop": [{"matcher": "*", "hooks": [
        {"type": "command", "command": format!("touch {}", mark.display())}]}]}});
    std::fs::write(home.join(".claude/settings.json"), user.to_string()).expect("settings");
    let (_agent, proj) = start_claude_in(&sb, &cc, "default", scenario, &home, &proj, false);
    // The session start was reported.
    let why = stdout(&sb.cmd(&["explain", "cc"]));
    assert!(why.contains("hook.SessionStart"), "{why}");
    type_prompt(&sb, "? for shortcuts", "run the loop that writes steps.txt");
    dialog_state(&sb, "waiting", "permission", "Do you want to proceed?");
    // The report comes 10-100 ms before the dialog is drawn, from a hook
    // process the CLI starts; on a loaded machine it may come after, and
    // then decides from there.
    until(
        &sb,
        "the hook's report first among the signals",
        Duration::from_secs(5),
        |v| v["signals"][0]["rule"] == "hook.PermissionRequest",
    );
    let why = stdout(&sb.cmd(&["explain", "cc"]));
    assert!(
        why.contains("PermissionRequest Bash: for i in 1 2 3"),
        "{why}"
    );
    let v = answer_then_active_then_idle(&sb, &["Enter"]);
    assert_eq!(v["detail"], "finished", "{v}");
    let steps = std::fs::read_to_string(proj.join("steps.txt")).unwrap_or_default();
    assert_eq!(
        steps, "step 1\nstep 2\nstep 3\n",
        "the approved command ran"
    );
    common::wait_until("the user's own Stop hook", || mark.exists());
}

/// After a reboot, `hm restore` brings Claude Code back as the same
/// conversation: `--resume` with the id its `SessionStart` hook reported,
/// the earlier exchange on its screen, and the next prompt sent to the API
/// with the earlier turns.
#[test]
fn claude_code_comes_back_as_the_same_conversation_after_a_reboot() {
    let cc = or_skip!(claude(), format!("Claude Code {CLAUDE_VERSION}"));
    let sb = Sandbox::new();
    let scenario = serde_json::json!({"turns": [
        {"kind": "text", "text": "Noted: the word is zebra.", "pre_delay": 0.2, "chunk_delay": 0.02},
        {"kind": "text", "text": "You told me zebra.", "pre_delay": 0.2, "chunk_delay": 0.02}
    ]});
    let (home, proj) = seed_home(&sb);
    let (_agent, _) = start_claude_in(&sb, &cc, "default", scenario, &home, &proj, false);
    type_prompt(&sb, "? for shortcuts", "remember the word zebra");
    common::wait_until("the answer", || on_screen(&sb, "Noted: the word is zebra."));
    let manifest = sb.sessions_state().join("cc.json");
    let id = std::cell::RefCell::new(String::new());
    common::wait_until("the conversation id to be kept", || {
        let m: serde_json::Value = std::fs::read(&manifest)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        *id.borrow_mut() = m["agent"]["id"].as_str().unwrap_or("").to_owned();
        !id.borrow().is_empty()
    });
    let id = id.into_inner();
    // Claude Code keeps the conversation in its transcript: the reboot
    // comes once the answer is there (what it had not written, it cannot
    // resume).
    let transcript = || {
        let projects = home.join(".claude/projects");
        std::fs::read_dir(projects)
            .into_iter()
            .flatten()
            .flatten()
            .map(|d| d.path().join(format!("{id}.jsonl")))
            .find_map(|f| std::fs::read_to_string(f).ok())
            .unwrap_or_default()
    };
    common::wait_until("the answer in the transcript", || {
        transcript().contains("Noted: the word is zebra.")
    });

    crate::restore::reboot(&sb);
    let out = sb.cmd(&["restore"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains(&format!("claude conversation {id} resumed")),
        "{}",
        stdout(&out)
    );
    // The new process shows the conversation it resumed (its screen is
    // its own: the old output is history).
    common::wait_until("the resumed conversation on screen", || {
        on_screen(&sb, "remember the word zebra") && on_screen(&sb, "Noted: the word is zebra.")
    });
    type_prompt(&sb, "? for shortcuts", "which word was it?");
    common::wait_until("the answer to the next prompt", || {
        on_screen(&sb, "You told me zebra.")
    });
    // Sent with the earlier turns: the same conversation, not a new one.
    let log = std::fs::read_to_string(sb.path().join("mock.jsonl")).unwrap_or_default();
    let asked = log
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["ev"] == "req" && v["ntools"].as_u64().is_some_and(|n| n > 0))
        .map(|v| v["body"]["messages"].to_string())
        .find(|m| m.contains("which word was it?"))
        .expect("the second prompt's request");
    assert!(asked.contains("remember the word zebra"), "{asked}");
}

/// The mock's turns for one question, `Which greeting should hello.py
/// print?` (`1. Hello, world`, `2. Hi there`), then `Great, the casual
/// greeting.` once it is answered.
pub fn greeting_question() -> serde_json::Value {
    serde_json::json!({"turns": [
        {"kind": "tool", "text": "", "pre_delay": 0.5, "chunk_delay": 0.05,
         "tool": {"name": "AskUserQuestion", "input": {"questions": [{
            "question": "Which greeting should hello.py print?", "header": "Greeting",
            "multiSelect": false,
            "options": [{"label": "Hello, world", "description": "The classic greeting"},
                        {"label": "Hi there", "description": "A casual greeting"}]}]}}},
        {"kind": "text", "text": "Great, the casual greeting.", "pre_delay": 0.5, "chunk_delay": 0.05}
    ]})
}

#[test]
fn claude_code_asking_a_question_is_waiting_for_an_answer() {
    let cc = or_skip!(claude(), format!("Claude Code {CLAUDE_VERSION}"));
    let sb = Sandbox::new();
    let scenario = greeting_question();
    let (_agent, _proj) = start_claude(&sb, &cc, "default", scenario);
    type_prompt(
        &sb,
        "? for shortcuts",
        "change the greeting, ask me which one",
    );
    let v = dialog_state(
        &sb,
        "waiting",
        "question",
        "Which greeting should hello.py print?",
    );
    assert_eq!(v["signals"][0]["source"], "status_protocol", "{v}");
    // What it asks is the dialog's subject, as the inbox's row and `hm
    // status` show it (they said only `claude.question`).
    let mut last = serde_json::Value::Null;
    common::wait_until("the question as the dialog's subject", || {
        last = status(&sb);
        last["dialog"]["subject"] == "Which greeting should hello.py print?"
    });
    assert_eq!(last["dialog"]["rule"], "claude.question", "{last}");
    // Its choices, which `hm choose` picks by number.
    assert_eq!(last["dialog"]["options"][1]["label"], "Hi there", "{last}");
    let v = answer_until_taken(&sb, &["choose", "cc", "2"]);
    assert_eq!(v["action"]["keys"], serde_json::json!(["2"]), "{v}");
    until(&sb, "idle after the answer", Duration::from_secs(60), |v| {
        v["primary"] == "idle" && on_screen(&sb, "Great, the casual greeting.")
    });
    assert!(on_screen(&sb, "→ Hi there"), "the answer Claude Code took");
}

#[test]
fn claude_code_asking_to_approve_its_plan_is_waiting_for_plan_approval() {
    let cc = or_skip!(claude(), format!("Claude Code {CLAUDE_VERSION}"));
    let sb = Sandbox::new();
    let scenario = serde_json::json!({"turns": [
        {"kind": "tool", "text": "Writing the plan.", "pre_delay": 0.5, "chunk_delay": 0.05,
         "tool": {"name": "Write", "input": {"file_path": "{plan_file}",
            "content": "# Plan\n\n1. Print a friendlier greeting.\n2. Run it.\n"}}},
        {"kind": "tool", "text": "The plan is ready.", "pre_delay": 0.5, "chunk_delay": 0.05,
         "tool": {"name": "ExitPlanMode", "input": {}}},
        {"kind": "text", "text": "Plan approved; starting.", "pre_delay": 0.5, "chunk_delay": 0.05}
    ]});
    let (_agent, _proj) = start_claude(&sb, &cc, "plan", scenario);
    type_prompt(&sb, "plan mode on", "plan a friendlier greeting");
    let v = dialog_state(
        &sb,
        "waiting",
        "plan_approval",
        "Would you like to proceed?",
    );
    assert_eq!(v["signals"][0]["source"], "status_protocol", "{v}");
    // "1. Yes, and use auto mode" is selected; the turn after it calls no
    // tool, which auto mode could not check offline.
    answer_then_active_then_idle(&sb, &["Enter"]);
}

#[test]
fn codex_at_its_command_approval_is_waiting_for_permission() {
    let codex = or_skip!(codex(), format!("Codex CLI {CODEX_VERSION}"));
    let sb = Sandbox::new();
    let home = sb.path().join("home");
    let proj = sb.path().join("proj");
    std::fs::create_dir_all(home.join(".codex")).expect("home");
    std::fs::create_dir_all(&proj).expect("project");
    assert!(
        works(Command::new("git").args(["init", "-q"]).arg(&proj)),
        "git init"
    );
    let scenario = serde_json::json!({"turns": [
        {"kind": "tool", "pre_delay": 0.5, "tool": {"name": "exec_command", "input": {
            "cmd": "for i in 1 2 3; do echo step $i; done",
            "sandbox_permissions": "require_escalated",
            "justification": "Run the loop outside the sandbox?"}}},
        {"kind": "text", "text": "The loop printed three steps.", "pre_delay": 0.5, "chunk_delay": 0.05}
    ]});
    // The user's own notify program, which hm's must not replace.
    let mark = sb.path().join("user-notify");
    let notify = format!(
        "notify = [\"sh\", \"-c\", \"printf %s \\\"$1\\\" > {}\", \"notify\"]\n",
        mark.display()
    );
    // The config is written once the port is known: `start` fills it in.
    let config = notify
        + &format!(
            "model = \"gpt-5-codex\"\nmodel_provider = \"mock\"\ncheck_for_update_on_startup = false\n\
         [model_providers.mock]\nname = \"Mock\"\nbase_url = \"http://127.0.0.1:{{port}}/v1\"\n\
         wire_api = \"responses\"\nenv_key = \"MOCK_API_KEY\"\nrequest_max_retries = 2\n\
         stream_max_retries = 1\n[analytics]\nenabled = false\n\
         [projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            proj.display()
        );
    let env = [
        format!("HOME={}", home.display()),
        format!("CODEX_HOME={}", home.join(".codex").display()),
        "MOCK_API_KEY=mock-key".to_owned(),
        "COLORTERM=truecolor".to_owned(),
        "RUST_LOG=error".to_owned(),
    ];
    let codex = codex.to_str().expect("utf-8 path");
    let _agent = start(&sb, scenario, &proj, &env, &[codex], |port| {
        std::fs::write(
            home.join(".codex/config.toml"),
            config.replace("{port}", &port.to_string()),
        )
        .expect("codex config");
    });
    until(&sb, "Codex at its prompt", Duration::from_secs(30), |v| {
        v["primary"] == "idle"
    });
    common::wait_until("the composer", || on_screen(&sb, "›"));
    // Codex takes text followed at once by Enter as a paste (the Enter
    // becomes a newline): `--enter` sends it apart, and one is enough.
    let sent = sb.cmd(&["send", "cc", "run the loop", "--enter"]);
    assert!(sent.status.success(), "{}", stderr(&sent));
    let log = sb.path().join("mock.jsonl");
    common::wait_until("Codex to send the prompt", || {
        std::fs::read_to_string(&log).is_ok_and(|l| {
            l.lines()
                .any(|r| r.contains("\"ev\": \"req\"") && r.contains("\"seq\""))
        })
    });
    // Codex says it waits (its status record) about 0.4 s before it
    // draws the dialog: a wait returns with the dialog a script reads next.
    let waited = sb.cmd(&[
        "wait",
        "cc",
        "--state",
        "waiting",
        "--json",
        "--timeout",
        "30",
    ]);
    assert!(waited.status.success(), "{}", stderr(&waited));
    let v: serde_json::Value = serde_json::from_slice(&waited.stdout).expect("json");
    assert!(
        v["dialog"]["subject"]
            .as_str()
            .is_some_and(|s| s.contains("echo step")),
        "{v}"
    );
    dialog_state(
        &sb,
        "waiting",
        "permission",
        "Would you like to run the following command?",
    );
    answer_then_active_then_idle(&sb, &["y"]);
    assert!(on_screen(&sb, "The loop printed three steps."));
    // The turn's end came through the notify program hm installed, and
    // the user's own ran too, with the payload.
    common::wait_until("the turn's end reported", || {
        stdout(&sb.cmd(&["explain", "cc"])).contains("hook.agent-turn-complete")
    });
    common::wait_until("the user's own notify program", || {
        std::fs::read_to_string(&mark).is_ok_and(|t| t.contains("agent-turn-complete"))
    });
}

/// After a reboot, `hm restore` brings Codex back as the same thread:
/// `codex resume` with the `thread-id` its notify program reported at the
/// end of a turn, and the next prompt sent with the earlier turn.
#[test]
fn codex_comes_back_as_the_same_thread_after_a_reboot() {
    let codex = or_skip!(codex(), format!("Codex CLI {CODEX_VERSION}"));
    let sb = Sandbox::new();
    let home = sb.path().join("home");
    let proj = sb.path().join("proj");
    std::fs::create_dir_all(home.join(".codex")).expect("home");
    std::fs::create_dir_all(&proj).expect("project");
    assert!(
        works(Command::new("git").args(["init", "-q"]).arg(&proj)),
        "git init"
    );
    let scenario = serde_json::json!({"turns": [
        {"kind": "text", "text": "Noted: the word is zebra.", "pre_delay": 0.3, "chunk_delay": 0.02},
        {"kind": "text", "text": "You told me zebra.", "pre_delay": 0.3, "chunk_delay": 0.02}
    ]});
    let config = format!(
        "model = \"gpt-5-codex\"\nmodel_provider = \"mock\"\ncheck_for_update_on_startup = false\n\
         [model_providers.mock]\nname = \"Mock\"\nbase_url = \"http://127.0.0.1:{{port}}/v1\"\n\
         wire_api = \"responses\"\nenv_key = \"MOCK_API_KEY\"\nrequest_max_retries = 2\n\
         stream_max_retries = 1\n[analytics]\nenabled = false\n\
         [projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        proj.display()
    );
    let env = [
        format!("HOME={}", home.display()),
        format!("CODEX_HOME={}", home.join(".codex").display()),
        "MOCK_API_KEY=mock-key".to_owned(),
        "COLORTERM=truecolor".to_owned(),
        "RUST_LOG=error".to_owned(),
    ];
    let codex = codex.to_str().expect("utf-8 path");
    let _agent = start(&sb, scenario, &proj, &env, &[codex], |port| {
        std::fs::write(
            home.join(".codex/config.toml"),
            config.replace("{port}", &port.to_string()),
        )
        .expect("codex config");
    });
    // The mock's turns asked for so far.
    let turns = || {
        std::fs::read_to_string(sb.path().join("mock.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter(|r| r.contains("\"ev\": \"req\"") && r.contains("\"seq\""))
            .count()
    };
    // Types `text` and presses Enter until Codex sends it (see
    // `submit_until_asked`; here a turn more than before).
    let ask = |text: &str| {
        let before = turns();
        // Its empty composer: a resumed thread draws its old prompts with
        // `›` before the composer takes keys.
        common::wait_until("the composer", || {
            on_screen(&sb, "› Ask Codex to do anything")
        });
        let sent = sb.cmd(&["send", "cc", text]);
        assert!(sent.status.success(), "{}", stderr(&sent));
        let deadline = Instant::now() + common::PATIENCE;
        while !on_screen(&sb, &format!("› {text}")) {
            assert!(
                Instant::now() < deadline,
                "timed out waiting for the typed prompt; screen:\n{}",
                stdout(&sb.cmd(&["logs", "cc", "--screen"]))
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while turns() == before {
            assert!(
                Instant::now() < deadline,
                "Codex never took the prompt; screen:\n{}",
                stdout(&sb.cmd(&["logs", "cc", "--screen"]))
            );
            let _ = sb.cmd(&["send", "cc", "--keys", "Enter"]);
            let taken = Instant::now() + Duration::from_millis(700);
            while Instant::now() < taken && turns() == before {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    };
    until(&sb, "Codex at its prompt", Duration::from_secs(30), |v| {
        v["primary"] == "idle"
    });
    ask("remember the word zebra");
    common::wait_until("the answer", || on_screen(&sb, "Noted: the word is zebra."));
    let manifest = sb.sessions_state().join("cc.json");
    let id = std::cell::RefCell::new(String::new());
    common::wait_until("the thread id to be kept", || {
        let m: serde_json::Value = std::fs::read(&manifest)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        *id.borrow_mut() = m["agent"]["id"].as_str().unwrap_or("").to_owned();
        !id.borrow().is_empty() && m["agent"]["agent"] == "codex"
    });
    let id = id.into_inner();

    crate::restore::reboot(&sb);
    let out = sb.cmd(&["restore"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains(&format!("codex conversation {id} resumed")),
        "{}",
        stdout(&out)
    );
    ask("which word was it");
    common::wait_until("the answer to the next prompt", || {
        on_screen(&sb, "You told me zebra.")
    });
    let log = std::fs::read_to_string(sb.path().join("mock.jsonl")).unwrap_or_default();
    let asked = log
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["ev"] == "req" && v["ntools"].as_u64().is_some_and(|n| n > 0))
        .map(|v| v["body"].to_string())
        .find(|b| b.contains("which word was it"))
        .expect("the second prompt's request");
    assert!(
        asked.contains("remember the word zebra"),
        "the earlier turn went along"
    );
}

/// After a reboot, `hm restore` brings Gemini CLI back as the same
/// session: `gemini --resume` with the `session_id` its hooks reported.
#[test]
fn gemini_comes_back_as_the_same_session_after_a_reboot() {
    let gemini = or_skip!(gemini(), format!("Gemini CLI {GEMINI_VERSION}"));
    // Its hooks come through system settings under root-owned directories
    // only (see the test below).
    let sb = Sandbox::new_in(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let secure = sb.path().ancestors().all(|d| {
        use std::os::unix::fs::MetadataExt;
        d.as_os_str().is_empty()
            || std::fs::metadata(d).is_ok_and(|m| m.uid() == 0 && m.mode() & 0o022 == 0)
    });
    if !secure {
        println!(
            "skipped: Gemini CLI takes per-session hooks only from root-owned system settings, \
             and {} is not root-owned throughout",
            sb.path().display()
        );
        return;
    }
    let home = sb.path().join("home");
    let proj = sb.path().join("proj");
    std::fs::create_dir_all(home.join(".gemini")).expect("home");
    std::fs::create_dir_all(&proj).expect("project");
    let settings = serde_json::json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false},
    });
    std::fs::write(home.join(".gemini/settings.json"), settings.to_string()).expect("settings");
    let trusted = serde_json::json!({ proj.to_str().expect("utf-8"): "TRUST_FOLDER" });
    std::fs::write(
        home.join(".gemini/trustedFolders.json"),
        trusted.to_string(),
    )
    .expect("trust");
    let scenario = serde_json::json!({"turns": [
        {"kind": "text", "text": "Noted: the word is zebra.", "pre_delay": 0.3, "chunk_delay": 0.02},
        {"kind": "text", "text": "You told me zebra.", "pre_delay": 0.3, "chunk_delay": 0.02}
    ]});
    let env = [
        format!("HOME={}", home.display()),
        "GEMINI_API_KEY=mock-gemini-key".to_owned(),
        "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:{port}".to_owned(),
        "NO_BROWSER=1".to_owned(),
    ];
    let gemini = gemini.to_str().expect("utf-8 path");
    let _agent = start(&sb, scenario, &proj, &env, &[gemini], |_| {});
    let turns = || {
        std::fs::read_to_string(sb.path().join("mock.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter(|r| r.contains("\"ev\": \"req\"") && r.contains("\"seq\""))
            .count()
    };
    let ask = |text: &str| {
        let before = turns();
        common::wait_until("Gemini at its prompt", || {
            on_screen(&sb, "Type your message")
        });
        let sent = sb.cmd(&["send", "cc", text]);
        assert!(sent.status.success(), "{}", stderr(&sent));
        common::wait_until("the typed prompt", || on_screen(&sb, text));
        let deadline = Instant::now() + Duration::from_secs(10);
        while turns() == before {
            assert!(Instant::now() < deadline, "Gemini never took the prompt");
            let _ = sb.cmd(&["send", "cc", "--keys", "Enter"]);
            let taken = Instant::now() + Duration::from_millis(700);
            while Instant::now() < taken && turns() == before {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    };
    ask("remember the word zebra");
    common::wait_until("the answer", || on_screen(&sb, "Noted: the word is zebra."));
    let manifest = sb.sessions_state().join("cc.json");
    let id = std::cell::RefCell::new(String::new());
    common::wait_until("the session id to be kept", || {
        let m: serde_json::Value = std::fs::read(&manifest)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        *id.borrow_mut() = m["agent"]["id"].as_str().unwrap_or("").to_owned();
        !id.borrow().is_empty() && m["agent"]["agent"] == "gemini"
    });
    let id = id.into_inner();
    // Gemini keeps its chat under ~/.gemini/tmp: the reboot comes once the
    // answer is there.
    let saved = || {
        fn grep(dir: &Path, text: &str) -> bool {
            std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .any(|e| {
                    let p = e.path();
                    if p.is_dir() {
                        grep(&p, text)
                    } else {
                        std::fs::read_to_string(&p).is_ok_and(|t| t.contains(text))
                    }
                })
        }
        grep(&home.join(".gemini/tmp"), "Noted: the word is zebra.")
    };
    common::wait_until("the answer saved", saved);

    crate::restore::reboot(&sb);
    let out = sb.cmd(&["restore"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains(&format!("gemini conversation {id} resumed")),
        "{}",
        stdout(&out)
    );
    ask("which word was it");
    common::wait_until("the answer to the next prompt", || {
        on_screen(&sb, "You told me zebra.")
    });
    let log = std::fs::read_to_string(sb.path().join("mock.jsonl")).unwrap_or_default();
    let asked = log
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["ev"] == "req" && v["seq"].is_u64())
        .map(|v| v["body"].to_string())
        .find(|b| b.contains("which word was it"))
        .expect("the second prompt's request");
    assert!(
        asked.contains("remember the word zebra"),
        "the earlier turn went along"
    );
}

/// Gemini CLI reports through the hooks `hm run` adds to its system
/// settings: the edit approval (its `ToolPermission` notification) and
/// the end of its turn; the user's own hooks still run.
#[test]
fn gemini_hooks_report_its_edit_approval_and_its_turns() {
    let gemini = or_skip!(gemini(), format!("Gemini CLI {GEMINI_VERSION}"));
    // Gemini CLI reads the session's system settings only from a path
    // owned by root that nobody else may write to: not under /tmp.
    let sb = Sandbox::new_in(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let secure = sb.path().ancestors().all(|d| {
        use std::os::unix::fs::MetadataExt;
        d.as_os_str().is_empty()
            || std::fs::metadata(d).is_ok_and(|m| m.uid() == 0 && m.mode() & 0o022 == 0)
    });
    if !secure {
        println!(
            "skipped: Gemini CLI takes per-session hooks only from root-owned system settings, \
             and {} is not root-owned throughout",
            sb.path().display()
        );
        return;
    }
    let home = sb.path().join("home");
    let proj = sb.path().join("proj");
    std::fs::create_dir_all(home.join(".gemini")).expect("home");
    std::fs::create_dir_all(&proj).expect("project");
    std::fs::write(proj.join("hello.py"), "print(\"hello\")\n").expect("hello.py");
    let mark = sb.path().join("user-after-agent");
    let settings = serde_json::json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false},
        "hooks": {"AfterAgent": [{"matcher": "*", "hooks": [
            {"type": "command", "command": format!("touch {}", mark.display())}]}]},
    });
    std::fs::write(home.join(".gemini/settings.json"), settings.to_string()).expect("settings");
    let trusted = serde_json::json!({ proj.to_str().expect("utf-8"): "TRUST_FOLDER" });
    std::fs::write(
        home.join(".gemini/trustedFolders.json"),
        trusted.to_string(),
    )
    .expect("trust");
    let scenario = serde_json::json!({"turns": [
        {"kind": "tool", "text": "Updating the greeting.", "pre_delay": 0.5, "chunk_delay": 0.05,
         "tool": {"name": "replace", "input": {"file_path": proj.join("hello.py"),
            "instruction": "Use a friendlier greeting",
            "old_string": "print(\"hello\")", "new_string": "print(\"hello, world\")"}}},
        {"kind": "text", "text": "Updated hello.py to print hello, world.", "pre_delay": 0.5,
         "chunk_delay": 0.05}
    ]});
    let env = [
        format!("HOME={}", home.display()),
        "GEMINI_API_KEY=mock-gemini-key".to_owned(),
        "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:{port}".to_owned(),
        "NO_BROWSER=1".to_owned(),
    ];
    let gemini = gemini.to_str().expect("utf-8 path");
    let _agent = start(&sb, scenario, &proj, &env, &[gemini], |_| {});
    common::wait_until("Gemini at its prompt", || {
        on_screen(&sb, "Type your message")
    });
    common::wait_until("the session start reported", || {
        stdout(&sb.cmd(&["explain", "cc"])).contains("hook.SessionStart")
    });
    // Like Codex, Gemini takes text followed at once by Enter as a paste.
    let sent = sb.cmd(&["send", "cc", "make hello.py print hello, world"]);
    assert!(sent.status.success(), "{}", stderr(&sent));
    common::wait_until("the typed prompt", || on_screen(&sb, "print hello, world"));
    submit_until_asked(&sb);
    dialog_state(&sb, "waiting", "permission", "Apply this change?");
    common::wait_until("the approval reported", || {
        stdout(&sb.cmd(&["explain", "cc"])).contains("hook.Notification")
    });
    let v = answer_then_active_then_idle(&sb, &["Enter"]);
    assert_eq!(v["primary"], "idle", "{v}");
    common::wait_until("the turn's end reported", || {
        stdout(&sb.cmd(&["explain", "cc"])).contains("hook.AfterAgent")
    });
    common::wait_until("the user's own AfterAgent hook", || mark.exists());
    let hello = std::fs::read_to_string(proj.join("hello.py")).unwrap_or_default();
    assert_eq!(
        hello, "print(\"hello, world\")\n",
        "the approved edit was made"
    );
}

/// `hm approve`/`hm deny` with `args`; the answer's JSON. A dialog just
/// drawn may ignore keys for a moment (Claude Code's do): an answer not
/// taken within 1 s is given again, once the one before has sent all it
/// would (a later key waits to see the first taken, and gives up) and the
/// screen has been still for a second, so that no key of it is on its way.
fn answer_until_taken(sb: &Sandbox, args: &[&str]) -> serde_json::Value {
    let mut args = args.to_vec();
    args.push("--json");
    let screen = || stdout(&sb.cmd(&["logs", "cc", "--screen"]));
    let explain = || -> serde_json::Value {
        serde_json::from_str(&stdout(&sb.cmd(&["explain", "cc", "--json"]))).expect("json")
    };
    let settled = || {
        let v = explain();
        v["evidence"].as_array().is_some_and(|rows| {
            rows.iter().any(|r| {
                r["rule"] == "timing.screen_changed"
                    && r["value"]
                        .as_str()
                        .and_then(|t| t.strip_prefix("screen unchanged for "))
                        .and_then(|t| t.strip_suffix(" ms"))
                        .and_then(|ms| ms.parse::<u64>().ok())
                        .is_some_and(|ms| ms >= 1000)
            })
        })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut first = None;
    loop {
        assert!(
            Instant::now() < deadline,
            "the dialog never took the keys; screen:\n{}",
            screen()
        );
        let out = sb.cmd(&args);
        if !out.status.success() {
            let err = stderr(&out);
            assert!(
                err.contains("still answering"),
                "{err}\nscreen:\n{}",
                screen()
            );
            std::thread::sleep(Duration::from_millis(200));
            continue;
        }
        first.get_or_insert(serde_json::from_slice(&out.stdout).expect("json"));
        let pressed = Instant::now();
        while pressed.elapsed() < Duration::from_secs(1) {
            if status(sb)["primary"] != "waiting" {
                return first.expect("an answer");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let calm = Instant::now() + Duration::from_secs(15);
        while !settled() {
            if status(sb)["primary"] != "waiting" {
                return first.expect("an answer");
            }
            assert!(
                Instant::now() < calm,
                "the screen never settled:\n{}",
                screen()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

#[test]
fn hm_approve_answers_claude_codes_permission_dialog() {
    let cc = or_skip!(claude(), format!("Claude Code {CLAUDE_VERSION}"));
    let sb = Sandbox::new();
    let scenario = serde_json::json!({"turns": [
        {"kind": "tool", "text": "I'll run the loop for you.", "pre_delay": 0.5, "chunk_delay": 0.05,
         "tool": {"name": "Bash", "input": {
            "command": "for i in 1 2 3; do echo step $i >> steps.txt; done",
            "description": "Write three steps to steps.txt"}}},
        {"kind": "text", "text": "The loop wrote three steps.", "pre_delay": 0.5, "chunk_delay": 0.05}
    ]});
    let (_agent, proj) = start_claude(&sb, &cc, "default", scenario);
    type_prompt(&sb, "? for shortcuts", "run the loop that writes steps.txt");
    dialog_state(&sb, "waiting", "permission", "Do you want to proceed?");
    let v = answer_until_taken(&sb, &["approve", "cc", "--subject", "steps\\.txt"]);
    assert_eq!(v["action"]["rule"], "claude.permission", "{v}");
    assert_eq!(v["action"]["keys"], serde_json::json!(["1"]), "{v}");
    until(&sb, "idle after the turn", Duration::from_secs(60), |v| {
        v["primary"] == "idle"
    });
    let steps = std::fs::read_to_string(proj.join("steps.txt")).unwrap_or_default();
    assert_eq!(
        steps, "step 1\nstep 2\nstep 3\n",
        "the approved command ran"
    );
}

/// `hm approve --always` at Claude Code's edit approval takes its second
/// option (`Yes, and switch to accept edits ... for this session`): the
/// edit is made, and the session's next edit is made without asking.
#[test]
fn hm_approve_always_lets_claude_code_edit_again_without_asking() {
    let cc = or_skip!(claude(), format!("Claude Code {CLAUDE_VERSION}"));
    let sb = Sandbox::new();
    let proj = sb.path().join("proj");
    std::fs::create_dir_all(&proj).expect("project");
    let hello = proj.join("hello.py");
    std::fs::write(&hello, "print(\"hello\")\n").expect("hello.py");
    let edit = |old: &str, new: &str| {
        serde_json::json!({"kind": "tool", "text": "", "pre_delay": 0.5,
            "tool": {"name": "Edit", "input": {"file_path": hello.to_str().expect("utf-8"),
                "old_string": old, "new_string": new}}})
    };
    let scenario = serde_json::json!({"turns": [
        {"kind": "tool", "text": "Let me look at the file.", "pre_delay": 0.5,
         "tool": {"name": "Read", "input": {"file_path": hello.to_str().expect("utf-8")}}},
        edit("print(\"hello\")", "print(\"hello, world\")"),
        edit("print(\"hello, world\")", "print(\"hello, world!\")"),
        {"kind": "text", "text": "Both edits made.", "pre_delay": 0.5, "chunk_delay": 0.05}
    ]});
    let (_agent, _) = start_claude(&sb, &cc, "default", scenario);
    type_prompt(&sb, "? for shortcuts", "make hello.py print hello, world!");
    dialog_state(
        &sb,
        "waiting",
        "permission",
        "Do you want to make this edit",
    );
    let v = answer_until_taken(&sb, &["approve", "--always", "cc"]);
    assert_eq!(v["action"]["answer"], "always", "{v}");
    assert_eq!(v["action"]["keys"], serde_json::json!(["2"]), "{v}");
    // The second edit asks nothing: the turn ends with both made.
    until(&sb, "idle after both edits", Duration::from_secs(60), |v| {
        assert_ne!(v["primary"], "waiting", "asked again: {v}");
        v["primary"] == "idle" && on_screen(&sb, "Both edits made.")
    });
    let text = std::fs::read_to_string(&hello).unwrap_or_default();
    assert_eq!(text, "print(\"hello, world!\")\n", "both edits made");
}

/// Ctrl-Z in Claude Code leaves it `suspended`, waiting for a SIGCONT
/// that no shell above it would ever send (the kernel did not even stop
/// it): hm says `waiting · stopped`, and `hm continue` brings it back to
/// its prompt, which takes a prompt again.
#[test]
fn claude_code_stopped_by_ctrl_z_is_waiting_stopped_and_hm_continue_resumes_it() {
    let cc = or_skip!(claude(), format!("Claude Code {CLAUDE_VERSION}"));
    let sb = Sandbox::new();
    let scenario = serde_json::json!({"turns": [
        {"kind": "text", "text": "Back and answering.", "pre_delay": 0.3, "chunk_delay": 0.02}
    ]});
    let (_agent, _proj) = start_claude(&sb, &cc, "default", scenario);
    let before = status(&sb);
    assert!(
        sb.cmd(&["send", "cc", "--keys", "C-z"]).status.success(),
        "hm send"
    );
    let (v, _) = until(&sb, "waiting · stopped", Duration::from_secs(20), |v| {
        v["primary"] == "waiting" && v["detail"] == "stopped"
    });
    assert_eq!(v["agent"], before["agent"], "{v}");
    let shown = stdout(&sb.cmd(&["status", "cc"]));
    assert!(shown.contains("hm continue cc resumes it"), "{shown}");
    // Its suspended screen is no dialog to answer.
    assert!(!shown.contains("dialog:"), "{shown}");
    let out = sb.cmd(&["continue", "cc"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "continued 'cc'");
    until(&sb, "no longer stopped", Duration::from_secs(20), |v| {
        v["detail"] != "stopped"
    });
    // It reads its terminal again: a prompt typed now is answered.
    type_prompt(&sb, "? for shortcuts", "are you back");
    common::wait_until("the answer", || on_screen(&sb, "Back and answering."));
    let again = sb.cmd(&["continue", "cc"]);
    assert!(!again.status.success());
    assert!(stderr(&again).contains("not stopped"), "{}", stderr(&again));
}

/// With its API unreachable Claude Code retries, counting down on screen
/// (`Connection refused — … · retrying in 38s · attempt 7/10`) for minutes:
/// that is `active · retrying` from the first retry, not thinking.
#[test]
fn claude_code_retrying_an_unreachable_api_is_active_retrying() {
    let cc = or_skip!(claude(), format!("Claude Code {CLAUDE_VERSION}"));
    let sb = Sandbox::new();
    let scenario = serde_json::json!({"turns": [
        {"kind": "text", "text": "Never sent.", "pre_delay": 0.3, "chunk_delay": 0.02}
    ]});
    let (mut agent, _proj) = start_claude(&sb, &cc, "default", scenario);
    agent.stop_api();
    type_prompt(&sb, "? for shortcuts", "are you there");
    let (v, _) = until(&sb, "active · retrying", Duration::from_secs(60), |v| {
        v["detail"] == "retrying"
    });
    assert_eq!(v["primary"], "active", "{v}");
    let screen = stdout(&sb.cmd(&["logs", "cc", "--screen"]));
    assert!(screen.contains("etrying in"), "{screen}");
}

/// Nine sessions at 80x24 leave Claude Code a pane of five rows, which
/// its input box and status lines filled (an empty prompt between two
/// rules): the pane shows what it answered instead.
#[test]
fn a_small_pane_of_claude_code_shows_its_answer_not_its_input_box() {
    let cc = or_skip!(claude(), format!("Claude Code {CLAUDE_VERSION}"));
    let sb = Sandbox::new();
    let scenario = serde_json::json!({"turns": [
        {"kind": "text", "text": "Postgres is up on 5432.", "pre_delay": 0.3, "chunk_delay": 0.02}
    ]});
    let (_agent, _proj) = start_claude(&sb, &cc, "default", scenario);
    type_prompt(&sb, "? for shortcuts", "is postgres up");
    until(&sb, "idle after the answer", Duration::from_secs(30), |v| {
        v["primary"] == "idle" && on_screen(&sb, "Postgres is up")
    });
    in_a_small_pane(&sb, "Postgres is up");
}

/// A draft typed while Claude Code answers stays in its prompt when the
/// turn ends: `idle · prompt_editing`, and the turn is over all the same
/// (the signal the dashboard's `●` and `[[notify]]`'s `finished` go by:
/// the latter runs).
#[test]
fn claude_codes_turn_ending_with_a_draft_typed_ahead_is_over() {
    let cc = or_skip!(claude(), format!("Claude Code {CLAUDE_VERSION}"));
    let sb = Sandbox::new();
    let said = sb.path().join("notified");
    let file = config_file(&sb);
    std::fs::create_dir_all(file.parent().expect("a dir")).expect("config dir");
    let rule = format!(
        "[[notify]]\non = [\"finished\"]\ncommand = \"echo $HM_EVENT $HM_DETAIL >> {}\"\n",
        said.display()
    );
    std::fs::write(file, rule).expect("config");
    let scenario = serde_json::json!({"turns": [
        {"kind": "text", "text": "The build is green on every target we have.",
         "pre_delay": 2.5, "chunk_delay": 0.1}
    ]});
    let (_agent, _proj) = start_claude(&sb, &cc, "default", scenario);
    type_prompt(&sb, "? for shortcuts", "is the build green");
    until(&sb, "the turn", Duration::from_secs(30), |v| {
        v["primary"] == "active"
    });
    let sent = sb.cmd(&["send", "cc", "now the docs"]);
    assert!(sent.status.success(), "{}", stderr(&sent));
    // The draft shows in the box a moment after the answer ends.
    let (v, _) = until(&sb, "the turn's end", Duration::from_secs(60), |v| {
        v["primary"] == "idle" && v["detail"] == "prompt_editing" && on_screen(&sb, "every target")
    });
    let over = v["signals"]
        .as_array()
        .is_some_and(|s| s.iter().any(|s| s["rule"] == heimdall::detect::TURN_OVER));
    assert!(over, "{v}");
    common::wait_until("the notify command", || {
        std::fs::read_to_string(&said).is_ok_and(|s| s.contains("finished prompt_editing"))
    });
    // A script's text is not added to the draft unless forced.
    let refused = sb.cmd(&["send", "cc", "also lint"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("has a draft typed at its prompt ('now the docs')"),
        "{}",
        stderr(&refused)
    );
    assert!(!on_screen(&sb, "also lint"));
    let forced = sb.cmd(&["send", "cc", " also lint", "--force"]);
    assert!(forced.status.success(), "{}", stderr(&forced));
    common::wait_until("the forced text", || {
        on_screen(&sb, "now the docs also lint")
    });
    // Enter alone sends the draft: nothing is added to it.
    let sent = sb.cmd(&["send", "cc", "--enter"]);
    assert!(sent.status.success(), "{}", stderr(&sent));
}

/// `hm send --wait` types a prompt and returns once Claude Code's turn is
/// over, its answer on the screen by then; a turn that stops at a dialog
/// returns there, the dialog drawn.
#[test]
fn send_wait_returns_at_the_end_of_claude_codes_turn_or_at_its_dialog() {
    let cc = or_skip!(claude(), format!("Claude Code {CLAUDE_VERSION}"));
    let sb = Sandbox::new();
    let scenario = serde_json::json!({"turns": [
        {"kind": "text", "text": "The build is green on every target we have.",
         "pre_delay": 2.0, "chunk_delay": 0.1},
        {"kind": "tool", "text": "I'll run the loop for you.", "pre_delay": 0.5, "chunk_delay": 0.05,
         "tool": {"name": "Bash", "input": {
            "command": "for i in 1 2 3; do echo step $i >> steps.txt; done",
            "description": "Write three steps to steps.txt"}}}
    ]});
    let (_agent, _proj) = start_claude(&sb, &cc, "default", scenario);
    common::wait_until("the prompt", || on_screen(&sb, "? for shortcuts"));
    let send =
        |prompt: &str| sb.cmd(&["send", "cc", prompt, "--enter", "--wait", "--timeout", "60"]);
    let out = send("is the build green");
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(said.starts_with("cc: idle · "), "{said}");
    assert!(
        on_screen(&sb, "every target"),
        "{said}{}",
        stdout(&sb.cmd(&["logs", "cc", "--screen"]))
    );
    let out = send("run the loop that writes steps.txt");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "cc: waiting · permission\n");
    assert!(on_screen(&sb, "Do you want to proceed?"));
}

/// With eight more sessions, a dashboard at 80x24 shows `text` in the
/// five rows of session `cc`'s pane (skipped, saying so, without tmux).
fn in_a_small_pane(sb: &Sandbox, text: &str) {
    if !common::tmux::available() {
        println!("skipped the dashboard's check: tmux is not installed");
        return;
    }
    let _others: Vec<common::Session> = (1..=8)
        .map(|i| sb.start(&format!("s{i}"), &[], &["sleep", "300"]))
        .collect();
    let command = format!("{} tui --socket-dir {}", common::HM, sb.dir());
    let tmux = common::tmux::Tmux::start(sb, &command, (80, 24)).expect("tmux starts");
    common::wait_until("the answer in cc's pane", || {
        common::tmux::pane(&tmux.lines(), "cc").is_some_and(|p| p.shows(text))
    });
}

/// At 80 columns Claude Code breaks a word longer than its row at the
/// row's edge (`...-claude-must-bre` / `ak-inside-...`): the subject has the
/// word whole, and `hm approve --subject` matches across the break.
#[test]
fn a_command_claude_code_breaks_inside_a_word_is_one_subject_and_approved_by_it() {
    let cc = or_skip!(claude(), format!("Claude Code {CLAUDE_VERSION}"));
    let sb = Sandbox::new();
    let command = "echo this-is-a-command-with-a-very-long-hyphenated-word-that-claude-must-\
                   break-inside-itself-somewhere >> steps.txt && echo done";
    let scenario = serde_json::json!({"turns": [
        {"kind": "tool", "text": "I'll run it.", "pre_delay": 0.5, "chunk_delay": 0.05,
         "tool": {"name": "Bash", "input": {
            "command": command, "description": "Write a long word to steps.txt"}}},
        {"kind": "text", "text": "Done.", "pre_delay": 0.5, "chunk_delay": 0.05}
    ]});
    let (_agent, proj) = start_claude(&sb, &cc, "default", scenario);
    common::history::resize(&sb, "cc", 80, 40);
    type_prompt(&sb, "? for shortcuts", "run it");
    dialog_state(&sb, "waiting", "permission", "Do you want to proceed?");
    let screen = stdout(&sb.cmd(&["logs", "cc", "--screen"]));
    assert!(
        screen.contains("claude-must-bre\n"),
        "Claude Code no longer breaks the word at 80 columns:\n{screen}"
    );
    // The state can come from Claude Code's own word a moment before the
    // supervisor has read the dialog off its screen.
    let (v, _) = until(&sb, "the dialog's subject", Duration::from_secs(10), |v| {
        v["dialog"]["subject"].is_string()
    });
    assert_eq!(v["dialog"]["subject"], command, "{v}");
    let v = answer_until_taken(&sb, &["approve", "cc", "--subject", "must-break-inside"]);
    assert_eq!(v["action"]["keys"], serde_json::json!(["1"]), "{v}");
    until(&sb, "idle after the turn", Duration::from_secs(60), |v| {
        v["primary"] == "idle"
    });
    let steps = std::fs::read_to_string(proj.join("steps.txt")).unwrap_or_default();
    assert!(
        steps.contains("must-break-inside"),
        "the approved command ran: {steps:?}"
    );
}

#[test]
fn hm_approve_accepts_claude_codes_plan_keeping_edits_asked_for() {
    let cc = or_skip!(claude(), format!("Claude Code {CLAUDE_VERSION}"));
    let sb = Sandbox::new();
    let scenario = serde_json::json!({"turns": [
        {"kind": "tool", "text": "Writing the plan.", "pre_delay": 0.5, "chunk_delay": 0.05,
         "tool": {"name": "Write", "input": {"file_path": "{plan_file}",
            "content": "# Plan\n\n1. Print a friendlier greeting.\n2. Run it.\n"}}},
        {"kind": "tool", "text": "The plan is ready.", "pre_delay": 0.5, "chunk_delay": 0.05,
         "tool": {"name": "ExitPlanMode", "input": {}}},
        {"kind": "text", "text": "Plan approved; starting.", "pre_delay": 0.5, "chunk_delay": 0.05}
    ]});
    let (_agent, _proj) = start_claude(&sb, &cc, "plan", scenario);
    type_prompt(&sb, "plan mode on", "plan a friendlier greeting");
    dialog_state(
        &sb,
        "waiting",
        "plan_approval",
        "Would you like to proceed?",
    );
    let v = answer_until_taken(&sb, &["approve", "cc"]);
    assert_eq!(v["action"]["keys"], serde_json::json!(["2"]), "{v}");
    common::wait_until("the turn after the plan", || {
        on_screen(&sb, "Plan approved; starting.")
    });
    until(&sb, "idle after the turn", Duration::from_secs(60), |v| {
        v["primary"] == "idle"
    });
    let screen = stdout(&sb.cmd(&["logs", "cc", "--screen"]));
    // The second option: out of plan mode, and not into auto mode.
    assert!(!screen.contains("auto mode on"), "{screen}");
    assert!(!screen.contains("plan mode on"), "{screen}");
}

/// A command that makes a directory: 2.1.330's second option is `Yes,
/// and always allow access to <dir> from this project`, which `hm approve
/// --always` takes (it said the dialog had no such option).
#[test]
fn hm_approve_always_allows_claude_code_access_to_a_directory() {
    let cc = or_skip!(claude(), format!("Claude Code {CLAUDE_VERSION}"));
    let sb = Sandbox::new();
    let scenario = serde_json::json!({"turns": [
        {"kind": "tool", "text": "Making it.", "pre_delay": 0.3, "chunk_delay": 0.03,
         "tool": {"name": "Bash", "input": {"command": "mkdir -p sub/dir", "description": "make the dir"}}},
        {"kind": "text", "text": "Made it.", "pre_delay": 0.3, "chunk_delay": 0.03}
    ]});
    let (_agent, proj) = start_claude(&sb, &cc, "default", scenario);
    type_prompt(&sb, "? for shortcuts", "make the dir");
    dialog_state(&sb, "waiting", "permission", "always allow access to");
    let v = answer_until_taken(&sb, &["approve", "--always", "cc"]);
    assert_eq!(v["action"]["keys"], serde_json::json!(["2"]), "{v}");
    common::wait_until("the directory made", || proj.join("sub/dir").is_dir());
}

/// With no plan file, 2.1.330 asks `Exit plan mode?` with `1. Yes, and
/// switch to default (ask each time) for this session` and `2. No`:
/// `hm approve` takes the first (it was refused, naming a pattern).
#[test]
fn hm_approve_exits_claude_codes_plan_mode_without_a_plan_file() {
    let cc = or_skip!(claude(), format!("Claude Code {CLAUDE_VERSION}"));
    let sb = Sandbox::new();
    let scenario = serde_json::json!({"turns": [
        {"kind": "tool", "text": "The plan is ready.", "pre_delay": 0.5, "chunk_delay": 0.05,
         "tool": {"name": "ExitPlanMode", "input": {"plan": "# Plan\n\n1. Greet.\n"}}},
        {"kind": "text", "text": "Plan approved; starting.", "pre_delay": 0.5, "chunk_delay": 0.05}
    ]});
    let (_agent, _proj) = start_claude(&sb, &cc, "plan", scenario);
    type_prompt(&sb, "plan mode on", "plan a greeting");
    dialog_state(&sb, "waiting", "plan_approval", "Exit plan mode?");
    let v = answer_until_taken(&sb, &["approve", "cc"]);
    assert_eq!(v["action"]["keys"], serde_json::json!(["1"]), "{v}");
    common::wait_until("the turn after the plan", || {
        on_screen(&sb, "Plan approved; starting.")
    });
    assert!(!on_screen(&sb, "plan mode on"), "out of plan mode");
}

#[test]
fn hm_approve_trusts_a_folder_in_claude_code_down_then_enter() {
    let cc = or_skip!(claude(), format!("Claude Code {CLAUDE_VERSION}"));
    let sb = Sandbox::new();
    let (home, proj) = seed_home(&sb);
    let seeded = std::fs::read_to_string(home.join(".claude.json")).expect("seeded");
    let untrusted = seeded.replace(
        "\"hasTrustDialogAccepted\":true",
        "\"hasTrustDialogAccepted\":false",
    );
    assert_ne!(seeded, untrusted);
    std::fs::write(home.join(".claude.json"), untrusted).expect("write");
    let env = [
        format!("HOME={}", home.display()),
        "ANTHROPIC_BASE_URL=http://127.0.0.1:{port}".to_owned(),
        format!("ANTHROPIC_API_KEY={API_KEY}"),
        "DISABLE_TELEMETRY=1".to_owned(),
        "DISABLE_AUTOUPDATER=1".to_owned(),
        "DISABLE_ERROR_REPORTING=1".to_owned(),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1".to_owned(),
    ];
    let cc = cc.to_str().expect("utf-8 path");
    let scenario = serde_json::json!({"turns": []});
    let _agent = start(&sb, scenario, &proj, &env, &[cc], |_| {});
    dialog_state(&sb, "waiting", "folder_trust", "Yes, I trust this folder");
    // `No, exit` is selected: Down, then Enter once Yes is selected (an
    // Enter after a Down the dialog dropped would exit).
    let folder = proj.to_str().expect("utf-8").to_owned();
    let v = answer_until_taken(&sb, &["approve", "cc", "--subject", &format!("^{folder}$")]);
    assert_eq!(
        v["action"]["keys"],
        serde_json::json!(["Down", "Enter"]),
        "{v}"
    );
    until(
        &sb,
        "Claude Code at its prompt",
        Duration::from_secs(30),
        |v| v["primary"] == "idle",
    );
    let config = std::fs::read_to_string(home.join(".claude.json")).expect("config");
    let config: serde_json::Value = serde_json::from_str(&config).expect("json");
    assert_eq!(
        config["projects"][&folder]["hasTrustDialogAccepted"], true,
        "{config}"
    );
}

#[test]
fn an_automation_rule_denies_codexs_command_approval() {
    let codex = or_skip!(codex(), format!("Codex CLI {CODEX_VERSION}"));
    let sb = Sandbox::new();
    let home = sb.path().join("home");
    let proj = sb.path().join("proj");
    std::fs::create_dir_all(home.join(".codex")).expect("home");
    std::fs::create_dir_all(&proj).expect("project");
    assert!(
        works(Command::new("git").args(["init", "-q"]).arg(&proj)),
        "git init"
    );
    // Found in the directory `hm run` starts in.
    std::fs::write(
        sb.path().join("heimdall.toml"),
        "[[automation]]\nagent = \"codex\"\ndetail = \"permission\"\nsubject = 'steps\\.txt'\n\
         action = \"deny\"\ndwell_ms = 500\n",
    )
    .expect("config");
    let scenario = serde_json::json!({"turns": [
        {"kind": "tool", "pre_delay": 0.5, "tool": {"name": "exec_command", "input": {
            "cmd": "for i in 1 2 3; do echo step $i >> steps.txt; done",
            "sandbox_permissions": "require_escalated",
            "justification": "Write the steps outside the sandbox?"}}},
        {"kind": "text", "text": "Understood, not writing the steps.", "pre_delay": 0.5, "chunk_delay": 0.05}
    ]});
    let config = format!(
        "model = \"gpt-5-codex\"\nmodel_provider = \"mock\"\ncheck_for_update_on_startup = false\n\
         [model_providers.mock]\nname = \"Mock\"\nbase_url = \"http://127.0.0.1:{{port}}/v1\"\n\
         wire_api = \"responses\"\nenv_key = \"MOCK_API_KEY\"\nrequest_max_retries = 2\n\
         stream_max_retries = 1\n[analytics]\nenabled = false\n\
         [projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        proj.display()
    );
    let env = [
        format!("HOME={}", home.display()),
        format!("CODEX_HOME={}", home.join(".codex").display()),
        "MOCK_API_KEY=mock-key".to_owned(),
        "COLORTERM=truecolor".to_owned(),
        "RUST_LOG=error".to_owned(),
    ];
    let codex = codex.to_str().expect("utf-8 path");
    let _agent = start(&sb, scenario, &proj, &env, &[codex], |port| {
        std::fs::write(
            home.join(".codex/config.toml"),
            config.replace("{port}", &port.to_string()),
        )
        .expect("codex config");
    });
    until(&sb, "Codex at its prompt", Duration::from_secs(30), |v| {
        v["primary"] == "idle"
    });
    common::wait_until("the composer", || on_screen(&sb, "›"));
    let sent = sb.cmd(&["send", "cc", "write the steps"]);
    assert!(sent.status.success(), "{}", stderr(&sent));
    common::wait_until("the typed prompt", || on_screen(&sb, "› write the steps"));
    let log = sb.path().join("mock.jsonl");
    let asked = || {
        std::fs::read_to_string(&log).is_ok_and(|l| {
            l.lines()
                .any(|r| r.contains("\"ev\": \"req\"") && r.contains("\"seq\""))
        })
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while !asked() {
        assert!(Instant::now() < deadline, "Codex never took the prompt");
        let _ = sb.cmd(&["send", "cc", "--keys", "Enter"]);
        let taken = Instant::now() + Duration::from_millis(700);
        while Instant::now() < taken && !asked() {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    dialog_state(
        &sb,
        "waiting",
        "permission",
        "Would you like to run the following command?",
    );
    // Denied by the rule, with Escape, after its dwell.
    until(&sb, "the dialog answered", Duration::from_secs(10), |v| {
        v["primary"] != "waiting"
    });
    let why = stdout(&sb.cmd(&["explain", "cc", "--json"]));
    let why: serde_json::Value = serde_json::from_str(&why).expect("json");
    let action = &why["actions"][0];
    assert_eq!(action["answer"], "deny", "{why}");
    assert_eq!(action["keys"], serde_json::json!(["Escape"]), "{why}");
    assert!(
        action["by"]
            .as_str()
            .is_some_and(|b| b.ends_with("heimdall.toml:1")),
        "{why}"
    );
    until(&sb, "idle after the turn", Duration::from_secs(60), |v| {
        v["primary"] == "idle"
    });
    assert!(!proj.join("steps.txt").exists(), "the denied command ran");
}

#[test]
fn hm_deny_and_hm_approve_answer_gemini_clis_shell_approval() {
    let gemini = or_skip!(gemini(), format!("Gemini CLI {GEMINI_VERSION}"));
    let sb = Sandbox::new();
    let home = sb.path().join("home");
    let proj = sb.path().join("proj");
    std::fs::create_dir_all(home.join(".gemini")).expect("home");
    std::fs::create_dir_all(&proj).expect("project");
    let settings = serde_json::json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false}
    });
    std::fs::write(home.join(".gemini/settings.json"), settings.to_string()).expect("settings");
    let trusted = serde_json::json!({proj.to_str().expect("utf-8"): "TRUST_FOLDER"});
    std::fs::write(
        home.join(".gemini/trustedFolders.json"),
        trusted.to_string(),
    )
    .expect("trust");
    let steps = "for i in 1 2 3; do echo step $i >> steps.txt; done";
    let tool = serde_json::json!({"kind": "tool", "text": "", "pre_delay": 0.5,
        "tool": {"name": "run_shell_command", "input": {"command": steps, "description": "Write steps"}}});
    let scenario = serde_json::json!({"turns": [
        tool.clone(),
        tool,
        {"kind": "text", "text": "Wrote the steps.", "pre_delay": 0.5, "chunk_delay": 0.05}
    ]});
    let env = [
        format!("HOME={}", home.display()),
        "GEMINI_API_KEY=mock-key".to_owned(),
        "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:{port}".to_owned(),
        "GEMINI_CLI_NO_RELAUNCH=true".to_owned(),
    ];
    let gemini = gemini.to_str().expect("utf-8 path");
    let _agent = start(&sb, scenario, &proj, &env, &[gemini], |_| {});
    // Requests for a turn of the scenario (the mock logs them with a `seq`).
    let log = sb.path().join("mock.jsonl");
    let turns_asked = || {
        std::fs::read_to_string(&log).map_or(0, |l| {
            l.lines()
                .filter(|r| r.contains("\"ev\": \"req\"") && r.contains("\"seq\""))
                .count()
        })
    };
    // `fresh`: nothing above the composer says how a turn ended, so it
    // is `ready` empty and `prompt_editing` typed into, as Claude Code's
    // is (in 256 colours, as here, it was not recognised: `idle` from the
    // title, and `unknown` for a moment when typed into).
    let ask = |prompt: &str, fresh: bool| {
        until(&sb, "Gemini at its prompt", Duration::from_secs(60), |v| {
            v["primary"] == "idle" && (!fresh || v["detail"] == "ready")
        });
        common::wait_until("the composer", || on_screen(&sb, "Type your message"));
        let before = turns_asked();
        let sent = sb.cmd(&["send", "cc", prompt]);
        assert!(sent.status.success(), "{}", stderr(&sent));
        common::wait_until("the typed prompt", || on_screen(&sb, prompt));
        if fresh {
            until(&sb, "idle · prompt_editing", Duration::from_secs(5), |v| {
                assert_ne!(v["primary"], "unknown", "{v}");
                v["primary"] == "idle" && v["detail"] == "prompt_editing"
            });
        }
        // An Enter that comes right after the text may be taken as part
        // of a paste: pressed again until the turn is asked for.
        let deadline = Instant::now() + Duration::from_secs(15);
        while turns_asked() == before {
            assert!(Instant::now() < deadline, "Gemini never took the prompt");
            let _ = sb.cmd(&["send", "cc", "--keys", "Enter"]);
            let taken = Instant::now() + Duration::from_millis(700);
            while Instant::now() < taken && turns_asked() == before {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        dialog_state(&sb, "waiting", "permission", "Allow execution of [Shell]?");
    };
    // Denied with Escape: the command does not run.
    ask("write the steps", true);
    let v = answer_until_taken(&sb, &["deny", "cc", "--subject", "steps\\.txt"]);
    assert_eq!(v["action"]["keys"], serde_json::json!(["Escape"]), "{v}");
    assert_eq!(v["action"]["subject"], steps, "{v}");
    until(&sb, "idle after the denial", Duration::from_secs(30), |v| {
        v["primary"] == "idle"
    });
    assert!(!proj.join("steps.txt").exists(), "the denied command ran");
    // Asked again, approved with Enter on `● 1. Allow once`: it runs.
    ask("write them after all", false);
    let v = answer_until_taken(&sb, &["approve", "cc"]);
    assert_eq!(v["action"]["keys"], serde_json::json!(["Enter"]), "{v}");
    common::wait_until("the approved command's steps", || {
        std::fs::read_to_string(proj.join("steps.txt"))
            .is_ok_and(|s| s == "step 1\nstep 2\nstep 3\n")
    });
    // Among nine sessions at 80x24 its pane shows what it said, not the
    // hints it draws over its input box (`? for shortcuts`, a rule,
    // `Shift+Tab to accept edits`), which filled the pane.
    until(&sb, "idle after the turn", Duration::from_secs(30), |v| {
        v["primary"] == "idle" && on_screen(&sb, "Wrote the steps.")
    });
    in_a_small_pane(&sb, "Wrote the steps.");
}

/// Issue 23's repro, with a real Claude Code: resized as a dashboard does
/// (200x50, 80x24, 40x12, and back to 120x40), each time redrawing its
/// full screen for the new size. `hm logs` is its screen, once, as the
/// session shows it (no pieces of the screens drawn at the other sizes,
/// the banner once), and the dashboard's history copies the same text.
#[test]
fn claude_code_resized_again_and_again_logs_its_screen_once() {
    let cc = or_skip!(claude(), format!("Claude Code {CLAUDE_VERSION}"));
    let sb = Sandbox::new();
    let answer = (1..=12)
        .map(|i| format!("Item {i:02} of the answer, with enough words to wrap at forty columns."))
        .collect::<Vec<_>>()
        .join(" ");
    let scenario = serde_json::json!({"turns": [
        {"kind": "text", "text": answer, "pre_delay": 0.3, "chunk_delay": 0.01}
    ]});
    let (_agent, _proj) = start_claude(&sb, &cc, "default", scenario);
    type_prompt(&sb, "? for shortcuts", "say something long");
    common::wait_until("the answer", || on_screen(&sb, "Item 12"));
    // Its rule across the screen is as wide as the screen: drawn again
    // at each size.
    let rule = |cols: u16| "─".repeat(usize::from(cols));
    for (cols, rows) in [(200, 50), (80, 24), (40, 12), (120, 40)] {
        common::history::resize(&sb, "cc", cols, rows);
        let wide = rule(cols);
        common::wait_until(&format!("the screen at {cols}x{rows}"), || {
            let screen = stdout(&sb.cmd(&["logs", "cc", "--screen"]));
            screen.lines().any(|l| l.trim_end() == wide)
        });
    }
    // Redrawn, and settled: two readings a moment apart agree.
    let settled = || {
        let a = stdout(&sb.cmd(&["logs", "cc", "--screen"]));
        std::thread::sleep(Duration::from_millis(300));
        a == stdout(&sb.cmd(&["logs", "cc", "--screen"]))
    };
    common::wait_until("the screen to settle", settled);
    let logs = common::history::logs(&sb, "cc", &[]);
    let screen: Vec<String> = stdout(&sb.cmd(&["logs", "cc", "--screen"]))
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(logs, screen, "hm logs is the session's screen");
    let banner = logs.iter().filter(|l| l.contains("Claude Code")).count();
    assert_eq!(banner, 1, "{logs:#?}");
    assert!(logs.iter().any(|l| l.contains("Item 12")), "{logs:#?}");
    let copied = common::history::dashboard_copy(&sb, "cc", "Item 12");
    assert_eq!(copied, logs.join("\n"), "the dashboard's history");
}

/// Claude Code draws on its alternate screen and leaves it as it exits,
/// which takes its conversation off the terminal: hm keeps that last
/// screen in its place, before the resume line Claude prints after it, in
/// `hm logs` and in the record `hm status` and the dashboard read. And
/// `hm restart` brings it back in the same conversation.
#[test]
fn claude_codes_last_screen_outlives_its_exit_and_restart_resumes_it() {
    let cc = or_skip!(claude(), format!("Claude Code {CLAUDE_VERSION}"));
    let sb = Sandbox::new();
    let scenario = serde_json::json!({"turns": [
        {"kind": "text", "text": "The answer is forty-two, said the mock.", "pre_delay": 0.2}
    ]});
    let (home, proj) = seed_home(&sb);
    let (_agent, _) = start_claude_in(&sb, &cc, "default", scenario, &home, &proj, false);
    type_prompt(&sb, "? for shortcuts", "what is the answer");
    common::wait_until("the answer", || on_screen(&sb, "forty-two"));
    let manifest = sb.sessions_state().join("cc.json");
    let conversation = || -> String {
        let m: serde_json::Value = std::fs::read(&manifest)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        m["agent"]["id"].as_str().unwrap_or("").to_owned()
    };
    common::wait_until("the conversation id to be kept", || {
        !conversation().is_empty()
    });
    let id = conversation();
    until(&sb, "idle after the turn", Duration::from_secs(30), |v| {
        v["primary"] == "idle"
    });
    let sent = sb.cmd(&["send", "cc", "/exit", "--enter"]);
    assert!(sent.status.success(), "{}", stderr(&sent));
    let ended = sb.cmd(&["wait", "cc", "--state", "exited", "--timeout", "30"]);
    assert!(ended.status.success(), "{}", stderr(&ended));
    let logs = common::history::logs(&sb, "cc", &[]);
    let at = |text: &str| logs.iter().position(|l| l.contains(text));
    let (answer, resume) = (at("forty-two"), at("Resume this session with"));
    assert!(
        answer.is_some() && resume.is_some() && answer < resume,
        "the answer, then the resume line: {logs:#?}"
    );
    let v = status(&sb);
    let last: Vec<String> = serde_json::from_value(v["last_lines"].clone()).unwrap_or_default();
    assert!(
        last.iter().any(|l| l.contains("manual mode"))
            && last.iter().any(|l| l.contains("--resume")),
        "the record keeps Claude's last screen and its resume line: {v}"
    );
    // Started again, it is the same conversation.
    let out = sb.cmd(&["restart", "cc"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("resumes claude conversation {id}")),
        "{}",
        stderr(&out)
    );
    common::wait_until("the resumed conversation on screen", || {
        on_screen(&sb, "what is the answer") && on_screen(&sb, "forty-two")
    });
    // The earlier run's output is in its history, above the restart's mark.
    let logs = common::history::logs(&sb, "cc", &[]);
    let mark = logs
        .iter()
        .position(|l| l.contains("── restarted ") && l.contains(", after it exited "));
    assert!(
        mark.is_some_and(|m| logs[..m].iter().any(|l| l.contains("forty-two"))),
        "{logs:#?}"
    );
    // `--fresh` starts a new one, also after a restart that resumed.
    let _ = sb.cmd(&["kill", "cc"]);
    let ended = sb.cmd(&["wait", "cc", "--state", "exited", "--timeout", "30"]);
    assert!(ended.status.success(), "{}", stderr(&ended));
    let out = sb.cmd(&["restart", "--fresh", "cc"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = status(&sb);
    let command = v["command"].to_string();
    assert!(!command.contains("--resume"), "{v}");
    common::wait_until("a new conversation's prompt", || {
        on_screen(&sb, "? for shortcuts") && !on_screen(&sb, "forty-two")
    });
}

/// Several questions in one: `hm choose` answers the one shown and Claude
/// Code goes on to the next; after the last, its review of the answers is
/// a dialog too, which `hm approve` submits.
#[test]
fn hm_choose_answers_each_of_claude_codes_questions_and_hm_approve_submits_them() {
    let cc = or_skip!(claude(), format!("Claude Code {CLAUDE_VERSION}"));
    let sb = Sandbox::new();
    let question = |q: &str, header: &str, a: &str, b: &str| {
        serde_json::json!({"question": q, "header": header, "multiSelect": false,
            "options": [{"label": a, "description": "one"}, {"label": b, "description": "other"}]})
    };
    let scenario = serde_json::json!({"turns": [
        {"kind": "tool", "text": "", "pre_delay": 0.5, "chunk_delay": 0.05,
         "tool": {"name": "AskUserQuestion", "input": {"questions": [
            question("Which greeting should hello.py print?", "Greeting", "Hello, world", "Hi there"),
            question("Which colour should it use?", "Colour", "Red", "Blue")]}}},
        {"kind": "text", "text": "Red it is.", "pre_delay": 0.5, "chunk_delay": 0.05}
    ]});
    let (_agent, _proj) = start_claude(&sb, &cc, "default", scenario);
    type_prompt(
        &sb,
        "? for shortcuts",
        "change the greeting, ask me two things",
    );
    dialog_state(
        &sb,
        "waiting",
        "question",
        "Which greeting should hello.py print?",
    );
    let dialog_about = |what: &str, subject: &str| {
        let mut last = serde_json::Value::Null;
        common::wait_until(what, || {
            last = status(&sb)["dialog"].clone();
            last["subject"]
                .as_str()
                .is_some_and(|s| s.contains(subject))
        });
        last
    };
    dialog_about(
        "the first question",
        "Which greeting should hello.py print?",
    );
    let out = sb.cmd(&["choose", "cc", "2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let next = dialog_about("the second question", "Which colour should it use?");
    assert_eq!(next["options"][0]["label"], "Red", "{next}");
    let out = sb.cmd(&["choose", "cc", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let review = dialog_about("the review", "→ Red");
    assert_eq!(review["rule"], "claude.question_review", "{review}");
    assert!(
        review["subject"]
            .as_str()
            .is_some_and(|s| s.contains("→ Hi there")),
        "{review}"
    );
    let out = sb.cmd(&["approve", "cc"]);
    assert!(out.status.success(), "{}", stderr(&out));
    until(
        &sb,
        "idle after the answers",
        Duration::from_secs(60),
        |v| v["primary"] == "idle" && on_screen(&sb, "Red it is."),
    );
    assert!(
        on_screen(&sb, "→ Hi there"),
        "the first answer Claude Code took"
    );
    assert!(
        on_screen(&sb, "→ Red"),
        "the second answer Claude Code took"
    );
}
