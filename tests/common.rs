//! Shared harness for integration tests: a private sandbox directory, the
//! real `hm` binary, RAII guards that kill what a test started, a raw
//! protocol client, and waiting on conditions with deadlines.
#![allow(dead_code)]

pub mod fake;
pub mod history;
pub mod terminal;
pub mod tmux;

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use heimdall::protocol::{self, Assembler, ClientType, Frame, ServerType, Status};

pub const HM: &str = env!("CARGO_BIN_EXE_hm");

/// Generous: CI machines are small and shared. Tests wait for conditions,
/// this is only how long before they give up.
pub const PATIENCE: Duration = Duration::from_secs(15);

/// Polls `cond` until it holds or `PATIENCE` runs out.
pub fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A temporary home for one test: config search paths point inside it and
/// sessions live in its socket dir.
pub struct Sandbox {
    pub root: tempfile::TempDir,
    pub sock_dir: PathBuf,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox::new_in(Path::new("/tmp"))
    }

    /// A sandbox under `dir` (for a test whose files must not sit under
    /// a directory anyone may write to).
    pub fn new_in(dir: &Path) -> Sandbox {
        let root = tempfile::Builder::new()
            .prefix("hm")
            .tempdir_in(dir)
            .expect("tempdir");
        let sock_dir = root.path().join("s");
        Sandbox { root, sock_dir }
    }

    pub fn path(&self) -> &Path {
        self.root.path()
    }

    /// An executable `bin/NAME` in the sandbox running `script` (a stand-in
    /// for an agent's CLI, named as hm recognises it).
    pub fn program(&self, name: &str, script: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let bin = self.path().join("bin");
        std::fs::create_dir_all(&bin).expect("bin dir");
        let path = bin.join(name);
        std::fs::write(&path, script).expect("write the program");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .expect("make it executable");
        path
    }

    /// What every `hm` a test starts is given: a private home, config
    /// search path, runtime dir and state dir (where sessions are kept
    /// for `hm restore`).
    fn base_env(&self) -> [(&'static str, PathBuf); 4] {
        [
            ("HOME", self.path().to_path_buf()),
            ("XDG_CONFIG_HOME", self.path().join("config")),
            ("XDG_RUNTIME_DIR", self.path().join("run")),
            ("XDG_STATE_HOME", self.path().join("state")),
        ]
    }

    /// Where this sandbox's sessions are kept for `hm restore`.
    pub fn sessions_state(&self) -> PathBuf {
        self.path().join("state/heimdall/sessions")
    }

    /// `hm` with a clean, predictable environment.
    pub fn hm(&self) -> Command {
        let mut c = Command::new(HM);
        c.current_dir(self.path())
            .envs(self.base_env())
            .env_remove("HEIMDALL_SESSION_ID")
            .env_remove("HM_SOCKET_DIR")
            .stdin(Stdio::null());
        c
    }

    /// The environment of a program started in a test terminal: what
    /// [`Sandbox::hm`] gives, a terminal type, then `extra`.
    pub fn terminal_env(&self, extra: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        self.base_env()
            .into_iter()
            .map(|(k, v)| (k.into(), v.into_os_string()))
            .chain(std::iter::once(("TERM".into(), "xterm-256color".into())))
            .chain(extra.iter().map(|(k, v)| (k.into(), v.into())))
            .collect()
    }

    /// The socket dir as the text of a `--socket-dir` argument.
    pub fn dir(&self) -> &str {
        self.sock_dir.to_str().expect("utf-8 sandbox path")
    }

    /// Runs `hm ARGS --socket-dir DIR` to completion.
    pub fn cmd(&self, args: &[&str]) -> Output {
        let mut c = self.hm();
        c.args(args).arg("--socket-dir").arg(&self.sock_dir);
        c.output().expect("run hm")
    }

    /// `hm status ID --json`, which must answer.
    pub fn status_json(&self, id: &str) -> serde_json::Value {
        let out = self.cmd(&["status", id, "--json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).expect("json")
    }

    /// Starts `hm ARGS --socket-dir DIR` with its output piped, for a
    /// command that runs while the test goes on (`hm wait`, `logs -f`).
    pub fn background(&self, args: &[&str]) -> Child {
        let mut c = self.hm();
        c.args(args)
            .arg("--socket-dir")
            .arg(&self.sock_dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c.spawn().expect("start hm")
    }

    pub fn sock(&self, id: &str) -> PathBuf {
        self.sock_dir.join(format!("{id}.sock"))
    }

    /// Starts `hm run --detach` and waits until it answers STATUS.
    pub fn start(&self, id: &str, extra: &[&str], command: &[&str]) -> Session {
        let session = self.spawn(id, extra, command);
        let sock = self.sock(id);
        wait_until("the session to answer", || {
            Raw::connect(&sock).is_ok_and(|mut r| r.status().is_some())
        });
        session
    }

    /// Starts `hm run --detach` without waiting.
    pub fn spawn(&self, id: &str, extra: &[&str], command: &[&str]) -> Session {
        let mut c = self.hm();
        c.args(["run", "--detach", "--id", id])
            .arg("--socket-dir")
            .arg(&self.sock_dir)
            .args(extra)
            .arg("--")
            .args(command)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = c.spawn().expect("spawn hm run");
        Session {
            child,
            pid_file: self.sock_dir.join(format!("{id}.pid")),
            sock: self.sock(id),
        }
    }
}

/// A supervisor started by a test; killed with its whole session on drop.
pub struct Session {
    pub child: Child,
    pub pid_file: PathBuf,
    pub sock: PathBuf,
}

impl Session {
    /// The supervised command's pid, from the pid file.
    pub fn child_pid(&self) -> Option<i32> {
        let text = std::fs::read_to_string(&self.pid_file).ok()?;
        text.lines().nth(1)?.trim().parse().ok()
    }

    /// Waits for the supervisor to exit and returns its exit code.
    pub fn wait_exit(&mut self) -> i32 {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status.code().unwrap_or(-1);
            }
            assert!(Instant::now() < deadline, "supervisor did not exit");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    pub fn stderr(&mut self) -> String {
        let mut s = String::new();
        if let Some(e) = self.child.stderr.as_mut() {
            let _ = e.read_to_string(&mut s);
        }
        s
    }

    pub fn raw(&self) -> Raw {
        Raw::connect(&self.sock).expect("connect")
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(pid) = self.child_pid()
            && pid > 1
        {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(-pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A blocking protocol client, written from the spec like a third-party
/// client would be.
pub struct Raw {
    pub stream: UnixStream,
    pub asm: Assembler,
    frames: std::collections::VecDeque<Frame>,
    pub eof: bool,
}

impl Raw {
    pub fn connect(path: &Path) -> std::io::Result<Raw> {
        let mut stream = UnixStream::connect(path)?;
        stream.set_read_timeout(Some(PATIENCE))?;
        let mut mode = [0u8; 1];
        stream.read_exact(&mut mode)?;
        assert_eq!(mode[0], protocol::MODE_BINARY);
        Ok(Raw {
            stream,
            asm: Assembler::default(),
            frames: Default::default(),
            eof: false,
        })
    }

    pub fn send(&mut self, ty: u8, payload: &[u8]) {
        self.stream
            .write_all(&protocol::frame(ty, payload))
            .expect("send frame");
    }

    pub fn send_bytes(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("send bytes");
    }

    /// The next frame, or `None` at end of stream or timeout.
    pub fn frame(&mut self) -> Option<Frame> {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            if let Some(f) = self.frames.pop_front() {
                return Some(f);
            }
            match self.stream.read(&mut buf) {
                Ok(0) | Err(_) => {
                    self.eof = true;
                    return None;
                }
                Ok(n) => {
                    let mut out = Vec::new();
                    self.asm.push(&buf[..n], &mut out).expect("valid frames");
                    self.frames.extend(out);
                }
            }
        }
    }

    /// The next frame of type `ty`, skipping others.
    pub fn expect(&mut self, ty: u8) -> Frame {
        loop {
            let f = self
                .frame()
                .unwrap_or_else(|| panic!("no frame 0x{ty:02x}"));
            if f.ty == ty {
                return f;
            }
        }
    }

    pub fn status(&mut self) -> Option<Status> {
        self.send(ClientType::Status as u8, &[]);
        loop {
            let f = self.frame()?;
            if f.ty == ServerType::StatusResp as u8 {
                return Status::decode(&f.payload).ok();
            }
        }
    }

    /// Reads OUTPUT until EXIT; returns the bytes and the exit code.
    pub fn collect_until_exit(&mut self) -> (Vec<u8>, Option<i32>) {
        let mut out = Vec::new();
        while let Some(f) = self.frame() {
            match ServerType::try_from(f.ty) {
                Ok(ServerType::Output) => out.extend_from_slice(&f.payload),
                Ok(ServerType::Exit) => return (out, protocol::decode_exit(&f.payload).ok()),
                _ => {}
            }
        }
        (out, None)
    }

    /// Reads OUTPUT until `needle` has appeared.
    pub fn output_until(&mut self, needle: &[u8]) -> Vec<u8> {
        let mut out: Vec<u8> = Vec::new();
        // Only the new bytes (and a needle's length before them) can hold a
        // new match: rescanning everything would be quadratic on floods.
        let mut searched: usize = 0;
        loop {
            let from = searched.saturating_sub(needle.len());
            if out[from..].windows(needle.len()).any(|w| w == needle) {
                return out;
            }
            searched = out.len();
            let f = self.frame().unwrap_or_else(|| {
                panic!("stream ended before {:?}", String::from_utf8_lossy(needle))
            });
            if f.ty == ServerType::Output as u8 {
                out.extend_from_slice(&f.payload);
            }
        }
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Pids of the `sleep` processes whose command line holds `marker` (a
/// test's unique argument, such as `5001.<its pid>`). A supervisor's own
/// command line may hold it too, and is not counted.
pub fn sleepers(marker: &str) -> Vec<i32> {
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.starts_with("sleep ") && cmd.contains(marker) {
                pids.push(pid);
            }
        }
    }
    pids
}

/// An orphaned program, killed on drop if a failed test left it running.
pub struct Orphan {
    pub pid: i32,
    marker: String,
}

impl Drop for Orphan {
    fn drop(&mut self) {
        if sleepers(&self.marker).contains(&self.pid) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(self.pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// A child process ended (killed and reaped) when dropped, so that a
/// test that fails halfway leaves nothing running (`hm events` runs until
/// it is stopped).
pub struct Stopped(pub Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts session `id` with a program that ignores the hang-up its
/// supervisor's death sends it, SIGKILLs the supervisor, and returns the
/// program (it runs `sleep MARKER`).
pub fn orphan(sb: &Sandbox, id: &str, marker: &str) -> Orphan {
    orphan_after(sb, id, marker, || {})
}

/// [`orphan`], doing `meanwhile` once the program runs and before its
/// supervisor is killed.
pub fn orphan_after(sb: &Sandbox, id: &str, marker: &str, meanwhile: impl FnOnce()) -> Orphan {
    let script = format!("trap '' HUP; exec sleep {marker}");
    let mut s = sb.start(id, &[], &["sh", "-c", &script]);
    wait_until("the program to run", || sleepers(marker).len() == 1);
    meanwhile();
    let pid = s.child_pid().expect("program pid");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(s.child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("kill the supervisor");
    s.wait_exit();
    assert_eq!(sleepers(marker), vec![pid], "the program survived");
    // The session's guard must not kill the program; the orphan's does.
    s.pid_file = sb.path().join("no-such.pid");
    Orphan {
        pid,
        marker: marker.to_string(),
    }
}

/// A program that speaks the status protocol as Claude Code 2.1.330 does,
/// in steps the test releases by opening `gates` in turn: (0) the probe
/// and a device-attributes query in one write, then `ANSWER-FIRST
/// ANSWERED` if the replies were the status answer and then the DA1 answer
/// and nothing else (`ANSWER-WRONG`, what came, `ANSWERED`, if not); (1) a record that it is
/// blocked on a permission, and a child's record; (2) a record that it is
/// working.
pub struct StatusProgram {
    pub script: String,
    pub gates: Vec<PathBuf>,
}

impl StatusProgram {
    pub fn new(sb: &Sandbox) -> StatusProgram {
        let gates: Vec<PathBuf> = (0..3).map(|i| gate(sb, &format!("gate{i}"))).collect();
        let script = format!(
            r#"stty raw -echo
cat {g0} >/dev/null
printf '\033]7501;?\007\033[c'
IFS= read -r -d c -t 5 reply
case "$reply" in
  $'\033]7501;?\033\\\033['*) printf '\r\nANSWER-FIRST ANSWERED\r\n' ;;
  *) printf '\r\nANSWER-WRONG %q ANSWERED\r\n' "$reply" ;;
esac
cat {g1} >/dev/null
printf '\033]7501;state=blocked:app=claude-code:kind=permission:msg=YXBwcm92ZSBCYXNoOiBybSAtcmYgYnVpbGQ=\007'
printf '\033]7501;state=working:app=claude-code:id=bzytm4a8d:title=QmFja2dyb3VuZCBzbGVlcA==\007'
cat {g2} >/dev/null
printf '\033]7501;state=working:app=claude-code\007'
sleep 30"#,
            g0 = gates[0].display(),
            g1 = gates[1].display(),
            g2 = gates[2].display(),
        );
        StatusProgram { script, gates }
    }
}

/// Opens a fifo for writing and closes it: the program blocked reading it
/// goes on.
pub fn open_gate(gate: &Path) {
    drop(
        std::fs::OpenOptions::new()
            .write(true)
            .open(gate)
            .expect("open the gate"),
    );
}

/// The environment `sb.hm()` runs in, for another program that runs hm
/// (a shell's completion, an older binary): its removals too. Without
/// them, an `HM_SOCKET_DIR` set where the tests run pointed those at the
/// person's own sessions.
pub trait HmEnv {
    fn hm_env(&mut self, sb: &Sandbox) -> &mut Self;
}

impl HmEnv for Command {
    fn hm_env(&mut self, sb: &Sandbox) -> &mut Self {
        for (k, v) in sb.hm().get_envs() {
            match v {
                Some(v) => self.env(k, v),
                None => self.env_remove(k),
            };
        }
        self
    }
}

/// Connections a supervisor holds on socket `sock` now: the accepted
/// ends, which carry the listener's path in `/proc/net/unix` (state 03,
/// connected); a client's own end has none.
pub fn clients(sock: &Path) -> usize {
    sockets(sock, "03")
}

/// How many sockets of the supervisor at `sock` are in `state` of
/// /proc/net/unix: 03 taken, 02 waiting to be.
pub fn sockets(sock: &Path, state: &str) -> usize {
    let table = std::fs::read_to_string("/proc/net/unix").unwrap_or_default();
    table
        .lines()
        .skip(1)
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() == 8 && f[5] == state && Path::new(f[7]) == sock
        })
        .count()
}

/// A fifo in the sandbox: a program that reads it waits (not at its
/// terminal, which would make it look like it waits for input) until the
/// test opens it with [`open_gate`].
pub fn gate(sb: &Sandbox, name: &str) -> PathBuf {
    let p = sb.path().join(name);
    let ok = Command::new("mkfifo").arg(&p).status().expect("run mkfifo");
    assert!(ok.success(), "mkfifo {}", p.display());
    p
}

/// An asciicast recording's size and its output, one chunk per event.
pub fn recording(path: &Path) -> (heimdall::protocol::Size, Vec<Vec<u8>>) {
    let text = std::fs::read_to_string(path).expect("a recording");
    let mut lines = text.lines();
    let header: serde_json::Value =
        serde_json::from_str(lines.next().expect("a header")).expect("header JSON");
    let dim = |k: &str| u16::try_from(header[k].as_u64().expect(k)).expect(k);
    let size = heimdall::protocol::Size {
        cols: dim("width"),
        rows: dim("height"),
    };
    let chunks = lines
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e[1] == "o")
        .map(|e| e[2].as_str().unwrap_or_default().as_bytes().to_vec())
        .collect();
    (size, chunks)
}

/// A program as an agent draws: a banner once, then a status line redrawn
/// in place 400 times (16 KiB that scroll nothing), then its question:
/// with a small `--scrollback-bytes` the banner is on its screen and no
/// longer among the bytes kept.
pub const BANNER_THEN_REDRAWS: &str = "echo BANNER-ROW; i=0; while [ $i -lt 400 ]; do \
    printf '\\r\\033[2Kworking on step %s of a long task' $i; i=$((i+1)); done; \
    printf '\\r\\033[2KASK-ROW'; exec sleep 600";

/// Text typed at a prompt is the person's, whatever it says: `looks`
/// verdicts of session `id` in a row, none of them waiting.
pub fn never_waiting(sb: &Sandbox, id: &str, looks: usize, what: &str) {
    for _ in 0..looks {
        let v = sb.status_json(id);
        assert_ne!(v["primary"], "waiting", "{what} made a dialog: {v}");
        // Looks spread over time, so that later verdicts are among them.
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// An interactive bash in session `id` (the `agent` classifier) with
/// `echo '<line>'` typed at its prompt, not submitted, and seen echoed;
/// the session, and the connection that typed it.
pub fn bash_with_typed(sb: &Sandbox, id: &str, line: &str) -> (Session, Raw) {
    let session = sb.start(
        id,
        &["--classifier", "agent"],
        &["bash", "--norc", "--noprofile", "-i"],
    );
    let mut raw = Raw::connect(&sb.sock(id)).expect("connect");
    raw.send(ClientType::Subscribe as u8, &[]);
    raw.send(ClientType::Input as u8, format!("echo '{line}'").as_bytes());
    raw.output_until(format!("{line}'").as_bytes());
    (session, raw)
}

/// Kills every session in a socket dir on drop, found by its pid file:
/// for sessions the dashboard or `hm run --bg` started, which no
/// `Session` guard knows.
pub struct Reaper(pub PathBuf);

impl Drop for Reaper {
    fn drop(&mut self) {
        let Ok(entries) = std::fs::read_dir(&self.0) else {
            return;
        };
        let me = std::process::id() as i32;
        for e in entries.flatten() {
            if e.path().extension().is_none_or(|x| x != "pid") {
                continue;
            }
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            let pids: Vec<i32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
            // The child leads its own process group; the supervisor is
            // killed alone.
            if let Some(&child) = pids.get(1).filter(|&&p| p > 1 && p != me) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(-child),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            if let Some(&sup) = pids.first().filter(|&&p| p > 1 && p != me) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(sup),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
    }
}

/// `hm ARGS` (`approve ID ...`) once the dialog has stood long enough to
/// take keys surely (until then it is refused as too new).
pub fn answer_when_it_takes_keys(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    let mut answered = None;
    wait_until("the dialog to take keys", || {
        let out = sb.cmd(args);
        let done = !stderr(&out).contains("too new");
        answered = Some(out);
        done
    });
    answered.expect("an answer")
}
