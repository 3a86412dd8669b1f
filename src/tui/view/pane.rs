//! One session's pane in the grid: its border with the id, label, state
//! badge, link and directory, and its screen inside. Separate from the
//! layout of the grid (in `view`) because a pane is drawn the same way
//! wherever the grid puts it, and its drawing is contained on its own.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::{Alignment, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders};
use tui_term::widget::{Cursor, PseudoTerminal};

use super::title;
use crate::client::clock_ms;
use crate::tui::layout::inner;
use crate::tui::model::{Link, Lost, Model, Pane};
use crate::tui::screen;
use crate::tui::window;
use crate::vt::history::CUT_MARK;

/// A row shown from past its start (scrolled right) is marked so at its
/// left, as one that goes on past the right edge is at its right.
const CUT_LEFT_MARK: &str = "‹";

/// The bottom border's timer, the time since the program last printed:
/// `idle 1m36s` for an idle session, `quiet 4s` for a working one (a
/// build that stopped printing; "idle" there read as a contradiction of
/// the title's `active`, a trial found), none for one waiting for its person, whose title
/// says how long it has waited and whose animation (Claude Code blinks
/// its tool's mark at a dialog) would keep the timer at 0s.
fn quiet_for(p: &Pane, now: Instant) -> String {
    match p.idle_ms(now) {
        _ if p.waiting() => String::new(),
        Some(ms) if p.busy() => format!(" quiet {} ", clock_ms(ms)),
        Some(ms) => format!(" idle {} ", clock_ms(ms)),
        None => String::new(),
    }
}

pub(super) fn pane(m: &Model, p: &Pane, r: Rect, f: &mut Frame<'_>, now: Instant) {
    let selected = m.selected.as_deref() == Some(p.id.as_str());
    let border = if p.waiting() {
        // Waiting is the strongest call: the pane's frame takes the
        // waiting state's own colour, selected too (its thick frame says
        // it is selected): one waiting pane, selected, looked like all
        // the others.
        m.theme
            .state(Some(crate::classify::ProcessState::Waiting.as_byte()))
    } else if selected {
        m.theme.border_selected
    } else if p.attention {
        m.theme.border_attention
    } else {
        m.theme.border
    };
    // Another machine's session, while that machine is down: what it
    // shows is as of when it dropped, its timers stopped then.
    let dropped = m.host_down(p);
    let now = dropped.map_or(now, |(_, at)| at.min(now));
    // Being looked at, it asks for nothing; the mark itself stays until
    // it has been looked at for a moment (`update::look_at_selected`), and
    // shows again if the selection only passed over it.
    let t = title::fit(
        &p.id,
        p.label.as_deref(),
        p.attention && !selected,
        &title::badges(m, p, now),
        r.width,
    );
    let mut title = vec![Span::styled(format!(" {} ", t.id), m.theme.title)];
    if let Some(label) = &t.label {
        title.push(Span::styled(format!("{label} "), m.theme.dim));
    }
    if t.attention {
        title.push(Span::styled("● ", m.theme.border_attention));
    }
    let badge_style = if dropped.is_some() {
        m.theme.dim
    } else {
        super::badge_style(m, p)
    };
    let badge = match t.badge.as_str() {
        "" => String::new(),
        b => format!(" {b} "),
    };
    let host_down =
        crate::remote::split_target(&p.id).and_then(|(host, _)| m.host_problems.get(host));
    let bottom = match (&p.link, p.exit) {
        _ if host_down.is_some() => {
            let room = usize::from(r.width.saturating_sub(4));
            let said = host_problem(host_down.map_or("", |s| s), room);
            Span::styled(format!(" {said} "), m.theme.error)
        }
        // Killed, it says so as its title does, not "exited" under it,
        // in `hm kill`'s words where they fit (`killed by SIGTERM (exit
        // code 143)`), else shorter.
        (_, Some(code)) if p.killed => {
            let room = usize::from(r.width.saturating_sub(4));
            let said = crate::client::exited_with(code, true);
            let said = if said.chars().count() <= room {
                said
            } else {
                // As the title and `hm ls` say it.
                crate::client::signal_name(code).map_or_else(
                    || format!("killed · exit {code}"),
                    |s| format!("killed {s}"),
                )
            };
            // A person ended it: no failure.
            Span::styled(format!(" {said} "), m.theme.dim)
        }
        (_, Some(0)) => Span::styled(" exited 0 ", m.theme.dim),
        (_, Some(code)) => Span::styled(format!(" exited {code} "), m.theme.error),
        // Shorter in a narrow pane, where a cut would take "lost".
        _ if p.lost.is_some() => {
            let forms: &[&str] = if p.lost == Some(Lost::Restartable) {
                &[" lost (restartable): R ", " lost: R "]
            } else {
                &[" lost: hm restore says why ", " lost "]
            };
            let room = usize::from(r.width.saturating_sub(2));
            let text = forms
                .iter()
                .find(|f| f.chars().count() <= room)
                .unwrap_or(&forms[1]);
            Span::styled(*text, m.theme.error)
        }
        (Link::Problem(why), _) => Span::styled(format!(" {why} "), m.theme.error),
        (Link::Gone, _) => match p.orphan {
            // Shorter in a narrow pane, where a cut would take the pid.
            Some(pid) => {
                let room = usize::from(r.width.saturating_sub(2));
                let text = [
                    format!(" supervisor gone, pid {pid} runs on "),
                    format!(" orphaned, pid {pid} "),
                ]
                .into_iter()
                .find(|f| f.chars().count() <= room)
                .unwrap_or_else(|| " orphaned ".into());
                Span::styled(text, m.theme.error)
            }
            None => Span::styled(" supervisor gone ", m.theme.error),
        },
        (Link::Connecting, _) => Span::styled(" connecting… ", m.theme.dim),
        (Link::Live, _) if p.unresponsive() => Span::styled(" not responding ", m.theme.error),
        (Link::Live, _) => Span::styled(quiet_for(p, now), m.theme.dim),
    };
    // Shown at another size than the pane's: a terminal attached
    // elsewhere holds it.
    let bottom = match (p.held, p.session_size) {
        (true, Some(s)) => Line::from(vec![
            Span::styled(format!(" {}x{} held ", s.cols, s.rows), m.theme.dim),
            bottom,
        ]),
        _ => Line::from(bottom),
    };
    // Longer than the border, it is cut at its end (ratatui would cut a
    // right-aligned line at its start: `╰: hm restore says why ╯`). In copy
    // mode the marker takes the left of the border, and a timer that does
    // not fit beside it whole is left out (drawn under it, `quiet 0s` read
    // `iet 0s`).
    let border_room = usize::from(r.width.saturating_sub(2));
    let bottom = match super::history::marker(p) {
        Some(marker) => {
            let room = border_room.saturating_sub(marker.chars().count() + 1);
            if bottom.width() <= room {
                bottom
            } else {
                Line::default()
            }
        }
        None => fit_line(bottom, border_room),
    };
    // The directory takes what the right side leaves, at most half.
    let dir_room = usize::from(r.width.saturating_sub(2))
        .saturating_sub(bottom.width() + 1)
        .min(usize::from(r.width) / 2);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(if selected {
            BorderType::Thick
        } else {
            BorderType::Rounded
        })
        .border_style(border)
        .title(Line::from(title))
        .title(Line::from(Span::styled(badge, badge_style)).alignment(Alignment::Right))
        .title_bottom(bottom.alignment(Alignment::Right))
        .title_bottom(
            Line::from(Span::styled(
                // Scrolled back, the marker takes the directory's place
                // (drawn over it, it left its end: `[+72/1002] 7/work`).
                if p.copy.is_some() {
                    String::new()
                } else {
                    short_dir(p.workdir.as_deref(), dir_room)
                },
                m.theme.dim,
            ))
            .alignment(Alignment::Left),
        );
    f.render_widget(block, r);
    let body = inner(r);
    if body.width == 0 || body.height == 0 {
        return;
    }
    if p.copy.is_some() {
        let v = super::history::view(p, body.height, body.width);
        // Scrolled back, the program's cursor is not among the rows shown.
        f.render_widget(
            PseudoTerminal::new(&v).cursor(cursor().visibility(false)),
            body,
        );
        edges(m, p, &v, body, f);
        // On the bottom border, over the directory: on the first row it
        // covered the text being read, and over the right end the state
        // (`exited 7` down to `e` in a narrow pane).
        super::history::overlay(m, p, &v, body, body.y + body.height, true, f);
        return;
    }
    // The window onto the session's screen: the rows that matter, from its
    // left edge; one view for a run of rows, one a row for a dialog's rows
    // picked out of a taller one.
    let rows = window::shown_rows(p, body.height);
    // Not once it ended, nor once its supervisor is gone (a lost session
    // drew its program's cursor as if it still took keys).
    let shows_cursor = selected && !p.ended();
    let mut at = 0;
    for run in rows.chunk_by(|a, b| b.checked_sub(*a) == Some(1)) {
        let (Some(&first), height) = (run.first(), run.len() as u16) else {
            continue;
        };
        let area = Rect::new(body.x, body.y + at, body.width, height);
        let v = screen::view_around(&p.term, height, body.width, (first + height - 1, 0));
        let (cursor_row, _) = p.term.screen().cursor_position();
        let here = shows_cursor && run.contains(&cursor_row);
        f.render_widget(
            PseudoTerminal::new(&v).cursor(cursor().visibility(here)),
            area,
        );
        edges(m, p, &v, area, f);
        at += height;
    }
}

/// `line` in at most `cols` columns. Its last span (what the border
/// says: a problem, how it ended) loses its start, marked `…`: its end
/// says why (`…/deaf.sock': Connection refused`), and ratatui's own cut
/// of a right-aligned line left no mark. What comes before it (`100x29
/// held`) goes first if even that is not enough.
fn fit_line(line: Line<'static>, cols: usize) -> Line<'static> {
    if line.width() <= cols {
        return line;
    }
    let mut spans = line.spans;
    let Some(last) = spans.pop() else {
        return Line::default();
    };
    let before: usize = spans.iter().map(Span::width).sum();
    let room = if before + MIN_KEPT < cols {
        cols - before
    } else {
        spans.clear();
        cols
    };
    spans.push(Span::styled(cut_start(&last.content, room), last.style));
    Line::from(spans)
}

/// Fewer columns than this left for a border's text: what is before it
/// goes instead.
const MIN_KEPT: usize = 12;

/// `text` in at most `cols` columns: without the blanks around it, and
/// then its start cut off and marked ` …`.
fn cut_start(text: &str, cols: usize) -> String {
    use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};
    if text.width() <= cols {
        return text.to_owned();
    }
    // The blanks around it go before any of its words.
    let bare = text.trim();
    if bare.width() <= cols {
        return bare.to_owned();
    }
    let Some(keep) = cols.checked_sub(2) else {
        return String::new();
    };
    let mut tail: Vec<char> = Vec::new();
    let mut used = 0;
    for c in bare.chars().rev() {
        let w = c.width().unwrap_or(0);
        if used + w > keep {
            break;
        }
        tail.push(c);
        used += w;
    }
    tail.reverse();
    format!(" …{}", tail.into_iter().collect::<String>())
}

/// What is drawn over a view's edges in `area`: grapheme clusters joined,
/// a wide character in the last column cut (the terminal would draw its
/// right half over the border), and a row that goes on past the right
/// edge marked there, cut, not wrapped, and not taken for the whole line.
pub(super) fn edges(m: &Model, p: &Pane, v: &screen::View<'_>, area: Rect, f: &mut Frame<'_>) {
    super::clusters::join(f.buffer_mut(), area);
    let last = area.width - 1;
    let (row_off, col_off) = v.offset();
    for row in 0..area.height {
        if v.wide_at(row, last) {
            f.buffer_mut()[(area.x + last, area.y + row)].set_symbol(" ");
        }
        // Of the screen drawn: scrolled back, the history's rows.
        // Scrolled right: a row with text to the left says so too.
        if col_off > 0 && window::cut_before(p.term.shown(), row_off + row, col_off) {
            f.buffer_mut()[(area.x, area.y + row)]
                .set_symbol(CUT_LEFT_MARK)
                .set_style(m.theme.dim);
        }
        if window::cut(p.term.shown(), row_off + row, col_off + area.width) {
            // A wide character ending at the edge has its right half in
            // the last column, where a mark is not drawn: it gives way.
            if last > 0 && v.wide_at(row, last - 1) {
                f.buffer_mut()[(area.x + last - 1, area.y + row)].set_symbol(" ");
            }
            f.buffer_mut()[(area.x + last, area.y + row)]
                .set_symbol(CUT_MARK)
                .set_style(m.theme.dim);
        }
    }
}

/// A pane's directory for its border: `~` for the home directory, and as
/// many of the last components as fit in `room` columns.
fn short_dir(dir: Option<&str>, room: usize) -> String {
    let Some(dir) = dir else {
        return String::new();
    };
    let home = std::env::var("HOME").unwrap_or_default();
    let dir = match dir.strip_prefix(&home) {
        Some(rest) if !home.is_empty() && (rest.is_empty() || rest.starts_with('/')) => {
            format!("~{rest}")
        }
        _ => dir.to_owned(),
    };
    let dir = crate::paths::sanitize(&dir);
    if room < 6 {
        return String::new();
    }
    let n = dir.chars().count();
    if n + 2 <= room {
        return format!(" {dir} ");
    }
    // Whole components from a `/` (`…/proj2`); only a last component too
    // long for the room is cut inside.
    let cut: String = dir.chars().skip(n + 4 - room).collect();
    let kept = cut.find('/').map_or(cut.as_str(), |at| &cut[at..]);
    let kept = if kept.len() > 1 { kept } else { cut.as_str() };
    format!(" …{kept} ")
}

/// What a host's link says (`box: unreachable since 23:16:40, retrying`)
/// in `room` columns: without the host (the pane's id names it), then
/// without what follows the comma, then its first word. Cut at its start
/// as other lines are, it lost the word that says what happened.
fn host_problem(said: &str, room: usize) -> &str {
    use unicode_width::UnicodeWidthStr;
    let plain = said.split_once(": ").map_or(said, |(_, rest)| rest);
    let short = plain.split_once(", ").map_or(plain, |(first, _)| first);
    let word = short.split_once(' ').map_or(short, |(first, _)| first);
    [said, plain, short]
        .into_iter()
        .find(|s| s.width() <= room)
        .unwrap_or(word)
}

/// The session's cursor, drawn in the cell's own colours: tui-term's
/// default paints it grey, which NO_COLOR forbids and a light background
/// hides.
pub(super) fn cursor() -> Cursor {
    Cursor::default().style(ratatui::style::Style::new())
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use crate::classify::ProcessState;
    use crate::tui::update::harness::*;
    use crate::tui::update::update;

    /// The style of the top row's cell `x` as drawn.
    fn corner(m: &crate::tui::model::Model, now: Instant, x: u16) -> ratatui::style::Style {
        drawn(m, now)[(x, 0)].style()
    }

    /// A waiting pane keeps the waiting colour selected: its thick frame
    /// says it is selected. One waiting pane, selected, took the
    /// selection's colour and looked like all the others.
    #[test]
    fn a_waiting_pane_keeps_its_colour_selected() {
        let now = Instant::now();
        let mut m = model(80, 24);
        live(&mut m, &["a", "b"], now);
        update(&mut m, st("a", ProcessState::Waiting, 1000), now);
        update(&mut m, st("b", ProcessState::Idle, 1000), now);
        assert_eq!(m.selected.as_deref(), Some("a"));
        let waiting = m.theme.state(Some(ProcessState::Waiting.as_byte()));
        let text = screen_text(&m, now);
        assert!(text.starts_with('┏'), "{text}");
        assert_eq!(corner(&m, now, 0).fg, waiting.fg);
        // Not waiting, the selection's own.
        update(&mut m, st("a", ProcessState::Idle, 0), now);
        assert_eq!(corner(&m, now, 0).fg, m.theme.border_selected.fg);
        assert_ne!(m.theme.border_selected.fg, waiting.fg);
    }

    /// A directory cut to its room keeps whole components: `…/proj2`, not
    /// `…l60/proj2`.
    #[test]
    fn a_directory_too_long_keeps_its_last_whole_components() {
        use super::short_dir;
        assert_eq!(
            short_dir(Some("/tmp/trial60/proj2"), 20),
            " /tmp/trial60/proj2 "
        );
        assert_eq!(short_dir(Some("/tmp/trial60/proj2"), 14), " …/proj2 ");
        assert_eq!(
            short_dir(Some("/srv/work/trial60/proj2"), 20),
            " …/trial60/proj2 "
        );
        // A last component longer than the room is cut inside.
        assert_eq!(short_dir(Some("/a/very-long-name"), 12), " …ong-name ");
    }

    #[test]
    fn a_bottom_line_too_long_loses_its_start_and_says_so() {
        use ratatui::text::{Line, Span};
        let problem = " cannot connect to '/tmp/hm8d427W/s/deaf.sock': Connection refused ";
        let line = Line::from(vec![Span::raw(" 100x29 held "), Span::raw(problem)]);
        let fitted = super::fit_line(line.clone(), 47);
        assert_eq!(
            fitted.to_string(),
            " 100x29 held  …s/deaf.sock': Connection refused"
        );
        assert_eq!(fitted.width(), 47);
        // Too narrow for both: the problem alone.
        let fitted = super::fit_line(line.clone(), 22);
        assert_eq!(fitted.to_string(), " …: Connection refused");
        assert_eq!(super::fit_line(line.clone(), 200), line);
        assert_eq!(super::fit_line(line, 1).width(), 0);
        // Its blanks go first, then its start.
        let text = " box: unreachable since 15:35:15, retrying ";
        let fitted = super::fit_line(Line::from(text), 41);
        assert_eq!(
            fitted.to_string(),
            "box: unreachable since 15:35:15, retrying"
        );
        let fitted = super::fit_line(Line::from(text), 38);
        assert_eq!(fitted.to_string(), " …unreachable since 15:35:15, retrying");
    }

    #[test]
    fn a_host_s_problem_keeps_what_happened_when_shortened() {
        use super::host_problem;
        let said = "box: unreachable since 15:35:15, retrying";
        assert_eq!(host_problem(said, 60), said);
        assert_eq!(
            host_problem(said, 40),
            "unreachable since 15:35:15, retrying"
        );
        assert_eq!(host_problem(said, 30), "unreachable since 15:35:15");
        assert_eq!(host_problem(said, 12), "unreachable");
        assert_eq!(host_problem("box: connecting", 10), "connecting");
    }
}
