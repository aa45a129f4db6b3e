//! The browser target (`wasm32-unknown-unknown`), run in a JavaScript host
//! by wasm-bindgen's test runner (node by default). std's clocks panic
//! there; fastnow reads `performance.now()` for the precise clocks and
//! `Date.now()` for the wall tier, through its OS fallback (the target has
//! no counter). Each test reads JavaScript's clocks directly beside
//! fastnow's, so a backend that reads the wrong clock, a stopped one, or
//! one at the wrong scale fails.
//!
//! The other test targets build here too, but their `#[test]`s use threads,
//! processes, the file system or std's clocks, which this target lacks: the
//! runner, which runs only `#[wasm_bindgen_test]`s, passes over them.
#![cfg(all(target_family = "wasm", target_os = "unknown"))]

use fastnow::{
    clock_info, measures_thread_cpu_time, recalibrate, recent, recent_unix_nanos, refresh,
    start_upkeep, unix_nanos, upkeep_resolution, BootInstant, EnvOverride, Fallback, Instant,
    MonotonicInstant, OrderedInstant, Source, ThreadCpuInstant, ThreadCpuSource, UnixTime,
    UpkeepError,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::time::{Duration, UNIX_EPOCH};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen]
extern "C" {
    /// The host's monotonic clock in milliseconds, read directly.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// How long the busy waits last: long enough to dwarf the host clocks'
/// resolution (a millisecond for `Date.now()`), short enough to keep the
/// suite fast.
const WAIT_MS: f64 = 5.0;

/// Rounding between `performance.now()`'s floating-point milliseconds and
/// fastnow's integer nanoseconds.
const ROUNDING_NS: u64 = 1_000;

fn ms_to_ns(ms: f64) -> u64 {
    (ms * 1e6) as u64
}

/// `Date.now()` (whole milliseconds, exact in an `f64`) in nanoseconds.
fn date_now_ns() -> u64 {
    js_sys::Date::now() as u64 * 1_000_000
}

/// Spins until `performance.now()` has moved `ms` past `from`; the last
/// reading.
fn spin_until(from: f64, ms: f64) -> f64 {
    loop {
        let now = performance_now();
        if now - from >= ms {
            return now;
        }
    }
}

/// Two readings of `read` around a busy wait measured by `performance.now()`
/// span at least the wait, and no more than the `performance.now()`
/// readings taken outside them: the clock is `performance.now()` (plus a
/// constant offset), at its scale.
fn assert_follows_performance_now(name: &str, read: impl Fn() -> u64) {
    let outer0 = performance_now();
    let a = read();
    let inner0 = performance_now();
    let inner1 = spin_until(inner0, WAIT_MS);
    let b = read();
    let outer1 = performance_now();
    let span = b
        .checked_sub(a)
        .unwrap_or_else(|| panic!("{name} went back: {a} then {b}"));
    let (lo, hi) = (ms_to_ns(inner1 - inner0), ms_to_ns(outer1 - outer0));
    assert!(
        span + ROUNDING_NS >= lo,
        "{name} advanced {span} ns over a wait of {lo} ns by performance.now()"
    );
    assert!(
        span <= hi + ROUNDING_NS,
        "{name} advanced {span} ns between performance.now() readings {hi} ns apart"
    );
}

#[wasm_bindgen_test]
fn precise_clocks_follow_performance_now() {
    assert_follows_performance_now("Instant", || Instant::now().as_nanos());
    assert_follows_performance_now("MonotonicInstant", || MonotonicInstant::now().as_nanos());
    assert_follows_performance_now("OrderedInstant", || OrderedInstant::now().as_nanos());
    // On the OS clock for good (no counter here) a boot reading is the boot
    // clock, which is the monotonic one here, plus a word fixed when the
    // state was published.
    assert_follows_performance_now("BootInstant", || BootInstant::now().as_nanos());
    // elapsed() reads the same clock.
    let start = Instant::now();
    let p0 = performance_now();
    let p1 = spin_until(p0, WAIT_MS);
    assert!(start.elapsed().as_nanos() as u64 + ROUNDING_NS >= ms_to_ns(p1 - p0));
}

#[wasm_bindgen_test]
fn precise_readings_never_go_back() {
    const READS: usize = 20_000;
    let (mut i, mut m, mut o, mut b) = (
        Instant::now(),
        MonotonicInstant::now(),
        OrderedInstant::now(),
        BootInstant::now(),
    );
    let first = (i, m, o, b);
    for n in 0..READS {
        let (i2, m2, o2, b2) = (
            Instant::now(),
            MonotonicInstant::now(),
            OrderedInstant::now(),
            BootInstant::now(),
        );
        assert!(i2 >= i, "Instant went back at read {n}: {i:?} then {i2:?}");
        assert!(
            m2 >= m,
            "MonotonicInstant went back at read {n}: {m:?} then {m2:?}"
        );
        assert!(
            o2 >= o,
            "OrderedInstant went back at read {n}: {o:?} then {o2:?}"
        );
        assert!(
            b2 >= b,
            "BootInstant went back at read {n}: {b:?} then {b2:?}"
        );
        // The three precise types read one timeline.
        assert!(i <= m2.as_instant() && m2.as_instant() <= o2.as_unordered());
        (i, m, o, b) = (i2, m2, o2, b2);
    }
    // So many reads take longer than the host clock's resolution: a clock
    // that stands still fails here.
    assert!(i > first.0 && m > first.1 && o > first.2 && b > first.3);
}

#[wasm_bindgen_test]
fn wall_tier_is_date_now() {
    for _ in 0..3 {
        let d0 = date_now_ns();
        let (a, t, s) = (unix_nanos(), UnixTime::now(), fastnow::system_time());
        let d1 = date_now_ns();
        let s = s.duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64;
        // Date.now() counts whole milliseconds; fastnow reads it here.
        for (name, ns) in [
            ("unix_nanos", a),
            ("UnixTime::now", t.as_nanos()),
            ("system_time", s),
        ] {
            assert!(
                d0 <= ns && ns < d1 + 1_000_000,
                "{name} = {ns} ns, outside Date.now() readings {d0} ns and {d1} ns"
            );
        }
        // std's SystemTime exists here (only its now() panics): exact both ways.
        let st = UNIX_EPOCH + Duration::from_nanos(t.as_nanos());
        assert_eq!(UnixTime::try_from(st), Ok(t));
        assert_eq!(std::time::SystemTime::from(t), st);
        spin_until(performance_now(), 1.5);
    }
    // A resync keeps it so.
    fastnow::resync_wall();
    let d0 = date_now_ns();
    let t = UnixTime::now().as_nanos();
    assert!(d0 <= t && t < date_now_ns() + 1_000_000);
}

#[wasm_bindgen_test]
fn unix_time_text_matches_javascript_dates() {
    // Every whole millisecond JavaScript's Date and UnixTime both hold
    // (1970 to 2554): fastnow's RFC 3339 text is the host's ISO 8601 text
    // with the fraction's six more digits, and it reads back.
    let max_ms = u64::MAX / 1_000_000;
    let mut runner = TestRunner::new(Config {
        cases: 512,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&prop_oneof![0..=max_ms, Just(0), Just(max_ms)], |ms| {
            let js = js_sys::Date::new(&JsValue::from_f64(ms as f64)).to_iso_string();
            let js = String::from(js);
            let t = UnixTime::from_nanos(ms * 1_000_000);
            prop_assert_eq!(t.to_string(), js.replace('Z', "000000Z"));
            prop_assert_eq!(js.parse::<UnixTime>(), Ok(t));
            Ok(())
        })
        .unwrap();
}

#[wasm_bindgen_test]
fn clock_info_reports_the_os_clock_and_why() {
    for info in [clock_info(), recalibrate()] {
        assert_eq!(info.source, Source::Os);
        assert_eq!(info.fallback, Some(Fallback::NoCounter));
        assert_eq!(info.counter, None);
        assert_eq!(info.freq_hz, 1_000_000_000);
        assert_eq!(info.kernel_clocksource, None);
        // No process environment in a JavaScript host.
        assert_eq!(info.env_override, EnvOverride::Unset);
        assert_eq!(info.thread_cpu, ThreadCpuSource::Unavailable);
        assert_eq!(info.thread_cpu_fallback, None);
        assert!(!info.upkeep);
        let text = info.to_string();
        assert!(text.starts_with("OS clock"), "{text}");
        assert!(
            text.contains("fallback: this target has no counter backend"),
            "{text}"
        );
    }
}

#[wasm_bindgen_test]
fn thread_cpu_clock_stands_still() {
    // No CPU clock in a JavaScript host: the documented outcome is a clock
    // that stands still, never the wall clock.
    assert!(!measures_thread_cpu_time());
    let start = ThreadCpuInstant::now();
    let p0 = performance_now();
    spin_until(p0, WAIT_MS);
    assert_eq!(start.elapsed(), Duration::ZERO);
    assert_eq!(ThreadCpuInstant::now(), start);
    assert_eq!(
        clock_info().thread_cpu.to_string(),
        "none (every duration is zero)"
    );
}

#[wasm_bindgen_test]
fn coarse_tier_without_upkeep() {
    // No threads here: upkeep cannot start (nor does the first recent()
    // start it), so the cached time is that of the last refresh.
    assert!(matches!(
        start_upkeep(Duration::from_millis(1)),
        Err(UpkeepError::Spawn(_))
    ));
    let cached = recent();
    let cached_unix = recent_unix_nanos();
    assert_eq!(upkeep_resolution(), None);
    assert!(!clock_info().upkeep);
    spin_until(performance_now(), WAIT_MS);
    assert_eq!(recent(), cached, "the cache moved without a refresh");
    assert_eq!(Instant::recent(), cached);
    assert_eq!(recent_unix_nanos(), cached_unix);

    let before = OrderedInstant::now();
    let d0 = date_now_ns();
    let refreshed = refresh();
    let d1 = date_now_ns();
    let after = OrderedInstant::now();
    assert!(refreshed.duration_since(cached) >= Duration::from_millis(WAIT_MS as u64 - 1));
    assert!(before.as_unordered() <= refreshed && refreshed <= after.as_unordered());
    assert_eq!(recent(), refreshed);
    assert_eq!(Instant::recent(), refreshed);
    let unix = recent_unix_nanos();
    assert!(d0 <= unix && unix < d1 + 1_000_000);
    assert_eq!(UnixTime::recent().as_nanos(), unix);
}

/// The arithmetic of an instant type over its whole `u64` range: exact
/// where the result fits, `None` (checked) or zero (saturating) where not.
macro_rules! check_arithmetic {
    ($ty:ty) => {{
        let mut runner = TestRunner::new(Config {
            cases: 256,
            failure_persistence: None,
            ..Config::default()
        });
        let now = <$ty>::now().as_nanos();
        let nanos = prop_oneof![any::<u64>(), Just(0), Just(u64::MAX), Just(now)];
        runner
            .run(&(nanos.clone(), nanos), |(t, d)| {
                let (t, dur) = (<$ty>::from_nanos(t), Duration::from_nanos(d));
                match t.as_nanos().checked_add(d) {
                    Some(sum) => {
                        let later = t.checked_add(dur).unwrap();
                        prop_assert_eq!(later.as_nanos(), sum);
                        prop_assert_eq!(t + dur, later);
                        prop_assert_eq!(later - t, dur);
                        prop_assert_eq!(later.duration_since(t), dur);
                        prop_assert_eq!(later.checked_duration_since(t), Some(dur));
                        prop_assert_eq!(later.checked_sub(dur), Some(t));
                    }
                    None => prop_assert_eq!(t.checked_add(dur), None),
                }
                match t.as_nanos().checked_sub(d) {
                    Some(diff) => {
                        prop_assert_eq!(t.checked_sub(dur).map(|e| e.as_nanos()), Some(diff))
                    }
                    None => prop_assert_eq!(t.checked_sub(dur), None),
                }
                let other = <$ty>::from_nanos(d);
                let since = t.as_nanos().checked_sub(d).map(Duration::from_nanos);
                prop_assert_eq!(t.checked_duration_since(other), since);
                prop_assert_eq!(t.duration_since(other), since.unwrap_or(Duration::ZERO));
                prop_assert_eq!(
                    t.saturating_duration_since(other),
                    since.unwrap_or(Duration::ZERO)
                );
                // Beyond 64 bits of nanoseconds.
                prop_assert_eq!(t.checked_add(Duration::MAX), None);
                prop_assert_eq!(t.checked_sub(Duration::MAX), None);
                Ok(())
            })
            .unwrap();
    }};
}

#[wasm_bindgen_test]
fn instant_arithmetic() {
    // Seeded by getrandom's JavaScript backend (crypto.getRandomValues).
    check_arithmetic!(Instant);
    check_arithmetic!(MonotonicInstant);
    check_arithmetic!(OrderedInstant);
    check_arithmetic!(BootInstant);
    check_arithmetic!(ThreadCpuInstant);
}

#[wasm_bindgen_test]
fn unix_time_arithmetic() {
    let mut runner = TestRunner::new(Config {
        cases: 256,
        failure_persistence: None,
        ..Config::default()
    });
    let now = unix_nanos();
    let nanos = prop_oneof![any::<u64>(), Just(0), Just(u64::MAX), Just(now)];
    runner
        .run(&(nanos.clone(), nanos), |(t, d)| {
            let (t, dur) = (UnixTime::from_nanos(t), Duration::from_nanos(d));
            prop_assert_eq!(
                t.checked_add(dur).map(|u| u.as_nanos()),
                t.as_nanos().checked_add(d)
            );
            prop_assert_eq!(
                t.checked_sub(dur).map(|u| u.as_nanos()),
                t.as_nanos().checked_sub(d)
            );
            prop_assert_eq!(
                t.checked_duration_since(UnixTime::from_nanos(d)),
                t.as_nanos().checked_sub(d).map(Duration::from_nanos)
            );
            prop_assert_eq!(t.checked_add(Duration::MAX), None);
            Ok(())
        })
        .unwrap();
}

/// The `mock` feature's clock drives every tier here as on other targets,
/// and the real clocks come back when it is dropped.
#[cfg(feature = "mock")]
#[wasm_bindgen_test]
fn mock_clock_drives_every_tier() {
    let real = Instant::now();
    let clock = fastnow::mock::MockClock::install();
    let (t, b, u) = (Instant::now(), BootInstant::now(), UnixTime::now());
    spin_until(performance_now(), 1.0);
    assert_eq!(Instant::now(), t, "the mock's clock moved by itself");
    clock.advance(Duration::from_secs(3));
    clock.suspend(Duration::from_secs(60));
    assert_eq!(t.elapsed(), Duration::from_secs(3));
    assert_eq!(b.elapsed(), Duration::from_secs(63));
    assert_eq!(recent(), Instant::now());
    assert_eq!(
        UnixTime::now().checked_duration_since(u),
        Some(Duration::from_secs(63))
    );
    drop(clock);
    assert_follows_performance_now("Instant after the mock", || Instant::now().as_nanos());
    assert!(Instant::now() > real);
}
