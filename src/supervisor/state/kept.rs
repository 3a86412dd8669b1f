//! The shared state's side of `hm restore`: the old output a restored
//! session starts with, the writes its keeper makes when the tracker asks,
//! and how the session ended.

use crate::restore::history;
use crate::restore::manifest::EndHow;

use super::Shared;

impl Shared {
    /// Puts a restored session's old output and its mark in front of
    /// everything: into the ring, so every client's replay (`hm logs`,
    /// the dashboard, `hm attach`) shows it, and onto the screen. The old
    /// output and the mark after it are scrolled off the screen into its
    /// history, so that a program that clears its screen cannot erase the
    /// last of it, and the program starts on a blank screen. The mark goes
    /// there too, not on the screen: the program resumed may take its
    /// alternate screen (Claude Code does; Codex does when resumed, not
    /// when new), which would hide it. The classifier and the detector do
    /// not see any of it (it is not this program's work), and the terminal
    /// queries in it go unanswered. Called before any task runs, so no
    /// subscriber exists yet.
    ///
    /// A program that was on its alternate screen (Claude Code, Codex, an
    /// editor) left nothing in the history: what it showed last is written
    /// onto the main screen, as text in its colours, to go into the
    /// history with the rest; so is the alternate screen a program that
    /// ended had left before it ended (`hm restart` of Claude Code after
    /// `/exit`: the conversation, then its resume line), in its place.
    pub fn preload(&mut self, old: &[u8], mark: &str) {
        self.push_quietly(old);
        if let Some(left) = self.screen.term().take_left() {
            self.push_quietly(&left);
        }
        let last_screen = {
            let screen = self.screen.term().screen();
            screen.alternate_screen().then(|| drawn_rows(screen))
        };
        self.push_quietly(history::RESET);
        if let Some(rows) = &last_screen {
            self.push_quietly(history::LEAVE_ALTERNATE);
            self.new_line();
            for row in rows {
                self.push_quietly(row.as_bytes());
                self.push_quietly(b"\x1b[0m\r\n");
            }
        }
        self.new_line();
        self.push_quietly(&history::mark_line(mark));
        // The rows in use: those above the cursor, which is on the blank
        // row after the mark.
        let used = self.screen.term().screen().cursor_position().0;
        self.push_quietly(&history::scroll_off(used, self.size.rows));
    }

    /// Moves to the start of a line of its own, unless there already.
    fn new_line(&mut self) {
        let screen = self.screen.term().screen();
        let (row, col) = screen.cursor_position();
        let blank = screen
            .contents_between(row, 0, row, screen.size().1.get())
            .is_empty();
        if col != 0 || !blank {
            self.push_quietly(b"\r\n");
        }
    }

    fn push_quietly(&mut self, mut bytes: &[u8]) {
        // The journal dates it now: the restored output is read now.
        let unix_ms = self.unix_ms();
        while !bytes.is_empty() {
            let read = self.output.read(bytes.len(), unix_ms, |spare| {
                let n = spare.len().min(bytes.len());
                spare[..n].copy_from_slice(&bytes[..n]);
                Ok(n)
            });
            let Ok((range, _)) = read else { return };
            let n = (range.end - range.start) as usize;
            if n == 0 {
                return;
            }
            let term = self.screen.term();
            term.feed(&bytes[..n]);
            // Titles, bells and queries of the old output are history.
            drop(term.callbacks_mut().take());
            if let Some(k) = &mut self.keeper {
                k.output(range.end);
            }
            bytes = &bytes[n..];
        }
    }

    /// Writes what is due of the manifest and the output's tail: whether
    /// anything was, and when the next write is due (the session's clock,
    /// ms), if anything waits.
    pub fn keep(&mut self) -> (bool, Option<u64>) {
        let now = self.clock.now_ms();
        let Shared { keeper, output, .. } = self;
        let Some(keeper) = keeper.as_mut() else {
            return (false, None);
        };
        let due = keeper.is_due(now);
        let (oldest, _) = output.held();
        let next = keeper.flush(now, oldest, |from, to| output.slices(from, to));
        (due, next)
    }

    /// The session is over (`code` if the program was not reaped): its
    /// last output and how it ended are kept. A KILL asked for says
    /// killed, even if a signal came too; a signal alone says stopped
    /// (a system shutting down), which `hm restore` may start again.
    pub fn keep_end(&mut self, code: i32, unix_ms: u64) {
        let how = if self.killed {
            EndHow::Killed
        } else if self.stopped {
            EndHow::Stopped
        } else {
            EndHow::Exited
        };
        let end = crate::restore::manifest::End {
            unix_ms,
            how,
            code: self.exit_code.unwrap_or(code),
            // As its record says killed (`ended_record`).
            signaled: how == EndHow::Exited && self.signaled,
        };
        let Shared { keeper, output, .. } = self;
        if let Some(k) = keeper.as_mut() {
            let (oldest, _) = output.held();
            k.end(end, oldest, |from, to| output.slices(from, to));
        }
    }
}

/// The rows of `screen` down to the last with anything drawn, each as
/// its text with its colours (SGR), from default attributes.
fn drawn_rows(screen: &vt100::Screen) -> Vec<String> {
    let cols = screen.size().1.get();
    let used = crate::vt::term::rows_written(screen);
    screen.rows_formatted(0, cols).take(used).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Size;
    use crate::vt::term::Term;

    fn shared(size: Size) -> Shared {
        Shared::for_test(65536, size)
    }

    /// What a client replaying the ring at the session's size sees: the
    /// history then the screen, as `hm logs` prints them.
    fn replayed(s: &Shared, size: Size) -> Vec<String> {
        let (oldest, head) = s.output().held();
        let (a, b) = s.output().slices(oldest, head).expect("held");
        let mut t: Term = Term::with_scrollback(size, 1000);
        t.feed(&[a, b].concat());
        let mut lines = t.history();
        while lines.last().is_some_and(|l| l.trim().is_empty()) {
            lines.pop();
        }
        lines.iter().map(|l| l.trim_end().to_owned()).collect()
    }

    #[tokio::test]
    async fn the_old_output_then_the_mark_go_to_the_history() {
        let size = Size { cols: 40, rows: 10 };
        let mut s = shared(size);
        s.preload(b"$ echo one\r\none\r\n$ ", "-- mark --");
        assert_eq!(replayed(&s, size), ["$ echo one", "one", "$", "-- mark --"]);
        // The old output and the mark are history; the program starts on
        // a blank screen, whichever screen it takes.
        assert_eq!(s.screen.term().screen().cursor_position(), (0, 0));
        assert_eq!(s.screen.term().screen().contents().trim(), "");
        let mut s = shared(size);
        s.preload(b"$ echo one\r\none\r\n$ ", "-- mark --");
        s.push_quietly(b"\x1b[?1049h\x1b[Hresumed full screen");
        assert_eq!(
            replayed(&s, size),
            [
                "$ echo one",
                "one",
                "$",
                "-- mark --",
                "resumed full screen"
            ]
        );
        // A program that clears its screen leaves the old output alone,
        // and the mark it cleared goes to the history with it.
        let mut s = shared(size);
        s.preload(b"last screen\r\n", "-- mark --");
        s.push_quietly(b"\x1b[2J\x1b[Hnew");
        assert_eq!(replayed(&s, size), ["last screen", "-- mark --", "new"]);
        // A program on its alternate screen: its last screen is history,
        // after what it left on the main one, and the mark after that;
        // the screen it starts on is blank.
        let mut s = shared(size);
        s.preload(
            b"before\r\n\x1b[?1049h\x1b[H\x1b[1;31mfull\x1b[m screen app\x1b[4;3Hits box",
            "-- mark --",
        );
        assert_eq!(
            replayed(&s, size),
            [
                "before",
                "full screen app",
                "",
                "",
                "  its box",
                "-- mark --"
            ]
        );
        assert!(!s.screen.term().screen().alternate_screen());
        assert_eq!(s.screen.term().screen().contents().trim(), "");
        assert_eq!(s.screen.term().screen().cursor_position(), (0, 0));
        // Its colours come with it.
        let (oldest, head) = s.output().held();
        let (a, b) = s.output().slices(oldest, head).expect("held");
        let mut t: Term = Term::with_scrollback(size, 1000);
        t.feed(&[a, b].concat());
        t.scroll_back(usize::MAX);
        let red = t.shown().cell(1, 0).map(|c| (c.bold(), c.fgcolor()));
        assert_eq!(red, Some((true, vt100::Color::Idx(1))));
    }
}
