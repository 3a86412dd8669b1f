//! Opening a pty and starting the child in it; with `fd.rs`, the only unsafe code.
//!
//! [`spawn`] forks, so it must run while the process is single-threaded,
//! before any async runtime or logging thread exists. Everything that can
//! fail or allocate is prepared by `std::process::Command` before the fork;
//! the child runs only async-signal-safe syscalls (`setsid`, `ioctl`,
//! `close_range`) before `execvp`, and an exec failure is reported back to
//! the parent through std's close-on-exec error pipe.
#![allow(unsafe_code)]

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use nix::fcntl::{FcntlArg, FdFlag, OFlag, fcntl};
use nix::pty::{Winsize, openpty};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::protocol::Size;

mod memory;

pub use memory::release_free_memory;

/// What to run and how.
#[derive(Debug, Clone)]
pub struct SpawnSpec {
    pub program: OsString,
    pub args: Vec<OsString>,
    /// Added to (or replacing in) the inherited environment.
    pub env: Vec<(OsString, OsString)>,
    pub workdir: PathBuf,
    pub size: Size,
}

/// A running child and both ends of its pty.
#[derive(Debug)]
pub struct Spawned {
    /// Non-blocking, close-on-exec; the supervisor reads output and writes
    /// input here.
    pub master: OwnedFd,
    /// Kept open by the supervisor until the child is reaped, so output the
    /// child wrote just before exiting stays readable and a child that
    /// closes its own pty fds does not make the master report EIO early.
    pub slave: OwnedFd,
    pub pid: Pid,
}

#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("cannot open a pty: {0}")]
    Openpty(nix::Error),
    #[error("cannot run '{program}': {reason}")]
    Exec {
        program: String,
        reason: String,
        errno: i32,
    },
}

impl SpawnError {
    /// The shell's convention: 127 when the command is not found, 126 when
    /// it exists but cannot be executed.
    pub fn exit_code(&self) -> i32 {
        match self {
            SpawnError::Exec { errno, .. } if *errno == libc::ENOENT => 127,
            SpawnError::Exec { .. } => 126,
            SpawnError::Openpty(_) => 1,
        }
    }
}

fn winsize(size: Size) -> Winsize {
    Winsize {
        ws_row: size.rows,
        ws_col: size.cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    }
}

fn set_cloexec(fd: &OwnedFd) -> nix::Result<()> {
    fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC)).map(drop)
}

/// Opens a pty of `spec.size` and starts the command in it as the leader of
/// a new session whose controlling terminal is the pty.
///
/// Must be called while the process has exactly one thread.
pub fn spawn(spec: &SpawnSpec) -> Result<Spawned, SpawnError> {
    // With SIGCHLD ignored, which survives exec (a parent's choice, made
    // for its own children), the kernel reaps ours at once and its exit
    // code is lost to waitpid. The runtime's handler comes later, after a
    // short command may have ended already.
    // SAFETY: one thread (see above); SIG_DFL installs no handler.
    unsafe {
        let _ = nix::sys::signal::signal(
            nix::sys::signal::Signal::SIGCHLD,
            nix::sys::signal::SigHandler::SigDfl,
        );
    }
    let pty = openpty(Some(&winsize(spec.size)), None).map_err(SpawnError::Openpty)?;
    set_cloexec(&pty.master).map_err(SpawnError::Openpty)?;
    set_cloexec(&pty.slave).map_err(SpawnError::Openpty)?;
    let dup = |fd: &OwnedFd| -> Result<Stdio, SpawnError> {
        fd.try_clone()
            .map(Stdio::from)
            .map_err(|e| SpawnError::Openpty(nix::Error::from_raw(e.raw_os_error().unwrap_or(0))))
    };

    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&spec.workdir)
        .stdin(dup(&pty.slave)?)
        .stdout(dup(&pty.slave)?)
        .stderr(dup(&pty.slave)?);
    // SAFETY: the closure runs in the forked child before exec and calls
    // only async-signal-safe syscalls; it touches no memory shared with the
    // parent and does not allocate.
    unsafe {
        cmd.pre_exec(|| {
            // A new session makes the child's pid its process group id, so
            // signals to -pid reach the whole tree it starts.
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            // stdin is the pty slave by now: make it the controlling tty.
            if libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                return Err(io::Error::last_os_error());
            }
            // An ignored signal stays ignored across exec. Whoever started
            // the supervisor must not decide that for the session: a
            // script's `hm run --detach ... &` runs with SIGINT and SIGQUIT
            // ignored, and Ctrl-C would do nothing in the program. (The
            // supervisor has no handlers yet: the fork precedes its runtime.)
            // The system call, not libc's `signal`, because libc refuses
            // the signals it keeps for itself (32 and 33 in glibc), which
            // a parent may have left ignored too. An all-zero kernel
            // `sigaction` is SIG_DFL with no flags, and 8 bytes is the
            // kernel's signal set on x86_64 and aarch64; where it is not
            // (MIPS), the call fails and changes nothing.
            let default = [0u64; 4];
            for sig in 1..=64 {
                if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                    libc::syscall(
                        libc::SYS_rt_sigaction,
                        sig,
                        default.as_ptr(),
                        std::ptr::null_mut::<u64>(),
                        8usize,
                    );
                }
            }
            // Nor may it leave signals blocked: the mask is inherited too,
            // and a program whose SIGINT is blocked ignores Ctrl-C.
            let none = [0u64; 1];
            libc::syscall(
                libc::SYS_rt_sigprocmask,
                libc::SIG_SETMASK,
                none.as_ptr(),
                std::ptr::null_mut::<u64>(),
                8usize,
            );
            // Descriptors inherited from whoever started the supervisor are
            // none of the child's business. Marking them close-on-exec
            // (rather than closing them) keeps std's exec-error pipe working.
            // Failure (old kernels) is harmless, so it is ignored.
            libc::syscall(
                libc::SYS_close_range,
                3u32,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            );
            Ok(())
        });
    }
    let child = cmd.spawn().map_err(|e| {
        let errno = e.raw_os_error().unwrap_or(0);
        SpawnError::Exec {
            program: spec.program.to_string_lossy().into_owned(),
            reason: nix::errno::Errno::from_raw(errno).desc().to_string(),
            errno,
        }
    })?;
    // The pid is the child's process group id too; it is reaped with
    // waitpid by the supervisor, never through `child`.
    let pid = Pid::from_raw(child.id() as i32);
    drop(child);

    let flags = fcntl(&pty.master, FcntlArg::F_GETFL).map_err(SpawnError::Openpty)?;
    fcntl(
        &pty.master,
        FcntlArg::F_SETFL(OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK),
    )
    .map_err(SpawnError::Openpty)?;
    Ok(Spawned {
        master: pty.master,
        slave: pty.slave,
        pid,
    })
}

/// Tells the pty (and so the foreground process group, via SIGWINCH) the
/// new window size.
pub fn resize(master: &impl AsRawFd, size: Size) -> io::Result<()> {
    let ws = winsize(size);
    // SAFETY: TIOCSWINSZ reads one `winsize` from the pointer, which points
    // at a live local value of exactly that type.
    let rc = unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ, &ws) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Sends `sig` to the child's process group (or only to the child).
///
/// Only ever called with the pid of a child that has not been reaped yet,
/// so the pid (and the group id equal to it) cannot have been reused.
pub fn signal(pid: Pid, whole_group: bool, sig: Signal) -> nix::Result<()> {
    // A pid of 0 or 1 would mean "our own group" or "everything"; a child's
    // pid is never either, but the check keeps a bug from becoming a
    // catastrophe.
    if pid.as_raw() <= 1 {
        return Err(nix::Error::EINVAL);
    }
    let target = if whole_group {
        Pid::from_raw(-pid.as_raw())
    } else {
        pid
    };
    kill(target, sig)
}

/// Sends `sig` to every process group of `leader`'s session: its own, and
/// the ones a job-control shell makes for its jobs. `leader` must be a
/// child not yet reaped: then no other session can have its id, so every
/// group found belongs to the program. (A group that ends between the
/// scan and the signal could in principle have its id reused; pids are
/// not recycled that fast in practice.)
pub fn signal_session(leader: Pid, sig: Signal) -> nix::Result<()> {
    // The same guard as `signal`, before the scan: session 0 or 1 holds
    // processes that are none of ours.
    if leader.as_raw() <= 1 {
        return Err(nix::Error::EINVAL);
    }
    let result = signal(leader, true, sig);
    for group in session_groups(leader) {
        if group != leader && group.as_raw() > 1 {
            let _ = kill(Pid::from_raw(-group.as_raw()), sig);
        }
    }
    result
}

/// The process groups with a member in session `sid`, from `/proc`.
fn session_groups(sid: Pid) -> Vec<Pid> {
    let mut groups = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return groups;
    };
    for entry in dir.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // "pid (comm) state ppid pgrp session ...": comm may hold spaces
        // and parentheses, so fields are counted from the last ')'.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let mut fields = rest.split_whitespace().skip(2);
        let (Some(pgrp), Some(session)) = (fields.next(), fields.next()) else {
            continue;
        };
        if session.parse::<i32>() == Ok(sid.as_raw())
            && let Ok(g) = pgrp.parse::<i32>()
        {
            let g = Pid::from_raw(g);
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
    }
    groups
}

/// Makes a command start in a new session, detached from our terminal, so
/// that closing the terminal (SIGHUP to its session) spares it.
pub fn new_session_on_spawn(cmd: &mut Command) {
    // SAFETY: setsid is async-signal-safe and touches no shared memory.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// The window size of a terminal (or pty) file descriptor.
pub fn window_size(fd: std::os::fd::BorrowedFd<'_>) -> io::Result<Size> {
    let mut ws = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` through the pointer, which
    // points at a live local value of exactly that type.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCGWINSZ, &mut ws) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Size {
        cols: ws.ws_col,
        rows: ws.ws_row,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// 0, 1 and negative pids mean "our group", "everyone" or a
        /// group: never signalled, whatever the signal or the mode. (The
        /// signal is SIGCONT, harmless should the guard ever fail.)
        #[test]
        fn pids_of_one_or_less_are_never_signalled(pid in i32::MIN..=1, group in any::<bool>()) {
            let pid = Pid::from_raw(pid);
            prop_assert_eq!(signal(pid, group, Signal::SIGCONT), Err(nix::Error::EINVAL));
            prop_assert_eq!(signal_session(pid, Signal::SIGCONT), Err(nix::Error::EINVAL));
        }
    }
}
