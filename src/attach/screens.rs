//! Keeps the child's screen switches away from the user's terminal.
//!
//! `hm attach` draws the session on the user's alternate screen, so that
//! their shell history on the main screen is left alone. A full-screen
//! program in the session switches screens itself (`CSI ? 1049 h`, `1047`,
//! `47`, and the `l` that leaves again); passed through, leaving would take
//! the user's terminal back to its main screen and draw the session over
//! their history. This rewriter replaces those modes in the output stream:
//! entering the child's alternate screen becomes erasing the screen, which
//! is what the child expects to see, and leaving it becomes erasing the
//! screen and homing the cursor (unless the child is known to be on its
//! main screen already: then it is dropped, as a real terminal would do
//! nothing). Other modes set or reset in the same sequence are kept, in
//! order. A full reset (`ESC c`, RIS) would also
//! leave the alternate screen, so it becomes a soft reset and a clear. It
//! owns no I/O: bytes in, bytes out.
//!
//! Sequences are split as a terminal splits them ([`Tokenizer`]): bytes
//! from 0x80 up inside an escape or control sequence are ignored by
//! vte-based terminals, so they are dropped here (they change nothing
//! there), or `ESC [ 0x80 ? 1049 l` would slip by.
//!
//! It is incremental (a sequence split across chunks is held back until
//! its final byte says what it is) and bounded: a mode sequence longer
//! than [`MAX_SEQ`] is dropped whole, up to and including its final byte,
//! with a CAN in its place so the terminal closes any sequence it had open.
//! Passing it on instead would let padding carry a switch past the check
//! (`ESC [ ? 0000…0047 l`). Only what may still become a screen switch is
//! ever held, and the terminal would not act on it before its end either.

use crate::vt::tokenizer::{Ended, Kind, Seq, Step, Tokenizer, find_esc};

/// Longest mode-setting sequence held back while deciding; longer ones
/// are dropped.
pub const MAX_SEQ: usize = 128;

/// What entering the child's alternate screen becomes: erase the screen.
/// The cursor stays where it is, as it does on a real switch. It is not
/// saved, as `CSI ? 1049 h` would: terminals have one saved-cursor slot,
/// which the status bar reuses around every redraw (`ESC 7` … `ESC 8`), so
/// restoring it when leaving would put the child's cursor where the bar
/// last found it instead.
pub const ENTER: &[u8] = b"\x1b[2J";

/// What leaving it becomes: erase the screen and home the cursor. The
/// child's main screen cannot be shown again: only a terminal emulator
/// keeping a copy of it could redraw it, so the child finds a blank one.
pub const LEAVE: &[u8] = b"\x1b[2J\x1b[H";

/// What a full reset (RIS) becomes: a soft reset (DECSTR: modes, margins,
/// attributes, saved cursor) and a clear, which stay on the screen.
pub const RESET: &[u8] = b"\x1b[!p\x1b[2J\x1b[H";

/// Streaming rewriter; feed it every chunk of output with
/// [`rewrite`](Self::rewrite).
#[derive(Debug)]
pub struct ScreenRewriter {
    tokens: Tokenizer,
    /// The sequence held back so far, from its ESC, while it may still be
    /// a screen switch (bytes the terminal ignores left out).
    held: Vec<u8>,
    holding: bool,
    /// Inside an over-long mode sequence, dropped up to its final byte.
    discarding: bool,
    /// The ESC starting the held sequence ended another one: if the held
    /// one is dropped whole, the terminal must be told to end that one
    /// (CAN), or what follows would continue it.
    open: bool,
    /// Which screen the child is on, as far as this rewriter saw it go
    /// there: `None` until then (output replayed from the middle of a
    /// session does not say), `Some(true)` for the alternate one.
    alternate: Option<bool>,
    /// Screen changes (a switch to the other screen, or a full reset) seen
    /// so far.
    switches: u64,
    /// Where in the `out` of the latest [`ScreenRewriter::rewrite`] call
    /// its last screen change ended.
    switched_at: usize,
}

impl Default for ScreenRewriter {
    fn default() -> Self {
        ScreenRewriter {
            tokens: Tokenizer::new(MAX_SEQ),
            held: Vec::new(),
            holding: false,
            discarding: false,
            open: false,
            alternate: None,
            switches: 0,
            switched_at: 0,
        }
    }
}

impl ScreenRewriter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the child is on its alternate screen now.
    pub fn alternate(&self) -> bool {
        self.alternate == Some(true)
    }

    /// How many screen changes (switches to the other screen, and full
    /// resets) have been rewritten: what is on the screen before one has
    /// nothing to do with after. A switch to the screen already shown is
    /// not one.
    pub fn switches(&self) -> u64 {
        self.switches
    }

    /// Where in `out` the last screen change of the latest
    /// [`ScreenRewriter::rewrite`] ended, if it made one (see
    /// [`ScreenRewriter::switches`]).
    pub fn switched_at(&self) -> usize {
        self.switched_at
    }

    fn changed(&mut self, alternate: bool, out: &[u8]) {
        self.alternate = Some(alternate);
        self.switches += 1;
        self.switched_at = out.len();
    }

    /// Appends `input` to `out` with every screen switch rewritten; the
    /// start of a sequence that may still be one is kept for the next call.
    pub fn rewrite(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let mut rest = input;
        while !rest.is_empty() {
            // Plain text between escape sequences is copied in bulk: this
            // is on the path of every byte `hm attach` shows.
            if self.tokens.in_ground() {
                let plain = find_esc(rest).unwrap_or(rest.len());
                out.extend_from_slice(&rest[..plain]);
                rest = &rest[plain..];
                if rest.is_empty() {
                    break;
                }
            }
            if !self.holding && !self.discarding {
                // The rest of a sequence let through goes on in one copy.
                let n = self.tokens.run(rest);
                out.extend_from_slice(&rest[..n]);
                rest = &rest[n..];
                if rest.is_empty() {
                    break;
                }
            }
            self.byte(rest[0], out);
            rest = &rest[1..];
        }
    }

    fn byte(&mut self, b: u8, out: &mut Vec<u8>) {
        match self.tokens.advance(b) {
            // Controls take effect where they stand without ending the
            // sequence, so they can go out at once: what is held does
            // nothing until its final byte.
            Step::Text | Step::Control => out.push(b),
            // A new escape sequence abandons the one held.
            Step::Open(ended) => {
                self.release(out);
                self.open = ended.is_some();
                self.discarding = false;
                self.held.push(b);
                self.holding = true;
            }
            // CAN and SUB cancel it.
            Step::Cancel(_) => {
                self.release(out);
                self.discarding = false;
                out.push(b);
            }
            // Ignored inside a sequence, as vte does (see the module doc):
            // dropped from what is held.
            Step::Ignored => {
                if !self.holding && !self.discarding {
                    out.push(b);
                }
            }
            Step::Part => {
                if self.discarding {
                    // Dropped, see below.
                } else if !self.holding {
                    out.push(b);
                } else if self.held.len() >= MAX_SEQ {
                    // What was held goes, ESC included; a CAN tells the
                    // terminal to drop whatever sequence it still has open
                    // (one given out before this ESC would otherwise run
                    // on into the bytes after the dropped one).
                    self.held.clear();
                    self.holding = false;
                    out.push(0x18);
                    self.discarding = true;
                } else {
                    self.held.push(b);
                    if !may_switch(self.tokens.seq()) {
                        self.release(out);
                    }
                }
            }
            Step::End(ended) => {
                if self.discarding {
                    // The final byte of the over-long sequence goes too.
                    self.discarding = false;
                    return;
                }
                if !self.holding {
                    out.push(b);
                    return;
                }
                let seq = self.tokens.seq();
                if seq.kind == Kind::Esc && seq.collected == b"c" {
                    self.held.clear();
                    self.holding = false;
                    out.extend_from_slice(RESET);
                    self.changed(false, out);
                } else if ended == Ended::Acted
                    && seq.kind == Kind::Csi
                    && matches!(b, b'h' | b'l')
                    && seq.collected.first() == Some(&b'?')
                {
                    self.complete(b, out);
                } else {
                    self.held.push(b);
                    self.release(out);
                }
            }
        }
    }

    /// Lets the held bytes through unchanged.
    fn release(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.held);
        self.holding = false;
    }

    /// Ends `ESC [ ? params` with `fin` (`h` sets, `l` resets). A parameter
    /// with sub-parameters (`1049:1`) is no screen switch and is kept.
    fn complete(&mut self, fin: u8, out: &mut Vec<u8>) {
        self.holding = false;
        let before = out.len();
        let held = std::mem::take(&mut self.held);
        // Intermediates only qualify the sequence: they are left out of
        // the parameters. (Bytes a terminal ignores were never held.)
        let qualified = held.iter().any(|&c| (0x20..=0x2f).contains(&c));
        let clean: std::borrow::Cow<'_, [u8]> = if qualified {
            held.iter()
                .copied()
                .filter(|c| !(0x20..=0x2f).contains(c))
                .collect()
        } else {
            (&held[..]).into()
        };
        // `ESC [ ?` and then the parameters.
        let params = &clean[3..];
        if !params.split(|&c| c == b';').any(is_screen) {
            out.extend_from_slice(&held);
            out.push(fin);
        } else {
            let switch = if fin == b'h' { ENTER } else { LEAVE };
            // The other modes, in order around the switches.
            let mut others: Vec<&[u8]> = Vec::new();
            for p in params.split(|&c| c == b';') {
                if is_screen(p) {
                    modes(&others, fin, out);
                    others.clear();
                    let enter = fin == b'h';
                    if self.alternate == Some(false) && !enter {
                        // Leaving a screen it is known not to be on (a
                        // script's `tput rmcup` on exit) does nothing on a
                        // real terminal; clearing would wipe what it said.
                        continue;
                    }
                    out.extend_from_slice(switch);
                    if self.alternate != Some(enter) {
                        self.changed(enter, out);
                    }
                } else if !p.is_empty() && !qualified {
                    // The other modes of a qualified sequence go: without
                    // its intermediates they would mean something else.
                    // An empty parameter is mode 0, which is no mode.
                    others.push(p);
                }
            }
            modes(&others, fin, out);
        }
        drop(clean);
        if out.len() == before && std::mem::take(&mut self.open) {
            // Nothing of it went out, not even its ESC, which ended the
            // sequence before it in the terminal: CAN ends that one, so
            // that the text after it is not read as its continuation
            // (`ESC [` `ESC [ ? 1049 l` `? 1049 l` would leave the screen).
            out.push(0x18);
        }
        // Keep the allocation for the next sequence.
        self.held = held;
        self.held.clear();
    }
}

/// Whether a sequence read so far may still become a screen switch:
/// `ESC` alone, `ESC [`, or a DEC private mode (`ESC [ ?`...).
fn may_switch(seq: Seq<'_>) -> bool {
    match seq.kind {
        Kind::Esc => seq.collected.is_empty(),
        Kind::Csi => seq.collected.first().is_none_or(|&c| c == b'?'),
        _ => false,
    }
}

/// Whether a mode parameter switches screens.
fn is_screen(param: &[u8]) -> bool {
    let n = std::str::from_utf8(param)
        .ok()
        .and_then(|s| s.parse::<u32>().ok());
    matches!(n, Some(47 | 1047 | 1049))
}

/// `CSI ? modes fin`, unless there are none.
fn modes(modes: &[&[u8]], fin: u8, out: &mut Vec<u8>) {
    if modes.is_empty() {
        return;
    }
    out.extend_from_slice(b"\x1b[?");
    out.extend_from_slice(&modes.join(&b';'));
    out.push(fin);
}

#[cfg(test)]
mod tests {

    #[test]
    fn only_a_change_of_screen_counts_and_where_it_ended_is_known() {
        let mut r = ScreenRewriter::new();
        let mut out = Vec::new();
        // Where the child is at first is not known: leaving clears.
        r.rewrite(b"a\x1b[?1049l", &mut out);
        assert_eq!(out, [&b"a"[..], LEAVE].concat());
        assert_eq!((r.switches(), r.alternate()), (1, false));
        // Leaving again, known to be on the main screen: nothing.
        r.rewrite(b"\x1b[?1049lb", &mut out);
        assert_eq!(out, [&b"a"[..], LEAVE, b"b"].concat());
        assert_eq!(r.switches(), 1);
        r.rewrite(b"\x1b[?1049hc", &mut out);
        assert_eq!((r.switches(), r.alternate()), (2, true));
        r.rewrite(b"\x1b[?1049h", &mut out);
        assert_eq!(r.switches(), 2, "already alternate");
        let mut out = Vec::new();
        r.rewrite(b"d\x1b[?1049lerror\n", &mut out);
        assert_eq!((r.switches(), r.alternate()), (3, false));
        assert_eq!(&out[r.switched_at()..], b"error\n");
        let mut out = Vec::new();
        r.rewrite(b"x\x1bcy", &mut out);
        assert_eq!(r.switches(), 4, "a full reset");
        assert_eq!(&out[r.switched_at()..], b"y");
    }
    use super::*;
    use proptest::prelude::*;

    fn run(input: &[u8]) -> Vec<u8> {
        let mut r = ScreenRewriter::new();
        let mut out = Vec::new();
        r.rewrite(input, &mut out);
        out
    }

    fn nz(n: u16) -> std::num::NonZeroU16 {
        std::num::NonZeroU16::new(n).unwrap()
    }

    /// Whether a vte-based terminal (vt100) that is on its alternate
    /// screen, as `hm attach` keeps the user's terminal, leaves it for
    /// `input` once rewritten, split at `cut`.
    fn leaves_alternate_screen(input: &[u8], cut: usize) -> bool {
        let mut r = ScreenRewriter::new();
        let mut out = Vec::new();
        r.rewrite(&input[..cut], &mut out);
        r.rewrite(&input[cut..], &mut out);
        let mut vt = vt100::Parser::new(nz(24), nz(80), 0);
        vt.process(b"\x1b[?1049h");
        vt.process(&out);
        !vt.screen().alternate_screen()
    }

    #[test]
    fn high_bytes_or_a_full_reset_never_leave_the_alternate_screen() {
        let hostile: [&[u8]; 8] = [
            b"\x1b[\x80?1049l",
            b"\x1b\x80[?1049l",
            b"\x1b[?\x801049l",
            b"\x1b[?10\xc3\xa949l",
            b"\x1b[?1049\xffl",
            b"text\x1bc more",
            b"\x1b[?1049.l",
            b"\x1b[?25;1049 $l",
        ];
        for input in hostile {
            // The reference: passed as is, each one does leave.
            let mut vt = vt100::Parser::new(nz(24), nz(80), 0);
            vt.process(b"\x1b[?1049h");
            vt.process(input);
            assert!(!vt.screen().alternate_screen(), "{input:?} is no test");
            for cut in 0..=input.len() {
                assert!(
                    !leaves_alternate_screen(input, cut),
                    "{input:?} cut at {cut}"
                );
            }
        }
        assert_eq!(run(b"a\x1bcb"), [&b"a"[..], RESET, b"b"].concat());
        // Bytes a terminal ignores inside a sequence are dropped; the rest
        // of a sequence that is no switch passes.
        assert_eq!(run(b"\x1b[\x80?25l"), b"\x1b[?25l");
    }

    #[test]
    fn screen_switches_become_clears() {
        assert_eq!(run(b"a\x1b[?1049hb"), b"a\x1b[2Jb");
        assert_eq!(run(b"a\x1b[?1049lb"), b"a\x1b[2J\x1b[Hb");
        assert_eq!(run(b"\x1b[?1047h\x1b[?1047l"), b"\x1b[2J\x1b[2J\x1b[H");
        assert_eq!(run(b"\x1b[?47h\x1b[?47l"), b"\x1b[2J\x1b[2J\x1b[H");
        // Leading zeros name the same mode.
        assert_eq!(run(b"\x1b[?01049h"), b"\x1b[2J");
    }

    /// Found by the attach_output fuzz target: a leave dropped whole (the
    /// program is known to be on its main screen) was also the ESC that
    /// ended the sequence before it, so the text after it continued that
    /// one into `ESC [ ? 1049 l`. A CAN ends it instead.
    #[test]
    fn a_dropped_switch_still_ends_the_sequence_before_it() {
        let out = run(b"\x1b[?1049l\x1b[\x1b[?1049l?1049l");
        assert_eq!(out, b"\x1b[2J\x1b[H\x1b[\x18?1049l");
        let nz = |n| std::num::NonZeroU16::new(n).expect("non-zero");
        let mut vt = vt100::Parser::new(nz(24), nz(80), 0);
        vt.process(b"\x1b[?1049h");
        vt.process(&out);
        assert!(vt.screen().alternate_screen());
    }

    #[test]
    fn other_modes_in_the_same_sequence_are_kept_in_order() {
        assert_eq!(run(b"\x1b[?1049;1h"), b"\x1b[2J\x1b[?1h");
        assert_eq!(run(b"\x1b[?25;1049l"), b"\x1b[?25l\x1b[2J\x1b[H");
        assert_eq!(
            run(b"\x1b[?1;2004;47;1000;1006h"),
            b"\x1b[?1;2004h\x1b[2J\x1b[?1000;1006h"
        );
        assert_eq!(run(b"\x1b[?;1049;h"), b"\x1b[2J");
        assert_eq!(run(b"\x1b[?1049;1:2h"), b"\x1b[2J\x1b[?1:2h");
    }

    #[test]
    fn everything_else_passes_byte_for_byte() {
        let keep: &[u8] = b"\x1b[?25l\x1b[?1h\x1b=\x1b[1049h\x1b[?1048h\x1b[?10490h\x1b[?1049$p\
\x1b[?1049:1h\x1b[2J\x1b]0;?1049h\x07\x1b7\x1b8\x1b[?h\x1b[?;h\x1b[1;31mtext\x1b[0m\x1b\x1b[?1h";
        assert_eq!(run(keep), keep);
    }

    #[test]
    fn split_sequences_are_held_until_they_end() {
        let mut r = ScreenRewriter::new();
        let mut out = Vec::new();
        r.rewrite(b"x\x1b[?10", &mut out);
        assert_eq!(out, b"x");
        r.rewrite(b"49;1", &mut out);
        assert_eq!(out, b"x");
        r.rewrite(b"h", &mut out);
        assert_eq!(out, b"x\x1b[2J\x1b[?1h");
        // What cannot be a switch goes out as soon as that is known.
        out.clear();
        r.rewrite(b"\x1b[3", &mut out);
        assert_eq!(out, b"\x1b[3");
    }

    #[test]
    fn controls_inside_a_sequence_act_where_they_stand() {
        // A terminal runs the newline and still switches screens.
        assert_eq!(run(b"\x1b[?10\n49h"), b"\n\x1b[2J");
        // Cancelled, abandoned and over-long sequences are not switches.
        assert_eq!(run(b"\x1b[?1049\x18h"), b"\x1b[?1049\x18h");
        assert_eq!(run(b"\x1b[?10\x1b[?1049l"), b"\x1b[?10\x1b[2J\x1b[H");
        // Over-long ones are dropped whole: padded, a switch could
        // otherwise pass unseen.
        let mut long = b"\x1b[?".to_vec();
        long.extend(std::iter::repeat_n(b'0', MAX_SEQ));
        long.extend(b"47lafter");
        assert_eq!(run(&long), b"\x18after");
    }

    proptest! {
        #[test]
        fn chunking_does_not_matter(
            bytes in proptest::collection::vec(prop_oneof![
                Just(0x1bu8), Just(b'['), Just(b'?'), Just(b';'), Just(b'h'), Just(b'l'),
                Just(b'0'), Just(b'1'), Just(b'4'), Just(b'7'), Just(b'9'), Just(b':'),
                Just(b'\n'), Just(0x18), any::<u8>(),
            ], 0..300),
            cuts in proptest::collection::vec(0usize..20, 0..30),
        ) {
            let whole = run(&bytes);
            let mut r = ScreenRewriter::new();
            let mut out = Vec::new();
            let mut rest = &bytes[..];
            for c in cuts {
                let c = c.min(rest.len());
                r.rewrite(&rest[..c], &mut out);
                rest = &rest[c..];
            }
            r.rewrite(rest, &mut out);
            prop_assert_eq!(whole, out);
        }

        #[test]
        fn no_screen_switch_gets_through(
            // Printable text, controls and the bytes of mode sequences; not
            // the malformed ones vt100 reads more loosely than a terminal
            // (it takes `CSI ? 1049 SP h` for `CSI ? 1049 h`).
            bytes in proptest::collection::vec(prop_oneof![
                Just(0x1bu8), Just(b'['), Just(b'?'), Just(b';'), Just(b':'), Just(b'h'),
                Just(b'l'), Just(b'0'), Just(b'1'), Just(b'4'), Just(b'7'), Just(b'9'),
                Just(b'\n'), Just(0x18), Just(b'x'),
            ], 0..300),
        ) {
            // What reaches the terminal never leaves its alternate screen.
            let nz = |n| std::num::NonZeroU16::new(n).expect("non-zero");
            let mut p = vt100::Parser::new(nz(24), nz(80), 0);
            p.process(b"\x1b[?1049h");
            p.process(&run(&bytes));
            prop_assert!(p.screen().alternate_screen());
        }

        #[test]
        fn text_without_escapes_is_untouched(bytes in proptest::collection::vec(any::<u8>().prop_filter("no ESC", |b| *b != 0x1b), 0..500)) {
            prop_assert_eq!(run(&bytes), bytes);
        }
    }
}
