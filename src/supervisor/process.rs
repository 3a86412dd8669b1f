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

use crate::detect::{ProcessFacts, ProcessId};

/// How deep the walk from the foreground group's leader down through
/// shells goes: `sh -c 'bash -c prog'` is three; a cycle is impossible,
/// but a bound keeps a hostile process tree from costing anything.
const MAX_DEPTH: usize = 8;

/// What the supervisor needs to read process facts.
#[derive(Debug)]
pub struct ProcessProbe {
    /// A duplicate of the pty master, for `tcgetpgrp`.
    master: OwnedFd,
    /// The session's program, leader of its own process group.
    session: Pid,
    /// The pty's slave device (`/dev/pts/N`), to recognise reads of it.
    tty: PathBuf,
    /// Shells' program names: the foreground process is found through
    /// them (a shell running a job is not the one in front).
    shells: Vec<String>,
}

impl ProcessProbe {
    /// `None` if the master cannot be duplicated or the slave's name read
    /// (the detector then goes without process facts).
    pub fn new(
        master: &OwnedFd,
        slave: &OwnedFd,
        session: Pid,
        shells: Vec<String>,
    ) -> Option<ProcessProbe> {
        let tty = std::fs::read_link(format!("/proc/self/fd/{}", slave.as_raw_fd())).ok()?;
        Some(ProcessProbe {
            master: master.try_clone().ok()?,
            session,
            tty,
            shells,
        })
    }

    /// The facts now, or `None` if they cannot be read.
    pub fn facts(&self) -> Option<ProcessFacts> {
        let fg = nix::unistd::tcgetpgrp(self.master.as_fd()).ok()?;
        let proc_dir = PathBuf::from(format!("/proc/{}", fg.as_raw()));
        let command = std::fs::read_to_string(proc_dir.join("comm"))
            .map(|c| c.trim_end().to_string())
            .unwrap_or_default();
        let canonical = nix::sys::termios::tcgetattr(self.master.as_fd()).is_ok_and(|t| {
            t.local_flags
                .contains(nix::sys::termios::LocalFlags::ICANON)
        });
        let (front, foreground_names, handed_over_by) =
            self.front(fg.as_raw(), &command).unwrap_or_default();
        // Whether the process in front reads: a shell running a job waits
        // for it, the job is what may read (`sh -c 'python3 ask.py'`).
        let proc_dir = front
            .last()
            .map_or(proc_dir, |p| PathBuf::from(format!("/proc/{}", p.pid)));
        let syscall = std::fs::read_to_string(proc_dir.join("syscall")).unwrap_or_default();
        Some(ProcessFacts {
            foreground_is_session: fg == self.session,
            reading_terminal: self.reads_terminal(&proc_dir, &syscall),
            canonical,
            foreground_command: command,
            front,
            foreground_names,
            handed_over_by,
        })
    }

    /// The processes in front of the terminal: the foreground group's
    /// leader and, while that is a shell running a job in the same group
    /// (`sh -c 'prog; cat file'` runs both in its own group), the newest
    /// such job, down through shells; the last is the one in front. With
    /// the names that one goes by (its `comm`, and the file names of its
    /// first two arguments: `node .../bin/opencode` is opencode), and,
    /// when a program that is no shell has handed the terminal to a child
    /// of its own group (Claude Code's Ctrl-G runs `$EDITOR` so, and waits
    /// for it), the names of that program: the child, reading the
    /// terminal, is in front.
    fn front(&self, leader: i32, leader_comm: &str) -> Option<Front> {
        let mut pid = leader;
        let mut comm = leader_comm.to_owned();
        let mut chain = vec![process_id(pid, start_ticks(pid)?)];
        for _ in 0..MAX_DEPTH {
            if !self.shells.contains(&comm) {
                break;
            }
            let Some((child, started)) = newest_child_in_group(pid, leader) else {
                break;
            };
            pid = child;
            chain.push(process_id(pid, started));
            comm = comm_of(pid);
        }
        let mut handed_over_by = Vec::new();
        if let Some((child, started)) = newest_child_in_group(pid, leader) {
            let dir = PathBuf::from(format!("/proc/{child}"));
            let syscall = std::fs::read_to_string(dir.join("syscall")).unwrap_or_default();
            if self.reads_terminal(&dir, &syscall) {
                handed_over_by = names_of(pid, &comm);
                pid = child;
                chain.push(process_id(pid, started));
                comm = comm_of(pid);
            }
        }
        Some((chain, names_of(pid, &comm), handed_over_by))
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
        // Our pty, or `/dev/tty`: a process in front of our terminal has it
        // as its controlling terminal, which is what `/dev/tty` opens (a
        // password prompt, `getpass`, `sudo`, reads it so).
        let is_tty = |fd: u64| {
            std::fs::read_link(proc_dir.join("fd").join(fd.to_string()))
                .is_ok_and(|p| p == self.tty || p == std::path::Path::new("/dev/tty"))
        };
        match (nr, args.as_slice()) {
            (n, [fd, ..]) if n == libc::SYS_read || n == libc::SYS_readv => is_tty(*fd),
            // pselect6(nfds, ...): nfds 1 watches descriptor 0 alone.
            (n, [1, ..]) if n == libc::SYS_pselect6 => is_tty(0),
            // ppoll(fds, nfds, ...) on one descriptor: the terminal if
            // that descriptor is (a server polls its socket so).
            (n, [fds, 1]) if n == libc::SYS_ppoll => is_tty(polled_fd(proc_dir, *fds)),
            #[cfg(target_arch = "x86_64")]
            (n, [1, ..]) if n == libc::SYS_select => is_tty(0),
            #[cfg(target_arch = "x86_64")]
            (n, [fds, 1]) if n == libc::SYS_poll => is_tty(polled_fd(proc_dir, *fds)),
            _ => false,
        }
    }
}

/// The descriptor in the `struct pollfd` at `addr` of a process blocked in
/// `poll` on one descriptor, read from its memory (`/proc/PID/mem`: the
/// supervisor may read its own descendants'). Where the memory cannot be
/// read (a program that made itself undumpable), standard input is taken
/// for it, the usual case of a program polling one descriptor while it
/// waits for a key.
fn polled_fd(proc_dir: &std::path::Path, addr: u64) -> u64 {
    use std::os::unix::fs::FileExt;
    let mut fd = [0u8; 4];
    std::fs::File::open(proc_dir.join("mem"))
        .and_then(|mem| mem.read_exact_at(&mut fd, addr))
        // A negative descriptor is one poll skips: none of ours.
        .map_or(0, |()| {
            u64::try_from(i32::from_ne_bytes(fd)).unwrap_or(u64::MAX)
        })
}

/// The processes in front, the names of the last, and the names of the
/// program that handed it the terminal (empty if none did).
type Front = (Vec<ProcessId>, Vec<String>, Vec<String>);

/// A process's `comm`, or nothing.
fn comm_of(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|c| c.trim_end().to_owned())
        .unwrap_or_default()
}

/// The names process `pid` goes by: its `comm` and the file names of its
/// first two arguments that are not options.
fn names_of(pid: i32, comm: &str) -> Vec<String> {
    let mut names = vec![comm.to_owned()];
    if let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) {
        let args = cmdline
            .split(|&b| b == 0)
            .filter(|a| !a.is_empty() && !a.starts_with(b"-"))
            .take(2);
        for arg in args {
            let arg = String::from_utf8_lossy(arg);
            let base = arg.rsplit('/').next().unwrap_or_default();
            if !base.is_empty() && !names.iter().any(|n| n == base) {
                names.push(base.to_owned());
            }
        }
    }
    names
}

/// When process `pid` started (clock ticks since boot, `/proc/PID/stat`'s
/// 22nd field): with the pid, the identity of a process across pid reuse.
fn start_ticks(pid: i32) -> Option<u64> {
    stat_field(pid, 19).and_then(|t| u64::try_from(t).ok())
}

/// Process `pid`, which started at `started`, as it runs now.
fn process_id(pid: i32, started: u64) -> ProcessId {
    ProcessId {
        pid,
        started,
        image: image_of(pid),
    }
}

/// Where process `pid`'s stack starts (`startstack`): a new program image
/// after an `exec` gets a new one (see [`ProcessId`]).
fn image_of(pid: i32) -> u64 {
    stat_field(pid, 25)
        .and_then(|a| u64::try_from(a).ok())
        .unwrap_or(0)
}

/// Field `n` after the command name of `/proc/PID/stat` (0: the state,
/// 1: the parent, 2: the process group, 19: the start time). The name may
/// hold spaces and parentheses: the fields after it start after the last
/// `)`.
fn stat_field(pid: i32, n: usize) -> Option<i64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(n)?.parse().ok()
}

/// The process group of `pid`.
fn group_of(pid: i32) -> Option<i32> {
    stat_field(pid, 2).and_then(|g| i32::try_from(g).ok())
}

/// The child of `pid` in process group `group` that started last. A
/// shell is one thread, so its children are its main thread's; a kernel
/// without that list has the group's members in `/proc`, whose parent is
/// read from their `stat` instead.
fn newest_child_in_group(pid: i32, group: i32) -> Option<(i32, u64)> {
    let children: Vec<i32> =
        match std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")) {
            Ok(list) => list
                .split_whitespace()
                .filter_map(|c| c.parse().ok())
                .collect(),
            Err(_) => std::fs::read_dir("/proc")
                .ok()?
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
                .filter(|&c| stat_field(c, 1) == Some(i64::from(pid)))
                .collect(),
        };
    children
        .into_iter()
        .filter(|&c| group_of(c) == Some(group))
        .filter_map(|c| Some((start_ticks(c)?, c)))
        .max()
        .map(|(t, c)| (c, t))
}
