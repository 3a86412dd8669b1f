//! A program in a pty (the dashboard), read back through a terminal
//! emulator (vt100): the harness waits for what a person would see, not
//! for bytes. Shared by the dashboard sections (`tui`, `scale`).

use std::num::NonZeroU16;
use std::time::{Duration, Instant};

use heimdall::protocol::Size;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use crate::peers::{self, Bench, PtyProc};

/// A program in a pty, and what its screen shows.
pub struct Screen {
    pub proc: PtyProc,
    pub vt: vt100::Parser,
    buf: Vec<u8>,
    /// When each read that brought output returned, while recording: the
    /// gaps between them are how long the screen went without a frame.
    pub reads: Option<Vec<Instant>>,
}

impl Screen {
    /// Starts `argv` in a pty of `size`, with `env` added to the harness's
    /// environment.
    pub fn start(b: &Bench, argv: &[&str], size: Size, env: &[(&str, &str)]) -> Screen {
        let proc = b.pty_with(argv, size, env);
        let rows = NonZeroU16::new(size.rows).unwrap_or(NonZeroU16::MIN);
        let cols = NonZeroU16::new(size.cols).unwrap_or(NonZeroU16::MIN);
        Screen {
            proc,
            vt: vt100::Parser::new(rows, cols, 0),
            buf: vec![0u8; 256 * 1024],
            reads: None,
        }
    }

    /// Reads what is there, waiting at most `wait` for something.
    pub fn pump(&mut self, wait: Duration) -> bool {
        let mut fds = [PollFd::new(self.proc.fd(), PollFlags::POLLIN)];
        let ms = PollTimeout::try_from(wait.as_millis() as u64).unwrap_or(PollTimeout::MAX);
        let _ = poll(&mut fds, ms);
        let mut got = false;
        while let Ok(n) = nix::unistd::read(self.proc.fd(), &mut self.buf) {
            if n == 0 {
                break;
            }
            if !got && let Some(r) = self.reads.as_mut() {
                r.push(Instant::now());
            }
            self.vt.process(&self.buf[..n]);
            got = true;
        }
        got
    }

    /// Keeps reading for `d`, so the program never blocks on its terminal.
    pub fn drain(&mut self, d: Duration) {
        let end = Instant::now() + d;
        while Instant::now() < end {
            self.pump(
                end.saturating_duration_since(Instant::now())
                    .min(Duration::from_millis(100)),
            );
        }
    }

    pub fn contents(&self) -> String {
        self.vt.screen().contents()
    }

    /// The bottom row's text (the dashboard's footer), trimmed.
    pub fn footer(&self) -> String {
        self.contents()
            .lines()
            .last()
            .unwrap_or("")
            .trim()
            .to_string()
    }

    /// The page shown and the number of pages, from the dashboard's footer
    /// (`page 2/14`); `(1, 1)` when it shows no page number.
    pub fn page(&self) -> (usize, usize) {
        page_of(&self.footer()).unwrap_or((1, 1))
    }

    /// Types `bytes` into the program's terminal.
    pub fn send(&self, bytes: &[u8]) {
        peers::write_all(self.proc.fd(), bytes);
    }

    /// Waits until `cond` holds on the screen's text; the time it took.
    pub fn until(
        &mut self,
        limit: Duration,
        mut cond: impl FnMut(&str) -> bool,
    ) -> Option<Duration> {
        self.until_cells(limit, |s| cond(&s.contents()))
    }

    /// Waits until `cond` holds on the emulated screen (cells, not text:
    /// where something is drawn); the time it took.
    pub fn until_cells(
        &mut self,
        limit: Duration,
        mut cond: impl FnMut(&vt100::Screen) -> bool,
    ) -> Option<Duration> {
        let t0 = Instant::now();
        loop {
            if cond(self.vt.screen()) {
                return Some(t0.elapsed());
            }
            let left = limit.saturating_sub(t0.elapsed());
            if left.is_zero() {
                return None;
            }
            self.pump(left.min(Duration::from_millis(50)));
        }
    }
}

/// `page N/M` in a line of text.
pub fn page_of(line: &str) -> Option<(usize, usize)> {
    let rest = &line[line.rfind("page ")? + 5..];
    let (n, m) = rest.split_once('/')?;
    let m: String = m.chars().take_while(char::is_ascii_digit).collect();
    Some((n.trim().parse().ok()?, m.parse().ok()?))
}

/// How many of the dashboard's panes the screen shows: their top-left
/// corners, rounded (`╭`) or, for the selected one, thick (`┏`).
pub fn panes(screen: &vt100::Screen) -> usize {
    let (rows, cols) = screen.size();
    (0..rows.get())
        .flat_map(|r| (0..cols.get()).map(move |c| (r, c)))
        .filter(|&(r, c)| {
            screen
                .cell(r, c)
                .is_some_and(|x| matches!(x.contents(), "╭" | "┏"))
        })
        .count()
}
