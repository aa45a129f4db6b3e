//! The one state every clock reads, and its one writer.
//!
//! Like the Linux kernel's timekeeping core, fastnow keeps everything a
//! reader needs — which source to read, the line that converts the counter,
//! the wall clock's line — in one published state, which one writer at a
//! time replaces and readers only load (through a latch, so a reader never
//! waits, even in a signal handler that interrupted the writer). Readings
//! count from 2^62 ns before `CLOCK_MONOTONIC`'s zero
//! ([`TIMELINE_OFFSET_NS`]): the first state reads that clock plus the
//! offset, and every later one continues it.
//!
//! Here: the [`Timekeeper`], what it holds and the state machine's
//! constants. `state` has the state's layout and conversion, `read` every
//! reader's paths, `writer` and `switch` the state updates, `latch` the
//! publication, `calibrate` the rate measurement, `line` the fixed-point
//! conversion and `boot` the boot timeline's offset. A state update falls
//! on the reader that reaches a piece's `trigger`, or, while the upkeep
//! thread runs, on that thread alone
//! (spec/SEMANTICS.md, "Who updates"; BENCHMARKS.md, "State updates on a
//! reader", has what each costs). Tests drive it all on simulated clocks
//! through [`Clocks`].

mod boot;
pub(crate) mod calibrate;
pub(crate) mod latch;
pub(crate) mod line;
pub(crate) mod read;
pub(crate) mod state;
mod switch;
#[cfg(test)]
mod tests;
pub(crate) mod writer;

use crate::source::arch::{self, FreqOrigin};
use crate::source::detect::{self, Decision, Fallback};
use crate::source::os;
use crate::timekeeper::calibrate::Window;
use crate::timekeeper::latch::{Latch, WriterLock};
use crate::timekeeper::line::Line;
use crate::timekeeper::state::{word, State, MODE_NONE, MODE_OS};
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// How far ahead of the old source a new one starts, beyond twice the
/// sample's bracket (see `switch`): the bracket bounds the error of
/// matching the two sources, this covers the rate's error over the few
/// hundred microseconds between sample and take-over.
pub(crate) const MARGIN_NS: u64 = 100;
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
pub(crate) const CHECK_PERIOD_NS: u64 = 1_000_000_000;
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
/// wall line is re-anchored at a state update, and updates come at most
/// once per `MIN_PERIOD_NS`.
pub(crate) const MIN_WALL_INTERVAL_NS: u64 = MIN_PERIOD_NS;
/// Longest wall resync interval (see `set_wall_resync_interval`).
pub(crate) const MAX_WALL_INTERVAL_NS: u64 = 1 << 40;
/// Where the precise tier's timeline starts: readings are
/// `CLOCK_MONOTONIC` nanoseconds plus this, so that an instant can be moved
/// back by 2^62 ns (146 years) plus the machine's uptime before it leaves
/// the `u64` range, as far as code that subtracts a long timeout from
/// `Instant::now()` on a freshly booted machine needs, and forward by
/// 3 × 2^62 ns (438 years) minus the uptime. The first state carries it as
/// its OS offset; every later state continues the readings of the one
/// before, so it never appears anywhere else.
pub(crate) const TIMELINE_OFFSET_NS: u64 = 1 << 62;
/// The wall line is used only for times well inside the `u64` range of
/// Unix nanoseconds (so a reading a little before or after its anchor can
/// neither wrap below 1970 nor above 2554); otherwise the wall reads
/// `CLOCK_REALTIME`.
const WALL_GUARD_NS: u64 = 1 << 41;

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
pub(crate) trait Clocks: Sync {
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
pub(crate) struct Machine;

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
pub(crate) struct Timekeeper<C: Clocks = Machine> {
    pub(crate) state: Latch<{ word::COUNT }>,
    lock: WriterLock,
    keeper: KeeperCell,
    pub(crate) clocks: C,
    /// Whether the upkeep thread runs (it then does the state updates).
    pub(crate) upkeep: AtomicBool,
    /// The `CLOCK_MONOTONIC` time at which the upkeep thread should update next.
    upkeep_due: AtomicU64,
    /// The wall resync interval (0 = default).
    wall_interval: AtomicU64,
    /// The process's first moment (0: none yet); see `before_first`.
    first_mono: AtomicU64,
    /// The boot offset readers and the first state agree on
    /// (`boot::NO_OFFSET`: none yet); see `first_boot_offset`.
    first_boot: AtomicU64,
    /// How many readings returned a lower bound (a writer held the lock
    /// past a state's end): readings the clock slowed for.
    pub(crate) slowed: AtomicU64,
    /// Set before a counter state is published: from then on reading the
    /// counter cannot fault (detection has accepted it), so the ordered
    /// fast path may read it before loading the state (see
    /// `read::read_nanos_ordered`). Cleared on the OS clock for good, where
    /// that read would be wasted.
    pub(crate) counter_read: AtomicBool,
}

/// The process's timekeeper.
pub(crate) static TK: Timekeeper<Machine> = Timekeeper::new(Machine);

impl<C: Clocks> Timekeeper<C> {
    pub(crate) const fn new(clocks: C) -> Timekeeper<C> {
        Timekeeper {
            state: Latch::new(),
            lock: WriterLock::new(),
            keeper: KeeperCell::new(),
            clocks,
            upkeep: AtomicBool::new(false),
            upkeep_due: AtomicU64::new(0),
            wall_interval: AtomicU64::new(0),
            first_mono: AtomicU64::new(0),
            first_boot: AtomicU64::new(boot::NO_OFFSET),
            slowed: AtomicU64::new(0),
            counter_read: AtomicBool::new(false),
        }
    }

    /// The published state (all zeros, `MODE_NONE`, before the first).
    pub(crate) fn state(&self) -> State {
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
    pub(crate) fn before_first(&self, mono: u64) -> State {
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
pub(crate) struct Keeper {
    pub(crate) decision: Option<Decision>,
    /// The last state written.
    pub(crate) state: State,
    window: Window,
    /// Tightest bracket seen (a yardstick for preempted ones).
    min_width: u64,
    /// Tightest bracket of a boot offset measurement seen, in ns (`boot`).
    boot_width: u64,
    period_ns: u64,
    /// The newest accepted rate (the next piece's slope).
    rate: u64,
    suspect: Option<u64>,
    pub(crate) refinements: u32,
    /// The window the rate in use was measured over (0: published frequency).
    pub(crate) window_ns: u64,
    pub(crate) origin: FreqOrigin,
    verdict_file: detect::VerdictFile,
    next_check_mono: u64,
    last_was_check: bool,
    /// The kernel dropped the counter; the switch waits for the current
    /// piece's end (see `demote_at_end`).
    demote_pending: Option<Fallback>,
    pub(crate) first_mono: u64,
    pub(crate) counter_since_mono: Option<u64>,
    pub(crate) demoted_at: Option<u64>,
}

impl Keeper {
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
                wall: Line {
                    offset: 0,
                    slope: 0,
                },
                wall_deadline: 0,
                boot_offset: 0,
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
            next_check_mono: 0,
            last_was_check: false,
            demote_pending: None,
            first_mono: 0,
            counter_since_mono: None,
            demoted_at: None,
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
