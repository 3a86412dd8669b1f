//! The supervisor's clock, and the list of everything that reads the time.
//!
//! The supervisor (`supervisor.rs`, `supervisor/*`) reads "now" only
//! through a [`Clock`], and everything that reasons about time below it
//! (classifiers, the detector, the idle thresholds, kill escalation) takes
//! the reading as an argument (`now_ms: u64` or an [`Instant`]), so tests
//! drive it with synthetic timestamps.
//!
//! A [`Clock`] reads tokio's clock, not the system's. Inside a runtime the
//! two agree; in a test runtime whose time is paused
//! (`#[tokio::test(start_paused = true)]`, `tokio::time::advance`) the
//! clock moves only when the test lets it, and it moves together with the
//! supervisor's timers, which are tokio timers (`sleep_until` on an
//! [`Instant`] from this clock). That is why the supervisor's timers stay
//! on tokio rather than on the timerfds of [`crate::alarm`]: a timerfd
//! follows the kernel's clock, which paused time does not move. They cost
//! no idle wake-ups: each is armed only while something is pending (a kill
//! grace period, output settling, an idle threshold not yet reached, a
//! stalled subscriber, the drain after the program ended), never as a
//! periodic tick, so a supervisor with nothing pending has no timer armed.
//! The one periodic timer in `hm`, the dashboard's clock, is a timerfd.
//!
//! Outside the supervisor's clock, these read the time, each for a reason:
//!
//! - [`unix_ms`]: wall-clock time, only to show and compare with other
//!   processes' records (a session's start and end, `hm ls`'s ages,
//!   `hm events` timestamps); never for ordering or timers.
//! - `supervisor/pidfile.rs`: how long `hm run` waits for a session's lock
//!   (`std::time::Instant`). It runs before the fork, when no runtime
//!   exists yet, and its wait is real.
//! - The client commands (`client.rs`, `attach/session.rs`, `cmd/kill.rs`) and
//!   the dashboard (`tui.rs`, `tui/*`) read `std::time::Instant` (attach
//!   through `tokio::time::Instant`) and pass it down (the dashboard's pure
//!   `update` and `view` take `now`). Their timers are timerfds
//!   ([`crate::alarm`], which reads `std::time::Instant` to arm them), so
//!   paused time could not drive them anyway; they are tested end to end.
//! - The log's timestamps: wall-clock time, UTC (`supervisor/log.rs`).
//! - `restore/history.rs`: the local time of the mark a restored session
//!   shows (`restored 14:05`), read once by its supervisor before its
//!   runtime starts (the `time` crate reads the zone only while the
//!   process has one thread).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The instant the supervisor's clock reads: tokio's, so that it follows
/// paused time in tests.
pub use tokio::time::Instant;

/// A monotonic clock anchored at the moment it was created, read in
/// milliseconds (for the classifiers) or as an [`Instant`] (for timers).
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    epoch: Instant,
}

impl Clock {
    /// A clock whose millisecond zero is now. Inside a runtime with paused
    /// time, "now" is the paused time.
    pub fn new() -> Self {
        Self {
            epoch: Instant::now(),
        }
    }

    /// The time now.
    pub fn now(&self) -> Instant {
        Instant::now()
    }

    /// Milliseconds since this clock was created.
    pub fn now_ms(&self) -> u64 {
        self.ms_at(self.now())
    }

    /// The millisecond reading of `at` (0 for a moment before the epoch).
    pub fn ms_at(&self, at: Instant) -> u64 {
        let since = at.saturating_duration_since(self.epoch);
        u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
    }

    /// The instant at which [`Clock::now_ms`] reads `ms`: how a deadline
    /// given in milliseconds (an idle threshold) becomes a timer.
    pub fn at_ms(&self, ms: u64) -> Instant {
        self.epoch + Duration::from_millis(ms)
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

/// Wall-clock time in milliseconds since the Unix epoch, for display only
/// (e.g. a session's start time); never used for ordering.
pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// The local time of day at `unix_ms`, `HH:MM:SS`, as a person's clock
/// shows it (the zone from `TZ` or `/etc/localtime`); UTC if the C
/// library cannot say.
#[allow(unsafe_code)]
pub fn local_time_of_day(unix_ms: u64) -> String {
    let secs = libc::time_t::try_from(unix_ms / 1000).unwrap_or(0);
    // SAFETY: `tm` is plain data (integers and a pointer), valid zeroed;
    // localtime_r fills it in and keeps neither pointer.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let found = unsafe { !libc::localtime_r(&secs, &mut tm).is_null() };
    if found {
        format!("{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec)
    } else {
        let day = unix_ms / 1000 % 86_400;
        format!("{:02}:{:02}:{:02}", day / 3600, day / 60 % 60, day % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn follows_paused_time_and_nothing_else() {
        let clock = Clock::new();
        assert_eq!(clock.now_ms(), 0);
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(clock.now_ms(), 0, "real time passing moved a paused clock");
        tokio::time::advance(Duration::from_millis(1500)).await;
        assert_eq!(clock.now_ms(), 1500);
        assert_eq!(clock.at_ms(1500), clock.now());
        assert_eq!(clock.ms_at(clock.at_ms(42)), 42);
    }
}
