//! What each key of `heimdall.toml` accepts: [`Config::parse`] walks the
//! top level in file order, and one reader per table (`[classifier]`,
//! `[[env]]`, `[[notify]]`, `[tui]`) or structured value (`detach_key`)
//! checks each key and value. A new key is a field in [`Config`], a line
//! here, and the example file and `docs/configuration.md`.
//!
//! Nothing here is derived with serde, though `[tui]`, `[[notify]]` and
//! `desktop_notify` have the shape for it: serde's messages ("invalid type:
//! integer `1`, expected a boolean", "unknown field ...") would replace the
//! `file:line: key` ones the tests and docs show, and a type error in
//! `[[env]]` would echo the value, which may be a secret.

use std::ops::Range;
use std::path::Path;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::check::{CLASSIFIER_NAMES, check_env_name, unknown_classifier};
use super::detach_key::{Role, check_key_byte, parse_key};
use super::doc::{Doc, in_file_order};
use super::{
    Config, ConfigError, DEBOUNCE_MS_RANGE, DEFAULT_NOTIFY_INTERVAL_MS, DesktopNotify, EnvVar,
    IDLE_THRESHOLD_MS_RANGE, MAX_HISTORY_LINES, MAX_KILL_GRACE_MS, MAX_RESTORE_HISTORY_BYTES,
    MAX_SCROLLBACK_BYTES, NOTIFY_EVENTS, NotifyRule, RESTORE_PARALLEL_RANGE, STUCK_AFTER_MS_RANGE,
    TuiConfig,
};
use crate::classify::ClassifierSpec;
use crate::host::Host;

const TOP_KEYS: &[&str] = &[
    "socket_dir",
    "scrollback_bytes",
    "session_env_var",
    "kill_process_group",
    "kill_grace_ms",
    "detach_key",
    "copy_key",
    "next_key",
    "attach_key",
    "history_lines",
    "classifier",
    "env",
    "log_file",
    "log_level",
    "tui",
    "notify",
    "ssh_command",
    "hosts",
    "automation",
    "restore_history_bytes",
    "restore_parallel",
];
const TUI_KEYS: &[&str] = &[
    "theme",
    "fit_sessions",
    "session_size",
    "bell",
    "desktop_notify",
    "columns",
    "keys",
];
const ENV_KEYS: &[&str] = &["name", "value"];
const NOTIFY_KEYS: &[&str] = &["command", "on", "min_interval_ms", "after_ms"];
const HOST_KEYS: &[&str] = &["name", "address", "hm"];

impl Config {
    /// Parse the text of a config file read from `path` (pure). `home`
    /// expands `~`; without it a `~` path is an error.
    pub fn parse(text: &str, path: &Path, home: Option<&Path>) -> Result<Config, ConfigError> {
        let doc = Doc { text, path, home };
        let root = DeTable::parse(text).map_err(|e| doc.syntax(&e))?;
        let mut config = Config {
            source: Some(path.to_path_buf()),
            ..Config::defaults()
        };
        let mut env_spans = Vec::new();
        let mut copy_key_at = None;
        let mut next_key_at = None;
        let mut attach_key_at = None;
        for (key, value) in in_file_order(root.get_ref()) {
            let name: &str = key.get_ref();
            match name {
                "socket_dir" => config.socket_dir = Some(doc.path(name, value)?),
                "scrollback_bytes" => {
                    let n = doc.integer(name, value, 0..=MAX_SCROLLBACK_BYTES as u64, "bytes")?;
                    config.scrollback_bytes = usize::try_from(n).unwrap_or(MAX_SCROLLBACK_BYTES);
                }
                "session_env_var" => {
                    let var = doc.string(name, value)?;
                    check_env_name(&var).map_err(|r| doc.invalid(value.span(), name, r))?;
                    config.session_env_var = var;
                }
                "kill_process_group" => config.kill_process_group = doc.boolean(name, value)?,
                "kill_grace_ms" => {
                    config.kill_grace_ms =
                        doc.integer(name, value, 0..=MAX_KILL_GRACE_MS, "milliseconds")?;
                }
                "detach_key" => config.detach_key = doc.key_name(name, value, Role::Detach)?,
                "next_key" => {
                    config.next_key = doc.key_name(name, value, Role::Next)?;
                    next_key_at = Some(value.span());
                }
                "attach_key" => {
                    config.attach_key = doc.key_name(name, value, Role::Attach)?;
                    attach_key_at = Some(value.span());
                }
                "copy_key" => {
                    config.copy_key = doc.key_name(name, value, Role::Copy)?;
                    copy_key_at = Some(value.span());
                }
                "history_lines" => {
                    let n = doc.integer(name, value, 0..=MAX_HISTORY_LINES as u64, "lines")?;
                    config.history_lines = usize::try_from(n).unwrap_or(MAX_HISTORY_LINES);
                    config.history_lines_set = true;
                }
                "classifier" => {
                    config.classifier = doc.classifier(value)?;
                    config.classifier_chosen = true;
                }
                "env" => (config.env, env_spans) = doc.env(value)?,
                "log_file" => config.log_file = Some(doc.path(name, value)?),
                "log_level" => {
                    let level = doc.string(name, value)?;
                    config.log_level = level
                        .parse()
                        .map_err(|r: String| doc.invalid(value.span(), name, r))?;
                }
                "tui" => config.tui = doc.tui(value)?,
                "notify" => config.notify = doc.notify(value)?,
                "ssh_command" => {
                    let cmd = doc.string(name, value)?;
                    if cmd.trim().is_empty() || cmd.contains('\0') {
                        let reason = "the command is empty or holds a NUL character";
                        return Err(doc.invalid(value.span(), name, reason));
                    }
                    config.ssh_command = Some(cmd);
                }
                "hosts" => config.hosts = doc.hosts(value)?,
                "automation" => config.automation = doc.automation(value)?,
                "restore_history_bytes" => {
                    let n =
                        doc.integer(name, value, 0..=MAX_RESTORE_HISTORY_BYTES as u64, "bytes")?;
                    config.restore_history_bytes =
                        usize::try_from(n).unwrap_or(MAX_RESTORE_HISTORY_BYTES);
                }
                "restore_parallel" => {
                    let n = doc.integer(name, value, RESTORE_PARALLEL_RANGE, "sessions")?;
                    config.restore_parallel = usize::try_from(n).unwrap_or(1);
                }
                _ => return Err(doc.unknown(key, "", TOP_KEYS)),
            }
        }
        if let Some(i) = config
            .env
            .iter()
            .position(|var| var.name == config.session_env_var)
        {
            let reason = format!(
                "'{}' is the session_env_var, which hm sets to the session id \
                 (remove this entry or choose another session_env_var)",
                config.session_env_var
            );
            return Err(doc.invalid(env_spans[i].clone(), "env.name", reason));
        }
        if config.copy_key.is_some() && config.copy_key == config.detach_key {
            match copy_key_at {
                // Both chosen, and the same: one of them has to give.
                Some(span) => {
                    let reason = format!(
                        "{} is the detach key too (choose another, or \"none\")",
                        super::describe_key(config.detach_key.unwrap_or_default())
                    );
                    return Err(doc.invalid(span, "copy_key", reason));
                }
                // The default copy key, taken as the detach key: no copy
                // key (Shift-PgUp still opens copy mode).
                None => config.copy_key = None,
            }
        }
        for (name, at, key) in [
            ("next_key", next_key_at, config.next_key),
            ("attach_key", attach_key_at, config.attach_key),
        ] {
            if let (Some(span), Some(k)) = (at, key)
                && (config.detach_key == Some(k) || config.copy_key == Some(k))
            {
                let reason = format!(
                    "{} is the detach or copy key too (choose another, or \"none\")",
                    super::describe_key(k)
                );
                return Err(doc.invalid(span, name, reason));
            }
        }
        Ok(config)
    }
}

impl Doc<'_> {
    /// `detach_key` or `copy_key`: a key name, or a byte as in the
    /// original's `detach_key`.
    fn key_name(
        &self,
        key: &str,
        value: &Spanned<DeValue<'_>>,
        role: Role,
    ) -> Result<Option<u8>, ConfigError> {
        match value.get_ref() {
            DeValue::String(s) => {
                parse_key(s, role).map_err(|r| self.invalid(value.span(), key, r))
            }
            DeValue::Integer(_) => match self.integer(key, value, 0..=255, "")? {
                // 0 disables detaching, as in the original.
                0 => Ok(None),
                n => check_key_byte(u8::try_from(n).unwrap_or(u8::MAX), role)
                    .map(Some)
                    .map_err(|r| self.invalid(value.span(), key, r)),
            },
            _ => Err(self.mismatch(key, value, "a key name such as \"ctrl-\\\\\" or \"none\"")),
        }
    }

    fn classifier(&self, value: &Spanned<DeValue<'_>>) -> Result<ClassifierSpec, ConfigError> {
        let key = "classifier";
        let table = match value.get_ref() {
            DeValue::String(name) => {
                return ClassifierSpec::by_name(name)
                    .ok_or_else(|| self.invalid(value.span(), key, unknown_classifier(name)));
            }
            DeValue::Table(table) => in_file_order(table),
            _ => {
                let expected =
                    "\"simple\", \"claude\", \"agent\", \"none\" or a [classifier.<name>] table";
                return Err(self.mismatch(key, value, expected));
            }
        };
        let [(name, params)] = table[..] else {
            let span = table.get(1).map_or(value.span(), |(extra, _)| extra.span());
            let reason = format!(
                "the classifier table must have exactly one key (simple, claude, agent or none), \
                 got {} (keep a single [classifier.<name>] table)",
                table.len()
            );
            return Err(self.invalid(span, key, reason));
        };
        let mut spec = match ClassifierSpec::by_name(name.get_ref()) {
            Some(spec) => spec,
            None => return Err(self.unknown(name, key, CLASSIFIER_NAMES)),
        };
        let prefix = format!("classifier.{}", spec.name());
        let params = self.table(&prefix, &format!("[{prefix}]"), params)?;
        for (param, value) in in_file_order(params) {
            let full = format!("{prefix}.{}", param.get_ref());
            match (&mut spec, param.get_ref().as_ref()) {
                (
                    ClassifierSpec::Simple { idle_threshold_ms }
                    | ClassifierSpec::Claude {
                        idle_threshold_ms, ..
                    }
                    | ClassifierSpec::Agent {
                        idle_threshold_ms, ..
                    },
                    "idle_threshold_ms",
                ) => {
                    *idle_threshold_ms =
                        self.integer(&full, value, IDLE_THRESHOLD_MS_RANGE, "milliseconds")?;
                }
                (ClassifierSpec::Claude { debounce_ms, .. }, "debounce_ms") => {
                    *debounce_ms = self.integer(&full, value, DEBOUNCE_MS_RANGE, "milliseconds")?;
                }
                (ClassifierSpec::Agent { stuck_after_ms, .. }, "stuck_after_ms") => {
                    *stuck_after_ms =
                        self.integer(&full, value, STUCK_AFTER_MS_RANGE, "milliseconds")?;
                }
                (
                    ClassifierSpec::Agent {
                        process_evidence, ..
                    },
                    "process_evidence",
                ) => {
                    *process_evidence = self.boolean(&full, value)?;
                }
                (
                    ClassifierSpec::Agent {
                        status_protocol, ..
                    },
                    "status_protocol",
                ) => {
                    *status_protocol = self.boolean(&full, value)?;
                }
                (ClassifierSpec::Agent { hooks, .. }, "hooks") => {
                    *hooks = self.boolean(&full, value)?;
                }
                (ClassifierSpec::Agent { .. }, _) => {
                    return Err(self.unknown(
                        param,
                        &prefix,
                        &[
                            "idle_threshold_ms",
                            "stuck_after_ms",
                            "process_evidence",
                            "status_protocol",
                            "hooks",
                        ],
                    ));
                }
                (ClassifierSpec::Simple { .. }, _) => {
                    return Err(self.unknown(param, &prefix, &["idle_threshold_ms"]));
                }
                (ClassifierSpec::Claude { .. }, _) => {
                    return Err(self.unknown(
                        param,
                        &prefix,
                        &["idle_threshold_ms", "debounce_ms"],
                    ));
                }
                (ClassifierSpec::None, _) => return Err(self.unknown(param, &prefix, &[])),
            }
        }
        Ok(spec)
    }

    /// The `[[env]]` entries and the span of each name. Values are never
    /// echoed in errors: they may be secrets.
    fn env(
        &self,
        value: &Spanned<DeValue<'_>>,
    ) -> Result<(Vec<EnvVar>, Vec<Range<usize>>), ConfigError> {
        let DeValue::Array(items) = value.get_ref() else {
            return Err(self.mismatch("env", value, "[[env]] tables with a name and a value"));
        };
        let mut vars: Vec<EnvVar> = Vec::new();
        let mut spans: Vec<Range<usize>> = Vec::new();
        for item in items.iter() {
            let entry = self.table("env", "[[env]]", item)?;
            let (mut name, mut val) = (None, None);
            for (key, value) in in_file_order(entry) {
                match key.get_ref().as_ref() {
                    "name" => name = Some((self.string("env.name", value)?, value.span())),
                    "value" => match value.get_ref() {
                        DeValue::String(s) if s.contains('\0') => {
                            let reason = "the value contains a NUL character, which cannot be \
                                          passed in an environment";
                            return Err(self.invalid(value.span(), "env.value", reason));
                        }
                        DeValue::String(s) => val = Some(s.to_string()),
                        other => {
                            let reason = format!("expected a string, got {}", other.type_str());
                            return Err(self.invalid(value.span(), "env.value", reason));
                        }
                    },
                    _ => return Err(self.unknown(key, "env", ENV_KEYS)),
                }
            }
            let missing = |what| {
                let reason =
                    format!("the entry has no '{what}' (each [[env]] needs a name and a value)");
                self.invalid(item.span(), "env", reason)
            };
            let (name, span) = name.ok_or_else(|| missing("name"))?;
            let value = val.ok_or_else(|| missing("value"))?;
            check_env_name(&name).map_err(|r| self.invalid(span.clone(), "env.name", r))?;
            if let Some(first) = vars.iter().position(|var| var.name == name) {
                let first_line = self.at(Some(spans[first].clone())).line.unwrap_or(0);
                let reason = format!(
                    "'{name}' is already set by the [[env]] entry on line {first_line} \
                     (keep one of them)"
                );
                return Err(self.invalid(span, "env.name", reason));
            }
            vars.push(EnvVar { name, value });
            spans.push(span);
        }
        Ok((vars, spans))
    }

    /// The `[[hosts]]` entries.
    fn hosts(&self, value: &Spanned<DeValue<'_>>) -> Result<Vec<Host>, ConfigError> {
        let DeValue::Array(items) = value.get_ref() else {
            return Err(self.mismatch("hosts", value, "[[hosts]] tables with a name"));
        };
        let mut hosts: Vec<Host> = Vec::new();
        for item in items.iter() {
            let entry = self.table("hosts", "[[hosts]]", item)?;
            let (mut name, mut address, mut hm) = (None, None, None);
            for (key, value) in in_file_order(entry) {
                let full = format!("hosts.{}", key.get_ref());
                if !HOST_KEYS.contains(&key.get_ref().as_ref()) {
                    return Err(self.unknown(key, "hosts", HOST_KEYS));
                }
                let text = self.string(&full, value)?;
                match key.get_ref().as_ref() {
                    "name" => name = Some(text),
                    "address" => {
                        let parsed = Host::parse(&text)
                            .map_err(|e| self.invalid(value.span(), &full, e.to_string()))?;
                        address = Some(parsed);
                    }
                    "hm" => {
                        if text.trim().is_empty() || text.contains(['\0', '\'', '"', ' ']) {
                            let reason = "give a command name or a path without quotes or spaces";
                            return Err(self.invalid(value.span(), &full, reason));
                        }
                        hm = Some(text);
                    }
                    _ => return Err(self.unknown(key, "hosts", HOST_KEYS)),
                }
            }
            let Some(name) = name else {
                let reason = "the entry has no 'name'";
                return Err(self.invalid(item.span(), "hosts", reason));
            };
            if hosts.iter().any(|h| h.name == name) {
                let reason = format!("a second host named '{name}'");
                return Err(self.invalid(item.span(), "hosts", reason));
            }
            let address = match address {
                Some(a) => a,
                None => Host::parse(&name)
                    .map_err(|e| self.invalid(item.span(), "hosts", e.to_string()))?,
            };
            hosts.push(Host {
                name,
                hm: hm.unwrap_or_else(|| "hm".to_owned()),
                ..address
            });
        }
        Ok(hosts)
    }

    /// The `[[notify]]` entries.
    fn notify(&self, value: &Spanned<DeValue<'_>>) -> Result<Vec<NotifyRule>, ConfigError> {
        let DeValue::Array(items) = value.get_ref() else {
            return Err(self.mismatch("notify", value, "[[notify]] tables with a command"));
        };
        let mut rules = Vec::new();
        for item in items.iter() {
            let entry = self.table("notify", "[[notify]]", item)?;
            let mut rule = NotifyRule {
                command: String::new(),
                on: NOTIFY_EVENTS.iter().map(|e| (*e).to_owned()).collect(),
                min_interval_ms: DEFAULT_NOTIFY_INTERVAL_MS,
                after_ms: 0,
            };
            let mut has_command = false;
            let mut after = None;
            for (key, value) in in_file_order(entry) {
                let full = format!("notify.{}", key.get_ref());
                match key.get_ref().as_ref() {
                    "command" => {
                        rule.command = self.string(&full, value)?;
                        if rule.command.trim().is_empty() || rule.command.contains('\0') {
                            let reason = "the command is empty or holds a NUL character";
                            return Err(self.invalid(value.span(), &full, reason));
                        }
                        has_command = true;
                    }
                    "on" => {
                        let DeValue::Array(events) = value.get_ref() else {
                            return Err(self.mismatch(
                                &full,
                                value,
                                "a list such as [\"waiting\", \"exited\"]",
                            ));
                        };
                        rule.on.clear();
                        for e in events.iter() {
                            let name = self.string(&full, e)?;
                            if !NOTIFY_EVENTS.contains(&name.as_str()) {
                                let reason = format!(
                                    "unknown event '{name}' (expected one of: {})",
                                    NOTIFY_EVENTS.join(", ")
                                );
                                return Err(self.invalid(e.span(), &full, reason));
                            }
                            rule.on.push(name);
                        }
                    }
                    "min_interval_ms" => {
                        rule.min_interval_ms =
                            self.integer(&full, value, 0..=86_400_000, "milliseconds")?;
                    }
                    "after_ms" => {
                        rule.after_ms =
                            self.integer(&full, value, 0..=86_400_000, "milliseconds")?;
                        after = Some(value.span());
                    }
                    _ => return Err(self.unknown(key, "notify", NOTIFY_KEYS)),
                }
            }
            // Nobody is left to wait for after the end: its supervisor
            // ends with it.
            if let Some(span) = after
                && rule.after_ms > 0
                && rule.on.iter().any(|e| e == "exited")
            {
                let reason = "after_ms delays 'waiting' and 'finished', not 'exited' \
                              (give 'on' without it)";
                return Err(self.invalid(span, "notify.after_ms", reason));
            }
            if !has_command {
                let reason = "the entry has no 'command' (each [[notify]] runs one)";
                return Err(self.invalid(item.span(), "notify", reason));
            }
            rules.push(rule);
        }
        Ok(rules)
    }

    fn tui(&self, value: &Spanned<DeValue<'_>>) -> Result<TuiConfig, ConfigError> {
        let mut tui = TuiConfig::default();
        for (key, value) in in_file_order(self.table("tui", "[tui]", value)?) {
            let full = format!("tui.{}", key.get_ref());
            match key.get_ref().as_ref() {
                "theme" => {
                    let theme = self.string(&full, value)?;
                    if theme.is_empty() {
                        let reason =
                            "the theme name is empty (remove the key for the built-in theme)";
                        return Err(self.invalid(value.span(), &full, reason));
                    }
                    // Checked with the rest of the file, whatever the
                    // command: `hm ls` took a theme only `hm tui` refused.
                    if let Err(e) = crate::theme::Theme::by_name(&theme) {
                        return Err(self.invalid(value.span(), &full, e.to_string()));
                    }
                    tui.theme = Some(theme);
                    tui.theme_at = Some(self.at(Some(value.span())));
                }
                "fit_sessions" => tui.fit_sessions = self.boolean(&full, value)?,
                "session_size" => {
                    let text = self.string(&full, value)?;
                    tui.session_size = super::tui::parse_size(&text).ok_or_else(|| {
                        let reason = format!(
                            "'{text}' is not COLSxROWS (for example \"120x40\", each 1 to 4096)"
                        );
                        self.invalid(value.span(), &full, reason)
                    })?;
                }
                "bell" => tui.bell = self.boolean(&full, value)?,
                "columns" => {
                    tui.columns = Some(self.integer(&full, value, 1..=16, "columns")? as u16)
                }
                "desktop_notify" => {
                    tui.desktop_notify = match self.string(&full, value)?.as_str() {
                        "osc9" => Some(DesktopNotify::Osc9),
                        "osc777" => Some(DesktopNotify::Osc777),
                        "off" => None,
                        other => {
                            let reason = format!("'{other}' is not one of osc9, osc777 or off");
                            return Err(self.invalid(value.span(), &full, reason));
                        }
                    };
                }
                "keys" => tui.keys = self.tui_keys(value)?,
                _ => return Err(self.unknown(key, "tui", TUI_KEYS)),
            }
        }
        Ok(tui)
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::config::Location;
    use crate::config::test_file::{FILE, err, ok};

    fn file_defaults() -> Config {
        Config {
            source: Some(PathBuf::from(FILE)),
            ..Config::defaults()
        }
    }

    /// The example with every `# key = value` and `# [table]` line uncommented.
    fn uncommented_example() -> String {
        let example = include_str!("../../heimdall.toml.example");
        let mut out = String::new();
        for line in example.lines() {
            let rest = line.strip_prefix("# ").unwrap_or("");
            let is_header = rest.starts_with('[') && rest.ends_with(']');
            let is_setting = rest.split_once(" = ").is_some_and(|(key, _)| {
                !key.is_empty() && key.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
            });
            out.push_str(if is_header || is_setting { rest } else { line });
            out.push('\n');
        }
        out
    }

    #[test]
    fn example_file_as_shipped_is_the_defaults() {
        let example = include_str!("../../heimdall.toml.example");
        assert_eq!(ok(example), file_defaults());
    }

    #[test]
    fn example_file_with_every_setting_uncommented_parses_to_the_documented_defaults() {
        let text = uncommented_example();
        let mut config = ok(&text);
        assert!(text.contains("\n[classifier.simple]\n"), "{text}");
        assert!(text.contains("\n[tui]\n"), "{text}");
        // The examples that are not defaults, because the default is not a value.
        assert_eq!(
            config.socket_dir,
            Some(PathBuf::from("/home/u/.local/state/heimdall"))
        );
        assert_eq!(config.log_file, Some(PathBuf::from("/dev/null")));
        assert_eq!(
            config.env,
            vec![EnvVar {
                name: "EDITOR".into(),
                value: "vim".into()
            }]
        );
        assert_eq!(config.notify.len(), 1, "{text}");
        assert_eq!(config.notify[0].on, vec!["waiting", "finished", "exited"]);
        assert_eq!(config.notify[0].min_interval_ms, DEFAULT_NOTIFY_INTERVAL_MS);
        config.notify.clear();
        assert_eq!(config.ssh_command.as_deref(), Some("ssh"));
        config.ssh_command = None;
        assert_eq!(
            config.hosts,
            vec![Host {
                name: "box".into(),
                destination: "me@box.lan".into(),
                port: Some(2222),
                hm: "hm".into(),
            }]
        );
        config.hosts.clear();
        assert_eq!(config.automation.len(), 1, "{text}");
        assert_eq!(
            config.automation[0].dwell_ms,
            crate::config::DEFAULT_DWELL_MS
        );
        config.automation.clear();
        config.socket_dir = None;
        config.log_file = None;
        config.env.clear();
        // Writing the default classifier out chooses it (known agents then
        // keep it instead of getting `agent`).
        assert!(config.classifier_chosen);
        config.classifier_chosen = false;
        // Writing the history depth out fixes it (panes no longer share).
        assert!(config.history_lines_set);
        config.history_lines_set = false;
        assert_eq!(config, file_defaults());
    }

    #[test]
    fn empty_file_is_the_defaults_with_its_source() {
        assert_eq!(ok(""), file_defaults());
        assert_eq!(Config::defaults().source, None);
        assert_eq!(Config::default(), Config::defaults());
    }

    #[test]
    fn hosts_take_a_name_an_address_and_an_hm() {
        let c = ok(
            "ssh_command = 'ssh -F x'\n[[hosts]]\nname = \"box\"\n[[hosts]]\nname = \"b2\"\naddress = \"me@b2:22\"\nhm = \"/opt/hm\"\n",
        );
        assert_eq!(c.ssh_command.as_deref(), Some("ssh -F x"));
        assert_eq!(
            (c.hosts[0].destination.as_str(), c.hosts[0].port),
            ("box", None)
        );
        assert_eq!(c.hosts[1].hm, "/opt/hm");
        assert_eq!(
            (c.hosts[1].destination.as_str(), c.hosts[1].port),
            ("me@b2", Some(22))
        );
        assert!(err("[[hosts]]\naddress = \"box\"\n").contains(":1: invalid value for 'hosts'"));
        assert!(
            err("[[hosts]]\nname = \"a\"\naddress = \"-oProxyCommand=x\"\n")
                .contains(":3: invalid value for 'hosts.address'")
        );
        assert!(
            err("[[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"a\"\n")
                .contains("a second host named 'a'")
        );
        assert!(err("[[hosts]]\nname = \"a\"\nport = 2\n").contains("unknown key 'hosts.port'"));
        assert!(err("ssh_command = ' '\n").contains("ssh_command"));
    }

    /// `after_ms` delays an entry's `waiting` and `finished`; an end has
    /// nobody left to wait for, and an entry that would tell it late is
    /// refused where it says so.
    #[test]
    fn notify_after_ms_delays_waiting_and_finished_only() {
        let c = ok("[[notify]]\ncommand = 'true'\non = [\"waiting\"]\nafter_ms = 600000\n");
        assert_eq!(c.notify[0].after_ms, 600_000);
        assert_eq!(ok("[[notify]]\ncommand = 'true'\n").notify[0].after_ms, 0);
        let e = err("[[notify]]\ncommand = 'true'\nafter_ms = 5000\n");
        assert!(
            e.contains(":3: invalid value for 'notify.after_ms': after_ms delays 'waiting' and 'finished', not 'exited'"),
            "{e}"
        );
        let on = ok("[[notify]]\ncommand = 'true'\nafter_ms = 0\n").notify[0]
            .on
            .len();
        assert_eq!(on, 3);
        assert!(
            err("[[notify]]\ncommand = 'true'\non = [\"waiting\"]\nafter_ms = -1\n")
                .contains("notify.after_ms")
        );
    }

    #[test]
    fn notify_entries_take_a_command_events_and_an_interval() {
        let c = ok(
            "[[notify]]\ncommand = 'notify-send hm \"$HM_SESSION_ID\"'\non = [\"waiting\"]\nmin_interval_ms = 0\n\n[[notify]]\ncommand = 'true'\n",
        );
        assert_eq!(c.notify.len(), 2);
        assert_eq!(c.notify[0].on, vec!["waiting"]);
        assert_eq!(c.notify[0].min_interval_ms, 0);
        assert_eq!(c.notify[1].on, vec!["waiting", "finished", "exited"]);
        assert_eq!(c.notify[1].min_interval_ms, DEFAULT_NOTIFY_INTERVAL_MS);
        assert!(
            err("[[notify]]\non = [\"exited\"]\n")
                .contains(":1: invalid value for 'notify': the entry has no 'command'")
        );
        assert!(
            err("[[notify]]\ncommand = 'x'\nwhen = 1\n").contains(":3: unknown key 'notify.when'")
        );
        assert!(
            err("[[notify]]\ncommand = 'x'\non = [\"done\"]\n").contains("unknown event 'done'")
        );
    }

    #[test]
    fn restore_keys_take_their_ranges() {
        let c = ok("restore_history_bytes = 0\nrestore_parallel = 16");
        assert_eq!((c.restore_history_bytes, c.restore_parallel), (0, 16));
        let d = ok("");
        assert_eq!((d.restore_history_bytes, d.restore_parallel), (262_144, 4));
        assert!(
            err("restore_parallel = 0")
                .contains("'restore_parallel': 0 is out of range (expected 1 to 64 sessions)")
        );
        assert!(err("restore_history_bytes = 67108865").contains("is out of range"));
    }

    #[test]
    fn unknown_top_level_key_lists_the_valid_ones() {
        let e = err("log_level = \"info\"\n\nscrollback = 5\n");
        assert_eq!(
            e,
            "/home/u/heimdall.toml:3: unknown key 'scrollback' (did you mean 'scrollback_bytes'?)"
        );
        // Nothing like it: every key it could have been.
        let e = err("log_level = \"info\"\n\nzebra = 5\n");
        assert_eq!(
            e,
            "/home/u/heimdall.toml:3: unknown key 'zebra' (expected one of: socket_dir, \
             scrollback_bytes, session_env_var, kill_process_group, kill_grace_ms, detach_key, \
             copy_key, next_key, attach_key, history_lines, classifier, env, log_file, log_level, tui, notify, ssh_command, hosts, \
             automation, restore_history_bytes, restore_parallel)"
        );
    }

    #[test]
    fn a_duplicate_key_is_named() {
        let e = err("scrollback_bytes = 1\nscrollback_bytes = 2\n");
        assert_eq!(
            e,
            "/home/u/heimdall.toml:2: invalid TOML: duplicate key 'scrollback_bytes'"
        );
        let e = err("[tui]\nbell = true\n[tui]\n");
        assert_eq!(
            e,
            "/home/u/heimdall.toml:3: invalid TOML: duplicate key 'tui'"
        );
    }

    #[test]
    fn unknown_keys_inside_tables_are_errors() {
        let e = err("[tui]\nbell = true\nthem = \"x\"\n");
        assert_eq!(
            e,
            "/home/u/heimdall.toml:3: unknown key 'tui.them' (did you mean 'theme'?)"
        );
        let e = err("[tui]\nbell = true\nwallpaper = \"x\"\n");
        assert_eq!(
            e,
            "/home/u/heimdall.toml:3: unknown key 'tui.wallpaper' (expected one of: theme, \
             fit_sessions, session_size, bell, desktop_notify, columns, keys)"
        );
        let e = err("[[env]]\nname = \"A\"\nvalue = \"b\"\nvalu = \"c\"\n");
        assert!(
            e.contains(":4: unknown key 'env.valu' (did you mean 'value'?)"),
            "{e}"
        );
        let e = err("[classifier.simple]\ndebounce_ms = 5\n");
        assert!(
            e.contains(":2: unknown key 'classifier.simple.debounce_ms' (expected one of: idle_threshold_ms)"),
            "{e}"
        );
        let e = err("[classifier.claude]\nidle = 5\n");
        assert!(
            e.contains("unknown key 'classifier.claude.idle' (expected one of: idle_threshold_ms, debounce_ms)"),
            "{e}"
        );
        let e = err("[classifier.none]\nidle_threshold_ms = 5\n");
        assert!(
            e.contains(":2: unknown key 'classifier.none.idle_threshold_ms' ('classifier.none' takes no keys)"),
            "{e}"
        );
    }

    #[test]
    fn socket_dir_expands_tilde_and_keeps_other_paths_as_written() {
        let dir = |v: &str| ok(&format!("socket_dir = \"{v}\"")).socket_dir;
        assert_eq!(dir("~"), Some(PathBuf::from("/home/u")));
        assert_eq!(dir("~/s"), Some(PathBuf::from("/home/u/s")));
        assert_eq!(dir("/run/x"), Some(PathBuf::from("/run/x")));
        assert_eq!(dir("rel/x"), Some(PathBuf::from("rel/x")));
        assert_eq!(dir("a/~/b"), Some(PathBuf::from("a/~/b")));
    }

    #[test]
    fn socket_dir_rejects_empty_tilde_user_and_non_strings() {
        let e = err("socket_dir = \"\"");
        assert_eq!(
            e,
            "/home/u/heimdall.toml:1: invalid value for 'socket_dir': the path is empty \
             (remove the key to use the default)"
        );
        let e = err("socket_dir = \"~bob/x\"");
        assert!(
            e.contains("'socket_dir'") && e.contains("not '~user'"),
            "{e}"
        );
        let e = err("\nsocket_dir = 5");
        assert_eq!(
            e,
            "/home/u/heimdall.toml:2: invalid value for 'socket_dir': expected a string, got the integer 5"
        );
        let e = err("socket_dir = \"a\\u0000b\"");
        assert!(e.contains("NUL"), "{e}");
    }

    #[test]
    fn tilde_without_home_is_an_error_that_says_so() {
        let e = Config::parse("log_file = \"~/x.log\"", Path::new(FILE), None)
            .expect_err("no HOME")
            .to_string();
        assert_eq!(
            e,
            "/home/u/heimdall.toml:1: invalid value for 'log_file': '~/x.log' needs HOME, which \
             is not set to an absolute path (write the full path)"
        );
        let abs = Config::parse("log_file = \"/x.log\"", Path::new(FILE), None).expect("no ~");
        assert_eq!(abs.log_file, Some(PathBuf::from("/x.log")));
    }

    #[test]
    fn log_file_expands_tilde() {
        assert_eq!(
            ok("log_file = \"~/l/hm.log\"").log_file,
            Some(PathBuf::from("/home/u/l/hm.log"))
        );
        assert!(err("log_file = true").contains("'log_file': expected a string, got true"));
    }

    #[test]
    fn scrollback_bytes_accepts_zero_to_one_gib() {
        assert_eq!(ok("scrollback_bytes = 0").scrollback_bytes, 0);
        assert_eq!(ok("scrollback_bytes = 1_048_576").scrollback_bytes, 1 << 20);
        assert_eq!(ok("scrollback_bytes = 0x400").scrollback_bytes, 1024);
        assert_eq!(
            ok("scrollback_bytes = 1073741824").scrollback_bytes,
            MAX_SCROLLBACK_BYTES
        );
        assert_eq!(
            err("scrollback_bytes = 1073741825"),
            "/home/u/heimdall.toml:1: invalid value for 'scrollback_bytes': 1073741825 is out \
             of range (expected 0 to 1073741824 bytes)"
        );
        assert!(err("scrollback_bytes = -1").contains("'scrollback_bytes': -1 is out of range"));
        assert!(
            err("scrollback_bytes = 99999999999999999999999999999999999999999")
                .contains("out of range")
        );
        assert!(err("scrollback_bytes = \"64k\"").contains(
            "'scrollback_bytes': expected an integer from 0 to 1073741824, got the string '64k'"
        ));
        assert!(err("scrollback_bytes = 1.5").contains("got the float 1.5"));
    }

    #[test]
    fn session_env_var_must_be_a_valid_name() {
        assert_eq!(ok("session_env_var = \"HM_ID\"").session_env_var, "HM_ID");
        assert_eq!(ok("session_env_var = \"_x1\"").session_env_var, "_x1");
        for bad in ["", "1X", "A-B", "A=B", "É"] {
            let e = err(&format!("session_env_var = \"{bad}\""));
            assert!(
                e.contains("invalid value for 'session_env_var'")
                    && e.contains("is not a valid environment variable name"),
                "{e}"
            );
        }
    }

    #[test]
    fn kill_settings() {
        let c = ok("kill_process_group = false\nkill_grace_ms = 0");
        assert!(!c.kill_process_group);
        assert_eq!(c.kill_grace_ms, 0);
        assert_eq!(ok("kill_grace_ms = 600000").kill_grace_ms, 600_000);
        assert!(err("kill_grace_ms = 600001").contains(
            "'kill_grace_ms': 600001 is out of range (expected 0 to 600000 milliseconds)"
        ));
        assert!(
            err("kill_process_group = \"yes\"")
                .contains("'kill_process_group': expected true or false, got the string 'yes'")
        );
    }

    #[test]
    fn classifier_string_form() {
        assert_eq!(ok("classifier = \"none\"").classifier, ClassifierSpec::None);
        assert_eq!(
            ok("classifier = \"claude\"").classifier,
            ClassifierSpec::Claude {
                idle_threshold_ms: 3000,
                debounce_ms: 200
            }
        );
        assert_eq!(
            ok("classifier = \"simple\"").classifier,
            ClassifierSpec::default()
        );
        assert_eq!(
            err("classifier = \"Simple\""),
            "/home/u/heimdall.toml:1: invalid value for 'classifier': unknown classifier \
             'Simple' (expected one of: simple, claude, agent, none)"
        );
        assert!(err("classifier = 3").contains("'classifier': expected \"simple\", \"claude\", \"agent\", \"none\" or a [classifier.<name>] table, got the integer 3"));
    }

    #[test]
    fn classifier_table_form() {
        let c = ok("[classifier.simple]\nidle_threshold_ms = 500\n");
        assert_eq!(
            c.classifier,
            ClassifierSpec::Simple {
                idle_threshold_ms: 500
            }
        );
        let c = ok("[classifier.claude]\ndebounce_ms = 0\n");
        assert_eq!(
            c.classifier,
            ClassifierSpec::Claude {
                idle_threshold_ms: 3000,
                debounce_ms: 0
            }
        );
        let c = ok("[classifier.claude]\nidle_threshold_ms = 86400000\ndebounce_ms = 60000\n");
        assert_eq!(
            c.classifier,
            ClassifierSpec::Claude {
                idle_threshold_ms: 86_400_000,
                debounce_ms: 60_000
            }
        );
        assert_eq!(ok("[classifier.none]\n").classifier, ClassifierSpec::None);
        assert_eq!(
            ok("classifier = { simple = {} }").classifier,
            ClassifierSpec::default()
        );
        assert_eq!(
            ok("[classifier]\nclaude = { debounce_ms = 7 }").classifier,
            ClassifierSpec::Claude {
                idle_threshold_ms: 3000,
                debounce_ms: 7
            }
        );
    }

    #[test]
    fn agent_classifier_takes_its_settings() {
        let c = ok(
            "[classifier.agent]\nstuck_after_ms = 5000\nprocess_evidence = false\nstatus_protocol = false\nhooks = false\n",
        );
        assert_eq!(
            c.classifier,
            ClassifierSpec::Agent {
                idle_threshold_ms: 3000,
                stuck_after_ms: 5000,
                process_evidence: false,
                status_protocol: false,
                hooks: false,
            }
        );
        assert!(c.classifier_chosen);
        assert!(!ok("").classifier_chosen);
        assert!(err("[classifier.agent]\nstuck_after_ms = 5\n").contains(
            ":2: invalid value for 'classifier.agent.stuck_after_ms': 5 is out of range"
        ));
        assert!(err("[classifier.agent]\ndebounce_ms = 5\n").contains(
            "unknown key 'classifier.agent.debounce_ms' (expected one of: idle_threshold_ms, stuck_after_ms, process_evidence, status_protocol, hooks)"
        ));
    }

    #[test]
    fn classifier_table_errors() {
        let e = err("[classifier.simple]\n[classifier.claude]\n");
        assert_eq!(
            e,
            "/home/u/heimdall.toml:2: invalid value for 'classifier': the classifier table must \
             have exactly one key (simple, claude, agent or none), got 2 (keep a single \
             [classifier.<name>] table)"
        );
        assert!(
            err("classifier = {}")
                .contains("exactly one key (simple, claude, agent or none), got 0")
        );
        assert!(err("[classifier.fancy]\n").contains(
            ":1: unknown key 'classifier.fancy' (expected one of: simple, claude, agent, none)"
        ));
        assert!(err("[classifier]\nsimple = 3\n").contains(
            ":2: invalid value for 'classifier.simple': expected a [classifier.simple] table, got the integer 3"
        ));
        assert!(
            err("[classifier.simple]\nidle_threshold_ms = 0\n").contains(
                ":2: invalid value for 'classifier.simple.idle_threshold_ms': 0 is out of range \
             (expected 1 to 86400000 milliseconds)"
            )
        );
        assert!(err("[classifier.claude]\ndebounce_ms = 60001\n").contains(
            "'classifier.claude.debounce_ms': 60001 is out of range (expected 0 to 60000 milliseconds)"
        ));
        // Both forms at once is a duplicate key in TOML itself.
        assert!(err("classifier = \"simple\"\n[classifier.simple]\n").contains("invalid TOML"));
    }

    #[test]
    fn env_entries_keep_file_order() {
        let c = ok(concat!(
            "[[env]]\nname = \"B\"\nvalue = \"2\"\n",
            "[[env]]\nvalue = \"\"\nname = \"A\"\n",
        ));
        let names: Vec<_> = c
            .env
            .iter()
            .map(|v| (v.name.as_str(), v.value.as_str()))
            .collect();
        assert_eq!(names, [("B", "2"), ("A", "")]);
        let inline = ok("env = [{ name = \"X\", value = \"y\" }]");
        assert_eq!(inline.env.len(), 1);
    }

    #[test]
    fn env_errors_never_show_the_value() {
        let secret = "hunter2";
        let cases = [
            format!("[[env]]\nvalue = \"{secret}\"\n"),
            format!("[[env]]\nname = \"1BAD\"\nvalue = \"{secret}\"\n"),
            format!("[[env]]\nname = \"A\"\nvalue = \"{secret}\\u0000\"\n"),
            "[[env]]\nname = \"A\"\nvalue = 271828\n".to_owned(),
            format!("[[env]]\nname = \"A\"\nvalue = \"{secret}\"\nextra = \"{secret}\"\n"),
        ];
        for text in &cases {
            let e = err(text);
            assert!(!e.contains(secret) && !e.contains("271828"), "{e}");
            assert!(e.starts_with("/home/u/heimdall.toml:"), "{e}");
        }
        assert!(err(&cases[0]).contains(":1: invalid value for 'env': the entry has no 'name'"));
        assert!(err("[[env]]\nname = \"A\"\n").contains("the entry has no 'value'"));
        assert!(err(&cases[1]).contains(":2: invalid value for 'env.name': '1BAD' is not a valid"));
        assert!(
            err(&cases[2]).contains(":3: invalid value for 'env.value': the value contains a NUL")
        );
        assert!(err(&cases[3]).contains("'env.value': expected a string, got integer"));
        assert!(err("env = 3").contains("'env': expected [[env]] tables"));
        assert!(err("env = [3]").contains("'env': expected a [[env]] table, got the integer 3"));
    }

    #[test]
    fn duplicate_env_names_are_refused() {
        let e =
            err("[[env]]\nname = \"A\"\nvalue = \"1\"\n\n[[env]]\nname = \"A\"\nvalue = \"2\"\n");
        assert_eq!(
            e,
            "/home/u/heimdall.toml:6: invalid value for 'env.name': 'A' is already set by the \
             [[env]] entry on line 2 (keep one of them)"
        );
    }

    #[test]
    fn env_cannot_set_the_session_env_var() {
        let e = err("[[env]]\nname = \"HEIMDALL_SESSION_ID\"\nvalue = \"x\"\n");
        assert!(
            e.contains(
                ":2: invalid value for 'env.name': 'HEIMDALL_SESSION_ID' is the session_env_var"
            ),
            "{e}"
        );
        let e = err("session_env_var = \"S\"\n[[env]]\nname = \"S\"\nvalue = \"x\"\n");
        assert!(e.contains(":3: invalid value for 'env.name': 'S'"), "{e}");
        ok("session_env_var = \"S\"\n[[env]]\nname = \"HEIMDALL_SESSION_ID\"\nvalue = \"x\"\n");
    }

    #[test]
    fn tui_table() {
        let c = ok(
            "[tui]\ntheme = \"dark\"\nfit_sessions = true\nsession_size = \"100x30\"\nbell = true\ndesktop_notify = \"osc777\"\ncolumns = 3\n",
        );
        assert_eq!(
            c.tui,
            TuiConfig {
                theme: Some("dark".into()),
                theme_at: Some(Location {
                    path: c.source.clone().expect("a file"),
                    line: Some(2),
                }),
                fit_sessions: true,
                session_size: (100, 30),
                bell: true,
                desktop_notify: Some(DesktopNotify::Osc777),
                columns: Some(3),
                keys: crate::config::Keymap::default(),
            }
        );
        assert_eq!(
            c.tui.bad_theme("no such theme").to_string(),
            format!(
                "{}:2: invalid value for 'tui.theme': no such theme",
                c.source.as_ref().expect("a file").display()
            )
        );
        assert!(
            err("[tui]\ntheme = \"\"\n")
                .contains(":2: invalid value for 'tui.theme': the theme name is empty")
        );
        // Refused by every command that reads the file, not by `hm tui`
        // alone.
        assert!(err("[tui]\ntheme = \"neon\"\n").contains(
            ":2: invalid value for 'tui.theme': unknown theme 'neon' (available: dark, light, \
                 high-contrast)"
        ));
        assert!(
            err("[tui]\nbell = 1\n")
                .contains("'tui.bell': expected true or false, got the integer 1")
        );
        assert!(
            err("tui = \"dark\"").contains("'tui': expected a [tui] table, got the string 'dark'")
        );
    }
}
