//! The session's life and end: waits for the program to exit, turns kill
//! requests (KILL frames, `hm kill`, signals to the supervisor) into
//! SIGTERM and, when the grace runs out, SIGKILL (the rules are in
//! [`super::escalation`]), reaps it, records its exit, and waits until
//! every subscriber has had its last output and EXIT.

use std::io;
use std::os::fd::OwnedFd;
use std::task::Poll;
use std::time::Duration;

use nix::sys::signal::Signal;
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::{Notify, watch};
use tracing::{info, warn};

use crate::pty;

use super::context::Ctx;
use super::escalation;

/// How long subscribers get to read their last bytes and EXIT.
const EXIT_FLUSH: Duration = Duration::from_secs(5);
/// How long a session whose launcher is about to attach waits for it after
/// the program ended (see [`super::Options::await_attach`]).
const AWAIT_ATTACH: Duration = Duration::from_secs(5);
/// How long a program's death by a shutdown's signal (SIGTERM, SIGHUP,
/// SIGKILL) that nobody here asked for waits for the supervisor's own:
/// a system shutting down signals every process at once, and the session
/// is then kept as stopped, which `hm restore` starts again.
const SHUTDOWN_WINDOW: Duration = Duration::from_secs(1);

/// The session's program, as the main loop needs it.
#[derive(Debug)]
pub(super) struct Program {
    pub(super) pid: Pid,
    /// Signal its whole session (`kill_process_group`), not only it.
    pub(super) group: bool,
    /// Our copy of the pty's slave, closed once the program is reaped.
    pub(super) slave: OwnedFd,
}

/// The signals that ask the supervisor itself to stop its session:
/// SIGTERM, SIGINT, SIGHUP and SIGQUIT.
#[derive(Debug)]
pub(super) struct StopSignals(Vec<tokio::signal::unix::Signal>);

impl StopSignals {
    pub(super) fn install() -> io::Result<StopSignals> {
        [
            SignalKind::terminate(),
            SignalKind::interrupt(),
            SignalKind::hangup(),
            SignalKind::quit(),
        ]
        .into_iter()
        .map(signal)
        .collect::<io::Result<_>>()
        .map(StopSignals)
    }

    /// None at all: a supervisor run inside a test process must leave the
    /// test harness's own signals alone.
    #[cfg(test)]
    pub(super) fn none() -> StopSignals {
        StopSignals(Vec::new())
    }

    /// Waits for the next of them; forever if there are none.
    async fn recv(&mut self) {
        std::future::poll_fn(|cx| {
            if self.0.iter_mut().any(|s| s.poll_recv(cx).is_ready()) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
    }
}

/// Waits for the child to end (escalating kills as asked) and for its last
/// output to be delivered; returns the exit code.
pub(super) async fn main_loop(
    ctx: &Ctx,
    program: Program,
    await_attach: bool,
    stop: &mut StopSignals,
    changed: &watch::Sender<()>,
    reaped: &Notify,
) -> io::Result<i32> {
    let mut sigchld = signal(SignalKind::child())?;
    let child = program.pid;
    let mut slave = Some(program.slave);
    let mut escalation = escalation::Escalation::default();
    // The child may have exited before the SIGCHLD handler existed.
    let mut check_child = true;
    // Whether someone asked for the end (KILL, `hm kill`, a signal): then
    // nobody is owed a look at it (see `Options::await_attach`).
    let mut asked_to_stop = false;

    loop {
        // Once reaped, a later SIGCHLD (a continued child that then died
        // raises two) must not reap again: waitpid would say ECHILD, and
        // that is not the child's exit code.
        if check_child && !ctx.shared.borrow().has_ended() {
            check_child = false;
            let end = try_reap(child, |halt| {
                match halt {
                    Some(sig) => info!(%sig, "child stopped"),
                    None => info!("child continued"),
                }
                ctx.shared.borrow_mut().record_halt(halt);
                changed.send_replace(());
            });
            if let Some((code, signaled)) = end {
                record_exit(ctx, code, signaled, reaped, changed);
                info!(code, "child exited");
                // Closing our copy of the slave lets the master report EOF
                // once the child's last bytes have been read.
                slave = None;
                escalation.reaped();
            }
        }
        let (ended, over) = {
            let s = ctx.shared.borrow();
            (s.has_ended(), s.is_over())
        };
        if over {
            break;
        }
        // Taken apart from the `if let`: its borrow would last through
        // the block, where the state is read again.
        let kill = ctx.shared.borrow_mut().take_kill_request();
        if let Some(grace) = kill
            && !ended
        {
            asked_to_stop = true;
            let now = ctx.clock.now();
            let signals = escalation.request(now, Duration::from_millis(grace));
            // A shell at its prompt ignores SIGTERM: the hang-up a closed
            // terminal sends ends it (and its jobs), as closing a tmux
            // window does, rather than SIGKILL after the grace period.
            // Looked at before the signals, which may end a job and bring
            // the shell back to its prompt: then it is left to SIGKILL.
            let hang_up =
                signals.contains(&Signal::SIGTERM) && ctx.shared.borrow().shell_at_prompt();
            for &sig in signals {
                if sig == Signal::SIGTERM {
                    info!(grace_ms = grace, "stopping the session");
                }
                signal_child(child, program.group, sig);
            }
            if hang_up {
                info!("a shell at its prompt: sending SIGHUP");
                signal_child(child, program.group, Signal::SIGHUP);
            }
        }
        // Continued as `fg` would: the program's own group only, not the
        // jobs a shell in it has stopped in theirs.
        if ctx.shared.borrow_mut().take_continue_request() && !ended {
            info!("continuing the stopped child");
            if let Err(e) = pty::signal(child, true, Signal::SIGCONT) {
                warn!("cannot continue the program: {e}");
            }
        }
        let kill_at = escalation.deadline();
        tokio::select! {
            _ = sigchld.recv() => check_child = true,
            () = stop.recv() => ctx.shared.borrow_mut().request_stop(),
            () = super::sleep_until(kill_at) => {
                if let Some(sig) = escalation.expire(ctx.clock.now()) {
                    warn!("grace period over; sending SIGKILL");
                    signal_child(child, program.group, sig);
                }
            }
            () = ctx.wakes.main.notified() => {}
        }
    }
    drop(slave);

    // The launcher's attach may not have connected yet: a program that
    // ended at once still owes it its output and exit code.
    if await_attach && !asked_to_stop && !ctx.shared.borrow().end_awaited() {
        info!("keeping the ended session for its launcher's attach");
        let by = ctx.clock.now() + AWAIT_ATTACH;
        loop {
            {
                // A KILL (with or without a wait for EXIT) or a signal
                // now ends the wait: the end was asked for after all.
                let s = ctx.shared.borrow();
                if s.end_awaited() || s.kill_requested() {
                    break;
                }
            }
            tokio::select! {
                () = ctx.wakes.main.notified() => {}
                () = stop.recv() => {
                    // Taken here, the signal still says the machine is
                    // shutting down (see SHUTDOWN_WINDOW below).
                    ctx.shared.borrow_mut().request_stop();
                    break;
                }
                () = tokio::time::sleep_until(by) => {
                    warn!("nobody attached to see the end of the session");
                    break;
                }
            }
        }
    }

    let code = ctx.shared.borrow().exit_code();
    let by_shutdown = code.is_some_and(|c| {
        [Signal::SIGTERM, Signal::SIGHUP, Signal::SIGKILL]
            .iter()
            .any(|&s| c == 128 + s as i32)
    });
    if by_shutdown && !asked_to_stop && !ctx.shared.borrow().stop_requested() {
        tokio::select! {
            () = stop.recv() => ctx.shared.borrow_mut().request_stop(),
            () = tokio::time::sleep(SHUTDOWN_WINDOW) => {}
        }
    }

    // Give every subscriber the chance to read its last bytes and EXIT.
    let flush_by = ctx.clock.now() + EXIT_FLUSH;
    while ctx.shared.borrow().exits_owed() {
        tokio::select! {
            () = ctx.wakes.main.notified() => {}
            () = tokio::time::sleep_until(flush_by) => {
                warn!("some subscribers did not read their last output in time");
                break;
            }
        }
    }
    Ok(ctx.shared.borrow().exit_code().unwrap_or(1))
}

/// Records the program's end: STATUS says dead from now on, and the pty
/// reader and the subscribers are told (they drain, then send EXIT).
pub(super) fn record_exit(
    ctx: &Ctx,
    code: i32,
    signaled: bool,
    reaped: &Notify,
    changed: &watch::Sender<()>,
) {
    ctx.shared.borrow_mut().record_exit(code, signaled);
    reaped.notify_one();
    changed.send_replace(());
}

fn signal_child(child: Pid, group: bool, sig: Signal) {
    let sent = if group {
        pty::signal_session(child, sig)
    } else {
        pty::signal(child, false, sig)
    };
    if let Err(e) = sent {
        // ESRCH: the group is already gone, which is what we wanted.
        if e != nix::Error::ESRCH {
            warn!("cannot send {sig} to the session: {e}");
        }
    }
}

/// Reaps the child if it has ended, without ever blocking: a stopped child
/// is not an ended one, but is told to `halt` (with the signal that
/// stopped it, or `None` once continued). Its exit code, and whether a
/// signal ended it.
fn try_reap(child: Pid, mut halt: impl FnMut(Option<Signal>)) -> Option<(i32, bool)> {
    let flags = WaitPidFlag::WNOHANG | WaitPidFlag::WUNTRACED | WaitPidFlag::WCONTINUED;
    loop {
        match waitpid(child, Some(flags)) {
            Ok(WaitStatus::Exited(_, code)) => return Some((code, false)),
            Ok(WaitStatus::Signaled(_, sig, _)) => return Some((128 + sig as i32, true)),
            // A stop and a continue may both be pending: each is reported
            // once, so ask again until nothing more is.
            Ok(WaitStatus::Stopped(_, sig)) => halt(Some(sig)),
            Ok(WaitStatus::Continued(_)) => halt(None),
            Ok(_) => return None,
            Err(nix::Error::EINTR) => {}
            // ECHILD: someone else reaped it; nothing more will come.
            Err(_) => return Some((1, false)),
        }
    }
}
