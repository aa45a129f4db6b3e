//! riscv64: the `time` CSR, read with `RDTIME`.
//!
//! The Zicntr `time` counter is the platform's real-time clock: one counter
//! that every hart sees, ticking at a constant rate (the device tree's
//! `timebase-frequency`). Linux lets user space read it. Like the Arm
//! counter there is nothing to verify about synchronisation between harts,
//! so the kernel's clocksource is not checked.
//!
//! Ordering comes from the ISA's rule for CSRs (Zicsr, "CSR access
//! ordering"): CSR accesses are not ordered with memory accesses, except by
//! syntactic dependencies and by `FENCE`, for which a CSR read counts as
//! *device input* (I). So `FENCE R, I` before `RDTIME` makes the read wait
//! for every earlier load; and a load whose address depends on the value
//! (as on aarch64, see `aarch64.rs`) makes every later barrier — a release
//! store's `FENCE RW, W` — wait for the read too. (Linux's vDSO uses no fence
//! at all: on the first RISC-V systems `RDTIME` trapped into firmware, a full
//! serialisation; with a hardware `time` CSR that no longer holds.)

use super::{FreqOrigin, Probe};
use crate::source::os;
use core::arch::asm;

/// The bare counter read.
#[inline(always)]
pub(crate) fn ticks() -> u64 {
    let t: u64;
    // SAFETY: RDTIME (CSRRS rd, time, x0) is unprivileged when the kernel
    // enables it for user space (Linux does); it only writes `t`.
    unsafe { asm!("rdtime {t}", t = out(reg) t, options(nomem, nostack, preserves_flags)) };
    t
}

/// The counter read after every earlier load, and before any later memory
/// access that a barrier orders after earlier loads (see the module docs).
#[inline(always)]
pub(crate) fn ticks_ordered(_alt: bool) -> u64 {
    let t: u64;
    // SAFETY: as in `ticks()`. FENCE has no operands in memory. The
    // dependent load reads 8 bytes at the stack pointer (the XOR of `t` with
    // itself is 0), which is mapped, aligned and readable, into x0
    // (discarded). Not `nomem`: the compiler keeps memory accesses on their
    // side of the block.
    unsafe {
        asm!(
            "fence r, i",
            "rdtime {t}",
            "xor {dep}, {t}, {t}",
            "add {dep}, sp, {dep}",
            "ld x0, 0({dep})",
            t = out(reg) t,
            dep = out(reg) _,
            options(nostack, preserves_flags)
        )
    };
    t
}

/// The `timebase-frequency` the firmware put in the device tree, when Linux
/// exposes it (4 or 8 bytes, big-endian).
#[cfg(unix)]
fn timebase_frequency() -> Option<u64> {
    let mut buf = [0u8; 8];
    let n = os::file::read_once(c"/proc/device-tree/cpus/timebase-frequency", &mut buf);
    let hz = match n? {
        4 => u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) as u64,
        8 => u64::from_be_bytes(buf),
        _ => return None,
    };
    (hz != 0).then_some(hz)
}

#[cfg(not(unix))]
fn timebase_frequency() -> Option<u64> {
    None
}

pub(crate) fn probe() -> Probe {
    Probe {
        counter: Some("time CSR (RDTIME)"),
        invariant: true,
        freq: timebase_frequency().map(|hz| (hz, FreqOrigin::DeviceTree)),
        ordered_read: "FENCE R,I;RDTIME;dependent load",
        ordered_read_alt: "FENCE R,I;RDTIME;dependent load",
        use_alt: false,
        hypervisor: None,
        disabled: false,
    }
}
