//! Deciding, once per process, which source the precise clocks read, and
//! telling the caller why.
//!
//! The counter is used when the hardware has one, it ticks at a constant rate
//! (x86: the invariant-TSC bit), reading it does not fault in this process,
//! and, on Linux x86, the kernel itself chose the TSC as its clocksource. The
//! last test matters most: at boot the kernel checks that the TSCs of all
//! CPUs agree and keeps watching them; when it finds them unreliable (an old
//! CPU, a VM migrated between hosts, a broken BIOS) it switches to another
//! clocksource. Following its verdict means fastnow never trusts a counter
//! the kernel distrusts. Everything else falls back to the OS clock, and
//! [`clock_info`] says which rule decided.
//!
//! The `FASTNOW_CLOCK` environment variable (read once, with the `std`
//! feature) overrides the decision: `counter` uses the counter whenever the
//! hardware has a readable one, skipping the invariance and clocksource
//! checks; `os` always uses the OS clock. Any other non-empty value is
//! ignored and reported as [`EnvOverride::Invalid`]; the library never prints.

use crate::arch::{self, Probe};
use crate::{calibrate, precise};
use core::cell::UnsafeCell;
use core::fmt;
use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicU8, Ordering};
use core::time::Duration;

/// Which clock the precise tier reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// The architectural counter (`RDTSC`, `CNTVCT_EL0`), converted with a
    /// calibrated fixed-point scale.
    Counter,
    /// The operating system's monotonic clock (`CLOCK_MONOTONIC`); ticks are
    /// nanoseconds.
    Os,
}

/// How the frequency in use was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FreqOrigin {
    /// CPUID leaf 0x15 (TSC/crystal ratio and crystal frequency).
    Cpuid,
    /// The hypervisor's timing leaf (CPUID 0x40000010).
    Hypervisor,
    /// The architecture's frequency register (`CNTFRQ_EL0`).
    ArchRegister,
    /// Measured against `CLOCK_MONOTONIC` over [`ClockInfo::calibration_baseline`].
    Measured,
    /// The OS clock counts nanoseconds; nothing to calibrate.
    Os,
    /// The counter will be calibrated at the first conversion (nothing has
    /// needed one yet).
    Pending,
}

/// Why the OS clock is used instead of the counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fallback {
    /// This target has no counter backend.
    NoCounter,
    /// The counter's rate changes with CPU frequency or sleep states.
    NotInvariant,
    /// The kernel's current clocksource is not the counter: it found the
    /// counter unreliable, or was configured otherwise.
    KernelClocksource(Clocksource),
    /// Reading the counter would fault in this process (x86:
    /// `prctl(PR_SET_TSC, PR_TSC_SIGSEGV)`), or it is not set up (aarch64:
    /// `CNTFRQ_EL0` is zero).
    Disabled,
    /// The counter did not advance between two reads during detection.
    Stalled,
    /// `FASTNOW_CLOCK=os`.
    Forced,
}

/// What `FASTNOW_CLOCK` said.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EnvOverride {
    /// Not set, empty, or not read (built without `std`).
    Unset,
    /// `FASTNOW_CLOCK=counter`: use the counter whenever one is readable.
    Counter,
    /// `FASTNOW_CLOCK=os`: always use the OS clock.
    Os,
    /// Any other value: ignored; the automatic decision stands.
    Invalid,
}

impl EnvOverride {
    /// Interprets a `FASTNOW_CLOCK` value (surrounding white space and case ignored).
    pub fn parse(value: &[u8]) -> EnvOverride {
        let v = value.trim_ascii();
        if v.is_empty() {
            EnvOverride::Unset
        } else if v.eq_ignore_ascii_case(b"counter") {
            EnvOverride::Counter
        } else if v.eq_ignore_ascii_case(b"os") {
            EnvOverride::Os
        } else {
            EnvOverride::Invalid
        }
    }
}

/// Which strategy [`MonotonicInstant`](crate::MonotonicInstant) uses now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MonotonicMode {
    /// A bare counter read raised to a shared high-water mark (one atomic
    /// compare-and-swap). Chosen at start where it is the cheaper strategy
    /// (cores whose compare-and-swap overlaps the counter read, such as AMD
    /// Zen).
    HighWater,
    /// An ordered counter read (or the OS clock); no shared writes, so it
    /// scales to any number of threads. Chosen at start where it is the
    /// cheaper strategy (Intel cores), and for good once the high-water mark
    /// is seen contended.
    Ordered,
}

/// The name of a Linux clocksource, as read from sysfs (at most 24 bytes).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Clocksource {
    bytes: [u8; 24],
    len: u8,
}

impl Clocksource {
    /// Builds a name from raw bytes (trailing white space dropped, truncated to 24 bytes).
    pub fn new(raw: &[u8]) -> Clocksource {
        let raw = raw.trim_ascii();
        let len = raw.len().min(24);
        let mut bytes = [0u8; 24];
        bytes[..len].copy_from_slice(&raw[..len]);
        Clocksource {
            bytes,
            len: len as u8,
        }
    }

    /// The name, e.g. `"tsc"`, `"kvm-clock"`, `"hpet"`.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or("?")
    }
}

impl fmt::Debug for Clocksource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Clocksource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fallback::NoCounter => f.write_str("this target has no counter backend"),
            Fallback::NotInvariant => {
                f.write_str("the counter is not invariant (its rate follows CPU frequency)")
            }
            Fallback::KernelClocksource(cs) => write!(
                f,
                "the kernel's clocksource is {cs}, not the counter (set FASTNOW_CLOCK=counter to override)"
            ),
            Fallback::Disabled => f.write_str("the counter cannot be read in this process"),
            Fallback::Stalled => f.write_str("the counter did not advance"),
            Fallback::Forced => f.write_str("FASTNOW_CLOCK=os"),
        }
    }
}

/// Everything fastnow decided about the precise clocks, for logs and reports.
///
/// ```
/// let info = fastnow::clock_info();
/// println!("{info}");
/// if let Some(why) = info.fallback {
///     eprintln!("fastnow uses the OS clock: {why}");
/// }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ClockInfo {
    /// The source the precise clocks read.
    pub source: Source,
    /// The hardware counter's name, if the target has one (even when unused).
    pub counter: Option<&'static str>,
    /// The instruction sequence behind `OrderedInstant` (and ordered
    /// `MonotonicInstant` reads) when the counter is in use.
    pub ordered_read: &'static str,
    /// Ticks per second in use for conversions (1e9 for the OS clock; 0
    /// while calibration is pending).
    pub freq_hz: u64,
    /// How `freq_hz` was obtained.
    pub freq_origin: FreqOrigin,
    /// The frequency the hardware published, if any (before refinement).
    pub published_freq_hz: Option<u64>,
    /// The interval of `CLOCK_MONOTONIC` that `freq_hz` was measured over
    /// (zero unless `freq_origin` is `Measured`).
    pub calibration_baseline: Duration,
    /// Time spent waiting during the first calibration (zero when the
    /// first conversion came late enough, or the frequency was published).
    pub calibration_time: Duration,
    /// How many times the frequency was refined since start-up.
    pub refinements: u32,
    /// Why the OS clock is used, when it is.
    pub fallback: Option<Fallback>,
    /// What `FASTNOW_CLOCK` said.
    pub env_override: EnvOverride,
    /// The kernel's current clocksource (Linux with `std` only).
    pub kernel_clocksource: Option<Clocksource>,
    /// Whether the counter is invariant.
    pub invariant: bool,
    /// The current `MonotonicInstant` strategy.
    pub monotonic_mode: MonotonicMode,
    hypervisor: Option<[u8; 12]>,
}

impl ClockInfo {
    /// The hypervisor's vendor signature (e.g. `"KVMKVMKVM"`), when it reports one.
    pub fn hypervisor(&self) -> Option<&str> {
        let sig = self.hypervisor.as_ref()?;
        let end = sig.iter().position(|&b| b == 0).unwrap_or(sig.len());
        core::str::from_utf8(&sig[..end]).ok()
    }
}

impl fmt::Display for ClockInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.source {
            Source::Counter => write!(
                f,
                "counter {} at {} Hz ({:?}",
                self.counter.unwrap_or("?"),
                self.freq_hz,
                self.freq_origin
            )?,
            Source::Os => write!(f, "OS clock (CLOCK_MONOTONIC")?,
        }
        if self.calibration_baseline > Duration::ZERO {
            write!(f, " over {:?}", self.calibration_baseline)?;
        }
        f.write_str(")")?;
        if let Some(why) = self.fallback {
            write!(f, "; fallback: {why}")?;
        }
        if self.env_override == EnvOverride::Invalid {
            f.write_str("; FASTNOW_CLOCK ignored (valid values: counter, os)")?;
        }
        Ok(())
    }
}

/// The outcome of detection: immutable once published.
#[derive(Clone, Copy)]
pub(crate) struct Decision {
    pub probe: Probe,
    pub clocksource: Option<Clocksource>,
    pub env: EnvOverride,
    pub fallback: Option<Fallback>,
}

/// Decides the source from what was observed. Pure, so every rule is tested.
pub(crate) fn decide(
    probe: &Probe,
    clocksource: Option<Clocksource>,
    env: EnvOverride,
) -> Option<Fallback> {
    if env == EnvOverride::Os {
        return Some(Fallback::Forced);
    }
    if probe.counter.is_none() {
        return Some(Fallback::NoCounter);
    }
    if probe.disabled {
        return Some(Fallback::Disabled);
    }
    if env == EnvOverride::Counter {
        return None;
    }
    if !probe.invariant {
        return Some(Fallback::NotInvariant);
    }
    if let (Some(cs), Some(expected)) = (clocksource, KERNEL_NAME_OF_COUNTER) {
        if cs.as_str() != expected {
            return Some(Fallback::KernelClocksource(cs));
        }
    }
    None
}

/// The kernel's name for the counter when it uses it as the clocksource.
/// aarch64 is not checked: its counter is architecturally shared by all cores,
/// and under qemu-user sysfs describes the host, not the emulated machine.
#[cfg(target_arch = "x86_64")]
const KERNEL_NAME_OF_COUNTER: Option<&str> = Some("tsc");
#[cfg(not(target_arch = "x86_64"))]
const KERNEL_NAME_OF_COUNTER: Option<&str> = None;

// Detection state. The precise tier's hot path reads only `STATE`.
pub(crate) const UNDECIDED: u8 = 0;
const DECIDING: u8 = 1;
/// The counter, ordered reads with the backend's first instruction.
pub(crate) const COUNTER: u8 = 2;
/// The counter, ordered reads with the backend's alternative instruction.
pub(crate) const COUNTER_ALT: u8 = 3;
pub(crate) const OS: u8 = 4;

pub(crate) static STATE: AtomicU8 = AtomicU8::new(UNDECIDED);

struct DecisionCell(UnsafeCell<MaybeUninit<Decision>>);
// SAFETY: the cell is written exactly once, by the thread that moved STATE
// from UNDECIDED to DECIDING, before it publishes a final state with Release;
// it is read only after an Acquire load of STATE saw a final state. So every
// read happens after the write and no write races with a read.
unsafe impl Sync for DecisionCell {}
static DECISION: DecisionCell = DecisionCell(UnsafeCell::new(MaybeUninit::uninit()));

/// Runs detection if no thread has; returns the final state.
#[cold]
#[inline(never)]
pub(crate) fn ensure_decided() -> u8 {
    loop {
        match STATE.compare_exchange(UNDECIDED, DECIDING, Ordering::Acquire, Ordering::Acquire) {
            Ok(_) => return run_detection(),
            Err(DECIDING) => crate::calibrate::pause(),
            Err(state) => return state,
        }
    }
}

fn run_detection() -> u8 {
    let probe = arch::probe();
    let clocksource = read_clocksource();
    let env = read_env();
    let mut fallback = decide(&probe, clocksource, env);
    if fallback.is_none() && !counter_advances() {
        fallback = Some(Fallback::Stalled);
    }
    let decision = Decision {
        probe,
        clocksource,
        env,
        fallback,
    };
    // SAFETY: this thread won the UNDECIDED -> DECIDING exchange, so it is the
    // only writer, and no reader looks before the Release store below.
    unsafe { (*DECISION.0.get()).write(decision) };
    let state = match fallback {
        Some(_) => OS,
        None if probe.use_alt => COUNTER_ALT,
        None => COUNTER,
    };
    calibrate::start(&decision, state);
    precise::start(state);
    STATE.store(state, Ordering::Release);
    state
}

/// A counter that never moves (a broken hypervisor, a frozen emulator) would
/// give Instants that never advance; check it ticks across a few OS clock reads.
fn counter_advances() -> bool {
    let first = arch::ticks();
    for _ in 0..64 {
        let _ = crate::os::monotonic_nanos();
        if arch::ticks() != first {
            return true;
        }
    }
    false
}

/// The published decision; runs detection first if needed.
pub(crate) fn decision() -> &'static Decision {
    if STATE.load(Ordering::Acquire) <= DECIDING {
        ensure_decided();
    }
    // Re-load with Acquire so this thread synchronises with the writer even
    // when `ensure_decided` returned because another thread finished first.
    debug_assert!(STATE.load(Ordering::Acquire) > DECIDING);
    // SAFETY: STATE is final (loaded with Acquire above), so the cell was
    // written and the write happens-before this read.
    unsafe { (*DECISION.0.get()).assume_init_ref() }
}

/// A snapshot of the precise tier's configuration and calibration.
///
/// Runs detection if nothing has read the clock yet. Cheap (a few atomic
/// loads), but not meant for the hot path.
pub fn clock_info() -> ClockInfo {
    let d = decision();
    let counter = d.fallback.is_none();
    let cal = calibrate::snapshot();
    ClockInfo {
        source: if counter { Source::Counter } else { Source::Os },
        counter: d.probe.counter,
        ordered_read: if !counter {
            "clock_gettime(CLOCK_MONOTONIC)"
        } else if d.probe.use_alt {
            d.probe.ordered_read_alt
        } else {
            d.probe.ordered_read
        },
        freq_hz: cal.freq_hz,
        freq_origin: cal.origin,
        published_freq_hz: d.probe.freq.map(|(hz, _)| hz),
        calibration_baseline: Duration::from_nanos(cal.baseline_ns),
        calibration_time: Duration::from_nanos(cal.init_wait_ns),
        refinements: cal.refinements,
        fallback: d.fallback,
        env_override: d.env,
        kernel_clocksource: d.clocksource,
        invariant: d.probe.invariant,
        monotonic_mode: precise::monotonic_mode(),
        hypervisor: d.probe.hypervisor,
    }
}

#[cfg(feature = "std")]
fn read_env() -> EnvOverride {
    match std::env::var_os("FASTNOW_CLOCK") {
        Some(v) => EnvOverride::parse(v.as_encoded_bytes()),
        None => EnvOverride::Unset,
    }
}

#[cfg(not(feature = "std"))]
fn read_env() -> EnvOverride {
    EnvOverride::Unset
}

#[cfg(all(feature = "std", any(target_os = "linux", target_os = "android")))]
fn read_clocksource() -> Option<Clocksource> {
    std::fs::read("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .ok()
        .map(|raw| Clocksource::new(&raw))
}

#[cfg(not(all(feature = "std", any(target_os = "linux", target_os = "android"))))]
fn read_clocksource() -> Option<Clocksource> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(invariant: bool, disabled: bool) -> Probe {
        Probe {
            counter: Some("test counter"),
            invariant,
            freq: None,
            ordered_read: "A",
            ordered_read_alt: "B",
            use_alt: false,
            hypervisor: None,
            disabled,
        }
    }

    fn cs(name: &str) -> Option<Clocksource> {
        Some(Clocksource::new(name.as_bytes()))
    }

    #[test]
    fn env_values_parse() {
        assert_eq!(EnvOverride::parse(b""), EnvOverride::Unset);
        assert_eq!(EnvOverride::parse(b"  "), EnvOverride::Unset);
        assert_eq!(EnvOverride::parse(b"counter"), EnvOverride::Counter);
        assert_eq!(EnvOverride::parse(b" Counter\n"), EnvOverride::Counter);
        assert_eq!(EnvOverride::parse(b"OS"), EnvOverride::Os);
        assert_eq!(EnvOverride::parse(b"tsc"), EnvOverride::Invalid);
        assert_eq!(EnvOverride::parse(b"os2"), EnvOverride::Invalid);
    }

    #[test]
    fn rules_in_order() {
        let good = probe(true, false);
        let expected_cs = KERNEL_NAME_OF_COUNTER.unwrap_or("anything");
        assert_eq!(decide(&good, cs(expected_cs), EnvOverride::Unset), None);
        assert_eq!(decide(&good, None, EnvOverride::Unset), None);
        assert_eq!(decide(&good, None, EnvOverride::Invalid), None);
        assert_eq!(decide(&good, None, EnvOverride::Os), Some(Fallback::Forced));
        assert_eq!(
            decide(&probe(false, false), None, EnvOverride::Unset),
            Some(Fallback::NotInvariant)
        );
        assert_eq!(
            decide(&probe(false, false), None, EnvOverride::Counter),
            None
        );
        assert_eq!(
            decide(&probe(true, true), None, EnvOverride::Counter),
            Some(Fallback::Disabled)
        );
        let mut none = good;
        none.counter = None;
        assert_eq!(
            decide(&none, None, EnvOverride::Counter),
            Some(Fallback::NoCounter)
        );
        if KERNEL_NAME_OF_COUNTER.is_some() {
            assert_eq!(
                decide(&good, cs("kvm-clock\n"), EnvOverride::Unset),
                Some(Fallback::KernelClocksource(Clocksource::new(b"kvm-clock")))
            );
            assert_eq!(decide(&good, cs("hpet"), EnvOverride::Counter), None);
        }
    }

    #[test]
    fn clocksource_name_is_trimmed_and_bounded() {
        assert_eq!(Clocksource::new(b"tsc\n").as_str(), "tsc");
        let long = Clocksource::new(b"a-very-long-clocksource-name-indeed");
        assert_eq!(long.as_str().len(), 24);
    }
}
