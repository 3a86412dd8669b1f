//! `hm tui`: the dashboard of every session in the socket dir.
//!
//! The loop here owns the terminal, the sockets and the timers, and does
//! nothing else: events become [`model::Msg`]s, [`update::update`] turns
//! them into changes and [`model::Effect`]s, and [`view::view`] draws the
//! model at most [`FRAME_RATE`] times a second and only when something
//! changed. Keys are read on their own thread and handled before session
//! output, so output parsing never delays a key. Each session has a task
//! holding one connection (SUBSCRIBE for output, STATUS for state) that
//! reconnects after errors; a session that misbehaves affects its pane only.

mod apply;
pub mod bindings;
mod connection;
pub mod copy;
mod discovery;
pub mod focus;
pub mod form;
pub mod inbox;
mod keyboard;
pub mod keymap;
mod label;
pub mod layout;
pub mod lost;
pub mod model;
mod raw_attach;
mod remotes;
mod saved_layout;
pub mod screen;
pub mod select;
pub mod sessions;
mod sizing;
pub mod update;
pub mod view;
pub mod window;

use std::io::Write;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use crate::paths::SocketDir;
use crate::theme::Theme;
use apply::Apply;
use keyboard::Keyboard;
use model::{Effect, Model, Msg};
use remotes::Remotes;

/// Redraws per second at most.
pub const FRAME_RATE: u32 = 30;
/// Longest the run loop handles session messages before it looks at the
/// keyboard and the frame clock again: a quarter of a frame at 30 Hz.
const BATCH_TIME: Duration = Duration::from_millis(8);

/// How often timers refresh and the socket dir is scanned for sessions.
const TICK: Duration = Duration::from_secs(1);

/// What `hm tui` was asked for.
#[derive(Debug, Clone)]
pub struct Options {
    pub dir: PathBuf,
    pub theme: Theme,
    pub fit: bool,
    pub bell: bool,
    pub desktop_notify: Option<crate::config::DesktopNotify>,
    /// `[tui] columns`: wins over the remembered layout.
    pub columns: Option<u16>,
    pub detach_key: Option<u8>,
    /// Opens copy mode in focus.
    pub copy_key: Option<u8>,
    /// Rows of history each pane keeps.
    pub history_lines: usize,
    /// `history_lines` was not set (see `Model::history_for`).
    pub history_shared: bool,
    pub config_path: Option<PathBuf>,
    /// `dir`, when it came from `--socket-dir` (not the config).
    pub dir_flag: Option<String>,
    /// What a raw attach (`a`) runs with: the detach and copy keys, the
    /// theme.
    pub attach_config: crate::config::Config,
    /// In a raw attach, returns to the dashboard at the next session that
    /// needs you.
    pub next_key: Option<u8>,
    /// Other machines whose sessions the grid shows (`host:id`).
    pub hosts: Vec<crate::remote::Host>,
    pub ssh_command: String,
    /// Each host's mount: where its sessions' sockets are (set by `run`).
    pub remote_dirs: Vec<(String, PathBuf)>,
    /// Each host's way to start a session (`n` with `host:id`).
    pub spawners: Vec<(String, crate::remote::Spawner)>,
    /// The grid's keys (`[tui.keys]`).
    pub keys: crate::config::Keymap,
}

/// The modes the dashboard turns on: mouse clicks (SGR) and bracketed
/// paste.
const DASHBOARD_MODES: &[u8] = b"\x1b[?1000h\x1b[?1002h\x1b[?1006h\x1b[?2004h";

pub fn run(opts: Options) -> Result<i32> {
    if !crate::term::is_tty(std::io::stdout().as_fd()) {
        bail!("the dashboard needs a terminal, but standard output is not one");
    }
    // Make the dir now (private, checked), so sessions started from the
    // dashboard have somewhere to live; refuse an unsafe one up front.
    SocketDir::ensure(&opts.dir)?;
    let rt = crate::client::runtime()?;
    let local = tokio::task::LocalSet::new();
    let guard = crate::term::Guard::enter()?;
    // Mouse clicks and bracketed paste; RESET turns both off again.
    let mut out = std::io::stdout();
    let _ = out.write_all(DASHBOARD_MODES);
    let _ = out.flush();
    // Other machines, each mounted in the background (reconnected when it
    // drops); the grid shows their sessions as `host:id`.
    let mut opts = opts;
    let remotes = Remotes::start(&opts.hosts, &opts.ssh_command)?;
    opts.remote_dirs.extend(remotes.dirs());
    opts.spawners.extend(remotes.spawners());
    let result = local.block_on(&rt, dashboard(opts, remotes));
    drop(guard);
    result
}

/// The model the dashboard starts with: the options, and the layout it
/// was left in last time.
fn model(opts: &Options, size: (u16, u16)) -> Model {
    let mut m = Model::new(opts.theme.clone(), size);
    m.fit = opts.fit;
    let remembered = saved_layout::load();
    m.columns = opts.columns.or(remembered.columns);
    m.by_state = remembered.by_state;
    m.left_unix_ms = remembered.left_unix_ms;
    m.marked_before = remembered.marked.into_iter().collect();
    m.selected_before = remembered.selected;
    m.socket_dir_flag = opts.dir_flag.clone();
    m.bell = opts.bell;
    m.cwd = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    m.desktop = opts.desktop_notify.is_some();
    m.detach_key = opts.detach_key;
    m.copy_key = opts.copy_key;
    m.attach_key = opts.attach_config.attach_key;
    m.hosts = opts.hosts.iter().map(|h| h.name.clone()).collect();
    m.history_lines = opts.history_lines;
    m.history_shared = opts.history_shared;
    m.shell = std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into());
    m.keys = opts.keys.clone();
    m
}

/// Hands each message to `update`, and gathers what it asks for.
fn feed(m: &mut Model, msgs: impl IntoIterator<Item = Msg>, now: Instant) -> Vec<Effect> {
    msgs.into_iter()
        .flat_map(|msg| update::update(m, msg, now))
        .collect()
}

/// The terminal the dashboard draws on. ratatui's `Terminal` shows the
/// cursor again when dropped and, if it cannot, says so with `eprintln!`,
/// which panics when standard error is that same terminal and it is gone
/// (its window closed): the dashboard then died by abort, before its
/// remote mounts removed their directories. A terminal that is gone has
/// no cursor to show, so it is dropped without that.
struct Canvas(Option<Terminal<CrosstermBackend<std::io::Stdout>>>);

impl Canvas {
    fn new() -> Result<Canvas> {
        let terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))
            .context("cannot draw on this terminal")?;
        Ok(Canvas(Some(terminal)))
    }
}

impl std::ops::Deref for Canvas {
    type Target = Terminal<CrosstermBackend<std::io::Stdout>>;

    fn deref(&self) -> &Self::Target {
        self.0.as_ref().expect("taken only on drop")
    }
}

impl std::ops::DerefMut for Canvas {
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.0.as_mut().expect("taken only on drop")
    }
}

impl Drop for Canvas {
    fn drop(&mut self) {
        if let Some(mut terminal) = self.0.take()
            && terminal.show_cursor().is_err()
        {
            std::mem::forget(terminal);
        }
    }
}

async fn dashboard(opts: Options, mut remotes: Remotes) -> Result<i32> {
    let mut terminal = Canvas::new()?;
    let size = crossterm::terminal::size().unwrap_or((80, 24));
    let mut m = model(&opts, size);
    let mut keyboard = Keyboard::start()?;
    let (sess_tx, mut sess_rx) = mpsc::channel::<Msg>(256);
    let mut apply = Apply::new(sess_tx);
    let mut term_sig = signal(SignalKind::terminate())?;
    let mut hup_sig = signal(SignalKind::hangup())?;
    let mut int_sig = signal(SignalKind::interrupt())?;
    let mut tick =
        crate::alarm::Alarm::every(TICK).context("cannot start the dashboard's timer")?;
    // A session that goes quiet is asked for its state as soon as its idle
    // threshold has passed, not at the next tick up to a second later (when
    // the pane would still say "active" beside "idle 3.9s").
    let mut check = crate::alarm::Alarm::new().context("cannot start the dashboard's timer")?;
    let frame_gap = Duration::from_secs(1) / FRAME_RATE;
    let mut last_draw: Option<Instant> = None;
    let mut dirty = true;

    // Sessions already there are found before the first paint.
    let found = discovery::discover(&opts.dir, &mut remotes, &m);
    let fx = feed(&mut m, found, Instant::now());
    apply.apply(fx, &opts);
    if let Some(warning) = m.keys.warning() {
        m.notify(warning, Instant::now());
    }

    // 0 when quit with a key; 128 + N when ended by signal N, as `hm attach`
    // and a shell report it.
    let mut code = 0;
    let links_changed = remotes.changed.clone();
    loop {
        // Draw at once when a frame is due; only a frame within the rate
        // cap waits on a timer (an idle dashboard arms none).
        let due = last_draw.map_or_else(Instant::now, |t| t + frame_gap);
        if dirty && due <= Instant::now() {
            let now = Instant::now();
            // A resize whose event has not arrived yet: the model learns
            // the size this frame will be drawn at.
            if let Ok(s) = terminal.size()
                && (s.width, s.height) != m.size
            {
                let fx = update::update(&mut m, Msg::Resize(s.width, s.height), now);
                apply.apply(fx, &opts);
            }
            terminal.draw(|f| view::view(&m, f, now))?;
            // What the person now sees is what an answer refers to.
            inbox::drawn(&mut m, now);
            last_draw = Some(now);
            dirty = false;
        }
        // Only an earlier check re-arms the alarm: a later one (output
        // keeps pushing it back) is found when the armed one goes off.
        if let Some(at) = m.next_check()
            && check.deadline().is_none_or(|armed| at < armed)
        {
            check
                .arm(Some(at))
                .context("the dashboard's timer failed")?;
        }
        let msg = tokio::select! {
            biased;
            ev = keyboard.next() => match ev {
                Some(msg) => msg,
                None => break,
            },
            _ = term_sig.recv() => {
                code = 128 + libc::SIGTERM;
                break;
            }
            _ = hup_sig.recv() => {
                code = 128 + libc::SIGHUP;
                break;
            }
            _ = int_sig.recv() => {
                code = 128 + libc::SIGINT;
                break;
            }
            () = tokio::time::sleep_until(due.into()), if dirty => None,
            r = tick.wait() => {
                r.context("the dashboard's timer failed")?;
                let now = Instant::now();
                apply.started.reap();
                let mut fx = update::update(&mut m, Msg::Tick, now);
                let found = discovery::discover(&opts.dir, &mut remotes, &m);
                fx.extend(feed(&mut m, found, now));
                apply.apply(fx, &opts);
                dirty = true;
                None
            }
            r = check.wait() => {
                r.context("the dashboard's timer failed")?;
                Some(Msg::Tick)
            }
            () = links_changed.notified() => {
                let now = Instant::now();
                let found = discovery::discover(&opts.dir, &mut remotes, &m);
                let fx = feed(&mut m, found, now);
                apply.apply(fx, &opts);
                dirty = true;
                None
            }
            msg = sess_rx.recv() => msg,
        };
        if let Some(msg) = msg {
            let now = Instant::now();
            let mut fx = update::update(&mut m, msg, now);
            // Take what else is waiting, a bounded amount, so a flood of
            // output is handled in batches but keys and frames still come
            // first. Bounded in time too: twenty sessions replaying 64 KiB
            // each at once (a host back after a drop) took 60 ms to parse
            // in one batch, a frame missed.
            for _ in 0..64 {
                if now.elapsed() >= BATCH_TIME {
                    break;
                }
                match sess_rx.try_recv() {
                    Ok(more) => fx.extend(update::update(&mut m, more, now)),
                    Err(_) => break,
                }
            }
            let raw = apply.apply(fx, &opts);
            dirty = true;
            if let Some(id) = raw {
                // The terminal goes to a raw attach of the session, and
                // comes back as it was.
                let ctx = raw_attach::RawCtx {
                    keyboard: &keyboard,
                    sess_rx: &mut sess_rx,
                    apply: &mut apply,
                    remotes: &mut remotes,
                };
                let back = raw_attach::raw_attach(&id, &opts, &mut m, ctx).await;
                // A full repaint on a cleared screen: both buffers blank
                // (`clear` would ask the terminal where its cursor is, and
                // the answer would go to the keyboard reader).
                let _ = std::io::stdout().write_all(b"\x1b[H\x1b[2J");
                terminal.swap_buffers();
                terminal.swap_buffers();
                let fx = update::update(&mut m, back, Instant::now());
                apply.apply(fx, &opts);
            }
        }
        if m.quit {
            break;
        }
    }
    // The layout as it was left, for next time (best effort).
    saved_layout::save(&saved_layout::Layout {
        columns: m.columns,
        by_state: m.by_state,
        left_unix_ms: Some(crate::clock::unix_ms()),
        marked: m
            .panes
            .iter()
            .filter(|p| p.attention)
            .map(|p| p.id.clone())
            .collect(),
        selected: m.selected.clone(),
    });
    Ok(code)
}
