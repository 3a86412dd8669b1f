//! A `heimdall.toml` being read: the spanned TOML tree in file order, a
//! span turned into `file:line`, and typed values whose errors all read
//! `file:line: invalid value for 'key': expected ..., got ...`. What each key
//! means is `schema`'s business; this file knows no key names.

use std::ops::{Range, RangeInclusive};
use std::path::{Path, PathBuf};

use toml::Spanned;
use toml::de::{DeString, DeTable, DeValue};

use super::check::{check_range, expected_range};
use super::{ConfigError, Location};
use crate::paths::expand_tilde;

type Entry<'t, 'i> = (&'t Spanned<DeString<'i>>, &'t Spanned<DeValue<'i>>);

/// A table's entries in file order (the parsed map is sorted by key), so the
/// error reported is the first one in the file.
pub(super) fn in_file_order<'t, 'i>(table: &'t DeTable<'i>) -> Vec<Entry<'t, 'i>> {
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

/// The key of `expected` that `name` is most likely a typo of, by the
/// measure clap suggests subcommands with (Jaro similarity), if one is
/// close enough not to be another word.
fn likely<'e>(name: &str, expected: &[&'e str]) -> Option<&'e str> {
    expected
        .iter()
        .map(|&e| (strsim::jaro(name, e), e))
        .filter(|&(score, _)| score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, e)| e)
}

/// The file being parsed, for building located errors. The readers of
/// each table are more methods on it, in `schema`.
pub(super) struct Doc<'a> {
    pub(super) text: &'a str,
    pub(super) path: &'a Path,
    pub(super) home: Option<&'a Path>,
}

impl Doc<'_> {
    pub(super) fn at(&self, span: Option<Range<usize>>) -> Location {
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

    pub(super) fn syntax(&self, error: &toml::de::Error) -> ConfigError {
        let mut message = error.message().trim().replace('\n', "; ");
        // The parser's "duplicate key" names no key; its span does.
        if message == "duplicate key"
            && let Some(key) = error
                .span()
                .and_then(|span| self.text.get(span))
                .map(|key| key.trim().trim_matches(['[', ']']).trim())
                .filter(|key| !key.is_empty())
        {
            message = format!("duplicate key '{}'", key.escape_debug());
        }
        ConfigError::Syntax {
            at: self.at(error.span()),
            message,
        }
    }

    pub(super) fn invalid(
        &self,
        span: Range<usize>,
        key: &str,
        reason: impl Into<String>,
    ) -> ConfigError {
        ConfigError::InvalidValue {
            at: self.at(Some(span)),
            key: key.to_owned(),
            reason: reason.into(),
        }
    }

    pub(super) fn unknown(
        &self,
        key: &Spanned<DeString<'_>>,
        table: &str,
        expected: &[&str],
    ) -> ConfigError {
        let name: &str = key.get_ref();
        let hint = if expected.is_empty() {
            format!("'{table}' takes no keys")
        } else if let Some(meant) = likely(name, expected) {
            format!("did you mean '{meant}'?")
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

    pub(super) fn mismatch(
        &self,
        key: &str,
        value: &Spanned<DeValue<'_>>,
        expected: &str,
    ) -> ConfigError {
        let got = describe(value.get_ref());
        self.invalid(value.span(), key, format!("expected {expected}, got {got}"))
    }

    pub(super) fn string(
        &self,
        key: &str,
        value: &Spanned<DeValue<'_>>,
    ) -> Result<String, ConfigError> {
        match value.get_ref() {
            DeValue::String(s) => Ok(s.to_string()),
            _ => Err(self.mismatch(key, value, "a string")),
        }
    }

    pub(super) fn boolean(
        &self,
        key: &str,
        value: &Spanned<DeValue<'_>>,
    ) -> Result<bool, ConfigError> {
        match value.get_ref() {
            DeValue::Boolean(b) => Ok(*b),
            _ => Err(self.mismatch(key, value, "true or false")),
        }
    }

    pub(super) fn integer(
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

    pub(super) fn path(
        &self,
        key: &str,
        value: &Spanned<DeValue<'_>>,
    ) -> Result<PathBuf, ConfigError> {
        let raw = self.string(key, value)?;
        expand_tilde(&raw, self.home).map_err(|r| self.invalid(value.span(), key, r))
    }

    /// `header` is how the table is written, e.g. `[tui]` or `[[env]]`.
    pub(super) fn table<'t, 'i>(
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
}

#[cfg(test)]
mod tests {
    use crate::config::test_file::err;

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
    fn first_error_in_the_file_is_reported_even_if_keys_sort_later() {
        let e = err("zzz = 1\naaa = 2\n");
        assert!(e.contains(":1: unknown key 'zzz'"), "{e}");
    }
}
