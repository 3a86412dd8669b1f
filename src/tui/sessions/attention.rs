//! When a session's news calls for its person: work finished, a dialog
//! that waits (unless a rule answers it in a moment); the pane's `●`, the
//! bell and the desktop notification.

use std::time::{Duration, Instant};

use crate::detect::MIN_WORK;
use crate::protocol::{StateReport, Status};
use crate::tui::model::{Effect, Pane};

/// How long a waiting session's notification waits for the pushed state
/// that says at what (see [`Pane::alert_owed`]).
const ALERT_WAIT: Duration = Duration::from_millis(500);

/// How long past its due time a dialog an automation rule answers may
/// stand before its session calls for a person after all: the keys go,
/// the program redraws, the supervisor's look settles and pushes.
const AUTOMATION_GRACE: Duration = Duration::from_secs(2);

/// How the person is called to a session, as configured, and whether
/// they look at it already (selected or focused): then its news is no
/// call.
#[derive(Debug, Clone, Copy)]
pub(super) struct Calls {
    bell: bool,
    desktop: bool,
    pub looked_at: bool,
}

impl Calls {
    pub(super) fn new(bell: bool, desktop: bool, looked_at: bool) -> Calls {
        Calls {
            bell,
            desktop,
            looked_at,
        }
    }

    /// The bell and the desktop notification, as configured, for what
    /// happened to session `id`.
    pub(super) fn ring(self, fx: &mut Vec<Effect>, id: &str, what: &str) {
        if self.bell {
            fx.push(Effect::Bell);
        }
        if self.desktop {
            fx.push(Effect::Desktop(format!("{id}: {what}")));
        }
    }
}

/// How an agent's turn or a program's work ended, as a call says it: an
/// error that ended a turn is called by its name.
fn ended_as(p: &Pane) -> &'static str {
    let error = p
        .report
        .as_ref()
        .is_some_and(|r| r.detail == Some(crate::detect::Detail::Error));
    if error { "error" } else { "finished" }
}

/// What a waiting session is said to wait at (`waiting · permission`).
fn waiting_label(p: &Pane) -> String {
    p.state_label().unwrap_or_else(|| "waiting".into())
}

/// Output came: the end of the work before a silence as long as the
/// session's idle threshold, and the start of work.
pub(super) fn output(p: &mut Pane, now: Instant, calls: Calls, fx: &mut Vec<Effect>) {
    // Output after a silence as long as the idle threshold: the
    // session went idle in between, though the STATE saying so
    // may come after this output (the supervisor hands output on
    // before it settles the state). The work before the silence
    // ended there: `top`, redrawing every 3 s, was one piece of
    // work growing at each redraw, and finished at each.
    // As long a silence as the supervisor's classifier takes for
    // the end: longer for output at a steady beat (`top` is one
    // piece of work, and was marked finished when one redraw came
    // a little early and the next a little late).
    let threshold = p.poll.idle_threshold().as_millis() as u64;
    // Or as long as its supervisor last said: a dashboard started
    // while `top` ran for minutes has not learnt its beat, and
    // marked it at its first redraw past 3 s.
    let quiet = p
        .rhythm
        .as_ref()
        .map_or(threshold, |(_, r)| r.quiet_after(threshold))
        .max(p.idle_after_ms.unwrap_or(0));
    let quiet = Duration::from_millis(quiet);
    let silent = p
        .last_work
        .is_some_and(|l| now.saturating_duration_since(l) >= quiet);
    let turns = p
        .report
        .as_ref()
        .and_then(crate::detect::turn_over)
        .is_some();
    if silent && !turns && finished_work(p, None) && !calls.looked_at {
        p.attention = true;
        calls.ring(fx, &p.id, ended_as(p));
    }
    // Once work is under way, all its output is work.
    if p.busy_since.is_some() || !p.redrawing(now) {
        p.last_work = Some(now);
        p.busy_since.get_or_insert(now);
        let (epoch, rhythm) = p.rhythm.get_or_insert_with(|| (now, Default::default()));
        rhythm.output(now.saturating_duration_since(*epoch).as_millis() as u64);
    }
}

/// A pushed state (STATE): a dialog that waits, or work that ended.
pub(super) fn state(
    p: &mut Pane,
    report: StateReport,
    now: Instant,
    calls: Calls,
    fx: &mut Vec<Effect>,
) {
    // The pushed state stands until the next STATUS answer, with the
    // time since the last output as it says: the STATUS answer's, kept
    // with the time moved on to now, made the bottom border's `quiet 28s`
    // start again under the title's `active 0s`.
    if let Some((s, at)) = &mut p.status {
        s.state = report.state_byte;
        s.state_ms = u32::try_from(report.state_ms).unwrap_or(u32::MAX);
        if let Some(ms) = report.idle_ms {
            s.idle_ms = u32::try_from(ms).unwrap_or(u32::MAX);
        } else {
            let since = now.saturating_duration_since(*at).as_millis();
            s.idle_ms = s
                .idle_ms
                .saturating_add(u32::try_from(since).unwrap_or(u32::MAX));
        }
        *at = now;
    }
    // What it waits at, pushed whenever another dialog shows: the
    // inbox shows it, and an answer names it.
    p.dialog = report.dialog.as_deref().cloned();
    // None before the first: a turn that ended before the
    // dashboard connected is not news.
    let was_over = p.turn_was_over;
    if !report.stopped() {
        p.turn_was_over = Some(crate::detect::turn_over(&report) == Some(true));
    }
    p.report = Some(report);
    let owed = p.alert_owed.take().is_some() && p.waiting();
    let called = note_waiting(p, now);
    let mut call = called || owed;
    match p.automated_in() {
        // A rule answers the dialog it waits at: nobody is called.
        // The deadline follows each push: the next dialog a rule
        // answers in the same wait, a dwell started over as the
        // selection moved.
        Some((dialog, within)) if p.waiting_since.is_some() => {
            if owed {
                // A STATUS answer marked it before this push said
                // that a rule answers it: the mark is taken back.
                p.attention = false;
            }
            p.automated = Some((dialog, now + within + AUTOMATION_GRACE));
            call = false;
        }
        // Another dialog came in the same wait, one no rule answers.
        None if p.automated.is_some_and(|(dialog, _)| {
            p.waiting() && p.dialog.as_ref().is_some_and(|d| d.id != dialog)
        }) =>
        {
            p.automated = None;
            p.attention = true;
            call = true;
        }
        _ => {}
    }
    if call && !calls.looked_at {
        calls.ring(fx, &p.id, &waiting_label(p));
    }
    // The push says the work ended before any STATUS answer does
    // (it took the work with it, and no pane was ever marked). Not
    // a plain program's state that began before output seen
    // since: it is of the silence that output ended, which the
    // output judged (new work, or the same at a steady beat). An
    // agent's turn is over when it says so, whatever it drew
    // after (Claude Code redraws its prompt once its turn ended:
    // no finished turn was marked).
    let began = Duration::from_millis(p.report.as_ref().map_or(0, |r| r.state_ms));
    let turns = p
        .report
        .as_ref()
        .and_then(crate::detect::turn_over)
        .is_some();
    let of_the_past = !turns
        && p.last_work
            .zip(now.checked_sub(began))
            .is_some_and(|(work, since)| since < work);
    if !p.busy() && !of_the_past && finished_work(p, was_over) && !calls.looked_at {
        p.attention = true;
        calls.ring(fx, &p.id, ended_as(p));
    }
}

/// A STATUS answer (`busy`: it says the session works): a dialog that
/// waits, the start of work, or its end.
pub(super) fn status(
    p: &mut Pane,
    s: Status,
    busy: bool,
    now: Instant,
    calls: Calls,
    fx: &mut Vec<Effect>,
) {
    if note_waiting(p, now) && !calls.looked_at {
        // What it waits at comes with the pushed state, right
        // behind this answer when we have just connected: the
        // notification waits for it (`session: waiting ·
        // permission`, not `waiting`), a moment at most.
        if p.report.as_ref().is_some_and(|r| r.state_byte == s.state) {
            calls.ring(fx, &p.id, &waiting_label(p));
        } else {
            p.alert_owed = Some(now);
        }
    }
    if busy {
        // Dated from when the state began, not when we asked.
        let began = now
            .checked_sub(Duration::from_millis(u64::from(s.state_ms)))
            .unwrap_or(now);
        if p.busy_since.is_some() || !p.redrawing(began) {
            p.busy_since = Some(p.busy_since.map_or(began, |b| b.min(began)));
        }
        return;
    }
    if finished_work(p, None) && !calls.looked_at {
        p.attention = true;
        calls.ring(fx, &p.id, ended_as(p));
    }
}

/// The tick: a call owed, or a dialog a rule was to answer that stands.
pub(super) fn tick(p: &mut Pane, now: Instant, calls: Calls, fx: &mut Vec<Effect>) {
    // A dialog a rule was to answer still stands: a person is called.
    if p.automated.is_some_and(|(_, until)| now >= until) {
        p.automated = None;
        if p.waiting() {
            p.attention = true;
            if !calls.looked_at {
                calls.ring(fx, &p.id, &waiting_label(p));
            }
        }
    }
    // No pushed state came to say what it waits at (a supervisor that
    // does not push): told without.
    if p.alert_owed
        .is_some_and(|t| now.saturating_duration_since(t) >= ALERT_WAIT)
    {
        p.alert_owed = None;
        if p.waiting() {
            calls.ring(fx, &p.id, "waiting");
        }
    }
}

/// Whether the work that just ended (the pane is no longer busy) was
/// work enough to ask for a look; it is over either way. Measured to the
/// last output, not to when idle was seen: the `simple` classifier stays
/// busy for its whole idle threshold after any output, so a prompt
/// redrawn after a resize would otherwise always count as 3 s of work.
///
/// An agent's work is its turn: finished when its pushed state newly says
/// so (`was_over`: what the state before it said; `None` at a STATUS
/// answer, which does not say). Busy starting up, or redrawing at its
/// prompt, it finished nothing, though it printed for seconds.
fn finished_work(p: &mut Pane, was_over: Option<bool>) -> bool {
    let worked = p
        .busy_since
        .take()
        .zip(p.last_work)
        .is_some_and(|(b, last)| last.saturating_duration_since(b) >= MIN_WORK);
    match p.report.as_ref().and_then(crate::detect::turn_over) {
        Some(over) => over && was_over == Some(false),
        None => worked,
    }
}

/// Notes when a session starts or stops waiting for its user; true when
/// it has just started (worth a bell). Waiting asks for attention until
/// the pane is looked at, like finished work.
fn note_waiting(p: &mut Pane, now: Instant) -> bool {
    if !p.waiting() {
        p.waiting_since = None;
        p.automated = None;
        return false;
    }
    if p.waiting_since.is_some() {
        return false;
    }
    // Since when it waits as its supervisor counts it (a dashboard started
    // later sees sessions that waited long before), fixed once: the order
    // of who waited longest does not shift with each answer's timing.
    let waited = std::time::Duration::from_millis(p.state_ms(now).unwrap_or(0));
    p.waiting_since = Some(now.checked_sub(waited).unwrap_or(now));
    // A dialog a rule answers in a moment needs nobody: the tick calls a
    // person only if it still stands after that.
    if let Some((dialog, within)) = p.automated_in() {
        p.automated = Some((dialog, now + within + AUTOMATION_GRACE));
        return false;
    }
    p.attention = true;
    true
}
