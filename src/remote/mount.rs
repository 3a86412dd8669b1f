//! One command's view of another machine: runs `ssh HOST hm proxy` and
//! mounts the remote sessions as a socket directory of this machine (see
//! [`super`]), for as long as the [`Mount`] lives.
//!
//! The parts: `ssh` owns the ssh process (and ends all it started),
//! `connect` runs it and greets the proxy, `serve` relays the
//! bridge's channels, `served` keeps the local directory in line with
//! the remote list. A [`super::Link`] uses the same parts, again and
//! again, for the dashboard.

mod connect;
mod serve;
mod served;
mod ssh;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;

use super::mux::Sessions;
use crate::host::Host;
use crate::paths::SocketDir;

pub(in crate::remote) use connect::connect;
pub(in crate::remote) use serve::{Outcome, Request, serve};

/// How long ssh and the remote `hm` may take to say hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(20);
/// The environment variable that overrides `ssh_command`, as
/// `GIT_SSH_COMMAND` does git's.
pub const SSH_COMMAND_ENV: &str = "HM_SSH_COMMAND";

#[derive(Debug, thiserror::Error)]
pub enum MountError {
    #[error(transparent)]
    BadHost(#[from] crate::host::BadHost),
    #[error("{host}: cannot run the ssh command '{command}': {source}")]
    Spawn {
        host: String,
        command: String,
        source: std::io::Error,
    },
    #[error("{host}: ssh could not connect: {said}")]
    Ssh { host: String, said: String },
    #[error(
        "{host}: no '{hm}' on the remote PATH ({said}); install hm there, or set `hm` for this host in heimdall.toml's [[hosts]]"
    )]
    NoRemoteHm {
        host: String,
        hm: String,
        said: String,
    },
    #[error("{host}: the remote hm cannot serve this one ({said}); update hm there to {ours}")]
    Incompatible {
        host: String,
        said: String,
        ours: String,
    },
    #[error("{host}: no answer from ssh within {} s", HELLO_TIMEOUT.as_secs())]
    Timeout { host: String },
    #[error("{host}: the connection ended: {said}")]
    Lost { host: String, said: String },
    #[error("cannot make the local directory for {host}: {source}")]
    Dir {
        host: String,
        #[source]
        source: std::io::Error,
    },
}

/// The ssh command line to use: `HM_SSH_COMMAND`, else the config's
/// `ssh_command`, else `ssh`.
pub fn ssh_command(configured: Option<&str>) -> String {
    std::env::var(SSH_COMMAND_ENV)
        .ok()
        .filter(|s| !s.trim().is_empty())
        .or_else(|| configured.map(str::to_owned))
        .unwrap_or_else(|| "ssh".to_owned())
}

/// A remote machine's sessions, served from a local directory while this
/// lives.
#[derive(Debug)]
pub struct Mount {
    dir: PathBuf,
    sessions: Sessions,
    /// Why the connection ended, once it has.
    lost: Arc<Mutex<Option<String>>>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Mount {
    /// Connects to `host` and mounts its sessions; returns once they are
    /// served, or why they cannot be.
    pub fn start(host: &Host, ssh_command: &str) -> Result<Mount, MountError> {
        let dir = mount_dir(host)?;
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = oneshot::channel();
        let lost = Arc::new(Mutex::new(None));
        let (h, c, d, l) = (
            host.clone(),
            ssh_command.to_owned(),
            dir.clone(),
            lost.clone(),
        );
        let thread = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(run(h, c, d, ready_tx, stop_rx, l));
        });
        let mut mount = Mount {
            dir,
            sessions: Sessions::default(),
            lost,
            stop: Some(stop_tx),
            thread: Some(thread),
        };
        match ready_rx.recv() {
            Ok(Ok(sessions)) => {
                mount.sessions = sessions;
                Ok(mount)
            }
            Ok(Err(e)) => Err(e),
            Err(_) => Err(MountError::Lost {
                host: host.name.clone(),
                said: "the bridge stopped".into(),
            }),
        }
    }

    /// The directory to use as the socket dir.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// What the remote had when mounted.
    pub fn sessions(&self) -> &Sessions {
        &self.sessions
    }

    /// Why the connection ended, once it has (before the connections it
    /// served were closed): for a client to say so rather than blame the
    /// session.
    pub fn lost(&self) -> Option<String> {
        self.lost.lock().ok()?.clone()
    }
}

/// Why a host's connection ended, for a person: `box: the connection
/// ended: <what ssh or the bridge said>`.
pub(in crate::remote) fn lost_why(host: &str, said: &str) -> String {
    match said {
        "" => format!("{host}: the connection ended"),
        said => format!("{host}: the connection ended: {said}"),
    }
}

impl Drop for Mount {
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

/// A new private directory for `host`'s mount.
pub(in crate::remote) fn mount_dir(host: &Host) -> Result<PathBuf, MountError> {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let uid = nix::unistd::geteuid().as_raw();
    let temp = std::env::temp_dir();
    sweep(&temp, uid);
    let dir = temp.join(format!(
        "hm-remote-{uid}-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    SocketDir::ensure(&dir).map_err(|e| MountError::Dir {
        host: host.name.clone(),
        source: std::io::Error::other(e.to_string()),
    })?;
    Ok(dir)
}

/// Removes the mount directories of this user's processes that are gone
/// (killed, so their mounts could not remove their own): what
/// `hm-remote-UID-PID-N` names a dead PID of. A PID in use again keeps
/// its directory until that process ends too.
fn sweep(temp: &Path, uid: u32) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    let prefix = format!("hm-remote-{uid}-");
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|rest| rest.split_once('-'))
            .filter(|(_, seq)| seq.parse::<u32>().is_ok())
            .and_then(|(pid, _)| pid.parse::<i32>().ok())
            .filter(|&pid| pid > 0)
        else {
            continue;
        };
        let gone = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None)
            == Err(nix::errno::Errno::ESRCH);
        // Ours, and a directory rather than a link to one.
        let ours = entry
            .path()
            .symlink_metadata()
            .is_ok_and(|m| m.is_dir() && m.uid() == uid);
        if gone && ours {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// [`Mount`]'s thread: connect once, then serve.
async fn run(
    host: Host,
    ssh_command: String,
    dir: PathBuf,
    ready: serve::Ready,
    mut stop: oneshot::Receiver<()>,
    lost: Arc<Mutex<Option<String>>>,
) {
    match connect(&host, &ssh_command).await {
        Ok(c) => {
            let ending = |o: &Outcome| {
                if let (Outcome::Lost(said, _), Ok(mut lost)) = (o, lost.lock()) {
                    *lost = Some(lost_why(&host.name, said));
                }
            };
            let _ = serve(c, &dir, &mut stop, None, Some(ready), &|| {}, &ending).await;
        }
        Err(e) => {
            let _ = ready.send(Err(e));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_removes_the_mounts_of_processes_that_are_gone_and_only_those() {
        let temp = tempfile::tempdir().expect("temp dir");
        let uid = nix::unistd::geteuid().as_raw();
        let mut ended = std::process::Command::new("true").spawn().expect("true");
        let gone = ended.id();
        ended.wait().expect("wait");
        let here = std::process::id();
        let names = [
            format!("hm-remote-{uid}-{gone}-0"),
            format!("hm-remote-{uid}-{gone}-3"),
            format!("hm-remote-{uid}-{here}-0"),
            format!("hm-remote-{uid}-{gone}"),
            format!("hm-remote-{}-{gone}-0", uid + 1),
            format!("other-{gone}-0"),
        ];
        for n in &names {
            std::fs::create_dir(temp.path().join(n)).expect("mkdir");
        }
        std::fs::write(temp.path().join(&names[0]).join("s.sock"), "").expect("a file");
        sweep(temp.path(), uid);
        let left = |n: &str| temp.path().join(n).exists();
        assert!(
            !left(&names[0]) && !left(&names[1]),
            "a dead process's mounts go"
        );
        assert!(names[2..].iter().all(|n| left(n)), "the rest stay");
    }
}
