//! Starting and forgetting sessions on a [`super::Link`]'s host, from any
//! thread (the dashboard's `n`, `r` and `x`).

use std::time::Duration;

use tokio::sync::mpsc;

use super::LinkState;
use crate::remote::mount::Request;
use crate::remote::mux;

/// Starts sessions on a [`Link`]'s host (the dashboard's `n` with a host);
/// cheap to clone, usable from any thread.
#[derive(Debug, Clone)]
pub struct Spawner {
    name: String,
    tx: mpsc::UnboundedSender<Request>,
    state: std::sync::Arc<std::sync::Mutex<LinkState>>,
}

impl Spawner {
    pub(super) fn new(
        name: String,
        tx: mpsc::UnboundedSender<Request>,
        state: std::sync::Arc<std::sync::Mutex<LinkState>>,
    ) -> Spawner {
        Spawner { name, tx, state }
    }

    /// Starts `req` there and waits until the session is served here too.
    pub fn spawn(&self, req: mux::NewSession) -> Result<(), String> {
        self.usable()?;
        let (tx, rx) = std::sync::mpsc::channel();
        self.tx
            .send(Request::New(req, tx))
            .map_err(|_| format!("{}: the link stopped", self.name))?;
        rx.recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| Err(format!("{}: no answer", self.name)))
    }

    /// Ok if the host is up; else why not, for a person.
    fn usable(&self) -> Result<(), String> {
        match self.state.lock().map(|s| s.clone()) {
            Ok(LinkState::Up) => Ok(()),
            Ok(LinkState::Connecting) => Err(format!(
                "{} is still connecting; try again in a moment",
                self.name
            )),
            _ => Err(format!("{} is unreachable", self.name)),
        }
    }

    /// Whether the link's host is up: its sessions served here.
    pub fn up(&self) -> bool {
        self.state.lock().is_ok_and(|s| *s == LinkState::Up)
    }

    /// Forgets the record of ended session `id` there (`hm rm`), without
    /// waiting: the host's next list no longer has it.
    pub fn forget(&self, id: &str) -> Result<(), String> {
        self.usable()?;
        self.tx
            .send(Request::Forget(id.to_owned()))
            .map_err(|_| format!("{}: the link stopped", self.name))
    }
}
