//! The dashboard's state: panes, selection, mode. Plain data; changed only
//! by [`super::update`], drawn only by [`super::view`].

use std::time::{Duration, Instant};

use crossterm::event::{KeyEvent, MouseEvent};

use crate::classify::ProcessState;
use crate::client::poll::StatusPoll;
use crate::protocol::{Size, Status};

use crate::theme::Theme;
use crate::vt::term::Term;

mod copy_window;
mod drag;
mod inbox;
mod lost_found;
pub mod window_facts;

pub use copy_window::CopyWindow;
pub use drag::Drag;
pub use inbox::{Answering, Inbox, Moved, Said, Shown};
pub use lost_found::LostFound;

/// Something that happened.
#[derive(Debug)]
pub enum Msg {
    Key(KeyEvent),
    Mouse(MouseEvent),
    Paste(String),
    /// The terminal was resized to (cols, rows).
    Resize(u16, u16),
    /// The periodic tick: timers, idle checks, discovery results.
    Tick,
    /// The ids with a live supervisor in the socket dir right now.
    Found(Vec<String>),
    /// The ids whose supervisor is gone while their program runs on.
    Orphans(Vec<String>),
    /// Sessions that ended before this dashboard saw them end: their
    /// records (`hm ls` lists the same).
    Ended(Vec<crate::ended::Ended>),
    Session(String, SessionMsg),
    /// A session started from the dashboard came up, with what to say
    /// when there is more to it than that it started (a restart that
    /// resumed an agent's conversation), or why it did not.
    Started(String, Result<Option<String>, String>),
    /// The other machines that are not up, by name, with why (for their
    /// panes); and what changed, to tell (a host back, why one dropped).
    Hosts {
        problems: std::collections::HashMap<String, String>,
        /// Those that were up and dropped: since when (wall clock, ms).
        down: std::collections::HashMap<String, u64>,
        news: Vec<String>,
    },
    /// The dashboard has the terminal back from a raw attach of this
    /// session.
    BackFromAttach(String, AttachEnd),
    /// The sessions lost with their supervisor (`hm restore`'s).
    Lost(Vec<LostFound>),
    /// What `hm kill` said of an orphan's program ([`Effect::KillOrphan`]),
    /// or why it could not stop it.
    OrphanKilled(String, Result<String, String>),
}

/// How a raw attach (`a`) ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttachEnd {
    /// The detach key.
    Detached,
    /// The next key: on to the next session that needs you.
    Next,
    /// The session ended, or its connection did: why.
    Ended(String),
    /// The attach could not run: why.
    Failed(String),
}

/// News from one session's connection.
#[derive(Debug)]
pub enum SessionMsg {
    Connected,
    Output(Vec<u8>),
    /// Output from before we connected: the replay, and the screen drawn
    /// at its end. Drawn as output is, but nothing the session does now.
    Replayed(Vec<u8>),
    Status(Status),
    Info(Box<crate::protocol::Info>),
    /// A pushed state change (STATE).
    State(crate::protocol::StateReport),
    /// The session's size from here in its output on (MARK).
    Mark(crate::protocol::Mark),
    Exit(i32),
    /// The connection failed or was refused; it will be retried. The
    /// pane shows `why`; a `notice`, the whole story where `why` cannot
    /// hold it, goes to the footer.
    Problem {
        why: String,
        notice: Option<String>,
    },
    /// The supervisor is gone (its connection closed for good); with a pid
    /// if the program it supervised runs on without it.
    Closed(Option<u32>),
    /// What the supervisor did with an answer the inbox sent (ACTED).
    Acted(Box<crate::protocol::Acted>),
}

/// Something for the run loop to do. What is asked of a session is named
/// here and encoded into frames only where the run loop writes them, so
/// the decisions are tested by what they mean, not by their bytes.
#[derive(Debug, PartialEq, Eq)]
pub enum Effect {
    /// Bytes for the session's program, as if typed (INPUT).
    Input(String, Vec<u8>),
    /// Give the session's terminal this size (RESIZE).
    Resize(String, Size),
    /// Ask the session for its state and timers (STATUS).
    Status(String),
    /// Ask the session for its metadata: command, size, idle threshold
    /// (INFO).
    Info(String),
    /// Stop the session: SIGTERM, then SIGKILL after the session's own
    /// grace period, with its EXIT sent back (KILL).
    Kill(String),
    /// Give the session this label, checked; empty: none (LABEL).
    Label(String, String),
    Connect(String),
    /// Connect to a session this dashboard has just started: its first
    /// subscription is the one the supervisor waits for (a program that
    /// ended at once keeps its output and exit code until then).
    ConnectStarted(String),
    Spawn {
        id: String,
        command: String,
        /// Where it starts; `None`: the dashboard's directory.
        workdir: Option<String>,
        /// A person's name for it (`hm run --label`).
        label: Option<String>,
        /// `hm run --classifier`; `None`: hm chooses.
        classifier: Option<String>,
    },
    Bell,
    /// A desktop notification through the dashboard's terminal.
    Desktop(String),
    /// Forget an ended session: its record and log (`hm rm`).
    Forget(String),
    /// Start an ended session again (`hm restart`).
    Restart(String),
    /// Stop the program of a session whose supervisor is gone (`hm kill`,
    /// which stops it as the supervisor would have).
    KillOrphan(String),
    /// Start lost sessions again, as they were (`hm restore IDS`); the
    /// words after what came of it, if any (why the selected one was not
    /// among them).
    Restore(Vec<String>, Option<String>),
    /// Put this text on the system clipboard, through the dashboard's
    /// terminal (OSC 52).
    Clipboard(String),
    /// Hand the terminal to a raw attach of this session (the dashboard's
    /// run loop does it: it owns the terminal and the keyboard).
    RawAttach(String),
    /// Answer the dialog the session shows, if it is still the one
    /// expected (ACT; see [`super::inbox`]).
    Act(String, crate::protocol::Act),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    Grid,
    /// Every key goes to this session, shown on the whole screen.
    Focus(String),
    /// One pane fills the grid area; keys still drive the dashboard.
    Zoom(String),
    ConfirmKill(String),
    /// `x` on a session that ended: its record and what `hm restore`
    /// keeps go for good, so it is asked first.
    ConfirmForget(String),
    /// `r` on a session that ended: its command runs again, which may do
    /// what it did again (a deploy, a migration), so it is asked first.
    ConfirmRestart(String),
    NewSession {
        step: NewStep,
        id: String,
        command: String,
    },
    Filter,
    /// `L`: a new label for a running session, typed in the footer
    /// (starting from the label it has).
    Label {
        id: String,
        text: String,
    },
    Help,
    /// Why the selected session is in its state (the agent classifier's
    /// signals), over the grid; any key closes it.
    Explain(String),
    /// Every session that needs you, to answer or focus (`i`; see
    /// [`super::inbox`]).
    Inbox,
}

impl Mode {
    /// The session a yes/no question is about (`x`'s kill or forget, `r`'s
    /// run again), while one is asked.
    pub fn confirming(&self) -> Option<&str> {
        match self {
            Mode::ConfirmKill(id) | Mode::ConfirmForget(id) | Mode::ConfirmRestart(id) => Some(id),
            _ => None,
        }
    }

    /// A window over the panes that closes back to them: opened over a
    /// zoomed pane, it closes back to the zoom. The filter is not one: it
    /// picks panes of the grid.
    pub fn is_overlay(&self) -> bool {
        matches!(
            self,
            Mode::ConfirmKill(_)
                | Mode::ConfirmForget(_)
                | Mode::ConfirmRestart(_)
                | Mode::NewSession { .. }
                | Mode::Label { .. }
                | Mode::Help
                | Mode::Explain(_)
                | Mode::Inbox
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewStep {
    Id,
    Command,
    /// The directory to start in (`Tab` from the command).
    Dir,
    /// A label, a person's name for the session (`Tab` from the
    /// directory).
    Label,
    /// Which classifier watches it (`Tab` from the label; `Tab` again
    /// goes back to the command).
    Classifier,
}

/// How the dashboard is connected to a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    Connecting,
    Live,
    Problem(String),
    Gone,
}

/// A pane's session lost with its supervisor: whether `R` (as `hm
/// restore`) starts it again, or why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lost {
    Restartable,
    Refused(String),
}

impl Lost {
    pub fn of(lost: &crate::lost::Lost) -> Lost {
        lost.refusal
            .clone()
            .map_or(Lost::Restartable, Lost::Refused)
    }
}

#[derive(Debug)]
pub struct Pane {
    pub id: String,
    /// This dashboard sent the session a new label (`L`) and waits for
    /// its answer, which the notice then says.
    pub labelling: bool,
    pub term: Term<crate::vt::mouse::Modes>,
    pub status: Option<(Status, Instant)>,
    pub command: Option<String>,
    /// The program's starting directory (INFO, or the ended record).
    pub workdir: Option<String>,
    /// When the run it shows started (INFO, or the ended record): a
    /// record of another run under its id is told from its own by it.
    pub started_unix_ms: Option<u64>,
    /// A person's name for the session (`hm run --label`).
    pub label: Option<String>,
    /// The session's own size, as its supervisor last said (INFO).
    pub session_size: Option<Size>,
    pub exit: Option<i32>,
    /// Its end was asked for (this dashboard's `x`, or its record says
    /// so): the title says `killed`, not `exited`.
    pub killed: bool,
    pub link: Link,
    /// The supervisor is gone but its program, this pid, runs on.
    pub orphan: Option<u32>,
    /// Lost with its supervisor (the machine restarted), and whether
    /// `hm restore` would start it again (see `tui/lost.rs`).
    pub lost: Option<Lost>,
    /// Finished its work or exited, and not looked at since.
    pub attention: bool,
    pub last_output: Option<Instant>,
    /// The last output that was the program printing: not an agent's or
    /// an interactive program's redraw while it rests (Claude Code
    /// repaints at its prompt now and then, `top` every three), nor
    /// the redraw after our resize. What sorting by state calls recent.
    pub printed_at: Option<Instant>,
    /// When to ask the session for its state, and whether it answers.
    pub poll: StatusPoll,
    /// When the session was seen to end (EXIT, or its supervisor gone).
    pub ended_at: Option<Instant>,
    /// The record the session left when it ended has been seen in the
    /// socket dir, saying it ended then (wall clock, ms): once it is gone
    /// (`hm rm`, `hm clean`), so is the pane.
    pub recorded: Option<u64>,
    /// The size we last asked the session to take.
    pub applied: Option<Size>,
    /// A person's terminal attached elsewhere (`hm attach`) sets the
    /// session's size, and holds back ours (INFO says so); marked.
    pub held: bool,
    /// Another client that holds no terminal (a second dashboard's focus)
    /// resized the session since we did: its size stands until the person
    /// here types into it or focuses it anew, rather than the two
    /// resizing it back and forth for as long as both are in focus.
    pub taken: bool,
    /// INFO questions asked and not answered yet.
    pub infos_out: u32,
    /// Of those, the ones asked before our last RESIZE: the size they give
    /// is the session's old one, not a sign that someone holds it.
    pub infos_stale: u32,
    /// When the current stretch of work began (output or a busy state
    /// not caused by our own resizing).
    pub busy_since: Option<Instant>,
    /// The last output that was not a redraw after our resize.
    pub last_work: Option<Instant>,
    /// The beat its output comes at, which lengthens the silence that
    /// ends its work as its supervisor's classifier does (`top`); timed
    /// from its first output here.
    pub rhythm: Option<(Instant, crate::detect::rhythm::Rhythm)>,
    /// The silence its supervisor last said makes it idle (INFO's
    /// `idle_after_ms`): a beat it knows before this dashboard learns it.
    pub idle_after_ms: Option<u64>,
    /// Seen waiting (by a STATUS answer) before the pushed state said at
    /// what: its notification waits for that, since then.
    pub alert_owed: Option<Instant>,
    /// Waiting at a dialog (its identity) that an `[[automation]]` entry
    /// of its supervisor answers: nobody is called to it before then.
    pub automated: Option<(u64, Instant)>,
    /// When we last resized the session: output right after it is the
    /// program redrawing, not working.
    pub resized_at: Option<Instant>,
    /// The last state the supervisor pushed, with its detail and signals.
    pub report: Option<crate::protocol::StateReport>,
    /// Whether the last pushed state but a stop said an agent's turn was
    /// over (`None` before the first): a stop is no part of a turn, and a
    /// finished turn stopped and continued is not finished anew.
    pub turn_was_over: Option<bool>,
    /// The state as the session's last INFO gave it: asked when the `e`
    /// overlay opens, since a pushed state keeps the signals it had when
    /// the state began, and the evidence moves on without a new state.
    pub explained: Option<Box<crate::protocol::StateReport>>,
    /// Since when the session has been waiting for its user.
    pub waiting_since: Option<Instant>,
    /// How many times output or a reset changed the screen: what the
    /// pane's window was worked out for (`window_memo`) is kept until then.
    pub drawn: u64,
    /// The window's facts about the live screen, for `drawn` and a size
    /// (see [`super::window::live_top`]): a quiet pane is not read again
    /// at every frame.
    pub window_memo: std::cell::Cell<Option<window_facts::Memo>>,
    /// The pane is scrolled back into its history, or in copy mode
    /// (see [`super::copy`]); `None`: it shows the live screen.
    pub copy: Option<crate::copymode::CopyMode>,
    /// The dialog the session waits at, as its supervisor last described
    /// it (STATE's `dialog`, or INFO's): what the inbox shows and answers.
    pub dialog: Option<crate::protocol::DialogInfo>,
    /// An answer sent from the inbox and not yet acted on.
    pub answering: Option<Answering>,
    /// The dialog (its identity) the inbox's last answer went to: while
    /// it stands, the program has not taken the answer in yet (Gemini
    /// CLI's folder trust restarts it, 2 s and more), and its row says
    /// so rather than inviting a second answer.
    pub answered: Option<u64>,
    /// Where the pane's window was on the live screen when it was
    /// scrolled back (see [`super::copy::extent`]).
    pub copy_window: CopyWindow,
    /// The session's output comes with its journal's marks: the emulator
    /// takes each size where it falls in the output, and no other, so it
    /// goes through the sizes the session's screen did.
    pub marks: bool,
}

impl Pane {
    /// A pane keeping no history; see [`Pane::with_history`].
    pub fn new(id: String) -> Pane {
        Pane::with_history(id, 0)
    }

    /// A pane whose emulator keeps `lines` rows that scrolled off.
    pub fn with_history(id: String, lines: usize) -> Pane {
        Pane {
            id,
            labelling: false,
            term: Term::with_scrollback(Size { cols: 80, rows: 24 }, lines),
            status: None,
            command: None,
            workdir: None,
            started_unix_ms: None,
            label: None,
            session_size: None,
            held: false,
            taken: false,
            infos_out: 0,
            infos_stale: 0,
            exit: None,
            killed: false,
            link: Link::Connecting,
            orphan: None,
            lost: None,
            attention: false,
            last_output: None,
            printed_at: None,
            poll: StatusPoll::new(Duration::from_millis(3000)),
            ended_at: None,
            recorded: None,
            applied: None,
            busy_since: None,
            last_work: None,
            rhythm: None,
            idle_after_ms: None,
            alert_owed: None,
            automated: None,
            resized_at: None,
            report: None,
            turn_was_over: None,
            explained: None,
            waiting_since: None,
            copy: None,
            dialog: None,
            answering: None,
            answered: None,
            drawn: 0,
            window_memo: std::cell::Cell::new(None),
            copy_window: Default::default(),
            marks: false,
        }
    }

    /// Whether the session's program is stopped by a signal (Ctrl-Z,
    /// SIGSTOP) and waits to be continued.
    pub fn stopped(&self) -> bool {
        self.waiting()
            && self
                .report
                .as_ref()
                .filter(|r| Some(r.state_byte) == self.state())
                .is_some_and(crate::protocol::StateReport::stopped)
    }

    /// Whether the session waits for its user (a dialog, a question, a
    /// program reading input): the strongest call for attention.
    pub fn waiting(&self) -> bool {
        !self.ended() && self.state() == Some(ProcessState::Waiting.as_byte())
    }

    /// Whether the dialog the inbox's last answer went to is still the one
    /// shown: its program has not taken the answer in yet.
    pub fn answer_pending_on_screen(&self) -> bool {
        self.answered
            .is_some_and(|id| self.dialog.as_ref().is_some_and(|d| d.id == id))
    }

    /// The dialog it waits at, and in how long an `[[automation]]` entry
    /// answers it, when the pushed state says one will.
    pub fn automated_in(&self) -> Option<(u64, Duration)> {
        let dialog = self
            .report
            .as_ref()
            .filter(|r| self.waiting() && Some(r.state_byte) == self.state())?
            .dialog
            .as_ref()?;
        Some((dialog.id, Duration::from_millis(dialog.automation_in_ms?)))
    }

    /// The state's name with the agent classifier's detail when it has
    /// one (`waiting · permission`), and how many children (subagents,
    /// background shells) the program reports (`active · thinking +2`).
    pub fn state_label(&self) -> Option<String> {
        let state = self.state()?;
        Some(crate::client::view::label(
            state,
            self.report.as_ref(),
            !self.ended(),
        ))
    }

    /// The state byte to show: dead once exited, else the last answer;
    /// none for a program that outlived its supervisor.
    pub fn state(&self) -> Option<u8> {
        if self.orphan.is_some() {
            return None;
        }
        if self.ended() {
            return Some(ProcessState::Dead.as_byte());
        }
        self.status.map(|(s, _)| s.state)
    }

    /// Whether the session is over: it exited, or its supervisor is gone.
    pub fn ended(&self) -> bool {
        self.exit.is_some() || self.link == Link::Gone
    }

    /// Whether it ended as meant: its program exited with code 0, or a
    /// person killed it. Not a failure, a crash or a lost supervisor,
    /// whose badge is the `dead` state's.
    pub fn ended_well(&self) -> bool {
        self.lost.is_none() && (self.exit == Some(0) || (self.exit.is_some() && self.killed))
    }

    /// Milliseconds in the current state, extrapolated from the last
    /// answer; once ended, since the end.
    pub fn state_ms(&self, now: Instant) -> Option<u64> {
        if let Some(t) = self.ended_at {
            return Some(now.saturating_duration_since(t).as_millis() as u64);
        }
        let (s, at) = self.status?;
        Some(u64::from(s.state_ms) + now.saturating_duration_since(at).as_millis() as u64)
    }

    /// Milliseconds since the session last printed anything.
    pub fn idle_ms(&self, now: Instant) -> Option<u64> {
        let (s, at) = self.status?;
        let since_status =
            u64::from(s.idle_ms) + now.saturating_duration_since(at).as_millis() as u64;
        Some(match self.last_output {
            Some(t) if t > at => now.saturating_duration_since(t).as_millis() as u64,
            _ => since_status,
        })
    }

    pub fn busy(&self) -> bool {
        self.state().is_some_and(crate::client::poll::is_busy)
    }

    /// An agent or an interactive program (not a shell) at rest: what it
    /// draws now is its own screen kept up, not work.
    pub fn resting_program(&self) -> bool {
        !self.busy()
            && self.report.as_ref().is_some_and(|r| {
                r.agent
                    .as_deref()
                    .is_some_and(|a| a != crate::detect::SHELL)
            })
    }

    /// Connected and its program running: the only sessions asked for
    /// their state, and so the only ones whose questions fall due.
    pub fn askable(&self) -> bool {
        self.link == Link::Live && self.exit.is_none()
    }

    /// When an unanswered STATUS makes the session unresponsive.
    pub fn answer_due(&self) -> Option<Instant> {
        self.poll.answer_due().filter(|_| self.askable())
    }

    /// A question has gone unanswered for
    /// [`ANSWER_TIMEOUT`](crate::client::ANSWER_TIMEOUT): its
    /// supervisor is stopped or stuck.
    pub fn unresponsive(&self) -> bool {
        self.poll.unresponsive()
    }

    /// Whether something at `at` falls in the redraw that our last resize
    /// of the session set off.
    pub fn redrawing(&self, at: Instant) -> bool {
        self.resized_at
            .is_some_and(|r| at >= r && at.saturating_duration_since(r) < REDRAW_GRACE)
    }
}

/// How long a pane stays selected to count as looked at, its `●` cleared:
/// arrows on the way past it to another pane leave its news marked.
pub const LOOK: Duration = Duration::from_secs(1);

/// Output this soon after we resized a session is its redraw, not work:
/// a layout change must not make every idle shell look finished.
pub const REDRAW_GRACE: Duration = Duration::from_secs(1);

/// A session the new-session form started: its id, the id field as
/// typed (empty when the id was to come from the command) and the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormStart {
    pub id: String,
    pub typed: String,
    pub command: String,
}

#[derive(Debug)]
pub struct Model {
    pub panes: Vec<Pane>,
    pub selected: Option<String>,
    pub mode: Mode,
    pub columns: Option<u16>,
    pub page: usize,
    pub filter: String,
    /// Terminal size (cols, rows).
    pub size: (u16, u16),
    /// `[tui] fit_sessions`: resize each session to its pane (opt-in;
    /// otherwise a session keeps its size and only focus sets it).
    pub fit: bool,
    pub bell: bool,
    /// Desktop notifications on (`[tui] desktop_notify`).
    pub desktop: bool,
    /// Panes ordered by state (`s`) rather than by id.
    pub by_state: bool,
    /// Help (`?`) shows its second page, what the badges say.
    pub help_badges: bool,
    /// Rows of the help scrolled past, on a screen too short for it.
    pub help_scroll: u16,
    /// The time of the message being handled: what the order by state
    /// measures how recent output is against.
    pub now: Instant,
    /// When the dashboard was last quit, if it was: sessions that ended
    /// after that are marked `●`, as if seen ending unlooked at.
    pub left_unix_ms: Option<u64>,
    /// When this dashboard opened: a session that ended after it was seen
    /// ending, even if it ended before the dashboard ever saw it run (a
    /// command that failed at once).
    pub opened_unix_ms: u64,
    /// The dashboard's directory, where `n` starts sessions unless told.
    pub cwd: String,
    /// The directory field of the new-session prompt.
    pub new_dir: String,
    /// The new session form's label.
    pub new_label: String,
    pub detach_key: Option<u8>,
    /// The other machines' names (`n` takes `host:id` for one of them).
    pub hosts: Vec<String>,
    /// Other machines that are down, by name: why, for their panes.
    pub host_problems: std::collections::HashMap<String, String>,
    /// Other machines that were up and dropped, by name: when, on the
    /// wall clock (ms) and as an instant. Their panes show the last state
    /// known, as of then, with its timer stopped.
    pub hosts_down: std::collections::HashMap<String, (u64, Instant)>,
    /// In focus: hand the terminal to a raw attach (`attach_key`).
    pub attach_key: Option<u8>,
    /// Opens copy mode in focus (`copy_key`).
    pub copy_key: Option<u8>,
    /// Rows of history each pane keeps (`history_lines`).
    pub history_lines: usize,
    /// `history_lines` was not set: with many panes each keeps fewer
    /// (see [`Model::history_for`]).
    pub history_shared: bool,
    pub theme: Theme,
    pub notice: Option<(String, Instant)>,
    pub shell: String,
    /// Sessions marked `●` when the dashboard was last quit: each gets its
    /// mark back when its pane is made, if it is still the same session
    /// (started before the dashboard was quit).
    pub marked_before: std::collections::HashSet<String>,
    /// The pane selected when the dashboard was last quit: selected again
    /// when it comes, unless a key or the mouse has chosen another first.
    pub selected_before: Option<String>,
    /// The pane selected and since when: its `●` is looked at once it has
    /// stayed selected for [`LOOK`] (or is zoomed or focused), not when
    /// the selection passes over it.
    pub looking: Option<(String, Instant)>,
    /// The pane `Tab` selected last: its place in Tab's round is kept
    /// once its mark has gone, so the next press goes on from there.
    pub tabbed: Option<String>,
    /// The `--socket-dir` the dashboard was given: `hm run` elsewhere needs
    /// it too for its session to show here.
    pub socket_dir_flag: Option<String>,
    /// Focus was entered from zoom, and leaving it goes back there.
    pub zoom_after_focus: bool,
    /// The pane zoomed under the overlay that is open (help, explain, the
    /// inbox, a question): closing it goes back to the zoom.
    pub zoom_under: Option<String>,
    /// Sessions this dashboard is starting: the scan leaves them to the
    /// start's own connection, the one their supervisor waits for.
    pub starting: std::collections::HashSet<String>,
    pub last_click: Option<(Instant, u16, u16)>,
    /// Orphaned sessions whose panes were cleared with `x`: not shown
    /// again while they stay orphaned.
    pub dismissed: std::collections::HashSet<String>,
    pub quit: bool,
    /// Copy mode was just left (`y`, `q`, Esc): the next key is the
    /// quit key pressed once too often by a hand used to copy mode, not
    /// a wish to close the dashboard.
    pub left_copy: bool,
    /// The grid's keys in effect (`[tui.keys]`).
    pub keys: crate::config::Keymap,
    /// The inbox's rows as last drawn, its selection and what its last
    /// answer came to.
    pub inbox: Inbox,
    /// The new session form's classifier; `None`: hm chooses.
    pub new_classifier: Option<String>,
    /// What the form last started, until its start is known: one that
    /// could not start brings the form back as it was filled in.
    pub new_started: Option<FormStart>,
    /// A mouse drag selecting text (see [`super::select`]).
    pub drag: Option<Drag>,
}

/// How lately a session must have printed to sort among the busy ones
/// (`s`).
pub const ACTIVE_WINDOW: std::time::Duration = std::time::Duration::from_secs(60);

impl Model {
    pub fn new(theme: Theme, size: (u16, u16)) -> Model {
        Model {
            panes: Vec::new(),
            selected: None,
            mode: Mode::Grid,
            columns: None,
            page: 0,
            filter: String::new(),
            size,
            fit: false,
            bell: false,
            desktop: false,
            by_state: false,
            help_badges: false,
            help_scroll: 0,
            now: Instant::now(),
            left_unix_ms: None,
            opened_unix_ms: crate::clock::unix_ms(),
            cwd: String::new(),
            new_dir: String::new(),
            new_label: String::new(),
            detach_key: Some(0x1c),
            copy_key: Some(crate::config::DEFAULT_COPY_KEY),
            attach_key: None,
            host_problems: Default::default(),
            hosts_down: Default::default(),
            hosts: Vec::new(),
            history_lines: crate::config::DEFAULT_HISTORY_LINES,
            history_shared: false,
            theme,
            notice: None,
            shell: "/bin/sh".into(),
            socket_dir_flag: None,
            zoom_after_focus: false,
            zoom_under: None,
            marked_before: Default::default(),
            selected_before: None,
            looking: None,
            tabbed: None,
            starting: Default::default(),
            last_click: None,
            dismissed: std::collections::HashSet::new(),
            quit: false,
            left_copy: false,
            keys: crate::config::Keymap::default(),
            inbox: Default::default(),
            new_classifier: None,
            new_started: None,
            drag: None,
        }
    }

    pub fn pane(&self, id: &str) -> Option<&Pane> {
        self.panes.iter().find(|p| p.id == id)
    }

    pub fn pane_mut(&mut self, id: &str) -> Option<&mut Pane> {
        self.panes.iter_mut().find(|p| p.id == id)
    }

    /// When the first pane is due to ask whether its session went idle,
    /// or to be seen not answering.
    pub fn next_check(&self) -> Option<Instant> {
        // The selected pane's mark goes when it has been looked at for
        // LOOK: at that moment, not at the next second's tick (Tab
        // round the marked panes a little over a second each left some).
        let look = self
            .looking
            .as_ref()
            // Typing a filter looks at nothing (`update`): a deadline
            // then would be past at once, and wake the loop again and again.
            .filter(|(id, _)| {
                self.mode != Mode::Filter && self.pane(id).is_some_and(|p| p.attention)
            })
            .map(|(_, since)| *since + LOOK);
        self.panes
            .iter()
            // A check left on a session that ended is never due: it would
            // wake the run loop at once, again and again.
            .filter(|p| p.askable())
            .flat_map(|p| [p.poll.idle_check(), p.answer_due(), p.inbox_due()])
            .flatten()
            .chain(look)
            .min()
    }

    /// The pane that fills the grid's area: the zoomed one, also under an
    /// overlay opened over it.
    pub fn zoomed(&self) -> Option<&str> {
        match &self.mode {
            Mode::Zoom(id) => Some(id),
            mode if mode.is_overlay() => self.zoom_under.as_deref(),
            _ => None,
        }
    }

    /// Panes shown in the grid (the filter applied): the running in id
    /// order, then the ended in id order, unless sorted by state.
    pub fn visible(&self) -> Vec<&Pane> {
        let mut shown: Vec<&Pane> = self
            .panes
            .iter()
            .filter(|p| {
                // By id or by label: `/refactor` found nothing of a
                // session labelled "refactor parser".
                self.filter.is_empty()
                    || p.id.contains(&self.filter)
                    || p.label.as_deref().is_some_and(|l| l.contains(&self.filter))
            })
            .collect();
        if !self.by_state {
            // `panes` is in id order and the sort is stable. The ended go
            // last: the records of a day's finished runs (a socket dir
            // keeps 50) pushed the sessions still running onto later pages.
            shown.sort_by_key(|p| p.ended());
        } else {
            // Needs you first (the longest waiting first), then those that
            // printed within the window, then the quiet, each by id, then
            // the ended, the latest to end first. By window, not by the
            // last output: two programs printing every few seconds swapped
            // places at every line. An agent's redraws at rest are not
            // printing: they kept every agent among the recent.
            let recent = |p: &Pane| {
                p.printed_at
                    .is_some_and(|t| self.now.saturating_duration_since(t) < ACTIVE_WINDOW)
            };
            let key = |p: &Pane| {
                if p.waiting() {
                    (0, p.waiting_since, None)
                } else if p.ended() {
                    (3, None, p.ended_at.map(std::cmp::Reverse))
                } else if recent(p) {
                    (1, None, None)
                } else {
                    (2, None, None)
                }
            };
            shown.sort_by(|a, b| {
                key(a)
                    .cmp(&key(b))
                    .then_with(|| crate::paths::natural_cmp(&a.id, &b.id))
            });
        }
        shown
    }

    pub fn visible_ids(&self) -> Vec<String> {
        self.visible().iter().map(|p| p.id.clone()).collect()
    }

    /// Rows of history for a pane made (or connected anew) now, with
    /// `new` more panes about to be made: the configured number, or, when
    /// the user set none, a share of
    /// [`crate::config::DASHBOARD_HISTORY_ROWS`] once there are many.
    pub fn history_for(&self, new: usize) -> usize {
        if !self.history_shared {
            return self.history_lines;
        }
        let panes = self.panes.len() + new;
        let share = crate::config::DASHBOARD_HISTORY_ROWS / panes.max(1);
        share
            .max(crate::config::MIN_SHARED_HISTORY_LINES)
            .min(self.history_lines)
    }

    /// When `p`'s host dropped, if it is another machine's session and
    /// its host is down: what the pane shows is as of then.
    pub fn host_down(&self, p: &Pane) -> Option<(u64, Instant)> {
        let (host, _) = crate::remote::split_target(&p.id)?;
        self.hosts_down.get(host).copied()
    }

    /// The host of session `id`, if it is another machine's and that
    /// machine is unreachable: a request sent now would wait in its
    /// stalled link and be acted on whenever it came back.
    pub fn unreachable_host<'a>(&self, id: &'a str) -> Option<&'a str> {
        let (host, _) = crate::remote::split_target(id)?;
        self.hosts_down.contains_key(host).then_some(host)
    }

    pub fn notify(&mut self, text: impl Into<String>, now: Instant) {
        self.notice = Some((text.into(), now));
    }
}
