//! The title channel: what a window title says about the session.
//!
//! Agents animate a glyph in their title while they work and rest it (or
//! drop it) when they do not; the glyphs change between versions (Claude
//! Code went from braille frames to `◐ ◑`), so the rules describe the
//! title's shape — "a resting glyph" versus "any other single glyph" — not
//! one frame. This module only classifies; the detector stores the result.

use super::evidence::Finding;
use super::rules::{AgentRules, RuleSet};
use crate::verdict::Source;

/// The agent a title names, if any.
pub fn identify<'a>(title: &str, rules: &'a RuleSet) -> Option<&'a AgentRules> {
    rules
        .agents
        .iter()
        .filter(|a| !a.is_any())
        .find(|a| a.identify_title.iter().any(|re| re.is_match(title)))
}

/// What `title` says, by `agent`'s title rules (then the `*` ones).
pub fn classify(
    title: &str,
    rules: &RuleSet,
    agent: Option<&AgentRules>,
    now_ms: u64,
) -> Option<Finding> {
    let title = title.trim();
    if title.is_empty() {
        return None;
    }
    let generic = rules.agents.iter().filter(|a| a.is_any());
    agent
        .into_iter()
        .chain(generic)
        .flat_map(|a| a.titles.iter())
        .find(|r| r.pattern.is_match(title))
        .map(|r| Finding {
            source: Source::Title,
            rule: r.name.clone(),
            primary: r.primary,
            detail: r.detail,
            text: title.chars().take(120).collect(),
            since_ms: now_ms,
            fresh_until_ms: None,
        })
}
