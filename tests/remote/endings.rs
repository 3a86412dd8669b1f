//! `hm attach HOST:ID` leaves nothing behind, however it ends: detached,
//! the session ended, the link dropped (silently: the remote sshd stops
//! answering), SIGTERM or SIGHUP of the attach (and even SIGKILL). After each, no local ssh
//! and no remote `hm proxy` is left, and the size the attach's terminal
//! held is released (another client's RESIZE applies at once). Also: an
//! ssh command that hangs is ended with the command that started it.

use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::{Sshd, descendants, hm, hm_in_terminal, proxies_of, start_remote, with_sshd};
use crate::common::{self, HM, Sandbox, stderr, wait_until};

/// How an attach ends.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ending {
    Detach,
    SessionEnds,
    LinkDrops,
    Signal(Signal),
}

/// The pids of the ssh processes (and the shell running the ssh command)
/// that use this test's ssh config: the local end of every bridge.
fn local_ssh(sshd: &Sshd) -> Vec<i32> {
    let mark = sshd.config.display().to_string();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            cmdline.contains(&mark).then_some(pid)
        })
        .collect()
}

/// `hm status ID --json` of the "remote" socket dir: the session's size.
fn remote_size(sb: &Sandbox, dir: &Path, id: &str) -> Option<(u64, u64)> {
    let out = sb
        .hm()
        .args(["status", id, "--json", "--socket-dir"])
        .arg(dir)
        .output()
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    Some((v["cols"].as_u64()?, v["rows"].as_u64()?))
}

/// Stops (SIGSTOP) the sshd processes serving connections, so the link
/// goes silent as a network that drops does; continued and killed when
/// dropped.
struct Frozen(Vec<i32>);

impl Drop for Frozen {
    fn drop(&mut self) {
        for &pid in &self.0 {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            let _ = kill(Pid::from_raw(pid), Signal::SIGCONT);
        }
    }
}

fn attach_and_end(how: Ending) {
    let (sb, remote_rt, remote_dir, _cleanup, sshd) = or_skip!(with_sshd());
    start_remote(
        &sb,
        &remote_dir,
        "sh1",
        &["bash", "--norc", "--noprofile", "-i"],
    );
    // Writes the config naming `box`; a command's own mount leaves
    // nothing either.
    let ls = hm(&sb, &sshd, &["ls", "--host", "box"]);
    assert!(ls.status.success(), "{}", stderr(&ls));
    wait_until("hm ls's ssh and proxy to be gone", || {
        local_ssh(&sshd).is_empty() && proxies_of(&remote_rt).is_empty()
    });

    let mut term = hm_in_terminal(&sb, &sshd, &["attach", "box:sh1"], (24, 80));
    term.send(b"echo far-$((6*7))\r");
    term.wait_for("the remote shell, answering", |t| t.contains("far-42"));
    // The bar names the session as it was given, host and all.
    term.wait_for("the bar naming box:sh1", |t| {
        t.last_row().starts_with(" hm · box:sh1 ")
    });
    assert!(!local_ssh(&sshd).is_empty(), "the attach runs ssh");
    assert_eq!(proxies_of(&remote_rt).len(), 1, "one remote proxy");
    // The attach's terminal holds the size: another client's RESIZE waits.
    let mut other = common::Raw::connect(&remote_dir.join("sh1.sock")).expect("the session");
    let attached = remote_size(&sb, &remote_dir, "sh1").expect("a size");
    assert_ne!(attached, (100, 30));

    let mut frozen = Frozen(Vec::new());
    match how {
        Ending::Detach => {
            term.send(b"\x1c");
            assert_eq!(term.wait_exit(), 0);
            assert!(
                term.contains("[detached from session box:sh1]"),
                "{:?}",
                term.lines()
            );
        }
        Ending::SessionEnds => {
            term.send(b"exit\r");
            term.wait_exit();
        }
        Ending::Signal(sig) => {
            term.signal(sig);
            assert_eq!(term.wait_exit(), 128 + sig as i32);
        }
        Ending::LinkDrops => {
            let proxies = proxies_of(&remote_rt);
            frozen.0 = descendants(sshd.child.id() as i32)
                .into_iter()
                .filter(|p| !proxies.contains(p))
                .collect();
            assert!(!frozen.0.is_empty(), "sshd serves the connection");
            for &pid in &frozen.0 {
                kill(Pid::from_raw(pid), Signal::SIGSTOP).expect("stop sshd");
            }
            // Nothing comes through any more; both ends notice the silence.
            let deadline = Instant::now() + Duration::from_secs(40);
            while term.try_exit().is_none() {
                assert!(Instant::now() < deadline, "the attach never ended");
                term.holds_within(Duration::from_millis(100), |_| false);
            }
            // It says why: the host, not the session, went.
            term.wait_for("why the attach ended", |t| {
                t.contains("box: the connection ended: no word for 15 s")
            });
        }
    }

    // Nothing is left: no ssh here, no proxy there.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (here, there) = (local_ssh(&sshd), proxies_of(&remote_rt));
        if here.is_empty() && there.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{how:?}: left running: ssh {here:?}, proxy {there:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    if how == Ending::SessionEnds {
        return;
    }
    // And the size is free: a RESIZE from a client that is not a terminal
    // applies.
    other.send(
        heimdall::protocol::ClientType::Resize as u8,
        &heimdall::protocol::Size {
            cols: 100,
            rows: 30,
        }
        .encode(),
    );
    wait_until("the size to be released", || {
        remote_size(&sb, &remote_dir, "sh1") == Some((100, 30))
    });
    drop(frozen);
}

#[test]
fn a_remote_attach_that_detaches_leaves_nothing() {
    attach_and_end(Ending::Detach);
}

#[test]
fn a_remote_attach_whose_session_ends_leaves_nothing() {
    attach_and_end(Ending::SessionEnds);
}

#[test]
fn a_remote_attach_whose_link_drops_leaves_nothing() {
    attach_and_end(Ending::LinkDrops);
}

#[test]
fn a_remote_attach_ended_by_sigterm_leaves_nothing() {
    attach_and_end(Ending::Signal(Signal::SIGTERM));
}

#[test]
fn a_remote_attach_ended_by_sighup_leaves_nothing() {
    attach_and_end(Ending::Signal(Signal::SIGHUP));
}

/// Killed outright, the attach cleans up nothing itself: ssh sees its
/// input end, so does the proxy, which ends, and ssh with it.
#[test]
fn a_remote_attach_killed_outright_leaves_nothing() {
    attach_and_end(Ending::Signal(Signal::SIGKILL));
}

/// An ssh command that never answers: `hm ls --host` gives up, and ends
/// it (a shell and the program it runs) before it returns.
#[test]
fn an_ssh_command_that_hangs_is_ended_with_the_command() {
    let sb = Sandbox::new();
    let marker = format!("7107.{}", std::process::id());
    let hang = sb.path().join("hang-ssh");
    std::fs::write(&hang, format!("#!/bin/sh\nsleep {marker}00\necho never\n")).expect("script");
    std::fs::set_permissions(&hang, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let started = Instant::now();
    let out = sb
        .hm()
        .args(["ls", "--host", "box"])
        .env("HM_SSH_COMMAND", &hang)
        .output()
        .expect("run hm");
    let took = started.elapsed();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("box: no answer from ssh within 20 s"),
        "{}",
        stderr(&out)
    );
    assert!(took < Duration::from_secs(30), "{took:?}");
    wait_until("the hanging ssh command to be ended", || {
        common::sleepers(&marker).is_empty()
    });
}

/// The dashboard's link ends the ssh it started when it is dropped, even
/// one still connecting.
#[test]
fn a_link_ends_its_ssh_when_dropped() {
    use heimdall::remote::{Host, Link};
    let sb = Sandbox::new();
    let marker = format!("7108.{}", std::process::id());
    let hang = sb.path().join("hang-ssh");
    std::fs::write(&hang, format!("#!/bin/sh\nsleep {marker}00\n")).expect("script");
    std::fs::set_permissions(&hang, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let host = Host {
        hm: HM.to_owned(),
        ..Host::parse("box").expect("host")
    };
    let link = Link::start(&host, &hang.display().to_string(), || {}).expect("a link");
    wait_until("the ssh command to run", || {
        !common::sleepers(&marker).is_empty()
    });
    drop(link);
    wait_until("the ssh command to be ended", || {
        common::sleepers(&marker).is_empty()
    });
}

/// The sockets `pid` holds open.
fn sockets(pid: i32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            std::fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:"))
        })
        .count()
}

/// Through the dashboard's link, which stays up, a client that attached
/// and went leaves nothing open on the other side: the proxy closes its
/// connection to the session entirely, and the size is free again.
#[test]
fn a_link_lets_go_of_a_client_that_left() {
    use heimdall::remote::{Host, Link, LinkState};
    let (sb, remote_rt, remote_dir, _cleanup, sshd) = or_skip!(with_sshd());
    start_remote(
        &sb,
        &remote_dir,
        "sh1",
        &["bash", "--norc", "--noprofile", "-i"],
    );
    let host = Host {
        hm: HM.to_owned(),
        ..Host::parse("box").expect("host")
    };
    let ssh = format!("ssh -F {}", sshd.config.display());
    let link = Link::start(&host, &ssh, || {}).expect("a link");
    wait_until("the host to be up", || {
        link.state() == LinkState::Up && link.dir().join("sh1.sock").exists()
    });
    let proxy = *proxies_of(&remote_rt).first().expect("the proxy");
    let before = sockets(proxy);

    let dir = link.dir().display().to_string();
    let args: Vec<std::ffi::OsString> = ["attach", "--socket-dir", &dir, "sh1"]
        .iter()
        .map(Into::into)
        .collect();
    let mut term = crate::common::terminal::Terminal::start(
        Path::new(HM),
        &args,
        &sb.terminal_env(&[]),
        sb.path(),
        (24, 80),
        "$ hm",
    );
    term.send(b"echo far-$((6*7))\r");
    term.wait_for("the remote shell, answering", |t| t.contains("far-42"));
    assert!(sockets(proxy) > before, "the proxy serves the attach");
    let mut other = common::Raw::connect(&remote_dir.join("sh1.sock")).expect("the session");
    term.send(b"\x1c");
    assert_eq!(term.wait_exit(), 0);

    wait_until("the proxy to close the connection", || {
        sockets(proxy) == before
    });
    assert_eq!(link.state(), LinkState::Up);
    assert_eq!(proxies_of(&remote_rt), [proxy]);
    other.send(
        heimdall::protocol::ClientType::Resize as u8,
        &heimdall::protocol::Size {
            cols: 100,
            rows: 30,
        }
        .encode(),
    );
    wait_until("the size to be released", || {
        remote_size(&sb, &remote_dir, "sh1") == Some((100, 30))
    });
}
