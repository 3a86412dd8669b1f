//! The dialog on a session's screen, as answering it for a person sees it:
//! which screen rule recognises it, what it asks about (its subject: the
//! command to run, the file to edit, the folder to trust), its rows and a
//! fingerprint of them, and the keys that approve or deny it (or approve it
//! with its own option not to be asked again).
//!
//! A dialog is only ever found where the verdict already says so: the
//! verdict is `waiting` with a detail, and the screen, read again now,
//! shows a rule of that same detail. So it inherits everything that keeps
//! typed or quoted text from being a dialog (the input box is masked, the
//! cursor row must end in the question), and `unknown` is never a dialog.
//! Nothing here sends a key or reads the clock; the supervisor does, with
//! what [`Detector::dialog`] and [`Dialog::keys_for`] return.

use std::hash::{Hash, Hasher};

use unicode_width::UnicodeWidthStr;

use super::Detector;
use super::rules::{ActionRule, AgentRules, Answer, Condition, Key, Pattern, RuleSet, ScreenRule};
use super::screen::{self, Snapshot};
use crate::verdict::{Detail, Primary, Verdict};

/// The longest subject kept, in characters.
const SUBJECT_MAX: usize = 240;
/// A dialog's rows are kept this long at most, in characters each.
const ROW_MAX: usize = 200;

/// A dialog on the screen now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dialog {
    /// The screen rule that recognises it (`codex.permission`).
    pub rule: String,
    /// The agent whose rules those are (`*` for the common ones).
    pub owner: String,
    pub detail: Detail,
    /// What it asks about, when its rule says how to find it.
    pub subject: Option<String>,
    /// Its rows, from the one its rule's first pattern matched down to the
    /// end of the rule's region.
    pub rows: Vec<String>,
    /// Where those rows are on the screen: the first and the last one's
    /// row numbers (from 0 at the top), so a view can show the dialog.
    pub screen_rows: Option<(u16, u16)>,
    /// A digest of rule, subject and rows: the same dialog, unchanged.
    pub fingerprint: String,
    /// Whether the program asked for application cursor keys (arrows are
    /// then sent as `ESC O A`).
    pub app_cursor: bool,
    /// Its numbered options (`❯ 1. Hello, world`), in order from 1: what
    /// [`Answer::Choose`] picks.
    pub options: Vec<(u8, String)>,
}

/// Why a dialog cannot be given an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unanswerable {
    #[error("{} know no keys that {} '{rule}'", whose_rules(agent), answer.verb())]
    NoKeys {
        agent: String,
        rule: String,
        answer: Answer,
    },
    #[error("{}", not_as_expected(*answer, pattern))]
    NotAsExpected { answer: Answer, pattern: String },
    #[error("{}", no_option(*number, *count))]
    NoOption { number: u8, count: usize },
}

fn no_option(number: u8, count: usize) -> String {
    match count {
        0 => format!("the dialog numbers no options, so there is no option {number} to choose"),
        1 => format!("the dialog has no option {number}: only option 1"),
        n => format!("the dialog has no option {number}: its options are 1 to {n}"),
    }
}

fn not_as_expected(answer: Answer, pattern: &str) -> String {
    match answer {
        // Most dialogs have no such option: said as what the person
        // would look for on the screen, not as the pattern that looked.
        Answer::Always => {
            "the dialog has no option not to be asked again (approving answers it this once)"
                .to_owned()
        }
        // Said as the person sees it: the pattern that looked (a regex)
        // is in the error for the log, not in its words.
        Answer::Choose(_) => {
            let _ = pattern;
            "hm does not find the options it would choose among (the program's wording may be \
             newer than hm's rules): answer it in the session"
                .to_owned()
        }
        Answer::Approve => "hm does not find the option that would approve it (the program's \
             wording may be newer than hm's rules): choose it by its number ('hm choose'), or \
             answer it in the session"
            .to_owned(),
        a => format!(
            "hm does not find the keys that would {} it (the program's wording may be newer \
             than hm's rules): answer it in the session",
            a.verb()
        ),
    }
}

/// `codex's rules`; the rules every agent shares (owner `*`) by that name.
fn whose_rules(agent: &str) -> String {
    match agent {
        "*" => "the rules common to every program".to_owned(),
        a => format!("{a}'s rules"),
    }
}

impl Dialog {
    /// The keys that give `answer` to this dialog now: the first action of
    /// its rule's agent for that answer whose required rows are all among
    /// the dialog's rows (for a choice, of any option: [`ActionRule::given`]
    /// makes its keys the option's; the option must be one the dialog
    /// shows).
    pub fn keys_for<'r>(
        &self,
        rules: &'r RuleSet,
        answer: Answer,
    ) -> Result<&'r ActionRule, Unanswerable> {
        let candidates: Vec<&ActionRule> = rules
            .agent(&self.owner)
            .map(|a| {
                a.actions
                    .iter()
                    .filter(|x| x.rule == self.rule && x.answer.name() == answer.name())
                    .collect()
            })
            .unwrap_or_default();
        let Some(first) = candidates.first() else {
            return Err(Unanswerable::NoKeys {
                agent: self.owner.clone(),
                rule: self.rule.clone(),
                answer,
            });
        };
        if let Answer::Choose(number) = answer
            && !self.options.iter().any(|(n, _)| *n == number)
        {
            return Err(Unanswerable::NoOption {
                number,
                count: self.options.len(),
            });
        }
        let missing = |x: &ActionRule| {
            x.requires
                .iter()
                .find(|re| !self.rows.iter().any(|r| re.is_match(r)))
                .map(|re| re.source().to_owned())
        };
        candidates
            .iter()
            .find(|x| missing(x).is_none())
            .copied()
            .ok_or_else(|| Unanswerable::NotAsExpected {
                answer,
                pattern: missing(first).unwrap_or_default(),
            })
    }

    /// The answers this dialog's agent knows keys for (whether or not the
    /// dialog is as those keys expect just now); `always` only where the
    /// dialog shows the option it takes: most of an agent's dialogs of a
    /// rule have none (Claude Code's `1. Yes` / `2. No` for a command it
    /// will not stop asking about), and a key offered there would only be
    /// refused. A choice (`Answer::Choose(0)`: of any of its options) where
    /// the dialog numbers options and its agent's rules know the keys.
    pub fn answers(&self, rules: &RuleSet) -> Vec<Answer> {
        let mut answers: Vec<Answer> = Answer::ALL
            .into_iter()
            .filter(|&a| match self.keys_for(rules, a) {
                Err(Unanswerable::NoKeys { .. } | Unanswerable::NoOption { .. }) => false,
                Err(Unanswerable::NotAsExpected { .. }) => a != Answer::Always,
                Ok(_) => true,
            })
            .collect();
        if let Some((first, _)) = self.options.first()
            && !matches!(
                self.keys_for(rules, Answer::Choose(*first)),
                Err(Unanswerable::NoKeys { .. })
            )
        {
            answers.push(Answer::Choose(0));
        }
        answers
    }
}

/// The bytes of each of `keys` in this cursor key mode.
pub fn key_bytes(keys: &[Key], app_cursor: bool) -> Vec<Vec<u8>> {
    keys.iter().map(|k| k.bytes(app_cursor)).collect()
}

impl Detector {
    /// The dialog on `screen`, if `verdict` (taken just now, on this
    /// screen) says the session waits at one and the screen, read again,
    /// shows a dialog rule of the same detail.
    pub fn dialog(&self, screen: &vt100::Screen, verdict: &Verdict) -> Option<Dialog> {
        if verdict.primary != Primary::Waiting {
            return None;
        }
        find(&self.rules, self.agent_name(), screen, verdict.detail?)
    }

    /// Whether the region of screen rule `rule` shows rows matching each
    /// of `requires` (what the next step of an answer waits for).
    pub fn shows(&self, screen: &vt100::Screen, rule: &str, requires: &[Pattern]) -> bool {
        shows(&self.rules, self.agent_name(), screen, rule, requires)
    }

    /// Whether screen rule `rule` reads its question on the cursor's row
    /// (see [`on_cursor_line`]).
    pub fn on_cursor_line(&self, rule: &str) -> bool {
        on_cursor_line(&self.rules, rule)
    }
}

/// Whether screen rule `rule` of `rules` reads its question on the
/// cursor's row, as a plain program's `Continue? [y/N]`: the program has
/// gone on from it once the cursor leaves that row.
pub fn on_cursor_line(rules: &RuleSet, rule: &str) -> bool {
    owner_of(rules, rule)
        .and_then(|(_, r)| r.conditions.first())
        .is_some_and(|c| c.region == super::rules::Region::CursorLine)
}

/// The dialog of `detail` on `screen`, read with `rules` as `agent`'s (or
/// with the generic rules alone, as for a plain program that the process
/// says is asking: a `Continue? [y/N]`).
pub fn find(
    rules: &RuleSet,
    agent: Option<&str>,
    screen: &vt100::Screen,
    detail: Detail,
) -> Option<Dialog> {
    let snap = Snapshot::of(screen);
    let agent = agent.and_then(|n| rules.agent(n));
    let found = screen::evaluate(&snap, rules, agent)?;
    if found.primary != Primary::Waiting || found.detail != Some(detail) {
        return None;
    }
    let (owner, rule) = owner_of(rules, &found.rule)?;
    let input = screen::input_box(&snap, agent, owner);
    let (rows, screen_rows) = dialog_rows(&snap, rule, input);
    let subject = rule
        .subject
        .as_ref()
        .and_then(|s| subject_of(&snap, s, input));
    let mut hasher = std::hash::DefaultHasher::new();
    (&rule.name, &subject, &rows).hash(&mut hasher);
    let options = options_of(&rejoined(rows.clone(), snap.cols));
    Some(Dialog {
        rule: rule.name.clone(),
        owner: owner.name.clone(),
        detail,
        subject,
        rows,
        screen_rows,
        fingerprint: format!("{:016x}", hasher.finish()),
        app_cursor: screen.application_cursor(),
        options,
    })
}

/// The rows with each line the program wrapped at the screen's edge
/// (`cols`) made one again: a row indented deeper than the one above,
/// whose first word would not have fitted at the end of it, goes on from
/// it. Claude Code wraps a long option under itself at 80 columns: its
/// label was cut at the wrap, and the inbox, wrapping each row again at
/// its own width, left a word of the first on a row alone.
pub fn rejoined(rows: Vec<String>, cols: usize) -> Vec<String> {
    let indent = |r: &str| r.len() - r.trim_start_matches(' ').len();
    let mut out: Vec<String> = Vec::with_capacity(rows.len());
    // The width of the screen row that `out`'s last line ends with: a
    // line made of two is wider than the screen, and the rows under it
    // went on from it too (Codex's whole dialog one paragraph after a
    // long command).
    let mut last_width = 0;
    for row in rows {
        // Text goes on from text only: a rule the width of the screen
        // (`────`, between Claude Code's third option and its fourth)
        // took the option under it as its own rest.
        // Nor is an option the rest of the row above it, whatever its
        // length (a question's last row may reach the edge).
        // At the same depth, only a sentence going on: the row above
        // ends in a word or a comma, and this one starts with a word
        // (Claude Code's folder-trust paragraph, wrapped at 80; not a
        // diff's next numbered line, nor a row after a `:` or a `.`).
        if let Some(prev) = out.last_mut()
            && (indent(&row) > indent(prev) || sentence_goes_on(prev, &row))
            && prev.chars().any(char::is_alphanumeric)
            && !numbered(&row)
        {
            // In columns, as the screen's edge is: a wide character
            // (CJK, most emoji) takes two.
            let word = row.split_whitespace().next().unwrap_or("");
            if last_width + 1 + word.width() > cols {
                prev.push(' ');
                prev.push_str(row.trim());
                last_width = row.width();
                continue;
            }
        }
        last_width = row.width();
        out.push(row);
    }
    out
}

/// Whether `row`, as deep as `prev`, reads as the rest of its sentence:
/// `prev` ends in a word or a comma, `row` begins with a letter or an
/// opening bracket.
fn sentence_goes_on(prev: &str, row: &str) -> bool {
    let ends = prev
        .trim_end()
        .chars()
        .last()
        .is_some_and(|c| c.is_alphabetic() || c == ',');
    let begins = row
        .trim_start()
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '(');
    ends && begins
}

/// `row` inside a box's left side, and what follows the selection
/// marker in it (`❯`, `›`, `>`, `●`): where an option's number would be.
fn marked(row: &str) -> (&str, &str) {
    let trimmed = row.trim_start();
    let inside = trimmed.strip_prefix('│').unwrap_or(trimmed).trim_start();
    let rest = inside.trim_start_matches(['❯', '›', '>', '●']).trim_start();
    (inside, rest)
}

/// Whether `row` starts with an option's number (`❯ 2. `, `│ ● 1. `).
fn numbered(row: &str) -> bool {
    let mut rest = marked(row).1.chars();
    rest.next().is_some_and(|c| c.is_ascii_digit()) && rest.next() == Some('.')
}

/// The options a dialog numbers, `1. Hello, world` (`❯` before the
/// selected one; `›` in Codex; `●` in Gemini CLI, whose dialogs are boxed:
/// `│ ● 1. Allow once   │`), in order from 1 with their digits in one
/// column: a numbered row indented otherwise (`     2. Print it`, a
/// description under an option) or out of that order (a plan's steps
/// quoted) is not one. Of several such lists (the question's text numbers
/// its points, then its options), the one with the selection marker, else
/// the last: the options come after what they answer.
fn options_of(rows: &[String]) -> Vec<(u8, String)> {
    /// One numbered list: its digits' column, whether the selection is in
    /// it, its options.
    struct List {
        column: usize,
        selected: bool,
        options: Vec<(u8, String)>,
    }
    let mut lists: Vec<List> = Vec::new();
    for row in rows {
        let (inside, rest) = marked(row);
        let selected = rest.len() != inside.len();
        let column = row[..row.len() - rest.len()].chars().count();
        let mut chars = rest.chars();
        let (Some(digit), Some('.')) = (chars.next(), chars.next()) else {
            continue;
        };
        let (Some(n), label) = (digit.to_digit(10), chars.as_str()) else {
            continue;
        };
        let label = label.trim_end().trim_end_matches('│');
        if !label.starts_with(char::is_whitespace) || label.trim().is_empty() {
            continue;
        }
        let option = (n as u8, label.trim().to_owned());
        match lists.last_mut() {
            _ if n == 1 => lists.push(List {
                column,
                selected,
                options: vec![option],
            }),
            Some(l) if l.column == column && n as usize == l.options.len() + 1 => {
                l.selected |= selected;
                l.options.push(option);
            }
            _ => {}
        }
    }
    let chosen = match lists.iter().position(|l| l.selected) {
        Some(i) => Some(lists.swap_remove(i)),
        None => lists.pop(),
    };
    chosen.map(|l| l.options).unwrap_or_default()
}

/// Whether the region of screen rule `rule` on `screen` now has rows
/// matching each of `requires`: what a later step of an answer waits for
/// before its keys.
pub fn shows(
    rules: &RuleSet,
    agent: Option<&str>,
    screen: &vt100::Screen,
    rule: &str,
    requires: &[Pattern],
) -> bool {
    let Some((owner, r)) = owner_of(rules, rule) else {
        return false;
    };
    let Some(cond) = r.conditions.first() else {
        return false;
    };
    let snap = Snapshot::of(screen);
    let agent = agent.and_then(|n| rules.agent(n));
    let rows = screen::region_rows(&snap, cond, screen::input_box(&snap, agent, owner));
    requires
        .iter()
        .all(|re| rows.iter().any(|(_, row)| re.is_match(row)))
}

/// The agent whose rules hold screen rule `name`, and the rule.
fn owner_of<'r>(rules: &'r RuleSet, name: &str) -> Option<(&'r AgentRules, &'r ScreenRule)> {
    rules
        .agents
        .iter()
        .find_map(|a| a.rule(name).map(|r| (a, r)))
}

/// The rows of `rule`'s first condition's region from the first one its
/// first pattern matches (all of them if it has none), trailing blanks
/// removed and each cut to [`ROW_MAX`]; and the screen row numbers of the
/// first and last of them.
fn dialog_rows(
    snap: &Snapshot,
    rule: &ScreenRule,
    input: Option<screen::BoxAt>,
) -> (Vec<String>, Option<(u16, u16)>) {
    let Some(cond) = rule.conditions.first() else {
        return (Vec::new(), None);
    };
    let rows = screen::region_rows(snap, cond, input);
    let first = cond.all.first().or(cond.any.first());
    let start = first
        .and_then(|re| rows.iter().position(|(_, r)| re.is_match(r)))
        .unwrap_or(0);
    let shown = &rows[start..];
    let number = |i: usize| u16::try_from(i).unwrap_or(u16::MAX);
    let span = shown
        .first()
        .zip(shown.last())
        .map(|((a, _), (b, _))| (number(*a), number(*b)));
    let text = shown
        .iter()
        .map(|(_, r)| r.trim_end().chars().take(ROW_MAX).collect())
        .collect();
    (text, span)
}

/// What the dialog asks about: the first subject pattern that matches its
/// region's text, the `subject` group as one line (see [`subject_text`]).
fn subject_of(
    snap: &Snapshot,
    spec: &super::rules::SubjectRule,
    input: Option<screen::BoxAt>,
) -> Option<String> {
    let cond = Condition {
        region: spec.region,
        lines: spec.lines,
        all: Vec::new(),
        ordered: false,
        any: Vec::new(),
        none: Vec::new(),
        alternate: None,
    };
    let rows: Vec<&str> = screen::region_rows(snap, &cond, input)
        .iter()
        .map(|(_, r)| *r)
        .collect();
    let text = rows.join("\n");
    spec.patterns.iter().find_map(|p| {
        let span = p.capture(&text, "subject")?;
        // The rows the group spans, each with the width its program wrapped
        // it at when it reaches the screen's edge.
        let mut start = 0;
        let mut wraps = Vec::new();
        for row in &rows {
            let end = start + row.len();
            if end >= span.start && start <= span.end {
                wraps.push(wrapped_at(row, snap.cols));
            }
            start = end + 1;
        }
        let subject = subject_text(&text[span], &wraps);
        (!subject.is_empty()).then_some(subject)
    })
}

/// Whether a box line frames a row (`│ rm -rf build │`) or is blank.
fn framing(c: char) -> bool {
    c.is_whitespace() || ('\u{2500}'..='\u{257f}').contains(&c)
}

/// How far from the screen's edge a row's text may stop and still be one
/// its program wrapped there: Claude Code leaves the last column blank.
const EDGE_SLACK: usize = 1;

/// The width `row`'s program wrapped its text at, when its text reaches
/// the screen's edge (`cols` wide, give or take [`EDGE_SLACK`], its last
/// cell a character, not a box line): the row's columns after its frame.
fn wrapped_at(row: &str, cols: usize) -> Option<usize> {
    let width = row.width();
    let reaches = width + EDGE_SLACK >= cols && row.chars().last().is_some_and(|c| !framing(c));
    let frame = row.len() - row.trim_start_matches(framing).len();
    reaches.then(|| width - row[..frame].width())
}

/// A subject as one line: its rows joined by single spaces, each without
/// the box lines a program frames it with (`│ rm -rf build │`, a long
/// command in Claude Code's permission), cut to [`SUBJECT_MAX`].
///
/// A word longer than its row is broken at the row's edge, wherever it is
/// (Claude Code's `with-a-ve` / `ry-long` at 80 columns); a word that fits
/// is moved whole to the next row. So when row `i` reaches the edge
/// (`wraps[i]`: its text's width, [`wrapped_at`]) and its last word and the
/// next row's first are, together, wider than that, they are one word and
/// are joined without a space; two words that would fit are not.
fn subject_text(found: &str, wraps: &[Option<usize>]) -> String {
    let mut out = String::new();
    let mut broken_at = None;
    for (i, row) in found.lines().enumerate() {
        let mut words = row.trim_matches(framing).split_whitespace();
        if let Some(first) = words.next() {
            let last = out.rsplit(' ').next().unwrap_or_default();
            let one_word = broken_at.is_some_and(|w| last.width() + first.width() > w);
            if !one_word && !out.is_empty() {
                out.push(' ');
            }
            out.push_str(first);
            for word in words {
                out.push(' ');
                out.push_str(word);
            }
        }
        broken_at = wraps.get(i).copied().flatten();
    }
    out.chars().take(SUBJECT_MAX).collect()
}

#[cfg(test)]
mod tests {
    use super::{options_of, rejoined, subject_text, wrapped_at};

    /// The options of `rows`, number and label.
    fn numbered(rows: &[&str]) -> Vec<(u8, String)> {
        options_of(&rows.iter().map(|r| r.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn options_are_the_rows_numbered_in_order_from_one() {
        let options = numbered(&[
            "❯ 1. Hello, world",
            "     The classic greeting",
            "  2. Hi there",
            "     Uses 1. and 2. in its words",
            "  3. Type something.",
            "────────",
            "  4. Chat about this",
            "  6. Out of order",
            "  5.Stuck to its number",
        ]);
        let labels: Vec<(u8, &str)> = options.iter().map(|(n, l)| (*n, l.as_str())).collect();
        assert_eq!(
            labels,
            [
                (1, "Hello, world"),
                (2, "Hi there"),
                (3, "Type something."),
                (4, "Chat about this")
            ]
        );
        // A list that does not start at 1 is no dialog's options.
        assert!(numbered(&["  2. Two"]).is_empty());
        // A description's own numbers, indented under an option, are not
        // options; a list above the options (the question's points) is
        // not either: the options are the list the selection is in.
        let options = numbered(&[
            "  1. First point of the question",
            "  2. Second point",
            "❯ 1. Hello",
            "     2. Print it",
            "  2. Hi",
        ]);
        let labels: Vec<String> = options.into_iter().map(|(_, l)| l).collect();
        assert_eq!(labels, ["Hello", "Hi"]);
    }

    #[test]
    fn a_line_the_program_wrapped_is_one_again() {
        // Claude Code's option at 80 columns, wrapped under itself.
        let option =
            "   2. Yes, and switch to accept edits (auto-approve file edits and common file";
        assert_eq!(option.chars().count(), 78);
        let wrapped = lines(&[
            option,
            "      commands) for this session (shift+tab)",
            "   3. No",
        ]);
        assert_eq!(
            rejoined(wrapped.clone(), 80),
            lines(&[
                "   2. Yes, and switch to accept edits (auto-approve file edits and common file \
                 commands) for this session (shift+tab)",
                "   3. No"
            ])
        );
        // Wider, the word would have fitted: a row of its own (a diff's
        // lines, an option's explanation under it).
        assert_eq!(rejoined(wrapped.clone(), 120), wrapped);
        // Under a rule as wide as the screen: an option of its own.
        let ruled = lines(&[
            "   3. Type something.",
            &"─".repeat(80),
            "   4. Chat about this",
        ]);
        assert_eq!(rejoined(ruled.clone(), 80), ruled);
        // An option is one, under a row as long as the screen is wide.
        let asked = lines(&[&format!(" {}?", "x".repeat(78)), "   1. Yes"]);
        assert_eq!(rejoined(asked.clone(), 80), asked);
        // Not deeper: a row of its own too.
        let flat = lines(&[option, "   3. No"]);
        assert_eq!(rejoined(flat.clone(), 80), flat);
        // As deep, a sentence going on (Claude Code's folder trust at 80
        // columns): one line, wrapped once by the inbox.
        let paragraph = lines(&[
            " Quick safety check: Is this a project you created or one you trust? (Like your",
            " own code, a well-known open source project, or work from your team). If not,",
            " take a moment to review what's in this folder first.",
            "",
            " ❯ No, exit",
        ]);
        assert_eq!(
            rejoined(paragraph, 80),
            lines(&[
                " Quick safety check: Is this a project you created or one you trust? (Like your \
                 own code, a well-known open source project, or work from your team). If not, \
                 take a moment to review what's in this folder first.",
                "",
                " ❯ No, exit",
            ])
        );
        // As deep, but a new line: after a `:`, or a diff's next line.
        let listed = lines(&[&format!(" {}:", "x".repeat(78)), " done"]);
        assert_eq!(rejoined(listed.clone(), 80), listed);
        let diff = lines(&[&format!(" 1 +{}", "y".repeat(76)), " 2 +z"]);
        assert_eq!(rejoined(diff.clone(), 80), diff);
    }

    /// The permission Claude Code's rules find on a screen of `size`
    /// (rows, columns) showing `text`, and the rules.
    fn permission(
        text: &str,
        (rows, cols): (u16, u16),
    ) -> (std::sync::Arc<crate::detect::RuleSet>, super::Dialog) {
        let size = |n| std::num::NonZeroU16::new(n).expect("not zero");
        let mut parser = vt100::Parser::new(size(rows), size(cols), 0);
        parser.process(text.trim_end().replace('\n', "\r\n").as_bytes());
        let rules = crate::detect::rules::builtin();
        let d = super::find(
            &rules,
            Some("claude"),
            parser.screen(),
            crate::detect::Detail::Permission,
        )
        .expect("the dialog");
        (rules, d)
    }

    /// Claude Code 2.1.330's edit approval at 80 columns, as its screen
    /// showed it: the second option's label is whole in the dialog found.
    #[test]
    fn an_option_wrapped_at_the_screens_edge_has_its_whole_label() {
        let screen = [
            "● Update(hello.py)",
            "",
            &"─".repeat(80),
            " Edit file",
            " hello.py",
            &"╌".repeat(80),
            " 1 -print(\"hello\")",
            " 1 +print(\"hello, world\")",
            &"╌".repeat(80),
            " Do you want to make this edit to hello.py?",
            " ❯ 1. Yes",
            "   2. Yes, and switch to accept edits (auto-approve file edits and common file",
            "      commands) for this session (shift+tab)",
            "   3. No",
            "",
            " Esc to cancel · Tab to amend",
        ]
        .join("\n");
        let (_, d) = permission(&screen, (24, 80));
        let labels: Vec<&str> = d.options.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(
            labels,
            [
                "Yes",
                "Yes, and switch to accept edits (auto-approve file edits and common file \
                 commands) for this session (shift+tab)",
                "No"
            ]
        );
    }

    /// Claude Code 2.1.330's one-time notice on auto mode's billing,
    /// through a gateway (`tests/fixtures/screens`): about the command
    /// it holds back, `y` goes on (Enter), `n` cancels (Esc).
    #[test]
    fn the_auto_mode_billing_notice_asks_about_its_command() {
        let frame = include_str!(
            "../../tests/fixtures/screens/claude330_auto_mode_billing_notice/frame.txt"
        );
        let (rules, d) = permission(frame, (30, 100));
        assert_eq!(d.rule, "claude.auto_mode_billing_notice");
        assert_eq!(
            d.subject.as_deref(),
            Some("for i in 1 2 3; do echo step2 $i >> steps.txt; done")
        );
        let keys = |a| d.keys_for(&rules, a).map(|r| r.key_names()).ok();
        assert_eq!(keys(super::Answer::Approve), Some(vec!["Enter".to_owned()]));
        assert_eq!(keys(super::Answer::Deny), Some(vec!["Escape".to_owned()]));
    }

    /// Claude Code 2.1.330 asking to create a file names it under
    /// `Create file`, as an edit does under `Edit file`: `hm status` and
    /// the inbox named no subject for it.
    #[test]
    fn a_new_file_is_what_its_dialog_asks_about() {
        let frame = include_str!("../../tests/fixtures/screens/claude330_create_file/frame.txt");
        let (_, d) = permission(frame, (30, 100));
        assert_eq!(d.rule, "claude.permission");
        assert_eq!(d.subject.as_deref(), Some("NEWFILE.md"));
    }

    /// Gemini CLI 0.61.0 names the file a new file's dialog writes
    /// (`? WriteFile  Writing to notes.md`), and the folder its trust
    /// dialog asks about (`1. Trust folder (proj)`): the inbox and `hm
    /// status` named neither.
    #[test]
    fn gemini_names_the_file_it_writes_and_the_folder_it_asks_to_trust() {
        let find = |text: &str, detail| {
            let size = |n| std::num::NonZeroU16::new(n).expect("not zero");
            let mut parser = vt100::Parser::new(size(40), size(120), 0);
            parser.process(text.trim_end().replace('\n', "\r\n").as_bytes());
            super::find(
                &crate::detect::rules::builtin(),
                Some("gemini"),
                parser.screen(),
                detail,
            )
            .expect("the dialog")
        };
        let d = find(
            include_str!("../../tests/fixtures/screens/gemini_write_file/frame.txt"),
            crate::detect::Detail::Permission,
        );
        assert_eq!(d.rule, "gemini.edit");
        assert_eq!(d.subject.as_deref(), Some("notes.md"));
        let d = find(
            include_str!("../../tests/fixtures/screens/gemini_edit_permission/frame.txt"),
            crate::detect::Detail::Permission,
        );
        assert_eq!(
            d.subject.as_deref(),
            Some("hello.py: print(\"hello\") => print(\"hello, world\")")
        );
        let d = find(
            include_str!("../../tests/fixtures/screens/gemini_folder_trust/frame.txt"),
            crate::detect::Detail::FolderTrust,
        );
        assert_eq!(d.rule, "gemini.folder_trust");
        assert_eq!(d.subject.as_deref(), Some("proj"));
    }

    /// Codex CLI at 80 columns about a long command: its first row,
    /// cut with `…` at the edge, is a line the program wrapped, but the
    /// rows under it are rows of their own. They were all joined into
    /// it, the inbox showing the dialog as one paragraph.
    #[test]
    fn only_the_row_under_a_wrapped_one_goes_on_from_it() {
        let first = format!(
            "• Running cargo test --all && cargo clippy --all-targets -- -D {}…",
            "w".repeat(16)
        );
        assert_eq!(first.chars().count(), 80);
        let rows = lines(&[
            &first,
            "  + Show details",
            "  Would you like to run the following command?",
            "  Environment: local",
            "  $ cargo test --all",
            "› 1. Yes, proceed (y)",
        ]);
        let joined = super::rejoined(rows.clone(), 80);
        assert_eq!(joined[0], format!("{first} + Show details"));
        assert_eq!(joined[1..], rows[2..]);
        // Wide characters fill a row in half as many: 39 of them and a
        // space reach the edge of 80 columns.
        let wide = format!("{} x", "漢".repeat(39));
        let joined = super::rejoined(lines(&[&wide, "  続き"]), 80);
        assert_eq!(joined, [format!("{wide} 続き")]);
    }

    fn lines(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_in_a_box_lose_its_sides() {
        // Gemini CLI 0.61: `●` marks the selection, the box's sides frame
        // every row (`│ │ 1 + print(...)` is a diff, not an option).
        let options = numbered(&[
            " │ │ 1 + print(\"hello, world\")     │ │",
            " │ Apply this change?                 │",
            " │ ● 1. Allow once                    │",
            " │   2. Allow for this session        │",
            " │   3. No, suggest changes (esc)     │",
        ]);
        let labels: Vec<(u8, &str)> = options.iter().map(|(n, l)| (*n, l.as_str())).collect();
        assert_eq!(
            labels,
            [
                (1, "Allow once"),
                (2, "Allow for this session"),
                (3, "No, suggest changes (esc)")
            ]
        );
    }

    #[test]
    fn a_subject_loses_the_box_it_is_framed_in_and_keeps_its_words() {
        assert_eq!(
            subject_text("│ rm -rf build/cache-1 &&   │\n│ echo done │", &[]),
            "rm -rf build/cache-1 && echo done"
        );
        assert_eq!(subject_text("  ls -la\n", &[]), "ls -la");
        // Inside the text, a box character is the program's own.
        assert_eq!(subject_text("echo ─ │ x", &[]), "echo ─ │ x");
    }

    /// Claude Code 2.1.330's permission at 80 columns, as on the screen.
    #[test]
    fn a_word_broken_at_the_screens_edge_is_one_word_again() {
        let rows = [
            " │ echo this-is-a-command-with-a-very-long-hyphenated-word-that-claude-must-bre",
            " │ ak-inside-itself-somewhere >> steps.txt && echo done",
        ];
        let wraps: Vec<_> = rows.iter().map(|r| wrapped_at(r, 80)).collect();
        assert_eq!(wraps, [Some(76), None]);
        assert_eq!(
            subject_text(&rows.join("\n"), &wraps),
            "echo this-is-a-command-with-a-very-long-hyphenated-word-that-claude-must-\
             break-inside-itself-somewhere >> steps.txt && echo done"
        );
        // A word that fits on the next row was moved there whole: the two
        // rows' words stay apart though the first row reaches the edge.
        let rows = ["│ echo one two", "│ three"];
        assert_eq!(
            subject_text(&rows.join("\n"), &[Some(12), None]),
            "echo one two three"
        );
        // A word longer than two rows is joined across all three.
        let rows = ["abcde", "fghij", "kl m"];
        assert_eq!(
            subject_text(&rows.join("\n"), &[Some(5), Some(5), None]),
            "abcdefghijkl m"
        );
    }

    #[test]
    fn a_row_reaches_the_edge_with_its_text_not_with_its_frame() {
        assert_eq!(wrapped_at("│ ab │", 6), None);
        assert_eq!(wrapped_at("│ abcd", 6), Some(4));
        assert_eq!(wrapped_at("│ abc", 6), Some(3));
        assert_eq!(wrapped_at("│ ab", 6), None);
        // Wide characters take two columns each.
        assert_eq!(wrapped_at("  日本語", 8), Some(6));
    }
}
