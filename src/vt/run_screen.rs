//! What a screen that keeps history does with the runs of plain lines
//! [`super::runs`] finds in what it parses: the rows that scroll off kept
//! from the bytes, the screen drawn as vt100 would leave it, and the rows
//! owed to vt100's count settled when it acts on them. Apart from
//! `runs`, which [`super::term`] uses, so that neither imports the other.

use vt100::Color;

use super::runs::{Attrs, Lines};
use super::term::{Term, dims};

impl<CB: vt100::Callbacks + Default> Term<CB> {
    /// Parses `bytes[from..to]`, keeping the runs of plain lines in it
    /// without drawing them (see the module's comment).
    pub(super) fn draw(&mut self, bytes: &[u8], from: usize, to: usize, lines: &mut Lines) {
        let mut at = from;
        // At the start, whether the cursor is on a blank bottom row is
        // known only by looking.
        let mut look = true;
        lines.scrolled = false;
        while at < to {
            if self.resets != lines.resets {
                self.process(&bytes[at..to]);
                return;
            }
            let screen = self.parser.screen();
            let (rows, cols) = (screen.size().0.get(), screen.size().1.get());
            let scrolled = std::mem::take(&mut lines.scrolled);
            let ready = lines.tokens.in_ground()
                && lines.plain_at(at)
                && rows > 1
                && !screen.alternate_screen()
                && screen.cursor_position() == (rows - 1, 0)
                && (scrolled || (std::mem::take(&mut look) && self.on_blank_bottom_row()));
            if ready {
                let attrs = Attrs::of(self.parser.screen());
                lines.run.read(&bytes[at..to], cols, attrs);
                if lines.run.rows.len() >= usize::from(rows) {
                    self.keep_run(&bytes[at..to], lines);
                    at += lines.run.end;
                    continue;
                }
            }
            // To the next line feed, which may leave the cursor on a
            // blank bottom row again, past the run that was too short.
            let past = if ready { at + lines.run.end } else { at };
            let Some(lf) = memchr::memchr(b'\n', &bytes[past..to]) else {
                self.process(&bytes[at..to]);
                lines.follow(&bytes[at..to]);
                return;
            };
            let lf = past + lf;
            self.process(&bytes[at..lf]);
            lines.follow(&bytes[at..lf]);
            // In ground, on the bottom row, it scrolls the whole screen.
            let screen = self.parser.screen();
            let scrolls = lines.tokens.in_ground()
                && lines.plain_at(lf)
                && !screen.alternate_screen()
                && screen.cursor_position().0 == rows - 1;
            self.process(&bytes[lf..=lf]);
            lines.follow(&bytes[lf..=lf]);
            lines.scrolled = scrolls;
            at = lf + 1;
        }
    }

    /// The main screen grew from `from` rows to `to`: vt100 pulled down
    /// as many blank rows as it counts gone, up to `to - from` (see
    /// [`super::kept`]), fewer than it would have had it counted the rows
    /// owed. The rows it should have pulled are put in above what it
    /// pulled, blank (SD, which drops as many of the blank rows it added
    /// at the bottom), and the cursor and the saved cursor go down with
    /// the rows, as the resize moves them: exactly the screen vt100 would
    /// have made, and what it still owes the count.
    pub(super) fn settle_owed(&mut self, from: u16, to: u16) {
        let tally = self.parser.callbacks();
        let (gone, owed) = (tally.gone, tally.owed);
        let grown = u64::from(to - from);
        let more = gone.min(grown) - (gone - owed).min(grown);
        if more == 0 {
            return;
        }
        self.parser.callbacks_mut().owed -= more;
        // Made on the screen alone, in a parser of its own: the session's
        // may be inside a sequence, which the fix's would end. On the main
        // screen, with the alternate one put aside (47 does nothing else);
        // the resize left no scroll region, and the cursor short of the
        // last column.
        let (rows, cols) = dims(self.size());
        let mut fixer = vt100::Parser::new(rows, cols, 0);
        std::mem::swap(fixer.screen_mut(), self.parser.screen_mut());
        let alternate = fixer.screen().alternate_screen();
        if alternate {
            fixer.process(b"\x1b[?47l");
        }
        let screen = fixer.screen();
        let (row, col) = screen.cursor_position();
        let attrs = Attrs::of(screen);
        let origin = if self.unparsed.cap.unrendered.main_origin() {
            'h'
        } else {
            'l'
        };
        // The rows, the saved cursor (DECRC, down, DECSC), then the cursor
        // and its attributes back.
        let mut fix = format!(
            "\x1b[{more}T\x1b8\x1b[{more}B\x1b7\x1b[?6{origin}\x1b[{};{}H\x1b[m",
            u64::from(row) + more + 1,
            col + 1
        );
        attrs.write_diff(&Attrs::default(), &mut fix);
        if alternate {
            fix.push_str("\x1b[?47h");
        }
        fixer.process(fix.as_bytes());
        std::mem::swap(fixer.screen_mut(), self.parser.screen_mut());
    }

    /// Whether the cursor is at the start of a blank bottom row, as a
    /// line feed that scrolled leaves it, looked at cell by cell.
    fn on_blank_bottom_row(&self) -> bool {
        let screen = self.parser.screen();
        let (rows, cols) = (screen.size().0.get(), screen.size().1.get());
        let blank = |c: &vt100::Cell| {
            !c.has_contents()
                && !c.is_wide()
                && !c.is_wide_continuation()
                && c.fgcolor() == Color::Default
                && c.bgcolor() == Color::Default
                && !c.bold()
                && !c.dim()
                && !c.italic()
                && !c.underline()
                && !c.inverse()
        };
        screen.cursor_position() == (rows - 1, 0)
            && !screen.row_wrapped(rows - 1)
            && (0..cols).all(|c| screen.cell(rows - 1, c).is_some_and(blank))
    }

    /// Keeps the run `lines.run` read at the start of `bytes`, which
    /// completes at least a screenful of rows, and leaves the screen as
    /// vt100 would have (see the module's comment).
    fn keep_run(&mut self, bytes: &[u8], lines: &mut Lines) {
        let rows = self.parser.screen().size().0.get();
        let run = &mut lines.run;
        // Printable ASCII and SGR sequences only, so never otherwise.
        let Ok(text) = std::str::from_utf8(&bytes[..run.end]) else {
            self.process(&bytes[..run.end]);
            return;
        };
        let shown = usize::from(rows) - 1;
        let gone = run.rows.len() - shown;
        // The screen's rows above the cursor's scroll off first.
        self.process(format!("\x1b[{shown}S").as_bytes());
        for i in 0..gone {
            let row = run.rows[i];
            self.parser
                .callbacks_mut()
                .leave(|| (run.format(text, row), row.wrapped));
        }
        // The row the run began on is blank, but may hold what was erased
        // in it: vt100 would draw the rows left on the screen on rows it
        // scrolled in, fresh. It scrolls off too, muted; on it is drawn
        // the run's last character first if none of the rows drawn below
        // is, for REP, which repeats the last character drawn.
        let top = run.rows[gone];
        let mut fresh = String::from("\x1b[H\x1b[m");
        if let Some(c) = run.last_char.filter(|&c| c < top.from) {
            fresh.push(char::from(bytes[c]));
        }
        fresh.push_str("\x1b[S");
        self.parser.callbacks_mut().mute = true;
        self.process(fresh.as_bytes());
        self.parser.callbacks_mut().mute = false;
        // vt100 did not count the rows kept here as gone, but that one:
        // the rest are owed, and settled if it ever acts on the count
        // (`Term::settle_owed`).
        self.parser.callbacks_mut().owed += gone as u64 - 1;
        let mut setup = String::from("\x1b[H\x1b[m");
        top.attrs.write_diff(&Attrs::default(), &mut setup);
        self.process(setup.as_bytes());
        self.process(&bytes[top.from..run.end]);
    }
}
