//! The real Claude Code CLI (2.1.330, from npm) under `hm run`, offline
//! against the corpus's mock API (`tests/corpus/tools/mock_llm.py`): hm
//! answers its status-protocol probe, and `hm status` follows it to a
//! permission dialog, through the approval, to the end of the turn.
//!
//! The CLI is looked for in `$HM_AGENT_CACHE` (default
//! `~/.cache/hm-agents`, where `.ci/run` installs it) and installed there
//! with npm when missing; without node, npm or python3 the test says why
//! and skips.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Sandbox, stderr, stdout};

const CLAUDE_VERSION: &str = "2.1.330";
const API_KEY: &str = "sk-ant-mock-0123456789abcdefghij";

fn cache_dir() -> PathBuf {
    std::env::var_os("HM_AGENT_CACHE").map_or_else(
        || {
            let home = std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into());
            Path::new(&home).join(".cache/hm-agents")
        },
        PathBuf::from,
    )
}

fn works(cmd: &mut Command) -> bool {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The CLI's native binary, installed if need be; `Err` says why not.
fn claude() -> Result<PathBuf, String> {
    let dir = cache_dir();
    let bin = dir.join("node_modules/@anthropic-ai/claude-code/bin/claude.exe");
    let right_version = |bin: &Path| {
        Command::new(bin)
            .arg("--version")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).starts_with(CLAUDE_VERSION))
    };
    if right_version(&bin) {
        return Ok(bin);
    }
    if !works(Command::new("npm").arg("--version")) {
        return Err("npm is not installed".into());
    }
    let pkg = format!("@anthropic-ai/claude-code@{CLAUDE_VERSION}");
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

/// The mock API, killed when dropped.
struct Mock(Child);

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

fn start_mock(sb: &Sandbox, port: u16) -> Mock {
    // A Bash tool call that writes (read-only commands run without asking),
    // then a short answer.
    let scenario = serde_json::json!({"turns": [
        {"kind": "tool", "text": "I'll run the loop for you.", "pre_delay": 0.5, "chunk_delay": 0.05,
         "tool": {"name": "Bash", "input": {
            "command": "for i in 1 2 3; do echo step $i >> steps.txt; done",
            "description": "Write three steps to steps.txt"}}},
        {"kind": "text", "text": "The loop wrote three steps.", "pre_delay": 0.5, "chunk_delay": 0.05}
    ]});
    let path = sb.path().join("scenario.json");
    std::fs::write(&path, scenario.to_string()).expect("write the scenario");
    let log = sb.path().join("mock.jsonl");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/tools/mock_llm.py");
    let child = Command::new("python3")
        .arg(script)
        .args(["--port", &port.to_string(), "--scenario"])
        .arg(&path)
        .arg("--log")
        .arg(&log)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the mock API");
    let mock = Mock(child);
    common::wait_until("the mock API to listen", || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("server_start"))
    });
    mock
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

fn status(sb: &Sandbox) -> serde_json::Value {
    let out = sb.cmd(&["status", "cc", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("json")
}

/// Polls `hm status` until `ok`, returning the answer and when it came.
fn until(
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

#[test]
fn claude_code_reports_its_permission_dialog_through_the_status_protocol() {
    let missing: Vec<&str> = ["python3", "node"]
        .into_iter()
        .filter(|t| !works(Command::new(t).arg("--version")))
        .collect();
    if !missing.is_empty() {
        println!("skipped: {} not installed", missing.join(" and "));
        return;
    }
    let cc = match claude() {
        Ok(cc) => cc,
        Err(why) => {
            println!("skipped: Claude Code {CLAUDE_VERSION} is not available: {why}");
            return;
        }
    };
    let sb = Sandbox::new();
    let port = free_port();
    let _mock = start_mock(&sb, port);
    let (home, proj) = seed_home(&sb);
    let base_url = format!("http://127.0.0.1:{port}");
    let home_var = format!("HOME={}", home.display());
    let url_var = format!("ANTHROPIC_BASE_URL={base_url}");
    let key_var = format!("ANTHROPIC_API_KEY={API_KEY}");
    let out = sb
        .hm()
        .args(["run", "--bg", "--id", "cc", "--classifier", "agent"])
        .args([
            "--cols",
            "120",
            "--rows",
            "40",
            "--socket-dir",
            sb.dir(),
            "--workdir",
        ])
        .arg(&proj)
        .args([
            "--",
            "env",
            "-i",
            &home_var,
            "PATH=/usr/local/bin:/usr/bin:/bin",
        ])
        .args([
            "SHELL=/bin/bash",
            "TERM=xterm-256color",
            "LANG=C.UTF-8",
            "USER=dev",
        ])
        .args([
            &url_var,
            &key_var,
            "DISABLE_TELEMETRY=1",
            "DISABLE_AUTOUPDATER=1",
        ])
        .args([
            "DISABLE_ERROR_REPORTING=1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
        ])
        .arg(&cc)
        .args(["--permission-mode", "default"])
        .output()
        .expect("run hm run --bg");
    assert!(out.status.success(), "{}", stderr(&out));
    struct Kill<'a>(&'a Sandbox);
    impl Drop for Kill<'_> {
        fn drop(&mut self) {
            let _ = self.0.cmd(&["kill", "cc", "--grace", "1"]);
        }
    }
    let _kill = Kill(&sb);

    // hm answered the probe: the CLI reports its own state.
    until(
        &sb,
        "the status protocol's idle record",
        Duration::from_secs(30),
        |v| {
            v["signals"]
                .as_array()
                .is_some_and(|s| s.iter().any(|s| s["rule"] == "status.idle"))
        },
    );
    common::wait_until("the prompt", || on_screen(&sb, "? for shortcuts"));
    let sent = sb.cmd(&[
        "send",
        "cc",
        "run the loop that writes steps.txt",
        "--enter",
    ]);
    assert!(sent.status.success(), "{}", stderr(&sent));

    // The dialog: waiting · permission, first on the program's own word,
    // within 1 s of the dialog being on the screen.
    let (v, waiting_at) = until(&sb, "waiting · permission", Duration::from_secs(30), |v| {
        v["primary"] == "waiting" && v["detail"] == "permission"
    });
    assert_eq!(v["signals"][0]["source"], "status_protocol", "{v}");
    let shown_by = Instant::now() + Duration::from_secs(5);
    while !on_screen(&sb, "Do you want to proceed?") {
        assert!(Instant::now() < shown_by, "the dialog never showed");
        std::thread::sleep(Duration::from_millis(20));
    }
    let shown_at = Instant::now();
    assert!(
        waiting_at <= shown_at + Duration::from_secs(1),
        "waiting came {:?} after the dialog",
        waiting_at - shown_at
    );
    let why = stdout(&sb.cmd(&["explain", "cc"]));
    assert!(why.contains("approve Bash: for i in 1 2 3"), "{why}");

    // Approve ("1. Yes" is selected): active within 1 s, then idle.
    let approved = Instant::now();
    let sent = sb.cmd(&["send", "cc", "--keys", "Enter"]);
    assert!(sent.status.success(), "{}", stderr(&sent));
    let (_, active_at) = until(
        &sb,
        "active after the approval",
        Duration::from_secs(10),
        |v| v["primary"] == "active",
    );
    assert!(
        active_at - approved <= Duration::from_secs(1),
        "active came {:?} after the approval",
        active_at - approved
    );
    let (v, _) = until(
        &sb,
        "idle at the end of the turn",
        Duration::from_secs(60),
        |v| v["primary"] == "idle",
    );
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
