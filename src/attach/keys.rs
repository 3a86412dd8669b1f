//! The user's keys as copy mode reads them in `hm attach`: a read from
//! the terminal (one key, several typed fast, a paste) split into
//! [`Input`]s. Outside copy mode attach passes keys on as bytes and reads
//! none of this.
//!
//! Only what copy mode has a use for is told apart: printable characters,
//! control keys, the cursor and editing keys in their CSI and SS3 forms,
//! Shift-PgUp/PgDn, and the wheel when the program left mouse reporting on
//! (SGR and X10 forms). Everything else (Alt combinations, function keys,
//! other mouse events, pasted text) is skipped whole, so an unknown
//! sequence never turns into stray keys.

use crate::copymode::Key;

/// What a read holds, for copy mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    Key(Key),
    /// Shift-PgUp (-1) or Shift-PgDn (1): a page of scrolling.
    Page(i64),
    /// A notch of the wheel, up (-1) or down (1).
    Wheel(i64),
}

/// Shift-PgUp as xterm and most terminals send it.
pub const SHIFT_PAGE_UP: &[u8] = b"\x1b[5;2~";

/// Shift-PgDn, likewise.
pub const SHIFT_PAGE_DOWN: &[u8] = b"\x1b[6;2~";

/// `read` without its Shift-PgDn presses. Shift-PgUp pages the history
/// and never reaches the program, so neither does Shift-PgDn: one pressed
/// past the bottom, where copy mode has closed, typed `2~` at a shell's
/// prompt. Taken out wherever they are in the read (pressed fast, several
/// come in one; one can come beside the terminal's answer to a query),
/// not only from a read that is one press.
pub fn without_page_down(read: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let finder = memchr::memmem::Finder::new(SHIFT_PAGE_DOWN);
    if finder.find(read).is_none() {
        return std::borrow::Cow::Borrowed(read);
    }
    let mut kept = Vec::with_capacity(read.len());
    let mut from = 0;
    for at in finder.find_iter(read) {
        kept.extend_from_slice(&read[from..at]);
        from = at + SHIFT_PAGE_DOWN.len();
    }
    kept.extend_from_slice(&read[from..]);
    std::borrow::Cow::Owned(kept)
}

/// Whether a read is keys a person typed, not the terminal's answers to
/// the program's queries (a cursor report `ESC [ 24 ; 1 R`, its colours
/// in an OSC string, its attributes `ESC [ ? 1 ; 2 c`, a focus report),
/// which a watcher's terminal sends too: text, or an arrow, Home, End,
/// a page key, Escape. Alt and function keys are not told apart from
/// answers and count as none.
pub fn typed(read: &[u8]) -> bool {
    if !read.contains(&0x1b) {
        return true;
    }
    // A string (OSC, DCS, APC, PM) is an answer, and its text no key.
    let strings = read
        .windows(2)
        .any(|w| w[0] == 0x1b && matches!(w[1], b']' | b'P' | b'_' | b'^'));
    !strings && !decode(read, &mut false).is_empty()
}

/// Splits a read into inputs. `in_paste` carries a bracketed paste across
/// reads: pasted text is no key.
pub fn decode(bytes: &[u8], in_paste: &mut bool) -> Vec<Input> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        if rest[0] == 0x1b {
            let (len, input) = escape(rest);
            match input {
                Some(Paste(start)) => *in_paste = start,
                Some(Got(input)) if !*in_paste => out.push(input),
                _ => {}
            }
            i += len;
            continue;
        }
        if *in_paste {
            i += 1;
            continue;
        }
        let (len, key) = plain(rest);
        if let Some(k) = key {
            out.push(Input::Key(k));
        }
        i += len;
    }
    out
}

/// What an escape sequence was.
enum Seq {
    Got(Input),
    /// The start (true) or end of a bracketed paste.
    Paste(bool),
}
use Seq::{Got, Paste};

/// The length of the escape sequence at the start of `s`, and what it is.
fn escape(s: &[u8]) -> (usize, Option<Seq>) {
    match s.get(1) {
        // ESC alone (the last byte of the read): the Escape key.
        None => (1, Some(Got(Input::Key(Key::Esc)))),
        Some(b'[') => csi(s),
        Some(b'O') => match s.get(2) {
            Some(&f) => (3, cursor_key(f).map(|k| Got(Input::Key(k)))),
            None => (2, None),
        },
        // ESC ESC: Escape pressed twice, or Alt-Escape; one Escape.
        Some(0x1b) => (1, Some(Got(Input::Key(Key::Esc)))),
        // Alt and a key: no use here, skipped whole.
        Some(&b) => (1 + utf8_len(b), None),
    }
}

/// A CSI sequence: `ESC [`, parameters, intermediates, a final byte.
fn csi(s: &[u8]) -> (usize, Option<Seq>) {
    // X10 mouse: ESC [ M and three raw bytes.
    if s.get(2) == Some(&b'M') {
        let len = 6.min(s.len());
        let wheel = s
            .get(3)
            .and_then(|&b| wheel(u16::from(b).saturating_sub(32)));
        return (len, wheel.map(Got));
    }
    let body = &s[2..];
    let Some(end) = body.iter().position(|&b| (0x40..=0x7e).contains(&b)) else {
        // Cut off by the read: dropped.
        return (s.len(), None);
    };
    let params = &body[..end];
    let fin = body[end];
    let len = 2 + end + 1;
    if let Some(sgr) = params.strip_prefix(b"<") {
        // SGR mouse: ESC [ < button ; x ; y M (or m on release).
        let button = number(sgr.split(|&b| b == b';').next().unwrap_or_default());
        let input = (fin == b'M').then(|| button.and_then(wheel)).flatten();
        return (len, input.map(Got));
    }
    let mut nums = params.split(|&b| b == b';').map(number);
    let first = nums.next().flatten();
    let modifier = nums.next().flatten();
    let seq = match (fin, first) {
        (b'~', Some(200)) => Some(Paste(true)),
        (b'~', Some(201)) => Some(Paste(false)),
        (b'~', Some(5)) if modifier == Some(2) => Some(Got(Input::Page(-1))),
        (b'~', Some(6)) if modifier == Some(2) => Some(Got(Input::Page(1))),
        (b'~', Some(n)) => {
            let key = match n {
                1 | 7 => Some(Key::Home),
                4 | 8 => Some(Key::End),
                5 => Some(Key::PageUp),
                6 => Some(Key::PageDown),
                _ => None,
            };
            key.map(|k| Got(Input::Key(k)))
        }
        (f, _) => cursor_key(f).map(|k| Got(Input::Key(k))),
    };
    (len, seq)
}

/// The key of a CSI or SS3 final byte: arrows, Home, End.
fn cursor_key(f: u8) -> Option<Key> {
    Some(match f {
        b'A' => Key::Up,
        b'B' => Key::Down,
        b'C' => Key::Right,
        b'D' => Key::Left,
        b'H' => Key::Home,
        b'F' => Key::End,
        _ => return None,
    })
}

/// A mouse button code that is the wheel (64 up, 65 down; other bits are
/// modifiers and motion).
fn wheel(button: u16) -> Option<Input> {
    match button & !(4 | 8 | 16 | 32) {
        64 => Some(Input::Wheel(-1)),
        65 => Some(Input::Wheel(1)),
        _ => None,
    }
}

fn number(digits: &[u8]) -> Option<u16> {
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// A byte that is not an escape: a control key or a character.
fn plain(s: &[u8]) -> (usize, Option<Key>) {
    let b = s[0];
    let key = match b {
        b'\r' | b'\n' => Some(Key::Enter),
        0x7f | 0x08 => Some(Key::Backspace),
        0x01..=0x1a => Some(Key::Ctrl(char::from(b'a' + b - 1))),
        0x1c..=0x1f => Some(Key::Ctrl(char::from(b'\\' + (b - 0x1c)))),
        0x20..=0x7e => Some(Key::Char(char::from(b))),
        _ => None,
    };
    if b < 0x80 {
        return (1, key);
    }
    let len = utf8_len(b).min(s.len());
    match std::str::from_utf8(&s[..len])
        .ok()
        .and_then(|t| t.chars().next())
    {
        Some(c) => (len, Some(Key::Char(c))),
        // Not UTF-8: one byte skipped.
        None => (1, None),
    }
}

/// The length of the UTF-8 character a byte starts (1 for ASCII and for
/// bytes that start none).
fn utf8_len(b: u8) -> usize {
    match b {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A watcher is told of keys it typed, arrows too, and not of its
    /// terminal's answers to the program's queries.
    #[test]
    fn keys_typed_are_told_from_a_terminals_answers() {
        for read in [
            &b"ls\r"[..],
            b"\x1b[A",
            b"\x1bOB",
            b"\x1b[5~",
            b"\x1b",
            b"q\x1b[D",
        ] {
            assert!(typed(read), "{read:?}");
        }
        let answers: [&[u8]; 6] = [
            b"\x1b[24;1R",
            b"\x1b[?1;2c",
            b"\x1b]11;rgb:0000/0000/0000\x1b\\",
            b"\x1bP>|xterm(390)\x1b\\",
            b"\x1b[I",
            b"\x1b[?2026;2$y",
        ];
        for read in answers {
            assert!(!typed(read), "{read:?}");
        }
    }

    fn keys(bytes: &[u8]) -> Vec<Input> {
        decode(bytes, &mut false)
    }

    #[test]
    fn keys_in_their_terminal_forms() {
        use Key::*;
        let k = |k| Input::Key(k);
        assert_eq!(keys(b"q"), [k(Char('q'))]);
        assert_eq!(keys(b"\x1b"), [k(Esc)]);
        assert_eq!(keys(b"\r"), [k(Enter)]);
        assert_eq!(keys(b"\x7f"), [k(Backspace)]);
        assert_eq!(keys(b"\x15"), [k(Ctrl('u'))]);
        assert_eq!(keys(b"\x1d"), [k(Ctrl(']'))]);
        assert_eq!(
            keys(b"\x1b[A\x1bOB\x1b[1;5C\x1b[D"),
            [k(Up), k(Down), k(Right), k(Left)]
        );
        assert_eq!(
            keys(b"\x1b[H\x1b[F\x1b[1~\x1b[4~"),
            [k(Home), k(End), k(Home), k(End)]
        );
        assert_eq!(keys(b"\x1b[5~\x1b[6~"), [k(PageUp), k(PageDown)]);
        assert_eq!(keys(SHIFT_PAGE_UP), [Input::Page(-1)]);
        assert_eq!(keys(b"\x1b[6;2~"), [Input::Page(1)]);
        assert_eq!(keys("é/".as_bytes()), [k(Char('é')), k(Char('/'))]);
        // Typed fast: several in one read.
        assert_eq!(
            keys(b"?ab\r"),
            [k(Char('?')), k(Char('a')), k(Char('b')), k(Enter)]
        );
    }

    #[test]
    fn the_wheel_in_both_mouse_forms_and_nothing_else_of_the_mouse() {
        assert_eq!(keys(b"\x1b[<64;10;5M"), [Input::Wheel(-1)]);
        assert_eq!(keys(b"\x1b[<65;10;5M"), [Input::Wheel(1)]);
        assert_eq!(keys(b"\x1b[<0;10;5M\x1b[<0;10;5m"), []);
        assert_eq!(keys(b"\x1b[M`!!"), [Input::Wheel(-1)]);
        assert_eq!(keys(b"\x1b[M !!"), []);
    }

    #[test]
    fn what_copy_mode_has_no_use_for_is_skipped_whole() {
        // Alt-x, F5, a paste, a cut-off sequence, invalid UTF-8.
        assert_eq!(keys(b"\x1bx\x1b[15~"), []);
        let mut pasting = false;
        assert_eq!(decode(b"\x1b[200~qq", &mut pasting), []);
        assert!(pasting);
        assert_eq!(
            decode(b"q\x1b[201~j", &mut pasting),
            [Input::Key(Key::Char('j'))]
        );
        assert_eq!(keys(b"\x1b[1;"), []);
        assert_eq!(keys(b"\xffk"), [Input::Key(Key::Char('k'))]);
        assert_eq!(keys(b"\x1bO"), []);
    }

    proptest::proptest! {
        /// Any read decodes without a panic.
        #[test]
        fn any_read_decodes(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            let mut pasting = false;
            let _ = decode(&bytes, &mut pasting);
        }
    }

    #[test]
    fn page_down_presses_are_taken_out_wherever_they_are() {
        let out = without_page_down(b"\x1b[6;2~\x1b[6;2~");
        assert!(out.is_empty());
        let out = without_page_down(b"\x1b[?62;c\x1b[6;2~ls\x1b[6;2~");
        assert_eq!(&*out, b"\x1b[?62;cls");
        assert!(matches!(
            without_page_down(b"echo hi\r"),
            std::borrow::Cow::Borrowed(b"echo hi\r")
        ));
    }
}
