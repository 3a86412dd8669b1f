//! The new-session form (`n`): an id (empty: the session is named after
//! its command, as `hm run` names one), a command, a directory, a
//! label and the classifier, and the keys and pastes that fill it in.
//! Drawn by `view::popup::new_session`; started by an [`Effect::Spawn`].

use std::path::Path;
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::paths;

use super::model::{Effect, FormStart, Lost, Mode, Model, NewStep};

/// The classifiers the form offers, after "hm chooses" (`None`): what
/// `hm run --classifier` takes.
pub const CLASSIFIERS: &[&str] = &["agent", "simple", "claude", "none"];

/// The longest label `hm run --label` accepts.
const MAX_LABEL: usize = crate::protocol::LABEL_MAX_CHARS;

/// `n`: an empty form, in the dashboard's directory.
pub fn open(m: &mut Model) {
    m.new_dir = m.cwd.clone();
    m.new_label.clear();
    m.new_classifier = None;
    // What the form says is about what is typed in it: an older notice
    // (`approved ...`) stayed up under it.
    m.notice = None;
    m.mode = Mode::NewSession {
        step: NewStep::Id,
        id: String::new(),
        command: String::new(),
    };
}

/// The id a session started with no id typed (`id` empty, or `host:` for
/// another machine) takes: its program's name (the shell's for an empty
/// command), as `hm run` names one, or the first of `NAME-2`, `NAME-3`,
/// ... that no pane has.
pub fn placeholder(m: &Model, id: &str, command: &str) -> String {
    let (prefix, shell) = match remote(m, id) {
        // That machine's shell, whose name is not known here.
        Some(_) => (id, "shell"),
        None => ("", m.shell.as_str()),
    };
    let base = paths::id_from_program(Path::new(program(command, shell)));
    let mut id = format!("{prefix}{base}");
    // Ends: the dashboard holds finitely many panes.
    for n in 2.. {
        if m.pane(&id).is_none() {
            break;
        }
        id = format!("{prefix}{base}-{n}");
    }
    id
}

/// Whether the id is to be named after the command: none typed, or only
/// the machine (`host:`).
pub fn unnamed(m: &Model, id: &str) -> bool {
    id.is_empty() || (id.ends_with(':') && remote(m, id).is_some())
}

/// Whether `said` is the notice already shown, the person pressing Enter
/// again after reading it (it goes then); else it is shown.
fn said_again(m: &mut Model, said: String, now: Instant) -> bool {
    if m.notice.as_ref().is_some_and(|(n, _)| *n == said) {
        m.notice = None;
        return true;
    }
    m.notify(said, now);
    false
}

/// The program a command line runs: its first word past any `NAME=value`
/// and `exec` or `env`; the shell for an empty line. A line that starts
/// with a word the shell runs itself or with its syntax (`for i in 1 2 3;
/// do ...`, `cd web && npm run dev`, `( make )`) is run by `sh -c` (see
/// [`crate::launch::plain_words`]): `sh`, not `for`.
fn program<'a>(command: &'a str, shell: &'a str) -> &'a str {
    use crate::launch::{SHELL_OWN, SHELL_SYNTAX};
    match command
        .split_whitespace()
        .find(|w| !w.contains('=') && !matches!(*w, "exec" | "env"))
    {
        Some(w) if SHELL_OWN.contains(&w) || w.starts_with(SHELL_SYNTAX) => "sh",
        Some(w) => w,
        None => shell,
    }
}

/// From the id to the command, the id taken.
fn to_command(m: &mut Model, id: String, command: String) {
    // Another machine starts it in its user's home unless told otherwise:
    // the dashboard's directory, shown, read as where it would run.
    if remote(m, &id).is_some() && m.new_dir == m.cwd {
        m.new_dir.clear();
    }
    m.mode = Mode::NewSession {
        step: NewStep::Command,
        id,
        command,
    };
}

/// What the classifier field shows.
pub fn classifier_label(m: &Model) -> String {
    match &m.new_classifier {
        Some(c) => c.clone(),
        None => "hm chooses".to_owned(),
    }
}

/// A key in the form.
pub fn key(
    m: &mut Model,
    (step, mut id, mut command): (NewStep, String, String),
    k: KeyEvent,
    now: Instant,
    fx: &mut Vec<Effect>,
) {
    let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
    // What the form said was of what was typed: an edit makes it old (`'x'
    // cannot be an id` stayed up under the id corrected).
    if k.code != KeyCode::Enter {
        m.notice = None;
    }
    match (k.code, step) {
        (KeyCode::Esc, _) => {
            m.mode = Mode::Grid;
            return;
        }
        // None typed: named after the command once it is known. Tab goes
        // on from the id as Enter does: ignored, the command typed next
        // went into the id (`logstail -f ...`).
        (KeyCode::Enter | KeyCode::Tab, NewStep::Id) if unnamed(m, &id) => {
            to_command(m, id, command);
            return;
        }
        (KeyCode::Enter | KeyCode::Tab, NewStep::Id) => {
            // `host:id` starts it on that machine.
            let plain = match crate::remote::split_target(&id) {
                Some((host, plain)) if m.hosts.iter().any(|h| h == host) => plain,
                Some((host, _)) => {
                    let known = if m.hosts.is_empty() {
                        "none is set up".to_owned()
                    } else {
                        format!("it knows {}", m.hosts.join(", "))
                    };
                    m.notify(
                        format!(
                            "no host '{}' in the config's [[hosts]] ({known})",
                            paths::sanitize(host)
                        ),
                        now,
                    );
                    m.mode = Mode::NewSession { step, id, command };
                    return;
                }
                None => id.as_str(),
            };
            if paths::validate_id(plain).is_err() {
                // Short enough for the footer of an 80-column terminal,
                // which cut the command line's wording off mid-rule.
                m.notify(
                    format!(
                        "'{}' cannot be an id: {}",
                        paths::sanitize(plain),
                        paths::ID_RULE_SHORT
                    ),
                    now,
                );
            } else if let Some(pid) = m.pane(&id).and_then(|p| p.orphan) {
                // Taking the id would lose the only record of it.
                m.notify(format!("'{id}' is still held by pid {pid}"), now);
            } else if let Some(lost) = m.pane(&id).and_then(|p| p.lost.as_ref()) {
                // Its manifest and output wait for `R` (or `r`, for one
                // that is not restored): said first. Enter again replaces
                // it, as `hm run --id` does, its record and output gone.
                let again = match lost {
                    Lost::Restartable => "R restores it",
                    Lost::Refused(_) => "r runs it again",
                };
                let said = format!(
                    "'{id}' was lost with its supervisor: {again}, x forgets it, Enter again replaces it"
                );
                if said_again(m, said, now) {
                    to_command(m, id, command);
                    return;
                }
            } else if m.pane(&id).is_some_and(|p| !p.ended()) {
                m.notify(format!("session '{id}' already exists"), now);
            } else if let Some((code, killed)) = m
                .pane(&id)
                .and_then(|p| p.exit.map(|code| (code, p.killed)))
            {
                // An ended session's record and output go with a new one
                // under its id, as `hm run --id` says: said first, Enter
                // again replaces it. It was replaced without a word.
                let how = crate::client::exited_with(code, killed);
                let said =
                    format!("'{id}' {how}: Enter again replaces it and its output; r reruns it");
                if said_again(m, said, now) {
                    to_command(m, id, command);
                    return;
                }
            } else {
                to_command(m, id, command);
            }
            return;
        }
        (KeyCode::BackTab, NewStep::Id) => return,
        // Back to the id from the command, to mend it: Enter or Tab there
        // checks it again.
        (KeyCode::BackTab, NewStep::Command) => {
            m.mode = Mode::NewSession {
                step: NewStep::Id,
                id,
                command,
            };
            return;
        }
        (KeyCode::Tab | KeyCode::BackTab, _) => {
            let order = [
                NewStep::Command,
                NewStep::Dir,
                NewStep::Label,
                NewStep::Classifier,
            ];
            let at = order.iter().position(|s| *s == step).unwrap_or(0);
            let by = if k.code == KeyCode::BackTab { 3 } else { 1 };
            let step = order[(at + by) % order.len()];
            m.mode = Mode::NewSession { step, id, command };
            return;
        }
        (KeyCode::Enter, _) => {
            start(m, id, command, now, fx);
            return;
        }
        (KeyCode::Left | KeyCode::Right | KeyCode::Char(' '), NewStep::Classifier) => {
            let back = k.code == KeyCode::Left;
            m.new_classifier = cycle(m.new_classifier.as_deref(), back);
        }
        (KeyCode::Backspace, NewStep::Classifier) => m.new_classifier = None,
        (KeyCode::Char(c), NewStep::Classifier) if !ctrl => {
            // A letter picks the classifier it begins.
            if let Some(name) = CLASSIFIERS.iter().find(|n| n.starts_with(c)) {
                m.new_classifier = Some((*name).to_owned());
            }
        }
        // Ctrl-U clears the field, as in a shell.
        (KeyCode::Char('u'), _) if ctrl => match step {
            NewStep::Id => id.clear(),
            NewStep::Command => command.clear(),
            NewStep::Dir => m.new_dir.clear(),
            NewStep::Label => m.new_label.clear(),
            NewStep::Classifier => m.new_classifier = None,
        },
        (KeyCode::Backspace, NewStep::Id) => {
            id.pop();
        }
        (KeyCode::Backspace, NewStep::Command) => {
            command.pop();
        }
        (KeyCode::Backspace, NewStep::Dir) => {
            m.new_dir.pop();
        }
        (KeyCode::Backspace, NewStep::Label) => {
            m.new_label.pop();
        }
        (KeyCode::Char(c), NewStep::Id) if !ctrl && id.len() < paths::MAX_ID_LEN => id.push(c),
        // Full: said, not dropped unseen.
        (KeyCode::Char(_), NewStep::Id) if !ctrl => m.notify(
            format!("an id is at most {} characters", paths::MAX_ID_LEN),
            now,
        ),
        (KeyCode::Char(c), NewStep::Command) if !ctrl => command.push(c),
        (KeyCode::Char(c), NewStep::Dir) if !ctrl => m.new_dir.push(c),
        (KeyCode::Char(c), NewStep::Label) if !ctrl => {
            // Full: said, not dropped unseen.
            if let Some(full) = push_label(&mut m.new_label, c) {
                m.notify(full, now);
            }
        }
        _ => {}
    }
    m.mode = Mode::NewSession { step, id, command };
}

/// The next (or previous) choice after `now`, "hm chooses" first.
fn cycle(now: Option<&str>, back: bool) -> Option<String> {
    let choices: Vec<Option<&str>> = std::iter::once(None)
        .chain(CLASSIFIERS.iter().map(|c| Some(*c)))
        .collect();
    let at = choices.iter().position(|c| *c == now).unwrap_or(0);
    let n = choices.len();
    let next = if back { (at + n - 1) % n } else { (at + 1) % n };
    choices[next].map(str::to_owned)
}

/// The field Tab goes to from `step`, as the form and the footer name it.
pub fn after_tab(step: NewStep) -> &'static str {
    match step {
        NewStep::Command => "directory",
        NewStep::Dir => "label",
        NewStep::Label => "classifier",
        NewStep::Id | NewStep::Classifier => "command",
    }
}

/// The machine a form's `id` starts on, when it is another one.
pub fn remote<'a>(m: &Model, id: &'a str) -> Option<&'a str> {
    crate::remote::split_target(id)
        .map(|(host, _)| host)
        // `host:` alone: that machine, the id to come from the command.
        .or_else(|| id.strip_suffix(':'))
        .filter(|host| m.hosts.iter().any(|h| h == host))
}

/// Enter on the command, directory, label or classifier: start it.
fn start(m: &mut Model, typed: String, command: String, now: Instant, fx: &mut Vec<Effect>) {
    let id = if unnamed(m, &typed) {
        placeholder(m, &typed, &command)
    } else {
        typed.clone()
    };
    let far = remote(m, &id).is_some();
    // Empty: the dashboard's shell here; there, that machine's own (its
    // proxy's `$SHELL`).
    let command = if command.trim().is_empty() && !far {
        m.shell.clone()
    } else {
        command
    };
    m.starting.insert(id.clone());
    m.new_started = Some(FormStart {
        id: id.clone(),
        typed,
        command: command.clone(),
    });
    let dir = m.new_dir.trim();
    fx.push(Effect::Spawn {
        id: id.clone(),
        command,
        // There, any directory given is one of that machine's.
        workdir: (!dir.is_empty() && (far || dir != m.cwd)).then(|| dir.to_owned()),
        label: Some(m.new_label.trim().to_owned()).filter(|l| !l.is_empty()),
        classifier: m.new_classifier.clone(),
    });
    m.notify(format!("starting '{id}'…"), now);
    // To the grid, where the new session's pane comes, not back to a zoom.
    m.zoom_under = None;
    m.mode = Mode::Grid;
}

/// Pasted text, typed into the field being filled in.
pub fn paste(m: &mut Model, text: &str) {
    let Mode::NewSession { step, id, command } = &m.mode else {
        return;
    };
    let (step, mut id, mut command) = (*step, id.clone(), command.clone());
    match step {
        NewStep::Id => id.push_str(text.trim()),
        NewStep::Command => command.push_str(text),
        NewStep::Dir => m.new_dir.push_str(text.trim()),
        // What does not fit is cut, as a terminal's field would.
        NewStep::Label => {
            for c in text.trim().chars() {
                push_label(&mut m.new_label, c);
            }
        }
        NewStep::Classifier => {}
    }
    m.mode = Mode::NewSession { step, id, command };
}

/// A label is what `hm run --label` takes: one line of at most
/// [`MAX_LABEL`] printable characters; what would break that is not typed.
/// The words for a person when `c` was not typed as the label is full.
/// (The dashboard's `L` types one too.)
pub(super) fn push_label(label: &mut String, c: char) -> Option<String> {
    if c.is_control() {
        return None;
    }
    if label.chars().count() >= MAX_LABEL {
        return Some(format!("a label is at most {MAX_LABEL} characters"));
    }
    label.push(c);
    None
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use crossterm::event::KeyCode;

    use crate::tui::model::{Effect, Mode, NewStep};
    use crate::tui::update::harness::*;
    use crate::tui::update::update;

    /// Tab goes on from the id as Enter does, checking it, and Shift-Tab
    /// from the command goes back to it: a Tab after the id was dropped,
    /// and the command typed next went into the id.
    #[test]
    fn tab_goes_on_from_the_id_and_shift_tab_back_to_it() {
        let now = Instant::now();
        let mut m = model(100, 31);
        update(&mut m, press(KeyCode::Char('n')), now);
        typed(&mut m, "logs", now);
        update(&mut m, press(KeyCode::Tab), now);
        typed(&mut m, "tail -f x", now);
        let at = |m: &crate::tui::model::Model| match &m.mode {
            Mode::NewSession { step, id, command } => (*step, id.clone(), command.clone()),
            other => panic!("not in the form: {other:?}"),
        };
        assert_eq!(
            at(&m),
            (NewStep::Command, "logs".into(), "tail -f x".into())
        );
        update(&mut m, press(KeyCode::BackTab), now);
        update(&mut m, press(KeyCode::Backspace), now);
        typed(&mut m, "/", now);
        update(&mut m, press(KeyCode::Tab), now);
        assert_eq!(at(&m).0, NewStep::Id, "an id checked at Tab too");
        assert!(
            notice(&m).starts_with("'log/' cannot be an id"),
            "{}",
            notice(&m)
        );
    }

    #[test]
    fn the_form_starts_empty_and_offers_the_classifiers_after_the_label() {
        let now = Instant::now();
        let mut m = model(100, 31);
        m.shell = "/bin/sh".into();
        update(&mut m, press(KeyCode::Char('n')), now);
        // Typing gives the id typed (it gave `s1cc1` when `s1` was text).
        typed(&mut m, "cc1", now);
        update(&mut m, press(KeyCode::Enter), now);
        typed(&mut m, "./ask.sh", now);
        for _ in 0..3 {
            update(&mut m, press(KeyCode::Tab), now);
        }
        assert!(matches!(
            m.mode,
            Mode::NewSession {
                step: NewStep::Classifier,
                ..
            }
        ));
        assert_eq!(m.new_classifier, None, "hm chooses unless told");
        let mut seen = Vec::new();
        for _ in 0..5 {
            update(&mut m, press(KeyCode::Right), now);
            seen.push(m.new_classifier.clone().unwrap_or_default());
        }
        assert_eq!(seen, ["agent", "simple", "claude", "none", ""]);
        update(&mut m, press(KeyCode::Left), now);
        assert_eq!(m.new_classifier.as_deref(), Some("none"));
        // A letter picks the one it begins.
        typed(&mut m, "a", now);
        assert_eq!(m.new_classifier.as_deref(), Some("agent"));
        // Tab goes round to the command, and the choice stays.
        update(&mut m, press(KeyCode::Tab), now);
        let fx = update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(
            fx,
            [Effect::Spawn {
                id: "cc1".into(),
                command: "./ask.sh".into(),
                workdir: None,
                label: None,
                classifier: Some("agent".into()),
            }]
        );
        // The next form starts over.
        update(&mut m, press(KeyCode::Char('n')), now);
        assert_eq!(m.new_classifier, None);
    }

    /// A command in the shell's own syntax is named after the shell that
    /// runs it, not its first keyword.
    #[test]
    fn a_shell_loop_is_named_sh() {
        let m = model(100, 31);
        let named = |command: &str| super::placeholder(&m, "", command);
        assert_eq!(named("for i in 1 2 3; do echo tick $i; done; exit 3"), "sh");
        assert_eq!(named("while true; do date; sleep 1; done"), "sh");
        assert_eq!(named("(cd web && npm run dev)"), "sh");
        assert_eq!(named("cd web && npm run dev"), "sh");
        assert_eq!(named("source .venv/bin/activate && pytest"), "sh");
        assert_eq!(named("exec claude --resume"), "claude");
        assert_eq!(named("FOO=1 npm run dev && echo done"), "npm");
        assert_eq!(named("/usr/bin/python3 -m http.server"), "python3");
    }

    /// A label or an id typed past its length says so: the keys were
    /// dropped unseen.
    #[test]
    fn a_field_full_says_so() {
        let now = Instant::now();
        let mut m = model(100, 31);
        update(&mut m, press(KeyCode::Char('n')), now);
        typed(&mut m, &"i".repeat(70), now);
        assert_eq!(notice(&m), "an id is at most 64 characters");
        update(&mut m, press(KeyCode::Backspace), now);
        assert_eq!(notice(&m), "", "an edit makes it old");
        update(&mut m, press(KeyCode::Enter), now);
        typed(&mut m, "sh", now);
        update(&mut m, press(KeyCode::Tab), now);
        update(&mut m, press(KeyCode::Tab), now);
        typed(&mut m, &"l".repeat(61), now);
        assert_eq!(m.new_label.chars().count(), 60);
        assert_eq!(notice(&m), "a label is at most 60 characters");
    }

    /// Another machine's session: the form neither shows nor sends the
    /// dashboard's directory or shell as its own; a host not set up, or
    /// a corrected id, says so at once.
    #[test]
    fn a_session_on_another_machine_gets_that_machine_s_home_and_shell() {
        let now = Instant::now();
        let mut m = model(100, 31);
        m.shell = "/bin/bash".into();
        m.cwd = "/tmp/here".into();
        m.hosts = vec!["box".into()];
        update(&mut m, press(KeyCode::Char('n')), now);
        typed(&mut m, "nohost:x", now);
        update(&mut m, press(KeyCode::Enter), now);
        let said = m
            .notice
            .as_ref()
            .map(|(t, _)| t.clone())
            .unwrap_or_default();
        assert_eq!(
            said,
            "no host 'nohost' in the config's [[hosts]] (it knows box)"
        );
        assert!(matches!(
            m.mode,
            Mode::NewSession {
                step: NewStep::Id,
                ..
            }
        ));
        // Correcting the id takes the old word away.
        for _ in 0..8 {
            update(&mut m, press(KeyCode::Backspace), now);
        }
        assert_eq!(m.notice, None);
        typed(&mut m, "box:far", now);
        update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(
            m.new_dir, "",
            "the dashboard's directory is no directory there"
        );
        let text = screen_text(&m, now);
        assert!(text.contains("(empty: the shell on box)"), "{text}");
        let fx = update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(
            fx,
            [Effect::Spawn {
                id: "box:far".into(),
                command: String::new(),
                workdir: None,
                label: None,
                classifier: None,
            }]
        );
        // Here, the dashboard's shell and directory, as before.
        update(&mut m, press(KeyCode::Char('n')), now);
        typed(&mut m, "near", now);
        update(&mut m, press(KeyCode::Enter), now);
        assert_eq!(m.new_dir, "/tmp/here");
        let fx = update(&mut m, press(KeyCode::Enter), now);
        assert!(
            matches!(&fx[..], [Effect::Spawn { command, workdir: None, .. }] if command == "/bin/bash"),
            "{fx:?}"
        );
    }
}
