//! The `tokenizer` target: [`crate::vt::tokenizer`] against vte 0.15, the
//! parser inside vt100 (built as vt100 builds it: with `std`), on what
//! every byte does: which controls are executed, where each sequence ends
//! and whether it is dispatched, with which parameters. Prints are left
//! out: the filters on the tokenizer never look inside text.

use crate::vt::tokenizer::{Ended, Kind, Step, Tokenizer};

/// Any bytes: the tokenizer's reading must be vte's, event for event.
pub fn tokenizer(data: &[u8]) {
    let vte = vte_events(data);
    assert_eq!(our_events(data, false), vte, "input {data:?}");
    // Taking runs of parameters and string text in one call (as the
    // filters do) reads the same.
    assert_eq!(our_events(data, true), vte, "input {data:?}, with runs");
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ev {
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
pub fn vte_events(input: &[u8]) -> Vec<Ev> {
    let mut parser = vte::Parser::new();
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

/// An OSC's data as vte 0.15 with `std` (as vt100 turns it on) splits it:
/// all of it kept, in 16 parameters at most.
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

pub fn our_events(input: &[u8], runs: bool) -> Vec<Ev> {
    let mut t = Tokenizer::new(1 << 20);
    let mut evs = Vec::new();
    let mut hooked = false;
    let mut i = 0;
    while i < input.len() {
        if runs {
            // A run is parameters or OSC text: parts that dispatch nothing.
            i += t.run(&input[i..]);
            if i == input.len() {
                break;
            }
        }
        let b = input[i];
        i += 1;
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
