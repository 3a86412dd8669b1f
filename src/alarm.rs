//! Timers that cost one wake-up each.
//!
//! tokio's timer wheel parks the thread until the start of the coarse slot
//! holding a deadline and then again until the exact millisecond, so a 1 s
//! `tokio::time::interval` wakes an otherwise idle process two or three
//! times a second. A timerfd sits in the reactor's epoll set like a socket
//! and wakes it once per expiry, which is what a ticking clock on an idle
//! screen should cost. The dashboard ticks with [`Alarm::every`] and asks a
//! session going quiet for its state with a one-shot [`Alarm`]; `hm
//! attach`'s status-bar clock arms one for its next change.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use tokio::io::unix::AsyncFd;

#[derive(Debug)]
pub struct Alarm {
    timer: TimerFd,
    fd: AsyncFd<OwnedFd>,
    /// The one-shot deadline now armed, so re-arming the same one is free.
    armed: Option<Instant>,
}

impl Alarm {
    /// A disarmed alarm; [`Alarm::arm`] sets it.
    pub fn new() -> io::Result<Self> {
        let timer = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )?;
        // The reactor gets its own descriptor for the same timer, so the
        // timer stays here to be set.
        let dup = timer.as_fd().try_clone_to_owned()?;
        Ok(Self {
            timer,
            fd: crate::fd::register(dup, tokio::io::Interest::READABLE)?,
            armed: None,
        })
    }

    /// An alarm that goes off every `period`, the first one `period` from
    /// now. Periods missed while the caller was busy fold into one expiry,
    /// like `MissedTickBehavior::Skip`.
    pub fn every(period: Duration) -> io::Result<Self> {
        let a = Self::new()?;
        a.timer.set(
            Expiration::Interval(TimeSpec::from_duration(period)),
            TimerSetTimeFlags::empty(),
        )?;
        Ok(a)
    }

    /// Sets a one-shot alarm for `at` (at once if it is past), or disarms
    /// it with `None`. Costs a system call only when the deadline changes.
    pub fn arm(&mut self, at: Option<Instant>) -> io::Result<()> {
        if at == self.armed {
            return Ok(());
        }
        match at {
            // A zero expiry would disarm the timer; a nanosecond is "now".
            Some(t) => self.timer.set(
                Expiration::OneShot(TimeSpec::from_duration(
                    t.saturating_duration_since(Instant::now())
                        .max(Duration::from_nanos(1)),
                )),
                TimerSetTimeFlags::empty(),
            )?,
            None => self.timer.unset()?,
        }
        self.armed = at;
        Ok(())
    }

    /// The one-shot deadline now armed, if any.
    pub fn deadline(&self) -> Option<Instant> {
        self.armed
    }

    /// Waits for the alarm to go off. A one-shot alarm is disarmed by it.
    /// Cancel-safe: nothing is consumed until the read succeeds.
    pub async fn wait(&mut self) -> io::Result<()> {
        loop {
            let mut ready = self.fd.readable().await?;
            let mut expiries = [0u8; 8];
            match ready.try_io(|fd| {
                nix::unistd::read(fd.get_ref(), &mut expiries).map_err(io::Error::from)
            }) {
                Ok(result) => {
                    result?;
                    self.armed = None;
                    return Ok(());
                }
                Err(_would_block) => continue,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_goes_off_no_sooner_than_the_period() {
        let rt = crate::client::runtime().unwrap();
        rt.block_on(async {
            let period = Duration::from_millis(20);
            let mut a = Alarm::every(period).unwrap();
            let start = Instant::now();
            for _ in 0..3 {
                a.wait().await.unwrap();
            }
            assert!(start.elapsed() >= period * 3);
        });
    }

    #[test]
    fn one_shot_goes_off_at_its_deadline_and_rearms() {
        let rt = crate::client::runtime().unwrap();
        rt.block_on(async {
            let mut a = Alarm::new().unwrap();
            let at = Instant::now() + Duration::from_millis(30);
            a.arm(Some(at)).unwrap();
            a.wait().await.unwrap();
            assert!(Instant::now() >= at);
            // A past deadline goes off at once rather than never.
            a.arm(Some(Instant::now() - Duration::from_secs(1)))
                .unwrap();
            a.wait().await.unwrap();
            // Moving the deadline replaces the earlier one.
            let later = Instant::now() + Duration::from_millis(40);
            a.arm(Some(Instant::now() + Duration::from_millis(5)))
                .unwrap();
            a.arm(Some(later)).unwrap();
            a.wait().await.unwrap();
            assert!(Instant::now() >= later);
        });
    }
}
