//! A screen put to sleep and woken is the screen it was: over every
//! recording of the corpus (real Claude Code, Codex, Gemini CLI, aider,
//! vim, htop, shells), a screen slept and woken at points along the way
//! shows what one never slept shows there, and after the rest of the
//! recording too. What the rendering cannot carry keeps a screen awake.

use crate::common::recording;
use heimdall::protocol::Size;
use heimdall::vt::term::Term;

/// Everything a reader of the screen sees.
fn seen(t: &Term) -> (String, (u16, u16), bool, String) {
    let s = t.screen();
    (
        s.contents_formatted(),
        s.cursor_position(),
        s.alternate_screen(),
        s.input_mode_formatted(),
    )
}

#[test]
fn a_screen_woken_from_sleep_is_the_screen_it_was() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut casts: Vec<_> = std::fs::read_dir(&dir)
        .expect("the corpus")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "cast"))
        .collect();
    casts.sort();
    assert!(casts.len() > 20, "the corpus is missing");
    let (mut slept, mut refused) = (0, 0);
    for path in &casts {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let (size, chunks) = recording(path);
        // Slept every few chunks, at some 20 points per recording.
        let every = (chunks.len() / 20).max(1);
        let mut never = Term::new(size);
        let mut sleepy = Term::new(size);
        sleepy.allow_sleep();
        for (i, chunk) in chunks.iter().enumerate() {
            never.feed(chunk);
            sleepy.feed(chunk);
            if i % every != 0 {
                continue;
            }
            if sleepy.can_sleep() {
                slept += 1;
                sleepy = Term::wake(sleepy.sleep());
            } else {
                refused += 1;
            }
            assert_eq!(seen(&sleepy), seen(&never), "{name}: woken after chunk {i}");
        }
        assert_eq!(seen(&sleepy), seen(&never), "{name}: at the end");
    }
    println!("{slept} sleeps, {refused} refused");
    assert!(slept > refused, "{slept} sleeps, {refused} refused");
}

#[test]
fn what_the_rendering_cannot_carry_keeps_a_screen_awake() {
    let size = Size { cols: 40, rows: 10 };
    for (what, bytes) in [
        ("a scroll region", &b"\x1b[2;5r"[..]),
        ("origin mode", b"\x1b[?6h"),
        ("insert mode", b"\x1b[4h"),
        ("autowrap off", b"\x1b[?7l"),
        ("half a sequence", b"\x1b[3"),
        ("half a character", b"\xe4\xbd"),
    ] {
        let mut t = Term::new(size);
        t.allow_sleep();
        t.feed(b"hello");
        t.feed(bytes);
        assert!(!t.can_sleep(), "slept with {what}");
    }
    for (what, bytes) in [
        ("a region of the whole screen", &b"\x1b[1;10r"[..]),
        ("a region reset", b"\x1b[2;5r\x1b[r"),
        ("a mode set and reset", b"\x1b[?6h\x1b[4h\x1b[?6l\x1b[4l"),
        ("a reset", b"\x1b[2;5r\x1b[?7l\x1bc"),
        ("a long SGR", b"\x1b[38;2;255;255;255;48;2;0;0;0;1;3;4m"),
    ] {
        let mut t = Term::new(size);
        t.allow_sleep();
        t.feed(bytes);
        assert!(t.can_sleep(), "kept awake after {what}");
    }
    // A screen not allowed to sleep does not.
    assert!(!Term::new(size).can_sleep(), "slept unasked");
    // A region is forgotten on a resize, by the parser as by the check.
    let mut t = Term::new(size);
    t.allow_sleep();
    t.feed(b"\x1b[2;5r");
    t.resize(Size { cols: 40, rows: 12 });
    assert!(t.can_sleep(), "kept awake by a region a resize reset");
}

/// The title and the other news a screen's callbacks collected stay with
/// it through a sleep; redrawing it on waking is no news.
#[test]
fn a_woken_screen_keeps_its_title_and_makes_no_news() {
    use heimdall::vt::events::Recorder;
    let size = Size { cols: 40, rows: 10 };
    let mut t: Term<Recorder> = Term::with_callbacks(size, Recorder::default());
    t.allow_sleep();
    t.feed(b"\x1b]2;my title\x07\x1b[?2004h\x1b[?1000h\x1b[1mbold\x1b[0m");
    let _ = t.callbacks_mut().take();
    assert!(t.can_sleep(), "a plain screen stays awake");
    let mut t = Term::wake(t.sleep());
    assert_eq!(t.callbacks().title, "my title");
    assert!(t.callbacks_mut().take().is_empty(), "waking made news");
    assert!(t.screen().bracketed_paste());
}

/// The main screen behind an alternate one comes back when the program
/// leaves the alternate screen, though the screen slept meanwhile.
#[test]
fn the_main_screen_behind_an_alternate_one_survives_a_sleep() {
    let size = Size { cols: 40, rows: 10 };
    let (before, after) = (
        &b"$ vim notes\r\n\x1b[?1049h\x1b[H\x1b[2Jediting"[..],
        &b"\x1b[?1049l$ "[..],
    );
    let mut t = Term::new(size);
    t.allow_sleep();
    t.feed(before);
    assert!(t.can_sleep(), "awake in the alternate screen");
    let mut t = Term::wake(t.sleep());
    assert!(t.screen().alternate_screen());
    assert!(t.screen().contents().starts_with("editing"));
    t.feed(after);
    let mut never = Term::new(size);
    never.feed(before);
    never.feed(after);
    assert_eq!(seen(&t), seen(&never));
    assert!(t.screen().contents().starts_with("$ vim notes\n$"));
}
