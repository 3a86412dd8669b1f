//! Plain programs that ask are "needs you" for every session, with no
//! flag or config: a `[y/N]`, a `Password:`, a `read`, a `Press any key`
//! are `waiting · input` by the default classifier, pushed to `hm wait`;
//! text typed at a shell's prompt is not; and a program that runs silently
//! is never `stuck`, whatever the classifier. Through real supervisors.

use crate::common;

use common::{Raw, Sandbox, stderr, stdout};
use heimdall::protocol::ClientType;
use std::time::Duration;

/// Kills a session started with `hm run --bg` when dropped.
struct Killed<'a>(&'a Sandbox, &'a str);

impl Drop for Killed<'_> {
    fn drop(&mut self) {
        let _ = self.0.cmd(&["kill", self.1, "--grace", "1"]);
    }
}

fn wait_for_input(sb: &Sandbox, id: &str) -> serde_json::Value {
    let mut last = serde_json::Value::Null;
    common::wait_until("waiting · input", || {
        last = sb.status_json(id);
        last["primary"] == "waiting" && last["detail"] == "input"
    });
    last
}

#[test]
fn a_fresh_session_at_a_yes_no_question_is_waiting_for_input() {
    let sb = Sandbox::new();
    // `hm run --bg` with no classifier, no config: the default one.
    let out = sb
        .hm()
        .args(["run", "--bg", "--id", "ask", "--socket-dir", sb.dir(), "--"])
        .args([
            "bash",
            "-c",
            "read -p 'Continue? [y/N] ' x; echo \"got $x\"; exec sleep 60",
        ])
        .output()
        .expect("run hm");
    assert!(out.status.success(), "{}", stderr(&out));
    let _s = Killed(&sb, "ask");
    // Pushed to a waiter (STATE frames), not found by polling.
    let out = sb.cmd(&["wait", "ask", "--state", "waiting", "--timeout", "10"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ask: waiting · input\n");
    let v = sb.status_json("ask");
    assert_eq!(v["state"], "waiting", "{v}");
    assert_eq!(v["signals"][0]["source"], "process", "{v}");
    let info = stdout(&sb.cmd(&["status", "ask"]));
    assert!(info.contains("waiting · input"), "{info}");
    // Answered, it no longer asks.
    let out = sb.cmd(&["send", "ask", "y", "--enter"]);
    assert!(out.status.success(), "{}", stderr(&out));
    common::wait_until("the answer taken", || {
        sb.status_json("ask")["primary"] != "waiting"
    });
}

/// A script that asks again as soon as it is answered stays waiting, and
/// the wait shown (`hm status`, the inbox's WAITED) is the new question's:
/// it counted from the first, which read as if the second had waited long.
#[test]
fn a_question_asked_right_after_another_has_waited_only_since_it_came() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "deploy",
        &[],
        &[
            "bash",
            "-c",
            "read -p 'Deploy to staging? [y/N] ' a; \
             read -p 'Also deploy to PRODUCTION? [y/N] ' b; exec sleep 60",
        ],
    );
    wait_for_input(&sb, "deploy");
    let mut v = serde_json::Value::Null;
    common::wait_until("the first question asked for 2 s", || {
        v = sb.status_json("deploy");
        v["state_ms"].as_u64().is_some_and(|ms| ms >= 2_000)
    });
    assert_eq!(v["dialog"]["subject"], "Deploy to staging? [y/N]", "{v}");
    let out = sb.cmd(&["send", "deploy", "y", "--enter"]);
    assert!(out.status.success(), "{}", stderr(&out));
    common::wait_until("the second question", || {
        v = sb.status_json("deploy");
        v["dialog"]["subject"]
            .as_str()
            .is_some_and(|s| s.contains("PRODUCTION"))
    });
    assert_eq!(v["primary"], "waiting", "{v}");
    let waited = v["state_ms"].as_u64().expect("state_ms");
    assert!(
        waited < 2_000,
        "the second question counts the first's wait: {v}"
    );
}

/// `python3 -i -c '...'` is a REPL once its code has run: at its `>>>`
/// it rests, as a bare `python3` does; it read `waiting · input` for good
/// (its reading taken for a script's question), first in the inbox.
#[test]
fn a_repl_started_with_code_to_run_first_rests_at_its_prompt() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "repl",
        &["--idle-threshold-ms", "300"],
        &["python3", "-i", "-c", "print('repl ready')"],
    );
    common::wait_until("its prompt", || {
        stdout(&sb.cmd(&["logs", "repl", "--screen"])).contains(">>>")
    });
    let mut v = serde_json::Value::Null;
    common::wait_until("a second without output", || {
        v = sb.status_json("repl");
        v["idle_ms"].as_u64().is_some_and(|ms| ms >= 1_000)
    });
    assert_eq!(
        (&v["primary"], &v["state"]),
        (&"idle".into(), &"idle".into()),
        "{v}"
    );
}

#[test]
fn passwords_and_press_any_key_are_waiting_for_input() {
    let sb = Sandbox::new();
    let _pw = sb.start(
        "pw",
        &[],
        &["bash", "-c", "read -s -p 'Password: ' p; exec sleep 60"],
    );
    // Raw mode, one key: the terminal is not canonical.
    let key = "import sys, termios, tty\nprint('Press any key to continue', flush=True)\n\
               tty.setraw(0)\nsys.stdin.read(1)\n";
    let _key = sb.start("key", &[], &["python3", "-c", key]);
    // Python's getpass reads its own open of /dev/tty, as sudo and ssh do.
    let _tty = sb.start(
        "tty",
        &[],
        &[
            "python3",
            "-c",
            "import getpass; getpass.getpass('Password: ')",
        ],
    );
    for id in ["pw", "key", "tty"] {
        wait_for_input(&sb, id);
    }
}

#[test]
fn text_typed_at_a_shell_prompt_is_not_a_question() {
    let sb = Sandbox::new();
    let _s = sb.start("sh", &[], &["bash", "--norc", "--noprofile", "-i"]);
    let mut raw = Raw::connect(&sb.sock("sh")).expect("connect");
    raw.send(ClientType::Subscribe as u8, &[]);
    raw.send(ClientType::Input as u8, b"echo 'Continue? [y/N] '");
    raw.output_until(b"[y/N] '");
    // The shell reads in its line editor: typed, not asked.
    common::never_waiting(&sb, "sh", 20, "typed text");
    // Entered as a command that reads, it is one.
    raw.send(
        ClientType::Input as u8,
        b"\x15read -p 'Continue? [y/N] ' x\r",
    );
    wait_for_input(&sb, "sh");
}

/// Vim's question about a swap file (`[O]pen Read-Only, (E)dit anyway,
/// ...:`), read with the terminal raw where the process facts see no
/// question, is one by its screen; the same text typed at a shell's
/// prompt is not.
#[test]
fn vims_swap_file_question_is_waiting_for_input_and_the_same_text_typed_is_not() {
    let runs = |vim: &&&str| {
        std::process::Command::new(vim)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let Some(vim) = ["vim", "vim.tiny"].iter().find(runs).copied() else {
        eprintln!("skipped: no vim here (.ci/run installs vim-tiny)");
        return;
    };
    let sb = Sandbox::new();
    let file = sb.path().join("notes.txt");
    std::fs::write(&file, "hello\n").expect("write the file");
    let file = file.to_str().expect("utf-8 path");
    let agent = ["--classifier", "agent"];
    let _first = sb.start("first", &agent, &[vim, "-u", "NONE", "-i", "NONE", file]);
    let swap = sb.path().join(".notes.txt.swp");
    common::wait_until("vim's swap file", || swap.exists());
    let _second = sb.start("second", &agent, &[vim, "-u", "NONE", "-i", "NONE", file]);
    let v = wait_for_input(&sb, "second");
    let subject = v["dialog"]["subject"].as_str().unwrap_or_default();
    assert!(
        subject.starts_with("[O]pen Read-Only, (E)dit anyway"),
        "{v}"
    );

    let _sh = common::bash_with_typed(
        &sb,
        "sh",
        "[O]pen Read-Only, (E)dit anyway, (Q)uit, (A)bort:",
    );
    common::never_waiting(&sb, "sh", 20, "typed text");
}

/// A shell at its prompt is at rest however it came there: dash as the
/// session (no line editor, so its prompt reads a line as `read` does), a
/// script that ends in `exec bash`, a shell typed at another's prompt. Each
/// was `waiting · input` for good, and the dashboard's inbox listed them
/// as needing their user. The script's own question before the exec asks.
#[test]
fn a_shell_at_its_prompt_is_at_rest_however_it_came_there() {
    let sb = Sandbox::new();
    let quick = ["--idle-threshold-ms", "300"];
    let bash = "bash --norc --noprofile";
    let _dash = sb.start("dash", &quick, &["sh"]);
    let _ends = sb.start(
        "ends",
        &quick,
        &[
            "sh",
            "-c",
            &format!("printf 'Continue? [y/N] '; read a; exec {bash}"),
        ],
    );
    let _outer = sb.start("outer", &quick, &["bash", "--norc", "--noprofile", "-i"]);
    at_rest(&sb, "dash");
    wait_for_input(&sb, "ends");
    let out = sb.cmd(&["send", "ends", "y", "--enter"]);
    assert!(out.status.success(), "{}", stderr(&out));
    at_rest(&sb, "ends");
    at_rest(&sb, "outer");
    let out = sb.cmd(&["send", "outer", bash, "--enter"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let pid = sb.status_json("outer")["pid"].as_u64().expect("a pid");
    common::wait_until("the inner shell started", || {
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .is_ok_and(|c| !c.trim().is_empty())
    });
    at_rest(&sb, "outer");
    for id in ["dash", "ends", "outer"] {
        let v = sb.status_json(id);
        assert_ne!(v["primary"], "waiting", "{id}: {v}");
    }
}

/// Waits until session `id` is idle, and says it is not at a question.
fn at_rest(sb: &Sandbox, id: &str) {
    let mut last = serde_json::Value::Null;
    common::wait_until(&format!("{id} idle at its prompt"), || {
        last = sb.status_json(id);
        last["primary"] == "idle"
    });
    assert_ne!(last["detail"], "input", "{last}");
}

/// A REPL reads its terminal all the time, so its reading says nothing
/// and its screen decides: `input('Continue? [y/N] ')` run in python3's
/// REPL asks on its own row. The default classifier said `idle` there
/// (and `hm approve` refused), the agent one `waiting · input` even at a
/// bare `>>> `. Text typed after `>>> ` is the user's, whatever it says.
#[test]
fn a_question_asked_in_a_repl_is_waiting_for_input_and_its_prompt_is_not() {
    let sb = Sandbox::new();
    let quick = ["--idle-threshold-ms", "300"];
    let agent = ["--classifier", "agent", "--idle-threshold-ms", "300"];
    let _plain = sb.start("pyrepl", &quick, &["python3", "-q"]);
    let _agent = sb.start("pyagent", &agent, &["python3", "-q"]);
    let screen = |id: &str| stdout(&sb.cmd(&["logs", id, "--screen"]));
    for id in ["pyrepl", "pyagent"] {
        common::wait_until("the REPL's prompt", || screen(id).contains(">>>"));
        at_rest(&sb, id);
        let out = sb.cmd(&["send", id, "Continue? [y/N] "]);
        assert!(out.status.success(), "{}", stderr(&out));
        common::wait_until("the typed text", || {
            screen(id).contains(">>> Continue? [y/N]")
        });
        at_rest(&sb, id);
        // Typed text is never a question; run, the program's own row is.
        let out = sb.cmd(&["send", id, "--keys", "C-u"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let out = sb.cmd(&["send", id, "input('Continue? [y/N] ')", "--enter"]);
        assert!(out.status.success(), "{}", stderr(&out));
        wait_for_input(&sb, id);
        // The prompt may come in pieces (`Continue?`, then ` [y/N] `), and
        // a look between them reads the first as a question of its own.
        let mut last = serde_json::Value::Null;
        common::wait_until("the yes/no question", || {
            last = sb.status_json(id);
            last["signals"][0]["rule"] == "input.yes_no"
        });
        assert_eq!(last["detail"], "input", "{last}");
        let out = sb.cmd(&["approve", id]);
        assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
        common::wait_until("the answer taken", || screen(id).contains("'y'"));
        at_rest(&sb, id);
    }
}

/// A program redrawing every few seconds (`top` every 3 s) was idle for
/// a moment at each redraw, its silences just past the idle threshold:
/// an `idle` and an `active` in `hm events` at every one. Once its beat
/// is known it is one stretch of work, under either classifier, until it
/// stops.
#[test]
fn a_program_printing_at_a_steady_beat_past_the_threshold_stays_active() {
    let sb = Sandbox::new();
    let beat = "for i in 1 2 3 4 5 6 7; do echo beat $i; sleep 3.4; done; exec sleep 60";
    // The agent classifier by timing alone: the running `sleep` would
    // say active all along.
    let conf = sb.path().join("agent.toml");
    std::fs::write(&conf, "[classifier.agent]\nprocess_evidence = false\n").expect("config");
    let conf = conf.to_str().expect("utf-8");
    let _plain = sb.start("plain", &[], &["bash", "-c", beat]);
    let _agent = sb.start("agent", &["--config", conf], &["bash", "-c", beat]);
    assert_eq!(sb.status_json("agent")["classifier"], "agent");
    for id in ["plain", "agent"] {
        common::wait_until(&format!("{id}'s fourth beat"), || {
            stdout(&sb.cmd(&["logs", id])).contains("beat 4")
        });
    }
    // Past the next beat's silence, active all along.
    for id in ["plain", "agent"] {
        let mut v = serde_json::Value::Null;
        common::wait_until(&format!("{id} active for 5 s"), || {
            v = sb.status_json(id);
            assert_ne!(v["primary"], "idle", "idle between beats: {v}");
            v["state_ms"].as_u64().is_some_and(|ms| ms >= 5_000)
        });
        assert_eq!(v["primary"], "active", "{v}");
    }
    // It stops after the seventh: no longer at work a beat and a half
    // later (`idle`; the agent classifier with no evidence left says
    // `unknown`).
    for (id, after) in [("plain", "idle"), ("agent", "unknown")] {
        common::wait_until(&format!("{id} {after} once it stops"), || {
            sb.status_json(id)["primary"] == after
        });
    }
}

#[test]
fn a_program_running_silently_is_never_stuck() {
    let sb = Sandbox::new();
    // Not `./heimdall.toml`, which the plain session would read as well.
    let conf = sb.path().join("agent.toml");
    std::fs::write(&conf, "[classifier.agent]\nstuck_after_ms = 1000\n").expect("config");
    let conf = conf.to_str().expect("utf-8");
    let script = "echo compiling; exec sleep 60";
    // The file's table chooses the agent classifier with its parameter
    // (`--classifier agent` would start it afresh, with 60 s).
    let a = sb.start("agent", &["--config", conf], &["bash", "-c", script]);
    let _b = sb.start("plain", &[], &["bash", "-c", script]);
    // Well past stuck_after: still not stuck.
    common::wait_until("1.5 s of silence", || {
        sb.status_json("agent")["idle_ms"]
            .as_u64()
            .is_some_and(|ms| ms >= 1_500)
    });
    // Nor does it spin: past stuck_after the agent's supervisor once
    // looked again at once, forever, a core's worth of /proc reads (2 s
    // of CPU in these 2 s; a look a second is its due).
    let cpu = cpu_over(a.child.id(), Duration::from_secs(2));
    assert!(
        cpu < 150,
        "the supervisor used {cpu} ms of CPU in 2 s of silence"
    );
    for id in ["agent", "plain"] {
        let v = sb.status_json(id);
        assert_eq!(
            v["classifier"],
            if id == "agent" { "agent" } else { "simple" }
        );
        assert_ne!(v["primary"], "stuck", "{v}");
        assert_eq!(v["health"], "alive", "{v}");
    }
}

/// A program stopped (SIGSTOP, Ctrl-Z) is `waiting · stopped` until it is
/// continued; its last verdict's deadlines (here the idle threshold after
/// its output) pass meanwhile with no verdict taken, and must not wake
/// its supervisor again and again.
#[test]
fn a_stopped_agent_session_does_not_spin() {
    let sb = Sandbox::new();
    let conf = sb.path().join("agent.toml");
    std::fs::write(&conf, "[classifier.agent]\nstuck_after_ms = 1000\n").expect("config");
    let conf = conf.to_str().expect("utf-8");
    let s = sb.start(
        "job",
        &["--config", conf],
        &[
            "sh",
            "-c",
            "echo before; sleep 1; kill -STOP $$; exec sleep 600",
        ],
    );
    common::wait_until("stopped", || sb.status_json("job")["detail"] == "stopped");
    assert_eq!(sb.status_json("job")["classifier"], "agent");
    // Through its idle threshold (3 s after its output), stopped all
    // along: nothing to do but wait for `hm continue`.
    let cpu = cpu_over(s.child.id(), Duration::from_secs(4));
    assert!(
        cpu < 150,
        "the supervisor used {cpu} ms of CPU in 4 s stopped"
    );
    assert_eq!(sb.status_json("job")["detail"], "stopped");
}

/// The CPU time process `pid` used over the next `window`, in
/// milliseconds, asked nothing meanwhile (each question costs some).
/// The sleep is the span measured, not a wait for anything.
fn cpu_over(pid: u32, window: Duration) -> u64 {
    let before = cpu_ms(pid);
    std::thread::sleep(window);
    cpu_ms(pid) - before
}

/// The CPU time process `pid` has used, in milliseconds.
fn cpu_ms(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the supervisor runs");
    // After the command's name in parentheses: utime and stime are the
    // 12th and 13th fields.
    let rest = &stat[stat.rfind(')').expect("stat") + 2..];
    let fields: Vec<u64> = rest
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    let tick = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .and_then(|t| u64::try_from(t).ok())
        .unwrap_or(100);
    (fields[11] + fields[12]) * 1000 / tick
}

/// A server blocked in `poll` on its one socket is not asking anything,
/// though `poll` on one descriptor is also how a program can wait for a
/// key: the descriptor polled is read from the program's memory.
#[test]
fn a_server_polling_its_socket_is_not_waiting_for_input() {
    let sb = Sandbox::new();
    let srv = sb.start(
        "srv",
        &[],
        &["python3", "-m", "http.server", "0", "--bind", "127.0.0.1"],
    );
    // Asked while it sits in poll(2) on its socket (the state is
    // computed from the process facts when asked).
    let pid = srv.child_pid().expect("the server's pid");
    let in_poll = || {
        std::fs::read_to_string(format!("/proc/{pid}/syscall"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<i64>().ok())
            .is_some_and(|n| n == libc::SYS_poll || n == libc::SYS_ppoll)
    };
    common::wait_until("the server in poll(2)", || {
        in_poll() && stdout(&sb.cmd(&["logs", "srv", "--screen"])).contains("Serving HTTP")
    });
    let v = sb.status_json("srv");
    assert!(in_poll(), "still in poll after the status");
    assert_ne!(v["primary"], "waiting", "{v}");
    // A program polling its terminal on one descriptor still asks.
    let key = "import select, sys\nprint('Press any key', flush=True)\n\
               p = select.poll(); p.register(0, select.POLLIN); p.poll()\n";
    let _key = sb.start("key", &[], &["python3", "-c", key]);
    wait_for_input(&sb, "key");
}
