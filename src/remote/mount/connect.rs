//! Reaching a host: runs `ssh ... HOST hm proxy`, exchanges HELLO and
//! gets the first list of sessions; when that fails, says why in the
//! words of docs/remote.md's table.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStderr, ChildStdout, Command};

use super::{HELLO_TIMEOUT, MountError};
use crate::paths;
use crate::remote::host::Host;
use crate::remote::mux::{self, Hello, Sessions};

/// Starts `ssh ... HOST hm proxy`.
fn spawn_ssh(host: &Host, ssh_command: &str) -> Result<Child, MountError> {
    let mut args: Vec<String> = vec![
        "-T".into(),
        // A password or passphrase prompt would hang a dashboard: fail.
        "-o".into(),
        "BatchMode=yes".into(),
    ];
    if let Some(p) = host.port {
        args.extend(["-p".into(), p.to_string()]);
    }
    args.push(host.destination.clone());
    args.push(host.hm.clone());
    args.push("proxy".into());
    // The command is the user's to write (`ssh -F FILE`), so a shell
    // splits it, as git does with GIT_SSH_COMMAND.
    Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("{ssh_command} \"$@\""))
        .arg("hm-ssh")
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| MountError::Spawn {
            host: host.name.clone(),
            command: ssh_command.to_owned(),
            source,
        })
}

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
async fn never_greeted(
    host: &Host,
    child: &mut Child,
    stderr: &mut Option<ChildStderr>,
) -> MountError {
    let said = last_words(stderr).await;
    let code = tokio::time::timeout(Duration::from_secs(2), child.wait())
        .await
        .ok()
        .and_then(Result::ok)
        .and_then(|s| s.code());
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
    pub(super) child: Child,
    pub(super) stdin: tokio::process::ChildStdin,
    pub(super) stdout: ChildStdout,
    pub(super) stderr: Option<ChildStderr>,
    pub(super) decoder: mux::Decoder,
    pub(super) pending: Vec<mux::Frame>,
    pub(super) sessions: Sessions,
}

/// Runs ssh, exchanges HELLO and gets the list of sessions.
pub(in crate::remote) async fn connect(
    host: &Host,
    ssh_command: &str,
) -> Result<Connected, MountError> {
    let mut child = spawn_ssh(host, ssh_command)?;
    let lost = |said: &str| MountError::Lost {
        host: host.name.clone(),
        said: said.to_owned(),
    };
    let (Some(mut stdin), Some(mut stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(lost("ssh has no stdin or stdout"));
    };
    let mut stderr = child.stderr.take();
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
            return Err(MountError::Timeout {
                host: host.name.clone(),
            });
        }
        Ok(None) => return Err(never_greeted(host, &mut child, &mut stderr).await),
        Ok(Some(f)) => serde_json::from_slice::<Hello>(&f.payload).ok(),
    };
    if theirs.as_ref().is_none_or(|h| h.proto != mux::PROTO) {
        let said = theirs.map_or_else(
            || "it sent no greeting hm can read".to_owned(),
            |h| format!("hm {} speaks bridge protocol {}", h.version, h.proto),
        );
        return Err(MountError::Incompatible {
            host: host.name.clone(),
            said,
            ours: env!("CARGO_PKG_VERSION").to_owned(),
        });
    }
    let Some(list) = read_until(&mut stdout, &mut decoder, &mut pending, mux::SESSIONS).await
    else {
        return Err(lost(&last_words(&mut stderr).await));
    };
    let sessions: Sessions = serde_json::from_slice(&list.payload).unwrap_or_default();
    Ok(Connected {
        child,
        stdin,
        stdout,
        stderr,
        decoder,
        pending,
        sessions,
    })
}
