//! `fastnow::governor::FastnowClock` with the real governor crate: a rate
//! limiter on real time (tolerant counts) and on fastnow's global mock
//! (exact counts).
#![cfg(feature = "governor")]

use fastnow::governor::FastnowClock;
use governor::clock::{Clock, Reference};
use governor::nanos::Nanos;
use governor::{Quota, RateLimiter};
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::Duration;

/// The global mock is seen by every thread: the real-time test does not
/// run while it is installed.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn ten_per_second() -> Quota {
    Quota::per_second(NonZeroU32::new(10).unwrap())
}

/// 10/s with a burst of 10, checked for 1.5 s: 10 + 15 = 25 allowed, give
/// or take one at each end (when the loop's last check falls).
#[test]
fn ten_per_second_for_one_and_a_half_seconds() {
    let _serial = serial();
    let limiter = RateLimiter::direct_with_clock(ten_per_second(), FastnowClock);
    let start = std::time::Instant::now();
    let mut allowed = 0;
    while start.elapsed() < Duration::from_millis(1500) {
        if limiter.check().is_ok() {
            allowed += 1;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!((23..=27).contains(&allowed), "{allowed} allowed");
}

/// Under the global mock the limiter moves only when the mock does: the
/// burst, then exactly one cell per 100 ms, and `NotUntil` in fastnow
/// instants.
#[cfg(feature = "mock")]
#[test]
fn exact_under_the_global_mock() {
    let _serial = serial();
    let clock = fastnow::mock::GlobalMockClock::install();
    let limiter = RateLimiter::direct_with_clock(ten_per_second(), FastnowClock);
    let burst = (0..100).filter(|_| limiter.check().is_ok()).count();
    assert_eq!(burst, 10);

    let denied = limiter.check().unwrap_err();
    let now = fastnow::Instant::now();
    assert_eq!(denied.wait_time_from(now), Duration::from_millis(100));
    assert_eq!(denied.earliest_possible(), now + Duration::from_millis(100));

    clock.advance(Duration::from_millis(99));
    assert!(limiter.check().is_err());
    clock.advance(Duration::from_millis(1));
    assert!(limiter.check().is_ok());
    assert!(limiter.check().is_err());

    // 1.5 s more, a millisecond at a time, checking at every step.
    let mut allowed = 0;
    for _ in 0..1500 {
        clock.advance(Duration::from_millis(1));
        while limiter.check().is_ok() {
            allowed += 1;
        }
    }
    assert_eq!(allowed, 15);

    // Idle for a minute: the burst refills to 10, no more.
    clock.advance(Duration::from_secs(60));
    assert_eq!((0..100).filter(|_| limiter.check().is_ok()).count(), 10);
    drop(clock);
}

/// The `Reference` arithmetic governor relies on saturates, at both ends.
#[test]
fn reference_saturates() {
    let t = fastnow::Instant::from_nanos(1_000);
    let later = fastnow::Instant::from_nanos(1_500);
    assert_eq!(Reference::duration_since(&later, t), Nanos::new(500));
    assert_eq!(Reference::duration_since(&t, later), Nanos::new(0));
    assert_eq!(
        Reference::saturating_sub(&t, Nanos::new(400)),
        fastnow::Instant::from_nanos(600)
    );
    assert_eq!(Reference::saturating_sub(&t, Nanos::new(1_001)), t);
    assert_eq!(t + Nanos::new(500), later);
    assert_eq!(
        t + Nanos::new(u64::MAX),
        fastnow::Instant::from_nanos(u64::MAX)
    );
    let _serial = serial();
    let before = fastnow::Instant::now();
    let read = FastnowClock.now();
    assert!(read >= before && read <= fastnow::Instant::now());
}

/// The clock serves governor's asynchronous waits.
#[test]
fn reasonably_realtime() {
    fn realtime<C: governor::clock::ReasonablyRealtime>(c: &C) -> C::Instant {
        c.reference_point()
    }
    let _serial = serial();
    let before = fastnow::Instant::now();
    assert!(realtime(&FastnowClock) >= before);
}
