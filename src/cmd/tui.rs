//! `hm tui`: resolve options, then hand over to the dashboard.

use std::path::Path;

use anyhow::Result;

use crate::cli::TuiArgs;
use crate::client;
use crate::config::Config;
use crate::theme::Theme;
use crate::tui;

pub fn tui(args: TuiArgs, config: &Config, config_path: Option<&Path>) -> Result<i32> {
    // A terminal that says it cannot move its cursor (an editor's shell
    // buffer, a pipe-like console) would get a screen of escape codes.
    if std::env::var_os("TERM").is_some_and(|t| t == "dumb") {
        anyhow::bail!(
            "this terminal (TERM=dumb) cannot draw the dashboard: run it in a terminal emulator \
             ('hm ls', 'hm status' and 'hm logs' work here)"
        );
    }
    // NO_COLOR is the dashboard's own colours' to drop (the theme reads
    // it): crossterm would drop the sessions' colours with them, and the
    // programs' output is drawn as they wrote it.
    crossterm::style::force_color_output(true);
    let theme = match &args.theme {
        // The flag's own error names the flag.
        Some(name) => Theme::load(Some(name), Theme::no_color_from_env())?,
        None => Theme::load(config.tui.theme.as_deref(), Theme::no_color_from_env())
            .map_err(|e| config.tui.bad_theme(e))?,
    };
    // Every [[hosts]] entry, and the --host ones (a name or an address).
    let mut hosts = config.hosts.clone();
    for h in &args.hosts {
        if !hosts.iter().any(|known| &known.name == h) {
            hosts.push(crate::remote::Host::parse(h)?);
        }
    }
    let cwd = std::env::current_dir()?;
    tui::run(tui::Options {
        dir: client::socket_dir(&args.dir, config),
        theme,
        fit: config.tui.fit_sessions && !args.no_fit,
        bell: config.tui.bell,
        desktop_notify: config.tui.desktop_notify,
        columns: config.tui.columns,
        detach_key: config.detach_key,
        copy_key: config.copy_key,
        history_lines: config.history_lines,
        history_shared: !config.history_lines_set,
        config_path: config_path.map(|p| cwd.join(p)),
        attach_config: config.clone(),
        hosts,
        remote_dirs: Vec::new(),
        spawners: Vec::new(),
        ssh_command: crate::remote::ssh_command(config.ssh_command.as_deref()),
        next_key: config.next_key,
        keys: config.tui.keys.clone(),
        dir_flag: args
            .dir
            .socket_dir
            .as_ref()
            .map(|d| cwd.join(d).display().to_string()),
    })
}
