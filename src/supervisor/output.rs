//! The session's output and who still needs it: the byte ring the pty
//! reader fills, and every subscriber's position in it, with the OUTPUT
//! frame it has partly written.
//!
//! A subscriber is an offset into the ring, so replay and live output are
//! one contiguous read. The ring is never written past what the slowest
//! subscriber still needs ([`Output::read_budget`]); one that stops reading
//! is cut off instead ([`Output::evict_at`]), and told why. Beside the
//! ring, its journal ([`super::journal`]) says where the size changed; a
//! subscriber that asked for marks gets each one between its OUTPUT
//! frames, exactly where it falls. No I/O here: the reader and the
//! connections bring the bytes and the sockets.

use std::collections::HashMap;
use std::io::{self, IoSlice};
use std::os::fd::OwnedFd;
use std::rc::Rc;

use crate::protocol::{
    self, ErrorCode, HEADER_LEN, JournalInfo, MAX_OUTPUT_FRAME, Mark, Reply, ServerType, Size,
};

use super::journal::{Journal, Recorded};
use super::ring::Ring;
use crate::vt::alternate::Alternate;

/// How far (in bytes) a subscriber may fall behind the newest output before
/// the supervisor stops reading the pty, on top of the scrollback.
pub const LAG_WINDOW: usize = 1 << 20;

pub type ConnId = u64;

/// Which marks a subscriber that asked for them is still owed.
#[derive(Debug, Clone, Copy)]
struct MarkCursor {
    /// The mark in force at its start, before any byte.
    base: bool,
    /// Marks at this offset or later have not been sent.
    next: u64,
}

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

/// What a subscriber is owed where its replay ends.
#[derive(Debug)]
pub struct ReplayEnd {
    /// A REPLAY_END frame.
    pub marker: bool,
    /// The screen's rendering, as one OUTPUT frame.
    pub repaint: Option<Box<[u8]>>,
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
    /// Where the scrollback replay ends, while something is owed there: a
    /// REPLAY_END frame (`marker`), the screen's rendering (`repaint`).
    replay_end: Option<u64>,
    marker: bool,
    repaint: Option<Box<[u8]>>,
    /// Set for a subscriber that asked for marks.
    marks: Option<MarkCursor>,
    /// Set while its connection waits with nothing owed.
    parked: Option<Parked>,
}

/// A subscriber's connection waiting with nothing owed: its socket, and
/// the last state report it sent if it takes STATE frames. Its new output
/// is written by the reader itself ([`Output::write_parked`]); waking the
/// connection's task to write it cost a task's turn per read, the most of
/// a keystroke's echo that was hm's own.
#[derive(Debug)]
pub struct Parked {
    pub sock: Rc<OwnedFd>,
    pub state_seen: Option<u64>,
}

impl Sub {
    /// Starts its next OUTPUT frame if it has bytes waiting (the ring's
    /// `head` is the newest) and nothing in flight.
    fn start_frame(&mut self, head: u64, journal: &Journal) {
        if self.inflight.is_some() || self.evicted.is_some() || self.offset >= head {
            return;
        }
        // A frame never straddles the end of the replay, so the marker can
        // be sent exactly between replayed and live bytes.
        let mut end = match self.replay_end {
            Some(r) if r > self.offset => r,
            Some(_) => return,
            None => head,
        };
        // Nor a mark: it goes between frames, where it falls.
        if let Some(cur) = self.marks {
            if cur.base {
                return;
            }
            if let Some(e) = journal.from(cur.next) {
                if e.offset <= self.offset {
                    return;
                }
                end = end.min(e.offset);
            }
        }
        let len = ((end - self.offset) as usize).min(MAX_OUTPUT_FRAME);
        self.inflight = Some(Inflight {
            header: protocol::header(ServerType::Output as u8, len as u32),
            start: self.offset,
            len,
            sent: 0,
        });
        self.offset += len as u64;
    }

    /// Counts up to `n` bytes just written as the rest of its frame in
    /// flight; returns how many of them it took.
    fn frame_sent(&mut self, n: usize) -> usize {
        let Some(f) = &mut self.inflight else {
            return 0;
        };
        let k = n.min(HEADER_LEN + f.len - f.sent);
        f.sent += k;
        if f.done() {
            self.inflight = None;
        }
        k
    }

    /// Where what it gets ends if it is cut off now: a frame it has begun
    /// is finished from a copy, one not begun is dropped with the rest
    /// (its bytes were taken from `offset` when it was framed, and are
    /// lost too).
    fn delivered_if_cut(&self) -> u64 {
        match self.inflight {
            Some(f) if !f.started() => f.start,
            _ => self.offset,
        }
    }

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
    journal: Journal,
    /// Whether the output is on the alternate screen, for the journal.
    alternate: Alternate,
}

impl Output {
    /// Keeps the last `scrollback` bytes for late joiners, plus the lag
    /// window for subscribers behind; the session starts at `size`, at
    /// `unix_ms`.
    pub fn new(scrollback: usize, size: Size, unix_ms: u64) -> Output {
        let ring = Ring::new(scrollback.saturating_add(LAG_WINDOW));
        Output {
            journal: Journal::new(ring.capacity(), size, unix_ms),
            ring,
            scrollback,
            subs: HashMap::new(),
            alternate: Alternate::default(),
        }
    }

    /// INFO's account of the journal.
    pub fn journal_info(&self) -> JournalInfo {
        let head = self.ring.head();
        let start = head
            .saturating_sub(self.scrollback as u64)
            .max(self.ring.oldest())
            .max(self.journal.floor());
        JournalInfo {
            marks: self.journal.len(),
            max_marks: self.journal.capacity(),
            since_unix_ms: self.journal.time_at(start).unwrap_or(0),
            whole: start == 0,
        }
    }

    pub fn scrollback(&self) -> usize {
        self.scrollback
    }

    /// Reads at most `max` bytes with `read` straight into the ring, at
    /// `unix_ms`: the offsets of what was read, and how many bytes `read`
    /// was offered. The caller keeps `max` within [`Output::read_budget`].
    pub fn read(
        &mut self,
        max: usize,
        unix_ms: u64,
        read: impl FnOnce(&mut [u8]) -> io::Result<usize>,
    ) -> io::Result<(std::ops::Range<u64>, usize)> {
        let from = self.ring.head();
        let spare = self.ring.spare(max);
        let offered = spare.len();
        let n = read(spare)?;
        if n > 0 {
            let recorded = self.journal.output(from, unix_ms);
            self.recorded(recorded);
        }
        self.ring.commit(n);
        // Where the screen switched, each at the byte after its switch.
        let mut switches: Vec<(u64, bool)> = Vec::new();
        if let Some((a, b)) = self.ring.slices(from, from + n as u64) {
            let mut at = from;
            for part in [a, b] {
                self.alternate
                    .scan(part, |i, on| switches.push((at + i as u64, on)));
                at += part.len() as u64;
            }
        }
        for (offset, on) in switches {
            let recorded = self.journal.switched(offset, on, unix_ms);
            self.recorded(recorded);
        }
        self.journal.trim(self.ring.oldest());
        Ok((from..from + n as u64, offered))
    }

    /// The session's size is now `size` (its pty was resized), at
    /// `unix_ms`: the next byte is the first written at that size.
    pub fn resized(&mut self, size: Size, unix_ms: u64) {
        let recorded = self.journal.resized(self.ring.head(), size, unix_ms);
        self.recorded(recorded);
    }

    /// What a new mark means for the subscribers: one that replaced the
    /// mark they were just given is owed again; one whose marks were
    /// dropped before they were sent is cut off, since its stream would
    /// apply a size at the wrong place.
    fn recorded(&mut self, r: Recorded) {
        let head = self.ring.head();
        if r.replaced {
            for cur in self.subs.values_mut().filter_map(|s| s.marks.as_mut()) {
                if cur.next == head + 1 {
                    cur.next = head;
                }
            }
        }
        let Some(through) = r.dropped_through else {
            return;
        };
        let floor = self.journal.floor();
        let lost: Vec<ConnId> = self
            .subs
            .iter()
            .filter(|(_, s)| s.evicted.is_none())
            .filter(|(_, s)| {
                s.marks
                    .is_some_and(|c| c.next <= through || (c.base && s.offset < floor))
            })
            .map(|(id, _)| *id)
            .collect();
        for id in lost {
            tracing::debug!(conn = id, through, "cut off: its marks were dropped");
            let msg = format!(
                "subscriber cut off: the session was resized more often than its journal keeps ({} sizes) while this subscriber was behind; reconnect to resume from the scrollback",
                self.journal.capacity()
            );
            let error = Reply::error(ErrorCode::TooSlow, &msg).encode();
            self.cut_off(id, &error);
        }
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
    /// live output are then one contiguous read of the log. One that asks
    /// for `marks` starts where sizes are known and at a clean point, and
    /// is owed the mark in force there first.
    pub fn subscribe(&mut self, id: ConnId, mark_replay: bool, marks: bool) {
        let head = self.ring.head();
        let mut start = head
            .saturating_sub(self.scrollback as u64)
            .max(self.ring.oldest());
        if marks {
            start = self.clean_start(start.max(self.journal.floor()));
        }
        self.subs.insert(
            id,
            Sub {
                offset: start,
                inflight: None,
                evicted: None,
                replay_end: mark_replay.then_some(head),
                marker: mark_replay,
                repaint: None,
                marks: marks.then_some(MarkCursor {
                    base: true,
                    next: start + 1,
                }),
                parked: None,
            },
        );
    }

    /// Ends subscriber `id`'s replay with `rendering`, the screen as it
    /// stands at the ring's head (see `SUBSCRIBE_SCREEN`), when its replay
    /// does not start with the session's first byte: what a program drew
    /// once before the ring's oldest byte (an agent's banner, above the
    /// dialog it redraws in place) is on the screen and not in the replay,
    /// which alone left the subscriber's screen rows out of place. (A
    /// terminal is sent one later too, see [`Output::repaint`].)
    pub fn end_replay_with(&mut self, id: ConnId, rendering: Vec<u8>) {
        let head = self.ring.head();
        if let Some(sub) = self.subs.get_mut(&id) {
            sub.replay_end = Some(head);
            sub.repaint = Some(rendering.into_boxed_slice());
        }
    }

    /// Sends subscriber `id` the screen drawn again (`rendering`) where
    /// its stream is now, as a cut replay ends; not while its replay is
    /// under way, whose end would move past bytes it reads as live (its
    /// terminal answers their queries).
    pub fn repaint(&mut self, id: ConnId, rendering: Vec<u8>) {
        if self
            .subs
            .get(&id)
            .is_some_and(|sub| sub.replay_end.is_none())
        {
            self.end_replay_with(id, rendering);
        }
    }

    /// Whether subscriber `id`'s replay starts after the session's first
    /// byte, with bytes still to send: only then does its screen need
    /// drawing at the end ([`Output::end_replay_with`]), and only then is
    /// the screen woken to render it.
    pub fn replay_cut(&self, id: ConnId) -> bool {
        let head = self.ring.head();
        self.subs
            .get(&id)
            .is_some_and(|sub| sub.offset > 0 && sub.offset < head)
    }

    /// Where a replay that starts at `start` begins cleanly (see
    /// [`crate::vt::cut`]). At offset 0 nothing was lost.
    fn clean_start(&self, start: u64) -> u64 {
        if start == 0 {
            return 0;
        }
        let Some((a, b)) = self.ring.slices(start, self.ring.head()) else {
            return start;
        };
        start + crate::vt::cut::clean_start(a.iter().chain(b).copied()) as u64
    }

    /// The mark a subscriber is owed before its next byte, if one is due
    /// now (nothing in flight): the one in force at its start, then each
    /// at its offset once a byte follows it. Until then a mark may still be
    /// replaced (sizes with no byte between are one), and the session's
    /// screen takes a size with the first byte after it too; so a
    /// subscriber's emulator goes through exactly the sizes the session's
    /// screen did. A mark behind the subscriber (never expected) is
    /// skipped, never applied late.
    pub fn take_mark(&mut self, id: ConnId) -> Option<Mark> {
        let head = self.ring.head();
        let Output { subs, journal, .. } = self;
        let sub = subs.get_mut(&id)?;
        if sub.inflight.is_some() || sub.evicted.is_some() {
            return None;
        }
        let cur = sub.marks.as_mut()?;
        if cur.base {
            cur.base = false;
            cur.next = sub.offset + 1;
            return journal.at(sub.offset).map(|e| e.mark);
        }
        loop {
            let e = journal.from(cur.next)?;
            if e.offset > sub.offset || e.offset >= head {
                return None;
            }
            cur.next = e.offset + 1;
            if e.offset == sub.offset {
                return Some(e.mark);
            }
        }
    }

    /// The offset of the next byte a subscriber will be framed.
    #[cfg(any(test, feature = "fuzzing"))]
    pub fn position(&self, id: ConnId) -> Option<u64> {
        self.subs.get(&id).map(|s| s.offset)
    }

    /// Where the size changed, and when output was read.
    #[cfg(any(test, feature = "fuzzing"))]
    pub fn journal(&self) -> &Journal {
        &self.journal
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
                .map_or(0, |sub| self.ring.head() - sub.delivered_if_cut());
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
        if let Some(sub) = self.subs.get_mut(&id) {
            sub.start_frame(head, &self.journal);
        }
    }

    /// Marks a subscriber's connection as waiting with nothing owed
    /// (`Some`), or as no longer waiting.
    pub fn park(&mut self, id: ConnId, parked: Option<Parked>) {
        if let Some(sub) = self.subs.get_mut(&id) {
            sub.parked = parked;
        }
    }

    /// Writes each parked subscriber's new output with `write` (a
    /// non-blocking write of what the socket takes now), when that is all
    /// it is owed: no STATE report newer than its last, no mark, no end
    /// of replay. True if a subscriber's connection must still be woken:
    /// it is owed something else, more than one frame, or its socket was
    /// full (then its frame is in flight, and the connection finishes it).
    pub fn write_parked(
        &mut self,
        report_seq: u64,
        mut write: impl FnMut(&OwnedFd, &[IoSlice<'_>]) -> io::Result<usize>,
    ) -> bool {
        let Output {
            ring,
            subs,
            journal,
            ..
        } = self;
        let head = ring.head();
        let mut wake = false;
        for sub in subs.values_mut() {
            let Some(parked) = &sub.parked else {
                continue;
            };
            if sub.offset >= head {
                continue;
            }
            // A newer report goes first, from the connection.
            if parked.state_seen.is_some_and(|seen| seen != report_seq) {
                wake = true;
                continue;
            }
            sub.start_frame(head, journal);
            // None: a mark, the end of the replay or a cut-off's tail is
            // owed first.
            let (Some(frame), Some(parked)) = (&sub.inflight, &sub.parked) else {
                wake = true;
                continue;
            };
            let [a, b, c] = frame.unsent(ring);
            let iov = [IoSlice::new(a), IoSlice::new(b), IoSlice::new(c)];
            // An error is the connection's to find, writing again.
            let n = write(&parked.sock, &iov).unwrap_or(0);
            sub.frame_sent(n);
            wake |= sub.inflight.is_some() || sub.offset < head;
        }
        wake
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
        self.subs.get_mut(&id).map_or(0, |sub| sub.frame_sent(n))
    }

    /// Takes what ends the replay if it is due now (all replayed bytes
    /// framed and written).
    pub fn take_replay_end(&mut self, id: ConnId) -> Option<ReplayEnd> {
        match self.subs.get_mut(&id) {
            Some(sub)
                if sub.inflight.is_none() && sub.replay_end.is_some_and(|r| sub.offset >= r) =>
            {
                sub.replay_end = None;
                Some(ReplayEnd {
                    marker: std::mem::take(&mut sub.marker),
                    repaint: sub.repaint.take(),
                })
            }
            _ => None,
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
mod tests;
