//! Adversarial tests of the supervisor, its clients and the session
//! lifecycle, against the real `hm` binary: a supervisor out of file
//! descriptors, hundreds of sessions started at once, a job-control shell
//! killed, frames cut off mid-way, and a supervisor killed with SIGKILL and
//! started again. Each asserts a clear error or the right behaviour, and
//! that nothing is lost.

use crate::common;

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{HM, Raw, Sandbox, Session, sleepers, stderr, stdout, wait_until};
use heimdall::protocol::{self, ClientType, ServerType, Size};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// The fields of `/proc/PID/stat` the tests look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stat {
    state: char,
    pgrp: i32,
    session: i32,
    /// The terminal's foreground process group.
    tpgid: i32,
    /// utime + stime, in clock ticks.
    cpu_ticks: u64,
    /// Start time after boot, in clock ticks: with the pid, it names one
    /// process for good, even if the pid is reused.
    start: u64,
}

fn stat(pid: i32) -> Option<Stat> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces; the fields
    // after it start with the state (field 3).
    let rest: Vec<&str> = text[text.rfind(')')? + 2..].split(' ').collect();
    let num = |i: usize| -> Option<u64> { rest.get(i)?.parse().ok() };
    Some(Stat {
        state: rest.first()?.chars().next()?,
        pgrp: rest.get(2)?.parse().ok()?,
        session: rest.get(3)?.parse().ok()?,
        tpgid: rest.get(5)?.parse().ok()?,
        cpu_ticks: num(11)? + num(12)?,
        start: num(19)?,
    })
}

/// One process, named by its pid and start time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Proc {
    pid: i32,
    start: u64,
}

impl Proc {
    fn of(pid: i32) -> Proc {
        let st = stat(pid).unwrap_or_else(|| panic!("process {pid} is not running"));
        Proc {
            pid,
            start: st.start,
        }
    }

    /// Running (or stopped): not exited, not a zombie, not a new process
    /// that got the same pid.
    fn alive(&self) -> bool {
        stat(self.pid).is_some_and(|s| s.start == self.start && !matches!(s.state, 'Z' | 'X'))
    }

    fn stat(&self) -> Stat {
        stat(self.pid)
            .filter(|s| s.start == self.start)
            .unwrap_or_else(|| panic!("process {} has gone", self.pid))
    }
}

/// SIGKILLs, on drop, the processes (and with `groups`, their process
/// groups) a test may leave behind on failure or by design, if they are
/// still the same processes.
#[derive(Debug, Default)]
struct Reap {
    procs: Vec<Proc>,
    groups: Vec<Proc>,
}

impl Drop for Reap {
    fn drop(&mut self) {
        for p in &self.groups {
            if p.pid > 1 && p.alive() {
                let _ = kill(Pid::from_raw(-p.pid), Signal::SIGKILL);
            }
        }
        for p in &self.procs {
            if p.pid > 1 && p.alive() {
                let _ = kill(Pid::from_raw(p.pid), Signal::SIGKILL);
            }
        }
    }
}

/// A marker unique to this test process and `n`, as a `sleep` duration:
/// `sleep 5001.<our pid>` runs for ages and is easy to find in /proc.
fn marker(n: u32) -> String {
    format!("{}.{}", 5000 + n, std::process::id())
}

fn files_in(dir: &Path) -> Vec<String> {
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

fn clock_ticks_per_second() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .and_then(|t| u64::try_from(t).ok())
        .filter(|&t| t > 0)
        .unwrap_or(100)
}

/// CPU time a process has used so far.
fn cpu_time(pid: i32) -> Duration {
    let ticks = stat(pid).expect("the supervisor runs").cpu_ticks;
    Duration::from_millis(ticks * 1000 / clock_ticks_per_second())
}

/// The soft and hard limits on open files of a process.
fn open_files_limit(pid: i32) -> Option<(u64, u64)> {
    let limits = fs::read_to_string(format!("/proc/{pid}/limits")).ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    let mut nums = line["Max open files".len()..]
        .split_whitespace()
        .map(|w| w.parse::<u64>().ok());
    Some((nums.next()??, nums.next()??))
}

fn open_fds(pid: i32) -> usize {
    fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// Starts `hm run --detach` with at most `limit` open files (soft and
/// hard, so the supervisor cannot raise it) and waits until it answers.
fn start_with_fd_limit(sb: &Sandbox, id: &str, limit: u32, command: &[&str]) -> Session {
    let mut c = Command::new("sh");
    c.current_dir(sb.path())
        .env("HOME", sb.path())
        .env("XDG_CONFIG_HOME", sb.path().join("config"))
        .env("XDG_RUNTIME_DIR", sb.path().join("run"))
        .env_remove("HEIMDALL_SESSION_ID")
        .arg("-c")
        .arg(format!("ulimit -n {limit} && exec \"$0\" \"$@\""))
        .arg(HM)
        .args(["run", "--detach", "--id", id, "--socket-dir"])
        .arg(&sb.sock_dir)
        .arg("--")
        .args(command)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let session = Session {
        child: c.spawn().expect("spawn sh"),
        pid_file: sb.sock_dir.join(format!("{id}.pid")),
        sock: sb.sock(id),
    };
    wait_until("the session to answer", || {
        Raw::connect(&session.sock).is_ok_and(|mut r| r.status().is_some())
    });
    session
}

/// A connection that never waits: it is made even when the supervisor
/// cannot accept it (it waits in the listen backlog), and `None` when
/// even the backlog is full.
fn connect_nonblocking(sock: &Path) -> Option<OwnedFd> {
    use nix::sys::socket::{AddressFamily, SockFlag, SockType, UnixAddr, connect, socket};
    let fd = socket(
        AddressFamily::Unix,
        SockType::Stream,
        SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC,
        None,
    )
    .expect("socket");
    let addr = UnixAddr::new(sock).expect("socket address");
    use std::os::fd::AsRawFd;
    connect(fd.as_raw_fd(), &addr).ok()?;
    Some(fd)
}

fn count_in_file(path: &Path, needle: &str) -> usize {
    fs::read_to_string(path).map_or(0, |t| t.matches(needle).count())
}

/// How many connections the flood opens against a supervisor limited to
/// [`FD_LIMIT`] descriptors: well over what it can hold.
const FLOOD: usize = 100;
const FD_LIMIT: u32 = 40;

#[test]
fn out_of_descriptors_the_supervisor_neither_spins_nor_floods_its_log_and_recovers() {
    let sb = Sandbox::new();
    let s = start_with_fd_limit(
        &sb,
        "fds",
        FD_LIMIT,
        &["sh", "-c", "while read x; do echo \"got-$x\"; done"],
    );
    let sup = s.child.id() as i32;
    assert_eq!(
        open_files_limit(sup),
        Some((u64::from(FD_LIMIT), u64::from(FD_LIMIT))),
        "the limit must hold for the test to mean anything"
    );
    let log = sb.sock_dir.join("fds.log");
    // Served before the flood: they must keep working through it.
    let mut bystander = s.raw();
    let mut sub = s.raw();
    sub.send(ClientType::Subscribe as u8, &[]);
    bystander.send(ClientType::Input as u8, b"before\n");
    sub.output_until(b"got-before");

    let cpu_before = cpu_time(sup);
    let flood_start = Instant::now();
    let mut flood: Vec<OwnedFd> = Vec::new();
    for i in 0..FLOOD {
        let Some(fd) = connect_nonblocking(&s.sock) else {
            break;
        };
        // Half of them also send half a header.
        if i % 2 == 0 {
            let _ = nix::unistd::write(&fd, &[ClientType::Input as u8, 0]);
        }
        flood.push(fd);
    }
    assert!(
        flood.len() > FD_LIMIT as usize,
        "only {} connections were made",
        flood.len()
    );
    // Its accept loop ran out of descriptors, three times: two seconds of
    // it (it retries once a second).
    wait_until("accept to fail for want of descriptors", || {
        count_in_file(&log, "os error 24") >= 3
    });
    let wall = flood_start.elapsed();
    let cpu = cpu_time(sup).saturating_sub(cpu_before);
    // A spinning accept loop burns a core (a third of one on a loaded
    // machine); a backing-off one almost nothing. Allow for a debug build.
    assert!(
        cpu < wall / 10 + Duration::from_millis(150),
        "the supervisor used {cpu:?} of CPU in {wall:?} of flood"
    );
    let log_len = fs::metadata(&log).expect("log").len();
    assert!(log_len < 16 * 1024, "the log grew to {log_len} bytes");

    // Connections it already served are unaffected, input included.
    assert!(bystander.status().is_some_and(|st| st.alive));
    bystander.send(ClientType::Input as u8, b"during\n");
    sub.output_until(b"got-during");

    drop(flood);
    let closed = Instant::now();
    wait_until("a new client to be answered", || {
        Raw::connect(&s.sock).is_ok_and(|mut r| r.status().is_some_and(|st| st.alive))
    });
    let recovery = closed.elapsed();
    let mut fresh = s.raw();
    fresh.send(ClientType::Input as u8, b"after\n");
    sub.output_until(b"got-after");
    assert!(bystander.status().is_some_and(|st| st.alive));
    let log_len = fs::metadata(&log).expect("log").len();
    assert!(log_len < 32 * 1024, "the log grew to {log_len} bytes");
    eprintln!(
        "flood of {FLOOD}: {cpu:?} CPU in {wall:?}; recovered {recovery:?} after the flood closed"
    );
}

#[test]

fn subscribers_that_hang_up_on_a_silent_session_are_let_go() {
    let sb = Sandbox::new();
    let s = sb.start("quiet", &[], &["sleep", "600"]);
    let sup = s.child.id() as i32;
    // What a script that peeks at the scrollback does, or `hm attach`
    // followed by a detach, while the program prints nothing.
    for _ in 0..1100 {
        let Ok(mut r) = Raw::connect(&s.sock) else {
            continue;
        };
        let _ = r
            .stream
            .write_all(&protocol::frame(ClientType::Subscribe as u8, &[]));
    }
    let mut r = s.raw();
    let _ = r
        .stream
        .write_all(&protocol::frame(ClientType::Status as u8, &[]));
    match r.frame() {
        Some(f) if f.ty == ServerType::StatusResp as u8 => {}
        Some(f) if f.ty == ServerType::Error as u8 => panic!(
            "refused: {:?}; the supervisor holds {} descriptors",
            protocol::decode_error(&f.payload).1,
            open_fds(sup)
        ),
        other => panic!("no STATUS: {other:?}"),
    }
    wait_until("the hung-up subscribers to be let go", || {
        open_fds(sup) < 64
    });
    let out = sb.cmd(&["kill", "quiet"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_half_closed_subscriber_gets_its_output_and_exit_and_a_closed_one_is_let_go() {
    let sb = Sandbox::new();
    let quiet = sb.start("quiet", &[], &["sleep", "600"]);
    let sup = quiet.child.id() as i32;
    let before = open_fds(sup);
    // Subscribers that say they will send nothing more (shutdown of their
    // writing side) are kept: they are owed output and EXIT.
    let mut held = Vec::new();
    for _ in 0..50 {
        let mut r = quiet.raw();
        r.send(ClientType::Subscribe as u8, &[]);
        r.stream
            .shutdown(std::net::Shutdown::Write)
            .expect("half-close");
        held.push(r);
    }
    let mut probe = quiet.raw();
    assert!(probe.status().is_some_and(|st| st.alive));
    assert!(
        open_fds(sup) >= before + 50,
        "half-closed subscribers were dropped"
    );
    // Closed entirely, on a session that prints nothing, they are let go
    // without waiting for output.
    drop(held);
    wait_until("the closed subscribers to be let go", || {
        open_fds(sup) < before + 5
    });

    // And one that half-closes after its last input reads to the end.
    let s = sb.start("talk", &[], &["sh", "-c", "read x; echo got-$x; exit 4"]);
    let mut r = s.raw();
    r.send(ClientType::Subscribe as u8, &[]);
    r.send(ClientType::Input as u8, b"hi\n");
    r.stream
        .shutdown(std::net::Shutdown::Write)
        .expect("half-close");
    let (out, code) = r.collect_until_exit();
    assert!(String::from_utf8_lossy(&out).contains("got-hi"), "{out:?}");
    assert_eq!(code, Some(4));
}

/// How many sessions start at once in one socket dir.
const CONCURRENT_STARTS: usize = 200;

#[test]
fn two_hundred_concurrent_starts_all_serve_and_all_stop_cleanly() {
    let sb = Sandbox::new();
    let mark = marker(1);
    let ids: Vec<String> = (0..CONCURRENT_STARTS).map(|i| format!("c{i:03}")).collect();
    let started = Instant::now();
    let mut sessions: Vec<Session> = ids
        .iter()
        .map(|id| {
            let mut c = sb.hm();
            c.args(["run", "--detach", "--id", id])
                .arg("--socket-dir")
                .arg(&sb.sock_dir)
                .args(["--", "sleep", &mark])
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            Session {
                child: c.spawn().expect("spawn hm run"),
                pid_file: sb.sock_dir.join(format!("{id}.pid")),
                sock: sb.sock(id),
            }
        })
        .collect();
    let mut waiting: Vec<usize> = (0..sessions.len()).collect();
    wait_until("every session to answer STATUS", || {
        waiting.retain(|&i| {
            !Raw::connect(&sessions[i].sock).is_ok_and(|mut r| r.status().is_some_and(|s| s.alive))
        });
        waiting.is_empty()
    });
    let serving = started.elapsed();
    for s in &mut sessions {
        assert!(
            s.child.try_wait().expect("try_wait").is_none(),
            "a supervisor exited: {}",
            s.stderr()
        );
    }
    let children: Vec<Proc> = sessions
        .iter()
        .map(|s| Proc::of(s.child_pid().expect("child pid")))
        .collect();
    let _reap = Reap {
        procs: children.clone(),
        groups: Vec::new(),
    };
    assert_eq!(sleepers(&mark).len(), CONCURRENT_STARTS);

    let out = sb.cmd(&["ls", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let listed: BTreeSet<(String, i64)> = list
        .as_array()
        .expect("array")
        .iter()
        .map(|e| {
            (
                e["id"].as_str().expect("id").to_string(),
                e["pid"].as_i64().expect("pid"),
            )
        })
        .collect();
    let expected: BTreeSet<(String, i64)> = ids
        .iter()
        .cloned()
        .zip(children.iter().map(|p| i64::from(p.pid)))
        .collect();
    assert_eq!(listed, expected, "hm ls --json lists each session once");

    // Stop them all at once, each with its own `hm kill`.
    let killing = Instant::now();
    let killers: Vec<_> = ids
        .iter()
        .map(|id| {
            let mut c = sb.hm();
            c.args(["kill", id])
                .arg("--socket-dir")
                .arg(&sb.sock_dir)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            (id, c.spawn().expect("spawn hm kill"))
        })
        .collect();
    for (id, k) in killers {
        let out = k.wait_with_output().expect("hm kill");
        assert!(out.status.success(), "{id}: {}", stderr(&out));
        assert_eq!(
            stdout(&out),
            format!("session '{id}' killed by SIGTERM (exit code 143)\n")
        );
    }
    for s in &mut sessions {
        assert_eq!(s.wait_exit(), 143);
    }
    let stopped = killing.elapsed();
    for p in &children {
        assert!(!p.alive(), "child {} still runs", p.pid);
    }
    assert!(sleepers(&mark).is_empty(), "no stray processes");
    let left = files_in(&sb.sock_dir);
    // The records of how the sessions ended, of which a socket dir keeps
    // the most recent 50, and their logs (the others' went with theirs).
    let logs = left.iter().filter(|f| f.ends_with(".log")).count();
    let records = left.iter().filter(|f| f.ends_with(".ended")).count();
    assert!(
        logs == 50 && records == 50 && logs + records == left.len(),
        "only 50 records and their logs stay: {left:?}"
    );
    eprintln!(
        "{CONCURRENT_STARTS} sessions: all serving after {serving:?}, all stopped in {stopped:?}"
    );
}

/// An interactive bash running `sleep BG &` and then `sleep FG` in the
/// foreground: three process groups in one session. Returns the session,
/// the shell and both jobs.
fn job_control_shell(sb: &Sandbox, bg: &str, fg: &str) -> (Session, Proc, Proc, Proc, Reap) {
    let s = sb.start("jobs", &[], &["bash", "--norc", "--noprofile", "-i"]);
    let shell = Proc::of(s.child_pid().expect("shell pid"));
    let mut r = s.raw();
    r.send(ClientType::Subscribe as u8, &[]);
    r.output_until(b"bash-");
    r.send(
        ClientType::Input as u8,
        format!("sleep {bg} & sleep {fg}\r").as_bytes(),
    );
    wait_until("both jobs to run", || {
        sleepers(bg).len() == 1 && sleepers(fg).len() == 1
    });
    let bg_job = Proc::of(sleepers(bg)[0]);
    let fg_job = Proc::of(sleepers(fg)[0]);
    let reap = Reap {
        procs: vec![bg_job, fg_job, shell],
        groups: vec![bg_job, fg_job],
    };
    // What makes this a job-control shell: each job leads a process group
    // of its own, in the shell's session, and the foreground job owns the
    // terminal.
    for job in [bg_job, fg_job] {
        let st = job.stat();
        assert_eq!(st.session, shell.pid, "the job is in the shell's session");
        assert_eq!(st.pgrp, job.pid, "the job leads its own process group");
    }
    wait_until("the foreground job to own the terminal", || {
        fg_job.stat().tpgid == fg_job.pid
    });
    (s, shell, bg_job, fg_job, reap)
}

#[test]
fn kill_ends_a_job_control_shell_and_its_foreground_job() {
    let sb = Sandbox::new();
    let (bg, fg) = (marker(2), marker(3));
    let (mut s, shell, _bg_job, fg_job, _reap) = job_control_shell(&sb, &bg, &fg);
    let started = Instant::now();
    let out = sb.cmd(&["kill", "jobs", "--grace", "0.5"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Interactive bash ignores SIGTERM: it takes the SIGKILL.
    assert_eq!(
        stdout(&out),
        "session 'jobs' killed by SIGKILL (exit code 137)\n"
    );
    assert!(started.elapsed() >= Duration::from_millis(500));
    assert_eq!(s.wait_exit(), 137);
    assert!(!shell.alive(), "the shell is gone");
    // The foreground job is in a group of its own, so no signal from the
    // supervisor reaches it; the hangup when its session leader dies does.
    wait_until("the foreground job to be hung up", || !fg_job.alive());
    // The log, and the record of how it ended (`hm ls` shows it).
    assert_eq!(files_in(&sb.sock_dir), vec!["jobs.ended", "jobs.log"]);
}

#[test]

fn kill_ends_the_background_jobs_of_a_job_control_shell() {
    let sb = Sandbox::new();
    let (bg, fg) = (marker(4), marker(5));
    let (mut s, _shell, bg_job, _fg_job, _reap) = job_control_shell(&sb, &bg, &fg);
    let out = sb.cmd(&["kill", "jobs", "--grace", "0.5"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(s.wait_exit(), 137);
    wait_until("the background job to end with its session", || {
        !bg_job.alive()
    });
}

/// The session's pty size (rows, cols), as its supervisor reports it.
fn info_size(sock: &Path) -> (u64, u64) {
    let mut r = Raw::connect(sock).expect("connect");
    r.send(ClientType::Info as u8, &[]);
    let info: serde_json::Value =
        serde_json::from_slice(&r.expect(ServerType::Info as u8).payload).expect("INFO json");
    (
        info["rows"].as_u64().expect("rows"),
        info["cols"].as_u64().expect("cols"),
    )
}

#[test]
fn frames_cut_off_by_a_hangup_are_never_acted_on_and_others_are_still_served() {
    let sb = Sandbox::new();
    let mut s = sb.start(
        "cut",
        &["--cols", "100", "--rows", "30"],
        &["sh", "-c", "while read x; do echo \"got-$x\"; done"],
    );
    let child = Proc::of(s.child_pid().expect("child pid"));
    let mut bystander = s.raw();
    let mut sub = s.raw();
    sub.send(ClientType::Subscribe as u8, &[]);
    bystander.send(ClientType::Input as u8, b"ready\n");
    sub.output_until(b"got-ready");

    // Each of these, complete, would change something: kill the session at
    // once, resize it, type, subscribe, answer.
    let frames: [(&str, Vec<u8>); 8] = [
        (
            "KILL",
            protocol::frame(ClientType::Kill as u8, &0u32.to_be_bytes()),
        ),
        (
            "RESIZE",
            protocol::frame(
                ClientType::Resize as u8,
                &Size { cols: 7, rows: 5 }.encode(),
            ),
        ),
        (
            "INPUT",
            protocol::frame(ClientType::Input as u8, b"abcdefgh\n"),
        ),
        (
            "SUBSCRIBE",
            protocol::frame(ClientType::Subscribe as u8, &[1]),
        ),
        ("STATUS", protocol::frame(ClientType::Status as u8, &[])),
        ("INFO", protocol::frame(ClientType::Info as u8, &[])),
        ("SCREEN", protocol::frame(ClientType::Screen as u8, &[])),
        // Declares the largest payload allowed and sends a little of it.
        (
            "a 1 MiB INPUT",
            [
                protocol::header(ClientType::Input as u8, protocol::MAX_PAYLOAD).to_vec(),
                b"ijklmnop\n".to_vec(),
            ]
            .concat(),
        ),
    ];
    for (what, bytes) in &frames {
        for cut in 1..bytes.len() {
            let mut c = s.raw();
            c.send_bytes(&bytes[..cut]);
            // Hang up, and wait until the supervisor has read all of it and
            // closed its end: whatever the cut frame did has been done.
            c.stream
                .shutdown(std::net::Shutdown::Write)
                .expect("shutdown");
            let mut rest = Vec::new();
            std::io::Read::read_to_end(&mut c.stream, &mut rest)
                .unwrap_or_else(|e| panic!("{what} cut after {cut} bytes: {e}"));
            assert!(
                rest.is_empty(),
                "{what} cut after {cut} bytes was answered: {rest:?}"
            );
            let st = bystander
                .status()
                .unwrap_or_else(|| panic!("{what} cut after {cut} bytes: no STATUS"));
            assert!(st.alive, "{what} cut after {cut} bytes killed the session");
        }
    }
    assert_eq!(info_size(&s.sock), (30, 100), "a cut RESIZE was applied");
    assert!(child.alive(), "a cut KILL was obeyed");
    assert!(s.child.try_wait().expect("try_wait").is_none());
    // The program was typed nothing of the cut frames: the next line it
    // reads is the one typed now, and nothing came before it.
    bystander.send(ClientType::Input as u8, b"end\n");
    let out = sub.output_until(b"got-end");
    let text = String::from_utf8_lossy(&out);
    assert!(
        !text.contains("abc") && !text.contains("ijk"),
        "a cut INPUT was typed: {text:?}"
    );
}

#[test]
fn a_restart_after_sigkill_starts_afresh_and_the_old_program_is_hung_up() {
    let sb = Sandbox::new();
    let (old_mark, new_mark) = (marker(6), marker(7));
    let mut old = sb.start(
        "phoenix",
        &[],
        &["sh", "-c", &format!("echo old-life; exec sleep {old_mark}")],
    );
    let old_child = Proc::of(old.child_pid().expect("child pid"));
    let _reap = Reap {
        procs: vec![old_child],
        groups: Vec::new(),
    };
    let mut watcher = old.raw();
    watcher.send(ClientType::Subscribe as u8, &[]);
    watcher.output_until(b"old-life\r\n");
    kill(Pid::from_raw(old.child.id() as i32), Signal::SIGKILL).expect("kill the supervisor");
    old.wait_exit();
    // A client sees the stream end, with no EXIT: no exit code was known.
    assert_eq!(watcher.collect_until_exit(), (Vec::new(), None));
    // Its pid file now names the new session's program: this guard must
    // not touch it.
    old.pid_file = sb.path().join("no-such.pid");
    assert!(sb.sock("phoenix").exists(), "the stale socket is left");
    assert!(sb.sock_dir.join("phoenix.pid").exists(), "and the pid file");
    // The kernel hangs up the terminal the supervisor held, and the
    // program (its session leader) gets SIGHUP.
    wait_until("the old program to be hung up", || !old_child.alive());

    let new = sb.start(
        "phoenix",
        &[],
        &["sh", "-c", &format!("echo new-life; exec sleep {new_mark}")],
    );
    let new_child = new.child_pid().expect("new child pid");
    assert_ne!(new_child, old_child.pid);
    wait_until("the new program to run", || {
        sleepers(&new_mark) == vec![new_child]
    });
    assert!(sleepers(&old_mark).is_empty());
    let out = sb.cmd(&["ls", "--json"]);
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let list = list.as_array().expect("array");
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0]["id"], "phoenix");
    assert_eq!(list[0]["pid"], new_child);
    // The new session's scrollback is its own.
    let mut r = new.raw();
    r.send(
        ClientType::Subscribe as u8,
        &[protocol::SUBSCRIBE_MARK_REPLAY],
    );
    let replay = replay_of(&mut r);
    let text = String::from_utf8_lossy(&replay);
    assert!(
        text.contains("new-life") && !text.contains("old-life"),
        "{text:?}"
    );
    let out = sb.cmd(&["kill", "phoenix"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// Reads a subscriber's replayed scrollback, up to REPLAY_END.
fn replay_of(r: &mut Raw) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let f = r.frame().expect("the replay");
        match ServerType::try_from(f.ty) {
            Ok(ServerType::Output) => out.extend_from_slice(&f.payload),
            Ok(ServerType::ReplayEnd) => return out,
            _ => {}
        }
    }
}

#[test]
fn a_restart_after_sigkill_is_not_disturbed_by_an_old_program_that_ignores_the_hangup() {
    let sb = Sandbox::new();
    let mut old = sb.start(
        "stubborn",
        &[],
        &[
            "sh",
            "-c",
            "trap '' HUP; while :; do echo old-noise; sleep 0.1; done",
        ],
    );
    let old_child = Proc::of(old.child_pid().expect("child pid"));
    let _reap = Reap {
        procs: vec![old_child],
        groups: vec![old_child],
    };
    // Its first words come after the trap is set.
    let mut watcher = old.raw();
    watcher.send(ClientType::Subscribe as u8, &[]);
    watcher.output_until(b"old-noise");
    kill(Pid::from_raw(old.child.id() as i32), Signal::SIGKILL).expect("kill the supervisor");
    old.wait_exit();
    old.pid_file = sb.path().join("no-such.pid");

    let new = sb.start(
        "stubborn",
        &[],
        &["sh", "-c", "while read x; do echo \"new-$x\"; done"],
    );
    // The case at hand: the old program outlives its supervisor, with the
    // old terminal hung up.
    assert!(old_child.alive(), "the old program ignored SIGHUP");
    let mut r = new.raw();
    r.send(ClientType::Subscribe as u8, &[]);
    for round in 0..5 {
        r.send(ClientType::Input as u8, format!("{round}\n").as_bytes());
        let out = r.output_until(format!("new-{round}\r\n").as_bytes());
        assert!(
            !String::from_utf8_lossy(&out).contains("old-noise"),
            "the old program's output reached the new session"
        );
    }
    let out = sb.cmd(&["ls", "--json"]);
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list:?}");
    let out = sb.cmd(&["kill", "stubborn"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "session 'stubborn' killed by SIGTERM (exit code 143)\n"
    );
    // The old program lives on without a terminal, and nothing reports it:
    // its supervisor is gone and the design never signals a pid from a
    // stale file. The guard above ends it.
}

/// `VmHWM` (peak resident memory) of a process, in KiB.
fn peak_kib(pid: i32) -> u64 {
    fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

/// What grew the original supervisor to 307 MB: hundreds of connections
/// each holding an unfinished 1 MiB frame. An INPUT payload takes effect
/// only once whole, so what arrives of one is held, but all connections
/// together hold at most 8 MiB: past that a frame is refused with an ERROR,
/// memory stays bounded and every other client is still served.
#[test]
fn hundreds_of_unfinished_large_frames_do_not_grow_the_supervisor() {
    const CONNS: usize = 300;
    let sb = Sandbox::new();
    // The program never reads, so INPUT piles up in the pty and then in
    // the connections' sockets, not in the supervisor.
    let s = sb.start("big", &[], &["sleep", "600"]);
    let sup = s.child.id() as i32;
    let before = peak_kib(sup);
    let mut held = Vec::new();
    // 150 INPUT frames with 64 KiB sent of each: 9.4 MiB, over the bound.
    let chunk = vec![b'x'; 64 * 1024];
    for i in 0..CONNS {
        let mut r = s.raw();
        // Alternately: a 1 MiB INPUT with 64 KiB of it sent, and a 1 MiB
        // frame of an unknown type, whose payload is skipped.
        let ty = if i % 2 == 0 {
            ClientType::Input as u8
        } else {
            0x7e
        };
        r.send_bytes(&protocol::header(ty, protocol::MAX_PAYLOAD));
        let _ = r.stream.set_nonblocking(true);
        let _ = r.stream.write(&chunk);
        held.push(r);
    }
    // Some INPUT frame is refused once the bound is reached, with a reason.
    let mut refusal = None;
    wait_until("an unfinished INPUT frame refused", || {
        refusal = held.iter_mut().step_by(2).find_map(|r| {
            let mut buf = [0u8; 512];
            let n = std::io::Read::read(&mut r.stream, &mut buf).ok()?;
            let mut frames = Vec::new();
            r.asm.push(&buf[..n], &mut frames).ok()?;
            let f = frames
                .into_iter()
                .find(|f| f.ty == ServerType::Error as u8)?;
            Some(protocol::decode_error(&f.payload).1)
        });
        refusal.is_some()
    });
    let refusal = refusal.unwrap_or_default();
    assert!(refusal.contains("unfinished input"), "refusal: {refusal:?}");
    assert!(s.raw().status().is_some_and(|st| st.alive), "still serving");
    let after = peak_kib(sup);
    eprintln!(
        "supervisor peak RSS: {before} KiB before, {after} KiB with {CONNS} unfinished 1 MiB frames"
    );
    assert!(
        after < before + 16 * 1024,
        "the supervisor grew from {before} to {after} KiB"
    );
}
