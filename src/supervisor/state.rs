//! The state one supervisor shares between its tasks: the output ring,
//! the classifier, the child's fate and every subscriber's position.
//!
//! All tasks run on one thread, so this lives in an `Rc<RefCell<_>>`;
//! borrows are short and never held across an `.await`.

use std::collections::HashMap;

use crate::classify::{ProcessState, StateClassifier};
use crate::clock::Clock;
use crate::detect::{Detector, Health, Primary, Verdict};
use crate::protocol::{
    self, ErrorCode, HEADER_LEN, MAX_OUTPUT_FRAME, Size, StateReport, Status, server,
};
use crate::vt::events::{Query, Recorder, TermEvent};
use crate::vt::term::Term;

use super::process::ProcessProbe;
use super::ring::Ring;

/// How far (in bytes) a subscriber may fall behind the newest output before
/// the supervisor stops reading the pty, on top of the scrollback.
pub const LAG_WINDOW: usize = 1 << 20;

pub type ConnId = u64;

/// An OUTPUT frame partly written to a subscriber's socket.
#[derive(Debug, Clone, Copy)]
pub struct Inflight {
    pub header: [u8; HEADER_LEN],
    /// Ring offset of the first payload byte.
    pub start: u64,
    pub len: usize,
    /// Bytes of header plus payload already written.
    pub sent: usize,
}

impl Inflight {
    pub fn done(&self) -> bool {
        self.sent == HEADER_LEN + self.len
    }

    /// What is left to write: the rest of the header, then the unsent
    /// payload as one or two ring slices. Only the unsent part is asked of
    /// the ring: the sent part may already have been overwritten, since
    /// [`Sub::retains`] releases it as it goes.
    pub fn unsent<'a>(&'a self, ring: &'a Ring) -> [&'a [u8]; 3] {
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
pub struct Sub {
    /// The next byte not yet framed.
    pub offset: u64,
    pub inflight: Option<Inflight>,
    /// Set when the subscriber was cut off: what is left of its current
    /// frame followed by an ERROR frame, copied out of the ring so the ring
    /// can move on.
    pub evicted: Option<Vec<u8>>,
    /// Where the scrollback replay ends, while a REPLAY_END frame is owed.
    pub replay_end: Option<u64>,
}

impl Sub {
    /// The oldest ring byte this subscriber still needs.
    pub fn retains(&self) -> Option<u64> {
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

/// How the child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    pub code: i32,
}

#[derive(Debug)]
pub struct Shared {
    pub ring: Ring,
    pub scrollback: usize,
    pub classifier: Box<dyn StateClassifier>,
    pub clock: Clock,
    pub started_ms: u64,
    pub last_output_ms: Option<u64>,
    pub child_pid: u32,
    /// Set once the child has been reaped.
    pub ended: Option<Ended>,
    /// Set once every byte the child wrote has been read from the pty.
    pub output_closed: bool,
    pub size: Size,
    pub subs: HashMap<ConnId, Sub>,
    /// Connections that want an EXIT frame and have not had it yet.
    pub exit_waiters: usize,
    /// Whether the launcher's attach has subscribed, or a client asked
    /// for EXIT with its KILL (see `Options::await_attach`).
    pub end_awaited: bool,
    pub connections: usize,
    /// A pending kill: the grace period before SIGKILL, in ms.
    pub kill_requested: Option<u64>,
    pub default_grace_ms: u64,
    pub info: SessionInfo,
    /// The session's screen: an emulator fed the same bytes as the ring.
    pub screen: Term<Recorder>,
    /// The `agent` classifier, when the session has it.
    pub detector: Option<Detector>,
    /// Where process facts come from, for the detector.
    pub process: Option<ProcessProbe>,
    /// Subscribers whose terminal answers the program's queries itself
    /// ([`protocol::SUBSCRIBE_TERMINAL`]); while there is none, the
    /// supervisor answers them from its screen.
    pub terminals: usize,
    /// Answers owed to the program, written to the pty by the reader.
    pub answers: Vec<u8>,
    /// The state last reported to subscribers that asked for pushes, and
    /// a number that grows with each change.
    pub report: Option<StateReport>,
    pub report_seq: u64,
    next_conn: ConnId,
}

/// What INFO reports besides live values.
#[derive(Debug, Clone)]
pub struct SessionInfo {
    pub id: String,
    pub command: Vec<String>,
    pub workdir: String,
    pub supervisor_pid: u32,
    pub started_unix_ms: u64,
    pub classifier: &'static str,
    pub idle_threshold_ms: Option<u64>,
    /// A person's name for the session, besides its id.
    pub label: Option<String>,
}

impl Shared {
    pub fn new(
        scrollback: usize,
        classifier: Box<dyn StateClassifier>,
        clock: Clock,
        child_pid: u32,
        size: Size,
        default_grace_ms: u64,
        info: SessionInfo,
    ) -> Self {
        let started_ms = clock.now_ms();
        Shared {
            ring: Ring::new(scrollback.saturating_add(LAG_WINDOW)),
            scrollback,
            classifier,
            clock,
            started_ms,
            last_output_ms: None,
            child_pid,
            ended: None,
            output_closed: false,
            size,
            subs: HashMap::new(),
            exit_waiters: 0,
            end_awaited: false,
            connections: 0,
            kill_requested: None,
            default_grace_ms,
            screen: Term::with_callbacks(size, Recorder::default()),
            info,
            detector: None,
            process: None,
            terminals: 0,
            answers: Vec::new(),
            report: None,
            report_seq: 0,
            next_conn: 1,
        }
    }

    /// The same, classified by the `agent` classifier.
    pub fn with_detector(mut self, detector: Detector, process: Option<ProcessProbe>) -> Self {
        self.detector = Some(detector);
        self.process = process;
        self
    }

    pub fn new_conn_id(&mut self) -> ConnId {
        let id = self.next_conn;
        self.next_conn += 1;
        id
    }

    /// The answer to STATUS, evaluating idle transitions now.
    pub fn status(&mut self) -> Status {
        let now = self.clock.now_ms();
        let since = self.last_output_ms.unwrap_or(self.started_ms);
        let report = self.state_now();
        Status {
            pid: self.child_pid,
            idle_ms: u32::try_from(now.saturating_sub(since)).unwrap_or(u32::MAX),
            alive: self.ended.is_none(),
            state: report.state_byte,
            state_ms: u32::try_from(report.state_ms).unwrap_or(u32::MAX),
        }
    }

    /// The agent's verdict now (with fresh process facts), if the session
    /// has the `agent` classifier.
    pub fn verdict(&mut self) -> Option<Verdict> {
        let now = self.clock.now_ms();
        let detector = self.detector.as_mut()?;
        if detector.settings().process_evidence
            && self.ended.is_none()
            && let Some(facts) = self.process.as_ref().and_then(ProcessProbe::facts)
        {
            detector.process(facts, now);
        }
        Some(detector.verdict(self.screen.screen(), now))
    }

    /// The session's state now, whichever classifier it has.
    pub fn state_now(&mut self) -> StateReport {
        let now = self.clock.now_ms();
        self.classifier.tick(now);
        if let Some(v) = self.verdict() {
            let state = ProcessState::of_primary(v.primary);
            return StateReport {
                state: state.name().to_string(),
                state_byte: state.as_byte(),
                primary: v.primary,
                detail: v.detail,
                health: v.health,
                agent: v.agent,
                state_ms: now.saturating_sub(v.since_ms),
                signals: v.signals,
                children: self
                    .detector
                    .as_ref()
                    .map(|d| d.table().children.clone())
                    .unwrap_or_default(),
            };
        }
        let state = if self.ended.is_some() {
            ProcessState::Dead
        } else {
            self.classifier.state()
        };
        StateReport {
            state: state.name().to_string(),
            state_byte: state.as_byte(),
            primary: state.primary(),
            detail: None,
            health: if self.ended.is_some() {
                Health::Dead
            } else {
                Health::Alive
            },
            agent: None,
            state_ms: u64::from(self.classifier.state_ms(now)),
            signals: Vec::new(),
            children: Vec::new(),
        }
    }

    /// Re-evaluates the state; true if it changed since last reported
    /// (STATE frames are then owed to the subscribers that asked).
    pub fn refresh_report(&mut self) -> bool {
        let now = self.state_now();
        let changed = self.report.as_ref().is_none_or(|old| old.differs(&now));
        if changed {
            self.report_seq += 1;
        }
        self.report = Some(now);
        changed
    }

    /// When the state may next change with no output: an idle threshold
    /// or the detector's `stuck_after` running out. `None` while nothing is
    /// pending, so an idle session costs no wake-up.
    pub fn next_state_change_ms(&self) -> Option<u64> {
        if self.ended.is_some() {
            return None;
        }
        if let Some(d) = &self.detector {
            return d.wake_at();
        }
        let busy = self
            .report
            .as_ref()
            .is_some_and(|r| r.primary == Primary::Active);
        let threshold = self.info.idle_threshold_ms?;
        let last = self.last_output_ms?;
        busy.then_some(last + threshold + 1)
    }

    /// The INFO payload: a JSON object (see docs/protocol.md).
    pub fn info_json(&mut self) -> Vec<u8> {
        let i = &self.info;
        let mut v = serde_json::json!({
            "id": i.id,
            "pid": self.child_pid,
            "supervisor_pid": i.supervisor_pid,
            "command": i.command,
            "workdir": i.workdir,
            "started_unix_ms": i.started_unix_ms,
            "classifier": i.classifier,
            "idle_threshold_ms": i.idle_threshold_ms,
            "cols": self.size.cols,
            "rows": self.size.rows,
            "scrollback_bytes": self.scrollback,
            "version": env!("CARGO_PKG_VERSION"),
            "label": i.label,
            // This supervisor answers the OSC 7501 probe itself: a client
            // that shows the output on a terminal must drop the probe, so
            // that the program gets one answer.
            "status_protocol": self
                .detector
                .as_ref()
                .is_some_and(|d| d.settings().status_protocol),
        });
        v["state"] = serde_json::to_value(self.state_now()).unwrap_or_default();
        if let Some(d) = &self.detector {
            v["evidence"] =
                serde_json::to_value(d.evidence(self.clock.now_ms())).unwrap_or_default();
        }
        serde_json::to_vec(&v).unwrap_or_default()
    }

    /// The SCREEN payload: the screen as plain text rows, with its size,
    /// cursor and title.
    pub fn screen_json(&self) -> Vec<u8> {
        let screen = self.screen.screen();
        let (rows, cols) = screen.size();
        let (cursor_row, cursor_col) = screen.cursor_position();
        serde_json::to_vec(&serde_json::json!({
            "cols": cols,
            "rows": rows,
            "cursor_row": cursor_row,
            "cursor_col": cursor_col,
            "alternate_screen": screen.alternate_screen(),
            // Arrow keys are sent as SS3 (`ESC O A`) in this mode.
            "application_cursor": screen.application_cursor(),
            "title": self.screen.callbacks().title,
            "text": screen.contents(),
        }))
        .unwrap_or_default()
    }

    /// The STATE payload: the state now, as JSON.
    pub fn state_json(&self) -> Vec<u8> {
        serde_json::to_vec(&self.report).unwrap_or_default()
    }

    /// Records bytes just committed to the ring: the classifier and the
    /// screen see them, and queries nobody else will answer are answered.
    pub fn note_output(&mut self, from: u64, to: u64) {
        let now = self.clock.now_ms();
        self.last_output_ms = Some(now);
        // Field by field: the chunks borrow the ring while the rest moves.
        let Shared {
            ring,
            classifier,
            screen,
            detector,
            answers,
            terminals,
            ..
        } = self;
        let Some((a, b)) = ring.slices(from, to) else {
            return;
        };
        // One record per read, as the classifiers expect; a read never
        // wraps the ring (see `Ring::spare`), so `b` is empty.
        for chunk in [a, b] {
            if chunk.is_empty() {
                continue;
            }
            classifier.record(chunk, now);
            screen.feed(chunk);
            if !screen.callbacks_mut().is_empty() {
                for event in screen.callbacks_mut().take() {
                    if let TermEvent::Query(query) = &event
                        && let Some(answer) = query.answer()
                    {
                        // The status probe is answered here whether or not
                        // a terminal is attached (attached clients drop it,
                        // see INFO's `status_protocol`), and at once: its
                        // answer must reach the program before the answer
                        // to the device-attributes query that follows it.
                        let ours = match query {
                            Query::StatusProtocol => detector
                                .as_ref()
                                .is_some_and(|d| d.settings().status_protocol),
                            _ => *terminals == 0,
                        };
                        if ours {
                            answers.extend_from_slice(&answer);
                        }
                    }
                    if let Some(d) = detector.as_mut() {
                        d.event(&event, now);
                    }
                }
            }
            if let Some(d) = detector.as_mut() {
                d.output(chunk, now);
            }
        }
    }

    /// The session was resized: the screen follows, and the redraw that
    /// answers it is not work.
    pub fn resized(&mut self, size: Size) {
        self.size = size;
        self.screen.resize(size);
        let now = self.clock.now_ms();
        if let Some(d) = &mut self.detector {
            d.resized(now);
        }
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
            let error = protocol::frame(
                server::ERROR,
                &protocol::encode_error(ErrorCode::TooSlow, &msg),
            );
            self.cut_off(*id, &[], &error);
        }
        ids.len()
    }

    /// Ends a subscription without corrupting the stream: the rest of a
    /// frame already partly written is copied out of the ring, followed by
    /// `queued` (answers owed) and `last` (an ERROR frame); the connection
    /// writes that tail and closes.
    pub fn cut_off(&mut self, id: ConnId, queued: &[u8], last: &[u8]) {
        let Some(sub) = self.subs.get_mut(&id) else {
            return;
        };
        let mut tail = Vec::new();
        if let Some(f) = sub.inflight.take().filter(|f| f.sent > 0) {
            for part in f.unsent(&self.ring) {
                tail.extend_from_slice(part);
            }
        }
        tail.extend_from_slice(queued);
        tail.extend_from_slice(last);
        sub.evicted = Some(tail);
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
            header: protocol::header(server::OUTPUT, len as u32),
            start: sub.offset,
            len,
            sent: 0,
        });
        sub.offset += len as u64;
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

    /// True when a subscriber has had every byte and the child's output is
    /// over, so its EXIT frame is due.
    pub fn exit_due(&self, id: ConnId) -> bool {
        let head = self.ring.head();
        self.output_closed
            && self.ended.is_some()
            && self
                .subs
                .get(&id)
                .is_none_or(|s| s.inflight.is_none() && s.offset >= head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::ClassifierSpec;
    use crate::protocol::{Assembler, MAX_PAYLOAD};
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

    fn shared(scrollback: usize) -> Shared {
        let clock = Clock::new();
        let info = SessionInfo {
            id: "p".into(),
            command: vec![],
            workdir: "/".into(),
            supervisor_pid: 1,
            started_unix_ms: 0,
            classifier: "none",
            idle_threshold_ms: None,
            label: None,
        };
        let size = Size { cols: 80, rows: 24 };
        Shared::new(
            scrollback,
            ClassifierSpec::None.build(0),
            clock,
            2,
            size,
            0,
            info,
        )
    }

    /// What `client.rs` does when a socket takes `room` bytes: the rest of
    /// a frame in flight, then a new one; REPLAY_END between frames.
    fn send(s: &mut Shared, id: ConnId, room: usize, c: &mut Client) {
        let mut room = room;
        while room > 0 {
            if let Some(tail) = s.subs.get(&id).and_then(|sub| sub.evicted.clone()) {
                c.wire.extend(tail);
                s.subs.remove(&id);
                c.cut = true;
                return;
            }
            if s.take_replay_end(id) {
                c.wire.extend(protocol::frame(server::REPLAY_END, &[]));
            }
            s.start_frame(id);
            let Some(f) = s.subs.get(&id).and_then(|sub| sub.inflight) else {
                return;
            };
            let unsent: Vec<u8> = f.unsent(&s.ring).concat();
            let n = unsent.len().min(room);
            c.wire.extend_from_slice(&unsent[..n]);
            room -= n;
            let sub = s.subs.get_mut(&id).expect("subscribed");
            let f = sub.inflight.as_mut().expect("in flight");
            f.sent += n;
            if f.done() {
                sub.inflight = None;
            }
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
            let mut s = shared(scrollback);
            let mut produced: Vec<u8> = Vec::new();
            let mut clients: Vec<Option<Client>> = vec![None, None, None];
            for op in ops {
                match op {
                    Op::Print(n) => {
                        let n = n.min(s.read_budget());
                        let mut left = n;
                        while left > 0 {
                            let from = s.ring.head();
                            let spare = s.ring.spare(left);
                            let k = spare.len();
                            for (i, b) in spare.iter_mut().enumerate() {
                                *b = (produced.len() + i) as u8 ^ 0x5a;
                            }
                            produced.extend_from_slice(spare);
                            s.ring.commit(k);
                            s.note_output(from, from + k as u64);
                            left -= k;
                        }
                    }
                    Op::Subscribe(k, mark) => {
                        if clients[k].is_none() {
                            let id = k as ConnId;
                            s.subscribe(id, mark);
                            let sub = &s.subs[&id];
                            clients[k] = Some(Client {
                                start: sub.offset,
                                replay_end: sub.replay_end,
                                ..Client::default()
                            });
                            // The scrollback is the last `scrollback` bytes.
                            let head = s.ring.head();
                            prop_assert_eq!(sub.offset, head - (scrollback as u64).min(head));
                        }
                    }
                    Op::Send(k, room) => {
                        if let Some(c) = clients[k].as_mut().filter(|c| !c.cut) {
                            send(&mut s, k as ConnId, room, c);
                        }
                    }
                    Op::CutOff(k) => {
                        if let Some(at) = s.subs.get(&(k as ConnId)).and_then(Sub::retains) {
                            s.evict_at(at, 1);
                            let head = s.ring.head();
                            for (j, c) in clients.iter_mut().enumerate() {
                                let evicted = s.subs.get(&(j as ConnId)).is_some_and(|sub| sub.evicted.is_some());
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
                    send(&mut s, k as ConnId, usize::MAX, c);
                }
            }
            let head = s.ring.head();
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
