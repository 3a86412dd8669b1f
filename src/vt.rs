//! Terminal emulation shared by the supervisor and the dashboard.
//!
//! [`term::Term`] is vt100 0.18 behind a guard against hostile input; the
//! dashboard keeps one per pane (and draws it, in `tui::screen`),
//! and each supervisor keeps one as its session's screen
//! ([`events::Recorder`] collects what the program says besides drawing:
//! titles, bells, notifications, queries), parsed lazily: [`skim`] finds
//! what of a flood scrolled off unseen. Output reaches the parser through
//! [`cap`] (strings cut, UTF-8 checked, the state a rendering does not
//! carry followed), which reads it with the one [`tokenizer`].
//! [`history::Tally`] numbers the rows a screen's history keeps, for views
//! left on old output. [`utf8`] keeps invalid UTF-8 visible. Nothing here
//! knows how a screen is drawn.

pub mod budget;
pub mod cap;
pub mod dozing;
pub mod events;
pub mod history;
pub mod mouse;
pub mod skim;
pub mod term;
pub mod tokenizer;
pub mod utf8;
