//! The commands people and scripts use: `status`, `ls`, `kill`, `--version`,
//! `help`, and how they report mistakes.

use crate::common;

use std::fs;

use common::{HmEnv, Sandbox, stderr, stdout};
use heimdall::protocol::ClientType;

/// A live session's status shows what is on its screen, its last lines
/// as an ended one's does: it showed none of its output.
#[test]
fn status_shows_what_a_live_session_has_on_screen() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "build",
        &[],
        &[
            "sh",
            "-c",
            "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo step $i; done; sleep 30",
        ],
    );
    common::wait_until("its output on screen", || {
        stdout(&sb.cmd(&["logs", "build", "--screen"])).contains("step 12")
    });
    let text = stdout(&sb.cmd(&["status", "build"]));
    let shown: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "on screen:")
        .skip(1)
        .collect();
    let want: Vec<String> = (3..=12).map(|i| format!("  step {i}")).collect();
    assert_eq!(shown, want, "{text}");
    // Not for scripts: their JSON is as before.
    let json = stdout(&sb.cmd(&["status", "build", "--json"]));
    assert!(!json.contains("step 12"), "{json}");
}

#[test]
fn status_prints_the_session_for_people_and_scripts() {
    let sb = Sandbox::new();
    // A long command (an `env` with keys in front of an agent) is whole.
    let long: Vec<String> = (0..12).map(|i| format!("VARIABLE_{i}=value-{i}")).collect();
    let mut command: Vec<&str> = vec!["env"];
    command.extend(long.iter().map(String::as_str));
    command.extend(["sleep", "30"]);
    let s = sb.start("api", &[], &command);
    let out = sb.cmd(&["status", "api"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let pid = s.child_pid().expect("pid");
    assert!(text.contains("session:  api"), "{text}");
    assert!(text.contains(&format!("pid:      {pid}")), "{text}");
    assert!(text.contains("state:    idle (for "), "{text}");
    assert!(
        text.contains(&format!("command:  {}\n", command.join(" "))),
        "{text}"
    );
    assert!(text.contains("workdir:  /"), "{text}");
    assert!(text.contains("alive:    yes"), "{text}");
    let out = sb.cmd(&["status", "api", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["id"], "api");
    assert_eq!(v["pid"], pid);
    assert_eq!(v["alive"], true);
    assert_eq!(v["state"], "idle");
    assert!(v["idle_ms"].is_u64() && v["state_ms"].is_u64());
    // The same fields as an entry of `hm ls --json`.
    assert_eq!(v["command"], serde_json::json!(command));
    let ls = sb.cmd(&["ls", "--json"]);
    let list: serde_json::Value = serde_json::from_slice(&ls.stdout).expect("json");
    let entry = &list[0];
    let keys = |o: &serde_json::Value| {
        let mut k: Vec<String> = o.as_object().expect("object").keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&v), keys(entry));
    // An ended session has the same keys too, where a script looks for
    // them, with null for what no longer applies.
    assert_eq!(v["exit_code"], serde_json::Value::Null);
    assert_eq!(v["primary"], "idle");
    assert!(
        v.get("state_byte").is_none(),
        "the state once, by name: {v}"
    );
    let ended = sb
        .hm()
        .args(["run", "--bg", "--id", "done", "--socket-dir", sb.dir()])
        .args(["--", "sh", "-c", "exit 3"])
        .output()
        .expect("run hm run --bg");
    assert!(ended.status.success(), "{}", stderr(&ended));
    common::wait_until("'done' to end", || {
        let out = sb.cmd(&["status", "done", "--json"]);
        serde_json::from_slice::<serde_json::Value>(&out.stdout).is_ok_and(|e| e["exit_code"] == 3)
    });
    let out = sb.cmd(&["status", "done", "--json"]);
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(keys(&v), keys(&e));
    assert_eq!(
        (e["ended"].clone(), e["alive"].clone()),
        (true.into(), false.into())
    );
    assert_eq!(e["pid"], serde_json::Value::Null);
}

#[test]
fn a_missing_session_is_named_with_its_directory() {
    let sb = Sandbox::new();
    for cmd in ["status", "kill", "attach"] {
        let out = sb.cmd(&[cmd, "ghost"]);
        assert_eq!(out.status.code(), Some(1), "{cmd}");
        assert_eq!(
            stderr(&out),
            format!(
                "hm: no session named 'ghost' in {} (see 'hm ls')\n",
                sb.sock_dir.display()
            ),
            "{cmd}"
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn a_mistyped_option_of_run_is_an_error_not_the_command() {
    let sb = Sandbox::new();
    let out = sb.cmd(&["run", "--detatch", "sleep", "30"]);
    assert_eq!(out.status.code(), Some(2));
    // One line, as every error of hm is, with clap's words and the usage.
    let said = stderr(&out);
    assert!(
        said.starts_with(
            "hm: unexpected argument '--detatch' found; a similar argument exists: '--detach'"
        ),
        "{said}"
    );
    assert!(
        said.ends_with("(usage: hm run --detach <CMD>...)\n"),
        "{said}"
    );
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(!sb.sock_dir.exists() || sb.sock_dir.read_dir().is_ok_and(|mut d| d.next().is_none()));
}

/// `--dir` is `--workdir`, as the dashboard's form names the field.
#[test]
fn run_takes_dir_for_its_working_directory() {
    let sb = Sandbox::new();
    let dir = sb.path().join("proj");
    std::fs::create_dir_all(&dir).expect("dir");
    let dir = dir.to_str().expect("utf-8");
    let out = sb
        .hm()
        .args(["run", "--bg", "--id", "d", "--dir", dir, "--socket-dir"])
        .arg(&sb.sock_dir)
        .args(["--", "sleep", "60"])
        .output()
        .expect("run hm");
    assert!(out.status.success(), "{}", stderr(&out));
    let v = sb.status_json("d");
    assert_eq!(v["workdir"], dir, "{v}");
    let out = sb.cmd(&["kill", "d"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// A value out of range, or options that exclude each other, is the
/// command line's mistake: one line, exit 2, as for one clap refuses; not
/// 1, which `hm wait` gives when it times out.
#[test]
fn a_command_line_that_cannot_mean_anything_exits_2() {
    let sb = Sandbox::new();
    let _s = sb.start("calm", &[], &["sleep", "30"]);
    for args in [
        &["wait", "calm", "--state", "idle", "--timeout", "-1"][..],
        &[
            "run",
            "--detach",
            "--scrollback-bytes",
            "99999999999999",
            "--",
            "true",
        ],
        &["run", "--detach", "--idle-threshold-ms", "0", "--", "true"],
        &["logs", "calm", "--screen", "--raw"],
        &["logs", "calm", "--grep", "("],
        &["send", "calm"],
        // The command line is wrong whatever the id.
        &["send", "nobody"],
        &["kill", "calm", "--grace", "-1"],
    ] {
        let out = sb.cmd(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(
            stderr(&out).lines().count(),
            1,
            "{args:?}: {}",
            stderr(&out)
        );
    }
    let out = sb.cmd(&["wait", "calm", "--state", "waiting", "--timeout", "0.1"]);
    assert_eq!(out.status.code(), Some(1), "a time-out: {}", stderr(&out));
    // Neither ids nor --all: the usage says both ways (`hm kill <ID>...`
    // left --all out).
    let out = sb.cmd(&["kill"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("<ID|--all>"), "{}", stderr(&out));
}

#[test]
fn a_kill_grace_out_of_bounds_is_refused_before_anything_is_sent() {
    let sb = Sandbox::new();
    let _s = sb.start("calm", &[], &["sleep", "30"]);
    // The bound is the config's: kill_grace_ms is at most 600000.
    for grace in ["-1", "600.5", "NaN", "inf"] {
        let out = sb.cmd(&["kill", "calm", &format!("--grace={grace}")]);
        assert_eq!(out.status.code(), Some(2), "{grace}");
        assert_eq!(
            stderr(&out),
            format!("hm: invalid --grace '{grace}': give seconds between 0 and 600\n"),
        );
    }
    let out = sb.cmd(&["status", "calm"]);
    assert!(out.status.success(), "still running: {}", stderr(&out));
}

/// Piped, `hm ls` gives a long command whole, for scripts: it was cut at
/// 80 characters with nothing to say so.
#[test]
fn ls_piped_gives_a_long_command_whole() {
    let sb = Sandbox::new();
    let long = format!("sleep 60; echo {} end", "x".repeat(150));
    let _s = sb.start("long", &[], &["sh", "-c", &long]);
    let out = sb.cmd(&["ls"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let listed = stdout(&out);
    assert!(listed.contains(&format!("sh -c '{long}'\n")), "{listed}");
}

#[test]
fn ls_lists_every_session_with_its_state_and_command() {
    let sb = Sandbox::new();
    let _a = sb.start("alpha", &[], &["sleep", "30"]);
    let b = sb.start(
        "beta",
        &[],
        &["sh", "-c", "while :; do echo x; sleep 0.1; done"],
    );
    // beta counts as active once it has printed something.
    let mut r = b.raw();
    r.send(ClientType::Subscribe as u8, &[]);
    r.output_until(b"x\r\nx\r\n");
    let out = sb.cmd(&["ls"]);
    assert!(out.status.success());
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].starts_with("ID"), "{text}");
    assert!(
        lines[1].starts_with("alpha")
            && lines[1].contains("idle")
            && lines[1].ends_with("sleep 30"),
        "{text}"
    );
    assert!(
        lines[2].starts_with("beta") && lines[2].contains("active"),
        "{text}"
    );
    let out = sb.cmd(&["ls", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let list = v.as_array().expect("array");
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["id"], "alpha");
    assert_eq!(list[0]["command"], serde_json::json!(["sleep", "30"]));
    assert!(list[0]["started_unix_ms"].is_u64());
}

/// A session waiting for you whose program keeps redrawing (Claude Code
/// blinks a mark at its dialogs) is listed with the time it has waited:
/// the time since its last output stayed under a second all the while.
#[test]
fn ls_gives_a_waiting_session_the_time_it_has_waited() {
    let sb = Sandbox::new();
    let rules = sb.path().join("config/heimdall/rules");
    fs::create_dir_all(&rules).expect("rules dir");
    fs::write(
        rules.join("asks.toml"),
        "agent = \"*\"\n\n[[rule]]\nname = \"proceed\"\nstate = \"waiting\"\n\
         detail = \"question\"\nregion = \"screen\"\nall = ['^Proceed\\? \\(y/n\\)']\n",
    )
    .expect("rules");
    let _s = sb.start(
        "asks",
        &["--classifier", "agent"],
        &[
            "bash",
            "-c",
            "printf 'Proceed? (y/n)\\r\\n'; while :; do printf '\\r%s' $((RANDOM % 10)); sleep 0.1; done",
        ],
    );
    // IDLE as printed: `180ms`, `2.4s`, `1m05s`.
    let waited_secs = |cell: &str| -> f64 {
        if cell.ends_with("ms") {
            0.0
        } else if cell.contains('m') {
            60.0
        } else {
            cell.trim_end_matches('s').parse().unwrap_or(0.0)
        }
    };
    let mut last = String::new();
    common::wait_until("a waiting session's IDLE of 2 s", || {
        last = stdout(&sb.cmd(&["ls"]));
        last.lines()
            .find(|l| l.starts_with("asks "))
            .and_then(|l| {
                l.split("  ")
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .nth(3)
            })
            .is_some_and(|idle| waited_secs(idle) >= 2.0)
    });
    assert!(last.contains("waiting · question"), "{last}");
}

/// More sessions than the process may open descriptors: every one is
/// still listed with its state (they are asked a few at a time).
#[test]
fn ls_lists_more_sessions_than_its_descriptor_limit() {
    let sb = Sandbox::new();
    let ids: Vec<String> = (0..60).map(|i| format!("s{i:02}")).collect();
    let _sessions: Vec<_> = ids
        .iter()
        .map(|id| sb.spawn(id, &[], &["sleep", "600"]))
        .collect();
    common::wait_until("every session to answer", || {
        ids.iter()
            .all(|id| common::Raw::connect(&sb.sock(id)).is_ok())
    });
    let out = std::process::Command::new("/bin/sh")
        .hm_env(&sb)
        .args(["-c", "ulimit -n 40 && exec \"$0\" ls --socket-dir \"$1\""])
        .arg(common::HM)
        .arg(&sb.sock_dir)
        .output()
        .expect("run hm ls");
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    let idle = text.lines().filter(|l| l.contains(" idle ")).count();
    assert_eq!(idle, ids.len(), "{text}{}", stderr(&out));
}

#[test]
fn ls_with_no_sessions_says_so_and_json_is_empty() {
    let sb = Sandbox::new();
    let out = sb.cmd(&["ls"]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    assert!(stderr(&out).contains("no sessions"));
    assert_eq!(stdout(&sb.cmd(&["ls", "--json"])).trim(), "[]");
}

#[test]
fn ls_skips_and_removes_entries_of_dead_supervisors() {
    let sb = Sandbox::new();
    let mut dead = sb.start("dead", &[], &["sleep", "30"]);
    let _live = sb.start("live", &[], &["sleep", "30"]);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(dead.child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("kill");
    dead.wait_exit();
    let text = stdout(&sb.cmd(&["ls"]));
    // Not as running: only as lost, from what is kept for `hm restore`.
    let row = text.lines().find(|l| l.starts_with("dead "));
    assert!(
        row.is_some_and(|r| r.contains(" -  ") && r.contains(" lost ")),
        "{text}"
    );
    assert!(text.contains("live"), "{text}");
    assert!(!sb.sock("dead").exists());
    assert!(!sb.sock_dir.join("dead.pid").exists());
}

#[test]
fn status_and_kill_say_when_a_supervisor_does_not_answer() {
    let sb = Sandbox::new();
    let s = sb.start("frozen", &[], &["sleep", "30"]);
    let sup = nix::unistd::Pid::from_raw(s.child.id() as i32);
    nix::sys::signal::kill(sup, nix::sys::signal::Signal::SIGSTOP).expect("stop");
    for args in [
        &["status", "frozen"][..],
        &["status", "frozen", "--json"],
        &["kill", "frozen"],
    ] {
        let out = sb.cmd(args);
        assert!(!out.status.success(), "{args:?}");
        assert_eq!(
            stderr(&out),
            "hm: session 'frozen' is not responding (its supervisor may be stopped or overloaded)\n",
            "{args:?}"
        );
    }
    // A script still gets the object every session has, as `hm ls --json`
    // lists it: what it runs, and why nothing more is known.
    let out = sb.cmd(&["status", "frozen", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one object");
    assert_eq!(v["error"], "no answer", "{v}");
    assert_eq!(v["command"], serde_json::json!(["sleep", "30"]), "{v}");
    assert_eq!(v["supervisor_pid"], sup.as_raw(), "{v}");
    let listed: serde_json::Value =
        serde_json::from_slice(&sb.cmd(&["ls", "--json"]).stdout).expect("a list");
    assert_eq!(listed[0], v);
    nix::sys::signal::kill(sup, nix::sys::signal::Signal::SIGCONT).expect("continue");
    let out = sb.cmd(&["kill", "frozen"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// A supervisor that wrote its session's record serves no one while it
/// delivers the last EXIT and goes: `hm ls` right after `hm wait` said
/// "no answer" for it. It lists the record. (Stopped here, to hold that
/// moment still.)
#[test]
fn ls_lists_a_session_that_wrote_its_record_as_ended_not_unanswered() {
    let sb = Sandbox::new();
    let s = sb.start("ending", &[], &["sleep", "30"]);
    let sup = nix::unistd::Pid::from_raw(s.child.id() as i32);
    nix::sys::signal::kill(sup, nix::sys::signal::Signal::SIGSTOP).expect("stop");
    let record = serde_json::json!({
        "id": "ending", "command": ["sleep", "30"], "workdir": "/",
        "classifier": "simple", "started_unix_ms": 1, "ended_unix_ms": 2,
        "exit_code": 0, "last_lines": [],
    });
    fs::write(sb.sock_dir.join("ending.ended"), record.to_string()).expect("record");
    let ls = stdout(&sb.cmd(&["ls"]));
    nix::sys::signal::kill(sup, nix::sys::signal::Signal::SIGCONT).expect("continue");
    assert!(
        ls.lines()
            .any(|l| l.starts_with("ending") && l.contains("exited 0")),
        "{ls}"
    );
    assert!(!ls.contains("no answer"), "{ls}");
}

#[test]
fn kill_waits_until_the_session_is_gone() {
    let sb = Sandbox::new();
    let mut s = sb.start("victim", &[], &["sleep", "30"]);
    let out = sb.cmd(&["kill", "victim"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "session 'victim' killed by SIGTERM (exit code 143)\n"
    );
    // Gone by the time the command returned, not some time later.
    assert!(!sb.sock("victim").exists());
    assert!(!sb.sock_dir.join("victim.pid").exists());
    assert_eq!(s.wait_exit(), 143);
    let out = sb.cmd(&["kill", "victim", "--grace=-1"]);
    assert_eq!(out.status.code(), Some(2));
}

/// A program that catches SIGTERM and exits with a code of its own (less
/// exits 15) was killed all the same, as the dashboard and hm ls say.
#[test]
fn kill_says_killed_of_a_program_that_exits_its_own_way() {
    let sb = Sandbox::new();
    let script = "trap 'exit 15' TERM; echo ready; while :; do sleep 0.05; done";
    let mut s = sb.start("pager", &[], &["sh", "-c", script]);
    common::wait_until("the program's trap to be set", || {
        stdout(&sb.cmd(&["logs", "pager"])).contains("ready")
    });
    let out = sb.cmd(&["kill", "pager"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "session 'pager' killed (exit code 15)\n");
    assert_eq!(s.wait_exit(), 15);
    let ls = stdout(&sb.cmd(&["ls"]));
    assert!(ls.contains("killed (exit 15)"), "{ls}");
}

/// An interactive shell ignores SIGTERM: at its prompt it gets the
/// hang-up a closed terminal sends, and ends, where it waited out the
/// whole grace period for SIGKILL. One running a job is left to SIGTERM.
#[test]
fn kill_ends_a_shell_at_its_prompt_with_a_hang_up() {
    let sb = Sandbox::new();
    let mut s = sb.start("sh", &[], &["bash", "--norc", "--noprofile", "-i"]);
    common::wait_until("the shell at its prompt", || {
        let out = sb.cmd(&["status", "sh", "--json"]);
        serde_json::from_slice::<serde_json::Value>(&out.stdout)
            .is_ok_and(|v| v["primary"] == "idle" && v["detail"] == "ready")
    });
    let out = sb.cmd(&["kill", "sh", "--grace", "20"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "session 'sh' killed by SIGHUP (exit code 129)\n"
    );
    assert_eq!(s.wait_exit(), 129);
}

#[test]
fn kill_stops_several_sessions_at_once_and_says_which_it_could_not() {
    let sb = Sandbox::new();
    let mut a = sb.start("a", &[], &["sleep", "30"]);
    let mut b = sb.start("b", &[], &["sleep", "30"]);
    let out = sb.cmd(&["kill", "a", "nope", "b"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(
        said.contains("session 'a' killed by SIGTERM (exit code 143"),
        "{said}"
    );
    assert!(
        said.contains("session 'b' killed by SIGTERM (exit code 143"),
        "{said}"
    );
    assert!(
        stderr(&out).contains("no session named 'nope'"),
        "{}",
        stderr(&out)
    );
    assert_eq!(a.wait_exit(), 143);
    assert_eq!(b.wait_exit(), 143);
}

/// `hm kill --all` stops every running session and leaves those that
/// ended as they are (`hm kill $(hm ls --ids)` failed on each of them).
#[test]
fn kill_all_stops_every_running_session_and_leaves_the_ended() {
    let sb = Sandbox::new();
    let mut a = sb.start("a", &[], &["sleep", "30"]);
    let mut b = sb.start("b", &[], &["sleep", "30"]);
    let out = sb
        .hm()
        .args(["run", "--bg", "--id", "done", "--socket-dir", sb.dir()])
        .args(["--", "sh", "-c", "exit 3"])
        .output()
        .expect("run hm run --bg");
    assert!(out.status.success(), "{}", stderr(&out));
    common::wait_until("it to have ended", || {
        stdout(&sb.cmd(&["ls"])).contains("exited 3")
    });
    let out = sb.cmd(&["kill", "--all"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "session 'a' killed by SIGTERM (exit code 143)\n\
         session 'b' killed by SIGTERM (exit code 143)\n"
    );
    assert_eq!(a.wait_exit(), 143);
    assert_eq!(b.wait_exit(), 143);
    let ls = stdout(&sb.cmd(&["ls"]));
    assert!(ls.contains("done") && ls.contains("exited 3"), "{ls}");
    let again = sb.cmd(&["kill", "--all"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(stdout(&again), "no running sessions\n");
    let both = sb.cmd(&["kill", "--all", "a"]);
    assert_eq!(both.status.code(), Some(2), "{}", stderr(&both));
}

/// On an 80-column terminal every row of `hm ls` takes one line: the
/// command gives way to the id, and only an id too long for that is cut
/// (`…`); `env` with its settings comes off the front of a command;
/// piped, both are whole.
#[test]
fn ls_on_a_narrow_terminal_cuts_a_long_id_to_keep_rows_on_one_line() {
    let sb = Sandbox::new();
    let long = "a-very-long-session-id-for-the-parser-and-its-tests-0123456789";
    let _s = sb.start(long, &[], &["sleep", "30"]);
    // Another that differs from it only at the end.
    let twin = "a-very-long-session-id-for-the-parser-and-its-tests-0123456788";
    let _t = sb.start(twin, &[], &["sleep", "33"]);
    // As long as ids people give get; it was cut to keep 12 columns of
    // the command.
    let medium = "build-frontend-long-name";
    let _m = sb.start(medium, &[], &["sleep", "32"]);
    let env = [
        "env",
        "-u",
        "HOME",
        "ANTHROPIC_BASE_URL=http://127.0.0.1:9/v1",
        "OPENAI_API_KEY=sk-never-shown",
        "sleep",
        "31",
    ];
    let _e = sb.start("with-env", &[], &env);
    let args: Vec<std::ffi::OsString> = ["ls", "--socket-dir", sb.dir()]
        .iter()
        .map(Into::into)
        .collect();
    // `hm ls` on a terminal `cols` wide: its lines.
    let ls_at = |cols: u16| {
        let mut t = common::terminal::Terminal::start(
            common::HM.as_ref(),
            &args,
            &sb.terminal_env(&[]),
            sb.path(),
            (24, cols),
            "$ hm ls",
        );
        t.wait_exit();
        t.lines()
    };
    let row = |lines: &[String], start: &str| {
        lines
            .iter()
            .find(|l| l.starts_with(start))
            .cloned()
            .unwrap_or_else(|| panic!("{lines:?}"))
    };
    let lines = ls_at(80);
    let long_row = lines
        .iter()
        .find(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|i| i.ends_with("6789"))
        })
        .cloned()
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert!(
        long_row.contains('…') && long_row.contains("sleep 30"),
        "{lines:?}"
    );
    // Cut in the middle, as the dashboard cuts it: the two stay apart.
    let ids: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("a-very-"))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(
        ids.len() == 2
            && ids.iter().any(|i| i.ends_with("6789"))
            && ids.iter().any(|i| i.ends_with("6788")),
        "{lines:?}"
    );
    assert!(
        !lines.iter().any(|l| l.trim() == "30"),
        "wrapped: {lines:?}"
    );
    assert!(
        row(&lines, "build-").starts_with(&format!("{medium} ")),
        "{lines:?}"
    );
    let env_row = row(&lines, "with-env");
    assert!(
        env_row.trim_end().ends_with("sleep 31") && !env_row.contains("ANTHROPIC"),
        "{lines:?}"
    );
    // Narrower, the command gives way to it (it was cut to keep 12
    // columns of the command).
    let lines = ls_at(64);
    let medium_row = row(&lines, "build-");
    assert!(medium_row.starts_with(&format!("{medium} ")), "{lines:?}");
    assert!(medium_row.contains("sle"), "{lines:?}");
    let piped = stdout(&sb.cmd(&["ls"]));
    assert!(piped.contains(long), "{piped}");
    // Whole, but for the secret, as `hm status` and `--json` show it.
    let shown = env.join(" ").replace("sk-never-shown", "…");
    assert!(piped.contains(&shown), "{piped}");
    let status = stdout(&sb.cmd(&["status", "with-env"]));
    assert!(status.contains(&shown), "{status}");
    let json = stdout(&sb.cmd(&["ls", "--json"]));
    assert!(json.contains("\"OPENAI_API_KEY=…\""), "{json}");
    assert!(!json.contains("sk-never-shown"), "{json}");
    let _ = sb.cmd(&["kill", long, twin, medium, "with-env"]);
}

/// On an 80-column terminal a long label gives way to the command: it
/// took the whole cell (`[proj2 work on the parser and…`), and the
/// command never showed. Piped, both are whole.
#[test]
fn ls_on_a_narrow_terminal_cuts_a_long_label_before_the_command() {
    let sb = Sandbox::new();
    let label = "proj2 work on the parser and the lexer and the docs";
    let _s = sb.start(
        "lab",
        &["--label", label],
        &["sh", "-c", "sleep 35; echo done with the parser"],
    );
    let args: Vec<std::ffi::OsString> = ["ls", "--socket-dir", sb.dir()]
        .iter()
        .map(Into::into)
        .collect();
    let mut t = common::terminal::Terminal::start(
        common::HM.as_ref(),
        &args,
        &sb.terminal_env(&[]),
        sb.path(),
        (24, 80),
        "$ hm ls",
    );
    t.wait_exit();
    let lines = t.lines();
    let row = lines
        .iter()
        .find(|l| l.starts_with("lab "))
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert!(row.contains("[proj2 work"), "{lines:?}");
    assert!(row.contains("…] sh -c"), "{lines:?}");
    let piped = stdout(&sb.cmd(&["ls"]));
    assert!(
        piped.contains(&format!(
            "[{label}] sh -c 'sleep 35; echo done with the parser'"
        )),
        "{piped}"
    );
}

#[test]
fn version_and_help_are_there_for_every_command() {
    let sb = Sandbox::new();
    let out = sb.hm().arg("--version").output().expect("run");
    assert_eq!(stdout(&out), format!("hm {}\n", env!("CARGO_PKG_VERSION")));
    for cmd in [
        "run", "attach", "status", "ls", "kill", "tui", "explain", "capture", "classify", "replay",
        "wait", "send", "logs",
    ] {
        let out = sb.hm().args(["help", cmd]).output().expect("run");
        assert!(out.status.success(), "{cmd}");
        assert!(stdout(&out).contains("Usage: hm"), "{cmd}");
    }
}

#[test]
fn a_bad_config_names_the_key_and_file_and_starts_nothing() {
    let sb = Sandbox::new();
    let cfg = sb.path().join("bad.toml");
    fs::write(&cfg, "scrollback_bytes = 10\nscroll_back = 5\n").expect("write");
    let out = sb.cmd(&[
        "run",
        "--detach",
        "--config",
        cfg.to_str().expect("utf8"),
        "--id",
        "x",
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("bad.toml:2"), "{err}");
    assert!(err.contains("'scroll_back'"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!sb.sock_dir.exists());
    // The same file found by the search path: ./heimdall.toml.
    fs::write(sb.path().join("heimdall.toml"), "classifier = \"clever\"\n").expect("write");
    let err = stderr(&sb.cmd(&["ls"]));
    assert!(
        err.contains("heimdall.toml:1") && err.contains("classifier"),
        "{err}"
    );
}

#[test]
fn a_terminal_of_no_columns_or_rows_is_refused_and_starts_nothing() {
    let sb = Sandbox::new();
    for flag in ["--cols", "--rows"] {
        let out = sb.cmd(&["run", "--detach", "--id", "z", flag, "0", "--", "true"]);
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let err = stderr(&out);
        assert!(err.contains(flag) && err.contains("1..=65535"), "{err}");
        assert!(!sb.sock_dir.exists(), "{flag}: nothing started");
    }
}

#[test]
fn flags_override_the_config_file() {
    let sb = Sandbox::new();
    fs::write(
        sb.path().join("heimdall.toml"),
        "[classifier.claude]\nidle_threshold_ms = 9000\n",
    )
    .expect("write");
    let s = sb.start(
        "ov",
        &["--idle-threshold-ms", "150"],
        &["sh", "-c", "echo hi; sleep 30"],
    );
    // The threshold from the flag (150 ms) applies to the file's
    // classifier: the session turns idle long before 9 s.
    let mut raw = s.raw();
    raw.send(ClientType::Subscribe as u8, &[]);
    raw.output_until(b"hi");
    common::wait_until("300 ms of silence", || {
        s.raw().status().is_some_and(|st| st.idle_ms >= 300)
    });
    let st = s.raw().status().expect("status");
    assert!(st.idle_ms < 9000);
    assert_eq!(st.state, 0x00, "idle after 150 ms, not 9 s");
}

/// The ids `hm ls --ids` prints are what bash (and zsh) complete after a command
/// that takes one (in real bash, with the script `hm completions bash`
/// prints), and not after one that does not.
#[test]
fn shells_complete_the_ids_of_the_sessions_there_are() {
    let sb = Sandbox::new();
    // The completion asks plain `hm ls --ids`: the socket dir comes from
    // the config file in the directory the shell is in.
    let config = format!("socket_dir = \"{}\"\n", sb.sock_dir.display());
    fs::write(sb.path().join("heimdall.toml"), config).expect("config");
    let _a = sb.start("alpha", &[], &["sleep", "600"]);
    let _b = sb.start("beta", &[], &["sleep", "600"]);
    let _d = sb.start("done", &[], &["sh", "-c", "sleep 1; exit 3"]);
    common::wait_until("done to end", || sb.status_json("done")["ended"] == true);
    let out = sb.hm().args(["ls", "--ids"]).output().expect("hm ls --ids");
    assert_eq!(stdout(&out), "alpha\nbeta\ndone\n", "{}", stderr(&out));
    let script = stdout(&sb.hm().args(["completions", "bash"]).output().expect("run"));
    let bin = std::path::Path::new(common::HM).parent().expect("hm's dir");
    let complete = |words: &str| -> String {
        let body = format!(
            "{script}\nCOMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); COMPREPLY=(); _hm_with_ids; echo \"${{COMPREPLY[*]}}\""
        );
        let out = std::process::Command::new("bash")
            .args(["--norc", "-c", &body])
            .hm_env(&sb)
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .current_dir(sb.path())
            .output()
            .expect("bash");
        assert!(out.status.success(), "{}", stderr(&out));
        // Seen once in a full run, not since: nothing completed. What
        // `hm ls --ids` said then is shown with the failure.
        if stdout(&out).trim().is_empty() {
            let ls = std::process::Command::new("bash")
                .args(["--norc", "-c", "hm ls --ids; echo \"exit $?\""])
                .hm_env(&sb)
                .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
                .current_dir(sb.path())
                .output()
                .expect("bash");
            eprintln!(
                "{words}: hm ls --ids said {:?} {:?}",
                stdout(&ls),
                stderr(&ls)
            );
        }
        stdout(&out).trim().to_string()
    };
    assert_eq!(complete("hm attach al"), "alpha");
    assert_eq!(
        complete("hm kill ''").split(' ').collect::<Vec<_>>(),
        ["alpha", "beta"]
    );
    // Each command is offered the sessions it acts on: the ended to `hm
    // rm` and `hm restart`, not to `hm attach`; all of them to `hm status`.
    assert_eq!(complete("hm attach ''"), "alpha beta");
    assert_eq!(complete("hm rm ''"), "done");
    assert_eq!(complete("hm restart ''"), "done");
    assert_eq!(complete("hm status ''"), "alpha beta done");
    assert!(
        !complete("hm run al").contains("alpha"),
        "run takes a new id"
    );
    // Where the id goes, and only there: not as an option's value, nor as
    // what `hm send` types once the id is given; `choose` and `continue`
    // take one too; the socket dir given before the command is the one
    // looked in.
    assert_eq!(complete("hm wait alpha --state ''"), "");
    assert_eq!(complete("hm wait --state ''"), "");
    assert_eq!(complete("hm send alpha ''"), "");
    assert_eq!(complete("hm choose al"), "alpha");
    assert_eq!(complete("hm continue b"), "beta");
    assert_eq!(complete("hm logs -C 2 b"), "beta");
    assert_eq!(complete("hm kill alpha b"), "beta", "kill takes several");
    assert_eq!(
        complete("hm kill alpha ''"),
        "beta",
        "a given id is not offered again"
    );
    assert_eq!(
        complete("hm attach alpha"),
        "alpha",
        "the word typed is not given yet"
    );
    let elsewhere = sb.path().join("elsewhere");
    let mut c = sb.hm();
    c.args(["run", "--detach", "--id", "gamma", "--socket-dir"])
        .arg(&elsewhere)
        .args(["--", "sleep", "600"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let _g = common::Session {
        child: c.spawn().expect("spawn hm run"),
        pid_file: elsewhere.join("gamma.pid"),
        sock: elsewhere.join("gamma.sock"),
    };
    common::wait_until("gamma to answer", || {
        common::Raw::connect(&elsewhere.join("gamma.sock")).is_ok_and(|mut r| r.status().is_some())
    });
    let there = elsewhere.display();
    assert_eq!(
        complete(&format!("hm --socket-dir {there} status ''")),
        "gamma"
    );
    assert_eq!(
        complete(&format!("hm status --socket-dir={there} ''")),
        "gamma"
    );
    // Fish gets the same ids, where the same rules let them.
    let fish = stdout(&sb.hm().args(["completions", "fish"]).output().expect("run"));
    assert!(
        fish.contains("complete -c hm -n '__hm_id_wanted' -f -a '(__hm_ids)'"),
        "{fish}"
    );
    if std::process::Command::new("fish")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        let file = sb.path().join("hm.fish");
        fs::write(&file, &fish).expect("write the script");
        let complete = |line: &str| -> String {
            let body = format!("source {}; complete -C '{line}'", file.display());
            let out = std::process::Command::new("fish")
                .args(["--no-config", "-c", &body])
                .hm_env(&sb)
                .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
                .current_dir(sb.path())
                .output()
                .expect("fish");
            let mut words: Vec<String> = stdout(&out)
                .lines()
                .map(|l| l.split('\t').next().unwrap_or_default().to_owned())
                .filter(|w| ["alpha", "beta", "gamma", "done"].contains(&w.as_str()))
                .collect();
            words.sort();
            words.join(" ")
        };
        assert_eq!(complete("hm attach "), "alpha beta");
        assert_eq!(complete(&format!("hm --socket-dir {there} rm ")), "");
        assert_eq!(complete("hm rm "), "done");
        assert_eq!(complete("hm wait alpha --state "), "");
        assert_eq!(complete("hm send alpha "), "");
        assert_eq!(complete("hm continue "), "alpha beta");
        assert_eq!(complete("hm kill beta "), "alpha", "beta is given already");
        assert_eq!(
            complete(&format!("hm --socket-dir {there} status ")),
            "gamma"
        );
    } else {
        println!("skipped the fish half: fish is not installed");
    }
    // And zsh: its script parses, names the ids' function for the commands
    // that take ids, and the function offers them.
    let zsh = stdout(&sb.hm().args(["completions", "zsh"]).output().expect("run"));
    assert!(zsh.contains("':id -- Session id:_hm_session_ids'"), "{zsh}");
    if !std::process::Command::new("zsh")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        println!("skipped the zsh half: zsh is not installed");
        return;
    }
    let file = sb.path().join("_hm");
    fs::write(&file, &zsh).expect("write the script");
    let body = format!(
        "autoload -Uz compinit && compinit -u -D; compdef() {{ : }}; source {}; \
         compadd() {{ shift; print -l -- ${{(P)1}} }}; BUFFER='hm attach '; _hm_session_ids; \
         BUFFER='hm --socket-dir {there} attach '; _hm_session_ids; \
         BUFFER='hm kill alpha '; _hm_session_ids; BUFFER='hm kill alpha'; _hm_session_ids; \
         BUFFER='hm rm '; _hm_session_ids",
        file.display()
    );
    let out = std::process::Command::new("zsh")
        .args(["-f", "-c", &body])
        .hm_env(&sb)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .current_dir(sb.path())
        .output()
        .expect("zsh");
    // `hm kill alpha ` offers beta alone; `hm kill alpha` (alpha still
    // being typed) offers both; `hm rm ` the one that ended.
    assert_eq!(
        stdout(&out),
        "alpha\nbeta\ngamma\nbeta\nalpha\nbeta\ndone\n",
        "{}",
        stderr(&out)
    );
}

#[test]
fn completions_and_the_man_page_come_from_the_command_line_definition() {
    let sb = Sandbox::new();
    // A broken config does not stop them: they describe hm itself.
    std::fs::write(sb.path().join("heimdall.toml"), "classifier = 7\n").expect("config");
    for (shell, mark) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef hm"),
        ("fish", "complete -c hm"),
    ] {
        let out = sb.hm().args(["completions", shell]).output().expect("run");
        assert!(out.status.success(), "{shell}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains(mark), "{shell}: {text}");
        assert!(text.contains("wait"), "{shell} completes the subcommands");
    }
    let out = sb.hm().args(["completions", "tcsh"]).output().expect("run");
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
    let out = sb.hm().arg("man").output().expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    let man = stdout(&out);
    assert!(man.starts_with(".ie") || man.contains(".TH hm"), "{man}");
    assert!(man.contains("completions"), "{man}");
}

/// `HM_SOCKET_DIR` stands for `--socket-dir` in every command, a flag
/// given as well wins (before or after the command's name), an empty one is as if unset, and a session's
/// program inherits it: `hm ls` run inside the session finds the session.
#[test]
fn hm_socket_dir_in_the_environment_stands_for_the_flag() {
    let sb = Sandbox::new();
    let with_env = |dir: &std::path::Path, args: &[&str]| {
        let mut c = sb.hm();
        c.env("HM_SOCKET_DIR", dir).args(args);
        c.output().expect("run hm")
    };
    let mut c = sb.hm();
    c.env("HM_SOCKET_DIR", &sb.sock_dir)
        .args(["run", "--detach", "--id", "nested", "--", "sh", "-c"])
        .arg(format!("'{}' ls; exec sleep 60", common::HM))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let _session = common::Session {
        child: c.spawn().expect("spawn hm run"),
        pid_file: sb.sock_dir.join("nested.pid"),
        sock: sb.sock("nested"),
    };
    // The program's own `hm ls` found its session: it is in the log.
    common::wait_until("hm ls inside the session to list it", || {
        let out = with_env(&sb.sock_dir, &["logs", "nested"]);
        stdout(&out)
            .lines()
            .any(|l| l.starts_with("nested ") && l.contains("sh -c"))
    });
    let listed = |out: std::process::Output| stdout(&out).contains("nested");
    assert!(listed(with_env(&sb.sock_dir, &["ls"])));
    let elsewhere = sb.path().join("elsewhere");
    assert!(!listed(with_env(&elsewhere, &["ls"])));
    let dir = sb.dir();
    assert!(listed(with_env(&elsewhere, &["ls", "--socket-dir", dir])));
    // Before the command's name as well, for every command that finds
    // sessions; after it is the nearer word and wins.
    assert!(listed(with_env(&elsewhere, &["--socket-dir", dir, "ls"])));
    let out = with_env(&elsewhere, &["--socket-dir", dir, "status", "nested"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let other = elsewhere.to_str().expect("utf-8");
    assert!(!listed(with_env(
        &sb.sock_dir,
        &["--socket-dir", dir, "ls", "--socket-dir", other]
    )));
    // Empty: the default dir under XDG_RUNTIME_DIR, which holds nothing.
    let out = with_env(std::path::Path::new(""), &["ls"]);
    assert!(stderr(&out).contains("no sessions"), "{}", stderr(&out));
    // Started with the flag, not the variable: its program is given the
    // variable all the same, and its `hm ls` finds it.
    let inner = format!("'{}' ls; exec sleep 60", common::HM);
    let _flagged = sb.start("flagged", &[], &["sh", "-c", &inner]);
    common::wait_until("hm ls inside the flagged session to list it", || {
        stdout(&sb.cmd(&["logs", "flagged"]))
            .lines()
            .any(|l| l.starts_with("flagged "))
    });
}

/// `hm ls --state waiting` lists the sessions that need you, and only
/// them; any state, and how a session stopped, filters the same way.
#[test]
fn ls_state_lists_only_the_sessions_in_that_state() {
    let sb = Sandbox::new();
    let _ask = sb.start(
        "ask",
        &[],
        &[
            "sh",
            "-c",
            "printf 'Continue? [y/N] '; read a; exec sleep 30",
        ],
    );
    let _calm = sb.start("calm", &[], &["sleep", "30"]);
    let mut done = sb.spawn("done", &[], &["true"]);
    assert_eq!(done.wait_exit(), 0);
    common::wait_until("ask to wait", || {
        stdout(&sb.cmd(&["ls", "--state", "waiting", "--ids"])) == "ask\n"
    });
    let table = stdout(&sb.cmd(&["ls", "--state", "waiting"]));
    assert!(
        table.starts_with("ID ") && table.contains("\nask "),
        "{table}"
    );
    assert!(
        !table.contains("calm") && !table.contains("done"),
        "{table}"
    );
    // The words `hm wait --state` takes, too: an end by either name, and
    // a detail.
    for ended in ["ended", "exited"] {
        assert_eq!(
            stdout(&sb.cmd(&["ls", "--state", ended, "--ids"])),
            "done\n"
        );
    }
    assert_eq!(
        stdout(&sb.cmd(&["ls", "--state", "input", "--ids"])),
        "ask\n"
    );
    let out = sb.cmd(&["wait", "done", "--state", "ended", "--timeout", "5"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json = sb.cmd(&["ls", "--state", "idle", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    assert_eq!(v.as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(v[0]["id"], "calm");
    let none = sb.cmd(&["ls", "--state", "stuck"]);
    assert!(none.status.success());
    assert!(
        stderr(&none).starts_with("no stuck sessions in "),
        "{}",
        stderr(&none)
    );
    let bad = sb.cmd(&["ls", "--state", "busy"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
}

/// `hm label` renames a running session: `hm ls` says the new label, so
/// does what `hm restore` keeps and the record of its end; no text takes
/// it away; a label that is not one is refused in one line, as a mistake
/// (exit 2), before anything is asked.
#[test]
fn hm_label_renames_a_running_session() {
    let sb = Sandbox::new();
    let _s = sb.start("job", &["--label", "first"], &["sleep", "600"]);
    let out = sb.cmd(&["label", "job", "review", "PR", "42"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "job: review PR 42\n");
    let ls = stdout(&sb.cmd(&["ls"]));
    assert!(ls.contains("[review PR 42] sleep 600"), "{ls}");
    common::wait_until("the label in what hm restore keeps", || {
        fs::read_to_string(sb.sessions_state().join("job.json"))
            .is_ok_and(|m| m.contains("\"label\": \"review PR 42\""))
    });
    let long = "x".repeat(61);
    let bad = sb.cmd(&["label", "job", &long]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert_eq!(stderr(&bad).lines().count(), 1, "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("at most 60 characters"),
        "{}",
        stderr(&bad)
    );
    let none = sb.cmd(&["label", "job"]);
    assert_eq!(stdout(&none), "job: no label\n", "{}", stderr(&none));
    let ls = stdout(&sb.cmd(&["ls"]));
    assert!(!ls.contains('['), "{ls}");
    let out = sb.cmd(&["label", "job", "kept after the end"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let killed = sb.cmd(&["kill", "job"]);
    assert!(killed.status.success(), "{}", stderr(&killed));
    let ls = stdout(&sb.cmd(&["ls"]));
    assert!(ls.contains("[kept after the end] sleep 600"), "{ls}");
    let gone = sb.cmd(&["label", "job", "late"]);
    assert!(!gone.status.success());
    assert_eq!(stderr(&gone).lines().count(), 1, "{}", stderr(&gone));
}

/// A secret on the command line (`KEY=...` for `env`, `--api-key X`) is
/// `…` in `hm ls`, `hm status` and their JSON alike: the JSON carried it
/// whole, to be pasted into a bug report.
#[test]
fn secrets_in_the_command_are_hidden_in_json_as_in_text() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "sec",
        &[],
        &[
            "env",
            "OPENAI_API_KEY=sk-live-42",
            "sh",
            "-c",
            "sleep 30",
            "--api-key",
            "sk-other-7",
        ],
    );
    let outputs = [
        sb.cmd(&["ls"]),
        sb.cmd(&["ls", "--json"]),
        sb.cmd(&["status", "sec"]),
        sb.cmd(&["status", "sec", "--json"]),
    ];
    assert!(
        stdout(&outputs[2]).contains("state:    idle"),
        "still running"
    );
    for out in &outputs {
        let text = stdout(out);
        assert!(out.status.success(), "{}", stderr(out));
        assert!(text.contains("OPENAI_API_KEY=…"), "{text}");
        assert!(
            !text.contains("sk-live-42") && !text.contains("sk-other-7"),
            "{text}"
        );
    }
    let v: serde_json::Value = serde_json::from_slice(&outputs[3].stdout).expect("status --json");
    assert_eq!(
        v["command"],
        serde_json::json!([
            "env",
            "OPENAI_API_KEY=…",
            "sh",
            "-c",
            "sleep 30",
            "--api-key",
            "…"
        ])
    );
}
