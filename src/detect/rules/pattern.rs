//! A rule's regex ([`Pattern`]): parsed when a user's rule file is read
//! (the built-in ones when first matched: the tests check them), compiled
//! the first time a row could match it, and shared by every rule that
//! spells it the same way. It is separate from the rule model because it
//! is the one part that caches, locks and lazily compiles; the rest of
//! `rules` is plain data.
//!
//! Memory is the constraint here, not speed. A supervisor lives for days
//! with every pattern it has compiled, and matches a few dozen short rows
//! only when its screen settles. So a pattern is a Thompson NFA without
//! capture slots, searched by a PikeVM (1-9 KiB for most of our patterns,
//! 26 at most), not a `regex::Regex`, which adds a reverse NFA, lazy DFA
//! caches and a pool of search caches for fast searches (10-150 KiB each;
//! docs/performance.md). The syntax and its Unicode meaning are the same:
//! both come from `regex-syntax`. What the PikeVM loses in speed, the
//! needles win back: a row without one of them is not searched at all.

use std::cell::RefCell;
use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use regex_automata::nfa::thompson::pikevm::{Cache, PikeVM};
use regex_automata::nfa::thompson::{self, NFA, WhichCaptures};
use regex_syntax::hir::Hir;

use super::needles::{self, Needles};

/// The most memory one compiled pattern may take: the `regex` crate's
/// default, so that a user's pattern that compiled there compiles here.
const SIZE_LIMIT: usize = 10 << 20;

/// A rule's regex, checked when its file is read and compiled the first
/// time it is searched: a session meets only its own agent's rules and the
/// common ones, and most rows lack the text a pattern needs, so most
/// patterns never compile. The same text in several rules (or files) is
/// one pattern, compiled once.
#[derive(Clone)]
pub struct Pattern(Arc<PatternInner>);

struct PatternInner {
    /// Shared with the interning table's key.
    source: Arc<str>,
    /// Found when the pattern is checked, or (built-in patterns, which are
    /// not) when it is first matched.
    needles: OnceLock<Needles>,
    program: OnceLock<PikeVM>,
}

thread_local! {
    /// The search scratch space of every pattern searched on this thread.
    /// A PikeVM's takes 16 bytes per NFA state, 40 % on top of the NFA;
    /// patterns are searched one at a time, so one space, grown to the
    /// largest pattern, serves them all (a supervisor has one thread).
    static SCRATCH: RefCell<Option<Cache>> = const { RefCell::new(None) };
}

impl Pattern {
    /// The pattern for `source`, if it is a valid regex that compiles
    /// within the size limit. Compiled once here and dropped (it is
    /// compiled again when a row first needs it): a pattern too big to
    /// compile would otherwise be accepted and never match.
    pub fn checked(source: &str) -> Result<Pattern, String> {
        Pattern::interned(source, |source| {
            let hir = parse(source)?;
            compile(source).map_err(|_| {
                format!(
                    "too big to compile (over {} MiB); a smaller repetition count fits",
                    SIZE_LIMIT >> 20
                )
            })?;
            Ok(OnceLock::from(needles::of(&hir)))
        })
    }

    /// The pattern for `source`, taken as valid without looking: for the
    /// built-in rules, which the tests check. An invalid one would never
    /// match (and say so in the log).
    pub fn unchecked(source: &str) -> Pattern {
        let Ok(p) = Pattern::interned::<Infallible>(source, |_| Ok(OnceLock::new()));
        p
    }

    /// The one pattern for `source`, made with `needles` when there is
    /// none yet.
    fn interned<E>(
        source: &str,
        needles: impl FnOnce(&str) -> Result<OnceLock<Needles>, E>,
    ) -> Result<Pattern, E> {
        static INTERNED: OnceLock<Mutex<HashMap<Arc<str>, Pattern>>> = OnceLock::new();
        let interned = INTERNED.get_or_init(Default::default);
        let mut map = interned.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(p) = map.get(source) {
            return Ok(p.clone());
        }
        let needles = needles(source)?;
        let source: Arc<str> = source.into();
        let p = Pattern(Arc::new(PatternInner {
            source: source.clone(),
            needles,
            program: OnceLock::new(),
        }));
        map.insert(source, p.clone());
        Ok(p)
    }

    pub fn source(&self) -> &str {
        &self.0.source
    }

    /// Whether the pattern matches somewhere in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        match self.needles().check(text) {
            needles::Verdict::Absent => false,
            needles::Verdict::Matched => true,
            needles::Verdict::Search => self.search(text),
        }
    }

    fn needles(&self) -> &Needles {
        self.0.needles.get_or_init(|| {
            // Unchecked and invalid: no needles, and compiling will fail.
            parse(&self.0.source).map_or_else(|_| Needles::default(), |hir| needles::of(&hir))
        })
    }

    /// Where the named group `group` is in the first match in `text` (a
    /// dialog's subject). Compiled apart, with its groups, on first use:
    /// only the few subject patterns ever are.
    pub fn capture(&self, text: &str, group: &str) -> Option<std::ops::Range<usize>> {
        if self.needles().check(text) == needles::Verdict::Absent {
            return None;
        }
        let hir = parse(&self.0.source).ok()?;
        let config = thompson::Config::new()
            .which_captures(WhichCaptures::All)
            .nfa_size_limit(Some(SIZE_LIMIT));
        let nfa = thompson::Compiler::new()
            .configure(config)
            .build_from_hir(&hir)
            .ok()?;
        let vm = PikeVM::new_from_nfa(nfa).ok()?;
        let mut cache = vm.create_cache();
        let mut caps = vm.create_captures();
        vm.captures(&mut cache, text, &mut caps);
        caps.get_group_by_name(group).map(|span| span.range())
    }

    /// The regex search alone, needles aside (tests compare the two).
    fn search(&self, text: &str) -> bool {
        let vm = self.0.program.get_or_init(|| {
            // Checked when loaded (or by the tests); compiling can still
            // exceed the size limit. Such a rule then never matches.
            compile(&self.0.source).unwrap_or_else(|e| {
                tracing::warn!("rule pattern {:?} does not compile: {e}", self.0.source);
                never()
            })
        });
        SCRATCH.with_borrow_mut(|scratch| {
            let cache = scratch.get_or_insert_with(|| vm.create_cache());
            // Sizes the space for this pattern: nothing to do when the
            // last search was of the same one.
            vm.reset_cache(cache);
            vm.is_match(cache, text)
        })
    }
}

/// The one parser configuration: checking, needles and compiling must see
/// the same expression.
fn parse(source: &str) -> Result<Hir, String> {
    regex_syntax::ParserBuilder::new()
        .build()
        .parse(source)
        .map_err(|e| e.to_string())
}

fn compile(source: &str) -> Result<PikeVM, String> {
    let hir = parse(source)?;
    let config = thompson::Config::new()
        .which_captures(WhichCaptures::None)
        .nfa_size_limit(Some(SIZE_LIMIT));
    let nfa = thompson::Compiler::new()
        .configure(config)
        .build_from_hir(&hir)
        .map_err(|e| e.to_string())?;
    PikeVM::new_from_nfa(nfa).map_err(|e| e.to_string())
}

/// A program that matches nothing.
fn never() -> PikeVM {
    PikeVM::new_from_nfa(NFA::never_match()).expect("the empty NFA is valid")
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pattern({:?})", self.0.source)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::detect::rules::{RuleSet, builtin};

    fn pattern(source: &str) -> Pattern {
        Pattern::checked(source).expect("a valid pattern")
    }

    #[test]
    fn unicode_classes_keep_their_unicode_meaning() {
        // A no-break space is a space to `\s`, `é` a word character to `\b`.
        assert!(pattern(r"^❯\s\S").is_match("❯\u{a0}x"));
        assert!(!pattern(r"\btrust\b").is_match("trusté"));
        assert!(pattern(r"(?i)^proceed\?$").is_match("PROCEED?"));
        assert!(pattern(r"^\d+\.").is_match("٣."));
    }

    #[test]
    fn a_row_without_the_needle_is_not_searched_and_nothing_compiles() {
        let p = pattern(r"^Aider v\d+ \(needle test\)");
        assert!(!p.is_match("Lorem ipsum dolor sit amet"));
        assert!(p.0.program.get().is_none());
        assert!(p.is_match("Aider v12 (needle test)"));
        assert!(p.0.program.get().is_some());
    }

    #[test]
    fn plain_text_is_found_without_compiling() {
        let p = pattern(r"Type your message \(plain text test\)|or this");
        assert!(p.is_match("> Type your message (plain text test) here"));
        assert!(p.is_match("either or this"));
        assert!(!p.is_match("Type your message"));
        assert!(p.0.program.get().is_none());
    }

    #[test]
    fn an_unchecked_pattern_is_parsed_when_first_matched() {
        let p = Pattern::unchecked(r"^unchecked \d test");
        assert!(p.0.needles.get().is_none());
        assert!(p.is_match("unchecked 1 test"));
        assert!(p.0.needles.get().is_some());
        // A broken one (which the built-in tests rule out) matches nothing.
        assert!(!Pattern::unchecked(r"(unchecked").is_match("(unchecked"));
    }

    #[test]
    fn a_pattern_over_the_size_limit_is_refused_when_checked() {
        let err = Pattern::checked(r"a{1000}{1000}").unwrap_err();
        assert!(err.contains("too big to compile"), "{err}");
        // Unchecked (the built-in rules, which the tests check), it
        // matches nothing.
        let p = Pattern::unchecked(r"\w{1000}{1000}");
        assert!(!p.is_match(&"a".repeat(2000)));
    }

    #[test]
    fn the_same_text_is_one_pattern() {
        let a = pattern(r"^same pattern test$");
        let b = pattern(r"^same pattern test$");
        assert!(Arc::ptr_eq(&a.0, &b.0));
    }

    /// Every pattern of a rule set, once each.
    fn patterns(set: &RuleSet) -> Vec<Pattern> {
        let mut all: Vec<Pattern> = Vec::new();
        for a in &set.agents {
            all.extend(a.identify_title.iter().cloned());
            all.extend(a.identify_screen.iter().cloned());
            if let Some(input) = &a.input {
                all.extend([input.prompt.clone(), input.below.clone()]);
                all.extend(input.above.clone());
            }
            for c in a.rules.iter().flat_map(|r| &r.conditions) {
                all.extend(c.all.iter().chain(&c.any).chain(&c.none).cloned());
            }
            all.extend(a.titles.iter().map(|t| t.pattern.clone()));
        }
        all.sort_by(|a, b| a.source().cmp(b.source()));
        all.dedup_by(|a, b| Arc::ptr_eq(&a.0, &b.0));
        all
    }

    /// Pieces of rows: every built-in needle, and the spaces, digits,
    /// glyphs and words the patterns around them look for.
    fn pieces() -> Vec<String> {
        let mut pieces: Vec<String> = patterns(&builtin())
            .iter()
            .flat_map(|p| p.needles().samples())
            .collect();
        pieces.extend(
            [
                " ", "  ", "\u{a0}", "\t", "1. ", "12", "٣", "❯ ", "› ", "> ", "? ", "?", "…",
                "$ ", "% ", "a", "é", "Yes", "yes", "[Yes]: ", ":", "│", "●", "─", "(", ")", "s",
                "esc",
            ]
            .map(str::to_owned),
        );
        pieces
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// The needles only ever spare a search that would have failed:
        /// with them or without, every built-in pattern says the same of
        /// any row.
        #[test]
        fn needles_never_change_what_matches(
            picks in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
        ) {
            let pieces = pieces();
            let row: String = picks.iter().map(|i| i.get(&pieces).as_str()).collect();
            for p in patterns(&builtin()) {
                prop_assert_eq!(p.is_match(&row), p.search(&row), "{:?} on {:?}", p, row);
            }
        }
    }
}
