//! The user's terminal: raw mode, and putting everything back.
//!
//! [`Guard::enter`] saves the termios and switches to raw mode and the
//! alternate screen; [`restore`] undoes it and also resets every mode a
//! child program may have switched on through a passthrough (mouse
//! tracking, bracketed paste, focus events, application cursor and keypad,
//! the kitty keyboard protocol, scroll region, hidden cursor, window
//! title). Restoring happens exactly once, from whichever comes first: the
//! guard's drop, an explicit call on a signal, or the panic hook.

use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Mutex;

use nix::fcntl::{OFlag, open};
use nix::sys::stat::Mode;
use nix::sys::termios::{self, SetArg, Termios};

/// Leaves every mode a full-screen program may have set (insert,
/// newline, reverse video and left-right margins among them: left on, they
/// garble the shell's line editing), then the alternate screen, then pops
/// the window title we pushed on entry.
pub const RESET: &[u8] = b"\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1016l\
\x1b[?1004l\x1b[?2004l\x1b[?1l\x1b>\x1b[=0;1u\x1b[>4m\x1b[r\x1b[0m\x1b[?6l\x1b[?7h\x1b(B\x1b[0 q\x1b[?25h\
\x1b[4l\x1b[20l\x1b[?5l\x1b[?69l\
\x1b[?1049l\x1b[=0;1u\x1b[23;0t";

/// Pushes the window title (so [`RESET`] can pop it) and enters the
/// alternate screen.
pub const ENTER: &[u8] = b"\x1b[22;0t\x1b[?1049h\x1b[H\x1b[2J";

struct Saved {
    termios: Termios,
}

static SAVED: Mutex<Option<Saved>> = Mutex::new(None);

/// Raw mode on the alternate screen until dropped.
#[derive(Debug)]
pub struct Guard {
    /// The terminal goes on to another part of hm when dropped, which
    /// reads what was typed meanwhile (see [`Guard::hand_over`]).
    hand_over: bool,
}

impl Guard {
    /// Saves the terminal state, installs the panic hook, and enters raw
    /// mode on the alternate screen.
    pub fn enter() -> io::Result<Guard> {
        let stdin = io::stdin();
        let original = termios::tcgetattr(stdin.as_fd())?;
        let mut raw = original.clone();
        termios::cfmakeraw(&mut raw);
        install_panic_hook();
        *SAVED.lock().unwrap_or_else(|e| e.into_inner()) = Some(Saved { termios: original });
        termios::tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &raw)?;
        write_all_stdout(ENTER);
        Ok(Guard { hand_over: false })
    }

    /// Keys typed but not yet read when the guard is dropped are kept for
    /// whoever reads the terminal next: for an attach made from the
    /// dashboard, which takes the terminal back.
    pub fn hand_over(&mut self) {
        self.hand_over = true;
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        put_back(if self.hand_over {
            SetArg::TCSADRAIN
        } else {
            SetArg::TCSAFLUSH
        });
    }
}

/// Puts the terminal back as it was for another part of hm to set up
/// its own way, keeping what was typed meanwhile; does nothing the second
/// time.
pub fn restore() {
    put_back(SetArg::TCSADRAIN);
}

/// Puts the terminal back, once. `TCSAFLUSH` when hm is done with it:
/// keys typed for a session or the dashboard that were never read would
/// otherwise go to the shell (a `y` meant for an agent run as a command).
/// It drops what has reached the terminal's input queue, before echo is
/// back on; a key the kernel has not yet moved there (its worker runs a
/// moment after the write) still arrives, and echoes, as the shell's.
fn put_back(how: SetArg) {
    let saved = SAVED.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(saved) = saved {
        write_all_stdout(RESET);
        let _ = termios::tcsetattr(io::stdin().as_fd(), how, &saved.termios);
    }
}

thread_local! {
    /// Set while running code whose panics are caught and recovered from.
    static CONTAINED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, turning a panic into `None` without restoring the terminal or
/// printing anything: for code such as a pane's terminal emulator, whose
/// failure the caller recovers from while the screen stays in use.
pub fn contain<R>(f: impl FnOnce() -> R) -> Option<R> {
    let was = CONTAINED.with(|c| c.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).ok();
    CONTAINED.with(|c| c.set(was));
    result
}

fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(move |info| {
            // A contained panic is recovered from: the terminal stays as
            // it is, and a message would only scribble over the screen.
            if CONTAINED.with(std::cell::Cell::get) {
                return;
            }
            put_back(SetArg::TCSAFLUSH);
            // One line on the restored screen, not a backtrace over it.
            let what = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            let at = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            // Not `eprintln!`: it panics when standard error is a
            // terminal that is gone, and a panic here aborts.
            let _ = writeln!(
                io::stderr(),
                "hm: internal error: {what}{at} (please report it)"
            );
        }));
    });
}

/// Blocking write of all of `bytes` to fd 1, retrying on EINTR/EAGAIN; used
/// only for the short enter/restore sequences.
fn write_all_stdout(mut bytes: &[u8]) {
    let stdout = io::stdout();
    let fd = stdout.as_fd();
    let mut spins = 0;
    while !bytes.is_empty() && spins < 1000 {
        match crate::fd::write_now(fd, bytes) {
            Ok(0) => {
                spins += 1;
                let _ = nix::poll::poll(
                    &mut [nix::poll::PollFd::new(fd, nix::poll::PollFlags::POLLOUT)],
                    nix::poll::PollTimeout::from(10u8),
                );
            }
            Ok(n) => bytes = &bytes[n..],
            Err(_) => return,
        }
    }
}

/// True if the fd is a terminal.
pub fn is_tty(fd: BorrowedFd<'_>) -> bool {
    nix::unistd::isatty(fd).unwrap_or(false)
}

/// Opens our terminal again as a new, non-blocking file description, so
/// that non-blocking mode never leaks to the shell sharing stdin.
pub fn reopen_tty() -> io::Result<OwnedFd> {
    let path = nix::unistd::ttyname(io::stdin().as_fd())?;
    Ok(open(
        &path,
        OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?)
}

/// The terminal's size as (cols, rows), if it has one.
pub fn size(fd: BorrowedFd<'_>) -> Option<(u16, u16)> {
    let ws = crate::pty::window_size(fd).ok()?;
    (ws.cols > 0 && ws.rows > 0).then_some((ws.cols, ws.rows))
}
