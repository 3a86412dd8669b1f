//! The other machines whose sessions the grid shows: each host's link
//! (`ssh HOST hm proxy`, mounted as a local socket dir and reconnected
//! when it drops), and what a look at them finds: the sessions of every
//! host that is up, the records of those that ended there, and which
//! hosts are down and why.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;

use crate::ended::Ended;
use crate::remote::{Host, Link, LinkState, Spawner};

/// The other machines' links, and which are down (told once each time).
pub struct Remotes {
    links: Vec<(String, Link)>,
    /// The hosts that went down, with since when (wall clock, ms): still
    /// down while their links try again.
    down: HashMap<String, u64>,
    /// The hosts that have been up since the dashboard started: one that
    /// comes up the first time is not "back".
    been_up: std::collections::HashSet<String>,
    /// Raised when a link's state changes.
    pub changed: Arc<tokio::sync::Notify>,
}

/// What [`Remotes::scan`] found.
#[derive(Debug, Default)]
pub struct RemoteScan {
    /// The sessions of every host that is up, as `host:id`.
    pub ids: Vec<String>,
    /// The records of the sessions that ended there, as `host:id`.
    pub ended: Vec<Ended>,
    /// Hosts that are not up, by name: why, for their panes.
    pub problems: HashMap<String, String>,
    /// Hosts that were up and went down, with since when (wall clock, ms):
    /// what their panes show is as of then.
    pub down: HashMap<String, u64>,
    /// What changed, to tell: a host back, or why one went down.
    pub news: Vec<String>,
}

impl Remotes {
    /// Starts every host's link; a link that comes up or goes down raises
    /// [`Remotes::changed`] at once, not at the next tick, so the first
    /// paint of a host's panes is when it is mounted.
    pub fn start(hosts: &[Host], ssh_command: &str) -> Result<Remotes> {
        let changed = Arc::new(tokio::sync::Notify::new());
        let mut links = Vec::new();
        for host in hosts {
            let notify = changed.clone();
            let link = Link::start(host, ssh_command, move || notify.notify_one())?;
            links.push((host.name.clone(), link));
        }
        Ok(Remotes {
            links,
            down: HashMap::new(),
            been_up: Default::default(),
            changed,
        })
    }

    /// Where each host's sessions' sockets are (its mount).
    pub fn dirs(&self) -> Vec<(String, PathBuf)> {
        self.links
            .iter()
            .map(|(name, link)| (name.clone(), link.dir().to_path_buf()))
            .collect()
    }

    /// Each host's way to start a session (`n` with `host:id`).
    pub fn spawners(&self) -> Vec<(String, Spawner)> {
        self.links
            .iter()
            .map(|(name, link)| (name.clone(), link.spawner()))
            .collect()
    }

    /// What every host holds now. A host that is down keeps its panes
    /// (their connections closed); they come back with a fresh replay once
    /// it is up again.
    pub fn scan(&mut self) -> RemoteScan {
        let mut found = RemoteScan::default();
        for (name, link) in &self.links {
            match link.state() {
                LinkState::Up => {
                    let (live, _) = crate::liveness::scan(link.dir());
                    found
                        .ids
                        .extend(live.iter().map(|id| format!("{name}:{id}")));
                    found
                        .ended
                        .extend(crate::ended::records(link.dir()).into_iter().map(|mut r| {
                            r.id = format!("{name}:{}", r.id);
                            r
                        }));
                    let first = self.been_up.insert(name.clone());
                    match (self.down.remove(name).is_some(), first) {
                        (true, false) => found.news.push(format!(
                            "{name} is back: its panes are shown from the start again"
                        )),
                        (true, true) => found.news.push(format!("{name} is reachable now")),
                        (false, _) => {}
                    }
                }
                LinkState::Down {
                    since_unix_ms, why, ..
                } => {
                    if !self.down.contains_key(name) {
                        self.down.insert(name.clone(), since_unix_ms);
                        found.news.push(why.clone());
                    }
                    found.problems.insert(
                        name.clone(),
                        format!(
                            "{name}: unreachable since {}, retrying",
                            crate::clock::local_time_of_day(since_unix_ms)
                        ),
                    );
                }
                LinkState::Connecting => {
                    found
                        .problems
                        .insert(name.clone(), format!("{name}: connecting"));
                }
            }
        }
        found.down = self.down.clone();
        found
    }
}
