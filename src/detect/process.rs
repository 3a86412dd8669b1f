//! The process channel of evidence: what the supervisor reads of the
//! processes on the pty ([`ProcessFacts`]) and what the detector makes of
//! it. Separate from the other channels because it is the only one that
//! comes from outside the output stream, on the supervisor's schedule,
//! and the only one whose findings go stale on their own.

use super::{Detail, Detector, Finding, PROGRAM, Primary, SHELL, Source};

/// Process facts are read right before each verdict; older ones are stale.
pub(super) const PROCESS_FRESH_MS: u64 = 2_000;
/// While a job runs silently (the process facts say so, nothing is drawn),
/// the facts are read again after this at first, so that a job that
/// starts reading the terminal without a word is noticed; the wait doubles
/// as the job goes on, up to [`PROCESS_RECHECK_MAX_MS`], so that a quiet
/// server costs a wake-up every half minute, not every second.
pub const PROCESS_RECHECK_MS: u64 = 1_000;
pub const PROCESS_RECHECK_MAX_MS: u64 = 30_000;

/// What the supervisor knows of the processes on the session's pty.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcessFacts {
    /// Whether the pty's foreground process group is the session's own
    /// program (a shell at its prompt, or the agent itself) rather than a
    /// job it started.
    pub foreground_is_session: bool,
    /// Whether the foreground process is blocked reading the terminal.
    pub reading_terminal: bool,
    /// Whether the terminal is in canonical (line) mode: a shell's line
    /// editor turns it off at its prompt; its `read` builtin, like most
    /// programs asking a question, leaves it on.
    pub canonical: bool,
    /// The foreground group leader's command name (`/proc/PID/comm`).
    pub foreground_command: String,
    /// The processes in front of the terminal, the last in front: the
    /// group's leader, then through shells the job each runs (`sh -c
    /// 'prog; cat file'` keeps one group for all three).
    pub front: Vec<ProcessId>,
    /// The names the process in front goes by: its `comm` and the file
    /// names of its first arguments (`node .../bin/opencode`).
    pub foreground_names: Vec<String>,
    /// The names of the program that handed the terminal to the process
    /// in front, a child of its own group it waits on (Claude Code runs
    /// `$EDITOR` so on Ctrl-G); empty when none did.
    pub handed_over_by: Vec<String>,
}

/// One process, across pid reuse and `exec`: its pid, when it started
/// (clock ticks since boot), and the program image it runs, told by where
/// its stack starts (`/proc/PID/stat`'s `startstack`, which a new `exec`
/// moves under address-space randomisation; 0 where unreadable). A
/// process that `exec`s another program is no longer the one that was
/// answered the status probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProcessId {
    pub pid: i32,
    pub started: u64,
    pub image: u64,
}

impl Detector {
    /// Fresh process facts (the supervisor reads them when asked).
    pub fn process(&mut self, facts: ProcessFacts, now_ms: u64) {
        if !self.settings.process_evidence {
            return;
        }
        self.front(&facts, now_ms);
        let fg = [facts.foreground_command.clone()];
        let fg_agent = if facts.foreground_names.is_empty() {
            self.rules.agent_for_command(&fg)
        } else {
            self.rules.agent_for_names(&facts.foreground_names)
        }
        .map(|a| a.name.clone());
        // A REPL's `>>> ` looks like a shell's prompt and may name the
        // shell on screen, but the session's command (a bare `python3`)
        // says it reads all the time.
        let known_agent = self.agent_name().is_some_and(|a| a != SHELL)
            || self.command_agent.as_deref() == Some(PROGRAM);
        let make = |rule: &str, primary, detail| Finding {
            source: Source::Process,
            rule: rule.to_owned(),
            primary,
            detail: Some(detail),
            text: facts.foreground_command.chars().take(120).collect(),
            since_ms: now_ms,
            fresh_until_ms: Some(now_ms.saturating_add(PROCESS_FRESH_MS)),
        };
        // An agent waiting on a program it gave the terminal to: its
        // editor (Ctrl-G), or something else that reads.
        let handing_agent = self
            .rules
            .agent_for_names(&facts.handed_over_by)
            .filter(|a| a.name != SHELL && a.name != PROGRAM);
        let found = if handing_agent.is_some() && facts.reading_terminal {
            let editor = self
                .rules
                .agent_for_names(&facts.foreground_names)
                .is_some_and(|a| a.name == PROGRAM);
            Some(if editor {
                make("process.editor", Primary::Waiting, Detail::ExternalEditor)
            } else {
                make("process.handed_over", Primary::Waiting, Detail::Input)
            })
        } else if facts.foreground_is_session {
            if known_agent && !self.interactive_shell {
                // The session's own program is an agent or an interactive
                // program: its screen says more than whether it reads.
                None
            } else if !facts.reading_terminal {
                // A script, or the shell itself, busy.
                Some(make("process.running", Primary::Active, Detail::Running))
            } else if super::plain::at_shell_prompt(self.interactive_shell, &facts)
                || self.alternate
            {
                Some(make("process.at_prompt", Primary::Idle, Detail::Ready))
            } else {
                // A script's `read`, or the shell's `read` builtin typed at
                // its prompt (the line editor would have left canonical
                // mode).
                Some(make("process.reading", Primary::Waiting, Detail::Input))
            }
        } else if fg_agent.as_deref().is_some_and(|a| a != SHELL) {
            // A known interactive program (an agent, a REPL, an editor) in
            // the foreground reads the terminal all the time.
            None
        } else if facts.reading_terminal {
            if self.alternate {
                Some(make("process.fullscreen", Primary::Idle, Detail::Ready))
            } else if super::plain::at_shell_prompt(false, &facts) {
                // A shell started at the prompt (`bash`), at its own.
                Some(make("process.at_prompt", Primary::Idle, Detail::Ready))
            } else {
                Some(make("process.job_reading", Primary::Waiting, Detail::Input))
            }
        } else {
            Some(make(
                "process.job_running",
                Primary::Active,
                Detail::Running,
            ))
        };
        self.evidence.process = match (found, self.evidence.process.take()) {
            (Some(mut new), Some(old)) if new.same_as(&old) => {
                new.since_ms = old.since_ms;
                Some(new)
            }
            (found, _) => found,
        };
    }
}

impl Detector {
    /// Who is in front of the terminal now: the agent its process names
    /// (what automation may act for, [`Detector::identity`]), and the end
    /// of a status record's trust once the process that asked is gone
    /// from the front.
    fn front(&mut self, facts: &ProcessFacts, now_ms: u64) {
        self.facts_seen = true;
        self.front.clone_from(&facts.front);
        self.foreground_is_session = facts.foreground_is_session;
        // Whether or not it is the session's own program: `sh -c 'exec
        // opencode'` is opencode.
        // An agent waiting on the editor it ran is still the one in front.
        let named = |names: &[String]| {
            self.rules
                .agent_for_names(names)
                .map(|a| a.name.clone())
                .filter(|a| a != SHELL && a != PROGRAM)
        };
        let agent = named(&facts.foreground_names).or_else(|| named(&facts.handed_over_by));
        // `claude` typed at a shell and quit: the shell is in front again,
        // reading its next command, and the title and screen Claude left
        // name it no longer. Reading: a script's shell is in front for a
        // moment between its commands (`sh -c 'cat dialog; exec app'`),
        // and facts read then would stand until the next look.
        let shell_in_front = agent.is_none()
            && facts.reading_terminal
            && if facts.foreground_names.is_empty() {
                self.rules
                    .agent_for_command(std::slice::from_ref(&facts.foreground_command))
            } else {
                self.rules.agent_for_names(&facts.foreground_names)
            }
            .is_some_and(|a| a.name == SHELL);
        if agent != self.process_agent || shell_in_front != self.shell_in_front {
            self.process_agent = agent;
            self.shell_in_front = shell_in_front;
            self.reclassify_title(now_ms);
        }
        self.note_agent(now_ms);
        if !self.asker_in_front() {
            self.withdraw_status();
        }
    }
}

impl Detector {
    /// Whether the process that asked for the status protocol is still in
    /// front of the terminal: the process in front, or a shell that runs
    /// it (a shell that asked with its own `printf` runs its next command
    /// in front of itself). `true` where processes are not evidence.
    pub(super) fn asker_in_front(&self) -> bool {
        match self.asker {
            Some(Some(p)) => self.front.contains(&p),
            _ => true,
        }
    }
}
