//! Boxes drawn in the VT100 DEC Special Graphics set, the way ncurses
//! draws them (a Python `curses` window's `box()`, dialog, whiptail, mc),
//! read back through the real `hm`: `hm logs --screen` and `hm logs` show
//! `┌──┐` where a terminal does, not the `lqqk` vt100 alone would show.
//! Under TERM=xterm ncurses puts the set into G0 (`ESC ( 0`, and `ESC ( B`
//! back); under TERM=screen or tmux into G1 (`ESC ) 0`) and shifts to it
//! with SO and back with SI.

use crate::common;

use common::history::logs;
use common::{Sandbox, wait_until};

/// A program printing a small box with the set in G0, and one with it in
/// G1 and the shifts, as `printf` formats (octal escapes).
const G0_BOX: &str = r"\033(0lqqk\033(B\n\033(0x\033(B  \033(0x\033(B\n\033(0mqqj\033(B\n";
const G1_BOX: &str = r"\033)0\016lqqk\017\n\016x\017  \016x\017\n\016mqqj\017\n";
const BOX: [&str; 3] = ["┌──┐", "│  │", "└──┘"];

/// `hm logs --screen ID` once it shows `want`, its lines with the right
/// ends trimmed.
fn screen_showing(sb: &Sandbox, id: &str, want: &str) -> Vec<String> {
    let mut lines = Vec::new();
    wait_until(&format!("{id}'s screen to show {want:?}"), || {
        lines = logs(sb, id, &["--screen"]);
        lines.iter().any(|l| l.contains(want))
    });
    lines.iter().map(|l| l.trim_end().to_owned()).collect()
}

/// Whether `lines` hold `want`, one after the other.
fn holds(lines: &[String], want: &[&str]) -> bool {
    lines.windows(want.len()).any(|w| w == want)
}

#[test]
fn a_box_in_dec_special_graphics_shows_as_lines() {
    let sb = Sandbox::new();
    for (id, program) in [("g0", G0_BOX), ("g1", G1_BOX)] {
        let script = format!("printf '{program}plain lqk\\n'; exec sleep 600");
        let _s = sb.start(id, &[], &["sh", "-c", &script]);
        let screen = screen_showing(&sb, id, "plain lqk");
        let mut want = BOX.to_vec();
        want.push("plain lqk");
        assert!(holds(&screen, &want), "{id}: {screen:#?}");
        let lines = logs(&sb, id, &[]);
        assert!(holds(&lines, &want), "{id}: {lines:#?}");
    }
}

#[test]
fn a_designation_split_between_writes_still_counts() {
    let sb = Sandbox::new();
    // The designation is cut after its intermediate, and the shift comes
    // on its own, each a write of its own a while later.
    let script = r"printf '\033('; sleep 0.2; printf '0lqk\033(B\n\033)0'; sleep 0.2;
        printf '\016'; sleep 0.2; printf 'mqj\017 done\n'; exec sleep 600";
    let _s = sb.start("split", &[], &["sh", "-c", script]);
    let screen = screen_showing(&sb, "split", "done");
    assert!(holds(&screen, &["┌─┐", "└─┘ done"]), "{screen:#?}");
}

#[test]
fn a_box_that_scrolled_into_the_history_keeps_its_lines() {
    let sb = Sandbox::new();
    let script = format!("printf '{G1_BOX}'; seq 1 200; echo end; exec sleep 600");
    let _s = sb.start("scrolled", &[], &["sh", "-c", &script]);
    let screen = screen_showing(&sb, "scrolled", "end");
    assert!(!screen.iter().any(|l| l.contains('┌')), "{screen:#?}");
    let lines = logs(&sb, "scrolled", &[]);
    let mut want = BOX.to_vec();
    want.push("1");
    assert!(holds(&lines, &want), "{lines:#?}");
}
