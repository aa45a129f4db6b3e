//! Measurement harnesses shared by fastnow's criterion suite, its figures
//! program, its tests and `fastnow report`: one implementation of each
//! measurement, so every number fastnow publishes comes from the same code.
//!
//! - [`clocks`]: every clock worth comparing, as plain `fn() -> u64` readers;
//! - [`ns_per_call`] / [`contended`]: cost, single- and multi-thread;
//! - [`strict_cross_thread`]: the strict monotonicity test (a reading taken
//!   after an Acquire load that saw another thread's reading must not be smaller);
//! - [`drift_against_monotonic`]: a clock's elapsed time against `CLOCK_MONOTONIC`.

#[cfg(target_os = "linux")]
pub mod faults;

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What a clock is, for grouping in tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A fastnow clock.
    Fastnow,
    /// A raw instruction sequence, the floor every counter clock stands on.
    Baseline,
    /// The standard library or the OS.
    Os,
    /// Another crate.
    Peer,
}

/// A clock reader: returns its reading as a number that grows with time
/// (ticks or nanoseconds, whatever the clock counts).
#[derive(Clone, Copy)]
pub struct Clock {
    pub name: &'static str,
    pub kind: Kind,
    /// The reading as a number, for the correctness tests.
    pub read: fn() -> u64,
    /// Mean ns per call of the clock's own `now()` over `iters` calls, its
    /// native result kept alive with `black_box` (no conversion timed).
    pub cost: fn(u64) -> f64,
    /// Whether readings are comparable across threads (a shared timeline),
    /// so the strict cross-thread test means something for it.
    pub shared_timeline: bool,
    /// One call of the clock's own `now()`, its result kept alive with
    /// `black_box`: what [`call_latencies`] times one call at a time.
    pub call: fn(),
    /// The unit of `read`'s values: [`NANOS`], [`TICKS`] (the counter's own)
    /// or [`FIXED_32`] (2^-32 s, with a logical count in the low bits for
    /// the hybrid logical clocks).
    pub unit: &'static str,
}

/// [`Clock::unit`]: nanoseconds.
pub const NANOS: &str = "ns";
/// [`Clock::unit`]: the hardware counter's ticks.
pub const TICKS: &str = "ticks";
/// [`Clock::unit`]: 32.32 fixed-point seconds (2^-32 s).
pub const FIXED_32: &str = "2^-32 s";

/// Builds a [`Clock`]: `clock!(name, kind, shared_timeline, native now(),
/// reading as u64)`, its readings in nanoseconds, or with a last argument,
/// in that unit.
macro_rules! clock {
    ($name:expr, $kind:expr, $shared:expr, $native:expr, $read:expr) => {
        clock!($name, $kind, $shared, $native, $read, NANOS)
    };
    ($name:expr, $kind:expr, $shared:expr, $native:expr, $read:expr, $unit:expr) => {
        Clock {
            name: $name,
            kind: $kind,
            read: $read,
            cost: |iters| {
                let start = std::time::Instant::now();
                for _ in 0..iters {
                    std::hint::black_box($native);
                }
                start.elapsed().as_nanos() as f64 / iters as f64
            },
            shared_timeline: $shared,
            call: || {
                std::hint::black_box($native);
            },
            unit: $unit,
        }
    };
}

/// The floor for the coarse tier: a relaxed load of a shared atomic.
static ATOMIC: AtomicU64 = AtomicU64::new(1);

/// The process's hybrid logical clock, as a program keeps one.
pub static HLC: fastnow::hlc::Hlc = fastnow::hlc::Hlc::new();

/// Nanoseconds of a `clock_gettime` clock.
pub fn clock_gettime_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The same reading made as a system call, past the vDSO (the figures'
/// "Cold calls" time it beside the vDSO's). Panics where the call fails (a
/// seccomp filter may refuse it): a failed call timed would be no figure.
#[cfg(target_os = "linux")]
pub fn clock_gettime_syscall_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime takes a clock id and a valid, writable timespec,
    // which `ts` is; it writes nothing else.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_clock_gettime,
            clock,
            &mut ts as *mut libc::timespec,
        )
    };
    assert_eq!(
        rc,
        0,
        "clock_gettime as a system call: {}",
        std::io::Error::last_os_error()
    );
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    /// The system call reads the clock the vDSO reads: in order with it.
    #[test]
    fn the_system_call_reads_the_same_clock() {
        for _ in 0..1000 {
            let a = super::clock_gettime_ns(libc::CLOCK_MONOTONIC);
            let b = super::clock_gettime_syscall_ns(libc::CLOCK_MONOTONIC);
            let c = super::clock_gettime_ns(libc::CLOCK_MONOTONIC);
            assert!(a <= b && b <= c, "{a} {b} {c}");
        }
    }
}

fn std_instant() -> u64 {
    // std's Instant is opaque; measure it relative to a process-wide base.
    static BASE: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let base = *BASE.get_or_init(std::time::Instant::now);
    std::time::Instant::now().duration_since(base).as_nanos() as u64
}

fn std_system_time() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Raw counter reads, for the ratios the issues quote.
#[cfg(target_arch = "x86_64")]
pub mod raw {
    use std::arch::x86_64::{__rdtscp, _mm_lfence, _rdtsc};
    /// Bare `RDTSC`.
    #[inline(always)]
    pub fn rdtsc() -> u64 {
        // SAFETY: RDTSC is available on every x86_64 CPU and touches no memory.
        unsafe { _rdtsc() }
    }
    /// `LFENCE; RDTSC`.
    #[inline(always)]
    pub fn lfence_rdtsc() -> u64 {
        // SAFETY: LFENCE is SSE2 (baseline x86_64); RDTSC as above.
        unsafe {
            _mm_lfence();
            _rdtsc()
        }
    }
    /// `RDTSCP`.
    #[inline(always)]
    pub fn rdtscp() -> u64 {
        let mut aux = 0;
        // SAFETY: the caller only reaches this after checking RDTSCP exists
        // (`fastnow::clock_info().ordered_read`); `aux` is a valid u32.
        unsafe { __rdtscp(&mut aux) }
    }
}

/// Raw counter reads, for the ratios the issues quote.
#[cfg(target_arch = "aarch64")]
pub mod raw {
    use std::arch::asm;
    /// Bare `MRS CNTVCT_EL0`.
    #[inline(always)]
    pub fn cntvct() -> u64 {
        let t: u64;
        // SAFETY: CNTVCT_EL0 is readable from EL0 on Linux; output register only.
        unsafe {
            asm!("mrs {t}, cntvct_el0", t = out(reg) t, options(nomem, nostack, preserves_flags))
        };
        t
    }
    /// `ISB; MRS CNTVCT_EL0`.
    #[inline(always)]
    pub fn isb_cntvct() -> u64 {
        let t: u64;
        // SAFETY: as above; ISB only flushes the pipeline.
        unsafe {
            asm!("isb", "mrs {t}, cntvct_el0", t = out(reg) t, options(nostack, preserves_flags))
        };
        t
    }
}

/// Every clock the benchmarks and the report compare, fastnow's first.
pub fn clocks() -> Vec<Clock> {
    let mut v = vec![
        clock!(
            "fastnow Instant::now",
            Kind::Fastnow,
            true,
            fastnow::Instant::now(),
            || fastnow::Instant::now().as_nanos()
        ),
        clock!(
            "fastnow MonotonicInstant::now",
            Kind::Fastnow,
            true,
            fastnow::MonotonicInstant::now(),
            || fastnow::MonotonicInstant::now().as_nanos()
        ),
        clock!(
            "fastnow OrderedInstant::now",
            Kind::Fastnow,
            true,
            fastnow::OrderedInstant::now(),
            || fastnow::OrderedInstant::now().as_nanos()
        ),
        clock!(
            "fastnow unix_nanos",
            Kind::Fastnow,
            false,
            fastnow::unix_nanos(),
            fastnow::unix_nanos
        ),
        clock!(
            "fastnow Hlc::now",
            Kind::Fastnow,
            true,
            HLC.now(),
            || HLC.now().to_u64(),
            FIXED_32
        ),
        clock!(
            "fastnow recent",
            Kind::Fastnow,
            true,
            fastnow::recent(),
            || fastnow::recent().as_nanos()
        ),
        clock!(
            "fastnow recent_unix_nanos",
            Kind::Fastnow,
            false,
            fastnow::recent_unix_nanos(),
            fastnow::recent_unix_nanos
        ),
        clock!(
            "AtomicU64 load (Relaxed)",
            Kind::Baseline,
            false,
            ATOMIC.load(Ordering::Relaxed),
            || ATOMIC.load(Ordering::Relaxed)
        ),
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([
        clock!(
            "RDTSC",
            Kind::Baseline,
            true,
            raw::rdtsc(),
            raw::rdtsc,
            TICKS
        ),
        clock!(
            "LFENCE;RDTSC",
            Kind::Baseline,
            true,
            raw::lfence_rdtsc(),
            raw::lfence_rdtsc,
            TICKS
        ),
        clock!(
            "RDTSCP",
            Kind::Baseline,
            true,
            raw::rdtscp(),
            raw::rdtscp,
            TICKS
        ),
    ]);
    #[cfg(target_arch = "aarch64")]
    v.extend([
        clock!(
            "MRS CNTVCT_EL0",
            Kind::Baseline,
            true,
            raw::cntvct(),
            raw::cntvct,
            TICKS
        ),
        clock!(
            "ISB;MRS CNTVCT_EL0",
            Kind::Baseline,
            true,
            raw::isb_cntvct(),
            raw::isb_cntvct,
            TICKS
        ),
    ]);
    v.extend([
        clock!(
            "std Instant::now",
            Kind::Os,
            true,
            std::time::Instant::now(),
            std_instant
        ),
        clock!(
            "std SystemTime::now",
            Kind::Os,
            false,
            std::time::SystemTime::now(),
            std_system_time
        ),
        clock!(
            "clock_gettime MONOTONIC",
            Kind::Os,
            true,
            clock_gettime_ns(libc::CLOCK_MONOTONIC),
            || clock_gettime_ns(libc::CLOCK_MONOTONIC)
        ),
        clock!(
            "clock_gettime MONOTONIC_COARSE",
            Kind::Os,
            true,
            clock_gettime_ns(libc::CLOCK_MONOTONIC_COARSE),
            || clock_gettime_ns(libc::CLOCK_MONOTONIC_COARSE)
        ),
        clock!(
            "clock_gettime REALTIME",
            Kind::Os,
            false,
            clock_gettime_ns(libc::CLOCK_REALTIME),
            || clock_gettime_ns(libc::CLOCK_REALTIME)
        ),
    ]);
    #[cfg(feature = "peers")]
    v.extend(peers::clocks());
    v
}

#[cfg(feature = "peers")]
mod peers {
    //! Each peer's `now()`, reported as nanoseconds since a base reading of
    //! the same clock (the peers' instants are opaque), or raw ticks where
    //! the peer exposes them.
    use super::{Clock, Kind, FIXED_32, NANOS, TICKS};
    use std::sync::OnceLock;

    fn quanta_clock() -> &'static quanta::Clock {
        static C: OnceLock<quanta::Clock> = OnceLock::new();
        C.get_or_init(quanta::Clock::new)
    }

    /// uhlc's hybrid logical clock on its default clock, `SystemTime::now()`.
    fn uhlc_system() -> &'static uhlc::HLC {
        static C: OnceLock<uhlc::HLC> = OnceLock::new();
        C.get_or_init(uhlc::HLC::default)
    }

    /// uhlc's hybrid logical clock on fastnow's wall tier.
    fn uhlc_fastnow() -> &'static uhlc::HLC {
        static C: OnceLock<uhlc::HLC> = OnceLock::new();
        C.get_or_init(|| {
            uhlc::HLCBuilder::new()
                .with_clock(fastnow::uhlc::wall_clock)
                .build()
        })
    }

    macro_rules! since_base {
        ($now:expr, $ty:ty) => {{
            static BASE: OnceLock<$ty> = OnceLock::new();
            let base = *BASE.get_or_init(|| $now);
            ($now).duration_since(base).as_nanos() as u64
        }};
    }

    pub fn clocks() -> Vec<Clock> {
        vec![
            clock!(
                "quanta Clock::now",
                Kind::Peer,
                true,
                quanta_clock().now(),
                || since_base!(quanta_clock().now(), quanta::Instant)
            ),
            clock!(
                "quanta Clock::raw",
                Kind::Peer,
                true,
                quanta_clock().raw(),
                || quanta_clock().raw(),
                TICKS
            ),
            clock!(
                "quanta Instant::recent",
                Kind::Peer,
                true,
                quanta::Instant::recent(),
                || since_base!(quanta::Instant::recent(), quanta::Instant)
            ),
            clock!(
                "minstant Instant::now",
                Kind::Peer,
                true,
                minstant::Instant::now(),
                || since_base!(minstant::Instant::now(), minstant::Instant)
            ),
            clock!(
                "fastant Instant::now",
                Kind::Peer,
                true,
                fastant::Instant::now(),
                || since_base!(fastant::Instant::now(), fastant::Instant)
            ),
            clock!(
                "uhlc HLC::new_timestamp",
                Kind::Peer,
                true,
                uhlc_system().new_timestamp(),
                || uhlc_system().new_timestamp().get_time().as_u64(),
                FIXED_32
            ),
            clock!(
                "uhlc HLC::new_timestamp (fastnow's clock)",
                Kind::Peer,
                true,
                uhlc_fastnow().new_timestamp(),
                || uhlc_fastnow().new_timestamp().get_time().as_u64(),
                FIXED_32
            ),
            clock!(
                "coarsetime Instant::now",
                Kind::Peer,
                true,
                coarsetime::Instant::now(),
                || coarsetime::Instant::now().as_ticks(),
                FIXED_32
            ),
            clock!(
                "coarsetime Instant::recent",
                Kind::Peer,
                true,
                coarsetime::Instant::recent(),
                || coarsetime::Instant::recent().as_ticks(),
                FIXED_32
            ),
        ]
    }
}

/// Median of a sample (the mean of the two middle values for even sizes).
pub fn median(xs: &[f64]) -> f64 {
    assert!(!xs.is_empty(), "median of nothing");
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Mean nanoseconds per call of `read` over `iters` calls.
pub fn ns_per_call(read: impl Fn() -> u64, iters: u64) -> f64 {
    let start = std::time::Instant::now();
    for _ in 0..iters {
        black_box(read());
    }
    start.elapsed().as_nanos() as f64 / iters as f64
}

/// A cost measurement (such as [`Clock::cost`], or [`ns_per_call`] of a
/// reading) run on `threads` threads at once, one figure per thread: what
/// each caller pays when every core reads the clock.
pub fn contended<F>(cost: F, threads: usize, iters: u64) -> Vec<f64>
where
    F: Fn(u64) -> f64 + Copy + Send + 'static,
{
    let go = Arc::new(std::sync::Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let go = go.clone();
            std::thread::spawn(move || {
                go.wait();
                cost(iters)
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("bench thread"))
        .collect()
}

/// Result of [`unique_across_threads`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UniqueResult {
    pub stamps: u64,
    /// Stamps equal to another stamp of any thread.
    pub duplicates: u64,
    /// Stamps not above the same thread's previous one.
    pub not_increasing: u64,
}

/// `threads` threads take `per_thread` stamps each from `read` (a clock
/// that promises unique, strictly increasing readings, such as an HLC),
/// keeping them all; then each thread's are checked to strictly increase,
/// and all of them, merged, for duplicates. Holds 8 bytes per stamp.
pub fn unique_across_threads(read: fn() -> u64, threads: usize, per_thread: usize) -> UniqueResult {
    let go = Arc::new(std::sync::Barrier::new(threads));
    let lists: Vec<Vec<u64>> = (0..threads)
        .map(|_| {
            let go = go.clone();
            std::thread::spawn(move || {
                let mut v = Vec::with_capacity(per_thread);
                go.wait();
                for _ in 0..per_thread {
                    v.push(read());
                }
                v
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().expect("stamping thread"))
        .collect();
    let mut r = UniqueResult::default();
    for list in &lists {
        r.stamps += list.len() as u64;
        r.not_increasing += list.windows(2).filter(|w| w[1] <= w[0]).count() as u64;
    }
    let mut all = lists.concat();
    drop(lists);
    all.sort_unstable();
    r.duplicates = all.windows(2).filter(|w| w[0] == w[1]).count() as u64;
    r
}

/// Result of [`strict_cross_thread`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StrictResult {
    pub checks: u64,
    pub violations: u64,
    /// Largest backward step seen, in the clock's own units.
    pub worst_step_back: u64,
}

/// The strict cross-thread monotonicity test: a writer thread publishes
/// each reading with a Release store; the checking thread loads it with
/// Acquire, then reads the clock; its reading must not be smaller. Counts
/// violations over `checks` checks.
pub fn strict_cross_thread(read: fn() -> u64, checks: u64) -> StrictResult {
    #[repr(align(128))]
    struct Slot(AtomicU64);
    let slot = Arc::new(Slot(AtomicU64::new(read())));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (slot, stop) = (slot.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                slot.0.store(read(), Ordering::Release);
            }
        })
    };
    let mut r = StrictResult {
        checks,
        ..Default::default()
    };
    for _ in 0..checks {
        let seen = slot.0.load(Ordering::Acquire);
        let now = read();
        if now < seen {
            r.violations += 1;
            r.worst_step_back = r.worst_step_back.max(seen - now);
        }
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().expect("writer thread");
    r
}

/// Per-thread monotonicity: `threads` threads each check that successive
/// readings never decrease; returns the total number of decreases.
pub fn per_thread_backwards(read: fn() -> u64, threads: usize, reads: u64) -> u64 {
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            std::thread::spawn(move || {
                let mut last = read();
                let mut back = 0;
                for _ in 0..reads {
                    let now = read();
                    back += (now < last) as u64;
                    last = now;
                }
                back
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("checker thread"))
        .sum()
}

/// A reading of `CLOCK_MONOTONIC` bracketing a clock read: the clock's
/// value is matched to the midpoint of the tightest of a few brackets (in
/// integer ns: an `f64` of nanoseconds since boot loses single nanoseconds
/// after 104 days of uptime).
fn bracket<T: Copy>(read: impl Fn() -> T) -> (T, u64) {
    let mut best = None;
    for _ in 0..5 {
        let a = clock_gettime_ns(libc::CLOCK_MONOTONIC);
        let v = read();
        let b = clock_gettime_ns(libc::CLOCK_MONOTONIC);
        let width = b - a;
        if !matches!(best, Some((_, _, w)) if width >= w) {
            best = Some((v, a + width / 2, width));
        }
    }
    let (v, mid, _) = best.expect("five brackets");
    (v, mid)
}

/// One drift measurement.
#[derive(Clone, Copy, Debug)]
pub struct Drift {
    pub interval: Duration,
    /// `elapsed()` by the clock minus elapsed `CLOCK_MONOTONIC`, in ns.
    pub error_ns: f64,
    pub error_ppm: f64,
}

/// Measures `fastnow::Instant`'s elapsed time against `CLOCK_MONOTONIC` over
/// `interval` (slept), each end matched to a bracket midpoint.
pub fn drift_against_monotonic(interval: Duration) -> Drift {
    let (start, m0) = bracket(fastnow::Instant::now);
    std::thread::sleep(interval);
    let (end, m1) = bracket(fastnow::Instant::now);
    let ours = end.duration_since(start).as_nanos() as i64;
    let reference = (m1 - m0) as i64;
    let error_ns = (ours - reference) as f64;
    Drift {
        interval,
        error_ns,
        error_ppm: error_ns / reference as f64 * 1e6,
    }
}

/// Percentiles (0–100, nearest rank) of a sample.
pub fn percentile(xs: &[f64], p: f64) -> f64 {
    assert!(!xs.is_empty(), "percentile of nothing");
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let rank = ((p / 100.0) * (v.len() - 1) as f64).round() as usize;
    v[rank.min(v.len() - 1)]
}

/// |`fastnow::unix_nanos()` − `CLOCK_REALTIME`| in ns, `samples` times, `gap`
/// apart: the wall reading is compared with the midpoint of the two
/// `CLOCK_REALTIME` reads around it (taking the tightest of 5 brackets).
pub fn wall_errors(samples: usize, gap: Duration) -> Vec<f64> {
    (0..samples)
        .map(|_| {
            std::thread::sleep(gap);
            let mut best = (f64::MAX, 0f64);
            for _ in 0..5 {
                let a = clock_gettime_ns(libc::CLOCK_REALTIME);
                let ours = fastnow::unix_nanos();
                let b = clock_gettime_ns(libc::CLOCK_REALTIME);
                let width = (b - a) as f64;
                if width < best.0 {
                    // In integers: an f64 near today's Unix time resolves 256 ns.
                    let err = ours as i64 - (a + (b - a) / 2) as i64;
                    best = (width, err.unsigned_abs() as f64);
                }
            }
            best.1
        })
        .collect()
}

/// Age of `fastnow::recent()` in ns at `samples` moments `gap` apart (the
/// caller starts upkeep first): `Instant::now() - recent()`.
pub fn staleness(samples: usize, gap: Duration) -> Vec<f64> {
    (0..samples)
        .map(|_| {
            std::thread::sleep(gap);
            let cached = fastnow::recent();
            fastnow::Instant::now().duration_since(cached).as_nanos() as f64
        })
        .collect()
}

/// Signed `fastnow::unix_nanos()` − `CLOCK_REALTIME` in ns: the wall reading
/// against the midpoint of the tightest of 5 `CLOCK_REALTIME` brackets, all
/// in integers (an `f64` near today's Unix time resolves only 256 ns).
pub fn wall_error_ns() -> i64 {
    let mut best = (u64::MAX, 0i64);
    for _ in 0..5 {
        let a = clock_gettime_ns(libc::CLOCK_REALTIME);
        let ours = fastnow::unix_nanos();
        let b = clock_gettime_ns(libc::CLOCK_REALTIME);
        let width = b.saturating_sub(a);
        if width < best.0 {
            best = (width, ours as i64 - (a + width / 2) as i64);
        }
    }
    best.1
}

/// [`wall_error_ns`] at `samples` moments `gap` apart: (ns since the first
/// sample, signed error in ns).
pub fn wall_error_series(samples: usize, gap: Duration) -> Vec<(u64, i64)> {
    let start = clock_gettime_ns(libc::CLOCK_MONOTONIC);
    (0..samples)
        .map(|_| {
            std::thread::sleep(gap);
            let err = wall_error_ns();
            (clock_gettime_ns(libc::CLOCK_MONOTONIC) - start, err)
        })
        .collect()
}

/// The CPUs this process may run on (Linux: its affinity mask; elsewhere
/// `0..available_parallelism`).
pub fn allowed_cpus() -> Vec<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a zeroed cpu_set_t is a valid empty set; the kernel fills it.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is writable and its size is passed.
        let ok = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) } == 0;
        if ok {
            return (0..libc::CPU_SETSIZE as usize)
                // SAFETY: `cpu` is below CPU_SETSIZE.
                .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
                .collect();
        }
    }
    (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect()
}

/// Pins the calling thread to `cpu` (Linux; elsewhere does nothing).
/// Returns whether it is pinned.
pub fn pin_current_thread(cpu: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a zeroed cpu_set_t is a valid empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: callers pass a CPU from `allowed_cpus`, below CPU_SETSIZE.
        unsafe { libc::CPU_SET(cpu, &mut set) };
        // SAFETY: `set` is a valid set of the size passed; 0 is this thread.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpu;
        false
    }
}

/// Result of [`strict_cross_thread_pinned`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PinnedStrictResult {
    pub result: StrictResult,
    /// The index of the first violating check, if any.
    pub first_violation: Option<u64>,
    /// Whether the two threads were pinned to two different CPUs.
    pub pinned: bool,
}

/// The strict cross-thread test of [`strict_cross_thread`], with the writer
/// and the checker pinned to two different CPUs (`cpus`) so they really run
/// at the same time (left to the scheduler, two threads on a busy two-CPU
/// machine often share one CPU in turns, and then even a bare counter read
/// never fails), and counting only once the writer runs. Both threads are
/// spawned, so the caller's own affinity is untouched.
pub fn strict_cross_thread_pinned(
    read: fn() -> u64,
    checks: u64,
    cpus: [usize; 2],
) -> PinnedStrictResult {
    #[repr(align(128))]
    struct Slot(AtomicU64);
    let slot = Arc::new(Slot(AtomicU64::new(0)));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (slot, stop) = (slot.clone(), stop.clone());
        std::thread::spawn(move || {
            let pinned = pin_current_thread(cpus[0]);
            while !stop.load(Ordering::Relaxed) {
                // Never 0, so the checker can tell the writer has started.
                slot.0.store(read().max(1), Ordering::Release);
            }
            pinned
        })
    };
    let checker = {
        let slot = slot.clone();
        std::thread::spawn(move || {
            let pinned = pin_current_thread(cpus[1]);
            while slot.0.load(Ordering::Acquire) == 0 {
                std::hint::spin_loop();
            }
            let mut out = PinnedStrictResult {
                result: StrictResult {
                    checks,
                    ..Default::default()
                },
                first_violation: None,
                pinned,
            };
            for i in 0..checks {
                let seen = slot.0.load(Ordering::Acquire);
                let now = read();
                if now < seen {
                    out.first_violation.get_or_insert(i);
                    out.result.violations += 1;
                    out.result.worst_step_back = out.result.worst_step_back.max(seen - now);
                }
            }
            out
        })
    };
    let mut out = checker.join().expect("checker thread");
    stop.store(true, Ordering::Relaxed);
    out.pinned &= writer.join().expect("writer thread") && cpus[0] != cpus[1];
    out
}

/// The thresholds of [`SlowReads::over`]: 1, 5 and 20 µs.
pub const SLOW_READ_THRESHOLDS_NS: [u64; 3] = [1_000, 5_000, 20_000];

/// One clock's slowest reads, from [`slow_reads`] (turns add up with
/// [`SlowReads::add`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SlowReads {
    /// Calls made.
    pub calls: u64,
    /// The time spent calling it, ns: the sum of the calls' times.
    pub calling_ns: u64,
    /// Calls that took at least each of [`SLOW_READ_THRESHOLDS_NS`], not
    /// counting `own`.
    pub over: [u64; 3],
    /// The slowest call, not counting `own`, ns.
    pub max_ns: u64,
    /// The calls during which fastnow did work of its own on this thread
    /// (see [`OwnWork`]).
    pub own: Vec<OwnRead>,
}

/// One call during which fastnow did work of its own ([`SlowReads::own`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OwnRead {
    /// What it took, ns.
    pub ns: u64,
    /// How much of that the thread spent on the CPU, ns (the rest it
    /// waited: preempted, or the host's).
    pub cpu_ns: u64,
    pub work: &'static str,
}

impl SlowReads {
    /// Adds another turn's counts.
    pub fn add(&mut self, other: &SlowReads) {
        self.calls += other.calls;
        self.calling_ns += other.calling_ns;
        for (a, b) in self.over.iter_mut().zip(other.over) {
            *a += b;
        }
        self.max_ns = self.max_ns.max(other.max_ns);
        self.own.extend_from_slice(&other.own);
    }

    fn count(&mut self, took: u64) {
        for (n, t) in self.over.iter_mut().zip(SLOW_READ_THRESHOLDS_NS) {
            *n += u64::from(took >= t);
        }
        self.max_ns = self.max_ns.max(took);
    }
}

/// Tells the work fastnow did on this thread since it last looked, from
/// what fastnow makes public: a rate measurement raises
/// `clock_info().refinements`; a re-check of the kernel's clocksource reads
/// a file, which raises the thread's count of read system calls
/// (`/proc/thread-self/io`, Linux; elsewhere only rate measurements are
/// seen). A calling thread cannot tell which call did the work, only
/// between which two looks it happened: [`slow_reads`] looks after every
/// short batch of calls and holds the batch's slowest call to be it.
pub struct OwnWork {
    refinements: u32,
    reads: u64,
    /// What reading the thread's CPU time around nothing shows, ns: the
    /// reads' own share, taken off each batch's figure.
    cpu_overhead_ns: u64,
    #[cfg(target_os = "linux")]
    io: Option<std::fs::File>,
}

impl OwnWork {
    /// Starts looking from now, on the calling thread.
    pub fn new() -> OwnWork {
        let mut w = OwnWork {
            refinements: 0,
            reads: 0,
            cpu_overhead_ns: (0..16)
                .map(|_| {
                    let a = clock_gettime_ns(libc::CLOCK_THREAD_CPUTIME_ID);
                    black_box(clock_gettime_ns(libc::CLOCK_MONOTONIC));
                    clock_gettime_ns(libc::CLOCK_THREAD_CPUTIME_ID).saturating_sub(a)
                })
                .min()
                .unwrap_or(0),
            #[cfg(target_os = "linux")]
            io: std::fs::File::open("/proc/thread-self/io").ok(),
        };
        w.refinements = fastnow::clock_info().refinements;
        w.reads = w.read_syscalls();
        w
    }

    /// This thread's read system calls so far, this look's own included.
    fn read_syscalls(&self) -> u64 {
        #[cfg(target_os = "linux")]
        if let Some(f) = &self.io {
            use std::os::unix::fs::FileExt;
            let mut buf = [0u8; 256];
            if let Ok(n) = f.read_at(&mut buf, 0) {
                let text = String::from_utf8_lossy(&buf[..n]);
                if let Some(v) = text
                    .lines()
                    .find_map(|l| l.strip_prefix("syscr:"))
                    .and_then(|v| v.trim().parse().ok())
                {
                    return v;
                }
            }
        }
        0
    }

    /// The work fastnow did on this thread since the last look, if any:
    /// `"a rate measurement"` or `"a clocksource re-check"`. With
    /// `rate_too` false, rate measurements are not looked for (while the
    /// upkeep thread runs, they are its work, and the count is the
    /// process's).
    pub fn since_last(&mut self, rate_too: bool) -> Option<&'static str> {
        let reads = self.read_syscalls();
        // This look's own read is one of them.
        let checked = reads > self.reads + 1;
        self.reads = reads;
        let mut measured = false;
        if rate_too {
            let refinements = fastnow::clock_info().refinements;
            measured = refinements != self.refinements;
            self.refinements = refinements;
            // `clock_info()` re-checks the kernel's clocksource itself when
            // a check is due (once a second): its read is this look's, not
            // the next batch's.
            self.reads = self.read_syscalls();
        }
        match (checked, measured) {
            (true, _) => Some("a clocksource re-check"),
            (false, true) => Some("a rate measurement"),
            (false, false) => None,
        }
    }
}

impl Default for OwnWork {
    fn default() -> OwnWork {
        OwnWork::new()
    }
}

/// Calls in a batch between two looks for fastnow's own work: a few
/// microseconds of calls, so that a stall of the machine's rarely falls in
/// the batch of an update.
pub const SLOW_READ_BATCH: u32 = 64;

/// Calls `call` back to back for `slice` and times each one, as
/// [`read_tail`] does (from the `CLOCK_MONOTONIC` reading before it to the
/// one before the next, so a time includes one such reading, about 30 ns),
/// adding to `into`. With `own` (for fastnow's clocks), looks for fastnow's
/// own work after every [`SLOW_READ_BATCH`] calls, outside the timed calls,
/// and where it finds some, counts the batch's slowest call in
/// [`SlowReads::own`] rather than among the others: an update is the
/// slowest call of its batch unless the machine stalled another call of
/// the same few microseconds for longer, and then it is the stall that is
/// held against fastnow. The thread's CPU time around each batch
/// (`CLOCK_THREAD_CPUTIME_ID`, read outside the timed calls), less the
/// other calls' times, tells how much of that call was work on the CPU and
/// how much waiting (the thread preempted, or the host's). `rate_too` as
/// for [`OwnWork::since_last`]. Needs no test hooks: it sees what a user's
/// program could.
pub fn slow_reads(
    call: fn(),
    slice: Duration,
    own: Option<(&mut OwnWork, bool)>,
    into: &mut SlowReads,
) {
    let deadline = clock_gettime_ns(libc::CLOCK_MONOTONIC) + slice.as_nanos() as u64;
    let mut own = own;
    let mut before = clock_gettime_ns(libc::CLOCK_MONOTONIC);
    while before < deadline {
        let cpu_before = own
            .is_some()
            .then(|| clock_gettime_ns(libc::CLOCK_THREAD_CPUTIME_ID));
        before = clock_gettime_ns(libc::CLOCK_MONOTONIC);
        let (mut slowest, mut batch_ns) = (0, 0);
        for _ in 0..SLOW_READ_BATCH {
            call();
            let after = clock_gettime_ns(libc::CLOCK_MONOTONIC);
            let took = after.saturating_sub(before);
            into.calls += 1;
            into.calling_ns += took;
            batch_ns += took;
            // The batch's slowest is counted once the look has said whose
            // it is; the others at once.
            if took > slowest {
                if slowest > 0 {
                    into.count(slowest);
                }
                slowest = took;
            } else {
                into.count(took);
            }
            before = after;
        }
        let cpu_ns = match (cpu_before, &own) {
            (Some(c), Some((w, _))) => clock_gettime_ns(libc::CLOCK_THREAD_CPUTIME_ID)
                .saturating_sub(c)
                .saturating_sub(w.cpu_overhead_ns),
            _ => 0,
        };
        match own
            .as_mut()
            .and_then(|(w, rate_too)| w.since_last(*rate_too))
        {
            Some(work) => into.own.push(OwnRead {
                ns: slowest,
                // The other calls ran on the CPU for about their time.
                cpu_ns: cpu_ns.saturating_sub(batch_ns - slowest).min(slowest),
                work,
            }),
            None => into.count(slowest),
        }
    }
}

/// The slow end of a clock's per-call cost, from [`read_tail`].
#[cfg(feature = "test-hooks")]
#[derive(Clone, Debug)]
pub struct Tail {
    /// Calls made.
    pub calls: u64,
    /// Calls that took at least 1 µs, 10 µs and 100 µs.
    pub over_1us: u64,
    pub over_10us: u64,
    pub over_100us: u64,
    /// The 99.99th percentile, ns (10 ns resolution; the slowest call if it
    /// lies past 1 ms).
    pub p9999_ns: u64,
    /// The slowest call, ns.
    pub max_ns: u64,
    /// The times in ns of the calls during which fastnow published a state
    /// (the calls that did an update, when readers do them), in call order.
    pub publishing_ns: Vec<u64>,
}

/// Calls `call` back to back for `dur` and times each one, to see what the
/// slowest calls cost: the rare call that does a state update, next to
/// those an interrupt or the hypervisor stretched. Each call is timed from
/// the `CLOCK_MONOTONIC` reading before it to the one before the next, so a
/// time includes one such reading (about 30 ns) and a load of fastnow's
/// state generation, which tells the calls during which a state was
/// published: this is for the tail in microseconds, not for the cost of a
/// call (see [`ns_per_call`]). Needs the `test-hooks` feature (on by default).
#[cfg(feature = "test-hooks")]
pub fn read_tail(call: fn(), dur: Duration) -> Tail {
    const BUCKET_NS: u64 = 10;
    const BUCKETS: usize = 100_000; // 10 ns buckets up to 1 ms, then one for the rest
    let mut hist = vec![0u64; BUCKETS + 1];
    let (mut max_ns, mut publishing_ns) = (0, Vec::new());
    let deadline = clock_gettime_ns(libc::CLOCK_MONOTONIC) + dur.as_nanos() as u64;
    let mut generation = fastnow::__test::state_generation();
    let mut before = clock_gettime_ns(libc::CLOCK_MONOTONIC);
    while before < deadline {
        call();
        let after = clock_gettime_ns(libc::CLOCK_MONOTONIC);
        let took = after.saturating_sub(before);
        hist[((took / BUCKET_NS) as usize).min(BUCKETS)] += 1;
        max_ns = max_ns.max(took);
        let now = fastnow::__test::state_generation();
        if now != generation {
            publishing_ns.push(took);
            generation = now;
        }
        before = after;
    }
    let calls = hist.iter().sum();
    let at_least = |ns: u64| hist[(ns / BUCKET_NS) as usize..].iter().sum::<u64>();
    // Nearest rank: the first bucket where the count reaches the rank.
    let rank = (0.9999 * calls as f64).ceil().max(1.0) as u64;
    let mut seen = 0;
    let bucket = hist.iter().position(|n| {
        seen += n;
        seen >= rank
    });
    Tail {
        calls,
        over_1us: at_least(1_000),
        over_10us: at_least(10_000),
        over_100us: at_least(100_000),
        p9999_ns: match bucket {
            Some(i) if i < BUCKETS => i as u64 * BUCKET_NS,
            _ => max_ns,
        },
        max_ns,
        publishing_ns,
    }
}

/// Per-call latencies of a clock, from [`call_latencies`].
#[derive(Clone, Debug)]
pub struct Latencies {
    /// ns per call, one value per timed batch.
    pub per_call: Vec<f64>,
    /// Calls per timed batch (1: each call timed alone).
    pub batch: u32,
    /// The smallest difference the measurement can tell apart, ns per call.
    pub resolution_ns: f64,
    /// How they were measured, in words.
    pub method: String,
}

/// Per-call latencies in ns of `call`, `samples` of them. On x86_64 each
/// call is timed alone between two fenced counter reads (`LFENCE;RDTSC`
/// before, `RDTSCP;LFENCE` after) minus the median cost of timing nothing;
/// where the counter advances in steps coarser than 2 ns (AMD Zen's TSC
/// moves every 10 ns), and on other targets (with `CLOCK_MONOTONIC`), in
/// batches of 16 calls divided by 16 (a slow call then shows as a 16th of
/// its time).
pub fn call_latencies(call: fn(), samples: usize) -> Latencies {
    latencies_interleaved(&[call], samples)
        .pop()
        .expect("one clock")
}

/// [`call_latencies`] of several calls, `samples` of each, taken in turns
/// of [`LATENCY_TURN`] samples per call, so that a noisy spell of the
/// machine (an interrupt storm, a neighbour on the host) spreads over every
/// call instead of landing on the one measured at the time: their tails
/// are then comparable. One set-up (resolution, overhead) serves them all.
pub fn latencies_interleaved(calls: &[fn()], samples: usize) -> Vec<Latencies> {
    let timer = latency::Timer::new(samples);
    let mut per_call: Vec<Vec<f64>> = calls.iter().map(|_| Vec::with_capacity(samples)).collect();
    for call in calls {
        // Warm each call's code and data before any is timed.
        for _ in 0..1_000 {
            call();
        }
    }
    let mut done = 0;
    while done < samples {
        let turn = LATENCY_TURN.min(samples - done);
        for (call, out) in calls.iter().zip(per_call.iter_mut()) {
            // The other calls ran meanwhile: warm this one's code and data
            // again, so that a turn's first samples time the call, not the
            // switch.
            for _ in 0..LATENCY_WARM_UP {
                call();
            }
            for _ in 0..turn {
                out.push(timer.per_call(*call));
            }
        }
        done += turn;
    }
    per_call
        .into_iter()
        .map(|per_call| Latencies {
            per_call,
            batch: timer.batch,
            resolution_ns: timer.resolution_ns,
            method: timer.method(),
        })
        .collect()
}

/// Samples per call in each turn of [`latencies_interleaved`]: tens of
/// microseconds of calls for a clock of a few nanoseconds, so that a spell
/// of the machine's (an interrupt, a neighbour's burst on the host) falls
/// on every call alike.
pub const LATENCY_TURN: usize = 50;

/// Untimed calls before each turn of [`latencies_interleaved`].
pub const LATENCY_WARM_UP: usize = 64;

#[cfg(target_arch = "x86_64")]
mod latency {
    use std::arch::x86_64::{__rdtscp, _mm_lfence, _rdtsc};

    #[inline(always)]
    fn start() -> u64 {
        // SAFETY: LFENCE (SSE2) and RDTSC exist on every x86_64 CPU.
        unsafe {
            _mm_lfence();
            let t = _rdtsc();
            _mm_lfence();
            t
        }
    }

    #[inline(always)]
    fn end(rdtscp: bool) -> u64 {
        if !rdtscp {
            return start();
        }
        let mut aux = 0;
        // SAFETY: RDTSCP exists (checked by `has_rdtscp`); LFENCE as above.
        unsafe {
            let t = __rdtscp(&mut aux);
            _mm_lfence();
            t
        }
    }

    fn has_rdtscp() -> bool {
        // CPUID 0x80000001, EDX bit 27 (leaf 0x80000000 says whether the
        // extended leaf exists).
        use std::arch::x86_64::__cpuid;
        // SAFETY: CPUID exists on every x86_64 CPU (a safe function in newer
        // Rust releases, hence the allow).
        #[allow(unused_unsafe)]
        unsafe {
            __cpuid(0x8000_0000).eax >= 0x8000_0001 && __cpuid(0x8000_0001).edx & (1 << 27) != 0
        }
    }

    /// Counter ticks per ns, against CLOCK_MONOTONIC over 20 ms.
    fn ticks_per_ns() -> f64 {
        let m0 = super::clock_gettime_ns(libc::CLOCK_MONOTONIC);
        let t0 = start();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let t1 = start();
        let m1 = super::clock_gettime_ns(libc::CLOCK_MONOTONIC);
        (t1 - t0) as f64 / (m1 - m0) as f64
    }

    /// The step the counter advances by, in ticks: timing spins of 0 to
    /// 400 iterations gives every whole number of ticks on a counter that
    /// moves every tick, and only multiples of the step on one that moves
    /// in steps (AMD Zen: every 10 ns); the median gap between the distinct
    /// durations seen is that step.
    fn granularity() -> u64 {
        let mut seen = std::collections::BTreeSet::new();
        for k in 0..400u64 {
            for _ in 0..4 {
                let t0 = start();
                for i in 0..k {
                    std::hint::black_box(i);
                }
                seen.insert(start().wrapping_sub(t0));
            }
        }
        let v: Vec<u64> = seen.into_iter().collect();
        let mut gaps: Vec<u64> = v.windows(2).map(|w| w[1] - w[0]).collect();
        gaps.sort_unstable();
        gaps.get(gaps.len() / 2).copied().unwrap_or(1)
    }

    fn time(call: fn(), batch: u32, rdtscp: bool) -> u64 {
        let t0 = start();
        for _ in 0..batch {
            call();
        }
        end(rdtscp).wrapping_sub(t0)
    }

    /// How calls are timed here: the fences, the batch, the overhead.
    pub struct Timer {
        rdtscp: bool,
        per_ns: f64,
        step_ns: f64,
        pub batch: u32,
        overhead: u64,
        pub resolution_ns: f64,
    }

    impl Timer {
        pub fn new(samples: usize) -> Timer {
            let rdtscp = has_rdtscp();
            let per_ns = ticks_per_ns();
            let step_ns = granularity() as f64 / per_ns;
            let batch = if step_ns > 2.0 { 16 } else { 1 };
            let nothing: fn() = || {};
            let mut empty: Vec<u64> = (0..samples.clamp(1_000, 100_000))
                .map(|_| time(nothing, batch, rdtscp))
                .collect();
            empty.sort_unstable();
            Timer {
                rdtscp,
                per_ns,
                step_ns,
                batch,
                overhead: empty[empty.len() / 2],
                resolution_ns: step_ns.max(1.0 / per_ns) / batch as f64,
            }
        }

        /// One sample: ns per call of `call`.
        pub fn per_call(&self, call: fn()) -> f64 {
            time(call, self.batch, self.rdtscp).saturating_sub(self.overhead) as f64
                / self.per_ns
                / self.batch as f64
        }

        pub fn method(&self) -> String {
            let fences = if self.rdtscp {
                "LFENCE;RDTSC and RDTSCP;LFENCE"
            } else {
                "two LFENCE;RDTSC"
            };
            let batch = self.batch;
            if batch == 1 {
                format!(
                    "each call timed alone between {fences}, minus the median cost of timing nothing"
                )
            } else {
                format!(
                    "the counter moves in steps of {:.1} ns here, so batches of {batch} calls were timed between {fences}, \
                     minus the median cost of timing an empty batch, and divided by {batch} (a slow call shows as 1/{batch} of its time)",
                    self.step_ns
                )
            }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod latency {
    const BATCH: u32 = 16;

    fn batch(f: fn()) -> u64 {
        let a = super::clock_gettime_ns(libc::CLOCK_MONOTONIC);
        for _ in 0..BATCH {
            f();
        }
        super::clock_gettime_ns(libc::CLOCK_MONOTONIC) - a
    }

    /// Batches of 16 calls timed with `CLOCK_MONOTONIC`.
    pub struct Timer {
        overhead: u64,
        pub batch: u32,
        pub resolution_ns: f64,
    }

    impl Timer {
        pub fn new(samples: usize) -> Timer {
            let nothing: fn() = || {};
            let mut empty: Vec<u64> = (0..samples.clamp(1_000, 100_000))
                .map(|_| batch(nothing))
                .collect();
            empty.sort_unstable();
            Timer {
                overhead: empty[empty.len() / 2],
                batch: BATCH,
                resolution_ns: 1.0 / BATCH as f64,
            }
        }

        pub fn per_call(&self, call: fn()) -> f64 {
            batch(call).saturating_sub(self.overhead) as f64 / BATCH as f64
        }

        pub fn method(&self) -> String {
            "batches of 16 calls timed with CLOCK_MONOTONIC, minus the median cost of timing an empty batch, \
             and divided by 16 (a slow call shows as 1/16 of its time)"
                .to_string()
        }
    }
}
