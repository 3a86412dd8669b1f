//! A selection made with the mouse, for clients that take the mouse in
//! copy mode: pressed, dragged and let go, as `v`, a cursor moved there
//! and `y` would do.

use super::{CopyMode, Extent, History, Outcome, Pos};

impl CopyMode {
    /// A selection made with the mouse: from the view's cell `anchor` to
    /// its cell `cursor` (rows of the screen the view shows, from its top),
    /// as `v` and a cursor moved there would make. The anchor stays where
    /// it is when only the cursor moves on ([`CopyMode::drag_to`]).
    pub fn select(&mut self, ext: Extent, anchor: (u16, u16), cursor: (u16, u16)) {
        let at = |(r, c): (u16, u16)| Pos {
            row: self.top + u64::from(r),
            col: c,
        };
        self.anchor = Some(at(anchor));
        self.cursor = Some(at(cursor));
        self.whole_lines = false;
        self.prompt = None;
        self.ends_at_bottom = false;
        self.clamp(ext);
    }

    /// The mouse moved on with its button down: the selection's end goes
    /// to the view's cell `cursor`.
    pub fn drag_to(&mut self, ext: Extent, (r, c): (u16, u16)) {
        self.cursor = Some(Pos {
            row: self.top + u64::from(r),
            col: c,
        });
        self.clamp(ext);
    }

    /// The selection as text, as `y` copies it (the button let go).
    pub fn copy_selection<H: History + ?Sized>(&self, hist: &mut H) -> Outcome {
        self.copy(hist)
    }
}
