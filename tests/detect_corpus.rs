//! The corpus scorer: every recording in `tests/corpus/` replayed through
//! the emulator and the `agent` classifier in virtual time, the verdict
//! sampled every 100 ms as the supervisor would push it, and compared with
//! the ground-truth labels (see `tests/corpus/README.md`).
//!
//! Scores are "screen, title and timing only": process evidence is off
//! (a replay's process is a player) and OSC 7501 records are ignored. The
//! test prints the table and fails below target. Set
//! `DETECT_CORPUS_VERBOSE=1` to also print every wrong stretch.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use heimdall::detect::hooks::Report;
use heimdall::detect::offline::{Cast, Labels, Replay, SAMPLE_MS, expected_primary, load_hook_log};
use heimdall::detect::{Primary, Settings, Source};

/// Targets with the status protocol answered (Claude Code 2.1.330).
const MIN_STATUS_CORRECT: f64 = 0.995;
const MAX_STATUS_WRONG_STRETCH_MS: u64 = 500;

/// Targets with hook reports (Claude Code 2.1.330's hooks, logged while
/// recording), and with 5 % of them lost.
const MIN_HOOK_CORRECT: f64 = 0.995;
const MAX_HOOK_WRONG_STRETCH_MS: u64 = 500;
const MIN_HOOK_LOSSY_CORRECT: f64 = 0.985;
/// How many random 5 % losses are tried.
const LOSSY_SEEDS: u64 = 20;

/// Targets on the whole set.
const MIN_WAITING_PRECISION: f64 = 0.99;
const MIN_WAITING_RECALL: f64 = 0.98;
const MIN_PRIMARY_CORRECT: f64 = 0.97;
const MAX_UNKNOWN: f64 = 0.05;
const MAX_WRONG_STRETCH_MS: u64 = 1_000;

#[derive(Default, Clone)]
struct Tally {
    samples: u64,
    correct: u64,
    unknown: u64,
    /// Samples labelled waiting / predicted waiting / both.
    waiting_expected: u64,
    waiting_predicted: u64,
    waiting_hit: u64,
    /// Longest run of wrong samples, in ms, and where.
    worst_ms: u64,
    worst_at: String,
    /// Predicted waiting during a `prompt_typed` segment.
    typed_false_waiting: u64,
    /// Samples whose verdict a hook report decided.
    by_hook: u64,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.samples += other.samples;
        self.correct += other.correct;
        self.unknown += other.unknown;
        self.waiting_expected += other.waiting_expected;
        self.waiting_predicted += other.waiting_predicted;
        self.waiting_hit += other.waiting_hit;
        self.typed_false_waiting += other.typed_false_waiting;
        self.by_hook += other.by_hook;
        if other.worst_ms > self.worst_ms {
            self.worst_ms = other.worst_ms;
            self.worst_at = other.worst_at.clone();
        }
    }

    fn ratio(a: u64, b: u64) -> f64 {
        if b == 0 { 1.0 } else { a as f64 / b as f64 }
    }

    fn precision(&self) -> f64 {
        Tally::ratio(self.waiting_hit, self.waiting_predicted)
    }

    fn recall(&self) -> f64 {
        Tally::ratio(self.waiting_hit, self.waiting_expected)
    }

    fn accuracy(&self) -> f64 {
        Tally::ratio(self.correct, self.samples)
    }

    fn unknown_share(&self) -> f64 {
        Tally::ratio(self.unknown, self.samples)
    }

    fn row(&self, name: &str) -> String {
        let pct = |x: f64| format!("{:6.2}%", x * 100.0);
        let opt = |n: u64, x: f64| if n == 0 { "      -".to_owned() } else { pct(x) };
        format!(
            "{name:<22} {:>6} {} {} {} {} {:>6.1}s {:>4}  {}",
            self.samples,
            pct(self.accuracy()),
            opt(self.waiting_predicted, self.precision()),
            opt(self.waiting_expected, self.recall()),
            pct(self.unknown_share()),
            self.worst_ms as f64 / 1000.0,
            self.typed_false_waiting,
            self.worst_at,
        )
    }
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// The agent a recording is about, from its name (`claude330_x` -> `claude330`).
fn family(name: &str) -> String {
    name.split('_').next().unwrap_or(name).to_owned()
}

/// Scores one recording: per expected state, and a list of wrong stretches.
fn score(name: &str, settings: &Settings, verbose: bool) -> BTreeMap<String, Tally> {
    score_with(name, settings, Vec::new(), verbose)
}

/// Scores one recording with these hook reports given at their times.
fn score_with(
    name: &str,
    settings: &Settings,
    hooks: Vec<(u64, Report)>,
    verbose: bool,
) -> BTreeMap<String, Tally> {
    let dir = corpus_dir();
    let cast = Cast::load(&dir.join(format!("{name}.cast"))).expect("corpus cast loads");
    let labels =
        Labels::load(&dir.join(format!("{name}.labels.json"))).expect("corpus labels load");
    let mut replay = Replay::new(cast, settings.clone(), &[], labels.exit_ms()).with_hooks(hooks);
    let end = (labels.duration * 1000.0) as u64;
    let mut by_state: BTreeMap<String, Tally> = BTreeMap::new();
    let mut run_start: Option<u64> = None;
    let mut run_ms = 0u64;
    let mut worst = (0u64, 0u64);
    let mut t = 0;
    while t < end {
        let verdict = replay.verdict_at(t);
        let t_now = t;
        t += SAMPLE_MS;
        let Some(segment) = labels.at(t_now) else {
            continue;
        };
        let Some(expected) = expected_primary(&segment.state) else {
            continue;
        };
        let got = verdict.primary;
        let tally = by_state.entry(expected.name().to_owned()).or_default();
        tally.samples += 1;
        if verdict
            .signals
            .first()
            .is_some_and(|s| s.source == Source::Hook)
        {
            tally.by_hook += 1;
        }
        let right = got == expected;
        if right {
            tally.correct += 1;
        }
        if got == Primary::Unknown {
            tally.unknown += 1;
        }
        if expected == Primary::Waiting {
            tally.waiting_expected += 1;
        }
        if got == Primary::Waiting {
            tally.waiting_predicted += 1;
            if right {
                tally.waiting_hit += 1;
            }
            if segment.detail == "prompt_typed" {
                tally.typed_false_waiting += 1;
            }
        }
        if right {
            if verbose && run_ms > 0 {
                let s = run_start.unwrap_or(0);
                eprintln!(
                    "  {name} {:.1}-{:.1}s wrong ({})",
                    s as f64 / 1000.0,
                    t_now as f64 / 1000.0,
                    segment.state
                );
            }
            run_ms = 0;
            run_start = None;
        } else {
            if run_start.is_none() {
                run_start = Some(t_now);
                if verbose {
                    eprintln!(
                        "  {name} @{:.1}s expected {} ({}) got {} by {:?}",
                        t_now as f64 / 1000.0,
                        expected.name(),
                        segment.detail,
                        verdict.label(),
                        verdict
                            .signals
                            .first()
                            .map(|s| format!("{} {:?}", s.rule, s.text))
                    );
                }
            }
            run_ms += SAMPLE_MS;
            if run_ms > worst.0 {
                worst = (run_ms, run_start.unwrap_or(0));
            }
        }
    }
    // The worst stretch belongs to the recording; put it on every state's
    // tally so that sums keep the maximum.
    for tally in by_state.values_mut() {
        tally.worst_ms = worst.0;
        tally.worst_at = format!("{name}@{:.1}s", worst.1 as f64 / 1000.0);
    }
    by_state
}

fn recordings() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(corpus_dir())
        .expect("tests/corpus is there")
        .filter_map(|e| {
            let p = e.ok()?.path();
            let name = p.file_name()?.to_str()?.strip_suffix(".cast")?.to_owned();
            p.with_file_name(format!("{name}.labels.json"))
                .exists()
                .then_some(name)
        })
        .collect();
    names.sort();
    names
}

#[test]
fn corpus_scores_meet_the_targets() {
    let verbose = std::env::var_os("DETECT_CORPUS_VERBOSE").is_some();
    let names = recordings();
    assert!(
        names.len() >= 30,
        "corpus missing: {} recordings",
        names.len()
    );
    let mut by_agent: BTreeMap<String, Tally> = BTreeMap::new();
    let mut by_state: BTreeMap<String, Tally> = BTreeMap::new();
    let mut by_recording: Vec<(String, Tally)> = Vec::new();
    let mut total = Tally::default();
    // Screen, title and timing only: the status protocol's records are
    // scored on their own below.
    let settings = Settings {
        status_protocol: false,
        ..Settings::default()
    };
    for name in &names {
        let scored = score(name, &settings, verbose);
        let mut rec = Tally::default();
        for (state, tally) in &scored {
            by_state.entry(state.clone()).or_default().add(tally);
            rec.add(tally);
        }
        by_agent.entry(family(name)).or_default().add(&rec);
        total.add(&rec);
        by_recording.push((name.clone(), rec));
    }
    let header = format!(
        "{:<22} {:>6} {:>7} {:>7} {:>7} {:>7} {:>7} {:>4}  {}",
        "", "n", "correct", "w.prec", "w.rec", "unknown", "worst", "typd", "worst at"
    );
    let mut out = String::new();
    out.push_str(&format!("{header}\n-- per agent\n"));
    for (agent, t) in &by_agent {
        out.push_str(&t.row(agent));
        out.push('\n');
    }
    out.push_str("-- per state (label)\n");
    for (state, t) in &by_state {
        out.push_str(&t.row(state));
        out.push('\n');
    }
    out.push_str(&total.row("ALL"));
    out.push('\n');
    if verbose {
        out.push_str("-- per recording\n");
        for (name, t) in &by_recording {
            out.push_str(&t.row(name));
            out.push('\n');
        }
    }
    println!("{out}");
    eprintln!("{out}");
    let mut failures = Vec::new();
    if total.precision() < MIN_WAITING_PRECISION {
        failures.push(format!(
            "waiting precision {:.2}%",
            total.precision() * 100.0
        ));
    }
    if total.recall() < MIN_WAITING_RECALL {
        failures.push(format!("waiting recall {:.2}%", total.recall() * 100.0));
    }
    if total.unknown_share() > MAX_UNKNOWN {
        failures.push(format!("unknown {:.2}%", total.unknown_share() * 100.0));
    }
    failures.extend(common_failures(
        &total,
        MIN_PRIMARY_CORRECT,
        MAX_WRONG_STRETCH_MS,
    ));
    assert!(failures.is_empty(), "below target: {}", failures.join(", "));
}

/// The targets both scorings share: primary correct, the worst wrong
/// stretch, and no waiting from typed text.
fn common_failures(total: &Tally, min_correct: f64, max_stretch_ms: u64) -> Vec<String> {
    let mut failures = Vec::new();
    if total.accuracy() < min_correct {
        failures.push(format!("primary correct {:.2}%", total.accuracy() * 100.0));
    }
    if total.worst_ms > max_stretch_ms {
        failures.push(format!(
            "worst wrong stretch {} ms at {}",
            total.worst_ms, total.worst_at
        ));
    }
    if total.typed_false_waiting > 0 {
        failures.push(format!(
            "{} false waiting samples from typed text",
            total.typed_false_waiting
        ));
    }
    failures
}

/// Claude Code 2.1.330 recorded with its OSC 7501 probe answered: its own
/// records, weighed with the screen, as the supervisor takes them.
#[test]
fn status_protocol_scores_meet_the_targets() {
    let verbose = std::env::var_os("DETECT_CORPUS_VERBOSE").is_some();
    let names: Vec<String> = recordings()
        .into_iter()
        .filter(|n| n.starts_with("claude330_") && !n.ends_with("_noprobe"))
        .collect();
    assert!(names.len() >= 8, "probe recordings missing: {names:?}");
    let settings = Settings::default();
    let mut total = Tally::default();
    let mut out = String::from("-- with the status protocol\n");
    for name in &names {
        let mut rec = Tally::default();
        for tally in score(name, &settings, verbose).values() {
            rec.add(tally);
        }
        out.push_str(&rec.row(name));
        out.push('\n');
        total.add(&rec);
    }
    out.push_str(&total.row("ALL"));
    println!("{out}");
    eprintln!("{out}");
    let failures = common_failures(&total, MIN_STATUS_CORRECT, MAX_STATUS_WRONG_STRETCH_MS);
    assert!(failures.is_empty(), "below target: {}", failures.join(", "));
}

/// The recordings with a hook log, and their reports.
fn hook_logs() -> Vec<(String, Vec<(u64, Report)>)> {
    let logs: Vec<_> = recordings()
        .into_iter()
        .filter_map(|name| {
            let path = corpus_dir().join(format!("{name}.hooks.jsonl"));
            path.exists().then(|| {
                (
                    name,
                    load_hook_log(&path, "claude").expect("hook log loads"),
                )
            })
        })
        .collect();
    assert!(logs.len() >= 8, "hook logs missing: {}", logs.len());
    logs
}

fn total_with(
    logs: &[(String, Vec<(u64, Report)>)],
    settings: &Settings,
    keep: &mut dyn FnMut() -> bool,
    out: Option<&mut String>,
) -> Tally {
    let verbose = std::env::var_os("DETECT_CORPUS_VERBOSE").is_some();
    let mut total = Tally::default();
    let mut rows = String::new();
    for (name, reports) in logs {
        let kept: Vec<_> = reports.iter().filter(|_| keep()).cloned().collect();
        let mut rec = Tally::default();
        for tally in score_with(name, settings, kept, verbose).values() {
            rec.add(tally);
        }
        rows.push_str(&rec.row(name));
        rows.push('\n');
        total.add(&rec);
    }
    if let Some(out) = out {
        out.push_str(&rows);
        out.push_str(&total.row("ALL"));
        out.push('\n');
    }
    total
}

/// Claude Code 2.1.330 with its hooks reporting, screen and title as
/// behind tmux (the status protocol unanswered): every report, then 5 %
/// of them lost at random, with [`LOSSY_SEEDS`] different losses.
#[test]
fn hook_scores_meet_the_targets() {
    let logs = hook_logs();
    let hooks_only = Settings {
        status_protocol: false,
        ..Settings::default()
    };
    let mut out = String::from("-- with hooks (screen, title, timing, hooks)\n");
    let all = total_with(&logs, &hooks_only, &mut || true, Some(&mut out));
    let mut failures = common_failures(&all, MIN_HOOK_CORRECT, MAX_HOOK_WRONG_STRETCH_MS);
    // The reports must have been taken, not merely survived.
    out.push_str(&format!(
        "   decided by a hook report: {} of {} samples\n",
        all.by_hook, all.samples
    ));
    if all.by_hook * 10 < all.samples {
        failures.push(format!("hooks decided only {} samples", all.by_hook));
    }

    // A small xorshift: the same losses on every run.
    let (mut worst, mut sum, mut worst_stretch) = (1.0f64, 0.0f64, 0u64);
    for seed in 0..LOSSY_SEEDS {
        let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ (seed + 1).wrapping_mul(0x2545_f491_4f6c_dd1d);
        let mut keep = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % 100 >= 5
        };
        let t = total_with(&logs, &hooks_only, &mut keep, None);
        worst = worst.min(t.accuracy());
        sum += t.accuracy();
        worst_stretch = worst_stretch.max(t.worst_ms);
        if t.accuracy() < MIN_HOOK_LOSSY_CORRECT {
            failures.push(format!(
                "5 % lost (seed {seed}): primary correct {:.2}%",
                t.accuracy() * 100.0
            ));
        }
    }
    out.push_str(&format!(
        "-- 5 % of reports lost, {LOSSY_SEEDS} seeds: correct mean {:.2}%, worst {:.2}%, worst stretch {} ms\n",
        sum / LOSSY_SEEDS as f64 * 100.0,
        worst * 100.0,
        worst_stretch
    ));

    // Everything at once: the status protocol answered and hooks.
    out.push_str("-- with the status protocol and hooks\n");
    let both = total_with(&logs, &Settings::default(), &mut || true, Some(&mut out));
    failures.extend(common_failures(
        &both,
        MIN_HOOK_CORRECT,
        MAX_HOOK_WRONG_STRETCH_MS,
    ));
    println!("{out}");
    eprintln!("{out}");
    assert!(failures.is_empty(), "below target: {}", failures.join(", "));
}

/// Found however it was started: a replay knows no command and no
/// process, so each agent's recordings must name it by their title or
/// screen alone, from its first labelled state on (`opencode` read
/// `idle` throughout, never recognised, before its rules named it).
#[test]
fn every_agent_is_recognised_in_a_replay_of_its_recordings() {
    fn agent_of(family: &str) -> Option<&str> {
        match family {
            "claude" | "claude330" => Some("claude"),
            "plain" => None,
            other => Some(other),
        }
    }
    let dir = corpus_dir();
    let mut checked = BTreeMap::<String, u64>::new();
    for name in recordings() {
        let family = family(&name);
        let Some(want) = agent_of(&family) else {
            continue;
        };
        let cast = Cast::load(&dir.join(format!("{name}.cast"))).expect("corpus cast loads");
        let labels =
            Labels::load(&dir.join(format!("{name}.labels.json"))).expect("corpus labels load");
        let mut replay = Replay::new(cast, Settings::default(), &[], labels.exit_ms());
        let end = (labels.duration * 1000.0) as u64;
        // Sampled as the supervisor would: a screen is read when asked.
        for at in (0..end).step_by(SAMPLE_MS as usize) {
            let verdict = replay.verdict_at(at);
            let Some(segment) = labels.at(at) else {
                continue;
            };
            if matches!(segment.state.as_str(), "starting" | "transition" | "exited") {
                continue;
            }
            assert_eq!(
                verdict.agent.as_deref(),
                Some(want),
                "{name} at {:.1}s ({} {}): {verdict:?}",
                at as f64 / 1000.0,
                segment.state,
                segment.detail
            );
            *checked.entry(want.to_owned()).or_default() += 1;
        }
    }
    for agent in [
        "claude", "codex", "gemini", "qwen", "aider", "opencode", "pi",
    ] {
        assert!(
            checked.get(agent).is_some_and(|&n| n >= 5),
            "{agent}: {checked:?}"
        );
    }
}
