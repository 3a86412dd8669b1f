//! `hm capture ID --fixture DIR`: saves a live session's screen, and what
//! hm makes of it, as a fixture case that `hm replay` checks.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::cli::CaptureArgs;
use crate::client::{self, find_session};
use crate::config::Config;
use crate::protocol::conn;

use super::classify::{classify_text, user_rules};

pub fn capture(args: CaptureArgs, config: &Config) -> Result<i32> {
    let dir = client::socket_dir(&args.dir, config);
    let session = find_session(&dir, &args.id)?;
    let (screen, info, st) = client::runtime()?.block_on(client::answered(&session.id, async {
        Ok(conn::screen_info_status_at(&session.sock).await?)
    }))?;
    let view = crate::client::view::SessionView::live(&session.id, &st, info.as_ref());
    let text = screen.text.as_str();
    let command: Vec<String> = info.as_ref().map(|i| i.command.clone()).unwrap_or_default();
    // The case must hold what `hm replay` can check: the verdict on the
    // saved screen alone. The live verdict may rest on more (the
    // processes, timing, the title, the program's own records), which a
    // saved screen cannot show; then both are said.
    let offline = classify_text(text, &command, user_rules()?).0;
    let mut expected = offline.primary.name().to_string();
    if let Some(detail) = offline.detail {
        expected.push(' ');
        expected.push_str(detail.name());
    }
    expected.push('\n');
    if !command.is_empty() {
        expected.push_str(&format!("command: {}\n", command.join(" ")));
    }
    let size = format!("size: {}x{}\n", screen.cols, screen.rows);
    expected.push_str(&size);
    write_case(&args.fixture, text, &expected)?;
    let live = view.label();
    let by = view.signals.first().map_or("timing", |s| s.source.as_str());
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "saved {} as {} ({})",
        session.id,
        args.fixture.display(),
        offline.label()
    )?;
    if offline.label() != live {
        writeln!(
            out,
            "note: live it is {live}, decided by {by}, which the saved screen alone does not show"
        )?;
    }
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
