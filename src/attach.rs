//! What stands between a session's output and the user's own terminal in
//! `hm attach`: the replay filter that drops old terminal queries
//! ([`queries`]), the rewriter that keeps the program's screen switches
//! off the user's main screen ([`screens`]), and the status bar with the
//! scanner for what output does to it ([`statusbar`]). All three read the
//! output through [`crate::vt::tokenizer`], as the terminal will, and
//! [`shown`] puts them in order for each chunk of output. Copy mode, the
//! session's history on the user's terminal, is [`copy`], with the keys
//! read as [`keys`] splits them.
//!
//! The loop itself (connecting, keys, the detach key, resizing, the bar,
//! copy mode's I/O) is [`session`]: `hm attach` runs it, and so does the
//! dashboard when it hands its terminal to a session.

pub mod copy;
pub mod keys;
pub mod queries;
pub mod screens;
pub mod session;
pub mod shown;
pub mod statusbar;
