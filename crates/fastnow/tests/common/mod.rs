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

/// WASI (wasm32-wasip1, wasm32-wasip2) has no threads (`thread::spawn`
/// fails there).
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

/// This process's threads, as Linux lists them (`None` elsewhere: a leak
/// check is then skipped; under Wine the path would name Wine's own
/// threads).
#[allow(dead_code)]
pub fn threads() -> Option<usize> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    std::fs::read_dir("/proc/self/task").ok().map(|d| d.count())
}

/// The kernel may list a joined thread for a moment after `join` returns;
/// a leaked thread stays. Waits up to a second for the count to settle.
#[allow(dead_code)]
pub fn threads_settle_to(expected: usize) -> usize {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    loop {
        let n = threads().unwrap_or(0);
        if n == expected || std::time::Instant::now() > deadline {
            return n;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}
