//! The one-row status bar `hm attach` keeps at the bottom of the screen,
//! and the scanner that notices when the child's output may have wiped it.
//!
//! The child is told its terminal is one row shorter and a scroll region
//! keeps its scrolling above the bar. Every scroll region the child sets is
//! clamped to the rows above the bar right where it appears, so the output
//! after it already scrolls there. Output that clears or scrolls the
//! screen, switches its width or resets the terminal would damage the bar,
//! so the attach client scans what reaches the terminal for those
//! sequences and redraws after them. The child's own screen switches never
//! reach it: [`crate::attach::screens`] turns them into clears first.

use std::fmt::Write;

use ratatui::style::{Color, Modifier, Style};

use crate::client::clock_ms;
use crate::theme::Theme;
use crate::vt::tokenizer::{Ended, Kind, Step, Tokenizer, find_esc};

/// The fewest columns of a label the bar shows, cut: fewer say nothing.
const MIN_LABEL: usize = 8;

/// Draws the bar on row `row` (1-based) of a `cols`-wide terminal without
/// moving the cursor the child sees. The label takes the theme's footer key
/// style, the rest the footer's, and the state its badge style, as in the
/// dashboard. `state`: the state byte (for the badge's colour), how it
/// reads (`waiting · input`) and for how long.
///
/// What fits, in this order: the id; the state; as many of `hints` (the
/// keys, the most important first, or a notice) as fit whole, before the
/// state; the session's `label` after the id, cut with `…` to what they
/// leave, or left out where fewer than [`MIN_LABEL`] columns of it would
/// show.
pub fn render(
    id: &str,
    label: Option<&str>,
    cols: u16,
    row: u16,
    state: Option<(u8, &str, u64)>,
    hints: &[String],
    theme: &Theme,
) -> Vec<u8> {
    let width = |t: &str| unicode_width::UnicodeWidthStr::width(t);
    let state_text = match state {
        // The label is the supervisor's words: nothing in it may act on
        // the terminal.
        Some((_, label, ms)) => format!(" {} {} ", crate::paths::sanitize(label), clock_ms(ms)),
        None => " … ".to_string(),
    };
    // What the id's part and the state take, with the gaps between.
    let around = |name: &str| width(name) + 6 + width(&state_text) + 4;
    let room = usize::from(cols).saturating_sub(around(id));
    let mut hint = String::new();
    for part in hints {
        let sep = if hint.is_empty() { 0 } else { 2 };
        if width(&hint) + sep + width(part) <= room {
            if sep > 0 {
                hint.push_str("  ");
            }
            hint.push_str(part);
        }
    }
    if !hint.is_empty() {
        hint.push_str("  ");
    }
    // The label in what the keys leave, cut with `…` where it does not
    // fit whole (at 80 columns a label of 24 went whole, blank columns
    // and all), and not at all where less than a few of it would show.
    let room = usize::from(cols).saturating_sub(around(id) + width(&hint) + 3);
    let name = match label {
        Some(l) if width(l) <= room || room >= MIN_LABEL => {
            format!("{id} · {}", crate::cut::end(l, room))
        }
        _ => id.to_owned(),
    };
    let badge = theme.footer.patch(theme.state(state.map(|(s, _, _)| s)));
    draw(&name, cols, row, &hint, &state_text, badge, theme)
}

/// The bar with a problem (`not responding`) where the state would be, in
/// the theme's error style.
pub fn render_problem(id: &str, cols: u16, row: u16, problem: &str, theme: &Theme) -> Vec<u8> {
    let badge = theme.footer.patch(theme.error);
    draw(id, cols, row, "", &format!(" {problem} "), badge, theme)
}

/// The bar in copy mode: where its view is (`copy [+120/2000]`) in the
/// key style, and `text` (the search, a note, or what the keys do).
pub fn render_copy(
    id: &str,
    cols: u16,
    row: u16,
    marker: &str,
    text: &str,
    theme: &Theme,
) -> Vec<u8> {
    let badge = theme.footer.patch(theme.footer_key);
    let right = format!(" copy {marker} ");
    draw(id, cols, row, &format!("{text}  "), &right, badge, theme)
}

fn draw(
    id: &str,
    cols: u16,
    row: u16,
    hint: &str,
    right: &str,
    badge: Style,
    theme: &Theme,
) -> Vec<u8> {
    let cols = usize::from(cols);
    let left = format!(" hm · {id} ");
    let label = theme.footer.patch(theme.footer_key);
    // Measured in columns, not characters: a wide character (a search in
    // copy mode may have some) takes two, and one too many would scroll.
    let (left, used) = fit(&left, cols);
    let room = cols - used;
    let (right, used) = fit(right, room);
    let room = room - used;
    let (hint, used) = fit_items(hint, room);
    let fill = room - used;
    let mut out = Vec::with_capacity(64 + cols);
    // Save the cursor, draw with wrapping off so the last column cannot
    // scroll the screen, then put everything back.
    out.extend_from_slice(format!("\x1b7\x1b[?7l\x1b[{row};1H{}", sgr(label)).as_bytes());
    out.extend_from_slice(left.as_bytes());
    out.extend_from_slice(sgr(theme.footer).as_bytes());
    out.extend(std::iter::repeat_n(b' ', fill));
    out.extend_from_slice(hint.as_bytes());
    out.extend_from_slice(sgr(badge).as_bytes());
    out.extend_from_slice(right.as_bytes());
    out.extend_from_slice(b"\x1b[0m\x1b[?7h\x1b8");
    out
}

/// As many of the items of `text` (parted by two spaces: `q leaves  / ?
/// search`) as fit whole in `room` columns, and the columns they take: a
/// key's help cut in its middle (`y cop`) reads as another word. Text of
/// one item (a search being typed) is cut where the room ends.
fn fit_items(text: &str, room: usize) -> (String, usize) {
    let width = |t: &str| unicode_width::UnicodeWidthStr::width(t);
    if width(text) <= room || !text.trim_end().contains("  ") {
        return fit(text, room);
    }
    let mut kept = String::new();
    for item in text.trim_end().split("  ") {
        let next = format!("{item}  ");
        if width(&kept) + width(&next) > room {
            break;
        }
        kept.push_str(&next);
    }
    let used = width(&kept);
    (kept, used)
}

/// As much of `text` as fits in `room` columns, and the columns it takes.
fn fit(text: &str, room: usize) -> (String, usize) {
    let mut used = 0;
    let mut kept = String::new();
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > room {
            break;
        }
        used += w;
        kept.push(c);
    }
    (kept, used)
}

/// The SGR sequence that resets the attributes and then sets `style`'s.
/// Written here rather than through crossterm, whose colours consult
/// NO_COLOR on their own: the bar follows the theme it is given.
pub(crate) fn sgr(style: Style) -> String {
    const MODIFIERS: [(Modifier, u8); 9] = [
        (Modifier::BOLD, 1),
        (Modifier::DIM, 2),
        (Modifier::ITALIC, 3),
        (Modifier::UNDERLINED, 4),
        (Modifier::SLOW_BLINK, 5),
        (Modifier::RAPID_BLINK, 6),
        (Modifier::REVERSED, 7),
        (Modifier::HIDDEN, 8),
        (Modifier::CROSSED_OUT, 9),
    ];
    let mut out = String::from("\x1b[0");
    for (modifier, code) in MODIFIERS {
        if style.add_modifier.contains(modifier) {
            let _ = write!(out, ";{code}");
        }
    }
    if let Some(fg) = style.fg {
        push_colour(&mut out, fg, 30);
    }
    if let Some(bg) = style.bg {
        push_colour(&mut out, bg, 40);
    }
    out.push('m');
    out
}

/// Appends the SGR parameters of a colour; `base` is 30 for the
/// foreground, 40 for the background.
fn push_colour(out: &mut String, colour: Color, base: u8) {
    let code = match colour {
        Color::Reset => base + 9,
        Color::Black => base,
        Color::Red => base + 1,
        Color::Green => base + 2,
        Color::Yellow => base + 3,
        Color::Blue => base + 4,
        Color::Magenta => base + 5,
        Color::Cyan => base + 6,
        Color::Gray => base + 7,
        Color::DarkGray => base + 60,
        Color::LightRed => base + 61,
        Color::LightGreen => base + 62,
        Color::LightYellow => base + 63,
        Color::LightBlue => base + 64,
        Color::LightMagenta => base + 65,
        Color::LightCyan => base + 66,
        Color::White => base + 67,
        Color::Indexed(i) => {
            let _ = write!(out, ";{};5;{i}", base + 8);
            return;
        }
        Color::Rgb(r, g, b) => {
            let _ = write!(out, ";{};2;{r};{g};{b}", base + 8);
            return;
        }
    };
    let _ = write!(out, ";{code}");
}

/// After a resize, before [`scroll_region`]: moves the cursor off the
/// last row if it is there, keeping it where it is otherwise. A terminal
/// that shrinks leaves a cursor that was at its bottom on its new last
/// row, which becomes the bar's: below the region, output there never
/// scrolls and the bar covers it. A line feed scrolls the whole screen
/// (the terminal dropped the region on resizing) only from the last row,
/// and elsewhere moves down one; the cursor up undoes the move, and from
/// the last row leaves the cursor on the same line of text, one row up.
/// The terminal is raw: the line feed keeps the column.
pub const CURSOR_OFF_LAST_ROW: &[u8] = b"\n\x1b[A";

/// Erases row `row` (1-based), the cursor left where it was.
pub fn erase_row(row: u16) -> Vec<u8> {
    format!("\x1b7\x1b[{row};1H\x1b[2K\x1b8").into_bytes()
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

/// Incremental scanner for damaging sequences (split across chunks too),
/// which reads the output as the terminal does ([`Tokenizer`]).
#[derive(Debug)]
pub struct DamageScan {
    tokens: Tokenizer,
    /// The last scroll region the child set, as given; `None` for none
    /// (or one undone by a reset).
    region: Option<(u16, u16)>,
}

impl Default for DamageScan {
    fn default() -> Self {
        DamageScan {
            // Longer parameters than this are no sequence the bar cares
            // about, except a padded scroll region: see `csi`.
            tokens: Tokenizer::new(PARAMS_KEPT),
            region: None,
        }
    }
}

/// What of a sequence the scanner keeps.
const PARAMS_KEPT: usize = 32;

/// Where in scanned bytes the child set a scroll region: the offset just
/// past the sequence, and the region as given.
pub type RegionAt = (usize, (u16, u16));

impl DamageScan {
    /// Scans output; returns the worst damage, and appends to `regions`
    /// every scroll region set in it (which is no damage if it is clamped
    /// in place, see [`clamp_region`]).
    pub fn scan(&mut self, bytes: &[u8], regions: &mut Vec<RegionAt>) -> Damage {
        let mut worst = Damage::None;
        let mut i = 0;
        while i < bytes.len() {
            // Skip plain text in bulk: only escape sequences can damage.
            if self.tokens.in_ground() {
                match find_esc(&bytes[i..]) {
                    Some(k) => i += k,
                    None => break,
                }
            }
            // Parameters and string text change nothing by themselves.
            i += self.tokens.run(&bytes[i..]);
            if i == bytes.len() {
                break;
            }
            let b = bytes[i];
            let step = self.tokens.advance(b);
            i += 1;
            if step != Step::End(Ended::Acted) {
                continue;
            }
            let (d, region) = self.sequence(b);
            if let Some(r) = region {
                regions.push((i, r));
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

    /// What the sequence that just ended (with `fin`) did to the bar, and
    /// the scroll region it set, if it set one.
    fn sequence(&mut self, fin: u8) -> (Damage, Option<(u16, u16)>) {
        let seq = self.tokens.seq();
        match seq.kind {
            // RIS: full reset.
            Kind::Esc if seq.collected == b"c" => {
                self.region = None;
                (Damage::Region, None)
            }
            Kind::Csi if seq.truncated => {
                // Only padding makes parameters this long; a region set this
                // way is not known, so the bar's is set again.
                if fin == b'r' {
                    self.region = None;
                    (Damage::Region, None)
                } else {
                    (Damage::Redraw, None)
                }
            }
            Kind::Csi => match seq.csi() {
                Some((p, fin)) => csi(p, fin, &mut self.region),
                None => (Damage::None, None),
            },
            _ => (Damage::None, None),
        }
    }
}

/// What a CSI with parameters `p` and final byte `fin` does to the bar,
/// and the scroll region it sets, if it sets one.
fn csi(p: &[u8], fin: u8, region: &mut Option<(u16, u16)>) -> (Damage, Option<(u16, u16)>) {
    let damage = match fin {
        // DECSTBM (digits and `;` only; others are private sequences).
        b'r' if p.iter().all(|c| c.is_ascii_digit() || *c == b';') => {
            let mut n = p
                .split(|&c| c == b';')
                .map(|v| std::str::from_utf8(v).ok()?.parse::<u16>().ok());
            let top = n.next().flatten().unwrap_or(0);
            let bottom = n.next().flatten().unwrap_or(0);
            *region = Some((top, bottom));
            return (Damage::None, *region);
        }
        b'J' if matches!(p, b"" | b"0" | b"2" | b"3") => Damage::Redraw,
        // DECCOLM clears the screen and the margins. (Screen switches
        // were rewritten into clears before the scan.)
        b'h' | b'l' if p.starts_with(b"?") => {
            let modes = &p[1..];
            if modes.split(|&c| c == b';').any(|m| m == b"3") {
                Damage::Region
            } else {
                Damage::None
            }
        }
        b'S' | b'T' => Damage::Redraw,
        // DECSTR, a soft reset, drops the margins (and is what a full
        // reset from the child is rewritten to).
        b'p' if p == b"!" => {
            *region = None;
            Damage::Region
        }
        _ => Damage::None,
    };
    (damage, None)
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
        assert_eq!(scan(&mut s, b"\x1b[?1;3h"), Damage::Region);
        assert_eq!(scan(&mut s, b"\x1b[?25l\x1b[H"), Damage::None);
        assert_eq!(scan(&mut s, b"\x1bc"), Damage::Region);
        assert_eq!(scan(&mut s, crate::attach::screens::RESET), Damage::Region);
        // Bytes vte ignores inside a sequence do not hide it.
        assert_eq!(scan(&mut s, b"\x1b[\x802J"), Damage::Redraw);
        assert_eq!(scan(&mut s, b"\x1b\x80c"), Damage::Region);
    }

    /// A terminal executes a control inside a sequence and goes on with
    /// it: the erase and the scroll region after a CR still count.
    #[test]
    fn controls_inside_a_sequence_do_not_hide_it() {
        let mut s = DamageScan::default();
        assert_eq!(scan(&mut s, b"\x1b[\r2J"), Damage::Redraw);
        let mut at = Vec::new();
        assert_eq!(s.scan(b"\x1b[1;5\rr", &mut at), Damage::None);
        assert_eq!(at, [(7, (1, 5))]);
        assert_eq!(s.region(), Some((1, 5)));
        // As vt100 reads it: the screen is erased.
        assert_eq!(screen(b"abc\x1b[\r2J", 20).screen().contents(), "");
    }

    /// Parameters padded past what the scanner keeps: a scroll region it
    /// cannot read is still a change of region, and sets the bar's again.
    #[test]
    fn a_padded_scroll_region_is_not_missed() {
        let mut s = DamageScan::default();
        let mut padded = b"\x1b[".to_vec();
        padded.extend(std::iter::repeat_n(b'0', 40));
        padded.extend(b"1;5r");
        assert_eq!(scan(&mut s, &padded), Damage::Region);
        assert_eq!(s.region(), None);
        let mut padded = b"\x1b[".to_vec();
        padded.extend(std::iter::repeat_n(b'0', 40));
        padded.extend(b"2J");
        assert_eq!(scan(&mut s, &padded), Damage::Redraw);
    }

    #[test]
    fn rewritten_screen_switches_are_noticed() {
        use crate::attach::screens;
        let mut s = DamageScan::default();
        assert_eq!(scan(&mut s, screens::ENTER), Damage::Redraw);
        assert_eq!(scan(&mut s, screens::LEAVE), Damage::Redraw);
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

    fn screen(bar: &[u8], cols: u16) -> vt100::Parser {
        let nz = |n| std::num::NonZeroU16::new(n).expect("non-zero");
        let mut p = vt100::Parser::new(nz(24), nz(cols), 0);
        p.process(bar);
        p
    }

    fn dark() -> Theme {
        Theme::by_name("dark").expect("built-in theme")
    }

    #[test]
    fn bar_fits_the_width() {
        let theme = dark();
        let p = screen(
            &render(
                "api",
                None,
                30,
                24,
                Some((0x04, "active", 3200)),
                &[],
                &theme,
            ),
            30,
        );
        let row = p.screen().contents_between(23, 0, 23, 30);
        assert!(row.starts_with(" hm · api"), "{row:?}");
        assert!(row.trim_end().ends_with("active 3s"), "{row:?}");
        // Too narrow for both: the id wins, the state is cut.
        let p = screen(
            &render(
                "api",
                None,
                12,
                24,
                Some((0x04, "active", 3200)),
                &["Ctrl-\\ detaches".to_owned()],
                &theme,
            ),
            12,
        );
        assert_eq!(p.screen().contents_between(23, 0, 23, 12), " hm · api  a");
        assert_eq!(p.screen().cursor_position(), (0, 0));
        // With room, the way out is named before the state.
        let p = screen(
            &render(
                "api",
                None,
                50,
                24,
                Some((0x04, "active", 3200)),
                &["Ctrl-\\ detaches".to_owned()],
                &theme,
            ),
            50,
        );
        let row = p.screen().contents_between(23, 0, 23, 50);
        assert!(
            row.trim_end().ends_with("Ctrl-\\ detaches   active 3s"),
            "{row:?}"
        );
    }

    /// The keys come first, as many as fit whole, the most important
    /// first; the label after the id in what they leave, cut with `…`,
    /// its wide characters counted as two columns.
    #[test]
    fn the_keys_fit_first_and_the_label_beside_them() {
        let theme = dark();
        let keys = ["Ctrl-\\ detaches".to_owned(), "Ctrl-] history".to_owned()];
        let row = |cols: u16, label: &str| {
            let bar = render(
                "api",
                Some(label),
                cols,
                24,
                Some((0x04, "active", 3200)),
                &keys,
                &theme,
            );
            let p = screen(&bar, cols);
            p.screen().contents_between(23, 0, 23, cols)
        };
        let wide = row(80, "review PR 42");
        assert!(wide.starts_with(" hm · api · review PR 42 "), "{wide:?}");
        assert!(
            wide.contains("Ctrl-\\ detaches  Ctrl-] history"),
            "{wide:?}"
        );
        // Room for the keys, not the label as well.
        let both = row(56, "review PR 42");
        assert!(both.starts_with(" hm · api "), "{both:?}");
        assert!(!both.contains("review"), "{both:?}");
        assert!(
            both.contains("Ctrl-\\ detaches  Ctrl-] history"),
            "{both:?}"
        );
        // The second key goes before the first.
        let one = row(40, "review PR 42");
        assert!(one.contains("Ctrl-\\ detaches"), "{one:?}");
        assert!(!one.contains("history"), "{one:?}");
        // Six wide characters are twelve columns: whole in 72, cut with
        // `…` in 70 (ten columns left), counted as two columns each.
        assert!(row(72, "日本語の確認").contains("api · 日本語の確認"));
        let cjk = row(70, "日本語の確認");
        assert!(cjk.contains("api · 日本語の… "), "{cjk:?}");
        assert!(cjk.contains("Ctrl-] history"), "{cjk:?}");
        // Fewer columns than a few of it would show: none of it.
        let short = row(64, "日本語の確認");
        assert!(short.starts_with(" hm · api "), "{short:?}");
        assert!(!short.contains("日本"), "{short:?}");
        // A long label at 80 columns shows what fits of it.
        let long = row(80, "refactor the lexer and the parser, then docs");
        assert!(long.contains("api · refactor the lexer…"), "{long:?}");
        assert!(long.contains("Ctrl-] history"), "{long:?}");
    }

    /// Copy mode's keys are dropped whole from the end where they do not
    /// fit: at 60 columns the bar read `y cop copy [+4/4]`.
    #[test]
    fn copy_modes_keys_are_left_out_whole_not_cut() {
        let theme = dark();
        let keys = "q leaves  / ? search  v select  y copies";
        for cols in 30..=80u16 {
            let bar = render_copy("shl", cols, 24, "[+4/4]", keys, &theme);
            let p = screen(&bar, cols);
            let row = p.screen().contents_between(23, 0, 23, cols);
            let middle = row
                .trim_end()
                .strip_prefix(" hm · shl ")
                .and_then(|r| r.strip_suffix(" copy [+4/4]"))
                .unwrap_or_else(|| panic!("{cols}: {row:?}"));
            let shown: Vec<&str> = middle
                .split("  ")
                .map(str::trim)
                .filter(|i| !i.is_empty())
                .collect();
            let whole: Vec<&str> = keys.split("  ").collect();
            assert_eq!(shown, whole[..shown.len()], "{cols}: {row:?}");
            if cols >= 70 {
                assert_eq!(shown.len(), whole.len(), "{cols}: {row:?}");
            }
        }
    }

    #[test]
    fn wide_characters_in_the_bar_are_counted_as_two_columns() {
        // A copy-mode search for wide text, on a bar it just fills: one
        // column too many would scroll the screen up.
        let theme = dark();
        let mut p = screen(b"\x1b[23;1Hkept", 30);
        p.process(&render_copy(
            "s",
            30,
            24,
            "[+0/0]",
            "?你好世界你好世界",
            &theme,
        ));
        assert_eq!(p.screen().contents_between(22, 0, 22, 30), "kept");
        let row = p.screen().contents_between(23, 0, 23, 30);
        assert!(
            row.starts_with(" hm · s ") && row.ends_with(" copy [+0/0] "),
            "{row:?}"
        );
    }

    #[test]
    fn bar_takes_its_colours_from_the_theme() {
        use vt100::Color::Idx;
        let p = screen(
            &render(
                "api",
                None,
                30,
                24,
                Some((0x04, "active", 3200)),
                &[],
                &dark(),
            ),
            30,
        );
        let cell = |col| p.screen().cell(23, col).expect("cell").clone();
        // Label, fill, badge: the dark theme's footer key, footer, active.
        let (label, fill, badge) = (cell(1), cell(12), cell(20));
        assert_eq!((label.fgcolor(), label.bgcolor()), (Idx(16), Idx(250)));
        assert!(label.bold());
        assert_eq!(fill.bgcolor(), Idx(236));
        assert_eq!(badge.contents(), "a");
        assert_eq!((badge.fgcolor(), badge.bgcolor()), (Idx(16), Idx(44)));
        assert!(badge.bold());
        // The badge follows the theme, for every state and for none yet.
        let light = Theme::by_name("light").expect("built-in theme");
        for state in [Some((0xFF, "dead", 0)), Some((0x42, "waiting", 0)), None] {
            let p = screen(&render("api", None, 30, 24, state, &[], &light), 30);
            let badge = p.screen().cell(23, 29).expect("cell").clone();
            let want = light.state(state.map(|(s, _, _)| s)).bg;
            assert_eq!(Some(badge.bgcolor()), want.map(vt100_colour), "{state:?}");
        }
        assert_eq!(cell(29).bgcolor(), Idx(44));
    }

    fn vt100_colour(c: Color) -> vt100::Color {
        match c {
            Color::Indexed(i) => vt100::Color::Idx(i),
            other => panic!("themes use palette indices, not {other:?}"),
        }
    }

    #[test]
    fn without_colour_the_bar_is_reverse_video() {
        let mono = Theme::load(None, true).expect("built-in theme");
        let bar = render("api", None, 30, 24, Some((0x00, "idle", 0)), &[], &mono);
        assert!(
            !bar.windows(3).any(|w| w == b"38;" || w == b"48;"),
            "{bar:?}"
        );
        let p = screen(&bar, 30);
        let row = p.screen().contents_between(23, 0, 23, 30);
        assert!(row.trim_end().ends_with("idle 0s"), "{row:?}");
        for col in [1, 12, 27] {
            let cell = p.screen().cell(23, col).expect("cell");
            assert!(cell.inverse(), "column {col}");
            assert_eq!(cell.bgcolor(), vt100::Color::Default);
        }
        // The label and the badge stand out from the fill.
        let bold = |col| p.screen().cell(23, col).expect("cell").bold();
        assert!(bold(1) && !bold(12) && bold(27));
    }

    #[test]
    fn sgr_covers_every_kind_of_colour() {
        let style = Style::new()
            .fg(Color::LightRed)
            .bg(Color::Rgb(1, 2, 3))
            .add_modifier(Modifier::BOLD | Modifier::REVERSED);
        assert_eq!(sgr(style), "\x1b[0;1;7;91;48;2;1;2;3m");
        let style = Style::new().fg(Color::Reset).bg(Color::Blue);
        assert_eq!(sgr(style), "\x1b[0;39;44m");
        assert_eq!(sgr(Style::new().fg(Color::Indexed(7))), "\x1b[0;38;5;7m");
        assert_eq!(sgr(Style::new()), "\x1b[0m");
    }
}
