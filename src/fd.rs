//! Descriptors on the async runtime: registering one for the readiness
//! it needs, reading what is there, and waiting for room to write. Shared
//! by the supervisor (pty master, client sockets) and every client (their
//! socket, the user's terminal).
//!
//! Registering is the one `unsafe` call here: tokio cannot check that the
//! descriptor outlives its registration, so the caller must (see SAFETY).
#![allow(unsafe_code)]

use std::io;
use std::os::fd::OwnedFd;

/// Registers a descriptor we own for `interest` only: a terminal that is
/// written after every wake-up must not be watched for writability while
/// nothing waits for it, or each write's completion is one more wake-up.
pub fn register(
    fd: OwnedFd,
    interest: tokio::io::Interest,
) -> io::Result<tokio::io::unix::AsyncFd<OwnedFd>> {
    // SAFETY: the `OwnedFd` is moved into the `AsyncFd`, so the descriptor
    // stays open and refers to the same file until the `AsyncFd` drops it.
    unsafe { tokio::io::unix::AsyncFd::register_with_interest(fd, interest) }
        .map_err(io::Error::from)
}

/// A duplicate of `fd` watched for room to write only: for a write that
/// found `fd` full, waited on with [`room`] and dropped once nothing more
/// is owed. The descriptor itself stays watched for reading only.
pub fn watch_room(fd: &OwnedFd) -> io::Result<tokio::io::unix::AsyncFd<OwnedFd>> {
    register(fd.try_clone()?, tokio::io::Interest::WRITABLE)
}

/// Reads what is there, up to `buf`'s length; 0 at end of file. A short
/// read took everything there was, so readiness is cleared without a
/// second read just to see EAGAIN (data arriving later raises a new edge,
/// which this does not clear). Cancel-safe: nothing is read until ready.
pub async fn read_some(
    fd: &tokio::io::unix::AsyncFd<OwnedFd>,
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
