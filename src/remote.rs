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

pub mod bridge;
pub mod mux;
pub mod proxy;

pub use bridge::{Host, Link, LinkState, Mount, MountError, Spawner};

/// Splits `HOST:ID` (`[user@]host[:port]:id`): ids never contain `:`, so
/// the last one separates them. `None` for a plain id.
pub fn split_target(target: &str) -> Option<(&str, &str)> {
    let (host, id) = target.rsplit_once(':')?;
    (!host.is_empty() && !id.is_empty()).then_some((host, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_split_at_the_last_colon() {
        assert_eq!(split_target("box:agent1"), Some(("box", "agent1")));
        assert_eq!(
            split_target("me@box:2222:agent1"),
            Some(("me@box:2222", "agent1"))
        );
        assert_eq!(split_target("agent1"), None);
        assert_eq!(split_target(":agent1"), None);
        assert_eq!(split_target("box:"), None);
    }
}
