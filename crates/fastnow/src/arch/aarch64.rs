//! aarch64: the generic timer's virtual counter, `CNTVCT_EL0`.
//!
//! The Arm architecture requires one system counter shared by every core,
//! counting at a constant rate published in `CNTFRQ_EL0`, and Linux lets user
//! space read both. So unlike the x86 TSC there is nothing to verify about
//! synchronisation; the frequency register, though, is written by firmware
//! and can be tens of ppm off, so it is only the starting point of calibration.
//! `MRS CNTVCT_EL0` may be executed early like `RDTSC`; an `ISB` before it
//! makes it wait for earlier instructions (and so earlier loads).

use super::Probe;
use crate::FreqOrigin;
use core::arch::asm;

/// The bare counter read.
#[inline(always)]
pub(crate) fn ticks() -> u64 {
    let t: u64;
    // SAFETY: CNTVCT_EL0 is readable from EL0 on Linux (the kernel sets
    // CNTKCTL_EL1.EL0VCTEN); the instruction only writes the output register,
    // touches no memory and leaves the flags alone.
    unsafe {
        asm!("mrs {t}, cntvct_el0", t = out(reg) t, options(nomem, nostack, preserves_flags))
    };
    t
}

/// The counter read after all earlier instructions (so earlier loads) completed.
#[inline(always)]
pub(crate) fn ticks_ordered(_alt: bool) -> u64 {
    let t: u64;
    // SAFETY: as in `ticks()`. ISB is unprivileged and only flushes the
    // pipeline; it is not marked `nomem` so the compiler also keeps earlier
    // memory accesses before it.
    unsafe {
        asm!("isb", "mrs {t}, cntvct_el0", t = out(reg) t, options(nostack, preserves_flags))
    };
    t
}

fn freq_register() -> u64 {
    let f: u64;
    // SAFETY: CNTFRQ_EL0 is readable from EL0; output register only.
    unsafe {
        asm!("mrs {f}, cntfrq_el0", f = out(reg) f, options(nomem, nostack, preserves_flags))
    };
    f
}

pub(crate) fn probe() -> Probe {
    let hz = freq_register();
    Probe {
        counter: Some("CNTVCT_EL0"),
        invariant: true,
        freq: if hz != 0 {
            Some((hz, FreqOrigin::ArchRegister))
        } else {
            None
        },
        ordered_read: "ISB;MRS CNTVCT_EL0",
        ordered_read_alt: "ISB;MRS CNTVCT_EL0",
        use_alt: false,
        hypervisor: None,
        // A zero frequency register means firmware did not set the timer up;
        // the counter may not be running, so it is treated as unusable.
        disabled: hz == 0,
    }
}
