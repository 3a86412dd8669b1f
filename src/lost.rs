//! Sessions lost with their supervisor (the machine restarted, the
//! supervisor was killed): which there are in a socket dir, from the
//! manifests kept in the state dir ([`crate::restore`]), and what
//! `hm restore` runs for each ([`plan`], with an agent's resume command
//! from [`resume`]). `hm ls`, `hm rm`, `hm clean`,
//! `hm restore` and the dashboard read them here.

pub mod plan;
pub mod resume;

use std::path::Path;

use crate::restore::manifest::{self, Manifest};

/// A session of this socket dir and this machine whose supervisor went
/// away without ending it, and that nothing holds now.
#[derive(Debug, Clone)]
pub struct Lost {
    pub id: String,
    pub manifest: Manifest,
    /// Why `hm restore` would not start it again, when it would not
    /// ([`plan::plan`] has no way, or [`plan::check`] misses what it
    /// needs).
    pub refusal: Option<String>,
}

impl Lost {
    /// `hm restore` would start it again.
    pub fn restartable(&self) -> bool {
        self.refusal.is_none()
    }
}

/// The lost sessions of socket dir `dir`, in id order.
pub fn list(dir: &Path) -> Vec<Lost> {
    list_besides(dir, |_| false)
}

/// [`list`], for a caller that already knows which ids are `running`
/// (they answered it): their manifests are not read, nor their pid files
/// tried. `hm ls` of 50 sessions read 50 manifests and locked 50 pid
/// files only to find every one of them alive.
pub fn list_besides(dir: &Path, running: impl Fn(&str) -> bool) -> Vec<Lost> {
    let Some(state) = crate::restore::sessions_dir() else {
        return Vec::new();
    };
    let host = crate::restore::host_name();
    manifest::ids(&state)
        .into_iter()
        .filter(|id| !running(id))
        .filter_map(|id| lost_in(&state, &host, dir, id))
        .collect()
}

/// Session `id` of socket dir `dir`, if it is lost: what a new session
/// of the id would take over (`hm run --id` asks).
pub fn get(dir: &Path, id: &str) -> Option<Lost> {
    let state = crate::restore::sessions_dir()?;
    lost_in(&state, &crate::restore::host_name(), dir, id.to_owned())
}

/// Whether session `id` of socket dir `dir` is lost, for a caller that
/// needs only that (`hm run` choosing a free name): [`get`] without
/// working out whether `hm restore` could start it, which looks on PATH.
pub fn holds(dir: &Path, id: &str) -> bool {
    crate::restore::sessions_dir()
        .is_some_and(|state| lost_manifest(&state, &crate::restore::host_name(), dir, id).is_some())
}

/// Session `id`, kept in state dir `state`, if it is a lost session of
/// socket dir `dir` on machine `host`.
fn lost_in(state: &Path, host: &str, dir: &Path, id: String) -> Option<Lost> {
    let m = lost_manifest(state, host, dir, &id)?;
    // As `hm restore` would find it now: its directory and its program
    // still there.
    let refusal = plan::now(&m).err().map(|why| why.to_string());
    Some(Lost {
        refusal,
        id,
        manifest: m,
    })
}

/// The manifest of session `id`, if it is a lost session of socket dir
/// `dir` on machine `host`.
fn lost_manifest(state: &Path, host: &str, dir: &Path, id: &str) -> Option<Manifest> {
    let m = manifest::read(state, id).ok()?;
    let here = Path::new(&m.socket_dir) == dir && (m.host.is_empty() || m.host == host);
    (here && m.lost() && !crate::liveness::held(dir, id)).then_some(m)
}

/// Whether any of `lost` is listed for the first time: `hm ls` says how
/// to bring lost sessions back when it first lists them, not at every
/// listing (its STATE column says lost after). The sessions listed are
/// remembered in the state dir by instance, so one lost again later is
/// new; a file that cannot be read or written says true (the hint twice
/// rather than never).
pub fn first_listed<'a>(lost: impl IntoIterator<Item = &'a Manifest>) -> bool {
    let Some(state) = crate::restore::sessions_dir() else {
        return true;
    };
    let file = state.with_file_name("lost-listed");
    let old = std::fs::read_to_string(&file).unwrap_or_default();
    let keys: Vec<String> = lost
        .into_iter()
        .map(|m| format!("{} {}", m.id, m.instance))
        .collect();
    let new = keys.iter().any(|k| !old.lines().any(|o| o == k));
    if new {
        // Those whose manifest went (restored, forgotten) are dropped.
        let ids = manifest::ids(&state);
        let mut kept: std::collections::BTreeSet<&str> = old
            .lines()
            .filter(|k| {
                k.split_once(' ')
                    .is_some_and(|(id, _)| ids.iter().any(|i| i == id))
            })
            .collect();
        kept.extend(keys.iter().map(String::as_str));
        let text: String = kept.into_iter().map(|k| format!("{k}\n")).collect();
        let tmp = file.with_extension(format!("{}.tmp", std::process::id()));
        if std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, &file))
            .is_err()
        {
            let _ = std::fs::remove_file(&tmp);
        }
    }
    new
}
