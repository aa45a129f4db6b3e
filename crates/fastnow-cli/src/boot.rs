//! The TIME ACROSS SUSPEND section: how `fastnow::BootInstant` reads here
//! and why, what a reading costs against the kernel's boot clock and against
//! `fastnow::Instant::now()`, and how it agrees with the kernel's boot clock
//! over an interval.

use fastnow::{BootInstant, Instant, Source};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant as StdInstant};

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Boot {
    /// How a reading is taken, e.g. "the counter's line plus the boot offset".
    pub route: String,
    /// Why that route, and which clock counts suspend here.
    pub why: String,
    /// `BootInstant::now()`, ns per call (median of interleaved rounds).
    pub ns_per_call: f64,
    /// `fastnow::Instant::now()` in the same rounds, ns per call.
    pub instant_ns_per_call: f64,
    /// `ns_per_call / instant_ns_per_call`.
    pub vs_instant: f64,
    /// The kernel's boot clock called directly (`clock_gettime
    /// (CLOCK_BOOTTIME)`; Apple: `CLOCK_MONOTONIC_RAW`), ns per call; absent
    /// where there is none.
    pub os_ns_per_call: Option<f64>,
    /// `ns_per_call / os_ns_per_call`.
    pub vs_os: Option<f64>,
    /// The interval over which agreement was measured, by the kernel's boot
    /// clock, ns; absent where there is none.
    pub interval_kernel_ns: Option<u64>,
    /// The same interval by `BootInstant`, ns.
    pub interval_fastnow_ns: u64,
    /// The uncertainty of that comparison: half the two brackets' widths, ns.
    pub bracket_ns: Option<u64>,
}

/// The kernel's clock that counts suspend, in ns (None where fastnow reads
/// none: there `BootInstant` advances as `Instant` does).
#[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
#[inline(always)]
fn os_call() -> Option<u64> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let clock = libc::CLOCK_BOOTTIME;
    #[cfg(target_vendor = "apple")]
    let clock = libc::CLOCK_MONOTONIC_RAW;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_vendor = "apple")))]
#[inline(always)]
fn os_call() -> Option<u64> {
    None
}

/// The name of the kernel's clock that counts suspend.
const BOOT_CLOCK: &str = if cfg!(any(target_os = "linux", target_os = "android")) {
    "CLOCK_BOOTTIME"
} else if cfg!(target_vendor = "apple") {
    "mach_continuous_time (CLOCK_MONOTONIC_RAW)"
} else if cfg!(windows) {
    "QueryPerformanceCounter, which counts suspend"
} else {
    "none (no clock here tells suspend apart)"
};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// ns per call of `BootInstant::now`, `Instant::now` and the OS call, each
/// round `iters` calls of each, interleaved.
fn costs(rounds: usize, iters: u32) -> (f64, f64, Option<f64>) {
    let per_call = |f: &dyn Fn()| {
        let t = StdInstant::now();
        for _ in 0..iters {
            f();
        }
        t.elapsed().as_nanos() as f64 / f64::from(iters)
    };
    let has_os = os_call().is_some();
    let (mut boot, mut instant, mut os) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        boot.push(per_call(&|| {
            std::hint::black_box(BootInstant::now());
        }));
        instant.push(per_call(&|| {
            std::hint::black_box(Instant::now());
        }));
        if has_os {
            os.push(per_call(&|| {
                std::hint::black_box(os_call());
            }));
        }
    }
    (median(boot), median(instant), has_os.then(|| median(os)))
}

/// A `BootInstant` reading and the kernel's boot clock at its moment: the
/// tightest of many brackets `kernel, BootInstant, kernel`, matched to the
/// midpoint; and the bracket's width.
fn pair() -> Option<(u64, u64, u64)> {
    let mut best: Option<(u64, u64, u64)> = None;
    for _ in 0..200 {
        let a = os_call()?;
        let ours = BootInstant::now().as_nanos();
        let b = os_call()?;
        let width = b.saturating_sub(a);
        match best {
            Some((_, _, w)) if w <= width => {}
            _ => best = Some((ours, a + width / 2, width)),
        }
    }
    best
}

pub fn measure(quick: bool) -> Boot {
    let info = fastnow::clock_info();
    let (route, why) = match info.source {
        Source::Counter => (
            "the counter's line plus the boot offset".to_string(),
            format!(
                "the counter is the source; the offset ({BOOT_CLOCK} less the precise timeline) \
                 is measured at every state update and published with the line"
            ),
        ),
        Source::Os => (
            format!("{BOOT_CLOCK}, read at each call"),
            "the OS clock is the precise tier's source for good: no update comes to measure \
             the offset, so each reading reads the boot clock"
                .to_string(),
        ),
    };
    let (rounds, iters, interval) = if quick {
        (3, 20_000, Duration::from_millis(200))
    } else {
        (7, 100_000, Duration::from_secs(1))
    };
    let (ns_per_call, instant_ns_per_call, os_ns_per_call) = costs(rounds, iters);

    // Agreement over the interval, reading as a program would meanwhile.
    let p0 = pair();
    let b0 = BootInstant::now();
    let start = StdInstant::now();
    while start.elapsed() < interval {
        let _ = BootInstant::now();
        std::thread::sleep(Duration::from_millis(1));
    }
    let b1 = BootInstant::now();
    let p1 = pair();
    let agreement = p0.zip(p1);
    Boot {
        route,
        why,
        ns_per_call,
        instant_ns_per_call,
        vs_instant: ns_per_call / instant_ns_per_call,
        os_ns_per_call,
        vs_os: os_ns_per_call.map(|os| ns_per_call / os),
        interval_kernel_ns: agreement.map(|((_, k0, _), (_, k1, _))| k1 - k0),
        interval_fastnow_ns: match agreement {
            Some(((o0, _, _), (o1, _, _))) => o1 - o0,
            None => (b1 - b0).as_nanos() as u64,
        },
        bracket_ns: agreement.map(|((_, _, w0), (_, _, w1))| (w0 + w1) / 2),
    }
}

/// The section's lines, as (label, value).
pub fn rows(b: &Boot) -> Vec<(&'static str, String)> {
    let os = match (b.os_ns_per_call, b.vs_os) {
        (Some(os), Some(ratio)) => format!("; {BOOT_CLOCK} alone {os:.1} ns ({ratio:.2}x)"),
        _ => String::new(),
    };
    let agreement = match b.interval_kernel_ns {
        Some(kernel) => format!(
            "over {:.3} s of {BOOT_CLOCK}: {:+} ns (±{} ns of brackets)",
            kernel as f64 / 1e9,
            b.interval_fastnow_ns as i64 - kernel as i64,
            b.bracket_ns.unwrap_or(0)
        ),
        None => "no boot clock to compare here: BootInstant advances as Instant does".to_string(),
    };
    vec![
        ("route", format!("{} — {}", b.route, b.why)),
        (
            "cost",
            format!(
                "{:.1} ns per call; Instant::now {:.1} ns ({:.2}x){os}",
                b.ns_per_call, b.instant_ns_per_call, b.vs_instant
            ),
        ),
        ("agreement", agreement),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The section is measured and rendered with its route, its costs, and
    /// its agreement with the kernel's boot clock within a microsecond plus
    /// the brackets (a fifth of a second, where the rate may still be young:
    /// the bound is loose).
    #[test]
    fn measures_and_renders() {
        let b = measure(true);
        assert!(b.ns_per_call > 0.0 && b.instant_ns_per_call > 0.0);
        if let Some(kernel) = b.interval_kernel_ns {
            let off = (b.interval_fastnow_ns as i64 - kernel as i64).unsigned_abs();
            assert!(off < 100_000 + b.bracket_ns.unwrap(), "{b:?}");
        }
        if cfg!(any(target_os = "linux", target_os = "android")) {
            assert!(b.os_ns_per_call.is_some());
        }
        let out: String = rows(&b).iter().map(|(k, v)| format!("{k} {v}\n")).collect();
        assert!(out.contains(&b.route), "{out}");
        let json = serde_json::to_string(&b).unwrap();
        assert_eq!(serde_json::from_str::<Boot>(&json).unwrap(), b);
    }
}
