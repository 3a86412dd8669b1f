//! The words for what a session is doing: two-level status, health,
//! signals and the children a program reports, and a detector's verdict
//! made of them.
//!
//! The names are part of hm's interface (STATE frames, `hm status
//! --json`, the dashboard), so they are spelled once here, in snake_case.
//! This is vocabulary only, below the wire that carries it
//! ([`crate::protocol`]) and the detector that decides it
//! ([`crate::detect`]); it knows neither.

use serde::{Deserialize, Serialize};

/// What the session is doing, at a glance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Primary {
    /// At rest, ready for a new instruction.
    Idle,
    /// Working on the user's behalf; nobody need act.
    Active,
    /// Blocked on the person: a dialog, a question, a program reading input.
    Waiting,
    /// Claims to work, but its screen has not changed for `stuck_after`.
    Stuck,
    /// The program ended.
    Dead,
    /// The evidence does not decide; the safe outcome.
    Unknown,
}

impl Primary {
    pub const ALL: [Primary; 6] = [
        Primary::Idle,
        Primary::Active,
        Primary::Waiting,
        Primary::Stuck,
        Primary::Dead,
        Primary::Unknown,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Primary::Idle => "idle",
            Primary::Active => "active",
            Primary::Waiting => "waiting",
            Primary::Stuck => "stuck",
            Primary::Dead => "dead",
            Primary::Unknown => "unknown",
        }
    }

    pub fn from_name(name: &str) -> Option<Primary> {
        Primary::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// What exactly, within the primary state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Detail {
    // active
    Thinking,
    UsingTools,
    Responding,
    Compacting,
    Retrying,
    /// A plain program producing output (a build, a test run).
    Running,
    // waiting
    Permission,
    Question,
    PlanApproval,
    FolderTrust,
    Survey,
    Diff,
    ExternalEditor,
    /// First-run set-up screens (theme, API key, what's new).
    Onboarding,
    /// A plain program asking for input (`[y/N]`, `Password:`, `read`).
    Input,
    /// The program is stopped by a signal (Ctrl-Z, which Claude Code
    /// obeys itself, or SIGSTOP): nothing it runs moves until it is
    /// continued, and no shell above it will do that.
    Stopped,
    // idle
    Ready,
    PromptEditing,
    /// The program said what it finished (an agent's turn ended).
    Finished,
    /// An error ended the last turn; the prompt is back.
    Error,
    // unknown
    /// A recognised agent keeps drawing screens none of its rules knows
    /// (its rules may be older than it).
    UnrecognisedScreen,
}

impl Detail {
    pub const ALL: [Detail; 21] = [
        Detail::Thinking,
        Detail::UsingTools,
        Detail::Responding,
        Detail::Compacting,
        Detail::Retrying,
        Detail::Running,
        Detail::Permission,
        Detail::Question,
        Detail::PlanApproval,
        Detail::FolderTrust,
        Detail::Survey,
        Detail::Diff,
        Detail::ExternalEditor,
        Detail::Onboarding,
        Detail::Input,
        Detail::Stopped,
        Detail::Ready,
        Detail::PromptEditing,
        Detail::Finished,
        Detail::Error,
        Detail::UnrecognisedScreen,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Detail::Thinking => "thinking",
            Detail::UsingTools => "using_tools",
            Detail::Responding => "responding",
            Detail::Compacting => "compacting",
            Detail::Retrying => "retrying",
            Detail::Running => "running",
            Detail::Permission => "permission",
            Detail::Question => "question",
            Detail::PlanApproval => "plan_approval",
            Detail::FolderTrust => "folder_trust",
            Detail::Survey => "survey",
            Detail::Diff => "diff",
            Detail::ExternalEditor => "external_editor",
            Detail::Onboarding => "onboarding",
            Detail::Input => "input",
            Detail::Stopped => "stopped",
            Detail::Ready => "ready",
            Detail::PromptEditing => "prompt_editing",
            Detail::Finished => "finished",
            Detail::Error => "error",
            Detail::UnrecognisedScreen => "unrecognised_screen",
        }
    }

    pub fn from_name(name: &str) -> Option<Detail> {
        Detail::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The primary state this detail belongs to.
    pub fn primary(self) -> Primary {
        match self {
            Detail::Thinking
            | Detail::UsingTools
            | Detail::Responding
            | Detail::Compacting
            | Detail::Retrying
            | Detail::Running => Primary::Active,
            Detail::Permission
            | Detail::Question
            | Detail::PlanApproval
            | Detail::FolderTrust
            | Detail::Survey
            | Detail::Diff
            | Detail::ExternalEditor
            | Detail::Onboarding
            | Detail::Input
            | Detail::Stopped => Primary::Waiting,
            Detail::Ready | Detail::PromptEditing | Detail::Finished | Detail::Error => {
                Primary::Idle
            }
            Detail::UnrecognisedScreen => Primary::Unknown,
        }
    }
}

/// Seed 003's health machine: `alive -> stuck -> recovered -> alive`, and
/// `dead` at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Health {
    Alive,
    Stuck,
    Recovered,
    Dead,
}

impl Health {
    pub fn name(self) -> &'static str {
        match self {
            Health::Alive => "alive",
            Health::Stuck => "stuck",
            Health::Recovered => "recovered",
            Health::Dead => "dead",
        }
    }
}

/// Where a piece of evidence came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Screen,
    Title,
    Notification,
    Timing,
    Process,
    /// The program's own status reports (OSC 7501).
    StatusProtocol,
    /// `hm hook` reports.
    Hook,
    /// The command line the session was started with.
    Command,
    Exit,
    /// The program's progress reports (OSC 9 ; 4).
    Progress,
    /// A shell's integration marks (OSC 133): prompt, command, exit code.
    ShellIntegration,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Screen => "screen",
            Source::Title => "title",
            Source::Notification => "notification",
            Source::Timing => "timing",
            Source::Process => "process",
            Source::StatusProtocol => "status_protocol",
            Source::Hook => "hook",
            Source::Command => "command",
            Source::Exit => "exit",
            Source::Progress => "progress",
            Source::ShellIntegration => "shell_integration",
        }
    }

    /// Whether the program says this itself, apart from its screen, and
    /// so may say it before it draws what it says.
    pub fn ahead_of_screen(self) -> bool {
        matches!(
            self,
            Source::Hook | Source::StatusProtocol | Source::Notification
        )
    }
}

/// How long a dialog may take to be drawn after the program said it
/// waits at one through a channel of its own: Codex 0.169 reports its
/// command approval (status protocol) about 0.4 s before it draws it.
pub const DRAW_GRACE_MS: u64 = 1500;

/// How much longer the dialog of a wait `waited_ms` old may take to be
/// drawn, if it may still come: the program said it waits at one
/// (`first`, the verdict's strongest signal, is its own word, not the
/// screen's) and asks something a dialog shows (`detail`).
pub fn dialog_due_in(
    detail: Option<Detail>,
    first: Option<&Signal>,
    waited_ms: u64,
) -> Option<u64> {
    let asks = detail.is_some_and(|d| {
        d.primary() == Primary::Waiting && !matches!(d, Detail::Input | Detail::Stopped)
    });
    let said = first.is_some_and(|s| s.source.ahead_of_screen());
    (asks && said && waited_ms < DRAW_GRACE_MS).then(|| DRAW_GRACE_MS - waited_ms)
}

/// How far the program says it is (`40 %`), from a verdict's first
/// signal (`rule`, `text`), when that is an OSC 9;4 progress report.
pub fn progress<'a>(rule: &str, text: &'a str) -> Option<&'a str> {
    (rule.starts_with("progress.") && !text.is_empty()).then_some(text)
}

/// One reason behind a verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signal {
    pub source: Source,
    /// The rule that matched, e.g. `claude.permission` (rule files name
    /// them), or the channel's own name for built-in evidence.
    pub rule: String,
    /// The text that matched (a screen line, the title), cut to 120
    /// characters.
    pub text: String,
    /// When this evidence was first seen, in the session clock's ms.
    pub since_ms: u64,
}

/// What a session is doing, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub primary: Primary,
    pub detail: Option<Detail>,
    pub health: Health,
    /// The program recognised (`claude`, `codex`, `gemini`, `aider`,
    /// `shell`, ...), if any.
    pub agent: Option<String>,
    /// When the primary state and detail began, in the session clock's ms.
    pub since_ms: u64,
    /// The evidence that decided, strongest first.
    pub signals: Vec<Signal>,
}

impl Verdict {
    /// Whether it says an agent's turn is over (see [`turn_over`]).
    pub fn turn_over(&self) -> Option<bool> {
        turn_over(
            self.primary,
            self.detail,
            self.agent.as_deref(),
            &self.signals,
        )
    }

    /// `waiting · permission`, or just `idle`.
    pub fn label(&self) -> String {
        match self.detail {
            Some(d) => format!("{} · {}", self.primary.name(), d.name()),
            None => self.primary.name().to_string(),
        }
    }
}

/// A child the program reported (a subagent, a background shell), as
/// `hm explain` and the dashboard show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Child {
    pub id: String,
    pub state: String,
    pub title: String,
    /// When it came to its state, in the session clock's ms.
    pub since_ms: u64,
}

/// The agent name of the interactive shells' rule file.
pub const SHELL: &str = "shell";
/// The agent name of the interactive programs' rule file (REPLs, editors,
/// pagers, monitors).
pub const PROGRAM: &str = "program";

/// The signal of an agent back at its prompt after a turn with a draft
/// typed ahead there: its detail says `prompt_editing`, and the turn is
/// over all the same.
pub const TURN_OVER: &str = "timing.turn_over";

/// The [`TURN_OVER`] signal, of a turn that ended at `since_ms`.
pub fn turn_over_signal(since_ms: u64) -> Signal {
    Signal {
        source: Source::Timing,
        rule: TURN_OVER.to_owned(),
        text: "back at its prompt after its turn, a draft typed".to_owned(),
        since_ms,
    }
}

/// For the state of a session running `agent` (not a shell, nor a plain
/// program), whether it says the agent's turn is over: `idle · finished`,
/// `idle · error` (an error ended it), or `idle · prompt_editing` with
/// [`TURN_OVER`] (a draft typed ahead); `None` for any other program,
/// whose work ends when it goes quiet. Here, below the wire and the
/// detector, so that both read it alike.
pub fn turn_over(
    primary: Primary,
    detail: Option<Detail>,
    agent: Option<&str>,
    signals: &[Signal],
) -> Option<bool> {
    let agent = agent?;
    let over = match detail {
        Some(Detail::Finished | Detail::Error) => true,
        Some(Detail::PromptEditing) => signals.iter().any(|s| s.rule == TURN_OVER),
        _ => false,
    };
    (agent != SHELL && agent != PROGRAM).then_some(primary == Primary::Idle && over)
}
