//! The three instant types as `std::time::Instant` (feature `std`), and the
//! coarse tier's `Instant::recent`.
#![cfg(all(
    feature = "std",
    not(all(target_family = "wasm", target_os = "unknown"))
))]

use fastnow::{Instant, MonotonicInstant, OrderedInstant};
use proptest::prelude::*;
use std::sync::Once;
use std::time::{Duration, Instant as StdInstant};

/// What a conversion may be off by beyond half the anchor's bracket: a
/// plain reading taken early by the CPU's speculation window, the rounding
/// of the bracket's midpoint, and the drift of fastnow's timeline from
/// std's clock over this test's lifetime. Loose on purpose (noisy machines,
/// emulators); a wrong anchor is off by far more.
const SLACK: Duration = Duration::from_micros(200);

/// Readings are past fastnow's first millisecond (when it reads the OS
/// clock and then switches to the counter) before the first conversion:
/// the anchor is taken on the timeline the tests then read.
fn settled() {
    static SETTLED: Once = Once::new();
    SETTLED.call_once(|| {
        let _ = Instant::now();
        std::thread::sleep(Duration::from_millis(5));
        let _ = Instant::now();
    });
}

/// Under an emulator (`FASTNOW_TEST_RUNNER` names it) the counter's rate,
/// measured over the first millisecond, can be off by a thousand ppm until
/// the first refinement, and the test runs for seconds: 20 ms.
const EMULATED_SLACK: Duration = Duration::from_millis(20);

fn bound() -> Duration {
    let slack = if std::env::var_os("FASTNOW_TEST_RUNNER").is_some() {
        EMULATED_SLACK
    } else {
        SLACK
    };
    Duration::from_nanos(fastnow::__test::std_anchor_width() / 2) + slack
}

/// A conversion of a reading taken now lands within the bound of std's
/// own reading beside it, for every type.
#[test]
fn lands_beside_std_now() {
    settled();
    let bound = bound();
    for _ in 0..1_000 {
        let before = StdInstant::now();
        let (a, b, c) = (
            Instant::now(),
            MonotonicInstant::now(),
            OrderedInstant::now(),
        );
        let after = StdInstant::now();
        for converted in [
            StdInstant::from(a),
            StdInstant::from(b),
            StdInstant::from(c),
        ] {
            assert!(
                converted + bound >= before && converted <= after + bound,
                "{converted:?} not within {bound:?} of [{before:?}, {after:?}]"
            );
        }
    }
}

/// The same instant always converts to the same std instant, whatever its
/// type.
#[test]
fn one_function_of_the_value() {
    settled();
    let t = MonotonicInstant::now();
    let o = OrderedInstant::now();
    assert_eq!(StdInstant::from(t), StdInstant::from(t.as_instant()));
    assert_eq!(StdInstant::from(o), StdInstant::from(o.as_unordered()));
    assert_eq!(StdInstant::from(t), StdInstant::from(t));
}

/// Intervals survive the conversion exactly: std's elapsed between two
/// converted readings is fastnow's.
#[test]
fn intervals_are_kept() {
    settled();
    let a = Instant::now();
    std::thread::sleep(Duration::from_millis(2));
    let b = Instant::now();
    assert_eq!(StdInstant::from(b) - StdInstant::from(a), b - a);
    assert!(StdInstant::from(b) > StdInstant::from(a));
}

#[cfg(unix)]
fn anchor_nanos() -> u64 {
    settled();
    Instant::now().as_nanos()
}

proptest! {
    /// Differences of converted instants equal the fastnow differences,
    /// both ways and across the anchor, within a century of now (on Unix:
    /// on Windows std's `Instant` starts at boot, and earlier instants
    /// clamp to it, as the conversion's docs say).
    #[test]
    #[cfg(unix)]
    fn differences_are_exact(
        x in -(100i64 * 365 * 86_400 * 1_000_000_000)..(100i64 * 365 * 86_400 * 1_000_000_000),
        y in -(100i64 * 365 * 86_400 * 1_000_000_000)..(100i64 * 365 * 86_400 * 1_000_000_000),
    ) {
        let now = anchor_nanos();
        let a = Instant::from_nanos(now.checked_add_signed(x).unwrap());
        let b = Instant::from_nanos(now.checked_add_signed(y).unwrap());
        let (sa, sb) = (StdInstant::from(a), StdInstant::from(b));
        prop_assert_eq!(sb.checked_duration_since(sa), b.checked_duration_since(a));
        prop_assert_eq!(sa.checked_duration_since(sb), a.checked_duration_since(b));
        prop_assert_eq!(sa.cmp(&sb), a.cmp(&b));
    }

    /// Any value at all converts without a panic, and order is kept (equal
    /// instants allowed where std's range ends and values are clamped).
    #[test]
    fn any_value_converts_in_order(x in any::<u64>(), y in any::<u64>()) {
        let (a, b) = (Instant::from_nanos(x.min(y)), Instant::from_nanos(x.max(y)));
        prop_assert!(StdInstant::from(a) <= StdInstant::from(b));
    }
}

/// The ends of fastnow's timeline convert without a panic; where std's
/// `Instant` reaches them (Unix: it counts seconds in an `i64`) exactly.
#[test]
fn ends_of_the_timeline() {
    settled();
    let now = Instant::now();
    let (zero, max) = (Instant::from_nanos(0), Instant::from_nanos(u64::MAX));
    let (s_zero, s_now, s_max) = (
        StdInstant::from(zero),
        StdInstant::from(now),
        StdInstant::from(max),
    );
    assert!(s_zero <= s_now && s_now <= s_max);
    #[cfg(unix)]
    {
        assert_eq!(s_now - s_zero, now - zero);
        assert_eq!(s_max - s_now, max - now);
    }
}

/// A mock's readings convert as any value does: each to the std instant of
/// the real reading with the same value (on whichever side of it the
/// mock's value lies: the mock starts one second after the OS clock's
/// zero, so how far back that is depends on how long the machine has been
/// up, and nothing here assumes it), one mock second to one std second, and
/// the same with or without the mock installed. Unix only: on Windows
/// std's `Instant` starts at boot, before which the mock's readings lie.
#[cfg(all(feature = "mock", unix))]
#[test]
fn mocked_readings_convert_as_values() {
    use fastnow::mock::MockClock;
    settled();
    let real = Instant::now();
    let s_real = StdInstant::from(real);
    let clock = MockClock::install();
    let start = Instant::now();
    clock.advance(Duration::from_secs(5));
    let later = Instant::now();
    let (s_start, s_later) = (StdInstant::from(start), StdInstant::from(later));
    assert_eq!(s_later - s_start, Duration::from_secs(5));
    let signed = |a: StdInstant, b: StdInstant| match b.checked_duration_since(a) {
        Some(ahead) => ahead.as_nanos() as i128,
        None => -((a - b).as_nanos() as i128),
    };
    for (t, s_t) in [(start, s_start), (later, s_later)] {
        assert_eq!(
            signed(s_real, s_t),
            i128::from(t.as_nanos()) - i128::from(real.as_nanos()),
            "{t:?} against the real {real:?}"
        );
    }
    // Moved an hour past the real reading, the mock converts to std's future.
    clock.advance(Duration::from_nanos(
        real.as_nanos().saturating_sub(later.as_nanos()),
    ));
    clock.advance(Duration::from_secs(3600));
    let ahead = StdInstant::from(Instant::now());
    assert!(
        ahead >= StdInstant::now() + Duration::from_secs(3000),
        "{ahead:?}"
    );
    drop(clock);
    assert_eq!(StdInstant::from(start), s_start);
    assert_eq!(StdInstant::from(later), s_later);
}

/// `Instant::recent()` is `fastnow::recent()`: the same cached reading.
#[test]
fn instant_recent_is_recent() {
    fastnow::stop_upkeep();
    fastnow::set_auto_upkeep(false);
    let refreshed = fastnow::refresh();
    assert_eq!(Instant::recent(), refreshed);
    assert_eq!(Instant::recent(), fastnow::recent());
    assert_eq!(
        fastnow::UnixTime::recent().as_nanos(),
        fastnow::recent_unix_nanos()
    );
    assert!(Instant::recent() <= OrderedInstant::now().as_unordered());
}

/// Under a mock both spellings read the mock, as every clock does.
#[cfg(feature = "mock")]
#[test]
fn instant_recent_follows_the_mock() {
    let clock = fastnow::mock::MockClock::install();
    clock.advance(Duration::from_secs(3));
    assert_eq!(Instant::recent(), Instant::now());
    assert_eq!(Instant::recent().as_nanos(), clock.nanos());
    assert_eq!(
        fastnow::UnixTime::recent(),
        fastnow::UnixTime::now(),
        "UnixTime::recent reads the mock too"
    );
}
