//! Fake supervisors: a socket and a locked pid file made by hand, so a
//! scan of the socket dir sees a live session that is served by the test,
//! with replies chosen to be old, mute, hostile or absurd.

use std::io::{Read, Write};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::{UnixListener, UnixStream};

use heimdall::protocol::{self, Assembler};
use heimdall::supervisor::pidfile::PidFile;

use super::Sandbox;

/// The socket dir, made by hand with the mode `hm` demands.
pub fn make_dir(sb: &Sandbox) {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&sb.sock_dir)
        .expect("socket dir");
}

/// What makes `id` look alive to a scan: its pid file, locked by us.
/// The session looks alive for as long as the returned lock is held.
pub fn locked_pid_file(sb: &Sandbox, id: &str) -> PidFile {
    make_dir(sb);
    let mut p = PidFile::acquire(&sb.sock_dir.join(format!("{id}.pid")), id).expect("lock");
    p.write_supervisor(std::process::id()).expect("write pid");
    p
}

/// A fake supervisor at `id`'s socket; each connection is served by
/// `serve` on its own thread, which lives as long as the test process.
pub fn listen(sb: &Sandbox, id: &str, serve: fn(UnixStream)) -> PidFile {
    let lock = locked_pid_file(sb, id);
    let listener = UnixListener::bind(sb.sock(id)).expect("bind");
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            std::thread::spawn(move || serve(s));
        }
    });
    lock
}

/// Says binary mode, then answers each whole frame the client sends with
/// `reply(frame type)`; `None` is silence, as a supervisor that does not
/// know the frame would keep. Returns when the client goes or sends
/// something that is not a frame.
pub fn answer(mut s: UnixStream, reply: impl Fn(u8) -> Option<Vec<u8>>) {
    let _ = s.write_all(&[protocol::MODE_BINARY]);
    let mut asm = Assembler::default();
    let mut buf = vec![0u8; 4096];
    loop {
        let n = match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let mut frames = Vec::new();
        if asm.push(&buf[..n], &mut frames).is_err() {
            return;
        }
        for f in frames {
            if let Some(r) = reply(f.ty)
                && s.write_all(&r).is_err()
            {
                return;
            }
        }
    }
}
