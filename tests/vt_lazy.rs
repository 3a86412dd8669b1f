//! A supervisor's screen parses lazily (`vt::skim`): output is read as it
//! comes and parsed when the screen is looked at, and what scrolled off
//! unseen is left out but for the state it set. These tests hold it to a
//! screen that parses every read at once: on random output built of the
//! sequences that matter (text of every width, line ends, colours, modes,
//! the alternate screen, scroll regions, origin mode, cursor moves, saved
//! cursors, REP, queries, titles, strings, half sequences), read in random
//! pieces, looked at and resized and put to sleep at random points
//! (`heimdall::fuzzing::lazy_screen` compares, and is also a fuzz target);
//! over every recording of the corpus; and a flood must really be skipped.

use crate::common::recording;
use heimdall::fuzzing::lazy_screen;
use heimdall::protocol::Size;
use heimdall::vt::dozing::Dozing;
use heimdall::vt::events::Recorder;
use heimdall::vt::term::Term;
use proptest::prelude::*;

/// Pieces of output, each something a terminal reads as one thing (or
/// half of one).
static PIECES: &[&[u8]] = &[
    b"\r\n",
    b"\r\n",
    b"\r\n",
    b"\n",
    b"\r",
    b"\x0b",
    b"\x0c",
    b"\x08",
    b"\t",
    b"\x07",
    b"\x1b[0m",
    b"\x1b[m",
    b"\x1b[1;31m",
    b"\x1b[7m",
    b"\x1b[38;5;202m",
    b"\x1b[48;2;1;2;3m",
    b"\x1b[?1h",
    b"\x1b[?1l",
    b"\x1b[?25l",
    b"\x1b[?25h",
    b"\x1b[?2004h",
    b"\x1b[?1000h",
    b"\x1b[?1006h",
    b"\x1b[?1000l",
    b"\x1b[?6h",
    b"\x1b[?6l",
    b"\x1b[?7l",
    b"\x1b[?47h",
    b"\x1b[?47l",
    b"\x1b[?1049h",
    b"\x1b[?1049l",
    b"\x1b=",
    b"\x1b>",
    b"\x1b[4h",
    b"\x1b[2 q",
    b"\x1b[r",
    b"\x1b[2;3r",
    b"\x1b[1;99r",
    b"\x1b[0006;0r",
    b"\x1b[A",
    b"\x1b[2B",
    b"\x1b[C",
    b"\x1b[3D",
    b"\x1b[5G",
    b"\x1b[2;4H",
    b"\x1b[H",
    b"\x1bM",
    b"\x1bD",
    b"\x1b[L",
    b"\x1b[M",
    b"\x1b[S",
    b"\x1b[T",
    b"\x1b[2d",
    b"\x1b[E",
    b"\x1b[F",
    b"\x1b[K",
    b"\x1b[1K",
    b"\x1b[2J",
    b"\x1b[H\x1b[2J",
    b"\x1b[2J\x1b[3;2H",
    b"\x1b[?2J\x1b[f",
    b"\x1b[J",
    b"\x1b[2X",
    b"\x1b[P",
    b"\x1b[2@",
    b"\x1b[3b",
    b"\x1b7",
    b"\x1b8",
    b"\x1b[6n",
    b"\x1b[c",
    b"\x1b[5n",
    b"\x1b[>c",
    b"\x1b]0;title\x07",
    b"\x1b]2;other\x1b\\",
    b"\x1b]9;note\x07",
    b"\x1b]7501;?\x07",
    b"\x1bPq#abc\x1b\\",
    b"\x1b_apc\x1b\\",
    b"\x18",
    b"\x1b[",
    b"\x1b",
    b"\x1b[3",
    b"\x1b]0;half",
    b"\x1bc",
    b"\x1b[?6;25h",
    b"\x1b[1;\x0d31m",
    b"\x1b[\x07m",
    "é".as_bytes(),
    "你".as_bytes(),
    "a\u{301}".as_bytes(),
    "\u{1f600}".as_bytes(),
    "\u{200b}".as_bytes(),
    b"\xff",
    b"\xe4\xbd",
    b"\xc2\x85",
];

fn piece() -> impl Strategy<Value = Vec<u8>> {
    // Lines, mostly: a flood scrolls, and the rest breaks it up.
    prop_oneof![
        6 => "[a-z0-9 ]{1,14}".prop_map(String::into_bytes),
        4 => Just(b"\r\n".to_vec()),
        2 => proptest::sample::select(PIECES).prop_map(<[u8]>::to_vec),
    ]
}

/// A test case as `lazy_screen` reads it (its layout is documented there).
#[derive(Debug, Clone)]
enum Op {
    Read(Vec<u8>),
    Look,
    Resize(u8, u8),
    Sleep,
}

fn ops() -> impl Strategy<Value = (u8, u8, Vec<Op>)> {
    let op = prop_oneof![
        12 => proptest::collection::vec(piece(), 1..30).prop_map(|p| Op::Read(p.concat())),
        2 => Just(Op::Look),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(r, c)| Op::Resize(r, c)),
        1 => Just(Op::Sleep),
    ];
    (
        any::<u8>(),
        any::<u8>(),
        proptest::collection::vec(op, 1..40),
    )
}

fn encode(rows: u8, cols: u8, ops: &[Op]) -> Vec<u8> {
    let mut data = vec![rows, cols];
    for op in ops {
        match op {
            Op::Read(bytes) => {
                // One read is at most 255 bytes: longer output is more reads.
                for chunk in bytes.chunks(255) {
                    data.extend([0, chunk.len() as u8]);
                    data.extend_from_slice(chunk);
                }
            }
            Op::Look => data.push(1),
            Op::Resize(r, c) => data.extend([2, *r, *c]),
            Op::Sleep => data.push(3),
        }
    }
    data
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn a_lazy_screen_shows_and_answers_what_an_eager_one_does((rows, cols, ops) in ops()) {
        lazy_screen(&encode(rows, cols, &ops));
    }
}

/// Over every recording of the corpus (Claude Code, Codex, Gemini CLI,
/// aider, vim, htop, shells), a lazy screen reports the same news at the
/// same reads as an eager one, and shows the same screen at some 20
/// points along the way and at the end.
#[test]
fn over_the_corpus_a_lazy_screen_is_an_eager_one() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut casts: Vec<_> = std::fs::read_dir(&dir)
        .expect("the corpus")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "cast"))
        .collect();
    casts.sort();
    assert!(casts.len() > 20, "the corpus is missing");
    for path in &casts {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let (size, chunks) = recording(path);
        let every = (chunks.len() / 20).max(1);
        let lazy = Dozing::new(Term::with_callbacks(size, Recorder::default()));
        // One that turns to parsing at once and back every few KiB (see
        // `vt::budget`), as an agent's session does every MiB.
        let mut term = Term::with_callbacks(size, Recorder::default());
        term.skim_window(4096, 8192);
        let turning = Dozing::new(term);
        for (how, mut lazy) in [("lazy", lazy), ("turning", turning)] {
            let mut eager = Term::with_callbacks(size, Recorder::default());
            for (i, chunk) in chunks.iter().enumerate() {
                eager.feed(chunk);
                lazy.skim(chunk);
                assert_eq!(
                    lazy.callbacks_mut().take(),
                    eager.callbacks_mut().take(),
                    "{name}, {how}: news of chunk {i}"
                );
                if i % every == 0 {
                    let (e, l) = (eager.screen(), lazy.term().screen());
                    assert_eq!(
                        l.contents_formatted(),
                        e.contents_formatted(),
                        "{name}, {how}: {i}"
                    );
                    assert_eq!(
                        l.cursor_position(),
                        e.cursor_position(),
                        "{name}, {how}: {i}"
                    );
                }
            }
            let (e, l) = (eager.screen(), lazy.term().screen());
            assert_eq!(
                l.contents_formatted(),
                e.contents_formatted(),
                "{name}, {how}: end"
            );
            assert_eq!(
                l.input_mode_formatted(),
                e.input_mode_formatted(),
                "{name}, {how}"
            );
        }
    }
}

/// A flood of lines is read, not drawn: of 8 MiB the parser gets a few
/// screens' worth, and the screen shows the flood's last lines.
#[test]
fn a_flood_that_scrolls_off_unseen_is_not_drawn() {
    let size = Size { cols: 80, rows: 24 };
    let mut lazy = Dozing::new(Term::with_callbacks(size, Recorder::default()));
    let mut eager = Term::with_callbacks(size, Recorder::default());
    let mut total = 0;
    for i in 0..100_000 {
        let line = format!("\x1b[32m{i:>8}\x1b[0m {}\r\n", "x".repeat(i % 70));
        total += line.len();
        lazy.skim(line.as_bytes());
        eager.feed(line.as_bytes());
    }
    let parsed = lazy.term().parsed();
    assert_eq!(
        lazy.term().screen().contents_formatted(),
        eager.screen().contents_formatted()
    );
    assert!(lazy.term().screen().contents().contains("99999"));
    assert!(
        parsed < total as u64 / 20,
        "parsed {parsed} of {total} bytes"
    );
    assert_eq!(eager.parsed(), total as u64);
}
