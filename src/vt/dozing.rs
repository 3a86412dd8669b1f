//! A supervisor's screen: an emulator that parses lazily and sleeps while
//! its session rests. Output is read as it comes and parsed when the
//! screen is looked at ([`Dozing::term`]), leaving out rows that scrolled
//! off unseen (`vt::skim`); asleep, the screen is its rendering, a few KiB
//! where the emulator holds 32 bytes a cell, and output read meanwhile
//! waits unparsed beside it unless it must be parsed at once.

use crate::protocol::Size;
use crate::vt::term::{Asleep, Term};

/// A screen that parses lazily, sleeps when told ([`Dozing::sleep`]) and
/// wakes when next looked at: a supervisor's. Output read while it sleeps
/// waits unparsed with its rendering, unless it must be parsed at once.
pub struct Dozing<CB: vt100::Callbacks> {
    awake: Option<Term<CB>>,
    asleep: Option<Asleep<CB>>,
    /// The size to start over at if neither is there (never, but a blank
    /// screen is the answer rather than a panic).
    size: Size,
}

impl<CB: vt100::Callbacks + Default> Dozing<CB> {
    pub fn new(mut term: Term<CB>) -> Self {
        term.allow_sleep();
        term.parse_lazily();
        Dozing {
            size: term.size(),
            awake: Some(term),
            asleep: None,
        }
    }

    /// The screen, woken if it slept, with everything read parsed.
    pub fn term(&mut self) -> &mut Term<CB> {
        let t = self.wake();
        t.settle();
        t
    }

    fn wake(&mut self) -> &mut Term<CB> {
        let size = self.size;
        let asleep = &mut self.asleep;
        self.awake.get_or_insert_with(|| match asleep.take() {
            Some(a) => Term::wake(a),
            None => blank(size),
        })
    }

    /// Reads session output (see [`Term::skim`]); a sleeping screen is
    /// woken only if some of it must be parsed now.
    pub fn skim(&mut self, bytes: &[u8]) {
        let from = match &mut self.asleep {
            Some(a) => match a.skim(bytes) {
                None => return,
                Some(n) => n,
            },
            None => 0,
        };
        self.wake().skim(&bytes[from..]);
    }

    /// What the callbacks collected, asleep or awake.
    pub fn callbacks_mut(&mut self) -> &mut CB {
        let Dozing {
            awake,
            asleep,
            size,
        } = self;
        match asleep {
            Some(a) if awake.is_none() => a.callbacks_mut(),
            _ => awake.get_or_insert_with(|| blank(*size)).callbacks_mut(),
        }
    }

    /// Puts the screen to sleep, everything read parsed first, if what it
    /// shows allows (see [`Term::sleep`]); true if it sleeps now.
    pub fn sleep(&mut self) -> bool {
        if let Some(t) = &mut self.awake {
            t.settle();
        }
        if let Some(t) = self.awake.take_if(|t| t.can_sleep()) {
            self.size = t.size();
            self.asleep = Some(t.sleep());
        }
        self.asleep.is_some()
    }

    pub fn asleep(&self) -> bool {
        self.asleep.is_some()
    }

    /// Whether the alternate screen is in use, without waking the screen
    /// or parsing: a switch is parsed as soon as it is read.
    pub fn alternate(&self) -> bool {
        match (&self.awake, &self.asleep) {
            (Some(t), _) => t.screen().alternate_screen(),
            (None, Some(a)) => a.alternate(),
            (None, None) => false,
        }
    }
}

/// A blank screen of `size`, as [`Dozing::new`] sets one up.
fn blank<CB: vt100::Callbacks + Default>(size: Size) -> Term<CB> {
    let mut t = Term::with_callbacks(size, CB::default());
    t.allow_sleep();
    t.parse_lazily();
    t
}

impl<CB: vt100::Callbacks> std::fmt::Debug for Dozing<CB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dozing")
            .field("asleep", &self.asleep.is_some())
            .field("size", &self.size)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `detect::plain` asks whether the alternate screen is in use without
    /// parsing: asleep, the answer is the one the sleep took, and a switch
    /// read meanwhile wakes the screen to be parsed at once.
    #[test]
    fn alternate_is_known_asleep_and_follows_a_switch() {
        let size = Size { cols: 20, rows: 5 };
        let mut d: Dozing<()> = Dozing::new(Term::new(size));
        assert!(!d.alternate());
        d.skim(b"main\r\n\x1b[?1049hfull screen");
        assert!(d.alternate());
        assert!(
            d.sleep(),
            "an alternate screen over a known main one sleeps"
        );
        assert!(d.alternate());
        d.skim(b" more");
        assert!(d.asleep() && d.alternate());
        d.skim(b"\x1b[?1049l");
        assert!(!d.asleep(), "a switch is parsed when it is read");
        assert!(!d.alternate());
        assert!(d.term().screen().contents().starts_with("main"));
    }
}
