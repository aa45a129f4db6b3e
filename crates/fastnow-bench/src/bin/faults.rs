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
    use fastnow_bench::faults::{self, DisciplineGuard};
    use std::time::Duration;

    struct Bound {
        what: String,
        ok: bool,
    }

    fn check(bounds: &mut Vec<Bound>, ok: bool, what: String) {
        println!("  {} {what}", if ok { "ok  " } else { "MISS" });
        bounds.push(Bound { what, ok });
    }

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
        if info.source != fastnow::Source::Counter {
            println!("SKIPPED: fastnow does not use the counter here, so nothing to fault");
            return 0;
        }
        let after = if quick {
            Duration::from_secs(4)
        } else {
            Duration::from_secs(12)
        };
        let before = Duration::from_secs(2);
        let mut bounds = Vec::new();
        let guard = DisciplineGuard::new().expect("read adjtimex");

        println!("\n| event | wall error before | first 3 s | 3 s on | 1 s intervals from 3 s | strict violations | steps back |");
        println!("|---|---:|---:|---:|---:|---:|---:|");
        // (event, change in ppm, settled bound in ns)
        let events: [(&str, Box<dyn Fn(&DisciplineGuard)>, f64, i64); 4] = [
            (
                "frequency +500 ppm (ADJ_FREQUENCY)",
                Box::new(|g| g.set_ppm(500).unwrap()),
                500.0,
                2_000,
            ),
            (
                "frequency back to 0",
                Box::new(|g| g.set_ppm(0).unwrap()),
                500.0,
                2_000,
            ),
            (
                "tick 10000 → 10080 (0.8 % slew)",
                Box::new(|g| g.set_tick(10_080).unwrap()),
                8_000.0,
                20_000,
            ),
            (
                "tick back to 10000",
                Box::new(|g| g.set_tick(10_000).unwrap()),
                8_000.0,
                20_000,
            ),
        ];
        let mut outcomes = Vec::new();
        for (name, change, ppm, settled) in &events {
            let o = faults::rate_event(name, before, after, || change(&guard));
            println!(
                "| {} | {} ns | {} ns | {} ns | {:.3} ppm | {} | {} |",
                o.event,
                o.wall_steady_ns,
                o.wall_first_ns,
                o.wall_after_ns,
                o.interval_after_ppm,
                o.strict_violations,
                o.steps_back
            );
            outcomes.push((o, *ppm, *settled));
        }
        drop(guard);
        println!();
        for (o, ppm, settled) in &outcomes {
            let first_bound = (*ppm * 1_000.0) as i64 + 1_000; // change × 1 s + 1 µs
            check(
                &mut bounds,
                o.wall_steady_ns <= 1_000,
                format!(
                    "{}: steady wall error {} ns ≤ 1 µs",
                    o.event, o.wall_steady_ns
                ),
            );
            check(
                &mut bounds,
                o.wall_first_ns <= first_bound,
                format!(
                    "{}: wall error right after {} ns ≤ {} ns",
                    o.event, o.wall_first_ns, first_bound
                ),
            );
            if !quick {
                check(
                    &mut bounds,
                    o.wall_after_ns <= *settled,
                    format!(
                        "{}: wall error from 3 s {} ns ≤ {} ns",
                        o.event, o.wall_after_ns, settled
                    ),
                );
                check(
                    &mut bounds,
                    o.interval_after_ppm <= 1.0,
                    format!(
                        "{}: 1 s intervals from 3 s within {:.3} ppm ≤ 1 ppm",
                        o.event, o.interval_after_ppm
                    ),
                );
            }
            check(
                &mut bounds,
                o.strict_violations == 0 && o.steps_back == 0,
                format!(
                    "{}: {} strict violations, {} steps back",
                    o.event, o.strict_violations, o.steps_back
                ),
            );
        }

        println!("\nsteps of the system clock:");
        let limit = if upkeep {
            Duration::from_millis(10)
        } else {
            Duration::from_millis(1_050)
        };
        for step in [1_000_000_000i64, -1_000_000_000] {
            match faults::step_followed_after(step, Duration::from_secs(3)) {
                Ok(followed) => check(
                    &mut bounds,
                    followed.is_some_and(|d| d <= limit),
                    format!(
                        "step {:+} s followed after {followed:?} (≤ {limit:?})",
                        step / 1_000_000_000
                    ),
                ),
                Err(e) => check(&mut bounds, false, format!("clock_settime failed: {e}")),
            }
        }

        println!("\nthe kernel drops the TSC:");
        match faults::clocksources() {
            Ok((current, available)) => match available.iter().find(|c| **c != current) {
                Some(other) if current == "tsc" => {
                    let limit = if upkeep { Duration::from_millis(1_100) } else { Duration::from_millis(1_600) };
                    match faults::demotion(other, Duration::from_secs(3)) {
                        Ok(o) => {
                            println!("  {}", o.info);
                            check(&mut bounds, o.noticed_after.is_some_and(|d| d <= limit),
                                format!("switch to {other} noticed after {:?} (≤ {limit:?})", o.noticed_after));
                            check(&mut bounds, o.interval_error_ns.abs() <= 10_000,
                                format!("an interval across the switch is {} ns off CLOCK_MONOTONIC's (≤ 10 µs)", o.interval_error_ns));
                            check(&mut bounds, o.strict_violations == 0 && o.steps_back == 0,
                                format!("{} strict violations, {} steps back across the switch", o.strict_violations, o.steps_back));
                        }
                        Err(e) => check(&mut bounds, false, format!("cannot switch the clocksource: {e}")),
                    }
                }
                _ => println!("  SKIPPED: no other clocksource to switch to (current {current}, available {available:?})"),
            },
            Err(e) => println!("  SKIPPED: sysfs clocksource files unreadable: {e}"),
        }
        let missed = bounds.iter().filter(|b| !b.ok).count();
        println!(
            "\n{} of {} bounds met ({mode})",
            bounds.len() - missed,
            bounds.len()
        );
        for b in bounds.iter().filter(|b| !b.ok) {
            println!("MISSED: {}", b.what);
        }
        i32::from(missed > 0)
    }
}
