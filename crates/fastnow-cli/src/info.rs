//! `fastnow info`: the clock fastnow chose here and why, without measuring.

use fastnow::{ClockInfo, EnvOverride, FreqOrigin, Source};
use std::fmt::Write as _;

/// Why the precise clocks read what they read, in a sentence.
pub fn why(i: &ClockInfo) -> String {
    let mut why = match (i.source, i.fallback) {
        (_, Some(f)) => format!("the OS clock for good: {f}"),
        (Source::Os, None) => {
            "the OS clock for now: the counter awaits the kernel's verdict, which could not be read yet".to_string()
        }
        (Source::Counter, None) if i.env_override == EnvOverride::Counter => {
            "FASTNOW_CLOCK=counter: the counter whenever it can be read, whatever the kernel says".to_string()
        }
        (Source::Counter, None) => match i.kernel_clocksource {
            Some(cs) => format!(
                "the counter is invariant and the kernel's clocksource is {cs}: the kernel checked that every \
                 CPU's counter agrees before it chose it, and fastnow reads that verdict again at least once a \
                 second and follows it"
            ),
            None => "the counter is invariant, and every CPU reads the same architectural counter here (no \
                     kernel verdict to read on this target)"
                .to_string(),
        },
    };
    if let Some(u) = i.verdict_unavailable {
        let _ = write!(why, "; {u}");
    }
    why
}

/// The lines `fastnow info` prints.
pub fn text(i: &ClockInfo) -> String {
    let source = match i.source {
        Source::Counter => format!(
            "counter {}{}",
            i.counter.unwrap_or("?"),
            if i.invariant { " (invariant)" } else { "" }
        ),
        Source::Os => format!("OS clock ({})", i.ordered_read),
    };
    let frequency = match (i.source, i.freq_origin) {
        (Source::Os, _) => "1000000000 Hz (the OS clock counts nanoseconds)".to_string(),
        (_, FreqOrigin::Pending) => "pending (the counter's rate is being measured)".to_string(),
        (_, origin) => format!(
            "{} Hz ({origin:?}{}; published: {})",
            i.freq_hz,
            if i.calibration_baseline.is_zero() {
                String::new()
            } else {
                format!(" over {:?}", i.calibration_baseline)
            },
            i.published_freq_hz
                .map_or("none".to_string(), |h| format!("{h} Hz"))
        ),
    };
    let mut rows: Vec<(&str, String)> = vec![
        ("source", source),
        ("why", why(i)),
        (
            "clocksource",
            i.kernel_clocksource.map_or(
                "not read on this target".to_string(),
                |cs| format!("{cs} (the kernel's, at fastnow's last check)"),
            ),
        ),
        ("frequency", frequency),
        (
            "calibration",
            format!(
                "the OS clock for the first {:?} (until the first reading once the rate had been measured for a \
                 millisecond); the rate measured {} since",
                i.calibration_time,
                match i.refinements {
                    1 => "once".to_string(),
                    n => format!("{n} times"),
                }
            ),
        ),
        ("ordered read", i.ordered_read.to_string()),
        (
            "monotonic",
            format!("MonotonicInstant: {:?}", i.monotonic_mode),
        ),
        (
            "upkeep",
            if i.upkeep {
                "the upkeep thread updates (readers only load)".to_string()
            } else {
                "readers update (no upkeep thread)".to_string()
            },
        ),
        (
            "thread CPU",
            match i.thread_cpu_fallback {
                Some(why) => format!("{} ({why})", i.thread_cpu),
                None => i.thread_cpu.to_string(),
            },
        ),
    ];
    if let Some(hv) = i.hypervisor() {
        rows.push(("hypervisor", hv.to_string()));
    }
    rows.push(("FASTNOW_CLOCK", format!("{:?}", i.env_override)));
    rows.push(("summary", i.to_string()));
    let mut out = String::new();
    for (k, v) in rows {
        let _ = writeln!(out, "{k:<14}{v}");
    }
    out
}
