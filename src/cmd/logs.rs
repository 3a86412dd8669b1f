//! `hm logs ID`: a session's output history as lines of text (what its
//! supervisor keeps, `scrollback_bytes`), or as the program wrote it
//! (`--raw`), or its current screen (`--screen`).
//!
//! The history is the replay a subscriber gets, with the journal's marks
//! (`docs/protocol.md`), fed to an emulator that takes each size where it
//! falls in the output: it sees what the session's own screen saw, and
//! its history is what scrolled off that screen. Rows the output wrapped
//! are printed as the one line the program wrote (`--width` folds them
//! again). `--since` reads the marks' times, `--grep` and `-C` select as
//! grep does, `--follow` goes on with the live output ([`follow`]).

mod follow;
mod select;

use std::io::Write;

use anyhow::{Result, bail};

use crate::cli::LogsArgs;
use crate::client::{self, find_session};
use crate::config::Config;
use crate::copymode::RowNo;
use crate::protocol::{MARK_EVERY_MS, Reply, Request, Size, Subscribe, conn};
use crate::vt::term::Term;

use follow::Follow;
use select::{Grep, Out};

/// The fewest history rows kept while reading a replay; at most as many
/// as it has bytes (a row takes one at least) and at most [`MAX_ROWS`].
const MIN_ROWS: usize = 10_000;
/// The most history rows kept: output that makes rows out of nothing
/// (scrolling a tall screen) cannot take more memory than this.
const MAX_ROWS: usize = 1 << 20;
/// History rows kept while following, once the history is printed: what
/// is printed is not needed again.
const FOLLOW_ROWS: usize = 4096;

pub fn logs(args: LogsArgs, config: &Config) -> Result<i32> {
    let others = args.raw
        || args.follow
        || args.lines.is_some()
        || args.since.is_some()
        || args.grep.is_some()
        || args.width.is_some();
    if args.screen && others {
        super::usage!("--screen prints the current screen; it takes none of the other options");
    }
    if args.raw && (args.grep.is_some() || args.width.is_some()) {
        super::usage!("--raw prints the bytes as written; --grep and --width read lines");
    }
    let grep = match &args.grep {
        Some(source) => Some(
            Grep::new(source, args.context)
                .map_err(|e| super::Usage(format!("--grep '{source}' is no regex: {e}")))?,
        ),
        None => None,
    };
    let since = args
        .since
        .map(|ms| crate::clock::unix_ms().saturating_sub(ms));
    let dir = client::socket_dir(&args.dir, config);
    let mut out = std::io::stdout().lock();
    let session = match find_session(&dir, &args.id) {
        Ok(s) => s,
        Err(e) => {
            let printer = Printer::new(grep, args.width);
            // Its record, or after a reboot its manifest.
            if let Some(r) = crate::ended::get(&dir, &args.id) {
                return ended(&r, &dir, args.raw, since, printer, &mut out, args.lines);
            }
            // Lost with its supervisor (killed, or the machine restarted):
            // what it printed up to its last write for `hm restore` is
            // still worth reading, a build's failure above all.
            if let Some(m) = crate::restore::kept(&args.id, &dir).filter(|m| m.lost()) {
                eprintln!(
                    "hm: '{}' was lost when its supervisor went away; its output as last kept for 'hm restore':",
                    client::shown_id(&m.id)
                );
                let was = Was {
                    history_of: Some(&m.id),
                    size: Size {
                        cols: m.cols,
                        rows: m.rows,
                    },
                    until_ms: None,
                    last_lines: &[],
                };
                return kept(&was, args.raw, since, printer, &mut out, args.lines);
            }
            return Err(e);
        }
    };
    let rt = client::runtime()?;
    if args.screen {
        let screen = rt
            .block_on(client::answered(&session.id, async {
                Ok(conn::screen_at(&session.sock).await?)
            }))
            .map_err(|e| client::or_ended(&dir, &session.id, e))?;
        for line in screen_lines(screen.text) {
            writeln!(out, "{line}")?;
        }
        return Ok(0);
    }
    rt.block_on(async {
        let opened = async {
            let (mut r, mut w) = client::answered(&session.id, async {
                Ok(conn::connect(&session.sock).await?)
            })
            .await?;
            let subscribe = Subscribe {
                mark_replay: true,
                marks: true,
                ..Subscribe::default()
            };
            conn::ask(&mut w, &[Request::Info, Request::Subscribe(subscribe)]).await?;
            let replay = client::answered(&session.id, Replay::read(&mut r, args.raw)).await?;
            anyhow::Ok((r, w, replay))
        };
        let (mut r, mut w, mut replay) = match opened.await {
            Ok(opened) => opened,
            // Ended as it was asked (`hm wait`, then `hm logs`): the
            // connection was reset, and the record has what is kept.
            Err(e) => match client::ended_instead(&dir, &session.id, &e) {
                Some(rec) => {
                    let printer = Printer::new(grep, args.width);
                    return ended(&rec, &dir, args.raw, since, printer, &mut out, args.lines);
                }
                None => return Err(client::or_lost(&dir, &session.id, e)),
            },
        };
        if since.is_some() && replay.times.is_empty() {
            bail!(
                "'{}' runs under an hm that keeps no output times; --since needs a session started by hm {} or later",
                session.id,
                env!("CARGO_PKG_VERSION")
            );
        }
        if let Some(t) = since
            && replay.kept_since.is_some_and(|from| from > t)
        {
            let ago = crate::clock::unix_ms().saturating_sub(replay.kept_since.unwrap_or(t));
            eprintln!(
                "hm: '{}' keeps its output from {} ago only (scrollback_bytes); showing all of it",
                session.id,
                client::human_ms(ago)
            );
        }
        // A session that keeps no output (scrollback_bytes 0) has its
        // screen all the same: that is its history's end, and all of it.
        if replay.keeps_nothing && !args.raw && !args.follow {
            let screen = client::answered(&session.id, async {
                Ok(conn::query_screen(&mut r, &mut w).await?)
            })
            .await?;
            let mut printer = Printer::new(grep, args.width);
            for line in screen_lines(screen.text) {
                printer.line(line);
            }
            printer.finish(&mut out, args.lines)?;
            return Ok(printer.code());
        }
        if args.raw {
            let from = since.map_or(0, |t| replay.raw_since(t));
            write_raw(&mut out, &replay.raw[from..], args.lines)?;
        } else {
            let from = since.map_or(0, |t| replay.row_since(t));
            let ending = !args.follow || replay.ended;
            let mut printer = Printer::new(grep, args.width);
            // Following, the cursor's line is not finished: it comes once
            // it is.
            let mut follow = (!ending).then(|| Follow::new(&mut replay.term));
            let end = follow.as_ref().map_or(RowNo::MAX, Follow::printed);
            let lines = replay.term.logical_lines();
            let first = replay.term.first_row();
            for l in lines {
                let row = first + l.row as u64;
                let last = row + l.rows.saturating_sub(1) as u64;
                if last >= from && row < end {
                    printer.line(l.text);
                }
            }
            printer.finish(&mut out, args.lines)?;
            if let Some(follow) = &mut follow {
                replay.term.trim_history(FOLLOW_ROWS);
                // A full-screen program (Claude Code, Codex) draws on the
                // alternate screen, which has no lines to follow: said
                // once, not left to look like a hang.
                let mut full_screen = AltScreenNote::new(&session.id);
                full_screen.check(&replay.term);
                while let Some(reply) = r.reply().await? {
                    match reply {
                        Reply::Output(bytes) => {
                            // Lines a clear in the same read would erase
                            // are complete before it.
                            for piece in follow::in_steps(&bytes) {
                                replay.term.feed(piece);
                                for line in follow.complete(&mut replay.term) {
                                    printer.line(line);
                                }
                            }
                            printer.finish(&mut out, None)?;
                            full_screen.check(&replay.term);
                        }
                        Reply::Mark(m) => replay.term.take_mark(&m, false),
                        Reply::Exit(code) => {
                            for line in follow.rest(&mut replay.term) {
                                printer.line(line);
                            }
                            printer.finish(&mut out, None)?;
                            say_end(&session.id, &client::ended_words(&session, code));
                            return Ok(0);
                        }
                        _ => {}
                    }
                }
                for line in follow.rest(&mut replay.term) {
                    printer.line(line);
                }
                printer.finish(&mut out, None)?;
                return closed(&dir, &session.id);
            }
            // Not following: done.
            return Ok(printer.code());
        }
        if !args.follow || replay.ended {
            return Ok(0);
        }
        // --raw --follow: the bytes as they come.
        while let Some(reply) = r.reply().await? {
            match reply {
                Reply::Output(bytes) => {
                    out.write_all(&bytes)?;
                    out.flush()?;
                }
                Reply::Exit(code) => {
                    out.flush()?;
                    say_end(&session.id, &client::ended_words(&session, code));
                    return Ok(0);
                }
                _ => {}
            }
        }
        closed(&dir, &session.id)
    })
}

/// Says on stderr how a followed session ended (`hm: 'build' exited with
/// code 4`), after its last line: its output just stopped, and a failed
/// build looked the same as one that passed. Following it went well, so
/// `hm logs` itself exits 0, as documented.
fn say_end(id: &str, how: &str) {
    eprintln!("hm: '{}' {how}", client::shown_id(id));
}

/// Says once, on stderr, that a followed session is on the alternate
/// screen, where nothing is history: `hm logs -f` printed nothing at all
/// for Claude Code and Codex, and looked stuck.
struct AltScreenNote {
    id: String,
    said: bool,
}

impl AltScreenNote {
    fn new(id: &str) -> AltScreenNote {
        AltScreenNote {
            id: client::shown_id(id),
            said: false,
        }
    }

    fn check(&mut self, term: &Term) {
        if !self.said && term.screen().alternate_screen() {
            self.said = true;
            let id = &self.id;
            eprintln!(
                "hm: '{id}' draws on the alternate screen (a full-screen program), which keeps no \
                 lines to follow; lines it prints after it leaves it follow here ('hm logs {id} \
                 --screen' shows the screen now, 'hm attach {id}' follows it live)"
            );
        }
    }
}

/// How following session `id` of `dir` ends when its connection closed
/// with no EXIT: one that ended as it was followed left its record, and
/// is done (exit 0); one whose supervisor went without a word (SIGKILL)
/// was lost, which is said (it ended as quietly as a finished one).
fn closed(dir: &std::path::Path, id: &str) -> Result<i32> {
    if let Some(r) = client::ended_meanwhile(dir, id, client::answer_deadline()) {
        say_end(id, &client::exited_with(r.exit_code, r.killed));
        return Ok(0);
    }
    // As `hm wait` says it: lost only when `hm ls` lists it so.
    client::after_hangup(dir, id);
    if crate::lost::holds(dir, id) {
        return Err(client::was_lost(id));
    }
    bail!("'{id}' closed the connection before it ended ('hm status {id}' says more)")
}

/// What is kept of session `r` of `dir` that ended (see [`kept`]).
fn ended(
    r: &crate::ended::Ended,
    dir: &std::path::Path,
    raw: bool,
    since: Option<u64>,
    printer: Printer,
    out: &mut impl Write,
    lines: Option<usize>,
) -> Result<i32> {
    // Another dir's session of the same id keeps its own history.
    let was = Was {
        history_of: crate::restore::kept(&r.id, dir).map(|_| r.id.as_str()),
        size: Size {
            cols: r.cols,
            rows: r.rows,
        },
        until_ms: Some(r.ended_unix_ms),
        last_lines: &r.last_lines,
    };
    kept(&was, raw, since, printer, out, lines)
}

/// A session that is no more: what of it `hm logs` can print.
struct Was<'a> {
    /// The id its output is kept under for `hm restore`, if that is its.
    history_of: Option<&'a str>,
    /// Its size when it went.
    size: Size,
    /// When it ended, if known.
    until_ms: Option<u64>,
    /// The end of its last screen, as its record keeps it.
    last_lines: &'a [String],
}

/// What is kept of a session that is no more: its output as kept for `hm
/// restore` (the last `restore_history_bytes`, a build's whole log as a
/// rule), drawn at its last size; else the end of its last screen. Printed
/// as the live session's would be.
fn kept(
    was: &Was<'_>,
    raw: bool,
    since: Option<u64>,
    mut printer: Printer,
    out: &mut impl Write,
    lines: Option<usize>,
) -> Result<i32> {
    if since.zip(was.until_ms).is_some_and(|(t, until)| until < t) {
        return Ok(printer.code());
    }
    let history = was
        .history_of
        .zip(crate::restore::sessions_dir())
        .and_then(|(id, state)| {
            crate::restore::history::read(&state, id, usize::MAX)
                .ok()
                .flatten()
        })
        .filter(|h| !h.bytes.is_empty());
    match history {
        Some(h) if raw => write_raw(out, &h.bytes, lines)?,
        Some(h) => {
            let mut term: Term =
                Term::with_scrollback(was.size.clamped(), h.bytes.len().clamp(MIN_ROWS, MAX_ROWS));
            // Cut, as a live session's replay may be (see `Replay::read`).
            if h.start > 0 {
                term.fill_unknown();
            }
            term.feed(&h.bytes);
            // Its program's last full screen (Claude Code's conversation,
            // left as it exits) is part of what happened.
            term.write_left();
            for line in term.logical_lines() {
                printer.line(line.text);
            }
            printer.finish(out, lines)?;
        }
        None => {
            for line in was.last_lines {
                printer.line(line.clone());
            }
            printer.finish(out, lines)?;
        }
    }
    Ok(printer.code())
}

/// A session's replay, read up to its end mark (or the session's end).
struct Replay {
    term: Term,
    /// Each mark's time and the row the cursor was on then (the first row
    /// written after it).
    times: Vec<(RowNo, u64)>,
    /// The bytes as written, with where each mark fell (for `--raw`).
    raw: Vec<u8>,
    raw_times: Vec<(usize, u64)>,
    /// When the oldest output replayed was read, as INFO says, if output
    /// before it was dropped (or the supervisor does not say).
    kept_since: Option<u64>,
    /// INFO said the session keeps no output (`scrollback_bytes` 0).
    keeps_nothing: bool,
    /// Output before the replay's first byte was dropped.
    cut: bool,
    ended: bool,
}

impl Replay {
    async fn read(r: &mut conn::Reader, raw: bool) -> Result<Replay> {
        let mut replay = Replay {
            term: Term::with_scrollback(Size { cols: 80, rows: 24 }, MIN_ROWS),
            times: Vec::new(),
            raw: Vec::new(),
            raw_times: Vec::new(),
            kept_since: None,
            keeps_nothing: false,
            cut: false,
            ended: false,
        };
        loop {
            match r.expect().await? {
                Reply::Info(info) => {
                    // Before any output: the emulator keeps as many rows
                    // as the replay can make, at the session's size (a
                    // supervisor without marks gives no other).
                    let rows = (info.scrollback_bytes as usize).clamp(MIN_ROWS, MAX_ROWS);
                    replay.keeps_nothing = info.scrollback_bytes == 0;
                    replay.term =
                        Term::with_scrollback(info.size().unwrap_or(replay.term.size()), rows);
                    // Everything from the first byte: a session younger
                    // than --since lost nothing to warn of.
                    replay.cut = info.journal.as_ref().is_some_and(|j| !j.whole);
                    replay.kept_since = info
                        .journal
                        .filter(|j| !j.whole)
                        .map(|j| j.since_unix_ms)
                        .filter(|&t| t > 0);
                }
                Reply::Mark(m) => {
                    let first = replay.times.is_empty();
                    replay.term.take_mark(&m, first);
                    // Output before the replay was dropped: the screen it
                    // starts on is not known, and a program that redraws
                    // only what changed leaves the rest as it was there.
                    if first && replay.cut && !m.alternate {
                        replay.term.fill_unknown();
                    }
                    let row = cursor_row(&replay.term);
                    replay.times.push((row, m.unix_ms));
                    replay.raw_times.push((replay.raw.len(), m.unix_ms));
                }
                Reply::Output(b) => {
                    replay.term.feed(&b);
                    if raw {
                        replay.raw.extend_from_slice(&b);
                    }
                }
                Reply::ReplayEnd => return Ok(replay),
                Reply::Exit(_) => {
                    replay.ended = true;
                    // It ended: its program's last full screen is part of
                    // what happened (see `Term::write_left`).
                    replay.term.write_left();
                    return Ok(replay);
                }
                _ => {}
            }
        }
    }

    /// The first row that may have been written at or after `t`: the row
    /// the cursor was on at the mark it follows (past everything if none).
    fn row_since(&self, t: u64) -> RowNo {
        since(&self.times, t).unwrap_or(RowNo::MAX)
    }

    /// The first byte of `raw` that may have been written at or after `t`.
    fn raw_since(&self, t: u64) -> usize {
        since(&self.raw_times, t).unwrap_or(self.raw.len())
    }
}

/// Where in `marks` (places and times, in order) the output written at
/// or after `t` may begin: at the last mark before `t` if what follows it
/// may have been read after `t` (a mark is made at most every
/// [`MARK_EVERY_MS`] while output flows), else at the first mark of `t`
/// or later. Starting at the first mark of `t` or later left out the
/// last 2 s of a steady stream: a line 1.9 s old was not `--since 2s`.
fn since<T: Copy>(marks: &[(T, u64)], t: u64) -> Option<T> {
    let later = marks.partition_point(|(_, ms)| *ms < t);
    let before = later.checked_sub(1).map(|i| marks[i]);
    match before {
        Some((at, ms)) if ms + MARK_EVERY_MS > t => Some(at),
        _ => marks.get(later).map(|(at, _)| *at),
    }
}

/// The row the cursor is on, by number (on the alternate screen, the main
/// screen's top: what is written there is no history).
fn cursor_row(term: &Term) -> RowNo {
    let top = term.history_end();
    if term.screen().alternate_screen() {
        top
    } else {
        top + u64::from(term.screen().cursor_position().0)
    }
}

/// Lines through `--grep`, then `--lines` and `--width`, to stdout.
struct Printer {
    grep: Option<Grep>,
    width: Option<u16>,
    out: Vec<Out>,
    /// Something was printed.
    printed: bool,
}

impl Printer {
    fn new(grep: Option<Grep>, width: Option<u16>) -> Printer {
        Printer {
            grep,
            width,
            out: Vec::new(),
            printed: false,
        }
    }

    /// The exit code: 1 when `--grep` selected no line, as grep's.
    fn code(&self) -> i32 {
        i32::from(self.grep.is_some() && !self.printed)
    }

    fn line(&mut self, text: String) {
        let text = crate::vt::utf8::for_people(text);
        match &mut self.grep {
            Some(g) => g.line(text, &mut self.out),
            None => self.out.push(Out::Line(text)),
        }
    }

    /// Prints what was selected, the last `lines` of it.
    fn finish(&mut self, w: &mut impl Write, lines: Option<usize>) -> Result<()> {
        let out = select::last(std::mem::take(&mut self.out), lines);
        self.printed |= !out.is_empty();
        for o in &out {
            for row in select::rendered(o, self.width) {
                writeln!(w, "{row}")?;
            }
        }
        w.flush()?;
        Ok(())
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
/// A SCREEN answer's text as `hm logs` prints it (`--screen`, or a
/// session that keeps no output): each row without its trailing blanks,
/// the blank rows at the bottom left out.
fn screen_lines(text: String) -> Vec<String> {
    let text = crate::vt::utf8::for_people(text);
    trimmed(text.lines().map(|l| l.trim_end().to_owned()).collect())
}

fn trimmed(mut lines: Vec<String>) -> Vec<String> {
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::since;

    /// A line a second, marks every 2 s (at rows 0, 2, 4, 6): `--since`
    /// starts at the mark whose stretch may hold output of its time.
    #[test]
    fn since_starts_where_output_of_that_time_may_be() {
        let marks = [(0, 10_000), (2, 12_000), (4, 14_000), (6, 16_000)];
        // Rows 4 and 5 were read from 14 000 to before 16 000: some may
        // be of 15 100 or later. The old lookup, the first mark of the
        // time or later, left the last line (row 7, at 17 000) out of a
        // `--since` 1.9 s before it: no mark came after 16 000.
        assert_eq!(since(&marks, 15_100), Some(4));
        assert_eq!(since(&marks, 16_500), Some(6));
        // On a mark: from it.
        assert_eq!(since(&marks, 14_000), Some(4));
        // Before them all: everything; long after: nothing.
        assert_eq!(since(&marks, 1_000), Some(0));
        assert_eq!(since(&marks, 18_000), None);
        // After a silence the next mark comes with the output.
        let quiet = [(0, 10_000), (5, 30_000)];
        assert_eq!(since(&quiet, 20_000), Some(5));
        assert_eq!(since(&quiet, 11_000), Some(0));
    }
}
