//! Hostile values given to `hm` itself, each through the real binary: a
//! rules regex too big to compile, a supervisor that never answers, a
//! config value of megabytes. Each is refused or given up on the way the
//! docs say, in one short line.

use crate::common;

use std::time::{Duration, Instant};

use common::{Sandbox, stderr};

#[test]
fn a_rules_regex_too_big_to_compile_is_refused_at_start_with_its_line() {
    let sb = Sandbox::new();
    let dir = sb.path().join("config/heimdall/rules");
    std::fs::create_dir_all(&dir).expect("rules dir");
    std::fs::write(
        dir.join("big.toml"),
        "agent = \"big\"\n\n[[rule]]\nname = \"huge\"\nstate = \"waiting\"\nall = ['a{1000}{1000}']\n",
    )
    .expect("rules");
    let out = sb.cmd(&[
        "run",
        "--detach",
        "--id",
        "r",
        "--classifier",
        "agent",
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("big.toml:6: bad regex: too big to compile"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!sb.sock("r").exists(), "nothing was started");
    // `hm classify` reads the same rules, and refuses the same way.
    std::fs::write(sb.path().join("frame.txt"), "aaaa\n").expect("frame");
    let out = sb
        .hm()
        .args(["classify", "--path", "frame.txt"])
        .output()
        .expect("run hm");
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("big.toml:6: bad regex: "),
        "{}",
        stderr(&out)
    );
}

#[test]
fn status_gives_up_on_a_stopped_supervisor_in_two_seconds() {
    let sb = Sandbox::new();
    let s = sb.start("frozen", &[], &["sleep", "30"]);
    let sup = nix::unistd::Pid::from_raw(s.child.id() as i32);
    nix::sys::signal::kill(sup, nix::sys::signal::Signal::SIGSTOP).expect("stop");
    for json in [false, true] {
        let args: &[&str] = if json {
            &["status", "frozen", "--json"]
        } else {
            &["status", "frozen"]
        };
        let began = Instant::now();
        let out = sb.cmd(args);
        let took = began.elapsed();
        assert!(!out.status.success());
        assert!(
            stderr(&out).contains("is not responding"),
            "{}",
            stderr(&out)
        );
        // The docs' 2 s, with room for a loaded machine: not twice that.
        assert!(
            took >= Duration::from_secs(2) && took < Duration::from_millis(3_500),
            "gave up after {took:?}"
        );
    }
    nix::sys::signal::kill(sup, nix::sys::signal::Signal::SIGCONT).expect("continue");
}

#[test]
fn a_megabytes_long_value_is_refused_in_a_short_line() {
    let sb = Sandbox::new();
    let long = format!("/tmp/{}", "a".repeat(10 << 20));
    std::fs::write(
        sb.path().join("heimdall.toml"),
        format!("socket_dir = \"{long}\"\n"),
    )
    .expect("config");
    for args in [&["ls"][..], &["run", "--detach", "--", "true"]] {
        // Without --socket-dir: the config's value is the one in force.
        let out = sb.hm().args(args).output().expect("run hm");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = stderr(&out);
        assert!(err.len() < 400, "{args:?}: {} bytes", err.len());
        assert!(
            err.starts_with(&format!(
                "hm: {}/heimdall.toml:1: invalid value for 'socket_dir': the path is",
                sb.path().display()
            )),
            "{err}"
        );
    }
    // Given on the command line, where no file can refuse it, the message
    // that names it is cut, its start and its end kept.
    let long = format!("/tmp/{}", "b".repeat(100_000));
    std::fs::remove_file(sb.path().join("heimdall.toml")).expect("rm");
    let out = sb
        .hm()
        .args(["run", "--detach", "--socket-dir", &long, "--", "true"])
        .output()
        .expect("run hm");
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.len() < 800, "{} bytes", err.len());
    assert!(err.contains(" … ") && err.contains("bytes"), "{err}");
}
