//! The ring's subscribers under random output, resizes, subscriptions,
//! sends and cut-offs: what each client reads is what the program wrote,
//! and one that asked for marks knows the size of every byte.

use super::*;
use crate::protocol::{Assembler, MAX_PAYLOAD, ServerType};
use proptest::prelude::*;
use std::os::fd::AsRawFd;

#[derive(Debug, Clone)]
enum Op {
    /// The program prints this many bytes (as much as the reader may
    /// take without overwriting what a subscriber needs).
    Print(usize),
    /// Connection `k` subscribes, asking for REPLAY_END or not, and for
    /// marks or not.
    Subscribe(usize, bool, bool),
    /// The session is resized to this many columns.
    Resize(u16),
    /// Connection `k`'s socket takes at most this many bytes.
    Send(usize, usize),
    /// Connection `k` is cut off, as a stalled one is.
    CutOff(usize),
    /// Connection `k` reads all it is owed, then waits with nothing owed,
    /// taking STATE frames or not.
    Park(usize, bool),
    /// The session's state changes: a STATE frame is owed to those that
    /// take them.
    Report,
    /// The reader writes to the waiting connections, whose sockets take
    /// at most this many bytes each.
    WriteParked(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (1usize..3000).prop_map(Op::Print),
        (0usize..3, any::<bool>(), any::<bool>()).prop_map(|(k, m, j)| Op::Subscribe(k, m, j)),
        (1u16..6).prop_map(Op::Resize),
        (0usize..3, 1usize..5000).prop_map(|(k, n)| Op::Send(k, n)),
        (0usize..3).prop_map(Op::CutOff),
        (0usize..3, any::<bool>()).prop_map(|(k, s)| Op::Park(k, s)),
        Just(Op::Report),
        (0usize..5000).prop_map(Op::WriteParked),
    ]
}

/// One subscriber as its client sees it.
#[derive(Debug, Default)]
struct Client {
    /// Ring offset where its replay starts, and where live output
    /// begins if it asked for the marker.
    start: u64,
    replay_end: Option<u64>,
    marks: bool,
    wire: Vec<u8>,
    cut: bool,
    /// The output's end when it was cut off.
    cut_at: Option<u64>,
    /// Its connection waits with nothing owed, written to by the reader;
    /// the last report it sent, if it takes them.
    parked: bool,
    state_seen: Option<u64>,
}

/// What `client/outbound.rs` does when a socket takes `room` bytes: the
/// rest of a frame in flight, then a new one; REPLAY_END and MARK between
/// frames.
fn send(o: &mut Output, id: ConnId, room: usize, c: &mut Client) {
    let mut room = room;
    while room > 0 {
        if let Some(tail) = o.evicted_tail(id) {
            c.wire.extend(tail);
            o.unsubscribe(id);
            c.cut = true;
            return;
        }
        if o.take_replay_end(id).is_some_and(|e| e.marker) {
            c.wire.extend(Reply::ReplayEnd.encode());
        }
        if let Some(m) = o.take_mark(id) {
            c.wire.extend(Reply::Mark(m).encode());
        }
        o.start_frame(id);
        let Some(f) = o.inflight(id) else {
            return;
        };
        let unsent: Vec<u8> = o.unsent(&f).concat();
        let n = unsent.len().min(room);
        c.wire.extend_from_slice(&unsent[..n]);
        room -= n;
        assert_eq!(o.frame_sent(id, n), n);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Subscribing while the program writes: each subscriber gets the
    /// scrollback at its start and every byte after, no gap, no
    /// duplicate, REPLAY_END exactly where live output begins; one cut
    /// off gets whole frames, then ERROR, and what it got plus what
    /// the ERROR reports lost is everything from its start. One that
    /// asked for marks starts at a line or sequence start and has the
    /// size in force for each byte it gets.
    #[test]
    fn subscribers_get_a_gapless_suffix_or_are_told_what_they_lost(
        scrollback in 1usize..6000,
        ops in prop::collection::vec(op(), 1..120),
    ) {
        let first = Size { cols: 80, rows: 24 };
        let mut o = Output::new(scrollback, first, 0);
        let mut produced: Vec<u8> = Vec::new();
        // Every resize and where it fell: the size of byte X is the last
        // one at or before X.
        let mut sizes: Vec<(u64, Size)> = vec![(0, first)];
        let mut clients: Vec<Option<Client>> = vec![None, None, None];
        // Each connection's socket, told apart by its descriptor.
        let socks: Vec<Rc<OwnedFd>> = (0..3)
            .map(|_| Rc::new(OwnedFd::from(std::fs::File::open("/dev/null").expect("/dev/null"))))
            .collect();
        let mut report_seq = 0;
        let unpark = |o: &mut Output, k: usize, c: &mut Client| {
            if std::mem::take(&mut c.parked) {
                o.park(k as ConnId, None);
            }
        };
        for op in ops {
            match op {
                Op::Print(n) => {
                    let n = n.min(o.read_budget());
                    let mut left = n;
                    while left > 0 {
                        let (read, _) = o
                            .read(left, 0, |spare| {
                                for (i, b) in spare.iter_mut().enumerate() {
                                    *b = (produced.len() + i) as u8 ^ 0x5a;
                                }
                                produced.extend_from_slice(spare);
                                Ok(spare.len())
                            })
                            .expect("no read error");
                        left -= (read.end - read.start) as usize;
                    }
                }
                Op::Resize(cols) => {
                    let size = Size { cols, rows: 24 };
                    o.resized(size, 0);
                    sizes.push((o.ring.head(), size));
                }
                Op::Subscribe(k, mark, marks) => {
                    if clients[k].is_none() {
                        let id = k as ConnId;
                        o.subscribe(id, mark, marks);
                        let sub = &o.subs[&id];
                        clients[k] = Some(Client {
                            start: sub.offset,
                            replay_end: sub.replay_end,
                            marks,
                            ..Client::default()
                        });
                        // The scrollback is the last `scrollback` bytes,
                        // from a clean point when marks are asked for.
                        let head = o.ring.head();
                        let nominal = head - (scrollback as u64).min(head);
                        if marks {
                            let at = sub.offset;
                            let byte = |x: u64| produced[x as usize];
                            // After a string's end, however far: what came
                            // before it was the string.
                            let string_end = at > nominal
                                && (byte(at - 1) == 0x07
                                    || (at >= 2 && byte(at - 2) == 0x1b && byte(at - 1) == b'\\'));
                            let near = nominal + crate::vt::cut::NEAR as u64;
                            prop_assert!(at >= nominal && (at <= near || string_end));
                            prop_assert!(
                                at == nominal
                                    || at == head
                                    || string_end
                                    || byte(at) == 0x1b
                                    || byte(at - 1) == b'\n'
                                    || !(0x80..0xc0).contains(&byte(at)),
                                "not a clean start"
                            );
                        } else {
                            prop_assert_eq!(sub.offset, nominal);
                        }
                    }
                }
                Op::Send(k, room) => {
                    if let Some(c) = clients[k].as_mut().filter(|c| !c.cut) {
                        unpark(&mut o, k, c);
                        send(&mut o, k as ConnId, room, c);
                    }
                }
                Op::Park(k, state) => {
                    if let Some(c) = clients[k].as_mut().filter(|c| !c.cut) {
                        send(&mut o, k as ConnId, usize::MAX, c);
                        let sock = socks[k].clone();
                        let state_seen = state.then_some(report_seq);
                        o.park(k as ConnId, Some(Parked { sock, state_seen }));
                        c.parked = true;
                        c.state_seen = state_seen;
                    }
                }
                Op::Report => report_seq += 1,
                Op::WriteParked(room) => {
                    let mut wrote = [false; 3];
                    let wake = o.write_parked(report_seq, |sock, iov| {
                        let k = socks.iter().position(|s| s.as_raw_fd() == sock.as_raw_fd());
                        let k = k.expect("a parked socket");
                        wrote[k] = true;
                        let c = clients[k].as_mut().expect("a client");
                        let bytes = iov.iter().flat_map(|part| part.iter().copied());
                        let before = c.wire.len();
                        c.wire.extend(bytes.take(room));
                        Ok(c.wire.len() - before)
                    });
                    for (k, c) in clients.iter_mut().enumerate() {
                        let Some(c) = c.as_mut().filter(|c| c.parked) else {
                            continue;
                        };
                        if wake {
                            // Every connection is woken, and stops waiting.
                            unpark(&mut o, k, c);
                        } else {
                            // Not woken: it was owed nothing more.
                            prop_assert!(o.caught_up(k as ConnId), "a parked client left behind");
                            // Nor a report newer than its last, unless it
                            // had no output to write.
                            let stale = c.state_seen.is_some_and(|seen| seen != report_seq);
                            prop_assert!(!stale || !wrote[k], "output went before a newer report");
                        }
                    }
                }
                Op::CutOff(k) => {
                    if let Some(at) = o.subs.get(&(k as ConnId)).and_then(Sub::retains) {
                        o.evict_at(at, 1);
                        let head = o.ring.head();
                        for (j, c) in clients.iter_mut().enumerate() {
                            let evicted = o.evicted_tail(j as ConnId).is_some();
                            if let Some(c) = c.as_mut().filter(|c| evicted && c.cut_at.is_none()) {
                                c.cut_at = Some(head);
                            }
                        }
                    }
                }
            }
        }
        // Every client that was not cut off reads to the end.
        for (k, c) in clients.iter_mut().enumerate() {
            if let Some(c) = c.as_mut().filter(|c| !c.cut) {
                unpark(&mut o, k, c);
                send(&mut o, k as ConnId, usize::MAX, c);
            }
        }
        let head = o.ring.head();
        for c in clients.iter().flatten() {
            let mut frames = Vec::new();
            Assembler::new(MAX_PAYLOAD).push(&c.wire, &mut frames).expect("whole frames");
            let mut got: Vec<u8> = Vec::new();
            let mut marker_at = None;
            let mut lost = None;
            // The size the marks say each byte got.
            let mut size: Option<Size> = None;
            let mut sized: Vec<Option<Size>> = Vec::new();
            for (i, f) in frames.iter().enumerate() {
                match ServerType::try_from(f.ty) {
                    Ok(ServerType::Output) => {
                        got.extend_from_slice(&f.payload);
                        sized.extend(std::iter::repeat_n(size, f.payload.len()));
                    }
                    Ok(ServerType::Mark) => {
                        prop_assert!(c.marks, "a mark nobody asked for");
                        size = Some(Mark::decode(&f.payload).expect("a mark").size);
                    }
                    Ok(ServerType::ReplayEnd) => {
                        prop_assert!(marker_at.is_none(), "REPLAY_END twice");
                        marker_at = Some(got.len() as u64);
                    }
                    Ok(ServerType::Error) => {
                        prop_assert_eq!(i + 1, frames.len(), "frames after ERROR");
                        let msg = protocol::decode_error(&f.payload).1;
                        let n = msg.split(" while ").nth(1).and_then(|r| r.split(' ').next());
                        lost = n.and_then(|n| n.parse::<u64>().ok());
                    }
                    _ => prop_assert!(false, "frame type {:#x}", f.ty),
                }
            }
            let start = c.start as usize;
            prop_assert_eq!(&got[..], &produced[start..start + got.len()], "gap or duplicate");
            if c.marks {
                for (i, s) in sized.iter().enumerate() {
                    let at = c.start + i as u64;
                    let truth = sizes.iter().rev().find(|(o, _)| *o <= at).map(|(_, s)| *s);
                    prop_assert_eq!(*s, truth, "byte {} got the wrong size", at);
                }
            }
            if c.cut {
                let lost = lost.expect("a cut-off client is told what it lost");
                let cut_at = c.cut_at.expect("cut off by an eviction");
                prop_assert_eq!(got.len() as u64 + lost, cut_at - c.start);
            } else {
                prop_assert_eq!(got.len() as u64, head - c.start, "bytes missing");
                if let Some(end) = c.replay_end {
                    prop_assert_eq!(marker_at, Some(end - c.start), "REPLAY_END misplaced");
                }
            }
        }
    }
}

/// A frame the reader framed for a parked connection whose socket was
/// full is dropped when the connection is cut off before any of it went
/// out: its bytes count among those lost (the ERROR said 0 of 1).
#[test]
fn a_cut_off_with_a_frame_not_begun_counts_its_bytes_lost() {
    let mut o = Output::new(1, Size { cols: 80, rows: 24 }, 0);
    o.subscribe(1, false, false);
    let sock = Rc::new(OwnedFd::from(
        std::fs::File::open("/dev/null").expect("/dev/null"),
    ));
    o.park(
        1,
        Some(Parked {
            sock,
            state_seen: None,
        }),
    );
    let (read, _) = o
        .read(1, 0, |spare| {
            spare[0] = b'x';
            Ok(1)
        })
        .expect("no read error");
    assert_eq!(read.end - read.start, 1);
    // The socket takes nothing: the frame stays in flight, not begun.
    assert!(o.write_parked(0, |_, _| Ok(0)));
    o.park(1, None);
    assert_eq!(o.evict_at(0, 1), 1);
    let tail = o.evicted_tail(1).expect("cut off");
    let mut frames = Vec::new();
    Assembler::new(MAX_PAYLOAD)
        .push(tail, &mut frames)
        .expect("whole frames");
    assert_eq!(frames.len(), 1, "only the ERROR: no OUTPUT was begun");
    let msg = protocol::decode_error(&frames[0].payload).1;
    assert!(msg.contains("while 1 bytes were waiting"), "{msg}");
}
