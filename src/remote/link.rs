//! The dashboard's hold on a host: a [`Link`] keeps it mounted in the
//! background, reconnects when it drops, and says where it stands
//! ([`LinkState`]); its [`Spawner`] starts and forgets sessions there.

mod spawner;

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::host::Host;
use super::mount::{self, MountError, Outcome, Request};
pub use spawner::Spawner;

/// Where a [`Link`] stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkState {
    /// Connecting, for the first time or again.
    Connecting,
    /// The remote sessions are served in the link's directory.
    Up,
    /// Down since `since` (wall clock, ms) for `why`; the next try is at
    /// `retry_unix_ms`.
    Down {
        since_unix_ms: u64,
        why: String,
        retry_unix_ms: u64,
    },
}

/// The first and the longest wait between tries to reach a host.
const BACKOFF_FIRST: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(30);
/// How often a link asks for the list of sessions, so new ones appear.
const WATCH_EVERY: Duration = Duration::from_secs(2);

/// A host kept mounted for as long as this lives: connected in the
/// background, reconnected with backoff when it drops, always in the
/// same directory (so a session keeps its socket path across
/// reconnects). `changed` is called on every change of state or of the
/// sessions mounted, from the link's own thread.
#[derive(Debug)]
pub struct Link {
    dir: PathBuf,
    state: std::sync::Arc<std::sync::Mutex<LinkState>>,
    spawner: Spawner,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Link {
    pub fn start(
        host: &Host,
        ssh_command: &str,
        changed: impl Fn() + Send + 'static,
    ) -> Result<Link, MountError> {
        let dir = mount::mount_dir(host)?;
        let state = std::sync::Arc::new(std::sync::Mutex::new(LinkState::Connecting));
        let (spawn_tx, mut spawn_rx) = mpsc::unbounded_channel::<Request>();
        let spawner = Spawner::new(host.name.clone(), spawn_tx, state.clone());
        let (stop_tx, mut stop_rx) = oneshot::channel();
        let (h, c, d, st) = (
            host.clone(),
            ssh_command.to_owned(),
            dir.clone(),
            state.clone(),
        );
        let thread = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            let set = |s: LinkState| {
                if let Ok(mut cur) = st.lock() {
                    *cur = s;
                }
                changed();
            };
            rt.block_on(async {
                let mut wait = BACKOFF_FIRST;
                let mut down_since: Option<u64> = None;
                loop {
                    set(LinkState::Connecting);
                    let why = match mount::connect(&h, &c).await {
                        Ok(conn) => {
                            wait = BACKOFF_FIRST;
                            let lost = |o: &Outcome| match o {
                                Outcome::Stopped => None,
                                Outcome::Lost(said) if said.is_empty() => {
                                    Some(format!("{}: the connection ended", h.name))
                                }
                                Outcome::Lost(said) => {
                                    Some(format!("{}: the connection ended: {said}", h.name))
                                }
                            };
                            // Down before the sessions' sockets close, so a
                            // client that sees its connection end can tell a
                            // host gone from a session that ended.
                            let lost_at = std::cell::Cell::new(None);
                            let went_down = |o: &Outcome| {
                                if let Some(why) = lost(o) {
                                    let now = crate::clock::unix_ms();
                                    lost_at.set(Some(now));
                                    set(LinkState::Down {
                                        since_unix_ms: now,
                                        why,
                                        retry_unix_ms: now + wait.as_millis() as u64,
                                    });
                                }
                            };
                            let outcome = mount::serve(
                                conn,
                                &d,
                                &mut stop_rx,
                                Some((WATCH_EVERY, &mut spawn_rx)),
                                None,
                                // Up once its sessions can be connected to.
                                &|| set(LinkState::Up),
                                &went_down,
                            )
                            .await;
                            match lost(&outcome) {
                                Some(why) => {
                                    down_since = lost_at.get();
                                    why
                                }
                                None => return,
                            }
                        }
                        Err(e) => e.to_string(),
                    };
                    let now = crate::clock::unix_ms();
                    let since = *down_since.get_or_insert(now);
                    set(LinkState::Down {
                        since_unix_ms: since,
                        why,
                        retry_unix_ms: now + wait.as_millis() as u64,
                    });
                    tokio::select! {
                        _ = &mut stop_rx => return,
                        () = tokio::time::sleep(wait) => {}
                    }
                    wait = (wait * 2).min(BACKOFF_MAX);
                }
            });
        });
        Ok(Link {
            dir,
            state,
            spawner,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    /// The directory the host's sessions are served in (empty while down).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Starts sessions on this link's host.
    pub fn spawner(&self) -> Spawner {
        self.spawner.clone()
    }

    pub fn state(&self) -> LinkState {
        self.state
            .lock()
            .map_or(LinkState::Connecting, |s| s.clone())
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
