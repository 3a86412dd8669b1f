//! Installing `hm hook` into an agent for one session, without touching
//! the user's files, and the snippets `hm setup` prints for agents started
//! elsewhere.
//!
//! - Claude Code: `--settings FILE`, a settings file of hooks only. Claude
//!   merges it over the user's settings and concatenates hook lists, so
//!   the user's own hooks still run.
//! - Codex CLI: `-c notify=[...]`, its program run when a turn ends (the
//!   JSON is its last argument). Codex has one `notify`, so a user's own
//!   is run by `hm hook` after the report (`--then`).
//! - Gemini CLI: `GEMINI_CLI_SYSTEM_SETTINGS_PATH`, a system settings file
//!   made of the real one (if any) with the hooks added.
//!
//! The files live in the socket directory (0600, beside the session's
//! socket) and go with the session's record (`hm rm`, `hm clean`), not
//! when it ends: the command Claude Code prints on its way out to resume
//! the conversation names its `--settings` file.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::launch::shell_quote;
use crate::pty::SpawnSpec;

/// Claude Code's events that say something of the session's state (see
/// [`crate::detect::hooks::Report::state`]).
const CLAUDE_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "PermissionDenied",
    "Notification",
    "Stop",
    "StopFailure",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "Elicitation",
];

/// Gemini CLI's events, likewise.
const GEMINI_EVENTS: &[&str] = &[
    "SessionStart",
    "BeforeAgent",
    "AfterAgent",
    "BeforeTool",
    "AfterTool",
    "PreCompress",
    "Notification",
];

/// Where Gemini CLI reads its system settings when the variable is unset.
const GEMINI_SYSTEM_SETTINGS: &str = "/etc/gemini-cli/settings.json";
const GEMINI_SETTINGS_ENV: &str = "GEMINI_CLI_SYSTEM_SETTINGS_PATH";

/// The agents hooks are installed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    Claude,
    Codex,
    Gemini,
}

impl Agent {
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
        }
    }

    pub fn from_name(name: &str) -> Option<Agent> {
        [Agent::Claude, Agent::Codex, Agent::Gemini]
            .into_iter()
            .find(|a| a.name() == name)
    }

    /// The agent a command runs, by its file name (npm installs
    /// `claude.exe` and `codex.js` behind the plain names).
    pub fn of_program(program: &std::ffi::OsStr) -> Option<Agent> {
        let name = Path::new(program).file_name()?.to_str()?;
        let name = [".exe", ".js", ".mjs", ".cjs"]
            .into_iter()
            .find_map(|ext| name.strip_suffix(ext))
            .unwrap_or(name);
        Agent::from_name(name)
    }
}

/// The hook command line for `agent`, with `hm` at `hm`, reporting to
/// `socket` (or, without one, to the session `HM_SOCKET` names).
pub fn hook_command(hm: &Path, agent: Agent, socket: Option<&Path>) -> String {
    let mut cmd = format!(
        "{} hook {}",
        shell_quote(&hm.to_string_lossy()),
        agent.name()
    );
    if let Some(sock) = socket {
        cmd.push_str(" --socket ");
        cmd.push_str(&shell_quote(&sock.to_string_lossy()));
    }
    cmd
}

/// Where session `id`'s hook settings file goes in socket dir `dir`.
pub fn settings_file(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.hooks.json"))
}

/// Variables as `(name, value)`.
pub type Vars = Vec<(OsString, OsString)>;

/// The agent a command runs, and where its own arguments start in
/// `spawn.args`: the program itself, or the one an `env` runs
/// (`env [-i] [-u NAME] [NAME=VALUE]... agent ARGS`), with the variables
/// that `env` sets.
fn agent_of(spawn: &SpawnSpec) -> Option<(Agent, usize, Vars)> {
    agent_in(&spawn.program, &spawn.args)
}

/// The agent `program args` runs, where its own arguments start in
/// `args`, and what an `env` in front sets (see [`agent_of`]); also how
/// `hm restore` finds the agent to resume.
pub fn agent_in(program: &std::ffi::OsStr, args: &[OsString]) -> Option<(Agent, usize, Vars)> {
    if let Some(agent) = Agent::of_program(program) {
        return Some((agent, 0, Vec::new()));
    }
    if Path::new(program).file_name()? != "env" {
        return None;
    }
    let mut set = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let a = arg.to_str()?;
        match a {
            "-i" | "--ignore-environment" | "-" => i += 1,
            "-u" => i += 2,
            "--" => {
                let program = args.get(i + 1)?;
                return Some((Agent::of_program(program)?, i + 2, set));
            }
            _ if a.starts_with("--unset=") => i += 1,
            _ if a.starts_with('-') => return None,
            _ => match a.split_once('=') {
                Some((k, v)) => {
                    set.push((k.into(), v.into()));
                    i += 1;
                }
                None => return Some((Agent::of_program(arg)?, i + 1, set)),
            },
        }
    }
    None
}

/// A `hooks` object (Claude Code's and Gemini CLI's shape) running
/// `command` on each of `events`, given up on after `timeout` (seconds
/// for Claude Code, milliseconds for Gemini CLI).
fn hooks_object(events: &[&str], command: &str, timeout: u64) -> Value {
    let entry = json!([{
        "matcher": "*",
        "hooks": [{"type": "command", "command": command, "timeout": timeout}],
    }]);
    Value::Object(
        events
            .iter()
            .map(|e| ((*e).to_owned(), entry.clone()))
            .collect(),
    )
}

/// The TOML array Codex's `notify` takes, running `hm hook codex` and
/// then `then` (the user's own notify program), if any.
fn codex_notify(hm: &Path, socket: Option<&Path>, then: &[String]) -> String {
    let mut argv = vec![
        hm.to_string_lossy().into_owned(),
        "hook".into(),
        "codex".into(),
    ];
    if let Some(sock) = socket {
        argv.push("--socket".into());
        argv.push(sock.to_string_lossy().into_owned());
    }
    if !then.is_empty() {
        argv.push("--then".into());
        argv.extend(then.iter().cloned());
    }
    let quoted: Vec<String> = argv
        .iter()
        .map(|a| toml::Value::String(a.clone()).to_string())
        .collect();
    format!("[{}]", quoted.join(", "))
}

/// Codex's own directory: `$CODEX_HOME`, else `~/.codex`, as `var` reads
/// the environment.
pub fn codex_home(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    var("CODEX_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".codex")))
}

/// The user's own Codex `notify` program, from `$CODEX_HOME/config.toml`
/// (default `~/.codex`).
fn codex_user_notify(env: &[(OsString, OsString)]) -> Vec<String> {
    let var = |name: &str| {
        env.iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var_os(name))
    };
    let home = codex_home(var);
    let Some(text) = home.and_then(|h| std::fs::read_to_string(h.join("config.toml")).ok()) else {
        return Vec::new();
    };
    let Ok(table) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    table
        .get("notify")
        .and_then(toml::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Writes `bytes` to `path` whole and private: a temporary file renamed
/// into place.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension("tmp");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// What installing hooks did: the spawn to use, and the file to remove
/// when the session ends.
#[derive(Debug)]
pub struct Installed {
    pub spawn: SpawnSpec,
    pub file: Option<PathBuf>,
    /// What was done, for the session's log.
    pub note: String,
}

/// `spawn` with `hm hook` installed for its agent, if it runs one hooks
/// are known for, reporting to `socket`; `file` is where a settings file
/// may go.
pub fn install(
    spawn: &SpawnSpec,
    hm: &Path,
    socket: &Path,
    file: &Path,
) -> std::io::Result<Option<Installed>> {
    let Some((agent, at, wrapper_env)) = agent_of(spawn) else {
        return Ok(None);
    };
    let mut spawn = spawn.clone();
    let command = hook_command(hm, agent, Some(socket));
    let has_arg = |name: &str| {
        spawn.args[at..].iter().any(|a| {
            let a = a.to_string_lossy();
            a == name || a.starts_with(&format!("{name}="))
        })
    };
    match agent {
        Agent::Claude => {
            // One `--settings` is all Claude Code takes: the user's wins.
            if has_arg("--settings") {
                return Ok(Some(Installed {
                    spawn,
                    file: None,
                    note: "claude: --settings given, hooks not installed".into(),
                }));
            }
            let settings = json!({ "hooks": hooks_object(CLAUDE_EVENTS, &command, 5) });
            write_private(file, settings.to_string().as_bytes())?;
            spawn
                .args
                .splice(at..at, [OsString::from("--settings"), file.into()]);
            Ok(Some(Installed {
                spawn,
                file: Some(file.to_path_buf()),
                note: format!("claude: --settings {}", file.display()),
            }))
        }
        Agent::Codex => {
            let env: Vec<_> = spawn.env.iter().cloned().chain(wrapper_env).collect();
            let then = codex_user_notify(&env);
            let notify = codex_notify(hm, Some(socket), &then);
            spawn.args.splice(
                at..at,
                [OsString::from("-c"), format!("notify={notify}").into()],
            );
            Ok(Some(Installed {
                spawn,
                file: None,
                note: format!("codex: -c notify={notify}"),
            }))
        }
        Agent::Gemini => {
            if let Err(why) = gemini_accepts(file) {
                return Ok(Some(Installed {
                    spawn,
                    file: None,
                    note: format!("gemini: hooks not installed: {why}"),
                }));
            }
            let var = std::env::var_os(GEMINI_SETTINGS_ENV);
            let system = var
                .as_ref()
                .map_or_else(|| PathBuf::from(GEMINI_SYSTEM_SETTINGS), PathBuf::from);
            let mut settings = match std::fs::read_to_string(&system) {
                Ok(text) => match serde_json::from_str::<Value>(&text) {
                    Ok(v @ Value::Object(_)) => v,
                    // A system file hm cannot read as JSON is left to
                    // Gemini: replacing it would lose what it says.
                    _ => {
                        return Ok(Some(Installed {
                            spawn,
                            file: None,
                            note: format!(
                                "gemini: {} is not a JSON object, hooks not installed",
                                system.display()
                            ),
                        }));
                    }
                },
                Err(_) => json!({}),
            };
            merge_hooks(&mut settings, &hooks_object(GEMINI_EVENTS, &command, 5000));
            write_private(file, settings.to_string().as_bytes())?;
            let mut assignment = OsString::from(format!("{GEMINI_SETTINGS_ENV}="));
            assignment.push(file);
            if at == 0 {
                spawn
                    .env
                    .push((GEMINI_SETTINGS_ENV.into(), file.as_os_str().to_owned()));
            } else {
                // An `env -i` in front would clear it: `env` sets it.
                spawn.args.insert(at - 1, assignment);
            }
            Ok(Some(Installed {
                spawn,
                file: Some(file.to_path_buf()),
                note: format!("gemini: {GEMINI_SETTINGS_ENV}={}", file.display()),
            }))
        }
    }
}

/// Whether Gemini CLI would read a system settings file at `file`: it
/// skips one (with a warning on screen) unless the file's directory and
/// every directory above it are owned by root and writable by nobody
/// else (Gemini CLI 0.61, read from its code and seen on screen). So the
/// session's hooks can go there only for a root-run hm with a socket dir
/// outside `/tmp`; otherwise `hm setup gemini` is the way.
fn gemini_accepts(file: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    for dir in file.ancestors().skip(1) {
        if dir.as_os_str().is_empty() {
            continue;
        }
        let meta = std::fs::metadata(dir).map_err(|e| format!("'{}': {e}", dir.display()))?;
        if meta.uid() != 0 {
            return Err(format!(
                "Gemini CLI reads system settings only under root-owned directories, and '{}' is not",
                dir.display()
            ));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(format!(
                "Gemini CLI ignores system settings under '{}', which others may write to",
                dir.display()
            ));
        }
    }
    Ok(())
}

/// Adds `hooks`' entries to `settings["hooks"]`, after any already there.
fn merge_hooks(settings: &mut Value, hooks: &Value) {
    let Some(obj) = settings.as_object_mut() else {
        return;
    };
    let target = obj.entry("hooks").or_insert_with(|| json!({}));
    if !target.is_object() {
        *target = json!({});
    }
    let (Some(target), Some(hooks)) = (target.as_object_mut(), hooks.as_object()) else {
        return;
    };
    for (event, entries) in hooks {
        let list = target.entry(event.clone()).or_insert_with(|| json!([]));
        if !list.is_array() {
            *list = json!([]);
        }
        if let (Some(list), Some(entries)) = (list.as_array_mut(), entries.as_array()) {
            list.extend(entries.iter().cloned());
        }
    }
}

/// Whether Gemini CLI run as `argv` in socket dir `dir` goes without the
/// hooks that tell hm its conversation: hm cannot give it them itself
/// here ([`gemini_automatic`]) and no settings file it reads has them (its
/// user's, `GEMINI_CLI_SYSTEM_SETTINGS_PATH`'s, the system's). Such a
/// session cannot be resumed after a crash or a reboot, which was found
/// out only then. False for any other program.
pub fn gemini_unhooked(argv: &[OsString], dir: &Path) -> bool {
    let Some((program, args)) = argv.split_first() else {
        return false;
    };
    if !matches!(agent_in(program, args), Some((Agent::Gemini, ..))) {
        return false;
    }
    if gemini_automatic(dir).is_ok() {
        return false;
    }
    let user = std::env::var_os("HOME").map(|h| Path::new(&h).join(".gemini/settings.json"));
    let system = std::env::var_os(GEMINI_SETTINGS_ENV).map(PathBuf::from);
    let hooked = [user, system, Some(PathBuf::from(GEMINI_SYSTEM_SETTINGS))]
        .into_iter()
        .flatten()
        .any(|file| std::fs::read_to_string(file).is_ok_and(|t| t.contains(" hook gemini")));
    !hooked
}

/// What is said of a session [`gemini_unhooked`] finds.
pub const GEMINI_UNHOOKED: &str = "Gemini CLI has no hm hooks here, so it cannot be resumed after a crash or a reboot ('hm setup gemini' prints them)";

/// Whether `hm run gemini` in socket dir `dir` can give Gemini CLI its
/// hooks itself (see [`gemini_accepts`]), and if not, why.
pub fn gemini_automatic(dir: &Path) -> Result<(), String> {
    if !nix::unistd::geteuid().is_root() {
        return Err(
            "Gemini CLI reads the settings hm would write only under directories owned by root, and hm runs as you"
                .into(),
        );
    }
    // The dir a supervisor would make (root's, private) or the one there.
    let existing = dir.ancestors().find(|d| d.exists()).unwrap_or(dir);
    gemini_accepts(&existing.join("hooks.json"))
}

/// What `hm setup AGENT` prints: where the set-up goes and what to add.
/// `gemini`: whether `hm run gemini` installs the hooks itself here.
pub fn snippet(agent: Agent, hm: &Path, gemini: Result<(), String>) -> String {
    let command = hook_command(hm, agent, None);
    match agent {
        Agent::Claude => format!(
            "# hm runs Claude Code with these hooks by itself (hm run claude ...).\n\
             # For Claude Code started in a session some other way, merge this into\n\
             # ~/.claude/settings.json (it does nothing outside an hm session):\n{}\n",
            serde_json::to_string_pretty(
                &json!({ "hooks": hooks_object(CLAUDE_EVENTS, &command, 5) })
            )
            .unwrap_or_default()
        ),
        Agent::Codex => format!(
            "# hm runs Codex with this by itself (hm run codex ...). For Codex started\n\
             # in a session some other way, add this line to ~/.codex/config.toml\n\
             # (top level; it does nothing outside an hm session). If you have a\n\
             # notify program already, add \"--then\" and its command to the list.\n\
             notify = {}\n",
            codex_notify(hm, None, &[])
        ),
        Agent::Gemini => {
            let why = match gemini {
                Ok(()) => {
                    "# hm runs Gemini CLI with these hooks by itself here (hm run gemini ...).\n\
                     # For Gemini CLI started in a session some other way, merge this into\n"
                        .to_owned()
                }
                Err(why) => format!(
                    "# hm cannot give Gemini CLI its hooks by itself here: {why}.\n\
                     # So that Gemini CLI in every hm session reports to hm, merge this into\n"
                ),
            };
            format!(
                "{why}# ~/.gemini/settings.json (it does nothing outside an hm session):\n{}\n",
                serde_json::to_string_pretty(
                    &json!({ "hooks": hooks_object(GEMINI_EVENTS, &command, 5000) })
                )
                .unwrap_or_default()
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spawn(program: &str, args: &[&str]) -> SpawnSpec {
        SpawnSpec {
            program: program.into(),
            args: args.iter().map(OsString::from).collect(),
            env: Vec::new(),
            workdir: "/".into(),
            size: crate::protocol::Size { cols: 80, rows: 24 },
        }
    }

    #[test]
    fn claude_gets_a_settings_file_of_hooks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("s.hooks.json");
        let hm = Path::new("/opt/my tools/hm");
        let sock = Path::new("/run/hm/s.sock");
        let done = install(&spawn("/usr/bin/claude", &["-p", "hi"]), hm, sock, &file)
            .expect("installs")
            .expect("an agent");
        let args: Vec<String> = done
            .spawn
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args[..2],
            ["--settings".to_owned(), file.display().to_string()]
        );
        assert_eq!(args[2..], ["-p", "hi"]);
        let v: Value =
            serde_json::from_slice(&std::fs::read(&file).expect("written")).expect("json");
        let cmd = &v["hooks"]["PermissionRequest"][0]["hooks"][0]["command"];
        assert_eq!(
            cmd,
            "'/opt/my tools/hm' hook claude --socket /run/hm/s.sock"
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // The user's own --settings is left alone.
        let own = install(&spawn("claude", &["--settings=x.json"]), hm, sock, &file)
            .expect("ok")
            .expect("an agent");
        assert_eq!(own.spawn.args, [OsString::from("--settings=x.json")]);
        assert!(own.file.is_none());
    }

    #[test]
    fn codex_notify_chains_the_users_own() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("config.toml"),
            "model = \"x\"\nnotify = [\"notify-send\", \"Codex\"]\n",
        )
        .expect("write");
        let mut s = spawn("codex", &["exec"]);
        s.env.push(("CODEX_HOME".into(), dir.path().into()));
        let sock = Path::new("/s.sock");
        let done = install(&s, Path::new("/bin/hm"), sock, &dir.path().join("unused"))
            .expect("ok")
            .expect("an agent");
        assert_eq!(done.spawn.args[0], "-c");
        assert_eq!(
            done.spawn.args[1],
            r#"notify=["/bin/hm", "hook", "codex", "--socket", "/s.sock", "--then", "notify-send", "Codex"]"#
        );
        assert_eq!(done.spawn.args[2], "exec");
    }

    #[test]
    fn other_programs_are_left_alone() {
        let file = Path::new("/nonexistent/x");
        let sock = Path::new("/s.sock");
        assert!(
            install(&spawn("bash", &[]), Path::new("/bin/hm"), sock, file)
                .expect("ok")
                .is_none()
        );
        let wrapped = spawn("env", &["-i", "PATH=/bin", "-u", "X", "sh", "-c", "claude"]);
        assert!(
            install(&wrapped, Path::new("/bin/hm"), sock, file)
                .expect("ok")
                .is_none()
        );
    }

    #[test]
    fn an_agent_behind_env_gets_its_hooks_after_its_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("g.json");
        let s = spawn("/usr/bin/env", &["-i", "HOME=/h", "gemini", "-m", "x"]);
        let done = install(&s, Path::new("/bin/hm"), Path::new("/s.sock"), &file)
            .expect("ok")
            .expect("an agent");
        let args: Vec<String> = done
            .spawn
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        if gemini_accepts(&file).is_ok() {
            let set = format!("{GEMINI_SETTINGS_ENV}={}", file.display());
            assert_eq!(args, ["-i", "HOME=/h", set.as_str(), "gemini", "-m", "x"]);
        } else {
            // Under /tmp Gemini would skip the file: nothing is changed.
            assert_eq!(args, ["-i", "HOME=/h", "gemini", "-m", "x"]);
            assert!(done.note.contains("not installed"), "{}", done.note);
        }
        let s = spawn("env", &["-i", "HOME=/h", "/opt/claude", "-p"]);
        let done = install(&s, Path::new("/bin/hm"), Path::new("/s.sock"), &file)
            .expect("ok")
            .expect("an agent");
        assert_eq!(done.spawn.args[3], "--settings");
        assert_eq!(done.spawn.args[2], "/opt/claude");
    }

    #[test]
    fn gemini_hooks_add_to_existing_ones() {
        let mut s = json!({"general": {"x": 1}, "hooks": {"BeforeTool": [{"matcher": "a"}]}});
        merge_hooks(
            &mut s,
            &hooks_object(&["BeforeTool", "AfterAgent"], "hm hook gemini", 5000),
        );
        assert_eq!(s["general"]["x"], 1);
        assert_eq!(s["hooks"]["BeforeTool"].as_array().map(Vec::len), Some(2));
        assert_eq!(s["hooks"]["AfterAgent"].as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn shell_quoting_survives_quotes() {
        assert_eq!(shell_quote("/usr/bin/hm"), "/usr/bin/hm");
        assert_eq!(shell_quote("/it's/hm"), r"'/it'\''s/hm'");
    }
}
