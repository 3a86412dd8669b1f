//! Whether a session's supervisor is alive, as every client asks it: by
//! trying the lock its pid file is held under for the supervisor's whole
//! life (`supervisor::pidfile` takes it). The lock is the only source of
//! truth; the pids in the file are read only to recognise a program that
//! outlived its killed supervisor, by an identity a reused pid cannot
//! share.

use std::fs::{self, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use nix::fcntl::{Flock, FlockArg};

use crate::proc_stat::Stat;

/// What a pid file says about its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// A supervisor holds the lock.
    Running,
    /// Nobody holds the lock: the supervisor died without cleaning up.
    Stale,
    /// Nobody holds the lock, but the program it supervised still runs
    /// (it ignored the hang-up its supervisor's death sent): this pid.
    Orphaned(u32),
    /// There is no pid file.
    Missing,
}

/// Ids with a live supervisor (their pid file's lock is held), and ids
/// whose program outlived its supervisor.
pub fn scan(dir: &Path) -> (Vec<String>, Vec<String>) {
    let (mut live, mut orphans) = (Vec::new(), Vec::new());
    for id in crate::paths::list_ids(dir).unwrap_or_default() {
        let Ok(p) = crate::paths::SessionPaths::new(dir, &id) else {
            continue;
        };
        match probe(&p.pid, &p.sock, false) {
            Liveness::Running => live.push(id),
            Liveness::Orphaned(_) => orphans.push(id),
            Liveness::Stale | Liveness::Missing => {}
        }
    }
    (live, orphans)
}

/// Whether a supervisor, or a program that outlived one, holds session
/// `id` of socket dir `dir`.
pub fn held(dir: &Path, id: &str) -> bool {
    crate::paths::SessionPaths::new(dir, id).is_ok_and(|s| {
        matches!(
            probe(&s.pid, &s.sock, false),
            Liveness::Running | Liveness::Orphaned(_)
        )
    })
}

/// Probes a session by trying its lock. A stale session's `.pid` and
/// `.sock` are removed while the lock is held (see [`PidFile::acquire`] for
/// why that cannot hurt a supervisor starting at the same moment); an
/// orphaned one keeps its `.pid`, the only record of the program, until
/// the program is gone.
pub fn probe(pid_path: &Path, sock_path: &Path, clean_stale: bool) -> Liveness {
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(pid_path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Liveness::Missing,
        // Out of descriptors or memory: this process cannot look, which
        // says nothing of the session. Taken as running, it is neither
        // cleaned up nor shown as gone; the connection that follows fails
        // with the real reason, and is retried.
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EMFILE | libc::ENFILE | libc::ENOMEM | libc::EINTR)
            ) =>
        {
            return Liveness::Running;
        }
        // Unreadable or a symlink: not ours to judge, treat as not running.
        Err(_) => return Liveness::Stale,
    };
    // Shared: a supervisor holds the lock alone for its life, and probes
    // of the same session at the same moment (four followers of a killed
    // supervisor, `hm ls` beside the dashboard) must not take each other
    // for one. Taken alone, one probe's lock made the other read
    // "running" a session that was lost.
    match Flock::lock(file, FlockArg::LockSharedNonblock) {
        Ok(mut lock) => {
            let mut contents = String::new();
            let _ = (&mut *lock).take(256).read_to_string(&mut contents);
            let state = survivor(&contents).map_or(Liveness::Stale, Liveness::Orphaned);
            // Cleaning up takes the lock alone, so no supervisor starts
            // on the files as they go; a probe beside this one keeps them
            // for the next to clean.
            if clean_stale && lock.relock(FlockArg::LockExclusiveNonblock).is_ok() {
                let _ = fs::remove_file(sock_path);
                if state == Liveness::Stale {
                    let _ = fs::remove_file(pid_path);
                }
            }
            drop(lock);
            state
        }
        Err(_) => Liveness::Running,
    }
}

/// Who process `pid` is, beyond its pid: the boot it runs in and its start
/// time in clock ticks since that boot. `None` if it is gone or a zombie.
pub(crate) fn identity(pid: u32) -> Option<String> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let stat = Stat::parse(&stat)?;
    if matches!(stat.state, 'Z' | 'X' | 'x') {
        return None;
    }
    // PF_EXITING in the flags marks a process already on its way out (its
    // SIGKILL no longer pending).
    const PF_EXITING: u64 = 0x4;
    if stat.flags? & PF_EXITING != 0 {
        return None;
    }
    let start = stat.started?;
    if dying(pid) {
        return None;
    }
    // Without a boot id (some sandboxes hide it) the start time alone still
    // tells a reused pid apart within this boot.
    let boot = fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .unwrap_or_else(|_| "no-boot-id".into());
    Some(format!("{} {start}", boot.trim()))
}

/// Whether process `pid` has been dealt a fatal signal and not yet exited:
/// one pending that it neither ignores nor catches, and whose default is to
/// end it. That is how a program hung up by its supervisor's death looks
/// in the moment before it ends (SIGHUP pending; the kernel also queues
/// SIGKILL to a process it has begun to kill).
pub(crate) fn dying(pid: u32) -> bool {
    // The signals whose default action is not to end the process.
    const SURVIVABLE: [libc::c_int; 8] = [
        libc::SIGCHLD,
        libc::SIGCONT,
        libc::SIGSTOP,
        libc::SIGTSTP,
        libc::SIGTTIN,
        libc::SIGTTOU,
        libc::SIGURG,
        libc::SIGWINCH,
    ];
    let Ok(status) = fs::read_to_string(format!("/proc/{pid}/status")) else {
        return true;
    };
    let mask = |field: &str| {
        status
            .lines()
            .filter_map(|l| l.strip_prefix(field))
            .filter_map(|m| u64::from_str_radix(m.trim(), 16).ok())
            .fold(0, |a, m| a | m)
    };
    let pending = mask("SigPnd:") | mask("ShdPnd:");
    // Blocked ones included: a program that blocks a signal (to read it
    // from a signalfd, say) lives on with it pending.
    let handled = mask("SigIgn:") | mask("SigCgt:") | mask("SigBlk:");
    let survivable = SURVIVABLE.iter().fold(0u64, |a, &s| a | 1 << (s - 1));
    // Real-time signals (32 and up) end a process by default too.
    pending & !handled & !survivable != 0
}

/// The program a stale pid file names, if that very process still runs.
fn survivor(contents: &str) -> Option<u32> {
    let mut lines = contents.lines().skip(1);
    let pid: u32 = lines.next()?.trim().parse().ok()?;
    let recorded = lines.next()?.trim();
    (!recorded.is_empty() && identity(pid).as_deref() == Some(recorded)).then_some(pid)
}
