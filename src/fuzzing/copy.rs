//! Copy mode's target: session output (hostile) and the user's keys (any
//! bytes a terminal may send) through `hm attach`'s copy mode, which holds
//! the emulator with its numbered history, the copy-mode state machine
//! and the painting over the screen, the parts the dashboard shares.

use arbitrary::Unstructured;

use crate::attach::copy::CopyView;
use crate::attach::keys;
use crate::copymode::{MAX_COPY, Outcome};
use crate::protocol::Size;
use crate::theme::Theme;

use super::screen::size;

/// Copy mode driven by output, resizes, keys and paints.
///
/// Layout: a size (as in `tui_screen`), a byte of history rows (`% 64`),
/// a byte whose low bit opens it as Shift-PgUp does; then operations until
/// the input ends, each a tag byte (`% 5`) and its fields: `0 n:u16 LE`
/// then `n` bytes of session output, `1 size` resize, `2 n:u8` then `n`
/// bytes of keys as read from the terminal, `3` the replay's end, `4
/// force:u8` paint the view and the bar.
///
/// Checks: no panic; a copy is never larger than [`MAX_COPY`]; what is
/// painted stays on the rows above the bar, and the bar on its row,
/// without scrolling the screen.
pub fn copy_mode(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let mut at = size(&mut u);
    let lines = usize::from(u.arbitrary::<u8>().unwrap_or(0) % 64);
    let page_first = u.arbitrary::<u8>().unwrap_or(0) & 1 == 1;
    let Ok(theme) = Theme::by_name("dark") else {
        return;
    };
    let mut view = CopyView::new(at, lines, page_first);
    let mut pasting = false;
    let mut ops = 0;
    while !u.is_empty() && ops < 300 {
        ops += 1;
        match u.arbitrary::<u8>().unwrap_or(0) % 5 {
            0 => {
                let n = usize::from(u.arbitrary::<u16>().unwrap_or(0));
                let bytes = u.bytes(n.min(u.len())).unwrap_or_default();
                view.output(bytes);
            }
            1 => {
                at = size(&mut u);
                view.resize(at);
            }
            2 => {
                let n = usize::from(u.arbitrary::<u8>().unwrap_or(0));
                let bytes = u.bytes(n.min(u.len())).unwrap_or_default();
                for input in keys::decode(bytes, &mut pasting) {
                    match view.input(input) {
                        Outcome::Stay => {}
                        Outcome::Copied { text, .. } => {
                            assert!(text.len() <= MAX_COPY);
                        }
                        // Over: attach opens a fresh one next time.
                        Outcome::Leave => view = CopyView::new(at, lines, page_first),
                    }
                }
            }
            3 => {
                if !view.ready() {
                    view.replay_end();
                }
            }
            _ => {
                let force = u.arbitrary::<bool>().unwrap_or(true);
                let mut out = Vec::new();
                view.paint(&mut out, &theme, force);
                check_paint(&out, at, false);
                let bar = view.bar("id", at.cols, at.rows + 1, &theme);
                check_paint(&bar, at, true);
            }
        }
    }
}

/// What was painted, on a screen one row taller than the session's (the
/// bar's row): nothing scrolled, and only the rows it owns written.
fn check_paint(out: &[u8], at: Size, bar: bool) {
    let nz = |n: u16| std::num::NonZeroU16::new(n).unwrap_or(std::num::NonZeroU16::MIN);
    let rows = at.rows.saturating_add(1);
    let mut p = vt100::Parser::new(nz(rows), nz(at.cols), 0);
    // Marks in the first and last column of every row: painting over the
    // wrong row wipes them, scrolling moves them.
    let marks: String = (1..=rows)
        .map(|r| format!("\x1b[{r};1H<\x1b[{r};{}H>", at.cols))
        .collect();
    p.process(marks.as_bytes());
    p.process(out);
    let s = p.screen();
    let owned = |r: u16| if bar { r == rows - 1 } else { r < rows - 1 };
    for r in 0..rows {
        if owned(r) {
            continue;
        }
        let first = s.cell(r, 0).map(|c| c.contents().to_owned());
        assert_eq!(
            first.as_deref(),
            Some(if at.cols == 1 { ">" } else { "<" }),
            "row {r} was painted over"
        );
    }
}
