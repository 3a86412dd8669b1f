//! `hm run --detach` as a process: start-up checks, files and modes,
//! exit codes, signals, kill escalation and lifecycle edge cases.

use crate::common;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{Raw, Sandbox, sleepers, stderr, stdout, wait_until};
use heimdall::protocol::ClientType;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

fn files_in(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .map(|r| {
            r.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn run_detached(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    let mut c = sb.hm();
    c.args(["run", "--detach"])
        .arg("--socket-dir")
        .arg(&sb.sock_dir)
        .args(args);
    c.output().expect("run")
}

#[test]
fn a_missing_command_exits_127_and_leaves_nothing_behind() {
    let sb = Sandbox::new();
    let out = run_detached(&sb, &["--id", "x", "--", "nosuchcmd-xyz"]);
    assert_eq!(out.status.code(), Some(127));
    assert_eq!(
        stderr(&out),
        "hm: cannot run 'nosuchcmd-xyz': No such file or directory\n"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(files_in(&sb.sock_dir), Vec::<String>::new());
}

#[test]
fn a_command_that_cannot_be_executed_exits_126() {
    let sb = Sandbox::new();
    let script = sb.path().join("not-exec.sh");
    fs::write(&script, "#!/bin/sh\necho hi\n").expect("write");
    fs::set_permissions(&script, fs::Permissions::from_mode(0o644)).expect("chmod");
    let out = run_detached(&sb, &["--id", "x", "--", script.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(126));
    assert!(
        stderr(&out).contains("Permission denied"),
        "{}",
        stderr(&out)
    );
    assert_eq!(files_in(&sb.sock_dir), Vec::<String>::new());
}

#[test]
fn the_supervisor_exits_with_the_childs_code() {
    let sb = Sandbox::new();
    let mut s = sb.spawn("code", &[], &["sh", "-c", "exit 5"]);
    let code = s.wait_exit();
    assert_eq!(code, 5, "{}", s.stderr());
    let mut s = sb.spawn("sig", &[], &["sh", "-c", "kill -9 $$"]);
    assert_eq!(s.wait_exit(), 137);
    assert_eq!(
        files_in(&sb.sock_dir),
        vec!["code.ended", "code.log", "sig.ended", "sig.log"]
    );
}

#[test]
fn detach_without_an_id_or_dashes_says_the_name_it_chose() {
    let sb = Sandbox::new();
    // No `--`: the first word that is not an option of hm starts the command.
    let start = |program: &str| {
        let mut c = sb.hm();
        c.args(["run", "--detach", "--socket-dir", sb.dir(), program, "30"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        c.spawn().expect("spawn hm run")
    };
    let mut sessions = Vec::new();
    for (program, id) in [("sleep", "sleep"), ("/bin/sleep", "sleep-2")] {
        sessions.push(common::Session {
            child: start(program),
            pid_file: sb.sock_dir.join(format!("{id}.pid")),
            sock: sb.sock(id),
        });
        let sock = sb.sock(id);
        wait_until("the session to answer", || {
            Raw::connect(&sock).is_ok_and(|mut r| r.status().is_some())
        });
    }
    for (s, id) in sessions.iter_mut().zip(["sleep", "sleep-2"]) {
        let out = sb.cmd(&["kill", id, "--grace", "0"]);
        assert!(out.status.success(), "{}", stderr(&out));
        s.wait_exit();
        assert_eq!(s.stderr(), format!("session id: {id}\n"));
    }
}

#[test]
fn detached_runs_without_an_id_started_together_take_different_names() {
    let sb = Sandbox::new();
    // Started at once, each with its guard under the name it should get.
    let mut sessions: Vec<common::Session> = ["sleep", "sleep-2", "sleep-3"]
        .into_iter()
        .map(|id| {
            let mut c = sb.hm();
            c.args(["run", "--detach", "--socket-dir", sb.dir(), "sleep", "30"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped());
            common::Session {
                child: c.spawn().expect("spawn hm run"),
                pid_file: sb.sock_dir.join(format!("{id}.pid")),
                sock: sb.sock(id),
            }
        })
        .collect();
    for s in &sessions {
        wait_until("every name taken", || {
            Raw::connect(&s.sock).is_ok_and(|mut r| r.status().is_some())
        });
    }
    for s in &mut sessions {
        assert!(
            s.child.try_wait().expect("wait").is_none(),
            "{}",
            s.stderr()
        );
    }
}

#[test]
fn hostile_ids_are_refused_before_anything_is_created() {
    let sb = Sandbox::new();
    for id in [
        "../x",
        "a/b",
        ".hidden",
        "-flag",
        "a b",
        "x\u{1b}[2J",
        &"a".repeat(65),
        "",
    ] {
        let out = run_detached(&sb, &[&format!("--id={id}"), "--", "true"]);
        // The command line's mistake, as a value clap refuses.
        assert_eq!(out.status.code(), Some(2), "{id:?}");
        let err = stderr(&out);
        assert!(err.starts_with("hm: invalid session id"), "{err}");
        assert!(
            !err.contains('\u{1b}'),
            "control characters must not be echoed"
        );
        assert!(!sb.sock_dir.exists());
    }
}

#[test]
fn an_overlong_socket_path_is_refused_before_the_fork() {
    let sb = Sandbox::new();
    let deep = sb.path().join("d".repeat(60)).join("e".repeat(30));
    let mut c = sb.hm();
    c.args(["run", "--detach", "--id", "marker-overlong", "--socket-dir"])
        .arg(&deep)
        .args(["--", "sh", "-c", "touch ran-anyway"]);
    let out = c.output().expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("over the 107-byte limit"),
        "{}",
        stderr(&out)
    );
    assert!(!deep.exists());
    assert!(!sb.path().join("ran-anyway").exists());
}

#[test]
fn files_are_private_whatever_the_umask() {
    let sb = Sandbox::new();
    let mut c = Command::new("sh");
    c.current_dir(sb.path())
        .env("HOME", sb.path())
        .arg("-c")
        .arg(format!(
            "umask 000; exec {} run --detach --id um --socket-dir {} -- sleep 30",
            common::HM,
            sb.sock_dir.join("nested").display()
        ));
    let child = c.spawn().expect("spawn");
    let _guard = common::Session {
        child,
        pid_file: sb.sock_dir.join("nested/um.pid"),
        sock: sb.sock_dir.join("nested/um.sock"),
    };
    let sock = sb.sock_dir.join("nested/um.sock");
    wait_until("socket", || Raw::connect(&sock).is_ok());
    for (path, mode) in [
        (sb.sock_dir.clone(), 0o700),
        (sb.sock_dir.join("nested"), 0o700),
        (sb.sock_dir.join("nested/um.sock"), 0o600),
        (sb.sock_dir.join("nested/um.pid"), 0o600),
        (sb.sock_dir.join("nested/um.log"), 0o600),
    ] {
        let m = fs::metadata(&path).expect("stat").permissions().mode() & 0o777;
        assert_eq!(m, mode, "{}", path.display());
    }
}

#[test]
fn a_socket_dir_others_can_enter_is_refused_with_the_fix() {
    let sb = Sandbox::new();
    fs::create_dir(&sb.sock_dir).expect("mkdir");
    fs::set_permissions(&sb.sock_dir, fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = run_detached(&sb, &["--id", "open", "--", "true"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("accessible by other users"), "{err}");
    assert!(err.contains("chmod 700"), "{err}");
    assert_eq!(files_in(&sb.sock_dir), Vec::<String>::new());
}

#[test]
fn a_shared_socket_dir_is_refused_without_advice_to_chmod_it() {
    let sb = Sandbox::new();
    fs::create_dir(&sb.sock_dir).expect("mkdir");
    // Like /tmp: sticky and writable by everyone.
    fs::set_permissions(&sb.sock_dir, fs::Permissions::from_mode(0o1777)).expect("chmod");
    let out = run_detached(&sb, &["--id", "shared", "--", "true"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("is a shared directory (mode 1777)"), "{err}");
    assert!(!err.contains("chmod"), "{err}");
    assert_eq!(files_in(&sb.sock_dir), Vec::<String>::new());
}

#[test]
fn a_socket_dir_owned_by_someone_else_is_refused() {
    if !nix::unistd::geteuid().is_root() {
        return; // Only root can make a directory owned by another user.
    }
    let sb = Sandbox::new();
    fs::create_dir(&sb.sock_dir).expect("mkdir");
    fs::set_permissions(&sb.sock_dir, fs::Permissions::from_mode(0o700)).expect("chmod");
    nix::unistd::chown(&sb.sock_dir, Some(nix::unistd::Uid::from_raw(65534)), None).expect("chown");
    let out = run_detached(&sb, &["--id", "foreign", "--", "true"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("owned by uid 65534"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_planted_symlink_is_never_followed() {
    let sb = Sandbox::new();
    fs::create_dir(&sb.sock_dir).expect("mkdir");
    fs::set_permissions(&sb.sock_dir, fs::Permissions::from_mode(0o700)).expect("chmod");
    let victim = sb.path().join("victim");
    fs::write(&victim, "precious").expect("write");
    std::os::unix::fs::symlink(&victim, sb.sock_dir.join("ln.pid")).expect("symlink");
    let out = run_detached(&sb, &["--id", "ln", "--", "true"]);
    assert_ne!(out.status.code(), Some(0));
    assert_eq!(fs::read_to_string(&victim).expect("read"), "precious");
    std::os::unix::fs::symlink(&victim, sb.sock_dir.join("ln2.log")).expect("symlink");
    let out = run_detached(&sb, &["--id", "ln2", "--", "true"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("ln2.log"), "{}", stderr(&out));
    assert_eq!(fs::read_to_string(&victim).expect("read"), "precious");
}

#[test]
fn of_concurrent_starts_of_one_id_exactly_one_wins() {
    let sb = Sandbox::new();
    // Unique to this test process, so parallel runs cannot see each other.
    let marker = &format!("7777.{}", std::process::id());
    let mut sessions: Vec<_> = (0..8)
        .map(|_| sb.spawn("race", &[], &["sleep", marker]))
        .collect();
    wait_until("one winner", || Raw::connect(&sb.sock("race")).is_ok());
    // Every loser exits on its own, with an explanation.
    wait_until("the losers to exit", || {
        let mut exited = 0;
        for s in sessions.iter_mut() {
            if s.child.try_wait().expect("try_wait").is_some() {
                exited += 1;
            }
        }
        exited == 7
    });
    let mut winners = 0;
    for s in &mut sessions {
        match s.child.try_wait().expect("try_wait") {
            Some(status) => {
                assert_eq!(status.code(), Some(1));
                let err = s.stderr();
                assert!(err.contains("already running"), "{err}");
            }
            None => winners += 1,
        }
    }
    assert_eq!(winners, 1);
    assert_eq!(sleepers(marker).len(), 1, "no orphan children");
}

#[test]
fn stale_files_of_a_killed_supervisor_do_not_block_a_new_run() {
    let sb = Sandbox::new();
    let mut s = sb.start("stale", &[], &["sleep", "30"]);
    kill(Pid::from_raw(s.child.id() as i32), Signal::SIGKILL).expect("kill");
    s.wait_exit();
    assert!(
        sb.sock("stale").exists(),
        "a SIGKILLed supervisor leaves its socket"
    );
    let again = sb.start("stale", &[], &["sleep", "30"]);
    assert!(again.raw().status().is_some_and(|st| st.alive));
}

#[test]
fn a_program_outliving_its_killed_supervisor_is_reported_until_it_ends() {
    let sb = Sandbox::new();
    let marker = format!("5007.{}", std::process::id());
    let program = common::orphan(&sb, "orphan", &marker);
    let pid = program.pid;

    let ls = sb.cmd(&["ls"]);
    assert!(ls.status.success());
    let (out, err) = (common::stdout(&ls), stderr(&ls));
    let row = out.lines().find(|l| l.starts_with("orphan ")).expect(&out);
    assert!(
        row.contains(&pid.to_string()) && row.contains("orphaned"),
        "{row}"
    );
    assert!(
        row.contains(&marker),
        "the command comes from the kernel: {row}"
    );
    assert!(err.contains(&format!("kill {pid}")), "{err}");
    let json = common::stdout(&sb.cmd(&["ls", "--json"]));
    let listed: serde_json::Value = serde_json::from_str(&json).expect(&json);
    let entry = &listed[0];
    assert_eq!(entry["orphaned"], true, "{json}");
    // What it runs is kept for `hm restore`, though no supervisor says it.
    assert_eq!(
        entry["command"][2],
        format!("trap '' HUP; exec sleep {marker}")
    );
    assert!(entry["workdir"].is_string() && entry["started_unix_ms"].is_u64());
    assert!(entry["supervisor_pid"].is_null(), "its supervisor is gone");
    // `hm status --json` gives the same object, not an empty stdout.
    let status = sb.cmd(&["status", "orphan", "--json"]);
    assert!(status.status.success(), "{}", stderr(&status));
    let one: serde_json::Value = serde_json::from_slice(&status.stdout).expect("one object");
    assert_eq!(&one, entry);
    // And its text says the same, as known (it said only an error, and
    // exited 1 where the JSON exited 0).
    let status = sb.cmd(&["status", "orphan"]);
    assert!(status.status.success(), "{}", stderr(&status));
    let text = stdout(&status);
    assert!(
        text.contains(&format!(
            "state:    orphaned: its supervisor is gone; its program (pid {pid}) runs on"
        )) && text.contains("(hm kill orphan stops it)")
            && text.contains("exec sleep"),
        "{text}"
    );
    assert_eq!(
        files_in(&sb.sock_dir),
        vec!["orphan.log", "orphan.pid"],
        "the dead socket goes, the record of the program stays"
    );
    assert_eq!(sleepers(&marker), vec![pid], "never signalled by hm");

    kill(Pid::from_raw(pid), Signal::SIGKILL).expect("kill the program");
    wait_until("the program to end", || sleepers(&marker).is_empty());
    let ls = sb.cmd(&["ls"]);
    // Not running, not orphaned: only lost, from its manifest (kept for
    // `hm restore`).
    let out = common::stdout(&ls);
    assert!(
        out.lines()
            .skip(1)
            .all(|l| l.starts_with("orphan ") && l.contains(" lost ")),
        "{out}"
    );
    assert_eq!(files_in(&sb.sock_dir), vec!["orphan.log"]);
}

#[test]
fn a_new_session_taking_an_orphans_id_says_what_it_replaces() {
    let sb = Sandbox::new();
    let marker = format!("5008.{}", std::process::id());
    let program = common::orphan(&sb, "again", &marker);
    let pid = program.pid;
    let mut s = sb.start("again", &[], &["sleep", "30"]);
    let out = sb.cmd(&["kill", "again"]);
    assert!(out.status.success(), "{}", stderr(&out));
    s.wait_exit();
    let said = s.stderr();
    assert!(said.contains(&format!("kill {pid}")), "{said}");
    assert_eq!(sleepers(&marker), vec![pid], "never signalled by hm");
    kill(Pid::from_raw(pid), Signal::SIGKILL).expect("kill the program");
    wait_until("the program to end", || sleepers(&marker).is_empty());
}

#[test]
fn a_pid_file_naming_live_processes_but_unlocked_is_stale() {
    let sb = Sandbox::new();
    fs::create_dir(&sb.sock_dir).expect("mkdir");
    fs::set_permissions(&sb.sock_dir, fs::Permissions::from_mode(0o700)).expect("chmod");
    // PIDs that exist (init, ourselves) but hold no lock: after a reboot
    // or PID reuse this is what a stale file looks like.
    fs::write(
        sb.sock_dir.join("reuse.pid"),
        format!("1\n{}\n", std::process::id()),
    )
    .expect("write");
    let s = sb.start("reuse", &[], &["sleep", "30"]);
    assert!(s.raw().status().is_some_and(|st| st.alive));
}

#[test]
fn signals_ignored_where_hm_was_started_are_not_ignored_in_the_session() {
    let sb = Sandbox::new();
    // A script's background job runs with SIGINT and SIGQUIT ignored; so
    // does a supervisor it starts.
    let hm = sb.hm();
    let mut c = Command::new("sh");
    c.args(["-c", "trap '' INT QUIT HUP; exec \"$@\"", "sh", common::HM])
        .args(["run", "--detach", "--id", "ign", "--socket-dir", sb.dir()])
        .args([
            "--",
            "sh",
            "-c",
            "grep SigIgn /proc/self/status; exec sleep 30",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (k, v) in hm.get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    let s = common::Session {
        child: c.spawn().expect("spawn"),
        pid_file: sb.sock_dir.join("ign.pid"),
        sock: sb.sock("ign"),
    };
    wait_until("the session to answer", || {
        Raw::connect(&s.sock).is_ok_and(|mut r| r.status().is_some())
    });
    let mut r = s.raw();
    r.send(ClientType::Subscribe as u8, &[]);
    let out = String::from_utf8_lossy(&r.output_until(b"\r\n")).into_owned();
    assert!(out.contains("SigIgn:\t0000000000000000"), "{out:?}");
}

#[test]
#[allow(unsafe_code)]
fn sigchld_ignored_where_hm_was_started_does_not_lose_the_exit_code() {
    use std::os::unix::process::CommandExt;
    let sb = Sandbox::new();
    // Ignoring SIGCHLD survives exec. In the supervisor it would have the
    // kernel reap a quick program before anyone read its exit code (which
    // then came out as 1). The program must end before the supervisor's
    // runtime handles SIGCHLD, which a few runs in a hundred do.
    for i in 0..100 {
        let mut c = sb.hm();
        c.args(["run", "--detach", "--id", &format!("quick{i}")])
            .args(["--socket-dir", sb.dir(), "--", "true"]);
        // SAFETY: runs in the forked child before exec; signal(2) is
        // async-signal-safe and SIG_IGN installs no handler.
        unsafe {
            c.pre_exec(|| {
                nix::sys::signal::signal(Signal::SIGCHLD, nix::sys::signal::SigHandler::SigIgn)
                    .map(drop)
                    .map_err(std::io::Error::from)
            });
        }
        let out = c.output().expect("run hm");
        assert_eq!(out.status.code(), Some(0), "run {i}: {}", stderr(&out));
    }
}

/// Signals blocked where hm was started are blocked neither in the
/// supervisor (SIGTERM stops it) nor in the session's program (whose
/// SIGINT is Ctrl-C).
#[test]
#[allow(unsafe_code)]
fn signals_blocked_where_hm_was_started_are_not_blocked_in_the_session() {
    use std::os::unix::process::CommandExt;
    let sb = Sandbox::new();
    let mut c = sb.hm();
    c.args(["run", "--detach", "--id", "blk", "--socket-dir", sb.dir()])
        .args([
            "--",
            "sh",
            "-c",
            "grep SigBlk /proc/self/status; exec sleep 30",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // SAFETY: runs in the forked child before exec; sigprocmask is
    // async-signal-safe and the set is built before the fork.
    let mut set = nix::sys::signal::SigSet::empty();
    for sig in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        set.add(sig);
    }
    unsafe {
        c.pre_exec(move || set.thread_block().map_err(std::io::Error::from));
    }
    let mut s = common::Session {
        child: c.spawn().expect("spawn"),
        pid_file: sb.sock_dir.join("blk.pid"),
        sock: sb.sock("blk"),
    };
    wait_until("the session to answer", || {
        Raw::connect(&s.sock).is_ok_and(|mut r| r.status().is_some())
    });
    let mut r = s.raw();
    r.send(ClientType::Subscribe as u8, &[]);
    let out = String::from_utf8_lossy(&r.output_until(b"\r\n")).into_owned();
    assert!(out.contains("SigBlk:\t0000000000000000"), "{out:?}");
    kill(Pid::from_raw(s.child.id() as i32), Signal::SIGTERM).expect("signal");
    assert_eq!(s.wait_exit(), 143, "SIGTERM to the supervisor");
}

#[test]
fn signals_to_the_supervisor_stop_the_session_and_clean_up() {
    for sig in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
        let sb = Sandbox::new();
        let mut s = sb.start("sig", &[], &["sleep", "30"]);
        kill(Pid::from_raw(s.child.id() as i32), sig).expect("signal");
        assert_eq!(s.wait_exit(), 143, "{sig}");
        assert_eq!(
            files_in(&sb.sock_dir),
            vec!["sig.ended", "sig.log"],
            "{sig}"
        );
    }
}

#[test]
fn a_child_ignoring_sigterm_is_killed_after_the_grace_period() {
    let sb = Sandbox::new();
    let mut s = sb.start("stubborn", &[], &["sh", "-c", "trap '' TERM; sleep 60"]);
    let started = Instant::now();
    let out = sb.cmd(&["kill", "stubborn", "--grace", "0.5"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        common::stdout(&out).contains("killed by SIGKILL"),
        "{}",
        common::stdout(&out)
    );
    assert!(started.elapsed() >= Duration::from_millis(500));
    assert_eq!(s.wait_exit(), 137);
}

/// `hm kill` on a terminal says why it waits when the program ignores
/// SIGTERM, rather than sitting silent through the grace period.
#[test]
fn kill_says_it_waits_for_a_program_that_ignores_sigterm() {
    let sb = Sandbox::new();
    let mut s = sb.start("stubborn", &[], &["sh", "-c", "trap '' TERM; sleep 60"]);
    let args: Vec<std::ffi::OsString> =
        ["kill", "stubborn", "--grace", "3", "--socket-dir", sb.dir()]
            .iter()
            .map(Into::into)
            .collect();
    let mut t = common::terminal::Terminal::start(
        common::HM.as_ref(),
        &args,
        &sb.terminal_env(&[]),
        sb.path(),
        (24, 100),
        "$ hm kill",
    );
    t.wait_for("the note", |t| {
        t.contains("hm: 'stubborn' is still running a second after SIGTERM: SIGKILL in 2.0s")
    });
    assert!(!t.contains("killed by"), "said while it waits");
    assert_eq!(t.wait_exit(), 0);
    t.wait_for("the end", |t| {
        t.contains("session 'stubborn' killed by SIGKILL")
    });
    assert_eq!(s.wait_exit(), 137);
}

#[test]
fn a_stopped_child_never_freezes_the_supervisor() {
    let sb = Sandbox::new();
    let mut s = sb.start("stopped", &[], &["sleep", "60"]);
    let pid = s.child_pid().expect("child pid");
    kill(Pid::from_raw(pid), Signal::SIGSTOP).expect("stop");
    for _ in 0..5 {
        assert!(s.raw().status().is_some_and(|st| st.alive));
    }
    let out = sb.cmd(&["kill", "stopped", "--grace", "5"]);
    assert_eq!(out.status.code(), Some(0));
    let code = s.wait_exit();
    let log = fs::read_to_string(sb.sock_dir.join("stopped.log")).unwrap_or_default();
    assert_eq!(
        code,
        143,
        "SIGCONT lets the stopped child act on SIGTERM: {} {log}",
        s.stderr()
    );
}

#[test]
fn a_sigchld_after_the_child_is_reaped_keeps_its_exit_code() {
    // A stopped child that is continued and then dies raises two SIGCHLDs;
    // the second one used to be taken for a child reaped by someone else
    // (exit code 1). Here the second is sent by hand while the session
    // drains its background job's output, so it lands after the reap.
    let sb = Sandbox::new();
    let mut s = sb.start(
        "late",
        &[],
        &[
            "sh",
            "-c",
            "trap '' HUP; (while echo tick; do sleep 0.05; done) & exit 3",
        ],
    );
    wait_until("the child reaped while the session drains", || {
        Raw::connect(&s.sock)
            .ok()
            .and_then(|mut r| r.status())
            .is_some_and(|st| !st.alive)
    });
    kill(Pid::from_raw(s.child.id() as i32), Signal::SIGCHLD).expect("SIGCHLD");
    assert_eq!(s.wait_exit(), 3, "{}", s.stderr());
}

#[test]
fn a_child_that_closes_its_terminal_keeps_the_session_alive() {
    let sb = Sandbox::new();
    let s = sb.start(
        "closed",
        &[],
        &[
            "sh",
            "-c",
            "echo bye; exec </dev/null >/dev/null 2>&1; sleep 60",
        ],
    );
    let mut r = s.raw();
    r.send(ClientType::Subscribe as u8, &[]);
    r.output_until(b"bye");
    for _ in 0..5 {
        assert!(s.raw().status().is_some_and(|st| st.alive));
    }
}

#[test]
fn the_supervisor_exits_promptly_when_the_child_does() {
    let sb = Sandbox::new();
    let mut s = sb.start("prompt", &[], &["sh", "-c", "read x; exit 0"]);
    let mut r = s.raw();
    r.send(ClientType::Input as u8, b"\n");
    let t = Instant::now();
    assert_eq!(s.wait_exit(), 0);
    // Well under any grace period: nothing waits for a timer.
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
}

#[test]
fn the_child_gets_its_environment_and_workdir() {
    let sb = Sandbox::new();
    let cfg = sb.path().join("hm.toml");
    fs::write(&cfg, "[[env]]\nname = \"API_TOKEN\"\nvalue = \"s3cret\"\n").expect("write");
    let work = sb.path().join("work");
    fs::create_dir(&work).expect("mkdir");
    let s = sb.start(
        "env",
        &[
            "--config",
            cfg.to_str().expect("utf8"),
            "--workdir",
            "work",
            "--session-env-var",
            "MY_ID",
        ],
        &[
            "sh",
            "-c",
            "echo \"id=$MY_ID tok=$API_TOKEN pwd=$(pwd) term=$TERM\"; sleep 30",
        ],
    );
    let mut r = s.raw();
    r.send(ClientType::Subscribe as u8, &[]);
    let out = r.output_until(b"term=");
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains("id=env tok=s3cret"), "{text}");
    assert!(text.contains(&format!("pwd={}", work.display())), "{text}");
    // The secret is in no file in the socket dir.
    for f in files_in(&sb.sock_dir) {
        let content = fs::read(sb.sock_dir.join(&f)).unwrap_or_default();
        assert!(!String::from_utf8_lossy(&content).contains("s3cret"), "{f}");
    }
}

#[test]
fn kill_reaches_grandchildren_unless_told_otherwise() {
    let sb = Sandbox::new();
    // The grandchildren ignore SIGHUP, so only a signal sent to them (not
    // the hangup when their session leader dies) can end them.
    let m1 = format!("8888.{}", std::process::id());
    let m2 = format!("9999.{}", std::process::id());
    let s = sb.start(
        "grp",
        &[],
        &["sh", "-c", &format!("trap '' HUP; sleep {m1} & wait")],
    );
    wait_until("grandchild", || sleepers(&m1).len() == 1);
    assert!(sb.cmd(&["kill", "grp"]).status.success());
    wait_until("grandchild gone", || sleepers(&m1).is_empty());
    drop(s);

    let s = sb.start(
        "solo",
        &["--kill-process-group", "false"],
        &["sh", "-c", &format!("trap '' HUP; sleep {m2} & wait")],
    );
    wait_until("grandchild", || sleepers(&m2).len() == 1);
    assert!(sb.cmd(&["kill", "solo"]).status.success());
    let survivors = sleepers(&m2);
    assert_eq!(survivors.len(), 1, "only the direct child is signalled");
    for pid in survivors {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
    drop(s);
}

#[test]
fn the_log_records_the_session_privately() {
    let sb = Sandbox::new();
    let mut s = sb.start("logged", &[], &["sh", "-c", "read x; exit 2"]);
    s.raw().send(ClientType::Input as u8, b"\n");
    assert_eq!(s.wait_exit(), 2);
    let log = sb.sock_dir.join("logged.log");
    let text = fs::read_to_string(&log).expect("log");
    assert!(text.contains("session started"), "{text}");
    assert!(text.contains("child exited code=2"), "{text}");
    assert_eq!(fs::metadata(&log).expect("stat").mode() & 0o777, 0o600);
}

/// Keys typed into a session just resized (the dashboard's focus resizes
/// it, and a person types at once): what the program prints answers them,
/// not the resize, and its idle time starts again. It was taken for the
/// redraw of the new size for a second after the resize, the idle time
/// going on from before.
#[test]
fn output_of_keys_typed_right_after_a_resize_is_work_not_a_redraw() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "sh",
        &["--idle-threshold-ms", "300"],
        &["bash", "--norc", "--noprofile", "-i"],
    );
    let mut raw = Raw::connect(&sb.sock("sh")).expect("connect");
    wait_until("the shell idle for 2 s", || {
        raw.status().is_some_and(|s| {
            s.state == heimdall::classify::ProcessState::Idle.as_byte() && s.idle_ms >= 2_000
        })
    });
    resize_subscribed(&mut raw);
    raw.send(ClientType::Input as u8, b"echo typed-$((6*7))\r");
    raw.output_until(b"typed-42");
    let idle = raw.status().expect("status").idle_ms;
    assert!(
        idle < 1_000,
        "the command's output did not count: idle {idle} ms"
    );
}

/// The same under the `agent` classifier (a shell's default): keys
/// typed right after a resize are seen at once, not held for the
/// redraw's second. Held, a command typed then never showed the shell
/// leave its prompt, and the state's time went on from before
/// (`idle · ready 29s` just after `echo hi`).
#[test]
fn an_agent_session_sees_keys_typed_right_after_a_resize() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "sh",
        &["--classifier", "agent"],
        &["bash", "--norc", "--noprofile", "-i"],
    );
    let state = |sb: &Sandbox| -> serde_json::Value {
        serde_json::from_slice(&sb.cmd(&["status", "sh", "--json"]).stdout).expect("json")
    };
    wait_until("the shell at its prompt", || {
        let v = state(&sb);
        v["primary"] == "idle" && v["detail"] == "ready"
    });
    let mut raw = Raw::connect(&sb.sock("sh")).expect("connect");
    resize_subscribed(&mut raw);
    raw.send(ClientType::Input as u8, b"echo typed-$((6*7))");
    raw.output_until(b"typed-$((6*7))");
    // The first look after the keys: the text typed at the prompt.
    let v = state(&sb);
    assert_eq!(
        v["detail"],
        "prompt_editing",
        "{v}\n{}",
        stdout(&sb.cmd(&["explain", "sh"]))
    );
    raw.send(ClientType::Input as u8, b"\r");
    raw.output_until(b"typed-42");
    wait_until("back at its prompt", || state(&sb)["detail"] == "ready");
}

/// Subscribes `raw` to the session's output and resizes the session to
/// 100x30, as the dashboard's focus does just before a person types.
fn resize_subscribed(raw: &mut Raw) {
    raw.send(ClientType::Subscribe as u8, &[]);
    let size = heimdall::protocol::Size {
        cols: 100,
        rows: 30,
    };
    raw.send(ClientType::Resize as u8, &size.encode());
}

/// `hm kill` stops a program that outlived its supervisor, as the
/// supervisor would have (it named `kill PID` and left it to the person),
/// and the session is listed as killed, as any killed session is, with
/// the output kept for `hm restore`: not orphaned, not lost. It vanished,
/// and a running dashboard kept a pane that said only `gone`.
#[test]
fn hm_kill_stops_a_program_that_outlived_its_supervisor() {
    let sb = Sandbox::new();
    let marker = format!("5008.{}", std::process::id());
    let program = common::orphan(&sb, "orphan", &marker);
    let pid = program.pid;
    let out = sb.cmd(&["kill", "orphan"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        common::stdout(&out).trim(),
        format!(
            "session 'orphan': its program (pid {pid}), which outlived its supervisor, was \
             stopped with SIGTERM"
        )
    );
    assert!(sleepers(&marker).is_empty(), "it still runs");
    let ls = common::stdout(&sb.cmd(&["ls"]));
    let row = ls
        .lines()
        .find(|l| l.starts_with("orphan "))
        .unwrap_or_default();
    assert!(row.contains("killed SIGTERM"), "{ls}");
    assert!(files_in(&sb.sock_dir).iter().all(|f| !f.ends_with(".pid")));
    let again = sb.cmd(&["kill", "orphan"]);
    assert_eq!(again.status.code(), Some(1), "{}", common::stdout(&again));
    assert!(sb.cmd(&["rm", "orphan"]).status.success());
    let ls = common::stdout(&sb.cmd(&["ls"]));
    assert!(!ls.contains("orphan"), "{ls}");
}
