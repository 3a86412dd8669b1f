//! The config target: `heimdall.toml` text and the key, level and path
//! helpers it shares with the command line. Separate because its checks
//! restate the config's own limits, which change with the config.

use std::path::Path;

use crate::classify::ClassifierSpec;
use crate::config::{self, Config};

use super::assert_one_line;

/// `heimdall.toml` parsing and the values it shares with the command line.
///
/// The input is the file's text (invalid UTF-8 replaced, as no file with it
/// gets this far). Checks: no panic; every error is one printable line; an
/// accepted file yields a config whose values are all in range; the detach
/// key, log level and path helpers agree with their own documentation.
pub fn config(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let path = Path::new("/home/u/.config/heimdall/heimdall.toml");
    for home in [Some(Path::new("/home/u")), None] {
        match Config::parse(&text, path, home) {
            Ok(c) => valid_config(&c),
            Err(e) => assert_one_line(&e.to_string()),
        }
    }
    match config::parse_detach_key(&text) {
        Ok(None) => assert!(text.eq_ignore_ascii_case("none")),
        Ok(Some(b)) => {
            assert!(matches!(b, 0x01..=0x1f) && !matches!(b, 0x08 | 0x09 | 0x0a | 0x0d | 0x1b));
            let name = config::describe_key(b);
            assert_eq!(config::parse_detach_key(&name), Ok(Some(b)), "{name}");
        }
        Err(e) => assert_one_line(&e),
    }
    if let Err(e) = text.parse::<config::LogLevel>() {
        assert_one_line(&e);
    }
    match config::expand_tilde(&text, Some(Path::new("/home/u"))) {
        Ok(p) if !text.starts_with('~') => assert_eq!(p, Path::new(&*text)),
        Ok(p) => assert!(p.starts_with("/home/u")),
        Err(e) => assert_one_line(&e),
    }
}

fn valid_config(c: &Config) {
    assert!(c.scrollback_bytes <= config::MAX_SCROLLBACK_BYTES);
    assert!(c.kill_grace_ms <= config::MAX_KILL_GRACE_MS);
    assert!(config::is_valid_env_name(&c.session_env_var));
    for (i, var) in c.env.iter().enumerate() {
        assert!(config::is_valid_env_name(&var.name));
        assert!(!var.value.contains('\0'));
        assert_ne!(var.name, c.session_env_var);
        assert!(c.env[..i].iter().all(|v| v.name != var.name));
    }
    if let Some(b) = c.detach_key {
        assert_eq!(
            config::parse_detach_key(&config::describe_key(b)),
            Ok(Some(b))
        );
    }
    match c.classifier {
        ClassifierSpec::None => {}
        ClassifierSpec::Simple { idle_threshold_ms } => {
            assert!(config::IDLE_THRESHOLD_MS_RANGE.contains(&idle_threshold_ms));
        }
        ClassifierSpec::Claude {
            idle_threshold_ms,
            debounce_ms,
        } => {
            assert!(config::IDLE_THRESHOLD_MS_RANGE.contains(&idle_threshold_ms));
            assert!(config::DEBOUNCE_MS_RANGE.contains(&debounce_ms));
        }
        ClassifierSpec::Agent {
            idle_threshold_ms,
            stuck_after_ms,
            ..
        } => {
            assert!(config::IDLE_THRESHOLD_MS_RANGE.contains(&idle_threshold_ms));
            assert!(config::STUCK_AFTER_MS_RANGE.contains(&stuck_after_ms));
        }
    }
    for p in [&c.socket_dir, &c.log_file].into_iter().flatten() {
        assert!(!p.as_os_str().is_empty());
    }
    if let Some(theme) = &c.tui.theme {
        assert!(!theme.is_empty());
    }
}
