//! Turning key events back into the bytes a terminal would send, for a
//! focused session. xterm conventions; application cursor mode is taken
//! from the session's own screen state.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// The bytes for `key`, or `None` for keys a terminal sends nothing for.
pub fn encode(key: &KeyEvent, app_cursor: bool) -> Option<Vec<u8>> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let m = key.modifiers;
    let ctrl = m.contains(KeyModifiers::CONTROL);
    let alt = m.contains(KeyModifiers::ALT);
    let shift = m.contains(KeyModifiers::SHIFT);
    // xterm's modifier parameter: 1 + shift + 2*alt + 4*ctrl.
    let modp = 1 + u8::from(shift) + 2 * u8::from(alt) + 4 * u8::from(ctrl);
    let csi = |fin: char| -> Vec<u8> {
        if modp > 1 {
            format!("\x1b[1;{modp}{fin}").into_bytes()
        } else if app_cursor {
            format!("\x1bO{fin}").into_bytes()
        } else {
            format!("\x1b[{fin}").into_bytes()
        }
    };
    let tilde = |n: u8| -> Vec<u8> {
        if modp > 1 {
            format!("\x1b[{n};{modp}~").into_bytes()
        } else {
            format!("\x1b[{n}~").into_bytes()
        }
    };
    let mut out = match key.code {
        KeyCode::Char(c) => {
            if ctrl {
                match c.to_ascii_lowercase() {
                    c @ 'a'..='z' => vec![c as u8 - b'a' + 1],
                    '@' | ' ' | '2' => vec![0],
                    '[' | '3' => vec![0x1b],
                    '\\' | '4' => vec![0x1c],
                    ']' | '5' => vec![0x1d],
                    '^' | '6' => vec![0x1e],
                    '_' | '7' | '/' => vec![0x1f],
                    '?' | '8' => vec![0x7f],
                    other => other.to_string().into_bytes(),
                }
            } else {
                c.to_string().into_bytes()
            }
        }
        KeyCode::Enter => vec![b'\r'],
        KeyCode::Tab => vec![b'\t'],
        KeyCode::BackTab => b"\x1b[Z".to_vec(),
        KeyCode::Backspace => vec![0x7f],
        KeyCode::Esc => vec![0x1b],
        KeyCode::Up => csi('A'),
        KeyCode::Down => csi('B'),
        KeyCode::Right => csi('C'),
        KeyCode::Left => csi('D'),
        KeyCode::Home => csi('H'),
        KeyCode::End => csi('F'),
        KeyCode::Insert => tilde(2),
        KeyCode::Delete => tilde(3),
        KeyCode::PageUp => tilde(5),
        KeyCode::PageDown => tilde(6),
        KeyCode::F(n @ 1..=4) => {
            let fin = b"PQRS"[usize::from(n - 1)] as char;
            if modp > 1 {
                format!("\x1b[1;{modp}{fin}").into_bytes()
            } else {
                format!("\x1bO{fin}").into_bytes()
            }
        }
        KeyCode::F(n @ 5..=12) => tilde([15, 17, 18, 19, 20, 21, 23, 24][usize::from(n - 5)]),
        _ => return None,
    };
    // Alt prefixes plain characters with ESC (modified special keys carry
    // it in their parameter instead).
    if alt
        && matches!(
            key.code,
            KeyCode::Char(_) | KeyCode::Enter | KeyCode::Backspace
        )
    {
        out.insert(0, 0x1b);
    }
    Some(out)
}

/// Whether `key` is the detach key (a control byte such as 0x1c).
pub fn is_byte(key: &KeyEvent, byte: u8) -> bool {
    key.kind != KeyEventKind::Release && encode(key, false).is_some_and(|b| b == [byte])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }

    #[test]
    fn keys_encode_like_xterm() {
        let none = KeyModifiers::NONE;
        assert_eq!(
            encode(&k(KeyCode::Char('a'), none), false),
            Some(b"a".to_vec())
        );
        assert_eq!(
            encode(&k(KeyCode::Char('c'), KeyModifiers::CONTROL), false),
            Some(vec![3])
        );
        assert_eq!(
            encode(&k(KeyCode::Char('x'), KeyModifiers::ALT), false),
            Some(b"\x1bx".to_vec())
        );
        assert_eq!(
            encode(&k(KeyCode::Up, none), false),
            Some(b"\x1b[A".to_vec())
        );
        assert_eq!(
            encode(&k(KeyCode::Up, none), true),
            Some(b"\x1bOA".to_vec())
        );
        assert_eq!(
            encode(&k(KeyCode::Right, KeyModifiers::CONTROL), true),
            Some(b"\x1b[1;5C".to_vec())
        );
        assert_eq!(
            encode(&k(KeyCode::F(5), none), false),
            Some(b"\x1b[15~".to_vec())
        );
        assert_eq!(
            encode(&k(KeyCode::Char('é'), none), false),
            Some("é".as_bytes().to_vec())
        );
        assert!(is_byte(
            &k(KeyCode::Char('\\'), KeyModifiers::CONTROL),
            0x1c
        ));
        assert!(is_byte(&k(KeyCode::Char('4'), KeyModifiers::CONTROL), 0x1c));
        assert!(!is_byte(&k(KeyCode::Char('\\'), none), 0x1c));
    }
}
