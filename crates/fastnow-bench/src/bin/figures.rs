//! Prints the precise tier's figures as the Markdown tables of BENCHMARKS.md.
//!
//!     cargo run --release -p fastnow-bench --features peers --bin figures [-- --quick]
//!
//! Every cost is a median over interleaved rounds measured in this one
//! process, so the ratios compare clocks under the same conditions. Start-up
//! and start-up accuracy are measured in fresh child processes (this same
//! binary, re-run with `--child …`), since they are about a process's first
//! moments; so is the strict test of the high-water strategy, because
//! `MonotonicInstant` leaves that strategy for good once contended.

use fastnow_bench::{
    clocks, contended, drift_against_monotonic, median, per_thread_backwards, strict_cross_thread,
    Clock, Kind,
};
use std::process::Command;
use std::time::Duration;

struct Plan {
    rounds: usize,
    iters: u64,
    strict_checks: u64,
    children: usize,
    tail_secs: u64,
    cold_rounds: usize,
    cold_idle: Duration,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(pos) = args.iter().position(|a| a == "--child") {
        return child(&args[pos + 1..]);
    }
    let quick = args.iter().any(|a| a == "--quick");
    let plan = if quick {
        Plan {
            rounds: 5,
            iters: 1_000_000,
            strict_checks: 1_000_000,
            children: 5,
            tail_secs: 1,
            cold_rounds: 3,
            cold_idle: Duration::from_millis(300),
        }
    } else {
        Plan {
            rounds: 9,
            iters: 5_000_000,
            strict_checks: 100_000_000,
            children: 15,
            tail_secs: 4,
            cold_rounds: 9,
            cold_idle: Duration::from_secs(1),
        }
    };

    let _ = fastnow::Instant::now().elapsed(); // calibrate, so the header shows the rate
    let info = fastnow::clock_info();
    println!("Machine: {}, {} cores; {}", cpu_model(), num_cores(), info);
    println!();
    costs(&plan);
    ordered_after_a_load(&plan);
    thread_cpu(&plan);
    wall_and_coarse(&plan);
    updates(&plan);
    cold_calls(&plan);
    read_tails(&plan);
    contention(&plan);
    hlc(&plan);
    strictness(&plan);
    startup(&plan);
    accuracy(&plan);
}

/// The CPU as BENCHMARKS.md labels its tables: vendor, model name, and
/// family/model (which tell Zen generations and Intel cores apart).
fn cpu_model() -> String {
    let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
        return std::env::consts::ARCH.to_string();
    };
    let field = |name: &str| {
        info.lines()
            .find(|l| l.split(':').next().map(str::trim) == Some(name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    match (field("vendor_id"), field("model name")) {
        (Some(vendor), Some(model)) => format!(
            "{model} ({vendor}, family {}, model {})",
            field("cpu family").unwrap_or_default(),
            field("model").unwrap_or_default()
        ),
        (_, Some(model)) => model,
        _ => std::env::consts::ARCH.to_string(),
    }
}

fn num_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn find(all: &[Clock], name: &str) -> Option<Clock> {
    all.iter().copied().find(|c| c.name == name)
}

/// The thread CPU clock beside the routes it chooses from, interleaved
/// rounds in one process: `ThreadCpuInstant::now()`, the OS call, and (on
/// Linux, where perf events open) the perf event's own system calls read
/// directly — the `ioctl` and page fastnow uses where the page offers no
/// user-space time, and a `read()` of the descriptor (tach 0.2's route
/// there), which fastnow does not use because the descriptor's number may
/// be reused by the program.
///
/// Each is called through a function pointer, as a reading inside a
/// function that returns is: on some machines the first return after a
/// system call costs a good part of the call itself (return-stack
/// mitigations), which a read inlined into a loop without returns never
/// pays. The last row shows fastnow's read inlined into the loop.
fn thread_cpu(plan: &Plan) {
    let _ = fastnow::ThreadCpuInstant::now(); // decide this thread's route
    let info = fastnow::clock_info();
    let iters = (plan.iters / 100).max(1_000);
    static EVENT: std::sync::OnceLock<Option<perf::Event>> = std::sync::OnceLock::new();
    let event = EVENT.get_or_init(perf::Event::open).is_some();
    type Row = (&'static str, fn() -> u64, Vec<f64>);
    let mut rows: Vec<Row> = vec![
        (
            "fastnow `ThreadCpuInstant::now()`",
            || fastnow::ThreadCpuInstant::now().as_nanos(),
            Vec::new(),
        ),
        (
            "`clock_gettime(CLOCK_THREAD_CPUTIME_ID)` (libc)",
            || fastnow_bench::clock_gettime_ns(libc::CLOCK_THREAD_CPUTIME_ID),
            Vec::new(),
        ),
    ];
    if event {
        rows.push((
            "perf event: `ioctl(PERF_EVENT_IOC_RESET)` + page",
            || EVENT.get().unwrap().as_ref().unwrap().ioctl_and_page(),
            Vec::new(),
        ));
        rows.push((
            "perf event: `read()` of its descriptor",
            || EVENT.get().unwrap().as_ref().unwrap().read(),
            Vec::new(),
        ));
    }
    let mut inlined = Vec::new();
    for _ in 0..plan.rounds {
        for (_, f, v) in rows.iter_mut() {
            let f = *f;
            v.push(fastnow_bench::ns_per_call(
                || std::hint::black_box(f)(),
                iters,
            ));
        }
        inlined.push(fastnow_bench::ns_per_call(
            || fastnow::ThreadCpuInstant::now().as_nanos(),
            iters,
        ));
    }
    println!(
        "### Thread CPU time, one thread ({} rounds × {} calls, median)\n",
        plan.rounds, iters
    );
    println!(
        "Route: {}{}{}\n",
        info.thread_cpu,
        info.thread_cpu_fallback
            .map_or(String::new(), |w| format!(" ({w})")),
        info.thread_cpu_costs
            .map_or(String::new(), |c| format!("; chosen at first use: {c}"))
    );
    // Ratios as medians of the rounds' ratios: a busy round moves both.
    let os_ns = rows[1].2.clone();
    println!("| read (called through a function pointer) | ns/call | min–max of rounds | vs the OS call (median of the rounds' ratios) |");
    println!("|---|---:|---:|---:|");
    let inlined_row = (
        "fastnow `ThreadCpuInstant::now()`, inlined into the loop",
        inlined,
    );
    for (name, v) in rows
        .iter()
        .map(|(name, _, v)| (*name, v.clone()))
        .chain([inlined_row])
    {
        let (lo, hi) = v
            .iter()
            .fold((f64::MAX, 0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        let ratios: Vec<f64> = v.iter().zip(&os_ns).map(|(x, o)| x / o).collect();
        println!(
            "| {name} | {:.1} | {lo:.1}–{hi:.1} | {:.3}× |",
            median(&v),
            median(&ratios)
        );
    }
    println!();
}

/// A task-clock event of the calling thread, read directly (not through
/// fastnow), for the figures' comparison of the routes.
#[cfg(target_os = "linux")]
mod perf {
    pub struct Event {
        fd: i32,
        /// The page's address (a number: the event is shared through a
        /// static, and only its opening thread reads it).
        page: usize,
    }

    impl Event {
        pub fn open() -> Option<Event> {
            let fd = fastnow::__test::thread_cpu_task_clock_descriptor()?;
            // SAFETY: maps the event's first page read-only, where the kernel
            // chooses; kept for the life of the process.
            let page = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    4096,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    fd,
                    0,
                )
            };
            (page != libc::MAP_FAILED).then_some(Event {
                fd,
                page: page as usize,
            })
        }

        /// The event's running time: the request that brings the page up
        /// to date, then `time_running` (offset 32).
        pub fn ioctl_and_page(&self) -> u64 {
            // SAFETY: PERF_EVENT_IOC_RESET takes no argument; the page is
            // mapped, and `time_running` an aligned u64 in it.
            unsafe {
                libc::ioctl(self.fd, 0x2403 as _, 0);
                std::ptr::read_volatile((self.page + 32) as *const u64)
            }
        }

        /// The event's count, by `read()`.
        pub fn read(&self) -> u64 {
            let mut count = 0u64;
            // SAFETY: reads 8 bytes into `count`.
            unsafe { libc::read(self.fd, (&mut count as *mut u64).cast(), 8) };
            count
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod perf {
    pub struct Event;
    impl Event {
        pub fn open() -> Option<Event> {
            None
        }
        pub fn ioctl_and_page(&self) -> u64 {
            0
        }
        pub fn read(&self) -> u64 {
            0
        }
    }
}

/// 1–3: single-thread costs, interleaved rounds, medians and ratios.
fn costs(plan: &Plan) {
    let all = clocks();
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); all.len()];
    let mut elapsed = Vec::new();
    let mut now_twice = Vec::new();
    for _ in 0..plan.rounds {
        for (i, c) in all.iter().enumerate() {
            samples[i].push((c.cost)(plan.iters));
        }
        // `start.elapsed()` against a second `now()`: the difference is the
        // conversion to Duration (scale load, refinement check, multiply).
        let start = fastnow::Instant::now();
        elapsed.push(fastnow_bench::ns_per_call(
            || start.elapsed().subsec_nanos() as u64,
            plan.iters,
        ));
        now_twice.push(fastnow_bench::ns_per_call(
            || {
                fastnow::Instant::now()
                    .as_nanos()
                    .wrapping_sub(start.as_nanos())
            },
            plan.iters,
        ));
    }
    let med: Vec<f64> = samples.iter().map(|s| median(s)).collect();
    let std_ns = med[all
        .iter()
        .position(|c| c.name == "std Instant::now")
        .unwrap()];
    println!(
        "### Cost per call, one thread ({} rounds × {} calls, median)\n",
        plan.rounds, plan.iters
    );
    println!("| clock | ns/call | min–max of rounds | vs std `Instant::now` |");
    println!("|---|---:|---:|---:|");
    for (i, c) in all.iter().enumerate() {
        let (lo, hi) = samples[i]
            .iter()
            .fold((f64::MAX, 0f64), |(l, h), &x| (l.min(x), h.max(x)));
        println!(
            "| {}{} | {:.2} | {:.2}–{:.2} | {:.2}× |",
            c.name,
            if c.kind == Kind::Peer { " (peer)" } else { "" },
            med[i],
            lo,
            hi,
            med[i] / std_ns
        );
    }
    let get = |n: &str| all.iter().position(|c| c.name == n).map(|i| med[i]);
    let now = get("fastnow Instant::now").unwrap();
    let (el, twice) = (median(&elapsed), median(&now_twice));
    println!();
    if std_ns >= now {
        println!("- `Instant::now()` vs std: {:.2}× faster", std_ns / now);
    } else {
        println!("- `Instant::now()` vs std: {:.2}× slower", now / std_ns);
    }
    if let Some(bare) = get("RDTSC").or(get("MRS CNTVCT_EL0")) {
        println!(
            "- `Instant::now()` vs the bare counter read: {:.3}×",
            now / bare
        );
    }
    let ordered_floor = [
        get("LFENCE;RDTSC"),
        get("RDTSCP"),
        get("ISB;MRS CNTVCT_EL0"),
    ]
    .into_iter()
    .flatten()
    .fold(f64::MAX, f64::min);
    if ordered_floor < f64::MAX {
        println!(
            "- `OrderedInstant::now()` vs the cheaper ordered read: {:.3}×",
            get("fastnow OrderedInstant::now").unwrap() / ordered_floor
        );
    }
    println!(
        "- `MonotonicInstant::now()` (uncontended, strategy chosen at start: {:?}) vs `Instant::now()`: {:.3}×",
        fastnow::clock_info().monotonic_mode,
        get("fastnow MonotonicInstant::now").unwrap() / now
    );
    println!("- `start.elapsed()` {el:.2} ns vs a second `now()` {twice:.2} ns: conversion costs {:+.2} ns", el - twice);
    let unix = get("fastnow unix_nanos").unwrap();
    let atomic = get("AtomicU64 load (Relaxed)").unwrap();
    println!(
        "- `unix_nanos()` vs `Instant::now()`: {:.2}×; `SystemTime::now()` is {:.2}× slower than `unix_nanos()`",
        unix / now,
        get("std SystemTime::now").unwrap() / unix
    );
    println!(
        "- `Hlc::now()` vs `unix_nanos()`: {:.2}× (one thread: a `unix_nanos()` reading, its conversion and a compare-and-swap)",
        get("fastnow Hlc::now").unwrap() / unix
    );
    println!(
        "- `recent()` vs a relaxed `AtomicU64` load: {:.2}×; `recent_unix_nanos()`: {:.2}×",
        get("fastnow recent").unwrap() / atomic,
        get("fastnow recent_unix_nanos").unwrap() / atomic
    );
    println!();
}

/// The ordered read as programs use it: after an Acquire load of a word
/// another thread publishes (a deadline, a sequence number), with some work
/// between reads — beside the same with the bare ordered instructions, and
/// the work alone. Back-to-back ordered reads (`costs`) are the worst case
/// for the conversion at the read, whose multiply and add each fence waits
/// for; here the work hides it, as in most programs.
fn ordered_after_a_load(plan: &Plan) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static PUBLISHED: AtomicU64 = AtomicU64::new(1);
    /// About 20 ns of dependent arithmetic: the work between two reads.
    #[inline(always)]
    fn work(mut x: u64) -> u64 {
        for _ in 0..24 {
            x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(7);
        }
        x
    }
    let pattern = |read: fn() -> u64| {
        move || {
            let seen = PUBLISHED.load(Ordering::Acquire);
            work(seen) ^ read()
        }
    };
    /// A row's name and its read.
    type Row = (&'static str, fn() -> u64);
    let mut rows: Vec<Row> = vec![
        ("work alone", || 0),
        ("fastnow OrderedInstant::now", || {
            fastnow::OrderedInstant::now().as_nanos()
        }),
    ];
    #[cfg(target_arch = "x86_64")]
    {
        rows.push(("LFENCE;RDTSC", fastnow_bench::raw::lfence_rdtsc));
        if find(&fastnow_bench::clocks(), "RDTSCP").is_some() {
            rows.push(("RDTSCP", fastnow_bench::raw::rdtscp));
        }
    }
    #[cfg(target_arch = "aarch64")]
    rows.push(("ISB;MRS CNTVCT_EL0", fastnow_bench::raw::isb_cntvct));
    let mut samples = vec![Vec::new(); rows.len()];
    for _ in 0..plan.rounds {
        for (i, (_, read)) in rows.iter().enumerate() {
            samples[i].push(fastnow_bench::ns_per_call(pattern(*read), plan.iters));
        }
    }
    let med: Vec<f64> = samples.iter().map(|s| median(s)).collect();
    println!(
        "### An ordered read after an Acquire load, with work between ({} rounds × {} calls, median)\n",
        plan.rounds, plan.iters
    );
    println!("| read | ns per iteration | the read's share (less the work alone) |");
    println!("|---|---:|---:|");
    for (i, (name, _)) in rows.iter().enumerate() {
        println!("| {name} | {:.2} | {:.2} |", med[i], med[i] - med[0]);
    }
    let fastnow = med[1] - med[0];
    let floor = med[2..].iter().map(|m| m - med[0]).fold(f64::MAX, f64::min);
    if floor < f64::MAX && floor > 0.0 {
        println!(
            "\n- `OrderedInstant::now()` vs the cheaper ordered instruction, each after the load and the work: {:.3}×\n",
            fastnow / floor
        );
    }
}

/// The wall tier's error and the coarse tier's staleness.
fn wall_and_coarse(plan: &Plan) {
    let samples = plan.children * 100;
    let wall = fastnow_bench::wall_errors(samples, Duration::from_micros(500));
    fastnow::stop_upkeep();
    fastnow::start_upkeep(Duration::from_millis(1)).expect("start upkeep");
    let stale = fastnow_bench::staleness(samples, Duration::from_micros(137));
    let p = |v: &[f64], q| fastnow_bench::percentile(v, q);
    println!("### Wall and coarse tiers ({samples} samples each)\n");
    println!("| measure | median | p99 | max |");
    println!("|---|---:|---:|---:|");
    println!(
        "| error of `unix_nanos()` against `CLOCK_REALTIME` (resync every 1 s) | {:.0} ns | {:.0} ns | {:.0} ns |",
        p(&wall, 50.0),
        p(&wall, 99.0),
        p(&wall, 100.0)
    );
    println!(
        "| age of `recent()`, upkeep at 1 ms | {:.3} ms | {:.3} ms | {:.3} ms |",
        p(&stale, 50.0) / 1e6,
        p(&stale, 99.0) / 1e6,
        p(&stale, 100.0) / 1e6
    );
    println!();
}

/// What a reader pays when it finds a state update due (about twice a
/// second without upkeep, one of them also re-checking the clocksource;
/// never with it). A
/// reader that updates once a second has done other work in between, so
/// each update is measured after touching 0, 4 and 32 MiB of other memory:
/// the update's code and data then come from L1/L2, from L3, or from DRAM.
fn updates(plan: &Plan) {
    let n = plan.children * 10;
    let mut other_work = vec![0u8; 32 << 20];
    let mut touch = |mib: usize| {
        for i in (0..mib << 20).step_by(64) {
            other_work[i] = other_work[i].wrapping_add(1);
        }
        std::hint::black_box(&other_work);
    };
    let p = |v: &[f64], q| fastnow_bench::percentile(v, q);
    println!("### State updates on a reader ({n} of each, lock included)\n");
    println!("| update | memory touched since the last | median | p99 | max |");
    println!("|---|---:|---:|---:|---:|");
    for (name, check) in [
        (
            "a rate sample (one bracket when undisturbed, up to four) and publish",
            false,
        ),
        (
            "a clocksource re-check (one `pread`), a rate sample and publish",
            true,
        ),
    ] {
        for mib in [0, 4, 32] {
            let v: Vec<f64> = (0..n)
                .map(|_| {
                    touch(mib);
                    fastnow::__test::reader_update_cost(check) as f64
                })
                .collect();
            println!(
                "| {name} | {mib} MiB | {:.0} ns | {:.0} ns | {:.0} ns |",
                p(&v, 50.0),
                p(&v, 99.0),
                p(&v, 100.0)
            );
        }
    }
    println!("\nWith the upkeep thread running, readers do neither: it does both.\n");
}

/// A bare counter read, to time calls without reading an OS clock first.
#[cfg(target_arch = "x86_64")]
const RAW_TICKS: Option<fn() -> u64> = Some(fastnow_bench::raw::rdtsc);
#[cfg(target_arch = "aarch64")]
const RAW_TICKS: Option<fn() -> u64> = Some(fastnow_bench::raw::cntvct);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const RAW_TICKS: Option<fn() -> u64> = None;

/// What a reader's state update costs when it comes as it does in a
/// program: after about a second in which its code and data were not
/// used, beside the OS clock reads a program would make instead, in the
/// same conditions. Each call follows `cold_idle` of a loop that reads only
/// the counter (so nothing else is warmed) and is timed with two bare
/// counter reads; the same call made again at once gives the warm cost.
/// The rows take turns within a round, starting one further each round,
/// so no row always follows the same neighbour.
fn cold_calls(plan: &Plan) {
    use std::os::unix::fs::FileExt;
    let freq_hz = fastnow::clock_info().freq_hz;
    let (Some(ticks), true) = (RAW_TICKS, freq_hz != 0) else {
        println!("(Cold calls: skipped, no bare counter read on this machine.)\n");
        return;
    };
    let clocksource =
        std::fs::File::open("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .ok();
    let pread = || {
        let mut buf = [0u8; 32];
        if let Some(f) = &clocksource {
            let _ = std::hint::black_box(f.read_at(&mut buf, 0));
        }
    };
    let mut calls: Vec<(&str, &dyn Fn())> = vec![
        ("nothing (the timing alone)", &|| {}),
        ("std `Instant::now()`", &|| {
            std::hint::black_box(std::time::Instant::now());
        }),
        ("std `SystemTime::now()`", &|| {
            std::hint::black_box(std::time::SystemTime::now());
        }),
        (
            "std `Instant::now()` then `SystemTime::now()` (the two clocks a sample reads)",
            &|| {
                std::hint::black_box(std::time::Instant::now());
                std::hint::black_box(std::time::SystemTime::now());
            },
        ),
        ("a reader's rate sample and publish, lock included", &|| {
            fastnow::__test::reader_update(false)
        }),
        ("one `pread` of `current_clocksource` (kept open)", &pread),
        (
            "a reader's clocksource re-check, rate sample and publish, lock included",
            &|| fastnow::__test::reader_update(true),
        ),
    ];
    #[cfg(target_os = "linux")]
    calls.insert(
        3,
        (
            "`clock_gettime(CLOCK_MONOTONIC)` as a system call (past the vDSO)",
            &|| {
                std::hint::black_box(fastnow_bench::clock_gettime_syscall_ns(
                    libc::CLOCK_MONOTONIC,
                ));
            },
        ),
    );
    if clocksource.is_none() {
        // No kernel verdict is read here (not Linux): no such row.
        calls.retain(|(name, _)| !name.contains("`pread`"));
    }
    pread(); // let the first read of the file be no row's
    let to_ns = |t: u64| t as f64 * 1e9 / freq_hz as f64;
    let idle_ticks = (plan.cold_idle.as_nanos() as f64 * freq_hz as f64 / 1e9) as u64;
    let mut cold = vec![Vec::new(); calls.len()];
    let mut warm = vec![Vec::new(); calls.len()];
    for round in 0..plan.cold_rounds {
        for k in 0..calls.len() {
            let i = (round + k) % calls.len();
            let start = ticks();
            while ticks().wrapping_sub(start) < idle_ticks {
                std::hint::spin_loop();
            }
            let t0 = ticks();
            calls[i].1();
            let t1 = ticks();
            calls[i].1();
            let t2 = ticks();
            cold[i].push(to_ns(t1.wrapping_sub(t0)));
            warm[i].push(to_ns(t2.wrapping_sub(t1)));
        }
    }
    let ms = plan.cold_idle.as_millis();
    println!(
        "### Cold calls: each after {ms} ms of a loop reading only the counter ({} of each)\n",
        plan.cold_rounds
    );
    println!("| call | cold: median | min | max | the same call again at once: median |");
    println!("|---|---:|---:|---:|---:|");
    let p = |v: &[f64], q| fastnow_bench::percentile(v, q);
    for (i, (name, _)) in calls.iter().enumerate() {
        println!(
            "| {name} | {:.2} µs | {:.2} µs | {:.2} µs | {:.0} ns |",
            p(&cold[i], 50.0) / 1e3,
            p(&cold[i], 0.0) / 1e3,
            p(&cold[i], 100.0) / 1e3,
            p(&warm[i], 50.0)
        );
    }
    println!(
        "\nA program that reads the clock in a hot loop meets its updates like this: about once a \
         second each, their code and data gone from the caches and TLBs meanwhile. The std rows show \
         what the same idle second does to calls that read the OS clocks.\n"
    );
}

/// The slowest reads, with readers doing the state updates and with the
/// upkeep thread doing them: every call timed, for a few seconds each (a
/// few updates of each kind without upkeep), the two ways measured one
/// after the other for each call, so the host's mood is shared. The calls
/// during which a state was published are shown apart: without upkeep
/// they are the ones that did an update. What the rows that call nothing
/// show is what interrupts and the hypervisor add to any code.
fn read_tails(plan: &Plan) {
    static START: std::sync::OnceLock<fastnow::Instant> = std::sync::OnceLock::new();
    START.get_or_init(fastnow::Instant::now);
    let calls: [(&str, fn()); 4] = [
        ("nothing (the timing alone)", || {}),
        ("`Instant::now()`", || {
            std::hint::black_box(fastnow::Instant::now());
        }),
        ("`elapsed()` (a read and a conversion)", || {
            std::hint::black_box(START.get().map(|s| s.elapsed()));
        }),
        ("`unix_nanos()`", || {
            std::hint::black_box(fastnow::unix_nanos());
        }),
    ];
    let secs = plan.tail_secs;
    println!("### The slowest reads, both ways ({secs} s of back-to-back calls each)\n");
    println!(
        "| call | state updates done by | calls | ≥ 1 µs | ≥ 10 µs | ≥ 100 µs | p99.99 | max \
         | calls during a publish | their median | their max |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (name, call) in calls {
        for upkeep in [false, true] {
            fastnow::stop_upkeep();
            if upkeep {
                fastnow::start_upkeep(Duration::from_millis(1)).expect("start upkeep");
            }
            let t = fastnow_bench::read_tail(call, Duration::from_secs(secs));
            let publishing: Vec<f64> = t.publishing_ns.iter().map(|&ns| ns as f64).collect();
            let (median_us, max_us) = match t.publishing_ns.iter().max() {
                Some(&max) => (
                    format!("{:.2} µs", median(&publishing) / 1e3),
                    format!("{:.2} µs", max as f64 / 1e3),
                ),
                None => ("–".to_string(), "–".to_string()),
            };
            println!(
                "| {name} | {} | {} | {} | {} | {} | {} ns | {:.1} µs | {} | {median_us} | {max_us} |",
                if upkeep {
                    "the upkeep thread (1 ms)"
                } else {
                    "readers"
                },
                t.calls,
                t.over_1us,
                t.over_10us,
                t.over_100us,
                t.p9999_ns,
                t.max_ns as f64 / 1e3,
                publishing.len(),
            );
        }
    }
    fastnow::stop_upkeep();
    println!(
        "\nEach call is timed from the `CLOCK_MONOTONIC` reading before it to the next (that reading, \
         about 30 ns, included). Without upkeep readers publish about two states a second (a sample \
         and a clocksource check alternate, table above); with it, the upkeep thread publishes four a \
         second and readers only load. The rows that call nothing show what interrupts and the \
         hypervisor add to any code.\n"
    );
}

/// 4 (cost part): MonotonicInstant on one core and on every core, through
/// its strategy change.
fn contention(plan: &Plan) {
    let read: fn() -> u64 = || fastnow::MonotonicInstant::now().as_nanos();
    let threads = num_cores().max(2);
    let per_thread = |v: Vec<f64>| median(&v);
    let on_every_core = || {
        contended(
            move |n| fastnow_bench::ns_per_call(read, n),
            threads,
            plan.iters,
        )
    };
    let mut rows = Vec::new();
    let single = |rows: &mut Vec<(String, f64)>, label: &str| {
        let v: Vec<f64> = (0..plan.rounds)
            .map(|_| fastnow_bench::ns_per_call(read, plan.iters))
            .collect();
        rows.push((label.to_string(), median(&v)));
    };
    let chosen = fastnow::clock_info().monotonic_mode;
    single(
        &mut rows,
        &format!("1 thread, strategy chosen at start ({chosen:?})"),
    );
    // Nothing else reads MonotonicInstant now, so holding is safe.
    let every_core = |rows: &mut Vec<(String, f64)>, label: String| {
        let v: Vec<f64> = (0..plan.rounds)
            .map(|_| per_thread(on_every_core()))
            .collect();
        rows.push((label, median(&v)));
    };
    fastnow::MonotonicInstant::__hold_high_water(true);
    single(&mut rows, "1 thread, high-water mark held");
    every_core(
        &mut rows,
        format!("{threads} threads, high-water mark held (what a shared atomic costs)"),
    );
    fastnow::MonotonicInstant::__hold_high_water(false);
    let _ = on_every_core(); // contention switches the strategy
    let mode = fastnow::clock_info().monotonic_mode;
    every_core(
        &mut rows,
        format!("{threads} threads, after the switch ({mode:?})"),
    );
    single(&mut rows, &format!("1 thread, after the switch ({mode:?})"));
    let instant: Vec<f64> = (0..plan.rounds)
        .map(|_| fastnow_bench::ns_per_call(|| fastnow::Instant::now().as_nanos(), plan.iters))
        .collect();
    let instant = median(&instant);
    println!("### `MonotonicInstant::now()` under contention (median ns/call per thread)\n");
    println!("| situation | ns/call | vs uncontended | vs `Instant::now()` |");
    println!("|---|---:|---:|---:|");
    for (label, ns) in &rows {
        println!(
            "| {label} | {ns:.2} | {:.2}× | {:.2}× |",
            ns / rows[0].1,
            ns / instant
        );
    }
    println!();
}

/// Hybrid logical clocks: fastnow's (a compare-and-swap) against uhlc's (a
/// lock per stamp; on its own clock, `SystemTime::now()`, and on fastnow's)
/// on one thread and on every core at once, side by side in rounds; then
/// fastnow's across threads, every stamp kept and checked.
fn hlc(plan: &Plan) {
    let all = clocks();
    let rows: Vec<Clock> = [
        "fastnow Hlc::now",
        "uhlc HLC::new_timestamp",
        "uhlc HLC::new_timestamp (fastnow's clock)",
        "fastnow unix_nanos",
    ]
    .iter()
    .filter_map(|n| find(&all, n))
    .collect();
    let threads = num_cores().max(2);
    let mut one = vec![Vec::new(); rows.len()];
    let mut every = vec![Vec::new(); rows.len()];
    for _ in 0..plan.rounds {
        for (i, c) in rows.iter().enumerate() {
            one[i].push((c.cost)(plan.iters));
            every[i].push(median(&contended(c.cost, threads, plan.iters)));
        }
    }
    let one: Vec<f64> = one.iter().map(|v| median(v)).collect();
    let every: Vec<f64> = every.iter().map(|v| median(v)).collect();
    println!(
        "### Hybrid logical clocks: ns per stamp, 1 thread and {threads} threads at once ({} rounds × {} stamps, median per thread)\n",
        plan.rounds, plan.iters
    );
    println!(
        "| clock | 1 thread | vs fastnow `Hlc::now` | {threads} threads | vs fastnow `Hlc::now` |"
    );
    println!("|---|---:|---:|---:|---:|");
    for (i, c) in rows.iter().enumerate() {
        println!(
            "| {}{} | {:.2} | {:.2}× | {:.2} | {:.2}× |",
            c.name,
            if c.kind == Kind::Peer { " (peer)" } else { "" },
            one[i],
            one[i] / one[0],
            every[i],
            every[i] / every[0]
        );
    }
    let stamps = plan.strict_checks as usize;
    let read: fn() -> u64 = || fastnow_bench::HLC.now().to_u64();
    let u = fastnow_bench::unique_across_threads(read, threads, stamps / threads);
    let strict = strict_cross_thread(read, plan.strict_checks);
    println!(
        "\n`Hlc::now()` on {threads} threads, every stamp kept: {} stamps, {} duplicates, {} not above the \
         same thread's previous; strict cross-thread test ({} checks): {} stamps below one seen from the other thread.\n",
        u.stamps, u.duplicates, u.not_increasing, strict.checks, strict.violations
    );
}

/// 4 (correctness part) and per-thread monotonicity.
fn strictness(plan: &Plan) {
    let all = clocks();
    println!(
        "### Strict cross-thread test ({} checks each) and per-thread monotonicity\n",
        plan.strict_checks
    );
    println!("| clock | violations | worst step back (clock units) | per-thread decreases (2 threads × 10^7) |");
    println!("|---|---:|---:|---:|");
    let high_water = run_child(&["strict-high-water", &plan.strict_checks.to_string()]);
    let hw: Vec<&str> = high_water.split_whitespace().collect();
    println!(
        "| fastnow MonotonicInstant::now (high-water mark held, fresh process) | {} | {} | – |",
        hw[0], hw[1]
    );
    for name in [
        "fastnow MonotonicInstant::now",
        "fastnow OrderedInstant::now",
        "fastnow Instant::now",
        "std Instant::now",
        "quanta Clock::now",
        "minstant Instant::now",
    ] {
        let Some(c) = find(&all, name) else { continue };
        let r = strict_cross_thread(c.read, plan.strict_checks);
        let back = per_thread_backwards(c.read, 2, 10_000_000);
        let label = if name.ends_with("MonotonicInstant::now") {
            format!("{name} ({:?})", fastnow::clock_info().monotonic_mode)
        } else {
            name.to_string()
        };
        println!(
            "| {label} | {} | {} | {back} |",
            r.violations, r.worst_step_back
        );
    }
    println!();
}

/// 5: the first `now()` + `elapsed()` of a fresh process.
fn startup(plan: &Plan) {
    let v: Vec<f64> = (0..plan.children)
        .map(|_| run_child(&["startup"]).trim().parse::<f64>().unwrap())
        .collect();
    let max = v.iter().cloned().fold(0f64, f64::max);
    println!(
        "### Start-up: first `Instant::now()` + `elapsed()` in a fresh process ({} processes)\n",
        plan.children
    );
    println!(
        "median {:.3} ms, worst {:.3} ms (calibration included)\n",
        median(&v) / 1e6,
        max / 1e6
    );
}

/// 6: accuracy against CLOCK_MONOTONIC, right at start-up and after 1 s.
fn accuracy(plan: &Plan) {
    let runs = (plan.children / 3).max(3);
    let mut start_ppm = Vec::new();
    let mut later_us = Vec::new();
    let mut later_ppm = Vec::new();
    for _ in 0..runs {
        let out = run_child(&["accuracy"]);
        let f: Vec<f64> = out.split_whitespace().map(|x| x.parse().unwrap()).collect();
        start_ppm.push(f[0].abs());
        later_us.push(f[1].abs());
        later_ppm.push(f[2].abs());
    }
    let worst = |v: &[f64]| v.iter().cloned().fold(0f64, f64::max);
    println!(
        "### Accuracy of `elapsed()` against `CLOCK_MONOTONIC` ({runs} fresh processes, |error|)\n"
    );
    println!("| interval | median | worst |");
    println!("|---|---:|---:|");
    println!(
        "| 100 ms, starting at the process's first reading | {:.3} ppm | {:.3} ppm |",
        median(&start_ppm),
        worst(&start_ppm)
    );
    println!(
        "| 1 s, after the process has run 1 s | {:.3} µs ({:.3} ppm) | {:.3} µs ({:.3} ppm) |",
        median(&later_us),
        median(&later_ppm),
        worst(&later_us),
        worst(&later_ppm)
    );
    println!();
}

fn run_child(args: &[&str]) -> String {
    let out = Command::new(std::env::current_exe().unwrap())
        .arg("--child")
        .args(args)
        .output()
        .expect("run child");
    assert!(
        out.status.success(),
        "child {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn child(args: &[String]) {
    match args[0].as_str() {
        "startup" => {
            let t = std::time::Instant::now();
            let first = fastnow::Instant::now();
            std::hint::black_box(first.elapsed());
            println!("{}", t.elapsed().as_nanos());
        }
        "accuracy" => {
            let d = drift_against_monotonic(Duration::from_millis(100));
            std::thread::sleep(Duration::from_millis(900));
            let l = drift_against_monotonic(Duration::from_secs(1));
            println!("{} {} {}", d.error_ppm, l.error_ns / 1e3, l.error_ppm);
        }
        "strict-high-water" => {
            fastnow::MonotonicInstant::__hold_high_water(true);
            let r = strict_cross_thread(
                || fastnow::MonotonicInstant::now().as_nanos(),
                args[1].parse().unwrap(),
            );
            assert_eq!(
                fastnow::clock_info().monotonic_mode,
                fastnow::MonotonicMode::HighWater
            );
            println!("{} {}", r.violations, r.worst_step_back);
        }
        other => panic!("unknown child mode {other}"),
    }
}
