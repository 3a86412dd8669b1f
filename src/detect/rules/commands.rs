//! The programs the built-in rule files name, read from their
//! `[identify] commands` alone: for code that needs to know an agent, an
//! interactive program or a shell by name but no rules (the classifier a
//! session gets, the default classifier's check of a program reading its
//! terminal). Parsing only these lists keeps the rules' patterns out of a
//! supervisor that has no `agent` classifier.

use std::sync::OnceLock;

use serde::Deserialize;

use super::{ANY_AGENT, BUILTIN};

/// What a program named in the rule files is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A coding agent with rules of its own (`claude`, `opencode`).
    Agent,
    /// An interactive program that reads its terminal all the time
    /// without asking anything: a REPL, an editor, a pager, a monitor.
    Program,
    /// An interactive shell.
    Shell,
}

/// The names of each kind, in the rule files' order.
#[derive(Debug, Default)]
pub struct Commands {
    pub agents: Vec<String>,
    pub programs: Vec<String>,
    pub shells: Vec<String>,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(Debug, PartialEq))]
struct FileHead {
    agent: String,
    #[serde(default)]
    identify: Identify,
}

#[derive(Deserialize, Default)]
#[cfg_attr(test, derive(Debug, PartialEq))]
struct Identify {
    #[serde(default)]
    commands: Vec<String>,
}

impl Commands {
    /// What the program named `name` (a file name, `claude`) is.
    pub fn kind(&self, name: &str) -> Option<Kind> {
        let has = |list: &[String]| list.iter().any(|c| c == name);
        if has(&self.agents) {
            Some(Kind::Agent)
        } else if has(&self.programs) {
            Some(Kind::Program)
        } else if has(&self.shells) {
            Some(Kind::Shell)
        } else {
            None
        }
    }

    /// What a process going by `names` is: an agent over a program over
    /// a shell (`node .../bin/opencode` is opencode, not a REPL).
    pub fn kind_of(&self, names: &[String]) -> Option<Kind> {
        [Kind::Agent, Kind::Program, Kind::Shell]
            .into_iter()
            .find(|k| names.iter().any(|n| self.kind(n) == Some(*k)))
    }
}

/// The part of a rule file [`FileHead`] reads: its top-level keys and its
/// `[identify]` table, up to the next table. The rules after it are most
/// of the text, and parsing them took a third of a millisecond of every
/// session's start.
fn head_of(text: &str) -> &str {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with('[') && line.trim_end() != "[identify]" {
            return &text[..at];
        }
        at += line.len();
    }
    text
}

/// The built-in files' programs, read once.
pub fn builtin_commands() -> &'static Commands {
    static COMMANDS: OnceLock<Commands> = OnceLock::new();
    COMMANDS.get_or_init(|| {
        let mut c = Commands::default();
        for (_, text) in BUILTIN {
            // The built-in files are tested; one that did not parse would
            // only name nothing.
            let Ok(head) = toml::from_str::<FileHead>(head_of(text)) else {
                continue;
            };
            let list = match head.agent.as_str() {
                ANY_AGENT => continue,
                super::super::SHELL => &mut c.shells,
                super::super::PROGRAM => &mut c.programs,
                _ => &mut c.agents,
            };
            list.extend(head.identify.commands);
        }
        c
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_of_each_file_says_what_the_whole_file_says() {
        for (name, text) in BUILTIN {
            let whole = toml::from_str::<FileHead>(text).expect(name);
            let head = toml::from_str::<FileHead>(head_of(text)).expect(name);
            assert_eq!(head, whole, "{name}");
        }
    }

    #[test]
    fn the_lists_are_the_rule_files() {
        let c = builtin_commands();
        let set = super::super::builtin();
        for a in &set.agents {
            for name in &a.commands {
                let want = match a.name.as_str() {
                    "shell" => Kind::Shell,
                    "program" => Kind::Program,
                    _ => Kind::Agent,
                };
                assert_eq!(c.kind(name), Some(want), "{name}");
            }
        }
        assert_eq!(c.kind("claude"), Some(Kind::Agent));
        assert_eq!(c.kind("vim"), Some(Kind::Program));
        assert_eq!(c.kind("bash"), Some(Kind::Shell));
        assert_eq!(c.kind("deploy"), None);
        let names = ["node".to_owned(), "opencode".to_owned()];
        assert_eq!(c.kind_of(&names), Some(Kind::Agent));
    }
}
