//! The strict cross-thread test and per-thread monotonicity, through the same
//! harness the figures program runs at 10^8 checks (here 10^6, so CI stays
//! fast). One test function, because `MonotonicInstant`'s strategy is
//! process-wide and must be exercised in order: high-water mark first
//! (held under contention), then ordered reads.

use fastnow::{MonotonicInstant, MonotonicMode, OrderedInstant};
use fastnow_bench::{per_thread_backwards, strict_cross_thread};

const CHECKS: u64 = 1_000_000;

#[test]
fn strictly_monotonic_across_threads_in_both_strategies() {
    let monotonic: fn() -> u64 = || MonotonicInstant::now().as_nanos();
    let source = fastnow::clock_info().source;

    MonotonicInstant::__hold_high_water(true);
    let r = strict_cross_thread(monotonic, CHECKS);
    assert_eq!(r.violations, 0, "high-water strategy: {r:?}");
    if source == fastnow::Source::Counter {
        assert_eq!(
            fastnow::clock_info().monotonic_mode,
            MonotonicMode::HighWater
        );
    }

    MonotonicInstant::__hold_high_water(false);
    MonotonicInstant::use_ordered_reads();
    assert_eq!(fastnow::clock_info().monotonic_mode, MonotonicMode::Ordered);
    let r = strict_cross_thread(monotonic, CHECKS);
    assert_eq!(r.violations, 0, "ordered strategy: {r:?}");

    let r = strict_cross_thread(|| OrderedInstant::now().as_nanos(), CHECKS);
    assert_eq!(r.violations, 0, "OrderedInstant: {r:?}");
}

#[test]
fn per_thread_never_backwards() {
    for read in [
        (|| fastnow::Instant::now().as_nanos()) as fn() -> u64,
        || OrderedInstant::now().as_nanos(),
        || MonotonicInstant::now().as_nanos(),
    ] {
        assert_eq!(per_thread_backwards(read, 2, 1_000_000), 0);
    }
}

/// The harness itself must be able to fail: a clock that runs backwards
/// fails every check, whatever the scheduling.
#[test]
fn harness_detects_a_clock_that_goes_backwards() {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let backwards: fn() -> u64 = || u64::MAX - N.fetch_add(1, Ordering::Relaxed);
    assert_eq!(per_thread_backwards(backwards, 1, 1000), 1000);
    let r = strict_cross_thread(backwards, 10_000);
    assert_eq!(r.violations, 10_000, "{r:?}");
}

/// Stamps in the check below: 10^7 in release (`make test-rust` runs this
/// file so), 10^6 in the workspace's debug run, which is ten times slower.
const HLC_STAMPS: u64 = if cfg!(debug_assertions) {
    1_000_000
} else {
    10_000_000
};

/// The hybrid logical clock across threads: `HLC_STAMPS` stamps from two
/// threads, none twice, each thread's increasing; and a stamp taken after
/// seeing another thread's is not below it (`make figures` takes 10^8 of
/// each).
#[test]
fn hlc_stamps_are_unique_and_ordered_across_threads() {
    let read: fn() -> u64 = || fastnow_bench::HLC.now().to_u64();
    let r = fastnow_bench::unique_across_threads(read, 2, HLC_STAMPS as usize / 2);
    assert_eq!(
        (r.stamps, r.duplicates, r.not_increasing),
        (HLC_STAMPS, 0, 0),
        "{r:?}"
    );
    let r = strict_cross_thread(read, CHECKS);
    assert_eq!(r.violations, 0, "{r:?}");
}

/// The uniqueness harness can fail: a clock that repeats itself does.
#[test]
fn unique_harness_detects_repeats_and_decreases() {
    let repeats: fn() -> u64 = || 7;
    let r = fastnow_bench::unique_across_threads(repeats, 2, 1000);
    assert_eq!((r.duplicates, r.not_increasing), (1999, 1998), "{r:?}");
}
