//! `hm attach`'s output path: the screen-switch rewriter
//! ([`ScreenRewriter`]) and the status bar's damage scan ([`DamageScan`])
//! on any output a session may print.
//!
//! Checked for every input:
//! - the rewriter gives the same bytes however the output is chunked
//!   (whole, byte by byte, cut where the input's hash says);
//! - a vte-based terminal (vt100) kept on its alternate screen, as attach
//!   keeps the user's, is still on it after the rewritten output: the
//!   session can never take the user's terminal back to their history;
//! - output with no ESC passes unchanged;
//! - the damage scan finds the same worst damage, and the same scroll
//!   regions at the same places, however the rewritten output is chunked.

use std::num::NonZeroU16;

use crate::attach::screens::ScreenRewriter;
use crate::attach::statusbar::{Damage, DamageScan, RegionAt};

use super::{cuts, hash};

pub fn attach_output(data: &[u8]) {
    let whole = rewrite(data, &[data.len()]);
    let bytes = rewrite(data, &vec![1; data.len()]);
    let hashed = rewrite(data, &cuts(data.len(), hash(data)));
    assert_eq!(whole, bytes, "byte-at-a-time rewrite differs");
    assert_eq!(whole, hashed, "chunked rewrite differs");
    if !data.contains(&0x1b) {
        assert_eq!(whole, data, "output without ESC was changed");
    }

    let nz = |n| NonZeroU16::new(n).expect("non-zero");
    let mut vt = vt100::Parser::new(nz(24), nz(80), 0);
    vt.process(b"\x1b[?1049h");
    vt.process(&whole);
    assert!(
        vt.screen().alternate_screen(),
        "the rewritten output left the alternate screen"
    );

    let (damage, regions) = scan(&whole, &[whole.len()]);
    let chunked = scan(&whole, &cuts(whole.len(), hash(&whole) ^ 0x9e37));
    assert_eq!((damage, regions), chunked, "chunked damage scan differs");
}

fn rewrite(data: &[u8], chunks: &[usize]) -> Vec<u8> {
    let mut r = ScreenRewriter::new();
    let mut out = Vec::new();
    let mut at = 0;
    for &n in chunks {
        let n = n.min(data.len() - at);
        r.rewrite(&data[at..at + n], &mut out);
        at += n;
    }
    out
}

/// The worst damage and every scroll region set, by absolute position.
fn scan(data: &[u8], chunks: &[usize]) -> (Damage, Vec<RegionAt>) {
    let mut s = DamageScan::default();
    let mut worst = Damage::None;
    let mut all = Vec::new();
    let mut at = 0;
    for &n in chunks {
        let n = n.min(data.len() - at);
        let mut regions = Vec::new();
        worst = worst.max(s.scan(&data[at..at + n], &mut regions));
        all.extend(regions.into_iter().map(|(i, r)| (at + i, r)));
        at += n;
    }
    (worst, all)
}
