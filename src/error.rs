//! Errors shown to people: one line, the error and then each cause.
//!
//! Our error types never repeat their cause's text in their own message:
//! a cause is returned by `source()` and printed from there, once. So a
//! chain can be joined as it is, with no guessing about repeats (a test
//! below holds the types that carry a source to that).

use std::error::Error;
use std::io;

use crate::protocol::conn::ConnError;

/// The most characters one part of an error line keeps (see [`cut`]).
pub const PART_MAX: usize = 300;

/// An error and its causes on one line: `outer: inner: innermost`, each
/// part [`cut`] to [`PART_MAX`].
pub fn one_line(err: &(dyn Error + 'static)) -> String {
    let mut line = cut(&err.to_string(), PART_MAX);
    let mut cause = err.source();
    while let Some(c) = cause {
        line.push_str(": ");
        line.push_str(&cut(&c.to_string(), PART_MAX));
        cause = c.source();
    }
    line + &limit_hint(std::iter::successors(Some(err), |&e| e.source()))
}

/// [`one_line`] for the `anyhow` errors of command code.
pub fn describe(err: &anyhow::Error) -> String {
    let parts: Vec<String> = err.chain().map(|e| cut(&e.to_string(), PART_MAX)).collect();
    parts.join(": ") + &limit_hint(err.chain())
}

/// `text` as it is if it has at most `max` characters, else its start and
/// its end with ` … ` between: a value given by anyone (a 10 MB path in a
/// config file) never makes a message longer than a few lines, and the
/// end, where a message says what to do, stays. The cut falls between
/// words where one ends near it (a list of names loses whole names).
pub fn cut(text: &str, max: usize) -> String {
    /// How far a cut moves to fall between words.
    const NEAR: usize = 24;
    let n = text.chars().count();
    if n <= max {
        return text.to_owned();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut head = max * 2 / 3;
    let mut tail = n - (max - head);
    if let Some(i) = chars[head.saturating_sub(NEAR)..head]
        .iter()
        .rposition(|c| *c == ' ')
    {
        head = head.saturating_sub(NEAR) + i;
    }
    if let Some(i) = chars[tail..(tail + NEAR).min(n)]
        .iter()
        .position(|c| *c == ' ')
    {
        tail += i + 1;
    }
    let mut out: String = chars[..head].iter().collect();
    out.push_str(" … ");
    out.extend(&chars[tail..]);
    out
}

/// Whether an error, or any of its causes, is this process running out
/// of descriptors (EMFILE).
pub fn out_of_files(err: &(dyn Error + 'static)) -> bool {
    std::iter::successors(Some(err), |&e| e.source()).any(is_emfile)
}

fn is_emfile(e: &(dyn Error + 'static)) -> bool {
    let errno = e
        .downcast_ref::<io::Error>()
        .and_then(io::Error::raw_os_error)
        .or_else(|| match e.downcast_ref::<ConnError>() {
            Some(ConnError::Io(io)) => io.raw_os_error(),
            _ => None,
        })
        .or_else(|| e.downcast_ref::<nix::errno::Errno>().map(|&n| n as i32));
    errno == Some(libc::EMFILE)
}

/// What to add when the cause is running out of descriptors: "Too many
/// open files" alone does not say whose limit it is or what to do, and a
/// dashboard over hundreds of sessions is where it happens.
fn limit_hint<'a>(mut chain: impl Iterator<Item = &'a (dyn Error + 'static)>) -> String {
    if chain.any(is_emfile) {
        format!(" ({})", limit_note())
    } else {
        String::new()
    }
}

/// The limit on descriptors that was reached, and what to do about it.
pub fn limit_note() -> String {
    let limit = crate::fd::soft_limit().map_or_else(|| "its".to_string(), |n| n.to_string());
    format!(
        "hm has reached its limit of {limit} open files (`ulimit -Hn`): raise it, \
         or split the sessions over socket directories"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::PathError;
    use crate::protocol::conn::ConnError;
    use crate::supervisor::pidfile::PidFileError;
    use std::io;
    use std::path::PathBuf;

    fn missing() -> io::Error {
        io::Error::from(io::ErrorKind::NotFound)
    }

    /// Every error type with a source says its own part only.
    #[test]
    fn long_parts_are_cut_keeping_their_ends() {
        assert_eq!(cut("short", 10), "short");
        let long = format!("start {} end", "x".repeat(10_000));
        let c = cut(&long, PART_MAX);
        assert!(c.starts_with("start x") && c.ends_with("x end"), "{c}");
        assert_eq!(c.chars().count(), PART_MAX + 3);
        let err = anyhow::anyhow!("{long}").context("reading");
        assert!(describe(&err).len() < 2 * PART_MAX, "{}", describe(&err));
        // A list loses whole names, not a name's middle.
        let names: Vec<String> = (0..100).map(|i| format!("key_number_{i}")).collect();
        let c = cut(&names.join(", "), 120);
        assert!(c.contains(" … ") && c.chars().count() <= 123, "{c}");
        for word in c.split([' ', ',']).filter(|w| !w.is_empty() && *w != "…") {
            assert!(names.iter().any(|n| n == word), "{word} in {c}");
        }
    }

    #[test]
    fn each_cause_is_said_once() {
        let path = PathBuf::from("/run/x.sock");
        let errors: Vec<Box<dyn Error>> = vec![
            Box::new(ConnError::Connect {
                path: path.clone(),
                source: missing(),
            }),
            Box::new(ConnError::Protocol(crate::protocol::FrameError::TooLarge {
                ty: 1,
                len: 9,
                max: 4,
            })),
            Box::new(PathError::Create {
                path: path.clone(),
                source: missing(),
            }),
            Box::new(PidFileError::Open {
                path: path.clone(),
                source: missing(),
            }),
            Box::new(PidFileError::Write {
                path,
                source: missing(),
            }),
        ];
        for e in &errors {
            let cause = e.source().expect("a cause").to_string();
            assert!(
                !e.to_string().contains(&cause),
                "{e} repeats its cause '{cause}'"
            );
            let line = one_line(e.as_ref());
            assert_eq!(line.matches(&cause).count(), 1, "{line}");
        }
    }

    #[test]
    fn a_chain_reads_outermost_first() {
        let err = anyhow::Error::new(ConnError::Connect {
            path: PathBuf::from("x"),
            source: missing(),
        })
        .context("starting");
        assert_eq!(
            describe(&err),
            "starting: cannot connect to 'x': entity not found"
        );
    }
}
