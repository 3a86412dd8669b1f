//! The REPORT payload (extension): what an agent's hook said, as `hm
//! hook` sends it to a session. Plain data here; what a report means for
//! the session's state is the detector's (`detect::hooks`).

use serde::{Deserialize, Serialize};

/// Largest REPORT payload a supervisor reads.
pub const MAX_REPORT: usize = 4096;

/// One hook call, as `hm hook` sends it (the REPORT frame's JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Report {
    /// `claude`, `codex`, `gemini`.
    pub agent: String,
    /// The agent's event name (`PermissionRequest`, `Stop`,
    /// `agent-turn-complete`, ...).
    pub event: String,
    /// The tool concerned, when the event names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// What kind of notification (`permission_prompt`, `idle_prompt`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// A line to show: the command asked about, the notification's text.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// Set for a subagent's own events, which say nothing of the session.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub subagent: bool,
    /// The agent's own id for its conversation, what its resume command
    /// takes (`hm restore`): Claude Code's and Gemini CLI's `session_id`,
    /// Codex's `thread-id`. Only an id passes
    /// (`detect::hooks::conversation_id`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}
