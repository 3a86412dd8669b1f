//! `hm setup AGENT`: the hook set-up for an agent started outside `hm run`
//! (from a shell inside a session, by another tool), to paste into the
//! agent's own settings. `hm run` of a known agent needs none of it.
//!
//! `hm setup autostart`: a systemd user unit that runs `hm restore` at
//! login, printed; with `--install` written and enabled. Nothing is
//! installed unless asked.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::agent_hooks::{Agent, snippet};
use crate::paths::SOCKET_DIR_ENV;

/// The unit's file name.
const UNIT: &str = "hm-restore.service";

/// `config`: the config file named on the command line, for the socket
/// dir `hm run gemini` would use.
pub fn setup(what: &str, install: bool, config: Option<&Path>) -> Result<()> {
    let hm = std::env::current_exe().context("cannot find the hm binary's path")?;
    if what == "autostart" {
        return autostart(&hm, install, config);
    }
    if install {
        anyhow::bail!(
            "--install is for 'hm setup autostart'; for an agent, paste what 'hm setup {what}' prints"
        );
    }
    let agent = Agent::from_name(what).context("agent must be claude, codex or gemini")?;
    // A config that does not load is no reason not to print: the socket
    // dir is then the default one.
    let config = crate::config::Config::load(config).unwrap_or_default();
    let dir = crate::paths::resolve_socket_dir(None, config.socket_dir.as_deref());
    print!(
        "{}",
        snippet(agent, &hm, crate::agent_hooks::gemini_automatic(&dir))
    );
    Ok(())
}

/// What the unit carries of the shell that made it, when set there:
/// `PATH`, so that the agents and commands the sessions run are found as
/// they are now, and where hm looks for its sessions, its manifests and
/// its config. Without them a user with their own socket or state dir got
/// a unit that restored nothing: systemd gives a unit none of them.
const CARRIED: &[&str] = &["PATH", SOCKET_DIR_ENV, "XDG_STATE_HOME", "XDG_CONFIG_HOME"];

/// The unit: `hm restore` once at login. The sessions it starts must not
/// belong to the unit, or stopping it (or it ending) would stop them: so
/// `KillMode=process`, and the unit stays "active" once done so it runs
/// only once per login. `env` is what it carries ([`CARRIED`]); `config`
/// the config file `hm --config` named, which it is given too.
pub fn unit(hm: &Path, env: &[(&str, String)], config: Option<&Path>) -> String {
    let mut exec = crate::launch::shell_quote(&hm.to_string_lossy());
    if let Some(c) = config {
        exec.push_str(" --config ");
        exec.push_str(&crate::launch::shell_quote(&c.to_string_lossy()));
    }
    let mut text = format!(
        "# Runs `hm restore` at login: the hm sessions lost when the machine\n\
         # restarted start again. Written by `hm setup autostart`; to remove:\n\
         #   systemctl --user disable {UNIT} && rm ~/.config/systemd/user/{UNIT}\n\
         [Unit]\n\
         Description=Restore the hm sessions lost when the machine restarted\n\
         \n\
         [Service]\n\
         Type=oneshot\n\
         RemainAfterExit=yes\n\
         KillMode=process\n\
         TimeoutStartSec=10min\n\
         ExecStart={exec} restore\n"
    );
    for (name, value) in env {
        // A line break would end the setting; `%` is systemd's specifier
        // mark, and `\` and `"` its quoting.
        if value.is_empty() || value.contains('\n') {
            continue;
        }
        let value = value
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('%', "%%");
        text.push_str(&format!("Environment=\"{name}={value}\"\n"));
    }
    text.push_str("\n[Install]\nWantedBy=default.target\n");
    text
}

fn autostart(hm: &Path, install: bool, config: Option<&Path>) -> Result<()> {
    let env: Vec<(&str, String)> = CARRIED
        .iter()
        .filter_map(|name| {
            let value = std::env::var(name).ok()?;
            // The unit does not run where this shell does: a relative
            // socket dir is made whole, as hm would read it here; a
            // relative XDG dir is one hm ignores anyway.
            let value = match *name {
                SOCKET_DIR_ENV => std::path::absolute(&value)
                    .ok()?
                    .to_string_lossy()
                    .into_owned(),
                "PATH" => value,
                _ => value.starts_with('/').then_some(value)?,
            };
            Some((*name, value))
        })
        .collect();
    // The unit runs in the home directory: a relative path would name
    // another file there.
    let config = config
        .map(std::path::absolute)
        .transpose()
        .context("cannot find the config file's full path")?;
    let text = unit(hm, &env, config.as_deref());
    if !install {
        print!("{text}");
        eprintln!(
            "hm: nothing was installed; 'hm setup autostart --install' writes and enables it"
        );
        return Ok(());
    }
    let dir = user_units_dir()
        .context("cannot find ~/.config/systemd/user: set HOME or XDG_CONFIG_HOME")?;
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create '{}'", dir.display()))?;
    let file = dir.join(UNIT);
    let tmp = dir.join(format!(".{UNIT}.tmp"));
    std::fs::write(&tmp, &text).with_context(|| format!("cannot write '{}'", tmp.display()))?;
    std::fs::rename(&tmp, &file).with_context(|| format!("cannot write '{}'", file.display()))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "wrote {}", file.display())?;
    let enabled = std::process::Command::new("systemctl")
        .args(["--user", "enable", UNIT])
        .stdin(std::process::Stdio::null())
        .output();
    match enabled {
        Ok(o) if o.status.success() => {
            writeln!(out, "enabled: hm restore runs at your next login")?;
        }
        Ok(o) => eprintln!(
            "hm: 'systemctl --user enable {UNIT}' failed ({}); run it yourself once systemd runs for your user",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => eprintln!(
            "hm: cannot run systemctl ({e}); enable the unit with 'systemctl --user enable {UNIT}'"
        ),
    }
    Ok(())
}

/// `$XDG_CONFIG_HOME/systemd/user`, or `~/.config/systemd/user`.
fn user_units_dir() -> Option<PathBuf> {
    let config = match std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from) {
        Some(p) if p.is_absolute() => p,
        _ => PathBuf::from(std::env::var_os("HOME")?).join(".config"),
    };
    Some(config.join("systemd").join("user"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_runs_hm_restore_once_and_leaves_the_sessions_alone() {
        let u = unit(
            Path::new("/opt/my hm/hm"),
            &[("PATH", "/usr/bin:/home/u/.local/bin".into())],
            None,
        );
        assert!(u.contains("ExecStart='/opt/my hm/hm' restore\n"), "{u}");
        assert!(u.contains("KillMode=process\n"));
        assert!(u.contains("Type=oneshot\nRemainAfterExit=yes\n"));
        assert!(u.contains("Environment=\"PATH=/usr/bin:/home/u/.local/bin\"\n"));
        assert!(u.ends_with("[Install]\nWantedBy=default.target\n"));
        assert!(!unit(Path::new("/hm"), &[], None).contains("Environment"));
    }

    #[test]
    fn the_unit_carries_where_hm_keeps_things_quoted_for_systemd() {
        let u = unit(
            Path::new("/hm"),
            &[
                ("HM_SOCKET_DIR", "/srv/hm 100%".into()),
                ("XDG_STATE_HOME", r#"/s/"q"\x"#.into()),
                ("XDG_CONFIG_HOME", "/c\nExecStartPre=/bin/evil".into()),
                ("PATH", String::new()),
            ],
            Some(Path::new("/etc/hm.toml")),
        );
        assert!(
            u.contains("ExecStart=/hm --config /etc/hm.toml restore\n"),
            "{u}"
        );
        assert!(
            u.contains("Environment=\"HM_SOCKET_DIR=/srv/hm 100%%\"\n"),
            "{u}"
        );
        assert!(
            u.contains(r#"Environment="XDG_STATE_HOME=/s/\"q\"\\x""#),
            "{u}"
        );
        assert!(
            !u.contains("XDG_CONFIG_HOME") && !u.contains("PATH="),
            "{u}"
        );
    }
}
