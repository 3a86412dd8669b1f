//! A replay's marks (the journal's, `docs/protocol.md`) applied to an
//! emulator: each size where its mark falls in the output, and, at the
//! first, the screen the output was on there. What `hm logs`, a
//! dashboard pane and `hm attach`'s copy mode do with them alike, so that
//! all three see what the session's own screen saw.

use crate::protocol::Mark;
use crate::vt::term::Term;

/// What a cell holds that no byte of a replay wrote: the replay began
/// after output was dropped, over a screen whose cells it cannot know.
/// A plane-16 private-use character no program prints, beside the one
/// that stands for invalid UTF-8 ([`crate::vt::utf8::STANDIN`]).
pub const UNKNOWN_CELL: char = '\u{10FFFC}';

/// A line of history as it may be shown: without the cells no byte wrote
/// at its end (a line printed over the unknown screen, its rest never
/// erased, as a terminal's fresh rows are blank), `None` if it has one
/// before text that was written (a program that redraws only the cells
/// that changed and skips the others, as Claude Code does, printed `Par
/// graph 29: the quick b own fox`) or nothing but such cells.
pub fn known(text: String) -> Option<String> {
    if !text.contains(UNKNOWN_CELL) {
        return Some(text);
    }
    let kept = text.trim_end_matches([UNKNOWN_CELL, ' ']);
    (!kept.is_empty() && !kept.contains(UNKNOWN_CELL)).then(|| kept.to_owned())
}

impl<CB: vt100::Callbacks + Default> Term<CB> {
    /// Fills the screen with [`UNKNOWN_CELL`] but for its last row, blank,
    /// where the cursor starts: for a replay that starts after output was
    /// dropped, so that what it never writes can be told from what it
    /// wrote blank. The replay starts at a line's start (after a line
    /// feed, docs/protocol.md), where a terminal at the bottom of its
    /// screen has a fresh row: a shell's lines go on there and scroll in
    /// fresh rows, tabs and a right prompt's cursor moves over blanks, as
    /// they did; what a program redraws in place above them (Claude
    /// Code, a line at a time, skipping the cells it takes to be as they
    /// were) falls on rows not known.
    pub fn fill_unknown(&mut self) {
        let size = self.size();
        let row: String = std::iter::repeat_n(UNKNOWN_CELL, usize::from(size.cols)).collect();
        let mut bytes = Vec::new();
        for r in 1..size.rows {
            bytes.extend(format!("\x1b[{r};1H{row}").into_bytes());
        }
        bytes.extend(format!("\x1b[{};1H\x1b[2K", size.rows).into_bytes());
        self.feed(&bytes);
    }

    /// Takes `mark`; `first`: it is the one before the replay's first
    /// byte, whose screen the emulator starts on (a program that switched
    /// to the alternate screen before the kept output began is still on
    /// it: its drawing is no history).
    pub fn take_mark(&mut self, mark: &Mark, first: bool) {
        self.resize(mark.size);
        if first && mark.alternate && !self.screen().alternate_screen() {
            self.feed(b"\x1b[?1049h");
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::protocol::{Mark, Size};
    use crate::vt::term::Term;

    /// Over the unknown screen, a line redrawn in place above the cursor
    /// with cells skipped is left out, and so are rows no byte wrote;
    /// lines printed on from the bottom are history as they were, tabs,
    /// a right prompt's cursor move and empty lines with them.
    #[test]
    fn cells_no_byte_wrote_are_told_from_blanks() {
        let mut t: Term = Term::with_scrollback(Size { cols: 24, rows: 3 }, 100);
        t.fill_unknown();
        t.feed(b"\x1b[2A\rPar\x1b[8Ggraph 29\x1b[2B\r");
        t.feed(b"whole line\r\n\tmodified: a\r\n\r\n$ ls\x1b[5Cright\r\nlast\r\n\r\n\r\n");
        let lines: Vec<String> = t.logical_lines().into_iter().map(|l| l.text).collect();
        assert_eq!(
            lines,
            [
                "whole line",
                "        modified: a",
                "",
                "$ ls     right",
                "last"
            ]
        );
    }

    #[test]
    fn a_replay_that_starts_on_the_alternate_screen_keeps_its_drawing_out_of_the_history() {
        let mark = Mark {
            size: Size { cols: 10, rows: 3 },
            unix_ms: 0,
            alternate: true,
        };
        let mut t: Term = Term::with_scrollback(Size { cols: 80, rows: 24 }, 100);
        t.take_mark(&mark, true);
        assert_eq!(t.size(), mark.size);
        t.feed(b"one\r\ntwo\r\nthree\r\nfour\r\n");
        assert_eq!(t.history_len(), 0);
        // Only the first mark says where the replay starts.
        let main = Mark {
            alternate: false,
            ..mark
        };
        t.take_mark(&main, false);
        assert!(t.screen().alternate_screen());
    }
}
