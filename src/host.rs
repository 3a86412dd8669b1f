//! A machine to reach and how a command names it: `[user@]host[:port]`,
//! the `hm` to run there, and `HOST:ID`.
//!
//! A leaf: the config reads `[[hosts]]` into these, so nothing here may
//! import more than [`crate::paths`] (the rest of `remote` runs ssh and
//! serves sockets, and sits above the config).

use crate::paths;

/// A machine to reach: `[user@]host[:port]`, and the `hm` to run there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    /// What the user called it (`box`, `me@box:2222`); panes say this.
    pub name: String,
    /// `[user@]host` as ssh takes it.
    pub destination: String,
    pub port: Option<u16>,
    /// The remote `hm`: a name on the remote PATH, or a path.
    pub hm: String,
}

/// A host name that could become an ssh option or a shell word.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a host: give [user@]host[:port]")]
pub struct BadHost(pub String);

impl Host {
    /// Parses `[user@]host[:port]`; the name is the text given, the remote
    /// `hm` the one on its PATH.
    pub fn parse(spec: &str) -> Result<Host, BadHost> {
        let bad = || BadHost(paths::sanitize(spec));
        let (destination, port) = match spec.rsplit_once(':') {
            Some((d, p)) => (d, Some(p.parse::<u16>().map_err(|_| bad())?)),
            None => (spec, None),
        };
        let host = destination.rsplit('@').next().unwrap_or("");
        // Nothing ssh would read as an option, and nothing a shell would
        // make more of.
        let fine = |s: &str| {
            !s.is_empty()
                && !s.starts_with('-')
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-@".contains(c))
        };
        if !fine(destination) || host.is_empty() {
            return Err(bad());
        }
        Ok(Host {
            name: spec.to_owned(),
            destination: destination.to_owned(),
            port,
            hm: "hm".to_owned(),
        })
    }

    /// What a command line's `HOST` means: the `[[hosts]]` entry of that
    /// name, else an address.
    pub fn resolve(given: &str, known: &[Host]) -> Result<Host, BadHost> {
        match known.iter().find(|h| h.name == given) {
            Some(h) => Ok(h.clone()),
            None => Host::parse(given),
        }
    }
}

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
    fn hosts_parse_as_ssh_takes_them() {
        let h = Host::parse("me@box:2222").expect("a host");
        assert_eq!((h.destination.as_str(), h.port), ("me@box", Some(2222)));
        let h = Host::parse("box.example.org").expect("a host");
        assert_eq!((h.destination.as_str(), h.port), ("box.example.org", None));
        for bad in ["", "-oProxyCommand=x", "box:99999", "box;rm", "me@", "a b"] {
            assert!(Host::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_known_name_wins_over_an_address() {
        let known = vec![Host {
            name: "box".into(),
            hm: "/opt/hm".into(),
            ..Host::parse("me@box.lan:2222").expect("a host")
        }];
        assert_eq!(Host::resolve("box", &known).expect("known").hm, "/opt/hm");
        let other = Host::resolve("other:22", &known).expect("an address");
        assert_eq!(
            (other.destination.as_str(), other.hm.as_str()),
            ("other", "hm")
        );
        assert!(Host::resolve("-x", &known).is_err());
    }

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
