//! The `[tui]` table as resolved: settings for `hm tui` only. How the table
//! is read from the file is in `schema`.

use std::fmt;

use super::{ConfigError, Location};

/// The `[tui]` table: settings for `hm tui` only.
#[derive(Debug, Clone, PartialEq)]
pub struct TuiConfig {
    /// Colour theme name; `None` is the built-in theme.
    pub theme: Option<String>,
    /// Where `theme` was set, for an error about a theme that does not load
    /// (known only when the dashboard or attach loads it).
    pub theme_at: Option<Location>,
    /// Resize each session to its pane (opt-in; sessions keep their own
    /// size unless this is on).
    pub fit_sessions: bool,
    /// The size (cols, rows) of a session started with no terminal to
    /// take it from.
    pub session_size: (u16, u16),
    /// Ring the terminal bell when a session changes state.
    pub bell: bool,
    /// Send a desktop notification through the terminal the dashboard
    /// runs in (`osc9` or `osc777`), when a session starts waiting,
    /// finishes or exits; `None`: off.
    pub desktop_notify: Option<DesktopNotify>,
    /// Panes per row, 1 to 16; `None`: automatic, or what the dashboard
    /// last used (it remembers `+`/`-`/`=` across runs).
    pub columns: Option<u16>,
    /// `[tui.keys]`: the grid's keys in effect.
    pub keys: super::Keymap,
}

/// `[tui] session_size` unless configured: 120 columns, 40 rows.
pub const DEFAULT_SESSION_SIZE: (u16, u16) = (120, 40);

/// `COLSxROWS` (`120x40`), each 1 to 4096.
pub fn parse_size(text: &str) -> Option<(u16, u16)> {
    let (c, r) = text.split_once('x')?;
    let dim = |v: &str| v.parse::<u16>().ok().filter(|v| (1..=4096).contains(v));
    Some((dim(c)?, dim(r)?))
}

/// Which escape sequence asks the terminal for a desktop notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DesktopNotify {
    /// `ESC ] 9 ; text BEL` (iTerm2, WezTerm, kitty, Windows Terminal, ...).
    Osc9,
    /// `ESC ] 777 ; notify ; title ; text BEL` (foot, Ghostty, urxvt, ...).
    Osc777,
}

impl TuiConfig {
    /// The error for a `theme` that did not load, at its line in the file.
    pub fn bad_theme(&self, reason: impl fmt::Display) -> ConfigError {
        let reason = reason.to_string();
        match &self.theme_at {
            Some(at) => ConfigError::InvalidValue {
                at: at.clone(),
                key: "tui.theme".into(),
                reason,
            },
            None => ConfigError::Override {
                flag: "tui.theme",
                reason,
            },
        }
    }
}

impl Default for TuiConfig {
    fn default() -> Self {
        TuiConfig {
            theme: None,
            theme_at: None,
            fit_sessions: false,
            session_size: DEFAULT_SESSION_SIZE,
            bell: false,
            desktop_notify: None,
            columns: None,
            keys: super::Keymap::default(),
        }
    }
}
