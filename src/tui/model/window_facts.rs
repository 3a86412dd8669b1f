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
    /// Whether a full-screen program draws it: one on the alternate screen
    /// (an editor, a pager, htop) or with the cursor keys in application
    /// mode, as curses programs set them (`top` does both that and its
    /// drawing on the main screen).
    pub full_screen: bool,
    /// The rows with nothing drawn on them, one bit a row (a screen has at
    /// most 256, see `protocol::MAX_DIM`).
    pub blank: [u64; 4],
    /// The first row of a recognised agent's input box (its rule above
    /// the prompt, and the hints drawn right over it), found by the
    /// agent's rules: what is below it is the box and the agent's status
    /// lines, not what it said.
    pub input_top: Option<u16>,
    /// The last row above the input box that says something: not blank,
    /// not a rule, not a hint set at the right edge (`? for shortcuts`).
    pub said_above_input: Option<u16>,
}

impl Screen {
    /// Whether nothing is drawn on `row`.
    pub fn is_blank(&self, row: u16) -> bool {
        let (word, bit) = (usize::from(row / 64), row % 64);
        self.blank.get(word).is_some_and(|w| w & (1 << bit) != 0)
    }

    /// The last row with anything drawn on it.
    pub fn last_text_row(&self) -> Option<u16> {
        (0..self.rows).rev().find(|&r| !self.is_blank(r))
    }

    /// Marks `row` as one with nothing drawn on it.
    pub fn set_blank(&mut self, row: u16) {
        let (word, bit) = (usize::from(row / 64), row % 64);
        if let Some(w) = self.blank.get_mut(word) {
            *w |= 1 << bit;
        }
    }
}

/// What `tui::window::live_top` read of a pane's screen, and for which state of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Memo {
    pub drawn: u64,
    pub size: crate::protocol::Size,
    pub screen: Screen,
}
