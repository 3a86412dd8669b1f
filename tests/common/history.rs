//! Reading a session's history the ways a person does: `hm logs`, the
//! dashboard's copy mode (everything selected and copied, as OSC 52
//! carries it out), `hm attach`'s copy mode the same way. (A tmux with
//! `set-clipboard on`, which takes an OSC 52 copy into its paste buffer,
//! is `super::tmux`.)

use std::ffi::OsString;

use base64::Engine as _;
use heimdall::protocol::{ClientType, Size};

use super::terminal::Terminal;
use super::{HM, Raw, Sandbox, stderr, stdout};

/// `hm logs ID ARGS`: its lines, and it must succeed.
pub fn logs(sb: &Sandbox, id: &str, args: &[&str]) -> Vec<String> {
    let mut all = vec!["logs", id];
    all.extend(args);
    let out = sb.cmd(&all);
    assert!(out.status.success(), "hm logs: {}", stderr(&out));
    stdout(&out).lines().map(str::to_owned).collect()
}

/// A RESIZE to `cols` x `rows` from a client of its own, as a dashboard
/// or a terminal sends one.
pub fn resize(sb: &Sandbox, id: &str, cols: u16, rows: u16) {
    let mut raw = Raw::connect(&sb.sock(id)).expect("connect");
    raw.send(ClientType::Resize as u8, &Size { cols, rows }.encode());
    // Answered in order: once STATUS is, the RESIZE was carried out.
    raw.status().expect("the session answers");
}

/// The text of the last OSC 52 copy in `bytes`.
pub fn osc52(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let start = text.rfind("\x1b]52;c;")? + 7;
    let end = start + text[start..].find('\x07')?;
    let raw = base64::engine::general_purpose::STANDARD
        .decode(&text[start..end])
        .ok()?;
    String::from_utf8(raw).ok()
}

/// The dashboard's whole history of its selected pane (the only
/// session), copied once the pane shows `shown`: `[` opens copy mode, `g`
/// goes to the oldest row, `V` selects from there to the bottom (`G`),
/// `y` copies. Sessions are not resized to the dashboard's panes
/// (`fit_sessions = false`): the pane shows the session at its own size.
pub fn dashboard_copy(sb: &Sandbox, id: &str, shown: &str) -> String {
    let config = sb.path().join("config/heimdall/heimdall.toml");
    std::fs::create_dir_all(config.parent().expect("a dir")).expect("config dir");
    let before = std::fs::read_to_string(&config).unwrap_or_default();
    if !before.contains("fit_sessions") {
        std::fs::write(&config, format!("{before}\n[tui]\nfit_sessions = false\n"))
            .expect("config");
    }
    let args: Vec<OsString> = ["tui", "--socket-dir", sb.dir()]
        .iter()
        .map(OsString::from)
        .collect();
    let mut t = Terminal::start(
        HM.as_ref(),
        &args,
        &sb.terminal_env(&[("SHELL", "/bin/sh")]),
        sb.path(),
        (50, 160),
        "$ hm tui",
    );
    t.wait_for("the pane", |t| {
        t.last_row().contains("move") && t.contains(id) && t.contains(shown)
    });
    t.record();
    t.send(b"[");
    t.wait_for("copy mode", |t| t.last_row().contains(" copy "));
    t.send(b"gVGy");
    t.wait_for("the copy", |t| osc52(t.recorded()).is_some());
    osc52(t.recorded()).unwrap_or_default()
}

/// `hm attach`'s copy mode, the same way: the copy key, `g V G y`.
pub fn attach_copy(sb: &Sandbox, id: &str, (cols, rows): (u16, u16)) -> String {
    let args: Vec<OsString> = ["attach", id, "--socket-dir", sb.dir()]
        .iter()
        .map(OsString::from)
        .collect();
    let mut t = Terminal::start(
        HM.as_ref(),
        &args,
        &sb.terminal_env(&[]),
        sb.path(),
        (rows, cols),
        "$ hm attach",
    );
    t.wait_for("the status bar", |t| t.last_row().contains(id));
    t.record();
    t.send(b"\x1d");
    t.wait_for("copy mode", |t| t.last_row().contains("copy [+"));
    t.send(b"gVGy");
    t.wait_for("the copy", |t| osc52(t.recorded()).is_some());
    osc52(t.recorded()).unwrap_or_default()
}
