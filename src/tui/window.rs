//! Which part of a session's screen a pane shows. A session keeps its own
//! size, so a pane is usually smaller than the screen it shows: it is a
//! window onto it, never a re-layout. Vertically the window holds the rows
//! that matter: the dialog the detector found while the session waits (its
//! question, options and subject), otherwise the bottom of what the
//! program drew, with its cursor (where a shell's prompt, a build's last
//! lines and an agent's input box are), or, in a pane too small for an
//! agent's input box and a little more, what is above the box (unless a
//! draft is typed in it).
//! Horizontally it starts at the
//! left edge, and a row cut on the right is marked, never wrapped.
//!
//! [`top_row`] is the choice, a pure function of a few facts about the
//! screen ([`Screen`], kept with each pane as plain data), so it is tested without an emulator; [`facts`]
//! reads them from one. The view draws the window; copy mode starts from
//! it (`super::copy`).

use super::model::Pane;
pub use super::model::window_facts::{Memo, Screen};

/// The first of the screen's rows a window of `height` rows shows. With a
/// dialog (its first and last row), the window holds it whole, at its
/// bottom, with what is above it (the command or file asked about is often
/// printed just before it); a dialog taller than the window is shown from
/// its first row, its question. Without, the window ends at the last row
/// drawn or the cursor, whichever is lower, and holds the cursor.
pub fn top_row(s: Screen, height: u16, dialog: Option<(u16, u16)>) -> u16 {
    if height == 0 || s.rows <= height {
        return 0;
    }
    let max_top = s.rows - height;
    let clamp = |top: u16| top.min(max_top);
    if let Some((first, last)) = dialog {
        let last = last.min(s.rows - 1);
        let first = first.min(last);
        return if last - first < height {
            clamp((last + 1).saturating_sub(height))
        } else {
            clamp(first)
        };
    }
    let drawn = s.last_text_row().unwrap_or(0);
    let bottom = if s.cursor_shown {
        drawn.max(s.cursor_row)
    } else {
        drawn
    };
    // An agent's input box and status lines fill a small pane (at 80x24,
    // Claude Code's pane was its empty prompt between two rules): where
    // the box and MIN_ABOVE_INPUT rows above it do not fit, the window
    // ends above the box, on what the agent said or is doing. So too
    // where they fit but what it said is above them, past blank rows: a
    // Gemini CLI pane at 80x24 showed its box, its hints and nothing of
    // its answer. Not where the blank rows between are closed up and the
    // window holds both (Codex at its start, its banner far above its box
    // past its logo, which counts as blank: the pane showed the banner
    // and never the prompt).
    let mut top = (bottom + 1).saturating_sub(height);
    if s.cursor_shown && s.cursor_row < top {
        // Text below the cursor (an editor's, an agent's status lines)
        // gives way to the cursor's row.
        top = s.cursor_row;
    }
    let top = clamp(top);
    if let Some(input) = s.input_top.filter(|&t| t > 0 && t <= bottom)
        && let Some(said) = s.said_above_input.filter(|&r| r < input)
        && (height < bottom - input + 1 + MIN_ABOVE_INPUT
            || (said + height <= bottom && !window_rows(s, height, top).contains(&said)))
    {
        return clamp((said + 1).saturating_sub(height));
    }
    top
}

/// Rows above an agent's input box a window must hold with the box, or
/// it shows those rows instead of the box (see [`top_row`]).
const MIN_ABOVE_INPUT: u16 = 2;

/// The first row of a pane's window of `height` rows onto its session's
/// live screen. The facts are read from the screen once for each change
/// of it (`Pane::drawn`, or its size), not at every frame: 64 quiet panes
/// of 120x40 would be 300,000 cells looked at 30 times a second.
pub fn live_top(p: &Pane, height: u16) -> u16 {
    let mut s = screen_facts(p);
    let agent = p.report.as_ref().is_some_and(|r| r.agent.is_some());
    // A draft typed at the prompt is what the person will come back to:
    // the window holds the box and its cursor, as a shell's does, not
    // what the agent said above it.
    let typing = p
        .report
        .as_ref()
        .is_some_and(|r| r.detail == Some(crate::detect::Detail::PromptEditing));
    if typing {
        s.input_top = None;
    }
    match dialog_rows(p) {
        None if s.full_screen && !agent => full_screen_top(s, height),
        dialog => top_row(s, height, dialog),
    }
}

/// The first row a window of `height` rows shows of a full-screen
/// program's screen ([`Screen::full_screen`], no agent recognised): from its
/// top, where `top`'s summary, a table's header and a file's first lines
/// are, and lower only to hold the cursor where it is shown. Its last row
/// is often a key bar or a blank prompt; the bottom is what [`top_row`]
/// shows of a screen that scrolls, as a shell's or an agent's does.
pub fn full_screen_top(s: Screen, height: u16) -> u16 {
    if height == 0 || s.rows <= height || !s.cursor_shown || s.cursor_row < height {
        return 0;
    }
    (s.cursor_row + 1 - height).min(s.rows - height)
}

/// The facts of a pane's live screen, read again only when it changed.
fn screen_facts(p: &Pane) -> Screen {
    let size = p.term.size();
    let known = p
        .window_memo
        .get()
        .filter(|m| m.drawn == p.drawn && m.size == size);
    known.map_or_else(
        || {
            let agent = p.report.as_ref().and_then(|r| r.agent.as_deref());
            let mut screen = facts(p.term.screen());
            if let Some((top, said)) = input_rows(p.term.screen(), agent) {
                screen.input_top = Some(top);
                screen.said_above_input = said;
            }
            p.window_memo.set(Some(Memo {
                drawn: p.drawn,
                size,
                screen,
            }));
            screen
        },
        |m| m.screen,
    )
}

/// The rows of the dialog a waiting session shows, as its supervisor
/// reported them (the question and its options), from the row that names
/// its subject (the command or file asked about) when that is printed
/// just above them.
pub fn dialog_rows(p: &Pane) -> Option<(u16, u16)> {
    if !p.waiting() {
        return None;
    }
    dialog_span(p, p.report.as_ref()?.dialog.as_ref()?)
}

/// The rows of dialog `d` on `p`'s screen, from its subject's row when
/// that is printed just above them (see [`dialog_rows`]).
pub fn dialog_span(p: &Pane, d: &crate::protocol::DialogInfo) -> Option<(u16, u16)> {
    let (first, last) = d.screen_rows?;
    let screen = p.term.screen();
    let last = last.min(screen.size().0.get() - 1);
    let first = first.min(last);
    let named = d.subject.as_deref().and_then(subject_probe);
    // Above the question first, up to the rule the dialog's box begins
    // under: Claude Code's edit asks `Do you want to make this edit to
    // hello.py?` under ` Edit file` / ` hello.py` and the diff, and found
    // in the question the subject left the diff out of the inbox.
    let above = (first.saturating_sub(SUBJECT_ABOVE)..first)
        .rev()
        .take_while(|&r| !opens_a_box(&row_text(screen, r)));
    let subject_row = named.and_then(|probe| {
        above
            .chain(std::iter::once(first))
            .find(|&r| row_text(screen, r).contains(&probe))
    });
    Some((subject_row.unwrap_or(first), last))
}

/// A row that is a rule or a box's top edge (`────`, `╭───╮`): what a
/// dialog is drawn under, and so where its rows above the question end.
fn opens_a_box(row: &str) -> bool {
    let row = row.trim();
    row.chars().count() >= 3 && row.chars().all(|c| "─━═╭╮┌┐╔╗┏┓".contains(c))
}

/// What a dialog's subject is found by on the screen: its start, which
/// its first row begins with (a subject is its rows joined into one line).
pub fn subject_probe(subject: &str) -> Option<String> {
    let probe: String = subject.trim().chars().take(24).collect();
    (!probe.is_empty()).then_some(probe)
}

/// How far above a dialog its subject is looked for.
const SUBJECT_ABOVE: u16 = 8;

/// The screen rows a pane of `height` rows shows, top to bottom: its
/// window ([`live_top`]), or for a dialog taller than the pane, the
/// dialog's rows that say something (no blank rows, no rules of box
/// characters): its subject's row, its question and options down, and
/// what is between the two (a diff) as room allows.
pub fn shown_rows(p: &Pane, height: u16) -> Vec<u16> {
    if let Some((first, last)) = dialog_rows(p)
        && last - first >= height
    {
        let screen = p.term.screen();
        let question = p
            .report
            .as_ref()
            .and_then(|r| r.dialog.as_ref())
            .and_then(|d| d.screen_rows)
            .map_or(first, |(q, _)| q.clamp(first, last));
        let says = |r: &u16| says_something(&row_text(screen, *r));
        let above: Vec<u16> = (first..question).filter(says).collect();
        let asked: Vec<u16> = (question..=last).filter(says).collect();
        // The subject's row, the question and its options down while they
        // fit, then what is between the two (an edit's diff) from its end:
        // taken from the top, a diff left no room for the options.
        let height = usize::from(height);
        let mut rows: Vec<u16> = above.first().copied().into_iter().take(height).collect();
        let room = height - rows.len();
        let tail = choices_kept(screen, asked, room);
        let left = room - tail.len();
        let between = above.get(1..).unwrap_or_default();
        rows.extend(&between[between.len().saturating_sub(left)..]);
        rows.extend(tail);
        if !rows.is_empty() {
            return rows;
        }
    }
    window_rows(screen_facts(p), height, live_top(p, height))
}

/// Up to `room` of a dialog's rows from its question down (`asked`): from
/// the top while they fit; else its first rows and its choices (from the
/// first row that is one, `❯ No, exit` or `2. No`) to its end, its middle
/// giving way. Claude Code's folder trust, whose question is a paragraph,
/// showed the paragraph and never the choices in a pane of 6 rows.
fn choices_kept(screen: &vt100::Screen, asked: Vec<u16>, room: usize) -> Vec<u16> {
    if asked.len() <= room {
        return asked;
    }
    // A row that is an option: the selection marker before it (Claude
    // Code's `❯`, Codex's `›`, Gemini CLI's `●` in its box), or a number.
    let choice = |r: &u16| {
        let text = row_text(screen, *r);
        let text = text.trim_start().trim_start_matches('│').trim_start();
        let rest = text.trim_start_matches(['❯', '›', '●']).trim_start();
        rest.len() < text.len()
            || rest
                .split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    match asked.iter().position(choice) {
        Some(at) if at > 0 && asked.len() - at < room => {
            let head = room - (asked.len() - at);
            asked[..head].iter().chain(&asked[at..]).copied().collect()
        }
        _ => asked.into_iter().take(room).collect(),
    }
}

/// Blank rows in a run longer than this are shown as one.
const BLANKS_KEPT: usize = 2;

/// The rows a window of `height` rows starting at `top` shows, top to
/// bottom: down to the same last row, but a run of more than
/// [`BLANKS_KEPT`] blank rows in it is one blank row, and the room that
/// frees goes to the rows above. An agent that draws its input box at
/// the bottom of a tall screen leaves a gap between it and its
/// conversation (after a resize taller, or a short conversation); a
/// pane showed the box under rows of nothing.
pub fn window_rows(s: Screen, height: u16, top: u16) -> Vec<u16> {
    let end = top.saturating_add(height).min(s.rows);
    if s.rows <= height {
        return (0..end).collect();
    }
    let rows = gap_closed(s, height, end, 0);
    // Closed up to the screen's top, with room to spare: the lowest gap
    // keeps that many more of its rows, so the window still ends at the
    // bottom (an agent's box at the pane's foot, not over empty rows).
    match usize::from(height).checked_sub(rows.len()) {
        Some(spare @ 1..) => gap_closed(s, height, end, spare),
        _ => rows,
    }
}

/// The rows down to `end` that fill `height`, each long gap of blank rows
/// shown as one row, the lowest as `1 + spare` (see [`window_rows`]).
fn gap_closed(s: Screen, height: u16, end: u16, mut spare: usize) -> Vec<u16> {
    // The cursor's row is where the program is: never part of a gap.
    let blank = |r: u16| s.is_blank(r) && !(s.cursor_shown && r == s.cursor_row);
    let mut rows = Vec::with_capacity(usize::from(height));
    let mut row = end;
    let mut below = false;
    // In a run of blanks already measured and kept whole.
    let mut kept_run = false;
    while row > 0 && rows.len() < usize::from(height) {
        row -= 1;
        rows.push(row);
        if !blank(row) {
            below = true;
            kept_run = false;
            continue;
        }
        if kept_run {
            continue;
        }
        kept_run = true;
        // The whole run of blanks this row ends (looking up), measured
        // once at its lowest row: a gap, with something drawn below it
        // and above, is one row if it is long.
        let run = (0..row).rev().take_while(|&r| blank(r)).count() + 1;
        let above = usize::from(row) + 1 > run;
        if below && above && run > BLANKS_KEPT {
            let kept = (1 + std::mem::take(&mut spare)).min(run);
            row -= u16::try_from(run - kept).unwrap_or(row);
        }
    }
    rows.reverse();
    rows
}

/// A row's text (each cell's contents, blanks as spaces).
fn row_text(screen: &vt100::Screen, row: u16) -> String {
    let cols = screen.size().1.get();
    (0..cols)
        .map(|c| match screen.cell(row, c) {
            Some(cell) if cell.has_contents() => cell.contents(),
            _ => " ",
        })
        .collect()
}

pub use crate::vt::lines::says_something;

/// The facts [`top_row`] needs, read from a screen.
pub fn facts(screen: &vt100::Screen) -> Screen {
    let (rows, cols) = screen.size();
    let (rows, cols) = (rows.get(), cols.get());
    // A row of nothing but a picture (Codex's logo in Braille dots) is
    // no text: a gap it stands in is closed up like blank rows, or a
    // pane showed a fresh Codex as rows of its logo's cut edge.
    let drawn = |row: u16| {
        (0..cols).any(|col| {
            screen.cell(row, col).is_some_and(|c| {
                c.has_contents()
                    && c.contents() != " "
                    && !c.contents().chars().all(crate::vt::lines::is_art)
            })
        })
    };
    let mut facts = Screen {
        rows,
        cursor_row: screen.cursor_position().0,
        cursor_shown: !screen.hide_cursor(),
        full_screen: screen.alternate_screen() || screen.application_cursor(),
        blank: [0; 4],
        input_top: None,
        said_above_input: None,
    };
    for row in (0..rows).filter(|&r| !drawn(r)) {
        facts.set_blank(row);
    }
    facts
}

/// Where `agent`'s input box starts on `screen`, if its rules know the
/// box: its rule above the prompt, and the hints drawn right over that
/// (rows with no blank between them and the box, up to a rule: Gemini
/// CLI's `Shift+Tab to accept edits` under a rule); and the last row
/// above them that says something, leaving out hints set at the right
/// edge (its `? for shortcuts`). Both in rows of the screen.
fn input_rows(screen: &vt100::Screen, agent: Option<&str>) -> Option<(u16, Option<u16>)> {
    use crate::detect::screen::{Snapshot, find_input};
    let agent = agent.filter(|a| *a != crate::detect::SHELL && *a != crate::detect::PROGRAM)?;
    let rules = crate::detect::rules::builtin();
    let input = rules.agent(agent)?.input.as_ref()?;
    let snap = Snapshot::of(screen);
    let found = find_input(&snap, input)?;
    let rows = &snap.rows;
    let mut top = found.start - usize::from(input.above.is_some());
    let mut j = top;
    for _ in 0..3 {
        match j.checked_sub(1).map(|k| (k, rows[k].trim())) {
            Some((k, row)) if !row.is_empty() => {
                j = k;
                if !says_something(row) {
                    top = k;
                }
            }
            _ => break,
        }
    }
    let right_edge = |row: &str| {
        let lead = row.chars().take_while(|c| c.is_whitespace()).count();
        lead >= snap.cols / 2
    };
    let said = (0..top)
        .rev()
        .find(|&r| says_something(&rows[r]) && !right_edge(&rows[r]));
    let row = |r: usize| u16::try_from(r).ok();
    Some((row(top)?, said.and_then(row)))
}

/// Whether `row` of `screen` has text before column `to`: a view
/// scrolled to start there cuts it.
pub fn cut_before(screen: &vt100::Screen, row: u16, to: u16) -> bool {
    (0..to).any(|col| {
        screen
            .cell(row, col)
            .is_some_and(|c| c.has_contents() && c.contents() != " ")
    })
}

/// Whether `row` of the screen has anything drawn at or past column
/// `from`: the window cuts it, and says so.
pub fn cut(screen: &vt100::Screen, row: u16, from: u16) -> bool {
    let cols = screen.size().1.get();
    (from..cols).any(|col| {
        screen
            .cell(row, col)
            .is_some_and(|c| c.has_contents() && c.contents() != " ")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 40-row screen, as Claude Code draws at 120x40: text down to
    /// `last`, the cursor at `cursor` (hidden unless `shown`).
    fn screen(last: Option<u16>, cursor: u16, shown: bool) -> Screen {
        let mut s = Screen {
            rows: 40,
            cursor_row: cursor,
            cursor_shown: shown,
            full_screen: false,
            blank: [0; 4],
            input_top: None,
            said_above_input: None,
        };
        for row in last.map_or(0, |l| l + 1)..40 {
            s.set_blank(row);
        }
        s
    }

    #[test]
    fn a_screen_that_fits_is_shown_from_its_top() {
        let s = Screen {
            rows: 10,
            ..screen(Some(9), 9, true)
        };
        assert_eq!(top_row(s, 10, None), 0);
        assert_eq!(top_row(s, 30, Some((3, 5))), 0);
    }

    #[test]
    fn an_idle_session_shows_the_rows_down_to_its_cursor() {
        // A shell with 20 lines of output and its prompt on row 20.
        assert_eq!(top_row(screen(Some(20), 20, true), 6, None), 15);
        // A fresh shell: its prompt on the top row.
        assert_eq!(top_row(screen(Some(0), 0, true), 6, None), 0);
        // The cursor on a blank row below the text (after `clear; echo`).
        assert_eq!(top_row(screen(Some(3), 4, true), 3, None), 2);
    }

    /// Claude Code at 120x40: its answer down to row 32, a blank row, its
    /// input box's rule on 34, prompt on 35, rule on 36, status lines on
    /// 37-38. A pane too small for the box and two rows above it shows
    /// the answer's end instead of the box; a taller one shows both.
    #[test]
    fn a_small_pane_of_an_agent_shows_what_it_said_not_its_input_box() {
        let mut s = screen(Some(38), 35, true);
        s.set_blank(33);
        s.input_top = Some(34);
        s.said_above_input = Some(32);
        assert_eq!(top_row(s, 4, None), 29, "rows 29-32, the answer's end");
        assert_eq!(top_row(s, 6, None), 27);
        // Room for the box (34-38) and two rows above it: as before.
        assert_eq!(top_row(s, 7, None), 32);
        assert_eq!(top_row(s, 12, None), 27);
        // A dialog still wins.
        assert_eq!(top_row(s, 4, Some((30, 38))), 30);
        // Room for the box, and what it said is further up, past blank
        // rows (Gemini's answer above its hints, Codex's splash above its
        // box): the window ends at the box and the blank rows close up,
        // so both show.
        let mut far = s;
        for r in 21..34 {
            far.set_blank(r);
        }
        far.said_above_input = Some(20);
        let top = top_row(far, 10, None);
        assert_eq!(top, 29);
        assert_eq!(
            window_rows(far, 10, top),
            [17, 18, 19, 20, 33, 34, 35, 36, 37, 38],
            "the answer's end, one blank row, the box"
        );
        // A hint and a rule drawn between do not close up: where they
        // keep what it said out of the window, what it said.
        let mut ruled = far;
        for r in [27, 30] {
            ruled.blank[0] &= !(1 << r);
        }
        assert_eq!(top_row(ruled, 10, None), 11, "rows 11-20, the answer's end");
        // Codex at its start: its banner on rows 0-1, its logo (blank
        // here: a picture) and blank rows down to its box on 37-39.
        let mut codex = screen(Some(39), 37, true);
        for r in (2..37).chain([38]) {
            codex.set_blank(r);
        }
        codex.input_top = Some(37);
        codex.said_above_input = Some(1);
        let top = top_row(codex, 12, None);
        assert!(
            window_rows(codex, 12, top).contains(&37),
            "the prompt: {:?}",
            window_rows(codex, 12, top)
        );
        // Nothing drawn above the box: the box, as before.
        let mut fresh = screen(Some(38), 35, true);
        for r in 0..34 {
            fresh.set_blank(r);
        }
        fresh.input_top = Some(34);
        assert_eq!(top_row(fresh, 4, None), 35);
    }

    /// The screens as Gemini CLI 0.61.0 and Claude Code 2.1.330 draw
    /// them at rest, at 80x16: the input box's top takes in Gemini's hints
    /// drawn right over it, under a rule, and what was said is the answer,
    /// not `? for shortcuts` set at the right edge.
    #[test]
    fn an_agents_input_box_and_what_it_said_are_found_by_its_rules() {
        let on = |text: &str| {
            let mut t = crate::vt::term::Term::new(crate::protocol::Size { cols: 80, rows: 16 });
            t.feed(text.replace('\n', "\r\n").as_bytes());
            t
        };
        let rule = "─".repeat(80);
        let gemini = on(&format!(
            "> how are the tests\n\n✦ The tests pass on main.\n\n\n{:>78}\n{rule}\n \
             Shift+Tab to accept edits\n\n > Type your message or @path/to/file\n\n \
             ~/proj   no sandbox   gemini-2.5-pro",
            "? for shortcuts"
        ));
        assert_eq!(
            input_rows(gemini.screen(), Some("gemini")),
            Some((6, Some(2)))
        );
        let claude = on(&format!(
            "> is postgres up\n\n● Postgres is up.\n\n✻ Churned for 1s\n\n{rule}\n❯ \n{rule}\n  \
             ? for shortcuts"
        ));
        assert_eq!(
            input_rows(claude.screen(), Some("claude")),
            Some((6, Some(4)))
        );
        // A fresh Codex: what was said is its banner, not the logo drawn
        // in Braille dots between them (its right part only, in a pane).
        let logo = "⣀⣶⣿⣿⣿⣿⡇ ⢸⣿⣿⡿⠛⠉⢀⣠⣴⣿⣿⣿⣷⣦⣀⠈⢻⣿⣿⡇";
        let codex = on(&format!(
            "  >_ OpenAI Codex (v0.169.0)\n     ~/proj\n\n{logo:>70}\n{logo:>70}\n\n\n\n› Ask Codex to do anything\n\n  ? for shortcuts"
        ));
        assert_eq!(
            input_rows(codex.screen(), Some("codex")).map(|(_, said)| said),
            Some(Some(1))
        );
        // Not an agent whose rules know a box: none.
        assert_eq!(input_rows(claude.screen(), Some("shell")), None);
        assert_eq!(input_rows(claude.screen(), None), None);
    }

    #[test]
    fn an_agents_bottom_lines_stay_in_the_window_with_its_cursor() {
        // Claude Code: its input box on rows 35-37 with the cursor on
        // 36, a status line on 38, the cursor hidden or not.
        assert_eq!(top_row(screen(Some(38), 36, true), 6, None), 33);
        assert_eq!(top_row(screen(Some(38), 36, false), 6, None), 33);
        // A hidden cursor left on the top row does not pull the window up.
        assert_eq!(top_row(screen(Some(38), 0, false), 6, None), 33);
    }

    #[test]
    fn a_full_screen_program_is_shown_from_its_top() {
        // `top` at 40 rows, its cursor hidden: its summary and header.
        let s = Screen {
            full_screen: true,
            ..screen(Some(39), 39, false)
        };
        assert_eq!(full_screen_top(s, 12), 0);
        // An editor's cursor on row 30: the window comes down to hold it.
        let s = Screen {
            full_screen: true,
            ..screen(Some(39), 30, true)
        };
        assert_eq!(full_screen_top(s, 12), 19);
        assert_eq!(full_screen_top(Screen { cursor_row: 5, ..s }, 12), 0);
    }

    #[test]
    fn the_cursor_wins_over_text_further_down() {
        // An editor with its cursor on row 5 and its status line on 39:
        // the window starts at the cursor's row.
        assert_eq!(top_row(screen(Some(39), 5, true), 6, None), 5);
    }

    #[test]
    fn a_waiting_session_shows_its_dialog() {
        // The dialog on rows 28-34, whatever the cursor and text below.
        let s = screen(Some(38), 36, true);
        // Room for it and a row above (the command asked about).
        assert_eq!(top_row(s, 8, Some((28, 34))), 27);
        // Just room for it.
        assert_eq!(top_row(s, 7, Some((28, 34))), 28);
        // Too tall: from its question down.
        assert_eq!(top_row(s, 4, Some((28, 34))), 28);
        // At the top of the screen, nothing above it to show.
        assert_eq!(top_row(s, 10, Some((1, 3))), 0);
    }

    #[test]
    fn a_dialog_past_the_screen_is_held_to_it() {
        // Rows from a report about a screen since made smaller.
        let s = screen(Some(38), 36, true);
        assert_eq!(top_row(s, 6, Some((50, 60))), 34);
        assert_eq!(top_row(s, 6, Some((37, 90))), 34);
    }

    #[test]
    fn the_window_never_leaves_the_screen() {
        for last in [None, Some(0), Some(20), Some(39)] {
            for cursor in [0, 19, 39] {
                for shown in [true, false] {
                    for height in 1..45 {
                        for dialog in [None, Some((0, 0)), Some((10, 30)), Some((39, 39))] {
                            let s = screen(last, cursor, shown);
                            let top = top_row(s, height, dialog);
                            assert!(
                                height >= 40 && top == 0 || top + height <= 40,
                                "{s:?} {height} {dialog:?} -> {top}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_panes_window_follows_its_output_and_its_size() {
        use crate::tui::model::{Msg, SessionMsg};
        use crate::tui::update::harness::{live, model};
        use crate::tui::update::update;
        let now = std::time::Instant::now();
        let mut m = model(80, 24);
        live(&mut m, &["a"], now);
        let out = |text: &str| Msg::Session("a".into(), SessionMsg::Output(text.into()));
        update(&mut m, out("one\r\ntwo"), now);
        let p = m.pane("a").expect("pane");
        assert_eq!(live_top(p, 1), 1);
        // Read again once the screen changed, not kept from before.
        update(&mut m, out("\r\nthree\r\nfour"), now);
        let p = m.pane("a").expect("pane");
        assert_eq!(live_top(p, 1), 3);
        assert_eq!(live_top(p, 2), 2);
        // A reconnect starts the screen over.
        update(&mut m, Msg::Session("a".into(), SessionMsg::Connected), now);
        assert_eq!(live_top(m.pane("a").expect("pane"), 1), 0);
    }

    #[test]
    fn a_gap_of_blank_rows_is_one_row_and_the_text_above_comes_down() {
        // Claude Code at 200x49: its conversation on rows 7-29, nothing
        // on 30-45, its input box on 46-48 with the cursor on 47.
        let mut s = Screen {
            rows: 49,
            ..screen(Some(48), 47, true)
        };
        for row in (0..7).chain(30..46) {
            s.set_blank(row);
        }
        let top = top_row(s, 14, None);
        let rows = window_rows(s, 14, top);
        let want: Vec<u16> = (20..30).chain([45, 46, 47, 48]).collect();
        assert_eq!(rows, want);
        // Runs of two or fewer are the program's own spacing: kept.
        let mut s = screen(Some(39), 39, true);
        for row in [30, 31, 35] {
            s.set_blank(row);
        }
        assert_eq!(window_rows(s, 10, 30), (30..40).collect::<Vec<u16>>());
        // A screen that fits is shown whole, gaps and all.
        let mut s = Screen {
            rows: 10,
            ..screen(Some(9), 9, true)
        };
        for row in 2..8 {
            s.set_blank(row);
        }
        assert_eq!(window_rows(s, 10, 0), (0..10).collect::<Vec<u16>>());
        // Blanks reaching the top are no gap: nothing comes down.
        let mut s = screen(Some(39), 39, true);
        for row in 0..35 {
            s.set_blank(row);
        }
        assert_eq!(window_rows(s, 10, 30), (30..40).collect::<Vec<u16>>());
        // A fresh screen, blank but for its cursor on the top row.
        let mut s = screen(None, 0, true);
        for row in 0..40 {
            s.set_blank(row);
        }
        assert_eq!(window_rows(s, 5, 0), [0, 1, 2, 3, 4]);
        // A fresh Codex at 120x40: its banner on rows 1-2, its logo (no
        // text) and blanks down to its box on 36-39. Closed up, it all
        // fits a 10-row pane with room to spare: the gap keeps that room,
        // and the box stays at the pane's foot.
        let mut s = screen(Some(39), 36, true);
        for row in [0].into_iter().chain(3..36).chain([37]) {
            s.set_blank(row);
        }
        let top = top_row(s, 10, None);
        assert_eq!(window_rows(s, 10, top), [0, 1, 2, 3, 4, 35, 36, 37, 38, 39]);
    }

    #[test]
    fn rules_and_blanks_say_nothing() {
        assert!(!says_something("   "));
        assert!(!says_something("────────╌╌╌╌ ━━ --- ==="));
        assert!(says_something(" ❯ 1. Yes"));
        assert!(says_something("── Bash command ──"));
        assert!(!says_something("  ⣠⣶⣿⣿⣿⣿⣿⠿⣿⣿⣷⣄  ░▒▓██▀▄"));
        assert!(says_something("▐▛███▛█   Claude Code v2.1.330"));
    }

    #[test]
    fn facts_are_read_from_the_emulator() {
        let mut p = crate::vt::term::Term::new(crate::protocol::Size { cols: 20, rows: 10 });
        p.feed(b"one\r\ntwo\r\n\r\nfour\x1b[2;1H");
        let f = facts(p.screen());
        assert_eq!(
            f,
            Screen {
                rows: 10,
                cursor_row: 1,
                cursor_shown: true,
                full_screen: false,
                blank: [0b11_1111_0100, 0, 0, 0],
                input_top: None,
                said_above_input: None,
            }
        );
        assert_eq!(f.last_text_row(), Some(3));
        p.feed(b"\x1b[?25l");
        assert!(!facts(p.screen()).cursor_shown);
        p.feed(b"\x1b[?1h");
        assert!(facts(p.screen()).full_screen);
        p.feed(b"\x1b[?1l\x1b[?1049h");
        assert!(facts(p.screen()).full_screen);
        // Cut on the right: only rows with text at or past the column.
        p.feed(b"\x1b[6;1Hshort\x1b[7;1H0123456789abcdef");
        assert!(!cut(p.screen(), 5, 8));
        assert!(cut(p.screen(), 6, 8));
        assert!(!cut(p.screen(), 6, 16));
    }

    /// Gemini CLI at its prompt in a pane of 5 rows: at rest the window
    /// holds what it said above its input box; with a draft typed in the
    /// box, the box and the draft. The draft was never in sight.
    #[test]
    fn a_draft_typed_at_an_agents_prompt_is_in_the_window() {
        let frame = include_str!("../../tests/fixtures/screens/gemini_ready/frame.txt");
        let typed = frame.replace("  Type your message or @path/to/file", "half-typed draft");
        let now = std::time::Instant::now();
        for (text, detail, draft_shown) in
            [(frame, "ready", false), (&typed, "prompt_editing", true)]
        {
            let mut m = crate::tui::update::harness::model(160, 49);
            crate::tui::update::harness::live(&mut m, &["g"], now);
            let p = m.pane_mut("g").expect("pane");
            let size = crate::protocol::Size {
                cols: 120,
                rows: 22,
            };
            p.term = crate::vt::term::Term::with_scrollback(size, 0);
            p.term
                .feed(text.trim_end().replace('\n', "\r\n").as_bytes());
            p.drawn += 1;
            p.report = Some(
                serde_json::from_value(serde_json::json!({
                    "state": "idle", "state_byte": crate::classify::ProcessState::Idle.as_byte(),
                    "primary": "idle", "detail": detail, "health": "alive",
                    "agent": "gemini", "state_ms": 0, "signals": [],
                }))
                .expect("a report"),
            );
            let screen = p.term.screen();
            let prompt = (0..22)
                .find(|&r| screen.contents_between(r, 0, r, 120).starts_with(" > "))
                .expect("the prompt's row");
            let shown = shown_rows(p, 5);
            assert_eq!(shown.contains(&prompt), draft_shown, "{detail}: {shown:?}");
        }
    }
}
