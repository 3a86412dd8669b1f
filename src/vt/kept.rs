//! The rows that leave the top of a screen's main screen, kept as they
//! left it: the callbacks a [`crate::vt::term::Term`]'s parser runs.
//!
//! The emulator keeps no history of its own: vt100 runs with none, as the
//! session's own screen in the supervisor does, and hands each row that
//! leaves the top of the main screen to [`Tally`], which keeps it (its
//! cells as text with their SGR attributes, vt100's "basic formatted"
//! form, and whether it wraps into the next row). vt100's own scrollback
//! is not used for two reasons: growing, it pulls rows back down onto the
//! screen, where the program's redraw for its new size then erases them
//! (and the screen is no longer the session's); and showing it widens
//! old rows to the screen's width and forgets that they wrapped. ED 3
//! (erase saved lines) empties the history, as a terminal's; a clear of
//! the whole screen adds its written rows first (`Term::keep_before_clear`,
//! through [`Tally::keep_rows`]). Reading it is [`crate::vt::history`]'s.
//!
//! One more quirk of vt100 is undone here: keeping no rows, it still
//! counts the rows that left the top, and growing pulls as many down
//! onto the top of the main screen, blank; shrinking (or scrolling)
//! pushes them off again. Rows pulled down that leave still blank are no
//! history (else every resize taller and back would add blank lines, in
//! the middle of the lines a program wrote).
//!
//! And a third: narrowing cuts each row at the new width. The rows as
//! they were are noted ([`Tally::narrowing`]); one that leaves still as
//! the cut left it is kept whole.
//!
//! Rows of runs of plain lines come here without vt100 drawing them
//! (`vt::runs`): `Tally::leave` keeps them as it keeps vt100's, and the
//! count vt100 did not make is owed.

use std::collections::VecDeque;

use vt100::capture::{BasicFormattedCaptureState, basic_formatted_to_plain};

/// A row of the history.
#[derive(Debug, Clone)]
pub(super) struct Kept {
    /// Its cells: text with SGR sequences, from default attributes.
    pub(super) formatted: Box<str>,
    /// The row's text goes on in the next row.
    pub(super) wrapped: bool,
}

impl Kept {
    pub(super) fn text(&self) -> String {
        basic_formatted_to_plain(&self.formatted).collect()
    }
}

/// The callbacks a [`Term`]'s parser runs: the caller's own, and the
/// history of the main screen.
#[derive(Debug, Default)]
pub struct Tally<CB> {
    pub(crate) inner: CB,
    /// Rows of the main screen's history dropped so far (the oldest,
    /// pushed out by new ones, erased, or never kept).
    pub(super) dropped: u64,
    /// The history, oldest first.
    pub(super) rows: VecDeque<Kept>,
    /// The most rows kept (0: none, only counted).
    pub(super) keep: usize,
    /// Rows that left the top of the main screen since it was last
    /// emptied (ED 3), less those pulled down again: vt100's own count,
    /// kept in step with it, since growing pulls down as many as it says.
    pub(super) gone: u64,
    /// Rows at the top of the main screen that growing pulled down blank
    /// and have not left it since.
    pub(super) pulled: u64,
    /// How far the main screen's rows have moved in numbering, all told:
    /// up by the rows pulled down, down by those dropped as they left.
    pub(super) moved: i64,
    /// Of `gone`, rows vt100 has not counted itself: rows of runs of plain
    /// lines kept without it (see `vt::runs`, which settles the count when
    /// vt100 would act on it).
    pub(super) owed: u64,
    /// Rows vt100 scrolls now only stand in for rows already counted (see
    /// `vt::runs`): none of them is history, or news to the callbacks.
    pub(super) mute: bool,
    /// The main screen's rows, top first, as they were before it last
    /// narrowed, and the width that cut them (see [`Tally::narrowing`]).
    pub(super) wide: VecDeque<Kept>,
    pub(super) cut_to: u16,
}

impl<CB> Tally<CB> {
    pub(crate) fn new(inner: CB) -> Self {
        Tally {
            inner,
            dropped: 0,
            rows: VecDeque::new(),
            keep: 0,
            gone: 0,
            pulled: 0,
            moved: 0,
            owed: 0,
            mute: false,
            wide: VecDeque::new(),
            cut_to: 0,
        }
    }

    /// A fresh screen keeping `keep` rows: the history so far is gone,
    /// its rows counted as dropped, so numbers never repeat.
    pub(super) fn start_over(&mut self, keep: usize) {
        self.erase();
        self.keep = keep;
    }

    /// ED 3: the history so far is gone.
    pub(super) fn erase(&mut self) {
        self.dropped += self.rows.len() as u64;
        self.rows.clear();
        self.gone = 0;
        self.owed = 0;
        self.wide.clear();
    }

    /// RIS: vt100 starts a new screen, which has counted no rows gone.
    pub(super) fn reset(&mut self) {
        self.gone = 0;
        self.owed = 0;
        self.wide.clear();
    }

    /// The main screen is about to narrow to `cols`, and `rows` are its
    /// rows as they are, top first. vt100 cuts each row at the new width
    /// (it does not reflow, as a terminal does); a row that leaves the
    /// screen later still as the cut left it is kept whole instead, so
    /// `hm logs` and the history have the line the program wrote. The
    /// rows growing pulled down are none of the program's: they are
    /// skipped here, as they are when they leave. A row cut by an earlier
    /// narrowing and not yet gone keeps its widest form.
    pub(super) fn narrowing(&mut self, rows: VecDeque<Kept>, cols: u16) {
        let pulled = usize::try_from(self.pulled).unwrap_or(usize::MAX);
        let rows = rows.into_iter().skip(pulled);
        let wide = rows.map(|row| self.widened(row)).collect();
        self.wide = wide;
        self.cut_to = cols;
    }

    /// `row`, leaving the top of the main screen, whole as it was before
    /// the screen narrowed if it is still as the narrowing cut it: the
    /// whole row begins with it, and it reaches the edge it was cut at (a
    /// column short of it when the cut fell inside a wide character,
    /// which vt100 then blanks), and does not wrap (vt100's cut unwraps
    /// a row). A row the program wrote since differs: a shell's line
    /// redrawn for the new width wraps.
    fn widened(&mut self, row: Kept) -> Kept {
        let Some(wide) = self.wide.pop_front() else {
            return row;
        };
        if still_cut(&row.text(), &wide.text(), self.cut_to, row.wrapped) {
            wide
        } else {
            row
        }
    }

    /// Row `i` of the main screen (`cut`, as text, and whether it wraps)
    /// whole as it was before the screen narrowed, if it is still as the
    /// narrowing cut it (see [`Tally::widened`]): a row that never left
    /// the screen is the program's line as much as one that did.
    pub(super) fn whole_on_screen(&self, i: usize, cut: &str, wrapped: bool) -> Option<Kept> {
        // The rows growing pulled down since are above those noted.
        let noted = i.checked_sub(usize::try_from(self.pulled).ok()?)?;
        let wide = self.wide.get(noted)?;
        still_cut(cut, &wide.text(), self.cut_to, wrapped).then(|| wide.clone())
    }

    /// The whole screen is cleared: what is on it now is the program's
    /// new writing, none of it cut.
    pub(super) fn cleared(&mut self) {
        self.wide.clear();
    }

    /// The main screen grew from `from` rows to `to`: vt100 pulled down
    /// as many blank rows as it counts gone (see the module's doc).
    pub(super) fn grew(&mut self, from: u16, to: u16) {
        let pulled = self.gone.min(u64::from(to.saturating_sub(from)));
        self.gone -= pulled;
        self.pulled = (self.pulled + pulled).min(u64::from(to));
        self.moved += pulled as i64;
    }

    /// Rows that did not scroll off, taken as history all the same (a
    /// screen about to be cleared, see `Term::keep_before_clear`): vt100
    /// did not count them, so neither is `gone`.
    pub(super) fn keep_rows(&mut self, rows: VecDeque<Kept>) {
        for row in rows {
            let row = self.widened(row);
            self.keep_row(row);
        }
    }

    /// A row into the history, the oldest out past [`Tally::keep`] (none
    /// kept with 0, only counted).
    fn keep_row(&mut self, row: Kept) {
        if self.keep == 0 {
            self.dropped += 1;
            return;
        }
        if self.rows.len() >= self.keep {
            self.rows.pop_front();
            self.dropped += 1;
        }
        self.rows.push_back(row);
    }

    /// The main screen has `rows` rows now.
    pub(super) fn shrank(&mut self, rows: u16) {
        self.pulled = self.pulled.min(u64::from(rows));
    }

    fn push(&mut self, row: &vt100::capture::RowContents<'_>) {
        self.leave(|| {
            let mut formatted = String::new();
            let mut state = BasicFormattedCaptureState::new();
            let _ = row.write_formatted_basic(&mut formatted, &mut state);
            // Written again with the state the first write left, a row that
            // does not wrap starts with a newline: that first character is
            // all that is asked of the second write.
            let mut probe = FirstChar(None);
            let _ = row.write_formatted_basic(&mut probe, &mut state);
            (formatted.into_boxed_str(), probe.0 != Some('\n'))
        });
    }

    /// A row leaves the top of the main screen: `row` makes it, as
    /// vt100's basic formatted text and whether it wraps, if it is to be
    /// looked at. vt100 hands its rows to [`Tally::push`]; the rows of a
    /// run of plain lines are made without it (`vt::runs`).
    pub(super) fn leave(&mut self, row: impl FnOnce() -> (Box<str>, bool)) {
        self.gone += 1;
        // A row pulled down blank leaves: only if it was written since is
        // it history.
        let pulled = self.pulled > 0;
        self.pulled = self.pulled.saturating_sub(1);
        if self.keep == 0 && !pulled {
            self.dropped += 1;
            return;
        }
        let (formatted, wrapped) = row();
        if pulled && formatted.is_empty() && !wrapped {
            self.moved -= 1;
            return;
        }
        let row = Kept { formatted, wrapped };
        let row = if pulled { row } else { self.widened(row) };
        self.keep_row(row);
    }
}

/// Whether `cut`, a row of the main screen, is still `whole` as a
/// narrowing to `edge` columns cut it: `whole` begins with it, it
/// reaches the edge (a column short of it when the cut fell inside a
/// wide character, which vt100 then blanks), and it does not wrap
/// (vt100's cut unwraps a row). A row the program wrote since differs: a
/// shell's line redrawn for the new width wraps.
fn still_cut(cut: &str, whole: &str, edge: u16, wrapped: bool) -> bool {
    use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};
    let Some(rest) = whole.strip_prefix(cut) else {
        return false;
    };
    let edge = usize::from(edge);
    let reaches = match rest.chars().next() {
        None => false,
        Some(next) => cut.width() == edge || (cut.width() + 1 == edge && next.width() == Some(2)),
    };
    reaches && !wrapped
}

/// A writer that takes the first character written and refuses the
/// rest.
struct FirstChar(Option<char>);

impl std::fmt::Write for FirstChar {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        match s.chars().next() {
            Some(c) => self.write_char(c),
            None => Ok(()),
        }
    }

    fn write_char(&mut self, c: char) -> std::fmt::Result {
        self.0 = Some(c);
        Err(std::fmt::Error)
    }
}

// Everything is passed on as it is; `on_scroll` keeps the row first.
impl<CB: vt100::Callbacks> vt100::Callbacks for Tally<CB> {
    fn audible_bell(&mut self, s: &mut vt100::Screen) {
        self.inner.audible_bell(s);
    }
    fn visual_bell(&mut self, s: &mut vt100::Screen) {
        self.inner.visual_bell(s);
    }
    fn resize(&mut self, s: &mut vt100::Screen, request: (u16, u16)) {
        self.inner.resize(s, request);
    }
    fn set_window_icon_name(&mut self, s: &mut vt100::Screen, name: &[u8]) {
        self.inner.set_window_icon_name(s, name);
    }
    fn set_window_title(&mut self, s: &mut vt100::Screen, title: &[u8]) {
        self.inner.set_window_title(s, title);
    }
    fn copy_to_clipboard(&mut self, s: &mut vt100::Screen, ty: &[u8], data: &[u8]) {
        self.inner.copy_to_clipboard(s, ty, data);
    }
    fn paste_from_clipboard(&mut self, s: &mut vt100::Screen, ty: &[u8]) {
        self.inner.paste_from_clipboard(s, ty);
    }
    fn unhandled_char(&mut self, s: &mut vt100::Screen, c: char) {
        self.inner.unhandled_char(s, c);
    }
    fn unhandled_control(&mut self, s: &mut vt100::Screen, b: u8) {
        self.inner.unhandled_control(s, b);
    }
    fn unhandled_escape(&mut self, s: &mut vt100::Screen, i1: Option<u8>, i2: Option<u8>, b: u8) {
        self.inner.unhandled_escape(s, i1, i2, b);
    }
    fn unhandled_csi(
        &mut self,
        s: &mut vt100::Screen,
        i1: Option<u8>,
        i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        self.inner.unhandled_csi(s, i1, i2, params, c);
    }
    fn unhandled_osc(&mut self, s: &mut vt100::Screen, params: &[&[u8]]) {
        self.inner.unhandled_osc(s, params);
    }
    fn on_scroll(&mut self, row: vt100::capture::RowContents<'_>, alternate_screen: bool) {
        // The parser keeps no scrollback, so this is every row that left
        // the top of the screen. The alternate screen's are no history.
        if self.mute {
            return;
        }
        if !alternate_screen {
            self.push(&row);
        }
        self.inner.on_scroll(row, alternate_screen);
    }
}
