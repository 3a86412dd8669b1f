//! How to answer a dialog, as rule files say it: the answers hm knows
//! ([`Answer`]: approve, deny, always, choose), the keys that give one ([`Key`]), an
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
/// `hm deny`, `hm choose`) or by an `[[automation]]` rule.
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
    /// Pick the dialog's numbered option `n` (`hm choose`, a digit in the
    /// inbox): one of the choices of Claude Code's question, or any option
    /// of a dialog that numbers them. An `[[action]]` for it presses
    /// [`Key::Option`] (its rule files' `{option}`), the digit asked for;
    /// there, and in [`Answer::from_name`], `n` is 0: whichever is asked.
    Choose(u8),
}

impl Answer {
    /// The answers whose name says all of them (not [`Answer::Choose`],
    /// which needs its option).
    pub const ALL: [Answer; 3] = [Answer::Approve, Answer::Deny, Answer::Always];

    /// The options a choice can name: the digits a dialog numbers them by.
    pub const OPTIONS: std::ops::RangeInclusive<u8> = 1..=9;

    /// As rule files, automation entries, ACT and JSON name it (a choice's
    /// option goes beside its name: ACT's `option`).
    pub fn name(self) -> &'static str {
        match self {
            Answer::Approve => "approve",
            Answer::Deny => "deny",
            Answer::Always => "always",
            Answer::Choose(_) => "choose",
        }
    }

    /// By name, as rule files give it: `choose` is [`Answer::Choose`] of
    /// no option in particular.
    pub fn from_name(name: &str) -> Option<Answer> {
        match name {
            "choose" => Some(Answer::Choose(0)),
            _ => Answer::ALL.into_iter().find(|a| a.name() == name),
        }
    }

    /// As an ACT names it: `choose` with its option (1 to 9), else by
    /// name alone.
    pub fn from_act(name: &str, option: Option<u8>) -> Result<Answer, String> {
        match (Answer::from_name(name), option) {
            (Some(Answer::Choose(_)), Some(n)) if Answer::OPTIONS.contains(&n) => {
                Ok(Answer::Choose(n))
            }
            (Some(Answer::Choose(_)), Some(n)) => {
                Err(format!("option {n} is not one a dialog numbers (1 to 9)"))
            }
            (Some(Answer::Choose(_)), None) => Err("choose needs the option's number".into()),
            // A client that names an option means to choose it: answering
            // otherwise would not be what it asked.
            (Some(a), Some(n)) => Err(format!("option {n} goes with choose, not {}", a.name())),
            (Some(a), None) => Ok(a),
            (None, _) => Err(format!(
                "unknown answer '{}' (expected approve, deny, always, choose or continue)",
                name.escape_debug()
            )),
        }
    }

    /// The option a choice picks, for ACT's `option`.
    pub fn option(self) -> Option<u8> {
        match self {
            Answer::Choose(n) => Some(n),
            _ => None,
        }
    }

    /// `approve`, `always approve`, `choose from`: the verb, for messages
    /// (`nothing to choose from yet`).
    pub fn verb(self) -> String {
        match self {
            Answer::Always => "always approve".into(),
            Answer::Choose(_) => "choose from".into(),
            a => a.name().into(),
        }
    }

    /// `approved`, `denied`, `chose option 2 of`: for messages.
    pub fn past(self) -> String {
        match self {
            Answer::Approve => "approved".into(),
            Answer::Deny => "denied".into(),
            Answer::Always => "always approved".into(),
            Answer::Choose(n) => format!("chose option {n} of"),
        }
    }

    /// `approving`, `denying`: for messages while the answer is on its way.
    pub fn doing(self) -> String {
        match self {
            Answer::Approve => "approving".into(),
            Answer::Deny => "denying".into(),
            Answer::Always => "always approving".into(),
            Answer::Choose(n) => format!("choosing option {n} of"),
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
    /// The digit of the option a choice picks (`{option}` in rule files):
    /// made [`Key::Char`] by [`ActionRule::given`] before it is sent.
    Option,
}

impl Key {
    /// The names [`Key::parse`] takes besides single characters.
    pub const NAMES: &str =
        "Enter, Escape, Tab, BTab, Space, BSpace, Up, Down, Left, Right, {option}";

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
            "{option}" => Key::Option,
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
            Key::Option => "{option}".into(),
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
            // Never sent as it is (see `ActionRule::given`).
            Key::Option => Vec::new(),
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
    /// This action as it gives `answer`: a choice's `{option}` made the
    /// digit of the option it picks.
    pub fn given(&self, answer: Answer) -> ActionRule {
        let digit = match answer {
            Answer::Choose(n) => char::from_digit(u32::from(n), 10),
            _ => None,
        };
        let resolve = |keys: &[Key]| -> Vec<Key> {
            keys.iter()
                .map(|k| match (k, digit) {
                    (Key::Option, Some(d)) => Key::Char(d),
                    (k, _) => k.clone(),
                })
                .collect()
        };
        ActionRule {
            answer,
            keys: resolve(&self.keys),
            then: self
                .then
                .iter()
                .map(|s| Step {
                    keys: resolve(&s.keys),
                    requires: s.requires.clone(),
                })
                .collect(),
            ..self.clone()
        }
    }

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

    #[test]
    fn a_choice_is_named_with_its_option_and_presses_its_digit() {
        assert_eq!(Answer::from_name("choose"), Some(Answer::Choose(0)));
        assert_eq!(Answer::from_act("choose", Some(3)), Ok(Answer::Choose(3)));
        assert!(Answer::from_act("choose", None).is_err());
        assert!(Answer::from_act("choose", Some(0)).is_err());
        assert!(Answer::from_act("choose", Some(10)).is_err());
        assert!(Answer::from_act("deny", Some(3)).is_err());
        assert_eq!(Answer::from_act("deny", None), Ok(Answer::Deny));
        assert!(
            Answer::from_act("pick", None)
                .unwrap_err()
                .contains("unknown answer 'pick'")
        );
        assert_eq!(Key::parse("{option}"), Some(Key::Option));
        let rule = ActionRule {
            rule: "claude.question".into(),
            answer: Answer::Choose(0),
            keys: vec![Key::Option],
            requires: Vec::new(),
            then: vec![Step {
                keys: vec![Key::Enter, Key::Option],
                requires: Vec::new(),
            }],
            at: "claude.toml:1".into(),
        };
        let given = rule.given(Answer::Choose(2));
        assert_eq!(given.answer, Answer::Choose(2));
        assert_eq!(given.key_names(), ["2", "Enter", "2"]);
        assert_eq!(rule.key_names(), ["{option}", "Enter", "{option}"]);
    }
}
