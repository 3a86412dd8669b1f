//! The tokenizer every output filter is built on agrees with vte 0.15, the
//! parser inside vt100 (built the same way: without its `std` feature), on
//! what every byte does: which controls are executed, where each sequence
//! ends and whether it is dispatched, with which parameters. Prints are
//! left out: the filters never look inside text.

use heimdall::vt::tokenizer::{Ended, Kind, Step, Tokenizer};
use proptest::prelude::*;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Ev {
    Execute(u8),
    Esc {
        inter: Vec<u8>,
        fin: u8,
    },
    Csi {
        params: Vec<Vec<u16>>,
        inter: Vec<u8>,
        fin: u8,
    },
    Osc {
        params: Vec<Vec<u8>>,
        bell: bool,
    },
    Hook {
        params: Vec<Vec<u16>>,
        inter: Vec<u8>,
        fin: u8,
    },
    Put(u8),
    Unhook,
    /// A dispatch vte marks as ignored (too many parameters or
    /// intermediates): only its final byte is compared.
    Ignored(u8),
}

#[derive(Default)]
struct Vte(Vec<Ev>);

impl vte::Perform for Vte {
    fn execute(&mut self, b: u8) {
        // C1 controls decoded from UTF-8 text: text to the filters.
        if b < 0x20 {
            self.0.push(Ev::Execute(b));
        }
    }
    fn esc_dispatch(&mut self, inter: &[u8], ignore: bool, fin: u8) {
        self.0.push(if ignore {
            Ev::Ignored(fin)
        } else {
            Ev::Esc {
                inter: inter.to_vec(),
                fin,
            }
        });
    }
    fn csi_dispatch(&mut self, params: &vte::Params, inter: &[u8], ignore: bool, fin: char) {
        self.0.push(if ignore {
            Ev::Ignored(fin as u8)
        } else {
            Ev::Csi {
                params: params.iter().map(<[u16]>::to_vec).collect(),
                inter: inter.to_vec(),
                fin: fin as u8,
            }
        });
    }
    fn osc_dispatch(&mut self, params: &[&[u8]], bell: bool) {
        self.0.push(Ev::Osc {
            params: params.iter().map(|p| p.to_vec()).collect(),
            bell,
        });
    }
    fn hook(&mut self, params: &vte::Params, inter: &[u8], ignore: bool, fin: char) {
        self.0.push(if ignore {
            Ev::Ignored(fin as u8)
        } else {
            Ev::Hook {
                params: params.iter().map(<[u16]>::to_vec).collect(),
                inter: inter.to_vec(),
                fin: fin as u8,
            }
        });
    }
    fn put(&mut self, b: u8) {
        self.0.push(Ev::Put(b));
    }
    fn unhook(&mut self) {
        self.0.push(Ev::Unhook);
    }
}

/// vte's reading of `input` given whole. Given in pieces, vte 0.15 loses
/// the byte after a UTF-8 character split between two pieces when valid
/// text follows (alacritty/vte#159); the tokenizer reads as vte reads
/// unsplit input, and `vt::Term` never hands vt100 a split character.
fn vte_events(input: &[u8]) -> Vec<Ev> {
    let mut parser = vte::Parser::<1024>::default();
    let mut v = Vte::default();
    parser.advance(&mut v, input);
    v.0
}

/// A CSI or DCS head as vte reads it: private markers and intermediates
/// are both "intermediates"; parameters saturate at u16::MAX; more than 32
/// numbers or 2 intermediates make the dispatch ignored.
fn head(body: &[u8], fin: u8, hook: bool) -> Ev {
    let inter: Vec<u8> = body
        .iter()
        .copied()
        .filter(|b| matches!(b, 0x20..=0x2f | 0x3c..=0x3f))
        .collect();
    let mut params = vec![Vec::new()];
    let mut cur: u16 = 0;
    let mut numbers = 1;
    for &b in body {
        match b {
            b'0'..=b'9' => cur = cur.saturating_mul(10).saturating_add(u16::from(b - b'0')),
            b':' => {
                params.last_mut().expect("a param").push(cur);
                cur = 0;
                numbers += 1;
            }
            b';' => {
                params.last_mut().expect("a param").push(cur);
                params.push(Vec::new());
                cur = 0;
                numbers += 1;
            }
            _ => {}
        }
    }
    params.last_mut().expect("a param").push(cur);
    if inter.len() > 2 || numbers > 32 {
        Ev::Ignored(fin)
    } else if hook {
        Ev::Hook { params, inter, fin }
    } else {
        Ev::Csi { params, inter, fin }
    }
}

/// An OSC's data as vte 0.15 without `std` splits it: 1024 bytes kept,
/// 16 parameters at most.
fn osc(data: &[u8], bell: bool) -> Ev {
    let mut raw = Vec::new();
    let mut bounds: Vec<(usize, usize)> = Vec::new();
    let put_param = |raw: &Vec<u8>, bounds: &mut Vec<(usize, usize)>| {
        if bounds.len() < 16 {
            let begin = bounds.last().map_or(0, |b| b.1);
            bounds.push((begin, raw.len()));
        }
    };
    for &b in data {
        if raw.len() == 1024 {
            continue;
        }
        if b == b';' {
            put_param(&raw, &mut bounds);
        } else {
            raw.push(b);
        }
    }
    put_param(&raw, &mut bounds);
    Ev::Osc {
        params: bounds.iter().map(|&(a, b)| raw[a..b].to_vec()).collect(),
        bell,
    }
}

fn our_events(input: &[u8]) -> Vec<Ev> {
    let mut t = Tokenizer::new(1 << 20);
    let mut evs = Vec::new();
    let mut hooked = false;
    for &b in input {
        let step = t.advance(b);
        let seq = t.seq();
        // What a string ended by ESC, CAN or SUB dispatches.
        let string_end = |evs: &mut Vec<Ev>| match seq.kind {
            Kind::Osc => evs.push(osc(seq.collected, false)),
            Kind::Dcs => evs.push(Ev::Unhook),
            _ => {}
        };
        match step {
            Step::Text | Step::Ignored | Step::Open(None) => {}
            Step::Control => evs.push(Ev::Execute(b)),
            Step::Open(Some(Ended::Acted)) => string_end(&mut evs),
            Step::Open(Some(Ended::Dropped)) => {}
            Step::Cancel(ended) => {
                if ended == Ended::Acted {
                    string_end(&mut evs);
                }
                evs.push(Ev::Execute(b));
            }
            Step::Part => {
                if seq.kind == Kind::Dcs {
                    if hooked {
                        evs.push(Ev::Put(b));
                    } else if (0x40..=0x7e).contains(&b) && !seq.collected.is_empty() {
                        let (&fin, body) = seq.collected.split_last().expect("a final byte");
                        evs.push(head(body, fin, true));
                        hooked = true;
                    }
                }
            }
            Step::End(Ended::Dropped) => {}
            Step::End(Ended::Acted) => match seq.kind {
                Kind::Esc => {
                    let (&fin, inter) = seq.collected.split_last().expect("a final byte");
                    evs.push(if inter.len() > 2 {
                        Ev::Ignored(fin)
                    } else {
                        Ev::Esc {
                            inter: inter.to_vec(),
                            fin,
                        }
                    });
                }
                Kind::Csi => {
                    let (body, fin) = seq.csi().expect("a whole CSI");
                    evs.push(head(body, fin, false));
                }
                Kind::Osc => evs.push(osc(seq.collected, true)),
                Kind::Dcs => evs.push(Ev::Unhook),
                Kind::Sos | Kind::Pm | Kind::Apc => unreachable!("skipped strings end by ESC"),
            },
        }
        if matches!(step, Step::Open(_) | Step::Cancel(_) | Step::End(_)) {
            hooked = false;
        }
    }
    evs
}

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
        prop_assert_eq!(our_events(&input), vte_events(&input));
    }

    #[test]
    fn agrees_with_vte_on_any_bytes(input in prop::collection::vec(any::<u8>(), 0..300)) {
        prop_assert_eq!(our_events(&input), vte_events(&input));
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
        assert_eq!(our_events(case), vte_events(case), "{case:?}");
    }
}
