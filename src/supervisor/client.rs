//! One client connection to the supervisor: reads its frames, writes the
//! frames it is owed, and keeps both directions flowing independently.
//!
//! INPUT is written to the pty master from this task (no thread hop) once
//! its frame is complete: a client that hangs up half-way through a frame
//! must not have half a command line typed. When the pty is full the rest
//! waits here and the client's socket is not read until it drains, which
//! is backpressure rather than loss.
//! Output is written with one `writev` per frame straight from the ring.
//! A client that never reads costs at most one in-flight frame: the reader
//! task stops at the lag window and, if this client makes no progress for
//! too long, cuts it off with an ERROR frame.

use std::cell::{Cell, RefCell};
use std::io::{self, IoSlice};
use std::ops::Range;
use std::os::fd::{AsFd, OwnedFd};
use std::rc::Rc;
use std::time::Duration;

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::net::UnixStream;
use tokio::sync::{Notify, watch};
use tracing::{debug, warn};

use crate::clock::{Clock, Instant};
use crate::protocol::{
    self, ErrorCode, HEADER_LEN, MAX_PAYLOAD, MODE_BINARY, Piece, Size, Splitter, client, server,
};
use crate::pty;

use super::state::{ConnId, Shared};

/// Control frames (STATUS_RESP, INFO...) a client may have queued before
/// we stop reading its requests until it reads our answers.
const CTRL_LIMIT: usize = 64 * 1024;
/// How long a connection being closed (cut off, or after an ERROR) gets to
/// read what it is owed before it is dropped.
const CLOSE_GRACE: Duration = Duration::from_secs(10);
const READ_BUF: usize = 8 * 1024;
/// Unfinished INPUT payloads all connections together may hold. A frame
/// may declare up to [`MAX_PAYLOAD`], and a payload takes effect only when
/// it is whole, so what has arrived is kept; this bounds what clients that
/// never finish their frames can make the supervisor hold.
const INPUT_HELD_LIMIT: usize = 8 * 1024 * 1024;

/// What every connection task shares.
#[derive(Debug)]
pub struct Ctx {
    pub shared: Rc<RefCell<Shared>>,
    /// The session's clock (the one `shared` keeps), readable without a
    /// borrow: every task's "now" and timer deadlines come from it.
    pub clock: Clock,
    pub master: Rc<AsyncFd<OwnedFd>>,
    /// Bumped whenever output, the child's fate or a subscriber's eviction
    /// changes.
    pub changed: watch::Receiver<()>,
    /// Tells the pty reader that a subscriber made room.
    pub space: Rc<Notify>,
    /// Tells the main loop about kill requests and finished exit waiters.
    pub wake_main: Rc<Notify>,
    /// Tells the accept loop a connection closed: a descriptor is free.
    pub conn_closed: Rc<Notify>,
    /// Tells the state tracker that output came, the session was resized
    /// or the program ended: the state may have changed.
    pub output_seen: Rc<Notify>,
    /// Bytes of INPUT payload held by all connections, complete or not,
    /// that the pty has not taken yet (bounded by [`INPUT_HELD_LIMIT`]).
    pub input_held: Cell<usize>,
}

impl Ctx {
    /// The context of a session whose state is `shared`, read from `master`
    /// (watched for reading only), with `changed` bumped by its pty reader.
    pub fn new(shared: Shared, master: AsyncFd<OwnedFd>, changed: watch::Receiver<()>) -> Ctx {
        Ctx {
            clock: shared.clock,
            shared: Rc::new(RefCell::new(shared)),
            master: Rc::new(master),
            changed,
            space: Rc::new(Notify::new()),
            wake_main: Rc::new(Notify::new()),
            conn_closed: Rc::new(Notify::new()),
            output_seen: Rc::new(Notify::new()),
            input_held: Cell::new(0),
        }
    }
}

#[derive(Debug)]
struct Conn {
    id: ConnId,
    /// The client's socket, watched for reading only. Watched for room to
    /// write as well, it would wake the supervisor each time the client
    /// took a frame (every write's completion raises an EPOLLOUT edge):
    /// one useless wake-up per frame per subscriber.
    sock: AsyncFd<OwnedFd>,
    /// The same socket watched for room to write, only from when a write
    /// finds it full until nothing more is owed.
    sock_w: Option<AsyncFd<OwnedFd>>,
    splitter: Splitter,
    rbuf: Vec<u8>,
    rpos: usize,
    rlen: usize,
    read_eof: bool,
    /// Type and length of the frame being received, and the start of its
    /// payload (RESIZE, KILL, SUBSCRIBE flags); other payloads are
    /// collected (INPUT) or discarded.
    cur: u8,
    cur_len: u32,
    small: Vec<u8>,
    /// The INPUT payload received so far, written to the pty only once
    /// its frame is complete; counted in [`Ctx::input_held`].
    input: Vec<u8>,
    /// The part of `input` the pty has refused so far.
    blocked: Option<Range<usize>>,
    /// The pty master watched for room, only while INPUT is blocked: the
    /// shared one is watched for reading only, or every read the child
    /// makes of its input would wake the supervisor (an EPOLLOUT edge) in
    /// the middle of each keystroke's echo.
    pty_w: Option<AsyncFd<OwnedFd>>,
    /// After a subscriber's input ends: the socket watched for room, which
    /// is how its closing entirely shows (see the hang-up branch in `run`).
    /// It also wakes, needlessly, each time such a client reads a frame.
    hup_w: Option<AsyncFd<OwnedFd>>,
    ctrl: Vec<u8>,
    ctrl_pos: usize,
    subscribed: bool,
    /// Subscribed as a terminal that answers the program's queries.
    terminal: bool,
    /// Subscribed for STATE frames; `state_seen` is the last one sent.
    wants_state: bool,
    state_seen: u64,
    wants_exit: bool,
    exit_queued: bool,
    /// After an ERROR: finish writing, then close.
    closing: bool,
    evicted_pos: usize,
    close_by: Option<Instant>,
}

/// Serves one accepted connection until it closes.
pub async fn serve(ctx: Rc<Ctx>, stream: UnixStream) {
    let id = ctx.shared.borrow_mut().new_conn_id();
    let sock = match stream
        .into_std()
        .and_then(|s| pty::register_fd_for(OwnedFd::from(s), Interest::READABLE))
    {
        Ok(sock) => sock,
        Err(e) => {
            warn!(conn = id, "cannot watch the connection: {e}");
            ctx.shared.borrow_mut().connections -= 1;
            return;
        }
    };
    let mut conn = Conn {
        id,
        sock,
        sock_w: None,
        splitter: Splitter::new(MAX_PAYLOAD),
        rbuf: Vec::new(),
        rpos: 0,
        rlen: 0,
        read_eof: false,
        cur: 0,
        cur_len: 0,
        small: Vec::new(),
        input: Vec::new(),
        blocked: None,
        pty_w: None,
        hup_w: None,
        ctrl: vec![MODE_BINARY],
        ctrl_pos: 0,
        subscribed: false,
        terminal: false,
        wants_state: false,
        state_seen: 0,
        wants_exit: false,
        exit_queued: false,
        closing: false,
        evicted_pos: 0,
        close_by: None,
    };
    if let Err(e) = conn.run(&ctx).await {
        // A client closing its end while we write is ordinary; anything
        // else (a timeout, a cut-off client) is worth seeing in the log.
        if matches!(
            e.kind(),
            io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
        ) {
            debug!(conn = id, "connection closed by the client: {e}");
        } else {
            warn!(conn = id, "connection dropped: {e}");
        }
    }
    conn.release_input(&ctx);
    let mut s = ctx.shared.borrow_mut();
    s.connections -= 1;
    if conn.terminal {
        s.terminals -= 1;
    }
    if s.subs.remove(&id).is_some() || conn.wants_exit {
        ctx.space.notify_one();
    }
    if (conn.subscribed || conn.wants_exit) && !conn.exit_written() {
        s.exit_waiters = s.exit_waiters.saturating_sub(1);
    }
    ctx.wake_main.notify_one();
    ctx.conn_closed.notify_one();
}

impl Conn {
    fn exit_written(&self) -> bool {
        self.exit_queued && self.ctrl_pos == self.ctrl.len()
    }

    async fn run(&mut self, ctx: &Ctx) -> io::Result<()> {
        let mut changed = ctx.changed.clone();
        loop {
            changed.borrow_and_update();
            self.process(ctx);
            let pending = self.prepare(ctx);
            if pending && self.sock_w.is_none() {
                // The socket usually has room: write at once, and watch it
                // for room only once it is full.
                if self.write(ctx)? {
                    continue;
                }
                self.sock_w = Some(pty::watch_room(self.sock.get_ref())?);
            }
            if !pending {
                self.sock_w = None;
                if self.done() {
                    return Ok(());
                }
            }
            if self.rbuf.is_empty() {
                self.rbuf = vec![0; READ_BUF];
            }
            let can_read = !self.closing
                && !self.read_eof
                && self.blocked.is_none()
                && self.rpos == self.rlen
                && self.ctrl.len() - self.ctrl_pos < CTRL_LIMIT;
            let watching = (self.subscribed || self.wants_exit) && !pending;
            let close_by = self.close_by.unwrap_or_else(|| ctx.clock.now());
            tokio::select! {
                r = pty::room(self.sock_w.as_ref()), if pending => {
                    r?;
                    self.write(ctx)?;
                }
                r = pty::room(self.pty_w.as_ref()), if self.blocked.is_some() => {
                    r?;
                    self.flush_input(ctx);
                }
                r = pty::read_some(&self.sock, &mut self.rbuf), if can_read => {
                    match r? {
                        0 => {
                            self.read_eof = true;
                            // A subscriber waits for EXIT after its input
                            // ends, unless it hung up: then it would hold
                            // its connection (one of 1024) until output.
                            if self.subscribed || self.wants_exit {
                                if hung_up(&self.sock) {
                                    debug!(conn = self.id, "the client hung up");
                                    return Ok(());
                                }
                                // A hang-up raises no new read edge once
                                // the end of input has been seen (tokio keeps
                                // "read closed" set), but it does end the
                                // room to write: watch a duplicate for that.
                                // Out of descriptors it is noticed at the
                                // next output instead, as before.
                                self.hup_w = pty::watch_room(self.sock.get_ref())
                                    .inspect_err(|e| debug!(conn = self.id, "cannot watch for a hang-up: {e}"))
                                    .ok();
                            }
                        }
                        n => {
                            self.rpos = 0;
                            self.rlen = n;
                        }
                    }
                }
                // A subscriber whose input has ended (a half-close) is
                // still owed output and EXIT; this notices when it then
                // closes entirely, so a silent session does not hold the
                // connection until its next output.
                r = pty::room(self.hup_w.as_ref()), if self.hup_w.is_some() => {
                    r?;
                    if hung_up(&self.sock) {
                        debug!(conn = self.id, "the client hung up");
                        return Ok(());
                    }
                }
                c = changed.changed(), if watching => {
                    if c.is_err() {
                        return Ok(());
                    }
                }
                () = tokio::time::sleep_until(close_by), if self.close_by.is_some() => {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "closing connection did not read its last frames"));
                }
            }
        }
    }

    /// True when nothing more will ever be written or read.
    fn done(&self) -> bool {
        if self.closing {
            return true;
        }
        if self.subscribed || self.wants_exit {
            return self.exit_written();
        }
        self.read_eof && self.rpos == self.rlen && self.blocked.is_none()
    }

    /// Handles buffered client bytes until they run out, the pty pushes
    /// back, or too many answers are waiting to be read.
    fn process(&mut self, ctx: &Ctx) {
        while (self.rpos < self.rlen || self.splitter.end_pending())
            && self.blocked.is_none()
            && !self.closing
            && self.ctrl.len() - self.ctrl_pos < CTRL_LIMIT
        {
            let at = self.rpos;
            let step = self.splitter.next(&self.rbuf[at..self.rlen]);
            let (used, piece) = match step {
                Ok((used, piece)) => (used, piece.map(Owned::from)),
                Err(e) => {
                    self.fail(ctx, ErrorCode::FrameTooLarge, &e.to_string());
                    return;
                }
            };
            self.rpos += used;
            match piece {
                None => {}
                Some(Owned::Start(ty, len)) => {
                    self.cur = ty;
                    self.cur_len = len;
                    self.small.clear();
                    if ty == client::RESIZE && len != 4 {
                        let msg = format!("RESIZE payload must be 4 bytes, got {len}");
                        self.fail(ctx, ErrorCode::MalformedPayload, &msg);
                        return;
                    }
                }
                Some(Owned::Data) => match self.cur {
                    client::INPUT => self.hold_input(at..at + used, ctx),
                    client::RESIZE | client::KILL | client::SUBSCRIBE => {
                        let take = used.min(4 - self.small.len().min(4));
                        self.small.extend_from_slice(&self.rbuf[at..at + take]);
                    }
                    _ => {}
                },
                Some(Owned::End(ty)) => self.dispatch(ty, ctx),
            }
        }
    }

    /// Keeps part of an INPUT payload until its frame is complete.
    fn hold_input(&mut self, range: Range<usize>, ctx: &Ctx) {
        let held = ctx.input_held.get() + range.len();
        if held > INPUT_HELD_LIMIT {
            let msg = format!(
                "clients hold {} KiB of unfinished input, the most the session keeps; this frame was dropped",
                INPUT_HELD_LIMIT / 1024
            );
            self.fail(ctx, ErrorCode::Unavailable, &msg);
            return;
        }
        ctx.input_held.set(held);
        self.input.extend_from_slice(&self.rbuf[range]);
    }

    /// Forgets the INPUT payload held, written or not.
    fn release_input(&mut self, ctx: &Ctx) {
        ctx.input_held.set(ctx.input_held.get() - self.input.len());
        self.blocked = None;
        // A pasted megabyte need not stay allocated for the next keystroke.
        if self.input.capacity() > READ_BUF {
            self.input = Vec::new();
        } else {
            self.input.clear();
        }
    }

    /// Writes the held INPUT payload (or the part of it in `range`) to the
    /// pty, until the pty pushes back.
    fn input(&mut self, mut range: Range<usize>, ctx: &Ctx) {
        if ctx.shared.borrow().ended.is_some() {
            self.release_input(ctx);
            // A subscriber is owed its EXIT, which says as much (a key
            // typed as the program ends must not cost the exit code).
            if self.subscribed {
                debug!(conn = self.id, "input after the end dropped");
                return;
            }
            self.fail(
                ctx,
                ErrorCode::Unavailable,
                "the session has exited; input was not delivered",
            );
            return;
        }
        while !range.is_empty() {
            match nix::unistd::write(ctx.master.get_ref(), &self.input[range.clone()]) {
                Ok(n) => range.start += n,
                Err(nix::Error::EINTR) => {}
                Err(nix::Error::EAGAIN) => {
                    if self.pty_w.is_none() {
                        match pty::watch_room(ctx.master.get_ref()) {
                            Ok(w) => self.pty_w = Some(w),
                            // Out of descriptors: say the input was not all
                            // delivered rather than drop it unannounced.
                            Err(e) => {
                                let msg = format!("the pty is full and cannot be waited on: {e}");
                                self.fail(ctx, ErrorCode::Unavailable, &msg);
                                return;
                            }
                        }
                    }
                    self.blocked = Some(range);
                    return;
                }
                Err(e) => {
                    debug!(conn = self.id, "pty write failed: {e}");
                    break;
                }
            }
        }
        self.pty_w = None;
        self.release_input(ctx);
    }

    /// Writes INPUT that the pty refused, once it has room again.
    fn flush_input(&mut self, ctx: &Ctx) {
        if let Some(range) = self.blocked.take() {
            self.input(range, ctx);
        }
    }

    fn dispatch(&mut self, ty: u8, ctx: &Ctx) {
        match ty {
            client::SUBSCRIBE => {
                if !self.subscribed {
                    self.subscribed = true;
                    let flags = self.small.first().copied().unwrap_or(0);
                    let mut s = ctx.shared.borrow_mut();
                    s.subscribe(self.id, flags & protocol::SUBSCRIBE_MARK_REPLAY != 0);
                    if flags & protocol::SUBSCRIBE_TERMINAL != 0 {
                        self.terminal = true;
                        s.terminals += 1;
                    }
                    if flags & protocol::SUBSCRIBE_STATE != 0 {
                        self.wants_state = true;
                        // The state as it is now comes first.
                        s.refresh_report();
                    }
                    if !self.wants_exit {
                        s.exit_waiters += 1;
                    }
                    // A session kept for its launcher (the `hm run` attach
                    // or the dashboard that started it) ends once that has
                    // come (see `Options::await_attach`); anyone else
                    // subscribing does not count.
                    if flags & protocol::SUBSCRIBE_LAUNCHER != 0 && !s.end_awaited {
                        s.end_awaited = true;
                        drop(s);
                        ctx.wake_main.notify_one();
                    }
                }
            }
            client::STATUS => {
                let st = ctx.shared.borrow_mut().status();
                self.ctrl
                    .extend(protocol::frame(server::STATUS_RESP, &st.encode()));
            }
            client::RESIZE => {
                let Ok(size) = Size::decode(&self.small) else {
                    return;
                };
                let size = size.clamped();
                if let Err(e) = pty::resize(ctx.master.get_ref(), size) {
                    debug!("resize failed: {e}");
                }
                ctx.shared.borrow_mut().resized(size);
                ctx.output_seen.notify_one();
            }
            client::KILL => {
                let grace = if self.cur_len == 4 {
                    protocol::decode_kill(&self.small)
                } else {
                    None
                };
                // u32::MAX asks for EXIT on this connection with the
                // supervisor's own grace period.
                let explicit = grace.filter(|g| *g != u32::MAX);
                let mut s = ctx.shared.borrow_mut();
                s.kill_requested = Some(match (s.kill_requested, explicit) {
                    (Some(old), Some(new)) => old.min(u64::from(new)),
                    (Some(old), None) => old,
                    (None, g) => g.map_or(s.default_grace_ms, u64::from),
                });
                // Our own `hm kill` sends an explicit grace and waits for
                // EXIT on this connection; plain KILL keeps the original
                // fire-and-forget behaviour.
                if grace.is_some() {
                    if !self.wants_exit && !self.subscribed {
                        s.exit_waiters += 1;
                    }
                    s.end_awaited = true;
                    self.wants_exit = true;
                }
                drop(s);
                ctx.wake_main.notify_one();
            }
            client::INFO => {
                let json = ctx.shared.borrow_mut().info_json();
                self.ctrl.extend(protocol::frame(server::INFO, &json));
            }
            client::SCREEN => {
                let json = ctx.shared.borrow().screen_json();
                self.ctrl.extend(protocol::frame(server::SCREEN, &json));
            }
            client::INPUT => self.input(0..self.input.len(), ctx),
            other => debug!(conn = self.id, "ignoring unknown frame type 0x{other:02x}"),
        }
    }

    /// Queues an ERROR frame and closes once it is written.
    fn fail(&mut self, ctx: &Ctx, code: ErrorCode, msg: &str) {
        warn!(conn = self.id, "closing connection: {msg}");
        self.ctrl.extend(protocol::frame(
            server::ERROR,
            &protocol::encode_error(code, msg),
        ));
        self.closing = true;
        self.close_by = Some(ctx.clock.now() + CLOSE_GRACE);
        self.release_input(ctx);
        if ctx.shared.borrow_mut().subs.remove(&self.id).is_some() {
            ctx.space.notify_one();
        }
    }

    /// Decides what is owed next; true if anything is to be written.
    fn prepare(&mut self, ctx: &Ctx) -> bool {
        let mut s = ctx.shared.borrow_mut();
        if let Some(sub) = s.subs.get(&self.id)
            && let Some(tail) = &sub.evicted
        {
            if self.close_by.is_none() {
                self.close_by = Some(ctx.clock.now() + CLOSE_GRACE);
                self.closing = true;
            }
            return self.evicted_pos < tail.len() || self.ctrl_pos < self.ctrl.len();
        }
        if self.subscribed {
            if s.take_replay_end(self.id) {
                self.ctrl.extend(protocol::frame(server::REPLAY_END, &[]));
            }
            if self.wants_state && self.state_seen != s.report_seq && !self.closing {
                self.state_seen = s.report_seq;
                self.ctrl
                    .extend(protocol::frame(server::STATE, &s.state_json()));
            }
            s.start_frame(self.id);
        }
        if (self.subscribed || self.wants_exit)
            && !self.exit_queued
            && !self.closing
            && s.exit_due(self.id)
        {
            let code = s.ended.map_or(-1, |e| e.code);
            self.ctrl
                .extend(protocol::frame(server::EXIT, &protocol::encode_exit(code)));
            self.exit_queued = true;
        }
        let inflight = s.subs.get(&self.id).and_then(|sub| sub.inflight);
        inflight.is_some() || self.ctrl_pos < self.ctrl.len()
    }

    /// One `writev` of everything owed, in order: the rest of a started
    /// OUTPUT frame, queued control frames, then a new OUTPUT frame.
    /// False when nothing was written (the socket is full).
    fn write(&mut self, ctx: &Ctx) -> io::Result<bool> {
        let mut s = ctx.shared.borrow_mut();
        let s = &mut *s;
        let was_exit_written = self.exit_written();
        let sub = s.subs.get_mut(&self.id);
        // A cut-off subscriber only gets its copied tail.
        if let Some(tail) = sub.as_ref().and_then(|sub| sub.evicted.as_ref()) {
            let n = write_some(&self.sock, &[IoSlice::new(&tail[self.evicted_pos..])])?;
            self.evicted_pos += n;
            if self.evicted_pos == tail.len() {
                self.closing = true;
                self.close_by = Some(ctx.clock.now());
            }
            return Ok(n > 0);
        }
        let inflight = sub.and_then(|sub| sub.inflight);
        let ctrl = &self.ctrl[self.ctrl_pos..];
        let frame: Vec<&[u8]> = match &inflight {
            Some(f) => f
                .unsent(&s.ring)
                .into_iter()
                .filter(|p| !p.is_empty())
                .collect(),
            None => Vec::new(),
        };
        let mut iov: Vec<IoSlice<'_>> = Vec::with_capacity(4);
        // A frame already partly on the wire must be finished before
        // anything else; otherwise answers go first.
        let frame_first = inflight.is_some_and(|f| f.sent > 0);
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
        let n = write_some(&self.sock, &iov)?;
        drop(iov);
        // Account for what was written, in the same order.
        let mut left = n;
        let mut take_frame = |left: &mut usize| {
            if let Some(sub) = s.subs.get_mut(&self.id)
                && let Some(f) = &mut sub.inflight
            {
                let k = (*left).min(HEADER_LEN + f.len - f.sent);
                f.sent += k;
                *left -= k;
                if f.done() {
                    sub.inflight = None;
                }
            }
        };
        if frame_first {
            take_frame(&mut left);
        }
        let k = left.min(self.ctrl.len() - self.ctrl_pos);
        self.ctrl_pos += k;
        left -= k;
        if !frame_first {
            take_frame(&mut left);
        }
        if self.ctrl_pos == self.ctrl.len() {
            self.ctrl.clear();
            self.ctrl_pos = 0;
        }
        if inflight.is_some() {
            ctx.space.notify_one();
        }
        if !was_exit_written && self.exit_written() {
            s.exit_waiters = s.exit_waiters.saturating_sub(1);
            ctx.wake_main.notify_one();
        }
        Ok(n > 0)
    }
}

/// Whether the client has closed its end entirely (POLLHUP, or POLLERR for
/// a broken connection), rather than only its sending side: then nothing
/// sent can be read any more.
fn hung_up(sock: &AsyncFd<OwnedFd>) -> bool {
    let mut fds = [nix::poll::PollFd::new(
        sock.get_ref().as_fd(),
        nix::poll::PollFlags::POLLOUT,
    )];
    nix::poll::poll(&mut fds, nix::poll::PollTimeout::ZERO).is_ok()
        && fds[0].revents().is_some_and(|r| {
            r.intersects(nix::poll::PollFlags::POLLHUP | nix::poll::PollFlags::POLLERR)
        })
}

/// Writes what the socket takes now; 0 when it is full.
fn write_some(sock: &AsyncFd<OwnedFd>, iov: &[IoSlice<'_>]) -> io::Result<usize> {
    loop {
        match nix::sys::uio::writev(sock.get_ref(), iov) {
            Ok(n) => return Ok(n),
            Err(nix::Error::EINTR) => {}
            Err(nix::Error::EAGAIN) => return Ok(0),
            Err(e) => return Err(e.into()),
        }
    }
}

/// A [`Piece`] without its borrow, so the connection can be mutated while
/// handling it; data bytes are addressed by position in the read buffer.
enum Owned {
    Start(u8, u32),
    Data,
    End(u8),
}

impl From<Piece<'_>> for Owned {
    fn from(p: Piece<'_>) -> Self {
        match p {
            Piece::Start { ty, len } => Owned::Start(ty, len),
            Piece::Data(_) => Owned::Data,
            Piece::End { ty } => Owned::End(ty),
        }
    }
}
