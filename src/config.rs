//! `heimdall.toml` plus command-line overrides -> one resolved, validated [`Config`].
//!
//! This module owns the file format: where the file is looked for, what each
//! key accepts, the error a person sees for a bad value (always naming the
//! file, the line and the key), and how `hm run` flags override the file.
//! Everything except [`Config::load`] is pure. It must not create
//! directories, make relative paths absolute or pick the default socket
//! directory: `None` and relative paths are resolved by the caller.
//!
//! The file is walked as a spanned TOML tree rather than deserialised with
//! serde derive, so that every error names the key and line in the same words
//! and `[[env]]` values, which may be secrets, never appear in a message.
//! See `docs/configuration.md` and `heimdall.toml.example`.
//!
//! This file holds the resolved value, its defaults and limits, and the
//! error a person reads. The rest is one idea per file:
//! - `load`: where the file is looked for, and reading it (the only I/O).
//! - `schema`: what each key of the file accepts ([`Config::parse`]).
//! - `doc`: the file being read: spans to lines, the `file:line: key`
//!   errors, typed values.
//! - `overrides`: `hm run` flags over the file ([`Config::apply`]).
//! - `detach_key`: key names (the detach key, the copy key), and the keys
//!   typing needs.
//! - `check`: the rules the file and the flags share (environment variable
//!   names, ranges, `~`, classifier names), so both refuse in the same words.
//! - `tui`: the `[tui]` table; `tui_keys`: its `[tui.keys]` (the
//!   dashboard's keys); `log_level`: [`LogLevel`].
//! - `automation`: the `[[automation]]` tables (dialogs answered unasked).
//!
//! The submodules are private: callers use the names re-exported here.

mod automation;
mod check;
mod detach_key;
mod doc;
mod load;
mod log_level;
mod overrides;
mod schema;
mod tui;
mod tui_keys;

use std::fmt;
use std::ops::RangeInclusive;
use std::path::PathBuf;

use crate::classify::ClassifierSpec;

pub use crate::paths::expand_tilde;
pub use automation::{check_automation, subject_regex};
pub use check::is_valid_env_name;
pub use detach_key::{describe_key, parse_detach_key};
pub use load::FILE_NAME;
pub use log_level::LogLevel;
pub use overrides::Overrides;
pub use tui::{DesktopNotify, TuiConfig};
pub use tui_keys::{Action, Chord, Key, Keymap};

pub const DEFAULT_SCROLLBACK_BYTES: usize = 65536;
pub const MAX_SCROLLBACK_BYTES: usize = 1 << 30;
pub const DEFAULT_SESSION_ENV_VAR: &str = "HEIMDALL_SESSION_ID";
pub const DEFAULT_KILL_GRACE_MS: u64 = 5000;
pub const MAX_KILL_GRACE_MS: u64 = 600_000;
/// Ctrl-\, as in the original.
pub const DEFAULT_DETACH_KEY: u8 = 0x1c;
/// Ctrl-]: opens copy mode in `hm attach` and in a focused pane.
pub const DEFAULT_COPY_KEY: u8 = 0x1d;
/// Rows of history each dashboard pane (and attach's copy mode) keeps.
pub const DEFAULT_HISTORY_LINES: usize = 1000;
pub const MAX_HISTORY_LINES: usize = 100_000;
/// Rows of history a dashboard keeps in all, shared by its panes, unless
/// `history_lines` is set: every pane keeps the default up to 20 panes,
/// fewer beyond, and never under [`MIN_SHARED_HISTORY_LINES`]. When vt100
/// kept the history a row cost 32 bytes a column, and 200 panes of 1000
/// rows each took 333 MiB; kept as text, a row is about a byte a
/// character (docs/performance.md).
pub const DASHBOARD_HISTORY_ROWS: usize = 20_000;
pub const MIN_SHARED_HISTORY_LINES: usize = 100;
/// Output kept on disk per session for `hm restore` (the last 256 KiB).
pub const DEFAULT_RESTORE_HISTORY_BYTES: usize = 256 * 1024;
pub const MAX_RESTORE_HISTORY_BYTES: usize = 64 << 20;
/// Sessions `hm restore` starts at a time.
pub const DEFAULT_RESTORE_PARALLEL: usize = 4;
pub const RESTORE_PARALLEL_RANGE: RangeInclusive<u64> = 1..=64;
pub const IDLE_THRESHOLD_MS_RANGE: RangeInclusive<u64> = 1..=86_400_000;
pub const DEBOUNCE_MS_RANGE: RangeInclusive<u64> = 0..=60_000;
/// `[classifier.agent] stuck_after_ms`: a second to a day.
pub const STUCK_AFTER_MS_RANGE: RangeInclusive<u64> = 1_000..=86_400_000;
/// The events a `[[notify]]` entry can be for.
pub const NOTIFY_EVENTS: &[&str] = &["waiting", "finished", "exited"];
/// Default time between two runs of one entry for one session's event.
pub const DEFAULT_NOTIFY_INTERVAL_MS: u64 = 30_000;
/// How long a dialog must have stood, unchanged, before an automation rule
/// answers it, unless the rule says: long enough for a person watching to
/// see it, and for a dialog drawn in pieces to be whole.
pub const DEFAULT_DWELL_MS: u64 = 1_500;
pub const DWELL_MS_RANGE: RangeInclusive<u64> = 100..=3_600_000;

/// One `[[automation]]` entry: a dialog the supervisor answers on its own
/// once it has stood, unchanged, for `dwell_ms`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutomationRule {
    /// Only sessions running this agent; `None`: any.
    pub agent: Option<String>,
    /// The dialog's detail (`permission`, `folder_trust`, ...).
    pub detail: crate::detect::Detail,
    /// A regex what the dialog asks about must match; `None`: anything,
    /// including a dialog that names nothing.
    pub subject: Option<String>,
    pub answer: crate::detect::rules::Answer,
    pub dwell_ms: u64,
    /// Where the entry is, for messages and the action log.
    pub at: Location,
}

/// One `[[notify]]` entry: a command run (by `sh -c`, in the session's
/// supervisor) when the session starts waiting, finishes its work or
/// exits, with `HM_SESSION_ID`, `HM_LABEL`, `HM_HOST`, `HM_EVENT`,
/// `HM_STATE`, `HM_DETAIL`, `HM_QUESTION`, `HM_AFTER_MS` and (on exit)
/// `HM_EXIT_CODE` in its environment (docs/configuration.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyRule {
    pub command: String,
    /// Some of [`NOTIFY_EVENTS`].
    pub on: Vec<String>,
    /// Not run again for the same session and event sooner than this.
    pub min_interval_ms: u64,
    /// Run this long after the event instead, if the session is still as
    /// the event left it (still waiting; idle since it finished): a
    /// second, louder word to someone who did not come. 0: at once.
    pub after_ms: u64,
}

/// One `[[env]]` entry: a variable set in the child's environment.
#[derive(Clone, PartialEq, Eq)]
pub struct EnvVar {
    pub name: String,
    pub value: String,
}

/// The value may be a secret, so it never reaches a log or an error.
impl fmt::Debug for EnvVar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnvVar")
            .field("name", &self.name)
            .field("value", &format_args!("<redacted>"))
            .finish()
    }
}

/// The resolved configuration: defaults, then the file, then the flags.
///
/// `Debug` is derived: the only secret-bearing field is `env`, and
/// [`EnvVar`]'s own `Debug` redacts its value, so a new field cannot be
/// forgotten by a hand-written impl.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The file this was read from; `None` means built-in defaults.
    pub source: Option<PathBuf>,
    /// `~` is expanded; relative paths are kept as written (relative to the
    /// current directory). `None`: the caller picks the default directory.
    pub socket_dir: Option<PathBuf>,
    pub scrollback_bytes: usize,
    pub session_env_var: String,
    pub kill_process_group: bool,
    /// Time between SIGTERM and SIGKILL when a session is killed.
    pub kill_grace_ms: u64,
    /// `None`: detaching is disabled.
    pub detach_key: Option<u8>,
    /// Opens copy mode (the session's history) in `hm attach` and in a
    /// focused dashboard pane; `None`: no key (Shift-PgUp still does).
    pub copy_key: Option<u8>,
    /// In a raw attach from the dashboard: back to the dashboard, at the
    /// next session that needs you. `None` (the default): no such key.
    pub next_key: Option<u8>,
    /// In the dashboard's focus: hand the terminal to a raw attach of the
    /// focused session (`a` does it in the grid). `None` by default.
    pub attach_key: Option<u8>,
    /// Rows of history a dashboard pane keeps, and `hm attach`'s copy
    /// mode reads (client-side; the supervisor keeps `scrollback_bytes`).
    pub history_lines: usize,
    /// Whether the file set `history_lines`; if not, a dashboard over many
    /// sessions gives each pane fewer (see [`DASHBOARD_HISTORY_ROWS`]).
    pub history_lines_set: bool,
    pub classifier: ClassifierSpec,
    /// Whether the file or a flag chose the classifier; if not, a session
    /// running a known agent gets the `agent` classifier
    /// ([`ClassifierSpec::for_command`]).
    pub classifier_chosen: bool,
    /// In file order; names are unique and differ from `session_env_var`.
    pub env: Vec<EnvVar>,
    /// `~` is expanded. `None`: `<socket_dir>/<id>.log`, decided by the caller.
    pub log_file: Option<PathBuf>,
    pub log_level: LogLevel,
    pub tui: TuiConfig,
    /// In file order.
    pub notify: Vec<NotifyRule>,
    /// The ssh command line (`HM_SSH_COMMAND` overrides it); `None`: `ssh`.
    pub ssh_command: Option<String>,
    /// In file order; names are unique.
    pub hosts: Vec<crate::host::Host>,
    /// In file order; the first that fits a dialog answers it.
    pub automation: Vec<AutomationRule>,
    /// Bytes of each session's output kept on disk for `hm restore`
    /// (0: none).
    pub restore_history_bytes: usize,
    /// Sessions `hm restore` starts at a time.
    pub restore_parallel: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config::defaults()
    }
}

/// A place in a config file, shown as `path:line`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub path: PathBuf,
    pub line: Option<usize>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        match self.line {
            Some(line) => write!(f, ":{line}"),
            None => Ok(()),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("config file '{}' not found (check the --config path)", path.display())]
    NotFound { path: PathBuf },
    #[error("cannot read config file '{}'", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{at}: invalid TOML: {message}")]
    Syntax { at: Location, message: String },
    #[error("{at}: unknown key '{key}' ({hint})")]
    UnknownKey {
        at: Location,
        key: String,
        hint: String,
    },
    #[error("{at}: invalid value for '{key}': {reason}")]
    InvalidValue {
        at: Location,
        key: String,
        reason: String,
    },
    #[error("invalid {flag}: {reason}")]
    Override { flag: &'static str, reason: String },
}

impl Config {
    /// Built-in defaults.
    pub fn defaults() -> Config {
        Config {
            source: None,
            socket_dir: None,
            scrollback_bytes: DEFAULT_SCROLLBACK_BYTES,
            session_env_var: DEFAULT_SESSION_ENV_VAR.to_owned(),
            kill_process_group: true,
            kill_grace_ms: DEFAULT_KILL_GRACE_MS,
            detach_key: Some(DEFAULT_DETACH_KEY),
            copy_key: Some(DEFAULT_COPY_KEY),
            next_key: None,
            attach_key: None,
            history_lines: DEFAULT_HISTORY_LINES,
            history_lines_set: false,
            classifier: ClassifierSpec::default(),
            classifier_chosen: false,
            env: Vec::new(),
            log_file: None,
            log_level: LogLevel::default(),
            tui: TuiConfig::default(),
            notify: Vec::new(),
            ssh_command: None,
            hosts: Vec::new(),
            automation: Vec::new(),
            restore_history_bytes: DEFAULT_RESTORE_HISTORY_BYTES,
            restore_parallel: DEFAULT_RESTORE_PARALLEL,
        }
    }
}

/// Reading a literal file as `/home/u/heimdall.toml` with HOME `/home/u`,
/// for the tests of every part of `config`.
#[cfg(test)]
mod test_file {
    use std::path::Path;

    use super::{Config, ConfigError};

    pub(super) const FILE: &str = "/home/u/heimdall.toml";

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new(FILE), Some(Path::new("/home/u")))
    }

    pub(super) fn ok(text: &str) -> Config {
        parse(text).expect("valid config")
    }

    /// The error's one-line message.
    pub(super) fn err(text: &str) -> String {
        match parse(text) {
            Ok(config) => panic!("expected an error for {text:?}, got {config:?}"),
            Err(e) => e.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_file::ok;
    use super::*;

    #[test]
    fn defaults_match_the_documented_values() {
        let c = Config::defaults();
        assert_eq!(c.scrollback_bytes, 65536);
        assert_eq!(c.session_env_var, "HEIMDALL_SESSION_ID");
        assert!(c.kill_process_group);
        assert_eq!(c.kill_grace_ms, 5000);
        assert_eq!(c.detach_key, Some(0x1c));
        assert_eq!(c.copy_key, Some(0x1d));
        assert_eq!(c.history_lines, 1000);
        assert_eq!(
            c.classifier,
            ClassifierSpec::Simple {
                idle_threshold_ms: 3000
            }
        );
        assert_eq!(c.log_level, LogLevel::Info);
        assert_eq!(
            c.tui,
            TuiConfig {
                theme: None,
                theme_at: None,
                fit_sessions: false,
                session_size: (120, 40),
                bell: false,
                desktop_notify: None,
                columns: None,
                keys: Keymap::default(),
            }
        );
    }

    #[test]
    fn debug_redacts_env_values() {
        let c = ok("[[env]]\nname = \"TOKEN\"\nvalue = \"s3cr3t\"\n");
        let debug = format!("{c:?}");
        assert!(
            debug.contains("TOKEN") && debug.contains("<redacted>"),
            "{debug}"
        );
        assert!(!debug.contains("s3cr3t"), "{debug}");
        let pretty = format!("{:#?}", c.env[0]);
        assert!(!pretty.contains("s3cr3t"), "{pretty}");
    }
}
