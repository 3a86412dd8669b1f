//! Screen and title rules as data: the TOML files under `src/detect/rules/`
//! (compiled in) and the user's `$XDG_CONFIG_HOME/heimdall/rules/*.toml`.
//!
//! This module owns the rule file format, its validation (every error names
//! the file and line) and the merge of user files over the built-in ones.
//! It does not look at screens: matching is [`super::screen`]'s job.
//!
//! This file holds the rules as the matcher reads them ([`RuleSet`] and
//! what it is made of), the built-in set and the merge of user files. The
//! rest is one idea per file:
//! - `file`: the rule file format and its validation ([`parse`]).
//! - `pattern`: a rule's regex, checked when a user's file is read and
//!   compiled when first searched ([`Pattern`]).
//! - `needles`: the texts a pattern's matches contain, which spare most
//!   rows a search and most patterns their compiling.
//! - `action`: how to answer a dialog ([`ActionRule`]) and how a dialog
//!   names what it asks about ([`SubjectRule`]).

mod action;
mod commands;
mod file;
mod needles;
mod pattern;

pub use action::{ActionRule, Answer, Key, Step, SubjectRule};
pub use commands::{Commands, Kind, builtin_commands};
pub use file::parse;
pub use pattern::Pattern;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::verdict::{Detail, Primary};

/// The built-in rule files, in the order their agents are tried.
const BUILTIN: [(&str, &str); 10] = [
    ("claude.toml", include_str!("rules/claude.toml")),
    ("codex.toml", include_str!("rules/codex.toml")),
    // Before Gemini CLI, whose fork it is and whose placeholder it shares.
    ("qwen.toml", include_str!("rules/qwen.toml")),
    ("gemini.toml", include_str!("rules/gemini.toml")),
    ("aider.toml", include_str!("rules/aider.toml")),
    ("opencode.toml", include_str!("rules/opencode.toml")),
    ("pi.toml", include_str!("rules/pi.toml")),
    ("shell.toml", include_str!("rules/shell.toml")),
    ("programs.toml", include_str!("rules/programs.toml")),
    ("generic.toml", include_str!("rules/generic.toml")),
];

/// The agent name that makes a file's rules apply to every session.
pub const ANY_AGENT: &str = "*";

/// A rule file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    #[error("cannot read rule file '{}'", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot list rule directory '{}'", path.display())]
    List {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{at}: {message}")]
    Invalid { at: String, message: String },
}

/// Part of the screen a condition looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    /// Every row.
    Screen,
    /// The last `lines` non-empty rows.
    Bottom,
    /// Rows below the last input box (all rows when there is none).
    BelowInput,
    /// The `lines` non-empty rows just above the last input box (none when
    /// there is no input box).
    AboveInput,
    /// The text typed into the last input box.
    Input,
    /// The cursor's row up to the cursor, and only when nothing follows the
    /// cursor on that row.
    CursorLine,
    /// The `lines` non-empty rows above the cursor's row.
    AboveCursor,
}

impl Region {
    fn parse(name: &str) -> Option<Region> {
        Some(match name {
            "screen" => Region::Screen,
            "bottom" => Region::Bottom,
            "below_input" => Region::BelowInput,
            "above_input" => Region::AboveInput,
            "input" => Region::Input,
            "cursor_line" => Region::CursorLine,
            "above_cursor" => Region::AboveCursor,
            _ => return None,
        })
    }
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Region::Screen => "screen",
            Region::Bottom => "bottom",
            Region::BelowInput => "below_input",
            Region::AboveInput => "above_input",
            Region::Input => "input",
            Region::CursorLine => "cursor_line",
            Region::AboveCursor => "above_cursor",
        })
    }
}

/// One test over one region; a rule matches when all its conditions do.
#[derive(Debug, Clone)]
pub struct Condition {
    pub region: Region,
    /// At most this many non-empty rows of the region (from its bottom, or
    /// for `above_*` the nearest ones); 0 means all.
    pub lines: usize,
    /// Each must match some row; with `ordered`, each on a row below the
    /// previous one's.
    pub all: Vec<Pattern>,
    pub ordered: bool,
    /// At least one must match some row (when not empty).
    pub any: Vec<Pattern>,
    /// None may match any row.
    pub none: Vec<Pattern>,
    /// Only on the alternate screen (`true`) or only on the main one.
    pub alternate: Option<bool>,
}

/// A screen rule: when its conditions hold, the screen says `state`.
#[derive(Debug, Clone)]
pub struct ScreenRule {
    /// `agent.rule`, as signals name it.
    pub name: String,
    pub primary: Primary,
    pub detail: Option<Detail>,
    /// Higher is tried first; ties keep file order.
    pub priority: i32,
    pub conditions: Vec<Condition>,
    /// Whether a match also names the agent (rules of `*` files name
    /// none, unless they say `names_agent`).
    pub names_agent: Option<String>,
    /// What the dialog asks about (the command, the file, the folder), for
    /// dialog rules that say how to find it.
    pub subject: Option<SubjectRule>,
}

/// A title rule: the first that matches the window title decides what
/// the title says.
#[derive(Debug, Clone)]
pub struct TitleRule {
    pub name: String,
    pub pattern: Pattern,
    pub primary: Primary,
    pub detail: Option<Detail>,
}

/// How to find an agent's input box, whose text is the user's and so is
/// masked from every region but `input`.
#[derive(Debug, Clone)]
pub struct InputBox {
    /// The row the user types on.
    pub prompt: Pattern,
    /// When set, the row right above the prompt must match.
    pub above: Option<Pattern>,
    /// A row at most `span` rows below the prompt that ends the box; the
    /// rows between are typed text.
    pub below: Pattern,
    pub span: usize,
    /// Whether finding the box on a screen names the agent: not for a box
    /// of two bare rules, which many a program draws.
    pub names_agent: bool,
}

/// Everything known about one agent (or, for `*`, about any session).
#[derive(Debug, Clone)]
pub struct AgentRules {
    pub name: String,
    /// Where the rules came from (`built-in claude.toml` or a path).
    pub origin: String,
    /// Program names (argv[0]'s file name) that are this agent.
    pub commands: Vec<String>,
    /// A title matching one of these names the agent.
    pub identify_title: Vec<Pattern>,
    /// A screen row matching one of these names the agent.
    pub identify_screen: Vec<Pattern>,
    pub input: Option<InputBox>,
    pub rules: Vec<ScreenRule>,
    pub titles: Vec<TitleRule>,
    /// How to answer its dialogs, in file order (the first whose
    /// `requires` holds is the one used).
    pub actions: Vec<ActionRule>,
}

impl AgentRules {
    pub fn is_any(&self) -> bool {
        self.name == ANY_AGENT
    }

    /// The screen rule named `name` (`agent.rule`).
    pub fn rule(&self, name: &str) -> Option<&ScreenRule> {
        self.rules.iter().find(|r| r.name == name)
    }
}

/// All agents' rules, built-in then user, merged.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    pub agents: Vec<AgentRules>,
}

impl RuleSet {
    /// The agent named `name`.
    pub fn agent(&self, name: &str) -> Option<&AgentRules> {
        self.agents.iter().find(|a| a.name == name)
    }

    /// The agent whose program `command` runs, from argv[0]'s file name,
    /// or the program's that an `env` runs (`env -i NAME=VALUE... codex`).
    pub fn agent_for_command(&self, command: &[String]) -> Option<&AgentRules> {
        let first = program_of(command)?;
        let base = Path::new(first).file_name()?.to_str()?;
        self.agents
            .iter()
            .find(|a| !a.is_any() && a.commands.iter().any(|c| c == base))
    }

    /// The agent a process going by `names` is (its `comm`, the file names
    /// of its arguments): an agent over an interactive program or a shell,
    /// so that `node .../bin/opencode` is opencode, not a REPL.
    pub fn agent_for_names(&self, names: &[String]) -> Option<&AgentRules> {
        let of = |n: &String| self.agent_for_command(std::slice::from_ref(n));
        let ordinary = |a: &&AgentRules| matches!(a.name.as_str(), "shell" | "program");
        names
            .iter()
            .filter_map(of)
            .find(|a| !ordinary(a))
            .or_else(|| names.iter().find_map(of))
    }

    /// Merge one file's agent in: rules with the same name replace the
    /// existing ones in place, new ones are added; identification and the
    /// input box are replaced when the file gives them.
    fn merge(&mut self, file: AgentRules) {
        let Some(existing) = self.agents.iter_mut().find(|a| a.name == file.name) else {
            self.agents.push(file);
            return;
        };
        existing.origin = format!("{} + {}", existing.origin, file.origin);
        existing.commands.extend(file.commands);
        existing.identify_title.extend(file.identify_title);
        existing.identify_screen.extend(file.identify_screen);
        if file.input.is_some() {
            existing.input = file.input;
        }
        for rule in file.rules {
            match existing.rules.iter_mut().find(|r| r.name == rule.name) {
                Some(old) => *old = rule,
                None => existing.rules.push(rule),
            }
        }
        for rule in file.titles {
            match existing.titles.iter_mut().find(|r| r.name == rule.name) {
                Some(old) => *old = rule,
                None => existing.titles.push(rule),
            }
        }
        // A file that says how to give an answer to a dialog says it
        // whole: its entries replace the earlier ones for that answer.
        existing.actions.retain(|old| {
            !file
                .actions
                .iter()
                .any(|new| new.rule == old.rule && new.answer == old.answer)
        });
        existing.actions.extend(file.actions);
    }

    /// Every action names a screen rule of its own agent; checked once all
    /// files are merged, since a user's file may answer a built-in dialog.
    fn check_actions(&self) -> Result<(), RuleError> {
        for agent in &self.agents {
            for action in &agent.actions {
                if agent.rule(&action.rule).is_none() {
                    return Err(RuleError::Invalid {
                        at: action.at.clone(),
                        message: format!(
                            "the action's rule '{}' is not a screen rule of agent '{}'",
                            action.rule.escape_debug(),
                            agent.name.escape_debug()
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// Keep the `*` agents last, so that an agent's own rules are tried
    /// before the generic ones at equal priority.
    fn order(&mut self) {
        self.agents.sort_by_key(AgentRules::is_any);
    }
}

/// The built-in rules, compiled once.
pub fn builtin() -> Arc<RuleSet> {
    static BUILTIN_SET: OnceLock<Arc<RuleSet>> = OnceLock::new();
    BUILTIN_SET
        .get_or_init(|| {
            let mut set = RuleSet::default();
            for (name, text) in BUILTIN {
                // The built-in files are tested (`builtin_rules_compile`),
                // so a failure here is a build defect; skipping the file
                // keeps hm running with the other agents' rules.
                if let Ok(agent) = file::parse_builtin(&format!("built-in {name}"), text) {
                    set.merge(agent);
                }
            }
            set.order();
            Arc::new(set)
        })
        .clone()
}

/// The built-in rules with the `*.toml` files of `user_dir` merged over
/// them (in file-name order). A missing directory is no error. Without
/// user files this is the built-in set itself, not a copy: every
/// supervisor holds its rules for its whole life.
pub fn load_rules(user_dir: Option<&Path>) -> Result<Arc<RuleSet>, RuleError> {
    let Some(dir) = user_dir else {
        return Ok(builtin());
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(builtin()),
        Err(source) => {
            return Err(RuleError::List {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    if paths.is_empty() {
        return Ok(builtin());
    }
    paths.sort();
    let mut set = (*builtin()).clone();
    for path in paths {
        let text = std::fs::read_to_string(&path).map_err(|source| RuleError::Read {
            path: path.clone(),
            source,
        })?;
        set.merge(parse(&path.display().to_string(), &text)?);
    }
    set.check_actions()?;
    set.order();
    Ok(Arc::new(set))
}

/// The user's rule directory, `$XDG_CONFIG_HOME/heimdall/rules` (or
/// `~/.config/heimdall/rules`), from the given environment values.
pub fn user_rules_dir(
    xdg_config_home: Option<&Path>,
    home: Option<&Path>,
) -> Option<std::path::PathBuf> {
    xdg_config_home
        .filter(|p| p.is_absolute())
        .map(Path::to_path_buf)
        .or_else(|| home.map(|h| h.join(".config")))
        .map(|c| c.join("heimdall").join("rules"))
}

/// The program `command` runs: argv[0], or the one an `env` before it
/// runs (`env [-i] [-u NAME] [-C DIR] [NAME=VALUE]... PROGRAM`).
pub fn program_of(command: &[String]) -> Option<&str> {
    command.get(program_at(command)?).map(String::as_str)
}

/// Where in `command` the program it runs is (see [`program_of`]): 0, or
/// past an `env` and what it sets; 0 for an `env` that runs nothing.
pub fn program_at(command: &[String]) -> Option<usize> {
    let first = command.first()?;
    if Path::new(first).file_name().is_none_or(|b| b != "env") {
        return Some(0);
    }
    let mut i = 1;
    while let Some(a) = command.get(i) {
        match a.as_str() {
            "-u" | "--unset" | "-C" | "--chdir" => i += 2,
            "--" => return command.get(i + 1).map(|_| i + 1),
            _ if a.starts_with('-') || a.contains('=') => i += 1,
            _ => return Some(i),
        }
    }
    Some(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_an_env_runs_is_found_past_what_it_sets() {
        let of = |w: &[&str]| {
            let w: Vec<String> = w.iter().map(|s| (*s).to_owned()).collect();
            (program_at(&w), program_of(&w).map(str::to_owned))
        };
        assert_eq!(of(&["claude", "-c"]), (Some(0), Some("claude".into())));
        let run = ["env", "-i", "-u", "HOME", "-C", "/d", "A=1", "claude"];
        assert_eq!(of(&run), (Some(7), Some("claude".into())));
        assert_eq!(of(&["env", "--", "x"]), (Some(2), Some("x".into())));
        assert_eq!(of(&["env", "A=1"]), (Some(0), Some("env".into())));
    }

    #[test]
    fn builtin_rules_compile() {
        for (name, text) in BUILTIN {
            if let Err(e) = parse(name, text) {
                panic!("{e}");
            }
        }
        if let Err(e) = builtin().check_actions() {
            panic!("{e}");
        }
        assert!(builtin().agent("claude").is_some());
        assert!(builtin().agents.last().is_some_and(AgentRules::is_any));
    }

    #[test]
    fn a_user_rule_with_the_same_name_replaces_the_builtin_one() {
        let dir = tempfile::tempdir().unwrap();
        let builtin_count = builtin().agent("claude").unwrap().rules.len();
        std::fs::write(
            dir.path().join("claude.toml"),
            "agent = \"claude\"\n[[rule]]\nname = \"permission\"\nstate = \"waiting\"\n\
             detail = \"permission\"\nall = ['^MY DIALOG$']\n\
             [[rule]]\nname = \"brand_new\"\nstate = \"idle\"\nall = ['^zzz$']\n",
        )
        .unwrap();
        let set = load_rules(Some(dir.path())).unwrap();
        let claude = set.agent("claude").unwrap();
        assert_eq!(claude.rules.len(), builtin_count + 1);
        let permission = claude
            .rules
            .iter()
            .find(|r| r.name == "claude.permission")
            .unwrap();
        assert_eq!(permission.conditions[0].all[0].source(), "^MY DIALOG$");
    }

    #[test]
    fn a_missing_user_directory_is_no_error() {
        let set = load_rules(Some(Path::new("/nonexistent/heimdall/rules"))).unwrap();
        assert_eq!(set.agents.len(), builtin().agents.len());
    }

    #[test]
    fn without_user_files_the_builtin_set_is_shared_not_copied() {
        let empty = tempfile::tempdir().unwrap();
        std::fs::write(empty.path().join("notes.txt"), "not a rule file").unwrap();
        for dir in [
            None,
            Some(Path::new("/nonexistent/heimdall/rules")),
            Some(empty.path()),
        ] {
            assert!(Arc::ptr_eq(&load_rules(dir).unwrap(), &builtin()));
        }
    }

    #[test]
    fn a_bad_user_file_is_one_line_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.toml");
        std::fs::write(
            &path,
            "agent = \"claude\"\n[[title]]\nname = \"t\"\nstate = \"idle\"\npattern = '[a'\n",
        )
        .unwrap();
        let err = load_rules(Some(dir.path())).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("{}:5: bad regex", path.display())),
            "{err}"
        );
    }

    #[test]
    fn a_user_file_answers_a_builtin_dialog_and_replaces_an_answer() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("claude.toml"),
            "agent = \"claude\"\n[[action]]\nrule = \"question\"\nanswer = \"approve\"\n\
             keys = [\"1\"]\n\
             [[action]]\nrule = \"permission\"\nanswer = \"deny\"\nkeys = [\"3\", \"Enter\"]\n",
        )
        .unwrap();
        let set = load_rules(Some(dir.path())).unwrap();
        let claude = set.agent("claude").unwrap();
        let keys = |rule: &str, answer: Answer| -> Vec<Vec<String>> {
            claude
                .actions
                .iter()
                .filter(|a| a.rule == rule && a.answer == answer)
                .map(|a| a.keys.iter().map(Key::name).collect())
                .collect()
        };
        assert_eq!(keys("claude.question", Answer::Approve), [["1"]]);
        assert_eq!(keys("claude.permission", Answer::Deny), [["3", "Enter"]]);
        // The built-in approve is untouched.
        assert_eq!(keys("claude.permission", Answer::Approve), [["1"]]);
    }

    #[test]
    fn an_action_for_no_rule_of_its_agent_is_one_line_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("codex.toml");
        std::fs::write(
            &path,
            "agent = \"codex\"\n\n[[action]]\nrule = \"nope\"\nanswer = \"approve\"\nkeys = [\"y\"]\n",
        )
        .unwrap();
        let err = load_rules(Some(dir.path())).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "{}:4: the action's rule 'codex.nope' is not a screen rule of agent 'codex'",
                path.display()
            )
        );
    }
}
