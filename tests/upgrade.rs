//! Upgrades: this `hm` works with a supervisor the previous release
//! started (the protocol is additive), hook reports with the fields this
//! version adds included.
//!
//! The previous release is commit [`PREVIOUS`], built once from the
//! repository's own history into `target/hm-previous/` (its own target
//! dir: a build of the old sources cannot share this one's lock while
//! `cargo test` holds it), and reused after. `HM_PREVIOUS` names a binary
//! to use instead. Without git history (a shallow clone) or a toolchain
//! that can build it, the test says why and does nothing.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{HmEnv, Sandbox, stderr, stdout, wait_until};

/// The last commit on main before manifests and `hm restore`.
const PREVIOUS: &str = "616c3db";

/// The previous release's `hm`, built if needed; `None` (with the reason
/// printed) if it cannot be had here.
fn previous_hm() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HM_PREVIOUS") {
        return Some(PathBuf::from(p));
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = repo.join("target/hm-previous").join(PREVIOUS);
    let bin = root.join("target/x86_64-unknown-linux-gnu/debug/hm");
    let plain = root.join("target/debug/hm");
    for b in [&bin, &plain] {
        if b.exists() {
            return Some(b.clone());
        }
    }
    let src = root.join("src");
    if !src.join("Cargo.toml").exists() {
        let _ = std::fs::remove_dir_all(&src);
        std::fs::create_dir_all(&src).ok()?;
        let archive = Command::new("sh")
            .arg("-c")
            .arg("git -C \"$0\" archive --format=tar \"$1\" | tar -x -C \"$2\"")
            .arg(repo)
            .arg(PREVIOUS)
            .arg(&src)
            .output()
            .ok()?;
        if !archive.status.success() || !src.join("Cargo.toml").exists() {
            eprintln!(
                "upgrade: skipped: commit {PREVIOUS} is not in this repository's history ({})",
                stderr(&archive).trim()
            );
            return None;
        }
    }
    let built = Command::new(env!("CARGO"))
        .args(["build", "--bin", "hm", "--manifest-path"])
        .arg(src.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(root.join("target"))
        .current_dir(&src)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    if !built.status.success() {
        eprintln!(
            "upgrade: skipped: the previous release does not build here: {}",
            stderr(&built)
        );
        return None;
    }
    [bin, plain].into_iter().find(|b| b.exists())
}

#[test]
fn this_hm_works_with_a_supervisor_of_the_previous_release() {
    let Some(old) = previous_hm() else { return };
    let sb = Sandbox::new();
    let sock = sb.sock("old");
    // A stand-in for Claude Code: the old supervisor installs its hooks
    // and takes its reports.
    let bin = sb.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    std::fs::write(
        bin.join("claude"),
        "#!/bin/sh\necho from the old supervisor\nexec sleep 600\n",
    )
    .expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.join("claude"), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // Started by the old binary, as a session running before an upgrade.
    let mut start = Command::new(&old);
    start
        .hm_env(&sb)
        .env("PATH", &path)
        .current_dir(sb.path())
        .args(["run", "--bg", "--id", "old"])
        .arg("--socket-dir")
        .arg(&sb.sock_dir)
        .args(["--", "claude"]);
    let out = start.output().expect("old hm run");
    assert!(out.status.success(), "{}", stderr(&out));
    let _guard = Kill(&sb);

    // This version's commands on it.
    wait_until("the old session to be listed", || {
        stdout(&sb.cmd(&["ls"]))
            .lines()
            .any(|l| l.starts_with("old "))
    });
    let st: serde_json::Value =
        serde_json::from_slice(&sb.cmd(&["status", "old", "--json"]).stdout).expect("json");
    assert_eq!(st["alive"], true, "{st}");
    wait_until("its output", || {
        stdout(&sb.cmd(&["logs", "old"])).contains("from the old supervisor")
    });
    let sent = sb.cmd(&["send", "old", "--enter", "typed by the new hm"]);
    assert!(sent.status.success(), "{}", stderr(&sent));
    wait_until("the echo of what was sent", || {
        stdout(&sb.cmd(&["logs", "old"])).contains("typed by the new hm")
    });
    // A hook report with the conversation id this version adds: the old
    // supervisor takes it as before.
    let mut hook = sb.hm();
    hook.args(["hook", "claude", "--socket"])
        .arg(&sock)
        .stdin(Stdio::piped());
    let mut child = hook.spawn().expect("hm hook");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(
                br#"{"hook_event_name":"PermissionRequest","tool_name":"Bash",
                     "tool_input":{"command":"make deploy"},
                     "session_id":"0b9d6c55-0d8f-4b33-a1d4-2f7e3c9a8b10"}"#,
            )
            .expect("payload");
    }
    assert!(child.wait().expect("hook").success());
    wait_until("the old supervisor to take the report", || {
        let st: serde_json::Value =
            serde_json::from_slice(&sb.cmd(&["status", "old", "--json"]).stdout)
                .unwrap_or_default();
        st["primary"] == "waiting" && st["detail"] == "permission"
    });
    // Not lost, not kept (the old supervisor wrote no manifest): nothing
    // to restore.
    let dry = sb.cmd(&["restore", "--dry-run"]);
    assert!(dry.status.success(), "{}", stderr(&dry));
    assert!(
        stdout(&dry).contains("no lost sessions"),
        "{}",
        stdout(&dry)
    );
    // Stopped by this version, and its end read by this version.
    let killed = sb.cmd(&["kill", "old"]);
    assert!(killed.status.success(), "{}", stderr(&killed));
    let ls = stdout(&sb.cmd(&["ls"]));
    assert!(
        ls.lines()
            .any(|l| l.starts_with("old ") && l.contains("exited")),
        "{ls}"
    );
    assert!(sb.cmd(&["rm", "old"]).status.success());
}

/// Kills the old session on drop if the test left it running.
struct Kill<'a>(&'a Sandbox);

impl Drop for Kill<'_> {
    fn drop(&mut self) {
        let pid_file = self.0.sock_dir.join("old.pid");
        let text = std::fs::read_to_string(pid_file).unwrap_or_default();
        for pid in text
            .lines()
            .take(2)
            .filter_map(|l| l.trim().parse::<i32>().ok())
        {
            if pid > 1 {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
    }
}
