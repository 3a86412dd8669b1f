//! What the socket dir and the other machines hold now, as messages for
//! the model: the sessions with a live supervisor, the orphaned ones, the
//! records of those that ended, and the hosts that are down. Read on the
//! dashboard's tick and when a link changes; the model decides what the
//! news means.

use std::path::Path;

use crate::liveness;

use super::model::{Model, Msg};
use super::remotes::Remotes;

/// Everything found, in the order the model takes it: the hosts' state
/// first, so a pane of a host that went down is not taken for ended. The
/// model is read to know which lost sessions have a pane already.
pub fn discover(dir: &Path, remotes: &mut Remotes, m: &Model) -> Vec<Msg> {
    let (mut ids, orphans) = liveness::scan(dir);
    let running: std::collections::HashSet<&str> = ids.iter().map(String::as_str).collect();
    let mut ended = crate::ended::list_besides(dir, |id| running.contains(id));
    let remote = remotes.scan();
    ids.extend(remote.ids);
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
        Msg::Lost(lost(m, dir)),
    ]
}

/// The sessions lost with their supervisor (`hm restore`'s), each with the
/// end of its old output when it gets a pane now.
fn lost(m: &Model, dir: &Path) -> Vec<super::model::LostFound> {
    /// The old output a new pane of a lost session shows.
    const TAIL: usize = 64 * 1024;
    let state = crate::restore::sessions_dir();
    crate::lost::list(dir)
        .into_iter()
        .map(|l| {
            let tail = match (&state, m.pane(&l.id)) {
                (Some(state), None) => crate::restore::history::read(state, &l.id, TAIL)
                    .ok()
                    .flatten()
                    .map(|h| h.bytes)
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            super::model::LostFound { lost: l, tail }
        })
        .collect()
}
