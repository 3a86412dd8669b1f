//! A recording played through a real supervisor gets the verdicts the
//! virtual-time scorer gives it: `hm run --classifier agent -- <player>
//! FILE`, sampled with `hm status --json` every 100 ms, against
//! `detect::offline::Replay` of the same file at the same moments. They
//! may differ only near a change of verdict, where the live supervisor
//! waits for the screen to settle and a sample is taken while a status
//! command runs.
//!
//! The player is the corpus's own (`tests/corpus/tools/play_cast.py`,
//! see `tests/corpus/README.md`); without `python3` the test says so and
//! skips.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{Raw, Sandbox, stderr};
use heimdall::detect::Settings;
use heimdall::detect::offline::{Cast, Replay};
use heimdall::protocol::{ClientType, ServerType};

/// How far from a change of the offline verdict a live sample may still
/// disagree: the supervisor's settle time (50 ms, 150 ms at most), a
/// sample's own width (the time a status command takes), and a sample
/// either side.
const BOUNDARY_MS: u64 = 400;

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(name)
}

fn have_python() -> bool {
    Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn label(primary: &str, detail: Option<&str>) -> String {
    match detail {
        Some(d) => format!("{primary} · {d}"),
        None => primary.to_string(),
    }
}

/// Plays `name` through a supervisor and compares every live sample with
/// the offline verdict at the same moment of the recording.
fn played_live_agrees(name: &str) {
    if !have_python() {
        println!("skipped: python3 is not installed; the cast player needs it");
        return;
    }
    let cast_path = corpus(&format!("{name}.cast"));
    let cast = Cast::load(&cast_path).expect("load the recording");
    let end_ms = cast.end_ms();
    let first_ms = cast.output.first().expect("a recording with output").0;
    let size = cast.size;

    let sb = Sandbox::new();
    // A replay's process is a player, not the agent: process facts would
    // describe python, so they are off here as they are in the scorer.
    let config = sb.path().join("live.toml");
    std::fs::write(&config, "[classifier.agent]\nprocess_evidence = false\n").expect("config");
    let player = corpus("tools/play_cast.py");
    // The player starts when the test opens a fifo, so that the
    // recording's clock can be set from the first output that arrives (a
    // gate on the terminal would race with the player's raw mode, which
    // flushes pending input).
    let fifo = common::gate(&sb, "gate");
    let gate = format!(
        "import os; open({:?}).read(); \
         os.execvp('python3', ['python3', {:?}, {:?}, '--hold', '3'])",
        fifo.display().to_string(),
        player.display().to_string(),
        cast_path.display().to_string(),
    );
    let (cols, rows) = (size.cols.to_string(), size.rows.to_string());
    let _s = sb.start(
        name,
        &[
            "--config",
            config.to_str().expect("utf-8 path"),
            "--classifier",
            "agent",
            "--cols",
            &cols,
            "--rows",
            &rows,
        ],
        &["python3", "-c", &gate],
    );
    let mut raw = Raw::connect(&sb.sock(name)).expect("connect");
    raw.send(ClientType::Subscribe as u8, &[]);
    drop(
        std::fs::OpenOptions::new()
            .write(true)
            .open(&fifo)
            .expect("open the gate"),
    );
    raw.expect(ServerType::Output as u8);
    // The recording's moment 0, on this clock.
    let zero = Instant::now() - Duration::from_millis(first_ms);
    drop(raw);

    let mut live: Vec<(u64, String)> = Vec::new();
    loop {
        let before = zero.elapsed();
        let out = sb.cmd(&["status", name, "--json"]);
        let after = zero.elapsed();
        let at = ((before + after) / 2).as_millis() as u64;
        if at > end_ms {
            break;
        }
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        let primary = v["primary"].as_str().expect("primary").to_string();
        live.push((at, label(&primary, v["detail"].as_str())));
        let next = Duration::from_millis(100 * (at / 100 + 1));
        if let Some(wait) = next.checked_sub(zero.elapsed()) {
            std::thread::sleep(wait);
        }
    }

    // The offline verdict every 10 ms, to find where it changes. The
    // player holds the last screen past the end, so no exit is fed.
    let mut replay = Replay::new(cast, Settings::default(), &[], None);
    let offline: Vec<(u64, String)> = (0..=end_ms / 10)
        .map(|i| {
            let v = replay.verdict_at(i * 10);
            (i * 10, label(v.primary.name(), v.detail.map(|d| d.name())))
        })
        .collect();
    let changes: Vec<u64> = offline
        .windows(2)
        .filter(|w| w[0].1 != w[1].1)
        .map(|w| w[1].0)
        .collect();
    let at = |ms: u64| &offline[(ms / 10).min(offline.len() as u64 - 1) as usize].1;

    let mut agree = 0;
    let mut far = Vec::new();
    for (ms, got) in &live {
        if got == at(*ms) {
            agree += 1;
        } else if !changes.iter().any(|c| c.abs_diff(*ms) <= BOUNDARY_MS) {
            far.push(format!(
                "{:.1}s: live {got}, offline {}",
                *ms as f64 / 1e3,
                at(*ms)
            ));
        }
    }
    println!(
        "{name}: {} live samples, {agree} agree with the offline verdict, {} differ near a change, {} away from one",
        live.len(),
        live.len() - agree - far.len(),
        far.len()
    );
    assert!(
        live.len() as u64 >= end_ms / 200,
        "too few samples ({}) for {end_ms} ms",
        live.len()
    );
    assert!(
        far.is_empty(),
        "{name}: live and offline verdicts differ away from any change:\n{}",
        far.join("\n")
    );
}

#[test]
fn claude_permission_played_live_gets_the_scorers_verdicts() {
    played_live_agrees("claude330_bash_permission_noprobe");
}

#[test]
fn codex_approval_played_live_gets_the_scorers_verdicts() {
    played_live_agrees("codex_exec_approval");
}
