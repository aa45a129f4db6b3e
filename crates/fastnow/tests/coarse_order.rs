//! The coarse tier's documented order: a `MonotonicInstant` or
//! `OrderedInstant` read after `recent()` returned, on any thread, is never
//! earlier than it. (A bare `Instant` read may be: the CPU can run it before
//! the load; counted and printed, not asserted.)

mod common;

use fastnow::{Instant, MonotonicInstant, OrderedInstant};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn ordered_readings_are_never_before_recent() {
    if common::no_threads() {
        return;
    }
    fastnow::set_auto_upkeep(false);
    fastnow::refresh();
    let stop = Arc::new(AtomicBool::new(false));
    let refresher = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                fastnow::refresh();
                n += 1;
            }
            n
        })
    };
    let deadline = std::time::Instant::now() + Duration::from_millis(400);
    let (mut checks, mut ordered_early, mut monotonic_early, mut bare_early) = (0u64, 0, 0, 0);
    while std::time::Instant::now() < deadline {
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
    }
    stop.store(true, Ordering::Relaxed);
    let refreshes = refresher.join().unwrap();
    println!("{checks} checks, {refreshes} refreshes; bare Instant earlier {bare_early} times");
    assert!(refreshes > 1_000 && checks > 10_000);
    assert_eq!(ordered_early, 0, "OrderedInstant before recent()");
    assert_eq!(monotonic_early, 0, "MonotonicInstant before recent()");
}
