//! A mouse drag selecting text, between the press and the release: plain
//! data, held by the model; what it does is `tui::select`'s.

use ratatui::layout::Rect;

/// A press of the left button over a session's text, until it is let go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drag {
    /// The pane's session.
    pub id: String,
    /// Where the session's text is drawn.
    pub area: Rect,
    /// Pressed in focus (not in the grid or zoom).
    pub focused: bool,
    /// Where it went down, in the frame.
    pub at: (u16, u16),
    /// It moved: a selection is being made.
    pub moved: bool,
}
