//! How to answer a dialog, as rule files say it: the answers hm knows
//! ([`Answer`]: approve, deny, always), the keys that give one ([`Key`]), an
//! `[[action]]` entry ([`ActionRule`]), and how a dialog names what it
//! asks about ([`SubjectRule`]: the command to run, the file to edit, the
//! folder to trust).
//!
//! This is data only: which dialog is on a screen, and whether the keys
//! may be sent now, is `detect::dialog`'s business. Keys are names, turned
//! into bytes only when they are sent, because an arrow's bytes depend on
//! the mode the program has put its terminal in at that moment.

use super::{Pattern, Region};

/// The answers hm can give a dialog for a person, by hand (`hm approve`,
/// `hm deny`) or by an `[[automation]]` rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Answer {
    Approve,
    Deny,
    /// Approve with the dialog's own option that stops the agent asking
    /// again for the like (`hm approve --always`): Claude Code's `Yes, and
    /// switch to accept edits ... for this session` or `Yes, and don't ask
    /// again for ...`, Codex's `Yes, and don't ask again for commands that
    /// start with ...`, Gemini CLI's `Allow for this session`. Only where
    /// the dialog shows such an option.
    Always,
}

impl Answer {
    pub const ALL: [Answer; 3] = [Answer::Approve, Answer::Deny, Answer::Always];

    /// As rule files, automation entries, ACT and JSON name it.
    pub fn name(self) -> &'static str {
        match self {
            Answer::Approve => "approve",
            Answer::Deny => "deny",
            Answer::Always => "always",
        }
    }

    pub fn from_name(name: &str) -> Option<Answer> {
        Answer::ALL.into_iter().find(|a| a.name() == name)
    }

    /// `approve`, `always approve`: the verb, for messages.
    pub fn verb(self) -> &'static str {
        match self {
            Answer::Always => "always approve",
            a => a.name(),
        }
    }

    /// `approved`, `denied`: for messages.
    pub fn past(self) -> &'static str {
        match self {
            Answer::Approve => "approved",
            Answer::Deny => "denied",
            Answer::Always => "always approved",
        }
    }

    /// `approving`, `denying`: for messages while the answer is on its way.
    pub fn doing(self) -> &'static str {
        match self {
            Answer::Approve => "approving",
            Answer::Deny => "denying",
            Answer::Always => "always approving",
        }
    }
}

/// A key an action presses. The names are those of `hm send --keys`
/// (tmux's), limited to what answering a dialog needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    Enter,
    Escape,
    Tab,
    BackTab,
    Space,
    Backspace,
    Up,
    Down,
    Left,
    Right,
    /// A character typed as itself (`y`, `1`).
    Char(char),
}

impl Key {
    /// The names [`Key::parse`] takes besides single characters.
    pub const NAMES: &str = "Enter, Escape, Tab, BTab, Space, BSpace, Up, Down, Left, Right";

    pub fn parse(name: &str) -> Option<Key> {
        Some(match name {
            "Enter" => Key::Enter,
            "Escape" | "Esc" => Key::Escape,
            "Tab" => Key::Tab,
            "BTab" => Key::BackTab,
            "Space" => Key::Space,
            "BSpace" | "Backspace" => Key::Backspace,
            "Up" => Key::Up,
            "Down" => Key::Down,
            "Left" => Key::Left,
            "Right" => Key::Right,
            _ => {
                let mut chars = name.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) if !c.is_control() => Key::Char(c),
                    _ => return None,
                }
            }
        })
    }

    /// The name as a rule file writes it.
    pub fn name(&self) -> String {
        match self {
            Key::Enter => "Enter".into(),
            Key::Escape => "Escape".into(),
            Key::Tab => "Tab".into(),
            Key::BackTab => "BTab".into(),
            Key::Space => "Space".into(),
            Key::Backspace => "BSpace".into(),
            Key::Up => "Up".into(),
            Key::Down => "Down".into(),
            Key::Left => "Left".into(),
            Key::Right => "Right".into(),
            Key::Char(c) => c.to_string(),
        }
    }

    /// What a terminal sends for this key; arrows as SS3 (`ESC O A`) when
    /// the program asked for application cursor keys.
    pub fn bytes(&self, app_cursor: bool) -> Vec<u8> {
        let arrow = |final_byte: u8| {
            let intro = if app_cursor { b'O' } else { b'[' };
            vec![0x1b, intro, final_byte]
        };
        match self {
            Key::Enter => b"\r".to_vec(),
            Key::Escape => vec![0x1b],
            Key::Tab => b"\t".to_vec(),
            Key::BackTab => b"\x1b[Z".to_vec(),
            Key::Space => b" ".to_vec(),
            Key::Backspace => vec![0x7f],
            Key::Up => arrow(b'A'),
            Key::Down => arrow(b'B'),
            Key::Right => arrow(b'C'),
            Key::Left => arrow(b'D'),
            Key::Char(c) => c.to_string().into_bytes(),
        }
    }
}

/// One `[[action]]`: the keys that give `answer` to the dialog that screen
/// rule `rule` recognises, when rows matching each of `requires` are in it,
/// and the steps that follow once the dialog shows the first was taken.
#[derive(Debug, Clone)]
pub struct ActionRule {
    /// The dialog's screen rule, `agent.rule` as signals name it.
    pub rule: String,
    pub answer: Answer,
    pub keys: Vec<Key>,
    /// Rows the dialog must show for the keys to mean the answer: the
    /// option Enter would pick is the one selected (`❯ 1. Yes`), the
    /// key hint the keys rely on is shown.
    pub requires: Vec<Pattern>,
    /// Keys whose meaning depends on the ones before having been taken
    /// (Enter after Down): each step is pressed only once the rule's
    /// region shows its rows, so that a key the program dropped does not
    /// turn the next one into another answer.
    pub then: Vec<Step>,
    /// `file:line` of the entry, for errors found once all files are read.
    pub at: String,
}

impl ActionRule {
    /// Every key of the answer, steps included, by name.
    pub fn key_names(&self) -> Vec<String> {
        self.keys
            .iter()
            .chain(self.then.iter().flat_map(|s| &s.keys))
            .map(Key::name)
            .collect()
    }
}

/// A later step of an answer: `keys`, once rows matching each of
/// `requires` are in the region of the dialog's rule.
#[derive(Debug, Clone)]
pub struct Step {
    pub keys: Vec<Key>,
    pub requires: Vec<Pattern>,
}

/// How a dialog says what it asks about, `subject = { ... }` on a rule:
/// patterns over the text of a region (its rows joined by newlines, so a
/// pattern may span rows), each with a group named `subject`; the first
/// that matches gives it.
#[derive(Debug, Clone)]
pub struct SubjectRule {
    pub region: Region,
    /// As a condition's `lines`: at most this many non-empty rows, 0 for
    /// all rows (blank ones included).
    pub lines: usize,
    pub patterns: Vec<Pattern>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_named_as_hm_send_names_them() {
        assert_eq!(Key::parse("Enter"), Some(Key::Enter));
        assert_eq!(Key::parse("Esc"), Some(Key::Escape));
        assert_eq!(Key::parse("y"), Some(Key::Char('y')));
        assert_eq!(Key::parse("❯"), Some(Key::Char('❯')));
        assert_eq!(Key::parse("enter"), None);
        assert_eq!(Key::parse("yy"), None);
        assert_eq!(Key::parse("\u{7}"), None);
        assert_eq!(Key::parse(""), None);
        for name in Key::NAMES.split(", ") {
            let key = Key::parse(name).expect(name);
            assert_eq!(key.name(), name);
        }
    }

    #[test]
    fn arrows_follow_the_cursor_key_mode() {
        assert_eq!(Key::Down.bytes(false), b"\x1b[B");
        assert_eq!(Key::Down.bytes(true), b"\x1bOB");
        assert_eq!(Key::Enter.bytes(true), b"\r");
        assert_eq!(Key::Escape.bytes(false), [0x1b]);
        assert_eq!(Key::Char('é').bytes(false), "é".as_bytes());
    }
}
