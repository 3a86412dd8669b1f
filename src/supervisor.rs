//! The per-session supervisor: `hm run --detach`.
//!
//! [`run`] follows a strict order. Everything that can fail is done while
//! nothing has started yet: the socket dir is checked, the pid file locked,
//! the socket bound and the log opened. Then the child is forked (the
//! process still has one thread), and only then does a current-thread
//! tokio runtime start. Four tasks share one [`state::Shared`]: the pty
//! reader ([`reader`]), the state tracker ([`tracker`]), the accept loop
//! (here), and one task per client ([`client`]); the main loop
//! ([`lifecycle`]) reaps the child, escalates kills and decides when
//! everything has been delivered.
//!
//! Every task reads the time from the session's [`Clock`] and waits on
//! tokio timers, so a test can run all of it but the fork with paused time
//! ([`Core`], `supervisor/tests.rs`).

mod acting;
mod answering;
mod client;
mod context;
mod escalation;
#[cfg(any(test, feature = "fuzzing"))]
mod in_process;
pub mod journal;
pub mod keeper;
mod lifecycle;
mod log;
pub(crate) mod output;
pub mod pidfile;
mod process;
mod reader;
pub mod ring;
mod state;
#[cfg(test)]
mod tests;
mod tracker;
mod wakes;

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use anyhow::{Context, Result};
use nix::sys::stat::{Mode, umask};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::sync::{Notify, watch};
use tracing::{info, warn};

use crate::classify::ClassifierSpec;
use crate::clock::{self, Clock, Instant};
use crate::config::LogLevel;
use crate::paths::{SessionPaths, SocketDir};
use crate::pty::{self, SpawnSpec};

use crate::detect::Detector;
use context::Ctx;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use in_process::Core;
use lifecycle::{Program, StopSignals, main_loop};
use pidfile::PidFile;
use process::ProcessProbe;
use state::{SessionInfo, Shared};
use tracker::{Notifier, track_state};

/// The most connections served at once; more are told so and closed.
const MAX_CONNECTIONS: usize = 1024;

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
    /// `[[automation]]` rules: dialogs answered unasked.
    pub automation: Vec<crate::config::AutomationRule>,
    /// What to keep for `hm restore` (`None`: no state dir to keep it in).
    pub keep: Option<keeper::Keep>,
}

/// Runs a session to its end and returns the exit code to exit with.
///
/// Must be called while the process has exactly one thread.
pub fn run(mut opts: Options) -> Result<i32> {
    let Started {
        pidfile,
        listener,
        spawned,
        claim,
    } = start(&mut opts)?;
    let rt = runtime()?;
    let local = tokio::task::LocalSet::new();
    // Boxed: the loop's state (tens of KiB) would otherwise be copied into
    // each of tokio's wrapping frames, every page of them resident in an
    // idle supervisor for as long as the session lives.
    let (code, recorded) = local.block_on(&rt, Box::pin(serve(&opts, listener, spawned, claim)));
    info!(code, "session ended");
    // The hooks' settings file stays with the session's record: the
    // resume command Claude Code prints as it exits names it. Forgetting
    // the session removes it (`ended::forget`).
    remove_files(&opts, None, pidfile);
    // Another session ending at the same time may have trimmed our record
    // away while we still held the lock; it then kept the log, as it keeps
    // a running session's. Checked only after the lock is gone, so either
    // that trim saw us gone and took the log itself, or we see the record
    // gone here and take what went with it.
    let dir = opts.dir.path();
    if recorded && !crate::ended::path(dir, &opts.paths.id).exists() {
        let _ = crate::ended::forget(dir, &opts.paths.id);
    }
    Ok(code)
}

/// The event loop, built apart from [`run`] for the reason [`start`] is.
#[inline(never)]
fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the event loop")
}

/// What a started session's loop is given, and what is removed after it.
struct Started {
    pidfile: PidFile,
    listener: std::os::unix::net::UnixListener,
    spawned: pty::Spawned,
    claim: Option<keeper::Claim>,
}

/// The socket, the pid file and, for a session that did not start, the
/// hooks' settings file: removed when it ends or fails to start.
fn remove_files(opts: &Options, hooks_file: Option<&Path>, pidfile: PidFile) {
    let _ = fs::remove_file(&opts.paths.sock);
    if let Some(f) = hooks_file {
        let _ = fs::remove_file(f);
    }
    pidfile.remove();
}

/// Takes the id, binds the socket, forks the program and opens the log.
/// Never inlined into [`run`]: its temporaries would share run's frame,
/// which stays on the stack, resident, for as long as the session runs.
#[inline(never)]
fn start(opts: &mut Options) -> Result<Started> {
    let mut pidfile = PidFile::acquire(&opts.paths.pid, &opts.paths.id)?;
    // A restore takes over the lost session's manifest now that it holds
    // the id's lock, and comes back with its classifier as it was.
    let claim = match opts
        .keep
        .as_ref()
        .and_then(|k| Some((k, k.restoring.as_ref()?)))
    {
        Some((keep, token)) => {
            let most = keep
                .history_bytes
                .min(opts.scrollback.saturating_add(output::LAG_WINDOW));
            match keeper::claim(keep, &opts.paths.id, token, most) {
                Ok(c) => Some(c),
                Err(e) => {
                    pidfile.remove();
                    return Err(e);
                }
            }
        }
        None => None,
    };
    if let Some(spec) = claim.as_ref().and_then(|c| c.old.classifier.spec()) {
        opts.classifier = spec;
    }
    let listener = match bind(&opts.paths.sock) {
        Ok(l) => l,
        Err(e) => {
            pidfile.remove();
            return Err(e);
        }
    };
    // The agent's hooks report to this session (`hm hook`); the settings
    // file they need goes with the session.
    let hooks = install_hooks(opts);
    let hooks_file = hooks.as_ref().and_then(|h| h.file.clone());
    let cleanup = |pidfile: PidFile| remove_files(opts, hooks_file.as_deref(), pidfile);
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

    let spawn = hooks.as_ref().map_or(&opts.spawn, |h| &h.spawn);
    let spawned = match pty::spawn(spawn) {
        Ok(s) => s,
        Err(e) => {
            cleanup(pidfile);
            if !log_existed {
                let _ = fs::remove_file(&opts.log_file);
            }
            return Err(e.into());
        }
    };
    // The program runs: an earlier session's record under this id is
    // history this one replaces. Not before: a start that failed (a
    // program no longer on the PATH) kept nothing, and `hm restart` lost
    // the very record it was asked to start again.
    let _ = crate::ended::remove(opts.dir.path(), &opts.paths.id);
    if let Err(e) = pidfile.write_child(me, spawned.pid.as_raw() as u32) {
        // The pid file is informational; the lock is what matters.
        let _ = writeln!(io::stderr(), "hm: warning: {}", crate::error::one_line(&e));
    }
    log::init(log_file, opts.log_level);
    info!(
        id = %opts.paths.id,
        pid = spawned.pid.as_raw(),
        command = ?opts.spawn.program,
        "session started"
    );
    if let Some(h) = &hooks {
        info!("hooks: {}", h.note);
    }
    if let Some(w) = claim.as_ref().and_then(|c| c.warning.as_ref()) {
        warn!("restored: {w}");
    }
    // After the fork: the program keeps the limit it would have had.
    crate::fd::raise_limit();
    if opts.notify_ready {
        detach_stdio();
    }
    Ok(Started {
        pidfile,
        listener,
        spawned,
        claim,
    })
}

/// Installs `hm hook` into the session's agent, when its classifier takes
/// hook reports and the agent is one hm knows how to. A failure costs the
/// hooks, not the session.
fn install_hooks(opts: &Options) -> Option<crate::agent_hooks::Installed> {
    if !opts.classifier.agent_settings().is_some_and(|s| s.hooks) {
        return None;
    }
    let hm = std::env::current_exe().ok()?;
    let file = crate::agent_hooks::settings_file(opts.dir.path(), &opts.paths.id);
    match crate::agent_hooks::install(&opts.spawn, &hm, &opts.paths.sock, &file) {
        Ok(done) => done,
        Err(e) => {
            let _ = writeln!(
                io::stderr(),
                "hm: warning: cannot install the agent's hooks in '{}': {e}",
                file.display()
            );
            None
        }
    }
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

async fn serve(
    opts: &Options,
    listener: std::os::unix::net::UnixListener,
    spawned: pty::Spawned,
    claim: Option<keeper::Claim>,
) -> (i32, bool) {
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
        let rules = crate::detect::load_rules(dir.as_deref()).unwrap_or_else(|e| {
            warn!("{e}; using the built-in rules");
            crate::detect::rules::builtin()
        });
        let detector = Detector::with_rules(
            settings,
            rules.clone(),
            &shared.info().command,
            shared.clock().now_ms(),
        );
        let shells = rules
            .agent(crate::detect::SHELL)
            .map(|a| a.commands.clone())
            .unwrap_or_default();
        let probe = ProcessProbe::new(&spawned.master, &spawned.slave, spawned.pid, shells);
        shared = shared
            .with_detector(detector, probe)
            .with_automation(opts.automation.clone());
    } else if !matches!(opts.classifier, crate::classify::ClassifierSpec::None) {
        // Any other classifier still says when the program asks.
        let shells = crate::detect::rules::builtin_commands().shells.clone();
        let probe = ProcessProbe::new(&spawned.master, &spawned.slave, spawned.pid, shells);
        shared = shared.with_process_check(probe);
    }
    if let Some(keep) = opts.keep.as_ref().filter(|k| keeper::may_keep(k, opts)) {
        let manifest = keeper::manifest(opts, keep, shared.info().started_unix_ms, claim.as_ref());
        let pid = spawned.pid.as_raw() as u32;
        // A restore's files are written and synced before its first
        // client is served (below); a new session's manifest is synced a
        // moment after it is written.
        let sync_at = claim
            .is_none()
            .then(|| shared.clock().now_ms() + keeper::FIRST_SYNC_DELAY_MS);
        shared = shared.with_keeper(keeper::Keeper::start(
            keep.dir.clone(),
            manifest,
            keep.history_bytes,
            pid,
            sync_at,
        ));
    }
    if let Some(c) = &claim {
        shared.preload(&c.old_output, &c.mark);
        // A restore's manifest and old output are written before the
        // first client is served: `hm restore` waits for that. A new
        // session's are written by the state tracker's first round, the
        // manifest's sync put off (`keeper::FIRST_SYNC_DELAY_MS`), so that
        // its start is not held up by a synced write.
        shared.keep();
    }
    let master = match crate::fd::register(spawned.master, Interest::READABLE) {
        Ok(m) => m,
        Err(e) => {
            warn!("cannot watch the pty: {e}");
            return (1, false);
        }
    };
    // Non-blocking since it was bound.
    let listener = match crate::fd::register(listener, Interest::READABLE) {
        Ok(l) => l,
        Err(e) => {
            warn!("cannot watch the socket: {e}");
            return (1, false);
        }
    };
    let changed_tx = Rc::new(watch::channel(()).0);
    let ctx = Rc::new(Ctx::new(shared, master, changed_tx.clone()));
    let reaped = Rc::new(Notify::new());
    tokio::task::spawn_local(reader::pump_output(
        ctx.clone(),
        changed_tx.clone(),
        reaped.clone(),
    ));
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
    let record = ctx.shared.borrow_mut().ended_record(code, clock::unix_ms());
    let recorded = match crate::ended::write(opts.dir.path(), &record) {
        Ok(()) => true,
        Err(e) => {
            warn!("cannot keep the session's record: {e}");
            false
        }
    };
    ctx.shared.borrow_mut().keep_end(code, record.ended_unix_ms);
    // Told here, not by the state task, which may not run again.
    let last = ctx.shared.borrow_mut().state_now();
    let told = tracker::Told {
        id: &record.id,
        label: record.label.as_deref(),
        state: &last,
        exit: Some(record.exit_code),
    };
    Notifier::new(opts.notify.clone()).changed(&told, None, ctx.clock.now());
    (code, recorded)
}

/// Accepts connections from our own user, up to [`MAX_CONNECTIONS`].
///
/// Accepted with `accept4` straight onto a non-blocking socket that is
/// registered once, by the connection's task: tokio's own accept
/// registered each connection only for it to be taken out again and
/// registered anew (two `epoll_ctl` more for every `hm ls`).
async fn accept_loop(ctx: Rc<Ctx>, listener: AsyncFd<std::os::unix::net::UnixListener>) {
    use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
    let me = nix::unistd::geteuid().as_raw();
    loop {
        let accepted = match listener.readable().await {
            Ok(mut ready) => match ready.try_io(|l| crate::fd::accept(l.get_ref())) {
                Ok(r) => r,
                Err(_would_block) => continue,
            },
            Err(e) => Err(e),
        };
        match accepted {
            Ok(sock) => {
                let uid = getsockopt(&sock, PeerCredentials).map(|c| c.uid()).ok();
                if uid != Some(me) && uid != Some(0) {
                    warn!(?uid, "refused a connection from another user");
                    continue;
                }
                if ctx.shared.borrow().connections() >= MAX_CONNECTIONS {
                    warn!("refused a connection: {MAX_CONNECTIONS} already open");
                    let mut msg = vec![crate::protocol::MODE_BINARY];
                    msg.extend(
                        crate::protocol::Reply::error(
                            crate::protocol::ErrorCode::TooManyConnections,
                            "too many connections to this session",
                        )
                        .encode(),
                    );
                    let _ = nix::unistd::write(&sock, &msg);
                    continue;
                }
                // Counted here, not in the task, so a burst of connections
                // accepted before any task runs cannot overshoot the cap.
                ctx.shared.borrow_mut().connection_opened();
                tokio::task::spawn_local(client::serve(ctx.clone(), sock));
            }
            Err(e)
                if e.kind() == io::ErrorKind::Interrupted
                    || e.raw_os_error() == Some(libc::ECONNABORTED) => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) => {
                // Out of descriptors: accepting again at once would spin.
                // Retry when one of ours is freed, or in a second (another
                // process may free the system's).
                warn!("cannot accept connections: {e}; retrying when one closes");
                tokio::select! {
                    () = ctx.wakes.conn_closed.notified() => {}
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

/// Sleeps until `at`, or forever if there is no deadline.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
