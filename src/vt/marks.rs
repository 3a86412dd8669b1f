//! A replay's marks (the journal's, `docs/protocol.md`) applied to an
//! emulator: each size where its mark falls in the output, and, at the
//! first, the screen the output was on there. What `hm logs`, a
//! dashboard pane and `hm attach`'s copy mode do with them alike, so that
//! all three see what the session's own screen saw.

use crate::protocol::Mark;
use crate::vt::term::Term;

impl<CB: vt100::Callbacks + Default> Term<CB> {
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
