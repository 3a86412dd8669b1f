//! The inbox over the grid: one row per session that needs you (id, host,
//! detail, how long it has waited, what it asks about), the selected
//! one's whole question under them, and what the last answer came to.
//! The rows are [`crate::tui::inbox::rows`], the same the keys go by.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::client::clock_ms;
use crate::tui::inbox::{Row, rows};
use crate::tui::layout::grid_area;
use crate::tui::model::Model;

/// The widest the box grows on a wide terminal: rows longer than this
/// are hard to follow across.
const MAX_WIDTH: u16 = 140;
/// Rows of the selected session's question under the list: at least
/// these, and at most these of its dialog's rows.
const MIN_QUESTION_ROWS: usize = 4;
const MAX_QUESTION_ROWS: usize = 16;
/// Rows of a subject shown whole when there are no dialog rows.
const SUBJECT_ROWS: usize = 3;
/// Rows of what the last answer came to.
const SAID_ROWS: usize = 3;

pub(super) fn inbox(m: &Model, f: &mut Frame<'_>, now: Instant) {
    let area = grid_area((f.area().width, f.area().height));
    let rows = rows(m, now);
    let ids: Vec<&str> = rows.iter().map(|r| r.pane.id.as_str()).collect();
    let selected = m.inbox.selected_in(&ids);
    let width = area.width.min(MAX_WIDTH);
    let inner_w = usize::from(width.saturating_sub(2));
    let inner_h = usize::from(area.height.saturating_sub(2));
    // Under the list: the selected session's question, and what the last
    // answer came to (whole: a refusal says why, and the why is long).
    let mut under: Vec<Line<'static>> = Vec::new();
    if let Some(said) = &m.inbox.said {
        let style = if said.refused {
            m.theme.error
        } else {
            m.theme.footer_key
        };
        under.push(Line::from(""));
        for part in wrap(&said.text, inner_w.saturating_sub(2), SAID_ROWS) {
            under.push(Line::from(Span::styled(format!(" {part} "), style)));
        }
    }
    let mut lines: Vec<Line<'static>> = Vec::new();
    if rows.is_empty() {
        // Wrapped, not cut at the box's edge: a narrow terminal showed
        // `no session is waiting for an`.
        for part in wrap(
            "Nothing needs you: no session is waiting for an answer.",
            inner_w.saturating_sub(2),
            3,
        ) {
            lines.push(Line::from(Span::styled(format!(" {part}"), m.theme.dim)));
        }
    } else {
        let cols = Columns::of(&rows, inner_w);
        lines.push(Line::from(Span::styled(cols.header(), m.theme.dim)));
        // The question gets what the rows leave it, at least a few rows;
        // the list scrolls to keep the selection on show.
        let fixed = 1 + under.len() + 2;
        let question_room = inner_h
            .saturating_sub(fixed + rows.len())
            .max(MIN_QUESTION_ROWS);
        let question = selected
            .and_then(|s| rows.get(s))
            .map(|r| question(m, r, inner_w, question_room))
            .unwrap_or_default();
        let room = inner_h.saturating_sub(fixed + question.len()).max(1);
        let first = selected.map_or(0, |s| s.saturating_sub(room - 1));
        for (i, r) in rows.iter().enumerate().skip(first).take(room) {
            let mut style = m.theme.popup;
            if Some(i) == selected {
                style = style.add_modifier(Modifier::REVERSED);
            }
            lines.push(Line::from(cols.row(r, Some(i) == selected, m, style)));
        }
        if !question.is_empty() {
            lines.push(Line::from(""));
            lines.extend(question);
        }
    }
    lines.extend(under);
    let height = (lines.len() as u16 + 2).min(area.height);
    // Its top stays put while the selection moves (the question under the
    // rows is longer for one than another): placed as if the question
    // took all the rows it may.
    let tallest = (rows.len() + 2 + MAX_QUESTION_ROWS + 1 + SAID_ROWS + 3) as u16;
    let top = area.height.saturating_sub(tallest.max(height)) / 2;
    let r = Rect::new(
        area.x + (area.width - width) / 2,
        area.y + top.min(area.height - height),
        width,
        height,
    );
    f.render_widget(Clear, r);
    let title = format!(" needs you · {} ", rows.len());
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(m.theme.popup_border)
        .title(title)
        .style(m.theme.popup);
    f.render_widget(Paragraph::new(lines).block(block), r);
}

/// The selected session's question in at most `room` rows: which dialog
/// and the answers it knows keys for, then the dialog's own rows from the
/// session's screen (the question, the command, the options), or without
/// them its subject.
fn question(m: &Model, r: &Row<'_>, width: usize, room: usize) -> Vec<Line<'static>> {
    let what = match &r.pane.dialog {
        // Stopped (Claude Code's own suspended screen is a dialog rule):
        // `y` continues it whatever the screen says.
        _ if r.pane.stopped() => format!("{} · {} · y continues it", r.pane.id, r.detail),
        Some(d) => {
            let keys = if d.answers.is_empty() {
                "no keys known: Enter focuses it, answer it there".to_owned()
            } else {
                d.answers.join(", ")
            };
            format!("{} · {} · {keys}", r.pane.id, d.rule)
        }
        None => format!("{} · {} · no dialog hm can answer", r.pane.id, r.detail),
    };
    let mut lines = vec![Line::from(Span::styled(
        clip(&format!(" {what}"), width),
        m.theme.dim,
    ))];
    let room = room.saturating_sub(1).clamp(1, MAX_QUESTION_ROWS);
    let rows = dialog_rows(r.pane, room);
    if !rows.is_empty() {
        // What it asks about, printed too far above the question to be
        // among its rows (Claude Code's plan), goes first, in what room
        // the question and its options leave.
        let shown = |s: &str| {
            crate::tui::window::subject_probe(s)
                .is_none_or(|p| rows.iter().any(|row| row.contains(&p)))
        };
        let unseen = r.subject.as_deref().filter(|s| r.from_dialog && !shown(s));
        let mut spare = room.saturating_sub(rows.len());
        if let Some(subject) = unseen {
            let left = spare.min(SUBJECT_ROWS);
            for part in wrap(subject, width.saturating_sub(3), left) {
                lines.push(Line::from(Span::styled(format!("   {part}"), m.theme.dim)));
                spare = spare.saturating_sub(1);
            }
        }
        // A row wider than the inbox goes on in the rows under it while
        // there is room: cut, an 80-column session's command lost its end
        // on every row, and what was approved could not be read whole.
        // The first row first (the command asked about), then from the
        // last up (the keys and the options, which answer it): first rows
        // first, a notice's paragraphs took the room and its keys were
        // cut (`... accept edits mode an…`). Broken between words, the
        // rows after the first indented under it: cut at the edge, a
        // word's last letters (`up`, `u`) read as a line of their own.
        let avail = width.saturating_sub(3).max(1);
        let broken: Vec<(usize, Vec<String>)> = rows
            .iter()
            .map(|row| {
                let indent = row.len() - row.trim_start_matches(' ').len();
                let indent = indent.min(avail / 2);
                let body = &row[indent..];
                (
                    indent,
                    wrap(body, avail.saturating_sub(indent + 2).max(8), usize::MAX),
                )
            })
            .collect();
        let mut whole = vec![false; rows.len()];
        let order = (0..rows.len().min(1)).chain((1..rows.len()).rev());
        for i in order {
            let more = broken[i].1.len().saturating_sub(1);
            if more > 0 && more <= spare {
                spare -= more;
                whole[i] = true;
            }
        }
        for (i, row) in rows.iter().enumerate() {
            let (indent, pieces) = &broken[i];
            if whole[i] {
                let lead = " ".repeat(*indent);
                let hang = " ".repeat(indent + 2);
                for (j, piece) in pieces.iter().enumerate() {
                    let pad = if j == 0 { &lead } else { &hang };
                    lines.push(Line::from(format!("   {pad}{piece}")));
                }
            } else {
                lines.push(Line::from(clip(&format!("   {row}"), width)));
            }
        }
        return lines;
    }
    let text = r
        .subject
        .clone()
        .unwrap_or_else(|| "(it does not say)".into());
    for part in wrap(&text, width.saturating_sub(3), room.min(SUBJECT_ROWS)) {
        lines.push(Line::from(format!("   {part}")));
    }
    lines
}

/// The rows of the dialog a pane's session waits at, from the pane's own
/// screen, at most `room` of them (blank rows and rules left out), from
/// the row naming what it asks about (the command, the file) when that
/// is just above the question: only while the pane shows the live screen
/// the supervisor found them on.
fn dialog_rows(p: &crate::tui::model::Pane, room: usize) -> Vec<String> {
    let Some(d) = p.dialog.as_ref() else {
        return Vec::new();
    };
    let Some((first, last)) = crate::tui::window::dialog_span(p, d) else {
        return Vec::new();
    };
    let screen = p.term.screen();
    let (height, cols) = (screen.size().0.get(), screen.size().1.get());
    if p.copy.is_some() || last >= height || first > last {
        return Vec::new();
    }
    let mut rows: Vec<String> = unframe(crate::detect::dialog::rejoined(
        screen
            .rows(0, cols)
            .skip(usize::from(first))
            .take(usize::from(last - first) + 1)
            .filter(|r| crate::tui::window::says_something(r))
            // Whole (a screen's row is as wide as its screen): `sanitize`
            // cut a wider session's rows at 80 characters.
            .map(|r| crate::paths::printable(r.trim_end()))
            .collect(),
        usize::from(cols),
    ));
    // A long dialog keeps its end, the question and the options, and
    // the row naming its subject when it starts there.
    let named = d.screen_rows.is_some_and(|(question, _)| first < question);
    let cut = rows.len().saturating_sub(room);
    if cut > 0 && named && room > 1 {
        rows.drain(1..=cut);
    } else {
        rows.drain(..cut);
    }
    rows
}

/// The sides of a box a program draws around a dialog or a command.
const EDGES: [char; 3] = ['│', '┃', '║'];

/// `row` without the boxes inside the dialog's own (Gemini CLI shows the
/// command it asks about in one: `│ for i in 1 2 3; … │`), indented as
/// the box's content was; left as it is if it is not framed on both
/// sides. Kept, the inner box's right side was a word of its own, which
/// the inbox's wrapping put on a row alone.
fn unbox(row: &str) -> String {
    let mut inner = row.trim();
    let mut depth = 0;
    while inner.chars().count() > 1 && inner.starts_with(EDGES) && inner.ends_with(EDGES) {
        let r = inner.strip_prefix(EDGES).unwrap_or(inner);
        inner = r.strip_suffix(EDGES).unwrap_or(r).trim();
        depth += 1;
    }
    if depth == 0 {
        return row.to_owned();
    }
    let lead = row.len() - row.trim_start().len();
    format!("{}{inner}", " ".repeat(lead + 2 * depth))
}

/// Rows without the box they are drawn in (Gemini CLI frames its
/// dialogs: `│ Allow execution? │`), their indentation within it kept,
/// and without the boxes inside it ([`unbox`]).
fn unframe(rows: Vec<String>) -> Vec<String> {
    let framed = !rows.is_empty()
        && rows.iter().all(|r| {
            let r = r.trim();
            r.starts_with(EDGES) && r.ends_with(EDGES) && r.chars().count() > 1
        });
    if !framed {
        return rows.iter().map(|r| unbox(r)).collect();
    }
    let unboxed: Vec<String> = rows
        .iter()
        .map(|r| {
            let r = r.trim();
            let r = r.strip_prefix(EDGES).unwrap_or(r);
            unbox(r.strip_suffix(EDGES).unwrap_or(r).trim_end())
        })
        .collect();
    let inner: Vec<&str> = unboxed.iter().map(String::as_str).collect();
    let indent = inner
        .iter()
        .filter(|r| !r.trim().is_empty())
        .map(|r| r.len() - r.trim_start().len())
        .min()
        .unwrap_or(0);
    inner
        .into_iter()
        .map(|r| r.get(indent..).unwrap_or(r.trim_start()).to_owned())
        .filter(|r| !r.is_empty())
        .collect()
}

/// `text` in rows of at most `width` characters, broken between words
/// where it can be; at most `rows` of them (the last ends in `…` when
/// there was more).
pub(super) fn wrap(text: &str, width: usize, rows: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let mut word: Vec<char> = word.chars().collect();
        let used = line.chars().count();
        if used > 0 && used + 1 + word.len() <= width {
            line.push(' ');
            line.extend(word);
            continue;
        }
        if used > 0 {
            out.push(std::mem::take(&mut line));
        }
        // A word longer than a row is cut where the row ends.
        while word.len() > width {
            out.push(word.drain(..width).collect());
        }
        line.extend(word);
    }
    if !line.is_empty() {
        out.push(line);
    }
    if out.len() > rows {
        out.truncate(rows);
        if let Some(last) = out.last_mut() {
            if last.chars().count() >= width {
                last.pop();
            }
            last.push('…');
        }
    }
    out
}

/// Columns of the subject an id longer than 24 leaves it.
const SUBJECT_KEPT: usize = 20;

/// The widths of the list's columns.
struct Columns {
    id: usize,
    host: Option<usize>,
    detail: usize,
    waited: usize,
    subject: usize,
}

impl Columns {
    fn of(rows: &[Row<'_>], width: usize) -> Columns {
        let widest = |f: &dyn Fn(&Row<'_>) -> usize, min: usize, max: usize| {
            rows.iter().map(f).max().unwrap_or(0).clamp(min, max)
        };
        // Only while another machine's session asks: a column saying
        // `local` on every row took the subject's room.
        let host = rows
            .iter()
            .any(|r| r.host.is_some())
            .then(|| widest(&|r| r.host.map_or(5, |h| h.chars().count()), 4, 16));
        let detail = widest(&|r| r.detail.chars().count(), 6, 14);
        let waited = 6;
        // Marker, gaps between the columns.
        let others = 2 + host.map_or(0, |h| h + 2) + 2 + detail + 2 + waited + 2;
        // The id is what a person answers by elsewhere (`hm approve ID`):
        // it takes what the subject can spare beyond its first
        // SUBJECT_KEPT columns, and never less than 24.
        let id_max = width.saturating_sub(others + SUBJECT_KEPT).max(24);
        let id = widest(&|r| r.id.chars().count(), 2, id_max);
        let fixed = others + id;
        Columns {
            id,
            host,
            detail,
            waited,
            subject: width.saturating_sub(fixed).max(8),
        }
    }

    fn header(&self) -> String {
        let mut s = format!("  {:<w$}  ", "ID", w = self.id);
        if let Some(h) = self.host {
            s.push_str(&format!("{:<h$}  ", "HOST"));
        }
        s.push_str(&format!(
            "{:<d$}  {:>t$}  ASKS ABOUT",
            "DETAIL",
            "WAITED",
            d = self.detail,
            t = self.waited
        ));
        s
    }

    fn row(&self, r: &Row<'_>, selected: bool, m: &Model, style: Style) -> Vec<Span<'static>> {
        let mark = if selected { "▸ " } else { "  " };
        // Cut in the middle, as a pane's title cuts it: ids of one task
        // differ at their ends (`…-extend-1`, `…-extend-2`).
        let id = padded(crate::cut::short_id(r.id, self.id), self.id);
        let mut s = format!("{mark}{id} ");
        s.push(' ');
        if let Some(h) = self.host {
            s.push_str(&clip_pad(r.host.unwrap_or("local"), h));
            s.push_str("  ");
        }
        s.push_str(&clip_pad(&r.detail, self.detail));
        s.push_str(&format!(
            "  {:>t$}  ",
            clock_ms(r.waited_ms),
            t = self.waited
        ));
        let mut spans = vec![Span::styled(s, style)];
        // A host that is down comes first: whatever the row says is as of
        // when it dropped, and no answer can be sent.
        let down = r.host.zip(r.host_down_since).map(|(host, since)| {
            format!(
                "{host} unreachable since {}",
                crate::clock::local_time_of_day(since)
            )
        });
        let answered = r.pane.answer_pending_on_screen();
        let subject = match (&r.pane.answering, down, &r.subject) {
            (_, Some(down), _) => down,
            (Some(a), _, _) if a.late => "sent, no reply yet…".to_owned(),
            (Some(_), _, _) => "answering…".to_owned(),
            (None, _, _) if answered => "answered; it has not gone on yet…".to_owned(),
            (None, _, Some(s)) => s.clone(),
            (None, _, None) => "…".to_owned(),
        };
        let subject = clip_pad(&subject, self.subject);
        // What the evidence says, not a dialog's subject, is told apart.
        let subject_style = if r.host_down_since.is_some() {
            style.patch(m.theme.error)
        } else if answered && r.pane.answering.is_none() {
            style.patch(m.theme.dim)
        } else if r.from_dialog || r.pane.answering.is_some() {
            style
        } else {
            style.patch(m.theme.dim)
        };
        spans.push(Span::styled(subject, subject_style));
        spans
    }
}

/// `text` cut to `width` characters (`…` at the cut) and padded to it.
fn clip_pad(text: &str, width: usize) -> String {
    padded(clip(text, width), width)
}

/// `text` padded with spaces to `width` characters.
fn padded(text: String, width: usize) -> String {
    let n = text.chars().count();
    format!("{text}{}", " ".repeat(width.saturating_sub(n)))
}

/// `text` cut to `width` characters, `…` at the cut.
fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut s: String = text.chars().take(width.saturating_sub(1)).collect();
    s.push('…');
    s
}

#[cfg(test)]
mod tests {
    use super::{unframe, wrap};

    fn rows(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_framed_dialog_loses_its_box_and_keeps_its_indentation() {
        let gemini = rows(&[
            "│ ?  Shell rm -rf build/cache [current working directory /w]     │",
            "│                                                                │",
            "│ Allow execution of: 'rm'?                                      │",
            "│                                                                │",
            "│ ● 1. Allow once                                                │",
            "│   2. Allow for this session                                    │",
        ]);
        assert_eq!(
            unframe(gemini),
            [
                "?  Shell rm -rf build/cache [current working directory /w]",
                "Allow execution of: 'rm'?",
                "● 1. Allow once",
                "  2. Allow for this session",
            ]
        );
        // Not all framed (a program's own `│` in a row): as they are.
        let plain = rows(&["Run this? │ y/n", "  > Yes"]);
        assert_eq!(unframe(plain.clone()), plain);
    }

    /// Gemini CLI 0.61.0's shell approval, as the live test's screen has
    /// it (the inner box's top and bottom are rules, left out before):
    /// the command's box goes too, its content indented under the rest.
    #[test]
    fn a_box_inside_the_dialogs_loses_its_sides() {
        let gemini = rows(&[
            "│ ? Shell  for i in 1 2 3; do echo step $i >> steps.txt; done          │",
            "│ │ for i in 1 2 3; do echo step $i >> steps.txt; done             │ │",
            "│ Allow execution of [Shell]?                                          │",
            "│ ● 1. Allow once                                                      │",
        ]);
        assert_eq!(
            unframe(gemini),
            [
                "? Shell  for i in 1 2 3; do echo step $i >> steps.txt; done",
                "  for i in 1 2 3; do echo step $i >> steps.txt; done",
                "Allow execution of [Shell]?",
                "● 1. Allow once",
            ]
        );
        // Not in a box of its own: a boxed row alone loses its sides.
        let boxed = rows(&["Run it?", "  │ make all │", "> Yes"]);
        assert_eq!(unframe(boxed), ["Run it?", "    make all", "> Yes"]);
    }

    #[test]
    fn long_text_wraps_between_words_and_says_when_it_was_cut() {
        assert_eq!(wrap("a bc def", 4, 3), ["a bc", "def"]);
        assert_eq!(wrap("abcdefghij", 4, 3), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("one two three four", 5, 2), ["one", "two…"]);
        assert_eq!(wrap("", 5, 2), Vec::<String>::new());
    }
}
