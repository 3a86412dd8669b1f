//! Sessions lost with their supervisor (the machine restarted) in the
//! dashboard: a pane each, marked `lost (restartable)`, showing the end
//! of its old output; `R` restores the selected one, or, with no lost
//! session selected, every lost session `hm restore` would start (the
//! footer says how many). Pure, as `update` is: the run loop reads the
//! manifests and runs `hm restore`.

use std::time::Instant;

use super::model::{Effect, Link, Lost, LostFound as Found, Model, Pane};

/// What the scan found: a pane for each lost session that has none (and
/// is not being started), and none left for one no longer lost.
pub fn found(m: &mut Model, lost: Vec<Found>) {
    m.panes
        .retain(|p| p.lost.is_none() || lost.iter().any(|l| l.lost.id == p.id));
    let new = lost.iter().filter(|l| m.pane(&l.lost.id).is_none()).count();
    let rows = m.history_for(new);
    let mut added = false;
    for Found { lost, tail } in lost {
        if let Some(p) = m.pane_mut(&lost.id) {
            // A pane watched as its supervisor went (killed, or the
            // machine going down) is lost too once the scan says so: it
            // said "gone" and `R` did nothing on it.
            if p.lost.is_some() || (p.link == Link::Gone && p.orphan.is_none()) {
                p.lost = Some(Lost::of(&lost));
            }
            continue;
        }
        if m.starting.contains(&lost.id) {
            continue;
        }
        let mut p = Pane::with_history(lost.id.clone(), rows);
        p.link = Link::Gone;
        p.lost = Some(Lost::of(&lost));
        // Marked and not looked at when the dashboard was quit: still so.
        p.attention = m.marked_before.remove(&lost.id);
        p.command = Some(lost.manifest.argv.join(" "));
        // Where it was last (a shell's `cd`), as a live pane shows.
        p.workdir = Some(
            lost.manifest
                .cwd
                .clone()
                .unwrap_or_else(|| lost.manifest.workdir.clone()),
        );
        p.label = lost.manifest.label.clone();
        // Its old output, at the size it was written at: the pane shows a
        // window onto it, as onto a live session's screen.
        if lost.manifest.cols > 0 && lost.manifest.rows > 0 {
            p.term.resize(crate::protocol::Size {
                cols: lost.manifest.cols.min(super::layout::MAX_UNFIT.cols),
                rows: lost.manifest.rows.min(super::layout::MAX_UNFIT.rows),
            });
        }
        p.term.feed(&tail);
        p.term.feed(crate::restore::history::RESET);
        m.panes.push(p);
        added = true;
    }
    if added {
        m.panes
            .sort_by(|a, b| crate::paths::natural_cmp(&a.id, &b.id));
        if m.selected.is_none() {
            m.selected = m.visible_ids().first().cloned();
        }
    }
}

/// `R`: the selected lost session, or every restartable one when the
/// selection is not lost. Their panes give way to the sessions when they
/// come up.
pub fn restore_key(m: &mut Model, now: Instant, fx: &mut Vec<Effect>) {
    let selected = m
        .selected
        .as_deref()
        .and_then(|id| m.pane(id))
        .and_then(|p| p.lost.clone().map(|l| (p.id.clone(), l)));
    let ids: Vec<String> = match selected {
        Some((id, Lost::Restartable)) => vec![id],
        Some((id, Lost::Refused(why))) => {
            // Why, and what does run it again: `r` starts its command
            // afresh in its directory. The others the footer counts are
            // restored all the same: `R restore 1 lost` did nothing while
            // this one was selected.
            let others = restorable(m);
            if others.is_empty() {
                let text = format!("'{id}' is not restored: {why}; r runs it again");
                m.notify(text, now);
                return;
            }
            let not = format!("'{id}' is not restored: r runs it again");
            let text = format!("restoring {}; {not}", sessions(others.len()));
            start(m, others, Some(not), fx);
            m.notify(text, now);
            return;
        }
        None => restorable(m),
    };
    if ids.is_empty() {
        // A key that does nothing says why (a supervisor gone a moment
        // ago is found at the next look for sessions, within a second).
        m.notify("no lost session to restore", now);
        return;
    }
    m.notify(format!("restoring {}…", sessions(ids.len())), now);
    start(m, ids, None, fx);
}

/// The lost sessions `R` restores, by id.
fn restorable(m: &Model) -> Vec<String> {
    m.panes
        .iter()
        .filter(|p| p.lost == Some(Lost::Restartable))
        .map(|p| p.id.clone())
        .collect()
}

/// `ids` restored: their panes give way to the sessions once found.
/// `also`: said after what came of it.
fn start(m: &mut Model, ids: Vec<String>, also: Option<String>, fx: &mut Vec<Effect>) {
    for id in &ids {
        m.starting.insert(id.clone());
    }
    m.panes.retain(|p| !ids.contains(&p.id));
    fx.push(Effect::Restore(ids, also));
}

/// `1 session`, `3 sessions`.
fn sessions(n: usize) -> String {
    format!("{n} session{}", if n == 1 { "" } else { "s" })
}

/// How many lost sessions `R` would restore, for the footer.
pub fn restartable(m: &Model) -> usize {
    restorable(m).len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::restore::manifest::{Classifier, Manifest};
    use crate::tui::model::Msg;
    use crate::tui::update::harness::{live, model, press, screen_text};
    use crate::tui::update::update;
    use crossterm::event::KeyCode;

    fn lost(id: &str, restartable: bool) -> Found {
        let manifest = Manifest {
            format: 1,
            id: id.into(),
            instance: "1-1".into(),
            label: Some("api".into()),
            argv: vec!["npm".into(), "run".into(), "dev".into()],
            argv_lossy: false,
            program_path: None,
            workdir: "/srv".into(),
            cwd: None,
            socket_dir: "/run/hm".into(),
            host: String::new(),
            boot_id: String::new(),
            classifier: Classifier::from(&crate::classify::ClassifierSpec::default()),
            cols: 80,
            rows: 24,
            env: Vec::new(),
            environ: None,
            secret_env: Vec::new(),
            started_unix_ms: 0,
            rerun: restartable,
            agent: None,
            restored_unix_ms: None,
            ended: None,
        };
        Found {
            lost: crate::lost::Lost {
                id: id.into(),
                manifest,
                refusal: (!restartable).then(|| plan_refusal().to_string()),
            },
            tail: b"old line\r\n".to_vec(),
        }
    }

    fn plan_refusal() -> crate::lost::plan::Refusal {
        crate::lost::plan::Refusal::NotRerun
    }

    #[test]
    fn lost_sessions_get_a_pane_and_r_restores_the_selected_or_all() {
        let now = Instant::now();
        let mut m = model(120, 40);
        live(&mut m, &["live"], now);
        update(
            &mut m,
            Msg::Lost(vec![lost("a", true), lost("b", true), lost("c", false)]),
            now,
        );
        assert_eq!(restartable(&m), 2);
        let a = m.pane("a").expect("a pane");
        assert_eq!(
            (&a.lost, a.label.as_deref()),
            (&Some(Lost::Restartable), Some("api"))
        );
        assert!(a.term.screen().contents().contains("old line"));
        // On a live session: every restartable one.
        m.selected = Some("live".into());
        let fx = update(&mut m, press(KeyCode::Char('R')), now);
        assert!(
            fx.contains(&Effect::Restore(vec!["a".into(), "b".into()], None)),
            "{fx:?}"
        );
        assert!(m.pane("a").is_none() && m.starting.contains("a"));
        // The next scan, before they are up, brings no pane back.
        update(
            &mut m,
            Msg::Lost(vec![lost("a", true), lost("c", false)]),
            now,
        );
        assert!(m.pane("a").is_none());
        // One that cannot be restored says why and does nothing.
        m.selected = Some("c".into());
        let fx = update(&mut m, press(KeyCode::Char('R')), now);
        assert!(
            !fx.iter().any(|e| matches!(e, Effect::Restore(..))),
            "{fx:?}"
        );
        assert_eq!(
            m.notice.as_ref().map(|(t, _)| t.as_str()),
            Some(
                "'c' is not restored: a command runs again only if it was started with \
                 'hm run --restore'; r runs it again"
            )
        );
        // Selected, it does not keep the others the footer counts from
        // being restored (`R restore 1 lost` did nothing).
        update(
            &mut m,
            Msg::Lost(vec![lost("c", false), lost("d", true)]),
            now,
        );
        m.selected = Some("c".into());
        let fx = update(&mut m, press(KeyCode::Char('R')), now);
        // What came of it, when said, still says why 'c' was left out.
        let not = Some("'c' is not restored: r runs it again".to_owned());
        assert!(
            fx.contains(&Effect::Restore(vec!["d".into()], not)),
            "{fx:?}"
        );
        assert_eq!(
            m.notice.as_ref().map(|(t, _)| t.as_str()),
            Some("restoring 1 session; 'c' is not restored: r runs it again")
        );
        // No longer lost (forgotten, or restored elsewhere): its pane goes.
        update(&mut m, Msg::Lost(Vec::new()), now);
        assert!(m.pane("c").is_none());
        assert!(m.pane("live").is_some());
    }

    /// A lost session marked `●` when the dashboard was quit is marked
    /// again when its pane comes back.
    #[test]
    fn a_lost_session_keeps_its_mark_across_a_restart() {
        let now = Instant::now();
        let mut m = model(120, 40);
        live(&mut m, &["live"], now);
        m.marked_before = ["b".to_string()].into();
        update(
            &mut m,
            Msg::Lost(vec![lost("a", true), lost("b", true)]),
            now,
        );
        let marked = |id: &str| m.pane(id).is_some_and(|p| p.attention);
        assert_eq!((marked("a"), marked("b")), (false, true));
        assert!(m.marked_before.is_empty());
    }

    /// A lost pane's bottom border says what to do in the room it has: in
    /// a narrow pane its short form, whose first word is still "lost".
    #[test]
    fn a_lost_panes_border_says_lost_however_narrow() {
        let now = Instant::now();
        let cols = 120;
        // One other session: wide panes; nine: five columns at 120, 24
        // columns each.
        for (others, restartable, want) in [
            (1, true, "lost (restartable): R"),
            (1, false, "lost: hm restore says why"),
            (9, true, "lost: R"),
            (9, false, "── lost ╯"),
        ] {
            let ids: Vec<String> = (0..others).map(|i| format!("s{i}")).collect();
            let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
            let mut m = model(cols, 35);
            live(&mut m, &ids, now);
            update(&mut m, Msg::Lost(vec![lost("a", restartable)]), now);
            let text = screen_text(&m, now);
            assert!(text.contains(want), "{want}:\n{text}");
        }
    }

    /// `e` on a lost pane says it is lost and what brings it back, not
    /// that it ended.
    #[test]
    fn the_why_overlay_of_a_lost_pane_says_lost() {
        let now = Instant::now();
        let mut m = model(120, 35);
        live(&mut m, &["s"], now);
        update(
            &mut m,
            Msg::Lost(vec![lost("a", true), lost("b", false)]),
            now,
        );
        m.selected = Some("a".into());
        update(&mut m, press(KeyCode::Char('e')), now);
        let text = screen_text(&m, now);
        assert!(text.contains("R starts it again"), "{text}");
        assert!(
            !text.contains("it ended") && !text.contains("dead"),
            "{text}"
        );
        // One `R` would not start says why, as `hm restore` does.
        update(&mut m, press(KeyCode::Esc), now);
        m.selected = Some("b".into());
        update(&mut m, press(KeyCode::Char('e')), now);
        let text = screen_text(&m, now);
        let why = format!("not restored: {}", plan_refusal());
        assert!(text.contains(&why[..60]), "{why}\n{text}");
    }

    /// A zoomed pane that goes (its lost session forgotten elsewhere)
    /// leaves the grid on show, not a blank screen.
    #[test]
    fn a_zoomed_pane_that_goes_leaves_the_grid() {
        let now = Instant::now();
        let mut m = model(120, 40);
        live(&mut m, &["x"], now);
        update(&mut m, Msg::Lost(vec![lost("a", true)]), now);
        m.selected = Some("a".into());
        update(&mut m, press(KeyCode::Char('z')), now);
        assert_eq!(m.mode, crate::tui::model::Mode::Zoom("a".into()));
        update(&mut m, Msg::Lost(Vec::new()), now);
        assert!(m.pane("a").is_none());
        assert_eq!(m.mode, crate::tui::model::Mode::Grid);
    }

    /// A session lost while the dashboard watched (its supervisor killed
    /// outright): its pane is marked lost at the next scan, `R` restores
    /// it, and once forgotten (`hm rm`) the pane goes.
    #[test]
    fn a_session_lost_while_watched_is_marked_lost() {
        let now = Instant::now();
        let mut m = model(120, 40);
        live(&mut m, &["w", "x"], now);
        update(
            &mut m,
            Msg::Session("w".into(), crate::tui::model::SessionMsg::Closed(None)),
            now,
        );
        assert_eq!(m.pane("w").and_then(|p| p.lost.clone()), None);
        update(&mut m, Msg::Lost(vec![lost("w", true)]), now);
        assert_eq!(
            m.pane("w").and_then(|p| p.lost.clone()),
            Some(Lost::Restartable)
        );
        assert_eq!(restartable(&m), 1);
        m.selected = Some("w".into());
        let fx = update(&mut m, press(KeyCode::Char('R')), now);
        assert!(
            fx.contains(&Effect::Restore(vec!["w".into()], None)),
            "{fx:?}"
        );
        // A live pane is never taken for lost.
        update(&mut m, Msg::Lost(vec![lost("x", true)]), now);
        assert_eq!(m.pane("x").and_then(|p| p.lost.clone()), None);
    }
}
