//! `hm logs ID`: a session's output history as plain text (what its
//! supervisor keeps, `scrollback_bytes`), or as the program wrote it
//! (`--raw`), or its current screen (`--screen`).

use std::io::Write;

use anyhow::{Result, bail};

use crate::cli::LogsArgs;
use crate::client::{self, find_session};
use crate::config::Config;
use crate::protocol::{self, Size, client as to, conn, server};
use crate::vt::term::Term;

/// Rows of history a plain-text rendering keeps at most; the supervisor's
/// scrollback (64 KiB by default) is far less.
const MAX_HISTORY_ROWS: usize = 100_000;

pub fn logs(args: LogsArgs, config: &Config) -> Result<i32> {
    if args.screen && (args.raw || args.lines.is_some()) {
        bail!("--screen prints the current screen; it takes neither --raw nor --lines");
    }
    let dir = client::socket_dir(&args.dir, config);
    let mut out = std::io::stdout().lock();
    let session = match find_session(&dir, &args.id) {
        Ok(s) => s,
        Err(e) => {
            // Ended: what is kept of it is the end of its last screen.
            let Some(r) = client::ended_session(&dir, &args.id) else {
                return Err(e);
            };
            let skip = args
                .lines
                .map_or(0, |n| r.last_lines.len().saturating_sub(n));
            for line in &r.last_lines[skip..] {
                writeln!(out, "{line}")?;
            }
            return Ok(0);
        }
    };
    let rt = client::runtime()?;
    if args.screen {
        let screen = rt.block_on(client::answered(&session.id, async {
            let (mut r, mut w) = conn::connect(&session.sock).await?;
            Ok(conn::query_screen(&mut r, &mut w).await?)
        }))?;
        let text = screen["text"].as_str().unwrap_or_default();
        for line in trimmed(text.lines().map(str::to_owned).collect()) {
            writeln!(out, "{}", line.trim_end())?;
        }
        return Ok(0);
    }
    // The history is the replay a subscriber gets, up to its end mark; the
    // size is the session's, so lines wrap as they did on its screen.
    let (history, size) = rt.block_on(client::answered(&session.id, async {
        let (mut r, mut w) = conn::connect(&session.sock).await?;
        let mut ask = protocol::frame(to::INFO, &[]);
        ask.extend(protocol::frame(
            to::SUBSCRIBE,
            &[protocol::SUBSCRIBE_MARK_REPLAY],
        ));
        conn::ask(&mut w, &ask).await?;
        let mut bytes = Vec::new();
        let mut size = Size { cols: 80, rows: 24 };
        loop {
            let f = r.expect().await?;
            match f.ty {
                server::INFO => {
                    let info: serde_json::Value =
                        serde_json::from_slice(&f.payload).unwrap_or_default();
                    let dim = |k: &str, d: u16| {
                        info[k]
                            .as_u64()
                            .and_then(|v| u16::try_from(v).ok())
                            .unwrap_or(d)
                    };
                    size = Size {
                        cols: dim("cols", 80),
                        rows: dim("rows", 24),
                    };
                }
                server::OUTPUT => bytes.extend_from_slice(&f.payload),
                server::REPLAY_END | server::EXIT => return Ok((bytes, size)),
                _ => {}
            }
        }
    }))?;
    if args.raw {
        // The last N lines as written: from after the (N+1)th newline from
        // the end (a final newline ends the last line, it starts none).
        let from = args.lines.map_or(0, |n| {
            let body = history.strip_suffix(b"\n").unwrap_or(&history);
            body.iter()
                .enumerate()
                .rev()
                .filter(|(_, b)| **b == b'\n')
                .nth(n.saturating_sub(1))
                .map_or(0, |(i, _)| i + 1)
        });
        let from = if args.lines == Some(0) {
            history.len()
        } else {
            from
        };
        out.write_all(&history[from..])?;
        return Ok(0);
    }
    let mut term: Term = Term::with_scrollback(size, MAX_HISTORY_ROWS);
    term.feed(&history);
    let lines = trimmed(term.history());
    let skip = args.lines.map_or(0, |n| lines.len().saturating_sub(n));
    for line in &lines[skip..] {
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(0)
}

/// Without the blank rows at the end (an unused screen bottom).
fn trimmed(mut lines: Vec<String>) -> Vec<String> {
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    lines
}
