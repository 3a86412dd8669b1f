//! The shared state's side of the connections: their count and ids, the
//! people's terminals among them and the size held back while one is
//! attached, and the subscribers' bytes as they are written (which wake
//! the pty reader: the ring may have room).

use super::Shared;
use crate::protocol::Size;
use crate::supervisor::output::ConnId;

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
        self.wakes.main.notify_one();
        self.wakes.conn_closed.notify_one();
        if self.connections == 0 {
            self.wakes.all_left.notify_one();
        }
    }

    /// A subscriber whose terminal answers the program's queries came:
    /// the supervisor stops answering them.
    pub fn add_terminal(&mut self) {
        self.terminals += 1;
    }

    pub fn remove_terminal(&mut self) {
        self.terminals -= 1;
    }

    /// Whether a person's terminal (`hm attach`) is attached: its size is
    /// the session's, and others' RESIZE waits (see [`Shared::hold_size`]).
    pub fn terminal_attached(&self) -> bool {
        self.terminals > 0
    }

    /// A RESIZE from a client that is not a person's terminal (the
    /// dashboard fitting its panes) while one is attached: kept, not
    /// applied, so nobody's window is shrunk behind their back.
    pub fn hold_size(&mut self, size: Size) {
        self.held_size = Some(size);
    }

    /// The size held back, once no terminal is attached any more.
    pub fn take_held_size(&mut self) -> Option<Size> {
        if self.terminals > 0 {
            return None;
        }
        self.held_size.take().filter(|s| *s != self.size)
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
