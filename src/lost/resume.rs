//! An agent's resume command, from the command it was started with: each
//! CLI's own, read from its `--help` (Claude Code 2.1.330, Codex 0.169.0,
//! Gemini CLI 0.61.0): `claude --resume ID`, `codex resume ID`,
//! `gemini --resume ID`. The session's other options go along (its model,
//! its permissions); a prompt given on the command line does not, since
//! the conversation already has it, and neither do the options that pick
//! or start another conversation. A session that did not run the agent's
//! conversation on its screen (`claude -p`, `codex exec`) has none.

use crate::agent_hooks::Agent;

/// How an agent's options read: which take a value (one, or a list up to
/// the next option, or one if the next word is not an option), which are
/// dropped (they pick or start another conversation), which mean it ran
/// without its interactive screen, and its subcommands.
struct Options {
    value: &'static [&'static str],
    list: &'static [&'static str],
    optional: &'static [&'static str],
    drop: &'static [&'static str],
    batch: &'static [&'static str],
    subcommands: &'static [&'static str],
}

/// From `claude --help` (Claude Code 2.1.330).
const CLAUDE: Options = Options {
    value: &[
        "--agent",
        "--agents",
        "--append-system-prompt",
        "--autocompact",
        "--debug-file",
        "--effort",
        "--environment",
        "--fallback-model",
        "--input-format",
        "--json-schema",
        "--max-budget-usd",
        "--model",
        "-n",
        "--name",
        "--output-format",
        "--permission-mode",
        "--permission-prompts",
        "--permission-prompt-tool",
        "--plugin-dir",
        "--plugin-url",
        "--remote-control-session-name-prefix",
        "--session-id",
        "--setting-sources",
        "--settings",
        "--system-prompt",
        "--system-prompt-snapshot",
    ],
    list: &[
        "--add-dir",
        "--allowedTools",
        "--allowed-tools",
        "--betas",
        "--disallowedTools",
        "--disallowed-tools",
        "--file",
        "--mcp-config",
        "--tools",
    ],
    optional: &[
        "--cloud",
        "-d",
        "--debug",
        "--from-pr",
        "--prompt-suggestions",
        "--remote-control",
        "-r",
        "--resume",
        "--teleport",
        "-w",
        "--worktree",
    ],
    drop: &[
        "-r",
        "--resume",
        "-c",
        "--continue",
        "--session-id",
        "--fork-session",
        "--from-pr",
        "--teleport",
        "--cloud",
        "--bg",
        "--background",
    ],
    batch: &["-p", "--print"],
    subcommands: &[
        "agents",
        "attach",
        "auth",
        "auto-mode",
        "doctor",
        "gateway",
        "import",
        "install",
        "logs",
        "mcp",
        "plugin",
        "purge",
        "respawn",
        "rm",
        "setup-token",
        "stop",
        "ultrareview",
        "update",
    ],
};

/// From `codex --help` and `codex resume --help` (Codex 0.169.0).
const CODEX: Options = Options {
    value: &[
        "-c",
        "--config",
        "--enable",
        "--disable",
        "--remote",
        "--remote-auth-token-env",
        "-m",
        "--model",
        "--local-provider",
        "-p",
        "--profile",
        "-s",
        "--sandbox",
        "-C",
        "--cd",
        "--add-dir",
        "-a",
        "--ask-for-approval",
    ],
    list: &["-i", "--image"],
    optional: &[],
    drop: &["--last", "--all", "--include-non-interactive"],
    batch: &[],
    subcommands: &[
        "agents",
        "exec",
        "e",
        "review",
        "login",
        "logout",
        "mcp",
        "mcp-server",
        "plugin",
        "app-server",
        "remote-control",
        "completion",
        "update",
        "doctor",
        "sandbox",
        "debug",
        "apply",
        "a",
        "queue",
        "archive",
        "delete",
        "migrate-rollouts",
        "migrate-nfs-db",
        "unarchive",
        "fork",
        "cloud",
        "exec-server",
        "features",
        "help",
    ],
};

/// From `gemini --help` (Gemini CLI 0.61.0).
const GEMINI: Options = Options {
    value: &[
        "-m",
        "--model",
        "-i",
        "--prompt-interactive",
        "-w",
        "--worktree",
        "--approval-mode",
        "-r",
        "--resume",
        "--session-file",
        "--session-id",
        "-o",
        "--output-format",
    ],
    list: &[
        "--policy",
        "--admin-policy",
        "--allowed-mcp-server-names",
        "--allowed-tools",
        "-e",
        "--extensions",
        "--include-directories",
    ],
    optional: &[],
    drop: &[
        "-r",
        "--resume",
        "--session-file",
        "--session-id",
        "-i",
        "--prompt-interactive",
    ],
    batch: &[
        "-p",
        "--prompt",
        "-l",
        "--list-extensions",
        "--list-sessions",
        "--delete-session",
        "--acp",
        "--experimental-acp",
    ],
    subcommands: &["mcp", "extensions", "skills", "hooks"],
};

/// The agent's own arguments to resume conversation `id`, from those it
/// was started with; `None` if it did not run a conversation on its
/// screen (`claude -p`, `codex exec`).
/// The agent `command` runs (its program may sit behind `env`), and where
/// in `command` the agent's own arguments begin.
pub fn agent_of(command: &[String]) -> Option<(Agent, usize)> {
    let (program, rest) = command.split_first()?;
    let rest: Vec<std::ffi::OsString> = rest.iter().map(std::ffi::OsString::from).collect();
    let (agent, at, _) = crate::agent_hooks::agent_in(program.as_ref(), &rest)?;
    Some((agent, at + 1))
}

/// `command` with the agent's own arguments, from `at` on (see
/// [`agent_of`]), made into `own`: what runs it (`env` and its settings,
/// the program) stays as it is.
pub fn with_own(command: &[String], at: usize, own: Vec<String>) -> Vec<String> {
    let mut argv = command[..at].to_vec();
    argv.extend(own);
    argv
}

pub fn args(agent: Agent, args: &[String], id: &str) -> Option<Vec<String>> {
    let (kept, _) = own(agent, args)?;
    Some(match agent {
        Agent::Codex => {
            let mut own = vec!["resume".to_owned()];
            own.extend(kept);
            own.push(id.to_owned());
            own
        }
        Agent::Claude | Agent::Gemini => {
            let mut kept = kept;
            kept.extend(["--resume".to_owned(), id.to_owned()]);
            kept
        }
    })
}

/// The agent's own arguments to start a new conversation, from those of
/// a session that resumed or picked one (`hm restart --fresh` after a
/// restart that resumed): `None` if they pick none (they run as they
/// are), or if it ran no conversation on its screen.
pub fn fresh(agent: Agent, args: &[String]) -> Option<Vec<String>> {
    let (kept, picked) = own(agent, args)?;
    picked.then_some(kept)
}

/// The agent's options but those that pick or start a conversation and
/// its prompt, and whether any picked one; `None` for a session that ran
/// no conversation on its screen.
fn own(agent: Agent, args: &[String]) -> Option<(Vec<String>, bool)> {
    let opts = match agent {
        Agent::Claude => &CLAUDE,
        Agent::Codex => &CODEX,
        Agent::Gemini => &GEMINI,
    };
    let mut kept = Vec::new();
    let mut picked = false;
    let mut positionals = 0;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        i += 1;
        if a == "--" {
            // A prompt follows: the conversation has it already.
            break;
        }
        if !a.starts_with('-') || a == "-" {
            positionals += 1;
            if positionals == 1 {
                if opts.subcommands.contains(&a) {
                    return None;
                }
                if agent == Agent::Codex && a == "resume" {
                    // An earlier restore: its id and prompt go.
                    picked = true;
                    continue;
                }
            }
            continue;
        }
        let name = a.split_once('=').map_or(a, |(n, _)| n);
        if opts.batch.contains(&name) {
            return None;
        }
        let mut word = vec![a.to_owned()];
        if !a.contains('=') {
            let next_is_value = |j: usize| args.get(j).is_some_and(|n| !n.starts_with('-'));
            if opts.value.contains(&name) {
                if let Some(v) = args.get(i) {
                    word.push(v.clone());
                    i += 1;
                }
            } else if opts.list.contains(&name) {
                while next_is_value(i) {
                    word.push(args[i].clone());
                    i += 1;
                }
            } else if opts.optional.contains(&name) && next_is_value(i) {
                word.push(args[i].clone());
                i += 1;
            }
        }
        if opts.drop.contains(&name) {
            picked = true;
        } else {
            kept.extend(word);
        }
    }
    Some((kept, picked))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn a_fresh_start_drops_the_conversation_a_restart_resumed() {
        let resumed = words(&["--permission-mode", "default", "--resume", "abc"]);
        assert_eq!(
            fresh(Agent::Claude, &resumed),
            Some(words(&["--permission-mode", "default"]))
        );
        // Nothing picked: it runs as it was, prompt and all.
        assert_eq!(fresh(Agent::Claude, &words(&["--model", "x", "hi"])), None);
        assert_eq!(
            fresh(Agent::Codex, &words(&["resume", "--model", "x", "abc"])),
            Some(words(&["--model", "x"]))
        );
        assert_eq!(
            fresh(Agent::Gemini, &words(&["-y", "--resume", "g1"])),
            Some(words(&["-y"]))
        );
        // And resuming again replaces the old id.
        assert_eq!(
            args(Agent::Claude, &resumed, "new"),
            Some(words(&["--permission-mode", "default", "--resume", "new"]))
        );
    }
}
