//! The supervisor's log file: `<socket_dir>/<id>.log` by default, mode
//! 0600, never opened through a symlink, and bounded: past
//! [`MAX_LOG_BYTES`] it is rotated to `<file>.1`, so one session never
//! keeps more than twice that on disk.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::config::LogLevel;

pub const MAX_LOG_BYTES: u64 = 1 << 20;

/// A log file that rotates itself once it reaches its size limit.
#[derive(Debug)]
pub struct BoundedLog {
    file: Option<File>,
    path: PathBuf,
    written: u64,
    max: u64,
}

fn open(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    let ft = file.metadata()?.file_type();
    if !ft.is_file() && path != Path::new("/dev/null") {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(file)
}

impl BoundedLog {
    /// Opens (appending to) the log; the error names the path.
    pub fn open(path: &Path) -> io::Result<BoundedLog> {
        let file = open(path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot open log file '{}': {e}", path.display()),
            )
        })?;
        let written = file.metadata().map(|m| m.len()).unwrap_or(0);
        Ok(BoundedLog {
            file: Some(file),
            path: path.to_path_buf(),
            written,
            max: MAX_LOG_BYTES,
        })
    }

    fn rotate(&mut self) {
        self.file = None;
        let mut old = self.path.clone().into_os_string();
        old.push(".1");
        let _ = fs::rename(&self.path, &old);
        self.file = open(&self.path).ok();
        self.written = 0;
    }
}

impl Write for BoundedLog {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.written + buf.len() as u64 > self.max && self.path != Path::new("/dev/null") {
            self.rotate();
        }
        // Logging must never take the supervisor down: a vanished or full
        // log swallows the line.
        if let Some(f) = &mut self.file
            && f.write_all(buf).is_ok()
        {
            self.written += buf.len() as u64;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Installs the global subscriber writing to `log`. Writes are synchronous
/// on purpose: a background writer thread would break the supervisor's
/// one-thread design.
pub fn init(log: BoundedLog, level: LogLevel) {
    let max = match level {
        LogLevel::Error => tracing::Level::ERROR,
        LogLevel::Warn => tracing::Level::WARN,
        LogLevel::Info => tracing::Level::INFO,
        LogLevel::Debug => tracing::Level::DEBUG,
        LogLevel::Trace => tracing::Level::TRACE,
    };
    let _ = tracing_subscriber::fmt()
        .with_writer(Mutex::new(log))
        .with_ansi(false)
        .with_target(false)
        .with_max_level(max)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_at_the_limit_and_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.log");
        let mut log = BoundedLog::open(&path).expect("open");
        log.max = 100;
        for _ in 0..30 {
            log.write_all(b"0123456789").expect("write");
        }
        let len = fs::metadata(&path).expect("meta").len();
        assert!(len <= 100, "{len}");
        assert!(dir.path().join("s.log.1").exists());
        let mode = fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn refuses_a_planted_symlink() {
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim");
        fs::write(&victim, "keep").expect("write");
        let path = dir.path().join("s.log");
        std::os::unix::fs::symlink(&victim, &path).expect("symlink");
        assert!(BoundedLog::open(&path).is_err());
        assert_eq!(fs::read_to_string(&victim).expect("read"), "keep");
    }
}
