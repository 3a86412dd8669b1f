//! Terminal emulation shared by the supervisor and the dashboard.
//!
//! [`term::Term`] is vt100 0.18 behind a guard against hostile input; the
//! dashboard renders one per pane, and each supervisor keeps one as its
//! session's screen ([`events::Recorder`] collects what the program says
//! besides drawing: titles, bells, notifications, queries).
//! [`kept::Tally`] keeps the rows that scroll off a screen, numbered for
//! views left on old output, and [`history`] reads them; [`lines`] joins
//! rows the output wrapped back into the lines the program wrote.
//! [`marks`] applies a replay's journal marks; [`alternate`] finds where
//! output switches screens, for the journal. [`utf8`] keeps invalid
//! UTF-8 visible. [`keys`] turns key events back into the bytes a
//! terminal sends (the dashboard's focused pane, `hm send --keys`).

pub mod alternate;
pub mod events;
pub mod history;
pub mod kept;
pub mod keys;
pub mod lines;
pub mod marks;
pub mod mouse;
pub mod term;
pub mod tokenizer;
pub mod utf8;
