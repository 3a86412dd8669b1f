//! A private sshd on 127.0.0.1, so that the dashboard can be measured with
//! another machine's sessions (`hm tui` with a `[[hosts]]` entry) over the
//! real transport: `ssh HOST hm proxy`. The "other machine" is this one,
//! as the current user, with a throwaway host key and an authorized key in
//! the sandbox; its socket dir is `<runtime dir>/heimdall`, given to the
//! remote side through `SetEnv XDG_RUNTIME_DIR`. Several "machines" are
//! several host names in the client config, each with a runtime dir of its
//! own, all served by the one sshd.
//!
//! The sshd, the sessions it forks and the proxies they run are all
//! descendants of the harness (a subreaper); they are killed by pid when
//! the guard is dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::peers::{self, Bench};
use crate::sys;

const SSHD: &str = "/usr/sbin/sshd";

/// The host name the client config gives the private sshd.
pub const HOST: &str = "box";

/// A running private sshd.
#[derive(Debug)]
pub struct Sshd {
    child: Child,
    /// The ssh client config naming each host; `HM_SSH_COMMAND="ssh -F
    /// <this>"` makes hm use it.
    pub client_config: PathBuf,
    /// Each host's name and its remote side's XDG_RUNTIME_DIR.
    pub hosts: Vec<(String, PathBuf)>,
}

fn quiet(cmd: &mut Command) -> bool {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

impl Sshd {
    /// Starts one serving [`HOST`], or says why it cannot (no OpenSSH, no
    /// user name).
    pub fn start(b: &Bench) -> Result<Sshd, String> {
        Sshd::start_hosts(b, &[HOST])
    }

    /// Starts one that the client config reaches under each of `names`,
    /// each name with its own remote socket dir.
    pub fn start_hosts(b: &Bench, names: &[&str]) -> Result<Sshd, String> {
        if !Path::new(SSHD).exists() || !quiet(Command::new("ssh").arg("-V")) {
            return Err("OpenSSH (ssh and sshd) is not installed".into());
        }
        let dir = b.path(&b.name("ssh"));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let mut hosts = Vec::new();
        for name in names {
            let rt = b.path(&b.name("remote-run"));
            std::fs::create_dir_all(&rt).map_err(|e| e.to_string())?;
            hosts.push((name.to_string(), rt));
        }
        for (comment, file) in [("host", "host_key"), ("user", "id")] {
            let made = quiet(
                Command::new("ssh-keygen")
                    .args(["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f"])
                    .arg(dir.join(file)),
            );
            if !made {
                return Err("ssh-keygen failed".into());
            }
        }
        std::fs::copy(dir.join("id.pub"), dir.join("authorized_keys"))
            .map_err(|e| e.to_string())?;
        if nix::unistd::geteuid().is_root() {
            // Run by root, sshd separates privileges into this directory
            // and refuses to start without it.
            let _ = std::fs::create_dir_all("/run/sshd");
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let d = dir.display();
        let server = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n\
             AuthorizedKeysFile {d}/authorized_keys\nStrictModes no\nUsePAM no\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             PubkeyAuthentication yes\nPermitRootLogin yes\nAcceptEnv XDG_RUNTIME_DIR\n"
        );
        std::fs::write(dir.join("sshd_config"), server).map_err(|e| e.to_string())?;
        let user = nix::unistd::User::from_uid(nix::unistd::geteuid())
            .ok()
            .flatten()
            .map(|u| u.name)
            .ok_or("no user name for this uid")?;
        let client: String = hosts
            .iter()
            .map(|(name, rt)| {
                format!(
                    "Host {name}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  \
                     IdentityFile {d}/id\n  IdentitiesOnly yes\n  UserKnownHostsFile /dev/null\n  \
                     StrictHostKeyChecking no\n  LogLevel ERROR\n  SetEnv XDG_RUNTIME_DIR={rt}\n",
                    rt = rt.display()
                )
            })
            .collect();
        let client_config = dir.join("ssh_config");
        std::fs::write(&client_config, client).map_err(|e| e.to_string())?;
        let child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(dir.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start sshd: {e}"))?;
        sys::track(child.id() as i32, false);
        let sshd = Sshd {
            child,
            client_config,
            hosts,
        };
        peers::wait_for("sshd to listen", || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        Ok(sshd)
    }

    /// The remote side's socket dir of the first host (the only one, for
    /// [`Sshd::start`]).
    pub fn remote_dir(&self) -> PathBuf {
        self.hosts[0].1.join("heimdall")
    }

    /// The remote side's socket dir of host `name`.
    pub fn remote_dir_of(&self, name: &str) -> Option<PathBuf> {
        self.hosts
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, rt)| rt.join("heimdall"))
    }

    /// What `HM_SSH_COMMAND` must say for hm to reach the hosts.
    pub fn ssh_command(&self) -> String {
        format!("ssh -F {}", self.client_config.display())
    }

    /// The `hm proxy` processes serving connections through this sshd.
    pub fn proxies(&self) -> Vec<i32> {
        sys::descendants_of(self.child.id() as i32)
            .into_iter()
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| c.split(|b| *b == 0).any(|a| a == b"proxy"))
            })
            .collect()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        // Its sessions first (they would be reparented to the harness
        // once the listener is gone), then the listener.
        let sessions = sys::descendants_of(self.child.id() as i32);
        for pid in sessions.into_iter().rev() {
            sys::kill_and_reap(pid, false);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        sys::untrack(self.child.id() as i32);
    }
}
