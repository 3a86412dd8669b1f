//! Sessions that ended stay visible until removed: `hm ls`, `hm status`,
//! `hm restart`, `hm rm`, `hm clean`, through real supervisors.

use crate::common;

use std::os::unix::fs::PermissionsExt;

use common::{Sandbox, stderr, stdout};

fn bg(sb: &Sandbox, id: &str, command: &[&str]) {
    let out = sb
        .hm()
        .args(["run", "--bg", "--id", id, "--socket-dir", sb.dir(), "--"])
        .args(command)
        .output()
        .expect("run hm run --bg");
    assert!(out.status.success(), "{}", stderr(&out));
}

fn status_text(sb: &Sandbox, id: &str) -> String {
    let out = sb.cmd(&["status", id]);
    format!("{}{}", stdout(&out), stderr(&out))
}

#[test]
fn an_ended_session_is_listed_explained_restarted_and_removed() {
    let sb = Sandbox::new();
    bg(&sb, "exit3", &["sh", "-c", "echo first; echo bye; exit 3"]);
    common::wait_until("the session to end", || {
        status_text(&sb, "exit3").contains("exited with code 3")
    });
    let text = status_text(&sb, "exit3");
    assert!(text.contains("state:    exited with code 3, "), "{text}");
    assert!(text.contains(" ago"), "{text}");
    assert!(text.contains("last lines:\n  first\n  bye\n"), "{text}");
    let v: serde_json::Value =
        serde_json::from_slice(&sb.cmd(&["status", "exit3", "--json"]).stdout).expect("json");
    assert_eq!(
        (
            v["exit_code"].as_i64(),
            v["alive"].as_bool(),
            v["primary"].as_str()
        ),
        (Some(3), Some(false), Some("dead")),
        "{v}"
    );
    assert_eq!(v["command"][0], "sh", "{v}");
    // The record is private and whole.
    let record = std::path::Path::new(sb.dir()).join("exit3.ended");
    let mode = std::fs::metadata(&record)
        .expect("the record")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    // Listed after the running ones.
    bg(&sb, "alive", &["sleep", "20"]);
    let ls = stdout(&sb.cmd(&["ls"]));
    let rows: Vec<&str> = ls.lines().collect();
    assert!(rows[1].starts_with("alive"), "{ls}");
    assert!(
        rows[2].starts_with("exit3") && rows[2].contains("exited 3"),
        "{ls}"
    );
    let list: serde_json::Value =
        serde_json::from_slice(&sb.cmd(&["ls", "--json"]).stdout).expect("json");
    assert_eq!(list.as_array().map(Vec::len), Some(2), "{list}");

    // Again: same id, command and directory.
    let before = v["ended_unix_ms"].as_u64().expect("ended_unix_ms");
    let out = sb.cmd(&["restart", "exit3"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "exit3\n");
    common::wait_until("the second run to end", || {
        let v: serde_json::Value =
            serde_json::from_slice(&sb.cmd(&["status", "exit3", "--json"]).stdout)
                .unwrap_or_default();
        v["ended_unix_ms"].as_u64().is_some_and(|t| t > before)
    });

    // Forgotten: no record, no log; then the id is unknown again.
    let out = sb.cmd(&["rm", "exit3"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "removed 'exit3', exited 3\n");
    assert!(!record.exists());
    let text = status_text(&sb, "exit3");
    assert!(text.contains("no session named 'exit3'"), "{text}");
    let out = sb.cmd(&["rm", "alive"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("session 'alive' is running; stop it first with 'hm kill alive'"),
        "{}",
        stderr(&out)
    );
    let out = sb.cmd(&["rm", "nope"]);
    assert!(
        stderr(&out).contains("no ended session named 'nope'"),
        "{}",
        stderr(&out)
    );
    let _ = sb.cmd(&["kill", "alive"]);
}

/// A session that ended before a reboot (its record went with the socket
/// dir, its manifest and kept output stay) is told with its last lines,
/// as its record told it: `hm status` said nothing of how it ended.
#[test]
fn an_ended_session_whose_record_is_gone_keeps_its_last_lines() {
    let sb = Sandbox::new();
    bg(&sb, "gone", &["sh", "-c", "echo first; echo bye; exit 3"]);
    common::wait_until("the session to end", || {
        status_text(&sb, "gone").contains("exited with code 3")
    });
    std::fs::remove_file(std::path::Path::new(sb.dir()).join("gone.ended")).expect("the record");
    let text = status_text(&sb, "gone");
    assert!(text.contains("state:    exited with code 3, "), "{text}");
    assert!(text.contains("last lines:\n  first\n  bye\n"), "{text}");
}

/// Sessions `a` and `b`, ended, and `runs`, running.
fn two_ended_one_running() -> Sandbox {
    let sb = Sandbox::new();
    for id in ["a", "b"] {
        bg(&sb, id, &["true"]);
    }
    bg(&sb, "runs", &["sleep", "20"]);
    common::wait_until("both to end", || {
        ["a", "b"]
            .iter()
            .all(|id| status_text(&sb, id).contains("exited with code 0"))
    });
    sb
}

/// `hm rm` takes several ids, as `hm kill` does: each that cannot be
/// forgotten is named, and the others go all the same.
#[test]
fn rm_forgets_several_and_names_each_it_cannot() {
    let sb = two_ended_one_running();
    let out = sb.cmd(&["rm", "a", "runs", "nope", "b"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(
        err.contains("session 'runs' is running; stop it first"),
        "{err}"
    );
    assert!(err.contains("no ended session named 'nope'"), "{err}");
    let ls = stdout(&sb.cmd(&["ls"]));
    assert!(ls.contains("runs") && !ls.contains("exited"), "{ls}");
    let _ = sb.cmd(&["kill", "runs"]);
}

#[test]
fn clean_forgets_every_ended_session_and_spares_running_ones() {
    let sb = two_ended_one_running();
    let out = sb.cmd(&["clean"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "removed 2 ended sessions\n");
    let ls = stdout(&sb.cmd(&["ls"]));
    assert!(ls.contains("runs") && !ls.contains("exited"), "{ls}");
    let _ = sb.cmd(&["kill", "runs"]);
}

#[test]
fn restart_keeps_the_size_and_the_label() {
    let sb = Sandbox::new();
    let out = sb
        .hm()
        .args(["run", "--bg", "--id", "sz", "--cols", "80", "--rows", "20"])
        .args(["--label", "sizes", "--socket-dir", sb.dir(), "--"])
        .args(["sh", "-c", "stty size; exit 0"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    let Restarted { again: v, .. } = restarted(&sb, "sz");
    assert_eq!(v["last_lines"][0], "20 80", "{v}");
    assert_eq!(v["label"], "sizes", "{v}");
}

/// A restart starts the program in the environment it started in, not
/// the restarting one's (a dashboard's `r` ran Claude Code without the
/// `ANTHROPIC_BASE_URL` given to it); a secret's value comes from the
/// restarting environment, and one it lacks is said.
#[test]
fn restart_runs_in_the_environment_the_session_started_in() {
    let sb = Sandbox::new();
    let out = sb
        .hm()
        .args(["run", "--bg", "--id", "env", "--socket-dir", sb.dir(), "--"])
        .args(["sh", "-c", "echo \"url=$THE_URL key=$THE_API_KEY\""])
        .env("THE_URL", "http://127.0.0.1:9")
        .env("THE_API_KEY", "sk-first")
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    let Restarted { said, first, again } = restarted(&sb, "env");
    assert_eq!(
        first["last_lines"][0],
        "url=http://127.0.0.1:9 key=sk-first"
    );
    assert!(
        said.contains("'env' started with THE_API_KEY set, which is not set here"),
        "{said}"
    );
    assert_eq!(
        again["last_lines"][0], "url=http://127.0.0.1:9 key=",
        "{again}"
    );
}

/// A session's two runs: `hm restart` once its first has ended.
struct Restarted {
    /// What `hm restart` said on stderr.
    said: String,
    /// `hm status --json` after the first run, and after the second.
    first: serde_json::Value,
    again: serde_json::Value,
}

/// Waits for session `id` to end, restarts it, and waits for that run
/// to end too.
fn restarted(sb: &Sandbox, id: &str) -> Restarted {
    let ended = || stdout(&sb.cmd(&["status", id, "--json"]));
    common::wait_until("the end", || ended().contains("\"ended\":true"));
    let first: serde_json::Value = serde_json::from_str(&ended()).expect("json");
    let out = sb.cmd(&["restart", id]);
    assert!(out.status.success(), "{}", stderr(&out));
    common::wait_until("the second end", || {
        let v: serde_json::Value = serde_json::from_str(&ended()).unwrap_or_default();
        v["ended_unix_ms"].as_u64() > first["ended_unix_ms"].as_u64()
    });
    let again = serde_json::from_str(&ended()).expect("json");
    Restarted {
        said: stderr(&out),
        first,
        again,
    }
}

/// A program that takes SIGTERM and exits with a code of its own (as
/// `less` does, with 15) was killed, not failed: every command says so.
#[test]
fn a_session_ended_by_hm_kill_is_said_to_be_killed() {
    let sb = Sandbox::new();
    bg(
        &sb,
        "traps",
        &[
            "sh",
            "-c",
            "trap 'exit 15' TERM; echo ready; while :; do sleep 0.05; done",
        ],
    );
    common::wait_until("the trap to be set", || {
        stdout(&sb.cmd(&["logs", "traps", "--screen"])).contains("ready")
    });
    let out = sb.cmd(&["kill", "traps"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("exit code 15"), "{}", stdout(&out));
    let text = status_text(&sb, "traps");
    assert!(text.contains("killed (exit code 15)"), "{text}");
    let ls = stdout(&sb.cmd(&["ls"]));
    assert!(
        ls.lines()
            .any(|l| l.starts_with("traps") && l.contains("killed (exit 15)")),
        "{ls}"
    );
    let v: serde_json::Value =
        serde_json::from_slice(&sb.cmd(&["status", "traps", "--json"]).stdout).expect("json");
    assert_eq!(
        (v["killed"].as_bool(), v["exit_code"].as_i64()),
        (Some(true), Some(15))
    );
    // One that ended by itself was not killed.
    bg(&sb, "own", &["sh", "-c", "exit 15"]);
    common::wait_until("it to end", || {
        status_text(&sb, "own").contains("exited with code 15")
    });
    let v: serde_json::Value =
        serde_json::from_slice(&sb.cmd(&["status", "own", "--json"]).stdout).expect("json");
    assert_eq!(v["killed"].as_bool(), Some(false));
}

/// A program killed from another shell (`kill -HUP PID`) was killed too:
/// `hm status` names the signal, where it said `exited with code 129`.
#[test]
fn a_program_killed_by_a_signal_from_elsewhere_is_said_to_be_killed() {
    use nix::sys::signal::{Signal, kill};
    let sb = Sandbox::new();
    bg(&sb, "hup", &["sleep", "600"]);
    let v: serde_json::Value =
        serde_json::from_slice(&sb.cmd(&["status", "hup", "--json"]).stdout).expect("json");
    let pid = v["pid"].as_i64().expect("the program's pid");
    let pid = nix::unistd::Pid::from_raw(i32::try_from(pid).expect("pid"));
    kill(pid, Signal::SIGHUP).expect("SIGHUP");
    common::wait_until("the session to end", || {
        !stdout(&sb.cmd(&["ls", "--state", "ended", "--ids"])).is_empty()
    });
    let text = status_text(&sb, "hup");
    assert!(text.contains("killed by SIGHUP (exit code 129)"), "{text}");
    let ls = stdout(&sb.cmd(&["ls"]));
    assert!(
        ls.lines()
            .any(|l| l.starts_with("hup") && l.contains("killed SIGHUP")),
        "{ls}"
    );
}

/// A restart that cannot start its program (gone from where it was)
/// leaves the ended session as it was: listed, with its record, to be
/// started again once the program is back, or forgotten.
#[test]
fn a_restart_that_fails_keeps_the_ended_session() {
    let sb = Sandbox::new();
    let prog = sb.path().join("prog");
    std::fs::write(&prog, "#!/bin/sh\necho ran-$((6*7))\nexit 3\n").expect("script");
    std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let prog = prog.to_str().expect("utf-8 path");
    bg(&sb, "gone", &[prog]);
    common::wait_until("the session to end", || {
        status_text(&sb, "gone").contains("exited with code 3")
    });
    std::fs::remove_file(prog).expect("remove the program");
    let out = sb.cmd(&["restart", "gone"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("cannot run"), "{}", stderr(&out));
    // Still there, as it was.
    let text = status_text(&sb, "gone");
    assert!(text.contains("exited with code 3"), "{text}");
    assert!(text.contains("ran-42"), "{text}");
    let ls = stdout(&sb.cmd(&["ls"]));
    assert!(ls.contains("gone") && ls.contains("exited 3"), "{ls}");
    // Back where it was: started again.
    std::fs::write(prog, "#!/bin/sh\necho again-$((6*7))\nexec sleep 60\n").expect("script");
    std::fs::set_permissions(prog, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = sb.cmd(&["restart", "gone"]);
    assert!(out.status.success(), "{}", stderr(&out));
    common::wait_until("it running again", || {
        stdout(&sb.cmd(&["logs", "gone", "--screen"])).contains("again-42")
    });
    let _ = sb.cmd(&["kill", "gone"]);
}

/// A restarted session's history keeps what its earlier run printed, then
/// a mark that says when and after what it was restarted, then the new
/// run: as a lost session's does when restored.
#[test]
fn a_restart_keeps_the_earlier_runs_output_above_a_mark() {
    let sb = Sandbox::new();
    let count = sb.path().join("runs");
    let script = format!(
        "n=$(cat '{0}' 2>/dev/null || echo 0); n=$((n+1)); echo $n > '{0}'; echo output of run $n; exit 3",
        count.display()
    );
    bg(&sb, "job", &["sh", "-c", &script]);
    common::wait_until("the first run to end", || {
        status_text(&sb, "job").contains("exited with code 3")
    });
    let out = sb.cmd(&["restart", "job"]);
    assert!(out.status.success(), "{}", stderr(&out));
    common::wait_until("the second run to end", || {
        std::fs::read_to_string(&count).is_ok_and(|n| n.trim() == "2")
            && status_text(&sb, "job").contains("exited with code 3")
    });
    let logs = stdout(&sb.cmd(&["logs", "job"]));
    let first = logs.find("output of run 1");
    let mark = logs.find(", after it exited 3 ──");
    let second = logs.find("output of run 2");
    assert!(
        matches!((first, mark, second), (Some(f), Some(m), Some(s)) if f < m && m < s),
        "{logs}"
    );
    assert!(logs.contains("── restarted "), "{logs}");
}
