//! Sessions on other machines, over the user's own `ssh`.
//!
//! On the remote machine `hm proxy` ([`proxy`]) serves its user's socket
//! directory over its stdin and stdout: the list of sessions, and any
//! number of connections to them, multiplexed as channels ([`mux`]). On
//! this machine a [`Mount`] runs `ssh HOST hm proxy` and makes the remote
//! sessions look local: a private directory holds, for each remote
//! session, a socket that the mount serves by opening a channel, and a
//! locked pid file, so that every client — `hm status`, `hm attach`,
//! `hm ls` — works on it unchanged, through the same checks as on a local
//! session. No port listens anywhere: the transport is the ssh connection.
//! A [`Link`] is the dashboard's mount: kept up, and reconnected. What a
//! host is and how `HOST:ID` names one is in [`host`], a leaf the config
//! uses.

pub mod link;
pub mod mount;
pub mod mux;
pub mod proxy;

pub use crate::host::{Host, split_target};
pub use link::{Link, LinkState, Spawner};
pub use mount::{Mount, MountError, ssh_command};
