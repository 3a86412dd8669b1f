//! What sessions say and what the dashboard makes of it: sessions found
//! in the socket dir, orphaned, ended before we saw them or started from
//! here; their output, state, metadata and end; when to ask a session its
//! state; and when its news calls for the user's attention.

use std::time::{Duration, Instant};

use crate::classify::ProcessState;
use crate::paths;

use super::copy;
use super::focus;
use super::model::{Effect, Link, Mode, Model, Pane, SessionMsg};
use super::sizing;

mod attention;

use attention::Calls;

/// A session started from the dashboard came up, or why it did not.
pub fn started(
    m: &mut Model,
    id: String,
    result: Result<Option<String>, String>,
    now: Instant,
    fx: &mut Vec<Effect>,
) {
    m.starting.remove(&id);
    let from_form = m.new_started.take_if(|started| started.id == id);
    match result {
        Ok(said) => {
            // It is serving now: show it without waiting for the next
            // scan, or the selection would fall back to another pane.
            let mut connect = Vec::new();
            found(m, vec![id.clone()], &mut connect);
            fx.extend(connect.into_iter().map(|e| match e {
                Effect::Connect(id) => Effect::ConnectStarted(id),
                e => e,
            }));
            // The user asked to see it: a filter hiding it goes.
            if !m.visible_ids().contains(&id) {
                m.filter.clear();
            }
            m.selected = Some(id.clone());
            m.notify(
                said.unwrap_or_else(|| format!("started session '{id}'")),
                now,
            );
        }
        Err(e) => {
            m.notify(format!("could not start '{id}': {e}"), now);
            // Started from the form: it comes back as it was filled in,
            // saying why (in it), for a fix rather than typing it all
            // again; unless the person has gone on to something else.
            // The id as typed: one named after the command is named after
            // the command fixed (`nosuchcmd` stayed, as if typed, for the
            // `bash -c …` that replaced it).
            if let Some(started) = from_form
                && m.mode == Mode::Grid
            {
                // At the field to fix: a directory that is not there
                // came back at the command, which the `Ctrl-U` meant for
                // the directory emptied.
                let step = if e.starts_with("workdir '") {
                    super::model::NewStep::Dir
                } else {
                    super::model::NewStep::Command
                };
                m.mode = Mode::NewSession {
                    step,
                    id: started.typed,
                    command: started.command,
                };
            }
        }
    }
}

/// Sessions with a live supervisor: a pane and a connection each, for
/// those that have none yet.
pub fn found(m: &mut Model, ids: Vec<String>, fx: &mut Vec<Effect>) {
    // The panes there will be, counted before any is made: the dashboard
    // started over 200 sessions gives each its share at once.
    let new = ids.iter().filter(|id| m.pane(id).is_none()).count();
    let rows = m.history_for(new);
    for id in ids {
        if m.starting.contains(&id) {
            continue;
        }
        // A pane whose session is over gives way to a new one of its id.
        if m.pane(&id).is_none_or(|p| p.link == Link::Gone) {
            m.panes.retain(|p| p.id != id);
            m.panes.push(Pane::with_history(id.clone(), rows));
            fx.push(Effect::Connect(id));
        }
    }
    m.panes
        .sort_by(|a, b| crate::paths::natural_cmp(&a.id, &b.id));
}

/// Sessions whose program outlived its supervisor get a pane too (its
/// connection finds the supervisor gone and names the program), unless
/// cleared while orphaned; a cleared one is forgotten once it is not.
pub fn orphans(m: &mut Model, ids: Vec<String>, fx: &mut Vec<Effect>) {
    m.dismissed.retain(|d| ids.contains(d));
    let new: Vec<String> = ids
        .into_iter()
        .filter(|id| m.pane(id).is_none() && !m.dismissed.contains(id))
        .collect();
    if !new.is_empty() {
        found(m, new, fx);
    }
}

/// How long after a pane saw its session end its record must be listed:
/// the supervisor writes it right after its EXIT, so a look that finds
/// none later than this means it was forgotten already.
const RECORD_GRACE: Duration = Duration::from_secs(2);

/// Ended sessions get a pane showing how they ended and their last
/// lines, as if the dashboard had watched them end (`x` forgets one, `r`
/// starts it again). A pane whose record was seen and is gone now was
/// forgotten elsewhere (`hm rm`, `hm clean`): it goes too, unless its host
/// cannot be looked at now, or its record was only among the oldest that
/// a socket dir does not keep (see [`crate::ended::KEEP`]).
pub fn ended(m: &mut Model, records: Vec<crate::ended::Ended>, now: Instant, fx: &mut Vec<Effect>) {
    use crate::ended::KEEP;
    let unix_now = crate::clock::unix_ms();
    // Each record's end, whether it was killed, and its run's start.
    let listed: std::collections::HashMap<&str, (u64, bool, u64)> = records
        .iter()
        .map(|r| {
            (
                r.id.as_str(),
                (r.ended_unix_ms, r.killed, r.started_unix_ms),
            )
        })
        .collect();
    // With as many records as are kept (on one machine), one older than
    // the oldest listed may have been trimmed, not forgotten.
    let mut oldest: std::collections::HashMap<Option<&str>, (usize, u64)> = Default::default();
    for r in &records {
        let host = crate::remote::split_target(&r.id).map(|(h, _)| h);
        let e = oldest.entry(host).or_insert((0, u64::MAX));
        *e = (e.0 + 1, e.1.min(r.ended_unix_ms));
    }
    let problems = &m.host_problems;
    let forgotten = |p: &Pane| {
        let at = match (p.recorded, p.ended_at.filter(|_| p.exit.is_some())) {
            (Some(at), _) => at,
            // Seen ending and never listed since: forgotten before a look
            // found its record (`hm wait`, then `hm rm`), once the record
            // has had its moment to be written.
            (None, Some(t)) if now.saturating_duration_since(t) >= RECORD_GRACE => {
                let ago = now.saturating_duration_since(t).as_millis();
                unix_now.saturating_sub(u64::try_from(ago).unwrap_or(u64::MAX))
            }
            _ => return false,
        };
        let host = crate::remote::split_target(&p.id).map(|(h, _)| h);
        // At the oldest kept record's own millisecond too: records that
        // ended in the same ms are trimmed by id, and a hundred sessions
        // killed at once lost one pane that way (hostile_terminal).
        let trimmed = oldest
            .get(&host)
            .is_some_and(|&(n, first)| n >= KEEP && at <= first);
        let unlooked = host.is_some_and(|h| problems.contains_key(h));
        p.ended() && !listed.contains_key(p.id.as_str()) && !unlooked && !trimmed
    };
    // Panes made again from their record, marked: one whose session ended
    // again since its record was read, or whose record is of another run
    // than the one it watched (run anew by `hm restart` elsewhere and
    // ended between two looks: it kept the earlier run's lines and time),
    // and one whose connection went before it told how the session ended
    // (found in its last moments: `gone`, and empty).
    let renewed: std::collections::HashSet<String> = m
        .panes
        .iter()
        .filter(|p| {
            let Some(&(at, _, started)) = listed.get(p.id.as_str()) else {
                return false;
            };
            let other_run = p.started_unix_ms.is_some_and(|own| own != started);
            p.ended()
                && match p.recorded {
                    Some(seen) => at > seen,
                    None => p.exit.is_none() || other_run,
                }
        })
        .map(|p| p.id.clone())
        .collect();
    m.panes
        .retain(|p| !forgotten(p) && !renewed.contains(&p.id));
    let mut learned_killed = Vec::new();
    for p in &mut m.panes {
        if p.ended()
            && let Some(&(at, killed, _)) = listed.get(p.id.as_str())
        {
            p.recorded = Some(at);
            // Killed by `hm kill` elsewhere: known once the record is.
            if killed && !p.killed {
                learned_killed.extend(p.exit.map(|code| (p.id.clone(), code)));
            }
            p.killed |= killed;
        }
    }
    // The footer said how it ended before the record told who ended it.
    for (id, code) in learned_killed {
        let said = format!("session '{id}' {}", crate::client::exited_with(code, false));
        if let Some((text, _)) = m.notice.as_mut().filter(|(n, _)| *n == said) {
            *text = format!("session '{id}' {}", crate::client::exited_with(code, true));
        }
    }
    let mut added = false;
    let left = m.left_unix_ms;
    let new = records.iter().filter(|r| m.pane(&r.id).is_none()).count();
    let rows = m.history_for(new);
    for r in records {
        if m.pane(&r.id).is_some() || m.starting.contains(&r.id) {
            continue;
        }
        let mut p = Pane::with_history(r.id.clone(), rows);
        p.exit = Some(r.exit_code);
        p.killed = r.killed;
        // Ended while no dashboard was open: nobody has seen it end. Or
        // marked, not looked at, when the dashboard was quit.
        let marked = m.marked_before.remove(&r.id);
        // Ended while this one was open, before it saw the session run:
        // told as if seen ending.
        let seen_ending = r.ended_unix_ms > m.opened_unix_ms;
        if seen_ending {
            let how = crate::client::exited_with(r.exit_code, r.killed);
            Calls::new(m.bell, m.desktop, false).ring(fx, &r.id, &how);
        }
        // With no quit before to go by (the first dashboard here), a
        // failure is news all the same: it went unmarked and uncounted.
        let failed = r.exit_code != 0 && !r.killed;
        p.attention = left.map_or(failed, |t| r.ended_unix_ms > t)
            || marked
            || seen_ending
            || renewed.contains(&r.id);
        p.link = Link::Gone;
        p.recorded = Some(r.ended_unix_ms);
        p.command = Some(r.command.join(" "));
        p.workdir = Some(r.workdir.clone());
        p.started_unix_ms = Some(r.started_unix_ms);
        p.label = r.label.clone();
        let ago = std::time::Duration::from_millis(unix_now.saturating_sub(r.ended_unix_ms));
        p.ended_at = Some(now.checked_sub(ago).unwrap_or(now));
        let text: Vec<String> = r.last_lines.iter().map(|l| format!("{l}\r\n")).collect();
        p.term.feed(text.concat().as_bytes());
        p.drawn += 1;
        m.panes.push(p);
        added = true;
    }
    if added {
        m.panes
            .sort_by(|a, b| crate::paths::natural_cmp(&a.id, &b.id));
        if m.selected.is_none() {
            m.selected = m.visible_ids().first().cloned();
        }
    }
}

/// What a session's connection reports: its output, state, metadata and
/// end, and what the dashboard makes of them.
pub fn news(m: &mut Model, id: &str, sm: SessionMsg, now: Instant, fx: &mut Vec<Effect>) {
    // An answer the inbox sent is the inbox's to report.
    let sm = match sm {
        SessionMsg::Acted(acted) => return super::inbox::acted(m, id, *acted, now, fx),
        // A new label, the answer to this dashboard's `L` or told as
        // another client gave it: the rest of it is as the last INFO
        // said, and it is no answer that INFO's count waits for.
        SessionMsg::Info(info) if info.relabelled => {
            let label = shown_label(&info);
            let Some(p) = m.pane_mut(id) else { return };
            p.label = label.clone();
            if std::mem::take(&mut p.labelling) {
                m.notify(super::label::taken(id, label.as_deref()), now);
            }
            return;
        }
        sm => sm,
    };
    // A pane connected again takes its share of history as things are
    // now: one made among few panes keeps less once there are many.
    let history = matches!(sm, SessionMsg::Connected).then(|| m.history_for(0));
    let selected = m.selected.as_deref() == Some(id);
    let focused = m.mode == Mode::Focus(id.to_string());
    let calls = Calls::new(m.bell, m.desktop, selected || focused);
    let size_too = !m.fit;
    // A mark left on the session when the dashboard was last quit comes
    // back with its first INFO, unless a new session under its id started
    // since.
    let marked_before = match &sm {
        SessionMsg::Info(info) if m.marked_before.remove(id) => m
            .left_unix_ms
            .is_some_and(|left| info.started_unix_ms <= left),
        _ => false,
    };
    // Where the selected session stands in the grid before its end moves
    // it among the ended, at the back.
    let place = (selected && matches!(sm, SessionMsg::Exit(_)))
        .then(|| m.visible().iter().position(|p| p.id == id))
        .flatten();
    let Some(p) = m.pane_mut(id) else { return };
    match sm {
        SessionMsg::Connected => {
            p.link = Link::Live;
            p.applied = None;
            // The connection's greeting asked INFO.
            p.infos_out = 1;
            p.infos_stale = 0;
            // Known once its first mark comes (an older supervisor sends
            // none).
            p.marks = false;
            // The replay that follows is the whole history again.
            p.copy = None;
            if let Some(rows) = history {
                p.term.keep_history(rows);
            }
            p.term.reset();
            p.drawn += 1;
            p.poll.reset();
            p.poll.asked(now);
            // Connected again after a drop: the silence was the link's,
            // not the program's, and the work before it is not known to
            // have ended (a program printing every second came back
            // marked as having finished).
            p.busy_since = None;
            p.last_work = None;
            p.rhythm = None;
        }
        SessionMsg::Mark(mark) => {
            let first = !std::mem::replace(&mut p.marks, true);
            let shown = crate::protocol::Mark {
                size: sizing::shown(mark.size),
                ..mark
            };
            p.term.take_mark(&shown, first);
            copy::follow(p);
        }
        // Not work seen now, nor printing, nor the end of the quiet the
        // idle timer counts: a session that printed a line 2 s before the
        // dashboard opened was marked as finished work once idle.
        SessionMsg::Replayed(bytes) => {
            p.term.feed(&bytes);
            p.drawn += 1;
            copy::follow(p);
        }
        SessionMsg::Output(bytes) => {
            p.term.feed(&bytes);
            p.drawn += 1;
            copy::follow(p);
            p.last_output = Some(now);
            if !p.resting_program() && !p.redrawing(now) {
                p.printed_at = Some(now);
            }
            attention::output(p, now, calls, fx);
            let shown_idle = p
                .status
                .is_none_or(|(s, _)| s.state == ProcessState::Idle.as_byte());
            if p.exit.is_none() && p.poll.output(now, shown_idle) {
                ask(p, size_too, fx);
            }
        }
        SessionMsg::State(report) => {
            attention::state(p, report, now, calls, fx);
        }
        SessionMsg::Status(s) => {
            p.status = Some((s, now));
            let busy = p.busy();
            p.poll.answered(now, &s, busy);
            attention::status(p, s, busy, now, calls, fx);
        }
        SessionMsg::Info(info) => {
            p.attention |= marked_before;
            p.dialog = info.dialog.clone();
            p.explained = info.state.clone().map(Box::new);
            p.idle_after_ms = info.idle_after_ms;
            if let Some(ms) = info.idle_threshold_ms {
                p.poll.set_idle_threshold(Duration::from_millis(ms));
            }
            if !info.command.is_empty() {
                p.command = Some(paths::sanitize(&info.command.join(" ")));
            }
            // Where the program is now (a shell's `cd`), else where it
            // started.
            let dir = info.cwd.as_deref().unwrap_or(&info.workdir);
            if !dir.is_empty() {
                p.workdir = Some(dir.to_owned());
            }
            if info.started_unix_ms > 0 {
                p.started_unix_ms = Some(info.started_unix_ms);
            }
            p.label = shown_label(&info);
            sizing::learned(p, &info, now);
        }
        SessionMsg::Exit(code) => {
            p.exit = Some(code);
            p.ended_at.get_or_insert(now);
            // A full-screen program (Claude Code) took its last screen
            // with it as it left: the pane shows it again, in its place,
            // and its window is chosen anew (`window::live_top`).
            p.term.write_left();
            p.drawn += 1;
            // No terminal holds a session that ended (its pane said
            // "100x29 held" for good).
            p.held = false;
            let how = crate::client::exited_with(code, p.killed);
            let killed_here = p.killed;
            // Killed from here (`killed` is set by `x` before its EXIT;
            // `hm kill` elsewhere is learned from the record, later): what
            // was asked for is no news, though the selection moved on
            // during its grace period.
            if !focused && !p.killed {
                p.attention = !selected;
                if !selected {
                    calls.ring(fx, id, &how);
                }
            }
            // Focused, or being asked about a kill that is now moot.
            let asked = m.mode == Mode::ConfirmKill(id.to_string());
            if focused {
                focus::leave(m, id);
            } else if asked {
                m.mode = Mode::Grid;
            }
            // The footer's "killing 'id'" is answered, not left standing
            // beside a pane that says it was killed.
            let killing = m
                .notice
                .as_ref()
                .is_some_and(|(n, _)| *n == format!("killing '{id}'"));
            if focused || asked || killing {
                m.notify(format!("session '{id}' {how}"), now);
            }
            // Killed from here: the selection stays where it was, on the
            // session that takes its place, not after it to the ended on
            // the last page. Not from a zoom, which shows the one it zoomed.
            let zoomed = matches!(m.mode, Mode::Zoom(_));
            if let Some(i) = place.filter(|_| killed_here && !focused && !zoomed) {
                let ids = m.visible_ids();
                if let Some(next) = ids.get(i).or(ids.last()) {
                    m.selected = Some(next.clone());
                }
            }
        }
        SessionMsg::Problem { why, notice } => {
            p.link = Link::Problem(why);
            // Shown once however many panes share the cause.
            if let Some(text) = notice
                && m.notice.as_ref().is_none_or(|(shown, _)| *shown != text)
            {
                m.notify(text, now);
            }
        }
        SessionMsg::Acted(_) => {}
        SessionMsg::Closed(orphan) => {
            let was_orphan = p.orphan.is_some();
            p.link = Link::Gone;
            p.ended_at.get_or_insert(now);
            p.orphan = orphan.filter(|_| p.exit.is_none());
            // An orphan that ended is old news, not a new call for attention.
            if p.exit.is_none() && !was_orphan {
                p.attention = !selected;
            }
            let orphan_ended = was_orphan && p.orphan.is_none();
            let lost = format!("'{id}' lost its supervisor");
            if orphan_ended {
                // The pid it names is gone, and may soon be another's.
                if m.notice.as_ref().is_some_and(|(n, _)| n.starts_with(&lost)) {
                    m.notice = None;
                }
            } else if let Some(pid) = p.orphan {
                // Short enough for the footer at 80 columns, beside its
                // page number; `hm ls` says it at length. Another
                // machine's is stopped there.
                let how = if crate::remote::split_target(id).is_some() {
                    format!("kill {pid} there stops it")
                } else {
                    // By name (`x` stops the selected pane, which may be
                    // another); its pane names the pid.
                    format!("hm kill {id} stops it")
                };
                m.notify(format!("{lost}: {how}"), now);
            }
            if focused {
                focus::leave(m, id);
            } else if m.mode == Mode::ConfirmKill(id.to_string()) {
                m.mode = Mode::Grid;
            }
        }
    }
}

/// Asks a session for its state. With `size_too` (sessions keep their own
/// size) INFO is asked as well: the protocol does not announce a resize
/// by another client, and a stale size would misdraw the pane.
pub fn poll(p: &mut Pane, now: Instant, size_too: bool, fx: &mut Vec<Effect>) {
    if p.askable() && p.poll.ask(now) {
        ask(p, size_too, fx);
    }
}

/// The question itself, once [`StatusPoll`](crate::client::poll::StatusPoll)
/// has said to ask.
fn ask(p: &mut Pane, size_too: bool, fx: &mut Vec<Effect>) {
    fx.push(Effect::Status(p.id.clone()));
    // A held session is asked its size until it is ours again.
    if size_too || p.held {
        sizing::ask_info(p, fx);
    }
}

/// The tick: sessions that leave a question unanswered too long are
/// not responding, those quiet for their idle threshold are asked
/// whether they went idle, and held ones whether they still are.
pub fn tick(m: &mut Model, now: Instant, fx: &mut Vec<Effect>) {
    let size_too = !m.fit;
    let mut silent = Vec::new();
    let (bell, desktop) = (m.bell, m.desktop);
    // A session on a host already said to be unreachable is not news
    // again as not responding: the notice contradicted the one before.
    let unreachable: Vec<String> = m
        .panes
        .iter()
        .filter(|p| m.unreachable_host(&p.id).is_some())
        .map(|p| p.id.clone())
        .collect();
    let selected = m.selected.clone();
    let focused = match &m.mode {
        Mode::Focus(id) => Some(id.clone()),
        _ => None,
    };
    for p in &mut m.panes {
        let looked_at = [&selected, &focused]
            .iter()
            .any(|s| s.as_deref() == Some(&p.id));
        attention::tick(p, now, Calls::new(bell, desktop, looked_at), fx);
        if !p.askable() {
            continue;
        }
        let tick = p.poll.tick(now);
        if tick.went_silent && !unreachable.contains(&p.id) {
            silent.push(p.id.clone());
        }
        if tick.ask {
            ask(p, size_too, fx);
        } else if p.held && p.infos_out == 0 {
            // A quiet session stays marked held until asked again: the
            // attach holding it may have gone without a word to us.
            sizing::ask_info(p, fx);
        }
    }
    match silent.as_slice() {
        [] => {}
        [id] => m.notify(format!("'{id}' is not responding"), now),
        many => m.notify(format!("{} sessions are not responding", many.len()), now),
    }
}

/// A session's label as a pane shows it: the supervisor's words, made
/// harmless; none when empty.
fn shown_label(info: &crate::protocol::Info) -> Option<String> {
    info.label
        .as_deref()
        .filter(|l| !l.is_empty())
        .map(paths::sanitize)
}

#[cfg(test)]
mod tests;
