//! The first conversion to `std::time::Instant` made under a mock anchors
//! on the real clocks. Its own test binary (a process), so that the
//! conversion below is the process's first. Unix only: elsewhere (Windows)
//! std's `Instant` starts at boot, and a mock's reading, which lies about
//! the machine's uptime in the past, converts to that earliest instant.
#![cfg(all(feature = "std", feature = "mock", unix))]

use fastnow::mock::MockClock;
use fastnow::Instant;
use std::time::{Duration, Instant as StdInstant};

#[test]
fn anchor_taken_under_a_mock_is_real() {
    let _ = Instant::now();
    std::thread::sleep(Duration::from_millis(5));
    let clock = MockClock::install();
    let mocked = Instant::now();
    let s_mocked = StdInstant::from(mocked); // takes the anchor
    clock.advance(Duration::from_secs(1));
    assert_eq!(
        StdInstant::from(Instant::now()) - s_mocked,
        Duration::from_secs(1)
    );
    drop(clock);

    // Real readings convert beside std's: had the anchor paired std's
    // clock with the mock's, they would be off by the machine's uptime.
    let bound =
        Duration::from_nanos(fastnow::__test::std_anchor_width() / 2) + Duration::from_micros(200);
    let before = StdInstant::now();
    let converted = StdInstant::from(Instant::now());
    let after = StdInstant::now();
    assert!(
        converted + bound >= before && converted <= after + bound,
        "{converted:?} not within {bound:?} of [{before:?}, {after:?}]"
    );
    assert!(s_mocked < before);
}
