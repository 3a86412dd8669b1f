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
//! Modules, from the bottom up. Each bullet is a tier: a module imports
//! only from its own tier and the ones above it in this list, and no
//! modules import each other in a circle (`tests/imports.rs` reads every
//! path in `src/` and holds the code to this list). The path of a chunk
//! of output and of a key is in `docs/architecture.md`.
//! - [`clock`], [`paths`], [`fd`] (with the pty module, all the unsafe code),
//!   [`alarm`]; [`host`]: a machine and how `HOST:ID` names one;
//!   [`verdict`]: the words for what a session is doing; [`proc_stat`]:
//!   a process's `/proc/PID/stat`, parsed; [`cut`]: text and ids cut to
//!   a width.
//! - [`protocol`]: the wire, pure; typed messages; `protocol::conn` for
//!   async clients.
//! - [`error`]: errors on one line; [`pty`]: openpty, fork and exec;
//!   [`term`]: the user's terminal; [`launch`]: starting a supervisor in
//!   the background; [`agent_hooks`]: `hm hook` put into an agent.
//! - [`copymode`]: a history browsed with a cursor, searched and copied
//!   (pure; both the dashboard and attach drive it); [`vt`]: how a
//!   terminal reads output (the tokenizer every filter uses, the emulator
//!   and its numbered history, terminal events, keys as bytes).
//! - [`detect`] and [`classify`]: what a session is doing.
//! - [`config`]: heimdall.toml and command-line overrides, resolved;
//!   [`cli`]: clap types; [`liveness`]: whether a supervisor is alive;
//!   [`restore`]: each session's manifest and output tail, kept for
//!   `hm restore` in the state dir; [`ended`]: the record an ended
//!   session leaves; [`theme`]: colours for states and chrome.
//! - [`supervisor`]: the per-session server.
//! - [`client`] (with the one status-polling state machine), [`lost`]
//!   (sessions lost with their supervisor, and how each comes back),
//!   [`remote`] (other machines' sessions over ssh, mounted as a socket
//!   dir), [`attach`] (what sits between a session and the user's
//!   terminal, and its loop).
//! - [`tui`]: the dashboard.
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
pub mod cut;
pub mod detect;
pub mod ended;
pub mod error;
pub mod fd;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod host;
pub mod launch;
pub mod liveness;
pub mod lost;
pub mod paths;
pub mod proc_stat;
pub mod protocol;
pub mod pty;
pub mod remote;
pub mod restore;
pub mod supervisor;
pub mod term;
pub mod theme;
pub mod tui;
pub mod verdict;
pub mod vt;
