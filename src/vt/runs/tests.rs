//! A screen that keeps runs of plain lines without drawing them is held
//! to one that parses every byte: the same history (rows, wrapping,
//! numbering), the same vt100 screen in every detail it keeps (its
//! `Debug` form: cells, wrapping, cursor, attributes, modes, the saved
//! cursor, the last character, the count of rows that scrolled off), on
//! random output read in random pieces, resized between them and after.

use proptest::prelude::*;

use crate::protocol::Size;
use crate::vt::term::Term;

/// Output that is no part of a run, or changes whether one may start.
static OTHER: &[&[u8]] = &[
    b"\n",
    b"\r",
    b"\x08",
    b"\t",
    b"\x07",
    b"\x1b[K",
    b"\x1b[2J",
    b"\x1b[3J",
    b"\x1b[H",
    b"\x1b[2;3H",
    b"\x1b[A",
    b"\x1b[3b",
    b"\x1bM",
    b"\x1b[S",
    b"\x1b[T",
    b"\x1b[L",
    b"\x1b7",
    b"\x1b8",
    b"\x1b[r",
    b"\x1b[2;3r",
    b"\x1b[1;99r",
    b"\x1b[?6h",
    b"\x1b[?6l",
    b"\x1b[?7l",
    b"\x1b[?7h",
    b"\x1b[4h",
    b"\x1b[4l",
    b"\x1b[?25l",
    b"\x1b[?1049h",
    b"\x1b[?1049l",
    b"\x1b[?47h",
    b"\x1b[?47l",
    b"\x1bc",
    b"\x1b]0;title\x07",
    b"\x1b[5m",
    b"\x1b[38;5m",
    b"\x1b[38;5;300m",
    b"\x1b[1:2m",
    "\u{e9}".as_bytes(),
    "\u{4f60}".as_bytes(),
    b"\xff",
];

/// SGR sequences a run takes.
static SGR: &[&[u8]] = &[
    b"\x1b[m",
    b"\x1b[0m",
    b"\x1b[1m",
    b"\x1b[2m",
    b"\x1b[22m",
    b"\x1b[3;4;7m",
    b"\x1b[23;24;27m",
    b"\x1b[1;31m",
    b"\x1b[32m",
    b"\x1b[39;49m",
    b"\x1b[44m",
    b"\x1b[93m",
    b"\x1b[104m",
    b"\x1b[38;5;202m",
    b"\x1b[48;5;9m",
    b"\x1b[38;2;1;2;3m",
    b"\x1b[48;2;255;0;7m",
    b"\x1b[1;;3m",
    b"\x1b[;m",
    b"\x1b[001m",
];

fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        12 => "[ -~]{0,24}".prop_map(|s| format!("{s}\r\n").into_bytes()),
        4 => "[ -~]{1,12}".prop_map(String::into_bytes),
        5 => prop::sample::select(SGR).prop_map(<[u8]>::to_vec),
        3 => Just(b"\r\n".to_vec()),
        // Lines that fill a narrow screen's rows exactly.
        2 => (1usize..4, 1usize..6).prop_map(|(k, w)| {
            let mut l = vec![b'x'; k * w];
            l.extend(b"\r\n");
            l
        }),
        2 => prop::sample::select(OTHER).prop_map(<[u8]>::to_vec),
    ]
}

fn size() -> impl Strategy<Value = Size> {
    (1u16..9, 1u16..6).prop_map(|(cols, rows)| Size { cols, rows })
}

/// A screen with a history, and one that parses every byte.
fn pair(size: Size, keep: usize, at_bottom: bool) -> (Term, Term) {
    let mut fast: Term = Term::with_scrollback(size, keep);
    let mut every: Term = Term::with_scrollback(size, keep);
    every.draw_every_row();
    if at_bottom {
        fast.grow_at_bottom();
        every.grow_at_bottom();
    }
    (fast, every)
}

/// The screen's `Debug` form, with the rows owed to vt100's count of rows
/// gone counted.
fn counted(t: &Term, owed: u64) -> String {
    let screen = format!("{:?}", t.screen());
    let key = "unbounded_len: ";
    let at = screen.find(key).expect("vt100 counts rows gone") + key.len();
    let len = screen[at..]
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(0);
    let n: u64 = screen[at..at + len].parse().expect("a count");
    format!("{}{}{}", &screen[..at], n + owed, &screen[at + len..])
}

fn same(fast: &Term, every: &Term, at: &str) {
    let (a, b) = (fast.parser.callbacks(), every.parser.callbacks());
    let rows = |t: &crate::vt::kept::Tally<()>| {
        t.rows
            .iter()
            .map(|k| (k.formatted.to_string(), k.wrapped))
            .collect::<Vec<_>>()
    };
    assert_eq!(rows(a), rows(b), "history, {at}");
    assert_eq!(
        (a.dropped, a.gone, a.pulled, a.moved, b.owed),
        (b.dropped, b.gone, b.pulled, b.moved, 0),
        "numbering, {at}"
    );
    assert_eq!(
        (fast.first_row(), fast.history_end(), fast.rows_moved()),
        (every.first_row(), every.history_end(), every.rows_moved()),
        "numbering, {at}"
    );
    assert_eq!(fast.rows_pulled(), every.rows_pulled(), "pulled, {at}");
    let (x, y) = (counted(fast, a.owed), format!("{:?}", every.screen()));
    if x != y {
        // Where they part, not two pages of cells.
        let from = x.bytes().zip(y.bytes()).take_while(|(a, b)| a == b).count();
        let show = |s: &str| s[from.saturating_sub(300)..(from + 200).min(s.len())].to_owned();
        panic!("screen, {at}:\n{}\n---\n{}", show(&x), show(&y));
    }
    assert_eq!(fast.resets, every.resets, "resets, {at}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn runs_kept_without_drawing_them_change_nothing(
        first in size(),
        keep in prop::sample::select(vec![1usize, 3, 1000]),
        at_bottom in prop::bool::weighted(0.1),
        pieces in prop::collection::vec(piece(), 1..120),
        cuts in prop::collection::vec((any::<prop::sample::Index>(), prop::option::weighted(0.3, size())), 0..8),
        after in prop::collection::vec(size(), 1..4),
    ) {
        let stream = pieces.concat();
        let mut cuts: Vec<(usize, Option<Size>)> =
            cuts.into_iter().map(|(i, s)| (i.index(stream.len() + 1), s)).collect();
        cuts.sort_by_key(|c| c.0);
        let (mut fast, mut every) = pair(first, keep, at_bottom);
        let mut from = 0;
        for (at, resize) in cuts.into_iter().chain([(stream.len(), None)]) {
            fast.feed(&stream[from..at]);
            every.feed(&stream[from..at]);
            same(&fast, &every, &format!("after byte {at}"));
            if let Some(size) = resize {
                fast.resize(size);
                every.resize(size);
                same(&fast, &every, &format!("resized to {size:?} at {at}"));
            }
            from = at;
        }
        for size in after {
            fast.resize(size);
            every.resize(size);
            same(&fast, &every, &format!("resized to {size:?} after"));
            // The saved cursor, the last character and what the count of
            // rows gone pulls down show in what follows.
            fast.feed(b"\x1b8X\x1b[2bY\r\n");
            every.feed(b"\x1b8X\x1b[2bY\r\n");
            same(&fast, &every, &format!("written to after {size:?}"));
        }
    }
}

#[test]
fn a_flood_of_lines_is_kept_without_drawing_it() {
    let size = Size { cols: 40, rows: 5 };
    let (mut fast, mut every) = pair(size, 10_000, false);
    let mut out = Vec::new();
    for i in 0..2000 {
        out.extend(
            format!(
                "\x1b[3{}m{i:05}\x1b[m line {}\r\n",
                i % 8,
                "=".repeat(i % 50)
            )
            .as_bytes(),
        );
    }
    for chunk in out.chunks(4096) {
        fast.feed(chunk);
        every.feed(chunk);
    }
    same(&fast, &every, "after the flood");
    // Most of it never reached the parser.
    assert!(
        fast.parsed() * 4 < every.parsed(),
        "{} of {}",
        fast.parsed(),
        every.parsed()
    );
    for rows in [2, 50, 3, 200] {
        fast.resize(Size { cols: 40, rows });
        every.resize(Size { cols: 40, rows });
        same(&fast, &every, &format!("at {rows} rows"));
    }
}

#[test]
fn the_last_character_is_there_to_repeat() {
    // The run's last rows are blank: its last character is drawn for REP
    // all the same.
    let size = Size { cols: 10, rows: 3 };
    let (mut fast, mut every) = pair(size, 100, false);
    let mut out: Vec<u8> = (0..20)
        .flat_map(|i| format!("line {i}\r\n").into_bytes())
        .collect();
    out.extend(b"\r\n\r\n\r\n\r\n\x1b[3b");
    fast.feed(&out);
    every.feed(&out);
    same(&fast, &every, "after REP");
    assert!(fast.parsed() < every.parsed());
}

#[test]
fn a_resize_inside_a_sequence_leaves_it_whole() {
    // The count of rows owed is settled as the screen grows, while the
    // parser is inside the SGR sequence a read cut: the sequence must
    // still take effect when its rest comes.
    let stream: &[u8] = b"\r\n\x1b[1;31m0\r\nA0AAA\r\n\x1b[3;4;7m\r\nxxxxxxxxx\r\n";
    for cut in 19..28 {
        let (mut fast, mut every) = pair(Size { cols: 1, rows: 2 }, 1, false);
        for t in [&mut fast, &mut every] {
            t.feed(&stream[..cut]);
            t.resize(Size { cols: 1, rows: 4 });
            t.feed(&stream[cut..]);
        }
        same(&fast, &every, &format!("cut at {cut}"));
        assert!(fast.screen().italic() && fast.screen().inverse());
    }
}

#[test]
fn a_reset_starts_the_count_of_rows_gone_over() {
    // RIS gives vt100 a new screen that has counted no rows gone, so
    // growing pulls none down: nor does the history count any.
    let mut t: Term = Term::with_scrollback(Size { cols: 20, rows: 3 }, 100);
    t.draw_every_row();
    t.feed(
        &(0..10)
            .flat_map(|i| format!("line {i}\r\n").into_bytes())
            .collect::<Vec<_>>(),
    );
    t.feed(b"\x1bctop");
    t.resize(Size { cols: 20, rows: 6 });
    assert_eq!(t.rows_pulled(), 0);
    assert_eq!(t.screen().cursor_position(), (0, 3));
}
