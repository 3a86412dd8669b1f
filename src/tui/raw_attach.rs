//! The raw attach (`a`): the dashboard stops drawing and reading the
//! keyboard, puts the terminal back as the user had it, and runs `hm
//! attach`'s own passthrough on the session, on a thread of its own; the
//! dashboard's loop meanwhile keeps every session's news coming in, and
//! takes the terminal back when the attach ends.

use std::io::Write;
use std::time::Instant;

use anyhow::{Context, Result};
use tokio::sync::mpsc;

use super::apply::{Apply, session_at};
use super::keyboard::Keyboard;
use super::model::{AttachEnd, Model, Msg};
use super::remotes::Remotes;
use super::{DASHBOARD_MODES, Options, TICK, discovery, update};

/// What a raw attach borrows of the run loop.
pub struct RawCtx<'a> {
    pub keyboard: &'a Keyboard,
    pub sess_rx: &'a mut mpsc::Receiver<Msg>,
    pub apply: &'a mut Apply,
    pub remotes: &'a mut Remotes,
}

/// Hands the terminal to `hm attach`'s passthrough on session `id`,
/// keeping the model up to date meanwhile (through `update`, as the run
/// loop does), and says how it ended.
pub async fn raw_attach(id: &str, opts: &Options, m: &mut Model, ctx: RawCtx<'_>) -> Msg {
    let end = match attach(id, opts, m, ctx).await {
        Ok(crate::attach::session::Returned::Detached) => AttachEnd::Detached,
        Ok(crate::attach::session::Returned::Next) => AttachEnd::Next,
        Ok(crate::attach::session::Returned::Ended(why)) => AttachEnd::Ended(why),
        Err(e) => AttachEnd::Failed(crate::error::describe(&e)),
    };
    Msg::BackFromAttach(id.to_owned(), end)
}

async fn attach(
    id: &str,
    opts: &Options,
    m: &mut Model,
    mut ctx: RawCtx<'_>,
) -> Result<crate::attach::session::Returned> {
    let (dir, plain, _) = session_at(opts, id);
    let session = crate::paths::SessionPaths::new(&dir, &plain)?;
    ctx.keyboard.park();
    // The terminal as the user had it; the attach sets it up its own way.
    crate::term::restore();
    let back = passthrough(id, session, opts, m, &mut ctx).await;
    // Taken back however the attach went.
    take_back(ctx.keyboard)?;
    back
}

/// Runs the attach on its thread until it ends, handling the sessions'
/// news and the tick meanwhile.
async fn passthrough(
    id: &str,
    session: crate::paths::SessionPaths,
    opts: &Options,
    m: &mut Model,
    ctx: &mut RawCtx<'_>,
) -> Result<crate::attach::session::Returned> {
    let dash = crate::attach::session::FromDashboard {
        others_waiting: Default::default(),
        next_key: opts.next_key,
        name: crate::paths::sanitize(id),
    };
    let waiting = dash.others_waiting.clone();
    let config = opts.attach_config.clone();
    let (done_tx, mut done_rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("hm-attach".into())
        .spawn(move || {
            let r = crate::attach::session::attach_from_dashboard(&session, &config, dash);
            let _ = done_tx.send(r);
        })
        .context("cannot start the attach")?;
    let mut tick =
        crate::alarm::Alarm::every(TICK).context("cannot start the dashboard's timer")?;
    loop {
        let others = m.panes.iter().filter(|p| p.id != id && p.waiting()).count();
        waiting.store(others, std::sync::atomic::Ordering::Relaxed);
        tokio::select! {
            r = &mut done_rx => return r.unwrap_or_else(|_| {
                Err(anyhow::anyhow!("the attach stopped"))
            }),
            msg = ctx.sess_rx.recv() => {
                if let Some(msg) = msg {
                    let fx = update::update(m, msg, Instant::now());
                    let _ = ctx.apply.apply(fx, opts);
                }
            }
            r = tick.wait() => {
                if let Err(e) = r {
                    // The terminal is the attach's until it ends.
                    let _ = (&mut done_rx).await;
                    return Err(e).context("the dashboard's timer failed");
                }
                let now = Instant::now();
                ctx.apply.started.reap();
                let mut fx = update::update(m, Msg::Tick, now);
                for msg in discovery::discover(&opts.dir, ctx.remotes, m) {
                    fx.extend(update::update(m, msg, now));
                }
                let _ = ctx.apply.apply(fx, opts);
            }
        }
    }
}

/// The dashboard's terminal again: raw, its own screen, mouse and paste.
fn take_back(keyboard: &Keyboard) -> Result<()> {
    let guard = crate::term::Guard::enter()?;
    // The guard the dashboard started with restores the terminal at the
    // end; this one only set it up again.
    std::mem::forget(guard);
    let mut out = std::io::stdout();
    let _ = out.write_all(DASHBOARD_MODES);
    let _ = out.flush();
    keyboard.resume();
    Ok(())
}
