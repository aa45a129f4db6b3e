//! The coarse tier's refresh and upkeep. One test function: upkeep is
//! process-wide and the thread count must not be disturbed by other tests.

mod common;

use std::time::Duration;

#[test]
fn refresh_and_upkeep() {
    // Without upkeep: the first read refreshes, then the value stays put
    // until refresh() is called.
    fastnow::set_auto_upkeep(false);
    let before = common::system_unix_nanos();
    let first = fastnow::recent();
    assert!(first <= fastnow::Instant::now());
    // The refresh was real: the system clock's time, give or take the wall
    // tier's error (an unset or garbled cache is off by decades).
    let unix = fastnow::recent_unix_nanos();
    let after = common::system_unix_nanos();
    assert!(
        unix + 1_000_000_000 >= before && unix <= after + 1_000_000_000,
        "{unix} outside [{before}, {after}]"
    );
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
        assert!(common::recent_advances_past(seen), "upkeep did not refresh");
        // Every millisecond: the shortest of a few gaps is, however loaded
        // the machine (a thread that sleeps 5 s between refreshes fails).
        let gap = common::shortest_refresh_gap().expect("the upkeep stopped refreshing");
        assert!(
            gap < Duration::from_millis(50),
            "refreshes {gap:?} apart at best"
        );
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
