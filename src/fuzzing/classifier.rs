//! The classifier target: the byte classifiers driven by a sequence of
//! reads, ticks, deaths and clock jumps decoded from the input, checked
//! after every operation. Separate because it reads operations, not a
//! stream, and has its own layout (see [`classifier`]).

use arbitrary::Unstructured;

use crate::classify::{ClassifierSpec, Claude, ProcessState, StateClassifier};

/// Zeros to take record slices from; longer reads are capped to this.
static ZEROS: [u8; 65536] = [0; 65536];

#[derive(Debug, Clone, Copy)]
enum Op {
    Record(usize),
    Tick,
    SetDead,
}

/// The classifiers, through [`ClassifierSpec::build`] and the trait.
///
/// Layout: a kind byte (`% 3`: none, simple, claude), then the idle
/// threshold and the debounce (u64 LE, any value), the start time (u64 LE),
/// then operations until the input ends, each a tag byte (`% 5`) and
/// little-endian fields:
/// `0 len:u32 dt:i32` record `len` bytes (`u32::MAX` means `usize::MAX`),
/// `1 dt:i32` tick, `2 dt:i32` the child died, `3 t:u64` jump to time `t`
/// (backwards too), `4 n:u8 len:u16 gap:u16` `n` equal reads `gap` apart.
/// `dt` moves the clock by that many milliseconds, backwards if negative.
///
/// Checks after every operation: the state is one its classifier reports,
/// `Dead` is absorbing and measured from the first death, silence of the
/// idle threshold is `Idle` (for `simple`, exactly: otherwise `Active`),
/// `state_ms` is monotone in time and never panics, and the boxed
/// classifier from `build` agrees with a directly built one.
pub fn classifier(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let kind = u.arbitrary::<u8>().unwrap_or(0) % 3;
    let idle = u.arbitrary::<u64>().unwrap_or(0);
    let debounce = u.arbitrary::<u64>().unwrap_or(0);
    let start = u.arbitrary::<u64>().unwrap_or(0);
    let spec = match kind {
        0 => ClassifierSpec::None,
        1 => ClassifierSpec::Simple {
            idle_threshold_ms: idle,
        },
        _ => ClassifierSpec::Claude {
            idle_threshold_ms: idle,
            debounce_ms: debounce,
        },
    };
    let allowed: &[ProcessState] = match spec {
        ClassifierSpec::None => &[ProcessState::Idle, ProcessState::Dead],
        ClassifierSpec::Simple { .. } => {
            &[ProcessState::Idle, ProcessState::Active, ProcessState::Dead]
        }
        ClassifierSpec::Claude { .. } => &[
            ProcessState::Idle,
            ProcessState::Thinking,
            ProcessState::Streaming,
            ProcessState::ToolUse,
            ProcessState::Dead,
        ],
        // Not drawn above: its verdicts need a screen (see `detect`).
        ClassifierSpec::Agent { .. } => return,
    };
    let mut boxed = spec.build(start);
    // The same classifier built directly, fed the exact (possibly huge)
    // lengths that no slice could carry.
    let mut exact =
        matches!(spec, ClassifierSpec::Claude { .. }).then(|| Claude::new(idle, debounce, start));
    let mut diverged = false;
    let mut now = start;
    let mut died_at: Option<u64> = None;
    let mut last_output: Option<u64> = None;
    let mut steps = 0;
    while !u.is_empty() && steps < 10_000 {
        let dt = |u: &mut Unstructured<'_>| u.arbitrary::<i32>().map(i64::from).unwrap_or(0);
        let ops: Vec<(Op, u64)> = match u.arbitrary::<u8>().unwrap_or(0) % 5 {
            0 => {
                let len = u.arbitrary::<u32>().unwrap_or(0);
                let len = if len == u32::MAX {
                    usize::MAX
                } else {
                    len as usize
                };
                now = now.saturating_add_signed(dt(&mut u));
                vec![(Op::Record(len), now)]
            }
            1 => {
                now = now.saturating_add_signed(dt(&mut u));
                vec![(Op::Tick, now)]
            }
            2 => {
                now = now.saturating_add_signed(dt(&mut u));
                vec![(Op::SetDead, now)]
            }
            3 => {
                now = u.arbitrary::<u64>().unwrap_or(0);
                vec![(Op::Tick, now)]
            }
            _ => {
                let n = u.arbitrary::<u8>().unwrap_or(0);
                let len = usize::from(u.arbitrary::<u16>().unwrap_or(0));
                let gap = u64::from(u.arbitrary::<u16>().unwrap_or(0));
                (0..n)
                    .map(|_| {
                        now = now.saturating_add(gap);
                        (Op::Record(len), now)
                    })
                    .collect()
            }
        };
        for (op, at) in ops {
            steps += 1;
            match op {
                Op::Record(len) => {
                    let slice = &ZEROS[..len.min(ZEROS.len())];
                    diverged |= slice.len() != len;
                    boxed.record(slice, at);
                    if let Some(c) = exact.as_mut() {
                        c.record_len(len, at);
                    }
                    if len > 0 && died_at.is_none() {
                        last_output = Some(at);
                    }
                }
                Op::Tick => {
                    boxed.tick(at);
                    if let Some(c) = exact.as_mut() {
                        c.tick(at);
                    }
                }
                Op::SetDead => {
                    boxed.set_dead(at);
                    if let Some(c) = exact.as_mut() {
                        c.set_dead(at);
                    }
                    died_at.get_or_insert(at);
                }
            }
            let quiet = matches!(op, Op::Tick | Op::Record(0));
            let check = |c: &dyn StateClassifier| {
                let state = c.state();
                assert!(allowed.contains(&state), "{spec:?} reported {state:?}");
                for t in [at, at.saturating_add(1), u64::MAX] {
                    assert!(c.state_ms(at) <= c.state_ms(t), "state_ms not monotone");
                }
                if let Some(dead) = died_at {
                    assert_eq!(state, ProcessState::Dead, "Dead is absorbing");
                    let want = u32::try_from(at.saturating_sub(dead)).unwrap_or(u32::MAX);
                    assert_eq!(
                        c.state_ms(at),
                        want,
                        "Dead is measured from the first death"
                    );
                    return;
                }
                let silent = last_output.is_none_or(|t| at.saturating_sub(t) >= idle);
                match spec {
                    ClassifierSpec::None => assert_eq!(state, ProcessState::Idle),
                    ClassifierSpec::Simple { .. } => {
                        if quiet || matches!(op, Op::Record(_)) {
                            let want = if silent {
                                ProcessState::Idle
                            } else {
                                ProcessState::Active
                            };
                            assert_eq!(state, want, "simple at {at}, last output {last_output:?}");
                        }
                    }
                    ClassifierSpec::Claude { .. } => {
                        if quiet && silent {
                            assert_eq!(state, ProcessState::Idle, "claude after silence");
                        }
                    }
                    ClassifierSpec::Agent { .. } => {}
                }
            };
            check(boxed.as_ref());
            if let Some(c) = exact.as_ref() {
                check(c);
                if !diverged {
                    assert_eq!(c.state(), boxed.state(), "build() differs from new()");
                    assert_eq!(c.state_ms(at), boxed.state_ms(at));
                }
            }
        }
    }
}
