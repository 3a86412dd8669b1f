//! `hm replay` over the fixture screens and the corpus: every saved frame
//! of every agent and state classifies as its `expected.txt` says, and
//! every recording's labelled segments as their labels say.

use std::path::Path;

use heimdall::cmd::replay::run_cases;
use heimdall::detect::rules::builtin;

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
