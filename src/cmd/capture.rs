//! `hm capture ID --fixture DIR`: saves a live session's screen, and what
//! hm makes of it, as a fixture case that `hm replay` checks.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::cli::CaptureArgs;
use crate::client::{self, find_session};
use crate::config::Config;
use crate::protocol::conn;

pub fn capture(args: CaptureArgs, config: &Config) -> Result<i32> {
    let dir = client::socket_dir(&args.dir, config);
    let session = find_session(&dir, &args.id)?;
    let (screen, info, st) = client::runtime()?.block_on(client::answered(&session.id, async {
        let (mut r, mut w) = conn::connect(&session.sock).await?;
        let screen = conn::query_screen(&mut r, &mut w).await?;
        let (info, st) = conn::query_info_status(&mut r, &mut w).await?;
        Ok((screen, info, st))
    }))?;
    let v = client::session_json(&session.id, &st, info.as_ref());
    let text = screen["text"].as_str().unwrap_or_default();
    let mut expected = v["primary"].as_str().unwrap_or("unknown").to_string();
    if let Some(detail) = v["detail"].as_str() {
        expected.push(' ');
        expected.push_str(detail);
    }
    expected.push('\n');
    if let Some(words) = v["command"].as_array() {
        let words: Vec<&str> = words.iter().filter_map(|w| w.as_str()).collect();
        expected.push_str(&format!("command: {}\n", words.join(" ")));
    }
    let size = format!(
        "size: {}x{}\n",
        screen["cols"].as_u64().unwrap_or(80),
        screen["rows"].as_u64().unwrap_or(24)
    );
    expected.push_str(&size);
    write_case(&args.fixture, text, &expected)?;
    writeln!(
        std::io::stdout().lock(),
        "saved {} as {} ({})",
        session.id,
        args.fixture.display(),
        expected.lines().next().unwrap_or_default()
    )?;
    Ok(0)
}

/// Writes `frame.txt` and `expected.txt` into `dir`, each through a
/// temporary file renamed into place, so a case is never half written.
/// An existing case is not overwritten.
fn write_case(dir: &Path, frame: &str, expected: &str) -> Result<()> {
    if dir.join("frame.txt").exists() {
        bail!(
            "{} already holds a fixture (frame.txt); choose another directory or remove it",
            dir.display()
        );
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (name, text) in [("expected.txt", expected), ("frame.txt", frame)] {
        let tmp = dir.join(format!(".{name}.tmp"));
        std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, dir.join(name))
            .with_context(|| format!("cannot write {}", dir.join(name).display()))?;
    }
    Ok(())
}
