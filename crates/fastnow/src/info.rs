//! What fastnow decided about the precise clocks, and why: [`ClockInfo`],
//! [`clock_info`], and [`recalibrate`], which restarts the measurement.

use crate::precise::{self, MonotonicMode};
use crate::source::arch::{FreqOrigin, Probe};
use crate::source::detect::{Clocksource, EnvOverride, Fallback, Source, VerdictUnavailable};
use crate::source::thread_cpu::{ThreadCpuCosts, ThreadCpuFallback, ThreadCpuSource};
use crate::timekeeper::{self, Report};
use crate::wall::UnixTime;
use core::fmt;
use core::time::Duration;

/// Re-measures the counter's rate over a fresh window, now, and returns the
/// updated [`ClockInfo`].
///
/// fastnow measures the rate continuously (over the most recent second, see
/// the crate docs), and notices on its own when the counter leaves
/// `CLOCK_MONOTONIC`'s line — a resume, a reset, a migration (see
/// [`CounterJump`]) — so most programs never need this. It restarts the
/// measurement with a one-millisecond window (taking about a millisecond,
/// without holding anything readers wait for) and then lets windows grow
/// again: for a program that knows the counter's rate just changed and
/// wants the new one measured at once rather than within the second.
/// With the OS clock it does nothing. Not async-signal-safe.
pub fn recalibrate() -> ClockInfo {
    timekeeper::recalibrate();
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
    ClockInfo::from_report(timekeeper::report())
}

impl ClockInfo {
    /// What [`clock_info`] says of the timekeeper's report.
    pub(crate) fn from_report(r: Report) -> ClockInfo {
        let d = r.decision;
        let counter = d.counter();
        let probe: Probe = d.probe;
        let (thread_cpu, thread_cpu_fallback, thread_cpu_costs) = crate::thread_cpu::route();
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
            freq_hz: r.freq_hz,
            freq_origin: r.origin,
            published_freq_hz: probe.freq.map(|(hz, _)| hz),
            calibration_baseline: Duration::from_nanos(r.window_ns),
            calibration_time: Duration::from_nanos(r.calibration_ns),
            refinements: r.refinements,
            fallback: d.fallback,
            demoted_at: r.demoted_at.map(UnixTime::from_nanos),
            env_override: d.env,
            kernel_clocksource: d.clocksource,
            verdict_unavailable: r.verdict_unavailable,
            invariant: probe.invariant,
            monotonic_mode: precise::monotonic_mode(),
            upkeep: r.upkeep,
            hypervisor: probe.hypervisor,
            thread_cpu,
            thread_cpu_fallback,
            thread_cpu_costs,
            counter_jumps: r.rebases,
            last_counter_jump: r.last_rebase.map(|j| CounterJump {
                at: UnixTime::from_nanos(j.at_unix_nanos),
                ahead_ns: j.counter_ahead_ns,
            }),
        }
    }
}

/// A time the counter left `CLOCK_MONOTONIC`'s line and fastnow re-based
/// the precise clocks onto `CLOCK_MONOTONIC` again (see
/// [`ClockInfo::last_counter_jump`]).
///
/// A counter jumps against the kernel's clock when it counts through a
/// suspend that `CLOCK_MONOTONIC` does not count (an invariant TSC in
/// suspend-to-idle), restarts near zero at a resume (the TSC after
/// suspend-to-RAM on much hardware), or moves to another host's counter (a
/// migrated virtual machine). fastnow's readings never count such a jump
/// and never step back across it: they continue from where
/// `CLOCK_MONOTONIC` says the timeline is, or stand still until it gets
/// there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterJump {
    /// The wall time of the update that found it.
    pub at: UnixTime,
    /// How far the counter had moved beyond what `CLOCK_MONOTONIC` did since
    /// the update before, in nanoseconds of the counter's rate: positive
    /// when it ran ahead (a suspend it counted, a jump forward), negative
    /// when it fell behind; `None` when it went back below values already
    /// read (a reset), where the distance means nothing.
    pub ahead_ns: Option<i64>,
}

impl fmt::Display for CounterJump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.ahead_ns {
            Some(ns) => {
                let dir = if ns >= 0 { "ahead of" } else { "behind" };
                let us = ns.unsigned_abs() / 1_000;
                write!(
                    f,
                    "counter {}.{:03} ms {dir} CLOCK_MONOTONIC at {}",
                    us / 1_000,
                    us % 1_000,
                    self.at
                )
            }
            None => write!(f, "counter went back at {}", self.at),
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
    /// Why the OS clock is used, when it is — for good. `None` with
    /// [`Source::Os`] while the counter awaits the kernel's verdict, which
    /// could not be read yet ([`verdict_unavailable`](Self::verdict_unavailable)
    /// says why): the precise clocks read the OS clock meanwhile.
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
    /// Why the last attempt to read the kernel's clocksource failed, when
    /// it failed for a reason that says nothing about the counter
    /// (descriptors or memory exhausted): the decision stands, the counter
    /// staying in use, and the file is read again. `None` once an attempt
    /// reads it.
    pub verdict_unavailable: Option<VerdictUnavailable>,
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
    /// How many times the counter jumped against `CLOCK_MONOTONIC` and the
    /// precise clocks were re-based (see [`CounterJump`]).
    pub counter_jumps: u32,
    /// The last such jump.
    pub last_counter_jump: Option<CounterJump>,
    /// Where the perf page offers no user-space time: what the OS call and
    /// the perf event's own system call cost when the process measured
    /// them, and which it took; `None` where it did not have to choose.
    pub thread_cpu_costs: Option<ThreadCpuCosts>,
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
            .field("verdict_unavailable", &self.verdict_unavailable)
            .field("invariant", &self.invariant)
            .field("monotonic_mode", &self.monotonic_mode)
            .field("upkeep", &self.upkeep)
            .field("hypervisor", &self.hypervisor())
            .field("thread_cpu", &self.thread_cpu)
            .field("thread_cpu_fallback", &self.thread_cpu_fallback)
            .field("counter_jumps", &self.counter_jumps)
            .field("last_counter_jump", &self.last_counter_jump)
            .field("thread_cpu_costs", &self.thread_cpu_costs)
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
        if let Some(jump) = self.last_counter_jump {
            write!(f, "; re-based {}x, last: {jump}", self.counter_jumps)?;
        }
        if let Some(why) = self.verdict_unavailable {
            match (self.source, self.fallback) {
                (Source::Os, None) => write!(
                    f,
                    "; counter {} awaits the kernel's verdict: {why}; retrying",
                    self.counter.unwrap_or("?")
                )?,
                (Source::Counter, _) => write!(
                    f,
                    "; {why}; the counter stays in use, the verdict read again at least once a second"
                )?,
                _ => write!(f, "; {why}")?,
            }
        }
        if let Some(cs) = self.kernel_clocksource {
            write!(f, "; kernel clocksource {cs}")?;
            if self.verdict_unavailable.is_some() {
                f.write_str(" when last read")?;
            }
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
