//! The program's lines in a history of rows: the rows a line the width
//! cut takes (up while the row before wraps into it, down while it wraps
//! into the next), and where a text is found when lines are searched
//! whole, so that a match may start on one row and end on the next.

use super::{Extent, History, Pos, RowNo, text};

/// The first and last row of the line `row` is part of: up while the row
/// before wraps into it, down while it wraps into the next.
pub(super) fn line_of<H: History + ?Sized>(hist: &mut H, row: RowNo) -> (RowNo, RowNo) {
    let ext = hist.extent();
    let wraps = |hist: &mut H, r: RowNo| hist.lines(r, r + 1).first().is_some_and(|l| l.wrapped);
    let mut top = row;
    while top > ext.first && wraps(hist, top - 1) {
        top -= 1;
    }
    let mut bottom = row;
    while bottom + 1 < ext.end() && wraps(hist, bottom) {
        bottom += 1;
    }
    (top, bottom)
}

/// Where each match of `pattern` starts, in order, searching the lines
/// whole (rows joined where they wrap).
pub(super) fn hits<H: History + ?Sized>(hist: &mut H, ext: Extent, pattern: &str) -> Vec<Pos> {
    let fold = !pattern.chars().any(char::is_uppercase);
    let needle = if fold {
        pattern.to_lowercase()
    } else {
        pattern.to_owned()
    };
    let mut out = Vec::new();
    if needle.is_empty() {
        return out;
    }
    let rows = hist.lines(ext.first, ext.end());
    // One line at a time: its text, and where each of its rows starts in
    // that text.
    let mut line = String::new();
    let mut starts: Vec<(usize, RowNo, usize)> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let text = if fold {
            row.text.to_lowercase()
        } else {
            row.text.clone()
        };
        starts.push((line.len(), ext.first + i as u64, i));
        line.push_str(&text);
        if row.wrapped && i + 1 < rows.len() {
            continue;
        }
        for (b, _) in line.match_indices(&needle) {
            let k = starts.partition_point(|(at, _, _)| *at <= b) - 1;
            let (at, row_no, index) = starts[k];
            let own = if fold {
                rows[index].text.to_lowercase()
            } else {
                rows[index].text.clone()
            };
            out.push(Pos {
                row: row_no,
                col: text::col_of(&own, b - at),
            });
        }
        line.clear();
        starts.clear();
    }
    out
}
