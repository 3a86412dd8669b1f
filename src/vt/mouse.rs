//! Mouse and focus reports as a program asked for them: the bytes a
//! terminal sends for a click, a wheel turn or a motion, in the mode
//! (`?9`, `?1000`, `?1002`, `?1003`) and encoding (default, `?1005`,
//! `?1006`) the program switched on, as vt100 tracks them. Pure, so the
//! dashboard's emulated focus (which forwards the user's mouse) and its
//! tests share one encoder.

use vt100::{MouseProtocolEncoding, MouseProtocolMode};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Button {
    Left,
    Middle,
    Right,
    WheelUp,
    WheelDown,
    /// No button: a motion with none held.
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Press,
    Release,
    Motion,
}

/// One mouse event at a 0-based cell of the program's screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub action: Action,
    pub button: Button,
    pub col: u16,
    pub row: u16,
    pub shift: bool,
    pub alt: bool,
    pub ctrl: bool,
}

/// The report for `ev`, or `None` when the program did not ask for this
/// kind of event (or the default encoding cannot express the position).
pub fn encode(
    mode: MouseProtocolMode,
    encoding: MouseProtocolEncoding,
    ev: &Event,
) -> Option<Vec<u8>> {
    let wheel = matches!(ev.button, Button::WheelUp | Button::WheelDown);
    let wanted = match (mode, ev.action) {
        (MouseProtocolMode::None, _) => false,
        (MouseProtocolMode::Press, Action::Press) => true,
        (MouseProtocolMode::Press, _) => false,
        (_, Action::Press) => true,
        // A wheel has no release.
        (_, Action::Release) => !wheel,
        (MouseProtocolMode::ButtonMotion, Action::Motion) => ev.button != Button::None,
        (MouseProtocolMode::AnyMotion, Action::Motion) => true,
        (MouseProtocolMode::PressRelease, Action::Motion) => false,
    };
    if !wanted {
        return None;
    }
    let base: u32 = match ev.button {
        Button::Left => 0,
        Button::Middle => 1,
        Button::Right => 2,
        Button::None => 3,
        Button::WheelUp => 64,
        Button::WheelDown => 65,
    };
    // X10 mode reports no modifiers.
    let mods = if mode == MouseProtocolMode::Press {
        0
    } else {
        u32::from(ev.shift) * 4 + u32::from(ev.alt) * 8 + u32::from(ev.ctrl) * 16
    };
    let motion = if ev.action == Action::Motion { 32 } else { 0 };
    let (x, y) = (u32::from(ev.col) + 1, u32::from(ev.row) + 1);
    if encoding == MouseProtocolEncoding::Sgr {
        // SGR keeps the button on release and says release with `m`.
        let end = if ev.action == Action::Release {
            'm'
        } else {
            'M'
        };
        return Some(format!("\x1b[<{};{x};{y}{end}", base + mods + motion).into_bytes());
    }
    // The older encodings say release as button 3.
    let cb = if ev.action == Action::Release {
        3
    } else {
        base
    } + mods
        + motion;
    let mut out = b"\x1b[M".to_vec();
    for v in [cb, x, y] {
        let v = v + 32;
        if encoding == MouseProtocolEncoding::Utf8 {
            // Up to 2047 as a UTF-8 character; beyond cannot be said.
            let c = char::from_u32(v).filter(|_| v < 2048)?;
            let mut b = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
        } else {
            out.push(u8::try_from(v).ok()?);
        }
    }
    Some(out)
}

/// The report of the terminal gaining (`true`) or losing focus, for a
/// program that switched on `?1004`.
pub fn focus(gained: bool) -> &'static [u8] {
    if gained { b"\x1b[I" } else { b"\x1b[O" }
}

/// What vt100 does not track of the modes a program switches on: focus
/// reporting (`?1004`). Used as a pane's callbacks.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Modes {
    pub focus_reporting: bool,
}

impl vt100::Callbacks for Modes {
    fn unhandled_csi(
        &mut self,
        _: &mut vt100::Screen,
        i1: Option<u8>,
        _i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        if i1 == Some(b'?')
            && matches!(c, 'h' | 'l')
            && params.iter().any(|p| p.first() == Some(&1004))
        {
            self.focus_reporting = c == 'h';
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(action: Action, button: Button, col: u16, row: u16) -> Event {
        Event {
            action,
            button,
            col,
            row,
            shift: false,
            alt: false,
            ctrl: false,
        }
    }

    use MouseProtocolEncoding as E;
    use MouseProtocolMode as M;

    #[test]
    fn sgr_reports_press_and_release_with_the_button() {
        let press = ev(Action::Press, Button::Left, 4, 2);
        assert_eq!(
            encode(M::PressRelease, E::Sgr, &press).unwrap(),
            b"\x1b[<0;5;3M"
        );
        let release = ev(Action::Release, Button::Right, 4, 2);
        assert_eq!(
            encode(M::PressRelease, E::Sgr, &release).unwrap(),
            b"\x1b[<2;5;3m"
        );
        let wheel = ev(Action::Press, Button::WheelDown, 0, 0);
        assert_eq!(
            encode(M::PressRelease, E::Sgr, &wheel).unwrap(),
            b"\x1b[<65;1;1M"
        );
    }

    #[test]
    fn the_default_encoding_adds_32_and_says_release_as_3() {
        let press = ev(Action::Press, Button::Left, 0, 0);
        assert_eq!(
            encode(M::PressRelease, E::Default, &press).unwrap(),
            b"\x1b[M !!"
        );
        let release = ev(Action::Release, Button::Left, 0, 0);
        assert_eq!(
            encode(M::PressRelease, E::Default, &release).unwrap(),
            b"\x1b[M#!!"
        );
        // Column 300 does not fit a byte.
        let far = ev(Action::Press, Button::Left, 300, 0);
        assert_eq!(encode(M::PressRelease, E::Default, &far), None);
        let utf8 = encode(M::PressRelease, E::Utf8, &far).expect("fits UTF-8");
        assert_eq!(String::from_utf8(utf8).unwrap(), "\x1b[M \u{14d}!");
    }

    #[test]
    fn each_mode_reports_only_what_it_asks_for() {
        let motion_held = ev(Action::Motion, Button::Left, 1, 1);
        let motion_free = ev(Action::Motion, Button::None, 1, 1);
        let release = ev(Action::Release, Button::Left, 1, 1);
        assert_eq!(
            encode(M::None, E::Sgr, &ev(Action::Press, Button::Left, 0, 0)),
            None
        );
        assert_eq!(encode(M::Press, E::Sgr, &release), None);
        assert_eq!(encode(M::PressRelease, E::Sgr, &motion_held), None);
        assert_eq!(
            encode(M::ButtonMotion, E::Sgr, &motion_held).unwrap(),
            b"\x1b[<32;2;2M"
        );
        assert_eq!(encode(M::ButtonMotion, E::Sgr, &motion_free), None);
        assert_eq!(
            encode(M::AnyMotion, E::Sgr, &motion_free).unwrap(),
            b"\x1b[<35;2;2M"
        );
        // No release for a wheel.
        assert_eq!(
            encode(
                M::AnyMotion,
                E::Sgr,
                &ev(Action::Release, Button::WheelUp, 0, 0)
            ),
            None
        );
    }

    #[test]
    fn focus_reporting_follows_the_program() {
        let mut p = vt100::Parser::new_with_callbacks(
            std::num::NonZeroU16::new(24).unwrap(),
            std::num::NonZeroU16::new(80).unwrap(),
            0,
            Modes::default(),
        );
        p.process(b"\x1b[?1004h");
        assert!(p.callbacks().focus_reporting);
        p.process(b"\x1b[?1006;1004l");
        assert!(!p.callbacks().focus_reporting);
        assert_eq!(focus(true), b"\x1b[I");
    }

    #[test]
    fn modifiers_add_up_except_in_x10_mode() {
        let mut e = ev(Action::Press, Button::Left, 0, 0);
        e.shift = true;
        e.ctrl = true;
        assert_eq!(
            encode(M::PressRelease, E::Sgr, &e).unwrap(),
            b"\x1b[<20;1;1M"
        );
        assert_eq!(encode(M::Press, E::Sgr, &e).unwrap(), b"\x1b[<0;1;1M");
    }
}
