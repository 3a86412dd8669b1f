//! The one-row status bar `hm attach` keeps at the bottom of the screen,
//! and the scanner that notices when the child's output may have wiped it.
//!
//! The child is told its terminal is one row shorter and a scroll region
//! keeps its scrolling above the bar. Every scroll region the child sets is
//! clamped to the rows above the bar right where it appears, so the output
//! after it already scrolls there. Output that clears the screen or
//! switches screens would damage the bar, so the attach client scans for
//! those sequences and redraws after them.

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

/// The scroll region the child asked for (`CSI top ; bottom r`, 0 for a
/// default), kept within the `rows_above_bar` rows it was told it has, as
/// a terminal of that size would; one it would refuse becomes the whole of
/// them.
pub fn clamp_region((top, bottom): (u16, u16), rows_above_bar: u16) -> (u16, u16) {
    let top = top.max(1);
    let bottom = if bottom == 0 {
        rows_above_bar
    } else {
        bottom.min(rows_above_bar)
    };
    if top < bottom {
        (top, bottom)
    } else {
        (1, rows_above_bar)
    }
}

/// Sets a clamped scroll region. Sent right after the child's own DECSTBM:
/// both home the cursor, so the pair acts like the clamped one alone.
pub fn set_region((top, bottom): (u16, u16)) -> Vec<u8> {
    format!("\x1b[{top};{bottom}r").into_bytes()
}

/// What the child's output did to the bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Damage {
    #[default]
    None,
    /// The bar may have been erased: redraw it.
    Redraw,
    /// The scroll region may be lost too: set it again, then redraw.
    Region,
}

/// Incremental scanner for damaging sequences (split across chunks too).
#[derive(Debug, Default)]
pub struct DamageScan {
    state: ScanState,
    params: Vec<u8>,
    /// The last scroll region the child set, as given; `None` for none
    /// (or one undone by a reset).
    region: Option<(u16, u16)>,
    /// The region set by the byte just scanned.
    just_set: Option<(u16, u16)>,
}

/// Where in scanned bytes the child set a scroll region: the offset just
/// past the sequence, and the region as given.
pub type RegionAt = (usize, (u16, u16));

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ScanState {
    #[default]
    Ground,
    Esc,
    Csi,
}

impl DamageScan {
    /// Scans output; returns the worst damage, and appends to `regions`
    /// every scroll region set in it (which is no damage if it is clamped
    /// in place, see [`clamp_region`]).
    pub fn scan(&mut self, bytes: &[u8], regions: &mut Vec<RegionAt>) -> Damage {
        let mut worst = Damage::None;
        for (i, &b) in bytes.iter().enumerate() {
            let d = self.byte(b);
            if let Some(r) = self.just_set.take() {
                regions.push((i + 1, r));
            }
            worst = worst.max(d);
        }
        worst
    }

    /// The scroll region the child set last, as given.
    pub fn region(&self) -> Option<(u16, u16)> {
        self.region
    }

    /// A resize makes terminals drop the scroll region.
    pub fn forget_region(&mut self) {
        self.region = None;
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
                    b'c' => {
                        self.region = None;
                        Damage::Region
                    }
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
                if b == 0x1b {
                    // An unfinished sequence is abandoned for a new one.
                    self.state = ScanState::Esc;
                    return Damage::None;
                }
                if self.params.len() < 32 {
                    self.params.push(b);
                }
                Damage::None
            }
        }
    }

    fn csi(&mut self, fin: u8) -> Damage {
        let p = self.params.as_slice();
        match fin {
            // DECSTBM (digits and `;` only; others are private sequences).
            b'r' if p.iter().all(|c| c.is_ascii_digit() || *c == b';') => {
                let mut n = p
                    .split(|&c| c == b';')
                    .map(|v| std::str::from_utf8(v).ok()?.parse::<u16>().ok());
                let top = n.next().flatten().unwrap_or(0);
                let bottom = n.next().flatten().unwrap_or(0);
                self.region = Some((top, bottom));
                self.just_set = self.region;
                Damage::None
            }
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

    fn scan(s: &mut DamageScan, bytes: &[u8]) -> Damage {
        s.scan(bytes, &mut Vec::new())
    }

    #[test]
    fn notices_damage_across_chunks() {
        let mut s = DamageScan::default();
        assert_eq!(scan(&mut s, b"hello \x1b[1;3"), Damage::None);
        assert_eq!(scan(&mut s, b"1mx\x1b[2"), Damage::None);
        assert_eq!(scan(&mut s, b"J"), Damage::Redraw);
        assert_eq!(scan(&mut s, b"\x1b[?1049h"), Damage::Region);
        assert_eq!(scan(&mut s, b"\x1b[?25l\x1b[H"), Damage::None);
        assert_eq!(scan(&mut s, b"\x1bc"), Damage::Region);
    }

    #[test]
    fn finds_every_scroll_region_the_child_sets() {
        let mut s = DamageScan::default();
        let mut at = Vec::new();
        assert_eq!(s.scan(b"ab\x1b[r\x1b[5;10rx\x1b[5", &mut at), Damage::None);
        assert_eq!(at, [(5, (0, 0)), (12, (5, 10))]);
        at.clear();
        // Split across chunks, repeated, and not confused by private or
        // abandoned sequences.
        s.scan(b";10r\x1b[?1r\x1b[1\x1b[3;4r", &mut at);
        assert_eq!(at, [(4, (5, 10)), (18, (3, 4))]);
        assert_eq!(s.region(), Some((3, 4)));
        s.scan(b"\x1bc", &mut at);
        assert_eq!(s.region(), None);
    }

    #[test]
    fn regions_stay_above_the_bar() {
        assert_eq!(clamp_region((0, 0), 23), (1, 23));
        assert_eq!(clamp_region((5, 10), 23), (5, 10));
        assert_eq!(clamp_region((5, 24), 23), (5, 23));
        assert_eq!(clamp_region((23, 24), 23), (1, 23));
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
