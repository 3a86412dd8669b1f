//! A [`super::Link`]'s handle for the dashboard, usable from any thread:
//! starts and forgets sessions on its host (`n`, `r` and `x`), and says
//! whether (or once) the host is up.

use std::time::Duration;

use tokio::sync::mpsc;

use super::LinkState;
use crate::remote::mount::Request;
use crate::remote::mux;

/// Starts sessions on a [`super::Link`]'s host (the dashboard's `n` with a
/// host); cheap to clone, usable from any thread.
#[derive(Debug, Clone)]
pub struct Spawner {
    name: String,
    tx: mpsc::UnboundedSender<Request>,
    state: tokio::sync::watch::Receiver<LinkState>,
}

impl Spawner {
    pub(super) fn new(
        name: String,
        tx: mpsc::UnboundedSender<Request>,
        state: tokio::sync::watch::Receiver<LinkState>,
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
        match *self.state.borrow() {
            LinkState::Up => Ok(()),
            LinkState::Connecting => Err(format!(
                "{} is still connecting; try again in a moment",
                self.name
            )),
            _ => Err(format!("{} is unreachable", self.name)),
        }
    }

    /// Whether the link's host is up: its sessions served here.
    pub fn up(&self) -> bool {
        *self.state.borrow() == LinkState::Up
    }

    /// Returns once the link's host is up (at once if it is), or never if
    /// the link has stopped: for a connection to one of its sessions that
    /// waits to be made again as soon as it can be.
    pub async fn until_up(&self) {
        let mut state = self.state.clone();
        if state.wait_for(|s| *s == LinkState::Up).await.is_err() {
            std::future::pending::<()>().await;
        }
    }

    /// Forgets the record of ended session `id` there (`hm rm`), without
    /// waiting: the host's next list no longer has it.
    pub fn forget(&self, id: &str) -> Result<(), String> {
        self.usable()?;
        self.tx
            .send(Request::Forget(id.to_owned(), None))
            .map_err(|_| format!("{}: the link stopped", self.name))
    }

    /// Forgets the record of ended session `id` there, and returns once
    /// the host's list no longer has it (`hm rm HOST:ID`).
    pub fn forget_now(&self, id: &str) -> Result<(), String> {
        self.usable()?;
        let (tx, rx) = std::sync::mpsc::channel();
        self.tx
            .send(Request::Forget(id.to_owned(), Some(tx)))
            .map_err(|_| format!("{}: the link stopped", self.name))?;
        rx.recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| Err(format!("{}: no answer", self.name)))
    }

    /// Starts ended session `r` there again, with its words as they ran,
    /// in its directory, with its label and classifier (`r` in the
    /// dashboard, `hm restart HOST:ID`).
    pub fn restart(&self, r: crate::ended::Ended) -> Result<(), String> {
        self.spawn(mux::NewSession {
            id: r.id,
            // The line is for a proxy of an older hm, which runs it by
            // `sh -c`; a newer one runs `argv` as it is.
            command: crate::launch::command_line(&r.command),
            argv: Some(r.command),
            workdir: Some(r.workdir),
            label: r.label,
            classifier: Some(r.classifier),
            size: None,
            restart: true,
            background: false,
        })
    }
}
