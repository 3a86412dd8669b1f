//! `hm wait ID --state NAME`: blocks until a session is in a state, told
//! by the supervisor's pushed STATE frames (no polling), or the session
//! ends, or the time-out runs out.

use std::io::Write;
use std::time::Duration;

use anyhow::{Result, bail};

use crate::cli::WaitArgs;
use crate::client::view::SessionView;
use crate::client::{self, find_session};
use crate::config::Config;
use crate::detect::Primary;
use crate::paths::SessionPaths;
use crate::protocol::{Reply, Request, StateReport, Subscribe, conn};

/// Every name above is one hm knows (kept in step by a test).
#[cfg(test)]
fn known(name: &str) -> bool {
    name == "exited"
        || name == "ended"
        || Primary::from_name(name).is_some()
        || crate::detect::Detail::from_name(name).is_some()
        || crate::classify::ProcessState::from_name(name).is_some()
}

/// Whether `report` is one of the states asked for. An agent's turn that
/// ended with a draft typed ahead reads `prompt_editing`, and one an
/// error ended `error`: both are `finished` all the same (see
/// [`crate::detect::turn_over`]), as `[[notify]]` has it (a script's
/// `hm send; hm wait --state finished` waited out its time-out at every
/// failure of the API).
fn reached(report: &StateReport, wanted: &[String]) -> bool {
    wanted.iter().any(|w| {
        *w == report.primary.name()
            || *w == report.state
            || report.detail.is_some_and(|d| d.name() == w)
            || ((w == "exited" || w == "ended") && report.primary == Primary::Dead)
            || (w == "finished" && crate::detect::turn_over(report) == Some(true))
    })
}

/// How a wait ended.
pub(super) enum Outcome {
    Reached(StateReport),
    /// How it ended, in `hm kill`'s words when someone asked for the end
    /// (`killed by SIGTERM (exit code 143)`, not a failure's code), and
    /// as `hm status --json` shows it.
    Exited(String, Box<SessionView>),
    /// The EXIT's code, before the record says how it ended.
    Code(i32),
    Closed,
}

pub fn wait(args: WaitArgs, config: &Config) -> Result<i32> {
    let limit = time_limit(args.timeout)?;
    match args.ids.as_slice() {
        [id] => wait_one(id, &args, limit, config),
        _ => wait_any(&args, limit, config),
    }
}

/// `--timeout SECS` as a time limit (`hm wait`'s and `hm send --wait`'s):
/// none without it, nor for one too long for a `Duration`, which would
/// never run out; a usage error for one that is no number of seconds.
pub(super) fn time_limit(secs: Option<f64>) -> Result<Option<Duration>> {
    if let Some(t) = secs
        && !(t.is_finite() && t >= 0.0)
    {
        super::usage!("--timeout must be a number of seconds, 0 or more (got {t})");
    }
    Ok(secs.and_then(|t| Duration::try_from_secs_f64(t).ok()))
}

/// `fut`'s output, or `None` if `limit` runs out first.
pub(super) async fn within<T>(limit: Option<Duration>, fut: impl Future<Output = T>) -> Option<T> {
    match limit {
        Some(d) => tokio::time::timeout(d, fut).await.ok(),
        None => Some(fut.await),
    }
}

/// Whether the states asked for include the end.
fn wants_end(args: &WaitArgs) -> bool {
    args.state
        .iter()
        .any(|s| matches!(s.as_str(), "exited" | "ended" | "dead"))
}

/// The outcome of watching `session`, its end read from its record: a
/// session that ends as it is asked (a program that exits at once)
/// resets the connection or closes it without its EXIT.
pub(super) fn settle(
    dir: &std::path::Path,
    session: &SessionPaths,
    watched: Result<Outcome>,
) -> Result<Outcome> {
    Ok(match watched {
        Ok(Outcome::Closed) => client::ended_meanwhile(dir, &session.id, client::answer_deadline())
            .map_or(Outcome::Closed, |r| exited(dir, &r)),
        // Whether the end was asked for is in the record the supervisor
        // writes once its clients have their EXIT.
        Ok(Outcome::Code(code)) => client::end_record(session, code)
            .map_or_else(|| exited_unrecorded(&session.id, code), |r| exited(dir, &r)),
        Ok(o) => o,
        Err(e) => match client::ended_instead(dir, &session.id, &e) {
            Some(r) => exited(dir, &r),
            // Killed before it read the question: said below.
            None if client::lost_instead(dir, &session.id, &e) => Outcome::Closed,
            None => return Err(e),
        },
    })
}

/// Prints the state session `plain` reached (or, asked for, its end).
pub(super) fn print_reached(
    out: &mut impl Write,
    plain: &str,
    outcome: &Outcome,
    json: bool,
) -> Result<()> {
    let id = client::shown_id(plain);
    match outcome {
        Outcome::Reached(report) if json => {
            let mut v = serde_json::to_value(report)?;
            v["id"] = client::named_id(plain).into();
            writeln!(out, "{v}")?;
        }
        Outcome::Reached(report) => writeln!(out, "{id}: {}", report.label())?,
        Outcome::Exited(_, view) if json => writeln!(out, "{}", serde_json::to_string(view)?)?,
        Outcome::Exited(how, _) => writeln!(out, "{id}: {how}")?,
        Outcome::Code(_) | Outcome::Closed => {}
    }
    Ok(())
}

fn wait_one(
    wanted_id: &str,
    args: &WaitArgs,
    limit: Option<Duration>,
    config: &Config,
) -> Result<i32> {
    let dir = client::socket_dir(&args.dir, config);
    let (id, ended) = match find_session(&dir, wanted_id) {
        Ok(session) => {
            let rt = client::runtime()?;
            let ended = rt.block_on(within(limit, watch(&session, &args.state, args.change)));
            let ended = ended.map(|w| settle(&dir, &session, w)).transpose()?;
            (session.id, ended)
        }
        // Ended before we asked: that is an answer too.
        Err(e) => match client::ended_session(&dir, wanted_id) {
            Some(r) => (r.id.clone(), Some(exited(&dir, &r))),
            None => return Err(e),
        },
    };
    if let Some(Outcome::Closed) = ended {
        client::after_hangup(&dir, &id);
    }
    let wants_end = wants_end(args);
    let mut out = std::io::stdout().lock();
    match ended {
        Some(o @ Outcome::Reached(_)) => {
            print_reached(&mut out, &id, &o, args.json)?;
            Ok(0)
        }
        Some(o @ Outcome::Exited(..)) if wants_end => {
            print_reached(&mut out, &id, &o, args.json)?;
            Ok(0)
        }
        Some(o) => bail!(missed(&dir, &id, &o, args)),
        None => bail!(timed_out(args, &[id])),
    }
}

/// Why the wait for session `plain` ended without a state asked for.
fn missed(dir: &std::path::Path, plain: &str, outcome: &Outcome, args: &WaitArgs) -> String {
    let before = format!("before it was {}", args.state.join(" or "));
    ended_before(dir, plain, outcome, &before, wants_end(args))
}

/// Why a wait for session `plain` ended `before` what it waited for (`before
/// it was idle`, `before its turn ended`): its end, its supervisor lost,
/// or its connection closed. `wants_end`: the end was waited for too.
pub(super) fn ended_before(
    dir: &std::path::Path,
    plain: &str,
    outcome: &Outcome,
    before: &str,
    wants_end: bool,
) -> String {
    let id = client::shown_id(plain);
    match outcome {
        Outcome::Exited(how, _) => format!("'{id}' {how} {before}"),
        // Its supervisor went without a word (SIGKILL): `hm ls` lists it
        // as lost, and so it is said here. Its program may outlive it:
        // whether it ended is not known.
        Outcome::Closed if crate::lost::holds(dir, plain) && wants_end => format!(
            "'{id}' was lost with its supervisor, and its program's end with it ('hm status {id}' says more)"
        ),
        Outcome::Closed if crate::lost::holds(dir, plain) => {
            format!("'{id}' was lost with its supervisor {before} ('hm status {id}' says more)")
        }
        Outcome::Closed => format!("'{id}' closed the connection {before}"),
        Outcome::Reached(_) | Outcome::Code(_) => unreachable!("read into Exited, or reached"),
    }
}

/// The time-out's words, naming the sessions still waited for.
fn timed_out(args: &WaitArgs, plain: &[String]) -> String {
    let secs = args.timeout.unwrap_or_default();
    let ids: Vec<String> = plain
        .iter()
        .map(|i| format!("'{}'", client::shown_id(i)))
        .collect();
    format!(
        "timed out after {secs}s waiting for {} to be {}",
        ids.join(" or "),
        args.state.join(" or ")
    )
}

/// Several sessions (`hm wait cc1 cc2 --state waiting`): the first to
/// reach a state asked for is printed, as one alone is; one that ends
/// (or is lost) before is said on stderr and waited for no more, and the
/// wait fails once none is left.
fn wait_any(args: &WaitArgs, limit: Option<Duration>, config: &Config) -> Result<i32> {
    let dir = client::socket_dir(&args.dir, config);
    let wants_end = wants_end(args);
    let what = args.state.join(" or ");
    let mut out = std::io::stdout().lock();
    let mut live = Vec::new();
    for id in &args.ids {
        match find_session(&dir, id) {
            Ok(session) => live.push(session),
            // Ended before we asked: that is an answer too.
            Err(e) => match client::ended_session(&dir, id) {
                Some(r) => match exited(&dir, &r) {
                    o @ Outcome::Exited(..) if wants_end => {
                        print_reached(&mut out, &r.id, &o, args.json)?;
                        return Ok(0);
                    }
                    o => eprintln!("hm: {}", missed(&dir, &r.id, &o, args)),
                },
                None => return Err(e),
            },
        }
    }
    let ids: Vec<String> = args
        .ids
        .iter()
        .map(|i| format!("'{}'", client::shown_id(i)))
        .collect();
    // Those still waited for, for the time-out's words.
    let waited = std::cell::RefCell::new(live.iter().map(|s| s.id.clone()).collect::<Vec<_>>());
    let rt = client::runtime()?;
    let first = rt.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        for session in live {
            let (wanted, change) = (args.state.clone(), args.change);
            let dir = dir.clone();
            set.spawn(async move {
                let watched = watch(&session, &wanted, change).await;
                // Reading how it ended may wait for its record: not on
                // the thread the other sessions' states come in on.
                tokio::task::spawn_blocking(move || {
                    let settled = settle(&dir, &session, watched);
                    if let Ok(Outcome::Closed) = settled {
                        client::after_hangup(&dir, &session.id);
                    }
                    (session, settled)
                })
                .await
            });
        }
        let first = async {
            while let Some(done) = set.join_next().await {
                // A task that panicked was said by the runtime already.
                let Ok(Ok((session, settled))) = done else {
                    continue;
                };
                waited.borrow_mut().retain(|i| *i != session.id);
                match settled {
                    Ok(o @ Outcome::Reached(_)) => return Some((session.id, o)),
                    Ok(o @ Outcome::Exited(..)) if wants_end => return Some((session.id, o)),
                    Ok(o) => eprintln!("hm: {}", missed(&dir, &session.id, &o, args)),
                    Err(e) => eprintln!(
                        "hm: '{}': {}",
                        client::shown_id(&session.id),
                        crate::error::describe(&e)
                    ),
                }
            }
            None
        };
        within(limit, first).await
    });
    match first {
        Some(Some((plain, outcome))) => {
            print_reached(&mut out, &plain, &outcome, args.json)?;
            Ok(0)
        }
        Some(None) => bail!("none of {} was {what}", ids.join(", ")),
        None => bail!(timed_out(args, &waited.borrow())),
    }
}

/// How ended session `r` ended, in `hm kill`'s words if it was killed;
/// but one whose supervisor a signal stopped (a shutdown, a Ctrl-C to
/// `hm run --detach`) was lost, as `hm ls` and `hm status` list it and
/// `hm restore` sees it, and is said so.
fn exited(dir: &std::path::Path, r: &crate::ended::Ended) -> Outcome {
    if let Some(lost) = crate::lost::get(dir, &r.id) {
        return Outcome::Exited(
            client::stopped_words(r.exit_code),
            Box::new(SessionView::lost(&lost.manifest, lost.restartable())),
        );
    }
    Outcome::Exited(
        client::exited_with(r.exit_code, r.killed),
        Box::new(SessionView::ended(r)),
    )
}

/// Session `id` that exited with `code` and left no record to read (it
/// could not be written, or was removed at once).
fn exited_unrecorded(id: &str, code: i32) -> Outcome {
    let mut view = SessionView {
        id: id.to_owned(),
        ..SessionView::default()
    };
    view.exited(code, crate::clock::unix_ms());
    Outcome::Exited(client::exited_with(code, false), Box::new(view))
}

/// Follows `session`'s pushed states until one of `wanted` (with
/// `change`, one entered after another: the state it is in as the wait
/// begins does not count), its end, or the connection's.
async fn watch(session: &SessionPaths, wanted: &[String], change: bool) -> Result<Outcome> {
    let (mut r, mut w) = conn::connect(&session.sock).await?;
    let states = Subscribe {
        state: true,
        ..Subscribe::default()
    };
    conn::ask(&mut w, &[Request::Subscribe(states)]).await?;
    // Whether a state reached now counts: with `change`, only once the
    // session was seen in another.
    let mut armed = !change;
    follow(&mut r, &mut w, &session.id, None, |report| {
        if !armed {
            armed = !reached(report, wanted);
            Judged::Not
        } else if reached(report, wanted) {
            Judged::Reached
        } else {
            Judged::Not
        }
    })
    .await
}

/// What a wait makes of a state the session is in.
pub(super) enum Judged {
    /// The state waited for.
    Reached,
    Not,
    /// Not yet, and the session is to be asked again after this long:
    /// time passing changes no state, so a wait for quiet is told it
    /// only by asking.
    AskIn(Duration),
}

/// Follows the states pushed on a connection subscribed to them (and
/// INFO's state, asked after `first_ask` and when `judge` says) until
/// `judge` says one is reached, the session ends, or the connection does.
pub(super) async fn follow(
    r: &mut conn::Reader,
    w: &mut conn::Writer,
    id: &str,
    first_ask: Option<Duration>,
    mut judge: impl FnMut(&StateReport) -> Judged,
) -> Result<Outcome> {
    // A wait the program said it is in (a hook, its status reports) before
    // drawing its dialog is held until the dialog is drawn, for a moment:
    // a script reads the dialog (`hm status`, `hm approve --dialog`) next.
    let mut held: Option<(StateReport, tokio::time::Instant)> = None;
    // When INFO is to be asked for the state now.
    let mut ask_at = first_ask.map(|d| tokio::time::Instant::now() + d);
    loop {
        let due = match (&held, ask_at) {
            (Some((_, by)), Some(at)) => Some((*by).min(at)),
            (Some((_, by)), None) => Some(*by),
            (None, at) => at,
        };
        let frame = match due {
            Some(at) => match tokio::time::timeout_at(at, r.recv()).await {
                Ok(frame) => frame?,
                Err(_) => {
                    if let Some((report, by)) = &held
                        && *by <= tokio::time::Instant::now()
                    {
                        return Ok(Outcome::Reached(report.clone()));
                    }
                    ask_at = None;
                    conn::ask(w, &[Request::Info]).await?;
                    continue;
                }
            },
            None => r.recv().await?,
        };
        let Some(f) = frame else {
            return Ok(held.map_or(Outcome::Closed, |(report, _)| Outcome::Reached(report)));
        };
        // A STATE this client cannot read is skipped, not fatal: the next
        // one may be readable.
        let Ok(reply) = conn::decode(f) else {
            continue;
        };
        let report = match reply {
            Reply::State(report) => *report,
            // The state now, as asked; a new label's INFO says nothing
            // of it.
            Reply::Info(info) if !info.relabelled => match info.state {
                Some(report) => report,
                None => continue,
            },
            Reply::Exit(_) if held.is_some() => {
                return Ok(held.map_or(Outcome::Closed, |(report, _)| Outcome::Reached(report)));
            }
            Reply::Exit(code) => return Ok(Outcome::Code(code)),
            Reply::Error { message, .. } => {
                bail!(
                    "'{}' refused: {}",
                    client::shown_id(id),
                    crate::paths::sanitize(&message)
                );
            }
            _ => continue,
        };
        // The end is told by the EXIT that follows, with its code: taken
        // at the STATE pushed just before it, the line said `dead` or
        // `exited with code 3` by chance.
        if report.primary == Primary::Dead && held.is_none() {
            continue;
        }
        match judge(&report) {
            Judged::Reached => {
                let due = crate::verdict::dialog_due_in(
                    report.detail,
                    report.signals.first(),
                    report.state_ms,
                );
                match due.filter(|_| report.dialog.is_none()) {
                    Some(ms) => {
                        let by = held.map_or_else(
                            || tokio::time::Instant::now() + Duration::from_millis(ms),
                            |(_, by)| by,
                        );
                        held = Some((report, by));
                    }
                    None => return Ok(Outcome::Reached(report)),
                }
            }
            // It moved on before drawing: it was in the state asked for.
            Judged::Not | Judged::AskIn(_) if held.is_some() => {
                return Ok(held.map_or(Outcome::Closed, |(report, _)| Outcome::Reached(report)));
            }
            Judged::Not => ask_at = None,
            Judged::AskIn(after) => ask_at = Some(tokio::time::Instant::now() + after),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_state_name_is_one_hm_knows() {
        for name in crate::cli::STATE_NAMES {
            assert!(super::known(name), "{name}");
        }
    }

    /// `finished` is an agent's turn over, a draft typed ahead or none,
    /// or an error that ended it; not a draft typed at rest.
    #[test]
    fn finished_is_a_turn_over_behind_a_draft_too() {
        let report = |detail: &str, over: bool| {
            let signals = if over {
                serde_json::json!([{"source": "timing", "rule": crate::detect::TURN_OVER,
                    "text": "", "since_ms": 0}])
            } else {
                serde_json::json!([])
            };
            serde_json::from_value::<crate::protocol::StateReport>(serde_json::json!({
                "state": "idle", "state_byte": 0, "primary": "idle", "detail": detail,
                "health": "alive", "agent": "claude", "state_ms": 0, "signals": signals,
            }))
            .expect("a report")
        };
        let wanted = ["finished".to_owned()];
        assert!(super::reached(&report("finished", false), &wanted));
        assert!(super::reached(&report("prompt_editing", true), &wanted));
        assert!(!super::reached(&report("prompt_editing", false), &wanted));
        assert!(super::reached(&report("error", false), &wanted));
        assert!(super::reached(
            &report("error", false),
            &["error".to_owned()]
        ));
    }
}
