//! The least a relay can add to an echo on this machine: a process that
//! sits where the supervisor sits (client ↔ Unix socket ↔ relay ↔ pty ↔
//! program) and does nothing but `poll`, `read` and `write`, with no
//! framing, no runtime and no scrollback. Its excess over the raw pty is
//! the price of the two extra process hand-offs themselves, which no relay
//! can go below; `hm`'s excess over it is what `hm` adds on top.
//!
//! [`client`] is the same for a terminal client: a process in a pty of its
//! own that relays its keys to the relay's socket and the socket's bytes
//! to its screen. Chained to the relay it is the least any attach (`hm
//! attach`, `dtach -a`, a tmux client) can add: four process hand-offs.
//! [`client_tokio`] does the same on tokio's current-thread runtime, as
//! `hm attach` does: what it costs over `client` is the runtime's, and
//! `hm attach`'s excess over it is what hm's own code adds.

use std::ffi::OsString;
use std::os::fd::{AsFd, BorrowedFd};
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
    relay(conn.as_fd(), conn.as_fd(), spawned.master.as_fd())
}

/// Runs the terminal client: puts its terminal in raw mode, connects to
/// the relay's socket `args[0]`, then relays keys to it and its bytes to
/// the terminal until either side ends.
pub fn client(args: &[String]) -> ! {
    let conn = client_setup(args);
    relay(
        std::io::stdin().as_fd(),
        std::io::stdout().as_fd(),
        conn.as_fd(),
    )
}

/// [`client`] on tokio's current-thread runtime, built as hm's clients
/// build it, each side watched for reading only, as `hm attach` watches
/// them.
pub fn client_tokio(args: &[String]) -> ! {
    use tokio::io::Interest;
    let conn = client_setup(args);
    conn.set_nonblocking(true)
        .expect("relay client: non-blocking");
    let keys = std::io::stdin().as_fd().try_clone_to_owned().expect("dup");
    nix::fcntl::fcntl(
        &keys,
        nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
    )
    .expect("relay client: non-blocking terminal");
    let rt = heimdall::client::runtime().expect("relay client: runtime");
    rt.block_on(async {
        let keys = heimdall::fd::register(keys, Interest::READABLE).expect("watch");
        let conn = heimdall::fd::register(conn, Interest::READABLE).expect("watch");
        let screen = std::io::stdout();
        let (mut kbuf, mut cbuf) = (vec![0u8; 4096], vec![0u8; 64 * 1024]);
        loop {
            tokio::select! {
                r = heimdall::fd::read_some(&keys, &mut kbuf) => match r {
                    Ok(0) | Err(_) => break,
                    Ok(n) => peers::write_all(conn.get_ref().as_fd(), &kbuf[..n]),
                },
                r = heimdall::fd::read_some(&conn, &mut cbuf) => match r {
                    Ok(0) | Err(_) => break,
                    Ok(n) => peers::write_all(screen.as_fd(), &cbuf[..n]),
                },
            }
        }
    });
    std::process::exit(0)
}

/// Puts the terminal in raw mode and connects to the relay's socket.
fn client_setup(args: &[String]) -> std::os::unix::net::UnixStream {
    use nix::sys::termios::{SetArg, cfmakeraw, tcgetattr, tcsetattr};
    let conn = std::os::unix::net::UnixStream::connect(&args[0]).expect("relay client: connect");
    let stdin = std::io::stdin();
    let mut raw = tcgetattr(stdin.as_fd()).expect("relay client: a terminal");
    cfmakeraw(&mut raw);
    tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &raw).expect("relay client: raw mode");
    conn
}

/// Relays `keys` to `conn` and `conn` to `screen` until either ends (the
/// relay's keys and screen are its one connection, its `conn` the pty).
fn relay(keys: BorrowedFd<'_>, screen: BorrowedFd<'_>, conn: BorrowedFd<'_>) -> ! {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let mut fds = [
            PollFd::new(keys, PollFlags::POLLIN),
            PollFd::new(conn, PollFlags::POLLIN),
        ];
        if poll(&mut fds, PollTimeout::NONE).is_err() {
            continue;
        }
        let ready = |i: usize| fds[i].revents().is_some_and(|r| !r.is_empty());
        let (from_keys, from_conn) = (ready(0), ready(1));
        if from_keys {
            match nix::unistd::read(keys, &mut buf) {
                Ok(0) | Err(nix::Error::EIO) => break,
                Ok(n) => peers::write_all(conn, &buf[..n]),
                Err(_) => {}
            }
        }
        if from_conn {
            match nix::unistd::read(conn, &mut buf) {
                Ok(0) | Err(nix::Error::EIO) => break,
                Ok(n) => peers::write_all(screen, &buf[..n]),
                Err(_) => {}
            }
        }
    }
    std::process::exit(0)
}
