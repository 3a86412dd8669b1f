//! Which of a session's lines `hm logs` prints, and how: those a regex
//! matches, with their context, as grep prints them (`--` between groups
//! that do not touch); the last N; each whole or folded at a width. Pure:
//! lines in, lines out, one at a time, so that following a session
//! selects as it goes.

use std::collections::VecDeque;

use crate::detect::rules::Pattern;
use crate::vt::lines;

/// Why `source` is no regex, on one line and in the user's own terms
/// (the parser's message draws the pattern and a caret on lines of their
/// own, and would show the case folding wrapped around it).
fn why_no_regex(source: &str) -> Option<String> {
    let (kind, span) = match regex_syntax::Parser::new().parse(source) {
        Ok(_) => return None,
        Err(regex_syntax::Error::Parse(e)) => (e.kind().to_string(), *e.span()),
        Err(regex_syntax::Error::Translate(e)) => (e.kind().to_string(), *e.span()),
        Err(e) => return Some(e.to_string().replace('\n', " ")),
    };
    Some(format!("{kind} at character {}", span.start.column))
}

/// What is printed: a line, or grep's `--` between groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Out {
    Line(String),
    Gap,
}

/// Lines matching a regex, with `context` lines before and after each.
#[derive(Debug)]
pub struct Grep {
    pattern: Pattern,
    context: usize,
    /// Context was asked for (`-C`, even 0): groups are set apart by `--`.
    gaps: bool,
    /// Lines seen that were not printed, the newest last (at most
    /// `context`): the context before the next match.
    before: VecDeque<(u64, String)>,
    /// Lines still to print after the last match.
    after: usize,
    /// The number of the next line, and of the last line printed.
    next: u64,
    last: Option<u64>,
}

impl Grep {
    /// `source` as a regex (smart case: without capitals it matches either
    /// case), with `context` lines around each match; an error says why
    /// it is not one.
    pub fn new(source: &str, context: Option<usize>) -> Result<Grep, String> {
        if let Some(why) = why_no_regex(source) {
            return Err(why);
        }
        let folded;
        let source = if has_capitals(source) {
            source
        } else {
            folded = format!("(?i:{source})");
            &folded
        };
        Ok(Grep {
            pattern: Pattern::checked(source)?,
            context: context.unwrap_or(0),
            gaps: context.is_some(),
            before: VecDeque::new(),
            after: 0,
            next: 0,
            last: None,
        })
    }

    /// The next line: what to print because of it.
    pub fn line(&mut self, text: String, out: &mut Vec<Out>) {
        let n = self.next;
        self.next += 1;
        if self.pattern.is_match(&text) {
            let first = self.before.front().map_or(n, |(m, _)| *m);
            if self.gaps && self.last.is_some_and(|l| l + 1 < first) {
                out.push(Out::Gap);
            }
            out.extend(self.before.drain(..).map(|(_, t)| Out::Line(t)));
            out.push(Out::Line(text));
            self.last = Some(n);
            self.after = self.context;
        } else if self.after > 0 {
            self.after -= 1;
            out.push(Out::Line(text));
            self.last = Some(n);
        } else if self.context > 0 {
            if self.before.len() == self.context {
                self.before.pop_front();
            }
            self.before.push_back((n, text));
        }
    }
}

/// Whether a regex has a capital letter of its own (not one that names
/// an escape, as `\S` or `\W` do).
fn has_capitals(source: &str) -> bool {
    let mut escaped = false;
    for c in source.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        if c == '\\' {
            escaped = true;
        } else if c.is_uppercase() {
            return true;
        }
    }
    false
}

/// The last `n` of `out` (a group's `--` at the start dropped).
pub fn last(mut out: Vec<Out>, n: Option<usize>) -> Vec<Out> {
    if let Some(n) = n {
        let skip = out.len().saturating_sub(n);
        out.drain(..skip);
        if out.first() == Some(&Out::Gap) {
            out.remove(0);
        }
    }
    out
}

/// The text printed for `out`: whole lines, or rows of at most `width`
/// columns.
pub fn rendered(out: &Out, width: Option<u16>) -> Vec<String> {
    match (out, width) {
        (Out::Gap, _) => vec!["--".to_owned()],
        (Out::Line(t), None) => vec![t.clone()],
        (Out::Line(t), Some(w)) => lines::fold(t, w),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grep(pattern: &str, context: Option<usize>, lines: &[&str]) -> Vec<String> {
        let mut g = Grep::new(pattern, context).expect("a regex");
        let mut out = Vec::new();
        for l in lines {
            g.line((*l).to_owned(), &mut out);
        }
        out.iter().flat_map(|o| rendered(o, None)).collect()
    }

    #[test]
    fn a_pattern_that_is_no_regex_says_why_on_one_line() {
        let why = |p: &str| Grep::new(p, None).expect_err("no regex");
        assert_eq!(why("("), "unclosed group at character 1");
        assert_eq!(why("ab)"), "unopened group at character 3");
        assert!(!why("x{2,1}").contains('\n'), "{}", why("x{2,1}"));
        // Folded or not, the same regexes are fine.
        assert!(Grep::new("Error: (a|b)", None).is_ok());
    }

    #[test]
    fn matches_come_with_their_context_and_groups_apart_are_marked() {
        let lines = ["a", "b", "ERROR one", "c", "d", "e", "f", "error two", "g"];
        assert_eq!(
            grep("error", Some(1), &lines),
            ["b", "ERROR one", "c", "--", "f", "error two", "g"]
        );
        // Groups that touch are one.
        assert_eq!(
            grep("error", Some(3), &lines),
            ["a", "b", "ERROR one", "c", "d", "e", "f", "error two", "g"]
        );
        // Capitals: exact case.
        assert_eq!(grep("ERROR", None, &lines), ["ERROR one"]);
        // An escape's capital is no capital of the text.
        assert_eq!(grep(r"error\S", None, &lines), Vec::<String>::new());
        assert_eq!(grep(r"error\s", None, &lines), ["ERROR one", "error two"]);
        // -C 0 sets groups apart, as grep does.
        assert_eq!(
            grep("error", Some(0), &lines),
            ["ERROR one", "--", "error two"]
        );
        assert!(Grep::new("(", None).is_err());
    }

    #[test]
    fn the_last_lines_and_folding() {
        let out = vec![
            Out::Line("a".into()),
            Out::Gap,
            Out::Line("b".into()),
            Out::Line("c".into()),
        ];
        assert_eq!(
            last(out.clone(), Some(3)),
            [Out::Line("b".into()), Out::Line("c".into())]
        );
        assert_eq!(last(out, None).len(), 4);
        assert_eq!(
            rendered(&Out::Line("abcdefg".into()), Some(3)),
            ["abc", "def", "g"]
        );
    }
}
