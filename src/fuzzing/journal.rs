//! The journal's target: output and resizes go into a supervisor's ring
//! and journal as the pty reader and RESIZE put them there, and into the
//! session's screen; subscribers that asked for marks read the stream back
//! as a connection frames it, into emulators of their own.
//!
//! Checks: the journal never holds more than its bound; every byte a
//! subscriber gets comes with the size the session had when it was
//! written; a mark never points outside what the subscriber is sent;
//! every subscriber, whenever it joined, ends on the screen (main or
//! alternate) the session is on; and the subscriber that joined before
//! the first byte, replayed into an emulator, is the live one exactly: its screen (the session's own,
//! which keeps no history, too) and every row that scrolled off, wraps
//! and all. The property test below runs the same check on generated
//! operations.

use crate::protocol::{Assembler, MAX_PAYLOAD, Mark, Reply, ServerType, Size};
use crate::supervisor::output::{ConnId, Output};
use crate::vt::term::Term;

/// Rows of history each emulator keeps: small, so that numbering across
/// dropped rows is checked too.
const HISTORY: usize = 200;

/// What happens to the session.
#[derive(Debug, Clone)]
pub enum Op {
    /// The program writes these bytes (read in one pass).
    Print(Vec<u8>),
    /// A RESIZE reaches the pty.
    Resize(Size),
    /// A subscriber that asks for marks joins.
    Join,
    /// Subscriber `k`'s socket takes this many bytes.
    Take(usize, usize),
    /// Time passes, in ms.
    Tick(u64),
}

/// The target: operations from bytes, then [`run`].
///
/// Layout: a tag byte, then its arguments, until the input ends:
/// `0x00..=0x7f` print the next `tag + 1` bytes; `0x80..=0x9f` resize to
/// `cols = next % 64`, `rows = next % 24` (0 is clamped to 1);
/// `0xa0..=0xaf` a subscriber joins; `0xb0..=0xef` subscriber `tag % 4`
/// takes `(next + 1) * 37` bytes; `0xf0..=0xff` `(tag % 16) * 500` ms
/// pass.
pub fn journal(data: &[u8]) {
    run(&decode(data));
}

fn decode(data: &[u8]) -> Vec<Op> {
    let mut ops = Vec::new();
    let mut rest = data;
    let next = |rest: &mut &[u8]| -> u8 {
        let (b, tail) = rest.split_first().map_or((0, &[][..]), |(b, t)| (*b, t));
        *rest = tail;
        b
    };
    while !rest.is_empty() {
        let tag = next(&mut rest);
        ops.push(match tag {
            0x00..=0x7f => {
                let n = (usize::from(tag) + 1).min(rest.len());
                let (bytes, tail) = rest.split_at(n);
                rest = tail;
                Op::Print(bytes.to_vec())
            }
            0x80..=0x9f => {
                let cols = u16::from(next(&mut rest) % 64);
                let rows = u16::from(next(&mut rest) % 24);
                Op::Resize(Size { cols, rows })
            }
            0xa0..=0xaf => Op::Join,
            0xb0..=0xef => Op::Take(
                usize::from(tag % 4),
                (usize::from(next(&mut rest)) + 1) * 37,
            ),
            _ => Op::Tick(u64::from(tag % 16) * 500),
        });
    }
    ops
}

/// A subscriber with marks, as its client sees the stream.
struct Client {
    id: ConnId,
    /// The offset of the next byte it will be sent.
    at: u64,
    /// Its emulator, fed the stream and resized at each mark.
    term: Term,
    /// The size the last mark said.
    size: Option<Size>,
    frames: Assembler,
    /// Cut off (its marks were dropped while it was behind).
    cut: bool,
    /// Joined before the first byte: its replay is the whole output.
    from_start: bool,
}

/// Runs `ops`; panics when a check fails.
pub fn run(ops: &[Op]) {
    let first = Size { cols: 20, rows: 6 };
    let mut now = 1_700_000_000_000u64;
    // A scrollback shorter than the output, so that later subscribers
    // start at a clean point inside it.
    let mut output = Output::new(2000, first, now);
    let mut live: Term = Term::with_scrollback(first, HISTORY);
    let mut bare: Term = Term::new(first);
    // Every size applied and where: byte X was written at the last one at
    // or before X.
    let mut sizes: Vec<(u64, Size)> = vec![(0, first)];
    let mut clients: Vec<Client> = Vec::new();
    // The session's screen takes a size with the next byte (see
    // `Shared::resized`).
    let mut pending: Option<Size> = None;
    let join = |output: &mut Output, clients: &mut Vec<Client>| {
        if clients.len() >= 4 {
            return;
        }
        let id = clients.len() as ConnId;
        output.subscribe(id, false, true);
        let at = output.position(id).unwrap_or(0);
        clients.push(Client {
            id,
            at,
            term: Term::with_scrollback(Size { cols: 80, rows: 24 }, HISTORY),
            size: None,
            frames: Assembler::new(MAX_PAYLOAD),
            cut: false,
            from_start: at == 0,
        });
    };
    join(&mut output, &mut clients);
    let mut head = 0u64;
    for op in ops {
        match op {
            Op::Print(bytes) => {
                let mut rest = &bytes[..];
                while !rest.is_empty() {
                    let budget = output.read_budget();
                    if budget == 0 {
                        for c in clients.iter_mut() {
                            take(&mut output, c, usize::MAX, &sizes);
                        }
                        continue;
                    }
                    let (read, _) = output
                        .read(rest.len().min(budget), now, |spare| {
                            spare.copy_from_slice(&rest[..spare.len()]);
                            Ok(spare.len())
                        })
                        .unwrap_or((head..head, 0));
                    let n = (read.end - read.start) as usize;
                    if let Some(size) = pending.take().filter(|_| n > 0) {
                        live.resize(size);
                        bare.resize(size);
                    }
                    live.feed(&rest[..n]);
                    bare.feed(&rest[..n]);
                    rest = &rest[n..];
                    head = read.end;
                }
            }
            Op::Resize(size) => {
                let size = size.clamped();
                output.resized(size, now);
                pending = Some(size);
                sizes.push((head, size));
            }
            Op::Join => join(&mut output, &mut clients),
            Op::Take(k, room) => {
                if let Some(c) = clients.get_mut(*k) {
                    take(&mut output, c, *room, &sizes);
                }
            }
            Op::Tick(ms) => now += ms,
        }
        let j = output.journal();
        assert!(j.len() <= j.capacity(), "the journal grew past its bound");
    }
    for c in clients.iter_mut() {
        take(&mut output, c, usize::MAX, &sizes);
    }
    assert_eq!(
        live.screen().contents_formatted(),
        bare.screen().contents_formatted(),
        "a screen that keeps history is the session's own"
    );
    // Whenever it joined, a subscriber is on the screen the session is on.
    for c in clients
        .iter()
        .filter(|c| !c.cut && c.size.is_some() && c.at == head)
    {
        assert_eq!(
            c.term.screen().alternate_screen(),
            live.screen().alternate_screen(),
            "a subscriber that joined at {} is on another screen",
            c.at
        );
    }
    // With no output at all there is nothing to compare: the screens are
    // blank (a size given before the first byte is one the session's
    // screen takes with that byte, and a subscriber at once).
    for c in clients
        .iter_mut()
        .filter(|c| c.from_start && !c.cut && head > 0)
    {
        assert_eq!(c.at, head, "the replay ends where the output does");
        assert_eq!(
            c.term.screen().contents_formatted(),
            live.screen().contents_formatted(),
            "the replay's screen is the live one"
        );
        assert_eq!(c.term.first_row(), live.first_row());
        assert_eq!(
            c.term.rows_between(0, usize::MAX),
            live.rows_between(0, usize::MAX),
            "the replay's history is the live one"
        );
    }
}

/// What a connection writes to a subscriber whose socket takes `room`
/// bytes (the rest of a frame, then marks and new frames, as
/// `client/outbound.rs` does), read by its client: each OUTPUT byte
/// checked against the size it was written at, marks applied.
fn take(output: &mut Output, c: &mut Client, mut room: usize, sizes: &[(u64, Size)]) {
    if c.cut {
        return;
    }
    let mut wire: Vec<u8> = Vec::new();
    while room > 0 {
        if let Some(tail) = output.evicted_tail(c.id) {
            wire.extend_from_slice(tail);
            output.unsubscribe(c.id);
            break;
        }
        if let Some(m) = output.take_mark(c.id) {
            wire.extend(Reply::Mark(m).encode());
        }
        output.start_frame(c.id);
        let Some(f) = output.inflight(c.id) else {
            break;
        };
        let unsent: Vec<u8> = output.unsent(&f).concat();
        let n = unsent.len().min(room);
        wire.extend_from_slice(&unsent[..n]);
        room -= n;
        assert_eq!(output.frame_sent(c.id, n), n);
    }
    let mut frames = Vec::new();
    if c.frames.push(&wire, &mut frames).is_err() {
        panic!("the stream is not whole frames");
    }
    for f in frames {
        match f.ty {
            t if t == ServerType::Output as u8 => {
                let size = c.size.expect("a mark comes before the first byte");
                for i in 0..f.payload.len() as u64 {
                    let at = c.at + i;
                    let truth = sizes.iter().rev().find(|(o, _)| *o <= at).map(|(_, s)| *s);
                    assert_eq!(Some(size), truth, "byte {at} with the wrong size");
                }
                c.at += f.payload.len() as u64;
                c.term.feed(&f.payload);
            }
            t if t == ServerType::Mark as u8 => {
                let m = Mark::decode(&f.payload).expect("a whole mark");
                c.term.take_mark(&m, c.size.is_none());
                c.size = Some(m.size);
            }
            t if t == ServerType::Error as u8 => c.cut = true,
            other => panic!("frame {other:#x} nobody asked for"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Output a program might write: text, long lines, newlines, colours,
    /// cursor moves, clearing, the alternate screen, ED 3.
    fn chunk() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            "[a-z ]{1,90}".prop_map(String::into_bytes),
            Just(b"\r\n".to_vec()),
            Just(b"\x1b[31m".to_vec()),
            Just(b"\x1b[m".to_vec()),
            Just(b"\x1b[H\x1b[2J".to_vec()),
            Just(b"\x1b[3J".to_vec()),
            Just(b"\x1b[5A".to_vec()),
            Just(b"\x1b[?1049h".to_vec()),
            Just(b"\x1b[?1049l".to_vec()),
            Just("wide 你好 ".as_bytes().to_vec()),
        ];
        prop::collection::vec(piece, 1..12).prop_map(|p| p.concat())
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => chunk().prop_map(Op::Print),
            2 => (1u16..120, 1u16..40).prop_map(|(cols, rows)| Op::Resize(Size { cols, rows })),
            1 => Just(Op::Join),
            2 => (0usize..4, 1usize..4000).prop_map(|(k, n)| Op::Take(k, n)),
            1 => (0u64..5000).prop_map(Op::Tick),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Random output and random resizes: the replay with the journal
        /// is the live emulator, screen and scrolled-off rows exactly.
        #[test]
        fn a_replay_with_the_journal_is_the_live_screen_and_its_history(
            ops in prop::collection::vec(op(), 1..80),
        ) {
            run(&ops);
        }
    }

    #[test]
    fn a_storm_of_resizes_stays_within_the_bound() {
        let mut ops = Vec::new();
        for i in 0..3000u16 {
            ops.push(Op::Resize(Size {
                cols: 10 + i % 50,
                rows: 5,
            }));
            ops.push(Op::Print(b"x".to_vec()));
            if i % 100 == 0 {
                ops.push(Op::Join);
            }
            // And a client resizing in a loop while nothing is written.
            ops.push(Op::Resize(Size { cols: 7, rows: 3 }));
            ops.push(Op::Resize(Size { cols: 9, rows: 3 }));
        }
        ops.push(Op::Take(1, usize::MAX));
        run(&ops);
    }
}
