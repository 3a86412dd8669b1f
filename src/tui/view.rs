//! Drawing the model. Reads the model, writes a frame, decides nothing.
//!
//! This file lays out the screen: the focused session, or the grid of
//! panes with the footer and whichever overlay the mode calls for. What is
//! drawn there is one idea per file: `pane` (a session in the grid),
//! `history` (a pane's copy mode over its screen), `bar` (the footer and
//! the focused session's bar), `popup` (the overlays: kill, new
//! session, help, why) and `inbox` (who needs you).

mod bar;
mod clusters;
mod history;
mod inbox;
mod pane;
mod popup;
mod title;

pub use popup::help_scroll_max;

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::{Alignment, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};
use tui_term::widget::PseudoTerminal;

use super::layout::{focus_rows, placements_in};
use super::model::{Mode, Model};

pub fn view(m: &Model, f: &mut Frame<'_>, now: Instant) {
    let area = f.area();
    if let Mode::Focus(id) = &m.mode
        && let Some(p) = m.pane(id)
    {
        let rows = focus_rows(area.height);
        let top = Rect::new(area.x, area.y, area.width, rows);
        let v = history::view(p, rows, area.width);
        let cursor = pane::cursor().visibility(p.copy.is_none());
        f.render_widget(PseudoTerminal::new(&v).cursor(cursor), top);
        // As a pane's: a session wider than the dashboard (held by a
        // terminal attached elsewhere) is cut at the edge, not wrapped.
        pane::edges(m, p, &v, top, f);
        history::overlay(m, p, &v, top, top.y, false, f);
        if rows < area.height {
            bar::focus_bar(
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
            if crate::term::contain(|| pane::pane(m, p, r, f, now)).is_none() {
                let msg = Paragraph::new(format!("{}: cannot draw this pane", p.id))
                    .style(m.theme.error)
                    .wrap(Wrap { trim: true });
                f.render_widget(Clear, r);
                f.render_widget(msg, r);
            }
        }
    }
    bar::footer(m, f, area, place.page, place.pages, place.grid.per_page());
    match &m.mode {
        Mode::ConfirmKill(id) => popup::confirm_kill(m, f, id),
        Mode::ConfirmForget(id) => popup::confirm_forget(m, f, id),
        Mode::ConfirmRestart(id) => popup::confirm_restart(m, f, id),
        Mode::NewSession { step, id, command } => popup::new_session(m, f, *step, id, command),
        Mode::Help => popup::help(m, f),
        Mode::Explain(id) => popup::explain(m, f, id, now),
        Mode::Inbox => inbox::inbox(m, f, now),
        _ => {}
    }
}

/// The style of a pane's state badge: an ended session's says whether it
/// ended well (`exited 0`, killed by a person) or failed; an agent whose
/// last turn an error ended (`idle · error`) is in a failure's colours,
/// not a healthy rest's.
fn badge_style(m: &Model, p: &crate::tui::model::Pane) -> ratatui::style::Style {
    let failed_turn = p.state() == Some(crate::classify::ProcessState::Idle.as_byte())
        && p.report
            .as_ref()
            .is_some_and(|r| r.detail == Some(crate::detect::Detail::Error));
    if p.ended_well() {
        m.theme.ended_well
    } else if failed_turn {
        m.theme
            .state(Some(crate::classify::ProcessState::Dead.as_byte()))
    } else {
        m.theme.state(p.state())
    }
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
