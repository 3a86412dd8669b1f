//! What a supervisor says about its session when asked: the STATUS,
//! INFO, SCREEN and STATE payloads, and the state they all report
//! (classifier or detector verdict, health, when it next changes).

use crate::classify::ProcessState;
use crate::detect::{Health, Primary, Verdict};
use crate::protocol::{Info, Screen, Size, StateReport, Status};

use super::super::process::ProcessProbe;
use super::Shared;

/// How old the process facts of a look while output flows may be (see
/// [`Shared::facts_may_lag`]).
pub(in crate::supervisor) const FACTS_LAG: std::time::Duration = std::time::Duration::from_secs(1);

impl Shared {
    /// The answer to STATUS, evaluating idle transitions now.
    pub fn status(&mut self) -> Status {
        let now = self.clock.now_ms();
        let report = self.state_now();
        Status {
            pid: self.child_pid,
            idle_ms: u32::try_from(self.idle_ms(now)).unwrap_or(u32::MAX),
            alive: self.exit_code.is_none(),
            state: report.state_byte,
            state_ms: u32::try_from(report.state_ms).unwrap_or(u32::MAX),
        }
    }

    /// The agent's verdict now (with fresh process facts), if the session
    /// has the `agent` classifier.
    pub fn verdict(&mut self) -> Option<Verdict> {
        let now = self.clock.now_ms();
        let key = self.screen_key();
        let detector = self.detector.as_mut()?;
        if detector.settings().process_evidence
            && self.exit_code.is_none()
            && let Some(facts) = self.process.as_ref().and_then(ProcessProbe::facts)
        {
            detector.process(facts, now);
        }
        // The screen is read only if it may have changed since the last
        // look (output, a resize): at rest, every `hm ls` woke it from its
        // sleep and read it whole to find it as it was.
        if self.looked == Some(key) {
            return Some(detector.verdict_unlooked(now));
        }
        self.looked = Some(key);
        Some(detector.verdict(self.screen.term().screen(), now))
    }

    /// The session's state now, whichever classifier it has.
    pub fn state_now(&mut self) -> StateReport {
        let now = self.clock.now_ms();
        self.classifier.tick(now);
        if let Some(report) = self.halted_report(now) {
            return report;
        }
        if let Some(v) = self.verdict() {
            let state = ProcessState::of_primary(v.primary);
            let dialog = self.dialog_seen(&v, now);
            return StateReport {
                state: state.name().to_string(),
                state_byte: state.as_byte(),
                primary: v.primary,
                detail: v.detail,
                health: v.health,
                agent: v.agent,
                state_ms: now.saturating_sub(v.since_ms.max(self.asked_since())),
                signals: v.signals,
                children: self
                    .detector
                    .as_ref()
                    .map(|d| d.table().children.clone())
                    .unwrap_or_default(),
                dialog,
                idle_ms: Some(self.idle_ms(now)),
                clock_ms: Some(now),
            };
        }
        if let Some(report) = self.plain_asking(now) {
            return report;
        }
        let state = if self.exit_code.is_some() {
            ProcessState::Dead
        } else {
            self.classifier.state()
        };
        StateReport {
            state: state.name().to_string(),
            state_byte: state.as_byte(),
            primary: state.primary(),
            detail: None,
            health: if self.exit_code.is_some() {
                Health::Dead
            } else {
                Health::Alive
            },
            agent: None,
            state_ms: u64::from(self.classifier.state_ms(now)),
            signals: Vec::new(),
            children: Vec::new(),
            dialog: None,
            idle_ms: Some(self.idle_ms(now)),
            clock_ms: Some(now),
        }
    }

    /// `waiting · stopped` while the program is stopped by a signal,
    /// whatever its screen or classifier says: it moves again only when
    /// someone continues it (`hm continue`), and nothing above it will.
    fn halted_report(&mut self, now: u64) -> Option<StateReport> {
        let (sig, since) = self.halted()?;
        let agent = self.report.as_ref().and_then(|r| r.agent.clone());
        let state = ProcessState::Waiting;
        Some(StateReport {
            state: state.name().to_string(),
            state_byte: state.as_byte(),
            primary: Primary::Waiting,
            detail: Some(crate::detect::Detail::Stopped),
            health: Health::Alive,
            agent,
            state_ms: now.saturating_sub(since),
            signals: vec![crate::detect::Signal {
                source: crate::verdict::Source::Process,
                rule: "process.stopped".into(),
                text: format!("stopped by {sig}"),
                since_ms: since,
            }],
            children: Vec::new(),
            dialog: None,
            idle_ms: Some(self.idle_ms(now)),
            clock_ms: Some(now),
        })
    }

    /// When the question on screen was asked, if another was answered
    /// before it while the session kept waiting; else 0 (the state's own
    /// start counts).
    fn asked_since(&self) -> u64 {
        self.acting.asked_since().unwrap_or(0)
    }

    /// Without the detector: `waiting · input` while the program asks,
    /// told by its process (`detect::plain`), whatever the timing says;
    /// for a program that reads all the time (a REPL), by the question it
    /// printed on the cursor's row.
    pub(super) fn plain_asking(&mut self, now: u64) -> Option<StateReport> {
        let Some(signal) = self.plain_question(now) else {
            if self.asking_since.take().is_some() {
                self.acting.stopped_waiting(now);
            }
            return None;
        };
        let since = *self.asking_since.get_or_insert(now);
        // Read off the screen once output rests: a look while it flows
        // (every 150 ms of typing into `cat`) woke the screen and ran the
        // rules between two keystrokes, the slowest echoes later for it.
        let dialog = if self.facts_may_lag {
            self.report.as_ref().and_then(|r| r.dialog.clone())
        } else {
            self.plain_dialog_seen(now)
        };
        let state = ProcessState::Waiting;
        Some(StateReport {
            state: state.name().to_string(),
            state_byte: state.as_byte(),
            primary: Primary::Waiting,
            detail: Some(crate::detect::Detail::Input),
            health: Health::Alive,
            agent: None,
            state_ms: now.saturating_sub(since.max(self.asked_since())),
            signals: vec![crate::detect::Signal {
                since_ms: since,
                ..signal
            }],
            children: Vec::new(),
            dialog,
            idle_ms: Some(self.idle_ms(now)),
            clock_ms: Some(now),
        })
    }

    /// What says the program asks, if it does: its process blocked
    /// reading the terminal, or, where reading says nothing (a REPL reads
    /// all the time), a question of the generic rules on its screen.
    fn plain_question(&mut self, now: u64) -> Option<crate::detect::Signal> {
        let cmd = self.plain?;
        let probe = self.process.as_ref()?;
        if self.exit_code.is_some() {
            return None;
        }
        let facts = if self.facts_may_lag {
            probe.recent_facts(FACTS_LAG)
        } else {
            probe.facts()
        }?;
        let alternate = self.screen.alternate();
        if let Some(rule) = crate::detect::plain::asking(&cmd, &facts, alternate) {
            return Some(crate::detect::Signal {
                source: crate::detect::Source::Process,
                rule: rule.to_owned(),
                text: facts.foreground_names.first().cloned().unwrap_or_default(),
                since_ms: now,
            });
        }
        if !crate::detect::plain::program_reading(&cmd, &facts, alternate) {
            self.printed_question = None;
            return None;
        }
        self.printed_question(now)
    }

    /// The question a program that reads all the time printed on its
    /// cursor's row (`Continue? [y/N] `), as the generic rules find it.
    /// The screen is read again only once output or size changed since
    /// the last look, and not while output flows: a REPL at rest is asked
    /// about by every `hm ls`, and each look would wake its screen.
    fn printed_question(&mut self, now: u64) -> Option<crate::detect::Signal> {
        let key = self.screen_key();
        if let Some((seen, found)) = &self.printed_question
            && (*seen == key || self.facts_may_lag)
        {
            return found.clone();
        }
        let rules = crate::detect::rules::builtin();
        let found = crate::detect::dialog::find(
            &rules,
            None,
            self.screen.term().screen(),
            crate::detect::Detail::Input,
        )
        .map(|d| crate::detect::Signal {
            source: crate::detect::Source::Screen,
            text: d
                .rows
                .first()
                .map_or_else(String::new, |r| r.trim().chars().take(120).collect()),
            rule: d.rule,
            since_ms: now,
        });
        self.printed_question = Some((key, found.clone()));
        found
    }

    /// Milliseconds since the program last printed (or since the start).
    fn idle_ms(&self, now: u64) -> u64 {
        now.saturating_sub(self.last_output_ms.unwrap_or(self.started_ms))
    }

    /// Re-evaluates the state; true if it changed since last reported
    /// (STATE frames are then owed to the subscribers that asked).
    pub fn refresh_report(&mut self) -> bool {
        let now = self.state_now();
        let changed = self.report.as_ref().is_none_or(|old| old.differs(&now));
        if changed {
            self.report_seq += 1;
        }
        self.report = Some(now);
        changed
    }

    /// Re-evaluates the state for a subscriber that asked for it as it is
    /// now, which it is sent first. A move found here is the tracker's to
    /// announce, to the other subscribers (asleep until the next output,
    /// they never heard of it: a program that began to read without
    /// printing was `waiting` to the newest follower alone) and to the
    /// notifier; it is woken for it.
    pub fn refresh_for_subscriber(&mut self) {
        let before = self.report.as_ref().map(|r| r.primary);
        if self.refresh_report() {
            self.unannounced.get_or_insert(before);
            self.wakes.look.notify_one();
        }
    }

    /// The primary state before a move a subscription found and the
    /// tracker has not announced yet, if there is one.
    pub fn take_unannounced(&mut self) -> Option<Option<Primary>> {
        self.unannounced.take()
    }

    /// When the state may next change with no output: an idle threshold
    /// or the detector's `stuck_after` running out. `None` while nothing is
    /// pending, so an idle session costs no wake-up.
    pub fn next_state_change_ms(&self) -> Option<u64> {
        // A stopped program's state moves only when it is continued, which
        // wakes the tracker itself; the last verdict's deadlines would
        // pass with no verdict taken after them, and wake it forever.
        if self.exit_code.is_some() || self.halted().is_some() {
            return None;
        }
        if let Some(d) = &self.detector {
            // An automation rule's dwell is a deadline only while a dialog
            // it would answer stands.
            return match (d.wake_at(), self.acting.due_ms()) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        let busy = self
            .report
            .as_ref()
            .is_some_and(|r| r.primary == Primary::Active);
        let threshold = self
            .classifier
            .quiet_after_ms()
            .or(self.info.idle_threshold_ms)?;
        let last = self.last_output_ms?;
        busy.then_some(last + threshold + 1)
    }

    /// The answer to INFO (see docs/protocol.md).
    pub fn info_answer(&mut self) -> Info {
        let i = &self.info;
        let mut info = Info {
            id: i.id.clone(),
            pid: self.child_pid,
            supervisor_pid: i.supervisor_pid,
            command: i.command.clone(),
            workdir: i.workdir.clone(),
            cwd: std::fs::read_link(format!("/proc/{}/cwd", self.child_pid))
                .ok()
                .map(|d| d.to_string_lossy().into_owned()),
            started_unix_ms: i.started_unix_ms,
            classifier: i.classifier.to_string(),
            idle_threshold_ms: i.idle_threshold_ms,
            idle_after_ms: match &self.detector {
                Some(d) => Some(d.idle_after_ms()),
                None => self.classifier.quiet_after_ms().or(i.idle_threshold_ms),
            },
            cols: self.size.cols,
            rows: self.size.rows,
            scrollback_bytes: self.output.scrollback() as u64,
            version: env!("CARGO_PKG_VERSION").to_string(),
            label: i.label.clone(),
            // This supervisor answers the OSC 7501 probe itself: a client
            // that shows the output on a terminal must drop the probe, so
            // that the program gets one answer.
            status_protocol: self
                .detector
                .as_ref()
                .is_some_and(|d| d.settings().status_protocol),
            terminals: Some(u32::try_from(self.terminals).unwrap_or(u32::MAX)),
            state: None,
            evidence: None,
            dialog: None,
            actions: self.acting.log().cloned().collect(),
            automation: self.acting.info(self.clock.now_ms()),
            journal: Some(self.output.journal_info()),
            relabelled: false,
        };
        info.state = Some(self.state_now());
        if let Some(d) = &self.detector {
            info.evidence = serde_json::to_value(d.evidence(self.clock.now_ms())).ok();
        }
        info.dialog = info
            .state
            .as_ref()
            .and_then(|s| s.dialog.as_deref().cloned());
        info
    }

    /// The screen as the escape sequences that draw it over any other of
    /// its size: every cell, the cursor, the input modes (vt100's
    /// `state_formatted`, which clears the screen first and scrolls
    /// nothing into a history). None while a new size waits for the next
    /// byte: a subscriber is then at that size, and the program is about
    /// to redraw for it. (A terminal that attaches sets the size it has,
    /// most often the size the session had.)
    pub fn screen_rendering(&mut self) -> Option<Vec<u8>> {
        let screen = self.screen.term().screen();
        let (rows, cols) = screen.size();
        let now = Size {
            cols: cols.get(),
            rows: rows.get(),
        };
        if self.screen_size.is_some_and(|next| next != now) {
            return None;
        }
        Some(screen.state_formatted().into_bytes())
    }

    /// The answer to SCREEN: the screen as plain text rows, with its size,
    /// cursor and title.
    pub fn screen_answer(&mut self) -> Screen {
        let term = self.screen.term();
        let screen = term.screen();
        let (rows, cols) = screen.size();
        let (cursor_row, cursor_col) = screen.cursor_position();
        Screen {
            cols: cols.get(),
            rows: rows.get(),
            cursor_row,
            cursor_col,
            alternate_screen: screen.alternate_screen(),
            application_cursor: screen.application_cursor(),
            title: term.callbacks().title.clone(),
            text: screen.contents(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Detector;
    use crate::protocol::Size;

    fn shared() -> Shared {
        Shared::for_test(1 << 20, Size { cols: 80, rows: 24 })
    }

    /// The program writes `bytes`, read as the pty reader reads them.
    fn write(s: &mut Shared, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let (n, _) = s
                .read_output(bytes.len(), |buf| {
                    let n = buf.len().min(bytes.len());
                    buf[..n].copy_from_slice(&bytes[..n]);
                    Ok(n)
                })
                .expect("read");
            bytes = &bytes[n..];
        }
    }

    /// Asked again while nothing changed on its screen (every `hm ls`),
    /// an agent session answers as before without waking its sleeping
    /// screen to read it whole; output since is read.
    #[test]
    fn an_unchanged_screen_is_not_woken_to_be_read_again() {
        let detector = Detector::new(crate::detect::Settings::default(), &["sh".into()], 0);
        let mut s = shared().with_detector(detector, None);
        write(&mut s, b"Lorem ipsum\r\nContinue? [y/N] ");
        let first = s.state_now();
        assert_eq!(first.primary, Primary::Waiting, "{first:?}");
        let dialog = first.dialog.clone().expect("the question, as a dialog");
        assert!(s.screen.sleep(), "the screen sleeps at rest");
        let again = s.state_now();
        let info = s.info_answer();
        assert!(s.screen_asleep(), "woken to be read again, unchanged");
        assert_eq!((again.primary, again.detail), (first.primary, first.detail));
        assert_eq!(again.dialog.as_deref(), Some(&*dialog));
        assert_eq!(info.dialog.as_ref(), Some(&*dialog));
        write(&mut s, b"y\r\nworking on it\r\n");
        let moved = s.state_now();
        assert!(!s.screen_asleep(), "output since was not read");
        assert_ne!(moved.dialog.as_deref(), Some(&*dialog));
    }

    #[test]
    fn a_redraw_for_a_new_size_is_no_work_but_a_flood_after_it_is() {
        let mut s = shared();
        let idle = ProcessState::Idle.as_byte();
        assert_eq!(s.state_now().state_byte, idle, "idle from the start");
        s.resized(Size {
            cols: 100,
            rows: 30,
        });
        write(&mut s, &[b'x'; 8192]);
        assert_eq!(s.state_now().state_byte, idle, "a screen's redraw");
        write(&mut s, &vec![b'y'; 300 * 1024]);
        assert_eq!(s.state_now().state_byte, ProcessState::Active.as_byte());
    }
}
