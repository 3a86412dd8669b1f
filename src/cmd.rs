//! One module per subcommand; this file dispatches and maps errors to exit
//! codes.

mod answer;
mod capture;
pub mod classify;
mod ended;
mod events;
mod explain;
pub mod hook;
mod kill;
mod label;
mod logs;
mod ls;
pub mod replay;
mod restore;
mod run;
mod send;
pub mod setup;
mod status;
mod tui;
pub mod wait;

use anyhow::Result;

use crate::cli::{ApproveArgs, ChooseArgs, Cli, Command, RunArgs};
use crate::client;
use crate::config::Config;
use crate::detect::rules::Answer;
use crate::pty::SpawnError;

/// A command line that parsed but asks for what it cannot mean (a value
/// out of range, options that exclude each other): exit 2, as for one
/// clap refuses, and not 1, which a script reads as the command's own
/// failure (`hm wait` timing out).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Usage(pub String);

/// Fails with [`Usage`].
macro_rules! usage {
    ($($arg:tt)*) => {
        return Err($crate::cmd::Usage(format!($($arg)*)).into())
    };
}
pub(crate) use usage;

/// Runs the command and returns the process exit code.
pub fn dispatch(cli: Cli) -> Result<i32> {
    // These describe hm itself: a broken config file must not stop them.
    match &cli.command {
        Command::Completions(args) => {
            // Made in memory and written here, so that a closed pipe
            // (`hm completions bash | head`) is an ordinary error.
            let mut cmd = <Cli as clap::CommandFactory>::command();
            let mut script = Vec::new();
            clap_complete::generate(args.shell, &mut cmd, "hm", &mut script);
            if args.shell == clap_complete::Shell::Zsh {
                script = zsh_with_ids(&String::from_utf8_lossy(&script)).into_bytes();
            }
            let words = IdWords::of(&cmd);
            script.extend_from_slice(session_ids(args.shell, &words).as_bytes());
            std::io::Write::write_all(&mut std::io::stdout(), &script)?;
            return Ok(0);
        }
        Command::Man(args) => {
            let cmd = <Cli as clap::CommandFactory>::command();
            let Some(dir) = &args.dir else {
                clap_mangen::Man::new(cmd).render(&mut std::io::stdout())?;
                return Ok(0);
            };
            return man_pages(cmd, dir).map(|()| 0);
        }
        // A hook must never fail its agent, whatever the config says.
        Command::Hook(args) => {
            hook::run(&args.args);
            return Ok(0);
        }
        Command::Setup(args) => {
            return setup::setup(&args.agent, args.install, cli.config.as_deref()).map(|()| 0);
        }
        _ => {}
    }
    // A supervisor raises its own limit after forking the program, which
    // keeps the user's; every other command may hold a descriptor per
    // session (and gives the sessions it starts the user's limit back).
    if !matches!(cli.command, Command::Run(_)) {
        crate::fd::raise_limit();
    }
    let mut cli = cli;
    // `hm --socket-dir DIR ls` as `hm ls --socket-dir DIR`; given in both
    // places, the one after the command's name is the nearer word.
    if let (Some(dir), Some(args)) = (cli.socket_dir.take(), cli.command.dir_mut()) {
        args.socket_dir.get_or_insert(dir);
    }
    // Refused showing what was given as it can be seen: a control
    // character as `?`, never sent to the terminal.
    if let Command::Run(RunArgs { label: Some(l), .. }) = &mut cli.command {
        match crate::cli::label(l) {
            Ok(checked) => *l = checked,
            Err(why) => usage!("invalid --label '{}': {why}", crate::paths::sanitize(l)),
        }
    }
    let config = Config::load(cli.config.as_deref())?;
    // An ended session on another machine is forgotten or started again
    // there, by the host's own hm.
    match &cli.command {
        Command::Rm(a) => {
            if let Some((host, ids)) = ended::remote::host_of(&a.ids)? {
                client::name_host(&host);
                return ended::remote::rm(&host, &ids, &config);
            }
        }
        Command::Restart(a) => {
            if let Some((host, ids)) = ended::remote::host_of(std::slice::from_ref(&a.id))? {
                client::name_host(&host);
                return ended::remote::restart(&host, &ids[0], &config);
            }
        }
        _ => {}
    }
    // A session started on another machine, by its own hm.
    if let Command::Run(a) = &mut cli.command {
        let named =
            a.id.as_deref()
                .and_then(crate::remote::split_target)
                .map(|(h, id)| (h.to_owned(), id.to_owned()));
        let host = match (a.host.take(), &named) {
            (Some(h), Some((g, _))) if h != *g => {
                usage!("--host {h} and --id {g}:... name two machines; give one")
            }
            (host, named) => host.or(named.as_ref().map(|(h, _)| h.clone())),
        };
        if let Some(host) = host {
            if let Some((_, id)) = named {
                a.id = Some(id);
            }
            let Command::Run(args) = cli.command else {
                unreachable!("matched above")
            };
            return run::remote(args, &host, &config);
        }
    }
    // `HOST:ID` names a session on another machine: mount its sessions
    // (over ssh) and run the command on the mount as on a local one.
    let mount = remote_target(&mut cli.command, &config)?;
    match cli.command {
        Command::Run(args) => run::run(args, config, cli.config.as_deref()),
        Command::Attach(args) => crate::attach::session::run(args, &config, mount.as_ref()),
        Command::Status(args) => status::status(args, &config),
        Command::Ls(args) => ls::ls(args, &config),
        Command::Kill(args) => kill::kill(args, &config),
        Command::Tui(args) => tui::tui(args, &config, cli.config.as_deref()),
        Command::Explain(args) => explain::explain(args, &config),
        Command::Capture(args) => capture::capture(args, &config),
        Command::Classify(args) => classify::classify(args),
        Command::Replay(args) => replay::replay(args),
        Command::Wait(args) => wait::wait(args, &config),
        Command::Send(args) => send::send(args, &config),
        Command::Logs(args) => logs::logs(args, &config),
        Command::Events(args) => events::events(args, &config),
        Command::Rm(args) => ended::rm(args, &config),
        Command::Clean(args) => ended::clean(args, &config),
        Command::Restart(args) => ended::restart(args, &config, cli.config.as_deref()),
        Command::Restore(args) => restore::restore(args, &config, cli.config.as_deref()),
        Command::Proxy(args) => {
            let dir = client::socket_dir(&args.dir, &config);
            crate::remote::proxy::run(&dir)
        }
        Command::Approve(args) => {
            let how = if args.always {
                Answer::Always
            } else {
                Answer::Approve
            };
            answer::answer(args.answer, how, &config)
        }
        Command::Deny(args) => answer::answer(args, Answer::Deny, &config),
        Command::Choose(args) => answer::answer(args.answer, Answer::Choose(args.option), &config),
        Command::Continue(args) => answer::resume(args, &config),
        Command::Label(args) => label::label(args, &config),
        Command::Completions(_) | Command::Man(_) | Command::Hook(_) | Command::Setup(_) => {
            unreachable!("handled before the config")
        }
    }
}

/// For a command on `HOST:ID` (or `hm ls --host HOST`): the mount of that
/// host's sessions, with the command's socket dir and id pointed at it.
/// Kill takes several ids: all must be on the same host.
fn remote_target(command: &mut Command, config: &Config) -> Result<Option<crate::remote::Mount>> {
    let (ids, dir): (Vec<&mut String>, &mut crate::cli::DirArgs) = match command {
        Command::Ls(a) => {
            let Some(host) = a.host.clone() else {
                return Ok(None);
            };
            let m = mount(&host, config)?;
            client::name_host(&host);
            a.dir.socket_dir = Some(m.dir().to_path_buf());
            return Ok(Some(m));
        }
        Command::Status(a) => (vec![&mut a.id], &mut a.dir),
        Command::Attach(a) => (vec![&mut a.id], &mut a.dir),
        Command::Explain(a) => (vec![&mut a.id], &mut a.dir),
        Command::Send(a) => (vec![&mut a.id], &mut a.dir),
        Command::Logs(a) => (vec![&mut a.id], &mut a.dir),
        Command::Wait(a) => (a.ids.iter_mut().collect(), &mut a.dir),
        Command::Capture(a) => (vec![&mut a.id], &mut a.dir),
        Command::Kill(a) => {
            // `--host H` says for every id (and for `--all`) what `H:ID`
            // says for one; an id that names H too is the same session.
            if let Some(host) = a.host.clone() {
                for id in &mut a.ids {
                    match crate::remote::split_target(id) {
                        Some((h, plain)) if h == host => *id = plain.to_owned(),
                        Some(_) => {
                            usage!("--host {host} and {id} name two machines; give one")
                        }
                        None => {}
                    }
                }
                let m = mount(&host, config)?;
                client::name_host(&host);
                a.dir.socket_dir = Some(m.dir().to_path_buf());
                return Ok(Some(m));
            }
            (a.ids.iter_mut().collect(), &mut a.dir)
        }
        Command::Approve(ApproveArgs { answer: a, .. })
        | Command::Deny(a)
        | Command::Choose(ChooseArgs { answer: a, .. }) => (vec![&mut a.id], &mut a.dir),
        Command::Continue(a) => (vec![&mut a.id], &mut a.dir),
        Command::Label(a) => (vec![&mut a.id], &mut a.dir),
        _ => return Ok(None),
    };
    // One host for all, or all local: the same rule `hm rm` follows.
    let targets: Vec<String> = ids.iter().map(|id| (**id).clone()).collect();
    let Some((host, plain)) = ended::remote::host_of(&targets)? else {
        return Ok(None);
    };
    let m = mount(&host, config)?;
    client::name_host(&host);
    for (id, plain) in ids.into_iter().zip(plain) {
        *id = plain;
    }
    dir.socket_dir = Some(m.dir().to_path_buf());
    Ok(Some(m))
}

/// Mounts `host`'s sessions: a `[[hosts]]` name, or `[user@]host[:port]`.
fn mount(host: &str, config: &Config) -> Result<crate::remote::Mount> {
    use crate::remote::{Host, Mount, ssh_command};
    // An address that cannot be one is a command line that cannot mean
    // anything (exit 2), as an id no session can have is.
    let host = Host::resolve(host, &config.hosts).map_err(|e| Usage(e.to_string()))?;
    Ok(Mount::start(
        &host,
        &ssh_command(config.ssh_command.as_deref()),
    )?)
}

/// Writes `hm.1` and `hm-COMMAND.1` for every subcommand into `dir`, each
/// whole (a temporary file renamed into place).
fn man_pages(cmd: clap::Command, dir: &std::path::Path) -> Result<()> {
    use anyhow::Context;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create '{}'", dir.display()))?;
    let cmd = cmd.name("hm");
    let mut pages = vec![("hm".to_owned(), cmd.clone())];
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("hm-{}", sub.get_name());
        // Its synopsis is what a person types, `hm run ...`, not `run
        // ...`.
        let page = sub
            .clone()
            .display_name(&name)
            .bin_name(format!("hm {}", sub.get_name()));
        pages.push((name, page));
    }
    let count = pages.len();
    for (name, page) in pages {
        let mut roff = Vec::new();
        // The footer names the program and its version on every page (a
        // command's said `run ` alone).
        clap_mangen::Man::new(page)
            .source(format!("hm {}", env!("CARGO_PKG_VERSION")))
            .render(&mut roff)?;
        let path = dir.join(format!("{name}.1"));
        let tmp = dir.join(format!(".{name}.1.tmp"));
        std::fs::write(&tmp, roff).with_context(|| format!("cannot write '{}'", tmp.display()))?;
        std::fs::rename(&tmp, &path)
            .with_context(|| format!("cannot write '{}'", path.display()))?;
    }
    // Said where they went: it printed nothing.
    println!("wrote {count} man pages to {}", dir.display());
    Ok(())
}

/// What the completion scripts add to clap's need to know of the command
/// line, read from its definition: the subcommands that take one session
/// id (offered only where it goes), those that take several, and the
/// options that take a value (whose value is not an id).
struct IdWords {
    one: String,
    many: String,
    valued: String,
}

impl IdWords {
    fn of(cmd: &clap::Command) -> IdWords {
        let (mut one, mut many, mut valued) = (Vec::new(), Vec::new(), Vec::new());
        let mut options = |c: &clap::Command| {
            for a in c.get_arguments().filter(|a| !a.is_positional()) {
                if a.get_action().takes_values() {
                    valued.extend(a.get_long().map(|l| format!("--{l}")));
                    valued.extend(a.get_short().map(|s| format!("-{s}")));
                }
            }
        };
        options(cmd);
        for sub in cmd.get_subcommands() {
            options(sub);
            let name = sub.get_name().to_owned();
            match sub.get_positionals().next().map(|a| a.get_id().as_str()) {
                Some("id") => one.push(name),
                Some("ids") => many.push(name),
                _ => {}
            }
        }
        valued.sort();
        valued.dedup();
        IdWords {
            one: one.join(" "),
            many: many.join(" "),
            valued: valued.join(" "),
        }
    }
}

/// What the shell completion script adds to clap's: the ids of the
/// sessions there are (`hm ls --ids`, in the socket dir and with the
/// config the command line names), where the command line takes one: as
/// the id of a command that takes one, before it is given, and not as an
/// option's value (`hm wait ID --state <TAB>`) or the text `hm send`
/// types. Bash and fish; zsh's is [`zsh_with_ids`].
fn session_ids(shell: clap_complete::Shell, words: &IdWords) -> String {
    let IdWords { one, many, valued } = words;
    match shell {
        clap_complete::Shell::Bash => format!(
            r#"
# Session ids, from `hm ls --ids`, where the command line takes one.
_hm_with_ids() {{
    _hm "$@"
    local i w id sub="" n=0 from=() given=()
    for ((i = 1; i < COMP_CWORD; i++)); do
        w="${{COMP_WORDS[i]}}"
        case "$w" in
            --socket-dir|--config) from+=("$w" "${{COMP_WORDS[i+1]}}"); ((i++)); continue ;;
            --socket-dir=*|--config=*) from+=("$w"); continue ;;
            --) continue ;;
            -*)
                case " {valued} " in *" $w "*) ((i++)) ;; esac
                continue ;;
        esac
        if [[ -z "$sub" ]]; then sub="$w"; else ((n++)); given+=("$w"); fi
    done
    local cur="${{COMP_WORDS[COMP_CWORD]}}"
    [[ "$cur" == -* ]] && return
    # The value of an option, not an id.
    ((i > COMP_CWORD)) && return
    case " {one} " in
        *" $sub "*) ((n == 0)) || return ;;
        *) case " {many} " in *" $sub "*) ;; *) return ;; esac ;;
    esac
    for id in $(hm "${{from[@]}}" ls --ids --for "$sub" 2>/dev/null); do
        # An id given already is not offered again (`hm kill a b <TAB>`).
        case " ${{given[*]}} " in *" $id "*) continue ;; esac
        [[ "$id" == "$cur"* ]] && COMPREPLY+=("$id")
    done
}}
complete -F _hm_with_ids -o bashdefault -o default hm
"#
        ),
        clap_complete::Shell::Fish => format!(
            r#"
# Session ids, from `hm ls --ids`, where the command line takes one.
function __hm_id_wanted
    set -l sub ''
    set -l n 0
    set -l skip 0
    for w in (commandline -opc)[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        switch $w
            case '--'
            case '-*'
                if contains -- $w {valued}
                    set skip 1
                end
            case '*'
                if test -z "$sub"
                    set sub $w
                else
                    set n (math $n + 1)
                end
        end
    end
    # The value of an option, not an id.
    test $skip = 1; and return 1
    if contains -- $sub {one}
        test $n = 0
        return
    end
    contains -- $sub {many}
end
function __hm_ids
    set -l words (commandline -opc)
    set -l from
    set -l sub ''
    set -l skip 0
    for i in (seq 2 (count $words))
        set -l w $words[$i]
        if test $skip = 1
            set skip 0
            continue
        end
        switch $w
            case '--socket-dir' '--config'
                if test $i -lt (count $words)
                    set from $from $w $words[(math $i + 1)]
                end
                set skip 1
            case '--socket-dir=*' '--config=*'
                set from $from $w
            case '-*'
                if contains -- $w {valued}
                    set skip 1
                end
            case '*'
                test -z "$sub"; and set sub $w
        end
    end
    # An id given already is not offered again (`hm kill a b <TAB>`).
    set -l given
    if test (count $words) -ge 3
        set given $words[3..-1]
    end
    for id in (hm $from ls --ids --for "$sub" 2>/dev/null)
        contains -- $id $given; or echo $id
    end
end
complete -c hm -n '__hm_id_wanted' -f -a '(__hm_ids)'
"#
        ),
        _ => String::new(),
    }
}

/// Zsh: clap's script completes session ids as files (`_default`); here
/// they come from `hm ls --ids` (in the socket dir and with the config the
/// command line names), through a function defined before the script's
/// last lines run the completion. Zsh's `_arguments` already offers a
/// positional only where it goes.
fn zsh_with_ids(script: &str) -> String {
    let ids = "_hm_session_ids";
    let script = script
        .replace(
            ":id -- Session id:_default'",
            &format!(":id -- Session id:{ids}'"),
        )
        .replace(
            ":ids -- Session ids (several are stopped at once):_default'",
            &format!(":ids -- Session ids (several are stopped at once):{ids}'"),
        );
    let function = format!(
        r#"# Session ids, from `hm ls --ids`.
(( $+functions[{ids}] )) ||
{ids}() {{
    local -a session_ids from words_now given
    local i sub=""
    words_now=(${{(z)BUFFER}})
    for ((i = 2; i <= $#words_now; i++)); do
        case $words_now[i] in
            --socket-dir|--config) from+=($words_now[i] ${{(Q)words_now[i+1]}}); ((i++)) ;;
            --socket-dir=*|--config=*) from+=(${{(Q)words_now[i]}}) ;;
            -*) ;;
            *) [[ -z $sub ]] && sub=$words_now[i] ;;
        esac
    done
    # The sessions the command acts on (`hm rm` takes those ended).
    session_ids=(${{(f)"$(hm $from ls --ids --for "$sub" 2>/dev/null)"}})
    # An id given already is not offered again (`hm kill a b <TAB>`); the
    # word being typed is not given yet.
    given=(${{words_now[3,-1]}})
    [[ $BUFFER == *' ' ]] || given=(${{given[1,-2]}})
    session_ids=(${{session_ids:|given}})
    compadd -a session_ids
}}

"#
    );
    match script.rfind("if [ \"$funcstack[1]\" = \"_hm\" ]") {
        Some(at) => format!("{}{function}{}", &script[..at], &script[at..]),
        None => script + "\n" + &function,
    }
}

/// The exit code for a failed command: 126/127 for a command that could
/// not be started (as a shell would), 2 for a flag's value out of range
/// or an id no session can have (as for any command line clap refuses),
/// 1 otherwise.
pub fn exit_code_for(err: &anyhow::Error) -> u8 {
    let code = err.chain().find_map(|e| {
        e.downcast_ref::<SpawnError>()
            .map(SpawnError::exit_code)
            .or_else(|| {
                e.downcast_ref::<crate::launch::LaunchFailed>()
                    .map(|l| l.code)
            })
            // A flag's value out of its range is the command line's
            // mistake, as one clap refuses (2).
            .or_else(|| {
                let flag = e
                    .downcast_ref::<crate::config::ConfigError>()
                    .is_some_and(|c| matches!(c, crate::config::ConfigError::Override { .. }));
                let bad_id = matches!(
                    e.downcast_ref::<crate::paths::PathError>(),
                    Some(crate::paths::PathError::InvalidId(_))
                );
                (flag || bad_id || e.is::<Usage>()).then_some(2)
            })
    });
    code.and_then(|c| u8::try_from(c).ok())
        .filter(|c| *c != 0)
        .unwrap_or(1)
}

pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
