//! loongarch64: the Stable Counter, read with `RDTIME.D`.
//!
//! LoongArch has one constant-rate Stable Counter that every core sees and
//! user space may read; its rate is in the CPUCFG configuration words (leaf
//! 4 the base frequency, leaf 5 a multiplier and divisor), when leaf 2 says
//! the constant-frequency timer is there. As on Arm, the kernel's
//! clocksource is not checked.
//!
//! Ordering: the ISA manual does not say how `RDTIME` is ordered against
//! memory accesses, so the ordered read takes the strongest barriers there
//! are. `DBAR 0` waits until every earlier load and store has completed;
//! `IBAR 0` then keeps every later instruction — `RDTIME.D` included — from
//! executing before the instructions ahead of it, the barrier among them,
//! have completed (LoongArch's counterpart of Arm's `ISB`). After the read, a
//! load whose address depends on the value (see `aarch64.rs`) puts the read
//! ahead of every later barrier, so of a release store. Linux's vDSO reads
//! the counter with no barrier at all. Only run under emulation here
//! (qemu-user executes in order), so this reasoning is untested on hardware.

use super::{FreqOrigin, Probe};
use core::arch::asm;

/// The bare counter read.
#[inline(always)]
pub(crate) fn ticks() -> u64 {
    let t: u64;
    // SAFETY: RDTIME.D is unprivileged; it writes the counter to `t` and
    // the counter's ID to the zero register (discarded).
    unsafe {
        asm!("rdtime.d {t}, $zero", t = out(reg) t, options(nomem, nostack, preserves_flags))
    };
    t
}

/// The counter read after every earlier load and store has completed, and
/// before any later access a barrier orders (see the module docs).
#[inline(always)]
pub(crate) fn ticks_ordered(_alt: bool) -> u64 {
    let t: u64;
    // SAFETY: DBAR and IBAR only order; RDTIME.D as in `ticks()`. The
    // dependent load reads 8 bytes at the stack pointer (the XOR of `t` with
    // itself is 0), which is mapped, aligned and readable, into the zero
    // register. Not `nomem`: memory accesses stay on their side of the block.
    unsafe {
        asm!(
            "dbar 0",
            "ibar 0",
            "rdtime.d {t}, $zero",
            "xor {dep}, {t}, {t}",
            "add.d {dep}, $sp, {dep}",
            "ld.d $zero, {dep}, 0",
            t = out(reg) t,
            dep = out(reg) _,
            options(nostack, preserves_flags)
        )
    };
    t
}

fn cpucfg(word: u32) -> u32 {
    let v: u32;
    // SAFETY: CPUCFG is unprivileged; it reads one configuration word into
    // `v`; words not implemented read as 0.
    unsafe {
        asm!("cpucfg {v}, {w}", v = out(reg) v, w = in(reg) word,
            options(nomem, nostack, preserves_flags))
    };
    v
}

/// The Stable Counter's frequency from CPUCFG: base × multiplier / divisor,
/// when word 2's bit 14 (LLFTP, the constant-frequency timer) is set.
fn published_frequency() -> Option<u64> {
    if cpucfg(2) & (1 << 14) == 0 {
        return None;
    }
    let base = cpucfg(4) as u64;
    let word5 = cpucfg(5);
    let (mul, div) = ((word5 & 0xffff) as u64, (word5 >> 16) as u64);
    (base != 0 && mul != 0 && div != 0).then(|| base * mul / div)
}

pub(crate) fn probe() -> Probe {
    Probe {
        counter: Some("Stable Counter (RDTIME.D)"),
        invariant: true,
        freq: published_frequency().map(|hz| (hz, FreqOrigin::ArchRegister)),
        ordered_read: "DBAR 0;IBAR 0;RDTIME.D;dependent load",
        ordered_read_alt: "DBAR 0;IBAR 0;RDTIME.D;dependent load",
        use_alt: false,
        hypervisor: None,
        disabled: false,
    }
}
