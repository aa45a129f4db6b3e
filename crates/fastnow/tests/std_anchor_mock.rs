//! The first conversion to `std::time::Instant` made under a mock anchors
//! on the real clocks. Its own test binary (a process), so that the
//! conversion below is the process's first. Unix only: elsewhere (Windows)
//! std's `Instant` starts at boot, and a mock's reading from before then
//! converts to that earliest instant.
#![cfg(all(feature = "std", feature = "mock", unix))]

use fastnow::mock::MockClock;
use fastnow::Instant;
use std::time::{Duration, Instant as StdInstant};

#[test]
fn anchor_taken_under_a_mock_is_real() {
    let real = Instant::now();
    std::thread::sleep(Duration::from_millis(5));
    let clock = MockClock::install();
    // The mock an hour past the real clock, however long the machine has
    // been up: an anchor that paired std's clock with the mock's would put
    // real readings an hour off.
    let to_real = real.as_nanos().saturating_sub(Instant::now().as_nanos());
    clock.advance(Duration::from_nanos(to_real) + Duration::from_secs(3600));
    let mocked = Instant::now();
    let s_mocked = StdInstant::from(mocked); // takes the anchor
    clock.advance(Duration::from_secs(1));
    assert_eq!(
        StdInstant::from(Instant::now()) - s_mocked,
        Duration::from_secs(1)
    );
    drop(clock);

    // Real readings convert beside std's.
    let bound =
        Duration::from_nanos(fastnow::__test::std_anchor_width() / 2) + Duration::from_micros(200);
    let before = StdInstant::now();
    let converted = StdInstant::from(Instant::now());
    let after = StdInstant::now();
    assert!(
        converted + bound >= before && converted <= after + bound,
        "{converted:?} not within {bound:?} of [{before:?}, {after:?}]"
    );
    // And the mocked reading an hour (its distance from the real one) ahead.
    assert_eq!(
        s_mocked - StdInstant::from(real),
        Duration::from_nanos(mocked.as_nanos() - real.as_nanos())
    );
    assert!(s_mocked > after + Duration::from_secs(3000));
}
