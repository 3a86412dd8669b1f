//! The one-line bars at the bottom of the screen: the grid's footer (key
//! hints, sessions that need you, the notice, the page) and the focused
//! session's bar. Separate because fitting hints into the width is its own
//! small layout problem.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::key;
use crate::client::clock_ms;
use crate::client::view::need_you;
use crate::config::Action;
use crate::tui::inbox;
use crate::tui::model::{Link, Mode, Model, Pane};

/// The most of a label the focus bar shows.
const LABEL_MAX: usize = 24;

/// Columns of the keys while a label is typed (`Enter set  Esc cancel  `).
const LABEL_KEYS: usize = 22;

/// The fewest columns a focused session's id is cut to.
const MIN_ID: usize = 10;

/// The focused session's bar: which session, its state, how to get back,
/// and how many others need you.
pub(super) fn focus_bar(m: &Model, p: &Pane, f: &mut Frame<'_>, row: Rect, now: Instant) {
    // A session that stopped answering says so where its state was, as its
    // pane does: focus showed its last state, the timer running on, over
    // a screen that no longer changed.
    let problem = if m.host_down(p).is_some() {
        super::title::badges(m, p, now).into_iter().next()
    } else {
        match &p.link {
            Link::Problem(why) => Some(why.clone()),
            Link::Gone if p.exit.is_none() && p.lost.is_none() => Some("supervisor gone".into()),
            Link::Live if p.unresponsive() => Some("not responding".into()),
            _ => None,
        }
    };
    let state = problem
        .clone()
        .or_else(|| p.state_label())
        .unwrap_or_else(|| "…".into());
    let mut timer = p
        .state_ms(now)
        .filter(|_| problem.is_none())
        .map_or(String::new(), |ms| format!(" {}", clock_ms(ms)));
    // Entered from the inbox, the detach key goes back there.
    let to = if m.inbox.after_focus {
        "the inbox"
    } else {
        "the grid"
    };
    let mut back = m.detach_key.map_or("no detach key".to_owned(), |k| {
        format!("{} back to {to}", crate::config::describe_key(k))
    });
    let mut waiting: Vec<&Pane> = m
        .panes
        .iter()
        .filter(|o| o.id != p.id && o.waiting())
        .collect();
    waiting.sort_by_key(|o| o.waiting_since);
    let others = waiting.len();
    let mut need_text = (others > 0).then(|| format!(" {} ", need_you(others)));
    // A terminal attached elsewhere holds the session's size, or another
    // dashboard's focus took it: focus shows it at that size, not the
    // dashboard's, and says why (a key here takes it back from the
    // second).
    let mut held = match (p.held || p.taken, p.session_size) {
        (true, Some(s)) => format!(" {}x{} held ", s.cols, s.rows),
        _ => String::new(),
    };
    // The id is cut before the state and the way back are: without the
    // detach key on screen a person does not know how to leave; nor is
    // the count of those who need you cut into (`1 needs yo`). Where even
    // a cut id leaves no room, the way back says less (`Ctrl-\ back`),
    // then the held size goes, then the state's timer, then the count of
    // others (the bell and the notifications still call): the row is
    // never cut in the middle of a word (`1 n` at 40 columns).
    let kept = |back: &str, held: &str, timer: &str, need: Option<&String>| {
        [&state, timer, back, held]
            .iter()
            .map(|s| s.chars().count())
            .sum::<usize>()
            + need.map_or(0, |n| n.chars().count() + 2)
            + 6
    };
    let width = usize::from(row.width);
    let too_wide = |back: &str, held: &str, timer: &str, need: Option<&String>| {
        kept(back, held, timer, need) + MIN_ID > width
    };
    if too_wide(&back, &held, &timer, need_text.as_ref())
        && let Some(k) = m.detach_key
    {
        back = format!("{} back", crate::config::describe_key(k));
    }
    if too_wide(&back, &held, &timer, need_text.as_ref()) {
        held.clear();
    }
    if too_wide(&back, &held, &timer, need_text.as_ref()) {
        timer.clear();
    }
    if too_wide(&back, &held, &timer, need_text.as_ref()) {
        need_text = None;
    }
    let kept = kept(&back, &held, &timer, need_text.as_ref());
    let id = crate::cut::short_id(&p.id, width.saturating_sub(kept).max(MIN_ID));
    let mut spans = vec![Span::styled(format!(" {id} "), m.theme.footer_key)];
    // The label, a person's name for it, where it fits beside what the
    // bar must say (the state and the way back): cut to a few words.
    if let Some(label) = &p.label {
        let label: String = if label.chars().count() > LABEL_MAX {
            let mut cut: String = label.chars().take(LABEL_MAX - 1).collect();
            cut.push('…');
            cut
        } else {
            label.clone()
        };
        let needed = [&id, &label, &state, &timer, &back, &held]
            .iter()
            .map(|s| s.chars().count())
            .sum::<usize>()
            + need_text.as_ref().map_or(0, |n| n.chars().count() + 2)
            + 10;
        // A space after it too: without colour, `prod deploy gate
        // waiting · input` read as one run of words.
        if needed < usize::from(row.width) {
            spans.push(Span::styled(format!(" {label} "), m.theme.dim));
        }
    }
    let badge = if problem.is_some() {
        m.theme.error
    } else {
        super::badge_style(m, p)
    };
    spans.push(Span::styled(format!(" {state}{timer} "), badge));
    if !held.is_empty() {
        spans.push(Span::styled(held, m.theme.dim));
    }
    if let Some(copy) = p.copy.as_ref().filter(|c| c.takes_keys()) {
        // Copy mode has the keys: say so, and what they do.
        spans.push(Span::raw("  "));
        let used: usize = spans.iter().map(Span::width).sum();
        let room = usize::from(row.width).saturating_sub(used);
        spans.extend(copy_hints(m, copy.status(), room));
        f.render_widget(Paragraph::new(Line::from(spans)).style(m.theme.footer), row);
        return;
    }
    spans.push(Span::raw(format!("  {back}")));
    // The others who need you outrank the history's hint: at 80 columns
    // there is not room for both after a long state.
    let need = need_text.map(|text| {
        let style = m
            .theme
            .state(Some(crate::classify::ProcessState::Waiting.as_byte()));
        Span::styled(text, style)
    });
    let used: usize =
        spans.iter().map(Span::width).sum::<usize>() + need.as_ref().map_or(0, |n| n.width() + 2);
    if let Some(k) = m.copy_key {
        let hint = format!("  {} history", crate::config::describe_key(k));
        if used + hint.chars().count() <= usize::from(row.width) {
            spans.push(Span::raw(hint));
        }
    }
    if let Some(mut need) = need {
        // Who, the longest waiting first, where the row has room for
        // their ids: `2 need you` alone left the person to guess.
        let ids: Vec<&str> = waiting.iter().map(|o| o.id.as_str()).collect();
        let named = format!(" {}: {} ", need_you(others), ids.join(", "));
        let room = usize::from(row.width).saturating_sub(2);
        if spans.iter().map(Span::width).sum::<usize>() + named.chars().count() <= room {
            need.content = named.into();
        }
        spans.push(Span::raw("  "));
        spans.push(need);
    }
    f.render_widget(Paragraph::new(Line::from(spans)).style(m.theme.footer), row);
}

/// Copy mode's line: the search being typed or what the last key came
/// to, then what the keys do, as many as fit in `width` (`q leave` last
/// but always).
fn copy_hints(m: &Model, status: Option<String>, width: usize) -> Vec<Span<'static>> {
    let mut spans = vec![Span::styled(" copy ", m.theme.footer_key), Span::raw(" ")];
    if let Some(text) = status {
        let cursor = if text.starts_with(['/', '?']) {
            "▏"
        } else {
            ""
        };
        spans.push(Span::styled(
            format!(" {} ", crate::paths::sanitize(&text)),
            m.theme.popup,
        ));
        spans.push(Span::raw(format!("{cursor}  ")));
    }
    let hints = [
        ("hjkl", "move"),
        ("v", "select"),
        ("y", "copy"),
        ("/ ?", "search"),
        ("n N", "next"),
        // Last: where the footer is narrow, these go first.
        ("w b e", "word"),
        ("g G", "top, end"),
    ];
    let leave = ("q", "leave");
    let w = |(k, what): (&str, &str)| k.chars().count() + what.chars().count() + 3;
    let used: usize = spans.iter().map(Span::width).sum();
    let mut room = width.saturating_sub(used + w(leave));
    for h in hints.into_iter() {
        if w(h) > room {
            continue;
        }
        room -= w(h);
        spans.extend([key(m, h.0), Span::raw(format!(" {}  ", h.1))]);
    }
    spans.extend([key(m, leave.0), Span::raw(format!(" {}", leave.1))]);
    spans
}

/// The grid's hints, with the keys in effect; an action left without a
/// key has none.
fn grid_hints(m: &Model) -> Vec<(String, &'static str)> {
    let k = |a: Action| m.keys.label(a);
    // The four directions in one hint when each is one character (`←↓↑→`).
    let dirs: Option<Vec<String>> = [Action::Left, Action::Down, Action::Up, Action::Right]
        .into_iter()
        .map(k)
        .collect();
    let moves = dirs.map(|d| {
        if d.iter().all(|s| s.chars().count() == 1) {
            d.concat()
        } else {
            d.join("/")
        }
    });
    // A pane scrolled back says how to get back to its live screen.
    let scrolled = m
        .selected
        .as_deref()
        .and_then(|id| m.pane(id))
        .is_some_and(|p| p.copy.is_some());
    // No pane shown (none yet, or a filter that matches none): nothing to
    // move over, focus, kill, zoom or read back.
    // Looked at once: `visible` filters and sorts every pane.
    let any = !m.visible().is_empty();
    let shown = |key: Option<String>| key.filter(|_| any);
    // Zoomed, the same key goes back to the grid.
    let zoom = if m.zoomed().is_some() {
        (k(Action::Zoom), "unzoom")
    } else {
        (shown(k(Action::Zoom)), "zoom")
    };
    [
        (k(Action::Back).filter(|_| scrolled), "live"),
        (shown(moves), "move"),
        (shown(k(Action::Focus)), "focus"),
        (shown(k(Action::Kill)), "kill"),
        (k(Action::New), "new"),
        zoom,
        (k(Action::Filter), "filter"),
        (k(Action::Next), "next"),
        (shown(k(Action::CopyMode)), "copy"),
        (k(Action::Help), "help"),
        (k(Action::Quit), "quit"),
    ]
    .into_iter()
    .filter_map(|(key, what)| Some((key?, what)))
    .collect()
}

/// Which footer hints go first when not all fit: the last two of any
/// list (`? help  q quit`, `Esc close`); while a session needs you, the
/// key that goes to it (at 80 columns with two pages, `⇥ next` went
/// first, and `1 needs you ... W on 1` said nothing of how to get there
/// but the inbox); then what acts on the selected session and the way
/// back from a zoom (at 80 columns a zoomed pane gave no hint of how to
/// leave it); then the rest.
fn hint_rank(what: &str, last_two: bool, calls: bool) -> u8 {
    match what {
        _ if last_two => 0,
        "next" if calls => 1,
        "live" | "focus" | "kill" | "new" | "unzoom" | "approve" | "deny" | "always" => 2,
        _ => 3,
    }
}

pub(super) fn footer(
    m: &Model,
    f: &mut Frame<'_>,
    area: Rect,
    page: usize,
    pages: usize,
    per_page: usize,
) {
    let row = Rect::new(0, area.height.saturating_sub(1), area.width, 1);
    let copying = m
        .selected
        .as_deref()
        .and_then(|id| m.pane(id))
        .and_then(|p| p.copy.as_ref())
        .filter(|c| c.takes_keys() && matches!(m.mode, Mode::Grid | Mode::Zoom(_)));
    if let Some(copy) = copying {
        let spans = copy_hints(m, copy.status(), usize::from(area.width));
        f.render_widget(Paragraph::new(Line::from(spans)).style(m.theme.footer), row);
        return;
    }
    let mut spans: Vec<Span<'static>> = Vec::new();
    if m.mode == Mode::Filter || !m.filter.is_empty() {
        spans.push(key(m, "/"));
        spans.push(Span::raw(format!(
            "{}{} ",
            m.filter,
            if m.mode == Mode::Filter { "▏" } else { "" }
        )));
    }
    let waiting = m.panes.iter().filter(|p| p.waiting()).count();
    // The label being typed, where the filter is typed: the session's id
    // (cut in its middle, as elsewhere) and the end of the text, the
    // cursor after it, in what the keys and the count of those who need
    // you leave (a long one pushed the cursor and `Enter set` off the row).
    if let Mode::Label { id, text } = &m.mode {
        let id = crate::cut::short_id(id, MIN_ID * 2);
        let head = format!(" label {id} ");
        let need = if waiting > 0 {
            need_you(waiting).chars().count() + 3
        } else {
            0
        };
        let room = usize::from(area.width)
            .saturating_sub(head.chars().count() + need + LABEL_KEYS + 3)
            .max(4);
        // What is being typed is at its end.
        let text = crate::cut::start(&crate::paths::sanitize(text), room);
        spans.push(Span::styled(head, m.theme.footer_key));
        spans.push(Span::raw(format!(" {text}▏ ")));
    }
    let hints: Vec<(String, &str)> = match &m.mode {
        Mode::Filter => vec![("Enter".into(), "keep"), ("Esc".into(), "clear")],
        Mode::Label { .. } => vec![("Enter".into(), "set"), ("Esc".into(), "cancel")],
        // Nothing to answer, focus or move over.
        Mode::Inbox if waiting == 0 => vec![("Esc".into(), "close")],
        // Any other key keeps it.
        Mode::ConfirmKill(_) => vec![("y".into(), "kill"), ("n".into(), "keep")],
        Mode::ConfirmForget(_) => vec![("y".into(), "forget"), ("n".into(), "keep")],
        Mode::ConfirmRestart(_) => vec![("y".into(), "run"), ("n".into(), "keep")],
        // The form's keys, not the grid's (it offered `x kill` and `n new`).
        Mode::NewSession {
            step: crate::tui::model::NewStep::Id,
            ..
        } => vec![("Enter".into(), "next"), ("Esc".into(), "cancel")],
        Mode::NewSession { step, .. } => vec![
            ("Enter".into(), "start"),
            ("Tab".into(), crate::tui::form::after_tab(*step)),
            ("Esc".into(), "cancel"),
        ],
        Mode::Inbox => {
            // `y` and `n` only where the selected dialog has keys for
            // them: a question with none, or no dialog at all, is
            // answered in focus.
            let dialog = m
                .inbox
                .selected
                .as_deref()
                .and_then(|id| m.pane(id))
                .and_then(|p| p.dialog.as_ref());
            let mut hints = Vec::new();
            let stopped = m
                .inbox
                .selected
                .as_deref()
                .and_then(|id| m.pane(id))
                .is_some_and(crate::tui::model::Pane::stopped);
            if stopped {
                hints.push(("y".into(), "continue"));
            }
            hints.extend(dialog.map(inbox::offered).unwrap_or_default());
            hints.extend([
                ("⏎".into(), "focus"),
                ("↑↓".into(), "move"),
                ("Esc".into(), "close"),
            ]);
            hints
        }
        _ => grid_hints(m),
    };
    let hints: Vec<(&str, &str)> = hints.iter().map(|(k, w)| (k.as_str(), *w)).collect();
    // Always there when someone waits, with the key that lists them: the
    // strongest call, before the notice and the hints. Not in the inbox,
    // whose title counts them: at 80 columns it pushed out `1-3 choose`.
    if waiting > 0 && m.mode != Mode::Inbox {
        let style = m
            .theme
            .state(Some(crate::classify::ProcessState::Waiting.as_byte()));
        spans.push(Span::styled(format!(" {} ", need_you(waiting)), style));
        // Not while text is typed: the key would be typed.
        let typing = matches!(m.mode, Mode::Filter | Mode::Label { .. });
        match m.keys.label(Action::Inbox).filter(|_| !typing) {
            Some(k) => spans.extend([Span::raw(" "), key(m, &k), Span::raw(" inbox  ")]),
            None => spans.push(Span::raw(" ")),
        }
    }
    // A host that is down with no pane to say so (down since the
    // dashboard started, or with no sessions): its name stays here, where
    // its notice said it once and went.
    let mut unseen: Vec<&str> = m
        .hosts_down
        .keys()
        .map(String::as_str)
        .filter(|h| {
            !m.panes
                .iter()
                .any(|p| crate::remote::split_target(&p.id).is_some_and(|(host, _)| host == *h))
        })
        .collect();
    unseen.sort_unstable();
    if !unseen.is_empty() {
        let names = unseen
            .iter()
            .map(|h| crate::paths::sanitize(h))
            .collect::<Vec<_>>()
            .join(", ");
        spans.push(Span::styled(
            format!(" {names} unreachable "),
            m.theme.error,
        ));
        spans.push(Span::raw(" "));
    }
    let lost = crate::tui::lost::restartable(m);
    if lost > 0
        && let Some(k) = m.keys.label(Action::Restore)
    {
        spans.extend([key(m, &k), Span::raw(format!(" restore {lost} lost  "))]);
    }
    // The grid's page, where the grid is what is shown (the inbox said
    // `page 1/2` of a list that has no pages).
    let on_grid = matches!(m.mode, Mode::Grid | Mode::Filter) || m.mode.confirming().is_some();
    let right = if pages > 1 && on_grid {
        // Two spaces before it, as between hints: a hint that fits with
        // none of its own after it read `q quit page 1/2`. With the pages
        // where others wait: `1 needs you` did not say where.
        // And where news not looked at is (`●`: work finished, a failure):
        // a session that failed while the dashboard was closed sat on
        // page 2 with nothing on page 1 to say so.
        let ids = m.visible_ids();
        let pages_of = |which: &dyn Fn(&Pane) -> bool| {
            let mut on: Vec<usize> = ids
                .iter()
                .enumerate()
                .filter(|(_, id)| m.pane(id).is_some_and(which))
                .map(|(i, _)| i / per_page.max(1))
                .filter(|p| *p != page)
                .collect();
            on.dedup();
            on.iter()
                .map(|p| (p + 1).to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        let waiting = pages_of(&Pane::waiting);
        let news = pages_of(&|p: &Pane| p.attention && !p.waiting());
        let mut text = format!("  page {}/{}", page + 1, pages);
        for (mark, on) in [("W", waiting), ("●", news)] {
            if !on.is_empty() {
                text.push_str(&format!(", {mark} on {on}"));
            }
        }
        text.push(' ');
        text
    } else {
        String::new()
    };
    // The notice goes before the hints: it says what just happened (a
    // session that could not start, say), and after them it would not fit
    // on an 80-column terminal. One that would leave no room for the last
    // two hints (`? help  q quit`, `Esc cancel`) goes whole on rows of its
    // own above the footer: in it, it took the whole row, every key with
    // it, and cut down to fit it lost the end of what went wrong.
    let in_form = matches!(m.mode, Mode::NewSession { .. });
    // The inbox says what an answer came to under its list: the same words
    // in the footer said it twice, and at 80 columns, wrapped above the
    // footer, they covered the box's last rows.
    let in_box =
        |text: &str| m.mode == Mode::Inbox && m.inbox.said.as_ref().is_some_and(|s| s.text == text);
    let mut above = None;
    // The last two hints, each with its spaces: what the footer keeps.
    let kept: usize = hints
        .iter()
        .rev()
        .take(2)
        .map(|(k, w)| k.chars().count() + w.chars().count() + 3)
        .sum();
    // A question asked now comes before an older notice: at 80 columns the
    // one left by a kill cut off the next question's `n keep`.
    let asking = m.mode.confirming().is_some();
    if let Some((text, _)) = m
        .notice
        .as_ref()
        .filter(|(t, _)| !in_form && !asking && !in_box(t))
    {
        let used: usize = spans.iter().map(Span::width).sum();
        let room = usize::from(area.width)
            .saturating_sub(used + kept + right.chars().count() + 3)
            .max(12);
        if text.chars().count() > room {
            above = Some(text.as_str());
        } else {
            spans.push(Span::styled(format!(" {text} "), m.theme.popup));
            spans.push(Span::raw(" "));
        }
    }
    // The question, with the session it is about, beside its keys: the
    // footer said only `y kill  n keep`, and a popup over a grid of ten
    // is easy to miss.
    if let Some(id) = m.mode.confirming() {
        let id = crate::paths::sanitize(id);
        let question = match m.mode {
            Mode::ConfirmKill(_) => format!("kill '{id}'?"),
            Mode::ConfirmRestart(_) => format!("run '{id}' again?"),
            _ => format!("forget '{id}'?"),
        };
        spans.push(Span::styled(format!(" {question} "), m.theme.popup));
        spans.push(Span::raw(" "));
    }
    // Hints that do not fit whole are left out, rather than cut off or
    // drawn over by the page number; the page number goes before the
    // last two hints do (at 40 columns it pushed out `q quit`).
    let used: usize = spans.iter().map(Span::width).sum();
    let right = if used + kept + right.chars().count() > usize::from(area.width) + 2 {
        String::new()
    } else {
        right
    };
    let mut room = usize::from(area.width).saturating_sub(used + right.chars().count());
    // Kept first: `? help` and `q quit` (without them a person is stuck),
    // then what acts on the selected session, then the rest in order while
    // they fit, shown in their own order. After a notice at 80 columns the
    // arrows went first and `⏎ focus`, `x kill`, `n new` with them.
    let width = |(k, what): &(&str, &str)| k.chars().count() + what.chars().count() + 3;
    // Within a rank, in order until one does not fit: at 40 columns the
    // inbox showed `n deny` without `y approve`, which did not fit.
    let rank = |i: usize| hint_rank(hints[i].1, i + 2 >= hints.len(), waiting > 0);
    let mut order: Vec<usize> = (0..hints.len()).collect();
    order.sort_by_key(|&i| (rank(i), i));
    let mut shown = vec![false; hints.len()];
    let mut full: Option<u8> = None;
    for i in order {
        let w = width(&hints[i]);
        if full == Some(rank(i)) {
            continue;
        }
        if w.saturating_sub(2) > room {
            full = Some(rank(i));
            continue;
        }
        room = room.saturating_sub(w);
        shown[i] = true;
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
    if let Some(text) = above {
        notice_above(m, f, row, text);
    }
}

/// Most rows a notice too long for the footer takes above it.
const NOTICE_ROWS: usize = 3;

/// A notice too long for the footer, whole (up to [`NOTICE_ROWS`] rows),
/// over the bottom rows of the grid just above `footer`, for as long as
/// the notice lasts. A rule above it sets it apart: without one its rows
/// read as the last rows of the panes it covers, their bottom borders
/// gone.
fn notice_above(m: &Model, f: &mut Frame<'_>, footer: Rect, text: &str) {
    let width = usize::from(footer.width).saturating_sub(2);
    let rows = super::inbox::wrap(text, width, NOTICE_ROWS);
    let height = (rows.len() as u16 + 1).min(footer.y);
    if height <= 1 {
        return;
    }
    let lines: Vec<Line<'static>> = rows
        .into_iter()
        .map(|r| Line::from(format!(" {r} ")))
        .collect();
    let r = Rect::new(footer.x, footer.y - height, footer.width, height);
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines)
            .style(m.theme.popup)
            .block(Block::default().borders(Borders::TOP)),
        r,
    );
}
