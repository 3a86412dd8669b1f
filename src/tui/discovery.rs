//! What the socket dir and the other machines hold now, as messages for
//! the model: the sessions with a live supervisor, the orphaned ones, the
//! records of those that ended, and the hosts that are down. Read on the
//! dashboard's tick and when a link changes; the model decides what the
//! news means.

use std::path::Path;

use crate::liveness::{self, Liveness};
use crate::paths::{self, SessionPaths};

use super::model::Msg;
use super::remotes::Remotes;

/// Everything found, in the order the model takes it: the hosts' state
/// first, so a pane of a host that went down is not taken for ended.
pub fn discover(dir: &Path, remotes: &mut Remotes) -> Vec<Msg> {
    let (mut ids, orphans) = scan(dir);
    let remote = remotes.scan();
    ids.extend(remote.ids);
    let mut ended = crate::supervisor::ended::list(dir);
    ended.extend(remote.ended);
    vec![
        Msg::Hosts {
            problems: remote.problems,
            down: remote.down,
            news: remote.news,
        },
        Msg::Found(ids),
        Msg::Orphans(orphans),
        Msg::Ended(ended),
    ]
}

/// Ids with a live supervisor (their pid file's lock is held), and ids
/// whose program outlived its supervisor.
pub fn scan(dir: &Path) -> (Vec<String>, Vec<String>) {
    let (mut live, mut orphans) = (Vec::new(), Vec::new());
    for id in paths::list_ids(dir).unwrap_or_default() {
        let Ok(p) = SessionPaths::new(dir, &id) else {
            continue;
        };
        match liveness::probe(&p.pid, &p.sock, false) {
            Liveness::Running => live.push(id),
            Liveness::Orphaned(_) => orphans.push(id),
            Liveness::Stale | Liveness::Missing => {}
        }
    }
    (live, orphans)
}
