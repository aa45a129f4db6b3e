//! The one state every clock reads, and its one writer.
//!
//! Like the Linux kernel's timekeeping core, fastnow keeps everything a
//! reader needs — which source to read, the line that converts the counter,
//! the wall clock's line — in one published [`State`], which one writer at a
//! time replaces and readers only load (through a [`Latch`], so a reader
//! never waits, even in a signal handler that interrupted the writer).
//!
//! # Pieces and take-over points
//! Readings are nanoseconds, converted at the read. The conversion is one
//! non-decreasing function of the counter for every thread, across every
//! recalibration, because each state is a *piece* valid on a range of
//! counter values `[takeover, end)`:
//!
//! - a reader converts a counter value `t` with the state it loaded when
//!   `takeover <= t < end` (the `prev` line below `takeover`);
//! - a new state takes over exactly at the old state's `end`, continuing the
//!   old line's value there with the new rate. Readers holding the old state
//!   may still convert any `t < end` with it, and the new state agrees on
//!   every such `t` (through `prev`), so it does not matter which of the two
//!   a reader holds;
//! - a reader whose `t` is at or past `end` needs a newer state: it takes
//!   the writers' lock and publishes one itself (and converts that `t` with
//!   it: reading the counter again could find the new piece ended too), or,
//!   if another thread holds the lock, waits a few microseconds for it, and
//!   failing that returns a *lower bound* of the new state's value (the old
//!   line's value at `end` plus 7/8 of the time since at the old rate,
//!   rounded down). A new rate is never below
//!   7/8 of the old one, so the bound is never ahead of what a later reading
//!   returns: the clock slows for that reading, but never stands still or
//!   steps back. Only a signal handler interrupting the writer, or a writer
//!   preempted for a while, can cause it.
//!
//! Readers reach `trigger` (a little before `end`) first; the first of them
//! publishes the next state — unless the upkeep thread runs, which does it
//! before any reader gets there, so that readers only ever load. A piece's
//! `trigger` is at least [`MIN_PERIOD_NS`] after the sample it is published
//! from, whatever the wall resync interval, so readers update at most about
//! once per millisecond.
//!
//! # The timeline
//! Readings count from 2^62 ns before `CLOCK_MONOTONIC`'s zero
//! ([`TIMELINE_OFFSET_NS`]): the first state reads that clock plus the
//! offset, and every later one continues it.
//!
//! # Source switches
//! The same rule carries readings across a change of source: the first
//! millisecond of a process reads `CLOCK_MONOTONIC` while the counter's rate
//! is measured (no reader ever waits for calibration; one arriving while
//! another thread publishes the first state acts on a state every thread
//! agrees on, `Timekeeper::before_first`), and a counter the
//! kernel demotes at run time is dropped for `CLOCK_MONOTONIC` plus an
//! offset. An OS-clock state also has an end (in `CLOCK_MONOTONIC`
//! nanoseconds), and OS-clock readers read the clock *inside* the latch read,
//! so none reads it after the next state is published. Where a switch takes
//! over, the new source's readings start [`MARGIN_NS`] plus twice the
//! sample's bracket ahead of the old source's, which covers the error of
//! matching the two sources (half a bracket and the rate error over a few
//! hundred microseconds): readings move forward by a few hundred
//! nanoseconds, never back.
//!
//! # Work off the read path
//! What a state update costs — a sample (one bracket of `clock_gettime`
//! around the counter and one around `CLOCK_REALTIME` when undisturbed, and
//! a publish: a few hundred nanoseconds, 1–2 µs when its code and data
//! come from DRAM; no system call) or a re-check of the kernel's clocksource
//! (one `pread`, a system call: about 1.5 µs with its code and data in
//! cache, 11–21 µs median from DRAM) — falls on the reader that reaches
//! `trigger`, once per period (1, 2, 4 … ms in the first second, then
//! twice a second, alternating the two), or, while the coarse tier's upkeep
//! thread runs, on that thread alone, four times a second (BENCHMARKS.md
//! has the measured costs).

use crate::arch::Probe;
use crate::calibrate::{self, Sample, Verdict, Window};
use crate::detect::{self, Decision, EnvOverride, Fallback, FreqOrigin, MonotonicMode, Source};
use crate::latch::{Latch, Taken, WriterLock};
use crate::scale::Line;
use crate::{os, UnixTime};
use core::cell::UnsafeCell;
use core::fmt;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use core::time::Duration;

/// How far ahead of the old source a new one starts, beyond twice the
/// sample's bracket (see the module docs): the bracket bounds the error of
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
/// kernel's clocksource (a few hundred nanoseconds of clock reads and one
/// `pread`, 2–20 µs on the upkeep thread four times a second; readers
/// nothing).
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

// ---------------------------------------------------------------------------
// The state.
// ---------------------------------------------------------------------------

/// Word positions in the latch. The fast paths' words come first, on one
/// cache line.
pub(crate) mod word {
    /// Counter mode: the counter value where this piece starts. OS mode:
    /// the `CLOCK_MONOTONIC` value where it starts.
    pub const TAKEOVER: usize = 0;
    /// Counter mode: `trigger - takeover`, the range of the read fast path.
    /// 0 in OS mode, which keeps every fast path away from the counter.
    pub const SPAN: usize = 1;
    pub const OFFSET: usize = 2;
    pub const SLOPE: usize = 3;
    pub const WALL_OFFSET: usize = 4;
    pub const WALL_SLOPE: usize = 5;
    /// Counter value at which a wall reader resyncs; 0: read `CLOCK_REALTIME`.
    pub const WALL_DEADLINE: usize = 6;
    pub const MODE: usize = 7;
    pub const TRIGGER: usize = 8;
    pub const END: usize = 9;
    pub const PREV_OFFSET: usize = 10;
    pub const PREV_SLOPE: usize = 11;
    /// OS mode: readings are `CLOCK_MONOTONIC + os_offset` (mod 2^64).
    pub const OS_OFFSET: usize = 12;
    pub const COUNT: usize = 13;
}

/// Not published yet (all words zero).
pub(crate) const MODE_NONE: u64 = 0;
/// Readings come from `CLOCK_MONOTONIC`.
pub(crate) const MODE_OS: u64 = 1;
/// Readings come from the counter.
pub(crate) const MODE_COUNTER: u64 = 2;

/// What readers see; see the module docs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct State {
    pub mode: u64,
    pub takeover: u64,
    pub trigger: u64,
    pub end: u64,
    pub line: Line,
    pub prev: Line,
    pub os_offset: u64,
    pub wall: Line,
    pub wall_deadline: u64,
}

impl State {
    fn to_words(self) -> [u64; word::COUNT] {
        let mut w = [0; word::COUNT];
        w[word::MODE] = self.mode;
        w[word::TAKEOVER] = self.takeover;
        w[word::SPAN] = if self.mode == MODE_COUNTER {
            self.trigger.saturating_sub(self.takeover)
        } else {
            0
        };
        w[word::OFFSET] = self.line.offset;
        w[word::SLOPE] = self.line.slope;
        w[word::WALL_OFFSET] = self.wall.offset;
        w[word::WALL_SLOPE] = self.wall.slope;
        w[word::WALL_DEADLINE] = self.wall_deadline;
        w[word::TRIGGER] = self.trigger;
        w[word::END] = self.end;
        w[word::PREV_OFFSET] = self.prev.offset;
        w[word::PREV_SLOPE] = self.prev.slope;
        w[word::OS_OFFSET] = self.os_offset;
        w
    }

    pub(crate) fn from_words(w: &[u64; word::COUNT]) -> State {
        State {
            mode: w[word::MODE],
            takeover: w[word::TAKEOVER],
            trigger: w[word::TRIGGER],
            end: w[word::END],
            line: Line {
                offset: w[word::OFFSET],
                slope: w[word::SLOPE],
            },
            prev: Line {
                offset: w[word::PREV_OFFSET],
                slope: w[word::PREV_SLOPE],
            },
            os_offset: w[word::OS_OFFSET],
            wall: Line {
                offset: w[word::WALL_OFFSET],
                slope: w[word::WALL_SLOPE],
            },
            wall_deadline: w[word::WALL_DEADLINE],
        }
    }

    /// Converts a reading of this state's source (counter ticks, or
    /// `CLOCK_MONOTONIC` nanoseconds in OS mode).
    #[inline]
    pub(crate) fn convert(&self, reading: u64) -> Converted {
        if reading >= self.end {
            return Converted::PastEnd;
        }
        let due = reading >= self.trigger;
        let nanos = if self.mode == MODE_OS {
            reading.wrapping_add(self.os_offset)
        } else if reading < self.takeover {
            self.prev.at(reading)
        } else {
            self.line.at(reading)
        };
        Converted::Nanos { nanos, due }
    }

    /// A lower bound of what any newer state gives for `reading`, which is
    /// at or past `end` (see the module docs): the value at `end` plus 7/8
    /// of the nanoseconds since, rounded down. A next piece's slope is at
    /// least 7/8 of this one's (`calibrate::floor` rounds it up), so its
    /// value `k` ticks past `end` is at least `floor(7/8 × k × slope)`,
    /// which is at least `floor(7/8 × floor(k × slope))`: the bound, however
    /// few ticks `k` is. (Rounding the 7/8 up instead made the bound the
    /// old rate itself below 8 ns, above a slower next piece.)
    pub(crate) fn lower_bound(&self, reading: u64) -> u64 {
        let (at_end, since) = if self.mode == MODE_OS {
            (self.end.wrapping_add(self.os_offset), reading - self.end)
        } else {
            (
                self.line.at(self.end),
                self.line.nanos_for(reading - self.end),
            )
        };
        at_end.wrapping_add(seven_eighths(since))
    }
}

/// `floor(7 × n / 8)`, without overflow.
pub(crate) const fn seven_eighths(n: u64) -> u64 {
    n - n / 8 - (n % 8 != 0) as u64
}

/// What converting a reading gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Converted {
    /// The reading's nanoseconds; `due` when a state update is due.
    Nanos { nanos: u64, due: bool },
    /// The reading is past this state's end: a newer state is needed.
    PastEnd,
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
        crate::arch::ticks()
    }
    #[inline(always)]
    fn counter_ordered(&self) -> u64 {
        crate::arch::ticks_ordered_auto()
    }
    #[inline(always)]
    fn mono(&self) -> u64 {
        os::monotonic_nanos()
    }
    #[inline(always)]
    fn real(&self) -> u64 {
        os::realtime_nanos()
    }
    fn observe(&self, f: &mut detect::VerdictFile) -> Decision {
        let decision = detect::observe(f);
        crate::arch::ORDERED_ALT.store(decision.probe.use_alt, Ordering::Relaxed);
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
    upkeep: AtomicBool,
    /// The `CLOCK_MONOTONIC` time at which the upkeep thread should update next.
    upkeep_due: AtomicU64,
    /// The wall resync interval (0 = default).
    wall_interval: AtomicU64,
    /// The process's first moment (0: none yet); see `before_first`.
    first_mono: AtomicU64,
    /// How many readings returned a lower bound (a writer held the lock
    /// past a state's end): readings the clock slowed for.
    pub(crate) slowed: AtomicU64,
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
            slowed: AtomicU64::new(0),
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

// ---------------------------------------------------------------------------
// The writer.
// ---------------------------------------------------------------------------

/// The writer's private bookkeeping, touched only under `LOCK`.
#[derive(Clone, Copy)]
struct Keeper {
    decision: Option<Decision>,
    /// The last state written.
    state: State,
    window: Window,
    /// Tightest bracket seen (a yardstick for preempted ones).
    min_width: u64,
    period_ns: u64,
    /// The newest accepted rate (the next piece's slope).
    rate: u64,
    suspect: Option<u64>,
    refinements: u32,
    /// The window the rate in use was measured over (0: published frequency).
    window_ns: u64,
    origin: FreqOrigin,
    verdict_file: detect::VerdictFile,
    next_check_mono: u64,
    last_was_check: bool,
    /// The kernel dropped the counter; the switch waits for the current
    /// piece's end (see `demote_at_end`).
    demote_pending: Option<Fallback>,
    first_mono: u64,
    counter_since_mono: Option<u64>,
    demoted_at: Option<u64>,
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
            },
            window: Window::new(),
            min_width: u64::MAX,
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

/// The held lock and the bookkeeping it guards; unlocks when dropped.
struct Writer<'a, C: Clocks> {
    tk: &'a Timekeeper<C>,
    keeper: &'a mut Keeper,
}

impl<'a, C: Clocks> Writer<'a, C> {
    fn from(tk: &'a Timekeeper<C>, taken: Taken) -> Writer<'a, C> {
        // SAFETY: the caller holds `tk.lock` (it just took it), so no other
        // `Writer` of this timekeeper exists and nothing else touches its
        // Keepers until this one is dropped.
        let keeper = unsafe { &mut *tk.keeper.live.get() };
        if taken == Taken::FromParent {
            // This is a child forked while a thread of the parent wrote:
            // the live bookkeeping may be half-updated. Resume from the
            // copy saved at the last publish, which is whole: the parent's
            // writer saved it (or the one before it) completely before
            // pointing `saved_at` to it.
            let at = tk.keeper.saved_at.load(Ordering::Acquire);
            // SAFETY: as above; the saved copies are only touched under the lock.
            *keeper = unsafe { *tk.keeper.saved[at].get() };
            if keeper.state != tk.state() {
                // The parent's writer saved a state and vanished before
                // (or while) writing it: finish the write. The state was
                // valid to publish then, and is now (time only moved on),
                // and no reader here has seen it; the latch repairs a
                // half-done write first.
                tk.state.write(&keeper.state.to_words());
            }
        }
        Writer { tk, keeper }
    }

    fn try_new(tk: &'a Timekeeper<C>) -> Option<Writer<'a, C>> {
        tk.lock.try_lock().map(|taken| Writer::from(tk, taken))
    }

    fn new(tk: &'a Timekeeper<C>) -> Writer<'a, C> {
        let taken = tk.lock.lock();
        Writer::from(tk, taken)
    }

    fn publish(&mut self, state: State) {
        self.keeper.state = state;
        // Save, then publish (see `KeeperCell`).
        self.save();
        self.tk.state.write(&state.to_words());
    }

    /// Saves the bookkeeping for a forked child (see `KeeperCell`).
    fn save(&mut self) {
        let cell = &self.tk.keeper;
        let next = 1 - cell.saved_at.load(Ordering::Relaxed);
        // SAFETY: this thread holds the lock; `saved_at` does not point to
        // `saved[next]`, so a forked child would not read it.
        unsafe { *cell.saved[next].get() = *self.keeper };
        cell.saved_at.store(next, Ordering::Release);
    }

    fn sample(&self) -> Sample {
        let c = &self.tk.clocks;
        // Twice the tightest bracket seen; until there is one, all brackets.
        let good_width = match self.keeper.min_width {
            u64::MAX => 0,
            min => min.saturating_mul(2),
        };
        calibrate::sample(|| c.counter_ordered(), || c.mono(), || c.real(), good_width)
    }

    fn now_ticks(&self) -> u64 {
        self.tk.clocks.counter_ordered()
    }

    fn mono(&self) -> u64 {
        self.tk.clocks.mono()
    }
}

impl<C: Clocks> Drop for Writer<'_, C> {
    fn drop(&mut self) {
        self.tk.lock.unlock();
    }
}

/// Why a state update is asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Due {
    /// A reader's counter value (or OS reading) reached `trigger`.
    Trigger(u64),
    /// A reader's reading is past `end`.
    PastEnd(u64),
    /// A wall reader's counter value reached the wall deadline.
    Wall(u64),
}

/// What a reader's request for a state update did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Updated {
    /// Another thread holds the writers' lock.
    Busy,
    /// The published state was already up to date for the reading, or this
    /// thread published the first state.
    Current,
    /// This thread published `State`, the successor of the newest state
    /// at the time, computed from a sample taken after the reading: the
    /// state to convert that reading with.
    Published(State),
}

impl<C: Clocks> Timekeeper<C> {
    /// A reader asks for a state update; never waits.
    #[cold]
    #[inline(never)]
    pub(crate) fn update_from_reader(&self, due: Due) -> Updated {
        let Some(mut w) = Writer::try_new(self) else {
            return Updated::Busy;
        };
        if w.keeper.state.mode == MODE_NONE {
            w.detect();
            return Updated::Current;
        }
        // Re-check under the lock, against what was actually read: another
        // thread may have updated in the meantime.
        let s = w.keeper.state;
        let still_due = match due {
            Due::Trigger(r) => r >= s.trigger,
            Due::PastEnd(r) => r >= s.end,
            Due::Wall(t) => s.mode == MODE_COUNTER && s.wall_deadline != 0 && t >= s.wall_deadline,
        };
        if !still_due {
            return Updated::Current;
        }
        w.update(Cause::Reader(due));
        if w.keeper.state == s {
            Updated::Current
        } else {
            Updated::Published(w.keeper.state)
        }
    }

    /// Runs detection and publishes the first state if nothing has; never
    /// waits. Returns false when another thread is doing it right now (the
    /// caller acts on `before_first` meanwhile).
    #[cold]
    #[inline(never)]
    pub(crate) fn ensure_published(&self) -> bool {
        if self.state.is_published() {
            return true;
        }
        match Writer::try_new(self) {
            Some(mut w) => {
                if w.keeper.state.mode == MODE_NONE {
                    w.detect();
                }
                true
            }
            None => self.state.is_published(),
        }
    }

    /// What an update costs the reader that does it, lock taken and
    /// released included, in ns: a sample, or (`check`) a clocksource check.
    pub(crate) fn reader_update_cost(&self, check: bool) -> u64 {
        self.finish_warm_up();
        let start = self.clocks.mono();
        self.update_as_reader(check);
        self.clocks.mono() - start
    }

    /// One update as a reader at `trigger` does it, for timing by a caller
    /// that reads no OS clock first (which would warm the update's path).
    pub(crate) fn reader_update(&self, check: bool) {
        self.finish_warm_up();
        self.update_as_reader(check);
    }

    fn update_as_reader(&self, check: bool) {
        if let Some(mut w) = Writer::try_new(self) {
            w.keeper.last_was_check = !check;
            if check {
                w.keeper.next_check_mono = 0;
            }
            w.update(Cause::Reader(Due::Trigger(0)));
        }
    }

    /// Runs `f` holding the writers' lock (tests of what readers do then).
    pub(crate) fn with_lock<R>(&self, f: impl FnOnce() -> R) -> R {
        let _w = Writer::new(self);
        f()
    }

    /// Waits until the first state is published (not for read paths).
    fn published(&self) {
        while !self.ensure_published() {
            os::yield_now();
        }
    }

    /// Whether the counter is, or is about to be, the source; `None` while
    /// another thread is publishing the first state (not known yet).
    pub(crate) fn counter_chosen(&self) -> Option<bool> {
        if !self.ensure_published() {
            return None;
        }
        let s = self.state();
        Some(s.mode == MODE_COUNTER || (s.mode == MODE_OS && s.trigger != u64::MAX))
    }

    /// The upkeep thread's turn: updates the state if due, re-checks the
    /// kernel's verdict every second, and re-anchors the wall tier at once
    /// when `clock_was_set`. Returns the `CLOCK_MONOTONIC` time of its next
    /// turn.
    #[cfg_attr(not(feature = "std"), allow(dead_code))] // the upkeep thread needs std
    pub(crate) fn upkeep_turn(&self, clock_was_set: bool) -> u64 {
        self.published();
        let mut w = Writer::new(self);
        let now = w.mono();
        let s = w.keeper.state;
        let counter = s.mode == MODE_COUNTER;
        let warming = s.mode == MODE_OS && s.trigger != u64::MAX;
        let due = self.upkeep_due.load(Ordering::Relaxed);
        if (counter && (clock_was_set || now >= due)) || (warming && now >= s.trigger) {
            w.update(Cause::Upkeep);
        }
        let s = w.keeper.state;
        if s.mode == MODE_COUNTER {
            self.upkeep_due.load(Ordering::Relaxed)
        } else if s.trigger != u64::MAX {
            s.trigger
        } else {
            u64::MAX
        }
    }

    /// The upkeep thread started or stopped: the schedule changes.
    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    pub(crate) fn set_upkeep(&self, running: bool) {
        self.upkeep.store(running, Ordering::Relaxed);
        self.upkeep_due.store(0, Ordering::Relaxed);
    }

    /// A state update now (recalibrate, resync, a new interval).
    fn force_update(&self) {
        self.published();
        Writer::new(self).update(Cause::Forced);
    }

    /// Waits out the first millisecond, if it is not over, and switches to
    /// the counter (not for read paths).
    fn finish_warm_up(&self) {
        self.published();
        loop {
            let s = self.state();
            if s.mode != MODE_OS || s.trigger == u64::MAX {
                return;
            }
            while self.clocks.mono() < s.trigger {
                core::hint::spin_loop();
            }
            Writer::new(self).update(Cause::Forced);
        }
    }

    /// See [`recalibrate`].
    fn recalibrate(&self) {
        self.published();
        let restarted = {
            let w = Writer::new(self);
            let counter = w.keeper.state.mode == MODE_COUNTER;
            if counter {
                let s = w.sample();
                w.keeper.window.clear();
                w.keeper.window.push(s);
                w.keeper.suspect = None;
                w.keeper.period_ns = MIN_PERIOD_NS;
            }
            counter.then(|| w.mono())
        };
        // Measure over a fresh millisecond, without holding the lock.
        if let Some(start) = restarted {
            while self.clocks.mono() < start + MIN_PERIOD_NS {
                core::hint::spin_loop();
            }
            self.force_update();
        }
    }

    fn set_wall_interval(&self, ns: u64) {
        let ns = ns.clamp(MIN_WALL_INTERVAL_NS, MAX_WALL_INTERVAL_NS);
        self.wall_interval.store(ns, Ordering::Relaxed);
        self.force_update();
    }

    fn upkeep_slack(&self) -> u64 {
        if self.upkeep.load(Ordering::Relaxed) {
            UPKEEP_SLACK_NS
        } else {
            0
        }
    }

    fn wall_interval_ns(&self) -> u64 {
        match self.wall_interval.load(Ordering::Relaxed) {
            0 => DEFAULT_WALL_INTERVAL_NS,
            ns => ns.max(MIN_WALL_INTERVAL_NS),
        }
    }

    /// What [`clock_info`] reports.
    fn info(&self) -> ClockInfo {
        self.finish_warm_up();
        let k: Keeper = *Writer::new(self).keeper;
        let d = k.decision.expect("published implies decided");
        let counter = d.fallback.is_none();
        let probe: Probe = d.probe;
        ClockInfo {
            source: if counter { Source::Counter } else { Source::Os },
            counter: probe.counter,
            ordered_read: if !counter {
                "clock_gettime(CLOCK_MONOTONIC)"
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
            monotonic_mode: crate::precise::monotonic_mode(),
            upkeep: self.upkeep.load(Ordering::Relaxed),
            hypervisor: probe.hypervisor,
        }
    }
}

/// The default wall resync interval.
const DEFAULT_WALL_INTERVAL_NS: u64 = 1_000_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cause {
    Reader(Due),
    Upkeep,
    Forced,
}

impl<C: Clocks> Writer<'_, C> {
    fn follows_kernel(&self) -> bool {
        self.keeper.decision.is_some_and(|d| d.follows_kernel())
    }

    /// Whether a sample's brackets were all wide (the thread was preempted
    /// or interrupted in each): its moment is too uncertain to use.
    /// A sample for matching two sources, where the bracket's width becomes
    /// a forward step of every reading (`switch_margin`): a preempted one is
    /// taken again, a few times (a switch happens once; a thread preempted
    /// mid-sample usually runs on undisturbed once it is back).
    fn narrow_sample(&self) -> Sample {
        let mut best = self.sample();
        for _ in 0..SWITCH_SAMPLE_TRIES {
            if !self.preempted(&best) {
                break;
            }
            let s = self.sample();
            if s.width < best.width {
                best = s;
            }
        }
        best
    }

    fn preempted(&self, s: &Sample) -> bool {
        s.width > 4 * self.keeper.min_width.min(s.width) + 200
    }

    /// Observes the machine and publishes the first state: the OS clock,
    /// for good, or for the first millisecond while the counter's rate is
    /// measured.
    fn detect(&mut self) {
        let decision = self.tk.clocks.observe(&mut self.keeper.verdict_file);
        self.keeper.decision = Some(decision);
        // The counter is read only once it is chosen: a rejected one may
        // fault (`PR_SET_TSC`) or mean nothing. Before the sample, this
        // thread agrees on the process's first moment, so that the state it
        // publishes ends no earlier than the one readers act on meanwhile
        // (`before_first`); an OS state for good has no end to agree on.
        let counter = decision.fallback.is_none();
        let first = counter.then(|| (self.tk.before_first(self.mono()).end, self.sample()));
        let first_mono = first.map_or_else(|| self.mono(), |(_, f)| f.mono);
        let k = &mut *self.keeper;
        k.first_mono = first_mono;
        k.next_check_mono = first_mono + CHECK_PERIOD_NS;
        let (trigger, end) = if let Some((agreed_end, first)) = first {
            k.window.push(first);
            k.min_width = first.width;
            k.origin = FreqOrigin::Pending;
            let promote_at = first_mono + MIN_PERIOD_NS;
            (
                promote_at,
                (promote_at + grace(MIN_PERIOD_NS)).max(agreed_end),
            )
        } else {
            k.origin = FreqOrigin::Os;
            (u64::MAX, u64::MAX)
        };
        self.publish(State {
            mode: MODE_OS,
            trigger,
            end,
            os_offset: TIMELINE_OFFSET_NS,
            ..State::default()
        });
    }

    /// One state update.
    fn update(&mut self, cause: Cause) {
        if self.keeper.decision.is_none() {
            return;
        }
        let s = self.keeper.state;
        if s.mode == MODE_OS {
            if s.trigger != u64::MAX && self.mono() >= s.trigger {
                self.warm_up_step();
            }
            return;
        }
        if let Some(reason) = self.keeper.demote_pending {
            self.demote_at_end(reason);
            return;
        }
        // Readers without upkeep alternate a sample with a re-check of the
        // kernel's verdict, so a reader at the trigger pays for one of them,
        // not both (a few hundred nanoseconds, or one `pread`). A reader past
        // the end samples (after an idle pause the new piece's rate should be
        // the one measured over it) and, when one is due, checks too: a
        // program reading the clock less often than a grace period (every
        // 30 ms, say) only ever arrives past the end, and would never check
        // otherwise. A wall reader always samples:
        // the wall line must be re-anchored when its deadline comes, or its
        // error would grow past one interval's.
        let check_due = self.follows_kernel() && self.mono() >= self.keeper.next_check_mono;
        let precise_reader = matches!(cause, Cause::Reader(Due::Trigger(_)));
        if check_due && precise_reader && !self.keeper.last_was_check {
            self.keeper.last_was_check = true;
            if !self.check_kernel() {
                // Nothing measured: the next piece, at the rate in use, if
                // the current one has started (a wall reader can get here
                // before).
                let now = self.now_ticks();
                if now >= s.takeover {
                    let next = self.next_piece(now);
                    self.publish(next);
                }
            }
            return;
        }
        self.keeper.last_was_check = false;
        // The upkeep thread checks at every update, just before the piece's
        // end: a demotion then completes milliseconds after it is seen.
        let upkeep_check = cause == Cause::Upkeep && self.follows_kernel();
        let late_or_forced = matches!(cause, Cause::Forced | Cause::Reader(Due::PastEnd(_)));
        if (upkeep_check || (check_due && late_or_forced)) && self.check_kernel() {
            return;
        }
        let sample = self.sample();
        self.measure(&sample);
        // A new piece can only follow one that has started: a reader holding
        // the next state converts counter values below its take-over point
        // with `prev`, the current line, which must be the right one there.
        // (Readers only get here past `trigger`, which is past the take-over;
        // forced, wall and upkeep updates can come earlier.)
        let next = if sample.ticks >= s.takeover {
            self.next_piece(sample.ticks)
        } else {
            if self.tk.upkeep.load(Ordering::Relaxed) {
                let wait = s.line.nanos_for(s.takeover - sample.ticks);
                let due = sample.mono.saturating_add(wait);
                self.tk.upkeep_due.store(due, Ordering::Relaxed);
            }
            s
        };
        let (wall, wall_deadline) = self.wall_line(&sample, next.trigger);
        self.publish(State {
            wall,
            wall_deadline,
            ..next
        });
    }

    /// Warm-up: the first window (at least a millisecond) gives the rate,
    /// and the counter takes over from the OS clock.
    fn warm_up_step(&mut self) {
        let sample = self.sample();
        self.keeper.min_width = self.keeper.min_width.min(sample.width);
        if self.preempted(&sample) {
            // Try again a little later; the OS state just moves its end.
            let s = self.keeper.state;
            let trigger = sample.mono + MIN_PERIOD_NS / 4;
            self.publish(State {
                trigger,
                end: trigger + grace(MIN_PERIOD_NS),
                ..s
            });
            return;
        }
        let measured = match self.keeper.window.first() {
            Some(first) if sample.ticks > first.ticks && sample.mono > first.mono => {
                Line::slope(sample.mono - first.mono, sample.ticks - first.ticks)
                    .ok_or(Fallback::TooSlow)
            }
            _ => Err(Fallback::Stalled),
        };
        // A frequency the hardware publishes (CPUID, CNTFRQ_EL0, CPUCFG…) is
        // exact when right — a crystal's ratio, where a millisecond's
        // measurement is good to tens of ppm — but firmware and emulators
        // publish wrong ones too (off by 18× under one emulator here). So it
        // is used only when the measurement agrees with it within 1/64.
        let published = self
            .keeper
            .decision
            .and_then(|d| d.probe.freq)
            .and_then(|(hz, origin)| Some((Line::slope_of_freq(hz)?, origin)));
        match (measured, published) {
            (Ok(m), Some((p, origin))) if p.abs_diff(m) <= m >> 6 => {
                self.promote(sample, Ok(p), origin)
            }
            _ => self.promote(sample, measured, FreqOrigin::Measured),
        }
    }

    /// Reads the kernel's verdict again; when it no longer vouches for the
    /// counter, switches to the OS clock (at the current piece's end) and
    /// returns true.
    fn check_kernel(&mut self) -> bool {
        let verdict = self.tk.clocks.verdict(&mut self.keeper.verdict_file);
        self.keeper.next_check_mono = self.mono() + CHECK_PERIOD_NS;
        let Some(decision) = self.keeper.decision.as_mut() else {
            return false;
        };
        if let detect::KernelVerdict::Clocksource(cs) = verdict {
            decision.clocksource = Some(cs);
        }
        match decision.recheck(verdict) {
            Some(reason) => {
                self.keeper.demote_pending = Some(reason);
                self.demote_at_end(reason);
                true
            }
            None => false,
        }
    }

    /// Takes a measurement into account (`keeper.rate`, the window).
    fn measure(&mut self, s: &Sample) {
        self.keeper.min_width = self.keeper.min_width.min(s.width);
        if self.preempted(s) {
            return;
        }
        let k = &mut *self.keeper;
        let measured = k
            .window
            .start_for(s)
            .map(|start| (calibrate::slope_between(start, s), s.mono - start.mono));
        match measured {
            Some((Some(slope), window_ns)) if window_ns >= MIN_PERIOD_NS => {
                match calibrate::judge(k.rate, slope, k.suspect) {
                    Verdict::Accept(slope) => {
                        k.rate = slope;
                        k.suspect = None;
                        k.window.push(*s);
                        k.window_ns = window_ns;
                        k.origin = FreqOrigin::Measured;
                        k.refinements = k.refinements.saturating_add(1);
                        k.period_ns = window_ns.clamp(MIN_PERIOD_NS, MAX_PERIOD_NS);
                    }
                    Verdict::Suspect(slope) => {
                        k.suspect = Some(slope);
                        k.window.clear();
                        k.window.push(*s);
                        k.period_ns = MIN_PERIOD_NS.max(k.period_ns / 4);
                    }
                }
            }
            Some((None, _)) => {
                // The counter or the OS clock did not advance over the
                // window (a suspend?): start a new one.
                k.window.clear();
                k.window.push(*s);
            }
            _ => k.window.push(*s),
        }
    }

    /// The wall line through a sample, and its deadline (0 sends wall
    /// readers to `CLOCK_REALTIME`); `next_trigger` is when the next update
    /// comes anyway.
    fn wall_line(&self, s: &Sample, next_trigger: u64) -> (Line, u64) {
        let old = self.keeper.state;
        let slope = self.keeper.rate;
        if self.preempted(s) && old.wall_deadline != 0 {
            // Keep the old line until the next update — unless the system
            // clock was stepped, by far more than this sample's uncertainty:
            // then the sample, uncertain as it is, is the better line.
            let off = old.wall.at(s.ticks).abs_diff(s.real);
            if off <= 4 * s.width.saturating_add(1_000) {
                return (old.wall, next_trigger.max(1));
            }
        }
        if s.real < WALL_GUARD_NS || s.real > u64::MAX - WALL_GUARD_NS {
            return (Line { offset: 0, slope }, 0);
        }
        let line = Line::through(s.ticks, s.real, slope);
        let interval = self.tk.wall_interval_ns() + self.tk.upkeep_slack();
        let deadline = s
            .ticks
            .saturating_add(schedule_ticks(line, interval))
            .max(1);
        (line, deadline)
    }

    /// The next counter piece, taking over where the current one ends, at
    /// the newest rate (never below 7/8 of the current one), and the
    /// schedule of the update after it. The wall words are the current ones.
    fn next_piece(&mut self, now: u64) -> State {
        let s = self.keeper.state;
        let slope = self.keeper.rate.max(calibrate::floor(s.line.slope));
        let takeover = s.end;
        let line = Line::through(takeover, s.line.at(takeover), slope);
        // Never below the floor, whatever the interval: a piece ends a
        // period and its grace after its sample, and one ending a few ticks
        // after it would send every reader to the update.
        let period = self
            .keeper
            .period_ns
            .min(self.tk.wall_interval_ns())
            .max(MIN_PERIOD_NS);
        let period = if self.tk.upkeep.load(Ordering::Relaxed) {
            let period = period.min(UPKEEP_PERIOD_NS);
            let due = self.mono().saturating_add(period);
            self.tk.upkeep_due.store(due, Ordering::Relaxed);
            period + UPKEEP_SLACK_NS
        } else if self.follows_kernel() {
            period.min(READER_PERIOD_NS)
        } else {
            period
        };
        let trigger = now
            .saturating_add(schedule_ticks(line, period))
            .max(takeover);
        let end = trigger.saturating_add(schedule_ticks(line, grace(period)).max(1));
        State {
            mode: MODE_COUNTER,
            takeover,
            trigger,
            end,
            line,
            prev: s.line,
            os_offset: 0,
            ..s
        }
    }

    /// Switches from the OS clock to the counter where the OS state ends.
    fn promote(&mut self, s: Sample, slope: Result<u64, Fallback>, origin: FreqOrigin) {
        let slope = match slope {
            Ok(slope) => slope,
            Err(reason) => return self.stay_on_os(reason),
        };
        let old = self.keeper.state;
        // The counter value matching the OS state's end, and the value it
        // continues from there (see "Source switches").
        let rate = Line { offset: 0, slope };
        let takeover = if old.end >= s.mono {
            s.ticks.saturating_add(rate.ticks_for(old.end - s.mono))
        } else {
            s.ticks.saturating_sub(rate.ticks_for(s.mono - old.end))
        };
        let value = old
            .end
            .wrapping_add(old.os_offset)
            .wrapping_add(switch_margin(&s));
        let line = Line::through(takeover, value, slope);
        let k = &mut *self.keeper;
        k.rate = slope;
        k.origin = origin;
        k.counter_since_mono = Some(s.mono);
        if origin == FreqOrigin::Measured {
            k.window_ns = k
                .window
                .first()
                .map_or(0, |f| s.mono.saturating_sub(f.mono));
            k.window.push(s);
            k.refinements = k.refinements.saturating_add(1);
        }
        k.period_ns = k.window_ns.clamp(MIN_PERIOD_NS, MAX_PERIOD_NS);
        // The piece being replaced, as `next_piece` sees it: it ends (and
        // the new line starts) at the take-over point.
        k.state = State {
            mode: MODE_COUNTER,
            end: takeover,
            line,
            ..old
        };
        let next = self.next_piece(s.ticks);
        let (wall, wall_deadline) = self.wall_line(&s, next.trigger);
        self.publish(State {
            wall,
            wall_deadline,
            ..next
        });
    }

    /// Publishes the OS clock for good, continuing the current readings.
    fn stay_on_os(&mut self, reason: Fallback) {
        if let Some(d) = self.keeper.decision.as_mut() {
            d.fallback = Some(reason);
        }
        self.keeper.origin = FreqOrigin::Os;
        let old = self.keeper.state;
        self.publish(State {
            mode: MODE_OS,
            trigger: u64::MAX,
            end: u64::MAX,
            ..old
        });
    }

    /// Switches from the counter to the OS clock, for good (the kernel no
    /// longer vouches for the counter) — once the current piece has ended.
    ///
    /// Readers may convert any counter value below the piece's end with it,
    /// so the OS clock can only take over there. Matching that end to a
    /// `CLOCK_MONOTONIC` value ahead of time would extrapolate the piece's
    /// rate up to a period ahead — and right after NTP changed the rate, the
    /// error of that (hundreds of µs) could put OS readings below counter
    /// readings. So until the end no new piece is published; the first
    /// update after it (a reader past the end, or the upkeep thread) makes
    /// the switch, matching the end by extrapolating back over a short span
    /// from a fresh sample, and starting the OS readings `switch_margin`
    /// above the piece's last value.
    fn demote_at_end(&mut self, reason: Fallback) {
        let old = self.keeper.state;
        // Until the end only the counter is read: every reader past
        // `trigger` comes here while the switch waits.
        let now = self.now_ticks();
        if now < old.end {
            if self.tk.upkeep.load(Ordering::Relaxed) {
                let due = self
                    .mono()
                    .saturating_add(old.line.nanos_for(old.end - now));
                self.tk.upkeep_due.store(due, Ordering::Relaxed);
            }
            return;
        }
        let s = self.narrow_sample();
        let takeover = s.mono.saturating_sub(old.line.nanos_for(s.ticks - old.end));
        let value = old.line.at(old.end).wrapping_add(switch_margin(&s));
        let k = &mut *self.keeper;
        k.demoted_at = Some(s.real);
        k.demote_pending = None;
        if let Some(d) = k.decision.as_mut() {
            d.fallback = Some(reason);
        }
        k.origin = FreqOrigin::Os;
        self.publish(State {
            mode: MODE_OS,
            takeover,
            trigger: u64::MAX,
            end: u64::MAX,
            os_offset: value.wrapping_sub(takeover),
            wall_deadline: 0,
            ..old
        });
    }
}

/// How far ahead of the old source a new one starts: `MARGIN_NS` plus the
/// sample's bracket, twice (see "Source switches").
fn switch_margin(s: &Sample) -> u64 {
    MARGIN_NS + 2 * s.width.min(1_000_000)
}

/// About how many ticks `nanos` take at the line's rate, for scheduling:
/// the points it places are published, never recomputed, so they need no
/// exactness, and a floating-point division costs a fraction of the 128-bit
/// one (a reader pays for the update, about once a second).
fn schedule_ticks(line: Line, nanos: u64) -> u64 {
    let ticks_per_ns = (1u128 << crate::scale::LINE_SHIFT) as f64 / line.slope.max(1) as f64;
    (nanos as f64 * ticks_per_ns) as u64 // saturates at u64::MAX
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

// ---------------------------------------------------------------------------
// The process's timekeeper, for the tiers and the public API.
// ---------------------------------------------------------------------------

/// See [`Timekeeper::counter_chosen`].
pub(crate) fn counter_chosen() -> Option<bool> {
    TK.counter_chosen()
}

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

/// Re-anchors the wall tier to `CLOCK_REALTIME` now, e.g. right after the
/// program itself set the system clock. Not async-signal-safe.
pub fn resync_wall() {
    TK.force_update();
}

/// Sets how often the wall tier re-anchors to `CLOCK_REALTIME` (default 1 s).
///
/// Intervals below 1 ms, zero included, are raised to 1 ms, and intervals
/// over 2^40 ns (18 minutes) lowered to 2^40 ns. The wall line is
/// re-anchored at a state update, and readers update the state at most
/// about once a millisecond whatever the interval, so that reading the
/// precise clocks stays a load. Shorter intervals follow clock steps sooner; each
/// re-anchoring costs about a microsecond on the reader that does it, or
/// nothing on readers while the upkeep thread runs (which also follows
/// steps within milliseconds by itself; see
/// [`start_upkeep`](crate::start_upkeep)). Not async-signal-safe.
pub fn set_wall_resync_interval(interval: Duration) {
    TK.set_wall_interval(u64::try_from(interval.as_nanos()).unwrap_or(u64::MAX));
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
    /// `MonotonicInstant` reads) when the counter is in use.
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
    pub kernel_clocksource: Option<detect::Clocksource>,
    /// Whether the counter is invariant.
    pub invariant: bool,
    /// The current `MonotonicInstant` strategy.
    pub monotonic_mode: MonotonicMode,
    /// Whether the upkeep thread does the state updates (readers then only load).
    pub upkeep: bool,
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

#[cfg(test)]
mod tests;
