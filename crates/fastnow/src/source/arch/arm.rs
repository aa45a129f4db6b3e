//! 32-bit Arm (ARMv7-A and later, Linux): the generic timer's virtual
//! counter, `CNTVCT`, read with `MRRC p15, 1, <lo>, <hi>, c14`.
//!
//! The counter is the same one aarch64 reads (`aarch64.rs`): one system
//! counter shared by every core, at the constant rate in `CNTFRQ`. What
//! differs is that user space may not be allowed to read it. Many 32-bit
//! cores have no generic timer at all (the Cortex-A8 and A9), where `MRRC`
//! to c14 is undefined; where there is one, `CNTKCTL.PL0VCTEN` decides
//! whether user mode may read the virtual counter, and only the kernel can
//! look at that register. An emulator may also leave it out: qemu-arm
//! emulates no generic timer for user space at all, while `/sys` shows the
//! host's clocksource. A wrong guess is `SIGILL`, so it is never guessed.
//!
//! The rule: the counter is used only when the kernel says it set the timer
//! up for user space, which it does with the `HWCAP_EVTSTRM` bit of
//! `AT_HWCAP` (bit 21; Linux `arch/arm/include/uapi/asm/hwcap.h`, and the
//! same bit for 32-bit processes on an arm64 kernel). Linux's generic-timer
//! driver (`drivers/clocksource/arm_arch_timer.c`) sets that bit when it
//! turns on the timer's event stream, on each core right after it granted
//! user space the virtual counter (`arch_counter_set_user_access`, which on
//! 32-bit kernels always sets `PL0VCTEN`; an arm64 kernel that traps the
//! counter for an erratum emulates the trapped 32-bit read instead of
//! faulting). The bit is not a processor feature: an emulator that does not
//! emulate the kernel's timer does not set it (qemu-arm does not). A kernel
//! built without the event stream, or booted with it turned off, leaves the
//! bit clear and so gets the OS clock: safe, and slower.
//!
//! Ordering follows the Arm ARM's rule for the generic timer (AArch32 as
//! AArch64): a counter read may execute early, out of order; an `ISB` before
//! it makes it wait for every earlier instruction, earlier loads included.
//! A load whose address depends on the value then puts the read ahead of
//! every later barrier, so of a release store (see `aarch64.rs`).
//!
//! Built only where `ISB` exists (ARMv7, the `v7` target feature): the
//! ARMv6 targets get no backend (their cores have no generic timer anyway).

use super::{FreqOrigin, Probe};
use core::arch::asm;

/// `HWCAP_EVTSTRM` in a 32-bit Arm process's `AT_HWCAP`.
const HWCAP_EVTSTRM: u32 = 1 << 21;

/// The bare counter read.
#[inline(always)]
pub(crate) fn ticks() -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: only reached once `probe()` found HWCAP_EVTSTRM, i.e. the kernel
    // granted user space the virtual counter (see the module docs): MRRC
    // then only copies CNTVCT into the two output registers, touching no
    // memory and no flags.
    unsafe {
        asm!(
            "mrrc p15, 1, {lo}, {hi}, c14",
            lo = out(reg) lo,
            hi = out(reg) hi,
            options(nomem, nostack, preserves_flags)
        )
    };
    (hi as u64) << 32 | lo as u64
}

/// The counter read after every earlier instruction (so every earlier load)
/// completed, and before any later barrier or release store (see the
/// module docs and `aarch64.rs`).
#[inline(always)]
pub(crate) fn ticks_ordered(_alt: bool) -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: as in `ticks()` for MRRC; ISB is unprivileged and only flushes
    // the pipeline. The dependent load reads the word at the stack pointer
    // (`sp + 0`: the EOR of a value with itself), which is mapped, aligned
    // and readable in every thread, into a scratch register. Not `nomem`:
    // the compiler keeps memory accesses on their side of the block.
    unsafe {
        asm!(
            "isb",
            "mrrc p15, 1, {lo}, {hi}, c14",
            "eor {dep}, {lo}, {lo}",
            "ldr {dep}, [sp, {dep}]",
            lo = out(reg) lo,
            hi = out(reg) hi,
            dep = out(reg) _,
            options(nostack, preserves_flags)
        )
    };
    (hi as u64) << 32 | lo as u64
}

/// `CNTFRQ`, the frequency firmware wrote for the system counter.
fn freq_register() -> u32 {
    let f: u32;
    // SAFETY: called only after `probe()` found HWCAP_EVTSTRM: CNTFRQ is
    // readable in user mode whenever either counter is (Arm ARM, CNTFRQ
    // access from PL0). MRC only writes the output register.
    unsafe {
        asm!(
            "mrc p15, 0, {f}, c14, c0, 0",
            f = out(reg) f,
            options(nomem, nostack, preserves_flags)
        )
    };
    f
}

/// `AT_HWCAP` of this process.
fn hwcap() -> u32 {
    // SAFETY: getauxval only reads the auxiliary vector the kernel (or an
    // emulator) gave the process; an absent entry is 0.
    unsafe { libc::getauxval(libc::AT_HWCAP) as u32 }
}

/// The rule of the module docs, over what the process was told: whether the
/// counter may be read, and its frequency. `freq` (reading `CNTFRQ`, which
/// faults where the counter does) is called only when the counter is
/// granted. A zero frequency means firmware did not set the timer up: not
/// used, as on aarch64.
fn granted(hwcap: u32, freq: impl FnOnce() -> u32) -> (bool, u64) {
    if hwcap & HWCAP_EVTSTRM == 0 {
        return (false, 0);
    }
    let hz = freq() as u64;
    (hz != 0, hz)
}

pub(crate) fn probe() -> Probe {
    let (readable, hz) = granted(hwcap(), freq_register);
    Probe {
        counter: Some("CNTVCT (MRRC p15)"),
        invariant: true,
        freq: (hz != 0).then_some((hz, FreqOrigin::ArchRegister)),
        ordered_read: "ISB;MRRC CNTVCT;dependent load",
        ordered_read_alt: "ISB;MRRC CNTVCT;dependent load",
        use_alt: false,
        hypervisor: None,
        disabled: !readable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counter_needs_the_kernels_word() {
        // Without HWCAP_EVTSTRM, CNTFRQ is not even read (it would fault).
        let never = || -> u32 { panic!("CNTFRQ read without HWCAP_EVTSTRM") };
        assert_eq!(granted(0, never), (false, 0));
        // Every other bit qemu-arm and kernels set (SWP, HALF, THUMB, VFP,
        // NEON, TLS, VFPv4, IDIV, LPAE ...) says nothing about the timer.
        assert_eq!(granted(!HWCAP_EVTSTRM, never), (false, 0));
        assert_eq!(granted(HWCAP_EVTSTRM, || 24_000_000), (true, 24_000_000));
        assert_eq!(granted(u32::MAX, || 19_200_000), (true, 19_200_000));
        // Granted, but firmware left the frequency at zero.
        assert_eq!(granted(HWCAP_EVTSTRM, || 0), (false, 0));
    }

    /// This process's own probe, which must not fault whatever it runs
    /// on: under qemu-arm (no HWCAP_EVTSTRM) it refuses the counter, and
    /// detection then refuses `FASTNOW_CLOCK=counter` too, with the reason.
    #[test]
    fn probe_follows_the_kernels_word() {
        let p = probe();
        let granted = hwcap() & HWCAP_EVTSTRM != 0;
        assert_eq!(p.disabled, !granted || p.freq.is_none());
        if p.disabled {
            use crate::source::detect::{decide, EnvOverride, Fallback, KernelVerdict};
            let v = KernelVerdict::NotApplicable;
            assert_eq!(
                decide(&p, v, EnvOverride::Counter),
                Some(Fallback::Disabled)
            );
        } else {
            // The two reads, exercised where they are allowed.
            let a = ticks_ordered(false);
            let b = ticks();
            assert!(b >= a, "{a} then {b}");
        }
    }
}
