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

mod attach;
mod connection;
mod replay;
mod screen;
pub mod tokenizer;

use std::path::Path;

use arbitrary::Unstructured;

use crate::classify::{ClassifierSpec, Claude, ProcessState, StateClassifier};
use crate::config::{self, Config};
use crate::paths::{self, MAX_ID_LEN, MAX_SOCKET_PATH, PathError, SessionPaths};
use crate::protocol::{
    self, Assembler, Frame, FrameError, HEADER_LEN, MAX_DIM, MAX_PAYLOAD, MIN_DIM, Piece, Size,
    Splitter, Status,
};

pub use attach::attach_output;
pub use connection::connection;
pub use replay::query_filter;
pub use screen::tui_screen;
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

// ---------------------------------------------------------------------------
// frame_decoder

/// What a frame stream must decode to: a plain, whole-buffer reading of the
/// format, written independently of [`Splitter`].
fn reference_frames(data: &[u8], limit: u32) -> (Vec<Frame>, Option<FrameError>) {
    let mut frames = Vec::new();
    let mut rest = data;
    while rest.len() >= HEADER_LEN {
        let ty = rest[0];
        let len = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]);
        if len > limit {
            let err = FrameError::TooLarge {
                ty,
                len,
                max: limit,
            };
            return (frames, Some(err));
        }
        let Some(payload) = rest.get(HEADER_LEN..HEADER_LEN + len as usize) else {
            break;
        };
        frames.push(Frame {
            ty,
            payload: payload.to_vec(),
        });
        rest = &rest[HEADER_LEN + len as usize..];
    }
    (frames, None)
}

fn assemble(data: &[u8], chunks: &[usize], limit: u32) -> (Vec<Frame>, Option<FrameError>) {
    let mut asm = Assembler::new(limit);
    let mut out = Vec::new();
    let mut rest = data;
    for &n in chunks {
        let (chunk, tail) = rest.split_at(n);
        rest = tail;
        if let Err(e) = asm.push(chunk, &mut out) {
            return (out, Some(e));
        }
    }
    (out, None)
}

/// Drives a [`Splitter`] directly, checking each piece as it comes, and
/// returns what it framed.
fn split(data: &[u8], chunks: &[usize], limit: u32) -> (Vec<Frame>, Option<FrameError>) {
    let mut sp = Splitter::new(limit);
    let mut frames = Vec::new();
    let mut current: Option<(u8, u32, Vec<u8>)> = None;
    let mut rest = data;
    assert!(sp.at_boundary());
    for &n in chunks {
        let (mut chunk, tail) = rest.split_at(n);
        rest = tail;
        loop {
            let pending = sp.end_pending();
            let (used, piece) = match sp.next(chunk) {
                Ok(step) => step,
                Err(e) => return (frames, Some(e)),
            };
            assert!(used <= chunk.len());
            chunk = &chunk[used..];
            if pending {
                assert!(matches!(piece, Some(Piece::End { .. })), "{piece:?}");
            }
            match piece {
                Some(Piece::Start { ty, len }) => {
                    assert!(current.is_none(), "Start inside a frame");
                    assert!(len <= limit, "Start over the limit: {len} > {limit}");
                    current = Some((ty, len, Vec::new()));
                }
                Some(Piece::Data(d)) => {
                    let (_, len, buf) = current.as_mut().expect("Data outside a frame");
                    assert!(!d.is_empty(), "empty Data piece");
                    buf.extend_from_slice(d);
                    assert!(buf.len() <= *len as usize, "more Data than declared");
                }
                Some(Piece::End { ty }) => {
                    let (start_ty, len, payload) = current.take().expect("End outside a frame");
                    assert_eq!(ty, start_ty);
                    assert_eq!(payload.len(), len as usize, "End before the payload");
                    assert!(sp.at_boundary(), "not at a boundary after End");
                    frames.push(Frame { ty, payload });
                }
                None => {
                    assert!(chunk.is_empty(), "stopped with input left");
                    break;
                }
            }
        }
    }
    if current.is_none() {
        // A partial header leaves the splitter mid-frame only if bytes of it
        // arrived.
        let partial = data.len()
            - frames
                .iter()
                .map(|f| HEADER_LEN + f.payload.len())
                .sum::<usize>();
        assert_eq!(sp.at_boundary(), partial == 0);
    }
    (frames, None)
}

/// The frame decoder: [`Splitter`] and [`Assembler`] over arbitrary bytes.
///
/// Checks, for several payload limits: the frames and the error are the
/// same whether the stream arrives whole, a byte at a time or in chunks
/// cut where the input's hash says, and equal a plain reading of the
/// format; no payload exceeds the limit and a header declaring more is an
/// error before any of its payload is read; every frame re-encodes to the
/// bytes it came from; the payload decoders accept exactly their sizes.
pub fn frame_decoder(data: &[u8]) {
    let whole = [data.len()];
    let bytes = vec![1; data.len()];
    let hashed = cuts(data.len(), hash(data));
    for limit in [MAX_PAYLOAD, 4096, 64, 4, 0] {
        let want = reference_frames(data, limit);
        for chunks in [&whole[..], &bytes, &hashed] {
            let chunks = if data.is_empty() { &[][..] } else { chunks };
            assert_eq!(
                assemble(data, chunks, limit),
                want,
                "assembler, limit {limit}"
            );
            assert_eq!(split(data, chunks, limit), want, "splitter, limit {limit}");
        }
        let (frames, _) = &want;
        let mut encoded = Vec::new();
        for f in frames {
            assert!(f.payload.len() <= limit as usize);
            encoded.extend(protocol::frame(f.ty, &f.payload));
            payloads(&f.payload);
        }
        assert_eq!(&data[..encoded.len()], &encoded[..], "re-encoding");
    }
}

/// The payload decoders accept exactly their sizes and round-trip.
fn payloads(p: &[u8]) {
    match Status::decode(p) {
        Ok(s) => {
            assert!(p.len() >= protocol::STATUS_LEN - 1);
            assert_eq!(Status::decode(&s.encode()), Ok(s));
            // Byte 8 is a boolean: any non-zero byte reads as alive.
            let e = s.encode();
            assert_eq!((&e[..8], &e[9..14]), (&p[..8], &p[9..14]));
            assert_eq!(e[8], u8::from(p[8] != 0));
        }
        Err(_) => assert!(p.len() < protocol::STATUS_LEN - 1),
    }
    match Size::decode(p) {
        Ok(s) => {
            assert_eq!(s.encode(), p);
            let c = s.clamped();
            assert!((MIN_DIM..=MAX_DIM).contains(&c.cols));
            assert!((MIN_DIM..=MAX_DIM).contains(&c.rows));
            assert_eq!(c.clamped(), c);
        }
        Err(_) => assert_ne!(p.len(), 4),
    }
    assert_eq!(protocol::decode_exit(p).is_ok(), p.len() == 4);
    assert_eq!(protocol::decode_kill(p).is_some(), p.len() == 4);
    let (code, _msg) = protocol::decode_error(p);
    if let Some(c) = protocol::ErrorCode::from_u16(code) {
        assert_eq!(c as u16, code);
    }
}

// ---------------------------------------------------------------------------
// classifier

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

// ---------------------------------------------------------------------------
// config

/// `heimdall.toml` parsing and the values it shares with the command line.
///
/// The input is the file's text (invalid UTF-8 replaced, as no file with it
/// gets this far). Checks: no panic; every error is one printable line; an
/// accepted file yields a config whose values are all in range; the detach
/// key, log level and path helpers agree with their own documentation.
pub fn config(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let path = Path::new("/home/u/.config/heimdall/heimdall.toml");
    for home in [Some(Path::new("/home/u")), None] {
        match Config::parse(&text, path, home) {
            Ok(c) => valid_config(&c),
            Err(e) => assert_one_line(&e.to_string()),
        }
    }
    match config::parse_detach_key(&text) {
        Ok(None) => assert!(text.eq_ignore_ascii_case("none")),
        Ok(Some(b)) => {
            assert!(matches!(b, 0x01..=0x1f) && !matches!(b, 0x08 | 0x09 | 0x0a | 0x0d | 0x1b));
            let name = config::describe_key(b);
            assert_eq!(config::parse_detach_key(&name), Ok(Some(b)), "{name}");
        }
        Err(e) => assert_one_line(&e),
    }
    if let Err(e) = text.parse::<config::LogLevel>() {
        assert_one_line(&e);
    }
    match config::expand_tilde(&text, Some(Path::new("/home/u"))) {
        Ok(p) if !text.starts_with('~') => assert_eq!(p, Path::new(&*text)),
        Ok(p) => assert!(p.starts_with("/home/u")),
        Err(e) => assert_one_line(&e),
    }
}

fn valid_config(c: &Config) {
    assert!(c.scrollback_bytes <= config::MAX_SCROLLBACK_BYTES);
    assert!(c.kill_grace_ms <= config::MAX_KILL_GRACE_MS);
    assert!(config::is_valid_env_name(&c.session_env_var));
    for (i, var) in c.env.iter().enumerate() {
        assert!(config::is_valid_env_name(&var.name));
        assert!(!var.value.contains('\0'));
        assert_ne!(var.name, c.session_env_var);
        assert!(c.env[..i].iter().all(|v| v.name != var.name));
    }
    if let Some(b) = c.detach_key {
        assert_eq!(
            config::parse_detach_key(&config::describe_key(b)),
            Ok(Some(b))
        );
    }
    match c.classifier {
        ClassifierSpec::None => {}
        ClassifierSpec::Simple { idle_threshold_ms } => {
            assert!(config::IDLE_THRESHOLD_MS_RANGE.contains(&idle_threshold_ms));
        }
        ClassifierSpec::Claude {
            idle_threshold_ms,
            debounce_ms,
        } => {
            assert!(config::IDLE_THRESHOLD_MS_RANGE.contains(&idle_threshold_ms));
            assert!(config::DEBOUNCE_MS_RANGE.contains(&debounce_ms));
        }
        ClassifierSpec::Agent {
            idle_threshold_ms,
            stuck_after_ms,
            ..
        } => {
            assert!(config::IDLE_THRESHOLD_MS_RANGE.contains(&idle_threshold_ms));
            assert!(config::STUCK_AFTER_MS_RANGE.contains(&stuck_after_ms));
        }
    }
    for p in [&c.socket_dir, &c.log_file].into_iter().flatten() {
        assert!(!p.as_os_str().is_empty());
    }
    if let Some(theme) = &c.tui.theme {
        assert!(!theme.is_empty());
    }
}

// ---------------------------------------------------------------------------
// session_id

/// `[A-Za-z0-9][A-Za-z0-9._-]{0,63}`, written out independently.
fn id_matches(id: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric();
    let mut chars = id.chars();
    chars.next().is_some_and(word)
        && chars.all(|c| word(c) || matches!(c, '.' | '_' | '-'))
        && id.chars().count() <= MAX_ID_LEN
}

/// Session id validation and the paths built from it.
///
/// The input is `<socket dir>\n<id>`, or just an id (then the dir is a
/// typical `/run/user/1000/heimdall`); invalid UTF-8 is replaced. Checks:
/// an id is accepted exactly when it matches the pattern; accepted paths
/// are `<dir>/<id>.{sock,pid,log}`, inside the dir, and the socket path
/// fits `sun_path`; a refused id's message is one printable line.
pub fn session_id(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (dir, id) = text
        .split_once('\n')
        .unwrap_or(("/run/user/1000/heimdall", &text));
    let dir = Path::new(dir);
    let matches = id_matches(id);
    match paths::validate_id(id) {
        Ok(()) => assert!(matches, "accepted {id:?}"),
        Err(e) => {
            assert!(!matches, "refused {id:?}");
            assert_one_line(&e.to_string());
        }
    }
    match SessionPaths::new(dir, id) {
        Ok(p) => {
            assert!(matches);
            assert_eq!(p.id, id);
            for (file, ext) in [(&p.sock, "sock"), (&p.pid, "pid"), (&p.log, "log")] {
                assert_eq!(file.parent(), Some(dir), "{file:?} outside {dir:?}");
                let name = file.file_name().map(|n| n.as_encoded_bytes());
                assert_eq!(name, Some(format!("{id}.{ext}").as_bytes()));
            }
            assert!(p.sock.as_os_str().len() <= MAX_SOCKET_PATH);
        }
        Err(PathError::SocketPathTooLong { len, .. }) => {
            assert!(matches);
            assert!(len > MAX_SOCKET_PATH);
            assert_eq!(len, dir.join(format!("{id}.sock")).as_os_str().len());
        }
        Err(PathError::InvalidId(shown)) => {
            assert!(!matches);
            assert!(shown.chars().count() <= 80);
        }
        Err(e) => panic!("unexpected error for a pure check: {e}"),
    }
}

// ---------------------------------------------------------------------------
// status_records

/// A program's output, cut into reads, through the screen and an `agent`
/// detector that has answered the status probe: whatever OSC 7501 records
/// it holds, the detector keeps at most [`status::MAX_CHILDREN`] children
/// with bounded text, and its verdict carries a bounded explanation.
pub fn status_records(data: &[u8]) {
    use crate::detect::{Detector, Settings, status};
    use crate::vt::events::Recorder;
    use crate::vt::term::Term;

    let mut term = Term::with_callbacks(Size { cols: 80, rows: 24 }, Recorder::default());
    let mut detector = Detector::new(Settings::default(), &["claude".to_owned()], 0);
    // The program asks first, as Claude Code does; the rest is the input.
    term.feed(b"\x1b]7501;?\x07");
    let mut now = 0;
    let mut rest = data;
    for n in cuts(data.len(), hash(data)) {
        let (chunk, tail) = rest.split_at(n);
        rest = tail;
        now += 7;
        term.feed(chunk);
        for event in term.callbacks_mut().take() {
            detector.event(&event, now);
        }
        detector.output(chunk, now);
        let verdict = detector.verdict(term.screen(), now);
        let table = detector.table();
        assert!(table.children.len() <= status::MAX_CHILDREN);
        for c in &table.children {
            assert!(c.id.len() <= status::MAX_ID);
            assert!(c.title.chars().count() <= status::MAX_TEXT);
        }
        assert!(
            verdict
                .signals
                .iter()
                .all(|s| s.text.chars().count() <= 240)
        );
    }
}
