//! The timekeeper on a simulated machine: a counter at a fixed frequency, a
//! `CLOCK_MONOTONIC` whose rate NTP changes (frequency corrections, tick
//! slews), a `CLOCK_REALTIME` that can be stepped, a kernel that can demote
//! the counter. The real read and update paths run against it, in random
//! scenarios, and every promise of the module docs is checked:
//!
//! - readings never step back, and a reader holding an older state converts
//!   any counter value it may convert exactly as the newest state does (one
//!   non-decreasing function, across every update, forced or not);
//! - a reader that cannot get a newer state returns a lower bound of it;
//! - intervals follow `CLOCK_MONOTONIC`'s current rate, and the wall tier
//!   stays within its bounds of `CLOCK_REALTIME` (steady state, after a rate
//!   change, after a step);
//! - the counter is dropped when the kernel demotes it, without a step back.

use super::*;
use crate::source::arch::Probe;
use crate::source::detect::{Clocksource, EnvOverride, KernelVerdict, Source};
use crate::timekeeper::latch::Taken;
use crate::timekeeper::state::{seven_eighths, Converted, MODE_COUNTER};
use crate::timekeeper::writer::Writer;
use std::prelude::v1::*;
use std::sync::{mpsc, Mutex};

const FREQ: u64 = 2_445_405_696;
const S: u64 = 1_000_000_000;

/// The simulated machine. Every clock read advances true time by `step`.
struct World {
    tau: u64,
    step: u64,
    seg_tau: u64,
    seg_mono: u64,
    /// CLOCK_MONOTONIC's rate against true time, in parts per billion.
    rate_ppb: i64,
    real_minus_mono: i128,
    verdict: KernelVerdict,
    published_freq: Option<u64>,
    /// Every Nth bracket read takes this much longer (a preempted thread).
    hiccup_every: u64,
    hiccup_ns: u64,
    /// The next this many reads each take `hiccup_ns` longer (a thread
    /// preempted through a whole sample).
    hiccup_burst: u64,
    reads: u64,
    /// `CLOCK_BOOTTIME − CLOCK_MONOTONIC`: the time suspended.
    suspended: u64,
    /// Counter ticks lost to suspends that stopped the counter.
    ticks_lost: u64,
    /// Each `CLOCK_BOOTTIME` read comes up to this much late (the thread
    /// was interrupted between the pair's two reads): its reading is
    /// behind by a random amount up to it.
    boot_jitter: u64,
}

impl World {
    fn mono_at(&self, tau: u64) -> u64 {
        let d = (tau - self.seg_tau) as i128;
        (self.seg_mono as i128 + d + d * self.rate_ppb as i128 / 1_000_000_000) as u64
    }

    fn ticks_at(&self, tau: u64) -> u64 {
        1_000_000_000_000 + (tau as u128 * FREQ as u128 / S as u128) as u64
    }

    fn real_at(&self, tau: u64) -> u64 {
        (self.mono_at(tau) as i128 + self.real_minus_mono).clamp(0, u64::MAX as i128) as u64
    }

    fn tick(&mut self) -> u64 {
        self.reads += 1;
        self.tau += self.step;
        if self.hiccup_every != 0 && self.reads % self.hiccup_every == 0 {
            self.tau += self.hiccup_ns;
        }
        if self.hiccup_burst > 0 {
            self.hiccup_burst -= 1;
            self.tau += self.hiccup_ns;
        }
        self.tau
    }

    fn set_rate(&mut self, ppb: i64) {
        self.seg_mono = self.mono_at(self.tau);
        self.seg_tau = self.tau;
        self.rate_ppb = ppb;
    }

    /// A suspend of `ns` true nanoseconds: `CLOCK_BOOTTIME` and
    /// `CLOCK_REALTIME` move on, `CLOCK_MONOTONIC` does not; the counter
    /// keeps counting (`counting`: an invariant TSC in suspend-to-idle) or
    /// stops.
    fn suspend(&mut self, ns: u64, counting: bool) {
        let (mono, ticks) = (self.mono_at(self.tau), self.ticks_at(self.tau));
        self.tau += ns;
        self.seg_mono = mono;
        self.seg_tau = self.tau;
        self.suspended += ns;
        self.real_minus_mono += ns as i128;
        if !counting {
            self.ticks_lost += self.ticks_at(self.tau) - ticks;
        }
    }

    fn boot_at(&self, tau: u64) -> u64 {
        self.mono_at(tau) + self.suspended
    }
}

/// The simulated machine, and where a test parks the thread that reads
/// `CLOCK_REALTIME` next (a thread preempted there): it says it parked on
/// the first channel and waits for the second.
struct Sim(Mutex<World>, Mutex<Option<Gate>>);
type Gate = (mpsc::Sender<()>, mpsc::Receiver<()>);

impl Sim {
    fn new(published_freq: Option<u64>) -> Sim {
        Sim(
            Mutex::new(World {
                tau: 5 * S,
                step: 11,
                seg_tau: 0,
                seg_mono: 3 * S,
                rate_ppb: 0,
                real_minus_mono: 1_700_000_000 * S as i128,
                verdict: KernelVerdict::Clocksource(Clocksource::new(b"tsc")),
                published_freq,
                hiccup_every: 0,
                hiccup_ns: 0,
                hiccup_burst: 0,
                reads: 0,
                suspended: 0,
                ticks_lost: 0,
                boot_jitter: 0,
            }),
            Mutex::new(None),
        )
    }

    fn w(&self) -> std::sync::MutexGuard<'_, World> {
        self.0.lock().unwrap()
    }
}

impl Clocks for Sim {
    fn counter(&self) -> u64 {
        let mut w = self.w();
        let tau = w.tick();
        w.ticks_at(tau) - w.ticks_lost
    }
    fn counter_ordered(&self) -> u64 {
        self.counter()
    }
    fn mono(&self) -> u64 {
        let mut w = self.w();
        let tau = w.tick();
        w.mono_at(tau)
    }
    fn real(&self) -> u64 {
        if let Some((parked, go)) = self.1.lock().unwrap().take() {
            parked.send(()).unwrap();
            go.recv().unwrap();
        }
        let mut w = self.w();
        let tau = w.tick();
        w.real_at(tau)
    }
    fn boot(&self) -> u64 {
        let mut w = self.w();
        let tau = w.tick();
        let late = match w.boot_jitter {
            0 => 0,
            j => w.tau.wrapping_mul(0x9e37_79b9_7f4a_7c15) % (j + 1),
        };
        w.boot_at(tau) - late
    }
    fn observe(&self, fd: &mut detect::VerdictFile) -> Decision {
        let w = self.w();
        let probe = Probe {
            counter: Some("simulated"),
            invariant: true,
            freq: w.published_freq.map(|hz| (hz, FreqOrigin::Cpuid)),
            ordered_read: "sim",
            ordered_read_alt: "sim",
            use_alt: false,
            hypervisor: None,
            disabled: false,
        };
        drop(w);
        let verdict = self.verdict(fd);
        Decision {
            probe,
            clocksource: match verdict {
                KernelVerdict::Clocksource(cs) => Some(cs),
                _ => None,
            },
            env: EnvOverride::Unset,
            fallback: detect::decide(&probe, verdict, EnvOverride::Unset),
        }
    }
    fn verdict(&self, _fd: &mut detect::VerdictFile) -> KernelVerdict {
        self.w().verdict
    }
}

/// xorshift64*, seeded by proptest.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Log-uniform in [lo, hi).
    fn log(&mut self, lo: u64, hi: u64) -> u64 {
        let (a, b) = ((lo as f64).ln(), (hi as f64).ln());
        let x = a + (b - a) * (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        (x.exp() as u64).clamp(lo, hi - 1)
    }
}

/// What a scenario saw, for the checks at the end.
#[derive(Default)]
struct Log {
    /// (true time, reading) of every fresh precise reading.
    reads: Vec<(u64, u64)>,
    states: Vec<State>,
}

fn record_state(tk: &Timekeeper<Sim>, log: &mut Log) {
    let s = tk.state();
    if log.states.last() != Some(&s) {
        log.states.push(s);
    }
}

/// The conversion every counter-mode state must agree with: the newest
/// piece whose take-over point is at or below `t`.
fn reference(states: &[State], t: u64) -> Option<u64> {
    states
        .iter()
        .rev()
        .filter(|s| s.mode == MODE_COUNTER)
        .find(|s| s.takeover <= t)
        .map(|s| s.line.at(t))
}

#[derive(Clone, Copy, Debug)]
struct Scenario {
    seed: u64,
    published: bool,
    upkeep: bool,
    demote: bool,
    hiccups: bool,
}

/// Runs one scenario; returns the log for the caller's checks.
fn run(sc: Scenario) -> Log {
    let sim = Sim::new(sc.published.then_some(2_445_406_000));
    if sc.hiccups {
        let mut w = sim.w();
        w.hiccup_every = 97;
        w.hiccup_ns = 50_000;
    }
    let tk = Timekeeper::new(sim);
    let mut rng = Rng(sc.seed | 1);
    let mut log = Log::default();
    let mut stale: Vec<State> = Vec::new();
    let mut last_read = 0u64;
    let mut demoted = false;
    let end_tau = tk.clocks.w().tau + 25 * S;
    let mut upkeep_next = 0u64;
    if sc.upkeep {
        tk.set_upkeep(true);
    }
    while tk.clocks.w().tau < end_tau {
        // Time passes: mostly small steps, sometimes an idle second or more.
        let dt = if rng.below(200) == 0 {
            rng.log(S / 2, 4 * S)
        } else {
            rng.log(1_000, 5_000_000)
        };
        tk.clocks.w().tau += dt;
        match rng.below(1000) {
            // NTP at work: a frequency correction or a tick slew.
            0..=3 => {
                let ppb = match rng.below(4) {
                    0 => 0,
                    1 => rng.below(1_000_001) as i64 - 500_000,
                    2 => 8_000_000,
                    _ => -200_000,
                };
                tk.clocks.w().set_rate(ppb);
            }
            // The system clock is set.
            4..=5 => {
                let step = rng.below(2 * S) as i128 - S as i128;
                tk.clocks.w().real_minus_mono += step;
            }
            // A forced update.
            6 => tk.force_update(),
            7 if sc.demote && !demoted && tk.clocks.w().tau > 12 * S => {
                tk.clocks.w().verdict = KernelVerdict::Clocksource(Clocksource::new(b"hpet"));
                demoted = true;
            }
            _ => {}
        }
        if sc.upkeep {
            let now = tk.clocks.mono();
            if now >= upkeep_next {
                upkeep_next = tk.upkeep_turn(false).min(now + 1_000_000);
            }
        }
        record_state(&tk, &mut log);
        // A reader that loaded the state a while ago converts a value now.
        if let Some(old) = stale.pop() {
            let t = tk.clocks.counter();
            let fresh = tk.read_nanos(false);
            record_state(&tk, &mut log);
            if let Converted::Nanos { nanos, .. } = old.convert(t) {
                if old.mode == MODE_COUNTER {
                    assert!(nanos <= fresh, "stale {nanos} > fresh {fresh}");
                    let counter_states: Vec<_> = log.states.clone();
                    if let Some(want) = reference(&counter_states, t) {
                        if tk.state().mode == MODE_COUNTER {
                            assert_eq!(
                                nanos,
                                want,
                                "stale state disagrees at {t}: stale {old:?}\nstates {:#?}",
                                &counter_states[counter_states.len().saturating_sub(3)..]
                            );
                        }
                    }
                }
            }
            last_read = last_read.max(fresh);
        }
        if rng.below(8) == 0 {
            stale.push(tk.state());
        }
        let ordered = rng.below(2) == 0;
        let tau = tk.clocks.w().tau;
        let v = tk.read_nanos(ordered);
        record_state(&tk, &mut log);
        assert!(v >= last_read, "stepped back {} ns at {tau}", last_read - v);
        last_read = v;
        log.reads.push((tau, v));
        let _ = tk.unix_nanos();
        record_state(&tk, &mut log);
    }
    log
}

/// The checks every scenario must pass.
fn check(sc: Scenario, log: &Log) {
    // Consecutive counter states meet exactly where the new one takes over,
    // and a new rate is never below 7/8 of the old.
    for pair in log.states.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let same_piece = (a.takeover, a.end, a.line, a.prev) == (b.takeover, b.end, b.line, b.prev);
        if a.mode == MODE_COUNTER && b.mode == MODE_COUNTER && !same_piece {
            assert_eq!(b.takeover, a.end, "{sc:?}: takes over at the old end");
            assert_eq!(
                b.line.at(b.takeover),
                a.line.at(b.takeover),
                "{sc:?}: continuous"
            );
            assert_eq!(b.prev, a.line, "{sc:?}: keeps the old line below");
            assert!(
                b.line.slope >= calibrate::floor(a.line.slope),
                "{sc:?}: rate floor"
            );
            assert!(b.end > b.takeover && b.trigger <= b.end, "{sc:?}: {b:?}");
            // The lower bound a stuck reader returns is never ahead.
            for k in [0u64, 1, 1_000, 10_000_000, 3 * FREQ] {
                let t = a.end.saturating_add(k);
                if t < b.end {
                    assert!(a.lower_bound(t) <= b.line.at(t.max(b.takeover)), "{sc:?}");
                }
            }
        }
    }
    // Readings never step back (also asserted as they came).
    for pair in log.reads.windows(2) {
        assert!(pair[1].1 >= pair[0].1, "{sc:?}: {pair:?}");
    }
}

/// Rate changes are followed: intervals between readings at least 3 s after
/// the last change agree with CLOCK_MONOTONIC's, and the wall tier with
/// CLOCK_REALTIME, within the documented bounds.
#[test]
fn follows_a_frequency_correction() {
    for (ppb, wall_bound) in [
        (500_000i64, 2_000u64),
        (-500_000, 2_000),
        (8_000_000, 20_000),
    ] {
        let tk = Timekeeper::new(Sim::new(None));
        let mut worst_interval_ppb = 0f64;
        let mut worst_wall = 0u64;
        let mut worst_wall_early = 0u64;
        let step = |tk: &Timekeeper<Sim>, dt: u64| {
            tk.clocks.w().tau += dt;
            let v = tk.read_nanos(false);
            let u = tk.unix_nanos();
            let w = tk.clocks.w();
            (v, w.mono_at(w.tau), u, w.real_at(w.tau))
        };
        // Settle for 5 s at the nominal rate.
        for _ in 0..500 {
            step(&tk, 10_000_000);
        }
        tk.clocks.w().set_rate(ppb);
        let change_tau = tk.clocks.w().tau;
        // Intervals of a second (an update during a reading moves simulated
        // time by its clock reads, a few hundred ns: 0.3 ppm of a second).
        let mut prev = step(&tk, 1);
        for i in 1..=1000 {
            let cur = step(&tk, 10_000_000);
            let since = tk.clocks.w().tau - change_tau;
            let wall_err = cur.2.abs_diff(cur.3);
            if since >= 3 * S {
                worst_wall = worst_wall.max(wall_err);
            } else {
                worst_wall_early = worst_wall_early.max(wall_err);
            }
            if i % 100 == 0 {
                if since >= 3 * S {
                    let ours = (cur.0 - prev.0) as f64;
                    let kernel = (cur.1 - prev.1) as f64;
                    worst_interval_ppb =
                        worst_interval_ppb.max(((ours - kernel) / kernel).abs() * 1e9);
                }
                prev = cur;
            }
        }
        // Right after the change the error is at most the change over one
        // resync interval (1 s), plus a microsecond.
        let early_bound = ppb.unsigned_abs() + 1_000;
        assert!(
            worst_wall_early <= early_bound,
            "{ppb}: early wall error {worst_wall_early} > {early_bound}"
        );
        assert!(
            worst_wall <= wall_bound,
            "{ppb}: wall error {worst_wall} ns"
        );
        assert!(
            worst_interval_ppb < 500.0,
            "{ppb}: interval off by {worst_interval_ppb} ppb"
        );
    }
}

/// A step of the system clock is followed at the next resync (within the
/// interval without upkeep, at once with it); the precise tier ignores it.
#[test]
fn follows_a_step() {
    for upkeep in [false, true] {
        let tk = Timekeeper::new(Sim::new(None));
        tk.set_upkeep(upkeep);
        for _ in 0..300 {
            tk.clocks.w().tau += 10_000_000;
            let _ = tk.read_nanos(false);
            let _ = tk.unix_nanos();
            if upkeep {
                tk.upkeep_turn(false);
            }
        }
        let before = tk.read_nanos(false);
        tk.clocks.w().real_minus_mono -= 5 * S as i128;
        if upkeep {
            // The kernel wakes the upkeep thread (timerfd): at once.
            tk.upkeep_turn(true);
        } else {
            tk.clocks.w().tau += 1_200_000_000;
            let _ = tk.read_nanos(false);
        }
        let u = tk.unix_nanos();
        let w = tk.clocks.w();
        let real = w.real_at(w.tau);
        drop(w);
        assert!(u.abs_diff(real) < 2_000, "upkeep {upkeep}: {u} vs {real}");
        assert!(tk.read_nanos(false) >= before);
    }
}

/// A wall reader past its deadline re-anchors the wall line even when a
/// re-check of the kernel's verdict is also due (precise readers at the
/// trigger do one or the other, turn about; a wall reader must sample, or
/// the line would outlive its resync interval).
#[test]
fn wall_reader_resyncs_when_a_check_is_due() {
    let tk = Timekeeper::new(Sim::new(None));
    tk.set_wall_interval(20_000_000);
    for _ in 0..200 {
        tk.clocks.w().tau += 5_000_000;
        let _ = tk.unix_nanos();
    }
    tk.clocks.w().real_minus_mono += 7 * S as i128;
    tk.clocks.w().tau += 25_000_000;
    {
        let w = Writer::new(&tk);
        w.keeper.next_check_mono = 0;
        w.keeper.last_was_check = false;
    }
    let u = tk.unix_nanos();
    let w = tk.clocks.w();
    let real = w.real_at(w.tau);
    drop(w);
    assert!(
        u.abs_diff(real) < 2_000,
        "wall {u} vs {real}, past its deadline with a check due"
    );
}

/// The kernel demotes the counter: readings move to CLOCK_MONOTONIC without
/// stepping back, and an interval across the switch stays within 10 µs of
/// CLOCK_MONOTONIC's.
#[test]
#[cfg(all(
    target_arch = "x86_64",
    any(target_os = "linux", target_os = "android")
))]
fn demotion_keeps_the_timeline() {
    demotion(0);
}

/// The same while every sample's first brackets are preempted (300 µs each,
/// all of a first sample's): the switch samples again, as a bracket's width
/// would become a forward step of every reading (485 µs once in CI).
#[test]
#[cfg(all(
    target_arch = "x86_64",
    any(target_os = "linux", target_os = "android")
))]
fn demotion_with_preempted_samples() {
    demotion(300_000);
}

#[cfg(all(
    target_arch = "x86_64",
    any(target_os = "linux", target_os = "android")
))]
fn demotion(hiccup_ns: u64) {
    let tk = Timekeeper::new(Sim::new(None));
    for _ in 0..300 {
        tk.clocks.w().tau += 10_000_000;
        let _ = tk.read_nanos(false);
    }
    let (a, mono_a) = (tk.read_nanos(true), tk.clocks.mono());
    tk.clocks.w().verdict = KernelVerdict::Clocksource(Clocksource::new(b"kvm-clock"));
    tk.clocks.w().hiccup_ns = hiccup_ns;
    let mut last = a;
    for _ in 0..300 {
        let mut w = tk.clocks.w();
        w.tau += 10_000_000;
        // More than a sample's reads (4 brackets of 3, 3 of 3).
        w.hiccup_burst = if hiccup_ns > 0 { 25 } else { 0 };
        drop(w);
        let v = tk.read_nanos(true);
        assert!(v >= last);
        last = v;
    }
    tk.clocks.w().hiccup_burst = 0;
    let s = tk.state();
    assert_eq!(s.mode, MODE_OS, "demoted");
    assert_eq!(s.wall_deadline, 0, "the wall tier reads CLOCK_REALTIME");
    // Ordered readers no longer read the counter before the state.
    assert!(!tk.counter_read.load(Ordering::Relaxed));
    let (b, mono_b) = (tk.read_nanos(true), tk.clocks.mono());
    assert!(
        (b - a).abs_diff(mono_b - mono_a) < 10_000,
        "{} vs {}",
        b - a,
        mono_b - mono_a
    );
    let info = tk.info();
    assert_eq!(info.source, Source::Os);
    assert!(matches!(
        info.fallback,
        Some(Fallback::KernelClocksource(_))
    ));
    let at = info.demoted_at.expect("the demotion's wall time");
    let text = std::format!("{info}");
    assert!(
        text.contains(&std::format!("(since {at})")) && at.to_string().ends_with('Z'),
        "{text}"
    );
}

/// A program reading the clock every 30 ms only ever arrives past a piece's
/// end (a grace period is at most 2 ms), yet the kernel's verdict is
/// re-checked about every second, and a demotion noticed.
#[test]
#[cfg(all(
    target_arch = "x86_64",
    any(target_os = "linux", target_os = "android")
))]
fn sparse_readers_check_the_kernel() {
    let tk = Timekeeper::new(Sim::new(None));
    for _ in 0..100 {
        tk.clocks.w().tau += 30_000_000;
        let _ = tk.read_nanos(false);
    }
    assert_eq!(tk.state().mode, MODE_COUNTER);
    tk.clocks.w().verdict = KernelVerdict::Clocksource(Clocksource::new(b"kvm-clock"));
    let mut last = tk.read_nanos(false);
    for _ in 0..70 {
        tk.clocks.w().tau += 30_000_000;
        let v = tk.read_nanos(false);
        assert!(v >= last);
        last = v;
    }
    assert_eq!(tk.state().mode, MODE_OS, "demoted within 2.1 s");
}

/// The wall tier near the ends of its range reads CLOCK_REALTIME, saturated,
/// and does not update the state on every read to do so.
#[test]
fn wall_near_the_ends_of_its_range() {
    for (real_minus_mono, want) in [
        (-(100 * S as i128), Some(0)),
        (1_000_000 * S as i128, None),
        (u64::MAX as i128 - 100, Some(u64::MAX)),
    ] {
        let tk = Timekeeper::new(Sim::new(None));
        tk.clocks.w().real_minus_mono = real_minus_mono;
        for _ in 0..200 {
            tk.clocks.w().tau += 10_000_000;
            let _ = tk.read_nanos(false);
        }
        let seq = tk.state.snapshot();
        for _ in 0..1_000 {
            let u = tk.unix_nanos();
            let w = tk.clocks.w();
            let real = w.real_at(w.tau);
            match want {
                Some(v) => assert_eq!(u, v),
                None => assert!(u.abs_diff(real) < 2_000),
            }
        }
        assert_eq!(tk.state.snapshot(), seq, "no update per read");
        assert_eq!(tk.state().wall_deadline == 0, want.is_some());
    }
}

/// A reading of an OS state between its trigger and its end makes the
/// update there, as at a counter state's trigger (the OS read's own short
/// path must hand it to the update, not convert it and return).
#[test]
fn os_reading_at_the_trigger_updates() {
    let tk = Timekeeper::new(Sim::new(None));
    tk.read_nanos(false);
    let warming = tk.state();
    assert_eq!(warming.mode, MODE_OS);
    assert!(warming.trigger < warming.end);
    {
        let mut w = tk.clocks.w();
        let now = w.mono_at(w.tau);
        w.tau += warming.trigger - now;
    }
    tk.read_nanos(false);
    assert!(
        tk.clocks.mono() < warming.end,
        "the test read before the end"
    );
    assert_ne!(tk.state(), warming, "the reading at the trigger updated");
}

/// The first reading in a process reads the OS clock while the rate is
/// measured (no wait), then the counter takes over a little ahead.
#[test]
fn warm_up_then_counter() {
    // (what the hardware publishes, whether the first counter line uses it)
    for (published, believed) in [
        (None, false),
        (Some(FREQ), true),
        // An emulator's CPUCFG was off by 18x: measured, not believed.
        (Some(FREQ * 18), false),
    ] {
        let tk = Timekeeper::new(Sim::new(published));
        let first = tk.read_nanos(false);
        assert_eq!(
            tk.state().mode,
            MODE_OS,
            "the first millisecond reads the OS clock"
        );
        let mut last = first;
        let mut first_counter_slope = None;
        for _ in 0..100 {
            tk.clocks.w().tau += 100_000;
            let v = tk.read_nanos(false);
            assert!(v >= last);
            last = v;
            let s = tk.state();
            if s.mode == MODE_COUNTER && first_counter_slope.is_none() {
                first_counter_slope = Some(s.line.slope);
            }
        }
        let slope = first_counter_slope.expect("the counter took over");
        let exact = Line::slope_of_freq(FREQ).unwrap();
        if believed {
            assert_eq!(slope, exact, "the published frequency, exactly");
        } else {
            assert!(
                slope.abs_diff(exact) < exact / 10_000,
                "measured: {slope} vs {exact}"
            );
        }
        let info = tk.info();
        assert_eq!(info.source, Source::Counter);
        assert!(
            info.freq_hz.abs_diff(FREQ) < FREQ / 10_000,
            "{}",
            info.freq_hz
        );
    }
}

/// Readings taken while another thread publishes the first state are never
/// above a later reading — even when that thread was preempted between its
/// sample and the publish (the first state's end then lies in the past)
/// and a later reader finds the lock held and takes the lower bound.
/// (Under qemu, a thread preempted for 10 ms there stepped `Instant` back by
/// up to 320 µs.)
#[test]
#[cfg(not(target_os = "wasi"))] // no threads there
fn readings_during_detection_stay_below_later_ones() {
    for published in [None, Some(FREQ)] {
        let tk = Timekeeper::new(Sim::new(published));
        let (parked_tx, parked_rx) = mpsc::channel();
        let (go_tx, go_rx) = mpsc::channel();
        *tk.clocks.1.lock().unwrap() = Some((parked_tx, go_rx));
        let during = std::thread::scope(|scope| {
            let writer = scope.spawn(|| tk.ensure_published());
            // The writer sampled the counter and is preempted.
            parked_rx.recv().unwrap();
            let mut during = std::vec![tk.read_nanos(false)];
            for _ in 0..3 {
                tk.clocks.w().tau += 5_000_000;
                during.push(tk.read_nanos(false));
            }
            assert!(during.windows(2).all(|p| p[0] <= p[1]), "{during:?}");
            assert_eq!(tk.state().mode, MODE_NONE, "still being published");
            go_tx.send(()).unwrap();
            assert!(writer.join().unwrap());
            during[during.len() - 1]
        });
        // The next writer holds the lock: readers past the end take the
        // lower bound.
        assert_eq!(tk.lock.try_lock(), Some(Taken::Free));
        let after = tk.read_nanos(false);
        tk.lock.unlock();
        assert!(after >= during, "{after} < {during} ({published:?})");
        let later = tk.read_nanos(false);
        assert!(later >= after, "{later} < {after}");
    }
}

/// A reading past the state's end while another thread holds the lock gets
/// the lower bound, not a wait (what a signal handler that interrupted the
/// writer sees).
#[test]
fn past_the_end_with_the_lock_held_returns_a_lower_bound() {
    let tk = Timekeeper::new(Sim::new(Some(FREQ)));
    for _ in 0..100 {
        tk.clocks.w().tau += 10_000_000;
        let _ = tk.read_nanos(false);
    }
    let before = tk.read_nanos(false);
    let s = tk.state();
    assert_eq!(tk.lock.try_lock(), Some(Taken::Free));
    tk.clocks.w().tau += 3 * S; // far past the end
    let stuck = tk.read_nanos(false);
    tk.lock.unlock();
    let after = tk.read_nanos(false);
    assert!(
        before <= stuck && stuck <= after,
        "{before} {stuck} {after}"
    );
    assert!(
        stuck >= s.line.at(s.end),
        "advances past the end, if slowly"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::proptest_cases(256)))]

    #[test]
    fn random_scenarios(
        seed in proptest::prelude::any::<u64>(),
        published in proptest::prelude::any::<bool>(),
        upkeep in proptest::prelude::any::<bool>(),
        demote in proptest::prelude::any::<bool>(),
        hiccups in proptest::prelude::any::<bool>(),
    ) {
        let sc = Scenario { seed, published, upkeep, demote, hiccups };
        let log = run(sc);
        check(sc, &log);
    }
}

/// Runs `f` on another thread and fails the test if `f` stops making
/// progress: if `secs` seconds pass without a call of the `step` it is
/// given (a hang then fails instead of stalling the run; the stuck thread
/// is left behind). What is bounded is the time of one step, not of the
/// whole run, so a slow machine (an emulator, a loaded runner) makes the
/// test slower but never fails it.
#[cfg(not(target_os = "wasi"))] // no threads there
fn within<R: Send + 'static>(secs: u64, f: impl FnOnce(&dyn Fn()) -> R + Send + 'static) -> R {
    let steps = std::sync::Arc::new(AtomicU64::new(0));
    let (tx, rx) = mpsc::channel();
    let thread = {
        let steps = steps.clone();
        std::thread::spawn(move || {
            let _ = tx.send(f(&|| {
                steps.fetch_add(1, Ordering::Relaxed);
            }));
        })
    };
    let mut seen = 0;
    loop {
        match rx.recv_timeout(std::time::Duration::from_secs(secs)) {
            Ok(r) => return r,
            Err(mpsc::RecvTimeoutError::Disconnected) => match thread.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => unreachable!("returned without sending"),
            },
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let now = steps.load(Ordering::Relaxed);
                assert!(now != seen, "no progress for {secs} s (after {now} steps)");
                seen = now;
            }
        }
    }
}

/// `within` fails a run whose steps stall, however long the run before the
/// stall lasted, and returns the result of one that keeps stepping past
/// the bound.
#[test]
#[cfg(not(target_os = "wasi"))]
fn within_bounds_steps_not_runs() {
    let ran = within(2, |step| {
        for _ in 0..25 {
            std::thread::sleep(std::time::Duration::from_millis(100));
            step();
        }
        7
    });
    assert_eq!(ran, 7);
    let stalled = std::panic::catch_unwind(|| {
        within(2, |step| {
            step();
            loop {
                std::thread::park();
            }
        })
    });
    let msg = *stalled
        .expect_err("a stall fails")
        .downcast::<String>()
        .unwrap();
    assert!(msg.starts_with("no progress for 2 s"), "{msg}");
}

/// Ticks of `ns` nanoseconds on the simulated counter (rounded down).
fn sim_ticks(ns: u64) -> u64 {
    (ns as u128 * FREQ as u128 / S as u128) as u64
}

/// With the wall resync interval at 1 ns (or anything below the floor,
/// even stored past the setter), every counter piece's fast path lasts at
/// least `MIN_WALL_INTERVAL_NS` from the reading that led to its update,
/// and readers reading every 10 µs update at most about once a millisecond.
/// (A 1 ns interval made each piece end a few ticks after its sample: every
/// read updated, and a reader past the end never returned.)
#[test]
#[cfg(not(target_os = "wasi"))]
fn a_piece_is_never_shorter_than_the_floor() {
    for (interval, bypass_setter) in [(0, false), (1, false), (1, true), (999_999, false)] {
        let (pieces, publishes, span) = within(20, move |step| {
            let tk = Timekeeper::new(Sim::new(None));
            tk.read_nanos(false);
            if bypass_setter {
                tk.wall_interval.store(interval, Ordering::Relaxed);
            } else {
                tk.set_wall_interval(interval);
            }
            let mut seen = tk.state();
            let (mut pieces, mut publishes) = (0u64, 0u64);
            let mut last = 0;
            let start = tk.clocks.w().tau;
            for _ in 0..200_000 {
                step();
                let before = {
                    let mut w = tk.clocks.w();
                    w.tau += 10_000;
                    w.ticks_at(w.tau)
                };
                let v = tk.read_nanos(false);
                assert!(v >= last, "stepped back");
                last = v;
                let s = tk.state();
                if s != seen {
                    publishes += 1;
                    if s.mode == MODE_COUNTER && (s.takeover, s.end) != (seen.takeover, seen.end) {
                        pieces += 1;
                        let floor = sim_ticks(MIN_WALL_INTERVAL_NS) / 1000 * 999;
                        assert!(
                            s.trigger - before >= floor,
                            "interval {interval}: a piece's fast path of {} ticks",
                            s.trigger - before
                        );
                        assert!(s.end > s.trigger && s.trigger >= s.takeover, "{s:?}");
                    }
                    seen = s;
                }
            }
            let end = tk.clocks.w().tau;
            (pieces, publishes, end - start)
        });
        assert!(pieces > 100, "interval {interval}: only {pieces} pieces");
        let allowed = span / MIN_WALL_INTERVAL_NS + 20;
        assert!(
            publishes <= allowed,
            "interval {interval}: {publishes} states published in {span} ns"
        );
    }
}

/// A reader past a piece's end that publishes the next state converts the
/// counter value it already read with that state, and returns: even with
/// the shortest pieces (a 1 ms interval) on a machine where every clock
/// read takes 2 ms (a thread preempted again and again), where reading the
/// counter once more would find it past the new piece's end too, every
/// time.
#[test]
#[cfg(not(target_os = "wasi"))]
fn a_reader_never_loops_on_its_own_update() {
    let (reads, published) = within(20, |step| {
        let tk = Timekeeper::new(Sim::new(None));
        tk.set_wall_interval(MIN_WALL_INTERVAL_NS);
        for _ in 0..300 {
            step();
            tk.clocks.w().tau += 10_000_000;
            let _ = tk.read_nanos(false);
        }
        assert_eq!(tk.state().mode, MODE_COUNTER);
        tk.clocks.w().step = 2_000_000;
        let before = tk.state.sequence();
        let mut last = tk.read_nanos(true);
        let reads = 200;
        for i in 0..reads {
            step();
            let v = tk.read_nanos(i % 2 == 0);
            assert!(v >= last, "stepped back");
            last = v;
        }
        (reads, (tk.state.sequence() - before) / 2)
    });
    assert!(
        published <= 2 * reads,
        "{published} states for {reads} readings"
    );
}

/// A counter state `k` ticks past its end: the bound a stuck reader
/// returns, and the value there of a next piece of slope `next`, as
/// `next_piece` builds it.
fn bound_and_next(slope: u64, next: u64, end: u64, value: u64, k: u64) -> (u64, u64) {
    let line = Line::through(end, value, slope);
    let s = State {
        mode: MODE_COUNTER,
        takeover: end.saturating_sub(1_000),
        trigger: end.saturating_sub(10),
        end,
        line,
        ..State::default()
    };
    let next = Line::through(end, line.at(end), next);
    (s.lower_bound(end + k), next.at(end + k))
}

/// Every `k` below 8 (where rounding 7/8 of the nanoseconds up made the
/// bound the old rate itself), at the slowest next rates, for slopes from
/// the fastest counter to the slowest one the fixed point takes.
#[test]
fn lower_bound_below_eight_ticks() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut slopes: Vec<u64> = [1, 2, 7, 8, 9, u64::MAX / 3, u64::MAX / 8 * 7, u64::MAX]
        .into_iter()
        .collect();
    slopes.extend(
        [10_000_000_000u64, 1_000_000_000, 100_000_000]
            .iter()
            .filter_map(|&hz| Line::slope_of_freq(hz)),
    );
    slopes.extend(
        (0..2_000)
            .map(|_| rng.next() >> rng.below(40))
            .filter(|&s| s != 0),
    );
    for &slope in &slopes {
        let lowest = calibrate::floor(slope);
        for next in [
            lowest,
            lowest + 1,
            lowest + 2,
            slope,
            slope.saturating_add(1),
        ] {
            for k in 0..8 {
                for end in [1_000_000u64, rng.next() >> 2] {
                    let value = rng.next() >> 2;
                    let (bound, at) = bound_and_next(slope, next, end, value, k);
                    assert!(
                        bound <= at,
                        "slope {slope}, next {next}, k {k}: bound {bound} > {at}"
                    );
                }
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::proptest_cases(20_000)))]

    /// The bound never exceeds the next piece's value, for any next rate
    /// down to 7/8 of the old (`calibrate::floor`), few ticks or many.
    #[test]
    fn lower_bound_never_exceeds_the_next_piece(
        slope in 1u64..,
        down in proptest::prop_oneof![0u64..=16, 0u64..=1 << 20],
        end in 0u64..1 << 62,
        value in 0u64..1 << 62,
        k in proptest::prop_oneof![0u64..64, 0u64..1 << 40],
    ) {
        // Next rates from the floor up to the old rate, often at the floor.
        let lowest = calibrate::floor(slope);
        let next = lowest + (((slope - lowest) as u128 * down as u128) >> 20) as u64;
        let (bound, at) = bound_and_next(slope, next, end, value, k);
        proptest::prop_assert!(bound <= at, "slope {} next {} k {}: {} > {}", slope, next, k, bound, at);
    }

    /// `seven_eighths` is 7/8 rounded down, everywhere.
    #[test]
    fn seven_eighths_rounds_down(n in proptest::prelude::any::<u64>()) {
        proptest::prop_assert_eq!(seven_eighths(n) as u128, n as u128 * 7 / 8);
    }
}

/// `n` read every 10 ms of simulated time.
fn run_reads(tk: &Timekeeper<Sim>, n: usize) {
    for _ in 0..n {
        tk.clocks.w().tau += 10_000_000;
        let _ = tk.read_nanos(false);
    }
}

/// What `clock_info` says, minus the strategy of `MonotonicInstant`
/// (process-wide, not the timekeeper's), as text (for the fork test, which
/// runs where the simulated verdict can demote the counter).
#[cfg(all(
    target_arch = "x86_64",
    any(target_os = "linux", target_os = "android")
))]
fn info_text(tk: &Timekeeper<Sim>) -> String {
    let mut info = tk.info();
    info.monotonic_mode = crate::precise::MonotonicMode::Undecided;
    std::format!("{info:?}")
}

/// A child forked while a thread of the parent held the writers' lock
/// resumes from the bookkeeping saved at the last publish: `clock_info`
/// says what it said in the parent (not "being calibrated"), the demotion's
/// time included — also when the live bookkeeping was half overwritten.
#[test]
#[cfg(all(
    target_arch = "x86_64",
    any(target_os = "linux", target_os = "android")
))]
fn a_forked_child_keeps_what_clock_info_reports() {
    for (demote, scribble) in [(false, false), (true, false), (false, true), (true, true)] {
        let tk = Timekeeper::new(Sim::new(None));
        run_reads(&tk, 300);
        if demote {
            tk.clocks.w().verdict = KernelVerdict::Clocksource(Clocksource::new(b"hpet"));
            run_reads(&tk, 300);
            assert_eq!(tk.state().mode, MODE_OS, "demoted");
        }
        let before = info_text(&tk);
        let last = tk.read_nanos(false);
        if scribble {
            // A writer of the parent half-way through its bookkeeping.
            let w = Writer::new(&tk);
            *w.keeper = Keeper::new();
            w.keeper.rate = 1;
        }
        tk.lock.hold_in_another_process();
        assert_eq!(
            info_text(&tk),
            before,
            "demoted {demote}, scribbled {scribble}"
        );
        assert!(!tk.info().to_string().contains("being calibrated"));
        run_reads(&tk, 200);
        assert!(tk.read_nanos(false) > last);
        if demote {
            assert!(tk.info().demoted_at.is_some());
        } else {
            let info = tk.info();
            assert_eq!(info.freq_origin, FreqOrigin::Measured);
            assert!(
                info.freq_hz.abs_diff(FREQ) < FREQ / 10_000,
                "{}",
                info.freq_hz
            );
        }
    }
}

/// A child forked during the warm-up, while a thread of the parent held
/// the lock, still measures the rate and moves to the counter (starting
/// the bookkeeping afresh emptied the window, and the warm-up then gave up
/// the counter for good as stalled).
#[test]
fn a_child_forked_during_the_warm_up_keeps_the_counter() {
    let tk = Timekeeper::new(Sim::new(None));
    let first = tk.read_nanos(false);
    let warming = tk.state();
    assert!(warming.mode == MODE_OS && warming.trigger != u64::MAX);
    tk.lock.hold_in_another_process();
    tk.clocks.w().tau += 2_000_000;
    let mut last = first;
    for _ in 0..50 {
        tk.clocks.w().tau += 100_000;
        let v = tk.read_nanos(false);
        assert!(v >= last);
        last = v;
    }
    assert_eq!(tk.state().mode, MODE_COUNTER);
    let info = tk.info();
    assert_eq!(info.fallback, None);
    assert_eq!(info.source, Source::Counter);
}

/// A parent's writer that saved its bookkeeping and vanished (fork) before
/// writing the state: the child writes that state, so the bookkeeping it
/// resumes from and what readers see agree again.
#[test]
fn a_child_finishes_a_write_its_parent_began() {
    let tk = Timekeeper::new(Sim::new(None));
    run_reads(&tk, 100);
    let old = tk.state();
    let before = tk.read_nanos(false);
    tk.clocks.w().tau += 1_000_000;
    let next = {
        let mut w = Writer::new(&tk);
        let now = w.now_ticks();
        let next = w.next_piece(now);
        w.keeper.state = next;
        w.save();
        next
    };
    assert_ne!(next, old);
    assert_eq!(tk.state(), old, "saved, not written");
    tk.lock.hold_in_another_process();
    // The child's first writer takes the lock over.
    let _ = tk.info();
    assert_eq!(tk.state(), next, "the saved state written");
    let v = tk.read_nanos(false);
    assert!(v >= before);
}

/// The precise tier's timeline is the OS clock plus `TIMELINE_OFFSET_NS`
/// from the first reading on, and the counter continues it.
#[test]
fn the_timeline_starts_at_its_offset() {
    let tk = Timekeeper::new(Sim::new(None));
    let mono = tk.clocks.mono();
    let first = tk.read_nanos(false);
    assert!(first >= mono + TIMELINE_OFFSET_NS && first < mono + TIMELINE_OFFSET_NS + S);
    run_reads(&tk, 100);
    let (v, mono) = (tk.read_nanos(false), tk.clocks.mono());
    assert_eq!(tk.state().mode, MODE_COUNTER);
    assert!(
        v.abs_diff(mono + TIMELINE_OFFSET_NS) < 100_000,
        "{v} vs {mono}"
    );
}

/// The constants of the state machine that both languages have, against
/// `spec/vectors/constants.json` (the Go module's tests read it too). A
/// constant the file names that this test does not know, or one this test
/// knows that the file does not list, fails it: neither language's
/// constants can drift from the other's silently.
#[test]
fn constants_match_the_spec() {
    fn rust_constant(name: &str) -> Option<u64> {
        Some(match name {
            "MARGIN_NS" => MARGIN_NS,
            "MIN_PERIOD_NS" => MIN_PERIOD_NS,
            "MAX_PERIOD_NS" => MAX_PERIOD_NS,
            "READER_PERIOD_NS" => READER_PERIOD_NS,
            "UPKEEP_PERIOD_NS" => UPKEEP_PERIOD_NS,
            "CHECK_PERIOD_NS" => CHECK_PERIOD_NS,
            "MAX_GRACE_NS" => MAX_GRACE_NS,
            "FIRST_SPAN_NS" => FIRST_SPAN_NS,
            "UPKEEP_SLACK_NS" => UPKEEP_SLACK_NS,
            "MIN_WALL_INTERVAL_NS" => MIN_WALL_INTERVAL_NS,
            "MAX_WALL_INTERVAL_NS" => MAX_WALL_INTERVAL_NS,
            "DEFAULT_WALL_INTERVAL_NS" => DEFAULT_WALL_INTERVAL_NS,
            "WALL_GUARD_NS" => WALL_GUARD_NS,
            "WINDOW_NS" => calibrate::WINDOW_NS,
            "MIN_WINDOW_NS" => calibrate::MIN_WINDOW_NS,
            "SUSPECT_SHIFT" => u64::from(calibrate::SUSPECT_SHIFT),
            "BRACKETS" => calibrate::BRACKETS as u64,
            "REAL_BRACKETS" => calibrate::REAL_BRACKETS as u64,
            "SWITCH_SAMPLE_TRIES" => u64::from(SWITCH_SAMPLE_TRIES),
            "BOOT_SAMPLE_PAIRS" => u64::from(boot::BOOT_SAMPLE_PAIRS),
            _ => return None,
        })
    }
    const KNOWN: [&str; 20] = [
        "MARGIN_NS",
        "MIN_PERIOD_NS",
        "MAX_PERIOD_NS",
        "READER_PERIOD_NS",
        "UPKEEP_PERIOD_NS",
        "CHECK_PERIOD_NS",
        "MAX_GRACE_NS",
        "FIRST_SPAN_NS",
        "UPKEEP_SLACK_NS",
        "MIN_WALL_INTERVAL_NS",
        "MAX_WALL_INTERVAL_NS",
        "DEFAULT_WALL_INTERVAL_NS",
        "WALL_GUARD_NS",
        "WINDOW_NS",
        "MIN_WINDOW_NS",
        "SUSPECT_SHIFT",
        "BRACKETS",
        "REAL_BRACKETS",
        "SWITCH_SAMPLE_TRIES",
        "BOOT_SAMPLE_PAIRS",
    ];
    let path = std::format!("{}/spec/vectors/constants.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| std::panic!("{path}: {e}"));
    let file: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    let mut listed = Vec::new();
    for c in file["constants"].as_array().expect("a list of constants") {
        let name = c["name"].as_str().expect("a name");
        let value = c["value"]
            .as_u64()
            .unwrap_or_else(|| std::panic!("{name}: no value"));
        let Some(rust) = c["rust"].as_str() else {
            assert!(
                c.get("rust_value").is_none(),
                "{name}: a rust_value without a Rust name"
            );
            continue;
        };
        listed.push(rust);
        let got = rust_constant(rust).unwrap_or_else(|| {
            std::panic!("{name}: Rust constant {rust} is not checked by this test")
        });
        let want = match c.get("rust_value") {
            Some(v) => {
                let why = c["why"].as_str().unwrap_or("");
                assert!(!why.is_empty(), "{name}: Rust keeps {v} without saying why");
                v.as_u64().expect("a number")
            }
            None => value,
        };
        assert_eq!(
            got, want,
            "{name}: Rust's {rust} is {got}, the spec says {want}"
        );
    }
    for name in KNOWN {
        assert!(rust_constant(name).is_some(), "{name}");
        assert!(listed.contains(&name), "{name} is not listed in {path}");
    }
}

// ---------------------------------------------------------------------------
// Time across suspend: the boot offset (`boot`).
// ---------------------------------------------------------------------------

/// `CLOCK_BOOTTIME` + 2^62 now on the simulated machine: where a boot
/// reading should be.
fn boot_truth(tk: &Timekeeper<Sim>) -> u64 {
    let w = tk.clocks.w();
    w.boot_at(w.tau) + TIMELINE_OFFSET_NS
}

/// A timekeeper on the counter, read every 10 ms for 3 s.
fn on_the_counter() -> Timekeeper<Sim> {
    let tk = Timekeeper::new(Sim::new(None));
    run_reads(&tk, 300);
    assert_eq!(tk.state().mode, MODE_COUNTER);
    tk
}

/// A resume is followed at the first update after it: `CLOCK_BOOTTIME`
/// jumps by 30 s while `CLOCK_MONOTONIC` does not; once one state was
/// published since, boot readings are 30 s further ahead of the precise
/// ones, they never step back, and the precise readings go on as before.
/// Both ways a counter goes through a suspend: stopped (it resumes where it
/// was, the precise timeline does not count the suspend), or counting (an
/// invariant TSC in suspend-to-idle: the precise timeline counted it, and
/// the boot timeline must not count it twice). (Without the boot offset in
/// the state, `BootInstant` cannot follow a resume at all; with the offset
/// measured as `CLOCK_BOOTTIME − CLOCK_MONOTONIC`, the counting case
/// jumped by 60 s.)
#[test]
fn a_resume_is_followed_within_one_update() {
    const N: u64 = 30 * S;
    for counting in [false, true] {
        let tk = on_the_counter();
        let (i0, b0) = (tk.read_nanos(false), tk.read_boot_nanos());
        assert!(
            b0.abs_diff(boot_truth(&tk)) < 1_000,
            "{b0} vs {}",
            boot_truth(&tk)
        );
        let mono0 = tk.clocks.mono();
        let before = tk.state();
        tk.clocks.w().suspend(N, counting);
        let mut last = tk.read_boot_nanos();
        assert!(last >= b0);
        let mut updated = false;
        for _ in 0..200 {
            tk.clocks.w().tau += 10_000_000;
            let b = tk.read_boot_nanos();
            assert!(b >= last, "stepped back: {b} < {last}");
            last = b;
            if tk.state() != before {
                updated = true;
                break;
            }
        }
        assert!(updated, "no update within 2 s of reading");
        let (i1, b1) = (tk.read_nanos(false), tk.read_boot_nanos());
        let mono = tk.clocks.mono() - mono0;
        let precise = i1 - i0;
        let expected_precise = if counting { mono + N } else { mono };
        assert!(
            precise.abs_diff(expected_precise) < 100_000,
            "Instant moved {precise}, expected {expected_precise}"
        );
        assert!(
            (b1 - b0).abs_diff(mono + N) < 100_000,
            "counting {counting}: BootInstant moved {}, expected {}",
            b1 - b0,
            mono + N
        );
        assert!(b1.abs_diff(boot_truth(&tk)) < 100_000);
    }
}

/// With the upkeep thread running, the kernel's wake-up at resume (on
/// Linux its clock-was-set `timerfd` fires then) makes its turn update at
/// once: boot readings follow the resume before any reader updates.
#[test]
fn the_upkeep_follows_a_resume_when_woken() {
    let tk = on_the_counter();
    tk.set_upkeep(true);
    tk.upkeep_turn(false);
    let b0 = tk.read_boot_nanos();
    tk.clocks.w().suspend(30 * S, false);
    tk.upkeep_turn(true);
    let b1 = tk.read_boot_nanos();
    // (Not exactly 30 s more: before the update, boot readings were ahead
    // of the boot clock by however far the precise timeline drifted above
    // its lowest since; the update brings them back to it.)
    assert!((b1 - b0).abs_diff(30 * S) < 100_000, "{}", b1 - b0);
    assert!(b1.abs_diff(boot_truth(&tk)) < 100_000);
}

/// Before the first state, and across the warm-up: boot readings start at
/// `CLOCK_BOOTTIME` + 2^62 (the time suspended before the process started
/// included) and never step back while the counter takes over.
#[test]
fn boot_readings_from_the_first_on() {
    let tk = Timekeeper::new(Sim::new(None));
    tk.clocks.w().suspended = 3_600 * S;
    let first = tk.read_boot_nanos();
    assert!(first.abs_diff(boot_truth(&tk)) < 1_000);
    let mut last = first;
    for _ in 0..300 {
        tk.clocks.w().tau += 100_000;
        let b = tk.read_boot_nanos();
        assert!(b >= last);
        last = b;
    }
    assert_eq!(tk.state().mode, MODE_COUNTER);
    assert!(last.abs_diff(boot_truth(&tk)) < 10_000);
}

/// On the OS clock for good (no update comes any more) boot readers read
/// `CLOCK_BOOTTIME` themselves: a resume shows at the next reading. And a
/// demotion from the counter to the OS clock never steps boot readings back.
#[test]
#[cfg(all(
    target_arch = "x86_64",
    any(target_os = "linux", target_os = "android")
))]
fn on_the_os_clock_boot_readings_read_boottime() {
    let tk = Timekeeper::new(Sim::new(None));
    tk.clocks.w().verdict = KernelVerdict::Clocksource(Clocksource::new(b"kvm-clock"));
    let b0 = tk.read_boot_nanos();
    assert!(tk.state().os_for_good());
    tk.clocks.w().suspend(30 * S, false);
    let b1 = tk.read_boot_nanos();
    assert!((b1 - b0).abs_diff(30 * S) < 1_000, "{}", b1 - b0);

    let tk = on_the_counter();
    tk.clocks.w().suspend(10 * S, false);
    let mut last = tk.read_boot_nanos();
    tk.clocks.w().verdict = KernelVerdict::Clocksource(Clocksource::new(b"kvm-clock"));
    for _ in 0..300 {
        tk.clocks.w().tau += 10_000_000;
        let b = tk.read_boot_nanos();
        assert!(b >= last, "stepped back: {b} < {last}");
        last = b;
    }
    assert!(tk.state().os_for_good(), "demoted");
    assert!(last.abs_diff(boot_truth(&tk)) < 100_000);
    tk.clocks.w().suspend(5 * S, false);
    let b = tk.read_boot_nanos();
    assert!((b - last).abs_diff(5 * S) < 100_000, "{}", b - last);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::proptest_cases(64)))]

    /// Whatever the noise of the boot clock's reads (a pair interrupted
    /// between its reads gives a smaller offset), the suspends (counter
    /// stopped or counting), the rate changes and the upkeep: the published
    /// offset never decreases, boot readings never step back, and after
    /// each update they are within a few microseconds of `CLOCK_BOOTTIME`.
    #[test]
    fn the_boot_offset_is_never_lowered(
        seed in proptest::prelude::any::<u64>(),
        jitter in proptest::prop_oneof![proptest::prelude::Just(0u64), 0u64..100_000],
        upkeep in proptest::prelude::any::<bool>(),
    ) {
        let mut rng = Rng(seed | 1);
        let tk = on_the_counter();
        tk.clocks.w().boot_jitter = jitter;
        tk.set_upkeep(upkeep);
        let mut offset = tk.state().boot_offset;
        let mut last = tk.read_boot_nanos();
        // How far the precise timeline is ahead of the boot clock, and the
        // least it was: the boot offset makes up for the least.
        let ahead = |tk: &Timekeeper<Sim>| tk.read_nanos(false).wrapping_sub(boot_truth(tk)) as i64;
        let mut least = ahead(&tk);
        for _ in 0..400 {
            {
                let mut w = tk.clocks.w();
                w.tau += rng.log(1_000, 50_000_000);
                match rng.below(40) {
                    0 => w.suspend(rng.log(1_000, 100 * S), rng.below(2) == 0),
                    1 => w.set_rate(rng.below(400_001) as i64 - 200_000),
                    _ => {}
                }
            }
            if upkeep {
                tk.upkeep_turn(rng.below(4) == 0);
            }
            let b = tk.read_boot_nanos();
            proptest::prop_assert!(b >= last, "stepped back: {} < {}", b, last);
            last = b;
            let s = tk.state();
            proptest::prop_assert!(
                s.boot_offset as i64 >= offset as i64,
                "lowered: {} < {}", s.boot_offset as i64, offset as i64
            );
            offset = s.boot_offset;
            least = least.min(ahead(&tk));
        }
        // A last update, sampled without noise, agrees with the kernel.
        tk.clocks.w().boot_jitter = 0;
        tk.force_update();
        let least = least.min(ahead(&tk));
        let b = tk.read_boot_nanos().wrapping_sub(boot_truth(&tk)) as i64;
        let most = ahead(&tk) - least;
        proptest::prop_assert!(
            (-20_000..=most + 20_000).contains(&b),
            "{} ns from CLOCK_BOOTTIME; the precise timeline drifted {} ns", b, most
        );
    }
}

/// A machine whose counter faults: every counter read panics. Its probe
/// says so (`disabled`, as under `prctl(PR_SET_TSC, PR_TSC_SIGSEGV)`, a
/// refusal every target has), so detection refuses it and no reader may
/// read it — the ordered fast path, which reads the counter before it
/// loads the state, included.
struct FaultingCounter(Sim);

impl Clocks for FaultingCounter {
    fn counter(&self) -> u64 {
        std::panic!("the counter was read although detection refused it")
    }
    fn counter_ordered(&self) -> u64 {
        std::panic!("the counter was read (ordered) although detection refused it")
    }
    fn mono(&self) -> u64 {
        self.0.mono()
    }
    fn real(&self) -> u64 {
        self.0.real()
    }
    fn boot(&self) -> u64 {
        self.0.boot()
    }
    fn observe(&self, fd: &mut detect::VerdictFile) -> Decision {
        let mut d = self.0.observe(fd);
        d.probe.disabled = true;
        d.fallback = detect::decide(&d.probe, self.0.verdict(fd), d.env);
        assert!(d.fallback.is_some(), "a disabled counter must be refused");
        d
    }
    fn verdict(&self, fd: &mut detect::VerdictFile) -> KernelVerdict {
        self.0.verdict(fd)
    }
}

#[test]
fn no_reader_touches_a_refused_counter() {
    let tk = Timekeeper::new(FaultingCounter(Sim::new(None)));
    let mut last = 0;
    for i in 0..1000 {
        // Both fast paths, before and after the first state, and the wall
        // tier's, which also reads the counter only on a counter state.
        let r = tk.read_nanos(i % 2 == 0);
        assert!(r >= last, "reading {i} went back: {r} < {last}");
        last = r;
        let _ = tk.unix_nanos();
    }
    assert_eq!(tk.state().mode, crate::timekeeper::state::MODE_OS);
    assert!(!tk.counter_read.load(Ordering::Relaxed));
}
