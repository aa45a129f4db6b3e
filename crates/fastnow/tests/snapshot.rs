//! Conversions between fastnow's instants and the kernel's clocks, and the
//! clock snapshot, against the kernel's clocks here (spec/SEMANTICS.md,
//! "Clock snapshot and the kernel's clocks").
#![cfg(any(target_os = "linux", target_os = "android"))]

use fastnow::{conversion_error, BootInstant, ClockSnapshot, Instant};
use proptest::prelude::*;
use std::time::Duration;

fn clock(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid, writable timespec and a clock Linux has.
    assert_eq!(unsafe { libc::clock_gettime(id, &mut ts) }, 0);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// An instant read between two `clock_gettime` readings converts to a
/// value between them, within the error `conversion_error()` states; the
/// same for boot instants and `CLOCK_BOOTTIME`. The error is read before
/// and after and the larger taken: a conversion uses the state of its
/// moment, whose error may be the one read before it (an update came
/// after the conversion, and a fresh offset states a smaller error: most
/// often during the warm-up, whose updates come milliseconds apart and
/// whose short windows state large ones) or the one read after (an update
/// came between the reading and the conversion). A thread preempted
/// between the reads widens the bracket instead of failing the test.
#[test]
fn conversions_land_between_the_kernels_readings() {
    // The first state published and the warm-up over (a conversion made
    // while another test's thread publishes the first state waits at most
    // 2 ms for it, then states an unmeasured error: the unit tests cover
    // that; here a loaded machine could stretch the publish past it).
    let _ = fastnow::clock_info();
    // Under an emulator (the cross-target runs set FASTNOW_TEST_RUNNER) the
    // counter is the emulator's, made from the host's clock in steps of
    // its period and read through calls that take microseconds, so a
    // bracket of counter reads around a kernel reading bounds the moment
    // only roughly: a quarter more than the stated error and a
    // microsecond, which still tells a wrong offset (seconds) or a wrong
    // rate (microseconds within milliseconds).
    // There, too, an update's boot sample can find no reading inside its
    // piece (reads that take microseconds), and that state says its boot
    // conversion is unmeasured (an error of about 2^63 ns): counted apart,
    // and held to 1 % of the conversions.
    let emulated = std::env::var_os("FASTNOW_TEST_RUNNER").is_some();
    let unmeasured_error = Duration::from_nanos(1 << 62);
    let mut unmeasured = 0;
    let mut worst = Duration::ZERO;
    for round in 0..20_000 {
        for (id, boot) in [(libc::CLOCK_MONOTONIC, false), (libc::CLOCK_BOOTTIME, true)] {
            let error_before = conversion_error();
            let before = clock(id);
            let converted = if boot {
                BootInstant::now().to_boottime_nanos()
            } else {
                Instant::now().to_monotonic_nanos()
            };
            let after = clock(id);
            let error_after = conversion_error();
            // (The error read before may be the unmeasured one, about
            // 2^63 ns, where the state had no boot conversion yet: it
            // only widens this round's bound.)
            let error = error_before.max(error_after);
            if emulated && error_after >= unmeasured_error {
                unmeasured += 1;
            } else {
                worst = worst.max(error_after);
            }
            let mut e = u64::try_from(error.as_nanos()).unwrap_or(u64::MAX);
            if emulated {
                e = e.saturating_add(e / 4).saturating_add(1_000);
            }
            assert!(
                converted.saturating_add(e) >= before && converted <= after.saturating_add(e),
                "round {round} (boot {boot}): {converted} not within {e} ns of [{before}, {after}] \
                 (errors stated before and after: {error_before:?}, {error_after:?})"
            );
        }
        if round % 1_000 == 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    // Small: half a bracket plus a ppm of a second, far under a millisecond
    // whatever the machine (the bound a re-base would leave).
    assert!(worst < Duration::from_millis(1), "stated error {worst:?}");
    assert!(
        unmeasured <= 400,
        "{unmeasured} of 40000 conversions stated an unmeasured error"
    );
}

/// A `CLOCK_MONOTONIC` reading converts to an instant that converts back
/// to it (the offset is the same between two calls unless an update came
/// between: then by at most what the offset moved, within the error).
#[test]
fn from_and_to_monotonic_round_trip() {
    let runner = |mono: u64| {
        let e = conversion_error().as_nanos() as u64 * 2;
        let back = Instant::from_monotonic_nanos(mono).to_monotonic_nanos();
        assert!(back.abs_diff(mono) <= e, "{mono} -> {back}");
        let back = BootInstant::from_boottime_nanos(mono).to_boottime_nanos();
        assert!(back.abs_diff(mono) <= e, "boot {mono} -> {back}");
    };
    proptest!(|(mono in 0u64..1 << 61)| runner(mono));
    let now = Instant::now();
    let back = Instant::from_monotonic_nanos(now.to_monotonic_nanos());
    let e = conversion_error() * 2;
    assert!(back.saturating_duration_since(now) <= e && now.saturating_duration_since(back) <= e);
}

/// Conversions saturate, never wrap or panic: an instant before
/// `CLOCK_MONOTONIC`'s zero is 0, a reading past the end of the timeline its
/// last instant.
#[test]
fn conversions_saturate() {
    assert_eq!(Instant::from_nanos(0).to_monotonic_nanos(), 0);
    assert_eq!(BootInstant::from_nanos(0).to_boottime_nanos(), 0);
    assert_eq!(
        Instant::from_monotonic_nanos(u64::MAX),
        Instant::from_nanos(u64::MAX)
    );
    assert_eq!(
        BootInstant::from_boottime_nanos(u64::MAX),
        BootInstant::from_nanos(u64::MAX)
    );
    let max = Instant::from_nanos(u64::MAX).to_monotonic_nanos();
    assert!(max > u64::MAX / 2, "{max}");
}

/// Every field of a snapshot was read between `clock_gettime` readings
/// taken around it; its bracket is tight (the tightest of a few tries), and
/// its precise reading converts to its `CLOCK_MONOTONIC` within the bracket
/// and the conversion's error.
#[test]
fn snapshot_fields_are_consistent() {
    // The warm-up over: a snapshot within it has no counter reading, while
    // `clock_info()` below would end it and say the counter.
    let _ = fastnow::clock_info();
    let mut tightest = Duration::MAX;
    for _ in 0..1_000 {
        let (m0, r0, b0) = (
            clock(libc::CLOCK_MONOTONIC),
            clock(libc::CLOCK_REALTIME),
            clock(libc::CLOCK_BOOTTIME),
        );
        let s = ClockSnapshot::now();
        let (m1, r1, b1) = (
            clock(libc::CLOCK_MONOTONIC),
            clock(libc::CLOCK_REALTIME),
            clock(libc::CLOCK_BOOTTIME),
        );
        assert!((m0..=m1).contains(&s.monotonic_nanos), "{s}");
        // Its bracket lies between the test's two readings.
        assert!(s.width.as_nanos() as u64 <= m1 - m0, "{s}: {m0}..{m1}");
        assert!((r0..=r1).contains(&s.realtime_nanos), "{s}");
        let boot = s.boottime_nanos.expect("Linux has CLOCK_BOOTTIME");
        assert!((b0..=b1).contains(&boot), "{s}");
        assert!(boot >= s.monotonic_nanos, "{s}");
        if let Some(tai) = s.tai_nanos {
            // The kernel's TAI offset: 0 unless a daemon set it, 37 s now.
            let off = tai.wrapping_sub(s.realtime_nanos) as i64;
            assert!((0..100_000_000_000).contains(&off), "{s}");
        }
        let e = (s.width + s.conversion_error).as_nanos() as u64;
        let converted = s.instant.to_monotonic_nanos();
        assert!(
            converted.abs_diff(s.monotonic_nanos) <= e,
            "{s}: converted {converted}"
        );
        assert_eq!(
            s.counter_ticks.is_some(),
            fastnow::clock_info().source == fastnow::Source::Counter,
            "{s}"
        );
        tightest = tightest.min(s.width);
    }
    // The width is what the snapshot's own brackets measured (how small it
    // gets is the machine's: the report and BENCHMARKS.md give it).
    assert!(tightest < Duration::MAX, "{tightest:?}");
    let text = format!("{}", ClockSnapshot::now());
    for part in [
        "CLOCK_MONOTONIC ",
        "CLOCK_REALTIME ",
        "CLOCK_BOOTTIME ",
        " within ",
    ] {
        assert!(text.contains(part), "{text}");
    }
}
