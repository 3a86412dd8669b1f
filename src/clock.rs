//! The only place that reads the time.
//!
//! Everything that reasons about time (classifiers, idle timers, kill grace
//! periods) takes a `now_ms: u64` argument instead of calling the clock, so
//! tests can drive it with synthetic timestamps.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// A monotonic millisecond clock anchored at the moment it was created.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    epoch: Instant,
}

impl Clock {
    pub fn new() -> Self {
        Self {
            epoch: Instant::now(),
        }
    }

    /// Milliseconds since this clock was created.
    pub fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
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
