//! A pane's title: the session's id, its label and attention mark on the
//! left, the state badge on the right, fitted into the pane's width. The
//! id is what a person reads to know which session it is, so it is the
//! last thing to go: first the badge takes its shorter forms (`waiting ·
//! permission 32.9s`, `W perm 33s`, `W 33s`) for the label, a person's
//! name for the session, then the label is cut, then the badge is the
//! letter alone (`W`), then the attention mark goes while the id is whole (the border's
//! colour still says it); then the id is cut, down to ten columns, to
//! keep the state's letter, and two columns more to keep the mark, and
//! only in a narrower pane does the badge go and the id take
//! it all (another machine's host cut first, its session id last).

use std::time::Instant;

use unicode_width::UnicodeWidthStr;

use crate::classify::ProcessState;
use crate::client::clock_ms;
use crate::cut::short_id;
use crate::tui::model::{Model, Pane};
use crate::verdict::Detail;

/// Columns of the border kept between a label and the badge.
const RULE_BEFORE_BADGE: usize = 2;

/// Columns of the border always kept between what is on the left and the
/// badge: without them `failing ●  exited 3` read as one run of words.
const MIN_RULE: usize = 1;

/// Columns of an id kept, cut, to show the state's letter beside it;
/// narrower, the id alone is shown.
const MIN_ID_KEPT: usize = 10;

/// The fewest columns of a label shown, cut: fewer say nothing.
const MIN_LABEL: usize = 3;

/// The title as it fits: each part without its padding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fitted {
    pub id: String,
    pub label: Option<String>,
    pub attention: bool,
    /// Empty when there is no room for any form of it.
    pub badge: String,
}

/// Fits the title into a pane `width` columns wide (its corners
/// included). `badges` are the badge's forms, longest first, the state's
/// letter alone last. A label, a person's name for the session, comes
/// before the badge's detail: the longest badge that leaves it whole,
/// else the letter and the time (the last form but one) with as much of
/// it as fits; the letter alone only if nothing of the label fits
/// otherwise. (`cc2 ess… A think 56s` at 80x24 said `think` and lost the
/// name `L` gave it.)
pub fn fit(
    id: &str,
    label: Option<&str>,
    attention: bool,
    badges: &[String],
    width: u16,
) -> Fitted {
    let room = usize::from(width).saturating_sub(2);
    let first = fit_badge(id, attention, badges, room, 0);
    let Some(label) = label.filter(|l| !l.is_empty()) else {
        return first;
    };
    let spare = |n: usize| n + 1 + RULE_BEFORE_BADGE - MIN_RULE;
    let shorter = &badges[..badges.len().saturating_sub(1)];
    let timed = &badges[badges.len().saturating_sub(2)..badges.len().saturating_sub(1)];
    // Whole, or cut beside the letter and the time.
    let tries = [(shorter, spare(label.width())), (timed, spare(MIN_LABEL))];
    for (forms, keep) in tries {
        let t = fit_badge(id, attention, forms, room, keep);
        if !t.badge.is_empty()
            && let Some(t) = with_label(t, label, room)
        {
            return t;
        }
    }
    with_label(first.clone(), label, room).unwrap_or(first)
}

/// The id, the attention mark and the longest badge that fit with `keep`
/// columns to spare; without a badge, then without the mark, then the id
/// cut.
fn fit_badge(id: &str, attention: bool, badges: &[String], room: usize, keep: usize) -> Fitted {
    let mut t = Fitted {
        id: id.to_owned(),
        label: None,
        attention,
        badge: String::new(),
    };
    let fits = |t: &Fitted| used(t) + keep <= room;
    let longest = |t: &mut Fitted| {
        for form in badges {
            t.badge.clone_from(form);
            if fits(t) {
                return true;
            }
        }
        t.badge.clear();
        false
    };
    if !longest(&mut t) && keep == 0 {
        t.attention = false;
        if longest(&mut t) {
            return t;
        }
        // The state's letter is worth more than the id's tail: the id is
        // cut to keep it, as long as MIN_ID_KEPT columns of it stay; and
        // once it is cut, by two more for the mark (a long id's pane
        // that finished while you were away showed no `●`).
        if let Some(letter) = badges.last() {
            let without_mark = room.saturating_sub(2 + letter.width() + 2 + MIN_RULE);
            let with_mark = without_mark.saturating_sub(2);
            let tries = [(with_mark, true), (without_mark, false)];
            for (spare, mark) in tries.into_iter().filter(|&(_, mark)| attention || !mark) {
                if spare >= MIN_ID_KEPT && spare < id.width() {
                    t.id = short_id(id, spare);
                    t.attention = mark;
                    t.badge.clone_from(letter);
                    return t;
                }
            }
        }
        if !fits(&t) {
            t.id = short_id(id, room.saturating_sub(2));
        }
    }
    t
}

/// `t` with as much of `label` as its room leaves, cut, if that is at
/// least [`MIN_LABEL`] columns.
fn with_label(mut t: Fitted, label: &str, room: usize) -> Option<Fitted> {
    // A cut label stops short of the badge: a stretch of the border
    // between them keeps them two things, not one run of words.
    let rule = if t.badge.is_empty() {
        0
    } else {
        RULE_BEFORE_BADGE - MIN_RULE
    };
    let left = room.saturating_sub(used(&t) + 1 + rule);
    (left >= MIN_LABEL).then(|| {
        t.label = Some(crate::cut::end(label, left));
        t
    })
}

/// Columns the title takes: ` id label ● `, the least of the rule and
/// ` badge `.
fn used(t: &Fitted) -> usize {
    let mut n = t.id.width() + 2;
    if let Some(l) = &t.label {
        n += l.width() + 1;
    }
    if t.attention {
        n += 2;
    }
    if !t.badge.is_empty() {
        n += t.badge.width() + 2 + MIN_RULE;
    }
    n
}

/// The badge's forms, longest first: what the pane's state is and for
/// how long, as much as there is room for.
pub fn badges(m: &Model, p: &Pane, now: Instant) -> Vec<String> {
    let mut forms = if let Some((since, _)) = m.host_down(p) {
        unreachable(p, since)
    } else if p.orphan.is_some() {
        vec!["orphaned".into(), "orph".into(), "✗".into()]
    } else if p.lost.is_some() {
        // Its supervisor died with the machine: `R` restores it.
        vec!["lost".into(), "✗".into()]
    } else if p.ended() {
        ended(p.exit, p.killed, p.state_ms(now))
    } else {
        live(p, p.state_ms(now))
    };
    forms.dedup();
    forms
}

/// A live session: `waiting · permission +2 32.9s`, then without the
/// children, `W perm 33s`, `W 33s` and `W`.
fn live(p: &Pane, ms: Option<u64>) -> Vec<String> {
    let Some(state) = p.state() else {
        return vec!["…".into()];
    };
    let name = crate::classify::state_name(state);
    let detail = p
        .report
        .as_ref()
        .filter(|r| r.state_byte == state)
        .and_then(|r| r.detail);
    // An agent's work by its kind, as the legend (`b`) has the letters:
    // its state byte says only active.
    let kind = match detail {
        Some(Detail::Thinking) => "T",
        Some(Detail::Responding) => "S",
        Some(Detail::UsingTools) => "U",
        _ => letter(state),
    };
    let letter = letter(state);
    let long = |s: String| match ms {
        Some(ms) => format!("{s} {}", clock_ms(ms)),
        None => s,
    };
    let short = |s: String| match ms {
        Some(ms) => format!("{s} {}", short_ms(ms)),
        None => s,
    };
    let mut forms = vec![long(p.state_label().unwrap_or_else(|| name.to_owned()))];
    match detail {
        Some(d) => {
            forms.push(long(format!("{name} · {}", d.name())));
            forms.push(short(format!("{letter} {}", short_detail(d.name()))));
        }
        None => forms.push(short(name.to_owned())),
    }
    forms.push(short(kind.to_owned()));
    forms.push(kind.to_owned());
    forms
}

/// An ended session, in `hm ls`'s words: `exited 0 5m03s` or `exited 3
/// 5m03s` (the mark, `✗3`, and the colour say it failed), `killed
/// SIGTERM` (`✗TERM`) when a signal ended it, `killed (exit 15)` for a code of its
/// own when its end was asked for, `gone` with no code (its supervisor
/// went away); then `✓ 5m` or `✗3 5m`, then `✓` or `✗3`. A code above 128
/// names a signal only when one ended the program: one that exits 129 on
/// its own was not hung up on.
fn ended(exit: Option<i32>, killed: bool, ms: Option<u64>) -> Vec<String> {
    let signal = exit.filter(|_| killed).and_then(crate::client::signal_name);
    let (word, mark) = match (exit, signal) {
        // The signal's name, as wide as a code: `✗TERM`, not `✗143`,
        // which read as a program that failed with 143.
        (Some(_), Some(sig)) => (
            format!("killed {sig}"),
            format!("✗{}", sig.trim_start_matches("SIG")),
        ),
        // Stopped on request is no success, whatever the code: a `✓`
        // for it read as a job done.
        (Some(code), None) if killed => {
            let mark = if code == 0 {
                "✗".to_owned()
            } else {
                format!("✗{code}")
            };
            (format!("killed (exit {code})"), mark)
        }
        (Some(0), _) => ("exited 0".to_owned(), "✓".to_owned()),
        (Some(code), None) => (format!("exited {code}"), format!("✗{code}")),
        (None, _) => ("gone".to_owned(), "✗".to_owned()),
    };
    match ms {
        Some(ms) => vec![
            format!("{word} {}", clock_ms(ms)),
            word,
            format!("{mark} {}", short_ms(ms)),
            mark,
        ],
        None => vec![word, mark],
    }
}

/// Another machine's session while that machine is down: what it was
/// last seen doing, and when the host dropped; its timer stopped then.
fn unreachable(p: &Pane, since_unix_ms: u64) -> Vec<String> {
    let clock = crate::clock::local_time_of_day(since_unix_ms);
    let hh_mm = clock.get(..5).unwrap_or(&clock);
    let was = match (p.ended(), p.state()) {
        (true, _) => ended(p.exit, p.killed, None).remove(0),
        (false, Some(s)) => crate::classify::state_name(s).to_owned(),
        (false, None) => "connecting".to_owned(),
    };
    vec![
        format!("unreachable · was {was}, {hh_mm}"),
        format!("unreachable · was {was}"),
        "unreachable".into(),
        "unreach".into(),
        // Not `✗`, which says a session failed: this one may run on,
        // and what it is doing is not known here.
        "?".into(),
    ]
}

/// A state in one letter, for the narrowest badges (docs/tui.md lists
/// them).
fn letter(state: u8) -> &'static str {
    match ProcessState::from_byte(state) {
        Some(ProcessState::Idle) => "I",
        Some(ProcessState::Thinking) => "T",
        Some(ProcessState::Streaming) => "S",
        Some(ProcessState::ToolUse) => "U",
        Some(ProcessState::Active) => "A",
        Some(ProcessState::Waiting) => "W",
        Some(ProcessState::Stuck) => "!",
        Some(ProcessState::Dead) => "✗",
        Some(ProcessState::Unknown) | None => "?",
    }
}

/// A detail in a few letters (`permission` is `perm`).
fn short_detail(name: &str) -> &str {
    match name {
        "thinking" => "think",
        "using_tools" => "tool",
        "responding" => "resp",
        "compacting" => "comp",
        "permission" => "perm",
        "question" => "ask",
        "plan_approval" => "plan",
        "folder_trust" => "trust",
        "external_editor" => "edit",
        "onboarding" => "setup",
        "stopped" => "stop",
        "prompt_editing" => "typing",
        "finished" => "done",
        other => other,
    }
}

/// A duration in its largest whole unit: `33s`, `5m`, `2h`, `3d`.
pub fn short_ms(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86_400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forms(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn waiting() -> Vec<String> {
        forms(&["waiting · permission 32.9s", "W perm 33s", "W 33s", "W"])
    }

    #[test]
    fn the_width_for_a_whole_id_shows_it_whole() {
        let id = "frontend-tests-long";
        let w = crate::tui::layout::width_for_whole_id(id);
        let t = fit(id, None, true, &waiting(), w);
        assert_eq!((t.id.as_str(), t.badge.as_str()), (id, "W"));
        let t = fit(id, None, true, &waiting(), w - 1);
        assert_ne!(t.id, id);
    }

    #[test]
    fn with_room_everything_is_said() {
        let t = fit("cc2", Some("tests"), true, &waiting(), 60);
        assert_eq!(t.id, "cc2");
        assert_eq!(t.label.as_deref(), Some("tests"));
        assert!(t.attention);
        assert_eq!(t.badge, "waiting · permission 32.9s");
    }

    #[test]
    fn the_badge_shortens_first_and_the_label_takes_what_is_left() {
        // 3 columns at 80x24: 26 wide. The id is whole, the label before
        // the detail, the time kept.
        let t = fit("cc2", Some("the api tests"), false, &waiting(), 26);
        assert_eq!(t.id, "cc2");
        assert_eq!(t.badge, "W 33s");
        assert_eq!(t.label.as_deref(), Some("the api…"));
        // Whole, with the longest badge that leaves it so.
        let t = fit("cc2", Some("the api tests"), false, &waiting(), 44);
        assert_eq!(t.badge, "W perm 33s");
        assert_eq!(t.label.as_deref(), Some("the api tests"));
        let t = fit("cc2", Some("api"), false, &waiting(), 44);
        assert_eq!(t.label.as_deref(), Some("api"));
        assert_eq!(t.badge, "waiting · permission 32.9s");
        // Two columns of the border between a label and the badge.
        let t = fit("cc2", Some("the api"), false, &waiting(), 44);
        assert_eq!(t.badge, "W perm 33s");
        assert!(used(&t) < 42, "{t:?}");
    }

    #[test]
    fn a_label_takes_the_badges_detail_but_never_its_time() {
        let t = fit("agent007", Some("backend"), false, &waiting(), 30);
        assert_eq!(
            (t.badge.as_str(), t.label.as_deref()),
            ("W 33s", Some("backend"))
        );
        let t = fit("agent007", Some("backend"), false, &waiting(), 28);
        assert_eq!(
            (t.badge.as_str(), t.label.as_deref()),
            ("W 33s", Some("backe…"))
        );
        // But never the badge for the label, nor its time.
        let t = fit("agent007", Some("backend"), false, &waiting(), 24);
        assert_eq!((t.badge.as_str(), t.label.as_deref()), ("W 33s", None));
    }

    #[test]
    fn the_border_shows_between_the_left_and_the_badge() {
        let ended = forms(&["exited 3 1s", "exited 3", "✗3 1s", "✗3"]);
        // ` failing ● ` and ` exited 3 1s ` are 24 columns: in 24 they
        // would touch.
        let t = fit("failing", None, true, &ended, 26);
        assert_eq!(t.badge, "exited 3");
        assert!(used(&t) <= 24, "{t:?}");
    }

    #[test]
    fn an_id_of_eight_is_whole_in_a_pane_of_twenty_columns() {
        for id in ["a", "cc2", "build-42", "agent007"] {
            for attention in [false, true] {
                let t = fit(id, Some("label"), attention, &waiting(), 20);
                assert_eq!(t.id, id);
                assert!(used(&t) <= 18, "{t:?}");
                // And some of the badge is left.
                assert!(!t.badge.is_empty(), "{t:?}");
            }
        }
        let t = fit("agent007", None, false, &waiting(), 20);
        assert_eq!(t.badge, "W 33s");
    }

    #[test]
    fn a_long_id_is_cut_to_keep_the_states_letter() {
        let t = fit("a-very-long-session-name", None, false, &waiting(), 20);
        assert_eq!(t.badge, "W");
        assert_eq!(t.id, "a-ver…n-name");
        assert_eq!(used(&t), 18);
        // Cut anyway, it is cut two columns more for the mark.
        let t = fit("a-very-long-session-name", None, true, &waiting(), 20);
        assert_eq!(t.badge, "W");
        assert!(t.attention);
        assert_eq!(t.id, "a-ve…-name");
        assert_eq!(used(&t), 18);
        // Where that would leave fewer than ten columns, the mark goes.
        let t = fit("a-very-long-session-name", None, true, &waiting(), 19);
        assert_eq!((t.badge.as_str(), t.attention), ("W", false));
        assert_eq!(t.id, "a-ver…-name");
        // Narrower, ten columns of the id come before the letter.
        let t = fit("a-very-long-session-name", None, true, &waiting(), 14);
        assert_eq!(t.badge, "");
        assert_eq!(t.id, "a-ve…-name");
        assert_eq!(used(&t), 12);
    }

    #[test]
    fn ids_that_differ_at_the_end_stay_apart_when_cut() {
        let a = fit("claude-worker-frontend-1", None, false, &waiting(), 20);
        let b = fit("claude-worker-frontend-2", None, false, &waiting(), 20);
        assert_eq!(
            (a.id.as_str(), b.id.as_str()),
            ("claud…tend-1", "claud…tend-2")
        );
        let a = fit(
            "hmremote:claude-worker-frontend-1",
            None,
            false,
            &waiting(),
            14,
        );
        assert_eq!(a.id, "…:cla…nd-1");
    }

    #[test]
    fn a_remote_pane_keeps_its_session_id_and_cuts_the_host() {
        let t = fit("hmremote:cc1", None, false, &waiting(), 26);
        assert_eq!((t.id.as_str(), t.badge.as_str()), ("hmremote:cc1", "W 33s"));
        let t = fit("hmremote:cc1", None, false, &waiting(), 20);
        assert_eq!(t.id, "hmremote:cc1");
        assert_eq!(t.badge, "W");
        // Two panes of one host stay apart however narrow.
        let a = fit("hmremote:f1", None, false, &waiting(), 12);
        let b = fit("hmremote:f2", None, false, &waiting(), 12);
        assert_eq!((a.id.as_str(), b.id.as_str()), ("hmre…:f1", "hmre…:f2"));
        let a = fit("hmremote:build-42", None, false, &waiting(), 14);
        assert_eq!(a.id, "…:build-42");
    }

    #[test]
    fn ended_sessions_say_how_at_a_glance() {
        assert_eq!(
            ended(Some(0), false, Some(303_000)),
            forms(&["exited 0 5m03s", "exited 0", "✓ 5m", "✓"])
        );
        assert_eq!(
            ended(Some(3), false, Some(2_000)),
            forms(&["exited 3 2s", "exited 3", "✗3 2s", "✗3"])
        );
        // A program that exits 129 itself (as one may on a hang-up it
        // caught) was not killed: its code, not a signal's name.
        assert_eq!(ended(Some(129), false, None)[0], "exited 129");
        assert_eq!(ended(None, false, None), forms(&["gone", "✗"]));
        // Asked to end, it ended as it does on SIGTERM (less: 15).
        assert_eq!(
            ended(Some(15), true, Some(2_000)),
            forms(&["killed (exit 15) 2s", "killed (exit 15)", "✗15 2s", "✗15"])
        );
        assert_eq!(
            ended(Some(143), true, None),
            forms(&["killed SIGTERM", "✗TERM"])
        );
        // Killed and exiting 0 (a program that ends cleanly on SIGTERM):
        // not the `✓` of a job done.
        assert_eq!(
            ended(Some(0), true, Some(2_000)),
            forms(&["killed (exit 0) 2s", "killed (exit 0)", "✗ 2s", "✗"])
        );
    }

    #[test]
    fn short_durations_keep_their_largest_unit() {
        assert_eq!(short_ms(900), "0s");
        assert_eq!(short_ms(32_900), "32s");
        assert_eq!(short_ms(61_000), "1m");
        assert_eq!(short_ms(7_300_000), "2h");
        assert_eq!(short_ms(200_000_000), "2d");
    }
}
