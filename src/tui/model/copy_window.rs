//! A pane's window as copy mode last saw it: plain data, held by each
//! pane; `tui::copy` sets and reads it.

/// A pane's window onto its session's screen, as copy mode sees it: how
/// many rows it shows (0: the whole screen), and how many rows of the live
/// screen were below it (blank, or what its program drew under the cursor)
/// when it left the live screen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CopyWindow {
    pub rows: u16,
    pub below: u16,
}
