//! When to send which signal to stop a session. Kept apart from the event
//! loop and free of I/O, so that its rules are checked on their own (the
//! property test below) and the loop only carries them out.
//!
//! The rules: the first kill request sends SIGTERM, then SIGCONT (a stopped
//! program acts on SIGTERM only once continued), and arms a SIGKILL
//! deadline; later requests can only bring the deadline closer; SIGKILL is
//! sent once, when the deadline passes (requests after it change nothing:
//! the program is dying); once the program is reaped nothing
//! is ever sent again, because its pid (and group) may then be reused.
//!
//! Time comes in as an argument (the supervisor's [`crate::clock::Clock`]),
//! so the property test below and the in-process tests with paused time
//! (`supervisor/tests.rs`) decide when it passes.

use std::time::Duration;

use nix::sys::signal::Signal;

use crate::clock::Instant;

#[derive(Debug, Default)]
pub struct Escalation {
    term_sent: bool,
    deadline: Option<Instant>,
    kill_sent: bool,
    reaped: bool,
}

impl Escalation {
    /// A kill request with a grace period: the signals to send now.
    pub fn request(&mut self, now: Instant, grace: Duration) -> &'static [Signal] {
        if self.reaped || self.kill_sent {
            return &[];
        }
        let at = now + grace;
        self.deadline = Some(self.deadline.map_or(at, |d| d.min(at)));
        if self.term_sent {
            &[]
        } else {
            self.term_sent = true;
            &[Signal::SIGTERM, Signal::SIGCONT]
        }
    }

    /// When SIGKILL is due, if it is.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// SIGKILL if its deadline has passed by `now`; then it is spent.
    pub fn expire(&mut self, now: Instant) -> Option<Signal> {
        match self.deadline {
            Some(d) if now >= d && !self.reaped => {
                self.deadline = None;
                self.kill_sent = true;
                Some(Signal::SIGKILL)
            }
            _ => None,
        }
    }

    /// The program was reaped: nothing is sent from now on.
    pub fn reaped(&mut self) {
        self.reaped = true;
        self.deadline = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Request(u64),
        Advance(u64),
        Reap,
    }

    fn op() -> impl Strategy<Value = Op> {
        // Zero (no grace, no time passing) is where ties are: drawn often.
        let ms = |max: u64| prop_oneof![Just(0u64), 0..max];
        prop_oneof![
            ms(5000).prop_map(Op::Request),
            ms(3000).prop_map(Op::Advance),
            Just(Op::Reap),
        ]
    }

    proptest! {
        /// Driven as the event loop drives it (the deadline checked
        /// whenever time moves): TERM then CONT exactly once, at the first
        /// request; KILL at most once, at the first moment the earliest
        /// request's grace has run out; nothing at all after the reap.
        #[test]
        fn term_then_kill_after_the_grace_and_never_after_the_reap(
            ops in prop::collection::vec(op(), 0..40),
        ) {
            let mut now = crate::clock::Clock::new().now();
            let mut e = Escalation::default();
            let mut sent: Vec<(Signal, Instant)> = Vec::new();
            let mut due: Option<Instant> = None;
            let mut reaped_at = None;
            // Whether the loop has looked at the deadline once it was due
            // (and after the request that set it).
            let mut looked = false;
            for op in ops {
                match op {
                    Op::Request(g) => {
                        let grace = Duration::from_millis(g);
                        let killed = sent.iter().any(|(s, _)| *s == Signal::SIGKILL);
                        if reaped_at.is_none() && !killed {
                            let at = now + grace;
                            if due.is_none_or(|d| at < d) {
                                due = Some(at);
                                looked = false;
                            }
                        }
                        sent.extend(e.request(now, grace).iter().map(|&s| (s, now)));
                    }
                    Op::Advance(ms) => {
                        // The loop wakes at the deadline if it comes first.
                        let to = now + Duration::from_millis(ms);
                        if let Some(d) = e.deadline().filter(|&d| d <= to) {
                            now = d;
                            sent.extend(e.expire(now).map(|s| (s, now)));
                        }
                        now = to;
                        sent.extend(e.expire(now).map(|s| (s, now)));
                        looked |= due.is_some_and(|d| now >= d);
                    }
                    Op::Reap => {
                        e.reaped();
                        reaped_at.get_or_insert(now);
                    }
                }
            }
            let sigs: Vec<Signal> = sent.iter().map(|(s, _)| *s).collect();
            if let Some(r) = reaped_at {
                prop_assert!(sent.iter().all(|(_, at)| *at <= r), "a signal after the reap");
            }
            let terms = sigs.iter().filter(|&&s| s == Signal::SIGTERM).count();
            prop_assert!(terms <= 1);
            if terms == 1 {
                prop_assert_eq!(&sigs[..2], &[Signal::SIGTERM, Signal::SIGCONT][..]);
            }
            let kills: Vec<Instant> = sent
                .iter()
                .filter(|(s, _)| *s == Signal::SIGKILL)
                .map(|(_, at)| *at)
                .collect();
            prop_assert!(kills.len() <= 1, "SIGKILL twice");
            if let Some(&k) = kills.first() {
                prop_assert_eq!(Some(k), due, "SIGKILL not at the earliest deadline");
                prop_assert_eq!(terms, 1, "SIGKILL without SIGTERM first");
            } else if let Some(d) = due {
                // Not sent: nobody looked once it was due, or the reap came
                // no later (at the deadline itself, either may win).
                prop_assert!(!looked || reaped_at.is_some_and(|r| r <= d));
            }
        }
    }
}
