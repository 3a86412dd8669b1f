//! What an idle supervisor gives back to the system when its session comes
//! to rest: an idle supervisor is one of dozens, and what it keeps
//! resident is paid per session.
//!
//! - Freed heap memory: work done once (reading the rule files, compiling
//!   a rule's regex, a burst of output) leaves pages glibc keeps.
//! - The pages of hm's own code and constants it has mapped. They are
//!   shared with every other `hm` (the page cache holds them once), but
//!   each process maps them itself, and the kernel maps 64 KiB around
//!   every page a process touches (fault-around): after its start-up a
//!   supervisor maps most of the binary, 4.6 MiB of its resident set, while
//!   at rest it runs none of it. Unmapped, they come back as minor faults
//!   (from the page cache, no I/O) when the session works again. Only
//!   mappings of the executable that are read-only and were never written
//!   (no anonymous page, one copied on a write: not the ones relocations
//!   touched) are dropped: their content is the file's, so nothing is
//!   lost.
//! - The stack below what is in use now: start-up (argument parsing,
//!   reading the configuration) goes deeper than serving a session does,
//!   and those pages stay resident. Below the stack pointer nothing is
//!   live; a page used again later comes back zeroed, as new stack.

use std::sync::OnceLock;

/// Stack kept below the caller's frame: what the calls made from here
/// (the `madvise` themselves, a few hundred bytes) use, with a margin.
/// Every page of it stays resident in every idle supervisor.
const STACK_MARGIN: usize = 8 * 1024;
const PAGE: usize = 4096;

/// Hands free and unused pages back (see the module's comment).
pub fn release_free_memory() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim takes no pointers; it only walks glibc's own
    // heap under its own locks and may be called at any time.
    unsafe {
        libc::malloc_trim(0);
    }
    let mappings = MAPPINGS.get_or_init(Mappings::read);
    for &(start, end) in &mappings.clean_code {
        forget(start, end);
    }
    if let Some((start, end)) = mappings.stack {
        let marker = 0u8;
        let here = std::hint::black_box(std::ptr::addr_of!(marker)) as usize;
        let below = here.saturating_sub(STACK_MARGIN) & !(PAGE - 1);
        // Only on the main thread's own stack (another thread's frames
        // are elsewhere, and the main thread's would be live).
        if (start..end).contains(&here) && below > start {
            forget(start, below);
        }
    }
}

/// Drops this process's pages in `[start, end)`: file pages are read
/// again from the page cache, anonymous ones come back zeroed.
fn forget(start: usize, end: usize) {
    // SAFETY: the range is one the kernel reported as a mapping of this
    // process that holds nothing that must survive (see `Mappings`):
    // read-only, never-written pages of the executable, whose content is
    // the file's, or stack below every live frame. MADV_DONTNEED only
    // unmaps pages; it never frees the mapping itself.
    let rc = unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) };
    if rc != 0 {
        tracing::debug!("madvise: {}", std::io::Error::last_os_error());
    }
}

static MAPPINGS: OnceLock<Mappings> = OnceLock::new();

/// The mappings worth dropping at rest, read once from `/proc/self/smaps`
/// (after start-up: everything that writes to the executable's pages,
/// relocations included, is done by then).
#[derive(Debug, Default)]
struct Mappings {
    /// The executable's read-only, never-written mappings.
    clean_code: Vec<(usize, usize)>,
    /// The main thread's stack (the supervisor's only thread).
    stack: Option<(usize, usize)>,
}

impl Mappings {
    fn read() -> Mappings {
        use std::os::unix::fs::MetadataExt;
        let mut found = Mappings::default();
        let (Ok(smaps), Ok(exe)) = (
            std::fs::read_to_string("/proc/self/smaps"),
            std::fs::metadata("/proc/self/exe"),
        ) else {
            return found;
        };
        let exe = exe.ino().to_string();
        // The mapping whose fields are being read: its range, and whether
        // it is one of the executable's read-only ones.
        let mut current: Option<((usize, usize), bool)> = None;
        let mut dirty = false;
        let close = |current: Option<((usize, usize), bool)>, dirty: bool, out: &mut Mappings| {
            if let Some((range, true)) = current
                && !dirty
            {
                out.clean_code.push(range);
            }
        };
        for line in smaps.lines() {
            let mut words = line.split_whitespace();
            let Some(first) = words.next() else { continue };
            if let Some((a, b)) = first.split_once('-')
                && let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
            {
                close(current.take(), dirty, &mut found);
                dirty = false;
                let perms = words.next().unwrap_or_default();
                let inode = words.nth(2).unwrap_or_default();
                let path = words.next().unwrap_or_default();
                if path == "[stack]" {
                    found.stack = Some((a, b));
                }
                let code = inode == exe && matches!(perms, "r-xp" | "r--p");
                current = Some(((a, b), code));
                continue;
            }
            // A field line: an anonymous page (one copied on a write)
            // keeps the mapping. Private_Dirty is no test: it counts the
            // file's own page-cache pages that are not yet written back
            // (a binary just linked), which hold the file's content.
            if first == "Anonymous:" && words.next().is_some_and(|kb| kb != "0") {
                dirty = true;
            }
        }
        close(current, dirty, &mut found);
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_clean_read_only_mappings_of_the_executable_are_dropped() {
        let m = Mappings::read();
        assert!(m.stack.is_some(), "no stack in {m:?}");
        assert!(!m.clean_code.is_empty(), "no code in {m:?}");
        // Dropping them and running code and reading constants after
        // works: the pages come back from the file.
        release_free_memory();
        let text: String = format!("{:?}", (1..5).map(|i| i * 3).collect::<Vec<_>>());
        assert_eq!(text, "[3, 6, 9, 12]");
    }
}
