//! The dashboard's layout remembered across runs (the column count and
//! the sort, when it was left, which panes were marked `●` and which was
//! selected), in `$XDG_STATE_HOME/heimdall/tui.json` (or
//! `~/.local/state/heimdall/`). Best effort both ways: a missing or
//! broken file is no reason not to start, and one that cannot be written
//! is no reason to fail on the way out.

use std::path::PathBuf;

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Layout {
    pub columns: Option<u16>,
    #[serde(default)]
    pub by_state: bool,
    /// When the dashboard was last quit (wall clock, ms): a session that
    /// ended after that ended unseen, and its pane asks for a look.
    #[serde(default)]
    pub left_unix_ms: Option<u64>,
    /// The sessions whose panes were marked `●` (finished, ended, asked
    /// for a look) and not looked at when the dashboard was quit.
    #[serde(default)]
    pub marked: Vec<String>,
    /// The selected pane's session.
    #[serde(default)]
    pub selected: Option<String>,
}

fn path() -> Option<PathBuf> {
    let dir = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))?;
    Some(dir.join("heimdall").join("tui.json"))
}

/// What was saved, or the defaults.
pub fn load() -> Layout {
    let Some(p) = path() else {
        return Layout::default();
    };
    let Ok(text) = std::fs::read(&p) else {
        return Layout::default();
    };
    let mut l: Layout = serde_json::from_slice(&text).unwrap_or_default();
    l.columns = l.columns.filter(|c| (1..=16).contains(c));
    l
}

/// Written whole (a temporary file renamed into place).
pub fn save(l: &Layout) {
    let Some(p) = path() else { return };
    let Some(dir) = p.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = dir.join(".tui.json.tmp");
    let Ok(text) = serde_json::to_vec(l) else {
        return;
    };
    if std::fs::write(&tmp, text).is_ok() {
        let _ = std::fs::rename(&tmp, &p);
    }
}
