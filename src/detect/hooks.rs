//! Hook reports: what an agent's hook commands tell hm of its state.
//!
//! Claude Code, Codex CLI and Gemini CLI run commands on their events
//! (a prompt submitted, a tool about to run, a permission asked, a turn
//! over). `hm hook` turns each call into a [`Report`] and sends it to the
//! session's supervisor, whose detector takes it as evidence. A report is
//! an *edge*: it says what began, and nothing says when it stopped being
//! true — no hook fires when a permission is approved or denied, or when
//! the person interrupts with Esc. So a report stands only until the
//! screen or the title says something else after it (see
//! [`super::resolve`]), or until it is [`HOOK_FRESH_MS`] old.
//!
//! The payloads are the agents' own JSON; only the fields that decide a
//! state are kept, each cut short, so a report is small whatever the
//! agent sent.

use crate::verdict::{Detail, Primary};

/// How long a report counts when nothing contradicts it. Long enough for
/// a dialog left open over lunch, short enough that a report whose
/// contradiction hm could not see (an agent drawing nothing it knows)
/// does not stand for ever.
pub const HOOK_FRESH_MS: u64 = 30 * 60 * 1000;
/// Longest text kept from a payload (a tool's command, a message).
pub const MAX_TEXT: usize = 200;
/// Longest agent, event, tool or kind name kept.
const MAX_NAME: usize = 64;
pub use crate::protocol::report::{MAX_REPORT, Report};

/// Longest conversation id kept.
const MAX_SESSION_ID: usize = 128;

/// `s` if it reads as a conversation id (letters, digits, `-`, `_`, at
/// most [`MAX_SESSION_ID`]): it goes on a command line when the session
/// is restored, so nothing else does.
pub fn conversation_id(s: &str) -> Option<String> {
    let ok = !s.is_empty()
        && s.len() <= MAX_SESSION_ID
        && !s.starts_with('-')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    ok.then(|| s.to_owned())
}

fn cut(s: &str, n: usize) -> String {
    s.chars().filter(|c| !c.is_control()).take(n).collect()
}

fn field<'a>(v: &'a serde_json::Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(serde_json::Value::as_str)
}

impl Report {
    /// A report from a Claude-style payload (Claude Code, Codex's hooks,
    /// Gemini CLI: JSON on stdin with `hook_event_name`), or `None` when
    /// it names no event.
    pub fn from_payload(agent: &str, payload: &serde_json::Value) -> Option<Report> {
        let event = field(payload, "hook_event_name")?;
        let tool = field(payload, "tool_name").map(|t| cut(t, MAX_NAME));
        let input = payload.get("tool_input");
        // The line a person would want: the command asked about, the
        // file edited, the notification's message.
        let text = input
            .and_then(|i| {
                ["command", "file_path", "description", "prompt"]
                    .into_iter()
                    .find_map(|k| field(i, k))
            })
            .or_else(|| field(payload, "message"))
            .map_or_else(String::new, |t| cut(t, MAX_TEXT));
        Some(Report {
            agent: cut(agent, MAX_NAME),
            event: cut(event, MAX_NAME),
            tool,
            kind: field(payload, "notification_type").map(|k| cut(k, MAX_NAME)),
            text,
            // Claude sets `agent_id` on the events of a subagent.
            subagent: payload.get("agent_id").is_some_and(|a| !a.is_null()),
            // A conversation just begun (at start-up, or after `/clear`)
            // has nothing to resume: Claude Code writes no transcript
            // before the first prompt, and `claude --resume ID` of it
            // fails ("No conversation found"). Its id counts from the
            // first event after.
            session: field(payload, "session_id")
                .filter(|_| {
                    !(event == "SessionStart"
                        && matches!(field(payload, "source"), Some("startup" | "clear")))
                })
                .and_then(conversation_id),
        })
    }

    /// A report from Codex's `notify` program argument: JSON with `type`
    /// (`agent-turn-complete` is the one Codex sends).
    pub fn from_codex_notify(payload: &serde_json::Value) -> Option<Report> {
        let event = field(payload, "type")?;
        Some(Report {
            agent: "codex".to_owned(),
            event: cut(event, MAX_NAME),
            text: field(payload, "last-assistant-message").map_or_else(String::new, |t| {
                cut(t.lines().next().unwrap_or(""), MAX_TEXT)
            }),
            session: field(payload, "thread-id").and_then(conversation_id),
            ..Report::default()
        })
    }

    /// What this report says of the session, or `None` for events that
    /// say nothing of its state (a message shown, a subagent's own work,
    /// the session ending — the exit says that).
    pub fn state(&self) -> Option<(Primary, Option<Detail>)> {
        if self.subagent {
            return None;
        }
        let tool = self.tool.as_deref().unwrap_or("");
        Some(match self.event.as_str() {
            // Claude Code, and Codex's Claude-compatible hooks.
            "SessionStart" => (Primary::Idle, Some(Detail::Ready)),
            "UserPromptSubmit" | "PostToolUse" | "PostToolUseFailure" | "PostToolBatch"
            | "PostCompact" | "PermissionDenied" | "SubagentStop" => {
                (Primary::Active, Some(Detail::Thinking))
            }
            "PreToolUse" => (Primary::Active, Some(Detail::UsingTools)),
            "PreCompact" => (Primary::Active, Some(Detail::Compacting)),
            "PermissionRequest" => match tool {
                "AskUserQuestion" => (Primary::Waiting, Some(Detail::Question)),
                "ExitPlanMode" => (Primary::Waiting, Some(Detail::PlanApproval)),
                _ => (Primary::Waiting, Some(Detail::Permission)),
            },
            "Elicitation" => (Primary::Waiting, Some(Detail::Question)),
            "Notification" => match self.kind.as_deref() {
                Some("permission_prompt") => (Primary::Waiting, Some(Detail::Permission)),
                Some("elicitation_dialog") => (Primary::Waiting, Some(Detail::Question)),
                // Gemini's notification of a tool to approve.
                Some("ToolPermission") => (Primary::Waiting, Some(Detail::Permission)),
                Some("idle_prompt") => (Primary::Idle, Some(Detail::Ready)),
                // 2.1.330, about 6 s after auto mode's notice that its
                // check cannot run (through a gateway) came up: a choice
                // waits, of no kind the payload names.
                Some("agent_needs_input") => (Primary::Waiting, Some(Detail::Input)),
                _ => return None,
            },
            "Stop" => (Primary::Idle, Some(Detail::Finished)),
            "StopFailure" => (Primary::Idle, Some(Detail::Error)),
            // Gemini CLI.
            "BeforeAgent" | "AfterTool" | "BeforeModel" | "AfterModel" => {
                (Primary::Active, Some(Detail::Thinking))
            }
            "BeforeTool" => (Primary::Active, Some(Detail::UsingTools)),
            "PreCompress" => (Primary::Active, Some(Detail::Compacting)),
            "AfterAgent" => (Primary::Idle, Some(Detail::Finished)),
            // Codex's notify program.
            "agent-turn-complete" => (Primary::Idle, Some(Detail::Finished)),
            _ => return None,
        })
    }

    /// The report in a line, for `hm explain`.
    pub fn describe(&self) -> String {
        let mut s = self.event.clone();
        if let Some(t) = self.tool.as_deref().or(self.kind.as_deref()) {
            s.push(' ');
            s.push_str(t);
        }
        if !self.text.is_empty() {
            s.push_str(": ");
            s.push_str(&self.text);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn claude_permission_requests_name_the_dialog() {
        let p = json!({
            "hook_event_name": "PermissionRequest",
            "tool_name": "Bash",
            "tool_input": {"command": "rm -rf build && make all", "description": "Clean"},
            "session_id": "x",
        });
        let r = Report::from_payload("claude", &p).expect("a report");
        assert_eq!(
            r.state(),
            Some((Primary::Waiting, Some(Detail::Permission)))
        );
        assert_eq!(
            r.describe(),
            "PermissionRequest Bash: rm -rf build && make all"
        );
        let q = json!({"hook_event_name": "PermissionRequest", "tool_name": "AskUserQuestion"});
        let r = Report::from_payload("claude", &q).expect("a report");
        assert_eq!(r.state(), Some((Primary::Waiting, Some(Detail::Question))));
        let plan = json!({"hook_event_name": "PermissionRequest", "tool_name": "ExitPlanMode"});
        let r = Report::from_payload("claude", &plan).expect("a report");
        assert_eq!(
            r.state(),
            Some((Primary::Waiting, Some(Detail::PlanApproval)))
        );
    }

    #[test]
    fn turns_begin_and_end() {
        let state = |event: &str| {
            Report::from_payload("claude", &json!({ "hook_event_name": event }))
                .and_then(|r| r.state())
                .map(|(p, _)| p)
        };
        assert_eq!(state("UserPromptSubmit"), Some(Primary::Active));
        assert_eq!(state("Stop"), Some(Primary::Idle));
        assert_eq!(state("MessageDisplay"), None);
        assert_eq!(state("SessionEnd"), None);
        assert_eq!(state("NoSuchEvent"), None);
    }

    #[test]
    fn a_subagents_events_say_nothing_of_the_session() {
        let p = json!({"hook_event_name": "Stop", "agent_id": "a1"});
        let r = Report::from_payload("claude", &p).expect("a report");
        assert_eq!(r.state(), None);
        let p = json!({"hook_event_name": "Stop", "agent_id": null});
        assert!(
            Report::from_payload("claude", &p)
                .and_then(|r| r.state())
                .is_some()
        );
    }

    #[test]
    fn a_notification_that_the_agent_needs_input_is_waiting() {
        let p = json!({"hook_event_name": "Notification", "notification_type": "agent_needs_input",
                       "message": "Auto mode can't check actions in this session and needs your choice"});
        let r = Report::from_payload("claude", &p).expect("a report");
        assert_eq!(r.state(), Some((Primary::Waiting, Some(Detail::Input))));
    }

    #[test]
    fn payload_text_is_cut_and_cleaned() {
        let long = format!("{}\x1b[31m", "x".repeat(1000));
        let p = json!({"hook_event_name": "Notification", "notification_type": "permission_prompt",
                       "message": long});
        let r = Report::from_payload("claude", &p).expect("a report");
        assert_eq!(r.text.chars().count(), MAX_TEXT);
        assert!(!r.text.contains('\x1b'));
        let encoded = serde_json::to_vec(&r).expect("encodes");
        assert!(encoded.len() < MAX_REPORT);
    }

    #[test]
    fn codex_notify_ends_a_turn() {
        let p = json!({"type": "agent-turn-complete", "thread-id": "t",
                       "last-assistant-message": "Done.\nMore"});
        let r = Report::from_codex_notify(&p).expect("a report");
        assert_eq!(r.state(), Some((Primary::Idle, Some(Detail::Finished))));
        assert_eq!(r.text, "Done.");
        assert_eq!(r.session.as_deref(), Some("t"));
        assert!(Report::from_payload("codex", &json!({"x": 1})).is_none());
    }

    #[test]
    fn a_conversation_is_named_once_it_has_something_to_resume() {
        let id = "4f3a5e52-1111-2222-3333-444455556666";
        let event = |name: &str, source: Option<&str>| {
            let mut p = serde_json::json!({"hook_event_name": name, "session_id": id});
            if let Some(s) = source {
                p["source"] = s.into();
            }
            Report::from_payload("claude", &p).and_then(|r| r.session)
        };
        assert_eq!(event("SessionStart", Some("startup")), None);
        assert_eq!(event("SessionStart", Some("clear")), None);
        assert_eq!(event("SessionStart", Some("resume")).as_deref(), Some(id));
        assert_eq!(event("UserPromptSubmit", None).as_deref(), Some(id));
    }

    #[test]
    fn the_conversation_id_is_kept_only_if_it_is_one() {
        let id = "3f2a9c1e-0b7d-4e55-9a6f-1c2d3e4f5a6b";
        let r = Report::from_payload(
            "claude",
            &json!({"hook_event_name": "SessionStart",
                                                        "session_id": id}),
        )
        .expect("a report");
        assert_eq!(r.session.as_deref(), Some(id));
        for bad in ["", "--continue", "a b", "x;rm -rf", &"a".repeat(200)] {
            assert_eq!(conversation_id(bad), None, "{bad}");
        }
        // Older supervisors read a report with the new field as before.
        let old: serde_json::Value = serde_json::to_value(&r).expect("json");
        assert_eq!(old["session"], id);
    }
}
