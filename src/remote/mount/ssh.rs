//! The ssh a mount runs, and its end: the mount owns it and everything
//! it started, and nothing of it outlives the mount.
//!
//! The user's ssh command is run by `/bin/sh` (as git runs
//! `GIT_SSH_COMMAND`), which may run ssh as a child rather than become
//! it, and ssh may have children of its own (a `ProxyCommand`). Killing
//! the shell alone would leave them running, with the remote `hm proxy`
//! they keep open, so the whole tree of processes is ended. It stays in
//! our process group, so that Ctrl-C at the terminal still reaches it
//! when `hm` itself is interrupted.

use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

use super::MountError;
use crate::host::Host;

/// How long ssh has to end after SIGTERM before it is killed.
const GRACE: Duration = Duration::from_secs(1);
/// How long ssh may take to reach a machine (unless the user's ssh command
/// says otherwise): a host that is away is retried rather than waited for.
const CONNECT_TIMEOUT_S: u32 = 5;

/// A running `ssh ... HOST hm proxy`; ended with [`Ssh::end`], or killed
/// when dropped.
#[derive(Debug)]
pub(super) struct Ssh {
    child: Child,
    /// Until it is ended (and reaped).
    pid: Option<Pid>,
}

/// The ends of ssh's standard streams.
pub(super) struct Pipes {
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stderr: Option<ChildStderr>,
}

impl Ssh {
    /// Starts `ssh ... HOST HM proxy`.
    pub(super) fn spawn(host: &Host, ssh_command: &str) -> Result<(Ssh, Pipes), MountError> {
        let connect_timeout = format!("ConnectTimeout={CONNECT_TIMEOUT_S}");
        let mut args: Vec<String> = vec![
            "-T".into(),
            // A password or passphrase prompt would hang a dashboard: fail.
            "-o".into(),
            "BatchMode=yes".into(),
            // After the user's own options, which ssh reads first: theirs
            // win.
            "-o".into(),
            connect_timeout,
        ];
        if let Some(p) = host.port {
            args.extend(["-p".into(), p.to_string()]);
        }
        args.push(host.destination.clone());
        args.push(host.hm.clone());
        args.push("proxy".into());
        // The command is the user's to write (`ssh -F FILE`), so a shell
        // splits it, as git does with GIT_SSH_COMMAND.
        let spawn_error = |source| MountError::Spawn {
            host: host.name.clone(),
            command: ssh_command.to_owned(),
            source,
        };
        let mut child = Command::new("/bin/sh")
            .arg("-c")
            .arg(format!("{ssh_command} \"$@\""))
            .arg("hm-ssh")
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(spawn_error)?;
        let pid = child
            .id()
            .and_then(|p| i32::try_from(p).ok())
            .map(Pid::from_raw);
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let ssh = Ssh { child, pid };
        match (stdin, stdout) {
            (Some(stdin), Some(stdout)) => Ok((
                ssh,
                Pipes {
                    stdin,
                    stdout,
                    stderr,
                },
            )),
            _ => Err(spawn_error(std::io::Error::other("no stdin or stdout"))),
        }
    }

    /// Its exit code, if it ends within `within`.
    pub(super) async fn exit_code(&mut self, within: Duration) -> Option<i32> {
        let status = tokio::time::timeout(within, self.child.wait())
            .await
            .ok()?
            .ok()?;
        // Reaped: the pid may now be anyone's.
        self.pid = None;
        status.code()
    }

    /// Ends it and everything it started: SIGTERM (ssh closes the
    /// connection, and the remote side sees it go), then SIGKILL for what
    /// is left after [`GRACE`].
    pub(super) async fn end(mut self) {
        let Some(pid) = self.pid else {
            return;
        };
        let tree = tree(pid);
        signal_all(&tree, Signal::SIGTERM);
        let reaped = tokio::time::timeout(GRACE, self.child.wait()).await.is_ok();
        // What ignored SIGTERM was found before, while the pids were
        // theirs; the shell's own, once reaped, is not signalled again.
        signal_all(if reaped { &tree[1..] } else { &tree[..] }, Signal::SIGKILL);
        if !reaped {
            let _ = self.child.wait().await;
        }
        self.pid = None;
    }
}

impl Drop for Ssh {
    fn drop(&mut self) {
        // Not ended in order (a failed connect, a thread that unwound):
        // killed at once; tokio reaps the shell.
        if let Some(pid) = self.pid {
            signal_all(&tree(pid), Signal::SIGKILL);
        }
    }
}

/// `root` and its descendants, from `/proc`. `root` must be our child
/// that is not reaped yet, so that its pid, and its children's (which it
/// has not reaped while it runs, or which became init's when it died),
/// are still theirs.
fn tree(root: Pid) -> Vec<Pid> {
    let parents: Vec<(i32, i32)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // "pid (comm) state ppid ...": comm may hold spaces and
            // parentheses, so fields are counted from the last ')'.
            let ppid = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?;
            Some((pid, ppid.parse().ok()?))
        })
        .collect();
    let mut found = vec![root.as_raw()];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.into_iter().map(Pid::from_raw).collect()
}

fn signal_all(pids: &[Pid], sig: Signal) {
    for &pid in pids {
        // Never 0, 1 or a group: a bug here must not signal everything.
        if pid.as_raw() > 1 {
            let _ = kill(pid, sig);
        }
    }
}
