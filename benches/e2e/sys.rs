//! What the harness reads from `/proc`, and how it makes sure that nothing
//! it started outlives it.
//!
//! Accounting is per process, summed over its threads: CPU from
//! `task/*/schedstat` (nanoseconds), the part of it spent in the process's
//! own code from `task/*/stat` (`utime`, in clock ticks: the rest is the
//! kernel's, the pty's and the socket's, which every relay pays), wake-ups from `task/*/status`
//! (voluntary context switches: each is a sleep that something ended;
//! involuntary ones are preemptions of a running thread, which count
//! machine load rather than wake-ups, and are left out), memory from
//! `smaps_rollup`. Cleanup is by pid only: the harness is a child
//! subreaper, so daemons it starts (the tmux server) stay its descendants,
//! and on exit every descendant is killed by pid and reaped.

use std::fs;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::Pid;

/// CPU time and context switches of one process, all threads.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    pub cpu_ns: u64,
    /// The part of `cpu_ns` in user space, to the clock tick.
    pub user_ns: u64,
    pub ctxsw: u64,
}

impl Usage {
    pub fn of(pid: i32) -> Option<Usage> {
        let mut u = Usage::default();
        let tasks = fs::read_dir(format!("/proc/{pid}/task")).ok()?;
        for t in tasks.flatten() {
            let p = t.path();
            if let Ok(s) = fs::read_to_string(p.join("schedstat")) {
                u.cpu_ns += s
                    .split_whitespace()
                    .next()
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0);
            }
            if let Ok(s) = fs::read_to_string(p.join("stat")) {
                u.user_ns += utime_ticks(&s).unwrap_or(0) * tick_ns();
            }
            if let Ok(s) = fs::read_to_string(p.join("status")) {
                u.ctxsw += field(&s, "voluntary_ctxt_switches:").unwrap_or(0);
            }
        }
        Some(u)
    }

    /// Adds `other`'s CPU and wake-ups to these.
    pub fn add(&mut self, other: Usage) {
        self.cpu_ns += other.cpu_ns;
        self.user_ns += other.user_ns;
        self.ctxsw += other.ctxsw;
    }

    pub fn since(self, before: Usage) -> Usage {
        Usage {
            cpu_ns: self.cpu_ns.saturating_sub(before.cpu_ns),
            user_ns: self.user_ns.saturating_sub(before.user_ns),
            ctxsw: self.ctxsw.saturating_sub(before.ctxsw),
        }
    }
}

/// `utime` of a `stat` line: the 14th field, the 12th after the command,
/// whose parentheses may hold anything.
fn utime_ticks(stat: &str) -> Option<u64> {
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(11)?.parse().ok()
}

/// Nanoseconds in a clock tick, the unit of `utime`.
fn tick_ns() -> u64 {
    static TICK: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TICK.get_or_init(|| {
        let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
            .ok()
            .flatten()
            .filter(|&hz| hz > 0)
            .unwrap_or(100);
        1_000_000_000 / hz as u64
    })
}

fn field(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// Threads of a process.
pub fn threads(pid: i32) -> Option<u64> {
    field(
        &fs::read_to_string(format!("/proc/{pid}/status")).ok()?,
        "Threads:",
    )
}

/// Open file descriptors of a process.
pub fn fds(pid: i32) -> Option<usize> {
    Some(fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count())
}

/// Peak resident set size (KiB).
pub fn hwm_kib(pid: i32) -> Option<u64> {
    field(
        &fs::read_to_string(format!("/proc/{pid}/status")).ok()?,
        "VmHWM:",
    )
}

/// Memory of one process (KiB).
#[derive(Debug, Clone, Copy, Default)]
pub struct Mem {
    pub rss: u64,
    pub pss: u64,
    pub private: u64,
}

impl Mem {
    pub fn of(pid: i32) -> Option<Mem> {
        let s = fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
        Some(Mem {
            rss: field(&s, "Rss:")?,
            pss: field(&s, "Pss:")?,
            private: field(&s, "Private_Clean:")? + field(&s, "Private_Dirty:")?,
        })
    }
}

/// `(pid, ppid, utime+stime+cutime+cstime in ticks)` of every process.
fn processes() -> Vec<(i32, i32, u64)> {
    let mut out = Vec::new();
    let Ok(dir) = fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // The command name may contain spaces and parentheses; fields
        // start after the last ')'.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        let ppid = f.get(1).and_then(|v| v.parse().ok()).unwrap_or(0);
        // Fields 14..=17 of stat are at 11..=14 after the name and state.
        out.push((pid, ppid, num(11) + num(12) + num(13) + num(14)));
    }
    out
}

/// Every descendant of this process, deepest last.
pub fn descendants() -> Vec<i32> {
    descendants_of(std::process::id() as i32)
}

/// Every descendant of `root`, deepest last.
pub fn descendants_of(root: i32) -> Vec<i32> {
    let procs = processes();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(procs.iter().filter(|p| p.1 == parent).map(|p| p.0));
        i += 1;
    }
    found.remove(0);
    found
}

/// CPU used by the whole machine and by this harness's process tree, to
/// tell how much of the machine other people's work took during a phase.
#[derive(Debug, Clone, Copy)]
pub struct Load {
    at: Instant,
    busy: u64,
    own: u64,
}

impl Load {
    pub fn now() -> Load {
        let busy = fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|s| {
                let l = s.lines().next()?.to_string();
                let v: Vec<u64> = l
                    .split_whitespace()
                    .skip(1)
                    .filter_map(|x| x.parse().ok())
                    .collect();
                // idle and iowait are not busy; guest time is already in user.
                Some(v.iter().take(8).sum::<u64>() - v.get(3)? - v.get(4)?)
            })
            .unwrap_or(0);
        let me = std::process::id() as i32;
        let procs = processes();
        let mut tree = vec![me];
        let mut i = 0;
        while i < tree.len() {
            let parent = tree[i];
            tree.extend(procs.iter().filter(|p| p.1 == parent).map(|p| p.0));
            i += 1;
        }
        let own = procs
            .iter()
            .filter(|p| tree.contains(&p.0))
            .map(|p| p.2)
            .sum();
        Load {
            at: Instant::now(),
            busy,
            own,
        }
    }

    /// Share of all CPUs (0..1) used by processes outside our tree since
    /// `self`.
    pub fn foreign_since(&self) -> f64 {
        let now = Load::now();
        let ticks = ticks_per_sec() * now.at.duration_since(self.at).as_secs_f64();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let foreign =
            now.busy.saturating_sub(self.busy) as f64 - now.own.saturating_sub(self.own) as f64;
        (foreign / (ticks * cpus)).max(0.0)
    }
}

fn ticks_per_sec() -> f64 {
    // USER_HZ is 100 on every Linux ABI the harness runs on.
    100.0
}

/// Pids (and process groups) to kill when the harness exits however it
/// exits; guards take themselves off when they clean up.
static STARTED: Mutex<Vec<(i32, bool)>> = Mutex::new(Vec::new());

pub fn track(pid: i32, group: bool) {
    if let Ok(mut s) = STARTED.lock() {
        s.push((pid, group));
    }
}

pub fn untrack(pid: i32) {
    if let Ok(mut s) = STARTED.lock() {
        s.retain(|p| p.0 != pid);
    }
}

/// Sends SIGKILL to a process (or its group) and reaps it if it is ours.
pub fn kill_and_reap(pid: i32, group: bool) {
    if pid <= 1 {
        return;
    }
    if group {
        let _ = kill(Pid::from_raw(-pid), Signal::SIGKILL);
    }
    let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        match waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG)) {
            Ok(nix::sys::wait::WaitStatus::StillAlive) => {
                std::thread::sleep(Duration::from_millis(1));
            }
            _ => break,
        }
    }
    untrack(pid);
}

/// Kills everything this harness started: tracked groups first, then every
/// remaining descendant, by pid; then reaps them.
pub fn kill_everything() {
    let tracked: Vec<(i32, bool)> = STARTED.lock().map(|s| s.clone()).unwrap_or_default();
    for (pid, group) in tracked {
        if group && pid > 1 {
            let _ = kill(Pid::from_raw(-pid), Signal::SIGKILL);
        }
    }
    for _ in 0..3 {
        let left = descendants();
        if left.is_empty() {
            break;
        }
        for pid in left {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(50));
        while let Ok(s) = waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
            if s == nix::sys::wait::WaitStatus::StillAlive {
                break;
            }
        }
    }
}

/// Becomes a subreaper and turns SIGINT, SIGTERM and SIGHUP into a clean
/// exit: everything started is killed and `sandbox` removed. Must be called
/// before anything is started.
///
/// The signals are caught by handlers (tokio's), not blocked and waited
/// for: a blocked mask is inherited by every child (std's `Command` does
/// not reset it, nor does `hm`'s own pty spawn), and supervisors that
/// never see SIGTERM each cost their guard its 500 ms grace before the
/// SIGKILL, eight minutes for a thousand. A handler is reset by exec.
pub fn install_cleanup(sandbox: PathBuf) {
    use tokio::signal::unix::{SignalKind, signal};
    let _ = nix::sys::prctl::set_child_subreaper(true);
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
    else {
        return;
    };
    // Registered here, before anything is started, so that no signal is
    // missed; waited for on a thread of its own.
    let signals = {
        let _in = rt.enter();
        [
            (SignalKind::interrupt(), "SIGINT"),
            (SignalKind::terminate(), "SIGTERM"),
            (SignalKind::hangup(), "SIGHUP"),
        ]
        .map(|(k, name)| signal(k).map(|s| (s, name)))
    };
    let Ok(mut signals) = signals.into_iter().collect::<Result<Vec<_>, _>>() else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("cleanup".into())
        .spawn(move || {
            let name = rt.block_on(async {
                let [a, b, c] = &mut signals[..] else {
                    return "a signal";
                };
                tokio::select! {
                    _ = a.0.recv() => a.1,
                    _ = b.0.recv() => b.1,
                    _ = c.0.recv() => c.1,
                }
            });
            eprintln!("\ne2e: {name}: killing everything started, then exiting");
            kill_everything();
            let _ = fs::remove_dir_all(&sandbox);
            std::process::exit(130);
        });
}

/// Machine facts for the report header.
pub fn machine() -> Vec<(String, String)> {
    let cpu = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_default();
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mem = fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| field(&s, "MemTotal:"))
        .map_or(String::new(), |k| format!("{} MiB", k / 1024));
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let out = |cmd: &str, args: &[&str]| {
        std::process::Command::new(cmd)
            .args(args)
            .output()
            .ok()
            .map(|o| {
                let s = String::from_utf8_lossy(&o.stdout).to_string()
                    + &String::from_utf8_lossy(&o.stderr);
                s.lines().next().unwrap_or("").trim().to_string()
            })
            .unwrap_or_default()
    };
    vec![
        ("date".into(), out("date", &["-u", "+%Y-%m-%d %H:%M UTC"])),
        ("cpus (nproc)".into(), cpus.to_string()),
        ("cpu".into(), cpu),
        ("memory".into(), mem),
        ("kernel".into(), kernel.trim().to_string()),
        (
            "hm commit".into(),
            out("git", &["describe", "--always", "--dirty"]),
        ),
        ("tmux".into(), out("tmux", &["-V"])),
        ("dtach".into(), out("dtach", &["--help"])),
    ]
}
