//! A session's output on its way to the user's terminal: what `hm attach`
//! writes for each OUTPUT frame, and the program's last screen.
//!
//! In order: during the replay of the scrollback, old terminal queries are
//! dropped ([`QueryFilter`]; live, only the status protocol's probe when
//! the supervisor answers it itself); the program's screen switches are
//! rewritten ([`ScreenRewriter`]); and what reaches the terminal is
//! scanned for what erases the status bar or moves the scroll region
//! ([`DamageScan`]), which is clamped above the bar right where the
//! program set it. Pure: bytes in, bytes out; `session` does the I/O
//! and draws the bar when told to.

use super::queries::QueryFilter;
use super::screens::ScreenRewriter;
use super::statusbar::{self, Damage, DamageScan};
use crate::protocol::Size;
use crate::vt::term::Term;

/// How much of the program's latest output is kept for its last screen.
const TAIL: usize = 64 * 1024;

/// Whether output is still scrollback replay (filtered for queries).
#[derive(Debug)]
enum Replay {
    /// Until the first frame tells whether the supervisor marks the end of
    /// replay (it answers INFO first) or not (a seed-protocol supervisor:
    /// then nothing can be filtered safely).
    Undecided(QueryFilter),
    Replaying(QueryFilter),
    Live,
    /// Live output of a supervisor that answers the status protocol's
    /// probe itself: the probe is kept from the terminal, which might
    /// answer it a second time.
    LiveWithoutProbe(QueryFilter),
}

#[derive(Debug)]
pub struct Shown {
    filter: Replay,
    /// The supervisor answers the status protocol's probe (INFO says).
    answers_probe: bool,
    /// Keeps the program's screen switches off the terminal.
    screens: ScreenRewriter,
    damage: DamageScan,
    /// The program's latest output on its main screen since its last
    /// screen change (the last [`TAIL`] to 2 x [`TAIL`] bytes, cut at a
    /// line start): its last screen, if it ends there.
    tail: Vec<u8>,
}

impl Default for Shown {
    fn default() -> Self {
        Shown {
            filter: Replay::Undecided(QueryFilter::new()),
            answers_probe: false,
            screens: ScreenRewriter::new(),
            damage: DamageScan::default(),
            tail: Vec::new(),
        }
    }
}

impl Shown {
    pub fn new() -> Self {
        Self::default()
    }

    /// INFO came, before any output: the supervisor will mark where the
    /// replay ends, so the replay can be filtered. `answers_probe`: it
    /// answers the OSC 7501 probe itself. An INFO after the first (a new
    /// label, told) leaves the filter as it is: replaced, a replay's old
    /// queries reached the terminal, and its answers the program.
    pub fn info(&mut self, answers_probe: bool) {
        if matches!(self.filter, Replay::Undecided(_))
            && let Replay::Undecided(f) = std::mem::replace(&mut self.filter, Replay::Live)
        {
            self.filter = Replay::Replaying(f);
        }
        self.answers_probe = answers_probe;
    }

    /// The replay is over: what the filter held back goes out. The same
    /// return as [`output`](Self::output).
    pub fn replay_end(&mut self, out: &mut Vec<u8>, bar: Option<u16>) -> bool {
        let live = if self.answers_probe {
            Replay::LiveWithoutProbe(QueryFilter::status_probe_only())
        } else {
            Replay::Live
        };
        match std::mem::replace(&mut self.filter, live) {
            Replay::Replaying(mut filt) => {
                let mut rest = Vec::new();
                filt.finish(&mut rest);
                self.show(&rest, out, bar)
            }
            _ => false,
        }
    }

    /// Appends to `out` what the terminal is to get of `bytes`. `bar`: the
    /// rows above the status bar, when there is one. True when the bar
    /// must be drawn again.
    pub fn output(&mut self, bytes: &[u8], out: &mut Vec<u8>, bar: Option<u16>) -> bool {
        match &mut self.filter {
            Replay::Replaying(f) | Replay::LiveWithoutProbe(f) => {
                let mut kept = Vec::with_capacity(bytes.len());
                f.filter(bytes, &mut kept);
                self.show(&kept, out, bar)
            }
            Replay::Undecided(_) => {
                // A supervisor that answers no INFO cannot mark the replay.
                self.filter = Replay::Live;
                self.show(bytes, out, bar)
            }
            Replay::Live => self.show(bytes, out, bar),
        }
    }

    /// Screen switches rewritten, then every scroll region clamped and the
    /// bar's region set again where what reaches the terminal damaged it.
    fn show(&mut self, bytes: &[u8], out: &mut Vec<u8>, bar: Option<u16>) -> bool {
        let start = out.len();
        let switches = self.screens.switches();
        self.screens.rewrite(bytes, out);
        self.keep_tail(out, start, switches);
        let mut regions = Vec::new();
        let damage = self.damage.scan(&out[start..], &mut regions);
        let Some(rows) = bar else {
            return false;
        };
        // Each scroll region the program sets is clamped right after it,
        // before any output that would scroll the bar away.
        for &(at, region) in regions.iter().rev() {
            let fix = statusbar::set_region(statusbar::clamp_region(region, rows));
            out.splice(start + at..start + at, fix);
        }
        if damage == Damage::Region {
            let region = self.damage.region().unwrap_or((0, 0));
            let (top, bottom) = statusbar::clamp_region(region, rows);
            out.extend(b"\x1b7");
            out.extend(statusbar::set_region((top, bottom)));
            out.extend(b"\x1b8");
        }
        damage != Damage::None
    }

    /// Adds the program's output just rewritten into `out` from `start` to
    /// the tail, or starts the tail afresh if it switched screens
    /// (`switches` was the count before): a screen left behind is not the
    /// last one.
    fn keep_tail(&mut self, out: &[u8], start: usize, switches: u64) {
        let from = if self.screens.switches() == switches {
            start
        } else {
            self.tail.clear();
            self.screens.switched_at()
        };
        // What is drawn on the alternate screen is never printed.
        if self.screens.alternate() {
            return;
        }
        self.tail.extend_from_slice(&out[from..]);
        if self.tail.len() > 2 * TAIL {
            // Cut at a line start, so no escape sequence is cut in two.
            let from = self.tail.len() - TAIL;
            let from = self.tail[from..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(from, |i| from + i + 1);
            self.tail.drain(..from);
        }
    }

    /// A resize: terminals drop the scroll region.
    pub fn resized(&mut self) {
        self.damage.forget_region();
    }

    /// The program is on its alternate screen.
    pub fn alternate(&self) -> bool {
        self.screens.alternate()
    }

    /// The program's last screen as plain text: its tail run through a
    /// terminal emulator of `size` (its screen's), trailing blank lines
    /// dropped.
    pub fn last_screen(&self, size: Size) -> Vec<String> {
        // The dashboard's pane emulator: its caps and panic containment
        // serve hostile output here too.
        let mut term = Term::new(size);
        term.feed(&self.tail);
        let text = term.screen().contents();
        let mut lines: Vec<String> = text.lines().map(|l| l.trim_end().to_string()).collect();
        while lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_replay_is_filtered_only_when_the_supervisor_marks_its_end() {
        let query = b"a\x1b[6nb";
        let mut marked = Shown::new();
        marked.info(false);
        let mut out = Vec::new();
        marked.output(query, &mut out, None);
        assert_eq!(out, b"ab");
        marked.replay_end(&mut out, None);
        out.clear();
        marked.output(query, &mut out, None);
        assert_eq!(out, query, "live output is not filtered");
        // A supervisor that sends output before INFO cannot mark the end.
        let mut seed = Shown::new();
        let mut out = Vec::new();
        seed.output(query, &mut out, None);
        assert_eq!(out, query);
    }

    /// An INFO after the first (a new label, told while attached) leaves
    /// the filter as it was: mid-replay, old queries are still dropped;
    /// live, the status probe the supervisor answers still is.
    #[test]
    fn a_later_info_keeps_the_filter() {
        let query = b"a\x1b[6nb";
        let probe = b"c\x1b]7501;?\x1b\\d";
        let mut s = Shown::new();
        s.info(true);
        s.info(true);
        let mut out = Vec::new();
        s.output(query, &mut out, None);
        assert_eq!(out, b"ab", "still replaying");
        s.replay_end(&mut out, None);
        s.info(true);
        out.clear();
        s.output(probe, &mut out, None);
        assert_eq!(out, b"cd", "the probe is still the supervisor's to answer");
    }

    #[test]
    fn a_scroll_region_is_clamped_above_the_bar_where_it_is_set() {
        let mut s = Shown::new();
        let mut out = Vec::new();
        let redraw = s.output(b"x\x1b[1;24ry", &mut out, Some(23));
        assert_eq!(out, b"x\x1b[1;24r\x1b[1;23ry");
        assert!(!redraw);
        assert!(s.output(b"\x1b[2J", &mut out, Some(23)), "an erase");
    }

    #[test]
    fn the_last_screen_is_the_main_screen_after_the_last_switch() {
        let mut s = Shown::new();
        let mut out = Vec::new();
        s.output(b"old\r\n\x1b[?1049hfull\x1b[?1049lnew\r\n", &mut out, None);
        assert!(!s.alternate());
        let size = Size { cols: 20, rows: 5 };
        assert_eq!(s.last_screen(size), ["new"]);
    }
}
