//! The screen channel: a settled screen cut into regions, and the rules
//! matched over them.
//!
//! Regions are what keep typed and quoted text from making a dialog: an
//! agent's input box is found structurally (its prompt row between its
//! frame rows) and masked from every region but `input`, dialogs are
//! looked for below the last input box, and the cursor row counts only
//! when the cursor ends it. This module only reads a [`Snapshot`]; it
//! keeps no state between screens.

use unicode_width::UnicodeWidthStr;

use super::rules::{AgentRules, Condition, InputBox, Region, RuleSet, ScreenRule};
use crate::verdict::{Detail, Primary};

/// The text of a screen, taken once per change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Every row, trailing blanks removed.
    pub rows: Vec<String>,
    pub cursor_row: usize,
    /// The cursor row's text before the cursor, or `None` when text
    /// follows the cursor on its row.
    pub cursor_text: Option<String>,
    pub alternate: bool,
    /// The screen's width in columns: a row this wide reaches its edge.
    pub cols: usize,
}

impl Snapshot {
    pub fn of(screen: &vt100::Screen) -> Snapshot {
        let (_, cols) = screen.size();
        let rows: Vec<String> = screen
            .rows(0, cols.get())
            .map(|r| r.trim_end().to_owned())
            .collect();
        let (crow, ccol) = screen.cursor_position();
        // A long command line wraps: the cursor's row is then the end of a
        // logical line whose prompt is on an earlier row.
        let mut start = crow;
        while start > 0 && screen.row_wrapped(start - 1) {
            start -= 1;
        }
        let before = screen.contents_between(start, 0, crow, ccol);
        let after = screen.contents_between(crow, ccol, crow, cols.get());
        Snapshot {
            rows,
            cursor_row: usize::from(crow),
            cursor_text: after
                .trim()
                .is_empty()
                .then(|| before.trim_end_matches('\n').to_owned()),
            alternate: screen.alternate_screen(),
            cols: usize::from(cols.get()),
        }
    }

    /// A snapshot of plain text rows (tests, `hm classify` of text files
    /// goes through a real `Term` instead).
    /// Text has no width of its own: its widest row is taken for it.
    pub fn from_text(text: &str, cursor_row: usize, cursor_text: Option<&str>) -> Snapshot {
        let rows: Vec<String> = text.lines().map(|l| l.trim_end().to_owned()).collect();
        let cols = rows.iter().map(|r| r.width()).max().unwrap_or(0);
        Snapshot {
            rows,
            cursor_row,
            cursor_text: cursor_text.map(str::to_owned),
            alternate: false,
            cols,
        }
    }
}

/// Where an agent's input box is: its rows `[start, end)` are typed text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoxAt {
    pub start: usize,
    pub end: usize,
}

/// The last input box of `input` on the screen, searching upwards.
///
/// A box opened by a row with text on it (a rule, a bar of half blocks)
/// is closed by one too, never by a blank row: Gemini CLI draws its
/// composer between bars of half blocks in true colour and between rows
/// of background colour otherwise, which are blank as text, so its
/// `below` takes either; a blank row typed between paragraphs must not
/// close the barred one.
pub fn find_input(snap: &Snapshot, input: &InputBox) -> Option<BoxAt> {
    let rows = &snap.rows;
    let blank = |j: usize| rows[j].trim().is_empty();
    for i in (0..rows.len()).rev() {
        if !input.prompt.is_match(&rows[i]) {
            continue;
        }
        if let Some(above) = &input.above
            && (i == 0 || !above.is_match(&rows[i - 1]))
        {
            continue;
        }
        let framed = input.above.is_some() && !blank(i - 1);
        let limit = (i + 1 + input.span).min(rows.len());
        if let Some(end) =
            (i + 1..limit).find(|&j| input.below.is_match(&rows[j]) && !(framed && blank(j)))
        {
            return Some(BoxAt { start: i, end });
        }
    }
    None
}

/// What the screen says: the best rule that matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScreenMatch {
    pub rule: String,
    pub primary: Primary,
    pub detail: Option<Detail>,
    /// The row that matched first, cut to 120 characters.
    pub text: String,
    /// The agent the rule names, if any.
    pub agent: Option<String>,
}

/// The agent the screen shows: the first whose identifying rows or input
/// box are on it. A box closed by a blank row names no one: a row of
/// text between blank rows is on many a screen.
pub fn identify<'a>(snap: &Snapshot, rules: &'a RuleSet) -> Option<&'a AgentRules> {
    rules.agents.iter().filter(|a| !a.is_any()).find(|a| {
        a.input.as_ref().is_some_and(|i| {
            i.names_agent
                && find_input(snap, i).is_some_and(|b| !snap.rows[b.end].trim().is_empty())
        }) || (!a.identify_screen.is_empty()
            && snap
                .rows
                .iter()
                .any(|r| a.identify_screen.iter().any(|re| re.is_match(r))))
    })
}

/// The input box `owner`'s rules are read around on this screen: the
/// recognised agent's, or for a `*` file's rule when there is none, its
/// own file's (as [`evaluate`] reads them).
pub(super) fn input_box(
    snap: &Snapshot,
    agent: Option<&AgentRules>,
    owner: &AgentRules,
) -> Option<BoxAt> {
    let agent_box = agent
        .and_then(|a| a.input.as_ref())
        .and_then(|i| find_input(snap, i));
    if owner.is_any() {
        agent_box.or_else(|| owner.input.as_ref().and_then(|i| find_input(snap, i)))
    } else {
        agent_box
    }
}

/// The rows of `region`, with their row numbers, for `agent`'s box.
pub(super) fn region_rows<'s>(
    snap: &'s Snapshot,
    cond: &Condition,
    input: Option<BoxAt>,
) -> Vec<(usize, &'s str)> {
    let masked = |i: usize| input.is_some_and(|b| i >= b.start && i < b.end);
    let non_empty_tail = |range: std::ops::Range<usize>, from_bottom: bool| {
        let mut out: Vec<(usize, &str)> = range
            .filter(|&i| !masked(i))
            .map(|i| (i, snap.rows[i].as_str()))
            .collect();
        if cond.lines > 0 {
            let kept: Vec<(usize, &str)> = if from_bottom {
                let mut v: Vec<_> = out
                    .iter()
                    .rev()
                    .filter(|(_, r)| !r.trim().is_empty())
                    .take(cond.lines)
                    .copied()
                    .collect();
                v.reverse();
                v
            } else {
                out.iter()
                    .filter(|(_, r)| !r.trim().is_empty())
                    .take(cond.lines)
                    .copied()
                    .collect()
            };
            out = kept;
        }
        out
    };
    let n = snap.rows.len();
    match cond.region {
        Region::Screen => non_empty_tail(0..n, true),
        Region::Bottom => non_empty_tail(0..n, true),
        Region::BelowInput => match input {
            Some(b) => non_empty_tail(b.end.min(n)..n, true),
            None => non_empty_tail(0..n, true),
        },
        Region::AboveInput => match input {
            Some(b) => non_empty_tail(0..b.start, true),
            None => Vec::new(),
        },
        Region::Input => match input {
            Some(b) => (b.start..b.end)
                .map(|i| (i, snap.rows[i].as_str()))
                .collect(),
            None => Vec::new(),
        },
        Region::CursorLine => match &snap.cursor_text {
            Some(t) if !masked(snap.cursor_row) => vec![(snap.cursor_row, t.as_str())],
            _ => Vec::new(),
        },
        Region::AboveCursor => non_empty_tail(0..snap.cursor_row.min(n), true),
    }
}

/// Whether `cond` holds; the first matching row's text when it does.
fn holds(snap: &Snapshot, cond: &Condition, input: Option<BoxAt>) -> Option<String> {
    if let Some(alt) = cond.alternate
        && alt != snap.alternate
    {
        return None;
    }
    let rows = region_rows(snap, cond, input);
    // A region that is not there (no box, no cursor line) matches nothing,
    // not even a rule made only of `none` patterns.
    if rows.is_empty() && (cond.region == Region::CursorLine || cond.region == Region::Input) {
        return None;
    }
    let mut first: Option<String> = None;
    let mut after = 0usize;
    for re in &cond.all {
        let start = if cond.ordered { after } else { 0 };
        let hit = rows
            .iter()
            .enumerate()
            .skip(start)
            .find(|(_, (_, r))| re.is_match(r));
        let (k, (_, text)) = hit?;
        after = k + 1;
        first.get_or_insert_with(|| text.to_string());
    }
    if !cond.any.is_empty() {
        let hit = rows
            .iter()
            .find(|(_, r)| cond.any.iter().any(|re| re.is_match(r)))?;
        first.get_or_insert_with(|| hit.1.to_string());
    }
    if rows
        .iter()
        .any(|(_, r)| cond.none.iter().any(|re| re.is_match(r)))
    {
        return None;
    }
    Some(first.unwrap_or_default())
}

fn cut(text: &str) -> String {
    text.trim().chars().take(120).collect()
}

/// The best rule that matches the screen for `agent` (and the `*` rules).
pub fn evaluate(
    snap: &Snapshot,
    rules: &RuleSet,
    agent: Option<&AgentRules>,
) -> Option<ScreenMatch> {
    let mut candidates: Vec<(&ScreenRule, Option<BoxAt>)> = Vec::new();
    // Generic rules mask the recognised agent's box too: typed text is
    // typed text whoever's rules look at it.
    let agent_box = agent
        .and_then(|a| a.input.as_ref())
        .and_then(|i| find_input(snap, i));
    if let Some(a) = agent {
        candidates.extend(a.rules.iter().map(|r| (r, agent_box)));
    }
    for any in rules.agents.iter().filter(|a| a.is_any()) {
        let own = any.input.as_ref().and_then(|i| find_input(snap, i));
        candidates.extend(any.rules.iter().map(|r| (r, agent_box.or(own))));
    }
    // Stable: equal priorities keep agent-before-generic, file order.
    candidates.sort_by_key(|(r, _)| std::cmp::Reverse(r.priority));
    for (rule, input) in candidates {
        let mut text = None;
        let mut ok = true;
        for cond in &rule.conditions {
            match holds(snap, cond, input) {
                Some(t) => {
                    if text.as_deref().is_none_or(str::is_empty) {
                        text = Some(t);
                    }
                }
                None => {
                    ok = false;
                    break;
                }
            }
        }
        if ok {
            return Some(ScreenMatch {
                rule: rule.name.clone(),
                primary: rule.primary,
                detail: rule.detail,
                text: cut(&text.unwrap_or_default()),
                agent: rule.names_agent.clone(),
            });
        }
    }
    None
}
