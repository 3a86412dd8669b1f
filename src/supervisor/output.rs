//! The session's output and who still needs it: the byte ring the pty
//! reader fills, and every subscriber's position in it, with the OUTPUT
//! frame it has partly written.
//!
//! A subscriber is an offset into the ring, so replay and live output are
//! one contiguous read. The ring is never written past what the slowest
//! subscriber still needs ([`Output::read_budget`]); one that stops reading
//! is cut off instead ([`Output::evict_at`]), and told why. No I/O here:
//! the reader and the connections bring the bytes and the sockets.

use std::collections::HashMap;
use std::io;

use crate::protocol::{self, ErrorCode, HEADER_LEN, MAX_OUTPUT_FRAME, Reply, ServerType};

use super::ring::Ring;

/// How far (in bytes) a subscriber may fall behind the newest output before
/// the supervisor stops reading the pty, on top of the scrollback.
pub const LAG_WINDOW: usize = 1 << 20;

pub type ConnId = u64;

/// An OUTPUT frame partly written to a subscriber's socket.
#[derive(Debug, Clone, Copy)]
pub struct Inflight {
    header: [u8; HEADER_LEN],
    /// Ring offset of the first payload byte.
    start: u64,
    len: usize,
    /// Bytes of header plus payload already written.
    sent: usize,
}

impl Inflight {
    fn done(&self) -> bool {
        self.sent == HEADER_LEN + self.len
    }

    /// Whether some of it is on the wire already: then it must be finished
    /// before anything else is written.
    pub fn started(&self) -> bool {
        self.sent > 0
    }

    /// What is left to write: the rest of the header, then the unsent
    /// payload as one or two ring slices. Only the unsent part is asked of
    /// the ring: the sent part may already have been overwritten, since
    /// [`Sub::retains`] releases it as it goes.
    fn unsent<'a>(&'a self, ring: &'a Ring) -> [&'a [u8]; 3] {
        let header = &self.header[self.sent.min(HEADER_LEN)..];
        let paid = self.sent.saturating_sub(HEADER_LEN) as u64;
        let held = ring.slices(self.start + paid, self.start + self.len as u64);
        debug_assert!(held.is_some(), "unsent frame bytes were overwritten");
        let (a, b) = held.unwrap_or((&[], &[]));
        [header, a, b]
    }
}

/// A subscribed connection's position in the output log.
#[derive(Debug)]
struct Sub {
    /// The next byte not yet framed.
    offset: u64,
    inflight: Option<Inflight>,
    /// Set when the subscriber was cut off: what is left of its current
    /// frame followed by an ERROR frame, copied out of the ring so the ring
    /// can move on.
    evicted: Option<Vec<u8>>,
    /// Where the scrollback replay ends, while a REPLAY_END frame is owed.
    replay_end: Option<u64>,
}

impl Sub {
    /// The oldest ring byte this subscriber still needs.
    fn retains(&self) -> Option<u64> {
        if self.evicted.is_some() {
            return None;
        }
        // Bytes of a frame already on the wire are released as they go, so
        // a slow but steady reader shows progress within a frame.
        Some(self.inflight.map_or(self.offset, |f| {
            f.start + f.sent.saturating_sub(HEADER_LEN) as u64
        }))
    }
}

/// The ring and its subscribers.
#[derive(Debug)]
pub struct Output {
    ring: Ring,
    scrollback: usize,
    subs: HashMap<ConnId, Sub>,
}

impl Output {
    /// Keeps the last `scrollback` bytes for late joiners, plus the lag
    /// window for subscribers behind.
    pub fn new(scrollback: usize) -> Output {
        Output {
            ring: Ring::new(scrollback.saturating_add(LAG_WINDOW)),
            scrollback,
            subs: HashMap::new(),
        }
    }

    pub fn scrollback(&self) -> usize {
        self.scrollback
    }

    /// Reads at most `max` bytes with `read` straight into the ring: the
    /// offsets of what was read, and how many bytes `read` was offered.
    /// The caller keeps `max` within [`Output::read_budget`].
    pub fn read(
        &mut self,
        max: usize,
        read: impl FnOnce(&mut [u8]) -> io::Result<usize>,
    ) -> io::Result<(std::ops::Range<u64>, usize)> {
        let from = self.ring.head();
        let spare = self.ring.spare(max);
        let offered = spare.len();
        let n = read(spare)?;
        self.ring.commit(n);
        Ok((from..from + n as u64, offered))
    }

    /// The bytes in `from..to` as one or two slices, if the ring holds
    /// them.
    pub fn slices(&self, from: u64, to: u64) -> Option<(&[u8], &[u8])> {
        self.ring.slices(from, to)
    }

    /// The offsets the ring holds: the oldest byte, and the head.
    pub fn held(&self) -> (u64, u64) {
        (self.ring.oldest(), self.ring.head())
    }

    /// Registers a subscriber at the start of the scrollback: replay and
    /// live output are then one contiguous read of the log.
    pub fn subscribe(&mut self, id: ConnId, mark_replay: bool) {
        let head = self.ring.head();
        let start = head
            .saturating_sub(self.scrollback as u64)
            .max(self.ring.oldest());
        self.subs.insert(
            id,
            Sub {
                offset: start,
                inflight: None,
                evicted: None,
                replay_end: mark_replay.then_some(head),
            },
        );
    }

    /// Forgets a subscriber; true if it was one (its bytes are free now).
    pub fn unsubscribe(&mut self, id: ConnId) -> bool {
        self.subs.remove(&id).is_some()
    }

    /// The oldest byte any subscriber still needs.
    pub fn min_retained(&self) -> u64 {
        self.subs
            .values()
            .filter_map(Sub::retains)
            .min()
            .unwrap_or(self.ring.head())
    }

    /// How many bytes the pty reader may read without overwriting anything
    /// a subscriber still needs.
    pub fn read_budget(&self) -> usize {
        let used = self.ring.head() - self.min_retained();
        self.ring.capacity().saturating_sub(used as usize)
    }

    /// Each subscriber's id, the oldest byte it needs and its next offset,
    /// for the log.
    pub fn positions(&self) -> Vec<(ConnId, Option<u64>, u64)> {
        self.subs
            .iter()
            .map(|(id, s)| (*id, s.retains(), s.offset))
            .collect()
    }

    /// Cuts off every subscriber still holding `offset`: it is told why in
    /// an ERROR frame queued after the rest of its current frame.
    pub fn evict_at(&mut self, offset: u64, stalled_ms: u64) -> usize {
        let ids: Vec<ConnId> = self
            .subs
            .iter()
            .filter(|(_, sub)| sub.retains() == Some(offset))
            .map(|(id, _)| *id)
            .collect();
        for id in &ids {
            tracing::debug!(conn = id, offset, head = self.ring.head(), "evicting");
            let lost = self
                .subs
                .get(id)
                .map_or(0, |sub| self.ring.head() - sub.offset);
            let msg = format!(
                "subscriber cut off: no progress for {stalled_ms} ms while {lost} bytes were waiting; reconnect to resume from the scrollback"
            );
            let error = Reply::error(ErrorCode::TooSlow, &msg).encode();
            self.cut_off(*id, &error);
        }
        ids.len()
    }

    /// Ends a subscription without corrupting the stream: the rest of a
    /// frame already partly written is copied out of the ring, followed by
    /// `last` (an ERROR frame); the connection writes that tail and closes.
    fn cut_off(&mut self, id: ConnId, last: &[u8]) {
        let Some(sub) = self.subs.get_mut(&id) else {
            return;
        };
        let mut tail = Vec::new();
        if let Some(f) = sub.inflight.take().filter(Inflight::started) {
            for part in f.unsent(&self.ring) {
                tail.extend_from_slice(part);
            }
        }
        tail.extend_from_slice(last);
        sub.evicted = Some(tail);
    }

    /// What a cut-off subscriber is still owed, if it was cut off.
    pub fn evicted_tail(&self, id: ConnId) -> Option<&[u8]> {
        self.subs.get(&id)?.evicted.as_deref()
    }

    /// Starts the next OUTPUT frame for a subscriber if it has bytes
    /// waiting and nothing in flight.
    pub fn start_frame(&mut self, id: ConnId) {
        let head = self.ring.head();
        let Some(sub) = self.subs.get_mut(&id) else {
            return;
        };
        if sub.inflight.is_some() || sub.evicted.is_some() || sub.offset >= head {
            return;
        }
        // A frame never straddles the end of the replay, so the marker can
        // be sent exactly between replayed and live bytes.
        let end = match sub.replay_end {
            Some(r) if r > sub.offset => r,
            Some(_) => return,
            None => head,
        };
        let len = ((end - sub.offset) as usize).min(MAX_OUTPUT_FRAME);
        sub.inflight = Some(Inflight {
            header: protocol::header(ServerType::Output as u8, len as u32),
            start: sub.offset,
            len,
            sent: 0,
        });
        sub.offset += len as u64;
    }

    /// The OUTPUT frame a subscriber is writing, if any.
    pub fn inflight(&self, id: ConnId) -> Option<Inflight> {
        self.subs.get(&id)?.inflight
    }

    /// What is left to write of `frame`, in up to three pieces.
    pub fn unsent<'a>(&'a self, frame: &'a Inflight) -> [&'a [u8]; 3] {
        frame.unsent(&self.ring)
    }

    /// Counts up to `n` bytes just written as the rest of a subscriber's
    /// frame in flight; returns how many of them it took.
    pub fn frame_sent(&mut self, id: ConnId, n: usize) -> usize {
        let Some(sub) = self.subs.get_mut(&id) else {
            return 0;
        };
        let Some(f) = &mut sub.inflight else {
            return 0;
        };
        let k = n.min(HEADER_LEN + f.len - f.sent);
        f.sent += k;
        if f.done() {
            sub.inflight = None;
        }
        k
    }

    /// Takes the replay-end marker if it is due now (all replayed bytes
    /// framed and written).
    pub fn take_replay_end(&mut self, id: ConnId) -> bool {
        match self.subs.get_mut(&id) {
            Some(sub)
                if sub.inflight.is_none() && sub.replay_end.is_some_and(|r| sub.offset >= r) =>
            {
                sub.replay_end = None;
                true
            }
            _ => false,
        }
    }

    /// True when a subscriber (or a connection that is not one) has been
    /// written every byte read so far.
    pub fn caught_up(&self, id: ConnId) -> bool {
        let head = self.ring.head();
        self.subs
            .get(&id)
            .is_none_or(|s| s.inflight.is_none() && s.offset >= head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Assembler, MAX_PAYLOAD, server};
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        /// The program prints this many bytes (as much as the reader may
        /// take without overwriting what a subscriber needs).
        Print(usize),
        /// Connection `k` subscribes, asking for REPLAY_END or not.
        Subscribe(usize, bool),
        /// Connection `k`'s socket takes at most this many bytes.
        Send(usize, usize),
        /// Connection `k` is cut off, as a stalled one is.
        CutOff(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (1usize..3000).prop_map(Op::Print),
            (0usize..3, any::<bool>()).prop_map(|(k, m)| Op::Subscribe(k, m)),
            (0usize..3, 1usize..5000).prop_map(|(k, n)| Op::Send(k, n)),
            (0usize..3).prop_map(Op::CutOff),
        ]
    }

    /// One subscriber as its client sees it.
    #[derive(Debug, Default)]
    struct Client {
        /// Ring offset where its replay starts, and where live output
        /// begins if it asked for the marker.
        start: u64,
        replay_end: Option<u64>,
        wire: Vec<u8>,
        cut: bool,
        /// The output's end when it was cut off.
        cut_at: Option<u64>,
    }

    /// What `client/outbound.rs` does when a socket takes `room` bytes: the
    /// rest of a frame in flight, then a new one; REPLAY_END between frames.
    fn send(o: &mut Output, id: ConnId, room: usize, c: &mut Client) {
        let mut room = room;
        while room > 0 {
            if let Some(tail) = o.evicted_tail(id) {
                c.wire.extend(tail);
                o.unsubscribe(id);
                c.cut = true;
                return;
            }
            if o.take_replay_end(id) {
                c.wire.extend(Reply::ReplayEnd.encode());
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
        /// the ERROR reports lost is everything from its start.
        #[test]
        fn subscribers_get_a_gapless_suffix_or_are_told_what_they_lost(
            scrollback in 1usize..6000,
            ops in prop::collection::vec(op(), 1..120),
        ) {
            let mut o = Output::new(scrollback);
            let mut produced: Vec<u8> = Vec::new();
            let mut clients: Vec<Option<Client>> = vec![None, None, None];
            for op in ops {
                match op {
                    Op::Print(n) => {
                        let n = n.min(o.read_budget());
                        let mut left = n;
                        while left > 0 {
                            let (read, _) = o
                                .read(left, |spare| {
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
                    Op::Subscribe(k, mark) => {
                        if clients[k].is_none() {
                            let id = k as ConnId;
                            o.subscribe(id, mark);
                            let sub = &o.subs[&id];
                            clients[k] = Some(Client {
                                start: sub.offset,
                                replay_end: sub.replay_end,
                                ..Client::default()
                            });
                            // The scrollback is the last `scrollback` bytes.
                            let head = o.ring.head();
                            prop_assert_eq!(sub.offset, head - (scrollback as u64).min(head));
                        }
                    }
                    Op::Send(k, room) => {
                        if let Some(c) = clients[k].as_mut().filter(|c| !c.cut) {
                            send(&mut o, k as ConnId, room, c);
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
                for (i, f) in frames.iter().enumerate() {
                    match f.ty {
                        server::OUTPUT => got.extend_from_slice(&f.payload),
                        server::REPLAY_END => {
                            prop_assert!(marker_at.is_none(), "REPLAY_END twice");
                            marker_at = Some(got.len() as u64);
                        }
                        server::ERROR => {
                            prop_assert_eq!(i + 1, frames.len(), "frames after ERROR");
                            let msg = protocol::decode_error(&f.payload).1;
                            let n = msg.split(" while ").nth(1).and_then(|r| r.split(' ').next());
                            lost = n.and_then(|n| n.parse::<u64>().ok());
                        }
                        other => prop_assert!(false, "frame type {other:#x}"),
                    }
                }
                let start = c.start as usize;
                prop_assert_eq!(&got[..], &produced[start..start + got.len()], "gap or duplicate");
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
}
