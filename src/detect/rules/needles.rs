//! The texts a pattern's every match contains ([`Needles`]), found in its
//! parsed form.
//!
//! Most rows of a screen cannot match most patterns: `^Aider v\d` needs
//! `Aider v` on the row, `(?i)password` a `password` in any case. Looking
//! for that text is far cheaper than running the pattern, and a pattern
//! whose needles are on no row is never compiled at all, which is what
//! keeps a supervisor's memory down (see `pattern`). The needles must
//! never turn a match into a miss: they are taken only from parts every
//! match goes through, and when no such text is known there are none and
//! every row is searched.

use std::cmp::Reverse;

use regex_syntax::hir::{Class, Hir, HirKind};

/// The most texts kept for one pattern: past that, looking for them all
/// costs about what the search would.
const MAX_TEXTS: usize = 8;

/// The most characters one position of a text may allow: enough for a
/// letter in all its cases under `(?i)` (`k`, `K` and the Kelvin sign) or a
/// small class (`[yY]`, `[smh]`).
const CHOICES: usize = 4;

/// What the needles say about a text, before any search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// None of the texts is there: no match.
    Absent,
    /// The pattern is nothing but its texts, and one is there: a match.
    Matched,
    /// The pattern must be searched to know.
    Search,
}

/// Texts of which every match of a pattern contains at least one (no
/// texts: nothing is known).
#[derive(Debug, Default)]
pub struct Needles {
    texts: Box<[Needle]>,
    /// The pattern matches exactly where one of the texts occurs (it is a
    /// plain text, or a choice of plain texts).
    exact: bool,
}

/// One text a match may contain.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Needle {
    /// These characters, as they are.
    Plain(Box<str>),
    /// One of a few characters at each position (`(?i)yes`, `[yY]/[nN]`);
    /// a position with fewer than [`CHOICES`] repeats its first one.
    Choices(Box<[[char; CHOICES]]>),
}

impl Needles {
    pub fn check(&self, text: &str) -> Verdict {
        if self.texts.is_empty() {
            Verdict::Search
        } else if !self.texts.iter().any(|n| n.is_in(text)) {
            Verdict::Absent
        } else if self.exact {
            Verdict::Matched
        } else {
            Verdict::Search
        }
    }

    /// The texts, for tests: choices as `[abc]`.
    #[cfg(test)]
    pub fn texts(&self) -> Vec<String> {
        self.texts.iter().map(Needle::to_string).collect()
    }

    /// Rows each needle is in, for tests: each position's first choice,
    /// then each one's second, and so on.
    #[cfg(test)]
    pub fn samples(&self) -> Vec<String> {
        let mut out = Vec::new();
        for needle in &self.texts {
            match needle {
                Needle::Plain(plain) => out.push(plain.to_string()),
                Needle::Choices(positions) => {
                    for k in 0..CHOICES {
                        out.push(positions.iter().map(|c| c[k]).collect());
                    }
                }
            }
        }
        out
    }
}

impl Needle {
    fn is_in(&self, text: &str) -> bool {
        match self {
            Needle::Plain(plain) => text.contains(&**plain),
            Needle::Choices(positions) => {
                let Some((first, rest)) = positions.split_first() else {
                    return true;
                };
                text.char_indices().any(|(at, c)| {
                    let mut after = text[at + c.len_utf8()..].chars();
                    first.contains(&c)
                        && rest
                            .iter()
                            .all(|choice| after.next().is_some_and(|c| choice.contains(&c)))
                })
            }
        }
    }

    /// How many characters it is long: longer texts let fewer rows
    /// through.
    fn len(&self) -> usize {
        match self {
            Needle::Plain(plain) => plain.chars().count(),
            Needle::Choices(positions) => positions.len(),
        }
    }

    /// The text with its positions' choices (each sorted, no repeats).
    fn from_positions(positions: &[Vec<char>]) -> Needle {
        if positions.iter().all(|choice| choice.len() == 1) {
            return Needle::Plain(positions.iter().map(|choice| choice[0]).collect());
        }
        let padded = positions
            .iter()
            .map(|choice| std::array::from_fn(|i| choice.get(i).copied().unwrap_or(choice[0])))
            .collect();
        Needle::Choices(padded)
    }
}

#[cfg(test)]
impl std::fmt::Display for Needle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Needle::Plain(plain) => f.write_str(plain),
            Needle::Choices(positions) => {
                for choice in positions {
                    let mut chars = choice.to_vec();
                    chars.sort_unstable();
                    chars.dedup();
                    match chars.as_slice() {
                        [one] => write!(f, "{one}")?,
                        many => write!(f, "[{}]", many.iter().collect::<String>())?,
                    }
                }
                Ok(())
            }
        }
    }
}

/// The needles of a parsed pattern.
pub fn of(hir: &Hir) -> Needles {
    match required(hir) {
        Some(texts) => Needles {
            texts: texts.into_boxed_slice(),
            exact: is_plain(hir),
        },
        None => Needles::default(),
    }
}

/// Texts of which every match of `hir` contains one, if there is a short
/// list of them.
fn required(hir: &Hir) -> Option<Vec<Needle>> {
    match hir.kind() {
        HirKind::Literal(_) | HirKind::Class(_) => {
            let positions = positions(hir)?;
            Some(vec![Needle::from_positions(&positions)])
        }
        HirKind::Capture(cap) => required(&cap.sub),
        HirKind::Repetition(rep) if rep.min > 0 => required(&rep.sub),
        HirKind::Concat(parts) => best_of_sequence(parts),
        // A match goes through one branch: each branch must name texts.
        HirKind::Alternation(branches) => {
            let mut all = Vec::new();
            for branch in branches {
                all.extend(required(branch)?);
            }
            let all = simplify(all);
            (all.len() <= MAX_TEXTS).then_some(all)
        }
        HirKind::Empty | HirKind::Look(_) | HirKind::Repetition(_) => None,
    }
}

/// The best needles of a sequence, every part of which is in every match:
/// a run of adjacent literals and small classes is one text (zero-width
/// parts such as `\b` do not break it), and any other part may name texts
/// of its own.
fn best_of_sequence(parts: &[Hir]) -> Option<Vec<Needle>> {
    let mut candidates: Vec<Vec<Needle>> = Vec::new();
    let mut run: Vec<Vec<char>> = Vec::new();
    for part in parts {
        if let Some(positions) = positions(part) {
            run.extend(positions);
            continue;
        }
        if matches!(part.kind(), HirKind::Look(_) | HirKind::Empty) {
            continue;
        }
        if !run.is_empty() {
            candidates.push(vec![Needle::from_positions(&run)]);
            run.clear();
        }
        candidates.extend(required(part));
    }
    if !run.is_empty() {
        candidates.push(vec![Needle::from_positions(&run)]);
    }
    candidates.into_iter().max_by_key(|texts| strength(texts))
}

/// The characters each position of a literal or small class allows, or
/// `None` for any other part.
fn positions(hir: &Hir) -> Option<Vec<Vec<char>>> {
    match hir.kind() {
        // A literal holds whole characters: the parser refuses patterns
        // that could match invalid UTF-8.
        HirKind::Literal(lit) => {
            let text = std::str::from_utf8(&lit.0).ok()?;
            Some(text.chars().map(|c| vec![c]).collect())
        }
        HirKind::Class(Class::Unicode(class)) => {
            let mut choice = Vec::new();
            for range in class.iter() {
                choice.extend(range.start()..=range.end());
                if choice.len() > CHOICES {
                    return None;
                }
            }
            Some(vec![choice])
        }
        _ => None,
    }
}

/// Whether `hir` is plain text or a choice of plain texts, so that finding
/// one of its texts is finding a match.
fn is_plain(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Literal(_) => true,
        HirKind::Capture(cap) => is_plain(&cap.sub),
        HirKind::Alternation(branches) => branches.iter().all(is_plain),
        _ => false,
    }
}

/// A list of texts lets through every row with its shortest one, so that
/// one decides how selective it is; fewer texts are cheaper to look for.
fn strength(texts: &[Needle]) -> (usize, Reverse<usize>) {
    let shortest = texts.iter().map(Needle::len).min().unwrap_or(0);
    (shortest, Reverse(texts.len()))
}

/// Drops repeats, and a plain text that contains another: a row with it
/// has the other too, so it lets nothing more through.
fn simplify(mut texts: Vec<Needle>) -> Vec<Needle> {
    texts.sort_by_key(Needle::len);
    let mut kept: Vec<Needle> = Vec::new();
    for t in texts {
        let covered = kept.iter().any(|k| match (k, &t) {
            (Needle::Plain(k), Needle::Plain(t)) => t.contains(&**k),
            (k, t) => k == t,
        });
        if !covered {
            kept.push(t);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needles(pattern: &str) -> Needles {
        of(&regex_syntax::Parser::new().parse(pattern).unwrap())
    }

    fn texts(pattern: &str) -> Vec<String> {
        needles(pattern).texts()
    }

    #[test]
    fn the_longest_text_a_sequence_needs_is_its_needle() {
        assert_eq!(
            texts(r"^\s*(?:Welcome to )?Claude Code v\d"),
            ["Claude Code v"]
        );
        assert_eq!(texts(r"^Model: \S+ with \S+ edit format"), [" edit format"]);
        assert_eq!(texts(r"^❯(?:\s|$)"), ["❯"]);
        assert_eq!(texts(r"\?\s*$"), ["?"]);
        assert_eq!(texts(r"(?:ab)+c?"), ["ab"]);
    }

    #[test]
    fn small_classes_and_zero_width_parts_stay_in_the_text() {
        assert_eq!(texts(r"\[[yY]/[nN]\]"), ["[[Yy]/[Nn]]"]);
        assert_eq!(texts(r"(?i)\bask\b"), ["[Aa][Ss\u{17f}][Kk\u{212a}]"]);
        assert_eq!(texts(r"^\d+[smh] left"), ["[hms] left"]);
        assert_eq!(texts(r"x[a-z]yz"), ["yz"]);
    }

    #[test]
    fn every_branch_of_a_choice_gives_a_text() {
        assert_eq!(
            texts(r"^(?:>>>|\.\.\.|In \[\d+\]:)\s"),
            [">>>", "...", "In ["]
        );
        assert_eq!(texts(r"x(?:Yes|Yes, always)"), ["Yes"]);
        assert_eq!(
            texts(r"(?i)pin|ask"),
            ["[Pp][Ii][Nn]", "[Aa][Ss\u{17f}][Kk\u{212a}]"]
        );
        assert!(texts(r"(?:Yes|\d)").is_empty());
        assert!(texts(r"ab|cd|ef|gh|ij|kl|mn|op|qr").is_empty());
    }

    #[test]
    fn optional_parts_and_large_classes_give_no_text() {
        assert!(texts(r"(?:Welcome)?\d").is_empty());
        assert!(texts(r"(?:Welcome)*").is_empty());
        assert!(texts(r"[a-z]+").is_empty());
        assert!(texts(r"^$").is_empty());
    }

    #[test]
    fn only_plain_text_is_an_exact_needle() {
        assert!(needles(r"Choose the text style").exact);
        assert!(needles(r"esc to interrupt\)|■⬝").exact);
        assert!(!needles(r"^Choose the text style").exact);
        assert!(!needles(r"\bChoose").exact);
        assert!(!needles(r"(?i)choose").exact);
    }

    #[test]
    fn the_check_says_absent_matched_or_search() {
        let plain = needles("Type your message");
        assert_eq!(plain.check("> Type your message"), Verdict::Matched);
        assert_eq!(plain.check("> Type your"), Verdict::Absent);
        let anchored = needles(r"^Aider v\d");
        assert_eq!(anchored.check("Aider v0"), Verdict::Search);
        assert_eq!(anchored.check("Lorem ipsum"), Verdict::Absent);
        let blind = needles(r"(?i)password:");
        assert_eq!(blind.check("PassWord:"), Verdict::Search);
        assert_eq!(blind.check("pa\u{17f}\u{17f}word:"), Verdict::Search);
        assert_eq!(blind.check("passwor d:"), Verdict::Absent);
        assert_eq!(needles(r"^$").check("anything"), Verdict::Search);
    }
}
