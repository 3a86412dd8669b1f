//! Dialogs in the corpus recordings as answering them sees them: which
//! rule, what they ask about, the keys that approve and deny them; and no
//! dialog anywhere the labels say there is none (typed prompts included).

use std::path::Path;

use heimdall::detect::offline::{Cast, Labels, Replay, SAMPLE_MS};
use heimdall::detect::rules::Answer;
use heimdall::detect::{Dialog, Settings};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus");

fn load(name: &str) -> (Cast, Labels) {
    let dir = Path::new(CORPUS);
    let cast = Cast::load(&dir.join(format!("{name}.cast"))).expect("cast");
    let labels = Labels::load(&dir.join(format!("{name}.labels.json"))).expect("labels");
    (cast, labels)
}

fn agent_of(name: &str) -> Option<&'static str> {
    ["claude", "codex", "gemini", "aider"]
        .into_iter()
        .find(|a| name.starts_with(a))
}

/// What answering the dialog in the middle of `name`'s first segment
/// labelled `detail` finds: its rule, subject, and the keys of each answer
/// (`None`: no keys for it).
struct Expected {
    name: &'static str,
    detail: &'static str,
    rule: &'static str,
    subject: Option<&'static str>,
    approve: Option<&'static [&'static str]>,
    deny: Option<&'static [&'static str]>,
    /// Approving with the dialog's option not to be asked again.
    always: Option<&'static [&'static str]>,
}

const LOOP: &str = "for i in 1 2 3 4 5; do echo step $i; sleep 1.5; done";
/// Claude Code's plan, as its approval dialog shows it above the question.
const PLAN: &str = "Plan 1. Update hello.py to print a friendlier greeting. 2. Run it to verify.";

/// The loop of the auto-mode recordings (`automode_specs.py`).
const STEPS: &str = "for i in 1 2 3 4 5; do echo step $i >> steps.txt; sleep 1.5; done";

const EXPECTED: &[Expected] = &[
    // Auto mode through a gateway: its notice that it cannot check the
    // command, then the command's own No-first dialog. Approving the
    // notice stays in auto mode and approves the command in the dialog
    // that follows, as the recording's keys did (Enter, Down, Enter); one
    // `y` in the inbox stayed and left the command asked about again.
    Expected {
        name: "claude330_automode_approve_noprobe",
        detail: "auto_mode_notice",
        rule: "claude.auto_mode_unchecked",
        subject: Some(STEPS),
        approve: Some(&["Enter", "Down", "Enter"]),
        deny: Some(&["Escape"]),
        always: None,
    },
    Expected {
        name: "claude330_automode_approve_noprobe",
        detail: "permission",
        rule: "claude.unchecked_permission",
        subject: Some(STEPS),
        approve: Some(&["Down", "Enter"]),
        deny: Some(&["Escape"]),
        always: None,
    },
    Expected {
        name: "claude_bash_permission",
        detail: "permission",
        rule: "claude.permission",
        subject: Some(LOOP),
        approve: Some(&["1"]),
        deny: Some(&["Escape"]),
        always: None,
    },
    Expected {
        name: "claude330_bash_permission_noprobe",
        detail: "permission",
        rule: "claude.permission",
        subject: Some(LOOP),
        approve: Some(&["1"]),
        deny: Some(&["Escape"]),
        always: None,
    },
    // The verdict comes from the program's own record here; the screen
    // still has to show the dialog.
    Expected {
        name: "claude330_bash_permission",
        detail: "permission",
        rule: "claude.permission",
        subject: Some(LOOP),
        approve: Some(&["1"]),
        deny: Some(&["Escape"]),
        always: None,
    },
    Expected {
        name: "claude330_edit_approval_noprobe",
        detail: "permission_edit",
        rule: "claude.permission",
        subject: Some("hello.py"),
        approve: Some(&["1"]),
        deny: Some(&["Escape"]),
        always: Some(&["2"]),
    },
    Expected {
        name: "claude_plan_approval",
        detail: "plan_approval",
        rule: "claude.plan_approval",
        subject: Some(PLAN),
        approve: Some(&["2"]),
        deny: None,
        always: None,
    },
    Expected {
        name: "claude330_plan_approval_noprobe",
        detail: "plan_approval",
        rule: "claude.plan_approval",
        subject: Some(PLAN),
        approve: Some(&["2"]),
        deny: None,
        always: None,
    },
    Expected {
        name: "claude_trust_answer_exit",
        detail: "folder_trust",
        rule: "claude.folder_trust",
        subject: Some("/tmp/corpus-run/claude_trust_answer_exit/proj"),
        approve: Some(&["Enter"]),
        deny: None,
        always: None,
    },
    Expected {
        name: "claude330_trust_answer_exit_noprobe",
        detail: "folder_trust",
        rule: "claude.folder_trust",
        subject: Some("/tmp/corpus-run/claude330_trust_answer_exit_noprobe/proj"),
        approve: Some(&["Down", "Enter"]),
        deny: None,
        always: None,
    },
    Expected {
        name: "claude_question",
        detail: "question",
        rule: "claude.question",
        subject: Some("Which greeting should hello.py print?"),
        approve: None,
        deny: None,
        always: None,
    },
    Expected {
        name: "claude330_question",
        detail: "question",
        rule: "claude.question",
        subject: Some("Which greeting should hello.py print?"),
        approve: None,
        deny: None,
        always: None,
    },
    Expected {
        name: "codex_exec_approval",
        detail: "permission",
        rule: "codex.permission",
        subject: Some(LOOP),
        approve: Some(&["y"]),
        deny: Some(&["Escape"]),
        always: Some(&["p"]),
    },
    Expected {
        name: "codex_exec_approval_80x24",
        detail: "permission",
        rule: "codex.permission",
        subject: Some(LOOP),
        approve: Some(&["y"]),
        deny: Some(&["Escape"]),
        always: Some(&["p"]),
    },
    Expected {
        name: "codex_trust_answer_exit",
        detail: "folder_trust",
        rule: "codex.folder_trust",
        subject: Some("/tmp/corpus-run/codex_trust_answer_exit/proj"),
        approve: Some(&["Enter"]),
        deny: None,
        always: None,
    },
    Expected {
        name: "gemini_question_deny",
        detail: "permission",
        rule: "gemini.permission",
        subject: Some("rm -rf build && make all"),
        approve: Some(&["Enter"]),
        deny: Some(&["Escape"]),
        always: Some(&["Down", "Enter"]),
    },
    Expected {
        name: "gemini_edit_approval",
        detail: "permission_edit",
        rule: "gemini.edit",
        subject: Some("hello.py: print(\"hello\") => print(\"hello, world\")"),
        approve: Some(&["Enter"]),
        deny: Some(&["Escape"]),
        always: Some(&["Down", "Enter"]),
    },
    Expected {
        name: "gemini_trust_answer_exit",
        detail: "folder_trust",
        rule: "gemini.folder_trust",
        subject: Some("proj"),
        approve: Some(&["Enter"]),
        deny: None,
        always: None,
    },
    Expected {
        name: "aider_shell_confirm",
        detail: "permission",
        rule: "aider.permission",
        subject: Some("ls -la && sleep 3 && echo listed"),
        approve: Some(&["y", "Enter"]),
        deny: Some(&["n", "Enter"]),
        always: None,
    },
    Expected {
        name: "aider_shell_confirm",
        detail: "question",
        rule: "aider.question",
        subject: None,
        approve: None,
        deny: None,
        always: None,
    },
];

/// The dialog answering finds in the middle of `e`'s first segment
/// labelled with its detail, and the replay that found it (whose detector
/// holds the rules).
fn dialog_of(e: &Expected) -> (Replay, Dialog) {
    let (cast, labels) = load(e.name);
    let seg = labels
        .segments
        .iter()
        .find(|s| s.state == "needs_input" && s.detail == e.detail)
        .unwrap_or_else(|| panic!("{}: no {} segment", e.name, e.detail));
    let mid = ((seg.t0 + seg.t1) / 2.0 * 1000.0) as u64;
    let command = [agent_of(e.name).expect("an agent").to_owned()];
    let mut replay = Replay::new(cast, Settings::default(), &command, None);
    let verdict = replay.verdict_at(mid);
    let dialog = replay
        .detector()
        .dialog(replay.screen(), &verdict)
        .unwrap_or_else(|| panic!("{} at {mid} ms: no dialog ({})", e.name, verdict.label()));
    (replay, dialog)
}

#[test]
fn each_agents_dialogs_are_found_with_their_subject_and_answer_keys() {
    for e in EXPECTED {
        let (replay, dialog) = dialog_of(e);
        let what = format!("{} ({})", e.name, e.detail);
        assert_eq!(dialog.rule, e.rule, "{what}");
        assert_eq!(dialog.subject.as_deref(), e.subject, "{what}");
        let rules = replay.detector().rules();
        for (answer, expected) in [
            (Answer::Approve, e.approve),
            (Answer::Deny, e.deny),
            (Answer::Always, e.always),
        ] {
            let keys = dialog.keys_for(rules, answer).ok().map(|a| a.key_names());
            let expected = expected.map(|k| k.iter().map(|s| (*s).to_owned()).collect());
            assert_eq!(keys, expected, "{what}: keys to {}", answer.verb());
        }
        // Offered where, and only where, it can be given.
        let offered = dialog.answers(rules).contains(&Answer::Always);
        assert_eq!(offered, e.always.is_some(), "{what}: always offered");
    }
}

#[test]
fn there_is_no_dialog_where_the_labels_say_none_is_up() {
    let mut looked = 0;
    for entry in std::fs::read_dir(CORPUS).expect("corpus") {
        let path = entry.expect("entry").path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".cast"))
        else {
            continue;
        };
        let (cast, labels) = load(name);
        let command: Vec<String> = agent_of(name).map(str::to_owned).into_iter().collect();
        let mut replay = Replay::new(cast, Settings::default(), &command, labels.exit_ms());
        let mut t = 0;
        while t < (labels.duration * 1000.0) as u64 {
            let seg = labels.at(t).expect("labelled");
            let verdict = replay.verdict_at(t);
            // Typed prompts, work, rest and exit: never a dialog to answer.
            if !matches!(
                seg.state.as_str(),
                "needs_input" | "transition" | "starting"
            ) {
                let dialog = replay.detector().dialog(replay.screen(), &verdict);
                assert!(
                    dialog.is_none(),
                    "{name} at {t} ms ({} {}): {dialog:?}",
                    seg.state,
                    seg.detail
                );
                looked += 1;
            }
            t += SAMPLE_MS * 5;
        }
    }
    assert!(looked > 1000, "only {looked} samples");
}

/// The options `hm choose` and the inbox's digits pick: each of Claude
/// Code's and Gemini CLI's numbered dialogs offers its options, by their
/// labels, and the keys of a choice are its digit; no other agent's
/// dialog offers any (their digits were not checked to pick), nor Claude
/// Code's folder trust (2.1.330 numbers none of its options).
#[test]
fn numbered_dialogs_offer_their_options_where_digits_pick_them() {
    const QUESTION: &[&str] = &[
        "Hello, world",
        "Hi there",
        "Type something.",
        "Chat about this",
    ];
    const PLAN: &[&str] = &[
        "Yes, and use auto mode",
        "Yes, manually approve edits",
        "Tell Claude what to change",
    ];
    const AUTO: &str = "Yes, and switch to auto mode · auto mode handles these prompts for you";
    let offered: &[(&str, &[&str])] = &[
        ("claude_bash_permission", &["Yes", "No"]),
        ("claude330_bash_permission_noprobe", &["Yes", AUTO, "No"]),
        ("claude330_bash_permission", &["Yes", AUTO, "No"]),
        (
            "claude330_edit_approval_noprobe",
            &[
                "Yes",
                "Yes, and switch to accept edits (auto-approve file edits and common file \
                 commands) for this session (shift+tab)",
                "No",
            ],
        ),
        ("claude_plan_approval", PLAN),
        ("claude330_plan_approval_noprobe", PLAN),
        ("claude_question", QUESTION),
        ("claude330_question", QUESTION),
        (
            "gemini_question_deny",
            &[
                "Allow once",
                "Allow for this session",
                "No, suggest changes (esc)",
            ],
        ),
        (
            "gemini_edit_approval",
            &[
                "Allow once",
                "Allow for this session",
                "Modify with external editor",
                "No, suggest changes (esc)",
            ],
        ),
        (
            "gemini_trust_answer_exit",
            &[
                "Trust folder (proj)",
                "Trust parent folder (gemini_trust_answer_exit)",
                "Don't trust",
            ],
        ),
    ];
    let mut chosen_in = 0;
    for e in EXPECTED {
        let (replay, dialog) = dialog_of(e);
        let what = format!("{} ({})", e.name, e.detail);
        let rules = replay.detector().rules();
        let chosen = dialog.answers(rules).contains(&Answer::Choose(0));
        let Some((_, expected)) = offered.iter().find(|(n, _)| *n == e.name) else {
            assert!(!chosen, "{what}: options offered: {:?}", dialog.options);
            continue;
        };
        chosen_in += 1;
        assert!(chosen, "{what}: no options offered");
        let labels: Vec<&str> = dialog.options.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, *expected, "{what}");
        let numbers: Vec<u8> = dialog.options.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            numbers,
            (1..=expected.len() as u8).collect::<Vec<_>>(),
            "{what}"
        );
        // Each option by its own digit; one past the last is refused.
        for n in 1..=expected.len() as u8 {
            let keys = dialog
                .keys_for(rules, Answer::Choose(n))
                .map(|a| a.given(Answer::Choose(n)).key_names());
            assert_eq!(keys, Ok(vec![n.to_string()]), "{what}: option {n}");
        }
        let past = expected.len() as u8 + 1;
        let refused = dialog.keys_for(rules, Answer::Choose(past)).unwrap_err();
        assert!(
            refused
                .to_string()
                .contains(&format!("has no option {past}")),
            "{what}: {refused}"
        );
    }
    assert_eq!(chosen_in, offered.len());
}
