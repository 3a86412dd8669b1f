//! The commands for scripts: `hm run --bg`, `hm send`, `hm wait`,
//! `hm logs`, through real supervisors.

mod common;

use std::time::{Duration, Instant};

use common::{Sandbox, stderr, stdout};

/// A session started with `hm run --bg`, killed when the test ends.
struct Bg<'a> {
    sb: &'a Sandbox,
    id: String,
}

impl Drop for Bg<'_> {
    fn drop(&mut self) {
        let _ = self.sb.cmd(&["kill", &self.id, "--grace", "1"]);
    }
}

fn bg<'a>(sb: &'a Sandbox, opts: &[&str], command: &[&str]) -> Bg<'a> {
    let out = sb
        .hm()
        .arg("run")
        .arg("--bg")
        .arg("--socket-dir")
        .arg(sb.dir())
        .args(opts)
        .arg("--")
        .args(command)
        .output()
        .expect("run hm run --bg");
    assert!(out.status.success(), "{}", stderr(&out));
    Bg {
        sb,
        id: stdout(&out).trim().to_owned(),
    }
}

#[test]
fn run_bg_prints_the_id_and_returns_while_the_session_runs() {
    let sb = Sandbox::new();
    let t0 = Instant::now();
    let s = bg(&sb, &["--id", "server"], &["sleep", "20"]);
    assert_eq!(s.id, "server");
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "hm run --bg did not return at once"
    );
    let st = sb.cmd(&["status", "server"]);
    assert!(st.status.success(), "{}", stderr(&st));
    // Without --id the name comes from the command, as for `hm run`.
    let s2 = bg(&sb, &[], &["sleep", "20"]);
    assert_eq!(s2.id, "sleep");
    let s3 = bg(&sb, &[], &["sleep", "20"]);
    assert_eq!(s3.id, "sleep-2");
    // --bg and --detach are two ways of starting; both at once is an error.
    let both = sb
        .hm()
        .args(["run", "--bg", "--detach", "--", "true"])
        .output()
        .expect("run");
    assert!(!both.status.success());
    assert!(
        stderr(&both).contains("cannot be used with"),
        "{}",
        stderr(&both)
    );
}

#[test]
fn wait_send_and_logs_drive_a_session_that_asks() {
    let sb = Sandbox::new();
    let s = bg(
        &sb,
        &[
            "--id",
            "ask",
            "--classifier",
            "agent",
            "--cols",
            "60",
            "--rows",
            "10",
        ],
        &[
            "bash",
            "-c",
            "read -p 'Your name? ' n; echo \"hello $n\"; read -p 'Again? [y/N] ' x; sleep 20",
        ],
    );
    let out = sb.cmd(&["wait", &s.id, "--state", "waiting", "--timeout", "10"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ask: waiting · input\n");
    let out = sb.cmd(&["send", &s.id, "Ada", "Lovelace", "--enter"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // The answer is taken, and the next question comes.
    common::wait_until("the greeting", || {
        stdout(&sb.cmd(&["logs", &s.id])).contains("hello Ada Lovelace")
    });
    let out = sb.cmd(&[
        "wait",
        &s.id,
        "--state",
        "input",
        "--timeout",
        "10",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(
        (v["primary"].as_str(), v["detail"].as_str()),
        (Some("waiting"), Some("input"))
    );
    // The screen, and the history's last lines.
    let screen = stdout(&sb.cmd(&["logs", &s.id, "--screen"]));
    assert!(screen.ends_with("Again? [y/N]\n"), "{screen:?}");
    let last = stdout(&sb.cmd(&["logs", &s.id, "--lines", "2"]));
    assert_eq!(last, "hello Ada Lovelace\nAgain? [y/N]\n");
    // As the program wrote it: the echo of what was typed, with CR LF.
    let raw = sb.cmd(&["logs", &s.id, "--raw"]);
    assert!(
        String::from_utf8_lossy(&raw.stdout).contains("Ada Lovelace\r\n"),
        "{:?}",
        String::from_utf8_lossy(&raw.stdout)
    );
}

#[test]
fn wait_gives_up_at_its_time_out_and_knows_an_ending() {
    let sb = Sandbox::new();
    let s = bg(
        &sb,
        &["--id", "ends", "--classifier", "agent"],
        &["sh", "-c", "sleep 2; exit 3"],
    );
    let out = sb.cmd(&["wait", &s.id, "--state", "waiting", "--timeout", "0.3"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("timed out after 0.3s waiting for 'ends' to be waiting"),
        "{}",
        stderr(&out)
    );
    let out = sb.cmd(&["wait", &s.id, "--state", "waiting", "--timeout", "20"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("'ends' exited with code 3 before it was waiting"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn wait_for_exited_returns_the_exit_code_line() {
    let sb = Sandbox::new();
    let s = bg(&sb, &["--id", "short"], &["sh", "-c", "sleep 1; exit 3"]);
    let out = sb.cmd(&["wait", &s.id, "--state", "exited", "--timeout", "20"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "short: exited with code 3\n");
}

#[test]
fn send_keys_by_name_and_refuse_what_it_does_not_know() {
    let sb = Sandbox::new();
    let s = bg(&sb, &["--id", "cat"], &["cat"]);
    let out = sb.cmd(&["send", &s.id, "--keys", "h", "i", "Space", "Enter"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // The terminal echoes the line, then cat prints it.
    common::wait_until("the line twice", || {
        stdout(&sb.cmd(&["logs", &s.id])).matches("hi").count() == 2
    });
    let out = sb.cmd(&["send", &s.id, "--keys", "C-c"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Ctrl-C ends cat, and with it the session.
    common::wait_until("cat to end", || {
        !sb.cmd(&["status", &s.id]).status.success()
    });
    let bad = sb.cmd(&["send", "cat", "--keys", "Hyper-x"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains("unknown key 'Hyper-x'"),
        "{}",
        stderr(&bad)
    );
    let bad = sb.cmd(&["wait", "cat", "--state", "sleepy"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains("unknown state 'sleepy'"),
        "{}",
        stderr(&bad)
    );
}
