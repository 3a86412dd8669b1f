//! Heimdall: one supervisor process per terminal session, and thin clients.
//!
//! Process model: `hm run --detach` is a supervisor. It forks the command
//! in a pty before any runtime exists, then serves clients on
//! `<socket_dir>/<id>.sock` from a single-threaded event loop. There is no
//! daemon; every other command is a client of that socket.
//!
//! Data flow: pty output goes into one byte ring ([`supervisor::ring`]) and
//! from there, by offset, to every subscriber; client INPUT goes straight to
//! the pty; the classifier sees every read and is asked for its state only
//! when someone sends STATUS.
//!
//! Modules:
//! - [`cli`]: clap types; [`cmd`]: one file per subcommand.
//! - [`config`]: heimdall.toml and command-line overrides, resolved.
//! - [`paths`]: socket dir, session ids, file names.
//! - [`clock`]: the supervisor's clock (tokio time, so tests can pause
//!   it), and the list of everything that reads the time.
//! - [`protocol`]: wire format, pure; `protocol::conn` for async clients.
//! - [`pty`]: openpty and fork/exec; [`fd`]: descriptors on the runtime.
//!   These two hold all the unsafe code.
//! - [`supervisor`]: the per-session server.
//! - [`classify`]: state classifiers.
//! - [`client`]: what the client commands share.
//! - [`error`]: errors on one line, each cause once.
//! - [`launch`]: starting a supervisor in the background.
//! - [`liveness`]: whether a session's supervisor is alive (its lock).
//! - [`alarm`]: timerfd timers, one wake-up per expiry.
//! - [`term`]: raw mode and restoring the user's terminal.
//! - [`attach`]: the replay query filter, screen-switch rewriting and the
//!   status bar that `hm attach` puts between a session and the terminal.
//! - [`tui`]: the dashboard (model, update, view, layout, themes).
//! - [`fuzzing`]: fuzz target bodies, shared by `fuzz/` and the corpus test.

pub mod alarm;
pub mod attach;
pub mod classify;
pub mod cli;
pub mod client;
pub mod clock;
pub mod cmd;
pub mod config;
pub mod detect;
pub mod error;
pub mod fd;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod launch;
pub mod liveness;
pub mod paths;
pub mod protocol;
pub mod pty;
pub mod supervisor;
pub mod term;
pub mod theme;
pub mod tui;
pub mod vt;
