//! Key-to-screen in the grid: a key that changes what the dashboard
//! shows is typed into its terminal, and the time until the emulated
//! screen shows the change is taken. Two keys: moving the selection
//! (`l`, then `h` back; the selected pane is the one with a thick border,
//! so its corner `┏` moves) and the help overlay (`?` opens it, any key
//! closes it).
//!
//! The dashboard draws at most 30 frames a second, so a key waits for the
//! next frame slot. Keys typed a fixed pause after the last frame would
//! all land at the same phase of that clock and measure one point of it
//! (the `tui` section's 10 ms pause measures 33 - 10 ms of waiting plus
//! the drawing); here the pause varies over a whole frame, as a person's
//! typing does.

use std::time::{Duration, Instant};

use crate::screen::Screen;

/// How long a key may take before it counts as lost.
const LOST_AFTER: Duration = Duration::from_secs(1);
/// Between keys the harness keeps reading, as a terminal would, for this
/// long plus up to one frame (see [`Phase`]).
const PAUSE: Duration = Duration::from_millis(10);
const FRAME: Duration = Duration::from_millis(34);
/// Text that only the help overlay shows.
const HELP_TEXT: &str = "move the selection";

/// Latencies of one kind of key, in µs, and keys never seen to land.
#[derive(Debug, Default, Clone)]
pub struct Keys {
    pub us: Vec<f64>,
    /// When each counted key was typed, in the order of `us`.
    pub at: Vec<Instant>,
    pub lost: usize,
}

impl Keys {
    pub(super) fn take(&mut self, t: Instant, seen: Option<Duration>, counted: bool) {
        match seen {
            Some(_) if counted => {
                self.us.push(t.elapsed().as_secs_f64() * 1e6);
                self.at.push(t);
            }
            Some(_) => {}
            None => self.lost += 1,
        }
    }

    pub fn max_ms(&self) -> Option<f64> {
        self.slowest().map(|(_, ms)| ms)
    }

    /// The slowest key: when it was typed, and its latency (ms).
    pub fn slowest(&self) -> Option<(Instant, f64)> {
        self.at
            .iter()
            .zip(&self.us)
            .map(|(&t, &us)| (t, us / 1e3))
            .reduce(|a, b| if b.1 > a.1 { b } else { a })
    }
}

/// Pauses between keys that fall at every phase of the frame clock:
/// [`PAUSE`] plus a pseudo-random part of [`FRAME`] (xorshift; the
/// sequence needs no quality beyond not being periodic with 30 Hz).
#[derive(Debug)]
pub struct Phase(u64);

impl Default for Phase {
    fn default() -> Phase {
        Phase(0x9e37_79b9_7f4a_7c15 ^ u64::from(std::process::id()))
    }
}

impl Phase {
    pub(super) fn pause(&mut self) -> Duration {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        let frame = FRAME.as_micros() as u64;
        PAUSE + Duration::from_micros(self.0 % frame)
    }
}

/// What the screen showed when a key was not seen to land: the
/// selection's corner and the footer, for the log.
fn report_lost(what: &str, screen: &Screen) {
    let text = screen.contents();
    let footer = text.lines().last().unwrap_or("").trim_end();
    eprintln!(
        "e2e: scale: {what} not seen within {LOST_AFTER:?}; corner at {:?}; footer: {footer}",
        corner(screen.vt.screen())
    );
}

/// Where (row, column) the selected pane's top-left corner is on the
/// screen. Found by cell, not by its place in the screen's text: the
/// text before it changes length whenever a timer or a line of output
/// does, which would look like a move.
fn corner(screen: &vt100::Screen) -> Option<(u16, u16)> {
    let (rows, cols) = screen.size();
    (0..rows.get())
        .flat_map(|r| (0..cols.get()).map(move |c| (r, c)))
        .find(|&(r, c)| screen.cell(r, c).is_some_and(|x| x.contents() == "┏"))
}

/// One selection move (`l` or `h`, alternating with `i`); whether and
/// when the corner moved.
fn select_once(screen: &mut Screen, i: usize) -> (Instant, Option<Duration>) {
    let was = corner(screen.vt.screen());
    let key: &[u8] = if i.is_multiple_of(2) { b"l" } else { b"h" };
    let t = Instant::now();
    screen.send(key);
    let seen = screen.until_cells(LOST_AFTER, |s| {
        let now = corner(s);
        now.is_some() && now != was
    });
    (t, seen)
}

/// `samples` selection moves after `warm` uncounted ones.
pub fn selection(screen: &mut Screen, samples: usize, warm: usize) -> Keys {
    let (mut k, mut phase) = (Keys::default(), Phase::default());
    for i in 0..samples + warm {
        let (t, seen) = select_once(screen, i);
        if seen.is_none() {
            report_lost("a selection move", screen);
        }
        k.take(t, seen, i >= warm);
        screen.drain(phase.pause());
    }
    k
}

/// Selection moves for `d`; `watch` sees the screen after each.
pub fn selection_for(screen: &mut Screen, d: Duration, mut watch: impl FnMut(&str)) -> Keys {
    let (mut k, mut phase) = (Keys::default(), Phase::default());
    let end = Instant::now() + d;
    let mut i = 0;
    while Instant::now() < end {
        let (t, seen) = select_once(screen, i);
        if seen.is_none() {
            report_lost("a selection move", screen);
        }
        k.take(t, seen, true);
        watch(&screen.contents());
        screen.drain(phase.pause());
        i += 1;
    }
    k
}

/// `samples` keys that open or close the help, after `warm` uncounted
/// ones.
pub fn help(screen: &mut Screen, samples: usize, warm: usize) -> Keys {
    let (mut k, mut phase) = (Keys::default(), Phase::default());
    for i in 0..samples + warm {
        // Whatever the last key did: `?` opens a closed help, any key
        // closes an open one.
        let open = !screen.contents().contains(HELP_TEXT);
        let t = Instant::now();
        screen.send(b"?");
        let seen = screen.until(LOST_AFTER, |c| c.contains(HELP_TEXT) == open);
        if seen.is_none() {
            report_lost("the help opening or closing", screen);
        }
        k.take(t, seen, i >= warm);
        screen.drain(phase.pause());
    }
    // Left closed, whatever happened.
    if screen.contents().contains(HELP_TEXT) {
        screen.send(b"?");
        screen.until(LOST_AFTER, |c| !c.contains(HELP_TEXT));
    }
    k
}

/// The longest time the screen went without output, from the read times
/// [`Screen::reads`] recorded: when it ended, and how long it was (ms).
pub fn longest_gap(reads: &[Instant]) -> Option<(Instant, f64)> {
    reads
        .windows(2)
        .map(|w| (w[1], w[1].duration_since(w[0]).as_secs_f64() * 1e3))
        .reduce(|a, b| if b.1 > a.1 { b } else { a })
}
