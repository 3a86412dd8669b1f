//! What `hm restore` runs for a lost session, from its manifest: a coding
//! agent resumed as the same conversation (by the id its hooks reported,
//! never `--continue`, which picks the wrong conversation when two
//! sessions share a directory), a shell started again in its directory,
//! a command run again if it was started with `hm run --restore`; or why
//! none of these.
//!
//! Where it runs: the directory the session worked in. Only a shell is
//! started in another when that one is gone (the one it started in, else
//! the home directory), since a shell only waits at a prompt. An agent or
//! a command is refused instead: an agent's conversation belongs to its
//! directory (Claude Code keeps them by project directory, and its resume
//! finds none elsewhere), and either, run elsewhere, would read and write
//! other files than those it worked on.
//!
//! The resume command itself is [`super::resume`]'s.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::agent_hooks::Agent;
use crate::restore::manifest::Manifest;

/// What is run again, and how it was decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restart {
    pub argv: Vec<String>,
    pub workdir: String,
    pub kind: Kind,
    /// The directories it would have started in, gone, when a shell
    /// starts in `workdir` instead ([`check`]): said, not done silently.
    pub gone: Vec<String>,
}

impl Restart {
    /// Why it starts where it does, when that is not where it was:
    /// `its last directory /w/sub no longer exists`.
    pub fn elsewhere(&self) -> Option<String> {
        let shown = |d: &String| crate::paths::printable(d);
        match self.gone.as_slice() {
            [] => None,
            [last] => Some(format!(
                "its last directory {} no longer exists",
                shown(last)
            )),
            [last, started, ..] => Some(format!(
                "its last directory {} and the one it started in, {}, no longer exist",
                shown(last),
                shown(started)
            )),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// The agent's conversation, resumed.
    Resume { agent: Agent, id: String },
    /// A shell, in the directory it was last in.
    Shell,
    /// The command again (`hm run --restore`).
    Rerun,
}

impl Kind {
    /// For the line `hm restore` prints.
    pub fn describe(&self) -> String {
        match self {
            Kind::Resume { agent, id } => {
                format!("{} conversation {id} resumed", agent.name())
            }
            Kind::Shell => "shell".into(),
            Kind::Rerun => "run again".into(),
        }
    }
}

/// Why a lost session is not started again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("it has no command")]
    NoCommand,
    #[error("its command line was not UTF-8 text")]
    NotText,
    #[error("no {0} conversation id was reported by its hooks, and hm never guesses one")]
    NoConversation(&'static str),
    #[error(
        "{0} ran without its interactive screen, which is not resumed (unless started with 'hm run --restore')"
    )]
    NotInteractive(&'static str),
    #[error("a command runs again only if it was started with 'hm run --restore'")]
    NotRerun,
    #[error("its directory '{0}' no longer exists, and only a shell is started in another")]
    NoDirectory(String),
    #[error("'{0}' is no longer installed (not found on PATH{1})")]
    NotInstalled(String, String),
    #[error("its classifier '{0}' is not one this hm knows")]
    UnknownClassifier(String),
}

impl Refusal {
    /// Not restored by choice, hm's or the session's: `hm restore` leaves
    /// it, and `hm restart` runs it as it was. The others could have been
    /// restored, and something is missing.
    pub fn chosen(&self) -> bool {
        matches!(
            self,
            Refusal::NotRerun | Refusal::NoConversation(_) | Refusal::NotInteractive(_)
        )
    }

    /// What a person can do about it, for session `id`, in parentheses.
    pub fn way_out(&self, id: &str) -> String {
        format!("({})", self.what_to_do(id))
    }

    /// What a person can do about it, for session `id`.
    pub fn what_to_do(&self, id: &str) -> String {
        match self {
            Refusal::NoDirectory(_) => {
                format!(
                    "put the directory back and run 'hm restore {id}', or 'hm rm {id}' forgets it"
                )
            }
            // Left by choice: the person may still want it back, as it
            // was (the message pointed at 'hm run --restore', of no use
            // after the fact).
            Refusal::NoConversation(_) => {
                format!("'hm restart {id}' starts it afresh, 'hm rm {id}' forgets it")
            }
            Refusal::NotRerun | Refusal::NotInteractive(_) => {
                format!("'hm restart {id}' runs it as it was, 'hm rm {id}' forgets it")
            }
            _ => format!("'hm rm {id}' forgets it"),
        }
    }
}

/// Programs that are shells: started again bare, in their directory.
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "fish", "dash", "ash", "ksh", "mksh", "oksh", "yash", "tcsh", "csh", "nu",
    "elvish", "xonsh", "pwsh",
];

/// How an agent's session that ended, which ran `command`, takes up its
/// conversation again when restarted, when its manifest `kept` for `hm
/// restore` is of that command and names the conversation: `/exit`, or a kill, ends the program,
/// not the work a person comes back for. `hm restart` and the dashboard's
/// `r` run it (its kind is [`Kind::Resume`]); `None` for any other
/// session, which runs as it was.
pub fn resumption(kept: &Manifest, command: &[String]) -> Option<Restart> {
    if kept.argv != command {
        return None;
    }
    plan(kept)
        .ok()
        .filter(|p| matches!(p.kind, Kind::Resume { .. }))
}

/// What to run for `m` (pure: the directory and the program are checked
/// by [`check`]).
pub fn plan(m: &Manifest) -> Result<Restart, Refusal> {
    if m.argv_lossy {
        return Err(Refusal::NotText);
    }
    let Some((program, args)) = m.argv.split_first() else {
        return Err(Refusal::NoCommand);
    };
    if m.classifier.spec().is_none() {
        return Err(Refusal::UnknownClassifier(m.classifier.name.clone()));
    }
    let again = |kind| Restart {
        argv: m.argv.clone(),
        workdir: m.workdir.clone(),
        kind,
        gone: Vec::new(),
    };
    if let Some((agent, at)) = super::resume::agent_of(&m.argv) {
        let id = m
            .agent
            .as_ref()
            .filter(|a| a.agent == agent.name())
            .map(|a| a.id.clone());
        return match (id, m.rerun) {
            (Some(id), rerun) => match super::resume::args(agent, &m.argv[at..], &id) {
                Some(own) => Ok(Restart {
                    argv: super::resume::with_own(&m.argv, at, own),
                    workdir: m.workdir.clone(),
                    kind: Kind::Resume { agent, id },
                    gone: Vec::new(),
                }),
                None if rerun => Ok(again(Kind::Rerun)),
                None => Err(Refusal::NotInteractive(agent.name())),
            },
            (None, true) => Ok(again(Kind::Rerun)),
            (None, false) => Err(Refusal::NoConversation(agent.name())),
        };
    }
    if is_shell(program, args) {
        return Ok(Restart {
            argv: m.argv.clone(),
            workdir: m.cwd.clone().unwrap_or_else(|| m.workdir.clone()),
            kind: Kind::Shell,
            gone: Vec::new(),
        });
    }
    if m.rerun {
        return Ok(again(Kind::Rerun));
    }
    Err(Refusal::NotRerun)
}

/// [`plan`], then [`check`]: what `hm restore` would start for `m` now,
/// or why it would not.
pub fn now(m: &Manifest) -> Result<Restart, Refusal> {
    plan(m).and_then(|mut r| check(&mut r, m).map(|()| r))
}

/// Whether `command` is a shell waiting at its prompt ([`is_shell`]).
pub fn shell(command: &[String]) -> bool {
    command
        .split_first()
        .is_some_and(|(program, args)| is_shell(program, args))
}

/// Where a shell starts when its directory is gone: the first of `others`
/// that is still a directory, else the home directory; `None` if none is.
pub fn shell_home(others: &[&str]) -> Option<String> {
    let home = std::env::var("HOME").ok().filter(|h| h.starts_with('/'));
    others
        .iter()
        .map(|d| (*d).to_owned())
        .chain(home)
        .find(|d| Path::new(d).is_dir())
}

/// A shell by name, with no command or script to run (`bash -l` is a
/// shell; `bash -c make`, `bash script.sh` are commands).
fn is_shell(program: &str, args: &[String]) -> bool {
    let name = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    let name = name.strip_prefix('-').unwrap_or(name);
    SHELLS.contains(&name)
        && args.iter().all(|a| {
            (a.starts_with("--") && a != "--command")
                || (a.starts_with('-') && a.len() > 1 && !a.contains('c'))
        })
}

/// Checks what the restart needs on this machine now: its directory (a
/// shell's last one, else where it started, else home: see the module's
/// doc) and its program (on `PATH`, else where it was found when it
/// started, which a login service's shorter `PATH` may not reach).
pub fn check(r: &mut Restart, m: &Manifest) -> Result<(), Refusal> {
    if !Path::new(&r.workdir).is_dir() {
        let gone = crate::paths::sanitize(&r.workdir);
        if r.kind != Kind::Shell {
            return Err(Refusal::NoDirectory(gone));
        }
        let started = (r.workdir != m.workdir).then_some(m.workdir.as_str());
        let Some(home) = shell_home(started.as_slice()) else {
            return Err(Refusal::NoDirectory(gone));
        };
        r.gone = std::iter::once(r.workdir.clone())
            .chain(started.filter(|s| *s != home).map(str::to_owned))
            .collect();
        r.workdir = home;
    }
    let Some(program) = r.argv.first().cloned() else {
        return Err(Refusal::NoCommand);
    };
    if program.contains('/') {
        let at = Path::new(&r.workdir).join(&program);
        if !executable(&at) {
            return Err(Refusal::NotInstalled(
                crate::paths::sanitize(&program),
                String::new(),
            ));
        }
        return Ok(());
    }
    // Found on the PATH it will run with, it keeps the name it was given
    // (`codex`, not where this shell found it).
    if on_path(&program, m) {
        return Ok(());
    }
    match &m.program_path {
        Some(p) if executable(Path::new(p)) => {
            r.argv[0] = p.clone();
            Ok(())
        }
        Some(p) => Err(Refusal::NotInstalled(
            crate::paths::sanitize(&program),
            format!(", nor at '{}'", crate::paths::sanitize(p)),
        )),
        None => Err(Refusal::NotInstalled(
            crate::paths::sanitize(&program),
            String::new(),
        )),
    }
}

fn executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether `program` is found on the `PATH` the restart runs with: the
/// session's own, which its manifest keeps (a restore starts it in that
/// environment), else this process's.
fn on_path(program: &str, m: &Manifest) -> bool {
    let kept = m.environ.as_ref().and_then(|vars| vars.get("PATH"));
    kept.map(std::ffi::OsString::from)
        .or_else(|| std::env::var_os("PATH"))
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| executable(&dir.join(program))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::restore::manifest::{AgentSession, Classifier};

    fn manifest(argv: &[&str]) -> Manifest {
        Manifest {
            format: 1,
            id: "s".into(),
            instance: "1-1".into(),
            label: None,
            argv: argv.iter().map(|s| (*s).to_owned()).collect(),
            argv_lossy: false,
            program_path: None,
            workdir: "/w".into(),
            cwd: None,
            socket_dir: "/run/hm".into(),
            host: String::new(),
            boot_id: String::new(),
            classifier: Classifier::from(&crate::classify::ClassifierSpec::agent()),
            cols: 80,
            rows: 24,
            env: Vec::new(),
            environ: None,
            secret_env: Vec::new(),
            started_unix_ms: 0,
            rerun: false,
            agent: None,
            restored_unix_ms: None,
            ended: None,
        }
    }

    fn with_agent(mut m: Manifest, agent: &str, id: &str) -> Manifest {
        m.agent = Some(AgentSession {
            agent: agent.into(),
            id: id.into(),
        });
        m
    }

    fn argv(m: &Manifest) -> Result<Vec<String>, Refusal> {
        plan(m).map(|r| r.argv)
    }

    #[test]
    fn claude_resumes_its_conversation_with_its_own_options() {
        let m = with_agent(
            manifest(&[
                "claude",
                "--model",
                "opus",
                "--add-dir",
                "a",
                "b",
                "--verbose",
                "fix it",
            ]),
            "claude",
            "abc-1",
        );
        assert_eq!(
            argv(&m).expect("a plan"),
            [
                "claude",
                "--model",
                "opus",
                "--add-dir",
                "a",
                "b",
                "--verbose",
                "--resume",
                "abc-1"
            ]
        );
        // A restored one is restored again with the newest id, never with
        // --continue or its old --resume.
        let m = with_agent(
            manifest(&["/opt/claude", "--resume", "old", "-c", "--model=x"]),
            "claude",
            "new",
        );
        assert_eq!(
            argv(&m).expect("a plan"),
            ["/opt/claude", "--model=x", "--resume", "new"]
        );
        let m = with_agent(manifest(&["claude", "-p", "task"]), "claude", "i");
        assert_eq!(plan(&m), Err(Refusal::NotInteractive("claude")));
        let m = with_agent(manifest(&["claude", "mcp", "serve"]), "claude", "i");
        assert_eq!(plan(&m), Err(Refusal::NotInteractive("claude")));
    }

    #[test]
    fn codex_and_gemini_resume_their_own_way() {
        let m = with_agent(
            manifest(&["codex", "-m", "o3", "--search", "write tests"]),
            "codex",
            "t1",
        );
        assert_eq!(
            argv(&m).expect("a plan"),
            ["codex", "resume", "-m", "o3", "--search", "t1"]
        );
        let again = with_agent(
            manifest(&["codex", "resume", "-m", "o3", "t1"]),
            "codex",
            "t2",
        );
        assert_eq!(
            argv(&again).expect("a plan"),
            ["codex", "resume", "-m", "o3", "t2"]
        );
        let m = with_agent(manifest(&["codex", "exec", "x"]), "codex", "t");
        assert_eq!(plan(&m), Err(Refusal::NotInteractive("codex")));
        let m = with_agent(
            manifest(&["gemini", "-y", "--policy", "a", "b", "-i", "hello"]),
            "gemini",
            "g1",
        );
        assert_eq!(
            argv(&m).expect("a plan"),
            ["gemini", "-y", "--policy", "a", "b", "--resume", "g1"]
        );
        // Behind env: the agent's arguments follow its name.
        let m = with_agent(
            manifest(&["env", "FOO=1", "claude", "--verbose"]),
            "claude",
            "e",
        );
        assert_eq!(
            argv(&m).expect("a plan"),
            ["env", "FOO=1", "claude", "--verbose", "--resume", "e"]
        );
    }

    #[test]
    fn an_agent_without_a_known_conversation_is_not_guessed() {
        let m = manifest(&["claude"]);
        assert_eq!(plan(&m), Err(Refusal::NoConversation("claude")));
        // Another agent's id is not this one's.
        let m = with_agent(manifest(&["claude"]), "codex", "x");
        assert_eq!(plan(&m), Err(Refusal::NoConversation("claude")));
        let mut m = manifest(&["claude"]);
        m.rerun = true;
        assert_eq!(plan(&m).expect("a plan").kind, Kind::Rerun);
    }

    #[test]
    fn shells_restart_in_their_directory_commands_only_if_asked() {
        let mut m = manifest(&["bash", "-l"]);
        m.cwd = Some("/w/sub".into());
        let r = plan(&m).expect("a plan");
        assert_eq!((r.kind, r.workdir.as_str()), (Kind::Shell, "/w/sub"));
        for command in [
            &["bash", "-c", "make"][..],
            &["sh", "x.sh"],
            &["zsh", "-lc", "x"],
        ] {
            assert_eq!(
                plan(&manifest(command)),
                Err(Refusal::NotRerun),
                "{command:?}"
            );
        }
        let mut m = manifest(&["npm", "run", "dev"]);
        assert_eq!(plan(&m), Err(Refusal::NotRerun));
        m.rerun = true;
        let r = plan(&m).expect("a plan");
        assert_eq!(
            (r.kind, r.argv),
            (Kind::Rerun, vec!["npm".into(), "run".into(), "dev".into()])
        );
        m.argv_lossy = true;
        assert_eq!(plan(&m), Err(Refusal::NotText));
        assert_eq!(plan(&manifest(&[])), Err(Refusal::NoCommand));
    }

    #[test]
    fn a_missing_directory_or_program_is_named() {
        let dir = tempfile::tempdir().expect("dir");
        let mut m = manifest(&["no-such-program-hm-test"]);
        m.rerun = true;
        m.workdir = dir.path().join("gone").display().to_string();
        let mut r = plan(&m).expect("a plan");
        let e = check(&mut r, &m).expect_err("refused");
        assert!(e.to_string().contains("no longer exists"), "{e}");
        m.workdir = dir.path().display().to_string();
        let mut r = plan(&m).expect("a plan");
        let e = check(&mut r, &m).expect_err("refused");
        assert!(
            e.to_string()
                .contains("'no-such-program-hm-test' is no longer installed"),
            "{e}"
        );
        // Found where it was when it started.
        m.program_path = Some("/bin/sh".into());
        let mut r = plan(&m).expect("a plan");
        check(&mut r, &m).expect("found");
        assert_eq!(r.argv[0], "/bin/sh");
        // On the PATH the session kept, it keeps the name it was given:
        // the restore runs it with that PATH.
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).expect("bin");
        let program = bin.join("no-such-program-hm-test");
        std::fs::write(&program, "#!/bin/sh\n").expect("program");
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).expect("mode");
        m.environ = Some([("PATH".to_owned(), bin.display().to_string())].into());
        let mut r = plan(&m).expect("a plan");
        check(&mut r, &m).expect("found");
        assert_eq!(r.argv[0], "no-such-program-hm-test");
        // A shell whose last directory went starts where it started.
        let mut m = manifest(&["sh"]);
        m.workdir = dir.path().display().to_string();
        m.cwd = Some(dir.path().join("gone").display().to_string());
        let mut r = plan(&m).expect("a plan");
        check(&mut r, &m).expect("falls back");
        assert_eq!(r.workdir, m.workdir);
        assert!(
            r.elsewhere()
                .is_some_and(|why| why.starts_with("its last directory ")),
            "said, not done silently"
        );
        // An agent is not moved: its conversation is of its directory.
        let mut m = with_agent(manifest(&["claude"]), "claude", "c1");
        m.workdir = dir.path().join("gone").display().to_string();
        let mut r = plan(&m).expect("a plan");
        let e = check(&mut r, &m).expect_err("refused");
        assert!(matches!(e, Refusal::NoDirectory(_)), "{e}");
        assert!(e.way_out("a").contains("'hm rm a' forgets it"));
    }
}
