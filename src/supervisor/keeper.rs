//! What a supervisor keeps on disk for `hm restore` (`crate::restore`):
//! the session's manifest, written when the session starts and when what
//! it records changes (its size, the program's directory, the agent's
//! conversation id, its end), and the tail of its output.
//!
//! Nothing is written per read: the pty reader only moves the head
//! ([`Keeper::output`]), and the state tracker, which runs when output
//! settles, asks [`Keeper::due_ms`] and calls [`Keeper::flush`], so the
//! files are written at most once a second while output flows, once more
//! when it comes to rest, and never while the session is idle (nothing
//! pending, no timer). A failure costs the restore, never the session:
//! it is logged once and the keeper stops.

use std::path::PathBuf;

use tracing::warn;

use crate::protocol::Size;
use crate::restore::history::Writer;
use crate::restore::manifest::{self, AgentSession, End, EndHow, Manifest};

/// The least time between two writes while output flows.
pub const FLUSH_EVERY_MS: u64 = 1000;

/// How long after its start a new session's manifest, written at once,
/// is synced. The sync takes a millisecond or more on a busy disk, and the
/// supervisor answers nobody meanwhile: done at once, it held up the first
/// STATUS of every session. Until then the manifest survives its
/// supervisor's death, not the machine's.
pub const FIRST_SYNC_DELAY_MS: u64 = 200;

#[derive(Debug)]
pub struct Keeper {
    dir: PathBuf,
    manifest: Manifest,
    history: Writer,
    /// The manifest changed since it was last written.
    dirty: bool,
    /// When the files were last written (the session's clock, ms).
    last_ms: Option<u64>,
    /// A new session's: its first write is not synced, and the sync is
    /// due then (the session's clock, ms).
    sync_at: Option<u64>,
    /// The manifest on disk was written without a sync, still owed.
    unsynced: bool,
    /// The output's head: the offset after the last byte read.
    head: u64,
    /// The program, whose directory is read at each write.
    pid: u32,
    /// Stopped: a write failed, or another supervisor took the id's
    /// manifest (a session of the same id in another socket dir).
    off: bool,
    /// The manifest has been written once: from then on it is ours only
    /// while it still names this supervisor. The first write replaces
    /// whatever an earlier session of the id left.
    written: bool,
}

impl Keeper {
    /// Keeps `manifest` and up to `history_bytes` of output in `dir`, for
    /// the program `pid`; nothing is written until [`Keeper::flush`] is
    /// first called, which writes both at once, the manifest synced unless
    /// `sync_at` puts its sync off until then (see
    /// [`FIRST_SYNC_DELAY_MS`]). The output already in the ring (a
    /// restored session's old output) counts as not yet written.
    pub fn start(
        dir: PathBuf,
        manifest: Manifest,
        history_bytes: usize,
        pid: u32,
        sync_at: Option<u64>,
    ) -> Keeper {
        let history = Writer::new(
            crate::restore::history::path(&dir, &manifest.id),
            history_bytes,
        );
        Keeper {
            dir,
            manifest,
            history,
            dirty: true,
            last_ms: None,
            sync_at,
            unsynced: false,
            head: 0,
            pid,
            off: false,
            written: false,
        }
    }

    /// Output was read up to `head`.
    pub fn output(&mut self, head: u64) {
        self.head = head;
    }

    /// A hook named the agent's conversation.
    pub fn conversation(&mut self, agent: &str, id: &str) {
        let now = Some(AgentSession {
            agent: agent.to_owned(),
            id: id.to_owned(),
        });
        if self.manifest.agent != now {
            self.manifest.agent = now;
            self.dirty = true;
        }
    }

    /// The session has a new label (or none).
    pub fn relabelled(&mut self, label: Option<String>) {
        if self.manifest.label != label {
            self.manifest.label = label;
            self.dirty = true;
        }
    }

    pub fn resized(&mut self, size: Size) {
        if (self.manifest.cols, self.manifest.rows) != (size.cols, size.rows) {
            self.manifest.cols = size.cols;
            self.manifest.rows = size.rows;
            self.dirty = true;
        }
    }

    /// When the next write is due (the session's clock, ms); `None` while
    /// nothing waits to be written.
    pub fn due_ms(&self) -> Option<u64> {
        if self.off {
            return None;
        }
        if self.pending() {
            return Some(self.last_ms.map_or(0, |t| t + FLUSH_EVERY_MS));
        }
        self.unsynced.then(|| self.sync_at.unwrap_or(0))
    }

    /// Whether a write is due at `now_ms` (what [`Keeper::flush`] then
    /// does).
    pub fn is_due(&self, now_ms: u64) -> bool {
        self.due_ms().is_some_and(|at| at <= now_ms)
    }

    /// The manifest changed, or output waits to be written.
    fn pending(&self) -> bool {
        self.dirty || self.history.behind(self.head)
    }

    /// Writes what waits, if it is due at `now_ms`; `oldest` and `slices`
    /// read the output held (see [`Writer::write`]). Returns when the next
    /// write is due.
    pub fn flush<'a>(
        &mut self,
        now_ms: u64,
        oldest: u64,
        slices: impl FnOnce(u64, u64) -> Option<(&'a [u8], &'a [u8])>,
    ) -> Option<u64> {
        if !self.is_due(now_ms) {
            return self.due_ms();
        }
        if !self.pending() {
            // Only the first write's sync is owed.
            self.unsynced = false;
            if let Err(e) = manifest::sync(&self.dir, &self.manifest.id) {
                warn!("cannot sync the session's manifest for hm restore: {e}");
            }
            return self.due_ms();
        }
        self.last_ms = Some(now_ms);
        self.write(oldest, slices);
        self.due_ms()
    }

    /// The session is over: the last output and how it ended, whatever
    /// the time since the last write.
    pub fn end<'a>(
        &mut self,
        end: End,
        oldest: u64,
        slices: impl FnOnce(u64, u64) -> Option<(&'a [u8], &'a [u8])>,
    ) {
        self.manifest.ended = Some(end);
        self.dirty = true;
        // The end is written synced, whenever it comes.
        self.sync_at = None;
        self.write(oldest, slices);
        if !self.off
            && let Err(e) = self.history.sync()
        {
            warn!("cannot keep the session's output for hm restore: {e}");
        }
    }

    fn write<'a>(
        &mut self,
        oldest: u64,
        slices: impl FnOnce(u64, u64) -> Option<(&'a [u8], &'a [u8])>,
    ) {
        if self.off {
            return;
        }
        // A shell's `cd` shows in its prompt, that is in output: its
        // directory is looked at when output is written.
        if let Ok(cwd) = std::fs::read_link(format!("/proc/{}/cwd", self.pid)) {
            let cwd = cwd.to_string_lossy().into_owned();
            if self.manifest.cwd.as_deref() != Some(cwd.as_str()) {
                self.manifest.cwd = Some(cwd);
                self.dirty = true;
            }
        }
        if self.dirty {
            self.write_manifest();
        }
        if self.off {
            return;
        }
        if let Err(e) = self.history.write(self.head, oldest, slices) {
            warn!("cannot keep the session's output for hm restore: {e}");
            self.off = true;
        }
    }

    /// Writes the manifest whole, unless another supervisor has taken it.
    fn write_manifest(&mut self) {
        match manifest::read(&self.dir, &self.manifest.id) {
            Ok(on_disk) if self.written && on_disk.instance != self.manifest.instance => {
                warn!(
                    "another session '{}' (in {}) keeps the manifest now; this one is no longer kept for hm restore",
                    on_disk.id, on_disk.socket_dir
                );
                self.off = true;
                return;
            }
            _ => {}
        }
        let synced = self.written || self.sync_at.is_none();
        match manifest::write_as(&self.dir, &self.manifest, synced) {
            Ok(()) => {
                self.unsynced = !synced;
                if !self.written && !self.history.keeps() {
                    // Keeping no output: an earlier session's must not be
                    // shown as this one's.
                    let _ = std::fs::remove_file(self.history.path());
                }
                self.dirty = false;
                self.written = true;
            }
            Err(e) => {
                warn!(
                    "cannot write the session's manifest in '{}' for hm restore: {e}",
                    self.dir.display()
                );
                self.off = true;
            }
        }
    }

    #[cfg(test)]
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }
}

/// What `hm run` asks of the keeper.
#[derive(Debug, Clone)]
pub struct Keep {
    /// The sessions dir (`crate::restore::sessions_dir`).
    pub dir: PathBuf,
    /// `restore_history_bytes`.
    pub history_bytes: usize,
    /// `hm run --restore`: run the command again on restore.
    pub rerun: bool,
    /// The `[[env]]` names given to the program.
    pub env_names: Vec<String>,
    /// Set by `hm restore`: the instance of the lost session's manifest
    /// this start restores.
    pub restoring: Option<String>,
    /// Set by `hm restart`: the restore's mark says restarted.
    pub restarting: bool,
}

/// A restore's start: the lost session's manifest, still the one
/// `hm restore` read, and its old output with the mark after it.
#[derive(Debug)]
pub struct Claim {
    pub old: Manifest,
    /// The lost session's last output, and the mark to show after it.
    pub old_output: Vec<u8>,
    pub mark: String,
    /// For the session's log: why the old output is missing.
    pub warning: Option<String>,
}

/// Takes over lost session `id` for a restore; called with its lock held,
/// so no other supervisor of the id runs. Refused if the manifest is no
/// longer the one `hm restore` read (`token`): another restore, or a new
/// session of the id, came first.
pub fn claim(keep: &Keep, id: &str, token: &str, max_replay: usize) -> anyhow::Result<Claim> {
    use crate::restore::history;
    let old = manifest::read(&keep.dir, id)
        .map_err(|e| anyhow::anyhow!("cannot restore session '{id}': its manifest: {e}"))?;
    // `hm restart` of a session that ended takes its output too.
    let ended = old
        .ended
        .filter(|e| keep.restarting && e.how != EndHow::Stopped);
    if old.instance != token || !(old.lost() || ended.is_some()) {
        anyhow::bail!(
            "session '{id}' was restored or started again meanwhile (by another hm restore?); left as it is"
        );
    }
    let why = if let Some(e) = ended {
        match e.how {
            EndHow::Killed => history::Why::Killed,
            _ => history::Why::Exited(e.code),
        }
    } else if !old.boot_id.is_empty() && old.boot_id == crate::restore::boot_id() {
        history::Why::SupervisorGone
    } else {
        history::Why::Reboot
    };
    let mut warning = None;
    let old_output = match history::read(&keep.dir, id, max_replay) {
        Ok(h) => h.map(|h| h.bytes).unwrap_or_default(),
        Err(e) => {
            // Not read, so not lost either: kept aside, not overwritten.
            let file = history::path(&keep.dir, id);
            let aside = file.with_extension("history.unread");
            let _ = std::fs::rename(&file, &aside);
            warning = Some(format!(
                "the old output cannot be read ({e}); restored without it, the file is kept as '{}'",
                aside.display()
            ));
            Vec::new()
        }
    };
    Ok(Claim {
        mark: history::mark(&history::local_hhmm(), why, keep.restarting),
        old_output,
        old,
        warning,
    })
}

/// Whether the session `opts` starts may keep its files for `hm restore`:
/// they are named by id, and another socket dir's session of the same id
/// that runs, or was lost and waits for `hm restore`, keeps its own there.
/// Overwritten, it vanished after a restart (and `hm rm` of this one took
/// its files). This session is then not kept, and its log says why.
pub fn may_keep(keep: &Keep, opts: &super::Options) -> bool {
    match manifest::read(&keep.dir, &opts.paths.id) {
        Ok(m) if std::path::Path::new(&m.socket_dir) != opts.dir.path() && m.lost() => {
            tracing::warn!(
                "not kept for hm restore: session '{}' of {} keeps that name",
                m.id,
                m.socket_dir
            );
            false
        }
        _ => true,
    }
}

/// The manifest of the session `opts` starts: its command as given (before
/// hm added the agent's hooks), where, how and by which supervisor; a
/// restore carries the lost session's conversation over until the agent's
/// hooks name it again.
pub fn manifest(
    opts: &super::Options,
    keep: &Keep,
    started_unix_ms: u64,
    claim: Option<&Claim>,
) -> Manifest {
    let words: Vec<&std::ffi::OsStr> = std::iter::once(opts.spawn.program.as_os_str())
        .chain(opts.spawn.args.iter().map(|a| a.as_os_str()))
        .collect();
    // The supervisor's own environment is the one its program inherits,
    // before hm's variables and `[[env]]`.
    let mut environ = crate::restore::environ::keep(std::env::vars_os(), &keep.env_names);
    // A restore or restart without a secret the session had keeps its
    // name: the next one, from an environment that has it, passes it on
    // (a restart from the dashboard's environment lost it for good).
    if let Some(c) = claim {
        for name in &c.old.secret_env {
            if std::env::var_os(name).is_none() && !environ.secrets.contains(name) {
                environ.secrets.push(name.clone());
            }
        }
        environ.secrets.sort();
    }
    Manifest {
        format: manifest::FORMAT,
        id: opts.paths.id.clone(),
        instance: format!("{}-{started_unix_ms}", std::process::id()),
        label: opts.label.clone(),
        argv: words
            .iter()
            .map(|w| w.to_string_lossy().into_owned())
            .collect(),
        argv_lossy: words.iter().any(|w| w.to_str().is_none()),
        program_path: crate::restore::find_on_path(&opts.spawn.program)
            .map(|p| p.to_string_lossy().into_owned()),
        workdir: opts.spawn.workdir.to_string_lossy().into_owned(),
        cwd: None,
        socket_dir: opts.dir.path().to_string_lossy().into_owned(),
        host: crate::restore::host_name(),
        boot_id: crate::restore::boot_id(),
        classifier: manifest::Classifier::from(&opts.classifier),
        cols: opts.spawn.size.cols,
        rows: opts.spawn.size.rows,
        env: keep.env_names.clone(),
        environ: Some(environ.vars),
        secret_env: environ.secrets,
        started_unix_ms,
        rerun: keep.rerun,
        // The conversation goes on only where the command resumes it (a
        // restart that runs the command as it was, or `--fresh`, starts
        // another, which its hooks name).
        agent: claim
            .and_then(|c| c.old.agent.clone())
            .filter(|a| words.iter().any(|w| *w == a.id.as_str())),
        restored_unix_ms: claim.map(|_| started_unix_ms),
        ended: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::restore::manifest::Classifier;

    fn manifest(id: &str, instance: &str) -> Manifest {
        Manifest {
            format: manifest::FORMAT,
            id: id.into(),
            instance: instance.into(),
            label: None,
            argv: vec!["sh".into()],
            argv_lossy: false,
            program_path: None,
            workdir: "/".into(),
            cwd: None,
            socket_dir: "/run/hm".into(),
            host: String::new(),
            boot_id: String::new(),
            classifier: Classifier::from(&crate::classify::ClassifierSpec::default()),
            cols: 80,
            rows: 24,
            env: Vec::new(),
            environ: None,
            secret_env: Vec::new(),
            started_unix_ms: 0,
            rerun: false,
            agent: None,
            restored_unix_ms: None,
            ended: None,
        }
    }

    /// Flushes `k` at `now` from `out`, as the tracker does from the ring.
    fn flush(k: &mut Keeper, out: &[u8], now: u64) -> Option<u64> {
        k.output(out.len() as u64);
        k.flush(now, 0, |from, to| {
            Some((&out[from as usize..to as usize], &[][..]))
        })
    }

    #[test]
    fn a_new_sessions_first_write_is_synced_later() {
        let dir = tempfile::tempdir().expect("dir");
        let mut k = Keeper::start(dir.path().into(), manifest("s", "a"), 1000, 1, Some(200));
        assert_eq!(flush(&mut k, b"", 0), Some(200), "written, its sync owed");
        assert!(manifest::read(dir.path(), "s").is_ok());
        assert_eq!(flush(&mut k, b"", 100), Some(200));
        assert_eq!(flush(&mut k, b"", 200), None, "synced");
        // Later writes are synced as they are made.
        k.resized(Size { cols: 90, rows: 20 });
        assert_eq!(flush(&mut k, b"", 1000), None);
        assert_eq!(manifest::read(dir.path(), "s").expect("read").cols, 90);
    }

    #[test]
    fn writes_at_most_once_a_second_and_not_while_idle() {
        let dir = tempfile::tempdir().expect("dir");
        let pid = std::process::id();
        let mut k = Keeper::start(dir.path().into(), manifest("s", "a"), 1000, pid, None);
        assert_eq!(k.due_ms(), Some(0), "written at the first round");
        assert_eq!(flush(&mut k, b"", 5), None, "then nothing is pending");
        assert!(manifest::read(dir.path(), "s").is_ok());
        // Output flows: the next write a second after the last.
        assert_eq!(flush(&mut k, b"one\n", 100), Some(1005));
        assert_eq!(flush(&mut k, b"one\ntwo\n", 600), Some(1005));
        assert_eq!(flush(&mut k, b"one\ntwo\n", 1005), None);
        let h = crate::restore::history::read(dir.path(), "s", 100).expect("read");
        assert_eq!(h.expect("some").bytes, b"one\ntwo\n");
        // Idle: nothing due, whatever the time.
        assert_eq!(k.due_ms(), None);
        // What the manifest records changes: written at the next round.
        k.conversation("claude", "c1");
        k.resized(Size {
            cols: 100,
            rows: 30,
        });
        assert_eq!(k.due_ms(), Some(2005));
        assert_eq!(flush(&mut k, b"one\ntwo\n", 2005), None);
        let m = manifest::read(dir.path(), "s").expect("read");
        assert_eq!((m.cols, m.rows), (100, 30));
        assert_eq!(m.agent.map(|a| a.id).as_deref(), Some("c1"));
        assert!(m.cwd.is_some(), "the program's directory");
        // The end is written at once.
        let end = End {
            unix_ms: 9,
            how: EndHow::Stopped,
            code: 143,
            signaled: false,
        };
        k.end(end, 0, |_, _| Some((&[][..], &[][..])));
        let m = manifest::read(dir.path(), "s").expect("read");
        assert_eq!(
            m.ended.map(|e| (e.how, e.code)),
            Some((EndHow::Stopped, 143))
        );
        assert!(m.lost(), "stopped by a signal: may be restored");
    }

    #[test]
    fn a_manifest_another_supervisor_took_is_left_to_it() {
        let dir = tempfile::tempdir().expect("dir");
        let mut k = Keeper::start(dir.path().into(), manifest("s", "mine"), 1000, 1, None);
        flush(&mut k, b"x", 0);
        manifest::write(dir.path(), &manifest("s", "theirs")).expect("write");
        k.resized(Size { cols: 90, rows: 20 });
        flush(&mut k, b"xy", 2000);
        let m = manifest::read(dir.path(), "s").expect("read");
        assert_eq!((m.instance.as_str(), m.cols), ("theirs", 80));
        assert_eq!(k.due_ms(), None, "stopped keeping");
    }

    #[test]
    fn keeping_no_output_removes_an_earlier_sessions() {
        let dir = tempfile::tempdir().expect("dir");
        let old = crate::restore::history::path(dir.path(), "s");
        std::fs::write(&old, "hm-history 1 0\nold\n").expect("write");
        let mut k = Keeper::start(dir.path().into(), manifest("s", "a"), 0, 1, None);
        flush(&mut k, b"new", 0);
        assert!(!old.exists());
    }
}
