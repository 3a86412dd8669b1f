//! The wire protocol against the real supervisor: the seed's Go client
//! (mirrored here), limits and errors, hostile clients, and output
//! integrity (nothing lost, nothing duplicated, EXIT last).

use crate::common;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

use common::{Raw, Sandbox, wait_until};
use heimdall::protocol::{self, ClientType, ErrorCode, ServerType, Size};

/// The Go subscriber from seed 002, line for line: mode byte, SUBSCRIBE,
/// print OUTPUT, exit with EXIT's code.
/// `first_output` is the test's only addition: it tells the test the
/// client is subscribed.
fn go_client(sock: &std::path::Path, first_output: std::sync::mpsc::Sender<()>) -> (Vec<u8>, i32) {
    let mut conn = UnixStream::connect(sock).expect("connect");
    let mut mode = [0u8; 1];
    conn.read_exact(&mut mode).expect("read mode byte");
    assert_eq!(mode[0], 0x00, "unsupported mode");
    conn.write_all(&[0x02, 0x00, 0x00, 0x00, 0x00])
        .expect("send subscribe");
    let mut stdout = Vec::new();
    let mut header = [0u8; 5];
    loop {
        conn.read_exact(&mut header).expect("read frame");
        let length = u32::from_be_bytes([header[1], header[2], header[3], header[4]]);
        let mut payload = vec![0u8; length as usize];
        if length > 0 {
            conn.read_exact(&mut payload).expect("read payload");
        }
        match header[0] {
            0x81 => {
                stdout.extend_from_slice(&payload);
                let _ = first_output.send(());
            }
            0x83 => {
                let code = i32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]);
                return (stdout, code);
            }
            _ => {}
        }
    }
}

#[test]
fn the_seed_go_client_works_unchanged() {
    let sb = Sandbox::new();
    let s = sb.start(
        "go",
        &[],
        &[
            "sh",
            "-c",
            "printf 'first\\n'; read x; printf 'second %s\\n' \"$x\"; exit 3",
        ],
    );
    let mut r = s.raw();
    let sock = s.sock.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || go_client(&sock, tx));
    rx.recv_timeout(common::PATIENCE)
        .expect("go client got the scrollback");
    r.send(ClientType::Input as u8, b"go\n");
    let (out, code) = reader.join().expect("go client");
    assert_eq!(code, 3);
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains("first"), "{text:?}");
    assert!(text.contains("second go"), "{text:?}");
}

#[test]
fn status_reports_the_child_and_its_state() {
    let sb = Sandbox::new();
    let s = sb.start("st", &[], &["sleep", "30"]);
    let st = s.raw().status().expect("status");
    assert!(st.alive);
    assert_eq!(Some(st.pid as i32), s.child_pid());
    assert_eq!(st.state, 0x00, "a silent child is idle");
    // The frame is exactly the seed's 15-byte layout.
    let mut r = s.raw();
    r.send(ClientType::Status as u8, &[]);
    let f = r.expect(ServerType::StatusResp as u8);
    assert_eq!(f.payload.len(), 15);
    assert_eq!(f.payload[14], 0);
}

#[test]
fn unknown_frame_types_are_ignored_before_and_after_subscribe() {
    let sb = Sandbox::new();
    let s = sb.start("unk", &[], &["sh", "-c", "read x; echo got-$x; sleep 30"]);
    let mut r = s.raw();
    r.send(0x7e, b"whatever payload");
    r.send(0x42, &[]);
    assert!(r.status().is_some());
    r.send(ClientType::Subscribe as u8, &[]);
    r.send(0x7f, &[1, 2, 3]);
    r.send(ClientType::Input as u8, b"yes\n");
    r.output_until(b"got-yes");
}

#[test]
fn a_malformed_resize_gets_an_error_and_closes_only_that_connection() {
    let sb = Sandbox::new();
    let s = sb.start("bad", &[], &["sleep", "30"]);
    let mut bystander = s.raw();
    let mut r = s.raw();
    r.send(ClientType::Resize as u8, &[0, 80, 0]);
    let f = r.expect(ServerType::Error as u8);
    let (code, msg) = protocol::decode_error(&f.payload);
    assert_eq!(code, ErrorCode::MalformedPayload as u16);
    assert!(msg.contains("RESIZE"), "{msg}");
    assert!(r.frame().is_none(), "connection must close after ERROR");
    assert!(bystander.status().is_some_and(|s| s.alive));
}

/// LABEL renames a session: answered with INFO that says the new label,
/// and told at once to each subscriber that follows the state (both INFO
/// marked `relabelled`); a label that is not one line of printable text
/// is refused with ERROR, and the label stays.
#[test]
fn a_label_is_answered_and_told_to_those_following_the_state() {
    let sb = Sandbox::new();
    let s = sb.start("lbl", &[], &["sleep", "600"]);
    let info_of = |f: protocol::Frame| -> serde_json::Value {
        serde_json::from_slice(&f.payload).expect("INFO is JSON")
    };
    let mut follower = s.raw();
    follower.send(ClientType::Subscribe as u8, &[protocol::SUBSCRIBE_STATE]);
    follower.expect(ServerType::State as u8);
    let mut asker = s.raw();
    asker.send(ClientType::Label as u8, "nightly build ✓".as_bytes());
    let answer = info_of(asker.expect(ServerType::Info as u8));
    assert_eq!(answer["label"], "nightly build ✓", "{answer}");
    assert_eq!(answer["relabelled"], true, "{answer}");
    let told = info_of(follower.expect(ServerType::Info as u8));
    assert_eq!(
        (&told["label"], &told["relabelled"]),
        (&answer["label"], &serde_json::Value::Bool(true)),
        "{told}"
    );
    // An INFO asked is no push.
    asker.send(ClientType::Info as u8, &[]);
    let asked = info_of(asker.expect(ServerType::Info as u8));
    assert_eq!(asked.get("relabelled"), None, "{asked}");
    let mut bad = s.raw();
    bad.send(ClientType::Label as u8, b"two\nlines");
    let f = bad.expect(ServerType::Error as u8);
    let (code, msg) = protocol::decode_error(&f.payload);
    assert_eq!(code, ErrorCode::MalformedPayload as u16);
    assert_eq!(msg, "a label is one line of printable text");
    asker.send(ClientType::Info as u8, &[]);
    assert_eq!(
        info_of(asker.expect(ServerType::Info as u8))["label"],
        "nightly build ✓"
    );
    // Empty takes it away.
    asker.send(ClientType::Label as u8, &[]);
    assert_eq!(
        info_of(asker.expect(ServerType::Info as u8))["label"],
        serde_json::Value::Null
    );
}

#[test]
fn input_after_the_end_is_refused_but_costs_a_subscriber_nothing() {
    let sb = Sandbox::new();
    // `--await-attach` keeps the ended session for its launcher's attach.
    let mut s = sb.start(
        "late",
        &["--await-attach"],
        &["sh", "-c", "echo done; exit 3"],
    );
    let mut bystander = s.raw();
    wait_until("the program to end", || {
        bystander.status().is_some_and(|st| !st.alive)
    });
    // Not subscribed: told so, and closed.
    bystander.send(ClientType::Input as u8, b"x");
    let f = bystander.expect(ServerType::Error as u8);
    assert_eq!(
        protocol::decode_error(&f.payload).0,
        ErrorCode::Unavailable as u16
    );
    assert!(bystander.frame().is_none(), "closed after ERROR");
    // A subscriber typing as the program ends is owed its EXIT all the same.
    let mut r = s.raw();
    let mut both = protocol::frame(ClientType::Subscribe as u8, &[protocol::SUBSCRIBE_LAUNCHER]);
    both.extend(protocol::frame(ClientType::Input as u8, b"y"));
    r.send_bytes(&both);
    let (out, code) = r.collect_until_exit();
    assert!(String::from_utf8_lossy(&out).contains("done"), "{out:?}");
    assert_eq!(code, Some(3));
    assert_eq!(s.wait_exit(), 3);
}

#[test]
fn an_oversized_length_is_refused_from_the_header_alone() {
    let sb = Sandbox::new();
    let s = sb.start("big", &[], &["sleep", "30"]);
    let mut r = s.raw();
    // Declares 4 GiB and sends nothing more: the answer must not wait for
    // the payload, and the supervisor must not try to allocate it.
    r.send_bytes(&protocol::header(ClientType::Input as u8, u32::MAX));
    let f = r.expect(ServerType::Error as u8);
    assert_eq!(
        protocol::decode_error(&f.payload).0,
        ErrorCode::FrameTooLarge as u16
    );
    assert!(s.raw().status().is_some_and(|s| s.alive));
}

#[test]
fn frames_split_at_every_byte_are_understood() {
    let sb = Sandbox::new();
    let s = sb.start("drip", &[], &["sh", "-c", "read x; echo drip-$x; sleep 30"]);
    let mut r = s.raw();
    let mut bytes = protocol::frame(ClientType::Subscribe as u8, &[]);
    bytes.extend(protocol::frame(ClientType::Input as u8, b"ok\n"));
    bytes.extend(protocol::frame(ClientType::Status as u8, &[]));
    for b in bytes {
        r.send_bytes(&[b]);
        r.stream.flush().expect("flush");
    }
    let (mut out, mut status) = (Vec::new(), false);
    while !(status && out.windows(7).any(|w| w == b"drip-ok")) {
        let f = r.frame().expect("frame");
        match ServerType::try_from(f.ty) {
            Ok(ServerType::Output) => out.extend_from_slice(&f.payload),
            Ok(ServerType::StatusResp) => status = true,
            _ => {}
        }
    }
}

#[test]
fn ten_thousand_pipelined_requests_all_get_answers() {
    let sb = Sandbox::new();
    let s = sb.start("pipe", &[], &["sleep", "30"]);
    let mut r = s.raw();
    let one = protocol::frame(ClientType::Status as u8, &[]);
    let all: Vec<u8> = one
        .iter()
        .copied()
        .cycle()
        .take(one.len() * 10_000)
        .collect();
    let mut w = r.stream.try_clone().expect("clone");
    // Write from another thread: the supervisor stops reading requests
    // while its answers pile up unread, which is the point.
    let writer = std::thread::spawn(move || w.write_all(&all));
    let mut answers = 0;
    while answers < 10_000 {
        let f = r.frame().expect("answer");
        assert_eq!(f.ty, ServerType::StatusResp as u8);
        answers += 1;
    }
    writer.join().expect("join").expect("write");
}

/// A session at 80x24 that answers each line typed with `line N: ROWS
/// COLS`, the size its program sees then.
fn size_teller(sb: &Sandbox, id: &str) -> common::Session {
    sb.start(
        id,
        &["--cols", "80", "--rows", "24"],
        &[
            "sh",
            "-c",
            "n=0; while read x; do n=$((n+1)); echo \"line $n: $(stty size)\"; done",
        ],
    )
}

/// The session's size as INFO says it.
fn info_size(s: &common::Session) -> (Option<u64>, Option<u64>) {
    size_asked(&mut s.raw())
}

/// The session's size as INFO says it, asked on `conn`: answered after
/// what was sent on it before.
fn size_asked(conn: &mut common::Raw) -> (Option<u64>, Option<u64>) {
    conn.send(ClientType::Info as u8, &[]);
    let info = conn.expect(ServerType::Info as u8);
    let v: serde_json::Value = serde_json::from_slice(&info.payload).expect("json");
    (v["cols"].as_u64(), v["rows"].as_u64())
}

/// A person's terminal of `cols`x`rows` attached to `s` (its size sent
/// first, as `hm attach` does), its first line's answer `line N: ROWS
/// COLS` seen.
fn person(s: &common::Session, (cols, rows): (u16, u16), line: u32) -> common::Raw {
    let mut t = s.raw();
    t.send(ClientType::Resize as u8, &Size { cols, rows }.encode());
    t.send(ClientType::Subscribe as u8, &[protocol::SUBSCRIBE_TERMINAL]);
    t.send(ClientType::Input as u8, b"\n");
    t.output_until(format!("line {line}: {rows} {cols}").as_bytes());
    t
}

/// While a person's terminal (SUBSCRIBE with the terminal flag) is
/// attached, anyone else's RESIZE (the dashboard fitting a pane) is held,
/// and applied once the terminal is gone.
#[test]
fn an_attached_terminal_is_never_resized_by_another_client() {
    let sb = Sandbox::new();
    let s = size_teller(&sb, "held");
    let size = |cols, rows| Size { cols, rows }.encode();
    let mut person = s.raw();
    person.send(ClientType::Subscribe as u8, &[protocol::SUBSCRIBE_TERMINAL]);
    person.send(ClientType::Resize as u8, &size(200, 50));
    person.send(ClientType::Input as u8, b"\n");
    person.output_until(b"line 1: 50 200");
    let mut dashboard = s.raw();
    dashboard.send(ClientType::Subscribe as u8, &[]);
    dashboard.send(ClientType::Resize as u8, &size(48, 14));
    dashboard.send(ClientType::Input as u8, b"\n");
    // The answer to this line is the size the program sees now.
    dashboard.output_until(b"line 2: 50 200");
    drop(person);
    wait_until("the held size to apply", || {
        info_size(&s) == (Some(48), Some(14))
    });
    dashboard.send(ClientType::Input as u8, b"\n");
    dashboard.output_until(b"line 3: 14 48");
}

/// Between two people's terminals the most recent size wins, however a
/// client orders its frames (`hm attach` sends its size, then subscribes:
/// a second attach kept the first one's size), and when it leaves, the
/// other's size is the session's again; with none left, what a dashboard
/// asked for meanwhile applies.
#[test]
fn the_latest_terminal_sets_the_size_and_the_one_left_takes_it_back() {
    let sb = Sandbox::new();
    let s = size_teller(&sb, "two");
    let size = |cols, rows| Size { cols, rows }.encode();
    let mut big = person(&s, (120, 34), 1);
    let small = person(&s, (60, 19), 2);
    let mut dashboard = s.raw();
    dashboard.send(ClientType::Subscribe as u8, &[]);
    dashboard.send(ClientType::Resize as u8, &size(48, 14));
    drop(small);
    // The one left has its size back, not the dashboard's.
    wait_until("the size of the terminal left", || {
        info_size(&s) == (Some(120), Some(34))
    });
    big.send(ClientType::Input as u8, b"\n");
    big.output_until(b"line 3: 34 120");
    drop(big);
    wait_until("the dashboard's size once no terminal is left", || {
        info_size(&s) == (Some(48), Some(14))
    });
}

/// Of two people's terminals, the one typed into takes its size back:
/// the program draws for the window someone works in, not the other,
/// which attached later or was resized since (as tmux's `window-size
/// latest`).
#[test]
fn the_terminal_typed_into_takes_its_size_back() {
    let sb = Sandbox::new();
    let s = size_teller(&sb, "typed");
    let size = |cols, rows| Size { cols, rows }.encode();
    let mut big = person(&s, (120, 34), 1);
    let mut small = person(&s, (60, 19), 2);
    big.send(ClientType::Input as u8, b"\n");
    big.output_until(b"line 3: 34 120");
    small.send(ClientType::Input as u8, b"\n");
    small.output_until(b"line 4: 19 60");
    // Nor a terminal's answer to a query (it begins with ESC): each
    // attached terminal answers, and the last would take the size.
    big.send(ClientType::Input as u8, b"\x1b[24;1R");
    // Answered after the input is taken: the size then.
    assert_eq!(size_asked(&mut big), (Some(60), Some(19)));
    small.send(ClientType::Input as u8, b"\n");
    small.output_until(b"line 5: 19 60");
    // Not a client that is no terminal (a dashboard typing into its
    // pane): its size stays held.
    let mut dashboard = s.raw();
    dashboard.send(ClientType::Subscribe as u8, &[]);
    dashboard.send(ClientType::Resize as u8, &size(48, 14));
    dashboard.send(ClientType::Input as u8, b"\n");
    dashboard.output_until(b"line 6: 19 60");
}

/// As [`size_teller`], on the alternate screen, as a full-screen program.
fn full_screen_size_teller(sb: &Sandbox, id: &str) -> common::Session {
    sb.start(
        id,
        &["--cols", "80", "--rows", "24"],
        &[
            "sh",
            "-c",
            "printf '\\033[?1049h'; n=0; while read x; do n=$((n+1)); echo \"line $n: $(stty size)\"; done",
        ],
    )
}

/// A terminal smaller than the size another set is not drawn the screen
/// at it: its rows would wrap and scroll there.
#[test]
fn a_smaller_terminal_is_not_drawn_a_larger_screen() {
    let sb = Sandbox::new();
    let s = full_screen_size_teller(&sb, "small");
    let size = |cols, rows| Size { cols, rows }.encode();
    let mut tiny = s.raw();
    tiny.send(ClientType::Resize as u8, &size(40, 10));
    tiny.send(ClientType::Subscribe as u8, &[protocol::SUBSCRIBE_TERMINAL]);
    tiny.send(ClientType::Input as u8, b"\n");
    tiny.output_until(b"line 1: 10 40");
    let mut big = s.raw();
    big.send(ClientType::Resize as u8, &size(120, 34));
    big.send(ClientType::Subscribe as u8, &[protocol::SUBSCRIBE_TERMINAL]);
    big.output_until(b"line 1: 10 40");
    big.send(ClientType::Input as u8, b"\n");
    let next = tiny.output_until(b"line 2: 34 120");
    assert!(
        !String::from_utf8_lossy(&next).contains("line 1"),
        "{next:?}"
    );
}

/// When the session's size changes under a person's terminal because of
/// another's (a smaller one attached, then left), that terminal is sent
/// the screen drawn again at the size it takes, if the program is
/// full-screen: it draws again only its own rows, and the rest of a
/// larger window kept what it drew before. The terminal that made the
/// change is not, nor anyone on the main screen, whose rows the emulator
/// cut at the smaller width.
#[test]
fn a_terminal_whose_size_another_changed_is_drawn_the_screen_again() {
    let sb = Sandbox::new();
    let s = full_screen_size_teller(&sb, "redrawn");
    let size = |cols, rows| Size { cols, rows }.encode();
    let mut big = s.raw();
    big.send(ClientType::Resize as u8, &size(120, 34));
    big.send(ClientType::Subscribe as u8, &[protocol::SUBSCRIBE_TERMINAL]);
    big.send(ClientType::Input as u8, b"\n");
    big.output_until(b"line 1: 34 120");
    let mut small = s.raw();
    small.send(ClientType::Resize as u8, &size(60, 19));
    small.send(ClientType::Subscribe as u8, &[protocol::SUBSCRIBE_TERMINAL]);
    // The big one is drawn the screen at 60x19 as the small one attaches,
    // its scroll region reset first (one the program set for the other
    // size would hold its redraw in that many rows).
    let drawn = big.output_until(b"line 1: 34 120");
    assert!(
        drawn.starts_with(b"\x1b[r"),
        "{:?}",
        String::from_utf8_lossy(&drawn)
    );
    small.send(ClientType::Input as u8, b"\n");
    big.output_until(b"line 2: 19 60");
    small.output_until(b"line 2: 19 60");
    drop(small);
    // Nothing typed: the screen again, lines 1 and 2, at 120x34.
    let drawn = big.output_until(b"line 2: 19 60");
    let text = String::from_utf8_lossy(&drawn);
    assert!(text.contains("line 1: 34 120"), "{text:?}");
    wait_until("the size of the terminal left", || {
        info_size(&s) == (Some(120), Some(34))
    });
    // The one that changed it is not drawn again: its next output is the
    // program's.
    let mut other = s.raw();
    other.send(ClientType::Resize as u8, &size(100, 30));
    other.send(ClientType::Subscribe as u8, &[protocol::SUBSCRIBE_TERMINAL]);
    other.output_until(b"line 2: 19 60");
    big.output_until(b"line 2: 19 60");
    other.send(ClientType::Resize as u8, &size(90, 28));
    big.output_until(b"line 2: 19 60");
    other.send(ClientType::Input as u8, b"\n");
    let next = other.output_until(b"line 3: 28 90");
    assert!(
        !String::from_utf8_lossy(&next).contains("line 1"),
        "{next:?}"
    );
}

/// On the main screen the terminal left keeps what it shows: the
/// emulator cut its rows at the smaller width, and drawing its screen
/// again would cut them in the larger window too.
#[test]
fn a_terminal_on_the_main_screen_is_not_drawn_again() {
    let sb = Sandbox::new();
    let s = size_teller(&sb, "kept");
    let size = |cols, rows| Size { cols, rows }.encode();
    let mut big = s.raw();
    big.send(ClientType::Resize as u8, &size(120, 34));
    big.send(ClientType::Subscribe as u8, &[protocol::SUBSCRIBE_TERMINAL]);
    big.send(ClientType::Input as u8, b"\n");
    big.output_until(b"line 1: 34 120");
    let mut small = s.raw();
    small.send(ClientType::Resize as u8, &size(60, 19));
    small.send(ClientType::Subscribe as u8, &[protocol::SUBSCRIBE_TERMINAL]);
    small.send(ClientType::Input as u8, b"\n");
    small.output_until(b"line 2: 19 60");
    drop(small);
    wait_until("the size of the terminal left", || {
        info_size(&s) == (Some(120), Some(34))
    });
    big.send(ClientType::Input as u8, b"\n");
    let next = big.output_until(b"line 3: 34 120");
    assert!(
        !String::from_utf8_lossy(&next).contains("line 1"),
        "{next:?}"
    );
}

/// A terminal whose input has ended (a half-close: it may still read, as
/// the far end of a bridge whose client went) can neither type nor
/// resize, so it holds the size no longer: what another client asked for
/// applies then, not when the connection finally closes.
#[test]
fn a_terminal_whose_input_ended_no_longer_holds_the_size() {
    let sb = Sandbox::new();
    let s = sb.start(
        "half",
        &["--cols", "80", "--rows", "24"],
        &[
            "sh",
            "-c",
            "while read x; do echo \"size $(stty size)\"; done",
        ],
    );
    let size = |cols, rows| Size { cols, rows }.encode();
    let mut person = s.raw();
    person.send(ClientType::Subscribe as u8, &[protocol::SUBSCRIBE_TERMINAL]);
    person.send(ClientType::Resize as u8, &size(200, 50));
    person.send(ClientType::Input as u8, b"\n");
    person.output_until(b"size 50 200");
    let mut dashboard = s.raw();
    dashboard.send(ClientType::Subscribe as u8, &[]);
    dashboard.send(ClientType::Resize as u8, &size(48, 14));
    dashboard.send(ClientType::Input as u8, b"\n");
    dashboard.output_until(b"size 50 200");
    person
        .stream
        .shutdown(std::net::Shutdown::Write)
        .expect("half-close");
    wait_until("the held size to apply", || {
        info_size(&s) == (Some(48), Some(14))
    });
    dashboard.send(ClientType::Input as u8, b"\n");
    dashboard.output_until(b"size 14 48");
    // It still reads: the connection is open, only no longer a terminal.
    person.output_until(b"size 14 48");
}

/// A dashboard's layout change resizes idle sessions; their redraw is not
/// work, so the state `hm ls` shows stays idle (timing classifier).
#[test]
fn the_redraw_that_answers_a_resize_is_not_work() {
    let sb = Sandbox::new();
    let s = sb.start(
        "redraw",
        &["--classifier", "simple", "--idle-threshold-ms", "300"],
        &[
            "sh",
            "-c",
            "trap 'echo redrawn $(stty size)' WINCH; while :; do sleep 0.05; done",
        ],
    );
    let mut r = s.raw();
    wait_until("the session to be idle a while", || {
        r.status()
            .is_some_and(|st| st.state == 0x00 && st.idle_ms >= 400)
    });
    let before = r.status().expect("status");
    r.send(ClientType::Subscribe as u8, &[]);
    r.send(
        ClientType::Resize as u8,
        &Size { cols: 91, rows: 17 }.encode(),
    );
    r.output_until(b"redrawn 17 91");
    // Asked after the redraw arrived: still idle, and idle since before.
    let mut q = s.raw();
    let st = q.status().expect("status");
    assert_eq!(st.state, 0x00, "{st:?}");
    assert!(st.idle_ms >= before.idle_ms, "{st:?} after {before:?}");
}

#[test]
fn resize_reaches_the_child_clamped() {
    let sb = Sandbox::new();
    let s = sb.start(
        "rs",
        &["--cols", "100", "--rows", "30"],
        &["sh", "-c", "while read x; do stty size; done"],
    );
    let mut r = s.raw();
    r.send(ClientType::Subscribe as u8, &[]);
    r.send(
        ClientType::Resize as u8,
        &Size {
            cols: 132,
            rows: 43,
        }
        .encode(),
    );
    r.send(ClientType::Input as u8, b"\n");
    r.output_until(b"43 132");
    r.send(
        ClientType::Resize as u8,
        &Size {
            cols: 0,
            rows: 65535,
        }
        .encode(),
    );
    r.send(ClientType::Input as u8, b"\n");
    r.output_until(b"4096 1");
}

#[test]
fn a_late_subscriber_gets_scrollback_then_live_output_without_a_seam() {
    let sb = Sandbox::new();
    // Numbered lines keep coming; a subscriber joining in the middle must
    // see a contiguous run of numbers from where its replay starts.
    let s = sb.start(
        "seam",
        &["--scrollback-bytes", "4096"],
        &[
            "sh",
            "-c",
            "i=0; while [ $i -lt 20000 ]; do echo L$i; i=$((i+1)); done; sleep 30",
        ],
    );
    let mut r = s.raw();
    r.send(ClientType::Subscribe as u8, &[]);
    let out = r.output_until(b"L19999\r\n");
    let text = String::from_utf8_lossy(&out);
    let nums: Vec<u64> = text
        .split("\r\n")
        .filter_map(|l| l.strip_prefix('L')?.parse().ok())
        .collect();
    assert!(nums.len() > 10);
    // The first line may be cut by the byte-granular scrollback.
    for w in nums[1..].windows(2) {
        assert_eq!(w[1], w[0] + 1, "gap or duplicate at {}", w[0]);
    }
}

#[test]
fn the_last_bytes_before_a_fast_exit_arrive_before_exit() {
    let sb = Sandbox::new();
    for round in 0..20 {
        let id = format!("fast{round}");
        let mut s = sb.spawn(
            &id,
            &[],
            &["sh", "-c", "read x; printf 'END-MARKER-%s' \"$x\"; exit 7"],
        );
        let sock = sb.sock(&id);
        wait_until("socket", || Raw::connect(&sock).is_ok());
        let mut r = s.raw();
        r.send(ClientType::Subscribe as u8, &[]);
        r.send(ClientType::Input as u8, format!("{round}\n").as_bytes());
        let (out, code) = r.collect_until_exit();
        assert_eq!(code, Some(7));
        let text = String::from_utf8_lossy(&out);
        assert!(text.ends_with(&format!("END-MARKER-{round}")), "{text:?}");
        assert_eq!(s.wait_exit(), 7);
    }
}

#[test]
fn every_subscriber_gets_every_byte_of_a_fast_stream() {
    let sb = Sandbox::new();
    // 8 MiB as fast as the child can write it, to three readers at once.
    let s = sb.start(
        "flood",
        &[],
        &[
            "sh",
            "-c",
            "read x; head -c 8388608 /dev/zero | tr '\\0' 'x'; printf DONE; exit 0",
        ],
    );
    let mut readers = Vec::new();
    for _ in 0..3 {
        let mut r = s.raw();
        r.send(ClientType::Subscribe as u8, &[]);
        readers.push(r);
    }
    readers[0].send(ClientType::Input as u8, b"\n");
    let handles: Vec<_> = readers
        .into_iter()
        .map(|mut r| std::thread::spawn(move || r.collect_until_exit()))
        .collect();
    for h in handles {
        let (out, code) = h.join().expect("reader");
        assert_eq!(code, Some(0));
        let xs = out.iter().filter(|&&b| b == b'x').count();
        assert_eq!(xs, 8 << 20, "bytes lost or duplicated");
        assert!(out.ends_with(b"DONE"));
    }
}

/// Reads the STATUS answer a subscriber asked for (it may follow output).
fn lazy_status(r: &mut Raw) {
    r.send(ClientType::Status as u8, &[]);
    r.expect(ServerType::StatusResp as u8);
}

#[test]
fn a_client_that_never_reads_does_not_stall_the_others_forever() {
    let sb = Sandbox::new();
    let s = sb.start(
        "stall",
        &["--log-level", "debug"],
        &[
            "sh",
            "-c",
            "read x; head -c 16777216 /dev/zero | tr '\\0' 'y'; printf DONE; sleep 30",
        ],
    );
    let mut lazy = s.raw();
    lazy.send(ClientType::Subscribe as u8, &[]);
    let mut busy = s.raw();
    busy.send(ClientType::Subscribe as u8, &[]);
    // Both are subscribed once each has answered a STATUS.
    lazy_status(&mut lazy);
    busy.status();
    busy.send(ClientType::Input as u8, b"\n");
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| busy.output_until(b"DONE")))
        .unwrap_or_else(|_| {
            panic!(
                "{}",
                std::fs::read_to_string(sb.sock_dir.join("stall.log")).unwrap_or_default()
            )
        });
    assert_eq!(out.iter().filter(|&&b| b == b'y').count(), 16 << 20);
    // The lazy one was cut off, and is told so once it reads.
    let mut saw_error = false;
    while let Some(f) = lazy.frame() {
        if f.ty == ServerType::Error as u8 {
            assert_eq!(
                protocol::decode_error(&f.payload).0,
                ErrorCode::TooSlow as u16
            );
            saw_error = true;
        }
    }
    let log = std::fs::read_to_string(sb.sock_dir.join("stall.log")).unwrap_or_default();
    assert!(saw_error, "a cut-off subscriber must be told; log:\n{log}");
}

#[test]
fn input_reaches_a_slow_reader_completely_and_in_order() {
    let sb = Sandbox::new();
    // The child ignores its input for a while (the pty buffer fills up),
    // then counts everything it receives.
    let s = sb.start(
        "slowin",
        &[],
        &[
            "sh",
            "-c",
            "stty raw -echo; echo raw-now; sleep 1; head -c 262144 | md5sum; sleep 30",
        ],
    );
    let payload: Vec<u8> = (0..262_144u32).map(|i| b'a' + (i % 26) as u8).collect();
    let mut r = s.raw();
    r.send(ClientType::Subscribe as u8, &[]);
    // Input must not arrive while the terminal is still in canonical mode:
    // there a line longer than 4095 bytes is cut by the kernel, as it would
    // be for someone typing it, and the count would never complete.
    r.output_until(b"raw-now");
    for chunk in payload.chunks(1000) {
        r.send(ClientType::Input as u8, chunk);
    }
    let digest = {
        let out = std::process::Command::new("md5sum")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                c.stdin.take().expect("stdin").write_all(&payload)?;
                c.wait_with_output()
            })
            .expect("md5sum");
        String::from_utf8_lossy(&out.stdout)[..32].to_string()
    };
    r.output_until(digest.as_bytes());
}

#[test]
fn many_idle_connections_do_not_break_the_session() {
    let sb = Sandbox::new();
    let s = sb.start("many", &[], &["sleep", "30"]);
    let mut conns: Vec<UnixStream> = Vec::new();
    for _ in 0..300 {
        let mut c = UnixStream::connect(&s.sock).expect("connect");
        // Half a header, then silence.
        c.write_all(&[ClientType::Input as u8, 0]).expect("write");
        conns.push(c);
    }
    let mut r = s.raw();
    assert!(r.status().is_some_and(|st| st.alive));
    drop(conns);
    wait_until("connections to be released", || s.raw().status().is_some());
}

#[test]
fn kill_frame_with_grace_gets_exit_on_that_connection() {
    let sb = Sandbox::new();
    let mut s = sb.start("k", &[], &["sleep", "30"]);
    let mut r = s.raw();
    r.send(ClientType::Kill as u8, &1000u32.to_be_bytes());
    let f = r.expect(ServerType::Exit as u8);
    assert_eq!(protocol::decode_exit(&f.payload).ok(), Some(128 + 15));
    assert_eq!(s.wait_exit(), 143);
}

#[test]
fn scrollback_keeps_the_last_bytes_of_a_huge_chunk() {
    let sb = Sandbox::new();
    let s = sb.start(
        "tail",
        &["--scrollback-bytes", "100"],
        &[
            "sh",
            "-c",
            "head -c 5000 /dev/zero | tr '\\0' 'z'; printf TAIL-END; sleep 30",
        ],
    );
    let mut first = s.raw();
    first.send(ClientType::Subscribe as u8, &[]);
    first.output_until(b"TAIL-END");
    let mut late = s.raw();
    late.send(ClientType::Subscribe as u8, &[]);
    let out = late.output_until(b"TAIL-END");
    assert_eq!(
        out.len(),
        100,
        "the scrollback is exactly the last 100 bytes"
    );
}
