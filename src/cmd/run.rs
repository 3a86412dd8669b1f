//! `hm run`: start a session. With `--detach` this process becomes the
//! supervisor; without, it starts a supervisor in the background (in its
//! own session, so closing the terminal does not kill it) and attaches.

use std::ffi::OsString;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::classify::ClassifierSpec;
use crate::cli::RunArgs;
use crate::config::{Config, Overrides};
use crate::launch::{supervisor_command, wait_ready};
use crate::liveness;
use crate::paths::{self, SessionPaths, SocketDir};
use crate::protocol::Size;
use crate::pty::SpawnSpec;
use crate::supervisor::{self, pidfile};

pub fn run(args: RunArgs, config: Config, config_path: Option<&Path>) -> Result<i32> {
    let overrides = Overrides {
        socket_dir: args.dir.socket_dir.clone(),
        scrollback_bytes: args.scrollback_bytes,
        classifier: args.classifier.clone(),
        idle_threshold_ms: args.idle_threshold_ms,
        debounce_ms: args.debounce_ms,
        kill_process_group: args.kill_process_group,
        session_env_var: args.session_env_var.clone(),
        log_file: args.log_file.clone(),
        log_level: args.log_level,
    };
    let config = config.apply(&overrides)?;
    // The flag is in the config now, but is passed as the flag again: it
    // wins over HM_SOCKET_DIR, which wins over the file.
    let dir =
        paths::resolve_socket_dir(args.dir.socket_dir.as_deref(), config.socket_dir.as_deref());
    // The id and the socket path length are checked before anything exists.
    let (mut session, base) = match &args.id {
        // A restore or restart takes its own session's id on purpose.
        Some(id) if args.restoring.is_some() => (SessionPaths::new(&dir, id)?, None),
        Some(id) => (SessionPaths::new(&dir, id)?, None),
        None => {
            let base = id_from_command(&args.command);
            (free_session(&dir, &base)?, Some(base))
        }
    };
    let workdir = resolve_workdir(args.workdir.as_deref())?;
    // Attaching is checked for before anything starts: a session started
    // for nobody to see would run on unnoticed and hold its id.
    if !args.detach
        && !args.bg
        && let Some(what) = crate::attach::session::not_a_terminal()
    {
        bail!(
            "cannot attach: {what} is not a terminal (add --bg to start the \
             session in the background, or --detach to supervise it here)"
        );
    }
    // What the id takes over, told once it will be taken (a run refused
    // above said "replacing" and replaced nothing), and once, where the
    // person typed it (not again by the supervisor a launch starts).
    if args.id.is_some() && args.restoring.is_none() && !args.notify_ready {
        let_go(&dir, &session);
        note_taking_over(&dir, &session);
    }
    // Said before it matters, not found out after a crash.
    if !args.notify_ready && crate::agent_hooks::gemini_unhooked(&args.command, &dir) {
        eprintln!("hm: note: {}", crate::agent_hooks::GEMINI_UNHOOKED);
    }
    // A name chosen for the user may be taken by a session started at the
    // same moment (its lock decides): then the next one is.
    let mut tries = 0;
    let mut taken = |session: &SessionPaths| -> Result<Option<SessionPaths>> {
        match &base {
            Some(base)
                if tries < 5
                    && matches!(probe(&dir, session), Some(liveness::Liveness::Running)) =>
            {
                tries += 1;
                free_session(&dir, base).map(Some)
            }
            _ => Ok(None),
        }
    };
    if args.detach {
        let mut noted = false;
        loop {
            // Started by hand, not by a launcher (which has said all this).
            if !args.notify_ready {
                // A person who typed it may have meant --bg: this command
                // is the supervisor, and returns only when the session ends.
                if !std::mem::replace(&mut noted, true)
                    && std::io::IsTerminal::is_terminal(&std::io::stdin())
                {
                    eprintln!(
                        "supervising here until the session ends (--bg starts it in \
                         the background and returns)"
                    );
                }
                if base.is_some() {
                    // Information, not an error: no `hm:` in front.
                    eprintln!("session id: {}", session.id);
                }
                if let Some(liveness::Liveness::Orphaned(pid)) = probe(&dir, &session) {
                    warn_orphaned(&session, pid);
                }
            }
            match supervise(
                &args,
                config.clone(),
                dir.clone(),
                session.clone(),
                workdir.clone(),
            ) {
                Err(e) if is_locked(&e) => match taken(&session)? {
                    Some(next) => session = next,
                    None => return Err(e),
                },
                r => return r,
            }
        }
    }
    loop {
        match launch(&args, (&config, config_path), &dir, &session, &workdir) {
            Ok(()) => break,
            Err(e) => match taken(&session)? {
                Some(next) => session = next,
                None => return Err(e),
            },
        }
    }
    if args.bg {
        // The id alone on stdout, for `id=$(hm run --bg ...)`.
        println!("{}", session.id);
        return Ok(0);
    }
    attach(&session, &config)
}

/// `hm run --host HOST` (or `--id HOST:ID`): the session is started
/// there by that machine's hm, through a link, as the dashboard's `n`
/// with a host does; then its `HOST:ID` is printed (`--bg`) or attached
/// to.
pub fn remote(args: RunArgs, host: &str, config: &Config) -> Result<i32> {
    // What only a supervisor of this machine could honour.
    let here = [
        (args.detach, "--detach"),
        (args.restore, "--restore"),
        (args.scrollback_bytes.is_some(), "--scrollback-bytes"),
        (args.idle_threshold_ms.is_some(), "--idle-threshold-ms"),
        (args.debounce_ms.is_some(), "--debounce-ms"),
        (args.kill_process_group.is_some(), "--kill-process-group"),
        (args.session_env_var.is_some(), "--session-env-var"),
        (args.log_file.is_some(), "--log-file"),
        (args.log_level.is_some(), "--log-level"),
        (args.dir.socket_dir.is_some(), "--socket-dir"),
    ];
    if let Some((_, flag)) = here.iter().find(|(given, _)| *given) {
        super::usage!("{flag} cannot be used for a session on another machine ({host})");
    }
    // Words go to the other machine as JSON text.
    let utf8 = |w: &std::ffi::OsStr, what: &str| {
        w.to_str()
            .map(str::to_owned)
            .with_context(|| format!("{what} {w:?} is not UTF-8"))
    };
    let argv = args
        .command
        .iter()
        .map(|w| utf8(w, "the command's word"))
        .collect::<Result<Vec<String>>>()?;
    if !args.bg
        && let Some(what) = crate::attach::session::not_a_terminal()
    {
        bail!(
            "cannot attach: {what} is not a terminal (add --bg to start the session in the background)"
        );
    }
    if let Some(id) = &args.id {
        paths::validate_id(id)?;
    }
    let workdir = args
        .workdir
        .as_deref()
        .map(|d| utf8(d.as_os_str(), "workdir"))
        .transpose()?;
    crate::client::name_host(host);
    let link = super::ended::remote::link(host, config)?;
    let id = match &args.id {
        // The link serves the host's sessions here, running and ended: an
        // id taken is said as here, in this machine's names (`box:cx`).
        Some(id) => {
            let session = SessionPaths::new(link.dir(), id)?;
            if matches!(
                probe(link.dir(), &session),
                Some(liveness::Liveness::Running)
            ) {
                return Err(already_running(id));
            }
            note_taking_over(link.dir(), &session);
            id.clone()
        }
        // The first free there.
        None => free_session(link.dir(), &id_from_command(&args.command))?.id,
    };
    link.spawner()
        .spawn(crate::remote::mux::NewSession {
            id: id.clone(),
            // The line is for a proxy of an older hm, which runs it by
            // `sh -c`; a newer one runs `argv` as it is.
            command: crate::launch::command_line(&argv),
            argv: Some(argv),
            workdir,
            label: args.label.clone(),
            classifier: args.classifier.clone(),
            // One given alone: the other as a session of this machine
            // with no terminal would have it.
            size: (args.cols.is_some() || args.rows.is_some()).then(|| {
                let (cols, rows) = config.tui.session_size;
                crate::protocol::Size {
                    cols: args.cols.unwrap_or(cols),
                    rows: args.rows.unwrap_or(rows),
                }
            }),
            restart: false,
            background: args.bg,
        })
        .map_err(|e| anyhow::anyhow!("{host}: {e}"))?;
    if args.bg {
        println!("{host}:{id}");
        return Ok(0);
    }
    let attach = crate::cli::AttachArgs {
        id,
        dir: crate::cli::DirArgs {
            socket_dir: Some(link.dir().to_path_buf()),
        },
        read_only: false,
    };
    crate::attach::session::run(attach, config, None)
}

/// `hm run` attaching to the session it started; kept out of [`run`]'s
/// frame for the reason [`launch`] is.
#[inline(never)]
fn attach(session: &SessionPaths, config: &Config) -> Result<i32> {
    crate::attach::session::attach(session, config, true)
}

/// Whether starting failed because another supervisor holds the id.
fn is_locked(e: &anyhow::Error) -> bool {
    matches!(
        e.downcast_ref::<pidfile::PidFileError>(),
        Some(pidfile::PidFileError::Locked { .. })
    )
}

/// A session id from the command's name (`python3` for
/// `/usr/bin/python3 app.py`; see [`paths::id_from_program`]).
fn id_from_command(command: &[OsString]) -> String {
    paths::id_from_program(command.first().map_or(Path::new(""), Path::new))
}

/// The first of `base`, `base-2`, `base-3`, ... that no session holds:
/// running, orphaned, ended (its record and output are kept until `hm
/// rm`) or lost (waiting for `hm restore`). A name chosen for the user
/// never takes another session's place.
fn free_session(dir: &Path, base: &str) -> Result<SessionPaths> {
    for n in 1..=999 {
        let id = if n == 1 {
            base.to_string()
        } else {
            format!("{base}-{n}")
        };
        let session = SessionPaths::new(dir, &id)?;
        let taken = matches!(
            probe(dir, &session),
            Some(liveness::Liveness::Running | liveness::Liveness::Orphaned(_))
        ) || crate::ended::path(dir, &id).exists()
            || crate::ended::get(dir, &id).is_some()
            || crate::lost::holds(dir, &id);
        if !taken {
            return Ok(session);
        }
    }
    bail!("sessions '{base}' to '{base}-999' all exist; name this one with --id")
}

/// Says what `--id` takes over when another session's record holds the
/// id: a lost session's manifest and output (what `hm restore` would bring
/// back), or an ended one's record and history. Taken all the same, as a
/// supervisor killed with SIGKILL must not block a new run of its id; but
/// not without a word, as it was.
fn note_taking_over(dir: &Path, session: &SessionPaths) {
    // As the person named it (`box:cx` for another machine's).
    let id = &crate::client::shown_id(&session.id);
    // Information, not an error: no `hm:` in front.
    if let Some(lost) = crate::lost::get(dir, &session.id) {
        let instead = if lost.restartable() {
            format!("'hm restore {id}' would have brought it back")
        } else {
            format!("'hm restart {id}' would have run it as it was")
        };
        eprintln!("replacing the lost session '{id}': its record and output go ({instead})");
    } else if let Some(ended) = crate::ended::get(dir, &session.id) {
        let how = crate::client::ended_short(ended.exit_code, ended.killed);
        let ago =
            crate::client::human_ms(crate::clock::unix_ms().saturating_sub(ended.ended_unix_ms));
        eprintln!(
            "replacing the ended session '{id}' ({how}, {ago} ago): its record and output \
             go ('hm restart {id}' would have kept them)"
        );
    }
}

fn resolve_workdir(given: Option<&Path>) -> Result<PathBuf> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let dir = given.map_or_else(|| cwd.clone(), |p| cwd.join(p));
    match std::fs::metadata(&dir) {
        Ok(m) if m.is_dir() => Ok(dir),
        Ok(_) => bail!("workdir '{}' is not a directory", dir.display()),
        Err(e) => bail!("workdir '{}': {}", dir.display(), e),
    }
}

fn supervise(
    args: &RunArgs,
    config: Config,
    dir: PathBuf,
    session: SessionPaths,
    workdir: PathBuf,
) -> Result<i32> {
    let opts = options(args, config, dir, session, workdir)?;
    supervisor::run(opts)
}

/// What the supervisor is to do. Apart from [`supervise`] and never
/// inlined into it: its temporaries (the configuration, the rule files
/// read for a check) would otherwise share a frame that stays on the
/// stack, resident, for as long as the session runs.
#[inline(never)]
fn options(
    args: &RunArgs,
    config: Config,
    dir: PathBuf,
    session: SessionPaths,
    workdir: PathBuf,
) -> Result<supervisor::Options> {
    let dir = SocketDir::ensure(&dir)?;
    let (program, rest) = args
        .command
        .split_first()
        .context("no command given (put it after --)")?;
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    if std::env::var_os("TERM").is_none_or(|t| t.is_empty()) {
        // Programs started from scripts or services have no TERM; the pty
        // is an xterm-compatible terminal as far as they are concerned.
        env.push(("TERM".into(), "xterm-256color".into()));
    }
    env.push((
        config.session_env_var.clone().into(),
        session.id.clone().into(),
    ));
    // Where `hm hook`, run by the program's hooks, reports to.
    env.push((super::hook::SOCKET_ENV.into(), session.sock.clone().into()));
    // `hm` run inside the session looks where the session is, however
    // its socket dir was given (a flag, the config or the variable).
    env.push((
        paths::SOCKET_DIR_ENV.into(),
        dir.path().as_os_str().to_owned(),
    ));
    env.extend(
        config
            .env
            .iter()
            .map(|v| (v.name.clone().into(), v.value.clone().into())),
    );
    let log_file = config
        .log_file
        .clone()
        .unwrap_or_else(|| session.log.clone());
    let opts = supervisor::Options {
        dir,
        spawn: SpawnSpec {
            program: program.clone(),
            args: rest.to_vec(),
            env,
            workdir,
            size: start_size(args, &config),
        },
        paths: session,
        scrollback: config.scrollback_bytes,
        classifier: if config.classifier_chosen {
            config.classifier
        } else {
            ClassifierSpec::for_command(
                &args
                    .command
                    .iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect::<Vec<_>>(),
            )
            .tuned(&config.classifier)
        },
        kill_process_group: config.kill_process_group,
        kill_grace_ms: config.kill_grace_ms,
        log_file,
        log_level: config.log_level,
        notify_ready: args.notify_ready,
        await_attach: args.await_attach,
        notify: config.notify.clone(),
        label: args.label.clone(),
        automation: config.automation.clone(),
        keep: keep(args, &config)?,
    };
    if opts.classifier.agent_settings().is_some() {
        // A broken rule file is the user's to fix, named with its line,
        // before anything starts; so is an automation entry that could
        // never act with those rules.
        let rules = super::classify::user_rules()?;
        crate::config::check_automation(&opts.automation, &rules)?;
    }
    Ok(opts)
}

/// The size a session starts at: what `--cols`/`--rows` say, else the
/// terminal `hm run` was started from, less the row of the attach's bar
/// (so attaching from it later changes nothing), else, with no terminal
/// at all (a script, a service), `[tui] session_size`.
fn start_size(args: &RunArgs, config: &Config) -> Size {
    let terminal = [
        std::io::stdin().as_fd(),
        std::io::stdout().as_fd(),
        std::io::stderr().as_fd(),
    ]
    .into_iter()
    .find_map(crate::term::size)
    .map(|(cols, rows)| (cols, if rows >= 2 { rows - 1 } else { rows }));
    let (cols, rows) = terminal.unwrap_or(config.tui.session_size);
    Size {
        cols: args.cols.unwrap_or(cols),
        rows: args.rows.unwrap_or(rows),
    }
    .clamped()
}

/// What the supervisor keeps for `hm restore`. Without a state dir it
/// keeps nothing, with a warning: a session never fails to start for it,
/// except a restore, which needs the manifest it restores.
fn keep(args: &RunArgs, config: &Config) -> Result<Option<supervisor::keeper::Keep>> {
    let dir = crate::restore::sessions_dir()
        .context("no state directory: set HOME or XDG_STATE_HOME")
        .and_then(|dir| {
            crate::restore::ensure_dir(&dir)
                .with_context(|| format!("cannot use '{}'", dir.display()))
                .map(|()| dir)
        });
    let dir = match (dir, &args.restoring) {
        (Ok(dir), _) => dir,
        (Err(e), Some(_)) => return Err(e.context("cannot restore the session")),
        (Err(e), None) => {
            eprintln!(
                "hm: warning: the session is not kept for hm restore: {}",
                crate::error::describe(&e)
            );
            return Ok(None);
        }
    };
    Ok(Some(supervisor::keeper::Keep {
        dir,
        history_bytes: config.restore_history_bytes,
        rerun: args.restore,
        env_names: config.env.iter().map(|v| v.name.clone()).collect(),
        restoring: args.restoring.clone(),
        restarting: args.restarting,
    }))
}

/// What holds the session's id now, if its dir exists.
fn probe(dir: &Path, session: &SessionPaths) -> Option<liveness::Liveness> {
    dir.exists()
        .then(|| liveness::probe(&session.pid, &session.sock, false))
}

/// Session `id` runs already: said as the person named it (`box:cx` for
/// another machine's).
fn already_running(id: &str) -> anyhow::Error {
    let id = crate::client::shown_id(id);
    anyhow::anyhow!("session '{id}' is already running; attach to it with 'hm attach {id}'")
}

/// Waits, up to 3 s, for the supervisor of a session whose program has
/// ended (its record is written) to let go of the id on its way out: the
/// same id started again the moment it ended was said to replace it, and
/// then refused as "already running".
fn let_go(dir: &Path, session: &SessionPaths) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while std::time::Instant::now() < deadline
        && crate::ended::read(&crate::ended::path(dir, &session.id)).is_some()
        && matches!(probe(dir, session), Some(liveness::Liveness::Running))
    {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The new session takes the id, and with it the only record of a program
/// that outlived its supervisor: say so once more.
fn warn_orphaned(session: &SessionPaths, pid: u32) {
    eprintln!("hm: warning: {}", crate::client::orphaned(&session.id, pid));
}

/// Starts `hm run --detach` in the background and waits until it reports
/// that the command is running, or why it is not. Never inlined into
/// [`run`]: a supervisor runs its whole session below run's frame, and
/// what launching needs would keep that frame's pages resident.
#[inline(never)]
fn launch(
    args: &RunArgs,
    (config, config_path): (&Config, Option<&Path>),
    dir: &Path,
    session: &SessionPaths,
    workdir: &Path,
) -> Result<()> {
    match probe(dir, session) {
        Some(liveness::Liveness::Running) => return Err(already_running(&session.id)),
        Some(liveness::Liveness::Orphaned(pid)) => warn_orphaned(session, pid),
        _ => {}
    }
    // Paths the user gave are relative to where they typed the command.
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let config_path = config_path.map(|c| cwd.join(c));
    let mut cmd = supervisor_command(
        &session.id,
        dir,
        config_path.as_deref(),
        !args.bg || args.await_attach,
    )?;
    cmd.arg("--workdir").arg(workdir);
    // Sized here, where the person's terminal is: the supervisor has none.
    let size = start_size(args, config);
    cmd.args([
        "--cols",
        &size.cols.to_string(),
        "--rows",
        &size.rows.to_string(),
    ]);
    let mut opt = |flag: &str, v: Option<String>| {
        if let Some(v) = v {
            cmd.arg(flag).arg(v);
        }
    };
    opt(
        "--scrollback-bytes",
        args.scrollback_bytes.map(|v| v.to_string()),
    );
    opt("--classifier", args.classifier.clone());
    opt(
        "--idle-threshold-ms",
        args.idle_threshold_ms.map(|v| v.to_string()),
    );
    opt("--debounce-ms", args.debounce_ms.map(|v| v.to_string()));
    opt(
        "--kill-process-group",
        args.kill_process_group.map(|v| v.to_string()),
    );
    opt("--session-env-var", args.session_env_var.clone());
    opt("--label", args.label.clone());
    opt(
        "--log-level",
        args.log_level.map(|v| v.as_str().to_string()),
    );
    if let Some(f) = &args.log_file {
        cmd.arg("--log-file").arg(cwd.join(f));
    }
    if args.restore {
        cmd.arg("--restore");
    }
    // `hm restart` of a lost session claims its history this way.
    if let Some(instance) = &args.restoring {
        cmd.arg("--restoring").arg(instance);
        if args.restarting {
            cmd.arg("--restarting");
        }
    }
    cmd.arg("--").args(&args.command);
    // `hm run` exits when its attach does; the supervisor then passes to
    // init, which reaps it.
    wait_ready(cmd).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id_of(argv: &[&str]) -> String {
        let argv: Vec<OsString> = argv.iter().map(OsString::from).collect();
        id_from_command(&argv)
    }

    #[test]
    fn an_id_from_the_command_is_its_file_name_made_valid() {
        assert_eq!(id_of(&["/usr/bin/python3", "app.py"]), "python3");
        assert_eq!(id_of(&["./my build.sh"]), "my-build.sh");
        assert_eq!(id_of(&["--weird"]), "weird");
        assert_eq!(id_of(&["ünïcode"]), "n-code");
        assert_eq!(id_of(&["..."]), "session");
        assert_eq!(id_of(&[]), "session");
        let long = "x".repeat(200);
        let id = id_of(&[&long]);
        assert_eq!(id.len(), paths::MAX_ID_LEN - 4);
        // Every id it makes is one `hm` accepts, with room for "-999".
        for argv in [["/usr/bin/python3"], ["ünïcode"], [long.as_str()], ["..."]] {
            let id = format!("{}-999", id_of(&argv));
            assert!(paths::validate_id(&id).is_ok(), "{id}");
        }
    }
}
