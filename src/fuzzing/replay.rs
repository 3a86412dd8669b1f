//! The replay query filter target, and the reference it is checked
//! against: a model of how a terminal splits bytes into the sequences it
//! acts on.
//!
//! The model follows vte's state machine (the parser under alacritty and
//! vt100): ESC starts a new sequence wherever it appears, CAN and SUB abort
//! one, controls inside a sequence are executed or ignored rather than
//! collected, and an escape string ends at BEL (OSC only), ST, any other
//! ESC, CAN or SUB. It is written separately from
//! [`QueryFilter`](crate::attach::queries::QueryFilter), so that a sequence
//! the filter mis-splits shows up as a query in its output.

use crate::attach::queries::{MAX_SEQ, QueryFilter, is_query};

use super::{cuts, hash};

/// A sequence the terminal acts on: what it collected, normalised to
/// `ESC intro body final` or `ESC intro body ST`, and how many input bytes
/// it spanned.
#[derive(Debug)]
pub(crate) struct Seq {
    pub bytes: Vec<u8>,
    pub raw_len: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    Ground,
    Esc,
    EscInt,
    Csi,
    Osc,
    DcsHead,
    DcsPass,
    /// SOS, PM, APC: vte ignores them, but kitty answers APC queries.
    Sos,
}

const ESC: u8 = 0x1b;
const ST: &[u8] = b"\x1b\\";

/// Every sequence a vte-style terminal would dispatch for `input`.
pub(crate) fn dispatched(input: &[u8]) -> Vec<Seq> {
    let mut found = Vec::new();
    let mut st = St::Ground;
    let mut seq: Vec<u8> = Vec::new();
    let mut start = 0;
    for (i, &b) in input.iter().enumerate() {
        let raw_len = i + 1 - start;
        let mut emit = |seq: &mut Vec<u8>, end: &[u8]| {
            seq.extend_from_slice(end);
            found.push(Seq {
                bytes: std::mem::take(seq),
                raw_len,
            });
        };
        let string = matches!(st, St::Osc | St::DcsPass | St::Sos);
        // What every state does with ESC, CAN and SUB.
        match b {
            ESC => {
                if string {
                    emit(&mut seq, ST);
                }
                st = St::Esc;
                seq = vec![ESC];
                start = i;
                continue;
            }
            0x18 | 0x1a if st != St::Ground => {
                if string {
                    emit(&mut seq, ST);
                }
                st = St::Ground;
                continue;
            }
            _ => {}
        }
        let c0 = b < 0x20;
        st = match st {
            St::Ground => St::Ground,
            St::Esc | St::EscInt if c0 || b >= 0x7f => st,
            St::Esc => {
                seq.push(b);
                match b {
                    0x20..=0x2f => St::EscInt,
                    b'[' => St::Csi,
                    b']' => St::Osc,
                    b'P' => St::DcsHead,
                    b'X' | b'^' | b'_' => St::Sos,
                    _ => {
                        emit(&mut seq, &[]);
                        St::Ground
                    }
                }
            }
            St::EscInt => {
                seq.push(b);
                if b >= 0x30 {
                    emit(&mut seq, &[]);
                    St::Ground
                } else {
                    St::EscInt
                }
            }
            St::Csi => match b {
                0x20..=0x3f => {
                    seq.push(b);
                    St::Csi
                }
                0x40..=0x7e => {
                    seq.push(b);
                    emit(&mut seq, &[]);
                    St::Ground
                }
                _ => St::Csi,
            },
            St::Osc => {
                if b == 0x07 {
                    seq.push(b);
                    emit(&mut seq, &[]);
                    St::Ground
                } else {
                    if !c0 {
                        seq.push(b);
                    }
                    St::Osc
                }
            }
            St::DcsHead => match b {
                0x20..=0x3f => {
                    seq.push(b);
                    St::DcsHead
                }
                0x40..=0x7e => {
                    seq.push(b);
                    St::DcsPass
                }
                _ => St::DcsHead,
            },
            St::DcsPass => match b {
                0x9c => {
                    emit(&mut seq, ST);
                    St::Ground
                }
                0x00..=0x7e => {
                    seq.push(b);
                    St::DcsPass
                }
                _ => St::DcsPass,
            },
            St::Sos => {
                seq.push(b);
                St::Sos
            }
        };
    }
    found
}

/// The filter's output for `data` fed in `chunks`, and how much of it came
/// before [`QueryFilter::finish`] released a sequence left unfinished.
fn filtered(data: &[u8], chunks: &[usize]) -> (Vec<u8>, usize) {
    let mut f = QueryFilter::new();
    let mut out = Vec::new();
    let mut rest = data;
    for &n in chunks {
        let (chunk, tail) = rest.split_at(n);
        rest = tail;
        f.filter(chunk, &mut out);
    }
    let filtered = out.len();
    f.finish(&mut out);
    (out, filtered)
}

/// The replay query filter over arbitrary output.
///
/// The input is the replayed output. Checks: the result is the same
/// whether it arrives whole, a byte at a time or in hashed chunks; no
/// sequence a terminal would act on in the result is a query (by
/// [`is_query`]), except sequences of about [`MAX_SEQ`] bytes or more,
/// which the filter passes through by design, and the sequence still open
/// when the replay ends, which live output completes (the program is
/// sending it now, so its answer is wanted); output without ESC is
/// untouched.
pub fn query_filter(data: &[u8]) {
    let (whole, filtered_len) = filtered(data, &[data.len()]);
    assert_eq!(
        whole,
        filtered(data, &vec![1; data.len()]).0,
        "byte at a time"
    );
    assert_eq!(
        whole,
        filtered(data, &cuts(data.len(), hash(data))).0,
        "chunked"
    );
    for seq in dispatched(&whole[..filtered_len]) {
        if seq.raw_len + 2 < MAX_SEQ {
            assert!(
                !is_query(&seq.bytes),
                "query {:?} left in the output {:?}",
                String::from_utf8_lossy(&seq.bytes),
                String::from_utf8_lossy(&whole),
            );
        }
    }
    if !data.contains(&ESC) {
        assert_eq!(whole, data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seqs(input: &[u8]) -> Vec<String> {
        dispatched(input)
            .into_iter()
            .map(|s| String::from_utf8_lossy(&s.bytes).into_owned())
            .collect()
    }

    #[test]
    fn the_model_splits_like_a_terminal() {
        assert_eq!(seqs(b"a\x1b[1;2Hb"), ["\x1b[1;2H"]);
        // ESC restarts, controls inside are executed, not collected.
        assert_eq!(seqs(b"\x1b[?\x1b[6n"), ["\x1b[6n"]);
        assert_eq!(seqs(b"\x1b\n]11;\r?\x07"), ["\x1b]11;?\x07"]);
        // Strings end at any ESC, CAN or SUB.
        assert_eq!(seqs(b"\x1b]0;t\x1b[c"), ["\x1b]0;t\x1b\\", "\x1b[c"]);
        assert_eq!(seqs(b"\x1bP$qm\x18"), ["\x1bP$qm\x1b\\"]);
        // A DCS header aborted by ESC is not dispatched.
        assert_eq!(seqs(b"\x1bP1\x1bZ"), ["\x1bZ"]);
        assert!(seqs(b"\x1b[12").is_empty());
    }
}
