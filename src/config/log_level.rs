//! [`LogLevel`]: how much a supervisor writes to its log, as named in
//! `log_level` and `--log-level`.
//!
//! `FromStr` is written by hand rather than derived with serde: names are
//! case-insensitive, and an unknown name gets a message listing the choices,
//! which the file's error then shows after `file:line: key`.

use std::fmt;
use std::str::FromStr;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::test_file::{err, ok};

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
}
