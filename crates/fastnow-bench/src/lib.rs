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
}

/// Builds a [`Clock`]: `clock!(name, kind, shared_timeline, native now(), reading as u64)`.
macro_rules! clock {
    ($name:expr, $kind:expr, $shared:expr, $native:expr, $read:expr) => {
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
        }
    };
}

/// The floor for the coarse tier: a relaxed load of a shared atomic.
static ATOMIC: AtomicU64 = AtomicU64::new(1);

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
        clock!("RDTSC", Kind::Baseline, true, raw::rdtsc(), raw::rdtsc),
        clock!(
            "LFENCE;RDTSC",
            Kind::Baseline,
            true,
            raw::lfence_rdtsc(),
            raw::lfence_rdtsc
        ),
        clock!("RDTSCP", Kind::Baseline, true, raw::rdtscp(), raw::rdtscp),
    ]);
    #[cfg(target_arch = "aarch64")]
    v.extend([
        clock!(
            "MRS CNTVCT_EL0",
            Kind::Baseline,
            true,
            raw::cntvct(),
            raw::cntvct
        ),
        clock!(
            "ISB;MRS CNTVCT_EL0",
            Kind::Baseline,
            true,
            raw::isb_cntvct(),
            raw::isb_cntvct
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
    use super::{Clock, Kind};
    use std::sync::OnceLock;

    fn quanta_clock() -> &'static quanta::Clock {
        static C: OnceLock<quanta::Clock> = OnceLock::new();
        C.get_or_init(quanta::Clock::new)
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
                || quanta_clock().raw()
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
                "coarsetime Instant::now",
                Kind::Peer,
                true,
                coarsetime::Instant::now(),
                || coarsetime::Instant::now().as_ticks()
            ),
            clock!(
                "coarsetime Instant::recent",
                Kind::Peer,
                true,
                coarsetime::Instant::recent(),
                || coarsetime::Instant::recent().as_ticks()
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
/// value is matched to the midpoint of the tightest of a few brackets.
fn bracket<T: Copy>(read: impl Fn() -> T) -> (T, f64) {
    let mut best = None;
    for _ in 0..5 {
        let a = clock_gettime_ns(libc::CLOCK_MONOTONIC);
        let v = read();
        let b = clock_gettime_ns(libc::CLOCK_MONOTONIC);
        let width = b - a;
        if best.map_or(true, |(_, _, w)| width < w) {
            best = Some((v, a as f64 + width as f64 / 2.0, width));
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
    let ours = end.duration_since(start).as_nanos() as f64;
    let reference = m1 - m0;
    let error_ns = ours - reference;
    Drift {
        interval,
        error_ns,
        error_ppm: error_ns / reference * 1e6,
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
