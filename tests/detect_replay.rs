//! `hm replay` over the fixture screens: every saved frame of every agent
//! and state classifies as its `expected.txt` says.

use std::path::Path;

use heimdall::cmd::replay::run_cases;
use heimdall::detect::rules::builtin;

#[test]
fn every_fixture_screen_classifies_as_expected() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/screens");
    let results = run_cases(&dir, &builtin()).unwrap();
    assert!(results.len() >= 30, "only {} cases", results.len());
    let failed: Vec<String> = results
        .iter()
        .filter_map(|r| r.failure.as_ref().map(|f| format!("{}: {f}", r.name)))
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn every_corpus_recording_replays_to_its_labels() {
    // `hm replay --path tests/corpus`: each labelled segment's middle.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let results = run_cases(&dir, &builtin()).unwrap();
    assert!(results.len() >= 30, "only {} cases", results.len());
    let failed: Vec<String> = results
        .iter()
        .filter_map(|r| r.failure.as_ref().map(|f| format!("{}: {f}", r.name)))
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
