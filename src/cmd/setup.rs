//! `hm setup AGENT`: the hook set-up for an agent started outside `hm run`
//! (from a shell inside a session, by another tool), to paste into the
//! agent's own settings. `hm run` of a known agent needs none of it.

use anyhow::{Context, Result};

use crate::agent_hooks::{Agent, snippet};

pub fn setup(agent: &str) -> Result<()> {
    let agent = Agent::from_name(agent).context("agent must be claude, codex or gemini")?;
    let hm = std::env::current_exe().context("cannot find the hm binary's path")?;
    print!("{}", snippet(agent, &hm));
    Ok(())
}
