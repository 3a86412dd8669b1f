//! The session id target: id validation against the pattern written out
//! independently, and the paths built from an accepted id. Separate
//! because it checks `paths`, which nothing else here reads.

use std::path::Path;

use crate::paths::{self, MAX_ID_LEN, MAX_SOCKET_PATH, PathError, SessionPaths};

use super::assert_one_line;

/// `[A-Za-z0-9][A-Za-z0-9._-]{0,63}`, written out independently.
fn id_matches(id: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric();
    let mut chars = id.chars();
    chars.next().is_some_and(word)
        && chars.all(|c| word(c) || matches!(c, '.' | '_' | '-'))
        && id.chars().count() <= MAX_ID_LEN
}

/// Session id validation and the paths built from it.
///
/// The input is `<socket dir>\n<id>`, or just an id (then the dir is a
/// typical `/run/user/1000/heimdall`); invalid UTF-8 is replaced. Checks:
/// an id is accepted exactly when it matches the pattern; accepted paths
/// are `<dir>/<id>.{sock,pid,log}`, inside the dir, and the socket path
/// fits `sun_path`; a refused id's message is one printable line.
pub fn session_id(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (dir, id) = text
        .split_once('\n')
        .unwrap_or(("/run/user/1000/heimdall", &text));
    let dir = Path::new(dir);
    let matches = id_matches(id);
    match paths::validate_id(id) {
        Ok(()) => assert!(matches, "accepted {id:?}"),
        Err(e) => {
            assert!(!matches, "refused {id:?}");
            assert_one_line(&e.to_string());
        }
    }
    match SessionPaths::new(dir, id) {
        Ok(p) => {
            assert!(matches);
            assert_eq!(p.id, id);
            for (file, ext) in [(&p.sock, "sock"), (&p.pid, "pid"), (&p.log, "log")] {
                assert_eq!(file.parent(), Some(dir), "{file:?} outside {dir:?}");
                let name = file.file_name().map(|n| n.as_encoded_bytes());
                assert_eq!(name, Some(format!("{id}.{ext}").as_bytes()));
            }
            assert!(p.sock.as_os_str().len() <= MAX_SOCKET_PATH);
        }
        Err(PathError::SocketPathTooLong { len, .. }) => {
            assert!(matches);
            assert!(len > MAX_SOCKET_PATH);
            assert_eq!(len, dir.join(format!("{id}.sock")).as_os_str().len());
        }
        Err(PathError::InvalidId(shown)) => {
            assert!(!matches);
            assert!(shown.chars().count() <= 80);
        }
        Err(e) => panic!("unexpected error for a pure check: {e}"),
    }
}
