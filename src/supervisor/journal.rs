//! The journal beside the output ring: at which offsets of the output the
//! session's size changed, where a program took the alternate screen or
//! left it, and when the output there was read.
//!
//! Bytes a program writes are laid out for the size its terminal had
//! then; replayed at another size they land on the wrong columns. So each
//! size that reaches the pty is recorded at the ring's head (the first
//! byte written after it), and a replay applies it there. A replay that
//! starts after a full-screen program switched to the alternate screen
//! would take its drawing for the main screen's (and its scrolling for
//! history): so each switch is recorded too, at the byte after it, and a
//! replay starts on the screen in use there. Each mark also carries the
//! wall-clock time, and while output flows a mark that only moves the
//! time on is added every [`MARK_EVERY_MS`], so `hm logs --since` can
//! find where a time begins.
//!
//! Bounded: at most [`Journal::capacity`] marks, set from the ring's size
//! (1 % of its bytes). Marks the ring has overtaken are dropped with the
//! bytes before them. Several sizes at one offset (a client resizing in a
//! loop while the program is silent) are one mark, the last. When the
//! journal is full anyway, marks that only carry a time are thinned
//! first (every other one), then the oldest go, and the journal's
//! *floor* rises: before it the sizes are not known, and a replay that
//! applies sizes starts there. A mark is never moved to another offset.
//!
//! Knows nothing of emulators or subscribers: it is offsets and sizes.

use std::collections::VecDeque;

use crate::protocol::{Mark, Size};

use crate::protocol::MARK_EVERY_MS;

/// The journal's share of the ring's memory: one byte in a hundred.
const SHARE: usize = 100;

/// The fewest marks a journal holds, however small its ring.
const MIN_MARKS: usize = 64;

/// A mark and where it falls in the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The first byte written at this size (and read at this time).
    pub offset: u64,
    pub mark: Mark,
}

/// What recording a mark did to those already there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Recorded {
    /// The mark took the place of one at the same offset (that one's size
    /// never applied to any byte).
    pub replaced: bool,
    /// Marks that carried a size were dropped from the front to make
    /// room: the newest offset among them. Whoever had not yet been given
    /// those has lost them.
    pub dropped_through: Option<u64>,
}

#[derive(Debug)]
pub struct Journal {
    /// Oldest first; offsets strictly increase.
    entries: VecDeque<Entry>,
    capacity: usize,
    /// Sizes are known from this offset on.
    floor: u64,
}

impl Journal {
    /// A journal for a ring of `ring_bytes`, starting at offset 0 with the
    /// session's first size.
    pub fn new(ring_bytes: usize, size: Size, unix_ms: u64) -> Journal {
        let capacity = (ring_bytes / SHARE / std::mem::size_of::<Entry>()).max(MIN_MARKS);
        let mut entries = VecDeque::new();
        entries.push_back(Entry {
            offset: 0,
            mark: Mark {
                size,
                unix_ms,
                alternate: false,
            },
        });
        Journal {
            entries,
            capacity,
            floor: 0,
        }
    }

    /// The most marks kept.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes the marks take at most ([`Journal::capacity`] of them).
    pub fn max_bytes(&self) -> usize {
        self.capacity * std::mem::size_of::<Entry>()
    }

    /// Sizes are known from this offset on (0 unless the journal overflowed).
    pub fn floor(&self) -> u64 {
        self.floor
    }

    /// The newest mark.
    pub fn last(&self) -> Option<&Entry> {
        self.entries.back()
    }

    /// The session was resized to `size` with `head` bytes written.
    pub fn resized(&mut self, head: u64, size: Size, unix_ms: u64) -> Recorded {
        let Some(last) = self.last().copied() else {
            return Recorded::default();
        };
        if last.mark.size == size {
            return Recorded::default();
        }
        self.record(
            head,
            Mark {
                size,
                unix_ms,
                alternate: last.mark.alternate,
            },
        )
    }

    /// The output took the alternate screen (`on`) or left it, from
    /// `offset` on (the byte after the switch).
    pub fn switched(&mut self, offset: u64, on: bool, unix_ms: u64) -> Recorded {
        let Some(last) = self.last().copied() else {
            return Recorded::default();
        };
        if last.mark.alternate == on {
            return Recorded::default();
        }
        self.record(
            offset,
            Mark {
                size: last.mark.size,
                unix_ms,
                alternate: on,
            },
        )
    }

    /// Output is being read at `head`: a mark that moves the time on, if
    /// the last is [`MARK_EVERY_MS`] old.
    pub fn output(&mut self, head: u64, unix_ms: u64) -> Recorded {
        let Some(last) = self.last().copied() else {
            return Recorded::default();
        };
        if unix_ms.saturating_sub(last.mark.unix_ms) < MARK_EVERY_MS || last.offset >= head {
            return Recorded::default();
        }
        self.record(
            head,
            Mark {
                unix_ms,
                ..last.mark
            },
        )
    }

    fn record(&mut self, head: u64, mark: Mark) -> Recorded {
        let mut done = Recorded::default();
        match self.entries.back_mut() {
            // No byte was written at the size before: it is replaced.
            Some(last) if last.offset >= head => {
                last.mark = mark;
                done.replaced = true;
                return done;
            }
            _ => {}
        }
        if self.entries.len() >= self.capacity {
            done.dropped_through = self.make_room();
        }
        self.entries.push_back(Entry { offset: head, mark });
        done
    }

    /// Frees at least a quarter of the marks: every other mark that only
    /// moved the time on, then the oldest. Returns the newest offset of
    /// the oldest marks dropped, if any were.
    fn make_room(&mut self) -> Option<u64> {
        let mut prev: Option<(Size, bool)> = None;
        let mut time_only = 0usize;
        self.entries.retain(|e| {
            let state = (e.mark.size, e.mark.alternate);
            let only_time = prev == Some(state);
            prev = Some(state);
            if only_time {
                time_only += 1;
                // Every other one goes: the first, third, ...
                return time_only.is_multiple_of(2);
            }
            true
        });
        let keep = self.capacity - self.capacity / 4;
        let mut dropped = None;
        while self.entries.len() > keep {
            dropped = self.entries.pop_front().map(|e| e.offset);
        }
        if let (Some(_), Some(first)) = (dropped, self.entries.front()) {
            self.floor = first.offset;
        }
        dropped
    }

    /// Drops what only bytes before `oldest` needed: every mark followed
    /// by another at or before `oldest`.
    pub fn trim(&mut self, oldest: u64) {
        while self.entries.len() > 1 && self.entries[1].offset <= oldest {
            self.entries.pop_front();
        }
    }

    /// The mark in force at `offset` (the last at or before it), unless
    /// `offset` is below the floor.
    pub fn at(&self, offset: u64) -> Option<&Entry> {
        if offset < self.floor {
            return None;
        }
        let i = self.entries.partition_point(|e| e.offset <= offset);
        i.checked_sub(1).and_then(|i| self.entries.get(i))
    }

    /// The first mark at or after `offset`.
    pub fn from(&self, offset: u64) -> Option<&Entry> {
        let i = self.entries.partition_point(|e| e.offset < offset);
        self.entries.get(i)
    }

    /// The time the output at `offset` was read, as far as the marks say:
    /// that of the mark in force there.
    pub fn time_at(&self, offset: u64) -> Option<u64> {
        let i = self.entries.partition_point(|e| e.offset <= offset);
        i.checked_sub(1)
            .and_then(|i| self.entries.get(i))
            .map(|e| e.mark.unix_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Size = Size { cols: 80, rows: 24 };
    const B: Size = Size {
        cols: 200,
        rows: 50,
    };

    #[test]
    fn a_size_is_recorded_where_the_next_byte_goes_and_read_back_there() {
        let mut j = Journal::new(1 << 20, A, 1000);
        j.resized(10, B, 1001);
        assert_eq!(j.at(9).map(|e| e.mark.size), Some(A));
        assert_eq!(j.at(10).map(|e| e.mark.size), Some(B));
        assert_eq!(j.from(5).map(|e| e.offset), Some(10));
        assert_eq!(j.from(11), None);
        // The same size again is no change.
        assert_eq!(j.resized(20, B, 1002), Recorded::default());
        assert_eq!(j.len(), 2);
    }

    #[test]
    fn sizes_with_no_byte_between_are_one_mark_the_last() {
        let mut j = Journal::new(1 << 20, A, 0);
        for i in 0..10_000u16 {
            let r = j.resized(
                7,
                Size {
                    cols: 10 + i % 100,
                    rows: 5,
                },
                u64::from(i),
            );
            assert!(i == 0 || r.replaced);
        }
        assert_eq!(j.len(), 2);
        assert_eq!(j.at(7).map(|e| e.mark.size.cols), Some(10 + 9_999 % 100));
    }

    #[test]
    fn output_adds_a_time_mark_every_two_seconds() {
        let mut j = Journal::new(1 << 20, A, 0);
        j.output(0, 100);
        j.output(50, 1999);
        assert_eq!(j.len(), 1);
        j.output(60, 2000);
        assert_eq!(j.len(), 2);
        assert_eq!(j.time_at(59), Some(0));
        assert_eq!(j.time_at(60), Some(2000));
    }

    #[test]
    fn a_switch_of_screen_is_a_mark_and_sizes_keep_the_screen() {
        let mut j = Journal::new(1 << 20, A, 0);
        j.switched(5, true, 1);
        j.resized(9, B, 2);
        // Already there: nothing.
        assert_eq!(j.switched(12, true, 3), Recorded::default());
        j.switched(20, false, 4);
        let screen = |j: &Journal, at| j.at(at).map(|e| (e.mark.size, e.mark.alternate));
        assert_eq!(screen(&j, 4), Some((A, false)));
        assert_eq!(screen(&j, 5), Some((A, true)));
        assert_eq!(screen(&j, 9), Some((B, true)));
        assert_eq!(screen(&j, 20), Some((B, false)));
    }

    #[test]
    fn trimming_keeps_the_mark_in_force_at_the_oldest_byte() {
        let mut j = Journal::new(1 << 20, A, 0);
        j.resized(10, B, 1);
        j.resized(20, A, 2);
        j.trim(15);
        assert_eq!(j.len(), 2);
        assert_eq!(j.at(15).map(|e| e.mark.size), Some(B));
        j.trim(20);
        assert_eq!(j.len(), 1);
        assert_eq!(j.at(20).map(|e| e.mark.size), Some(A));
    }

    #[test]
    fn a_full_journal_thins_time_marks_before_it_drops_sizes() {
        let mut j = Journal::new(0, A, 0);
        let cap = j.capacity();
        assert_eq!(cap, MIN_MARKS);
        // A size change, then only time for a long while.
        j.resized(1, B, 1);
        let mut t = 1;
        let mut at = 1;
        for _ in 0..cap * 10 {
            at += 100;
            t += MARK_EVERY_MS;
            let r = j.output(at, t);
            assert_eq!(r.dropped_through, None, "only time marks went");
            assert!(j.len() <= cap);
        }
        assert_eq!(j.floor(), 0);
        assert_eq!(j.at(1).map(|e| e.mark.size), Some(B));
        assert_eq!(j.at(0).map(|e| e.mark.size), Some(A));
    }

    #[test]
    fn a_storm_of_sizes_raises_the_floor_and_never_moves_a_mark() {
        let mut j = Journal::new(0, A, 0);
        let cap = j.capacity();
        let mut lost = None;
        for i in 1..=(cap as u64 * 3) {
            let size = if i % 2 == 0 { A } else { B };
            let r = j.resized(i, size, i);
            lost = r.dropped_through.or(lost);
            assert!(j.len() <= cap);
        }
        let floor = j.floor();
        assert!(floor > 0 && lost.is_some_and(|l| l < floor));
        assert_eq!(j.at(floor - 1), None, "below the floor nothing is known");
        for i in floor..=(cap as u64 * 3) {
            let want = if i % 2 == 0 { A } else { B };
            assert_eq!(j.at(i).map(|e| e.mark.size), Some(want));
        }
    }
}
