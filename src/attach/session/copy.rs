//! Copy mode's I/O in `hm attach`: opening it on a key, the connection
//! that reads the session's history, its keys, and leaving.
//!
//! Copy mode draws over the session's screen, and the user's terminal
//! cannot give that screen back, so leaving is attaching again: a fresh
//! connection, the screen cleared, the supervisor's replay drawn as at
//! the start, the same picture `hm attach` gives any time. While copy
//! mode is open, attach's own subscription is closed and a plain one
//! feeds the history's emulator: nobody writes the program's output to
//! the terminal then, so the supervisor answers the program's terminal
//! queries itself, as it does for a detached session.

use anyhow::Result;

use super::Attach;
use crate::attach::copy::CopyView;
use crate::attach::keys::{self, Input, SHIFT_PAGE_UP};
use crate::attach::shown::Shown;
use crate::client;
use crate::copymode::{self, Key, Outcome};
use crate::protocol::{Mark, Request, Size, Subscribe, conn};

impl Attach {
    /// Whether a read opens copy mode: the copy key or Shift-PgUp, alone
    /// and not pasted; `Some(true)` for Shift-PgUp (a page up at once).
    pub(super) fn opens_copy(&self, read: &[u8]) -> Option<bool> {
        if self.in_paste {
            return None;
        }
        if read == SHIFT_PAGE_UP {
            return Some(true);
        }
        self.copy_key.filter(|&k| read == [k]).map(|_| false)
    }

    /// A new connection to the session, replacing the one there was
    /// (which closes).
    async fn reconnect(&mut self) -> Result<()> {
        let sock = self.sock.clone();
        let (reader, writer) =
            client::answered(&self.id, async { Ok(conn::connect(&sock).await?) }).await?;
        self.reader = reader;
        self.writer = writer;
        Ok(())
    }

    /// Opens copy mode: what is owed to the terminal goes out, attach's
    /// subscription is swapped for one that reads the history, and the
    /// bar says so until the history is in.
    pub(super) async fn enter_copy(&mut self, page_first: bool) -> Result<()> {
        self.flush_blocking();
        // Whatever the terminal would not take in time is drawn over.
        self.out.clear();
        self.sent = 0;
        self.reconnect().await?;
        // With the journal's marks: the history's emulator takes each size
        // where it falls in the output, as the session's screen did.
        let subscribe = Subscribe {
            mark_replay: true,
            marks: true,
            ..Subscribe::default()
        };
        self.send(&[Request::Subscribe(subscribe)]).await?;
        let size = Size {
            cols: self.size.cols,
            rows: self.child_rows(),
        }
        .clamped();
        self.copy = Some(CopyView::new(size, self.history_lines, page_first));
        self.out.extend_from_slice(b"\x1b[?25l");
        self.draw_bar();
        self.flush_some()?;
        Ok(())
    }

    /// A mark of the journal: the size of the output from here on.
    pub(super) fn copy_mark(&mut self, mark: Mark) {
        if let Some(copy) = &mut self.copy {
            copy.mark(&mark);
        }
    }

    /// Output for copy mode's emulator.
    pub(super) fn copy_output(&mut self, bytes: &[u8]) {
        if let Some(copy) = &mut self.copy {
            copy.output(bytes);
        }
    }

    /// The history is in: copy mode starts (or, opened with Shift-PgUp on
    /// a session with no history, is over at once).
    pub(super) async fn copy_replayed(&mut self) -> Result<()> {
        let Some(copy) = &mut self.copy else {
            return Ok(());
        };
        match copy.replay_end() {
            Outcome::Stay => self.paint_copy(true),
            outcome => self.copy_done(outcome).await?,
        }
        Ok(())
    }

    /// Draws copy mode's view (when it changed, or `force`) and its bar.
    pub(super) fn paint_copy(&mut self, force: bool) {
        let Some(copy) = &mut self.copy else { return };
        copy.paint(&mut self.out, &self.theme, force);
        self.draw_bar();
    }

    /// Keys while copy mode is open. `pasting`: a bracketed paste was
    /// under way before this read.
    pub(super) async fn copy_keys(&mut self, read: &[u8], mut pasting: bool) -> Result<()> {
        // The copy key again leaves, as it opened.
        if !pasting && self.copy_key.is_some_and(|k| read == [k]) {
            return self.copy_done(Outcome::Leave).await;
        }
        for input in keys::decode(read, &mut pasting) {
            let Some(copy) = &mut self.copy else { break };
            let outcome = match input {
                // Before the history is in (a supervisor that never says
                // when its replay ends), `q` and Esc still leave.
                Input::Key(Key::Char('q') | Key::Esc) if !copy.ready() => Outcome::Leave,
                input => copy.input(input),
            };
            if outcome != Outcome::Stay {
                return self.copy_done(outcome).await;
            }
        }
        self.paint_copy(false);
        self.flush_some()?;
        Ok(())
    }

    /// Copy mode is over: the copy, if any, goes to the clipboard through
    /// the terminal, and the session is attached again.
    async fn copy_done(&mut self, outcome: Outcome) -> Result<()> {
        self.copy = None;
        if let Outcome::Copied { text, lines } = outcome {
            self.out.extend(copymode::osc52(&text));
            let what = if lines == 1 {
                "copied 1 line".to_owned()
            } else {
                format!("copied {lines} lines")
            };
            self.notice = Some((what, tokio::time::Instant::now()));
        }
        self.reconnect().await?;
        self.shown = Shown::new();
        self.out.extend_from_slice(b"\x1b[?25h\x1b[0m\x1b[H\x1b[2J");
        self.hello().await
    }
}
