//! The dashboard's screen pipeline target: session output and resizes
//! through [`Term`] exactly as `tui::update` drives it, and rendering as
//! `tui::view` does it, with two vt100 parsers alongside as references.

use std::panic::{AssertUnwindSafe, catch_unwind};

use arbitrary::Unstructured;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;
use tui_term::widget::{Cursor, PseudoTerminal};

use crate::protocol::{MAX_DIM, Size};
use crate::tui::screen;
use crate::vt::cap::{StringCap, unfinished_utf8};
use crate::vt::term::Term;

/// The reference cap's limit: small, so that cutting happens in short inputs.
const LIMIT: usize = 32;
/// Largest screen tried, in cells: one side can still reach [`MAX_DIM`],
/// but a 4096 x 4096 screen per input would make the fuzzer crawl.
const CELLS: u32 = 1 << 13;

/// Records the longest OSC payload the parser handed on.
#[derive(Debug, Default)]
struct Osc {
    longest: usize,
}

impl Osc {
    fn saw(&mut self, len: usize) {
        self.longest = self.longest.max(len);
    }
}

impl vt100::Callbacks for Osc {
    fn set_window_icon_name(&mut self, _: &mut vt100::Screen, name: &[u8]) {
        self.saw(name.len());
    }
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.saw(title.len());
    }
    fn copy_to_clipboard(&mut self, _: &mut vt100::Screen, ty: &[u8], data: &[u8]) {
        self.saw(ty.len() + data.len());
    }
    fn paste_from_clipboard(&mut self, _: &mut vt100::Screen, ty: &[u8]) {
        self.saw(ty.len());
    }
    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        self.saw(params.iter().map(|p| p.len()).sum());
    }
}

/// A bare vt100 parser; `None` once it has panicked (then it no longer
/// serves as a reference).
///
/// It is fed whole characters: an unfinished UTF-8 character at the end of
/// a read waits for the next one, as in [`Term::feed`], because vte 0.15
/// mishandles a character completed by a later read (alacritty/vte#159),
/// and a reference fed the reads as they are would show that bug where
/// `Term` does not. Unlike `Term`, it holds such bytes back whatever the
/// parser's state, and that changes nothing it shows: vte would keep them
/// too in ground state, and inside a sequence bytes from 0x80 up draw
/// nothing (they are ignored, or string data, or an 8-bit ST ending a DCS,
/// which vt100 does not act on); they are only handled a read later, in
/// the same order with everything else.
struct Reference<CB: vt100::Callbacks> {
    parser: Option<vt100::Parser<CB>>,
    held: Vec<u8>,
}

impl<CB: vt100::Callbacks + Default> Reference<CB> {
    fn new(size: Size) -> Self {
        let parser = catch_unwind(|| {
            vt100::Parser::new_with_callbacks(nz(size.rows), nz(size.cols), 0, CB::default())
        });
        Reference {
            parser: parser.ok(),
            held: Vec::new(),
        }
    }

    /// One read of session output, in whole characters.
    fn feed(&mut self, bytes: &[u8]) {
        let mut whole = std::mem::take(&mut self.held);
        whole.extend_from_slice(bytes);
        let cut = whole.len() - unfinished_utf8(&whole);
        self.held = whole.split_off(cut);
        self.run(|p| p.process(&whole));
    }

    fn run(&mut self, f: impl FnOnce(&mut vt100::Parser<CB>)) {
        if let Some(p) = self.parser.as_mut()
            && catch_unwind(AssertUnwindSafe(|| f(p))).is_err()
        {
            self.parser = None;
        }
    }

    fn screen(&self) -> Option<String> {
        let s = self.parser.as_ref()?.screen();
        Some(format!(
            "{:?}{:?}{:?}",
            s.contents_formatted(),
            s.input_mode_formatted(),
            s.cursor_position()
        ))
    }
}

fn nz(v: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(v).unwrap_or(std::num::NonZeroU16::MIN)
}

/// A size as the dashboard would hand it to [`Term::resize`]: any u16 from
/// the input, clamped by the protocol's policy, then kept under [`CELLS`].
pub(super) fn size(u: &mut Unstructured<'_>) -> Size {
    let mut dim = || match u.arbitrary::<u8>().unwrap_or(24) {
        b @ 0..=200 => u16::from(b),
        201 => MAX_DIM,
        202 => MAX_DIM + 1,
        203 => u16::MAX,
        _ => u.arbitrary::<u16>().unwrap_or(0),
    };
    let (rows, cols) = (dim(), dim());
    let s = Size { cols, rows }.clamped();
    let most_rows = (CELLS / u32::from(s.cols)).max(1);
    Size {
        rows: s.rows.min(u16::try_from(most_rows).unwrap_or(MAX_DIM)),
        ..s
    }
}

fn screen_of(t: &Term) -> String {
    let s = t.screen();
    format!(
        "{:?}{:?}{:?}",
        s.contents_formatted(),
        s.input_mode_formatted(),
        s.cursor_position()
    )
}

/// Renders a view of `t` as `tui::view` does, into a buffer larger than
/// the area, and checks nothing was drawn outside the area.
fn render(t: &Term, area: Rect, cursor: bool) {
    let mut buf = Buffer::empty(Rect::new(0, 0, area.right() + 2, area.bottom() + 2));
    let blank = buf.clone();
    let v = screen::view(t, area.height, area.width);
    PseudoTerminal::new(&v)
        .cursor(Cursor::default().visibility(cursor))
        .render(area, &mut buf);
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            if !area.contains((x, y).into()) {
                assert_eq!(
                    buf[(x, y)],
                    blank[(x, y)],
                    "drawn outside {area:?} at {x},{y}"
                );
            }
        }
    }
}

/// The dashboard's screen pipeline: [`Term::feed`], [`Term::resize`],
/// [`Term::reset`] and rendering a [`Term::view`] with tui-term.
///
/// Layout: an initial size (see below), then operations until the input
/// ends, each a tag byte (`% 4`) and its fields: `0 n:u16 LE` then `n`
/// bytes of session output (fewer if the input ends), `1 size` resize,
/// `2 h:u8 w:u8 x:u8 y:u8 cursor:u8` render an `h % 100` x `w % 100` view
/// at `x % 4, y % 4`, `3` reset. A size is two dimensions, rows then columns, each a
/// byte `0..=200` taken as is, `201` [`MAX_DIM`], `202` one more, `203`
/// `u16::MAX`, or above `203` followed by a u16 LE.
///
/// Checks: no panic escapes `Term` or the renderer (vt100's own panics are
/// caught in `Term` and counted in `resets`); rendering stays inside its
/// area; `Term` shows exactly what a bare parser shows for the same input
/// with invalid UTF-8 text made visible (`crate::vt::utf8`, through a cap
/// too large to cut; fed in whole characters, see [`Reference`]; while
/// neither has panicked); and with a cap of [`LIMIT`] bytes in front
/// of a parser, no OSC longer than the cap reaches it and the screen is
/// the same as without the cap (so the cap only ever drops string bytes).
pub fn tui_screen(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let start = size(&mut u);
    let mut term = Term::new(start);
    let mut raw = Reference::<()>::new(start);
    let mut capped = Reference::<Osc>::new(start);
    let mut cap = StringCap::with_limit(LIMIT);
    let mut visible = StringCap::with_limit(usize::MAX);
    let mut resets = 0;
    let mut ops = 0;
    while !u.is_empty() && ops < 500 {
        ops += 1;
        match u.arbitrary::<u8>().unwrap_or(0) % 4 {
            0 => {
                let n = usize::from(u.arbitrary::<u16>().unwrap_or(0));
                let bytes = u.bytes(n.min(u.len())).unwrap_or_default();
                term.feed(bytes);
                let mut shown = Vec::new();
                visible.filter(bytes, &mut shown);
                raw.feed(&shown);
                let mut out = Vec::new();
                cap.filter(bytes, &mut out);
                assert!(out.len() <= shown.len());
                capped.feed(&out);
            }
            1 => {
                let s = size(&mut u);
                term.resize(s);
                assert_eq!(term.size(), s);
                raw.run(|p| p.screen_mut().set_size(nz(s.rows), nz(s.cols)));
                capped.run(|p| p.screen_mut().set_size(nz(s.rows), nz(s.cols)));
            }
            2 => {
                let h = u16::from(u.arbitrary::<u8>().unwrap_or(0) % 100);
                let w = u16::from(u.arbitrary::<u8>().unwrap_or(0) % 100);
                let x = u16::from(u.arbitrary::<u8>().unwrap_or(0) % 4);
                let y = u16::from(u.arbitrary::<u8>().unwrap_or(0) % 4);
                let cursor = u.arbitrary::<bool>().unwrap_or(true);
                render(&term, Rect::new(x, y, w, h), cursor);
            }
            _ => {
                compare(&term, resets, &raw, &capped);
                term.reset();
                raw = Reference::new(term.size());
                capped = Reference::new(term.size());
                cap = StringCap::with_limit(LIMIT);
                visible = StringCap::with_limit(usize::MAX);
                resets = term.resets;
            }
        }
        if let Some(p) = capped.parser.as_ref() {
            let longest = p.callbacks().longest;
            assert!(
                longest <= LIMIT,
                "an OSC of {longest} bytes got past the cap"
            );
        }
    }
    compare(&term, resets, &raw, &capped);
}

/// The screens must agree, as far as their parsers are still references
/// (screens are compared at the end and before a reset only: formatting
/// them after every operation would make the fuzzer crawl).
fn compare(term: &Term, resets: u32, raw: &Reference<()>, capped: &Reference<Osc>) {
    let Some(a) = raw.screen() else { return };
    if let Some(b) = capped.screen() {
        assert_eq!(a, b, "the cap changed what the screen shows");
    }
    if term.resets == resets {
        assert_eq!(a, screen_of(term), "Term differs from a bare parser");
    }
}
