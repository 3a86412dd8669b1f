//! `hm classify`: the `agent` classifier's verdict on a saved screen or
//! recording, with the signals behind it.
//!
//! A plain-text file is one screen; a `.cast` recording is replayed (in
//! its own clock) up to `--at`. The JSON output is exactly the serde form
//! of [`Verdict`], as `hm status --json` prints it.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};

use crate::cli::ClassifyArgs;
use crate::detect::offline::{Cast, Replay, text_screen};
use crate::detect::{Detector, RuleSet, Settings, Verdict, load_rules, user_rules_dir};

/// The rules `hm` uses: built-in plus the user's directory.
pub fn user_rules() -> Result<Arc<RuleSet>> {
    let xdg = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let dir = user_rules_dir(xdg.as_deref(), home.as_deref());
    Ok(load_rules(dir.as_deref())?)
}

/// Classifies `path` as `hm classify` does (shared with `hm replay`).
pub fn classify_file(
    path: &std::path::Path,
    command: &[String],
    at_seconds: Option<f64>,
    rules: Arc<RuleSet>,
) -> Result<(Verdict, Vec<crate::detect::EvidenceRow>)> {
    let settings = Settings {
        process_evidence: false,
        ..Settings::default()
    };
    if path.extension().is_some_and(|e| e == "cast") {
        let cast = Cast::load(path)?;
        // Past the end the screen is the last one.
        let end = at_seconds.map_or(cast.end_ms(), |s| {
            ((s.max(0.0) * 1000.0).round() as u64).min(cast.end_ms())
        });
        let detector = Detector::with_rules(settings, rules, command, 0);
        let mut replay = Replay::with_detector(cast, detector, None);
        // Sample on the way, as the supervisor would, so that `since`
        // and health are what they would have been live.
        let mut t = 0;
        while t < end {
            replay.verdict_at(t);
            t += crate::detect::offline::SAMPLE_MS;
        }
        let verdict = replay.verdict_at(end);
        let rows = replay.detector().evidence(end);
        return Ok((verdict, rows));
    }
    if at_seconds.is_some() {
        bail!(
            "--at is for .cast recordings; '{}' is a saved screen",
            path.display()
        );
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read screen file '{}'", path.display()))?;
    Ok(classify_text(&text, command, rules))
}

/// Classifies a saved screen (plain text, one row per line), by the
/// screen alone.
pub fn classify_text(
    text: &str,
    command: &[String],
    rules: Arc<RuleSet>,
) -> (Verdict, Vec<crate::detect::EvidenceRow>) {
    let settings = Settings {
        process_evidence: false,
        ..Settings::default()
    };
    let term = text_screen(text);
    let mut detector = Detector::with_rules(settings, rules, command, 0);
    let verdict = detector.verdict(term.screen(), 0);
    let rows = detector.evidence(0);
    (verdict, rows)
}

/// The verdict as text: the label, the agent, then one line per signal.
pub fn describe(verdict: &Verdict) -> String {
    let mut out = verdict.label();
    if let Some(agent) = &verdict.agent {
        out.push_str(&format!(" ({agent})"));
    }
    if verdict.health != crate::detect::Health::Alive {
        out.push_str(&format!(" [{}]", verdict.health.name()));
    }
    out.push('\n');
    for s in &verdict.signals {
        out.push_str(&format!(
            "  {:<12} {:<28} {}\n",
            s.source.name(),
            s.rule,
            s.text
        ));
    }
    out
}

pub fn classify(args: ClassifyArgs) -> Result<i32> {
    let command: Vec<String> = args
        .command
        .as_deref()
        .map(|c| c.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    let (verdict, rows) = classify_file(&args.path, &command, args.at, user_rules()?)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        let text = serde_json::to_string(&verdict).context("cannot encode the verdict")?;
        writeln!(out, "{text}")?;
    } else {
        write!(out, "{}", describe(&verdict))?;
    }
    if args.explain {
        for r in rows {
            writeln!(
                out,
                "  evidence {:<12} {:<28} {:<24} since {} ms{} {}",
                r.source.name(),
                r.rule,
                r.value,
                r.since_ms,
                if r.fresh { "" } else { " (stale)" },
                r.text
            )?;
        }
    }
    Ok(0)
}
