//! aarch64: the generic timer's virtual counter, `CNTVCT_EL0`.
//!
//! The Arm architecture requires one system counter shared by every core,
//! counting at a constant rate published in `CNTFRQ_EL0`, and Linux lets user
//! space read both. So unlike the x86 TSC there is nothing to verify about
//! synchronisation; the frequency register, though, is written by firmware
//! and can be tens of ppm off, so it is only the starting point of calibration.
//! `MRS CNTVCT_EL0` may be executed early like `RDTSC`; an `ISB` before it
//! makes it wait for earlier instructions (and so earlier loads). Ordering
//! the read before *later* memory accesses takes one more step, see
//! `ticks_ordered`.

use super::{FreqOrigin, Probe};
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

/// The counter read after all earlier instructions (so earlier loads)
/// completed, and before any later load or store that an ordering
/// instruction (a release store, a barrier) places after earlier loads.
///
/// The second half is not automatic. A system-register read is not a memory
/// access, so the barriers that order memory accesses do not order it: the
/// CPU may still be waiting for `MRS` when a later release store becomes
/// visible, and another thread that sees that store could then read an
/// earlier counter value than ours. Linux's vDSO fixes it the way done
/// here: a load whose address depends on the counter value (`EOR` makes a
/// zero that still depends on it, added to the stack pointer) cannot be
/// performed before the value exists, and it *is* a memory access, so every
/// barrier and release store after it waits for it — and so for the read.
/// `MonotonicInstant`'s ordered strategy needs exactly that: a reading
/// published with a release store must have been read before the store.
#[inline(always)]
pub(crate) fn ticks_ordered(_alt: bool) -> u64 {
    let t: u64;
    // SAFETY: as in `ticks()` for the two system instructions; ISB is
    // unprivileged and only flushes the pipeline. The dependent load reads
    // 8 bytes at the stack pointer (`sp + 0`, the address the EOR/ADD pair
    // always produces), which is mapped, aligned and readable in every
    // thread, into XZR (discarded). The block is not `nomem`, so the
    // compiler keeps memory accesses on their side of it as well.
    unsafe {
        asm!(
            "isb",
            "mrs {t}, cntvct_el0",
            "eor {dep}, {t}, {t}",
            "add {dep}, sp, {dep}",
            "ldr xzr, [{dep}]",
            t = out(reg) t,
            dep = out(reg) _,
            options(nostack, preserves_flags)
        )
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
        ordered_read: "ISB;MRS CNTVCT_EL0;dependent load",
        ordered_read_alt: "ISB;MRS CNTVCT_EL0;dependent load",
        use_alt: false,
        hypervisor: None,
        // A zero frequency register means firmware did not set the timer up;
        // the counter may not be running, so it is treated as unusable.
        disabled: hz == 0,
    }
}
