//! Scrollback replay: a new subscriber asks for the replay-end marker and
//! is timed from SUBSCRIBE to that marker, counting the OUTPUT frames that
//! carried the scrollback. The scrollback is filled two ways: many small
//! writes (an interactive program, resized eight times meanwhile) and one
//! big write; each replayed plain, and with the journal's marks (the
//! frames cut where the size changed).

use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use heimdall::protocol::{self, ClientType, Piece, ServerType, Splitter};

use crate::peer::Peer;
use crate::peers::{self, Bench};

#[derive(Debug)]
pub struct Row {
    pub name: &'static str,
    pub bytes: u64,
    pub frames: Vec<u64>,
    pub ms: Vec<f64>,
}

/// Times `reps` replays of the session behind `sock`, with the journal's
/// marks or without.
fn replays(name: &'static str, sock: &Path, reps: usize, marks: bool) -> Row {
    let mut row = Row {
        name,
        bytes: 0,
        frames: Vec::new(),
        ms: Vec::new(),
    };
    let mut buf = vec![0u8; 1 << 20];
    for _ in 0..reps {
        let mut p = Peer::connect(sock).expect("connect");
        let flags = if marks {
            protocol::SUBSCRIBE_MARK_REPLAY | protocol::SUBSCRIBE_MARKS
        } else {
            protocol::SUBSCRIBE_MARK_REPLAY
        };
        let sub = protocol::frame(ClientType::Subscribe as u8, &[flags]);
        let mut split = Splitter::default();
        let (mut cur, mut frames, mut bytes) = (0u8, 0u64, 0u64);
        let t0 = Instant::now();
        p.stream.write_all(&sub).expect("subscribe");
        'read: loop {
            let n = p.stream.read(&mut buf).expect("read the replay");
            assert!(n > 0, "e2e: the session closed during replay");
            let mut rest = &buf[..n];
            while let Ok((used, piece)) = split.next(rest) {
                rest = &rest[used..];
                match piece {
                    Some(Piece::Start { ty, .. }) => {
                        cur = ty;
                        frames += u64::from(ty == ServerType::Output as u8);
                    }
                    Some(Piece::Data(d)) if cur == ServerType::Output as u8 => {
                        bytes += d.len() as u64
                    }
                    Some(Piece::End { ty }) if ty == ServerType::ReplayEnd as u8 => break 'read,
                    Some(_) => {}
                    None => break,
                }
            }
        }
        row.ms.push(t0.elapsed().as_secs_f64() * 1e3);
        row.frames.push(frames);
        row.bytes = bytes;
    }
    row
}

pub fn measure(b: &Bench, payload: &Path, reps: usize) -> Vec<Row> {
    let exe = std::env::current_exe().expect("own path");
    let exe = exe.display().to_string();
    let done = b.path(&b.name("done"));
    let done_s = done.display().to_string();
    // 4096 writes of 16 bytes, 0.3 ms apart: 64 KiB of interactive output,
    // the session resized every 150 ms meanwhile.
    let small = b.hm_session(&[&exe, "--hm-bench-writer", "4096", "16", "300", &done_s]);
    let mut k = 0u16;
    while !done.exists() {
        let size = protocol::Size {
            cols: 80 + 40 * (k % 2),
            rows: 24 + 16 * (k % 2),
        };
        if let Ok(mut p) = crate::peer::Peer::connect(&small.sock) {
            let _ = p.send(ClientType::Resize as u8, &size.encode());
            let _ = p.status();
        }
        k += 1;
        std::thread::sleep(Duration::from_millis(150));
    }
    std::thread::sleep(Duration::from_millis(100));
    let mut rows = vec![
        replays("4096 x 16 B writes, resized", &small.sock, reps, false),
        replays(
            "4096 x 16 B writes, resized; marks",
            &small.sock,
            reps,
            true,
        ),
    ];
    drop(small);

    let done = b.path(&b.name("done"));
    let script = format!(
        "head -c 1048576 '{}'; touch '{}'; exec sleep 1000000",
        payload.display(),
        done.display()
    );
    let bulk = b.hm_session(&["sh", "-c", &script]);
    peers::wait_for("the bulk write", || done.exists());
    std::thread::sleep(Duration::from_millis(100));
    rows.push(replays("one 1 MiB write", &bulk.sock, reps, false));
    rows.push(replays("one 1 MiB write; marks", &bulk.sock, reps, true));
    rows
}

/// The child that fills a scrollback (and streams for the dashboard):
/// `COUNT` writes (0 = forever) of `SIZE` bytes ending in CRLF, `GAP_US`
/// apart, then it touches `DONE` and sleeps.
pub fn writer(args: &[String]) -> ! {
    let num = |i: usize| args.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    let (count, size, gap) = (num(0), num(1).max(2) as usize, num(2));
    let mut out = std::io::stdout().lock();
    let mut i = 0u64;
    while count == 0 || i < count {
        let mut chunk = vec![b'a' + (i % 26) as u8; size - 2];
        chunk.extend_from_slice(b"\r\n");
        if out.write_all(&chunk).and_then(|()| out.flush()).is_err() {
            break;
        }
        i += 1;
        std::thread::sleep(Duration::from_micros(gap));
    }
    if let Some(done) = args.get(3) {
        let _ = std::fs::write(done, b"");
    }
    loop {
        std::thread::sleep(Duration::from_secs(1000));
    }
}
