//! Snapshots of the dashboard as drawn: the model is built with the same
//! messages the run loop sends, then drawn on ratatui's `TestBackend` at a
//! fixed size and a fixed instant, so every snapshot is deterministic.
//!
//! Most snapshots are the text on screen; the ones about styles (the
//! selected border, NO_COLOR) use the buffer's `Debug` form, which lists
//! every change of style as well.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use heimdall::classify::ProcessState;
use heimdall::protocol::Status;
use heimdall::theme::Theme;
use heimdall::tui::model::{Model, Msg, SessionMsg};
use heimdall::tui::update::update;
use heimdall::tui::view::view;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::{Buffer, CellWidth};
use ratatui::style::Color;

/// A dashboard of `cols`×`rows` whose clock starts at `t0`.
struct Scene {
    m: Model,
    t0: Instant,
}

impl Scene {
    fn new(cols: u16, rows: u16) -> Scene {
        Scene::themed(Theme::by_name("dark").expect("built-in theme"), cols, rows)
    }

    fn themed(theme: Theme, cols: u16, rows: u16) -> Scene {
        let mut m = Model::new(theme, (cols, rows));
        m.shell = "/bin/bash".into();
        Scene {
            m,
            t0: Instant::now(),
        }
    }

    fn at(&self, ms: u64) -> Instant {
        self.t0 + Duration::from_millis(ms)
    }

    fn send(&mut self, msg: Msg) -> &mut Scene {
        let now = self.t0;
        update(&mut self.m, msg, now);
        self
    }

    fn to(&mut self, id: &str, sm: SessionMsg) -> &mut Scene {
        self.send(Msg::Session(id.into(), sm))
    }

    /// Sessions found and connected.
    fn live(&mut self, ids: &[&str]) -> &mut Scene {
        self.send(Msg::Found(ids.iter().map(|s| s.to_string()).collect()));
        for id in ids {
            self.to(id, SessionMsg::Connected);
        }
        self
    }

    /// `n` sessions found and connected, `job00` on: their ids.
    fn jobs(&mut self, n: usize) -> Vec<String> {
        let ids: Vec<String> = (0..n).map(|i| format!("job{i:02}")).collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        self.live(&refs);
        ids
    }

    fn output(&mut self, id: &str, text: &str) -> &mut Scene {
        self.to(id, SessionMsg::Output(text.as_bytes().to_vec()))
    }

    /// The session's size as its INFO says it.
    fn sized(&mut self, id: &str, cols: u16, rows: u16) -> &mut Scene {
        self.to(
            id,
            SessionMsg::Info(Box::new(heimdall::protocol::Info {
                cols,
                rows,
                ..Default::default()
            })),
        )
    }

    fn state(&mut self, id: &str, state: ProcessState, ms: u32) -> &mut Scene {
        self.to(
            id,
            SessionMsg::Status(Status {
                pid: 100,
                // Quiet for as long as it has been idle, busy means output.
                idle_ms: if state == ProcessState::Idle { ms } else { 0 },
                alive: true,
                state: state.as_byte(),
                state_ms: ms,
            }),
        )
    }

    fn key(&mut self, code: KeyCode) -> &mut Scene {
        self.send(Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)))
    }

    /// Draws the model as it would be `ms` after `t0`.
    fn draw_at(&self, ms: u64) -> Buffer {
        let (cols, rows) = self.m.size;
        let mut t = Terminal::new(TestBackend::new(cols, rows)).expect("test terminal");
        let now = self.at(ms);
        t.draw(|f| view(&self.m, f, now)).expect("draw");
        t.backend().buffer().clone()
    }

    /// Draws on a terminal of another size than the model last heard of,
    /// as happens when the terminal is resized between its event and a
    /// frame.
    fn draw_on(&self, cols: u16, rows: u16) -> Buffer {
        let mut t = Terminal::new(TestBackend::new(cols, rows)).expect("test terminal");
        t.draw(|f| view(&self.m, f, self.at(1500))).expect("draw");
        t.backend().buffer().clone()
    }

    /// The screen as text, one quoted row per line.
    fn text(&self) -> String {
        text(&self.draw_at(1500))
    }
}

/// The text on screen, a quoted row per line (wide characters once).
fn text(b: &Buffer) -> String {
    b.content
        .chunks(usize::from(b.area.width))
        .map(|row| {
            let mut line = String::new();
            let mut skip = 0u16;
            for c in row {
                if skip == 0 {
                    line.push_str(c.symbol());
                }
                skip = skip.max(c.cell_width()).saturating_sub(1);
            }
            format!("\"{line}\"")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Rows with cells drawn reversed (`#`) or with a background of the theme
/// (`@`): a selection and a cursor.
fn marked(b: &Buffer) -> String {
    use ratatui::style::Modifier;
    b.content
        .chunks(usize::from(b.area.width))
        .enumerate()
        .filter_map(|(i, row)| {
            let line: String = row
                .iter()
                .map(|c| {
                    if c.modifier.contains(Modifier::REVERSED) {
                        '#'
                    } else if c.bg != Color::Reset {
                        '@'
                    } else {
                        '.'
                    }
                })
                .collect();
            line.contains(['#', '@']).then(|| format!("{i:2} {line}"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Four sessions in the states the dashboard distinguishes.
fn four() -> Scene {
    let mut s = Scene::new(100, 30);
    s.live(&["api", "build", "db", "web"]);
    s.to(
        "api",
        SessionMsg::Info(Box::new(heimdall::protocol::Info { command: vec!["bash".into()], cols: 48, rows: 12, ..Default::default() })),
    )
    .output("api", "$ make run\r\nlistening on :8080\r\n\x1b[1;32mGET /health 200\x1b[m\r\n$ ")
    .state("api", ProcessState::Idle, 4000)
    .output(
        "build",
        "   Compiling heimdall v0.1.0\r\n   Compiling ratatui v0.30.2\r\n    Building [=====>    ] 57/101",
    )
    .state("build", ProcessState::Active, 12_000)
    .output("db", "psql: connection refused\r\n")
    .to("db", SessionMsg::Exit(2))
    .to("web", SessionMsg::Problem {
            why: "not responding".into(),
            notice: None,
        });
    s
}

#[test]
fn empty_dashboard_says_how_to_start() {
    let s = Scene::new(80, 24);
    insta::assert_snapshot!(s.text());
}

#[test]
fn four_panes_show_output_and_state() {
    insta::assert_snapshot!(four().text());
}

#[test]
fn selected_pane_has_the_thick_border() {
    let mut s = four();
    s.key(KeyCode::Right);
    insta::assert_snapshot!(s.text());
}

#[test]
fn selected_pane_style() {
    // Small, so the style list stays readable.
    let mut s = Scene::new(60, 9);
    s.live(&["a", "b"]).output("a", "one").output("b", "two");
    s.key(KeyCode::Right);
    insta::assert_debug_snapshot!(s.draw_at(0));
}

#[test]
fn attention_marks_the_pane_that_finished() {
    let mut s = Scene::new(80, 16);
    s.live(&["a", "b", "c"]);
    // Work starts well after the resize that came with connecting (output
    // in the second after it is the session redrawing)...
    let out = |s: &mut Scene, bytes: &[u8], ms: u64| {
        let at = s.at(ms);
        update(
            &mut s.m,
            Msg::Session("b".into(), SessionMsg::Output(bytes.to_vec())),
            at,
        );
    };
    out(&mut s, b"tests passed\r\n$ ", 1500);
    // ...and it kept writing for 2.5 s (nothing that changes the screen).
    out(&mut s, b"", 4000);
    let later = s.at(7100);
    update(
        &mut s.m,
        Msg::Session(
            "b".into(),
            SessionMsg::Status(Status {
                pid: 1,
                idle_ms: 0,
                alive: true,
                state: ProcessState::Idle.as_byte(),
                state_ms: 0,
            }),
        ),
        later,
    );
    s.to("c", SessionMsg::Exit(0));
    assert!(s.m.pane("b").is_some_and(|p| p.attention));
    insta::assert_snapshot!(text(&s.draw_at(8100)));
}

#[test]
fn kill_asks_for_confirmation() {
    let mut s = four();
    s.key(KeyCode::Char('x'));
    insta::assert_snapshot!(s.text());
}

/// A box is as tall as its rows once wrapped: sized to its lines, it lost
/// the keys that answer it wherever one wrapped (the kill's question at
/// 30 columns; the form's id hint at 40). Short of rows, its blank rows
/// go before its keys do.
#[test]
fn a_popup_on_a_small_terminal_keeps_its_keys() {
    for (cols, rows) in [(30, 10), (30, 8), (40, 12)] {
        let mut s = Scene::new(cols, rows);
        s.live(&["a-long-session-id"]);
        s.key(KeyCode::Char('x'));
        let kill = s.text();
        assert!(
            kill.contains("y kill") && kill.contains("n keep"),
            "{cols}x{rows}:\n{kill}"
        );
        s.key(KeyCode::Char('n'));
        s.key(KeyCode::Char('n'));
        let form = s.text();
        assert!(form.contains("Esc cancel"), "{cols}x{rows}:\n{form}");
        s.key(KeyCode::Esc);
    }
}

#[test]
fn help_lists_the_keys() {
    let mut s = four();
    s.key(KeyCode::Char('?'));
    insta::assert_snapshot!(s.text());
}

/// On a screen too short and narrow for the keys (40x15), the help
/// wraps what each key does under it and scrolls with the arrows, to
/// its last key; its titles do not run into each other. On one where
/// the keys fit, `j` closes it as any other key.
#[test]
fn help_on_a_small_screen_wraps_and_scrolls_to_its_end() {
    let mut s = Scene::new(40, 15);
    s.live(&["a"]);
    s.key(KeyCode::Char('?'));
    let first = s.text();
    assert!(
        first.contains("┌ keys · ↑↓ · b · others close ─"),
        "{first}"
    );
    assert!(first.contains("│  move the selection"), "{first}");
    assert!(!first.contains("quit (sessions keep running)"), "{first}");
    for _ in 0..60 {
        s.key(KeyCode::Char('j'));
    }
    let last = s.text();
    assert!(last.contains("│  quit (sessions keep running)"), "{last}");
    assert!(!last.contains("move the selection"), "{last}");
    s.key(KeyCode::Char('g'));
    assert_eq!(s.text(), first, "back to the top");
    s.key(KeyCode::Char('x'));
    assert!(!s.text().contains("┌ keys"), "another key closes it");

    let mut s = Scene::new(100, 40);
    s.live(&["a"]);
    s.key(KeyCode::Char('?'));
    assert!(s.text().contains("any other key closes"));
    s.key(KeyCode::Char('j'));
    assert!(!s.text().contains("┌ keys"), "j closes what fits");
}

/// The badges' page (`?` then `b`) on a 40x15 screen wraps each form's
/// words beside or under it, never from column 0, and scrolls to its
/// last form; where it fits (80x24) any key closes it.
#[test]
fn help_badges_on_a_small_screen_wrap_and_scroll_to_their_end() {
    let mut s = Scene::new(40, 15);
    s.live(&["a"]);
    s.key(KeyCode::Char('?'));
    s.key(KeyCode::Char('b'));
    let first = s.text();
    assert!(first.contains("┌ badges · ↑↓ · others close ─"), "{first}");
    assert!(
        first.contains("│W              waiting: needs you"),
        "{first}"
    );
    // Nothing runs into the frame's left column (a row wrapped by the
    // frame started at column 1).
    for row in first.lines().filter(|l| l.starts_with('│')) {
        let inner = row.trim_start_matches('│');
        assert!(
            inner.starts_with(' ') || BADGE_HEADS.iter().any(|h| inner.starts_with(h)),
            "{row}\n{first}"
        );
    }
    assert!(!first.contains("bottom border"), "{first}");
    for _ in 0..40 {
        s.key(KeyCode::Char('j'));
    }
    let last = s.text();
    assert!(last.contains("idle 1m50s"), "{last}");
    assert!(last.contains("bottom border"), "{last}");
    s.key(KeyCode::Char('x'));
    assert!(!s.text().contains("┌ badges"), "another key closes it");

    let mut s = Scene::new(80, 24);
    s.live(&["a"]);
    s.key(KeyCode::Char('?'));
    s.key(KeyCode::Char('b'));
    assert!(
        s.text().contains("┌ badges · any key closes ─"),
        "{}",
        s.text()
    );
    s.key(KeyCode::Char('j'));
    assert!(!s.text().contains("┌ badges"), "j closes what fits");
}

/// How each of the badges' page's forms starts.
const BADGE_HEADS: [&str; 14] = [
    "W", "I", "A", "!", "✓", "✗", "unreach", "●", "32s", "idle", "perm", "plan", "input", "stop",
];

#[test]
fn focus_shows_the_session_and_a_bar_under_it() {
    let mut s = Scene::new(60, 12);
    s.live(&["api", "db"]);
    s.key(KeyCode::Enter);
    s.output(
        "api",
        "\x1b[2J\x1b[Hfull-screen now\r\nline two\r\n\x1b[12;1Hbottom row",
    );
    insta::assert_snapshot!(s.text());
}

/// Focused while a terminal attached elsewhere holds its size, the
/// session's bar says so, as its pane's border does.
#[test]
fn focus_says_when_another_terminal_holds_the_size() {
    let mut s = Scene::new(80, 12);
    s.live(&["api"]);
    s.key(KeyCode::Enter);
    // The first INFO was asked before focus's RESIZE; the next says the
    // size the session kept.
    for _ in 0..2 {
        s.to(
            "api",
            SessionMsg::Info(Box::new(heimdall::protocol::Info {
                cols: 100,
                rows: 29,
                terminals: Some(1),
                ..Default::default()
            })),
        );
    }
    let text = s.text();
    let bar = text.lines().last().unwrap_or("");
    assert!(bar.contains("100x29 held"), "{text}");
}

/// Zoomed, the footer names what the zoom key does now: back to the grid.
#[test]
fn zoomed_the_footer_offers_to_unzoom() {
    let mut s = Scene::new(100, 12);
    s.live(&["api", "db"]);
    let grid = s.text();
    assert!(
        grid.lines().last().unwrap_or("").contains("z zoom"),
        "{grid}"
    );
    s.key(KeyCode::Char('z'));
    let zoomed = s.text();
    let footer = zoomed.lines().last().unwrap_or("");
    assert!(footer.contains("z unzoom"), "{zoomed}");
    s.key(KeyCode::Char('z'));
    assert!(s.text().lines().last().unwrap_or("").contains("z zoom"));
}

/// The focus bar names the session by its label too, where it fits.
#[test]
fn focus_shows_the_label_where_it_fits() {
    for (cols, shown) in [(100, true), (40, false)] {
        let mut s = Scene::new(cols, 12);
        s.live(&["api"]);
        s.to(
            "api",
            SessionMsg::Info(Box::new(heimdall::protocol::Info {
                label: Some("refactor parser".into()),
                ..Default::default()
            })),
        );
        s.key(KeyCode::Enter);
        let text = s.text();
        let bar = text.lines().last().unwrap_or("");
        assert_eq!(bar.contains(" api  refactor parser "), shown, "{text}");
        assert!(bar.contains("back to the grid"), "{text}");
    }
}

/// A long id is cut in the focus bar before the way back is: at 80
/// columns the detach key and the others who need you went off its end.
#[test]
fn focus_keeps_the_way_back_beside_a_long_id() {
    let long = "a-very-long-session-identifier-that-is-sixty-three-characters-x";
    let mut s = Scene::new(80, 24);
    s.live(&[long, "ask"]);
    s.state("ask", ProcessState::Waiting, 1000);
    s.key(KeyCode::Enter);
    let text = s.text();
    let bar = text.lines().last().unwrap_or("");
    // Cut in its middle: both ends show.
    assert!(bar.contains(" a-very-long-"), "{text}");
    assert!(bar.contains("characters-x "), "{text}");
    assert!(bar.contains('…') && !bar.contains(long), "{text}");
    for said in ["back to the grid", " 1 needs you "] {
        assert!(bar.contains(said), "{said}: {text}");
    }
}

#[test]
fn new_session_prompt() {
    let mut s = Scene::new(80, 20);
    s.live(&["s1"]);
    s.key(KeyCode::Char('n'));
    let id_step = s.text();
    s.key(KeyCode::Enter);
    insta::assert_snapshot!(format!("{id_step}\n\n{}", s.text()));
}

#[test]
fn filter_shows_in_the_footer_and_says_when_nothing_matches() {
    let mut s = four();
    s.key(KeyCode::Char('/'))
        .key(KeyCode::Char('b'))
        .key(KeyCode::Enter);
    let some = s.text();
    s.key(KeyCode::Char('/')).key(KeyCode::Char('z'));
    insta::assert_snapshot!(format!("{some}\n\n{}", s.text()));
    // Kept, a filter that shows nothing offers nothing to act on.
    s.key(KeyCode::Enter);
    let text = s.text();
    let footer = text.lines().last().unwrap_or_default();
    for gone in ["move", "focus", "kill", "zoom", "copy"] {
        assert!(!footer.contains(gone), "{gone}: {footer}");
    }
    assert!(
        footer.contains("n new") && footer.contains("q quit"),
        "{footer}"
    );
}

#[test]
fn many_panes_page_with_a_footer() {
    let mut s = Scene::new(80, 24);
    let ids = s.jobs(50);
    for id in &ids {
        s.output(id, &format!("hello from {id}"))
            .state(id, ProcessState::Idle, 1000);
    }
    let text = s.text();
    let last = text.lines().last().unwrap_or_default().to_string();
    assert!(last.contains("page 1/"), "{last}");
    insta::assert_snapshot!(text);
}

/// The page number stands apart from the hints at every width: with a
/// hint that fitted exactly the footer read `q quit page 1/2`.
#[test]
fn the_page_number_stands_apart_from_the_hints() {
    for cols in 40..=140 {
        let mut s = Scene::new(cols, 24);
        s.jobs(50);
        let text = s.text();
        let footer = text.lines().last().unwrap_or_default();
        if let Some(at) = footer.find("page ") {
            assert!(footer[..at].ends_with("  "), "{cols}: {footer}");
        }
    }
}

/// The inbox has no pages: its footer does not carry the grid's.
#[test]
fn the_inbox_footer_has_no_page_number() {
    let mut s = Scene::new(80, 24);
    s.jobs(50);
    let grid = s.text();
    assert!(
        grid.lines().last().unwrap_or_default().contains("page 1/"),
        "{grid}"
    );
    s.key(KeyCode::Char('i'));
    let inbox = s.text();
    let footer = inbox.lines().last().unwrap_or_default();
    assert!(!footer.contains("page"), "{footer}");
}

#[test]
fn a_notice_fits_on_an_80_column_footer() {
    let mut s = Scene::new(80, 24);
    s.live(&["a"]);
    s.send(Msg::Started("s1".into(), Err("boom".into())));
    let t = s.text();
    let footer = t.lines().last().unwrap_or_default();
    assert!(footer.contains(" could not start 's1': boom "), "{footer}");
    assert!(footer.contains("move"), "{footer}");
    // A longer one leaves room for fewer hints: what acts on the selected
    // session stays, before the arrows (they went first, and ⏎ focus, x
    // kill, n new with them).
    s.send(Msg::Started(
        "s2".into(),
        Err("no such command 'clauude'".into()),
    ));
    let t = s.text();
    let footer = t.lines().last().unwrap_or_default();
    assert!(
        footer.contains(" could not start 's2': no such command 'clauude' "),
        "{footer}"
    );
    for hint in ["⏎ focus", "? help", "q quit"] {
        assert!(footer.contains(hint), "{hint}: {footer}");
    }
    // One that would not leave room for help and quit goes whole on rows
    // of its own above the footer: in it, it took the whole row, every
    // key with it, and cut to fit it lost the end of what went wrong.
    let long = "cannot run the ssh command 'ssh -F /home/someone/.ssh/config-for-the-build-farm': \
                No such file or directory (os error 2)";
    s.send(Msg::Started("s3".into(), Err(long.into())));
    let t = s.text();
    let rows: Vec<&str> = t.lines().collect();
    let footer = rows[rows.len() - 1];
    assert!(!footer.contains("could not start"), "{footer}");
    for hint in ["⏎ focus", "? help", "q quit"] {
        assert!(footer.contains(hint), "{hint}: {footer}");
    }
    let above: Vec<&str> = rows[rows.len() - 4..rows.len() - 1]
        .iter()
        .map(|r| r.trim_matches('"').trim())
        .collect();
    assert_eq!(
        above.join(" "),
        format!("could not start 's3': {long}"),
        "{t}"
    );
    // A rule sets it apart from the panes it covers: without one its rows
    // read as theirs, their bottom borders gone.
    let rule = rows[rows.len() - 5].trim_matches('"');
    assert!(!rule.is_empty() && rule.chars().all(|c| c == '─'), "{t}");
}

#[test]
fn no_color_draws_without_colours() {
    let theme = Theme::load(Some("dark"), true).expect("built-in theme");
    let mut s = Scene::themed(theme, 60, 9);
    s.live(&["a", "b"])
        .output("a", "plain")
        .state("a", ProcessState::Active, 0)
        .to("b", SessionMsg::Exit(1));
    let b = s.draw_at(0);
    for cell in &b.content {
        assert_eq!((cell.fg, cell.bg), (Color::Reset, Color::Reset), "{cell:?}");
    }
    insta::assert_debug_snapshot!(b);
}

#[test]
fn light_theme_draws() {
    let theme = Theme::by_name("light").expect("built-in theme");
    let mut s = Scene::themed(theme, 60, 9);
    s.live(&["a"]).output("a", "light");
    let b = s.draw_at(0);
    let dark = {
        let mut d = Scene::new(60, 9);
        d.live(&["a"]).output("a", "light");
        d.draw_at(0)
    };
    assert_eq!(text(&b), text(&dark), "the same text");
    assert_ne!(b, dark, "in other colours");
}

#[test]
fn hostile_output_draws() {
    let mut s = Scene::new(60, 12);
    s.live(&["evil"]);
    s.output("evil", "\x1b]0;");
    s.output("evil", &"x".repeat(200_000));
    s.output(
        "evil",
        "\x07\x1b[99999999;99999999H\x1b[4294967295Cwide 你好你好你好",
    );
    s.to(
        "evil",
        SessionMsg::Output(b"\xff\xfe\xc3 bad utf-8\r\nend".to_vec()),
    );
    s.send(Msg::Resize(31, 12));
    s.output("evil", "\r\n你好你好你好你好你好你好你好你好");
    s.send(Msg::Resize(60, 12));
    let t = s.text();
    assert!(t.contains("end"), "{t}");
}

#[test]
fn a_terminal_resized_before_its_event_arrives_draws_at_its_new_size() {
    // The CI failure this guards against: a frame drawn one column
    // narrower than the model's size panicked at the last column.
    let mut s = Scene::new(120, 40);
    s.live(&["a", "b", "c", "d", "e"]);
    s.output("a", "hello");
    for (cols, rows) in [(118, 40), (119, 39), (40, 10), (1, 1), (200, 60)] {
        let t = text(&s.draw_on(cols, rows));
        assert!(
            cols < 40 || t.contains(" a "),
            "{cols}x{rows}: the first pane drawn: {t}"
        );
    }
    let narrow = text(&s.draw_on(118, 40));
    assert!(narrow.contains("hello"), "{narrow}");
}

#[test]
fn a_wide_character_cut_by_the_pane_edge_leaves_the_border_whole() {
    // Not fitted: an 80-column session in a 38-column pane. The line's
    // wide characters start on odd columns, so one starts on the last.
    let mut s = Scene::new(40, 8);
    s.m.fit = false;
    s.live(&["wide"]);
    s.to(
        "wide",
        SessionMsg::Info(Box::new(heimdall::protocol::Info {
            cols: 80,
            rows: 6,
            ..Default::default()
        })),
    )
    .output(
        "wide",
        "x日本語テキスト漢字かなカナ日本語テキスト漢字かな\r\n",
    );
    let screen = text(&s.draw_at(1500));
    let row = screen
        .lines()
        .find(|l| l.contains("x日本"))
        .expect("the line is shown");
    assert!(row.ends_with("┃\""), "{screen}");
    assert_eq!(row.chars().filter(|&c| c == '┃').count(), 2, "{screen}");
}

/// Focused on a session wider than the dashboard (a terminal attached
/// elsewhere holds its size), a wide character cut by the right edge is
/// not drawn in the last column: the terminal put it on the next row,
/// over the prompt (`テoot@vm`), until that row was drawn again.
#[test]
fn focus_draws_no_wide_character_cut_by_the_edge() {
    let mut s = Scene::new(50, 12);
    s.live(&["sh"]);
    s.to(
        "sh",
        SessionMsg::Info(Box::new(heimdall::protocol::Info {
            cols: 120,
            rows: 11,
            terminals: Some(1),
            ..Default::default()
        })),
    )
    .output("sh", &format!("{}日本語\r\nroot@vm# ", "é".repeat(49)));
    s.key(KeyCode::Enter);
    let b = s.draw_at(1500);
    let row: String = (0..50).map(|x| b[(x, 0)].symbol().to_owned()).collect();
    assert!(!row.contains('日'), "{}", text(&b));
    assert!(text(&b).contains("root@vm#"), "{}", text(&b));
}

#[test]
fn the_page_number_never_runs_into_the_key_hints() {
    for cols in 40..=100 {
        let mut s = Scene::new(cols, 15);
        let ids: Vec<String> = (0..30).map(|i| format!("s{i:02}")).collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        s.live(&refs);
        let screen = text(&s.draw_at(1500));
        let footer = screen.lines().last().expect("a footer");
        let at = footer.find("page ").expect("a page number");
        assert!(footer[..at].ends_with(' '), "{cols} columns: {footer}");
    }
}

#[test]
fn the_empty_dashboard_names_its_socket_dir_when_given_one() {
    let mut s = Scene::new(100, 12);
    s.m.socket_dir_flag = Some("/tmp/elsewhere".into());
    let screen = s.text();
    assert!(
        screen.contains("or run `hm run --socket-dir /tmp/elsewhere COMMAND` in any terminal."),
        "{screen}"
    );
}

/// An id the form refuses says why in the form, whole, at 80 columns,
/// and the footer has the form's keys: the reason went to the footer, cut
/// off mid-rule (`(first a`), beside the grid's `x kill  n new`.
#[test]
fn the_new_session_form_says_why_an_id_is_refused_in_the_form() {
    let mut s = Scene::new(80, 24);
    s.live(&["s1"]);
    s.key(KeyCode::Char('n'));
    for c in "bad id/x".chars() {
        s.key(KeyCode::Char(c));
    }
    s.key(KeyCode::Enter);
    let text = s.text();
    // Wrapped in the form, every word of it there.
    let words = |t: &str| t.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    let shown = words(&text.replace(['│', '┃', '"'], " "));
    let rule = words(&format!(
        "'bad id/x' cannot be an id: {}",
        heimdall::paths::ID_RULE_SHORT
    ));
    assert!(
        shown.windows(rule.len()).any(|w| w == rule.as_slice()),
        "{text}"
    );
    let footer = text.lines().last().unwrap_or_default();
    assert!(
        footer.contains("Enter next") && footer.contains("Esc cancel"),
        "{footer}"
    );
    assert!(!footer.contains("kill"), "{footer}");
}

#[test]
fn a_long_command_in_the_new_session_prompt_shows_its_end() {
    let mut s = Scene::new(60, 16);
    s.live(&["s1"]);
    s.key(KeyCode::Char('n')).key(KeyCode::Enter);
    for c in "make -C build/release all check install DESTDIR=/tmp/stage-area".chars() {
        s.key(KeyCode::Char(c));
    }
    let text = s.text();
    assert!(text.contains("DESTDIR=/tmp/stage-area▏"), "{text}");
    assert!(text.contains("command:    …"), "{text}");
}

#[test]
fn a_pane_scrolled_back_says_where_and_copy_mode_shows_its_cursor_and_selection() {
    let mut s = Scene::new(60, 14);
    s.live(&["log"]);
    // The marker takes the directory's place, leaving none of it.
    s.to(
        "log",
        SessionMsg::Info(Box::new(heimdall::protocol::Info {
            cols: 58,
            rows: 12,
            workdir: "/home/me/src/project".into(),
            ..Default::default()
        })),
    );
    let lines: String = (1..=40).map(|i| format!("line {i}\r\n")).collect();
    s.output("log", &format!("{lines}$ "));
    // Two wheel-sized steps up with Shift-PgUp... then copy mode there,
    // a selection of two lines.
    s.send(Msg::Key(KeyEvent::new(
        KeyCode::PageUp,
        KeyModifiers::SHIFT,
    )));
    let scrolled = s.text();
    s.key(KeyCode::Char('['))
        .key(KeyCode::Char('k'))
        .key(KeyCode::Char('v'))
        .key(KeyCode::Char('k'))
        .key(KeyCode::Char('$'));
    let copying = s.draw_at(1500);
    insta::assert_snapshot!(format!(
        "{scrolled}\n\n{}\n\nreversed (the selection) and the cursor:\n{}",
        text(&copying),
        marked(&copying)
    ));
}

/// In a narrow pane, copy mode's marker leaves out the timer that does
/// not fit beside it, rather than drawing over its start (`┗ copy
/// [+105/244] iet 0s ┛` at 80x24).
#[test]
fn copy_mode_in_a_narrow_pane_does_not_cut_the_timer() {
    let mut s = Scene::new(80, 24);
    let ids = ["a", "b", "c", "d", "e", "f"];
    s.live(&ids);
    for id in ids {
        s.state(id, ProcessState::Active, 0);
    }
    let lines: String = (1..=3000).map(|i| format!("line {i}\r\n")).collect();
    s.output("a", &format!("{lines}$ "));
    s.state("a", ProcessState::Active, 0);
    // Far enough back for a marker of four digits each side.
    for _ in 0..200 {
        s.send(Msg::Key(KeyEvent::new(
            KeyCode::PageUp,
            KeyModifiers::SHIFT,
        )));
    }
    s.key(KeyCode::Char('['));
    let text = s.text();
    let border = text
        .lines()
        .find(|l| l.contains(" copy ["))
        .unwrap_or_else(|| panic!("no copy marker: {text}"));
    // Whatever the pane's border keeps of the timer is whole.
    let own = border.split('┛').next().unwrap_or_default();
    let after = own
        .rsplit(']')
        .next()
        .unwrap_or_default()
        .trim_matches(|c: char| c == ' ' || c == '━');
    assert!(
        after.is_empty() || after.starts_with("quiet ") || after.starts_with("idle "),
        "{border}"
    );
}

/// A session of 120x40 (the size `hm run` gives one with no terminal)
/// with 40 numbered rows, its cursor on the last.
fn tall(s: &mut Scene, id: &str) {
    s.to(
        id,
        SessionMsg::Info(Box::new(heimdall::protocol::Info {
            cols: 120,
            rows: 40,
            terminals: Some(0),
            ..Default::default()
        })),
    );
    // Claude Code's permission dialog, as the detector reports it: from
    // the question (row 22) to its footer (26); the command it asks about
    // is printed above it.
    let rows: Vec<String> = (0..40)
        .map(|i| match i {
            19 => " Bash command".to_owned(),
            20 => " rm -rf build".to_owned(),
            21 => "╌".repeat(120),
            22 => " Do you want to proceed?".to_owned(),
            23 => " > 1. Yes".to_owned(),
            24 => "   2. No".to_owned(),
            25 => String::new(),
            26 => " Esc to cancel".to_owned(),
            _ => format!("row {i}"),
        })
        .collect();
    s.output(id, &rows.join("\r\n"));
}

/// A STATE report: waiting at a permission dialog on rows 20-23, or idle.
fn report(waiting: bool) -> SessionMsg {
    let v = if waiting {
        serde_json::json!({
            "state": "waiting", "state_byte": 5, "primary": "waiting",
            "detail": "permission", "health": "alive", "agent": "claude",
            "state_ms": 0, "signals": [],
            "dialog": {"id": 7, "rule": "claude.permission", "detail": "permission",
                       "subject": "rm -rf build", "fingerprint": "f", "answers": [],
                       "screen_rows": [22, 26]},
        })
    } else {
        serde_json::json!({
            "state": "idle", "state_byte": 0, "primary": "idle", "detail": null,
            "health": "alive", "agent": "claude", "state_ms": 0, "signals": [],
        })
    };
    SessionMsg::State(serde_json::from_value(v).expect("a state report"))
}

/// A pane is a window onto the session's screen: waiting, the rows of the
/// dialog from the command it asks about (printed above it); otherwise the
/// bottom of the screen, where the cursor is. A dialog taller than the
/// pane loses its blank and rule rows, then its end. The session is never
/// resized for it.
#[test]
fn a_pane_shows_the_dialog_of_a_waiting_session_and_the_bottom_of_an_idle_one() {
    let waiting_in = |rows: u16| {
        let mut s = Scene::new(60, rows);
        s.live(&["cc1"]);
        tall(&mut s, "cc1");
        s.state("cc1", ProcessState::Waiting, 1000);
        s.to("cc1", report(true));
        s
    };
    // Room for all of it (7 rows), and what is above.
    let roomy = waiting_in(11).text();
    for shown in [
        " Bash command",
        "rm -rf build",
        "╌╌╌",
        "Do you want",
        "2. No",
        "Esc to",
    ] {
        assert!(roomy.contains(shown), "{roomy}");
    }
    assert!(!roomy.contains("row 39"), "{roomy}");
    // Three rows: the subject, the question, the first option.
    let small = waiting_in(6).text();
    let body: Vec<&str> = small.lines().skip(1).take(3).collect();
    assert_eq!(
        body,
        [
            "\"┃ rm -rf build                                             ┃\"",
            "\"┃ Do you want to proceed?                                  ┃\"",
            "\"┃ > 1. Yes                                                 ┃\"",
        ],
        "{small}"
    );
    let mut s = waiting_in(9);
    let waiting = s.text();
    s.state("cc1", ProcessState::Idle, 1000);
    s.to("cc1", report(false));
    let idle = s.text();
    assert!(idle.contains("row 39") && idle.contains("row 34"), "{idle}");
    assert!(!idle.contains("Do you want"), "{idle}");
    insta::assert_snapshot!(format!("{waiting}\n\n{idle}"));
}

/// An agent's input box at the bottom of a tall screen, its conversation
/// far above: the pane shows the box and the conversation's last lines,
/// the gap between them as one blank row (it showed the box under rows of
/// nothing).
#[test]
fn a_gap_between_an_agents_conversation_and_its_input_box_is_one_row() {
    let mut s = Scene::new(60, 10);
    s.live(&["cc1"]);
    s.sized("cc1", 120, 40);
    let said: String = (1..=12).map(|i| format!("said {i}\r\n")).collect();
    s.output(
        "cc1",
        &format!("{said}\x1b[37;1H────\r\n❯ \r\n────\x1b[38;3H"),
    );
    let text = s.text();
    let rows: Vec<&str> = text.lines().collect();
    let body: Vec<String> = rows[1..8]
        .iter()
        .map(|r| {
            r.trim_matches(|c| c == '"' || c == '┃')
                .trim_end()
                .to_owned()
        })
        .collect();
    assert_eq!(
        body,
        ["said 10", "said 11", "said 12", "", "────", "❯ █", "────"],
        "{text}"
    );
}

/// `e` shows the signals behind the state as they are now: a pushed
/// state keeps those it had when the state began (Claude Code's idle, by
/// its session-start hook, before its own status record came), so the
/// overlay asks the session (INFO) and shows what that says.
#[test]
fn the_why_overlay_shows_the_signals_of_now_not_of_when_the_state_began() {
    let idle = |signals: serde_json::Value| {
        let v = serde_json::json!({
            "state": "idle", "state_byte": 0, "primary": "idle", "detail": "ready",
            "health": "alive", "agent": "claude", "state_ms": 0, "signals": signals,
        });
        serde_json::from_value::<heimdall::protocol::StateReport>(v).expect("a state report")
    };
    let hook = serde_json::json!({"source": "hook", "rule": "hook.SessionStart",
                                  "text": "SessionStart", "since_ms": 0});
    let status = serde_json::json!({"source": "status_protocol", "rule": "status.idle",
                                    "text": "idle", "since_ms": 0});
    let mut s = Scene::new(100, 30);
    s.live(&["cc1"]);
    s.to("cc1", SessionMsg::State(idle(serde_json::json!([hook]))));
    let fx = update(
        &mut s.m,
        Msg::Key(KeyEvent::new(KeyCode::Char('e'), KeyModifiers::NONE)),
        s.t0,
    );
    assert!(
        fx.iter()
            .any(|e| matches!(e, heimdall::tui::model::Effect::Info(id) if id == "cc1")),
        "{fx:?}"
    );
    let before = s.text();
    assert!(
        before.contains("hook.SessionStart") && !before.contains("status.idle"),
        "{before}"
    );
    // Its title says whose it is: it covers the pane's own.
    assert!(before.contains(" why: cc1 "), "{before}");
    s.to(
        "cc1",
        SessionMsg::Info(Box::new(heimdall::protocol::Info {
            state: Some(idle(serde_json::json!([status, hook]))),
            ..Default::default()
        })),
    );
    let after = s.text();
    assert!(
        after.contains("status.idle") && after.contains("hook.SessionStart"),
        "{after}"
    );
}

/// A row longer than the pane is cut at its edge and marked `›`; the next
/// row is the session's next row, not the rest of this one.
#[test]
fn a_row_wider_than_the_pane_is_cut_with_a_mark_not_wrapped() {
    let mut s = Scene::new(40, 6);
    s.live(&["w"]);
    s.sized("w", 120, 4);
    let long: String = ('a'..='z').cycle().take(100).collect();
    s.output("w", &format!("{long}\r\nshort\r\n$ "));
    let text = s.text();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows[1], format!("\"┃{}›┃\"", &long[..37]), "{text}");
    assert_eq!(rows[2], format!("\"┃short{}┃\"", " ".repeat(33)), "{text}");
}

/// A row of wide characters whose last one ends at the pane's edge, and
/// goes on past it, is marked too: the mark took the last column, the
/// right half of that character, and was never drawn.
#[test]
fn a_row_of_wide_characters_cut_at_the_edge_is_marked() {
    let mut s = Scene::new(40, 6);
    s.live(&["w"]);
    s.sized("w", 120, 4);
    // 38 columns inside: 19 of them fill it, 30 go on past it.
    s.output("w", &format!("{}\r\n$ ", "漢".repeat(30)));
    let text = s.text();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows[1], format!("\"┃{} ›┃\"", "漢".repeat(18)), "{text}");
}

/// A selected pane draws its program's cursor while the program takes
/// keys, not once its supervisor is gone (lost, or orphaned): it looked
/// as if typing would reach it.
#[test]
fn a_pane_whose_supervisor_is_gone_draws_no_cursor() {
    for orphan in [None, Some(4321)] {
        let mut s = Scene::new(80, 24);
        s.live(&["sh"]);
        s.output("sh", "$ ");
        assert!(s.text().contains("$ █"), "{}", s.text());
        s.to("sh", SessionMsg::Closed(orphan));
        assert!(!s.text().contains('█'), "{orphan:?}: {}", s.text());
    }
}

/// At 80x24 with three columns, an id of eight characters is whole in
/// every title, the badge shortened instead; ended sessions say how.
#[test]
fn an_orphans_pane_names_its_pid_in_the_words_that_fit() {
    // One pane a row, three, one 20 columns wide: the long form, the short
    // one with the pid, then the bare word, never cut.
    for (width, columns, ids, said) in [
        (
            80,
            1,
            &["a", "lone"][..],
            " supervisor gone, pid 4321 runs on ",
        ),
        (80, 3, &["a", "b", "lone"][..], " orphaned, pid 4321 "),
        (20, 1, &["a", "lone"][..], " orphaned "),
    ] {
        let mut s = Scene::new(width, 24);
        s.m.columns = Some(columns);
        s.live(ids);
        s.to("lone", SessionMsg::Closed(Some(4321)));
        // The notice says how to stop it, whole (at 20 columns over the
        // pane's bottom, for as long as it lasts).
        let text = s.text();
        assert!(
            text.lines()
                .map(|l| l.trim_matches('"').trim())
                .collect::<Vec<_>>()
                .join(" ")
                .contains("'lone' lost its supervisor: hm kill lone stops it"),
            "{text}"
        );
        s.m.notice = None;
        let text = s.text();
        assert!(
            text.lines().any(|l| l.contains('╰') && l.contains(said)),
            "{columns} columns: {text}"
        );
    }
}

#[test]
fn titles_keep_the_id_and_say_how_a_session_ended() {
    let mut s = Scene::new(80, 24);
    s.m.columns = Some(3);
    let ids = [
        "agent007",
        "build-42",
        "deploy-1",
        "ok",
        "failing",
        "killed",
        "exits-129",
    ];
    s.live(&ids);
    for id in &ids[..3] {
        s.state(id, ProcessState::Waiting, 32_900);
        s.to(id, report(true));
    }
    s.to("ok", SessionMsg::Exit(0))
        .to("failing", SessionMsg::Exit(3))
        .to("killed", SessionMsg::Exit(143))
        .to("exits-129", SessionMsg::Exit(129));
    // Its record says something ended it; the other exited 129 itself.
    s.m.pane_mut("killed").expect("pane").killed = true;
    let text = s.text();
    for id in ids {
        assert!(text.contains(&format!(" {id} ")), "{id}: {text}");
    }
    insta::assert_snapshot!(text);
}

/// At 40 columns, focused on a session with a timer while another waits,
/// the bar gives up whole parts (the timer, then the count of others)
/// rather than end in the middle of a word (`Ctrl-\ back   1 n`).
#[test]
fn a_narrow_focus_bar_drops_whole_parts_not_half_words() {
    let mut s = Scene::new(40, 12);
    s.live(&["clock", "ask"]);
    s.state("clock", ProcessState::Active, 456_000);
    s.output("ask", "Proceed? [y/N] ");
    s.state("ask", ProcessState::Waiting, 1000);
    s.key(KeyCode::Right).key(KeyCode::Enter);
    let text = s.text();
    let bar = text.lines().last().unwrap_or_default().trim_matches('"');
    assert!(
        bar.contains(" clock ") && bar.contains("Ctrl-\\ back"),
        "{text}"
    );
    assert!(bar.trim_end().ends_with("back"), "{bar:?}");
    let mut s = Scene::new(60, 12);
    s.live(&["clock", "ask"]);
    s.state("clock", ProcessState::Active, 456_000);
    s.state("ask", ProcessState::Waiting, 1000);
    s.key(KeyCode::Right).key(KeyCode::Enter);
    let text = s.text();
    let bar = text.lines().last().unwrap_or_default();
    assert!(bar.contains("1 needs you"), "where it fits: {text}");
}

/// A footer too narrow for every hint keeps `? help` and `q quit` over
/// the page number (at 40 columns, with a session waiting, the page
/// number pushed out `q quit`).
#[test]
fn a_narrow_footer_keeps_help_and_quit_over_the_page_number() {
    let mut s = Scene::new(40, 12);
    let ids: Vec<String> = (0..20).map(|i| format!("s{i:02}")).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    s.live(&ids);
    s.output("s00", "Proceed? [y/N] ");
    s.state("s00", ProcessState::Waiting, 1000);
    let text = s.text();
    let footer = text.lines().last().unwrap_or_default();
    assert!(
        footer.contains("1 needs you") && footer.contains("? help") && footer.contains("q quit"),
        "{text}"
    );
}

/// While a session needs you, the key that goes to it stays in an
/// 80-column footer with pages: `1 needs you` was there, and `⇥ next`
/// went first, with room for it left over.
#[test]
fn the_key_to_the_next_that_needs_you_stays_on_an_80_column_footer() {
    let mut s = Scene::new(80, 24);
    let ids: Vec<String> = (0..10).map(|i| format!("s{i}")).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    s.live(&ids);
    s.output("s0", "Proceed? [y/N] ");
    s.state("s0", ProcessState::Waiting, 1000);
    let text = s.text();
    let footer = text.lines().last().unwrap_or_default();
    assert!(
        footer.contains("1 needs you") && footer.contains("⇥ next") && footer.contains("page 1/"),
        "{text}"
    );
    // On the other page, where the footer says where it waits.
    s.key(KeyCode::PageDown);
    let text = s.text();
    let footer = text.lines().last().unwrap_or_default();
    assert!(
        footer.contains("W on 1") && footer.contains("⇥ next"),
        "{text}"
    );
}

/// A label typed at its longest keeps its end, the cursor and the keys on
/// an 80-column footer: sixty wide characters pushed them off the row.
#[test]
fn a_long_label_being_typed_keeps_the_cursor_and_the_keys() {
    let mut s = Scene::new(80, 24);
    s.live(&["a", "b"]);
    s.output("b", "Proceed? [y/N] ");
    s.state("b", ProcessState::Waiting, 1000);
    s.key(KeyCode::Char('L'));
    for _ in 0..59 {
        s.key(KeyCode::Char('漢'));
    }
    s.key(KeyCode::Char('x'));
    let text = s.text();
    let footer = text.lines().last().unwrap_or_default();
    assert!(
        footer.contains(" label a ")
            && footer.contains("…漢漢")
            && footer.contains("漢x▏")
            && footer.contains("1 needs you")
            && footer.contains("Enter set")
            && footer.contains("Esc cancel"),
        "{footer}"
    );
    // `i` would be typed, so it is not offered.
    assert!(!footer.contains("inbox"), "{footer}");
}

/// At 80 columns the question of `x` on an orphan's pane keeps its keys:
/// its reason, on one line, wrapped and pushed them out of the box.
#[test]
fn killing_an_orphan_at_80_columns_shows_the_keys() {
    let mut s = Scene::new(80, 24);
    s.live(&["lone"]);
    s.to("lone", SessionMsg::Closed(Some(4321)));
    update(
        &mut s.m,
        Msg::Key(KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE)),
        s.t0,
    );
    let text = s.text();
    assert!(text.contains("Kill session 'lone'?"), "{text}");
    assert!(text.contains("pid 4321, outlived"), "{text}");
    assert!(text.contains("y kill") && text.contains("n keep"), "{text}");
}

/// An agent whose last turn an error ended (`idle · error`) has its badge
/// in a failure's colours (the dead state's), not a healthy rest's: it
/// read green, as `idle · ready` does.
#[test]
fn a_turn_an_error_ended_has_a_failures_badge() {
    let mut s = Scene::new(100, 30);
    s.live(&["cc", "ok"]);
    for (id, detail) in [("cc", "error"), ("ok", "ready")] {
        s.state(id, ProcessState::Idle, 5000);
        let report: heimdall::protocol::StateReport = serde_json::from_value(serde_json::json!({
            "state": "idle", "state_byte": ProcessState::Idle.as_byte(), "primary": "idle",
            "detail": detail, "health": "alive", "agent": "claude", "state_ms": 5000,
            "signals": [],
        }))
        .expect("a report");
        s.to(id, SessionMsg::State(report));
    }
    let theme = Theme::by_name("dark").expect("built-in theme");
    let dead = theme.state(Some(ProcessState::Dead.as_byte())).bg;
    let idle = theme.state(Some(ProcessState::Idle.as_byte())).bg;
    assert_ne!(dead, idle);
    let b = s.draw_at(1500);
    // The badge's first letter on the title row of each pane.
    let badge_bg = |word: &str| {
        let row: Vec<_> = b.content.chunks(usize::from(b.area.width)).collect();
        row.iter()
            .find_map(|cells| {
                let line: String = cells.iter().map(|c| c.symbol()).collect();
                let at = line.find(word)?;
                let col = line[..at].chars().count();
                Some(cells[col].bg)
            })
            .expect("the badge on screen")
    };
    assert_eq!(Some(badge_bg("idle · error")), dead);
    assert_eq!(Some(badge_bg("idle · ready")), idle);
}
