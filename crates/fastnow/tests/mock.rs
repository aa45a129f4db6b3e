//! The manual clock drives every tier deterministically (feature `mock`).
#![cfg(feature = "mock")]

mod common;

use fastnow::mock::MockClock;
use fastnow::{Instant, MonotonicInstant, OrderedInstant, UnixTime};
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
