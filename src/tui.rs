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

mod connection;
pub mod copy;
pub mod focus;
pub mod keymap;
pub mod keys;
pub mod layout;
pub mod lost;
pub mod model;
pub mod sessions;
pub mod update;
pub mod view;

use std::collections::HashMap;
use std::io::Write;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use crossterm::event::Event;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use crate::liveness::{self, Liveness};
use crate::paths::{self, SessionPaths, SocketDir};
use crate::protocol::{Kill, Request};

use crate::theme::Theme;
use model::{Effect, Model, Msg};

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
    let mut links = Vec::new();
    // A link that comes up or goes down says so at once, not at the next
    // tick: the first paint of a host's panes is when it is mounted.
    let changed = std::sync::Arc::new(tokio::sync::Notify::new());
    for host in &opts.hosts {
        let notify = changed.clone();
        let link =
            crate::remote::Link::start(host, &opts.ssh_command, move || notify.notify_one())?;
        opts.remote_dirs
            .push((host.name.clone(), link.dir().to_path_buf()));
        opts.spawners.push((host.name.clone(), link.spawner()));
        links.push((host.name.clone(), link));
    }
    let remotes = Remotes {
        links,
        down: Default::default(),
        changed,
    };
    let result = local.block_on(&rt, dashboard(opts, remotes));
    drop(guard);
    result
}

/// The other machines' links, and which are down (told once each time).
struct Remotes {
    links: Vec<(String, crate::remote::Link)>,
    down: std::collections::HashSet<String>,
    /// Raised when a link's state changes.
    changed: std::sync::Arc<tokio::sync::Notify>,
}

impl Remotes {
    /// The sessions of every host that is up, as `host:id`; a host that
    /// is down says why in `problems` (its panes stay, their connections
    /// closed, and come back with a fresh replay once it is up again).
    /// Returns too the records of the sessions that ended there (as
    /// `host:id`), and what changed, to tell: a host back, or why one went
    /// down.
    fn scan(&mut self, problems: &mut HashMap<String, String>) -> RemoteScan {
        let mut ids = Vec::new();
        let mut ended = Vec::new();
        // Hosts that came back, and why the ones that just went down did.
        let mut news = Vec::new();
        problems.clear();
        for (name, link) in &self.links {
            let state = link.state();
            match &state {
                crate::remote::LinkState::Up => {
                    let (live, _) = scan(link.dir());
                    ids.extend(live.iter().map(|id| format!("{name}:{id}")));
                    ended.extend(crate::ended::list(link.dir()).into_iter().map(|mut r| {
                        r.id = format!("{name}:{}", r.id);
                        r
                    }));
                    if self.down.remove(name) {
                        news.push(format!(
                            "{name} is back: its panes are shown from the start again"
                        ));
                    }
                }
                crate::remote::LinkState::Down {
                    since_unix_ms, why, ..
                } => {
                    if self.down.insert(name.clone()) {
                        news.push(why.clone());
                    }
                    problems.insert(
                        name.clone(),
                        format!(
                            "{name}: unreachable since {}, retrying",
                            crate::clock::local_time_of_day(*since_unix_ms)
                        ),
                    );
                }
                crate::remote::LinkState::Connecting => {
                    problems.insert(name.clone(), format!("{name}: connecting"));
                }
            }
        }
        RemoteScan { ids, ended, news }
    }
}

/// What [`Remotes::scan`] found.
struct RemoteScan {
    ids: Vec<String>,
    ended: Vec<crate::ended::Ended>,
    news: Vec<String>,
}

async fn dashboard(opts: Options, mut remotes: Remotes) -> Result<i32> {
    let mut terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))
        .context("cannot draw on this terminal")?;
    let size = crossterm::terminal::size().unwrap_or((80, 24));
    let mut m = Model::new(opts.theme.clone(), size);
    m.fit = opts.fit;
    let remembered = layout_state::load();
    m.columns = opts.columns.or(remembered.columns);
    m.by_state = remembered.by_state;
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

    let (keys_tx, mut keys_rx) = mpsc::unbounded_channel::<Event>();
    let keys_pause = std::sync::Arc::new(KeysPause::default());
    let (parked_tx, parked_rx) = std::sync::mpsc::channel::<()>();
    {
        let pause = keys_pause.clone();
        std::thread::Builder::new()
            .name("hm-keys".into())
            .spawn(move || {
                loop {
                    pause.park(&parked_tx);
                    let Ok(ev) = crossterm::event::read() else {
                        break;
                    };
                    // Read while a raw attach was being set up: the
                    // keyboard is the attach's now.
                    if pause.paused() {
                        continue;
                    }
                    if keys_tx.send(ev).is_err() {
                        break;
                    }
                }
            })
            .context("cannot start the keyboard reader")?;
    }
    let (sess_tx, mut sess_rx) = mpsc::channel::<Msg>(256);
    let mut senders: HashMap<String, mpsc::UnboundedSender<Vec<u8>>> = HashMap::new();
    let started = Started::default();
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
    let now = Instant::now();
    let fx = discover(&mut m, &opts.dir, &mut remotes, now);
    apply(fx, &opts, &sess_tx, &mut senders, &started);

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
            // A resize whose event has not arrived yet: fit the model (and
            // the sessions) to the size this frame will be drawn at.
            if let Ok(s) = terminal.size()
                && (s.width, s.height) != m.size
            {
                let fx = update::update(&mut m, Msg::Resize(s.width, s.height), now);
                apply(fx, &opts, &sess_tx, &mut senders, &started);
            }
            terminal.draw(|f| view::view(&m, f, now))?;
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
            ev = keys_rx.recv() => match ev {
                Some(Event::Key(k)) => Some(Msg::Key(k)),
                Some(Event::Mouse(me)) => Some(Msg::Mouse(me)),
                Some(Event::Paste(p)) => Some(Msg::Paste(p)),
                Some(Event::Resize(c, r)) => Some(Msg::Resize(c, r)),
                Some(_) => None,
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
                started.reap();
                let mut fx = update::update(&mut m, Msg::Tick, now);
                fx.extend(discover(&mut m, &opts.dir, &mut remotes, now));
                apply(fx, &opts, &sess_tx, &mut senders, &started);
                dirty = true;
                None
            }
            r = check.wait() => {
                r.context("the dashboard's timer failed")?;
                Some(Msg::Tick)
            }
            () = links_changed.notified() => {
                let now = Instant::now();
                let fx = discover(&mut m, &opts.dir, &mut remotes, now);
                apply(fx, &opts, &sess_tx, &mut senders, &started);
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
            let raw = apply(fx, &opts, &sess_tx, &mut senders, &started);
            dirty = true;
            if let Some(id) = raw {
                // The terminal goes to a raw attach of the session, and
                // comes back as it was.
                let back = raw_attach(
                    &id,
                    &opts,
                    &mut m,
                    RawCtx {
                        pause: &keys_pause,
                        parked: &parked_rx,
                        sess_rx: &mut sess_rx,
                        sess_tx: &sess_tx,
                        senders: &mut senders,
                        started: &started,
                        remotes: &mut remotes,
                    },
                )
                .await;
                // A full repaint on a cleared screen: both buffers blank
                // (`clear` would ask the terminal where its cursor is, and
                // the answer would go to the keyboard reader).
                let _ = std::io::stdout().write_all(b"\x1b[H\x1b[2J");
                terminal.swap_buffers();
                terminal.swap_buffers();
                let now = Instant::now();
                match back {
                    Ok(crate::cmd::attach::Returned::Detached) => {}
                    Ok(crate::cmd::attach::Returned::Next) => {
                        let tab = crossterm::event::KeyEvent::new(
                            crossterm::event::KeyCode::Tab,
                            crossterm::event::KeyModifiers::NONE,
                        );
                        let fx = update::update(&mut m, Msg::Key(tab), now);
                        let _ = apply(fx, &opts, &sess_tx, &mut senders, &started);
                    }
                    Ok(crate::cmd::attach::Returned::Ended(why)) => {
                        m.notify(format!("{id}: {why}"), now);
                    }
                    Err(e) => m.notify(format!("{id}: {}", crate::error::describe(&e)), now),
                }
                // The session's size is the attach's now: fit it again.
                if let Some(p) = m.pane_mut(&id) {
                    p.applied = None;
                }
                let (w, h) = m.size;
                let fx = update::update(&mut m, Msg::Resize(w, h), now);
                let _ = apply(fx, &opts, &sess_tx, &mut senders, &started);
                dirty = true;
            }
        }
        if m.quit {
            break;
        }
    }
    // The layout as it was left, for next time (best effort).
    layout_state::save(&layout_state::Layout {
        columns: m.columns,
        by_state: m.by_state,
    });
    Ok(code)
}

/// The dashboard's layout remembered across runs, in
/// `$XDG_STATE_HOME/heimdall/tui.json` (or `~/.local/state/heimdall/`).
mod layout_state {
    use std::path::PathBuf;

    #[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
    pub struct Layout {
        pub columns: Option<u16>,
        #[serde(default)]
        pub by_state: bool,
    }

    fn path() -> Option<PathBuf> {
        let dir = std::env::var_os("XDG_STATE_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))?;
        Some(dir.join("heimdall").join("tui.json"))
    }

    /// What was saved, or the defaults (a missing or broken file is no
    /// reason not to start).
    pub fn load() -> Layout {
        let Some(p) = path() else {
            return Layout::default();
        };
        let Ok(text) = std::fs::read(&p) else {
            return Layout::default();
        };
        let mut l: Layout = serde_json::from_slice(&text).unwrap_or_default();
        l.columns = l.columns.filter(|c| (1..=16).contains(c));
        l
    }

    /// Written whole (a temporary file renamed into place).
    pub fn save(l: &Layout) {
        let Some(p) = path() else { return };
        let Some(dir) = p.parent() else { return };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        let tmp = dir.join(".tui.json.tmp");
        let Ok(text) = serde_json::to_vec(l) else {
            return;
        };
        if std::fs::write(&tmp, text).is_ok() {
            let _ = std::fs::rename(&tmp, &p);
        }
    }
}

/// `hm restart ID`, as a child of ours: its result is the session's start.
fn restart(id: &str, dir: &Path, config: Option<&Path>) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = std::process::Command::new(exe);
    if let Some(c) = config {
        cmd.arg("--config").arg(c);
    }
    let out = cmd
        .args(["restart", id, "--await-attach", "--socket-dir"])
        .arg(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        let said = String::from_utf8_lossy(&out.stderr);
        Err(said.trim().trim_start_matches("hm: ").to_owned())
    }
}

/// Tells the model what the socket dir holds now (see [`scan`]).
fn discover(m: &mut Model, dir: &Path, remotes: &mut Remotes, now: Instant) -> Vec<Effect> {
    let (mut ids, orphans) = scan(dir);
    let remote = remotes.scan(&mut m.host_problems);
    ids.extend(remote.ids);
    for text in remote.news {
        m.notify(text, now);
    }
    let mut ended = crate::ended::list(dir);
    ended.extend(remote.ended);
    let mut fx = update::update(m, Msg::Found(ids), now);
    fx.extend(update::update(m, Msg::Orphans(orphans), now));
    fx.extend(update::update(m, Msg::Ended(ended), now));
    fx.extend(update::update(m, Msg::Lost(lost(m, dir)), now));
    fx
}

/// The sessions lost with their supervisor (`hm restore`'s), each with the
/// end of its old output when it gets a pane now.
fn lost(m: &Model, dir: &Path) -> Vec<lost::Found> {
    /// The old output a new pane of a lost session shows.
    const TAIL: usize = 64 * 1024;
    let state = crate::restore::sessions_dir();
    crate::lost::list(dir)
        .into_iter()
        .map(|l| {
            let tail = match (&state, m.pane(&l.id)) {
                (Some(state), None) => crate::restore::history::read(state, &l.id, TAIL)
                    .ok()
                    .flatten()
                    .map(|h| h.bytes)
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            lost::Found { lost: l, tail }
        })
        .collect()
}

/// `hm restore IDS`, as a child of ours: each session's start, or why not.
fn restore(ids: &[String], dir: &Path, config: Option<&Path>) -> Vec<(String, Result<(), String>)> {
    let out = std::env::current_exe().and_then(|exe| {
        let mut cmd = std::process::Command::new(exe);
        if let Some(c) = config {
            cmd.arg("--config").arg(c);
        }
        cmd.arg("restore")
            .args(ids)
            .arg("--socket-dir")
            .arg(dir)
            .stdin(std::process::Stdio::null())
            .output()
    });
    let said = match &out {
        Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
        Err(e) => e.to_string(),
    };
    ids.iter()
        .map(|id| {
            // Its own line of what went wrong, if there is one.
            let why = said
                .lines()
                .find(|l| l.contains(&format!("'{id}'")))
                .map(|l| l.trim_start_matches("hm: ").to_owned());
            let up = out.is_ok() && crate::lost::alive(dir, id);
            let result = match (up, why) {
                (true, _) => Ok(()),
                (false, Some(why)) => Err(why),
                (false, None) => Err(said.trim().trim_start_matches("hm: ").to_owned()),
            };
            (id.clone(), result)
        })
        .collect()
}

/// Ids with a live supervisor (their pid file's lock is held), and ids
/// whose program outlived its supervisor.
fn scan(dir: &Path) -> (Vec<String>, Vec<String>) {
    let (mut live, mut orphans) = (Vec::new(), Vec::new());
    for id in paths::list_ids(dir).unwrap_or_default() {
        let Ok(p) = SessionPaths::new(dir, &id) else {
            continue;
        };
        match liveness::probe(&p.pid, &p.sock, false) {
            Liveness::Running => live.push(id),
            Liveness::Orphaned(_) => orphans.push(id),
            Liveness::Stale | Liveness::Missing => {}
        }
    }
    (live, orphans)
}

/// The supervisors the dashboard started (`n`): its children, reaped once
/// they exit rather than left as zombies until the dashboard quits.
#[derive(Debug, Default, Clone)]
struct Started(std::sync::Arc<std::sync::Mutex<Vec<std::process::Child>>>);

impl Started {
    fn adopt(&self, child: std::process::Child) {
        if let Ok(mut v) = self.0.lock() {
            v.push(child);
        }
    }

    /// Reaps those that have exited; called on the dashboard's tick.
    fn reap(&self) {
        if let Ok(mut v) = self.0.lock() {
            v.retain_mut(|c| matches!(c.try_wait(), Ok(None)));
        }
    }
}

/// Carries out effects; returns the session to raw-attach to, if one was
/// asked for (the run loop does that: it owns the terminal).
fn apply(
    fx: Vec<Effect>,
    opts: &Options,
    tx: &mpsc::Sender<Msg>,
    senders: &mut HashMap<String, mpsc::UnboundedSender<Vec<u8>>>,
    started: &Started,
) -> Option<String> {
    let mut raw = None;
    for e in fx {
        match e {
            Effect::RawAttach(id) => raw = Some(id),
            // Requests become frames here, where they are written, and
            // nowhere else: the dashboard's decisions know no wire format.
            Effect::Input(id, bytes) => {
                connection::write(senders, &id, Request::Input(&bytes).encode())
            }
            Effect::Resize(id, size) => {
                connection::write(senders, &id, Request::Resize(size).encode());
            }
            Effect::Status(id) => connection::write(senders, &id, Request::Status.encode()),
            Effect::Info(id) => connection::write(senders, &id, Request::Info.encode()),
            // The session's own grace period, and EXIT back.
            Effect::Kill(id) => {
                connection::write(senders, &id, Request::Kill(Kill::AwaitExit).encode())
            }
            Effect::Connect(id) => {
                let (dir, plain, host) = session_at(opts, &id);
                connection::connect(id, &plain, false, (&dir, host), tx, senders);
            }
            Effect::ConnectStarted(id) => {
                let (dir, plain, host) = session_at(opts, &id);
                connection::connect(id, &plain, true, (&dir, host), tx, senders);
            }
            Effect::Spawn {
                id,
                command,
                workdir,
                label,
            } => {
                let tx = tx.clone();
                // `host:id`: started on that machine, through its link.
                if let Some((host, plain)) = crate::remote::split_target(&id)
                    && let Some((_, spawner)) = opts.spawners.iter().find(|(n, _)| n == host)
                {
                    let spawner = spawner.clone();
                    let req = crate::remote::mux::NewSession {
                        id: plain.to_owned(),
                        command,
                        workdir,
                        label,
                    };
                    std::thread::spawn(move || {
                        let result = spawner.spawn(req);
                        let _ = tx.blocking_send(Msg::Started(id, result));
                    });
                    continue;
                }
                let dir = opts.dir.clone();
                let config = opts.config_path.clone();
                let started = started.clone();
                std::thread::spawn(move || {
                    let result = crate::launch::start_detached(
                        &id,
                        &dir,
                        config.as_deref(),
                        &command,
                        workdir.as_deref().map(Path::new),
                        label.as_deref(),
                    )
                    .map(|child| started.adopt(child))
                    .map_err(|e| crate::error::describe(&e));
                    let _ = tx.blocking_send(Msg::Started(id, result));
                });
            }
            Effect::Bell => {
                let _ = std::io::stdout().write_all(b"\x07");
            }
            Effect::Desktop(text) => {
                // Text only: nothing of a session's may end the sequence.
                let text: String = text.chars().filter(|c| !c.is_control()).take(200).collect();
                let seq = match opts.desktop_notify {
                    Some(crate::config::DesktopNotify::Osc9) => format!("\x1b]9;{text}\x07"),
                    Some(crate::config::DesktopNotify::Osc777) => {
                        format!("\x1b]777;notify;hm;{text}\x07")
                    }
                    None => String::new(),
                };
                let _ = std::io::stdout().write_all(seq.as_bytes());
            }
            Effect::Clipboard(text) => {
                let _ = std::io::stdout().write_all(&crate::copymode::osc52(&text));
                let _ = std::io::stdout().flush();
            }
            Effect::Forget(id) => match remote_session(opts, &id) {
                // Gone from the mount at once, and from the host by its link.
                Some((spawner, dir, plain)) => {
                    let _ = crate::ended::remove(&dir, plain);
                    let _ = spawner.forget(plain);
                }
                None => {
                    let _ = crate::ended::forget(&opts.dir, &id);
                }
            },
            Effect::Restore(ids) => {
                let (tx, dir) = (tx.clone(), opts.dir.clone());
                let config = opts.config_path.clone();
                std::thread::spawn(move || {
                    for (id, result) in restore(&ids, &dir, config.as_deref()) {
                        let _ = tx.blocking_send(Msg::Started(id, result));
                    }
                });
            }
            Effect::Restart(id) => {
                let tx = tx.clone();
                if let Some((spawner, dir, plain)) = remote_session(opts, &id) {
                    // Started there anew, with the record's command.
                    let record = crate::ended::list(&dir).into_iter().find(|r| r.id == plain);
                    let spawner = spawner.clone();
                    std::thread::spawn(move || {
                        let result = match record {
                            Some(r) => spawner.spawn(crate::remote::mux::NewSession {
                                id: r.id,
                                command: crate::launch::command_line(&r.command),
                                workdir: Some(r.workdir),
                                label: r.label,
                            }),
                            None => Err("its record is gone there".to_owned()),
                        };
                        let _ = tx.blocking_send(Msg::Started(id, result));
                    });
                    continue;
                }
                let dir = opts.dir.clone();
                let config = opts.config_path.clone();
                std::thread::spawn(move || {
                    let result = restart(&id, &dir, config.as_deref());
                    let _ = tx.blocking_send(Msg::Started(id, result));
                });
            }
        }
    }
    raw
}

/// A `host:id` pane's link, mount and plain id; `None` for a local one.
fn remote_session<'a>(
    opts: &'a Options,
    key: &'a str,
) -> Option<(&'a crate::remote::Spawner, PathBuf, &'a str)> {
    let (host, id) = crate::remote::split_target(key)?;
    let (_, spawner) = opts.spawners.iter().find(|(n, _)| n == host)?;
    let (_, dir) = opts.remote_dirs.iter().find(|(n, _)| n == host)?;
    Some((spawner, dir.clone(), id))
}

/// Where a pane's session lives: `host:id` in that host's mount, with the
/// host's link; a plain id in the socket dir.
fn session_at(opts: &Options, key: &str) -> (PathBuf, String, Option<crate::remote::Spawner>) {
    match remote_session(opts, key) {
        Some((spawner, dir, id)) => (dir, id.to_owned(), Some(spawner.clone())),
        None => (opts.dir.clone(), key.to_owned(), None),
    }
}

/// Stops the keyboard reader while a raw attach has the terminal.
#[derive(Debug, Default)]
struct KeysPause {
    paused: std::sync::Mutex<bool>,
    resume: std::sync::Condvar,
}

impl KeysPause {
    fn paused(&self) -> bool {
        self.paused.lock().map(|p| *p).unwrap_or(false)
    }

    fn set(&self, on: bool) {
        if let Ok(mut p) = self.paused.lock() {
            *p = on;
        }
        self.resume.notify_all();
    }

    /// The reader's side: while paused, say so once and wait.
    fn park(&self, parked: &std::sync::mpsc::Sender<()>) {
        let Ok(mut p) = self.paused.lock() else {
            return;
        };
        if *p {
            let _ = parked.send(());
        }
        while *p {
            match self.resume.wait(p) {
                Ok(g) => p = g,
                Err(_) => return,
            }
        }
    }
}

/// What a raw attach borrows of the run loop.
struct RawCtx<'a> {
    pause: &'a KeysPause,
    parked: &'a std::sync::mpsc::Receiver<()>,
    sess_rx: &'a mut mpsc::Receiver<Msg>,
    sess_tx: &'a mpsc::Sender<Msg>,
    senders: &'a mut HashMap<String, mpsc::UnboundedSender<Vec<u8>>>,
    started: &'a Started,
    remotes: &'a mut Remotes,
}

/// Hands the terminal to `hm attach`'s passthrough on session `id` (on a
/// thread of its own, with its own event loop), keeping every session's
/// news coming in meanwhile, and takes the terminal back afterwards.
async fn raw_attach(
    id: &str,
    opts: &Options,
    m: &mut Model,
    ctx: RawCtx<'_>,
) -> Result<crate::cmd::attach::Returned> {
    let (dir, plain, _) = session_at(opts, id);
    let session = crate::paths::SessionPaths::new(&dir, &plain)?;
    // The keyboard reader waits in a read: a SIGWINCH wakes it (as a
    // resize event), it sees the pause and parks.
    ctx.pause.set(true);
    let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGWINCH);
    let _ = ctx.parked.recv_timeout(Duration::from_secs(1));
    // The terminal as the user had it; the attach sets it up its own way.
    crate::term::restore();
    let dash = crate::cmd::attach::FromDashboard {
        others_waiting: Default::default(),
        next_key: opts.next_key,
    };
    let waiting = dash.others_waiting.clone();
    let config = opts.attach_config.clone();
    let (done_tx, mut done_rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("hm-attach".into())
        .spawn(move || {
            let r = crate::cmd::attach::attach_from_dashboard(&session, &config, dash);
            let _ = done_tx.send(r);
        })
        .context("cannot start the attach")?;
    let mut tick =
        crate::alarm::Alarm::every(TICK).context("cannot start the dashboard's timer")?;
    let back = loop {
        let others = m.panes.iter().filter(|p| p.id != id && p.waiting()).count();
        waiting.store(others, std::sync::atomic::Ordering::Relaxed);
        tokio::select! {
            r = &mut done_rx => break r.unwrap_or_else(|_| {
                Err(anyhow::anyhow!("the attach stopped"))
            }),
            msg = ctx.sess_rx.recv() => {
                if let Some(msg) = msg {
                    let fx = update::update(m, msg, Instant::now());
                    let _ = apply(fx, opts, ctx.sess_tx, ctx.senders, ctx.started);
                }
            }
            r = tick.wait() => {
                r.context("the dashboard's timer failed")?;
                let now = Instant::now();
                ctx.started.reap();
                let mut fx = update::update(m, Msg::Tick, now);
                fx.extend(discover(m, &opts.dir, ctx.remotes, now));
                let _ = apply(fx, opts, ctx.sess_tx, ctx.senders, ctx.started);
            }
        }
    };
    // The dashboard's terminal again: raw, its own screen, mouse and paste.
    let guard = crate::term::Guard::enter()?;
    // The guard the dashboard started with restores the terminal at the
    // end; this one only set it up again.
    std::mem::forget(guard);
    let mut out = std::io::stdout();
    let _ = out.write_all(DASHBOARD_MODES);
    let _ = out.flush();
    ctx.pause.set(false);
    back
}
