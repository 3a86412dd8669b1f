//! One client connection to the supervisor, in two halves that flow
//! independently: the inbound half ([`inbound`]) reads the client's frames
//! and carries them out, the outbound half ([`outbound`]) writes the frames
//! it is owed. This file holds what they share and the one task that waits
//! on both.
//!
//! INPUT is written to the pty master from this task (no thread hop) once
//! its frame is complete: a client that hangs up half-way through a frame
//! must not have half a command line typed. When the pty is full the rest
//! waits here and the client's socket is not read until it drains, which
//! is backpressure rather than loss.
//! Output is written with one `writev` per frame straight from the ring:
//! by this task, or, while it waits with nothing owed, by the pty reader
//! (see `Output::write_parked`).
//! A client that never reads costs at most one in-flight frame: the reader
//! task stops at the lag window and, if this client makes no progress for
//! too long, cuts it off with an ERROR frame.

mod inbound;
mod outbound;

use std::io;
use std::os::fd::OwnedFd;
use std::rc::Rc;

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tracing::{debug, warn};

use super::context::Ctx;
use super::output::{ConnId, Parked};
use inbound::Inbound;
use outbound::Outbound;

/// What the client has asked to be, which both halves act on.
#[derive(Debug, Default)]
struct Role {
    subscribed: bool,
    /// Subscribed as a terminal that answers the program's queries.
    terminal: bool,
    /// Subscribed for STATE frames.
    wants_state: bool,
    /// Sent a KILL that waits for EXIT on this connection.
    wants_exit: bool,
    /// The size it last asked for (RESIZE), applied or held.
    asked: Option<crate::protocol::Size>,
    /// Sent an ACT with `whole` whose answer is still being typed: owed
    /// a second ACTED once it is.
    owed_whole: bool,
}

impl Role {
    /// Whether this connection is owed an EXIT frame when the session ends.
    fn awaits_exit(&self) -> bool {
        self.subscribed || self.wants_exit
    }
}

#[derive(Debug)]
struct Conn {
    id: ConnId,
    /// The client's socket, watched for reading only. Watched for room to
    /// write as well, it would wake the supervisor each time the client
    /// took a frame (every write's completion raises an EPOLLOUT edge):
    /// one useless wake-up per frame per subscriber. Shared with the pty
    /// reader while this waits with nothing owed (see `Parked`).
    sock: AsyncFd<Rc<OwnedFd>>,
    /// After a subscriber's input ends: the socket watched for room, which
    /// is how its closing entirely shows (see the hang-up branch in `run`).
    /// It also wakes, needlessly, each time such a client reads a frame.
    hup_w: Option<AsyncFd<OwnedFd>>,
    role: Role,
    inbound: Inbound,
    outbound: Outbound,
}

/// Serves one accepted connection (a non-blocking socket) until it
/// closes.
pub async fn serve(ctx: Rc<Ctx>, sock: OwnedFd) {
    let id = ctx.shared.borrow_mut().new_conn_id();
    let sock = match crate::fd::register(Rc::new(sock), Interest::READABLE) {
        Ok(sock) => sock,
        Err(e) => {
            warn!(conn = id, "cannot watch the connection: {e}");
            ctx.shared.borrow_mut().connection_closed();
            return;
        }
    };
    let mut conn = Conn {
        id,
        sock,
        hup_w: None,
        role: Role::default(),
        inbound: Inbound::new(),
        outbound: Outbound::new(),
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
    conn.inbound.input.release(&ctx);
    if conn.role.terminal {
        leave_terminal(&ctx, id);
    }
    // The state's methods wake the main loop, the accept loop and the
    // pty reader as each change calls for (`Shared::wakes`).
    let mut s = ctx.shared.borrow_mut();
    s.connection_closed();
    s.unsubscribe(id);
    if conn.role.awaits_exit() && !conn.outbound.exit_written() {
        s.exit_settled();
    }
}

/// A person's terminal is no longer attached through this connection:
/// the size the most recent of the others asked for applies now, or, if
/// it was the last, a size others asked for meanwhile (the dashboard's
/// pane), and the supervisor answers the program's queries again.
fn leave_terminal(ctx: &Ctx, id: ConnId) {
    let next = ctx.shared.borrow_mut().remove_terminal(id);
    if let Some(size) = next {
        inbound::apply_size(ctx, size, None);
    }
}

impl Conn {
    async fn run(&mut self, ctx: &Ctx) -> io::Result<()> {
        let mut changed = ctx.changed.clone();
        let mut parked = false;
        loop {
            if std::mem::take(&mut parked) {
                ctx.shared.borrow_mut().output_mut().park(self.id, None);
            }
            changed.borrow_and_update();
            // The requests read together are answered as of one instant:
            // the processes are read once for all of them.
            ctx.shared.borrow().hold_facts(true);
            self.inbound
                .process(ctx, self.id, &mut self.role, &mut self.outbound);
            ctx.shared.borrow().hold_facts(false);
            if self.role.owed_whole
                && let Some(acted) = ctx.shared.borrow().whole_answer()
            {
                self.role.owed_whole = false;
                self.outbound
                    .queue(&crate::protocol::Reply::Acted(Box::new(acted)));
            }
            let pending = self.outbound.prepare(ctx, self.id, &self.role);
            if pending && !self.outbound.watching_room() {
                // The socket usually has room: write at once, and watch it
                // for room only once it is full.
                if self.outbound.write(ctx, self.id, &self.sock)? {
                    continue;
                }
                self.outbound.watch_room(&self.sock)?;
            }
            if !pending {
                self.outbound.stop_watching_room();
                if self.done() {
                    return Ok(());
                }
            }
            let can_read = self.outbound.takes_requests() && self.inbound.wants_bytes();
            let watching = self.role.awaits_exit() && !pending;
            let close_by = self.outbound.close_by();
            // Waiting with nothing owed, a subscriber's output is written
            // by the pty reader, which wakes this only when something
            // else is owed (see `Output::write_parked`).
            if watching && self.role.subscribed && !self.outbound.closing() {
                let state_seen = self.role.wants_state.then(|| self.outbound.state_seen());
                let sock = self.sock.get_ref().clone();
                let me = Parked { sock, state_seen };
                ctx.shared.borrow_mut().output_mut().park(self.id, Some(me));
                parked = true;
            }
            tokio::select! {
                r = self.outbound.room(), if pending => {
                    r?;
                    self.outbound.write(ctx, self.id, &self.sock)?;
                }
                r = self.inbound.input.room(), if self.inbound.input.blocked() => {
                    r?;
                    self.inbound.flush_input(ctx, self.id, &self.role, &mut self.outbound);
                }
                r = self.inbound.buf.read(&self.sock), if can_read => {
                    // A terminal whose input ended can neither type nor
                    // resize: it no longer holds the size, whether or not
                    // it still reads (a bridge's far end passes a client's
                    // going on as this).
                    let n = r?;
                    if n == 0 && self.role.terminal {
                        self.role.terminal = false;
                        leave_terminal(ctx, self.id);
                    }
                    // A subscriber waits for EXIT after its input ends,
                    // unless it hung up: then it would hold its connection
                    // (one of 1024) until output.
                    if n == 0 && self.role.awaits_exit() {
                        if crate::fd::hung_up(self.sock.get_ref()) {
                            debug!(conn = self.id, "the client hung up");
                            return Ok(());
                        }
                        // A hang-up raises no new read edge once the end
                        // of input has been seen (tokio keeps "read
                        // closed" set), but it does end the room to write:
                        // watch a duplicate for that. Out of descriptors
                        // it is noticed at the next output instead, as
                        // before.
                        self.hup_w = crate::fd::watch_room(self.sock.get_ref())
                            .inspect_err(|e| debug!(conn = self.id, "cannot watch for a hang-up: {e}"))
                            .ok();
                    }
                }
                // A subscriber whose input has ended (a half-close) is
                // still owed output and EXIT; this notices when it then
                // closes entirely, so a silent session does not hold the
                // connection until its next output.
                r = crate::fd::room(self.hup_w.as_ref()), if self.hup_w.is_some() => {
                    r?;
                    if crate::fd::hung_up(self.sock.get_ref()) {
                        debug!(conn = self.id, "the client hung up");
                        return Ok(());
                    }
                }
                () = ctx.wakes.answered.notified(), if self.role.owed_whole => {}
                c = changed.changed(), if watching => {
                    if c.is_err() {
                        return Ok(());
                    }
                }
                () = super::sleep_until(close_by) => {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "closing connection did not read its last frames"));
                }
            }
        }
    }

    /// True when nothing more will ever be written or read.
    fn done(&self) -> bool {
        if self.outbound.closing() {
            return true;
        }
        if self.role.awaits_exit() {
            return self.outbound.exit_written();
        }
        self.inbound.finished()
    }
}
