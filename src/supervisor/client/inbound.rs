//! A connection's inbound half: reads the client's bytes, splits them into
//! frames, holds an INPUT payload until its frame is complete, and carries
//! out each complete frame. Answers go to the outbound half's queue; a
//! frame it must refuse closes the connection through it.

use std::io;
use std::ops::Range;
use std::os::fd::OwnedFd;
use std::rc::Rc;

use tokio::io::unix::AsyncFd;
use tracing::debug;

use crate::detect::hooks::MAX_REPORT;
use crate::protocol::{
    self, ClientType, ErrorCode, Kill, MAX_PAYLOAD, Piece, Reply, Request, Size, Splitter,
    Subscribe,
};
use crate::pty;

use super::Role;
use super::outbound::Outbound;
use crate::supervisor::answering;
use crate::supervisor::context::Ctx;
use crate::supervisor::output::ConnId;

const READ_BUF: usize = 8 * 1024;
/// Unfinished INPUT payloads all connections together may hold. A frame
/// may declare up to [`MAX_PAYLOAD`], and a payload takes effect only when
/// it is whole, so what has arrived is kept; this bounds what clients that
/// never finish their frames can make the supervisor hold.
pub const INPUT_HELD_LIMIT: usize = 8 * 1024 * 1024;

#[derive(Debug)]
pub(super) struct Inbound {
    /// The client's bytes read and not yet split.
    pub(super) buf: ReadBuf,
    /// The INPUT payload of the frame being received.
    pub(super) input: HeldInput,
    splitter: Splitter,
    /// Type (`None`: one this supervisor does not know) and length of the
    /// frame being received, and the start of its payload (RESIZE, KILL,
    /// SUBSCRIBE flags); other payloads are collected (INPUT) or
    /// discarded.
    cur: Option<ClientType>,
    cur_len: u32,
    small: Vec<u8>,
}

impl Inbound {
    pub(super) fn new() -> Inbound {
        Inbound {
            buf: ReadBuf::default(),
            input: HeldInput::default(),
            splitter: Splitter::new(MAX_PAYLOAD),
            cur: None,
            cur_len: 0,
            small: Vec::new(),
        }
    }

    /// Whether the socket should be read: everything read so far has been
    /// handled and the pty is not pushing back.
    pub(super) fn wants_bytes(&self) -> bool {
        !self.buf.eof && !self.input.blocked() && self.buf.drained()
    }

    /// True when the client's input has ended and all of it was handled.
    pub(super) fn finished(&self) -> bool {
        self.buf.eof && self.buf.drained() && !self.input.blocked()
    }

    /// Handles buffered client bytes until they run out, the pty pushes
    /// back, or too many answers are waiting to be read.
    pub(super) fn process(&mut self, ctx: &Ctx, id: ConnId, role: &mut Role, out: &mut Outbound) {
        while (!self.buf.drained() || self.splitter.end_pending())
            && !self.input.blocked()
            && out.takes_requests()
        {
            let at = self.buf.pos;
            let step = self.splitter.next(&self.buf.bytes[at..self.buf.len]);
            let (used, piece) = match step {
                Ok((used, piece)) => (used, piece.map(Owned::from)),
                Err(e) => {
                    self.fail(ctx, id, out, ErrorCode::FrameTooLarge, &e.to_string());
                    return;
                }
            };
            self.buf.pos += used;
            match piece {
                None => {}
                Some(Owned::Start(ty, len)) => {
                    // An unknown type is skipped, as the protocol says.
                    self.cur = ClientType::try_from(ty).ok();
                    self.cur_len = len;
                    self.small.clear();
                    if self.cur == Some(ClientType::Resize) && len != 4 {
                        let msg = format!("RESIZE payload must be 4 bytes, got {len}");
                        self.fail(ctx, id, out, ErrorCode::MalformedPayload, &msg);
                        return;
                    }
                    if self.cur == Some(ClientType::Label) && len > protocol::MAX_LABEL_PAYLOAD {
                        let max = protocol::MAX_LABEL_PAYLOAD;
                        let msg = format!("LABEL payload must be at most {max} bytes, got {len}");
                        self.fail(ctx, id, out, ErrorCode::MalformedPayload, &msg);
                        return;
                    }
                    if self.cur == Some(ClientType::Act) && len > protocol::MAX_ACT_PAYLOAD {
                        let max = protocol::MAX_ACT_PAYLOAD;
                        let msg = format!("ACT payload must be at most {max} bytes, got {len}");
                        self.fail(ctx, id, out, ErrorCode::MalformedPayload, &msg);
                        return;
                    }
                }
                Some(Owned::Data) => match self.cur {
                    Some(ClientType::Input) => {
                        let bytes = &self.buf.bytes[at..at + used];
                        if let Err(msg) = self.input.hold(bytes, ctx) {
                            self.fail(ctx, id, out, ErrorCode::Unavailable, &msg);
                            return;
                        }
                    }
                    // One byte past the four any of them takes, so that a
                    // KILL of another length reads as one (the seed's).
                    Some(ClientType::Resize | ClientType::Kill | ClientType::Subscribe) => {
                        let take = used.min(5 - self.small.len().min(5));
                        self.small.extend_from_slice(&self.buf.bytes[at..at + take]);
                    }
                    // A report larger than any `hm hook` sends is dropped
                    // whole when it ends (`small` past the bound).
                    Some(ClientType::Report) => {
                        let room = (MAX_REPORT + 1).saturating_sub(self.small.len());
                        let take = used.min(room);
                        self.small.extend_from_slice(&self.buf.bytes[at..at + take]);
                    }
                    // Bounded by the length checked at the frame's start.
                    Some(ClientType::Act | ClientType::Label) => {
                        self.small.extend_from_slice(&self.buf.bytes[at..at + used]);
                    }
                    _ => {}
                },
                Some(Owned::End(ty)) => match self.cur {
                    Some(kind) => self.dispatch(kind, ctx, id, role, out),
                    None => debug!(conn = id, "ignoring unknown frame type 0x{ty:02x}"),
                },
            }
        }
    }

    /// Writes INPUT that the pty refused, once it has room again.
    pub(super) fn flush_input(&mut self, ctx: &Ctx, id: ConnId, role: &Role, out: &mut Outbound) {
        if let Some(range) = self.input.blocked.take() {
            self.input(range, ctx, id, role, out);
        }
    }

    /// Writes the held INPUT payload (or the part of it in `range`) to the
    /// pty, until the pty pushes back.
    fn input(
        &mut self,
        range: Range<usize>,
        ctx: &Ctx,
        id: ConnId,
        role: &Role,
        out: &mut Outbound,
    ) {
        let ended = {
            let mut shared = ctx.shared.borrow_mut();
            shared.typed();
            shared.has_ended()
        };
        if ended {
            self.input.release(ctx);
            // A subscriber is owed its EXIT, which says as much (a key
            // typed as the program ends must not cost the exit code).
            if role.subscribed {
                debug!(conn = id, "input after the end dropped");
                return;
            }
            let msg = "the session has exited; input was not delivered";
            self.fail(ctx, id, out, ErrorCode::Unavailable, msg);
            return;
        }
        if let Err(msg) = self.input.write(range, ctx, id) {
            self.fail(ctx, id, out, ErrorCode::Unavailable, &msg);
        }
    }

    /// Carries out a whole frame of type `kind`: INPUT from the payload
    /// held, anything else decoded (`protocol::Request::decode`) from the
    /// bytes kept of it.
    fn dispatch(
        &mut self,
        kind: ClientType,
        ctx: &Ctx,
        id: ConnId,
        role: &mut Role,
        out: &mut Outbound,
    ) {
        if kind == ClientType::Input {
            // The terminal typed into is the one a person works at: it
            // takes its size back from another that attached or was
            // resized since (tmux's `window-size latest`). Kept, the
            // program drew for the other window, cut or wrapped in this
            // one, until this one was resized. Not for what begins with
            // ESC: each attached terminal answers the program's queries
            // (its colours, the cursor's place) on its own, and the last
            // answer would take the size, a program that asks again at
            // its SIGWINCH sent from one size to the other. (An arrow
            // typed takes it with the next key.)
            if role.terminal
                && self.input.bytes.first().is_some_and(|b| *b != 0x1b)
                && let Some(size) = role.asked
                && size != ctx.shared.borrow().terminal_size()
            {
                debug!(conn = id, "typed into: its size again");
                resize(size, ctx, id, role);
            }
            self.input(0..self.input.bytes.len(), ctx, id, role, out);
            return;
        }
        let request = match Request::decode(kind, &self.small) {
            Ok(request) => request,
            // Each answered as the protocol says for its type: a hook
            // never hears back, and a wrong report costs the session
            // nothing; an ACT is told why nothing was done. (A RESIZE of
            // the wrong length was refused at its header.)
            Err(e) => {
                debug!(conn = id, "{e}");
                // A label not taken is the client's error, said as one.
                if kind == ClientType::Label {
                    self.fail(ctx, id, out, ErrorCode::MalformedPayload, &e.to_string());
                    return;
                }
                if kind == ClientType::Act {
                    out.queue(&Reply::Acted(Box::new(answering::unreadable(&e))));
                }
                return;
            }
        };
        // A question about a resting session wakes its screen: back to
        // sleep after (a few hundred microseconds), or a script asking
        // every second would keep every idle session's screen awake.
        let asked = matches!(
            request,
            Request::Status
                | Request::Info
                | Request::Screen
                | Request::Subscribe(_)
                | Request::Label(_)
        );
        match request {
            Request::Subscribe(flags) => {
                subscribe(flags, ctx, id, role);
                // INFO is pushed for labels given from now on.
                out.info_seen = ctx.shared.borrow().info_seq();
            }
            Request::Status => {
                let st = ctx.shared.borrow_mut().status();
                out.queue(&Reply::Status(st));
            }
            Request::Resize(size) => resize(size.clamped(), ctx, id, role),
            Request::Kill(kill) => {
                let mut s = ctx.shared.borrow_mut();
                s.request_kill(match kill {
                    Kill::Grace(ms) => Some(u64::from(ms)),
                    Kill::Plain | Kill::AwaitExit => None,
                });
                // Our own `hm kill` asks for EXIT on this connection; the
                // seed's plain KILL is fire-and-forget.
                if kill != Kill::Plain {
                    if !role.awaits_exit() {
                        s.await_exit();
                    }
                    s.await_end();
                    role.wants_exit = true;
                }
            }
            Request::Info => {
                let info = ctx.shared.borrow_mut().info_answer();
                out.queue(&Reply::Info(Box::new(info)));
            }
            // Answered with INFO as it is now; the other subscribers that
            // follow the state are woken to be sent it too.
            Request::Label(label) => {
                // Its record and what `hm restore` keeps are written: a
                // label now would be said and kept nowhere.
                if ctx.shared.borrow().has_ended() {
                    let msg = "the session has ended: its label is as it was";
                    self.fail(ctx, id, out, ErrorCode::Unavailable, msg);
                    return;
                }
                let mut s = ctx.shared.borrow_mut();
                let changed = s.relabel(Some(label).filter(|l| !l.is_empty()));
                out.queue(&Reply::Info(Box::new(s.relabelled_info())));
                out.info_seen = s.info_seq();
                drop(s);
                if changed {
                    ctx.bump.send_replace(());
                }
            }
            Request::Screen => {
                let screen = ctx.shared.borrow_mut().screen_answer();
                out.queue(&Reply::Screen(Box::new(screen)));
            }
            Request::Report(report) => {
                ctx.shared.borrow_mut().hook_report(&report);
            }
            Request::Act(act) => {
                let whole = act.whole;
                let acted = answering::by_hand(ctx, act);
                // Its last key is yet to be sent: a second ACTED says when
                // it is (see `Conn::run`).
                role.owed_whole |= whole && acted.pending;
                out.queue(&Reply::Acted(Box::new(acted)));
            }
            // Carried out above, from the payload held.
            Request::Input(_) => {}
        }
        if asked {
            ctx.shared.borrow_mut().rest();
        }
    }

    /// Closes the connection with an ERROR frame; held input is dropped.
    fn fail(&mut self, ctx: &Ctx, id: ConnId, out: &mut Outbound, code: ErrorCode, msg: &str) {
        self.input.release(ctx);
        out.fail(ctx, id, code, msg);
    }
}

/// SUBSCRIBE: the connection becomes a subscriber (once), as its flags
/// say.
fn subscribe(flags: Subscribe, ctx: &Ctx, id: ConnId, role: &mut Role) {
    if role.subscribed {
        return;
    }
    role.subscribed = true;
    let mut s = ctx.shared.borrow_mut();
    s.output_mut().subscribe(id, flags.mark_replay, flags.marks);
    if flags.screen
        && s.output().replay_cut(id)
        && let Some(rendering) = s.screen_rendering()
    {
        s.output_mut().end_replay_with(id, rendering);
    }
    if flags.terminal {
        role.terminal = true;
        if let Some(size) = s.add_terminal(id, role.asked) {
            drop(s);
            apply_size(ctx, size, Some(id));
            s = ctx.shared.borrow_mut();
        }
    }
    if flags.state {
        role.wants_state = true;
        // The state as it is now comes first.
        s.refresh_for_subscriber();
    }
    if !role.wants_exit {
        s.await_exit();
    }
    // A session kept for its launcher (the `hm run` attach or the
    // dashboard that started it) ends once that has come (see
    // `Options::await_attach`); anyone else subscribing does not count.
    if flags.launcher {
        s.await_end();
    }
}

/// RESIZE: a person's terminal sets the size; anyone else's waits until
/// no terminal is attached.
fn resize(size: Size, ctx: &Ctx, id: ConnId, role: &mut Role) {
    role.asked = Some(size);
    if !role.terminal && ctx.shared.borrow().terminal_attached() {
        debug!(conn = id, "resize held: a terminal is attached");
        ctx.shared.borrow_mut().hold_size(id, size);
        return;
    }
    if role.terminal {
        ctx.shared.borrow_mut().terminal_resized(id, size);
    }
    apply_size(ctx, size, Some(id));
}

/// Sets the pty's size (the program gets SIGWINCH) and remembers it. The
/// people's terminals but `by`'s, whose window it is, are drawn the
/// screen again at it (see [`Shared::repaint_terminals`]).
///
/// [`Shared::repaint_terminals`]: crate::supervisor::state::Shared::repaint_terminals
pub(super) fn apply_size(ctx: &Ctx, size: Size, by: Option<ConnId>) {
    if let Err(e) = pty::resize(ctx.master.get_ref(), size) {
        debug!("resize failed: {e}");
    }
    let mut s = ctx.shared.borrow_mut();
    let changed = s.terminal_size() != size;
    s.resized(size);
    if changed && s.repaint_terminals(by, size) {
        ctx.bump.send_replace(());
    }
}

/// The client's bytes read from its socket and not yet split into frames.
#[derive(Debug, Default)]
pub(super) struct ReadBuf {
    bytes: Vec<u8>,
    pos: usize,
    len: usize,
    eof: bool,
}

impl ReadBuf {
    fn drained(&self) -> bool {
        self.pos == self.len
    }

    /// Reads what the socket has, once everything before was handled; 0
    /// at the end of the client's input. Cancel-safe: nothing changes
    /// until the read is done.
    pub(super) async fn read(&mut self, sock: &AsyncFd<Rc<OwnedFd>>) -> io::Result<usize> {
        if self.bytes.is_empty() {
            self.bytes = vec![0; READ_BUF];
        }
        let n = crate::fd::read_some(sock, &mut self.bytes).await?;
        if n == 0 {
            self.eof = true;
        } else {
            self.pos = 0;
            self.len = n;
        }
        Ok(n)
    }
}

/// An INPUT payload held until its frame is complete, then written to the
/// pty; counted in [`Ctx::input_held`] until the pty has taken it.
#[derive(Debug, Default)]
pub(super) struct HeldInput {
    bytes: Vec<u8>,
    /// The part of `bytes` the pty has refused so far.
    blocked: Option<Range<usize>>,
    /// The pty master watched for room, only while INPUT is blocked: the
    /// shared one is watched for reading only, or every read the child
    /// makes of its input would wake the supervisor (an EPOLLOUT edge) in
    /// the middle of each keystroke's echo.
    pty_w: Option<AsyncFd<OwnedFd>>,
}

impl HeldInput {
    /// Whether the pty pushed back and the rest waits for room.
    pub(super) fn blocked(&self) -> bool {
        self.blocked.is_some()
    }

    /// Waits for the pty to have room (forever unless blocked).
    pub(super) async fn room(&self) -> io::Result<()> {
        crate::fd::room(self.pty_w.as_ref()).await
    }

    /// Keeps part of an INPUT payload until its frame is complete; the
    /// reason if all connections together already hold the most allowed.
    fn hold(&mut self, bytes: &[u8], ctx: &Ctx) -> Result<(), String> {
        let held = ctx.input_held.get() + bytes.len();
        if held > INPUT_HELD_LIMIT {
            return Err(format!(
                "clients hold {} KiB of unfinished input, the most the session keeps; this frame was dropped",
                INPUT_HELD_LIMIT / 1024
            ));
        }
        ctx.input_held.set(held);
        self.bytes.extend_from_slice(bytes);
        Ok(())
    }

    /// Forgets the payload held, written or not.
    pub(super) fn release(&mut self, ctx: &Ctx) {
        ctx.input_held.set(ctx.input_held.get() - self.bytes.len());
        self.blocked = None;
        // A pasted megabyte need not stay allocated for the next keystroke.
        if self.bytes.capacity() > READ_BUF {
            self.bytes = Vec::new();
        } else {
            self.bytes.clear();
        }
    }

    /// Writes `range` of the payload to the pty until it pushes back (the
    /// rest then waits for [`HeldInput::room`]), releasing it once all is
    /// written; the reason if the pty is full and cannot be waited on.
    fn write(&mut self, mut range: Range<usize>, ctx: &Ctx, id: ConnId) -> Result<(), String> {
        while !range.is_empty() {
            match crate::fd::write_now(ctx.master.get_ref(), &self.bytes[range.clone()]) {
                Ok(0) => {
                    if self.pty_w.is_none() {
                        // Out of descriptors: say the input was not all
                        // delivered rather than drop it unannounced.
                        let w = crate::fd::watch_room(ctx.master.get_ref())
                            .map_err(|e| format!("the pty is full and cannot be waited on: {e}"))?;
                        self.pty_w = Some(w);
                    }
                    self.blocked = Some(range);
                    return Ok(());
                }
                Ok(n) => range.start += n,
                Err(e) => {
                    debug!(conn = id, "pty write failed: {e}");
                    break;
                }
            }
        }
        self.pty_w = None;
        self.release(ctx);
        Ok(())
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
