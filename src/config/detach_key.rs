//! Key names for the detach key and the copy key (`"ctrl-\\"`, `"none"`),
//! how a key byte is shown in hints, and the keys that cannot be either
//! because typing needs them. Pure string and byte rules: the file's
//! integer form is read in `schema`.

/// Which key a name is for: said in the messages about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Detach,
    Copy,
    Next,
    Attach,
}

impl Role {
    fn key(self) -> &'static str {
        match self {
            Role::Detach => "the detach key",
            Role::Copy => "the copy key",
            Role::Next => "the next-session key",
            Role::Attach => "the raw-attach key",
        }
    }

    fn none(self) -> &'static str {
        match self {
            Role::Detach => "to disable detaching",
            Role::Copy => "for no copy key",
            Role::Next | Role::Attach => "for none",
        }
    }
}

/// Parse a detach key name: `"ctrl-<key>"` (or `"c-<key>"`, any case) where
/// `<key>` is a letter or one of `\ ] ^ _`, or `"none"` to disable
/// detaching (`Ok(None)`). Keys that typing needs are refused.
pub fn parse_detach_key(s: &str) -> Result<Option<u8>, String> {
    parse_key(s, Role::Detach)
}

/// A key name for `role`, as [`parse_detach_key`] reads one.
pub(super) fn parse_key(s: &str, role: Role) -> Result<Option<u8>, String> {
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
             or \"ctrl-a\", or \"none\" {})",
            s.escape_debug(),
            role.none()
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
    check_key_byte(byte, role).map(Some)
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

/// Refuse keys that typing needs: taken for `role`, typing would detach
/// or open copy mode.
pub(super) fn check_key_byte(b: u8, role: Role) -> Result<u8, String> {
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
    let then = match role {
        Role::Detach => "typing would detach",
        Role::Copy => "typing would open copy mode",
        Role::Next => "typing would leave the attach",
        Role::Attach => "typing in focus would start a raw attach",
    };
    Err(format!(
        "{} cannot be {}: {why}, so {then} \
         (pick another, such as \"ctrl-\\\\\" or \"ctrl-]\", or \"none\")",
        describe_key(b),
        role.key()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::test_file::{err, ok};

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
    fn copy_key_names_and_clashes() {
        assert_eq!(ok("").copy_key, Some(0x1d), "Ctrl-] by default");
        assert_eq!(ok("copy_key = \"ctrl-g\"").copy_key, Some(0x07));
        assert_eq!(ok("copy_key = \"none\"").copy_key, None);
        assert_eq!(ok("copy_key = 0").copy_key, None);
        let e = err("copy_key = \"ctrl-m\"");
        assert!(
            e.contains("invalid value for 'copy_key': Ctrl-M cannot be the copy key: it is Enter, so typing would open copy mode"),
            "{e}"
        );
        assert!(err("copy_key = \"x\"").contains("or \"none\" for no copy key"));
        // The default gives way to a detach key chosen as Ctrl-]; one
        // chosen as well is an error, at its line.
        let c = ok("detach_key = \"ctrl-]\"");
        assert_eq!((c.detach_key, c.copy_key), (Some(0x1d), None));
        let e = err("detach_key = \"ctrl-]\"\ncopy_key = \"ctrl-]\"");
        assert!(
            e.starts_with("/home/u/heimdall.toml:2: invalid value for 'copy_key': Ctrl-] is the detach key too"),
            "{e}"
        );
        let c = ok("copy_key = \"ctrl-\\\\\"\ndetach_key = \"ctrl-a\"");
        assert_eq!((c.detach_key, c.copy_key), (Some(0x01), Some(0x1c)));
    }

    #[test]
    fn history_lines_accepts_zero_to_a_hundred_thousand() {
        assert_eq!(ok("history_lines = 0").history_lines, 0);
        assert_eq!(ok("history_lines = 100000").history_lines, 100_000);
        assert!(
            err("history_lines = 100001")
                .contains("'history_lines': 100001 is out of range (expected 0 to 100000 lines)")
        );
        assert!(err("history_lines = \"1k\"").contains("expected an integer from 0 to 100000"));
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
}
