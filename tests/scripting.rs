//! The commands for scripts: `hm run --bg`, `hm send`, `hm wait`,
//! `hm logs`, through real supervisors.

use crate::common;

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

/// The lines a child prints on `pipe`, as they come.
fn lines_of(pipe: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    use std::io::BufRead;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// A command started beside the test whose stdout is read as it comes,
/// so the test can wait for what it has printed.
struct Printing {
    child: std::process::Child,
    text: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    reader: std::thread::JoinHandle<()>,
}

impl Printing {
    fn new(mut child: std::process::Child) -> Printing {
        use std::io::Read;
        let mut out = child.stdout.take().expect("its stdout");
        let text = std::sync::Arc::<std::sync::Mutex<Vec<u8>>>::default();
        let shared = text.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0; 4096];
            while let Ok(n @ 1..) = out.read(&mut buf) {
                shared
                    .lock()
                    .expect("its text")
                    .extend_from_slice(&buf[..n]);
            }
        });
        Printing {
            child,
            text,
            reader,
        }
    }

    fn has_printed(&self, what: &str) -> bool {
        String::from_utf8_lossy(&self.text.lock().expect("its text")).contains(what)
    }

    /// Waits for it to exit: all it printed, and how it ended.
    fn output(self) -> std::process::Output {
        let Printing {
            child,
            text,
            reader,
        } = self;
        let mut out = child.wait_with_output().expect("wait for it");
        reader.join().expect("its reader");
        out.stdout = std::mem::take(&mut *text.lock().expect("its text"));
        out
    }
}

/// The command failed with `code`, saying `text` on stderr.
fn fails_with(out: &std::process::Output, code: i32, text: &str) {
    assert_eq!(out.status.code(), Some(code), "{}", stderr(out));
    assert!(stderr(out).contains(text), "{}", stderr(out));
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

/// A supervisor that says, as a wait subscribes, that its session is
/// idle (since 5 s), then active, then idle again (since 0 s), as one
/// just started does once its work ends.
fn idle_active_idle(s: std::os::unix::net::UnixStream) {
    use heimdall::protocol::{ClientType, ServerType, frame};
    let state = |name: &str, byte: heimdall::classify::ProcessState, ms: u64| {
        let report = serde_json::json!({
            "state": name, "state_byte": byte.as_byte(), "primary": name,
            "health": "alive", "state_ms": ms, "signals": [],
        });
        frame(ServerType::State as u8, report.to_string().as_bytes())
    };
    common::fake::answer(s, |ty| match ClientType::try_from(ty) {
        Ok(ClientType::Subscribe) => {
            use heimdall::classify::ProcessState::{Active, Idle};
            let mut out = state("idle", Idle, 5000);
            out.extend(state("active", Active, 0));
            out.extend(state("idle", Idle, 0));
            Some(out)
        }
        _ => None,
    });
}

/// A session just started is idle until its first output: `--change`
/// waits for it to become idle anew, after its work; a plain wait takes
/// the idle it is in.
#[test]
fn wait_with_change_waits_for_the_state_to_be_entered_anew() {
    let sb = Sandbox::new();
    let _lock = common::fake::listen(&sb, "w1", idle_active_idle);
    let waited = |change: &[&str]| {
        let mut args = vec!["wait", "w1", "--state", "idle", "--json", "--timeout", "10"];
        args.extend(change);
        let out = sb.cmd(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        v["state_ms"].as_u64()
    };
    assert_eq!(waited(&[]), Some(5000));
    assert_eq!(waited(&["--change"]), Some(0));
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
    let last = stdout(&sb.cmd(&["logs", &s.id, "-n", "2"]));
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
    fails_with(
        &out,
        1,
        "timed out after 0.3s waiting for 'ends' to be waiting",
    );
    let out = sb.cmd(&["wait", &s.id, "--state", "waiting", "--timeout", "20"]);
    fails_with(&out, 1, "'ends' exited with code 3 before it was waiting");
}

/// Several ids: the first of them to be in the state answers, as one
/// alone would; one that ends first is said on stderr and waited for no
/// more; with none left, the wait fails; on time-out, all are named.
#[test]
fn wait_for_several_sessions_answers_with_the_first_in_the_state() {
    let sb = Sandbox::new();
    let quiet = bg(
        &sb,
        &["--id", "quiet", "--classifier", "agent"],
        &["sh", "-c", "echo working; sleep 30"],
    );
    let ends = bg(
        &sb,
        &["--id", "ends", "--classifier", "agent"],
        &["sh", "-c", "sleep 1; exit 3"],
    );
    let asks = bg(
        &sb,
        &["--id", "asks", "--classifier", "agent"],
        &[
            "bash",
            "-c",
            "sleep 2; read -p 'Deploy? [y/N] ' x; sleep 30",
        ],
    );
    let out = sb.cmd(&[
        "wait",
        &quiet.id,
        &ends.id,
        &asks.id,
        "--state",
        "waiting",
        "--timeout",
        "20",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "asks: waiting · input\n");
    assert!(
        stderr(&out).contains("'ends' exited with code 3 before it was waiting"),
        "{}",
        stderr(&out)
    );
    let out = sb.cmd(&[
        "wait",
        &quiet.id,
        &ends.id,
        "--state",
        "waiting",
        "--timeout",
        "0.5",
    ]);
    // Named: those still waited for ('ends' had ended, and was said so).
    fails_with(
        &out,
        1,
        "timed out after 0.5s waiting for 'quiet' to be waiting",
    );
    assert!(
        stderr(&out).contains("'ends' exited with code 3 before it was waiting"),
        "{}",
        stderr(&out)
    );
    // Ended before the wait: with `exited` asked for, that is the answer.
    let out = sb.cmd(&["wait", &quiet.id, &ends.id, "--state", "exited"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ends: exited with code 3\n");
    let _ = sb.cmd(&["kill", &quiet.id, &asks.id]);
}

#[test]
fn wait_for_exited_returns_the_exit_code_line() {
    let sb = Sandbox::new();
    let s = bg(&sb, &["--id", "short"], &["sh", "-c", "sleep 1; exit 3"]);
    let out = sb.cmd(&["wait", &s.id, "--state", "exited", "--timeout", "20"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "short: exited with code 3\n");
    // With --json, the object `hm status --json` gives, not the line.
    let out = sb.cmd(&["wait", &s.id, "--state", "exited", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one object");
    let status: serde_json::Value =
        serde_json::from_slice(&sb.cmd(&["status", &s.id, "--json"]).stdout).expect("status");
    assert_eq!(
        (v["ended"].as_bool(), v["exit_code"].as_i64()),
        (Some(true), Some(3))
    );
    assert_eq!(v["command"], status["command"]);
    assert_eq!(v["ended_unix_ms"], status["ended_unix_ms"]);
}

/// A supervisor stopped by a signal (a shutdown's SIGTERM; Ctrl-C to a
/// foreground `hm run --detach`) ends its program and leaves the session
/// lost, for `hm restore`: `hm wait`, `hm ls`, `hm status` and `hm rm`
/// say so alike, with the code the program ended with. `hm wait` said
/// "exited with code 143" and `hm rm` "exited 143" where `hm ls` said
/// lost, with no code.
#[test]
fn a_session_whose_supervisor_a_signal_stopped_is_lost_to_every_command() {
    let sb = Sandbox::new();
    let mut s = sb.start("stopped", &[], &["sleep", "300"]);
    let sup = nix::unistd::Pid::from_raw(s.child.id() as i32);
    nix::sys::signal::kill(sup, nix::sys::signal::Signal::SIGTERM).expect("stop it");
    s.wait_exit();
    let out = sb.cmd(&["wait", "stopped", "--state", "exited", "--timeout", "5"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "stopped: lost: its supervisor was stopped by a signal (exit code 143)\n"
    );
    let out = sb.cmd(&["wait", "stopped", "--state", "exited", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one object");
    let status: serde_json::Value =
        serde_json::from_slice(&sb.cmd(&["status", "stopped", "--json"]).stdout).expect("status");
    let listed: serde_json::Value =
        serde_json::from_slice(&sb.cmd(&["ls", "--json"]).stdout).expect("ls");
    assert_eq!(v, status);
    assert_eq!(listed[0], status);
    assert_eq!(
        (
            v["lost"].as_bool(),
            v["ended"].as_bool(),
            v["exit_code"].as_i64()
        ),
        (Some(true), Some(false), Some(143)),
        "{v}"
    );
    assert!(v["ended_unix_ms"].is_u64(), "{v}");
    let out = sb.cmd(&["rm", "stopped"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "removed the lost session 'stopped' (exit code 143)\n"
    );
}

/// A session ended by `hm kill` was not a failure: `hm wait` says it was
/// killed, both to a wait already following it and to one started after.
#[test]
fn wait_says_a_killed_session_was_killed() {
    let sb = Sandbox::new();
    let _s = bg(&sb, &["--id", "long"], &["sleep", "300"]);
    let sock = std::path::Path::new(sb.dir()).join("long.sock");
    let until = |what: &str, n: usize| {
        let deadline = Instant::now() + Duration::from_secs(10);
        while common::clients(&sock) != n {
            assert!(
                Instant::now() < deadline,
                "{what}: {} clients",
                common::clients(&sock)
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    until("no client yet", 0);
    let waiting = sb.background(&["wait", "long", "--state", "exited", "--timeout", "30"]);
    // Killed only once the wait follows the session.
    until("hm wait to connect", 1);
    let out = sb.cmd(&["kill", "long"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = waiting.wait_with_output().expect("hm wait");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "long: killed by SIGTERM (exit code 143)\n");
    let out = sb.cmd(&["wait", "long", "--state", "exited", "--timeout", "5"]);
    assert_eq!(stdout(&out), "long: killed by SIGTERM (exit code 143)\n");
    let out = sb.cmd(&["wait", "long", "--state", "waiting", "--timeout", "5"]);
    fails_with(
        &out,
        1,
        "'long' killed by SIGTERM (exit code 143) before it was waiting",
    );
}

/// A state change that a new follower's subscription is the first to
/// see is told to every follower, not to the new one alone: a program
/// that starts reading without printing moves no state by itself, and
/// one `hm wait` (or `hm events`, or a dashboard) following it heard of
/// the wait only at the next output, when another came to look.
#[test]
fn a_change_a_new_follower_finds_is_told_to_every_follower() {
    let sb = Sandbox::new();
    let gate = common::gate(&sb, "gate");
    let script = format!(
        "printf ready; cat {} >/dev/null; read x; echo got $x",
        gate.display()
    );
    let _s = bg(&sb, &["--id", "quiet"], &["sh", "-c", &script]);
    let sock = sb.sock("quiet");
    // At rest: no threshold is left to run out, so nothing wakes the
    // supervisor's tracker but output.
    let out = sb.cmd(&["wait", "quiet", "--state", "idle", "--timeout", "10"]);
    assert!(out.status.success(), "{}", stderr(&out));
    common::wait_until("no one to follow", || common::clients(&sock) == 0);
    let mut first = sb.background(&["wait", "quiet", "--state", "waiting", "--timeout", "30"]);
    common::wait_until("the first wait to follow", || common::clients(&sock) == 1);
    // It reads its terminal now, and prints nothing.
    common::open_gate(&gate);
    common::wait_until("the program to read", || {
        stdout(&sb.cmd(&["status", "quiet"])).contains("waiting · input")
    });
    let out = sb.cmd(&["wait", "quiet", "--state", "waiting", "--timeout", "10"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let deadline = Instant::now() + Duration::from_secs(10);
    while first.try_wait().expect("hm wait").is_none() {
        assert!(Instant::now() < deadline, "the first wait was never told");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = first.wait_with_output().expect("hm wait");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "quiet: waiting · input\n");
}

/// The same id started again the moment its program ended (a script's
/// loop) replaces it, and says so once: it was said to replace it and
/// then refused as "already running", the supervisor still on its way out.
#[test]
fn an_id_started_again_the_moment_it_ended_is_replaced() {
    let sb = Sandbox::new();
    for n in 0..3 {
        let id = format!("again{n}");
        let run = |word: &str| {
            sb.hm()
                .args(["run", "--bg", "--id", &id, "--socket-dir", sb.dir()])
                .args(["--", "sh", "-c", &format!("echo {word}")])
                .output()
                .expect("run hm run --bg")
        };
        let first = run("first");
        assert!(first.status.success(), "{}", stderr(&first));
        // Its program has ended: its record is written, which its
        // supervisor does on its way out.
        let record = sb.sock_dir.join(format!("{id}.ended"));
        common::wait_until("the record", || record.exists());
        let again = run("second");
        assert!(again.status.success(), "{n}: {}", stderr(&again));
        let err = stderr(&again);
        assert!(!err.contains("already running"), "{n}: {err}");
        let out = sb.cmd(&["wait", &id, "--state", "exited", "--timeout", "20"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let logs = stdout(&sb.cmd(&["logs", &id]));
        assert!(logs.contains("second") && !logs.contains("first"), "{logs}");
    }
}

/// `hm logs -f` of a full-screen program says, once, that what it draws
/// is no history, and goes on with the lines it prints once it leaves
/// the alternate screen: it printed nothing and looked stuck.
#[test]
fn following_a_full_screen_program_says_why_nothing_comes() {
    let sb = Sandbox::new();
    let gate = common::gate(&sb, "gate");
    let script = format!(
        "echo before; printf '\\033[?1049h'; echo drawn; cat {} >/dev/null; \
         printf '\\033[?1049l'; echo after",
        gate.display()
    );
    let _s = bg(&sb, &["--id", "full"], &["sh", "-c", &script]);
    common::wait_until("the full screen drawn", || {
        stdout(&sb.cmd(&["logs", "full", "--screen"])).contains("drawn")
    });
    let sock = sb.sock("full");
    common::wait_until("no one to follow", || common::clients(&sock) == 0);
    let mut follower = sb.background(&["logs", "full", "-f"]);
    // The note comes once the replay is read and following has begun: the
    // gate opened before that (a connection counted is not yet a replay
    // read) ended the session within the replay, and `hm logs` of an
    // ended session rightly shows the last screen it left.
    let rx = lines_of(follower.stderr.take().expect("stderr"));
    let note = rx.recv_timeout(common::PATIENCE).expect("the note");
    assert!(
        note.starts_with("hm: 'full' draws on the alternate screen (a full-screen program)")
            && note.contains("'hm logs full --screen' shows the screen now"),
        "{note}"
    );
    assert_eq!(common::clients(&sock), 1);
    common::open_gate(&gate);
    let out = follower.wait_with_output().expect("hm logs -f");
    let rest: Vec<String> = rx.iter().collect();
    assert!(out.status.success(), "{rest:?}");
    assert_eq!(stdout(&out), "before\nafter\n");
    // Said once, and then how it ended.
    assert_eq!(rest, ["hm: 'full' exited with code 0"]);
}

/// A script's next command, started the moment its program exits, meets a
/// supervisor on its way out, which resets the connections it has not
/// served: each says how the session ended, as it would a moment later,
/// and none fails with "Connection reset by peer".
#[test]
fn commands_started_as_the_program_exits_say_how_it_ended() {
    let sb = Sandbox::new();
    for n in 0..5 {
        let id = format!("quick{n}");
        let s = bg(
            &sb,
            &["--id", &id],
            &["sh", "-c", "echo said-$((40+2)); exit 3"],
        );
        let out = sb.cmd(&["wait", &s.id, "--state", "exited", "--timeout", "20"]);
        assert!(out.status.success(), "wait {n}: {}", stderr(&out));
        assert_eq!(stdout(&out), format!("{id}: exited with code 3\n"));
        let out = sb.cmd(&["logs", &id]);
        assert!(out.status.success(), "logs {n}: {}", stderr(&out));
        assert!(
            stdout(&out).contains("said-42"),
            "logs {n}: {}",
            stdout(&out)
        );
        let out = sb.cmd(&["rm", &id]);
        assert!(out.status.success(), "rm {n}: {}", stderr(&out));
    }
    for n in 0..5 {
        let id = format!("gone{n}");
        let s = bg(&sb, &["--id", &id], &["sh", "-c", "exit 4"]);
        let out = sb.cmd(&["send", &s.id, "hello", "--enter"]);
        fails_with(
            &out,
            1,
            &format!("session '{id}' has ended: exited with code 4"),
        );
        assert!(!stderr(&out).contains("reset"), "{}", stderr(&out));
    }
    // A question answered twice: the second answer meets the program on
    // its way out (it printed `Connection reset by peer` every time).
    for n in 0..3 {
        let id = format!("asked{n}");
        let s = bg(
            &sb,
            &["--id", &id],
            &["sh", "-c", "printf 'Apply? [y/N] '; read a; exit 5"],
        );
        common::wait_until("the question with its dialog", || {
            sb.status_json(&s.id)["dialog"]["rule"] == "input.yes_no"
        });
        let out = common::answer_when_it_takes_keys(&sb, &["approve", &id]);
        assert!(out.status.success(), "approve {n}: {}", stderr(&out));
        let out = sb.cmd(&["approve", &id]);
        fails_with(
            &out,
            1,
            &format!("session '{id}' has ended: exited with code 5"),
        );
        assert!(!stderr(&out).contains("reset"), "{}", stderr(&out));
    }
}

/// Where a shell is now, after its `cd`: `hm status` and its JSON say it
/// beside where it started (the dashboard's pane border shows it too,
/// from the same INFO field); they said only the start directory.
#[test]
fn status_says_where_a_shell_went() {
    let sb = Sandbox::new();
    let moved = sb.root.path().join("elsewhere");
    std::fs::create_dir(&moved).expect("a directory");
    let moved = moved.canonicalize().expect("its path");
    let s = bg(&sb, &["--id", "sh"], &["sh"]);
    let json = || -> serde_json::Value {
        serde_json::from_slice(&sb.cmd(&["status", &s.id, "--json"]).stdout).expect("json")
    };
    let started = json();
    assert_eq!(started["cwd"], started["workdir"], "{started}");
    let cd = format!("cd '{}'", moved.display());
    let out = sb.cmd(&["send", &s.id, &cd, "--enter"]);
    assert!(out.status.success(), "{}", stderr(&out));
    common::wait_until("the status to say where it went", || {
        json()["cwd"] == moved.display().to_string()
    });
    let text = stdout(&sb.cmd(&["status", &s.id]));
    assert!(
        text.contains(&format!("cwd:      {}", moved.display())),
        "{text}"
    );
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
    // Ctrl-C ends cat, and with it the session: its signal named.
    common::wait_until("cat to end", || {
        stdout(&sb.cmd(&["status", &s.id])).contains("killed by SIGINT (exit code 130)")
    });
    // A key name hm does not know is the command line's mistake.
    let bad = sb.cmd(&["send", "cat", "--keys", "Hyper-x"]);
    fails_with(&bad, 2, "unknown key 'Hyper-x'");
    let bad = sb.cmd(&["wait", "cat", "--state", "sleepy"]);
    fails_with(&bad, 2, "invalid value 'sleepy'");
    // A negative count is a bad value of its flag: clap's tip to write
    // `-- -5` instead would have made it the session's id.
    for args in [
        &["logs", "cat", "--lines", "-5"][..],
        &["logs", "cat", "--grep", "x", "-C", "-1"],
        &["logs", "cat", "--width", "-80"],
        &["approve", "cat", "--dialog", "-2"],
    ] {
        let bad = sb.cmd(args);
        fails_with(&bad, 2, "invalid value '-");
        assert!(!stderr(&bad).contains("use '--"), "{}", stderr(&bad));
    }
}

/// `hm events ID...` follows only those sessions; one not there yet is
/// said so (a typo waited in silence), and followed once it starts.
#[test]
fn events_of_some_sessions_only() {
    let sb = Sandbox::new();
    let a = bg(&sb, &["--id", "a"], &["sleep", "20"]);
    let b = bg(&sb, &["--id", "b"], &["sleep", "20"]);
    let mut events = sb
        .hm()
        .args(["events", "a", "later", "--json", "--socket-dir", sb.dir()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start hm events");
    let rx = lines_of(events.stdout.take().expect("stdout"));
    let err = lines_of(events.stderr.take().expect("stderr"));
    struct KillOnDrop(std::process::Child);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _events = KillOnDrop(events);
    let said = err
        .recv_timeout(common::PATIENCE)
        .expect("a word on 'later'");
    assert_eq!(
        said,
        "hm: no session 'later' yet (hm ls lists them); its events print once it starts"
    );
    let mut seen = Vec::new();
    let mut next = |what: &str| -> serde_json::Value {
        let line = rx
            .recv_timeout(common::PATIENCE)
            .unwrap_or_else(|_| panic!("no event: {what}; saw {seen:?}"));
        let v: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
        seen.push(line);
        v
    };
    let first = next("a's snapshot");
    assert_eq!(
        (&first["id"], &first["event"]),
        (&"a".into(), &"snapshot".into())
    );
    // b ends, then a starts later and a ends: only theirs are told.
    assert!(sb.cmd(&["kill", &b.id]).status.success());
    let _later = bg(&sb, &["--id", "later"], &["sleep", "20"]);
    let started = next("later's start");
    assert_eq!(
        (&started["id"], &started["event"]),
        (&"later".into(), &"started".into())
    );
    assert!(sb.cmd(&["kill", &a.id]).status.success());
    let ended = next("a's end");
    assert_eq!(
        (&ended["id"], &ended["event"]),
        (&"a".into(), &"ended".into())
    );
}

#[test]
fn events_streams_every_sessions_changes_as_they_happen() {
    let sb = Sandbox::new();
    let before = bg(&sb, &["--id", "before"], &["sleep", "20"]);
    let mut events = sb
        .hm()
        .args(["events", "--json", "--socket-dir", sb.dir()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start hm events");
    struct KillOnDrop(std::process::Child);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let rx = lines_of(events.stdout.take().expect("stdout"));
    let _events = KillOnDrop(events);
    let next = |what: &str, ok: &dyn Fn(&serde_json::Value) -> bool| -> serde_json::Value {
        let deadline = Instant::now() + common::PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = rx
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no event: {what}"));
            let v: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
            if ok(&v) {
                return v;
            }
        }
    };
    // A session there before: its state now, marked as such (nothing
    // changed), with the same keys as `hm status --json`.
    let snap = next("the running session's state", &|v| {
        v["id"] == before.id.as_str()
    });
    assert_eq!(snap["event"], "snapshot", "{snap}");
    assert_eq!(
        snap["command"],
        serde_json::json!(["sleep", "20"]),
        "{snap}"
    );
    let status: serde_json::Value =
        serde_json::from_slice(&sb.cmd(&["status", &before.id, "--json"]).stdout).expect("json");
    let mut keys: Vec<&String> = snap.as_object().expect("object").keys().collect();
    keys.retain(|k| *k != "event" && *k != "time_unix_ms");
    let mut want: Vec<&String> = status.as_object().expect("object").keys().collect();
    keys.sort();
    want.sort();
    assert_eq!(keys, want);
    // A session started after: seen as it starts, then each change.
    let gate = common::gate(&sb, "gate");
    let script = format!(
        "cat {} >/dev/null; read -p 'Continue? [y/N] ' x; exit 4",
        gate.display()
    );
    let s = bg(
        &sb,
        &["--id", "asks", "--classifier", "agent"],
        &["bash", "-c", &script],
    );
    next("the new session", &|v| {
        v["id"] == "asks" && v["event"] == "started"
    });
    // Resized since: its events carry its size of then, not of when
    // `hm events` first looked.
    common::history::resize(&sb, &s.id, 100, 30);
    common::open_gate(&gate);
    let v = next("waiting", &|v| {
        v["id"] == "asks" && v["primary"] == "waiting"
    });
    assert_eq!(v["event"], "state", "{v}");
    assert_eq!(v["detail"], "input", "{v}");
    assert_eq!((&v["cols"], &v["rows"]), (&100.into(), &30.into()), "{v}");
    assert!(v["time_unix_ms"].is_u64(), "{v}");
    let sent = sb.cmd(&["send", &s.id, "y", "--enter"]);
    assert!(sent.status.success(), "{}", stderr(&sent));
    let v = next("the end", &|v| v["id"] == "asks" && v["event"] == "ended");
    assert_eq!(v["exit_code"], 4, "{v}");
    assert_eq!(v["state"], "dead", "{v}");
    assert_eq!(v["killed"], false, "{v}");
    // Ended by hm kill: killed, as hm status says after (it said
    // `killed: false` here, the EXIT alone not saying who ended it).
    let out = sb.cmd(&["kill", &before.id]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = next("the kill", &|v| {
        v["id"] == before.id.as_str() && v["event"] == "ended"
    });
    assert_eq!(v["killed"], true, "{v}");
    // Programs that end at once, some before they can be asked: how each
    // ended, from its record if need be (they read `gone`, or nothing).
    let quick: Vec<Bg<'_>> = (0..8)
        .map(|i| {
            bg(
                &sb,
                &["--id", &format!("quick{i}")],
                &["sh", "-c", "exit 5"],
            )
        })
        .collect();
    let mut ends = std::collections::BTreeMap::new();
    while ends.len() < quick.len() {
        let v = next("the quick ones' ends", &|v| {
            v["id"].as_str().is_some_and(|id| id.starts_with("quick")) && v["event"] != "started"
        });
        ends.insert(v["id"].to_string(), v);
    }
    for v in ends.values() {
        assert_eq!(
            (&v["event"], &v["exit_code"]),
            (&"ended".into(), &5.into()),
            "{v}"
        );
    }
}

#[test]
fn events_line_up_the_states_of_long_ids() {
    use std::io::BufRead;
    let sb = Sandbox::new();
    let long = "agent-refactor-the-long-one";
    let _a = bg(&sb, &["--id", "a"], &["sleep", "20"]);
    let _b = bg(&sb, &["--id", long], &["sleep", "20"]);
    let _c = bg(&sb, &["--id", "b10"], &["sleep", "20"]);
    let _d = bg(&sb, &["--id", "b2"], &["sleep", "20"]);
    let mut events = sb
        .hm()
        .args(["events", "--socket-dir", sb.dir()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start hm events");
    let out = events.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + common::PATIENCE;
    let snapshot: Vec<String> = (0..4)
        .map_while(|_| {
            rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .ok()
        })
        .collect();
    let _ = events.kill();
    let _ = events.wait();
    // In the order of the ids, as `hm ls` lists them (they came in the
    // order the sessions answered).
    let ids: Vec<&str> = snapshot
        .iter()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(ids, ["a", long, "b2", "b10"], "{snapshot:#?}");
    // `HH:MM:SS.mmm  ID  STATE`: each state starts one column after the
    // longest id.
    let state_at = |line: &str| line.find("active").or_else(|| line.find("idle"));
    let (short, longer) = (&snapshot[0], &snapshot[1]);
    assert!(
        state_at(short).is_some() && state_at(short) == state_at(longer),
        "{snapshot:#?}"
    );
    assert_eq!(
        state_at(longer),
        longer.find(long).map(|i| i + long.len() + 1)
    );
}

#[test]
fn events_in_a_fresh_socket_dir_leaves_it_usable() {
    let sb = Sandbox::new();
    let fresh = sb.path().join("fresh");
    let mut events = sb
        .hm()
        .arg("events")
        .arg("--socket-dir")
        .arg(&fresh)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start hm events");
    common::wait_until("the socket dir", || fresh.is_dir());
    let out = sb
        .hm()
        .args(["run", "--bg", "--id", "x", "--socket-dir"])
        .arg(&fresh)
        .args(["--", "true"])
        .output()
        .expect("run");
    let _ = events.kill();
    let _ = events.wait();
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn arrow_keys_follow_the_programs_cursor_key_mode() {
    let sb = Sandbox::new();
    // The program turns on application cursor keys (as less and vim do),
    // then shows what it reads.
    let s = bg(
        &sb,
        &["--id", "keys"],
        &["sh", "-c", "printf '\\033[?1h'; stty -icanon -echo; cat -v"],
    );
    common::wait_until("the mode to be set", || {
        stdout(&sb.cmd(&["logs", &s.id, "--raw"])).contains("\u{1b}[?1h")
    });
    let out = sb.cmd(&["send", &s.id, "--keys", "Up", "C-M-x"]);
    assert!(out.status.success(), "{}", stderr(&out));
    common::wait_until("the keys as the program got them", || {
        stdout(&sb.cmd(&["logs", &s.id, "--screen"])).contains("^[OA^[^X")
    });
    // tmux's modified names, sent as xterm sends them: the modifiers in
    // the sequence, whatever the cursor key mode.
    let out = sb.cmd(&["send", &s.id, "--keys", "C-Left", "S-Up", "PgUp", "F13"]);
    assert!(out.status.success(), "{}", stderr(&out));
    common::wait_until("the modified keys as the program got them", || {
        stdout(&sb.cmd(&["logs", &s.id, "--screen"])).contains("^[[1;5D^[[1;2A^[[5~^[[1;2P")
    });
}

#[test]
fn wait_refuses_unknown_states_as_a_usage_error_and_takes_lists() {
    let sb = Sandbox::new();
    let s = bg(&sb, &["--id", "ends"], &["sh", "-c", "exit 4"]);
    let bad = sb.cmd(&["wait", &s.id, "--state", "Waiting"]);
    fails_with(&bad, 2, "invalid value 'Waiting'");
    // Ended before the wait began: that answers "exited", and not
    // "waiting".
    common::wait_until("the end", || {
        stdout(&sb.cmd(&["status", &s.id])).contains("exited with code 4")
    });
    let out = sb.cmd(&["wait", &s.id, "--state", "waiting,exited"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ends: exited with code 4\n");
    let out = sb.cmd(&["wait", &s.id, "--state", "waiting"]);
    fails_with(&out, 1, "'ends' exited with code 4 before it was waiting");
    // What is kept of it, and a clear word from commands that need it
    // running.
    let out = sb.cmd(&["send", &s.id, "hi"]);
    fails_with(&out, 1, "session 'ends' has ended: exited with code 4");
}

#[test]
fn logs_raw_takes_the_last_lines_as_written() {
    let sb = Sandbox::new();
    let s = bg(&sb, &["--id", "seq"], &["sh", "-c", "seq 1 5; sleep 20"]);
    common::wait_until("the output", || {
        stdout(&sb.cmd(&["logs", &s.id])).contains("5")
    });
    let raw = sb.cmd(&["logs", &s.id, "--raw", "--lines", "2"]);
    assert_eq!(String::from_utf8_lossy(&raw.stdout), "4\r\n5\r\n");
}

/// A finished build's log is all of it, not the end of its last screen:
/// what is kept for `hm restore` is what `hm logs` prints once the session
/// has ended, searched and cut as the live session's.
#[test]
fn logs_of_a_session_that_ended_prints_all_it_kept() {
    let sb = Sandbox::new();
    let s = bg(
        &sb,
        &["--id", "build", "--cols", "80", "--rows", "24"],
        &[
            "sh",
            "-c",
            "seq 1 200; printf 'error: \\033[1mno\\033[m\\n'; exit 2",
        ],
    );
    let out = sb.cmd(&["wait", &s.id, "--state", "exited", "--timeout", "20"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let all = stdout(&sb.cmd(&["logs", &s.id]));
    let want: String = (1..=200).map(|i| format!("{i}\n")).collect();
    assert_eq!(all, format!("{want}error: no\n"));
    let found = stdout(&sb.cmd(&["logs", &s.id, "--grep", "^7$"]));
    assert_eq!(found, "7\n");
    assert_eq!(
        stdout(&sb.cmd(&["logs", &s.id, "--lines", "2"])),
        "200\nerror: no\n"
    );
    let raw = sb.cmd(&["logs", &s.id, "--raw", "--lines", "1"]);
    assert_eq!(
        String::from_utf8_lossy(&raw.stdout),
        "error: \x1b[1mno\x1b[m\r\n"
    );
}

/// Bytes no terminal can show print as U+FFFD, as the panes draw them,
/// not as the private-use character the screen keeps for them.
#[test]
fn logs_print_invalid_utf8_as_replacement_characters() {
    let sb = Sandbox::new();
    let s = bg(
        &sb,
        &["--id", "bad"],
        &["sh", "-c", "printf 'invalid utf8: a\\377b\\n'; sleep 20"],
    );
    common::wait_until("the output", || {
        stdout(&sb.cmd(&["logs", &s.id])).contains("invalid utf8")
    });
    for args in [&["logs", "bad"][..], &["logs", "bad", "--screen"]] {
        let out = stdout(&sb.cmd(args));
        assert!(
            out.contains("invalid utf8: a\u{FFFD}b"),
            "{args:?}: {out:?}"
        );
        assert!(!out.contains('\u{10FFFD}'), "{args:?}: {out:?}");
    }
}

/// Output kept from a cut that fell inside a long string (a 70 KiB title,
/// past the 64 KiB kept) starts after the string: its tail printed as
/// 65,000 characters of text.
#[test]
fn logs_of_output_cut_inside_a_long_title_start_after_it() {
    let sb = Sandbox::new();
    let script = "head -c 204800 /dev/zero | tr '\\0' x; printf '\\n\\033]0;'; \
                  head -c 71680 /dev/zero | tr '\\0' T; printf '\\007after\\n'; sleep 20";
    let s = bg(&sb, &["--id", "title"], &["sh", "-c", script]);
    common::wait_until("the output", || {
        stdout(&sb.cmd(&["logs", &s.id])).contains("after")
    });
    let out = stdout(&sb.cmd(&["logs", &s.id]));
    assert!(
        !out.contains("TTTT"),
        "the title printed as text: {} bytes",
        out.len()
    );
    assert_eq!(out.trim_end(), "after");
}

#[test]
fn logs_prints_every_line_that_scrolled_off_without_escapes() {
    let sb = Sandbox::new();
    let s = bg(
        &sb,
        &["--id", "seq", "--cols", "80", "--rows", "24"],
        &[
            "sh",
            "-c",
            "seq 1 200; printf '\\033[1;31mred\\033[m\\n'; sleep 20",
        ],
    );
    common::wait_until("the output", || {
        stdout(&sb.cmd(&["logs", &s.id])).contains("red")
    });
    // Lines 1 to 151 left the 24-row screen long ago; all are there.
    let all = stdout(&sb.cmd(&["logs", &s.id]));
    let want: String = (1..=200).map(|i| format!("{i}\n")).collect();
    assert_eq!(all, format!("{want}red\n"));
    assert_eq!(
        stdout(&sb.cmd(&["logs", &s.id, "--lines", "2"])),
        "200\nred\n"
    );
    let raw = String::from_utf8_lossy(&sb.cmd(&["logs", &s.id, "--raw", "--lines", "1"]).stdout)
        .into_owned();
    assert_eq!(raw, "\u{1b}[1;31mred\u{1b}[m\r\n");
}

/// A program that redraws only the cells that changed (Claude Code does)
/// leaves the rest as the screen had them: when what wrote them was
/// dropped from the kept output, `hm logs` leaves those lines out rather
/// than print them with holes (`     bbbb  ` for `line-bbbb-1`); lines
/// written whole are there.
#[test]
fn logs_leave_out_lines_whose_cells_were_written_before_the_kept_output() {
    let sb = Sandbox::new();
    let script = "printf 'line-aaaa-1\\r\\nline-aaaa-2\\r\\nline-aaaa-3\\r\\n'; \
        i=0; while [ $i -lt 3000 ]; do printf '\\033[H'; i=$((i+1)); done; \
        printf '\\033[1;6Hbbbb\\033[2;6Hbbbb\\033[3;6Hbbbb\\033[5;1H'; \
        printf '\\r\\nafter-1\\r\\nafter-2\\r\\nafter-3\\r\\nafter-4\\r\\nafter-5\\r\\n'; \
        exec sleep 60";
    let s = bg(
        &sb,
        &[
            "--id",
            "redraw",
            "--cols",
            "40",
            "--rows",
            "5",
            "--scrollback-bytes",
            "4096",
        ],
        &["sh", "-c", script],
    );
    common::wait_until("the output", || {
        stdout(&sb.cmd(&["logs", &s.id, "--screen"])).contains("after-5")
    });
    let logs = stdout(&sb.cmd(&["logs", &s.id]));
    assert!(logs.contains("after-1\nafter-2"), "{logs}");
    for line in logs.lines().filter(|l| l.contains("bbbb")) {
        assert!(
            line.starts_with("line-bbbb-"),
            "a line with holes: {line:?}\n{logs}"
        );
    }
    assert!(!logs.contains('\u{10FFFC}'), "{logs}");
}

#[test]
fn man_writes_a_page_per_command() {
    let sb = Sandbox::new();
    let dir = sb.path().join("man1");
    let out = sb
        .hm()
        .arg("man")
        .arg("--dir")
        .arg(&dir)
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    let pages = std::fs::read_dir(&dir).expect("the dir").count();
    assert_eq!(
        stdout(&out),
        format!("wrote {pages} man pages to {}\n", dir.display())
    );
    for page in ["hm.1", "hm-run.1", "hm-wait.1", "hm-logs.1"] {
        let text = std::fs::read_to_string(dir.join(page)).expect(page);
        assert!(text.contains(".TH"), "{page}");
    }
    let wait = std::fs::read_to_string(dir.join("hm-wait.1")).expect("page");
    assert!(wait.contains("timeout"), "{wait}");
    // A command's page gives what a person types, and names hm and its
    // version in its footer, as the main page does.
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        wait.contains(&format!(".TH hm-wait 1  \"hm {version}\"")),
        "{wait}"
    );
    let synopsis = wait.split(".SH SYNOPSIS\n").nth(1).expect("a synopsis");
    assert!(synopsis.starts_with("\\fBhm wait\\fR"), "{synopsis}");
}

/// A session started in the background (`run_args`, then `bash -c
/// script` once the gate opens) with a `[[notify]]` entry that appends
/// `said` (its variables expanded) to a log, with `rest` of the entry's
/// keys: the log's path, the gate, and the session's guard.
fn notifying<'a>(
    sb: &'a Sandbox,
    said: &str,
    rest: &str,
    run_args: &[&str],
    script: &str,
) -> (std::path::PathBuf, std::path::PathBuf, Bg<'a>) {
    let log = sb.path().join("notified.txt");
    let config = sb.path().join("notify.toml");
    std::fs::write(
        &config,
        format!(
            "[[notify]]\ncommand = 'echo \"{said}\" >> {}'\n{rest}\n",
            log.display()
        ),
    )
    .expect("config");
    let gate = common::gate(sb, "gate");
    let script = format!("cat {} >/dev/null; {script}", gate.display());
    let out = sb
        .hm()
        .arg("--config")
        .arg(&config)
        .arg("run")
        .arg("--bg")
        .args(run_args)
        .args(["--socket-dir", sb.dir(), "--", "bash", "-c", &script])
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    let id = run_args[1].to_owned();
    (log, gate, Bg { sb, id })
}

#[test]
fn notify_commands_run_when_a_session_needs_you_and_when_it_ends() {
    let sb = Sandbox::new();
    let (log, gate, _s) = notifying(
        &sb,
        "$HM_EVENT $HM_SESSION_ID $HM_STATE $HM_DETAIL $HM_EXIT_CODE",
        "on = [\"waiting\", \"exited\"]",
        &["--id", "asks", "--classifier", "agent"],
        "read -p 'Continue? [y/N] ' x; exit 5",
    );
    let said = || std::fs::read_to_string(&log).unwrap_or_default();
    common::open_gate(&gate);
    common::wait_until("the waiting notice", || {
        said().contains("waiting asks waiting input")
    });
    let sent = sb.cmd(&["send", "asks", "y", "--enter"]);
    assert!(sent.status.success(), "{}", stderr(&sent));
    common::wait_until("the exit notice", || said().contains("exited asks dead  5"));
    assert_eq!(said().lines().count(), 2, "once each: {}", said());
}

/// `finished` is work finished: a program busy for two seconds and then
/// quiet, not one that prints a line now and then and goes idle between
/// them (a build printing every few seconds notified `finished` at every
/// line, as often as `min_interval_ms` let it).
#[test]
fn notify_says_finished_after_work_not_between_lines() {
    let sb = Sandbox::new();
    // Lines 0.6 s apart with an idle threshold of 0.3 s: idle between
    // each. Then output for 2.5 s without a pause, and quiet.
    let (log, gate, _s) = notifying(
        &sb,
        "$HM_EVENT $HM_SESSION_ID",
        "on = [\"finished\"]\nmin_interval_ms = 0",
        &["--id", "build", "--idle-threshold-ms", "300"],
        "for i in 1 2 3 4; do echo line $i; sleep 0.6; done; \
         i=0; while [ $i -lt 25 ]; do echo busy $i; sleep 0.1; i=$((i+1)); done; \
         echo done; exec sleep 600",
    );
    let said = || std::fs::read_to_string(&log).unwrap_or_default();
    common::open_gate(&gate);
    common::wait_until("the finished notice", || said().contains("finished build"));
    // Whatever else was to come (the lines before were seconds before).
    common::wait_until("the session to be quiet", || {
        stdout(&sb.cmd(&["status", "build"])).contains("state:    idle")
    });
    assert_eq!(said(), "finished build\n", "once, after the work");
}

#[test]
fn a_bad_notify_entry_names_its_line() {
    let sb = Sandbox::new();
    let config = sb.path().join("bad.toml");
    std::fs::write(&config, "[[notify]]\ncommand = 'true'\non = [\"sleepy\"]\n").expect("config");
    let out = sb
        .hm()
        .arg("--config")
        .arg(&config)
        .args(["run", "--bg", "--socket-dir", sb.dir(), "--", "true"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(":3:") && err.contains("unknown event 'sleepy'"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn logs_follow_prints_lines_as_they_come_and_ends_with_the_session() {
    let sb = Sandbox::new();
    let gate = common::gate(&sb, "gate");
    let script = format!(
        "echo one; cat {} >/dev/null; echo two; printf 'three'; sleep 0.2; echo; exit 4",
        gate.display()
    );
    let s = bg(&sb, &["--id", "f"], &["sh", "-c", &script]);
    common::wait_until("the first line", || {
        stdout(&sb.cmd(&["logs", &s.id])).contains("one")
    });
    let mut follow = sb
        .hm()
        .args(["logs", &s.id, "--follow", "--socket-dir", sb.dir()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start hm logs -f");
    let rx = lines_of(follow.stdout.take().expect("stdout"));
    let next = || rx.recv_timeout(common::PATIENCE).expect("a line");
    assert_eq!(next(), "one");
    common::open_gate(&gate);
    assert_eq!(next(), "two");
    assert_eq!(next(), "three", "a line is printed once it is finished");
    let deadline = Instant::now() + common::PATIENCE;
    let status = loop {
        if let Some(st) = follow.try_wait().expect("wait") {
            break st;
        }
        assert!(
            Instant::now() < deadline,
            "hm logs -f did not end with the session"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // Following went well; how the program ended is said after its
    // last line, on stderr, not mixed into its output.
    assert!(status.success());
    assert!(rx.recv_timeout(common::PATIENCE).is_err(), "no more lines");
    let mut said = String::new();
    std::io::Read::read_to_string(&mut follow.stderr.take().expect("stderr"), &mut said)
        .expect("its stderr");
    assert_eq!(said, "hm: 'f' exited with code 4\n");
}

#[test]
fn a_label_is_shown_beside_the_id_and_kept_when_the_session_ends() {
    let sb = Sandbox::new();
    let s = bg(
        &sb,
        &["--id", "api", "--label", "web server (staging)"],
        &["sh", "-c", "read x; exit 0"],
    );
    let st = stdout(&sb.cmd(&["status", &s.id]));
    assert!(st.contains("label:    web server (staging)"), "{st}");
    let ls = stdout(&sb.cmd(&["ls"]));
    assert!(ls.contains("[web server (staging)] sh -c"), "{ls}");
    let v: serde_json::Value =
        serde_json::from_slice(&sb.cmd(&["status", &s.id, "--json"]).stdout).expect("json");
    assert_eq!(v["label"], "web server (staging)", "{v}");
    sb.cmd(&["send", &s.id, "--enter"]);
    common::wait_until("the end", || {
        stdout(&sb.cmd(&["status", &s.id])).contains("exited with code 0")
    });
    let st = stdout(&sb.cmd(&["status", &s.id]));
    assert!(st.contains("label:    web server (staging)"), "{st}");
    let labelled = |label: &str| {
        sb.hm()
            .args(["run", "--bg", "--label", label, "--", "true"])
            .output()
            .expect("run")
    };
    let bad = labelled("a\tb");
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    // Refused in a line that shows the text as it can be seen: its
    // escape never reaches the terminal (clap's refusal echoed it, and
    // the terminal turned what followed red).
    let escaped = labelled("red\x1b[31mX");
    assert_eq!(escaped.status.code(), Some(2), "{}", stderr(&escaped));
    assert_eq!(
        stderr(&escaped),
        "hm: invalid --label 'red?[31mX': a label is one line of printable text\n"
    );
    let long = labelled(&"x".repeat(61));
    assert_eq!(long.status.code(), Some(2), "{}", stderr(&long));
    assert!(
        stderr(&long).ends_with(": a label is at most 60 characters\n"),
        "{}",
        stderr(&long)
    );
}

/// A supervisor killed outright (SIGKILL) sends no EXIT: its session is
/// lost, and what followed it says so. `hm logs -f` ended as quietly as
/// for a finished program (exit 0), and `hm events --json` said `gone`
/// with the last state it had, `"lost": false`, where `hm ls` said lost.
#[test]
fn followers_of_a_supervisor_killed_outright_say_the_session_was_lost() {
    use std::io::BufRead;
    let sb = Sandbox::new();
    let mut s = sb.start(
        "doomed",
        &[],
        &["sh", "-c", "echo said-$((40+2)); sleep 300"],
    );
    let sock = std::path::Path::new(sb.dir()).join("doomed.sock");
    common::wait_until("its output", || {
        stdout(&sb.cmd(&["logs", "doomed"])).contains("said-42")
    });
    let follow = Printing::new(sb.background(&["logs", "doomed", "-f"]));
    let raw = Printing::new(sb.background(&["logs", "doomed", "-f", "--raw"]));
    let wait = sb.background(&["wait", "doomed", "--state", "exited", "--timeout", "30"]);
    let mut events = sb.background(&["events", "--json"]);
    let (tx, rx) = std::sync::mpsc::channel();
    let lines = std::io::BufReader::new(events.stdout.take().expect("events' stdout"));
    std::thread::spawn(move || {
        for line in lines.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let first = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("a snapshot");
    assert!(first.contains("\"snapshot\""), "{first}");
    common::wait_until("all four to follow it", || common::clients(&sock) == 4);
    // Connected is not yet answered: killed before, a follower has no
    // history to print (that case has its own test below).
    common::wait_until("both logs to print its history", || {
        follow.has_printed("said-42") && raw.has_printed("said-42")
    });
    let sup = nix::unistd::Pid::from_raw(s.child.id() as i32);
    nix::sys::signal::kill(sup, nix::sys::signal::Signal::SIGKILL).expect("kill it");
    s.wait_exit();
    let gone = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("a gone line");
    let _ = events.kill();
    let _ = events.wait();
    let v: serde_json::Value = serde_json::from_str(&gone).expect(&gone);
    assert_eq!(v["event"], "gone", "{v}");
    assert_eq!(
        (v["lost"].as_bool(), v["alive"].as_bool()),
        (Some(true), Some(false)),
        "{v}"
    );
    assert!(v["state"].is_null() && v["health"].is_null(), "{v}");
    let ls: serde_json::Value =
        serde_json::from_slice(&sb.cmd(&["ls", "--json"]).stdout).expect("ls");
    assert_eq!(ls[0]["lost"], true, "{ls}");
    let out = follow.output();
    assert!(stdout(&out).contains("said-42"), "{}", stdout(&out));
    fails_with(&out, 1, "'doomed' was lost with its supervisor");
    let out = raw.output();
    fails_with(&out, 1, "'doomed' was lost with its supervisor");
    let out = wait.wait_with_output().expect("hm wait");
    fails_with(
        &out,
        1,
        "'doomed' was lost with its supervisor, and its program's end with it",
    );
}

/// A session left orphaned (its supervisor killed, its program ignoring
/// the hang-up) has no supervisor to push its end: `hm events` said `gone:
/// orphaned` and nothing when `hm kill` then ended the program. Its record
/// says it: an `ended` line, killed.
#[test]
fn events_tell_the_end_of_an_orphan_hm_kill_stops() {
    use std::io::BufRead;
    let sb = Sandbox::new();
    let marker = format!("{}.417", std::process::id());
    let mut events = common::Stopped(sb.background(&["events", "--json"]));
    let (tx, rx) = std::sync::mpsc::channel();
    let lines = std::io::BufReader::new(events.0.stdout.take().expect("events' stdout"));
    std::thread::spawn(move || {
        for line in lines.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let next = |what: &str, event: &str| -> serde_json::Value {
        let deadline = Instant::now() + common::PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = rx
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no event: {what}"));
            let v: serde_json::Value = serde_json::from_str(&line).expect(&line);
            if v["id"] == "orph" && v["event"] == event {
                return v;
            }
        }
    };
    // Followed from its start (events watches the socket dir), then left.
    let _program = common::orphan_after(&sb, "orph", &marker, || {
        next("the session started", "started");
    });
    let gone = next("its supervisor gone", "gone");
    assert_eq!(gone["orphaned"], true, "{gone}");
    let out = sb.cmd(&["kill", "orph"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let ended = next("its end", "ended");
    drop(events);
    assert_eq!(
        (&ended["killed"], &ended["alive"]),
        (
            &serde_json::Value::Bool(true),
            &serde_json::Value::Bool(false)
        ),
        "{ended}"
    );
    assert!(common::sleepers(&marker).is_empty());
}

/// A supervisor killed outright between taking a connection and reading
/// its question resets it: the commands asking said "Connection reset by
/// peer", where the session is lost, as `hm ls` lists it. Stopped, the
/// supervisor takes no question until it is killed.
#[test]
fn commands_whose_question_a_killed_supervisor_never_read_say_it_was_lost() {
    let sb = Sandbox::new();
    let mut s = sb.start("doomed", &[], &["sleep", "300"]);
    let sup = nix::unistd::Pid::from_raw(s.child.id() as i32);
    nix::sys::signal::kill(sup, nix::sys::signal::Signal::SIGSTOP).expect("stop it");
    let asking = [
        vec!["wait", "doomed", "--state", "exited", "--timeout", "30"],
        vec!["logs", "doomed", "-f"],
        vec!["logs", "doomed", "-f", "--raw"],
        vec!["logs", "doomed", "--screen"],
        vec!["send", "doomed", "hello"],
    ];
    let children: Vec<_> = asking.iter().map(|a| sb.background(a)).collect();
    let sock = std::path::Path::new(sb.dir()).join("doomed.sock");
    // Waiting to be taken (02): the stopped supervisor has read nothing.
    common::wait_until("all five to connect", || {
        common::sockets(&sock, "02") == asking.len()
    });
    nix::sys::signal::kill(sup, nix::sys::signal::Signal::SIGKILL).expect("kill it");
    s.wait_exit();
    for (args, child) in asking.iter().zip(children) {
        let out = child.wait_with_output().expect("the command");
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("'doomed' was lost with its supervisor"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

/// `hm send --wait` returns once the turn its input started is over, the
/// turn's output written by then: a command that prints after a while, a
/// bare Enter (which changes no state), one that outlasts the time-out,
/// one that ends the shell.
#[test]
fn send_wait_returns_when_the_turn_it_started_is_over() {
    let sb = Sandbox::new();
    let s = bg(&sb, &["--id", "sh"], &["sh"]);
    common::wait_until("the prompt", || {
        stdout(&sb.cmd(&["status", &s.id])).contains("idle · ready")
    });
    let send = |args: &[&str]| {
        let mut all = vec!["send", "sh"];
        all.extend(args);
        all.extend(["--wait", "--timeout", "30"]);
        sb.cmd(&all)
    };
    let out = send(&["sleep 1; echo the-end-$((6*7))", "--enter"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "sh: idle · ready\n");
    let logs = stdout(&sb.cmd(&["logs", &s.id]));
    assert!(logs.contains("the-end-42"), "{logs}");
    // The shell's prompt again, its state as it was: done once quiet.
    let out = send(&["--enter"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "sh: idle · ready\n");
    let out = sb.cmd(&[
        "send",
        "sh",
        "sleep 60",
        "--enter",
        "--wait",
        "--timeout",
        "1",
    ]);
    fails_with(
        &out,
        1,
        "timed out after 1s waiting for 'sh' to end its turn (it is active · running)",
    );
    let out = sb.cmd(&["send", "sh", "--keys", "C-c"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = send(&["exit 3", "--enter"]);
    fails_with(&out, 1, "'sh' exited with code 3 before its turn ended");
    // Ended with success, as a `quit` sent asks: the turn's end.
    let _quits = bg(&sb, &["--id", "sh0"], &["sh"]);
    common::wait_until("its prompt", || {
        stdout(&sb.cmd(&["status", "sh0"])).contains("idle · ready")
    });
    let out = sb.cmd(&[
        "send",
        "sh0",
        "exit",
        "--enter",
        "--wait",
        "--timeout",
        "30",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "sh0: exited with code 0\n");
    // A program known by its process alone, reading its terminal as the
    // line comes, is done when it reads again: not while it computes
    // without a word, which its idle threshold calls idle.
    let _reader = bg(
        &sb,
        &["--id", "rd", "--idle-threshold-ms", "300"],
        &[
            "sh",
            "-c",
            "while read l; do sleep 2; echo got-$l-$((6*7)); done",
        ],
    );
    common::wait_until("the reader to read", || {
        stdout(&sb.cmd(&["status", "rd"])).contains("waiting · input")
    });
    let out = sb.cmd(&["send", "rd", "x", "--enter", "--wait", "--timeout", "30"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "rd: waiting · input\n");
    let logs = stdout(&sb.cmd(&["logs", "rd"]));
    assert!(logs.contains("got-x-42"), "{logs}");
    // The time-out is --wait's.
    let out = sb.cmd(&["send", "sh", "hi", "--timeout", "1"]);
    fails_with(&out, 2, "--wait");
    let out = sb.cmd(&["send", "sh", "hi", "--wait", "--timeout", "-1"]);
    fails_with(&out, 2, "--timeout must be a number of seconds");
}

/// An entry with `after_ms` runs that long after its event if the session
/// is still as the event left it: a question answered in time is not
/// told, one left waiting is, with the session's label, its host and
/// what it asks.
#[test]
fn notify_after_a_delay_tells_only_a_wait_nobody_answered() {
    let sb = Sandbox::new();
    let (log, gate, _s) = notifying(
        &sb,
        "late $HM_EVENT $HM_SESSION_ID [$HM_LABEL] $HM_AFTER_MS $HM_HOST [$HM_QUESTION]",
        "on = [\"waiting\"]\nafter_ms = 3000\nmin_interval_ms = 0",
        &["--id", "asks", "--label", "deploy prod"],
        "read -p 'Continue? [y/N] ' x; sleep 4; read -p 'Again? [y/N] ' y; exit 0",
    );
    let said = || std::fs::read_to_string(&log).unwrap_or_default();
    common::open_gate(&gate);
    let waited = sb.cmd(&["wait", "asks", "--state", "waiting", "--timeout", "20"]);
    assert!(waited.status.success(), "{}", stderr(&waited));
    let sent = sb.cmd(&["send", "asks", "y", "--enter"]);
    assert!(sent.status.success(), "{}", stderr(&sent));
    common::wait_until("the second question's late notice", || {
        said().contains("late waiting asks")
    });
    let host = nix::unistd::gethostname()
        .expect("a host name")
        .into_string()
        .expect("utf-8");
    assert_eq!(
        said(),
        format!("late waiting asks [deploy prod] 3000 {host} [Again? [y/N]]\n"),
        "the first question was answered in time"
    );
    let screen = stdout(&sb.cmd(&["logs", "asks", "--screen"]));
    assert!(screen.contains("Again?"), "{screen}");
}
