//! The wall tier against CLOCK_REALTIME, and under concurrent re-anchoring.
//! (Following injected steps of the reference clock is tested in `wall.rs`'s
//! unit tests, which can build a wall clock on a steppable reference.)

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn realtime() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// Bracketed by two CLOCK_REALTIME reads, the wall tier lies between them
/// give or take a few microseconds of anchor error (the benchmark measures
/// the real figure; this only catches a broken anchor or scale).
#[test]
fn agrees_with_realtime() {
    let _ = fastnow::unix_nanos();
    let mut worst = 0;
    for _ in 0..1000 {
        let before = realtime();
        let ours = fastnow::unix_nanos();
        let after = realtime();
        let err = if ours < before {
            before - ours
        } else {
            ours.saturating_sub(after)
        };
        worst = worst.max(err);
    }
    assert!(worst < 100_000, "wall tier off by {worst} ns");
    // Bracketed too: under an emulator the thread can be descheduled between
    // two reads for longer than the bound.
    let before = realtime() as u128;
    let sys = fastnow::system_time().duration_since(UNIX_EPOCH).unwrap();
    let after = realtime() as u128;
    let sys = sys.as_nanos();
    assert!(
        sys + 1_000_000 >= before && sys <= after + 1_000_000,
        "{before} {sys} {after}"
    );
}

/// Readers hammer the wall tier while every read tries to re-anchor: no
/// reader ever sees a torn anchor (which would be off by the counter distance
/// between two anchors, converted: far outside the bound) or a value that
/// jumps backwards by more than an anchor correction. For at least 300 ms,
/// and until each reader has read 100 times: a slow machine takes longer
/// rather than reading less.
#[test]
fn concurrent_reanchoring_is_consistent() {
    if common::no_threads() {
        return;
    }
    fastnow::set_wall_resync_interval(Duration::ZERO);
    let stop = Arc::new(AtomicBool::new(false));
    let counts: Arc<[AtomicU64; 3]> = Arc::new(Default::default());
    let readers: Vec<_> = (0..3)
        .map(|i| {
            let (stop, counts) = (stop.clone(), counts.clone());
            std::thread::spawn(move || {
                let (mut last, mut reads, mut worst_back) = (0u64, 0u64, 0u64);
                while !stop.load(Ordering::Relaxed) {
                    let before = realtime();
                    let ours = fastnow::unix_nanos();
                    let after = realtime();
                    assert!(
                        ours + 200_000 >= before && ours <= after + 200_000,
                        "{before} {ours} {after}"
                    );
                    worst_back = worst_back.max(last.saturating_sub(ours));
                    last = ours;
                    reads += 1;
                    counts[i].store(reads, Ordering::Relaxed);
                }
                (reads, worst_back)
            })
        })
        .collect();
    let start = std::time::Instant::now();
    std::thread::sleep(Duration::from_millis(300));
    while counts.iter().any(|c| c.load(Ordering::Relaxed) < 100) {
        // A reader that never gets to read (not slowness: a hang).
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "a reader is stuck"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        let (reads, worst_back) = r.join().unwrap();
        assert!(reads >= 100, "only {reads} reads");
        assert!(worst_back < 50_000, "went back by {worst_back} ns");
    }
    fastnow::set_wall_resync_interval(fastnow::DEFAULT_RESYNC);
}

#[test]
fn unix_time_conversions() {
    let t = fastnow::UnixTime::now();
    let sys: SystemTime = t.into();
    // Windows' SystemTime counts 100 ns intervals: the last digits go.
    let unit = if cfg!(windows) { 100 } else { 1 };
    let back = fastnow::UnixTime::try_from(sys).unwrap();
    assert_eq!(back.as_nanos(), t.as_nanos() / unit * unit);
    assert!(fastnow::UnixTime::try_from(UNIX_EPOCH - Duration::from_secs(1)).is_err());
    assert_eq!(
        fastnow::UnixTime::EPOCH.checked_sub(Duration::from_nanos(1)),
        None
    );
    assert_eq!(t.checked_add(Duration::MAX), None);
    let later = t.checked_add(Duration::from_millis(1500)).unwrap();
    assert_eq!(
        later.checked_duration_since(t),
        Some(Duration::from_millis(1500))
    );
    assert_eq!(t.checked_duration_since(later), None);
    assert_eq!(fastnow::UnixTime::from_nanos(3_250_000_000).as_secs(), 3);
    assert_eq!(
        fastnow::UnixTime::from_nanos(3_250_000_000).subsec_nanos(),
        250_000_000
    );
}
