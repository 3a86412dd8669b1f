//! Sessions on another machine, through a real `sshd` started by the test
//! on 127.0.0.1 with a throwaway host key and an authorized key in a temp
//! dir, as the current user: `hm ls --host`, `hm status/send/logs/kill
//! HOST:ID` over `ssh HOST hm proxy`, and the one-line messages of a host
//! that cannot be reached or has no `hm`. Skips, saying why, without
//! OpenSSH's client and server.

use crate::common;
use crate::common::terminal;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use common::{HM, Sandbox, stderr, stdout, wait_until};

const SSHD: &str = "/usr/sbin/sshd";

/// An sshd of the test's own, stopped (by its pid) when dropped.
struct Sshd {
    child: Child,
    /// Its config file, to start it again on the same port.
    sshd_config: PathBuf,
    /// The ssh client config naming the hosts `box` and `bare` (the same
    /// machine; `bare` is not in hm's `[[hosts]]`, so hm looks for `hm` on
    /// its PATH, where there is none).
    config: PathBuf,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Sshd {
    fn spawn(sshd_config: &Path) -> Result<Child, String> {
        Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(sshd_config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start sshd: {e}"))
    }

    /// Stops the listener (connections it serves go on).
    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts it again, on the same port, and waits until it listens.
    fn restart(&mut self) {
        self.child = Sshd::spawn(&self.sshd_config).expect("sshd again");
        let port = std::fs::read_to_string(&self.sshd_config)
            .ok()
            .and_then(|c| {
                c.lines()
                    .find_map(|l| l.strip_prefix("Port ")?.parse::<u16>().ok())
            })
            .expect("the port");
        wait_until("sshd to listen again", || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
    }
}

fn run(cmd: &mut Command) -> bool {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    l.local_addr().expect("addr").port()
}

/// Starts sshd for `sb`; `remote_runtime` is the remote side's
/// XDG_RUNTIME_DIR (so its socket dir is `remote_runtime/heimdall`).
fn sshd(sb: &Sandbox, remote_runtime: &Path) -> Result<Sshd, String> {
    if !Path::new(SSHD).exists() || !run(Command::new("ssh").arg("-V")) {
        return Err("OpenSSH (ssh and sshd) is not installed".into());
    }
    let d = sb.path().join("ssh");
    std::fs::create_dir_all(&d).expect("ssh dir");
    for (name, file) in [("host", "host_key"), ("user", "id")] {
        let ok = run(Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
            .arg(d.join(file)));
        if !ok {
            return Err("ssh-keygen failed".into());
        }
    }
    std::fs::copy(d.join("id.pub"), d.join("authorized_keys")).expect("authorized_keys");
    if nix::unistd::geteuid().is_root() {
        // sshd run by root separates privileges into this directory.
        let _ = std::fs::create_dir_all("/run/sshd");
    }
    let port = free_port();
    let config = format!(
        "Port {port}\nListenAddress 127.0.0.1\nHostKey {dir}/host_key\nPidFile {dir}/sshd.pid\n\
         AuthorizedKeysFile {dir}/authorized_keys\nStrictModes no\nUsePAM no\n\
         PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
         PermitRootLogin yes\nAcceptEnv XDG_RUNTIME_DIR XDG_STATE_HOME\n",
        dir = d.display()
    );
    let sshd_config = d.join("sshd_config");
    std::fs::write(&sshd_config, config).expect("sshd_config");
    let child = Sshd::spawn(&sshd_config)?;
    let user = nix::unistd::User::from_uid(nix::unistd::geteuid())
        .ok()
        .flatten()
        .map(|u| u.name)
        .ok_or("no user name")?;
    // The state dir too: a session the proxy starts keeps its history
    // there, which was the user's own `~/.local/state` before.
    let client = format!(
        "Host box bare\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  IdentityFile {dir}/id\n  \
         IdentitiesOnly yes\n  UserKnownHostsFile /dev/null\n  StrictHostKeyChecking no\n  LogLevel ERROR\n\
         Host box\n  SetEnv XDG_RUNTIME_DIR={rt} XDG_STATE_HOME={rt}/state\n",
        dir = d.display(),
        rt = remote_runtime.display()
    );
    let config = d.join("ssh_config");
    std::fs::write(&config, client).expect("ssh_config");
    let sshd = Sshd {
        child,
        sshd_config,
        config,
    };
    wait_until("sshd to listen", || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    Ok(sshd)
}

/// `hm ARGS` with the ssh command pointed at the test's config, and the
/// host `box` given the path of this build's `hm` (a `[[hosts]]` entry).
fn hm(sb: &Sandbox, sshd: &Sshd, args: &[&str]) -> std::process::Output {
    let dir = sb.path().join("config/heimdall");
    std::fs::create_dir_all(&dir).expect("config dir");
    std::fs::write(
        dir.join("heimdall.toml"),
        format!("[[hosts]]\nname = \"box\"\nhm = \"{HM}\"\n"),
    )
    .expect("config");
    sb.hm()
        .args(args)
        .env(
            "HM_SSH_COMMAND",
            format!("ssh -F {}", sshd.config.display()),
        )
        .output()
        .expect("run hm")
}

/// Ends every session in the "remote" socket dir when dropped, so that
/// a test that fails halfway leaves nothing running.
struct RemoteSessions(PathBuf);

impl Drop for RemoteSessions {
    fn drop(&mut self) {
        let dir = self.0.as_os_str();
        let Ok(out) = Command::new(HM)
            .args(["ls", "--ids", "--socket-dir"])
            .arg(dir)
            .output()
        else {
            return;
        };
        for id in String::from_utf8_lossy(&out.stdout).lines() {
            let _ = Command::new(HM)
                .args(["kill", id, "--grace", "1", "--socket-dir"])
                .arg(dir)
                .output();
        }
    }
}

/// Starts session `id` running `argv` in the "remote" machine's socket
/// dir.
fn start_remote(sb: &Sandbox, dir: &Path, id: &str, argv: &[&str]) {
    // Its state (what `hm restart` and `hm restore` keep) where that
    // machine's own hm, run by the test's sshd, keeps it.
    let state = dir.parent().expect("the remote runtime dir").join("state");
    let out = sb
        .hm()
        .env("XDG_STATE_HOME", state)
        .args(["run", "--bg", "--id", id, "--socket-dir"])
        .arg(dir)
        .arg("--")
        .args(argv)
        .output()
        .expect("hm run");
    assert!(out.status.success(), "{}", stderr(&out));
}

/// `hm ARGS` in a terminal of its own, with the ssh command pointed at
/// the test's config.
fn hm_in_terminal(
    sb: &Sandbox,
    sshd: &Sshd,
    args: &[&str],
    size: (u16, u16),
) -> terminal::Terminal {
    let env = sb.terminal_env(&[(
        "HM_SSH_COMMAND",
        &format!("ssh -F {}", sshd.config.display()),
    )]);
    let args: Vec<OsString> = args.iter().map(OsString::from).collect();
    terminal::Terminal::start(Path::new(HM), &args, &env, sb.path(), size, "$ hm")
}

/// A sandbox with an sshd of its own, the "remote" side's runtime and
/// socket dirs, and the guard that ends the sessions there: what most
/// tests here start with. Dropped in reverse: sshd, sessions, sandbox.
fn with_sshd() -> Result<(Sandbox, PathBuf, PathBuf, RemoteSessions, Sshd), String> {
    let sb = Sandbox::new();
    let remote_rt = sb.path().join("remote-run");
    let remote_dir = remote_rt.join("heimdall");
    let cleanup = RemoteSessions(remote_dir.clone());
    let sshd = sshd(&sb, &remote_rt)?;
    Ok((sb, remote_rt, remote_dir, cleanup, sshd))
}

macro_rules! or_skip {
    ($found:expr) => {
        match $found {
            Ok(v) => v,
            Err(why) => {
                println!("skipped: {why}");
                return;
            }
        }
    };
}

#[test]
fn remote_sessions_are_listed_queried_typed_to_and_killed() {
    let (sb, _, remote_dir, _cleanup, sshd) = or_skip!(with_sshd());
    // A session on the "remote" machine.
    start_remote(&sb, &remote_dir, "far", &["cat"]);

    // Listed as every command takes it, `box:far`, in the table and in
    // `--ids` (a plain `far` names a session here).
    let ls = hm(&sb, &sshd, &["ls", "--host", "box"]);
    assert!(ls.status.success(), "{}", stderr(&ls));
    assert!(
        stdout(&ls).lines().any(|l| l.starts_with("box:far ")),
        "{}",
        stdout(&ls)
    );
    let ids = hm(&sb, &sshd, &["ls", "--host", "box", "--ids"]);
    assert_eq!(stdout(&ids), "box:far\n", "{}", stderr(&ids));
    let st = hm(&sb, &sshd, &["status", "box:far", "--json"]);
    assert!(st.status.success(), "{}", stderr(&st));
    let v: serde_json::Value = serde_json::from_slice(&st.stdout).expect("json");
    // The id as every command takes it from here, in JSON too.
    assert_eq!(v["id"], "box:far", "{v}");
    assert_eq!(v["alive"], true, "{v}");
    let ls = hm(&sb, &sshd, &["ls", "--host", "box", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&ls.stdout).expect("json");
    assert_eq!(v[0]["id"], "box:far", "{v}");
    let waited = hm(
        &sb,
        &sshd,
        &["wait", "box:far", "--state", "waiting", "--timeout", "20"],
    );
    assert_eq!(
        stdout(&waited),
        "box:far: waiting · input\n",
        "{}",
        stderr(&waited)
    );
    let waited = hm(
        &sb,
        &sshd,
        &["wait", "box:far", "--state", "active", "--timeout", "0.2"],
    );
    assert_eq!(
        stderr(&waited).trim(),
        "hm: timed out after 0.2s waiting for 'box:far' to be active"
    );

    let sent = hm(
        &sb,
        &sshd,
        &[
            "send",
            "box:far",
            "over the bridge",
            "--enter",
            "--wait",
            "--timeout",
            "20",
        ],
    );
    assert!(sent.status.success(), "{}", stderr(&sent));
    // cat took the line and asks for the next: its turn is over.
    assert_eq!(stdout(&sent), "box:far: waiting · input\n");
    wait_until("the typed line on the remote screen", || {
        stdout(&hm(&sb, &sshd, &["logs", "box:far", "--screen"])).contains("over the bridge")
    });

    let text = hm(&sb, &sshd, &["status", "box:far"]);
    assert!(
        stdout(&text).lines().any(|l| l == "session:  box:far"),
        "{}",
        stdout(&text)
    );
    let killed = hm(&sb, &sshd, &["kill", "box:far"]);
    assert!(killed.status.success(), "{}", stderr(&killed));
    // Named as it was given, and how it ended, as a local kill says.
    assert_eq!(
        stdout(&killed),
        "session 'box:far' killed by SIGTERM (exit code 143)\n"
    );
    // Ended there: the hints name it as given, and how it runs again.
    let again = hm(&sb, &sshd, &["kill", "box:far"]);
    assert!(
        stderr(&again)
            .contains("'hm status box:far' shows how, 'hm restart box:far' runs it again"),
        "{}",
        stderr(&again)
    );
    // A name that is not there is looked for on box, not in the mount.
    let none = hm(&sb, &sshd, &["status", "box:nosuch"]);
    assert!(!none.status.success());
    assert_eq!(
        stderr(&none).trim(),
        "hm: no session named 'nosuch' on box (see 'hm ls --host box')"
    );
    let st = sb
        .hm()
        .args(["status", "far", "--socket-dir"])
        .arg(&remote_dir)
        .output()
        .expect("hm status");
    assert!(
        stdout(&st).contains("killed by SIGTERM") || !st.status.success(),
        "{}",
        stdout(&st)
    );
}

/// `hm ls --host` on a machine with no sessions names the machine, not
/// the local directory its sessions were mounted in.
#[test]
fn ls_of_a_host_with_no_sessions_names_the_host() {
    let sb = Sandbox::new();
    let sshd = or_skip!(sshd(&sb, &sb.path().join("remote-run")));
    let ls = hm(&sb, &sshd, &["ls", "--host", "box"]);
    assert!(ls.status.success(), "{}", stderr(&ls));
    assert_eq!(stderr(&ls).trim(), "no sessions on box");
}

/// An address that cannot be one is refused as a command line that
/// cannot mean anything (exit 2), before any ssh runs.
#[test]
fn an_address_that_cannot_be_one_is_a_usage_error() {
    let sb = Sandbox::new();
    for args in [
        &["ls", "--host", "bad;host"][..],
        &["status", "me@:cx"],
        &["run", "--bg", "--host", "a b", "--", "true"],
    ] {
        let out = sb.cmd(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("is not a host: give [user@]host[:port]"),
            "{args:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn a_host_that_cannot_be_reached_or_has_no_hm_says_so_in_one_line() {
    let sb = Sandbox::new();
    let sshd = or_skip!(sshd(&sb, &sb.path().join("remote-run")));
    let bare = hm(&sb, &sshd, &["ls", "--host", "bare"]);
    assert!(!bare.status.success());
    let msg = stderr(&bare);
    assert!(msg.contains("bare: no 'hm' on the remote PATH"), "{msg}");
    assert_eq!(msg.trim().lines().count(), 1, "{msg}");

    // Nothing listens on this port.
    let port = free_port();
    let gone = sb
        .hm()
        .args(["ls", "--host", &format!("127.0.0.1:{port}")])
        .env(
            "HM_SSH_COMMAND",
            "ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=5",
        )
        .output()
        .expect("run hm");
    assert!(!gone.status.success());
    let msg = stderr(&gone);
    assert!(
        msg.contains(&format!("127.0.0.1:{port}: ssh could not connect")),
        "{msg}"
    );
    assert_eq!(msg.trim().lines().count(), 1, "{msg}");
}

#[test]
fn attach_to_a_remote_session_shows_it_and_types_into_it() {
    let (sb, _, remote_dir, _cleanup, sshd) = or_skip!(with_sshd());
    start_remote(
        &sb,
        &remote_dir,
        "sh1",
        &["bash", "--norc", "--noprofile", "-i"],
    );
    // The config naming `box`, as `hm` above writes it.
    let _ = hm(&sb, &sshd, &["ls", "--host", "box"]);
    let mut term = hm_in_terminal(&sb, &sshd, &["attach", "box:sh1"], (24, 80));
    term.wait_for("the remote shell's prompt", |t| t.contains("$ "));
    term.send(b"echo far-$((6*7))\r");
    term.wait_for("the command's output", |t| t.contains("far-42"));
    // Ctrl-\ detaches; the remote session runs on.
    term.send(b"\x1c");
    assert_eq!(term.wait_exit(), 0);
    let st = hm(&sb, &sshd, &["status", "box:sh1", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&st.stdout).expect("json");
    assert_eq!(v["alive"], true, "{v}");
    let _ = hm(&sb, &sshd, &["kill", "box:sh1"]);
}

/// `hm kill --all --host box` stops every session running on box, each
/// told on its own line as `box:ID`; `--host` with ids stops those; an id
/// naming another machine beside `--host` is refused.
#[test]
fn kill_all_with_a_host_stops_every_session_there() {
    let (sb, _, remote_dir, _cleanup, sshd) = or_skip!(with_sshd());
    for id in ["one", "two", "three"] {
        start_remote(&sb, &remote_dir, id, &["sleep", "600"]);
    }
    let one = hm(&sb, &sshd, &["kill", "--host", "box", "one"]);
    assert_eq!(
        stdout(&one),
        "session 'box:one' killed by SIGTERM (exit code 143)\n",
        "{}",
        stderr(&one)
    );
    let clash = hm(&sb, &sshd, &["kill", "--host", "box", "elsewhere:two"]);
    assert_eq!(clash.status.code(), Some(2), "{}", stderr(&clash));
    assert_eq!(
        stderr(&clash).trim(),
        "hm: --host box and elsewhere:two name two machines; give one"
    );
    let all = hm(&sb, &sshd, &["kill", "--all", "--host", "box"]);
    assert!(all.status.success(), "{}", stderr(&all));
    let text = stdout(&all);
    let mut said: Vec<&str> = text.lines().collect();
    said.sort_unstable();
    assert_eq!(
        said,
        [
            "session 'box:three' killed by SIGTERM (exit code 143)",
            "session 'box:two' killed by SIGTERM (exit code 143)",
        ],
        "{}",
        stderr(&all)
    );
    let again = hm(&sb, &sshd, &["kill", "--all", "--host", "box"]);
    assert_eq!(
        stdout(&again),
        "no running sessions on box\n",
        "{}",
        stderr(&again)
    );
}

/// `hm run --host box` starts a session there, by that machine's hm, with
/// the command's words as given (not through a shell again), its label
/// and the next free name there; `--id box:ID` says the same. Without
/// `--bg` it attaches to it, and detaching leaves it running there.
#[test]
fn run_with_a_host_starts_the_session_there() {
    let (sb, _, remote_dir, _cleanup, sshd) = or_skip!(with_sshd());
    let script = "echo far-$((6*7)); exec sleep 600";
    let run = |args: &[&str]| {
        let mut all = vec!["run", "--bg"];
        all.extend_from_slice(args);
        hm(&sb, &sshd, &all)
    };
    let out = run(&[
        "--host", "box", "--label", "far job", "--", "sh", "-c", script,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "box:sh\n");
    let v = remote_status(&sb, &remote_dir, "sh").expect("its status there");
    assert_eq!(v["alive"], true, "{v}");
    assert_eq!(v["command"], serde_json::json!(["sh", "-c", script]), "{v}");
    assert_eq!(v["label"], "far job", "{v}");
    wait_until("its line, read from here", || {
        stdout(&hm(&sb, &sshd, &["logs", "box:sh", "--screen"])).contains("far-42")
    });

    let out = run(&["--host", "box", "--", "sh", "-c", script]);
    assert_eq!(stdout(&out), "box:sh-2\n", "{}", stderr(&out));
    let out = run(&["--id", "box:named", "--", "cat"]);
    assert_eq!(stdout(&out), "box:named\n", "{}", stderr(&out));
    assert!(remote_status(&sb, &remote_dir, "named").is_some());

    let taken = run(&["--id", "box:named", "--", "cat"]);
    assert!(!taken.status.success());
    assert_eq!(
        stderr(&taken),
        "hm: session 'box:named' is already running; attach to it with 'hm attach box:named'\n"
    );
    // The size it starts at goes with it; one given alone, the other is
    // this machine's default for a session with no terminal (120x40).
    let out = run(&[
        "--id",
        "box:sized",
        "--cols",
        "90",
        "--rows",
        "30",
        "--",
        "cat",
    ]);
    assert_eq!(stdout(&out), "box:sized\n", "{}", stderr(&out));
    let v = remote_status(&sb, &remote_dir, "sized").expect("its status there");
    assert_eq!((&v["cols"], &v["rows"]), (&90.into(), &30.into()), "{v}");
    let out = run(&["--id", "box:narrow", "--cols", "70", "--", "cat"]);
    assert_eq!(stdout(&out), "box:narrow\n", "{}", stderr(&out));
    let v = remote_status(&sb, &remote_dir, "narrow").expect("its status there");
    assert_eq!((&v["cols"], &v["rows"]), (&70.into(), &40.into()), "{v}");
    // What `hm status` and `hm explain` say to type next names it as
    // given, host and all: the plain id is no session here.
    let out = run(&[
        "--id",
        "box:q",
        "--",
        "sh",
        "-c",
        "printf 'Drop the table? [y/N] '; read a; exec sleep 600",
    ]);
    assert_eq!(stdout(&out), "box:q\n", "{}", stderr(&out));
    wait_until("the question's hint, named as given", || {
        stdout(&hm(&sb, &sshd, &["status", "box:q"])).contains("(hm approve box:q --dialog ")
    });
    let explained = stdout(&hm(&sb, &sshd, &["explain", "box:q"]));
    assert!(explained.starts_with("box:q: waiting"), "{explained}");
    // One that ends at once, with nobody to attach to it (`--bg`): its
    // record says it ran for no time, not for the seconds a supervisor
    // waiting for an attach stayed (`exited 4`, uptime 5.0s).
    let out = run(&["--id", "box:quick", "--", "sh", "-c", "exit 4"]);
    assert_eq!(stdout(&out), "box:quick\n", "{}", stderr(&out));
    wait_until("it ended there", || {
        remote_ls(&sb, &remote_dir)
            .lines()
            .any(|l| l.starts_with("quick ") && l.contains("exited 4"))
    });
    let v = remote_status(&sb, &remote_dir, "quick").expect("its record there");
    let ran = v["ended_unix_ms"].as_u64().unwrap_or(u64::MAX)
        - v["started_unix_ms"].as_u64().unwrap_or(0);
    assert!(ran < 2_000, "it ran {ran} ms: {v}");
    // Its id taken again: what goes is said, as for a session here.
    let out = run(&["--id", "box:quick", "--", "cat"]);
    assert_eq!(stdout(&out), "box:quick\n", "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("replacing the ended session 'box:quick' (exited 4, ")
            && stderr(&out).contains("('hm restart box:quick' would have kept them)"),
        "{}",
        stderr(&out)
    );
    let here = run(&["--host", "box", "--log-level", "debug", "--", "cat"]);
    assert_eq!(here.status.code(), Some(2), "{}", stderr(&here));
    assert_eq!(
        stderr(&here).trim(),
        "hm: --log-level cannot be used for a session on another machine (box)"
    );
    let two = run(&["--host", "box", "--id", "elsewhere:x", "--", "cat"]);
    assert_eq!(
        stderr(&two).trim(),
        "hm: --host box and --id elsewhere:... name two machines; give one"
    );

    let mut term = hm_in_terminal(
        &sb,
        &sshd,
        &[
            "run",
            "--host",
            "box",
            "--id",
            "sh1",
            "--",
            "bash",
            "--norc",
            "--noprofile",
            "-i",
        ],
        (24, 80),
    );
    term.wait_for("the remote shell's prompt", |t| t.contains("$ "));
    term.send(b"echo typed-$((6*7))\r");
    term.wait_for("the command's output", |t| t.contains("typed-42"));
    term.send(b"\x1c");
    assert_eq!(term.wait_exit(), 0);
    let v = remote_status(&sb, &remote_dir, "sh1").expect("its status there");
    assert_eq!(v["alive"], true, "{v}");
}

/// The pids of `hm proxy` processes serving this sandbox's remote side
/// (found by the XDG_RUNTIME_DIR the test's sshd gives them).
fn proxies_of(remote_rt: &Path) -> Vec<i32> {
    let mark = format!("XDG_RUNTIME_DIR={}", remote_rt.display());
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let environ = std::fs::read(e.path().join("environ")).ok()?;
            let is_proxy = cmdline.split(|b| *b == 0).any(|a| a == b"proxy");
            let ours = environ.split(|b| *b == 0).any(|v| v == mark.as_bytes());
            (is_proxy && ours).then_some(pid)
        })
        .collect()
}

/// A link keeps a host mounted: sessions started there later appear, a
/// proxy that dies is reported with the time it went down, and the host
/// comes back by itself.
#[test]
fn a_link_follows_new_sessions_and_reconnects_after_a_drop() {
    use heimdall::remote::{Host, Link, LinkState};
    let (sb, remote_rt, remote_dir, _cleanup, sshd) = or_skip!(with_sshd());
    let start = |id: &str| start_remote(&sb, &remote_dir, id, &["sleep", "600"]);
    start("one");
    let host = Host {
        hm: HM.to_owned(),
        ..Host::parse("box").expect("host")
    };
    let ssh = format!("ssh -F {}", sshd.config.display());
    let link = Link::start(&host, &ssh, || {}).expect("a link");
    let served = |id: &str| link.dir().join(format!("{id}.sock")).exists();
    wait_until("the host to be up", || {
        link.state() == LinkState::Up && served("one")
    });
    start("two");
    wait_until("a new session to appear", || served("two"));
    for pid in proxies_of(&remote_rt) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    wait_until("the host to be reported down", || {
        matches!(link.state(), LinkState::Down { .. })
    });
    if let LinkState::Down {
        why, since_unix_ms, ..
    } = link.state()
    {
        assert!(why.starts_with("box: "), "{why}");
        assert!(since_unix_ms > 0);
    }
    wait_until("the host to come back", || {
        link.state() == LinkState::Up && served("one") && served("two")
    });
    drop(link);
    for id in ["one", "two"] {
        let _ = sb
            .hm()
            .args(["kill", id, "--socket-dir"])
            .arg(&remote_dir)
            .output();
    }
}

/// The dashboard shows another machine's sessions as `host:id` panes
/// (its `[[hosts]]`), types into them in focus, says when the host is
/// unreachable, shows them again when it is back, and starts and kills
/// sessions there.
#[test]
fn the_dashboard_shows_remote_sessions_and_survives_a_drop() {
    let (sb, remote_rt, remote_dir, _cleanup, sshd) = or_skip!(with_sshd());
    start_remote(
        &sb,
        &remote_dir,
        "far",
        &["bash", "--norc", "--noprofile", "-i"],
    );
    // Writes the config naming `box` (with this build's hm).
    let _ = hm(&sb, &sshd, &["ls", "--host", "box"]);
    let mut t = hm_in_terminal(&sb, &sshd, &["tui", "--socket-dir", sb.dir()], (24, 80));
    t.wait_for("the remote session's pane", |t| {
        t.contains("box:far") && t.contains("bash-")
    });
    t.send(b"\r");
    t.wait_for("focus on it", |t| t.last_row().contains("back to the grid"));
    t.send(b"echo far-$((6*7))\r");
    t.wait_for("what was typed, run there", |t| t.contains("far-42"));
    t.send(b"\x1c");
    t.wait_for("the grid", |t| t.last_row().contains("move"));
    for pid in proxies_of(&remote_rt) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    // Said on the pane's border, and in its title with the state last
    // known (no timer: it stopped when the host dropped).
    t.wait_for("the host said to be unreachable", |t| {
        t.contains("box: unreachable since") && t.contains(" unreachable · was ")
    });
    // Keys still work meanwhile.
    t.send(b"?");
    t.wait_for("the help", |t| t.contains("raw attach"));
    t.send(b"q");
    wait_back(&mut t);
    // `n` with `host:id` starts a session there.
    t.send(b"n");
    t.wait_for("the new-session form", |t| t.contains("host:id on box"));
    t.send(b"\x15box:made\r");
    t.send(b"sh -c 'echo made-$((6*7)); exec sleep 600'\r");
    t.wait_for("the new remote session's pane", |t| {
        t.contains("box:made") && t.contains("made-42")
    });
    let listed = sb
        .hm()
        .args(["ls", "--ids", "--socket-dir"])
        .arg(&remote_dir)
        .output()
        .expect("hm ls");
    assert!(
        stdout(&listed).lines().any(|l| l == "made"),
        "{}",
        stdout(&listed)
    );
    // `x` kills it there, as a local one, once asked (it is selected).
    t.send(b"x");
    t.wait_for("the question", |t| t.contains("Kill session 'box:made'?"));
    t.send(b"y");
    t.wait_for("its pane marked killed", |t| {
        t.contains("killed by SIGTERM (exit code 143)") || t.contains("killed SIGTERM")
    });
    wait_until("it ended there", || {
        remote_ls(&sb, &remote_dir)
            .lines()
            .any(|l| l.starts_with("made") && l.contains("killed"))
    });
    // Left empty, the command is that machine's shell, in its user's
    // home: not the dashboard's shell and directory.
    t.send(b"n");
    t.wait_for("the new-session form", |t| t.contains("host:id on box"));
    t.send(b"\x15box:home\r");
    t.wait_for("the remote form", |t| t.contains("(empty: home on box)"));
    t.send(b"\r");
    let status = || remote_status(&sb, &remote_dir, "home");
    wait_until("the shell started there", || {
        status().is_some_and(|v| v["alive"] == true)
    });
    let v = status().expect("its status");
    let home = std::env::var("HOME").expect("HOME");
    assert_eq!(v["workdir"], home.as_str(), "{v}");
    let argv = v["command"].to_string();
    assert!(argv.contains("sh"), "{v}");
    let _ = sb
        .hm()
        .args(["kill", "home", "--socket-dir"])
        .arg(&remote_dir)
        .output();
    // `box:` alone: named there after its command, as `hm run` names one.
    t.send(b"n");
    t.wait_for("the new-session form", |t| t.contains("host:id on box"));
    t.send(b"\x15box:\r");
    t.wait_for("the remote form", |t| t.contains("(empty: home on box)"));
    t.send(b"sleep 600");
    t.wait_for("the name it takes there", |t| {
        t.contains("id:         box:sleep")
    });
    t.send(b"\r");
    let named = || remote_status(&sb, &remote_dir, "sleep");
    wait_until("the session named after its command there", || {
        named().is_some_and(|v| v["alive"] == true)
    });
    let _ = sb
        .hm()
        .args(["kill", "sleep", "--socket-dir"])
        .arg(&remote_dir)
        .output();
    t.send(b"q");
    assert_eq!(t.wait_exit(), 0);
    let _ = sb
        .hm()
        .args(["kill", "far", "--socket-dir"])
        .arg(&remote_dir)
        .output();
}

/// A host the dashboard cannot use is named with why, once, and the
/// dashboard goes on; the footer keeps its name after the notice has
/// gone, since no pane says it.
#[test]
fn the_dashboard_says_why_a_host_cannot_be_used() {
    let sb = Sandbox::new();
    let sshd = or_skip!(sshd(&sb, &sb.path().join("remote-run")));
    let args = ["tui", "--socket-dir", sb.dir(), "--host", "bare"];
    let mut t = hm_in_terminal(&sb, &sshd, &args, (24, 100));
    // Whole, above the footer: longer than the footer has room for.
    t.wait_for("why the host cannot be used", |t| {
        t.contains("bare: no 'hm' on the remote PATH") && t.last_row().contains("? help")
    });
    t.wait_for("the notice gone, the host still named", |t| {
        !t.contains("remote PATH") && t.last_row().contains("bare unreachable")
    });
    t.send(b"q");
    assert_eq!(t.wait_exit(), 0);
}

/// `hm status ID --json` in the "remote" socket dir, as its own user
/// would see it; `None` while it says nothing readable.
fn remote_status(sb: &Sandbox, dir: &Path, id: &str) -> Option<serde_json::Value> {
    let out = sb
        .hm()
        .args(["status", id, "--json", "--socket-dir"])
        .arg(dir)
        .output()
        .expect("hm status");
    serde_json::from_slice(&out.stdout).ok()
}

/// `hm ls` of the "remote" socket dir, as its own user would see it.
fn remote_ls(sb: &Sandbox, dir: &Path) -> String {
    let out = sb
        .hm()
        .args(["ls", "--socket-dir"])
        .arg(dir)
        .output()
        .expect("hm ls");
    stdout(&out)
}

/// Closing the dashboard's window (its terminal hangs up) ends it as
/// SIGHUP does, and its mount of another machine goes with it. It died by
/// abort before (ratatui's farewell to a terminal that is gone panicked),
/// and left the mount's directory in the temp dir each time.
#[test]
fn closing_the_dashboards_window_leaves_no_mount_behind() {
    let (sb, _, remote_dir, _cleanup, sshd) = or_skip!(with_sshd());
    start_remote(
        &sb,
        &remote_dir,
        "far",
        &["sh", "-c", "echo far-$((6*7)); exec sleep 600"],
    );
    // Writes the config that names the host.
    let _ = hm(&sb, &sshd, &["ls", "--host", "box"]);
    let temp = sb.path().join("tmp");
    std::fs::create_dir(&temp).expect("temp dir");
    let env = sb.terminal_env(&[
        (
            "HM_SSH_COMMAND",
            &format!("ssh -F {}", sshd.config.display()),
        ),
        ("TMPDIR", temp.to_str().expect("utf-8 path")),
    ]);
    let args: Vec<OsString> = ["tui", "--socket-dir", sb.dir()]
        .iter()
        .map(OsString::from)
        .collect();
    let mut t = terminal::Terminal::start(Path::new(HM), &args, &env, sb.path(), (24, 80), "$ hm");
    t.wait_for("the remote session", |t| {
        t.contains("box:far") && t.contains("far-42")
    });
    let mounts = || {
        std::fs::read_dir(&temp)
            .expect("read the temp dir")
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with("hm-remote-"))
            .count()
    };
    assert_eq!(
        mounts(),
        1,
        "the mount's directory, while the dashboard runs"
    );
    t.close();
    // Whichever it notices first: the signal, the end of its keys or a
    // failed draw; not an abort (134).
    let code = t.wait_exit();
    assert!(matches!(code, 0 | 1 | 129), "exit code {code}");
    assert_eq!(mounts(), 0, "the mount's directory, after the dashboard");
}

/// Sessions that ended on another machine stay in the grid as they do
/// here: with their last lines and exit code; `r` starts one again there
/// and `x` forgets one there.
#[test]
fn the_dashboard_shows_ended_remote_sessions_restarts_and_forgets_them() {
    let (sb, _, remote_dir, _cleanup, sshd) = or_skip!(with_sshd());
    // The first run says "first" and ends; the one started again stays.
    let twice = "if [ -e ran ]; then echo second-$((6*7)); exec sleep 600; fi; \
                 touch ran; echo first-$((6*7)); exit 3";
    start_remote(&sb, &remote_dir, "again", &["sh", "-c", twice]);
    start_remote(
        &sb,
        &remote_dir,
        "done",
        &["sh", "-c", "echo done-42; exit 5"],
    );
    wait_until("both to have ended there", || {
        let ls = remote_ls(&sb, &remote_dir);
        ls.contains("exited 3") && ls.contains("exited 5")
    });
    let _ = hm(&sb, &sshd, &["ls", "--host", "box"]);
    let mut t = hm_in_terminal(&sb, &sshd, &["tui", "--socket-dir", sb.dir()], (24, 80));
    t.wait_for("the ended remote sessions, with their last lines", |t| {
        t.contains("box:again")
            && t.contains("first-42")
            && t.contains("box:done")
            && t.contains("done-42")
    });
    // `box:again` sorts first and is selected.
    t.send(b"r");
    t.wait_for("the question", |t| t.contains("run 'box:again' again?"));
    t.send(b"y");
    t.wait_for("the notice of what r did", |t| {
        t.contains("restarted 'box:again'")
    });
    t.wait_for("it running again there", |t| {
        t.contains("box:again") && t.contains("second-42")
    });
    assert!(
        remote_ls(&sb, &remote_dir).contains("sleep") || {
            wait_until("it listed as running there", || {
                let ls = remote_ls(&sb, &remote_dir);
                ls.lines()
                    .any(|l| l.starts_with("again") && !l.contains("exited"))
            });
            true
        }
    );
    // Started again with its words as they ran, not wrapped in another
    // `sh -c` each time.
    let v = remote_status(&sb, &remote_dir, "again").expect("its status");
    assert_eq!(v["command"], serde_json::json!(["sh", "-c", twice]), "{v}");
    t.send(b"l");
    t.send(b"x");
    t.wait_for("the question", |t| t.contains("Forget session 'box:done'?"));
    t.send(b"y");
    t.wait_for("the forgotten pane gone", |t| !t.contains("box:done"));
    wait_until("its record forgotten there", || {
        !remote_ls(&sb, &remote_dir).contains("done")
    });
    t.send(b"q");
    assert_eq!(t.wait_exit(), 0);
}

/// `hm restart box:x` and `hm rm box:x` do from a shell what `r` and `x`
/// do in the dashboard, with the same words for what cannot be done.
#[test]
fn ended_remote_sessions_are_started_again_and_forgotten_from_a_shell() {
    let (sb, _, remote_dir, _cleanup, sshd) = or_skip!(with_sshd());
    let twice = "if [ -e ran ]; then echo second-$((6*7)); exec sleep 600; fi; \
                 touch ran; echo first-$((6*7)); exit 3";
    start_remote(&sb, &remote_dir, "again", &["sh", "-c", twice]);
    start_remote(&sb, &remote_dir, "done", &["sh", "-c", "exit 5"]);
    start_remote(&sb, &remote_dir, "live", &["cat"]);
    wait_until("both to have ended there", || {
        let ls = remote_ls(&sb, &remote_dir);
        ls.contains("exited 3") && ls.contains("exited 5")
    });

    let again = hm(&sb, &sshd, &["restart", "box:again"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(stdout(&again), "box:again\n");
    // Running there when the command returns, with its words as they ran.
    let v = remote_status(&sb, &remote_dir, "again").expect("its status");
    assert_eq!(v["alive"], true, "{v}");
    assert_eq!(v["command"], serde_json::json!(["sh", "-c", twice]), "{v}");
    wait_until("its second run's line", || {
        stdout(&hm(&sb, &sshd, &["logs", "box:again", "--screen"])).contains("second-42")
    });
    // Started again there by that machine's own `hm restart`: its first
    // run's output first, under the mark, as a restart here keeps it.
    let logs = stdout(&hm(&sb, &sshd, &["logs", "box:again"]));
    let (first, mark) = (logs.find("first-42"), logs.find("restarted"));
    assert!(
        first.is_some() && mark.is_some() && first < mark && mark < logs.find("second-42"),
        "{logs}"
    );

    let live = hm(&sb, &sshd, &["restart", "box:live"]);
    assert!(!live.status.success());
    assert_eq!(
        stderr(&live).trim(),
        "hm: session 'box:live' is running; stop it first with 'hm kill box:live'"
    );

    let rm = hm(&sb, &sshd, &["rm", "box:done"]);
    assert!(rm.status.success(), "{}", stderr(&rm));
    assert!(
        stdout(&rm).starts_with("removed 'box:done', exited "),
        "{}",
        stdout(&rm)
    );
    // Gone there when the command returns.
    assert!(
        !remote_ls(&sb, &remote_dir).contains("done"),
        "{}",
        remote_ls(&sb, &remote_dir)
    );
    let none = hm(&sb, &sshd, &["rm", "box:done"]);
    assert!(!none.status.success());
    assert_eq!(
        stderr(&none).trim(),
        "hm: no ended session named 'done' on box (see 'hm ls --host box')"
    );
    let mixed = hm(&sb, &sshd, &["rm", "box:again", "done"]);
    assert!(!mixed.status.success());
    assert_eq!(
        stderr(&mixed).trim(),
        "hm: give sessions of one machine at a time (all HOST:ID, or all local)"
    );
}

/// Waits until the host `box` is up again and its pane `box:far` live,
/// showing `far-42` (once: replayed, not doubled).
fn wait_back(t: &mut terminal::Terminal) {
    t.wait_for("the host back, its pane live again", |t| {
        !t.contains("unreachable")
            && !t.contains("connecting")
            && t.contains("box:far")
            && t.screen().contents().matches("far-42").count() == 1
    });
}

/// The pids of `root`'s descendants.
fn descendants(root: i32) -> Vec<i32> {
    let parent = |pid: i32| -> Option<i32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.get(stat.rfind(')')? + 2..)?
            .split(' ')
            .nth(1)?
            .parse()
            .ok()
    };
    let all: Vec<i32> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let p = found[i];
        found.extend(all.iter().filter(|&&c| parent(c) == Some(p)));
        i += 1;
    }
    found.remove(0);
    found
}

/// The machine's sshd going away (the listener and every connection it
/// serves) shows the host unreachable; the same sshd back on its port
/// brings the host's panes back, while local panes never stop.
#[test]
fn the_dashboard_rides_out_the_remote_sshd_going_away_and_coming_back() {
    let (sb, _, remote_dir, _cleanup, mut sshd) = or_skip!(with_sshd());
    start_remote(
        &sb,
        &remote_dir,
        "far",
        &["sh", "-c", "echo far-$((6*7)); exec sleep 600"],
    );
    let _here = sb.spawn("near", &[], &["sh", "-c", "echo near-42; exec sleep 600"]);
    let _ = hm(&sb, &sshd, &["ls", "--host", "box"]);
    let mut t = hm_in_terminal(&sb, &sshd, &["tui", "--socket-dir", sb.dir()], (24, 80));
    t.wait_for("both panes", |t| {
        t.contains("box:far") && t.contains("far-42") && t.contains("near-42")
    });
    let listener = sshd.child.id() as i32;
    let connections = descendants(listener);
    sshd.stop();
    for pid in connections {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    t.wait_for(
        "the host said to be unreachable, its session not ended",
        |t| t.contains("unreachable since") && !t.contains("dead"),
    );
    // Reconnecting fails while sshd is away; keys and the local pane work.
    t.send(b"?");
    t.wait_for("the help", |t| t.contains("raw attach"));
    t.send(b"q");
    t.wait_for("the grid, still with the local pane", |t| {
        t.last_row().contains("move") && t.contains("near-42")
    });
    sshd.restart();
    wait_back(&mut t);
    t.send(b"q");
    assert_eq!(t.wait_exit(), 0);
}

/// A remote session ending out of sight calls for attention as a local
/// one does: its pane is marked, and the terminal is asked for a desktop
/// notification naming it (`desktop_notify`).
#[test]
fn a_remote_session_ending_out_of_sight_notifies() {
    let (sb, _, remote_dir, _cleanup, sshd) = or_skip!(with_sshd());
    start_remote(
        &sb,
        &remote_dir,
        "zzz",
        &["sh", "-c", "echo ready; read x; exit 3"],
    );
    // "aaa" is local and selected (first in the grid).
    let _seen = sb.spawn("aaa", &[], &["sh", "-c", "echo seen; exec sleep 600"]);
    std::fs::write(
        sb.path().join("heimdall.toml"),
        format!("[tui]\ndesktop_notify = \"osc9\"\n\n[[hosts]]\nname = \"box\"\nhm = \"{HM}\"\n"),
    )
    .expect("config");
    let mut t = hm_in_terminal(&sb, &sshd, &["tui", "--socket-dir", sb.dir()], (24, 80));
    t.wait_for("both panes", |t| t.contains("seen") && t.contains("ready"));
    t.record();
    let mut far = common::Raw::connect(&remote_dir.join("zzz.sock")).expect("the session");
    far.send(heimdall::protocol::ClientType::Input as u8, b"\n");
    t.wait_for("the notification", |t| {
        String::from_utf8_lossy(t.recorded()).contains("\x1b]9;box:zzz: exited with code 3\x07")
    });
    t.wait_for("its pane marked", |t| t.contains("box:zzz ●"));
    t.send(b"q");
    assert_eq!(t.wait_exit(), 0);
}

mod endings;
