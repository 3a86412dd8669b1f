//! When to ask a session for its state: the one status-polling state
//! machine of `hm attach` and the dashboard.
//!
//! STATE pushes say when the state changes, but the timers (idle for, in
//! this state for) and the `simple` classifier's drift to idle are only
//! known by asking (STATUS). Asking after every chunk of output would cost
//! a round trip per chunk, so a session is asked
//!
//! - when output comes and the state shown is idle (work has begun), or at
//!   most once a [`POLL_EVERY`] while output flows;
//! - once output has stopped for [`SETTLED_AFTER`], when a question was
//!   answered while it came (that answer was of a screen still moving);
//! - when the silence since its last output would reach its idle threshold
//!   (it may have gone idle), a little after, so that the answer is past
//!   the classifier's own threshold;
//! - when keys are typed into it and nothing was heard since the last keys
//!   (is it still answering?), or a quiet [`POLL_EVERY`] has passed.
//!
//! One question is in flight at a time; one unanswered for
//! [`ANSWER_TIMEOUT`] makes the session unresponsive until it answers.
//! Pure: time is passed in, the caller sends STATUS when told to.

use std::time::{Duration, Instant};

use crate::classify::ProcessState;
use crate::protocol::Status;

use super::ANSWER_TIMEOUT;

/// While output flows, a session's state is asked at most this often.
pub const POLL_EVERY: Duration = Duration::from_secs(1);

/// When a question output caused is answered idle all the same (a program
/// redrawing for its new size, which the session does not count as work),
/// output asks again at most this often. Asked on every output, a flood right
/// after attaching cost the supervisor a STATUS per frame it sent: a
/// quarter of its time.
pub const IDLE_ASK_EVERY: Duration = Duration::from_millis(100);

/// How long after the idle threshold is reached the session is asked: the
/// classifier turns idle at its threshold, and an answer just before it
/// would say "active" and cost another round.
pub const IDLE_MARGIN: Duration = Duration::from_millis(100);

/// How long after output stops a question answered while it came is
/// asked again. An answer of the moment can be "active" for a shell whose
/// prompt is about to come back, and "idle" with the timer of the prompt
/// before; the supervisor settles 50 to 150 ms after output, and pushes
/// nothing when the settled state is the one it last pushed, so without
/// this the bar and the panes kept that answer until the idle threshold
/// (a timer saying "idle 1m06s" for a shell that just ran a command).
pub const SETTLED_AFTER: Duration = Duration::from_millis(300);

#[derive(Debug, Clone)]
pub struct StatusPoll {
    idle_threshold: Duration,
    in_flight: bool,
    last_asked: Option<Instant>,
    /// When to ask whether the session went idle.
    idle_check: Option<Instant>,
    /// When to ask again after output stopped (see [`SETTLED_AFTER`]).
    settled_check: Option<Instant>,
    /// A question was asked since output last stopped.
    asked_while_output: bool,
    unresponsive: bool,
    /// Something came from the session since the last keys were typed.
    heard_since_keys: bool,
    /// The question in flight (or the last one) was asked because output
    /// came while the state shown was idle.
    asked_on_output: bool,
    /// Such a question was answered idle: output is not taken for work.
    idle_despite_output: bool,
}

impl StatusPoll {
    pub fn new(idle_threshold: Duration) -> Self {
        StatusPoll {
            idle_threshold,
            in_flight: false,
            last_asked: None,
            idle_check: None,
            settled_check: None,
            asked_while_output: false,
            unresponsive: false,
            heard_since_keys: true,
            asked_on_output: false,
            idle_despite_output: false,
        }
    }

    /// The session's idle threshold, as its INFO says.
    pub fn set_idle_threshold(&mut self, threshold: Duration) {
        self.idle_threshold = threshold;
    }

    /// The session's idle threshold, as last heard.
    pub fn idle_threshold(&self) -> Duration {
        self.idle_threshold
    }

    /// A STATUS has been sent (the opening frames carry one).
    pub fn asked(&mut self, now: Instant) {
        self.in_flight = true;
        self.last_asked = Some(now);
        self.asked_on_output = false;
    }

    /// Whether to send STATUS now (nothing is in flight); if so it counts
    /// as sent.
    pub fn ask(&mut self, now: Instant) -> bool {
        if self.in_flight {
            return false;
        }
        self.asked(now);
        true
    }

    /// Anything came from the session.
    pub fn heard(&mut self) {
        self.heard_since_keys = true;
    }

    /// Output came; `shown_idle`: the state shown is idle (or none yet).
    /// True when STATUS is to be sent now.
    pub fn output(&mut self, now: Instant, shown_idle: bool) -> bool {
        self.heard();
        self.idle_check = Some(now + self.idle_threshold + IDLE_MARGIN);
        let since = |every| self.last_asked.is_none_or(|t| now >= t + every);
        let idle_ask = shown_idle && (!self.idle_despite_output || since(IDLE_ASK_EVERY));
        let ask = (idle_ask || since(POLL_EVERY)) && self.ask(now);
        if ask {
            self.asked_on_output = shown_idle;
        }
        // Moved on by every output, so a session streaming without a
        // pause is not asked by it; once per burst otherwise.
        self.asked_while_output |= ask || self.in_flight;
        if self.asked_while_output {
            self.settled_check = Some(now + SETTLED_AFTER);
        }
        ask
    }

    /// The answer came; `busy`: the state shown now may still turn idle by
    /// itself ([`is_busy`] of its state). A busy session is asked again
    /// when its silence so far would reach the idle threshold, rather than
    /// a full threshold after the question.
    pub fn answered(&mut self, now: Instant, status: &Status, busy: bool) {
        self.heard();
        self.idle_despite_output =
            self.asked_on_output && status.state == ProcessState::Idle.as_byte();
        self.in_flight = false;
        self.unresponsive = false;
        if busy {
            let silent = Duration::from_millis(u64::from(status.idle_ms));
            let at = now + self.idle_threshold.saturating_sub(silent) + IDLE_MARGIN;
            self.idle_check = Some(self.idle_check.map_or(at, |t| t.min(at)));
        }
    }

    /// Keys were sent to the session. True when STATUS is to be sent now.
    pub fn keys(&mut self, now: Instant) -> bool {
        let quiet = self.last_asked.is_none_or(|t| now >= t + POLL_EVERY);
        let ask = (!self.heard_since_keys || quiet) && self.ask(now);
        self.heard_since_keys = false;
        ask
    }

    /// The next moment [`tick`](Self::tick) has something to do.
    pub fn next_due(&self) -> Option<Instant> {
        [self.idle_check, self.settled_check, self.answer_due()]
            .into_iter()
            .flatten()
            .min()
    }

    /// When an unanswered question makes the session unresponsive.
    pub fn answer_due(&self) -> Option<Instant> {
        self.last_asked
            .filter(|_| self.in_flight && !self.unresponsive)
            .map(|t| t + ANSWER_TIMEOUT)
    }

    /// Time has come to `now`: whether to send STATUS, and whether the
    /// session just became unresponsive.
    pub fn tick(&mut self, now: Instant) -> Tick {
        let mut t = Tick::default();
        if self.answer_due().is_some_and(|due| now >= due) {
            self.unresponsive = true;
            t.went_silent = true;
        }
        if self.idle_check.is_some_and(|due| now >= due) {
            self.idle_check = None;
            t.ask = self.ask(now);
        }
        if self.settled_check.is_some_and(|due| now >= due) {
            self.settled_check = None;
            self.asked_while_output = false;
            // One in flight was asked after the output stopped: its answer
            // is of the settled screen.
            t.ask |= self.ask(now);
        }
        t
    }

    /// A question has gone unanswered for [`ANSWER_TIMEOUT`].
    pub fn unresponsive(&self) -> bool {
        self.unresponsive
    }

    /// The connection is new (or back): nothing is in flight on it.
    pub fn reset(&mut self) {
        *self = StatusPoll::new(self.idle_threshold);
    }

    /// When it will next ask without being told of output or keys:
    /// whether the session went idle, or how it settled after output.
    pub fn idle_check(&self) -> Option<Instant> {
        [self.idle_check, self.settled_check]
            .into_iter()
            .flatten()
            .min()
    }

    /// Forget the checks (the session ended, say).
    pub fn clear_idle_check(&mut self) {
        self.idle_check = None;
        self.settled_check = None;
    }
}

/// What [`StatusPoll::tick`] found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tick {
    /// Send STATUS now.
    pub ask: bool,
    /// The session just became unresponsive.
    pub went_silent: bool,
}

/// States in which a session may still go idle by itself.
pub fn is_busy(state: u8) -> bool {
    matches!(
        ProcessState::from_byte(state),
        Some(
            ProcessState::Thinking
                | ProcessState::Streaming
                | ProcessState::ToolUse
                | ProcessState::Active
                | ProcessState::Stuck
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const THRESHOLD: Duration = Duration::from_secs(3);

    fn ms(t0: Instant, n: u64) -> Instant {
        t0 + Duration::from_millis(n)
    }

    fn status(state: ProcessState, idle_ms: u32) -> Status {
        Status {
            pid: 1,
            idle_ms,
            alive: true,
            state: state.as_byte(),
            state_ms: 0,
        }
    }

    #[test]
    fn output_asks_at_once_when_idle_and_at_most_once_a_second_while_busy() {
        let t0 = Instant::now();
        let mut p = StatusPoll::new(THRESHOLD);
        assert!(p.output(t0, true), "work began");
        assert!(!p.output(ms(t0, 10), true), "one question at a time");
        p.answered(
            ms(t0, 20),
            &status(ProcessState::Active, 0),
            is_busy(ProcessState::Active.as_byte()),
        );
        assert!(!p.output(ms(t0, 500), false));
        assert!(p.output(ms(t0, 1000), false));
    }

    #[test]
    fn output_while_the_answers_still_say_idle_asks_a_few_times_a_second() {
        let t0 = Instant::now();
        let mut p = StatusPoll::new(THRESHOLD);
        // Asked at the start (no output), answered idle: output asks.
        p.asked(t0);
        p.answered(ms(t0, 1), &status(ProcessState::Idle, 0), false);
        assert!(p.output(ms(t0, 2), true), "work may have begun");
        // Answered idle all the same: not at every frame after.
        p.answered(ms(t0, 3), &status(ProcessState::Idle, 0), false);
        assert!(!p.output(ms(t0, 4), true), "not at every frame");
        assert!(!p.output(ms(t0, 101), true));
        assert!(p.output(ms(t0, 102), true));
    }

    #[test]
    fn a_busy_session_is_asked_when_its_silence_reaches_the_threshold() {
        let t0 = Instant::now();
        let mut p = StatusPoll::new(THRESHOLD);
        assert!(p.output(t0, true));
        // The question about the output's settling finds the first one
        // still out.
        assert_eq!(p.tick(t0 + SETTLED_AFTER), Tick::default());
        // Silent for 1 s already when it answers: 2 s (and the margin) left.
        p.answered(
            ms(t0, 1000),
            &status(ProcessState::Active, 1000),
            is_busy(ProcessState::Active.as_byte()),
        );
        assert_eq!(p.next_due(), Some(ms(t0, 3000) + IDLE_MARGIN));
        assert_eq!(p.tick(ms(t0, 3000)), Tick::default());
        assert_eq!(
            p.tick(ms(t0, 3100)),
            Tick {
                ask: true,
                went_silent: false
            }
        );
        // An idle answer schedules nothing.
        p.answered(
            ms(t0, 3110),
            &status(ProcessState::Idle, 3110),
            is_busy(ProcessState::Idle.as_byte()),
        );
        assert_eq!(p.next_due(), None);
    }

    #[test]
    fn an_unanswered_question_makes_the_session_unresponsive_until_it_answers() {
        let t0 = Instant::now();
        let mut p = StatusPoll::new(THRESHOLD);
        p.asked(t0);
        assert_eq!(p.next_due(), Some(t0 + ANSWER_TIMEOUT));
        assert!(
            !p.tick(t0 + ANSWER_TIMEOUT - Duration::from_millis(1))
                .went_silent
        );
        assert!(p.tick(t0 + ANSWER_TIMEOUT).went_silent);
        assert!(p.unresponsive());
        assert!(!p.tick(t0 + ANSWER_TIMEOUT * 2).went_silent, "said once");
        p.answered(
            ms(t0, 9000),
            &status(ProcessState::Idle, 0),
            is_busy(ProcessState::Idle.as_byte()),
        );
        assert!(!p.unresponsive());
    }

    #[test]
    fn keys_ask_whether_the_session_still_answers() {
        let t0 = Instant::now();
        let mut p = StatusPoll::new(THRESHOLD);
        p.asked(t0);
        p.answered(
            ms(t0, 5),
            &status(ProcessState::Idle, 0),
            is_busy(ProcessState::Idle.as_byte()),
        );
        // Heard from since the last keys and asked recently: no question.
        assert!(!p.keys(ms(t0, 100)));
        // Nothing heard since those keys: ask.
        assert!(p.keys(ms(t0, 200)));
        // A quiet second later, ask even after an answer.
        p.answered(
            ms(t0, 210),
            &status(ProcessState::Idle, 0),
            is_busy(ProcessState::Idle.as_byte()),
        );
        assert!(p.keys(ms(t0, 1300)));
    }

    #[test]
    fn a_question_answered_while_output_came_is_asked_again_once_it_stops() {
        let t0 = Instant::now();
        let idle = status(ProcessState::Idle, 0);
        let mut p = StatusPoll::new(THRESHOLD);
        p.asked(t0);
        p.answered(ms(t0, 1), &idle, false);
        // A command's echo is asked about and answered idle, the screen
        // still moving; its output, too soon after, is not asked about.
        assert!(p.output(ms(t0, 1000), true));
        p.answered(ms(t0, 1001), &idle, false);
        assert!(!p.output(ms(t0, 1050), true));
        let settled = ms(t0, 1050) + SETTLED_AFTER;
        assert_eq!(p.next_due(), Some(settled));
        assert!(!p.tick(settled - Duration::from_millis(1)).ask);
        assert!(p.tick(settled).ask, "asked once the output has stopped");
        p.answered(settled, &idle, false);
        // Once: what is left is the idle threshold's check.
        assert_eq!(p.next_due(), Some(ms(t0, 1050) + THRESHOLD + IDLE_MARGIN));
    }

    #[test]
    fn output_without_a_pause_moves_the_settled_question_on() {
        let t0 = Instant::now();
        let mut p = StatusPoll::new(THRESHOLD);
        assert!(p.output(t0, true));
        let active = status(ProcessState::Active, 0);
        p.answered(ms(t0, 1), &active, true);
        for i in 1..=25 {
            let now = ms(t0, i * 100);
            if p.output(now, false) {
                p.answered(now, &active, true);
            }
            assert!(!p.tick(now).ask, "asked at {i}00 ms while output flows");
        }
        assert_eq!(p.next_due(), Some(ms(t0, 2500) + SETTLED_AFTER));
    }

    #[test]
    fn output_with_no_question_about_it_asks_nothing_more() {
        let t0 = Instant::now();
        let mut p = StatusPoll::new(THRESHOLD);
        let active = status(ProcessState::Active, 0);
        assert!(p.output(t0, true));
        p.answered(ms(t0, 1), &active, true);
        let settled = t0 + SETTLED_AFTER;
        assert!(p.tick(settled).ask);
        p.answered(settled, &active, true);
        // Shown busy, within a second of the last question: output is not
        // asked about, nor its settling.
        assert!(!p.output(ms(t0, 500), false));
        assert_eq!(p.next_due(), Some(ms(t0, 500) + THRESHOLD + IDLE_MARGIN));
    }
}
