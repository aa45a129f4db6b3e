//! The coarse tier's refresh and upkeep. One test function: upkeep is
//! process-wide and the thread count must not be disturbed by other tests.

mod common;

use std::time::Duration;

#[test]
fn refresh_and_upkeep() {
    // Without upkeep: the first read refreshes, then the value stays put
    // until refresh() is called.
    fastnow::set_auto_upkeep(false);
    let first = fastnow::recent();
    assert!(first <= fastnow::Instant::now());
    assert!(fastnow::recent_unix_nanos() > 1_600_000_000_000_000_000);
    std::thread::sleep(Duration::from_millis(5));
    assert_eq!(fastnow::recent(), first, "no upkeep, no refresh: unchanged");
    assert_eq!(fastnow::upkeep_resolution(), None);
    let now = fastnow::refresh();
    assert!(now.duration_since(first) >= Duration::from_millis(5));
    assert_eq!(fastnow::recent(), now);

    // Upkeep keeps it fresh, and start/stop leaks no thread.
    let base = common::threads();
    if base.is_none() {
        println!("no /proc/self/task on this target: upkeep thread leaks not checked");
    }
    let rounds = if common::no_threads() { 0 } else { 5 };
    for _ in 0..rounds {
        fastnow::start_upkeep(Duration::from_millis(1)).unwrap();
        if let Some(base) = base {
            assert_eq!(common::threads_settle_to(base + 1), base + 1);
        }
        let seen = fastnow::recent();
        // The thread refreshes every millisecond once it runs; on a loaded
        // machine it may wait for a core, so only a stopped thread fails.
        let give_up = std::time::Instant::now() + Duration::from_secs(10);
        while fastnow::recent() == seen && std::time::Instant::now() < give_up {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(fastnow::recent() > seen, "upkeep did not refresh");
        let stale = fastnow::Instant::now().duration_since(fastnow::recent());
        assert!(stale < Duration::from_millis(500), "stale by {stale:?}");
        assert!(matches!(
            fastnow::start_upkeep(Duration::from_millis(1)),
            Err(fastnow::UpkeepError::AlreadyRunning { .. })
        ));
        assert!(fastnow::stop_upkeep());
        if let Some(base) = base {
            assert_eq!(
                common::threads_settle_to(base),
                base,
                "upkeep thread leaked"
            );
        }
    }
    assert!(!fastnow::stop_upkeep());
    assert!(matches!(
        fastnow::start_upkeep(Duration::ZERO),
        Err(fastnow::UpkeepError::ZeroResolution)
    ));
    assert!(fastnow::UpkeepError::ZeroResolution
        .to_string()
        .contains("non-zero"));

    // After stopping, values stay as last refreshed.
    let frozen = fastnow::recent();
    std::thread::sleep(Duration::from_millis(5));
    assert_eq!(fastnow::recent(), frozen);
}
