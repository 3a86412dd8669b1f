//! The pty reader: reads the program's output into the ring, never past
//! what the slowest subscriber still needs, cuts off a subscriber that
//! holds it back too long, and after the program's exit drains what its
//! descendants still write, for a bounded time.

use std::io;
use std::rc::Rc;
use std::time::Duration;

use tokio::sync::{Notify, watch};
use tracing::warn;

use crate::clock::Instant;

use super::context::Ctx;

/// A subscriber that holds back the pty this long without reading a byte
/// is cut off, so one stuck client cannot freeze the session.
const STALL_TIMEOUT: Duration = Duration::from_secs(5);
/// After the child is reaped, output still arriving from grandchildren
/// holding the pty is read until it has been quiet this long.
pub(super) const QUIET_AFTER_EXIT: Duration = Duration::from_millis(200);
/// After the child is reaped, its descendants' output is drained for at
/// most this long in all, so a background process that keeps writing cannot
/// keep a finished session open.
const DRAIN_LIMIT: Duration = Duration::from_secs(2);
/// A read pass takes at most this much before publishing it to subscribers.
const READ_PASS: usize = 64 * 1024;

/// Reads the pty into the ring, never past what the slowest subscriber
/// still needs; once per read pass writes to the subscribers waiting with
/// nothing owed, and wakes the connections if one is owed more.
pub(super) async fn pump_output(ctx: Rc<Ctx>, changed: Rc<watch::Sender<()>>, reaped: Rc<Notify>) {
    let mut stall: Option<(u64, Instant)> = None;
    let mut drain_until: Option<Instant> = None;
    loop {
        let (budget, oldest_needed, ended) = {
            let s = ctx.shared.borrow();
            let output = s.output();
            (output.read_budget(), output.min_retained(), s.has_ended())
        };
        if budget == 0 {
            let deadline = match stall {
                Some((at, d)) if at == oldest_needed => d,
                _ => {
                    let d = ctx.clock.now() + STALL_TIMEOUT;
                    stall = Some((oldest_needed, d));
                    d
                }
            };
            tokio::select! {
                () = ctx.wakes.space.notified() => {}
                () = tokio::time::sleep_until(deadline) => {
                    tracing::debug!(subs = ?ctx.shared.borrow().output().positions(), "stalled");
                    let stalled_ms = STALL_TIMEOUT.as_millis() as u64;
                    let n = ctx.shared.borrow_mut().output_mut().evict_at(oldest_needed, stalled_ms);
                    warn!(subscribers = n, "cut off subscribers that stopped reading");
                    stall = None;
                    changed.send_replace(());
                }
            }
            continue;
        }
        stall = None;
        let guard = if ended {
            let now = ctx.clock.now();
            let hard = *drain_until.get_or_insert(now + DRAIN_LIMIT);
            let quiet = (now + QUIET_AFTER_EXIT).min(hard);
            tokio::select! {
                g = ctx.master.readable() => g,
                () = tokio::time::sleep_until(quiet) => break,
            }
        } else {
            tokio::select! {
                g = ctx.master.readable() => g,
                () = reaped.notified() => continue,
            }
        };
        let mut guard = match guard {
            Ok(g) => g,
            Err(e) => {
                warn!("cannot wait for pty output: {e}");
                break;
            }
        };
        let limit = budget.min(READ_PASS);
        let mut pass = 0;
        let mut eof = false;
        let mut drained = false;
        while pass < limit {
            let res = guard.try_io(|fd| {
                let mut s = ctx.shared.borrow_mut();
                let read = s.read_output(limit - pass, |spare| {
                    nix::unistd::read(fd.get_ref(), spare).map_err(io::Error::from)
                })?;
                let answers = s.take_answers();
                if !answers.is_empty() {
                    // A program waits for these (fish, neovim and the agent
                    // CLIs time out without them): a few bytes into a pty
                    // that has room; one that is full is not waited on.
                    if let Err(e) = nix::unistd::write(fd.get_ref(), &answers) {
                        tracing::debug!("query answer not delivered: {e}");
                    }
                }
                Ok(read)
            });
            match res {
                Ok(Ok((0, _))) => {
                    eof = true;
                    break;
                }
                // A short read took all there was: waiting for the next
                // edge saves reading again just to see EAGAIN (bytes the
                // tty pushes later raise a new edge, which this does not
                // clear).
                Ok(Ok((n, asked))) if n < asked => {
                    pass += n;
                    guard.clear_ready();
                    drained = true;
                    break;
                }
                Ok(Ok((n, _))) => pass += n,
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                // EIO: every slave descriptor is closed; the output is over.
                Ok(Err(_)) => {
                    eof = true;
                    break;
                }
                Err(_would_block) => break,
            }
        }
        // Subscribers waiting with nothing owed are written to here; their
        // connections are woken only when something else is owed.
        if pass > 0 && ctx.shared.borrow_mut().write_parked() {
            changed.send_replace(());
        }
        if eof {
            if ended {
                break;
            }
            // EOF before the child is reaped (it closed the pty itself):
            // nothing more can come, but keep waiting for the child.
            ctx.shared.borrow_mut().close_output();
            changed.send_replace(());
            return;
        }
        // Let subscribers run between passes so a fast child cannot starve
        // them (pty readiness does not consume tokio's task budget). After
        // a drained read the wait for the next edge does that already.
        if !drained {
            tokio::task::yield_now().await;
        }
    }
    ctx.shared.borrow_mut().close_output();
    changed.send_replace(());
}
