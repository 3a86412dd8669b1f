//! What the client commands (`attach`, `status`, `ls`, `kill`, `tui`) share:
//! finding a session and talking to it.

pub mod poll;
pub mod view;

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::cli::DirArgs;
use crate::config::Config;
use crate::liveness::{self, Liveness};
use crate::paths::{self, SessionPaths};
use crate::protocol::conn;

/// The socket dir a client command should look in.
pub fn socket_dir(args: &DirArgs, config: &Config) -> PathBuf {
    paths::resolve_socket_dir(args.socket_dir.as_deref(), config.socket_dir.as_deref())
}

/// Resolves a running session by id, or explains that there is none.
///
/// The directory is checked like the supervisor checks it, so a client
/// never talks to a socket planted in a directory someone else controls.
pub fn find_session(dir: &Path, id: &str) -> Result<SessionPaths> {
    let paths = SessionPaths::new(dir, id)?;
    if !dir.exists() {
        // After a restart of the machine the socket dir is gone, and
        // what `hm restore` keeps says what there was.
        if let Some(m) = crate::restore::kept(id, dir).filter(|m| m.lost()) {
            bail!(lost(id, &m));
        }
        bail!(no_session(id, dir));
    }
    paths::SocketDir::check(dir)?;
    match liveness::probe(&paths.pid, &paths.sock, true) {
        Liveness::Running => Ok(paths),
        Liveness::Orphaned(pid) => bail!(orphaned(id, pid)),
        Liveness::Stale | Liveness::Missing => match ended_session(dir, id) {
            // Its supervisor stopped by a signal (a Ctrl-C to `hm run
            // --detach`, a shutdown) leaves a record too, but the session
            // is lost, as `hm ls` and `hm status` list it and `hm restore`
            // sees it: `hm attach` said it had ended.
            Some(r) if crate::lost::holds(dir, &r.id) => match crate::restore::kept(id, dir) {
                Some(m) => bail!(lost(id, &m)),
                None => bail!(has_ended(&r)),
            },
            Some(r) => bail!(has_ended(&r)),
            None => match crate::restore::kept(id, dir).filter(|m| m.lost()) {
                Some(m) => bail!(lost(id, &m)),
                None => bail!(no_session(id, dir)),
            },
        },
    }
}

/// What a command says of session `id`, lost with its supervisor: what
/// `hm restore` would do for it, as it would say it.
pub fn lost(id: &str, m: &crate::restore::manifest::Manifest) -> String {
    let shown = shown_id(id);
    match crate::lost::plan::now(m) {
        Ok(_) => format!(
            "session '{shown}' was lost when its supervisor went away; 'hm restore {id}' starts it again"
        ),
        // Left by choice (a command not started with --restore): `hm
        // restart` runs it anyway.
        Err(why) if why.chosen() => format!(
            "session '{shown}' was lost when its supervisor went away; 'hm restore' would not start it ({why}): 'hm restart {id}' runs it as it was, 'hm rm {id}' forgets it"
        ),
        // Something is missing (its directory, its program): `hm
        // restart` would not run it either.
        Err(why) => format!(
            "session '{shown}' was lost when its supervisor went away; 'hm restore' would not start it ({why}): {}",
            why.what_to_do(id)
        ),
    }
}

/// What a command says of session `r` that has ended.
pub fn has_ended(r: &crate::ended::Ended) -> String {
    let id = shown_id(&r.id);
    format!(
        "session '{id}' has ended: {}; 'hm status {id}' shows how, 'hm restart {id}' runs it again",
        ended_label(r),
    )
}

/// Whether `e` is a connection that went away (see [`ConnError::lost`]).
pub fn connection_lost(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<conn::ConnError>()
            .is_some_and(conn::ConnError::lost)
            || c.downcast_ref::<std::io::Error>()
                .is_some_and(|io| conn::lost_kind(io.kind()))
    })
}

/// The record of session `id`, found running, when `e` is its connection
/// going away because it ended as it was asked: a command started just as
/// a program exits (`hm wait`, then `hm logs`) tells how it ended rather
/// than "Connection reset by peer".
pub fn ended_instead(dir: &Path, id: &str, e: &anyhow::Error) -> Option<crate::ended::Ended> {
    if !connection_lost(e) {
        return None;
    }
    ended_meanwhile(dir, id, answer_deadline())
}

/// Waits until no supervisor holds session `paths`' lock (it lets go
/// last, once its files and its record are written), or until
/// `deadline`: whether it let go.
pub fn lock_released(paths: &SessionPaths, deadline: std::time::Instant) -> bool {
    while liveness::probe(&paths.pid, &paths.sock, false) == Liveness::Running {
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    true
}

/// [`ANSWER_TIMEOUT`] from now.
pub fn answer_deadline() -> std::time::Instant {
    std::time::Instant::now() + ANSWER_TIMEOUT
}

/// Whether `e` is session `id`'s connection going away because its
/// supervisor was killed outright while it was asked: reset before it
/// read the question (SIGKILL drops what it had not accepted), the
/// session is lost, as `hm ls` lists it, and no "Connection reset by
/// peer" is the answer.
pub fn lost_instead(dir: &Path, id: &str, e: &anyhow::Error) -> bool {
    connection_lost(e) && {
        after_hangup(dir, id);
        crate::lost::holds(dir, id)
    }
}

/// Waits, until [`answer_deadline`], while session `id` of `dir` looks
/// orphaned. A supervisor killed outright leaves its program to the
/// hang-up that its pty's closing sends, and until the program has taken
/// it the session reads as one whose program outlived its supervisor: a
/// follower that looked at once said "closed the connection" of a
/// session `hm ls` lists as lost a moment later. A program that ignores
/// the hang-up is orphaned all the same, after the wait.
pub fn after_hangup(dir: &Path, id: &str) {
    let deadline = answer_deadline();
    while std::time::Instant::now() < deadline
        && SessionPaths::new(dir, id).is_ok_and(|s| {
            matches!(
                liveness::probe(&s.pid, &s.sock, false),
                Liveness::Orphaned(_)
            )
        })
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// What a command says of session `id` whose supervisor went without a
/// word (SIGKILL) as it was followed or asked.
pub fn was_lost(id: &str) -> anyhow::Error {
    let id = shown_id(id);
    anyhow::anyhow!("'{id}' was lost with its supervisor ('hm status {id}' says more)")
}

/// `e`, or what to say instead when session `id` was lost as it was
/// asked (see [`lost_instead`]): for a caller that has looked for its
/// record already.
pub fn or_lost(dir: &Path, id: &str, e: anyhow::Error) -> anyhow::Error {
    if lost_instead(dir, id, &e) {
        was_lost(id)
    } else {
        e
    }
}

/// `e`, or what to say instead when session `id` ended as it was asked
/// (see [`ended_instead`]) or was lost (see [`or_lost`]).
pub fn or_ended(dir: &Path, id: &str, e: anyhow::Error) -> anyhow::Error {
    match ended_instead(dir, id, &e) {
        Some(r) => anyhow::anyhow!(has_ended(&r)),
        None => or_lost(dir, id, e),
    }
}

/// The record of a session that has just ended or ends in the next
/// moments: a client that found it running but lost it while asking
/// (the supervisor closes connections as it goes) looks here, until
/// `deadline` (the one it asked by: a supervisor that answers nothing,
/// stopped, must not cost the wait twice).
pub fn ended_meanwhile(
    dir: &Path,
    id: &str,
    deadline: std::time::Instant,
) -> Option<crate::ended::Ended> {
    // The record is written before the supervisor lets go of its lock.
    loop {
        if let Some(r) = ended_session(dir, id) {
            return Some(r);
        }
        let gone = SessionPaths::new(dir, id)
            .is_ok_and(|s| !matches!(liveness::probe(&s.pid, &s.sock, false), Liveness::Running));
        if gone || std::time::Instant::now() >= deadline {
            // One more look: it may have been written as the lock went.
            return ended_session(dir, id);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Session `id` with no supervisor's answer to give: its program outlived
/// its supervisor, or its supervisor holds the lock but did not answer;
/// with what its manifest says of it. `None` if it is neither.
pub fn unlive(dir: &Path, id: &str) -> Option<view::SessionView> {
    let paths = SessionPaths::new(dir, id).ok()?;
    let orphan = match liveness::probe(&paths.pid, &paths.sock, false) {
        Liveness::Orphaned(pid) => Some(pid),
        Liveness::Running => None,
        Liveness::Stale | Liveness::Missing => return None,
    };
    Some(view::SessionView::unlive(
        id,
        orphan,
        crate::restore::kept(id, dir).as_ref(),
    ))
}

/// How long a command waits for a supervisor's answer before saying it does
/// not respond (a stopped or wedged supervisor would otherwise hang it).
pub const ANSWER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// Runs `ask` (a connection and a question), giving up after
/// [`ANSWER_TIMEOUT`] with an error that names session `id`.
pub async fn answered<T>(id: &str, ask: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    match tokio::time::timeout(ANSWER_TIMEOUT, ask).await {
        Ok(r) => r,
        Err(_) => bail!(
            "session '{}' is not responding (its supervisor may be stopped or overloaded)",
            shown_id(id)
        ),
    }
}

/// What to tell the user about a session whose supervisor was killed while
/// its program, ignoring the hang-up, runs on without a terminal.
pub fn orphaned(id: &str, pid: u32) -> String {
    format!(
        "session '{}' lost its supervisor, but its program (pid {pid}) still runs without a terminal; stop it with 'hm kill {}' (or 'kill {pid}')",
        shown_id(id),
        shown_id(id)
    )
}

/// The machine this process's sessions are on, when not this one
/// ([`name_host`]).
pub fn shown_host() -> Option<&'static str> {
    SHOWN_HOST.get().map(String::as_str)
}

fn no_session(id: &str, dir: &Path) -> String {
    match SHOWN_HOST.get() {
        Some(host) => format!(
            "no session named '{}' on {host} (see 'hm ls --host {host}')",
            paths::sanitize(id),
        ),
        None => format!(
            "no session named '{}' in {} (see 'hm ls')",
            paths::sanitize(id),
            dir.display()
        ),
    }
}

/// The machine whose sessions this command names (`HOST:ID`): the
/// command works on a mount of them under their plain ids, and says
/// `box:far` where it names one, as the person gave it.
static SHOWN_HOST: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Names `host` in what this process says of its sessions (see
/// [`shown_id`]); once, before anything is said.
pub fn name_host(host: &str) {
    let _ = SHOWN_HOST.set(paths::sanitize(host));
}

/// Session `id` as the person named it: `box:far` for one on another
/// machine ([`name_host`]), else `far`; printable either way.
pub fn shown_id(id: &str) -> String {
    let id = paths::sanitize(id);
    match SHOWN_HOST.get() {
        Some(host) => format!("{host}:{id}"),
        None => id,
    }
}

/// Session `id` as a script passes it to the next command: `box:cx` for
/// one of another machine ([`name_host`]), else `cx`; not made printable
/// (a JSON string is), unlike [`shown_id`].
pub fn named_id(id: &str) -> String {
    match SHOWN_HOST.get() {
        Some(host) => format!("{host}:{id}"),
        None => id.to_owned(),
    }
}

/// `text` a supervisor said (it knows its session by its plain id) as
/// this command names the session: `'cx'` and `hm deny cx` become
/// `'box:cx'` and `hm deny box:cx` for a session of another machine
/// ([`name_host`]); the id only where it stands as a word of its own.
pub fn named_in(text: &str, id: &str) -> String {
    match SHOWN_HOST.get() {
        Some(host) if !id.is_empty() => with_host(text, id, host),
        _ => text.to_owned(),
    }
}

/// `text` with `host:` put before each word `id` in it.
fn with_host(text: &str, id: &str, host: &str) -> String {
    let of_an_id = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':');
    let mut out = String::with_capacity(text.len() + host.len() * 2);
    let mut rest = text;
    while let Some(at) = rest.find(id) {
        let (head, tail) = (&rest[..at], &rest[at + id.len()..]);
        out.push_str(head);
        // A `.` ends a sentence, or goes on a word (`cx.log`); a `:`
        // before it is a host's already.
        let mut after = tail.chars();
        let goes_on = match after.next() {
            Some('.') => after.next().is_some_and(|c| of_an_id(c) && c != ':'),
            Some(c) => of_an_id(c) && c != ':',
            None => false,
        };
        if !head.chars().next_back().is_some_and(of_an_id) && !goes_on {
            out.push_str(host);
            out.push(':');
        }
        out.push_str(id);
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// A runtime for a client command: one thread, like the supervisor.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// A clock redrawn once a second (the dashboard's timers, `hm attach`'s
/// bar): whole seconds below a minute (`0s`, `42s`), then as
/// [`human_ms`]. With milliseconds or tenths, the figure drawn at a state
/// change (`idle 3ms`) stood for a whole second, and the tenths after it
/// were whatever the redraw happened to land on.
pub fn clock_ms(ms: u64) -> String {
    if ms < 60_000 {
        format!("{}s", ms / 1000)
    } else {
        human_ms(ms)
    }
}

/// Formats milliseconds for people: `850ms`, `3.2s`, `2m05s`, `1h02m`, `3d04h`.
pub fn human_ms(ms: u64) -> String {
    let s = ms / 1000;
    match ms {
        0..1_000 => format!("{ms}ms"),
        1_000..60_000 => format!("{}.{}s", s, (ms % 1000) / 100),
        60_000..3_600_000 => format!("{}m{:02}s", s / 60, s % 60),
        3_600_000..86_400_000 => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d{:02}h", s / 86_400, (s % 86_400) / 3600),
    }
}

/// The signal an exit code says ended the program (128 + N, as a shell
/// gives it): `Ok` with it, or `Err(N)` for a number nix does not name.
pub fn signal_of(code: i32) -> Option<Result<nix::sys::signal::Signal, i32>> {
    (code > 128 && code < 128 + 65)
        .then(|| nix::sys::signal::Signal::try_from(code - 128).map_err(|_| code - 128))
}

/// [`signal_of`] as people read it: `SIGTERM`, or `signal 40`.
pub fn signal_name(code: i32) -> Option<String> {
    signal_of(code).map(|s| match s {
        Ok(sig) => sig.as_str().to_owned(),
        Err(n) => format!("signal {n}"),
    })
}

/// How a session ended, as short as `hm ls`'s STATE column says it:
/// `exited 3`, `killed SIGTERM`, `killed (exit 15)` for a code of its own
/// when its end was asked for (`killed 143` read as signal 143).
pub fn ended_short(code: i32, killed: bool) -> String {
    match (killed, signal_name(code)) {
        (true, Some(sig)) => format!("killed {sig}"),
        (true, None) => format!("killed (exit {code})"),
        (false, _) => format!("exited {code}"),
    }
}

/// The record of session `id` that ended, if one is kept in `dir`, or
/// after a reboot emptied `dir`, what its manifest says of its end
/// ([`crate::ended::get`]): `hm status`, `hm wait`, `hm attach` of it say
/// how it ended, not that there is no such session.
pub fn ended_session(dir: &Path, id: &str) -> Option<crate::ended::Ended> {
    crate::ended::get(dir, id)
}

/// `exited with code 3`; when someone asked for the end, `killed by
/// SIGTERM (exit code 143)`, or `killed (exit code 15)`: a program that
/// catches SIGTERM and exits with a code of its own (less: 15) did not
/// fail.
pub fn exited_with(code: i32, killed: bool) -> String {
    match (killed, signal_of(code).and_then(Result::ok)) {
        (true, Some(sig)) => format!("killed by {} (exit code {code})", sig.as_str()),
        (true, None) => format!("killed (exit code {code})"),
        (false, _) => format!("exited with code {code}"),
    }
}

/// `exited with code 3`, or `killed by SIGTERM (exit code 143)` when the
/// session's record says someone ended it, in `hm kill`'s words. The
/// record is written as its supervisor lets go, moments after the EXIT:
/// waited for (up to [`ANSWER_TIMEOUT`]).
pub fn ended_words(session: &SessionPaths, code: i32) -> String {
    let killed = end_record(session, code).is_some_and(|r| r.killed);
    exited_with(code, killed)
}

/// The record of `session`, whose EXIT said `code`, once its supervisor
/// has written it (after its clients have their EXIT): whether someone
/// asked for the end is there.
pub fn end_record(session: &SessionPaths, code: i32) -> Option<crate::ended::Ended> {
    let dir = paths::dir_of(&session.sock);
    ended_meanwhile(dir, &session.id, answer_deadline()).filter(|r| r.exit_code == code)
}

/// How a session lost when a signal stopped its supervisor (a shutdown,
/// a Ctrl-C to `hm run --detach`) ended: its program was ended with it,
/// and `hm ls` lists it as lost, for `hm restore`.
pub fn stopped_words(code: i32) -> String {
    format!("lost: its supervisor was stopped by a signal (exit code {code})")
}

/// `exited with code 3, 2m05s ago`.
pub fn ended_label(r: &crate::ended::Ended) -> String {
    let ago = crate::clock::unix_ms().saturating_sub(r.ended_unix_ms);
    format!(
        "{}, {} ago",
        exited_with(r.exit_code, r.killed),
        human_ms(ago)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_supervisors_words_name_another_machines_session_as_given() {
        let said = "'cx' has shown no dialog 9 (it takes hm approve cx, hm deny cx)";
        assert_eq!(
            with_host(said, "cx", "box"),
            "'box:cx' has shown no dialog 9 (it takes hm approve box:cx, hm deny box:cx)"
        );
        // Only the id as a word: not inside another, nor a file's name.
        assert_eq!(
            with_host("cx2 and cx.log and cx-1 and cx.", "cx", "box"),
            "cx2 and cx.log and cx-1 and box:cx."
        );
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(human_ms(850), "850ms");
        assert_eq!(clock_ms(850), "0s");
        assert_eq!(clock_ms(59_999), "59s");
        assert_eq!(clock_ms(125_000), "2m05s");
        assert_eq!(human_ms(3_250), "3.2s");
        assert_eq!(human_ms(125_000), "2m05s");
        assert_eq!(human_ms(3_720_000), "1h02m");
        assert_eq!(human_ms(100_000_000), "1d03h");
    }

    #[test]
    fn exits_are_told_as_people_read_them() {
        assert_eq!(exited_with(3, false), "exited with code 3");
        assert_eq!(exited_with(15, true), "killed (exit code 15)");
        assert_eq!(exited_with(143, true), "killed by SIGTERM (exit code 143)");
        assert_eq!(signal_name(170).as_deref(), Some("signal 42"));
    }
}
