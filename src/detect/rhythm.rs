//! Output that comes back at a steady beat: how long a silence must last
//! before it means the work stopped.
//!
//! By timing alone a program is at work while it wrote within the idle
//! threshold. A program that redraws every few seconds (`top` every 3 s,
//! `watch -n 5`, a build that prints a line every 4 s) has silences just
//! past it, so it went idle and active again at every beat: an event
//! and a state push each time, idle for 50 ms. One that writes more
//! often than the threshold was already active all along (`htop`); one
//! whose beat is a little longer is now the same. A beat much longer
//! than the threshold (a heartbeat in a server's log) is idle between.

/// A silence at least this long starts a new burst of output: a redraw
/// is written in a few reads close together.
const BURST_GAP_MS: u64 = 500;

/// Beats this many in a row, alike, make a rhythm.
const BEATS: usize = 3;

/// The gaps between the starts of the last few bursts of output.
#[derive(Debug, Clone, Default)]
pub struct Rhythm {
    last_output_ms: Option<u64>,
    last_burst_ms: Option<u64>,
    /// The latest gaps between bursts, a ring written at `seen`.
    gaps: [u64; BEATS],
    /// How many gaps there have been.
    seen: usize,
}

impl Rhythm {
    /// Notes output at `now_ms`; true when it starts a burst (only then
    /// may [`Rhythm::quiet_after`] say something new: a read costs one
    /// comparison more).
    pub fn output(&mut self, now_ms: u64) -> bool {
        let after_silence = self
            .last_output_ms
            .is_none_or(|t| now_ms.saturating_sub(t) >= BURST_GAP_MS);
        self.last_output_ms = Some(now_ms);
        if !after_silence {
            return false;
        }
        if let Some(start) = self.last_burst_ms {
            self.gaps[self.seen % BEATS] = now_ms.saturating_sub(start);
            self.seen += 1;
        }
        self.last_burst_ms = Some(now_ms);
        true
    }

    /// How long a silence must last to end the work, given `threshold` for
    /// output at no steady beat: at least a beat's length and a half for
    /// bursts that came at one, no further than twice the threshold apart,
    /// so one redraw late or a little slow is not taken for the end.
    pub fn quiet_after(&self, threshold: u64) -> u64 {
        if self.seen < BEATS {
            return threshold;
        }
        let (min, max) = (
            self.gaps.iter().copied().min().unwrap_or(0),
            self.gaps.iter().copied().max().unwrap_or(0),
        );
        // Summed wide: gaps from a clock that jumped may be huge.
        let sum: u128 = self.gaps.iter().map(|&g| u128::from(g)).sum();
        let mean = (sum / BEATS as u128) as u64;
        // Alike: within a tenth of their mean either way.
        let steady = max - min <= mean / 5;
        // A beat about the threshold, some gaps under it and some over,
        // is as much a beat as one past it.
        if steady && mean <= threshold.saturating_mul(2) {
            threshold.max(mean.saturating_add(mean / 2))
        } else {
            threshold
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: u64 = 3_000;

    /// Output every `period` ms, `beats` times, each burst two reads 5 ms
    /// apart.
    fn beating(period: u64, beats: u64) -> Rhythm {
        let mut r = Rhythm::default();
        for i in 0..beats {
            r.output(i * period);
            r.output(i * period + 5);
        }
        r
    }

    #[test]
    fn a_beat_a_little_longer_than_the_threshold_lengthens_it() {
        assert_eq!(beating(3_050, 4).quiet_after(T), 4_575);
        assert_eq!(beating(5_000, 4).quiet_after(T), 7_500);
    }

    #[test]
    fn a_beat_about_the_threshold_lengthens_it() {
        let mut r = Rhythm::default();
        for t in [0, 2_980, 6_020, 8_990] {
            r.output(t);
        }
        assert_eq!(r.quiet_after(T), 4_494);
    }

    #[test]
    fn three_beats_are_needed() {
        assert_eq!(beating(3_050, 3).quiet_after(T), T);
    }

    #[test]
    fn a_beat_far_longer_or_shorter_leaves_it() {
        // A heartbeat in a log: idle between.
        assert_eq!(beating(30_000, 6).quiet_after(T), T);
        // Active all along anyway.
        assert_eq!(beating(1_500, 6).quiet_after(T), T);
    }

    #[test]
    fn output_at_no_steady_beat_leaves_it() {
        let mut r = Rhythm::default();
        for t in [0, 3_100, 7_900, 11_200, 16_800] {
            r.output(t);
        }
        assert_eq!(r.quiet_after(T), T);
    }

    #[test]
    fn a_beat_that_changes_is_forgotten_within_three_bursts() {
        let mut r = beating(3_050, 5);
        assert_eq!(r.quiet_after(T), 4_575);
        // It stops for a while, then keeps writing at no steady beat.
        let mut t = 4 * 3_050 + 5;
        for gap in [20_000, 3_100, 9_000] {
            t += gap;
            r.output(t);
        }
        assert_eq!(r.quiet_after(T), T);
    }

    #[test]
    fn reads_close_together_are_one_burst() {
        let mut r = Rhythm::default();
        for i in 0..4u64 {
            // A redraw written in reads 100 ms apart over 400 ms.
            for k in 0..5 {
                r.output(i * 4_000 + k * 100);
            }
        }
        assert_eq!(r.quiet_after(T), 6_000);
    }
}
