//! The environment a session started in, kept in its manifest so that a
//! restore starts it in the same one: three Claude Code sessions started
//! with three `ANTHROPIC_BASE_URL`s came back on the restoring shell's.
//!
//! Not everything is kept. A value named as a secret (`OPENAI_API_KEY`,
//! `GH_TOKEN`: [`crate::paths::names_a_secret`]), or holding one whatever
//! its name (a URL with a password: `DATABASE_URL`), never goes to disk:
//! its name is kept and a restore takes its value from its own
//! environment, saying so when it has none. `[[env]]` variables come from the
//! configuration again. What belongs to the login the session was started
//! from (its SSH agent's socket, its display, the terminal multiplexer it
//! ran in) is gone after a restart, so a restore takes those from its own
//! login too.

use std::collections::BTreeMap;
use std::ffi::OsString;

use super::manifest::Manifest;

/// Variables of the login a session was started from rather than of the
/// session: a restore takes them from the login it runs in.
const OF_THE_LOGIN: &[&str] = &[
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "SSH_CONNECTION",
    "SSH_CLIENT",
    "SSH_TTY",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_SESSION_ID",
    "XDG_SESSION_TYPE",
    "XDG_SESSION_CLASS",
    "XDG_SEAT",
    "XDG_VTNR",
    "GPG_AGENT_INFO",
    "WINDOWID",
    "TMUX",
    "TMUX_PANE",
    "STY",
    "WINDOW",
    "TERM_SESSION_ID",
    "OLDPWD",
    "SHLVL",
    "_",
];

fn of_the_login(name: &str) -> bool {
    OF_THE_LOGIN.contains(&name) || name.starts_with("ZELLIJ")
}

/// What a manifest keeps of an environment.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Kept {
    /// Name to value, but for the secrets, `[[env]]` and the login's.
    pub vars: BTreeMap<String, String>,
    /// The names of the variables named as secrets that it had.
    pub secrets: Vec<String>,
}

/// What of `vars` (a process's environment) a manifest keeps; `given`
/// are the `[[env]]` names, left out. A variable whose name or value is
/// not UTF-8 is left out too (JSON cannot hold it; a restore takes it
/// from its own environment if it has it).
pub fn keep(vars: impl IntoIterator<Item = (OsString, OsString)>, given: &[String]) -> Kept {
    let mut kept = Kept::default();
    for (name, value) in vars {
        let Some(name) = name.to_str() else { continue };
        if given.iter().any(|g| g == name) || of_the_login(name) {
            continue;
        }
        let value = value.to_str();
        if crate::paths::names_a_secret(name) || value.is_some_and(holds_credentials) {
            kept.secrets.push(name.to_owned());
        } else if let Some(value) = value {
            kept.vars.insert(name.to_owned(), value.to_owned());
        }
    }
    kept.secrets.sort();
    kept
}

/// Whether `value` carries credentials whatever its name says: a URL with
/// a password in it (`DATABASE_URL=postgres://app:hunter2@db/app`), or
/// with a user part as long as a token (`https://ghp_…@github.com/…`).
/// A short user alone (`ssh://git@host`) is not one.
fn holds_credentials(value: &str) -> bool {
    /// Shorter than this, a user part without a password is a user name.
    const TOKEN_LEN: usize = 20;
    value.match_indices("://").any(|(at, sep)| {
        let rest = &value[at + sep.len()..];
        let authority = rest
            .split(['/', '?', '#', ' ', ',', ';'])
            .next()
            .unwrap_or("");
        authority.rsplit_once('@').is_some_and(|(user, _)| {
            user.split_once(':')
                .map_or(user.len() >= TOKEN_LEN, |(_, password)| {
                    !password.is_empty()
                })
        })
    })
}

/// The environment a restore starts a session with: what its manifest
/// kept (`vars`), and from the restoring environment (`here`) the values
/// of its secrets and the login's variables. Returns that environment and
/// the secrets `here` has no value for.
pub fn restored(
    vars: &BTreeMap<String, String>,
    secrets: &[String],
    here: impl IntoIterator<Item = (OsString, OsString)>,
) -> (Vec<(OsString, OsString)>, Vec<String>) {
    let here: Vec<(OsString, OsString)> = here.into_iter().collect();
    let mut env: Vec<(OsString, OsString)> =
        vars.iter().map(|(k, v)| (k.into(), v.into())).collect();
    let mut missing = Vec::new();
    for name in secrets {
        match here.iter().find(|(k, _)| k == name.as_str()) {
            Some(var) => env.push(var.clone()),
            None => missing.push(name.clone()),
        }
    }
    env.extend(
        here.into_iter()
            .filter(|(k, _)| k.to_str().is_some_and(of_the_login)),
    );
    (env, missing)
}

/// Puts `cmd` (the start of a lost session) in the environment its
/// manifest `m` kept, as [`restored`] makes it from this process's; the
/// secrets this environment has no value for. A manifest that kept none
/// leaves `cmd` in this process's environment.
pub fn apply(cmd: &mut std::process::Command, m: &Manifest) -> Vec<String> {
    let Some(vars) = &m.environ else {
        return Vec::new();
    };
    let (env, missing) = restored(vars, &m.secret_env, std::env::vars_os());
    cmd.env_clear().envs(env);
    missing
}

/// The secrets of manifest `m` that this process's environment has no
/// value for, as [`apply`] would find them, for a restore to say before
/// it starts anything.
pub fn missing(m: &Manifest) -> Vec<String> {
    m.environ.as_ref().map_or_else(Vec::new, |vars| {
        restored(vars, &m.secret_env, std::env::vars_os()).1
    })
}

/// What to tell a person when session `id` starts without the secrets
/// `missing` it had.
pub fn missing_note(id: &str, missing: &[String]) -> Option<String> {
    let (last, first) = missing.split_last()?;
    let names = if first.is_empty() {
        last.clone()
    } else {
        format!("{} and {last}", first.join(", "))
    };
    let (is, them) = if first.is_empty() {
        ("is", "it")
    } else {
        ("are", "them")
    };
    Some(format!(
        "'{id}' started with {names} set, which {is} not set here: it starts without {them} \
         (the values of secrets are never kept)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn secrets_given_and_the_logins_variables_are_not_kept() {
        let kept = keep(
            vars(&[
                ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
                ("ANTHROPIC_API_KEY", "sk-ant-never-on-disk"),
                ("DB_TOKEN", "t"),
                ("FROM_CONFIG", "v"),
                ("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1"),
                ("ZELLIJ_SESSION_NAME", "z"),
                ("PATH", "/usr/bin"),
            ]),
            &["FROM_CONFIG".into()],
        );
        assert_eq!(
            kept.vars.keys().collect::<Vec<_>>(),
            ["ANTHROPIC_BASE_URL", "PATH"]
        );
        assert_eq!(kept.secrets, ["ANTHROPIC_API_KEY", "DB_TOKEN"]);
    }

    #[test]
    fn a_value_with_credentials_in_it_is_a_secret_whatever_its_name() {
        let kept = keep(
            vars(&[
                (
                    "DATABASE_URL",
                    "postgres://app:hunter2@db.internal:5432/app",
                ),
                (
                    "MIRROR",
                    "https://ghp_abcdefghijklmnopqrstuv@github.com/o/r.git",
                ),
                ("PROXIES", "http://proxy:3128, http://u:p@other:3128"),
                ("ORIGIN", "ssh://git@github.com/o/r.git"),
                ("ANON_MIRROR", "ftp://anonymous:@mirror/pub"),
                ("HOME_PAGE", "https://example.com/a@b"),
                ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
            ]),
            &[],
        );
        assert_eq!(kept.secrets, ["DATABASE_URL", "MIRROR", "PROXIES"]);
        assert_eq!(
            kept.vars.keys().collect::<Vec<_>>(),
            ["ANON_MIRROR", "ANTHROPIC_BASE_URL", "HOME_PAGE", "ORIGIN"]
        );
    }

    #[test]
    fn a_restore_takes_the_secrets_and_the_login_from_here_and_names_what_is_missing() {
        let kept = keep(
            vars(&[
                ("BASE", "old"),
                ("A_KEY", "old-key"),
                ("B_TOKEN", "old-token"),
            ]),
            &[],
        );
        let (env, missing) = restored(
            &kept.vars,
            &kept.secrets,
            vars(&[
                ("BASE", "new"),
                ("A_KEY", "new-key"),
                ("SSH_AUTH_SOCK", "/tmp/new"),
                ("ONLY_HERE", "x"),
            ]),
        );
        let env: BTreeMap<String, String> = env
            .into_iter()
            .map(|(k, v)| (k.into_string().unwrap(), v.into_string().unwrap()))
            .collect();
        assert_eq!(env["BASE"], "old");
        assert_eq!(env["A_KEY"], "new-key");
        assert_eq!(env["SSH_AUTH_SOCK"], "/tmp/new");
        assert!(!env.contains_key("ONLY_HERE") && !env.contains_key("B_TOKEN"));
        assert_eq!(missing, ["B_TOKEN"]);
    }
}
