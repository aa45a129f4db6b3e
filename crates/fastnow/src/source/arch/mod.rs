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
//! counter; everything above this module then uses the OS clock. Windows
//! on Arm is one of them (its OS clock is the performance counter), and so
//! are the 32-bit Arm targets below ARMv7 (no generic timer, and no `ISB`
//! to order it with; the `v7` target feature tells them apart; `build.rs` sets
//! `fastnow_arm_v7` from the target name, as stable compilers do not
//! report Arm target features).

/// Declares each backend's module and re-exports its three reads under the
/// one `cfg` that selects it, and `none` under the negation of them all:
/// the dispatch is written once.
macro_rules! backends {
    ($(#[cfg($($c:tt)*)] $name:ident;)*) => {
        $(
            #[cfg($($c)*)]
            mod $name;
            #[cfg($($c)*)]
            pub(crate) use self::$name::{probe, ticks, ticks_ordered};
        )*
        #[cfg(not(any($(all($($c)*)),*)))]
        mod none;
        #[cfg(not(any($(all($($c)*)),*)))]
        pub(crate) use self::none::{probe, ticks, ticks_ordered};
    };
}

backends! {
    #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
    x86;
    #[cfg(all(target_arch = "aarch64", not(windows)))]
    aarch64;
    #[cfg(all(
        target_arch = "arm",
        any(target_feature = "v7", fastnow_arm_v7),
        any(target_os = "linux", target_os = "android")
    ))]
    arm;
    #[cfg(all(target_arch = "riscv64", any(target_os = "linux", target_os = "android")))]
    riscv64;
    #[cfg(all(target_arch = "loongarch64", any(target_os = "linux", target_os = "android")))]
    loongarch64;
    #[cfg(all(target_arch = "powerpc64", any(target_os = "linux", target_os = "android")))]
    powerpc64;
    #[cfg(all(target_arch = "s390x", any(target_os = "linux", target_os = "android")))]
    s390x;
}

/// Whether `ticks()` would fault on the calling thread (the TSC mode is
/// per thread): for the perf route, which reads the counter without the
/// timekeeper's detection.
#[cfg(all(
    feature = "std",
    any(target_os = "linux", target_os = "android"),
    target_arch = "x86_64"
))]
pub(crate) use self::x86::tsc_disabled_by_prctl as ticks_fault;

use core::sync::atomic::AtomicBool;

/// Whether `ticks_ordered_auto` uses the backend's second ordering
/// instruction; set by detection before the counter is first used. Only
/// x86_64 has a second one (`LFENCE; RDTSC` where `RDTSCP` is missing):
/// elsewhere the ordered read never loads this.
pub(crate) static ORDERED_ALT: AtomicBool = AtomicBool::new(false);

/// The ordered read detection chose.
#[inline(always)]
pub(crate) fn ticks_ordered_auto() -> u64 {
    #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
    let alt = ORDERED_ALT.load(core::sync::atomic::Ordering::Relaxed);
    #[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
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
    /// The architecture's frequency register (`CNTFRQ_EL0`, 32-bit Arm's
    /// `CNTFRQ`; LoongArch's CPUCFG words 4 and 5), or a rate the
    /// architecture fixes (s390x: the TOD clock's 4096 units per µs).
    ArchRegister,
    /// The device tree's `timebase-frequency` (riscv64).
    DeviceTree,
    /// The operating system's kernel (macOS: `machdep.tsc.frequency`;
    /// FreeBSD: `machdep.tsc_freq`; Linux on Power: `/proc/cpuinfo`'s
    /// `timebase`).
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
    /// power-state changes (x86: CPUID.80000007H:EDX[8]; the others: always).
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
