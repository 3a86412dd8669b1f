//! End-to-end benchmarks: `hm` beside the raw pty, dtach and tmux, in one
//! run on this machine. See docs/performance.md for what each number means.
//!
//! `cargo bench --bench e2e` builds `hm` with the release profile and runs
//! everything (about five minutes on two cores); `HM_BENCH_QUICK=1` makes
//! every size small for a smoke run. Everything runs in a private temp
//! directory; every process started is killed by pid at the end, also on
//! panic and on Ctrl-C.

mod detect;
mod echo;
mod footprint;
mod history;
mod hosts;
mod idle;
mod logs;
mod peer;
mod peers;
mod relay;
mod replay;
mod report;
mod scale;
mod screen;
mod sections;
mod sink;
mod sshd;
mod sys;
mod thousand;
mod throughput;
mod tui;

use std::path::PathBuf;
use std::time::Duration;

use report::Checks;

/// Sizes and counts, from the environment (see docs/performance.md).
#[derive(Debug)]
pub struct Config {
    pub mib: usize,
    pub fan_mib: usize,
    pub reps: usize,
    pub samples: usize,
    pub gap: Duration,
    pub idle: Duration,
    pub sessions: usize,
    /// The `scale` section: sessions in one dashboard, and how many of
    /// them stream.
    pub scale_sessions: usize,
    pub scale_streaming: usize,
    /// The `thousand` section: idle sessions on one machine, and whether
    /// as many `agent` ones with a full screen are measured too.
    pub thousand_sessions: usize,
    pub thousand_agent: bool,
    /// The `hosts` section: sessions on each of its three hosts.
    pub hosts_sessions: usize,
    pub only: Option<Vec<String>>,
    pub kinds: Option<Vec<String>>,
}

/// The `thousand` section's marginal cost is taken between 10 sessions
/// and N: N must be more.
const SMALLEST: usize = 11;

fn env_num(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn list(name: &str) -> Option<Vec<String>> {
    std::env::var(name)
        .ok()
        .map(|v| v.split(',').map(|s| s.trim().to_string()).collect())
}

impl Config {
    fn from_env() -> Config {
        let quick = std::env::var("HM_BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0");
        let q = |full: usize, small: usize| if quick { small } else { full };
        Config {
            mib: env_num("HM_BENCH_MIB", q(64, 4)),
            fan_mib: env_num("HM_BENCH_FANOUT_MIB", q(32, 2)),
            reps: env_num("HM_BENCH_REPS", q(3, 1)).max(1),
            samples: env_num("HM_BENCH_SAMPLES", q(2000, 200)).max(4),
            gap: Duration::from_micros(env_num("HM_BENCH_GAP_US", 1000) as u64),
            idle: Duration::from_secs(env_num("HM_BENCH_IDLE_SECS", q(10, 2)) as u64),
            sessions: env_num("HM_BENCH_SESSIONS", q(50, 10)).max(2),
            scale_sessions: env_num("HM_BENCH_SCALE_SESSIONS", q(200, 40)).max(2),
            scale_streaming: env_num("HM_BENCH_SCALE_STREAMING", q(20, 5)),
            thousand_sessions: env_num("HM_BENCH_THOUSAND_SESSIONS", q(1000, 100)).max(SMALLEST),
            thousand_agent: env_num("HM_BENCH_THOUSAND_AGENT", 1) != 0,
            hosts_sessions: env_num("HM_BENCH_HOSTS_SESSIONS", q(50, 10)).max(1),
            only: list("HM_BENCH_ONLY"),
            kinds: list("HM_BENCH_TARGETS"),
        }
    }

    fn wants(&self, section: &str) -> bool {
        self.only
            .as_ref()
            .is_none_or(|o| o.iter().any(|s| s == section))
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--hm-bench-writer") {
        replay::writer(&args[2..]);
    }
    if args.get(1).map(String::as_str) == Some("--hm-bench-winch") {
        scale::sizes::winch_counter(&args[2..]);
    }
    if args.get(1).map(String::as_str) == Some("--hm-bench-relay") {
        relay::serve(&args[2..]);
    }
    if args.get(1).map(String::as_str) == Some("--hm-bench-relay-client") {
        relay::client(&args[2..]);
    }
    if args.get(1).map(String::as_str) == Some("--hm-bench-relay-client-tokio") {
        relay::client_tokio(&args[2..]);
    }
    // `cargo test --benches` runs bench binaries without `--bench`.
    if !args.iter().any(|a| a == "--bench") {
        println!("e2e: run with `cargo bench --bench e2e`; nothing to test");
        return;
    }
    let cfg = Config::from_env();
    let root = tempfile::Builder::new()
        .prefix("hm-e2e-")
        .tempdir_in("/tmp")
        .expect("make a sandbox in /tmp");
    sys::install_cleanup(root.path().to_path_buf());
    // Another build (an older commit, an unstripped one for perf) can be
    // measured in its place.
    let hm = std::env::var_os("HM_BENCH_HM")
        .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_hm")), PathBuf::from);
    let mut bench = peers::Bench::new(root.path().to_path_buf(), hm);
    bench.base = std::env::var_os("HM_BENCH_BASE").map(PathBuf::from);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&bench, &cfg)));
    sys::kill_everything();
    drop(root);
    if let Err(p) = result {
        std::panic::resume_unwind(p);
    }
}

fn run(b: &peers::Bench, cfg: &Config) {
    let everything = sys::Load::now();
    println!("# hm end-to-end benchmarks\n");
    for (k, v) in sys::machine() {
        println!("- {k}: {v}");
    }
    println!("- hm binary: {}", b.hm.display());
    println!("- settings: {cfg:?}");
    if !b.dtach {
        println!("- dtach: not installed, skipped (apt-get install dtach)");
    }
    if !b.tmux {
        println!("- tmux: not installed, skipped (apt-get install tmux)");
    }
    let mut checks = Checks::default();
    if cfg.wants("throughput") {
        sections::throughput(b, cfg, &mut checks).print();
    }
    if cfg.wants("fanout") {
        sections::fanout(b, cfg, &mut checks).print();
    }
    if cfg.wants("echo") {
        sections::echo(b, cfg, &mut checks).print();
    }
    if cfg.wants("idle") {
        sections::idle(b, cfg, &mut checks).print();
    }
    if cfg.wants("memory") {
        sections::memory(b, cfg, &mut checks).print();
    }
    if cfg.wants("replay") {
        sections::replay(b, cfg, &mut checks).print();
    }
    if cfg.wants("detect") {
        sections::detect(b, cfg, &mut checks).print();
    }
    if cfg.wants("tui") {
        tui::section(b, cfg, &mut checks).print();
    }
    if cfg.wants("history") {
        history::section(b, cfg, &mut checks).print();
    }
    if cfg.wants("logs") {
        logs::section(b, cfg, &mut checks).print();
    }
    if cfg.wants("scale") {
        scale::section(b, cfg, &mut checks).print();
    }
    if cfg.wants("sizes") {
        scale::sizes::section(b, cfg, &mut checks).print();
    }
    if cfg.wants("thousand") {
        thousand::section(b, cfg, &mut checks).print();
    }
    if cfg.wants("hosts") {
        hosts::section(b, cfg, &mut checks).print();
    }

    checks.table().print();
    println!(
        "\nForeign CPU share over the whole run: {:.2} (above 0.2 the numbers are unreliable).",
        everything.foreign_since()
    );
}
