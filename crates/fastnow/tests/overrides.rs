//! The source is decided once per process, so each scenario runs in a child
//! process: this test binary re-executes itself with `FASTNOW_CLOCK` set and
//! runs one `child_*` test, which does nothing unless `FASTNOW_TEST_CHILD` is set.

mod common;

use common::in_child;
use fastnow::{EnvOverride, Fallback, Instant, MonotonicInstant, OrderedInstant, Source};
use std::process::Command;
use std::time::Duration;

fn run_child(test: &str, fastnow_clock: &str) {
    run_child_in(test, fastnow_clock, &[]);
}

/// `run_child`, with the command line prefixed by `wrapper` (e.g. a shell
/// that first changes the child's view of the file system).
fn run_child_in(test: &str, fastnow_clock: &str, wrapper: &[&str]) {
    if common::no_processes() {
        return;
    }
    common::run_child_in(wrapper, test, &[("FASTNOW_CLOCK", fastnow_clock.as_ref())]);
}

#[test]
fn forced_os_fallback() {
    run_child("child_os", "os");
}

#[test]
fn invalid_override_is_reported_and_ignored() {
    run_child("child_invalid", "rdtsc please");
}

#[test]
fn counter_override() {
    run_child("child_counter", "counter");
}

#[test]
#[ignore = "run by forced_os_fallback in a child process"]
fn child_os() {
    if !in_child() {
        return;
    }
    let a = Instant::now();
    let info = fastnow::clock_info();
    assert_eq!(info.source, Source::Os);
    assert_eq!(info.fallback, Some(Fallback::Forced));
    assert_eq!(info.env_override, EnvOverride::Os);
    assert_eq!(info.freq_hz, 1_000_000_000);
    assert!(info.to_string().contains("FASTNOW_CLOCK=os"));
    // The clock read is named as the platform calls it, as Go's Info does
    // (no WASI case: WASI starts no child process).
    let os_clock = if cfg!(target_vendor = "apple") {
        "clock_gettime(CLOCK_UPTIME_RAW)"
    } else if cfg!(windows) {
        "QueryPerformanceCounter"
    } else {
        "clock_gettime(CLOCK_MONOTONIC)"
    };
    assert_eq!(info.ordered_read, os_clock);

    // Readings are CLOCK_MONOTONIC nanoseconds plus the timeline's 2^62.
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: valid pointer to a local timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        let mono = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64 + (1 << 62);
        assert!(a.as_nanos() <= mono && mono <= Instant::now().as_nanos());
    }
    #[cfg(not(unix))]
    println!("not a Unix target: readings against CLOCK_MONOTONIC not checked");
    let b = Instant::now();

    // Same API behaviour as the counter.
    std::thread::sleep(Duration::from_millis(2));
    assert!(a.elapsed() >= Duration::from_millis(2));
    assert_eq!(
        (a + Duration::from_nanos(1234)) - a,
        Duration::from_nanos(1234)
    );
    assert_eq!(a.checked_add(Duration::MAX), None);
    assert!(MonotonicInstant::now().as_instant() >= b);
    assert!(OrderedInstant::now().as_unordered() >= b);
    assert_eq!(
        fastnow::clock_info().monotonic_mode,
        fastnow::MonotonicMode::Ordered
    );
    assert_eq!(fastnow::recalibrate().freq_hz, 1_000_000_000);
}

/// Hides the kernel's clocksource from the child as a container can: a
/// private mount namespace with an empty tmpfs over the sysfs directory.
/// Needs root (or user namespaces); skips with a reason otherwise.
const HIDE_SYSFS: &[&str] = &[
    "unshare",
    "-m",
    "sh",
    "-c",
    "mount -t tmpfs none /sys/devices/system/clocksource/clocksource0 && exec \"$@\"",
    "hide-sysfs",
];

fn can_hide_sysfs() -> bool {
    let ok = Command::new(HIDE_SYSFS[0])
        .args(&HIDE_SYSFS[1..])
        .arg("true")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        println!("SKIPPED: cannot hide sysfs here (needs unshare -m and mount, e.g. as root)");
    }
    ok
}

/// Unknown is not verified: with the kernel's verdict unreadable, Linux x86
/// uses the OS clock and says why, unless FASTNOW_CLOCK=counter.
#[test]
fn unreadable_clocksource_falls_back() {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) || !can_hide_sysfs() {
        return;
    }
    run_child_in("child_clocksource_hidden", "", HIDE_SYSFS);
    run_child_in("child_clocksource_hidden", "counter", HIDE_SYSFS);
}

#[test]
#[ignore = "run by unreadable_clocksource_falls_back in a child process"]
fn child_clocksource_hidden() {
    if !in_child() {
        return;
    }
    assert!(
        std::fs::read("/sys/devices/system/clocksource/clocksource0/current_clocksource").is_err(),
        "the file is hidden"
    );
    let info = fastnow::clock_info();
    assert_eq!(info.kernel_clocksource, None);
    if info.env_override == EnvOverride::Counter {
        assert_eq!(info.source, Source::Counter, "{info}");
    } else {
        assert_eq!(info.source, Source::Os, "{info}");
        assert_eq!(info.fallback, Some(Fallback::ClocksourceUnknown));
        assert!(info.to_string().contains("could not be read"), "{info}");
    }
    let t = Instant::now();
    std::thread::sleep(Duration::from_millis(2));
    assert!(t.elapsed() >= Duration::from_millis(2));
}

#[test]
#[ignore = "run by invalid_override_is_reported_and_ignored in a child process"]
fn child_invalid() {
    if !in_child() {
        return;
    }
    let _ = Instant::now();
    let info = fastnow::clock_info();
    assert_eq!(info.env_override, EnvOverride::Invalid);
    assert_ne!(info.fallback, Some(Fallback::Forced));
    assert!(info.to_string().contains("FASTNOW_CLOCK ignored"), "{info}");
}

#[test]
#[ignore = "run by counter_override in a child process"]
fn child_counter() {
    if !in_child() {
        return;
    }
    let info = fastnow::clock_info();
    assert_eq!(info.env_override, EnvOverride::Counter);
    if info.counter.is_some() && info.fallback != Some(Fallback::Disabled) {
        assert_eq!(info.source, Source::Counter, "{info}");
        let t = Instant::now();
        std::thread::sleep(Duration::from_millis(2));
        assert!(t.elapsed() >= Duration::from_millis(2));
    } else {
        assert_eq!(info.source, Source::Os);
    }
}
