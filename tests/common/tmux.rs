//! A private tmux server running one command (the dashboard), read back
//! with `capture-pane` and driven with `send-keys` and `resize-window`: a
//! real terminal that joins grapheme clusters and sets `TMUX` in what runs
//! in it, as a person's tmux does. With `set-clipboard on`, what a program
//! copies through OSC 52 lands in tmux's paste buffer ([`Tmux::buffer`]).

use std::path::PathBuf;
use std::process::Command;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::Sandbox;

/// Whether tmux can be run here; tests that need it say they skipped.
pub fn available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A tmux server of its own, ended (by its pid) on drop.
pub struct Tmux {
    name: String,
}

impl Tmux {
    /// `command` in a window of `cols`x`rows`, with the sandbox's
    /// environment.
    pub fn start(sb: &Sandbox, command: &str, (cols, rows): (u16, u16)) -> Option<Tmux> {
        // One server per window: the tests of a binary run side by side,
        // and a test may start a second window as it ends the first.
        static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!(
            "hm-test-{}-{}-{n}",
            std::process::id(),
            sb.path().file_name()?.to_string_lossy()
        );
        let ok = Command::new("tmux")
            .args(["-L", &name, "-f", "/dev/null", "new-session", "-d"])
            .args(["-x", &cols.to_string(), "-y", &rows.to_string(), command])
            .envs(sb.terminal_env(&[]))
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return None;
        }
        let t = Tmux { name };
        // The window keeps the size asked for, not its clients'; programs
        // may put text on the clipboard (OSC 52), into tmux's buffers.
        t.tmux(&["set-option", "-g", "window-size", "manual"]);
        t.tmux(&["set-option", "-g", "set-clipboard", "on"]);
        Some(t)
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.name])
            .args(args)
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen as text.
    pub fn capture(&self) -> String {
        self.tmux(&["capture-pane", "-p"])
    }

    /// The screen's rows.
    pub fn lines(&self) -> Vec<String> {
        self.capture().lines().map(str::to_owned).collect()
    }

    /// Keys as `tmux send-keys` names them (`Enter`, `C-u`, `PageDown`),
    /// or text with `-l`.
    pub fn keys(&self, keys: &str) {
        self.tmux(&["send-keys", keys]);
    }

    /// Text typed as it is.
    pub fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-l", text]);
    }

    /// Bytes as a terminal would send them (a mouse report, say).
    pub fn bytes(&self, bytes: &[u8]) {
        let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut args = vec!["send-keys", "-H"];
        args.extend(hex.iter().map(String::as_str));
        self.tmux(&args);
    }

    /// The newest paste buffer (what OSC 52 copied), if there is one.
    pub fn buffer(&self) -> Option<String> {
        let out = Command::new("tmux")
            .args(["-L", &self.name, "show-buffer"])
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The pid of the program in the window.
    pub fn pane_pid(&self) -> Option<i32> {
        self.tmux(&["display-message", "-p", "#{pane_pid}"])
            .trim()
            .parse()
            .ok()
    }

    /// The window resized, as a person resizing their terminal.
    pub fn resize(&self, cols: u16, rows: u16) {
        self.tmux(&[
            "resize-window",
            "-x",
            &cols.to_string(),
            "-y",
            &rows.to_string(),
        ]);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let pid = self.tmux(&["display-message", "-p", "#{pid}"]);
        if let Ok(pid) = pid.trim().parse::<i32>() {
            let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
        }
        // A server ended by a signal leaves its socket behind.
        let dir = std::env::var_os("TMUX_TMPDIR").unwrap_or_else(|| "/tmp".into());
        let uid = nix::unistd::geteuid().as_raw();
        let _ = std::fs::remove_file(
            PathBuf::from(dir)
                .join(format!("tmux-{uid}"))
                .join(&self.name),
        );
    }
}

/// One pane as captured: its top border, the rows inside and its bottom
/// border, found by its title (` id `, right after the corner).
#[derive(Debug, Clone)]
pub struct Pane {
    pub top: String,
    pub body: Vec<String>,
    pub bottom: String,
}

impl Pane {
    pub fn shows(&self, text: &str) -> bool {
        self.body.iter().any(|l| l.contains(text))
    }
}

/// The pane titled `id` in a capture (box-drawing characters are one
/// column each; the test's text is ASCII).
pub fn pane(lines: &[String], id: &str) -> Option<Pane> {
    let grid: Vec<Vec<char>> = lines.iter().map(|l| l.chars().collect()).collect();
    let title: Vec<char> = format!(" {id} ").chars().collect();
    let at = |r: usize, c: usize| grid.get(r).and_then(|l| l.get(c)).copied().unwrap_or(' ');
    for (r, row) in grid.iter().enumerate() {
        for c in 0..row.len() {
            if !matches!(row[c], '╭' | '┏') {
                continue;
            }
            if !(0..title.len()).all(|i| at(r, c + 1 + i) == title[i]) {
                continue;
            }
            let right = (c + 1..row.len()).find(|&x| matches!(row[x], '╮' | '┓'))?;
            let bottom = (r + 1..grid.len()).find(|&y| matches!(at(y, c), '╰' | '┗'))?;
            let line = |y: usize| (c + 1..right).map(|x| at(y, x)).collect::<String>();
            return Some(Pane {
                top: line(r),
                body: (r + 1..bottom).map(line).collect(),
                bottom: line(bottom),
            });
        }
    }
    None
}
