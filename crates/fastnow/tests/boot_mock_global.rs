//! The process-wide mock covers `BootInstant` on every thread (its own test
//! binary: a global mock is seen by every test running beside it).
#![cfg(feature = "mock")]

use fastnow::mock::GlobalMockClock;
use fastnow::{BootInstant, Instant};
use std::time::Duration;

mod common;

#[test]
fn a_global_suspend_is_seen_by_every_thread() {
    if common::no_threads() {
        return;
    }
    let clock = GlobalMockClock::install();
    let (i0, b0) = (Instant::now(), BootInstant::now());
    clock.suspend(Duration::from_secs(3_600));
    let (i1, b1) = std::thread::spawn(|| (Instant::now(), BootInstant::now()))
        .join()
        .unwrap();
    assert_eq!(i1, i0);
    assert_eq!(b1 - b0, Duration::from_secs(3_600));
    assert_eq!(clock.boot_nanos(), b1.as_nanos());
    drop(clock);
    // A new mock starts without the suspends of the one before.
    let clock = GlobalMockClock::install();
    assert_eq!(clock.boot_nanos(), clock.nanos());
}
