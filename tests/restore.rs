//! Sessions survive a reboot: manifests and output kept in the state dir,
//! `hm restore` bringing back exactly the lost sessions, through real
//! supervisors killed with SIGKILL and a socket dir deleted as a reboot
//! leaves it.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{PATIENCE, Sandbox, stderr, stdout, wait_until};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;

/// Kills, on drop, every session the sandbox's socket dir holds: their
/// supervisors run on their own (`hm run --bg`, `hm restore`).
struct Reaper<'a>(&'a Sandbox);

impl Drop for Reaper<'_> {
    fn drop(&mut self) {
        reboot(self.0);
    }
}

/// What a machine's restart does to hm: every supervisor and its program
/// killed at once, with no chance to clean up, and the socket dir (a
/// tmpfs) gone. What is left is the state dir.
pub(crate) fn reboot(sb: &Sandbox) {
    let mut pids = Vec::new();
    for e in std::fs::read_dir(&sb.sock_dir)
        .into_iter()
        .flatten()
        .flatten()
    {
        let path = e.path();
        if path.extension().is_some_and(|x| x == "pid") {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let mut lines = text.lines();
            let sup: Option<i32> = lines.next().and_then(|l| l.trim().parse().ok());
            let child: Option<i32> = lines.next().and_then(|l| l.trim().parse().ok());
            if let Some(c) = child.filter(|c| *c > 1) {
                let _ = kill(Pid::from_raw(-c), Signal::SIGKILL);
                let _ = kill(Pid::from_raw(c), Signal::SIGKILL);
                pids.push(c);
            }
            if let Some(s) = sup.filter(|s| *s > 1) {
                let _ = kill(Pid::from_raw(s), Signal::SIGKILL);
                pids.push(s);
            }
        }
    }
    wait_until("the killed processes to be gone", || {
        pids.iter().all(|p| !running(*p))
    });
    let _ = std::fs::remove_dir_all(&sb.sock_dir);
}

/// Whether `pid` runs (a zombie does not).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, r)| !r.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

fn bg(sb: &Sandbox, args: &[&str], env: &[(&str, &str)]) {
    let out = sb
        .hm()
        .args(["run", "--bg", "--socket-dir", sb.dir()])
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("run hm run --bg");
    assert!(out.status.success(), "{}", stderr(&out));
}

fn manifest(sb: &Sandbox, id: &str) -> Option<Value> {
    let bytes = std::fs::read(sb.sessions_state().join(format!("{id}.json"))).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn history(sb: &Sandbox, id: &str) -> String {
    String::from_utf8_lossy(
        &std::fs::read(sb.sessions_state().join(format!("{id}.history"))).unwrap_or_default(),
    )
    .into_owned()
}

fn status_json(sb: &Sandbox, id: &str) -> Value {
    let out = sb.cmd(&["status", id, "--json"]);
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

/// A stand-in for Claude Code, on `PATH` as `claude`: it notes how it was
/// started, reports its conversation through the `SessionStart` hook hm
/// installed for it (the `--settings` file), as Claude Code does, and
/// waits at its prompt. Resumed, its conversation is the one it resumes.
const STANDIN_CLAUDE: &str = r#"#!/bin/sh
printf '%s\n' "$*" >> "$STANDIN_LOG"
sid="$STANDIN_FIRST_ID"; settings=""; prev=""
for a in "$@"; do
    [ "$prev" = "--settings" ] && settings="$a"
    [ "$prev" = "--resume" ] && sid="$a"
    prev="$a"
done
hook=$(grep -o '"command":"[^"]*"' "$settings" | head -n 1 | sed 's/^"command":"//; s/"$//')
printf '{"hook_event_name":"SessionStart","session_id":"%s","transcript_path":"/secret/x"}' "$sid" | sh -c "$hook"
echo "conversation $sid ready"
exec sleep 600
"#;

fn standin(sb: &Sandbox) -> PathBuf {
    let bin = sb.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let claude = bin.join("claude");
    std::fs::write(&claude, STANDIN_CLAUDE).expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    bin
}

fn path_with(bin: &Path) -> String {
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

const FIRST_ID: &str = "6f1b0c7e-2d4a-4e8b-9c3f-5a7d1e2b4c6d";

#[test]
fn a_reboot_brings_back_exactly_the_lost_sessions_as_they_were() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    let proj = sb.path().join("proj");
    let srv = sb.path().join("srv");
    std::fs::create_dir_all(&proj).expect("proj");
    std::fs::create_dir_all(&srv).expect("srv");
    let bin = standin(&sb);
    let log = sb.path().join("claude.log");
    let path = path_with(&bin);
    let env = [
        ("PATH", path.as_str()),
        ("STANDIN_LOG", log.to_str().expect("utf-8")),
        ("STANDIN_FIRST_ID", FIRST_ID),
    ];
    let proj_s = proj.to_str().expect("utf-8");
    let srv_s = srv.to_str().expect("utf-8");
    bg(
        &sb,
        &[
            "--id",
            "shell",
            "--label",
            "the shell",
            "--workdir",
            proj_s,
            "--cols",
            "100",
            "--rows",
            "30",
            "--",
            "sh",
            "-i",
        ],
        &env,
    );
    bg(
        &sb,
        &[
            "--id",
            "server",
            "--restore",
            "--workdir",
            srv_s,
            "--",
            "sh",
            "-c",
            "echo listening on 8080; exec sleep 600",
        ],
        &env,
    );
    bg(
        &sb,
        &["--id", "agent", "--workdir", proj_s, "--", "claude"],
        &env,
    );
    bg(
        &sb,
        &[
            "--id",
            "done",
            "--restore",
            "--",
            "sh",
            "-c",
            "echo finished",
        ],
        &env,
    );
    bg(
        &sb,
        &["--id", "killed", "--restore", "--", "sleep", "600"],
        &env,
    );

    // What they did before the machine went down.
    let typed = sb.cmd(&["send", "shell", "--enter", "echo before-the-reboot"]);
    assert!(typed.status.success(), "{}", stderr(&typed));
    wait_until("the shell's output to be kept", || {
        history(&sb, "shell").contains("\nbefore-the-reboot")
    });
    wait_until("the server's output to be kept", || {
        history(&sb, "server").contains("listening on 8080")
    });
    wait_until("the agent's conversation to be kept", || {
        manifest(&sb, "agent").is_some_and(|m| m["agent"]["id"] == FIRST_ID)
    });
    assert_eq!(
        manifest(&sb, "agent").expect("manifest")["agent"]["agent"],
        "claude"
    );
    wait_until("'done' to end on its own", || {
        manifest(&sb, "done").is_some_and(|m| m["ended"]["how"] == "exited")
    });
    let killed = sb.cmd(&["kill", "killed"]);
    assert!(killed.status.success(), "{}", stderr(&killed));
    assert_eq!(
        manifest(&sb, "killed").expect("manifest")["ended"]["how"],
        "killed"
    );

    // Nothing secret is kept: no hook payload besides the id.
    let all: String = std::fs::read_dir(sb.sessions_state())
        .expect("state dir")
        .flatten()
        .map(|e| String::from_utf8_lossy(&std::fs::read(e.path()).unwrap_or_default()).into_owned())
        .collect();
    assert!(!all.contains("/secret/x"), "a hook payload was kept");

    reboot(&sb);

    let ls = sb.cmd(&["ls"]);
    let table = stdout(&ls);
    for id in ["shell", "server", "agent"] {
        let row = table
            .lines()
            .find(|l| l.starts_with(id))
            .unwrap_or_else(|| panic!("{id} listed: {table}"));
        assert!(row.contains("lost (restartable)"), "{table}");
    }
    // Those that ended are listed as ended, as before the reboot.
    let row = |id: &str| {
        table
            .lines()
            .find(|l| l.starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("{id} listed: {table}"))
            .to_owned()
    };
    assert!(row("done").contains(" exited 0 "), "{table}");
    assert!(row("killed").contains(" killed "), "{table}");
    assert!(stderr(&ls).contains("'hm restore'"), "{}", stderr(&ls));

    let dry = sb
        .hm()
        .args(["restore", "--dry-run", "--socket-dir", sb.dir()])
        .envs(env)
        .output()
        .expect("dry run");
    let plan = stdout(&dry);
    assert!(dry.status.success(), "{plan}{}", stderr(&dry));
    assert!(
        plan.contains(&format!(
            "would restore 'agent': claude --resume {FIRST_ID} (in {proj_s}"
        )),
        "{plan}"
    );
    assert_eq!(plan.lines().count(), 3, "{plan}");
    assert!(
        !sb.sock_dir.join("shell.sock").exists(),
        "a dry run starts nothing"
    );

    let restored = sb
        .hm()
        .args(["restore", "--socket-dir", sb.dir()])
        .envs(env)
        .output()
        .expect("restore");
    assert!(
        restored.status.success(),
        "{}{}",
        stdout(&restored),
        stderr(&restored)
    );
    assert!(
        stdout(&restored).contains("restored 3 of 3 lost sessions"),
        "{}",
        stdout(&restored)
    );

    // Exactly those, with their ids, labels, directories and sizes; the
    // ended ones listed as before.
    let list: Value = serde_json::from_slice(&sb.cmd(&["ls", "--json"]).stdout).expect("ls json");
    let alive: BTreeMap<String, bool> = list
        .as_array()
        .expect("a list")
        .iter()
        .map(|v| {
            (
                v["id"].as_str().unwrap_or("").to_owned(),
                v["alive"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    assert_eq!(
        alive,
        BTreeMap::from([
            ("agent".to_owned(), true),
            ("done".to_owned(), false),
            ("killed".to_owned(), false),
            ("server".to_owned(), true),
            ("shell".to_owned(), true)
        ]),
        "{list}"
    );
    let shell = status_json(&sb, "shell");
    assert_eq!(
        (
            shell["label"].as_str(),
            shell["workdir"].as_str(),
            shell["cols"].as_u64(),
            shell["rows"].as_u64()
        ),
        (Some("the shell"), Some(proj_s), Some(100), Some(30)),
        "{shell}"
    );
    assert_eq!(status_json(&sb, "server")["workdir"], srv_s);
    let agent = status_json(&sb, "agent");
    assert_eq!(agent["workdir"], proj_s);
    assert_eq!(
        manifest(&sb, "agent").expect("manifest")["agent"]["id"],
        FIRST_ID,
        "the conversation is kept until the agent names it again"
    );

    // The agent came back as the same conversation, with its hooks.
    wait_until("the stand-in claude to start again", || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.lines().count() == 2)
    });
    let starts = std::fs::read_to_string(&log).expect("log");
    let again = starts.lines().nth(1).expect("second start");
    assert!(again.ends_with(&format!("--resume {FIRST_ID}")), "{starts}");
    assert!(again.starts_with("--settings "), "{starts}");
    assert!(!again.contains("--continue"), "{starts}");

    // The history shows what was there before, then the mark.
    let logs = stdout(&sb.cmd(&["logs", "shell"]));
    let before = logs.find("\nbefore-the-reboot").expect("the old line");
    let mark = logs.find("── restored ").expect("the mark");
    assert!(before < mark, "{logs}");
    let mark_line = logs[mark..].lines().next().expect("a line");
    assert!(
        mark_line.ends_with(", after its supervisor went away ──")
            || mark_line.ends_with(", after the machine restarted ──"),
        "{mark_line}"
    );
    wait_until("the server to run again", || {
        stdout(&sb.cmd(&["logs", "server"]))
            .matches("listening on 8080")
            .count()
            == 2
    });
    let logs = stdout(&sb.cmd(&["logs", "server"]));
    let first = logs.find("listening on 8080").expect("old");
    let mark = logs.find("── restored ").expect("mark");
    let second = logs.rfind("listening on 8080").expect("new");
    assert!(first < mark && mark < second, "{logs}");

    // The shell runs in its directory.
    sb.cmd(&["send", "shell", "--enter", "pwd"]);
    wait_until("pwd", || {
        stdout(&sb.cmd(&["logs", "shell"])).contains(&format!("\n{proj_s}\n"))
    });

    // Those that ended are forgotten by hm clean; the restored ones stay.
    let clean = sb.cmd(&["clean"]);
    assert!(
        stdout(&clean).contains("removed 2 ended sessions"),
        "{}",
        stdout(&clean)
    );
    assert!(manifest(&sb, "done").is_none() && manifest(&sb, "killed").is_none());
    assert!(manifest(&sb, "shell").is_some());
}

/// A lost session written as a restore finds it after a reboot: the
/// manifest (format 1, as this version and later ones read it) and its
/// history, with `sleep` run again (`--restore`).
fn lost_sleeper(sb: &Sandbox, id: &str, instance: &str, history: &[u8]) {
    let state = sb.sessions_state();
    std::fs::create_dir_all(&state).expect("state dir");
    let m = serde_json::json!({
        "format": 1,
        "id": id,
        "instance": instance,
        "argv": ["sleep", "600"],
        "workdir": sb.path(),
        "socket_dir": sb.sock_dir,
        "host": std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim(),
        "classifier": {"name": "none"},
        "cols": 80,
        "rows": 24,
        "started_unix_ms": 1,
        "rerun": true,
    });
    std::fs::write(
        state.join(format!("{id}.json")),
        serde_json::to_vec(&m).expect("json"),
    )
    .expect("write manifest");
    let mut h = b"hm-history 1 0\n".to_vec();
    h.extend_from_slice(history);
    std::fs::write(state.join(format!("{id}.history")), h).expect("write history");
}

/// The sandbox's supervisors still starting a restore: their process
/// runs (`--restoring` on its command line) and their new manifest is
/// not written yet (it is written just before the first client is
/// served). Counted by id: a supervisor's child between fork and exec
/// has the same command line.
fn starting(sb: &Sandbox, lost: &BTreeMap<String, String>) -> usize {
    let mut ids = std::collections::BTreeSet::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let words: Vec<String> = cmd
            .split(|b| *b == 0)
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        if !words.iter().any(|w| w == "--restoring") || !words.iter().any(|w| w == sb.dir()) {
            continue;
        }
        let Some(id) = words
            .iter()
            .position(|w| w == "--id")
            .and_then(|i| words.get(i + 1))
        else {
            continue;
        };
        let written = manifest(sb, id).is_some_and(|m| {
            Some(&m["instance"]) != lost.get(id).map(|i| Value::from(i.as_str())).as_ref()
        });
        if !written && running(pid) {
            ids.insert(id.clone());
        }
    }
    ids.len()
}

#[test]
fn two_hundred_lost_sessions_start_four_at_a_time() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    // Each with 128 KiB of old output, so that a start (which replays it
    // into the session's screen) lasts long enough to be seen.
    let line = "\x1b[32mok\x1b[0m some build output, line after line of it\r\n";
    let old = line.repeat(128 * 1024 / line.len());
    let mut lost = BTreeMap::new();
    for i in 0..200 {
        let id = format!("s{i}");
        let instance = format!("lost-{i}");
        lost_sleeper(&sb, &id, &instance, old.as_bytes());
        lost.insert(id, instance);
    }
    let mut restore = sb
        .hm()
        .args(["restore", "--socket-dir", sb.dir()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("hm restore");
    // Watched from outside, from the processes and their files, while it
    // runs: not from anything hm restore says of itself.
    let mut most = 0;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while restore.try_wait().expect("try_wait").is_none() {
        most = most.max(starting(&sb, &lost));
        assert!(
            std::time::Instant::now() < deadline,
            "hm restore took too long"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let out = restore.wait_with_output().expect("output");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("restored 200 of 200 lost sessions"),
        "{}",
        stdout(&out)
    );
    eprintln!("at most {most} sessions were seen starting at once");
    assert!(most <= 4, "{most} sessions were starting at once");
    assert!(
        most >= 2,
        "the starts were never seen overlapping ({most}): the watch saw nothing"
    );
    let alive = std::fs::read_dir(&sb.sock_dir)
        .expect("socket dir")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "sock"))
        .count();
    assert_eq!(alive, 200);
}

#[test]
fn two_restores_at_once_start_each_session_once() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    let starts = sb.path().join("starts");
    let script = format!(
        "echo $HEIMDALL_SESSION_ID >> {}; exec sleep 600",
        starts.display()
    );
    let ids: Vec<String> = (0..8).map(|i| format!("r{i}")).collect();
    for id in &ids {
        bg(
            &sb,
            &["--id", id, "--restore", "--", "sh", "-c", &script],
            &[],
        );
    }
    // Kept is not yet run: under load the reboot could kill a program
    // before its shell wrote the first line, and the count below fell
    // one short with every session started once by the restores.
    let lines = || std::fs::read_to_string(&starts).map_or(0, |s| s.lines().count());
    wait_until("every session to start, run and be kept", || {
        lines() >= ids.len() && ids.iter().all(|id| manifest(&sb, id).is_some())
    });
    reboot(&sb);
    let spawn = || {
        sb.hm()
            .args(["restore", "--socket-dir", sb.dir()])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("hm restore")
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (
        a.wait_with_output().expect("a"),
        b.wait_with_output().expect("b"),
    );
    for out in [&a, &b] {
        assert!(out.status.success(), "{}{}", stdout(out), stderr(out));
    }
    let deadline = std::time::Instant::now() + PATIENCE;
    while lines() < 2 * ids.len() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let text = std::fs::read_to_string(&starts).expect("starts");
    for id in &ids {
        let n = text.lines().filter(|l| l == id).count();
        assert_eq!(
            n,
            2,
            "{id} started {n} times: {text}\n{}{}",
            stdout(&a),
            stdout(&b)
        );
    }
}

#[test]
fn bad_manifests_are_named_and_left_and_the_rest_restored() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    lost_sleeper(&sb, "good", "g-1", b"old output\r\n");
    let state = sb.sessions_state();
    let good = std::fs::read(state.join("good.json")).expect("good");
    let edit = |id: &str, change: &dyn Fn(&mut Value)| {
        let mut v: Value = serde_json::from_slice(&good).expect("json");
        v["id"] = id.into();
        change(&mut v);
        std::fs::write(
            state.join(format!("{id}.json")),
            serde_json::to_vec(&v).expect("json"),
        )
        .expect("write");
    };
    std::fs::write(state.join("truncated.json"), &good[..good.len() / 2]).expect("write");
    std::fs::write(state.join("garbage.json"), "id = 'garbage'\n").expect("write");
    edit("future", &|v| v["format"] = 99.into());
    let gone = sb.path().join("gone");
    edit("nodir", &|v| {
        v["workdir"] = gone.to_str().expect("utf-8").into()
    });
    edit("noprog", &|v| {
        v["argv"] = serde_json::json!(["no-such-program-hm-test"])
    });
    let before: Vec<(String, Vec<u8>)> = ["truncated", "garbage", "future"]
        .iter()
        .map(|id| {
            let f = state.join(format!("{id}.json"));
            ((*id).to_owned(), std::fs::read(f).expect("read"))
        })
        .collect();

    let out = sb.cmd(&["restore"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{}{err}", stdout(&out));
    assert!(
        stdout(&out).contains("restored 1 of 6 lost sessions (5 not restored: said above)"),
        "{}",
        stdout(&out)
    );
    for says in [
        "cannot read the manifest of 'truncated' (",
        "): it is truncated; it is left as it is",
        "cannot read the manifest of 'garbage' (",
        "): it is not a manifest (not JSON",
        "cannot read the manifest of 'future' (",
        "): it was written by a newer hm (format 99; this one reads up to 1): upgrade hm",
        &format!(
            "not restoring 'nodir': its directory '{}' no longer exists",
            gone.display()
        ),
        "not restoring 'noprog': 'no-such-program-hm-test' is no longer installed",
    ] {
        assert!(err.contains(says), "{says}: {err}");
    }
    assert!(sb.sock_dir.join("good.sock").exists());
    for (id, bytes) in before {
        assert_eq!(
            std::fs::read(state.join(format!("{id}.json"))).expect("still there"),
            bytes,
            "{id} left as it was"
        );
    }
    // Lost, not restorable as they are, and named in hm ls.
    let ls = stdout(&sb.cmd(&["ls"]));
    for id in ["nodir", "noprog"] {
        let line = ls.lines().find(|l| l.starts_with(id)).unwrap_or_default();
        assert!(
            line.contains("lost") && !line.contains("restartable"),
            "{id}: {ls}"
        );
    }
}

#[test]
fn output_is_kept_at_most_once_a_second_and_not_at_all_while_idle() {
    use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
    use std::time::{Duration, Instant};
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    // About four seconds of output, a line every few milliseconds, then
    // nothing.
    bg(
        &sb,
        &[
            "--id",
            "flow",
            "--",
            "sh",
            "-c",
            "sleep 0.5; i=0; while [ $i -lt 40 ]; do seq 1 200; i=$((i+1)); sleep 0.1; done; \
             echo the end; exec sleep 600",
        ],
        &[],
    );
    wait_until("the session to be kept", || manifest(&sb, "flow").is_some());
    let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).expect("inotify");
    inotify
        .add_watch(
            &sb.sessions_state(),
            AddWatchFlags::IN_MODIFY | AddWatchFlags::IN_MOVED_TO | AddWatchFlags::IN_CLOSE_WRITE,
        )
        .expect("watch");
    // Each write of the history, as seen from outside, by when; and when
    // the last output was seen on disk.
    let mut writes: Vec<Instant> = Vec::new();
    let mut ended: Option<Instant> = None;
    let deadline = Instant::now() + Duration::from_secs(60);
    while ended.is_none_or(|t| t.elapsed() < Duration::from_secs(3)) {
        assert!(Instant::now() < deadline, "the output never ended");
        if let Ok(events) = inotify.read_events() {
            let now = Instant::now();
            let ours = events.iter().filter(|e| {
                e.name
                    .as_ref()
                    .is_some_and(|n| n.to_string_lossy().starts_with("flow.history"))
            });
            writes.extend(ours.map(|_| now));
        }
        if ended.is_none() && history(&sb, "flow").contains("the end") {
            ended = Some(Instant::now());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let ended = ended.expect("ended");
    // Events of one write (a modify, a close) come together: a write is a
    // burst of them.
    let mut flushes: Vec<Instant> = Vec::new();
    for w in &writes {
        if flushes
            .last()
            .is_none_or(|f| w.duration_since(*f) > Duration::from_millis(150))
        {
            flushes.push(*w);
        }
    }
    assert!(flushes.len() >= 3, "kept while it flowed: {flushes:?}");
    for pair in flushes.windows(2) {
        let gap = pair[1].duration_since(pair[0]);
        assert!(
            gap >= Duration::from_millis(800),
            "two writes {gap:?} apart: {flushes:?}"
        );
    }
    let last = *writes.last().expect("writes");
    assert!(
        last <= ended + Duration::from_millis(200),
        "written while idle, {:?} after the last output was kept",
        last.duration_since(ended)
    );
}

/// The manifest and history format 1, as this version writes them: every
/// later version must read them (tests/fixtures/restore/, frozen; the
/// placeholders are this sandbox's). Its boot is not this one: the mark
/// says the machine restarted.
#[test]
fn a_format_1_manifest_is_restored_after_a_restart_of_the_machine() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/restore");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let text = std::fs::read_to_string(fixtures.join("format-1.json"))
        .expect("fixture")
        .replace("@WORKDIR@", sb.path().to_str().expect("utf-8"))
        .replace("@SOCKET_DIR@", sb.dir())
        .replace("@HOST@", host.trim());
    let state = sb.sessions_state();
    std::fs::create_dir_all(&state).expect("state");
    std::fs::write(state.join("legacy.json"), text).expect("write");
    std::fs::copy(
        fixtures.join("format-1.history"),
        state.join("legacy.history"),
    )
    .expect("copy");

    let out = sb.cmd(&["restore", "legacy"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let st = status_json(&sb, "legacy");
    assert_eq!(
        (
            st["label"].as_str(),
            st["cols"].as_u64(),
            st["rows"].as_u64()
        ),
        (Some("from an older hm"), Some(90), Some(20)),
        "{st}"
    );
    let logs = stdout(&sb.cmd(&["logs", "legacy"]));
    let lines: Vec<&str> = logs.lines().collect();
    let mark = lines
        .iter()
        .position(|l| l.starts_with("── restored "))
        .unwrap_or_else(|| panic!("no mark: {logs}"));
    assert_eq!(
        &lines[..mark],
        ["$ make test", "all 41 tests passed", "$"],
        "{logs}"
    );
    assert!(
        lines[mark].ends_with(", after the machine restarted ──"),
        "{}",
        lines[mark]
    );
    // Written again by this version: the same format, with its old output.
    let m = manifest(&sb, "legacy").expect("manifest");
    assert_eq!(m["format"], 1);
    assert_ne!(m["instance"], "4242-1795826225647");
    assert!(m["restored_unix_ms"].is_u64(), "{m}");
    wait_until("the history kept again", || {
        history(&sb, "legacy").contains("all 41 tests passed")
    });
}

#[test]
fn autostart_is_printed_and_installed_only_when_asked() {
    let sb = Sandbox::new();
    let out = sb
        .hm()
        .args(["setup", "autostart"])
        .output()
        .expect("setup");
    assert!(out.status.success(), "{}", stderr(&out));
    let unit = stdout(&out);
    assert!(
        unit.contains(&format!("ExecStart={} restore\n", common::HM)),
        "{unit}"
    );
    assert!(unit.contains("KillMode=process\n") && unit.contains("WantedBy=default.target"));
    assert!(
        stderr(&out).contains("nothing was installed"),
        "{}",
        stderr(&out)
    );
    let file = sb.path().join("config/systemd/user/hm-restore.service");
    assert!(!file.exists());
    // systemd's own systemctl would talk to this user's real manager: a
    // stand-in on PATH notes what it was asked instead.
    let bin = sb.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let asked = sb.path().join("asked");
    std::fs::write(
        bin.join("systemctl"),
        format!("#!/bin/sh\necho \"$*\" >> {}\n", asked.display()),
    )
    .expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        bin.join("systemctl"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
    let path = path_with(&bin);
    let out = sb
        .hm()
        .args(["setup", "autostart", "--install"])
        .env("PATH", &path)
        .output()
        .expect("setup --install");
    assert!(out.status.success(), "{}", stderr(&out));
    let written = std::fs::read_to_string(&file).expect("written");
    assert!(
        written.contains(&format!("Environment=\"PATH={path}\"")),
        "{written}"
    );
    assert!(stdout(&out).contains(&format!("wrote {}", file.display())));
    assert!(stdout(&out).contains("enabled"), "{}", stdout(&out));
    assert_eq!(
        std::fs::read_to_string(&asked).expect("systemctl ran"),
        "--user enable hm-restore.service\n"
    );
}

/// What `hm restore` keeps is named by id: a session of the same id in
/// another socket dir took over the running one's manifest, which then
/// vanished after a restart (and `hm rm` there took it). It is left alone;
/// the other session is not kept.
#[test]
fn a_session_of_the_same_id_in_another_socket_dir_leaves_the_kept_one_alone() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    bg(&sb, &["--id", "dup", "--", "sleep", "600"], &[]);
    let ours = sb.sock_dir.to_string_lossy().into_owned();
    wait_until("it to be kept", || {
        manifest(&sb, "dup").is_some_and(|m| m["socket_dir"] == ours.as_str())
    });
    let other = sb.path().join("other");
    std::fs::create_dir(&other).expect("mkdir");
    std::fs::set_permissions(&other, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .expect("chmod");
    let other = other.to_string_lossy().into_owned();
    let run = |args: &[&str]| {
        sb.hm()
            .arg(args[0])
            .args(["--socket-dir", &other])
            .args(&args[1..])
            .output()
            .expect("run hm")
    };
    let out = run(&["run", "--bg", "--id", "dup", "--", "sleep", "600"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(&["kill", "dup"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(&["rm", "dup"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let kept = manifest(&sb, "dup").expect("the first session's manifest");
    assert_eq!(kept["socket_dir"], ours.as_str(), "{kept}");
    reboot(&sb);
    let ls = stdout(&sb.cmd(&["ls"]));
    assert!(
        ls.lines()
            .any(|l| l.starts_with("dup ") && l.contains(" lost")),
        "{ls}"
    );
}

/// A supervisor a signal stopped (a Ctrl-C to `hm run --detach`, a
/// shutdown) leaves a record, but the session is lost, as `hm ls` lists
/// it: `hm send` and `hm attach` say so (they said it had ended, exit
/// 143).
#[test]
fn a_session_whose_supervisor_a_signal_stopped_is_said_lost_by_every_command() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    bg(&sb, &["--id", "det1", "--", "sleep", "600"], &[]);
    wait_until("it to be kept", || manifest(&sb, "det1").is_some());
    let pid_file = sb.sock_dir.join("det1.pid");
    let text = std::fs::read_to_string(&pid_file).expect("pid file");
    let sup: i32 = text
        .lines()
        .next()
        .and_then(|l| l.trim().parse().ok())
        .expect("pid");
    kill(Pid::from_raw(sup), Signal::SIGINT).expect("SIGINT");
    wait_until("it to be lost", || {
        stdout(&sb.cmd(&["ls"]))
            .lines()
            .any(|l| l.starts_with("det1 ") && l.contains(" lost"))
    });
    let out = sb.cmd(&["send", "det1", "hello"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("session 'det1' was lost when its supervisor went away"),
        "{}",
        stderr(&out)
    );
}

/// After a reboot, the many commands left for want of `hm run --restore`
/// are said in one line, not one each (24 lines hid the 6 that
/// mattered); the session restored is said as before.
#[test]
fn many_commands_not_started_with_restore_are_said_in_one_line() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    let ids = ["svc1", "svc2", "svc3", "svc4", "svc5"];
    for id in ids {
        bg(&sb, &["--id", id, "--", "sleep", "600"], &[]);
    }
    bg(
        &sb,
        &["--id", "sh1", "--restore", "--", "sleep", "600"],
        &[],
    );
    wait_until("all to be kept", || {
        ids.iter()
            .chain(&["sh1"])
            .all(|id| manifest(&sb, id).is_some())
    });
    reboot(&sb);
    let out = sb.cmd(&["restore"]);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(
            "not restoring 5 sessions whose commands run again only if started with 'hm run \
             --restore' ('svc1', 'svc2', 'svc3', ...): 'hm restart ID' runs one as it was, \
             'hm clean' forgets them"
        ),
        "{err}"
    );
    assert!(stdout(&out).contains("restored 'sh1'"), "{}", stdout(&out));
}

#[test]
fn a_lost_command_not_started_with_restore_is_listed_restarted_or_forgotten() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    bg(&sb, &["--id", "dev", "--", "sleep", "600"], &[]);
    bg(&sb, &["--id", "old", "--", "sleep", "600"], &[]);
    bg(
        &sb,
        &["--id", "kept", "--restore", "--", "sleep", "600"],
        &[],
    );
    wait_until("all three to be kept", || {
        ["dev", "old", "kept"]
            .iter()
            .all(|id| manifest(&sb, id).is_some())
    });
    reboot(&sb);
    let ls = sb.cmd(&["ls"]);
    // The count is of every row that says `lost`.
    assert!(
        stderr(&ls).contains(
            "hm: 3 sessions lost when their supervisors went away: 'hm restore' starts 1 of them again"
        ),
        "{}",
        stderr(&ls)
    );
    assert!(
        stdout(&ls)
            .lines()
            .any(|l| l.starts_with("dev ") && l.contains(" lost ") && !l.contains("restartable")),
        "{}",
        stdout(&ls)
    );
    assert!(
        stderr(&ls).contains("'hm restart ID' runs it as it was"),
        "{}",
        stderr(&ls)
    );
    // Said once: listed again, the STATE column says it.
    let again = sb.cmd(&["ls"]);
    assert!(stdout(&again).contains(" lost "), "{}", stdout(&again));
    assert_eq!(stderr(&again), "");
    let out = sb.cmd(&["restore", "dev"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("not restoring 'dev': a command runs again only if it was started with 'hm run --restore'"),
        "{}",
        stderr(&out)
    );
    // `hm status` shows it as `hm ls` lists it, and says what `hm
    // restore` would do; `--json` reads as `hm ls --json` lists it.
    let out = sb.cmd(&["status", "dev"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("state:    lost\n"), "{text}");
    assert!(text.contains("command:  sleep 600\n"), "{text}");
    assert!(
        text.contains("'hm restore' would not start it (a command runs again only if it was started with 'hm run --restore'): 'hm restart dev' runs it as it was"),
        "{text}"
    );
    let lost = status_json(&sb, "dev");
    assert_eq!(
        (&lost["lost"], &lost["restartable"]),
        (&Value::Bool(true), &Value::Bool(false)),
        "{lost}"
    );
    // Nothing named: it is not a failure to leave it.
    let out = sb.cmd(&["restore"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = sb.cmd(&["restart", "dev"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(status_json(&sb, "dev")["command"][0], "sleep");
    let out = sb.cmd(&["rm", "old"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(manifest(&sb, "old").is_none());
    assert!(!stdout(&sb.cmd(&["ls"])).contains("old"));
}

/// A new session never silently takes a kept one's place: `--id` of a
/// lost session (what `hm restore` would bring back) or an ended one says
/// that its record and output go, and a name chosen from the command
/// passes over both. Each was replaced without a word, and `hm logs` of
/// the ended one printed nothing after.
#[test]
fn a_new_session_does_not_silently_take_a_lost_or_ended_ones_id() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    lost_sleeper(&sb, "sleep", "i-lost", b"what it printed\r\n");
    lost_sleeper(&sb, "api", "i-api", b"its output\r\n");
    // `hm run --bg ARGS` (the socket dir before the command).
    let run = |args: &[&str]| {
        sb.hm()
            .args(["run", "--bg", "--socket-dir", sb.dir()])
            .args(args)
            .output()
            .expect("run hm run --bg")
    };
    let out = run(&["--id", "api", "--", "sleep", "600"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "replacing the lost session 'api': its record and output go ('hm restore api' \
         would have brought it back)\n"
    );
    // Named from its command: the next free name.
    let out = run(&["--", "sleep", "600"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "sleep-2");
    // An ended session: named from the command, passed over; named with
    // --id, replaced, saying so.
    bg(&sb, &["--id", "true", "--", "true"], &[]);
    wait_until("it to end", || {
        stdout(&sb.cmd(&["ls"]))
            .lines()
            .any(|l| l.starts_with("true ") && l.contains("exited 0"))
    });
    let out = run(&["--", "true"]);
    assert_eq!(stdout(&out).trim(), "true-2", "{}", stderr(&out));
    let out = run(&["--id", "true", "--", "true"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with("replacing the ended session 'true' (exited 0, ")
            && err.contains("its record and output go"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn the_dashboard_shows_a_lost_session_and_r_restores_it() {
    use common::terminal::Terminal;
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    bg(
        &sb,
        &[
            "--id",
            "api",
            "--restore",
            "--",
            "sh",
            "-c",
            "echo serving v1; exec sleep 600",
        ],
        // A secret the dashboard's environment does not have.
        &[("HM_T_TOKEN", "tok-first")],
    );
    wait_until("its output to be kept", || {
        history(&sb, "api").contains("serving v1")
    });
    reboot(&sb);
    let args: Vec<std::ffi::OsString> = vec!["tui".into(), "--socket-dir".into(), sb.dir().into()];
    let mut t = Terminal::start(
        common::HM.as_ref(),
        &args,
        &sb.terminal_env(&[("SHELL", "/bin/sh")]),
        sb.path(),
        (24, 100),
        "$ hm tui",
    );
    t.wait_for("the lost session's pane", |t| {
        t.contains("lost (restartable)") && t.contains("serving v1") && t.contains("restore 1 lost")
    });
    t.send(b"R");
    wait_until("the session to run again", || {
        status_json(&sb, "api")["alive"] == true
    });
    t.wait_for("the notice of what R did", |t| {
        t.contains("restored 'api' without HM_T_TOKEN, which is not set here")
    });
    // Its pane is live again, with the new output; the old output and the
    // mark after it are its history (the program may take its alternate
    // screen, which would hide a mark left on the screen).
    t.wait_for("its pane with the new output", |t| {
        !t.contains("lost (restartable)") && t.contains("serving v1")
    });
    wait_until("the old output, the mark, the new output", || {
        let logs = stdout(&sb.cmd(&["logs", "api"]));
        let old = logs.find("serving v1");
        let mark = logs.find("── restored ");
        let new = logs.rfind("serving v1");
        matches!((old, mark, new), (Some(o), Some(m), Some(n)) if o < m && m < n)
    });
    t.send(b"q");
    t.wait_exit();
}

/// What `hm restore` says it runs is the whole command: a resumed
/// conversation's id at the end of a long command was cut at 80
/// characters (`codex resume 01a23ab6-0eb5-7761-…`), piped or not.
#[test]
fn restore_names_a_long_command_whole() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    let tail = "the-end-of-a-long-command-0123456789";
    let script =
        format!("echo {tail} >/dev/null; echo one two three four five six seven; exec sleep 600");
    bg(
        &sb,
        &["--id", "long", "--restore", "--", "sh", "-c", &script],
        &[],
    );
    wait_until("it to be kept", || manifest(&sb, "long").is_some());
    reboot(&sb);
    let dry = sb
        .hm()
        .args(["restore", "--dry-run", "--socket-dir", sb.dir()])
        .output()
        .expect("dry run");
    let plan = stdout(&dry);
    assert!(
        plan.contains(&format!("sh -c '{script}' (in ")),
        "{plan}{}",
        stderr(&dry)
    );
}

/// Starts `hm run --restore -- sleep 600` as `id`, waits until its
/// manifest is kept, and gives its supervisor's and its program's pids.
fn kept_sleeper(sb: &Sandbox, id: &str) -> (i32, i32) {
    bg(sb, &["--id", id, "--restore", "--", "sleep", "600"], &[]);
    wait_until("it to be kept", || manifest(sb, id).is_some());
    let pid_file =
        std::fs::read_to_string(sb.sock_dir.join(format!("{id}.pid"))).expect("pid file");
    let mut pids = pid_file.lines().map(|l| l.trim().parse::<i32>().ok());
    match (pids.next().flatten(), pids.next().flatten()) {
        (Some(sup), Some(child)) => (sup, child),
        _ => panic!("pid file: {pid_file}"),
    }
}

/// A system shutting down sends SIGTERM to every process: the supervisor
/// stops its session as asked, and the session is lost, not ended by the
/// user: `hm restore` brings it back.
#[test]
fn a_session_stopped_by_sigterm_is_lost_and_restored() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    let (sup, _) = kept_sleeper(&sb, "sh1");
    kill(Pid::from_raw(sup), Signal::SIGTERM).expect("SIGTERM");
    wait_until("the session to stop", || {
        manifest(&sb, "sh1").is_some_and(|m| m["ended"]["how"] == "stopped")
    });
    wait_until("its supervisor to exit", || !running(sup));
    let ls = stdout(&sb.cmd(&["ls"]));
    assert!(
        ls.lines()
            .any(|l| l.starts_with("sh1 ") && l.contains("lost (restartable)")),
        "{ls}"
    );
    // Its program died of the signal the supervisor sent as it stopped:
    // not killed by anyone (it is lost, for `hm restore`).
    // hm status says what hm ls does: lost, not how its program ended.
    let v = status_json(&sb, "sh1");
    assert_eq!(
        (&v["killed"], &v["lost"], &v["restartable"]),
        (&false.into(), &true.into(), &true.into()),
        "{v}"
    );
    let said = stdout(&sb.cmd(&["status", "sh1"]));
    assert!(said.contains("state:    lost (restartable)"), "{said}");
    let out = sb.cmd(&["restore"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert_eq!(status_json(&sb, "sh1")["alive"], true);
    // Stopped by hm kill instead, it stays stopped.
    let killed = sb.cmd(&["kill", "sh1"]);
    assert!(killed.status.success(), "{}", stderr(&killed));
    let out = sb.cmd(&["restore"]);
    assert!(
        stdout(&out).contains("no lost sessions"),
        "{}",
        stdout(&out)
    );
}

/// A shutdown signals every process at once, so the program may die of
/// its signal before the supervisor reads its own: the session is still
/// kept as stopped, not as ended. Its program is killed here first, then
/// the supervisor, once the program's death is seen.
#[test]
fn a_program_killed_just_before_its_supervisor_is_still_lost() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    let (sup, child) = kept_sleeper(&sb, "sh1");
    // A subscriber told of the end holds the supervisor until it lets go:
    // the SIGTERM comes while it is surely there (`hm wait` now stays to
    // read how the session ended, until the supervisor has gone).
    let mut raw = common::Raw::connect(&sb.sock("sh1")).expect("connect");
    raw.send(heimdall::protocol::ClientType::Subscribe as u8, &[]);
    kill(Pid::from_raw(child), Signal::SIGKILL).expect("SIGKILL");
    raw.expect(heimdall::protocol::ServerType::Exit as u8);
    kill(Pid::from_raw(sup), Signal::SIGTERM).expect("SIGTERM");
    drop(raw);
    wait_until("its supervisor to exit", || !running(sup));
    let m = manifest(&sb, "sh1").expect("manifest");
    assert_eq!(m["ended"]["how"], "stopped", "{m}");
    let ls = stdout(&sb.cmd(&["ls"]));
    assert!(
        ls.lines()
            .any(|l| l.starts_with("sh1 ") && l.contains("lost (restartable)")),
        "{ls}"
    );
    // Killed by someone while hm runs on, it ended.
    let (_, child) = kept_sleeper(&sb, "sh2");
    kill(Pid::from_raw(child), Signal::SIGKILL).expect("SIGKILL");
    wait_until("the end to be kept", || {
        manifest(&sb, "sh2").is_some_and(|m| m["ended"]["how"] == "exited")
    });
}

/// `hm clean` forgets a lost session `hm restore` would not start, and
/// says so apart from the ended ones (it called it ended); one restore
/// would start is kept.
#[test]
fn clean_names_the_lost_sessions_it_forgets() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    bg(&sb, &["--id", "plain", "--", "sleep", "600"], &[]);
    bg(
        &sb,
        &["--id", "again", "--restore", "--", "sleep", "600"],
        &[],
    );
    wait_until("both to be kept", || {
        manifest(&sb, "plain").is_some() && manifest(&sb, "again").is_some()
    });
    reboot(&sb);
    bg(&sb, &["--id", "done", "--", "true"], &[]);
    wait_until("done to end", || {
        stdout(&sb.cmd(&["ls"]))
            .lines()
            .any(|l| l.starts_with("done ") && l.contains("exited 0"))
    });
    let out = sb.cmd(&["clean"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "removed 1 ended session\n\
         removed 1 lost session that 'hm restore' would not start\n\
         kept 1 lost session for 'hm restore' ('hm rm ID' forgets one)\n"
    );
    assert!(manifest(&sb, "plain").is_none() && manifest(&sb, "again").is_some());
}

/// A supervisor killed outright (not a restart of the machine) leaves its
/// pid file, socket and log in the socket dir: `hm rm` and `hm clean` of
/// the lost session take them too, not only what is kept for `hm
/// restore` (they were left for good, and the pid file listed it again).
#[test]
fn forgetting_a_lost_session_takes_what_its_supervisor_left() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    let left = |id: &str| -> Vec<String> {
        std::fs::read_dir(&sb.sock_dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&format!("{id}.")))
            .collect()
    };
    let mut pids = Vec::new();
    for id in ["gone", "gone2"] {
        let (sup, child) = {
            bg(&sb, &["--id", id, "--", "sleep", "600"], &[]);
            wait_until("it to be kept", || manifest(&sb, id).is_some());
            let text =
                std::fs::read_to_string(sb.sock_dir.join(format!("{id}.pid"))).expect("pid file");
            let mut l = text.lines().map(|l| l.trim().parse::<i32>().expect("pid"));
            (l.next().expect("supervisor"), l.next().expect("program"))
        };
        kill(Pid::from_raw(child), Signal::SIGKILL).expect("SIGKILL");
        kill(Pid::from_raw(sup), Signal::SIGKILL).expect("SIGKILL");
        pids.extend([sup, child]);
    }
    wait_until("the killed processes to be gone", || {
        pids.iter().all(|p| !running(*p))
    });
    let ls = stdout(&sb.cmd(&["ls"]));
    assert!(
        ls.lines()
            .any(|l| l.starts_with("gone ") && l.contains(" lost")),
        "{ls}"
    );
    // hm ls has cleared the dead supervisor's pid file and socket; its
    // log stays, for a look at why it died.
    assert_eq!(left("gone"), ["gone.log"]);
    let out = sb.cmd(&["rm", "gone"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(left("gone"), Vec::<String>::new());
    assert!(manifest(&sb, "gone").is_none());
    let out = sb.cmd(&["clean"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("removed 1 lost session that 'hm restore' would not start"),
        "{}",
        stdout(&out)
    );
    assert_eq!(left("gone2"), Vec::<String>::new());
    assert!(!stdout(&sb.cmd(&["ls"])).contains("gone"));
}

/// `hm restart` of a lost command that `hm restore` would not start runs
/// it as it was, with its old output before the restored mark, as `hm
/// restore` brings a session back (it started with no history).
#[test]
fn restart_of_a_lost_command_keeps_its_old_output() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    bg(
        &sb,
        &[
            "--id",
            "noisy",
            "--",
            "sh",
            "-c",
            "echo before-the-crash; exec sleep 600",
        ],
        &[],
    );
    wait_until("its output kept", || {
        history(&sb, "noisy").contains("before-the-crash")
    });
    reboot(&sb);
    let out = sb.cmd(&["restart", "noisy"]);
    assert!(out.status.success(), "{}", stderr(&out));
    wait_until("the old output, then the mark, then the new", || {
        let logs = stdout(&sb.cmd(&["logs", "noisy"]));
        let old = logs.find("before-the-crash");
        // Restarted as it was, not restored: the mark says which.
        let mark = logs.find("── restarted ");
        let new = logs.rfind("before-the-crash");
        matches!((old, mark, new), (Some(o), Some(m), Some(n)) if o < m && m < n)
    });
}

/// A build lost with its supervisor: `hm logs` prints what it printed, as
/// kept for `hm restore`, and says on stderr that it was lost; it refused
/// and sent the person to rerun the build to read its failure.
#[test]
fn logs_of_a_lost_session_print_its_kept_output() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    bg(
        &sb,
        &[
            "--id",
            "build",
            "--",
            "sh",
            "-c",
            "for i in 1 2 3; do echo compiling unit $i; done; echo error: unit 3 failed; exec sleep 600",
        ],
        &[],
    );
    wait_until("its output kept", || {
        history(&sb, "build").contains("unit 3 failed")
    });
    reboot(&sb);
    let out = sb.cmd(&["logs", "build"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "compiling unit 1\ncompiling unit 2\ncompiling unit 3\nerror: unit 3 failed\n"
    );
    assert!(
        stderr(&out).contains("'build' was lost when its supervisor went away"),
        "{}",
        stderr(&out)
    );
    let out = sb.cmd(&["logs", "build", "--lines", "1"]);
    assert_eq!(stdout(&out), "error: unit 3 failed\n");
    let out = sb.cmd(&["logs", "build", "--grep", "failed"]);
    assert_eq!(stdout(&out), "error: unit 3 failed\n");
    // Forgotten, it is no session at all.
    assert!(sb.cmd(&["rm", "build"]).status.success());
    let out = sb.cmd(&["logs", "build"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no session named 'build'"),
        "{}",
        stderr(&out)
    );
}

/// A program on its alternate screen (as Claude Code and Codex draw)
/// leaves nothing in a history by itself: restored, its last screen from
/// before is in `hm logs` all the same, then the mark, though the program
/// takes its alternate screen again.
#[test]
fn a_restored_full_screen_program_keeps_its_last_screen_and_the_mark() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    let draw = "printf 'on the main screen\\n\\033[?1049h\\033[Hthe conversation so far\\n'; \
                exec sleep 600";
    bg(&sb, &["--id", "full", "--", "sh", "-c", draw], &[]);
    wait_until("its output kept", || {
        history(&sb, "full").contains("the conversation so far")
    });
    reboot(&sb);
    let out = sb.cmd(&["restart", "full"]);
    assert!(out.status.success(), "{}", stderr(&out));
    wait_until(
        "the main screen, the last screen, the mark, the new",
        || {
            let logs = stdout(&sb.cmd(&["logs", "full"]));
            let main = logs.find("on the main screen");
            let last = logs.find("the conversation so far");
            let mark = logs.find("── restarted ");
            let new = logs.rfind("the conversation so far");
            matches!((main, last, mark, new),
            (Some(a), Some(b), Some(m), Some(n)) if a < b && b < m && m < n)
        },
    );
}

/// An agent that ended is restarted by the dashboard's `r` as the same
/// conversation (as `hm restart` does), and the dashboard says so rather
/// than only that it started.
/// An agent whose conversation hm never learned (its hook never said
/// one) starts a new one when restarted, and `hm restart` says so: it
/// said nothing, where an agent it knows says it resumes.
#[test]
fn restart_of_an_agent_without_a_known_conversation_says_it_starts_a_new_one() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    let bin = standin(&sb);
    let log = sb.path().join("claude.log");
    let path = path_with(&bin);
    let env = [
        ("PATH", path.as_str()),
        ("STANDIN_LOG", log.to_str().expect("utf-8")),
        ("STANDIN_FIRST_ID", ""),
    ];
    bg(&sb, &["--id", "agent", "--", "claude"], &env);
    wait_until("the stand-in to start", || log.exists());
    let killed = sb.cmd(&["kill", "agent"]);
    assert!(killed.status.success(), "{}", stderr(&killed));
    let mut restart = sb.hm();
    restart.args(["restart", "agent", "--socket-dir", sb.dir()]);
    for (k, v) in env {
        restart.env(k, v);
    }
    let out = restart.output().expect("hm restart");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "hm: 'agent' starts a new claude conversation: hm never learned the last one's id \
             (see 'hm setup claude')"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn r_on_an_ended_agent_resumes_its_conversation_and_says_so() {
    use common::terminal::Terminal;
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    let bin = standin(&sb);
    let log = sb.path().join("claude.log");
    let path = path_with(&bin);
    let env = [
        ("PATH", path.as_str()),
        ("STANDIN_LOG", log.to_str().expect("utf-8")),
        ("STANDIN_FIRST_ID", FIRST_ID),
    ];
    // Its key, which the dashboard's environment has not: the restart
    // says it starts without it (Claude Code only says "Not logged in").
    let with_key: Vec<(&str, &str)> = env
        .iter()
        .copied()
        .chain([("STANDIN_API_KEY", "sk")])
        .collect();
    bg(&sb, &["--id", "agent", "--", "claude"], &with_key);
    wait_until("the agent's conversation to be kept", || {
        manifest(&sb, "agent").is_some_and(|m| m["agent"]["id"] == FIRST_ID)
    });
    let killed = sb.cmd(&["kill", "agent"]);
    assert!(killed.status.success(), "{}", stderr(&killed));
    // The restart runs in the environment the agent started in, its
    // secrets' values from the dashboard's.
    let args: Vec<std::ffi::OsString> = vec!["tui".into(), "--socket-dir".into(), sb.dir().into()];
    let mut t = Terminal::start(
        common::HM.as_ref(),
        &args,
        &sb.terminal_env(&env),
        sb.path(),
        (24, 140),
        "$ hm tui",
    );
    t.wait_for("the ended agent's pane", |t| t.contains("killed"));
    t.send(b"r");
    t.wait_for("the question", |t| t.contains("run 'agent' again?"));
    t.send(b"y");
    t.wait_for("the notice that it resumed", |t| {
        t.contains(
            "restarted 'agent', resuming its claude conversation; 'agent' without \
             STANDIN_API_KEY, which is not set here",
        )
    });
    wait_until(
        "the stand-in to be started as the same conversation",
        || {
            std::fs::read_to_string(&log).is_ok_and(|l| {
                l.lines()
                    .any(|a| a.contains(&format!("--resume {FIRST_ID}")))
            })
        },
    );
    t.wait_for("its pane, live again", |t| {
        t.contains(&format!("conversation {FIRST_ID} ready")) && !t.contains("killed")
    });
    t.send(b"q");
    t.wait_exit();
}

/// A restore starts a session in the environment it started in, not the
/// restoring shell's: three Claude Code sessions started with three
/// `ANTHROPIC_BASE_URL`s came back on one. A secret's value is never kept
/// (taken from the restoring environment, or said missing), nor is the
/// login's SSH agent (taken from here: the old one is gone).
#[test]
fn a_restored_session_has_the_environment_it_started_in() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    let script = "echo \"base=$HM_T_BASE key=${HM_T_KEY-unset} token=${HM_T_TOKEN-unset} \
                  db=${HM_T_DB-unset} ssh=$SSH_AUTH_SOCK\"; exec sleep 600";
    bg(
        &sb,
        &["--id", "env1", "--restore", "--", "sh", "-c", script],
        &[
            ("HM_T_BASE", "http://127.0.0.1:9/one"),
            ("HM_T_KEY", "sk-first-never-on-disk"),
            ("HM_T_TOKEN", "tok-first"),
            // Not named like a secret, but holding a password.
            ("HM_T_DB", "postgres://app:pw-first@db/app"),
            ("SSH_AUTH_SOCK", "/tmp/old-login/agent"),
        ],
    );
    wait_until("its first line", || {
        stdout(&sb.cmd(&["logs", "env1"])).contains("base=")
    });
    wait_until("it to be kept", || manifest(&sb, "env1").is_some());
    let kept = std::fs::read_to_string(sb.sessions_state().join("env1.json")).expect("manifest");
    assert!(kept.contains("http://127.0.0.1:9/one"), "{kept}");
    assert!(
        !kept.contains("sk-first")
            && !kept.contains("tok-first")
            && !kept.contains("pw-first")
            && !kept.contains("old-login"),
        "{kept}"
    );
    let kept_instance = manifest(&sb, "env1").expect("manifest")["instance"].clone();
    reboot(&sb);
    let here = [
        ("HM_T_BASE", "http://127.0.0.1:9/other"),
        ("HM_T_KEY", "sk-second"),
        ("HM_T_DB", "postgres://app:pw-second@db/app"),
        ("SSH_AUTH_SOCK", "/tmp/new-login/agent"),
    ];
    let dry = sb
        .hm()
        .args(["restore", "--dry-run", "--socket-dir", sb.dir()])
        .envs(here)
        .env_remove("HM_T_TOKEN")
        .output()
        .expect("hm restore --dry-run");
    // Those this shell has come from here; the one it lacks is said on
    // stderr, not claimed here as well.
    assert!(
        stdout(&dry).contains("; HM_T_DB, HM_T_KEY from here)"),
        "{}",
        stdout(&dry)
    );
    let note = "hm: 'env1' started with HM_T_TOKEN set, which is not set here: it starts \
                without it (the values of secrets are never kept)";
    assert!(stderr(&dry).contains(note), "{}", stderr(&dry));
    let out = sb
        .hm()
        .args(["restore", "--socket-dir", sb.dir()])
        .envs(here)
        .env_remove("HM_T_TOKEN")
        .output()
        .expect("hm restore");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains(note), "{}", stderr(&out));
    let want = "base=http://127.0.0.1:9/one key=sk-second token=unset \
                db=postgres://app:pw-second@db/app ssh=/tmp/new-login/agent";
    wait_until("the restored program's line", || {
        stdout(&sb.cmd(&["logs", "env1"])).contains(want)
    });
    // The secret's name is kept though this restore had no value for it:
    // a restart from an environment that has one passes it on (it was
    // gone from the manifest, and with it from every restart after).
    wait_until("the restored session's manifest", || {
        manifest(&sb, "env1").is_some_and(|m| m["instance"] != kept_instance)
    });
    let names = manifest(&sb, "env1").expect("manifest")["secret_env"].clone();
    assert!(
        names
            .as_array()
            .is_some_and(|a| a.iter().any(|n| n == "HM_T_TOKEN")),
        "{names}"
    );
    let killed = sb.cmd(&["kill", "env1"]);
    assert!(killed.status.success(), "{}", stderr(&killed));
    let out = sb
        .hm()
        .args(["restart", "env1", "--socket-dir", sb.dir()])
        .envs(here)
        .env("HM_T_TOKEN", "tok-third")
        .output()
        .expect("hm restart");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    wait_until("the restarted program's line", || {
        stdout(&sb.cmd(&["logs", "env1"])).contains("token=tok-third")
    });
}

/// The directory a path names, as a `&str`.
fn text(p: &Path) -> &str {
    p.to_str().expect("utf-8")
}

/// A shell whose last directory went (moved, deleted) was refused by `hm
/// restore` and listed as not restartable, blamed on `hm run --restore`.
/// It comes back in the directory it started in, else at home, and says
/// so.
#[test]
fn a_shell_whose_directory_is_gone_comes_back_where_it_started_or_at_home() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    let proj = sb.path().join("proj");
    let sub = proj.join("sub");
    let lone = sb.path().join("lone");
    std::fs::create_dir_all(&sub).expect("sub");
    std::fs::create_dir_all(&lone).expect("lone");
    bg(
        &sb,
        &["--id", "moved", "--workdir", text(&proj), "--", "sh", "-i"],
        &[],
    );
    bg(
        &sb,
        &["--id", "alone", "--workdir", text(&lone), "--", "sh", "-i"],
        &[],
    );
    let cd = sb.cmd(&["send", "moved", "--enter", &format!("cd {}", text(&sub))]);
    assert!(cd.status.success(), "{}", stderr(&cd));
    wait_until("its last directory to be kept", || {
        manifest(&sb, "moved").is_some_and(|m| m["cwd"] == text(&sub))
    });
    wait_until("the other to be kept", || manifest(&sb, "alone").is_some());
    reboot(&sb);
    std::fs::rename(&sub, proj.join("sub.moved")).expect("move");
    std::fs::remove_dir(&lone).expect("remove");

    let ls = stdout(&sb.cmd(&["ls"]));
    for id in ["moved", "alone"] {
        assert!(
            ls.lines()
                .any(|l| l.starts_with(id) && l.contains("lost (restartable)")),
            "{ls}"
        );
    }
    let out = sb.cmd(&["restore"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{}{err}", stdout(&out));
    assert!(
        err.contains(&format!(
            "hm: restoring 'moved' in {} (its last directory {} no longer exists)\n",
            text(&proj),
            text(&sub)
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "hm: restoring 'alone' in {} (its last directory {} no longer exists)\n",
            text(sb.path()),
            text(&lone)
        )),
        "{err}"
    );
    assert!(
        stdout(&out).contains("restored 2 of 2 lost sessions"),
        "{}",
        stdout(&out)
    );
    assert_eq!(status_json(&sb, "moved")["workdir"], text(&proj));
    assert_eq!(status_json(&sb, "alone")["workdir"], text(sb.path()));
}

/// An agent whose directory was deleted is not resumed in another, where
/// its conversation is not and its work would touch other files: `hm ls`
/// says that (it blamed `hm run --restore`), `hm restore` and `hm
/// restart` refuse in one line naming the way out (`hm restart` failed
/// with a bare "No such file or directory (os error 2)"). A shell whose
/// directory went is restarted at home.
#[test]
fn an_agent_whose_directory_is_gone_is_refused_saying_why_and_a_shell_restarts_at_home() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    let bin = standin(&sb);
    let log = sb.path().join("claude.log");
    let path = path_with(&bin);
    let env = [
        ("PATH", path.as_str()),
        ("STANDIN_LOG", text(&log)),
        ("STANDIN_FIRST_ID", FIRST_ID),
    ];
    let work = sb.path().join("worktree");
    let shell_dir = sb.path().join("scratch");
    std::fs::create_dir_all(&work).expect("worktree");
    std::fs::create_dir_all(&shell_dir).expect("scratch");
    bg(
        &sb,
        &["--id", "agent", "--workdir", text(&work), "--", "claude"],
        &env,
    );
    bg(
        &sb,
        &[
            "--id",
            "sh1",
            "--workdir",
            text(&shell_dir),
            "--",
            "sh",
            "-i",
        ],
        &[],
    );
    wait_until("the agent's conversation to be kept", || {
        manifest(&sb, "agent").is_some_and(|m| m["agent"]["id"] == FIRST_ID)
    });
    wait_until("the shell to be kept", || manifest(&sb, "sh1").is_some());
    reboot(&sb);
    std::fs::remove_dir(&work).expect("remove the worktree");
    std::fs::remove_dir(&shell_dir).expect("remove the scratch dir");

    let ls = sb.cmd(&["ls"]);
    let row = stdout(&ls)
        .lines()
        .find(|l| l.starts_with("agent "))
        .unwrap_or_default()
        .to_owned();
    assert!(
        row.contains(" lost ") && !row.contains("restartable"),
        "{row}"
    );
    let err = stderr(&ls);
    assert!(
        err.contains(&format!(
            "hm: 'hm restore' will not start 'agent': its directory '{}' no longer exists",
            text(&work)
        )),
        "{err}"
    );
    assert!(!err.contains("hm run --restore"), "{err}");

    // `hm status` does not offer `hm restart`, which would refuse it too.
    let status = stdout(&sb.cmd(&["status", "agent"]));
    assert!(
        status.contains(
            "): put the directory back and run 'hm restore agent', or 'hm rm agent' forgets it)"
        ) && !status.contains("hm restart agent"),
        "{status}"
    );

    let out = sb.cmd(&["restore", "agent"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "hm: not restoring 'agent': its directory '{}' no longer exists, and only a shell is \
             started in another (put the directory back and run 'hm restore agent', or 'hm rm \
             agent' forgets it)\n",
            text(&work)
        )
    );
    let out = sb.cmd(&["restart", "agent"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!(
            "hm: cannot restart 'agent': its directory '{}' no longer exists",
            text(&work)
        )) && err.contains("'hm rm agent' forgets it")
            && err.lines().count() == 1,
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&log).expect("log").lines().count(),
        1,
        "the agent was not started again"
    );

    let out = sb.cmd(&["restart", "sh1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "hm: restarting 'sh1' in {} (its directory {} no longer exists)",
            text(sb.path()),
            text(&shell_dir)
        )),
        "{}",
        stderr(&out)
    );
    assert_eq!(status_json(&sb, "sh1")["workdir"], text(sb.path()));
}

/// After a reboot took the socket dir (and the records in it), a session
/// that had ended vanished from `hm ls`, `hm logs` and `hm restart` while
/// its files stayed in the state dir, and `hm rm` called it lost. Its
/// manifest says how it ended: it is listed, read, restarted and removed
/// as an ended session, and never restored.
#[test]
fn an_ended_session_outlives_the_socket_dir_as_ended() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    bg(
        &sb,
        &[
            "--id",
            "done",
            "--",
            "sh",
            "-c",
            "echo the-end-of-done; exit 3",
        ],
        &[],
    );
    bg(
        &sb,
        &["--id", "again", "--", "sh", "-c", "echo once-more; exit 4"],
        &[],
    );
    bg(
        &sb,
        &["--id", "server", "--restore", "--", "sleep", "600"],
        &[],
    );
    // Ended by a signal from another shell: killed, as its record says.
    bg(&sb, &["--id", "int", "--", "sleep", "600"], &[]);
    let status: Value =
        serde_json::from_slice(&sb.cmd(&["status", "int", "--json"]).stdout).expect("json");
    let pid = status["pid"].as_i64().expect("its pid") as i32;
    kill(Pid::from_raw(pid), Signal::SIGINT).expect("interrupt it");
    for id in ["done", "again", "int"] {
        wait_until("it to end, its manifest saying so", || {
            manifest(&sb, id).is_some_and(|m| m["ended"]["how"] == "exited")
        });
    }
    let before = stdout(&sb.cmd(&["ls"]));
    assert!(before.contains(" killed SIGINT "), "{before}");
    wait_until("the server to be kept", || {
        manifest(&sb, "server").is_some()
    });
    reboot(&sb);
    // As the login after a reboot leaves it: a fresh, empty socket dir.
    std::fs::create_dir(&sb.sock_dir).expect("socket dir");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&sb.sock_dir, std::fs::Permissions::from_mode(0o700)).expect("chmod");

    let table = stdout(&sb.cmd(&["ls"]));
    let row = |id: &str| {
        table
            .lines()
            .find(|l| l.starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("{id} listed: {table}"))
            .to_owned()
    };
    assert!(row("done").contains(" exited 3 "), "{table}");
    assert!(row("again").contains(" exited 4 "), "{table}");
    assert!(row("int").contains(" killed SIGINT "), "{table}");
    assert!(row("server").contains("lost (restartable)"), "{table}");
    let list: Value = serde_json::from_slice(&sb.cmd(&["ls", "--json"]).stdout).expect("json");
    let done = list
        .as_array()
        .expect("a list")
        .iter()
        .find(|v| v["id"] == "done")
        .expect("done in the json");
    assert_eq!(
        (&done["ended"], &done["exit_code"]),
        (&Value::Bool(true), &Value::from(3))
    );

    let logs = sb.cmd(&["logs", "done"]);
    assert!(logs.status.success(), "{}", stderr(&logs));
    assert!(
        stdout(&logs).contains("the-end-of-done"),
        "{}",
        stdout(&logs)
    );

    // The thin clients say how it ended, not that there is no such
    // session.
    let status = sb.cmd(&["status", "done"]);
    assert!(status.status.success(), "{}", stderr(&status));
    assert!(
        stdout(&status).contains("exited with code 3"),
        "{}",
        stdout(&status)
    );
    let wait = sb.cmd(&["wait", "done", "--state", "dead"]);
    assert!(wait.status.success(), "{}", stderr(&wait));
    assert_eq!(stdout(&wait), "done: exited with code 3\n");

    let dry = sb.cmd(&["restore", "--dry-run"]);
    assert!(
        stdout(&dry).contains("would restore 'server'"),
        "{}",
        stdout(&dry)
    );
    assert!(
        !stdout(&dry).contains("'done'") && !stdout(&dry).contains("'again'"),
        "{}",
        stdout(&dry)
    );

    let out = sb.cmd(&["restart", "again"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Run again as an ended session is, its earlier output kept above.
    wait_until("it to run again and end, its output kept", || {
        let logs = stdout(&sb.cmd(&["logs", "again"]));
        logs.matches("once-more").count() == 2 && logs.contains("── restarted ")
    });

    let out = sb.cmd(&["rm", "done"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "removed 'done', exited 3\n");
    assert!(manifest(&sb, "done").is_none());
    assert!(!sb.sessions_state().join("done.history").exists());
}

/// `hm restore` with nothing it would start printed only why for each,
/// and no summary: a person was left to work out that nothing started.
#[test]
fn a_restore_that_starts_nothing_says_so() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    bg(&sb, &["--id", "build", "--", "sleep", "600"], &[]);
    wait_until("it to be kept", || manifest(&sb, "build").is_some());
    reboot(&sb);
    let out = sb.cmd(&["restore"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not restoring 'build'"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        stdout(&out),
        "nothing to restore: 1 lost session not restored (said above)\n"
    );
}

/// The unit `hm setup autostart` writes carried only `PATH`: a user whose
/// socket dir or state dir is not the default got a unit whose `hm
/// restore` looked elsewhere and restored nothing. Run as systemd would
/// run it (its environment and a fresh login's, nothing of this shell's),
/// it restores their session.
#[test]
fn the_autostart_unit_restores_sessions_of_non_default_dirs() {
    let sb = Sandbox::new();
    let _reaper = Reaper(&sb);
    lost_sleeper(&sb, "kept", "k-1", b"before\r\n");
    let out = sb
        .hm()
        .args(["setup", "autostart"])
        .env("HM_SOCKET_DIR", &sb.sock_dir)
        .output()
        .expect("setup");
    assert!(out.status.success(), "{}", stderr(&out));
    let unit = stdout(&out);
    assert!(
        unit.contains(&format!("ExecStart={} restore\n", common::HM)),
        "{unit}"
    );
    let env: Vec<(String, String)> = unit
        .lines()
        .filter_map(|l| l.strip_prefix("Environment=\"")?.strip_suffix('"'))
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        ["PATH", "HM_SOCKET_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME"],
        "{unit}"
    );
    // What systemd gives a user unit, then what the unit says.
    let out = std::process::Command::new(common::HM)
        .env_clear()
        .env("HOME", sb.path())
        .env("XDG_RUNTIME_DIR", sb.path().join("run"))
        .envs(env)
        .arg("restore")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the unit's hm restore");
    assert!(
        stdout(&out).contains("restored 1 of 1 lost session"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(sb.sock("kept").exists());
}
