//! The `claude` classifier: guesses what Claude Code is doing from the rhythm
//! of its output.
//!
//! It owns a fixed window of the last 20 reads (size and time, never the
//! bytes), the committed state, and at most one pending state waiting out
//! the debounce. `record` runs on every pty read, so it must not allocate
//! or do more than a constant amount of work: the window is a fixed array
//! used as a ring, and the statistics look at no more than 10 entries.
//!
//! Each call first classifies the window as it stands (the *raw* state, see
//! `Claude::classify`) and then decides whether to commit it: `Idle` is
//! committed at once because silence is unambiguous, any other change must
//! be seen again `debounce_ms` after it first appeared, so a single odd
//! read does not make the state flicker.

use super::{ProcessState, StateClassifier};

/// How many reads the window remembers.
const WINDOW: usize = 20;
/// Bursts (large reads, pause-then-burst) are looked for among this many of
/// the latest reads.
const BURST_LOOKBACK: usize = 5;
/// A read larger than this is a tool's output (a file, a diff, a command's
/// result) rather than typed-out text. The spec says ">4KB", so exactly
/// 4096 bytes does not count; note that a read into a 4096-byte buffer can
/// then never trigger this rule on its own.
const BIG_BURST_LEN: u64 = 4096;
/// A read arriving more than this long after the previous one...
const PAUSE_MS: u64 = 200;
/// ...and larger than this is a tool's output appearing after it ran.
const PAUSE_BURST_LEN: u64 = 1024;
/// Below this many reads in the window there is too little to go on, and
/// fresh output most likely means the model has started working.
const MIN_EVENTS: usize = 3;
/// The rhythm statistics use at most this many of the latest reads...
const STATS_LOOKBACK: usize = 10;
/// ...and need at least this many to mean anything.
const STATS_MIN: usize = 5;

/// One read: how many bytes, and when.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Event {
    len: u64,
    at_ms: u64,
}

/// The last [`WINDOW`] reads, in a fixed array used as a ring so that
/// recording never allocates.
#[derive(Debug, Clone)]
struct Window {
    events: [Event; WINDOW],
    /// Where the next event goes.
    next: usize,
    len: usize,
}

impl Window {
    fn new() -> Self {
        Self {
            events: [Event::default(); WINDOW],
            next: 0,
            len: 0,
        }
    }

    fn push(&mut self, event: Event) {
        self.events[self.next] = event;
        self.next = (self.next + 1) % WINDOW;
        self.len = (self.len + 1).min(WINDOW);
    }

    fn len(&self) -> usize {
        self.len
    }

    /// The `i`th remembered event, oldest first; `i` must be below `len`.
    fn get(&self, i: usize) -> Event {
        self.events[(self.next + WINDOW - self.len + i) % WINDOW]
    }

    fn last(&self) -> Option<Event> {
        self.len.checked_sub(1).map(|i| self.get(i))
    }

    /// Positions of the latest `n` events (fewer if there are fewer).
    fn latest(&self, n: usize) -> std::ops::Range<usize> {
        self.len.saturating_sub(n)..self.len
    }

    /// Time from event `i - 1` to event `i`; a clock that went backwards
    /// gives 0 rather than a huge gap.
    fn gap_before(&self, i: usize) -> Option<u64> {
        let prev = self.get(i.checked_sub(1)?);
        Some(self.get(i).at_ms.saturating_sub(prev.at_ms))
    }
}

/// The shape of the latest few reads.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Rhythm {
    mean_len: f64,
    /// Population standard deviation of the read sizes.
    stddev_len: f64,
    mean_gap_ms: f64,
}

impl Rhythm {
    /// The rhythm of the latest [`STATS_LOOKBACK`] reads, or `None` with
    /// fewer than [`STATS_MIN`].
    fn of(window: &Window) -> Option<Self> {
        let range = window.latest(STATS_LOOKBACK);
        let n = range.len();
        if n < STATS_MIN {
            return None;
        }
        // f64 cannot overflow here: even ten reads of `u64::MAX` bytes
        // square to about 1e39, far below f64's range.
        let count = n as f64;
        let mean_len = range.clone().map(|i| window.get(i).len as f64).sum::<f64>() / count;
        let variance = range
            .clone()
            .map(|i| (window.get(i).len as f64 - mean_len).powi(2))
            .sum::<f64>()
            / count;
        // The first read's gap is to an event outside the sample, so the
        // mean is over the n - 1 gaps inside it.
        let mean_gap_ms = range
            .skip(1)
            .filter_map(|i| window.gap_before(i))
            .map(|gap| gap as f64)
            .sum::<f64>()
            / (count - 1.0);
        let rhythm = Self {
            mean_len,
            stddev_len: variance.max(0.0).sqrt(),
            mean_gap_ms,
        };
        // Defensive: a NaN would make every comparison below false and
        // silently pick the fallback; say so explicitly instead.
        [rhythm.mean_len, rhythm.stddev_len, rhythm.mean_gap_ms]
            .iter()
            .all(|x| x.is_finite())
            .then_some(rhythm)
    }

    /// `Thinking` for a spinner, `Streaming` for text being written out,
    /// `None` when the rhythm is neither.
    fn pattern(&self) -> Option<ProcessState> {
        // A spinner redraws a short, nearly constant-size frame at a steady
        // pace.
        let spinner = (40.0..=120.0).contains(&self.mean_len)
            && self.stddev_len < 30.0
            && (30.0..=200.0).contains(&self.mean_gap_ms);
        // Streamed text comes fast, in reads that are large or vary a lot.
        let streaming =
            (self.mean_len > 100.0 || self.stddev_len > 50.0) && self.mean_gap_ms < 200.0;
        if spinner {
            Some(ProcessState::Thinking)
        } else if streaming {
            Some(ProcessState::Streaming)
        } else {
            None
        }
    }
}

/// A raw state seen but not yet committed, and when it was first seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pending {
    state: ProcessState,
    since_ms: u64,
}

/// Output-rhythm classifier tuned for Claude Code. Reports `Idle`,
/// `Thinking`, `Streaming`, `ToolUse` and `Dead`; never `Active`.
///
/// Like `simple`, it dates each state from when the program changed rather
/// than from when it was noticed: `Idle` from `last read + threshold`, and a
/// debounced state from when it was first seen, not from when the debounce
/// let it through.
#[derive(Debug, Clone)]
pub struct Claude {
    idle_threshold_ms: u64,
    debounce_ms: u64,
    window: Window,
    state: ProcessState,
    entered_at_ms: u64,
    pending: Option<Pending>,
}

impl Claude {
    /// A classifier for a session that started at `now_ms`. It starts `Idle`:
    /// a program that has written nothing is, as far as we can see, silent.
    pub fn new(idle_threshold_ms: u64, debounce_ms: u64, now_ms: u64) -> Self {
        Self {
            idle_threshold_ms,
            debounce_ms,
            window: Window::new(),
            state: ProcessState::Idle,
            entered_at_ms: now_ms,
            pending: None,
        }
    }

    /// `record` with only the length, so tests (and the fuzz target) can
    /// feed sizes no real slice could have.
    pub(crate) fn record_len(&mut self, len: usize, now_ms: u64) {
        // An empty read carries no output (it is how EOF looks): it must not
        // enter the window, where it would read as a tiny burst.
        if len == 0 || self.state == ProcessState::Dead {
            self.tick(now_ms);
            return;
        }
        // First settle the window as it stood: if the program went silent
        // and nobody asked, it was still idle from `last + threshold`, and
        // that must be committed before this read starts a new burst. It
        // also makes the outcome the same whether or not a STATUS query
        // happened just before this read.
        self.settle(now_ms);
        self.window.push(Event {
            len: u64::try_from(len).unwrap_or(u64::MAX),
            at_ms: now_ms,
        });
        self.settle(now_ms);
    }

    /// The raw state of the window at `now_ms`, before debouncing. The rules
    /// are tried in order and the first that matches wins.
    fn classify(&self, now_ms: u64) -> ProcessState {
        // 1. Silence, including no output at all yet.
        let Some(last) = self.window.last() else {
            return ProcessState::Idle;
        };
        if now_ms.saturating_sub(last.at_ms) >= self.idle_threshold_ms {
            return ProcessState::Idle;
        }
        // 2. A large read among the latest few.
        if self
            .window
            .latest(BURST_LOOKBACK)
            .any(|i| self.window.get(i).len > BIG_BURST_LEN)
        {
            return ProcessState::ToolUse;
        }
        // 3. Too few reads for a pattern.
        if self.window.len() < MIN_EVENTS {
            return ProcessState::Thinking;
        }
        // 4. A sizeable read after a pause. The oldest remembered read has
        //    no known predecessor, so it cannot count as after a pause.
        if self.window.latest(BURST_LOOKBACK).any(|i| {
            self.window.get(i).len > PAUSE_BURST_LEN
                && self.window.gap_before(i).is_some_and(|gap| gap > PAUSE_MS)
        }) {
            return ProcessState::ToolUse;
        }
        // 5. Spinner or streaming rhythm; 6. otherwise the program is busy
        //    but in no way we recognise, which for Claude Code is most
        //    likely thinking.
        Rhythm::of(&self.window)
            .and_then(|r| r.pattern())
            .unwrap_or(ProcessState::Thinking)
    }

    /// When the current silence became `Idle`, for a window with output.
    fn idle_since(&self, now_ms: u64) -> u64 {
        self.window
            .last()
            .map_or(now_ms, |e| e.at_ms.saturating_add(self.idle_threshold_ms))
    }

    /// Classify at `now_ms` and commit or defer the result.
    fn settle(&mut self, now_ms: u64) {
        if self.state == ProcessState::Dead {
            return;
        }
        let raw = self.classify(now_ms);
        self.debounce(raw, now_ms);
    }

    /// Commit `raw` now (`Idle`), once it has held for `debounce_ms` (any
    /// other change), or drop a pending change that did not last.
    fn debounce(&mut self, raw: ProcessState, now_ms: u64) {
        if raw == self.state {
            // Back to where we were: whatever was pending was a flicker.
            self.pending = None;
            return;
        }
        if raw == ProcessState::Idle {
            self.pending = None;
            self.enter(ProcessState::Idle, self.idle_since(now_ms));
            return;
        }
        let since_ms = match self.pending {
            Some(p) if p.state == raw && p.since_ms <= now_ms => p.since_ms,
            // New, or different from what was pending: start over. So too
            // if the clock went back past the pending change: waiting for
            // the old timeline to catch up could hold it back indefinitely.
            _ => {
                self.pending = Some(Pending {
                    state: raw,
                    since_ms: now_ms,
                });
                now_ms
            }
        };
        // Checked even for a change first seen now, so that a debounce of
        // zero means no debounce at all.
        if now_ms.saturating_sub(since_ms) >= self.debounce_ms {
            self.pending = None;
            self.enter(raw, since_ms);
        }
    }

    fn enter(&mut self, state: ProcessState, at_ms: u64) {
        self.state = state;
        self.entered_at_ms = at_ms;
    }
}

impl StateClassifier for Claude {
    fn record(&mut self, chunk: &[u8], now_ms: u64) {
        self.record_len(chunk.len(), now_ms);
    }

    fn tick(&mut self, now_ms: u64) {
        self.settle(now_ms);
    }

    fn state(&self) -> ProcessState {
        self.state
    }

    fn state_ms(&self, now_ms: u64) -> u32 {
        u32::try_from(now_ms.saturating_sub(self.entered_at_ms)).unwrap_or(u32::MAX)
    }

    fn set_dead(&mut self, now_ms: u64) {
        // Death is terminal and keeps the time of the first report.
        if self.state != ProcessState::Dead {
            self.pending = None;
            self.enter(ProcessState::Dead, now_ms);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const T: u64 = 3_000;
    const D: u64 = 200;

    /// `n` reads of `len` bytes, `gap` ms apart, starting at `start`.
    fn regular(n: usize, len: usize, start: u64, gap: u64) -> Vec<(usize, u64)> {
        (0..n as u64).map(|i| (len, start + i * gap)).collect()
    }

    fn feed(c: &mut Claude, trace: &[(usize, u64)]) {
        for &(len, at) in trace {
            c.record_len(len, at);
        }
    }

    /// The raw classification right after the last read of `trace`.
    fn raw(trace: &[(usize, u64)]) -> ProcessState {
        let mut c = Claude::new(T, D, 0);
        feed(&mut c, trace);
        c.classify(trace.last().map_or(0, |&(_, at)| at))
    }

    /// A classifier that has committed `Streaming`, last read at the
    /// returned time.
    fn streaming() -> (Claude, u64) {
        let mut c = Claude::new(T, D, 0);
        // The first few reads are too few for a rhythm and read as
        // Thinking; Streaming then needs the debounce to pass.
        let trace: Vec<_> = (0..20u64)
            .map(|i| (if i % 2 == 0 { 20 } else { 400 }, 1_000 + i * 20))
            .collect();
        feed(&mut c, &trace);
        assert_eq!(c.state(), ProcessState::Streaming);
        (c, 1_380)
    }

    // Raw classification, rule by rule.

    #[test]
    fn no_output_is_idle() {
        assert_eq!(raw(&[]), ProcessState::Idle);
    }

    #[test]
    fn silence_reaching_the_threshold_is_idle_whatever_came_before() {
        let mut c = Claude::new(T, D, 0);
        feed(&mut c, &[(60, 0), (60, 50), (9_000, 100)]);
        assert_eq!(c.classify(100 + T - 1), ProcessState::ToolUse);
        assert_eq!(c.classify(100 + T), ProcessState::Idle);
    }

    #[test]
    fn read_over_4096_bytes_is_tool_use() {
        let mut trace = regular(6, 60, 0, 80);
        trace.push((4_097, 480));
        assert_eq!(raw(&trace), ProcessState::ToolUse);
    }

    #[test]
    fn read_of_exactly_4096_bytes_is_not_a_big_burst() {
        // Gaps are short, so only the big-burst rule could say ToolUse.
        assert_eq!(
            raw(&[(60, 0), (60, 50), (4_096, 100)]),
            ProcessState::Thinking
        );
    }

    #[test]
    fn big_burst_counts_only_while_among_the_last_five_reads() {
        let mut trace = regular(10, 60, 0, 80);
        trace.push((8_000, 800));
        trace.extend(regular(4, 60, 880, 80));
        assert_eq!(raw(&trace), ProcessState::ToolUse);
        trace.push((60, 1_200));
        assert_ne!(raw(&trace), ProcessState::ToolUse);
        // Once it has left the ten-read sample too, the spinner is back.
        trace.extend(regular(5, 60, 1_280, 80));
        assert_eq!(raw(&trace), ProcessState::Thinking);
    }

    #[test]
    fn fewer_than_three_reads_is_thinking_even_after_a_pause() {
        assert_eq!(raw(&[(60, 0)]), ProcessState::Thinking);
        assert_eq!(raw(&[(2_000, 0), (2_000, 1_000)]), ProcessState::Thinking);
    }

    #[test]
    fn sizeable_read_after_a_pause_is_tool_use() {
        let mut trace = regular(6, 60, 0, 80);
        trace.push((2_000, 400 + 201));
        assert_eq!(raw(&trace), ProcessState::ToolUse);
    }

    #[test]
    fn pause_then_burst_needs_both_more_than_200_ms_and_more_than_1024_bytes() {
        let mut exact_gap = regular(6, 60, 0, 80);
        exact_gap.push((2_000, 400 + 200));
        assert_ne!(raw(&exact_gap), ProcessState::ToolUse);
        let mut exact_len = regular(6, 60, 0, 80);
        exact_len.push((1_024, 400 + 500));
        assert_ne!(raw(&exact_len), ProcessState::ToolUse);
    }

    #[test]
    fn oldest_read_has_no_pause_before_it() {
        // The first read follows nothing, so its size alone decides nothing.
        assert_eq!(
            raw(&[(2_000, 5_000), (60, 5_050), (60, 5_100)]),
            ProcessState::Thinking
        );
    }

    #[test]
    fn spinner_trace_is_thinking_by_its_rhythm() {
        let trace: Vec<_> = (0..10u64)
            .map(|i| (if i % 2 == 0 { 55 } else { 65 }, i * 80))
            .collect();
        let mut c = Claude::new(T, D, 0);
        feed(&mut c, &trace);
        let rhythm = Rhythm::of(&c.window).expect("ten reads");
        assert_eq!(rhythm.pattern(), Some(ProcessState::Thinking));
        assert_eq!(c.classify(720), ProcessState::Thinking);
        assert_eq!(c.state(), ProcessState::Thinking);
    }

    #[test]
    fn varied_fast_reads_are_streaming() {
        let trace: Vec<_> = (0..10u64)
            .map(|i| (if i % 2 == 0 { 20 } else { 400 }, i * 20))
            .collect();
        assert_eq!(raw(&trace), ProcessState::Streaming);
    }

    #[test]
    fn large_steady_fast_reads_are_streaming() {
        assert_eq!(raw(&regular(10, 500, 0, 50)), ProcessState::Streaming);
        // Spinner-sized but too fast for a spinner, and over 100 bytes.
        assert_eq!(raw(&regular(10, 110, 0, 20)), ProcessState::Streaming);
    }

    #[test]
    fn unrecognised_rhythm_falls_back_to_thinking() {
        let slow = regular(10, 10, 0, 500);
        let tiny_and_fast = regular(10, 10, 0, 10);
        for trace in [slow, tiny_and_fast] {
            let mut c = Claude::new(T, D, 0);
            feed(&mut c, &trace);
            assert_eq!(Rhythm::of(&c.window).and_then(|r| r.pattern()), None);
            assert_eq!(raw(&trace), ProcessState::Thinking);
        }
    }

    #[test]
    fn rhythm_needs_five_reads() {
        let trace = [(20, 0), (400, 20), (20, 40), (400, 60)];
        assert_eq!(raw(&trace), ProcessState::Thinking);
        let mut c = Claude::new(T, D, 0);
        feed(&mut c, &trace);
        assert_eq!(Rhythm::of(&c.window), None);
    }

    #[test]
    fn rhythm_statistics_are_over_the_last_ten_reads() {
        let mut c = Claude::new(T, D, 0);
        feed(&mut c, &regular(5, 1_000, 0, 1_000));
        feed(
            &mut c,
            &[(10, 5_000), (30, 5_010), (10, 5_030), (30, 5_060)],
        );
        feed(&mut c, &regular(6, 20, 5_100, 40));
        let r = Rhythm::of(&c.window).expect("fifteen reads");
        // Sizes 10, 30, 10, 30, then six of 20: mean 20, variance 40.
        assert_eq!(r.mean_len, 20.0);
        assert!((r.stddev_len - 40f64.sqrt()).abs() < 1e-9);
        // From 5_000 to 5_300 in nine gaps.
        assert!((r.mean_gap_ms - 300.0 / 9.0).abs() < 1e-9);
    }

    // Debouncing and committed state.

    #[test]
    fn starts_idle_and_first_output_waits_out_the_debounce() {
        let mut c = Claude::new(T, D, 500);
        assert_eq!(c.state(), ProcessState::Idle);
        assert_eq!(c.state_ms(1_000), 500);
        c.record(b"spin", 1_000);
        assert_eq!(c.state(), ProcessState::Idle);
        c.tick(1_000 + D - 1);
        assert_eq!(c.state(), ProcessState::Idle);
        c.tick(1_000 + D);
        assert_eq!(c.state(), ProcessState::Thinking);
        assert_eq!(
            c.state_ms(1_000 + D),
            D as u32,
            "dated from when first seen"
        );
    }

    #[test]
    fn a_one_read_flicker_is_held_back() {
        let mut c = Claude::new(T, D, 0);
        c.enter(ProcessState::Streaming, 0);
        c.debounce(ProcessState::ToolUse, 1_000);
        c.debounce(ProcessState::Streaming, 1_100);
        assert_eq!(c.pending, None, "returning to the committed state drops it");
        c.debounce(ProcessState::ToolUse, 1_250);
        assert_eq!(c.state(), ProcessState::Streaming, "1_000 no longer counts");
        c.debounce(ProcessState::ToolUse, 1_449);
        assert_eq!(c.state(), ProcessState::Streaming);
        c.debounce(ProcessState::ToolUse, 1_450);
        assert_eq!(c.state(), ProcessState::ToolUse);
        assert_eq!(c.state_ms(1_450), 200);
    }

    #[test]
    fn a_different_raw_state_replaces_the_pending_one() {
        let mut c = Claude::new(T, D, 0);
        c.enter(ProcessState::Streaming, 0);
        c.debounce(ProcessState::ToolUse, 1_000);
        c.debounce(ProcessState::Thinking, 1_150);
        c.debounce(ProcessState::Thinking, 1_300);
        assert_eq!(c.state(), ProcessState::Streaming);
        c.debounce(ProcessState::Thinking, 1_350);
        assert_eq!(c.state(), ProcessState::Thinking);
    }

    #[test]
    fn big_burst_commits_tool_use_after_the_debounce() {
        let (mut c, last) = streaming();
        let at = last + 20;
        c.record_len(5_000, at);
        assert_eq!(c.state(), ProcessState::Streaming);
        c.tick(at + D - 1);
        assert_eq!(c.state(), ProcessState::Streaming);
        c.tick(at + D);
        assert_eq!(c.state(), ProcessState::ToolUse);
        assert_eq!(c.state_ms(at + D), D as u32);
    }

    #[test]
    fn idle_is_instant_even_with_a_change_pending() {
        let (mut c, last) = streaming();
        let at = last + 20;
        c.record_len(5_000, at);
        assert!(c.pending.is_some());
        c.tick(at + T);
        assert_eq!(c.state(), ProcessState::Idle);
        assert_eq!(c.pending, None);
        assert_eq!(c.state_ms(at + T), 0);
    }

    #[test]
    fn late_tick_dates_idle_from_when_silence_crossed_the_threshold() {
        let (mut c, last) = streaming();
        c.tick(last + T - 1);
        assert_eq!(c.state(), ProcessState::Streaming);
        c.tick(last + 60_000);
        assert_eq!(c.state(), ProcessState::Idle);
        assert_eq!(c.state_ms(last + 60_000), (60_000 - T) as u32);
    }

    #[test]
    fn output_after_unobserved_silence_still_passes_through_idle() {
        let (mut c, last) = streaming();
        let back = last + 10_000;
        c.record_len(60, back);
        // The silence is committed, and the new output must wait out the
        // debounce like any other change.
        assert_eq!(c.state(), ProcessState::Idle);
        assert_eq!(c.state_ms(back), (10_000 - T) as u32);
        c.tick(back + D);
        assert_ne!(c.state(), ProcessState::Idle);
        assert_eq!(c.state_ms(back + D), D as u32);
    }

    #[test]
    fn zero_debounce_commits_at_once() {
        let mut c = Claude::new(T, 0, 0);
        c.record(b"x", 10);
        assert_eq!(c.state(), ProcessState::Thinking);
        assert_eq!(c.state_ms(10), 0);
    }

    #[test]
    fn dead_absorbs_everything_and_keeps_its_time() {
        let (mut c, last) = streaming();
        c.set_dead(last + 5);
        c.record_len(9_000, last + 10);
        c.tick(last + 10 + T);
        c.set_dead(last + 100_000);
        assert_eq!(c.state(), ProcessState::Dead);
        assert_eq!(c.state_ms(last + 1_005), 1_000);
    }

    #[test]
    fn empty_read_only_lets_time_pass() {
        let mut c = Claude::new(T, D, 0);
        c.record(b"", 100);
        assert_eq!(c.window.len(), 0);
        c.record(b"x", 200);
        c.record(b"", 200 + T);
        assert_eq!(c.state(), ProcessState::Idle);
    }

    #[test]
    fn window_keeps_only_the_last_twenty_reads() {
        let mut c = Claude::new(T, D, 0);
        for i in 0..100u64 {
            c.record_len(i as usize + 1, i * 10);
        }
        assert_eq!(c.window.len(), WINDOW);
        assert_eq!(
            c.window.get(0),
            Event {
                len: 81,
                at_ms: 800
            }
        );
        assert_eq!(
            c.window.last(),
            Some(Event {
                len: 100,
                at_ms: 990
            })
        );
    }

    #[test]
    fn time_going_backwards_neither_panics_nor_stalls() {
        let mut c = Claude::new(T, D, 50_000);
        feed(&mut c, &[(60, 60_000), (60, 40_000), (500, 10), (60, 5)]);
        assert_eq!(c.state_ms(5), 0);
        // The pending change restarted in the new timeline, so it still
        // matures after the debounce rather than after 60 s.
        c.tick(5 + D);
        assert_eq!(c.state(), ProcessState::Thinking);
        assert_eq!(c.state_ms(5 + D), D as u32);
        c.tick(1);
        assert_eq!(c.state(), ProcessState::Thinking);
        assert_eq!(c.state_ms(1), 0);
        c.tick(5 + T);
        assert_eq!(
            c.state(),
            ProcessState::Idle,
            "silence counts from the latest read"
        );
    }

    #[test]
    fn huge_reads_and_timestamps_do_not_overflow() {
        let mut c = Claude::new(u64::MAX, u64::MAX, u64::MAX);
        for i in 0..30 {
            c.record_len(usize::MAX, u64::MAX - 30 + i);
            c.tick(u64::MAX);
        }
        assert_eq!(c.classify(u64::MAX), ProcessState::ToolUse);
        // Huge reads still inside the ten-read sample but no longer among
        // the last five feed the statistics.
        let mut c = Claude::new(T, D, 0);
        feed(&mut c, &regular(5, usize::MAX, 0, 20));
        feed(&mut c, &regular(5, 60, 100, 20));
        let r = Rhythm::of(&c.window).expect("ten reads");
        assert!(r.mean_len.is_finite() && r.stddev_len.is_finite());
        assert_eq!(c.classify(180), ProcessState::Streaming);
        c.set_dead(0);
        assert_eq!(c.state_ms(u64::MAX), u32::MAX);
    }

    #[test]
    fn never_reports_active() {
        let (mut c, last) = streaming();
        for i in 0..200u64 {
            c.record_len((i as usize * 7919) % 6_000 + 1, last + i * 37);
            assert_ne!(c.state(), ProcessState::Active);
        }
    }

    /// One call on the classifier, with a timestamp.
    #[derive(Debug, Clone)]
    enum Op {
        Record(usize, u64),
        Tick(u64),
        Dead(u64),
    }

    /// Read sizes around every threshold the rules use, plus extremes.
    fn lens() -> impl Strategy<Value = usize> {
        prop_oneof![
            4 => 1usize..200,
            2 => 0usize..6_000,
            1 => prop::sample::select(vec![0, 1_024, 1_025, 4_096, 4_097, usize::MAX]),
            1 => any::<usize>(),
        ]
    }

    /// Timestamps that mostly move forward in small steps, sometimes jump
    /// back, and now and then land anywhere in `u64`.
    fn ops() -> impl Strategy<Value = Vec<Op>> {
        let step = prop_oneof![
            8 => (-300i64..4_000).prop_map(Some),
            1 => Just(None),
        ];
        let kind = prop_oneof![12 => Just(0u8), 4 => Just(1u8), 1 => Just(2u8)];
        prop::collection::vec((kind, step, lens(), any::<u64>()), 0..80).prop_map(|steps| {
            let mut now = 0u64;
            steps
                .into_iter()
                .map(|(kind, step, len, anywhere)| {
                    now = match step {
                        Some(d) => now.saturating_add_signed(d),
                        None => anywhere,
                    };
                    match kind {
                        0 => Op::Record(len, now),
                        1 => Op::Tick(now),
                        _ => Op::Dead(now),
                    }
                })
                .collect()
        })
    }

    proptest! {
        #[test]
        fn any_trace_keeps_the_invariants(
            threshold in 0u64..10_000,
            debounce in 0u64..1_000,
            trace in ops(),
        ) {
            let mut c = Claude::new(threshold, debounce, 0);
            let mut dead = false;
            let mut last_output = None;
            for op in trace {
                match op {
                    Op::Record(len, now) => {
                        c.record_len(len, now);
                        if len > 0 {
                            last_output = Some(now);
                        }
                    }
                    Op::Tick(now) => c.tick(now),
                    Op::Dead(now) => {
                        c.set_dead(now);
                        dead = true;
                    }
                }
                let s = c.state();
                if dead {
                    prop_assert_eq!(s, ProcessState::Dead);
                } else {
                    prop_assert!(matches!(
                        s,
                        ProcessState::Idle
                            | ProcessState::Thinking
                            | ProcessState::Streaming
                            | ProcessState::ToolUse
                    ));
                }
                prop_assert!(c.window.len() <= WINDOW);
                let _ = c.state_ms(0);
                let _ = c.state_ms(u64::MAX);
            }
            if let Some(idle_at) = last_output.and_then(|t: u64| t.checked_add(threshold)) {
                c.tick(idle_at);
                let want = if dead { ProcessState::Dead } else { ProcessState::Idle };
                prop_assert_eq!(c.state(), want);
            }
        }
    }
}
