//! The one state every clock reads, and its one writer.
//!
//! Like the Linux kernel's timekeeping core, fastnow keeps everything a
//! reader needs — which source to read, the line that converts the counter,
//! the offsets of the clocks kept from it — in one published state, which
//! one writer at a time replaces and readers only load (through a latch, so
//! a reader never waits, even in a signal handler that interrupted the
//! writer). Readings count from 2^62 ns before `CLOCK_MONOTONIC`'s zero
//! ([`TIMELINE_OFFSET_NS`]): the first state reads that clock plus the
//! offset, and every later one continues it. As the kernel's boot and TAI
//! clocks are its monotonic clock plus an offset, every clock besides the
//! precise timeline (boot, wall) is the precise reading plus an offset word
//! of the same state, read by one read base.
//!
//! Here: the [`Timekeeper`], what it holds, the state machine's constants,
//! and below them the few functions the tiers, the upkeep and the
//! introspection call (nothing else of this module is visible outside it).
//! `state` has the state's layout and conversion, `read` the read base,
//! `offsets` the clocks kept as offsets and the writer's bookkeeping of
//! them, `writer` and `switch` the state updates, `latch` the publication,
//! `calibrate` the rate measurement, `line` the fixed-point conversion and
//! `verdict` what happens while the kernel's verdict cannot be read. A
//! state update falls on the reader that reaches a piece's `trigger`, or,
//! while the upkeep thread runs, on that thread alone (spec/SEMANTICS.md,
//! "Who updates"; BENCHMARKS.md, "State updates on a reader", has what each
//! costs). Tests drive it all on simulated clocks through [`Clocks`].

mod calibrate;
mod latch;
mod line;
mod offsets;
mod read;
mod state;
mod switch;
#[cfg(test)]
mod tests;
mod verdict;
mod writer;

pub(crate) use offsets::Clock;

use crate::source::arch::{self, FreqOrigin};
use crate::source::detect::{self, Decision, Fallback};
pub(crate) use crate::source::os::TIMELINE_OFFSET_NS;
use crate::source::os::{self, ProcessLock};
use crate::timekeeper::calibrate::{Sample, Window};
use crate::timekeeper::latch::Latch;
use crate::timekeeper::line::Line;
use crate::timekeeper::state::{word, Converted, State, MODE_COUNTER, MODE_NONE, MODE_OS};
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// How far ahead of the old source a new one starts, beyond twice the
/// sample's bracket (see `switch`): the bracket bounds the error of
/// matching the two sources, this covers the rate's error over the few
/// hundred microseconds between sample and take-over.
const MARGIN_NS: u64 = 100;
/// How far the counter line may stray from `CLOCK_MONOTONIC` plus the
/// offset the timeline keeps to it (`Keeper::mono_offset`) before an update
/// re-bases it: far above what calibration ever strays by (nanoseconds to
/// microseconds), far below what a suspend the counter counted, a counter
/// reset or a migration's jump moves it by (see `writer`'s `rebase`).
const REBASE_NS: u64 = 1_000_000;
/// While a re-base settles — from a re-base until an update finds the
/// timeline this close to `CLOCK_MONOTONIC` plus its offset (beyond the
/// sample's width) — updates re-base again past this instead of
/// `REBASE_NS`: the piece that re-based had the rate measured before the
/// jump, which may be wrong since (a migration to another counter rate),
/// and what it strays by before the new rate is measured would otherwise
/// stay in the timeline.
const SETTLE_NS: u64 = 10_000;
/// The rate error, in parts per billion, that the stated error of a
/// conversion between the timelines and the kernel's clocks allows for over
/// the time since its offset was measured (`offsets`, `conversion_error`):
/// 1 ppm, what 1 s intervals are held to from 3 s after a change of
/// `CLOCK_MONOTONIC`'s rate (in steady state they agree to a few hundredths
/// of a ppm; in the seconds after a change the rate in use may be off by
/// the whole change).
const CONVERSION_RATE_ERROR_PPB: u64 = 1_000;
/// How far below the publishing sample's counter value a reader that loaded
/// a state may still read the counter (`State::floor`): other cores'
/// counters may be a few ticks behind, never this much unless the counter
/// went back.
const FLOOR_SLACK_NS: u64 = 100_000;
/// Samples in a row whose every bracket was wide that ask for the kernel's
/// verdict (see `Writer::note_slow_sample`).
const SLOW_SAMPLES_FOR_A_CHECK: u32 = 3;
/// How many more samples a source switch takes when one was preempted.
const SWITCH_SAMPLE_TRIES: u32 = 8;
/// First sync period; periods then follow the rate window, up to
/// `MAX_PERIOD_NS`. Also the shortest period: no piece's fast path lasts
/// less than this from the update that publishes it, whatever the wall
/// resync interval, so readers update at most about once per period and
/// the read path stays a load.
const MIN_PERIOD_NS: u64 = 1_000_000;
/// Longest time between two state updates.
const MAX_PERIOD_NS: u64 = 1_000_000_000;
/// Without upkeep, readers update at least this often (a sample and a
/// clocksource check alternate, so each comes once a second).
const READER_PERIOD_NS: u64 = 500_000_000;
/// The upkeep thread updates at least this often: a new rate takes over at
/// the end of the piece in use, so short pieces let it take over soon
/// after it is measured. Each of its updates samples and re-checks the
/// kernel's clocksource (clock reads and one `pread`, on the upkeep thread
/// four times a second; readers pay for nothing).
const UPKEEP_PERIOD_NS: u64 = 250_000_000;
/// How often the kernel's verdict on the counter is read again.
const CHECK_PERIOD_NS: u64 = 1_000_000_000;
/// Longest grace between `trigger` and `end`.
const MAX_GRACE_NS: u64 = 2_000_000;
/// How long after the process's first moment readers taken while the first
/// state is being published read `CLOCK_MONOTONIC` at its full rate (see
/// `Timekeeper::before_first`): the first state's span.
const FIRST_SPAN_NS: u64 = MIN_PERIOD_NS + grace(MIN_PERIOD_NS);
/// While upkeep runs, readers only update if it is this late.
const UPKEEP_SLACK_NS: u64 = 2_000_000;
/// The default wall resync interval (`wall::DEFAULT_RESYNC` publishes it).
pub(crate) const DEFAULT_WALL_INTERVAL_NS: u64 = 1_000_000_000;
/// Shortest wall resync interval (see `set_wall_resync_interval`): the
/// wall clock is re-anchored at a state update, and updates come at most
/// once per `MIN_PERIOD_NS`.
const MIN_WALL_INTERVAL_NS: u64 = MIN_PERIOD_NS;
/// Longest wall resync interval (see `set_wall_resync_interval`).
const MAX_WALL_INTERVAL_NS: u64 = 1 << 40;
/// The wall clock is kept as an offset only for times well inside the
/// `u64` range of Unix nanoseconds (so a reading a little before or after
/// its anchor can neither wrap below 1970 nor above 2554); otherwise the
/// wall reads `CLOCK_REALTIME`.
const WALL_GUARD_NS: u64 = 1 << 41;

/// How far ahead of the old source a new one starts: [`MARGIN_NS`] plus the
/// sample's bracket, twice (see the module docs).
fn switch_margin(s: &Sample) -> u64 {
    MARGIN_NS + 2 * s.width.min(1_000_000)
}

/// Grace between `trigger` and `end` for a period.
const fn grace(period_ns: u64) -> u64 {
    let g = period_ns / 4;
    if g < MAX_GRACE_NS {
        g
    } else {
        MAX_GRACE_NS
    }
}

/// What a timekeeper reads: the machine's counter and clocks, or, in
/// tests, simulated ones.
trait Clocks: Sync {
    /// The bare counter.
    fn counter(&self) -> u64;
    /// The counter, read after every preceding load.
    fn counter_ordered(&self) -> u64;
    /// `CLOCK_MONOTONIC` nanoseconds.
    fn mono(&self) -> u64;
    /// `CLOCK_REALTIME` nanoseconds (saturated to the `u64` range).
    fn real(&self) -> u64;
    /// `CLOCK_BOOTTIME` nanoseconds: `mono`'s clock plus the time the
    /// machine spent suspended (where the OS has no such clock, `mono`).
    fn boot(&self) -> u64;
    /// Detection: what the hardware, the kernel and the environment say.
    fn observe(&self, f: &mut detect::VerdictFile) -> Decision;
    /// The kernel's verdict on the counter, read again.
    fn verdict(&self, f: &mut detect::VerdictFile) -> detect::KernelVerdict;
}

/// The machine's clocks.
struct Machine;

impl Clocks for Machine {
    #[inline(always)]
    fn counter(&self) -> u64 {
        arch::ticks()
    }
    #[inline(always)]
    fn counter_ordered(&self) -> u64 {
        arch::ticks_ordered_auto()
    }
    #[inline(always)]
    fn mono(&self) -> u64 {
        os::monotonic_nanos()
    }
    #[inline(always)]
    fn real(&self) -> u64 {
        os::realtime_nanos()
    }
    #[inline(always)]
    fn boot(&self) -> u64 {
        os::boottime_nanos()
    }
    fn observe(&self, f: &mut detect::VerdictFile) -> Decision {
        let decision = detect::observe(f);
        arch::ORDERED_ALT.store(decision.probe.use_alt, Ordering::Relaxed);
        decision
    }
    fn verdict(&self, f: &mut detect::VerdictFile) -> detect::KernelVerdict {
        detect::kernel_verdict(f)
    }
}

/// A timekeeper: the published state, the writers' lock, the writer's
/// bookkeeping and the clocks it samples. The process has one, [`TK`];
/// tests build others on simulated clocks.
struct Timekeeper<C: Clocks = Machine> {
    state: Latch<{ word::COUNT }>,
    lock: ProcessLock,
    keeper: KeeperCell,
    clocks: C,
    /// Whether the upkeep thread runs (it then does the state updates).
    upkeep: AtomicBool,
    /// The `CLOCK_MONOTONIC` time at which the upkeep thread should update next.
    upkeep_due: AtomicU64,
    /// The wall resync interval (0 = default).
    wall_interval: AtomicU64,
    /// The process's first moment (0: none yet); see `before_first`.
    first_mono: AtomicU64,
    /// The boot offset readers and the first state agree on
    /// (`offsets::NO_OFFSET`: none yet); see `first_boot_offset`.
    first_boot: AtomicU64,
    /// How many readings returned a lower bound (a writer held the lock
    /// past a state's end): readings the clock slowed for.
    slowed: AtomicU64,
    /// Set before a counter state is published: from then on reading the
    /// counter cannot fault (detection has accepted it), so the ordered
    /// fast path may read it before loading the state (see
    /// `Timekeeper::read_ordered`). Cleared on the OS clock for good, where
    /// that read would be wasted.
    counter_read: AtomicBool,
}

/// The process's timekeeper.
static TK: Timekeeper<Machine> = Timekeeper::new(Machine);

impl<C: Clocks> Timekeeper<C> {
    const fn new(clocks: C) -> Timekeeper<C> {
        Timekeeper {
            state: Latch::new(),
            lock: ProcessLock::new(),
            keeper: KeeperCell::new(),
            clocks,
            upkeep: AtomicBool::new(false),
            upkeep_due: AtomicU64::new(0),
            wall_interval: AtomicU64::new(0),
            first_mono: AtomicU64::new(0),
            first_boot: AtomicU64::new(offsets::NO_OFFSET),
            slowed: AtomicU64::new(0),
            counter_read: AtomicBool::new(false),
        }
    }

    /// The published state (all zeros, `MODE_NONE`, before the first).
    fn state(&self) -> State {
        State::from_words(&self.state.snapshot())
    }

    /// The state a reader acts on while another thread publishes the first
    /// one, given its `CLOCK_MONOTONIC` reading: that clock unchanged, up
    /// to [`FIRST_SPAN_NS`] past the process's first moment — the first
    /// reading any thread offered here, agreed through one
    /// compare-and-swap. The detecting thread agrees on the moment before it
    /// samples, and its first state ends no earlier than this one, so the
    /// rule of take-over points holds from the process's first reading on:
    /// a reading taken while the detecting thread was preempted for long
    /// gets this state's lower bound, never a value above what a later
    /// reader gets from the published state.
    fn before_first(&self, mono: u64) -> State {
        let first = match self.first_mono.compare_exchange(
            0,
            mono.max(1),
            Ordering::SeqCst,
            Ordering::SeqCst,
        ) {
            Ok(_) => mono,
            Err(agreed) => agreed,
        };
        let end = first.saturating_add(FIRST_SPAN_NS);
        State {
            mode: MODE_OS,
            trigger: end,
            end,
            os_offset: TIMELINE_OFFSET_NS,
            mono_offset: TIMELINE_OFFSET_NS,
            ..State::default()
        }
    }
}

// The writer's bookkeeping is defined here, beside the `Timekeeper` that
// holds it, rather than in `writer`, so that this file needs nothing from
// the files that build on it.

/// The writer's private bookkeeping, touched only under the writers' lock
/// (and copied out for `clock_info`).
#[derive(Clone, Copy)]
struct Keeper {
    decision: Option<Decision>,
    /// The last state written.
    state: State,
    window: Window,
    /// Tightest bracket seen (a yardstick for preempted ones).
    min_width: u64,
    /// Tightest bracket of a boot offset measurement seen, in ns (`offsets`).
    boot_width: u64,
    period_ns: u64,
    /// The newest accepted rate (the next piece's slope).
    rate: u64,
    suspect: Option<u64>,
    refinements: u32,
    /// The window the rate in use was measured over (0: published frequency).
    window_ns: u64,
    origin: FreqOrigin,
    verdict_file: detect::VerdictFile,
    /// What the attempts to read the kernel's verdict gave (`verdict`).
    verdict_log: verdict::VerdictLog,
    next_check_mono: u64,
    /// The kernel dropped the counter; the switch waits for the current
    /// piece's end (see `demote_at_end`).
    demote_pending: Option<Fallback>,
    first_mono: u64,
    counter_since_mono: Option<u64>,
    demoted_at: Option<u64>,
    /// The timeline less `CLOCK_MONOTONIC` that counter pieces are kept to
    /// (see `REBASE_NS`): what re-bases move the timeline back to.
    mono_offset: u64,
    /// The `CLOCK_MONOTONIC` of the sample that last measured the wall
    /// offset (`offsets`): one kept across a disturbed sample is kept for
    /// at most a resync interval from there.
    wall_at: u64,
    /// The last measurement of the timeline less `CLOCK_MONOTONIC` on the
    /// timeline as it runs now, which a state published from a disturbed
    /// sample keeps (`offsets`); none on the OS clock, and from a re-base
    /// until an undisturbed sample measures it again.
    mono_measured: Option<MonoMeasured>,
    /// The last measurement of the boot timeline less `CLOCK_BOOTTIME`,
    /// which a state whose boot measurement read nothing keeps (`offsets`).
    boot_measured: Option<Measured>,
    /// How fast the timeline drifted from `CLOCK_MONOTONIC` plus its offset
    /// between the last measurements, and between the two before, in ppb
    /// (`offsets`).
    drift_ppb: [u64; 2],
    /// The last re-base, and how many there were.
    last_rebase: Option<Rebase>,
    rebases: u32,
    /// How far a re-base just moved the precise readings forward beyond
    /// the line they were on: the boot offset may come down by as much at
    /// the next publish, and boot readings still never step back (`offsets`).
    boot_lowering: u64,
    /// The kernel's verdict is read at the next update, a reader's included
    /// (a re-base, or samples that show the kernel's clock turned into a
    /// system call; see `Writer::note_slow_sample`).
    check_wanted: bool,
    /// Samples in a row whose every bracket was wide.
    slow_samples: u32,
    /// A re-base came and the timeline is not back in step within
    /// `SETTLE_NS` yet.
    settling: bool,
    /// The next rate measurement is believed as it is: its window began at
    /// a re-base, after the jump, so nothing it spans makes it suspect.
    trust_next: bool,
}

/// The timeline less `CLOCK_MONOTONIC` as an update's sample measured it
/// (`offsets`): the published state's reading at the sample's counter value
/// less the sample's `CLOCK_MONOTONIC`, and what that is good to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct MonoMeasured {
    offset: u64,
    /// The sample's bracket: the offset is within half of it.
    width: u64,
    /// The sample's `CLOCK_MONOTONIC`: the offset drifts from the moment
    /// at the rate's error. 0 where it is exact (`exact`).
    mono: u64,
}

impl MonoMeasured {
    /// An offset that is exact and does not drift: the OS clock's.
    const fn exact(offset: u64) -> MonoMeasured {
        MonoMeasured {
            offset,
            width: 0,
            mono: 0,
        }
    }
}

/// An offset between a timeline and a kernel's clock, and twice what it may
/// be off by (`offsets`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Measured {
    offset: u64,
    width: u64,
}

/// A discontinuity of the counter against `CLOCK_MONOTONIC` that an update
/// found and re-based the timeline across (see `writer`'s `rebase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rebase {
    /// `CLOCK_REALTIME` at the update that found it.
    pub(crate) at_unix_nanos: u64,
    /// How far the counter had moved beyond what `CLOCK_MONOTONIC` did
    /// since the previous update, in nanoseconds (negative: it fell behind,
    /// or went back); `None` when it went back below what readers had
    /// seen (a reset), where the distance means nothing.
    pub(crate) counter_ahead_ns: Option<i64>,
}

impl Keeper {
    /// The rate in use, as a line through 0.
    pub(crate) const fn rate_line(&self) -> Line {
        Line {
            offset: 0,
            slope: self.rate,
        }
    }

    const fn new() -> Keeper {
        Keeper {
            decision: None,
            state: State {
                mode: MODE_NONE,
                takeover: 0,
                trigger: 0,
                end: 0,
                line: Line {
                    offset: 0,
                    slope: 0,
                },
                prev: Line {
                    offset: 0,
                    slope: 0,
                },
                os_offset: 0,
                floor: 0,
                boot_offset: 0,
                wall_offset: 0,
                mono_offset: 0,
                mono_at: 0,
                mono_width: 0,
                mono_drift: 0,
                boot_conversion: 0,
                boot_width: 0,
            },
            window: Window::new(),
            min_width: u64::MAX,
            boot_width: u64::MAX,
            period_ns: MIN_PERIOD_NS,
            rate: 0,
            suspect: None,
            refinements: 0,
            window_ns: 0,
            origin: FreqOrigin::Pending,
            verdict_file: detect::VerdictFile::CLOSED,
            verdict_log: verdict::VerdictLog::NEW,
            next_check_mono: 0,
            demote_pending: None,
            first_mono: 0,
            counter_since_mono: None,
            demoted_at: None,
            mono_offset: TIMELINE_OFFSET_NS,
            wall_at: 0,
            mono_measured: None,
            boot_measured: None,
            drift_ppb: [0; 2],
            last_rebase: None,
            rebases: 0,
            boot_lowering: 0,
            check_wanted: false,
            slow_samples: 0,
            settling: false,
            trust_next: false,
        }
    }
}

/// The writer's bookkeeping, and two copies of it as it was at the last
/// publish, for a child forked while another thread of the parent wrote.
///
/// That child's `live` bookkeeping may be half-updated, and most of it
/// cannot be rebuilt from the published state: the rate window (without
/// which the warm-up would measure nothing and give up the counter for
/// good), the frequency's origin, the demotion's time, the refinements.
/// So each publish first saves `live` into the copy `saved_at` does not
/// point to, then points `saved_at` to it, then writes the state: a fork
/// at any moment leaves one whole copy, saved with the published state or
/// with the one about to be published (see `Writer::from`).
struct KeeperCell {
    live: UnsafeCell<Keeper>,
    saved: [UnsafeCell<Keeper>; 2],
    saved_at: AtomicUsize,
}

// SAFETY: the Keepers are only accessed through `Writer`, which exists only
// while its timekeeper's lock is held by the current thread, so accesses
// never overlap.
unsafe impl Sync for KeeperCell {}

impl KeeperCell {
    const fn new() -> KeeperCell {
        KeeperCell {
            live: UnsafeCell::new(Keeper::new()),
            saved: [
                UnsafeCell::new(Keeper::new()),
                UnsafeCell::new(Keeper::new()),
            ],
            saved_at: AtomicUsize::new(0),
        }
    }
}

// ---------------------------------------------------------------------------
// What the rest of the crate calls: the tiers' readings, the controls, the
// upkeep's turns, and what the introspection reports.
// ---------------------------------------------------------------------------

/// The process's reading of `clock`, from a bare or (`ordered`) an ordered
/// counter read (see `read`); under a mock clock of the `mock` feature that
/// applies to this thread, the mock's.
#[inline(always)]
pub(crate) fn read(clock: Clock, ordered: bool) -> u64 {
    or_mock(clock, || read_real(clock, ordered))
}

/// The machine's reading of `clock`, under a mock too (what a conversion's
/// anchor pairs with another clock).
#[inline(always)]
pub(crate) fn read_real(clock: Clock, ordered: bool) -> u64 {
    match clock {
        Clock::Precise => TK.read::<{ Clock::Precise as u8 }>(ordered),
        Clock::Boot => TK.read::<{ Clock::Boot as u8 }>(ordered),
        Clock::Wall => TK.read::<{ Clock::Wall as u8 }>(ordered),
    }
}

/// A mock clock's reading of `clock` where one applies to this thread (the
/// `mock` feature), else `real()`: the one check that feature adds to a
/// reading (a load of a flag while no mock is installed), and the only
/// place a mock enters. What a tier makes of the process's clocks (a
/// cached value, a strategy of its own) goes through it, so that a mock's
/// readings never reach the process's state.
#[inline(always)]
pub(crate) fn or_mock(clock: Clock, real: impl FnOnce() -> u64) -> u64 {
    #[cfg(feature = "mock")]
    if let Some(m) = crate::mock::readings() {
        return clock.mocked(&m);
    }
    #[cfg(not(feature = "mock"))]
    let _ = clock;
    real()
}

/// Whether the counter is, or is about to be, the source; `None` while
/// another thread is publishing the first state (not known yet).
pub(crate) fn counter_chosen() -> Option<bool> {
    TK.counter_chosen()
}

/// A state update now, which measures every offset again (see
/// [`resync_wall`](crate::resync_wall)).
pub(crate) fn update_now() {
    TK.force_update();
}

/// Sets the wall resync interval (clamped; see
/// [`set_wall_resync_interval`](crate::set_wall_resync_interval)).
pub(crate) fn set_wall_interval(ns: u64) {
    TK.set_wall_interval(ns);
}

/// See [`recalibrate`](crate::recalibrate).
pub(crate) fn recalibrate() {
    TK.recalibrate();
}

/// The upkeep thread's turn (`clock_was_set`: the kernel woke it); returns
/// the `CLOCK_MONOTONIC` time of its next turn.
#[cfg_attr(not(feature = "std"), allow(dead_code))] // the upkeep thread needs std
pub(crate) fn upkeep_turn(clock_was_set: bool) -> u64 {
    TK.upkeep_turn(clock_was_set)
}

/// The upkeep thread started or stopped: the schedule changes.
#[cfg_attr(not(feature = "std"), allow(dead_code))]
pub(crate) fn set_upkeep(running: bool) {
    TK.set_upkeep(running);
}

/// The offsets between the timelines and the kernel's clocks that the
/// published state gives now, and what they are good to (see
/// `conversion`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Conversion {
    /// The precise timeline less `CLOCK_MONOTONIC` (mod 2^64).
    pub(crate) mono_offset: u64,
    /// How far `CLOCK_MONOTONIC + mono_offset` may be from an instant
    /// read now, in ns.
    pub(crate) mono_error: u64,
    /// The boot timeline less `CLOCK_BOOTTIME` (mod 2^64).
    pub(crate) boot_offset: u64,
    /// How far `CLOCK_BOOTTIME + boot_offset` may be from a boot instant
    /// read now, in ns.
    pub(crate) boot_error: u64,
}

/// The process's conversions between its timelines and the kernel's
/// clocks (spec/SEMANTICS.md, "Clock snapshot and the kernel's clocks");
/// publishes the first state if there is none yet. Not mocked: the
/// conversions are between the process's timelines and the machine's
/// clocks.
pub(crate) fn conversion() -> Conversion {
    TK.conversion()
}

/// The counter, read now, where the precise clocks read it (the clock
/// snapshot's counter value); `None` on the OS clock.
pub(crate) fn counter_ticks() -> Option<u64> {
    (TK.state().mode == MODE_COUNTER).then(|| TK.clocks.counter())
}

/// `ns` times a rate error of `ppb` parts per billion, rounded up.
fn rate_error(ns: u64, ppb: u64) -> u64 {
    let e = (u128::from(ns) * u128::from(ppb)).div_ceil(1_000_000_000);
    u64::try_from(e).unwrap_or(u64::MAX)
}

impl<C: Clocks> Timekeeper<C> {
    fn conversion(&self) -> Conversion {
        /// How long a conversion waits for another thread's first publish.
        const FIRST_PUBLISH_WAIT_NS: u64 = 2_000_000;
        if self.state().mode == MODE_NONE {
            let _ = self.read::<{ Clock::Precise as u8 }>(false);
        }
        let mut s = self.state();
        let mut mono = self.clocks.mono();
        // Another thread is publishing the first state: wait for it a
        // little (a first publish takes microseconds), but never for long,
        // as this may run in a signal handler that interrupted it.
        let give_up = mono.saturating_add(FIRST_PUBLISH_WAIT_NS);
        while s.mode == MODE_NONE && mono < give_up {
            core::hint::spin_loop();
            s = self.state();
            mono = self.clocks.mono();
        }
        if s.mode == MODE_NONE {
            // Readings until it lands are CLOCK_MONOTONIC plus the
            // timeline's offset, exactly; the boot conversion is not
            // measured yet, which its error says.
            s = State {
                boot_conversion: TIMELINE_OFFSET_NS,
                boot_width: u64::MAX,
                ..self.before_first(mono)
            };
        }
        // Half the measuring sample's bracket, and the rate's error since
        // (none where the offset is the OS clock's own).
        let drift = if s.mono_at == 0 {
            0
        } else {
            rate_error(mono.abs_diff(s.mono_at), s.mono_drift)
        };
        // Readings that stand still after a re-base are ahead of
        // CLOCK_MONOTONIC plus the offset they resume at, by what they have
        // not caught up yet; boot readings were measured against them as
        // they stood, and drift from that by as long as they stood since.
        let source = if s.mode == MODE_COUNTER {
            self.clocks.counter()
        } else {
            mono
        };
        let (ahead, stood) = match s.convert(source) {
            Converted::Nanos { nanos, .. } if s.held_at(source) => {
                let ahead = nanos.wrapping_sub(mono.wrapping_add(s.mono_offset)) as i64;
                (ahead.max(0) as u64, mono.saturating_sub(s.mono_at))
            }
            _ => (0, 0),
        };
        Conversion {
            mono_offset: s.mono_offset,
            // (`mono_width` is u64::MAX where nothing was measured: so is
            // the error.)
            mono_error: (s.mono_width / 2)
                .saturating_add(drift)
                .saturating_add(ahead),
            boot_offset: s.boot_conversion,
            boot_error: (s.boot_width / 2)
                .saturating_add(drift)
                .saturating_add(ahead)
                .saturating_add(stood),
        }
    }
}

/// What [`clock_info`](crate::clock_info) reports of the timekeeper, once
/// the first calibration is over.
pub(crate) fn report() -> Report {
    TK.report()
}

/// What the timekeeper decided and measured, for the introspection.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Report {
    pub(crate) decision: Decision,
    /// Ticks per second converted: the counter line's rate, 1e9 on the OS
    /// clock for good, 0 while the counter's rate is being measured.
    pub(crate) freq_hz: u64,
    pub(crate) origin: FreqOrigin,
    /// The window the rate in use was measured over (0: not measured).
    pub(crate) window_ns: u64,
    /// From the process's first reading to the counter's take-over.
    pub(crate) calibration_ns: u64,
    pub(crate) refinements: u32,
    /// `CLOCK_REALTIME` when the kernel's verdict moved the clocks to the
    /// OS clock.
    pub(crate) demoted_at: Option<u64>,
    pub(crate) verdict_unavailable: Option<detect::VerdictUnavailable>,
    /// Whether the upkeep thread does the state updates.
    pub(crate) upkeep: bool,
    pub(crate) rebases: u32,
    pub(crate) last_rebase: Option<Rebase>,
}

impl<C: Clocks> Timekeeper<C> {
    fn report(&self) -> Report {
        let k = self.keeper();
        let decision = k.decision.expect("published implies decided");
        Report {
            decision,
            freq_hz: match (k.state.mode, decision.counter()) {
                // (While the readings stand still after a re-base, the
                // piece's line has no rate: the rate in use is the one the
                // next piece continues at.)
                (MODE_COUNTER, _) if k.state.line.slope == 0 => k.rate_line().freq_hz(),
                (MODE_COUNTER, _) => k.state.line.freq_hz(),
                (_, false) => 1_000_000_000,
                _ => 0,
            },
            origin: k.origin,
            window_ns: if k.origin == FreqOrigin::Measured {
                k.window_ns
            } else {
                0
            },
            calibration_ns: k
                .counter_since_mono
                .map_or(0, |at| at.saturating_sub(k.first_mono)),
            refinements: k.refinements,
            demoted_at: k.demoted_at,
            verdict_unavailable: k.verdict_log.unavailable(|| self.clocks.mono()),
            upkeep: self.upkeep.load(Ordering::Relaxed),
            rebases: k.rebases,
            last_rebase: k.last_rebase,
        }
    }
}

/// What this workspace's tests and benches look at (the `__test-hooks`
/// feature; see `fastnow::__test`).
#[cfg(feature = "__test-hooks")]
pub(crate) mod hooks {
    use super::TK;
    use core::sync::atomic::Ordering;

    pub(crate) fn with_writer_lock<R>(f: impl FnOnce() -> R) -> R {
        TK.with_lock(f)
    }

    pub(crate) fn slowed_readings() -> u64 {
        TK.slowed.load(Ordering::Relaxed)
    }

    pub(crate) fn reader_update_cost(check: bool) -> u64 {
        TK.reader_update_cost(check)
    }

    pub(crate) fn reader_update(check: bool) {
        TK.reader_update(check)
    }

    pub(crate) fn state_generation() -> u64 {
        TK.state.sequence() / 2
    }
}
