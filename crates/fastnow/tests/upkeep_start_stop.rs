//! The upkeep controls under concurrency: `stop_upkeep` wakes the thread
//! instead of waiting out its sleep, and `start_upkeep` racing
//! `stop_upkeep` leaves one consistent state — never a thread the
//! timekeeper does not know about, updating without pause. One test
//! function: upkeep is process-wide.

mod common;

use std::sync::Barrier;
use std::time::Duration;

#[test]
fn upkeep_start_stop() {
    if common::no_threads() {
        return;
    }
    // The counter in use (past its first millisecond), as in a program
    // that has been reading the clock.
    let _ = fastnow::Instant::now();
    std::thread::sleep(Duration::from_millis(5));
    let _ = fastnow::clock_info();
    let base = common::threads();

    stop_wakes_the_thread();
    start_racing_stop();

    assert_eq!(fastnow::upkeep_resolution(), None);
    if let Some(base) = base {
        assert_eq!(
            common::threads_settle_to(base),
            base,
            "an upkeep thread leaked"
        );
    }
}

/// At a resolution of a second, after its first turn the thread sleeps
/// until its next update, a quarter of a second away once the rate has
/// settled; a stop that waited for that sleep to end would take tens of
/// milliseconds. The median of a few stops is compared, so one stop
/// delayed by a busy machine does not count.
fn stop_wakes_the_thread() {
    // In a young process the updates come sooner (the pieces grow from a
    // millisecond): wait until they are far apart.
    fastnow::start_upkeep(Duration::from_secs(1)).unwrap();
    let give_up = std::time::Instant::now() + Duration::from_secs(3);
    let (mut last, mut since) = (fastnow::recent(), std::time::Instant::now());
    while std::time::Instant::now() < give_up {
        std::thread::sleep(Duration::from_micros(500));
        if fastnow::recent() != last {
            if since.elapsed() >= Duration::from_millis(100) {
                break;
            }
            (last, since) = (fastnow::recent(), std::time::Instant::now());
        }
    }
    assert!(fastnow::stop_upkeep());

    let mut took: Vec<Duration> = (0..5)
        .map(|_| {
            fastnow::start_upkeep(Duration::from_secs(1)).unwrap();
            // The thread's first turn refreshes the cache; it then sleeps.
            let started = fastnow::recent();
            let give_up = std::time::Instant::now() + Duration::from_secs(1);
            while fastnow::recent() == started && std::time::Instant::now() < give_up {
                std::thread::sleep(Duration::from_micros(100));
            }
            let t = std::time::Instant::now();
            assert!(fastnow::stop_upkeep());
            t.elapsed()
        })
        .collect();
    took.sort();
    assert!(
        took[took.len() / 2] < Duration::from_millis(25),
        "stop_upkeep waited for the thread's sleep: {took:?}"
    );
    assert!(!fastnow::clock_info().upkeep);
}

/// Starts and stops from two threads at once, many times. After each race
/// the two views of whether upkeep runs agree; at the end, a running
/// upkeep publishes states at its usual pace. In half the rounds the start
/// comes as soon as `upkeep_resolution()` says the stop has begun (it says
/// so only once the stop is complete, if stops take effect as a whole); in
/// the others the two just race, the first of them spawned in turn.
fn start_racing_stop() {
    const RESOLUTION: Duration = Duration::from_millis(1);
    for round in 0..100 {
        let _ = fastnow::start_upkeep(RESOLUTION);
        let go = Barrier::new(2);
        let stop = || {
            go.wait();
            fastnow::stop_upkeep();
        };
        let start = || {
            go.wait();
            if round % 2 == 0 {
                let give_up = std::time::Instant::now() + Duration::from_millis(100);
                while fastnow::upkeep_resolution().is_some() && std::time::Instant::now() < give_up
                {
                    std::hint::spin_loop();
                }
            }
            let _ = fastnow::start_upkeep(RESOLUTION);
        };
        std::thread::scope(|s| {
            if round % 4 < 2 {
                s.spawn(stop);
                s.spawn(start);
            } else {
                s.spawn(start);
                s.spawn(stop);
            }
        });
        let resolution = fastnow::upkeep_resolution();
        let info = fastnow::clock_info();
        assert_eq!(
            resolution.is_some(),
            info.upkeep,
            "round {round}: upkeep_resolution() is {resolution:?}, clock_info().upkeep is {}",
            info.upkeep
        );
        assert!(resolution.is_none() || resolution == Some(RESOLUTION));
    }
    // Whatever the last race left, then a fresh start: the thread sleeps
    // between its turns.
    not_runaway();
    fastnow::stop_upkeep();
    fastnow::start_upkeep(RESOLUTION).unwrap();
    not_runaway();
    assert!(fastnow::stop_upkeep());
    // Stopped: no thread publishes, and nothing here reads the clock.
    let states = states_over(Duration::from_millis(100));
    assert!(states <= 2, "{states} states published with upkeep stopped");
}

/// A running upkeep publishes a few states a second (see
/// `spec/SEMANTICS.md`, "Who updates"); a thread that never slept would
/// publish hundreds of thousands. 100 in 300 ms separates the two widely.
fn not_runaway() {
    let states = states_over(Duration::from_millis(300));
    assert!(
        states < 100,
        "{states} states published in 300 ms (upkeep {:?})",
        fastnow::upkeep_resolution()
    );
}

fn states_over(d: Duration) -> u64 {
    let before = fastnow::__test::state_generation();
    std::thread::sleep(d);
    fastnow::__test::state_generation() - before
}
