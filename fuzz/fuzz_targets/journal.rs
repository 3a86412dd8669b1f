#![no_main]

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

use libfuzzer_sys::fuzz_target;

thread_local! {
    static LAST: RefCell<String> = const { RefCell::new(String::new()) };
}

fuzz_target!(|data: &[u8]| {
    // As in tui_screen: vt100 panics that `Term` catches are survived; only
    // one that escapes the target is a crash.
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            LAST.with(|last| *last.borrow_mut() = info.to_string());
        }));
    });
    if catch_unwind(AssertUnwindSafe(|| heimdall::fuzzing::journal(data))).is_err() {
        LAST.with(|last| eprintln!("uncaught panic: {}", last.borrow()));
        std::process::abort();
    }
});
