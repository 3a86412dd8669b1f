//! `hm replay` over the fixture screens and the corpus: every saved frame
//! of every agent and state classifies as its `expected.txt` says, and
//! every recording's labelled segments as their labels say.

use std::path::Path;

use heimdall::cmd::replay::run_cases;
use heimdall::detect::offline::{Cast, Labels, Replay, SAMPLE_MS};
use heimdall::detect::rules::builtin;
use heimdall::detect::{Primary, Settings};

/// Runs every case under `tests/<dir>` and fails with the ones that fail.
fn all_pass(dir: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(dir);
    let results = run_cases(&dir, &builtin()).expect("the cases run");
    assert!(results.len() >= 30, "only {} cases", results.len());
    let failed: Vec<String> = results
        .iter()
        .filter_map(|r| r.failure.as_ref().map(|f| format!("{}: {f}", r.name)))
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn every_fixture_screen_classifies_as_expected() {
    all_pass("fixtures/screens");
}

#[test]
fn every_corpus_recording_replays_to_its_labels() {
    // `hm replay --path tests/corpus`: each labelled segment's middle.
    all_pass("corpus");
}

/// Gemini CLI's composer in every recording (true colour: between bars of
/// half blocks) is `idle · ready` empty and `idle · prompt_editing` with
/// text typed, as Claude Code's is: text typed there had no rule, and
/// said `ready`. The 256-colour composer is in the fixtures
/// (`gemini_*_256`, taken live).
#[test]
fn gemini_clis_composer_is_ready_empty_and_prompt_editing_typed() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let (mut checked, mut ready, mut typed) = (0, 0, 0);
    for name in [
        "gemini_question_deny",
        "gemini_edit_approval",
        "gemini_errors_long_think",
        "gemini_trust_answer_exit",
    ] {
        let cast = Cast::load(&corpus.join(format!("{name}.cast"))).expect("cast");
        let labels = Labels::load(&corpus.join(format!("{name}.labels.json"))).expect("labels");
        let command = ["gemini".to_owned()];
        let mut replay = Replay::new(cast, Settings::default(), &command, labels.exit_ms());
        let mut t = 0;
        for seg in &labels.segments {
            // After a cancelled or failed turn, the composer under `ℹ
            // Request cancelled.` says how the turn ended, as Claude Code's
            // under `Interrupted` does.
            let want: &[&str] = match seg.detail.as_str() {
                "prompt" => &["ready", "finished", "error"],
                "prompt_typed" => &["prompt_editing", "finished", "error"],
                _ => continue,
            };
            let mid = ((seg.t0 + seg.t1) / 2.0 * 1000.0).round() as u64;
            while t < mid {
                replay.verdict_at(t);
                t += SAMPLE_MS;
            }
            let v = replay.verdict_at(mid);
            assert_eq!(
                v.primary,
                Primary::Idle,
                "{name} at {mid} ms: {}",
                v.label()
            );
            let detail = v.detail.map_or("none", |d| d.name());
            assert!(want.contains(&detail), "{name} at {mid} ms: {}", v.label());
            // Empty: `ready`, or `finished` after a turn.
            ready += usize::from(matches!(detail, "ready" | "finished"));
            typed += usize::from(detail == "prompt_editing");
            checked += 1;
        }
    }
    assert!(checked >= 16, "only {checked} segments");
    assert!(ready >= 4 && typed >= 4, "{ready} ready, {typed} typed");
}
