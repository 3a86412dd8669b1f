//! The inbox at scale (issue 22): among the scale section's sessions, a
//! few are programs that ask (`Continue? [y/N]`, under the `agent`
//! classifier), each held at a gate until the harness lets it ask. With
//! some of them waiting and the others streaming: key-to-screen for `i`
//! opening the inbox and `Esc` closing it; then, with the inbox open, the
//! time from a program starting to ask to its row on the screen (what the
//! detector takes to see it waits, the STATE pushed, and a frame).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::peers::{self, Bench, HmSession};
use crate::screen::Screen;

use super::keys::{Keys, Phase};

/// Sessions that ask, of the section's: half ask before the keys are
/// timed (the inbox has rows), half are let ask with the inbox open.
pub const ASKERS: usize = 8;
/// How long a row may take before it counts as lost.
const LOST_AFTER: Duration = Duration::from_secs(3);
/// What only an open inbox shows.
const INBOX_TEXT: &str = "needs you · ";

/// The askers: ids and gates.
pub struct Askers {
    /// Held for their guards: dropped, the sessions are killed.
    _sessions: Vec<HmSession>,
    pub ids: Vec<String>,
    gates: Vec<PathBuf>,
}

/// What the inbox took.
#[derive(Debug, Default)]
pub struct Report {
    /// `i` opening the inbox and `Esc` closing it, with some waiting.
    pub keys: Keys,
    /// A program starting to ask, to its row in the open inbox (µs).
    pub rows: Keys,
}

/// Starts the askers `ids` in `dir`, each waiting at its gate.
pub fn start(b: &Bench, dir: &Path, ids: Vec<String>) -> Askers {
    let gates: Vec<PathBuf> = ids.iter().map(|_| b.fifo()).collect();
    let sessions: Vec<HmSession> = ids
        .iter()
        .zip(&gates)
        .map(|(id, g)| {
            let script = format!(
                "read x < '{}'; read -p 'Continue? [y/N] ' x; exec sleep 1000000",
                g.display()
            );
            b.spawn_hm_with(
                dir,
                id,
                &["--classifier", "agent"],
                &["bash", "-c", &script],
            )
        })
        .collect();
    for s in &sessions {
        s.wait_ready();
    }
    Askers {
        _sessions: sessions,
        ids,
        gates,
    }
}

/// The inbox row of `id`: its id after the frame and the selection mark.
fn row_shown(contents: &str, id: &str) -> bool {
    let (marked, plain) = (format!("│▸ {id} "), format!("│  {id} "));
    contents.contains(&marked) || contents.contains(&plain)
}

/// Measures on the dashboard in `screen` (the grid shown, the streaming
/// sessions streaming): `samples` opening and closing keys after `warm`.
pub fn measure(screen: &mut Screen, a: &Askers, samples: usize, warm: usize) -> Report {
    let mut r = Report::default();
    let half = a.ids.len() / 2;
    for g in &a.gates[..half] {
        peers::open_gate(g);
    }
    // Asking, and seen to: the footer counts them.
    let counted = format!("{half} need you");
    if screen
        .until(Duration::from_secs(20), |c| c.contains(&counted))
        .is_none()
    {
        eprintln!(
            "e2e: scale: the askers were never counted: {}",
            screen.footer()
        );
        return r;
    }
    let mut phase = Phase::default();
    for i in 0..samples + warm {
        let open = !screen.contents().contains(INBOX_TEXT);
        let t = Instant::now();
        screen.send(if open { b"i" } else { b"\x1b" });
        let seen = screen.until(Duration::from_secs(1), |c| c.contains(INBOX_TEXT) == open);
        if seen.is_none() {
            eprintln!("e2e: scale: the inbox opening or closing not seen");
        }
        r.keys.take(t, seen, i >= warm);
        screen.drain(phase.pause());
    }
    // Open, and each of the others let ask in turn.
    if !screen.contents().contains(INBOX_TEXT) {
        screen.send(b"i");
        screen.until(Duration::from_secs(1), |c| c.contains(INBOX_TEXT));
    }
    for (id, g) in a.ids[half..].iter().zip(&a.gates[half..]) {
        let t = Instant::now();
        peers::open_gate(g);
        let seen = screen.until(LOST_AFTER, |c| row_shown(c, id));
        if seen.is_none() {
            eprintln!("e2e: scale: {id}'s inbox row not seen within {LOST_AFTER:?}");
        }
        r.rows.take(t, seen, true);
        screen.drain(phase.pause());
    }
    screen.send(b"\x1b");
    screen.until(Duration::from_secs(1), |c| !c.contains(INBOX_TEXT));
    r
}
