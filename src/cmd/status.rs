//! `hm status ID`: one session's state, for people or (`--json`) scripts.

use std::io::Write;

use anyhow::Result;

use crate::cli::StatusArgs;
use crate::client::view::SessionView;
use crate::client::{self, find_session, human_ms};
use crate::config::Config;
use crate::protocol::conn;

pub fn status(args: StatusArgs, config: &Config) -> Result<i32> {
    let dir = client::socket_dir(&args.dir, config);
    // One wait in all, asking and then looking for the ended record.
    let deadline = std::time::Instant::now() + client::ANSWER_TIMEOUT;
    // The screen too for people: what the session shows now, as an ended
    // one's block gives its last lines (a live one's showed none of its
    // output).
    let want_screen = !args.json;
    let asked = find_session(&dir, &args.id).and_then(|session| {
        client::runtime()?.block_on(client::answered(&session.id, async {
            if want_screen {
                let (screen, info, st) = conn::screen_info_status_at(&session.sock).await?;
                Ok((Some(screen), info, st))
            } else {
                let (info, st) = conn::info_status_at(&session.sock).await?;
                Ok((None, info, st))
            }
        }))
    });
    let (screen, info, st) = match asked {
        Ok(answer) => answer,
        Err(e) => {
            // Not running: perhaps it ended (or is ending as we ask), and
            // its record is kept.
            let ended = client::ended_meanwhile(&dir, &args.id, deadline);
            // Lost with its supervisor: shown as `hm ls` lists it, and
            // what `hm restore` would do with it; so too when its
            // program's end was recorded, as one that a shutdown's signal
            // ended is (it said `killed by SIGHUP` where `hm ls` said lost).
            let lost = crate::lost::list(&dir)
                .into_iter()
                .find(|l| l.id == args.id);
            let (None, Some(r)) = (&lost, ended) else {
                let Some(lost) = lost else {
                    // A script asked for the object every session has: it
                    // gets one for a session orphaned or not answering
                    // too, as `hm ls --json` lists it, not an empty
                    // stdout. One not answering is still an error (exit 1,
                    // said on stderr): nothing of its state is known.
                    // An orphan is known, in text as in JSON (exit 0): its
                    // text said only the error, and exited 1.
                    if let Some(view) = client::unlive(&dir, &args.id) {
                        let mut out = std::io::stdout().lock();
                        if args.json {
                            writeln!(out, "{}", serde_json::to_string(&view)?)?;
                            if view.error.is_none() {
                                return Ok(0);
                            }
                        } else if let (true, Some(pid)) = (view.orphaned, view.pid) {
                            let id = crate::client::shown_id(&args.id);
                            writeln!(out, "session:  {id}")?;
                            writeln!(
                                out,
                                "state:    orphaned: its supervisor is gone; its program (pid \
                                 {pid}) runs on without a terminal"
                            )?;
                            if let Some(command) = &view.command {
                                let dir = view.workdir.as_deref().unwrap_or("");
                                command_lines(&mut out, command, dir, view.cwd.as_deref())?;
                            }
                            writeln!(out, "(hm kill {id} stops it)")?;
                            return Ok(0);
                        }
                    }
                    return Err(e);
                };
                let mut out = std::io::stdout().lock();
                if args.json {
                    let view = SessionView::lost(&lost.manifest, lost.restartable());
                    writeln!(out, "{}", serde_json::to_string(&view)?)?;
                    return Ok(0);
                }
                let m = &lost.manifest;
                writeln!(out, "session:  {}", crate::client::shown_id(&lost.id))?;
                if let Some(label) = &m.label {
                    writeln!(out, "label:    {}", crate::paths::sanitize(label))?;
                }
                let state = if lost.restartable() {
                    "lost (restartable)"
                } else {
                    "lost"
                };
                writeln!(out, "state:    {state}")?;
                command_lines(&mut out, &m.argv, &m.workdir, m.cwd.as_deref())?;
                let ago = crate::clock::unix_ms().saturating_sub(m.started_unix_ms);
                writeln!(out, "started:  {} ago", human_ms(ago))?;
                writeln!(out, "({})", client::lost(&lost.id, m))?;
                return Ok(0);
            };
            let mut out = std::io::stdout().lock();
            if args.json {
                writeln!(out, "{}", serde_json::to_string(&SessionView::ended(&r))?)?;
                return Ok(0);
            }
            writeln!(out, "session:  {}", crate::client::shown_id(&r.id))?;
            if let Some(label) = &r.label {
                writeln!(out, "label:    {label}")?;
            }
            writeln!(out, "state:    {}", client::ended_label(&r))?;
            command_lines(&mut out, &r.command, &r.workdir, None)?;
            writeln!(
                out,
                "ran:      {}",
                human_ms(r.ended_unix_ms.saturating_sub(r.started_unix_ms))
            )?;
            if !r.last_lines.is_empty() {
                writeln!(out, "last lines:")?;
                for l in &r.last_lines {
                    let shown: String = l
                        .chars()
                        .map(|c| if c.is_control() { '?' } else { c })
                        .collect();
                    writeln!(out, "  {shown}")?;
                }
            }
            writeln!(
                out,
                "(hm restart {0} runs it again; hm rm {0} forgets it)",
                crate::client::shown_id(&r.id)
            )?;
            return Ok(0);
        }
    };
    let session_id = args.id.clone();
    let view = SessionView::live(&session_id, &st, info.as_ref());
    let state = view.label();
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&view)?)?;
    } else {
        writeln!(out, "session:  {}", crate::client::shown_id(&session_id))?;
        if let Some(label) = info.as_ref().and_then(|i| i.label.as_deref()) {
            writeln!(out, "label:    {label}")?;
        }
        writeln!(out, "pid:      {}", st.pid)?;
        writeln!(
            out,
            "state:    {state} (for {})",
            human_ms(u64::from(st.state_ms))
        )?;
        // Whole, as an ended or lost session's block gives it: which
        // program runs, where.
        if let Some(i) = info.as_ref().filter(|i| !i.command.is_empty()) {
            command_lines(&mut out, &i.command, &i.workdir, i.cwd.as_deref())?;
        }
        let report = info.as_ref().and_then(|i| i.state.as_ref());
        if let Some(health) = report
            .map(|r| r.health.name())
            .filter(|h| *h != "alive" && *h != "dead")
        {
            writeln!(out, "health:   {health}")?;
        }
        if let Some(agent) = report.and_then(|r| r.agent.as_deref()) {
            writeln!(out, "agent:    {agent}")?;
        }
        let stopped = report.is_some_and(crate::protocol::StateReport::stopped);
        if stopped {
            // The way out, said where the stranded person looks.
            let shown = crate::client::shown_id(&session_id);
            writeln!(out, "          (hm continue {shown} resumes it)")?;
        }
        // A stopped program's screen (Claude Code's `suspended`) is a
        // dialog of its rules with nothing to answer: not shown as one.
        if let Some(d) = view.dialog.as_ref().filter(|_| !stopped) {
            let about = d.subject.as_deref().map_or_else(
                || d.rule.clone(),
                |s| format!("'{}'", crate::paths::sanitize(s)),
            );
            writeln!(out, "dialog:   {} about {about}", d.id)?;
            let shown = crate::client::shown_id(&session_id);
            for (i, o) in d.options.iter().enumerate() {
                let head = if i == 0 { "options:" } else { "" };
                let label = crate::paths::sanitize(&o.label);
                writeln!(out, "{head:<10}{}. {label}", o.number)?;
            }
            if !d.options.is_empty() {
                writeln!(
                    out,
                    "          (hm choose {shown} N --dialog {} picks option N of exactly this one)",
                    d.id
                )?;
            }
            if d.answers.iter().any(|a| a != "choose") {
                writeln!(
                    out,
                    "          (hm approve {shown} --dialog {} answers exactly this one)",
                    d.id
                )?;
            }
        }
        writeln!(out, "idle:     {}", human_ms(u64::from(st.idle_ms)))?;
        writeln!(out, "alive:    {}", if st.alive { "yes" } else { "no" })?;
        // Chosen as an ended session's record chooses its last lines.
        let shown = screen
            .as_ref()
            .map(|s| crate::ended::last_lines(&s.text))
            .unwrap_or_default();
        if !shown.is_empty() {
            writeln!(out, "on screen:")?;
            for l in shown {
                writeln!(out, "  {}", crate::paths::printable(&l))?;
            }
        }
    }
    Ok(0)
}

/// The `command:` and `workdir:` lines of a session's block, whole, and
/// `cwd:` where its program has gone since (a shell's `cd`; a lost
/// session's last).
fn command_lines(
    out: &mut impl Write,
    command: &[String],
    workdir: &str,
    cwd: Option<&str>,
) -> std::io::Result<()> {
    use crate::paths::printable;
    writeln!(
        out,
        "command:  {}",
        crate::paths::command_for_people(command)
    )?;
    writeln!(out, "workdir:  {}", printable(workdir))?;
    match cwd.filter(|d| *d != workdir) {
        Some(d) => writeln!(out, "cwd:      {}", printable(d)),
        None => Ok(()),
    }
}
