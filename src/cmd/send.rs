//! `hm send ID TEXT... [--enter]` and `hm send ID --keys KEY...`: types
//! into a session, as if at its terminal.

use anyhow::{Result, bail};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::cli::SendArgs;
use crate::client::{self, find_session};
use crate::config::Config;
use crate::protocol::{self, Reply, Request, conn};
use crate::verdict::Detail;

/// The bytes a terminal sends for a key named as tmux names them: `Enter`,
/// `Tab`, `Escape`, `BSpace`, `Space`, arrows, `Home`, `End`, `PageUp`,
/// `PageDown` (`PPage`/`PgUp`, `NPage`/`PgDn`), `Delete` (`DC`), `Insert`
/// (`IC`), `F1`-`F24` (past F12, xterm's shifted F1-F12), or a single
/// character for itself; each after any of the modifiers `C-` (control),
/// `M-` (meta) and `S-` (shift), in any order: `C-c`, `M-x`, `C-Left`,
/// `S-Up`, `C-M-x`. They are the bytes the dashboard sends for the key
/// pressed in a session (xterm's): a modified arrow carries its modifiers
/// in its sequence (`C-Left` is `ESC [ 1 ; 5 D`), a meta character comes
/// after ESC.
///
/// With `app_cursor` (the program turned on application cursor keys, as
/// `less` and `vim` do) arrows, Home and End are sent as a terminal sends
/// them then: `ESC O A`, not `ESC [ A`.
pub fn key_bytes(name: &str, app_cursor: bool) -> Option<Vec<u8>> {
    let mut mods = KeyModifiers::NONE;
    let mut rest = name;
    // `C-` alone is no key; `C--` is control of `-`.
    while rest.len() > 2 {
        let m = match rest.get(..2).map(str::to_ascii_uppercase).as_deref() {
            Some("C-") => KeyModifiers::CONTROL,
            Some("M-") => KeyModifiers::ALT,
            Some("S-") => KeyModifiers::SHIFT,
            _ => break,
        };
        mods |= m;
        rest = &rest[2..];
    }
    let code = match rest {
        "Up" => KeyCode::Up,
        "Down" => KeyCode::Down,
        "Right" => KeyCode::Right,
        "Left" => KeyCode::Left,
        "Home" => KeyCode::Home,
        "End" => KeyCode::End,
        "Enter" => KeyCode::Enter,
        "Tab" if mods.contains(KeyModifiers::SHIFT) => {
            mods.remove(KeyModifiers::SHIFT);
            KeyCode::BackTab
        }
        "Tab" => KeyCode::Tab,
        "BTab" => KeyCode::BackTab,
        "Escape" | "Esc" => KeyCode::Esc,
        "BSpace" | "Backspace" => KeyCode::Backspace,
        "Space" => KeyCode::Char(' '),
        "PageUp" | "PPage" | "PgUp" => KeyCode::PageUp,
        "PageDown" | "NPage" | "PgDn" => KeyCode::PageDown,
        "Delete" | "DC" => KeyCode::Delete,
        "Insert" | "IC" => KeyCode::Insert,
        _ => match (rest.strip_prefix('F'))
            .and_then(|n| n.parse::<u8>().ok())
            .filter(|n| format!("F{n}") == rest)
        {
            Some(n @ 1..=12) => KeyCode::F(n),
            // xterm sends F13-F24 as shifted F1-F12.
            Some(n @ 13..=24) => {
                mods |= KeyModifiers::SHIFT;
                KeyCode::F(n - 12)
            }
            _ => {
                let mut chars = rest.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => KeyCode::Char(c),
                    _ => return None,
                }
            }
        },
    };
    let code = match code {
        // A shifted character is the character shifted; a terminal sends
        // no modifier for it.
        KeyCode::Char(c) if mods.contains(KeyModifiers::SHIFT) => {
            mods.remove(KeyModifiers::SHIFT);
            let mut upper = c.to_uppercase();
            match (upper.next(), upper.next()) {
                (Some(u), None) => KeyCode::Char(u),
                _ => return None,
            }
        }
        code => code,
    };
    if mods.contains(KeyModifiers::CONTROL)
        && let KeyCode::Char(c) = code
    {
        // Only characters with a control form have a C- name; the rest
        // would come out as themselves.
        let plain = encode(KeyCode::Char(c), KeyModifiers::CONTROL, false)?;
        if plain == c.to_string().into_bytes() {
            return None;
        }
    }
    encode(code, mods, app_cursor)
}

/// The bytes the dashboard would send for this key pressed in a session.
fn encode(code: KeyCode, mods: KeyModifiers, app_cursor: bool) -> Option<Vec<u8>> {
    crate::vt::keys::encode(&KeyEvent::new(code, mods), app_cursor)
}

pub fn send(args: SendArgs, config: &Config) -> Result<i32> {
    // The command line is checked before the session is looked for: a
    // mistake in it is the same mistake whatever the id (exit 2).
    if args.keys
        && let Some(k) = args.text.iter().find(|k| key_bytes(k, false).is_none())
    {
        super::usage!(
            "unknown key '{k}' (names as tmux's: Enter, Tab, Escape, BSpace, Up, PgUp, F1, C-c, M-x, C-Left, S-Up, ...)"
        );
    }
    if args.text.iter().all(String::is_empty) && !args.enter {
        super::usage!("nothing to send (give TEXT, or --enter)");
    }
    let dir = client::socket_dir(&args.dir, config);
    let session = find_session(&dir, &args.id)?;
    let rt = client::runtime()?;
    // Arrow keys depend on the mode the program put its terminal in.
    let cursor_keys = ["Up", "Down", "Left", "Right", "Home", "End"];
    let app_cursor = args.keys
        && args
            .text
            .iter()
            .any(|k| cursor_keys.iter().any(|c| k.ends_with(c)))
        && rt
            .block_on(client::answered(&session.id, async {
                Ok(conn::screen_at(&session.sock).await?)
            }))
            .is_ok_and(|s| s.application_cursor);
    // Text typed at an agent's dialog answers it by its first letter
    // (`n` of "next step" denied Codex's command, the rest became its
    // next prompt): a script sending its next task at the wrong moment
    // is told, not obeyed. Keys are sent as named, deliberately.
    if !args.keys && !args.force {
        let asked = rt.block_on(client::answered(&session.id, async {
            Ok(conn::info_status_at(&session.sock).await?)
        }));
        // Nor is text added to a draft someone typed at an agent's
        // prompt: `next: run the tests` and a script's `also lint` went
        // off as one prompt.
        if let Ok((Some(info), _)) = &asked
            && !args.text.iter().all(|t| t.is_empty())
            && let Some(state) = &info.state
            && state.detail == Some(Detail::PromptEditing)
            && state.turn_over().is_some()
        {
            let id = client::shown_id(&session.id);
            let draft = state
                .signals
                .iter()
                .find(|s| s.source == crate::detect::Source::Screen)
                .map(|s| {
                    // The prompt's glyph and the space after it (`❯ `), not
                    // the draft's own first characters (`/compact`).
                    let text = s.text.trim_start();
                    let mut chars = text.chars();
                    let glyph = chars
                        .next()
                        .filter(|c| !c.is_alphanumeric() && !"/@\"'".contains(*c));
                    let text = if glyph.is_some() {
                        chars.as_str()
                    } else {
                        text
                    };
                    format!(" ('{}')", crate::paths::sanitize(text.trim_start()))
                })
                .unwrap_or_default();
            bail!(
                "session '{id}' has a draft typed at its prompt{draft}, which what you type \
                 would be added to: --force types anyway ('hm attach {id}' to see it)"
            );
        }
        if let Ok((Some(info), _)) = asked
            && let Some(d) = info
                .dialog
                .filter(|d| d.detail.is_some_and(|d| d != Detail::Input))
        {
            let id = client::shown_id(&session.id);
            let what = d.detail.map_or("a", |d| d.name());
            let about = d
                .subject
                .as_deref()
                .map(|s| format!(" ({})", crate::paths::sanitize(s)))
                .unwrap_or_default();
            let takes = |a: &str| d.answers.iter().any(|n| n == a);
            let answer = match (takes("approve") || takes("deny"), takes("choose")) {
                (true, true) => format!("'hm approve {id}', 'hm deny {id}' or 'hm choose {id} N'"),
                (false, true) => format!("'hm choose {id} N'"),
                _ => format!("'hm approve {id}' or 'hm deny {id}'"),
            };
            bail!(
                "session '{id}' is waiting at its {what} dialog{about}, which what you type would \
                 answer: {answer} answers it; --force types anyway"
            );
        }
    }
    let mut bytes = Vec::new();
    if args.keys {
        for k in &args.text {
            let Some(b) = key_bytes(k, app_cursor) else {
                bail!(
                    "unknown key '{k}' (names as tmux's: Enter, Tab, Escape, BSpace, Up, PgUp, F1, C-c, M-x, C-Left, S-Up, ...)"
                );
            };
            bytes.extend(b);
        }
    } else {
        bytes.extend(args.text.join(" ").into_bytes());
    }
    // Enter comes apart from the text, a moment after it: Codex takes a
    // burst of typed characters for a paste and, for 120 ms after one,
    // an Enter for a new line in its prompt, not for sending it.
    let enter = args.enter.then_some(&b"\r"[..]);
    let (text, enter) = match enter {
        Some(e) if bytes.is_empty() => (e, None),
        e => (&bytes[..], e),
    };
    rt.block_on(client::answered(&session.id, async {
        let (mut r, mut w) = conn::connect(&session.sock).await?;
        // INPUT has no answer; the STATUS after it is answered only once
        // the supervisor has taken the input, so the command returns when
        // the bytes are on their way to the program.
        for (i, part) in std::iter::once(text).chain(enter).enumerate() {
            if i > 0 {
                tokio::time::sleep(ENTER_AFTER).await;
            }
            let mut requests: Vec<Request<'_>> = part
                .chunks(protocol::MAX_PAYLOAD as usize / 2)
                .map(Request::Input)
                .collect();
            requests.push(Request::Status);
            conn::ask(&mut w, &requests).await?;
            while !matches!(r.expect().await?, Reply::Status(_)) {}
        }
        Ok(())
    }))
    .map_err(|e| {
        // Refused as the program has exited (the supervisor is about to
        // write its record), or reset on its way out: how it ended.
        let refused = e
            .chain()
            .any(|c| matches!(c.downcast_ref(), Some(conn::ConnError::Refused(_))));
        let soon = std::time::Instant::now() + REFUSED_PATIENCE;
        match refused.then(|| client::ended_meanwhile(&dir, &session.id, soon)) {
            Some(Some(r)) => anyhow::anyhow!(client::has_ended(&r)),
            _ => client::or_ended(&dir, &session.id, e),
        }
    })?;
    Ok(0)
}

/// How long after the text `--enter` sends its Enter: past the 120 ms in
/// which Codex 0.169 reads an Enter after a burst of characters as a new
/// line (its paste-burst rule).
const ENTER_AFTER: std::time::Duration = std::time::Duration::from_millis(150);

/// How long a refused input looks for the record of a session that has
/// just ended: its supervisor writes it right after the program's end.
const REFUSED_PATIENCE: std::time::Duration = std::time::Duration::from_millis(500);

#[cfg(test)]
mod tests {

    #[test]
    fn keys_are_named_as_tmux_names_them() {
        let key_bytes = |k: &str| super::key_bytes(k, false);
        assert_eq!(key_bytes("Enter").as_deref(), Some(&b"\r"[..]));
        assert_eq!(key_bytes("c-c").as_deref(), Some(&[3u8][..]));
        assert_eq!(key_bytes("C-Space").as_deref(), Some(&[0u8][..]));
        assert_eq!(key_bytes("C-M-x").as_deref(), Some(&[0x1b, 0x18][..]));
        assert_eq!(key_bytes("S-Tab").as_deref(), Some(&b"\x1b[Z"[..]));
        assert_eq!(
            super::key_bytes("Down", true).as_deref(),
            Some(&b"\x1bOB"[..])
        );
        assert_eq!(
            super::key_bytes("Down", false).as_deref(),
            Some(&b"\x1b[B"[..])
        );
        assert_eq!(key_bytes("C-c").as_deref(), Some(&[3u8][..]));
        assert_eq!(key_bytes("C-C").as_deref(), Some(&[3u8][..]));
        assert_eq!(key_bytes("M-x").as_deref(), Some(&b"\x1bx"[..]));
        // As xterm and the dashboard send them: the modifiers in the
        // sequence.
        assert_eq!(key_bytes("M-Up").as_deref(), Some(&b"\x1b[1;3A"[..]));
        assert_eq!(key_bytes("C-Left").as_deref(), Some(&b"\x1b[1;5D"[..]));
        assert_eq!(key_bytes("S-Up").as_deref(), Some(&b"\x1b[1;2A"[..]));
        assert_eq!(key_bytes("C-S-Right").as_deref(), Some(&b"\x1b[1;6C"[..]));
        assert_eq!(key_bytes("M-C-x").as_deref(), Some(&[0x1b, 0x18][..]));
        assert_eq!(key_bytes("C-PgUp").as_deref(), Some(&b"\x1b[5;5~"[..]));
        assert_eq!(key_bytes("PgDn").as_deref(), Some(&b"\x1b[6~"[..]));
        assert_eq!(key_bytes("S-a").as_deref(), Some(&b"A"[..]));
        assert_eq!(key_bytes("C--"), None, "- has no control form");
        assert_eq!(key_bytes("M--").as_deref(), Some(&b"\x1b-"[..]));
        assert_eq!(key_bytes("F13").as_deref(), Some(&b"\x1b[1;2P"[..]));
        assert_eq!(key_bytes("F24").as_deref(), Some(&b"\x1b[24;2~"[..]));
        assert_eq!(key_bytes("F25"), None);
        // With application cursor keys, a modified arrow keeps its CSI.
        assert_eq!(
            super::key_bytes("C-Up", true).as_deref(),
            Some(&b"\x1b[1;5A"[..])
        );
        assert_eq!(key_bytes("y").as_deref(), Some(&b"y"[..]));
        assert_eq!(key_bytes("é").as_deref(), Some("é".as_bytes()));
        assert_eq!(key_bytes("F12").as_deref(), Some(&b"\x1b[24~"[..]));
        assert_eq!(key_bytes("Nope"), None);
        assert_eq!(key_bytes("C-"), None);
        assert_eq!(key_bytes("C-ab"), None);
        assert_eq!(key_bytes("C-é"), None);
        assert_eq!(key_bytes("F05"), None);
        assert_eq!(key_bytes("F1").as_deref(), Some(&b"\x1bOP"[..]));
        assert_eq!(
            super::key_bytes("Home", true).as_deref(),
            Some(&b"\x1bOH"[..])
        );
    }
}
