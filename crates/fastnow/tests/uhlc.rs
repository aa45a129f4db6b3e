//! uhlc fed by fastnow (feature `uhlc`): `fastnow::uhlc::wall_clock` as
//! the physical clock of uhlc's own `HLC`, checked through uhlc's API
//! against fastnow's `unix_nanos`, real and mocked.
#![cfg(feature = "uhlc")]

use fastnow::hlc::Timestamp;
use proptest::prelude::*;
use std::time::Duration;
use uhlc::{HLCBuilder, NTP64};

/// The last 4 bits of an NTP64 fraction are uhlc's counter.
const UHLC_COUNTER: u64 = 0xf;

/// Real time: each stamp of a uhlc HLC on fastnow's clock lies between
/// the `unix_nanos` readings taken around it (within the 4-bit counter's
/// 2^-28 s and the NTP64 fraction's rounding).
#[test]
fn uhlc_stamps_follow_unix_nanos() {
    let hlc = HLCBuilder::new()
        .with_clock(fastnow::uhlc::wall_clock)
        .build();
    let mut last = hlc.new_timestamp();
    for _ in 0..10_000 {
        let before = fastnow::unix_nanos();
        let t = hlc.new_timestamp();
        let after = fastnow::unix_nanos();
        assert!(t > last);
        let ns = t.get_time().as_nanos();
        // The first 2^-28 s (3.7 ns) is the counter's; a stamp can also be
        // one count above the last when the clock has not moved, or has
        // moved back (the wall tier follows `CLOCK_REALTIME`, and an update
        // may re-anchor it a little below the readings before).
        let last_ns = last.get_time().as_nanos();
        assert!(
            ns + 4 >= before && ns <= after.max(last_ns) + 4,
            "{before} <= {ns} <= max({after}, {last_ns})"
        );
        last = t;
    }
}

/// Mocked time: uhlc reads exactly the wall time the mock sets, through
/// the same conversion as its own `NTP64::from(Duration)`, and its drift
/// check runs on it.
#[cfg(feature = "mock")]
#[test]
fn uhlc_reads_the_mocked_wall_clock() {
    let clock = fastnow::mock::MockClock::install();
    let hlc = HLCBuilder::new()
        .with_clock(fastnow::uhlc::wall_clock)
        .with_max_delta(Duration::from_millis(100))
        .build();
    let t0 = 1_700_000_000_123_456_789;
    clock.set_unix_nanos(t0);
    let ntp = |ns: u64| NTP64::from(Duration::from_nanos(ns));
    assert_eq!(fastnow::uhlc::wall_clock(), ntp(t0));
    let a = hlc.new_timestamp();
    assert_eq!(a.get_time().as_u64(), ntp(t0).as_u64() & !UHLC_COUNTER);
    let b = hlc.new_timestamp();
    assert_eq!(b.get_time().as_u64(), a.get_time().as_u64() + 1);
    clock.advance(Duration::from_micros(5));
    let c = hlc.new_timestamp();
    assert_eq!(
        c.get_time().as_u64(),
        ntp(t0 + 5_000).as_u64() & !UHLC_COUNTER
    );

    // A stamp from a clock 1 s ahead is refused; once the mock has moved
    // on by a second it is accepted.
    let other = HLCBuilder::new()
        .with_clock(fastnow::uhlc::wall_clock)
        .build();
    clock.set_unix_nanos(t0 + 1_000_000_000);
    let ahead = other.new_timestamp();
    clock.set_unix_nanos(t0 + 5_000);
    assert!(hlc.update_with_timestamp(&ahead).is_err());
    clock.set_unix_nanos(t0 + 950_000_000);
    assert!(hlc.update_with_timestamp(&ahead).is_ok());
    assert!(hlc.new_timestamp() > ahead);

    // Past NTP64's end (2106-02-07T06:28:16Z) the clock saturates.
    clock.set_unix_nanos(u64::MAX);
    assert_eq!(fastnow::uhlc::wall_clock(), NTP64(u64::MAX));
}

/// A fastnow stamp and an NTP64 are the same 64 bits, in the same order.
#[test]
fn timestamps_and_ntp64_keep_their_order() {
    let a = Timestamp::new(1_700_000_000_123_456_789, 3);
    let b = Timestamp::new(1_700_000_000_123_456_789, 4);
    let (na, nb) = (NTP64::from(a), NTP64::from(b));
    assert!(na < nb);
    assert_eq!(Timestamp::from(na), a);
    // As an NTP64 the stamp is within a unit (2^-16 s) after its physical part.
    let ns = na.as_nanos();
    assert!(ns >= a.physical_nanos() && ns - a.physical_nanos() < 15_259);
}

proptest! {
    /// The clock's conversion is uhlc's own, wherever uhlc's is defined.
    #[test]
    fn converts_as_uhlc_does(ns in 0u64..(1u64 << 32) * 1_000_000_000) {
        let ours = fastnow::hlc::Timestamp::new(ns, 0); // keeps the unit only
        let theirs = NTP64::from(Duration::from_nanos(ns));
        prop_assert_eq!(theirs.as_u64() >> 16, ours.to_u64() >> 16);
        #[cfg(feature = "mock")]
        {
            let clock = fastnow::mock::MockClock::install();
            clock.set_unix_nanos(ns);
            prop_assert_eq!(fastnow::uhlc::wall_clock(), theirs);
        }
    }
}
