//! Descriptors on the async runtime: registering one for the readiness
//! it needs, reading what is there, and waiting for room to write. Shared
//! by the supervisor (pty master, client sockets) and every client (their
//! socket, the user's terminal).
//!
//! Registering is the one `unsafe` call here: tokio cannot check that the
//! descriptor outlives its registration, so the caller must (see SAFETY).
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::OnceLock;

use nix::sys::resource::{Resource, getrlimit, setrlimit};

/// Most descriptors a process of ours asks for: past the thousands of
/// sessions a dashboard may hold, and small enough that the kernel's
/// descriptor table stays small.
const LIMIT_WANTED: u64 = 65536;

/// The limit on open descriptors (soft, hard) this process started with,
/// before [`raise_limit`]: what the programs of the sessions it starts
/// must get.
static STARTED_WITH: OnceLock<(u64, u64)> = OnceLock::new();

/// Raises the soft limit on open descriptors to the hard one. A dashboard
/// or `hm ls` holds one per session and a supervisor one per client, and
/// the soft limit is often 1024 where the hard one is far higher.
pub fn raise_limit() {
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return;
    };
    let _ = STARTED_WITH.set((soft, hard));
    if soft < hard {
        let _ = setrlimit(
            Resource::RLIMIT_NOFILE,
            hard.min(LIMIT_WANTED).max(soft),
            hard,
        );
    }
}

/// The soft limit on open descriptors now, if the system says.
pub fn soft_limit() -> Option<u64> {
    getrlimit(Resource::RLIMIT_NOFILE)
        .ok()
        .map(|(soft, _)| soft)
}

/// Gives the process `cmd` starts the limit this one started with, not the
/// raised one: the supervisor raises its own again after forking the
/// session's program, which keeps the user's limit (a program using
/// `select` breaks on descriptors past 1024).
pub fn keep_user_limit_on_spawn(cmd: &mut Command) {
    let Some(&(soft, hard)) = STARTED_WITH.get() else {
        return;
    };
    let limit = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: setrlimit is async-signal-safe, and the closure only reads
    // its own copy of the limit.
    unsafe {
        cmd.pre_exec(move || {
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
            Ok(())
        });
    }
}

/// Registers a descriptor we own (alone, or shared through an `Arc`) for
/// `interest` only: a terminal that is written after every wake-up must
/// not be watched for writability while nothing waits for it, or each
/// write's completion is one more wake-up.
pub fn register<T: AsRawFd>(
    fd: T,
    interest: tokio::io::Interest,
) -> io::Result<tokio::io::unix::AsyncFd<T>> {
    // SAFETY: the owner of the descriptor is moved into the `AsyncFd`, so
    // the descriptor stays open and refers to the same file until the
    // `AsyncFd` drops it (an `Arc` keeps it open at least that long).
    unsafe { tokio::io::unix::AsyncFd::register_with_interest(fd, interest) }
        .map_err(io::Error::from)
}

/// The next connection waiting on a non-blocking listening socket, itself
/// non-blocking and closed on exec (`accept4`, one system call).
pub fn accept(listener: &impl AsRawFd) -> io::Result<OwnedFd> {
    use nix::sys::socket::{SockFlag, accept4};
    let fd = accept4(
        listener.as_raw_fd(),
        SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC,
    )?;
    // SAFETY: `accept4` returned a new descriptor that nothing else owns.
    Ok(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) })
}

/// A duplicate of `fd` watched for room to write only: for a write that
/// found `fd` full, waited on with [`room`] and dropped once nothing more
/// is owed. The descriptor itself stays watched for reading only.
pub fn watch_room(fd: &impl AsFd) -> io::Result<tokio::io::unix::AsyncFd<OwnedFd>> {
    register(
        fd.as_fd().try_clone_to_owned()?,
        tokio::io::Interest::WRITABLE,
    )
}

/// Whether the peer of a socket has closed its end entirely (POLLHUP, or
/// POLLERR for a broken connection), rather than only its sending side:
/// then nothing sent can be read any more. For a socket whose end of input
/// has been seen, where no new read edge will come: the room watched with
/// [`watch_room`] ends when the peer goes, and this tells which it was.
pub fn hung_up(fd: impl AsFd) -> bool {
    let mut fds = [nix::poll::PollFd::new(
        fd.as_fd(),
        nix::poll::PollFlags::POLLOUT,
    )];
    nix::poll::poll(&mut fds, nix::poll::PollTimeout::ZERO).is_ok()
        && fds[0].revents().is_some_and(|r| {
            r.intersects(nix::poll::PollFlags::POLLHUP | nix::poll::PollFlags::POLLERR)
        })
}

/// Reads what is there, up to `buf`'s length; 0 at end of file. A short
/// read took everything there was, so readiness is cleared without a
/// second read just to see EAGAIN (data arriving later raises a new edge,
/// which this does not clear). Cancel-safe: nothing is read until ready.
pub async fn read_some<T: AsRawFd + AsFd>(
    fd: &tokio::io::unix::AsyncFd<T>,
    buf: &mut [u8],
) -> io::Result<usize> {
    loop {
        let mut ready = fd.readable().await?;
        match ready.try_io(|fd| nix::unistd::read(fd.get_ref(), buf).map_err(io::Error::from)) {
            Ok(Ok(n)) => {
                if n > 0 && n < buf.len() {
                    ready.clear_ready();
                }
                return Ok(n);
            }
            Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
            Ok(Err(e)) => return Err(e),
            Err(_would_block) => {}
        }
    }
}

/// Writes what a non-blocking descriptor takes now, gathered from `iov`;
/// 0 when it is full.
pub fn write_some(fd: impl AsFd, iov: &[std::io::IoSlice<'_>]) -> io::Result<usize> {
    taken(|| nix::sys::uio::writev(fd.as_fd(), iov))
}

/// Writes what a non-blocking descriptor takes now of `buf`; 0 when it is
/// full. `buf` is not empty (an empty write also takes 0).
pub fn write_now(fd: impl AsFd, buf: &[u8]) -> io::Result<usize> {
    taken(|| nix::unistd::write(fd.as_fd(), buf))
}

/// How much a write took: it is made again when a signal cut it short, and
/// a full descriptor took nothing, which is not an error.
fn taken(mut write: impl FnMut() -> nix::Result<usize>) -> io::Result<usize> {
    loop {
        match write() {
            Ok(n) => return Ok(n),
            Err(nix::Error::EINTR) => {}
            Err(nix::Error::EAGAIN) => return Ok(0),
            Err(e) => return Err(e.into()),
        }
    }
}

/// Waits until a descriptor watched for room (registered for
/// [`tokio::io::Interest::WRITABLE`] only while a write is blocked) has
/// some; `None`, not watched, never does. The readiness is used up here,
/// before the write it allows: if that write still finds no room, the next
/// wait sleeps until room is made again, which raises a new edge.
pub async fn room(fd: Option<&tokio::io::unix::AsyncFd<OwnedFd>>) -> io::Result<()> {
    match fd {
        Some(fd) => {
            fd.writable().await?.clear_ready();
            Ok(())
        }
        None => std::future::pending().await,
    }
}
