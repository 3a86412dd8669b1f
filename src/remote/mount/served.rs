//! The local side of a mount: for each remote session a socket that the
//! mount serves and a pid file whose lock it holds, and the records of
//! the sessions that ended there, kept in line with the host's list.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;

use crate::paths;
use crate::remote::mux::Sessions;

/// A mounted session: its pid file's lock (held: the session runs) and
/// the task accepting on its socket.
#[derive(Debug)]
pub(super) struct Served {
    _lock: nix::fcntl::Flock<std::fs::File>,
    accept: tokio::task::JoinHandle<()>,
    paths: paths::SessionPaths,
}

impl Drop for Served {
    fn drop(&mut self) {
        // Files first, then the lock: a client that finds the lock free
        // finds no socket either, as with a supervisor that ended.
        self.accept.abort();
        let _ = std::fs::remove_file(&self.paths.sock);
        let _ = std::fs::remove_file(&self.paths.pid);
    }
}

/// Brings the mount in line with `now`: sessions that ended are taken
/// down, new ones served, and records of ended ones copied.
pub(super) fn remount(
    dir: &Path,
    now: &Sessions,
    mounted: &mut HashMap<String, Served>,
    accepted: &mpsc::UnboundedSender<(String, UnixStream)>,
) {
    // The records first, as a supervisor writes its record before it
    // lets go of its lock: a client that sees a session's lock go (`hm
    // kill`, `hm attach`) finds how it ended, not nothing. The mount's
    // records follow the host's: new or changed ones written
    // (only those: a write is a file synced to disk, and the host is
    // listed every 2 s), and those forgotten there, or of sessions started
    // again, removed.
    let mut here: HashMap<String, crate::ended::Ended> = crate::ended::records(dir)
        .into_iter()
        .map(|r| (r.id.clone(), r))
        .collect();
    for record in &now.ended {
        if let Ok(r) = serde_json::from_value::<crate::ended::Ended>(record.clone())
            && paths::validate_id(&r.id).is_ok()
            && here.remove(&r.id).as_ref() != Some(&r)
        {
            let _ = crate::ended::write(dir, &r);
        }
    }
    for id in here.keys() {
        let _ = crate::ended::remove(dir, id);
    }
    mounted.retain(|id, _| now.running.contains(id));
    for id in &now.running {
        if !mounted.contains_key(id) {
            match serve_session(dir, id, accepted.clone()) {
                Ok(s) => {
                    mounted.insert(id.clone(), s);
                }
                Err(e) => tracing::debug!("cannot mount {id}: {e}"),
            }
        }
    }
}

/// Makes `<id>.sock` and a locked `<id>.pid` in `dir`, and hands every
/// connection to the socket to `accepted`.
fn serve_session(
    dir: &Path,
    id: &str,
    accepted: mpsc::UnboundedSender<(String, UnixStream)>,
) -> std::io::Result<Served> {
    let p = paths::SessionPaths::new(dir, id).map_err(std::io::Error::other)?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .read(true)
        .open(&p.pid)?;
    let lock = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock)
        .map_err(|(_, e)| std::io::Error::from(e))?;
    let listener = UnixListener::bind(&p.sock)?;
    std::fs::set_permissions(&p.sock, std::fs::Permissions::from_mode(0o600))?;
    let name = id.to_owned();
    let accept = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            if accepted.send((name.clone(), stream)).is_err() {
                return;
            }
        }
    });
    Ok(Served {
        _lock: lock,
        accept,
        paths: p,
    })
}
