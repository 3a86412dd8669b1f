//! The `agent` classifier: what a session is doing, from everything hm can
//! see of it, with the reasons.
//!
//! Evidence comes from several channels — the screen (rules over regions of
//! the settled screen), the window title, notifications (OSC 9/777, BEL),
//! byte timing, and the process side (who holds the pty's foreground and
//! whether it is reading the terminal). Each channel writes its latest
//! finding into an evidence table with the time it was first seen; one pure
//! function, [`resolve`], turns the table and the current time into a
//! [`Verdict`]: a primary state, a detail, a health and the signals that
//! decided it. Nothing here reads the clock or does I/O: time and facts are
//! passed in, so the supervisor, `hm classify` and the corpus scorer all
//! run the same code.

pub mod verdict;

pub use verdict::{Detail, Health, Primary, Signal, Source, Verdict};

use crate::vt::events::TermEvent;

/// Settings of the `agent` classifier (`[classifier.agent]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Output quieter than this is not work by timing alone.
    pub idle_threshold_ms: u64,
    /// A session that claims to work with an unchanged screen this long is
    /// `stuck`.
    pub stuck_after_ms: u64,
    /// Whether process facts are evidence (off for replayed recordings,
    /// whose process is a player, not the agent).
    pub process_evidence: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            idle_threshold_ms: crate::classify::DEFAULT_IDLE_THRESHOLD_MS,
            stuck_after_ms: 60_000,
            process_evidence: true,
        }
    }
}

/// What the supervisor knows of the processes on the session's pty.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcessFacts {
    /// Whether the pty's foreground process group is the session's own
    /// program (a shell at its prompt, or the agent itself) rather than a
    /// job it started.
    pub foreground_is_session: bool,
    /// Whether the foreground process is blocked reading the terminal.
    pub reading_terminal: bool,
    /// The foreground process's command name (`/proc/PID/comm`).
    pub foreground_command: String,
}

/// Watches one session and explains what it is doing.
#[derive(Debug)]
pub struct Detector {
    settings: Settings,
    started_ms: u64,
    last_output_ms: Option<u64>,
    ended_ms: Option<u64>,
}

impl Detector {
    /// `command` is the session's argv: it names the agent before its
    /// screen does.
    pub fn new(settings: Settings, command: &[String], now_ms: u64) -> Detector {
        let _ = command;
        Detector {
            settings,
            started_ms: now_ms,
            last_output_ms: None,
            ended_ms: None,
        }
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Every read from the pty, after the screen has been fed it.
    pub fn output(&mut self, chunk: &[u8], now_ms: u64) {
        let _ = chunk;
        self.last_output_ms = Some(now_ms);
    }

    /// Something the program said besides drawing (title, bell, ...).
    pub fn event(&mut self, event: &TermEvent, now_ms: u64) {
        let _ = (event, now_ms);
    }

    /// The session was resized: the redraw that answers it is not work.
    pub fn resized(&mut self, now_ms: u64) {
        let _ = now_ms;
    }

    /// Fresh process facts (the supervisor reads them when asked).
    pub fn process(&mut self, facts: ProcessFacts, now_ms: u64) {
        let _ = (facts, now_ms);
    }

    /// The program ended.
    pub fn ended(&mut self, now_ms: u64) {
        self.ended_ms = Some(now_ms);
    }

    /// The verdict now, reading `screen` if it changed since last asked.
    pub fn verdict(&mut self, screen: &vt100::Screen, now_ms: u64) -> Verdict {
        let _ = screen;
        resolve(self, now_ms)
    }

    /// The evidence table, for `hm explain`.
    pub fn evidence(&self) -> Vec<Signal> {
        Vec::new()
    }

    /// The earliest time the verdict can change with no new input (an
    /// idle threshold or `stuck_after` running out); `None` while nothing
    /// is pending, so an idle session needs no timer.
    pub fn wake_at(&self) -> Option<u64> {
        None
    }
}

/// The verdict of the evidence at `now_ms`.
pub fn resolve(detector: &Detector, now_ms: u64) -> Verdict {
    let since = detector.ended_ms.unwrap_or(detector.started_ms);
    let _ = (now_ms, detector.last_output_ms);
    Verdict {
        primary: if detector.ended_ms.is_some() {
            Primary::Dead
        } else {
            Primary::Unknown
        },
        detail: None,
        health: Health::Alive,
        agent: None,
        since_ms: since,
        signals: Vec::new(),
    }
}
