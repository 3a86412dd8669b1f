//! Whether skimming pays. A lazy screen ([`crate::vt::term::Term::skim`])
//! reads every byte twice over when it ends up parsing them all anyway:
//! once to find what it could skip, once to parse. It can skip only rows
//! that scroll off unseen; an agent's interface redraws in place (cursor
//! up, erase, write again) and sets its title several times a second,
//! which is parsed at once, so for it the skim is all cost (15 % more
//! than parsing alone, docs/performance.md). So a lazy screen watches what
//! it skips: after a window of output in which it skipped nothing, it
//! parses at once for a stretch, as an eager screen does, and then skims
//! again. A flood that begins in such a stretch costs at most the
//! stretch's parsing (13 ms a MiB). The judgement outlives a rest (the
//! screen's sleep): an agent's session rests between turns that each
//! write less than a window.

/// Output a lazy screen reads before it judges whether skimming paid:
/// four of `vt::skim::BOUND`, so that a flood has skipped by then.
const WINDOW: usize = 256 * 1024;
/// Output parsed at once after a window that skipped nothing.
const STRETCH: usize = 1024 * 1024;

/// What a lazy screen skipped lately, and how much it is to parse at once.
#[derive(Debug, Clone)]
pub(crate) struct Budget {
    window: usize,
    stretch: usize,
    /// Read while skimming in this window.
    read: usize,
    /// Skipped in this window.
    skipped: usize,
    /// Still to parse at once.
    eager: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget::new(WINDOW, STRETCH)
    }
}

impl Budget {
    pub(crate) fn new(window: usize, stretch: usize) -> Budget {
        Budget {
            window: window.max(1),
            stretch,
            read: 0,
            skipped: 0,
            eager: 0,
        }
    }

    /// Whether output is to be parsed at once now.
    pub(crate) fn eager(&self) -> bool {
        self.eager > 0
    }

    /// `n` bytes were read at once.
    pub(crate) fn parsed_at_once(&mut self, n: usize) {
        self.eager = self.eager.saturating_sub(n);
    }

    /// `n` bytes were read skimming; judges the window once it is full.
    pub(crate) fn skimmed(&mut self, n: usize) {
        self.read += n;
        if self.read >= self.window {
            if self.skipped == 0 {
                self.eager = self.stretch;
            }
            self.read = 0;
            self.skipped = 0;
        }
    }

    /// `n` bytes were skipped unparsed.
    pub(crate) fn skipped(&mut self, n: usize) {
        self.skipped += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_that_skipped_nothing_buys_a_stretch_at_once() {
        let mut b = Budget::new(100, 300);
        b.skimmed(60);
        b.skipped(10);
        b.skimmed(60);
        assert!(!b.eager(), "this window skipped");
        b.skimmed(99);
        assert!(!b.eager());
        b.skimmed(1);
        assert!(b.eager(), "a whole window without a skip");
        b.parsed_at_once(299);
        assert!(b.eager());
        b.parsed_at_once(1);
        assert!(!b.eager());
        b.skimmed(100);
        assert!(b.eager(), "judged again after the stretch");
    }
}
