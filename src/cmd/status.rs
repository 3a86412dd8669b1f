//! `hm status ID`: one session's state, for people or (`--json`) scripts.

use std::io::Write;

use anyhow::Result;

use crate::classify;
use crate::cli::StatusArgs;
use crate::client::{self, find_session, human_ms};
use crate::config::Config;
use crate::protocol::conn;

pub fn status(args: StatusArgs, config: &Config) -> Result<i32> {
    let dir = client::socket_dir(&args.dir, config);
    let session = find_session(&dir, &args.id)?;
    let (info, st) = client::runtime()?.block_on(client::answered(&session.id, async {
        let (mut r, mut w) = conn::connect(&session.sock).await?;
        Ok(conn::query_info_status(&mut r, &mut w).await?)
    }))?;
    let state = classify::state_name(st.state);
    let mut out = std::io::stdout().lock();
    if args.json {
        let v = client::session_json(&session.id, &st, info.as_ref());
        writeln!(out, "{v}")?;
    } else {
        writeln!(out, "session:  {}", session.id)?;
        writeln!(out, "pid:      {}", st.pid)?;
        writeln!(
            out,
            "state:    {state} (for {})",
            human_ms(u64::from(st.state_ms))
        )?;
        writeln!(out, "idle:     {}", human_ms(u64::from(st.idle_ms)))?;
        writeln!(out, "alive:    {}", if st.alive { "yes" } else { "no" })?;
    }
    Ok(0)
}
