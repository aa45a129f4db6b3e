//! Runs every measurement of the report through the shared harness
//! (`fastnow_bench`), the same code behind BENCHMARKS.md.

use crate::verdict::{
    self, Figures, Measured, Steadiness, Strict, Timings, INSTANT, MONOTONIC, RECENT, STD_INSTANT,
    SYSTEM_TIME, UNIX_NANOS,
};
use crate::ReportArgs;
use fastnow_bench::{clocks, median, percentile, Clock, Kind};
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant as StdInstant};

/// Bump when a field changes meaning or disappears (REPORT.md documents them).
/// 2: `latency[]` holds per-call latencies (was batches of 64) with percentiles.
pub const SCHEMA_VERSION: u32 = 2;

#[derive(Serialize, Deserialize)]
pub struct Report {
    pub schema_version: u32,
    pub fastnow_version: String,
    pub mode: String,
    pub machine: Machine,
    pub fastnow: Chosen,
    pub costs: Vec<CostRow>,
    pub correctness: Vec<CorrectRow>,
    pub strict_test: StrictTest,
    pub latency_method: String,
    /// Calls per timed batch (1: each call timed alone).
    pub latency_batch: u32,
    pub latency: Vec<Latency>,
    pub drift: Drift,
    pub wall: Wall,
    pub coarse: Coarse,
    /// Present when `--faults` was given (ran, or skipped with a reason).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub faults: Option<Faults>,
    /// How steady the costs behind the verdict were (absent in reports
    /// written before it was recorded).
    #[serde(default)]
    pub steadiness: Option<Steadiness>,
    /// `fastnow::ThreadCpuInstant` (absent in reports written before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_cpu: Option<crate::thread_cpu::ThreadCpu>,
    /// `fastnow::BootInstant` (absent in reports written before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot: Option<crate::boot::Boot>,
    pub verdict: String,
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
    pub ns_median: f64,
    pub ns_min: f64,
    pub ns_max: f64,
    pub all_cores_ns_median: f64,
    pub vs_std_instant: f64,
    /// ns per call of each round, in the order run (absent in reports
    /// written before it was recorded).
    #[serde(default)]
    pub rounds_ns: Vec<f64>,
}

#[derive(Serialize, Deserialize)]
pub struct CorrectRow {
    pub clock: String,
    pub per_thread_decreases: u64,
    pub per_thread_reads: u64,
    pub strict_checks: u64,
    pub strict_violations: u64,
    pub worst_step_back: u64,
}

/// How the strict cross-thread test was run, and whether it could have
/// failed: the bare counter read (no ordering) is the control.
#[derive(Serialize, Deserialize)]
pub struct StrictTest {
    /// The two CPUs the writer and the checker were pinned to (null: not pinned).
    pub cpus: Option<[usize; 2]>,
    pub checks_per_clock: u64,
    /// The bare counter read used as the control (null: no counter here).
    pub control_clock: Option<String>,
    /// Checks the control needed to fail once (searching up to
    /// `control_search_limit` checks when the table's run showed none).
    pub control_checks_to_fail: Option<u64>,
    pub control_search_limit: u64,
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
    /// (bucket lower bound in ns per call, number of calls)
    pub buckets: Vec<(f64, u64)>,
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
}

pub fn run(args: &ReportArgs) -> Report {
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
        }
    };
    let plan = Plan {
        window: args.window.unwrap_or(plan.window),
        ..plan
    };
    let all = clocks();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let shared: Vec<Clock> = all.iter().copied().filter(|c| c.shared_timeline).collect();
    let latency_clocks: Vec<Clock> = LATENCY_CLOCKS
        .iter()
        .filter_map(|name| all.iter().find(|c| c.name == *name).copied())
        .collect();
    let faults_steps = if args.faults { 8 } else { 0 };
    let steps = (plan.rounds * all.len()
        + all.len()
        + 2 * shared.len()
        + latency_clocks.len()
        + 3
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
    let monotonic_at_start = format!("{:?}", fastnow::clock_info().monotonic_mode);
    bar.inc(1);

    // Costs: interleaved rounds, every clock once per round.
    let single = cost_rounds(&all, &plan, &bar);
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

    let (correctness, strict_test) = correctness(&plan, &shared, cores, &bar);

    let latencies = measure_latencies(&latency_clocks, &plan, &bar);

    // The verdict concludes only from steady figures: while the one-thread
    // costs and the latencies are unsteady (other work slowed most rounds,
    // or the two disagree on which clock is cheaper), measure both again,
    // after a pause that lets a short burst of other work pass.
    let ((single, latencies), steadiness) = verdict::until_steady(
        (single, latencies),
        || {
            bar.inc_length((plan.rounds * all.len() + latency_clocks.len()) as u64);
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

    bar.set_message("wall tier against CLOCK_REALTIME");
    let wall = wall(plan.samples);
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

    let thread_cpu = crate::thread_cpu::measure(args.quick);
    let boot = crate::boot::measure(args.quick);
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
        fastnow_version: env!("CARGO_PKG_VERSION").to_string(),
        mode: if args.quick { "quick" } else { "thorough" }.to_string(),
        machine: machine(cores),
        fastnow: Chosen {
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
            invariant: info.invariant,
            upkeep: info.upkeep,
            env_override: format!("{:?}", info.env_override),
            monotonic_mode_at_start: monotonic_at_start,
            monotonic_mode_after_report: format!("{:?}", info.monotonic_mode),
        },
        costs,
        correctness,
        strict_test,
        latency_method,
        latency_batch,
        latency,
        drift,
        wall,
        coarse: Coarse {
            resolution_ms: resolution.as_secs_f64() * 1e3,
            age_median_ms: percentile(&stale, 50.0) / 1e6,
            age_p99_ms: percentile(&stale, 99.0) / 1e6,
            age_max_ms: percentile(&stale, 100.0) / 1e6,
        },
        faults,
        steadiness: Some(steadiness),
        thread_cpu: Some(thread_cpu),
        boot: Some(boot),
        verdict: String::new(),
    };
    report.verdict = match verdict::Figures::of(&report) {
        Ok(f) => verdict::verdict(&f),
        Err(why) => format!("No verdict: {why}."),
    };
    report
}

/// One ns-per-call figure per round for each clock, the clocks interleaved
/// within each round so that a slow spell of the machine spreads over all.
fn cost_rounds(all: &[Clock], plan: &Plan, bar: &ProgressBar) -> Vec<Vec<f64>> {
    let mut single: Vec<Vec<f64>> = vec![Vec::new(); all.len()];
    for _ in 0..plan.rounds {
        for (i, c) in all.iter().enumerate() {
            bar.set_message(format!("cost: {}", c.name));
            single[i].push((c.cost)(plan.iters));
            bar.inc(1);
        }
    }
    single
}

fn cost_rows(all: &[Clock], single: &[Vec<f64>], contended: &[f64]) -> Vec<CostRow> {
    let std_ns = median(
        &single[all
            .iter()
            .position(|c| c.name == "std Instant::now")
            .expect("std is measured")],
    );
    all.iter()
        .enumerate()
        .map(|(i, c)| {
            let s = &single[i];
            CostRow {
                clock: c.name.to_string(),
                kind: kind_name(c.kind).to_string(),
                ns_median: median(s),
                ns_min: s.iter().cloned().fold(f64::MAX, f64::min),
                ns_max: s.iter().cloned().fold(0.0, f64::max),
                all_cores_ns_median: contended[i],
                vs_std_instant: median(s) / std_ns,
                rounds_ns: s.clone(),
            }
        })
        .collect()
}

/// (per-call latencies of each clock, how they were measured, calls per batch)
fn measure_latencies(
    latency_clocks: &[Clock],
    plan: &Plan,
    bar: &ProgressBar,
) -> (Vec<Latency>, String, u32) {
    let mut latency = Vec::new();
    let mut method = String::new();
    let mut batch = 1;
    for c in latency_clocks {
        bar.set_message(format!("latency: {}", c.name));
        let l = fastnow_bench::call_latencies(c.call, plan.latency_samples);
        method = l.method;
        batch = l.batch;
        latency.push(latency_of(c.name, &l.per_call, l.resolution_ns));
        bar.inc(1);
    }
    (latency, method, batch)
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

/// The clocks whose per-call latencies are measured.
const LATENCY_CLOCKS: [&str; 6] = [
    "fastnow Instant::now",
    "fastnow MonotonicInstant::now",
    "fastnow unix_nanos",
    "std Instant::now",
    "std SystemTime::now",
    "clock_gettime MONOTONIC",
];

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
            per_thread_decreases: back,
            per_thread_reads: plan.per_thread_reads * cores.min(4) as u64,
            strict_checks: r.result.checks,
            strict_violations: r.result.violations,
            worst_step_back: r.result.worst_step_back,
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
            checks_per_clock: n,
            control_clock: control.map(|c| c.name.to_string()),
            control_checks_to_fail: control_first,
            control_search_limit: plan.control_limit,
            conclusive,
            note,
        },
    )
}

/// Percentiles and a histogram of per-call latencies.
fn latency_of(clock: &str, per_call: &[f64], resolution_ns: f64) -> Latency {
    let mut v = per_call.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    // Buckets from the minimum to the 99.9th percentile, up to 20 of them
    // and none narrower than the measurement resolves; the rest goes to the
    // last.
    let lo = v[0];
    let hi = percentile(&v, 99.9).max(lo + resolution_ns);
    let n = ((hi - lo) / resolution_ns.max(1e-3))
        .ceil()
        .clamp(1.0, 20.0) as usize;
    let width = (hi - lo) / n as f64;
    let mut buckets: Vec<(f64, u64)> = (0..n).map(|i| (lo + i as f64 * width, 0)).collect();
    for x in &v {
        let i = (((x - lo) / width) as usize).min(n - 1);
        buckets[i].1 += 1;
    }
    Latency {
        clock: clock.to_string(),
        samples: v.len(),
        p50_ns: percentile(&v, 50.0),
        p99_ns: percentile(&v, 99.0),
        p999_ns: percentile(&v, 99.9),
        max_ns: v[v.len() - 1],
        buckets,
    }
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
                all_cores_ns: c.all_cores_ns_median,
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
            attempts: r.steadiness.as_ref().map_or(1, |s| s.attempts),
            counter: r.fastnow.counter.clone(),
            freq_hz: r.fastnow.freq_hz,
            fallback: r.fastnow.fallback.clone(),
            strict: Strict {
                conclusive: r.strict_test.conclusive,
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
