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

use crate::client::human_ms;
use crate::tui::layout::inner;
use crate::tui::model::{Link, Model, Pane};

pub(super) fn pane(m: &Model, p: &Pane, r: Rect, f: &mut Frame<'_>, now: Instant) {
    let selected = m.selected.as_deref() == Some(p.id.as_str());
    let border = if selected {
        m.theme.border_selected
    } else if p.waiting() {
        // Waiting is the strongest call: the pane's frame takes the
        // waiting state's own colour.
        m.theme
            .state(Some(crate::classify::ProcessState::Waiting.as_byte()))
    } else if p.attention {
        m.theme.border_attention
    } else {
        m.theme.border
    };
    let state = p.state();
    let badge = match (state, p.state_ms(now)) {
        _ if p.orphan.is_some() => " orphaned ".to_string(),
        _ if p.lost.is_some() => " lost ".to_string(),
        (Some(_), Some(ms)) => {
            format!(" {} {} ", p.state_label().unwrap_or_default(), human_ms(ms))
        }
        (Some(_), _) => format!(" {} ", p.state_label().unwrap_or_default()),
        (None, _) => " … ".to_string(),
    };
    let mut title = vec![Span::styled(format!(" {} ", p.id), m.theme.title)];
    if let Some(label) = &p.label {
        title.push(Span::styled(format!("{label} "), m.theme.dim));
    }
    if p.attention {
        title.push(Span::styled("● ", m.theme.border_attention));
    }
    // Another machine's session, while that machine is down.
    let host_down =
        crate::remote::split_target(&p.id).and_then(|(host, _)| m.host_problems.get(host));
    let bottom = match (&p.link, p.exit) {
        _ if host_down.is_some() => {
            Span::styled(format!(" {} ", host_down.map_or("", |s| s)), m.theme.error)
        }
        (_, Some(code)) => Span::styled(format!(" exited {code} "), m.theme.error),
        _ if p.lost == Some(true) => Span::styled(" lost (restartable): R ", m.theme.error),
        _ if p.lost.is_some() => Span::styled(" lost: hm restore says why ", m.theme.error),
        (Link::Problem(why), _) => Span::styled(format!(" {why} "), m.theme.error),
        (Link::Gone, _) => match p.orphan {
            Some(pid) => Span::styled(
                format!(" supervisor gone, pid {pid} runs on "),
                m.theme.error,
            ),
            None => Span::styled(" supervisor gone ", m.theme.error),
        },
        (Link::Connecting, _) => Span::styled(" connecting… ", m.theme.dim),
        (Link::Live, _) if p.unresponsive() => Span::styled(" not responding ", m.theme.error),
        (Link::Live, _) => match p.idle_ms(now) {
            Some(ms) => Span::styled(format!(" idle {} ", human_ms(ms)), m.theme.dim),
            None => Span::raw(""),
        },
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
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(if selected {
            BorderType::Thick
        } else {
            BorderType::Rounded
        })
        .border_style(border)
        .title(Line::from(title))
        .title(Line::from(Span::styled(badge, m.theme.state(state))).alignment(Alignment::Right))
        .title_bottom(bottom.alignment(Alignment::Right))
        .title_bottom(
            Line::from(Span::styled(
                short_dir(p.workdir.as_deref(), usize::from(r.width) / 2),
                m.theme.dim,
            ))
            .alignment(Alignment::Left),
        );
    f.render_widget(block, r);
    let body = inner(r);
    if body.width == 0 || body.height == 0 {
        return;
    }
    let v = super::history::view(p, body.height, body.width);
    // Scrolled back, the program's cursor is not among the rows shown.
    let cursor = cursor().visibility(selected && p.exit.is_none() && p.copy.is_none());
    f.render_widget(PseudoTerminal::new(&v).cursor(cursor), body);
    super::clusters::join(f.buffer_mut(), body);
    // A wide character in the last column would cover the border (the
    // terminal draws both its halves); it is cut, as the rest of the line.
    let last = body.width - 1;
    for row in 0..body.height {
        if v.wide_at(row, last) {
            f.buffer_mut()[(body.x + last, body.y + row)].set_symbol(" ");
        }
    }
    super::history::overlay(m, p, &v, body, f);
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
    let kept: String = dir.chars().skip(n + 4 - room).collect();
    format!(" …{kept} ")
}

/// The session's cursor, drawn in the cell's own colours: tui-term's
/// default paints it grey, which NO_COLOR forbids and a light background
/// hides.
pub(super) fn cursor() -> Cursor {
    Cursor::default().style(ratatui::style::Style::new())
}
