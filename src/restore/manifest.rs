//! A session's manifest: `<sessions dir>/<id>.json`, what `hm restore`
//! needs to start it again after the machine (or its supervisor) went
//! away, and how it ended if it did.
//!
//! The file is JSON with a `format` number. A reader takes every format up
//! to [`FORMAT`] (fields added later have defaults) and refuses a newer
//! one by name, so an older `hm` never misreads what a newer one wrote.
//! A change a reader of the current format could misread bumps it.
//!
//! Written whole: a temporary file of this process, synced, renamed over
//! the manifest, and the directory synced, so a crash leaves the old
//! manifest or the new one, never half of one. Mode 0600.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::classify::ClassifierSpec;

/// The format this version writes, and the newest it reads.
pub const FORMAT: u32 = 1;
/// Largest manifest read; anything larger was not written by hm.
const MAX_BYTES: u64 = 256 * 1024;

/// What is kept of one session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    pub id: String,
    /// Which supervisor wrote it, `<pid>-<start ms>`: a supervisor
    /// rewrites the manifest only while it is still its own, and a restore
    /// starts only the one it read (see `hm restore`).
    pub instance: String,
    #[serde(default)]
    pub label: Option<String>,
    /// The command and its arguments as given (before hm added its hooks).
    pub argv: Vec<String>,
    /// Set if an argument was not UTF-8 and is kept here altered: such a
    /// command is not run again.
    #[serde(default)]
    pub argv_lossy: bool,
    /// Where the command was found when it started, for a restore whose
    /// `PATH` lacks it (a login service's).
    #[serde(default)]
    pub program_path: Option<String>,
    /// The directory it started in.
    pub workdir: String,
    /// The program's own directory when last seen (a shell's after `cd`).
    #[serde(default)]
    pub cwd: Option<String>,
    pub socket_dir: String,
    /// The machine it runs on.
    #[serde(default)]
    pub host: String,
    /// The boot it started in.
    #[serde(default)]
    pub boot_id: String,
    pub classifier: Classifier,
    pub cols: u16,
    pub rows: u16,
    /// The names of the `[[env]]` variables it was given; never values.
    #[serde(default)]
    pub env: Vec<String>,
    /// The environment it started in, but for the values of secrets,
    /// `[[env]]` and its login's variables ([`super::environ`]); `None`
    /// from an hm that did not keep it, and a restore then starts it in
    /// its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environ: Option<std::collections::BTreeMap<String, String>>,
    /// The names of the variables named as secrets that it had: their
    /// values are never kept, a restore takes them from its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secret_env: Vec<String>,
    pub started_unix_ms: u64,
    /// Started with `hm run --restore`: run the command again on restore.
    #[serde(default)]
    pub rerun: bool,
    /// The agent's own conversation, once a hook has named it.
    #[serde(default)]
    pub agent: Option<AgentSession>,
    /// When this session was itself a restore.
    #[serde(default)]
    pub restored_unix_ms: Option<u64>,
    /// How it ended, if its supervisor lived to say.
    #[serde(default)]
    pub ended: Option<End>,
}

/// The agent's conversation: what its resume command takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentSession {
    /// `claude`, `codex` or `gemini`.
    pub agent: String,
    pub id: String,
}

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct End {
    pub unix_ms: u64,
    pub how: EndHow,
    pub code: i32,
    /// `Exited` of a signal, whoever sent it (a Ctrl-C typed into the
    /// program, a `kill` from another shell): its record says killed, and
    /// so does a record made from this end once a reboot took that one
    /// (`crate::ended::from_kept`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub signaled: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EndHow {
    /// The program ended on its own.
    Exited,
    /// Someone asked: `hm kill`, the dashboard's `x`, a KILL frame.
    Killed,
    /// The supervisor was told to stop by a signal (SIGTERM from a system
    /// shutting down, SIGHUP from a closed terminal): not the user's
    /// choice through hm, so the session may be restored.
    Stopped,
}

impl Manifest {
    /// The pid of the supervisor that wrote it (its `instance`).
    pub fn supervisor_pid(&self) -> Option<u32> {
        self.instance
            .split_once('-')
            .and_then(|(pid, _)| pid.parse().ok())
    }

    /// Whether `hm restore` may start it again: its supervisor went away
    /// without ending it, or was stopped by a signal.
    pub fn lost(&self) -> bool {
        self.ended.is_none_or(|e| e.how == EndHow::Stopped)
    }
}

/// The classifier and its settings, as `ClassifierSpec` has them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Classifier {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_threshold_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debounce_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stuck_after_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_evidence: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_protocol: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<bool>,
}

impl From<&ClassifierSpec> for Classifier {
    fn from(spec: &ClassifierSpec) -> Classifier {
        let mut c = Classifier {
            name: spec.name().to_owned(),
            idle_threshold_ms: spec.idle_threshold_ms(),
            debounce_ms: None,
            stuck_after_ms: None,
            process_evidence: None,
            status_protocol: None,
            hooks: None,
        };
        match *spec {
            ClassifierSpec::Claude { debounce_ms, .. } => c.debounce_ms = Some(debounce_ms),
            ClassifierSpec::Agent {
                stuck_after_ms,
                process_evidence,
                status_protocol,
                hooks,
                ..
            } => {
                c.stuck_after_ms = Some(stuck_after_ms);
                c.process_evidence = Some(process_evidence);
                c.status_protocol = Some(status_protocol);
                c.hooks = Some(hooks);
            }
            ClassifierSpec::None | ClassifierSpec::Simple { .. } => {}
        }
        c
    }
}

impl Classifier {
    /// The spec again; settings not recorded take their defaults. `None`
    /// for a classifier this version does not know.
    pub fn spec(&self) -> Option<ClassifierSpec> {
        let mut spec = ClassifierSpec::by_name(&self.name)?;
        match &mut spec {
            ClassifierSpec::None => {}
            ClassifierSpec::Simple { idle_threshold_ms } => {
                *idle_threshold_ms = self.idle_threshold_ms.unwrap_or(*idle_threshold_ms);
            }
            ClassifierSpec::Claude {
                idle_threshold_ms,
                debounce_ms,
            } => {
                *idle_threshold_ms = self.idle_threshold_ms.unwrap_or(*idle_threshold_ms);
                *debounce_ms = self.debounce_ms.unwrap_or(*debounce_ms);
            }
            ClassifierSpec::Agent {
                idle_threshold_ms,
                stuck_after_ms,
                process_evidence,
                status_protocol,
                hooks,
            } => {
                *idle_threshold_ms = self.idle_threshold_ms.unwrap_or(*idle_threshold_ms);
                *stuck_after_ms = self.stuck_after_ms.unwrap_or(*stuck_after_ms);
                *process_evidence = self.process_evidence.unwrap_or(*process_evidence);
                *status_protocol = self.status_protocol.unwrap_or(*status_protocol);
                *hooks = self.hooks.unwrap_or(*hooks);
            }
        }
        Some(spec)
    }
}

/// Why a manifest could not be read. The file is left where it is.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("there is none")]
    Missing,
    #[error("cannot read it")]
    Io(#[source] io::Error),
    #[error("it is not a file")]
    NotAFile,
    #[error("it is {0} bytes, more than a manifest ever is")]
    TooLarge(u64),
    #[error("it is truncated")]
    Truncated,
    #[error("it is not a manifest ({0})")]
    NotAManifest(String),
    #[error("it was written by a newer hm (format {0}; this one reads up to {FORMAT}): upgrade hm")]
    Future(u32),
    #[error("it names session '{0}' instead")]
    WrongId(String),
}

/// The manifest file of session `id`.
pub fn path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.json"))
}

/// Reads the manifest of `id`.
pub fn read(dir: &Path, id: &str) -> Result<Manifest, ReadError> {
    let file = path(dir, id);
    let meta = match fs::symlink_metadata(&file) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(ReadError::Missing),
        Err(e) => return Err(ReadError::Io(e)),
    };
    if !meta.is_file() {
        return Err(ReadError::NotAFile);
    }
    if meta.len() > MAX_BYTES {
        return Err(ReadError::TooLarge(meta.len()));
    }
    let m = parse(&fs::read(&file).map_err(ReadError::Io)?)?;
    if m.id != id {
        return Err(ReadError::WrongId(crate::paths::sanitize(&m.id)));
    }
    Ok(m)
}

/// A manifest from its bytes: the format is checked before the fields, so
/// a newer format is named as such rather than as a field it lacks.
pub fn parse(bytes: &[u8]) -> Result<Manifest, ReadError> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        if e.is_eof() {
            ReadError::Truncated
        } else {
            ReadError::NotAManifest(format!("not JSON: {e}"))
        }
    })?;
    let format = value
        .get("format")
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| ReadError::NotAManifest("no format number".into()))?;
    if format > u64::from(FORMAT) {
        return Err(ReadError::Future(u32::try_from(format).unwrap_or(u32::MAX)));
    }
    serde_json::from_value(value).map_err(|e| ReadError::NotAManifest(e.to_string()))
}

/// Every manifest in `dir` by id, readable or not, in id order. Files
/// that are not named `<valid id>.json` are not ours and are skipped.
pub fn list(dir: &Path) -> Vec<(String, Result<Manifest, ReadError>)> {
    ids(dir)
        .into_iter()
        .map(|id| {
            let m = read(dir, &id);
            (id, m)
        })
        .collect()
}

/// The ids of the manifests in `dir`, in id order, none read yet (see
/// [`list`]).
pub fn ids(dir: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut all: Vec<String> = entries
        .filter_map(|e| {
            let name = e.ok()?.file_name();
            let id = name.to_str()?.strip_suffix(".json")?.to_owned();
            crate::paths::validate_id(&id).ok()?;
            Some(id)
        })
        .collect();
    all.sort_by(|a, b| crate::paths::natural_cmp(a, b));
    all
}

/// Writes `m` whole (see the module doc).
pub fn write(dir: &Path, m: &Manifest) -> io::Result<()> {
    write_as(dir, m, true)
}

/// Writes `m` whole, `synced` or not: unsynced, it survives the death of
/// the process, not the machine's, until [`sync`] is called.
pub fn write_as(dir: &Path, m: &Manifest, synced: bool) -> io::Result<()> {
    let target = path(dir, &m.id);
    // Of this process: two supervisors of one id (in two socket dirs)
    // must not write into each other's temporary file.
    let tmp = dir.join(format!(".{}.{}.tmp", m.id, std::process::id()));
    let written = (|| {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)?;
        let mut bytes = serde_json::to_vec_pretty(m).map_err(io::Error::other)?;
        bytes.push(b'\n');
        f.write_all(&bytes)?;
        if synced {
            f.sync_all()?;
        }
        fs::rename(&tmp, &target)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written?;
    if synced { sync_dir(dir) } else { Ok(()) }
}

/// Makes the manifest of `id` written by [`write_as`] unsynced durable.
pub fn sync(dir: &Path, id: &str) -> io::Result<()> {
    fs::File::open(path(dir, id))?.sync_all()?;
    sync_dir(dir)
}

/// Makes a rename in `dir` durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

/// Removes the manifest and history of `id`.
pub fn remove(dir: &Path, id: &str) {
    let _ = fs::remove_file(path(dir, id));
    let _ = fs::remove_file(super::history::path(dir, id));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    pub(crate) fn sample(id: &str) -> Manifest {
        Manifest {
            format: FORMAT,
            id: id.into(),
            instance: "10-20".into(),
            label: Some("api".into()),
            argv: vec!["npm".into(), "run".into(), "dev".into()],
            argv_lossy: false,
            program_path: Some("/usr/bin/npm".into()),
            workdir: "/srv/app".into(),
            cwd: None,
            socket_dir: "/run/user/1000/heimdall".into(),
            host: "box".into(),
            boot_id: "b1".into(),
            classifier: Classifier::from(&ClassifierSpec::agent()),
            cols: 120,
            rows: 40,
            env: vec!["TOKEN".into()],
            environ: None,
            secret_env: Vec::new(),
            started_unix_ms: 1,
            rerun: true,
            agent: None,
            restored_unix_ms: None,
            ended: None,
        }
    }

    #[test]
    fn a_manifest_is_written_whole_and_private_and_read_back() {
        let dir = tempfile::tempdir().expect("dir");
        let m = sample("api");
        write(dir.path(), &m).expect("write");
        assert_eq!(read(dir.path(), "api").expect("read"), m);
        let mode = fs::metadata(path(dir.path(), "api"))
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let names: Vec<_> = fs::read_dir(dir.path())
            .expect("ls")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["api.json"], "no temporary file left");
        assert!(m.lost());
    }

    #[test]
    fn bad_manifests_say_what_is_wrong() {
        let dir = tempfile::tempdir().expect("dir");
        let whole = serde_json::to_vec(&sample("a")).expect("json");
        let cases: [(&str, Vec<u8>, &str); 5] = [
            ("a", whole[..whole.len() / 2].to_vec(), "truncated"),
            ("a", b"format = 1\n".to_vec(), "not JSON"),
            (
                "a",
                br#"{"format": 99, "id": "a"}"#.to_vec(),
                "newer hm (format 99",
            ),
            (
                "a",
                br#"{"format": 1, "id": "a"}"#.to_vec(),
                "missing field",
            ),
            ("a", br#"{"id": "a"}"#.to_vec(), "no format number"),
        ];
        for (id, bytes, says) in cases {
            fs::write(path(dir.path(), id), &bytes).expect("write");
            let e = read(dir.path(), id).expect_err("refused");
            assert!(e.to_string().contains(says), "{e} / {says}");
        }
        fs::write(path(dir.path(), "b"), &whole).expect("write");
        assert!(matches!(read(dir.path(), "b"), Err(ReadError::WrongId(_))));
        assert!(matches!(read(dir.path(), "c"), Err(ReadError::Missing)));
        let listed: Vec<_> = list(dir.path())
            .into_iter()
            .map(|(id, m)| (id, m.is_ok()))
            .collect();
        assert_eq!(listed, [("a".into(), false), ("b".into(), false)]);
    }

    #[test]
    fn fields_added_later_have_defaults() {
        // The fewest fields format 1 can have.
        let bytes = br#"{"format": 1, "id": "s", "instance": "1-2", "argv": ["sh"],
            "workdir": "/", "socket_dir": "/run/hm", "classifier": {"name": "simple"},
            "cols": 80, "rows": 24, "started_unix_ms": 5, "some_future_field": [1, 2]}"#;
        let m = parse(bytes).expect("read");
        assert!(m.lost() && !m.rerun && m.agent.is_none() && m.env.is_empty());
        assert_eq!(
            m.classifier.spec(),
            Some(ClassifierSpec::default()),
            "defaults fill the settings"
        );
    }

    #[test]
    fn classifier_settings_round_trip() {
        for spec in [
            ClassifierSpec::None,
            ClassifierSpec::Simple {
                idle_threshold_ms: 7,
            },
            ClassifierSpec::Claude {
                idle_threshold_ms: 8,
                debounce_ms: 9,
            },
            ClassifierSpec::Agent {
                idle_threshold_ms: 1,
                stuck_after_ms: 2000,
                process_evidence: false,
                status_protocol: true,
                hooks: false,
            },
        ] {
            assert_eq!(Classifier::from(&spec).spec(), Some(spec));
        }
        let unknown = Classifier {
            name: "magic".into(),
            ..Classifier::from(&ClassifierSpec::None)
        };
        assert_eq!(unknown.spec(), None);
    }

    #[test]
    fn stopped_sessions_are_lost_killed_and_exited_ones_are_not() {
        let mut m = sample("a");
        for (how, lost) in [
            (EndHow::Stopped, true),
            (EndHow::Killed, false),
            (EndHow::Exited, false),
        ] {
            m.ended = Some(End {
                signaled: false,
                unix_ms: 1,
                how,
                code: 0,
            });
            assert_eq!(m.lost(), lost, "{how:?}");
        }
    }
}
