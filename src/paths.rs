//! Where sessions live: the socket directory, session ids and file names.
//!
//! Everything here is checked before a supervisor creates anything: an id
//! that could escape the directory, a socket path too long for `sun_path`,
//! or a directory another user could read or write is refused with a
//! message that says how to fix it.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

/// `sun_path` is 108 bytes on Linux, one of which is the terminating NUL.
pub const MAX_SOCKET_PATH: usize = 107;
/// Longest session id.
pub const MAX_ID_LEN: usize = 64;
/// What an id may be ([`validate_id`]), in as few words as fit the
/// dashboard's footer at 80 columns with the id before it; the error of
/// the command line says the same at length.
pub const ID_RULE_SHORT: &str = "1-64 of A-Z a-z 0-9 . _ - (first a letter or digit)";

#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error(
        "invalid session id '{0}': use 1-64 ASCII letters, digits, '.', '_' or '-', starting with a letter or digit"
    )]
    InvalidId(String),
    #[error(
        "socket path '{}' is {len} bytes, over the {MAX_SOCKET_PATH}-byte limit of Unix sockets; use a shorter id or --socket-dir",
        path.display()
    )]
    SocketPathTooLong { path: PathBuf, len: usize },
    #[error("cannot create socket dir '{}'", path.display())]
    Create { path: PathBuf, source: io::Error },
    #[error("socket dir '{}' is not a directory", path.display())]
    NotADirectory { path: PathBuf },
    #[error(
        "socket dir '{}' is owned by uid {owner}, not by you (uid {me}); choose another with --socket-dir",
        path.display()
    )]
    ForeignOwner { path: PathBuf, owner: u32, me: u32 },
    #[error(
        "socket dir '{}' is accessible by other users (mode {mode:04o}); run 'chmod 700 {}' or choose another with --socket-dir",
        path.display(), path.display()
    )]
    TooOpen { path: PathBuf, mode: u32 },
    #[error(
        "socket dir '{}' is a shared directory (mode {mode:04o}); choose a private one with --socket-dir (one made with 'mkdir -m 700 DIR')",
        path.display()
    )]
    Shared { path: PathBuf, mode: u32 },
}

/// Checks a session id against `[A-Za-z0-9][A-Za-z0-9._-]{0,63}`.
pub fn validate_id(id: &str) -> Result<(), PathError> {
    let bytes = id.as_bytes();
    let ok = !bytes.is_empty()
        && bytes.len() <= MAX_ID_LEN
        && bytes[0].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(PathError::InvalidId(sanitize(id)))
    }
}

/// A session id from the file name of the program a command runs
/// (`python3` for `/usr/bin/python3`): what an id may not hold becomes '-',
/// it starts with a letter or digit, and it leaves room for a "-NNN"
/// suffix; `session` when nothing is left. What `hm run` and the
/// dashboard's form name a session no id was given for.
pub fn id_from_program(program: &Path) -> String {
    let name = program.file_name().unwrap_or_default().to_string_lossy();
    let id: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .skip_while(|c| !c.is_ascii_alphanumeric())
        .take(MAX_ID_LEN - 4)
        .collect();
    if id.is_empty() { "session".into() } else { id }
}

/// How many characters [`sanitize`] keeps.
const SHOWN_MAX: usize = 80;

/// Makes untrusted text safe to print: control characters (which could
/// drive the user's terminal) become `?`, and it is cut to 80 characters,
/// the last a `…` where it was cut (a command cut without one read as
/// whole in `hm ls`).
pub fn sanitize(s: &str) -> String {
    let mut shown: String = s.chars().take(SHOWN_MAX + 1).map(shown_char).collect();
    if shown.chars().count() > SHOWN_MAX {
        shown = shown.chars().take(SHOWN_MAX - 1).collect();
        shown.push('…');
    }
    shown
}

/// A character as [`sanitize`] and [`printable`] print it.
fn shown_char(c: char) -> char {
    if c.is_control() { '?' } else { c }
}

/// A character that shows nothing or turns the text around it: the
/// zero-width spaces, joiners and direction marks, the direction
/// embeddings and overrides, the word joiner, invisible operators and
/// isolates, and the byte-order mark. `hm explain` names them where it
/// quotes text; a label may have none.
pub fn invisible(c: char) -> bool {
    matches!(c,
        '\u{200b}'..='\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{2069}'
        | '\u{feff}')
}

/// [`sanitize`] without the cut: for a block that shows one thing whole
/// (`hm status`'s command, which may be long: `env -i KEY=... agent ...`).
pub fn printable(s: &str) -> String {
    s.chars().map(shown_char).collect()
}

/// A command's words for a person to read, [`printable`]: the value of a
/// setting or option that names a secret (`ANTHROPIC_API_KEY=sk-...`,
/// `GITHUB_TOKEN=...`, `--api-key sk-...`) is shown as `…`, so that `hm ls`
/// and `hm status` on a shared screen do not show it. A word the shell
/// would split or expand is quoted, so the line reads as the command it is
/// and pastes as one (`sh -c 'echo hi; exit 3'`). `--json` gives the words
/// unquoted, their secrets hidden alike ([`without_secrets`]).
pub fn command_for_people(words: &[String]) -> String {
    let shown: Vec<String> = without_secrets(words)
        .into_iter()
        .map(|w| match w {
            std::borrow::Cow::Borrowed(w) => quoted(w),
            std::borrow::Cow::Owned(hidden) => hidden,
        })
        .collect();
    printable(&shown.join(" "))
}

/// A command's words with the value of each setting or option that names
/// a secret replaced by `…` (see [`command_for_people`]); the others as
/// they are (borrowed). What `--json` gives too: a status pasted into a
/// bug report carried the key whole.
pub fn without_secrets(words: &[String]) -> Vec<std::borrow::Cow<'_, str>> {
    use std::borrow::Cow;
    let mut shown = Vec::with_capacity(words.len());
    let mut hide_next = false;
    for w in words {
        if std::mem::take(&mut hide_next) {
            shown.push(Cow::Owned("…".to_owned()));
            continue;
        }
        match w.split_once('=') {
            Some((name, _)) if names_a_secret(name.trim_start_matches('-')) => {
                shown.push(Cow::Owned(format!("{name}=…")));
            }
            None if w.starts_with("--") && names_a_secret(&w[2..]) => {
                hide_next = true;
                shown.push(Cow::Borrowed(w.as_str()));
            }
            _ => shown.push(Cow::Borrowed(w.as_str())),
        }
    }
    shown
}

/// `word` as a shell reads it back: quoted when it has a character the
/// shell would split it at or expand, else as it is. `=`, `%` and `,`,
/// which `shlex` quotes to be safe everywhere, do not call for it here:
/// `NAME=value` and `--model=x` read as people write them. Within single
/// quotes where it has none (`shlex` mixed quotes around a `$`: `sh -c
/// "bash -c \"read a; echo "'$a'`), and a line break or other control
/// character as bash and zsh read it back on one line (`$'a\nb'`): it was
/// printed as `?`.
fn quoted(word: &str) -> String {
    const SPECIAL: &str = " \t\n|&;<>()$`\\\"'*?[#~{}!^";
    if !word.is_empty() && !word.contains(|c| SPECIAL.contains(c)) {
        return word.to_owned();
    }
    if word.contains(char::is_control) {
        return ansi_c_quoted(word);
    }
    if !word.contains('\'') {
        return format!("'{word}'");
    }
    shlex::try_quote(word).map_or_else(|_| word.to_owned(), |q| q.into_owned())
}

/// `word` in `$'...'`, its control characters, backslashes and single
/// quotes escaped.
fn ansi_c_quoted(word: &str) -> String {
    let mut out = String::from("$'");
    for c in word.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// A setting's or option's name that says it holds a secret: made of
/// letters, digits, `_` and `-`, ending in KEY, TOKEN, SECRET or PASSWORD
/// (`OPENAI_API_KEY`, `api-key`, `DB_PASSWORD`).
pub(crate) fn names_a_secret(name: &str) -> bool {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let upper = name.to_ascii_uppercase();
    plain
        && ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD"]
            .iter()
            .any(|s| upper.ends_with(s))
}

/// The default socket dir: `$XDG_RUNTIME_DIR/heimdall` when that is an
/// absolute path, else `/tmp/heimdall-$UID`.
pub fn default_socket_dir(xdg_runtime_dir: Option<&OsStr>, uid: u32) -> PathBuf {
    match xdg_runtime_dir.map(Path::new) {
        Some(p) if p.is_absolute() => p.join("heimdall"),
        _ => PathBuf::from(format!("/tmp/heimdall-{uid}")),
    }
}

/// Stands for `--socket-dir` in every command when set and not empty.
pub const SOCKET_DIR_ENV: &str = "HM_SOCKET_DIR";

/// Picks the socket dir from the command line, [`SOCKET_DIR_ENV`], the
/// config, or the default, made absolute so a re-executed supervisor and
/// its launcher agree.
pub fn resolve_socket_dir(cli: Option<&Path>, config: Option<&Path>) -> PathBuf {
    // Read here rather than by clap: clap takes a set but empty variable
    // for a flag given no value, an error naming a flag nobody typed.
    let env = std::env::var_os(SOCKET_DIR_ENV).filter(|v| !v.is_empty());
    let dir = match cli.or(env.as_deref().map(Path::new)).or(config) {
        Some(p) => p.to_path_buf(),
        None => default_socket_dir(
            std::env::var_os("XDG_RUNTIME_DIR").as_deref(),
            nix::unistd::geteuid().as_raw(),
        ),
    };
    if dir.is_absolute() {
        dir
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(&dir))
            .unwrap_or(dir)
    }
}

/// A socket dir that exists and belongs to us alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketDir {
    path: PathBuf,
}

impl SocketDir {
    /// Creates the directory (missing components 0700) and checks it.
    pub fn ensure(path: &Path) -> Result<SocketDir, PathError> {
        match fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(path)
        {
            Ok(()) => {}
            Err(source) => {
                return Err(PathError::Create {
                    path: path.to_path_buf(),
                    source,
                });
            }
        }
        Self::check(path)
    }

    /// Checks an existing directory: ours, and closed to others. Clients
    /// use this too, so they never talk to a socket someone else planted.
    pub fn check(path: &Path) -> Result<SocketDir, PathError> {
        let meta = fs::metadata(path).map_err(|source| PathError::Create {
            path: path.to_path_buf(),
            source,
        })?;
        if !meta.is_dir() {
            return Err(PathError::NotADirectory {
                path: path.to_path_buf(),
            });
        }
        let me = nix::unistd::geteuid().as_raw();
        if meta.uid() != me {
            return Err(PathError::ForeignOwner {
                path: path.to_path_buf(),
                owner: meta.uid(),
                me,
            });
        }
        let mode = meta.mode() & 0o7777;
        // A sticky or world-writable directory (`/tmp` itself) is shared on
        // purpose: telling its owner to chmod it would break the system.
        if mode & 0o1002 != 0 {
            return Err(PathError::Shared {
                path: path.to_path_buf(),
                mode,
            });
        }
        if mode & 0o077 != 0 {
            return Err(PathError::TooOpen {
                path: path.to_path_buf(),
                mode,
            });
        }
        Ok(SocketDir {
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn session(&self, id: &str) -> Result<SessionPaths, PathError> {
        SessionPaths::new(&self.path, id)
    }
}

/// The files of one session inside the socket dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionPaths {
    pub id: String,
    pub sock: PathBuf,
    pub pid: PathBuf,
    pub log: PathBuf,
}

/// The socket dir that holds the session socket `sock` (where its record
/// and log are too).
pub fn dir_of(sock: &Path) -> &Path {
    sock.parent().unwrap_or(Path::new("."))
}

impl SessionPaths {
    /// Validates the id and the socket path length; touches nothing.
    pub fn new(dir: &Path, id: &str) -> Result<SessionPaths, PathError> {
        validate_id(id)?;
        let sock = dir.join(format!("{id}.sock"));
        let len = sock.as_os_str().len();
        if len > MAX_SOCKET_PATH {
            return Err(PathError::SocketPathTooLong { path: sock, len });
        }
        Ok(SessionPaths {
            id: id.to_string(),
            pid: dir.join(format!("{id}.pid")),
            log: dir.join(format!("{id}.log")),
            sock,
        })
    }
}

/// Session ids present in `dir`, found by their pid files, sorted. Names
/// that are not valid ids are skipped: they were not made by us.
pub fn list_ids(dir: &Path) -> io::Result<Vec<String>> {
    let mut ids = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(id) = name.strip_suffix(".pid")
            && validate_id(id).is_ok()
        {
            ids.push(id.to_string());
        }
    }
    ids.sort_by(|a, b| natural_cmp(a, b));
    Ok(ids)
}

/// Orders ids as people count: `agent2` before `agent10` (runs of digits
/// compare as numbers, the rest as text), and as people read, `api`
/// beside `API` rather than after every capital (`Zed` came before
/// `api`); case decides only between ids otherwise the same.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> impl Iterator<Item = (bool, &str)> {
        let mut rest = s;
        std::iter::from_fn(move || {
            let first = rest.chars().next()?;
            let digit = first.is_ascii_digit();
            let end = rest
                .find(|c: char| c.is_ascii_digit() != digit)
                .unwrap_or(rest.len());
            let (chunk, tail) = rest.split_at(end);
            rest = tail;
            Some((digit, chunk))
        })
    }
    let mut x = chunks(a);
    let mut y = chunks(b);
    loop {
        match (x.next(), y.next()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return std::cmp::Ordering::Less,
            (Some(_), None) => return std::cmp::Ordering::Greater,
            (Some((true, p)), Some((true, q))) => {
                let (p0, q0) = (p.trim_start_matches('0'), q.trim_start_matches('0'));
                let by_value = p0.len().cmp(&q0.len()).then_with(|| p0.cmp(q0));
                if by_value != std::cmp::Ordering::Equal {
                    return by_value;
                }
            }
            (Some((_, p)), Some((_, q))) => {
                fn lower(s: &str) -> impl Iterator<Item = u8> + '_ {
                    s.bytes().map(|b| b.to_ascii_lowercase())
                }
                let by_text = lower(p).cmp(lower(q));
                if by_text != std::cmp::Ordering::Equal {
                    return by_text;
                }
            }
        }
    }
}

/// `~` and `~/rest` become `home` and `home/rest`; other paths are kept.
pub fn expand_tilde(raw: &str, home: Option<&Path>) -> Result<PathBuf, String> {
    if raw.is_empty() {
        return Err("the path is empty (remove the key to use the default)".to_owned());
    }
    if raw.contains('\0') {
        return Err("the path contains a NUL character".to_owned());
    }
    // The kernel takes no longer path (PATH_MAX, its NUL included).
    if raw.len() >= 4096 {
        return Err(format!(
            "the path is {} bytes long; a path has at most 4095",
            raw.len()
        ));
    }
    let Some(rest) = raw.strip_prefix('~') else {
        return Ok(PathBuf::from(raw));
    };
    if !(rest.is_empty() || rest.starts_with('/')) {
        return Err(format!(
            "'{}': only '~' and '~/...' are expanded, not '~user' (write the full path)",
            raw.escape_debug()
        ));
    }
    let home = home.ok_or_else(|| {
        format!(
            "'{}' needs HOME, which is not set to an absolute path (write the full path)",
            raw.escape_debug()
        )
    })?;
    Ok(home.join(rest.trim_start_matches('/')))
}

#[cfg(test)]
mod tests {

    #[test]
    fn secrets_in_a_command_are_not_shown_to_people() {
        let words: Vec<String> = [
            "env",
            "ANTHROPIC_API_KEY=sk-ant-1",
            "ANTHROPIC_BASE_URL=http://x",
            "GH_TOKEN=ghp",
            "claude",
            "--api-key",
            "sk-2",
            "--auth-token=t",
            "--keys",
            "a",
            "KEY_FILE=/k",
        ]
        .map(str::to_owned)
        .to_vec();
        assert_eq!(
            super::command_for_people(&words),
            "env ANTHROPIC_API_KEY=… ANTHROPIC_BASE_URL=http://x GH_TOKEN=… claude \
             --api-key … --auth-token=… --keys a KEY_FILE=/k"
        );
    }

    #[test]
    fn a_command_reads_as_the_shell_would_take_it() {
        let words = |w: &[&str]| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            super::command_for_people(&words(&["sh", "-c", "echo hi; exit 3"])),
            "sh -c 'echo hi; exit 3'"
        );
        assert_eq!(
            super::command_for_people(&words(&["env", "A=1", "claude", "--model=x", "a,b", ""])),
            "env A=1 claude --model=x a,b ''"
        );
        assert_eq!(
            super::command_for_people(&words(&["printf", "it's $HOME"])),
            r#"printf "it's "'$HOME'"#
        );
        // A script of several lines, on one line as bash reads it back.
        assert_eq!(
            super::command_for_people(&words(&["python3", "-c", "import time\nprint('a\\b')"])),
            r"python3 -c $'import time\nprint(\'a\\b\')'"
        );
        assert_eq!(
            super::command_for_people(&words(&["printf", "\x1b[1m\u{85}"])),
            r"printf $'\u001b[1m\u0085'"
        );
        // Quotes of one kind within those of the other.
        assert_eq!(
            super::command_for_people(&words(&["sh", "-c", r#"read -p "Go? " a; echo "$a""#])),
            r#"sh -c 'read -p "Go? " a; echo "$a"'"#
        );
    }
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ids_sort_as_people_count() {
        let mut ids = vec![
            "agent10", "agent2", "agent1", "b", "a", "agent02", "x9y", "x10y",
        ];
        ids.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            ids,
            vec![
                "a", "agent1", "agent02", "agent2", "agent10", "b", "x9y", "x10y"
            ]
        );
        // Case aside: a capital does not put an id before every small
        // letter; it decides only between ids otherwise the same.
        let mut ids = vec!["zed", "Zed", "api", "B", "API", "b2"];
        ids.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(ids, vec!["API", "api", "B", "b2", "Zed", "zed"]);
    }

    #[test]
    fn ids_follow_the_pattern() {
        for ok in ["a", "A1", "api.v2", "x_y-z", &"a".repeat(64)] {
            assert!(validate_id(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            ".x",
            "-x",
            "_x",
            "../x",
            "/abs",
            "a/b",
            "a b",
            "é",
            "a\x1b",
            &"a".repeat(65),
        ] {
            assert!(validate_id(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn default_dir_prefers_an_absolute_runtime_dir() {
        assert_eq!(
            default_socket_dir(Some(OsStr::new("/run/user/7")), 7),
            PathBuf::from("/run/user/7/heimdall")
        );
        assert_eq!(
            default_socket_dir(Some(OsStr::new("relative")), 7),
            PathBuf::from("/tmp/heimdall-7")
        );
        assert_eq!(
            default_socket_dir(None, 7),
            PathBuf::from("/tmp/heimdall-7")
        );
    }

    #[test]
    fn long_socket_paths_are_refused() {
        let dir = PathBuf::from(format!("/{}", "d".repeat(90)));
        assert!(SessionPaths::new(&dir, "short").is_ok());
        let err = SessionPaths::new(&dir, &"x".repeat(20)).unwrap_err();
        assert!(matches!(err, PathError::SocketPathTooLong { .. }));
    }

    #[test]
    fn sanitize_removes_control_characters() {
        assert_eq!(sanitize("a\x1b[2Jb\n"), "a?[2Jb?");
    }

    #[test]
    fn sanitize_says_where_it_cut() {
        let long = "x".repeat(81);
        assert_eq!(sanitize(&long[..80]), long[..80]);
        let cut = sanitize(&long);
        assert_eq!(cut.chars().count(), 80);
        assert!(cut.ends_with("x…"), "{cut}");
    }

    proptest! {
        #[test]
        fn a_valid_id_stays_inside_the_dir(id in "\\PC{0,70}", depth in 1usize..6) {
            let dir: PathBuf = std::iter::repeat_n("seg", depth).fold(PathBuf::from("/"), |p, s| p.join(s));
            if let Ok(paths) = SessionPaths::new(&dir, &id) {
                prop_assert_eq!(paths.sock.parent(), Some(dir.as_path()));
                prop_assert_eq!(paths.pid.parent(), Some(dir.as_path()));
                prop_assert!(paths.sock.as_os_str().len() <= MAX_SOCKET_PATH);
                prop_assert!(validate_id(&id).is_ok());
            }
        }
    }
}
