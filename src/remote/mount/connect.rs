//! Reaching a host: runs `ssh ... HOST hm proxy`, exchanges HELLO and
//! gets the first list of sessions; when that fails, says why in the
//! words of docs/remote.md's table.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{ChildStderr, ChildStdout};

use super::ssh::{Pipes, Ssh};
use super::{HELLO_TIMEOUT, MountError};
use crate::host::Host;
use crate::paths;
use crate::remote::mux::{self, Hello, Sessions};

/// The last non-empty line ssh or the remote printed.
pub(super) async fn last_words(stderr: &mut Option<ChildStderr>) -> String {
    let mut text = String::new();
    if let Some(e) = stderr.as_mut() {
        let _ = tokio::time::timeout(Duration::from_secs(2), e.read_to_string(&mut text)).await;
    }
    paths::sanitize(
        text.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim(),
    )
}

/// Why the bridge never said hello, from how ssh ended.
async fn never_greeted(host: &Host, ssh: &mut Ssh, stderr: &mut Option<ChildStderr>) -> MountError {
    let said = last_words(stderr).await;
    let code = ssh.exit_code(Duration::from_secs(2)).await;
    let name = host.name.clone();
    if code == Some(127) || said.contains("not found") || said.contains("No such file") {
        return MountError::NoRemoteHm {
            host: name,
            hm: host.hm.clone(),
            said,
        };
    }
    if code == Some(255) {
        return MountError::Ssh { host: name, said };
    }
    if said.contains("unrecognized subcommand") || said.contains("proxy") {
        return MountError::Incompatible {
            host: name,
            said,
            ours: env!("CARGO_PKG_VERSION").to_owned(),
        };
    }
    MountError::Lost { host: name, said }
}

/// Reads frames from ssh's stdout until `want` says one is the answer.
async fn read_until(
    out: &mut ChildStdout,
    decoder: &mut mux::Decoder,
    pending: &mut Vec<mux::Frame>,
    want: u8,
) -> Option<mux::Frame> {
    let mut buf = vec![0u8; mux::CHUNK];
    loop {
        if let Some(i) = pending.iter().position(|f| f.ty == want) {
            return Some(pending.remove(i));
        }
        let n = out.read(&mut buf).await.ok().filter(|&n| n > 0)?;
        pending.extend(decoder.push(&buf[..n]).ok()?);
    }
}

/// A bridge that said hello and listed its sessions.
pub(in crate::remote) struct Connected {
    pub(super) ssh: Ssh,
    pub(super) stdin: tokio::process::ChildStdin,
    pub(super) stdout: ChildStdout,
    pub(super) stderr: Option<ChildStderr>,
    pub(super) decoder: mux::Decoder,
    pub(super) pending: Vec<mux::Frame>,
    pub(super) sessions: Sessions,
    /// The proxy's greeting: whether, and how often, it keeps alive.
    pub(super) theirs: Hello,
}

/// Runs ssh, exchanges HELLO and gets the list of sessions. On failure
/// ssh is ended before this returns (see [`Ssh`]).
pub(in crate::remote) async fn connect(
    host: &Host,
    ssh_command: &str,
) -> Result<Connected, MountError> {
    let (mut ssh, pipes) = Ssh::spawn(host, ssh_command)?;
    let Pipes {
        mut stdin,
        mut stdout,
        mut stderr,
    } = pipes;
    let timeout = || MountError::Timeout {
        host: host.name.clone(),
    };
    let mut decoder = mux::Decoder::default();
    let mut pending = Vec::new();

    // HELLO both ways, then the list of sessions.
    let hello = serde_json::to_vec(&Hello::ours()).unwrap_or_default();
    let mut greeting = mux::encode(mux::HELLO, 0, &hello);
    greeting.extend(mux::encode(mux::LIST, 0, &[]));
    let _ = stdin.write_all(&greeting).await;
    let theirs = tokio::time::timeout(
        HELLO_TIMEOUT,
        read_until(&mut stdout, &mut decoder, &mut pending, mux::HELLO),
    )
    .await;
    let theirs = match theirs {
        Err(_) => {
            ssh.end().await;
            return Err(timeout());
        }
        Ok(None) => {
            let e = never_greeted(host, &mut ssh, &mut stderr).await;
            ssh.end().await;
            return Err(e);
        }
        Ok(Some(f)) => serde_json::from_slice::<Hello>(&f.payload).ok(),
    };
    let theirs = match theirs {
        Some(h) if h.proto == mux::PROTO => h,
        other => {
            let said = other.map_or_else(
                || "it sent no greeting hm can read".to_owned(),
                |h| format!("hm {} speaks bridge protocol {}", h.version, h.proto),
            );
            ssh.end().await;
            return Err(MountError::Incompatible {
                host: host.name.clone(),
                said,
                ours: env!("CARGO_PKG_VERSION").to_owned(),
            });
        }
    };
    let list = tokio::time::timeout(
        HELLO_TIMEOUT,
        read_until(&mut stdout, &mut decoder, &mut pending, mux::SESSIONS),
    )
    .await;
    let list = match list {
        Ok(Some(list)) => list,
        Ok(None) => {
            let said = last_words(&mut stderr).await;
            ssh.end().await;
            return Err(MountError::Lost {
                host: host.name.clone(),
                said,
            });
        }
        Err(_) => {
            ssh.end().await;
            return Err(timeout());
        }
    };
    let sessions: Sessions = serde_json::from_slice(&list.payload).unwrap_or_default();
    Ok(Connected {
        ssh,
        stdin,
        stdout,
        stderr,
        decoder,
        pending,
        sessions,
        theirs,
    })
}
