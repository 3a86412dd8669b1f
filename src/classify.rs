//! Classifying what a supervised program is doing from its output.
//!
//! A [`StateClassifier`] is fed every pty read (`record`) and asked for its
//! state when someone wants it (`tick` then `state`). It never reads the
//! clock: time comes in as `now_ms`, so tests drive it with synthetic traces
//! and the supervisor needs no periodic timer to make idle transitions fire.
//!
//! The state bytes are part of the wire protocol (`STATUS_RESP`), see
//! `docs/protocol.md`; new states may be added but existing bytes never change.

mod claude;
mod none;
mod simple;

pub use claude::Claude;
pub use none::NoneClassifier;
pub use simple::Simple;

use crate::detect::rules::Kind;
use crate::detect::{DEFAULT_IDLE_THRESHOLD_MS, DEFAULT_STUCK_AFTER_MS, Primary};

/// What the supervised program appears to be doing.
///
/// The byte values are the union of every classifier's states so a client
/// can interpret any state byte whichever classifier produced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ProcessState {
    /// No output for at least the idle threshold.
    Idle = 0x00,
    /// Small regular bursts, like a spinner (claude).
    Thinking = 0x01,
    /// High-frequency output of varying size (claude).
    Streaming = 0x02,
    /// A large burst, or a burst after a pause (claude).
    ToolUse = 0x03,
    /// Producing output (simple), or working (agent).
    Active = 0x04,
    /// Blocked on the person: a dialog, a question, a read (agent).
    Waiting = 0x05,
    /// Claims to work, but its screen has not changed for a while (agent).
    Stuck = 0x06,
    /// The evidence does not decide (agent).
    Unknown = 0x07,
    /// The child has exited.
    Dead = 0xFF,
}

impl ProcessState {
    pub const ALL: [ProcessState; 9] = [
        ProcessState::Idle,
        ProcessState::Thinking,
        ProcessState::Streaming,
        ProcessState::ToolUse,
        ProcessState::Active,
        ProcessState::Waiting,
        ProcessState::Stuck,
        ProcessState::Unknown,
        ProcessState::Dead,
    ];

    pub fn as_byte(self) -> u8 {
        self as u8
    }

    pub fn from_byte(byte: u8) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_byte() == byte)
    }

    /// The state named `name` (as [`name`](Self::name) spells it).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The lowercase name shown to people and in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            ProcessState::Idle => "idle",
            ProcessState::Thinking => "thinking",
            ProcessState::Streaming => "streaming",
            ProcessState::ToolUse => "tool_use",
            ProcessState::Active => "active",
            ProcessState::Waiting => "waiting",
            ProcessState::Stuck => "stuck",
            ProcessState::Unknown => "unknown",
            ProcessState::Dead => "dead",
        }
    }

    /// The state byte that stands for an agent verdict's primary state.
    pub fn of_primary(primary: Primary) -> ProcessState {
        match primary {
            Primary::Idle => ProcessState::Idle,
            Primary::Active => ProcessState::Active,
            Primary::Waiting => ProcessState::Waiting,
            Primary::Stuck => ProcessState::Stuck,
            Primary::Dead => ProcessState::Dead,
            Primary::Unknown => ProcessState::Unknown,
        }
    }

    /// The two-level primary state a classic classifier's state stands
    /// for, so every session answers `primary` whatever its classifier.
    pub fn primary(self) -> Primary {
        match self {
            ProcessState::Idle => Primary::Idle,
            ProcessState::Thinking
            | ProcessState::Streaming
            | ProcessState::ToolUse
            | ProcessState::Active => Primary::Active,
            ProcessState::Waiting => Primary::Waiting,
            ProcessState::Stuck => Primary::Stuck,
            ProcessState::Unknown => Primary::Unknown,
            ProcessState::Dead => Primary::Dead,
        }
    }
}

/// The name of any state byte, `"unknown"` for bytes no classifier emits
/// (a newer supervisor may send states this client does not know yet).
pub fn state_name(byte: u8) -> &'static str {
    ProcessState::from_byte(byte).map_or("unknown", ProcessState::name)
}

/// Infers a [`ProcessState`] from the timing (and, in future classifiers,
/// the content) of a program's output.
pub trait StateClassifier: Send + std::fmt::Debug {
    /// Called for every read from the pty with the bytes read. The built-in
    /// classifiers only look at the length; the bytes are passed so that a
    /// content-aware classifier can be added without changing the trait.
    fn record(&mut self, chunk: &[u8], now_ms: u64);

    /// Called without new output (on every STATUS query) so that idle
    /// transitions fire without a periodic timer.
    fn tick(&mut self, now_ms: u64);

    /// The committed state.
    fn state(&self) -> ProcessState;

    /// Milliseconds the committed state has been held, saturating.
    fn state_ms(&self, now_ms: u64) -> u32;

    /// Forced, terminal transition to `Dead` when the child exits.
    fn set_dead(&mut self, now_ms: u64);

    /// The silence that makes it idle now, where that is not simply the
    /// threshold it was built with (output at a steady beat lengthens it).
    fn quiet_after_ms(&self) -> Option<u64> {
        None
    }

    /// Human-readable name of a state byte.
    fn state_name(&self, state: u8) -> &'static str {
        state_name(state)
    }
}

/// Which classifier to build, with its parameters (already validated).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassifierSpec {
    None,
    Simple {
        idle_threshold_ms: u64,
    },
    Claude {
        idle_threshold_ms: u64,
        debounce_ms: u64,
    },
    /// The `agent` classifier ([`crate::detect`]): screen, title, timing
    /// and process evidence, two-level verdicts with signals.
    Agent {
        idle_threshold_ms: u64,
        stuck_after_ms: u64,
        process_evidence: bool,
        /// Answer the OSC 7501 probe and read the program's own records.
        status_protocol: bool,
        /// Install the agent's hooks for the session and take their reports.
        hooks: bool,
    },
}

pub const DEFAULT_DEBOUNCE_MS: u64 = 200;

impl ClassifierSpec {
    /// The named classifier with its built-in defaults.
    pub fn by_name(name: &str) -> Option<Self> {
        match name {
            "none" => Some(ClassifierSpec::None),
            "simple" => Some(ClassifierSpec::Simple {
                idle_threshold_ms: DEFAULT_IDLE_THRESHOLD_MS,
            }),
            "claude" => Some(ClassifierSpec::Claude {
                idle_threshold_ms: DEFAULT_IDLE_THRESHOLD_MS,
                debounce_ms: DEFAULT_DEBOUNCE_MS,
            }),
            "agent" => Some(ClassifierSpec::agent()),
            _ => None,
        }
    }

    /// The `agent` classifier with its defaults.
    pub fn agent() -> Self {
        ClassifierSpec::Agent {
            idle_threshold_ms: DEFAULT_IDLE_THRESHOLD_MS,
            stuck_after_ms: DEFAULT_STUCK_AFTER_MS,
            process_evidence: true,
            status_protocol: true,
            hooks: true,
        }
    }

    /// The classifier a session gets when none was chosen: `agent` for a
    /// known coding agent (by the file name of the program `argv` runs,
    /// also behind `env`) and for an interactive shell, where a person
    /// types one (`hm run -- bash`, then `opencode`: the agent is found
    /// by the process in front); else the default.
    pub fn for_command(argv: &[String]) -> Self {
        let program = crate::detect::rules::program_of(argv);
        let name = program
            .and_then(|p| std::path::Path::new(p).file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let kind = crate::detect::rules::builtin_commands().kind(&name);
        // The shell's own arguments: none that names a script or a
        // command (`bash -c ...`, `sh build.sh`) makes it interactive.
        let mut args = argv
            .iter()
            .skip_while(|a| Some(a.as_str()) != program)
            .skip(1);
        let interactive = args.all(|a| a.starts_with('-') && a != "-c");
        match kind {
            Some(Kind::Agent) => ClassifierSpec::agent(),
            Some(Kind::Shell) if interactive => ClassifierSpec::agent(),
            Some(Kind::Shell) => match shell_runs(argv, program) {
                Some(inner) => ClassifierSpec::for_command(&inner),
                None => ClassifierSpec::default(),
            },
            _ => ClassifierSpec::default(),
        }
    }

    /// This classifier with the idle threshold of `other`, where both have
    /// one (`--idle-threshold-ms` given without `--classifier` tunes the
    /// classifier a session ends up with).
    pub fn tuned(mut self, other: &ClassifierSpec) -> Self {
        if let (
            ClassifierSpec::Simple { idle_threshold_ms }
            | ClassifierSpec::Claude {
                idle_threshold_ms, ..
            }
            | ClassifierSpec::Agent {
                idle_threshold_ms, ..
            },
            Some(ms),
        ) = (&mut self, other.idle_threshold_ms())
        {
            *idle_threshold_ms = ms;
        }
        self
    }

    /// The idle threshold, for classifiers that have one.
    pub fn idle_threshold_ms(&self) -> Option<u64> {
        match *self {
            ClassifierSpec::None => None,
            ClassifierSpec::Simple { idle_threshold_ms }
            | ClassifierSpec::Claude {
                idle_threshold_ms, ..
            }
            | ClassifierSpec::Agent {
                idle_threshold_ms, ..
            } => Some(idle_threshold_ms),
        }
    }

    /// The detector's settings, for the `agent` classifier.
    pub fn agent_settings(&self) -> Option<crate::detect::Settings> {
        match *self {
            ClassifierSpec::Agent {
                idle_threshold_ms,
                stuck_after_ms,
                process_evidence,
                status_protocol,
                hooks,
            } => Some(crate::detect::Settings {
                idle_threshold_ms,
                stuck_after_ms,
                process_evidence,
                status_protocol,
                hooks,
            }),
            _ => None,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            ClassifierSpec::None => "none",
            ClassifierSpec::Simple { .. } => "simple",
            ClassifierSpec::Claude { .. } => "claude",
            ClassifierSpec::Agent { .. } => "agent",
        }
    }

    /// Build the classifier; `now_ms` is the time the session started.
    pub fn build(&self, now_ms: u64) -> Box<dyn StateClassifier> {
        match *self {
            ClassifierSpec::None => Box::new(NoneClassifier::new(now_ms)),
            ClassifierSpec::Simple { idle_threshold_ms } => {
                Box::new(Simple::new(idle_threshold_ms, now_ms))
            }
            ClassifierSpec::Claude {
                idle_threshold_ms,
                debounce_ms,
            } => Box::new(Claude::new(idle_threshold_ms, debounce_ms, now_ms)),
            // The agent's verdicts come from its detector, which needs the
            // screen; the byte classifier beside it only keeps time.
            ClassifierSpec::Agent {
                idle_threshold_ms, ..
            } => Box::new(Simple::new(idle_threshold_ms, now_ms)),
        }
    }
}

impl Default for ClassifierSpec {
    fn default() -> Self {
        ClassifierSpec::Simple {
            idle_threshold_ms: DEFAULT_IDLE_THRESHOLD_MS,
        }
    }
}

/// The command a shell is given with `-c` (`sh -c 'exec claude --resume'`,
/// `bash -c 'X=1 codex'`), as words, without the `exec` and the variables
/// set in front of it; `None` for anything else. Only its program is
/// looked at (a pipeline's first word is as good a guess as any).
fn shell_runs(argv: &[String], shell: Option<&str>) -> Option<Vec<String>> {
    let mut args = argv
        .iter()
        .skip_while(|a| Some(a.as_str()) != shell)
        .skip(1);
    if args.next()? != "-c" {
        return None;
    }
    let words = shlex::split(args.next()?)?;
    let inner: Vec<String> = words
        .into_iter()
        .skip_while(|w| w == "exec" || (w.contains('=') && !w.starts_with('-')))
        .collect();
    (!inner.is_empty()).then_some(inner)
}

#[cfg(test)]
mod tests {
    use super::ClassifierSpec;

    fn chosen(argv: &[&str]) -> &'static str {
        let argv: Vec<String> = argv.iter().map(|a| (*a).to_owned()).collect();
        ClassifierSpec::for_command(&argv).name()
    }

    #[test]
    fn agents_and_interactive_shells_get_the_agent_classifier() {
        assert_eq!(chosen(&["claude"]), "agent");
        assert_eq!(chosen(&["env", "HOME=/h", "/usr/bin/codex"]), "agent");
        // A shell a person types in, where an agent may be started.
        assert_eq!(chosen(&["bash"]), "agent");
        assert_eq!(chosen(&["/bin/zsh", "-l"]), "agent");
        // A shell running a command or a script is that command.
        assert_eq!(chosen(&["bash", "-c", "make"]), "simple");
        assert_eq!(chosen(&["sh", "build.sh"]), "simple");
        assert_eq!(chosen(&["sleep", "10"]), "simple");
        assert_eq!(chosen(&[]), "simple");
    }

    #[test]
    fn an_agent_a_shell_is_told_to_run_is_an_agent() {
        assert_eq!(
            chosen(&["sh", "-c", "claude --permission-mode default"]),
            "agent"
        );
        assert_eq!(chosen(&["bash", "-c", "exec /opt/bin/codex"]), "agent");
        assert_eq!(
            chosen(&["sh", "-c", "X=1 exec env Y=2 gemini -m pro"]),
            "agent"
        );
        assert_eq!(chosen(&["sh", "-c", "make && claude"]), "simple");
        assert_eq!(chosen(&["sh", "-c", "'unterminated"]), "simple");
    }
}
