//! A rule's regex ([`Pattern`]): parsed when its file is read, compiled
//! the first time it is matched, and shared by every rule that spells it
//! the same way. It is separate from the rule model because it is the one
//! part that caches, locks and lazily compiles; the rest of `rules` is
//! plain data.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use regex::Regex;

/// A rule's regex, checked when its file is read and compiled the first
/// time it is matched: a session meets only its own agent's rules and the
/// common ones, and a compiled regex costs a supervisor 10-20 KiB. The
/// same text in several rules (or files) is one pattern, compiled once.
#[derive(Clone)]
pub struct Pattern(Arc<PatternInner>);

struct PatternInner {
    source: String,
    compiled: OnceLock<Regex>,
}

impl Pattern {
    /// The pattern for `source`, if it is a valid regex (parsed, not
    /// compiled: the syntax is what a rule's author gets wrong).
    pub fn checked(source: &str) -> Result<Pattern, String> {
        static INTERNED: OnceLock<Mutex<HashMap<String, Pattern>>> = OnceLock::new();
        let interned = INTERNED.get_or_init(Default::default);
        let mut map = interned.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = map.get(source) {
            return Ok(p.clone());
        }
        regex_syntax::Parser::new()
            .parse(source)
            .map_err(|e| e.to_string())?;
        let p = Pattern(Arc::new(PatternInner {
            source: source.to_owned(),
            compiled: OnceLock::new(),
        }));
        map.insert(source.to_owned(), p.clone());
        Ok(p)
    }

    pub fn source(&self) -> &str {
        &self.0.source
    }
}

impl std::ops::Deref for Pattern {
    type Target = Regex;

    fn deref(&self) -> &Regex {
        self.0.compiled.get_or_init(|| {
            // Parsed when loaded; compiling can still exceed the regex
            // crate's size limit. Such a rule then never matches.
            Regex::new(&self.0.source).unwrap_or_else(|e| {
                tracing::warn!("rule pattern {:?} does not compile: {e}", self.0.source);
                never()
            })
        })
    }
}

/// A regex that matches nothing.
fn never() -> Regex {
    static NEVER: OnceLock<Regex> = OnceLock::new();
    NEVER
        .get_or_init(|| Regex::new(r"[^\s\S]").expect("a valid regex"))
        .clone()
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pattern({:?})", self.0.source)
    }
}
