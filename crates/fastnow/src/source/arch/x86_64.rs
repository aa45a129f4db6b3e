//! x86_64: the time-stamp counter (TSC).
//!
//! `RDTSC` is an unprivileged instruction on every x86_64 CPU, 11–25 cycles on
//! current parts. It is *not* ordered: the CPU may execute it before earlier
//! loads have completed, which is why two threads comparing bare readings can
//! see time step backwards (see `MonotonicInstant`). `RDTSCP` waits for all
//! earlier instructions and loads; `LFENCE; RDTSC` does the same on CPUs and
//! kernels that make `LFENCE` dispatch-serialising, which is every Intel part
//! and AMD parts under current Linux. We prefer `RDTSCP` (architecturally
//! ordered on both vendors) and fall back to `LFENCE; RDTSC` when a hypervisor
//! hides `RDTSCP`. Neither needs help to come before *later* stores (which
//! `MonotonicInstant` relies on when a reading is published): x86 stores
//! become visible only after they retire, in order, so after the counter
//! read before them has retired with its value.

use super::{FreqOrigin, Probe};
use core::arch::x86_64::{__cpuid, __rdtscp, _mm_lfence, _rdtsc, CpuidResult};

/// The bare counter read.
#[inline(always)]
pub(crate) fn ticks() -> u64 {
    // SAFETY: RDTSC exists on every x86_64 CPU and has no memory operands.
    // The one way it can fault, CR4.TSD set for this process through
    // prctl(PR_SET_TSC), is checked in `probe()`, and this function is only
    // reached once detection chose the counter (the timekeeper reads it only
    // for a counter state, or to sample a counter detection accepted).
    unsafe { _rdtsc() }
}

/// The counter read after all earlier loads have completed.
#[inline(always)]
pub(crate) fn ticks_ordered(alt: bool) -> u64 {
    if !alt {
        let mut aux = 0u32;
        // SAFETY: only called when `probe()` saw CPUID.80000001H:EDX[27]
        // (RDTSCP present); `aux` is a valid, writable u32 for the processor ID.
        unsafe { __rdtscp(&mut aux) }
    } else {
        // SAFETY: LFENCE is part of SSE2, which every x86_64 CPU has; RDTSC as
        // in `ticks()`. The fence keeps RDTSC from executing before earlier loads.
        unsafe {
            _mm_lfence();
            _rdtsc()
        }
    }
}

fn cpuid(leaf: u32) -> CpuidResult {
    // SAFETY: CPUID is available on every x86_64 CPU; leaves above the
    // reported maximum return zeros or the highest leaf's data, never fault,
    // and every caller checks the maximum first anyway.
    #[allow(unused_unsafe)]
    unsafe {
        __cpuid(leaf)
    }
}

pub(crate) fn probe() -> Probe {
    let max_leaf = cpuid(0).eax;
    let max_ext = cpuid(0x8000_0000).eax;
    let invariant = max_ext >= 0x8000_0007 && cpuid(0x8000_0007).edx & (1 << 8) != 0;
    let has_rdtscp = max_ext >= 0x8000_0001 && cpuid(0x8000_0001).edx & (1 << 27) != 0;

    let mut hypervisor = None;
    let mut hv_max = 0;
    if max_leaf >= 1 && cpuid(1).ecx & (1 << 31) != 0 {
        let r = cpuid(0x4000_0000);
        hv_max = r.eax;
        let mut sig = [0u8; 12];
        sig[0..4].copy_from_slice(&r.ebx.to_le_bytes());
        sig[4..8].copy_from_slice(&r.ecx.to_le_bytes());
        sig[8..12].copy_from_slice(&r.edx.to_le_bytes());
        hypervisor = Some(sig);
    }

    // Published frequencies, most exact first. Leaf 0x15 gives the TSC as a
    // ratio of the core crystal (exact when the crystal is reported); the
    // hypervisor timing leaf 0x40000010 (VMware, and KVM when configured)
    // gives it in kHz. Leaf 0x16 only gives whole MHz, worse than a 1 ms
    // measurement, so it is not used.
    let mut freq = None;
    if max_leaf >= 0x15 {
        let r = cpuid(0x15);
        if r.eax != 0 && r.ebx != 0 && r.ecx != 0 {
            let hz = r.ecx as u64 * r.ebx as u64 / r.eax as u64;
            freq = Some((hz, FreqOrigin::Cpuid));
        }
    }
    if freq.is_none() && hypervisor.is_some() && hv_max >= 0x4000_0010 {
        let khz = cpuid(0x4000_0010).eax;
        if khz != 0 {
            freq = Some((khz as u64 * 1000, FreqOrigin::Hypervisor));
        }
    }
    if freq.is_none() {
        freq = kernel_tsc_frequency().map(|hz| (hz, FreqOrigin::Kernel));
    }

    Probe {
        counter: Some("TSC (RDTSC)"),
        invariant,
        freq,
        ordered_read: "RDTSCP",
        ordered_read_alt: "LFENCE;RDTSC",
        use_alt: !has_rdtscp,
        hypervisor,
        disabled: tsc_disabled_by_prctl(),
    }
}

/// macOS publishes the TSC frequency it measured at boot.
#[cfg(target_os = "macos")]
fn kernel_tsc_frequency() -> Option<u64> {
    let mut hz: u64 = 0;
    let mut len = core::mem::size_of::<u64>();
    // SAFETY: the name is NUL-terminated; `hz` and `len` are valid and
    // describe an 8-byte buffer; no new value is set.
    let rc = unsafe {
        libc::sysctlbyname(
            c"machdep.tsc.frequency".as_ptr(),
            (&mut hz as *mut u64).cast(),
            &mut len,
            core::ptr::null_mut(),
            0,
        )
    };
    (rc == 0 && len == 8 && hz != 0).then_some(hz)
}

#[cfg(not(target_os = "macos"))]
fn kernel_tsc_frequency() -> Option<u64> {
    None
}

/// Linux lets a process make RDTSC fault (`prctl(PR_SET_TSC, PR_TSC_SIGSEGV)`,
/// used by some sandboxes and record/replay tools); the counter is then unusable.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn tsc_disabled_by_prctl() -> bool {
    let mut mode: libc::c_int = 0;
    // SAFETY: PR_GET_TSC writes one int through the pointer, which points to a
    // live local; on kernels without it the call fails and `mode` stays 0.
    let rc = unsafe { libc::prctl(libc::PR_GET_TSC, &mut mode as *mut libc::c_int) };
    rc == 0 && mode == libc::PR_TSC_SIGSEGV
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn tsc_disabled_by_prctl() -> bool {
    false
}
