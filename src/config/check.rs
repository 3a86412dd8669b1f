//! The rules a value must follow wherever it comes from, shared by the
//! file (`schema`) and the flags (`overrides`) so that both refuse a bad
//! value in the same words: environment variable names, numeric ranges,
//! `~` in paths and classifier names.

use std::ops::RangeInclusive;

pub(super) const CLASSIFIER_NAMES: &[&str] = &["simple", "claude", "agent", "none"];

/// `[A-Za-z_][A-Za-z0-9_]*`: a name every shell and `env` accept.
pub fn is_valid_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

pub(super) fn check_env_name(name: &str) -> Result<(), String> {
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

pub(super) fn check_range(n: u64, range: &RangeInclusive<u64>, unit: &str) -> Result<u64, String> {
    if range.contains(&n) {
        Ok(n)
    } else {
        Err(format!(
            "{n} is out of range ({})",
            expected_range(range, unit)
        ))
    }
}

pub(super) fn expected_range(range: &RangeInclusive<u64>, unit: &str) -> String {
    let (lo, hi) = (range.start(), range.end());
    if unit.is_empty() {
        format!("expected {lo} to {hi}")
    } else {
        format!("expected {lo} to {hi} {unit}")
    }
}

pub(super) fn unknown_classifier(name: &str) -> String {
    format!(
        "unknown classifier '{}' (expected one of: {})",
        name.escape_debug(),
        CLASSIFIER_NAMES.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::expand_tilde;
    use std::path::{Path, PathBuf};

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
        assert!(expand_tilde(&"a".repeat(4096), home).is_err());
        assert!(expand_tilde(&"a".repeat(4095), home).is_ok());
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
