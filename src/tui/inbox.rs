//! The inbox (`i`): every session that waits for its user, local and
//! remote, the one waiting longest first, with what it asks (its detail
//! and the subject the detector found); and answering the selected one in
//! place: `y` approves and `n` denies with the keys its agent's rules
//! name, as `hm approve` and `hm deny` send them (an ACT request), and `a`
//! approves with the dialog's own option not to be asked again, where it
//! has one (`hm approve --always`); `y` on a stopped program continues
//! it, as `hm continue` does.
//!
//! An answer names the dialog the person saw: the rows as they were last
//! drawn ([`drawn`], which the run loop calls after each frame), not as
//! the model holds them now, which may already be newer. The supervisor
//! sends the keys only if that dialog is still the one on its screen, and
//! otherwise refuses; the inbox says so and asks for the row again.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::detect::Source;
use crate::detect::rules::Answer;
use crate::protocol::act::CONTINUE;
use crate::protocol::{Act, Acted, DialogInfo};

use super::focus;
use super::model::{Effect, Mode, Model, Moved, Pane, Said, Shown};

/// A dialog drawn a moment ago (or said and not yet drawn) is answered
/// once it has stood long enough (the supervisor says when, and bounds
/// the wait); it is asked again at most this many times.
const RETRIES: u32 = 16;
/// An ACT not answered this soon is said to be late: its supervisor is
/// stopped or slow, or its host's link stalled. The answer is on its way
/// and the supervisor acts on it when it reads it, if the dialog it names
/// is still there, so the person is told so, not that nothing happened.
const ACT_TIMEOUT: Duration = Duration::from_secs(3);
/// An ACT not answered this soon is given up, so the row can be answered
/// again: a supervisor that never replies to ACT (an older hm) would
/// keep it "answering" for good.
const ACT_GIVE_UP: Duration = Duration::from_secs(60);
/// How long after the selection moved on its own an answer key is not
/// taken (see [`answer`]).
const MOVED_HOLD: Duration = Duration::from_millis(800);

/// One session that needs you, as the inbox lists it.
#[derive(Debug)]
pub struct Row<'a> {
    pub pane: &'a Pane,
    /// The machine, for another machine's session.
    pub host: Option<&'a str>,
    /// Its id there.
    pub id: &'a str,
    /// `permission`, `question`, `input`, ...; `waiting` without one.
    pub detail: String,
    /// What it asks about: the dialog's subject, else what the
    /// supervisor's evidence says.
    pub subject: Option<String>,
    /// The subject is the dialog's (not the evidence's).
    pub from_dialog: bool,
    /// How long it has waited; for a host that is down, as of when it
    /// dropped (what the row says is as of then, as its pane's is).
    pub waited_ms: u64,
    /// When its host dropped (wall clock, ms), if it is down.
    pub host_down_since: Option<u64>,
}

/// The sessions that need you, the one waiting longest first.
pub fn rows(m: &Model, now: Instant) -> Vec<Row<'_>> {
    let mut rows: Vec<Row<'_>> = m
        .panes
        .iter()
        .filter(|p| p.waiting())
        .map(|p| row(p, m.host_down(p), now))
        .collect();
    // By when each began to wait, fixed once (see `sessions`): a ranking
    // by the times shown would shift as each session's answers come.
    rows.sort_by(|a, b| {
        let since = |r: &Row<'_>| r.pane.waiting_since.unwrap_or(now);
        since(a)
            .cmp(&since(b))
            .then_with(|| crate::paths::natural_cmp(&a.pane.id, &b.pane.id))
    });
    rows
}

fn row(p: &Pane, down: Option<(u64, Instant)>, now: Instant) -> Row<'_> {
    let (host, id) = match crate::remote::split_target(&p.id) {
        Some((host, id)) => (Some(host), id),
        None => (None, p.id.as_str()),
    };
    let report = p
        .report
        .as_ref()
        .filter(|r| Some(r.state_byte) == p.state());
    let detail = report
        .and_then(|r| r.detail)
        .map_or("waiting".to_owned(), |d| d.name().to_owned());
    let dialog = p.dialog.as_ref();
    // Without a dialog's subject, what the evidence says: the screen's
    // line first (the question), then the program's own words; else the
    // line the program waits on, as the pane shows it (a plain program
    // reading its terminal asks there: `Continue? [y/N]`).
    let evidence = report
        .and_then(|r| {
            let by = |src: Source| r.signals.iter().find(|s| s.source == src);
            by(Source::Screen)
                .or_else(|| by(Source::StatusProtocol))
                .or_else(|| by(Source::Hook))
                .or_else(|| by(Source::Title))
                .map(|s| s.text.clone())
        })
        .or_else(|| cursor_line(p));
    // A stopped program says nothing; the row says what stopped it and
    // how it goes on.
    let evidence = if p.stopped() {
        let by = report
            .and_then(|r| r.signals.first())
            .map_or("stopped".to_owned(), |s| s.text.clone());
        Some(by)
    } else {
        evidence
    };
    let (subject, from_dialog) = match dialog.and_then(|d| d.subject.clone()) {
        Some(s) => (Some(s), true),
        None => (evidence, false),
    };
    let subject = subject
        .map(|s| {
            // A line read off a boxed dialog has the box's sides (Gemini
            // CLI's `│ Apply this change? │`).
            let words = s.split_whitespace().collect::<Vec<_>>().join(" ");
            let side = |c: char| c.is_whitespace() || matches!(c, '│' | '┃' | '║');
            crate::paths::sanitize(words.trim_matches(side))
        })
        .filter(|s| !s.is_empty());
    Row {
        pane: p,
        host,
        id,
        detail,
        subject,
        from_dialog,
        waited_ms: p
            .state_ms(down.map_or(now, |(_, at)| at.min(now)))
            .unwrap_or(0),
        host_down_since: down.map(|(since, _)| since),
    }
}

/// The text of the row the pane's cursor is on, while it shows the live
/// screen; on a blank row, the nearest of the [`ASKED_ABOVE`] rows above it
/// with text: a program that printed what it asks and then a newline
/// (`echo 'Name?'; read x`, a dev server's `press h + enter`) read as `…`.
fn cursor_line(p: &Pane) -> Option<String> {
    if p.copy.is_some() {
        return None;
    }
    let screen = p.term.screen();
    let row = usize::from(screen.cursor_position().0);
    // Kept: the cursor's row and the few above it, not every row down to it.
    let rows: Vec<String> = screen
        .rows(0, screen.size().1.get())
        .skip(row.saturating_sub(ASKED_ABOVE))
        .take(row.min(ASKED_ABOVE) + 1)
        .collect();
    rows.iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| !l.is_empty())
        .map(str::to_owned)
}

/// Rows above a blank cursor row looked at for what a program asks.
const ASKED_ABOVE: usize = 2;

/// `i`: opens the inbox on the session waiting longest. The dialogs come
/// with the states the sessions push; one whose supervisor pushes none
/// (an older hm's) is asked (INFO).
pub fn open(m: &mut Model, now: Instant, fx: &mut Vec<Effect>) {
    let first = rows(m, now).first().map(|r| r.pane.id.clone());
    m.inbox.selected = first;
    m.inbox.selected_at = 0;
    m.inbox.said = None;
    m.inbox.moved_at = None;
    m.inbox.shown.clear();
    let unknown = |p: &&Pane| p.waiting() && p.askable() && p.dialog.is_none();
    for p in m.panes.iter().filter(unknown) {
        fx.push(Effect::Info(p.id.clone()));
    }
    m.mode = Mode::Inbox;
}

/// Notes the rows just drawn (the run loop calls it after each frame):
/// keys move over them, and an answer names the dialog they showed.
pub fn drawn(m: &mut Model, now: Instant) {
    if m.mode != Mode::Inbox {
        return;
    }
    let shown: Vec<Shown> = rows(m, now)
        .iter()
        .map(|r| Shown {
            id: r.pane.id.clone(),
            dialog: r.pane.dialog.clone(),
        })
        .collect();
    let ids: Vec<&str> = shown.iter().map(|r| r.id.as_str()).collect();
    let at = m.inbox.selected_in(&ids);
    let inbox = &mut m.inbox;
    let took_its_place = at.map(|i| shown[i].id.as_str());
    if inbox.selected.is_some()
        && took_its_place.is_some()
        && inbox.selected.as_deref() != took_its_place
    {
        inbox.moved_at = Some((now, Moved::Row));
    } else if let Some(i) = at {
        // The same row, asking something else: a second `y` must not
        // answer the next question unread as the first did the last.
        let before = inbox.shown.iter().find(|r| r.id == shown[i].id);
        // By number (the rows of one change as its selection moves).
        let was = before
            .and_then(|r| r.dialog.as_ref())
            .map(DialogInfo::identity);
        let is = shown[i].dialog.as_ref().map(DialogInfo::identity);
        match (was, is) {
            (Some(a), Some(b)) if a != b => inbox.moved_at = Some((now, Moved::Dialog)),
            (None, Some(_)) if before.is_some() => inbox.moved_at = Some((now, Moved::Dialog)),
            (Some(_), None) => inbox.moved_at = Some((now, Moved::Gone)),
            _ => {}
        }
    }
    inbox.selected = at.map(|i| shown[i].id.clone());
    inbox.selected_at = at.unwrap_or(0);
    inbox.shown = shown;
}

/// A key in the inbox.
pub fn key(m: &mut Model, k: KeyEvent, now: Instant, fx: &mut Vec<Effect>) {
    if k.modifiers.intersects(
        KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SUPER | KeyModifiers::META,
    ) {
        // Ctrl-C still quits, from here as from the grid.
        if k.code == KeyCode::Char('c') && k.modifiers == KeyModifiers::CONTROL {
            m.quit = true;
        }
        return;
    }
    match k.code {
        KeyCode::Down | KeyCode::Char('j') => step(m, 1),
        KeyCode::Up | KeyCode::Char('k') => step(m, -1),
        KeyCode::Home | KeyCode::Char('g') => step(m, i64::MIN / 2),
        KeyCode::End | KeyCode::Char('G') => step(m, i64::MAX / 2),
        KeyCode::Enter => {
            let Some(id) = m.inbox.selected.clone() else {
                return;
            };
            m.mode = Mode::Grid;
            m.selected = Some(id.clone());
            focus::enter(m, id, now, fx);
            if matches!(m.mode, Mode::Focus(_)) {
                m.inbox.after_focus = true;
                // Answered by hand there: a refusal about it is old news
                // when the inbox comes back.
                m.inbox.said = None;
            } else {
                // Refused (it ended, it is not connected): said in the
                // footer, and the inbox stays.
                m.mode = Mode::Inbox;
            }
        }
        KeyCode::Char('y') => answer(m, Answer::Approve, now, fx),
        KeyCode::Char('n') => answer(m, Answer::Deny, now, fx),
        KeyCode::Char('a') => answer(m, Answer::Always, now, fx),
        KeyCode::Char(c @ '1'..='9') => answer(m, Answer::Choose(c as u8 - b'0'), now, fx),
        KeyCode::Esc | KeyCode::Char('q' | 'i') => {
            m.mode = Mode::Grid;
            m.inbox.said = None;
        }
        _ => {}
    }
}

/// Moves the selection `by` rows over the rows drawn.
fn step(m: &mut Model, by: i64) {
    let inbox = &mut m.inbox;
    if inbox.shown.is_empty() {
        return;
    }
    let last = inbox.shown.len() as i64 - 1;
    let at = (inbox.selected_at as i64).saturating_add(by).clamp(0, last) as usize;
    // Chosen by the person: answered at once.
    inbox.moved_at = None;
    inbox.selected_at = at;
    inbox.selected = Some(inbox.shown[at].id.clone());
}

/// The inbox's key for `answer`.
pub fn key_of(answer: Answer) -> char {
    match answer {
        Answer::Approve => 'y',
        Answer::Deny => 'n',
        Answer::Always => 'a',
        Answer::Choose(n) => char::from_digit(u32::from(n), 10).unwrap_or('?'),
    }
}

/// The keys the inbox answers `d` with and what each gives (`y`
/// `approve`, `1-4` `choose`): what the footer offers, and what a
/// refused key points to.
pub fn offered(d: &DialogInfo) -> Vec<(String, &'static str)> {
    let takes = |a: Answer| d.answers.iter().any(|n| n == a.name());
    let mut keys: Vec<(String, &'static str)> = Answer::ALL
        .into_iter()
        .filter(|a| takes(*a))
        .map(|a| (key_of(a).to_string(), a.name()))
        .collect();
    // Digits only where a digit would be taken: a dialog whose options
    // are numbered but not chosen by digit refuses them.
    if !d.options.is_empty() && takes(Answer::Choose(0)) {
        let digits = match d.options.len() {
            1 => "1".to_owned(),
            n => format!("1-{n}"),
        };
        keys.push((digits, "choose"));
    }
    keys
}

/// Where a key was refused, the keys that would answer `d`, said to a
/// person: `press y to approve, n to deny`; focusing it where none would.
fn instead(d: &DialogInfo) -> String {
    let keys: Vec<String> = offered(d)
        .into_iter()
        .map(|(k, w)| match w {
            "always" => format!("{k} to always approve"),
            w => format!("{k} to {w}"),
        })
        .collect();
    if keys.is_empty() {
        "Enter focuses it, to answer it yourself".to_owned()
    } else {
        format!("press {}", keys.join(", "))
    }
}

/// `y`, `n`, `a` or an option's digit on the selected row: an ACT for the
/// dialog it showed.
fn answer(m: &mut Model, answer: Answer, now: Instant, fx: &mut Vec<Effect>) {
    let Some(id) = m.inbox.selected.clone() else {
        m.inbox.said = Some(Said {
            text: format!("nothing to {}: no session is waiting", answer.name()),
            refused: true,
        });
        return;
    };
    let Some(shown) = m.inbox.shown.iter().find(|r| r.id == id).cloned() else {
        return;
    };
    let verb = answer.verb();
    // `y` pressed twice: the first answers a dialog, which leaves, and
    // the next row takes its place under the second. The first key that
    // soon after is refused; pressed again, it is meant for what is lit.
    if let Some((_, moved)) = m
        .inbox
        .moved_at
        .take()
        .filter(|(at, _)| now.saturating_duration_since(*at) < MOVED_HOLD)
    {
        let key = key_of(answer);
        let text = match moved {
            Moved::Row => format!(
                "not answered: '{id}' just took the place of the row that left; \
                 press {key} again to {verb} it"
            ),
            Moved::Dialog => format!(
                "not answered: '{id}' asks something new just now; \
                 read it, then press {key} again to {verb} it"
            ),
            Moved::Gone => format!(
                "not answered: '{id}' was answered just now, and shows nothing to {verb} yet"
            ),
        };
        m.inbox.said = Some(Said {
            text,
            refused: true,
        });
        return;
    }
    if answer == Answer::Approve && m.pane(&id).is_some_and(Pane::stopped) {
        let text = match focus::resume(m, &id, now, fx) {
            Ok(()) => format!("continuing '{id}'…"),
            Err(why) => format!("not continued: {why}"),
        };
        m.inbox.said = Some(Said {
            refused: text.starts_with("not"),
            text,
        });
        return;
    }
    let host_down = m.unreachable_host(&id).map(str::to_owned);
    let Some(p) = m.pane_mut(&id) else { return };
    let (refused, text) = if !p.waiting() {
        (true, format!("'{id}' no longer waits"))
    } else if let Some(a) = &p.answering {
        let yet = if a.late { " (no reply yet)" } else { "" };
        (false, format!("already answering '{id}'{yet}"))
    } else if p.answer_pending_on_screen() {
        // Its program has not taken the answer in yet (Gemini CLI's folder
        // trust restarts it): a second would go to whatever comes next.
        (
            true,
            format!(
                "not answered: '{id}' was answered and has not gone on yet; \
                 Enter focuses it"
            ),
        )
    } else if let Some(host) = host_down {
        // Its link may be stalled, not closed: a request would wait in it
        // and be acted on whenever the link came back.
        (
            true,
            format!("not answered: {host} is unreachable; nothing was sent"),
        )
    } else if !p.askable() {
        // Its connection is down (its host unreachable, say): a request
        // would go nowhere.
        let why = match &p.link {
            super::model::Link::Problem(why) => why.clone(),
            _ => "not connected".to_owned(),
        };
        (
            true,
            format!("not answered: '{id}': {why}; nothing was sent"),
        )
    } else {
        match shown.dialog {
            // Waiting on the program's own word, or at a prompt hm knows
            // no dialog for: only the person can tell what keys would do.
            None => {
                if p.askable() {
                    fx.push(Effect::Info(id.clone()));
                }
                let why = format!("hm sees no dialog it can {verb} in '{id}' (Enter focuses it)");
                (true, format!("not answered: {why}"))
            }
            Some(d)
                if answer == Answer::Always
                    && !d.answers.iter().any(|a| a == Answer::Always.name()) =>
            {
                let why = format!(
                    "'{id}' shows {} with no option not to be asked again: {}",
                    d.rule,
                    instead(&d)
                );
                (true, format!("not answered: {why}"))
            }
            Some(d)
                if answer
                    .option()
                    .is_some_and(|n| usize::from(n) > d.options.len())
                    && d.answers.iter().any(|a| a == answer.name()) =>
            {
                let n = answer.option().unwrap_or_default();
                let has = match d.options.len() {
                    1 => "only option 1".to_owned(),
                    count => format!("its options are 1 to {count}"),
                };
                (
                    true,
                    format!("not answered: '{id}' has no option {n}: {has}"),
                )
            }
            Some(d)
                if matches!(answer, Answer::Choose(_))
                    && !d.answers.iter().any(|a| a == answer.name()) =>
            {
                let why = format!(
                    "'{id}' shows {}, with no options hm can choose: {}",
                    d.rule,
                    instead(&d)
                );
                (true, format!("not answered: {why}"))
            }
            Some(d) if !d.answers.iter().any(|a| a == answer.name()) => {
                let why = format!(
                    "'{id}' shows {}, which hm cannot {verb}: {}",
                    d.rule,
                    instead(&d)
                );
                (true, format!("not answered: {why}"))
            }
            Some(d) => {
                // This appearance of the dialog.
                let (dialog, fingerprint) = d.identity();
                let act = Act {
                    answer: answer.name().to_owned(),
                    option: answer.option(),
                    rule: Some(d.rule.clone()),
                    dialog,
                    fingerprint,
                    ..Act::default()
                };
                p.send_act(act, now, fx);
                (false, format!("{} {} in '{id}'…", answer.doing(), d.rule))
            }
        }
    };
    m.inbox.said = Some(Said { text, refused });
}

/// What the supervisor did with an answer (ACTED): said in the inbox and
/// the footer; a refusal asks for the row again.
pub fn acted(m: &mut Model, id: &str, acted: Acted, now: Instant, fx: &mut Vec<Effect>) {
    let Some(p) = m.pane_mut(id) else { return };
    let Some(mut pending) = p.answering.take() else {
        return;
    };
    if !acted.ok
        && let Some(ms) = acted.retry_in_ms
        && pending.tries < RETRIES
    {
        pending.tries += 1;
        pending.retry_at = Some(now + Duration::from_millis(ms.saturating_add(10)));
        p.answering = Some(pending);
        return;
    }
    if acted.ok {
        // The person read its question and answered it: that is looking
        // at it. A session marked as it began to wait kept its `●` in the
        // grid after its answer went through.
        p.attention = false;
        p.answered = pending.act.dialog.or(p.dialog.as_ref().map(|d| d.id));
    }
    let answer =
        Answer::from_act(&pending.act.answer, pending.act.option).unwrap_or(Answer::Approve);
    let text = match (acted.ok, &acted.action) {
        (true, Some(_)) if pending.act.answer == CONTINUE => acted.continued(id),
        (true, Some(a)) => a.summary(&answer.past(), id),
        (true, None) => format!("{} '{id}'", answer.past()),
        (false, _) => format!("not answered: {}", acted.why()),
    };
    // Refused: the dialog there now, as the supervisor says it (asked
    // for, from one that does not say).
    if !acted.ok {
        match acted.dialog {
            Some(d) => {
                p.dialog = Some(*d.clone());
                // Shown anew with the refusal that names it: read, not
                // changed under the person (see `drawn`).
                if let Some(r) = m.inbox.shown.iter_mut().find(|r| r.id == id) {
                    r.dialog = Some(*d);
                }
            }
            None if p.askable() => fx.push(Effect::Info(id.to_owned())),
            None => {}
        }
    }
    m.inbox.said = Some(Said {
        text: text.clone(),
        refused: !acted.ok,
    });
    m.notify(text, now);
}

/// The tick: answers too new to take keys are sent again when due,
/// answers not replied to are said to be late, and in the end given up.
pub fn tick(m: &mut Model, now: Instant, fx: &mut Vec<Effect>) {
    let mut late = Vec::new();
    for p in &mut m.panes {
        let Some(a) = &mut p.answering else { continue };
        let waited = now.saturating_duration_since(a.sent);
        match a.retry_at {
            Some(at) if at <= now => {
                a.retry_at = None;
                a.sent = now;
                fx.push(Effect::Act(p.id.clone(), a.act.clone()));
            }
            Some(_) => {}
            None if waited >= ACT_GIVE_UP => p.answering = None,
            None if waited >= ACT_TIMEOUT && !a.late => {
                a.late = true;
                late.push(p.id.clone());
            }
            None => {}
        }
    }
    for id in late {
        let text = format!(
            "no reply from '{id}' yet: the answer is sent, and is used if the question \
             is still there when '{id}' reads it"
        );
        m.inbox.said = Some(Said {
            text: text.clone(),
            refused: true,
        });
        m.notify(text, now);
    }
}

impl Pane {
    /// When the answer sent from the inbox is due to be sent again or
    /// given up.
    pub fn inbox_due(&self) -> Option<Instant> {
        let a = self.answering.as_ref()?;
        let wait = if a.late { ACT_GIVE_UP } else { ACT_TIMEOUT };
        Some(a.retry_at.unwrap_or(a.sent + wait))
    }
}

#[cfg(test)]
mod tests;
