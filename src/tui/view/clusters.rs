//! Grapheme clusters that vt100 spreads over several cells, put back
//! together in the drawn buffer.
//!
//! vt100 gives every wide character a cell of its own, so an emoji ZWJ
//! sequence (`👨‍👩‍👧`: man, ZWJ, woman, ZWJ, girl) arrives as three cells,
//! each but the last ending in a ZWJ. Drawn as they are, each cell is
//! written after its own cursor move, and a terminal that joins a ZWJ to
//! whatever it prints next joins across the move: the rest of the row lands
//! in the wrong columns. Here the sequence goes back into its first cell as
//! one cluster (which a modern terminal draws two columns wide) and the
//! cells it took become blank, so every column after it is where the
//! session's screen has it. A ZWJ that joins nothing is dropped for the
//! same reason. The stand-in for invalid UTF-8 (`crate::vt::utf8`) is
//! drawn as U+FFFD on the way.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use unicode_width::UnicodeWidthStr;

const ZWJ: char = '\u{200D}';

/// Joins the ZWJ sequences in `area` of `buf`.
pub fn join(buf: &mut Buffer, area: Rect) {
    let area = area.intersection(buf.area);
    for y in area.top()..area.bottom() {
        let mut x = area.left();
        while x < area.right() {
            let sym = buf[(x, y)].symbol().to_owned();
            // Invalid UTF-8 the program wrote (crate::vt::utf8).
            if sym.starts_with(crate::vt::utf8::STANDIN) {
                buf[(x, y)].set_symbol("\u{FFFD}");
            }
            if !sym.ends_with(ZWJ) {
                x += 1;
                continue;
            }
            let mut cluster = sym;
            // The next character starts after this one's columns.
            let mut next = x + width_of(&cluster);
            while cluster.ends_with(ZWJ) {
                let joined = (next < area.right())
                    .then(|| buf[(next, y)].symbol().to_owned())
                    .filter(|s| joins(s));
                let Some(more) = joined else {
                    // Nothing to join: the ZWJ must not reach the
                    // terminal, which would join it to the next thing
                    // it prints, wherever that is.
                    cluster.pop();
                    break;
                };
                let w = width_of(&more);
                for cx in next..(next + w).min(area.right()) {
                    buf[(cx, y)].set_symbol(" ");
                }
                cluster.push_str(&more);
                next += w;
            }
            buf[(x, y)].set_symbol(&cluster);
            x = next.max(x + 1);
        }
    }
}

/// Columns a cell's text takes on the session's screen (vt100's count:
/// its first character's width, at least one).
fn width_of(s: &str) -> u16 {
    s.chars()
        .next()
        .and_then(unicode_width::UnicodeWidthChar::width)
        .map_or(1, |w| w.clamp(1, 2) as u16)
}

/// Whether a ZWJ may join `s`: a pictograph (what emoji sequences are made
/// of), not a space or plain text.
fn joins(s: &str) -> bool {
    s.chars().next().is_some_and(|c| {
        let c = c as u32;
        // Miscellaneous symbols and dingbats (♀, ❤, ⚕), and the
        // supplementary planes' pictographs (people, objects, flags' tags).
        (0x2600..=0x27BF).contains(&c) || (0x1F000..=0x1FAFF).contains(&c)
    }) && s.width() <= 2
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cells: &[&str]) -> Buffer {
        let mut b = Buffer::empty(Rect::new(0, 0, cells.len() as u16, 1));
        for (x, s) in cells.iter().enumerate() {
            b[(x as u16, 0)].set_symbol(s);
        }
        b
    }

    fn text(b: &Buffer) -> Vec<String> {
        (0..b.area.width)
            .map(|x| b[(x, 0)].symbol().to_owned())
            .collect()
    }

    #[test]
    fn a_zwj_sequence_goes_back_into_one_cell() {
        let family = "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}";
        let mut b = row(&[
            "A",
            " ",
            "\u{1F468}\u{200D}",
            " ",
            "\u{1F469}\u{200D}",
            " ",
            "\u{1F467}",
            " ",
            " ",
            "B",
        ]);
        let area = b.area;
        join(&mut b, area);
        assert_eq!(
            text(&b),
            ["A", " ", family, " ", " ", " ", " ", " ", " ", "B"]
        );
        // Drawn two columns wide, as a modern terminal draws it.
        assert_eq!(family.width(), 2);
    }

    #[test]
    fn a_zwj_that_joins_nothing_is_dropped() {
        let mut b = row(&["\u{1F468}\u{200D}", " ", "x", "y"]);
        let area = b.area;
        join(&mut b, area);
        assert_eq!(text(&b), ["\u{1F468}", " ", "x", "y"]);
        let mut b = row(&["a", "\u{1F468}\u{200D}"]);
        let area = b.area;
        join(&mut b, area);
        assert_eq!(text(&b), ["a", "\u{1F468}"]);
    }

    #[test]
    fn other_text_is_left_alone() {
        let cells = [
            "e\u{301}",
            "\u{1F1E9}\u{1F1EA}",
            " ",
            "\u{2764}\u{FE0F}",
            " ",
            "\u{4E2D}",
            " ",
        ];
        let mut b = row(&cells);
        let area = b.area;
        join(&mut b, area);
        assert_eq!(text(&b), cells);
    }
}
