//! Starting what is measured: `hm` sessions, dtach and tmux sessions, raw
//! ptys and clients in ptys, plus a small protocol client. Every process
//! started here is owned by a guard that kills it (by pid) when dropped.

use std::cell::Cell;
use std::ffi::OsString;
use std::fs;
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use heimdall::protocol::Size;
use heimdall::pty::SpawnSpec;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::peer::Peer;
use crate::sys;

/// Size of every pty: the session's and the clients'.
pub const COLS: u16 = 120;
pub const ROWS: u16 = 40;
pub use crate::peer::PATIENCE;

/// The sandbox and the programs under test.
#[derive(Debug)]
pub struct Bench {
    pub root: PathBuf,
    pub hm: PathBuf,
    /// Another build measured beside `hm` where a section can
    /// (`HM_BENCH_BASE`): the landed one, for a change's before and after
    /// in one run.
    pub base: Option<PathBuf>,
    pub dtach: bool,
    pub tmux: bool,
    seq: Cell<u32>,
}

impl Bench {
    pub fn new(root: PathBuf, hm: PathBuf) -> Bench {
        let has = |cmd: &str, arg: &str| {
            Command::new(cmd)
                .arg(arg)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok()
        };
        let _ = fs::create_dir_all(root.join("config"));
        Bench {
            dtach: has("dtach", "--help"),
            tmux: has("tmux", "-V"),
            root,
            hm,
            base: None,
            seq: Cell::new(0),
        }
    }

    /// The same sandbox's twin that runs the base build, in a directory of
    /// its own so that its names cannot meet ours.
    pub fn base_bench(&self) -> Option<Bench> {
        let hm = self.base.clone()?;
        let root = self.root.join("base");
        let _ = fs::create_dir_all(&root);
        Some(Bench::new(root, hm))
    }

    /// A fresh name: sessions, sockets and fifos never reuse one.
    pub fn name(&self, prefix: &str) -> String {
        let n = self.seq.get() + 1;
        self.seq.set(n);
        format!("{prefix}{n:04}")
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// `hm` with a clean environment that finds no config file.
    pub fn hm(&self) -> Command {
        self.hm_via(&[])
    }

    /// [`Bench::hm`] run by `wrapper` (a program that execs its arguments,
    /// as `prlimit --nofile=1024: ...` does), or alone when it is empty.
    pub fn hm_via(&self, wrapper: &[&str]) -> Command {
        let mut c = match wrapper.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(&self.hm);
                c
            }
            None => Command::new(&self.hm),
        };
        c.current_dir(&self.root)
            .env("HOME", &self.root)
            .env("XDG_CONFIG_HOME", self.root.join("config"))
            .env("XDG_RUNTIME_DIR", self.root.join("run"))
            .env("TERM", "xterm-256color")
            .env_remove("HEIMDALL_SESSION_ID")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        c
    }

    /// Starts `hm run --detach` in socket dir `dir` without waiting.
    pub fn spawn_hm(&self, dir: &Path, id: &str, argv: &[&str]) -> HmSession {
        self.spawn_hm_with(dir, id, &[], argv)
    }

    /// `spawn_hm` with more options for `hm run` (`--classifier agent`).
    pub fn spawn_hm_with(&self, dir: &Path, id: &str, opts: &[&str], argv: &[&str]) -> HmSession {
        let mut c = self.hm();
        c.args(["run", "--detach", "--id", id, "--socket-dir"])
            .arg(dir)
            .args(["--cols", &COLS.to_string(), "--rows", &ROWS.to_string()])
            .args(opts)
            .arg("--")
            .args(argv);
        let child = c.spawn().expect("start hm run --detach");
        sys::track(child.id() as i32, false);
        HmSession {
            id: id.to_string(),
            dir: dir.to_path_buf(),
            sock: dir.join(format!("{id}.sock")),
            pid_file: dir.join(format!("{id}.pid")),
            child,
            program_pid: Cell::new(None),
        }
    }

    /// Starts a session and waits until it answers STATUS.
    pub fn hm_session(&self, argv: &[&str]) -> HmSession {
        self.hm_session_with(&[], argv)
    }

    /// `hm_session` with more options for `hm run`.
    pub fn hm_session_with(&self, opts: &[&str], argv: &[&str]) -> HmSession {
        let dir = self.path("s");
        let s = self.spawn_hm_with(&dir, &self.name("hm"), opts, argv);
        s.wait_ready();
        s
    }

    pub fn dtach_session(&self, argv: &[&str]) -> DtachSession {
        let s = self.spawn_dtach(&self.path(&format!("{}.dtach", self.name("d"))), argv);
        wait_for("dtach to listen", || UnixStream::connect(&s.sock).is_ok());
        s
    }

    /// Starts `dtach -N` (it stays in the foreground) without waiting.
    pub fn spawn_dtach(&self, sock: &Path, argv: &[&str]) -> DtachSession {
        let child = Command::new("dtach")
            .arg("-N")
            .arg(sock)
            .args(["-E", "-z"])
            .args(argv)
            .env("TERM", "xterm-256color")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start dtach -N");
        sys::track(child.id() as i32, false);
        DtachSession {
            child,
            sock: sock.to_path_buf(),
        }
    }

    pub fn tmux_server(&self) -> TmuxServer {
        let name = self.name("t");
        let conf = self.path(&format!("{name}.conf"));
        fs::write(
            &conf,
            "set -g status off\nset -g escape-time 0\nset -g default-terminal screen\n",
        )
        .expect("write tmux.conf");
        TmuxServer {
            sock: self.path(&format!("{name}.tmux")),
            conf,
            pid: Cell::new(None),
        }
    }

    /// A process in a new pty, as the leader of its own session; the pty is
    /// `COLS x ROWS` and the master is non-blocking.
    pub fn pty(&self, argv: &[&str]) -> PtyProc {
        let size = Size {
            cols: COLS,
            rows: ROWS,
        };
        self.pty_with(argv, size, &[])
    }

    /// [`Bench::pty`] of another size, with `extra` added to the
    /// environment.
    pub fn pty_with(&self, argv: &[&str], size: Size, extra: &[(&str, &str)]) -> PtyProc {
        let mut env: Vec<(OsString, OsString)> = vec![
            ("TERM".into(), "xterm-256color".into()),
            ("HOME".into(), self.root.clone().into_os_string()),
            (
                "XDG_CONFIG_HOME".into(),
                self.root.join("config").into_os_string(),
            ),
            (
                "XDG_RUNTIME_DIR".into(),
                self.root.join("run").into_os_string(),
            ),
        ];
        env.extend(extra.iter().map(|(k, v)| (k.into(), v.into())));
        let spec = SpawnSpec {
            program: argv[0].into(),
            args: argv[1..].iter().map(OsString::from).collect(),
            env,
            workdir: self.root.clone(),
            size,
        };
        let spawned = heimdall::pty::spawn(&spec).expect("spawn in a pty");
        let pid = spawned.pid.as_raw();
        sys::track(pid, true);
        drop(spawned.slave);
        PtyProc {
            master: spawned.master,
            pid,
        }
    }

    /// `argv` behind the minimal relay (see `relay.rs`): the relay's
    /// process and a non-blocking connection to it.
    pub fn relay(&self, argv: &[&str]) -> (PtyProc, UnixStream) {
        let (relay, sock) = self.relay_server(argv);
        let mut conn = None;
        wait_for("the relay's socket", || {
            conn = UnixStream::connect(&sock).ok();
            conn.is_some()
        });
        let conn = conn.expect("connected");
        conn.set_nonblocking(true).expect("non-blocking");
        (relay, conn)
    }

    /// `argv` behind the minimal relay and its minimal terminal client
    /// (on tokio's runtime if `tokio`): the relay's process and the
    /// client's, in a pty of its own.
    pub fn relay_attach(&self, argv: &[&str], tokio: bool) -> (PtyProc, PtyProc) {
        let (relay, sock) = self.relay_server(argv);
        wait_for("the relay's socket", || sock.exists());
        let exe = std::env::current_exe().expect("the harness's own path");
        let client = self.pty(&[
            &exe.display().to_string(),
            if tokio {
                "--hm-bench-relay-client-tokio"
            } else {
                "--hm-bench-relay-client"
            },
            &sock.display().to_string(),
        ]);
        (relay, client)
    }

    /// Starts the minimal relay of `argv`; its process and socket.
    fn relay_server(&self, argv: &[&str]) -> (PtyProc, PathBuf) {
        let sock = self.path(&self.name("relay"));
        let exe = std::env::current_exe().expect("the harness's own path");
        let mut args = vec![exe.display().to_string(), "--hm-bench-relay".into()];
        args.push(sock.display().to_string());
        args.extend(argv.iter().map(|a| a.to_string()));
        (
            self.pty(&args.iter().map(String::as_str).collect::<Vec<_>>()),
            sock,
        )
    }

    /// A named pipe a child blocks on until the harness opens the gate.
    pub fn fifo(&self) -> PathBuf {
        let p = self.path(&format!("{}.fifo", self.name("g")));
        nix::unistd::mkfifo(&p, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("mkfifo");
        p
    }
}

/// Polls `cond` until it holds; gives up (panics, which cleans up) after
/// [`PATIENCE`].
pub fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !cond() {
        assert!(
            Instant::now() < deadline,
            "e2e: timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_micros(500));
    }
}

/// Lets a gated child go: it is blocked reading `fifo`.
pub fn open_gate(fifo: &Path) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        // Non-blocking: fails with ENXIO until the child has the read end.
        match fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(fifo)
        {
            Ok(mut f) => {
                let _ = f.write_all(b"\n");
                return;
            }
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_micros(200)),
            Err(e) => panic!("e2e: the child never opened its gate: {e}"),
        }
    }
}

/// The shell script of a streaming child: quiet raw tty, wait at the gate,
/// write the payload and the marker, then sleep.
pub fn stream_script(fifo: &Path, payload: &Path) -> String {
    format!(
        "stty raw -echo; read x < '{}'; cat '{}'; printf '\\r\\n@@HMB-DONE@@'; exec sleep 1000000",
        fifo.display(),
        payload.display()
    )
}

pub const ECHO_SCRIPT: &str = "stty raw -echo; exec cat";

/// A supervisor started by the harness.
#[derive(Debug)]
pub struct HmSession {
    pub id: String,
    pub dir: PathBuf,
    pub sock: PathBuf,
    pid_file: PathBuf,
    child: Child,
    program_pid: Cell<Option<i32>>,
}

impl HmSession {
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// The supervised program's pid (its process group), from the pid file.
    fn program(&self) -> Option<i32> {
        if self.program_pid.get().is_none() {
            let pid = fs::read_to_string(&self.pid_file)
                .ok()
                .and_then(|t| t.lines().nth(1)?.trim().parse().ok());
            if let Some(p) = pid {
                sys::track(p, true);
            }
            self.program_pid.set(pid);
        }
        self.program_pid.get()
    }

    /// `hm attach` to this session, as an argv for [`Bench::pty`].
    pub fn attach_argv(&self, hm: &Path) -> Vec<String> {
        vec![
            hm.display().to_string(),
            "attach".into(),
            self.id.clone(),
            "--socket-dir".into(),
            self.dir.display().to_string(),
        ]
    }

    pub fn wait_ready(&self) {
        wait_for("the session to answer STATUS", || {
            Peer::connect(&self.sock).is_ok_and(|mut p| p.status().is_ok())
        });
        self.program();
    }
}

impl Drop for HmSession {
    fn drop(&mut self) {
        // SIGTERM first so the supervisor removes its socket and pid file.
        let _ = kill(Pid::from_raw(self.pid()), Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_millis(500);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        if let Some(p) = self.program() {
            sys::kill_and_reap(p, true);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        sys::untrack(self.pid());
    }
}

#[derive(Debug)]
pub struct DtachSession {
    pub sock: PathBuf,
    child: Child,
}

impl DtachSession {
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }
}

impl Drop for DtachSession {
    fn drop(&mut self) {
        // Its program gets SIGHUP when dtach's master side closes.
        let _ = self.child.kill();
        let _ = self.child.wait();
        sys::untrack(self.pid());
    }
}

/// A private tmux server (its own socket and config).
#[derive(Debug)]
pub struct TmuxServer {
    pub sock: PathBuf,
    conf: PathBuf,
    pid: Cell<Option<i32>>,
}

impl TmuxServer {
    pub fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.arg("-S")
            .arg(&self.sock)
            .arg("-f")
            .arg(&self.conf)
            .env("TERM", "xterm-256color")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        c
    }

    /// `tmux new-session -d` running `argv`; returns when tmux does.
    pub fn new_session(&self, name: &str, argv: &[&str]) {
        let status = self
            .cmd()
            .args(["new-session", "-d", "-s", name, "-x"])
            .arg(COLS.to_string())
            .arg("-y")
            .arg(ROWS.to_string())
            .args(argv)
            .status()
            .expect("run tmux new-session");
        assert!(status.success(), "e2e: tmux new-session failed");
        if self.pid.get().is_none() {
            let out = self
                .cmd()
                .args(["display-message", "-p", "#{pid}"])
                .stdout(Stdio::piped())
                .output()
                .expect("ask tmux its pid");
            let pid = String::from_utf8_lossy(&out.stdout).trim().parse().ok();
            if let Some(p) = pid {
                sys::track(p, false);
            }
            self.pid.set(pid);
        }
    }

    pub fn pid(&self) -> Option<i32> {
        self.pid.get()
    }

    pub fn attach_argv(&self, name: &str) -> Vec<String> {
        vec![
            "tmux".into(),
            "-S".into(),
            self.sock.display().to_string(),
            "attach".into(),
            "-t".into(),
            name.into(),
        ]
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").status();
        if let Some(p) = self.pid.get() {
            sys::kill_and_reap(p, false);
        }
    }
}

/// A process in a pty the harness holds the master of.
#[derive(Debug)]
pub struct PtyProc {
    pub master: OwnedFd,
    pub pid: i32,
}

impl PtyProc {
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.master.as_fd()
    }

    /// Reads and discards output until none came for `quiet` (at most
    /// `max`): what a client prints when it starts.
    pub fn settle(&self, quiet: Duration, max: Duration) -> Vec<u8> {
        settle(self.fd(), quiet, max)
    }
}

impl Drop for PtyProc {
    fn drop(&mut self) {
        sys::kill_and_reap(self.pid, true);
    }
}

pub fn settle(fd: BorrowedFd<'_>, quiet: Duration, max: Duration) -> Vec<u8> {
    let end = Instant::now() + max;
    let mut got = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut last = Instant::now();
    while Instant::now() < end && last.elapsed() < quiet {
        let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
        let _ = poll(&mut fds, PollTimeout::from(10u8));
        match nix::unistd::read(fd, &mut buf) {
            Ok(0) => break,
            Ok(n) => {
                got.extend_from_slice(&buf[..n]);
                last = Instant::now();
            }
            Err(nix::Error::EAGAIN) | Err(nix::Error::EINTR) => {}
            Err(_) => break,
        }
    }
    got
}

/// Writes all of `bytes` to a non-blocking descriptor.
pub fn write_all(fd: BorrowedFd<'_>, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        match nix::unistd::write(fd, bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(nix::Error::EAGAIN) | Err(nix::Error::EINTR) => {
                let mut fds = [PollFd::new(fd, PollFlags::POLLOUT)];
                let _ = poll(&mut fds, PollTimeout::from(100u8));
            }
            Err(e) => panic!("e2e: write failed: {e}"),
        }
    }
}
