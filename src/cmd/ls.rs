//! `hm ls`: every session in the socket dir, queried concurrently.
//!
//! Liveness comes from trying each pid file's lock; entries left behind by
//! a supervisor that was killed are removed on the way, except the pid
//! file of a program that outlived it, which is listed as orphaned.

use std::io::{IsTerminal, Write};
use std::os::fd::AsFd;
use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use crate::cli::LsArgs;
use crate::client::view::SessionView;
use crate::client::{self, human_ms};
use crate::clock;
use crate::config::Config;
use crate::liveness::{self, Liveness};
use crate::paths::{self, SessionPaths};
use crate::protocol::{Info, Status, conn};

/// What the IDLE column gives: the time since the session last printed,
/// but for one waiting for you the time it has waited, as the dashboard's
/// title does. Claude Code blinks a mark at its dialogs, so its output
/// time read a few hundred ms all the while it waited.
fn idle_ms(s: &Status) -> u32 {
    if s.state == crate::classify::ProcessState::Waiting.as_byte() {
        s.state_ms.max(s.idle_ms)
    } else {
        s.idle_ms
    }
}

/// A session that does not answer within this time is listed as such
/// rather than holding up the whole listing.
const QUERY_TIMEOUT: Duration = Duration::from_millis(500);
/// Sessions asked at once: enough to keep every core busy answering.
const IN_FLIGHT: usize = 128;

/// [`IN_FLIGHT`], or fewer when the descriptor limit is low: every
/// session is listed however many there are and whatever `ulimit -n`
/// says (half the limit, less what the process itself holds).
fn in_flight() -> usize {
    let limit = crate::fd::soft_limit().unwrap_or(1024);
    usize::try_from(limit.saturating_sub(32) / 2).map_or(IN_FLIGHT, |n| n.clamp(4, IN_FLIGHT))
}

#[derive(Debug)]
struct Row {
    id: String,
    status: Option<Status>,
    info: Option<Info>,
    /// The supervisor is gone, but its program (this pid) still runs.
    orphan: Option<u32>,
    /// The session ended; its record is kept (`hm rm` forgets it).
    ended: Option<crate::ended::Ended>,
    /// Lost when its supervisor went away (the machine restarted): its
    /// manifest, and whether `hm restore` would start it again.
    lost: Option<(crate::restore::manifest::Manifest, bool)>,
    /// What `hm restore` keeps of one orphaned or not answering: what it
    /// runs, where, since when, which no supervisor said.
    kept: Option<crate::restore::manifest::Manifest>,
}

pub fn ls(args: LsArgs, config: &Config) -> Result<i32> {
    let dir = client::socket_dir(&args.dir, config);
    let mut rows = if dir.exists() {
        paths::SocketDir::check(&dir)?;
        client::runtime()?.block_on(query_all(&dir))?
    } else {
        Vec::new()
    };
    // Sessions that ended, after the running ones, most recent first (to
    // the second, then by id); an id that runs again shows only the
    // running session. One that did not answer and has a record ended:
    // its supervisor, its record written (a supervisor starting removes
    // its id's), is delivering its EXIT and serves no one; `hm wait` had
    // said so ("no answer" for 0.3 s).
    let running: std::collections::HashSet<String> = rows
        .iter()
        .filter(|r| r.status.is_some())
        .map(|r| r.id.clone())
        .collect();
    let mut ended = crate::ended::list_besides(&dir, |id| running.contains(id));
    ended.sort_by(crate::ended::shown_order);
    for r in ended {
        if let Some(row) = rows
            .iter_mut()
            .find(|row| row.id == r.id && row.status.is_none() && row.orphan.is_none())
        {
            row.ended = Some(r);
            continue;
        }
        if !rows.iter().any(|row| row.id == r.id) {
            rows.push(Row {
                id: r.id.clone(),
                status: None,
                info: None,
                orphan: None,
                ended: Some(r),
                lost: None,
                kept: None,
            });
        }
    }
    // Sessions lost with their supervisor, as `hm restore` sees them; one
    // that ended by a signal (a shutdown) shows as lost, not as exited.
    // Those that answered are not lost; the rest are checked.
    for l in crate::lost::list_besides(&dir, |id| running.contains(id)) {
        let restartable = l.restartable();
        let crate::lost::Lost { id, manifest, .. } = l;
        let lost = Some((manifest, restartable));
        match rows.iter_mut().find(|row| row.id == id) {
            Some(row) if row.status.is_none() && row.orphan.is_none() => row.lost = lost,
            Some(_) => {}
            None => rows.push(Row {
                id,
                status: None,
                info: None,
                orphan: None,
                ended: None,
                lost,
                kept: None,
            }),
        }
    }
    for row in rows
        .iter_mut()
        .filter(|r| r.status.is_none() && r.ended.is_none() && r.lost.is_none())
    {
        row.kept = crate::restore::kept(&row.id, &dir);
    }
    if let Some(command) = &args.for_command {
        rows.retain(|r| taken_by(&row_view(r), command));
    }
    if let Some(state) = &args.state {
        rows.retain(|r| in_state(&row_view(r), state));
    }
    let mut out = std::io::stdout().lock();
    // On another machine, ids are shown as `box:ID`, what every command
    // takes (a plain id names a session here); `--json` keeps the id as
    // that machine has it.
    if args.ids {
        for r in &rows {
            writeln!(out, "{}", client::shown_id(&r.id))?;
        }
        return Ok(0);
    }
    if args.json {
        let list: Vec<_> = rows.iter().map(row_view).collect();
        writeln!(out, "{}", serde_json::to_string(&list)?)?;
        return Ok(0);
    }
    if rows.is_empty() {
        let which = args
            .state
            .as_deref()
            .map_or(String::new(), |s| format!("{s} "));
        // On another machine the directory is this process's mount of
        // it, a name of nothing there.
        match client::shown_host() {
            Some(host) => eprintln!("no {which}sessions on {host}"),
            None => eprintln!(
                "no {which}sessions in {}",
                crate::error::cut(&dir.display().to_string(), crate::error::PART_MAX)
            ),
        }
        return Ok(0);
    }
    let now = clock::unix_ms();
    // On a terminal a row takes one line: the command is cut to what the
    // other columns leave (at 80 columns every long row wrapped). Piped,
    // it is whole, for scripts.
    let cols = std::io::stdout()
        .is_terminal()
        .then(|| crate::pty::window_size(std::io::stdout().as_fd()).ok())
        .flatten()
        .filter(|s| s.cols > 0)
        .map(|s| usize::from(s.cols));
    let shown = |words: &[String]| shown_command(words, cols.is_some());
    // Each row's cells, and its label apart: on a terminal the label is
    // cut before the command is (a long one took the whole cell at 80
    // columns, and the command never showed).
    let (table, labels): (Vec<[String; 6]>, Vec<Option<String>>) = rows
        .iter()
        .map(|r| {
            if let Some((m, restartable)) = &r.lost {
                let row = [
                    client::shown_id(&r.id),
                    "-".into(),
                    if *restartable {
                        "lost (restartable)".into()
                    } else {
                        "lost".into()
                    },
                    "-".into(),
                    "-".into(),
                    shown(&m.argv),
                ];
                return (row, m.label.clone());
            }
            if let Some(e) = &r.ended {
                let row = [
                    client::shown_id(&r.id),
                    "-".into(),
                    client::ended_short(e.exit_code, e.killed),
                    format!("{} ago", human_ms(now.saturating_sub(e.ended_unix_ms))),
                    human_ms(e.ended_unix_ms.saturating_sub(e.started_unix_ms)),
                    shown(&e.command),
                ];
                return (row, e.label.clone());
            }
            let (pid, state, idle) = match (&r.status, r.orphan) {
                (Some(s), _) => (
                    s.pid.to_string(),
                    SessionView::live(&r.id, s, r.info.as_ref()).label(),
                    human_ms(u64::from(idle_ms(s))),
                ),
                (None, Some(pid)) => (pid.to_string(), "orphaned".into(), "-".into()),
                (None, None) => ("-".into(), "no answer".into(), "-".into()),
            };
            let uptime = r
                .info
                .as_ref()
                .map(|i| i.started_unix_ms)
                .or(r.kept.as_ref().map(|m| m.started_unix_ms))
                .filter(|t| *t > 0)
                .map_or("-".into(), |t| human_ms(now.saturating_sub(t)));
            let label = r
                .info
                .as_ref()
                .and_then(|i| i.label.as_deref())
                .or(r.kept.as_ref().and_then(|m| m.label.as_deref()));
            let row = [
                client::shown_id(&r.id),
                pid,
                state,
                idle,
                uptime,
                command(r, cols.is_some()),
            ];
            (row, label.map(str::to_owned))
        })
        .unzip();
    let header = ["ID", "PID", "STATE", "IDLE", "UPTIME", "COMMAND"].map(String::from);
    let mut widths = [0usize; 5];
    for row in std::iter::once(&header).chain(&table) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    // The id is what every other command takes: one as long as people
    // give (up to WHOLE_ID) is whole while the command keeps a few
    // columns; a longer one is cut so that the command keeps 12, as one
    // long id narrows every row's command (a 35-character id wrapped every
    // row; a 24-character one was cut at 80 columns for 12 of the
    // command). A cut id gives up its middle, as in the dashboard: ids
    // that tell sessions apart often differ only at the end (`-extend-1`).
    if let Some(cols) = cols {
        let others: usize = widths[1..].iter().map(|w| w + 2).sum();
        let cut = cols.saturating_sub(others + 2 + 12);
        let longest_whole = table
            .iter()
            .map(|row| row[0].chars().count())
            .filter(|w| *w <= WHOLE_ID)
            .max()
            .unwrap_or(0);
        let whole = longest_whole.min(cols.saturating_sub(others + 2 + MIN_COMMAND));
        widths[0] = widths[0].min(cut.max(whole).max(MIN_ID));
    }
    let before: usize = widths.iter().map(|w| w + 2).sum();
    let room = cols.map(|c| c.saturating_sub(before).max(MIN_COMMAND));
    let labels = std::iter::once(None).chain(labels);
    for (row, label) in std::iter::once(&header).chain(&table).zip(labels) {
        let mut line = String::new();
        for (i, (w, cell)) in widths.iter().zip(row).enumerate() {
            let cell = if i == 0 {
                crate::cut::short_id(cell, *w)
            } else {
                cell.clone()
            };
            line.push_str(&format!("{cell:<w$}  ", w = *w));
        }
        line.push_str(&command_cell(label.as_deref(), &row[5], room));
        writeln!(out, "{}", line.trim_end())?;
    }
    for r in &rows {
        if let Some(pid) = r.orphan {
            eprintln!("hm: {}", client::orphaned(&r.id, pid));
        }
    }
    let restartable = rows
        .iter()
        .filter(|r| r.lost.as_ref().is_some_and(|(_, ok)| *ok))
        .count();
    // Each left is said with its own reason: the rule about `--restore`
    // was once said of a shell whose directory had gone, which no flag
    // would have brought back.
    let stranded: Vec<(&str, crate::lost::plan::Refusal)> = rows
        .iter()
        .filter_map(|r| match &r.lost {
            Some((m, false)) => Some((r.id.as_str(), crate::lost::plan::now(m).err()?)),
            _ => None,
        })
        .collect();
    // Said when a session is first listed as lost, not at every listing.
    let told = (restartable + stranded.len() > 0)
        && !crate::lost::first_listed(rows.iter().filter_map(|r| r.lost.as_ref().map(|(m, _)| m)));
    if stranded.iter().any(|(_, why)| why.chosen()) && !told {
        eprintln!(
            "hm: 'hm restore' does not start a lost command again unless it was started with \
             'hm run --restore': 'hm restart ID' runs it as it was, 'hm rm ID' forgets it"
        );
    }
    if !told {
        for (id, why) in stranded.iter().filter(|(_, why)| !why.chosen()) {
            eprintln!(
                "hm: 'hm restore' will not start '{}': {why} {}",
                client::shown_id(id),
                why.way_out(id)
            );
        }
    }
    if restartable > 0 && !told {
        // Counting every lost row: `3 sessions lost` over 5 rows saying
        // `lost` read as a miscount.
        let lost = restartable + stranded.len();
        let s = if lost == 1 { "" } else { "s" };
        let whose = if lost == 1 {
            "its supervisor"
        } else {
            "their supervisors"
        };
        let which = match (lost, restartable) {
            (1, _) => "it".to_owned(),
            (l, r) if l == r => "them".to_owned(),
            (_, r) => format!("{r} of them"),
        };
        eprintln!(
            "hm: {lost} session{s} lost when {whose} went away: 'hm restore' starts {which} again"
        );
    }
    Ok(0)
}

/// The fewest columns an id is cut to on a narrow terminal.
const MIN_ID: usize = 8;

/// The fewest columns of the command kept on a terminal, for an id of up
/// to [`WHOLE_ID`]: its program's name, or most of it.
const MIN_COMMAND: usize = 6;

/// The longest id kept whole at the command's expense.
const WHOLE_ID: usize = 32;

/// The command, after the session's label when it has one (`[review PR
/// 42] claude`), cut to `room` columns on a terminal: where both do not
/// fit, the label gives up all but half the room (and at least
/// [`MIN_LABEL`]) before the command is cut.
fn command_cell(label: Option<&str>, command: &str, room: Option<usize>) -> String {
    let label = label.filter(|l| !l.is_empty()).map(paths::sanitize);
    let Some(room) = room else {
        return match label {
            Some(l) => format!("[{l}] {command}"),
            None => command.to_owned(),
        };
    };
    let Some(label) = label else {
        return crate::cut::end(command, room);
    };
    let width = unicode_width::UnicodeWidthStr::width;
    let whole = width(label.as_str()) + 3 + width(command);
    let label = if whole > room {
        let keep = (room / 2).max(MIN_LABEL).saturating_sub(3);
        crate::cut::end(&label, keep)
    } else {
        label
    };
    crate::cut::end(&format!("[{label}] {command}"), room)
}

/// The fewest columns a label keeps, brackets and space included.
const MIN_LABEL: usize = 10;

fn command(r: &Row, terminal: bool) -> String {
    if let Some(pid) = r.orphan {
        // No supervisor to ask: the kernel's record of the program.
        let argv = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let words: Vec<String> = argv
            .split(|&b| b == 0)
            .filter(|w| !w.is_empty())
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        return if words.is_empty() {
            "-".into()
        } else {
            paths::command_for_people(&words)
        };
    }
    // One not answering is still the command it was started with.
    let words = r
        .info
        .as_ref()
        .map(|i| &i.command)
        .or(r.kept.as_ref().map(|m| &m.argv));
    words.map_or_else(|| "-".into(), |w| shown_command(w, terminal))
}

/// A command's words as the table shows them. On a terminal, `env` and
/// the settings it makes come off the front, and the program is named by
/// its file name (`env -i PATH=... /opt/bin/claude -c` is `claude -c`):
/// the program is what a person looks for, and at 80 columns the settings
/// and the path took the whole cell. Piped, the command is whole.
fn shown_command(words: &[String], terminal: bool) -> String {
    let from = if terminal {
        crate::detect::rules::program_at(words).unwrap_or(0)
    } else {
        0
    };
    let mut shown: Vec<String> = words[from..].to_vec();
    if terminal
        && let Some(first) = shown.first_mut()
        && let Some(name) = Path::new(first.as_str())
            .file_name()
            .and_then(|n| n.to_str())
    {
        *first = name.to_owned();
    }
    paths::command_for_people(&shown)
}

/// Whether `hm COMMAND` acts on a session (`ls --for`, the completions'
/// ids): the completions offered running sessions to `hm rm` and `hm
/// restart`, which refuse them, and ended ones to `hm attach`.
fn taken_by(v: &SessionView, command: &str) -> bool {
    let running = !v.ended && !v.lost;
    match command {
        "attach" | "send" | "approve" | "deny" | "choose" | "continue" | "label" => {
            running && !v.orphaned
        }
        "kill" => running,
        "rm" | "restart" => !running,
        _ => true,
    }
}

/// Whether a session is in `state`, one of [`crate::cli::ls_states`]: the
/// top level of a running session's state, or how it stopped running.
fn in_state(v: &SessionView, state: &str) -> bool {
    match state {
        "ended" | "exited" | "dead" => v.ended,
        "lost" => v.lost,
        "orphaned" => v.orphaned,
        name => {
            !v.ended
                && !v.lost
                && [&v.primary, &v.state, &v.detail]
                    .iter()
                    .any(|s| s.as_deref() == Some(name))
        }
    }
}

fn row_view(r: &Row) -> SessionView {
    if let Some((m, restartable)) = &r.lost {
        return SessionView::lost(m, *restartable);
    }
    match (&r.ended, &r.status, r.orphan) {
        (Some(e), _, _) => SessionView::ended(e),
        (None, Some(s), _) => SessionView::live(&r.id, s, r.info.as_ref()),
        (None, None, orphan) => SessionView::unlive(&r.id, orphan, r.kept.as_ref()),
    }
}

async fn query_all(dir: &Path) -> Result<Vec<Row>> {
    let mut set = tokio::task::JoinSet::new();
    let mut rows = Vec::new();
    let permits = std::sync::Arc::new(tokio::sync::Semaphore::new(in_flight()));
    for id in paths::list_ids(dir)? {
        let Ok(session) = SessionPaths::new(dir, &id) else {
            continue;
        };
        let permits = std::sync::Arc::clone(&permits);
        set.spawn(async move {
            let _permit = permits.acquire_owned().await;
            let row = |status, info, orphan| Row {
                id: id.clone(),
                status,
                info,
                orphan,
                ended: None,
                lost: None,
                kept: None,
            };
            // The answer proves the supervisor alive; its pid file's lock
            // is tried only when there is none (a thousand sessions list in
            // half the system calls).
            let answer =
                tokio::time::timeout(QUERY_TIMEOUT, conn::info_status_at(&session.sock)).await;
            match answer {
                Ok(Ok((info, status))) => Some(row(Some(status), info, None)),
                Ok(Err(conn::ConnError::Connect { .. })) => {
                    match liveness::probe(&session.pid, &session.sock, true) {
                        Liveness::Running => Some(row(None, None, None)),
                        // No supervisor to ask.
                        Liveness::Orphaned(pid) => Some(row(None, None, Some(pid))),
                        Liveness::Stale | Liveness::Missing => None,
                    }
                }
                _ => Some(row(None, None, None)),
            }
        });
    }
    while let Some(row) = set.join_next().await {
        if let Ok(Some(row)) = row {
            rows.push(row);
        }
    }
    rows.sort_by(|a, b| crate::paths::natural_cmp(&a.id, &b.id));
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::shown_command;

    fn shown(words: &[&str], terminal: bool) -> String {
        let words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        shown_command(&words, terminal)
    }

    #[test]
    fn env_and_its_settings_come_off_a_command_shown_on_a_terminal() {
        let run = [
            "/usr/bin/env",
            "-i",
            "-u",
            "HOME",
            "A=1",
            "B=2",
            "/opt/bin/claude",
            "-c",
        ];
        assert_eq!(shown(&run, true), "claude -c");
        assert_eq!(shown(&["./build.sh", "--all"], true), "build.sh --all");
        assert_eq!(shown(&run, false), run.join(" "));
        assert_eq!(shown(&["env", "--", "X=1", "ls"], true), "X=1 ls");
        // `env` alone prints its environment: nothing to take off.
        assert_eq!(shown(&["env", "A=1"], true), "env A=1");
        assert_eq!(shown(&["envoy", "-c", "x"], true), "envoy -c x");
    }
}
