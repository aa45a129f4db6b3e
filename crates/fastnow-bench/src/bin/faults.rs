//! `make test-faults`: clock faults injected into the real kernel — NTP
//! frequency corrections, a tick slew, steps of the system clock, the kernel
//! dropping the TSC — with fastnow measured against `CLOCK_REALTIME` and
//! `CLOCK_MONOTONIC` through each, and the bounds of `spec/SEMANTICS.md`
//! asserted. Every change is undone in a guard, even on failure.
//!
//! Usage: `faults [--upkeep] [--quick]`. `--upkeep` runs with the coarse
//! tier's upkeep thread doing the updates (readers only load); `--quick`
//! shortens each rate event (for a look, not for the bounds after 3 s).
//! Exits 0 with a SKIPPED line when the process may not change the clock.

#[cfg(not(target_os = "linux"))]
fn main() {
    println!("SKIPPED: fault injection needs Linux (adjtimex, clock_settime, sysfs)");
}

#[cfg(target_os = "linux")]
fn main() {
    std::process::exit(linux::run());
}

#[cfg(target_os = "linux")]
mod linux {
    use fastnow_bench::faults;
    use std::time::Duration;

    pub fn run() -> i32 {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let upkeep = args.iter().any(|a| a == "--upkeep");
        let quick = args.iter().any(|a| a == "--quick");
        if let Err(why) = faults::available() {
            println!("SKIPPED: {why}");
            return 0;
        }
        let _ = fastnow::Instant::now();
        if upkeep {
            fastnow::start_upkeep(fastnow::DEFAULT_RESOLUTION).expect("start upkeep");
        }
        std::thread::sleep(Duration::from_millis(1500)); // past the first windows
        let info = fastnow::clock_info();
        let mode = if upkeep {
            "upkeep thread updates"
        } else {
            "readers update"
        };
        println!("fastnow under clock faults ({mode}); {info}");
        if let Ok(d) = faults::discipline() {
            // A frequency at the kernel's ±500 ppm limit is often a run
            // killed before its guard put the machine's value back.
            println!(
                "the kernel's discipline at start: frequency {:+.3} ppm, tick {} (put back at the end)",
                d.freq as f64 / faults::PPM as f64,
                d.tick
            );
        }
        if info.source != fastnow::Source::Counter {
            println!("SKIPPED: fastnow does not use the counter here, so nothing to fault");
            return 0;
        }
        // After each event: how many readings returned the lower bound of
        // the next state (past a state's end while a preempted writer held
        // the lock), which slows the clock for those readings.
        let mut slowed_before = fastnow::__test::slowed_readings();
        let mut slowed = || {
            let now = fastnow::__test::slowed_readings();
            if now != slowed_before {
                println!(
                    "  readings that got a lower bound (a writer preempted): {}",
                    now - slowed_before
                );
            }
            slowed_before = now;
        };
        let events = faults::run(upkeep, quick, |name| {
            slowed();
            println!("\n{name}");
        });
        slowed();
        println!("\n| event | check | value | bound | |\n|---|---|---:|---:|---|");
        let (mut met, mut missed) = (0, Vec::new());
        for e in &events {
            if e.checks.is_empty() {
                println!("| {} | | | | skipped |", e.name);
            }
            for c in &e.checks {
                let value = c
                    .value
                    .map_or("never".into(), |v| format!("{v:.3} {}", c.unit));
                println!(
                    "| {} | {} | {value} | {} {} | {} |",
                    e.name,
                    c.what,
                    c.bound,
                    c.unit,
                    if c.ok() { "ok" } else { "MISSED" }
                );
                if c.ok() {
                    met += 1;
                } else {
                    missed.push(format!("{}: {}", e.name, c.what));
                }
            }
        }
        println!(
            "\n{met} of {} bounds met ({mode}); {}",
            met + missed.len(),
            fastnow::clock_info()
        );
        for m in &missed {
            println!("MISSED: {m}");
        }
        i32::from(!missed.is_empty())
    }
}
