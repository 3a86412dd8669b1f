//! The output log: one byte ring holding the scrollback plus the bytes
//! subscribers have not been sent yet, addressed by absolute offsets.
//!
//! Offsets count every byte the child ever wrote, so a subscriber is just a
//! number: what it still needs is `[offset, head)`, its lag is
//! `head - offset`, and replay-then-live has no seam because both are reads
//! of the same log. The ring is byte-granular: however the output was
//! chunked, the scrollback is exactly its last `scrollback` bytes.

/// A fixed-capacity byte ring with absolute offsets.
#[derive(Debug)]
pub struct Ring {
    // Allocated zeroed so untouched pages cost no memory until used.
    buf: Box<[u8]>,
    head: u64,
}

impl Ring {
    pub fn new(capacity: usize) -> Self {
        Ring {
            buf: vec![0u8; capacity.max(1)].into_boxed_slice(),
            head: 0,
        }
    }

    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Total bytes ever written.
    pub fn head(&self) -> u64 {
        self.head
    }

    /// The oldest offset still held.
    pub fn oldest(&self) -> u64 {
        self.head.saturating_sub(self.buf.len() as u64)
    }

    fn pos(&self, offset: u64) -> usize {
        (offset % self.buf.len() as u64) as usize
    }

    /// A writable region at the head, at most `max` bytes and never
    /// wrapping; fill it (e.g. with `read(2)`) then [`commit`](Self::commit).
    /// Writing here overwrites the oldest bytes: callers make sure nobody
    /// still needs them.
    pub fn spare(&mut self, max: usize) -> &mut [u8] {
        let start = self.pos(self.head);
        let end = (start + max).min(self.buf.len());
        &mut self.buf[start..end]
    }

    /// Publishes `n` bytes written into [`spare`](Self::spare).
    pub fn commit(&mut self, n: usize) {
        self.head += n as u64;
    }

    /// Copies `data` in, keeping only its last `capacity` bytes if larger.
    pub fn push(&mut self, mut data: &[u8]) {
        if data.len() > self.buf.len() {
            let skip = data.len() - self.buf.len();
            self.head += skip as u64;
            data = &data[skip..];
        }
        while !data.is_empty() {
            let spare = self.spare(data.len());
            let n = spare.len();
            spare.copy_from_slice(&data[..n]);
            self.commit(n);
            data = &data[n..];
        }
    }

    /// The bytes `[from, to)` as one or two slices (two at the wrap), or
    /// `None` if any of them has been overwritten or not written yet.
    pub fn slices(&self, from: u64, to: u64) -> Option<(&[u8], &[u8])> {
        if from > to || from < self.oldest() || to > self.head {
            return None;
        }
        let len = (to - from) as usize;
        let start = self.pos(from);
        let first = len.min(self.buf.len() - start);
        Some((&self.buf[start..start + first], &self.buf[..len - first]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn collect(r: &Ring, from: u64, to: u64) -> Vec<u8> {
        let (a, b) = r.slices(from, to).expect("range held");
        [a, b].concat()
    }

    #[test]
    fn wraps_and_keeps_the_newest_bytes() {
        let mut r = Ring::new(8);
        r.push(b"abcdef");
        r.push(b"ghij");
        assert_eq!(r.head(), 10);
        assert_eq!(r.oldest(), 2);
        assert_eq!(collect(&r, 2, 10), b"cdefghij");
        assert!(r.slices(1, 10).is_none());
        assert!(r.slices(5, 11).is_none());
    }

    #[test]
    fn a_chunk_larger_than_the_ring_keeps_its_tail() {
        let mut r = Ring::new(4);
        r.push(b"0123456789");
        assert_eq!(r.head(), 10);
        assert_eq!(collect(&r, 6, 10), b"6789");
    }

    proptest! {
        #[test]
        fn scrollback_is_a_byte_exact_suffix(
            cap in 1usize..64,
            chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..100), 0..30),
        ) {
            let mut r = Ring::new(cap);
            let mut all = Vec::new();
            for c in &chunks {
                r.push(c);
                all.extend_from_slice(c);
                prop_assert_eq!(r.head(), all.len() as u64);
                let keep = all.len().min(cap);
                let got = collect(&r, r.head() - keep as u64, r.head());
                prop_assert_eq!(&got[..], &all[all.len() - keep..]);
            }
        }

        #[test]
        fn spare_and_commit_match_push(
            cap in 1usize..64,
            chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..100), 0..30),
        ) {
            let mut a = Ring::new(cap);
            let mut b = Ring::new(cap);
            for c in &chunks {
                a.push(c);
                let mut rest = &c[..];
                while !rest.is_empty() {
                    let s = b.spare(rest.len());
                    let n = s.len();
                    s.copy_from_slice(&rest[..n]);
                    b.commit(n);
                    rest = &rest[n..];
                }
            }
            let from = a.oldest();
            prop_assert_eq!(collect(&a, from, a.head()), collect(&b, from, b.head()));
        }
    }
}
