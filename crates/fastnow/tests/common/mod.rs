//! What some targets cannot do: a test that needs it calls one of these
//! first and returns when it says so, having printed why.

use std::io::Write;

/// The reason goes straight to stderr, past the test harness's capture, so
/// a skip shows in every run's output, with the line of the test that asked.
#[track_caller]
fn skipped(reason: &str) {
    let at = std::panic::Location::caller();
    let _ = writeln!(std::io::stderr(), "{at}: skipped: {reason}");
}

/// wasm32-wasip1 has no threads (`thread::spawn` fails there).
#[allow(dead_code)]
#[track_caller]
pub fn no_threads() -> bool {
    let none = cfg!(all(target_os = "wasi", not(target_feature = "atomics")));
    if none {
        skipped("this target has no threads");
    }
    none
}

/// WASI cannot start processes.
#[allow(dead_code)]
#[track_caller]
pub fn no_processes() -> bool {
    let none = cfg!(target_os = "wasi");
    if none {
        skipped("this target cannot start processes");
    }
    none
}
