//! What survives a reboot: for every session, a manifest (what it runs,
//! where, at what size, and the agent's own conversation id once known)
//! and the tail of its output, kept in the user's state directory
//! (`$XDG_STATE_HOME/heimdall/sessions/`, by default
//! `~/.local/state/heimdall/sessions/`), which outlives the socket dir's
//! tmpfs. `hm restore` reads them to start lost sessions again.
//!
//! - [`manifest`]: the record, a versioned JSON file per session, written
//!   whole (a temporary file synced, renamed, and the directory synced).
//! - [`history`]: the output's tail, a file per session appended to at
//!   most once a second, and the mark a restored session shows after it.
//!
//! The supervisor writes them (`supervisor/keeper.rs`), `hm restore`
//! (`cmd/restore.rs`) reads them; nothing here knows about sockets or the
//! event loop. Nothing secret is written: the
//! `[[env]]` names but never their values, of the environment the session
//! started in only what is not named as a secret ([`environ`]), no hook
//! payload but the agent's session id.

pub mod environ;
pub mod history;
pub mod manifest;

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The directory of manifests and histories: `$XDG_STATE_HOME` when it is
/// an absolute path (as the XDG spec asks), else `$HOME/.local/state`;
/// `None` without either.
pub fn sessions_dir() -> Option<PathBuf> {
    sessions_dir_in(
        std::env::var_os("XDG_STATE_HOME").as_deref(),
        std::env::var_os("HOME").as_deref(),
    )
}

/// [`sessions_dir`] from the two variables' values (pure).
pub fn sessions_dir_in(
    xdg_state_home: Option<&std::ffi::OsStr>,
    home: Option<&std::ffi::OsStr>,
) -> Option<PathBuf> {
    let state = match xdg_state_home.map(Path::new) {
        Some(p) if p.is_absolute() => p.to_path_buf(),
        _ => {
            let home = Path::new(home?);
            if !home.is_absolute() {
                return None;
            }
            home.join(".local/state")
        }
    };
    Some(state.join("heimdall").join("sessions"))
}

/// Creates the sessions dir (and `heimdall` above it) 0700 if needed, and
/// checks it is a directory of ours that nobody else may read: it names
/// every command and directory the user ran sessions in.
pub fn ensure_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let meta = fs::symlink_metadata(dir)?;
    if !meta.is_dir() {
        return Err(io::Error::other(format!(
            "'{}' is not a directory",
            dir.display()
        )));
    }
    if meta.uid() != nix::unistd::geteuid().as_raw() {
        return Err(io::Error::other(format!(
            "'{}' belongs to another user",
            dir.display()
        )));
    }
    if meta.mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Where `program` is found on `PATH` now, for the manifest.
pub fn find_on_path(program: &std::ffi::OsStr) -> Option<std::path::PathBuf> {
    let given = Path::new(program);
    if given.components().count() > 1 {
        // A relative path is the workdir's business; an absolute one is
        // where it is.
        return (given.is_absolute() && is_executable(given)).then(|| given.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// This machine's name, as the kernel has it: a state dir shared between
/// machines (a home on NFS) holds the sessions of each, and each restores
/// only its own.
pub fn host_name() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_default()
}

/// This boot's id: a manifest written in another boot is of a session
/// the machine's restart took away.
pub fn boot_id() -> String {
    fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|b| b.trim().to_owned())
        .unwrap_or_default()
}

/// The manifest of session `id` of `socket_dir`, if one can be read.
pub fn kept(id: &str, socket_dir: &Path) -> Option<manifest::Manifest> {
    let m = manifest::read(&sessions_dir()?, id).ok()?;
    (Path::new(&m.socket_dir) == socket_dir).then_some(m)
}

/// Forgets what is kept of session `id` of `socket_dir`: its manifest and
/// history, if the manifest is of that socket dir (another dir's session
/// of the same id keeps its own). A manifest that cannot be read is left
/// alone: what hm cannot read it does not delete.
pub fn forget(id: &str, socket_dir: &Path) {
    if let (Some(dir), Some(_)) = (sessions_dir(), kept(id, socket_dir)) {
        manifest::remove(&dir, id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn the_state_dir_follows_xdg_then_home() {
        assert_eq!(
            sessions_dir_in(Some(OsStr::new("/s")), Some(OsStr::new("/h"))),
            Some(PathBuf::from("/s/heimdall/sessions"))
        );
        // A relative XDG_STATE_HOME is ignored, as the spec says.
        assert_eq!(
            sessions_dir_in(Some(OsStr::new("s")), Some(OsStr::new("/h"))),
            Some(PathBuf::from("/h/.local/state/heimdall/sessions"))
        );
        assert_eq!(sessions_dir_in(None, None), None);
        assert_eq!(sessions_dir_in(None, Some(OsStr::new("h"))), None);
    }

    #[test]
    fn the_dir_is_made_private() {
        let root = tempfile::tempdir().expect("tempdir");
        let dir = root.path().join("state/heimdall/sessions");
        ensure_dir(&dir).expect("made");
        let mode = fs::metadata(&dir).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).expect("chmod");
        ensure_dir(&dir).expect("again");
        let mode = fs::metadata(&dir).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "closed again");
        let file = root.path().join("f");
        fs::write(&file, "").expect("write");
        assert!(ensure_dir(&file).is_err());
    }
}
