//! s390x (Linux): the TOD clock, read with `STCKF` (and `STCK` when
//! ordered).
//!
//! z/Architecture has one time-of-day (TOD) clock per configuration, shared
//! by every CPU: a 64-bit binary counter whose bit 51 ticks once a
//! microsecond, so it counts 4096 units a microsecond — a rate fixed by the
//! architecture (Principles of Operation, "TOD Clock"), not measured or
//! published by firmware. Any program may read it. As on Arm, there is
//! nothing to verify between CPUs, so the kernel's clocksource is not
//! checked.
//!
//! `STORE CLOCK FAST` stores the clock with no serialization, the cheap
//! read. `STORE CLOCK` is the ordered one: the Principles of Operation
//! specify that "a serialization function is performed before the value of
//! the clock is fetched and again after the value is placed in storage", so
//! the clock is read after every earlier storage access has completed, and
//! every later one happens after the read. (`STCK` may set bits below the
//! incremented ones to make each value unique; they are in the same units,
//! so the two reads mix.) Linux's vDSO uses `STCKF`.
//!
//! The 64-bit clock counts from 1900 and wraps in 2042 (the extended clock
//! of `STCKE` carries the epoch above it). fastnow's conversion needs a
//! counter that does not wrap, so the readings are counted from the start
//! of 2020 instead (a constant subtracted modulo 2^64): they wrap in 2162.
//! A clock that reads from 1949 to 2019 (the upper half of that range,
//! modulo 2^64) is not used, nor one not running (condition code 2 or 3).

use super::{FreqOrigin, Probe};
use core::arch::asm;

/// The TOD clock at 2020-01-01 00:00:00 UTC (120 years of 365.2425 days
/// less 3 leap days, 3,786,825,600 s, at 4096 units per µs).
const TOD_2020: u64 = 3_786_825_600 * 4_096_000_000;

/// The TOD clock's rate, fixed by the architecture.
const TOD_HZ: u64 = 4_096_000_000;

/// The bare counter read.
#[inline(always)]
pub(crate) fn ticks() -> u64 {
    let mut tod = 0u64;
    // SAFETY: STCKF is unprivileged (store-clock-fast facility, in every
    // z/Architecture CPU since the z9, and Rust's baseline z10); it stores
    // 8 bytes at the address, which is `tod`, a live, aligned local, and
    // sets the condition code (so no `preserves_flags`).
    unsafe { asm!("stckf 0({p})", p = in(reg_addr) &mut tod, options(nostack)) };
    tod.wrapping_sub(TOD_2020)
}

/// The counter read after every earlier storage access, and before every
/// later one (see the module docs).
#[inline(always)]
pub(crate) fn ticks_ordered(_alt: bool) -> u64 {
    let mut tod = 0u64;
    // SAFETY: as in `ticks()`; STCK is unprivileged and stores 8 bytes at
    // `tod` the same way. Not `nomem`, so the compiler keeps memory accesses
    // on their side of it as well.
    unsafe { asm!("stck 0({p})", p = in(reg_addr) &mut tod, options(nostack)) };
    tod.wrapping_sub(TOD_2020)
}

/// One `STCKF`, with its condition code (0 set, 1 not set: both running;
/// 2 error, 3 stopped or not operational).
fn tod_with_state() -> (u64, u8) {
    let mut tod = 0u64;
    let cc: u64;
    // SAFETY: as in `ticks()`; IPM copies the condition code into bits 34
    // and 35 of `cc` (the program mask beside it), nothing else.
    unsafe {
        asm!(
            "stckf 0({p})",
            "ipm {cc}",
            p = in(reg_addr) &mut tod,
            cc = out(reg) cc,
            options(nostack)
        )
    };
    (tod, ((cc >> 28) & 3) as u8)
}

/// Whether a clock that read `tod` with condition code `cc` is usable: it
/// runs, and counted from 2020 it is far from wrapping.
fn usable(tod: u64, cc: u8) -> bool {
    cc <= 1 && tod.wrapping_sub(TOD_2020) < 1 << 63
}

pub(crate) fn probe() -> Probe {
    let (tod, cc) = tod_with_state();
    Probe {
        counter: Some("TOD clock (STCKF)"),
        invariant: true,
        freq: Some((TOD_HZ, FreqOrigin::ArchRegister)),
        ordered_read: "STCK",
        ordered_read_alt: "STCK",
        use_alt: false,
        hypervisor: None,
        disabled: !usable(tod, cc),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_and_range() {
        // 1970-01-01 is 2,208,988,800 s after the TOD epoch.
        let unix_epoch = 2_208_988_800u64 * TOD_HZ;
        assert_eq!(TOD_2020 - unix_epoch, 1_577_836_800 * TOD_HZ);
        assert!(usable(TOD_2020, 0));
        assert!(usable(TOD_2020 + 20 * 365 * 86_400 * TOD_HZ, 1));
        // Past the 2042 wrap of the 64-bit clock: still counting on.
        assert!(usable(TOD_2020.wrapping_add(40 * 365 * 86_400 * TOD_HZ), 0));
        assert!(!usable(TOD_2020 - 1, 0), "before 2020");
        assert!(!usable(TOD_2020 - 30 * 365 * 86_400 * TOD_HZ, 0), "1990");
        // The 64-bit clock is modular: 0 is 1900 and also September 2042.
        assert!(usable(0, 1));
        assert!(!usable(TOD_2020, 2), "error state");
        assert!(!usable(TOD_2020, 3), "stopped");
    }

    #[test]
    fn reads_advance_and_order() {
        let (tod, cc) = tod_with_state();
        assert!(usable(tod, cc), "{tod:#x} cc {cc}");
        assert!(!probe().disabled);
        let a = ticks();
        let b = ticks_ordered(false);
        let c = ticks();
        // STCK's uniqueness bits may put it a few units past a later STCKF
        // of the same microsecond-fraction; never a whole unit of bit 51.
        assert!(a <= b && b <= c + 4096, "{a} {b} {c}");
        let mut n = 0;
        while ticks() == a {
            n += 1;
            assert!(n < 1_000_000, "the TOD clock does not advance");
        }
        // Against the OS clock: 10 ms of CLOCK_MONOTONIC is 10 ms of TOD
        // within 1 %.
        let (t0, m0) = (ticks(), crate::source::os::monotonic_nanos());
        while crate::source::os::monotonic_nanos() - m0 < 10_000_000 {}
        let (t1, m1) = (ticks(), crate::source::os::monotonic_nanos());
        let nanos = (t1 - t0) as u128 * 1_000_000_000 / TOD_HZ as u128;
        let mono = (m1 - m0) as u128;
        assert!(nanos.abs_diff(mono) * 100 < mono, "{nanos} ns vs {mono} ns");
    }
}
