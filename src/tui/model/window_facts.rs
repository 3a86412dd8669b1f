//! The facts of a session's screen a pane's window is chosen from, and
//! the memo of them each pane keeps: plain data; `tui::window` reads the
//! screen and chooses.

/// What the window's choice depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Screen {
    /// The screen's height.
    pub rows: u16,
    /// The cursor's row.
    pub cursor_row: u16,
    /// Whether the program shows its cursor (an agent's UI often hides it
    /// and leaves it anywhere).
    pub cursor_shown: bool,
    /// The last row with anything drawn on it.
    pub last_text_row: Option<u16>,
}

/// What `tui::window::live_top` read of a pane's screen, and for which state of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Memo {
    pub drawn: u64,
    pub size: crate::protocol::Size,
    pub screen: Screen,
}
