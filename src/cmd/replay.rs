//! `hm replay`: run the classifier over fixture cases and report every
//! mismatch.
//!
//! A case is a directory with `frame.txt` and `expected.txt` (first line
//! `primary` or `primary detail`, optionally a `command: CMD` line), or a
//! recording `NAME.cast` with its `NAME.labels.json` (every labelled
//! segment's middle is checked). One line per case; the exit code is 1
//! when any case fails.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};

use super::classify::{classify_file, user_rules};
use crate::cli::ReplayArgs;
use crate::detect::offline::{Cast, Labels, Replay, expected_primary};
use crate::detect::{Detail, Detector, Primary, RuleSet, Settings};

/// One case's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseResult {
    pub name: String,
    /// `None` when it passed; what went wrong otherwise.
    pub failure: Option<String>,
}

/// What a frame case expects.
struct Expected {
    primary: Primary,
    detail: Option<Detail>,
    command: Vec<String>,
}

fn parse_expected(path: &Path) -> Result<Expected> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read '{}'", path.display()))?;
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let first = lines.next().unwrap_or_default();
    let mut words = first.split_whitespace();
    let primary_word = words.next().unwrap_or_default();
    let Some(primary) = Primary::from_name(primary_word) else {
        bail!(
            "'{}': unknown state '{}' on the first line (expected idle, active, waiting, ...)",
            path.display(),
            primary_word.escape_debug()
        );
    };
    let detail = match words.next() {
        Some(w) => Some(Detail::from_name(w).with_context(|| {
            format!(
                "'{}': unknown detail '{}'",
                path.display(),
                w.escape_debug()
            )
        })?),
        None => None,
    };
    let command = lines
        .find_map(|l| l.strip_prefix("command:"))
        .map(|c| c.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    Ok(Expected {
        primary,
        detail,
        command,
    })
}

fn frame_case(dir: &Path, rules: &Arc<RuleSet>) -> Result<Option<String>> {
    let expected = parse_expected(&dir.join("expected.txt"))?;
    let (verdict, _) = classify_file(
        &dir.join("frame.txt"),
        &expected.command,
        None,
        rules.clone(),
    )?;
    let ok = verdict.primary == expected.primary
        && (expected.detail.is_none() || verdict.detail == expected.detail);
    Ok((!ok).then(|| {
        let want = match expected.detail {
            Some(d) => format!("{} · {}", expected.primary.name(), d.name()),
            None => expected.primary.name().to_owned(),
        };
        let why = verdict
            .signals
            .first()
            .map(|s| format!(" by {}", s.rule))
            .unwrap_or_default();
        format!("expected {want}, got {}{why}", verdict.label())
    }))
}

fn cast_case(cast_path: &Path, labels_path: &Path, rules: &Arc<RuleSet>) -> Result<Option<String>> {
    let cast = Cast::load(cast_path)?;
    let labels = Labels::load(labels_path)?;
    let settings = Settings {
        process_evidence: false,
        ..Settings::default()
    };
    let detector = Detector::with_rules(settings, rules.clone(), &[], 0);
    let mut replay = Replay::with_detector(cast, detector, labels.exit_ms());
    let mut wrong = Vec::new();
    let mut checked = 0;
    // Verdicts are taken every SAMPLE_MS on the way, as the supervisor
    // takes them when output settles: what the detector learns from a
    // screen it saw (which agent runs, since when) carries to later ones.
    let mut t = 0;
    for segment in &labels.segments {
        let Some(want) = expected_primary(&segment.state) else {
            continue;
        };
        let mid = ((segment.t0 + segment.t1) / 2.0 * 1000.0).round() as u64;
        while t < mid {
            replay.verdict_at(t);
            t += crate::detect::offline::SAMPLE_MS;
        }
        let got = replay.verdict_at(mid);
        checked += 1;
        if got.primary != want {
            wrong.push(format!(
                "{:.1}s {} ({}): got {}",
                mid as f64 / 1000.0,
                want.name(),
                segment.detail,
                got.label()
            ));
        }
    }
    Ok((!wrong.is_empty()).then(|| {
        format!(
            "{} of {checked} segments wrong: {}",
            wrong.len(),
            wrong.join("; ")
        )
    }))
}

/// Every case under `path` (which may itself be one), in name order.
pub fn run_cases(path: &Path, rules: &Arc<RuleSet>) -> Result<Vec<CaseResult>> {
    let mut results = Vec::new();
    let mut dirs = vec![path.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        if dir.join("frame.txt").is_file() && dir.join("expected.txt").is_file() {
            results.push(CaseResult {
                name: dir.display().to_string(),
                failure: frame_case(&dir, rules)?,
            });
            continue;
        }
        let entries =
            std::fs::read_dir(&dir).with_context(|| format!("cannot list '{}'", dir.display()))?;
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths.into_iter().rev() {
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|e| e == "cast") {
                let labels = p.with_extension("labels.json");
                if labels.is_file() {
                    results.push(CaseResult {
                        name: p.display().to_string(),
                        failure: cast_case(&p, &labels, rules)?,
                    });
                }
            }
        }
    }
    results.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(results)
}

pub fn replay(args: ReplayArgs) -> Result<i32> {
    let results = run_cases(&args.path, &user_rules()?)?;
    if results.is_empty() {
        bail!(
            "no cases under '{}' (a case is a directory with frame.txt and expected.txt, \
             or NAME.cast with NAME.labels.json)",
            args.path.display()
        );
    }
    let mut out = std::io::stdout().lock();
    let mut failed = 0;
    for r in &results {
        match &r.failure {
            None => writeln!(out, "ok    {}", r.name)?,
            Some(why) => {
                failed += 1;
                writeln!(out, "FAIL  {}: {why}", r.name)?;
            }
        }
    }
    writeln!(out, "{} cases, {failed} failed", results.len())?;
    Ok(i32::from(failed > 0))
}
