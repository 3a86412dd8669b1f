//! The least a relay can add to an echo on this machine: a process that
//! sits where the supervisor sits (client ↔ Unix socket ↔ relay ↔ pty ↔
//! program) and does nothing but `poll`, `read` and `write`, with no
//! framing, no runtime and no scrollback. Its excess over the raw pty is
//! the price of the two extra process hand-offs themselves, which no relay
//! can go below; `hm`'s excess over it is what `hm` adds on top.

use std::ffi::OsString;
use std::os::fd::AsFd;
use std::os::unix::net::UnixListener;

use heimdall::protocol::Size;
use heimdall::pty::SpawnSpec;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use crate::peers;

/// Runs the relay: listens on `args[0]`, starts the program `args[1..]` in
/// a pty of its own, then relays between the first connection and that
/// pty until either side ends.
pub fn serve(args: &[String]) -> ! {
    let listener = UnixListener::bind(&args[0]).expect("relay: bind");
    let spawned = heimdall::pty::spawn(&SpawnSpec {
        program: args[1].clone().into(),
        args: args[2..].iter().map(OsString::from).collect(),
        env: vec![("TERM".into(), "xterm-256color".into())],
        workdir: "/".into(),
        size: Size { cols: 80, rows: 24 },
    })
    .expect("relay: spawn");
    drop(spawned.slave);
    let (conn, _) = listener.accept().expect("relay: accept");
    let master = spawned.master;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let mut fds = [
            PollFd::new(conn.as_fd(), PollFlags::POLLIN),
            PollFd::new(master.as_fd(), PollFlags::POLLIN),
        ];
        if poll(&mut fds, PollTimeout::NONE).is_err() {
            continue;
        }
        let ready = |i: usize| fds[i].revents().is_some_and(|r| !r.is_empty());
        let (from_client, from_pty) = (ready(0), ready(1));
        if from_client {
            match nix::unistd::read(conn.as_fd(), &mut buf) {
                Ok(0) | Err(nix::Error::EIO) => break,
                Ok(n) => peers::write_all(master.as_fd(), &buf[..n]),
                Err(_) => {}
            }
        }
        if from_pty {
            match nix::unistd::read(master.as_fd(), &mut buf) {
                Ok(0) | Err(nix::Error::EIO) => break,
                Ok(n) => peers::write_all(conn.as_fd(), &buf[..n]),
                Err(_) => {}
            }
        }
    }
    std::process::exit(0)
}
