//! Micro-benchmarks of the hot paths that do not touch the OS: the frame
//! codec, the scrollback ring and its journal, the state classifiers, the
//! agent classifier's reading of a settled screen, a dashboard pane's
//! parse-and-render, and a replay with its marks into an emulator (what
//! `hm logs` and a pane's history do). Run with `cargo bench --bench micro`; see
//! docs/performance.md.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use heimdall::attach::queries::QueryFilter;
use heimdall::attach::screens::ScreenRewriter;
use heimdall::attach::statusbar::DamageScan;
use heimdall::classify::ClassifierSpec;
use heimdall::detect::offline::text_screen;
use heimdall::detect::{Detector, Settings};
use heimdall::protocol::{self, Assembler, Piece, ServerType, Size, Splitter, Status};
use heimdall::supervisor::journal::Journal;
use heimdall::supervisor::ring::Ring;
use heimdall::tui::screen::view;
use heimdall::vt::alternate::Alternate;
use heimdall::vt::dozing::Dozing;
use heimdall::vt::events::Recorder;
use heimdall::vt::term::Term;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;
use tui_term::widget::PseudoTerminal;

/// `total` bytes of OUTPUT frames carrying `size` bytes each.
fn output_stream(size: usize, total: usize) -> Vec<u8> {
    let payload = vec![b'x'; size];
    let mut out = Vec::with_capacity(total + total / size * protocol::HEADER_LEN);
    while out.len() < total {
        out.extend(protocol::frame(ServerType::Output as u8, &payload));
    }
    out
}

fn codec(c: &mut Criterion) {
    let mut g = c.benchmark_group("codec");
    for size in [1usize, 16, 4096, 65536] {
        let stream = output_stream(size, 1 << 20);
        // The splitter never touches payload bytes: its cost is per frame.
        let frames = stream.len() / (size + protocol::HEADER_LEN);
        g.throughput(Throughput::Elements(frames as u64));
        g.bench_with_input(BenchmarkId::new("splitter", size), &stream, |b, s| {
            b.iter(|| {
                let mut sp = Splitter::default();
                let mut rest = &s[..];
                let mut n = 0usize;
                while let Ok((used, Some(piece))) = sp.next(rest) {
                    rest = &rest[used..];
                    if let Piece::Data(d) = piece {
                        n += d.len();
                    }
                }
                black_box(n)
            })
        });
        // As a client reads: 64 KiB reads, whole frames out.
        g.throughput(Throughput::Bytes(stream.len() as u64));
        g.bench_with_input(BenchmarkId::new("assembler", size), &stream, |b, s| {
            let mut out = Vec::new();
            b.iter(|| {
                let mut asm = Assembler::default();
                for chunk in s.chunks(64 * 1024) {
                    asm.push(chunk, &mut out).expect("valid stream");
                    out.clear();
                }
            })
        });
        let payload = vec![b'x'; size];
        g.throughput(Throughput::Bytes(size as u64));
        g.bench_with_input(BenchmarkId::new("frame_encode", size), &payload, |b, p| {
            b.iter(|| protocol::frame(ServerType::Output as u8, black_box(p)))
        });
    }
    g.throughput(Throughput::Elements(1));
    let st = Status {
        pid: 4242,
        idle_ms: 1500,
        alive: true,
        state: 4,
        state_ms: 250,
    };
    g.bench_function("status_encode_decode", |b| {
        b.iter(|| Status::decode(&black_box(st).encode()))
    });
    g.finish();
}

fn ring(c: &mut Criterion) {
    let mut g = c.benchmark_group("ring");
    let cap = 64 * 1024 + (1 << 20);
    for chunk in [16usize, 4096, 65536] {
        let data = vec![b'y'; chunk];
        let per_iter = 1 << 20;
        g.throughput(Throughput::Bytes(per_iter as u64));
        g.bench_with_input(BenchmarkId::new("push", chunk), &data, |b, d| {
            let mut r = Ring::new(cap);
            b.iter(|| {
                for _ in 0..per_iter / d.len() {
                    r.push(black_box(d));
                }
            })
        });
        // What the pty reader does: spare, fill (here a copy), commit.
        g.bench_with_input(BenchmarkId::new("spare_commit", chunk), &data, |b, d| {
            let mut r = Ring::new(cap);
            b.iter(|| {
                for _ in 0..per_iter / d.len() {
                    let s = r.spare(d.len());
                    let n = s.len();
                    s.copy_from_slice(&d[..n]);
                    r.commit(n);
                }
            })
        });
    }
    // A subscriber's view of the last 64 KiB (replay), across the wrap.
    let mut r = Ring::new(cap);
    r.push(&vec![b'z'; cap + 12_345]);
    g.throughput(Throughput::Elements(1));
    g.bench_function("slices_64k", |b| {
        b.iter(|| {
            let head = r.head();
            black_box(r.slices(head - 65536, head))
        })
    });
    g.finish();
}

/// The journal beside the ring: what the pty reader adds to each read (a
/// time mark every 2 s of output), and a storm of resizes.
fn journal(c: &mut Criterion) {
    let mut g = c.benchmark_group("journal");
    let size = Size {
        cols: 120,
        rows: 40,
    };
    let ring = 64 * 1024 + (1 << 20);
    // One read of 4 KiB every 10 ms of a session that writes for hours:
    // each read asks whether a time mark is due, one in 200 adds one.
    g.throughput(Throughput::Elements(1));
    g.bench_function("output_per_read", |b| {
        let mut j = Journal::new(ring, size, 0);
        let (mut head, mut t) = (0u64, 0u64);
        b.iter(|| {
            head += 4096;
            t += 10;
            j.trim(head.saturating_sub(ring as u64));
            black_box(j.output(head, t))
        })
    });
    // A client resizing in a loop, a byte written between each: every
    // resize a mark, the journal full after a few hundred, thinned and
    // its oldest dropped as it goes.
    g.bench_function("resize_with_output_between", |b| {
        let mut j = Journal::new(ring, size, 0);
        let mut head = 0u64;
        b.iter(|| {
            head += 1;
            let cols = 40 + (head % 80) as u16;
            black_box(j.resized(head, Size { cols, rows: 24 }, head))
        })
    });
    // What finding the switches to the alternate screen adds to the pty
    // reader: 1 MiB of output in 4 KiB reads, plain lines (text up to
    // the next ESC is passed over) and a full-screen program's coloured
    // redraws (every sequence tokenized).
    let mib = 1 << 20;
    let plain: Vec<u8> = (0..)
        .map(|i| format!("{i:07} abcdefghijklmnopqrstuvwxyz0123456789 abcdefghij\r\n"))
        .flat_map(String::into_bytes)
        .take(mib)
        .collect();
    let drawn: Vec<u8> = (0..)
        .map(|i| {
            format!(
                "\x1b[{};1H\x1b[1;3{}m{:>6}\x1b[0m \x1b[2mcompiling\x1b[0m \x1b[?25l{}",
                i % 40 + 1,
                i % 8,
                i,
                "=".repeat(i % 40)
            )
        })
        .flat_map(String::into_bytes)
        .take(mib)
        .collect();
    g.throughput(Throughput::Bytes(mib as u64));
    for (name, bytes) in [
        ("alternate_scan_plain_1m", &plain),
        ("alternate_scan_drawn_1m", &drawn),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut a = Alternate::default();
                let mut n = 0usize;
                for read in bytes.chunks(4096) {
                    a.scan(read, |_, _| n += 1);
                }
                black_box(n)
            })
        });
    }
    g.finish();
}

/// Output between two marks, and the size the first mark says.
type Pieces = Vec<(Vec<u8>, Size)>;

/// `total` bytes of `line`s, resized every `every` bytes (a mark) between
/// 120x40 and 80x24, as (bytes, size to take first) pieces.
fn replay_with_marks(
    line: &dyn Fn(usize) -> String,
    total: usize,
    every: usize,
) -> Vec<(Vec<u8>, Size)> {
    let sizes = [
        Size {
            cols: 120,
            rows: 40,
        },
        Size { cols: 80, rows: 24 },
    ];
    let mut pieces: Pieces = Vec::new();
    let (mut done, mut i) = (0usize, 0usize);
    while done < total {
        let mut piece = Vec::new();
        while piece.len() < every && done + piece.len() < total {
            piece.extend_from_slice(line(i).as_bytes());
            i += 1;
        }
        done += piece.len();
        pieces.push((piece, sizes[pieces.len() % 2]));
    }
    pieces
}

/// A replay of 1 MiB into an emulator that keeps its history, the sizes
/// applied at the marks: what `hm logs` reads, what a pane's history is
/// filled from. Plain 80-byte lines, and coloured lines; with a mark every
/// 64 KiB, and with none (one size throughout) to see what marks cost.
/// Then the logical lines `hm logs` prints, out of that history.
fn replay(c: &mut Criterion) {
    let mut g = c.benchmark_group("replay");
    let mib = 1 << 20;
    let plain = |i: usize| {
        format!("{i:07} abcdefghijklmnopqrstuvwxyz0123456789 abcdefghijklmnopqrstuvwxyz0123456\r\n")
    };
    let coloured = |i: usize| {
        format!(
            "\x1b[1;3{}m{:>6}\x1b[0m  src/module_{}.rs  \x1b[2mcompiling\x1b[0m {}\r\n",
            i % 8,
            i,
            i % 97,
            "=".repeat(i % 40)
        )
    };
    let cases: [(&str, Pieces); 3] = [
        (
            "plain_marks_every_64k",
            replay_with_marks(&plain, mib, 64 * 1024),
        ),
        ("plain_no_marks", replay_with_marks(&plain, mib, mib)),
        (
            "coloured_marks_every_64k",
            replay_with_marks(&coloured, mib, 64 * 1024),
        ),
    ];
    for (name, pieces) in &cases {
        let bytes: usize = pieces.iter().map(|(p, _)| p.len()).sum();
        g.throughput(Throughput::Bytes(bytes as u64));
        g.bench_function(*name, |b| {
            b.iter(|| {
                let mut t: Term = Term::with_scrollback(pieces[0].1, 1 << 20);
                for (piece, size) in pieces {
                    t.resize(*size);
                    // As frames come: at most 64 KiB each.
                    for frame in piece.chunks(64 * 1024) {
                        t.feed(black_box(frame));
                    }
                }
                t
            })
        });
    }
    let mut t: Term = Term::with_scrollback(cases[0].1[0].1, 1 << 20);
    for (piece, size) in &cases[0].1 {
        t.resize(*size);
        t.feed(piece);
    }
    g.throughput(Throughput::Bytes(mib as u64));
    g.bench_function("lines_of_1m", |b| b.iter(|| black_box(t.logical_lines())));
    g.finish();
}

/// A synthetic agent trace: spinner ticks, a streamed answer, a tool burst,
/// silences. `(bytes, at_ms)`.
fn trace() -> Vec<(usize, u64)> {
    let mut t = 0u64;
    let mut out = Vec::new();
    for i in 0..4096usize {
        let (len, gap) = match i % 64 {
            0..=19 => (12, 80),
            20..=49 => (40 + i % 200, 15),
            50..=52 => (4096, 2),
            _ => (1, 400),
        };
        t += gap;
        out.push((len, t));
    }
    out
}

fn classifiers(c: &mut Criterion) {
    let mut g = c.benchmark_group("classify");
    let specs = [
        ClassifierSpec::None,
        ClassifierSpec::by_name("simple").expect("simple"),
        ClassifierSpec::by_name("claude").expect("claude"),
    ];
    let tr = trace();
    let bytes = vec![b'.'; 4096];
    for spec in specs {
        g.throughput(Throughput::Elements(1));
        g.bench_function(BenchmarkId::new("build", spec.name()), |b| {
            b.iter(|| black_box(spec).build(0))
        });
        g.throughput(Throughput::Elements(tr.len() as u64));
        g.bench_function(BenchmarkId::new("record_trace", spec.name()), |b| {
            b.iter(|| {
                let mut cl = spec.build(0);
                for &(len, at) in &tr {
                    cl.record(&bytes[..len], at);
                }
                black_box(cl.state())
            })
        });
        // STATUS polls: tick then read the state.
        g.throughput(Throughput::Elements(1));
        g.bench_function(BenchmarkId::new("tick_state", spec.name()), |b| {
            let mut cl = spec.build(0);
            cl.record(b"x", 10);
            let mut now = 10u64;
            b.iter(|| {
                now += 250;
                cl.tick(now);
                black_box((cl.state(), cl.state_ms(now)))
            })
        });
    }
    g.finish();
}

/// The agent classifier reading a settled screen: which agent it shows
/// and which rule matches, by a fresh detector each time (the rules are
/// built once, as in a supervisor, and their patterns compiled in the
/// warm-up). One saved screen per agent and a plain program's question.
fn detect(c: &mut Criterion) {
    let mut g = c.benchmark_group("detect");
    let settings = Settings {
        process_evidence: false,
        ..Settings::default()
    };
    let rules = heimdall::detect::rules::builtin();
    for name in [
        "claude330_thinking",
        "claude330_permission",
        "codex_working",
        "gemini_ready",
        "aider_question",
        "plain_program_asks_yes_no",
    ] {
        let path = format!("tests/fixtures/screens/{name}/frame.txt");
        let text = std::fs::read_to_string(&path).expect("a saved screen");
        let term = text_screen(&text);
        g.bench_function(BenchmarkId::new("settled_screen", name), |b| {
            b.iter(|| {
                let mut d = Detector::with_rules(settings.clone(), rules.clone(), &[], 0);
                black_box(d.verdict(term.screen(), 5_000))
            })
        });
    }
    g.finish();
}

/// 64 KiB of coloured, cursor-moving output, like a build log or `ls`.
fn terminal_output() -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while out.len() < 64 * 1024 {
        out.extend_from_slice(
            format!(
                "\x1b[1;3{}m{:>6}\x1b[0m  src/module_{}.rs  \x1b[2mcompiling\x1b[0m {}\r\n",
                i % 8,
                i,
                i % 97,
                "=".repeat(i % 40)
            )
            .as_bytes(),
        );
        if i % 50 == 0 {
            out.extend_from_slice(b"\x1b[H\x1b[2J\x1b[?25l");
        }
        i += 1;
    }
    out
}

fn pane(c: &mut Criterion) {
    let mut g = c.benchmark_group("pane");
    let out = terminal_output();
    let size = Size {
        cols: 120,
        rows: 40,
    };
    g.throughput(Throughput::Bytes(out.len() as u64));
    g.bench_function("parse_64k", |b| {
        b.iter(|| {
            let mut t = Term::new(size);
            t.feed(black_box(&out));
            t
        })
    });
    // A dashboard pane keeps a history: rows that scroll off are kept
    // (and, once it is full, the oldest dropped) rather than reset.
    g.bench_function("parse_64k_history_1000", |b| {
        let mut t: Term = Term::with_scrollback(size, 1000);
        b.iter(|| t.feed(black_box(&out)))
    });
    let mut t = Term::new(size);
    t.feed(&out);
    let area = Rect::new(0, 0, size.cols, size.rows);
    let mut buf = Buffer::empty(area);
    g.throughput(Throughput::Elements(1));
    g.bench_function("render_120x40", |b| {
        b.iter(|| {
            let v = view(&t, size.rows, size.cols);
            PseudoTerminal::new(&v).render(area, &mut buf);
            black_box(&buf);
        })
    });
    // A small grid pane showing part of a bigger screen.
    let small = Rect::new(0, 0, 58, 12);
    let mut sbuf = Buffer::empty(small);
    g.bench_function("render_58x12_of_120x40", |b| {
        b.iter(|| {
            let v = view(&t, small.height, small.width);
            PseudoTerminal::new(&v).render(small, &mut sbuf);
            black_box(&sbuf);
        })
    });
    g.finish();
}

/// A supervisor's screen reading 1 MiB of output: parsed as it comes (as
/// before issue 27), or skimmed and parsed once at the end, as it is now,
/// with what scrolled off unseen left out.
fn screen(c: &mut Criterion) {
    let mut g = c.benchmark_group("screen");
    let size = Size {
        cols: 120,
        rows: 40,
    };
    let plain = sink_text(1 << 20);
    let mut coloured = Vec::new();
    while coloured.len() < 1 << 20 {
        coloured.extend_from_slice(&terminal_output());
    }
    for (name, data) in [("plain_1m", &plain), ("coloured_1m", &coloured)] {
        g.throughput(Throughput::Bytes(data.len() as u64));
        g.bench_with_input(BenchmarkId::new("eager", name), data, |b, d| {
            let mut t = Term::with_callbacks(size, Recorder::default());
            b.iter(|| {
                for read in d.chunks(4095) {
                    t.feed(read);
                }
            })
        });
        g.bench_with_input(BenchmarkId::new("lazy", name), data, |b, d| {
            let mut s = Dozing::new(Term::with_callbacks(size, Recorder::default()));
            b.iter(|| {
                for read in d.chunks(4095) {
                    s.skim(read);
                }
                black_box(s.term().screen().cursor_position())
            })
        });
    }
    g.finish();
}

/// What `hm attach` does to every byte of output: rewrite screen switches,
/// look for sequences that damage its status bar, and (during replay only)
/// filter terminal queries.
fn attach(c: &mut Criterion) {
    let mut g = c.benchmark_group("attach");
    let plain = sink_text(1 << 20);
    let coloured = terminal_output();
    for (name, data) in [("plain_1m", &plain), ("coloured_64k", &coloured)] {
        g.throughput(Throughput::Bytes(data.len() as u64));
        g.bench_with_input(BenchmarkId::new("damage_scan", name), data, |b, d| {
            let mut scan = DamageScan::default();
            let mut regions = Vec::new();
            b.iter(|| {
                regions.clear();
                black_box(scan.scan(d, &mut regions))
            })
        });
        g.bench_with_input(BenchmarkId::new("screen_rewrite", name), data, |b, d| {
            let mut out = Vec::with_capacity(d.len());
            let mut r = ScreenRewriter::new();
            b.iter(|| {
                out.clear();
                r.rewrite(d, &mut out);
                black_box(out.len())
            })
        });
        g.bench_with_input(BenchmarkId::new("query_filter", name), data, |b, d| {
            let mut out = Vec::with_capacity(d.len());
            b.iter(|| {
                out.clear();
                let mut f = QueryFilter::new();
                f.filter(d, &mut out);
                f.finish(&mut out);
                black_box(out.len())
            })
        });
    }
    g.finish();
}

/// Plain 80-byte lines, as in the end-to-end throughput payload.
fn sink_text(bytes: usize) -> Vec<u8> {
    let line =
        b"0000042 abcdefghijklmnopqrstuvwxyz0123456789 abcdefghijklmnopqrstuvwxyz01234567\r\n";
    line.iter().copied().cycle().take(bytes).collect()
}

fn config() -> Criterion {
    // Short enough that the whole suite takes about a minute.
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30)
}

criterion_group! {
    name = benches;
    config = config();
    targets = codec, ring, journal, classifiers, detect, screen, attach, pane, replay
}
criterion_main!(benches);
