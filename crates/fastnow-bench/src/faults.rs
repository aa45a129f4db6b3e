//! Clock faults injected into the real kernel, and what fastnow does under
//! them: the NTP frequency corrections (`adjtimex(ADJ_FREQUENCY)`), tick
//! slews (`ADJ_TICK`), steps of the system clock (`clock_settime`) and the
//! kernel dropping the TSC as its clocksource (sysfs) that break clocks in
//! production. Each event restores the machine's clock in a guard, even when
//! a measurement panics. Shared by `make test-faults` (which asserts the
//! bounds `spec/SEMANTICS.md` promises) and `fastnow report --faults`.
//!
//! Needs `CAP_SYS_TIME` (root); [`available`] says why not otherwise.
#![cfg(target_os = "linux")]

use crate::{clock_gettime_ns, wall_error_ns};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// `ADJ_FREQUENCY` units: parts per million in 16.16 fixed point.
pub const PPM: i64 = 65_536;
const SYSFS: &str = "/sys/devices/system/clocksource/clocksource0";

/// What the kernel's clock discipline is set to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Discipline {
    /// `timex.freq`, ppm × 65536.
    pub freq: i64,
    /// `timex.tick`, µs per tick (10000 at 100 Hz… the nominal value).
    pub tick: i64,
}

fn adjtimex(modes: u32, freq: i64, tick: i64) -> std::io::Result<Discipline> {
    // SAFETY: a zeroed timex is valid input; adjtimex writes the current
    // values back into it.
    let mut tx: libc::timex = unsafe { std::mem::zeroed() };
    tx.modes = modes;
    tx.freq = freq as libc::c_long;
    tx.tick = tick as libc::c_long;
    // SAFETY: `tx` is a valid, writable timex.
    if unsafe { libc::adjtimex(&mut tx) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(Discipline {
        freq: tx.freq as i64,
        tick: tx.tick as i64,
    })
}

/// The kernel's current discipline (read-only; no privilege needed).
pub fn discipline() -> std::io::Result<Discipline> {
    adjtimex(0, 0, 0)
}

/// Whether this process may inject faults, or why not.
pub fn available() -> Result<(), String> {
    let now = discipline().map_err(|e| format!("adjtimex: {e}"))?;
    adjtimex(libc::ADJ_FREQUENCY, now.freq, 0)
        .map(|_| ())
        .map_err(|e| format!("adjtimex cannot set the frequency ({e}): needs CAP_SYS_TIME (root)"))
}

/// Restores the discipline it found when dropped.
pub struct DisciplineGuard(Discipline);

impl DisciplineGuard {
    pub fn new() -> std::io::Result<DisciplineGuard> {
        discipline().map(DisciplineGuard)
    }

    /// Sets the frequency correction, in ppm (the kernel allows ±500).
    pub fn set_ppm(&self, ppm: i64) -> std::io::Result<()> {
        adjtimex(libc::ADJ_FREQUENCY, ppm * PPM, 0).map(|_| ())
    }

    /// Sets the tick length, in µs per tick (nominal 10000; 10080 is a
    /// 0.8 % faster clock).
    pub fn set_tick(&self, tick: i64) -> std::io::Result<()> {
        adjtimex(libc::ADJ_TICK, 0, tick).map(|_| ())
    }
}

/// How long fastnow is given to follow a rate change before an event that
/// needs a settled rate (the bounds "from 3 s on" hold by then).
const SETTLE: Duration = Duration::from_secs(4);

/// Puts back the discipline the machine had, and when that is a rate
/// change of its own (an NTP daemon's correction, or a previous run killed
/// before its guard ran), waits for fastnow to follow it: the next events
/// measure intervals across them, and would count the catching up as
/// their error (500 µs over a second after an unseen 500 ppm).
fn settle_after_restore(guard: DisciplineGuard, progress: &mut impl FnMut(&str)) {
    let found = guard.0;
    drop(guard);
    if found.freq != 0 || found.tick != NOMINAL_TICK {
        progress(&format!(
            "the machine's own discipline put back (frequency {:+.3} ppm, tick {}): {} s to follow it",
            found.freq as f64 / PPM as f64,
            found.tick,
            SETTLE.as_secs()
        ));
        std::thread::sleep(SETTLE);
    }
}

/// `timex.tick` with no slew: 10^6 / USER_HZ (100).
const NOMINAL_TICK: i64 = 10_000;

impl Drop for DisciplineGuard {
    fn drop(&mut self) {
        let modes = libc::ADJ_FREQUENCY | libc::ADJ_TICK;
        let _ = adjtimex(modes, self.0.freq, self.0.tick);
    }
}

/// Steps `CLOCK_REALTIME` by `ns`; steps it back by the same amount when
/// dropped.
pub struct StepGuard(i64);

fn step_realtime(ns: i64) -> std::io::Result<()> {
    let now = clock_gettime_ns(libc::CLOCK_REALTIME) as i128 + ns as i128;
    let ts = libc::timespec {
        tv_sec: (now / 1_000_000_000) as libc::time_t,
        tv_nsec: (now % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: a valid timespec.
    if unsafe { libc::clock_settime(libc::CLOCK_REALTIME, &ts) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

impl StepGuard {
    pub fn step(ns: i64) -> std::io::Result<StepGuard> {
        step_realtime(ns).map(|_| StepGuard(ns))
    }
}

impl Drop for StepGuard {
    fn drop(&mut self) {
        let _ = step_realtime(-self.0);
    }
}

/// Switches the kernel's clocksource; switches it back when dropped.
pub struct ClocksourceGuard(String);

/// The kernel's current and available clocksources.
pub fn clocksources() -> std::io::Result<(String, Vec<String>)> {
    let current = std::fs::read_to_string(format!("{SYSFS}/current_clocksource"))?;
    let available = std::fs::read_to_string(format!("{SYSFS}/available_clocksource"))?;
    Ok((
        current.trim().to_string(),
        available.split_whitespace().map(str::to_string).collect(),
    ))
}

impl ClocksourceGuard {
    pub fn switch_to(name: &str) -> std::io::Result<ClocksourceGuard> {
        let (current, _) = clocksources()?;
        std::fs::write(format!("{SYSFS}/current_clocksource"), name)?;
        Ok(ClocksourceGuard(current))
    }
}

impl Drop for ClocksourceGuard {
    fn drop(&mut self) {
        let _ = std::fs::write(format!("{SYSFS}/current_clocksource"), &self.0);
    }
}

/// A fastnow reading and `CLOCK_MONOTONIC` at the same moment (the tightest
/// of 5 brackets; the reading matched to the midpoint).
pub fn paired() -> (u64, u64) {
    let mut best = (u64::MAX, 0, 0);
    for _ in 0..5 {
        let a = clock_gettime_ns(libc::CLOCK_MONOTONIC);
        let ours = fastnow::OrderedInstant::now().as_nanos();
        let b = clock_gettime_ns(libc::CLOCK_MONOTONIC);
        if b - a < best.0 {
            best = (b - a, ours, a + (b - a) / 2);
        }
    }
    (best.1, best.2)
}

/// How far apart, in counter ticks, the counters of two cores may read at one
/// moment. A hypervisor gives each virtual CPU its own counter offset, and
/// they can disagree by a few ticks that the kernel's check at boot does not
/// see: a reading taken on one core after a reading on another can then be
/// below it by that much, with bare ordered counter reads and no fastnow
/// code at all (`counter-skew` measures it; BENCHMARKS.md, "Cross-core
/// counter agreement"). The checkers count violations up to this far apart;
/// any larger one is fastnow's, and fails the bound.
pub const COUNTER_AGREEMENT_TICKS: u64 = 16;

/// [`COUNTER_AGREEMENT_TICKS`] in nanoseconds at the counter's frequency.
pub fn counter_agreement_ns() -> u64 {
    match fastnow::clock_info().freq_hz {
        0 => COUNTER_AGREEMENT_TICKS,
        hz => (COUNTER_AGREEMENT_TICKS * 1_000_000_000).div_ceil(hz),
    }
}

/// What the checkers saw: strict violations apart by size, and steps back
/// on one thread (which no disagreement between cores excuses: a thread
/// moves between cores in microseconds, far longer than the counters
/// disagree).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Violations {
    /// Strict violations larger than the cores' counters may disagree, and
    /// every step back on one thread: fastnow's own.
    pub beyond: u64,
    /// Within it, and the largest of those, ns.
    pub within: u64,
    pub worst_within_ns: u64,
    /// The line between the two ([`counter_agreement_ns`]).
    pub agreement_ns: u64,
}

impl Violations {
    fn new(agreement_ns: u64) -> Violations {
        Violations {
            agreement_ns,
            ..Violations::default()
        }
    }

    /// Counts a reading `later` of one thread, taken after `earlier`.
    fn note_same_thread(&mut self, earlier: u64, later: u64) {
        self.beyond += u64::from(later < earlier);
    }

    /// Counts a reading `later` taken after a reading `earlier` of another
    /// thread.
    fn note(&mut self, earlier: u64, later: u64) {
        if later >= earlier {
            return;
        }
        let by = earlier - later;
        if by > self.agreement_ns {
            self.beyond += 1;
        } else {
            self.within += 1;
            self.worst_within_ns = self.worst_within_ns.max(by);
        }
    }

    fn merge(self, o: Violations) -> Violations {
        Violations {
            beyond: self.beyond + o.beyond,
            within: self.within + o.within,
            worst_within_ns: self.worst_within_ns.max(o.worst_within_ns),
            agreement_ns: self.agreement_ns,
        }
    }

    /// The bound's row: none beyond the counters' agreement.
    pub fn check(&self) -> Check {
        let mut what = format!(
            "steps back + strict violations by more than the cores' counters may disagree ({} ns)",
            self.agreement_ns
        );
        if self.within > 0 {
            what += &format!(
                "; {} within it, up to {} ns",
                self.within, self.worst_within_ns
            );
        }
        Check::new(what, "", Some(self.beyond as f64), 0.0)
    }
}

/// Readers that check fastnow's guarantees while an event happens: one
/// thread publishes `MonotonicInstant` readings, another loads them with
/// Acquire and reads again (a smaller reading is a strict violation), and
/// both check their own `Instant` readings never decrease.
pub struct Checkers {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<Violations>>,
    agreement_ns: u64,
}

impl Checkers {
    pub fn start() -> Checkers {
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(AtomicU64::new(0));
        let agreement_ns = counter_agreement_ns();
        let threads = (0..2)
            .map(|role| {
                let (stop, shared) = (stop.clone(), shared.clone());
                std::thread::spawn(move || {
                    let mut seen_wrong = Violations::new(agreement_ns);
                    let mut last = fastnow::Instant::now();
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..1_000 {
                            if role == 0 {
                                let m = fastnow::MonotonicInstant::now().as_nanos();
                                shared.store(m, Ordering::Release);
                            } else {
                                let seen = shared.load(Ordering::Acquire);
                                let m = fastnow::MonotonicInstant::now().as_nanos();
                                seen_wrong.note(seen, m);
                            }
                            let now = fastnow::Instant::now();
                            seen_wrong.note_same_thread(last.as_nanos(), now.as_nanos());
                            last = now;
                        }
                        // Leave the measuring thread some CPU on two cores.
                        std::thread::sleep(Duration::from_micros(200));
                    }
                    seen_wrong
                })
            })
            .collect();
        Checkers {
            stop,
            threads,
            agreement_ns,
        }
    }

    /// Strict violations and per-thread steps back, apart by size.
    pub fn finish(self) -> Violations {
        self.stop.store(true, Ordering::Relaxed);
        self.threads
            .into_iter()
            .map(|t| t.join().unwrap())
            .fold(Violations::new(self.agreement_ns), Violations::merge)
    }
}

/// What one rate event did to fastnow.
#[derive(Clone, Debug, Default)]
pub struct RateOutcome {
    pub event: String,
    /// Largest |wall error| before the event (steady state), ns.
    pub wall_steady_ns: i64,
    /// Largest |wall error| in the first 3 s after it, ns.
    pub wall_first_ns: i64,
    /// Largest |wall error| from 3 s after it to the end, ns.
    pub wall_after_ns: i64,
    /// Largest |1 s interval error| against CLOCK_MONOTONIC from 3 s after
    /// the event, ppm.
    pub interval_after_ppm: f64,
    pub violations: Violations,
}

/// Runs `change` (a rate change of the kernel's clock) after `before` of
/// steady state and measures for `after`.
pub fn rate_event(
    event: &str,
    before: Duration,
    after: Duration,
    change: impl FnOnce(),
) -> RateOutcome {
    let mut out = RateOutcome {
        event: event.to_string(),
        ..RateOutcome::default()
    };
    let checkers = Checkers::start();
    let start = std::time::Instant::now();
    while start.elapsed() < before {
        out.wall_steady_ns = out.wall_steady_ns.max(wall_error_ns().abs());
        std::thread::sleep(Duration::from_millis(1));
    }
    change();
    let changed = std::time::Instant::now();
    let mut last_pair = None::<(u64, u64, Duration)>;
    while changed.elapsed() < after {
        let since = changed.elapsed();
        let err = wall_error_ns().abs();
        if since < Duration::from_secs(3) {
            out.wall_first_ns = out.wall_first_ns.max(err);
        } else {
            out.wall_after_ns = out.wall_after_ns.max(err);
            let due = !matches!(last_pair, Some((_, _, at)) if since < at + Duration::from_secs(1));
            if due {
                let (ours, mono) = paired();
                if let Some((o0, m0, _)) = last_pair {
                    let ppm = ((ours - o0) as f64 - (mono - m0) as f64) / (mono - m0) as f64 * 1e6;
                    out.interval_after_ppm = out.interval_after_ppm.max(ppm.abs());
                }
                last_pair = Some((ours, mono, since));
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    out.violations = checkers.finish();
    out
}

/// How long after a step of the system clock the wall tier agreed with it
/// again (within 2 µs), up to `limit`; `None` if it did not.
pub fn step_followed_after(step_ns: i64, limit: Duration) -> std::io::Result<Option<Duration>> {
    // Settle first: the wall tier agrees with the clock.
    std::thread::sleep(Duration::from_millis(20));
    let _guard = StepGuard::step(step_ns)?;
    let stepped = std::time::Instant::now();
    let followed = loop {
        if wall_error_ns().abs() < 2_000 {
            break Some(stepped.elapsed());
        }
        if stepped.elapsed() > limit {
            break None;
        }
        std::thread::sleep(Duration::from_micros(100));
    };
    Ok(followed)
}

/// What the kernel dropping the counter did to fastnow.
#[derive(Clone, Debug, Default)]
pub struct DemotionOutcome {
    /// How long until fastnow read the OS clock.
    pub noticed_after: Option<Duration>,
    /// An interval across the switch minus CLOCK_MONOTONIC's, ns.
    pub interval_error_ns: i64,
    pub violations: Violations,
    pub info: String,
}

/// Switches the kernel's clocksource to `other` and measures; switches back.
pub fn demotion(other: &str, limit: Duration) -> std::io::Result<DemotionOutcome> {
    let checkers = Checkers::start();
    let (ours0, mono0) = paired();
    let guard = ClocksourceGuard::switch_to(other)?;
    let switched = std::time::Instant::now();
    let mut out = DemotionOutcome::default();
    while switched.elapsed() < limit {
        let _ = fastnow::Instant::now();
        let _ = fastnow::unix_nanos();
        if fastnow::clock_info().source == fastnow::Source::Os {
            out.noticed_after = Some(switched.elapsed());
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(50));
    let (ours1, mono1) = paired();
    drop(guard);
    out.interval_error_ns = (ours1 - ours0) as i64 - (mono1 - mono0) as i64;
    out.violations = checkers.finish();
    out.info = fastnow::clock_info().to_string();
    Ok(out)
}

/// One bound checked after an event: the measured value (`None`: the event
/// did not complete, e.g. a step never followed) against its bound.
#[derive(Clone, Debug)]
pub struct Check {
    pub what: String,
    pub unit: &'static str,
    pub value: Option<f64>,
    pub bound: f64,
}

impl Check {
    fn new(what: impl Into<String>, unit: &'static str, value: Option<f64>, bound: f64) -> Check {
        Check {
            what: what.into(),
            unit,
            value,
            bound,
        }
    }

    /// A check that failed because the event could not be made.
    fn failed(what: String) -> Check {
        Check::new(what, "", None, 0.0)
    }

    pub fn ok(&self) -> bool {
        self.value.is_some_and(|v| v <= self.bound)
    }
}

/// One fault and what fastnow did under it.
#[derive(Clone, Debug)]
pub struct Event {
    pub name: String,
    /// `rate`, `step` or `clocksource`.
    pub kind: &'static str,
    pub checks: Vec<Check>,
}

impl Event {
    pub fn ok(&self) -> bool {
        self.checks.iter().all(Check::ok)
    }
}

/// The bounds `spec/SEMANTICS.md` promises: the wall tier within 1 µs in
/// steady state; right after a rate change, within the change over one
/// resync interval (1 s) plus 1 µs; from 3 s after it, within 2 µs (20 µs
/// after a 0.8 % tick slew); 1 s intervals within 1 ppm of
/// `CLOCK_MONOTONIC`'s from 3 s on; steps followed within one interval
/// (10 ms while upkeep runs); the kernel's change of mind noticed within a
/// second (plus the alternation of the checks without upkeep), an interval
/// across it within 10 µs; no step back, ever, and no strict violation by
/// more than the cores' counters disagree ([`COUNTER_AGREEMENT_TICKS`]).
const STEADY_WALL_NS: f64 = 1_000.0;
const INTERVAL_PPM: f64 = 1.0;

/// The rate events: (name, the change, its size in ppm, the wall bound from
/// 3 s on in ns).
type Change = fn(&DisciplineGuard) -> std::io::Result<()>;
const RATE_EVENTS: [(&str, Change, f64, f64); 4] = [
    (
        "frequency +500 ppm (ADJ_FREQUENCY)",
        |g| g.set_ppm(500),
        500.0,
        2_000.0,
    ),
    ("frequency back to 0", |g| g.set_ppm(0), 500.0, 2_000.0),
    (
        "tick 10000 → 10080 (0.8 % slew)",
        |g| g.set_tick(10_080),
        8_000.0,
        20_000.0,
    ),
    (
        "tick back to 10000",
        |g| g.set_tick(10_000),
        8_000.0,
        20_000.0,
    ),
];

/// Runs every event — the four rate changes, a step of +1 s and one of
/// −1 s, and last (it moves fastnow to the OS clock for good) the kernel
/// dropping the TSC where another clocksource is available — and checks
/// each against its bound. `upkeep`: whether the upkeep thread runs (the
/// caller starts it); `quick`: 4 s after each rate change instead of 12
/// (too short for the bounds from 3 s on, which are then left out).
/// `progress` is told each event's name before it runs.
pub fn run(upkeep: bool, quick: bool, mut progress: impl FnMut(&str)) -> Vec<Event> {
    let mut events = Vec::new();
    let after = Duration::from_secs(if quick { 4 } else { 12 });
    match DisciplineGuard::new() {
        Err(e) => events.push(Event {
            name: "rate changes".into(),
            kind: "rate",
            checks: vec![Check::failed(format!("adjtimex cannot be read: {e}"))],
        }),
        Ok(guard) => {
            for (name, change, ppm, settled) in RATE_EVENTS {
                progress(name);
                let mut failed = None;
                let o = rate_event(name, Duration::from_secs(2), after, || {
                    failed = change(&guard).err();
                });
                let mut checks = match failed {
                    Some(e) => vec![Check::failed(format!("adjtimex failed: {e}"))],
                    None => vec![
                        Check::new(
                            "wall error before (steady state)",
                            "ns",
                            Some(o.wall_steady_ns as f64),
                            STEADY_WALL_NS,
                        ),
                        Check::new(
                            "wall error in the first 3 s (change × 1 s + 1 µs)",
                            "ns",
                            Some(o.wall_first_ns as f64),
                            ppm * 1_000.0 + 1_000.0,
                        ),
                    ],
                };
                if !quick && checks.len() > 1 {
                    checks.push(Check::new(
                        "wall error from 3 s on",
                        "ns",
                        Some(o.wall_after_ns as f64),
                        settled,
                    ));
                    checks.push(Check::new(
                        "1 s intervals against CLOCK_MONOTONIC from 3 s on",
                        "ppm",
                        Some(o.interval_after_ppm),
                        INTERVAL_PPM,
                    ));
                }
                checks.push(o.violations.check());
                events.push(Event {
                    name: name.into(),
                    kind: "rate",
                    checks,
                });
            }
            settle_after_restore(guard, &mut progress);
        }
    }

    let limit = if upkeep {
        Duration::from_millis(10)
    } else {
        Duration::from_millis(1_050)
    };
    for step in [1_000_000_000i64, -1_000_000_000] {
        let name = format!("CLOCK_REALTIME stepped {:+} s", step / 1_000_000_000);
        progress(&name);
        let checks = match step_followed_after(step, Duration::from_secs(3)) {
            Ok(d) => vec![Check::new(
                "followed (within 2 µs) after",
                "ms",
                d.map(|d| d.as_secs_f64() * 1e3),
                limit.as_secs_f64() * 1e3,
            )],
            Err(e) => vec![Check::failed(format!("clock_settime failed: {e}"))],
        };
        events.push(Event {
            name,
            kind: "step",
            checks,
        });
    }

    progress("the kernel drops the TSC");
    let noticed = if upkeep { 1_100.0 } else { 1_600.0 };
    let (name, checks) = match clocksources() {
        Ok((current, available)) => match available.iter().find(|c| **c != current) {
            Some(other) if current == "tsc" => {
                let checks = match demotion(other, Duration::from_secs(3)) {
                    Ok(o) => vec![
                        Check::new("noticed after", "ms", o.noticed_after.map(|d| d.as_secs_f64() * 1e3), noticed),
                        Check::new("an interval across the switch − CLOCK_MONOTONIC's", "ns", Some(o.interval_error_ns.unsigned_abs() as f64), 10_000.0),
                        o.violations.check(),
                    ],
                    Err(e) => vec![Check::failed(format!("cannot switch the clocksource: {e}"))],
                };
                (format!("clocksource tsc → {other}"), checks)
            }
            _ => (
                format!("clocksource switch skipped: no other clocksource to switch to (current {current}, available {})", available.join(" ")),
                Vec::new(),
            ),
        },
        Err(e) => (format!("clocksource switch skipped: sysfs unreadable ({e})"), Vec::new()),
    };
    events.push(Event {
        name,
        kind: "clocksource",
        checks,
    });
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reading at or above the one it follows is no violation; one below
    /// it counts within the counters' agreement up to it, beyond it past it,
    /// and only beyond ones fail the bound.
    #[test]
    fn violations_apart_by_size() {
        let mut v = Violations::new(7);
        v.note(100, 100);
        v.note(100, 101);
        assert_eq!(v, Violations::new(7));
        v.note(100, 93); // 7 below: within
        v.note(100, 98);
        assert_eq!((v.beyond, v.within, v.worst_within_ns), (0, 2, 7));
        assert!(v.check().ok(), "{:?}", v.check());
        v.note(100, 92); // 8 below: beyond
        assert_eq!((v.beyond, v.within), (1, 2));
        assert!(!v.check().ok());
        let merged = Violations::new(7).merge(v).merge(v);
        assert_eq!(
            (merged.beyond, merged.within, merged.worst_within_ns),
            (2, 4, 7)
        );
        // On one thread, any step back is fastnow's.
        let mut one = Violations::new(7);
        one.note_same_thread(100, 100);
        assert_eq!(one.beyond, 0);
        one.note_same_thread(100, 99);
        assert_eq!((one.beyond, one.within), (1, 0));
    }
}
