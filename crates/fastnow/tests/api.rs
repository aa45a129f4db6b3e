//! The std-like API of the three precise types, and their guarantees, in the
//! source this machine chose (see `overrides.rs` for the others).

mod common;

use fastnow::{Instant, MonotonicInstant, OrderedInstant};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// Held by the tests that publish states on purpose (`recalibrate`, the
/// update hook) and by the one that counts the states published: the test
/// harness runs tests on several threads at once.
fn state_updates() -> MutexGuard<'static, ()> {
    static UPDATES: Mutex<()> = Mutex::new(());
    UPDATES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs the same checks on each type: the API is generated once, so a
/// regression in one shows up in all three.
macro_rules! api_checks {
    ($t:ty) => {{
        let a = <$t>::now();
        std::thread::sleep(Duration::from_millis(3));
        let b = <$t>::now();
        assert!(b > a);
        // Two conversions of the same ticks agree unless another thread
        // refined the calibration in between: early refinements move it by a
        // few ppm (more under emulation), so allow 100 ppm of the larger plus
        // a microsecond. A wrong scale is off by far more.
        let near = |x: Duration, y: Duration| {
            x.abs_diff(y) <= x.max(y) / 10_000 + Duration::from_micros(1)
        };
        let d = b.duration_since(a);
        assert!(d >= Duration::from_millis(2), "{d:?}");
        assert!(near(b - a, d));
        assert_eq!(a.duration_since(b), Duration::ZERO, "saturates like std");
        assert_eq!(a - b, Duration::ZERO);
        assert!(near(b.checked_duration_since(a).unwrap(), d));
        assert_eq!(a.checked_duration_since(b), None);
        assert_eq!(a.saturating_duration_since(b), Duration::ZERO);
        assert!(a.elapsed() >= d);

        // Instant ± Duration round-trips within a tick plus any refinement.
        let step = Duration::from_millis(250);
        let later = a + step;
        assert!(near(later - a, step), "{:?}", later - a);
        // (t + step) - step lands within the same tolerance of t, scaled by step.
        let close = |x: $t, y: $t| near(step + x.duration_since(y), step + y.duration_since(x));
        assert!(close(later - step, a));
        let mut m = a;
        m += step;
        assert!(close(m, later));
        m -= step;
        assert!(close(m, a));

        // Overflow is None from the checked methods, never wrong time.
        assert_eq!(a.checked_add(Duration::MAX), None);
        assert_eq!(a.checked_sub(Duration::MAX), None);
        assert_eq!(
            <$t>::from_nanos(u64::MAX).checked_add(Duration::from_secs(1)),
            None
        );
        assert_eq!(
            <$t>::from_nanos(0).checked_sub(Duration::from_secs(1)),
            None
        );
        assert_eq!(<$t>::from_nanos(a.as_nanos()), a);

        // Hash and Ord agree with the ticks.
        let mut set = std::collections::HashSet::new();
        set.insert(a);
        set.insert(<$t>::from_nanos(a.as_nanos()));
        assert_eq!(set.len(), 1);
        // Debug says where the reading is on its timeline, for a person.
        let debug = format!("{a:?}");
        assert!(
            debug.starts_with(concat!(stringify!($t), "(")) && debug.contains(" after "),
            "{debug}"
        );
    }};
}

#[test]
fn instant_api() {
    api_checks!(Instant);
}

#[test]
fn monotonic_instant_api() {
    api_checks!(MonotonicInstant);
}

#[test]
fn ordered_instant_api() {
    api_checks!(OrderedInstant);
}

#[test]
#[should_panic(expected = "overflow when adding duration to instant")]
fn add_overflow_panics_like_std() {
    let _ = Instant::now() + Duration::MAX;
}

#[test]
#[should_panic(expected = "overflow when subtracting duration from instant")]
fn sub_overflow_panics_like_std() {
    let _ = Instant::from_nanos(0) - Duration::from_secs(1);
}

/// `now - d` works for any `d` up to a century, however recently the
/// machine booted, as with std's `Instant` (`let cutoff = Instant::now() -
/// ttl;` panicked on a machine up less than `ttl`): exact, and back again.
macro_rules! reach_checks {
    ($t:ty) => {{
        const DAY: u64 = 86_400;
        let now = <$t>::now();
        for secs in [1, 3_600, DAY, 365 * DAY, 36_525 * DAY] {
            let d = Duration::from_secs(secs);
            let back = now - d;
            assert_eq!(now.checked_sub(d), Some(back), "{secs} s");
            assert_eq!(now.duration_since(back), d, "{secs} s");
            assert_eq!(now.checked_duration_since(back), Some(d));
            assert_eq!(back + d, now);
            assert!(back.elapsed() >= d);
            assert_eq!(<$t>::from_nanos(back.as_nanos()), back);
            // And as far ahead.
            let ahead = now + d;
            assert_eq!(ahead.duration_since(now), d);
        }
    }};
}

#[test]
fn instant_reaches_back_a_century() {
    reach_checks!(Instant);
}

#[test]
fn monotonic_instant_reaches_back_a_century() {
    reach_checks!(MonotonicInstant);
}

#[test]
fn ordered_instant_reaches_back_a_century() {
    reach_checks!(OrderedInstant);
}

/// A mock clock's instants too: it starts at 1 s on the same timeline, so
/// code under test that subtracts a timeout from `now()` does not panic.
#[cfg(feature = "mock")]
#[test]
fn mocked_instants_reach_back_a_century() {
    let clock = fastnow::mock::MockClock::install();
    let d = Duration::from_secs(36_525 * 86_400);
    let start = Instant::now();
    let cutoff = start - d;
    clock.advance(Duration::from_secs(5));
    assert_eq!(
        Instant::now().duration_since(cutoff),
        d + Duration::from_secs(5)
    );
    assert_eq!(
        MonotonicInstant::now().checked_sub(d).map(|t| t.as_nanos()),
        Some(cutoff.as_nanos() + 5_000_000_000)
    );
    assert_eq!(OrderedInstant::now().as_nanos(), clock.nanos());
}

/// The coarse tier's cached instant is on the same timeline.
#[test]
fn recent_reaches_back_a_century() {
    let d = Duration::from_secs(36_525 * 86_400);
    let cached = fastnow::refresh();
    assert_eq!(cached.duration_since(cached - d), d);
}

#[test]
fn the_three_share_one_timeline() {
    let a = Instant::now();
    let m = MonotonicInstant::now();
    let o = OrderedInstant::now();
    let b = Instant::now();
    assert!(a <= m.as_instant() && m.as_instant() <= b);
    assert!(a <= o.as_unordered() && o.as_unordered() <= b);
    assert_eq!(Instant::from(o), o.as_unordered());
    assert_eq!(Instant::from(m), m.as_instant());
}

/// Per-thread monotonicity, each thread on its own, all running at once.
#[test]
fn never_backwards_on_one_thread() {
    if common::no_threads() {
        return;
    }
    let threads: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                let (mut i, mut m, mut o) = (
                    Instant::now(),
                    MonotonicInstant::now(),
                    OrderedInstant::now(),
                );
                for _ in 0..200_000 {
                    let (i2, m2, o2) = (
                        Instant::now(),
                        MonotonicInstant::now(),
                        OrderedInstant::now(),
                    );
                    assert!(i2 >= i && m2 >= m && o2 >= o);
                    (i, m, o) = (i2, m2, o2);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

/// `elapsed()` agrees with std over an interval both measure: fastnow's
/// interval lies between an inner std interval (started after it, ended
/// before it) and an outer one, up to a calibration error of 1 % and a
/// microsecond of rounding. The bounds hold however long the reads around
/// them take (an emulator translating code it runs for the first time can
/// take tens of milliseconds), and the 1 % covers the first 100 ms of a
/// process under an emulator, whose rates come from windows of
/// milliseconds bracketed by microseconds (0.5 % off seen under qemu). This
/// checks calibration is sane (a wrong frequency is off by far more), not
/// its precision, which the simulation tests and the benchmarks measure.
#[test]
fn agrees_with_std() {
    // The first state published and the warm-up over, so that no reading
    // below is another thread's detection's lower bound.
    let _ = fastnow::clock_info();
    let outer = std::time::Instant::now();
    let start = Instant::now();
    let inner = std::time::Instant::now();
    std::thread::sleep(Duration::from_millis(100));
    let inner = inner.elapsed();
    let ours = start.elapsed();
    let outer = outer.elapsed();
    let slack = |d: Duration| d + d / 100 + Duration::from_micros(1);
    assert!(ours <= slack(outer), "{ours:?} > {outer:?}");
    assert!(inner <= slack(ours), "{ours:?} < {inner:?}");
}

#[test]
fn info_describes_the_source() {
    let _ = Instant::now().elapsed();
    let info = fastnow::clock_info();
    assert!(info.freq_hz > 0, "{info:?}");
    match info.source {
        fastnow::Source::Counter => {
            assert!(info.fallback.is_none());
            assert!(info.counter.is_some());
            assert_ne!(info.freq_origin, fastnow::FreqOrigin::Os);
        }
        fastnow::Source::Os => {
            assert!(info.fallback.is_some());
            assert_eq!(info.freq_hz, 1_000_000_000);
        }
    }
    assert!(!info.to_string().is_empty());
}

#[test]
fn recalibrate_keeps_a_sane_rate() {
    let _alone = state_updates();
    let before = fastnow::clock_info();
    let _ = Instant::now().elapsed();
    let after = fastnow::recalibrate();
    assert!(after.freq_hz > 0);
    if after.source == fastnow::Source::Counter {
        assert_eq!(after.freq_origin, fastnow::FreqOrigin::Measured);
        assert!(after.calibration_baseline >= Duration::from_millis(1));
        let (a, b) = (before.freq_hz.max(1) as f64, after.freq_hz as f64);
        assert!(
            before.freq_hz == 0 || (a / b - 1.0).abs() < 0.01,
            "{a} vs {b}"
        );
    }
}

/// Conversions read no clock and publish nothing: only a reading makes a
/// state update due. (A deadline ten seconds ahead used to re-measure the
/// calibration on every call: 100,000 updates here.)
#[test]
fn conversions_never_update_the_state() {
    let _alone = state_updates();
    let start = Instant::now();
    std::thread::sleep(Duration::from_millis(50)); // past the first short periods
    let deadline = Instant::now() + Duration::from_secs(10);
    let before = fastnow::__test::state_generation();
    let wall = std::time::Instant::now();
    let mut sum = Duration::ZERO;
    for _ in 0..100_000 {
        sum += deadline.saturating_duration_since(Instant::now());
        sum += deadline.duration_since(start);
        sum += deadline.checked_duration_since(start).unwrap();
    }
    let took = wall.elapsed();
    let updates = fastnow::__test::state_generation() - before;
    // Scheduled updates only: at most one per 16 ms period by now, plus the
    // one in progress. (Under an emulator, where every sample's brackets are
    // wide and measure nothing, the first short periods last longer: at most
    // one per millisecond, the shortest period. Either way far from one per
    // conversion.)
    let per_ms = if std::env::var_os("FASTNOW_TEST_RUNNER").is_some() {
        1
    } else {
        16
    };
    let allowed = 2 + took.as_millis() as u64 / per_ms;
    assert!(
        updates <= allowed,
        "{updates} updates in {took:?} (sum {sum:?})"
    );
}

/// The hook that `make figures` times a reader's update with ("Cold calls")
/// does the update a reader does: each call publishes a state (a sample
/// always measures the wall offset again), so its cost is the real one.
#[test]
fn the_update_hook_publishes_as_a_reader_does() {
    let _alone = state_updates();
    let _ = Instant::now().elapsed();
    if fastnow::clock_info().source != fastnow::Source::Counter {
        eprintln!("skipped: the OS clock is in use, and an OS state has no updates");
        return;
    }
    let before = fastnow::__test::state_generation();
    for _ in 0..50 {
        fastnow::__test::reader_update(false);
    }
    let published = fastnow::__test::state_generation() - before;
    assert!(published >= 50, "50 updates published {published} states");
}

/// `{:?}` of a reading says, for a person, how long after the timeline's
/// zero it was taken: on Unix systems the machine's boot, so a fresh
/// reading prints about `CLOCK_MONOTONIC`'s value, read beside it.
#[cfg(all(unix, not(target_vendor = "apple")))]
#[test]
fn debug_of_a_reading_is_its_time_since_boot() {
    fn mono() -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid, writable timespec.
        assert_eq!(
            unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) },
            0
        );
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }
    let _ = fastnow::Instant::now();
    let before = mono();
    let now = fastnow::Instant::now();
    let after = mono();
    let text = format!("{now:?}");
    assert!(
        text.starts_with("Instant(") && text.ends_with(" after boot)"),
        "{text}"
    );
    // Read back the figure: whole seconds are enough to place it between
    // the two readings of CLOCK_MONOTONIC (a millisecond of slack for the
    // calibration's young rate).
    let shown = &text["Instant(".len()..text.len() - " after boot)".len()];
    let mut secs = 0.0;
    let mut rest = shown;
    for (unit, per) in [("h", 3600.0), ("m", 60.0), ("s", 1.0)] {
        if let Some((n, tail)) = rest.split_once(unit) {
            if n.chars().all(|c| c.is_ascii_digit() || c == '.')
                && !n.is_empty()
                && !tail.starts_with('s')
            {
                secs += n.parse::<f64>().unwrap() * per;
                rest = tail;
            }
        }
    }
    let ns = (secs * 1e9) as u64;
    assert!(
        ns + 1_000_000 >= before && ns <= after + 1_000_000,
        "{text}: {before}..{after} ns of CLOCK_MONOTONIC"
    );
}
