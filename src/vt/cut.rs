//! Where output cut at an arbitrary byte can be read from again.
//!
//! The bytes before the cut are gone (a ring's oldest overwritten, a
//! history file's head trimmed), so the cut may fall inside an escape
//! sequence, whose tail would print as text (`9mClaude`), inside a string
//! (a title's, a clipboard's: tens of KiB of it), inside a character, or
//! mid-line. [`clean_start`] finds the first place after it where a
//! terminal reading from there shows what one reading from the beginning
//! would.

/// How far after the cut a line's or a sequence's start is taken: past
/// this, the cut was in text, and starting there loses less.
pub const NEAR: usize = 4096;

/// How many of `bytes` (output from a cut on) to skip: past the first line
/// end, string end (BEL, or ST: `ESC \`) or to the first escape sequence
/// start (an ESC, where a terminal begins a new sequence whatever came
/// before) within [`NEAR`]; past it, a string's end only, since what came
/// before one was the string; failing all, to the first byte that starts
/// a character.
pub fn clean_start(bytes: impl IntoIterator<Item = u8>) -> usize {
    let mut bytes = bytes.into_iter().enumerate().peekable();
    let mut first_char = None;
    while let Some((i, byte)) = bytes.next() {
        let near = i < NEAR;
        match byte {
            0x07 => return i + 1,
            0x1b if bytes.peek().is_some_and(|&(_, b)| b == b'\\') => return i + 2,
            b'\n' if near => return i + 1,
            0x1b if near => return i,
            // A line or a sequence far on: the cut was in text.
            b'\n' | 0x1b => break,
            0x80..=0xbf => {}
            _ => {
                first_char.get_or_insert(i);
            }
        }
    }
    first_char.unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skip(bytes: &[u8]) -> usize {
        clean_start(bytes.iter().copied())
    }

    #[test]
    fn a_cut_starts_again_at_a_line_a_sequence_or_a_character() {
        assert_eq!(skip(b"ne one\nline two"), 7);
        assert_eq!(skip(b"1mred\x1b[0m"), 5);
        // Inside a character: from the next one.
        assert_eq!(skip(b"\x82\xacabc"), 2);
        // Plain text all through: from the first character.
        assert_eq!(skip(b"just text"), 0);
    }

    #[test]
    fn a_cut_inside_a_long_string_starts_after_its_end() {
        // A title of 70 KiB, cut in its middle, ended by BEL or by ST.
        let mut title = vec![b'T'; 70 * 1024];
        title.extend_from_slice(b"\x07after");
        assert_eq!(skip(&title), 70 * 1024 + 1);
        let mut title = vec![b'T'; 70 * 1024];
        title.extend_from_slice(b"\x1b\\after");
        assert_eq!(skip(&title), 70 * 1024 + 2);
    }

    #[test]
    fn a_cut_in_a_long_line_keeps_the_line() {
        // A line far longer than NEAR, then colour: the cut was in text.
        let mut line = vec![b'x'; 3 * NEAR];
        line.extend_from_slice(b"\x1b[1mbold\n");
        assert_eq!(skip(&line), 0);
    }
}
