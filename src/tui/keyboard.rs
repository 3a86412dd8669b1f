//! The dashboard's keyboard: the terminal's events read on a thread of
//! their own (so parsing session output never delays a key), and parked
//! while a raw attach has the terminal.

use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use crossterm::event::Event;
use tokio::sync::mpsc;

use super::model::Msg;

/// The reader thread's events, and the means to park it.
pub struct Keyboard {
    rx: mpsc::UnboundedReceiver<Event>,
    pause: Arc<Pause>,
    parked: std_mpsc::Receiver<()>,
}

impl Keyboard {
    /// Starts the reader thread.
    pub fn start() -> Result<Keyboard> {
        let (tx, rx) = mpsc::unbounded_channel::<Event>();
        let pause = Arc::new(Pause::default());
        let (parked_tx, parked) = std_mpsc::channel::<()>();
        let reader = pause.clone();
        std::thread::Builder::new()
            .name("hm-keys".into())
            .spawn(move || {
                loop {
                    reader.park(&parked_tx);
                    let Ok(ev) = crossterm::event::read() else {
                        break;
                    };
                    // Read while a raw attach was being set up: the
                    // keyboard is the attach's now.
                    if reader.paused() {
                        continue;
                    }
                    if tx.send(ev).is_err() {
                        break;
                    }
                }
            })
            .context("cannot start the keyboard reader")?;
        Ok(Keyboard { rx, pause, parked })
    }

    /// The next event as a message: `Some(None)` for one the dashboard
    /// does not use, `None` once the reader has stopped.
    pub async fn next(&mut self) -> Option<Option<Msg>> {
        Some(match self.rx.recv().await? {
            Event::Key(k) => Some(Msg::Key(k)),
            Event::Mouse(me) => Some(Msg::Mouse(me)),
            Event::Paste(p) => Some(Msg::Paste(p)),
            Event::Resize(c, r) => Some(Msg::Resize(c, r)),
            _ => None,
        })
    }

    /// Stops the reader before the terminal is handed over. It waits in a
    /// read: a SIGWINCH wakes it (as a resize event), it sees the pause
    /// and parks.
    pub fn park(&self) {
        self.pause.set(true);
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGWINCH);
        let _ = self.parked.recv_timeout(Duration::from_secs(1));
    }

    /// The reader reads again.
    pub fn resume(&self) {
        self.pause.set(false);
    }
}

/// Stops the keyboard reader while a raw attach has the terminal.
#[derive(Debug, Default)]
struct Pause {
    paused: Mutex<bool>,
    resume: Condvar,
}

impl Pause {
    fn paused(&self) -> bool {
        self.paused.lock().map(|p| *p).unwrap_or(false)
    }

    fn set(&self, on: bool) {
        if let Ok(mut p) = self.paused.lock() {
            *p = on;
        }
        self.resume.notify_all();
    }

    /// The reader's side: while paused, say so once and wait.
    fn park(&self, parked: &std_mpsc::Sender<()>) {
        let Ok(mut p) = self.paused.lock() else {
            return;
        };
        if *p {
            let _ = parked.send(());
        }
        while *p {
            match self.resume.wait(p) {
                Ok(g) => p = g,
                Err(_) => return,
            }
        }
    }
}
