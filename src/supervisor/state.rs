//! The state one supervisor shares between its tasks: the output and its
//! subscribers ([`Output`]), the screen and the classifier that say what
//! state the session is in, the program's fate, the pending kill, and the
//! counts the connections keep.
//!
//! All tasks run on one thread, so this lives in an `Rc<RefCell<_>>`;
//! borrows are short and never held across an `.await`. Its fields are
//! private: each task changes it through a method named for what happened
//! (output was read, the program exited, a kill was asked for, a terminal
//! subscribed), so the rules that tie fields together live here.

mod acting;
mod answers;
mod connections;
mod kept;

pub use acting::Refused;

use std::io;

use crate::classify::StateClassifier;
use crate::clock::{Clock, Instant};
use crate::detect::Detector;
use crate::protocol::{Size, StateReport};
use crate::vt::dozing::Dozing;
use crate::vt::events::{Query, Recorder, TermEvent};
use crate::vt::term::Term;

use super::acting::Acting;
use super::keeper::Keeper;
use super::output::{ConnId, Output};
use super::process::ProcessProbe;
use super::wakes::Wakes;
use crate::ended;

/// How long output must pause before the state is re-evaluated (and a
/// resting screen may sleep): the verdict is of a settled screen, not of
/// every read.
pub(super) const SETTLE: std::time::Duration = std::time::Duration::from_millis(50);

/// Output this soon after a resize, from a program that was idle, is its
/// redraw for the new size (the `agent` detector has its own rule)...
const RESIZE_REDRAW_MS: u64 = 1_000;

/// ...as far as this much of it: a redraw is a few screens at most. More
/// is work begun (a flood right after an attach was taken for a redraw
/// for a whole second: the session said idle, and every client that
/// asked was told so and asked again).
const RESIZE_REDRAW_BYTES: u64 = 256 * 1024;

#[derive(Debug)]
pub struct Shared {
    output: Output,
    classifier: Box<dyn StateClassifier>,
    clock: Clock,
    started_ms: u64,
    last_output_ms: Option<u64>,
    /// When output was last read, redraws too: what the state tracker
    /// reads while it waits for output to settle.
    last_read: Instant,
    /// Whether the tracker waits for output to settle: then it reads
    /// `last_read` when its timer runs out rather than being woken by
    /// every read, which cost a task's turn and a timer moved per key.
    settling: bool,
    /// When the session was last resized, and the ring's head then (see
    /// `note_output`).
    resized_ms: Option<(u64, u64)>,
    child_pid: u32,
    /// Set once the child has been reaped.
    exit_code: Option<i32>,
    /// When it was reaped (wall clock, ms): the session's end in its
    /// record, not the supervisor's, which may stay seconds more (for the
    /// output its descendants still write, for a launcher's attach).
    exited_unix_ms: Option<u64>,
    /// While the child is stopped by a signal: which, and since when.
    halted: Option<(nix::sys::signal::Signal, u64)>,
    /// A client asked for the stopped child to be continued; the main
    /// loop sends SIGCONT.
    continue_asked: bool,
    /// Set once every byte the child wrote has been read from the pty.
    output_closed: bool,
    size: Size,
    /// Connections that want an EXIT frame and have not had it yet.
    exit_waiters: usize,
    /// Whether the launcher's attach has subscribed, or a client asked
    /// for EXIT with its KILL (see `Options::await_attach`).
    end_awaited: bool,
    connections: usize,
    /// A pending kill: the grace period before SIGKILL, in ms.
    kill_requested: Option<u64>,
    default_grace_ms: u64,
    info: SessionInfo,
    /// The session's screen: an emulator that reads the same bytes as the
    /// ring and parses them when the screen is looked at, asleep while the
    /// session rests (see `rest`).
    screen: Dozing<Recorder>,
    /// A size the screen takes with the next byte of output (see
    /// `resized`).
    screen_size: Option<Size>,
    /// The `agent` classifier, when the session has it.
    detector: Option<Detector>,
    /// Where process facts come from, for the detector or the check of a
    /// plain program asking.
    process: Option<ProcessProbe>,
    /// Without the detector: the session's command, for that check
    /// (`None` for the `none` classifier, which infers nothing).
    plain: Option<crate::detect::plain::SessionCommand>,
    /// Since when that check has said the program asks.
    asking_since: Option<u64>,
    /// What the screen of a program that reads all the time (a REPL)
    /// showed it asking, and the ring's head and the size it was read
    /// at (see `printed_question`).
    printed_question: Option<(ScreenKey, Option<crate::detect::Signal>)>,
    /// The ring's head and the size when the detector last looked at the
    /// screen (see `verdict`).
    looked: Option<ScreenKey>,
    /// The dialog last read off the screen, and what it was read at (see
    /// `dialog_seen`).
    dialog_found: Option<(acting::DialogKey, Option<crate::detect::Dialog>)>,
    /// The plain check may take process facts read up to
    /// [`answers::FACTS_LAG`] ago (see [`Shared::facts_may_lag`]).
    facts_may_lag: bool,
    /// Subscribers whose terminal answers the program's queries itself
    /// ([`crate::protocol::SUBSCRIBE_TERMINAL`]); while there is none, the
    /// supervisor answers them from its screen.
    terminals: usize,
    /// Sizes asked for while a terminal was attached, by connections that
    /// were not one then, most recent last (see `hold_size`).
    held_sizes: Vec<(ConnId, Size)>,
    /// The attached terminals and the size each last asked for, the one
    /// that asked most recently last (see `add_terminal`).
    terminal_sizes: Vec<(ConnId, Option<Size>)>,
    /// Answers owed to the program, written to the pty by the reader.
    answers: Vec<u8>,
    /// The state last reported to subscribers that asked for pushes, and
    /// a number that grows with each change.
    report: Option<StateReport>,
    report_seq: u64,
    /// Grows with each change of what INFO says that is not live (the
    /// label): subscribers that asked for STATE frames are sent INFO anew.
    info_seq: u64,
    /// A move of the state found by a subscription, not by the tracker,
    /// and the primary state before it: the tracker's to announce (see
    /// `refresh_for_subscriber`).
    unannounced: Option<Option<crate::detect::Primary>>,
    next_conn: ConnId,
    /// Answers to dialogs: the automation rules, the dialog they watch,
    /// the log.
    acting: Acting,
    /// What is kept on disk for `hm restore`, if anything.
    keeper: Option<Keeper>,
    /// Whether a client asked for the end (KILL), and whether a signal
    /// told the supervisor to stop: how the session ended, for a restore.
    killed: bool,
    stopped: bool,
    /// Whether the program died of a signal, whoever sent it (a `kill`
    /// from another shell): its record says killed, not exited.
    signaled: bool,
    /// Who its changes wake.
    wakes: Wakes,
}

/// What INFO reports besides live values.
#[derive(Debug, Clone)]
pub struct SessionInfo {
    pub id: String,
    pub command: Vec<String>,
    pub workdir: String,
    pub supervisor_pid: u32,
    pub started_unix_ms: u64,
    pub classifier: &'static str,
    pub idle_threshold_ms: Option<u64>,
    /// A person's name for the session, besides its id.
    pub label: Option<String>,
}

/// What the screen shows can have changed only if one of these has: the
/// ring's head (output read since) and the size. What is read off the
/// screen is kept against it, so that a session at rest asked again (every
/// `hm ls`) does not wake its screen to read it as it was.
pub(super) type ScreenKey = (u64, Size);

impl Shared {
    /// The screen as things that read it are kept against (see
    /// [`ScreenKey`]).
    fn screen_key(&self) -> ScreenKey {
        (self.output.held().1, self.size)
    }

    pub fn new(
        scrollback: usize,
        classifier: Box<dyn StateClassifier>,
        clock: Clock,
        child_pid: u32,
        size: Size,
        default_grace_ms: u64,
        info: SessionInfo,
    ) -> Self {
        let started_ms = clock.now_ms();
        Shared {
            output: Output::new(scrollback, size, info.started_unix_ms),
            classifier,
            clock,
            started_ms,
            last_output_ms: None,
            last_read: clock.now(),
            settling: false,
            resized_ms: None,
            child_pid,
            exit_code: None,
            halted: None,
            continue_asked: false,
            output_closed: false,
            size,
            exit_waiters: 0,
            end_awaited: false,
            connections: 0,
            kill_requested: None,
            default_grace_ms,
            screen: Dozing::new(Term::with_callbacks(size, Recorder::default())),
            screen_size: None,
            info,
            detector: None,
            process: None,
            plain: None,
            asking_since: None,
            printed_question: None,
            looked: None,
            dialog_found: None,
            facts_may_lag: false,
            terminals: 0,
            held_sizes: Vec::new(),
            terminal_sizes: Vec::new(),
            answers: Vec::new(),
            report: None,
            report_seq: 0,
            info_seq: 0,
            unannounced: None,
            next_conn: 1,
            acting: Acting::default(),
            keeper: None,
            killed: false,
            stopped: false,
            signaled: false,
            exited_unix_ms: None,
            wakes: Wakes::default(),
        }
    }

    /// The signals this state's changes give (the tasks wait on them).
    pub fn wakes(&self) -> &Wakes {
        &self.wakes
    }

    /// The same, keeping its manifest and output for `hm restore`.
    pub fn with_keeper(mut self, keeper: Keeper) -> Self {
        self.keeper = Some(keeper);
        self
    }

    /// The same, answering dialogs by these `[[automation]]` rules.
    pub fn with_automation(mut self, rules: Vec<crate::config::AutomationRule>) -> Self {
        self.acting = Acting::new(rules);
        self
    }

    /// While `on`, the plain check (a program asking, without the `agent`
    /// classifier) may use process facts read up to
    /// [`answers::FACTS_LAG`] ago: for the state tracker's look while
    /// output still flows, every 150 ms, where reading `/proc` (a dozen
    /// system calls, ~50 µs) held up the keystroke that came meanwhile,
    /// one in a hundred. Once the output settles the look reads anew, so a
    /// state shown at rest never rests on old facts.
    pub fn facts_may_lag(&mut self, on: bool) {
        self.facts_may_lag = on;
    }

    /// While `on`, the processes are read once for everything asked (see
    /// [`ProcessProbe::hold`]).
    pub fn hold_facts(&self, on: bool) {
        if let Some(p) = &self.process {
            p.hold(on);
        }
    }

    /// Tells a program that asks (it reads its terminal and is not one
    /// that reads all the time) by its process: for sessions without the
    /// `agent` classifier.
    pub fn with_process_check(mut self, process: Option<ProcessProbe>) -> Self {
        self.plain = Some(crate::detect::plain::SessionCommand::of(&self.info.command));
        self.process = process;
        self
    }

    /// The same, classified by the `agent` classifier.
    pub fn with_detector(mut self, detector: Detector, process: Option<ProcessProbe>) -> Self {
        self.detector = Some(detector);
        self.process = process;
        self
    }

    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// What INFO reports that never changes.
    pub fn info(&self) -> &SessionInfo {
        &self.info
    }

    pub fn output(&self) -> &Output {
        &self.output
    }

    pub fn output_mut(&mut self) -> &mut Output {
        &mut self.output
    }

    /// Writes the new output of every subscriber whose connection waits
    /// with nothing owed (see [`Output::write_parked`]); true if one must
    /// still be woken.
    pub fn write_parked(&mut self) -> bool {
        let seq = self.report_seq;
        self.output
            .write_parked(seq, |sock, iov| crate::fd::write_some(sock, iov))
    }

    /// Reads at most `max` bytes of the program's output with `read`
    /// straight into the ring, and shows them to the screen and the
    /// classifier: bytes read, and how many `read` was offered.
    pub fn read_output(
        &mut self,
        max: usize,
        read: impl FnOnce(&mut [u8]) -> io::Result<usize>,
    ) -> io::Result<(usize, usize)> {
        let unix_ms = self.unix_ms();
        let (range, offered) = self.output.read(max, unix_ms, read)?;
        let n = (range.end - range.start) as usize;
        if n > 0 {
            let at = self.clock.now();
            self.note_output(range.start, range.end, at);
            self.last_read = at;
            if !self.settling {
                self.wakes.output_seen.notify_one();
            }
        }
        Ok((n, offered))
    }

    /// The state tracker begins (true) or ends waiting for output to
    /// settle: meanwhile reads do not wake it (see `last_read`).
    pub fn settling(&mut self, on: bool) {
        self.settling = on;
    }

    /// When output was last read.
    pub fn last_read(&self) -> Instant {
        self.last_read
    }

    /// Wall-clock time on the session's clock: its start plus the time
    /// since, so paused time in tests moves it too.
    fn unix_ms(&self) -> u64 {
        let since = self.clock.now_ms().saturating_sub(self.started_ms);
        self.info.started_unix_ms.saturating_add(since)
    }

    /// Takes the answers to the program's queries that are owed to it.
    pub fn take_answers(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.answers)
    }

    /// The program was reaped with `code` (128 + N if `signaled` by N):
    /// STATUS says dead from now on.
    pub fn record_exit(&mut self, code: i32, signaled: bool) {
        let now = self.clock.now_ms();
        self.exit_code = Some(code);
        self.exited_unix_ms = Some(crate::clock::unix_ms());
        self.signaled = signaled;
        self.classifier.set_dead(now);
        if let Some(d) = &mut self.detector {
            d.ended(now);
        }
        self.wakes.output_seen.notify_one();
    }

    /// The child stopped (`Some`, by that signal) or was continued.
    pub fn record_halt(&mut self, by: Option<nix::sys::signal::Signal>) {
        let now = self.clock.now_ms();
        self.halted = by.map(|sig| (sig, self.halted.map_or(now, |(_, since)| since)));
        self.wakes.output_seen.notify_one();
    }

    /// The signal that stopped the child and since when, while it is.
    pub fn halted(&self) -> Option<(nix::sys::signal::Signal, u64)> {
        self.halted.filter(|_| self.exit_code.is_none())
    }

    /// Asks the main loop to continue the program, which its state says
    /// is `stopped`: by a signal the kernel reported, or by its own word
    /// (Claude Code after Ctrl-Z, which the kernel did not stop, waits for
    /// SIGCONT all the same). Refused with why otherwise.
    pub fn ask_continue(&mut self, stopped: bool) -> Result<(), String> {
        if self.exit_code.is_some() {
            return Err("the program has ended".into());
        }
        if !stopped {
            return Err("the program is not stopped".into());
        }
        self.continue_asked = true;
        self.wakes.main.notify_one();
        Ok(())
    }

    /// Whether a continue was asked for since the last call.
    pub fn take_continue_request(&mut self) -> bool {
        std::mem::take(&mut self.continue_asked)
    }

    /// The program's exit code, once it has been reaped.
    pub fn exit_code(&self) -> Option<i32> {
        self.exit_code
    }

    pub fn has_ended(&self) -> bool {
        self.exit_code.is_some()
    }

    /// Whether the program in front is an interactive shell at its prompt
    /// (read from `/proc` now): one ignores SIGTERM, and only the SIGHUP a
    /// closed terminal sends ends it, so a kill waited out its whole grace
    /// period and ended it with SIGKILL. At its prompt it has nothing to
    /// lose.
    pub fn shell_at_prompt(&self) -> bool {
        let shell = crate::detect::plain::SessionCommand::of(&self.info.command).interactive_shell;
        self.process
            .as_ref()
            .and_then(crate::supervisor::process::ProcessProbe::facts)
            .is_some_and(|f| f.reading_terminal && crate::detect::plain::at_shell_prompt(shell, &f))
    }

    /// Every byte the program wrote has been read: nothing more will come.
    pub fn close_output(&mut self) {
        self.output_closed = true;
        self.wakes.main.notify_one();
    }

    /// The program has ended and all its output has been read.
    pub fn is_over(&self) -> bool {
        self.has_ended() && self.output_closed
    }

    /// A kill was asked for, with a grace period in ms or `None` for the
    /// configured one. Of several requests the shortest grace wins; one
    /// without a grace of its own does not shorten a pending one.
    pub fn request_kill(&mut self, grace_ms: Option<u64>) {
        self.killed = true;
        self.ask_kill(grace_ms);
    }

    fn ask_kill(&mut self, grace_ms: Option<u64>) {
        self.kill_requested = Some(match (self.kill_requested, grace_ms) {
            (Some(old), Some(new)) => old.min(new),
            (Some(old), None) => old,
            (None, g) => g.unwrap_or(self.default_grace_ms),
        });
        self.wakes.main.notify_one();
    }

    /// A signal asked the supervisor to stop: the configured grace, or a
    /// shorter one already pending.
    pub fn request_stop(&mut self) {
        self.stopped = true;
        self.ask_kill(Some(self.default_grace_ms));
    }

    /// Whether a signal asked the supervisor to stop the session.
    pub fn stop_requested(&self) -> bool {
        self.stopped
    }

    /// The grace of the kill asked for since the last call, if any.
    pub fn take_kill_request(&mut self) -> Option<u64> {
        self.kill_requested.take()
    }

    pub fn kill_requested(&self) -> bool {
        self.kill_requested.is_some()
    }

    /// Someone will see the session's end: the launcher's attach, or a
    /// KILL waiting for EXIT. True if nobody was awaiting it before.
    pub fn await_end(&mut self) -> bool {
        let first = !std::mem::replace(&mut self.end_awaited, true);
        if first {
            self.wakes.main.notify_one();
        }
        first
    }

    pub fn end_awaited(&self) -> bool {
        self.end_awaited
    }

    /// One more connection is owed an EXIT frame.
    pub fn await_exit(&mut self) {
        self.exit_waiters += 1;
    }

    /// A connection owed an EXIT frame had it, or is gone.
    pub fn exit_settled(&mut self) {
        self.exit_waiters = self.exit_waiters.saturating_sub(1);
        self.wakes.main.notify_one();
    }

    /// Whether any connection is still owed an EXIT frame.
    pub fn exits_owed(&self) -> bool {
        self.exit_waiters > 0
    }

    /// True when a subscriber has had every byte and the child's output is
    /// over, so its EXIT frame is due.
    pub fn exit_due(&self, id: ConnId) -> bool {
        self.is_over() && self.output.caught_up(id)
    }

    /// The state last reported (see [`Shared::refresh_report`]).
    pub fn reported(&self) -> Option<&StateReport> {
        self.report.as_ref()
    }

    /// Puts the screen to sleep while the session rests: its reported
    /// state idle or waiting, and its output settled. The emulator holds
    /// 32 bytes a cell (352 KiB at the default 220x50), most of an idle
    /// supervisor's memory; asleep, the screen is its rendering, a few
    /// KiB. The next output, resize or read wakes it. True if it sleeps.
    pub fn rest(&mut self) -> bool {
        self.at_rest() && self.output_settled() && self.screen.sleep()
    }

    /// Whether no output has come for [`SETTLE`] (or none ever came).
    pub fn output_settled(&self) -> bool {
        let now = self.clock.now_ms();
        self.last_output_ms
            .is_none_or(|t| now.saturating_sub(t) >= SETTLE.as_millis() as u64)
    }

    /// Whether the reported state is one of rest: idle or waiting.
    pub fn at_rest(&self) -> bool {
        self.report.as_ref().is_some_and(|r| {
            matches!(
                r.primary,
                crate::detect::Primary::Idle | crate::detect::Primary::Waiting
            )
        })
    }

    /// Whether the screen sleeps (see [`Shared::rest`]).
    #[cfg(test)]
    pub fn screen_asleep(&self) -> bool {
        self.screen.asleep()
    }

    /// Grows by one with each change of the reported state.
    pub fn report_seq(&self) -> u64 {
        self.report_seq
    }

    /// Grows by one with each new label (see `Shared::relabel`).
    pub fn info_seq(&self) -> u64 {
        self.info_seq
    }

    /// INFO as it says a new label: the answer to LABEL, and what is told
    /// to the subscribers that follow the state.
    pub fn relabelled_info(&mut self) -> crate::protocol::Info {
        crate::protocol::Info {
            relabelled: true,
            ..self.info_answer()
        }
    }

    /// A person renamed the session (LABEL; `None`: no label now). What
    /// `hm restore` keeps and the record of its end say it from now on,
    /// and subscribers that follow its state are sent INFO with it.
    /// False when it was already so.
    pub fn relabel(&mut self, label: Option<String>) -> bool {
        if self.info.label == label {
            return false;
        }
        if let Some(k) = &mut self.keeper {
            k.relabelled(label.clone());
        }
        self.info.label = label;
        self.info_seq += 1;
        // The manifest is written by the tracker, woken for it.
        self.wakes.look.notify_one();
        true
    }

    /// What is left of the session once it is over, for `hm ls`,
    /// `hm status` and `hm restart`; `code` if the program was not reaped.
    pub fn ended_record(&mut self, code: i32, ended_unix_ms: u64) -> ended::Ended {
        let i = &self.info;
        ended::Ended {
            id: i.id.clone(),
            command: i.command.clone(),
            workdir: i.workdir.clone(),
            classifier: i.classifier.to_owned(),
            started_unix_ms: i.started_unix_ms,
            ended_unix_ms: self.exited_unix_ms.unwrap_or(ended_unix_ms),
            exit_code: self.exit_code.unwrap_or(code),
            // A full-screen program's last screen is part of its end
            // (Claude Code's conversation, left as it exits).
            last_lines: ended::last_lines(&self.screen.term().contents_with_left()),
            label: i.label.clone(),
            cols: self.size.cols,
            rows: self.size.rows,
            // A signal the supervisor sent as it was told to stop (a
            // shutdown: the session is lost, for `hm restore`) is not
            // someone killing the program.
            killed: self.killed || (self.signaled && !self.stopped),
        }
    }

    /// Records bytes just committed to the ring: the classifier and the
    /// screen see them (the screen parses them when it must: see
    /// [`Dozing::skim`]), and queries nobody else will answer are answered;
    /// `at`, when they were read, is the one reading of the clock a read
    /// takes.
    fn note_output(&mut self, from: u64, to: u64, at: Instant) {
        let now = self.clock.ms_at(at);
        if let Some(k) = &mut self.keeper {
            k.output(to);
        }
        // An idle program redrawing for a new size (a dashboard's layout
        // changed) has not done anything: its timing classifier does not
        // see the redraw, and its idle time keeps counting.
        let redraw = self.resized_ms.is_some_and(|(t, head)| {
            now.saturating_sub(t) < RESIZE_REDRAW_MS
                && to.saturating_sub(head) <= RESIZE_REDRAW_BYTES
        }) && self.classifier.state() == crate::classify::ProcessState::Idle;
        if !redraw {
            self.last_output_ms = Some(now);
        }
        // Field by field: the chunks borrow the ring while the rest moves.
        let Shared {
            output,
            classifier,
            screen,
            screen_size,
            detector,
            process,
            answers,
            terminals,
            ..
        } = self;
        let Some((a, b)) = output.slices(from, to) else {
            return;
        };
        if let Some(size) = screen_size.take() {
            screen.term().resize(size);
        }
        // One record per read, as the classifiers expect; a read never
        // wraps the ring (see `Ring::spare`), so `b` is empty.
        for chunk in [a, b] {
            if chunk.is_empty() {
                continue;
            }
            if !redraw {
                classifier.record(chunk, now);
            }
            // Read, and parsed only as far as it must be now: a query to
            // answer, a title or a bell for the detector. The rest waits
            // until the screen is looked at (`Dozing::term`).
            screen.skim(chunk);
            if !screen.callbacks_mut().is_empty() {
                let events = screen.callbacks_mut().take();
                // Whose status probe or record this is: the process in
                // front of the terminal now, read before the detector
                // takes either.
                if let Some(d) = detector.as_mut()
                    && d.settings().process_evidence
                    && events.iter().any(|e| {
                        matches!(
                            e,
                            TermEvent::StatusRecord(_) | TermEvent::Query(Query::StatusProtocol)
                        )
                    })
                    && let Some(facts) = process.as_ref().and_then(ProcessProbe::facts)
                {
                    d.process(facts, now);
                }
                for event in events {
                    if let TermEvent::Query(query) = &event
                        && let Some(answer) = query.answer()
                    {
                        // The status probe is answered here whether or not
                        // a terminal is attached (attached clients drop it,
                        // see INFO's `status_protocol`), and at once: its
                        // answer must reach the program before the answer
                        // to the device-attributes query that follows it.
                        let ours = match query {
                            Query::StatusProtocol => detector
                                .as_ref()
                                .is_some_and(|d| d.settings().status_protocol),
                            _ => *terminals == 0,
                        };
                        if ours {
                            answers.extend_from_slice(&answer);
                        }
                    }
                    if let Some(d) = detector.as_mut() {
                        d.event(&event, now);
                    }
                }
            }
            if let Some(d) = detector.as_mut() {
                d.output(chunk, now);
            }
        }
    }

    /// A hook report for the detector (sessions without one ignore it).
    pub fn hook_report(&mut self, report: &crate::detect::hooks::Report) {
        let now = self.clock.now_ms();
        if let Some(d) = &mut self.detector {
            d.hook(report, now);
        }
        // The conversation a restore resumes, named by the agent's hook.
        if let (Some(k), Some(agent), Some(id)) = (
            &mut self.keeper,
            crate::agent_hooks::Agent::from_name(&report.agent),
            report
                .session
                .as_deref()
                .and_then(crate::detect::hooks::conversation_id),
        ) {
            k.conversation(agent.name(), &id);
        }
        self.wakes.output_seen.notify_one();
    }

    /// The session was resized: the journal records it where the next
    /// byte will go, the screen takes it with that byte, and the redraw
    /// that answers it is not work. Sizes with no output between them are
    /// one for the journal, so they are one for the screen too: it goes
    /// through exactly the sizes a replay with the journal does.
    pub fn resized(&mut self, size: Size) {
        self.size = size;
        let unix_ms = self.unix_ms();
        self.output.resized(size, unix_ms);
        if let Some(k) = &mut self.keeper {
            k.resized(size);
        }
        self.screen_size = Some(size);
        let now = self.clock.now_ms();
        self.resized_ms = Some((now, self.output.held().1));
        if let Some(d) = &mut self.detector {
            d.resized(now);
        }
        self.acting.resized(now);
        self.wakes.output_seen.notify_one();
    }

    /// A client typed into the session: what it prints from now on
    /// answers the keys, not the last resize, so it is work. A person
    /// who focuses a pane in the dashboard (which resizes its session)
    /// and types at once saw the output of the command typed not count,
    /// its idle time going on from before.
    pub fn typed(&mut self) {
        // The detector's grace for the redraw goes too: the trial saw the
        // state's time go on (`idle · ready 29s` just after `echo hi`),
        // the detector not seeing the output. And it learns that what
        // the agent does next is a turn someone asked for.
        if let Some(d) = &mut self.detector {
            d.typed();
        }
        if self.resized_ms.take().is_some() {
            self.acting.typed();
        }
    }
}

#[cfg(test)]
impl Shared {
    /// A session of `sh` under the `simple` classifier keeping
    /// `scrollback` bytes, at `size`: the state the unit tests work on.
    pub(crate) fn for_test(scrollback: usize, size: Size) -> Shared {
        let info = SessionInfo {
            id: "s".into(),
            command: vec!["sh".into()],
            workdir: "/".into(),
            supervisor_pid: 1,
            started_unix_ms: 0,
            classifier: "simple",
            idle_threshold_ms: Some(3000),
            label: None,
        };
        let classifier = crate::classify::ClassifierSpec::default().build(0);
        Shared::new(scrollback, classifier, Clock::new(), 0, size, 1000, info)
    }
}
