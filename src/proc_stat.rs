//! A process's `/proc/PID/stat`, parsed: the fields hm reads of it. Pure
//! text in, fields out; reading the file is the caller's (the supervisor
//! reads it in one system call, as it does every small `/proc` file).
//!
//! The command name (field 2) is in parentheses and may itself hold
//! spaces and parentheses, so the fields are counted after the last `)`;
//! those are fixed by the kernel (see `proc_pid_stat(5)`).

/// The fields of one `/proc/PID/stat` that hm reads. Each is `None` where
/// the text does not have it as a number; callers decide which they need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// The state letter (field 3): `R`, `S`, `Z` for a zombie...
    pub state: char,
    /// The parent's pid (field 4).
    pub parent: Option<i32>,
    /// The process group (field 5).
    pub group: Option<i32>,
    /// The kernel's flags (field 9), `PF_*`.
    pub flags: Option<u64>,
    /// When it started, in clock ticks since boot (field 22): with the
    /// pid, the identity of a process across pid reuse.
    pub started: Option<u64>,
    /// Where its stack starts (field 28, `startstack`): a new program
    /// image after an `exec` gets a new one.
    pub stack: Option<u64>,
}

impl Stat {
    /// The fields of `text`, a `/proc/PID/stat`; `None` if it has no
    /// command name in parentheses or no state after it.
    pub fn parse(text: &str) -> Option<Stat> {
        let rest = text.get(text.rfind(')')? + 1..)?;
        let mut fields = rest.split_whitespace();
        let mut stat = Stat {
            state: fields.next()?.chars().next()?,
            parent: None,
            group: None,
            flags: None,
            started: None,
            stack: None,
        };
        // Counted from the state, field 3, which is 0 here.
        for (n, field) in (1..).zip(fields.take(25)) {
            match n {
                1 => stat.parent = field.parse().ok(),
                2 => stat.group = field.parse().ok(),
                6 => stat.flags = field.parse().ok(),
                19 => stat.started = field.parse().ok(),
                25 => stat.stack = field.parse().ok(),
                _ => {}
            }
        }
        Some(stat)
    }
}

/// The command name of `text`, a `/proc/PID/stat` (field 2, what
/// `/proc/PID/comm` holds): between the first `(` and the last `)`.
pub fn command_name(text: &str) -> Option<&str> {
    text.get(text.find('(')? + 1..text.rfind(')')?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real line (a shell), with the command name replaced by `comm`.
    fn line(comm: &str) -> String {
        format!(
            "4242 ({comm}) S 4100 4242 4242 34816 4242 4194560 1146 0 0 0 1 0 0 0 20 0 1 0 \
             987654 8757248 1280 18446744073709551615 94000000000000 94000000900000 \
             140731234567888 0 0 0 65536 3686404 1266761467 1 0 0 17 1 0 0 0 0 0\n"
        )
    }

    #[test]
    fn fields_are_read_after_the_command_name() {
        let stat = Stat::parse(&line("bash")).expect("parses");
        assert_eq!(
            stat,
            Stat {
                state: 'S',
                parent: Some(4100),
                group: Some(4242),
                flags: Some(4194560),
                started: Some(987654),
                stack: Some(140731234567888),
            }
        );
    }

    #[test]
    fn a_command_name_with_spaces_and_parentheses_is_skipped_whole() {
        for comm in ["a b", "x) S 1 2 3", "(sd-pam)", ") (", "))"] {
            let stat = Stat::parse(&line(comm)).expect(comm);
            assert_eq!(stat.state, 'S', "{comm}");
            assert_eq!(stat.parent, Some(4100), "{comm}");
            assert_eq!(stat.started, Some(987654), "{comm}");
        }
    }

    #[test]
    fn the_command_name_is_whole_whatever_it_holds() {
        for comm in ["bash", "a b", "x) S 1 2 3", "(sd-pam)", ") (", "))", ""] {
            assert_eq!(command_name(&line(comm)), Some(comm), "{comm}");
        }
        assert_eq!(command_name("4242 bash S 1"), None);
    }

    #[test]
    fn text_without_a_command_name_or_state_is_not_a_stat() {
        assert_eq!(Stat::parse(""), None);
        assert_eq!(Stat::parse("4242 bash S 1"), None);
        assert_eq!(Stat::parse("4242 (bash)"), None);
        assert_eq!(Stat::parse("4242 (bash)  \n"), None);
    }

    #[test]
    fn a_short_line_has_the_fields_it_has() {
        let stat = Stat::parse("4242 (bash) Z 1 4242").expect("parses");
        assert_eq!(
            (stat.state, stat.parent, stat.group),
            ('Z', Some(1), Some(4242))
        );
        assert_eq!((stat.flags, stat.started, stat.stack), (None, None, None));
    }

    #[test]
    fn this_process_parses() {
        let text = std::fs::read_to_string("/proc/self/stat").expect("stat");
        let stat = Stat::parse(&text).expect("parses");
        assert_eq!(
            stat.parent,
            Some(i32::try_from(std::os::unix::process::parent_id()).expect("pid"))
        );
        assert!(stat.started.is_some() && stat.stack.is_some());
    }
}
