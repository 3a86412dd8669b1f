//! The overlays drawn over the grid: the kill confirmation, the new
//! session form, the key help and the `e` explanation, all in one framed
//! box ([`popup`]). Separate from the grid because each is drawn only in
//! its own mode and reads the model for nothing else.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::key;
use crate::client::human_ms;
use crate::tui::model::{Model, NewStep};

/// The kill confirmation.
pub(super) fn confirm_kill(m: &Model, f: &mut Frame<'_>, id: &str) {
    popup(
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
    );
}

/// The new session form: the id, then the command and the directory.
pub(super) fn new_session(m: &Model, f: &mut Frame<'_>, step: NewStep, id: &str, command: &str) {
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
    let label = &tail(&m.new_label);
    let cursor = |on: bool| if on { "▏" } else { "" };
    let (id_line, cmd_line) = match step {
        // Other machines take `host:id`.
        NewStep::Id if !m.hosts.is_empty() => (
            format!("id:      {id}▏  (host:id on {})", m.hosts.join(", ")),
            String::new(),
        ),
        NewStep::Id => (format!("id:      {id}▏"), String::new()),
        NewStep::Command | NewStep::Dir | NewStep::Label => (
            format!("id:      {id}"),
            if command.is_empty() {
                format!(
                    "command: {} (empty: {})",
                    cursor(step == NewStep::Command),
                    m.shell
                )
            } else {
                format!("command: {command}{}", cursor(step == NewStep::Command))
            },
        ),
    };
    let mut lines = vec![Line::from(id_line), Line::from(cmd_line)];
    if step != NewStep::Id {
        let dir = if dir.is_empty() && step != NewStep::Dir {
            "(the dashboard's)"
        } else {
            dir.as_str()
        };
        lines.push(Line::from(format!(
            "dir:     {dir}{}",
            cursor(step == NewStep::Dir)
        )));
        let label = if label.is_empty() && step != NewStep::Label {
            "(none)"
        } else {
            label.as_str()
        };
        lines.push(Line::from(format!(
            "label:   {label}{}",
            cursor(step == NewStep::Label)
        )));
    }
    lines.push(Line::from(""));
    let mut hints = vec![key(m, "Enter")];
    if step == NewStep::Id {
        hints.push(Span::raw(" next   "));
    } else {
        hints.push(Span::raw(" start   "));
        hints.push(key(m, "Tab"));
        hints.push(Span::raw(match step {
            NewStep::Dir => " label   ",
            NewStep::Label => " command   ",
            _ => " directory   ",
        }));
    }
    hints.push(key(m, "Esc"));
    hints.push(Span::raw(" cancel"));
    lines.push(Line::from(hints));
    popup(m, f, "new session", &lines);
}

/// The `e` overlay: the selected session's state, and the signals behind
/// it as its supervisor reported them.
pub(super) fn explain(m: &Model, f: &mut Frame<'_>, id: &str, now: Instant) {
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

pub(super) fn help(m: &Model, f: &mut Frame<'_>) {
    let detach = m
        .detach_key
        .map_or("(disabled)".to_string(), crate::config::describe_key);
    let copy = m
        .copy_key
        .map_or("(no copy key)".to_string(), crate::config::describe_key);
    let rows: Vec<(String, &str)> = vec![
        ("←↓↑→ h j k l".into(), "move the selection"),
        (
            "Enter / double-click".into(),
            "focus: the session gets every key",
        ),
        (
            "a".into(),
            "raw attach: the real terminal for the session (the detach key comes back)",
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
        (
            "Shift-PgUp / PgDn".into(),
            "scroll the selected pane's history (the wheel: the pane under it)",
        ),
        (
            "[".into(),
            "copy mode: hjkl, / ? search, n N, v select, y copy, q leave",
        ),
        (copy, "in focus: copy mode (Shift-PgUp and the wheel too)"),
        ("e".into(), "why the selected session is in its state"),
        ("r".into(), "run an ended session again (x forgets it)"),
        (
            "R".into(),
            "restore the selected lost session, or every one (hm restore)",
        ),
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
