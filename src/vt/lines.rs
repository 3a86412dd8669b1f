//! Logical lines: the rows a line of output took on a screen, joined
//! again where the terminal wrapped it (the row's wrap flag), so that a
//! 300-character line printed at 40 columns is one line, as the program
//! wrote it. `hm logs` prints these, and copy mode selects and searches
//! them. And back: a logical line folded at a width, for `hm logs
//! --width`.
//!
//! Pure: rows in, text out.

use unicode_width::UnicodeWidthChar;

use crate::copymode::Line;

/// One logical line and where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logical {
    /// The index, among the rows it was joined from, of its first row.
    pub row: usize,
    /// How many rows it took.
    pub rows: usize,
    /// Its text, trailing blanks dropped.
    pub text: String,
}

/// The logical lines of `rows`: each row that wraps goes on into the
/// next with nothing between them; a row that does not ends its line.
/// The last row ends a line whatever its flag says (its rest is not
/// among `rows`).
pub fn join(rows: &[Line]) -> Vec<Logical> {
    let finish = |mut l: Logical| {
        l.text.truncate(l.text.trim_end().len());
        l
    };
    let mut out: Vec<Logical> = Vec::new();
    let mut open = Logical {
        row: 0,
        rows: 0,
        text: String::new(),
    };
    for (i, row) in rows.iter().enumerate() {
        open.rows += 1;
        open.text.push_str(&row.text);
        if !row.wrapped {
            let next = Logical {
                row: i + 1,
                rows: 0,
                text: String::new(),
            };
            out.push(finish(std::mem::replace(&mut open, next)));
        }
    }
    if open.rows > 0 {
        out.push(finish(open));
    }
    out
}

/// `text` as rows of at most `width` columns, as a terminal that wide
/// lays it out: a wide character that does not fit starts the next row.
/// An empty line is one empty row.
pub fn fold(text: &str, width: u16) -> Vec<String> {
    let width = usize::from(width.max(1));
    let mut rows = vec![String::new()];
    let mut used = 0usize;
    for c in text.chars() {
        let w = UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > width && used > 0 {
            rows.push(String::new());
            used = 0;
        }
        if let Some(row) = rows.last_mut() {
            row.push(c);
        }
        used += w;
    }
    rows
}

/// Not blank, and not a rule drawn with box characters or dashes, nor
/// art drawn with Braille dots or blocks (Codex's logo, Gemini CLI's
/// banner: a small pane showed a fresh Codex as rows of nothing but its
/// logo's cut edge).
pub fn says_something(text: &str) -> bool {
    text.chars().any(|c| {
        !c.is_whitespace()
            && !is_art(c)
            && !matches!(c, '\u{2500}'..='\u{257F}' | '-' | '=' | '_' | '—')
    })
}

/// A character pictures are drawn with, not words: Braille dots and
/// blocks (`⣿`, `█`, `▀`, `░`).
pub fn is_art(c: char) -> bool {
    matches!(c, '\u{2580}'..='\u{259F}' | '\u{2800}'..='\u{28FF}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(text: &str, wrapped: bool) -> Line {
        Line {
            text: text.into(),
            wrapped,
        }
    }

    #[test]
    fn wrapped_rows_are_one_line_and_blanks_at_its_end_go() {
        let rows = [
            row("abcde", true),
            row("fgh  ", false),
            row("", false),
            row("xy", true),
            row("z", true),
        ];
        let lines = join(&rows);
        let text: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(text, ["abcdefgh", "", "xyz"]);
        assert_eq!((lines[0].row, lines[0].rows), (0, 2));
        assert_eq!((lines[2].row, lines[2].rows), (3, 2));
        // Spaces inside a line are kept, across the wrap too.
        let lines = join(&[row("ab  ", true), row("  cd", false)]);
        assert_eq!(lines[0].text, "ab    cd");
    }

    #[test]
    fn folding_keeps_wide_characters_whole() {
        assert_eq!(fold("abcdefg", 3), ["abc", "def", "g"]);
        assert_eq!(fold("ab你", 3), ["ab", "你"]);
        assert_eq!(fold("", 3), [""]);
        assert_eq!(fold("你", 1), ["你"]);
    }
}
