//! Colour themes for the dashboard and `hm attach`'s status bar.
//!
//! The themes are the TOML files in `themes/` (their format is described at
//! the top of `themes/dark.toml`), compiled into the binary so a fresh
//! install has them all. This module turns one into ratatui [`Style`]s and
//! knows which style a process state gets; it draws nothing and reads no
//! files. Without colours (NO_COLOR) every style keeps only its modifiers,
//! and a style with a background becomes reverse video so that badges and
//! bars stay visible.

use std::ffi::OsStr;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

use crate::classify::ProcessState;

/// The built-in themes, by name, in the order of [`Theme::NAMES`].
const BUILT_IN: [(&str, &str); 3] = [
    ("dark", include_str!("../themes/dark.toml")),
    ("light", include_str!("../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../themes/high-contrast.toml"),
    ),
];

/// Every style the dashboard and the status bar use.
#[derive(Debug, Clone)]
pub struct Theme {
    pub name: String,
    /// Unselected pane border.
    pub border: Style,
    /// Selected pane border.
    pub border_selected: Style,
    /// A pane that needs attention (finished work, exited).
    pub border_attention: Style,
    /// Pane title (the session id).
    pub title: Style,
    /// Secondary text (idle timers, hints).
    pub dim: Style,
    /// Footer bar background and text; the fill of the attach status bar.
    pub footer: Style,
    /// Key names in the footer; the label of the attach status bar.
    pub footer_key: Style,
    /// Dialogs (confirm kill, new session prompt, help).
    pub popup: Style,
    pub popup_border: Style,
    /// Connection problems and other errors.
    pub error: Style,
    /// The badge of a session that ended well: code 0, or killed by a
    /// person. The `dead` state's is for failures.
    pub ended_well: Style,
    states: States<Style>,
}

/// A theme could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    #[error(
        "unknown theme '{}' (available: {})",
        .name.escape_debug(),
        Theme::NAMES.join(", ")
    )]
    Unknown { name: String },
    /// Caught by the tests; here so a broken build fails politely.
    #[error("the built-in theme '{name}' is malformed (this is a bug in hm)")]
    Malformed {
        name: &'static str,
        #[source]
        source: toml::de::Error,
    },
}

impl Theme {
    pub const NAMES: &'static [&'static str] = &["dark", "light", "high-contrast"];
    /// The theme used when none is named.
    pub const DEFAULT: &'static str = "dark";

    /// The named built-in theme (the default for `None`), stripped of
    /// colours if `no_color`.
    pub fn load(name: Option<&str>, no_color: bool) -> Result<Theme, ThemeError> {
        let name = name.unwrap_or(Self::DEFAULT);
        let (name, text) = BUILT_IN
            .iter()
            .find(|(known, _)| known.eq_ignore_ascii_case(name))
            .ok_or_else(|| ThemeError::Unknown { name: name.into() })?;
        let file: ThemeFile =
            toml::from_str(text).map_err(|source| ThemeError::Malformed { name, source })?;
        Ok(Theme::from_file(file, no_color))
    }

    /// The named built-in theme, with its colours.
    pub fn by_name(name: &str) -> Result<Theme, ThemeError> {
        Self::load(Some(name), false)
    }

    /// The badge style of a state byte; `None` (no state yet) and bytes
    /// this version does not know get the "unknown" style.
    pub fn state(&self, state: Option<u8>) -> Style {
        let s = &self.states;
        match state.and_then(ProcessState::from_byte) {
            Some(ProcessState::Idle) => s.idle,
            Some(ProcessState::Thinking) => s.thinking,
            Some(ProcessState::Streaming) => s.streaming,
            Some(ProcessState::ToolUse) => s.tool_use,
            Some(ProcessState::Active) => s.active,
            Some(ProcessState::Waiting) => s.waiting,
            Some(ProcessState::Stuck) => s.stuck,
            Some(ProcessState::Dead) => s.dead,
            Some(ProcessState::Unknown) | None => s.unknown,
        }
    }

    /// Whether the environment asks for no colours: NO_COLOR set and not
    /// empty, as <https://no-color.org> has it.
    pub fn no_color_from_env() -> bool {
        no_color(std::env::var_os("NO_COLOR").as_deref())
    }

    fn from_file(file: ThemeFile, no_color: bool) -> Theme {
        let ui = file.ui;
        let style = |spec: &StyleSpec| spec.style(no_color);
        Theme {
            name: file.name,
            border: style(&ui.border),
            border_selected: style(&ui.border_selected),
            border_attention: style(&ui.border_attention),
            title: style(&ui.title),
            dim: style(&ui.dim),
            footer: style(&ui.footer),
            footer_key: style(&ui.footer_key),
            popup: style(&ui.popup),
            popup_border: style(&ui.popup_border),
            error: style(&ui.error),
            ended_well: style(&ui.ended_well),
            states: file.states.map(style),
        }
    }
}

fn no_color(value: Option<&OsStr>) -> bool {
    value.is_some_and(|v| !v.is_empty())
}

/// A theme file as written. Every key is required and unknown keys are
/// errors, so a typo in a built-in theme fails the tests.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    name: String,
    ui: Ui,
    states: States<StyleSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Ui {
    border: StyleSpec,
    border_selected: StyleSpec,
    border_attention: StyleSpec,
    title: StyleSpec,
    dim: StyleSpec,
    footer: StyleSpec,
    footer_key: StyleSpec,
    popup: StyleSpec,
    popup_border: StyleSpec,
    error: StyleSpec,
    ended_well: StyleSpec,
}

/// One value per state the badge can show.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct States<S> {
    idle: S,
    thinking: S,
    streaming: S,
    tool_use: S,
    active: S,
    waiting: S,
    stuck: S,
    dead: S,
    unknown: S,
}

impl<S> States<S> {
    fn map<T>(&self, f: impl Fn(&S) -> T) -> States<T> {
        States {
            idle: f(&self.idle),
            thinking: f(&self.thinking),
            streaming: f(&self.streaming),
            tool_use: f(&self.tool_use),
            active: f(&self.active),
            waiting: f(&self.waiting),
            stuck: f(&self.stuck),
            dead: f(&self.dead),
            unknown: f(&self.unknown),
        }
    }
}

/// A style as written in a theme file. Our own rather than ratatui's serde
/// form, which spells modifiers as `add_modifier = "BOLD | REVERSED"` and
/// ignores unknown keys.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct StyleSpec {
    fg: Option<Color>,
    bg: Option<Color>,
    bold: bool,
    dim: bool,
    italic: bool,
    underlined: bool,
    reversed: bool,
}

impl StyleSpec {
    fn style(&self, no_color: bool) -> Style {
        let mut modifier = [
            (self.bold, Modifier::BOLD),
            (self.dim, Modifier::DIM),
            (self.italic, Modifier::ITALIC),
            (self.underlined, Modifier::UNDERLINED),
            (self.reversed, Modifier::REVERSED),
        ]
        .into_iter()
        .filter(|(on, _)| *on)
        .fold(Modifier::empty(), |all, (_, m)| all | m);
        if no_color {
            // A background marks something filled (a badge, a bar, a
            // dialog); reverse video keeps it filled without colour.
            if self.bg.is_some_and(|bg| bg != Color::Reset) {
                modifier |= Modifier::REVERSED;
            }
            return Style::new().add_modifier(modifier);
        }
        Style {
            fg: self.fg,
            bg: self.bg,
            ..Style::new().add_modifier(modifier)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every style of a theme, named, so tests can check them all.
    fn styles(t: &Theme) -> Vec<(&'static str, Style)> {
        let s = &t.states;
        vec![
            ("border", t.border),
            ("border_selected", t.border_selected),
            ("border_attention", t.border_attention),
            ("title", t.title),
            ("dim", t.dim),
            ("footer", t.footer),
            ("footer_key", t.footer_key),
            ("popup", t.popup),
            ("popup_border", t.popup_border),
            ("error", t.error),
            ("ended_well", t.ended_well),
            ("idle", s.idle),
            ("thinking", s.thinking),
            ("streaming", s.streaming),
            ("tool_use", s.tool_use),
            ("active", s.active),
            ("waiting", s.waiting),
            ("stuck", s.stuck),
            ("dead", s.dead),
            ("unknown", s.unknown),
        ]
    }

    fn file(name: &str) -> &'static str {
        BUILT_IN
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, text)| *text)
            .expect("built-in theme")
    }

    #[test]
    fn every_built_in_theme_parses_and_sets_every_style() {
        let built_in: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
        assert_eq!(built_in, Theme::NAMES);
        assert!(Theme::NAMES.contains(&Theme::DEFAULT));
        for name in Theme::NAMES {
            let theme = Theme::by_name(name).unwrap_or_else(|e| panic!("{name}: {e:?}"));
            assert_eq!(theme.name, *name, "the name in the file");
            for (field, style) in styles(&theme) {
                assert_ne!(style, Style::new(), "{name}: {field} is empty");
            }
        }
        assert_eq!(
            Theme::load(None, false).expect("default").name,
            Theme::DEFAULT
        );
        assert_eq!(Theme::by_name("Dark").expect("any case").name, "dark");
    }

    #[test]
    fn state_badges_are_readable_on_any_background() {
        // A badge sets both colours, so it does not depend on the
        // terminal's, and the states differ from each other.
        for name in Theme::NAMES {
            let theme = Theme::by_name(name).expect("built-in");
            let badges: Vec<(&str, Style)> = styles(&theme).split_off(10);
            for (state, style) in &badges {
                assert!(style.fg.is_some() && style.bg.is_some(), "{name}: {state}");
            }
            for (i, (a, x)) in badges.iter().enumerate() {
                for (b, y) in &badges[i + 1..] {
                    assert_ne!(x, y, "{name}: {a} looks like {b}");
                }
            }
        }
    }

    #[test]
    fn typos_and_missing_keys_in_a_theme_file_are_errors() {
        let dark = file("dark");
        let parse = |text: &str| toml::from_str::<ThemeFile>(text).map(|_| ());
        assert!(parse(dark).is_ok());
        let typo = dark.replacen("bold = true }", "bolt = true }", 1);
        assert!(parse(&typo).is_err(), "unknown style key");
        let typo = dark.replacen("border_selected =", "border_selcted =", 1);
        assert!(parse(&typo).is_err(), "unknown ui key");
        let missing = dark.replacen("tool_use = ", "# tool_use = ", 1);
        assert!(parse(&missing).is_err(), "missing state");
        let bad = dark.replacen("\"240\"", "\"grey-ish\"", 1);
        assert!(parse(&bad).is_err(), "bad colour");
    }

    #[test]
    fn unknown_theme_names_the_valid_ones() {
        let err = Theme::load(Some("drak"), false).expect_err("no such theme");
        assert_eq!(
            err.to_string(),
            "unknown theme 'drak' (available: dark, light, high-contrast)"
        );
        assert!(matches!(
            Theme::by_name(""),
            Err(ThemeError::Unknown { .. })
        ));
    }

    #[test]
    fn no_color_keeps_modifiers_and_turns_backgrounds_into_reverse_video() {
        for name in Theme::NAMES {
            let colour = Theme::load(Some(name), false).expect("built-in");
            let mono = Theme::load(Some(name), true).expect("built-in");
            assert_eq!(mono.name, colour.name);
            for ((field, c), (_, m)) in styles(&colour).into_iter().zip(styles(&mono)) {
                assert_eq!((m.fg, m.bg), (None, None), "{name}: {field}");
                assert!(m.add_modifier.contains(c.add_modifier), "{name}: {field}");
                assert_eq!(
                    m.add_modifier.contains(Modifier::REVERSED),
                    c.bg.is_some() || c.add_modifier.contains(Modifier::REVERSED),
                    "{name}: {field}"
                );
            }
            // What must stay visible without colour does.
            assert_ne!(mono.border_selected, mono.border, "{name}");
            assert!(mono.footer.add_modifier.contains(Modifier::REVERSED));
            for state in ProcessState::ALL {
                let badge = mono.state(Some(state.as_byte()));
                assert!(badge.add_modifier.contains(Modifier::REVERSED), "{name}");
            }
        }
    }

    #[test]
    fn every_state_byte_has_a_style() {
        let t = Theme::by_name("dark").expect("built-in");
        let s = &t.states;
        let expected = [
            (ProcessState::Idle, s.idle),
            (ProcessState::Thinking, s.thinking),
            (ProcessState::Streaming, s.streaming),
            (ProcessState::ToolUse, s.tool_use),
            (ProcessState::Active, s.active),
            (ProcessState::Waiting, s.waiting),
            (ProcessState::Stuck, s.stuck),
            (ProcessState::Unknown, s.unknown),
            (ProcessState::Dead, s.dead),
        ];
        assert_eq!(expected.len(), ProcessState::ALL.len());
        for (state, style) in expected {
            assert_eq!(t.state(Some(state.as_byte())), style, "{state:?}");
        }
        for unknown in [None, Some(0x08), Some(0x80), Some(0xFE)] {
            assert_eq!(t.state(unknown), s.unknown, "{unknown:?}");
        }
        assert_eq!(t.state(Some(0x04)).bg, Some(Color::Indexed(44)));
    }

    #[test]
    fn no_color_means_set_and_not_empty() {
        assert!(!no_color(None));
        assert!(!no_color(Some(OsStr::new(""))));
        assert!(no_color(Some(OsStr::new("1"))));
        assert!(no_color(Some(OsStr::new("0"))));
    }
}
