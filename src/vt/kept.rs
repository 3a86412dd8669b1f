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
//! And a third: a change of width reshapes each row without reflowing
//! it. Narrowing cuts a row at the new width; widening pads it, and
//! either forgets that the row wrapped into the next one. The rows as
//! they were are noted ([`Tally::reshaping`]); one still as the change
//! left it, when it leaves or is read, is the row as it was: the line
//! whole, and joined with its next row if it wrapped into it.
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
    /// The main screen's rows, top first (below those pulled down), as
    /// they were before its width last changed (see [`Tally::reshaping`]).
    reshaped: VecDeque<Reshaped>,
}

/// A row of the main screen as it was before a change of width, and as
/// the change left it.
#[derive(Debug, Clone)]
struct Reshaped {
    /// The row as the program wrote it: before the change, or before an
    /// earlier one it was still as that one left it.
    was: Kept,
    /// Its text as the change left it; none while the change is under
    /// way (a row it pushes off the top leaves as it was).
    left: Option<String>,
}

impl Reshaped {
    /// Whether a row, `text` and whether it wraps, is still as the change
    /// left it: the same text, and not wrapping (a change of width
    /// unwraps every row, vt100's cut and padding alike). A row the
    /// program wrote since differs: a shell's line redrawn for the new
    /// width wraps, or says more. (Written again with the very text the
    /// change left, it cannot be told from it.)
    fn still(&self, text: &str, wrapped: bool) -> bool {
        self.left
            .as_ref()
            .is_none_or(|left| !wrapped && left == text)
    }
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
            reshaped: VecDeque::new(),
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
        self.reshaped.clear();
    }

    /// RIS: vt100 starts a new screen, which has counted no rows gone.
    pub(super) fn reset(&mut self) {
        self.gone = 0;
        self.owed = 0;
        self.reshaped.clear();
    }

    /// The main screen's width is about to change, and `rows` are its
    /// rows as they are, top first (none if they could not be read).
    /// vt100 does not reflow, as a terminal does: narrowing cuts each row
    /// at the new width, widening pads it, and both forget that a row
    /// wrapped into the next. A row still as the change left it when it
    /// leaves the screen, or is read on it, is taken as it was instead,
    /// so `hm logs` and the history have the line the program wrote,
    /// however many rows it took. The rows growing pulled down are none
    /// of the program's: they are skipped here, as they are when they
    /// leave. A row still as an earlier change left it keeps the form it
    /// had before that one.
    pub(super) fn reshaping(&mut self, rows: Option<VecDeque<Kept>>) {
        let pulled = usize::try_from(self.pulled).unwrap_or(usize::MAX);
        let rows = rows.unwrap_or_default().into_iter().skip(pulled);
        let noted = rows
            .enumerate()
            .map(|(i, row)| {
                let was = match self.reshaped.get(i) {
                    Some(r) if r.still(&row.text(), row.wrapped) => r.was.clone(),
                    _ => row,
                };
                Reshaped { was, left: None }
            })
            .collect();
        self.reshaped = noted;
    }

    /// The change of width [`Tally::reshaping`] noted is done: `texts`
    /// are the main screen's rows now, top first.
    pub(super) fn reshaped(&mut self, texts: impl Iterator<Item = String>) {
        let pulled = usize::try_from(self.pulled).unwrap_or(usize::MAX);
        let mut on_screen = 0;
        for (r, text) in self.reshaped.iter_mut().zip(texts.skip(pulled)) {
            r.left = Some(text);
            on_screen += 1;
        }
        // Rows a shorter screen cut off at the bottom: rows written there
        // later are new.
        self.reshaped.truncate(on_screen);
    }

    /// `row`, leaving the top of the main screen, as it was before the
    /// screen's width changed if it is still as the change left it (see
    /// [`Tally::reshaping`]).
    fn as_written(&mut self, row: Kept) -> Kept {
        let Some(noted) = self.reshaped.pop_front() else {
            return row;
        };
        if noted.still(&row.text(), row.wrapped) {
            noted.was
        } else {
            row
        }
    }

    /// Row `i` of the main screen (as text, and whether it wraps) as it
    /// was before the screen's width changed, if it is still as the change
    /// left it (see [`Tally::reshaping`]): a row that never left the
    /// screen is the program's line as much as one that did.
    pub(super) fn as_written_on_screen(
        &self,
        i: usize,
        text: &str,
        wrapped: bool,
    ) -> Option<&Kept> {
        // The rows growing pulled down since are above those noted.
        let noted = i.checked_sub(usize::try_from(self.pulled).ok()?)?;
        let r = self.reshaped.get(noted)?;
        r.still(text, wrapped).then_some(&r.was)
    }

    /// The whole screen is cleared: what is on it from now on is the
    /// program's new writing, none of it reshaped, none of it pulled
    /// down.
    pub(super) fn cleared(&mut self) {
        self.reshaped.clear();
        self.pulled = 0;
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
    /// did not count them, so neither is `gone`. Rows growing pulled
    /// down on top that are still blank are no history here either (see
    /// [`Tally::leave`]).
    pub(super) fn keep_rows(&mut self, rows: VecDeque<Kept>) {
        let pulled = usize::try_from(self.pulled).unwrap_or(usize::MAX);
        for (i, row) in rows.into_iter().enumerate() {
            if i < pulled {
                if !row.formatted.is_empty() || row.wrapped {
                    self.keep_row(row);
                }
                continue;
            }
            let row = self.as_written(row);
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
        let row = if pulled { row } else { self.as_written(row) };
        self.keep_row(row);
    }
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
