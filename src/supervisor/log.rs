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
    let _ = tracing::subscriber::set_global_default(LineLog {
        out: Mutex::new(log),
        max,
    });
}

/// The supervisor's subscriber: each event as one line, its time (UTC),
/// level, message and fields. hm opens no spans, so none are kept.
/// tracing-subscriber's formatter needs its span registry, whose table
/// for 4096 threads is 32 KiB written at start-up: an eighth of what an
/// idle supervisor holds privately, paid per session (docs/performance.md).
struct LineLog {
    out: Mutex<BoundedLog>,
    max: tracing::Level,
}

impl tracing::Subscriber for LineLog {
    fn enabled(&self, meta: &tracing::Metadata<'_>) -> bool {
        *meta.level() <= self.max
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(self.max.into())
    }

    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut line = Line(stamp(
            time::OffsetDateTime::now_utc(),
            *event.metadata().level(),
        ));
        event.record(&mut line);
        line.0.push('\n');
        if let Ok(mut out) = self.out.lock() {
            let _ = out.write_all(line.0.as_bytes());
        }
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

/// A line's head: `2026-11-28T15:04:05.123456Z  INFO`.
fn stamp(t: time::OffsetDateTime, level: tracing::Level) -> String {
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z {level:>5}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.microsecond(),
    )
}

/// An event's message, then its fields as `name=value`.
struct Line(String);

impl tracing::field::Visit for Line {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        use std::fmt::Write as _;
        let _ = if field.name() == "message" {
            write!(self.0, " {value:?}")
        } else {
            write!(self.0, " {}={value:?}", field.name())
        };
    }
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
    fn a_line_is_time_level_message_and_fields() {
        let t = time::OffsetDateTime::from_unix_timestamp_nanos(1_795_878_245_123_456_000)
            .expect("a time");
        let mut line = Line(stamp(t, tracing::Level::INFO));
        // What `info!(id = %id, pid, "session started")` records.
        use tracing::field::Visit;
        let fields = tracing::field::FieldSet::new(
            &["message", "id", "pid"],
            tracing::callsite::Identifier(&CALLSITE),
        );
        let mut names = fields.iter();
        let (m, id, pid) = (
            names.next().unwrap(),
            names.next().unwrap(),
            names.next().unwrap(),
        );
        line.record_debug(&m, &format_args!("session started"));
        line.record_debug(&id, &format_args!("s1"));
        line.record_i64(&pid, 42);
        assert_eq!(
            line.0,
            "2026-11-28T15:04:05.123456Z  INFO session started id=s1 pid=42"
        );
    }

    struct Callsite;
    static CALLSITE: Callsite = Callsite;
    impl tracing::callsite::Callsite for Callsite {
        fn set_interest(&self, _: tracing::subscriber::Interest) {}
        fn metadata(&self) -> &tracing::Metadata<'_> {
            unreachable!("not registered")
        }
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
