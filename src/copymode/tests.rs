use super::*;

/// A history as a list of lines: `first` is the number of the first.
struct Lines {
    first: RowNo,
    lines: Vec<Line>,
    rows: u16,
    cols: u16,
}

impl Lines {
    fn new(text: &[&str], rows: u16) -> Lines {
        Lines {
            first: 0,
            lines: text
                .iter()
                .map(|t| Line {
                    text: (*t).to_owned(),
                    wrapped: false,
                })
                .collect(),
            rows,
            cols: 20,
        }
    }

    /// `seq 1 n` on a screen of `rows`, the prompt on the last row.
    fn seq(n: usize, rows: u16) -> Lines {
        let text: Vec<String> = (1..=n).map(|i| i.to_string()).chain(["$".into()]).collect();
        let refs: Vec<&str> = text.iter().map(String::as_str).collect();
        Lines::new(&refs, rows)
    }

    /// More output: `n` lines more, the oldest dropped beyond `keep`.
    fn more(&mut self, text: &str, n: usize, keep: usize) {
        for i in 0..n {
            self.lines.push(Line {
                text: format!("{text}{i}"),
                wrapped: false,
            });
        }
        while self.lines.len() > keep {
            self.lines.remove(0);
            self.first += 1;
        }
    }
}

impl History for Lines {
    fn extent(&self) -> Extent {
        Extent {
            first: self.first,
            rows_kept: self.lines.len(),
            rows: self.rows,
            cols: self.cols,
        }
    }

    fn lines(&mut self, from: RowNo, to: RowNo) -> Vec<Line> {
        let i = |n: RowNo| (n.saturating_sub(self.first) as usize).min(self.lines.len());
        self.lines[i(from)..i(to)].to_vec()
    }
}

fn keys(m: &mut CopyMode, h: &mut Lines, keys: &str) -> Outcome {
    let mut last = Outcome::Stay;
    for c in keys.chars() {
        let k = match c {
            '\r' => Key::Enter,
            '\x1b' => Key::Esc,
            c => Key::Char(c),
        };
        last = m.key(h, k);
    }
    last
}

/// The text under the cursor's row in the view.
fn cursor_text(m: &CopyMode, h: &mut Lines) -> String {
    let c = m.cursor.expect("a cursor");
    h.lines(c.row, c.row + 1)[0].text.clone()
}

#[test]
fn scrolling_shows_old_rows_and_back_at_the_bottom_it_ends() {
    let mut h = Lines::seq(200, 10);
    let ext = h.extent();
    let mut m = CopyMode::new(ext, None, true);
    assert!(!m.takes_keys());
    assert_eq!(m.back(ext), 0);
    assert_eq!(m.scroll(ext, -5), Outcome::Stay);
    assert_eq!(m.back(ext), 5);
    assert_eq!(m.marker(ext), "[+5/191]");
    // Up to the top, and no further: row 1 is the view's first.
    assert_eq!(m.scroll(ext, -1000), Outcome::Stay);
    assert_eq!(m.back(ext), 191);
    assert_eq!(m.top, 0);
    assert_eq!(h.lines(m.top, m.top + 1)[0].text, "1");
    // Down again to the live screen: over.
    assert_eq!(m.scroll(ext, 1000), Outcome::Leave);
}

/// A page up and a page down on a pane whose program prints on end the
/// view: back where it was entered is back at the live screen, though
/// that has moved on since (it stayed scrolled a row or two back, and
/// each more line pushed it further).
#[test]
fn paging_down_to_where_it_was_entered_ends_it_while_output_goes_on() {
    let mut h = Lines::seq(50, 10);
    let mut m = CopyMode::new(h.extent(), None, true);
    assert_eq!(m.scroll(h.extent(), -9), Outcome::Stay);
    h.more("line", 2, 1000);
    assert_eq!(m.back(h.extent()), 11);
    assert_eq!(m.scroll(h.extent(), 9), Outcome::Leave);
    // Far up, a step down is still scrolled back.
    let mut m = CopyMode::new(h.extent(), None, true);
    m.scroll(h.extent(), -30);
    h.more("line", 2, 1000);
    assert_eq!(m.scroll(h.extent(), 9), Outcome::Stay);
}

#[test]
fn new_output_does_not_move_the_view_off_what_it_shows() {
    let mut h = Lines::seq(50, 10);
    let mut m = CopyMode::new(h.extent(), None, true);
    m.scroll(h.extent(), -20);
    let shown = |m: &CopyMode, h: &mut Lines| h.lines(m.top, m.top + 1)[0].text.clone();
    let before = shown(&m, &mut h);
    // More output, the history full: old rows go, the view stays.
    h.more("new", 30, 60);
    let ext = h.extent();
    assert_eq!(m.clamp(ext), Outcome::Stay);
    assert_eq!(shown(&m, &mut h), before);
    assert_eq!(m.back(ext), 50);
    // So much that the rows shown are dropped: the view is on the oldest.
    h.more("more", 100, 60);
    let ext = h.extent();
    m.clamp(ext);
    assert_eq!(m.top, ext.first);
}

#[test]
fn a_cursor_moves_and_the_view_follows_it() {
    let mut h = Lines::seq(100, 10);
    let ext = h.extent();
    // On the live screen, at the prompt.
    let mut m = CopyMode::new(ext, Some((9, 1)), false);
    assert_eq!(m.cursor_cell(ext), Some((9, 1)));
    assert_eq!(cursor_text(&m, &mut h), "$");
    keys(&mut m, &mut h, "kkk");
    assert_eq!(cursor_text(&m, &mut h), "98");
    assert_eq!(m.back(ext), 0, "still in view");
    keys(&mut m, &mut h, "kkkkkkkk");
    assert_eq!(cursor_text(&m, &mut h), "90");
    assert_eq!(m.back(ext), 2);
    assert_eq!(m.cursor_cell(ext), Some((0, 1)), "on the view's top row");
    keys(&mut m, &mut h, "g");
    assert_eq!(cursor_text(&m, &mut h), "1");
    assert_eq!(m.marker(ext), "[+91/91]");
    keys(&mut m, &mut h, "G");
    assert_eq!(cursor_text(&m, &mut h), "$");
    assert_eq!(m.back(ext), 0);
    // A page up moves view and cursor together.
    m.key(&mut h, Key::PageUp);
    assert_eq!(m.back(ext), 10);
    assert_eq!(cursor_text(&m, &mut h), "91");
    // Nothing moves past the ends.
    keys(&mut m, &mut h, "g");
    keys(&mut m, &mut h, "kkkh");
    assert_eq!(m.cursor, Some(Pos { row: 0, col: 0 }));
}

#[test]
fn a_mode_that_takes_keys_does_not_end_at_the_bottom() {
    let mut h = Lines::seq(100, 10);
    let ext = h.extent();
    // Entered by scrolling in focus: it takes the keys, and scrolling
    // back down ends it, until the cursor is used.
    let mut m = CopyMode::new(ext, Some((9, 0)), true);
    m.scroll(ext, -10);
    assert_eq!(m.scroll(ext, 10), Outcome::Leave);
    let mut m = CopyMode::new(ext, Some((9, 0)), true);
    m.scroll(ext, -10);
    keys(&mut m, &mut h, "k");
    assert_eq!(m.scroll(ext, 100), Outcome::Stay);
    // A scrolled view given a cursor (`[`): on its bottom row.
    let mut m = CopyMode::new(ext, None, true);
    m.scroll(ext, -30);
    m.take_keys(ext);
    assert!(m.takes_keys());
    assert_eq!(m.cursor_cell(ext), Some((9, 0)));
    assert_eq!(m.scroll(ext, 100), Outcome::Stay);
}

#[test]
fn search_finds_forward_backward_and_round_the_ends() {
    let mut h = Lines::new(
        &[
            "alpha one",
            "beta",
            "Gamma two",
            "alpha three",
            "delta",
            "$",
        ],
        3,
    );
    let ext = h.extent();
    let mut m = CopyMode::new(ext, Some((2, 0)), false);
    // `?` searches up from the cursor (on "$").
    keys(&mut m, &mut h, "?alpha\r");
    assert_eq!(cursor_text(&m, &mut h), "alpha three");
    assert_eq!(m.status(), None);
    keys(&mut m, &mut h, "n");
    assert_eq!(cursor_text(&m, &mut h), "alpha one");
    // On round the top, and says so.
    keys(&mut m, &mut h, "n");
    assert_eq!(cursor_text(&m, &mut h), "alpha three");
    assert!(
        m.status().is_some_and(|s| s.contains("top")),
        "{:?}",
        m.status()
    );
    // `N` goes the other way.
    keys(&mut m, &mut h, "N");
    assert_eq!(cursor_text(&m, &mut h), "alpha one");
    assert_eq!(m.back(ext), 3, "the match is in view");
    // `/` searches down; lower case matches either case, capitals not.
    keys(&mut m, &mut h, "/gamma\r");
    assert_eq!(cursor_text(&m, &mut h), "Gamma two");
    keys(&mut m, &mut h, "/gAmma\r");
    assert_eq!(m.status().as_deref(), Some("not found: gAmma"));
    // The match's column.
    keys(&mut m, &mut h, "/two\r");
    assert_eq!(m.cursor.map(|c| c.col), Some(6));
}

#[test]
fn the_search_prompt_is_edited_and_can_be_cancelled() {
    let mut h = Lines::new(&["abc", "xyz", "$"], 3);
    let mut m = CopyMode::new(h.extent(), Some((2, 0)), false);
    keys(&mut m, &mut h, "?xyq");
    assert!(m.prompting());
    assert_eq!(m.status().as_deref(), Some("?xyq"));
    m.key(&mut h, Key::Backspace);
    assert_eq!(m.status().as_deref(), Some("?xy"));
    // Esc cancels the search, not copy mode; `q` was text, not quit.
    assert_eq!(m.key(&mut h, Key::Esc), Outcome::Stay);
    assert!(!m.prompting());
    assert_eq!(cursor_text(&m, &mut h), "$");
    // Backspace on an empty prompt closes it; `n` with no search says so.
    keys(&mut m, &mut h, "/");
    m.key(&mut h, Key::Backspace);
    assert!(!m.prompting());
    keys(&mut m, &mut h, "n");
    assert!(m.status().is_some_and(|s| s.contains("no search")));
    // Any other key clears the note.
    keys(&mut m, &mut h, "h");
    assert_eq!(m.status(), None);
}

#[test]
fn a_selection_is_copied_as_text() {
    let mut h = Lines::new(&["first line   ", "second", "third one", "$"], 4);
    let ext = h.extent();
    let mut m = CopyMode::new(ext, Some((0, 6)), false);
    // From "line" on the first row to "thi" on the third.
    keys(&mut m, &mut h, "v");
    assert_eq!(m.selected_in_row(ext, 0), Some((6, 6)));
    keys(&mut m, &mut h, "jj0ll");
    assert_eq!(m.selected_in_row(ext, 0), Some((6, 19)));
    assert_eq!(m.selected_in_row(ext, 1), Some((0, 19)));
    assert_eq!(m.selected_in_row(ext, 2), Some((0, 2)));
    assert_eq!(m.selected_in_row(ext, 3), None);
    assert_eq!(
        keys(&mut m, &mut h, "y"),
        Outcome::Copied {
            text: "line\nsecond\nthi".into(),
            lines: 3
        }
    );
    // Selected backwards, whole lines (V), copied with Enter.
    let mut m = CopyMode::new(ext, Some((2, 3)), false);
    keys(&mut m, &mut h, "Vk");
    assert_eq!(m.selected_in_row(ext, 1), Some((0, 19)));
    assert_eq!(
        keys(&mut m, &mut h, "\r"),
        Outcome::Copied {
            text: "second\nthird one".into(),
            lines: 2
        }
    );
    // Nothing selected: the cursor's line. Esc first drops a selection.
    let mut m = CopyMode::new(ext, Some((0, 3)), false);
    keys(&mut m, &mut h, "v\x1b");
    assert_eq!(m.selected_in_row(ext, 0), None);
    assert_eq!(
        keys(&mut m, &mut h, "y"),
        Outcome::Copied {
            text: "first line".into(),
            lines: 1
        }
    );
    assert_eq!(keys(&mut m, &mut h, "\x1b"), Outcome::Leave);
    assert_eq!(keys(&mut m, &mut h, "q"), Outcome::Leave);
}

#[test]
fn rows_that_wrap_are_copied_as_one_line() {
    let mut h = Lines::new(&["abcde", "fg", "$"], 3);
    h.lines[0].wrapped = true;
    h.cols = 5;
    let mut m = CopyMode::new(h.extent(), Some((0, 0)), false);
    keys(&mut m, &mut h, "vj$");
    assert_eq!(
        keys(&mut m, &mut h, "y"),
        Outcome::Copied {
            text: "abcdefg".into(),
            lines: 1
        }
    );
}

/// A 300-character line at 40 columns: eight rows, each but the last
/// wrapping, between two short lines.
fn wrapped_line() -> (Lines, String) {
    let long: String = (0..300)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let mut rows: Vec<Line> = vec![Line {
        text: "before".into(),
        wrapped: false,
    }];
    let chunks: Vec<String> = long
        .as_bytes()
        .chunks(40)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect();
    let n = chunks.len();
    for (i, c) in chunks.into_iter().enumerate() {
        rows.push(Line {
            text: c,
            wrapped: i + 1 < n,
        });
    }
    rows.push(Line {
        text: "after".into(),
        wrapped: false,
    });
    let h = Lines {
        first: 0,
        lines: rows,
        rows: 4,
        cols: 40,
    };
    (h, long)
}

#[test]
fn a_wrapped_line_is_selected_copied_and_searched_whole() {
    let (mut h, long) = wrapped_line();
    let ext = h.extent();
    // The cursor on the line's fourth row: `y` copies all of it.
    let mut m = CopyMode::new(ext, Some((0, 0)), false);
    m.cursor = Some(Pos { row: 4, col: 7 });
    assert_eq!(
        m.copy(&mut h),
        Outcome::Copied {
            text: long.clone(),
            lines: 1
        }
    );
    // `V` on its third row selects all eight, and copies the one line.
    m.cursor = Some(Pos { row: 3, col: 0 });
    keys(&mut m, &mut h, "V");
    let (start, end) = m.selection().expect("a selection");
    assert_eq!((start.row, end.row), (1, 8));
    assert_eq!(
        keys(&mut m, &mut h, "y"),
        Outcome::Copied {
            text: long.clone(),
            lines: 1
        }
    );
    // `V` and a move down takes in the line after, whole.
    let mut m = CopyMode::new(ext, Some((0, 0)), false);
    m.cursor = Some(Pos { row: 8, col: 0 });
    keys(&mut m, &mut h, "Vj");
    assert_eq!(
        keys(&mut m, &mut h, "y"),
        Outcome::Copied {
            text: format!("{long}\nafter"),
            lines: 2
        }
    );
    // "mnopq" is at 12 of the line, then at 38, where it goes on past
    // the row's end (40 wide) into the next row: found there too.
    let mut m = CopyMode::new(ext, Some((0, 0)), false);
    m.cursor = Some(Pos { row: 0, col: 0 });
    keys(&mut m, &mut h, "/mnopq\r");
    assert_eq!(m.cursor, Some(Pos { row: 1, col: 12 }));
    let across = &long[38..43];
    keys(&mut m, &mut h, &format!("/{across}\r"));
    assert_eq!(m.cursor, Some(Pos { row: 1, col: 38 }), "{across}");
    assert_eq!(m.status(), None);
}

#[test]
fn word_and_line_moves() {
    let mut h = Lines::new(&["  foo.bar baz", "", "qux", "$"], 4);
    let mut m = CopyMode::new(h.extent(), Some((0, 0)), false);
    let col = |m: &CopyMode| m.cursor.map(|c| (c.row, c.col));
    keys(&mut m, &mut h, "w");
    assert_eq!(col(&m), Some((0, 2)));
    keys(&mut m, &mut h, "w");
    assert_eq!(col(&m), Some((0, 5)), "punctuation is a word of its own");
    keys(&mut m, &mut h, "ww");
    assert_eq!(col(&m), Some((0, 10)));
    keys(&mut m, &mut h, "w");
    assert_eq!(col(&m), Some((2, 0)), "on across the blank row");
    keys(&mut m, &mut h, "b");
    assert_eq!(col(&m), Some((0, 10)));
    keys(&mut m, &mut h, "$");
    assert_eq!(col(&m), Some((0, 12)));
    keys(&mut m, &mut h, "^");
    assert_eq!(col(&m), Some((0, 2)));
    keys(&mut m, &mut h, "0");
    assert_eq!(col(&m), Some((0, 0)));
    // `e`: the end of the next word, of this one when inside it.
    keys(&mut m, &mut h, "e");
    assert_eq!(col(&m), Some((0, 4)));
    keys(&mut m, &mut h, "e");
    assert_eq!(col(&m), Some((0, 5)), "punctuation ends a word of its own");
    keys(&mut m, &mut h, "hh");
    keys(&mut m, &mut h, "e");
    assert_eq!(col(&m), Some((0, 4)), "from inside a word, its end");
    keys(&mut m, &mut h, "eee");
    assert_eq!(col(&m), Some((0, 12)), "a word ending its row");
    keys(&mut m, &mut h, "e");
    assert_eq!(col(&m), Some((2, 2)), "on across the blank row");
}

#[test]
fn unbound_keys_do_nothing_and_nothing_panics() {
    let mut h = Lines::new(&[], 1);
    h.cols = 1;
    let ext = h.extent();
    let mut m = CopyMode::new(ext, Some((0, 0)), false);
    for k in [
        Key::Char('z'),
        Key::Ctrl('x'),
        Key::Up,
        Key::Down,
        Key::Left,
        Key::Right,
        Key::PageUp,
        Key::PageDown,
        Key::Home,
        Key::End,
        Key::Char('w'),
        Key::Char('b'),
        Key::Char('e'),
        Key::Char('n'),
        Key::Char('v'),
        Key::Char('M'),
        Key::Char('L'),
    ] {
        assert_eq!(m.key(&mut h, k), Outcome::Stay, "{k:?}");
    }
    keys(&mut m, &mut h, "/x\r");
    assert!(m.status().is_some());
    assert!(matches!(keys(&mut m, &mut h, "y"), Outcome::Copied { .. }));
    // Scrolling an empty history.
    let mut m = CopyMode::new(ext, None, true);
    assert_eq!(m.scroll(ext, -3), Outcome::Leave);
}

#[test]
fn osc52_is_base64_of_the_text() {
    assert_eq!(osc52("hi\n"), b"\x1b]52;c;aGkK\x07");
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    /// What can happen to copy mode: a key, a scroll, or more output.
    #[derive(Debug, Clone)]
    enum Op {
        Key(Key),
        Scroll(i64),
        Output(usize),
    }

    fn key() -> impl Strategy<Value = Key> {
        prop_oneof![
            proptest::char::range(' ', '~').prop_map(Key::Char),
            proptest::char::range('a', 'z').prop_map(Key::Ctrl),
            Just(Key::Up),
            Just(Key::Down),
            Just(Key::Left),
            Just(Key::Right),
            Just(Key::PageUp),
            Just(Key::PageDown),
            Just(Key::Home),
            Just(Key::End),
            Just(Key::Enter),
            Just(Key::Esc),
            Just(Key::Backspace),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => key().prop_map(Op::Key),
            1 => (-50i64..50).prop_map(Op::Scroll),
            1 => (0usize..30).prop_map(Op::Output),
        ]
    }

    proptest! {
        /// Whatever is typed, scrolled or printed: no panic, the view
        /// within the history, the cursor on a kept row and in view, and
        /// a copy no bigger than the cap.
        #[test]
        fn the_view_and_the_cursor_stay_on_kept_rows(
            text in prop::collection::vec("[ a-z0-9/]{0,30}", 0..60),
            rows in 1u16..12,
            cols in 1u16..40,
            keep in 1usize..80,
            cursor in any::<bool>(),
            ops in prop::collection::vec(op(), 0..80),
        ) {
            let refs: Vec<&str> = text.iter().map(String::as_str).collect();
            let mut h = Lines::new(&refs, rows);
            h.cols = cols;
            let ext = h.extent();
            let mut m = CopyMode::new(ext, cursor.then_some((rows - 1, 0)), !cursor);
            for op in ops {
                let outcome = match op {
                    Op::Key(k) => m.key(&mut h, k),
                    Op::Scroll(by) => m.scroll(h.extent(), by),
                    Op::Output(n) => {
                        h.more("x", n, keep.max(usize::from(rows)));
                        m.clamp(h.extent())
                    }
                };
                if let Outcome::Copied { text, .. } = &outcome {
                    prop_assert!(text.len() <= MAX_COPY);
                }
                if outcome != Outcome::Stay {
                    break;
                }
                let ext = h.extent();
                prop_assert!(m.back(ext) <= ext.history());
                if let Some(c) = m.cursor {
                    prop_assert!(c.row >= ext.first && (c.row < ext.end() || ext.rows_kept == 0));
                    prop_assert!(c.col < cols);
                    prop_assert!(m.cursor_cell(ext).is_some(), "the cursor is in view");
                }
            }
        }
    }
}
