//! The `[[automation]]` tables: dialogs a session's supervisor answers on
//! its own, and how each entry is read and checked. Off unless the file
//! has one.
//!
//! What is checked here is what the file alone can tell: the keys, the
//! names of the answer and the detail, the regex, the dwell. Whether an
//! agent of that name exists and knows keys for that answer depends on
//! the rule files, which `hm run` checks before the session starts.

use toml::Spanned;
use toml::de::DeValue;

use super::doc::{Doc, in_file_order};
use super::{AutomationRule, ConfigError, DEFAULT_DWELL_MS, DWELL_MS_RANGE};
use crate::detect::rules::{Answer, RuleSet};
use crate::detect::{Detail, Primary};

const AUTOMATION_KEYS: &[&str] = &["agent", "state", "detail", "subject", "action", "dwell_ms"];

/// A subject regex as automation and `hm approve --subject` use it:
/// checked now, compiled when first matched, as the rules' patterns are.
pub fn subject_regex(source: &str) -> Result<crate::detect::rules::Pattern, String> {
    crate::detect::rules::Pattern::checked(source).map_err(|e| {
        // The parser's message spans lines (a caret diagram); its last
        // line says what is wrong.
        let last = e
            .lines()
            .last()
            .unwrap_or("invalid regex")
            .trim()
            .to_owned();
        format!("bad regex: {last}")
    })
}

impl Doc<'_> {
    /// The `[[automation]]` entries, in file order.
    pub(super) fn automation(
        &self,
        value: &Spanned<DeValue<'_>>,
    ) -> Result<Vec<AutomationRule>, ConfigError> {
        let DeValue::Array(items) = value.get_ref() else {
            return Err(self.mismatch(
                "automation",
                value,
                "[[automation]] tables with a detail and an action",
            ));
        };
        items
            .iter()
            .map(|item| self.automation_entry(item))
            .collect()
    }

    fn automation_entry(&self, item: &Spanned<DeValue<'_>>) -> Result<AutomationRule, ConfigError> {
        let entry = self.table("automation", "[[automation]]", item)?;
        let (mut agent, mut detail, mut subject, mut answer) = (None, None, None, None);
        let mut dwell_ms = DEFAULT_DWELL_MS;
        for (key, value) in in_file_order(entry) {
            let full = format!("automation.{}", key.get_ref());
            match key.get_ref().as_ref() {
                "agent" => {
                    let name = self.string(&full, value)?;
                    if name.is_empty() || name == "*" {
                        let reason = "name one agent (claude, codex, gemini, aider, ...) or \
                                      leave the key out for any";
                        return Err(self.invalid(value.span(), &full, reason));
                    }
                    agent = Some(name);
                }
                "state" => {
                    // Answers are for dialogs, and a dialog is `waiting`;
                    // the key is there so the entry can say so.
                    let state = self.string(&full, value)?;
                    if Primary::from_name(&state) != Some(Primary::Waiting) {
                        let reason = format!(
                            "'{}' cannot be answered: automation acts only on dialogs, whose \
                             state is 'waiting'",
                            state.escape_debug()
                        );
                        return Err(self.invalid(value.span(), &full, reason));
                    }
                }
                "detail" => {
                    let name = self.string(&full, value)?;
                    let d = Detail::from_name(&name)
                        .filter(|&d| answerable(d))
                        .ok_or_else(|| {
                            let reason = format!(
                                "'{}' is not a detail of 'waiting' (expected one of: {})",
                                name.escape_debug(),
                                waiting_details()
                            );
                            self.invalid(value.span(), &full, reason)
                        })?;
                    detail = Some(d);
                }
                "subject" => {
                    let source = self.string(&full, value)?;
                    subject_regex(&source).map_err(|r| self.invalid(value.span(), &full, r))?;
                    subject = Some(source);
                }
                "action" => {
                    let name = self.string(&full, value)?;
                    // A choice is a person's: which option is what the
                    // dialog asks them.
                    let found = Answer::from_name(&name).filter(|a| Answer::ALL.contains(a));
                    answer = Some(found.ok_or_else(|| {
                        let reason =
                            format!("'{}' is not approve, deny or always", name.escape_debug());
                        self.invalid(value.span(), &full, reason)
                    })?);
                }
                "dwell_ms" => {
                    dwell_ms = self.integer(&full, value, DWELL_MS_RANGE, "milliseconds")?;
                }
                _ => return Err(self.unknown(key, "automation", AUTOMATION_KEYS)),
            }
        }
        let missing = |what: &str, example: &str| {
            let reason = format!(
                "the entry has no '{what}' (each [[automation]] needs a detail and an action, \
                 e.g. {example})"
            );
            self.invalid(item.span(), "automation", reason)
        };
        Ok(AutomationRule {
            agent,
            detail: detail.ok_or_else(|| missing("detail", "detail = \"permission\""))?,
            subject,
            answer: answer.ok_or_else(|| missing("action", "action = \"approve\""))?,
            dwell_ms,
            at: self.at(Some(item.span())),
        })
    }
}

/// Checks the entries against the rule files a session reads: the agent
/// an entry names exists, and some agent's rules know keys for its answer
/// to a dialog of its detail (else it could never act).
pub fn check_automation(rules: &[AutomationRule], set: &RuleSet) -> Result<(), ConfigError> {
    for r in rules {
        let agents: Vec<_> = set
            .agents
            .iter()
            .filter(|a| r.agent.as_deref().is_none_or(|want| a.name == want))
            .collect();
        if let Some(want) = &r.agent
            && agents.is_empty()
        {
            let known: Vec<&str> = set
                .agents
                .iter()
                .filter(|a| !a.is_any())
                .map(|a| a.name.as_str())
                .collect();
            return Err(ConfigError::InvalidValue {
                at: r.at.clone(),
                key: "automation.agent".into(),
                reason: format!(
                    "no agent named '{}' in the rules (expected one of: {})",
                    want.escape_debug(),
                    known.join(", ")
                ),
            });
        }
        let answerable = agents.iter().any(|a| {
            a.actions.iter().any(|x| {
                x.answer == r.answer && a.rule(&x.rule).is_some_and(|s| s.detail == Some(r.detail))
            })
        });
        if !answerable {
            let whose = match &r.agent {
                Some(a) => format!("{a}'s rules know no"),
                None => "no agent's rules know".to_owned(),
            };
            return Err(ConfigError::InvalidValue {
                at: r.at.clone(),
                key: "automation".into(),
                reason: format!(
                    "{whose} keys that {} a '{}' dialog, so this entry could never act \
                     (see [[action]] in docs/classifiers.md)",
                    r.answer.name(),
                    r.detail.name()
                ),
            });
        }
    }
    Ok(())
}

/// A detail a dialog can have: `waiting`'s, but `stopped`, which has no
/// dialog and no keys (`hm continue` answers it).
fn answerable(d: Detail) -> bool {
    d.primary() == Primary::Waiting && d != Detail::Stopped
}

/// The details a dialog can have, for messages.
fn waiting_details() -> String {
    Detail::ALL
        .into_iter()
        .filter(|&d| answerable(d))
        .map(Detail::name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::check_automation;
    use crate::config::test_file::{err, ok};
    use crate::detect::Detail;
    use crate::detect::rules::Answer;

    #[test]
    fn an_entry_takes_agent_detail_subject_action_and_dwell() {
        let c = ok(
            "[[automation]]\nagent = \"codex\"\nstate = \"waiting\"\ndetail = \"permission\"\n\
             subject = '^(cargo|npm) test'\naction = \"approve\"\ndwell_ms = 1500\n\n\
             [[automation]]\ndetail = \"permission\"\naction = \"deny\"\n",
        );
        assert_eq!(c.automation.len(), 2);
        let a = &c.automation[0];
        assert_eq!(a.agent.as_deref(), Some("codex"));
        assert_eq!(a.detail, Detail::Permission);
        assert_eq!(a.subject.as_deref(), Some("^(cargo|npm) test"));
        assert_eq!(a.answer, Answer::Approve);
        assert_eq!(a.dwell_ms, 1500);
        assert_eq!(a.at.line, Some(1));
        let b = &c.automation[1];
        assert_eq!((b.agent.as_deref(), b.answer), (None, Answer::Deny));
        assert_eq!(b.dwell_ms, crate::config::DEFAULT_DWELL_MS);
        assert_eq!(b.at.line, Some(9));
        assert!(ok("").automation.is_empty());
    }

    #[test]
    fn a_bad_entry_is_one_line_naming_file_line_and_key() {
        let e = err(
            "[[automation]]\ndetail = \"permission\"\naction = \"approve\"\nstate = \"idle\"\n",
        );
        assert!(
            e.starts_with("/home/u/heimdall.toml:4: invalid value for 'automation.state': 'idle' cannot be answered"),
            "{e}"
        );
        let e = err("[[automation]]\ndetail = \"thinking\"\naction = \"approve\"\n");
        assert!(
            e.contains(
                ":2: invalid value for 'automation.detail': 'thinking' is not a detail of 'waiting'"
            ),
            "{e}"
        );
        let e = err("[[automation]]\ndetail = \"permission\"\naction = \"yes\"\n");
        assert!(
            e.contains(
                ":3: invalid value for 'automation.action': 'yes' is not approve, deny or always"
            ),
            "{e}"
        );
        let e = err(
            "[[automation]]\ndetail = \"permission\"\naction = \"approve\"\nsubject = '(cargo'\n",
        );
        assert!(
            e.contains(":4: invalid value for 'automation.subject': bad regex"),
            "{e}"
        );
        let e =
            err("[[automation]]\ndetail = \"permission\"\naction = \"approve\"\ndwell_ms = 5\n");
        assert!(
            e.contains(":4: invalid value for 'automation.dwell_ms': 5 is out of range"),
            "{e}"
        );
        let e = err("[[automation]]\naction = \"approve\"\n");
        assert!(
            e.contains(":1: invalid value for 'automation': the entry has no 'detail'"),
            "{e}"
        );
        let e = err("[[automation]]\ndetail = \"permission\"\n");
        assert!(e.contains("the entry has no 'action'"), "{e}");
        let e = err("[[automation]]\ndetail = \"permission\"\naction = \"deny\"\nkeys = [\"y\"]\n");
        assert!(
            e.contains(":4: unknown key 'automation.keys' (expected one of: agent, state"),
            "{e}"
        );
        let e = err("[[automation]]\nagent = \"*\"\n");
        assert!(
            e.contains(":2: invalid value for 'automation.agent'"),
            "{e}"
        );
        assert!(err("automation = 1").contains("'automation': expected [[automation]] tables"));
        for e in [
            err("[[automation]]\nagent = \"*\"\n"),
            err("automation = [1]"),
        ] {
            assert_eq!(e.lines().count(), 1, "{e}");
        }
    }

    #[test]
    fn an_entry_must_be_one_the_rules_can_act_on() {
        let rules = crate::detect::rules::builtin();
        let check =
            |text: &str| check_automation(&ok(text).automation, &rules).map_err(|e| e.to_string());
        check("[[automation]]\nagent = \"codex\"\ndetail = \"permission\"\naction = \"deny\"\n")
            .expect("codex denies permission");
        check("[[automation]]\ndetail = \"folder_trust\"\naction = \"approve\"\n")
            .expect("trust is approved");
        let e = check(
            "[[automation]]\nagent = \"claud\"\ndetail = \"permission\"\naction = \"approve\"\n",
        )
        .unwrap_err();
        assert!(
            e.starts_with("/home/u/heimdall.toml:1: invalid value for 'automation.agent': no agent named 'claud'"),
            "{e}"
        );
        // No rules approve a survey (its choices are the person's).
        let e = check("\n[[automation]]\ndetail = \"survey\"\naction = \"approve\"\n").unwrap_err();
        assert!(
            e.contains(":2: invalid value for 'automation': no agent's rules know keys that approve a 'survey' dialog"),
            "{e}"
        );
        let e = check(
            "[[automation]]\nagent = \"codex\"\ndetail = \"folder_trust\"\naction = \"deny\"\n",
        )
        .unwrap_err();
        assert!(
            e.contains("codex's rules know no keys that deny a 'folder_trust' dialog"),
            "{e}"
        );
    }
}
