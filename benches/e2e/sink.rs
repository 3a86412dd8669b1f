//! Receiving a stream and checking it: the expected bytes, frame parsing
//! for protocol subscribers, an escape filter for clients in a pty, and one
//! `poll` loop that drains many of them at once.
//!
//! Payloads contain no ESC byte, so whatever a terminal client adds (mode
//! switches, `hm attach`'s status bar between ESC 7 and ESC 8) can be told
//! apart from the program's output and left out before comparing.

use std::os::fd::BorrowedFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use heimdall::protocol::{Piece, ServerType, Splitter};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

/// Written after the payload; its arrival ends a run.
pub const MARKER: &[u8] = b"\r\n@@HMB-DONE@@";

/// The payload: 80-byte CRLF lines of `[a-z0-9 ]`, numbered.
pub fn payload(bytes: usize) -> Vec<u8> {
    const ALPHA: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789 ";
    let mut out = Vec::with_capacity(bytes + 80);
    let mut line = 0usize;
    while out.len() < bytes {
        let start = out.len();
        out.extend_from_slice(format!("{:07} ", line % 10_000_000).as_bytes());
        while out.len() - start < 78 {
            out.push(ALPHA[(line * 7 + out.len() - start) % ALPHA.len()]);
        }
        out.extend_from_slice(b"\r\n");
        line += 1;
    }
    out.truncate(bytes);
    out
}

/// Compares what arrives with what was sent. After the first difference
/// (a lossy peer) it only counts bytes and watches for the marker.
#[derive(Debug)]
pub struct Expect {
    want: Arc<Vec<u8>>,
    pos: usize,
    count: u64,
    in_sync: bool,
    tail: Vec<u8>,
    marker_seen: bool,
}

impl Expect {
    pub fn new(want: Arc<Vec<u8>>) -> Expect {
        Expect {
            want,
            pos: 0,
            count: 0,
            in_sync: true,
            tail: Vec::new(),
            marker_seen: false,
        }
    }

    pub fn feed(&mut self, data: &[u8]) {
        self.count += data.len() as u64;
        if self.in_sync {
            let end = self.pos + data.len();
            if end <= self.want.len() && self.want[self.pos..end] == *data {
                self.pos = end;
                return;
            }
            self.in_sync = false;
        }
        // Out of sync: look for the marker across read boundaries.
        self.tail.extend_from_slice(data);
        if self.tail.windows(MARKER.len()).any(|w| w == MARKER) {
            self.marker_seen = true;
        }
        let keep = MARKER.len().min(self.tail.len());
        self.tail.drain(..self.tail.len() - keep);
    }

    pub fn done(&self) -> bool {
        (self.in_sync && self.pos == self.want.len()) || self.marker_seen
    }

    /// Every byte arrived, in order, and nothing else.
    pub fn exact(&self) -> bool {
        self.in_sync && self.pos == self.want.len()
    }

    pub fn count(&self) -> u64 {
        self.count
    }
}

/// Strips what a terminal client adds to a program's output: escape
/// sequences, and (for `hm attach`) everything between ESC 7 and ESC 8,
/// which is its status bar.
#[derive(Debug, Default)]
pub struct EscFilter {
    state: EscState,
    /// Skip ESC 7 ... ESC 8 (hm attach's status bar).
    skip_saved: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum EscState {
    #[default]
    Ground,
    Esc,
    Intermediate,
    Csi,
    Osc,
    OscEsc,
    Saved,
    SavedEsc,
}

impl EscFilter {
    pub fn new(skip_saved: bool) -> EscFilter {
        EscFilter {
            state: EscState::Ground,
            skip_saved,
        }
    }

    /// Calls `out` with each run of program bytes in `data`.
    pub fn filter(&mut self, mut data: &[u8], mut out: impl FnMut(&[u8])) {
        while !data.is_empty() {
            if self.state == EscState::Ground {
                let n = data.iter().position(|&b| b == 0x1b).unwrap_or(data.len());
                if n > 0 {
                    out(&data[..n]);
                }
                data = &data[n..];
                if !data.is_empty() {
                    self.state = EscState::Esc;
                    data = &data[1..];
                }
                continue;
            }
            let b = data[0];
            data = &data[1..];
            self.state = match (self.state, b) {
                (EscState::Esc, b'[') => EscState::Csi,
                (EscState::Esc, b']' | b'P' | b'_' | b'^') => EscState::Osc,
                (EscState::Esc, b'7') if self.skip_saved => EscState::Saved,
                (EscState::Esc | EscState::Intermediate, 0x20..=0x2f) => EscState::Intermediate,
                (EscState::Esc | EscState::Intermediate, _) => EscState::Ground,
                (EscState::Csi, 0x40..=0x7e) => EscState::Ground,
                (EscState::Csi, _) => EscState::Csi,
                (EscState::Osc, 0x07) => EscState::Ground,
                (EscState::Osc, 0x1b) => EscState::OscEsc,
                (EscState::Osc, _) => EscState::Osc,
                (EscState::OscEsc, b'\\') => EscState::Ground,
                (EscState::OscEsc, _) => EscState::Osc,
                (EscState::Saved, 0x1b) => EscState::SavedEsc,
                (EscState::Saved, _) => EscState::Saved,
                (EscState::SavedEsc, b'8') => EscState::Ground,
                (EscState::SavedEsc, 0x1b) => EscState::SavedEsc,
                (EscState::SavedEsc, _) => EscState::Saved,
                (EscState::Ground, _) => EscState::Ground,
            };
        }
    }
}

/// What one stream's receiver reports.
pub trait Sink {
    fn feed(&mut self, data: &[u8]);
    fn done(&self) -> bool;
    /// Program bytes received, `None` where they cannot be counted (a
    /// client that re-renders the screen).
    fn delivered(&self) -> Option<u64>;
    fn exact(&self) -> bool;
    /// OUTPUT frames, for protocol subscribers.
    fn frames(&self) -> u64 {
        0
    }
}

/// A protocol subscriber: parses frames, checks OUTPUT payloads.
#[derive(Debug)]
pub struct FrameSink {
    split: Splitter,
    cur: u8,
    pub expect: Expect,
    frames: u64,
    pub replay_end: bool,
    pub status_resp: u64,
}

impl FrameSink {
    pub fn new(want: Arc<Vec<u8>>) -> FrameSink {
        FrameSink {
            split: Splitter::default(),
            cur: 0,
            expect: Expect::new(want),
            frames: 0,
            replay_end: false,
            status_resp: 0,
        }
    }
}

impl Sink for FrameSink {
    fn feed(&mut self, mut data: &[u8]) {
        loop {
            let Ok((used, piece)) = self.split.next(data) else {
                // A broken stream is not a delivered one.
                self.expect.in_sync = false;
                return;
            };
            data = &data[used..];
            match piece {
                Some(Piece::Start { ty, .. }) => {
                    self.cur = ty;
                    if ty == ServerType::Output as u8 {
                        self.frames += 1;
                    }
                }
                Some(Piece::Data(d)) if self.cur == ServerType::Output as u8 => self.expect.feed(d),
                Some(Piece::Data(_)) => {}
                Some(Piece::End { ty }) => match ServerType::try_from(ty) {
                    Ok(ServerType::ReplayEnd) => self.replay_end = true,
                    Ok(ServerType::StatusResp) => self.status_resp += 1,
                    _ => {}
                },
                None => return,
            }
        }
    }
    fn done(&self) -> bool {
        self.expect.done()
    }
    fn delivered(&self) -> Option<u64> {
        Some(self.expect.count())
    }
    fn exact(&self) -> bool {
        self.expect.exact()
    }
    fn frames(&self) -> u64 {
        self.frames
    }
}

/// A client in a pty (hm attach, dtach): program bytes are checked after
/// the client's own escapes are filtered out.
#[derive(Debug)]
pub struct PtySink {
    esc: EscFilter,
    expect: Expect,
    /// tmux redraws the screen rather than forwarding bytes: only the
    /// marker can be looked for.
    rerendered: bool,
}

impl PtySink {
    pub fn new(want: Arc<Vec<u8>>, skip_saved: bool, rerendered: bool) -> PtySink {
        let mut expect = Expect::new(want);
        if rerendered {
            expect.in_sync = false;
        }
        PtySink {
            esc: EscFilter::new(skip_saved),
            expect,
            rerendered,
        }
    }
}

impl Sink for PtySink {
    fn feed(&mut self, data: &[u8]) {
        let expect = &mut self.expect;
        self.esc.filter(data, |d| expect.feed(d));
    }
    fn done(&self) -> bool {
        self.expect.done()
    }
    fn delivered(&self) -> Option<u64> {
        (!self.rerendered).then(|| self.expect.count())
    }
    fn exact(&self) -> bool {
        self.expect.exact()
    }
}

/// One stream being drained.
pub struct Source<'a> {
    pub fd: BorrowedFd<'a>,
    pub sink: Box<dyn Sink + 'a>,
    pub done_at: Option<Instant>,
    pub last_at: Option<Instant>,
    pub eof: bool,
}

impl<'a> Source<'a> {
    pub fn new(fd: BorrowedFd<'a>, sink: Box<dyn Sink + 'a>) -> Source<'a> {
        Source {
            fd,
            sink,
            done_at: None,
            last_at: None,
            eof: false,
        }
    }
}

/// Reads every source (non-blocking descriptors) until each has its whole
/// stream, or `deadline`, or, once one is done, until the others have been
/// silent for `straggle` (a lossy peer whose marker was dropped).
pub fn drain(sources: &mut [Source<'_>], buf: &mut [u8], deadline: Instant, straggle: Duration) {
    let mut last_any = Instant::now();
    loop {
        let now = Instant::now();
        let open: Vec<usize> = (0..sources.len())
            .filter(|&i| sources[i].done_at.is_none() && !sources[i].eof)
            .collect();
        if open.is_empty() || now >= deadline {
            return;
        }
        if open.len() < sources.len() && now.duration_since(last_any) >= straggle {
            return;
        }
        let mut fds: Vec<PollFd<'_>> = open
            .iter()
            .map(|&i| PollFd::new(sources[i].fd, PollFlags::POLLIN))
            .collect();
        let wait = deadline
            .saturating_duration_since(now)
            .min(Duration::from_millis(100));
        let timeout =
            PollTimeout::try_from(wait.as_millis().max(1) as u64).unwrap_or(PollTimeout::MAX);
        if poll(&mut fds, timeout).is_err() {
            continue;
        }
        let ready: Vec<bool> = fds.iter().map(|f| f.any().unwrap_or(false)).collect();
        drop(fds);
        for (k, &i) in open.iter().enumerate() {
            if !ready[k] {
                continue;
            }
            let s = &mut sources[i];
            // A few reads per turn so one busy stream cannot starve others.
            for _ in 0..4 {
                match nix::unistd::read(s.fd, buf) {
                    Ok(0) => {
                        s.eof = true;
                        break;
                    }
                    Ok(n) => {
                        let t = Instant::now();
                        s.sink.feed(&buf[..n]);
                        s.last_at = Some(t);
                        last_any = t;
                        if s.sink.done() {
                            s.done_at = Some(t);
                            break;
                        }
                    }
                    Err(nix::Error::EAGAIN) | Err(nix::Error::EINTR) => break,
                    // EIO: the pty's other side is gone.
                    Err(_) => {
                        s.eof = true;
                        break;
                    }
                }
            }
        }
    }
}

/// A raw pty read directly: the bytes are the program's.
impl Sink for Expect {
    fn feed(&mut self, data: &[u8]) {
        Expect::feed(self, data);
    }
    fn done(&self) -> bool {
        Expect::done(self)
    }
    fn delivered(&self) -> Option<u64> {
        Some(self.count())
    }
    fn exact(&self) -> bool {
        Expect::exact(self)
    }
}
