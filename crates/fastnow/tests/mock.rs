//! The manual clock drives every tier deterministically (feature `mock`).
#![cfg(feature = "mock")]

mod common;

use fastnow::mock::MockClock;
use fastnow::{Instant, MonotonicInstant, OrderedInstant, UnixTime};
use proptest::prelude::*;
use std::time::Duration;

#[test]
fn drives_elapsed_exactly() {
    let clock = MockClock::install();
    let start = Instant::now();
    let (m, o) = (MonotonicInstant::now(), OrderedInstant::now());
    assert_eq!(start.elapsed(), Duration::ZERO);
    clock.advance(Duration::from_nanos(1_234_567_891));
    assert_eq!(start.elapsed(), Duration::from_nanos(1_234_567_891));
    assert_eq!(m.elapsed(), Duration::from_nanos(1_234_567_891));
    assert_eq!(o.elapsed(), Duration::from_nanos(1_234_567_891));
    let deadline = start + Duration::from_secs(5);
    assert_eq!(deadline - start, Duration::from_secs(5));
    clock.advance(Duration::from_secs(3)); // 4.23 s in
    assert!(Instant::now() > deadline - Duration::from_secs(1));
    assert!(Instant::now() < deadline);
    clock.advance(Duration::from_secs(1)); // 5.23 s in
    assert!(Instant::now() > deadline);
    assert_eq!(fastnow::recent(), Instant::now());
}

#[test]
fn drives_the_wall_and_coarse_tiers() {
    let clock = MockClock::install();
    let t0 = fastnow::unix_nanos();
    clock.advance(Duration::from_millis(250));
    assert_eq!(fastnow::unix_nanos() - t0, 250_000_000);
    assert_eq!(fastnow::recent_unix_nanos(), fastnow::unix_nanos());
    clock.set_unix_nanos(1_700_000_000_000_000_000);
    assert_eq!(UnixTime::now().as_secs(), 1_700_000_000);
    // A step of the Unix time leaves the monotonic time alone.
    let before = clock.nanos();
    clock.set_unix_nanos(0);
    assert_eq!(clock.nanos(), before);
}

#[test]
fn only_this_thread_and_only_while_installed() {
    if common::no_threads() {
        return;
    }
    let clock = MockClock::install();
    clock.advance(Duration::from_secs(3600));
    let mocked = Instant::now().as_nanos();
    let real = std::thread::spawn(|| Instant::now().as_nanos())
        .join()
        .unwrap();
    assert_ne!(mocked, real);
    drop(clock);
    let after = Instant::now();
    std::thread::sleep(Duration::from_millis(2));
    assert!(
        after.elapsed() >= Duration::from_millis(1),
        "real clock back"
    );
}

#[test]
#[should_panic(expected = "already installed")]
fn one_mock_per_thread() {
    let _a = MockClock::install();
    let _b = MockClock::install();
}

/// A mock's time never leaks into the process's: `refresh()` under a mock
/// returns the mock's time and leaves the shared cache alone, so other
/// threads' `recent()` stays real after the mock jumps ten years.
#[test]
fn never_touches_the_process_clock() {
    if common::no_threads() {
        return;
    }
    let real_before = fastnow::refresh();
    let clock = MockClock::install();
    clock.advance(Duration::from_secs(10 * 365 * 86_400));
    let mocked = fastnow::refresh();
    assert_eq!(mocked.as_nanos(), clock.nanos(), "refresh reads the mock");
    let (recent, recent_unix) =
        std::thread::spawn(|| (fastnow::recent(), fastnow::recent_unix_nanos()))
            .join()
            .unwrap();
    let real_now = std::thread::spawn(fastnow::MonotonicInstant::now)
        .join()
        .unwrap();
    assert!(recent >= real_before, "the cache went backwards");
    assert!(
        recent <= real_now.as_instant(),
        "the cache holds the mock's time"
    );
    let sys = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    assert!(recent_unix <= sys, "the wall cache holds the mock's time");
}

/// Advancing past the largest reading stops the mock there: no panic, no
/// wrap, and no later reading is smaller (the same outcome as Go's
/// `ManualClock.Advance` at its own largest reading).
#[test]
fn advance_saturates_at_the_largest_reading() {
    let clock = MockClock::install();
    let start = Instant::now();
    let unix_start = fastnow::unix_nanos();
    clock.advance(Duration::from_secs(5));
    let before = Instant::now();
    clock.advance(Duration::MAX);
    let end = Instant::now();
    assert_eq!(clock.nanos(), u64::MAX);
    assert_eq!(end.as_nanos(), u64::MAX, "the largest reading");
    assert!(end > before && before > start);
    assert_eq!(fastnow::unix_nanos(), u64::MAX);
    assert!(fastnow::unix_nanos() > unix_start);
    // Further advances, of any size, leave it there.
    for by in [
        Duration::from_nanos(1),
        Duration::from_secs(1),
        Duration::MAX,
    ] {
        clock.advance(by);
        assert_eq!(Instant::now(), end);
        assert_eq!(fastnow::recent(), end);
        assert_eq!(MonotonicInstant::now().as_instant(), end);
        assert_eq!(OrderedInstant::now().as_unordered(), end);
        assert_eq!(fastnow::recent_unix_nanos(), u64::MAX);
    }
    assert_eq!(start.elapsed(), end - start);
    assert_eq!(end.elapsed(), Duration::ZERO);
    // Up to exactly the largest reading, then one more nanosecond.
    drop(clock);
    let clock = MockClock::install();
    clock.advance(Duration::from_nanos(u64::MAX - clock.nanos()));
    assert_eq!(clock.nanos(), u64::MAX);
    clock.advance(Duration::from_nanos(1));
    assert_eq!(clock.nanos(), u64::MAX);
}

proptest! {
    /// Any sequence of advances: the mock's time is the saturating sum, and
    /// it never decreases.
    #[test]
    fn advances_add_up_and_saturate(
        steps in prop::collection::vec(
            prop_oneof![
                (0u64..2_000_000_000).prop_map(Duration::from_nanos),
                (0u64..=u64::MAX, 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
                Just(Duration::MAX),
            ],
            0..12,
        ),
        unix in 0u64..=u64::MAX,
    ) {
        let clock = MockClock::install();
        clock.set_unix_nanos(unix);
        let (mut mono, mut wall) = (clock.nanos(), unix);
        for by in steps {
            let ns = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
            let (last, last_unix) = (Instant::now(), fastnow::unix_nanos());
            clock.advance(by);
            mono = mono.saturating_add(ns);
            wall = wall.saturating_add(ns);
            prop_assert_eq!(clock.nanos(), mono);
            prop_assert_eq!(fastnow::unix_nanos(), wall);
            prop_assert!(Instant::now() >= last);
            prop_assert!(fastnow::unix_nanos() >= last_unix);
        }
    }
}
