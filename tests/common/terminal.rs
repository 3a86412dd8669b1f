//! A real terminal for tests of the commands that take one over (`hm
//! attach`, `hm run`): a pty whose output is fed to a `vt100::Parser`.
//!
//! vt100 tracks the screen and most modes; [`Model`] adds what it leaves
//! to callbacks (window title stack, focus events, kitty keyboard flags)
//! and the scroll region, modelled as one region shared by both screens
//! (as xterm does), so that a region left behind on the alternate screen
//! still counts. Like a real terminal, it answers queries (device
//! attributes, cursor position, colours) by writing the reply to the pty.
//!
//! A module of `tests/common` that relies on nothing
//! else in `tests/common`.
#![allow(dead_code)]

use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::time::{Duration, Instant};

use heimdall::protocol::Size;
use heimdall::pty::{self, SpawnSpec};
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{Signal, kill};
use nix::sys::termios::Termios;
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

/// How long a condition may take before the test gives up.
pub const PATIENCE: Duration = Duration::from_secs(15);

/// Terminal state vt100 does not keep, and the replies owed to queries.
#[derive(Debug, Default)]
pub struct Model {
    pub title: String,
    titles: Vec<String>,
    /// `CSI ? 1004 h`: focus in/out reports.
    pub focus_events: bool,
    /// Current kitty keyboard protocol flags, and the pushed ones.
    pub kitty_flags: u16,
    kitty_stack: Vec<u16>,
    /// Top and bottom margins (1-based), `None` for the whole screen.
    pub scroll_region: Option<(u16, u16)>,
    /// Modes vt100 does not track that are set now, as (private, number):
    /// insert (4), newline (20), reverse video (?5), ... Autowrap (?7),
    /// on by default, is left out.
    pub other_modes: std::collections::BTreeSet<(bool, u16)>,
    /// How many queries this terminal answered.
    pub answered: usize,
    replies: Vec<u8>,
}

impl Model {
    fn reply(&mut self, bytes: &[u8]) {
        self.answered += 1;
        self.replies.extend_from_slice(bytes);
    }
}

impl vt100::Callbacks for Model {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.title = String::from_utf8_lossy(title).into_owned();
    }

    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        _i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        let p = |i: usize| params.get(i).and_then(|p| p.first()).copied();
        match (i1, c) {
            // XTWINOPS title stack: push and pop.
            (None, 't') if p(0) == Some(22) => self.titles.push(self.title.clone()),
            (None, 't') if p(0) == Some(23) => {
                if let Some(t) = self.titles.pop() {
                    self.title = t;
                }
            }
            (Some(b'?'), 'h' | 'l') if params.iter().any(|m| m.first() == Some(&1004)) => {
                self.focus_events = c == 'h';
            }
            (None | Some(b'?'), 'h' | 'l') => {
                for &n in params.iter().filter_map(|m| m.first()) {
                    let mode = (i1.is_some(), n);
                    if mode == (true, 7) {
                        continue;
                    }
                    if c == 'h' {
                        self.other_modes.insert(mode);
                    } else {
                        self.other_modes.remove(&mode);
                    }
                }
            }
            // Kitty keyboard protocol: push, pop, set.
            (Some(b'>'), 'u') => {
                self.kitty_stack.push(self.kitty_flags);
                self.kitty_flags = p(0).unwrap_or(0);
            }
            (Some(b'<'), 'u') => {
                for _ in 0..p(0).unwrap_or(1).max(1) {
                    self.kitty_flags = self.kitty_stack.pop().unwrap_or(0);
                }
            }
            (Some(b'='), 'u') => {
                let flags = p(0).unwrap_or(0);
                match p(1).unwrap_or(1) {
                    1 => self.kitty_flags = flags,
                    2 => self.kitty_flags |= flags,
                    3 => self.kitty_flags &= !flags,
                    _ => {}
                }
            }
            // Queries a real terminal answers.
            (Some(b'?'), 'u') => self.reply(format!("\x1b[?{}u", self.kitty_flags).as_bytes()),
            (None, 'c') => self.reply(b"\x1b[?1;2c"),
            (Some(b'>'), 'c') => self.reply(b"\x1b[>0;276;0c"),
            (None, 'n') if p(0) == Some(5) => self.reply(b"\x1b[0n"),
            (None, 'n') if p(0) == Some(6) => {
                let (row, col) = screen.cursor_position();
                self.reply(format!("\x1b[{};{}R", row + 1, col + 1).as_bytes());
            }
            _ => {}
        }
    }

    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        if let [which @ (b"10" | b"11"), b"?"] = params {
            let which = String::from_utf8_lossy(which).into_owned();
            self.reply(format!("\x1b]{which};rgb:0000/0000/0000\x1b\\").as_bytes());
        }
    }
}

/// Follows `CSI top ; bottom r` and RIS in the raw stream, since vt100
/// applies the region without telling anyone.
#[derive(Debug, Default)]
struct RegionScan {
    state: ScanState,
    params: Vec<u8>,
    plain: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ScanState {
    #[default]
    Ground,
    Esc,
    Csi,
}

impl RegionScan {
    fn scan(&mut self, bytes: &[u8], rows: u16, region: &mut Option<(u16, u16)>) {
        for &b in bytes {
            self.state = match (self.state, b) {
                (_, 0x1b) => ScanState::Esc,
                (ScanState::Esc, b'[') => {
                    self.params.clear();
                    self.plain = true;
                    ScanState::Csi
                }
                (ScanState::Esc, b'c') => {
                    *region = None;
                    ScanState::Ground
                }
                (ScanState::Csi, 0x40..=0x7e) => {
                    if b == b'r' && self.plain {
                        *region = parse_region(&self.params, rows);
                    }
                    ScanState::Ground
                }
                (ScanState::Csi, b'0'..=b'9' | b';') => {
                    self.params.push(b);
                    ScanState::Csi
                }
                (ScanState::Csi, 0x18 | 0x1a) => ScanState::Ground,
                (ScanState::Csi, _) => {
                    // A private marker or an intermediate: not DECSTBM.
                    self.plain = false;
                    ScanState::Csi
                }
                _ => ScanState::Ground,
            };
        }
    }
}

fn parse_region(params: &[u8], rows: u16) -> Option<(u16, u16)> {
    let mut it = params
        .split(|&c| c == b';')
        .map(|p| std::str::from_utf8(p).ok()?.parse::<u16>().ok());
    let top = it.next().flatten().filter(|&t| t > 0).unwrap_or(1);
    let bottom = it
        .next()
        .flatten()
        .filter(|&b| b > 0)
        .unwrap_or(rows)
        .min(rows);
    (top > 1 || bottom < rows).then_some((top, bottom))
}

/// A program running in a pty of its own, with the pty's output on a
/// vt100 screen. The program is killed on drop if it is still running.
pub struct Terminal {
    master: Option<OwnedFd>,
    /// Kept open so the pty's termios can be read after the program exits
    /// and its last output stays readable.
    slave: OwnedFd,
    pid: Pid,
    parser: vt100::Parser<Model>,
    regions: RegionScan,
    exit: Option<i32>,
    /// Every byte the program printed, once [`Terminal::record`] asked.
    recording: Option<Vec<u8>>,
}

impl std::fmt::Debug for Terminal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Terminal").field("pid", &self.pid).finish()
    }
}

fn nz(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n).expect("a terminal has at least one row and column")
}

impl Terminal {
    /// Starts `program` as the session leader of a new `rows`×`cols` pty,
    /// with `env` added to the inherited environment.
    ///
    /// The screen starts as a user's would: a window title, and the shell
    /// prompt that ran the command (`prompt`) on the first row.
    pub fn start(
        program: &Path,
        args: &[OsString],
        env: &[(OsString, OsString)],
        workdir: &Path,
        (rows, cols): (u16, u16),
        prompt: &str,
    ) -> Terminal {
        // `spawn` asks for a single-threaded caller because it forks; the
        // child side only makes async-signal-safe calls, which is also
        // what a multi-threaded test harness needs.
        let spawned = pty::spawn(&SpawnSpec {
            program: program.into(),
            args: args.to_vec(),
            env: env.to_vec(),
            workdir: workdir.to_path_buf(),
            size: Size { cols, rows },
        })
        .expect("start a program in a pty");
        let mut parser = vt100::Parser::new_with_callbacks(nz(rows), nz(cols), 0, Model::default());
        parser.process(format!("\x1b]2;outer\x07{prompt}\r\n").as_bytes());
        Terminal {
            master: Some(spawned.master),
            slave: spawned.slave,
            pid: spawned.pid,
            parser,
            regions: RegionScan::default(),
            exit: None,
            recording: None,
        }
    }

    /// Keeps every byte printed from now on, for [`Terminal::recorded`].
    pub fn record(&mut self) {
        self.recording = Some(Vec::new());
    }

    pub fn recorded(&self) -> &[u8] {
        self.recording.as_deref().unwrap_or_default()
    }

    pub fn pid(&self) -> Pid {
        self.pid
    }

    pub fn screen(&self) -> &vt100::Screen {
        self.parser.screen()
    }

    pub fn model(&self) -> &Model {
        self.parser.callbacks()
    }

    /// Row `r` (0-based) as text, without trailing blanks.
    pub fn row(&self, r: u16) -> String {
        let (_, cols) = self.screen().size();
        let text = self.screen().contents_between(r, 0, r, cols.get());
        text.trim_end().to_string()
    }

    pub fn last_row(&self) -> String {
        self.row(self.screen().size().0.get() - 1)
    }

    /// Every row that is not blank, top to bottom.
    pub fn lines(&self) -> Vec<String> {
        (0..self.screen().size().0.get())
            .map(|r| self.row(r))
            .filter(|l| !l.is_empty())
            .collect()
    }

    pub fn has_line(&self, line: &str) -> bool {
        self.lines().iter().any(|l| l == line)
    }

    pub fn contains(&self, text: &str) -> bool {
        self.screen().contents().contains(text)
    }

    /// The pty's current termios, as the program left it.
    pub fn termios(&self) -> Termios {
        nix::sys::termios::tcgetattr(&self.slave).expect("tcgetattr on the pty")
    }

    /// Bytes typed that have reached the pty's input queue and no program
    /// has read (FIONREAD). Typed bytes get there a little after the write
    /// that types them, on a kernel worker of their own.
    #[allow(unsafe_code)]
    pub fn unread_input(&self) -> usize {
        use std::os::fd::AsRawFd;
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int through the pointer, which
        // points at one.
        let r = unsafe { libc::ioctl(self.slave.as_raw_fd(), libc::FIONREAD, &mut n) };
        assert_eq!(
            r,
            0,
            "FIONREAD on the pty: {}",
            std::io::Error::last_os_error()
        );
        usize::try_from(n).unwrap_or(0)
    }

    /// Types `bytes` in one write, as a keypress or a paste arrives.
    pub fn send(&mut self, bytes: &[u8]) {
        let master = self.master.as_ref().expect("the terminal is open");
        let mut rest = bytes;
        let deadline = Instant::now() + PATIENCE;
        while !rest.is_empty() {
            match nix::unistd::write(master, rest) {
                Ok(n) => rest = &rest[n..],
                Err(Errno::EAGAIN | Errno::EINTR) => {
                    assert!(Instant::now() < deadline, "the pty stopped taking input");
                    let _ = poll(
                        &mut [PollFd::new(master.as_fd(), PollFlags::POLLOUT)],
                        PollTimeout::from(20u16),
                    );
                }
                Err(e) => panic!("write to the pty: {e}"),
            }
        }
    }

    /// Resizes the window; the kernel sends SIGWINCH to the program.
    pub fn resize(&mut self, rows: u16, cols: u16) {
        let master = self.master.as_ref().expect("the terminal is open");
        pty::resize(master, Size { cols, rows }).expect("resize the pty");
        self.parser.screen_mut().set_size(nz(rows), nz(cols));
    }

    /// Closes the window: the pty hangs up and its session gets SIGHUP.
    pub fn close(&mut self) {
        self.master = None;
    }

    pub fn signal(&self, sig: Signal) {
        assert!(self.exit.is_none(), "the program has already exited");
        kill(self.pid, sig).expect("signal the program");
    }

    /// Reads what the program printed, waiting up to `wait` for the first
    /// bytes, and answers any query in it.
    fn pump(&mut self, wait: Duration) {
        let Some(master) = &self.master else {
            std::thread::sleep(wait);
            return;
        };
        let ms = u16::try_from(wait.as_millis()).unwrap_or(u16::MAX);
        let _ = poll(
            &mut [PollFd::new(master.as_fd(), PollFlags::POLLIN)],
            PollTimeout::from(ms),
        );
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match nix::unistd::read(master, &mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let rows = self.screen().size().0.get();
                    let model = self.parser.callbacks_mut();
                    self.regions.scan(&buf[..n], rows, &mut model.scroll_region);
                    self.parser.process(&buf[..n]);
                    if let Some(r) = &mut self.recording {
                        r.extend_from_slice(&buf[..n]);
                    }
                }
                Err(Errno::EINTR) => {}
                // EAGAIN: all read; EIO: nobody has the pty open.
                Err(_) => break,
            }
        }
        let replies = std::mem::take(&mut self.parser.callbacks_mut().replies);
        if !replies.is_empty() {
            self.send(&replies);
        }
    }

    /// The exit code (128 + signal for a signal), once the program ended.
    pub fn try_exit(&mut self) -> Option<i32> {
        if self.exit.is_none() {
            self.exit = match waitpid(self.pid, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::Exited(_, code)) => Some(code),
                Ok(WaitStatus::Signaled(_, sig, _)) => Some(128 + sig as i32),
                _ => None,
            };
        }
        self.exit
    }

    /// Keeps the screen up to date until `cond` holds or `limit` passes;
    /// whether it held. For a test that must act again if nothing happens.
    pub fn holds_within(&mut self, limit: Duration, cond: impl Fn(&Terminal) -> bool) -> bool {
        let deadline = Instant::now() + limit;
        while !cond(self) {
            if Instant::now() > deadline {
                return false;
            }
            self.pump(Duration::from_millis(20));
        }
        true
    }

    /// Keeps the screen up to date until `cond` holds.
    pub fn wait_for(&mut self, what: &str, cond: impl Fn(&Terminal) -> bool) {
        let deadline = Instant::now() + PATIENCE;
        let mut exited_at = None;
        loop {
            if cond(self) {
                return;
            }
            // The last output of a program that exited arrives soon after;
            // a condition still false well after that never will be.
            if self.try_exit().is_some() {
                let at = *exited_at.get_or_insert_with(Instant::now);
                if at.elapsed() > Duration::from_secs(2) {
                    panic!("{} (the program exited)", self.failure(what));
                }
            }
            if Instant::now() > deadline {
                panic!("{}", self.failure(what));
            }
            self.pump(Duration::from_millis(20));
        }
    }

    /// Waits for the program to exit and returns its exit code.
    pub fn wait_exit(&mut self) -> i32 {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(code) = self.try_exit() {
                // What it wrote last may still be in the pty: it was
                // written before the exit, so one read without waiting
                // takes it (a read flushes the kernel's pending input
                // first). Its last words were missed once without this.
                self.pump(Duration::ZERO);
                return code;
            }
            if Instant::now() > deadline {
                panic!("{}", self.failure("the program to exit"));
            }
            self.pump(Duration::from_millis(10));
        }
    }

    /// Waits for the program to exit with `code`; if it exits otherwise,
    /// fails with what it left on the screen (its error message).
    pub fn expect_exit(&mut self, code: i32) {
        let got = self.wait_exit();
        if got != code {
            // What it wrote before exiting is in the pty already.
            self.pump(Duration::from_millis(50));
            panic!(
                "exited with {got}, not {code}; screen:\n{}",
                self.lines().join("\n")
            );
        }
    }

    fn failure(&self, what: &str) -> String {
        format!(
            "timed out waiting for {what}; screen:\n{}\n(alternate screen: {})",
            self.lines().join("\n"),
            self.screen().alternate_screen()
        )
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if self.try_exit().is_none() {
            let _ = kill(self.pid, Signal::SIGKILL);
            let _ = waitpid(self.pid, None);
        }
    }
}

/// The settings every new pty starts with: what a terminal the user had
/// not put in raw mode looks like.
pub fn pristine_termios() -> Termios {
    let pty = nix::pty::openpty(None, None).expect("open a pty");
    nix::sys::termios::tcgetattr(&pty.slave).expect("tcgetattr on a new pty")
}
