//! A private tmux server running one command: the real terminal a person
//! would run the dashboard in, driven with `send-keys` (keys, and raw
//! bytes for mouse reports) and read with `capture-pane`. With
//! `set-clipboard on`, what a program copies through OSC 52 lands in
//! tmux's paste buffer, where [`Tmux::buffer`] reads it.

use std::path::PathBuf;
use std::process::Command;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::Sandbox;

/// Whether tmux can be run here; tests without it say why and skip.
pub fn available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A tmux server of its own (`-L`), ended by its pid when dropped.
pub struct Tmux {
    name: String,
}

impl Tmux {
    /// `command` in a window of `cols` x `rows`, with the sandbox's
    /// environment; `None` if tmux would not start.
    pub fn start(sb: &Sandbox, command: &str, (cols, rows): (u16, u16)) -> Option<Tmux> {
        let name = format!(
            "hm-test-{}-{}",
            std::process::id(),
            sb.path().file_name()?.to_string_lossy()
        );
        let ok = Command::new("tmux")
            .args(["-L", &name, "-f", "/dev/null", "new-session", "-d"])
            .args(["-x", &cols.to_string(), "-y", &rows.to_string(), command])
            .envs(sb.terminal_env(&[]))
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .status()
            .is_ok_and(|s| s.success());
        let t = Tmux { name };
        // Programs may put text on the clipboard (OSC 52), into tmux's
        // buffers; the window keeps its size whatever clients come.
        t.tmux(&["set-option", "-g", "set-clipboard", "on"]);
        t.tmux(&["set-option", "-g", "window-size", "manual"]);
        ok.then_some(t)
    }

    fn tmux(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .args(["-L", &self.name])
            .args(args)
            .output()
            .expect("run tmux")
    }

    /// The window's text, row by row.
    pub fn capture(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p"]).stdout).into_owned()
    }

    /// Keys by tmux's names (`Enter`, `Escape`, `y`).
    pub fn keys(&self, keys: &str) {
        self.tmux(&["send-keys", keys]);
    }

    /// Bytes as a terminal would send them (a mouse report, say).
    pub fn bytes(&self, bytes: &[u8]) {
        let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut args = vec!["send-keys", "-H"];
        args.extend(hex.iter().map(String::as_str));
        self.tmux(&args);
    }

    /// The window's new size.
    pub fn resize(&self, cols: u16, rows: u16) {
        self.tmux(&[
            "resize-window",
            "-x",
            &cols.to_string(),
            "-y",
            &rows.to_string(),
        ]);
    }

    /// The newest paste buffer (what OSC 52 copied), if there is one.
    pub fn buffer(&self) -> Option<String> {
        let out = self.tmux(&["show-buffer"]);
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The pid of the program in the window.
    pub fn pane_pid(&self) -> Option<i32> {
        let out = self.tmux(&["display-message", "-p", "#{pane_pid}"]);
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let out = self.tmux(&["display-message", "-p", "#{pid}"]);
        if let Ok(pid) = String::from_utf8_lossy(&out.stdout).trim().parse::<i32>() {
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
