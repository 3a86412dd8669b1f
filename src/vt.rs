//! Terminal emulation shared by the supervisor and the dashboard.
//!
//! [`term::Term`] is vt100 0.18 behind a guard against hostile input; the
//! dashboard keeps one per pane (and draws it, in `tui::screen`),
//! and each supervisor keeps one as its session's screen
//! ([`events::Recorder`] collects what the program says besides drawing:
//! titles, bells, notifications, queries), parsed lazily: [`skim`] finds
//! what of a flood scrolled off unseen, and [`budget`] whether skimming
//! pays. Output reaches the parser through [`cap`] (strings cut, UTF-8
//! checked, the state a rendering does not carry followed, text drawn in
//! DEC Special Graphics turned into the characters it stands for by
//! [`charset`]), which reads it with the one [`tokenizer`]. [`kept::Tally`]
//! keeps the rows that scroll off a screen, numbered for views left on old
//! output, and [`history`] reads them; [`runs`] keeps runs of plain lines
//! without the parser drawing them, as it would have; [`lines`] joins rows
//! the output wrapped back into the lines the program wrote. [`marks`]
//! applies a replay's journal marks; [`alternate`] finds where output
//! switches screens, for the journal. [`cut`] finds where output cut at any
//! byte reads cleanly again. [`utf8`] keeps invalid UTF-8 visible. [`keys`]
//! turns key events back into the bytes a terminal sends (the dashboard's
//! focused pane, `hm send --keys`). Nothing here knows how a screen is
//! drawn.

pub mod alternate;
pub mod budget;
pub mod cap;
pub mod charset;
pub mod cut;
pub mod dozing;
pub mod events;
pub mod history;
pub mod kept;
pub mod keys;
pub mod lines;
pub mod marks;
pub mod mouse;
pub mod run_screen;
pub mod runs;
pub mod skim;
pub mod term;
pub mod tokenizer;
pub mod utf8;
