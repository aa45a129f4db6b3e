//! The coarse tier's documented order: a `MonotonicInstant` or
//! `OrderedInstant` read after `recent()` returned, on any thread, is never
//! earlier than it. (A bare `Instant` read may be: the CPU can run it before
//! the load; counted and printed, not asserted.)

mod common;

use fastnow::{Instant, MonotonicInstant, OrderedInstant};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Runs for at least 400 ms and until the checks have met at least 1,000
/// refreshes: a slow machine (an emulator, a loaded runner) takes longer to
/// get there, rather than checking less. A refresher that stops (or a check
/// that hangs) fails the test after a generous minute without progress.
#[test]
fn ordered_readings_are_never_before_recent() {
    if common::no_threads() {
        return;
    }
    fastnow::set_auto_upkeep(false);
    fastnow::refresh();
    let stop = Arc::new(AtomicBool::new(false));
    let refreshes = Arc::new(AtomicU64::new(0));
    let refresher = {
        let (stop, refreshes) = (stop.clone(), refreshes.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                fastnow::refresh();
                refreshes.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let start = std::time::Instant::now();
    let before = refreshes.load(Ordering::Relaxed);
    let (mut met, mut progress_at) = (0, start);
    let (mut checks, mut ordered_early, mut monotonic_early, mut bare_early) = (0u64, 0, 0, 0);
    while start.elapsed() < Duration::from_millis(400) || met < 1_000 || checks < 10_000 {
        for _ in 0..1_000 {
            let r = fastnow::recent();
            let o = OrderedInstant::now();
            ordered_early += u64::from(o.as_unordered() < r);
            let r = fastnow::recent();
            let m = MonotonicInstant::now();
            monotonic_early += u64::from(m.as_instant() < r);
            let r = fastnow::recent();
            let i = Instant::now();
            bare_early += u64::from(i < r);
            checks += 1;
        }
        let now = refreshes.load(Ordering::Relaxed) - before;
        if now != met {
            (met, progress_at) = (now, std::time::Instant::now());
        }
        assert!(
            progress_at.elapsed() < Duration::from_secs(60),
            "no refresh for a minute ({met} refreshes during {checks} checks)"
        );
    }
    stop.store(true, Ordering::Relaxed);
    refresher.join().unwrap();
    println!(
        "{checks} checks, {met} refreshes during them; bare Instant earlier {bare_early} times"
    );
    assert_eq!(ordered_early, 0, "OrderedInstant before recent()");
    assert_eq!(monotonic_early, 0, "MonotonicInstant before recent()");
}
