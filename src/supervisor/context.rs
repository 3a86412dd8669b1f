//! What every task of a supervisor shares: the session's state, its pty
//! master, its clock, and the signals the tasks give each other. Defined
//! apart from the tasks (the connections, the pty reader, the state
//! tracker, the main loop, the answers to dialogs) so that each of them
//! depends on it and none on another's file.

use std::cell::{Cell, RefCell};
use std::os::fd::OwnedFd;
use std::rc::Rc;

use tokio::io::unix::AsyncFd;
use tokio::sync::watch;

use crate::clock::Clock;

use super::state::Shared;
use super::wakes::Wakes;

/// What every connection task shares.
#[derive(Debug)]
pub struct Ctx {
    pub shared: Rc<RefCell<Shared>>,
    /// The session's clock (the one `shared` keeps), readable without a
    /// borrow: every task's "now" and timer deadlines come from it.
    pub clock: Clock,
    pub master: Rc<AsyncFd<OwnedFd>>,
    /// Bumped whenever the child's fate or a subscriber's eviction
    /// changes, the state reported changes, or output came that the pty
    /// reader could not write to every waiting subscriber itself.
    pub changed: watch::Receiver<()>,
    /// What bumps `changed`, for a connection that must wake the others
    /// (another terminal's size drawn for them, see `apply_size`).
    pub bump: Rc<watch::Sender<()>>,
    /// The signals the tasks wait on; the state's methods give them
    /// (`Shared::wakes`).
    pub wakes: Wakes,
    /// Bytes of INPUT payload held by all connections, complete or not,
    /// that the pty has not taken yet (bounded by
    /// `client::inbound::INPUT_HELD_LIMIT`).
    pub input_held: Cell<usize>,
    /// When the state tracker last looked at the session, for the tests
    /// that hold its timing to the millisecond.
    #[cfg(test)]
    pub last_look: Cell<Option<crate::clock::Instant>>,
}

impl Ctx {
    /// The context of a session whose state is `shared`, read from `master`
    /// (watched for reading only), with `changed` bumped by its pty reader.
    pub fn new(shared: Shared, master: AsyncFd<OwnedFd>, changed: Rc<watch::Sender<()>>) -> Ctx {
        Ctx {
            changed: changed.subscribe(),
            bump: changed,
            clock: shared.clock(),
            wakes: shared.wakes().clone(),
            shared: Rc::new(RefCell::new(shared)),
            master: Rc::new(master),
            input_held: Cell::new(0),
            #[cfg(test)]
            last_look: Cell::new(None),
        }
    }
}
