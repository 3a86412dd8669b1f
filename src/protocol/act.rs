//! The payloads of the ACT extension, JSON like INFO's: a client asking a
//! supervisor to answer the dialog on its session's screen ([`Act`]), what
//! the supervisor did ([`Acted`], with the [`ActionRecord`] it keeps), and
//! what INFO adds about dialogs and answers ([`DialogInfo`],
//! [`AutomationInfo`]).
//!
//! The check and the keys happen in the supervisor, in one step with
//! nothing in between: the verdict and the screen a client saw may have
//! moved on by the time its request arrives, so it says what it expects
//! and the supervisor refuses when that no longer holds.

use serde::{Deserialize, Serialize};

use crate::verdict::Detail;

/// ACT: answer the dialog on the screen now.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Act {
    /// `approve`, `deny` or `always` (approve with the dialog's own
    /// option that stops the asking for the like), `choose` (with
    /// `option`), or `continue`.
    pub answer: String,
    /// For `choose`: the number of the option picked, 1 to 9, as the
    /// dialog numbers it (`options` of its [`DialogInfo`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub option: Option<u8>,
    /// Only if the dialog is the one this screen rule recognises
    /// (`codex.permission`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Only if the dialog is exactly this one: its fingerprint as INFO's
    /// `dialog` gave it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// Only if the dialog is still this appearance: its `id` as STATE,
    /// STATUS's INFO or an earlier ACTED gave it. What a person saw and
    /// answered; a dialog shown since (even one that looks the same) has
    /// another id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dialog: Option<u64>,
    /// Only if what the dialog asks about matches this regex.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// Say when the whole answer is given: an answer of several keys is
    /// typed over a while, and its ACTED (with `pending`) comes after the
    /// first; a second ACTED follows once the last is sent. A script that
    /// answers and then waits for the next dialog would otherwise find
    /// the one it answered still on the screen.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub whole: bool,
}

/// ACT's answer that continues a stopped program (SIGCONT), as `fg` would.
pub const CONTINUE: &str = "continue";

impl Act {
    /// ACT's `continue`: what `hm continue`, `hm attach` and the dashboard
    /// send a stopped program.
    pub fn resume() -> Act {
        Act {
            answer: CONTINUE.to_owned(),
            ..Act::default()
        }
    }
}

/// ACTED: the answer to ACT.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Acted {
    /// The keys were sent.
    pub ok: bool,
    /// Why nothing was sent, on one line for a person.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// When nothing was sent only because the dialog is too new to take
    /// keys surely: asking again after this many ms may succeed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_in_ms: Option<u64>,
    /// What was done, as the session's action log keeps it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<ActionRecord>,
    /// When nothing was sent: the dialog on the screen now, if any (what
    /// the asker should show instead of the one it answered).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dialog: Option<Box<DialogInfo>>,
    /// The first key was sent and the answer's others are still being
    /// typed; to an ACT with `whole`, a second ACTED follows, without it,
    /// once they are (its `action` says whether all were).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pending: bool,
}

/// One answer given to a dialog, by hand or by an automation rule: what
/// `hm explain` lists and the supervisor's log says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ActionRecord {
    /// `approve`, `deny`, `always` or `choose`.
    pub answer: String,
    /// For `choose`: the option picked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub option: Option<u8>,
    /// `hand` (an ACT request: `hm approve`, `hm deny`), or where the
    /// automation rule that gave it is (`heimdall.toml:12`).
    pub by: String,
    /// The dialog's screen rule.
    pub rule: String,
    /// The agent the session runs.
    pub agent: Option<String>,
    pub detail: Option<Detail>,
    /// What the dialog asked about.
    pub subject: Option<String>,
    /// The keys sent, by name (`Enter`, `y`).
    pub keys: Vec<String>,
    pub fingerprint: String,
    /// When, by the wall clock (for people) and the session's clock.
    pub at_unix_ms: u64,
    pub at_ms: u64,
    /// The dialog's rows as they were when the keys were sent.
    pub rows: Vec<String>,
    /// Why the answer's later keys were not all sent (the dialog never
    /// showed the first ones taken); absent when they were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unfinished: Option<String>,
}

/// How an answer's record's `unfinished` begins when the program went on
/// from its question before the answer's later keys (a `read -n 1` took
/// the `y` of `[y/N]`): they were not needed, and the answer was given.
pub const WENT_ON: &str = "the program went on from its question after the keys before";

impl ActionRecord {
    /// Why the answer's later keys were not all sent, when that left the
    /// dialog half answered: not when the program went on without them.
    pub fn stopped_short(&self) -> Option<&str> {
        self.unfinished
            .as_deref()
            .filter(|why| !why.starts_with(WENT_ON))
    }

    /// The answer as said to the person who gave it: `approved
    /// codex.permission in 'cx': cargo test (keys: y)`, `past` the
    /// answer's past tense.
    pub fn summary(&self, past: &str, id: &str) -> String {
        let about = self
            .subject
            .as_deref()
            .map(|s| format!(": {}", crate::paths::sanitize(s)))
            .unwrap_or_default();
        format!(
            "{past} {} in '{id}'{about} (keys: {})",
            self.rule,
            self.keys.join(" ")
        )
    }
}

/// The dialog on the screen now, if the verdict stands on one: INFO's
/// `dialog` and STATE's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DialogInfo {
    /// This appearance of the dialog: it changes whenever another dialog
    /// is shown (another rule or subject, or the same again after none),
    /// not when its selection moves. 0 from a supervisor that gives none.
    pub id: u64,
    pub rule: String,
    pub detail: Option<Detail>,
    pub subject: Option<String>,
    pub fingerprint: String,
    /// The answers its agent's rules know keys for (`approve`, `deny`).
    pub answers: Vec<String>,
    /// Where it is on the screen: its first and last row (from 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screen_rows: Option<(u16, u16)>,
    /// Its numbered options, when `answers` has `choose`: what ACT's
    /// `option` picks.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<DialogOption>,
    /// An `[[automation]]` entry will answer it, in this many ms (its
    /// dwell's rest): nobody need be called to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub automation_in_ms: Option<u64>,
}

/// One numbered option of a dialog: `2`, `Hi there`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DialogOption {
    pub number: u8,
    /// Its row's text after the number.
    pub label: String,
}

impl Acted {
    /// Why nothing was sent, on one line and safe to print.
    pub fn why(&self) -> String {
        self.reason.as_deref().map_or_else(
            || "the session did not say why".to_owned(),
            |r| r.chars().filter(|c| !c.is_control()).collect(),
        )
    }

    /// What a `continue` that was acted on says: `continued 'ID'`, with
    /// the signal that had stopped it when the kernel reported one.
    pub fn continued(&self, id: &str) -> String {
        let by = self
            .action
            .as_ref()
            .and_then(|a| a.subject.as_deref())
            .map(|sig| format!(" (stopped by {})", crate::paths::sanitize(sig)))
            .unwrap_or_default();
        format!("continued '{id}'{by}")
    }
}

impl DialogInfo {
    /// What tells this appearance of the dialog apart, as an ACT names
    /// it: its number, or from a supervisor that numbers none (an older
    /// hm) its fingerprint.
    pub fn identity(&self) -> (Option<u64>, Option<String>) {
        if self.id != 0 {
            (Some(self.id), None)
        } else {
            (None, Some(self.fingerprint.clone()))
        }
    }
}

/// INFO's `automation`: one configured `[[automation]]` rule, and whether
/// it waits to act on the dialog now.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AutomationInfo {
    /// Where it is written (`heimdall.toml:12`).
    pub at: String,
    pub answer: String,
    pub agent: Option<String>,
    pub detail: Option<Detail>,
    pub subject: Option<String>,
    pub dwell_ms: u64,
    /// In how many ms it answers the dialog on screen, if it is the rule
    /// that will.
    pub due_in_ms: Option<u64>,
}
