//! The one pure function from evidence to verdict.
//!
//! Channels disagree all the time (a title lags the screen by half a
//! second, a spinner keeps turning under a dialog, typed text echoes as
//! output); this file is the single place that says who wins, in one
//! ordered list, so the order can be read, tested and documented. It reads
//! no clock and keeps no state: `since` and health memory live in the
//! [`Evidence`] the detector keeps.

use super::evidence::{Evidence, Finding, hook_stands};
use crate::verdict::{Detail, Health, Primary, Signal, Source, Verdict};

/// How long a recognised agent may draw screens none of its rules knows
/// before it is `unknown · unrecognised_screen`.
pub const UNRECOGNISED_AFTER_MS: u64 = 30_000;

/// How long after a stuck session moves again it shows `recovered`.
pub const RECOVERED_FOR_MS: u64 = 10_000;

/// How long a program's `working` record outweighs a prompt on its
/// screen. A turn shows its spinner within a tenth of a second of the
/// record, so a prompt that stays this long means the record lags: Claude
/// Code keeps reporting `working` while background work it awaits runs and
/// the prompt is free for the person.
pub const STATUS_LAG_MS: u64 = 1_000;

fn signal(f: &Finding) -> Signal {
    Signal {
        source: f.source,
        rule: f.rule.clone(),
        text: f.text.clone(),
        since_ms: f.since_ms,
    }
}

/// The decision of a status record or a hook report, with the screen's detail where the
/// two agree on the primary state and the screen knows more: what kind
/// of work (the record says only `working`), text typed at the prompt (the
/// record stays `done`), a dialog the record names no kind for.
fn refined(status: &Finding, screen: &Option<Finding>) -> Decision {
    let mut d = Decision::from(status);
    if let Some(sc) = screen.as_ref().filter(|sc| sc.primary == status.primary) {
        // The spinner's `thinking` is the screen's word for any work: it
        // does not take the place of what a hook knows more exactly (a
        // tool runs, from PreToolUse).
        let generic = |d: Option<Detail>| matches!(d, None | Some(Detail::Thinking));
        let more = match status.primary {
            Primary::Active => {
                sc.detail.is_some() && (!generic(sc.detail) || generic(status.detail))
            }
            Primary::Idle => sc.detail == Some(Detail::PromptEditing),
            Primary::Waiting => status.detail.is_none(),
            _ => false,
        };
        if more {
            d.detail = sc.detail;
        }
    }
    d
}

/// Whether the decision is an agent saying it works: its own screen rule
/// (a spinner, `esc to interrupt`), its title, its record or its hook, in
/// a session that runs a recognised agent. Only such a claim can be
/// `stuck`: a program that runs silently (a `sleep`, a long compile step,
/// a shell's running command) shows no progress because it has none to
/// show.
fn claims_work(evidence: &Evidence, decision: &Decision) -> bool {
    let agent = evidence
        .agent
        .as_ref()
        .is_some_and(|a| !matches!(a.name.as_str(), super::SHELL | super::PROGRAM));
    let by_agent = decision.by.as_ref().is_some_and(|s| match s.source {
        Source::Screen => !s.rule.starts_with("shell.") && !s.rule.starts_with("repl."),
        Source::Title | Source::StatusProtocol | Source::Hook => true,
        _ => false,
    });
    agent && by_agent
}

/// What decided, before health is applied.
struct Decision {
    primary: Primary,
    detail: Option<Detail>,
    since_ms: u64,
    by: Option<Signal>,
}

impl Decision {
    fn from(f: &Finding) -> Decision {
        Decision {
            primary: f.primary,
            detail: f.detail,
            since_ms: f.since_ms,
            by: Some(signal(f)),
        }
    }
}

/// The verdict of `evidence` at `now_ms`.
///
/// Precedence, strongest first:
/// 1. the program ended: `dead`; else the screen says the program is
///    suspended (Claude Code after Ctrl-Z): `waiting · stopped`, whatever
///    its record last said;
/// 2. the program's own status record says it is blocked: `waiting`;
/// 3. process facts that a job is reading the terminal: `waiting`;
/// 4. process facts that the session's own shell reads at its prompt: `idle`;
/// 5. the program's own status record, unless it says `working` while the
///    screen has shown a prompt for [`STATUS_LAG_MS`]; the screen's detail
///    is kept when both say the same primary state (the screen tells
///    `prompt_editing` from `ready`, `responding` from `thinking`);
/// 6. a hook report that nothing seen since contradicts (see
///    [`hook_stands`]), refined by the screen in the same way;
///
/// and without a status record:
/// 3. process facts that the session's own shell reads at its prompt, in
///    its line editor: `idle` (the cursor's row is typed text then, so no
///    question on it counts);
/// 4. the screen shows a dialog or question: `waiting`;
/// 4b. process facts that a full-screen job reads: `idle`;
/// 5. the title says action is required (unless the screen shows work):
///    `waiting`;
/// 6. the screen shows work (a spinner, `esc to interrupt`): `active`;
/// 7. the title shows a spinner: `active`;
/// 8. process facts that a job runs without reading: `active`;
/// 9. the screen shows a prompt or a resting full-screen program: `idle`;
/// 10. output within the idle threshold: `active · running`;
/// 11. the title is at rest, or quiet with the process at its prompt: `idle`;
/// 12. a fresh bell or notification: `waiting`;
/// 13. otherwise `unknown`.
pub fn resolve(evidence: &Evidence, now_ms: u64) -> Verdict {
    let agent = evidence.agent.as_ref().map(|a| a.name.clone());
    if let Some(t) = evidence.ended_ms {
        return Verdict {
            primary: Primary::Dead,
            detail: None,
            health: Health::Dead,
            agent,
            since_ms: t,
            signals: vec![Signal {
                source: Source::Exit,
                rule: "exit".to_owned(),
                text: String::new(),
                since_ms: t,
            }],
        };
    }
    let fresh = |f: &Option<Finding>| f.as_ref().filter(|f| f.fresh(now_ms)).cloned();
    let screen = fresh(&evidence.screen);
    let title = fresh(&evidence.title);
    let process = fresh(&evidence.process);
    let note = fresh(&evidence.notification);
    let progress = fresh(&evidence.progress);
    let shell = fresh(&evidence.shell);
    // The shell's mark that a command runs, while what runs is no agent
    // (an agent started from the shell says what it does itself).
    let no_agent = evidence
        .agent
        .as_ref()
        .is_none_or(|a| a.name == super::SHELL);
    let shell_runs = says(&shell, Primary::Active).filter(|_| no_agent);
    let hook = fresh(&evidence.hook).filter(|h| hook_stands(h, &screen, &title));
    fn says(f: &Option<Finding>, p: Primary) -> Option<&Finding> {
        f.as_ref().filter(|f| f.primary == p)
    }
    let output_recent = evidence
        .last_output_ms
        .filter(|&t| now_ms.saturating_sub(t) < evidence.idle_threshold_ms);

    let status = evidence.status.clone();
    // The session's own interactive shell, in its line editor: no job runs,
    // nothing else can be asking.
    let at_prompt = process.as_ref().filter(|f| f.rule == "process.at_prompt");
    let status_lags = |st: &Finding| {
        st.primary == Primary::Active
            && says(&screen, Primary::Idle).is_some_and(|sc| {
                now_ms.saturating_sub(sc.since_ms.max(st.since_ms)) >= STATUS_LAG_MS
            })
    };

    // Suspended (Claude Code after Ctrl-Z) is a state its own record and
    // hooks cannot report: they stay as they were when it stopped.
    let suspended = screen
        .as_ref()
        .filter(|f| f.detail == Some(Detail::Stopped));
    let decision = if let Some(f) = suspended {
        Decision::from(f)
    } else if let Some(f) = says(&status, Primary::Waiting) {
        refined(f, &screen)
    } else if let Some(f) = says(&process, Primary::Waiting) {
        Decision::from(f)
    } else if let (Some(f), true) = (says(&process, Primary::Idle), status.is_some()) {
        Decision::from(f)
    } else if let Some(f) = status.as_ref().filter(|st| !status_lags(st)) {
        refined(f, &screen)
    } else if let Some(f) = &hook {
        refined(f, &screen)
    } else if let Some(f) = at_prompt {
        // Whatever the cursor's row says, it is text typed at the prompt.
        let mut d = refined(f, &screen);
        if says(&screen, Primary::Waiting).is_some() {
            d.detail = Some(Detail::PromptEditing);
        }
        d
    } else if let Some(f) = says(&shell, Primary::Idle) {
        // The shell says it is at its prompt: the cursor's row is typed.
        let mut d = refined(f, &screen);
        if says(&screen, Primary::Waiting).is_some() {
            d.detail = Some(Detail::PromptEditing);
        }
        d
    } else if let Some(f) = says(&screen, Primary::Waiting) {
        Decision::from(f)
    } else if let Some(f) = says(&process, Primary::Idle) {
        refined(f, &screen)
    } else if let (Some(f), None) = (
        says(&title, Primary::Waiting),
        says(&screen, Primary::Active),
    ) {
        Decision::from(f)
    } else if let Some(f) = shell_runs {
        Decision::from(f)
    } else if let Some(f) = says(&screen, Primary::Active) {
        Decision::from(f)
    } else if let Some(f) = progress.as_ref() {
        Decision::from(f)
    } else if let Some(f) = says(&title, Primary::Active) {
        Decision::from(f)
    } else if let Some(f) = says(&process, Primary::Active) {
        Decision::from(f)
    } else if let Some(f) = says(&screen, Primary::Idle) {
        Decision::from(f)
    } else if let Some(t) = output_recent {
        Decision {
            primary: Primary::Active,
            detail: Some(Detail::Running),
            since_ms: t,
            by: Some(Signal {
                source: Source::Timing,
                rule: "timing.output".to_owned(),
                text: String::new(),
                since_ms: t,
            }),
        }
    } else if let Some(f) = says(&title, Primary::Idle) {
        Decision::from(f)
    } else if let Some(f) = note.as_ref() {
        Decision::from(f)
    } else {
        Decision {
            primary: Primary::Unknown,
            detail: None,
            since_ms: evidence.started_ms,
            by: None,
        }
    };

    // A recognised agent that keeps drawing screens none of its rules
    // knows: what timing alone would say is a guess, and the rules may be
    // older than the agent. Said as such, never as a confident state.
    let decision = match evidence.unrecognised_since_ms {
        Some(t)
            if now_ms.saturating_sub(t) >= UNRECOGNISED_AFTER_MS
                && output_recent.is_some()
                && decision
                    .by
                    .as_ref()
                    .is_none_or(|s| s.source == Source::Timing) =>
        {
            let agent = evidence.agent.as_ref().map_or("agent", |a| a.name.as_str());
            let since = t.saturating_add(UNRECOGNISED_AFTER_MS);
            Decision {
                primary: Primary::Unknown,
                detail: Some(Detail::UnrecognisedScreen),
                since_ms: since,
                by: Some(Signal {
                    source: Source::Screen,
                    rule: "screen.unrecognised".to_owned(),
                    text: format!(
                        "the {agent} rules may be older than this {agent}; \
                         hm capture ID --fixture saves this screen"
                    ),
                    since_ms: since,
                }),
            }
        }
        _ => decision,
    };
    let mut signals: Vec<Signal> = decision.by.iter().cloned().collect();
    for f in [
        &status, &hook, &screen, &title, &process, &progress, &shell, &note,
    ]
    .into_iter()
    .flatten()
    {
        let s = signal(f);
        if !signals.contains(&s) {
            signals.push(s);
        }
    }

    // A record or hook said the turn finished, and the screen shows a
    // draft typed ahead: the detail is the draft's, the turn is over all
    // the same, keys or none before it.
    let said_finished = [&status, &hook].into_iter().flatten().any(|f| {
        f.detail == Some(Detail::Finished) && decision.by.as_ref().is_some_and(|b| b.rule == f.rule)
    });
    if said_finished && decision.detail == Some(Detail::PromptEditing) {
        signals.push(super::turn_over_signal(decision.since_ms));
    }

    let unchanged = now_ms.saturating_sub(evidence.screen_changed_ms);
    let (primary, detail, health, since) = if decision.primary == Primary::Active
        && unchanged >= evidence.stuck_after_ms
        && claims_work(evidence, &decision)
    {
        let since = evidence
            .screen_changed_ms
            .saturating_add(evidence.stuck_after_ms);
        signals.insert(
            0,
            Signal {
                source: Source::Timing,
                rule: "timing.stuck".to_owned(),
                text: format!("screen unchanged for {} s", unchanged / 1000),
                since_ms: since,
            },
        );
        (Primary::Stuck, None, Health::Stuck, since)
    } else {
        let health = if evidence.recovered_until_ms.is_some_and(|t| now_ms < t) {
            Health::Recovered
        } else {
            Health::Alive
        };
        (
            decision.primary,
            decision.detail,
            health,
            decision.since_ms.min(now_ms),
        )
    };
    Verdict {
        primary,
        detail,
        health,
        agent,
        since_ms: since,
        signals,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(source: Source, primary: Primary, detail: Option<Detail>, since: u64) -> Finding {
        Finding {
            source,
            rule: format!("{}.test", source.name()),
            primary,
            detail,
            text: String::new(),
            since_ms: since,
            fresh_until_ms: None,
        }
    }

    fn table() -> Evidence {
        Evidence {
            idle_threshold_ms: 3_000,
            stuck_after_ms: 60_000,
            ..Evidence::default()
        }
    }

    #[test]
    fn nothing_known_is_unknown() {
        let v = resolve(&table(), 1_000);
        assert_eq!(v.primary, Primary::Unknown);
        assert!(v.signals.is_empty());
    }

    #[test]
    fn a_dialog_on_screen_beats_a_spinning_title() {
        let mut e = table();
        e.screen = Some(finding(
            Source::Screen,
            Primary::Waiting,
            Some(Detail::Permission),
            500,
        ));
        e.title = Some(finding(Source::Title, Primary::Active, None, 100));
        e.screen_changed_ms = 500;
        let v = resolve(&e, 1_000);
        assert_eq!(
            (v.primary, v.detail),
            (Primary::Waiting, Some(Detail::Permission))
        );
        assert_eq!(v.since_ms, 500);
        assert_eq!(v.signals[0].source, Source::Screen);
        assert_eq!(v.signals.len(), 2);
    }

    #[test]
    fn a_spinning_title_beats_a_prompt_on_screen() {
        let mut e = table();
        e.screen = Some(finding(
            Source::Screen,
            Primary::Idle,
            Some(Detail::Ready),
            0,
        ));
        e.title = Some(finding(Source::Title, Primary::Active, None, 200));
        e.screen_changed_ms = 900;
        assert_eq!(resolve(&e, 1_000).primary, Primary::Active);
    }

    #[test]
    fn title_action_required_does_not_beat_work_on_screen() {
        let mut e = table();
        e.title = Some(finding(Source::Title, Primary::Waiting, None, 0));
        e.screen = Some(finding(
            Source::Screen,
            Primary::Active,
            Some(Detail::Thinking),
            0,
        ));
        assert_eq!(resolve(&e, 100).primary, Primary::Active);
        e.screen = Some(finding(
            Source::Screen,
            Primary::Idle,
            Some(Detail::Ready),
            0,
        ));
        assert_eq!(resolve(&e, 100).primary, Primary::Waiting);
    }

    #[test]
    fn recent_output_without_a_screen_finding_is_running() {
        let mut e = table();
        e.last_output_ms = Some(1_000);
        e.screen_changed_ms = 1_000;
        let v = resolve(&e, 2_000);
        assert_eq!(
            (v.primary, v.detail),
            (Primary::Active, Some(Detail::Running))
        );
        assert_eq!(resolve(&e, 4_000).primary, Primary::Unknown);
    }

    #[test]
    fn a_prompt_on_screen_beats_recent_output() {
        let mut e = table();
        e.last_output_ms = Some(1_000);
        e.screen = Some(finding(
            Source::Screen,
            Primary::Idle,
            Some(Detail::Ready),
            0,
        ));
        assert_eq!(resolve(&e, 1_500).primary, Primary::Idle);
    }

    #[test]
    fn a_job_reading_the_terminal_is_waiting_for_input() {
        let mut e = table();
        e.screen = Some(finding(
            Source::Screen,
            Primary::Active,
            Some(Detail::Running),
            0,
        ));
        e.process = Some(finding(
            Source::Process,
            Primary::Waiting,
            Some(Detail::Input),
            10,
        ));
        let v = resolve(&e, 100);
        assert_eq!(
            (v.primary, v.detail),
            (Primary::Waiting, Some(Detail::Input))
        );
    }

    #[test]
    fn active_with_an_unchanged_screen_turns_stuck() {
        let mut e = table();
        e.agent = Some(crate::detect::AgentFinding {
            name: "claude".to_owned(),
            source: Source::Command,
            since_ms: 0,
        });
        e.screen = Some(finding(
            Source::Screen,
            Primary::Active,
            Some(Detail::Thinking),
            0,
        ));
        e.screen_changed_ms = 1_000;
        assert_eq!(resolve(&e, 60_999).primary, Primary::Active);
        let v = resolve(&e, 61_000);
        assert_eq!((v.primary, v.health), (Primary::Stuck, Health::Stuck));
        assert_eq!(v.since_ms, 61_000);
    }

    #[test]
    fn a_program_running_silently_is_never_stuck() {
        let mut e = table();
        e.agent = Some(crate::detect::AgentFinding {
            name: "shell".to_owned(),
            source: Source::Command,
            since_ms: 0,
        });
        e.process = Some(finding(
            Source::Process,
            Primary::Active,
            Some(Detail::Running),
            0,
        ));
        let v = resolve(&e, 10_000_000);
        assert_eq!((v.primary, v.health), (Primary::Active, Health::Alive));
        // Nor is an agent's session whose verdict is only a job running.
        e.agent.as_mut().expect("agent").name = "claude".to_owned();
        assert_eq!(resolve(&e, 10_000_000).primary, Primary::Active);
    }

    #[test]
    fn an_agent_drawing_screens_its_rules_do_not_know_is_unknown_after_30_s() {
        let mut e = table();
        e.agent = Some(crate::detect::AgentFinding {
            name: "claude".to_owned(),
            source: Source::Command,
            since_ms: 0,
        });
        e.unrecognised_since_ms = Some(1_000);
        e.last_output_ms = Some(30_900);
        e.screen_changed_ms = 30_900;
        // Before 30 s: output is work, by timing.
        assert_eq!(resolve(&e, 30_950).primary, Primary::Active);
        e.last_output_ms = Some(31_000);
        let v = resolve(&e, 31_050);
        assert_eq!(
            (v.primary, v.detail),
            (Primary::Unknown, Some(Detail::UnrecognisedScreen))
        );
        assert!(
            v.signals[0].text.contains("the claude rules may be older"),
            "{v:?}"
        );
        // Silent, it is not drawing: the usual verdict.
        assert_eq!(resolve(&e, 40_000).primary, Primary::Unknown);
        assert_eq!(resolve(&e, 40_000).detail, None);
    }

    #[test]
    fn waiting_is_never_stuck() {
        let mut e = table();
        e.screen = Some(finding(
            Source::Screen,
            Primary::Waiting,
            Some(Detail::Question),
            0,
        ));
        let v = resolve(&e, 10_000_000);
        assert_eq!((v.primary, v.health), (Primary::Waiting, Health::Alive));
    }

    #[test]
    fn recovered_shows_until_its_time() {
        let mut e = table();
        e.screen = Some(finding(Source::Screen, Primary::Active, None, 0));
        e.screen_changed_ms = 5_000;
        e.recovered_until_ms = Some(15_000);
        assert_eq!(resolve(&e, 6_000).health, Health::Recovered);
        assert_eq!(resolve(&e, 15_000).health, Health::Alive);
    }

    #[test]
    fn ended_is_dead_whatever_else_is_known() {
        let mut e = table();
        e.screen = Some(finding(Source::Screen, Primary::Waiting, None, 0));
        e.ended_ms = Some(7);
        let v = resolve(&e, 9);
        assert_eq!(
            (v.primary, v.health, v.since_ms),
            (Primary::Dead, Health::Dead, 7)
        );
    }

    #[test]
    fn a_stale_notification_is_ignored() {
        let mut e = table();
        let mut n = finding(Source::Notification, Primary::Waiting, None, 0);
        n.fresh_until_ms = Some(5_000);
        e.notification = Some(n);
        assert_eq!(resolve(&e, 1_000).primary, Primary::Waiting);
        assert_eq!(resolve(&e, 5_000).primary, Primary::Unknown);
    }

    fn status(primary: Primary, detail: Option<Detail>, since: u64) -> Finding {
        finding(Source::StatusProtocol, primary, detail, since)
    }

    #[test]
    fn a_blocked_record_is_waiting_before_the_dialog_is_drawn() {
        let mut e = table();
        e.screen = Some(finding(
            Source::Screen,
            Primary::Active,
            Some(Detail::Thinking),
            0,
        ));
        e.status = Some(status(Primary::Waiting, Some(Detail::Permission), 900));
        let v = resolve(&e, 950);
        assert_eq!(
            (v.primary, v.detail),
            (Primary::Waiting, Some(Detail::Permission))
        );
        assert_eq!(v.signals[0].source, Source::StatusProtocol);
    }

    #[test]
    fn a_working_record_ends_a_dialog_the_screen_still_shows() {
        let mut e = table();
        e.screen = Some(finding(
            Source::Screen,
            Primary::Waiting,
            Some(Detail::Permission),
            0,
        ));
        e.status = Some(status(Primary::Active, Some(Detail::Thinking), 1_000));
        assert_eq!(resolve(&e, 1_050).primary, Primary::Active);
    }

    #[test]
    fn a_working_record_yields_to_a_prompt_that_stays() {
        // Background work keeps the record `working` while the prompt is
        // free: after STATUS_LAG_MS of prompt the screen wins.
        let mut e = table();
        e.status = Some(status(Primary::Active, Some(Detail::Thinking), 1_000));
        e.screen = Some(finding(
            Source::Screen,
            Primary::Idle,
            Some(Detail::Ready),
            1_200,
        ));
        assert_eq!(resolve(&e, 1_500).primary, Primary::Active);
        let v = resolve(&e, 1_200 + STATUS_LAG_MS);
        assert_eq!((v.primary, v.detail), (Primary::Idle, Some(Detail::Ready)));
        assert_eq!(v.signals[0].source, Source::Screen);
    }

    #[test]
    fn the_screen_adds_detail_the_record_does_not_carry() {
        let mut e = table();
        e.status = Some(status(Primary::Active, Some(Detail::Thinking), 0));
        e.screen = Some(finding(
            Source::Screen,
            Primary::Active,
            Some(Detail::Compacting),
            0,
        ));
        assert_eq!(resolve(&e, 10).detail, Some(Detail::Compacting));
        // But the spinner's `thinking` leaves a tool run a hook reported.
        e.status = None;
        e.hook = Some(hook(Primary::Active, Some(Detail::UsingTools), 0));
        e.screen = Some(finding(
            Source::Screen,
            Primary::Active,
            Some(Detail::Thinking),
            0,
        ));
        assert_eq!(resolve(&e, 10).detail, Some(Detail::UsingTools));
        e.hook = None;
        // `done` stays while the person types at the prompt: the draft's
        // detail, and the turn over all the same.
        e.status = Some(status(Primary::Idle, Some(Detail::Finished), 0));
        e.screen = Some(finding(
            Source::Screen,
            Primary::Idle,
            Some(Detail::PromptEditing),
            0,
        ));
        let v = resolve(&e, 10);
        assert_eq!(v.detail, Some(Detail::PromptEditing));
        assert!(
            v.signals.iter().any(|s| s.rule == super::super::TURN_OVER),
            "{v:?}"
        );
        e.screen = Some(finding(
            Source::Screen,
            Primary::Idle,
            Some(Detail::Ready),
            0,
        ));
        assert_eq!(resolve(&e, 10).detail, Some(Detail::Finished));
    }

    #[test]
    fn the_shell_back_at_its_prompt_outweighs_a_record_left_behind() {
        // An agent killed without withdrawing its record.
        let mut e = table();
        e.status = Some(status(Primary::Active, Some(Detail::Thinking), 0));
        let mut p = finding(Source::Process, Primary::Idle, Some(Detail::Ready), 500);
        p.fresh_until_ms = Some(10_000);
        e.process = Some(p);
        assert_eq!(resolve(&e, 600).primary, Primary::Idle);
    }

    fn hook(primary: Primary, detail: Option<Detail>, since: u64) -> Finding {
        let mut f = finding(Source::Hook, primary, detail, since);
        f.fresh_until_ms = Some(since + crate::detect::hooks::HOOK_FRESH_MS);
        f
    }

    #[test]
    fn a_permission_hook_is_waiting_before_the_dialog_is_drawn() {
        let mut e = table();
        e.screen = Some(finding(
            Source::Screen,
            Primary::Active,
            Some(Detail::Thinking),
            100,
        ));
        e.hook = Some(hook(Primary::Waiting, Some(Detail::Permission), 900));
        let v = resolve(&e, 950);
        assert_eq!(
            (v.primary, v.detail),
            (Primary::Waiting, Some(Detail::Permission))
        );
        assert_eq!(v.signals[0].source, Source::Hook);
        // The dialog drawn agrees; its resting title does not end it.
        e.screen = Some(finding(
            Source::Screen,
            Primary::Waiting,
            Some(Detail::Permission),
            1_000,
        ));
        e.title = Some(finding(Source::Title, Primary::Idle, None, 1_000));
        assert_eq!(resolve(&e, 1_100).primary, Primary::Waiting);
    }

    #[test]
    fn work_seen_after_a_permission_hook_ends_it() {
        // Approving fires no hook: the spinner coming back is the answer.
        let mut e = table();
        e.hook = Some(hook(Primary::Waiting, Some(Detail::Permission), 900));
        e.screen = Some(finding(
            Source::Screen,
            Primary::Active,
            Some(Detail::Thinking),
            5_000,
        ));
        e.screen_changed_ms = 5_000;
        let v = resolve(&e, 5_100);
        assert_eq!(v.primary, Primary::Active);
        assert_eq!(v.signals[0].source, Source::Screen);
        // `hm explain` shows the report as no longer counting, though its
        // time has not run out.
        let rows = e.rows(5_100);
        let row = rows
            .iter()
            .find(|r| r.source == Source::Hook)
            .expect("the hook's row");
        assert!(!row.fresh, "{row:?}");
        e.screen = None;
        let rows = e.rows(5_100);
        let row = rows
            .iter()
            .find(|r| r.source == Source::Hook)
            .expect("the hook's row");
        assert!(row.fresh, "{row:?}");
    }

    #[test]
    fn a_prompt_seen_after_a_turn_began_ends_it() {
        // Esc interrupts a turn without a hook.
        let mut e = table();
        e.screen = Some(finding(
            Source::Screen,
            Primary::Idle,
            Some(Detail::Ready),
            0,
        ));
        e.hook = Some(hook(Primary::Active, Some(Detail::Thinking), 1_000));
        e.screen_changed_ms = 1_000;
        assert_eq!(resolve(&e, 1_050).primary, Primary::Active);
        e.screen = Some(finding(
            Source::Screen,
            Primary::Idle,
            Some(Detail::Ready),
            4_000,
        ));
        assert_eq!(resolve(&e, 4_100).primary, Primary::Idle);
    }

    #[test]
    fn a_stale_hook_and_the_status_record_yield() {
        let mut e = table();
        e.hook = Some(hook(Primary::Waiting, Some(Detail::Permission), 0));
        e.status = Some(status(Primary::Active, Some(Detail::Thinking), 10));
        assert_eq!(resolve(&e, 20).primary, Primary::Active);
        e.status = None;
        assert_eq!(resolve(&e, 20).primary, Primary::Waiting);
        let stale = crate::detect::hooks::HOOK_FRESH_MS;
        assert_eq!(resolve(&e, stale).primary, Primary::Unknown);
    }
}
