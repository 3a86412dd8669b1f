//! The per-session supervisor: `hm run --detach`.
//!
//! [`run`] follows a strict order. Everything that can fail is done while
//! nothing has started yet: the socket dir is checked, the pid file locked,
//! the socket bound and the log opened. Then the child is forked (the
//! process still has one thread), and only then does a current-thread
//! tokio runtime start. Four tasks share one [`state::Shared`]: the pty
//! reader ([`pump_output`]), the state tracker ([`track_state`]), the
//! accept loop, and one task per client ([`client::serve`]); the main loop
//! reaps the child, escalates kills and decides when everything has been
//! delivered.
//!
//! Every task reads the time from the session's [`Clock`] and waits on
//! tokio timers, so a test can run all of it but the fork with paused time
//! ([`Core`], `supervisor/tests.rs`).

mod client;
pub mod ended;
mod escalation;
mod log;
pub mod pidfile;
mod process;
pub mod ring;
mod state;
#[cfg(test)]
mod tests;

use std::fs;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use anyhow::{Context, Result};
use nix::sys::signal::Signal;
use nix::sys::stat::{Mode, umask};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;
use tokio::io::Interest;
use tokio::net::UnixListener;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::{Notify, watch};
use tracing::{info, warn};

use crate::classify::ClassifierSpec;
use crate::clock::{self, Clock, Instant};
use crate::config::LogLevel;
use crate::paths::{SessionPaths, SocketDir};
use crate::pty::{self, SpawnSpec};

use crate::detect::Detector;
use client::Ctx;
use pidfile::PidFile;
use process::ProcessProbe;
use state::{Ended, SessionInfo, Shared};

/// A subscriber that holds back the pty this long without reading a byte
/// is cut off, so one stuck client cannot freeze the session.
const STALL_TIMEOUT: Duration = Duration::from_secs(5);
/// After the child is reaped, output still arriving from grandchildren
/// holding the pty is read until it has been quiet this long.
const QUIET_AFTER_EXIT: Duration = Duration::from_millis(200);
/// After the child is reaped, its descendants' output is drained for at
/// most this long in all, so a background process that keeps writing cannot
/// keep a finished session open.
const DRAIN_LIMIT: Duration = Duration::from_secs(2);
/// How long subscribers get to read their last bytes and EXIT.
const EXIT_FLUSH: Duration = Duration::from_secs(5);
/// How long a session whose launcher is about to attach waits for it after
/// the program ended (see [`Options::await_attach`]).
const AWAIT_ATTACH: Duration = Duration::from_secs(5);
/// The most connections served at once; more are told so and closed.
const MAX_CONNECTIONS: usize = 1024;
/// A read pass takes at most this much before publishing it to subscribers.
const READ_PASS: usize = 64 * 1024;

/// Everything the supervisor needs, resolved and validated.
#[derive(Debug, Clone)]
pub struct Options {
    pub dir: SocketDir,
    pub paths: SessionPaths,
    pub spawn: SpawnSpec,
    pub scrollback: usize,
    pub classifier: ClassifierSpec,
    pub kill_process_group: bool,
    pub kill_grace_ms: u64,
    pub log_file: PathBuf,
    pub log_level: LogLevel,
    /// Write `ready` on stderr once the child runs, then detach stdio: how
    /// `hm run` (without `--detach`) learns that its background supervisor
    /// started, or why it did not.
    pub notify_ready: bool,
    /// Keep the end of the session (its output and EXIT) for the launcher's
    /// subscription (SUBSCRIBE with [`crate::protocol::SUBSCRIBE_LAUNCHER`]),
    /// up to [`AWAIT_ATTACH`]: `hm run` and the dashboard connect only after
    /// the program has started, and a short one may be over by then.
    pub await_attach: bool,
    /// `[[notify]]` commands, run on the session's events.
    pub notify: Vec<crate::config::NotifyRule>,
    /// A person's name for the session (`--label`).
    pub label: Option<String>,
}

/// Runs a session to its end and returns the exit code to exit with.
///
/// Must be called while the process has exactly one thread.
pub fn run(opts: Options) -> Result<i32> {
    let mut pidfile = PidFile::acquire(&opts.paths.pid, &opts.paths.id)?;
    // The id is ours now: an earlier session's record under it is history
    // this one replaces.
    let _ = ended::remove(opts.dir.path(), &opts.paths.id);
    let listener = match bind(&opts.paths.sock) {
        Ok(l) => l,
        Err(e) => {
            pidfile.remove();
            return Err(e);
        }
    };
    let cleanup = |pidfile: PidFile| {
        let _ = fs::remove_file(&opts.paths.sock);
        pidfile.remove();
    };
    let me = std::process::id();
    let log_existed = opts.log_file.exists();
    let prepared = pidfile
        .write_supervisor(me)
        .map_err(anyhow::Error::from)
        .and_then(|()| log::BoundedLog::open(&opts.log_file).map_err(anyhow::Error::from));
    let log_file = match prepared {
        Ok(l) => l,
        Err(e) => {
            cleanup(pidfile);
            return Err(e);
        }
    };

    let spawned = match pty::spawn(&opts.spawn) {
        Ok(s) => s,
        Err(e) => {
            cleanup(pidfile);
            if !log_existed {
                let _ = fs::remove_file(&opts.log_file);
            }
            return Err(e.into());
        }
    };
    if let Err(e) = pidfile.write_child(me, spawned.pid.as_raw() as u32) {
        // The pid file is informational; the lock is what matters.
        let _ = writeln!(io::stderr(), "hm: warning: {e}");
    }
    log::init(log_file, opts.log_level);
    info!(
        id = %opts.paths.id,
        pid = spawned.pid.as_raw(),
        command = ?opts.spawn.program,
        "session started"
    );
    raise_fd_limit();
    if opts.notify_ready {
        detach_stdio();
    }

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the event loop")?;
    let local = tokio::task::LocalSet::new();
    let code = local.block_on(&rt, serve(&opts, listener, spawned));
    info!(code, "session ended");
    cleanup(pidfile);
    Ok(code)
}

/// Binds the session socket, replacing a stale one (we hold the lock, so
/// nobody else is serving it). The umask makes the socket 0600 from birth.
fn bind(path: &Path) -> Result<std::os::unix::net::UnixListener> {
    if let Ok(meta) = fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            anyhow::bail!(
                "'{}' exists and is not a socket; remove it or use another id",
                path.display()
            );
        }
        fs::remove_file(path)
            .with_context(|| format!("cannot remove stale socket '{}'", path.display()))?;
    }
    let old = umask(Mode::from_bits_truncate(0o177));
    let bound = std::os::unix::net::UnixListener::bind(path);
    umask(old);
    let listener = bound.with_context(|| format!("cannot bind '{}'", path.display()))?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600))
        .with_context(|| format!("cannot set permissions of '{}'", path.display()))?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// Tells the launcher we are up, then lets go of its pipe and terminal.
fn detach_stdio() {
    let _ = io::stderr().write_all(b"ready\n");
    if let Ok(null) = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        let _ = nix::unistd::dup2_stdin(&null);
        let _ = nix::unistd::dup2_stdout(&null);
        let _ = nix::unistd::dup2_stderr(&null);
    }
}

/// Many clients each need a descriptor; the soft limit is often 1024 while
/// the hard limit is far higher. Done after the fork so the child keeps the
/// limits it would have had.
fn raise_fd_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE)
        && soft < hard
    {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, hard.min(65536).max(soft), hard);
    }
}

async fn serve(
    opts: &Options,
    listener: std::os::unix::net::UnixListener,
    spawned: pty::Spawned,
) -> i32 {
    let clock = Clock::new();
    let info = SessionInfo {
        id: opts.paths.id.clone(),
        command: std::iter::once(&opts.spawn.program)
            .chain(&opts.spawn.args)
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        workdir: opts.spawn.workdir.to_string_lossy().into_owned(),
        supervisor_pid: std::process::id(),
        started_unix_ms: clock::unix_ms(),
        classifier: opts.classifier.name(),
        idle_threshold_ms: opts.classifier.idle_threshold_ms(),
        label: opts.label.clone(),
    };
    let mut shared = Shared::new(
        opts.scrollback,
        opts.classifier.build(clock.now_ms()),
        clock,
        spawned.pid.as_raw() as u32,
        opts.spawn.size,
        opts.kill_grace_ms,
        info,
    );
    if let Some(settings) = opts.classifier.agent_settings() {
        // `hm run` checked the user's rule files before starting us.
        let dir = crate::detect::user_rules_dir(
            std::env::var_os("XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .as_deref(),
            std::env::var_os("HOME").map(PathBuf::from).as_deref(),
        );
        let rules = crate::detect::load_rules(dir.as_deref()).map_or_else(
            |e| {
                warn!("{e}; using the built-in rules");
                crate::detect::rules::builtin()
            },
            std::sync::Arc::new,
        );
        let detector =
            Detector::with_rules(settings, rules, &shared.info.command, shared.clock.now_ms());
        let probe = ProcessProbe::new(&spawned.master, &spawned.slave, spawned.pid);
        shared = shared.with_detector(detector, probe);
    }
    let master = match pty::register_fd_for(spawned.master, Interest::READABLE) {
        Ok(m) => m,
        Err(e) => {
            warn!("cannot watch the pty: {e}");
            return 1;
        }
    };
    let listener = match UnixListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            warn!("cannot watch the socket: {e}");
            return 1;
        }
    };
    let (changed_tx, changed_rx) = watch::channel(());
    let ctx = Rc::new(Ctx::new(shared, master, changed_rx));
    let changed_tx = Rc::new(changed_tx);
    let reaped = Rc::new(Notify::new());
    tokio::task::spawn_local(pump_output(ctx.clone(), changed_tx.clone(), reaped.clone()));
    tokio::task::spawn_local(track_state(
        ctx.clone(),
        changed_tx.clone(),
        Notifier::new(opts.notify.clone()),
    ));
    tokio::task::spawn_local(accept_loop(ctx.clone(), listener));
    let program = Program {
        pid: spawned.pid,
        group: opts.kill_process_group,
        slave: spawned.slave,
    };
    let outcome = match StopSignals::install() {
        Ok(mut stop) => {
            main_loop(
                &ctx,
                program,
                opts.await_attach,
                &mut stop,
                &changed_tx,
                &reaped,
            )
            .await
        }
        Err(e) => Err(e),
    };
    let code = match outcome {
        Ok(code) => code,
        Err(e) => {
            warn!("event loop failed: {e}");
            1
        }
    };
    // What is left of the session for `hm ls`, `hm status` and `hm restart`.
    let record = {
        let s = ctx.shared.borrow();
        ended::Ended {
            id: s.info.id.clone(),
            command: s.info.command.clone(),
            workdir: s.info.workdir.clone(),
            classifier: s.info.classifier.to_owned(),
            started_unix_ms: s.info.started_unix_ms,
            ended_unix_ms: crate::clock::unix_ms(),
            exit_code: s.ended.map_or(code, |e| e.code),
            last_lines: ended::last_lines(&s.screen.screen().contents()),
            label: s.info.label.clone(),
            cols: s.size.cols,
            rows: s.size.rows,
        }
    };
    if let Err(e) = ended::write(opts.dir.path(), &record) {
        warn!("cannot keep the session's record: {e}");
    }
    // Told here, not by the state task, which may not run again.
    let last = ctx.shared.borrow_mut().state_now();
    Notifier::new(opts.notify.clone()).changed(
        &record.id,
        None,
        &last,
        Some(record.exit_code),
        ctx.clock.now(),
    );
    code
}

/// The session's program, as the main loop needs it.
#[derive(Debug)]
struct Program {
    pid: Pid,
    /// Signal its whole session (`kill_process_group`), not only it.
    group: bool,
    /// Our copy of the pty's slave, closed once the program is reaped.
    slave: OwnedFd,
}

/// The signals that ask the supervisor itself to stop its session:
/// SIGTERM, SIGINT, SIGHUP and SIGQUIT.
#[derive(Debug)]
struct StopSignals(Vec<tokio::signal::unix::Signal>);

impl StopSignals {
    fn install() -> io::Result<StopSignals> {
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
    fn none() -> StopSignals {
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
async fn main_loop(
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
        if check_child && ctx.shared.borrow().ended.is_none() {
            check_child = false;
            if let Some(code) = try_reap(child) {
                record_exit(ctx, code, reaped, changed);
                info!(code, "child exited");
                // Closing our copy of the slave lets the master report EOF
                // once the child's last bytes have been read.
                slave = None;
                escalation.reaped();
            }
        }
        let (ended, closed) = {
            let s = ctx.shared.borrow();
            (s.ended.is_some(), s.output_closed)
        };
        if ended && closed {
            break;
        }
        if let Some(grace) = ctx.shared.borrow_mut().kill_requested.take()
            && !ended
        {
            asked_to_stop = true;
            let now = ctx.clock.now();
            for &sig in escalation.request(now, Duration::from_millis(grace)) {
                if sig == Signal::SIGTERM {
                    info!(grace_ms = grace, "stopping the session");
                }
                signal_child(child, program.group, sig);
            }
        }
        let kill_at = escalation.deadline();
        tokio::select! {
            _ = sigchld.recv() => check_child = true,
            () = stop.recv() => request_kill(ctx),
            () = sleep_until(kill_at) => {
                if let Some(sig) = escalation.expire(ctx.clock.now()) {
                    warn!("grace period over; sending SIGKILL");
                    signal_child(child, program.group, sig);
                }
            }
            () = ctx.wake_main.notified() => {}
        }
    }
    drop(slave);

    // The launcher's attach may not have connected yet: a program that
    // ended at once still owes it its output and exit code.
    if await_attach && !asked_to_stop && !ctx.shared.borrow().end_awaited {
        info!("keeping the ended session for its launcher's attach");
        let by = ctx.clock.now() + AWAIT_ATTACH;
        loop {
            {
                // A KILL (with or without a wait for EXIT) or a signal
                // now ends the wait: the end was asked for after all.
                let s = ctx.shared.borrow();
                if s.end_awaited || s.kill_requested.is_some() {
                    break;
                }
            }
            tokio::select! {
                () = ctx.wake_main.notified() => {}
                () = stop.recv() => break,
                () = tokio::time::sleep_until(by) => {
                    warn!("nobody attached to see the end of the session");
                    break;
                }
            }
        }
    }

    // Give every subscriber the chance to read its last bytes and EXIT.
    let flush_by = ctx.clock.now() + EXIT_FLUSH;
    while ctx.shared.borrow().exit_waiters > 0 {
        tokio::select! {
            () = ctx.wake_main.notified() => {}
            () = tokio::time::sleep_until(flush_by) => {
                warn!("some subscribers did not read their last output in time");
                break;
            }
        }
    }
    Ok(ctx.shared.borrow().ended.map_or(1, |e| e.code))
}

/// Records the program's end: STATUS says dead from now on, and the pty
/// reader and the subscribers are told (they drain, then send EXIT).
fn record_exit(ctx: &Ctx, code: i32, reaped: &Notify, changed: &watch::Sender<()>) {
    let mut s = ctx.shared.borrow_mut();
    let now = s.clock.now_ms();
    s.ended = Some(Ended { code });
    s.classifier.set_dead(now);
    if let Some(d) = &mut s.detector {
        d.ended(now);
    }
    ctx.output_seen.notify_one();
    drop(s);
    reaped.notify_one();
    changed.send_replace(());
}

/// Sleeps until `at`, or forever if there is no deadline.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn request_kill(ctx: &Ctx) {
    let mut s = ctx.shared.borrow_mut();
    let grace = s.default_grace_ms;
    s.kill_requested = Some(s.kill_requested.map_or(grace, |g| g.min(grace)));
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
/// is not an ended one.
fn try_reap(child: Pid) -> Option<i32> {
    loop {
        match waitpid(child, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(_, code)) => return Some(code),
            Ok(WaitStatus::Signaled(_, sig, _)) => return Some(128 + sig as i32),
            Ok(_) => return None,
            Err(nix::Error::EINTR) => {}
            // ECHILD: someone else reaped it; nothing more will come.
            Err(_) => return Some(1),
        }
    }
}

/// Reads the pty into the ring, never past what the slowest subscriber
/// still needs, and wakes subscribers once per read pass.
async fn pump_output(ctx: Rc<Ctx>, changed: Rc<watch::Sender<()>>, reaped: Rc<Notify>) {
    let mut stall: Option<(u64, Instant)> = None;
    let mut drain_until: Option<Instant> = None;
    loop {
        let (budget, oldest_needed, ended) = {
            let s = ctx.shared.borrow();
            (s.read_budget(), s.min_retained(), s.ended.is_some())
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
                () = ctx.space.notified() => {}
                () = tokio::time::sleep_until(deadline) => {
                    tracing::debug!(subs = ?ctx.shared.borrow().subs.iter().map(|(id, s)| (*id, s.retains(), s.offset)).collect::<Vec<_>>(), "stalled");
                    let n = ctx.shared.borrow_mut().evict_at(oldest_needed, STALL_TIMEOUT.as_millis() as u64);
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
                let from = s.ring.head();
                let spare = s.ring.spare(limit - pass);
                let asked = spare.len();
                let n = nix::unistd::read(fd.get_ref(), spare).map_err(io::Error::from)?;
                s.ring.commit(n);
                if n > 0 {
                    s.note_output(from, from + n as u64);
                }
                if !s.answers.is_empty() {
                    // A program waits for these (fish, neovim and the agent
                    // CLIs time out without them): a few bytes into a pty
                    // that has room; one that is full is not waited on.
                    let answers = std::mem::take(&mut s.answers);
                    if let Err(e) = nix::unistd::write(fd.get_ref(), &answers) {
                        tracing::debug!("query answer not delivered: {e}");
                    }
                }
                Ok((n, asked))
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
        if pass > 0 {
            changed.send_replace(());
            ctx.output_seen.notify_one();
        }
        if eof {
            if ended {
                break;
            }
            // EOF before the child is reaped (it closed the pty itself):
            // nothing more can come, but keep waiting for the child.
            ctx.shared.borrow_mut().output_closed = true;
            changed.send_replace(());
            ctx.wake_main.notify_one();
            return;
        }
        // Let subscribers run between passes so a fast child cannot starve
        // them (pty readiness does not consume tokio's task budget). After
        // a drained read the wait for the next edge does that already.
        if !drained {
            tokio::task::yield_now().await;
        }
    }
    ctx.shared.borrow_mut().output_closed = true;
    changed.send_replace(());
    ctx.wake_main.notify_one();
}

/// Runs the `[[notify]]` commands when a session starts waiting, finishes
/// its work (active, then idle) or exits, each at most once per
/// `min_interval_ms` per event.
#[derive(Debug)]
struct Notifier {
    rules: Vec<crate::config::NotifyRule>,
    /// When each (rule, event) last ran.
    last: std::collections::HashMap<(usize, &'static str), Instant>,
}

impl Notifier {
    fn new(rules: Vec<crate::config::NotifyRule>) -> Notifier {
        Notifier {
            rules,
            last: std::collections::HashMap::new(),
        }
    }

    fn changed(
        &mut self,
        id: &str,
        before: Option<crate::detect::Primary>,
        now: &crate::protocol::StateReport,
        exit: Option<i32>,
        at: Instant,
    ) {
        use crate::detect::Primary;
        if self.rules.is_empty() {
            return;
        }
        // The end is told once, by the supervisor as it ends (`exit` is
        // given only there): the state task may not run again before.
        let event = match (before, now.primary, exit) {
            (_, _, Some(_)) => "exited",
            (_, Primary::Dead, None) => return,
            (Some(p), Primary::Waiting, None) if p != Primary::Waiting => "waiting",
            (Some(Primary::Active | Primary::Stuck), Primary::Idle, None) => "finished",
            _ => return,
        };
        for (i, rule) in self.rules.iter().enumerate() {
            if !rule.on.iter().any(|e| e == event) {
                continue;
            }
            let due = self
                .last
                .get(&(i, event))
                .is_none_or(|&t| at - t >= Duration::from_millis(rule.min_interval_ms));
            if !due {
                continue;
            }
            self.last.insert((i, event), at);
            let mut cmd = std::process::Command::new("/bin/sh");
            cmd.arg("-c")
                .arg(&rule.command)
                .env("HM_SESSION_ID", id)
                .env("HM_EVENT", event)
                .env("HM_STATE", now.primary.name())
                .env("HM_DETAIL", now.detail.map_or("", |d| d.name()))
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            if let Some(code) = exit {
                cmd.env("HM_EXIT_CODE", code.to_string());
            }
            match cmd.spawn() {
                // Reaped by a thread of its own, so that no zombie stays
                // and the supervisor's own waitpid (of its program) is not
                // confused.
                Ok(mut child) => {
                    std::thread::spawn(move || {
                        let _ = child.wait();
                    });
                }
                Err(e) => warn!("cannot run the notify command: {e}"),
            }
        }
    }
}

/// How long output must pause before the state is re-evaluated, and how
/// long continuous output may defer it: the verdict is of a settled screen,
/// not of every read.
const SETTLE: Duration = Duration::from_millis(50);
const SETTLE_LIMIT: Duration = Duration::from_millis(150);

/// Keeps the session's reported state current and tells the subscribers
/// that asked for STATE frames when it changes: after output settles, after
/// a resize, and when a threshold runs out. While the session is idle
/// nothing is pending and this task sleeps without a timer.
async fn track_state(ctx: Rc<Ctx>, changed: Rc<watch::Sender<()>>, mut notifier: Notifier) {
    loop {
        let wake = {
            let mut s = ctx.shared.borrow_mut();
            let before = s.report.as_ref().map(|r| r.primary);
            if s.refresh_report() {
                if let Some(now) = &s.report {
                    notifier.changed(&s.info.id, before, now, None, s.clock.now());
                }
                changed.send_replace(());
                // Come to rest: what the work before freed goes back.
                if s.report.as_ref().is_some_and(|r| {
                    matches!(
                        r.primary,
                        crate::detect::Primary::Idle | crate::detect::Primary::Waiting
                    )
                }) {
                    crate::pty::release_free_memory();
                }
            }
            if s.ended.is_some() && s.output_closed {
                return;
            }
            s.next_state_change_ms().map(|at| s.clock.at_ms(at))
        };
        tokio::select! {
            () = ctx.output_seen.notified() => {
                let first = ctx.clock.now();
                loop {
                    tokio::select! {
                        () = ctx.output_seen.notified() => {
                            if ctx.clock.now() - first >= SETTLE_LIMIT {
                                break;
                            }
                        }
                        () = tokio::time::sleep(SETTLE) => break,
                    }
                }
            }
            () = sleep_until(wake) => {}
        }
    }
}

/// Accepts connections from our own user, up to [`MAX_CONNECTIONS`].
async fn accept_loop(ctx: Rc<Ctx>, listener: UnixListener) {
    let me = nix::unistd::geteuid().as_raw();
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let uid = stream.peer_cred().map(|c| c.uid()).ok();
                if uid != Some(me) && uid != Some(0) {
                    warn!(?uid, "refused a connection from another user");
                    continue;
                }
                if ctx.shared.borrow().connections >= MAX_CONNECTIONS {
                    warn!("refused a connection: {MAX_CONNECTIONS} already open");
                    let mut msg = vec![crate::protocol::MODE_BINARY];
                    msg.extend(crate::protocol::frame(
                        crate::protocol::server::ERROR,
                        &crate::protocol::encode_error(
                            crate::protocol::ErrorCode::TooManyConnections,
                            "too many connections to this session",
                        ),
                    ));
                    let _ = stream.try_write(&msg);
                    continue;
                }
                // Counted here, not in the task, so a burst of connections
                // accepted before any task runs cannot overshoot the cap.
                ctx.shared.borrow_mut().connections += 1;
                tokio::task::spawn_local(client::serve(ctx.clone(), stream));
            }
            Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) => {
                // Out of descriptors: accepting again at once would spin.
                // Retry when one of ours is freed, or in a second (another
                // process may free the system's).
                warn!("cannot accept connections: {e}; retrying when one closes");
                tokio::select! {
                    () = ctx.conn_closed.notified() => {}
                    () = tokio::time::sleep(Duration::from_secs(1)) => {}
                }
            }
            Err(e) => {
                warn!("accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}

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
        let (changed, changed_rx) = watch::channel(());
        let master = pty::register_fd_for(master, Interest::READABLE)?;
        let core = Core {
            ctx: Rc::new(Ctx::new(shared, master, changed_rx)),
            changed: Rc::new(changed),
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

    /// Serves one connection until it closes, as an accepted one is.
    pub(crate) async fn serve(&self, stream: tokio::net::UnixStream) {
        self.ctx.shared.borrow_mut().connections += 1;
        client::serve(self.ctx.clone(), stream).await;
    }

    /// The program exited with `code`, as the main loop records a reaped
    /// child. Once the caller closes the slave, the reader sees the end of
    /// the output and subscribers get EXIT.
    pub(crate) fn end(&self, code: i32) {
        record_exit(&self.ctx, code, &self.reaped, &self.changed);
    }

    /// Runs the main loop for `child`, a process the caller started on
    /// the pty (it must be our child, so that it can be reaped) and left
    /// `slave` to us: kill requests are escalated and the exit is recorded
    /// as `hm run` does, until every subscriber has had its EXIT. Signals
    /// only the child itself, and takes no stop signals.
    #[cfg(test)]
    pub(crate) async fn supervise(&self, child: Pid, slave: OwnedFd) -> io::Result<i32> {
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
