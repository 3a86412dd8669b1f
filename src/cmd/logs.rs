//! `hm logs ID`: a session's output history as plain text (what its
//! supervisor keeps, `scrollback_bytes`), or as the program wrote it
//! (`--raw`), or its current screen (`--screen`).

use std::io::Write;

use anyhow::{Result, bail};

use crate::cli::LogsArgs;
use crate::client::{self, find_session};
use crate::config::Config;
use crate::protocol::{Reply, Request, Size, Subscribe, conn};
use crate::vt::term::Term;

pub fn logs(args: LogsArgs, config: &Config) -> Result<i32> {
    if args.screen && (args.raw || args.lines.is_some() || args.follow) {
        bail!("--screen prints the current screen; it takes none of --raw, --lines, --follow");
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
        for line in trimmed(screen.text.lines().map(str::to_owned).collect()) {
            writeln!(out, "{}", line.trim_end())?;
        }
        return Ok(0);
    }
    // The history is the replay a subscriber gets, up to its end mark; the
    // size is the session's, so lines wrap as they did on its screen.
    rt.block_on(async {
        let (mut r, mut w) = client::answered(&session.id, async {
            Ok(conn::connect(&session.sock).await?)
        })
        .await?;
        let subscribe = Subscribe {
            mark_replay: true,
            ..Subscribe::default()
        };
        conn::ask(&mut w, &[Request::Info, Request::Subscribe(subscribe)]).await?;
        let (history, size, ended) = client::answered(&session.id, read_history(&mut r)).await?;
        let mut text: Term = Term::with_scrollback(size, FOLLOW_ROWS);
        if args.raw {
            write_raw(&mut out, &history, args.lines)?;
        } else {
            text.feed(&history);
            let lines = trimmed(text.history());
            // Following, the cursor's row is not finished: it is printed
            // once it is.
            let end = if args.follow && !ended {
                text.cursor_history_row().min(lines.len())
            } else {
                lines.len()
            };
            let skip = args.lines.map_or(0, |n| end.saturating_sub(n));
            for line in &lines[skip..end] {
                writeln!(out, "{}", line.trim_end())?;
            }
            out.flush()?;
        }
        if !args.follow || ended {
            return Ok(0);
        }
        let mut printed = text.cursor_history_row();
        while let Some(reply) = r.reply().await? {
            match reply {
                Reply::Output(bytes) if args.raw => {
                    out.write_all(&bytes)?;
                    out.flush()?;
                }
                Reply::Output(bytes) => {
                    text.feed(&bytes);
                    let done = text.cursor_history_row();
                    if done < printed {
                        // The screen was cleared or the history trimmed:
                        // start counting from here.
                        printed = done;
                    }
                    for line in text.history_between(printed, done) {
                        writeln!(out, "{}", line.trim_end())?;
                    }
                    out.flush()?;
                    printed = done;
                    if text.cursor_history_row() > FOLLOW_ROWS / 2 {
                        // Keep the emulator small: what was printed is
                        // not needed again.
                        text = Term::with_scrollback(size, FOLLOW_ROWS);
                        printed = 0;
                    }
                }
                Reply::Exit(_) => {
                    if !args.raw {
                        let rest = text.history_between(printed, usize::MAX);
                        for line in trimmed(rest) {
                            writeln!(out, "{}", line.trim_end())?;
                        }
                    }
                    return Ok(0);
                }
                _ => {}
            }
        }
        Ok(0)
    })
}

/// Rows an emulator following a session keeps before it starts afresh.
const FOLLOW_ROWS: usize = 20_000;

/// The replay up to its end mark (or the session's end), with the
/// session's size, and whether the session ended.
async fn read_history(r: &mut conn::Reader) -> Result<(Vec<u8>, Size, bool)> {
    let mut bytes = Vec::new();
    let mut size = Size { cols: 80, rows: 24 };
    loop {
        match r.expect().await? {
            Reply::Info(info) => {
                if let Some(s) = info.size() {
                    size = s;
                }
            }
            Reply::Output(b) => bytes.extend_from_slice(&b),
            Reply::ReplayEnd => return Ok((bytes, size, false)),
            Reply::Exit(_) => return Ok((bytes, size, true)),
            _ => {}
        }
    }
}

/// The last `lines` lines as written: from after the (N+1)th newline from
/// the end (a final newline ends the last line, it starts none).
fn write_raw(out: &mut impl Write, history: &[u8], lines: Option<usize>) -> Result<()> {
    let from = match lines {
        None => 0,
        Some(0) => history.len(),
        Some(n) => {
            let body = history.strip_suffix(b"\n").unwrap_or(history);
            body.iter()
                .enumerate()
                .rev()
                .filter(|(_, b)| **b == b'\n')
                .nth(n - 1)
                .map_or(0, |(i, _)| i + 1)
        }
    };
    out.write_all(&history[from..])?;
    out.flush()?;
    Ok(())
}

/// Without the blank rows at the end (an unused screen bottom).
fn trimmed(mut lines: Vec<String>) -> Vec<String> {
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    lines
}
