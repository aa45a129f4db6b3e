//! The source is decided once per process, so each scenario runs in a child
//! process: this test binary re-executes itself with `FASTNOW_CLOCK` set and
//! runs one `child_*` test, which does nothing unless `FASTNOW_TEST_CHILD` is set.

mod common;

use fastnow::{EnvOverride, Fallback, Instant, MonotonicInstant, OrderedInstant, Source};
use std::process::Command;
use std::time::Duration;

/// Under an emulator the child must be started through it too: the Makefile
/// sets `FASTNOW_TEST_RUNNER` (e.g. `qemu-aarch64`) for cross-target runs.
fn run_child(test: &str, fastnow_clock: &str) {
    if common::no_processes() {
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let mut cmd = match std::env::var_os("FASTNOW_TEST_RUNNER") {
        Some(runner) => {
            let mut c = Command::new(runner);
            c.arg(exe);
            c
        }
        None => Command::new(exe),
    };
    let out = cmd
        .args([
            test,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("FASTNOW_TEST_CHILD", "1")
        .env("FASTNOW_CLOCK", fastnow_clock)
        .output()
        .expect("re-run the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child {test} with FASTNOW_CLOCK={fastnow_clock:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn in_child() -> bool {
    std::env::var_os("FASTNOW_TEST_CHILD").is_some()
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

    // Ticks are CLOCK_MONOTONIC nanoseconds.
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: valid pointer to a local timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        let mono = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
        assert!(a.ticks() <= mono && mono <= Instant::now().ticks());
    }
    #[cfg(not(unix))]
    println!("not a Unix target: ticks against CLOCK_MONOTONIC not checked");
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
