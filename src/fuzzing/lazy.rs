//! The lazy screen target: a supervisor's screen ([`Dozing`]), which reads
//! output as it comes and parses it only when looked at, skipping rows
//! that scrolled off unseen, against a screen that parses every read at
//! once. They must answer the same queries at the same reads, report the
//! same titles, bells and notifications at the same reads, and show the
//! same screen whenever the lazy one is looked at; and at the end a probe
//! (REP, text, DECRC, a cursor report, lines through the scroll region)
//! must find the same state hidden behind the screen too: the last
//! character drawn, the colours in effect, the saved cursor, the scroll
//! region, origin mode. Each input is run twice: with the lazy screen's
//! own budget (`vt::budget`), and with one of a few dozen bytes, so that it
//! turns to parsing at once and back to skimming many times.

use arbitrary::Unstructured;

use crate::protocol::Size;
use crate::vt::dozing::Dozing;
use crate::vt::events::{Recorder, TermEvent};
use crate::vt::term::Term;

/// What a reader of a screen can see, and the state behind it.
/// What a reader of a screen can see, and the state behind it: the cells,
/// the cursor and whether the alternate screen is shown, the input modes,
/// the colours in effect, the cursor's shape.
fn seen<CB: vt100::Callbacks + Default>(t: &Term<CB>) -> [String; 5] {
    let s = t.screen();
    [
        s.contents_formatted(),
        format!("{:?} {}", s.cursor_position(), s.alternate_screen()),
        s.input_mode_formatted(),
        s.attributes_formatted(),
        format!("{:?}", s.cursor_style()),
    ]
}

/// The events of the last operation, as the supervisor takes them.
fn news(t: &mut Recorder) -> Vec<TermEvent> {
    t.take()
}

/// Lazy against eager parsing.
///
/// Layout: rows and columns (a byte each, `% 6 + 1` and `% 12 + 1`: small
/// screens, so that output scrolls a screenful off in a few lines), then
/// operations until the input ends, each a tag byte (`% 4`) and its
/// fields: `0 n:u8` then `n` bytes of output, one read; `1` look at the
/// lazy screen (settle it and compare); `2 rows:u8 cols:u8` resize both
/// (as above); `3` put the lazy screen to sleep, if it can.
///
/// A sleep loses what a screen's rendering does not carry (the saved
/// cursor, the last character, the cursor's shape, a pending wrap), so
/// the eager screen sleeps and wakes where the lazy one falls asleep: the
/// two must agree on when a screen can sleep, and what is compared is
/// then the skipping alone.
pub fn lazy_screen(data: &[u8]) {
    lazy_screen_with(data, None);
    lazy_screen_with(data, Some((24, 40)));
}

/// [`lazy_screen`] with the lazy screen's budget: a window and a stretch
/// in bytes (see `Term::skim_window`), or its own.
fn lazy_screen_with(data: &[u8], budget: Option<(usize, usize)>) {
    let mut u = Unstructured::new(data);
    let size = small_size(&mut u);
    let mut eager = Term::with_callbacks(size, Recorder::default());
    eager.allow_sleep();
    eager.grow_at_bottom();
    let mut term = Term::with_callbacks(size, Recorder::default());
    if let Some((window, stretch)) = budget {
        term.skim_window(window, stretch);
    }
    let mut lazy = Dozing::new(term);
    let mut ops = 0;
    while !u.is_empty() && ops < 2000 {
        ops += 1;
        match u.arbitrary::<u8>().unwrap_or(0) % 4 {
            0 => {
                let n = usize::from(u.arbitrary::<u8>().unwrap_or(0));
                let bytes = u.bytes(n.min(u.len())).unwrap_or_default();
                eager.feed(bytes);
                lazy.skim(bytes);
                assert_eq!(
                    news(lazy.callbacks_mut()),
                    news(eager.callbacks_mut()),
                    "different news after a read of {bytes:?}"
                );
            }
            1 => compare(&eager, lazy.term()),
            2 => {
                let s = small_size(&mut u);
                eager.resize(s);
                lazy.term().resize(s);
            }
            _ => {
                let awake = !lazy.asleep();
                let slept = lazy.sleep();
                if awake {
                    assert_eq!(slept, eager.can_sleep(), "they disagree on sleeping");
                    if slept {
                        eager = Term::wake(eager.sleep());
                    }
                }
            }
        }
    }
    compare(&eager, lazy.term());
    let rows = usize::from(eager.size().rows);
    let mut probe = b"\x1b[2bP\x1b8Q\x1b[6n\x1b[1 q".to_vec();
    probe.extend_from_slice(b"\x1b[1;1H");
    probe.extend(std::iter::repeat_n(b'\n', rows + 1));
    probe.extend_from_slice(b"R\x1b[6n");
    eager.feed(&probe);
    lazy.skim(&probe);
    assert_eq!(
        news(lazy.callbacks_mut()),
        news(eager.callbacks_mut()),
        "the probe's reports differ"
    );
    compare(&eager, lazy.term());
}

fn small_size(u: &mut Unstructured<'_>) -> Size {
    Size {
        rows: 1 + u16::from(u.arbitrary::<u8>().unwrap_or(0) % 6),
        cols: 1 + u16::from(u.arbitrary::<u8>().unwrap_or(0) % 12),
    }
}

fn compare(eager: &Term<Recorder>, lazy: &Term<Recorder>) {
    if eager.resets != 0 || lazy.resets != 0 {
        // A parser that panicked starts over: neither is a reference then.
        return;
    }
    let (a, b) = (seen(eager), seen(lazy));
    for (what, (a, b)) in [
        "cells",
        "cursor",
        "modes",
        "colours in effect",
        "cursor shape",
    ]
    .iter()
    .zip(a.iter().zip(&b))
    {
        assert_eq!(a, b, "the screens' {what} differ");
    }
    assert_eq!(eager.callbacks().title, lazy.callbacks().title);
}
