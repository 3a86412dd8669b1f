use crate::protocol::Size;
use crate::vt::term::Term;

fn lines(n: usize) -> Vec<u8> {
    (1..=n)
        .map(|i| format!("line {i}\r\n"))
        .collect::<String>()
        .into_bytes()
}

#[test]
fn a_row_keeps_its_number_when_old_rows_are_dropped() {
    let mut t: Term = Term::with_scrollback(Size { cols: 20, rows: 4 }, 10);
    t.feed(&lines(8));
    assert_eq!(t.first_row(), 0);
    // "line 3" is the third row kept.
    assert_eq!(t.history_between(2, 3), ["line 3"]);
    t.feed(&lines(20));
    // History holds 10; the screen's rows above them are gone.
    assert_eq!(t.rows_kept(), 14);
    let first = t.first_row();
    assert!(first > 0);
    let all = t.history();
    assert_eq!(all.len(), 14);
    assert_eq!(all[13], "");
    assert_eq!(all[12], "line 20");
}

#[test]
fn a_shrinking_resize_counts_the_rows_it_drops() {
    let mut t: Term = Term::with_scrollback(Size { cols: 20, rows: 10 }, 2);
    t.feed(&lines(9));
    t.resize(Size { cols: 20, rows: 3 });
    // Seven rows go up into a history of two: five are dropped.
    assert_eq!(t.first_row(), 5);
    assert_eq!(t.history(), ["line 6", "line 7", "line 8", "line 9", ""]);
}

#[test]
fn reading_the_history_leaves_the_view_where_it_was() {
    let mut t: Term = Term::with_scrollback(Size { cols: 20, rows: 3 }, 50);
    t.feed(&lines(30));
    t.scroll_back(5);
    let wanted = t.shown().contents();
    let _ = t.history();
    assert_eq!(t.scrolled_back(), 5);
    assert_eq!(t.shown().contents(), wanted);
    assert_eq!(wanted, "line 24\nline 25\nline 26");
    // The live screen is the live screen all along.
    assert_eq!(t.screen().contents(), "line 29\nline 30");
}

#[test]
fn a_long_line_is_read_as_rows_that_wrap() {
    let mut t: Term = Term::with_scrollback(Size { cols: 5, rows: 3 }, 10);
    t.feed(b"abcdefgh\r\nxy\r\n");
    let rows = t.rows_between(0, 3);
    assert_eq!(rows[0].text, "abcde");
    assert!(rows[0].wrapped);
    assert_eq!(rows[1].text, "fgh");
    assert!(!rows[1].wrapped);
    assert_eq!(rows[2].text, "xy");
}

/// Lines, a long one wrapping, then a prompt without a newline.
const OUT: &[u8] = b"abcdefghijKLMNO\r\nline 2\r\nline 3\r\nline 4\r\nline 5\r\n$ ";

#[test]
fn resizing_leaves_the_screen_as_the_sessions_own_and_the_history_whole() {
    let small = Size { cols: 10, rows: 3 };
    let mut t: Term = Term::with_scrollback(small, 100);
    let mut bare: Term = Term::new(small);
    t.feed(OUT);
    bare.feed(OUT);
    for size in [
        Size { cols: 10, rows: 6 },
        Size { cols: 20, rows: 9 },
        Size { cols: 4, rows: 2 },
        Size { cols: 30, rows: 9 },
    ] {
        t.resize(size);
        bare.resize(size);
        assert_eq!(t.screen().contents(), bare.screen().contents());
        assert_eq!(
            t.screen().cursor_position(),
            bare.screen().cursor_position()
        );
        // The rows that scrolled off are still history, wrap and all,
        // read whole and joined, viewed or not.
        t.scroll_back(usize::MAX);
        let lines = t.logical_lines();
        assert_eq!(lines[0].text, "abcdefghijKLMNO");
        assert_eq!(lines[0].rows, 2);
        assert_eq!(lines[1].text, "line 2");
        t.scroll_back(0);
        // What the program writes next lands where it does on the
        // session's own screen.
        t.feed(b"ls\r\nout\r\n");
        bare.feed(b"ls\r\nout\r\n");
        assert_eq!(t.screen().contents(), bare.screen().contents());
    }
}

#[test]
fn erasing_saved_lines_empties_the_history_and_numbers_go_on() {
    let mut t: Term = Term::with_scrollback(Size { cols: 20, rows: 3 }, 100);
    t.feed(&lines(10));
    let before = t.first_row();
    // Rows scrolled off before ED 3 in the same read go (up to "a");
    // after it, they stay.
    t.feed(b"a\r\nb\r\nc\r\n\x1b[3Jd\r\ne\r\nf\r\n");
    assert_eq!(t.history(), ["b", "c", "d", "e", "f", ""]);
    assert!(t.first_row() > before);
    // On the alternate screen it erases nothing (there is no history).
    t.feed(b"\x1b[?1049h\x1b[3J\x1b[?1049l");
    assert_eq!(t.history(), ["b", "c", "d", "e", "f", ""]);
}

#[test]
fn what_scrolls_off_the_alternate_screen_is_no_history() {
    let mut t: Term = Term::with_scrollback(Size { cols: 20, rows: 3 }, 100);
    t.feed(b"before\r\n\r\n\r\n");
    t.feed(b"\x1b[?1049h");
    t.feed(&lines(10));
    // On the alternate screen: the history, then the screen.
    assert_eq!(t.history_len(), 1);
    assert_eq!(t.history(), ["before", "line 9", "line 10", ""]);
    t.feed(b"\x1b[?1049l");
    assert_eq!(t.history(), ["before", "", "", ""]);
}

#[test]
fn the_view_shows_history_rows_above_the_live_ones_in_their_colours() {
    let mut t: Term = Term::with_scrollback(Size { cols: 8, rows: 3 }, 100);
    t.feed(b"\x1b[31mred\x1b[m and more text\r\nb\r\nc\r\nd\r\ne");
    // History: "red and ", "more tex", "t", "b"; screen: c, d, e.
    t.scroll_back(2);
    assert_eq!(t.shown().contents(), "t\nb\nc");
    t.scroll_back(4);
    assert_eq!(t.shown().contents(), "red and \nmore tex\nt");
    let cell = t.shown().cell(0, 0).expect("a cell");
    assert_eq!(cell.fgcolor(), vt100::Color::Idx(1));
    // New output: the view stays on its rows.
    t.feed(b"\r\nf");
    assert_eq!(t.scrolled_back(), 5);
    assert_eq!(t.shown().contents(), "red and \nmore tex\nt");
}

/// vt100 keeps no rows of its own, yet growing it pulls as many rows down
/// as have left the top, blank; shrinking pushes them off again. Those
/// are no history: a shell resized taller and back, or a full-screen
/// program resized to and fro above it, adds no blank lines.
#[test]
fn rows_a_taller_screen_pulled_down_blank_are_no_history_when_they_leave() {
    let texts =
        |t: &mut Term| -> Vec<String> { t.logical_lines().into_iter().map(|l| l.text).collect() };
    let size = |rows| Size { cols: 20, rows };
    let want: Vec<String> = (1..=30).map(|i| format!("line {i}")).collect();
    // A shell at the bottom of its screen.
    let mut t: Term = Term::with_scrollback(size(10), 100);
    t.feed(&lines(30));
    for rows in [20, 10, 25, 5, 12, 10] {
        t.resize(size(rows));
    }
    // The history is whole; the screen is the session's own, blank rows
    // pulled down on its top and all.
    let whole = |t: &mut Term, want: &[String]| {
        let hist = t.history_len();
        assert_eq!(t.history_between(0, hist), want[..hist]);
        let shown: Vec<String> = texts(t).into_iter().filter(|l| !l.is_empty()).collect();
        assert_eq!(shown, want);
    };
    whole(&mut t, &want);
    assert_eq!(t.history_len(), 26);
    // What the program writes on a row pulled down is history when it
    // leaves: it is no longer blank.
    t.resize(size(14));
    t.feed(b"\x1b[Hover\x1b[14;1H");
    t.resize(size(10));
    assert_eq!(t.history_len(), 27);
    assert_eq!(t.history_between(26, 27), ["over"]);
    // A full-screen program resized to and fro.
    let mut t: Term = Term::with_scrollback(size(10), 100);
    t.feed(&lines(30));
    t.feed(b"\x1b[?1049h\x1b[Hdrawn");
    for rows in [15, 31, 39, 19, 35, 39, 10] {
        t.resize(size(rows));
    }
    t.feed(b"\x1b[?1049l");
    whole(&mut t, &want);
}

/// vt100 cuts a row at a narrower width; a terminal reflows it. A line
/// still on the screen when it narrows goes into the history whole, as
/// the program wrote it, when it scrolls off, or is cleared, later.
#[test]
fn a_line_on_the_screen_when_it_narrows_is_kept_whole() {
    let long = "0123456789abcdefghijklmnopqrstuvwxyz";
    for then in [&b"\x1b[H\x1b[2J"[..], &lines(10)[..]] {
        let mut t: Term = Term::with_scrollback(Size { cols: 40, rows: 5 }, 100);
        t.feed(format!("{long}\r\nshort\r\n").as_bytes());
        t.resize(Size { cols: 12, rows: 5 });
        // Narrowed again, then wider: still the widest form.
        t.resize(Size { cols: 10, rows: 5 });
        t.resize(Size { cols: 20, rows: 5 });
        assert_eq!(t.screen().contents().lines().next(), Some("0123456789"));
        t.feed(then);
        let history = t.history();
        assert_eq!(history[0], long, "{history:?}");
        assert_eq!(history[1], "short");
    }
}

/// Lines on the screen when it narrows are read whole while they are
/// still there (`hm logs` of a shell whose prompt came back narrower),
/// below rows a taller screen pulled down since; the prompt the shell
/// drew after the resize is read as it is.
#[test]
fn a_line_still_on_the_screen_after_it_narrowed_is_read_whole() {
    let long = "0123456789abcdefghijklmnopqrst";
    let mut t: Term = Term::with_scrollback(Size { cols: 40, rows: 6 }, 100);
    t.feed(format!("{long}\r\nsome {long}\r\nshort\r\n").as_bytes());
    t.resize(Size { cols: 12, rows: 4 });
    t.feed(b"$ ");
    let text =
        |t: &mut Term| -> Vec<String> { t.logical_lines().into_iter().map(|l| l.text).collect() };
    assert_eq!(
        text(&mut t),
        [
            long.to_owned(),
            format!("some {long}"),
            "short".into(),
            "$".into()
        ]
    );
    // Written over since: as written.
    t.feed(b"\x1b[H0123456789AB");
    let now = text(&mut t);
    assert_eq!(now[0], "0123456789AB", "{now:?}");
    assert_eq!(now[1], format!("some {long}"));
    // A row gone before the narrowing comes back down blank as the screen
    // grows: the rows below it are still matched with their whole form.
    let mut t: Term = Term::with_scrollback(Size { cols: 40, rows: 3 }, 100);
    t.feed(format!("a\r\nb\r\n{long}\r\n").as_bytes());
    t.resize(Size { cols: 12, rows: 3 });
    t.resize(Size { cols: 12, rows: 5 });
    assert_eq!(t.screen().contents().lines().nth(2), Some("0123456789ab"));
    let now = text(&mut t);
    assert!(now.contains(&long.to_owned()), "{now:?}");
    assert!(!now.iter().any(|l| l == "0123456789ab"), "{now:?}");
}

/// A row the program wrote again after the screen narrowed is kept as it
/// is now, not as it was: a shell redraws its line at the new width,
/// wrapping, and that line must not come out twice.
#[test]
fn a_row_written_again_after_narrowing_is_kept_as_written() {
    let line = "$ make test TARGET=all";
    let mut t: Term = Term::with_scrollback(Size { cols: 40, rows: 4 }, 100);
    t.feed(format!("before\r\n{line}").as_bytes());
    t.resize(Size { cols: 10, rows: 4 });
    // The redraw: back to the line's start, the line again, wrapping.
    t.feed(format!("\r\x1b[J{line}\r\n").as_bytes());
    t.feed(&lines(6));
    let logical = t.logical_lines();
    assert_eq!(logical[0].text, "before", "{logical:?}");
    assert_eq!(logical[1].text, line);
    assert_eq!(logical[2].text, "line 1");
    // Cut at the edge by the narrowing, then overwritten to the edge:
    // kept as written. (Overwritten with the very text the cut left, it
    // could not be told from the cut row, and is kept whole.)
    let mut t: Term = Term::with_scrollback(Size { cols: 40, rows: 4 }, 100);
    t.feed(b"abcdefghijklmnop\r\n");
    t.resize(Size { cols: 10, rows: 4 });
    t.feed(b"\x1b[HabcdeFGHIJ\x1b[4;1H");
    t.feed(&lines(6));
    assert_eq!(t.history()[0], "abcdeFGHIJ");
}

/// A line the wider screen wrapped into several rows is whole too, and
/// so is one cut inside a wide character.
#[test]
fn a_wrapped_line_and_a_wide_character_survive_narrowing() {
    let long: String = (0..300)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let wide = "abc漢字かな交じり文です";
    let mut t: Term = Term::with_scrollback(
        Size {
            cols: 120,
            rows: 10,
        },
        1000,
    );
    t.feed(format!("{long}\r\n{wide}\r\n").as_bytes());
    // `abc漢` and half of `字`: the cut blanks the half.
    t.resize(Size { cols: 6, rows: 10 });
    t.feed(&lines(12));
    let logical = t.logical_lines();
    assert_eq!(logical[0].text, long);
    assert_eq!(logical[0].rows, 3);
    assert_eq!(logical[1].text, wide);
    assert_eq!(logical[2].text, "line 1");
}

/// Scrolled back, a row kept whole from before the screen narrowed is cut
/// at the edge and says so with the cut mark in its last column, as a pane
/// marks a row that goes on past it; one that fits is drawn as it is.
#[test]
fn a_history_row_wider_than_the_screen_is_marked_where_the_view_cuts_it() {
    let long = "0123456789abcdefghijklmnopqrstuvwxyz";
    let mut t: Term = Term::with_scrollback(Size { cols: 40, rows: 4 }, 100);
    t.feed(format!("{long}\r\nshort\r\n").as_bytes());
    t.resize(Size { cols: 10, rows: 4 });
    t.feed(&lines(6));
    assert_eq!(t.history()[0], long);
    t.scroll_back(t.history_len());
    let rows: Vec<String> = t.shown().rows(0, 10).collect();
    assert_eq!(rows[0], format!("012345678{}", super::CUT_MARK), "{rows:?}");
    assert_eq!(rows[1], "short");
    // The mark is the view's only: a copy has the whole line.
    assert_eq!(t.history()[0], long);
}

/// The line `hm logs` should print for the n-th line of the tester's
/// script: `row NN `, y's, ` ENDNN`, 153 characters.
fn slow_line(n: usize) -> String {
    format!("row {n:02} {} END{n:02}", "y".repeat(140))
}

/// Lines on the screen as it changes size every which way, a line or
/// two printed between (a session attached in a window resized by hand):
/// the history is every line whole, whatever the rows it took.
#[test]
fn lines_on_the_screen_through_every_kind_of_resize_are_read_whole() {
    let size = |cols, rows| Size { cols, rows };
    let steps: [(Size, &[usize]); 15] = [
        (size(60, 19), &[1, 2, 3, 4, 5, 6]),
        (size(200, 49), &[7, 8]),
        (size(80, 29), &[9]),
        (size(150, 39), &[10, 11]),
        (size(60, 18), &[12]),
        (size(200, 49), &[13, 14]),
        (size(100, 19), &[15]),
        (size(45, 11), &[16]),
        (size(130, 44), &[17, 18]),
        (size(60, 19), &[19]),
        (size(60, 40), &[20]),
        (size(200, 12), &[21]),
        (size(30, 5), &[22]),
        (size(130, 44), &[23, 24]),
        (size(130, 44), &[25]),
    ];
    let mut t: Term = Term::with_scrollback(size(60, 19), 1000);
    let mut want = Vec::new();
    for (size, lines) in steps {
        t.resize(size);
        for &n in lines {
            t.feed(format!("{}\r\n", slow_line(n)).as_bytes());
            want.push(slow_line(n));
        }
        let got: Vec<String> = t.logical_lines().into_iter().map(|l| l.text).collect();
        assert_eq!(got, want, "after {size:?}");
    }
}

/// Prints lines `lines` of [`slow_line`] and notes them in `want`.
fn print(t: &mut Term, want: &mut Vec<String>, lines: std::ops::RangeInclusive<usize>) {
    for n in lines {
        t.feed(format!("{}\r\n", slow_line(n)).as_bytes());
        want.push(slow_line(n));
    }
}

fn texts(t: &mut Term) -> Vec<String> {
    t.logical_lines().into_iter().map(|l| l.text).collect()
}

/// Eight lines of three rows each at 60x19 (two of them scrolled off),
/// then a window of 200x49, then more lines. The rows vt100 pulls down
/// blank on top of the taller screen are no lines; widening, which pads
/// every row and unwraps it, leaves each line whole.
#[test]
fn lines_on_the_screen_when_it_grows_wider_and_taller_are_read_whole() {
    let mut t: Term = Term::with_scrollback(Size { cols: 60, rows: 19 }, 1000);
    let mut want = Vec::new();
    print(&mut t, &mut want, 1..=8);
    t.resize(Size {
        cols: 200,
        rows: 49,
    });
    assert_eq!(t.rows_pulled(), 6);
    assert_eq!(texts(&mut t), want);
    print(&mut t, &mut want, 9..=25);
    assert_eq!(texts(&mut t), want);
}

/// The first row of a line scrolled off, the rest on the screen, as the
/// screen grows: blank rows come down between them, and the line goes on
/// below them. A clear then keeps none of those rows as history.
#[test]
fn a_line_whose_first_row_scrolled_off_is_whole_when_the_screen_grows_taller() {
    let mut t: Term = Term::with_scrollback(Size { cols: 60, rows: 19 }, 1000);
    t.feed(b"x\r\n");
    let mut want = vec!["x".to_owned()];
    print(&mut t, &mut want, 1..=6);
    t.feed(b"z\r\n");
    want.push("z".into());
    assert_eq!(t.history_between(0, 2), ["x", &slow_line(1)[..60]]);
    assert_eq!(t.history_len(), 2);
    t.resize(Size { cols: 60, rows: 30 });
    assert_eq!(t.rows_pulled(), 2);
    assert_eq!(texts(&mut t), want);
    t.feed(b"\x1b[H\x1b[2Jafter\r\n");
    want.push("after".into());
    assert_eq!(texts(&mut t), want);
}

/// Resized while a program shows the alternate screen: the main screen's
/// lines under it are whole when it leaves.
#[test]
fn lines_under_the_alternate_screen_are_whole_after_it_is_resized() {
    let mut t: Term = Term::with_scrollback(Size { cols: 60, rows: 19 }, 1000);
    let mut want = Vec::new();
    print(&mut t, &mut want, 1..=8);
    t.feed(b"\x1b[?1049h\x1b[Hdrawn");
    for (cols, rows) in [(200, 49), (45, 12), (130, 44)] {
        t.resize(Size { cols, rows });
    }
    t.feed(b"\x1b[?1049l");
    print(&mut t, &mut want, 9..=9);
    assert_eq!(texts(&mut t), want);
}
