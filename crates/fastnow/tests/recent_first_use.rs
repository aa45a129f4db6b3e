//! `recent_unix_nanos()` never returns the cache's "unset" 0, even when a
//! global mock is installed between its own check for a mock and the first
//! refresh (which leaves the process's cache alone under a mock). Its own
//! test binary: the cache must be unset when the test starts, and the mock
//! applies to every thread.
#![cfg(feature = "mock")]

mod common;

use fastnow::mock::GlobalMockClock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static MOCK: Mutex<Option<GlobalMockClock>> = Mutex::new(None);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Installs the global mock, the first time only.
fn install_mock() {
    if !INSTALLED.swap(true, Ordering::SeqCst) {
        *MOCK.lock().unwrap() = Some(GlobalMockClock::install());
    }
}

fn system_unix_nanos() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

#[test]
fn mock_installed_during_the_first_refresh() {
    fastnow::__test::before_first_refresh(install_mock);
    let ns = fastnow::recent_unix_nanos();
    let mock = MOCK.lock().unwrap().take().expect("the hook ran");
    assert_ne!(ns, 0, "the unset cache leaked out");
    assert_eq!(
        ns,
        fastnow::unix_nanos(),
        "the mock's time, which it now reads"
    );
    assert_eq!(fastnow::recent_unix_nanos(), ns);
    drop(mock);

    // The real cache never held the mock's time, and fills on use.
    let real = fastnow::recent_unix_nanos();
    assert!(
        real.abs_diff(system_unix_nanos()) < 60_000_000_000,
        "{real} vs the system clock"
    );
    let t = fastnow::refresh();
    assert!(fastnow::recent() >= t);
    if !common::no_threads() {
        // The upkeep thread the first use started keeps it fresh.
        assert!(
            common::recent_advances_past(t),
            "the upkeep does not refresh"
        );
        assert!(fastnow::stop_upkeep());
    }
}
