//! Runs every file of the fuzz corpus (`fuzz/corpus/<target>/`) through
//! its target in `heimdall::fuzzing`: the seeds, and the inputs that once
//! broke something (`regress-*`), stay checked by `cargo test` without a
//! fuzzer installed.
//!
//! The generated seeds are written by the ignored test at the bottom:
//! `cargo test --test tests fuzz_corpus -- --ignored write_seeds`.

use std::path::{Path, PathBuf};

use heimdall::fuzzing::TARGETS;
use heimdall::protocol::{self, ClientType, ErrorCode, MAX_PAYLOAD, ServerType, Size, Status};

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target)
}

#[test]
fn every_corpus_file_passes_its_target() {
    let mut failed = Vec::new();
    let mut total = 0;
    for (name, target) in TARGETS {
        let dir = corpus_dir(name);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("corpus entry").path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no seeds for {name}");
        for file in files {
            let data = std::fs::read(&file).expect("corpus file");
            total += 1;
            if std::panic::catch_unwind(|| target(&data)).is_err() {
                failed.push(file.display().to_string());
            }
        }
    }
    assert!(failed.is_empty(), "failed: {failed:#?}");
    assert!(total >= TARGETS.len());
}

#[test]
fn every_target_has_a_fuzz_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("fuzz/Cargo.toml");
    for (name, _) in TARGETS {
        let path = root.join(format!("fuzz_targets/{name}.rs"));
        let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        assert!(src.contains(&format!("fuzzing::{name}(")), "{path:?}");
        assert!(
            manifest.contains(&format!("name = \"{name}\"")),
            "{name} not in fuzz/Cargo.toml"
        );
    }
}

// ---------------------------------------------------------------------------
// Seed generation. Text targets get text files; the classifier and screen
// targets get their operation encodings (see their docs in src/fuzzing.rs).

fn frames(list: &[(u8, &[u8])]) -> Vec<u8> {
    list.iter()
        .flat_map(|(ty, p)| protocol::frame(*ty, p))
        .collect()
}

fn frame_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let status = Status {
        pid: 4242,
        idle_ms: 1500,
        alive: true,
        state: 0x04,
        state_ms: 250,
    }
    .encode();
    let size = Size {
        cols: 120,
        rows: 40,
    }
    .encode();
    let error = protocol::encode_error(ErrorCode::TooSlow, "subscriber made no progress");
    let mut oversized = protocol::header(ClientType::Input as u8, MAX_PAYLOAD + 1).to_vec();
    oversized.extend_from_slice(b"abc");
    let mut truncated = frames(&[(ClientType::Status as u8, b"")]);
    truncated.extend_from_slice(&protocol::header(ClientType::Input as u8, 100));
    truncated.extend_from_slice(b"only part of it");
    vec![
        ("input", frames(&[(ClientType::Input as u8, b"ls -la\r")])),
        ("subscribe", frames(&[(ClientType::Subscribe as u8, b"")])),
        (
            "subscribe-mark-replay",
            frames(&[(
                ClientType::Subscribe as u8,
                &[protocol::SUBSCRIBE_MARK_REPLAY],
            )]),
        ),
        ("status", frames(&[(ClientType::Status as u8, b"")])),
        ("resize", frames(&[(ClientType::Resize as u8, &size)])),
        (
            "resize-zero",
            frames(&[(ClientType::Resize as u8, &[0, 0, 0, 0])]),
        ),
        (
            "resize-short",
            frames(&[(ClientType::Resize as u8, &[0, 80, 0])]),
        ),
        ("kill", frames(&[(ClientType::Kill as u8, b"")])),
        (
            "kill-grace",
            frames(&[(ClientType::Kill as u8, &2000u32.to_be_bytes())]),
        ),
        ("info", frames(&[(ClientType::Info as u8, b"")])),
        (
            "output",
            frames(&[(ServerType::Output as u8, b"\x1b[1;32mok\x1b[0m\r\n$ ")]),
        ),
        (
            "status-resp",
            frames(&[(ServerType::StatusResp as u8, &status)]),
        ),
        (
            "exit",
            frames(&[(ServerType::Exit as u8, &protocol::encode_exit(137))]),
        ),
        ("error", frames(&[(ServerType::Error as u8, &error)])),
        (
            "info-resp",
            frames(&[(
                ServerType::Info as u8,
                br#"{"id":"api","pid":4242,"cols":80,"rows":24}"#,
            )]),
        ),
        ("replay-end", frames(&[(ServerType::ReplayEnd as u8, b"")])),
        (
            "attach-session",
            frames(&[
                (ServerType::Output as u8, b"scrollback\r\n"),
                (ServerType::ReplayEnd as u8, b""),
                (ServerType::Output as u8, b"live\r\n"),
                (ServerType::StatusResp as u8, &status),
                (ServerType::Exit as u8, &protocol::encode_exit(0)),
            ]),
        ),
        (
            "client-session",
            frames(&[
                (ClientType::Subscribe as u8, &[1]),
                (ClientType::Resize as u8, &size),
                (ClientType::Input as u8, b"echo hi\r"),
                (ClientType::Status as u8, b""),
                (ClientType::Kill as u8, b""),
            ]),
        ),
        ("oversized-header", oversized),
        ("truncated", truncated),
    ]
}

/// Encodes classifier operations (layout in `fuzzing::classifier`).
#[derive(Clone, Copy)]
enum C {
    Rec(u32, i32),
    Tick(i32),
    Dead(i32),
    Jump(u64),
    Burst(u8, u16, u16),
}

fn classifier_seed(kind: u8, idle: u64, debounce: u64, start: u64, ops: &[C]) -> Vec<u8> {
    let mut v = vec![kind];
    v.extend(idle.to_le_bytes());
    v.extend(debounce.to_le_bytes());
    v.extend(start.to_le_bytes());
    for op in ops {
        match *op {
            C::Rec(len, dt) => {
                v.push(0);
                v.extend(len.to_le_bytes());
                v.extend(dt.to_le_bytes());
            }
            C::Tick(dt) => {
                v.push(1);
                v.extend(dt.to_le_bytes());
            }
            C::Dead(dt) => {
                v.push(2);
                v.extend(dt.to_le_bytes());
            }
            C::Jump(t) => {
                v.push(3);
                v.extend(t.to_le_bytes());
            }
            C::Burst(n, len, gap) => {
                v.push(4);
                v.push(n);
                v.extend(len.to_le_bytes());
                v.extend(gap.to_le_bytes());
            }
        }
    }
    v
}

fn classifier_seeds() -> Vec<(&'static str, Vec<u8>)> {
    const NONE: u8 = 0;
    const SIMPLE: u8 = 1;
    const CLAUDE: u8 = 2;
    let t0 = 1_700_000_000_000;
    let prompt = [C::Rec(40, 100), C::Tick(500), C::Tick(3000)];
    let spinner = [
        C::Rec(200, 0),
        C::Burst(30, 60, 80),
        C::Tick(100),
        C::Tick(4000),
    ];
    let streaming = [C::Burst(5, 20, 20), C::Burst(20, 400, 20), C::Tick(300)];
    let tool_use = [
        C::Burst(10, 80, 90),
        C::Tick(600),
        C::Rec(8000, 10),
        C::Rec(3000, 20),
        C::Tick(3500),
    ];
    let session = [
        C::Rec(120, 0),
        C::Burst(25, 70, 100),
        C::Burst(40, 350, 15),
        C::Tick(700),
        C::Rec(9000, 5),
        C::Tick(5000),
        C::Burst(12, 64, 120),
        C::Dead(50),
        C::Rec(10, 10),
        C::Tick(60_000),
    ];
    let hostile = [
        C::Rec(10, 1000),
        C::Tick(-5000),
        C::Rec(u32::MAX, -1),
        C::Jump(0),
        C::Rec(1, 0),
        C::Jump(u64::MAX),
        C::Tick(1),
        C::Rec(5000, i32::MIN),
        C::Dead(-10),
        C::Tick(-1_000_000),
    ];
    let mut seeds = Vec::new();
    for (kind, kname) in [(NONE, "none"), (SIMPLE, "simple"), (CLAUDE, "claude")] {
        for (trace, tname) in [
            (&prompt[..], "prompt"),
            (&spinner[..], "spinner"),
            (&streaming[..], "streaming"),
            (&tool_use[..], "tool-use"),
            (&session[..], "session"),
            (&hostile[..], "hostile"),
        ] {
            let name: &'static str = format!("{kname}-{tname}").leak();
            seeds.push((name, classifier_seed(kind, 3000, 200, t0, trace)));
        }
    }
    seeds.push((
        "claude-zero-debounce",
        classifier_seed(CLAUDE, 1, 0, 0, &session),
    ));
    seeds.push((
        "simple-huge-threshold",
        classifier_seed(SIMPLE, u64::MAX, 0, u64::MAX - 10, &hostile),
    ));
    seeds
}

fn text_seeds(list: &[(&'static str, &str)]) -> Vec<(&'static str, Vec<u8>)> {
    list.iter()
        .map(|(n, t)| (*n, t.as_bytes().to_vec()))
        .collect()
}

fn config_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let example =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("heimdall.toml.example"))
            .expect("heimdall.toml.example");
    let mut seeds = vec![("example", example)];
    seeds.extend(text_seeds(&[
        ("empty", ""),
        ("classifier-name", "classifier = \"claude\"\n"),
        ("classifier-simple", "[classifier.simple]\nidle_threshold_ms = 3000\n"),
        ("classifier-claude", "[classifier.claude]\nidle_threshold_ms = 3000\ndebounce_ms = 200\n"),
        ("classifier-none", "[classifier.none]\n"),
        ("classifier-two", "[classifier.simple]\n[classifier.claude]\n"),
        ("env", "[[env]]\nname = \"ANTHROPIC_API_KEY\"\nvalue = \"sk-...\"\n\n[[env]]\nname = \"EDITOR\"\nvalue = \"vim\"\n"),
        ("env-duplicate", "[[env]]\nname = \"A\"\nvalue = \"1\"\n[[env]]\nname = \"A\"\nvalue = \"2\"\n"),
        ("env-session-var", "session_env_var = \"X\"\n[[env]]\nname = \"X\"\nvalue = \"\"\n"),
        ("tui", "[tui]\ntheme = \"light\"\nfit_sessions = false\nbell = true\n"),
        ("paths", "socket_dir = \"~/run/hm\"\nlog_file = \"~\"\nlog_level = \"DEBUG\"\n"),
        ("tilde-user", "socket_dir = \"~root/x\"\n"),
        ("detach-keys", "detach_key = \"ctrl-]\"\n"),
        ("detach-int", "detach_key = 29\n"),
        ("detach-bad", "detach_key = \"ctrl-m\"\n"),
        ("numbers", "scrollback_bytes = 0x10000\nkill_grace_ms = 1_000\nkill_process_group = false\n"),
        ("out-of-range", "scrollback_bytes = -1\nkill_grace_ms = 99999999999999999999\n"),
        ("unknown-key", "colour = \"red\"\n"),
        ("syntax", "[tui\ntheme = \n\"\x01\"\n"),
        ("quoted-keys", "\"socket\\ndir\" = 1\n[tui]\n\"th\\u001beme\" = \"x\"\n"),
        ("none", "none"),
        ("ctrl-a", "Ctrl-A"),
        ("tilde", "~/work"),
        ("level", "Trace"),
    ]));
    seeds
}

fn session_id_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let long_dir = format!("/{}\napi", "d".repeat(95));
    let max_id = "a".repeat(64);
    let over_id = "a".repeat(65);
    text_seeds(&[
        ("simple", "api"),
        ("dots", "api.v2_test-1"),
        ("max", max_id.leak()),
        ("over", over_id.leak()),
        ("parent", "../x"),
        ("absolute", "/abs/x"),
        ("slash", "a/b"),
        ("leading-dot", ".hidden"),
        ("unicode", "café"),
        ("escape", "a\x1b[2Jb"),
        ("empty", ""),
        ("with-dir", "/run/user/1000/heimdall\nwork"),
        ("relative-dir", "sessions\nwork"),
        ("long-dir", long_dir.leak()),
        ("newline-id", "/tmp\na\nb"),
    ])
}

fn query_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let mut long_osc = b"\x1b]2;".to_vec();
    long_osc.extend(std::iter::repeat_n(b'x', 5000));
    long_osc.extend(b"\x07after\x1b[6n");
    let mut long_csi = b"\x1b[".to_vec();
    long_csi.extend(std::iter::repeat_n(b'1', 5000));
    long_csi.extend(b"m\x1b[c");
    let mut seeds = text_seeds(&[
        ("da", "a\x1b[c\x1b[0c\x1b[>c\x1b[=c\x1bZb"),
        ("dsr", "\x1b[5n\x1b[6n\x1b[?6n\x1b[?15n"),
        ("decrqm", "\x1b[?2004$p\x1b[4$p"),
        ("xtversion", "\x1b[>q\x1b[>0q"),
        ("decrqss", "\x1bP$qm\x1b\\\x1bP$q\"p\x1b\\"),
        ("xtgettcap", "\x1bP+q544e\x1b\\"),
        (
            "osc-colours",
            "\x1b]10;?\x07\x1b]11;?\x1b\\\x1b]12;?\x07\x1b]4;1;?\x07",
        ),
        ("osc-clipboard", "\x1b]52;c;?\x07\x1b]52;c;aGk=\x07"),
        (
            "window-reports",
            "\x1b[14t\x1b[16t\x1b[18t\x1b[19t\x1b[21t\x1b[22;0t\x1b[8;24;80t",
        ),
        (
            "kitty",
            "\x1b[?u\x1b_Gi=1,a=q;AAAA\x1b\\\x1b_Gi=1,a=T;AAAA\x1b\\",
        ),
        ("xtsmgraphics", "\x1b[?1;1S\x1b[x\x1b[1x"),
        (
            "keep",
            "\x1b[1;31mred\x1b[0m\x1b]0;title\x07\x1b[2J\x1b[?1049h\x1b(B\x1b7\x1b8",
        ),
        ("partial", "x\x1b[3"),
        ("split-string", "\x1b]11;?\x1b"),
        ("can-sub", "\x1b[6\x18n\x1b]11;?\x1a"),
        (
            "shell-session",
            "\x1b]0;user@host: ~\x07\x1b[?2004h$ ls\r\n\x1b[0m\x1b[01;34mdocs\x1b[0m  src\r\n\x1b[?2004l",
        ),
    ]);
    seeds.push(("long-osc", long_osc));
    seeds.push(("long-csi", long_csi));
    seeds
}

/// Encodes screen operations (layout in `fuzzing::tui_screen`).
enum S<'a> {
    Feed(&'a [u8]),
    Resize(u8, u8),
    Render(u8, u8, u8, u8, bool),
    Reset,
}

fn screen_seed(rows: u8, cols: u8, ops: &[S<'_>]) -> Vec<u8> {
    let mut v = vec![rows, cols];
    for op in ops {
        match op {
            S::Feed(bytes) => {
                v.push(0);
                v.extend((bytes.len() as u16).to_le_bytes());
                v.extend_from_slice(bytes);
            }
            S::Resize(r, c) => v.extend([1, *r, *c]),
            S::Render(h, w, x, y, cursor) => v.extend([2, *h, *w, *x, *y, u8::from(*cursor)]),
            S::Reset => v.push(3),
        }
    }
    v
}

fn screen_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let shell: &[u8] = b"\x1b]0;user@host: ~\x07\x1b[?2004h\x1b[01;32muser@host\x1b[00m:\x1b[01;34m~\x1b[00m$ ls\r\n\x1b[0m\x1b[01;34mdocs\x1b[0m  src  Cargo.toml\r\n$ ";
    let vim: &[u8] = b"\x1b[?1049h\x1b[22;0;0t\x1b[?1h\x1b=\x1b[H\x1b[2J\x1b[1;24r\x1b[?12h\x1b[?12l\x1b[27m\x1b[29m\x1b[m\x1b[H\x1b[2J\x1b[?25l\x1b[24;1H\"main.rs\" 42L\x1b[1;1H~\r\n~\r\n\x1b[7mNORMAL\x1b[27m\x1b[?25h\x1b[?1049l";
    let wide: &[u8] = "123456789你好世界\x1b[K\r\n\u{1f600}\u{301}e\u{301}".as_bytes();
    let mut osc = b"\x1b]0;".to_vec();
    osc.extend(std::iter::repeat_n(b'x', 3000));
    osc.extend(b"\x07after");
    let strings: &[u8] = b"\x1bP$qm\x1b\\\x1b_Gi=1;AAAA\x1b\\\x1b^pm\x1b\\\x1bXsos\x1b\\\x1b]52;c;aGk=\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\";
    let colours: &[u8] = b"\x1b[38;5;196mred\x1b[48;2;1;2;3mbg\x1b[1;2;3;4;7mattrs\x1b[0m\x1b[99999m\x1b[38;2;999;999;999m";
    let motion: &[u8] = b"\x1b[5;10r\x1b[10;1H\n\n\n\x1bM\x1bM\x1b[999;999H\x1b[K\x1b[1J\x1b[2K\x1b[3@\x1b[2P\x1b[4L\x1b[3M\x1b[5X\x1b[r\x1b7\x1b[H\x1b8";
    let modes: &[u8] = b"\x1b[?1000h\x1b[?1006h\x1b[?2004h\x1b[?25l\x1b[?1h\x1b=\x1b[4h\x1b[?7l0123456789abcdefghij\x1b[?7h\x1b[?47h\x1b[?1047h\x1b[?1049h\x1bc";
    let resize_attack: &[u8] = b"\x1b[8;0;0t\x1b[8;65535;65535t\x1b[999999;999999H\x1b[K";
    vec![
        (
            "shell",
            screen_seed(24, 80, &[S::Feed(shell), S::Render(24, 80, 0, 0, true)]),
        ),
        (
            "vim",
            screen_seed(24, 80, &[S::Feed(vim), S::Render(10, 30, 2, 1, true)]),
        ),
        (
            "wide-then-shrink",
            screen_seed(
                3,
                10,
                &[
                    S::Feed(wide),
                    S::Resize(3, 9),
                    S::Feed(b"\x1b[K"),
                    S::Resize(3, 1),
                    S::Feed(wide),
                    S::Render(3, 1, 0, 0, true),
                ],
            ),
        ),
        (
            "zero-size",
            screen_seed(
                0,
                0,
                &[
                    S::Feed(b"text"),
                    S::Resize(0, 0),
                    S::Feed(wide),
                    S::Render(2, 2, 0, 0, true),
                ],
            ),
        ),
        (
            "one-column-wide",
            screen_seed(
                1,
                1,
                &[S::Feed("你好".as_bytes()), S::Render(1, 1, 0, 0, true)],
            ),
        ),
        (
            "long-osc",
            screen_seed(2, 20, &[S::Feed(&osc), S::Render(2, 20, 0, 0, false)]),
        ),
        (
            "strings",
            screen_seed(5, 40, &[S::Feed(strings), S::Feed(b"visible")]),
        ),
        (
            "colours",
            screen_seed(4, 40, &[S::Feed(colours), S::Render(4, 40, 1, 1, true)]),
        ),
        (
            "motion",
            screen_seed(
                24,
                80,
                &[
                    S::Feed(motion),
                    S::Resize(10, 20),
                    S::Feed(motion),
                    S::Render(5, 5, 0, 0, true),
                ],
            ),
        ),
        (
            "modes",
            screen_seed(
                6,
                20,
                &[
                    S::Feed(modes),
                    S::Resize(201, 2),
                    S::Render(6, 20, 7, 7, true),
                ],
            ),
        ),
        (
            "resize-requests",
            screen_seed(
                24,
                80,
                &[
                    S::Feed(resize_attack),
                    S::Resize(203, 203),
                    S::Render(24, 80, 0, 0, true),
                ],
            ),
        ),
        (
            "reset",
            screen_seed(
                24,
                80,
                &[
                    S::Feed(shell),
                    S::Reset,
                    S::Feed(vim),
                    S::Render(24, 80, 0, 0, true),
                ],
            ),
        ),
    ]
}

/// A client session for the `connection` target: flags (bit 0 "whole",
/// bit 1 "the program prints"), then the client's bytes.
fn connection_seed(flags: u8, list: &[(u8, &[u8])]) -> Vec<u8> {
    let mut v = vec![flags];
    v.extend(frames(list));
    v
}

fn connection_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let size = Size {
        cols: 100,
        rows: 30,
    }
    .encode();
    let mut big_input = vec![b'k'; 6000];
    big_input.extend(b"\x03\x1a\x11\x13\r\n");
    let mut cut_input = connection_seed(
        3,
        &[
            (ClientType::Subscribe as u8, &[]),
            (ClientType::Input as u8, b"abc"),
        ],
    );
    // An INPUT frame declaring 100 bytes that brings 3: they still arrive.
    cut_input.extend(protocol::header(ClientType::Input as u8, 100));
    cut_input.extend(b"xyz");
    let mut too_large = connection_seed(
        1,
        &[
            (ClientType::Status as u8, &[]),
            (ClientType::Input as u8, b"before"),
        ],
    );
    too_large.extend(protocol::header(ClientType::Input as u8, MAX_PAYLOAD + 1));
    too_large.extend(b"never read");
    vec![
        (
            "status-info",
            connection_seed(
                1,
                &[
                    (ClientType::Status as u8, &[]),
                    (ClientType::Info as u8, &[]),
                    (ClientType::Status as u8, &[]),
                ],
            ),
        ),
        (
            "subscribe-prints",
            connection_seed(
                3,
                &[
                    (ClientType::Subscribe as u8, &[]),
                    (ClientType::Status as u8, &[]),
                ],
            ),
        ),
        (
            "subscribe-marked",
            connection_seed(
                3,
                &[
                    (ClientType::Subscribe as u8, &[1]),
                    (ClientType::Subscribe as u8, &[]),
                    (ClientType::Info as u8, &[]),
                ],
            ),
        ),
        (
            "input",
            connection_seed(
                1,
                &[
                    (ClientType::Input as u8, b"echo hi\r"),
                    (ClientType::Input as u8, &big_input),
                    (ClientType::Status as u8, &[]),
                ],
            ),
        ),
        (
            "resize",
            connection_seed(
                1,
                &[
                    (ClientType::Resize as u8, &size),
                    (ClientType::Resize as u8, &[0, 0, 255, 255]),
                    (ClientType::Status as u8, &[]),
                ],
            ),
        ),
        (
            "resize-malformed",
            connection_seed(
                1,
                &[
                    (ClientType::Status as u8, &[]),
                    (ClientType::Resize as u8, &[1, 2, 3]),
                ],
            ),
        ),
        (
            "kill-waits",
            connection_seed(
                3,
                &[
                    (ClientType::Kill as u8, &500u32.to_be_bytes()),
                    (ClientType::Status as u8, &[]),
                ],
            ),
        ),
        (
            "kill-plain",
            connection_seed(
                1,
                &[(ClientType::Kill as u8, &[]), (ClientType::Info as u8, &[])],
            ),
        ),
        (
            "unknown-types",
            connection_seed(
                1,
                &[
                    (0x00, b"?"),
                    (0x7f, &[]),
                    (0x81, b"not from a client"),
                    (ClientType::Status as u8, &[]),
                ],
            ),
        ),
        ("too-large", too_large),
        ("cut-input", cut_input),
        (
            "raw-subscribe-input",
            connection_seed(
                2,
                &[
                    (ClientType::Subscribe as u8, &[1]),
                    (ClientType::Input as u8, b"late"),
                    (ClientType::Status as u8, &[]),
                ],
            ),
        ),
        ("raw-half-header", vec![0, ClientType::Status as u8, 0, 0]),
    ]
}

fn attach_output_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let list: [(&'static str, &[u8]); 9] = [
        ("plain", "hello, world\r\n\u{4f60}\u{597d} \u{1f600}\r\n".as_bytes()),
        ("vim", b"\x1b[?1049h\x1b[22;0;0t\x1b[?1h\x1b=\x1b[H\x1b[2J\x1b[1;23r\x1b[?25l~\r\n~\x1b[?12l\x1b[?25h\x1b[r\x1b[?1l\x1b>\x1b[?1049l\x1b[23;0;0t"),
        ("combined-modes", b"\x1b[?1;1049;25h text \x1b[?25;47;1049l\x1b[?1047h\x1b[?1047l"),
        ("sub-parameters", b"\x1b[?1049:1h\x1b[?01049h\x1b[?;1049;h"),
        ("high-bytes", b"\x1b[\x80?1049l\x1b\x80[?1049l\x1b[?\x801049l\x1b[?1049\xffl"),
        ("full-reset", b"before\x1bcafter\x1b\x80c"),
        ("regions", b"\x1b[5;20r\x1b[r\x1b[;r\x1b[0;0r\x1b[99999;1r\x1b[!p\x1b[2J\x1b[3J\x1b[S\x1b[T\x1b[?3h"),
        ("split-escapes", b"\x1b\x1b[\x1b[?\x1b[?10\x18\x1b[?1049\x1a\x1b[?1049l"),
        ("strings", b"\x1b]0;title\x1b[?1049l\x07\x1bP$q\x1b[?1049h\x1b\\\x1b_apc\x1b\\"),
    ];
    list.into_iter().map(|(n, b)| (n, b.to_vec())).collect()
}

/// Encodes copy mode operations (layout in `fuzzing::copy_mode`).
enum Cm<'a> {
    Output(&'a [u8]),
    Resize(u8, u8),
    Keys(&'a [u8]),
    ReplayEnd,
    Paint(bool),
}

fn copy_seed(rows: u8, cols: u8, history: u8, page_first: bool, ops: &[Cm<'_>]) -> Vec<u8> {
    let mut v = vec![rows, cols, history, u8::from(page_first)];
    for op in ops {
        match op {
            Cm::Output(bytes) => {
                v.push(0);
                v.extend((bytes.len() as u16).to_le_bytes());
                v.extend_from_slice(bytes);
            }
            Cm::Resize(r, c) => v.extend([1, *r, *c]),
            Cm::Keys(bytes) => {
                v.extend([2, bytes.len() as u8]);
                v.extend_from_slice(bytes);
            }
            Cm::ReplayEnd => v.push(3),
            Cm::Paint(force) => v.extend([4, u8::from(*force)]),
        }
    }
    v
}

fn copy_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let seq: Vec<u8> = (1..=60)
        .flat_map(|i| format!("{i}\r\n").into_bytes())
        .collect();
    let colours: &[u8] =
        b"\x1b[1;31mred\x1b[0m \x1b[38;5;40mgreen\x1b[m\r\n\x1b[7mreverse\x1b[m\r\n";
    let wide = "你好世界 wide\r\ne\u{301}\r\n".as_bytes();
    let clear: &[u8] = b"\x1b[H\x1b[2J\x1b[3J";
    vec![
        (
            "search-select-copy",
            copy_seed(
                6,
                30,
                40,
                false,
                &[
                    Cm::Output(&seq),
                    Cm::ReplayEnd,
                    Cm::Paint(true),
                    Cm::Keys(b"?17\r"),
                    Cm::Paint(false),
                    Cm::Keys(b"vj$"),
                    Cm::Paint(false),
                    Cm::Keys(b"y"),
                ],
            ),
        ),
        (
            "page-up-then-output-and-resize",
            copy_seed(
                5,
                20,
                10,
                true,
                &[
                    Cm::Output(&seq),
                    Cm::ReplayEnd,
                    Cm::Paint(false),
                    Cm::Output(&seq),
                    Cm::Resize(3, 8),
                    Cm::Paint(false),
                    Cm::Keys(b"\x1b[5;2~\x1b[<64;1;1M\x1bOA\x1b[6;2~"),
                    Cm::Paint(true),
                ],
            ),
        ),
        (
            "colours-and-wide",
            copy_seed(
                4,
                12,
                20,
                false,
                &[
                    Cm::Output(colours),
                    Cm::Output(wide),
                    Cm::ReplayEnd,
                    Cm::Keys(b"gwwbb$0vGy"),
                    Cm::Paint(true),
                ],
            ),
        ),
        (
            "cleared-history",
            copy_seed(
                4,
                10,
                20,
                true,
                &[
                    Cm::Output(&seq),
                    Cm::ReplayEnd,
                    Cm::Output(clear),
                    Cm::Paint(false),
                    Cm::Keys(b"\x1b[200~qq\x1b[201~kkk\x15\x04\x02\x06/x\x7f\x7f"),
                    Cm::Paint(true),
                ],
            ),
        ),
    ]
}

/// The `journal` target's operations (see `src/fuzzing/journal.rs`).
enum Jo<'a> {
    Print(&'a [u8]),
    Resize(u8, u8),
    Join,
    Take(u8, u8),
    Tick(u8),
}

fn journal_seed(ops: &[Jo<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    for op in ops {
        match op {
            Jo::Print(bytes) => {
                for piece in bytes.chunks(128) {
                    out.push((piece.len() - 1) as u8);
                    out.extend_from_slice(piece);
                }
            }
            Jo::Resize(cols, rows) => out.extend([0x80, *cols, *rows]),
            Jo::Join => out.push(0xa0),
            Jo::Take(k, n) => out.extend([0xb0 + k, *n]),
            Jo::Tick(halves) => out.push(0xf0 + halves),
        }
    }
    out
}

fn journal_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let pattern: Vec<u8> = (1..=6)
        .flat_map(|i| format!("{i:03}:{}\r\n", "abcdefghij".repeat(30)).into_bytes())
        .collect();
    let boxed = |c: u8| -> Vec<u8> {
        let mut b = b"\x1b[H\x1b[2J\x1b[1;1H+".to_vec();
        b.extend(std::iter::repeat_n(b'-', usize::from(c.saturating_sub(2))));
        b.extend_from_slice(b"+\x1b[31m|size|\x1b[m");
        b
    };
    vec![
        (
            "pattern-between-resizes",
            journal_seed(&[
                Jo::Print(&pattern),
                Jo::Resize(63, 23),
                Jo::Print(&boxed(63)),
                Jo::Take(0, 20),
                Jo::Resize(20, 12),
                Jo::Print(&pattern),
                Jo::Join,
                Jo::Resize(40, 12),
                Jo::Print(&boxed(40)),
                Jo::Tick(5),
                Jo::Print(b"after the pause\r\n"),
                Jo::Take(1, 255),
            ]),
        ),
        (
            "resizes-with-nothing-between",
            journal_seed(&[
                Jo::Print(b"line one\r\nline two\r\n"),
                Jo::Resize(5, 2),
                Jo::Resize(1, 1),
                Jo::Resize(30, 9),
                Jo::Print(b"\x1b[?1049hon the alternate screen\x1b[?1049l back\r\n"),
                Jo::Resize(0, 0),
                Jo::Join,
            ]),
        ),
        (
            "erase-saved-lines-and-wide",
            journal_seed(&[
                Jo::Print(
                    "你好世界 wide text that wraps around\r\n"
                        .repeat(4)
                        .as_bytes(),
                ),
                Jo::Resize(7, 3),
                Jo::Print(b"\x1b[3Jkept\r\n"),
                Jo::Take(0, 3),
                Jo::Resize(50, 3),
                Jo::Print(b"tail"),
            ]),
        ),
    ]
}

#[test]
#[ignore = "writes the seed corpus into fuzz/corpus"]
fn write_seeds() {
    let all = [
        ("frame_decoder", frame_seeds()),
        ("classifier", classifier_seeds()),
        ("config", config_seeds()),
        ("session_id", session_id_seeds()),
        ("query_filter", query_seeds()),
        ("tui_screen", screen_seeds()),
        ("connection", connection_seeds()),
        ("attach_output", attach_output_seeds()),
        ("copy_mode", copy_seeds()),
        ("journal", journal_seeds()),
    ];
    for (target, seeds) in all {
        let dir = corpus_dir(target);
        std::fs::create_dir_all(&dir).expect("corpus dir");
        for (name, data) in seeds {
            std::fs::write(dir.join(format!("seed-{name}")), data).expect("seed file");
        }
    }
}
