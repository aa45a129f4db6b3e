//! The THREAD CPU TIME section: which route `fastnow::ThreadCpuInstant`
//! takes here and why, what a reading costs against the OS's own thread
//! clock, and how it agrees with that clock over a busy loop and a sleep.

use fastnow::{ThreadCpuInstant, ThreadCpuSource};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant as StdInstant};

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ThreadCpu {
    /// The route (`ClockInfo::thread_cpu`), e.g. "perf task-clock page".
    pub source: String,
    /// Why that route: the perf page's refusal, or why there is none.
    pub why: String,
    /// Where the perf page offers no user-space time: the OS call and the
    /// perf event's own system call as the process measured them when it
    /// chose (`ClockInfo::thread_cpu_costs`, ns per call), and whether it
    /// took the event's; absent where it did not have to choose.
    #[serde(default)]
    pub choice: Option<RouteChoice>,
    /// `fastnow::measures_thread_cpu_time()`.
    pub measures_thread_cpu_time: bool,
    /// `ThreadCpuInstant::now()`, ns per call (median of interleaved rounds).
    pub ns_per_call: f64,
    /// The OS's thread clock called directly (`clock_gettime
    /// (CLOCK_THREAD_CPUTIME_ID)`), ns per call; absent where there is none.
    pub os_ns_per_call: Option<f64>,
    /// `ns_per_call / os_ns_per_call`.
    pub vs_os: Option<f64>,
    /// CPU time burnt in the busy loop, by the kernel's thread clock, ns.
    pub busy_kernel_ns: Option<u64>,
    /// The same interval by `ThreadCpuInstant`, ns.
    pub busy_fastnow_ns: u64,
    /// `ThreadCpuInstant` over a sleep, ns of CPU (wall time: `sleep_ns`).
    pub sleep_cpu_ns: u64,
    pub sleep_ns: u64,
}

/// `fastnow::ThreadCpuCosts`, as the report keeps it.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
pub struct RouteChoice {
    pub os_call_ns: u32,
    pub perf_ioctl_ns: u32,
    pub perf_ioctl_taken: bool,
}

/// The OS's thread clock, straight (the baseline a reading is held to).
#[cfg(unix)]
#[inline(always)]
fn os_call() -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

#[cfg(not(unix))]
#[inline(always)]
fn os_call() -> Option<u64> {
    None
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// ns per call of `f`, each round `iters` calls, the two clocks interleaved.
fn costs(rounds: usize, iters: u32) -> (f64, Option<f64>) {
    let per_call = |f: &dyn Fn()| {
        let t = StdInstant::now();
        for _ in 0..iters {
            f();
        }
        t.elapsed().as_nanos() as f64 / f64::from(iters)
    };
    let has_os = os_call().is_some();
    let (mut ours, mut os) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        ours.push(per_call(&|| {
            std::hint::black_box(ThreadCpuInstant::now());
        }));
        if has_os {
            os.push(per_call(&|| {
                std::hint::black_box(os_call());
            }));
        }
    }
    (median(ours), has_os.then(|| median(os)))
}

pub fn measure(quick: bool) -> ThreadCpu {
    let info = fastnow::clock_info();
    let why = match (info.thread_cpu, info.thread_cpu_fallback) {
        (ThreadCpuSource::PerfIoctl, _) => {
            "the perf page offers no cap_user_time; the event's own system call measured cheaper"
                .to_string()
        }
        (_, Some(refusal)) => format!("perf page refused: {refusal}"),
        (ThreadCpuSource::PerfPage, None) => "the perf page offers cap_user_time".to_string(),
        (ThreadCpuSource::Os(_), None) => {
            "the OS's thread clock (no perf route on this target)".to_string()
        }
        (ThreadCpuSource::ProcessCpu(_), None) => {
            "no thread clock here; the process's CPU time".to_string()
        }
        (_, None) => "no CPU clock here: every duration is zero".to_string(),
    };
    let (rounds, iters, busy) = if quick {
        (3, 20_000, Duration::from_millis(20))
    } else {
        (7, 100_000, Duration::from_millis(100))
    };
    let (ns_per_call, os_ns_per_call) = costs(rounds, iters);

    // Agreement: the kernel's interval encloses ours.
    let k0 = os_call();
    let t0 = ThreadCpuInstant::now();
    let wall = StdInstant::now();
    let mut x = 0u64;
    while wall.elapsed() < busy {
        for i in 0..1_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
    }
    let t1 = ThreadCpuInstant::now();
    let k1 = os_call();
    let sleep_start = ThreadCpuInstant::now();
    let sleep = Duration::from_millis(if quick { 10 } else { 50 });
    let slept = StdInstant::now();
    std::thread::sleep(sleep);
    let sleep_ns = slept.elapsed().as_nanos() as u64;
    ThreadCpu {
        source: info.thread_cpu.to_string(),
        why,
        choice: info.thread_cpu_costs.map(|c| RouteChoice {
            os_call_ns: c.os_call_ns,
            perf_ioctl_ns: c.perf_ioctl_ns,
            perf_ioctl_taken: c.perf_ioctl_taken,
        }),
        measures_thread_cpu_time: fastnow::measures_thread_cpu_time(),
        ns_per_call,
        os_ns_per_call,
        vs_os: os_ns_per_call.map(|os| ns_per_call / os),
        busy_kernel_ns: k0.zip(k1).map(|(a, b)| b - a),
        busy_fastnow_ns: (t1 - t0).as_nanos() as u64,
        sleep_cpu_ns: sleep_start.elapsed().as_nanos() as u64,
        sleep_ns,
    }
}

/// The section's lines, as (label, value).
pub fn rows(t: &ThreadCpu) -> Vec<(&'static str, String)> {
    let cost = match (t.os_ns_per_call, t.vs_os) {
        (Some(os), Some(ratio)) => format!(
            "{:.1} ns per call; the OS call alone {os:.1} ns ({ratio:.2}x)",
            t.ns_per_call
        ),
        _ => format!("{:.1} ns per call", t.ns_per_call),
    };
    let busy = match t.busy_kernel_ns {
        Some(kernel) => format!(
            "{:.3} ms of CPU by fastnow, {:.3} ms by CLOCK_THREAD_CPUTIME_ID ({:+} ns)",
            t.busy_fastnow_ns as f64 / 1e6,
            kernel as f64 / 1e6,
            t.busy_fastnow_ns as i64 - kernel as i64
        ),
        None => format!(
            "{:.3} ms of CPU by fastnow (no OS thread clock to compare)",
            t.busy_fastnow_ns as f64 / 1e6
        ),
    };
    let mut rows = vec![("route", format!("{} — {}", t.source, t.why))];
    if let Some(c) = t.choice {
        rows.push((
            "route choice",
            format!(
                "the OS call {} ns, the perf event's ioctl {} ns per call \
                 (measured at first use, interleaved): {}",
                c.os_call_ns,
                c.perf_ioctl_ns,
                if c.perf_ioctl_taken {
                    "the ioctl taken"
                } else {
                    "the OS call kept (the ioctl must be 3 % cheaper, in most rounds)"
                }
            ),
        ));
    }
    rows.extend([
        ("cost", cost),
        ("busy loop", busy),
        (
            "asleep",
            format!(
                "{:.3} ms of CPU over {:.1} ms of sleep{}",
                t.sleep_cpu_ns as f64 / 1e6,
                t.sleep_ns as f64 / 1e6,
                if t.measures_thread_cpu_time {
                    ""
                } else {
                    " (not a thread CPU clock here)"
                }
            ),
        ),
    ]);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The section is measured and rendered with its route, its cost
    /// against the OS call, and agreement within the bracket.
    #[test]
    fn measures_and_renders() {
        let t = measure(true);
        assert!(t.ns_per_call > 0.0);
        if cfg!(unix) {
            let kernel = t.busy_kernel_ns.unwrap();
            assert!(t.busy_fastnow_ns <= kernel + kernel / 100 + 1_000_000);
            assert!(t.busy_fastnow_ns + kernel / 100 + 1_000_000 >= kernel);
            assert!(t.os_ns_per_call.is_some() && t.measures_thread_cpu_time);
        }
        let out: String = rows(&t).iter().map(|(k, v)| format!("{k} {v}\n")).collect();
        assert!(out.contains(&t.source), "{out}");
        // The route choice is shown where the process made one, and agrees
        // with the route.
        let info = fastnow::clock_info();
        assert_eq!(
            t.choice.map(|c| c.perf_ioctl_taken),
            info.thread_cpu_costs.map(|c| c.perf_ioctl_taken)
        );
        assert_eq!(out.contains("route choice"), t.choice.is_some(), "{out}");
        if let Some(c) = t.choice {
            assert_eq!(
                c.perf_ioctl_taken,
                t.source == ThreadCpuSource::PerfIoctl.to_string()
            );
        }
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(serde_json::from_str::<ThreadCpu>(&json).unwrap(), t);
    }
}
