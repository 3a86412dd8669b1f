//! A session's output tail: `<sessions dir>/<id>.history`, the last
//! `restore_history_bytes` of what it wrote, so a restored session shows
//! what it showed before, followed by a mark.
//!
//! The file is a header line, `hm-history 1 <offset>\n` (the format, and
//! the stream offset of the first byte kept: how many bytes the program
//! had written before it), then the bytes as the program wrote them. The
//! supervisor appends what is new at most once a second while output
//! flows and when it comes to rest, never on every write and never while
//! idle; once the file holds twice the bytes to keep it is written anew
//! with the last of them (a temporary file renamed into place). Appends
//! are not synced: a clean shutdown or a killed supervisor loses nothing
//! the kernel was given, and a power cut loses the last second or so. A
//! session that has written nothing has no file.
//!
//! Seam for the resize journal (sizes the session had, by offset, which
//! the ring may come to keep): its entries, offsets in this same stream,
//! would go in `<id>.resizes` beside this file, written at the same
//! moments, and [`History`] would carry them so that the replay can resize
//! as it goes. Until then the replay runs at the size the session last
//! had, which is the size most of a tail was written at.

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

const MAGIC: &str = "hm-history";
/// The format this version writes and the newest it reads.
pub const FORMAT: u32 = 1;
/// Longest header line read.
const MAX_HEADER: usize = 64;

pub fn path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.history"))
}

/// Keeps a session's output tail on disk.
#[derive(Debug)]
pub struct Writer {
    path: PathBuf,
    keep: u64,
    /// The file as this writer made it, open for appending; `None` until
    /// the first write, which always writes it anew (an earlier session's
    /// file of the same id is not ours to append to).
    file: Option<File>,
    /// Whether the first write was made: until then the file at `path`,
    /// if any, is an earlier session's of the same id.
    begun: bool,
    /// Stream offsets of the first byte in the file and of the byte after
    /// the last.
    start: u64,
    end: u64,
}

impl Writer {
    /// A writer for `path` keeping `keep` bytes (0: none).
    pub fn new(path: PathBuf, keep: usize) -> Writer {
        Writer {
            path,
            keep: keep as u64,
            file: None,
            begun: false,
            start: 0,
            end: 0,
        }
    }

    /// Whether it keeps any output at all (`restore_history_bytes` > 0).
    pub fn keeps(&self) -> bool {
        self.keep > 0
    }

    /// The file it writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether output up to `head` is not on disk yet.
    pub fn behind(&self, head: u64) -> bool {
        self.keep > 0 && (!self.begun || self.end < head)
    }

    /// Brings the file up to `head`: `oldest` is the oldest offset the
    /// output still holds, and `slices(from, to)` gives the bytes
    /// `[from, to)` (as a ring does, in one or two pieces).
    pub fn write<'a>(
        &mut self,
        head: u64,
        oldest: u64,
        slices: impl FnOnce(u64, u64) -> Option<(&'a [u8], &'a [u8])>,
    ) -> io::Result<()> {
        if !self.behind(head) {
            return Ok(());
        }
        let want = head.saturating_sub(self.keep).max(oldest);
        if !self.begun && want == head {
            // Nothing to keep yet (a new session): no file rather than an
            // empty one, made, synced and renamed into place before the
            // session's first answer (a disk flush at every start). An
            // earlier session's file of the same id goes all the same.
            match fs::remove_file(&self.path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
            self.begun = true;
            self.start = head;
            self.end = head;
            return Ok(());
        }
        let append = self.file.is_some()
            && self.end >= want
            && self.end <= head
            && head - self.start <= 2 * self.keep;
        let from = if append { self.end } else { want };
        let (a, b) = slices(from, head)
            .ok_or_else(|| io::Error::other("the output to keep is no longer held"))?;
        match (&mut self.file, append) {
            (Some(f), true) => {
                f.write_all(a)?;
                f.write_all(b)?;
            }
            _ => {
                self.file = None;
                self.file = Some(rewrite(&self.path, from, a, b)?);
                self.begun = true;
                self.start = from;
            }
        }
        self.end = head;
        Ok(())
    }

    /// Makes what was written durable (at rest, and at the end).
    pub fn sync(&self) -> io::Result<()> {
        match &self.file {
            Some(f) => f.sync_data(),
            None => Ok(()),
        }
    }
}

/// Writes the file anew (header and bytes) and returns it open for
/// appending.
fn rewrite(path: &Path, start: u64, a: &[u8], b: &[u8]) -> io::Result<File> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let done = (|| -> io::Result<File> {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)?;
        f.write_all(format!("{MAGIC} {FORMAT} {start}\n").as_bytes())?;
        f.write_all(a)?;
        f.write_all(b)?;
        // Synced before the rename, so a crash cannot put an empty file
        // in place of the previous one.
        f.sync_data()?;
        fs::rename(&tmp, path)?;
        Ok(f)
    })();
    if done.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    let mut f = done?;
    f.seek(SeekFrom::End(0))?;
    Ok(f)
}

/// A tail read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    /// The stream offset of `bytes[0]`.
    pub start: u64,
    pub bytes: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("cannot read it")]
    Io(#[source] io::Error),
    #[error("it is not a history file")]
    NotHistory,
    #[error("it was written by a newer hm (format {0}; this one reads up to {FORMAT})")]
    Future(u32),
}

/// The last `max` bytes of `id`'s history, starting at a line when the
/// tail was cut; `None` if there is none.
pub fn read(dir: &Path, id: &str, max: usize) -> Result<Option<History>, HistoryError> {
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path(dir, id));
    let mut file = match file {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(HistoryError::Io(e)),
    };
    let meta = file.metadata().map_err(HistoryError::Io)?;
    if !meta.is_file() {
        return Err(HistoryError::NotHistory);
    }
    let mut head = [0u8; MAX_HEADER];
    let n = read_some(&mut file, &mut head).map_err(HistoryError::Io)?;
    let line_end = head[..n]
        .iter()
        .position(|&b| b == b'\n')
        .ok_or(HistoryError::NotHistory)?;
    let header = std::str::from_utf8(&head[..line_end]).map_err(|_| HistoryError::NotHistory)?;
    let mut words = header.split(' ');
    if words.next() != Some(MAGIC) {
        return Err(HistoryError::NotHistory);
    }
    let format: u32 = parse_word(words.next())?;
    if format > FORMAT {
        return Err(HistoryError::Future(format));
    }
    let start: u64 = parse_word(words.next())?;
    let body_at = line_end as u64 + 1;
    let body_len = meta.len().saturating_sub(body_at);
    let skip = body_len.saturating_sub(max as u64);
    file.seek(SeekFrom::Start(body_at + skip))
        .map_err(HistoryError::Io)?;
    let mut bytes = Vec::with_capacity((body_len - skip) as usize);
    file.take(max as u64)
        .read_to_end(&mut bytes)
        .map_err(HistoryError::Io)?;
    let mut start = start + skip;
    if start > 0 {
        // Cut mid-stream: from the next line, or past the string or into
        // the sequence the cut fell in (`vt::cut`).
        let skip = crate::vt::cut::clean_start(bytes.iter().copied());
        bytes.drain(..skip);
        start += skip as u64;
    }
    Ok(Some(History { start, bytes }))
}

fn parse_word<T: std::str::FromStr>(word: Option<&str>) -> Result<T, HistoryError> {
    word.and_then(|w| w.parse().ok())
        .ok_or(HistoryError::NotHistory)
}

fn read_some(f: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Why the session is being restored, for its mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// It was started in another boot.
    Reboot,
    /// Its supervisor went away in this boot (killed, out of memory).
    SupervisorGone,
    /// Its program exited with this code, and `hm restart` (or the
    /// dashboard's `r`) runs it again.
    Exited(i32),
    /// Its program was killed (`hm kill`), and is run again.
    Killed,
}

/// The mark's text: `── restored 14:05, after the machine restarted ──`;
/// `restarted` by `hm restart`, which runs the command as it was (`──
/// restarted 14:05, after it exited 3 ──` for one that ended).
pub fn mark(hhmm: &str, why: Why, restarted: bool) -> String {
    let after = match why {
        Why::Reboot => "after the machine restarted".to_owned(),
        Why::SupervisorGone => "after its supervisor went away".to_owned(),
        Why::Exited(code) => format!("after it exited {code}"),
        Why::Killed => "after it was killed".to_owned(),
    };
    let how = if restarted { "restarted" } else { "restored" };
    format!("── {how} {hhmm}, {after} ──")
}

/// What goes between the old output and the mark: whatever the old
/// output left unfinished or switched on is ended, so the mark and the
/// new program start from a plain terminal. CAN ends a sequence or string
/// cut off; then plain colours, a visible cursor, the whole screen to
/// scroll (the cursor saved around it: setting the region homes it),
/// cursor keys and keypad normal, and no mouse reports, focus
/// reports or bracketed paste. Leaving the alternate screen is
/// [`LEAVE_ALTERNATE`], sent only if the old output was on it: it also
/// puts back the cursor saved on entering, which would be nowhere else.
pub const RESET: &[u8] = b"\x18\x1b[0m\x1b[?25h\x1b7\x1b[r\x1b8\x1b[?1l\x1b>\
\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1004l\x1b[?2004l";

/// Back to the main screen, where the program was before it switched.
pub const LEAVE_ALTERNATE: &[u8] = b"\x1b[?1049l";

/// The mark on a line of its own, from the cursor at a line's start.
pub fn mark_line(mark: &str) -> Vec<u8> {
    let mut out = b"\x1b[1m".to_vec();
    out.extend_from_slice(mark.as_bytes());
    out.extend_from_slice(b"\x1b[0m\r\n");
    out
}

/// Scrolls the `used` top rows (the old output) off a screen of `rows`
/// into its history, and clears what is left, so that the mark and the
/// new program start on a blank screen and a program that clears its
/// screen cannot erase the old output's last screen.
pub fn scroll_off(used: u16, rows: u16) -> Vec<u8> {
    let mut out = format!("\x1b[{rows};1H").into_bytes();
    out.extend(std::iter::repeat_n(b'\n', usize::from(used)));
    out.extend_from_slice(b"\x1b[2J\x1b[H");
    out
}

/// The local time as `HH:MM` (UTC, marked so, when the local offset
/// cannot be known: the `time` crate reads it only while the process has
/// one thread, as a supervisor has before its runtime starts).
pub fn local_hhmm() -> String {
    match time::OffsetDateTime::now_local() {
        Ok(t) => format!("{:02}:{:02}", t.hour(), t.minute()),
        Err(_) => {
            let t = time::OffsetDateTime::now_utc();
            format!("{:02}:{:02} UTC", t.hour(), t.minute())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer fed from a growing stream, as the supervisor's ring is.
    fn feed(w: &mut Writer, stream: &[u8], oldest: u64) {
        let head = stream.len() as u64;
        w.write(head, oldest, |from, to| {
            Some((&stream[from as usize..to as usize], &[][..]))
        })
        .expect("write");
    }

    #[test]
    fn the_tail_is_kept_and_read_back_from_a_line() {
        let dir = tempfile::tempdir().expect("dir");
        let mut w = Writer::new(path(dir.path(), "s"), 100);
        let mut stream = Vec::new();
        assert!(read(dir.path(), "s", 100).expect("read").is_none());
        for i in 0..50 {
            stream.extend_from_slice(format!("line {i}\n").as_bytes());
            feed(&mut w, &stream, 0);
            let on_disk = fs::metadata(path(dir.path(), "s")).expect("meta").len();
            assert!(on_disk <= 2 * 100 + MAX_HEADER as u64 + 16, "{on_disk}");
            let h = read(dir.path(), "s", 100).expect("read").expect("some");
            assert!(stream.ends_with(&h.bytes), "a suffix of the stream");
            assert_eq!(h.start as usize + h.bytes.len(), stream.len());
            assert!(h.bytes.len() <= 100);
            if h.start > 0 {
                assert!(stream[..h.start as usize].ends_with(b"\n"), "from a line");
            }
        }
        let h = read(dir.path(), "s", 100).expect("read").expect("some");
        assert!(String::from_utf8_lossy(&h.bytes).ends_with("line 49\n"));
        assert!(!w.behind(stream.len() as u64));
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(path(dir.path(), "s"))
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_gap_the_ring_no_longer_holds_writes_anew() {
        let dir = tempfile::tempdir().expect("dir");
        let mut w = Writer::new(path(dir.path(), "s"), 1000);
        let mut stream = b"first\n".to_vec();
        feed(&mut w, &stream, 0);
        stream.extend(std::iter::repeat_n(b'x', 5000));
        stream.extend_from_slice(b"\nlast\n");
        // The ring kept only its last 2000 bytes.
        feed(&mut w, &stream, stream.len() as u64 - 2000);
        let h = read(dir.path(), "s", 1000).expect("read").expect("some");
        assert!(!h.bytes.starts_with(b"first"));
        assert!(h.bytes.ends_with(b"last\n"));
    }

    #[test]
    fn a_new_writer_never_appends_to_an_old_file() {
        let dir = tempfile::tempdir().expect("dir");
        fs::write(path(dir.path(), "s"), "hm-history 1 0\nold session\n").expect("write");
        let mut w = Writer::new(path(dir.path(), "s"), 100);
        feed(&mut w, b"new\n", 0);
        let h = read(dir.path(), "s", 100).expect("read").expect("some");
        assert_eq!(h.bytes, b"new\n");
        // Nothing to keep: nothing written.
        let mut none = Writer::new(path(dir.path(), "t"), 0);
        feed(&mut none, b"x", 0);
        assert!(!path(dir.path(), "t").exists());
    }

    #[test]
    fn nothing_to_keep_yet_is_no_file() {
        let dir = tempfile::tempdir().expect("dir");
        let mut w = Writer::new(path(dir.path(), "s"), 100);
        feed(&mut w, b"", 0);
        assert!(
            !path(dir.path(), "s").exists(),
            "no empty file at the start"
        );
        assert!(!w.behind(0), "and nothing more to do until output comes");
        feed(&mut w, b"first\n", 0);
        let h = read(dir.path(), "s", 100).expect("read").expect("some");
        assert_eq!(h.bytes, b"first\n");
        // An earlier session's file of the same id goes before any output.
        fs::write(path(dir.path(), "t"), "hm-history 1 0\nold session\n").expect("write");
        feed(&mut Writer::new(path(dir.path(), "t"), 100), b"", 0);
        assert!(read(dir.path(), "t", 100).expect("read").is_none());
    }

    #[test]
    fn bad_history_files_are_refused() {
        let dir = tempfile::tempdir().expect("dir");
        for (bytes, says) in [
            (&b"garbage"[..], "not a history"),
            (b"hm-history x 0\n", "not a history"),
            (b"hm-history 7 0\nabc", "newer hm (format 7"),
        ] {
            fs::write(path(dir.path(), "s"), bytes).expect("write");
            let e = read(dir.path(), "s", 10).expect_err("refused");
            assert!(e.to_string().contains(says), "{e}");
        }
    }

    #[test]
    fn the_mark_follows_the_reset_on_its_own_line() {
        let text = mark("14:05", Why::Reboot, false);
        assert_eq!(
            mark("14:05", Why::SupervisorGone, true),
            "── restarted 14:05, after its supervisor went away ──"
        );
        assert_eq!(
            mark("14:05", Why::Exited(3), true),
            "── restarted 14:05, after it exited 3 ──"
        );
        assert_eq!(
            mark("14:05", Why::Killed, true),
            "── restarted 14:05, after it was killed ──"
        );
        assert_eq!(text, "── restored 14:05, after the machine restarted ──");
        assert!(
            RESET.starts_with(b"\x18"),
            "an unfinished sequence ends first"
        );
        assert_eq!(
            mark_line(&text),
            "\x1b[1m── restored 14:05, after the machine restarted ──\x1b[0m\r\n".as_bytes()
        );
        assert_eq!(scroll_off(2, 24), b"\x1b[24;1H\n\n\x1b[2J\x1b[H");
        let hhmm = local_hhmm();
        assert_eq!(&hhmm[2..3], ":");
    }
}
