//! A program asking the person something, told by its process alone: the
//! check every session gets, whatever its classifier (but `none`), so that
//! a script waiting at `[y/N]`, `Password:`, `read` or `Press any key` is
//! `waiting · input` without the `agent` classifier.
//!
//! It needs no screen and no rules: the process in front of the terminal
//! is blocked reading it, and is not one that reads all the time (an
//! interactive shell at its prompt, a REPL, an editor, a pager, a coding
//! agent, or anything on the alternate screen). The names come from the
//! rule files' command lists ([`builtin_commands`]). The supervisor asks
//! when output settles and when its state is asked for; nothing here
//! reads the clock or `/proc`.

use std::path::Path;

use super::ProcessFacts;
use super::rules::{Kind, builtin_commands, program_of};

/// Interpreters that are a REPL when started bare, and a program like any
/// other when given a script (`python3 app.py`, `node -e ...`).
const SCRIPT_HOSTS: &[&str] = &[
    "python", "python3", "node", "deno", "bun", "lua", "perl", "ruby", "php",
];

/// What the session's own command is, as far as reading goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SessionCommand {
    /// An interactive shell (no script to run): reading at its prompt is
    /// rest, not a question.
    pub interactive_shell: bool,
    /// An agent or an interactive program, which reads its terminal all
    /// the time.
    pub interactive: bool,
    /// A script host given a script (`python3 app.py`): a program like
    /// any other, whatever the host alone would be.
    pub script: bool,
}

impl SessionCommand {
    /// The session's argv, as `hm run` started it (also behind `env`).
    pub fn of(argv: &[String]) -> SessionCommand {
        let base = program_of(argv)
            .and_then(|p| Path::new(p).file_name())
            .and_then(|b| b.to_str())
            .unwrap_or("");
        let bare = argv.iter().skip(1).all(|a| a.starts_with('-'))
            && !argv
                .iter()
                .any(|a| matches!(a.as_str(), "-c" | "-e" | "-m"));
        // `python3 -i -c '...'`, `node -i`: a REPL once the code given
        // has run (it read `waiting · input` at its `>>>` for good).
        let inspect = argv
            .iter()
            .skip(1)
            .any(|a| matches!(a.as_str(), "-i" | "--interactive"));
        let script = !bare && !inspect && SCRIPT_HOSTS.contains(&base);
        let kind = builtin_commands().kind(base);
        SessionCommand {
            interactive_shell: kind == Some(Kind::Shell) && bare,
            interactive: !script && matches!(kind, Some(Kind::Agent | Kind::Program)),
            script,
        }
    }
}

/// Shells with no line editor: at their prompt they read a line in
/// canonical mode, as a script's `read` does (dash is `sh` on Debian).
const NO_LINE_EDITOR: &[&str] = &["sh", "dash", "posh"];

/// Whether the process in front is an interactive shell at its prompt.
/// That is a shell with no script to run: the session's own as started
/// (`session_shell`), or the one in front now (`sh -c '...; exec bash'`
/// became one; so is a `bash` typed at a prompt). At the prompt it has left
/// canonical mode for its line editor, or it has no line editor (dash). A
/// `read` typed at dash's prompt is then taken for the prompt; it is the
/// user's own, not a program's question.
pub fn at_shell_prompt(session_shell: bool, facts: &ProcessFacts) -> bool {
    let names = &facts.foreground_names;
    // The process in front goes by its name alone: no script, no `-c`.
    let bare_shell = names.len() == 1 && builtin_commands().kind(&names[0]) == Some(Kind::Shell);
    let own = facts.foreground_is_session && facts.front.len() <= 1 && session_shell;
    if !(bare_shell || own) {
        return false;
    }
    let editorless = names
        .first()
        .or(Some(&facts.foreground_command))
        .is_some_and(|n| NO_LINE_EDITOR.contains(&n.as_str()));
    !facts.canonical || editorless
}

/// The rule that says the session asks, if it does: the process in
/// front reads the terminal and is not one that reads all the time.
/// `alternate`: the screen is the alternate one (a full-screen program
/// reading keys is at rest).
pub fn asking(cmd: &SessionCommand, facts: &ProcessFacts, alternate: bool) -> Option<&'static str> {
    if !facts.reading_terminal || alternate {
        return None;
    }
    if at_shell_prompt(cmd.interactive_shell, facts) {
        return None;
    }
    if facts.foreground_is_session {
        // The front may be a job the session's shell runs in its own
        // group (`sh -c 'python3 ask.py'`), which is what reads.
        let front_reads_always = facts.front.len() > 1
            && matches!(
                builtin_commands().kind_of(&facts.foreground_names),
                Some(Kind::Agent | Kind::Program)
            );
        let own_reads_always = facts.front.len() <= 1 && cmd.interactive;
        (!front_reads_always && !own_reads_always).then_some("process.reading")
    } else {
        match builtin_commands().kind_of(&facts.foreground_names) {
            Some(Kind::Agent | Kind::Program) => None,
            _ => Some("process.job_reading"),
        }
    }
}

/// Whether the process in front reads the terminal as a program that
/// reads it all the time and is no agent or shell (a REPL: python3, node,
/// psql; a remote shell through ssh), off the alternate screen. Its
/// reading says nothing, but what it printed may: `input('Continue? [y/N]
/// ')` run in python3's REPL asks on the cursor's row, which the generic
/// rules read (never a row that starts like a prompt with text after it,
/// which is typed).
pub fn program_reading(cmd: &SessionCommand, facts: &ProcessFacts, alternate: bool) -> bool {
    facts.reading_terminal
        && !alternate
        && !at_shell_prompt(cmd.interactive_shell, facts)
        && builtin_commands().kind_of(&facts.foreground_names) == Some(Kind::Program)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::ProcessId;

    fn argv(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| (*s).to_owned()).collect()
    }

    fn facts(session: bool, canonical: bool, names: &[&str], depth: usize) -> ProcessFacts {
        ProcessFacts {
            foreground_is_session: session,
            reading_terminal: true,
            canonical,
            foreground_command: names.first().copied().unwrap_or("").to_owned(),
            front: (0..depth)
                .map(|i| ProcessId {
                    pid: 100 + i as i32,
                    started: 1,
                    image: 1,
                })
                .collect(),
            foreground_names: argv(names),
            handed_over_by: Vec::new(),
        }
    }

    #[test]
    fn a_script_reading_asks_and_a_shell_at_its_prompt_does_not() {
        let script = SessionCommand::of(&argv(&["bash", "-c", "read -p 'Go? [y/N] ' x"]));
        assert_eq!(
            asking(&script, &facts(true, true, &["bash"], 1), false),
            Some("process.reading")
        );
        let shell = SessionCommand::of(&argv(&["bash"]));
        assert!(shell.interactive_shell);
        assert_eq!(
            asking(&shell, &facts(true, false, &["bash"], 1), false),
            None
        );
        // Its `read` builtin, typed and entered, keeps canonical mode.
        assert_eq!(
            asking(&shell, &facts(true, true, &["bash"], 1), false),
            Some("process.reading")
        );
        // Not reading: nothing asks.
        let mut busy = facts(true, true, &["bash"], 1);
        busy.reading_terminal = false;
        assert_eq!(asking(&script, &busy, false), None);
    }

    #[test]
    fn programs_that_read_all_the_time_do_not_ask() {
        let shell = SessionCommand::of(&argv(&["bash"]));
        for names in [
            &["vim"][..],
            &["python3"],
            &["node", "opencode"],
            &["claude"],
        ] {
            assert_eq!(asking(&shell, &facts(false, false, names, 1), false), None);
        }
        assert_eq!(
            asking(&shell, &facts(false, true, &["deploy"], 1), false),
            Some("process.job_reading")
        );
        // A raw-mode `Press any key` from an unknown program asks.
        assert_eq!(
            asking(&shell, &facts(false, false, &["setup"], 1), false),
            Some("process.job_reading")
        );
        // On the alternate screen, whatever it is, it is at rest.
        assert_eq!(asking(&shell, &facts(false, false, &["mc"], 1), true), None);
        let repl = SessionCommand::of(&argv(&["python3"]));
        assert_eq!(
            asking(&repl, &facts(true, false, &["python3"], 1), false),
            None
        );
        let script = SessionCommand::of(&argv(&["python3", "ask.py"]));
        assert_eq!(
            asking(&script, &facts(true, false, &["python3"], 1), false),
            Some("process.reading")
        );
        let env = SessionCommand::of(&argv(&["env", "-i", "A=1", "claude"]));
        assert!(env.interactive);
        // `sh -c 'vim notes'`: the session's shell runs an editor in front.
        let sh = SessionCommand::of(&argv(&["sh", "-c", "vim notes"]));
        assert_eq!(asking(&sh, &facts(true, false, &["vim"], 2), false), None);
    }

    /// A REPL reads all the time: whether it asks is on its screen, not
    /// in its reading. Not so for an agent, a shell at its prompt, or a
    /// full-screen program.
    #[test]
    fn a_repl_reading_leaves_the_question_to_its_screen() {
        for interactive in [
            &["python3", "-i", "-c", "print(1)"][..],
            &["node", "--interactive"],
        ] {
            let c = SessionCommand::of(&argv(interactive));
            assert!(c.interactive && !c.script, "{interactive:?}");
        }
        let repl = SessionCommand::of(&argv(&["python3", "-q"]));
        let reading = facts(true, false, &["python3"], 1);
        assert_eq!(asking(&repl, &reading, false), None);
        assert!(program_reading(&repl, &reading, false));
        assert!(!program_reading(&repl, &reading, true));
        let mut busy = reading.clone();
        busy.reading_terminal = false;
        assert!(!program_reading(&repl, &busy, false));
        // A REPL started at a shell's prompt, as a job.
        let shell = SessionCommand::of(&argv(&["bash"]));
        assert!(program_reading(
            &shell,
            &facts(false, false, &["node"], 1),
            false
        ));
        assert!(!program_reading(
            &shell,
            &facts(true, false, &["bash"], 1),
            false
        ));
        let agent = SessionCommand::of(&argv(&["claude"]));
        assert!(!program_reading(
            &agent,
            &facts(true, false, &["claude"], 1),
            false
        ));
    }

    /// Shells that are at their prompt whatever the session's command
    /// says: dash (no line editor: its prompt reads in canonical mode),
    /// a shell a script ends in (`sh -c '...; exec bash'`), one typed at a
    /// prompt. The inbox listed each as needing its user for good.
    #[test]
    fn a_shell_at_its_prompt_is_not_asking_however_it_came_there() {
        let dash = SessionCommand::of(&argv(&["sh"]));
        assert_eq!(asking(&dash, &facts(true, true, &["sh"], 1), false), None);
        let ends_in_bash = SessionCommand::of(&argv(&["sh", "-c", "echo hi; exec bash"]));
        assert!(!ends_in_bash.interactive_shell);
        assert_eq!(
            asking(&ends_in_bash, &facts(true, false, &["bash"], 1), false),
            None
        );
        // Its own `read` builtin, typed at the prompt, keeps canonical mode.
        assert_eq!(
            asking(&ends_in_bash, &facts(true, true, &["bash"], 1), false),
            Some("process.reading")
        );
        // Before the exec, the script's `read` in dash asks.
        let asks = SessionCommand::of(&argv(&["sh", "-c", "read a; exec bash"]));
        assert_eq!(
            asking(
                &asks,
                &facts(true, true, &["sh", "read a; exec bash"], 1),
                false
            ),
            Some("process.reading")
        );
        // Shells started at a prompt, at theirs; a script run there asks.
        let shell = SessionCommand::of(&argv(&["bash"]));
        for names in [&["bash"][..], &["zsh"], &["sh"]] {
            let canonical = names == ["sh"];
            assert_eq!(
                asking(&shell, &facts(false, canonical, names, 1), false),
                None,
                "{names:?}"
            );
        }
        assert_eq!(
            asking(&shell, &facts(false, true, &["sh", "ask.sh"], 1), false),
            Some("process.job_reading")
        );
    }
}
