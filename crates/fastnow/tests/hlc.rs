//! The hybrid logical clock through its public API under the mock clocks
//! (feature `mock`): the shared vectors' send/receive sequences with the
//! wall clock set by a `MockClock`, and real threads stamping while a
//! `GlobalMockClock` holds the wall clock still or steps it back. (The
//! vectors and the model of the paper's rules run against the clock's
//! internals too, in `src/hlc/tests.rs`.) Its own test binary: a global
//! mock is seen by every thread of the process.
#![cfg(feature = "mock")]

mod common;

use fastnow::hlc::{Hlc, Timestamp};
use fastnow::mock::{GlobalMockClock, MockClock};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

fn num(v: &Value) -> u64 {
    v.as_str().expect("a string").parse().expect("decimal u64")
}

#[test]
fn sequence_vectors_under_a_mock_clock() {
    let path = format!("{}/spec/vectors/hlc.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let v: Value = serde_json::from_str(&text).expect("valid JSON");
    let clock = MockClock::install();
    let mut steps = 0;
    for s in v["sequences"].as_array().unwrap() {
        let name = s["name"].as_str().unwrap();
        let drift = Duration::from_nanos(num(&s["max_drift_ns"]));
        let mut nodes: BTreeMap<&str, Hlc> = BTreeMap::new();
        for (i, step) in s["steps"].as_array().unwrap().iter().enumerate() {
            let hlc = nodes
                .entry(step["node"].as_str().unwrap())
                .or_insert_with(|| Hlc::new().with_max_drift(drift));
            clock.set_unix_nanos(num(&step["wall_ns"]));
            let got = match step["op"].as_str().unwrap() {
                "now" => Ok((0..step["repeat"].as_u64().unwrap_or(1))
                    .map(|_| hlc.now())
                    .last()
                    .unwrap()),
                _ => hlc.update(Timestamp::from_u64(num(&step["remote"]))),
            };
            match got {
                Ok(t) => assert_eq!(
                    t.to_string(),
                    step["want_text"].as_str().unwrap(),
                    "{name}, step {i}"
                ),
                Err(e) => assert_eq!(
                    e.ahead_by(),
                    Duration::from_nanos(num(&step["refused_ahead_by_ns"])),
                    "{name}, step {i}"
                ),
            }
            steps += 1;
        }
    }
    assert!(steps > 40);
}

const THREADS: usize = 4;
const PER_THREAD: u64 = 50_000;

/// With the wall clock held still, every stamp of every thread is the
/// word after the one before, from the wall clock's own unit on: the
/// 200,000 stamps are exactly the 200,000 words from there, none twice,
/// none skipped, each thread's increasing. Past 65,536 of them the
/// counter has borrowed from the physical part, which is then ahead of the
/// wall clock by one unit per 65,536 stamps.
#[test]
fn threads_under_a_still_global_mock_take_consecutive_words() {
    if common::no_threads() {
        return;
    }
    let clock = GlobalMockClock::install();
    let wall = 1_700_000_000_123_456_789;
    clock.set_unix_nanos(wall);
    let hlc = Hlc::new();
    let first = Timestamp::new(wall, 0).to_u64();
    let mut all: Vec<u64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(|| {
                    let stamps: Vec<u64> = (0..PER_THREAD).map(|_| hlc.now().to_u64()).collect();
                    assert!(stamps.windows(2).all(|w| w[0] < w[1]));
                    stamps
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    all.sort_unstable();
    let n = THREADS as u64 * PER_THREAD;
    assert_eq!(all, (first..first + n).collect::<Vec<u64>>());
    let last = Timestamp::from_u64(first + n - 1);
    assert_eq!(
        (last.to_u64() >> 16) - (first >> 16),
        (n - 1) / 65_536,
        "one unit borrowed per 65,536 stamps"
    );
}

/// With the wall clock stepped back and forth while threads stamp, no
/// thread's stamps go back, and a stamp's physical part is never ahead of
/// the latest wall time set by more than the counter borrowed: one unit
/// (2^-16 s) per 65,536 stamps issued (a thread can issue that many while
/// this one is not scheduled to move the clock).
#[test]
fn threads_under_a_stepping_global_mock_never_go_back() {
    if common::no_threads() {
        return;
    }
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let clock = GlobalMockClock::install();
    let base = 1_700_000_000_000_000_000;
    clock.set_unix_nanos(base);
    let hlc = Hlc::new();
    let highest_set = AtomicU64::new(base);
    let issued = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let mut last = Timestamp::from_u64(0);
                    let mut n = 0u64;
                    while !done.load(Ordering::Acquire) || n < 1000 {
                        let t = hlc.now();
                        let borrowed = issued.fetch_add(1, Ordering::Relaxed) / 65_536 + 1;
                        let high = highest_set.load(Ordering::Acquire);
                        assert!(t > last, "{t} after {last}");
                        assert!(
                            t.physical_nanos() <= high + borrowed * 15_259,
                            "{t} ahead of {high} by more than {borrowed} units"
                        );
                        last = t;
                        n += 1;
                    }
                })
            })
            .collect();
        // Forward in steps of 20 µs (more than a unit), back by 1 ms every
        // tenth step.
        let mut wall = base;
        for i in 0..20_000u64 {
            wall = if i % 10 == 9 {
                wall - 1_000_000
            } else {
                wall + 20_000
            };
            highest_set.fetch_max(wall, Ordering::Release);
            clock.set_unix_nanos(wall);
            if i % 64 == 0 {
                std::thread::yield_now();
            }
        }
        done.store(true, Ordering::Release);
        for h in handles {
            h.join().unwrap();
        }
    });
}
