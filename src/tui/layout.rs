//! Where panes go: a near-square grid that fills the screen, paged when
//! panes would be too small to read, and which session's pane is where on
//! the page shown. Pure arithmetic on rectangles: it reads the model and
//! changes nothing, so `update` and `view` agree on every position.

use ratatui::layout::Rect;

use crate::protocol::Size;

use super::model::Model;

/// Smallest pane (including its border) worth showing.
pub const MIN_PANE_W: u16 = 24;
pub const MIN_PANE_H: u16 = 6;

/// How many columns and rows of panes, and how many panes fit on a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    pub cols: u16,
    pub rows: u16,
}

impl Grid {
    pub fn per_page(&self) -> usize {
        usize::from(self.cols) * usize::from(self.rows)
    }
}

/// The shape panes should have, in cells (width / height): about that of
/// an ordinary terminal window (80x24 is 3.3; cells are twice as tall as
/// wide, so 2.5 cells is a slightly wide rectangle on screen).
const PANE_ASPECT: f64 = 2.5;

/// What a layout that cuts an id costs, against the shape's cost (the
/// log of how far the panes are from a terminal window's shape): a grid
/// a little further from that shape is worth every id read whole, as 7
/// columns of 28 are rather than 8 of 25 for 31 sessions at 200x50.
const CUT_ID_COST: f64 = 1.0;

/// How far from a terminal window's shape (the log of the ratio) panes
/// may go to read ids whole: twice as wide, or as tall. Further, a grid
/// of flat slivers costs what cutting the ids would, and the ids are cut.
const MAX_SHAPE_FOR_IDS: f64 = std::f64::consts::LN_2;

/// The narrowest pane whose title shows `id` whole beside its state's
/// letter, no mark, no label: the corners, the id and the letter each
/// between spaces, and a column of the border between them (as
/// `view::title` lays a title out; its tests hold the two together).
pub fn width_for_whole_id(id: &str) -> u16 {
    use unicode_width::UnicodeWidthStr;
    u16::try_from(id.width() + 8).unwrap_or(u16::MAX)
}

/// Chooses the grid for `n` panes in `area`. With `cols` fixed by the user
/// only the rows are computed. Otherwise the column count whose panes come
/// closest to a terminal window's shape wins, which keeps the grid near
/// square on screen, unless its panes are narrower than `title_w`, the
/// width the widest id needs to be read whole beside its state's letter.
/// Either way panes never shrink below the minimum: the grid pages
/// instead.
pub fn grid(area: Rect, n: usize, cols: Option<u16>, title_w: u16) -> Grid {
    let n = n.max(1) as u32;
    let max_cols = (area.width / MIN_PANE_W).max(1);
    let max_rows = (area.height / MIN_PANE_H).max(1);
    let fit = |c: u16| -> Grid {
        let c = c.clamp(1, max_cols);
        let r = (n.div_ceil(u32::from(c)) as u16).clamp(1, max_rows);
        Grid { cols: c, rows: r }
    };
    // A column count set (`+`, `-`, `columns`) is the most panes a row
    // holds: fewer panes than that (a filter that leaves one) fill the
    // row rather than leave empty cells beside them.
    if let Some(c) = cols {
        return fit(c.min(u16::try_from(n).unwrap_or(u16::MAX)));
    }
    let mut best = fit(1);
    let mut best_score = f64::MIN;
    for c in 1..=max_cols.min(n as u16) {
        let g = fit(c);
        let w = f64::from(area.width) / f64::from(g.cols);
        let h = f64::from(area.height) / f64::from(g.rows);
        // Prefer showing everything, then the right shape.
        let shown = (g.per_page() as u32).min(n) as f64;
        // Empty cells leave the screen unfilled.
        let empty = (g.per_page() as u32).saturating_sub(n) as f64;
        let shape = ((w / h) / PANE_ASPECT).ln().abs();
        let reads_ids = w >= f64::from(title_w) && shape <= MAX_SHAPE_FOR_IDS;
        let cut = if reads_ids { 0.0 } else { CUT_ID_COST };
        let score = shown * 1000.0 - shape - 0.3 * empty - cut;
        if score > best_score {
            best_score = score;
            best = g;
        }
    }
    best
}

/// The rectangles of the panes on one page, row by row. The last row may
/// hold fewer panes; they are not stretched.
pub fn cells(area: Rect, g: Grid, count: usize) -> Vec<Rect> {
    let mut out = Vec::with_capacity(count);
    for i in 0..count.min(g.per_page()) {
        let col = (i % usize::from(g.cols)) as u16;
        let row = (i / usize::from(g.cols)) as u16;
        let x0 = area.x + area.width * col / g.cols;
        let x1 = area.x + area.width * (col + 1) / g.cols;
        let y0 = area.y + area.height * row / g.rows;
        let y1 = area.y + area.height * (row + 1) / g.rows;
        out.push(Rect::new(x0, y0, x1 - x0, y1 - y0));
    }
    out
}

/// Where the visible panes of the current page are drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The grid the panes are paged by.
    pub grid: Grid,
    /// The grid of the page shown: the paging grid, but on a last page
    /// with fewer panes, one chosen for those (three panes left over from
    /// a 3x3 page fill the screen, not its top third).
    pub shape: Grid,
    pub pages: usize,
    pub page: usize,
    pub rects: Vec<(String, Rect)>,
    /// The width a pane needs for the widest visible id to be read whole
    /// (see [`grid`]); every page is laid out for it.
    pub title_w: u16,
}

/// The area above the footer.
pub fn grid_area(size: (u16, u16)) -> Rect {
    Rect::new(0, 0, size.0, size.1.saturating_sub(1))
}

pub fn placements(m: &Model) -> Placement {
    placements_in(m, m.size)
}

/// Placements on a screen of `size`, which the frame being drawn may have
/// even when the model has not heard of the change yet.
pub fn placements_in(m: &Model, size: (u16, u16)) -> Placement {
    let area = grid_area(size);
    if let Some(id) = m.zoomed() {
        return Placement {
            grid: Grid { cols: 1, rows: 1 },
            shape: Grid { cols: 1, rows: 1 },
            pages: 1,
            page: 0,
            rects: vec![(id.to_string(), area)],
            title_w: 0,
        };
    }
    let ids = m.visible_ids();
    let title_w = ids
        .iter()
        .map(|id| width_for_whole_id(id))
        .max()
        .unwrap_or(0);
    let g = grid(area, ids.len(), m.columns, title_w);
    let per = g.per_page().max(1);
    let pages = ids.len().div_ceil(per).max(1);
    let page = m.page.min(pages - 1);
    let on_page: Vec<String> = ids.into_iter().skip(page * per).take(per).collect();
    let shape = page_grid(area, g, pages, on_page.len(), m.columns, title_w);
    let rects = cells(area, shape, on_page.len());
    Placement {
        grid: g,
        shape,
        pages,
        page,
        rects: on_page.into_iter().zip(rects).collect(),
        title_w,
    }
}

/// The grid a page of `count` panes is laid out by: the paging grid `g`,
/// but on a last page of fewer panes, one chosen for those (see
/// [`Placement::shape`]).
pub fn page_grid(
    area: Rect,
    g: Grid,
    pages: usize,
    count: usize,
    columns: Option<u16>,
    title_w: u16,
) -> Grid {
    if pages > 1 && count < g.per_page() {
        grid(area, count, columns, title_w)
    } else {
        g
    }
}

/// The inside of a bordered pane.
pub fn inner(r: Rect) -> Rect {
    Rect::new(
        r.x.saturating_add(1),
        r.y.saturating_add(1),
        r.width.saturating_sub(2),
        r.height.saturating_sub(2),
    )
}

/// The rows a focused session gets: the terminal's, less the bar's (a
/// terminal of one row has no bar).
pub fn focus_rows(rows: u16) -> u16 {
    if rows >= 2 { rows - 1 } else { rows }
}

/// The largest emulator a session keeping its own size (no fit) gets:
/// wider than any real terminal, 4 MiB a screen.
pub const MAX_UNFIT: Size = Size {
    cols: 512,
    rows: 256,
};

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn four_panes_make_two_by_two_on_a_wide_screen() {
        let g = grid(Rect::new(0, 0, 160, 48), 4, None, 0);
        assert_eq!(g, Grid { cols: 2, rows: 2 });
        let g = grid(Rect::new(0, 0, 200, 50), 1, None, 0);
        assert_eq!(g, Grid { cols: 1, rows: 1 });
    }

    #[test]
    fn ids_are_read_whole_when_a_near_shape_allows() {
        // 31 sessions at 200x50: by shape alone 8 columns of 25, which
        // cut a 19-column id; 7 of 28 read it whole.
        let area = grid_area((200, 50));
        let id = "frontend-tests-long";
        let need = width_for_whole_id(id);
        assert_eq!(grid(area, 31, None, 0), Grid { cols: 8, rows: 4 });
        let g = grid(area, 31, None, need);
        assert_eq!(g, Grid { cols: 7, rows: 5 });
        assert!(cells(area, g, 31).iter().all(|r| r.width >= need));
        // An id no near shape reads whole is cut rather than the panes
        // made slivers (4 columns of 50 by 6 rows).
        let long = "a-forty-column-session-id-for-the-tests-";
        let need = width_for_whole_id(long);
        assert_eq!(grid(area, 31, None, need), Grid { cols: 8, rows: 4 });
    }

    #[test]
    fn a_column_count_set_is_the_most_a_row_holds() {
        let area = Rect::new(0, 0, 80, 23);
        // A filter that leaves one pane: the whole area, not a third.
        assert_eq!(grid(area, 1, Some(3), 0), Grid { cols: 1, rows: 1 });
        assert_eq!(grid(area, 2, Some(3), 0), Grid { cols: 2, rows: 1 });
        assert_eq!(grid(area, 5, Some(3), 0), Grid { cols: 3, rows: 2 });
    }

    #[test]
    fn too_many_panes_page() {
        let g = grid(Rect::new(0, 0, 80, 24), 50, None, 0);
        assert!(g.per_page() < 50);
        assert!(80 / g.cols >= MIN_PANE_W && 24 / g.rows >= MIN_PANE_H);
    }

    proptest! {
        #[test]
        fn cells_never_overlap_and_stay_inside(
            w in 1u16..400, h in 1u16..200, n in 1usize..80, cols in proptest::option::of(1u16..10),
        ) {
            let area = Rect::new(3, 2, w, h);
            let g = grid(area, n, cols, 0);
            let rects = cells(area, g, n);
            prop_assert_eq!(rects.len(), n.min(g.per_page()));
            for (i, a) in rects.iter().enumerate() {
                prop_assert!(a.x >= area.x && a.y >= area.y);
                prop_assert!(a.right() <= area.right() && a.bottom() <= area.bottom());
                for b in &rects[i + 1..] {
                    prop_assert!(!a.intersects(*b), "{a:?} {b:?}");
                }
            }
        }
    }
}
