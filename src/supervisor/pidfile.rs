//! The session's pid file: `<id>.pid`, held under an exclusive `flock` for
//! the supervisor's whole life. Three lines: the supervisor's pid, the
//! program's pid, and the program's identity (the boot it runs in and its
//! start time, which a reused pid cannot share).
//!
//! The lock is the only source of truth about liveness: pids in the file
//! are informational and never signalled, because after a crash or reboot
//! they may belong to unrelated processes. The identity only lets `hm ls`
//! tell the user that a program outlived its killed supervisor.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};

use crate::liveness::identity;

#[derive(Debug, thiserror::Error)]
pub enum PidFileError {
    #[error("session '{id}' is already running{}; stop it with 'hm kill {id}' first", holder.map(|p| format!(" (supervisor pid {p})")).unwrap_or_default())]
    Locked { id: String, holder: Option<u32> },
    #[error("cannot open pid file '{}'", path.display())]
    Open { path: PathBuf, source: io::Error },
    #[error("cannot write pid file '{}'", path.display())]
    Write { path: PathBuf, source: io::Error },
}

/// A locked pid file. Dropping it releases the lock but leaves the file;
/// [`PidFile::remove`] deletes it first.
#[derive(Debug)]
pub struct PidFile {
    lock: Flock<File>,
    path: PathBuf,
}

/// How long to keep trying a lock that is held. A running supervisor holds
/// it forever, but `hm ls` holds it for microseconds while probing.
const LOCK_PATIENCE: Duration = Duration::from_millis(100);

fn open(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

fn read_first_pid(file: &mut File) -> Option<u32> {
    let mut s = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.take(64).read_to_string(&mut s).ok()?;
    s.lines().next()?.trim().parse().ok()
}

impl PidFile {
    /// Takes the lock, or explains who holds it.
    pub fn acquire(path: &Path, id: &str) -> Result<PidFile, PidFileError> {
        let deadline = Instant::now() + LOCK_PATIENCE;
        loop {
            let file = open(path).map_err(|source| PidFileError::Open {
                path: path.to_path_buf(),
                source,
            })?;
            match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
                Ok(lock) => {
                    // Someone (`hm ls` cleaning a stale entry, or an exiting
                    // supervisor) may have unlinked the file between our
                    // open and our lock: then we locked an orphan inode and
                    // must start over with the file now at `path`.
                    let same = match (lock.metadata(), fs::symlink_metadata(path)) {
                        (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
                        _ => false,
                    };
                    if same {
                        return Ok(PidFile {
                            lock,
                            path: path.to_path_buf(),
                        });
                    }
                }
                Err((mut file, _)) => {
                    if Instant::now() >= deadline {
                        return Err(PidFileError::Locked {
                            id: id.to_string(),
                            holder: read_first_pid(&mut file),
                        });
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        }
    }

    /// Replaces the contents with the supervisor's pid.
    pub fn write_supervisor(&mut self, pid: u32) -> Result<(), PidFileError> {
        self.rewrite(&format!("{pid}\n"))
    }

    /// Adds the child's pid and identity as the second and third lines.
    pub fn write_child(&mut self, supervisor: u32, child: u32) -> Result<(), PidFileError> {
        let who = identity(child).unwrap_or_default();
        self.rewrite(&format!("{supervisor}\n{child}\n{who}\n"))
    }

    fn rewrite(&mut self, text: &str) -> Result<(), PidFileError> {
        let f: &mut File = &mut self.lock;
        let r = f
            .set_len(0)
            .and_then(|()| f.seek(SeekFrom::Start(0)).map(drop))
            .and_then(|()| f.write_all(text.as_bytes()));
        r.map_err(|source| PidFileError::Write {
            path: self.path.clone(),
            source,
        })
    }

    /// Deletes the file while still holding the lock, so nobody can mistake
    /// a half-removed session for a live one.
    pub fn remove(self) {
        let _ = fs::remove_file(&self.path);
    }

    pub fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.lock.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::liveness::{Liveness, dying, probe};

    #[test]
    fn second_lock_is_refused_and_names_the_holder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.pid");
        let mut first = PidFile::acquire(&path, "a").expect("first lock");
        first.write_supervisor(4242).expect("write");
        let err = PidFile::acquire(&path, "a").expect_err("second lock must fail");
        assert!(err.to_string().contains("supervisor pid 4242"), "{err}");
        assert_eq!(
            probe(&path, &dir.path().join("a.sock"), true),
            Liveness::Running
        );
        first.remove();
        assert_eq!(
            probe(&path, &dir.path().join("a.sock"), true),
            Liveness::Missing
        );
    }

    #[test]
    fn stale_file_is_taken_over_and_cleaned_by_probe() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("b.pid");
        fs::write(&path, "1\n1\n").expect("write stale");
        let sock = dir.path().join("b.sock");
        fs::write(&sock, "").expect("write stale sock");
        assert_eq!(probe(&path, &sock, true), Liveness::Stale);
        assert!(!path.exists() && !sock.exists());
        fs::write(&path, "garbage").expect("write stale");
        let mut f = PidFile::acquire(&path, "b").expect("stale lock is free");
        f.write_child(10, 11).expect("write");
        let text = fs::read_to_string(&path).expect("read");
        assert!(text.starts_with("10\n11\n"), "{text:?}");
    }

    /// Two probes at the same moment: the one holding the lock as it
    /// looks is no supervisor to the other. Four followers of a killed
    /// supervisor probed at once, and one of them said "closed the
    /// connection" of a session that was lost.
    #[test]
    fn a_probe_beside_another_is_not_taken_for_a_supervisor() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("e.pid");
        let sock = dir.path().join("e.sock");
        fs::write(&path, "1\n1\n").expect("write stale");
        fs::write(&sock, "").expect("write stale sock");
        // The other probe, caught holding the lock as a probe holds it
        // (flock's locks belong to the open file, so this process's own
        // open conflicts as another's would).
        let file = fs::File::open(&path).expect("open");
        let other = Flock::lock(file, FlockArg::LockSharedNonblock).expect("shared");
        let looking = (probe(&path, &sock, false), probe(&path, &sock, true));
        drop(other);
        assert_eq!(looking, (Liveness::Stale, Liveness::Stale));
        // Left for a probe that looks alone to clean.
        assert!(path.exists() && sock.exists());
        assert_eq!(probe(&path, &sock, true), Liveness::Stale);
        assert!(!path.exists() && !sock.exists());
    }

    #[test]
    fn a_stale_file_naming_a_live_program_by_identity_is_orphaned() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("d.pid");
        let sock = dir.path().join("d.sock");
        let me = std::process::id();
        let mut f = PidFile::acquire(&path, "d").expect("lock");
        f.write_child(1, me).expect("write");
        drop(f);
        fs::write(&sock, "").expect("write stale sock");
        assert_eq!(probe(&path, &sock, true), Liveness::Orphaned(me));
        assert!(path.exists(), "the record of the program is kept");
        assert!(!sock.exists(), "the dead socket is not");
        // The same pid with another start time is a reused pid: stale.
        let text = fs::read_to_string(&path).expect("read");
        let (head, start) = text.trim_end().rsplit_once(' ').expect("identity");
        let other = start.parse::<u64>().expect("ticks") + 1;
        fs::write(&path, format!("{head} {other}\n")).expect("rewrite");
        assert_eq!(probe(&path, &sock, true), Liveness::Stale);
        assert!(!path.exists());
    }

    #[test]
    fn a_program_with_a_fatal_signal_pending_is_dying() {
        use nix::sys::signal::{Signal, kill};
        use nix::unistd::Pid;
        use std::process::Command;
        let status =
            |pid: u32| fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let until = |what: &str, cond: &dyn Fn() -> bool| {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while !cond() {
                assert!(std::time::Instant::now() < deadline, "{what}");
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        };
        /// Killed (stopped or not) however the test ends.
        struct Reaped(std::process::Child);
        impl Drop for Reaped {
            fn drop(&mut self) {
                let _ = self.0.kill();
                let _ = self.0.wait();
            }
        }
        // SIGHUP at its default, whatever we inherited (nohup ignores it).
        let plain = Reaped(
            Command::new("env")
                .args(["--default-signal=HUP", "sleep", "30"])
                .spawn()
                .expect("env"),
        );
        // SIGHUP ignored, which survives exec.
        let deaf = Reaped(
            Command::new("sh")
                .args(["-c", "trap '' HUP; exec sleep 30"])
                .spawn()
                .expect("sh"),
        );
        let (p, d) = (plain.0.id(), deaf.0.id());
        for pid in [p, d] {
            until("the exec", &|| status(pid).contains("Name:\tsleep"));
        }
        // Stopped, a process keeps the signals it is sent pending.
        for pid in [p, d] {
            kill(Pid::from_raw(pid as i32), Signal::SIGSTOP).expect("stop");
            until("stopped", &|| status(pid).contains("State:\tT"));
        }
        assert!(!dying(p) && !dying(d));
        for pid in [p, d] {
            kill(Pid::from_raw(pid as i32), Signal::SIGHUP).expect("hup");
        }
        assert!(dying(p), "{}", status(p));
        assert!(!dying(d), "{}", status(d));
    }

    #[test]
    fn planted_symlink_is_not_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious").expect("write victim");
        let path = dir.path().join("c.pid");
        std::os::unix::fs::symlink(&victim, &path).expect("symlink");
        assert!(PidFile::acquire(&path, "c").is_err());
        assert_eq!(fs::read_to_string(&victim).expect("read"), "precious");
    }
}
