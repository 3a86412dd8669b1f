//! The status bar of `hm attach`: what it says (the session, its state
//! and for how long, the keys; copy mode's own line while it is open; a
//! notice for a few seconds) and when its clock next changes.

use std::time::Duration;

use tokio::time::Instant;

use super::{Attach, NOTICE_FOR};
use crate::attach::statusbar;
use crate::config::describe_key;

impl Attach {
    pub(super) fn draw_bar(&mut self) {
        if !self.bar_visible() {
            return;
        }
        if let Some(copy) = &self.copy {
            let bar = copy.bar(&self.name, self.size.cols, self.size.rows, &self.theme);
            self.out.extend(bar);
            return;
        }
        if self.poll.unresponsive() {
            self.out.extend(statusbar::render_problem(
                &self.name,
                self.size.cols,
                self.size.rows,
                "not responding",
                &self.theme,
            ));
            return;
        }
        let state = self.status.map(|(s, at)| {
            let ms = u64::from(s.state_ms) + at.elapsed().as_millis() as u64;
            // The pushed report's detail, while it is of the state shown.
            let label = crate::client::view::label(s.state, self.report.as_deref(), true);
            (s.state, label, ms)
        });
        let notice = self
            .notice
            .as_ref()
            .filter(|(_, at)| at.elapsed() < NOTICE_FOR)
            .map(|(text, _)| text.clone());
        let hints = match notice {
            Some(notice) => vec![notice],
            None => {
                // Attached from the dashboard: how many others need you,
                // and the key that goes to the next of them.
                let waiting = self.dash.as_ref().map_or(0, |d| {
                    d.others_waiting.load(std::sync::atomic::Ordering::Relaxed)
                });
                let back = if self.dash.is_some() {
                    "dashboard"
                } else {
                    "detaches"
                };
                [
                    // Said first: a watcher's keys go nowhere, and the
                    // session may be at another's size, not this one's.
                    self.read_only.then(|| match self.held {
                        Some(s) => format!("read-only, {}x{} held", s.cols, s.rows),
                        None => "read-only".to_owned(),
                    }),
                    (waiting > 0).then(|| crate::client::view::need_you(waiting)),
                    self.dash
                        .as_ref()
                        .and_then(|d| d.next_key)
                        .filter(|_| waiting > 0)
                        .map(|k| format!("{} next", describe_key(k))),
                    self.detach_key
                        .map(|k| format!("{} {back}", describe_key(k))),
                    self.copy_key
                        .map(|k| format!("{} history", describe_key(k))),
                ]
                .into_iter()
                .flatten()
                .collect()
            }
        };
        self.out.extend(statusbar::render(
            &self.name,
            self.label.as_deref(),
            self.size.cols,
            self.size.rows,
            state
                .as_ref()
                .map(|(s, label, ms)| (*s, label.as_str(), *ms)),
            &hints,
            &self.theme,
        ));
    }

    /// When the bar's clock next changes: every second while it shows
    /// seconds, every minute after that; never when it shows no clock.
    /// The same instant however often it is asked within one step, so the
    /// alarm is set once per change.
    pub(super) fn next_tick(&self, now: Instant) -> Option<Instant> {
        // A notice goes when its time is up, whatever the clock shows.
        let notice_ends = self
            .notice
            .as_ref()
            .map(|(_, at)| *at + NOTICE_FOR)
            .filter(|end| *end > now);
        let clock = self.clock_tick(now);
        match (clock, notice_ends) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b).filter(|_| self.bar_visible()),
        }
    }

    fn clock_tick(&self, now: Instant) -> Option<Instant> {
        let (s, at) = self.status?;
        if !self.bar_visible() {
            return None;
        }
        let base = u64::from(s.state_ms);
        let shown = base + now.duration_since(at).as_millis() as u64;
        let step = if shown < 60_000 { 1000 } else { 60_000 };
        let next = (shown / step + 1) * step;
        Some(at + Duration::from_millis(next - base))
    }
}
