//! What is left of a session that ended: `<socket_dir>/<id>.ended`, a
//! small JSON record (command, directory, exit code, times, last lines)
//! that `hm ls`, `hm status` and `hm restart` read until `hm rm` or
//! `hm clean` removes it, or it ages out.
//!
//! A record is written whole (a temporary file renamed into place, mode
//! 0600) and never trusted for liveness: the pid file's lock says whether
//! a session runs; a record says only how one ended. A supervisor starting
//! under an id removes that id's record.
//!
//! The socket dir is a tmpfs that a reboot empties; the session's manifest
//! in the state dir (`crate::restore`) says how it ended too, and outlives
//! it. Where a record is gone but the manifest of a session of this dir
//! and machine says it ended, [`list`] and [`get`] read the record from
//! the manifest ([`from_kept`]): an ended session stays listed, its
//! output readable, until `hm rm` or `hm clean`, reboot or not.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Records kept per socket dir; the oldest beyond go when one is written.
pub const KEEP: usize = 50;
/// Records older than this go when one is written (7 days).
pub const MAX_AGE_MS: u64 = 7 * 24 * 3600 * 1000;
/// Lines of the last screen kept.
pub const LAST_LINES: usize = 10;
/// Longest record read back; anything larger was not written by hm.
const MAX_RECORD: u64 = 64 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ended {
    pub id: String,
    pub command: Vec<String>,
    pub workdir: String,
    pub classifier: String,
    pub started_unix_ms: u64,
    pub ended_unix_ms: u64,
    pub exit_code: i32,
    /// The last non-empty rows of its screen, oldest first.
    pub last_lines: Vec<String>,
    /// A person's name for it (`--label`).
    #[serde(default)]
    pub label: Option<String>,
    /// Its terminal size when it ended (0 if not known), for a restart.
    #[serde(default)]
    pub cols: u16,
    #[serde(default)]
    pub rows: u16,
    /// Someone asked for its end (`hm kill`, the dashboard's `x`, a KILL
    /// frame), so its code says how it took that, not that it failed.
    #[serde(default)]
    pub killed: bool,
}

pub fn path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.ended"))
}

/// The last rows of `screen_text` that say something, each cut to 200
/// characters: blank rows and rules (a full-screen program's box, a
/// build's `=====`) would take the few kept from what it said last.
pub fn last_lines(screen_text: &str) -> Vec<String> {
    let rows: Vec<String> = screen_text
        .lines()
        .filter(|l| crate::vt::lines::says_something(l))
        .map(|l| l.trim_end().chars().take(200).collect::<String>())
        .collect();
    let start = rows.len().saturating_sub(LAST_LINES);
    rows[start..].to_vec()
}

/// Writes `record` whole, then trims the dir to [`KEEP`] records no older
/// than [`MAX_AGE_MS`].
pub fn write(dir: &Path, record: &Ended) -> io::Result<()> {
    let target = path(dir, &record.id);
    let tmp = dir.join(format!(".{}.ended.tmp", record.id));
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(&serde_json::to_vec(record).map_err(io::Error::other)?)?;
    f.sync_all()?;
    fs::set_permissions(&tmp, fs::Permissions::from_mode(0o600))?;
    fs::rename(&tmp, &target)?;
    trim(dir, record.ended_unix_ms);
    Ok(())
}

/// Reads one record; `None` if missing, too large or not one of ours.
pub fn read(file: &Path) -> Option<Ended> {
    let meta = fs::symlink_metadata(file).ok()?;
    if !meta.is_file() || meta.len() > MAX_RECORD {
        return None;
    }
    serde_json::from_slice(&fs::read(file).ok()?).ok()
}

/// Every session of `dir` that ended, most recently ended first: the
/// records, and those whose record went with the socket dir but whose
/// manifest says they ended ([`from_kept`]).
pub fn list(dir: &Path) -> Vec<Ended> {
    list_besides(dir, |_| false)
}

/// [`list`], for a caller that already knows which ids are `running`:
/// their manifests are not read (`hm ls` of 50 sessions, and the
/// dashboard's every look, would read them all to find them running).
pub fn list_besides(dir: &Path, running: impl Fn(&str) -> bool) -> Vec<Ended> {
    let mut all = records(dir);
    if let Some(state) = crate::restore::sessions_dir() {
        let host = crate::restore::host_name();
        for id in crate::restore::manifest::ids(&state) {
            if !running(&id)
                && !all.iter().any(|r| r.id == id)
                && let Some(r) = kept_end(&state, &host, dir, &id)
            {
                all.push(r);
            }
        }
    }
    all.sort_by(|a, b| b.ended_unix_ms.cmp(&a.ended_unix_ms).then(a.id.cmp(&b.id)));
    all
}

/// How session `id` of `dir` ended: its record, else what its manifest
/// says ([`list`]); `None` if it did not end, or nothing says so.
pub fn get(dir: &Path, id: &str) -> Option<Ended> {
    crate::paths::validate_id(id).ok()?;
    read(&path(dir, id)).or_else(|| {
        let state = crate::restore::sessions_dir()?;
        let mut r = kept_end(&state, &crate::restore::host_name(), dir, id)?;
        // One session asked for: its last lines from its kept output, as
        // its record had them (`hm status` of one ended before a reboot
        // said nothing of how it ended). Not for a list: each would cost
        // a read and an emulation of its output.
        if let Ok(m) = crate::restore::manifest::read(&state, id) {
            r.last_lines = kept_last_lines(&state, &m);
        }
        Some(r)
    })
}

/// The last rows a session's kept output (`restore::history`) leaves on a
/// screen of its size: what its record would have said.
pub fn kept_last_lines(state: &Path, m: &crate::restore::manifest::Manifest) -> Vec<String> {
    let Ok(Some(history)) = crate::restore::history::read(state, &m.id, usize::MAX) else {
        return Vec::new();
    };
    let size = crate::protocol::Size {
        cols: m.cols,
        rows: m.rows,
    }
    .clamped();
    let mut term: crate::vt::term::Term = crate::vt::term::Term::new(size);
    term.feed(&history.bytes);
    last_lines(&term.contents_with_left())
}

/// The records in `dir`, the files alone, in no order: for another
/// machine's sessions, mounted here, whose manifests are on that machine
/// (its proxy's [`list`] has read them), and none of this one's can be
/// theirs; reading those was a parse of every manifest here at each of
/// the dashboard's looks at a host.
pub fn records(dir: &Path) -> Vec<Ended> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name();
            let id = name.to_str()?.strip_suffix(".ended")?;
            crate::paths::validate_id(id).ok()?;
            read(&e.path()).filter(|r| r.id == id)
        })
        .collect()
}

/// The end of session `id` of socket dir `dir` on machine `host` as its
/// manifest in `state` keeps it, when it has no record: it ended (not
/// stopped by a signal: that one is lost, for `hm restore`), and no
/// supervisor holds its id (one starting under it is about to write its
/// own manifest).
fn kept_end(state: &Path, host: &str, dir: &Path, id: &str) -> Option<Ended> {
    let m = crate::restore::manifest::read(state, id).ok()?;
    let here = Path::new(&m.socket_dir) == dir && (m.host.is_empty() || m.host == host);
    (here && !m.lost() && !path(dir, id).exists() && !crate::liveness::held(dir, id))
        .then(|| from_kept(&m))
        .flatten()
}

/// The record a manifest that says how its session ended stands for.
/// Its last lines are not kept there ([`get`] reads them from its kept
/// output).
pub fn from_kept(m: &crate::restore::manifest::Manifest) -> Option<Ended> {
    use crate::restore::manifest::EndHow;
    let end = m.ended.filter(|e| e.how != EndHow::Stopped)?;
    Some(Ended {
        id: m.id.clone(),
        command: m.argv.clone(),
        workdir: m.workdir.clone(),
        classifier: m.classifier.name.clone(),
        started_unix_ms: m.started_unix_ms,
        ended_unix_ms: end.unix_ms,
        exit_code: end.code,
        last_lines: Vec::new(),
        label: m.label.clone(),
        cols: m.cols,
        rows: m.rows,
        killed: end.how == EndHow::Killed || end.signaled,
    })
}

/// The order `hm ls` lists ended sessions in: most recent first to the
/// second it shows, then by id, so `sleep` and `sleep-2` ended together
/// read in their names' order rather than swapped by milliseconds.
pub fn shown_order(a: &Ended, b: &Ended) -> std::cmp::Ordering {
    let second = |r: &Ended| r.ended_unix_ms / 1000;
    second(b)
        .cmp(&second(a))
        .then_with(|| crate::paths::natural_cmp(&a.id, &b.id))
}

/// Removes `id`'s record; false if there was none.
pub fn remove(dir: &Path, id: &str) -> io::Result<bool> {
    match fs::remove_file(path(dir, id)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Forgets `id`, ended or lost: its record, its log, its agent's hook
/// settings, what is kept of it for `hm restore`, and the pid file and
/// socket a supervisor that died left behind. Those go only with the
/// record; a failure to remove the record is the error to report. A
/// session of this id that runs (or a program that outlived its
/// supervisor) keeps everything.
pub fn forget(dir: &Path, id: &str) -> io::Result<()> {
    remove(dir, id)?;
    if let Ok(p) = crate::paths::SessionPaths::new(dir, id) {
        // Probed under the pid file's lock, which clears a dead
        // supervisor's pid file and socket as it looks.
        use crate::liveness::Liveness;
        if matches!(
            crate::liveness::probe(&p.pid, &p.sock, true),
            Liveness::Running | Liveness::Orphaned(_)
        ) {
            return Ok(());
        }
        let _ = fs::remove_file(p.log);
        let _ = fs::remove_file(crate::agent_hooks::settings_file(dir, id));
    }
    crate::restore::forget(id, dir);
    Ok(())
}

/// Trims the records to [`KEEP`], none older than [`MAX_AGE_MS`]; the log
/// of a session whose record goes, goes with it (a record exists only
/// while no session of its id runs: one that starts removes it). The
/// ended sessions known from their manifests count, and age, as records.
fn trim(dir: &Path, now_ms: u64) {
    for (i, r) in list(dir).iter().enumerate() {
        if i >= KEEP || now_ms.saturating_sub(r.ended_unix_ms) > MAX_AGE_MS {
            let _ = forget(dir, &r.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, ended: u64) -> Ended {
        Ended {
            id: id.into(),
            command: vec!["sh".into()],
            workdir: "/".into(),
            classifier: "simple".into(),
            started_unix_ms: 0,
            ended_unix_ms: ended,
            exit_code: 3,
            last_lines: vec!["bye".into()],
            label: None,
            cols: 80,
            rows: 24,
            killed: false,
        }
    }

    #[test]
    fn records_are_written_whole_private_and_read_back() {
        let dir = tempfile::tempdir().expect("dir");
        write(dir.path(), &record("a", 10)).expect("write");
        let f = path(dir.path(), "a");
        assert_eq!(
            fs::metadata(&f).expect("meta").permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(read(&f), Some(record("a", 10)));
        assert!(!dir.path().join(".a.ended.tmp").exists());
        // Not ours: too large, not JSON, or another id inside.
        fs::write(path(dir.path(), "b"), "{").expect("write");
        let mut c = record("c", 5);
        c.id = "other".into();
        fs::write(path(dir.path(), "c"), serde_json::to_vec(&c).expect("json")).expect("write");
        assert_eq!(list(dir.path()), vec![record("a", 10)]);
        assert!(remove(dir.path(), "a").expect("rm"));
        assert!(!remove(dir.path(), "a").expect("rm again"));
    }

    #[test]
    fn old_and_surplus_records_age_out() {
        let dir = tempfile::tempdir().expect("dir");
        for i in 0..(KEEP as u64 + 5) {
            write(dir.path(), &record(&format!("s{i}"), MAX_AGE_MS + i)).expect("write");
        }
        let kept = list(dir.path());
        assert_eq!(kept.len(), KEEP);
        assert_eq!(kept[0].id, format!("s{}", KEEP + 4));
        write(dir.path(), &record("late", 3 * MAX_AGE_MS)).expect("write");
        assert_eq!(list(dir.path()).len(), 1, "the week-old ones went");
    }

    #[test]
    fn ended_sessions_are_shown_newest_second_first_then_by_name() {
        let mut all = [
            record("sleep-10", 5_100),
            record("sleep", 5_900),
            record("sleep-2", 5_950),
            record("old", 1_000),
            record("new", 9_000),
        ];
        all.sort_by(shown_order);
        let ids: Vec<&str> = all.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["new", "sleep", "sleep-2", "sleep-10", "old"]);
    }

    #[test]
    fn last_lines_are_the_end_of_the_screen() {
        let text = "a\n\nb\n────\nc   \n\n\n";
        assert_eq!(last_lines(text), vec!["a", "b", "c"]);
        let many: String = (0..30).map(|i| format!("{i}\n")).collect();
        assert_eq!(last_lines(&many).len(), LAST_LINES);
        assert_eq!(last_lines("").len(), 0);
    }
}
