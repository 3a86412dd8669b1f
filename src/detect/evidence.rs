//! The evidence table: each channel's latest finding, with when it was
//! first seen and how long it stays fresh.
//!
//! Channels write here ([`super::Detector`] does the writing); [`super::resolve`]
//! only reads. The table is plain data so that `hm explain` can print it
//! and tests can build one by hand.

use serde::{Deserialize, Serialize};

use crate::verdict::{Detail, Primary, Source};

/// What one channel says now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub source: Source,
    /// The rule (or the channel's own name) that produced it.
    pub rule: String,
    pub primary: Primary,
    pub detail: Option<Detail>,
    /// The text behind it (a screen row, the title), cut to 120 chars.
    pub text: String,
    /// When this finding was first seen unchanged.
    pub since_ms: u64,
    /// After this it no longer counts (`None`: until replaced).
    pub fresh_until_ms: Option<u64>,
}

impl Finding {
    pub fn fresh(&self, now_ms: u64) -> bool {
        self.fresh_until_ms.is_none_or(|t| now_ms < t)
    }

    /// Whether `other` says the same thing (so `since` carries over).
    pub fn same_as(&self, other: &Finding) -> bool {
        self.rule == other.rule && self.primary == other.primary && self.detail == other.detail
    }
}

/// Which agent runs, and what said so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentFinding {
    pub name: String,
    pub source: Source,
    pub since_ms: u64,
}

/// Everything the resolver needs, and nothing else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Evidence {
    /// Output quieter than this is not work by timing alone.
    pub idle_threshold_ms: u64,
    /// Active with an unchanged screen this long is stuck.
    pub stuck_after_ms: u64,
    pub started_ms: u64,
    pub agent: Option<AgentFinding>,
    /// The agent named by the process that runs it (its command, or the
    /// process in front of the terminal): the only one automation acts
    /// for. `None` where only a screen, a title or nothing names one.
    pub identity: Option<AgentFinding>,
    pub screen: Option<Finding>,
    pub title: Option<Finding>,
    pub notification: Option<Finding>,
    pub process: Option<Finding>,
    /// The program's own record of its state (OSC 7501), until replaced.
    pub status: Option<Finding>,
    /// The latest hook report (`hm hook`), until contradicted or stale.
    pub hook: Option<Finding>,
    /// The program's progress report (OSC 9 ; 4), until cleared or stale.
    pub progress: Option<Finding>,
    /// The shell's latest integration mark (OSC 133).
    pub shell: Option<Finding>,
    /// Children the program reported (subagents, background shells).
    pub children: Vec<super::status::Child>,
    /// The last output that counts as work (not the answer to a resize).
    pub last_output_ms: Option<u64>,
    /// When the screen's contents last changed.
    pub screen_changed_ms: u64,
    /// Since when a recognised agent's screens have matched none of its
    /// rules (`None` while they match, or no agent is recognised).
    pub unrecognised_since_ms: Option<u64>,
    /// Health is `recovered` until then (set when a stuck session moved).
    pub recovered_until_ms: Option<u64>,
    pub ended_ms: Option<u64>,
}

/// One row of the table as `hm explain` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceRow {
    pub source: Source,
    pub rule: String,
    /// `active · thinking`, `claude`, `last output 1200 ms ago`, ...
    pub value: String,
    pub text: String,
    pub since_ms: u64,
    /// Whether it counts now: within its time and, for a hook's report,
    /// not contradicted by the screen or title since (no hook fires when
    /// a dialog is answered).
    pub fresh: bool,
}

fn label(primary: Primary, detail: Option<Detail>) -> String {
    match detail {
        Some(d) => format!("{} · {}", primary.name(), d.name()),
        None => primary.name().to_owned(),
    }
}

impl Evidence {
    /// The table as rows, at `now_ms`.
    pub fn rows(&self, now_ms: u64) -> Vec<EvidenceRow> {
        let mut rows = Vec::new();
        if let Some(a) = &self.agent {
            rows.push(EvidenceRow {
                source: a.source,
                rule: "agent".to_owned(),
                value: a.name.clone(),
                text: String::new(),
                since_ms: a.since_ms,
                fresh: true,
            });
        }
        rows.push(match &self.identity {
            Some(a) => EvidenceRow {
                source: a.source,
                rule: "agent.identity".to_owned(),
                value: format!("{}: automation may answer its dialogs", a.name),
                text: match a.source {
                    Source::Process => "named by the process in front of the terminal",
                    _ => "named by the session's command",
                }
                .to_owned(),
                since_ms: a.since_ms,
                fresh: true,
            },
            None => EvidenceRow {
                source: self.agent.as_ref().map_or(Source::Command, |a| a.source),
                rule: "agent.identity".to_owned(),
                value: "none: automation answers no dialog here".to_owned(),
                text: "only its command or foreground process names an agent for it".to_owned(),
                since_ms: self.started_ms,
                fresh: true,
            },
        });
        let counts = |f: &Option<Finding>| f.as_ref().filter(|f| f.fresh(now_ms)).cloned();
        let hook_stands = self
            .hook
            .as_ref()
            .is_some_and(|h| hook_stands(h, &counts(&self.screen), &counts(&self.title)));
        for f in [
            &self.status,
            &self.hook,
            &self.screen,
            &self.title,
            &self.notification,
            &self.process,
            &self.progress,
            &self.shell,
        ]
        .into_iter()
        .flatten()
        {
            rows.push(EvidenceRow {
                source: f.source,
                rule: f.rule.clone(),
                value: label(f.primary, f.detail),
                text: f.text.clone(),
                since_ms: f.since_ms,
                fresh: f.fresh(now_ms) && (f.source != Source::Hook || hook_stands),
            });
        }
        for c in &self.children {
            rows.push(EvidenceRow {
                source: Source::StatusProtocol,
                rule: format!("status.child {}", c.id),
                value: c.state.clone(),
                text: c.title.clone(),
                since_ms: c.since_ms,
                fresh: true,
            });
        }
        if let Some(t) = self.last_output_ms {
            rows.push(EvidenceRow {
                source: Source::Timing,
                rule: "timing.output".to_owned(),
                value: format!("last output {} ms ago", now_ms.saturating_sub(t)),
                text: String::new(),
                since_ms: t,
                fresh: now_ms.saturating_sub(t) < self.idle_threshold_ms,
            });
        }
        rows.push(EvidenceRow {
            source: Source::Timing,
            rule: "timing.screen_changed".to_owned(),
            value: format!(
                "screen unchanged for {} ms",
                now_ms.saturating_sub(self.screen_changed_ms)
            ),
            text: String::new(),
            since_ms: self.screen_changed_ms,
            fresh: true,
        });
        if let Some(t) = self.ended_ms {
            rows.push(EvidenceRow {
                source: Source::Exit,
                rule: "exit".to_owned(),
                value: "dead".to_owned(),
                text: String::new(),
                since_ms: t,
                fresh: true,
            });
        }
        rows
    }
}

/// Whether a hook report still holds: no hook fires when a dialog is
/// answered or a turn interrupted, so a report stands only until the
/// screen or the title shows something else after it. An agent's title
/// rests while its dialog is up, so a resting title does not end a
/// report of waiting.
pub(super) fn hook_stands(
    hook: &Finding,
    screen: &Option<Finding>,
    title: &Option<Finding>,
) -> bool {
    let later_and_other = |f: &Finding| f.since_ms > hook.since_ms && f.primary != hook.primary;
    let by_screen = screen.as_ref().is_some_and(later_and_other);
    let by_title = title.as_ref().is_some_and(|t| {
        later_and_other(t) && !(hook.primary == Primary::Waiting && t.primary == Primary::Idle)
    });
    !by_screen && !by_title
}
