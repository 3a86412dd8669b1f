//! The frame decoder target: [`Splitter`] and [`Assembler`] against a
//! plain whole-buffer reading of the wire format, however the stream is
//! chunked, and the payload decoders on every frame they find. Separate
//! from the other targets because it carries its own reference decoder.

use crate::protocol::{
    self, Assembler, Frame, FrameError, HEADER_LEN, MAX_DIM, MAX_PAYLOAD, MIN_DIM, Piece, Size,
    Splitter, Status,
};

use super::{cuts, hash};

/// What a frame stream must decode to: a plain, whole-buffer reading of the
/// format, written independently of [`Splitter`].
fn reference_frames(data: &[u8], limit: u32) -> (Vec<Frame>, Option<FrameError>) {
    let mut frames = Vec::new();
    let mut rest = data;
    while rest.len() >= HEADER_LEN {
        let ty = rest[0];
        let len = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]);
        if len > limit {
            let err = FrameError::TooLarge {
                ty,
                len,
                max: limit,
            };
            return (frames, Some(err));
        }
        let Some(payload) = rest.get(HEADER_LEN..HEADER_LEN + len as usize) else {
            break;
        };
        frames.push(Frame {
            ty,
            payload: payload.to_vec(),
        });
        rest = &rest[HEADER_LEN + len as usize..];
    }
    (frames, None)
}

fn assemble(data: &[u8], chunks: &[usize], limit: u32) -> (Vec<Frame>, Option<FrameError>) {
    let mut asm = Assembler::new(limit);
    let mut out = Vec::new();
    let mut rest = data;
    for &n in chunks {
        let (chunk, tail) = rest.split_at(n);
        rest = tail;
        if let Err(e) = asm.push(chunk, &mut out) {
            return (out, Some(e));
        }
    }
    (out, None)
}

/// Drives a [`Splitter`] directly, checking each piece as it comes, and
/// returns what it framed.
fn split(data: &[u8], chunks: &[usize], limit: u32) -> (Vec<Frame>, Option<FrameError>) {
    let mut sp = Splitter::new(limit);
    let mut frames = Vec::new();
    let mut current: Option<(u8, u32, Vec<u8>)> = None;
    let mut rest = data;
    assert!(sp.at_boundary());
    for &n in chunks {
        let (mut chunk, tail) = rest.split_at(n);
        rest = tail;
        loop {
            let pending = sp.end_pending();
            let (used, piece) = match sp.next(chunk) {
                Ok(step) => step,
                Err(e) => return (frames, Some(e)),
            };
            assert!(used <= chunk.len());
            chunk = &chunk[used..];
            if pending {
                assert!(matches!(piece, Some(Piece::End { .. })), "{piece:?}");
            }
            match piece {
                Some(Piece::Start { ty, len }) => {
                    assert!(current.is_none(), "Start inside a frame");
                    assert!(len <= limit, "Start over the limit: {len} > {limit}");
                    current = Some((ty, len, Vec::new()));
                }
                Some(Piece::Data(d)) => {
                    let (_, len, buf) = current.as_mut().expect("Data outside a frame");
                    assert!(!d.is_empty(), "empty Data piece");
                    buf.extend_from_slice(d);
                    assert!(buf.len() <= *len as usize, "more Data than declared");
                }
                Some(Piece::End { ty }) => {
                    let (start_ty, len, payload) = current.take().expect("End outside a frame");
                    assert_eq!(ty, start_ty);
                    assert_eq!(payload.len(), len as usize, "End before the payload");
                    assert!(sp.at_boundary(), "not at a boundary after End");
                    frames.push(Frame { ty, payload });
                }
                None => {
                    assert!(chunk.is_empty(), "stopped with input left");
                    break;
                }
            }
        }
    }
    if current.is_none() {
        // A partial header leaves the splitter mid-frame only if bytes of it
        // arrived.
        let partial = data.len()
            - frames
                .iter()
                .map(|f| HEADER_LEN + f.payload.len())
                .sum::<usize>();
        assert_eq!(sp.at_boundary(), partial == 0);
    }
    (frames, None)
}

/// The frame decoder: [`Splitter`] and [`Assembler`] over arbitrary bytes.
///
/// Checks, for several payload limits: the frames and the error are the
/// same whether the stream arrives whole, a byte at a time or in chunks
/// cut where the input's hash says, and equal a plain reading of the
/// format; no payload exceeds the limit and a header declaring more is an
/// error before any of its payload is read; every frame re-encodes to the
/// bytes it came from; the payload decoders accept exactly their sizes.
pub fn frame_decoder(data: &[u8]) {
    let whole = [data.len()];
    let bytes = vec![1; data.len()];
    let hashed = cuts(data.len(), hash(data));
    for limit in [MAX_PAYLOAD, 4096, 64, 4, 0] {
        let want = reference_frames(data, limit);
        for chunks in [&whole[..], &bytes, &hashed] {
            let chunks = if data.is_empty() { &[][..] } else { chunks };
            assert_eq!(
                assemble(data, chunks, limit),
                want,
                "assembler, limit {limit}"
            );
            assert_eq!(split(data, chunks, limit), want, "splitter, limit {limit}");
        }
        let (frames, _) = &want;
        let mut encoded = Vec::new();
        for f in frames {
            assert!(f.payload.len() <= limit as usize);
            encoded.extend(protocol::frame(f.ty, &f.payload));
            payloads(&f.payload);
        }
        assert_eq!(&data[..encoded.len()], &encoded[..], "re-encoding");
    }
}

/// The payload decoders accept exactly their sizes and round-trip.
fn payloads(p: &[u8]) {
    match Status::decode(p) {
        Ok(s) => {
            assert!(p.len() >= protocol::STATUS_LEN - 1);
            assert_eq!(Status::decode(&s.encode()), Ok(s));
            // Byte 8 is a boolean: any non-zero byte reads as alive.
            let e = s.encode();
            assert_eq!((&e[..8], &e[9..14]), (&p[..8], &p[9..14]));
            assert_eq!(e[8], u8::from(p[8] != 0));
        }
        Err(_) => assert!(p.len() < protocol::STATUS_LEN - 1),
    }
    match Size::decode(p) {
        Ok(s) => {
            assert_eq!(s.encode(), p);
            let c = s.clamped();
            assert!((MIN_DIM..=MAX_DIM).contains(&c.cols));
            assert!((MIN_DIM..=MAX_DIM).contains(&c.rows));
            assert_eq!(c.clamped(), c);
        }
        Err(_) => assert_ne!(p.len(), 4),
    }
    assert_eq!(protocol::decode_exit(p).is_ok(), p.len() == 4);
    assert_eq!(protocol::decode_kill(p).is_some(), p.len() == 4);
    let (code, _msg) = protocol::decode_error(p);
    if let Some(c) = protocol::ErrorCode::from_u16(code) {
        assert_eq!(c as u16, code);
    }
}
