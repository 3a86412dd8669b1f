//! The overlays drawn over the grid: the kill, forget and run-again
//! confirmations, the new session form, the key help and the `e`
//! explanation, all in one framed box ([`popup`]). Separate from the grid because each is drawn only in
//! its own mode and reads the model for nothing else.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use unicode_width::UnicodeWidthStr;

use super::key;
use crate::client::clock_ms;
use crate::config::Action;
use crate::tui::model::{Lost, Model, NewStep};

/// The kill confirmation.
pub(super) fn confirm_kill(m: &Model, f: &mut Frame<'_>, id: &str) {
    let what = match m.pane(id).and_then(|p| p.orphan) {
        // Two lines: as one it wrapped at 80 columns, and the box, sized
        // to its lines, lost the row of keys.
        Some(pid) => format!(
            "Its program, pid {pid}, outlived its supervisor:\n\
             SIGTERM now, SIGKILL after the grace period."
        ),
        None => "SIGTERM now, SIGKILL after its grace period.".to_owned(),
    };
    confirm(m, f, "kill", &format!("Kill session '{id}'?"), &what);
}

/// The confirmation of `x` on a session that ended.
pub(super) fn confirm_forget(m: &Model, f: &mut Frame<'_>, id: &str) {
    let what = "Its record, log and kept history go, as hm rm.";
    confirm(m, f, "forget", &format!("Forget session '{id}'?"), what);
}

/// The confirmation of `r`: what runs again, and where, whole (wrapped,
/// not cut: its end may be what matters, a flag or a path).
pub(super) fn confirm_restart(m: &Model, f: &mut Frame<'_>, id: &str) {
    let p = m.pane(id);
    let command = p
        .and_then(|p| p.command.as_deref())
        .unwrap_or("its command");
    let command = crate::paths::printable(command);
    let what = match p.and_then(|p| p.workdir.as_deref()) {
        Some(dir) => format!("{command}\nin {}", crate::paths::printable(dir)),
        None => command,
    };
    confirm(m, f, "run", &format!("Run session '{id}' again?"), &what);
}

/// A yes/no question (its title `verb`, the key `y`'s word), what a yes
/// does (a line each of its lines), and the keys.
fn confirm(m: &Model, f: &mut Frame<'_>, verb: &str, question: &str, what: &str) {
    popup(
        m,
        f,
        verb,
        &[Line::from(question.to_owned()), Line::from("")]
            .into_iter()
            .chain(what.lines().map(|l| Line::from(l.to_owned())))
            .chain(std::iter::once(Line::from(vec![
                key(m, "y"),
                Span::raw(format!(" {verb}   ")),
                key(m, "n"),
                Span::raw(" keep"),
            ])))
            .collect::<Vec<_>>(),
    );
}

/// The new session form: the id, then the command, the directory, the
/// label and the classifier.
/// The new-session form's width where the terminal has it (and half of
/// one wider than twice that).
const FORM_WIDTH: u16 = 60;

pub(super) fn new_session(m: &Model, f: &mut Frame<'_>, step: NewStep, id: &str, command: &str) {
    // One width for every step (it followed the fields, and jumped
    // between them): half a wide terminal, else all but a margin.
    let area = f.area().width;
    let width = area.saturating_sub(4).min(FORM_WIDTH.max(area / 2));
    // A long command shows its end, where the typing is: the box less its
    // borders and margins, the field's name and the cursor.
    let room = usize::from(width.saturating_sub(4 + 12 + 1)).max(8);
    let tail = |text: &str| {
        let n = text.chars().count();
        if n <= room {
            text.to_owned()
        } else {
            let kept: String = text.chars().skip(n - (room - 1)).collect();
            format!("…{kept}")
        }
    };
    let cursor = |on: bool| if on { "▏" } else { "" };
    // A field shows what was typed, else (dimmed) what it stands for.
    let field = |name: &str, text: &str, on: bool, empty: String| -> Line<'static> {
        let mut spans = vec![Span::raw(format!("{name:<12}"))];
        if text.is_empty() {
            spans.push(Span::raw(cursor(on)));
            spans.push(Span::styled(empty, m.theme.dim));
        } else {
            spans.push(Span::raw(format!("{}{}", tail(text), cursor(on))));
        }
        Line::from(spans)
    };
    // The name the command gives it, once there is a command to name it.
    let mut id_hint = if step == NewStep::Id {
        "(empty: the command's name)".to_owned()
    } else {
        crate::tui::form::placeholder(m, id, command)
    };
    // Only the machine typed: the whole id it will take, dimmed.
    let typed = if step != NewStep::Id && crate::tui::form::unnamed(m, id) {
        ""
    } else {
        id
    };
    if step == NewStep::Id && !m.hosts.is_empty() {
        // Other machines take `host:id`, or `host:` to name it there.
        id_hint = format!("{id_hint}  (host:id on {})", m.hosts.join(", "));
    }
    let mut lines = vec![field("id:", typed, step == NewStep::Id, id_hint)];
    if step != NewStep::Id {
        let far = crate::tui::form::remote(m, id);
        lines.push(field(
            "command:",
            command,
            step == NewStep::Command,
            match far {
                Some(host) => format!("(empty: the shell on {host})"),
                None => format!("(empty: {})", m.shell),
            },
        ));
        lines.push(field(
            "dir:",
            &m.new_dir,
            step == NewStep::Dir,
            match far {
                Some(host) => format!("(empty: home on {host})"),
                None => "(the dashboard's)".into(),
            },
        ));
        lines.push(field(
            "label:",
            &m.new_label,
            step == NewStep::Label,
            "(none)".into(),
        ));
        let on = step == NewStep::Classifier;
        let choice = crate::tui::form::classifier_label(m);
        let mut spans = vec![Span::raw(format!("{:<12}", "classifier:"))];
        if on {
            spans.push(Span::styled(format!("◂ {choice} ▸"), m.theme.footer_key));
        } else if m.new_classifier.is_none() {
            spans.push(Span::styled(choice, m.theme.dim));
        } else {
            spans.push(Span::raw(choice));
        }
        lines.push(Line::from(spans));
    }
    // What went wrong with what was typed, in the form, whole: the
    // footer of an 80-column terminal cut it off.
    if let Some((text, _)) = &m.notice {
        lines.push(Line::from(""));
        let cols = usize::from(width.saturating_sub(4)).max(20);
        for row in super::inbox::wrap(text, cols, 4) {
            lines.push(Line::from(Span::styled(row, m.theme.error)));
        }
    }
    lines.push(Line::from(""));
    let mut hints = vec![key(m, "Enter")];
    if step == NewStep::Id {
        hints.push(Span::raw(" next   "));
    } else {
        hints.push(Span::raw(" start   "));
        if step == NewStep::Classifier {
            hints.push(key(m, "←→"));
            hints.push(Span::raw(" choose   "));
        }
        hints.push(key(m, "Tab"));
        hints.push(Span::raw(format!(
            " {}   ",
            crate::tui::form::after_tab(step)
        )));
    }
    hints.push(key(m, "Esc"));
    hints.push(Span::raw(" cancel"));
    lines.push(Line::from(hints));
    framed(m, f, ["new session", "", ""], &lines, width);
}

/// The `e` overlay: the selected session's state, and the signals behind
/// it as its supervisor reported them.
pub(super) fn explain(m: &Model, f: &mut Frame<'_>, id: &str, now: Instant) {
    let Some(p) = m.pane(id) else { return };
    let head = if p.lost.is_some() {
        Line::from(Span::styled(" lost ", m.theme.error))
    } else if let Some(code) = p.exit {
        // How and when it ended (` dead   for 3m55s` read as a state it
        // was still in).
        Line::from(vec![
            Span::styled(
                format!(" {} ", crate::client::ended_short(code, p.killed)),
                if p.ended_well() {
                    m.theme.ended_well
                } else {
                    m.theme.error
                },
            ),
            Span::raw(format!(
                "  {} ago",
                p.state_ms(now).map_or("?".into(), clock_ms)
            )),
        ])
    } else {
        Line::from(vec![
            Span::styled(
                format!(" {} ", p.state_label().unwrap_or_else(|| "…".into())),
                m.theme.state(p.state()),
            ),
            Span::raw(format!(
                "  for {}",
                p.state_ms(now).map_or("?".into(), clock_ms)
            )),
        ])
    };
    let mut lines = vec![head];
    // The signals INFO gave since, while it says the same state.
    let fresh = p.explained.as_deref().filter(|e| {
        p.report
            .as_ref()
            .is_some_and(|r| (r.state_byte, r.detail) == (e.state_byte, e.detail))
    });
    match fresh.or(p.report.as_ref()) {
        // Lost with its supervisor: not ended, not running either.
        _ if let Some(lost) = &p.lost => lines.push(Line::from(match lost {
            Lost::Restartable => "lost: its supervisor went away; R starts it again".to_owned(),
            Lost::Refused(why) => {
                format!("lost: its supervisor went away; not restored: {why}; r runs it again")
            }
        })),
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
            // In columns as wide as the widest source and rule shown
            // (`status_protocol` ran past a fixed eight).
            let shown = &r.signals[..r.signals.len().min(8)];
            let sw = shown
                .iter()
                .map(|s| s.source.name().len())
                .max()
                .unwrap_or(0);
            let rw = shown
                .iter()
                .map(|s| s.rule.chars().count())
                .max()
                .unwrap_or(0);
            for s in shown {
                // Cut where it says so (`…`): `make re` read as the command.
                let text = crate::cut::end(&crate::paths::sanitize(&s.text), 60);
                lines.push(Line::from(vec![
                    Span::styled(format!("{:<sw$}", s.source.name()), m.theme.footer_key),
                    Span::raw(format!(" {:<rw$}  ", s.rule)),
                    Span::styled(format!("{text:?}"), m.theme.dim),
                ]));
            }
            if !r.children.is_empty() {
                lines.push(Line::from(""));
                lines.push(Line::from("reported by the program:"));
            }
            for c in r.children.iter().take(6) {
                let title = crate::cut::end(&crate::paths::sanitize(&c.title), 50);
                lines.push(Line::from(vec![
                    Span::styled(format!("{:<8}", c.state), m.theme.footer_key),
                    Span::raw(format!(" {title}")),
                ]));
            }
        }
        _ if p.ended() => {
            let how = p.exit.map_or("it ended".to_owned(), |c| {
                crate::client::exited_with(c, p.killed)
            });
            lines.push(Line::from(how));
        }
        _ => lines.push(Line::from("no state report from this session")),
    }
    lines.push(Line::from(""));
    let more = if p.lost.is_some() {
        format!("hm status {id} shows what hm restore would do")
    } else if p.ended() {
        format!("hm status {id} shows how it ended; r runs it again")
    } else {
        format!("hm explain {id} shows what decided it")
    };
    lines.push(Line::from(more).style(m.theme.dim));
    // Whose: the overlay hides the pane's title (zoomed, or on a page of
    // small panes, the selection was not plain to see).
    popup(m, f, &format!("why: {id}"), &lines);
}

fn popup(m: &Model, f: &mut Frame<'_>, title: &str, lines: &[Line<'static>]) {
    framed(m, f, [title, "", ""], lines, 0);
}

/// [`popup`] with a line on its bottom border too, at least `min_width`
/// columns wide (a form whose width followed its fields jumped between
/// them). `titles`: the top border's, left and right, and the bottom
/// border's; the box is wide enough for them too, or the two on top ran
/// into one (`…any other key closes W waiting`).
fn framed(
    m: &Model,
    f: &mut Frame<'_>,
    titles: [&str; 3],
    lines: &[Line<'static>],
    min_width: u16,
) {
    let [title, right, bottom] = titles;
    let area = f.area();
    // Each title is drawn between spaces; the two on top a column apart.
    let padded = |t: &str| if t.is_empty() { 0 } else { t.width() + 2 };
    // A title the screen is too narrow for is left out, not run into the
    // other (`keys · an W waiting`).
    let fits = |used: usize| used + 2 <= usize::from(area.width);
    let right = if fits(padded(title) + padded(right) + 1) {
        right
    } else {
        ""
    };
    let bottom = if fits(padded(bottom)) { bottom } else { "" };
    let top = padded(title) + padded(right) + usize::from(!right.is_empty());
    let titled = top.max(padded(bottom)) + 2;
    let w = lines
        .iter()
        .map(|l| l.width() as u16)
        .max()
        .unwrap_or(10)
        .saturating_add(4)
        .max(u16::try_from(titled).unwrap_or(u16::MAX))
        .max(min_width)
        .min(area.width);
    // Rows as wrapped in the box, not lines: a box sized to its lines
    // lost its last rows, the keys that answer it, wherever one wrapped
    // (a kill's question at 30 columns, the form's id hint at 40). Short
    // of rows, the blank ones go first, then the top: the keys stay.
    let paragraph = |lines: Vec<Line<'static>>| Paragraph::new(lines).wrap(Wrap { trim: false });
    let inner = w.saturating_sub(2);
    let mut lines = lines.to_vec();
    let rows = |lines: &[Line<'static>]| paragraph(lines.to_vec()).line_count(inner) as u16;
    let room = area.height.saturating_sub(2);
    if rows(&lines) > room {
        lines.retain(|l| l.width() > 0);
    }
    let needed = rows(&lines);
    let h = (needed + 2).min(area.height);
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
    let block = match right {
        "" => block,
        text => block.title(Line::from(format!(" {text} ")).right_aligned()),
    };
    let block = match bottom {
        "" => block,
        text => block.title_bottom(format!(" {text} ")),
    };
    let scroll = needed.saturating_sub(h.saturating_sub(2));
    f.render_widget(paragraph(lines).block(block).scroll((scroll, 0)), r);
}

/// What a narrow pane's badge says, in letters (`title::letter`), and its
/// shortest details.
const LEGEND: [&str; 3] = [
    "badges: W waiting · I idle · A active · T thinking · S streaming",
    "        U tool use · ! stuck · ✗ ended · ? unknown · ● news unseen",
    "        perm, ask, plan, stop: what it waits at · done: turn ended",
];

/// The badges' page of help (`?`, `b`): every short form a pane's title
/// may take, which a narrow pane (an 80x24 terminal's) shows.
const BADGES: [(&str, &str); 16] = [
    ("W", "waiting: needs you"),
    ("  perm  ask", "a permission · a question"),
    ("  plan  trust", "a plan to approve · a folder to trust"),
    (
        "  input",
        "a program asking on its line ([y/N], a password)",
    ),
    (
        "  stop",
        "stopped (Ctrl-Z): y in the inbox or any key in focus",
    ),
    (
        "I",
        "idle · done: its turn ended · ready: at its prompt · typing: text at its prompt",
    ),
    (
        "I error",
        "an error ended its turn (the API failed): in a failure's colours",
    ),
    ("A  T  S  U", "active · thinking · streaming · using a tool"),
    ("!  ?", "stuck (says it works, shows nothing) · unknown"),
    ("✓  ✗3", "ended: exited 0 · exited 3"),
    ("✗TERM", "a signal ended it (killed SIGTERM)"),
    ("✗", "killed with exit 0, or its supervisor is gone"),
    ("unreach", "its machine is down; the pane is as of then"),
    (
        "●",
        "news you have not looked at (it asked, finished, ended)",
    ),
    ("32s  5m  2h", "time in the state, in the title"),
    (
        "idle 1m50s",
        "time since its output, bottom border (quiet: working)",
    ),
];

/// The badges' page of help ([`BADGES`]) as a screen `cols` wide shows
/// it: each form's words wrapped beside it, or under it, as the keys'
/// are (below 70 columns they ran from column 0, and below 17 rows the
/// last were out of reach).
fn badges_page(m: &Model, cols: u16, room: usize) -> HelpPage {
    let avail = usize::from(cols).saturating_sub(4).max(10);
    let width = BADGES.iter().map(|(k, _)| k.width()).max().unwrap_or(0);
    let lines: Vec<Line<'static>> = BADGES
        .iter()
        .flat_map(|(k, what)| entry(m, k, what, width, avail))
        .collect();
    let titles: &[&'static str] = if lines.len() > room.max(1) {
        &[
            "badges · ↑↓ scroll · any other key closes",
            "badges · ↑↓ · others close",
            "badges",
        ]
    } else {
        &["badges · any key closes", "badges"]
    };
    HelpPage {
        lines,
        titles: [widest_fitting(titles, cols), "", ""],
    }
}

/// The first of `titles` (longest first) a frame `cols` wide has room
/// for, else the last.
fn widest_fitting(titles: &[&'static str], cols: u16) -> &'static str {
    titles
        .iter()
        .copied()
        .find(|t| t.width() + 4 <= usize::from(cols))
        .unwrap_or(titles[titles.len() - 1])
}

/// The `?` overlay: the keys in effect (`[tui.keys]` over the defaults),
/// with what each does, or its second page, the badges (`b`); scrolled by
/// `m.help_scroll` where the screen is too short for it all.
pub(super) fn help(m: &Model, f: &mut Frame<'_>) {
    let area = f.area();
    let page = help_page(m, (area.width, area.height));
    let room = usize::from(area.height.saturating_sub(2)).max(1);
    let from = usize::from(m.help_scroll).min(page.lines.len().saturating_sub(room));
    let shown: Vec<Line<'static>> = page.lines.into_iter().skip(from).take(room).collect();
    framed(m, f, page.titles, &shown, 0);
}

/// How far the help can scroll on a screen of `size`: the rows it has
/// beyond what the screen shows.
pub fn help_scroll_max(m: &Model, size: (u16, u16)) -> u16 {
    let rows = help_page(m, size).lines.len();
    let room = usize::from(size.1.saturating_sub(2)).max(1);
    u16::try_from(rows.saturating_sub(room)).unwrap_or(u16::MAX)
}

/// The help as a screen of `size` shows it: its rows, wrapped to its
/// width, and the titles of its frame.
struct HelpPage {
    lines: Vec<Line<'static>>,
    titles: [&'static str; 3],
}

/// The page of help `m` is on, as a screen of `size` shows it.
fn help_page(m: &Model, (cols, height): (u16, u16)) -> HelpPage {
    if m.help_badges {
        badges_page(m, cols, usize::from(height.saturating_sub(2)))
    } else {
        keys_page(m, (cols, height))
    }
}

/// The first page of help: the keys, and the badges' letters where
/// there is room.
fn keys_page(m: &Model, (cols, height): (u16, u16)) -> HelpPage {
    let detach = m
        .detach_key
        .map_or("(disabled)".to_string(), crate::config::describe_key);
    let copy = m
        .copy_key
        .map_or("(no copy key)".to_string(), crate::config::describe_key);
    // An action's keys, one after another; `–` for one the file left
    // without a key.
    let keys = |a: Action| -> String {
        let k: Vec<String> = m.keys.keys(a).iter().map(|c| c.label()).collect();
        if k.is_empty() {
            "–".into()
        } else {
            k.join(", ")
        }
    };
    let pair = |a: Action, b: Action| format!("{} / {}", keys(a), keys(b));
    let rows: Vec<(String, &str)> = vec![
        (moves(m), "move the selection"),
        (
            format!("{} / double-click", keys(Action::Focus)),
            "focus: the session gets every key",
        ),
        (detach, "back from focus to the grid"),
        (
            keys(Action::Attach),
            "raw attach: the real terminal for the session",
        ),
        (
            keys(Action::Inbox),
            "inbox: who needs you (answer there: y/n/a, 1-9)",
        ),
        (keys(Action::Next), "next session that needs you"),
        (
            keys(Action::Kill),
            "kill the selected session; forget an ended one",
        ),
        (
            pair(Action::Restart, Action::Restore),
            "run an ended session again / restore lost ones",
        ),
        (
            pair(Action::New, Action::Label),
            "start a new session / label the selected one",
        ),
        (
            pair(Action::Zoom, Action::Back),
            "zoom the selected pane / unzoom, clear filter",
        ),
        (
            format!(
                "{} / {} / {}",
                keys(Action::MoreColumns),
                keys(Action::FewerColumns),
                keys(Action::AutoColumns)
            ),
            "more, fewer, automatic columns",
        ),
        (
            pair(Action::PrevPage, Action::NextPage),
            "previous / next page",
        ),
        (
            keys(Action::Filter),
            "filter by id or label (⏎ keeps it, Esc clears it)",
        ),
        (
            pair(Action::ScrollUp, Action::ScrollDown),
            "scroll the pane's history (the wheel too)",
        ),
        (
            keys(Action::CopyMode),
            "copy mode: hjkl, / ? search, v select, y copy",
        ),
        ("drag".into(), "select text with the mouse and copy it"),
        (copy, "in focus: copy mode (Shift-PgUp, the wheel too)"),
        (
            keys(Action::Explain),
            "why the selected session is in its state",
        ),
        (
            keys(Action::Sort),
            "sort by state (needs you first) / by id",
        ),
        (keys(Action::Quit), "quit (sessions keep running)"),
    ];
    // The frame takes two columns, and two more are left beside the text.
    let avail = usize::from(cols).saturating_sub(4).max(10);
    let width = rows
        .iter()
        .map(|(k, _)| k.width())
        .max()
        .unwrap_or(0)
        .clamp(12, 24);
    let mut lines: Vec<Line<'static>> = Vec::new();
    for (k, what) in rows {
        lines.extend(entry(m, &k, what, width, avail));
    }
    let keys_rows = lines.len();
    // The letters a narrow pane's badge shows for its state: below the
    // keys where there is room, else the commonest in the top border
    // (the keys fill an 80x24 terminal).
    let room = usize::from(height).saturating_sub(2);
    let legend_fits = LEGEND.iter().all(|l| l.width() <= avail);
    let right = if legend_fits && room >= keys_rows + 1 + LEGEND.len() {
        lines.push(Line::default());
        let legend = LEGEND.iter().map(|l| Line::styled(*l, m.theme.dim));
        lines.extend(legend);
        ""
    } else {
        // At 80x24 the border has room for the commonest; `b` shows
        // them all.
        "W waiting · I idle · ● unseen"
    };
    // What the top border says, the longest that fits.
    let scrolls = lines.len() > room.max(1);
    let titles: &[&'static str] = if scrolls {
        &[
            "keys · ↑↓ scroll · b: every badge · any other key closes",
            "keys · ↑↓ scroll · b: badges · others close",
            "keys · ↑↓ · b · others close",
            "keys",
        ]
    } else {
        &[
            "keys · b: every badge · any other key closes",
            "keys · b: badges · others close",
            "keys",
        ]
    };
    let title = widest_fitting(titles, cols);
    // The two timers of a pane, said where no row is taken from the keys.
    let timers = "a pane's title: time in its state · bottom: since its output";
    HelpPage {
        lines,
        titles: [title, right, timers],
    }
}

/// One key's rows of the help: the key and what it does on a row where
/// they fit in `avail` columns; else what it does wrapped beside the key
/// (a hanging indent), or below it where the key leaves too little room.
fn entry(m: &Model, k: &str, what: &str, width: usize, avail: usize) -> Vec<Line<'static>> {
    let key = |text: String| Span::styled(text, m.theme.footer_key);
    if width + 2 + what.width() <= avail {
        return vec![Line::from(vec![
            key(format!("{k:<width$}  ")),
            Span::raw(what.to_string()),
        ])];
    }
    // Beside the key while that leaves room for a few words a row.
    if width + 2 + 20 <= avail && k.width() <= width {
        let wrapped = super::inbox::wrap(what, avail - width - 2, usize::MAX);
        return wrapped
            .into_iter()
            .enumerate()
            .map(|(i, w)| {
                let head = if i == 0 { k } else { "" };
                Line::from(vec![key(format!("{head:<width$}  ")), Span::raw(w)])
            })
            .collect();
    }
    let mut out = vec![Line::from(key(k.to_owned()))];
    out.extend(
        super::inbox::wrap(what, avail.saturating_sub(2), usize::MAX)
            .into_iter()
            .map(|w| Line::raw(format!("  {w}"))),
    );
    out
}

/// The four directions' keys: `←↓↑→ hjkl` when each is one character,
/// else each direction's keys in turn.
fn moves(m: &Model) -> String {
    let dirs = [Action::Left, Action::Down, Action::Up, Action::Right];
    let keys: Vec<Vec<String>> = dirs
        .iter()
        .map(|a| m.keys.keys(*a).iter().map(|c| c.label()).collect())
        .collect();
    let single = keys.iter().flatten().all(|k| k.chars().count() == 1);
    let most = keys.iter().map(Vec::len).max().unwrap_or(0);
    if single && keys.iter().all(|k| k.len() == most) {
        (0..most)
            .map(|i| keys.iter().map(|k| k[i].as_str()).collect::<String>())
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        keys.iter()
            .map(|k| {
                if k.is_empty() {
                    "–".into()
                } else {
                    k.join(",")
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}
