//! The supervisor without the fork, for tests and the connection fuzz
//! target: see [`Core`].

use std::io;
use std::os::fd::OwnedFd;
use std::rc::Rc;

use tokio::io::Interest;
use tokio::sync::{Notify, watch};

use crate::classify::ClassifierSpec;
use crate::clock::Clock;

use super::client;
use super::context::Ctx;
use super::lifecycle::record_exit;
use super::reader::pump_output;
use super::state::{SessionInfo, Shared};
use super::tracker::{Notifier, track_state};

/// A supervisor's serving half without the fork: the pty reader, the state
/// tracker and the connection tasks over a pty whose slave the caller
/// holds, playing the program. The connection fuzz target drives it, and
/// the in-process tests (`supervisor/tests.rs`) run it with paused time;
/// everything but the fork, the accept loop and the stop signals is the
/// code `hm run` runs. Must be used inside a `LocalSet`.
#[derive(Debug)]
pub(crate) struct Core {
    ctx: Rc<Ctx>,
    changed: Rc<watch::Sender<()>>,
    reaped: Rc<Notify>,
}

impl Core {
    /// The idle threshold of a core's `simple` classifier.
    pub(crate) const IDLE_THRESHOLD_MS: u64 = 3000;

    /// Starts reading `master` (non-blocking) into a ring that keeps
    /// `scrollback` bytes. Its clock starts now.
    pub(crate) fn start(master: OwnedFd, scrollback: usize) -> io::Result<Core> {
        let clock = Clock::new();
        let info = SessionInfo {
            id: "fuzz".into(),
            command: vec!["fuzz".into()],
            workdir: "/".into(),
            supervisor_pid: std::process::id(),
            started_unix_ms: 0,
            classifier: "simple",
            idle_threshold_ms: Some(Self::IDLE_THRESHOLD_MS),
            label: None,
        };
        let size = crate::protocol::Size { cols: 80, rows: 24 };
        let classifier = ClassifierSpec::Simple {
            idle_threshold_ms: Self::IDLE_THRESHOLD_MS,
        }
        .build(clock.now_ms());
        let shared = Shared::new(scrollback, classifier, clock, 0, size, 1000, info);
        let changed = Rc::new(watch::channel(()).0);
        let master = crate::fd::register(master, Interest::READABLE)?;
        let core = Core {
            ctx: Rc::new(Ctx::new(shared, master, changed.clone())),
            changed,
            reaped: Rc::new(Notify::new()),
        };
        tokio::task::spawn_local(pump_output(
            core.ctx.clone(),
            core.changed.clone(),
            core.reaped.clone(),
        ));
        tokio::task::spawn_local(track_state(
            core.ctx.clone(),
            core.changed.clone(),
            Notifier::new(Vec::new()),
        ));
        Ok(core)
    }

    /// When the state tracker last looked at the session.
    #[cfg(test)]
    pub(crate) fn last_look(&self) -> Option<crate::clock::Instant> {
        self.ctx.last_look.get()
    }

    /// Whether the session's screen sleeps now.
    #[cfg(test)]
    pub(crate) fn screen_asleep(&self) -> bool {
        self.ctx.shared.borrow().screen_asleep()
    }

    /// Serves one connection until it closes, as an accepted one is.
    pub(crate) async fn serve(&self, stream: tokio::net::UnixStream) {
        self.ctx.shared.borrow_mut().connection_opened();
        match stream.into_std() {
            Ok(s) => client::serve(self.ctx.clone(), s.into()).await,
            Err(e) => {
                tracing::warn!("cannot serve the connection: {e}");
                self.ctx.shared.borrow_mut().connection_closed();
            }
        }
    }

    /// The program exited with `code`, as the main loop records a reaped
    /// child. Once the caller closes the slave, the reader sees the end of
    /// the output and subscribers get EXIT.
    pub(crate) fn end(&self, code: i32) {
        record_exit(&self.ctx, code, false, &self.reaped, &self.changed);
    }

    /// Runs the main loop for `child`, a process the caller started on
    /// the pty (it must be our child, so that it can be reaped) and left
    /// `slave` to us: kill requests are escalated and the exit is recorded
    /// as `hm run` does, until every subscriber has had its EXIT. Signals
    /// only the child itself, and takes no stop signals.
    #[cfg(test)]
    pub(crate) async fn supervise(
        &self,
        child: nix::unistd::Pid,
        slave: OwnedFd,
    ) -> io::Result<i32> {
        use super::lifecycle::{Program, StopSignals, main_loop};
        let program = Program {
            pid: child,
            group: false,
            slave,
        };
        let mut stop = StopSignals::none();
        main_loop(
            &self.ctx,
            program,
            false,
            &mut stop,
            &self.changed,
            &self.reaped,
        )
        .await
    }
}
