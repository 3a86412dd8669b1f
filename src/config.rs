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

use std::fmt;
use std::ops::{Range, RangeInclusive};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use toml::Spanned;
use toml::de::{DeString, DeTable, DeValue};

use crate::classify::ClassifierSpec;

pub const DEFAULT_SCROLLBACK_BYTES: usize = 65536;
pub const MAX_SCROLLBACK_BYTES: usize = 1 << 30;
pub const DEFAULT_SESSION_ENV_VAR: &str = "HEIMDALL_SESSION_ID";
pub const DEFAULT_KILL_GRACE_MS: u64 = 5000;
pub const MAX_KILL_GRACE_MS: u64 = 600_000;
/// Ctrl-\, as in the original.
pub const DEFAULT_DETACH_KEY: u8 = 0x1c;
pub const IDLE_THRESHOLD_MS_RANGE: RangeInclusive<u64> = 1..=86_400_000;
pub const DEBOUNCE_MS_RANGE: RangeInclusive<u64> = 0..=60_000;
/// `[classifier.agent] stuck_after_ms`: a second to a day.
pub const STUCK_AFTER_MS_RANGE: RangeInclusive<u64> = 1_000..=86_400_000;
/// The file name looked for in each search directory.
pub const FILE_NAME: &str = "heimdall.toml";

const TOP_KEYS: &[&str] = &[
    "socket_dir",
    "scrollback_bytes",
    "session_env_var",
    "kill_process_group",
    "kill_grace_ms",
    "detach_key",
    "classifier",
    "env",
    "log_file",
    "log_level",
    "tui",
    "notify",
];
const TUI_KEYS: &[&str] = &["theme", "fit_sessions", "bell", "desktop_notify", "columns"];
const ENV_KEYS: &[&str] = &["name", "value"];
const NOTIFY_KEYS: &[&str] = &["command", "on", "min_interval_ms"];
/// The events a `[[notify]]` entry can be for.
pub const NOTIFY_EVENTS: &[&str] = &["waiting", "finished", "exited"];
/// Default time between two runs of one entry for one session's event.
pub const DEFAULT_NOTIFY_INTERVAL_MS: u64 = 30_000;
const CLASSIFIER_NAMES: &[&str] = &["simple", "claude", "agent", "none"];

/// How much the supervisor logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogLevel {
    Error,
    Warn,
    #[default]
    Info,
    Debug,
    Trace,
}

impl LogLevel {
    pub const ALL: [LogLevel; 5] = [
        LogLevel::Error,
        LogLevel::Warn,
        LogLevel::Info,
        LogLevel::Debug,
        LogLevel::Trace,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        }
    }
}

impl FromStr for LogLevel {
    type Err = String;

    /// Case-insensitive, like the level names `tracing` accepts.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|level| level.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                format!(
                    "unknown log level '{}' (expected one of: error, warn, info, debug, trace)",
                    s.escape_debug()
                )
            })
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `[tui]` table: settings for `hm tui` only.
#[derive(Debug, Clone, PartialEq)]
pub struct TuiConfig {
    /// Colour theme name; `None` is the built-in theme.
    pub theme: Option<String>,
    /// Where `theme` was set, for an error about a theme that does not load
    /// (known only when the dashboard or attach loads it).
    pub theme_at: Option<Location>,
    /// Shrink or grow session panes to fit the dashboard.
    pub fit_sessions: bool,
    /// Ring the terminal bell when a session changes state.
    pub bell: bool,
    /// Send a desktop notification through the terminal the dashboard
    /// runs in (`osc9` or `osc777`), when a session starts waiting,
    /// finishes or exits; `None`: off.
    pub desktop_notify: Option<DesktopNotify>,
    /// Panes per row, 1 to 16; `None`: automatic, or what the dashboard
    /// last used (it remembers `+`/`-`/`=` across runs).
    pub columns: Option<u16>,
}

/// Which escape sequence asks the terminal for a desktop notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DesktopNotify {
    /// `ESC ] 9 ; text BEL` (iTerm2, WezTerm, kitty, Windows Terminal, ...).
    Osc9,
    /// `ESC ] 777 ; notify ; title ; text BEL` (foot, Ghostty, urxvt, ...).
    Osc777,
}

impl TuiConfig {
    /// The error for a `theme` that did not load, at its line in the file.
    pub fn bad_theme(&self, reason: impl fmt::Display) -> ConfigError {
        let reason = reason.to_string();
        match &self.theme_at {
            Some(at) => ConfigError::InvalidValue {
                at: at.clone(),
                key: "tui.theme".into(),
                reason,
            },
            None => ConfigError::Override {
                flag: "tui.theme",
                reason,
            },
        }
    }
}

impl Default for TuiConfig {
    fn default() -> Self {
        TuiConfig {
            theme: None,
            theme_at: None,
            fit_sessions: true,
            bell: false,
            desktop_notify: None,
            columns: None,
        }
    }
}

/// One `[[notify]]` entry: a command run (by `sh -c`, in the session's
/// supervisor) when the session starts waiting, finishes its work or
/// exits, with `HM_SESSION_ID`, `HM_EVENT`, `HM_STATE`, `HM_DETAIL` and
/// (on exit) `HM_EXIT_CODE` in its environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyRule {
    pub command: String,
    /// Some of [`NOTIFY_EVENTS`].
    pub on: Vec<String>,
    /// Not run again for the same session and event sooner than this.
    pub min_interval_ms: u64,
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
}

impl Default for Config {
    fn default() -> Self {
        Config::defaults()
    }
}

/// `hm run` flags that override the file; `None` leaves the file's value.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub socket_dir: Option<PathBuf>,
    pub scrollback_bytes: Option<usize>,
    pub classifier: Option<String>,
    pub idle_threshold_ms: Option<u64>,
    pub debounce_ms: Option<u64>,
    pub kill_process_group: Option<bool>,
    pub session_env_var: Option<String>,
    pub log_file: Option<PathBuf>,
    pub log_level: Option<LogLevel>,
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
            classifier: ClassifierSpec::default(),
            classifier_chosen: false,
            env: Vec::new(),
            log_file: None,
            log_level: LogLevel::default(),
            tui: TuiConfig::default(),
            notify: Vec::new(),
        }
    }

    /// Parse the text of a config file read from `path` (pure). `home`
    /// expands `~`; without it a `~` path is an error.
    pub fn parse(text: &str, path: &Path, home: Option<&Path>) -> Result<Config, ConfigError> {
        let doc = Doc { text, path, home };
        let root = DeTable::parse(text).map_err(|e| doc.syntax(&e))?;
        let mut config = Config {
            source: Some(path.to_path_buf()),
            ..Config::defaults()
        };
        let mut env_spans = Vec::new();
        for (key, value) in in_file_order(root.get_ref()) {
            let name: &str = key.get_ref();
            match name {
                "socket_dir" => config.socket_dir = Some(doc.path(name, value)?),
                "scrollback_bytes" => {
                    let n = doc.integer(name, value, 0..=MAX_SCROLLBACK_BYTES as u64, "bytes")?;
                    config.scrollback_bytes = usize::try_from(n).unwrap_or(MAX_SCROLLBACK_BYTES);
                }
                "session_env_var" => {
                    let var = doc.string(name, value)?;
                    check_env_name(&var).map_err(|r| doc.invalid(value.span(), name, r))?;
                    config.session_env_var = var;
                }
                "kill_process_group" => config.kill_process_group = doc.boolean(name, value)?,
                "kill_grace_ms" => {
                    config.kill_grace_ms =
                        doc.integer(name, value, 0..=MAX_KILL_GRACE_MS, "milliseconds")?;
                }
                "detach_key" => config.detach_key = doc.detach_key(value)?,
                "classifier" => {
                    config.classifier = doc.classifier(value)?;
                    config.classifier_chosen = true;
                }
                "env" => (config.env, env_spans) = doc.env(value)?,
                "log_file" => config.log_file = Some(doc.path(name, value)?),
                "log_level" => {
                    let level = doc.string(name, value)?;
                    config.log_level = level
                        .parse()
                        .map_err(|r: String| doc.invalid(value.span(), name, r))?;
                }
                "tui" => config.tui = doc.tui(value)?,
                "notify" => config.notify = doc.notify(value)?,
                _ => return Err(doc.unknown(key, "", TOP_KEYS)),
            }
        }
        if let Some(i) = config
            .env
            .iter()
            .position(|var| var.name == config.session_env_var)
        {
            let reason = format!(
                "'{}' is the session_env_var, which hm sets to the session id \
                 (remove this entry or choose another session_env_var)",
                config.session_env_var
            );
            return Err(doc.invalid(env_spans[i].clone(), "env.name", reason));
        }
        Ok(config)
    }

    /// Find and load the config: `explicit` (which must exist), else the
    /// first of [`Config::search_paths`] that exists, else the defaults.
    /// Files are not merged. The only function here that does I/O.
    pub fn load(explicit: Option<&Path>) -> Result<Config, ConfigError> {
        let home = env_dir("HOME");
        if let Some(given) = explicit {
            // Absolute, so `source` still names the file after a chdir.
            let path = std::path::absolute(given).unwrap_or_else(|_| given.to_path_buf());
            return match std::fs::read_to_string(&path) {
                Ok(text) => Config::parse(&text, &path, home.as_deref()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ConfigError::NotFound {
                    path: given.to_path_buf(),
                }),
                Err(source) => Err(ConfigError::Read { path, source }),
            };
        }
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let xdg = env_dir("XDG_CONFIG_HOME");
        for path in Config::search_paths(&cwd, xdg.as_deref(), home.as_deref()) {
            match std::fs::read_to_string(&path) {
                Ok(text) => return Config::parse(&text, &path, home.as_deref()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                // A file that exists but cannot be read is not skipped
                // silently: the person meant it to be used.
                Err(source) => return Err(ConfigError::Read { path, source }),
            }
        }
        Ok(Config::defaults())
    }

    /// Where [`Config::load`] looks, in order, without `--config`.
    /// Relative `xdg_config_home` and `home` values are ignored.
    pub fn search_paths(
        cwd: &Path,
        xdg_config_home: Option<&Path>,
        home: Option<&Path>,
    ) -> Vec<PathBuf> {
        let mut paths = vec![cwd.join(FILE_NAME)];
        let dirs = [
            xdg_config_home.map(Path::to_path_buf),
            home.map(|h| h.join(".config")),
        ];
        for dir in dirs.into_iter().flatten().filter(|d| d.is_absolute()) {
            let path = dir.join("heimdall").join(FILE_NAME);
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
        paths
    }

    /// Apply `hm run` flags. `--classifier` starts a fresh classifier with
    /// its defaults; `--idle-threshold-ms` and `--debounce-ms` then tune
    /// whichever classifier is in effect, and are refused if it has no such
    /// parameter.
    pub fn apply(mut self, o: &Overrides) -> Result<Config, ConfigError> {
        let fail = |flag, reason: String| ConfigError::Override { flag, reason };
        if let Some(dir) = &o.socket_dir {
            if dir.as_os_str().is_empty() {
                return Err(fail("--socket-dir", "the path is empty".to_owned()));
            }
            self.socket_dir = Some(dir.clone());
        }
        if let Some(n) = o.scrollback_bytes {
            check_range(n as u64, &(0..=MAX_SCROLLBACK_BYTES as u64), "bytes")
                .map_err(|r| fail("--scrollback-bytes", r))?;
            self.scrollback_bytes = n;
        }
        if let Some(name) = &o.classifier {
            self.classifier = ClassifierSpec::by_name(name)
                .ok_or_else(|| fail("--classifier", unknown_classifier(name)))?;
            self.classifier_chosen = true;
        }
        let in_use = self.classifier.name();
        if let Some(ms) = o.idle_threshold_ms {
            check_range(ms, &IDLE_THRESHOLD_MS_RANGE, "milliseconds")
                .map_err(|r| fail("--idle-threshold-ms", r))?;
            match &mut self.classifier {
                ClassifierSpec::Simple { idle_threshold_ms }
                | ClassifierSpec::Claude {
                    idle_threshold_ms, ..
                }
                | ClassifierSpec::Agent {
                    idle_threshold_ms, ..
                } => *idle_threshold_ms = ms,
                ClassifierSpec::None => {
                    let reason = format!(
                        "the classifier in use is '{in_use}', which has no idle threshold \
                         (add --classifier simple or claude, or drop --idle-threshold-ms)"
                    );
                    return Err(fail("--idle-threshold-ms", reason));
                }
            }
        }
        if let Some(ms) = o.debounce_ms {
            check_range(ms, &DEBOUNCE_MS_RANGE, "milliseconds")
                .map_err(|r| fail("--debounce-ms", r))?;
            match &mut self.classifier {
                ClassifierSpec::Claude { debounce_ms, .. } => *debounce_ms = ms,
                _ => {
                    let reason = format!(
                        "only the claude classifier has a debounce, and the classifier in use \
                         is '{in_use}' (add --classifier claude, or drop --debounce-ms)"
                    );
                    return Err(fail("--debounce-ms", reason));
                }
            }
        }
        if let Some(flag) = o.kill_process_group {
            self.kill_process_group = flag;
        }
        if let Some(name) = &o.session_env_var {
            check_env_name(name).map_err(|r| fail("--session-env-var", r))?;
            if self.env.iter().any(|var| &var.name == name) {
                let reason = format!(
                    "'{name}' is also set by an [[env]] entry in the config file \
                     (choose another name)"
                );
                return Err(fail("--session-env-var", reason));
            }
            self.session_env_var = name.clone();
        }
        if let Some(file) = &o.log_file {
            if file.as_os_str().is_empty() {
                return Err(fail("--log-file", "the path is empty".to_owned()));
            }
            self.log_file = Some(file.clone());
        }
        if let Some(level) = o.log_level {
            self.log_level = level;
        }
        Ok(self)
    }
}

/// Parse a detach key name: `"ctrl-<key>"` (or `"c-<key>"`, any case) where
/// `<key>` is a letter or one of `\ ] ^ _`, or `"none"` to disable
/// detaching (`Ok(None)`). Keys that typing needs are refused.
pub fn parse_detach_key(s: &str) -> Result<Option<u8>, String> {
    let lower = s.to_ascii_lowercase();
    if lower == "none" {
        return Ok(None);
    }
    let Some(key) = lower
        .strip_prefix("ctrl-")
        .or_else(|| lower.strip_prefix("c-"))
    else {
        return Err(format!(
            "'{}' is not a key name (expected \"ctrl-\" and a key, such as \"ctrl-\\\\\" \
             or \"ctrl-a\", or \"none\" to disable detaching)",
            s.escape_debug()
        ));
    };
    let byte = match key.as_bytes() {
        [c @ b'a'..=b'z'] => c - b'a' + 1,
        [b'['] => 0x1b,
        [b'\\'] => 0x1c,
        [b']'] => 0x1d,
        [b'^'] => 0x1e,
        [b'_'] => 0x1f,
        _ => {
            return Err(format!(
                "'{}' is not a supported key (use ctrl- with a letter or one of \\ ] ^ _, \
                 or \"none\")",
                s.escape_debug()
            ));
        }
    };
    check_detach_byte(byte).map(Some)
}

/// How a key byte is shown in hints, e.g. `Ctrl-\`.
pub fn describe_key(b: u8) -> String {
    match b {
        0x00 => "Ctrl-@".to_owned(),
        0x01..=0x1a => format!("Ctrl-{}", char::from(b'A' + b - 1)),
        0x1b => "Ctrl-[".to_owned(),
        0x1c => "Ctrl-\\".to_owned(),
        0x1d => "Ctrl-]".to_owned(),
        0x1e => "Ctrl-^".to_owned(),
        0x1f => "Ctrl-_".to_owned(),
        0x7f => "Ctrl-?".to_owned(),
        0x20..=0x7e => format!("'{}'", char::from(b)),
        _ => format!("0x{b:02x}"),
    }
}

/// Refuse detach keys that would make typing detach.
fn check_detach_byte(b: u8) -> Result<u8, String> {
    let why = match b {
        0x01..=0x1f => match b {
            0x08 => "it is Backspace",
            0x09 => "it is Tab",
            0x0a => "it is a newline (Enter in some programs)",
            0x0d => "it is Enter",
            0x1b => "it is Escape, which also starts every arrow and function key",
            _ => return Ok(b),
        },
        0x7f => "it is Backspace in most terminals",
        0x20..=0x7e => "it is a printable character",
        _ => "it is part of every non-ASCII character",
    };
    Err(format!(
        "{} cannot be the detach key: {why}, so typing would detach \
         (pick another, such as \"ctrl-\\\\\" or \"ctrl-]\", or \"none\")",
        describe_key(b)
    ))
}

/// `[A-Za-z_][A-Za-z0-9_]*`: a name every shell and `env` accept.
pub fn is_valid_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn check_env_name(name: &str) -> Result<(), String> {
    if is_valid_env_name(name) {
        Ok(())
    } else {
        Err(format!(
            "'{}' is not a valid environment variable name \
             (use letters, digits and '_', not starting with a digit)",
            name.escape_debug()
        ))
    }
}

/// `~` and `~/rest` become `home` and `home/rest`; other paths are kept.
pub fn expand_tilde(raw: &str, home: Option<&Path>) -> Result<PathBuf, String> {
    if raw.is_empty() {
        return Err("the path is empty (remove the key to use the default)".to_owned());
    }
    if raw.contains('\0') {
        return Err("the path contains a NUL character".to_owned());
    }
    let Some(rest) = raw.strip_prefix('~') else {
        return Ok(PathBuf::from(raw));
    };
    if !(rest.is_empty() || rest.starts_with('/')) {
        return Err(format!(
            "'{}': only '~' and '~/...' are expanded, not '~user' (write the full path)",
            raw.escape_debug()
        ));
    }
    let home = home.ok_or_else(|| {
        format!(
            "'{}' needs HOME, which is not set to an absolute path (write the full path)",
            raw.escape_debug()
        )
    })?;
    Ok(home.join(rest.trim_start_matches('/')))
}

fn check_range(n: u64, range: &RangeInclusive<u64>, unit: &str) -> Result<u64, String> {
    if range.contains(&n) {
        Ok(n)
    } else {
        Err(format!(
            "{n} is out of range ({})",
            expected_range(range, unit)
        ))
    }
}

fn expected_range(range: &RangeInclusive<u64>, unit: &str) -> String {
    let (lo, hi) = (range.start(), range.end());
    if unit.is_empty() {
        format!("expected {lo} to {hi}")
    } else {
        format!("expected {lo} to {hi} {unit}")
    }
}

fn unknown_classifier(name: &str) -> String {
    format!(
        "unknown classifier '{}' (expected one of: {})",
        name.escape_debug(),
        CLASSIFIER_NAMES.join(", ")
    )
}

/// An environment variable naming a directory, if it is absolute (the XDG
/// rule: relative values are ignored).
fn env_dir(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

type Entry<'t, 'i> = (&'t Spanned<DeString<'i>>, &'t Spanned<DeValue<'i>>);

/// A table's entries in file order (the parsed map is sorted by key), so the
/// error reported is the first one in the file.
fn in_file_order<'t, 'i>(table: &'t DeTable<'i>) -> Vec<Entry<'t, 'i>> {
    let mut entries: Vec<Entry<'t, 'i>> = table.iter().collect();
    entries.sort_by_key(|(key, _)| key.span().start);
    entries
}

/// A value's type and, for scalars, the value itself, for "got ..." text.
fn describe(value: &DeValue<'_>) -> String {
    match value {
        DeValue::String(s) => format!("the string '{}'", s.escape_debug()),
        // Escaped: the TOML parser lets a few control characters into the
        // raw text of a number (e.g. NULs after `1_0`), which must not
        // reach the terminal in an error message.
        DeValue::Integer(i) => format!("the integer {}", i.to_string().escape_debug()),
        DeValue::Float(f) => format!("the float {}", f.to_string().escape_debug()),
        DeValue::Boolean(b) => b.to_string(),
        DeValue::Datetime(d) => format!("the date {d}"),
        DeValue::Array(_) => "an array".to_owned(),
        DeValue::Table(_) => "a table".to_owned(),
    }
}

/// The file being parsed, for building located errors.
struct Doc<'a> {
    text: &'a str,
    path: &'a Path,
    home: Option<&'a Path>,
}

impl Doc<'_> {
    fn at(&self, span: Option<Range<usize>>) -> Location {
        let line = span.map(|span| {
            let end = span.start.min(self.text.len());
            1 + self.text.as_bytes()[..end]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
        });
        Location {
            path: self.path.to_path_buf(),
            line,
        }
    }

    fn syntax(&self, error: &toml::de::Error) -> ConfigError {
        ConfigError::Syntax {
            at: self.at(error.span()),
            message: error.message().trim().replace('\n', "; "),
        }
    }

    fn invalid(&self, span: Range<usize>, key: &str, reason: impl Into<String>) -> ConfigError {
        ConfigError::InvalidValue {
            at: self.at(Some(span)),
            key: key.to_owned(),
            reason: reason.into(),
        }
    }

    fn unknown(&self, key: &Spanned<DeString<'_>>, table: &str, expected: &[&str]) -> ConfigError {
        let name: &str = key.get_ref();
        let hint = if expected.is_empty() {
            format!("'{table}' takes no keys")
        } else {
            format!("expected one of: {}", expected.join(", "))
        };
        ConfigError::UnknownKey {
            at: self.at(Some(key.span())),
            key: if table.is_empty() {
                name.escape_debug().to_string()
            } else {
                format!("{table}.{}", name.escape_debug())
            },
            hint,
        }
    }

    fn mismatch(&self, key: &str, value: &Spanned<DeValue<'_>>, expected: &str) -> ConfigError {
        let got = describe(value.get_ref());
        self.invalid(value.span(), key, format!("expected {expected}, got {got}"))
    }

    fn string(&self, key: &str, value: &Spanned<DeValue<'_>>) -> Result<String, ConfigError> {
        match value.get_ref() {
            DeValue::String(s) => Ok(s.to_string()),
            _ => Err(self.mismatch(key, value, "a string")),
        }
    }

    fn boolean(&self, key: &str, value: &Spanned<DeValue<'_>>) -> Result<bool, ConfigError> {
        match value.get_ref() {
            DeValue::Boolean(b) => Ok(*b),
            _ => Err(self.mismatch(key, value, "true or false")),
        }
    }

    fn integer(
        &self,
        key: &str,
        value: &Spanned<DeValue<'_>>,
        range: RangeInclusive<u64>,
        unit: &str,
    ) -> Result<u64, ConfigError> {
        let DeValue::Integer(i) = value.get_ref() else {
            let expected = format!("an integer from {} to {}", range.start(), range.end());
            return Err(self.mismatch(key, value, &expected));
        };
        let n = i128::from_str_radix(i.as_str(), i.radix()).ok();
        match n.and_then(|n| u64::try_from(n).ok()) {
            Some(n) => check_range(n, &range, unit),
            None => Err(format!(
                "{} is out of range ({})",
                i.to_string().escape_debug(),
                expected_range(&range, unit)
            )),
        }
        .map_err(|r| self.invalid(value.span(), key, r))
    }

    fn path(&self, key: &str, value: &Spanned<DeValue<'_>>) -> Result<PathBuf, ConfigError> {
        let raw = self.string(key, value)?;
        expand_tilde(&raw, self.home).map_err(|r| self.invalid(value.span(), key, r))
    }

    /// `header` is how the table is written, e.g. `[tui]` or `[[env]]`.
    fn table<'t, 'i>(
        &self,
        key: &str,
        header: &str,
        value: &'t Spanned<DeValue<'i>>,
    ) -> Result<&'t DeTable<'i>, ConfigError> {
        match value.get_ref() {
            DeValue::Table(table) => Ok(table),
            _ => Err(self.mismatch(key, value, &format!("a {header} table"))),
        }
    }

    fn detach_key(&self, value: &Spanned<DeValue<'_>>) -> Result<Option<u8>, ConfigError> {
        let key = "detach_key";
        match value.get_ref() {
            DeValue::String(s) => {
                parse_detach_key(s).map_err(|r| self.invalid(value.span(), key, r))
            }
            DeValue::Integer(_) => match self.integer(key, value, 0..=255, "")? {
                // 0 disables detaching, as in the original.
                0 => Ok(None),
                n => check_detach_byte(u8::try_from(n).unwrap_or(u8::MAX))
                    .map(Some)
                    .map_err(|r| self.invalid(value.span(), key, r)),
            },
            _ => Err(self.mismatch(key, value, "a key name such as \"ctrl-\\\\\" or \"none\"")),
        }
    }

    fn classifier(&self, value: &Spanned<DeValue<'_>>) -> Result<ClassifierSpec, ConfigError> {
        let key = "classifier";
        let table = match value.get_ref() {
            DeValue::String(name) => {
                return ClassifierSpec::by_name(name)
                    .ok_or_else(|| self.invalid(value.span(), key, unknown_classifier(name)));
            }
            DeValue::Table(table) => in_file_order(table),
            _ => {
                let expected =
                    "\"simple\", \"claude\", \"agent\", \"none\" or a [classifier.<name>] table";
                return Err(self.mismatch(key, value, expected));
            }
        };
        let [(name, params)] = table[..] else {
            let span = table.get(1).map_or(value.span(), |(extra, _)| extra.span());
            let reason = format!(
                "the classifier table must have exactly one key (simple, claude, agent or none), \
                 got {} (keep a single [classifier.<name>] table)",
                table.len()
            );
            return Err(self.invalid(span, key, reason));
        };
        let mut spec = match ClassifierSpec::by_name(name.get_ref()) {
            Some(spec) => spec,
            None => return Err(self.unknown(name, key, CLASSIFIER_NAMES)),
        };
        let prefix = format!("classifier.{}", spec.name());
        let params = self.table(&prefix, &format!("[{prefix}]"), params)?;
        for (param, value) in in_file_order(params) {
            let full = format!("{prefix}.{}", param.get_ref());
            match (&mut spec, param.get_ref().as_ref()) {
                (
                    ClassifierSpec::Simple { idle_threshold_ms }
                    | ClassifierSpec::Claude {
                        idle_threshold_ms, ..
                    }
                    | ClassifierSpec::Agent {
                        idle_threshold_ms, ..
                    },
                    "idle_threshold_ms",
                ) => {
                    *idle_threshold_ms =
                        self.integer(&full, value, IDLE_THRESHOLD_MS_RANGE, "milliseconds")?;
                }
                (ClassifierSpec::Claude { debounce_ms, .. }, "debounce_ms") => {
                    *debounce_ms = self.integer(&full, value, DEBOUNCE_MS_RANGE, "milliseconds")?;
                }
                (ClassifierSpec::Agent { stuck_after_ms, .. }, "stuck_after_ms") => {
                    *stuck_after_ms =
                        self.integer(&full, value, STUCK_AFTER_MS_RANGE, "milliseconds")?;
                }
                (
                    ClassifierSpec::Agent {
                        process_evidence, ..
                    },
                    "process_evidence",
                ) => {
                    *process_evidence = self.boolean(&full, value)?;
                }
                (
                    ClassifierSpec::Agent {
                        status_protocol, ..
                    },
                    "status_protocol",
                ) => {
                    *status_protocol = self.boolean(&full, value)?;
                }
                (ClassifierSpec::Agent { .. }, _) => {
                    return Err(self.unknown(
                        param,
                        &prefix,
                        &[
                            "idle_threshold_ms",
                            "stuck_after_ms",
                            "process_evidence",
                            "status_protocol",
                        ],
                    ));
                }
                (ClassifierSpec::Simple { .. }, _) => {
                    return Err(self.unknown(param, &prefix, &["idle_threshold_ms"]));
                }
                (ClassifierSpec::Claude { .. }, _) => {
                    return Err(self.unknown(
                        param,
                        &prefix,
                        &["idle_threshold_ms", "debounce_ms"],
                    ));
                }
                (ClassifierSpec::None, _) => return Err(self.unknown(param, &prefix, &[])),
            }
        }
        Ok(spec)
    }

    /// The `[[env]]` entries and the span of each name. Values are never
    /// echoed in errors: they may be secrets.
    fn env(
        &self,
        value: &Spanned<DeValue<'_>>,
    ) -> Result<(Vec<EnvVar>, Vec<Range<usize>>), ConfigError> {
        let DeValue::Array(items) = value.get_ref() else {
            return Err(self.mismatch("env", value, "[[env]] tables with a name and a value"));
        };
        let mut vars: Vec<EnvVar> = Vec::new();
        let mut spans: Vec<Range<usize>> = Vec::new();
        for item in items.iter() {
            let entry = self.table("env", "[[env]]", item)?;
            let (mut name, mut val) = (None, None);
            for (key, value) in in_file_order(entry) {
                match key.get_ref().as_ref() {
                    "name" => name = Some((self.string("env.name", value)?, value.span())),
                    "value" => match value.get_ref() {
                        DeValue::String(s) if s.contains('\0') => {
                            let reason = "the value contains a NUL character, which cannot be \
                                          passed in an environment";
                            return Err(self.invalid(value.span(), "env.value", reason));
                        }
                        DeValue::String(s) => val = Some(s.to_string()),
                        other => {
                            let reason = format!("expected a string, got {}", other.type_str());
                            return Err(self.invalid(value.span(), "env.value", reason));
                        }
                    },
                    _ => return Err(self.unknown(key, "env", ENV_KEYS)),
                }
            }
            let missing = |what| {
                let reason =
                    format!("the entry has no '{what}' (each [[env]] needs a name and a value)");
                self.invalid(item.span(), "env", reason)
            };
            let (name, span) = name.ok_or_else(|| missing("name"))?;
            let value = val.ok_or_else(|| missing("value"))?;
            check_env_name(&name).map_err(|r| self.invalid(span.clone(), "env.name", r))?;
            if let Some(first) = vars.iter().position(|var| var.name == name) {
                let first_line = self.at(Some(spans[first].clone())).line.unwrap_or(0);
                let reason = format!(
                    "'{name}' is already set by the [[env]] entry on line {first_line} \
                     (keep one of them)"
                );
                return Err(self.invalid(span, "env.name", reason));
            }
            vars.push(EnvVar { name, value });
            spans.push(span);
        }
        Ok((vars, spans))
    }

    /// The `[[notify]]` entries.
    fn notify(&self, value: &Spanned<DeValue<'_>>) -> Result<Vec<NotifyRule>, ConfigError> {
        let DeValue::Array(items) = value.get_ref() else {
            return Err(self.mismatch("notify", value, "[[notify]] tables with a command"));
        };
        let mut rules = Vec::new();
        for item in items.iter() {
            let entry = self.table("notify", "[[notify]]", item)?;
            let mut rule = NotifyRule {
                command: String::new(),
                on: NOTIFY_EVENTS.iter().map(|e| (*e).to_owned()).collect(),
                min_interval_ms: DEFAULT_NOTIFY_INTERVAL_MS,
            };
            let mut has_command = false;
            for (key, value) in in_file_order(entry) {
                let full = format!("notify.{}", key.get_ref());
                match key.get_ref().as_ref() {
                    "command" => {
                        rule.command = self.string(&full, value)?;
                        if rule.command.trim().is_empty() || rule.command.contains('\0') {
                            let reason = "the command is empty or holds a NUL character";
                            return Err(self.invalid(value.span(), &full, reason));
                        }
                        has_command = true;
                    }
                    "on" => {
                        let DeValue::Array(events) = value.get_ref() else {
                            return Err(self.mismatch(
                                &full,
                                value,
                                "a list such as [\"waiting\", \"exited\"]",
                            ));
                        };
                        rule.on.clear();
                        for e in events.iter() {
                            let name = self.string(&full, e)?;
                            if !NOTIFY_EVENTS.contains(&name.as_str()) {
                                let reason = format!(
                                    "unknown event '{name}' (expected one of: {})",
                                    NOTIFY_EVENTS.join(", ")
                                );
                                return Err(self.invalid(e.span(), &full, reason));
                            }
                            rule.on.push(name);
                        }
                    }
                    "min_interval_ms" => {
                        rule.min_interval_ms =
                            self.integer(&full, value, 0..=86_400_000, "milliseconds")?;
                    }
                    _ => return Err(self.unknown(key, "notify", NOTIFY_KEYS)),
                }
            }
            if !has_command {
                let reason = "the entry has no 'command' (each [[notify]] runs one)";
                return Err(self.invalid(item.span(), "notify", reason));
            }
            rules.push(rule);
        }
        Ok(rules)
    }

    fn tui(&self, value: &Spanned<DeValue<'_>>) -> Result<TuiConfig, ConfigError> {
        let mut tui = TuiConfig::default();
        for (key, value) in in_file_order(self.table("tui", "[tui]", value)?) {
            let full = format!("tui.{}", key.get_ref());
            match key.get_ref().as_ref() {
                "theme" => {
                    let theme = self.string(&full, value)?;
                    if theme.is_empty() {
                        let reason =
                            "the theme name is empty (remove the key for the built-in theme)";
                        return Err(self.invalid(value.span(), &full, reason));
                    }
                    tui.theme = Some(theme);
                    tui.theme_at = Some(self.at(Some(value.span())));
                }
                "fit_sessions" => tui.fit_sessions = self.boolean(&full, value)?,
                "bell" => tui.bell = self.boolean(&full, value)?,
                "columns" => {
                    tui.columns = Some(self.integer(&full, value, 1..=16, "columns")? as u16)
                }
                "desktop_notify" => {
                    tui.desktop_notify = match self.string(&full, value)?.as_str() {
                        "osc9" => Some(DesktopNotify::Osc9),
                        "osc777" => Some(DesktopNotify::Osc777),
                        "off" => None,
                        other => {
                            let reason = format!("'{other}' is not one of osc9, osc777 or off");
                            return Err(self.invalid(value.span(), &full, reason));
                        }
                    };
                }
                _ => return Err(self.unknown(key, "tui", TUI_KEYS)),
            }
        }
        Ok(tui)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "/home/u/heimdall.toml";

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new(FILE), Some(Path::new("/home/u")))
    }

    fn ok(text: &str) -> Config {
        parse(text).expect("valid config")
    }

    /// The error's one-line message.
    fn err(text: &str) -> String {
        match parse(text) {
            Ok(config) => panic!("expected an error for {text:?}, got {config:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn control_characters_in_a_number_are_escaped_in_the_error() {
        // The TOML parser accepts NULs after `1_0` in an integer (found by
        // the config fuzz target); the message must stay printable.
        for text in [
            "kill_grace_ms = 1_0\x00\x000\n",
            "log_level = 1_0\x00\x000\n",
        ] {
            let e = err(text);
            assert!(!e.chars().any(char::is_control), "{e:?}");
            assert!(e.contains("10\\0\\00"), "{e}");
        }
    }

    fn file_defaults() -> Config {
        Config {
            source: Some(PathBuf::from(FILE)),
            ..Config::defaults()
        }
    }

    /// The example with every `# key = value` and `# [table]` line uncommented.
    fn uncommented_example() -> String {
        let example = include_str!("../heimdall.toml.example");
        let mut out = String::new();
        for line in example.lines() {
            let rest = line.strip_prefix("# ").unwrap_or("");
            let is_header = rest.starts_with('[') && rest.ends_with(']');
            let is_setting = rest.split_once(" = ").is_some_and(|(key, _)| {
                !key.is_empty() && key.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
            });
            out.push_str(if is_header || is_setting { rest } else { line });
            out.push('\n');
        }
        out
    }

    #[test]
    fn example_file_as_shipped_is_the_defaults() {
        let example = include_str!("../heimdall.toml.example");
        assert_eq!(ok(example), file_defaults());
    }

    #[test]
    fn example_file_with_every_setting_uncommented_parses_to_the_documented_defaults() {
        let text = uncommented_example();
        let mut config = ok(&text);
        assert!(text.contains("\n[classifier.simple]\n"), "{text}");
        assert!(text.contains("\n[tui]\n"), "{text}");
        // The examples that are not defaults, because the default is not a value.
        assert_eq!(
            config.socket_dir,
            Some(PathBuf::from("/home/u/.local/state/heimdall"))
        );
        assert_eq!(config.log_file, Some(PathBuf::from("/dev/null")));
        assert_eq!(
            config.env,
            vec![EnvVar {
                name: "EDITOR".into(),
                value: "vim".into()
            }]
        );
        assert_eq!(config.notify.len(), 1, "{text}");
        assert_eq!(config.notify[0].on, vec!["waiting", "finished", "exited"]);
        assert_eq!(config.notify[0].min_interval_ms, DEFAULT_NOTIFY_INTERVAL_MS);
        config.notify.clear();
        config.socket_dir = None;
        config.log_file = None;
        config.env.clear();
        // Writing the default classifier out chooses it (known agents then
        // keep it instead of getting `agent`).
        assert!(config.classifier_chosen);
        config.classifier_chosen = false;
        assert_eq!(config, file_defaults());
    }

    #[test]
    fn empty_file_is_the_defaults_with_its_source() {
        assert_eq!(ok(""), file_defaults());
        assert_eq!(Config::defaults().source, None);
        assert_eq!(Config::default(), Config::defaults());
    }

    #[test]
    fn defaults_match_the_documented_values() {
        let c = Config::defaults();
        assert_eq!(c.scrollback_bytes, 65536);
        assert_eq!(c.session_env_var, "HEIMDALL_SESSION_ID");
        assert!(c.kill_process_group);
        assert_eq!(c.kill_grace_ms, 5000);
        assert_eq!(c.detach_key, Some(0x1c));
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
                fit_sessions: true,
                bell: false,
                desktop_notify: None,
                columns: None,
            }
        );
    }

    #[test]
    fn syntax_errors_name_file_and_line_on_one_line() {
        let e = err("log_level = \"info\"\nscrollback_bytes = = 3\n");
        assert!(
            e.starts_with("/home/u/heimdall.toml:2: invalid TOML: "),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
        let e = err("a = 1\na = 2\n");
        assert!(
            e.starts_with("/home/u/heimdall.toml:2: invalid TOML: "),
            "{e}"
        );
    }

    #[test]
    fn notify_entries_take_a_command_events_and_an_interval() {
        let c = ok(
            "[[notify]]\ncommand = 'notify-send hm \"$HM_SESSION_ID\"'\non = [\"waiting\"]\nmin_interval_ms = 0\n\n[[notify]]\ncommand = 'true'\n",
        );
        assert_eq!(c.notify.len(), 2);
        assert_eq!(c.notify[0].on, vec!["waiting"]);
        assert_eq!(c.notify[0].min_interval_ms, 0);
        assert_eq!(c.notify[1].on, vec!["waiting", "finished", "exited"]);
        assert_eq!(c.notify[1].min_interval_ms, DEFAULT_NOTIFY_INTERVAL_MS);
        assert!(
            err("[[notify]]\non = [\"exited\"]\n")
                .contains(":1: invalid value for 'notify': the entry has no 'command'")
        );
        assert!(
            err("[[notify]]\ncommand = 'x'\nwhen = 1\n").contains(":3: unknown key 'notify.when'")
        );
        assert!(
            err("[[notify]]\ncommand = 'x'\non = [\"done\"]\n").contains("unknown event 'done'")
        );
    }

    #[test]
    fn unknown_top_level_key_lists_the_valid_ones() {
        let e = err("log_level = \"info\"\n\nscrollback = 5\n");
        assert_eq!(
            e,
            "/home/u/heimdall.toml:3: unknown key 'scrollback' (expected one of: socket_dir, \
             scrollback_bytes, session_env_var, kill_process_group, kill_grace_ms, detach_key, \
             classifier, env, log_file, log_level, tui, notify)"
        );
    }

    #[test]
    fn first_error_in_the_file_is_reported_even_if_keys_sort_later() {
        let e = err("zzz = 1\naaa = 2\n");
        assert!(e.contains(":1: unknown key 'zzz'"), "{e}");
    }

    #[test]
    fn unknown_keys_inside_tables_are_errors() {
        let e = err("[tui]\nbell = true\nthem = \"x\"\n");
        assert_eq!(
            e,
            "/home/u/heimdall.toml:3: unknown key 'tui.them' (expected one of: theme, \
             fit_sessions, bell, desktop_notify, columns)"
        );
        let e = err("[[env]]\nname = \"A\"\nvalue = \"b\"\nvalu = \"c\"\n");
        assert!(
            e.contains(":4: unknown key 'env.valu' (expected one of: name, value)"),
            "{e}"
        );
        let e = err("[classifier.simple]\ndebounce_ms = 5\n");
        assert!(
            e.contains(":2: unknown key 'classifier.simple.debounce_ms' (expected one of: idle_threshold_ms)"),
            "{e}"
        );
        let e = err("[classifier.claude]\nidle = 5\n");
        assert!(
            e.contains("unknown key 'classifier.claude.idle' (expected one of: idle_threshold_ms, debounce_ms)"),
            "{e}"
        );
        let e = err("[classifier.none]\nidle_threshold_ms = 5\n");
        assert!(
            e.contains(":2: unknown key 'classifier.none.idle_threshold_ms' ('classifier.none' takes no keys)"),
            "{e}"
        );
    }

    #[test]
    fn socket_dir_expands_tilde_and_keeps_other_paths_as_written() {
        let dir = |v: &str| ok(&format!("socket_dir = \"{v}\"")).socket_dir;
        assert_eq!(dir("~"), Some(PathBuf::from("/home/u")));
        assert_eq!(dir("~/s"), Some(PathBuf::from("/home/u/s")));
        assert_eq!(dir("/run/x"), Some(PathBuf::from("/run/x")));
        assert_eq!(dir("rel/x"), Some(PathBuf::from("rel/x")));
        assert_eq!(dir("a/~/b"), Some(PathBuf::from("a/~/b")));
    }

    #[test]
    fn socket_dir_rejects_empty_tilde_user_and_non_strings() {
        let e = err("socket_dir = \"\"");
        assert_eq!(
            e,
            "/home/u/heimdall.toml:1: invalid value for 'socket_dir': the path is empty \
             (remove the key to use the default)"
        );
        let e = err("socket_dir = \"~bob/x\"");
        assert!(
            e.contains("'socket_dir'") && e.contains("not '~user'"),
            "{e}"
        );
        let e = err("\nsocket_dir = 5");
        assert_eq!(
            e,
            "/home/u/heimdall.toml:2: invalid value for 'socket_dir': expected a string, got the integer 5"
        );
        let e = err("socket_dir = \"a\\u0000b\"");
        assert!(e.contains("NUL"), "{e}");
    }

    #[test]
    fn tilde_without_home_is_an_error_that_says_so() {
        let e = Config::parse("log_file = \"~/x.log\"", Path::new(FILE), None)
            .expect_err("no HOME")
            .to_string();
        assert_eq!(
            e,
            "/home/u/heimdall.toml:1: invalid value for 'log_file': '~/x.log' needs HOME, which \
             is not set to an absolute path (write the full path)"
        );
        let abs = Config::parse("log_file = \"/x.log\"", Path::new(FILE), None).expect("no ~");
        assert_eq!(abs.log_file, Some(PathBuf::from("/x.log")));
    }

    #[test]
    fn log_file_expands_tilde() {
        assert_eq!(
            ok("log_file = \"~/l/hm.log\"").log_file,
            Some(PathBuf::from("/home/u/l/hm.log"))
        );
        assert!(err("log_file = true").contains("'log_file': expected a string, got true"));
    }

    #[test]
    fn scrollback_bytes_accepts_zero_to_one_gib() {
        assert_eq!(ok("scrollback_bytes = 0").scrollback_bytes, 0);
        assert_eq!(ok("scrollback_bytes = 1_048_576").scrollback_bytes, 1 << 20);
        assert_eq!(ok("scrollback_bytes = 0x400").scrollback_bytes, 1024);
        assert_eq!(
            ok("scrollback_bytes = 1073741824").scrollback_bytes,
            MAX_SCROLLBACK_BYTES
        );
        assert_eq!(
            err("scrollback_bytes = 1073741825"),
            "/home/u/heimdall.toml:1: invalid value for 'scrollback_bytes': 1073741825 is out \
             of range (expected 0 to 1073741824 bytes)"
        );
        assert!(err("scrollback_bytes = -1").contains("'scrollback_bytes': -1 is out of range"));
        assert!(
            err("scrollback_bytes = 99999999999999999999999999999999999999999")
                .contains("out of range")
        );
        assert!(err("scrollback_bytes = \"64k\"").contains(
            "'scrollback_bytes': expected an integer from 0 to 1073741824, got the string '64k'"
        ));
        assert!(err("scrollback_bytes = 1.5").contains("got the float 1.5"));
    }

    #[test]
    fn session_env_var_must_be_a_valid_name() {
        assert_eq!(ok("session_env_var = \"HM_ID\"").session_env_var, "HM_ID");
        assert_eq!(ok("session_env_var = \"_x1\"").session_env_var, "_x1");
        for bad in ["", "1X", "A-B", "A=B", "É"] {
            let e = err(&format!("session_env_var = \"{bad}\""));
            assert!(
                e.contains("invalid value for 'session_env_var'")
                    && e.contains("is not a valid environment variable name"),
                "{e}"
            );
        }
    }

    #[test]
    fn kill_settings() {
        let c = ok("kill_process_group = false\nkill_grace_ms = 0");
        assert!(!c.kill_process_group);
        assert_eq!(c.kill_grace_ms, 0);
        assert_eq!(ok("kill_grace_ms = 600000").kill_grace_ms, 600_000);
        assert!(err("kill_grace_ms = 600001").contains(
            "'kill_grace_ms': 600001 is out of range (expected 0 to 600000 milliseconds)"
        ));
        assert!(
            err("kill_process_group = \"yes\"")
                .contains("'kill_process_group': expected true or false, got the string 'yes'")
        );
    }

    #[test]
    fn log_level_names() {
        assert_eq!(ok("log_level = \"debug\"").log_level, LogLevel::Debug);
        assert_eq!(ok("log_level = \"WARN\"").log_level, LogLevel::Warn);
        assert_eq!(
            err("log_level = \"verbose\""),
            "/home/u/heimdall.toml:1: invalid value for 'log_level': unknown log level 'verbose' \
             (expected one of: error, warn, info, debug, trace)"
        );
        for level in LogLevel::ALL {
            assert_eq!(level.as_str().parse::<LogLevel>(), Ok(level));
            assert_eq!(level.to_string(), level.as_str());
        }
    }

    #[test]
    fn detach_key_names() {
        let key = |v: &str| ok(&format!("detach_key = {v}")).detach_key;
        assert_eq!(key(r#""ctrl-\\""#), Some(0x1c));
        assert_eq!(key(r#""ctrl-]""#), Some(0x1d));
        assert_eq!(key(r#""ctrl-^""#), Some(0x1e));
        assert_eq!(key(r#""ctrl-_""#), Some(0x1f));
        assert_eq!(key(r#""ctrl-a""#), Some(0x01));
        assert_eq!(key(r#""Ctrl-Z""#), Some(0x1a));
        assert_eq!(key(r#""C-b""#), Some(0x02));
        assert_eq!(key(r#""none""#), None);
        assert_eq!(key(r#""None""#), None);
        assert_eq!(key("28"), Some(0x1c));
        assert_eq!(key("0"), None, "0 disables, as in the original");
    }

    #[test]
    fn detach_keys_that_typing_needs_are_refused() {
        for (name, what) in [
            ("ctrl-m", "Enter"),
            ("ctrl-i", "Tab"),
            ("ctrl-j", "newline"),
            ("ctrl-h", "Backspace"),
            ("ctrl-[", "Escape"),
        ] {
            let e = err(&format!("detach_key = \"{name}\""));
            assert!(
                e.starts_with("/home/u/heimdall.toml:1: invalid value for 'detach_key': Ctrl-")
                    && e.contains(what)
                    && e.contains("cannot be the detach key"),
                "{e}"
            );
        }
        for byte in ["13", "9", "10", "8", "27", "127", "113", "200"] {
            let e = err(&format!("detach_key = {byte}"));
            assert!(e.contains("cannot be the detach key"), "{e}");
        }
        assert!(err("detach_key = 256").contains("256 is out of range (expected 0 to 255)"));
        assert!(err("detach_key = -1").contains("-1 is out of range"));
        assert!(err("detach_key = \"alt-x\"").contains("'alt-x' is not a key name"));
        assert!(err("detach_key = \"ctrl-1\"").contains("'ctrl-1' is not a supported key"));
        assert!(err("detach_key = \"ctrl-ab\"").contains("is not a supported key"));
        assert!(err("detach_key = true").contains("'detach_key': expected a key name"));
    }

    #[test]
    fn describe_key_names_control_keys() {
        assert_eq!(describe_key(0x1c), "Ctrl-\\");
        assert_eq!(describe_key(0x1d), "Ctrl-]");
        assert_eq!(describe_key(0x01), "Ctrl-A");
        assert_eq!(describe_key(0x1a), "Ctrl-Z");
        assert_eq!(describe_key(b'q'), "'q'");
        assert_eq!(describe_key(0xc3), "0xc3");
        // Every key a name produces reads back as that name.
        for b in 0x01..=0x1f_u8 {
            if let Ok(parsed) = parse_detach_key(&describe_key(b)) {
                assert_eq!(parsed, Some(b));
            }
        }
        assert_eq!(parse_detach_key("none"), Ok(None));
    }

    #[test]
    fn classifier_string_form() {
        assert_eq!(ok("classifier = \"none\"").classifier, ClassifierSpec::None);
        assert_eq!(
            ok("classifier = \"claude\"").classifier,
            ClassifierSpec::Claude {
                idle_threshold_ms: 3000,
                debounce_ms: 200
            }
        );
        assert_eq!(
            ok("classifier = \"simple\"").classifier,
            ClassifierSpec::default()
        );
        assert_eq!(
            err("classifier = \"Simple\""),
            "/home/u/heimdall.toml:1: invalid value for 'classifier': unknown classifier \
             'Simple' (expected one of: simple, claude, agent, none)"
        );
        assert!(err("classifier = 3").contains("'classifier': expected \"simple\", \"claude\", \"agent\", \"none\" or a [classifier.<name>] table, got the integer 3"));
    }

    #[test]
    fn classifier_table_form() {
        let c = ok("[classifier.simple]\nidle_threshold_ms = 500\n");
        assert_eq!(
            c.classifier,
            ClassifierSpec::Simple {
                idle_threshold_ms: 500
            }
        );
        let c = ok("[classifier.claude]\ndebounce_ms = 0\n");
        assert_eq!(
            c.classifier,
            ClassifierSpec::Claude {
                idle_threshold_ms: 3000,
                debounce_ms: 0
            }
        );
        let c = ok("[classifier.claude]\nidle_threshold_ms = 86400000\ndebounce_ms = 60000\n");
        assert_eq!(
            c.classifier,
            ClassifierSpec::Claude {
                idle_threshold_ms: 86_400_000,
                debounce_ms: 60_000
            }
        );
        assert_eq!(ok("[classifier.none]\n").classifier, ClassifierSpec::None);
        assert_eq!(
            ok("classifier = { simple = {} }").classifier,
            ClassifierSpec::default()
        );
        assert_eq!(
            ok("[classifier]\nclaude = { debounce_ms = 7 }").classifier,
            ClassifierSpec::Claude {
                idle_threshold_ms: 3000,
                debounce_ms: 7
            }
        );
    }

    #[test]
    fn agent_classifier_takes_its_settings() {
        let c = ok(
            "[classifier.agent]\nstuck_after_ms = 5000\nprocess_evidence = false\nstatus_protocol = false\n",
        );
        assert_eq!(
            c.classifier,
            ClassifierSpec::Agent {
                idle_threshold_ms: 3000,
                stuck_after_ms: 5000,
                process_evidence: false,
                status_protocol: false
            }
        );
        assert!(c.classifier_chosen);
        assert!(!ok("").classifier_chosen);
        assert!(err("[classifier.agent]\nstuck_after_ms = 5\n").contains(
            ":2: invalid value for 'classifier.agent.stuck_after_ms': 5 is out of range"
        ));
        assert!(err("[classifier.agent]\ndebounce_ms = 5\n").contains(
            "unknown key 'classifier.agent.debounce_ms' (expected one of: idle_threshold_ms, stuck_after_ms, process_evidence, status_protocol)"
        ));
    }

    #[test]
    fn classifier_table_errors() {
        let e = err("[classifier.simple]\n[classifier.claude]\n");
        assert_eq!(
            e,
            "/home/u/heimdall.toml:2: invalid value for 'classifier': the classifier table must \
             have exactly one key (simple, claude, agent or none), got 2 (keep a single \
             [classifier.<name>] table)"
        );
        assert!(
            err("classifier = {}")
                .contains("exactly one key (simple, claude, agent or none), got 0")
        );
        assert!(err("[classifier.fancy]\n").contains(
            ":1: unknown key 'classifier.fancy' (expected one of: simple, claude, agent, none)"
        ));
        assert!(err("[classifier]\nsimple = 3\n").contains(
            ":2: invalid value for 'classifier.simple': expected a [classifier.simple] table, got the integer 3"
        ));
        assert!(
            err("[classifier.simple]\nidle_threshold_ms = 0\n").contains(
                ":2: invalid value for 'classifier.simple.idle_threshold_ms': 0 is out of range \
             (expected 1 to 86400000 milliseconds)"
            )
        );
        assert!(err("[classifier.claude]\ndebounce_ms = 60001\n").contains(
            "'classifier.claude.debounce_ms': 60001 is out of range (expected 0 to 60000 milliseconds)"
        ));
        // Both forms at once is a duplicate key in TOML itself.
        assert!(err("classifier = \"simple\"\n[classifier.simple]\n").contains("invalid TOML"));
    }

    #[test]
    fn env_entries_keep_file_order() {
        let c = ok(concat!(
            "[[env]]\nname = \"B\"\nvalue = \"2\"\n",
            "[[env]]\nvalue = \"\"\nname = \"A\"\n",
        ));
        let names: Vec<_> = c
            .env
            .iter()
            .map(|v| (v.name.as_str(), v.value.as_str()))
            .collect();
        assert_eq!(names, [("B", "2"), ("A", "")]);
        let inline = ok("env = [{ name = \"X\", value = \"y\" }]");
        assert_eq!(inline.env.len(), 1);
    }

    #[test]
    fn env_errors_never_show_the_value() {
        let secret = "hunter2";
        let cases = [
            format!("[[env]]\nvalue = \"{secret}\"\n"),
            format!("[[env]]\nname = \"1BAD\"\nvalue = \"{secret}\"\n"),
            format!("[[env]]\nname = \"A\"\nvalue = \"{secret}\\u0000\"\n"),
            "[[env]]\nname = \"A\"\nvalue = 271828\n".to_owned(),
            format!("[[env]]\nname = \"A\"\nvalue = \"{secret}\"\nextra = \"{secret}\"\n"),
        ];
        for text in &cases {
            let e = err(text);
            assert!(!e.contains(secret) && !e.contains("271828"), "{e}");
            assert!(e.starts_with("/home/u/heimdall.toml:"), "{e}");
        }
        assert!(err(&cases[0]).contains(":1: invalid value for 'env': the entry has no 'name'"));
        assert!(err("[[env]]\nname = \"A\"\n").contains("the entry has no 'value'"));
        assert!(err(&cases[1]).contains(":2: invalid value for 'env.name': '1BAD' is not a valid"));
        assert!(
            err(&cases[2]).contains(":3: invalid value for 'env.value': the value contains a NUL")
        );
        assert!(err(&cases[3]).contains("'env.value': expected a string, got integer"));
        assert!(err("env = 3").contains("'env': expected [[env]] tables"));
        assert!(err("env = [3]").contains("'env': expected a [[env]] table, got the integer 3"));
    }

    #[test]
    fn duplicate_env_names_are_refused() {
        let e =
            err("[[env]]\nname = \"A\"\nvalue = \"1\"\n\n[[env]]\nname = \"A\"\nvalue = \"2\"\n");
        assert_eq!(
            e,
            "/home/u/heimdall.toml:6: invalid value for 'env.name': 'A' is already set by the \
             [[env]] entry on line 2 (keep one of them)"
        );
    }

    #[test]
    fn env_cannot_set_the_session_env_var() {
        let e = err("[[env]]\nname = \"HEIMDALL_SESSION_ID\"\nvalue = \"x\"\n");
        assert!(
            e.contains(
                ":2: invalid value for 'env.name': 'HEIMDALL_SESSION_ID' is the session_env_var"
            ),
            "{e}"
        );
        let e = err("session_env_var = \"S\"\n[[env]]\nname = \"S\"\nvalue = \"x\"\n");
        assert!(e.contains(":3: invalid value for 'env.name': 'S'"), "{e}");
        ok("session_env_var = \"S\"\n[[env]]\nname = \"HEIMDALL_SESSION_ID\"\nvalue = \"x\"\n");
    }

    #[test]
    fn tui_table() {
        let c = ok(
            "[tui]\ntheme = \"dark\"\nfit_sessions = false\nbell = true\ndesktop_notify = \"osc777\"\ncolumns = 3\n",
        );
        assert_eq!(
            c.tui,
            TuiConfig {
                theme: Some("dark".into()),
                theme_at: Some(Location {
                    path: c.source.clone().expect("a file"),
                    line: Some(2),
                }),
                fit_sessions: false,
                bell: true,
                desktop_notify: Some(DesktopNotify::Osc777),
                columns: Some(3),
            }
        );
        assert_eq!(
            c.tui.bad_theme("no such theme").to_string(),
            format!(
                "{}:2: invalid value for 'tui.theme': no such theme",
                c.source.as_ref().expect("a file").display()
            )
        );
        assert!(
            err("[tui]\ntheme = \"\"\n")
                .contains(":2: invalid value for 'tui.theme': the theme name is empty")
        );
        assert!(
            err("[tui]\nbell = 1\n")
                .contains("'tui.bell': expected true or false, got the integer 1")
        );
        assert!(
            err("tui = \"dark\"").contains("'tui': expected a [tui] table, got the string 'dark'")
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

    #[test]
    fn search_order() {
        let cwd = Path::new("/w");
        let home = Some(Path::new("/home/u"));
        assert_eq!(
            Config::search_paths(cwd, Some(Path::new("/xdg")), home),
            [
                PathBuf::from("/w/heimdall.toml"),
                PathBuf::from("/xdg/heimdall/heimdall.toml"),
                PathBuf::from("/home/u/.config/heimdall/heimdall.toml"),
            ]
        );
        assert_eq!(
            Config::search_paths(cwd, None, home),
            [
                PathBuf::from("/w/heimdall.toml"),
                PathBuf::from("/home/u/.config/heimdall/heimdall.toml"),
            ]
        );
        // A relative XDG_CONFIG_HOME is ignored, as the XDG spec says.
        assert_eq!(
            Config::search_paths(cwd, Some(Path::new("xdg")), home).len(),
            2
        );
        // XDG_CONFIG_HOME set to the default is not searched twice.
        assert_eq!(
            Config::search_paths(cwd, Some(Path::new("/home/u/.config")), home).len(),
            2
        );
        assert_eq!(
            Config::search_paths(cwd, None, None),
            [PathBuf::from("/w/heimdall.toml")]
        );
    }

    #[test]
    fn load_of_a_missing_explicit_file_says_not_found() {
        let e = Config::load(Some(Path::new("/nonexistent/hm.toml"))).expect_err("missing");
        assert_eq!(
            e.to_string(),
            "config file '/nonexistent/hm.toml' not found (check the --config path)"
        );
    }

    #[test]
    fn missing_relative_config_is_reported_as_given() {
        let e = Config::load(Some(Path::new("no-such-dir/hm.toml"))).expect_err("missing");
        assert_eq!(
            e.to_string(),
            "config file 'no-such-dir/hm.toml' not found (check the --config path)"
        );
    }

    #[test]
    fn load_reads_an_explicit_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("hm.toml");
        std::fs::write(&path, "scrollback_bytes = 7\n").expect("write");
        let c = Config::load(Some(&path)).expect("loads");
        assert_eq!(c.scrollback_bytes, 7);
        assert_eq!(c.source.as_deref(), Some(path.as_path()));
        std::fs::write(&path, "scrollback_bytes = \"x\"\n").expect("write");
        let e = Config::load(Some(&path)).expect_err("invalid").to_string();
        assert!(
            e.starts_with(&format!(
                "{}:1: invalid value for 'scrollback_bytes'",
                path.display()
            )),
            "{e}"
        );
    }

    fn claude(idle: u64, debounce: u64) -> ClassifierSpec {
        ClassifierSpec::Claude {
            idle_threshold_ms: idle,
            debounce_ms: debounce,
        }
    }

    fn apply(config: Config, o: Overrides) -> Result<Config, String> {
        config.apply(&o).map_err(|e| e.to_string())
    }

    #[test]
    fn classifier_flag_starts_fresh_then_takes_the_numeric_flags() {
        let file = ok("[classifier.claude]\nidle_threshold_ms = 9000\ndebounce_ms = 50\n");
        let fresh = apply(
            file.clone(),
            Overrides {
                classifier: Some("claude".into()),
                ..Overrides::default()
            },
        );
        assert_eq!(fresh.map(|c| c.classifier), Ok(claude(3000, 200)));
        let tuned = apply(
            file,
            Overrides {
                classifier: Some("claude".into()),
                idle_threshold_ms: Some(5000),
                debounce_ms: Some(100),
                ..Overrides::default()
            },
        );
        assert_eq!(tuned.map(|c| c.classifier), Ok(claude(5000, 100)));
    }

    #[test]
    fn numeric_flags_alone_tune_the_file_classifier() {
        let file = ok("[classifier.claude]\nidle_threshold_ms = 9000\ndebounce_ms = 50\n");
        let c = apply(
            file.clone(),
            Overrides {
                debounce_ms: Some(10),
                ..Overrides::default()
            },
        );
        assert_eq!(c.map(|c| c.classifier), Ok(claude(9000, 10)));
        let c = apply(
            file,
            Overrides {
                idle_threshold_ms: Some(1),
                ..Overrides::default()
            },
        );
        assert_eq!(c.map(|c| c.classifier), Ok(claude(1, 50)));
        let c = apply(
            Config::defaults(),
            Overrides {
                idle_threshold_ms: Some(4000),
                ..Overrides::default()
            },
        );
        assert_eq!(
            c.map(|c| c.classifier),
            Ok(ClassifierSpec::Simple {
                idle_threshold_ms: 4000
            })
        );
    }

    #[test]
    fn numeric_flags_the_classifier_lacks_are_errors() {
        let e = apply(
            Config::defaults(),
            Overrides {
                debounce_ms: Some(10),
                ..Overrides::default()
            },
        );
        assert_eq!(
            e,
            Err(
                "invalid --debounce-ms: only the claude classifier has a debounce, and the \
                 classifier in use is 'simple' (add --classifier claude, or drop --debounce-ms)"
                    .to_owned()
            )
        );
        let e = apply(
            ok("classifier = \"claude\""),
            Overrides {
                classifier: Some("none".into()),
                debounce_ms: Some(10),
                ..Overrides::default()
            },
        );
        assert!(
            e.expect_err("none has no debounce")
                .contains("in use is 'none'")
        );
        let e = apply(
            ok("classifier = \"none\""),
            Overrides {
                idle_threshold_ms: Some(10),
                ..Overrides::default()
            },
        );
        assert_eq!(
            e,
            Err(
                "invalid --idle-threshold-ms: the classifier in use is 'none', which has no idle \
                 threshold (add --classifier simple or claude, or drop --idle-threshold-ms)"
                    .to_owned()
            )
        );
    }

    #[test]
    fn override_values_are_validated() {
        let bad = |o: Overrides| apply(Config::defaults(), o).expect_err("invalid");
        let e = bad(Overrides {
            classifier: Some("fancy".into()),
            ..Overrides::default()
        });
        assert_eq!(
            e,
            "invalid --classifier: unknown classifier 'fancy' (expected one of: simple, claude, agent, none)"
        );
        let e = bad(Overrides {
            idle_threshold_ms: Some(0),
            ..Overrides::default()
        });
        assert!(
            e.starts_with("invalid --idle-threshold-ms: 0 is out of range"),
            "{e}"
        );
        let e = bad(Overrides {
            classifier: Some("claude".into()),
            debounce_ms: Some(60_001),
            ..Overrides::default()
        });
        assert!(
            e.starts_with("invalid --debounce-ms: 60001 is out of range"),
            "{e}"
        );
        let e = bad(Overrides {
            scrollback_bytes: Some(MAX_SCROLLBACK_BYTES + 1),
            ..Overrides::default()
        });
        assert!(
            e.starts_with("invalid --scrollback-bytes: 1073741825 is out of range"),
            "{e}"
        );
        let e = bad(Overrides {
            session_env_var: Some("A B".into()),
            ..Overrides::default()
        });
        assert!(
            e.starts_with("invalid --session-env-var: 'A B' is not a valid"),
            "{e}"
        );
        let e = bad(Overrides {
            socket_dir: Some(PathBuf::new()),
            ..Overrides::default()
        });
        assert_eq!(e, "invalid --socket-dir: the path is empty");
        let e = bad(Overrides {
            log_file: Some(PathBuf::new()),
            ..Overrides::default()
        });
        assert_eq!(e, "invalid --log-file: the path is empty");
    }

    #[test]
    fn session_env_var_flag_cannot_collide_with_env() {
        let file = ok("[[env]]\nname = \"S\"\nvalue = \"x\"\n");
        let e = apply(
            file,
            Overrides {
                session_env_var: Some("S".into()),
                ..Overrides::default()
            },
        );
        assert!(
            e.expect_err("collides")
                .contains("'S' is also set by an [[env]] entry")
        );
    }

    #[test]
    fn other_flags_override_directly() {
        let file = ok(concat!(
            "socket_dir = \"/f\"\nscrollback_bytes = 1\nkill_process_group = true\n",
            "session_env_var = \"F\"\nlog_file = \"/f.log\"\nlog_level = \"warn\"\n",
        ));
        let c = apply(
            file.clone(),
            Overrides {
                socket_dir: Some("rel/s".into()),
                scrollback_bytes: Some(0),
                kill_process_group: Some(false),
                session_env_var: Some("C".into()),
                log_file: Some("/c.log".into()),
                log_level: Some(LogLevel::Trace),
                ..Overrides::default()
            },
        )
        .expect("valid");
        assert_eq!(c.socket_dir, Some(PathBuf::from("rel/s")));
        assert_eq!(c.scrollback_bytes, 0);
        assert!(!c.kill_process_group);
        assert_eq!(c.session_env_var, "C");
        assert_eq!(c.log_file, Some(PathBuf::from("/c.log")));
        assert_eq!(c.log_level, LogLevel::Trace);
        assert_eq!(c.source, file.source);
        assert_eq!(apply(file.clone(), Overrides::default()), Ok(file));
    }

    #[test]
    fn expand_tilde_rules() {
        let home = Some(Path::new("/h"));
        assert_eq!(expand_tilde("~", home), Ok(PathBuf::from("/h")));
        assert_eq!(expand_tilde("~/", home), Ok(PathBuf::from("/h/")));
        assert_eq!(expand_tilde("~//a", home), Ok(PathBuf::from("/h/a")));
        assert_eq!(expand_tilde("./~", home), Ok(PathBuf::from("./~")));
        assert!(expand_tilde("~x", home).is_err());
        assert!(expand_tilde("~", None).is_err());
        assert!(expand_tilde("", home).is_err());
    }

    #[test]
    fn env_names() {
        assert!(is_valid_env_name("PATH"));
        assert!(is_valid_env_name("_"));
        assert!(is_valid_env_name("a1_B"));
        assert!(!is_valid_env_name(""));
        assert!(!is_valid_env_name("9A"));
        assert!(!is_valid_env_name("A.B"));
    }
}
