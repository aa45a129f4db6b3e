//! The upkeep thread alone never chooses `MonotonicInstant`'s strategy nor
//! moves it off its high-water mark: its refreshes take their own reading
//! and count as no contention. (Its refresh read a `MonotonicInstant`: when
//! the upkeep started before the program's first reading, the upkeep thread
//! chose the strategy, timing both on a thread just woken, and ordered
//! reads stayed for the whole run.) Its own process: the strategy is
//! process-wide.

mod common;

use fastnow::{MonotonicInstant, MonotonicMode};
use std::time::Duration;

#[test]
fn the_upkeep_alone_never_chooses_nor_switches_monotonic_instant() {
    if !fastnow::clock_info().source.eq(&fastnow::Source::Counter) {
        println!("SKIPPED: the counter is not in use here");
        return;
    }
    fastnow::start_upkeep(Duration::from_millis(1)).expect("upkeep");
    // Refreshes come and go: the strategy is still the program's to choose.
    let start = fastnow::Instant::now();
    while start.elapsed() < Duration::from_millis(50) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        common::recent_advances_past(start),
        "the upkeep does not refresh"
    );
    assert_eq!(
        fastnow::clock_info().monotonic_mode,
        MonotonicMode::Undecided,
        "the upkeep thread chose MonotonicInstant's strategy"
    );
    // The high-water mark, allowed to switch.
    MonotonicInstant::__hold_high_water(true);
    MonotonicInstant::__hold_high_water(false);
    assert_eq!(
        fastnow::clock_info().monotonic_mode,
        MonotonicMode::HighWater
    );
    // One thread reading as fast as it can for three seconds, against a
    // refresh every millisecond (timed by the readings themselves).
    let start = MonotonicInstant::now();
    let mut last = start;
    while last.duration_since(start) < Duration::from_secs(3) {
        let now = MonotonicInstant::now();
        assert!(now >= last);
        last = now;
        let cached = fastnow::recent();
        assert!(MonotonicInstant::now().as_instant() >= cached);
    }
    fastnow::stop_upkeep();
    assert_eq!(
        fastnow::clock_info().monotonic_mode,
        MonotonicMode::HighWater,
        "the upkeep's refreshes made MonotonicInstant switch"
    );
}
