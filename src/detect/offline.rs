//! Running the detector over saved sessions: asciicast recordings, their
//! ground-truth labels, and plain-text screens.
//!
//! The replay drives a [`Detector`] exactly as the supervisor does — feed a
//! chunk to the emulator, hand over its events, report the output, ask for
//! a verdict every [`SAMPLE_MS`] — in the recording's own clock, so a
//! score measured here holds for live sessions. Process facts are never
//! given: the process of a replay is a player, not the agent. Shared by
//! `hm classify`, `hm replay` and the corpus scorer; no printing here.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{Detector, Primary, Settings, Verdict};
use crate::protocol::Size;
use crate::vt::events::Recorder;
use crate::vt::term::Term;

/// How often a replay asks for a verdict (the supervisor pushes state
/// changes at most this often while output continues).
pub const SAMPLE_MS: u64 = 100;

#[derive(Debug, thiserror::Error)]
pub enum OfflineError {
    #[error("cannot read '{}'", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("'{}' line {line}: {reason}", path.display())]
    Cast {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error("'{}' is not a labels file: {reason}", path.display())]
    Labels { path: PathBuf, reason: String },
}

/// An asciicast v2 recording's output.
#[derive(Debug, Clone)]
pub struct Cast {
    pub size: Size,
    /// `(ms since start, bytes)` of every `"o"` event, in order.
    pub output: Vec<(u64, Vec<u8>)>,
}

impl Cast {
    pub fn load(path: &Path) -> Result<Cast, OfflineError> {
        let text = std::fs::read_to_string(path).map_err(|source| OfflineError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Cast::parse(&text).map_err(|(line, reason)| OfflineError::Cast {
            path: path.to_path_buf(),
            line,
            reason,
        })
    }

    /// Parses the text of a cast; errors are `(line, reason)`.
    pub fn parse(text: &str) -> Result<Cast, (usize, String)> {
        #[derive(Deserialize)]
        struct Header {
            width: u16,
            height: u16,
        }
        let mut lines = text.lines().enumerate();
        let (_, first) = lines.next().ok_or((1, "empty file".to_owned()))?;
        let header: Header =
            serde_json::from_str(first).map_err(|e| (1, format!("bad header: {e}")))?;
        let mut output = Vec::new();
        for (i, line) in lines {
            if line.trim().is_empty() {
                continue;
            }
            let (t, kind, data): (f64, String, String) =
                serde_json::from_str(line).map_err(|e| (i + 1, format!("bad event: {e}")))?;
            if kind == "o" {
                // Casts count seconds as floats; the detector's clock is ms.
                let ms = (t.max(0.0) * 1000.0).round() as u64;
                output.push((ms, data.into_bytes()));
            }
        }
        Ok(Cast {
            size: Size {
                cols: header.width,
                rows: header.height,
            },
            output,
        })
    }

    /// When the last output came.
    pub fn end_ms(&self) -> u64 {
        self.output.last().map_or(0, |(t, _)| *t)
    }
}

/// One labelled stretch of a recording.
#[derive(Debug, Clone, Deserialize)]
pub struct Segment {
    pub t0: f64,
    pub t1: f64,
    pub state: String,
    pub detail: String,
}

/// A recording's ground truth (`NAME.labels.json`).
#[derive(Debug, Clone, Deserialize)]
pub struct Labels {
    #[serde(default)]
    pub cli: String,
    pub duration: f64,
    pub segments: Vec<Segment>,
}

impl Labels {
    pub fn load(path: &Path) -> Result<Labels, OfflineError> {
        let text = std::fs::read_to_string(path).map_err(|source| OfflineError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|e| OfflineError::Labels {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })
    }

    /// The segment in force at `ms`.
    pub fn at(&self, ms: u64) -> Option<&Segment> {
        let t = ms as f64 / 1000.0;
        self.segments.iter().find(|s| s.t0 <= t && t < s.t1)
    }

    /// When the program exited: the start of the boundary into `exited`
    /// (the recorder's own exit time, which a supervisor would see as the
    /// child's exit).
    pub fn exit_ms(&self) -> Option<u64> {
        let i = self.segments.iter().position(|s| s.state == "exited")?;
        let start = match i.checked_sub(1).map(|j| &self.segments[j]) {
            Some(prev) if prev.state == "transition" => prev.t0,
            _ => self.segments[i].t0,
        };
        Some((start * 1000.0).round() as u64)
    }
}

/// The primary state a label stands for; `None` for what is not scored
/// (`transition`, `starting`).
pub fn expected_primary(state: &str) -> Option<Primary> {
    match state {
        "working" => Some(Primary::Active),
        "needs_input" => Some(Primary::Waiting),
        "ready" => Some(Primary::Idle),
        "exited" => Some(Primary::Dead),
        _ => Primary::from_name(state).filter(|p| *p != Primary::Unknown),
    }
}

/// A recording's hook log (`NAME.hooks.jsonl`): one `{"t", "event",
/// "payload"}` per line, `t` in seconds on the cast's clock, as the
/// corpus's recorder writes it. Returns `(ms, report)` in order; events
/// that make no report are left out.
pub fn load_hook_log(
    path: &Path,
    agent: &str,
) -> Result<Vec<(u64, super::hooks::Report)>, OfflineError> {
    #[derive(Deserialize)]
    struct Line {
        t: f64,
        payload: serde_json::Value,
    }
    let text = std::fs::read_to_string(path).map_err(|source| OfflineError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let l: Line = serde_json::from_str(line).map_err(|e| OfflineError::Cast {
            path: path.to_path_buf(),
            line: i + 1,
            reason: format!("bad hook line: {e}"),
        })?;
        if let Some(r) = super::hooks::Report::from_payload(agent, &l.payload) {
            out.push(((l.t.max(0.0) * 1000.0).round() as u64, r));
        }
    }
    out.sort_by_key(|(t, _)| *t);
    Ok(out)
}

/// A recording being replayed into a detector.
#[derive(Debug)]
pub struct Replay {
    cast: Cast,
    term: Term<Recorder>,
    detector: Detector,
    next: usize,
    exit_ms: Option<u64>,
    /// Hook reports to give at their times, and the next one's index.
    hooks: Vec<(u64, super::hooks::Report)>,
    next_hook: usize,
}

impl Replay {
    /// `command` is what the detector is told the session runs (empty
    /// when unknown); `exit_ms` when the program ended, if it did.
    pub fn new(cast: Cast, settings: Settings, command: &[String], exit_ms: Option<u64>) -> Replay {
        let settings = Settings {
            process_evidence: false,
            ..settings
        };
        let term = Term::with_callbacks(cast.size, Recorder::default());
        Replay {
            detector: Detector::new(settings, command, 0),
            term,
            cast,
            next: 0,
            exit_ms,
            hooks: Vec::new(),
            next_hook: 0,
        }
    }

    /// Gives these hook reports at their times, as `hm hook` would.
    pub fn with_hooks(mut self, hooks: Vec<(u64, super::hooks::Report)>) -> Replay {
        self.hooks = hooks;
        self.next_hook = 0;
        self
    }

    /// Like [`Replay::new`] with a given detector (e.g. with user rules).
    pub fn with_detector(cast: Cast, detector: Detector, exit_ms: Option<u64>) -> Replay {
        let term = Term::with_callbacks(cast.size, Recorder::default());
        Replay {
            detector,
            term,
            cast,
            next: 0,
            exit_ms,
            hooks: Vec::new(),
            next_hook: 0,
        }
    }

    /// Feed everything written before `ms` (and the exit, if it came).
    pub fn advance(&mut self, ms: u64) {
        while let Some((t, bytes)) = self.cast.output.get(self.next) {
            if *t > ms {
                break;
            }
            // Reports and output in the order they happened.
            while let Some((h, report)) = self.hooks.get(self.next_hook)
                && *h <= *t
            {
                self.detector.hook(report, *h);
                self.next_hook += 1;
            }
            let (t, bytes) = (*t, bytes.clone());
            self.term.feed(&bytes);
            for event in self.term.callbacks_mut().take() {
                self.detector.event(&event, t);
            }
            self.detector.output(&bytes, t);
            self.next += 1;
        }
        while let Some((h, report)) = self.hooks.get(self.next_hook)
            && *h <= ms
        {
            self.detector.hook(report, *h);
            self.next_hook += 1;
        }
        if let Some(exit) = self.exit_ms
            && exit <= ms
        {
            self.detector.ended(exit);
        }
    }

    /// The verdict at `ms` (after feeding what came before it).
    pub fn verdict_at(&mut self, ms: u64) -> Verdict {
        self.advance(ms);
        self.detector.verdict(self.term.screen(), ms)
    }

    /// Verdicts every [`SAMPLE_MS`] up to `end_ms`, as `(ms, verdict)`.
    pub fn sample(&mut self, end_ms: u64) -> Vec<(u64, Verdict)> {
        let mut out = Vec::new();
        let mut t = 0;
        while t <= end_ms {
            out.push((t, self.verdict_at(t)));
            t += SAMPLE_MS;
        }
        out
    }

    pub fn detector(&self) -> &Detector {
        &self.detector
    }

    pub fn screen(&self) -> &vt100::Screen {
        self.term.screen()
    }
}

/// A plain-text screen rendered into a terminal of its size (at least
/// 80x24), cursor left at the end of the last non-empty line.
pub fn text_screen(text: &str) -> Term<Recorder> {
    let lines: Vec<&str> = text.lines().collect();
    let last = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(0, |i| i + 1);
    let lines = &lines[..last];
    let width = lines
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
        .max(80);
    let size = Size {
        cols: u16::try_from(width).unwrap_or(u16::MAX),
        rows: u16::try_from(lines.len().max(24)).unwrap_or(u16::MAX),
    };
    let mut term = Term::with_callbacks(size, Recorder::default());
    // A bare `\n` only moves down on a terminal; the text means new lines.
    let body = lines.join("\r\n");
    term.feed(body.as_bytes());
    term
}
