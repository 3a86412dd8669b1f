//! The `[tui.keys]` table: which keys do which of the dashboard's grid
//! actions. The actions and their default keys, key names as the file
//! writes them (`"q"`, `"ctrl-c"`, `"shift-pgup"`) and as hints show them
//! (`q`, `Ctrl-C`, `Shift-PgUp`), and the resolved [`Keymap`]. Pure: the
//! dashboard matches its key events against a [`Chord`] (`tui::bindings`).
//!
//! An action written in the file gets exactly the keys written there; the
//! others keep their defaults, less any key the file gave to another
//! action (so `quit = "z"` takes `z` from zoom, which `?` then shows
//! without a key). A key written twice in the table, for one action or
//! two, is an error, as is an unknown action.

use std::collections::HashMap;
use std::ops::Range;

use toml::Spanned;
use toml::de::DeValue;

use super::ConfigError;
use super::doc::{Doc, in_file_order};

/// Something a key does in the dashboard's grid (and zoom).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    Left,
    Down,
    Up,
    Right,
    Focus,
    Attach,
    Kill,
    Restart,
    Restore,
    New,
    Label,
    Zoom,
    Back,
    MoreColumns,
    FewerColumns,
    AutoColumns,
    PrevPage,
    NextPage,
    Filter,
    Next,
    Inbox,
    ScrollUp,
    ScrollDown,
    CopyMode,
    Explain,
    Sort,
    Help,
    Quit,
}

impl Action {
    /// Every action, in the order help lists them.
    pub const ALL: [Action; 28] = [
        Action::Left,
        Action::Down,
        Action::Up,
        Action::Right,
        Action::Focus,
        Action::Attach,
        Action::Kill,
        Action::Restart,
        Action::Restore,
        Action::New,
        Action::Label,
        Action::Zoom,
        Action::Back,
        Action::MoreColumns,
        Action::FewerColumns,
        Action::AutoColumns,
        Action::PrevPage,
        Action::NextPage,
        Action::Filter,
        Action::Next,
        Action::Inbox,
        Action::ScrollUp,
        Action::ScrollDown,
        Action::CopyMode,
        Action::Explain,
        Action::Sort,
        Action::Help,
        Action::Quit,
    ];

    /// Its name in `[tui.keys]`.
    pub fn name(self) -> &'static str {
        match self {
            Action::Left => "left",
            Action::Down => "down",
            Action::Up => "up",
            Action::Right => "right",
            Action::Focus => "focus",
            Action::Attach => "attach",
            Action::Kill => "kill",
            Action::Restart => "restart",
            Action::Restore => "restore",
            Action::New => "new",
            Action::Label => "label",
            Action::Zoom => "zoom",
            Action::Back => "back",
            Action::MoreColumns => "more_columns",
            Action::FewerColumns => "fewer_columns",
            Action::AutoColumns => "auto_columns",
            Action::PrevPage => "prev_page",
            Action::NextPage => "next_page",
            Action::Filter => "filter",
            Action::Next => "next",
            Action::Inbox => "inbox",
            Action::ScrollUp => "scroll_up",
            Action::ScrollDown => "scroll_down",
            Action::CopyMode => "copy_mode",
            Action::Explain => "explain",
            Action::Sort => "sort",
            Action::Help => "help",
            Action::Quit => "quit",
        }
    }

    /// The keys it has unless the file says otherwise, as the file
    /// writes them.
    fn defaults(self) -> &'static [&'static str] {
        match self {
            Action::Left => &["left", "h"],
            Action::Down => &["down", "j"],
            Action::Up => &["up", "k"],
            Action::Right => &["right", "l"],
            Action::Focus => &["enter"],
            Action::Attach => &["a"],
            Action::Kill => &["x"],
            Action::Restart => &["r"],
            Action::Restore => &["R"],
            Action::New => &["n"],
            Action::Label => &["L"],
            Action::Zoom => &["z"],
            Action::Back => &["esc"],
            Action::MoreColumns => &["+"],
            Action::FewerColumns => &["-"],
            Action::AutoColumns => &["="],
            Action::PrevPage => &["pgup"],
            Action::NextPage => &["pgdn"],
            Action::Filter => &["/"],
            Action::Next => &["tab"],
            Action::Inbox => &["i"],
            Action::ScrollUp => &["shift-pgup"],
            Action::ScrollDown => &["shift-pgdn"],
            Action::CopyMode => &["["],
            Action::Explain => &["e"],
            Action::Sort => &["s"],
            Action::Help => &["?"],
            Action::Quit => &["q", "ctrl-c"],
        }
    }
}

/// A key without its modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    /// A character as typed: `Q` is Shift-q.
    Char(char),
    Enter,
    Esc,
    Tab,
    /// Shift-Tab.
    BackTab,
    Backspace,
    Left,
    Right,
    Up,
    Down,
    PageUp,
    PageDown,
    Home,
    End,
    Insert,
    Delete,
    F(u8),
}

/// A key with its modifiers, as `[tui.keys]` names it. Shift is part of a
/// character (`Q`), so it is set only for the other keys (`shift-pgup`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Chord {
    pub key: Key,
    pub ctrl: bool,
    pub alt: bool,
    pub shift: bool,
}

/// Names of the keys that are not characters, as the file writes them.
const NAMED: &[(&str, Key)] = &[
    ("enter", Key::Enter),
    ("return", Key::Enter),
    ("esc", Key::Esc),
    ("escape", Key::Esc),
    ("tab", Key::Tab),
    ("backtab", Key::BackTab),
    ("backspace", Key::Backspace),
    ("space", Key::Char(' ')),
    ("left", Key::Left),
    ("right", Key::Right),
    ("up", Key::Up),
    ("down", Key::Down),
    ("pgup", Key::PageUp),
    ("pageup", Key::PageUp),
    ("pgdn", Key::PageDown),
    ("pagedown", Key::PageDown),
    ("home", Key::Home),
    ("end", Key::End),
    ("insert", Key::Insert),
    ("delete", Key::Delete),
];

impl Chord {
    /// A plain key.
    pub fn plain(key: Key) -> Chord {
        Chord {
            key,
            ctrl: false,
            alt: false,
            shift: false,
        }
    }

    /// Reads a key name: a character (`"q"`, `"?"`, `"Q"`), a named key
    /// (`"enter"`, `"pgdn"`, `"f5"`, `"space"`), each with any of `ctrl-`,
    /// `alt-` and `shift-` before it (any case). Combinations a terminal
    /// sends as another key (Ctrl-I is Tab) are refused.
    pub fn parse(text: &str) -> Result<Chord, String> {
        let bad = || {
            format!(
                "'{}' is not a key name (expected a character such as \"z\" or \"?\", or one of \
                 enter, esc, tab, backspace, space, left, right, up, down, pgup, pgdn, home, end, \
                 insert, delete, f1 to f12; with ctrl-, alt- or shift- before it if wanted)",
                text.escape_debug()
            )
        };
        let mut chord = Chord::plain(Key::Esc);
        let mut rest = text;
        loop {
            let lower = rest.to_ascii_lowercase();
            let cut = ["ctrl-", "alt-", "shift-"]
                .into_iter()
                .find(|p| lower.starts_with(p) && rest.len() > p.len());
            let Some(prefix) = cut else { break };
            match prefix {
                "ctrl-" => chord.ctrl = true,
                "alt-" => chord.alt = true,
                _ => chord.shift = true,
            }
            rest = &rest[prefix.len()..];
        }
        let mut chars = rest.chars();
        chord.key = match (chars.next(), chars.next()) {
            (Some(c), None) if !c.is_control() => Key::Char(c),
            _ => {
                let lower = rest.to_ascii_lowercase();
                if let Some((_, k)) = NAMED.iter().find(|(n, _)| *n == lower) {
                    *k
                } else if let Some(n) = lower
                    .strip_prefix('f')
                    .and_then(|n| n.parse::<u8>().ok())
                    .filter(|n| (1..=12).contains(n))
                {
                    Key::F(n)
                } else {
                    return Err(bad());
                }
            }
        };
        // Shift is part of a character, and Shift-Tab is a key of its own.
        if chord.shift {
            match chord.key {
                Key::Char(c) if c.is_alphabetic() => {
                    chord.key = Key::Char(c.to_uppercase().next().unwrap_or(c));
                    chord.shift = false;
                }
                Key::Char(' ') => {}
                Key::Char(c) => {
                    return Err(format!(
                        "'{}': write the character Shift gives instead (such as \"?\" for \
                         shift-/ on a US keyboard), not shift-{c}",
                        text.escape_debug()
                    ));
                }
                Key::Tab => {
                    chord.key = Key::BackTab;
                    chord.shift = false;
                }
                _ => {}
            }
        }
        if chord.ctrl
            && let Key::Char(c) = chord.key
        {
            let same = match c.to_ascii_lowercase() {
                'i' => Some("Tab"),
                'm' | 'j' => Some("Enter"),
                '[' => Some("Esc"),
                'h' => Some("Backspace"),
                _ => None,
            };
            if let Some(same) = same {
                return Err(format!(
                    "'{}' reaches the dashboard as {same}: a terminal sends the same byte \
                     for both (bind \"{}\" instead)",
                    text.escape_debug(),
                    same.to_ascii_lowercase()
                ));
            }
            // Ctrl-Q and Ctrl-q are the same byte.
            chord.key = Key::Char(c.to_ascii_lowercase());
        }
        Ok(chord)
    }

    /// How hints and help show it: `q`, `Enter`, `Ctrl-C`, `Shift-PgUp`.
    pub fn label(&self) -> String {
        let mut s = String::new();
        if self.ctrl {
            s.push_str("Ctrl-");
        }
        if self.alt {
            s.push_str("Alt-");
        }
        if self.shift {
            s.push_str("Shift-");
        }
        match self.key {
            Key::Char(' ') => s.push_str("Space"),
            Key::Char(c) if self.ctrl => s.extend(c.to_uppercase()),
            Key::Char(c) => s.push(c),
            Key::Enter => s.push('⏎'),
            Key::Esc => s.push_str("Esc"),
            Key::Tab => s.push('⇥'),
            Key::BackTab => s.push_str("Shift-Tab"),
            Key::Backspace => s.push_str("Backspace"),
            Key::Left => s.push('←'),
            Key::Right => s.push('→'),
            Key::Up => s.push('↑'),
            Key::Down => s.push('↓'),
            Key::PageUp => s.push_str("PgUp"),
            Key::PageDown => s.push_str("PgDn"),
            Key::Home => s.push_str("Home"),
            Key::End => s.push_str("End"),
            Key::Insert => s.push_str("Insert"),
            Key::Delete => s.push_str("Delete"),
            Key::F(n) => s.push_str(&format!("F{n}")),
        }
        s
    }
}

/// Every action's keys, in effect: the defaults with what `[tui.keys]`
/// set over them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    /// One entry per action, in [`Action::ALL`]'s order.
    keys: Vec<(Action, Vec<Chord>)>,
    /// Actions the file did not write whose every default key it gave to
    /// another action, with the first such key and its action now: left
    /// without a key unasked.
    stripped: Vec<(Action, Chord, Action)>,
}

impl Default for Keymap {
    fn default() -> Keymap {
        let keys = Action::ALL
            .into_iter()
            .map(|a| {
                let chords = a
                    .defaults()
                    .iter()
                    .filter_map(|name| Chord::parse(name).ok())
                    .collect();
                (a, chords)
            })
            .collect();
        Keymap {
            keys,
            stripped: Vec::new(),
        }
    }
}

impl Keymap {
    /// The action a key does, if any.
    pub fn action(&self, chord: &Chord) -> Option<Action> {
        self.keys
            .iter()
            .find(|(_, keys)| keys.contains(chord))
            .map(|(a, _)| *a)
    }

    /// The keys that do `action`, the first the one hints show.
    pub fn keys(&self, action: Action) -> &[Chord] {
        self.keys
            .iter()
            .find(|(a, _)| *a == action)
            .map_or(&[], |(_, k)| k.as_slice())
    }

    /// The first key of `action` as hints show it, or `None` without one.
    pub fn label(&self, action: Action) -> Option<String> {
        self.keys(action).first().map(Chord::label)
    }

    /// What the dashboard says at its start when the file left actions
    /// without a key that it did not write (`new = "x"` takes kill's only
    /// key): `?` shows them keyless, but nothing else would.
    pub fn warning(&self) -> Option<String> {
        let (first, ..) = self.stripped.first()?;
        let each: Vec<String> = self
            .stripped
            .iter()
            .map(|(lost, key, to)| {
                format!(
                    "{} has no key ({} is {}'s now)",
                    lost.name(),
                    key.label(),
                    to.name()
                )
            })
            .collect();
        Some(format!(
            "[tui.keys]: {}; give it one or write {} = [] to mean it",
            each.join("; "),
            first.name()
        ))
    }

    /// Gives `action` exactly `keys`, and takes them from any other.
    fn set(&mut self, action: Action, keys: Vec<Chord>) {
        for (a, k) in &mut self.keys {
            if *a == action {
                k.clone_from(&keys);
            } else {
                k.retain(|c| !keys.contains(c));
            }
        }
    }
}

impl Doc<'_> {
    /// `[tui.keys]`: `action = "key"` or `action = ["key", ...]`.
    pub(super) fn tui_keys(&self, value: &Spanned<DeValue<'_>>) -> Result<Keymap, ConfigError> {
        let names: Vec<&str> = Action::ALL.iter().map(|a| a.name()).collect();
        let mut map = Keymap::default();
        // Each key written so far: for which action, and where.
        let mut written: HashMap<Chord, (Action, Range<usize>)> = HashMap::new();
        // Each action written, `[]` too.
        let mut named = Vec::new();
        for (key, value) in in_file_order(self.table("tui.keys", "[tui.keys]", value)?) {
            let name: &str = key.get_ref();
            let Some(action) = Action::ALL.into_iter().find(|a| a.name() == name) else {
                return Err(self.unknown(key, "tui.keys", &names));
            };
            let full = format!("tui.keys.{name}");
            let items: Vec<&Spanned<DeValue<'_>>> = match value.get_ref() {
                DeValue::String(_) => vec![value],
                DeValue::Array(items) => items.iter().collect(),
                _ => {
                    return Err(self.mismatch(
                        &full,
                        value,
                        "a key name such as \"z\", or a list such as [\"z\", \"f2\"]",
                    ));
                }
            };
            let mut chords = Vec::new();
            for item in items {
                let text = self.string(&full, item)?;
                let chord = Chord::parse(&text).map_err(|r| self.invalid(item.span(), &full, r))?;
                if let Some((other, at)) = written.get(&chord) {
                    let line = self.at(Some(at.clone())).line.unwrap_or(0);
                    let whose = if *other == action {
                        "this action already".to_owned()
                    } else {
                        format!("'{}' on line {line}", other.name())
                    };
                    let reason = format!(
                        "{} is bound to {whose}: a key does one thing",
                        chord.label()
                    );
                    return Err(self.invalid(item.span(), &full, reason));
                }
                written.insert(chord, (action, item.span()));
                chords.push(chord);
            }
            if action == Action::Quit && chords.is_empty() {
                let reason = "quit needs a key: the dashboard could not be left";
                return Err(self.invalid(value.span(), &full, reason));
            }
            map.set(action, chords);
            named.push(action);
        }
        for a in Action::ALL {
            if named.contains(&a) || !map.keys(a).is_empty() {
                continue;
            }
            let taken = a
                .defaults()
                .iter()
                .filter_map(|d| Chord::parse(d).ok())
                .find_map(|c| Some((c, map.action(&c)?)));
            if let Some((key, to)) = taken {
                map.stripped.push((a, key, to));
            }
        }
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::test_file::{err, ok};

    fn keys(text: &str) -> Keymap {
        ok(&format!("[tui.keys]\n{text}")).tui.keys
    }

    fn chord(name: &str) -> Chord {
        Chord::parse(name).expect("a key name")
    }

    #[test]
    fn the_defaults_are_the_dashboards_keys() {
        let k = Keymap::default();
        assert_eq!(k.action(&chord("q")), Some(Action::Quit));
        assert_eq!(k.action(&chord("ctrl-c")), Some(Action::Quit));
        assert_eq!(k.action(&chord("i")), Some(Action::Inbox));
        assert_eq!(k.action(&chord("shift-pgup")), Some(Action::ScrollUp));
        assert_eq!(k.action(&chord("pgup")), Some(Action::PrevPage));
        assert_eq!(k.action(&chord("Q")), None);
        for a in Action::ALL {
            assert!(!k.keys(a).is_empty(), "{a:?} has no default key");
        }
    }

    #[test]
    fn key_names_read_as_a_terminal_sends_them_and_show_as_hints_do() {
        for (name, label) in [
            ("q", "q"),
            ("Q", "Q"),
            ("shift-q", "Q"),
            ("?", "?"),
            ("ctrl-C", "Ctrl-C"),
            ("alt-x", "Alt-x"),
            ("Enter", "⏎"),
            ("shift-tab", "Shift-Tab"),
            ("backtab", "Shift-Tab"),
            ("shift-pgup", "Shift-PgUp"),
            ("space", "Space"),
            (" ", "Space"),
            ("f5", "F5"),
            ("-", "-"),
        ] {
            assert_eq!(chord(name).label(), label, "{name}");
        }
        assert_eq!(chord("ctrl-Q"), chord("ctrl-q"));
        for bad in ["C-x", "ctrl-", "f13", "", "qq", "shift-?", "hyper-q"] {
            assert!(Chord::parse(bad).is_err(), "{bad:?} was taken");
        }
        let e = Chord::parse("ctrl-i").expect_err("Ctrl-I is Tab");
        assert!(e.contains("reaches the dashboard as Tab"), "{e}");
    }

    #[test]
    fn an_action_written_gets_exactly_its_keys_and_takes_them_from_others() {
        let k = keys("quit = \"z\"\ninbox = [\"i\", \"f2\"]\n");
        assert_eq!(k.keys(Action::Quit), [chord("z")]);
        assert_eq!(k.action(&chord("q")), None, "q no longer quits");
        assert_eq!(k.action(&chord("z")), Some(Action::Quit));
        assert!(k.keys(Action::Zoom).is_empty(), "z went to quit");
        assert_eq!(k.label(Action::Zoom), None);
        assert_eq!(k.action(&chord("f2")), Some(Action::Inbox));
        // Others keep their defaults.
        assert_eq!(k.keys(Action::Left), [chord("left"), chord("h")]);
        // An empty list unbinds.
        let k = keys("sort = []\n");
        assert!(k.keys(Action::Sort).is_empty());
        assert_eq!(k.warning(), None, "asked for");
    }

    #[test]
    fn an_action_left_without_a_key_unasked_is_warned_of() {
        let k = keys("new = \"x\"\n");
        assert_eq!(
            k.warning().as_deref(),
            Some(
                "[tui.keys]: kill has no key (x is new's now); give it one or write kill = [] to mean it"
            )
        );
        // One of two defaults taken leaves the other: nothing to say.
        assert_eq!(keys("new = \"h\"\n").warning(), None);
        // Both taken: said, with the first.
        let k = keys("new = \"h\"\nfocus = \"left\"\n");
        assert!(
            k.warning()
                .is_some_and(|w| w.contains("left has no key (← is focus's now)")),
            "{:?}",
            k.warning()
        );
        // Written empty on purpose: nothing to say.
        assert_eq!(keys("new = \"x\"\nkill = []\n").warning(), None);
        assert_eq!(Keymap::default().warning(), None);
    }

    #[test]
    fn an_unknown_action_is_a_file_line_error_listing_the_actions() {
        let e = err("[tui]\nbell = true\n\n[tui.keys]\nzoom = \"z\"\nteleport = \"t\"\n");
        assert!(
            e.starts_with(
                "/home/u/heimdall.toml:6: unknown key 'tui.keys.teleport' (expected one of: \
                 left, down, up, right, focus,"
            ),
            "{e}"
        );
        assert!(e.contains("inbox") && e.ends_with("help, quit)"), "{e}");
    }

    #[test]
    fn a_key_bound_twice_is_a_file_line_error_naming_both() {
        let e = err("[tui.keys]\nzoom = \"z\"\nquit = [\"q\",\n  \"z\"]\n");
        assert_eq!(
            e,
            "/home/u/heimdall.toml:4: invalid value for 'tui.keys.quit': z is bound to \
             'zoom' on line 2: a key does one thing"
        );
        let e = err("[tui.keys]\ninbox = [\"i\", \"i\"]\n");
        assert!(
            e.contains(":2: invalid value for 'tui.keys.inbox': i is bound to this action"),
            "{e}"
        );
        // The same key however it is written.
        let e = err("[tui.keys]\nhelp = \"shift-h\"\nkill = \"H\"\n");
        assert!(e.contains(":3: ") && e.contains("'help' on line 2"), "{e}");
    }

    #[test]
    fn bad_values_say_what_is_expected() {
        let e = err("[tui.keys]\nzoom = 3\n");
        assert!(
            e.contains(":2: invalid value for 'tui.keys.zoom': expected a key name"),
            "{e}"
        );
        let e = err("[tui.keys]\nzoom = \"zz\"\n");
        assert!(e.contains("'zz' is not a key name"), "{e}");
        let e = err("[tui.keys]\nquit = []\n");
        assert!(e.contains("quit needs a key"), "{e}");
        let e = err("[tui]\nkeys = \"z\"\n");
        assert!(e.contains("expected a [tui.keys] table"), "{e}");
    }
}
