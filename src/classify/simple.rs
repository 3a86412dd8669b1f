//! The `simple` classifier: idle or active, nothing more.
//!
//! It owns the time of the last output and the committed state with the
//! moment it was entered. It looks at no byte patterns, so it works for any
//! program and costs one comparison per read; it must stay that cheap,
//! because `record` runs on every pty read.

use super::{ProcessState, StateClassifier};
use crate::detect::rhythm::Rhythm;

/// `Idle` once the program has been silent for `idle_threshold_ms` (at
/// exactly the threshold it is already idle), `Active` otherwise. Output
/// at a steady beat a little longer than the threshold (`top` redrawing
/// every 3 s) lengthens the silence that makes it idle to a beat and a
/// half ([`Rhythm`]): it was idle for 50 ms at each beat.
///
/// Transition times are when the program changed, not when we noticed:
/// `Active` is entered at the output that started it, and `Idle` at
/// `last output + threshold`, however late the `tick` that observes it
/// comes. So `state_ms` does not depend on how often STATUS is polled.
#[derive(Debug, Clone)]
pub struct Simple {
    idle_threshold_ms: u64,
    /// The most recent non-empty read, `None` until the program writes.
    last_output_ms: Option<u64>,
    /// The beat of the output, and the silence it makes idle now.
    rhythm: Rhythm,
    quiet_ms: u64,
    state: ProcessState,
    entered_at_ms: u64,
}

impl Simple {
    /// A classifier for a session that started at `now_ms`. It starts `Idle`
    /// because a program that has written nothing is, as far as we can see,
    /// silent.
    pub fn new(idle_threshold_ms: u64, now_ms: u64) -> Self {
        Self {
            idle_threshold_ms,
            last_output_ms: None,
            rhythm: Rhythm::default(),
            quiet_ms: idle_threshold_ms,
            state: ProcessState::Idle,
            entered_at_ms: now_ms,
        }
    }

    /// Re-evaluate the state at `now_ms` from the last output time.
    fn settle(&mut self, now_ms: u64) {
        if self.state == ProcessState::Dead {
            return;
        }
        // No output yet: still the Idle we started in.
        let Some(last) = self.last_output_ms else {
            return;
        };
        // `saturating_sub` makes a clock that went backwards look like
        // output just now, which is the harmless reading.
        let (target, entered_at) = if now_ms.saturating_sub(last) >= self.quiet_ms {
            (ProcessState::Idle, last.saturating_add(self.quiet_ms))
        } else {
            (ProcessState::Active, last)
        };
        if target != self.state {
            self.state = target;
            self.entered_at_ms = entered_at;
        }
    }
}

impl StateClassifier for Simple {
    fn record(&mut self, chunk: &[u8], now_ms: u64) {
        // An empty read carries no output (it is how EOF looks), so it only
        // lets time pass.
        if chunk.is_empty() || self.state == ProcessState::Dead {
            self.tick(now_ms);
            return;
        }
        // First account for the silence this output ends: if nobody ticked
        // during it, the program still went idle at `last + threshold`, and
        // without this step `state_ms` would report one long Active stretch.
        self.settle(now_ms);
        if self.rhythm.output(now_ms) {
            self.quiet_ms = self.rhythm.quiet_after(self.idle_threshold_ms);
        }
        self.last_output_ms = Some(now_ms);
        self.settle(now_ms);
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

    fn quiet_after_ms(&self) -> Option<u64> {
        Some(self.quiet_ms)
    }

    fn set_dead(&mut self, now_ms: u64) {
        // Death is terminal and keeps the time of the first report.
        if self.state != ProcessState::Dead {
            self.state = ProcessState::Dead;
            self.entered_at_ms = now_ms;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const T: u64 = 3_000;

    #[test]
    fn starts_idle_measured_from_construction() {
        let mut c = Simple::new(T, 500);
        c.tick(10_000);
        assert_eq!(c.state(), ProcessState::Idle);
        assert_eq!(c.state_ms(10_000), 9_500);
    }

    #[test]
    fn output_makes_it_active_from_that_output() {
        let mut c = Simple::new(T, 0);
        c.record(b"x", 1_000);
        assert_eq!(c.state(), ProcessState::Active);
        assert_eq!(c.state_ms(1_000), 0);
        c.record(b"more", 1_500);
        c.tick(2_000);
        assert_eq!(c.state(), ProcessState::Active);
        assert_eq!(c.state_ms(2_000), 1_000, "continued output keeps the start");
    }

    #[test]
    fn idle_exactly_at_the_threshold_and_not_a_millisecond_before() {
        let mut c = Simple::new(T, 0);
        c.record(b"x", 1_000);
        c.tick(1_000 + T - 1);
        assert_eq!(c.state(), ProcessState::Active);
        c.tick(1_000 + T);
        assert_eq!(c.state(), ProcessState::Idle);
        assert_eq!(c.state_ms(1_000 + T), 0);
    }

    #[test]
    fn late_tick_dates_idle_from_when_silence_crossed_the_threshold() {
        let mut c = Simple::new(T, 0);
        c.record(b"x", 1_000);
        c.tick(60_000);
        assert_eq!(c.state(), ProcessState::Idle);
        assert_eq!(u64::from(c.state_ms(60_000)), 60_000 - (1_000 + T));
    }

    #[test]
    fn output_after_unobserved_silence_restarts_the_active_clock() {
        let mut c = Simple::new(T, 0);
        c.record(b"x", 0);
        // Nobody ticked for ten seconds; the program was idle in between.
        c.record(b"y", 10_000);
        assert_eq!(c.state(), ProcessState::Active);
        assert_eq!(c.state_ms(10_500), 500);
    }

    #[test]
    fn active_idle_active_round_trip() {
        let mut c = Simple::new(T, 0);
        c.record(b"a", 100);
        c.tick(100 + T);
        assert_eq!(c.state(), ProcessState::Idle);
        c.record(b"b", 5_000);
        assert_eq!(c.state(), ProcessState::Active);
        c.tick(5_000 + T);
        assert_eq!(c.state(), ProcessState::Idle);
    }

    #[test]
    fn empty_read_is_not_output() {
        let mut c = Simple::new(T, 0);
        c.record(b"", 100);
        assert_eq!(c.state(), ProcessState::Idle);
        c.record(b"x", 200);
        c.record(b"", 200 + T);
        assert_eq!(
            c.state(),
            ProcessState::Idle,
            "an empty read only lets time pass"
        );
    }

    #[test]
    fn dead_absorbs_everything_and_keeps_its_time() {
        let mut c = Simple::new(T, 0);
        c.record(b"x", 100);
        c.set_dead(200);
        c.record(b"y", 300);
        c.tick(300 + T);
        c.set_dead(9_000);
        assert_eq!(c.state(), ProcessState::Dead);
        assert_eq!(c.state_ms(1_200), 1_000);
    }

    #[test]
    fn time_going_backwards_neither_panics_nor_goes_idle() {
        let mut c = Simple::new(T, 10_000);
        c.record(b"x", 20_000);
        c.record(b"y", 5);
        assert_eq!(c.state(), ProcessState::Active);
        assert_eq!(c.state_ms(0), 0);
        c.tick(1);
        assert_eq!(c.state(), ProcessState::Active);
        c.tick(5 + T);
        assert_eq!(
            c.state(),
            ProcessState::Idle,
            "silence counts from the latest read"
        );
    }

    #[test]
    fn extreme_timestamps_saturate() {
        let mut c = Simple::new(u64::MAX, 0);
        c.record(b"x", u64::MAX);
        c.tick(u64::MAX);
        assert_eq!(c.state(), ProcessState::Active);
        let mut c = Simple::new(T, 0);
        c.record(b"x", u64::MAX - 1);
        c.tick(u64::MAX);
        assert_eq!(c.state(), ProcessState::Active);
        assert_eq!(c.state_ms(u64::MAX), 1);
        c.set_dead(0);
        assert_eq!(c.state_ms(u64::MAX), u32::MAX);
    }

    /// `top` redraws every 3 s: just past the threshold, it was idle for
    /// 50 ms at each redraw. Once its beat is known (three gaps alike) it
    /// is active until a beat and a half of silence.
    #[test]
    fn output_at_a_steady_beat_past_the_threshold_stays_active() {
        let mut c = Simple::new(T, 0);
        let beat = 3_050;
        for i in 0..4 {
            c.record(b"frame", i * beat);
        }
        let last = 3 * beat;
        c.tick(last + T + 10);
        assert_eq!(c.state(), ProcessState::Active, "idle between redraws");
        c.record(b"frame", 4 * beat);
        assert_eq!(
            c.state_ms(4 * beat),
            (4 * beat - last) as u32,
            "one stretch of work since the beat was known"
        );
        c.tick(4 * beat + beat * 3 / 2);
        assert_eq!(c.state(), ProcessState::Idle, "it stopped");
        assert_eq!(c.state_ms(4 * beat + beat * 3 / 2), 0);
    }

    #[test]
    fn zero_threshold_is_always_idle() {
        let mut c = Simple::new(0, 0);
        c.record(b"x", 10);
        assert_eq!(c.state(), ProcessState::Idle);
    }

    /// One call on the classifier, with a timestamp.
    #[derive(Debug, Clone)]
    enum Op {
        Record(usize, u64),
        Tick(u64),
        Dead(u64),
    }

    /// Timestamps that mostly move forward in small steps, sometimes jump
    /// back, and now and then land anywhere in `u64`.
    fn ops() -> impl Strategy<Value = Vec<Op>> {
        let step = prop_oneof![
            8 => (-500i64..5_000).prop_map(Some),
            1 => Just(None),
        ];
        let kind = prop_oneof![6 => Just(0u8), 3 => Just(1u8), 1 => Just(2u8)];
        prop::collection::vec((kind, step, 0usize..8, any::<u64>()), 0..60).prop_map(|steps| {
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
        fn any_trace_keeps_the_invariants(threshold in 0u64..10_000, trace in ops()) {
            let mut c = Simple::new(threshold, 0);
            let chunk = [b'x'; 8];
            let mut dead = false;
            let mut last_output = None;
            for op in trace {
                match op {
                    Op::Record(len, now) => {
                        c.record(&chunk[..len], now);
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
                    prop_assert!(matches!(s, ProcessState::Idle | ProcessState::Active));
                }
                let _ = c.state_ms(0);
                let _ = c.state_ms(u64::MAX);
            }
            // A steady beat lengthens the silence that makes it idle, to
            // at most a beat and a half of twice the threshold.
            let quiet = c.quiet_after_ms().expect("a simple classifier's quiet");
            prop_assert!(quiet >= threshold && quiet <= threshold.saturating_mul(3));
            if let Some(idle_at) = last_output.and_then(|t: u64| t.checked_add(quiet)) {
                c.tick(idle_at);
                let want = if dead { ProcessState::Dead } else { ProcessState::Idle };
                prop_assert_eq!(c.state(), want);
                // With a zero threshold it never left Idle, so its clock
                // runs from an earlier time.
                if !dead && threshold > 0 {
                    prop_assert_eq!(c.state_ms(idle_at), 0);
                }
            }
        }
    }
}
