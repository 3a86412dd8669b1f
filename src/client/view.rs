//! One session as scripts and people are told about it: the JSON object of
//! `hm status --json`, each entry of `hm ls --json` and each line of `hm
//! events --json`, and the state label every command and the dashboard
//! print (`waiting · permission`).
//!
//! Built in one place from what a supervisor reports (STATUS, INFO, STATE)
//! or what an ended session left (its record), so the three commands give
//! the same keys with the same meanings: every key is present for every
//! session, live or ended, `null` where it does not apply; a key ending in
//! `_ms` is always a duration and one ending in `_unix_ms` an instant. The
//! schema is in docs/protocol.md ("Sessions as JSON").

use serde::Serialize;

use crate::classify::{ProcessState, state_name};
use crate::detect::status::Child;
use crate::ended::Ended;
use crate::protocol::{DialogInfo, Info, StateReport, Status};

/// A session, for `--json` output.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SessionView {
    /// As the person names it: `box:cx` for a session of another machine
    /// (see `client::shown_id`), so that a script can give it to the next
    /// command.
    #[serde(serialize_with = "as_named")]
    pub id: String,
    pub label: Option<String>,
    /// Its program runs (a live supervisor's, or an orphan).
    pub alive: bool,
    /// It ended; its record is kept until `hm rm`.
    pub ended: bool,
    /// It ended because someone asked (`hm kill`, the dashboard's `x`).
    pub killed: bool,
    /// Its supervisor is gone and its program still runs.
    pub orphaned: bool,
    /// Its supervisor went away without ending it (the machine
    /// restarted): kept in its manifest for `hm restore`.
    pub lost: bool,
    /// Lost, and `hm restore` would start it again.
    pub restartable: bool,
    /// Why nothing more is known (`no answer`), else `null`.
    pub error: Option<String>,
    /// The seed protocol's state name (the STATUS byte: `idle`, `active`,
    /// `waiting`, ... and the `claude` classifier's `thinking`,
    /// `streaming`, `tool_use`).
    pub state: Option<String>,
    /// The top level of the two-level state: `idle`, `active`, `waiting`,
    /// `stuck`, `dead` or `unknown`.
    pub primary: Option<String>,
    /// The second level (`permission`, `thinking`, ...), when known.
    pub detail: Option<String>,
    pub health: Option<String>,
    /// The agent the classifier recognised (`claude`, ...).
    pub agent: Option<String>,
    /// How long it has been in its state.
    pub state_ms: Option<u64>,
    /// How long since its program last printed anything.
    pub idle_ms: Option<u64>,
    pub pid: Option<u32>,
    pub supervisor_pid: Option<u32>,
    /// The command's words, secrets hidden (see
    /// [`crate::paths::without_secrets`]) in the JSON too.
    #[serde(serialize_with = "secrets_hidden")]
    pub command: Option<Vec<String>>,
    pub workdir: Option<String>,
    /// Where its program is now (a shell's after `cd`); a lost session's
    /// last known.
    pub cwd: Option<String>,
    pub classifier: Option<String>,
    pub cols: Option<u16>,
    pub rows: Option<u16>,
    pub started_unix_ms: Option<u64>,
    pub ended_unix_ms: Option<u64>,
    pub exit_code: Option<i32>,
    /// The reasons for the state, strongest first.
    pub signals: Vec<SignalView>,
    /// What the program reported of its children (subagents, shells).
    pub children: Vec<ChildView>,
    /// The dialog it waits at, with its identity for `hm approve --dialog`.
    pub dialog: Option<Box<DialogInfo>>,
    /// An ended session's last rows; empty for a live one.
    pub last_lines: Vec<String>,
}

/// One reason for a state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SignalView {
    pub source: String,
    pub rule: String,
    pub text: String,
    /// How long this evidence has stood.
    pub age_ms: u64,
}

/// A child the program reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChildView {
    pub id: String,
    pub state: String,
    pub title: String,
    /// How long it has been in its state.
    pub state_ms: u64,
}

impl SessionView {
    /// A live session: its STATUS, and INFO when the supervisor gave it.
    pub fn live(id: &str, st: &Status, info: Option<&Info>) -> SessionView {
        let mut v = SessionView {
            id: id.to_owned(),
            alive: st.alive,
            state: Some(state_name(st.state).to_owned()),
            primary: Some(primary_of(st.state).to_owned()),
            health: Some(if st.alive { "alive" } else { "dead" }.to_owned()),
            state_ms: Some(u64::from(st.state_ms)),
            idle_ms: Some(u64::from(st.idle_ms)),
            pid: Some(st.pid),
            ..SessionView::default()
        };
        if let Some(i) = info {
            v.label.clone_from(&i.label);
            v.supervisor_pid = Some(i.supervisor_pid);
            v.command = Some(i.command.clone());
            v.workdir = Some(i.workdir.clone());
            v.cwd.clone_from(&i.cwd);
            v.classifier = Some(i.classifier.clone());
            v.cols = Some(i.cols);
            v.rows = Some(i.rows);
            v.started_unix_ms = Some(i.started_unix_ms);
            // STATUS and INFO were asked together: the report is the same
            // look as the state byte, unless the state moved in between.
            if let Some(r) = i.state.as_ref().filter(|r| r.state_byte == st.state) {
                v.apply(r);
                v.idle_ms = Some(u64::from(st.idle_ms));
            }
        }
        v
    }

    /// A live session as INFO describes it (its state from INFO's report).
    pub fn described(id: &str, i: &Info) -> SessionView {
        let mut v = SessionView {
            id: id.to_owned(),
            alive: true,
            label: i.label.clone(),
            pid: Some(i.pid),
            supervisor_pid: Some(i.supervisor_pid),
            command: Some(i.command.clone()),
            workdir: Some(i.workdir.clone()),
            cwd: i.cwd.clone(),
            classifier: Some(i.classifier.clone()),
            cols: Some(i.cols),
            rows: Some(i.rows),
            started_unix_ms: Some(i.started_unix_ms),
            ..SessionView::default()
        };
        if let Some(r) = &i.state {
            v.apply(r);
        }
        v
    }

    /// The session's program ended with `code` at `at_unix_ms`.
    pub fn exited(&mut self, code: i32, at_unix_ms: u64) {
        let dead = Some("dead".to_owned());
        self.alive = false;
        self.ended = true;
        self.exit_code = Some(code);
        self.ended_unix_ms = Some(at_unix_ms);
        self.state.clone_from(&dead);
        self.primary.clone_from(&dead);
        self.health = dead;
        self.detail = None;
        self.state_ms = Some(0);
        self.dialog = None;
    }

    /// A session that ended and left its record.
    pub fn ended(r: &Ended) -> SessionView {
        SessionView {
            id: r.id.clone(),
            label: r.label.clone(),
            ended: true,
            killed: r.killed,
            state: Some(ProcessState::Dead.name().to_owned()),
            primary: Some("dead".to_owned()),
            health: Some("dead".to_owned()),
            state_ms: Some(crate::clock::unix_ms().saturating_sub(r.ended_unix_ms)),
            command: Some(r.command.clone()),
            workdir: Some(r.workdir.clone()),
            classifier: Some(r.classifier.clone()),
            cols: (r.cols > 0).then_some(r.cols),
            rows: (r.rows > 0).then_some(r.rows),
            started_unix_ms: Some(r.started_unix_ms),
            ended_unix_ms: Some(r.ended_unix_ms),
            exit_code: Some(r.exit_code),
            last_lines: r.last_lines.clone(),
            ..SessionView::default()
        }
    }

    /// A session lost with its supervisor, from its manifest.
    pub fn lost(m: &crate::restore::manifest::Manifest, restartable: bool) -> SessionView {
        SessionView {
            id: m.id.clone(),
            lost: true,
            restartable,
            // Its supervisor stopped by a signal ended its program and
            // said how before it went.
            ended_unix_ms: m.ended.map(|e| e.unix_ms),
            exit_code: m.ended.map(|e| e.code),
            ..SessionView::default()
        }
        .kept(m)
    }

    /// A program that outlived its supervisor: all that is known is its pid.
    pub fn orphaned(id: &str, pid: u32) -> SessionView {
        SessionView {
            id: id.to_owned(),
            alive: true,
            orphaned: true,
            pid: Some(pid),
            ..SessionView::default()
        }
    }

    /// A session no supervisor answers for: its program outliving it
    /// (`orphan`), or its supervisor holding the lock but not answering;
    /// with what its manifest `kept` says of it, and, while it is there,
    /// the supervisor's pid.
    pub fn unlive(
        id: &str,
        orphan: Option<u32>,
        kept: Option<&crate::restore::manifest::Manifest>,
    ) -> SessionView {
        let view = match orphan {
            Some(pid) => SessionView::orphaned(id, pid),
            None => SessionView::unanswered(id),
        };
        let Some(m) = kept else { return view };
        let mut view = view.kept(m);
        if orphan.is_none() {
            view.supervisor_pid = m.supervisor_pid();
        }
        view
    }

    /// A session whose supervisor holds its lock but does not answer.
    pub fn unanswered(id: &str) -> SessionView {
        SessionView {
            id: id.to_owned(),
            alive: true,
            error: Some("no answer".to_owned()),
            ..SessionView::default()
        }
    }

    /// What session `m`'s manifest says of it, filled into a view made
    /// without its supervisor's answer (lost, orphaned, or not answering):
    /// the command it runs, where, since when, as `hm restore` keeps it. A
    /// script listing sessions got `null` for all of it though it was on
    /// disk.
    #[must_use]
    pub fn kept(mut self, m: &crate::restore::manifest::Manifest) -> SessionView {
        if m.id != self.id {
            return self;
        }
        self.label.clone_from(&m.label);
        self.command = Some(m.argv.clone());
        self.workdir = Some(m.workdir.clone());
        self.cwd.clone_from(&m.cwd);
        self.classifier = Some(m.classifier.name.clone());
        self.cols = Some(m.cols);
        self.rows = Some(m.rows);
        self.started_unix_ms = Some(m.started_unix_ms);
        self
    }

    /// Takes the state from a supervisor's report (a STATE frame, or
    /// INFO's `state`).
    pub fn apply(&mut self, r: &StateReport) {
        self.state = Some(r.state.clone());
        self.primary = Some(r.primary.name().to_owned());
        self.detail = r.detail.map(|d| d.name().to_owned());
        self.health = Some(r.health.name().to_owned());
        self.agent.clone_from(&r.agent);
        self.state_ms = Some(r.state_ms);
        self.idle_ms = r.idle_ms.or(self.idle_ms);
        self.alive = r.health != crate::detect::Health::Dead;
        // Evidence and children carry the session clock's time they were
        // first seen; what a script wants is how long ago that was.
        let age = |since: u64| r.clock_ms.map_or(0, |now| now.saturating_sub(since));
        self.signals = r
            .signals
            .iter()
            .map(|s| SignalView {
                source: s.source.name().to_owned(),
                rule: s.rule.clone(),
                text: s.text.clone(),
                age_ms: age(s.since_ms),
            })
            .collect();
        self.children = r
            .children
            .iter()
            .map(|c: &Child| ChildView {
                id: c.id.clone(),
                state: c.state.clone(),
                title: c.title.clone(),
                state_ms: age(c.since_ms),
            })
            .collect();
        self.dialog.clone_from(&r.dialog);
    }

    /// The state as people read it: [`label`] of what is known.
    pub fn label(&self) -> String {
        if let Some(code) = self.exit_code {
            return crate::client::exited_with(code, self.killed);
        }
        let state = self.state.as_deref().unwrap_or("unknown");
        let mut label = match (&self.detail, self.alive) {
            (Some(d), true) => format!("{state} · {d}"),
            _ => state.to_owned(),
        };
        let first = self.signals.first();
        let progress = first.and_then(|s| crate::verdict::progress(&s.rule, &s.text));
        if let (Some(p), true) = (progress, self.alive) {
            label.push_str(&format!(" {p}"));
        }
        if !self.children.is_empty() {
            label.push_str(&format!(" +{}", self.children.len()));
        }
        label
    }
}

/// How many sessions need you, the verb agreeing: `1 needs you`,
/// `3 need you`. The dashboard's footer and focus bar and the attached
/// session's bar all say it.
pub fn need_you(count: usize) -> String {
    if count == 1 {
        "1 needs you".to_owned()
    } else {
        format!("{count} need you")
    }
}

/// A session's state for people from its state byte and the report that
/// goes with it, if any: `waiting · permission`, with `40 %` when a
/// progress report says how far, `+2` when the program reports two
/// children. What every command and the dashboard's
/// panes print.
pub fn label(state: u8, report: Option<&StateReport>, alive: bool) -> String {
    let name = state_name(state);
    match report.filter(|r| r.state_byte == state && alive) {
        Some(r) => {
            let mut label = match r.detail {
                Some(d) => format!("{name} · {}", d.name()),
                None => name.to_owned(),
            };
            if let Some(progress) = r.progress() {
                label.push_str(&format!(" {progress}"));
            }
            if !r.children.is_empty() {
                label.push_str(&format!(" +{}", r.children.len()));
            }
            label
        }
        None => name.to_owned(),
    }
}

/// What a state byte stands for at the top level.
fn primary_of(state: u8) -> &'static str {
    ProcessState::from_byte(state).map_or("unknown", |s| s.primary().name())
}

/// Session id `id` as this command names it (see [`SessionView::id`]).
#[allow(clippy::ptr_arg)] // serde hands the field as it is
fn as_named<S: serde::Serializer>(id: &String, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&super::named_id(id))
}

/// Serializes a command's words as [`crate::paths::without_secrets`] has them.
fn secrets_hidden<S: serde::Serializer>(
    words: &Option<Vec<String>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::Serialize;
    words
        .as_deref()
        .map(crate::paths::without_secrets)
        .serialize(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(v: &SessionView) -> Vec<String> {
        let json = serde_json::to_value(v).expect("json");
        let mut k: Vec<String> = json.as_object().expect("object").keys().cloned().collect();
        k.sort();
        k
    }

    #[test]
    fn live_ended_orphaned_and_silent_sessions_have_the_same_keys() {
        let st = Status {
            pid: 7,
            idle_ms: 10,
            alive: true,
            state: 0,
            state_ms: 20,
        };
        let live = SessionView::live("a", &st, None);
        let ended = SessionView::ended(&Ended {
            id: "b".into(),
            command: vec!["true".into()],
            workdir: "/".into(),
            classifier: "simple".into(),
            started_unix_ms: 1,
            ended_unix_ms: 2,
            exit_code: 3,
            last_lines: vec!["x".into()],
            label: None,
            cols: 0,
            rows: 0,
            killed: false,
        });
        let all = [
            live,
            ended,
            SessionView::orphaned("c", 9),
            SessionView::unanswered("d"),
        ];
        for v in &all[1..] {
            assert_eq!(keys(v), keys(&all[0]));
        }
        assert_eq!(all[1].label(), "exited with code 3");
    }

    #[test]
    fn labels_name_the_detail_and_the_children() {
        let mut r = StateReport {
            state: "waiting".into(),
            state_byte: ProcessState::Waiting.as_byte(),
            primary: crate::detect::Primary::Waiting,
            detail: Some(crate::detect::Detail::Permission),
            health: crate::detect::Health::Alive,
            agent: None,
            state_ms: 0,
            signals: Vec::new(),
            children: Vec::new(),
            dialog: None,
            idle_ms: None,
            clock_ms: None,
        };
        let waiting = ProcessState::Waiting.as_byte();
        assert_eq!(label(waiting, Some(&r), true), "waiting · permission");
        // A report of another state byte is not this state's detail.
        assert_eq!(label(0, Some(&r), true), "idle");
        r.children.push(Child {
            id: "1".into(),
            state: "active".into(),
            title: "x".into(),
            since_ms: 0,
        });
        assert_eq!(label(waiting, Some(&r), true), "waiting · permission +1");
        // A progress report the verdict stands on says how far.
        let active = ProcessState::Active.as_byte();
        let mut p = StateReport {
            state: "active".into(),
            state_byte: active,
            primary: crate::detect::Primary::Active,
            detail: Some(crate::detect::Detail::Running),
            signals: vec![crate::verdict::Signal {
                source: crate::verdict::Source::Progress,
                rule: "progress.running".into(),
                text: "40 %".into(),
                since_ms: 0,
            }],
            children: Vec::new(),
            ..r.clone()
        };
        assert_eq!(label(active, Some(&p), true), "active · running 40 %");
        let before = p.clone();
        p.signals[0].text = "41 %".into();
        assert!(p.differs(&before), "a new percentage is news");
    }
}
