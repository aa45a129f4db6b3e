//! The wall resync interval's floor: at 1 ns (or zero), with no upkeep,
//! every clock still returns, and readers update the state at most about
//! once a millisecond, so the read path stays a load. (Pieces as short as
//! the interval made every reading an update, and a reading past a piece's
//! end never returned.) Its own process: the interval is process-wide.

mod common;

use fastnow::{Instant, MonotonicInstant, OrderedInstant};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Reads every clock for at least `run` and at least 2,000 readings (a slow
/// machine takes longer rather than reading less), on another thread,
/// failing if ten seconds pass without a reading returning; (readings,
/// states published, time taken).
fn read_for(run: Duration) -> (u64, u64, Duration) {
    let (tx, rx) = mpsc::channel();
    let progress = Arc::new(AtomicU64::new(0));
    {
        let progress = progress.clone();
        std::thread::spawn(move || {
            let start = std::time::Instant::now();
            let before = fastnow::__test::state_generation();
            let mut reads = 0u64;
            let mut last = Instant::now();
            while start.elapsed() < run || reads < 2_000 {
                for _ in 0..100 {
                    let now = Instant::now();
                    assert!(now >= last, "stepped back");
                    last = now;
                    let _ = MonotonicInstant::now();
                    let _ = OrderedInstant::now();
                    let _ = fastnow::unix_nanos();
                    reads += 4;
                    progress.store(reads, Ordering::Relaxed);
                }
            }
            let published = fastnow::__test::state_generation() - before;
            let _ = tx.send((reads, published, start.elapsed()));
        });
    }
    let mut seen = 0;
    loop {
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(r) => return r,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let now = progress.load(Ordering::Relaxed);
                assert!(
                    now != seen,
                    "the clocks stopped returning after {now} readings (a reader looped on its own update)"
                );
                seen = now;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the reading thread panicked"),
        }
    }
}

#[test]
fn a_one_nanosecond_interval_keeps_reads_loads() {
    if common::no_threads() {
        return;
    }
    // Past the warm-up, whose first periods are short anyway.
    let _ = fastnow::clock_info();
    for interval in [Duration::from_nanos(1), Duration::ZERO] {
        fastnow::set_wall_resync_interval(interval);
        let (reads, published, took) = read_for(Duration::from_millis(300));
        // At most a precise update and a wall re-anchoring per millisecond
        // (each a state), plus slack for the forced update of the setter.
        let allowed = 2 * took.as_millis() as u64 + 20;
        assert!(
            published <= allowed,
            "interval {interval:?}: {published} states for {reads} readings in {took:?}"
        );
        // The wall tier still follows the system clock.
        let sys = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        assert!(fastnow::unix_nanos().abs_diff(sys) < 1_000_000_000);
    }
}
