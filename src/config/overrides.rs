//! `hm run` flags over the file: [`Overrides`] and [`Config::apply`]. A flag
//! is checked against the same rules as the key it overrides (`check`).

use std::path::PathBuf;

use super::check::{check_env_name, check_range, unknown_classifier};
use super::{
    Config, ConfigError, DEBOUNCE_MS_RANGE, IDLE_THRESHOLD_MS_RANGE, LogLevel, MAX_SCROLLBACK_BYTES,
};
use crate::classify::ClassifierSpec;

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

impl Config {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::test_file::ok;

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
}
