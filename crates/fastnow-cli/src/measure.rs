//! Runs every measurement of the report through the shared harness
//! (`fastnow_bench`), the same code behind BENCHMARKS.md.

use crate::ReportArgs;
use fastnow_bench::{clocks, median, percentile, Clock, Kind};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::time::{Duration, Instant as StdInstant};

/// Bump when a field changes meaning or disappears (REPORT.md documents them).
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub fastnow_version: &'static str,
    pub mode: &'static str,
    pub machine: Machine,
    pub fastnow: Chosen,
    pub costs: Vec<CostRow>,
    pub correctness: Vec<CorrectRow>,
    pub latency: Vec<Histogram>,
    pub drift: Drift,
    pub wall: Spread,
    pub coarse: Coarse,
    pub verdict: String,
}

#[derive(Serialize)]
pub struct Machine {
    pub arch: &'static str,
    pub cpu_vendor: Option<String>,
    pub cpu_model: Option<String>,
    pub cores: usize,
    pub kernel: Option<String>,
    pub timer_flags: Vec<String>,
    pub hypervisor: Option<String>,
    pub clocksource_current: Option<String>,
    pub clocksource_available: Vec<String>,
}

#[derive(Serialize)]
pub struct Chosen {
    pub source: String,
    pub counter: Option<&'static str>,
    pub ordered_read: &'static str,
    pub freq_hz: u64,
    pub freq_origin: String,
    pub published_freq_hz: Option<u64>,
    pub calibration_baseline_ns: u64,
    pub calibration_wait_ns: u64,
    pub refinements: u32,
    pub fallback: Option<String>,
    pub env_override: String,
    pub monotonic_mode_at_start: String,
    pub monotonic_mode_after_report: String,
}

#[derive(Serialize)]
pub struct CostRow {
    pub clock: &'static str,
    pub kind: &'static str,
    pub ns_median: f64,
    pub ns_min: f64,
    pub ns_max: f64,
    pub all_cores_ns_median: f64,
    pub vs_std_instant: f64,
}

#[derive(Serialize)]
pub struct CorrectRow {
    pub clock: &'static str,
    pub per_thread_decreases: u64,
    pub per_thread_reads: u64,
    pub strict_checks: u64,
    pub strict_violations: u64,
    pub worst_step_back: u64,
}

#[derive(Serialize)]
pub struct Histogram {
    pub clock: &'static str,
    /// (bucket lower bound in ns per call, number of batches)
    pub buckets: Vec<(f64, u64)>,
}

#[derive(Serialize)]
pub struct Drift {
    pub window_s: f64,
    /// (seconds since start, fastnow elapsed − CLOCK_MONOTONIC elapsed, ns)
    pub samples: Vec<(f64, f64)>,
    pub final_error_ns: f64,
    pub final_error_ppm: f64,
}

#[derive(Serialize)]
pub struct Spread {
    pub median_ns: f64,
    pub p99_ns: f64,
    pub max_ns: f64,
}

#[derive(Serialize)]
pub struct Coarse {
    pub resolution_ms: f64,
    pub age_median_ms: f64,
    pub age_p99_ms: f64,
    pub age_max_ms: f64,
}

struct Plan {
    rounds: usize,
    iters: u64,
    strict_checks: u64,
    per_thread_reads: u64,
    samples: usize,
    window: Duration,
}

pub fn run(args: &ReportArgs) -> Report {
    let plan = if args.quick {
        Plan {
            rounds: 3,
            iters: 100_000,
            strict_checks: 100_000,
            per_thread_reads: 100_000,
            samples: 200,
            window: Duration::from_secs(2),
        }
    } else {
        Plan {
            rounds: 7,
            iters: 1_000_000,
            strict_checks: 2_000_000,
            per_thread_reads: 2_000_000,
            samples: 1000,
            window: Duration::from_secs(10),
        }
    };
    let plan = Plan {
        window: args.window.unwrap_or(plan.window),
        ..plan
    };
    let all = clocks();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let shared: Vec<Clock> = all.iter().copied().filter(|c| c.shared_timeline).collect();
    let steps = (plan.rounds * all.len() + all.len() + 2 * shared.len() + 4) as u64;
    let bar = ProgressBar::new(steps).with_style(
        ProgressStyle::with_template("{spinner} {msg:40} [{bar:30}] {pos}/{len} {elapsed}")
            .expect("static template")
            .progress_chars("=> "),
    );

    // Drift first: it sleeps through its window, and the first reading of
    // the process is the anchor, as for any program.
    bar.set_message("drift against CLOCK_MONOTONIC");
    let drift = drift(plan.window);
    let monotonic_at_start = format!("{:?}", fastnow::clock_info().monotonic_mode);
    bar.inc(1);

    // Costs: interleaved rounds, every clock once per round.
    let mut single: Vec<Vec<f64>> = vec![Vec::new(); all.len()];
    for _ in 0..plan.rounds {
        for (i, c) in all.iter().enumerate() {
            bar.set_message(format!("cost: {}", c.name));
            single[i].push((c.cost)(plan.iters));
            bar.inc(1);
        }
    }
    // All cores at once. A first, discarded run lets each clock settle as it
    // would in a long-running program: this is where MonotonicInstant meets
    // contention and leaves its high-water mark for the ordered counter.
    let mut contended = Vec::new();
    for c in &all {
        bar.set_message(format!("all cores: {}", c.name));
        let _ = fastnow_bench::contended(c.cost, cores, plan.iters);
        let rounds: Vec<f64> = (0..plan.rounds.min(3))
            .map(|_| median(&fastnow_bench::contended(c.cost, cores, plan.iters)))
            .collect();
        contended.push(median(&rounds));
        bar.inc(1);
    }
    let std_ns = median(
        &single[all
            .iter()
            .position(|c| c.name == "std Instant::now")
            .expect("std is measured")],
    );
    let costs = all
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let s = &single[i];
            CostRow {
                clock: c.name,
                kind: kind_name(c.kind),
                ns_median: median(s),
                ns_min: s.iter().cloned().fold(f64::MAX, f64::min),
                ns_max: s.iter().cloned().fold(0.0, f64::max),
                all_cores_ns_median: contended[i],
                vs_std_instant: median(s) / std_ns,
            }
        })
        .collect();

    let mut correctness = Vec::new();
    for c in &shared {
        bar.set_message(format!("monotonicity: {}", c.name));
        let back = fastnow_bench::per_thread_backwards(c.read, cores.min(4), plan.per_thread_reads);
        bar.inc(1);
        bar.set_message(format!("strict test: {}", c.name));
        let strict = fastnow_bench::strict_cross_thread(c.read, plan.strict_checks);
        bar.inc(1);
        correctness.push(CorrectRow {
            clock: c.name,
            per_thread_decreases: back,
            per_thread_reads: plan.per_thread_reads * cores.min(4) as u64,
            strict_checks: strict.checks,
            strict_violations: strict.violations,
            worst_step_back: strict.worst_step_back,
        });
    }

    bar.set_message("latency histograms");
    let latency = [
        "fastnow Instant::now",
        "std Instant::now",
        "clock_gettime MONOTONIC",
    ]
    .iter()
    .filter_map(|name| all.iter().find(|c| c.name == *name))
    .map(|c| histogram(c, plan.samples))
    .collect();
    bar.inc(1);

    bar.set_message("wall tier against CLOCK_REALTIME");
    let wall = fastnow_bench::wall_errors(plan.samples, Duration::from_micros(500));
    bar.inc(1);
    bar.set_message("coarse tier staleness");
    fastnow::stop_upkeep();
    let resolution = Duration::from_millis(1);
    let stale = match fastnow::start_upkeep(resolution) {
        Ok(()) => fastnow_bench::staleness(plan.samples, Duration::from_micros(137)),
        Err(_) => vec![f64::NAN],
    };
    fastnow::stop_upkeep();
    bar.inc(1);
    bar.finish_and_clear();

    let info = fastnow::clock_info();
    let mut report = Report {
        schema_version: SCHEMA_VERSION,
        fastnow_version: env!("CARGO_PKG_VERSION"),
        mode: if args.quick { "quick" } else { "thorough" },
        machine: machine(cores),
        fastnow: Chosen {
            source: format!("{:?}", info.source),
            counter: info.counter,
            ordered_read: info.ordered_read,
            freq_hz: info.freq_hz,
            freq_origin: format!("{:?}", info.freq_origin),
            published_freq_hz: info.published_freq_hz,
            calibration_baseline_ns: info.calibration_baseline.as_nanos() as u64,
            calibration_wait_ns: info.calibration_time.as_nanos() as u64,
            refinements: info.refinements,
            fallback: info.fallback.map(|f| f.to_string()),
            env_override: format!("{:?}", info.env_override),
            monotonic_mode_at_start: monotonic_at_start,
            monotonic_mode_after_report: format!("{:?}", info.monotonic_mode),
        },
        costs,
        correctness,
        latency,
        drift,
        wall: Spread {
            median_ns: percentile(&wall, 50.0),
            p99_ns: percentile(&wall, 99.0),
            max_ns: percentile(&wall, 100.0),
        },
        coarse: Coarse {
            resolution_ms: resolution.as_secs_f64() * 1e3,
            age_median_ms: percentile(&stale, 50.0) / 1e6,
            age_p99_ms: percentile(&stale, 99.0) / 1e6,
            age_max_ms: percentile(&stale, 100.0) / 1e6,
        },
        verdict: String::new(),
    };
    report.verdict = verdict(&report);
    report
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Fastnow => "fastnow",
        Kind::Baseline => "baseline",
        Kind::Os => "os",
        Kind::Peer => "peer",
    }
}

/// Per-call cost of `samples` batches of 64 calls, as a histogram.
fn histogram(c: &Clock, samples: usize) -> Histogram {
    let mut per_call: Vec<f64> = (0..samples * 10).map(|_| (c.cost)(64)).collect();
    per_call.sort_by(|a, b| a.total_cmp(b));
    // Buckets from the minimum to the 99th percentile, 20 of them; the rest
    // goes to the last bucket.
    let lo = per_call[0];
    let hi = percentile(&per_call, 99.0).max(lo + 1.0);
    let width = (hi - lo) / 20.0;
    let mut buckets: Vec<(f64, u64)> = (0..20).map(|i| (lo + i as f64 * width, 0)).collect();
    for x in per_call {
        let i = (((x - lo) / width) as usize).min(19);
        buckets[i].1 += 1;
    }
    Histogram {
        clock: c.name,
        buckets,
    }
}

fn drift(window: Duration) -> Drift {
    let start_std = StdInstant::now();
    let (start, m0) = bracket();
    let steps = 20;
    let mut samples = Vec::with_capacity(steps);
    for i in 1..=steps {
        let target = window.mul_f64(i as f64 / steps as f64);
        if let Some(rest) = target.checked_sub(start_std.elapsed()) {
            std::thread::sleep(rest);
        }
        let (t, m) = bracket();
        let ours = t.duration_since(start).as_nanos() as f64;
        samples.push(((m - m0) / 1e9, ours - (m - m0)));
    }
    let (secs, err) = *samples.last().expect("20 samples");
    Drift {
        window_s: window.as_secs_f64(),
        final_error_ns: err,
        final_error_ppm: err / (secs * 1e9) * 1e6,
        samples,
    }
}

/// A fastnow reading matched to the midpoint of the tightest of 5
/// CLOCK_MONOTONIC brackets.
fn bracket() -> (fastnow::Instant, f64) {
    let mut best = (fastnow::Instant::now(), 0.0, u64::MAX);
    for _ in 0..5 {
        let a = fastnow_bench::clock_gettime_ns(libc::CLOCK_MONOTONIC);
        let t = fastnow::Instant::now();
        let b = fastnow_bench::clock_gettime_ns(libc::CLOCK_MONOTONIC);
        if b - a < best.2 {
            best = (t, a as f64 + (b - a) as f64 / 2.0, b - a);
        }
    }
    (best.0, best.1)
}

fn machine(cores: usize) -> Machine {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        cpuinfo
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    const TIMER_FLAGS: [&str; 9] = [
        "tsc",
        "rdtscp",
        "constant_tsc",
        "nonstop_tsc",
        "tsc_known_freq",
        "tsc_reliable",
        "tsc_adjust",
        "tsc_deadline_timer",
        "hypervisor",
    ];
    let flags = field("flags").unwrap_or_default();
    let timer_flags = flags
        .split_whitespace()
        .filter(|f| TIMER_FLAGS.contains(f))
        .map(str::to_string)
        .collect();
    let sysfs = |f: &str| {
        std::fs::read_to_string(format!("/sys/devices/system/clocksource/clocksource0/{f}")).ok()
    };
    Machine {
        arch: std::env::consts::ARCH,
        cpu_vendor: field("vendor_id"),
        cpu_model: field("model name"),
        cores,
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .ok()
            .map(|s| s.trim().to_string()),
        timer_flags,
        hypervisor: fastnow::clock_info().hypervisor().map(str::to_string),
        clocksource_current: sysfs("current_clocksource").map(|s| s.trim().to_string()),
        clocksource_available: sysfs("available_clocksource")
            .map(|s| s.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
    }
}

fn verdict(r: &Report) -> String {
    let cost = |name: &str| {
        r.costs
            .iter()
            .find(|c| c.clock == name)
            .map(|c| c.ns_median)
            .unwrap_or(f64::NAN)
    };
    let strict = |name: &str| {
        r.correctness
            .iter()
            .find(|c| c.clock == name)
            .map(|c| c.strict_violations)
            .unwrap_or(0)
    };
    let std_ns = cost("std Instant::now");
    if let Some(why) = &r.fastnow.fallback {
        return format!(
            "fastnow uses the OS clock on this machine ({why}), so its precise and wall tiers cost what std does \
             ({:.0} ns here); only the coarse tier (recent(), {:.1} ns) is faster. Set FASTNOW_CLOCK=counter only if you \
             know this machine's counter is synchronised across CPUs.",
            std_ns,
            cost("fastnow recent")
        );
    }
    format!(
        "Here fastnow reads the {} at {:.3} GHz. Use fastnow::Instant to time work within a thread ({:.1} ns, {:.1}x \
         faster than std::time::Instant); MonotonicInstant when stamps from several threads must never go backwards \
         ({:.1} ns on one core, {:.1} ns with every core calling it; {} violations in the strict test, against {} for \
         Instant); unix_nanos() or UnixTime for timestamps ({:.1} ns, {:.1}x faster than SystemTime, within {:.0} ns \
         of CLOCK_REALTIME at p99); and recent() / recent_unix_nanos() for expiry checks that can be a millisecond \
         stale ({:.1} ns, p99 age {:.2} ms).",
        r.fastnow.counter.unwrap_or("counter"),
        r.fastnow.freq_hz as f64 / 1e9,
        cost("fastnow Instant::now"),
        std_ns / cost("fastnow Instant::now"),
        cost("fastnow MonotonicInstant::now"),
        r.costs.iter().find(|c| c.clock == "fastnow MonotonicInstant::now").map_or(f64::NAN, |c| c.all_cores_ns_median),
        strict("fastnow MonotonicInstant::now"),
        strict("fastnow Instant::now"),
        cost("fastnow unix_nanos"),
        cost("std SystemTime::now") / cost("fastnow unix_nanos"),
        r.wall.p99_ns,
        cost("fastnow recent"),
        r.coarse.age_p99_ms,
    )
}
