//! What fastnow decided about the precise clocks, and why: [`ClockInfo`],
//! [`clock_info`], and [`recalibrate`], which restarts the measurement.

use crate::precise::{self, MonotonicMode};
use crate::source::arch::{FreqOrigin, Probe};
use crate::source::detect::{Clocksource, EnvOverride, Fallback, Source};
use crate::source::thread_cpu::{ThreadCpuFallback, ThreadCpuSource};
use crate::timekeeper::state::MODE_COUNTER;
use crate::timekeeper::{Clocks, Timekeeper, TK};
use crate::wall::UnixTime;
use core::fmt;
use core::sync::atomic::Ordering;
use core::time::Duration;

/// Re-measures the counter's rate over a fresh window, now, and returns the
/// updated [`ClockInfo`].
///
/// fastnow measures the rate continuously (over the most recent second, see
/// the crate docs), so most programs never need this. Call it after an event
/// that may have changed the counter's relation to the kernel clock, such as
/// a resume from suspend or a live migration: it restarts the measurement
/// with a one-millisecond window (taking about a millisecond, without
/// holding anything readers wait for) and then lets windows grow again.
/// With the OS clock it does nothing. Not async-signal-safe.
pub fn recalibrate() -> ClockInfo {
    TK.recalibrate();
    clock_info()
}

/// A snapshot of the precise tier's configuration and calibration.
///
/// Runs detection if nothing has read the clock yet, and finishes the first
/// calibration if the process is younger than a millisecond (waiting out the
/// rest of it), so what it reports is the rate in use. Otherwise cheap (a
/// lock and a copy), but not meant for the hot path, and not
/// async-signal-safe.
pub fn clock_info() -> ClockInfo {
    TK.info()
}

impl<C: Clocks> Timekeeper<C> {
    /// What [`clock_info`] reports.
    pub(crate) fn info(&self) -> ClockInfo {
        let k = self.keeper();
        let d = k.decision.expect("published implies decided");
        let counter = d.fallback.is_none();
        let probe: Probe = d.probe;
        let (thread_cpu, thread_cpu_fallback) = crate::thread_cpu::route();
        ClockInfo {
            source: if counter { Source::Counter } else { Source::Os },
            counter: probe.counter,
            ordered_read: if !counter {
                crate::source::os::MONOTONIC_CLOCK
            } else if probe.use_alt {
                probe.ordered_read_alt
            } else {
                probe.ordered_read
            },
            freq_hz: match (k.state.mode, counter) {
                (MODE_COUNTER, _) => k.state.line.freq_hz(),
                (_, false) => 1_000_000_000,
                _ => 0,
            },
            freq_origin: k.origin,
            published_freq_hz: probe.freq.map(|(hz, _)| hz),
            calibration_baseline: Duration::from_nanos(if k.origin == FreqOrigin::Measured {
                k.window_ns
            } else {
                0
            }),
            calibration_time: Duration::from_nanos(
                k.counter_since_mono
                    .map_or(0, |at| at.saturating_sub(k.first_mono)),
            ),
            refinements: k.refinements,
            fallback: d.fallback,
            demoted_at: k.demoted_at.map(UnixTime::from_nanos),
            env_override: d.env,
            kernel_clocksource: d.clocksource,
            invariant: probe.invariant,
            monotonic_mode: precise::monotonic_mode(),
            upkeep: self.upkeep.load(Ordering::Relaxed),
            hypervisor: probe.hypervisor,
            thread_cpu,
            thread_cpu_fallback,
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
#[derive(Clone, Copy)]
pub struct ClockInfo {
    /// The source the precise clocks read (during a process's first
    /// millisecond the counter is chosen but not yet in use: see
    /// [`FreqOrigin::Pending`]).
    pub source: Source,
    /// The hardware counter's name, if the target has one (even when unused).
    pub counter: Option<&'static str>,
    /// The instruction sequence behind `OrderedInstant` (and ordered
    /// `MonotonicInstant` reads) when the counter is in use; on the OS
    /// source, the OS clock every precise reading calls
    /// (`clock_gettime(CLOCK_MONOTONIC)`, `QueryPerformanceCounter`, ...).
    pub ordered_read: &'static str,
    /// Ticks per second in use for conversions (1e9 for the OS clock, 0
    /// while the counter's rate is pending).
    pub freq_hz: u64,
    /// How `freq_hz` was obtained.
    pub freq_origin: FreqOrigin,
    /// The frequency the hardware published, if any.
    pub published_freq_hz: Option<u64>,
    /// The window of `CLOCK_MONOTONIC` the rate in use was measured over
    /// (zero unless `freq_origin` is `Measured`; a second once the process
    /// has run a second).
    pub calibration_baseline: Duration,
    /// How long the process read the OS clock before the counter took over
    /// (the warm-up: about a millisecond, or more when nothing read the
    /// clock in between, since the switch happens at a reading).
    pub calibration_time: Duration,
    /// How many times the rate was measured since start-up.
    pub refinements: u32,
    /// Why the OS clock is used, when it is.
    pub fallback: Option<Fallback>,
    /// When the kernel's change of mind moved the clocks from the counter to
    /// the OS clock at run time (`None` if that did not happen).
    pub demoted_at: Option<UnixTime>,
    /// What `FASTNOW_CLOCK` said.
    pub env_override: EnvOverride,
    /// The kernel's clocksource at the last check (x86_64 Linux; on x86_64
    /// Windows `"tsc"` when `QueryPerformanceFrequency` is 10 MHz, else
    /// `"qpc-<Hz>"`).
    pub kernel_clocksource: Option<Clocksource>,
    /// Whether the counter is invariant.
    pub invariant: bool,
    /// The current `MonotonicInstant` strategy.
    pub monotonic_mode: MonotonicMode,
    /// Whether the upkeep thread does the state updates (readers then only load).
    pub upkeep: bool,
    hypervisor: Option<[u8; 12]>,
    /// Where [`ThreadCpuInstant`](crate::ThreadCpuInstant) reads the
    /// calling thread's CPU time (the thread that asked; decided by a first
    /// reading if it had not read it yet).
    pub thread_cpu: ThreadCpuSource,
    /// Why the calling thread's CPU time does not come from the perf page,
    /// where the target has that route (Linux x86_64 and aarch64 with
    /// `std`); `None` where it does, or where the target has no such route.
    pub thread_cpu_fallback: Option<ThreadCpuFallback>,
}

impl ClockInfo {
    /// The hypervisor's vendor signature (e.g. `"KVMKVMKVM"`), when it reports one.
    pub fn hypervisor(&self) -> Option<&str> {
        let sig = self.hypervisor.as_ref()?;
        let end = sig.iter().position(|&b| b == 0).unwrap_or(sig.len());
        core::str::from_utf8(&sig[..end]).ok()
    }
}

impl fmt::Debug for ClockInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClockInfo")
            .field("source", &self.source)
            .field("counter", &self.counter)
            .field("ordered_read", &self.ordered_read)
            .field("freq_hz", &self.freq_hz)
            .field("freq_origin", &self.freq_origin)
            .field("published_freq_hz", &self.published_freq_hz)
            .field("calibration_baseline", &self.calibration_baseline)
            .field("calibration_time", &self.calibration_time)
            .field("refinements", &self.refinements)
            .field("fallback", &self.fallback)
            .field("demoted_at", &self.demoted_at)
            .field("env_override", &self.env_override)
            .field("kernel_clocksource", &self.kernel_clocksource)
            .field("invariant", &self.invariant)
            .field("monotonic_mode", &self.monotonic_mode)
            .field("upkeep", &self.upkeep)
            .field("hypervisor", &self.hypervisor())
            .field("thread_cpu", &self.thread_cpu)
            .field("thread_cpu_fallback", &self.thread_cpu_fallback)
            .finish()
    }
}

impl fmt::Display for ClockInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.source, self.freq_origin) {
            (Source::Counter, FreqOrigin::Pending) => write!(
                f,
                "counter {} (being calibrated; OS clock meanwhile",
                self.counter.unwrap_or("?")
            )?,
            (Source::Counter, _) => write!(
                f,
                "counter {} at {} Hz ({:?}",
                self.counter.unwrap_or("?"),
                self.freq_hz,
                self.freq_origin
            )?,
            (Source::Os, _) => write!(f, "OS clock (CLOCK_MONOTONIC")?,
        }
        if self.calibration_baseline > Duration::ZERO {
            write!(f, " over {:?}", self.calibration_baseline)?;
        }
        f.write_str(")")?;
        if let Some(why) = self.fallback {
            write!(f, "; fallback: {why}")?;
        }
        if let Some(at) = self.demoted_at {
            write!(f, " (since {at})")?;
        }
        if let Some(hv) = self.hypervisor() {
            write!(f, "; hypervisor {hv}")?;
        }
        if self.env_override == EnvOverride::Invalid {
            f.write_str("; FASTNOW_CLOCK ignored (valid values: counter, os)")?;
        }
        Ok(())
    }
}
