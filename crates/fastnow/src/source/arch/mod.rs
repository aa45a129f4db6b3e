//! The architectural counters: one file per architecture, dispatched here.
//!
//! Each backend provides the same small surface:
//!
//! - `ticks()`: the bare counter read, as cheap as the hardware allows and
//!   not ordered with respect to surrounding instructions;
//! - `ticks_ordered(alt)`: the counter read after every preceding load has
//!   completed (`alt` selects the backend's second ordering instruction when
//!   the first is missing);
//! - `probe()`: what the hardware says about the counter (present, invariant,
//!   frequency, hypervisor), run once at detection.
//!
//! Targets without a backend use `none`, which reports that there is no
//! counter; everything above this module then uses the OS clock.

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(all(target_arch = "loongarch64", target_os = "linux"))]
mod loongarch64;
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    all(target_arch = "riscv64", target_os = "linux"),
    all(target_arch = "loongarch64", target_os = "linux"),
)))]
mod none;
#[cfg(all(target_arch = "riscv64", target_os = "linux"))]
mod riscv64;
#[cfg(target_arch = "x86_64")]
mod x86_64;

#[cfg(target_arch = "aarch64")]
pub(crate) use self::aarch64::{probe, ticks, ticks_ordered};
#[cfg(all(target_arch = "loongarch64", target_os = "linux"))]
pub(crate) use self::loongarch64::{probe, ticks, ticks_ordered};
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    all(target_arch = "riscv64", target_os = "linux"),
    all(target_arch = "loongarch64", target_os = "linux"),
)))]
pub(crate) use self::none::{probe, ticks, ticks_ordered};
#[cfg(all(target_arch = "riscv64", target_os = "linux"))]
pub(crate) use self::riscv64::{probe, ticks, ticks_ordered};
#[cfg(target_arch = "x86_64")]
pub(crate) use self::x86_64::{probe, ticks, ticks_ordered};

use core::sync::atomic::AtomicBool;

/// Whether `ticks_ordered_auto` uses the backend's second ordering
/// instruction; set by detection before the counter is first used. Only
/// x86_64 has a second one (`LFENCE; RDTSC` where `RDTSCP` is missing):
/// elsewhere the ordered read never loads this.
pub(crate) static ORDERED_ALT: AtomicBool = AtomicBool::new(false);

/// The ordered read detection chose.
#[inline(always)]
pub(crate) fn ticks_ordered_auto() -> u64 {
    #[cfg(target_arch = "x86_64")]
    let alt = ORDERED_ALT.load(core::sync::atomic::Ordering::Relaxed);
    #[cfg(not(target_arch = "x86_64"))]
    let alt = false;
    ticks_ordered(alt)
}

/// How the frequency in use was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FreqOrigin {
    /// CPUID leaf 0x15 (TSC/crystal ratio and crystal frequency).
    Cpuid,
    /// The hypervisor's timing leaf (CPUID 0x40000010).
    Hypervisor,
    /// The architecture's frequency register (`CNTFRQ_EL0`; LoongArch's
    /// CPUCFG words 4 and 5).
    ArchRegister,
    /// The device tree's `timebase-frequency` (riscv64).
    DeviceTree,
    /// The operating system's kernel (macOS: `machdep.tsc.frequency`).
    Kernel,
    /// Measured against `CLOCK_MONOTONIC` over
    /// [`ClockInfo::calibration_baseline`](crate::ClockInfo::calibration_baseline).
    Measured,
    /// The OS clock counts nanoseconds; nothing to calibrate.
    Os,
    /// The counter is not in use yet: the first millisecond of a process
    /// reads the OS clock while the counter's rate is measured.
    Pending,
}

/// What the hardware reports about its counter; filled once by `probe()`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Probe {
    /// Name of the counter, or `None` when this target has no backend.
    pub counter: Option<&'static str>,
    /// Whether the counter ticks at a constant rate through frequency and
    /// power-state changes (x86: CPUID.80000007H:EDX[8]; aarch64: always).
    pub invariant: bool,
    /// The counter's nominal frequency, when the hardware publishes it.
    pub freq: Option<(u64, FreqOrigin)>,
    /// The ordering instruction `ticks_ordered(false)` / `(true)` uses.
    pub ordered_read: &'static str,
    pub ordered_read_alt: &'static str,
    /// Use the alternative ordering instruction (the first is unavailable).
    pub use_alt: bool,
    /// Hypervisor vendor signature, when running under one that says so.
    pub hypervisor: Option<[u8; 12]>,
    /// The counter exists but reading it would fault in this process.
    pub disabled: bool,
}
