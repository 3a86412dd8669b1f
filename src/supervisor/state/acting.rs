//! What the shared state does for an answer to a dialog: finds the dialog
//! the verdict stands on now, checks it against what the asker expects,
//! and plans the keys and the record. Sending them is the caller's, in the
//! same step (`supervisor::acting`).

use crate::detect::Dialog;
use crate::detect::Verdict;
use crate::detect::dialog::key_bytes;
use crate::detect::rules::{Answer, Pattern, RuleSet};
use crate::protocol::{Acted, ActionRecord, DialogInfo, DialogOption};

use super::super::acting::{ANSWER_TAKES_MS, Acting, Expect};
use super::Shared;

/// What a dialog read off the screen depends on: the screen and what
/// reads it (the agent in front, the kind of
/// wait the verdict says).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct DialogKey {
    screen: super::ScreenKey,
    agent: Option<String>,
    detail: Option<crate::detect::Detail>,
}

/// A dialog as reports give it, with its identity.
fn dialog_info(d: Dialog, id: u64, rules: &RuleSet) -> DialogInfo {
    let answers = d.answers(rules);
    // Its options only where they can be chosen: elsewhere a numbered
    // row is just what the dialog says.
    let options = match answers.iter().any(|a| matches!(a, Answer::Choose(_))) {
        true => d
            .options
            .into_iter()
            .map(|(number, label)| DialogOption { number, label })
            .collect(),
        false => Vec::new(),
    };
    DialogInfo {
        id,
        answers: answers.iter().map(|a| a.name().to_owned()).collect(),
        options,
        rule: d.rule,
        detail: Some(d.detail),
        subject: d.subject,
        fingerprint: d.fingerprint,
        screen_rows: d.screen_rows,
        automation_in_ms: None,
    }
}

/// How long a dialog must have been on the screen before it is answered.
/// Programs may not take keys at once: Claude Code draws its folder-trust
/// dialog, takes a Down pressed in its first 150 ms or so, and then draws
/// the dialog afresh with the first option selected again, so an Enter
/// after that Down picks the wrong option.
pub const MIN_SHOWN_MS: u64 = 500;

/// How often an answer waiting for a dialog said but not yet drawn asks
/// again (see [`crate::verdict::dialog_due_in`]).
const DRAW_POLL_MS: u64 = 200;

/// Why an answer was not given: for a person, and when asking again may
/// succeed (the dialog is too new to answer yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub reason: String,
    pub retry_in_ms: Option<u64>,
    /// The dialog on the screen instead, when it is another one than the
    /// asker expected.
    pub now: Option<Box<DialogInfo>>,
}

impl From<String> for Refused {
    fn from(reason: String) -> Refused {
        Refused {
            reason,
            retry_in_ms: None,
            now: None,
        }
    }
}

impl From<&str> for Refused {
    fn from(reason: &str) -> Refused {
        Refused::from(reason.to_owned())
    }
}

/// The keys that answer a dialog, and the record of it.
#[derive(Debug)]
pub struct Plan {
    /// Each key's bytes, in order.
    pub keys: Vec<Vec<u8>>,
    /// The later steps: each key's bytes, pressed once the dialog's rule
    /// region shows rows matching the patterns.
    pub then: Vec<(Vec<Vec<u8>>, Vec<Pattern>)>,
    pub record: ActionRecord,
}

impl Shared {
    pub fn acting(&self) -> &Acting {
        &self.acting
    }

    pub fn acting_mut(&mut self) -> &mut Acting {
        &mut self.acting
    }

    /// The answer being typed has sent what it could (`why` it stopped
    /// short, if it did): the connections owed word of it are woken.
    pub fn answer_finished(&mut self, why: Option<String>) {
        self.acting.finished(why);
        self.wakes.answered.notify_waiters();
    }

    /// The second ACTED of an ACT with `whole`, once no answer is being
    /// typed: the last answer's record, which says whether all its keys
    /// were sent.
    pub fn whole_answer(&self) -> Option<Acted> {
        if self.acting.pending.is_some() {
            return None;
        }
        Some(Acted {
            ok: true,
            action: self.acting.log().last().cloned(),
            ..Acted::default()
        })
    }

    /// The dialog the verdict stands on now (with fresh process facts).
    fn dialog_now(&mut self) -> Option<Dialog> {
        let verdict = self.verdict()?;
        self.detector
            .as_ref()?
            .dialog(self.screen.term().screen(), &verdict)
    }

    /// Shows the automation the dialog on screen now; the rule due to
    /// answer it, if one is.
    pub fn observe_dialog(&mut self, now_ms: u64) -> Option<usize> {
        // The report was taken in this same step: a session that is not
        // waiting is at no dialog, and its processes need not be read again.
        let waiting = self
            .report
            .as_ref()
            .is_some_and(|r| r.primary == crate::detect::Primary::Waiting);
        if self.exit_code.is_some() || !waiting {
            return self.acting.observe(None, None, &Default::default(), now_ms);
        }
        let dialog = self.dialog_now();
        let detector = self.detector.as_ref()?;
        // Only for an agent its process names: a screen that looks like
        // an agent's dialog is text any program can print.
        let agent = detector.identity().map(|(a, _)| a);
        self.acting
            .observe(dialog.as_ref(), agent, detector.rules(), now_ms)
    }

    /// The dialog `verdict` (taken just now) stands on, as a report gives
    /// it: noted as the appearance the last look saw, or a new one, so
    /// that its identity is the one a person's answer will be held to.
    pub(super) fn dialog_seen(
        &mut self,
        verdict: &Verdict,
        now_ms: u64,
    ) -> Option<Box<DialogInfo>> {
        // Only a waiting session can be at a dialog: the others' screens
        // are not read (a resting one's stays asleep).
        if verdict.primary != crate::detect::Primary::Waiting {
            self.acting.stopped_waiting(now_ms);
            return None;
        }
        let detector = self.detector.as_ref()?;
        // Read off the screen again only once it or what reads it changed:
        // INFO and STATUS each ask, and so does every `hm ls`.
        let key = DialogKey {
            screen: self.screen_key(),
            agent: detector.agent_name().map(str::to_owned),
            detail: verdict.detail,
        };
        let dialog = match &self.dialog_found {
            Some((k, found)) if *k == key => found.clone(),
            _ => {
                let found = detector.dialog(self.screen.term().screen(), verdict);
                self.dialog_found = Some((key, found.clone()));
                found
            }
        };
        let id = self.acting.see(dialog.as_ref(), now_ms)?;
        let d = dialog?;
        // Told so that a dashboard does not call a person to a dialog a
        // rule is about to answer.
        let agent = detector.identity().map(|(a, _)| a);
        let automated = self
            .acting
            .automated_in(&d, agent, detector.rules(), now_ms);
        let mut info = dialog_info(d, id, detector.rules());
        info.automation_in_ms = automated;
        Some(Box::new(info))
    }

    /// The keys that give `answer` to the dialog on screen now, if the
    /// verdict stands on one, it is as `expect` says, and its agent's
    /// rules know keys for that answer that fit it; else why not, as a
    /// person reads it. `by` says who answers, for the record.
    pub fn plan_answer(
        &mut self,
        answer: Answer,
        by: &str,
        expect: &Expect,
        unix_ms: u64,
    ) -> Result<(Dialog, Plan), Refused> {
        let id = crate::paths::sanitize(&self.info.id);
        if self.exit_code.is_some() {
            return Err(format!("session '{id}' has ended").into());
        }
        let now = self.clock.now_ms();
        // Whose rules read the screen, the verdict it stands on, and when
        // its dialog was first shown: the agent classifier's detector, or,
        // for a plain program the process says is asking, the generic
        // rules, from when it began to read.
        let (rules, agent, verdict, shown_ms) = match self.detector.as_ref() {
            Some(_) => {
                let verdict = self.verdict().ok_or("no verdict")?;
                let detector = self.detector.as_ref().ok_or("no detector")?;
                let shown = detector
                    .table()
                    .screen
                    .as_ref()
                    .map(|f| (f.rule.clone(), f.since_ms));
                let agent = detector.agent_name().map(str::to_owned);
                (detector.rules_arc(), agent, verdict, shown)
            }
            None => {
                let Some(asking) = self.plain_asking(now) else {
                    return Err(format!(
                        "session '{id}' is {}, not at a dialog to {}",
                        self.state_now().label(),
                        answer.name()
                    )
                    .into());
                };
                let since = self.asking_since.unwrap_or(now);
                let verdict = Verdict {
                    primary: asking.primary,
                    detail: asking.detail,
                    health: asking.health,
                    agent: None,
                    since_ms: since,
                    signals: Vec::new(),
                };
                (crate::detect::rules::builtin(), None, verdict, None)
            }
        };
        let found = match (verdict.primary, verdict.detail) {
            (crate::detect::Primary::Waiting, Some(detail)) => crate::detect::dialog::find(
                &rules,
                agent.as_deref(),
                self.screen.term().screen(),
                detail,
            ),
            _ => None,
        };
        let seen = self.acting.see(found.as_ref(), now);
        let Some(dialog) = found else {
            // Waiting on the program's own word, or at a prompt hm does not
            // know as a dialog: the screen is what the keys would act on.
            let (label, verb) = (verdict.label(), answer.name());
            // Said by the program itself a moment ago: its dialog may not
            // be drawn yet (`hm wait --state waiting && hm approve`).
            let waited = now.saturating_sub(verdict.since_ms);
            if expect.dialog.is_none()
                && let Some(due) =
                    crate::verdict::dialog_due_in(verdict.detail, verdict.signals.first(), waited)
            {
                return Err(Refused {
                    reason: format!(
                        "session '{id}' is {label}, but has not drawn its dialog yet \
                         (said {waited} ms ago)"
                    ),
                    retry_in_ms: Some(due.min(DRAW_POLL_MS)),
                    now: None,
                });
            }
            return Err(if expect.dialog.is_some() {
                format!("the dialog in '{id}' is gone: the session is {label} now")
            } else if verdict.primary == crate::detect::Primary::Waiting {
                format!("session '{id}' is {label}, but its screen shows no dialog hm can {verb}")
            } else {
                format!("session '{id}' is {label}, not at a dialog to {verb}")
            }
            .into());
        };
        if let (Some(want), Some(seen)) = (expect.dialog, seen)
            && want != seen
        {
            let about = dialog.subject.as_deref().map_or_else(
                || format!("{} ({})", dialog.detail.name(), dialog.rule),
                |s| format!("'{}'", crate::paths::sanitize(s)),
            );
            // Dialogs are numbered from 1 as they come: 0, or a number
            // past this one's, was never shown (a mistyped --dialog), not
            // replaced.
            let reason = if want > seen || want == 0 {
                format!(
                    "'{id}' has shown no dialog {want}: it asks about {about} now \
                     (dialog {seen}); nothing was sent"
                )
            } else {
                format!(
                    "the dialog in '{id}' changed: now asking about {about} \
                     (dialog {seen}, not {want}); nothing was sent"
                )
            };
            return Err(Refused {
                reason,
                retry_in_ms: None,
                now: Some(Box::new(dialog_info(dialog, seen, &rules))),
            });
        }
        if let Some((ago, what)) = self.acting.just_answered(&dialog, now) {
            // No retry time: asked again later, it would be answered twice.
            return Err(format!(
                "the dialog in '{id}' was answered {ago} ms ago ({what}) and the program has \
                 not redrawn yet; nothing was sent (if it still asks in {} s, answer again)",
                ANSWER_TAKES_MS / 1000
            )
            .into());
        }
        let shows = format!("session '{id}' shows {}", dialog.rule);
        if let Some(rule) = &expect.rule
            && *rule != dialog.rule
        {
            return Err(format!("{shows}, not the expected {}", rule.escape_debug()).into());
        }
        if let Some(fp) = &expect.fingerprint
            && *fp != dialog.fingerprint
        {
            return Err(format!(
                "{shows}, but not the dialog expected: it changed (fingerprint {}, expected {}; \
                 'hm explain {id}' shows it now)",
                dialog.fingerprint,
                fp.escape_debug()
            )
            .into());
        }
        if let Some(re) = &expect.subject {
            match &dialog.subject {
                Some(s) if re.is_match(s) => {}
                Some(s) => {
                    return Err(format!(
                        "{shows} about '{}', which does not match '{}'",
                        crate::paths::sanitize(s),
                        re.source().escape_debug()
                    )
                    .into());
                }
                None => {
                    return Err(format!(
                        "{shows}, which names no subject to match '{}'",
                        re.source().escape_debug()
                    )
                    .into());
                }
            }
        }
        let action = dialog
            .keys_for(&rules, answer)
            .map_err(|e| {
                let mut why = format!("{shows} ({}), but {e}", verdict.label());
                // Asked for an answer the dialog does not take: the
                // commands that would answer it.
                if matches!(e, crate::detect::dialog::Unanswerable::NoKeys { .. }) {
                    let takes: Vec<String> = dialog
                        .answers(&rules)
                        .into_iter()
                        .map(|a| match a {
                            Answer::Approve => format!("hm approve {id}"),
                            Answer::Deny => format!("hm deny {id}"),
                            Answer::Always => format!("hm approve --always {id}"),
                            Answer::Choose(_) => format!("hm choose {id} N"),
                        })
                        .collect();
                    if !takes.is_empty() {
                        why.push_str(&format!(" (it takes {})", takes.join(", ")));
                    }
                }
                why
            })?
            .given(answer);
        // Its age, from when the screen first showed this rule's dialog (a
        // plain program's, from when it began to read), or, for the next
        // of several in one wait, from when it was first seen.
        let shown_ms = match shown_ms {
            Some((rule, since)) if rule == dialog.rule => self.acting.shown_since(since),
            None if self.detector.is_none() => verdict.since_ms,
            _ => now,
        };
        let age = now.saturating_sub(shown_ms);
        if age < MIN_SHOWN_MS {
            return Err(Refused {
                reason: format!(
                    "{shows}, drawn {age} ms ago: too new to take keys surely \
                     (answered once it has stood {MIN_SHOWN_MS} ms)"
                ),
                retry_in_ms: Some(MIN_SHOWN_MS - age),
                now: None,
            });
        }
        let record = ActionRecord {
            answer: answer.name().to_owned(),
            option: answer.option(),
            by: by.to_owned(),
            rule: dialog.rule.clone(),
            agent: verdict.agent.clone(),
            detail: Some(dialog.detail),
            subject: dialog.subject.clone(),
            keys: action.key_names(),
            fingerprint: dialog.fingerprint.clone(),
            at_unix_ms: unix_ms,
            at_ms: now,
            rows: dialog.rows.clone(),
            unfinished: None,
        };
        let keys = key_bytes(&action.keys, dialog.app_cursor);
        let then = action
            .then
            .iter()
            .map(|s| (key_bytes(&s.keys, dialog.app_cursor), s.requires.clone()))
            .collect();
        Ok((dialog, Plan { keys, then, record }))
    }

    /// Whether the region of screen rule `rule` shows rows matching each
    /// of `requires` now, in a session that runs.
    pub fn shows(&mut self, rule: &str, requires: &[Pattern]) -> bool {
        if self.exit_code.is_some() {
            return false;
        }
        match &self.detector {
            Some(d) => d.shows(self.screen.term().screen(), rule, requires),
            // A plain program's question, read with the generic rules.
            None => crate::detect::dialog::shows(
                &crate::detect::rules::builtin(),
                None,
                self.screen.term().screen(),
                rule,
                requires,
            ),
        }
    }

    /// The row the question of screen rule `rule` is asked on, when the
    /// rule reads it on the cursor's row: an answer whose later keys wait
    /// for the screen watches it to see the program go on without them (a
    /// `read -n 1` takes the `y` of `[y/N]` and needs no Enter).
    pub fn question_row(&mut self, rule: &str) -> Option<u16> {
        let on_cursor_line = match &self.detector {
            Some(d) => d.on_cursor_line(rule),
            None => crate::detect::dialog::on_cursor_line(&crate::detect::rules::builtin(), rule),
        };
        on_cursor_line.then(|| self.cursor_row())
    }

    /// The row the cursor is on now.
    pub fn cursor_row(&mut self) -> u16 {
        self.screen.term().screen().cursor_position().0
    }

    /// The question a plain program asks (the process says it reads its
    /// terminal, and no agent classifier reads its screen), when the
    /// generic rules know it (`Continue? [y/N]`), as a report gives it:
    /// so the inbox can answer it as it answers an agent's dialog.
    pub(super) fn plain_dialog_seen(&mut self, now_ms: u64) -> Option<Box<DialogInfo>> {
        let rules = crate::detect::rules::builtin();
        let screen = self.screen.term().screen();
        let dialog =
            crate::detect::dialog::find(&rules, None, screen, crate::detect::Detail::Input);
        let id = self.acting.see(dialog.as_ref(), now_ms)?;
        dialog.map(|d| Box::new(dialog_info(d, id, &rules)))
    }
}
