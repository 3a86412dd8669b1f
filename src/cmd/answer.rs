//! `hm approve [--always] ID`, `hm deny ID` and `hm choose ID OPTION`:
//! answer the dialog a session waits at, once, with the keys its agent's
//! rules give for that answer; and `hm continue ID`, which answers a
//! stopped program as `fg` would.
//!
//! The supervisor decides and sends in one step (ACT): it takes the
//! verdict and the screen as they are when the request arrives, and
//! refuses when there is no dialog it knows how to answer, or not the one
//! the flags expect. This command only asks and says what happened.

use std::io::Write;

use anyhow::{Result, anyhow, bail};

use crate::cli::{AnswerArgs, ContinueArgs};
use crate::client::{self, find_session};
use crate::config::Config;
use crate::detect::rules::Answer;
use crate::paths::SessionPaths;
use crate::protocol::{Act, Acted, Reply, Request, conn};

/// How many times a dialog too new to answer (or not drawn yet) is asked
/// about again: the supervisor bounds the wait by time, this only stops a
/// loop with one that never does.
const RETRIES: u32 = 16;

pub fn answer(args: AnswerArgs, answer: Answer, config: &Config) -> Result<i32> {
    // A bad pattern is the user's mistake, said before anything is asked.
    if let Some(s) = &args.subject {
        crate::config::subject_regex(s)
            .map_err(|e| super::Usage(format!("invalid --subject: {e}")))?;
    }
    let dir = client::socket_dir(&args.dir, config);
    let session = find_session(&dir, &args.id)?;
    let request = Act {
        answer: answer.name().to_owned(),
        option: answer.option(),
        rule: args.rule.clone(),
        fingerprint: args.fingerprint.clone(),
        subject: args.subject.clone(),
        dialog: args.dialog,
        // Returns once the answer is given whole: a script's next step
        // (`hm wait --state waiting`, the next answer) meets the
        // program's reply to it, not the dialog half answered.
        whole: true,
    };
    let acted = act(&session, request)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&acted)?)?;
    }
    report(&session.id, answer, acted, args.json, &mut out)
}

/// `hm continue ID`: continues a stopped program (ACT's `continue`).
pub fn resume(args: ContinueArgs, config: &Config) -> Result<i32> {
    let dir = client::socket_dir(&args.dir, config);
    let session = find_session(&dir, &args.id)?;
    let acted = act(&session, Act::resume())?;
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&acted)?)?;
    } else if acted.ok {
        writeln!(out, "{}", acted.continued(&client::shown_id(&session.id)))?;
    }
    if acted.ok {
        return Ok(0);
    }
    bail!(
        "'{}': {}",
        client::shown_id(&session.id),
        client::named_in(&acted.why(), &session.id)
    )
}

/// How long the rest of an answer may take to be typed: each later step
/// waits up to 5 s for the dialog to show the keys before it taken.
const WHOLE_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Sends one ACT and waits for its ACTED, asking again while the dialog
/// is too new to answer; with `whole`, until the answer is typed whole.
fn act(session: &SessionPaths, request: Act) -> Result<Acted> {
    let rt = client::runtime()?;
    let (acted, mut r) = rt
        .block_on(client::answered(&session.id, async {
            let (mut r, mut w) = conn::connect(&session.sock).await?;
            // STATUS after the first ACT: a supervisor that does not know ACT
            // ignores it, and its answer to STATUS says so instead of a hang.
            conn::ask(&mut w, &[Request::Act(request.clone()), Request::Status]).await?;
            let mut tries = 0;
            loop {
                match r.expect().await? {
                    // A dialog drawn a moment ago is answered once it has
                    // stood long enough; the supervisor says when to ask again.
                    Reply::Acted(acted) => match acted.retry_in_ms {
                        Some(ms) if !acted.ok && tries < RETRIES => {
                            tries += 1;
                            tokio::time::sleep(std::time::Duration::from_millis(ms + 10)).await;
                            conn::ask(&mut w, &[Request::Act(request.clone())]).await?;
                        }
                        _ => return Ok((Some(*acted), r)),
                    },
                    Reply::Status(_) if tries == 0 => return Ok((None, r)),
                    Reply::Error { message, .. } => bail!("{}", crate::paths::sanitize(&message)),
                    _ => {}
                }
            }
        }))
        // Answered as the program exits (a `[y/N]` answered twice): the
        // connection is reset, and the record says how it ended.
        .map_err(|e| client::or_ended(crate::paths::dir_of(&session.sock), &session.id, e))?;
    let acted = acted.ok_or_else(|| {
        anyhow!(
            "session '{}' is served by an older hm, which cannot answer dialogs",
            session.id
        )
    })?;
    if !(request.whole && acted.pending) {
        return Ok(acted);
    }
    // The first key is sent and the rest is being typed: the second ACTED
    // says when the last is, and whether all were.
    let whole = rt.block_on(async {
        tokio::time::timeout(WHOLE_WAIT, async {
            loop {
                if let Reply::Acted(whole) = r.expect().await? {
                    return anyhow::Ok(*whole);
                }
            }
        })
        .await
    });
    match whole {
        Ok(Ok(whole)) => Ok(Acted {
            action: whole.action.or(acted.action),
            pending: false,
            ..acted
        }),
        Ok(Err(e)) => Err(e.context(format!(
            "'{}': the answer's first key was sent, but not whether the rest was",
            session.id
        ))),
        Err(_) => bail!(
            "'{}': the answer's first key was sent, but its rest was still being typed after {} s",
            session.id,
            WHOLE_WAIT.as_secs()
        ),
    }
}

/// Says what was done, or fails with why not.
fn report(
    plain: &str,
    answer: Answer,
    acted: Acted,
    json: bool,
    out: &mut impl Write,
) -> Result<i32> {
    let id = &client::shown_id(plain);
    match (acted.ok, &acted.action) {
        (true, Some(a)) => {
            if !json {
                writeln!(out, "{}", a.summary(&answer.past(), id))?;
            }
            // Its first keys went, its last did not: the dialog may now
            // be half answered, which a person must see to.
            if let Some(why) = a.stopped_short() {
                bail!(
                    "'{id}': only part of the answer was sent: {}",
                    crate::paths::sanitize(why)
                );
            }
            Ok(0)
        }
        _ => Err(anyhow!("{}", client::named_in(&acted.why(), plain))),
    }
}
