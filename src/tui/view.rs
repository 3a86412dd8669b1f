//! Drawing the model. Reads the model, writes a frame, decides nothing.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::{Alignment, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Wrap};
use tui_term::widget::{Cursor, PseudoTerminal};

use crate::client::human_ms;

use super::layout::{focus_rows, inner, placements_in};
use super::model::{Link, Mode, Model, NewStep, Pane};

pub fn view(m: &Model, f: &mut Frame<'_>, now: Instant) {
    let area = f.area();
    if let Mode::Focus(id) = &m.mode
        && let Some(p) = m.pane(id)
    {
        let rows = focus_rows(area.height);
        let top = Rect::new(area.x, area.y, area.width, rows);
        let v = p.term.view(rows, area.width);
        f.render_widget(PseudoTerminal::new(&v).cursor(cursor()), top);
        if rows < area.height {
            focus_bar(
                m,
                p,
                f,
                Rect::new(area.x, area.y + rows, area.width, 1),
                now,
            );
        }
        return;
    }
    // The frame's own size, not the model's: the terminal may have been
    // resized after the model last heard, and a pane drawn past the edge
    // would be a panic in ratatui.
    let place = placements_in(m, (area.width, area.height));
    if m.panes.is_empty() {
        empty(m, f, area);
    } else if place.rects.is_empty() {
        let msg = Paragraph::new(format!("no session matches '{}'", m.filter))
            .style(m.theme.dim)
            .alignment(Alignment::Center);
        f.render_widget(msg, Rect::new(0, area.height / 2, area.width, 1));
    }
    for (id, r) in &place.rects {
        if let Some(p) = m.pane(id) {
            // One pane's drawing failing (a widget's bug on a strange
            // screen) costs that pane, not the dashboard and the terminal.
            let r = *r;
            if crate::term::contain(|| pane(m, p, r, f, now)).is_none() {
                let msg = Paragraph::new(format!("{}: cannot draw this pane", p.id))
                    .style(m.theme.error)
                    .wrap(Wrap { trim: true });
                f.render_widget(Clear, r);
                f.render_widget(msg, r);
            }
        }
    }
    footer(m, f, area, place.page, place.pages);
    match &m.mode {
        Mode::ConfirmKill(id) => popup(
            m,
            f,
            "kill",
            &[
                Line::from(format!("Kill session '{id}'?")),
                Line::from(""),
                Line::from("SIGTERM now, SIGKILL after its grace period."),
                Line::from(vec![
                    key(m, "y"),
                    Span::raw(" kill   "),
                    key(m, "n"),
                    Span::raw(" keep"),
                ]),
            ],
        ),
        Mode::NewSession { step, id, command } => {
            // A long command shows its end, where the typing is.
            let room = usize::from(f.area().width.saturating_sub(18)).max(8);
            let tail = |text: &str| {
                let n = text.chars().count();
                if n <= room {
                    text.to_owned()
                } else {
                    let kept: String = text.chars().skip(n - (room - 1)).collect();
                    format!("…{kept}")
                }
            };
            let (id, command, dir) = (&tail(id), &tail(command), &tail(&m.new_dir));
            let cursor = |on: bool| if on { "▏" } else { "" };
            let (id_line, cmd_line) = match step {
                NewStep::Id => (format!("id:      {id}▏"), String::new()),
                NewStep::Command | NewStep::Dir => (
                    format!("id:      {id}"),
                    if command.is_empty() {
                        format!(
                            "command: {} (empty: {})",
                            cursor(*step == NewStep::Command),
                            m.shell
                        )
                    } else {
                        format!("command: {command}{}", cursor(*step == NewStep::Command))
                    },
                ),
            };
            let mut lines = vec![Line::from(id_line), Line::from(cmd_line)];
            if *step != NewStep::Id {
                let dir = if dir.is_empty() && *step != NewStep::Dir {
                    "(the dashboard's)"
                } else {
                    dir.as_str()
                };
                lines.push(Line::from(format!(
                    "dir:     {dir}{}",
                    cursor(*step == NewStep::Dir)
                )));
            }
            lines.push(Line::from(""));
            let mut hints = vec![key(m, "Enter")];
            if *step == NewStep::Id {
                hints.push(Span::raw(" next   "));
            } else {
                hints.push(Span::raw(" start   "));
                hints.push(key(m, "Tab"));
                hints.push(Span::raw(if *step == NewStep::Dir {
                    " command   "
                } else {
                    " directory   "
                }));
            }
            hints.push(key(m, "Esc"));
            hints.push(Span::raw(" cancel"));
            lines.push(Line::from(hints));
            popup(m, f, "new session", &lines);
        }
        Mode::Help => help(m, f),
        Mode::Explain(id) => explain(m, f, id, now),
        _ => {}
    }
}

/// The `e` overlay: the selected session's state, and the signals behind
/// it as its supervisor reported them.
fn explain(m: &Model, f: &mut Frame<'_>, id: &str, now: Instant) {
    let Some(p) = m.pane(id) else { return };
    let mut lines = vec![Line::from(vec![
        Span::styled(
            format!(" {} ", p.state_label().unwrap_or_else(|| "…".into())),
            m.theme.state(p.state()),
        ),
        Span::raw(format!(
            "  for {}",
            p.state_ms(now).map_or("?".into(), human_ms)
        )),
    ])];
    match &p.report {
        Some(r) if !p.ended() => {
            let mut facts = vec![format!("health: {}", r.health.name())];
            if let Some(agent) = &r.agent {
                facts.push(format!("agent: {agent}"));
            }
            lines.push(Line::from(facts.join("   ")));
            lines.push(Line::from(""));
            if r.signals.is_empty() {
                lines.push(Line::from(
                    "no signals: this classifier goes by output timing alone",
                ));
            }
            for s in r.signals.iter().take(8) {
                let text: String = crate::paths::sanitize(&s.text).chars().take(60).collect();
                lines.push(Line::from(vec![
                    Span::styled(format!("{:<8}", s.source.name()), m.theme.footer_key),
                    Span::raw(format!(" {}  ", s.rule)),
                    Span::styled(format!("{text:?}"), m.theme.dim),
                ]));
            }
            if !r.children.is_empty() {
                lines.push(Line::from(""));
                lines.push(Line::from("reported by the program:"));
            }
            for c in r.children.iter().take(6) {
                let title: String = crate::paths::sanitize(&c.title).chars().take(50).collect();
                lines.push(Line::from(vec![
                    Span::styled(format!("{:<8}", c.state), m.theme.footer_key),
                    Span::raw(format!(" {title}")),
                ]));
            }
        }
        _ if p.ended() => {
            let how = p
                .exit
                .map_or("it ended".to_owned(), |c| format!("exited with code {c}"));
            lines.push(Line::from(how));
        }
        _ => lines.push(Line::from("no state report from this session")),
    }
    lines.push(Line::from(""));
    let more = if p.ended() {
        format!("hm status {id} shows how it ended; r runs it again")
    } else {
        format!("hm explain {id} shows the whole evidence table")
    };
    lines.push(Line::from(more).style(m.theme.dim));
    popup(m, f, "why", &lines);
}

/// The focused session's bar: which session, its state, how to get back,
/// and how many others need you.
fn focus_bar(m: &Model, p: &Pane, f: &mut Frame<'_>, row: Rect, now: Instant) {
    let state = p.state_label().unwrap_or_else(|| "…".into());
    let timer = p
        .state_ms(now)
        .map_or(String::new(), |ms| format!(" {}", human_ms(ms)));
    let back = m.detach_key.map_or("no detach key".to_owned(), |k| {
        format!("{} back to the grid", crate::config::describe_key(k))
    });
    let others = m
        .panes
        .iter()
        .filter(|o| o.id != p.id && o.waiting())
        .count();
    let mut spans = vec![
        Span::styled(format!(" {} ", p.id), m.theme.footer_key),
        Span::styled(format!(" {state}{timer} "), m.theme.state(p.state())),
        Span::raw(format!("  {back}")),
    ];
    if others > 0 {
        let style = m
            .theme
            .state(Some(crate::classify::ProcessState::Waiting.as_byte()));
        spans.push(Span::raw("  "));
        spans.push(Span::styled(format!(" {others} need you "), style));
    }
    f.render_widget(Paragraph::new(Line::from(spans)).style(m.theme.footer), row);
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

fn key(m: &Model, k: &str) -> Span<'static> {
    Span::styled(k.to_string(), m.theme.footer_key)
}

fn empty(m: &Model, f: &mut Frame<'_>, area: Rect) {
    let lines = vec![
        Line::from("No sessions yet."),
        Line::from(""),
        Line::from(vec![
            Span::raw("Press "),
            key(m, "n"),
            Span::raw(" to start one here,"),
        ]),
        Line::from(match &m.socket_dir_flag {
            Some(dir) => format!("or run `hm run --socket-dir {dir} COMMAND` in any terminal."),
            None => "or run `hm run COMMAND` in any terminal.".to_string(),
        }),
    ];
    let h = lines.len() as u16;
    let p = Paragraph::new(lines)
        .alignment(Alignment::Center)
        .style(m.theme.dim);
    f.render_widget(
        p,
        Rect::new(0, area.height.saturating_sub(h) / 2, area.width, h),
    );
}

fn pane(m: &Model, p: &Pane, r: Rect, f: &mut Frame<'_>, now: Instant) {
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
    let bottom = match (&p.link, p.exit) {
        (_, Some(code)) => Span::styled(format!(" exited {code} "), m.theme.error),
        (Link::Problem(why), _) => Span::styled(format!(" {why} "), m.theme.error),
        (Link::Gone, _) => match p.orphan {
            Some(pid) => Span::styled(
                format!(" supervisor gone, pid {pid} runs on "),
                m.theme.error,
            ),
            None => Span::styled(" supervisor gone ", m.theme.error),
        },
        (Link::Connecting, _) => Span::styled(" connecting… ", m.theme.dim),
        (Link::Live, _) if p.unresponsive => Span::styled(" not responding ", m.theme.error),
        (Link::Live, _) => match p.idle_ms(now) {
            Some(ms) => Span::styled(format!(" idle {} ", human_ms(ms)), m.theme.dim),
            None => Span::raw(""),
        },
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
        .title_bottom(Line::from(bottom).alignment(Alignment::Right))
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
    let v = p.term.view(body.height, body.width);
    let cursor = cursor().visibility(selected && p.exit.is_none());
    f.render_widget(PseudoTerminal::new(&v).cursor(cursor), body);
    // A wide character in the last column would cover the border (the
    // terminal draws both its halves); it is cut, as the rest of the line.
    let last = body.width - 1;
    for row in 0..body.height {
        if v.wide_at(row, last) {
            f.buffer_mut()[(body.x + last, body.y + row)].set_symbol(" ");
        }
    }
}

/// The session's cursor, drawn in the cell's own colours: tui-term's
/// default paints it grey, which NO_COLOR forbids and a light background
/// hides.
fn cursor() -> Cursor {
    Cursor::default().style(ratatui::style::Style::new())
}

fn footer(m: &Model, f: &mut Frame<'_>, area: Rect, page: usize, pages: usize) {
    let row = Rect::new(0, area.height.saturating_sub(1), area.width, 1);
    let mut spans: Vec<Span<'static>> = Vec::new();
    if m.mode == Mode::Filter || !m.filter.is_empty() {
        spans.push(key(m, "/"));
        spans.push(Span::raw(format!(
            "{}{} ",
            m.filter,
            if m.mode == Mode::Filter { "▏" } else { "" }
        )));
    }
    let hints: &[(&str, &str)] = match &m.mode {
        Mode::Filter => &[("Enter", "keep"), ("Esc", "clear")],
        _ => &[
            ("←↓↑→", "move"),
            ("⏎", "focus"),
            ("x", "kill"),
            ("n", "new"),
            ("z", "zoom"),
            ("/", "filter"),
            ("⇥", "next"),
            ("?", "help"),
            ("q", "quit"),
        ],
    };
    let waiting = m.panes.iter().filter(|p| p.waiting()).count();
    if waiting > 0 {
        let style = m
            .theme
            .state(Some(crate::classify::ProcessState::Waiting.as_byte()));
        spans.push(Span::styled(format!(" {waiting} need you "), style));
        spans.push(Span::raw(" "));
    }
    // The notice goes before the hints: it says what just happened (a
    // session that could not start, say), and after them it would not fit
    // on an 80-column terminal.
    if let Some((text, _)) = &m.notice {
        spans.push(Span::styled(format!(" {text} "), m.theme.popup));
        spans.push(Span::raw(" "));
    }
    let right = if pages > 1 {
        // The leading space keeps it off a hint that fits exactly.
        format!(" page {}/{} ", page + 1, pages)
    } else {
        String::new()
    };
    // Hints that do not fit whole are left out, rather than cut off or
    // drawn over by the page number.
    let used: usize = spans.iter().map(Span::width).sum();
    let mut room = usize::from(area.width).saturating_sub(used + right.chars().count());
    // `? help` and `q quit` are kept first (without them a person is
    // stuck), then the others in order while they fit.
    let width = |(k, what): &(&str, &str)| k.chars().count() + what.chars().count() + 3;
    let essential = |i: usize| i + 2 >= hints.len();
    let mut shown = vec![false; hints.len()];
    for pass in [true, false] {
        for (i, h) in hints.iter().enumerate() {
            if essential(i) != pass || shown[i] {
                continue;
            }
            let w = width(h);
            if w.saturating_sub(2) > room {
                if pass {
                    continue;
                }
                break;
            }
            room = room.saturating_sub(w);
            shown[i] = true;
        }
    }
    for (i, (k, what)) in hints.iter().enumerate() {
        if shown[i] {
            spans.extend([key(m, k), Span::raw(format!(" {what}  "))]);
        }
    }
    f.render_widget(Paragraph::new(Line::from(spans)).style(m.theme.footer), row);
    if !right.is_empty() {
        let w = right.chars().count() as u16;
        f.render_widget(
            Paragraph::new(right).style(m.theme.footer),
            Rect::new(area.width.saturating_sub(w), row.y, w.min(area.width), 1),
        );
    }
}

fn popup(m: &Model, f: &mut Frame<'_>, title: &str, lines: &[Line<'static>]) {
    let area = f.area();
    let w = lines
        .iter()
        .map(|l| l.width() as u16)
        .max()
        .unwrap_or(10)
        .saturating_add(4)
        .min(area.width);
    let h = (lines.len() as u16 + 2).min(area.height);
    let r = Rect::new(
        area.width.saturating_sub(w) / 2,
        area.height.saturating_sub(h) / 2,
        w,
        h,
    );
    f.render_widget(Clear, r);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(m.theme.popup_border)
        .title(format!(" {title} "))
        .style(m.theme.popup);
    f.render_widget(
        Paragraph::new(lines.to_vec())
            .block(block)
            .wrap(Wrap { trim: false }),
        r,
    );
}

fn help(m: &Model, f: &mut Frame<'_>) {
    let detach = m
        .detach_key
        .map_or("(disabled)".to_string(), crate::config::describe_key);
    let rows: Vec<(String, &str)> = vec![
        ("←↓↑→ h j k l".into(), "move the selection"),
        (
            "Enter / double-click".into(),
            "focus: the session gets every key",
        ),
        (detach, "back from focus to the grid"),
        (
            "x".into(),
            "kill the selected session (asks first); clear an ended one",
        ),
        ("n".into(), "start a new session"),
        ("z / Esc".into(), "zoom the selected pane / unzoom"),
        ("+ / - / =".into(), "more, fewer, automatic columns"),
        ("PgUp / PgDn".into(), "previous / next page"),
        (
            "/".into(),
            "filter by id (Enter keeps it, Esc clears it, also later)",
        ),
        (
            "Tab".into(),
            "next session that needs you (waiting first, then finished)",
        ),
        ("e".into(), "why the selected session is in its state"),
        ("r".into(), "run an ended session again (x forgets it)"),
        ("s".into(), "sort by state (needs you first) / by id"),
        ("q / Ctrl-C".into(), "quit (sessions keep running)"),
    ];
    let lines: Vec<Line<'static>> = rows
        .into_iter()
        .map(|(k, what)| {
            Line::from(vec![
                Span::styled(format!("{k:<22}"), m.theme.footer_key),
                Span::raw(what.to_string()),
            ])
        })
        .collect();
    popup(m, f, "keys", &lines);
}
