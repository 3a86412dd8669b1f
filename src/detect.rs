//! The `agent` classifier: what a session is doing, from everything hm can
//! see of it, with the reasons.
//!
//! Evidence comes from several channels — the screen (rules over regions of
//! the settled screen, [`screen`]), the window title ([`title`]),
//! notifications (OSC 9/777, BEL), byte timing, and the process side (who
//! holds the pty's foreground and whether it is reading the terminal).
//! Each channel writes its latest finding into an [`Evidence`] table with
//! the time it was first seen; one pure function, [`resolve`], turns the
//! table and the current time into a [`Verdict`]: a primary state, a
//! detail, a health and the signals that decided it. The rules are data
//! ([`rules`]): TOML files compiled in, which a user can override. Nothing
//! here reads the clock or does I/O: time and facts are passed in, so the
//! supervisor, `hm classify` and the corpus scorer all run the same code.
//!
//! This file holds the [`Detector`], which owns the evidence table and
//! feeds it from the output, the screen, the title and notifications. Its
//! [`Settings`] are in `settings`, and the process channel
//! ([`ProcessFacts`]) is in `process`.

pub mod dialog;
pub mod evidence;
pub mod hooks;
mod marks;
pub mod offline;
pub mod plain;
mod process;
pub mod resolve;
pub(crate) mod rhythm;
pub mod rules;
pub mod screen;
mod settings;
pub mod status;
pub mod title;

use std::hash::{Hash, Hasher};
use std::sync::Arc;

pub use crate::verdict::{
    Detail, Health, PROGRAM, Primary, SHELL, Signal, Source, TURN_OVER, Verdict, turn_over_signal,
};
pub use dialog::{Dialog, Unanswerable};
pub use evidence::{AgentFinding, Evidence, EvidenceRow, Finding};
pub use process::{PROCESS_RECHECK_MAX_MS, PROCESS_RECHECK_MS, ProcessFacts, ProcessId};
pub use resolve::{RECOVERED_FOR_MS, resolve};
pub use rules::{RuleError, RuleSet, load_rules, user_rules_dir};
pub use settings::{DEFAULT_IDLE_THRESHOLD_MS, DEFAULT_STUCK_AFTER_MS, Settings};

use crate::vt::events::{Query, TermEvent};
use process::PROCESS_FRESH_MS;

/// Output this soon after a resize is the program redrawing for the new
/// size, not work.
pub const RESIZE_GRACE_MS: u64 = 1_000;
/// How long a bell or desktop notification counts as a call for attention.
const NOTIFICATION_FRESH_MS: u64 = 5_000;

/// A program (not an agent) busy for less than this, then idle, has not
/// finished work: a prompt redrawn after a resize, a build between two of
/// its lines. The dashboard's mark and `[[notify]]`'s `finished` both
/// go by it.
pub const MIN_WORK: std::time::Duration = std::time::Duration::from_secs(2);

/// For an agent's reported state (not a shell's or a plain program's),
/// whether it says the agent's turn is over (see
/// [`crate::verdict::turn_over`]); `None` for any other program, whose
/// work ends when it goes quiet.
pub fn turn_over(report: &crate::protocol::StateReport) -> Option<bool> {
    report.turn_over()
}
/// Watches one session and explains what it is doing.
#[derive(Debug)]
pub struct Detector {
    settings: Settings,
    rules: Arc<RuleSet>,
    evidence: Evidence,
    /// The agent argv names, and whether argv is an interactive shell
    /// (no script to run), whose reading at its prompt is idleness.
    command_agent: Option<String>,
    interactive_shell: bool,
    /// The agent the process in front of the terminal names (not the
    /// session's own program), from the latest process facts.
    process_agent: Option<String>,
    /// Whether process facts were ever given, and what the latest said of
    /// the process in front.
    facts_seen: bool,
    front: Vec<ProcessId>,
    foreground_is_session: bool,
    /// A shell is in front of the terminal, no agent: one typed at it has
    /// quit, and what its title and screen still say of it is history.
    shell_in_front: bool,
    /// The agent seen at its prompt, then at work after it: back at its
    /// prompt, its turn is finished.
    turn: Option<(String, bool)>,
    /// Keys came (a person, `hm send`, an answer) since the agent's last
    /// turn ended: work after them is a turn; work without them (Gemini
    /// CLI redrawing as it starts, a resumed conversation replayed) is
    /// not, and finishes nothing.
    asked: bool,
    title_agent: Option<String>,
    screen_agent: Option<String>,
    /// The current title, re-read when the agent becomes known.
    title_text: String,
    /// Hash of the last screen read, to skip unchanged screens.
    screen_hash: Option<u64>,
    alternate: bool,
    resized_ms: Option<u64>,
    /// The process that asked for the status protocol and was answered;
    /// `Some(None)` where processes are not evidence (a replay), so the
    /// asker cannot be told from others. Its records count while it is
    /// the process in front of the terminal.
    asker: Option<Option<ProcessId>>,
    last: Option<Verdict>,
    /// When `last` was taken.
    last_ms: u64,
    /// When a verdict was last asked for (a held one gives `last` again).
    looked_ms: u64,
    /// The last verdict stands for a redraw that answers a resize (see
    /// [`Detector::verdict`]): look again when the grace ends.
    held: bool,
    /// The beat output comes at, which may lengthen the silence that ends
    /// work (`evidence.idle_threshold_ms`).
    rhythm: rhythm::Rhythm,
}

impl Detector {
    /// `command` is the session's argv: it names the agent before its
    /// screen does.
    pub fn new(settings: Settings, command: &[String], now_ms: u64) -> Detector {
        Detector::with_rules(settings, rules::builtin(), command, now_ms)
    }

    /// A detector using `rules` (e.g. [`load_rules`] with the user's
    /// directory) instead of the built-in ones.
    pub fn with_rules(
        settings: Settings,
        rules: Arc<RuleSet>,
        command: &[String],
        now_ms: u64,
    ) -> Detector {
        let launched = plain::SessionCommand::of(command);
        let command_agent = rules.agent_for_command(command).map(|a| a.name.clone());
        let interactive_shell =
            command_agent.as_deref() == Some(SHELL) && launched.interactive_shell;
        // `python3 app.py` is a program, whatever `python3` alone would be.
        let command_agent = command_agent.filter(|a| !(launched.script && a == PROGRAM));
        let evidence = Evidence {
            idle_threshold_ms: settings.idle_threshold_ms,
            stuck_after_ms: settings.stuck_after_ms,
            started_ms: now_ms,
            screen_changed_ms: now_ms,
            ..Evidence::default()
        };
        let mut detector = Detector {
            settings,
            rules,
            evidence,
            command_agent,
            interactive_shell,
            process_agent: None,
            facts_seen: false,
            front: Vec::new(),
            foreground_is_session: true,
            shell_in_front: false,
            turn: None,
            asked: false,
            title_agent: None,
            screen_agent: None,
            title_text: String::new(),
            screen_hash: None,
            alternate: false,
            resized_ms: None,
            asker: None,
            last: None,
            last_ms: now_ms,
            looked_ms: now_ms,
            held: false,
            rhythm: rhythm::Rhythm::default(),
        };
        detector.note_agent(now_ms);
        detector
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }

    /// The rules, shared.
    pub fn rules_arc(&self) -> Arc<RuleSet> {
        Arc::clone(&self.rules)
    }

    /// The evidence table as it stands (what `hm explain` prints).
    pub fn evidence(&self, now_ms: u64) -> Vec<EvidenceRow> {
        self.evidence.rows(now_ms)
    }

    /// The evidence table itself, for [`resolve`].
    pub fn table(&self) -> &Evidence {
        &self.evidence
    }

    /// The agent whose rules read the screen, found however it started:
    /// the process in front of the terminal, the session's command (while
    /// its own program is in front), the title, the screen's banner; a
    /// shell or an interactive program only when nothing names an agent.
    pub fn agent_name(&self) -> Option<&str> {
        let drawn = if self.shell_in_front {
            None
        } else {
            self.title_agent.as_deref().or(self.screen_agent.as_deref())
        };
        self.identity()
            .map(|(a, _)| a)
            .or(drawn)
            .or(self.command_agent.as_deref())
    }

    /// The agent named by the process that runs it, and which process
    /// said so: the one in front of the terminal, or the session's own
    /// command while it is in front. What automation may act for: a
    /// screen, a title or a record is text any program can print.
    pub fn identity(&self) -> Option<(&str, Source)> {
        if let Some(a) = &self.process_agent {
            return Some((a, Source::Process));
        }
        let a = self
            .command_agent
            .as_deref()
            .filter(|a| *a != SHELL && *a != PROGRAM)?;
        (!self.facts_seen || self.foreground_is_session).then_some((a, Source::Command))
    }

    /// Writes the agent, and the identity automation goes by, into the
    /// evidence table (`hm explain` shows both).
    fn note_agent(&mut self, now_ms: u64) {
        let identity = self.identity().map(|(name, source)| AgentFinding {
            name: name.to_owned(),
            source,
            since_ms: now_ms,
        });
        if identity.as_ref().map(|a| (&a.name, a.source))
            != self.evidence.identity.as_ref().map(|a| (&a.name, a.source))
        {
            self.evidence.identity = identity;
        }
        let Some(name) = self.agent_name().map(str::to_owned) else {
            return;
        };
        let source = match self.identity() {
            Some((a, source)) if a == name => source,
            _ if self.title_agent.as_deref() == Some(name.as_str()) => Source::Title,
            _ if self.screen_agent.as_deref() == Some(name.as_str()) => Source::Screen,
            _ => Source::Command,
        };
        if self
            .evidence
            .agent
            .as_ref()
            .is_some_and(|a| a.name == name && a.source == source)
        {
            return;
        }
        self.evidence.agent = Some(AgentFinding {
            name,
            source,
            since_ms: now_ms,
        });
    }

    /// The program's records stop counting: the process that asked has
    /// left the front of the terminal (or ended), and whatever prints the
    /// same bytes now is not it.
    fn withdraw_status(&mut self) {
        self.asker = None;
        self.evidence.status = None;
        self.evidence.children.clear();
    }

    /// The silence after which output no longer counts as work: the idle
    /// threshold, or longer for output at a steady beat.
    pub fn idle_after_ms(&self) -> u64 {
        self.evidence.idle_threshold_ms
    }

    /// Every read from the pty, after the screen has been fed it.
    pub fn output(&mut self, chunk: &[u8], now_ms: u64) {
        if chunk.is_empty() {
            return;
        }
        if self
            .resized_ms
            .is_some_and(|t| now_ms.saturating_sub(t) < RESIZE_GRACE_MS)
        {
            return;
        }
        self.evidence.last_output_ms = Some(now_ms);
        if self.rhythm.output(now_ms) {
            self.evidence.idle_threshold_ms =
                self.rhythm.quiet_after(self.settings.idle_threshold_ms);
        }
    }

    /// Something the program said besides drawing (title, bell, ...).
    pub fn event(&mut self, event: &TermEvent, now_ms: u64) {
        match event {
            TermEvent::Title(title) => {
                self.title_text = title.clone();
                if let Some(a) = title::identify(title, &self.rules) {
                    self.title_agent = Some(a.name.clone());
                }
                self.reclassify_title(now_ms);
            }
            TermEvent::Bell | TermEvent::Notify(_) => {
                let text = match event {
                    TermEvent::Notify(t) => t.chars().take(120).collect(),
                    _ => String::new(),
                };
                self.evidence.notification = Some(Finding {
                    source: Source::Notification,
                    rule: match event {
                        TermEvent::Bell => "notification.bell".to_owned(),
                        _ => "notification.osc".to_owned(),
                    },
                    primary: Primary::Waiting,
                    detail: None,
                    text,
                    since_ms: now_ms,
                    fresh_until_ms: Some(now_ms.saturating_add(NOTIFICATION_FRESH_MS)),
                });
            }
            // Records count only from a program that asked whether its
            // terminal speaks the protocol (and so got hm's answer), and
            // only while it is in front of the terminal: the same bytes
            // printed by `cat`, before or after it, say nothing about
            // anyone. The supervisor gives fresh process facts before
            // events of either kind.
            TermEvent::StatusRecord(body) => match self.asker {
                Some(_) if self.asker_in_front() => self.status_record(body, now_ms),
                Some(_) => self.withdraw_status(),
                // Codex sends its records without asking first. A record
                // that names the agent the process in front is (by its
                // process, never its screen or title) is that agent's,
                // for as long as that process stays in front.
                None => {
                    if let Some(front) = self.unasked_record_from(body) {
                        self.asker = Some(Some(front));
                        self.status_record(body, now_ms);
                    }
                }
            },
            TermEvent::Query(Query::StatusProtocol) => {
                self.asker = match (
                    self.settings.status_protocol,
                    self.settings.process_evidence,
                ) {
                    (false, _) => None,
                    (true, false) => Some(None),
                    // An asker that cannot be told is not trusted.
                    (true, true) => self.front.last().copied().map(Some),
                };
            }
            // Other queries are the supervisor's to answer.
            TermEvent::Query(_) => {}
            TermEvent::Progress(p) => self.progress(*p, now_ms),
            TermEvent::Shell(mark) => self.shell_mark(*mark, now_ms),
        }
    }

    /// The process in front, if `body` is a record of the agent it is
    /// (`app=codex` while `codex` is in front): what stands for an asker
    /// when an agent reports without probing.
    fn unasked_record_from(&self, body: &str) -> Option<ProcessId> {
        if !(self.settings.status_protocol && self.settings.process_evidence) {
            return None;
        }
        let front = self.front.last().copied()?;
        let app = status::Record::parse(body).ok()?.app?;
        let (agent, _) = self.identity()?;
        let named = app == agent || app.strip_prefix(agent).is_some_and(|r| r.starts_with('-'));
        named.then_some(front)
    }

    /// A hook report (`hm hook`). Reports of events that say nothing of
    /// the session's state leave the last one standing.
    pub fn hook(&mut self, report: &hooks::Report, now_ms: u64) {
        if !self.settings.hooks {
            return;
        }
        let Some((primary, detail)) = report.state() else {
            return;
        };
        self.evidence.hook = Some(Finding {
            source: Source::Hook,
            rule: format!("hook.{}", report.event),
            primary,
            detail,
            text: report.describe().chars().take(120).collect(),
            since_ms: now_ms,
            fresh_until_ms: Some(now_ms.saturating_add(hooks::HOOK_FRESH_MS)),
        });
    }

    /// An OSC 7501 record: the program's own state, or a child's. A record
    /// that does not parse leaves the last one standing.
    fn status_record(&mut self, body: &str, now_ms: u64) {
        let Ok(record) = status::Record::parse(body) else {
            return;
        };
        let children = &mut self.evidence.children;
        if let Some(id) = record.id.clone() {
            children.retain(|c| c.id != id);
            if record.state != status::State::Clear && children.len() < status::MAX_CHILDREN {
                children.push(status::Child {
                    id,
                    state: record.state.name().to_owned(),
                    title: record
                        .title
                        .clone()
                        .or(record.msg.clone())
                        .unwrap_or_default(),
                    since_ms: now_ms,
                });
            }
            return;
        }
        let Some((primary, detail)) = record.status() else {
            // `clear`: the program withdraws its state (it is exiting, or
            // a dialog before its first state ended); its children go too.
            self.evidence.status = None;
            children.clear();
            return;
        };
        let found = Finding {
            source: Source::StatusProtocol,
            rule: format!("status.{}", record.state.name()),
            primary,
            detail,
            text: record.describe().chars().take(120).collect(),
            since_ms: now_ms,
            fresh_until_ms: None,
        };
        self.evidence.status = match self.evidence.status.take() {
            Some(old) if old.same_as(&found) && old.text == found.text => Some(old),
            _ => Some(found),
        };
    }

    fn reclassify_title(&mut self, now_ms: u64) {
        let agent = self.agent_name().and_then(|n| self.rules.agent(n));
        let found = title::classify(&self.title_text, &self.rules, agent, now_ms);
        self.evidence.title = match (found, self.evidence.title.take()) {
            (Some(mut new), Some(old)) if new.same_as(&old) => {
                new.since_ms = old.since_ms;
                Some(new)
            }
            (found, _) => found,
        };
    }

    /// The session was resized: the redraw that answers it is not work.
    pub fn resized(&mut self, now_ms: u64) {
        self.resized_ms = Some(now_ms);
    }

    /// A client typed: what follows answers the keys, not the last resize,
    /// and work after them is a turn.
    pub fn typed(&mut self) {
        self.resized_ms = None;
        self.asked = true;
    }

    /// The program ended.
    pub fn ended(&mut self, now_ms: u64) {
        if self.evidence.ended_ms.is_none() {
            self.evidence.ended_ms = Some(now_ms);
        }
    }

    /// Read `screen` into the evidence if it changed since last time.
    fn look(&mut self, screen: &vt100::Screen, now_ms: u64) {
        let contents = screen.contents();
        let mut hasher = std::hash::DefaultHasher::new();
        contents.hash(&mut hasher);
        screen.cursor_position().hash(&mut hasher);
        screen.alternate_screen().hash(&mut hasher);
        let hash = hasher.finish();
        if self.screen_hash == Some(hash) {
            return;
        }
        let first = self.screen_hash.is_none();
        self.screen_hash = Some(hash);
        // A stuck session that moves again is `recovered` for a while;
        // one that was only quiet (a silent job, which is running, not
        // stuck) has nothing to recover from: it said `recovered` with no
        // `stuck` before it.
        let was_stuck = self
            .last
            .as_ref()
            .is_some_and(|v| v.primary == Primary::Stuck);
        if !first
            && was_stuck
            && now_ms.saturating_sub(self.evidence.screen_changed_ms)
                >= self.settings.stuck_after_ms
        {
            self.evidence.recovered_until_ms = Some(now_ms.saturating_add(RECOVERED_FOR_MS));
        }
        self.evidence.screen_changed_ms = now_ms;

        let snap = screen::Snapshot::of(screen);
        self.alternate = snap.alternate;
        let seen = screen::identify(&snap, &self.rules).map(|a| a.name.clone());
        if let Some(name) = &seen
            && self.screen_agent.as_ref() != Some(name)
        {
            self.screen_agent = Some(name.clone());
            self.reclassify_title(now_ms);
        }
        let agent = self.agent_name().and_then(|n| self.rules.agent(n));
        let found = screen::evaluate(&snap, &self.rules, agent);
        // An agent with rules of its own whose screen none of them knows.
        let own = agent
            .filter(|a| !a.rules.is_empty() && a.name != SHELL && a.name != PROGRAM)
            .map(|a| format!("{}.", a.name));
        self.evidence.unrecognised_since_ms = match own {
            Some(prefix) if !found.as_ref().is_some_and(|m| m.rule.starts_with(&prefix)) => {
                Some(self.evidence.unrecognised_since_ms.unwrap_or(now_ms))
            }
            _ => None,
        };
        if seen.is_none()
            && let Some(named) = found.as_ref().and_then(|m| m.agent.clone())
        {
            self.screen_agent = Some(named);
        }
        self.note_agent(now_ms);
        let found = found.map(|m| Finding {
            source: Source::Screen,
            rule: m.rule,
            primary: m.primary,
            detail: m.detail,
            text: m.text,
            since_ms: now_ms,
            fresh_until_ms: None,
        });
        self.evidence.screen = match (found, self.evidence.screen.take()) {
            (Some(mut new), Some(old)) if new.same_as(&old) => {
                new.since_ms = old.since_ms;
                Some(new)
            }
            (found, _) => found,
        };
    }

    /// The verdict now, reading `screen` if it changed since last asked.
    pub fn verdict(&mut self, screen: &vt100::Screen, now_ms: u64) -> Verdict {
        if self.evidence.ended_ms.is_none() {
            self.look(screen, now_ms);
        }
        self.verdict_unlooked(now_ms)
    }

    /// The verdict now, on the screen last looked at: for a caller that
    /// knows the screen has not changed since (no output, no resize),
    /// which [`verdict`](Self::verdict) would find only by reading it
    /// whole again.
    pub fn verdict_unlooked(&mut self, now_ms: u64) -> Verdict {
        self.looked_ms = now_ms;
        let mut verdict = resolve(&self.evidence, now_ms);
        self.finished_turn(&mut verdict);
        self.held = false;
        // A program redraws for a new size (the dashboard's focus resizes
        // it), and a screen looked at halfway through the redraw is no
        // news: a wait or a rest stands until the grace after a resize is
        // over, so its time goes on and no event says it began again (the
        // inbox orders dialogs by how long they have waited). An end
        // always counts.
        let redrawing = self
            .resized_ms
            .is_some_and(|t| now_ms.saturating_sub(t) < RESIZE_GRACE_MS);
        if redrawing
            && verdict.primary != Primary::Dead
            && let Some(last) = &self.last
            && matches!(last.primary, Primary::Waiting | Primary::Idle)
            && (last.primary, last.detail) != (verdict.primary, verdict.detail)
        {
            self.held = true;
            return last.clone();
        }
        // `since` is when this state began, which the table cannot know
        // across different rules saying the same state.
        if let Some(last) = &self.last {
            if last.primary == verdict.primary && last.detail == verdict.detail {
                verdict.since_ms = last.since_ms;
            } else {
                // A different state began after the last verdict, whatever
                // the evidence behind it says of itself (a spinner seen
                // before the session was stuck is not when it recovered).
                verdict.since_ms = verdict.since_ms.max(self.last_ms);
            }
        }
        self.last = Some(verdict.clone());
        self.last_ms = now_ms;
        verdict
    }

    /// An agent back at its prompt after it worked has finished its turn,
    /// whichever channel says so: its screen's prompt says only `ready`,
    /// where a hook (Claude's Stop, Codex's turn-complete) says `finished`,
    /// and Gemini CLI, whose hooks hm can rarely install, ended every turn
    /// `idle · ready`.
    /// Work counts only after the prompt was seen, and only after keys: an
    /// agent busy starting up has finished nothing when its prompt first
    /// shows, nor one that redraws by itself at its prompt (Gemini CLI,
    /// whose every start notified `finished`).
    fn finished_turn(&mut self, verdict: &mut Verdict) {
        // Compared in place: a verdict comes at every settle, and only the
        // first prompt of an agent is worth a copy of its name.
        let agent = self.agent_name().filter(|a| *a != SHELL && *a != PROGRAM);
        let same = agent.is_some_and(|a| self.turn.as_ref().is_some_and(|(t, _)| t == a));
        let agent = agent.filter(|_| !same).map(str::to_owned);
        if !same {
            self.turn = None;
        }
        match (verdict.primary, &mut self.turn) {
            (Primary::Idle, None) => self.turn = agent.map(|a| (a, false)),
            (Primary::Active, Some((_, worked))) => {
                if std::mem::take(&mut self.asked) {
                    *worked = true;
                } else if self
                    .last
                    .as_ref()
                    .is_some_and(|l| l.turn_over() == Some(true))
                {
                    // Work with no keys after a finished turn (a draft
                    // typed ahead or none, or an error that ended it) is
                    // not the next turn: back at its prompt, it is ready.
                    *worked = false;
                }
            }
            (Primary::Idle, Some((_, true))) if verdict.detail == Some(Detail::Ready) => {
                verdict.detail = Some(Detail::Finished);
            }
            // A draft typed while it worked stays at the prompt: the
            // detail says so, and the turn is over all the same (the
            // dashboard's `●` and `[[notify]]`'s `finished` go by it).
            (Primary::Idle, Some((_, true))) if verdict.detail == Some(Detail::PromptEditing) => {
                // At the turn's end, the keys typed while it worked are
                // the draft, not the next turn's: work before more keys
                // is not a turn. Only then: later, the keys are the
                // draft's sending (an Enter whose look came before the
                // agent's redraw lost its turn).
                if self
                    .last
                    .as_ref()
                    .is_some_and(|l| l.primary != Primary::Idle)
                {
                    self.asked = false;
                }
                if !verdict.signals.iter().any(|s| s.rule == TURN_OVER) {
                    verdict.signals.push(turn_over_signal(verdict.since_ms));
                }
            }
            _ => {}
        }
    }

    /// The earliest time the verdict can change with no new input (an
    /// idle threshold or `stuck_after` running out); `None` while nothing
    /// is pending, so an idle session needs no timer.
    pub fn wake_at(&self) -> Option<u64> {
        let last = self.last.as_ref()?;
        let mut at: Option<u64> = None;
        // A time already past at the last look changed nothing then and
        // cannot later: a silent job's screen unchanged for `stuck_after`
        // is still running, not stuck, and waking for it again and again
        // spun the supervisor on a core, reading /proc. The look, not the
        // verdict: one held through a resize's redraw is the last verdict
        // given again.
        let after = self.looked_ms;
        let mut consider = |t: u64| {
            if t > after {
                at = Some(at.map_or(t, |a| a.min(t)));
            }
        };
        if self.held
            && let Some(t) = self.resized_ms
        {
            consider(t.saturating_add(RESIZE_GRACE_MS));
        }
        match last.primary {
            Primary::Active => {
                consider(
                    self.evidence
                        .screen_changed_ms
                        .saturating_add(self.settings.stuck_after_ms),
                );
                if let Some(t) = self.evidence.last_output_ms
                    && last
                        .signals
                        .first()
                        .is_some_and(|s| s.source == Source::Timing)
                {
                    consider(t.saturating_add(self.evidence.idle_threshold_ms));
                }
                if last.health == Health::Recovered
                    && let Some(t) = self.evidence.recovered_until_ms
                {
                    consider(t);
                }
                // A silent job: read the facts again, sooner while it is new.
                if let Some(p) = &self.evidence.process
                    && let Some(fresh_until) = p.fresh_until_ms
                    && last
                        .signals
                        .first()
                        .is_some_and(|s| s.source == Source::Process)
                {
                    let checked = fresh_until.saturating_sub(PROCESS_FRESH_MS);
                    let wait = (checked.saturating_sub(p.since_ms) / 2)
                        .clamp(PROCESS_RECHECK_MS, PROCESS_RECHECK_MAX_MS);
                    consider(checked.saturating_add(wait));
                }
                // A report of work stands only so long.
                if let Some(h) = &self.evidence.hook
                    && let Some(t) = h.fresh_until_ms
                    && last
                        .signals
                        .first()
                        .is_some_and(|s| s.source == Source::Hook)
                {
                    consider(t);
                }
                // A `working` record outweighs a prompt only for a while.
                if let (Some(st), Some(sc)) = (&self.evidence.status, &self.evidence.screen)
                    && st.primary == Primary::Active
                    && sc.primary == Primary::Idle
                {
                    consider(
                        sc.since_ms
                            .max(st.since_ms)
                            .saturating_add(resolve::STATUS_LAG_MS),
                    );
                }
            }
            Primary::Waiting => {
                if let Some(n) = &self.evidence.notification
                    && last
                        .signals
                        .first()
                        .is_some_and(|s| s.source == Source::Notification)
                    && let Some(t) = n.fresh_until_ms
                {
                    consider(t);
                }
            }
            Primary::Idle | Primary::Stuck | Primary::Dead | Primary::Unknown => {}
        }
        at
    }
}
