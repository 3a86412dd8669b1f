//! `hm attach ID`: the user's terminal becomes the session's terminal,
//! with a status bar on the last row.
//!
//! One thread does everything: the socket, the keyboard (read from our own
//! non-blocking descriptor of the tty, so non-blocking mode never leaks to
//! the shell), and the screen, which gets one `write` per batch of frames.
//! The terminal is restored on every way out (see [`crate::term`]).
//! The status bar's drawing and clock are in `bar`; copy mode, the
//! session's history over its screen, is in `copy`.

mod bar;
mod copy;

use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::time::Duration;

use anyhow::{Result, bail};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::signal::unix::{SignalKind, signal};
use tokio::time::Instant;

use crate::attach::copy::CopyView;
use crate::attach::shown::Shown;
use crate::attach::statusbar;
use crate::cli::AttachArgs;
use crate::client::poll::{self, StatusPoll};
use crate::client::{self, find_session};
use crate::config::Config;
use crate::paths::SessionPaths;
use crate::protocol::{Frame, Reply, Request, Size, Status, Subscribe, conn};
use crate::remote::Mount;
use crate::term;
use crate::theme::Theme;

/// Set in tests only: Ctrl-G then panics the client on purpose (built
/// with the `test-hooks` feature only).
#[cfg(feature = "test-hooks")]
const TEST_PANIC_VAR: &str = "HEIMDALL_TEST_PANIC";
/// Whether `keys` hold a Ctrl-G of their own, not the BEL that ends a
/// terminal's answer to a query (`ESC ] 11 ; rgb:… BEL`), which may come
/// in the same read.
#[cfg(feature = "test-hooks")]
fn lone_bell(keys: &[u8]) -> bool {
    let mut in_osc = false;
    let mut prev = 0u8;
    for &b in keys {
        match b {
            b']' if prev == 0x1b => in_osc = true,
            0x07 if in_osc => in_osc = false,
            0x07 => return true,
            _ => {}
        }
        prev = b;
    }
    false
}

/// Bytes read from the keyboard at once.
const KEY_BUF: usize = 4096;
/// How long a notice (`copied 2 lines`) stays in the bar.
const NOTICE_FOR: Duration = Duration::from_secs(3);

/// `hm attach ID`; `remote` is the mount of the session's host for
/// `HOST:ID`.
pub fn run(args: AttachArgs, config: &Config, remote: Option<&Mount>) -> Result<i32> {
    let dir = client::socket_dir(&args.dir, config);
    let session = find_session(&dir, &args.id)?;
    let (outcome, last) = attach_terminal(&session, config, false, None, args.read_only)?;
    // A remote session's connection ends when its host's does: that is
    // what to tell, not that the supervisor went away.
    let outcome = match (outcome, remote.and_then(Mount::lost)) {
        (Outcome::Lost(_), Some(why)) => Outcome::Lost(why),
        (outcome, _) => outcome,
    };
    Ok(report(
        &session,
        &client::shown_id(&session.id),
        outcome,
        &last,
    ))
}

/// How an attachment ended.
#[derive(Debug)]
enum Outcome {
    Detached,
    /// The dashboard's next-session key.
    Next,
    Exited(i32),
    Lost(String),
    Signalled(&'static str, i32),
}

/// Which of standard input and output is not a terminal, if one is not.
pub fn not_a_terminal() -> Option<&'static str> {
    if !term::is_tty(io::stdin().as_fd()) {
        Some("standard input")
    } else if !term::is_tty(io::stdout().as_fd()) {
        Some("standard output")
    } else {
        None
    }
}

/// Attaches to a running session until detach, exit or error.
/// `launcher`: this is `hm run` attaching to the session it just started
/// (see [`protocol::SUBSCRIBE_LAUNCHER`]).
pub fn attach(session: &SessionPaths, config: &Config, launcher: bool) -> Result<i32> {
    let (outcome, last) = attach_terminal(session, config, launcher, None, false)?;
    Ok(report(session, &session.id, outcome, &last))
}

/// Puts the last lines of a session that ended, then how the attach
/// ended, on the user's terminal; the exit code. `id` is the session as
/// the user named it (`box:far`).
fn report(session: &SessionPaths, id: &str, outcome: Outcome, last: &[String]) -> i32 {
    // The session's screen goes with the alternate one we drew it on; when
    // it ended, its last lines stay on the user's own screen, as if it had
    // run there (a short command's output, a build's error). Plain text
    // only: the child's modes must not come back with it.
    if !last.is_empty() {
        let mut out = io::stdout().lock();
        for line in last {
            let _ = writeln!(out, "{}", crate::vt::utf8::for_people(line.clone()));
        }
        let _ = out.flush();
    }
    let mut err = io::stderr().lock();
    match outcome {
        Outcome::Detached | Outcome::Next => {
            let _ = writeln!(err, "[detached from session {id}]");
            0
        }
        Outcome::Exited(code) => {
            let _ = writeln!(err, "[session {}]", client::ended_words(session, code));
            code
        }
        Outcome::Lost(why) => {
            let _ = writeln!(err, "[lost connection to session {id}: {why}]");
            1
        }
        Outcome::Signalled(name, code) => {
            let _ = writeln!(err, "[detached from session {id}: {name}]");
            code
        }
    }
}

/// What the dashboard gives an attach it runs itself (see
/// [`attach_from_dashboard`]).
#[derive(Debug, Clone, Default)]
pub struct FromDashboard {
    /// How many other sessions need their user now; the dashboard keeps it
    /// current, the bar shows it.
    pub others_waiting: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// The key that returns to the dashboard at the next session that
    /// needs you.
    pub next_key: Option<u8>,
    /// The session as the dashboard names it (`box:far`), for the bar.
    pub name: String,
}

/// How an attach the dashboard ran ended, in words for its notice line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Returned {
    /// The detach key: back to the dashboard as it was.
    Detached,
    /// The next-session key: back, at the next session that needs you.
    Next,
    /// The session ended or the attach could not go on.
    Ended(String),
}

/// `hm attach` on the dashboard's terminal, from inside the dashboard:
/// the same passthrough, status bar and restoring of every mode on the
/// way out, without the lines a shell would get after it.
pub fn attach_from_dashboard(
    session: &SessionPaths,
    config: &Config,
    dash: FromDashboard,
) -> Result<Returned> {
    let (outcome, _) = attach_terminal(session, config, false, Some(dash), false)?;
    Ok(match outcome {
        Outcome::Detached => Returned::Detached,
        Outcome::Next => Returned::Next,
        Outcome::Exited(code) => {
            Returned::Ended(format!("session {}", client::ended_words(session, code)))
        }
        Outcome::Lost(why) => Returned::Ended(format!("lost connection: {why}")),
        Outcome::Signalled(name, _) => Returned::Ended(format!("detached: {name}")),
    })
}

/// The attach itself: its outcome, and the last lines of a session that
/// ended on its main screen. `read_only`: `hm attach --read-only`.
fn attach_terminal(
    session: &SessionPaths,
    config: &Config,
    launcher: bool,
    dash: Option<FromDashboard>,
    read_only: bool,
) -> Result<(Outcome, Vec<String>)> {
    if let Some(what) = not_a_terminal() {
        bail!("attach needs a terminal, but {what} is not one");
    }
    let theme = Theme::load(config.tui.theme.as_deref(), Theme::no_color_from_env())
        .map_err(|e| config.tui.bad_theme(e))?;
    let rt = client::runtime()?;
    // Where the session's record goes when it ends.
    let dir = crate::paths::dir_of(&session.sock);
    let outcome = rt.block_on(async {
        // Connect before touching the terminal, so a failure leaves it alone
        // (a supervisor that does not even greet us included).
        let connected = client::answered(&session.id, async {
            Ok(conn::connect(&session.sock).await?)
        })
        .await;
        let (reader, writer) = match connected {
            Ok(halves) => halves,
            // Ended as it was asked (its supervisor resets the connections
            // it has not served on its way out): told as an end seen
            // attached, with its last lines.
            Err(e) => match client::ended_instead(dir, &session.id, &e) {
                Some(r) => return anyhow::Ok((Outcome::Exited(r.exit_code), r.last_lines)),
                None => return Err(client::or_lost(dir, &session.id, e)),
            },
        };
        let tty = crate::fd::register(term::reopen_tty()?, Interest::READABLE)?;
        let mut guard = term::Guard::enter()?;
        if dash.is_some() {
            guard.hand_over();
        }
        let mut a = Attach {
            id: session.id.clone(),
            name: dash
                .as_ref()
                .map_or_else(|| client::shown_id(&session.id), |d| d.name.clone()),
            label: None,
            sock: session.sock.clone(),
            detach_key: config.detach_key,
            copy_key: config.copy_key,
            history_lines: config.history_lines,
            copy: None,
            notice: None,
            theme,
            tty,
            tty_writable: None,
            reader,
            writer,
            out: Vec::new(),
            sent: 0,
            shown: Shown::new(),
            size: Size { cols: 80, rows: 24 },
            status: None,
            pushed: None,
            report: None,
            continue_sent: false,
            poll: StatusPoll::new(Duration::from_millis(3000)),
            in_paste: false,
            launcher,
            dash,
            read_only,
            held: None,
        };
        let outcome = a.run().await;
        // Put out what the child said last before leaving its screen.
        a.flush_blocking();
        drop(guard);
        let last = match (&outcome, &mut a.copy) {
            // Ended while copy mode was open: its emulator has the screen.
            (Outcome::Exited(_), Some(copy)) => copy.last_screen(),
            (Outcome::Exited(_), None) if !a.shown.alternate() => a.shown.last_screen(Size {
                cols: a.size.cols,
                rows: a.child_rows(),
            }),
            _ => Vec::new(),
        };
        anyhow::Ok((outcome, last))
    })?;
    Ok(outcome)
}

struct Attach {
    id: String,
    /// The session as the person named it, for the bar: `box:far` for
    /// one on another machine, whose mount knows it as `far`.
    name: String,
    /// A person's name for it (`hm run --label`), from INFO: the bar shows
    /// it after the id where the keys leave room.
    label: Option<String>,
    /// The session's socket, for the connections copy mode makes.
    sock: std::path::PathBuf,
    detach_key: Option<u8>,
    /// Opens copy mode (Shift-PgUp does too).
    copy_key: Option<u8>,
    /// Rows of history copy mode reads.
    history_lines: usize,
    /// Copy mode, while it is open: the session's history instead of its
    /// live screen (see `copy`).
    copy: Option<CopyView>,
    /// What just happened (`copied 2 lines`), shown in the bar for a few
    /// seconds.
    notice: Option<(String, Instant)>,
    /// Colours of the status bar.
    theme: Theme,
    /// The terminal, watched for keys only.
    tty: AsyncFd<OwnedFd>,
    /// The terminal watched for room to write: only from when a write
    /// would block until the next clock tick finds nothing owed, because
    /// every write's completion wakes whoever watches for writability.
    tty_writable: Option<AsyncFd<OwnedFd>>,
    reader: conn::Reader,
    writer: conn::Writer,
    /// Bytes owed to the terminal, from `sent` on.
    out: Vec<u8>,
    /// How much of `out` the terminal has taken: a terminal that takes a
    /// batch a few KiB at a time (a pty does) costs no copying of the rest.
    sent: usize,
    /// The session's output on its way to the terminal.
    shown: Shown,
    size: Size,
    /// Last state seen, with when it was seen.
    status: Option<(Status, Instant)>,
    /// The state the supervisor last pushed (STATE: its byte, how long it
    /// had lasted, when it came), which the bar shows whatever a STATUS
    /// answer says; none from a supervisor that pushes nothing.
    pushed: Option<(u8, u32, Instant)>,
    /// The last STATE frame's report: what the bar says of the state
    /// beyond its name (`waiting · input`), as `hm ls` does.
    report: Option<Box<crate::protocol::StateReport>>,
    /// A continue was asked for and not yet acted on: keys meanwhile are
    /// not typed, and ask no more.
    continue_sent: bool,
    /// When to ask for the state. A question unanswered for
    /// [`client::ANSWER_TIMEOUT`] makes the bar say so instead of a state
    /// (a stopped supervisor leaves the screen blank otherwise).
    poll: StatusPoll,
    /// `hm run` attaching to the session it started.
    launcher: bool,
    in_paste: bool,
    /// Set when the dashboard runs this attach.
    dash: Option<FromDashboard>,
    /// `hm attach --read-only`: a watcher. No key of the terminal reaches
    /// the program, nor its answers to the program's queries (the
    /// supervisor answers those); its size is held while someone's
    /// terminal is attached: whoever works in the session keeps theirs.
    read_only: bool,
    /// A watcher's: the session's size while it is not this terminal's
    /// (held for another's), which the bar says; INFO tells it, asked
    /// with each resize and each question of the state.
    held: Option<Size>,
}

impl std::fmt::Debug for Attach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Attach").field("id", &self.id).finish()
    }
}

impl Attach {
    fn bar_visible(&self) -> bool {
        self.size.rows >= 2
    }

    /// The rows above the status bar, when there is one.
    fn bar_rows(&self) -> Option<u16> {
        self.bar_visible().then(|| self.child_rows())
    }

    /// The rows the child gets: the terminal's, less the bar's.
    fn child_rows(&self) -> u16 {
        if self.bar_visible() {
            self.size.rows - 1
        } else {
            self.size.rows
        }
    }

    async fn run(&mut self) -> Outcome {
        match self.session().await {
            Ok(o) => o,
            Err(e) if client::connection_lost(&e) => self.gone(crate::error::describe(&e)),
            Err(e) => Outcome::Lost(crate::error::describe(&e)),
        }
    }

    /// The connection went without an EXIT: the session ended as the
    /// attach began (its supervisor resets what it has not served on its
    /// way out), as its record says, or the supervisor went away.
    fn gone(&self, why: String) -> Outcome {
        let dir = crate::paths::dir_of(&self.sock);
        match client::ended_meanwhile(dir, &self.id, client::answer_deadline()) {
            Some(r) => Outcome::Exited(r.exit_code),
            None => Outcome::Lost(why),
        }
    }

    async fn session(&mut self) -> Result<Outcome> {
        let mut winch = signal(SignalKind::window_change())?;
        let mut term = signal(SignalKind::terminate())?;
        let mut hup = signal(SignalKind::hangup())?;
        let mut int = signal(SignalKind::interrupt())?;
        self.hello().await?;
        let mut keys = vec![0u8; KEY_BUF];
        let mut clock = crate::alarm::Alarm::new()?;
        // One timer for the status poll, moved when its time moves: a new
        // one each turn of the loop (each key) registered and dropped a
        // timer entry every time.
        let poll_timer = tokio::time::sleep_until(Instant::now());
        tokio::pin!(poll_timer);
        loop {
            let now = Instant::now();
            let tick = self.next_tick(now);
            clock.arm(tick.map(Instant::into_std))?;
            if !self.out.is_empty() && self.tty_writable.is_none() {
                self.tty_writable = Some(crate::fd::watch_room(self.tty.get_ref())?);
            }
            let poll_at = self.poll.next_due().map(Instant::from_std);
            // An elapsed timer polled again is ready again, as a new one
            // for a time gone by was.
            if let Some(at) = poll_at.filter(|at| *at != poll_timer.deadline()) {
                poll_timer.as_mut().reset(at);
            }
            tokio::select! {
                f = self.reader.recv(), if self.out.is_empty() => {
                    let Some(f) = f? else {
                        return Ok(self.gone("the supervisor went away".into()));
                    };
                    if let Some(o) = self.frame(f).await? {
                        return Ok(o);
                    }
                    let more: Vec<Frame> = self.reader.take_ready().collect();
                    for f in more {
                        if let Some(o) = self.frame(f).await? {
                            return Ok(o);
                        }
                    }
                    // Copy mode shows the batch once, not each frame.
                    self.paint_copy(false);
                    self.flush_some()?;
                }
                r = crate::fd::room(self.tty_writable.as_ref()), if !self.out.is_empty() => {
                    r?;
                    self.flush_some()?;
                }
                r = crate::fd::read_some(&self.tty, &mut keys) => {
                    let n = r?;
                    if n == 0 {
                        return Ok(Outcome::Lost("the terminal closed".into()));
                    }
                    let pasting = self.in_paste;
                    if self.is_detach(&keys[..n]) {
                        return Ok(Outcome::Detached);
                    }
                    if !self.in_paste
                        && self.dash.as_ref().and_then(|d| d.next_key).is_some_and(|k| keys[..n] == [k])
                    {
                        return Ok(Outcome::Next);
                    }
                    if self.copy.is_some() {
                        self.copy_keys(&keys[..n], pasting).await?;
                        continue;
                    }
                    if let Some(page_first) = self.opens_copy(&keys[..n]) {
                        self.enter_copy(page_first).await?;
                        continue;
                    }
                    // Shift-PgDn is no key for the program (dashboard focus
                    // swallows it too); pasted text is left as it is.
                    let keys = if self.in_paste {
                        std::borrow::Cow::Borrowed(&keys[..n])
                    } else {
                        crate::attach::keys::without_page_down(&keys[..n])
                    };
                    if keys.is_empty() {
                        continue;
                    }
                    if self.read_only {
                        self.refused_keys(&keys);
                        self.flush_some()?;
                        continue;
                    }
                    // Test hook: proves that a panic restores the terminal.
                    // Only with the variable set, and only on a Ctrl-G that
                    // ends a read and ends no string (an OSC reply's BEL):
                    // under load other bytes came in the same read once,
                    // and the Ctrl-G went to the session.
                    #[cfg(feature = "test-hooks")]
                    if lone_bell(&keys) && std::env::var_os(TEST_PANIC_VAR).is_some() {
                        panic!("test panic");
                    }
                    // A stopped program reads nothing: the key continues
                    // it, as `fg` would, instead of waiting in its terminal
                    // (`fg` and Enter, typed as a stopped Claude Code asks,
                    // would reach it as a prompt).
                    if self.stopped() {
                        if !std::mem::replace(&mut self.continue_sent, true) {
                            self.send(&[Request::Act(crate::protocol::Act::resume())]).await?;
                        }
                        continue;
                    }
                    self.send(&[Request::Input(&keys)]).await?;
                    // Keys into a session that has said nothing since the
                    // last ones, or the first after a quiet second: ask
                    // whether it still answers, so the bar can say if it
                    // does not (a stopped supervisor). A user who presses
                    // Enter once and waits is told too.
                    if self.poll.keys(std::time::Instant::now()) {
                        self.send(&[Request::Status]).await?;
                    }
                }
                _ = winch.recv() => self.resize().await?,
                _ = term.recv() => return Ok(Outcome::Signalled("SIGTERM", 143)),
                _ = hup.recv() => return Ok(Outcome::Signalled("SIGHUP", 129)),
                _ = int.recv() => return Ok(Outcome::Signalled("SIGINT", 130)),
                r = clock.wait(), if tick.is_some() => {
                    r?;
                    self.draw_bar();
                    self.flush_some()?;
                    if self.out.is_empty() {
                        self.tty_writable = None;
                    }
                }
                () = &mut poll_timer, if poll_at.is_some() => {
                    let tick = self.poll.tick(std::time::Instant::now());
                    if tick.ask {
                        self.ask_state().await?;
                    }
                    if tick.went_silent {
                        self.draw_bar();
                        self.flush_some()?;
                    }
                }
            }
        }
    }

    /// Handles one frame; `Some` ends the attachment.
    async fn frame(&mut self, f: Frame) -> Result<Option<Outcome>> {
        self.poll.heard();
        // A frame this client cannot read (from a newer or broken
        // supervisor) is passed over, as unknown types are.
        let Ok(reply) = conn::decode(f) else {
            return Ok(None);
        };
        match reply {
            Reply::Output(bytes) if self.copy.is_some() => self.copy_output(&bytes),
            Reply::Mark(mark) => self.copy_mark(mark),
            Reply::ReplayEnd if self.copy.is_some() => self.copy_replayed().await?,
            Reply::Output(bytes) => {
                let bar = self.bar_rows();
                if self.shown.output(&bytes, &mut self.out, bar) {
                    self.draw_bar();
                }
                let shown_idle = self.status.is_none_or(|(s, _)| s.state == 0x00);
                if self.poll.output(std::time::Instant::now(), shown_idle) {
                    self.ask_state().await?;
                }
            }
            Reply::Info(info) => {
                // A new label, told: nothing else of it is news.
                if !info.relabelled {
                    self.shown.info(info.status_protocol);
                    // A watcher's size is held while someone works in the
                    // session: which size it has, when not the watcher's.
                    if self.read_only {
                        let mine = Size {
                            cols: self.size.cols,
                            rows: self.child_rows(),
                        }
                        .clamped();
                        self.held = info.size().filter(|s| *s != mine);
                    }
                }
                // The supervisor's words: nothing in them may act on the
                // terminal.
                let label = info.label.as_deref().map(crate::paths::sanitize);
                self.label = label.filter(|l| !l.trim().is_empty());
                self.draw_bar();
                if info.relabelled {
                    return Ok(None);
                }
                if let Some(ms) = info.idle_threshold_ms {
                    self.poll.set_idle_threshold(Duration::from_millis(ms));
                }
            }
            Reply::ReplayEnd => {
                let bar = self.bar_rows();
                if self.shown.replay_end(&mut self.out, bar) {
                    self.draw_bar();
                }
            }
            Reply::Status(mut s) => {
                self.poll
                    .answered(std::time::Instant::now(), &s, poll::is_busy(s.state));
                // Once the supervisor pushes its state, that is the state
                // shown, as `hm ls` and `hm status` show it: a STATUS
                // answered as keys or output come is a verdict of the
                // moment (a shell given a line is "active" until its
                // screen settles, and the settled verdict, idle again, is
                // no change to push), which stayed in the bar until the
                // next question, seconds later.
                if let Some((state, ms, at)) = self.pushed.filter(|p| p.0 != s.state) {
                    s.state = state;
                    let since = u32::try_from(at.elapsed().as_millis()).unwrap_or(u32::MAX);
                    s.state_ms = ms.saturating_add(since);
                }
                self.status = Some((s, Instant::now()));
                self.draw_bar();
            }
            // A change of state, pushed as the supervisor sees it: the bar
            // follows at once rather than at the next question (which,
            // after output stops, comes only once the idle threshold has
            // passed: a prompt showed as active for seconds). The first
            // STATUS answer, asked in the same write, sets the rest.
            Reply::State(report) => {
                let ms = u32::try_from(report.state_ms).unwrap_or(u32::MAX);
                self.pushed = Some((report.state_byte, ms, Instant::now()));
                let state = report.state_byte;
                // Attaching is bringing to the front: a program stopped
                // before it (Ctrl-Z pressed in it earlier) is continued.
                // Not by a watcher, which changes nothing.
                let stopped_at_attach =
                    self.report.is_none() && report.stopped() && !self.read_only;
                self.report = Some(report);
                self.continue_sent = stopped_at_attach;
                if stopped_at_attach {
                    self.send(&[Request::Act(crate::protocol::Act::resume())])
                        .await?;
                }
                if let Some((s, at)) = &mut self.status {
                    s.state = state;
                    s.state_ms = ms;
                    *at = Instant::now();
                    self.draw_bar();
                }
            }
            // The continue was acted on (or refused): a key while the
            // program is stopped again, with no change pushed between
            // (stopped, continued and stopped within one look), asks again.
            Reply::Acted(_) => self.continue_sent = false,
            Reply::Exit(code) => return Ok(Some(Outcome::Exited(code))),
            Reply::Error { message, .. } => {
                return Ok(Some(Outcome::Lost(crate::paths::sanitize(&message))));
            }
            _ => {}
        }
        Ok(None)
    }

    /// Whether the last state pushed says the program is stopped.
    fn stopped(&self) -> bool {
        self.report
            .as_deref()
            .is_some_and(crate::protocol::StateReport::stopped)
    }

    /// Attaches: the size, then INFO, SUBSCRIBE (with the replay's end
    /// marked and the screen drawn there, as a terminal, with STATE
    /// pushed) and STATUS in one write.
    async fn hello(&mut self) -> Result<()> {
        self.resize().await?;
        let subscribe = Subscribe {
            mark_replay: true,
            // A watcher's terminal answers no query: its keys go nowhere.
            terminal: !self.read_only,
            launcher: self.launcher,
            state: true,
            screen: true,
            ..Subscribe::default()
        };
        // Only the first subscription is the launcher's.
        self.launcher = false;
        self.send(&[
            Request::Info,
            Request::Subscribe(subscribe),
            Request::Status,
        ])
        .await?;
        self.poll.asked(std::time::Instant::now());
        Ok(())
    }

    /// Sends frames to the supervisor. A write that finds the connection
    /// closed is not the end: the supervisor closes right after its EXIT,
    /// which may still be unread, so the reader tells how it ended.
    async fn send(&mut self, requests: &[Request<'_>]) -> Result<()> {
        Ok(conn::ask(&mut self.writer, requests).await?)
    }

    async fn resize(&mut self) -> Result<()> {
        let (cols, rows) = term::size(self.tty.get_ref().as_fd()).unwrap_or((80, 24));
        let before = std::mem::replace(&mut self.size, Size { cols, rows });
        self.shown.resized();
        let child_rows = self.child_rows();
        let child = Size {
            cols,
            rows: child_rows,
        }
        .clamped();
        // A watcher's RESIZE is no terminal's (it subscribes without the
        // terminal flag): the supervisor holds it while someone's terminal
        // is attached, who keeps their size; with no one, it applies.
        // INFO after it says which.
        if self.read_only {
            self.send(&[Request::Resize(child), Request::Info]).await?;
        } else {
            self.send(&[Request::Resize(child)]).await?;
        }
        if let Some(copy) = &mut self.copy {
            copy.resize(child);
            copy.paint(&mut self.out, &self.theme, true);
        }
        if self.bar_visible() {
            if self.copy.is_none() {
                // A terminal that grew keeps its rows where they were: the
                // old bar would stay among the child's lines.
                if rows > before.rows && before.rows >= 2 {
                    self.out.extend(statusbar::erase_row(before.rows));
                }
                self.out.extend(statusbar::CURSOR_OFF_LAST_ROW);
            }
            self.out.extend(statusbar::scroll_region(child_rows));
            self.draw_bar();
        }
        self.flush_some()?;
        Ok(())
    }

    /// Asks for the state (STATUS); a watcher asks INFO too, whose size
    /// says whether its own is held (the worker it was held for may have
    /// left since).
    async fn ask_state(&mut self) -> Result<()> {
        if self.read_only {
            self.send(&[Request::Status, Request::Info]).await
        } else {
            self.send(&[Request::Status]).await
        }
    }

    /// Keys typed into a read-only attach go nowhere; typed ones (not the
    /// terminal's answers to queries, see [`keys::typed`]) are told so in
    /// the bar, with the way out: an arrow said nothing.
    fn refused_keys(&mut self, keys: &[u8]) {
        if !crate::attach::keys::typed(keys) {
            return;
        }
        let out = self.detach_key.map_or(String::new(), |k| {
            format!(": {} detaches", crate::config::describe_key(k))
        });
        self.notice = Some((format!("read-only{out}"), Instant::now()));
        self.draw_bar();
    }

    /// The detach key counts only when pressed on its own, never inside a
    /// paste (bracketed or a multi-byte read).
    fn is_detach(&mut self, keys: &[u8]) -> bool {
        if let Some(p) = keys
            .windows(6)
            .rposition(|w| w == b"\x1b[200~" || w == b"\x1b[201~")
        {
            self.in_paste = keys[p + 4] == b'0';
        }
        !self.in_paste && self.detach_key.is_some_and(|k| keys == [k])
    }

    /// Writes what the terminal takes now; the rest waits for writability.
    fn flush_some(&mut self) -> io::Result<()> {
        while self.sent < self.out.len() {
            match crate::fd::write_now(self.tty.get_ref(), &self.out[self.sent..])? {
                0 => return Ok(()),
                n => self.sent += n,
            }
        }
        self.out.clear();
        self.sent = 0;
        Ok(())
    }

    /// Last output before restoring the terminal; bounded in time so a
    /// stuck terminal cannot hold us.
    fn flush_blocking(&mut self) {
        let deadline = std::time::Instant::now() + Duration::from_secs(1);
        while !self.out.is_empty() && std::time::Instant::now() < deadline {
            if self.flush_some().is_err() {
                return;
            }
            if !self.out.is_empty() {
                let _ = nix::poll::poll(
                    &mut [nix::poll::PollFd::new(
                        self.tty.get_ref().as_fd(),
                        nix::poll::PollFlags::POLLOUT,
                    )],
                    nix::poll::PollTimeout::from(50u8),
                );
            }
        }
    }
}
