//! Answering dialogs: by hand (an ACT request, `hm approve`/`hm deny`) and
//! by the `[[automation]]` rules, and the log of answers given.
//!
//! Both go the same way, in one step with no `.await` in it, so nothing
//! can change in between: the supervisor takes the verdict now, finds the
//! dialog it stands on, checks what the asker expects (for a rule: that
//! the dialog has stood unchanged for its dwell), writes the first key to
//! the pty and records what it did. The answer's other keys follow, one
//! per read, each later step only once the screen shows the keys before
//! it taken (`supervisor/answering.rs` carries it out). [`Acting`] is
//! the part that remembers — the dialog being watched, whether it was
//! answered, an answer on its way, the log — and is plain data driven
//! with times, so its rules are tested without a pty. A rule's timer exists only while a dialog it would
//! answer stands unanswered: a session at rest never wakes for it.

use std::collections::VecDeque;

use tracing::{info, warn};

use crate::config::AutomationRule;
use crate::detect::Dialog;
use crate::detect::rules::{Pattern, RuleSet};
use crate::protocol::{ActionRecord, AutomationInfo};

/// How many answers the log keeps (each with its dialog's rows).
const LOG_LEN: usize = 8;

/// How long after an answer the dialog it answered, still on screen, is
/// taken to be on its way out and is not answered again. A program takes
/// a key and redraws in tens of ms; one that is still showing the dialog
/// after this ignored the key, and a person may answer again.
pub const ANSWER_TAKES_MS: u64 = 2000;

/// What the supervisor remembers about answering dialogs.
#[derive(Debug, Default)]
pub struct Acting {
    rules: Vec<Automated>,
    log: VecDeque<ActionRecord>,
    /// The dialog on screen at the last look (the tracker's, or a report's).
    seen: Option<Seen>,
    /// How many appearances of dialogs there have been: the last one's
    /// identity.
    appearances: u64,
    /// An answer whose later keys are still to be sent: what they are.
    pub(super) pending: Option<String>,
    /// Until then a look that finds no dialog is a redraw answering a
    /// resize, read halfway (see [`Acting::resized`]).
    redraw_until_ms: u64,
    /// A dialog has appeared since the session last stopped waiting (see
    /// [`Acting::stopped_waiting`]).
    in_stretch: bool,
}

/// What an asker expects of the dialog it answers; `None`s expect nothing.
#[derive(Debug, Default)]
pub struct Expect {
    /// This appearance of it (the identity a report gave).
    pub dialog: Option<u64>,
    /// Its screen rule.
    pub rule: Option<String>,
    /// Exactly this dialog.
    pub fingerprint: Option<String>,
    /// A pattern its subject matches (a dialog without one does not).
    pub subject: Option<Pattern>,
}

/// An automation rule with its subject regex compiled.
#[derive(Debug)]
struct Automated {
    rule: AutomationRule,
    subject: Option<crate::detect::rules::Pattern>,
}

/// One appearance of a dialog: from when the tracker first sees it until
/// it sees no dialog, or another one (another rule or subject). A dialog
/// whose rows change (a selection moved) is the same appearance with its
/// dwell started over; it is answered at most once.
#[derive(Debug)]
struct Seen {
    /// Its identity: a number no other appearance in this supervisor has,
    /// which a person's answer names so that it cannot land on another.
    id: u64,
    rule: String,
    subject: Option<String>,
    fingerprint: String,
    /// When it was first seen as it is now.
    since_ms: u64,
    /// When it was first seen at all.
    first_ms: u64,
    /// Another dialog came before it while the session kept waiting (a
    /// script's next question right after the last was answered).
    follows: bool,
    answered: bool,
    /// The last answer given to it, by whom (`approved by hand`), and when.
    last_answer: Option<(u64, String)>,
    /// The automation rule that will answer it, and when.
    due: Option<(usize, u64)>,
}

impl Seen {
    fn is(&self, d: &Dialog) -> bool {
        self.rule == d.rule && self.subject == d.subject
    }
}

impl Acting {
    /// Compiles the rules' subjects; the config has checked them, so one
    /// that does not compile only stops its rule, with a warning.
    pub fn new(rules: Vec<AutomationRule>) -> Acting {
        let rules = rules
            .into_iter()
            .filter_map(|rule| {
                let subject = match rule.subject.as_deref().map(crate::config::subject_regex) {
                    None => None,
                    Some(Ok(re)) => Some(re),
                    Some(Err(e)) => {
                        warn!("automation rule at {}: {e}; it is off", rule.at);
                        return None;
                    }
                };
                Some(Automated { rule, subject })
            })
            .collect();
        Acting {
            rules,
            ..Acting::default()
        }
    }

    /// Whether any automation rule is configured.
    pub fn automated(&self) -> bool {
        !self.rules.is_empty()
    }

    /// The automation rule at `index`.
    pub fn rule(&self, index: usize) -> &AutomationRule {
        &self.rules[index].rule
    }

    /// The tracker's look at the session: `dialog` is the one the verdict
    /// stands on now (none, when it stands on none), `agent` the agent the
    /// session runs as its process names it (none: nothing is answered). The automation rule due to answer it now, if any.
    pub fn observe(
        &mut self,
        dialog: Option<&Dialog>,
        agent: Option<&str>,
        rules: &RuleSet,
        now_ms: u64,
    ) -> Option<usize> {
        self.see(dialog, now_ms);
        let due = self.due_for(dialog?, agent, rules);
        let seen = self.seen.as_mut()?;
        seen.due = due;
        seen.due.filter(|(_, at)| now_ms >= *at).map(|(i, _)| i)
    }

    /// The rule that will answer `d`, the dialog seen last, and when: its
    /// dwell from when the dialog was first seen as it is now. `None` once
    /// it was answered, or when no rule fits it.
    fn due_for(&self, d: &Dialog, agent: Option<&str>, rules: &RuleSet) -> Option<(usize, u64)> {
        let seen = self.seen.as_ref().filter(|s| s.is(d) && !s.answered)?;
        let i = self.fitting(d, agent, rules)?;
        Some((i, seen.since_ms.saturating_add(self.rules[i].rule.dwell_ms)))
    }

    /// A look at the screen found `dialog` (none: no dialog): the same
    /// appearance as the last look's, or a new one. Its identity.
    pub fn see(&mut self, dialog: Option<&Dialog>, now_ms: u64) -> Option<u64> {
        let Some(d) = dialog else {
            if now_ms >= self.redraw_until_ms {
                self.seen = None;
            }
            return None;
        };
        match &mut self.seen {
            Some(seen) if seen.is(d) => {
                if seen.fingerprint != d.fingerprint {
                    seen.fingerprint.clone_from(&d.fingerprint);
                    seen.since_ms = now_ms;
                }
            }
            _ => self.seen = Some(self.appeared(d, now_ms, false)),
        }
        self.seen.as_ref().map(|s| s.id)
    }

    /// The session was resized: its program redraws, and a dialog it
    /// draws again within the detector's grace for the redraw
    /// ([`crate::detect::RESIZE_GRACE_MS`]) is the one it showed, with
    /// its identity, so an answer naming it still lands (the dashboard's
    /// focus resizes the session the person is about to answer).
    pub fn resized(&mut self, now_ms: u64) {
        self.redraw_until_ms = now_ms.saturating_add(crate::detect::RESIZE_GRACE_MS);
    }

    /// A client typed: a dialog gone from now on was answered, not
    /// redrawn.
    pub fn typed(&mut self) {
        self.redraw_until_ms = 0;
    }

    /// The session's state is not waiting (any more): the next dialog
    /// starts a wait of its own, as the state does.
    pub fn stopped_waiting(&mut self, now_ms: u64) {
        self.see(None, now_ms);
        self.in_stretch = false;
    }

    /// When the question on screen was first asked, if another came
    /// before it in the same waiting: the person has waited since then for
    /// this one, not since the state began (a script that asks again at
    /// once is never seen between its questions).
    pub fn asked_since(&self) -> Option<u64> {
        self.seen.as_ref().filter(|s| s.follows).map(|s| s.first_ms)
    }

    /// When the dialog on screen began to be shown, at the latest, given
    /// when the screen first showed its rule's region (`rule_since`).
    /// Where another dialog came before it in the same wait, the region
    /// may have stood through both (Claude Code asks its next question in
    /// the same place), so its own first look counts: a dialog first
    /// seen by the answer that names it is as new as it can be.
    pub fn shown_since(&self, rule_since: u64) -> u64 {
        match &self.seen {
            Some(s) if s.follows => rule_since.max(s.first_ms),
            _ => rule_since,
        }
    }

    /// A new appearance of `d`, seen first at `now_ms`.
    fn appeared(&mut self, d: &Dialog, now_ms: u64, answered: bool) -> Seen {
        self.appearances += 1;
        let follows = std::mem::replace(&mut self.in_stretch, true);
        Seen {
            id: self.appearances,
            rule: d.rule.clone(),
            subject: d.subject.clone(),
            fingerprint: d.fingerprint.clone(),
            since_ms: now_ms,
            first_ms: now_ms,
            follows,
            answered,
            last_answer: None,
            due: None,
        }
    }

    /// Whether the dialog `d`, on screen now, was answered less than
    /// [`ANSWER_TAKES_MS`] ago: how long ago, and with what. Until the
    /// program redraws, its dialog looks unanswered, and a second answer
    /// (a second dashboard, a person after a script) would type its keys
    /// into whatever comes next: Claude Code's prompt read `❯ 1`.
    pub fn just_answered(&self, d: &Dialog, now_ms: u64) -> Option<(u64, &str)> {
        let seen = self.seen.as_ref().filter(|s| s.is(d))?;
        let (at, what) = seen.last_answer.as_ref()?;
        let ago = now_ms.saturating_sub(*at);
        (ago < ANSWER_TAKES_MS).then_some((ago, what.as_str()))
    }

    /// The first rule that would answer `d`: the session's agent is named
    /// by its process and the dialog is that agent's, its agent, detail
    /// and subject fit, and the agent's rules have keys for its answer
    /// that fit the dialog as it is.
    fn fitting(&self, d: &Dialog, agent: Option<&str>, rules: &RuleSet) -> Option<usize> {
        if agent != Some(d.owner.as_str()) {
            return None;
        }
        self.rules.iter().position(|a| {
            let r = &a.rule;
            r.agent.as_deref().is_none_or(|want| agent == Some(want))
                && r.detail == d.detail
                && a.subject
                    .as_ref()
                    .is_none_or(|re| d.subject.as_deref().is_some_and(|s| re.is_match(s)))
                && d.keys_for(rules, r.answer).is_ok()
        })
    }

    /// In how many ms a rule answers `d`, the dialog seen last, if one
    /// will: the rest of its dwell (0 when overdue).
    pub fn automated_in(
        &self,
        d: &Dialog,
        agent: Option<&str>,
        rules: &RuleSet,
        now_ms: u64,
    ) -> Option<u64> {
        let (_, at) = self.due_for(d, agent, rules)?;
        Some(at.saturating_sub(now_ms))
    }

    /// When a rule is due to answer the dialog on screen; `None` while no
    /// rule waits to, so no timer is armed.
    pub fn due_ms(&self) -> Option<u64> {
        self.seen.as_ref()?.due.map(|(_, at)| at)
    }

    /// An answer was given to `d`: logged, and `d` is not answered again
    /// while it stays.
    pub fn answered(&mut self, d: &Dialog, record: ActionRecord) {
        info!(
            by = %record.by,
            answer = %record.answer,
            rule = %record.rule,
            subject = record.subject.as_deref().unwrap_or(""),
            keys = %record.keys.join(" "),
            rows = %record.rows.join(" | "),
            "answered a dialog"
        );
        if !matches!(&self.seen, Some(seen) if seen.is(d)) {
            self.seen = Some(self.appeared(d, record.at_ms, true));
        }
        if let Some(seen) = &mut self.seen {
            seen.answered = true;
            seen.due = None;
            // `chosen by hand`: `choose by hand` read as an instruction.
            let done = match record.answer.as_str() {
                "approve" => "approved",
                "deny" => "denied",
                "choose" => "chosen",
                "continue" => "continued",
                other => other,
            };
            seen.last_answer = Some((record.at_ms, format!("{done} by {}", record.by)));
        }
        if self.log.len() == LOG_LEN {
            self.log.pop_front();
        }
        self.log.push_back(record);
    }

    /// The answers given, oldest first.
    pub fn log(&self) -> impl Iterator<Item = &ActionRecord> {
        self.log.iter()
    }

    /// The rules for INFO, with when the one that waits to act will.
    pub fn info(&self, now_ms: u64) -> Vec<AutomationInfo> {
        let due = self.seen.as_ref().and_then(|s| s.due);
        self.rules
            .iter()
            .enumerate()
            .map(|(i, a)| AutomationInfo {
                at: a.rule.at.to_string(),
                answer: a.rule.answer.name().to_owned(),
                agent: a.rule.agent.clone(),
                detail: Some(a.rule.detail),
                subject: a.rule.subject.clone(),
                dwell_ms: a.rule.dwell_ms,
                due_in_ms: due
                    .filter(|(j, _)| *j == i)
                    .map(|(_, at)| at.saturating_sub(now_ms)),
            })
            .collect()
    }
}

impl Acting {
    /// The answer being given has sent what it could: `why` it stopped
    /// short, if it did, goes into its record and the log.
    pub(super) fn finished(&mut self, why: Option<String>) {
        self.pending = None;
        if let Some(why) = why {
            warn!("an answer stopped short: {why}");
            if let Some(last) = self.log.back_mut() {
                last.unfinished = Some(why);
            }
        }
    }

    /// What the dialog must still be when rule `index` answers it: the one
    /// it watched through the dwell, with a subject the rule takes.
    pub(super) fn expectation(&self, index: usize) -> Expect {
        let seen = self.seen.as_ref();
        Expect {
            dialog: seen.map(|s| s.id),
            rule: seen.map(|s| s.rule.clone()),
            fingerprint: seen.map(|s| s.fingerprint.clone()),
            subject: self.rules.get(index).and_then(|a| a.subject.clone()),
        }
    }

    /// The rule due to answer the dialog on screen is due again at `at_ms`.
    pub(super) fn due_again(&mut self, at_ms: u64) {
        if let Some((_, at)) = self.seen.as_mut().and_then(|s| s.due.as_mut()) {
            *at = at_ms;
        }
    }

    /// The dialog on screen is not answered by automation after all (the
    /// keys could not be sent): not tried again while it stays.
    pub(super) fn give_up(&mut self) {
        if let Some(seen) = &mut self.seen {
            seen.answered = true;
            seen.due = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Location;
    use crate::detect::Detail;
    use crate::detect::rules::{Answer, builtin};

    fn rule(answer: Answer, subject: Option<&str>, dwell_ms: u64) -> AutomationRule {
        AutomationRule {
            agent: Some("codex".into()),
            detail: Detail::Permission,
            subject: subject.map(str::to_owned),
            answer,
            dwell_ms,
            at: Location {
                path: "heimdall.toml".into(),
                line: Some(1),
            },
        }
    }

    /// Codex's command approval about `command`, as the screen shows it.
    fn dialog(command: &str, selected: &str) -> Dialog {
        Dialog {
            rule: "codex.permission".into(),
            owner: "codex".into(),
            detail: Detail::Permission,
            subject: Some(command.into()),
            rows: vec![
                "  Would you like to run the following command?".into(),
                format!("  $ {command}"),
                format!("{selected}1. Yes, proceed (y)"),
                "  3. No, and tell Codex what to do differently (esc)".into(),
            ],
            screen_rows: Some((10, 13)),
            fingerprint: format!("{command}|{selected}"),
            app_cursor: false,
            options: Vec::new(),
        }
    }

    /// A dialog read away halfway through the redraw a resize asks for,
    /// and drawn again, keeps its identity; after the grace, or without a
    /// resize, one that comes back is another appearance.
    #[test]
    fn a_dialog_redrawn_for_a_resize_keeps_its_identity() {
        let mut a = Acting::new(Vec::new());
        let d = dialog("cargo test", "› ");
        let first = a.see(Some(&d), 0);
        a.resized(5_000);
        assert_eq!(a.see(None, 5_010), None);
        assert_eq!(a.see(Some(&d), 5_200), first);
        // Gone past the grace: back again, it is asked anew.
        assert_eq!(a.see(None, 6_500), None);
        let again = a.see(Some(&d), 6_600);
        assert_ne!(again, first);
        // No resize: gone and back is another appearance too.
        a.see(None, 7_000);
        assert_ne!(a.see(Some(&d), 7_100), again);
    }

    /// The wait for a question asked right after another, the session
    /// waiting all along, counts from that question; the first question
    /// of a wait, and one after the session stopped waiting, count from
    /// the state's start (none here).
    #[test]
    fn a_question_that_follows_another_is_waited_for_from_when_it_came() {
        let mut a = Acting::new(Vec::new());
        a.see(Some(&dialog("cargo test", "› ")), 0);
        assert_eq!(a.asked_since(), None, "the first of a wait");
        // Its selection moving is the same question.
        a.see(Some(&dialog("cargo test", "  ")), 1_000);
        assert_eq!(a.asked_since(), None);
        a.see(Some(&dialog("rm -rf target", "› ")), 5_000);
        assert_eq!(a.asked_since(), Some(5_000));
        // Redrawn as it was, it keeps its start.
        a.see(Some(&dialog("rm -rf target", "  ")), 6_000);
        assert_eq!(a.asked_since(), Some(5_000));
        // A look between them that sees none while still waiting.
        a.see(None, 7_000);
        a.see(Some(&dialog("npm test", "› ")), 7_100);
        assert_eq!(a.asked_since(), Some(7_100));
        a.stopped_waiting(8_000);
        assert_eq!(a.asked_since(), None);
        a.see(Some(&dialog("npm test", "› ")), 9_000);
        assert_eq!(a.asked_since(), None, "a new wait");
    }

    fn record(d: &Dialog, at_ms: u64) -> ActionRecord {
        ActionRecord {
            rule: d.rule.clone(),
            at_ms,
            ..ActionRecord::default()
        }
    }

    #[test]
    fn a_rule_answers_once_its_dwell_has_passed_and_not_again() {
        let rules = builtin();
        let mut acting = Acting::new(vec![rule(Answer::Approve, Some("^cargo"), 1500)]);
        let d = dialog("cargo test", "› ");
        assert_eq!(acting.observe(Some(&d), Some("codex"), &rules, 1000), None);
        assert_eq!(acting.due_ms(), Some(2500));
        assert_eq!(acting.observe(Some(&d), Some("codex"), &rules, 2499), None);
        assert_eq!(
            acting.observe(Some(&d), Some("codex"), &rules, 2500),
            Some(0)
        );
        acting.answered(&d, record(&d, 2500));
        // The dialog stays (the program has not taken the keys yet, or
        // ignored them): no second answer, and no timer.
        assert_eq!(acting.observe(Some(&d), Some("codex"), &rules, 9000), None);
        assert_eq!(acting.due_ms(), None);
        assert_eq!(acting.log().count(), 1);
        // It goes, and comes again: a new appearance, answered again.
        assert_eq!(acting.observe(None, Some("codex"), &rules, 9100), None);
        assert_eq!(acting.observe(Some(&d), Some("codex"), &rules, 9200), None);
        assert_eq!(acting.due_ms(), Some(10_700));
    }

    #[test]
    fn a_dialog_that_changes_starts_its_dwell_over() {
        let rules = builtin();
        let mut acting = Acting::new(vec![rule(Answer::Approve, None, 1000)]);
        let d = dialog("cargo test", "› ");
        acting.observe(Some(&d), Some("codex"), &rules, 0);
        // Same dialog, its rows redrawn differently: the dwell restarts.
        let redrawn = Dialog {
            fingerprint: "other".into(),
            ..d.clone()
        };
        assert_eq!(
            acting.observe(Some(&redrawn), Some("codex"), &rules, 900),
            None
        );
        assert_eq!(acting.due_ms(), Some(1900));
        // Another command is another dialog: its own dwell, from now.
        let other = dialog("npm test", "› ");
        assert_eq!(
            acting.observe(Some(&other), Some("codex"), &rules, 1800),
            None
        );
        assert_eq!(acting.due_ms(), Some(2800));
    }

    #[test]
    fn no_timer_while_no_rule_fits_the_dialog() {
        let rules = builtin();
        let mut acting = Acting::new(vec![
            rule(Answer::Approve, Some("^cargo test"), 100),
            AutomationRule {
                agent: Some("claude".into()),
                ..rule(Answer::Deny, None, 100)
            },
        ]);
        // The subject does not match the first, the agent not the second.
        let d = dialog("rm -rf build", "› ");
        assert_eq!(acting.observe(Some(&d), Some("codex"), &rules, 0), None);
        assert_eq!(acting.due_ms(), None);
        assert_eq!(
            acting.observe(Some(&d), Some("codex"), &rules, 60_000),
            None
        );
        // The keys' required row is missing: nothing fits either.
        let unselected = dialog("cargo test", "  ");
        let mut acting = Acting::new(vec![rule(Answer::Approve, None, 100)]);
        assert_eq!(acting.observe(Some(&unselected), None, &rules, 0), None);
        assert_eq!(acting.due_ms(), None);
        assert!(acting.info(0).iter().all(|a| a.due_in_ms.is_none()));
    }

    #[test]
    fn the_first_rule_that_fits_answers_and_info_says_when() {
        let rules = builtin();
        let mut acting = Acting::new(vec![
            rule(Answer::Deny, Some("rm "), 500),
            rule(Answer::Approve, None, 2000),
        ]);
        let d = dialog("rm -rf build", "› ");
        acting.observe(Some(&d), Some("codex"), &rules, 100);
        let info = acting.info(300);
        assert_eq!(info[0].due_in_ms, Some(300));
        assert_eq!(info[1].due_in_ms, None);
        assert_eq!(info[0].answer, "deny");
        assert_eq!(
            acting.observe(Some(&d), Some("codex"), &rules, 600),
            Some(0)
        );
        assert_eq!(
            acting.expectation(0).fingerprint.as_deref(),
            Some(d.fingerprint.as_str())
        );
    }

    #[test]
    fn an_answer_by_hand_counts_for_the_appearance_and_the_log_is_bounded() {
        let rules = builtin();
        let mut acting = Acting::new(vec![rule(Answer::Approve, None, 1000)]);
        let d = dialog("cargo test", "› ");
        // Answered by hand before the tracker looked: automation leaves it.
        acting.answered(&d, record(&d, 10));
        assert_eq!(acting.observe(Some(&d), Some("codex"), &rules, 5000), None);
        assert_eq!(acting.due_ms(), None);
        for i in 0..20 {
            acting.answered(&d, record(&d, i));
        }
        assert_eq!(acting.log().count(), LOG_LEN);
        assert_eq!(acting.log().last().map(|r| r.at_ms), Some(19));
    }

    #[test]
    fn a_dialog_keeps_its_identity_while_it_stands_and_only_then() {
        let mut acting = Acting::default();
        let d = dialog("cargo test", "› ");
        let first = acting.see(Some(&d), 0).expect("an identity");
        // Its selection moves: the same dialog.
        let moved = Dialog {
            fingerprint: "moved".into(),
            ..dialog("cargo test", "  ")
        };
        assert_eq!(acting.see(Some(&moved), 100), Some(first));
        // Another command asked about: another dialog.
        let other = acting.see(Some(&dialog("npm test", "› ")), 200);
        assert!(other.is_some_and(|id| id != first));
        // Gone, and the first asked again, looking the same: a new one.
        assert_eq!(acting.see(None, 300), None);
        let again = acting.see(Some(&d), 400).expect("an identity");
        assert!(again != first && Some(again) != other);
        // Answered without an earlier look: still an identity of its own.
        acting.see(None, 500);
        acting.answered(&d, record(&d, 600));
        assert!(acting.seen.as_ref().is_some_and(|s| s.id > again));
    }

    #[test]
    fn the_next_dialog_in_one_wait_is_as_old_as_its_first_look_not_its_region() {
        let mut acting = Acting::default();
        let first = dialog("cargo test", "› ");
        // The first of a wait: its region's first showing is its age.
        acting.see(Some(&first), 1_000);
        assert_eq!(acting.shown_since(900), 900);
        acting.answered(&first, record(&first, 3_000));
        // The next one drawn in the same region, first seen at 5 s:
        // the region has stood since 0.9 s, the dialog since 5 s.
        let next = dialog("npm test", "› ");
        acting.see(Some(&next), 5_000);
        assert_eq!(acting.shown_since(900), 5_000);
        // A wait that ended starts afresh.
        acting.stopped_waiting(6_000);
        acting.see(Some(&next), 7_000);
        assert_eq!(acting.shown_since(6_500), 6_500);
    }

    /// A dialog answered a moment ago, still on screen, is not answered
    /// again until the program has had time to take the key; another
    /// dialog, or the same one gone and back, may be answered at once.
    #[test]
    fn a_dialog_just_answered_waits_before_another_answer() {
        let mut acting = Acting::default();
        let d = dialog("cargo test", "› ");
        acting.see(Some(&d), 1_000);
        assert_eq!(acting.just_answered(&d, 1_500), None, "not answered yet");
        let mut given = record(&d, 2_000);
        given.answer = "approve".into();
        given.by = "hand".into();
        acting.answered(&d, given);
        assert_eq!(
            acting.just_answered(&d, 2_040),
            Some((40, "approved by hand"))
        );
        // The selection moved: the same appearance, still just answered.
        let moved = dialog("cargo test", "  ");
        acting.see(Some(&moved), 2_100);
        assert!(acting.just_answered(&moved, 2_100).is_some());
        // Still there after the program had its time: it ignored the key.
        assert_eq!(acting.just_answered(&d, 2_000 + ANSWER_TAKES_MS), None);
        // Another dialog is another appearance.
        let other = dialog("npm test", "› ");
        assert_eq!(acting.just_answered(&other, 2_050), None);
        // Gone and back: asked anew.
        acting.answered(&d, record(&d, 5_000));
        acting.see(None, 5_010);
        acting.see(Some(&d), 5_020);
        assert_eq!(acting.just_answered(&d, 5_030), None);
    }
}
