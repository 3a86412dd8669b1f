//! Two channels a program may speak on its own besides OSC 7501: progress
//! reports (OSC 9 ; 4, sent by build tools, package managers and some
//! agents) and a shell's integration marks (OSC 133: prompt, command
//! entered, command finished with its exit code). Both say exactly what
//! the screen can only suggest, so they are evidence of their own
//! (`progress`, `shell_integration`), shown with what they carry: the
//! percentage, the exit code.

use super::{Detail, Detector, Finding, Primary, Source};
use crate::vt::events::{Progress, ShellMark};

/// How long a progress report stands without another: a program that
/// died without clearing its bar leaves no claim of work behind.
pub const PROGRESS_FRESH_MS: u64 = 30_000;

impl Detector {
    /// A progress report.
    pub(super) fn progress(&mut self, p: Progress, now_ms: u64) {
        let (rule, text) = match p {
            Progress::Running(pct) => ("progress.running", format!("{pct} %")),
            Progress::Error(pct) => ("progress.error", format!("{pct} %, in error")),
            Progress::Indeterminate => ("progress.indeterminate", String::new()),
            // Paused or cleared: no claim of work.
            Progress::Paused(_) | Progress::Cleared => {
                self.evidence.progress = None;
                return;
            }
        };
        let since = self
            .evidence
            .progress
            .as_ref()
            .filter(|f| f.rule == rule)
            .map_or(now_ms, |f| f.since_ms);
        self.evidence.progress = Some(Finding {
            source: Source::Progress,
            rule: rule.to_owned(),
            primary: Primary::Active,
            detail: Some(Detail::Running),
            text,
            since_ms: since,
            fresh_until_ms: Some(now_ms.saturating_add(PROGRESS_FRESH_MS)),
        });
    }

    /// A shell integration mark: at the prompt (with the last command's
    /// exit code, if one finished), or a command running.
    pub(super) fn shell_mark(&mut self, mark: ShellMark, now_ms: u64) {
        let last = self.evidence.shell.as_ref();
        let (rule, primary, detail, text) = match mark {
            ShellMark::CommandExecuted => (
                "shell.command",
                Primary::Active,
                Detail::Running,
                String::new(),
            ),
            ShellMark::CommandFinished(code) => {
                let detail = match code {
                    Some(c) if c != 0 => Detail::Error,
                    _ => Detail::Finished,
                };
                let text =
                    code.map_or_else(|| "exit code not given".to_owned(), |c| format!("exit {c}"));
                ("shell.finished", Primary::Idle, detail, text)
            }
            // The prompt after a command keeps what the command ended with.
            ShellMark::PromptStart | ShellMark::CommandStart
                if last.is_some_and(|f| f.rule == "shell.finished") =>
            {
                return;
            }
            ShellMark::PromptStart | ShellMark::CommandStart => {
                ("shell.prompt", Primary::Idle, Detail::Ready, String::new())
            }
        };
        if last.is_some_and(|f| f.rule == rule && f.detail == Some(detail) && f.text == text) {
            return;
        }
        self.evidence.shell = Some(Finding {
            source: Source::ShellIntegration,
            rule: rule.to_owned(),
            primary,
            detail: Some(detail),
            text,
            since_ms: now_ms,
            fresh_until_ms: None,
        });
    }
}
