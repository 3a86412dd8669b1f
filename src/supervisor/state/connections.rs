//! The shared state's side of the connections: their count and ids, the
//! people's terminals among them and the size held back while one is
//! attached, and the subscribers' bytes as they are written (which wake
//! the pty reader: the ring may have room).

use super::Shared;
use crate::protocol::Size;
use crate::supervisor::output::ConnId;

/// Held sizes kept: the last applies, and the ones before it only stand
/// in when a terminal about to subscribe takes its own back.
const MAX_HELD_SIZES: usize = 8;

impl Shared {
    pub fn new_conn_id(&mut self) -> ConnId {
        let id = self.next_conn;
        self.next_conn += 1;
        id
    }

    pub fn connections(&self) -> usize {
        self.connections
    }

    pub fn connection_opened(&mut self) {
        self.connections += 1;
    }

    pub fn connection_closed(&mut self) {
        self.connections -= 1;
        // The main loop waits on connections only once the program has
        // ended (for its launcher, for EXITs owed); while it runs, the
        // wake-up was a turn of its loop for every `hm ls`.
        if self.has_ended() {
            self.wakes.main.notify_one();
        }
        self.wakes.conn_closed.notify_one();
        if self.connections == 0 {
            self.wakes.all_left.notify_one();
        }
    }

    /// A subscriber whose terminal answers the program's queries came:
    /// the supervisor stops answering them. The size it asked for before
    /// it subscribed (`asked`; held if another terminal was attached) is
    /// the most recent terminal's now: returned if it is to be applied (a
    /// second `hm attach` sends its size first, and kept the first one's).
    pub fn add_terminal(&mut self, id: ConnId, asked: Option<Size>) -> Option<Size> {
        self.terminals += 1;
        self.held_sizes.retain(|(c, _)| *c != id);
        self.terminal_sizes.push((id, asked));
        asked.filter(|s| *s != self.size)
    }

    /// A terminal asked for `size`: it is the most recent now.
    pub fn terminal_resized(&mut self, id: ConnId, size: Size) {
        self.terminal_sizes.retain(|(c, _)| *c != id);
        self.terminal_sizes.push((id, Some(size)));
    }

    /// A terminal left. The size to apply now, if any: the one the most
    /// recent of the terminals still attached asked for (the session
    /// kept the size of the one that left, in a smaller window), else,
    /// with none left, the last one held back meanwhile.
    pub fn remove_terminal(&mut self, id: ConnId) -> Option<Size> {
        self.terminals -= 1;
        self.terminal_sizes.retain(|(c, _)| *c != id);
        let next = if self.terminals > 0 {
            self.terminal_sizes.iter().rev().find_map(|(_, s)| *s)
        } else {
            self.held_sizes.pop().map(|(_, s)| s)
        };
        if self.terminals == 0 {
            self.held_sizes.clear();
        }
        next.filter(|s| *s != self.size)
    }

    /// The size of the session's terminal, as last applied.
    pub fn terminal_size(&self) -> Size {
        self.size
    }

    /// The session's size changed to `size` under the people's terminals
    /// but `by`'s (another attached, was resized or left). A full-screen
    /// program (the alternate screen) draws again at the new size, but
    /// only its own rows: the rest of a larger window keeps what it drew
    /// for the size before, until the program clears. Each of those
    /// terminals whose window holds the new size is sent the screen drawn
    /// at it where its stream is now, before whatever the program draws
    /// next (a smaller one would scroll). Not on the main screen: the
    /// emulator cut its rows at the smaller width, where the larger window
    /// still shows them whole. The screen itself takes the size with the
    /// next output, as a replay of the journal does (see `note_output`):
    /// the drawing is of a copy.
    /// Whether any was: their connections are to be woken (`Ctx::bump`).
    pub fn repaint_terminals(&mut self, by: Option<ConnId>, size: Size) -> bool {
        let others: Vec<ConnId> = self
            .terminal_sizes
            .iter()
            .filter(|(c, asked)| {
                Some(*c) != by && asked.is_some_and(|a| a.cols >= size.cols && a.rows >= size.rows)
            })
            .map(|(c, _)| *c)
            .collect();
        // Asked of the screen asleep: a program on the main screen (a
        // shell) has no drawing to make, nor its output parsed for one.
        if others.is_empty() || !self.screen.alternate() {
            return false;
        }
        let mut shot = self.screen.term().screen().clone();
        let fit = |n: u16| std::num::NonZeroU16::new(n).unwrap_or(std::num::NonZeroU16::MIN);
        shot.set_size(fit(size.rows), fit(size.cols));
        // The scroll region first: a terminal resets its own when its
        // size changes, but these did not change, and one the program set
        // for the other's size (vim's, after a scroll at 14 rows) kept
        // its redraw at the new size in those 14 rows.
        let mut rendering = b"\x1b[r".to_vec();
        rendering.extend(shot.state_formatted().into_bytes());
        for id in others {
            self.output.repaint(id, rendering.clone());
        }
        true
    }

    /// Whether a person's terminal (`hm attach`) is attached: its size is
    /// the session's, and others' RESIZE waits (see [`Shared::hold_size`]).
    pub fn terminal_attached(&self) -> bool {
        self.terminals > 0
    }

    /// A RESIZE from a client that is not a person's terminal (the
    /// dashboard fitting its panes) while one is attached: kept, not
    /// applied, so nobody's window is shrunk behind their back. The last
    /// applies once no terminal is left; a few are kept, by whom, because
    /// one may be a terminal about to subscribe (see `add_terminal`).
    pub fn hold_size(&mut self, id: ConnId, size: Size) {
        self.held_sizes.retain(|(c, _)| *c != id);
        if self.held_sizes.len() >= MAX_HELD_SIZES {
            self.held_sizes.remove(0);
        }
        self.held_sizes.push((id, size));
    }

    /// A connection stops being a subscriber; whether it was one. The ring
    /// may have room now.
    pub fn unsubscribe(&mut self, id: ConnId) -> bool {
        let was = self.output.unsubscribe(id);
        if was {
            self.wakes.space.notify_one();
        }
        was
    }

    /// `n` bytes of a subscriber's frame were written (see
    /// [`Output::frame_sent`]); the ring may have room now.
    pub fn frame_sent(&mut self, id: ConnId, n: usize) -> usize {
        let taken = self.output.frame_sent(id, n);
        if taken > 0 {
            self.wakes.space.notify_one();
        }
        taken
    }
}
