//! The one-row status bar `hm attach` keeps at the bottom of the screen,
//! and the scanner that notices when the child's output may have wiped it.
//!
//! The child is told its terminal is one row shorter and a scroll region
//! keeps its scrolling above the bar. Output that clears the screen, resets
//! the scroll region or switches screens would damage the bar, so the
//! attach client scans for those sequences and redraws after them.

use crate::classify::{self, ProcessState};
use crate::client::human_ms;

/// SGR colours of a state badge: (foreground, background) as 256-colour
/// palette indices, readable on dark and light terminals alike.
pub fn state_colors(state: u8) -> (u8, u8) {
    match ProcessState::from_byte(state) {
        Some(ProcessState::Idle) => (16, 71),
        Some(ProcessState::Thinking) => (16, 179),
        Some(ProcessState::Streaming) => (231, 25),
        Some(ProcessState::ToolUse) => (231, 97),
        Some(ProcessState::Active) => (16, 44),
        Some(ProcessState::Dead) => (231, 124),
        None => (16, 250),
    }
}

/// Draws the bar on row `row` (1-based) of a `cols`-wide terminal without
/// moving the cursor the child sees.
pub fn render(id: &str, cols: u16, row: u16, state: Option<(u8, u64)>) -> Vec<u8> {
    let cols = usize::from(cols);
    let left = format!(" hm · {id} ");
    let right = match state {
        Some((s, ms)) => format!(" {} {} ", classify::state_name(s), human_ms(ms)),
        None => " … ".to_string(),
    };
    let (fg, bg) = state.map_or((16, 250), |(s, _)| state_colors(s));
    let left: String = left.chars().take(cols).collect();
    let room = cols - left.chars().count();
    let right: String = right.chars().take(room).collect();
    let fill = room - right.chars().count();
    let mut out = Vec::with_capacity(64 + cols);
    // Save the cursor, draw with wrapping off so the last column cannot
    // scroll the screen, then put everything back.
    out.extend_from_slice(
        format!("\x1b7\x1b[?7l\x1b[{row};1H\x1b[0;1;38;5;16;48;5;250m").as_bytes(),
    );
    out.extend_from_slice(left.as_bytes());
    out.extend_from_slice(b"\x1b[0;48;5;236m");
    out.extend(std::iter::repeat_n(b' ', fill));
    out.extend_from_slice(format!("\x1b[0;1;38;5;{fg};48;5;{bg}m").as_bytes());
    out.extend_from_slice(right.as_bytes());
    out.extend_from_slice(b"\x1b[0m\x1b[?7h\x1b8");
    out
}

/// Sets the scroll region to the rows above the bar; DECSTBM homes the
/// cursor, so it is wrapped in save/restore.
pub fn scroll_region(rows_above_bar: u16) -> Vec<u8> {
    format!("\x1b7\x1b[1;{rows_above_bar}r\x1b8").into_bytes()
}

/// What the child's output did to the bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Damage {
    #[default]
    None,
    /// The bar may have been erased: redraw it.
    Redraw,
    /// The scroll region was reset too: set it again, then redraw.
    Region,
}

/// Incremental scanner for damaging sequences (split across chunks too).
#[derive(Debug, Default)]
pub struct DamageScan {
    state: ScanState,
    params: Vec<u8>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ScanState {
    #[default]
    Ground,
    Esc,
    Csi,
}

impl DamageScan {
    pub fn scan(&mut self, bytes: &[u8]) -> Damage {
        let mut worst = Damage::None;
        for &b in bytes {
            let d = self.byte(b);
            worst = worst.max(d);
        }
        worst
    }

    fn byte(&mut self, b: u8) -> Damage {
        match self.state {
            ScanState::Ground => {
                if b == 0x1b {
                    self.state = ScanState::Esc;
                }
                Damage::None
            }
            ScanState::Esc => {
                self.state = ScanState::Ground;
                match b {
                    b'[' => {
                        self.params.clear();
                        self.state = ScanState::Csi;
                        Damage::None
                    }
                    // RIS: full reset.
                    b'c' => Damage::Region,
                    0x1b => {
                        self.state = ScanState::Esc;
                        Damage::None
                    }
                    _ => Damage::None,
                }
            }
            ScanState::Csi => {
                if (0x40..=0x7e).contains(&b) {
                    self.state = ScanState::Ground;
                    return self.csi(b);
                }
                if self.params.len() < 32 {
                    self.params.push(b);
                }
                Damage::None
            }
        }
    }

    fn csi(&self, fin: u8) -> Damage {
        let p = self.params.as_slice();
        match fin {
            // Any scroll region change the child makes may include our row.
            b'r' if !p.starts_with(b"?") => Damage::Region,
            b'J' if matches!(p, b"" | b"0" | b"2" | b"3") => Damage::Redraw,
            b'h' | b'l' if p.starts_with(b"?") => {
                let modes = &p[1..];
                if modes
                    .split(|&c| c == b';')
                    .any(|m| matches!(m, b"1049" | b"1047" | b"47" | b"3"))
                {
                    Damage::Region
                } else {
                    Damage::None
                }
            }
            b'S' | b'T' => Damage::Redraw,
            _ => Damage::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_damage_across_chunks() {
        let mut s = DamageScan::default();
        assert_eq!(s.scan(b"hello \x1b[1;3"), Damage::None);
        assert_eq!(s.scan(b"1mx\x1b[2"), Damage::None);
        assert_eq!(s.scan(b"J"), Damage::Redraw);
        assert_eq!(s.scan(b"\x1b[r"), Damage::Region);
        assert_eq!(s.scan(b"\x1b[?1049h"), Damage::Region);
        assert_eq!(s.scan(b"\x1b[?25l\x1b[H"), Damage::None);
        assert_eq!(s.scan(b"\x1bc"), Damage::Region);
    }

    #[test]
    fn bar_fits_the_width() {
        let bar = render("api", 30, 24, Some((0x04, 3200)));
        let nz = |n| std::num::NonZeroU16::new(n).expect("non-zero");
        let mut p = vt100::Parser::new(nz(24), nz(30), 0);
        p.process(&bar);
        let row = p.screen().contents_between(23, 0, 23, 30);
        assert!(row.starts_with(" hm · api"), "{row:?}");
        assert!(row.trim_end().ends_with("active 3.2s"), "{row:?}");
        // Too narrow for both: the id wins, the state is cut.
        let narrow = render("api", 12, 24, Some((0x04, 3200)));
        let mut p = vt100::Parser::new(nz(24), nz(12), 0);
        p.process(&narrow);
        assert_eq!(p.screen().contents_between(23, 0, 23, 12), " hm · api  a");
        assert_eq!(p.screen().cursor_position(), (0, 0));
    }
}
