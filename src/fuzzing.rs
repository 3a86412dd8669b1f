//! Fuzz target bodies: one function per parser of outside input, each
//! checking its own invariants and panicking when one breaks.
//!
//! They live in the library, not in `fuzz/`, so that the seed corpus runs
//! under `cargo test` (`tests/fuzz_corpus.rs`) with no fuzzer installed, and
//! the `fuzz/` targets are one-line wrappers. Every function takes any bytes
//! and must not panic for any input unless an invariant is broken; all but
//! `connection` (which needs real descriptors, see its module) do no I/O. How to run the fuzzers: `docs/reliability.md`.
//!
//! Inputs are raw streams where the code under test reads a stream (frames,
//! replayed output, config text, ids), so seed files are real examples.
//! Where a stream is also split into chunks, the cut positions come from a
//! hash of the input: they vary with it, and a crash reproduces from the
//! file alone. The classifier and screen targets read a sequence of
//! operations instead (see their docs for the byte layout).
//!
//! One file per target; this file holds the list of targets and what
//! several of them share (cut positions from a hash, the one-line check
//! on messages).

mod attach;
mod classifier;
mod config;
mod connection;
mod copy;
mod frame_decoder;
pub mod journal;
mod lazy;
mod replay;
mod screen;
mod session_id;
mod status_records;
pub mod tokenizer;

pub use attach::attach_output;
pub use classifier::classifier;
pub use config::config;
pub use connection::connection;
pub use copy::copy_mode;
pub use frame_decoder::frame_decoder;
pub use journal::journal;
pub use lazy::lazy_screen;
pub use replay::query_filter;
pub use screen::tui_screen;
pub use session_id::session_id;
pub use status_records::status_records;
pub use tokenizer::tokenizer;

/// A fuzz target: any bytes in, a panic when an invariant breaks.
pub type Target = fn(&[u8]);

/// Every target by name, as in `fuzz/fuzz_targets/<name>.rs` and
/// `fuzz/corpus/<name>/`.
pub const TARGETS: &[(&str, Target)] = &[
    ("frame_decoder", frame_decoder),
    ("classifier", classifier),
    ("config", config),
    ("session_id", session_id),
    ("query_filter", query_filter),
    ("tui_screen", tui_screen),
    ("tokenizer", tokenizer),
    ("connection", connection),
    ("attach_output", attach_output),
    ("status_records", status_records),
    ("copy_mode", copy_mode),
    ("lazy_screen", lazy_screen),
    ("journal", journal),
];

/// FNV-1a: a stable hash of the input, to derive cut positions from it.
fn hash(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Chunk lengths (each at least 1) covering `len` bytes, derived from `seed`.
pub(crate) fn cuts(len: usize, seed: u64) -> Vec<usize> {
    let mut x = seed | 1;
    let max = 1 + (seed % 97) as usize;
    let mut out = Vec::new();
    let mut left = len;
    while left > 0 {
        // xorshift64
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let n = (1 + (x % max as u64) as usize).min(left);
        out.push(n);
        left -= n;
    }
    out
}

/// A message for a person: one line, nothing that could drive a terminal.
fn assert_one_line(msg: &str) {
    assert!(!msg.is_empty(), "empty error message");
    assert!(
        !msg.chars().any(char::is_control),
        "error message is not one printable line: {msg:?}"
    );
}
