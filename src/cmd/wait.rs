//! `hm wait ID --state NAME`: blocks until a session is in a state, told
//! by the supervisor's pushed STATE frames (no polling), or the session
//! ends, or the time-out runs out.

use std::io::Write;
use std::time::Duration;

use anyhow::{Result, bail};

use crate::cli::WaitArgs;
use crate::client::{self, find_session};
use crate::config::Config;
use crate::detect::Primary;
use crate::protocol::{self, StateReport, client as to, conn, server};

/// What `--state` may name: the primary states, the details, the state
/// bytes' names, and `exited` (checked by clap, and offered by the shell
/// completions).
pub const STATE_NAMES: &[&str] = &[
    "idle",
    "active",
    "waiting",
    "stuck",
    "dead",
    "unknown",
    "exited",
    "thinking",
    "streaming",
    "tool_use",
    "using_tools",
    "responding",
    "compacting",
    "retrying",
    "running",
    "permission",
    "question",
    "plan_approval",
    "folder_trust",
    "survey",
    "diff",
    "external_editor",
    "onboarding",
    "input",
    "ready",
    "prompt_editing",
    "finished",
    "error",
];

/// Every name above is one hm knows (kept in step by a test).
#[cfg(test)]
fn known(name: &str) -> bool {
    name == "exited"
        || Primary::from_name(name).is_some()
        || crate::detect::Detail::from_name(name).is_some()
        || crate::classify::ProcessState::from_name(name).is_some()
}

/// Whether `report` is one of the states asked for.
fn reached(report: &StateReport, wanted: &[String]) -> bool {
    wanted.iter().any(|w| {
        *w == report.primary.name()
            || *w == report.state
            || report.detail.is_some_and(|d| d.name() == w)
            || (w == "exited" && report.primary == Primary::Dead)
    })
}

/// How a wait ended.
enum Outcome {
    Reached(StateReport),
    Exited(i32),
    Closed,
}

pub fn wait(args: WaitArgs, config: &Config) -> Result<i32> {
    if let Some(t) = args.timeout
        && !(t.is_finite() && t >= 0.0)
    {
        bail!("--timeout must be a number of seconds, 0 or more (got {t})");
    }
    let dir = client::socket_dir(&args.dir, config);
    let wants_end = args.state.iter().any(|s| s == "exited" || s == "dead");
    let what = args.state.join(" or ");
    let session = match find_session(&dir, &args.id) {
        Ok(s) => s,
        Err(e) => {
            // Ended before we asked: that is an answer too.
            let Some(r) = client::ended_session(&dir, &args.id) else {
                return Err(e);
            };
            if !wants_end {
                bail!(
                    "'{}' exited with code {} before it was {what}",
                    r.id,
                    r.exit_code
                );
            }
            writeln!(
                std::io::stdout().lock(),
                "{}: exited with code {}",
                r.id,
                r.exit_code
            )?;
            return Ok(0);
        }
    };
    let wanted = args.state.clone();
    let watch = async {
        let (mut r, mut w) = conn::connect(&session.sock).await?;
        conn::ask(
            &mut w,
            &protocol::frame(to::SUBSCRIBE, &[protocol::SUBSCRIBE_STATE]),
        )
        .await?;
        let mut last: Option<StateReport> = None;
        loop {
            let Some(f) = r.recv().await? else {
                return Ok::<_, anyhow::Error>((Outcome::Closed, last));
            };
            match f.ty {
                server::STATE => {
                    let Ok(report) = serde_json::from_slice::<StateReport>(&f.payload) else {
                        continue;
                    };
                    if reached(&report, &wanted) {
                        return Ok((Outcome::Reached(report), None));
                    }
                    last = Some(report);
                }
                server::EXIT => {
                    let code = protocol::decode_exit(&f.payload).unwrap_or(-1);
                    return Ok((Outcome::Exited(code), last));
                }
                server::ERROR => {
                    bail!(
                        "'{}' refused: {}",
                        session.id,
                        crate::paths::sanitize(&protocol::decode_error(&f.payload).1)
                    );
                }
                _ => {}
            }
        }
    };
    let rt = client::runtime()?;
    let limit = args.timeout.map(Duration::from_secs_f64);
    let ended = rt.block_on(async {
        match limit {
            Some(d) => tokio::time::timeout(d, watch).await.ok(),
            None => Some(watch.await),
        }
    });
    let mut out = std::io::stdout().lock();
    match ended {
        Some(Ok((Outcome::Reached(report), _))) => {
            if args.json {
                let mut v = serde_json::to_value(&report)?;
                v["id"] = session.id.clone().into();
                writeln!(out, "{v}")?;
            } else {
                writeln!(out, "{}: {}", session.id, report.label())?;
            }
            Ok(0)
        }
        Some(Ok((Outcome::Exited(code), _))) if wants_end => {
            writeln!(out, "{}: exited with code {code}", session.id)?;
            Ok(0)
        }
        Some(Ok((Outcome::Exited(code), _))) => {
            bail!(
                "'{}' exited with code {code} before it was {what}",
                session.id
            )
        }
        Some(Ok((Outcome::Closed, _))) => {
            bail!(
                "'{}' closed the connection before it was {what}",
                session.id
            )
        }
        Some(Err(e)) => Err(e),
        None => {
            let secs = args.timeout.unwrap_or_default();
            bail!(
                "timed out after {secs}s waiting for '{}' to be {what}",
                session.id
            )
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_state_name_is_one_hm_knows() {
        for name in super::STATE_NAMES {
            assert!(super::known(name), "{name}");
        }
    }
}
