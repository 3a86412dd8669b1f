//! MARK, the journal's frame: the session's size from this point of the
//! output on, whether the output there is on the alternate screen, and
//! the wall-clock time it was read.
//!
//! A subscriber that asks for marks (`SUBSCRIBE_MARKS`) gets one before
//! the first byte of its replay (the size the session had there, and
//! whether a program had taken the alternate screen) and one at every
//! point where that changed (or, every few seconds of output, only the
//! time moved on), between OUTPUT frames at exactly that place in the
//! stream: an emulator that applies each size where its mark falls, and
//! starts on the screen the first mark says, sees what the session's own
//! screen saw.

use super::{PayloadError, Size};

/// `[cols u16][rows u16][unix_ms u64][flags u8]`, big-endian.
pub const MARK_LEN: usize = 13;

/// MARK flag: the output from here on is on the alternate screen.
pub const MARK_ALTERNATE: u8 = 0x01;

/// While output flows, a mark that only moves the time on comes when
/// output is read this long after the last mark: what follows a mark was
/// read less than this after its time (unless a full journal thinned the
/// marks).
pub const MARK_EVERY_MS: u64 = 2_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    /// The pty's size from here on.
    pub size: Size,
    /// When the output from here on was read, in ms since the Unix epoch.
    pub unix_ms: u64,
    /// A program had switched to the alternate screen, and not back.
    pub alternate: bool,
}

impl Mark {
    pub fn encode(&self) -> [u8; MARK_LEN] {
        let mut b = [0u8; MARK_LEN];
        b[0..4].copy_from_slice(&self.size.encode());
        b[4..12].copy_from_slice(&self.unix_ms.to_be_bytes());
        b[12] = if self.alternate { MARK_ALTERNATE } else { 0 };
        b
    }

    /// Reads the size and the time (12 bytes), and the flags if they are
    /// there; more may follow in a later version and are ignored.
    pub fn decode(p: &[u8]) -> Result<Mark, PayloadError> {
        let (Some(size), Some(time)) = (p.get(0..4), p.get(4..12)) else {
            return Err(PayloadError::Length {
                what: "MARK",
                expected: MARK_LEN,
                got: p.len(),
            });
        };
        let mut ms = [0u8; 8];
        ms.copy_from_slice(time);
        let flags = p.get(12).copied().unwrap_or(0);
        Ok(Mark {
            size: Size::decode(size)?,
            unix_ms: u64::from_be_bytes(ms),
            alternate: flags & MARK_ALTERNATE != 0,
        })
    }
}

/// INFO's `journal`: how much the journal holds, and from when the
/// replay's output is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct JournalInfo {
    /// Marks kept now.
    pub marks: usize,
    /// The most it keeps (1 % of the output ring's bytes).
    pub max_marks: usize,
    /// When the oldest output a replay would send was read (as far as
    /// the marks say).
    pub since_unix_ms: u64,
    /// A replay would send the session's output from its first byte:
    /// nothing was dropped (false from a supervisor that does not say).
    pub whole: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_is_thirteen_bytes_and_reads_back() {
        let m = Mark {
            size: Size {
                cols: 200,
                rows: 50,
            },
            unix_ms: 0x0102_0304_0506,
            alternate: true,
        };
        let b = m.encode();
        assert_eq!(b, [0, 200, 0, 50, 0, 0, 1, 2, 3, 4, 5, 6, 1]);
        assert_eq!(Mark::decode(&b), Ok(m));
        let mut longer = b.to_vec();
        longer.push(9);
        assert_eq!(Mark::decode(&longer), Ok(m));
        // Without the flags: the main screen.
        let main = Mark::decode(&b[..12]).expect("twelve bytes");
        assert!(!main.alternate);
        assert!(Mark::decode(&b[..11]).is_err());
    }

    #[test]
    fn the_golden_example_of_docs_protocol_md() {
        use crate::protocol::{Reply, Request, Subscribe};
        let sub = Subscribe {
            mark_replay: true,
            marks: true,
            ..Subscribe::default()
        };
        assert_eq!(Request::Subscribe(sub).encode(), [0x02, 0, 0, 0, 1, 0x11]);
        let m = Mark {
            size: Size {
                cols: 200,
                rows: 50,
            },
            unix_ms: 1_700_000_000_000,
            alternate: false,
        };
        assert_eq!(
            Reply::Mark(m).encode(),
            [
                0x8a, 0, 0, 0, 0x0d, 0, 0xc8, 0, 0x32, 0, 0, 1, 0x8b, 0xcf, 0xe5, 0x68, 0, 0
            ]
        );
    }
}
