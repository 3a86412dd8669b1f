//! The dashboard's hold on a host: a [`Link`] keeps it mounted in the
//! background, reconnects when it drops, and says where it stands
//! ([`LinkState`]); its [`Spawner`] starts and forgets sessions there.

mod spawner;

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};

use super::mount::{self, MountError, Outcome, Request};
use crate::host::Host;
pub use spawner::Spawner;

/// Where a [`Link`] stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkState {
    /// Connecting for the first time.
    Connecting,
    /// The remote sessions are served in the link's directory.
    Up,
    /// Not reachable since `since_unix_ms` (wall clock: when it dropped,
    /// or the first try failed), last for `why`; it stays so while it is
    /// tried again, and the next try is at `retry_unix_ms`.
    Down {
        since_unix_ms: u64,
        why: String,
        retry_unix_ms: u64,
    },
}

/// How often a link asks for the list of sessions, so new ones appear.
const WATCH_EVERY: Duration = Duration::from_secs(2);

/// When to try a host again: soon, then less often; but a host that has
/// been up is tried at least every [`Backoff::SEEN_MAX`], so that it is
/// back in the grid within 5 s of being reachable again (the wait, then
/// ssh's own connection set-up, a second or two).
#[derive(Debug, Clone)]
struct Backoff {
    next: Duration,
    seen: bool,
}

impl Backoff {
    const FIRST: Duration = Duration::from_secs(1);
    const SEEN_MAX: Duration = Duration::from_secs(3);
    /// A host never reached (a typo, a machine that is off) costs a try
    /// every this often at most.
    const UNSEEN_MAX: Duration = Duration::from_secs(30);

    fn new() -> Backoff {
        Backoff {
            next: Backoff::FIRST,
            seen: false,
        }
    }

    /// The host was up: the next drop is tried again soon.
    fn up(&mut self) {
        self.seen = true;
        self.next = Backoff::FIRST;
    }

    /// How long to wait before the next try.
    fn wait(&mut self) -> Duration {
        let max = if self.seen {
            Backoff::SEEN_MAX
        } else {
            Backoff::UNSEEN_MAX
        };
        let wait = self.next.min(max);
        self.next = (wait * 2).min(max);
        wait
    }
}

/// A host kept mounted for as long as this lives: connected in the
/// background, reconnected with backoff when it drops, always in the
/// same directory (so a session keeps its socket path across
/// reconnects). `changed` is called on every change of state or of the
/// sessions mounted, from the link's own thread.
#[derive(Debug)]
pub struct Link {
    dir: PathBuf,
    state: watch::Receiver<LinkState>,
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
        let (state_tx, state) = watch::channel(LinkState::Connecting);
        let (spawn_tx, spawn_rx) = mpsc::unbounded_channel::<Request>();
        let spawner = Spawner::new(host.name.clone(), spawn_tx, state.clone());
        let (stop_tx, stop_rx) = oneshot::channel();
        let keep = KeepUp {
            host: host.clone(),
            ssh_command: ssh_command.to_owned(),
            dir: dir.clone(),
            state: state_tx,
        };
        let thread = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(keep.run(&changed, spawn_rx, stop_rx));
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
        self.state.borrow().clone()
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

/// The link's thread: what it connects, and where it says how it stands.
struct KeepUp {
    host: Host,
    ssh_command: String,
    dir: PathBuf,
    state: watch::Sender<LinkState>,
}

impl KeepUp {
    /// Connects, serves, and connects again, until stopped.
    async fn run(
        self,
        changed: &dyn Fn(),
        mut spawns: mpsc::UnboundedReceiver<Request>,
        mut stop: oneshot::Receiver<()>,
    ) {
        let set = |s: LinkState| {
            self.state.send_replace(s);
            changed();
        };
        let lost_why = |said: &str| mount::lost_why(&self.host.name, said);
        let mut backoff = Backoff::new();
        let mut down_since: Option<u64> = None;
        loop {
            // Stopping does not wait for a try to end (a host that takes
            // its time to answer): dropped, it ends its ssh.
            let attempt = tokio::select! {
                r = mount::connect(&self.host, &self.ssh_command) => r,
                _ = &mut stop => return,
            };
            let why = match attempt {
                Ok(conn) => {
                    // Down before the sessions' sockets close, so a client
                    // that sees its connection end can tell a host gone
                    // from a session that ended.
                    let lost_at = std::cell::Cell::new(None);
                    let went_down = |o: &Outcome| {
                        if let Outcome::Lost(said, quiet) = o {
                            let now = crate::clock::unix_ms();
                            // Down since it was last heard from: a link
                            // that went silent is judged so only after
                            // its silence limit.
                            let since = now.saturating_sub(quiet.as_millis() as u64);
                            lost_at.set(Some(since));
                            set(LinkState::Down {
                                since_unix_ms: since,
                                why: lost_why(said),
                                retry_unix_ms: now + Backoff::FIRST.as_millis() as u64,
                            });
                        }
                    };
                    let outcome = mount::serve(
                        conn,
                        &self.dir,
                        &mut stop,
                        Some((WATCH_EVERY, &mut spawns)),
                        None,
                        // Up once its sessions can be connected to.
                        &|| set(LinkState::Up),
                        &went_down,
                    )
                    .await;
                    let Outcome::Lost(said, _) = outcome else {
                        return;
                    };
                    backoff.up();
                    down_since = lost_at.get();
                    lost_why(&said)
                }
                Err(e) => e.to_string(),
            };
            let wait = backoff.wait();
            let now = crate::clock::unix_ms();
            set(LinkState::Down {
                since_unix_ms: *down_since.get_or_insert(now),
                why,
                retry_unix_ms: now + wait.as_millis() as u64,
            });
            tokio::select! {
                _ = &mut stop => return,
                () = tokio::time::sleep(wait) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waits(b: &mut Backoff, n: usize) -> Vec<u64> {
        (0..n).map(|_| b.wait().as_secs()).collect()
    }

    #[test]
    fn a_host_that_was_up_is_tried_at_least_every_three_seconds() {
        let mut b = Backoff::new();
        b.up();
        assert_eq!(waits(&mut b, 5), [1, 2, 3, 3, 3]);
        // Up again, and dropped again: soon first, as before.
        b.up();
        assert_eq!(waits(&mut b, 2), [1, 2]);
    }

    #[test]
    fn a_host_never_reached_is_tried_less_and_less_often() {
        let mut b = Backoff::new();
        assert_eq!(waits(&mut b, 7), [1, 2, 4, 8, 16, 30, 30]);
        // Reached after all: from then on as one that was up.
        b.up();
        assert_eq!(waits(&mut b, 4), [1, 2, 3, 3]);
    }
}
