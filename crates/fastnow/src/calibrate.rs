//! Tick-to-nanosecond calibration: lazy, cheap at start-up, refined for as
//! long as the process converts time.
//!
//! Peers calibrate by spinning for tens or hundreds of milliseconds at load
//! time. fastnow instead records one *anchor* pair (counter, `CLOCK_MONOTONIC`)
//! when the clock is first read, and measures the ratio only when a
//! conversion needs it:
//!
//! - The first conversion derives the scale from the published frequency
//!   (CPUID, `CNTFRQ_EL0`) when there is one; otherwise from a second pair
//!   taken at least [`MIN_BASELINE_NS`] (1 ms) after the anchor, waiting
//!   only for what is left of that millisecond. A program that first
//!   converts a few milliseconds after its first reading waits not at all.
//! - Conversions carry the counter value they already hold; when it passes
//!   `NEXT_CHECK` (one relaxed load and a compare on the read path) the
//!   caller takes a new pair and, if its baseline from the anchor is at least
//!   as long as the one in use, publishes the new ratio. Checks come after
//!   1, 2, 4 … ms, then every second, so after one second of run time the
//!   ratio is measured over a full second (error ≈ bracket width / 1 s,
//!   well under 0.1 ppm), and it keeps following `CLOCK_MONOTONIC`, whose rate
//!   NTP disciplines. The anchor moves forward every [`ROLL_NS`] so the ratio
//!   tracks a changing NTP frequency within about a minute.
//!
//! Each pair is the tightest of several brackets `OS clock, ordered counter
//! read, OS clock`; the counter value is matched to the midpoint.
//!
//! The scale's `shift` is fixed at the first calibration, so a refinement
//! publishes only a new `mult`: a single atomic, which a concurrent reader can
//! never see half-written. The two directions (ticks→ns and ns→ticks) each
//! have their own single-word multiplier for the same reason.

use crate::detect::{self, Decision, FreqOrigin, OS};
use crate::scale::Scale;
use crate::{arch, os};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// Shortest baseline a measured ratio may come from.
pub const MIN_BASELINE_NS: u64 = 1_000_000;
/// Longest gap between two refinement checks.
pub const MAX_CHECK_PERIOD_NS: u64 = 1_000_000_000;
/// Baseline after which the anchor moves forward.
pub const ROLL_NS: u64 = 64_000_000_000;
/// A published frequency counts as good as a measurement over this baseline.
const PUBLISHED_EQUIVALENT_NS: u64 = 20_000_000;
/// A refinement that disagrees with the ratio in use by more than 1/64 (1.6%)
/// means the anchor is unusable (suspend, VM migration): re-anchor instead.
const SANITY_SHIFT: u32 = 6;
/// Brackets per sample; the narrowest wins.
const BRACKETS: usize = 7;

/// ns-per-tick multiplier; 0 until the first calibration.
static NS_MULT: AtomicU64 = AtomicU64::new(0);
static NS_SHIFT: AtomicU32 = AtomicU32::new(0);
/// ticks-per-ns multiplier, for `Instant ± Duration`.
static TICKS_MULT: AtomicU64 = AtomicU64::new(0);
static TICKS_SHIFT: AtomicU32 = AtomicU32::new(0);
/// Counter value at which a conversion runs `maintain`.
static NEXT_CHECK: AtomicU64 = AtomicU64::new(0);

// Calibration bookkeeping, written only under LOCK.
static LOCK: AtomicBool = AtomicBool::new(false);
static ORDERED_ALT: AtomicBool = AtomicBool::new(false);
static ANCHOR_TICKS: AtomicU64 = AtomicU64::new(0);
static ANCHOR_NS: AtomicU64 = AtomicU64::new(0);
static PUBLISHED_HZ: AtomicU64 = AtomicU64::new(0);
static BASELINE_NS: AtomicU64 = AtomicU64::new(0);
static INIT_WAIT_NS: AtomicU64 = AtomicU64::new(0);
static REFINEMENTS: AtomicU32 = AtomicU32::new(0);
/// Consecutive refinements rejected by the sanity check.
static REJECTED: AtomicU32 = AtomicU32::new(0);
static ORIGIN: AtomicU8 = AtomicU8::new(ORIGIN_PENDING);

const ORIGIN_PENDING: u8 = 0;
const ORIGIN_OS: u8 = 1;
const ORIGIN_MEASURED: u8 = 2;
const ORIGIN_CPUID: u8 = 3;
const ORIGIN_HYPERVISOR: u8 = 4;
const ORIGIN_REGISTER: u8 = 5;

/// Called once by detection, before the state is published.
pub(crate) fn start(decision: &Decision, state: u8) {
    if state == OS {
        // Ticks are nanoseconds: the identity scale, never refined.
        let one = Scale::from_ratio(1, 1).expect("1/1 is representable");
        publish_shifts(one, one);
        publish(one, one);
        ORIGIN.store(ORIGIN_OS, Ordering::Relaxed);
        NEXT_CHECK.store(u64::MAX, Ordering::Release);
        return;
    }
    ORDERED_ALT.store(decision.probe.use_alt, Ordering::Relaxed);
    if let Some((hz, origin)) = decision.probe.freq {
        PUBLISHED_HZ.store(hz, Ordering::Relaxed);
        ORIGIN.store(
            match origin {
                FreqOrigin::Cpuid => ORIGIN_CPUID,
                FreqOrigin::Hypervisor => ORIGIN_HYPERVISOR,
                _ => ORIGIN_REGISTER,
            },
            Ordering::Relaxed,
        );
    }
    let (ticks, ns) = sample();
    ANCHOR_TICKS.store(ticks, Ordering::Relaxed);
    ANCHOR_NS.store(ns, Ordering::Relaxed);
    // NEXT_CHECK stays 0: the first conversion calibrates.
}

/// The ticks→ns scale, refined first if `now_ticks` says a check is due.
#[inline(always)]
pub(crate) fn nanos_per_tick(now_ticks: u64) -> Scale {
    // Not due means calibrated: NEXT_CHECK leaves 0 only after the first
    // scale is published, and its Acquire pairs with the Release in
    // `schedule` (which follows `publish`), so the scale loaded below is one
    // published no earlier than the check value seen.
    if now_ticks >= NEXT_CHECK.load(Ordering::Acquire) {
        maintain();
    }
    // Acquire pairs with the Release in `publish`, which makes the shift
    // (written once, before the first multiplier) visible.
    let mult = NS_MULT.load(Ordering::Acquire);
    Scale {
        mult,
        shift: NS_SHIFT.load(Ordering::Relaxed),
    }
}

/// The ns→ticks scale (calibrating first if nothing has yet).
#[inline]
pub(crate) fn ticks_per_nano() -> Scale {
    let mut mult = TICKS_MULT.load(Ordering::Acquire);
    if mult == 0 {
        maintain();
        mult = TICKS_MULT.load(Ordering::Acquire);
    }
    Scale {
        mult,
        shift: TICKS_SHIFT.load(Ordering::Relaxed),
    }
}

/// First calibration (blocking) or a refinement (skipped if another thread
/// is already refining).
#[cold]
#[inline(never)]
fn maintain() {
    if NS_MULT.load(Ordering::Acquire) == 0 {
        detect::ensure_decided();
        lock();
        if NS_MULT.load(Ordering::Acquire) == 0 {
            initialize();
        }
        unlock();
    } else if try_lock() {
        refine(false);
        unlock();
    }
}

fn initialize() {
    let anchor = (
        ANCHOR_TICKS.load(Ordering::Relaxed),
        ANCHOR_NS.load(Ordering::Relaxed),
    );
    let hz = PUBLISHED_HZ.load(Ordering::Relaxed);
    let published = if hz != 0 {
        Scale::nanos_per_tick(hz).zip(Scale::ticks_per_nano(hz))
    } else {
        None
    };
    let (ns_scale, tick_scale, now_ticks, baseline) = match published {
        Some((ns_scale, tick_scale)) => {
            (ns_scale, tick_scale, arch::ticks(), PUBLISHED_EQUIVALENT_NS)
        }
        None => {
            let wait_from = os::monotonic_nanos();
            wait_until(anchor.1 + MIN_BASELINE_NS);
            let (t, n) = sample();
            INIT_WAIT_NS.store(os::monotonic_nanos() - wait_from, Ordering::Relaxed);
            let (dt, dn) = (t.wrapping_sub(anchor.0), n - anchor.1);
            // Detection checked that the counter advances, so dt > 0; if a
            // pathological counter still gives no ratio, nanoseconds are the
            // only honest fallback scale and the check below keeps retrying.
            let one = Scale::from_ratio(1, 1).expect("1/1 is representable");
            let ns_scale = Scale::from_ratio(dn, dt).unwrap_or(one);
            let tick_scale = Scale::from_ratio(dt, dn).unwrap_or(one);
            ORIGIN.store(ORIGIN_MEASURED, Ordering::Relaxed);
            (ns_scale, tick_scale, t, dn)
        }
    };
    BASELINE_NS.store(baseline, Ordering::Relaxed);
    publish_shifts(ns_scale, tick_scale);
    publish(ns_scale, tick_scale);
    schedule(now_ticks, MIN_BASELINE_NS, tick_scale);
}

/// Takes a new pair and publishes the ratio it gives against the anchor when
/// the baseline is long enough (or always, with `force`, waiting if needed).
fn refine(force: bool) {
    let tick_scale = current_ticks_per_nano();
    let (mut t0, mut n0) = (
        ANCHOR_TICKS.load(Ordering::Relaxed),
        ANCHOR_NS.load(Ordering::Relaxed),
    );
    if force {
        wait_until(n0 + MIN_BASELINE_NS);
    }
    let (mut t1, mut n1) = sample();
    let in_use = NS_MULT.load(Ordering::Relaxed);
    let ns_shift = NS_SHIFT.load(Ordering::Relaxed);
    let ticks_shift = TICKS_SHIFT.load(Ordering::Relaxed);

    let measured = |t0: u64, n0: u64, t1: u64, n1: u64| -> Option<(Scale, Scale)> {
        if t1 <= t0 || n1 <= n0 {
            return None;
        }
        let (dt, dn) = (t1 - t0, n1 - n0);
        Scale::with_shift(dn, dt, ns_shift).zip(Scale::with_shift(dt, dn, ticks_shift))
    };
    // After two rejections in a row the ratio in use is the suspect (a
    // published frequency far from the truth), not the anchor.
    let distrust_in_use = REJECTED.load(Ordering::Relaxed) >= 2;
    let sane = |s: &Scale| distrust_in_use || s.mult.abs_diff(in_use) <= in_use >> SANITY_SHIFT;

    let mut candidate = measured(t0, n0, t1, n1).filter(|(ns, _)| sane(ns));
    if candidate.is_some() {
        REJECTED.store(0, Ordering::Relaxed);
    } else {
        REJECTED.fetch_add(1, Ordering::Relaxed);
        // The anchor no longer describes this counter (suspend, migration,
        // a stepped clock): start a new baseline here.
        (t0, n0) = (t1, n1);
        ANCHOR_TICKS.store(t0, Ordering::Relaxed);
        ANCHOR_NS.store(n0, Ordering::Relaxed);
        if force {
            wait_until(n0 + MIN_BASELINE_NS);
            (t1, n1) = sample();
            // A forced recalibration trusts the fresh measurement even if it
            // disagrees with the old ratio; that is what the caller asked for.
            candidate = measured(t0, n0, t1, n1);
        }
    }

    let baseline = n1.saturating_sub(n0);
    if let Some((ns_scale, new_ticks)) = candidate {
        let needed = BASELINE_NS.load(Ordering::Relaxed).min(MAX_CHECK_PERIOD_NS);
        if force || (baseline >= MIN_BASELINE_NS && baseline >= needed) {
            publish(ns_scale, new_ticks);
            BASELINE_NS.store(baseline, Ordering::Relaxed);
            ORIGIN.store(ORIGIN_MEASURED, Ordering::Relaxed);
            REFINEMENTS.fetch_add(1, Ordering::Relaxed);
        }
    }
    if baseline >= ROLL_NS {
        ANCHOR_TICKS.store(t1, Ordering::Relaxed);
        ANCHOR_NS.store(n1, Ordering::Relaxed);
    }
    schedule(t1, baseline, tick_scale);
}

/// Re-measures the counter frequency now, against `CLOCK_MONOTONIC`, and
/// returns the updated [`ClockInfo`](crate::ClockInfo).
///
/// fastnow refines its calibration by itself (see the crate docs), so most
/// programs never need this. Call it after an event that may have changed
/// the counter's relation to the kernel clock, such as a resume from suspend
/// or a live migration, or before a measurement that must not wait for the
/// next scheduled refinement. It may block for up to about a millisecond
/// when the current baseline is unusable. With the OS clock it does nothing.
pub fn recalibrate() -> crate::ClockInfo {
    if detect::ensure_decided() != OS {
        lock();
        if NS_MULT.load(Ordering::Acquire) == 0 {
            initialize();
        } else {
            refine(true);
        }
        unlock();
    }
    detect::clock_info()
}

fn schedule(now_ticks: u64, baseline_ns: u64, tick_scale: Scale) {
    let wait_ns = baseline_ns.clamp(MIN_BASELINE_NS, MAX_CHECK_PERIOD_NS);
    let next = now_ticks.saturating_add(tick_scale.apply_saturating(wait_ns));
    // Release: orders the scale published before it (see `nanos_per_tick`).
    NEXT_CHECK.store(next, Ordering::Release);
}

fn publish_shifts(ns_scale: Scale, tick_scale: Scale) {
    NS_SHIFT.store(ns_scale.shift, Ordering::Relaxed);
    TICKS_SHIFT.store(tick_scale.shift, Ordering::Relaxed);
}

fn publish(ns_scale: Scale, tick_scale: Scale) {
    TICKS_MULT.store(tick_scale.mult, Ordering::Release);
    NS_MULT.store(ns_scale.mult, Ordering::Release);
}

fn current_ticks_per_nano() -> Scale {
    Scale {
        mult: TICKS_MULT.load(Ordering::Relaxed),
        shift: TICKS_SHIFT.load(Ordering::Relaxed),
    }
}

/// One (counter, `CLOCK_MONOTONIC`) pair.
fn sample() -> (u64, u64) {
    sample_against(os::monotonic_nanos)
}

/// One (counter, reference nanoseconds) pair: the tightest of several
/// brackets `reference, ordered counter read, reference`, with the counter
/// matched to the bracket's midpoint. Also anchors the wall tier.
pub(crate) fn sample_against(reference: fn() -> u64) -> (u64, u64) {
    let alt = ORDERED_ALT.load(Ordering::Relaxed);
    let mut best = None;
    let mut last = (0, 0);
    for _ in 0..BRACKETS {
        let before = reference();
        let ticks = arch::ticks_ordered(alt);
        let after = reference();
        last = (ticks, after);
        // A bracket across a backward step of the reference is meaningless.
        let Some(width) = after.checked_sub(before) else {
            continue;
        };
        if best.map_or(true, |(_, _, w)| width < w) {
            best = Some((ticks, before + width / 2, width));
        }
    }
    best.map_or(last, |(ticks, ns, _)| (ticks, ns))
}

fn wait_until(ns: u64) {
    while os::monotonic_nanos() < ns {
        core::hint::spin_loop();
    }
}

fn try_lock() -> bool {
    LOCK.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
}

fn lock() {
    while !try_lock() {
        pause();
    }
}

fn unlock() {
    LOCK.store(false, Ordering::Release);
}

/// Waits a moment for another thread (detection or calibration).
pub(crate) fn pause() {
    #[cfg(feature = "std")]
    std::thread::yield_now();
    #[cfg(not(feature = "std"))]
    core::hint::spin_loop();
}

pub(crate) struct Snapshot {
    pub freq_hz: u64,
    pub origin: FreqOrigin,
    pub baseline_ns: u64,
    pub init_wait_ns: u64,
    pub refinements: u32,
}

pub(crate) fn snapshot() -> Snapshot {
    let mult = NS_MULT.load(Ordering::Acquire);
    let origin = ORIGIN.load(Ordering::Relaxed);
    Snapshot {
        freq_hz: if mult == 0 {
            0
        } else {
            Scale {
                mult,
                shift: NS_SHIFT.load(Ordering::Relaxed),
            }
            .implied_freq_hz()
        },
        origin: match origin {
            ORIGIN_OS => FreqOrigin::Os,
            ORIGIN_MEASURED => FreqOrigin::Measured,
            ORIGIN_CPUID if mult != 0 => FreqOrigin::Cpuid,
            ORIGIN_HYPERVISOR if mult != 0 => FreqOrigin::Hypervisor,
            ORIGIN_REGISTER if mult != 0 => FreqOrigin::ArchRegister,
            _ => FreqOrigin::Pending,
        },
        baseline_ns: if origin == ORIGIN_MEASURED {
            BASELINE_NS.load(Ordering::Relaxed)
        } else {
            0
        },
        init_wait_ns: INIT_WAIT_NS.load(Ordering::Relaxed),
        refinements: REFINEMENTS.load(Ordering::Relaxed),
    }
}
