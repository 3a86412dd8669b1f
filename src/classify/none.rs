//! The `none` classifier: no state inference at all.
//!
//! It owns nothing but the session's start and death times. It reports
//! `Idle` while the child lives and `Dead` once it has exited, so that a
//! session that only wants pty supervision, scrollback and IPC pays nothing
//! for classification. It must not look at output: `record` and `tick` are
//! deliberately empty.

use super::{ProcessState, StateClassifier};

/// Always `Idle` while the child lives, `Dead` after it exits.
#[derive(Debug, Clone)]
pub struct NoneClassifier {
    /// When the current state was entered: the session start, or the death.
    entered_at_ms: u64,
    dead: bool,
}

impl NoneClassifier {
    /// A classifier for a session that started at `now_ms`.
    pub fn new(now_ms: u64) -> Self {
        Self {
            entered_at_ms: now_ms,
            dead: false,
        }
    }
}

impl StateClassifier for NoneClassifier {
    fn record(&mut self, _chunk: &[u8], _now_ms: u64) {}

    fn tick(&mut self, _now_ms: u64) {}

    fn state(&self) -> ProcessState {
        if self.dead {
            ProcessState::Dead
        } else {
            ProcessState::Idle
        }
    }

    fn state_ms(&self, now_ms: u64) -> u32 {
        // A clock that went backwards yields 0 rather than wrapping.
        u32::try_from(now_ms.saturating_sub(self.entered_at_ms)).unwrap_or(u32::MAX)
    }

    fn set_dead(&mut self, now_ms: u64) {
        // Death is terminal: a second report keeps the first death time, so
        // `state_ms` keeps measuring from when the child actually exited.
        if !self.dead {
            self.dead = true;
            self.entered_at_ms = now_ms;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_idle_from_start_whatever_the_output() {
        let mut c = NoneClassifier::new(1_000);
        assert_eq!(c.state(), ProcessState::Idle);
        c.record(&[0; 4096], 1_010);
        c.tick(1_020);
        assert_eq!(c.state(), ProcessState::Idle);
        assert_eq!(c.state_ms(1_500), 500);
    }

    #[test]
    fn dead_is_terminal_and_measured_from_the_first_death() {
        let mut c = NoneClassifier::new(0);
        c.set_dead(2_000);
        c.record(b"late output", 2_100);
        c.tick(2_200);
        c.set_dead(3_000);
        assert_eq!(c.state(), ProcessState::Dead);
        assert_eq!(c.state_ms(3_500), 1_500);
    }

    #[test]
    fn state_ms_saturates_both_ways() {
        let c = NoneClassifier::new(10_000);
        assert_eq!(c.state_ms(5), 0, "a clock that went backwards");
        assert_eq!(c.state_ms(u64::MAX), u32::MAX);
    }

    #[test]
    fn state_name_uses_the_shared_table() {
        let c = NoneClassifier::new(0);
        assert_eq!(c.state_name(ProcessState::Idle.as_byte()), "idle");
        assert_eq!(c.state_name(0x42), "unknown");
    }
}
