//! Heimdall: one supervisor process per terminal session, and thin clients.
//!
//! Process model: `hm run --detach` is a supervisor. It forks the command
//! in a pty before any runtime exists, then serves clients on
//! `<socket_dir>/<id>.sock` from a single-threaded event loop. There is no
//! daemon; every other command is a client of that socket.
//!
//! Data flow: pty output goes into one byte ring ([`supervisor::ring`]) and
//! from there, by offset, to every subscriber; client INPUT goes to the pty
//! once its frame is whole; the detector sees every read, and the state is
//! pushed to those who asked (STATE) or answered when asked (STATUS).
//!
//! Modules, from the bottom up (imports only go up this list; the path of
//! a chunk of output and of a key is in `docs/architecture.md`):
//! - [`error`], [`clock`], [`paths`], [`fd`] and [`pty`] (these two hold
//!   all the unsafe code), [`alarm`]; [`remote::host`]: a machine and how
//!   `HOST:ID` names one (a leaf, for the config; the rest of [`remote`]
//!   sits with the clients).
//! - [`protocol`]: the wire, pure; typed messages; `protocol::conn` for
//!   async clients.
//! - [`config`]: heimdall.toml and command-line overrides, resolved;
//!   [`cli`]: clap types; [`liveness`]: whether a supervisor is alive;
//!   [`restore`]: each session's manifest and output tail, kept for
//!   `hm restore` in the state dir.
//! - [`copymode`]: a history browsed with a cursor, searched and copied
//!   (pure; both the dashboard and attach drive it).
//! - [`vt`]: how a terminal reads output (the tokenizer every filter
//!   uses, the emulator and its numbered history, terminal events);
//!   [`term`]: the user's terminal.
//! - [`detect`] and [`classify`]: what a session is doing.
//! - [`supervisor`]: the per-session server.
//! - [`client`] (with the one status-polling state machine), [`launch`],
//!   [`lost`] (sessions lost with their supervisor, and how each comes
//!   back), [`remote`] (other machines' sessions over ssh, mounted as a socket
//!   dir), [`theme`], [`attach`] (what sits between a session and the
//!   user's terminal), [`tui`] (the dashboard).
//! - [`cmd`]: one file per subcommand.
//! - [`fuzzing`]: fuzz target bodies (the `fuzzing` feature, for tests).

pub mod agent_hooks;
pub mod alarm;
pub mod attach;
pub mod classify;
pub mod cli;
pub mod client;
pub mod clock;
pub mod cmd;
pub mod config;
pub mod copymode;
pub mod detect;
pub mod error;
pub mod fd;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod launch;
pub mod liveness;
pub mod lost;
pub mod paths;
pub mod protocol;
pub mod pty;
pub mod remote;
pub mod restore;
pub mod supervisor;
pub mod term;
pub mod theme;
pub mod tui;
pub mod vt;
