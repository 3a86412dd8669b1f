//! The supervisor's event loop in-process, with paused time: the serving
//! [`Core`] over a real pty (the test plays the program, or starts one on
//! the pty's slave), a client on a socket pair, and tokio's clock moved
//! only by the test. An idle threshold of seconds and a kill grace period
//! of minutes pass in milliseconds; the end-to-end tests in
//! `tests/supervisor.rs` still run the real `hm run`.
//!
//! Paused time has one trap: when the runtime has nothing to run, tokio
//! advances the clock to the next timer at once, even while real I/O (bytes
//! crossing the pty, a child dying) is still in flight. Wherever the time
//! at which something happens is asserted, the test holds the clock
//! ([`still`]) until the I/O it waits for is done.

use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};
use std::rc::Rc;
use std::time::Duration;

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::sys::termios::{SetArg, cfmakeraw, tcgetattr, tcsetattr};
use nix::unistd::Pid;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::task::LocalSet;
use tokio::time::sleep_until;

use super::Core;
use super::reader::QUIET_AFTER_EXIT;
use super::state::SETTLE;
use crate::classify::ProcessState;
use crate::clock::Instant;
use crate::detect::Primary;
use crate::protocol::{
    self, Assembler, ClientType, Frame, MAX_PAYLOAD, MODE_BINARY, ServerType, StateReport, Status,
};

const MS: Duration = Duration::from_millis(1);

/// Keeps paused time where it is while it lives: tokio does not advance a
/// paused clock while a blocking task runs, and this one runs until the
/// guard is dropped.
#[derive(Debug)]
struct Still {
    _release: std::sync::mpsc::Sender<()>,
}

fn still() -> Still {
    let (release, wait) = std::sync::mpsc::channel::<()>();
    tokio::task::spawn_blocking(move || {
        // Returns when the guard drops the sender.
        let _ = wait.recv();
    });
    Still { _release: release }
}

/// A serving core over a fresh raw pty, and the pty's slave.
fn core() -> (Rc<Core>, OwnedFd) {
    let pty = nix::pty::openpty(None, None).expect("a pty");
    let mut raw = tcgetattr(&pty.slave).expect("termios");
    cfmakeraw(&mut raw);
    tcsetattr(&pty.slave, SetArg::TCSANOW, &raw).expect("raw mode");
    let flags = fcntl(&pty.master, FcntlArg::F_GETFL).expect("file flags");
    fcntl(
        &pty.master,
        FcntlArg::F_SETFL(OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK),
    )
    .expect("non-blocking");
    let core = Core::start(pty.master, 64 * 1024).expect("the serving core");
    (Rc::new(core), pty.slave)
}

/// A client connection, keeping every frame it was sent in order.
#[derive(Debug)]
struct Client {
    sock: UnixStream,
    asm: Assembler,
    mode: Option<u8>,
    frames: Vec<Frame>,
    /// Frames before this one have been looked at by [`Client::until`].
    seen: usize,
}

impl Client {
    fn connect(core: &Rc<Core>) -> Client {
        let (ours, theirs) = UnixStream::pair().expect("a socket pair");
        let core = core.clone();
        tokio::task::spawn_local(async move { core.serve(theirs).await });
        Client {
            sock: ours,
            asm: Assembler::new(MAX_PAYLOAD),
            mode: None,
            frames: Vec::new(),
            seen: 0,
        }
    }

    async fn send(&mut self, ty: u8, payload: &[u8]) {
        let bytes = protocol::frame(ty, payload);
        self.sock.write_all(&bytes).await.expect("send a frame");
    }

    /// The next frame not yet looked at that `want` accepts; those it
    /// passes over stay in [`Client::frames`].
    async fn until(&mut self, want: impl Fn(&Frame) -> bool) -> Frame {
        loop {
            if let Some(i) = self.frames[self.seen..].iter().position(&want) {
                self.seen += i + 1;
                return self.frames[self.seen - 1].clone();
            }
            self.seen = self.frames.len();
            let mut buf = [0u8; 16 * 1024];
            let n = self.sock.read(&mut buf).await.expect("read replies");
            assert!(n > 0, "the supervisor closed the connection");
            let mut bytes = &buf[..n];
            if self.mode.is_none() {
                self.mode = Some(bytes[0]);
                bytes = &bytes[1..];
            }
            assert_eq!(self.mode, Some(MODE_BINARY));
            self.asm
                .push(bytes, &mut self.frames)
                .expect("whole frames");
        }
    }

    async fn status(&mut self) -> Status {
        self.send(ClientType::Status as u8, &[]).await;
        let f = self.until(|f| f.ty == ServerType::StatusResp as u8).await;
        Status::decode(&f.payload).expect("a STATUS_RESP")
    }

    /// Waits until the output so far ends with `text`.
    async fn output_until(&mut self, text: &[u8]) {
        while !self.output().ends_with(text) {
            self.until(|f| f.ty == ServerType::Output as u8).await;
        }
    }

    fn output(&self) -> Vec<u8> {
        self.frames
            .iter()
            .filter(|f| f.ty == ServerType::Output as u8)
            .flat_map(|f| f.payload.iter().copied())
            .collect()
    }

    /// The states pushed in STATE frames so far, in order.
    fn states(&self) -> Vec<Primary> {
        self.frames
            .iter()
            .filter(|f| f.ty == ServerType::State as u8)
            .map(|f| {
                let r: StateReport = serde_json::from_slice(&f.payload).expect("a STATE report");
                r.primary
            })
            .collect()
    }
}

/// The program's side of the pty: what it prints.
fn print(slave: &OwnedFd, text: &[u8]) {
    let n = nix::unistd::write(slave, text).expect("write to the pty");
    assert_eq!(n, text.len());
}

#[tokio::test(start_paused = true)]
async fn output_is_active_until_exactly_the_idle_threshold_of_silence() {
    LocalSet::new()
        .run_until(async {
            let threshold = Duration::from_millis(Core::IDLE_THRESHOLD_MS);
            let (core, slave) = core();
            let mut c = Client::connect(&core);
            c.send(ClientType::Subscribe as u8, &[protocol::SUBSCRIBE_STATE])
                .await;
            let st = c.status().await;
            assert_eq!(st.state, ProcessState::Idle.as_byte(), "silent so far");

            // The reader takes the bytes while the clock stands at `t0`.
            let t0 = {
                let _still = still();
                let t0 = Instant::now();
                print(&slave, b"working\r\n");
                c.output_until(b"working\r\n").await;
                t0
            };

            sleep_until(t0 + threshold - MS).await;
            let st = {
                let _still = still();
                c.status().await
            };
            assert_eq!(st.state, ProcessState::Active.as_byte(), "{st:?}");
            assert_eq!(u64::from(st.idle_ms), Core::IDLE_THRESHOLD_MS - 1);
            assert_eq!(u64::from(st.state_ms), Core::IDLE_THRESHOLD_MS - 1);

            sleep_until(t0 + threshold).await;
            let st = {
                let _still = still();
                c.status().await
            };
            assert_eq!(st.state, ProcessState::Idle.as_byte(), "{st:?}");
            assert_eq!(u64::from(st.idle_ms), Core::IDLE_THRESHOLD_MS);
            assert_eq!(st.state_ms, 0, "idle from the threshold on");

            // Nobody polls: the state tracker's own timer pushes the change,
            // the first millisecond past the threshold.
            let before = c.states().len();
            while c.states().len() == before {
                c.until(|f| f.ty == ServerType::State as u8).await;
            }
            assert_eq!(Instant::now() - t0, threshold + MS);
            assert_eq!(
                c.states(),
                [Primary::Idle, Primary::Active, Primary::Idle],
                "the state at subscription, when output settled, when silence ran out"
            );

            // New output makes it active again.
            let t1 = {
                let _still = still();
                print(&slave, b"more\r\n");
                c.output_until(b"more\r\n").await;
                Instant::now()
            };
            let st = {
                let _still = still();
                c.status().await
            };
            assert_eq!(st.state, ProcessState::Active.as_byte());
            assert_eq!((st.idle_ms, st.state_ms), (0, 0));
            while c.states().len() < 4 {
                c.until(|f| f.ty == ServerType::State as u8).await;
            }
            assert_eq!(c.states()[3], Primary::Active);
            assert_eq!(Instant::now() - t1, SETTLE, "reported once settled");
        })
        .await;
}

/// Output that goes on is looked at `SETTLE_LIMIT` after it began, though
/// it never paused for `SETTLE`; output that pauses is looked at `SETTLE`
/// after its last read, however many reads came before it, and also when
/// it ends just before a limit (a question printed at the end of a stream
/// is seen once settled, not only at the idle threshold). The tracker is
/// not woken by reads while it waits (`Shared::last_read`), so this is
/// what shows it still sees every one.
#[tokio::test(start_paused = true)]
async fn output_is_looked_at_once_settled_or_at_the_limit_while_it_flows() {
    LocalSet::new()
        .run_until(async {
            let (core, slave) = core();
            let mut c = Client::connect(&core);
            c.send(ClientType::Subscribe as u8, &[protocol::SUBSCRIBE_STATE])
                .await;
            assert_eq!(c.status().await.state, ProcessState::Idle.as_byte());
            // The program prints at `t0`, 30 ms later, then pauses.
            let t0 = {
                let _still = still();
                let t0 = Instant::now();
                print(&slave, b"one\r\n");
                c.output_until(b"one\r\n").await;
                t0
            };
            sleep_until(t0 + 30 * MS).await;
            {
                let _still = still();
                print(&slave, b"two\r\n");
                c.output_until(b"two\r\n").await;
            }
            while c.states().len() < 2 {
                c.until(|f| f.ty == ServerType::State as u8).await;
            }
            assert_eq!(c.states()[1], Primary::Active);
            assert_eq!(
                Instant::now() - t0,
                30 * MS + SETTLE,
                "SETTLE after the last read"
            );

            // Idle again, then a line every 20 ms for 300 ms: never a
            // pause of SETTLE.
            let threshold = Duration::from_millis(Core::IDLE_THRESHOLD_MS);
            while c.states().len() < 3 {
                c.until(|f| f.ty == ServerType::State as u8).await;
            }
            assert_eq!(c.states()[2], Primary::Idle);
            let t1 = Instant::now();
            assert_eq!(t1 - t0, 30 * MS + threshold + MS);
            let mut printer = Client::connect(&core);
            printer.send(ClientType::Subscribe as u8, &[]).await;
            tokio::task::spawn_local(async move {
                for k in 0..15u32 {
                    sleep_until(t1 + 20 * k * MS).await;
                    let _still = still();
                    let line = format!("line {k}\r\n");
                    print(&slave, line.as_bytes());
                    printer.output_until(line.as_bytes()).await;
                }
            });
            while c.states().len() < 4 {
                c.until(|f| f.ty == ServerType::State as u8).await;
            }
            assert_eq!(c.states()[3], Primary::Active);
            assert_eq!(
                Instant::now() - t1,
                super::tracker::SETTLE_LIMIT,
                "looked at while it flows"
            );
            // The last line came 20 ms before the next limit (300 ms):
            // looked at there, and again once settled.
            sleep_until(t1 + 300 * MS + MS).await;
            assert_eq!(core.last_look(), Some(t1 + 300 * MS), "the second limit");
            sleep_until(t1 + 280 * MS + SETTLE + MS).await;
            assert_eq!(
                core.last_look(),
                Some(t1 + 280 * MS + SETTLE),
                "once settled"
            );
        })
        .await;
}

/// A resting session's screen sleeps, and is its screen whenever asked:
/// output is read but not parsed while nobody looks (the screen sleeps on),
/// it lands where it would have when asked, and the screen sleeps again
/// once the session rests again.
#[tokio::test(start_paused = true)]
async fn a_resting_sessions_screen_sleeps_and_wakes_as_it_was() {
    LocalSet::new()
        .run_until(async {
            let threshold = Duration::from_millis(Core::IDLE_THRESHOLD_MS);
            let (core, slave) = core();
            let mut c = Client::connect(&core);
            c.send(ClientType::Subscribe as u8, &[protocol::SUBSCRIBE_STATE])
                .await;
            let screen = |c: &mut Client| {
                let f = c
                    .frames
                    .iter()
                    .rev()
                    .find(|f| f.ty == ServerType::Screen as u8)
                    .cloned();
                let v: serde_json::Value =
                    serde_json::from_slice(&f.expect("a SCREEN").payload).expect("SCREEN JSON");
                v["text"].as_str().unwrap_or_default().to_owned()
            };
            print(&slave, b"\x1b[1mfirst\x1b[0m line\r\n");
            c.output_until(b"line\r\n").await;
            // Idle again after the output made it active (the first STATE,
            // idle before any output, may come before or after that output).
            let rested = |c: &Client| {
                let states = c.states();
                let active = states.iter().position(|p| *p == Primary::Active);
                active.is_some_and(|i| states[i..].contains(&Primary::Idle))
            };
            while !rested(&c) {
                c.until(|f| f.ty == ServerType::State as u8).await;
            }
            assert!(core.screen_asleep(), "awake at rest");
            // Asked, it shows what it showed, and goes back to sleep.
            c.send(ClientType::Screen as u8, &[]).await;
            c.until(|f| f.ty == ServerType::Screen as u8).await;
            assert!(
                screen(&mut c).starts_with("first line"),
                "{}",
                screen(&mut c)
            );
            assert!(core.screen_asleep(), "left awake by a question");
            // Output does not wake it, and lands where it would have.
            print(&slave, b"second");
            c.output_until(b"second").await;
            assert!(core.screen_asleep(), "woken by output nobody looked at");
            c.send(ClientType::Screen as u8, &[]).await;
            c.until(|f| f.ty == ServerType::Screen as u8).await;
            assert!(
                screen(&mut c).starts_with("first line\nsecond"),
                "{}",
                screen(&mut c)
            );
            sleep_until(Instant::now() + threshold + SETTLE).await;
            while c.states().last() != Some(&Primary::Idle) {
                c.until(|f| f.ty == ServerType::State as u8).await;
            }
            assert!(core.screen_asleep(), "awake at rest again");
        })
        .await;
}

/// A program started on the pty's slave, killed when the test ends early
/// (never once reaped: its pid may be someone else's by then).
#[derive(Debug)]
struct Program {
    pid: Option<Pid>,
}

impl Program {
    fn start(slave: &OwnedFd, script: &str) -> Program {
        let io = || Stdio::from(slave.try_clone().expect("a copy of the slave"));
        #[expect(
            clippy::zombie_processes,
            reason = "the supervisor's main loop reaps it, as it reaps `hm run`'s program"
        )]
        let child = Command::new("/bin/sh")
            .args(["-c", script])
            .stdin(io())
            .stdout(io())
            .stderr(io())
            .spawn()
            .expect("start sh");
        let pid = Pid::from_raw(i32::try_from(child.id()).expect("a pid"));
        Program { pid: Some(pid) }
    }

    fn pid(&self) -> Pid {
        self.pid.expect("not reaped")
    }

    /// The process's state letter in `/proc/PID/stat` (`Z` once dead).
    fn state(&self) -> char {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).expect("stat");
        let after = stat.rsplit_once(')').expect("comm").1;
        after.trim_start().chars().next().expect("a state")
    }

    fn reaped(&mut self) {
        self.pid = None;
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        if let Some(pid) = self.pid {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

/// Starts `script` on a core's pty under its main loop, subscribes, and
/// waits for the script to print `ready`.
async fn supervised(
    script: &str,
) -> (
    Rc<Core>,
    Program,
    Client,
    tokio::task::JoinHandle<std::io::Result<i32>>,
) {
    let (core, slave) = core();
    let program = Program::start(&slave, script);
    let main = tokio::task::spawn_local({
        let core = core.clone();
        let pid = program.pid();
        async move { core.supervise(pid, slave).await }
    });
    let mut c = Client::connect(&core);
    c.send(ClientType::Subscribe as u8, &[0]).await;
    c.output_until(b"ready\n").await;
    (core, program, c, main)
}

/// Asks for a kill with `grace` on `c` (waiting for EXIT, as `hm kill`
/// does) and returns once the main loop has acted on it: the STATUS sent
/// after it is answered only once the KILL was handled, and the main loop,
/// woken by it, runs before the runtime next waits.
async fn kill(c: &mut Client, grace: Duration) {
    let ms = u32::try_from(grace.as_millis()).expect("a grace in u32 ms");
    c.send(ClientType::Kill as u8, &ms.to_be_bytes()).await;
    c.status().await;
}

#[tokio::test(start_paused = true)]
async fn a_program_ignoring_sigterm_gets_sigkill_when_the_grace_runs_out() {
    LocalSet::new()
        .run_until(async {
            let grace = Duration::from_secs(600);
            let (_core, mut program, mut c, main) =
                supervised("trap '' TERM; echo ready; exec sleep 3600").await;
            let t0 = {
                let _still = still();
                kill(&mut c, grace).await;
                Instant::now()
            };

            sleep_until(t0 + grace - MS).await;
            {
                let _still = still();
                let st = c.status().await;
                assert!(st.alive, "SIGTERM is ignored and SIGKILL not yet due");
                assert_ne!(program.state(), 'Z');
            }

            let exit = c.until(|f| f.ty == ServerType::Exit as u8).await;
            program.reaped();
            assert_eq!(protocol::decode_exit(&exit.payload), Ok(128 + 9), "SIGKILL");
            let took = Instant::now() - t0;
            // Killed at the deadline; its EXIT then waits for the output to
            // end, at most the quiet time after the exit.
            assert!(
                took >= grace && took <= grace + QUIET_AFTER_EXIT,
                "{took:?}"
            );
            assert_eq!(main.await.expect("the main loop").expect("ended"), 137);
        })
        .await;
}

#[tokio::test(start_paused = true)]
async fn a_program_that_obeys_sigterm_ends_without_waiting_for_the_grace() {
    LocalSet::new()
        .run_until(async {
            let grace = Duration::from_secs(600);
            let (_core, mut program, mut c, main) = supervised("echo ready; exec sleep 3600").await;
            let _still = still();
            let t0 = Instant::now();
            kill(&mut c, grace).await;
            let exit = c.until(|f| f.ty == ServerType::Exit as u8).await;
            program.reaped();
            assert_eq!(
                protocol::decode_exit(&exit.payload),
                Ok(128 + 15),
                "SIGTERM"
            );
            assert_eq!(Instant::now(), t0, "no time passed");
            assert_eq!(main.await.expect("the main loop").expect("ended"), 143);
        })
        .await;
}
