//! Process facts for the detector: who holds the pty's foreground, and
//! whether it is blocked reading the terminal.
//!
//! Read from `/proc` when a verdict is asked for, never on a timer. The
//! supervisor is the program's parent, so it may read the system call a
//! process is blocked in (`/proc/PID/syscall`) under Yama's default
//! ptrace scope; where it may not, there are simply no facts.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::PathBuf;

use nix::unistd::Pid;

use crate::detect::ProcessFacts;

/// What the supervisor needs to read process facts.
#[derive(Debug)]
pub struct ProcessProbe {
    /// A duplicate of the pty master, for `tcgetpgrp`.
    master: OwnedFd,
    /// The session's program, leader of its own process group.
    session: Pid,
    /// The pty's slave device (`/dev/pts/N`), to recognise reads of it.
    tty: PathBuf,
}

impl ProcessProbe {
    /// `None` if the master cannot be duplicated or the slave's name read
    /// (the detector then goes without process facts).
    pub fn new(master: &OwnedFd, slave: &OwnedFd, session: Pid) -> Option<ProcessProbe> {
        let tty = std::fs::read_link(format!("/proc/self/fd/{}", slave.as_raw_fd())).ok()?;
        Some(ProcessProbe {
            master: master.try_clone().ok()?,
            session,
            tty,
        })
    }

    /// The facts now, or `None` if they cannot be read.
    pub fn facts(&self) -> Option<ProcessFacts> {
        let fg = nix::unistd::tcgetpgrp(self.master.as_fd()).ok()?;
        let proc_dir = PathBuf::from(format!("/proc/{}", fg.as_raw()));
        let command = std::fs::read_to_string(proc_dir.join("comm"))
            .map(|c| c.trim_end().to_string())
            .unwrap_or_default();
        let syscall = std::fs::read_to_string(proc_dir.join("syscall")).unwrap_or_default();
        let canonical = nix::sys::termios::tcgetattr(self.master.as_fd()).is_ok_and(|t| {
            t.local_flags
                .contains(nix::sys::termios::LocalFlags::ICANON)
        });
        Some(ProcessFacts {
            foreground_is_session: fg == self.session,
            reading_terminal: self.reads_terminal(&proc_dir, &syscall),
            canonical,
            foreground_command: command,
        })
    }

    /// Whether `/proc/PID/syscall` shows a process blocked reading our
    /// terminal: `read` of a descriptor that is the pty, or a `select`-like
    /// wait on standard input alone (readline waits so). Waits on many
    /// descriptors (event loops, servers) are not counted: they may be
    /// waiting for anything.
    fn reads_terminal(&self, proc_dir: &std::path::Path, syscall: &str) -> bool {
        let mut fields = syscall.split_whitespace();
        let Some(nr) = fields.next().and_then(|n| n.parse::<i64>().ok()) else {
            return false;
        };
        let args: Vec<u64> = fields
            .take(2)
            .filter_map(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok())
            .collect();
        let is_tty = |fd: u64| {
            std::fs::read_link(proc_dir.join("fd").join(fd.to_string()))
                .is_ok_and(|p| p == self.tty)
        };
        match (nr, args.as_slice()) {
            (n, [fd, ..]) if n == libc::SYS_read || n == libc::SYS_readv => is_tty(*fd),
            // pselect6(nfds, ...): nfds 1 watches descriptor 0 alone.
            (n, [1, ..]) if n == libc::SYS_pselect6 => is_tty(0),
            // ppoll(fds, nfds, ...): one descriptor, and standard input is
            // the terminal.
            (n, [_, 1]) if n == libc::SYS_ppoll => is_tty(0),
            #[cfg(target_arch = "x86_64")]
            (n, [1, ..]) if n == libc::SYS_select => is_tty(0),
            #[cfg(target_arch = "x86_64")]
            (n, [_, 1]) if n == libc::SYS_poll => is_tty(0),
            _ => false,
        }
    }
}
