//! x86 (x86_64 and 32-bit i686): the time-stamp counter (TSC).
//!
//! `RDTSC` is an unprivileged instruction on every x86_64 CPU, 11–25 cycles on
//! current parts, and on every 32-bit x86 CPU since the Pentium, the oldest a
//! Rust target runs on (CPUID.1:EDX[4] says so; `probe()` checks it). It is
//! *not* ordered: the CPU may execute it before earlier loads have completed,
//! which is why two threads comparing bare readings can see time step
//! backwards (see `MonotonicInstant`). `RDTSCP` waits for all earlier
//! instructions and loads; `LFENCE; RDTSC` does the same on CPUs and kernels
//! that make `LFENCE` dispatch-serialising, which is every Intel part and AMD
//! parts under current Linux. `RDTSCP` is architecturally ordered on both
//! vendors, so it is the default; `LFENCE; RDTSC` is used where a
//! hypervisor hides `RDTSCP` (on 32-bit targets only where CPUID.1:EDX[26],
//! SSE2, says `LFENCE` exists; with neither, the counter is not used), and
//! where the CPU itself says `LFENCE` is dispatch-serialising — every Intel
//! CPU (Intel SDM vol. 3A, 8.3, and vol. 2, `LFENCE`), and AMD/Hygon CPUs
//! that set CPUID 8000_0021h:EAX[2], *LFENCE always serialising* (AMD APM
//! vol. 3) — and it times cheaper than `RDTSCP` on this core at detection
//! (see [`ordered_alt_is_cheaper`]): the cores differ, and which of the two
//! is cheaper decides most of what `OrderedInstant::now()` costs. Neither needs help to come
//! before *later* stores (which `MonotonicInstant` relies on when a reading is
//! published): x86 stores become visible only after they retire, in order, so
//! after the counter read before them has retired with its value. The 32-bit
//! and 64-bit modes execute these instructions alike (Intel SDM vol. 2,
//! `RDTSC`, `RDTSCP`, `LFENCE`), so one backend serves both.

use super::{FreqOrigin, Probe};
#[cfg(target_arch = "x86")]
use core::arch::x86::{__cpuid, __rdtscp, _mm_lfence, _rdtsc, CpuidResult};
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::{__cpuid, __rdtscp, _mm_lfence, _rdtsc, CpuidResult};

/// The bare counter read.
#[inline(always)]
pub(crate) fn ticks() -> u64 {
    // SAFETY: RDTSC exists on every x86_64 CPU (32-bit: `probe()` checked
    // CPUID.1:EDX[4]) and has no memory operands. The one way it can fault,
    // CR4.TSD set for this process through prctl(PR_SET_TSC, PR_TSC_SIGSEGV),
    // is checked in `probe()`, and this function is only reached once
    // detection chose the counter (the timekeeper reads it only for a counter
    // state, or to sample a counter detection accepted).
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
        // SAFETY: LFENCE is part of SSE2, which every x86_64 CPU has (32-bit:
        // `probe()` disables the counter when neither RDTSCP nor SSE2 is
        // there); RDTSC as in `ticks()`. The fence keeps RDTSC from executing
        // before earlier loads.
        unsafe {
            _mm_lfence();
            _rdtsc()
        }
    }
}

fn cpuid(leaf: u32) -> CpuidResult {
    // SAFETY: CPUID is available on every x86_64 CPU, and on every CPU a
    // 32-bit Rust target runs on (i586, the Pentium, and later); leaves above
    // the reported maximum return zeros or the highest leaf's data, never fault,
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
    // Leaf 1 EDX: bit 4 TSC (RDTSC), bit 26 SSE2 (LFENCE). Always both on
    // x86_64; checked so that a 32-bit build never executes either on a CPU
    // without it.
    let edx1 = if max_leaf >= 1 { cpuid(1).edx } else { 0 };
    let has_tsc = edx1 & (1 << 4) != 0;
    let has_lfence = edx1 & (1 << 26) != 0;

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

    let disabled = !has_tsc || !(has_rdtscp || has_lfence) || tsc_disabled_by_prctl();
    // Only a counter that can be read is timed.
    let use_alt = !disabled
        && use_lfence(
            has_rdtscp,
            has_lfence,
            lfence_serialises(max_ext),
            ordered_alt_is_cheaper,
        );
    Probe {
        counter: Some("TSC (RDTSC)"),
        invariant,
        freq,
        ordered_read: "RDTSCP",
        ordered_read_alt: "LFENCE;RDTSC",
        use_alt,
        hypervisor,
        disabled,
    }
}

/// Whether the ordered read is `LFENCE; RDTSC` rather than `RDTSCP`: where
/// `RDTSCP` is missing, and where the CPU says `LFENCE` is
/// dispatch-serialising and `cheaper()` says it costs less (see the module
/// docs).
fn use_lfence(has_rdtscp: bool, has_lfence: bool, serialises: bool, cheaper: fn() -> bool) -> bool {
    has_lfence && (!has_rdtscp || (serialises && cheaper()))
}

/// Whether the CPU documents `LFENCE` as dispatch-serialising: every Intel
/// CPU; AMD and Hygon CPUs that set CPUID 8000_0021h:EAX[2]. (Older AMD
/// parts serialise it only when the kernel sets an MSR bit, which user
/// space cannot see: they keep `RDTSCP`.)
fn lfence_serialises(max_ext: u32) -> bool {
    let v = cpuid(0);
    let mut vendor = [0u8; 12];
    vendor[0..4].copy_from_slice(&v.ebx.to_le_bytes());
    vendor[4..8].copy_from_slice(&v.edx.to_le_bytes());
    vendor[8..12].copy_from_slice(&v.ecx.to_le_bytes());
    match &vendor {
        b"GenuineIntel" => true,
        b"AuthenticAMD" | b"HygonGenuine" => {
            max_ext >= 0x8000_0021 && cpuid(0x8000_0021).eax & (1 << 2) != 0
        }
        _ => false,
    }
}

/// Whether `LFENCE; RDTSC` costs less than `RDTSCP` on this core: the
/// fastest of three batches of 32 calls of each, timed with the counter
/// (a few microseconds, once, at detection). Only called once detection
/// knows both instructions exist and the counter can be read.
fn ordered_alt_is_cheaper() -> bool {
    const CALLS: usize = 32;
    let (mut rdtscp, mut lfence) = (u64::MAX, u64::MAX);
    for _ in 0..3 {
        let t0 = ticks_ordered(true);
        for _ in 0..CALLS {
            core::hint::black_box(ticks_ordered(false));
        }
        let t1 = ticks_ordered(true);
        for _ in 0..CALLS {
            core::hint::black_box(ticks_ordered(true));
        }
        let t2 = ticks_ordered(true);
        rdtscp = rdtscp.min(t1.wrapping_sub(t0));
        lfence = lfence.min(t2.wrapping_sub(t1));
    }
    lfence < rdtscp
}

/// macOS and FreeBSD publish the TSC frequency they measured at boot
/// (`machdep.tsc.frequency`, `machdep.tsc_freq`; both 64-bit).
#[cfg(any(target_os = "macos", target_os = "freebsd"))]
fn kernel_tsc_frequency() -> Option<u64> {
    #[cfg(target_os = "macos")]
    let name = c"machdep.tsc.frequency";
    #[cfg(target_os = "freebsd")]
    let name = c"machdep.tsc_freq";
    let mut hz: u64 = 0;
    let mut len = core::mem::size_of::<u64>();
    // SAFETY: the name is NUL-terminated; `hz` and `len` are valid and
    // describe an 8-byte buffer; no new value is set.
    let rc = unsafe {
        libc::sysctlbyname(
            name.as_ptr(),
            (&mut hz as *mut u64).cast(),
            &mut len,
            core::ptr::null_mut(),
            0,
        )
    };
    (rc == 0 && len == 8 && hz != 0).then_some(hz)
}

#[cfg(not(any(target_os = "macos", target_os = "freebsd")))]
fn kernel_tsc_frequency() -> Option<u64> {
    None
}

/// Linux lets a process make RDTSC fault (`prctl(PR_SET_TSC, PR_TSC_SIGSEGV)`,
/// used by some sandboxes and record/replay tools); the counter is then unusable.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn tsc_disabled_by_prctl() -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lfence_only_where_it_serialises_or_rdtscp_is_missing() {
        fn yes() -> bool {
            true
        }
        fn no() -> bool {
            false
        }
        // RDTSCP missing: LFENCE;RDTSC whenever LFENCE exists.
        assert!(use_lfence(false, true, false, no));
        assert!(!use_lfence(false, false, false, yes));
        // Both present: LFENCE only if it serialises AND is cheaper.
        assert!(use_lfence(true, true, true, yes));
        assert!(!use_lfence(true, true, true, no));
        assert!(!use_lfence(true, true, false, yes));
        assert!(!use_lfence(true, false, true, yes));
    }

    /// On this machine: the probe's choice follows the rule (LFENCE;RDTSC
    /// only where RDTSCP is missing or the CPU says LFENCE serialises), and
    /// both reads run and are ordered against each other.
    #[test]
    fn the_probe_follows_the_rule_here() {
        let p = probe();
        if p.disabled {
            return;
        }
        let max_ext = cpuid(0x8000_0000).eax;
        let has_rdtscp = max_ext >= 0x8000_0001 && cpuid(0x8000_0001).edx & (1 << 27) != 0;
        if p.use_alt && has_rdtscp {
            assert!(
                lfence_serialises(max_ext),
                "LFENCE;RDTSC chosen where LFENCE may not serialise"
            );
        }
        if has_rdtscp {
            // It times RDTSCP, which faults where a hypervisor hides it.
            let _ = ordered_alt_is_cheaper();
        }
        let (a, b) = (ticks_ordered(p.use_alt), ticks_ordered(p.use_alt));
        assert!(b >= a);
    }
}
