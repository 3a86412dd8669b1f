//! A connection's outbound half: the control frames it is owed (answers,
//! STATE, REPLAY_END, MARK, EXIT, ERROR) queued in order, OUTPUT frames straight
//! from the ring, both written with one `writev`; and the grace a closing
//! connection gets to read what it is owed.

use std::io::{self, IoSlice};
use std::os::fd::OwnedFd;
use std::rc::Rc;
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tracing::warn;

use crate::clock::Instant;
use crate::protocol::{ErrorCode, MODE_BINARY, Reply};

use super::Role;
use crate::supervisor::context::Ctx;
use crate::supervisor::output::ConnId;

/// Control frames (STATUS_RESP, INFO...) a client may have queued before
/// we stop reading its requests until it reads our answers.
const CTRL_LIMIT: usize = 64 * 1024;
/// How long a connection being closed (cut off, or after an ERROR) gets to
/// read what it is owed before it is dropped.
const CLOSE_GRACE: Duration = Duration::from_secs(10);

#[derive(Debug)]
pub(super) struct Outbound {
    /// The socket watched for room to write, only from when a write finds
    /// it full until nothing more is owed.
    sock_w: Option<AsyncFd<OwnedFd>>,
    /// Control frames owed, and how much of them has been written.
    ctrl: Vec<u8>,
    ctrl_pos: usize,
    /// The report sequence of the last STATE frame queued.
    state_seen: u64,
    /// The INFO sequence this connection has heard of (see
    /// `Shared::info_seq`).
    pub(super) info_seen: u64,
    exit_queued: bool,
    /// After an ERROR: finish writing, then close.
    closing: bool,
    /// How much of a cut-off subscriber's tail has been written.
    evicted_pos: usize,
    close_by: Option<Instant>,
}

impl Outbound {
    /// Owes the mode byte, which every connection gets first.
    pub(super) fn new() -> Outbound {
        Outbound {
            sock_w: None,
            ctrl: vec![MODE_BINARY],
            ctrl_pos: 0,
            state_seen: 0,
            info_seen: 0,
            exit_queued: false,
            closing: false,
            evicted_pos: 0,
            close_by: None,
        }
    }

    /// Queues a control frame after those already owed.
    pub(super) fn queue(&mut self, reply: &Reply) {
        self.ctrl.extend(reply.encode());
    }

    /// Whether more requests may be handled: not closing, and the client
    /// has read enough of its answers.
    pub(super) fn takes_requests(&self) -> bool {
        !self.closing && self.ctrl.len() - self.ctrl_pos < CTRL_LIMIT
    }

    pub(super) fn closing(&self) -> bool {
        self.closing
    }

    /// When a closing connection is dropped whether or not it has read
    /// what it is owed.
    pub(super) fn close_by(&self) -> Option<Instant> {
        self.close_by
    }

    pub(super) fn exit_written(&self) -> bool {
        self.exit_queued && self.ctrl_pos == self.ctrl.len()
    }

    /// Queues an ERROR frame and closes once it is written; the connection
    /// stops being a subscriber at once.
    pub(super) fn fail(&mut self, ctx: &Ctx, id: ConnId, code: ErrorCode, msg: &str) {
        warn!(conn = id, "closing connection: {msg}");
        self.queue(&Reply::error(code, msg));
        self.closing = true;
        self.close_by = Some(ctx.clock.now() + CLOSE_GRACE);
        ctx.shared.borrow_mut().unsubscribe(id);
    }

    /// Decides what is owed next; true if anything is to be written.
    pub(super) fn prepare(&mut self, ctx: &Ctx, id: ConnId, role: &Role) -> bool {
        let mut s = ctx.shared.borrow_mut();
        if let Some(tail) = s.output().evicted_tail(id) {
            if self.close_by.is_none() {
                self.close_by = Some(ctx.clock.now() + CLOSE_GRACE);
                self.closing = true;
            }
            return self.evicted_pos < tail.len() || self.ctrl_pos < self.ctrl.len();
        }
        if role.subscribed {
            if let Some(end) = s.output_mut().take_replay_end(id) {
                if end.marker {
                    self.queue(&Reply::ReplayEnd);
                }
                if let Some(screen) = end.repaint {
                    self.queue(&Reply::Output(screen.into_vec()));
                }
            }
            // A new label, with the INFO that says it.
            if role.wants_state && self.info_seen != s.info_seq() && !self.closing {
                self.info_seen = s.info_seq();
                self.queue(&Reply::Info(Box::new(s.relabelled_info())));
            }
            if role.wants_state && self.state_seen != s.report_seq() && !self.closing {
                self.state_seen = s.report_seq();
                // The last report taken (one exists once the tracker ran;
                // the subscription itself took one).
                if let Some(report) = s.reported() {
                    self.queue(&Reply::State(Box::new(report.clone())));
                }
            }
            // Between frames, where it falls: the next frame ends at the
            // mark after it.
            if let Some(mark) = s.output_mut().take_mark(id) {
                self.queue(&Reply::Mark(mark));
            }
            s.output_mut().start_frame(id);
        }
        if role.awaits_exit() && !self.exit_queued && !self.closing && s.exit_due(id) {
            let code = s.exit_code().unwrap_or(-1);
            self.queue(&Reply::Exit(code));
            self.exit_queued = true;
        }
        s.output().inflight(id).is_some() || self.ctrl_pos < self.ctrl.len()
    }

    /// One `writev` of everything owed, in order: the rest of a started
    /// OUTPUT frame, queued control frames, then a new OUTPUT frame.
    /// False when nothing was written (the socket is full).
    pub(super) fn write(
        &mut self,
        ctx: &Ctx,
        id: ConnId,
        sock: &AsyncFd<Rc<OwnedFd>>,
    ) -> io::Result<bool> {
        let mut s = ctx.shared.borrow_mut();
        let was_exit_written = self.exit_written();
        // A cut-off subscriber only gets its copied tail.
        if let Some(tail) = s.output().evicted_tail(id) {
            let n =
                crate::fd::write_some(sock.get_ref(), &[IoSlice::new(&tail[self.evicted_pos..])])?;
            self.evicted_pos += n;
            if self.evicted_pos == tail.len() {
                self.closing = true;
                self.close_by = Some(ctx.clock.now());
            }
            return Ok(n > 0);
        }
        let output = s.output();
        let inflight = output.inflight(id);
        // A frame already partly on the wire must be finished before
        // anything else; otherwise answers go first.
        let frame_first = inflight.is_some_and(|f| f.started());
        let n = {
            let frame: Vec<&[u8]> = match &inflight {
                Some(f) => output
                    .unsent(f)
                    .into_iter()
                    .filter(|p| !p.is_empty())
                    .collect(),
                None => Vec::new(),
            };
            let ctrl = &self.ctrl[self.ctrl_pos..];
            let mut iov: Vec<IoSlice<'_>> = Vec::with_capacity(4);
            if frame_first {
                iov.extend(frame.iter().map(|p| IoSlice::new(p)));
            }
            if !ctrl.is_empty() {
                iov.push(IoSlice::new(ctrl));
            }
            if !frame_first {
                iov.extend(frame.iter().map(|p| IoSlice::new(p)));
            }
            if iov.is_empty() {
                return Ok(false);
            }
            crate::fd::write_some(sock.get_ref(), &iov)?
        };
        // Account for what was written, in the same order.
        let mut left = n;
        if frame_first {
            left -= s.frame_sent(id, left);
        }
        let k = left.min(self.ctrl.len() - self.ctrl_pos);
        self.ctrl_pos += k;
        left -= k;
        if !frame_first {
            s.frame_sent(id, left);
        }
        if self.ctrl_pos == self.ctrl.len() {
            self.ctrl.clear();
            self.ctrl_pos = 0;
        }
        if !was_exit_written && self.exit_written() {
            s.exit_settled();
        }
        Ok(n > 0)
    }

    /// The last STATE report queued.
    pub(super) fn state_seen(&self) -> u64 {
        self.state_seen
    }

    pub(super) fn watching_room(&self) -> bool {
        self.sock_w.is_some()
    }

    /// Watches `sock` for room to write: a write found it full.
    pub(super) fn watch_room(&mut self, sock: &AsyncFd<Rc<OwnedFd>>) -> io::Result<()> {
        self.sock_w = Some(crate::fd::watch_room(sock.get_ref())?);
        Ok(())
    }

    /// Nothing more is owed: stop watching for room.
    pub(super) fn stop_watching_room(&mut self) {
        self.sock_w = None;
    }

    /// Waits for room to write (forever unless watching for it).
    pub(super) async fn room(&self) -> io::Result<()> {
        crate::fd::room(self.sock_w.as_ref()).await
    }
}
