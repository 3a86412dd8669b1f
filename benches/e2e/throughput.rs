//! Throughput to one client and fan-out to many: a child writes a payload
//! as fast as the pty takes it, and every client must receive all of it.
//!
//! The child waits at a fifo gate until every client is attached and quiet;
//! the clock starts when the gate opens and stops when the last client has
//! the end marker (or, for a lossy peer, when its bytes stop coming).

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use heimdall::protocol::Size;
use nix::fcntl::{FcntlArg, OFlag, fcntl};

use crate::peer::Peer;
use crate::peers::{self, Bench, PtyProc};
use crate::sink::{Expect, FrameSink, MARKER, PtySink, Source, drain};
use crate::sys::{self, Usage};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The pty drained by coreutils `head -c`: the limit of this machine.
    RawNative,
    /// The pty drained by the harness's own reader.
    Raw,
    /// The minimal relay's one client (see `relay.rs`).
    Relay,
    /// Protocol subscribers.
    Hm,
    /// Protocol subscribers of a session classified by `agent`.
    HmAgent,
    /// `hm attach` in a pty.
    HmAttach,
    /// The minimal relay behind its minimal terminal client (see
    /// `relay.rs`), in a pty: the least any attach can do, in `hm
    /// attach`'s place.
    RelayAttach,
    /// `hm attach HOST:ID` in a pty, to a session on another machine
    /// reached over ssh (see [`Via`]).
    HmAttachSsh,
    Dtach,
    Tmux,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::RawNative => "raw-native",
            Kind::Raw => "raw",
            Kind::Relay => "relay",
            Kind::Hm => "hm",
            Kind::HmAgent => "hm-agent",
            Kind::HmAttach => "hm-attach",
            Kind::RelayAttach => "relay-attach",
            Kind::HmAttachSsh => "hm-attach-ssh",
            Kind::Dtach => "dtach",
            Kind::Tmux => "tmux",
        }
    }
}

/// One run of one target.
#[derive(Debug, Clone)]
pub struct Run {
    pub secs: f64,
    pub expected: u64,
    /// Program bytes each client received, `None` where not countable.
    pub delivered: Vec<Option<u64>>,
    pub exact: bool,
    pub server: Option<Usage>,
    pub clients_cpu: Option<Usage>,
    pub hwm_kib: Option<u64>,
    pub server_threads: Option<u64>,
    /// OUTPUT frames received, summed over protocol subscribers.
    pub frames: u64,
}

impl Run {
    pub fn mib(&self) -> f64 {
        self.expected as f64 / (1024.0 * 1024.0)
    }

    /// Delivered MiB/s summed over clients (time to the final screen for a
    /// client that re-renders).
    pub fn goodput(&self) -> f64 {
        let bytes: u64 = self
            .delivered
            .iter()
            .map(|d| d.unwrap_or(self.expected).min(self.expected))
            .sum();
        bytes as f64 / (1024.0 * 1024.0) / self.secs
    }

    /// The worst client's share of the stream, if countable.
    pub fn worst_delivered(&self) -> Option<f64> {
        self.delivered
            .iter()
            .map(|d| d.map(|b| b.min(self.expected) as f64 / self.expected as f64))
            .try_fold(1.0f64, |w, d| d.map(|d| w.min(d)))
    }
}

/// Where [`Kind::HmAttachSsh`] starts its session and how its attach
/// reaches it.
#[derive(Debug)]
pub struct Via {
    /// The other machine's socket dir, where the session is started.
    pub dir: PathBuf,
    /// The name `hm attach HOST:ID` is given.
    pub host: String,
    /// A config file whose `[[hosts]]` names the host.
    pub config: PathBuf,
    /// Added to the attach's environment (`HM_SSH_COMMAND`, `TMPDIR`).
    pub env: Vec<(String, String)>,
}

impl Via {
    /// `hm attach HOST:ID` as an argv for [`Bench::pty_with`].
    pub fn attach_argv(&self, hm: &Path, id: &str) -> Vec<String> {
        vec![
            hm.display().to_string(),
            "--config".into(),
            self.config.display().to_string(),
            "attach".into(),
            format!("{}:{id}", self.host),
        ]
    }

    pub fn env(&self) -> Vec<(&str, &str)> {
        self.env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    }
}

/// What the harness holds while a run is in progress.
#[allow(dead_code)]
enum Held {
    Hm(peers::HmSession),
    Dtach(peers::DtachSession),
    Tmux(peers::TmuxServer),
    Pty(PtyProc),
}

pub fn run_once(b: &Bench, kind: Kind, clients: usize, want: &Arc<Vec<u8>>, payload: &Path) -> Run {
    run_once_via(b, kind, clients, want, payload, None)
}

/// [`run_once`], with the other machine that [`Kind::HmAttachSsh`] needs.
pub fn run_once_via(
    b: &Bench,
    kind: Kind,
    clients: usize,
    want: &Arc<Vec<u8>>,
    payload: &Path,
    via: Option<&Via>,
) -> Run {
    let fifo = b.fifo();
    let script = peers::stream_script(&fifo, payload);
    let argv = ["sh", "-c", script.as_str()];
    let expected = want.len() as u64;
    let quiet = Duration::from_millis(300);
    let max_settle = Duration::from_secs(3);

    if kind == Kind::RawNative {
        let p = b.pty(&argv);
        let reader = p.master.try_clone().expect("dup the pty master");
        // head reads with blocking reads, like any ordinary program.
        let flags = fcntl(&reader, FcntlArg::F_GETFL).expect("F_GETFL");
        fcntl(
            &reader,
            FcntlArg::F_SETFL(OFlag::from_bits_truncate(flags) & !OFlag::O_NONBLOCK),
        )
        .expect("F_SETFL");
        let mut head = Command::new("head")
            .arg("-c")
            .arg(expected.to_string())
            .stdin(Stdio::from(reader))
            .stdout(Stdio::null())
            .spawn()
            .expect("start head");
        sys::track(head.id() as i32, false);
        let t0 = Instant::now();
        peers::open_gate(&fifo);
        let ok = head.wait().is_ok_and(|s| s.success());
        let secs = t0.elapsed().as_secs_f64();
        sys::untrack(head.id() as i32);
        drop(p);
        return Run {
            secs,
            expected,
            delivered: vec![ok.then_some(expected)],
            exact: ok,
            server: None,
            clients_cpu: None,
            hwm_kib: None,
            server_threads: None,
            frames: 0,
        };
    }

    let mut held: Vec<Held> = Vec::new();
    let mut socks = Vec::new();
    let mut ptys: Vec<PtyProc> = Vec::new();
    let mut server_pid = None;
    let mut relays: Vec<PtyProc> = Vec::new();
    let mut streams = Vec::new();
    match kind {
        Kind::RawNative => unreachable!("handled above"),
        Kind::Raw => ptys.push(b.pty(&argv)),
        Kind::Relay => {
            let (relay, conn) = b.relay(&argv);
            server_pid = Some(relay.pid);
            relays.push(relay);
            streams.push(conn);
        }
        Kind::RelayAttach => {
            let (relay, client) = b.relay_attach(&argv, false);
            server_pid = Some(relay.pid);
            relays.push(relay);
            ptys.push(client);
        }
        Kind::Hm | Kind::HmAgent | Kind::HmAttach | Kind::HmAttachSsh => {
            let opts: &[&str] = if kind == Kind::HmAgent {
                &["--classifier", "agent"]
            } else {
                &["--classifier", "simple"]
            };
            let via = via.filter(|_| kind == Kind::HmAttachSsh);
            let s = match via {
                Some(v) => {
                    let s = b.spawn_hm_with(&v.dir, &b.name("hm"), opts, &argv);
                    s.wait_ready();
                    s
                }
                None => b.hm_session_with(opts, &argv),
            };
            server_pid = Some(s.pid());
            for _ in 0..clients {
                if let Some(v) = via {
                    let argv = v.attach_argv(&b.hm, &s.id);
                    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
                    let size = Size {
                        cols: peers::COLS,
                        rows: peers::ROWS,
                    };
                    ptys.push(b.pty_with(&argv, size, &v.env()));
                } else if kind != Kind::HmAttach {
                    let mut p = Peer::connect(&s.sock).expect("connect");
                    p.subscribe(&[]).expect("subscribe");
                    socks.push(p.nonblocking());
                } else {
                    let argv = s.attach_argv(&b.hm);
                    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
                    ptys.push(b.pty(&argv));
                }
            }
            held.push(Held::Hm(s));
        }
        Kind::Dtach => {
            let s = b.dtach_session(&argv);
            server_pid = Some(s.pid());
            for _ in 0..clients {
                let sock = s.sock.display().to_string();
                ptys.push(b.pty(&["dtach", "-a", &sock, "-r", "none", "-E", "-z"]));
            }
            held.push(Held::Dtach(s));
        }
        Kind::Tmux => {
            let t = b.tmux_server();
            let name = b.name("w");
            t.new_session(&name, &argv);
            server_pid = t.pid();
            for _ in 0..clients {
                let argv = t.attach_argv(&name);
                let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
                ptys.push(b.pty(&argv));
            }
            held.push(Held::Tmux(t));
        }
    }
    let is_client = kind != Kind::Raw;
    if is_client {
        for p in &ptys {
            if kind == Kind::HmAttachSsh {
                // Quiet while ssh connects and the host is mounted: the
                // attach is ready once it has drawn, then gone quiet.
                p.settle(Duration::from_secs(2), Duration::from_secs(20));
            }
            p.settle(quiet, max_settle);
        }
    }
    let mut sources: Vec<Source<'_>> = Vec::new();
    for s in &socks {
        sources.push(Source::new(
            s.as_fd(),
            Box::new(FrameSink::new(want.clone())),
        ));
    }
    for s in &streams {
        sources.push(Source::new(s.as_fd(), Box::new(Expect::new(want.clone()))));
    }
    for p in &ptys {
        let sink: Box<dyn crate::sink::Sink> = match kind {
            Kind::Raw => Box::new(Expect::new(want.clone())),
            Kind::HmAttach | Kind::HmAttachSsh => Box::new(PtySink::new(want.clone(), true, false)),
            Kind::Tmux => Box::new(PtySink::new(want.clone(), false, true)),
            _ => Box::new(PtySink::new(want.clone(), false, false)),
        };
        sources.push(Source::new(p.fd(), sink));
    }
    let client_pids: Vec<i32> = if is_client {
        ptys.iter().map(|p| p.pid).collect()
    } else {
        Vec::new()
    };
    let clients_usage = || -> Option<Usage> {
        if client_pids.is_empty() {
            return None;
        }
        let mut u = Usage::default();
        for &p in &client_pids {
            u.add(Usage::of(p)?);
        }
        Some(u)
    };
    let server0 = server_pid.and_then(Usage::of);
    let clients0 = clients_usage();
    let mut buf = vec![0u8; 1 << 20];
    let t0 = Instant::now();
    peers::open_gate(&fifo);
    drain(
        &mut sources,
        &mut buf,
        t0 + Duration::from_secs(180),
        Duration::from_secs(1),
    );
    let end = sources
        .iter()
        .filter_map(|s| s.done_at.or(s.last_at))
        .max()
        .unwrap_or_else(Instant::now);
    let secs = end.duration_since(t0).as_secs_f64();
    let server = server_pid
        .and_then(Usage::of)
        .zip(server0)
        .map(|(a, b)| a.since(b));
    let clients_cpu = clients_usage().zip(clients0).map(|(a, b)| a.since(b));
    let run = Run {
        secs,
        expected,
        delivered: sources.iter().map(|s| s.sink.delivered()).collect(),
        exact: sources.iter().all(|s| s.sink.exact()),
        server,
        clients_cpu,
        hwm_kib: server_pid.and_then(sys::hwm_kib),
        server_threads: server_pid.and_then(sys::threads),
        frames: sources.iter().map(|s| s.sink.frames()).sum(),
    };
    if sources.iter().any(|s| s.done_at.is_none()) && kind != Kind::Dtach {
        eprintln!(
            "e2e: {}: {} of {} clients never saw the end marker ({} bytes expected)",
            kind.name(),
            sources.iter().filter(|s| s.done_at.is_none()).count(),
            sources.len(),
            expected - MARKER.len() as u64,
        );
    }
    drop(sources);
    drop(ptys);
    drop(socks);
    drop(streams);
    drop(relays);
    drop(held);
    run
}
