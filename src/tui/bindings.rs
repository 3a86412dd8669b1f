//! A key event as `[tui.keys]` names keys: the [`Chord`] the configured
//! [`Keymap`](crate::config::Keymap) is looked up with. Shift is folded
//! into a character (`Q`), as the file writes it, and Shift-Tab is a key
//! of its own; a key with Super, Hyper or Meta is no chord at all (it does
//! nothing in the grid).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::config::{Action, Chord, Key};

use super::model::Model;

/// The chord of `k`, if the file could name it.
pub fn chord(k: &KeyEvent) -> Option<Chord> {
    let m = k.modifiers;
    if m.intersects(KeyModifiers::SUPER | KeyModifiers::HYPER | KeyModifiers::META) {
        return None;
    }
    let mut shift = m.contains(KeyModifiers::SHIFT);
    let ctrl = m.contains(KeyModifiers::CONTROL);
    let key = match k.code {
        KeyCode::Char(c) => {
            // Shift is in the character already (`Q`, `?`); Ctrl-Q is
            // Ctrl-q, the one byte a terminal sends for both.
            shift = shift && c == ' ';
            Key::Char(if ctrl { c.to_ascii_lowercase() } else { c })
        }
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        KeyCode::Tab if shift => {
            shift = false;
            Key::BackTab
        }
        KeyCode::Tab => Key::Tab,
        KeyCode::BackTab => {
            shift = false;
            Key::BackTab
        }
        KeyCode::Backspace => Key::Backspace,
        KeyCode::Left => Key::Left,
        KeyCode::Right => Key::Right,
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::PageUp => Key::PageUp,
        KeyCode::PageDown => Key::PageDown,
        KeyCode::Home => Key::Home,
        KeyCode::End => Key::End,
        KeyCode::Insert => Key::Insert,
        KeyCode::Delete => Key::Delete,
        KeyCode::F(n) => Key::F(n),
        _ => return None,
    };
    Some(Chord {
        key,
        ctrl,
        alt: m.contains(KeyModifiers::ALT),
        shift,
    })
}

/// The grid action `k` does with the keys in effect.
pub fn action(m: &Model, k: &KeyEvent) -> Option<Action> {
    m.keys.action(&chord(k)?)
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Instant;

    use super::*;
    use crate::tui::model::Mode;
    use crate::tui::update::harness::*;
    use crate::tui::update::update;

    fn keymap(text: &str) -> crate::config::Keymap {
        crate::config::Config::parse(text, Path::new("/h/heimdall.toml"), None)
            .expect("a valid config")
            .tui
            .keys
    }

    fn key(code: KeyCode, mods: KeyModifiers) -> crate::tui::model::Msg {
        crate::tui::model::Msg::Key(KeyEvent::new(code, mods))
    }

    #[test]
    fn the_grid_does_what_the_configured_keys_say() {
        let now = Instant::now();
        let mut m = model(100, 31);
        m.keys = keymap("[tui.keys]\nquit = \"Q\"\ninbox = \"f2\"\nzoom = []\nright = \"tab\"\n");
        live(&mut m, &["a", "b"], now);
        // The defaults given away do nothing now.
        update(&mut m, press(KeyCode::Char('q')), now);
        assert!(!m.quit, "q was given away");
        update(&mut m, press(KeyCode::Char('z')), now);
        assert_eq!(m.mode, Mode::Grid, "zoom has no key");
        update(&mut m, press(KeyCode::Char('i')), now);
        assert_eq!(m.mode, Mode::Grid, "the inbox is on F2");
        // Tab, taken from `next`, moves right.
        update(&mut m, press(KeyCode::Tab), now);
        assert_eq!(sel(&m), "b");
        update(&mut m, key(KeyCode::F(2), KeyModifiers::NONE), now);
        assert_eq!(m.mode, Mode::Inbox);
        update(&mut m, press(KeyCode::Esc), now);
        update(&mut m, key(KeyCode::Char('Q'), KeyModifiers::SHIFT), now);
        assert!(m.quit);
    }

    #[test]
    fn help_lists_the_keys_in_effect() {
        let now = Instant::now();
        let mut m = model(80, 24);
        m.keys = keymap("[tui.keys]\nquit = \"Q\"\ninbox = [\"f2\", \"I\"]\nzoom = []\n");
        live(&mut m, &["a"], now);
        update(&mut m, press(KeyCode::Char('?')), now);
        assert_eq!(m.mode, Mode::Help);
        let text = screen_text(&m, now);
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let line = |what: &str| {
            lines
                .iter()
                .find(|l| l.contains(what))
                .unwrap_or_else(|| panic!("no {what:?} in\n{}", lines.join("\n")))
                .clone()
        };
        assert!(line("inbox: who needs you").contains("F2, I"), "{lines:#?}");
        assert!(line("quit (sessions").contains("│Q  "), "{lines:#?}");
        assert!(
            line("zoom the selected pane").contains("– / Esc"),
            "{lines:#?}"
        );
        assert!(
            line("move the selection").contains("←↓↑→ hjkl"),
            "{lines:#?}"
        );
        // Every row fits: the last one is not cut off at 80x24, and the
        // commonest badge letters are said in the border.
        assert!(
            lines
                .iter()
                .any(|l| l.contains("quit (sessions keep running)"))
        );
        // ... apart from the keys' title, not run into it.
        assert!(
            line("keys · b: every badge · any other key closes ")
                .contains("─ W waiting · I idle · ● unseen "),
            "{lines:#?}"
        );
        assert!(!text.contains("badges:"), "{lines:#?}");
        // `b`: every badge, on a page of its own that fits.
        update(&mut m, press(KeyCode::Char('b')), now);
        let badges = screen_text(&m, now);
        for what in [
            "badges · any key closes",
            "perm  ask",
            "stopped (Ctrl-Z)",
            "✓  ✗3",
            "time since its output, bottom border",
        ] {
            assert!(badges.contains(what), "{what}: {badges}");
        }
        update(&mut m, press(KeyCode::Char('?')), now);
        assert_eq!(m.mode, Mode::Grid, "any key closes the badges");
        // The footer's hints follow the keys too.
        update(&mut m, press(KeyCode::Esc), now);
        let footer = screen_text(&m, now).lines().last().unwrap_or("").to_owned();
        assert!(
            footer.contains("Q quit") && !footer.contains("zoom"),
            "{footer}"
        );
        // Taller, every letter is listed below the keys.
        let mut m = model(120, 40);
        live(&mut m, &["a"], now);
        update(&mut m, press(KeyCode::Char('?')), now);
        let text = screen_text(&m, now);
        assert!(text.contains("badges: W waiting"), "{text}");
        assert!(text.contains("U tool use · ! stuck"), "{text}");
        assert!(
            !text.contains("W waiting · I idle · A active · ● unseen"),
            "{text}"
        );
    }

    fn ev(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }

    #[test]
    fn events_become_the_chords_the_file_names() {
        let c = |name: &str| Chord::parse(name).expect("a key name");
        let cases = [
            (ev(KeyCode::Char('q'), KeyModifiers::NONE), c("q")),
            (ev(KeyCode::Char('Q'), KeyModifiers::SHIFT), c("Q")),
            (ev(KeyCode::Char('c'), KeyModifiers::CONTROL), c("ctrl-c")),
            (
                ev(
                    KeyCode::Char('C'),
                    KeyModifiers::CONTROL | KeyModifiers::SHIFT,
                ),
                c("ctrl-c"),
            ),
            (ev(KeyCode::Char('x'), KeyModifiers::ALT), c("alt-x")),
            (ev(KeyCode::PageUp, KeyModifiers::SHIFT), c("shift-pgup")),
            (ev(KeyCode::BackTab, KeyModifiers::SHIFT), c("shift-tab")),
            (ev(KeyCode::Enter, KeyModifiers::NONE), c("enter")),
            (ev(KeyCode::F(5), KeyModifiers::NONE), c("f5")),
        ];
        for (e, want) in cases {
            assert_eq!(chord(&e), Some(want), "{e:?}");
        }
        assert_eq!(chord(&ev(KeyCode::Char('q'), KeyModifiers::SUPER)), None);
    }
}
