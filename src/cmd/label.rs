//! `hm label ID [TEXT]`: gives a running session a new label, a person's
//! name for it beside its id (`hm run --label` gives the first), or takes
//! it away. The supervisor keeps it for `hm ls`, the dashboard (told at
//! once), the record of the session's end and `hm restore`.

use std::io::Write;

use anyhow::{Result, bail};

use crate::cli::LabelArgs;
use crate::client::{self, find_session};
use crate::config::Config;
use crate::protocol::{Reply, Request, conn};

pub fn label(args: LabelArgs, config: &Config) -> Result<i32> {
    // Checked here too, to be said as the user's mistake (exit 2), before
    // anything is asked.
    let text = args.text.join(" ");
    let label = crate::cli::label(&text).map_err(super::Usage)?;
    let dir = client::socket_dir(&args.dir, config);
    let session = find_session(&dir, &args.id)?;
    let rt = client::runtime()?;
    let asked = label.clone();
    let info = rt.block_on(client::answered(&session.id, async move {
        // INFO after LABEL: a supervisor that does not know LABEL ignores
        // it, and its INFO, with the label unchanged, says so.
        let mut r = conn::ask_once(&session.sock, &[Request::Label(asked), Request::Info]).await?;
        loop {
            if let Reply::Info(info) = r.expect().await? {
                return Ok(info);
            }
        }
    }))?;
    let id = client::shown_id(&args.id);
    let now = info.label.clone().unwrap_or_default();
    if now != label {
        bail!(
            "session '{id}' kept its label: its supervisor (hm {}) is older than this hm, which knows how to change it; `hm restart {id}` after it ends runs it with this one",
            info.version
        );
    }
    let mut out = std::io::stdout().lock();
    if label.is_empty() {
        writeln!(out, "{id}: no label")?;
    } else {
        writeln!(out, "{id}: {}", crate::paths::sanitize(&label))?;
    }
    Ok(0)
}
