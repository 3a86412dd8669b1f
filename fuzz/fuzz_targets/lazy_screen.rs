#![no_main]

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};

use libfuzzer_sys::fuzz_target;

/// Panics seen by the hook: vt100's, caught and survived by `Term`, plus at
/// most one uncaught one, which ends the run.
static PANICS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static LAST: RefCell<String> = const { RefCell::new(String::new()) };
}

fuzz_target!(|data: &[u8]| {
    // libfuzzer-sys's panic hook aborts on every panic, even one that is
    // caught: that would report each vt100 panic `Term` recovers from as a
    // crash. This hook only remembers the message; a panic that escapes
    // the target is reported and aborts below.
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let n = PANICS.fetch_add(1, Ordering::Relaxed) + 1;
            let msg = info.to_string();
            if n.is_power_of_two() {
                eprintln!("panic #{n} (Term catches vt100's): {msg}");
            }
            LAST.with(|last| *last.borrow_mut() = msg);
        }));
    });
    if catch_unwind(AssertUnwindSafe(|| heimdall::fuzzing::lazy_screen(data))).is_err() {
        LAST.with(|last| eprintln!("uncaught panic: {}", last.borrow()));
        std::process::abort();
    }
});
