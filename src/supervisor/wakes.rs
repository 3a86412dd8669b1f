//! The signals a supervisor's tasks give each other. The session's state
//! ([`super::state::Shared`]) holds them and its methods give the ones
//! each change calls for, so no caller has to remember to: a wake-up
//! missed is a task asleep while there is work, a hang no test sees.

use std::rc::Rc;

use tokio::sync::Notify;

/// Who is woken, and on what.
#[derive(Debug, Clone, Default)]
pub struct Wakes {
    /// The main loop: a kill asked for, the output over, an EXIT written,
    /// a connection gone, a launcher come.
    pub main: Rc<Notify>,
    /// The state tracker: output came, the session was resized, a hook
    /// reported, the program ended; the state may have changed.
    pub output_seen: Rc<Notify>,
    /// The pty reader: a subscriber took bytes or left, so the ring may
    /// have room.
    pub space: Rc<Notify>,
    /// The accept loop: a connection closed, a descriptor is free.
    pub conn_closed: Rc<Notify>,
    /// The state tracker: the last connection closed, so what serving it
    /// mapped and allocated may go back (see `track_state`).
    pub all_left: Rc<Notify>,
    /// The state tracker: a subscription found the state moved (see
    /// `Shared::refresh_for_subscriber`), which the tracker announces to
    /// every other subscriber and the notifier.
    pub look: Rc<Notify>,
    /// Connections owed a second ACTED (ACT's `whole`): the answer being
    /// typed has sent its last key.
    pub answered: Rc<Notify>,
}
