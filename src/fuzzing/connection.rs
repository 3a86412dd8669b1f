//! The supervisor's per-connection state machine, driven by any client.
//!
//! Unlike the other targets this one does I/O, because the connection's
//! buffering, backpressure and closing live in how it waits on its
//! descriptors. The real connection task and pty reader
//! ([`crate::supervisor::Core`]) serve one end of a socket pair over a real
//! pty (raw mode, no child); this function plays the client on the other
//! end and the program on the pty's slave, then checks what came back.
//!
//! Input layout: byte 0 holds flags, the rest is the client's byte stream,
//! sent in chunks cut where the input's hash says.
//!
//! - Bit 0, "whole": the stream is cut back to its last complete frame (or
//!   to the header the supervisor must refuse) and a STATUS is appended.
//!   Once that is answered, every frame before it has been handled; the
//!   program then exits. The replies are checked exactly against an
//!   independent reading of the stream: every STATUS and INFO answered,
//!   every INPUT byte delivered to the program in order, a refused frame
//!   answered by one ERROR with its code and nothing after, a subscriber
//!   given every output byte and then EXIT, nobody else given output.
//! - Otherwise the stream goes as it is (a frame may be cut anywhere), the
//!   client stops writing and the program exits at once; the replies may
//!   stop anywhere, so only their shape is checked: well-formed frames, at
//!   most one ERROR or EXIT and nothing after it, no more answers than
//!   requests, input delivered a prefix of what the whole INPUT frames
//!   carried (a cut-off frame is never typed).
//! - Bit 1: the program prints a line after every chunk.

use std::cell::RefCell;
use std::os::fd::OwnedFd;
use std::rc::Rc;
use std::time::Duration;

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::sys::termios::{SetArg, cfmakeraw, tcgetattr, tcsetattr};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Notify;

use crate::protocol::{
    Assembler, ClientType, ErrorCode, Frame, HEADER_LEN, MAX_PAYLOAD, MODE_BINARY, ServerType,
    decode_error, decode_exit, frame,
};
use crate::supervisor::Core;

use super::{cuts, hash};

/// Longer than any run needs: a connection that has not finished by then
/// is stuck, which is a defect.
const PATIENCE: Duration = Duration::from_secs(20);

pub fn connection(data: &[u8]) {
    let Some((&flags, stream)) = data.split_first() else {
        return;
    };
    let whole = flags & 1 != 0;
    let prints = flags & 2 != 0;
    let stream = if whole {
        complete(stream)
    } else {
        stream.to_vec()
    };
    let want = expect(&stream);
    let chunks = cuts(stream.len(), hash(data));
    let rt = crate::client::runtime().expect("a runtime");
    let local = tokio::task::LocalSet::new();
    let run = local.block_on(&rt, async {
        tokio::time::timeout(PATIENCE, drive(&stream, &chunks, whole, prints, &want)).await
    });
    let got = run.expect("the connection did not finish");
    check(&want, &got, whole);
}

/// What the supervisor must do with a client's stream, read from the
/// format alone: frames in order until the first one it must refuse.
#[derive(Debug, Default)]
struct Expect {
    input: Vec<u8>,
    status: usize,
    info: usize,
    subscribed: bool,
    marks_replay: bool,
    wants_exit: bool,
    error: Option<u16>,
    /// Where the last complete frame (or the refused header) ends.
    end: usize,
}

fn expect(stream: &[u8]) -> Expect {
    let mut e = Expect::default();
    let mut at = 0;
    while let Some(h) = stream.get(at..at + HEADER_LEN) {
        let ty = h[0];
        let len = u32::from_be_bytes([h[1], h[2], h[3], h[4]]);
        let refused = if len > MAX_PAYLOAD {
            Some(ErrorCode::FrameTooLarge)
        } else if ty == ClientType::Resize as u8 && len != 4 {
            Some(ErrorCode::MalformedPayload)
        } else {
            None
        };
        if let Some(code) = refused {
            e.error = Some(code as u16);
            e.end = at + HEADER_LEN;
            break;
        }
        let start = at + HEADER_LEN;
        let payload = &stream[start..(start + len as usize).min(stream.len())];
        // Only a whole frame takes effect: of a cut-off INPUT frame the
        // program gets nothing.
        if payload.len() < len as usize {
            break;
        }
        if ty == ClientType::Input as u8 {
            e.input.extend_from_slice(payload);
        }
        at = start + payload.len();
        e.end = at;
        match ClientType::try_from(ty) {
            Ok(ClientType::Status) => e.status += 1,
            Ok(ClientType::Info) => e.info += 1,
            Ok(ClientType::Subscribe) if !e.subscribed => {
                e.subscribed = true;
                e.marks_replay = payload.first().is_some_and(|f| f & 1 != 0);
            }
            Ok(ClientType::Kill) if len == 4 => e.wants_exit = true,
            _ => {}
        }
    }
    e
}

/// The stream cut back to where [`expect`] stops, plus a STATUS whose
/// answer shows that everything before it was handled.
fn complete(stream: &[u8]) -> Vec<u8> {
    let e = expect(stream);
    let mut out = stream[..e.end].to_vec();
    if e.error.is_none() {
        out.extend(frame(ClientType::Status as u8, &[]));
    }
    out
}

#[derive(Debug, Default)]
struct Got {
    /// The first byte the supervisor sent.
    mode: Option<u8>,
    frames: Vec<Frame>,
    /// The replies did not parse: the reason.
    garbled: Option<String>,
    /// What the program read.
    input: Vec<u8>,
    /// What the program printed.
    printed: Vec<u8>,
}

/// The client's view of the replies so far, shared with the waiting side.
#[derive(Debug, Default)]
struct Replies {
    got: Got,
    closed: bool,
}

async fn drive(stream: &[u8], chunks: &[usize], whole: bool, prints: bool, want: &Expect) -> Got {
    let pty = nix::pty::openpty(None, None).expect("a pty");
    let mut raw = tcgetattr(&pty.slave).expect("termios");
    cfmakeraw(&mut raw);
    tcsetattr(&pty.slave, SetArg::TCSANOW, &raw).expect("raw mode");
    nonblocking(&pty.master);
    nonblocking(&pty.slave);
    let core = Rc::new(Core::start(pty.master, 64 * 1024).expect("the serving core"));
    let slave = Rc::new(
        crate::fd::register(
            pty.slave,
            tokio::io::Interest::READABLE | tokio::io::Interest::WRITABLE,
        )
        .expect("watch the slave"),
    );
    let (ours, theirs) = tokio::net::UnixStream::pair().expect("a socket pair");
    let served = tokio::task::spawn_local({
        let core = core.clone();
        async move { core.serve(theirs).await }
    });
    let (mut rd, mut wr) = ours.into_split();

    let replies = Rc::new(RefCell::new(Replies::default()));
    let news = Rc::new(Notify::new());
    let reader = tokio::task::spawn_local({
        let (replies, news) = (replies.clone(), news.clone());
        async move {
            let mut asm = Assembler::new(MAX_PAYLOAD);
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = loop {
                    match rd.read(&mut buf).await {
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        r => break r.unwrap_or(0),
                    }
                };
                let mut r = replies.borrow_mut();
                if n == 0 {
                    r.closed = true;
                    news.notify_one();
                    return;
                }
                let mut bytes = &buf[..n];
                if r.got.mode.is_none() {
                    r.got.mode = Some(bytes[0]);
                    bytes = &bytes[1..];
                }
                if r.got.garbled.is_none()
                    && let Err(e) = asm.push(bytes, &mut r.got.frames)
                {
                    r.got.garbled = Some(e.to_string());
                }
                news.notify_one();
            }
        }
    });
    // The program reads its input as it comes, until it exits.
    let input = Rc::new(RefCell::new(Vec::new()));
    let stop = Rc::new(Notify::new());
    let program = tokio::task::spawn_local({
        let (slave, stop, input, news) = (slave.clone(), stop.clone(), input.clone(), news.clone());
        async move {
            let mut buf = vec![0u8; 16 * 1024];
            loop {
                tokio::select! {
                    () = stop.notified() => return,
                    g = slave.readable() => {
                        let mut g = g.expect("the slave is readable");
                        if let Ok(Ok(n)) = g.try_io(|fd| {
                            nix::unistd::read(fd.get_ref(), &mut buf).map_err(std::io::Error::from)
                        }) {
                            input.borrow_mut().extend_from_slice(&buf[..n]);
                            news.notify_one();
                        }
                    }
                }
            }
        }
    });

    let mut printed = Vec::new();
    let mut at = 0;
    for (k, &n) in chunks.iter().enumerate() {
        if write_all(&mut wr, &stream[at..at + n]).await.is_err() {
            // Closed after refusing something: what it sent says why.
            break;
        }
        at += n;
        // Bounded well below the scrollback, so a subscriber that comes
        // late still gets every line.
        if prints && k < 1000 {
            let line = format!("out {k}\r\n");
            write_slave(&slave, line.as_bytes()).await;
            printed.extend_from_slice(line.as_bytes());
        }
    }
    if whole {
        // Every frame handled: the sentinel STATUS answered, or the
        // connection closed after refusing one. INPUT before it was then
        // written to the pty, so the program gets it promptly; lost input
        // shows as a short read in `check`, not as a hang.
        let handled = || {
            let r = replies.borrow();
            let answered = r
                .got
                .frames
                .iter()
                .filter(|f| f.ty == ServerType::StatusResp as u8);
            r.closed || answered.count() >= want.status
        };
        while !handled() {
            news.notified().await;
        }
        let _ = tokio::time::timeout(Duration::from_secs(5), async {
            while input.borrow().len() < want.input.len() {
                news.notified().await;
            }
        })
        .await;
    }
    drop(wr);
    // The program exits: its last output is read to the end, then EXIT.
    core.end(0);
    stop.notify_one();
    program.await.expect("the program task");
    drop(slave);
    served.await.expect("the connection task");
    reader.await.expect("the reader task");
    let mut got = std::mem::take(&mut replies.borrow_mut().got);
    got.input = std::mem::take(&mut input.borrow_mut());
    got.printed = printed;
    got
}

fn check(want: &Expect, got: &Got, whole: bool) {
    assert_eq!(got.mode, Some(MODE_BINARY), "the mode byte comes first");
    if let Some(why) = &got.garbled {
        panic!("the replies do not parse: {why}");
    }
    let count = |ty: u8| got.frames.iter().filter(|f| f.ty == ty).count();
    for f in &got.frames {
        assert!(
            matches!(
                ServerType::try_from(f.ty),
                Ok(ServerType::Output
                    | ServerType::StatusResp
                    | ServerType::Exit
                    | ServerType::Error
                    | ServerType::Info
                    | ServerType::ReplayEnd)
            ),
            "unknown reply type 0x{:02x}",
            f.ty
        );
    }
    let enders: Vec<usize> = got
        .frames
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            matches!(
                ServerType::try_from(f.ty),
                Ok(ServerType::Error | ServerType::Exit)
            )
        })
        .map(|(i, _)| i)
        .collect();
    assert!(
        enders.len() <= 1,
        "ERROR or EXIT more than once: {enders:?}"
    );
    if let Some(&i) = enders.first() {
        assert_eq!(i + 1, got.frames.len(), "frames after ERROR or EXIT");
    }
    assert!(
        count(ServerType::StatusResp as u8) <= want.status,
        "unasked STATUS_RESP"
    );
    assert!(count(ServerType::Info as u8) <= want.info, "unasked INFO");
    assert!(count(ServerType::ReplayEnd as u8) <= 1, "REPLAY_END twice");
    assert!(
        want.input.starts_with(&got.input),
        "the program read input that was not sent in that order"
    );
    let output: Vec<u8> = got
        .frames
        .iter()
        .filter(|f| f.ty == ServerType::Output as u8)
        .flat_map(|f| f.payload.iter().copied())
        .collect();
    if !want.subscribed {
        assert!(
            output.is_empty(),
            "output to a client that did not subscribe"
        );
        assert_eq!(count(ServerType::ReplayEnd as u8), 0, "REPLAY_END unasked");
    }
    assert!(
        got.printed.starts_with(&output),
        "output that the program did not print in that order"
    );
    if !whole {
        return;
    }
    assert_eq!(got.input, want.input, "input lost");
    assert_eq!(
        count(ServerType::StatusResp as u8),
        want.status,
        "STATUS unanswered"
    );
    assert_eq!(count(ServerType::Info as u8), want.info, "INFO unanswered");
    let last = got.frames.last();
    match want.error {
        Some(code) => {
            let last = last.filter(|f| f.ty == ServerType::Error as u8);
            let last = last.expect("a refused frame is answered by ERROR");
            assert_eq!(decode_error(&last.payload).0, code, "the ERROR's code");
        }
        None if want.subscribed || want.wants_exit => {
            let last = last.filter(|f| f.ty == ServerType::Exit as u8);
            let last = last.expect("a subscriber (or a KILL waiting) gets EXIT last");
            assert_eq!(decode_exit(&last.payload).ok(), Some(0), "the EXIT's code");
            if want.subscribed {
                assert_eq!(output, got.printed, "output lost");
                assert_eq!(
                    count(ServerType::ReplayEnd as u8),
                    usize::from(want.marks_replay),
                    "REPLAY_END as asked"
                );
            }
        }
        None => assert!(enders.is_empty(), "ERROR or EXIT for no reason"),
    }
}

fn nonblocking(fd: &OwnedFd) {
    let flags = fcntl(fd, FcntlArg::F_GETFL).expect("file flags");
    fcntl(
        fd,
        FcntlArg::F_SETFL(OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK),
    )
    .expect("non-blocking");
}

/// `write_all` that retries interrupted writes (libFuzzer's alarm).
async fn write_all(
    wr: &mut tokio::net::unix::OwnedWriteHalf,
    mut bytes: &[u8],
) -> std::io::Result<()> {
    while !bytes.is_empty() {
        match wr.write(bytes).await {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

async fn write_slave(slave: &AsyncFd<OwnedFd>, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        let mut g = slave.writable().await.expect("the slave is writable");
        // libFuzzer's timeout alarm interrupts system calls now and then.
        match g.try_io(|fd| nix::unistd::write(fd.get_ref(), bytes).map_err(std::io::Error::from)) {
            Ok(Ok(n)) => bytes = &bytes[n..],
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Ok(Err(e)) => panic!("write to the slave: {e}"),
            Err(_would_block) => {}
        }
    }
}
