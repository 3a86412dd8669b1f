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
    /// While held (see [`ProcessProbe::hold`]), the facts read first.
    held: std::cell::RefCell<Option<Option<ProcessFacts>>>,
    /// The facts last read from `/proc`, and when (see
    /// [`ProcessProbe::recent_facts`]).
    last: std::cell::RefCell<Option<(crate::clock::Instant, Option<ProcessFacts>)>>,
    /// The names of the processes named at the last reading (see
    /// [`ProcessProbe::names_of`]).
    names: std::cell::RefCell<Vec<Named>>,
}

/// A process's names as read from its `cmdline`, kept while it runs the
/// same program under the same command name.
#[derive(Debug, Clone)]
struct Named {
    id: ProcessId,
    comm: String,
    names: Vec<String>,
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
            held: std::cell::RefCell::new(None),
            last: std::cell::RefCell::new(None),
            names: std::cell::RefCell::new(Vec::new()),
        })
    }

    /// Answers one instant's questions with one reading: from `hold(true)`
    /// until `hold(false)`, [`facts`](Self::facts) reads `/proc` once and
    /// gives the same facts after (`hm ls` sends INFO and STATUS together,
    /// each asking for the state).
    pub fn hold(&self, on: bool) {
        *self.held.borrow_mut() = None;
        if on {
            *self.held.borrow_mut() = Some(None);
        }
    }

    /// The facts now, or `None` if they cannot be read.
    pub fn facts(&self) -> Option<ProcessFacts> {
        let mut held = self.held.borrow_mut();
        match held.as_mut() {
            None => self.read_and_keep(),
            Some(Some(facts)) => Some(facts.clone()),
            Some(slot) => {
                let facts = self.read_and_keep();
                slot.clone_from(&facts);
                facts
            }
        }
    }

    /// The facts last read if they are at most `age` old, else the facts
    /// now: for a look at the state that may lag the processes a little
    /// (see `Shared::facts_may_lag`).
    pub fn recent_facts(&self, age: std::time::Duration) -> Option<ProcessFacts> {
        if let Some((at, facts)) = &*self.last.borrow()
            && at.elapsed() <= age
        {
            return facts.clone();
        }
        self.facts()
    }

    fn read_and_keep(&self) -> Option<ProcessFacts> {
        let facts = self.read_facts();
        *self.last.borrow_mut() = Some((crate::clock::Instant::now(), facts.clone()));
        facts
    }

    fn read_facts(&self) -> Option<ProcessFacts> {
        let fg = nix::unistd::tcgetpgrp(self.master.as_fd()).ok()?;
        let proc_dir = PathBuf::from(format!("/proc/{}", fg.as_raw()));
        let leader = Stat::of(fg.as_raw());
        let command = leader.as_ref().map_or_else(String::new, |s| s.comm.clone());
        let canonical = nix::sys::termios::tcgetattr(self.master.as_fd()).is_ok_and(|t| {
            t.local_flags
                .contains(nix::sys::termios::LocalFlags::ICANON)
        });
        let mut named = Vec::new();
        let (front, foreground_names, handed_over_by) = leader
            .map(|stat| self.front(fg.as_raw(), stat, &mut named))
            .unwrap_or_default();
        *self.names.borrow_mut() = named;
        // Whether the process in front reads: a shell running a job waits
        // for it, the job is what may read (`sh -c 'python3 ask.py'`).
        let proc_dir = front
            .last()
            .map_or(proc_dir, |p| PathBuf::from(format!("/proc/{}", p.pid)));
        let syscall = read_proc(&proc_dir.join("syscall")).unwrap_or_default();
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
    fn front(&self, leader: i32, leader_stat: Stat, named: &mut Vec<Named>) -> Front {
        let mut pid = leader;
        let mut chain = vec![process_id(pid, &leader_stat)];
        let mut stat = leader_stat;
        for _ in 0..MAX_DEPTH {
            if !self.shells.contains(&stat.comm) {
                break;
            }
            let Some((child, child_stat)) = newest_child_in_group(pid, leader) else {
                break;
            };
            pid = child;
            chain.push(process_id(pid, &child_stat));
            stat = child_stat;
        }
        let mut handed_over_by = Vec::new();
        if let Some((child, child_stat)) = newest_child_in_group(pid, leader) {
            let dir = PathBuf::from(format!("/proc/{child}"));
            let syscall = read_proc(&dir.join("syscall")).unwrap_or_default();
            if self.reads_terminal(&dir, &syscall) {
                handed_over_by = self.names_of(pid, &stat, named);
                pid = child;
                chain.push(process_id(pid, &child_stat));
                stat = child_stat;
            }
        }
        let names = self.names_of(pid, &stat, named);
        (chain, names, handed_over_by)
    }

    /// The names process `pid` goes by: its `comm` and the file names of
    /// its first two arguments that are not options. Its `cmdline` is
    /// read again only once it runs another program or renames itself
    /// (a Node program setting its title does both): at rest the names
    /// were read anew for every STATUS, one file of the five an `hm ls`
    /// costs each session. Those named this time are kept in `named`.
    fn names_of(&self, pid: i32, stat: &Stat, named: &mut Vec<Named>) -> Vec<String> {
        let id = process_id(pid, stat);
        let kept = self
            .names
            .borrow()
            .iter()
            .find(|n| n.id == id && n.comm == stat.comm)
            .map(|n| n.names.clone());
        let names = kept.unwrap_or_else(|| names_of(pid, &stat.comm));
        named.push(Named {
            id,
            comm: stat.comm.clone(),
            names: names.clone(),
        });
        names
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

/// A small file of `/proc`, whole, as text: one `open`, one `read` (these
/// files are made whole at the first read, so a read short of the buffer
/// is the end), one `close`. `std::fs::read_to_string` asks for the size
/// first and then reads in growing steps, six system calls more for a
/// `stat`: a supervisor reads half a dozen such files for every STATUS.
fn read_proc(path: &std::path::Path) -> Option<String> {
    String::from_utf8(read_proc_bytes(path)?).ok()
}

/// [`read_proc`], as bytes.
fn read_proc_bytes(path: &std::path::Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).ok()?;
    let mut buf = vec![0u8; 1024];
    let mut len = 0;
    loop {
        let n = file.read(&mut buf[len..]).ok()?;
        len += n;
        if n == 0 || len < buf.len() {
            break;
        }
        buf.resize(buf.len() * 2, 0);
    }
    buf.truncate(len);
    Some(buf)
}

/// The names process `pid` goes by: its `comm` and the file names of its
/// first two arguments that are not options.
fn names_of(pid: i32, comm: &str) -> Vec<String> {
    let mut names = vec![comm.to_owned()];
    let cmdline = read_proc_bytes(std::path::Path::new(&format!("/proc/{pid}/cmdline")));
    if let Some(cmdline) = cmdline {
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

/// What is read of a process's `/proc/PID/stat`, in one read.
#[derive(Debug, Clone)]
struct Stat {
    /// Its command name, as `/proc/PID/comm` has it.
    comm: String,
    parent: i32,
    group: i32,
    /// When it started (clock ticks since boot): with the pid, the
    /// identity of a process across pid reuse.
    started: u64,
    /// Where its stack starts: a new program image after an `exec` gets a
    /// new one (see [`ProcessId`]).
    stack: u64,
}

impl Stat {
    /// `None` if the process is gone or its parent, group or start time
    /// cannot be read; a missing stack start reads as 0.
    fn of(pid: i32) -> Option<Stat> {
        let text = read_proc(std::path::Path::new(&format!("/proc/{pid}/stat")))?;
        let stat = crate::proc_stat::Stat::parse(&text)?;
        Some(Stat {
            comm: crate::proc_stat::command_name(&text)?.to_owned(),
            parent: stat.parent?,
            group: stat.group?,
            started: stat.started?,
            stack: stat.stack.unwrap_or(0),
        })
    }
}

/// Process `pid` as it runs now, from its `stat`.
fn process_id(pid: i32, stat: &Stat) -> ProcessId {
    ProcessId {
        pid,
        started: stat.started,
        image: stat.stack,
    }
}

/// The child of `pid` in process group `group` that started last. A
/// shell is one thread, so its children are its main thread's; a kernel
/// without that list has the group's members in `/proc`, whose parent is
/// read from their `stat` instead.
fn newest_child_in_group(pid: i32, group: i32) -> Option<(i32, Stat)> {
    let children: Vec<(i32, Stat)> = match read_proc(std::path::Path::new(&format!(
        "/proc/{pid}/task/{pid}/children"
    ))) {
        Some(list) => list
            .split_whitespace()
            .filter_map(|c| c.parse().ok())
            .filter_map(|c| Some((c, Stat::of(c)?)))
            .collect(),
        None => std::fs::read_dir("/proc")
            .ok()?
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .filter_map(|c| Some((c, Stat::of(c)?)))
            .filter(|(_, stat)| stat.parent == pid)
            .collect(),
    };
    children
        .into_iter()
        .filter(|(_, stat)| stat.group == group)
        .max_by_key(|(c, stat)| (stat.started, *c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Waits for `what` to hold, at most five seconds.
    fn eventually(what: &str, mut ok: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !ok() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn recent_facts_are_the_last_read_until_too_old() {
        let spawned = crate::pty::spawn(&crate::pty::SpawnSpec {
            program: "sh".into(),
            args: vec!["-c".into(), "read answer; exec sleep 30".into()],
            env: Vec::new(),
            workdir: "/".into(),
            size: crate::protocol::Size { cols: 80, rows: 24 },
        })
        .expect("spawn sh in a pty");
        let shells = vec!["sh".to_string()];
        let probe = ProcessProbe::new(&spawned.master, &spawned.slave, spawned.pid, shells.clone())
            .expect("a probe");
        // Another probe looks at the processes without touching the
        // first one's last reading.
        let fresh = ProcessProbe::new(&spawned.master, &spawned.slave, spawned.pid, shells)
            .expect("a second probe");
        eventually("sh to read its terminal", || {
            probe.facts().is_some_and(|f| f.reading_terminal)
        });
        nix::unistd::write(&spawned.master, b"yes\n").expect("answer");
        eventually("sleep in place of the read", || {
            fresh.facts().is_some_and(|f| !f.reading_terminal)
        });
        let lagging = probe.recent_facts(Duration::from_secs(3600));
        assert!(
            lagging.is_some_and(|f| f.reading_terminal),
            "the last reading, kept"
        );
        let now = probe.recent_facts(Duration::ZERO);
        assert!(
            now.is_some_and(|f| !f.reading_terminal),
            "read anew when too old"
        );
        let _ = nix::sys::signal::kill(spawned.pid, nix::sys::signal::Signal::SIGKILL);
        let _ = nix::sys::wait::waitpid(spawned.pid, None);
    }
}
