//! The CLOCK SNAPSHOT section: how tightly `fastnow::ClockSnapshot::now()`
//! reads every clock together here, the conversions' stated error at that
//! moment, and a check that `Instant::now().to_monotonic_nanos()` lands
//! between two `CLOCK_MONOTONIC` readings taken around it.

use fastnow::{ClockSnapshot, Instant};
use serde::{Deserialize, Serialize};
use std::fmt::Write;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// How many snapshots were taken (each itself the tightest of a few
    /// tries).
    pub tries: u32,
    /// The tightest snapshot's width, ns.
    pub width_ns: u64,
    /// `conversion_error()` at that snapshot, ns.
    pub conversion_error_ns: u64,
    /// That snapshot, as it prints.
    pub text: String,
    /// The tightest bracket of two `CLOCK_MONOTONIC` readings around
    /// `Instant::now().to_monotonic_nanos()`, ns; absent where the report
    /// reads no such clock.
    pub check_bracket_ns: Option<u64>,
    /// How far that conversion fell outside its bracket, ns (0: inside).
    pub check_outside_ns: Option<u64>,
    /// Whether it fell within the conversion's stated error of the bracket.
    pub check_holds: Option<bool>,
}

/// How many snapshots the section takes.
const TRIES: u32 = 20;

/// The clock `Instant::to_monotonic_nanos` converts to, read directly, in
/// ns (None where the report reads none).
#[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
fn kernel_mono() -> Option<u64> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let clock = libc::CLOCK_MONOTONIC;
    #[cfg(target_vendor = "apple")]
    let clock = libc::CLOCK_UPTIME_RAW;
    // The clock exists on every kernel these targets run: it cannot fail.
    Some(fastnow_bench::clock_gettime_ns(clock))
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_vendor = "apple")))]
fn kernel_mono() -> Option<u64> {
    None
}

/// How far `v` lies outside `[lo, hi]` (0 inside).
pub fn outside(lo: u64, v: u64, hi: u64) -> u64 {
    lo.saturating_sub(v).max(v.saturating_sub(hi))
}

/// The tightest of many brackets `CLOCK_MONOTONIC, a conversion of
/// Instant::now(), CLOCK_MONOTONIC`: its width and how far the conversion
/// fell outside it.
fn check() -> Option<(u64, u64)> {
    let mut best: Option<(u64, u64)> = None;
    for _ in 0..200 {
        let a = kernel_mono()?;
        let v = Instant::now().to_monotonic_nanos();
        let b = kernel_mono()?;
        let width = b.saturating_sub(a);
        match best {
            Some((w, _)) if w <= width => {}
            _ => best = Some((width, outside(a, v, b))),
        }
    }
    best
}

pub fn measure() -> Snapshot {
    let _ = Instant::now();
    let best = (0..TRIES)
        .map(|_| ClockSnapshot::now())
        .min_by_key(|s| s.width)
        .expect("at least one snapshot");
    let error = fastnow::conversion_error().as_nanos() as u64;
    let checked = check();
    Snapshot {
        tries: TRIES,
        width_ns: best.width.as_nanos() as u64,
        conversion_error_ns: best.conversion_error.as_nanos() as u64,
        text: best.to_string(),
        check_bracket_ns: checked.map(|(w, _)| w),
        check_outside_ns: checked.map(|(_, o)| o),
        check_holds: checked.map(|(_, o)| o <= error),
    }
}

/// The section's lines, as (label, value); `instant` names the precise
/// reading and its conversion in the report's language.
pub fn rows(s: &Snapshot, conversion: &str) -> Vec<(&'static str, String)> {
    let check = match (s.check_bracket_ns, s.check_outside_ns, s.check_holds) {
        (Some(bracket), Some(outside), Some(holds)) => format!(
            "{conversion} {} two CLOCK_MONOTONIC readings {bracket} ns apart{}",
            if outside == 0 {
                "between".to_string()
            } else {
                format!("{outside} ns outside")
            },
            if holds {
                ", within the stated error"
            } else {
                ": beyond the stated error"
            }
        ),
        _ => "no CLOCK_MONOTONIC read here to check against".to_string(),
    };
    vec![
        (
            "width",
            format!(
                "{} ns, the tightest of {} snapshots; conversions ±{} ns then",
                s.width_ns, s.tries, s.conversion_error_ns
            ),
        ),
        ("check", check),
        ("snapshot", s.text.clone()),
    ]
}

/// The conversion the check makes, named in the report's language.
pub fn conversion_name(go: bool) -> &'static str {
    if go {
        "Now().MonotonicNanos()"
    } else {
        "Instant::now().to_monotonic_nanos()"
    }
}

pub fn text(out: &mut String, s: &Snapshot, go: bool) {
    let title = if go {
        "fastnow.Snapshot"
    } else {
        "fastnow::ClockSnapshot"
    };
    let _ = writeln!(out, "\nCLOCK SNAPSHOT ({title})");
    for (k, v) in rows(s, conversion_name(go)) {
        let _ = writeln!(out, "  {k:<15}{v}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The section is measured and rendered: a snapshot within a few
    /// microseconds, and on Linux the check against CLOCK_MONOTONIC holds
    /// (the conversion lies within the stated error of its bracket).
    #[test]
    fn measures_and_renders() {
        let s = measure();
        assert!(s.width_ns > 0, "{s:?}");
        assert!(s.text.contains("CLOCK_MONOTONIC"), "{s:?}");
        if cfg!(any(target_os = "linux", target_os = "android")) {
            assert_eq!(s.check_holds, Some(true), "{s:?}");
        }
        let mut out = String::new();
        text(&mut out, &s, false);
        assert!(
            out.contains("CLOCK SNAPSHOT") && out.contains(&s.text),
            "{out}"
        );
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<Snapshot>(&json).unwrap(), s);
    }

    /// How far outside a bracket, either way.
    #[test]
    fn outside_either_way() {
        assert_eq!(outside(10, 15, 20), 0);
        assert_eq!(outside(10, 7, 20), 3);
        assert_eq!(outside(10, 25, 20), 5);
    }
}
