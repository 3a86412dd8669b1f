//! Keystroke echo latency: one byte in, the same byte back out, through
//! each path. The program is `cat` on a raw, non-echoing tty, so every
//! byte sent comes back once. Targets are interleaved key by key so the
//! machine's stalls and slow drifts hit all of them alike.

use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use heimdall::protocol::{self, ClientType, Piece, ServerType, Splitter};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use crate::peer::Peer;
use crate::peers::{self, Bench, DtachSession, HmSession, PtyProc, TmuxServer};
use crate::sink::EscFilter;
use crate::sys::{self, Usage};

/// A terminal client has settled once it has printed nothing for this
/// long (its first screen drawn), or after `SETTLE_MAX` at most.
const SETTLE_QUIET: Duration = Duration::from_millis(300);
const SETTLE_MAX: Duration = Duration::from_secs(3);

enum Path {
    Raw(PtyProc),
    /// A connection to the minimal relay.
    Relay(UnixStream),
    Hm(UnixStream, Splitter, u8),
    Pty(PtyProc, EscFilter),
}

pub struct Target {
    pub name: &'static str,
    path: Path,
    pub samples: Vec<f64>,
    pub lost: usize,
    /// The process that relays the keys (supervisor, relay, dtach master,
    /// tmux server), and what it spent while they were measured.
    server: Option<i32>,
    pub server_use: Usage,
    /// What the terminal client (`hm attach`, `dtach -a`, the tmux client)
    /// spent while they were measured.
    pub client_use: Usage,
}

impl Target {
    fn new(name: &'static str, path: Path, server: Option<i32>) -> Target {
        Target {
            name,
            path,
            samples: Vec::new(),
            lost: 0,
            server,
            server_use: Usage::default(),
            client_use: Usage::default(),
        }
    }

    /// A terminal client in a pty that shows the program's output between
    /// its own escapes, as `hm attach` does (its status bar is left out).
    pub fn attach(name: &'static str, client: PtyProc, server: Option<i32>) -> Target {
        Target::new(name, Path::Pty(client, EscFilter::new(true)), server)
    }

    /// The server's CPU (µs) and wake-ups per measured keystroke.
    pub fn per_key(&self) -> Option<(f64, f64)> {
        self.server.and(self.spent(&self.server_use))
    }

    /// The terminal client's CPU (µs) and wake-ups per measured keystroke.
    pub fn client_per_key(&self) -> Option<(f64, f64)> {
        self.client().and(self.spent(&self.client_use))
    }

    fn spent(&self, used: &Usage) -> Option<(f64, f64)> {
        let keys = (self.samples.len() + self.lost) as f64;
        (keys > 0.0).then(|| (used.cpu_ns as f64 / 1e3 / keys, used.ctxsw as f64 / keys))
    }

    /// The terminal client's process, for targets typed into through one.
    fn client(&self) -> Option<i32> {
        match &self.path {
            Path::Pty(p, _) => Some(p.pid),
            _ => None,
        }
    }
}

/// Everything that must stay alive while the targets are measured.
#[derive(Default)]
pub struct Held {
    pub hm: Vec<HmSession>,
    relay: Vec<PtyProc>,
    dtach: Vec<DtachSession>,
    tmux: Vec<TmuxServer>,
}

impl Target {
    fn fd(&self) -> BorrowedFd<'_> {
        match &self.path {
            Path::Raw(p) | Path::Pty(p, _) => p.fd(),
            Path::Hm(s, ..) | Path::Relay(s) => s.as_fd(),
        }
    }

    /// Sends `b` and waits for it to come back; the time it took.
    fn sample(&mut self, b: u8, buf: &mut [u8]) -> Option<Duration> {
        let t0 = Instant::now();
        match &self.path {
            Path::Hm(s, ..) => {
                peers::write_all(s.as_fd(), &protocol::frame(ClientType::Input as u8, &[b]))
            }
            _ => peers::write_all(self.fd(), &[b]),
        }
        let deadline = t0 + Duration::from_secs(1);
        loop {
            let n = match nix::unistd::read(self.fd(), buf) {
                Ok(0) => return None,
                Ok(n) => n,
                Err(nix::Error::EAGAIN) | Err(nix::Error::EINTR) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return None;
                    }
                    let mut fds = [PollFd::new(self.fd(), PollFlags::POLLIN)];
                    let ms = PollTimeout::try_from(left.as_millis().max(1) as u64)
                        .unwrap_or(PollTimeout::MAX);
                    let _ = poll(&mut fds, ms);
                    continue;
                }
                Err(_) => return None,
            };
            let t = Instant::now();
            if self.contains(&buf[..n], b) {
                return Some(t.duration_since(t0));
            }
        }
    }

    fn contains(&mut self, data: &[u8], b: u8) -> bool {
        match &mut self.path {
            Path::Raw(_) | Path::Relay(_) => data.contains(&b),
            Path::Pty(_, f) => {
                let mut hit = false;
                f.filter(data, |d| hit |= d.contains(&b));
                hit
            }
            Path::Hm(_, split, cur) => {
                let mut hit = false;
                let mut rest = data;
                while let Ok((used, piece)) = split.next(rest) {
                    rest = &rest[used..];
                    match piece {
                        Some(Piece::Start { ty, .. }) => *cur = ty,
                        Some(Piece::Data(d)) if *cur == ServerType::Output as u8 => {
                            hit |= d.contains(&b)
                        }
                        Some(_) => {}
                        None => break,
                    }
                }
                hit
            }
        }
    }
}

/// Starts one echo target of each kind that is available.
pub fn targets(b: &Bench, held: &mut Held) -> Vec<Target> {
    let argv = ["sh", "-c", peers::ECHO_SCRIPT];
    let mut out = Vec::new();
    let raw = b.pty(&argv);
    // Give `stty raw -echo` time to run; the warm-up absorbs the rest.
    std::thread::sleep(Duration::from_millis(200));
    raw.settle(SETTLE_QUIET, SETTLE_MAX);
    out.push(Target::new("raw", Path::Raw(raw), None));

    let (relay, conn) = b.relay(&argv);
    out.push(Target::new("relay", Path::Relay(conn), Some(relay.pid)));
    held.relay.push(relay);

    for (name, tokio) in [("relay-attach", false), ("relay-attach-tokio", true)] {
        let (relay, client) = b.relay_attach(&argv, tokio);
        client.settle(SETTLE_QUIET, SETTLE_MAX);
        let server = Some(relay.pid);
        let path = Path::Pty(client, EscFilter::new(false));
        out.push(Target::new(name, path, server));
        held.relay.push(relay);
    }

    hm_targets(b, ["hm", "hm-attach"], &argv, &mut out, held);
    if let Some(base) = b.base_bench() {
        hm_targets(&base, ["hm-base", "hm-attach-base"], &argv, &mut out, held);
    }

    if b.dtach {
        let s = b.dtach_session(&argv);
        let sock = s.sock.display().to_string();
        let c = b.pty(&["dtach", "-a", &sock, "-r", "none", "-E", "-z"]);
        c.settle(SETTLE_QUIET, SETTLE_MAX);
        out.push(Target::new(
            "dtach",
            Path::Pty(c, EscFilter::new(false)),
            Some(s.pid()),
        ));
        held.dtach.push(s);
    }
    if b.tmux {
        let t = b.tmux_server();
        let name = b.name("e");
        t.new_session(&name, &argv);
        let argv_t = t.attach_argv(&name);
        let argv_t: Vec<&str> = argv_t.iter().map(String::as_str).collect();
        let c = b.pty(&argv_t);
        c.settle(SETTLE_QUIET, SETTLE_MAX);
        out.push(Target::new(
            "tmux",
            Path::Pty(c, EscFilter::new(false)),
            t.pid(),
        ));
        held.tmux.push(t);
    }
    out
}

/// `b`'s hm running `argv`, typed into through the protocol and through
/// `hm attach`.
fn hm_targets(
    b: &Bench,
    names: [&'static str; 2],
    argv: &[&str],
    out: &mut Vec<Target>,
    held: &mut Held,
) {
    let s = b.hm_session(argv);
    let mut p = Peer::connect(&s.sock).expect("connect");
    p.subscribe(&[]).expect("subscribe");
    out.push(Target::new(
        names[0],
        Path::Hm(p.nonblocking(), Splitter::default(), 0),
        Some(s.pid()),
    ));
    held.hm.push(s);

    let s = b.hm_session(argv);
    let argv_a = s.attach_argv(&b.hm);
    let argv_a: Vec<&str> = argv_a.iter().map(String::as_str).collect();
    let a = b.pty(&argv_a);
    a.settle(SETTLE_QUIET, SETTLE_MAX);
    out.push(Target::attach(names[1], a, Some(s.pid())));
    held.hm.push(s);
}

/// Warms every target up, then takes `samples` each, one keystroke to
/// each target in turn (the order rotating every turn), `gap` divided
/// among them, so that each target's keys are `gap` apart plus the
/// others' echoes (people do not type back to back). Key by key, a stall
/// of the machine (they come as runs of 10 to 40 slow keys) lands on every
/// target alike; in rounds of hundreds of keys it landed on whichever
/// target had the round, and the p99s compared the stalls, not the
/// targets.
pub fn measure(targets: &mut [Target], samples: usize, gap: Duration) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut byte = 0u8;
    let mut next = || {
        byte = (byte + 1) % 26;
        b'a' + byte
    };
    for t in targets.iter_mut() {
        for _ in 0..50 {
            let _ = t.sample(next(), &mut buf);
            std::thread::sleep(gap);
        }
        // Drop whatever a lost warm-up byte left behind.
        peers::settle(
            t.fd(),
            Duration::from_millis(50),
            Duration::from_millis(500),
        );
    }
    // Each process is busy only with its own target's keys, so its CPU
    // over the whole measurement is what those keys cost.
    let before: Vec<_> = targets
        .iter()
        .map(|t| (t.server.and_then(Usage::of), t.client().and_then(Usage::of)))
        .collect();
    let n = targets.len();
    let step = gap / u32::try_from(n.max(1)).unwrap_or(u32::MAX);
    for turn in 0..samples {
        for k in 0..n {
            let t = &mut targets[(k + turn) % n];
            match t.sample(next(), &mut buf) {
                Some(d) => t.samples.push(d.as_secs_f64() * 1e6),
                None => {
                    t.lost += 1;
                    peers::settle(t.fd(), Duration::from_millis(50), Duration::from_secs(1));
                }
            }
            std::thread::sleep(step);
        }
    }
    for (t, (server, client)) in targets.iter_mut().zip(before) {
        if let Some((after, before)) = t.server.and_then(Usage::of).zip(server) {
            t.server_use.add(after.since(before));
        }
        if let Some((after, before)) = t.client().and_then(Usage::of).zip(client) {
            t.client_use.add(after.since(before));
        }
    }
}

/// Threads of each hm supervisor after it has handled keystrokes.
pub fn hm_threads(held: &Held) -> Option<u64> {
    held.hm.iter().filter_map(|s| sys::threads(s.pid())).max()
}
