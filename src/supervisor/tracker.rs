//! The state tracker: keeps the session's reported state current, pushes
//! STATE frames to the subscribers that asked when it changes, and runs
//! the `[[notify]]` commands on its events.

use std::rc::Rc;
use std::time::Duration;

use tokio::sync::watch;
use tracing::warn;

use crate::clock::Instant;
use crate::detect::MIN_WORK;

use super::context::Ctx;
use super::state::SETTLE;

/// Runs the `[[notify]]` commands when a session starts waiting, finishes
/// its work or exits, each at most once per `min_interval_ms` per event;
/// an entry with `after_ms`, that long after the event if the session is
/// still as it left it. An agent has finished when its state says its
/// turn did (see [`crate::detect::turn_over`]: `idle · finished`, an
/// error, a draft typed ahead); any other program when it was busy for at
/// least [`MIN_WORK`] and then idle.
#[derive(Debug)]
pub(super) struct Notifier {
    rules: Vec<crate::config::NotifyRule>,
    /// When each (rule, event) last ran.
    last: std::collections::HashMap<(usize, &'static str), Instant>,
    /// When the session last became busy, while it is.
    busy_since: Option<Instant>,
    /// The last state said an agent's turn was over.
    turn_over: bool,
    /// The entries with `after_ms` whose event came.
    pending: Vec<Pending>,
}

/// An entry with `after_ms` whose event came, due later.
#[derive(Debug)]
struct Pending {
    rule: usize,
    event: &'static str,
    due: Instant,
    /// When the state it waits on began (session clock): another question
    /// asked while the session kept waiting starts the time again.
    since: Option<u64>,
}

/// What a notify command is told besides its event.
pub(super) struct Told<'a> {
    pub id: &'a str,
    pub label: Option<&'a str>,
    pub state: &'a crate::protocol::StateReport,
    pub exit: Option<i32>,
}

impl Notifier {
    pub(super) fn new(rules: Vec<crate::config::NotifyRule>) -> Notifier {
        Notifier {
            rules,
            last: std::collections::HashMap::new(),
            busy_since: None,
            turn_over: false,
            pending: Vec::new(),
        }
    }

    /// Whether the state `now`, at `at`, is work finished (see
    /// [`Notifier`]); called at every change, it keeps what that needs.
    fn finished(
        &mut self,
        before: Option<crate::detect::Primary>,
        now: &crate::protocol::StateReport,
        at: Instant,
    ) -> bool {
        use crate::detect::Primary;
        let busy = |p: Primary| matches!(p, Primary::Active | Primary::Stuck);
        let busy_since = if busy(now.primary) {
            self.busy_since.get_or_insert(at);
            None
        } else {
            self.busy_since.take()
        };
        let turn_over = crate::detect::turn_over(now);
        // A stop is no part of a turn: a finished turn stopped and
        // continued is not finished anew.
        let was_over = if now.stopped() {
            self.turn_over
        } else {
            std::mem::replace(&mut self.turn_over, turn_over == Some(true))
        };
        match turn_over {
            Some(over) => over && !was_over,
            None => {
                // Measured to its last output, not to when idle was seen:
                // that is always an idle threshold later.
                let last_output = at
                    .checked_sub(Duration::from_millis(now.idle_ms.unwrap_or(0)))
                    .unwrap_or(at);
                before.is_some_and(busy)
                    && now.primary == Primary::Idle
                    && busy_since
                        .is_some_and(|b| last_output.saturating_duration_since(b) >= MIN_WORK)
            }
        }
    }

    /// Whether a session in state `now` is still as `event` left it: an
    /// entry delayed by `after_ms` runs only then.
    fn still(event: &str, now: &crate::protocol::StateReport) -> bool {
        use crate::detect::Primary;
        match event {
            "waiting" => now.primary == Primary::Waiting,
            "finished" => now.primary == Primary::Idle,
            _ => false,
        }
    }

    pub(super) fn changed(
        &mut self,
        told: &Told<'_>,
        before: Option<crate::detect::Primary>,
        at: Instant,
    ) {
        use crate::detect::Primary;
        if self.rules.is_empty() {
            return;
        }
        let now = told.state;
        let finished = self.finished(before, now, at);
        // Answered, or at work again: what was delayed is owed no more.
        // Another question the session kept waiting through (answered and
        // asked again between two looks) starts its time again.
        self.pending
            .retain(|p| told.exit.is_none() && Self::still(p.event, now));
        for p in &mut self.pending {
            if p.event == "waiting" && now.began_ms() != p.since {
                p.since = now.began_ms();
                p.due = at + Duration::from_millis(self.rules[p.rule].after_ms);
            }
        }
        // The end is told once, by the supervisor as it ends (`exit` is
        // given only there): the state task may not run again before.
        let event = match (before, now.primary, told.exit) {
            (_, _, Some(_)) => "exited",
            (_, Primary::Dead, None) => return,
            // A session whose first report already waits (a script that
            // asks at once) needs its person as much as one that came to it.
            (p, Primary::Waiting, None) if p != Some(Primary::Waiting) => "waiting",
            (_, Primary::Idle, None) if finished => "finished",
            _ => return,
        };
        for i in 0..self.rules.len() {
            let rule = &self.rules[i];
            if !rule.on.iter().any(|e| e == event) {
                continue;
            }
            if rule.after_ms > 0 {
                if !self.pending.iter().any(|p| (p.rule, p.event) == (i, event)) {
                    self.pending.push(Pending {
                        rule: i,
                        event,
                        due: at + Duration::from_millis(rule.after_ms),
                        since: now.began_ms(),
                    });
                }
                continue;
            }
            self.run(i, event, told, at);
        }
    }

    /// Runs the delayed entries that are due, the session still as their
    /// event left it (a change since dropped the others).
    pub(super) fn due(&mut self, told: &Told<'_>, at: Instant) {
        let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|p| p.due <= at);
        self.pending = later;
        for p in due {
            if Self::still(p.event, told.state) {
                self.run(p.rule, p.event, told, at);
            }
        }
    }

    /// When the next delayed entry is due, if one is.
    pub(super) fn next_due(&self) -> Option<Instant> {
        self.pending.iter().map(|p| p.due).min()
    }

    /// Runs entry `i` for `event`, unless it ran for it within its
    /// `min_interval_ms`.
    fn run(&mut self, i: usize, event: &'static str, told: &Told<'_>, at: Instant) {
        let rule = &self.rules[i];
        let due = self
            .last
            .get(&(i, event))
            .is_none_or(|&t| at - t >= Duration::from_millis(rule.min_interval_ms));
        if !due {
            return;
        }
        self.last.insert((i, event), at);
        let now = told.state;
        let question = now
            .dialog
            .as_ref()
            .and_then(|d| d.subject.as_deref())
            .unwrap_or("");
        let host = nix::unistd::gethostname()
            .ok()
            .and_then(|h| h.into_string().ok())
            .unwrap_or_default();
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(&rule.command)
            .env("HM_SESSION_ID", told.id)
            .env("HM_LABEL", told.label.unwrap_or(""))
            .env("HM_HOST", host)
            .env("HM_EVENT", event)
            .env("HM_STATE", now.primary.name())
            .env("HM_DETAIL", now.detail.map_or("", |d| d.name()))
            .env("HM_QUESTION", question)
            .env("HM_AFTER_MS", rule.after_ms.to_string())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if let Some(code) = told.exit {
            cmd.env("HM_EXIT_CODE", code.to_string());
        }
        match cmd.spawn() {
            // Reaped by a thread of its own, so that no zombie stays and
            // the supervisor's own waitpid (of its program) is not
            // confused.
            Ok(mut child) => {
                std::thread::spawn(move || {
                    let _ = child.wait();
                });
            }
            Err(e) => warn!("cannot run the notify command: {e}"),
        }
    }
}

/// How long continuous output may defer re-evaluating the state (see
/// [`SETTLE`]).
pub(super) const SETTLE_LIMIT: Duration = Duration::from_millis(150);

/// How long after its last client left a session at rest gives back what
/// serving them took: a query maps about 1.8 MiB of hm's code and leaves
/// freed heap, kept until the state next moved (never, for an idle
/// session that `hm ls` looked at). Long enough for a burst of queries
/// (a script's loop, `hm ls` run again) to be over, so each burst costs
/// one give-back, not one per query.
const GIVE_BACK_AFTER: Duration = Duration::from_millis(500);

/// Keeps the session's reported state current and tells the subscribers
/// that asked for STATE frames when it changes: after output settles, after
/// a resize, and when a threshold runs out. While the session is idle
/// nothing is pending and this task sleeps without a timer.
pub(super) async fn track_state(
    ctx: Rc<Ctx>,
    changed: Rc<watch::Sender<()>>,
    mut notifier: Notifier,
) {
    // When what the last clients' requests took goes back.
    let mut give_back: Option<Instant> = None;
    // The last look was at the limit, while output still came.
    let mut at_limit = false;
    loop {
        let wake = {
            let mut s = ctx.shared.borrow_mut();
            // A move a subscription found is announced here, as if found
            // now.
            let unannounced = s.take_unannounced();
            let before = unannounced.unwrap_or_else(|| s.reported().map(|r| r.primary));
            // While output still flows (the look every SETTLE_LIMIT), the
            // processes may be read up to a second ago.
            let flowing = !s.output_settled();
            s.facts_may_lag(flowing);
            let moved = s.refresh_report() || unannounced.is_some();
            #[cfg(test)]
            ctx.last_look.set(Some(ctx.clock.now()));
            s.facts_may_lag(false);
            if let Some(state) = s.reported() {
                let told = Told {
                    id: &s.info().id,
                    label: s.info().label.as_deref(),
                    state,
                    exit: None,
                };
                if moved {
                    notifier.changed(&told, before, ctx.clock.now());
                }
                notifier.due(&told, ctx.clock.now());
            }
            if moved {
                changed.send_replace(());
            }
            if s.is_over() {
                return;
            }
            drop(s);
            // Answers a dialog when an automation rule is due to; the
            // next deadline below includes the rule's dwell.
            super::answering::automate(&ctx);
            let mut s = ctx.shared.borrow_mut();
            // What `hm restore` keeps is written here, as output settles:
            // at most once a second, and not at all while idle.
            let (wrote, keep) = s.keep();
            // At rest the screen sleeps (again, after output that changed
            // nothing), and on coming to rest what it and the work before
            // freed goes back; again after the last write for `hm restore`
            // that follows, as a write runs code and fills the stack anew
            // (a session idle from its start, whose manifest is written
            // then, gave nothing back). Waiting for that write alone kept
            // a session that came to rest at once whole for up to a second.
            // Not after a write made while output still comes: a person
            // typing into an idle shell has it written once a second, and
            // each give-back unmapped the code every next key runs again
            // (a fault per page, the keystroke's echo late by as much).
            s.rest();
            let now = ctx.clock.now();
            let left = give_back.take_if(|at| *at <= now).is_some() && s.connections() == 0;
            let written = wrote && keep.is_none() && s.output_settled();
            if s.at_rest() && (moved || written || left) {
                crate::pty::release_free_memory();
            }
            [s.next_state_change_ms(), keep]
                .into_iter()
                .flatten()
                .min()
                .map(|at| ctx.clock.at_ms(at))
        };
        // Looked at while output still came: the next wait for it to
        // settle begins at once, with no read to start it, so that a look
        // follows once it has (a program that printed up to the limit and
        // then asks is seen waiting then, not at the idle threshold).
        if at_limit {
            at_limit = !output_settles(&ctx, false).await;
            continue;
        }
        // The last client leaving only sets when memory goes back, and
        // the wait goes on: it changes nothing a look at the state would
        // see, and a look costs a dozen system calls (/proc) between one
        // query and the next (`hm ls` run again and again).
        loop {
            tokio::select! {
                () = ctx.wakes.output_seen.notified() => {
                    at_limit = !output_settles(&ctx, true).await;
                    break;
                }
                () = ctx.wakes.all_left.notified() => {
                    give_back = Some(ctx.clock.now() + GIVE_BACK_AFTER);
                }
                () = ctx.wakes.look.notified() => break,
                () = super::sleep_until(
                    wake.into_iter().chain(give_back).chain(notifier.next_due()).min()
                ) => break,
            }
        }
    }
}

/// Returns once output that just came has settled: [`SETTLE`] without
/// more (true), or [`SETTLE_LIMIT`] after it began (false), whichever is
/// first. `woken`: what began it woke the tracker (a read, a resize...),
/// and counts as output; not when it goes on from a look at the limit.
///
/// Reads meanwhile do not wake this: it sleeps until `SETTLE` after the
/// last read it knows of and, woken, looks whether a read came since
/// (`Shared::last_read`). Woken by every read, as it was, it cost a task's
/// turn and a timer moved per read: under a stream of output (a read per
/// 4 KiB or so) 3 to 5 % of the supervisor's CPU. Its timer now runs out
/// every `SETTLE` while output goes on, which costs typing about as much
/// as it saves (docs/performance.md). What still wakes it (a resize, a
/// hook's report, the program stopped or ended) counts as output.
async fn output_settles(ctx: &Ctx, woken: bool) -> bool {
    let first = ctx.clock.now();
    let limit = first + SETTLE_LIMIT;
    let mut other = woken.then_some(first);
    ctx.shared.borrow_mut().settling(true);
    let settled = loop {
        let last = ctx.shared.borrow().last_read();
        let settled = other.map_or(last, |o| o.max(last)) + SETTLE;
        let now = ctx.clock.now();
        if settled <= now {
            break true;
        }
        if limit <= now {
            // Output goes on: the look is due all the same. What woke in
            // the same turn (the reader with an echo, a connection with
            // keys) goes first, so the look (and a write for `hm restore`)
            // does not hold up a keystroke's echo; the caller waits again
            // for what they read.
            tokio::task::yield_now().await;
            break false;
        }
        tokio::select! {
            () = ctx.wakes.output_seen.notified() => other = Some(ctx.clock.now()),
            () = tokio::time::sleep_until(settled.min(limit)) => {}
        }
    };
    ctx.shared.borrow_mut().settling(false);
    settled
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Instant, Notifier, Told};

    /// A waiting state at session clock `clock`, begun at `since`.
    fn waiting(clock: u64, since: u64) -> crate::protocol::StateReport {
        serde_json::from_value(serde_json::json!({
            "state": "waiting", "state_byte": crate::classify::ProcessState::Waiting.as_byte(),
            "primary": "waiting", "detail": "input", "health": "alive",
            "state_ms": clock - since, "signals": [], "clock_ms": clock,
        }))
        .expect("a report")
    }

    fn told(state: &crate::protocol::StateReport) -> Told<'_> {
        Told {
            id: "s",
            label: None,
            state,
            exit: None,
        }
    }

    /// A delayed entry is due `after_ms` after the question it waits on
    /// began: a second question, asked while the session kept waiting
    /// (answered and asked again between two looks), starts the time
    /// again; an answer drops it.
    #[test]
    fn a_delayed_entry_is_timed_from_the_question_still_asked() {
        let rule = crate::config::NotifyRule {
            command: "true".into(),
            on: vec!["waiting".into()],
            min_interval_ms: 0,
            after_ms: 3_000,
        };
        let mut n = Notifier::new(vec![rule]);
        let t0 = Instant::now();
        let first = waiting(1_000, 1_000);
        n.changed(&told(&first), None, t0);
        assert_eq!(n.next_due(), Some(t0 + Duration::from_secs(3)));
        // Another question at 2 s, the session waiting all along.
        let second = waiting(3_000, 3_000);
        let t2 = t0 + Duration::from_secs(2);
        n.changed(&told(&second), Some(crate::detect::Primary::Waiting), t2);
        assert_eq!(n.next_due(), Some(t2 + Duration::from_secs(3)));
        // The same question looked at again: its time stands.
        let again = waiting(3_500, 3_000);
        n.changed(
            &told(&again),
            Some(crate::detect::Primary::Waiting),
            t2 + Duration::from_millis(500),
        );
        assert_eq!(n.next_due(), Some(t2 + Duration::from_secs(3)));
        // Answered: owed no more.
        let idle: crate::protocol::StateReport = serde_json::from_value(serde_json::json!({
            "state": "idle", "state_byte": 0, "primary": "idle", "health": "alive",
            "state_ms": 0, "signals": [], "clock_ms": 4_000,
        }))
        .expect("a report");
        n.changed(
            &told(&idle),
            Some(crate::detect::Primary::Waiting),
            t2 + Duration::from_secs(1),
        );
        assert_eq!(n.next_due(), None);
    }
}
