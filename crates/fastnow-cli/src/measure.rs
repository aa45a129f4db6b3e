//! Runs every measurement of the report through the shared harness
//! (`fastnow_bench`), the same code behind BENCHMARKS.md.

use crate::verdict::{
    self, Figures, Measured, MonotonicFigures, Over, SlowFigures, Steadiness, Strict, Tail, Tails,
    Timings, INSTANT, MONOTONIC, RECENT, STD_INSTANT, SYSTEM_TIME, UNIX_NANOS,
};
use crate::ReportArgs;
use fastnow_bench::{clocks, median, percentile, Clock, Kind};
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant as StdInstant};

/// Bump when a field changes meaning or disappears (spec/report.schema.json
/// defines them, for the Rust and the Go report alike).
/// 2: `latency[]` holds per-call latencies (was batches of 64) with percentiles.
/// 3: one schema for both languages (`language`); `latency[].buckets` are
/// `[from, to, calls]` on a logarithmic scale over every call; the cost
/// row of `MonotonicInstant` is the strategy it settles on (`monotonic`
/// has the one it starts with); fields only one language measures are
/// optional.
pub const SCHEMA_VERSION: u32 = 3;

fn rust() -> String {
    "rust".to_string()
}

#[derive(Serialize, Deserialize)]
pub struct Report {
    pub schema_version: u32,
    /// `"rust"` or `"go"`: which report wrote it.
    #[serde(default = "rust")]
    pub language: String,
    pub fastnow_version: String,
    pub mode: String,
    pub machine: Machine,
    pub fastnow: Chosen,
    pub costs: Vec<CostRow>,
    /// `MonotonicInstant` before any contention (absent where not measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monotonic: Option<MonotonicStart>,
    pub correctness: Vec<CorrectRow>,
    pub strict_test: StrictTest,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_method: Option<String>,
    /// Calls per timed batch (1: each call timed alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_batch: Option<u32>,
    #[serde(default)]
    pub latency: Vec<Latency>,
    /// The slowest reads, with and without the upkeep thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_reads: Option<SlowReadsReport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<Drift>,
    pub wall: Wall,
    pub coarse: Coarse,
    /// Present when `--faults` was given (ran, or skipped with a reason).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub faults: Option<Faults>,
    /// How steady the costs behind the verdict were.
    #[serde(default)]
    pub steadiness: Option<Steadiness>,
    /// `fastnow::ThreadCpuInstant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_cpu: Option<crate::thread_cpu::ThreadCpu>,
    /// `fastnow::BootInstant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot: Option<crate::boot::Boot>,
    /// `fastnow::ClockSnapshot` and the conversions to `CLOCK_MONOTONIC`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<crate::snapshot::Snapshot>,
    pub verdict: String,
}

impl Report {
    /// "Rust report" or "Go report".
    pub fn kind(&self) -> &'static str {
        if self.language == "go" {
            "Go report"
        } else {
            "Rust report"
        }
    }
}

#[derive(Serialize, Deserialize)]
pub struct Machine {
    pub arch: String,
    pub cpu_vendor: Option<String>,
    pub cpu_model: Option<String>,
    pub cores: usize,
    pub kernel: Option<String>,
    pub timer_flags: Vec<String>,
    pub hypervisor: Option<String>,
    pub clocksource_current: Option<String>,
    pub clocksource_available: Vec<String>,
}

#[derive(Serialize, Deserialize)]
pub struct Chosen {
    pub source: String,
    pub counter: Option<String>,
    pub ordered_read: String,
    pub freq_hz: u64,
    pub freq_origin: String,
    pub published_freq_hz: Option<u64>,
    pub calibration_baseline_ns: u64,
    pub calibration_wait_ns: u64,
    pub refinements: u32,
    pub fallback: Option<String>,
    pub demoted_at_unix_ns: Option<u64>,
    pub kernel_clocksource: Option<String>,
    /// Why fastnow's last attempt to read the kernel's clocksource failed,
    /// when the failure says nothing about the counter.
    #[serde(default)]
    pub verdict_unavailable: Option<String>,
    pub invariant: bool,
    pub upkeep: bool,
    pub env_override: String,
    pub monotonic_mode_at_start: String,
    pub monotonic_mode_after_report: String,
}

#[derive(Serialize, Deserialize)]
pub struct CostRow {
    pub clock: String,
    pub kind: String,
    /// What the clock is for, the same in both languages' reports
    /// (`instant`, `os_monotonic`, …; see [`role`]): `--compare` matches a
    /// Rust report's rows to a Go report's by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    pub ns_median: f64,
    pub ns_min: f64,
    pub ns_max: f64,
    /// Per thread while every core calls it (absent in a Go report).
    #[serde(default)]
    pub all_cores_ns_median: Option<f64>,
    #[serde(default)]
    pub vs_std_instant: Option<f64>,
    /// ns per call of each round, in the order run.
    #[serde(default)]
    pub rounds_ns: Vec<f64>,
}

/// `MonotonicInstant` on one thread before anything contended for it: the
/// strategy its first reading chose, and what it cost then.
#[derive(Serialize, Deserialize, Clone)]
pub struct MonotonicStart {
    /// The strategy chosen at the first reading (`HighWater`, `Ordered`).
    pub start_mode: String,
    /// ns per call then, median and least and greatest of the rounds.
    pub start_ns_median: f64,
    pub start_ns_min: f64,
    pub start_ns_max: f64,
    /// `std::time::Instant::now()` in the same rounds, ns per call.
    pub start_std_ns_median: f64,
    /// The strategy when the cost table measured it, after every core had
    /// called it (the one a multi-threaded program ends up with).
    pub settled_mode: String,
}

#[derive(Serialize, Deserialize)]
pub struct CorrectRow {
    pub clock: String,
    #[serde(default)]
    pub per_thread_decreases: Option<u64>,
    #[serde(default)]
    pub per_thread_reads: Option<u64>,
    pub strict_checks: u64,
    pub strict_violations: u64,
    /// The largest step back in the strict test, in `unit`.
    #[serde(default)]
    pub worst_step_back: Option<u64>,
    /// The unit of the clock's readings: `ns`, `ticks` (the counter's) or
    /// `2^-32 s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

/// How the strict cross-thread test was run, and whether it could have
/// failed: the bare counter read (no ordering) is the control.
#[derive(Serialize, Deserialize)]
pub struct StrictTest {
    /// The two CPUs the writer and the checker were pinned to (null: not
    /// pinned; a Go report does not say which).
    #[serde(default)]
    pub cpus: Option<[usize; 2]>,
    /// Whether the two threads ran pinned to two CPUs.
    pub pinned: bool,
    pub checks_per_clock: u64,
    /// The bare counter read used as the control (null: no counter here).
    pub control_clock: Option<String>,
    /// Checks the control needed to fail once (searching up to
    /// `control_search_limit` checks when the table's run showed none).
    #[serde(default)]
    pub control_checks_to_fail: Option<u64>,
    #[serde(default)]
    pub control_search_limit: Option<u64>,
    /// Whether the control failed within `checks_per_clock`: only then can a
    /// zero in the table be told from a run too short to show anything.
    pub conclusive: bool,
    pub note: String,
}

#[derive(Serialize, Deserialize)]
pub struct Latency {
    pub clock: String,
    pub samples: usize,
    pub p50_ns: f64,
    pub p99_ns: f64,
    pub p999_ns: f64,
    pub max_ns: f64,
    /// `[from_ns, to_ns, calls]`: the calls that took from `from_ns` up to
    /// (not including) `to_ns`, the last bucket including its end; buckets
    /// of equal ratio from the fastest call to the slowest, so every call
    /// is in one.
    pub buckets: Vec<(f64, f64, u64)>,
}

/// The slowest reads: every call timed, the clocks in turns, first with
/// readers doing fastnow's updates, then with the upkeep thread doing them.
#[derive(Serialize, Deserialize, Clone)]
pub struct SlowReadsReport {
    /// Seconds the whole measurement ran, both ways.
    pub seconds: f64,
    /// Seconds each clock was called for in each turn.
    pub slice_s: f64,
    /// The thresholds of `over`, ns (1, 5 and 20 µs).
    pub thresholds_ns: Vec<u64>,
    pub method: String,
    pub rows: Vec<SlowRow>,
}

#[derive(Serialize, Deserialize, Clone)]
pub struct SlowRow {
    pub clock: String,
    /// `"readers"` (no upkeep thread) or `"upkeep"`.
    pub updates_by: String,
    pub calls: u64,
    /// Seconds spent calling it.
    pub calling_s: f64,
    /// Calls at or above each threshold per second of calling it, fastnow's
    /// own reads not counted.
    pub over_per_s: Vec<f64>,
    /// The slowest call, fastnow's own reads not counted, ns.
    pub max_ns: u64,
    /// The calls during which fastnow did work of its own on the calling
    /// thread: how many, per second of the run in this mode, their median
    /// and the slowest (ns); the most CPU one of them used (the rest of a
    /// call's time it waited on the machine), and what that one did.
    pub own_reads: u64,
    pub own_per_s: f64,
    pub own_median_ns: Option<u64>,
    pub own_max_ns: Option<u64>,
    pub own_max_cpu_ns: Option<u64>,
    pub own_max_work: Option<String>,
}

#[derive(Serialize, Deserialize)]
pub struct Drift {
    pub window_s: f64,
    /// (seconds since start, fastnow elapsed − CLOCK_MONOTONIC elapsed, ns)
    pub samples: Vec<(f64, f64)>,
    /// (seconds since start at the interval's end, that interval's rate error in ppm)
    pub intervals: Vec<(f64, f64)>,
    pub bound_ppm: f64,
    /// Intervals ending after this many seconds of the process are held to the bound.
    pub bound_from_s: f64,
    pub final_error_ns: f64,
    pub final_error_ppm: f64,
}

#[derive(Serialize, Deserialize)]
pub struct Wall {
    pub median_ns: f64,
    pub p99_ns: f64,
    pub max_ns: f64,
    /// (seconds since the first sample, unix_nanos() − CLOCK_REALTIME, ns)
    #[serde(default)]
    pub samples: Vec<(f64, i64)>,
    pub bound_ns: f64,
}

#[derive(Serialize, Deserialize)]
pub struct Coarse {
    pub resolution_ms: f64,
    pub age_median_ms: f64,
    pub age_p99_ms: f64,
    pub age_max_ms: f64,
}

/// `--faults`: clock faults injected into the kernel, one row per event.
#[derive(Serialize, Deserialize)]
pub struct Faults {
    /// Why nothing was injected (null when the events ran).
    pub skipped: Option<String>,
    /// Whether the upkeep thread ran during the events (the report runs them
    /// with readers doing the updates, as a program that never starts it).
    pub upkeep: bool,
    pub events: Vec<FaultEvent>,
    /// `ClockInfo` after the events (the clocksource switch moves fastnow to
    /// the OS clock for the rest of the process).
    pub clock_info_after: Option<String>,
}

#[derive(Serialize, Deserialize)]
pub struct FaultEvent {
    pub event: String,
    /// `rate`, `step` or `clocksource`.
    pub kind: String,
    pub checks: Vec<FaultCheck>,
    pub ok: bool,
}

#[derive(Serialize, Deserialize)]
pub struct FaultCheck {
    pub what: String,
    pub unit: String,
    /// The measured value (null: the event never completed, e.g. a step not followed).
    pub value: Option<f64>,
    pub bound: f64,
    pub ok: bool,
}

struct Plan {
    rounds: usize,
    iters: u64,
    strict_checks: u64,
    control_limit: u64,
    per_thread_reads: u64,
    samples: usize,
    latency_samples: usize,
    window: Duration,
    /// The slowest reads: turns of each clock, both ways, and how long.
    slow_turn: Duration,
    slow_total: Duration,
}

impl Plan {
    /// The plan `args` ask for: quick or thorough, and the drift window.
    fn for_args(args: &ReportArgs) -> Plan {
        let plan = if args.quick {
            Plan {
                rounds: 3,
                iters: 100_000,
                strict_checks: 1_000_000,
                control_limit: 20_000_000,
                per_thread_reads: 100_000,
                samples: 200,
                latency_samples: 20_000,
                window: Duration::from_secs(2),
                slow_turn: Duration::from_millis(100),
                slow_total: Duration::from_secs(3),
            }
        } else {
            Plan {
                rounds: 7,
                iters: 1_000_000,
                strict_checks: 5_000_000,
                control_limit: 100_000_000,
                per_thread_reads: 2_000_000,
                samples: 1000,
                latency_samples: 200_000,
                window: Duration::from_secs(10),
                slow_turn: Duration::from_millis(250),
                slow_total: Duration::from_secs(30),
            }
        };
        Plan {
            window: args.window.unwrap_or(plan.window),
            ..plan
        }
    }
}

/// Every clock's cost with every core calling it at once (median ns per
/// call), in `all`'s order; `MonotonicInstant` first called from every core
/// until it settles on its strategy.
fn all_cores(all: &[Clock], cores: usize, plan: &Plan, bar: &ProgressBar) -> Vec<f64> {
    // Every core calls it, as in a long-running program, until its mark is
    // seen contended and it leaves it for ordered reads, for ten runs at
    // most (on one CPU, or while other work keeps a core busy, the threads
    // take turns and it never is).
    if let Some(mono) = all.iter().find(|c| c.name == MONOTONIC_CLOCK) {
        bar.set_message("all cores: MonotonicInstant until it settles");
        for _ in 0..10 {
            if cores < 2
                || fastnow::clock_info().monotonic_mode != fastnow::MonotonicMode::HighWater
            {
                break;
            }
            let _ = fastnow_bench::contended(mono.cost, cores, plan.iters);
        }
    }

    // All cores at once. A first, discarded run lets each clock settle as it
    // would in a long-running program.
    let mut contended = Vec::new();
    for c in all {
        bar.set_message(format!("all cores: {}", c.name));
        let _ = fastnow_bench::contended(c.cost, cores, plan.iters);
        let rounds: Vec<f64> = (0..plan.rounds.min(3))
            .map(|_| median(&fastnow_bench::contended(c.cost, cores, plan.iters)))
            .collect();
        contended.push(median(&rounds));
        // The first recent() starts the upkeep thread: stopped again, so
        // that no clock after it shares the cores with it.
        fastnow::stop_upkeep();
        bar.inc(1);
    }
    contended
}

impl Chosen {
    /// What `clock_info()` said, in the report's words; `monotonic_mode_at_start`
    /// as read before anything contended.
    fn of(info: &fastnow::ClockInfo, monotonic_mode_at_start: String) -> Chosen {
        Chosen {
            source: format!("{:?}", info.source),
            counter: info.counter.map(str::to_string),
            ordered_read: info.ordered_read.to_string(),
            freq_hz: info.freq_hz,
            freq_origin: format!("{:?}", info.freq_origin),
            published_freq_hz: info.published_freq_hz,
            calibration_baseline_ns: info.calibration_baseline.as_nanos() as u64,
            calibration_wait_ns: info.calibration_time.as_nanos() as u64,
            refinements: info.refinements,
            fallback: info.fallback.map(|f| f.to_string()),
            demoted_at_unix_ns: info.demoted_at.map(|t| t.as_nanos()),
            kernel_clocksource: info.kernel_clocksource.map(|c| c.as_str().to_string()),
            verdict_unavailable: info.verdict_unavailable.map(|w| w.to_string()),
            invariant: info.invariant,
            upkeep: info.upkeep,
            env_override: format!("{:?}", info.env_override),
            monotonic_mode_at_start,
            monotonic_mode_after_report: format!("{:?}", info.monotonic_mode),
        }
    }
}

/// `recent()`'s age under a 1 ms upkeep, over `samples` samples.
fn coarse_age(samples: usize) -> Coarse {
    fastnow::stop_upkeep();
    let resolution = Duration::from_millis(1);
    let stale = match fastnow::start_upkeep(resolution) {
        Ok(()) => fastnow_bench::staleness(samples, Duration::from_micros(137)),
        Err(_) => vec![f64::NAN],
    };
    fastnow::stop_upkeep();
    Coarse {
        resolution_ms: resolution.as_secs_f64() * 1e3,
        age_median_ms: percentile(&stale, 50.0) / 1e6,
        age_p99_ms: percentile(&stale, 99.0) / 1e6,
        age_max_ms: percentile(&stale, 100.0) / 1e6,
    }
}

pub fn run(args: &ReportArgs) -> Report {
    let plan = Plan::for_args(args);
    let all = report_clocks();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let shared: Vec<Clock> = all.iter().copied().filter(|c| c.shared_timeline).collect();
    let latency_clocks: Vec<Clock> = LATENCY_CLOCKS
        .iter()
        .filter_map(|name| all.iter().find(|c| c.name == *name).copied())
        .chain(control_clock(&shared))
        .collect();
    let slow_clocks: Vec<Clock> = SLOW_READ_CLOCKS
        .iter()
        .filter_map(|name| all.iter().find(|c| c.name == *name).copied())
        .collect();
    let slow_turns = slow_turns(&plan, slow_clocks.len() + 1);
    let faults_steps = if args.faults { 8 } else { 0 };
    let steps = (plan.rounds * all.len()
        + all.len()
        + 2 * shared.len()
        + 1
        + 2 * slow_turns
        + 4
        + faults_steps) as u64;
    let bar = ProgressBar::new(steps).with_style(
        ProgressStyle::with_template("{spinner} {msg:40} [{bar:30}] {pos}/{len} {elapsed}")
            .expect("static template")
            .progress_chars("=> "),
    );

    // Drift first: it sleeps through its window, and the first reading of
    // the process is the anchor, as for any program.
    bar.set_message("drift against CLOCK_MONOTONIC");
    let drift = drift(plan.window);
    bar.inc(1);

    // MonotonicInstant's first reading picks a strategy, which it leaves for
    // good for ordered reads once several threads contend for its mark: the
    // cost it starts with, on one thread, measured before anything contends.
    bar.set_message("MonotonicInstant before contention");
    let monotonic_at_start = format!("{:?}", fastnow::clock_info().monotonic_mode);
    let monotonic_start = monotonic_start(&all, &plan);

    let contended = all_cores(&all, cores, &plan, &bar);
    let settled_mode = format!("{:?}", fastnow::clock_info().monotonic_mode);
    let monotonic = monotonic_start.map(|(start_mode, m, std_ns)| MonotonicStart {
        start_mode,
        start_ns_median: m.median_ns,
        start_ns_min: m.min_ns,
        start_ns_max: m.max_ns,
        start_std_ns_median: std_ns,
        settled_mode: settled_mode.clone(),
    });

    // Costs on one thread: interleaved rounds, every clock once per round,
    // each clock as a long-running multi-threaded program has it.
    let single = cost_rounds(&all, &plan, &bar);

    let (correctness, strict_test) = correctness(&plan, &shared, cores, &bar);

    let latencies = measure_latencies(&latency_clocks, &plan, &bar);

    // The verdict concludes only from steady figures: while the one-thread
    // costs and the latencies are unsteady (other work slowed most rounds,
    // or the two disagree on which clock is cheaper), measure both again,
    // after a pause that lets a short burst of other work pass.
    let ((single, latencies), steadiness) = verdict::until_steady(
        (single, latencies),
        || {
            bar.inc_length((plan.rounds * all.len() + 1) as u64);
            bar.set_message("busy: pausing before measuring again");
            std::thread::sleep(Duration::from_millis(500));
            (
                cost_rounds(&all, &plan, &bar),
                measure_latencies(&latency_clocks, &plan, &bar),
            )
        },
        |(single, latencies)| unsteady_now(&all, single, &contended, &latencies.0),
    );
    let (latency, latency_method, latency_batch) = latencies;
    let costs = cost_rows(&all, &single, &contended);

    let slow_reads = slow_reads(&slow_clocks, &plan, &bar);

    bar.set_message("wall tier against CLOCK_REALTIME");
    let wall = wall(plan.samples);
    bar.inc(1);
    bar.set_message("coarse tier staleness");
    let coarse = coarse_age(plan.samples);
    bar.inc(1);

    bar.set_message("thread CPU time, time across suspend, the clock snapshot");
    let thread_cpu = crate::thread_cpu::measure(args.quick);
    let boot = crate::boot::measure(args.quick);
    let snapshot = crate::snapshot::measure();
    bar.inc(1);
    // What fastnow decided, read before any fault: the clocksource switch
    // moves it to the OS clock for good.
    let info = fastnow::clock_info();
    let faults = args.faults.then(|| {
        bar.set_message("clock faults (about a minute)");
        let f = run_faults(args.quick, &bar);
        bar.inc(1);
        f
    });
    bar.finish_and_clear();

    let mut report = Report {
        schema_version: SCHEMA_VERSION,
        language: rust(),
        fastnow_version: env!("CARGO_PKG_VERSION").to_string(),
        mode: if args.quick { "quick" } else { "thorough" }.to_string(),
        machine: machine(cores),
        fastnow: Chosen::of(&info, monotonic_at_start),
        costs,
        monotonic,
        correctness,
        strict_test,
        latency_method: Some(latency_method),
        latency_batch: Some(latency_batch),
        latency,
        slow_reads: Some(slow_reads),
        drift: Some(drift),
        wall,
        coarse,
        faults,
        steadiness: Some(steadiness),
        thread_cpu: Some(thread_cpu),
        boot: Some(boot),
        snapshot: Some(snapshot),
        verdict: String::new(),
    };
    report.verdict = match verdict::Figures::of(&report) {
        Ok(f) => verdict::verdict(&f),
        Err(why) => format!("No verdict: {why}."),
    };
    report
}

/// The harness's clocks, and those the report adds: `BootInstant` and
/// `ThreadCpuInstant` beside the kernel's clocks they stand for.
fn report_clocks() -> Vec<Clock> {
    let mut all = clocks();
    let at = all
        .iter()
        .position(|c| c.kind != Kind::Fastnow)
        .unwrap_or(all.len());
    all.insert(at, BOOT_INSTANT);
    all.insert(at + 1, THREAD_CPU_INSTANT);
    all.extend(os_extra_clocks());
    all
}

/// `fastnow::BootInstant::now()`.
const BOOT_INSTANT: Clock = Clock {
    name: "fastnow BootInstant::now",
    kind: Kind::Fastnow,
    read: || fastnow::BootInstant::now().as_nanos(),
    cost: |iters| {
        let start = StdInstant::now();
        for _ in 0..iters {
            std::hint::black_box(fastnow::BootInstant::now());
        }
        start.elapsed().as_nanos() as f64 / iters as f64
    },
    shared_timeline: true,
    call: || {
        std::hint::black_box(fastnow::BootInstant::now());
    },
    unit: fastnow_bench::NANOS,
};

/// A thread CPU clock costs tens of times a counter read: it is timed over
/// this many times fewer calls, so that its rounds take as long.
const THREAD_CPU_SCALE: u64 = 64;

/// `fastnow::ThreadCpuInstant::now()`: each thread's own timeline.
const THREAD_CPU_INSTANT: Clock = Clock {
    name: "fastnow ThreadCpuInstant::now",
    kind: Kind::Fastnow,
    read: || fastnow::ThreadCpuInstant::now().as_nanos(),
    cost: |iters| {
        let n = (iters / THREAD_CPU_SCALE).max(1);
        let start = StdInstant::now();
        for _ in 0..n {
            std::hint::black_box(fastnow::ThreadCpuInstant::now());
        }
        start.elapsed().as_nanos() as f64 / n as f64
    },
    shared_timeline: false,
    call: || {
        std::hint::black_box(fastnow::ThreadCpuInstant::now());
    },
    unit: fastnow_bench::NANOS,
};

/// The kernel's boot and thread CPU clocks, where there are.
fn os_extra_clocks() -> Vec<Clock> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        vec![
            Clock {
                name: "clock_gettime BOOTTIME",
                kind: Kind::Os,
                read: || fastnow_bench::clock_gettime_ns(libc::CLOCK_BOOTTIME),
                cost: |iters| {
                    fastnow_bench::ns_per_call(
                        || fastnow_bench::clock_gettime_ns(libc::CLOCK_BOOTTIME),
                        iters,
                    )
                },
                shared_timeline: true,
                call: || {
                    std::hint::black_box(fastnow_bench::clock_gettime_ns(libc::CLOCK_BOOTTIME));
                },
                unit: fastnow_bench::NANOS,
            },
            Clock {
                name: "clock_gettime THREAD_CPUTIME_ID",
                kind: Kind::Os,
                read: || fastnow_bench::clock_gettime_ns(libc::CLOCK_THREAD_CPUTIME_ID),
                cost: |iters| {
                    fastnow_bench::ns_per_call(
                        || fastnow_bench::clock_gettime_ns(libc::CLOCK_THREAD_CPUTIME_ID),
                        (iters / THREAD_CPU_SCALE).max(1),
                    )
                },
                shared_timeline: false,
                call: || {
                    std::hint::black_box(fastnow_bench::clock_gettime_ns(
                        libc::CLOCK_THREAD_CPUTIME_ID,
                    ));
                },
                unit: fastnow_bench::NANOS,
            },
        ]
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        Vec::new()
    }
}

/// What a clock is for, named alike in the Rust and the Go report (the Go
/// report writes its rows' own), so that `--compare` can set a Rust
/// report's row beside a Go report's.
pub fn role(clock: &str) -> Option<&'static str> {
    Some(match clock {
        "fastnow Instant::now" => "instant",
        "fastnow MonotonicInstant::now" => "monotonic",
        "fastnow OrderedInstant::now" => "ordered",
        "fastnow BootInstant::now" => "boot",
        "fastnow ThreadCpuInstant::now" => "thread_cpu",
        "fastnow unix_nanos" => "wall",
        "fastnow Hlc::now" => "hlc",
        "fastnow recent" => "recent",
        "fastnow recent_unix_nanos" => "recent_wall",
        "AtomicU64 load (Relaxed)" => "atomic_load",
        "RDTSC" | "MRS CNTVCT_EL0" => "counter",
        "std Instant::now" => "os_monotonic",
        "std SystemTime::now" => "os_wall",
        _ => return None,
    })
}

/// `MonotonicInstant`'s first reading (which picks its strategy) and its
/// cost on one thread before anything contends, in rounds interleaved with
/// std's `Instant::now()`: (the strategy, its figures, std's median).
fn monotonic_start(all: &[Clock], plan: &Plan) -> Option<(String, Measured, f64)> {
    let find = |name: &str| all.iter().find(|c| c.name == name);
    let (mono, std) = (find(MONOTONIC_CLOCK)?, find(STD_INSTANT_CLOCK)?);
    let _ = (mono.read)();
    let mode = format!("{:?}", fastnow::clock_info().monotonic_mode);
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..plan.rounds {
        ours.push((mono.cost)(plan.iters));
        theirs.push((std.cost)(plan.iters));
    }
    let m = Measured {
        median_ns: median(&ours),
        min_ns: ours.iter().copied().fold(f64::MAX, f64::min),
        max_ns: ours.iter().copied().fold(0.0, f64::max),
        all_cores_ns: f64::NAN,
        p50_ns: None,
    };
    Some((mode, m, median(&theirs)))
}

const MONOTONIC_CLOCK: &str = "fastnow MonotonicInstant::now";
const STD_INSTANT_CLOCK: &str = "std Instant::now";

/// One ns-per-call figure per round for each clock, the clocks interleaved
/// within each round so that a slow spell of the machine spreads over all.
fn cost_rounds(all: &[Clock], plan: &Plan, bar: &ProgressBar) -> Vec<Vec<f64>> {
    let mut single: Vec<Vec<f64>> = vec![Vec::new(); all.len()];
    for _ in 0..plan.rounds {
        for (i, c) in all.iter().enumerate() {
            bar.set_message(format!("cost: {}", c.name));
            single[i].push((c.cost)(plan.iters));
            // As for the all-cores runs: no upkeep thread beside the others.
            fastnow::stop_upkeep();
            bar.inc(1);
        }
    }
    single
}

fn cost_rows(all: &[Clock], single: &[Vec<f64>], contended: &[f64]) -> Vec<CostRow> {
    let std_ns = median(
        &single[all
            .iter()
            .position(|c| c.name == STD_INSTANT_CLOCK)
            .expect("std is measured")],
    );
    all.iter()
        .enumerate()
        .map(|(i, c)| {
            let s = &single[i];
            CostRow {
                clock: c.name.to_string(),
                kind: kind_name(c.kind).to_string(),
                role: role(c.name).map(str::to_string),
                ns_median: median(s),
                ns_min: s.iter().cloned().fold(f64::MAX, f64::min),
                ns_max: s.iter().cloned().fold(0.0, f64::max),
                all_cores_ns_median: Some(contended[i]),
                vs_std_instant: Some(median(s) / std_ns),
                rounds_ns: s.clone(),
            }
        })
        .collect()
}

/// (per-call latencies of each clock, how they were measured, calls per
/// batch), the clocks' samples taken in turns.
fn measure_latencies(
    latency_clocks: &[Clock],
    plan: &Plan,
    bar: &ProgressBar,
) -> (Vec<Latency>, String, u32) {
    bar.set_message("latency of single calls");
    let calls: Vec<fn()> = latency_clocks.iter().map(|c| c.call).collect();
    let measured = fastnow_bench::latencies_interleaved(&calls, plan.latency_samples);
    bar.inc(1);
    let method = measured[0].method.clone();
    let batch = measured[0].batch;
    let latency = latency_clocks
        .iter()
        .zip(&measured)
        .map(|(c, l)| latency_of(c.name, &l.per_call, l.resolution_ns))
        .collect();
    (
        latency,
        format!(
            "{method}; the clocks' samples taken in turns of {} each",
            fastnow_bench::LATENCY_TURN
        ),
        batch,
    )
}

/// What is unsteady in these figures, by the verdict's rules.
fn unsteady_now(
    all: &[Clock],
    single: &[Vec<f64>],
    contended: &[f64],
    latency: &[Latency],
) -> Vec<String> {
    match verdict::Timings::of(&cost_rows(all, single, contended), latency) {
        Ok(t) => t.unsteady(),
        Err(why) => vec![why],
    }
}

/// The clocks whose per-call latencies are measured (and the bare counter
/// read, the control of their tails).
const LATENCY_CLOCKS: [&str; 8] = [
    "fastnow Instant::now",
    "fastnow MonotonicInstant::now",
    "fastnow unix_nanos",
    "fastnow BootInstant::now",
    "std Instant::now",
    "std SystemTime::now",
    "clock_gettime MONOTONIC",
    "clock_gettime BOOTTIME",
];

/// The clocks whose slowest reads are counted, beside a call of nothing.
const SLOW_READ_CLOCKS: [&str; 5] = [
    "fastnow Instant::now",
    "fastnow MonotonicInstant::now",
    "fastnow unix_nanos",
    "std Instant::now",
    "std SystemTime::now",
];

/// The row of the slowest reads that calls nothing: what timing alone,
/// interrupts and the hypervisor add to any code.
pub const NOTHING: &str = "nothing (the timing alone)";

/// Turns of the slowest-reads measurement: each way, every clock (`clocks`
/// of them) for `slow_turn`, until `slow_total` is spent.
fn slow_turns(plan: &Plan, clocks: usize) -> usize {
    let round = plan.slow_turn.as_secs_f64() * clocks as f64 * 2.0;
    ((plan.slow_total.as_secs_f64() / round).round() as usize).max(1)
}

/// The slowest reads (LATENCY): every call of each clock timed, the clocks
/// in turns of `plan.slow_turn`, each round first with readers doing
/// fastnow's state updates (no upkeep thread), then with the upkeep thread
/// doing them; for fastnow's clocks, the calls during which fastnow did its
/// own work on the calling thread told apart (`fastnow_bench::OwnWork`).
fn slow_reads(clocks: &[Clock], plan: &Plan, bar: &ProgressBar) -> SlowReadsReport {
    let calls: Vec<(&str, fn(), bool)> = std::iter::once((NOTHING, (|| {}) as fn(), false))
        .chain(
            clocks
                .iter()
                .map(|c| (c.name, c.call, c.kind == Kind::Fastnow)),
        )
        .collect();
    let turns = slow_turns(plan, calls.len());
    let mut acc = vec![
        [
            fastnow_bench::SlowReads::default(),
            fastnow_bench::SlowReads::default()
        ];
        calls.len()
    ];
    let mut run_s = [0.0f64; 2];
    let start = StdInstant::now();
    for _ in 0..turns {
        for (way, upkeep) in [false, true].into_iter().enumerate() {
            bar.set_message(if upkeep {
                "slowest reads (upkeep thread updates)"
            } else {
                "slowest reads (readers update)"
            });
            fastnow::stop_upkeep();
            if upkeep && fastnow::start_upkeep(Duration::from_millis(1)).is_err() {
                continue;
            }
            let began = StdInstant::now();
            let mut own = fastnow_bench::OwnWork::new();
            for (i, &(_, call, fastnow)) in calls.iter().enumerate() {
                // While the upkeep thread runs, the rate measurements are
                // its own (and the count is the process's): only this
                // thread's file reads are looked for.
                let look = fastnow.then_some((&mut own, !upkeep));
                fastnow_bench::slow_reads(call, plan.slow_turn, look, &mut acc[i][way]);
            }
            run_s[way] += began.elapsed().as_secs_f64();
            bar.inc(1);
        }
    }
    fastnow::stop_upkeep();
    let mut rows = Vec::new();
    for (i, (name, _, _)) in calls.iter().enumerate() {
        for (way, by) in ["readers", "upkeep"].into_iter().enumerate() {
            let r = &acc[i][way];
            let calling_s = r.calling_ns as f64 / 1e9;
            let mut own = r.own.clone();
            own.sort_by_key(|o| o.ns);
            let costliest = own.iter().max_by_key(|o| o.cpu_ns).copied();
            rows.push(SlowRow {
                clock: name.to_string(),
                updates_by: by.to_string(),
                calls: r.calls,
                calling_s,
                over_per_s: r
                    .over
                    .iter()
                    .map(|&n| {
                        if calling_s > 0.0 {
                            n as f64 / calling_s
                        } else {
                            0.0
                        }
                    })
                    .collect(),
                max_ns: r.max_ns,
                own_reads: own.len() as u64,
                own_per_s: if run_s[way] > 0.0 {
                    own.len() as f64 / run_s[way]
                } else {
                    0.0
                },
                own_median_ns: (!own.is_empty()).then(|| own[own.len() / 2].ns),
                own_max_ns: own.last().map(|o| o.ns),
                own_max_cpu_ns: costliest.map(|o| o.cpu_ns),
                own_max_work: costliest.map(|o| o.work.to_string()),
            });
        }
    }
    SlowReadsReport {
        seconds: start.elapsed().as_secs_f64(),
        slice_s: plan.slow_turn.as_secs_f64(),
        thresholds_ns: fastnow_bench::SLOW_READ_THRESHOLDS_NS.to_vec(),
        method: format!(
            "every call timed from the CLOCK_MONOTONIC reading before it to the one before the next (that reading \
             included); the clocks called in turns of {} ms, each round first with readers doing fastnow's updates \
             (no upkeep thread), then with the upkeep thread (1 ms) doing them; a fastnow call is its own (apart) \
             when fastnow measured the rate or read the kernel's clocksource on this thread during its batch of {} \
             calls, as clock_info().refinements and the thread's read system calls tell, the batch's slowest call \
             taken to be it, and the thread's CPU time around the batch telling how much of it was work",
            plan.slow_turn.as_millis(),
            fastnow_bench::SLOW_READ_BATCH
        ),
        rows,
    }
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Fastnow => "fastnow",
        Kind::Baseline => "baseline",
        Kind::Os => "os",
        Kind::Peer => "peer",
    }
}

/// The bare counter read: no ordering, so on a machine with two CPUs the
/// strict test catches it going back across threads.
fn control_clock(shared: &[Clock]) -> Option<Clock> {
    shared
        .iter()
        .find(|c| c.kind == Kind::Baseline && matches!(c.name, "RDTSC" | "MRS CNTVCT_EL0"))
        .copied()
}

fn correctness(
    plan: &Plan,
    shared: &[Clock],
    cores: usize,
    bar: &ProgressBar,
) -> (Vec<CorrectRow>, StrictTest) {
    let allowed = fastnow_bench::allowed_cpus();
    let cpus = (allowed.len() >= 2).then(|| [allowed[0], allowed[1]]);
    let strict = |read: fn() -> u64, checks: u64| match cpus {
        Some(pair) => fastnow_bench::strict_cross_thread_pinned(read, checks, pair),
        None => fastnow_bench::PinnedStrictResult {
            result: fastnow_bench::strict_cross_thread(read, checks),
            first_violation: None,
            pinned: false,
        },
    };
    let mut rows = Vec::new();
    let mut control_first = None;
    let control = control_clock(shared);
    // The control first, then every clock with the same number of checks.
    let order: Vec<Clock> = control
        .iter()
        .copied()
        .chain(
            shared
                .iter()
                .copied()
                .filter(|c| Some(c.name) != control.map(|k| k.name)),
        )
        .collect();
    for c in &order {
        bar.set_message(format!("monotonicity: {}", c.name));
        let back = fastnow_bench::per_thread_backwards(c.read, cores.min(4), plan.per_thread_reads);
        bar.inc(1);
        bar.set_message(format!("strict test: {}", c.name));
        let r = strict(c.read, plan.strict_checks);
        if Some(c.name) == control.map(|k| k.name) {
            control_first = r.first_violation.map(|i| i + 1);
            if r.result.violations > 0 && control_first.is_none() {
                control_first = Some(plan.strict_checks);
            }
        }
        bar.inc(1);
        rows.push(CorrectRow {
            clock: c.name.to_string(),
            per_thread_decreases: Some(back),
            per_thread_reads: Some(plan.per_thread_reads * cores.min(4) as u64),
            strict_checks: r.result.checks,
            strict_violations: r.result.violations,
            worst_step_back: Some(r.result.worst_step_back),
            unit: Some(c.unit.to_string()),
        });
    }
    // Keep the clocks' own order in the table.
    rows.sort_by_key(|r| shared.iter().position(|c| c.name == r.clock));
    let conclusive = control_first.is_some();
    // When the control showed nothing, look for how many checks it takes.
    let mut searched = plan.strict_checks;
    if let (Some(c), None) = (control, control_first) {
        bar.set_message(format!("strict test: how long {} takes to fail", c.name));
        while searched < plan.control_limit {
            let r = strict(c.read, plan.strict_checks);
            if let Some(i) = r.first_violation {
                control_first = Some(searched + i + 1);
                break;
            }
            searched += plan.strict_checks;
        }
    }
    let n = plan.strict_checks;
    let pinned = match cpus {
        Some(p) => format!(
            "with the writer and the checker pinned to CPUs {} and {}",
            p[0], p[1]
        ),
        None => "with both threads on the one CPU this process may use".to_string(),
    };
    let note = match (control, control_first) {
        (None, _) => format!(
            "no bare counter read on this target to check the test against: a zero below shows only that {n} checks saw nothing"
        ),
        (Some(c), Some(k)) if conclusive => format!(
            "the test can fail here: {} (no ordering) failed within {k} of {n} checks, {pinned}",
            c.name
        ),
        (Some(c), _) if cpus.is_none() => format!(
            "TOO SHORT TO TELL: this process may run on one CPU only, so the two threads took turns and {} (no ordering) \
             showed no violation in {searched} checks; a zero below does not show a clock is strict",
            c.name
        ),
        (Some(c), Some(k)) => format!(
            "TOO SHORT TO TELL: {} (no ordering) showed no violation in the table's {n} checks and needed {k} to fail once, so a \
             zero below does not show a clock is strict; run without --quick",
            c.name
        ),
        (Some(c), None) => format!(
            "TOO SHORT TO TELL: {} (no ordering) showed no violation in {searched} checks, {pinned}, so the test could not fail \
             here (a machine whose cores read the counter in order, or other work kept the threads apart); a zero below does \
             not show a clock is strict",
            c.name
        ),
    };
    (
        rows,
        StrictTest {
            cpus,
            pinned: cpus.is_some(),
            checks_per_clock: n,
            control_clock: control.map(|c| c.name.to_string()),
            control_checks_to_fail: control_first,
            control_search_limit: Some(plan.control_limit),
            conclusive,
            note,
        },
    )
}

/// Buckets of a latency histogram at most.
pub const LATENCY_BUCKETS: usize = 40;

/// Percentiles and a histogram of per-call latencies.
fn latency_of(clock: &str, per_call: &[f64], resolution_ns: f64) -> Latency {
    let mut v = per_call.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    Latency {
        clock: clock.to_string(),
        samples: v.len(),
        p50_ns: percentile(&v, 50.0),
        p99_ns: percentile(&v, 99.0),
        p999_ns: percentile(&v, 99.9),
        max_ns: v[v.len() - 1],
        buckets: log_buckets(&v, resolution_ns),
    }
}

/// A histogram of `sorted` (ascending, ns) from the fastest to the slowest,
/// in buckets of equal ratio (so a tail of microseconds shows beside a bulk
/// of nanoseconds), at most [`LATENCY_BUCKETS`] and none narrower than the
/// measurement resolves: `[from, to, count]`, every value in one bucket
/// (values at or below the first bucket's start in the first, the slowest
/// in the last, whose end it is).
pub fn log_buckets(sorted: &[f64], resolution_ns: f64) -> Vec<(f64, f64, u64)> {
    let Some(&last) = sorted.last() else {
        return Vec::new();
    };
    let floor = resolution_ns.max(0.01);
    let lo = sorted[0].max(floor);
    let hi = last.max(lo + floor);
    let ratio = (hi / lo)
        .powf(1.0 / LATENCY_BUCKETS as f64)
        .max(1.0 + floor / lo)
        .max(1.01);
    let n = (((hi / lo).ln() / ratio.ln()).ceil() as usize).clamp(1, LATENCY_BUCKETS);
    let edge = |i: usize| {
        if i == n {
            hi
        } else {
            lo * ratio.powi(i as i32)
        }
    };
    let mut buckets: Vec<(f64, f64, u64)> = (0..n).map(|i| (edge(i), edge(i + 1), 0)).collect();
    for &x in sorted {
        let i = if x <= lo {
            0
        } else {
            ((x / lo).ln() / ratio.ln()).floor() as usize
        };
        // The last edge is `hi` itself, so rounding never drops a value.
        let mut i = i.min(n - 1);
        while i > 0 && x < buckets[i].0 {
            i -= 1;
        }
        while i + 1 < n && x >= buckets[i].1 {
            i += 1;
        }
        buckets[i].2 += 1;
    }
    buckets
}

/// Intervals of the drift measurement are held to this (SEMANTICS: 1 s
/// intervals agree with CLOCK_MONOTONIC to a few hundredths of a ppm in
/// steady state; `make test-faults` asserts 1 ppm from 3 s after a change).
const DRIFT_BOUND_PPM: f64 = 1.0;
/// The rate is measured over windows of a second from the first second on.
const DRIFT_BOUND_FROM_S: f64 = 1.0;
/// The wall tier's steady-state bound (SEMANTICS, "Wall tier").
const WALL_BOUND_NS: f64 = 1_000.0;

fn drift(window: Duration) -> Drift {
    let start_std = StdInstant::now();
    let (start, m0) = bracket();
    let steps = 20;
    // (seconds, error ns, fastnow ns, monotonic ns): in integers until the end.
    let mut points: Vec<(f64, i64, u64, u64)> = Vec::with_capacity(steps);
    for i in 1..=steps {
        let target = window.mul_f64(i as f64 / steps as f64);
        if let Some(rest) = target.checked_sub(start_std.elapsed()) {
            std::thread::sleep(rest);
        }
        let (t, m) = bracket();
        let ours = t.duration_since(start).as_nanos() as u64;
        let reference = m - m0;
        points.push((
            reference as f64 / 1e9,
            ours as i64 - reference as i64,
            ours,
            reference,
        ));
    }
    let intervals = points
        .windows(2)
        .map(|w| {
            let (ours, reference) = (w[1].2 - w[0].2, w[1].3 - w[0].3);
            let err = ours as i64 - reference as i64;
            (w[1].0, err as f64 / reference as f64 * 1e6)
        })
        .collect();
    let &(secs, err, _, _) = points.last().expect("20 samples");
    Drift {
        window_s: window.as_secs_f64(),
        final_error_ns: err as f64,
        final_error_ppm: err as f64 / (secs * 1e9) * 1e6,
        samples: points.iter().map(|p| (p.0, p.1 as f64)).collect(),
        intervals,
        bound_ppm: DRIFT_BOUND_PPM,
        bound_from_s: DRIFT_BOUND_FROM_S,
    }
}

/// A fastnow reading matched to the midpoint of the tightest of 5
/// CLOCK_MONOTONIC brackets (in integer nanoseconds).
fn bracket() -> (fastnow::Instant, u64) {
    let mut best = (fastnow::Instant::now(), 0, u64::MAX);
    for _ in 0..5 {
        let a = fastnow_bench::clock_gettime_ns(libc::CLOCK_MONOTONIC);
        let t = fastnow::Instant::now();
        let b = fastnow_bench::clock_gettime_ns(libc::CLOCK_MONOTONIC);
        if b - a < best.2 {
            best = (t, a + (b - a) / 2, b - a);
        }
    }
    (best.0, best.1)
}

fn wall(samples: usize) -> Wall {
    let series = fastnow_bench::wall_error_series(samples, Duration::from_micros(500));
    let abs: Vec<f64> = series
        .iter()
        .map(|&(_, e)| e.unsigned_abs() as f64)
        .collect();
    Wall {
        median_ns: percentile(&abs, 50.0),
        p99_ns: percentile(&abs, 99.0),
        max_ns: percentile(&abs, 100.0),
        samples: series.iter().map(|&(t, e)| (t as f64 / 1e9, e)).collect(),
        bound_ns: WALL_BOUND_NS,
    }
}

#[cfg(not(target_os = "linux"))]
fn run_faults(_quick: bool, _bar: &ProgressBar) -> Faults {
    Faults {
        skipped: Some("fault injection needs Linux (adjtimex, clock_settime, sysfs)".into()),
        upkeep: false,
        events: Vec::new(),
        clock_info_after: None,
    }
}

/// Why `--faults` would be skipped here, if it would.
pub fn faults_unavailable() -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        fastnow_bench::faults::available().err()
    }
    #[cfg(not(target_os = "linux"))]
    {
        Some("fault injection needs Linux (adjtimex, clock_settime, sysfs)".into())
    }
}

#[cfg(target_os = "linux")]
fn run_faults(quick: bool, bar: &ProgressBar) -> Faults {
    use fastnow_bench::faults;
    let skipped = |why: String| Faults {
        skipped: Some(why),
        upkeep: fastnow::upkeep_resolution().is_some(),
        events: Vec::new(),
        clock_info_after: None,
    };
    if let Err(why) = faults::available() {
        return skipped(why);
    }
    if fastnow::clock_info().source != fastnow::Source::Counter {
        return skipped("fastnow reads the OS clock here, so there is no counter to fault".into());
    }
    let events = faults::run(false, quick, |name| {
        bar.inc(1);
        bar.set_message(format!("fault: {name}"));
    })
    .into_iter()
    .map(|e| FaultEvent {
        ok: e.ok(),
        event: e.name,
        kind: e.kind.into(),
        checks: e
            .checks
            .into_iter()
            .map(|c| FaultCheck {
                ok: c.ok(),
                what: c.what,
                unit: c.unit.into(),
                value: c.value,
                bound: c.bound,
            })
            .collect(),
    })
    .collect();
    bar.inc(1);
    Faults {
        skipped: None,
        upkeep: fastnow::upkeep_resolution().is_some(),
        events,
        clock_info_after: Some(fastnow::clock_info().to_string()),
    }
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
        arch: std::env::consts::ARCH.to_string(),
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

// The verdict's figures, taken from a report (here, so that the verdict
// needs nothing of the report's layout).
impl Timings {
    /// The figures of the compared clocks, or the name of one the tables
    /// lack (a report edited by hand, or from a build without it).
    pub fn of(costs: &[CostRow], latency: &[Latency]) -> Result<Timings, String> {
        let get = |name: &str| {
            let c = costs
                .iter()
                .find(|c| c.clock == name)
                .ok_or_else(|| format!("the report has no cost for {name}"))?;
            Ok::<_, String>(Measured {
                median_ns: c.ns_median,
                min_ns: c.ns_min,
                max_ns: c.ns_max,
                all_cores_ns: c.all_cores_ns_median.unwrap_or(f64::NAN),
                p50_ns: latency.iter().find(|l| l.clock == name).map(|l| l.p50_ns),
            })
        };
        Ok(Timings {
            instant: get(INSTANT)?,
            monotonic: get(MONOTONIC)?,
            unix_nanos: get(UNIX_NANOS)?,
            recent: get(RECENT)?,
            std_instant: get(STD_INSTANT)?,
            system_time: get(SYSTEM_TIME)?,
        })
    }
}

impl Tails {
    fn of(r: &Report) -> Tails {
        let tail = |name: &str| {
            r.latency.iter().find(|l| l.clock == name).map(|l| Tail {
                p50_ns: l.p50_ns,
                p99_ns: l.p99_ns,
            })
        };
        let control = r
            .strict_test
            .control_clock
            .as_ref()
            .and_then(|c| Some((c.clone(), tail(c)?)));
        Tails {
            instant: tail(INSTANT),
            monotonic: tail(MONOTONIC),
            unix_nanos: tail(UNIX_NANOS),
            std_instant: tail(STD_INSTANT),
            system_time: tail(SYSTEM_TIME),
            control,
        }
    }
}

impl SlowFigures {
    fn of(s: &SlowReadsReport) -> Option<SlowFigures> {
        let row = |name: &str, by: &str| {
            s.rows
                .iter()
                .find(|r| r.clock == name && r.updates_by == by)
        };
        let over = |name: &str| -> Option<Over> {
            let r = row(name, "readers")?;
            Some([
                *r.over_per_s.first()?,
                *r.over_per_s.get(1)?,
                *r.over_per_s.get(2)?,
            ])
        };
        fn fastnow<'a>(s: &'a SlowReadsReport, by: &'a str) -> impl Iterator<Item = &'a SlowRow> {
            s.rows
                .iter()
                .filter(move |r| r.updates_by == by && r.clock.starts_with("fastnow "))
        }
        let costliest = fastnow(s, "readers")
            .filter(|r| r.own_max_cpu_ns.is_some())
            .max_by_key(|r| r.own_max_cpu_ns);
        Some(SlowFigures {
            seconds: s.seconds,
            instant: over(INSTANT)?,
            std_instant: over(STD_INSTANT)?,
            unix_nanos: over(UNIX_NANOS)?,
            system_time: over(SYSTEM_TIME)?,
            nothing: over(NOTHING)?,
            own_reads: fastnow(s, "readers").map(|r| r.own_reads).sum(),
            own_per_s: fastnow(s, "readers").map(|r| r.own_per_s).sum(),
            own_max_ns: fastnow(s, "readers").filter_map(|r| r.own_max_ns).max(),
            own_max_cpu_ns: costliest.and_then(|r| r.own_max_cpu_ns),
            own_max_work: costliest.and_then(|r| r.own_max_work.clone()),
            own_reads_with_upkeep: fastnow(s, "upkeep").map(|r| r.own_reads).sum(),
        })
    }
}

impl Figures {
    /// The figures of a report (its verdict field is not read).
    pub fn of(r: &Report) -> Result<Figures, String> {
        let violations = |name: &str| {
            r.correctness
                .iter()
                .find(|c| c.clock == name)
                .map(|c| c.strict_violations)
        };
        Ok(Figures {
            timings: Timings::of(&r.costs, &r.latency)?,
            monotonic: r.monotonic.as_ref().map(|m| MonotonicFigures {
                start_mode: m.start_mode.clone(),
                start_ns: m.start_ns_median,
                start_std_ns: m.start_std_ns_median,
                settled_mode: m.settled_mode.clone(),
            }),
            tails: Tails::of(r),
            slow: r.slow_reads.as_ref().and_then(SlowFigures::of),
            attempts: r.steadiness.as_ref().map_or(1, |s| s.attempts),
            counter: r.fastnow.counter.clone(),
            freq_hz: r.fastnow.freq_hz,
            fallback: r.fastnow.fallback.clone(),
            strict: Strict {
                conclusive: r.strict_test.conclusive,
                checks: r.strict_test.checks_per_clock,
                instant: violations(INSTANT).unwrap_or(0),
                monotonic: violations(MONOTONIC).unwrap_or(0),
                std_instant: violations(STD_INSTANT),
            },
            wall_p99_ns: r.wall.p99_ns,
            coarse_resolution_ms: r.coarse.resolution_ms,
            coarse_age_p99_ms: r.coarse.age_p99_ms,
        })
    }
}
