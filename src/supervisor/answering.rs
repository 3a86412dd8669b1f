//! Giving an answer: an ACT request carried out, an automation rule's turn,
//! and the keys on their way to the pty, one per read, later steps only
//! once the screen shows the keys before them taken.

use std::cell::RefCell;
use std::os::fd::OwnedFd;
use std::rc::Rc;
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tracing::{info, warn};

use crate::detect::rules::{Answer, Pattern};
use crate::protocol::{Act, Acted, ActionRecord};

use super::acting::Expect;
use super::context::Ctx;
use super::state::{Refused, Shared};

/// An ACT request that was refused: logged, and the ACTED that says why.
fn refused(why: Refused) -> Acted {
    info!("an answer by hand was refused: {}", why.reason);
    Acted {
        ok: false,
        reason: Some(why.reason),
        retry_in_ms: why.retry_in_ms,
        action: None,
        dialog: why.now,
        pending: false,
    }
}

/// The ACTED for an ACT whose payload could not be read.
pub(super) fn unreadable(e: &crate::protocol::PayloadError) -> Acted {
    refused(e.to_string().into())
}

/// Carries out an ACT request: the answer is given if the dialog is there
/// and as the request expects, in the same step as the check.
pub(super) fn by_hand(ctx: &Ctx, act: Act) -> Acted {
    if act.answer == crate::protocol::act::CONTINUE {
        return continued(ctx);
    }
    let answer = match Answer::from_act(&act.answer, act.option) {
        Ok(a) => a,
        Err(why) => return refused(why.into()),
    };
    let subject = match act.subject.as_deref().map(crate::config::subject_regex) {
        None => None,
        Some(Ok(re)) => Some(re),
        Some(Err(e)) => return refused(format!("the subject pattern: {e}").into()),
    };
    let expect = Expect {
        dialog: act.dialog,
        rule: act.rule,
        fingerprint: act.fingerprint,
        subject,
    };
    match send(ctx, answer, "hand", &expect) {
        Ok(record) => Acted {
            ok: true,
            action: Some(record),
            pending: ctx.shared.borrow().acting().pending.is_some(),
            ..Acted::default()
        },
        Err(reason) => refused(reason),
    }
}

/// Continues the stopped program: no keys, a SIGCONT to its group, which
/// the main loop sends. Refused when it is not stopped.
fn continued(ctx: &Ctx) -> Acted {
    let mut shared = ctx.shared.borrow_mut();
    let halted = shared.halted();
    let report = shared.state_now();
    if let Err(why) = shared.ask_continue(report.stopped()) {
        return refused(why.into());
    }
    info!("continued by hand");
    Acted {
        ok: true,
        action: Some(ActionRecord {
            answer: crate::protocol::act::CONTINUE.into(),
            by: "hand".into(),
            rule: "process.stopped".into(),
            agent: report.agent,
            detail: Some(crate::detect::Detail::Stopped),
            subject: halted.map(|(sig, _)| sig.to_string()),
            at_unix_ms: crate::clock::unix_ms(),
            at_ms: report.clock_ms.unwrap_or_default(),
            ..ActionRecord::default()
        }),
        ..Acted::default()
    }
}

/// The tracker's turn: watches the dialog on screen, and answers it when
/// an automation rule is due to. Does nothing without rules.
pub(super) fn automate(ctx: &Ctx) {
    let mut s = ctx.shared.borrow_mut();
    if !s.acting().automated() {
        return;
    }
    let now = ctx.clock.now_ms();
    let due = s.observe_dialog(now);
    let Some(index) = due else {
        return;
    };
    let rule = s.acting().rule(index).clone();
    // The dialog must still be the one that stood for the dwell.
    let expect = s.acting().expectation(index);
    drop(s);
    let by = rule.at.to_string();
    match send(ctx, rule.answer, &by, &expect) {
        Ok(_) => {}
        // Too new to answer yet (the dwell ran from a look at the dialog
        // taken before it had stood long enough): looked at again then.
        Err(Refused {
            retry_in_ms: Some(ms),
            ..
        }) => ctx
            .shared
            .borrow_mut()
            .acting_mut()
            .due_again(ctx.clock.now_ms() + ms),
        // The dialog was as the rule saw it through its dwell a moment
        // ago: this is a pty that does not take input, or an answer still
        // on its way. A person must see to it; not tried again while the
        // dialog stays.
        Err(why) => {
            warn!(
                "automation rule at {by} could not {}: {}",
                rule.answer.name(),
                why.reason
            );
            ctx.shared.borrow_mut().acting_mut().give_up();
        }
    }
}

/// The pause between the keys of one answer. Programs drawn with Ink read
/// keys that arrive together as one input and act on the first alone
/// (Claude Code takes `Down` and drops the `Enter` after it), so each key
/// gets a read of its own.
const KEY_GAP: Duration = Duration::from_millis(100);
/// How long a later step of an answer waits for the dialog to show that
/// the keys before it were taken.
const STEP_WAIT: Duration = Duration::from_secs(5);

/// Checks, sends and records, in one step: the record, or why nothing was
/// sent. The first key is sent in that step; the answer's other keys
/// follow [`KEY_GAP`] apart, and a later step's once the dialog shows it
/// may (see [`finish`]). Meanwhile no other answer is given.
fn send(ctx: &Ctx, answer: Answer, by: &str, expect: &Expect) -> Result<ActionRecord, Refused> {
    let mut s = ctx.shared.borrow_mut();
    if let Some(what) = s.acting().pending.as_deref() {
        return Err(format!(
            "session '{}' is still answering its dialog ({what})",
            crate::paths::sanitize(&s.info().id)
        )
        .into());
    }
    let (dialog, plan) = s.plan_answer(answer, by, expect, crate::clock::unix_ms())?;
    let mut keys = plan.keys.into_iter();
    type_keys(&ctx.master, &keys.next().unwrap_or_default())?;
    s.acting_mut().answered(&dialog, plan.record.clone());
    let rest: Vec<Vec<u8>> = keys.collect();
    if !rest.is_empty() || !plan.then.is_empty() {
        s.acting_mut().pending = Some(format!("{} by {by}", plan.record.keys.join(" ")));
        let row = s.question_row(&dialog.rule);
        tokio::task::spawn_local(finish(
            ctx.shared.clone(),
            ctx.master.clone(),
            rest,
            plan.then,
            (dialog.rule, row),
        ));
    }
    Ok(plan.record)
}

/// Sends the rest of an answer: the first step's other keys, then each
/// later step's once the region of the dialog's `rule` shows its rows. A
/// step whose rows do not come within [`STEP_WAIT`] ends the answer there,
/// noted in its record: its keys would mean something else. So does one
/// whose question, asked on the cursor's `row`, the program has left:
/// it went on without them (a `read -n 1` took the `y` of `[y/N]`), and
/// the answer is over at once rather than at the end of the wait.
async fn finish(
    shared: Rc<RefCell<Shared>>,
    master: Rc<AsyncFd<OwnedFd>>,
    rest: Vec<Vec<u8>>,
    then: Vec<(Vec<Vec<u8>>, Vec<Pattern>)>,
    (rule, row): (String, Option<u16>),
) {
    let outcome = async {
        for key in &rest {
            tokio::time::sleep(KEY_GAP).await;
            type_keys(&master, key)?;
        }
        for (keys, requires) in &then {
            // Shown on two looks in a row: a program that draws a dialog
            // afresh (Claude Code's trust dialog, see `MIN_SHOWN_MS`)
            // may show the key taken and then lose it.
            let mut waited = Duration::ZERO;
            let (mut looks, mut left) = (0, 0);
            loop {
                tokio::time::sleep(KEY_GAP).await;
                waited += KEY_GAP;
                let mut s = shared.borrow_mut();
                if s.shows(&rule, requires) {
                    looks += 1;
                    left = 0;
                } else {
                    looks = 0;
                    // Two looks too, as a redraw may move the cursor.
                    left = if row.is_some_and(|r| s.cursor_row() != r) {
                        left + 1
                    } else {
                        0
                    };
                }
                drop(s);
                if looks == 2 {
                    break;
                }
                if left == 2 {
                    return Err(format!(
                        "{}; the rest was not sent",
                        crate::protocol::act::WENT_ON
                    ));
                }
                if waited >= STEP_WAIT {
                    let rows: Vec<&str> = requires.iter().map(|p| p.source()).collect();
                    return Err(format!(
                        "the dialog did not show '{}' within {} ms; the rest was not sent",
                        rows.join("', '"),
                        STEP_WAIT.as_millis()
                    ));
                }
            }
            for (i, key) in keys.iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(KEY_GAP).await;
                }
                type_keys(&master, key)?;
            }
        }
        Ok(())
    }
    .await;
    shared.borrow_mut().answer_finished(outcome.err());
}

/// Writes a key to the pty. It is a few bytes, which a pty with any room
/// takes whole; one that is full belongs to a program that does not read,
/// and nothing is sent rather than part.
fn type_keys(master: &AsyncFd<OwnedFd>, bytes: &[u8]) -> Result<(), String> {
    let mut done = 0;
    while done < bytes.len() {
        match crate::fd::write_now(master.get_ref(), &bytes[done..]) {
            Ok(0) if done == 0 => {
                return Err(
                    "the program is not reading its input (its terminal is full); \
                            no key was sent"
                        .into(),
                );
            }
            Ok(0) => {
                return Err(format!(
                    "writing the keys stopped after {done} of {} bytes: the terminal is full",
                    bytes.len()
                ));
            }
            Ok(n) => done += n,
            Err(e) => {
                return Err(format!(
                    "writing the keys failed after {done} of {} bytes: {e}",
                    bytes.len()
                ));
            }
        }
    }
    Ok(())
}
