//! Rows of text as cells: which column each character starts at (wide
//! characters take two, combining ones none), and what kind of character
//! it is, for word moves. A row's text is what vt100 reads out of it:
//! blanks before a character are spaces, a wide character appears once.

use unicode_width::UnicodeWidthChar;

/// Each character of `text` with the column it starts at.
pub(super) fn cols(text: &str) -> impl Iterator<Item = (u16, char)> + '_ {
    let mut col: u16 = 0;
    text.chars().map(move |c| {
        let at = col;
        col = col.saturating_add(UnicodeWidthChar::width(c).unwrap_or(0) as u16);
        (at, c)
    })
}

/// The column where the character at byte `at` of `text` starts.
pub(super) fn col_of(text: &str, at: usize) -> u16 {
    let head = text.get(..at).unwrap_or(text);
    cols(head).last().map_or(0, |(col, c)| {
        col.saturating_add(UnicodeWidthChar::width(c).unwrap_or(0) as u16)
    })
}

/// The column of the first character that is not blank (`^`).
pub(super) fn first_col(text: &str) -> u16 {
    cols(text)
        .find(|(_, c)| !c.is_whitespace())
        .map_or(0, |(col, _)| col)
}

/// The column of the last character that is not blank (`$`).
pub(super) fn last_col(text: &str) -> u16 {
    cols(text)
        .filter(|(_, c)| !c.is_whitespace())
        .last()
        .map_or(0, |(col, _)| col)
}

/// The characters that start in columns `from..=to`.
pub(super) fn slice_cols(text: &str, from: u16, to: u16) -> String {
    cols(text)
        .filter(|(col, _)| (from..=to).contains(col))
        .map(|(_, c)| c)
        .collect()
}

/// What a word move tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Class {
    Blank,
    /// Letters, digits and `_`.
    Word,
    /// Anything else: punctuation is a word of its own, as in vi.
    Other,
}

pub(super) fn class_at(c: char) -> Class {
    if c.is_whitespace() {
        Class::Blank
    } else if c.is_alphanumeric() || c == '_' {
        Class::Word
    } else {
        Class::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_characters_take_two_columns() {
        let text = "a你b";
        assert_eq!(
            cols(text).collect::<Vec<_>>(),
            [(0, 'a'), (1, '你'), (3, 'b')]
        );
        assert_eq!(col_of(text, text.find('b').expect("b")), 3);
        assert_eq!(slice_cols(text, 1, 2), "你");
        assert_eq!(slice_cols(text, 2, 3), "b");
        assert_eq!(last_col("  x  "), 2);
        assert_eq!(first_col("  x  "), 2);
        assert_eq!(first_col(""), 0);
    }
}
