//! The tokenizer every output filter is built on agrees with vte 0.15 (see
//! `heimdall::fuzzing::tokenizer`, also a fuzz target) on random and
//! hostile input.

use heimdall::fuzzing::tokenizer;
use proptest::prelude::*;

/// Bytes that matter to the state machine, often: introducers, parameter
/// and intermediate bytes, finals, the controls that end sequences, DEL,
/// 8-bit ST and UTF-8.
fn terminal_bytes() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        4 => Just(0x1bu8),
        2 => prop::sample::select(b"[]P_X^\\".to_vec()),
        3 => prop::sample::select(b"0123456789;:?<=> !$#".to_vec()),
        2 => prop::sample::select(b"hlmJrcqtpu@~".to_vec()),
        2 => prop::sample::select(vec![0x07u8, 0x18, 0x1a, 0x0d, 0x0a, 0x00, 0x7f, 0x9c, 0x9b, 0x80, 0xc3, 0xa9, 0xe2, 0x94]),
        1 => any::<u8>(),
    ];
    prop::collection::vec(byte, 0..200)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn agrees_with_vte_on_what_every_byte_does(input in terminal_bytes()) {
        // Panics (and proptest shrinks) on the first disagreement, with
        // and without runs.
        tokenizer(&input);
    }

    #[test]
    fn agrees_with_vte_on_any_bytes(input in prop::collection::vec(any::<u8>(), 0..300)) {
        // Panics (and proptest shrinks) on the first disagreement, with
        // and without runs.
        tokenizer(&input);
    }
}

#[test]
fn agrees_with_vte_on_the_sequences_the_filters_look_for() {
    let cases: &[&[u8]] = &[
        b"\x1b[\r2J",
        b"\x1b[1;5\rr",
        b"\x1b[?1049h\x1b[?1049l\x1b[?47;1h",
        b"\x1b]11;?\x1b\\\x1b]0;title\x07",
        b"\x1bP$qm\x1b\\\x1bP+q544e\x1b\\",
        b"\x1b_Ga=q;AAAA\x1b\\",
        b"\x1b]7501;?\x07\x1b[c",
        b"\x1b[?\x1b[6n",
        b"\x1b\x00]0;x\x07",
        b"\xe2\x1b[2J\xe2\x94",
        b"\x1b[1;2;3;4;5;6;7;8;9;10;11;12;13;14;15;16;17;18;19;20;21;22;23;24;25;26;27;28;29;30;31;32;33m",
        b"\x1b[99999999m\x1b[1:2:3;4m\x1b[ !\"#q",
    ];
    for case in cases {
        tokenizer(case);
    }
}
