//! Invalid UTF-8 in a program's text, made visible.
//!
//! vte (the parser inside vt100) turns each invalid sequence of text into
//! U+FFFD, and vt100 then drops that character as unhandled: `a\xff\xfeb`
//! draws `ab`, hiding that the program wrote bytes no terminal can show.
//! Before the parser sees the text, each invalid sequence is replaced
//! here with [`STANDIN`], a character vt100 draws like any other, and the
//! dashboard draws that as U+FFFD. Only text in ground state goes through
//! here (escape sequences' strings are the parser's business), and a
//! character cut by a read is left whole for the next read to finish, as
//! the parser would.

/// What an invalid sequence of text becomes on the screen: U+10FFFD, the
/// last private-use character, which no program means to print; shown as
/// U+FFFD (`�`) wherever a screen is drawn for people.
pub const STANDIN: char = '\u{10FFFD}';
const STANDIN_UTF8: &[u8] = "\u{10FFFD}".as_bytes();

/// `text` read off a screen, as people are shown it: each [`STANDIN`] as
/// U+FFFD (`hm logs` printed the private-use character itself).
pub fn for_people(text: String) -> String {
    if text.contains(STANDIN) {
        text.replace(STANDIN, "\u{FFFD}")
    } else {
        text
    }
}

/// Where the text seen so far stands: inside a character (its bytes are
/// the last ones passed on) or between characters.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Utf8Text {
    /// Continuation bytes the character still needs.
    need: u8,
    /// Its bytes passed on so far.
    have: u8,
    /// The range the next continuation byte must be in (the second byte
    /// of a three- or four-byte character is narrower: no overlong forms,
    /// surrogates or code points past U+10FFFF).
    lo: u8,
    hi: u8,
}

impl Utf8Text {
    /// Passes on `text` (bytes the parser reads as text or C0 controls)
    /// with each invalid sequence replaced by [`STANDIN`].
    pub(crate) fn push(&mut self, text: &[u8], out: &mut Vec<u8>) {
        // Plain ASCII between characters: one copy.
        if self.need == 0 && text.is_ascii() {
            out.extend_from_slice(text);
            return;
        }
        for &b in text {
            self.byte(b, out);
        }
    }

    fn byte(&mut self, b: u8, out: &mut Vec<u8>) {
        if self.need > 0 {
            if (self.lo..=self.hi).contains(&b) {
                out.push(b);
                self.need -= 1;
                self.have += 1;
                (self.lo, self.hi) = (0x80, 0xBF);
                return;
            }
            // The character ended early: it is one invalid sequence, and
            // this byte starts afresh.
            self.interrupt(out);
        }
        let (need, lo, hi) = match b {
            0x00..=0x7F => {
                out.push(b);
                return;
            }
            0xC2..=0xDF => (1, 0x80, 0xBF),
            0xE0 => (2, 0xA0, 0xBF),
            0xED => (2, 0x80, 0x9F),
            0xE1..=0xEF => (2, 0x80, 0xBF),
            0xF0 => (3, 0x90, 0xBF),
            0xF1..=0xF3 => (3, 0x80, 0xBF),
            0xF4 => (3, 0x80, 0x8F),
            // A continuation byte alone, an overlong lead, or no lead.
            _ => {
                out.extend_from_slice(STANDIN_UTF8);
                return;
            }
        };
        out.push(b);
        *self = Utf8Text {
            need,
            have: 1,
            lo,
            hi,
        };
    }

    /// Passes on a C0 control the parser executes in ground state: it
    /// ends a character it comes inside, as [`push`](Self::push) would.
    pub(crate) fn control(&mut self, b: u8, out: &mut Vec<u8>) {
        self.interrupt(out);
        out.push(b);
    }

    /// Something that is not text came (ESC) inside a character: its
    /// bytes, the last ones passed on, become one [`STANDIN`].
    pub(crate) fn interrupt(&mut self, out: &mut Vec<u8>) {
        if self.need > 0 {
            let have = usize::from(self.have).min(out.len());
            out.truncate(out.len() - have);
            out.extend_from_slice(STANDIN_UTF8);
        }
        *self = Utf8Text::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean(chunks: &[&[u8]]) -> String {
        let mut t = Utf8Text::default();
        let mut out = Vec::new();
        for c in chunks {
            t.push(c, &mut out);
        }
        t.interrupt(&mut out);
        String::from_utf8(out)
            .expect("always valid")
            .replace(STANDIN, "�")
    }

    #[test]
    fn invalid_sequences_become_one_standin_each() {
        assert_eq!(clean(&[b"a\xff\xfeb"]), "a��b");
        assert_eq!(clean(&[b"\xe2\x82a"]), "�a");
        assert_eq!(clean(&[b"\xc0\xaf"]), "��");
        assert_eq!(clean(&[b"\xed\xa0\x80"]), "���");
        assert_eq!(clean(&[b"\xf4\x90\x80\x80"]), "����");
        assert_eq!(
            clean(&[b"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"]),
            "café € 😀"
        );
    }

    #[test]
    fn a_character_cut_between_pushes_is_whole() {
        assert_eq!(clean(&[b"\xe2", b"\x82", b"\xac!"]), "€!");
        assert_eq!(clean(&[b"\xe2\x82", b"\n"]), "�\n");
        // Cut, and then not text: the start is one invalid sequence.
        assert_eq!(clean(&[b"x\xe2\x82"]), "x�");
    }

    #[test]
    fn any_input_comes_out_valid() {
        let mut t = Utf8Text::default();
        let mut out = Vec::new();
        let bytes: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).collect();
        for chunk in bytes.chunks(7) {
            t.push(chunk, &mut out);
        }
        t.interrupt(&mut out);
        assert!(std::str::from_utf8(&out).is_ok());
    }
}
