//! `hm send ID TEXT... [--enter]` and `hm send ID --keys KEY...`: types
//! into a session, as if at its terminal.

use anyhow::{Result, bail};

use crate::cli::SendArgs;
use crate::client::{self, find_session};
use crate::config::Config;
use crate::protocol::{self, client as to, conn};

/// The bytes a terminal sends for a key named as tmux names them: `Enter`,
/// `Tab`, `Escape`, `BSpace`, `Space`, arrows, `Home`, `End`, `PageUp`,
/// `PageDown` (`PPage`, `NPage`), `Delete` (`DC`), `Insert` (`IC`),
/// `F1`-`F12`, `C-x` (control), `M-x` (meta: ESC first), or a single
/// character for itself.
///
/// With `app_cursor` (the program turned on application cursor keys, as
/// `less` and `vim` do) arrows, Home and End are sent as a terminal sends
/// them then: `ESC O A`, not `ESC [ A`.
pub fn key_bytes(name: &str, app_cursor: bool) -> Option<Vec<u8>> {
    let prefix = |p: &str| {
        name.get(..2)
            .filter(|h| h.eq_ignore_ascii_case(p))
            .map(|_| &name[2..])
    };
    if let Some(rest) = prefix("M-")
        && !rest.is_empty()
    {
        let mut b = vec![0x1b];
        b.extend(key_bytes(rest, app_cursor)?);
        return Some(b);
    }
    if let Some(rest) = prefix("C-") {
        if rest.get(..2).is_some_and(|h| h.eq_ignore_ascii_case("M-")) {
            // C-M-x: meta of control-x.
            let mut b = vec![0x1b];
            b.extend(key_bytes(&format!("C-{}", &rest[2..]), app_cursor)?);
            return Some(b);
        }
        if rest == "Space" {
            return Some(vec![0]);
        }
        let mut chars = rest.chars();
        let (Some(c), None) = (chars.next(), chars.next()) else {
            return None;
        };
        return Some(vec![match c.to_ascii_lowercase() {
            c @ 'a'..='z' => c as u8 - b'a' + 1,
            '@' | ' ' | '2' => 0,
            '[' | '3' => 0x1b,
            '\\' | '4' => 0x1c,
            ']' | '5' => 0x1d,
            '^' | '6' => 0x1e,
            '_' | '7' | '/' => 0x1f,
            '?' | '8' => 0x7f,
            _ => return None,
        }]);
    }
    let arrow = |c: u8| {
        Some(if app_cursor {
            vec![0x1b, b'O', c]
        } else {
            vec![0x1b, b'[', c]
        })
    };
    match name {
        "Up" => return arrow(b'A'),
        "Down" => return arrow(b'B'),
        "Right" => return arrow(b'C'),
        "Left" => return arrow(b'D'),
        "Home" => return arrow(b'H'),
        "End" => return arrow(b'F'),
        _ => {}
    }
    let fixed: &[u8] = match name {
        "Enter" => b"\r",
        "Tab" => b"\t",
        "BTab" | "S-Tab" => b"\x1b[Z",
        "Escape" | "Esc" => b"\x1b",
        "BSpace" | "Backspace" => b"\x7f",
        "Space" => b" ",
        "PageUp" | "PPage" => b"\x1b[5~",
        "PageDown" | "NPage" => b"\x1b[6~",
        "Delete" | "DC" => b"\x1b[3~",
        "Insert" | "IC" => b"\x1b[2~",
        "F1" => b"\x1bOP",
        "F2" => b"\x1bOQ",
        "F3" => b"\x1bOR",
        "F4" => b"\x1bOS",
        "F5" => b"\x1b[15~",
        "F6" => b"\x1b[17~",
        "F7" => b"\x1b[18~",
        "F8" => b"\x1b[19~",
        "F9" => b"\x1b[20~",
        "F10" => b"\x1b[21~",
        "F11" => b"\x1b[23~",
        "F12" => b"\x1b[24~",
        _ => {
            let mut chars = name.chars();
            return match (chars.next(), chars.next()) {
                (Some(c), None) => Some(c.to_string().into_bytes()),
                _ => None,
            };
        }
    };
    Some(fixed.to_vec())
}

pub fn send(args: SendArgs, config: &Config) -> Result<i32> {
    // Names are checked before anything is asked of the session.
    if args.keys
        && let Some(k) = args.text.iter().find(|k| key_bytes(k, false).is_none())
    {
        bail!(
            "unknown key '{k}' (names as tmux's: Enter, Tab, Escape, BSpace, Up, C-c, M-x, F1, ...)"
        );
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
                let (mut r, mut w) = conn::connect(&session.sock).await?;
                Ok(conn::query_screen(&mut r, &mut w).await?)
            }))
            .is_ok_and(|s| s["application_cursor"] == true);
    let mut bytes = Vec::new();
    if args.keys {
        for k in &args.text {
            let Some(b) = key_bytes(k, app_cursor) else {
                bail!(
                    "unknown key '{k}' (names as tmux's: Enter, Tab, Escape, BSpace, Up, C-c, M-x, F1, ...)"
                );
            };
            bytes.extend(b);
        }
    } else {
        bytes.extend(args.text.join(" ").into_bytes());
    }
    if args.enter {
        bytes.push(b'\r');
    }
    if bytes.is_empty() {
        bail!("nothing to send (give TEXT, or --enter)");
    }
    rt.block_on(client::answered(&session.id, async {
        let (mut r, mut w) = conn::connect(&session.sock).await?;
        // INPUT has no answer; the STATUS after it is answered only once
        // the supervisor has taken the input, so the command returns when
        // the bytes are on their way to the program.
        let mut frames = Vec::new();
        for chunk in bytes.chunks(protocol::MAX_PAYLOAD as usize / 2) {
            frames.extend(protocol::frame(to::INPUT, chunk));
        }
        frames.extend(protocol::frame(to::STATUS, &[]));
        conn::ask(&mut w, &frames).await?;
        loop {
            let f = r.expect().await?;
            if f.ty == protocol::server::STATUS_RESP {
                return Ok(());
            }
        }
    }))?;
    Ok(0)
}

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
        assert_eq!(key_bytes("M-Up").as_deref(), Some(&b"\x1b\x1b[A"[..]));
        assert_eq!(key_bytes("y").as_deref(), Some(&b"y"[..]));
        assert_eq!(key_bytes("é").as_deref(), Some("é".as_bytes()));
        assert_eq!(key_bytes("F12").as_deref(), Some(&b"\x1b[24~"[..]));
        assert_eq!(key_bytes("Nope"), None);
        assert_eq!(key_bytes("C-"), None);
        assert_eq!(key_bytes("C-ab"), None);
    }
}
