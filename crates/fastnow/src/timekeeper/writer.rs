//! The writer: the one thread at a time that holds the writers' lock, and
//! what it does with it — the state updates a reader at `trigger`, the
//! upkeep thread or a control asks for. Each update samples the counter
//! against the kernel's clocks (or re-checks the kernel's verdict on the
//! counter), takes the measurement into the rate window, and publishes the
//! next piece and the wall line; switches of source are in `switch`. The
//! rules the pieces follow are in spec/SEMANTICS.md ("The timeline",
//! "Calibration", "Who updates").

use crate::source::arch::FreqOrigin;
use crate::source::{detect, os};
use crate::timekeeper::calibrate::{self, Sample, Verdict};
use crate::timekeeper::latch::Taken;
use crate::timekeeper::line::{Line, LINE_SHIFT};
use crate::timekeeper::state::{State, MODE_COUNTER, MODE_NONE, MODE_OS};
use crate::timekeeper::{
    grace, Clocks, Keeper, Timekeeper, CHECK_PERIOD_NS, DEFAULT_WALL_INTERVAL_NS, MAX_PERIOD_NS,
    MAX_WALL_INTERVAL_NS, MIN_PERIOD_NS, MIN_WALL_INTERVAL_NS, READER_PERIOD_NS, UPKEEP_PERIOD_NS,
    UPKEEP_SLACK_NS, WALL_GUARD_NS,
};
use core::sync::atomic::Ordering;

/// The held lock and the bookkeeping it guards; unlocks when dropped.
pub(super) struct Writer<'a, C: Clocks> {
    pub(super) tk: &'a Timekeeper<C>,
    pub(super) keeper: &'a mut Keeper,
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

    pub(super) fn new(tk: &'a Timekeeper<C>) -> Writer<'a, C> {
        let taken = tk.lock.lock();
        Writer::from(tk, taken)
    }

    pub(super) fn publish(&mut self, state: State) {
        // Every update measures the boot offset again, so a resume is
        // followed at the first update after it (`boot`).
        let state = State {
            boot_offset: self.boot_offset(&state),
            ..state
        };
        self.keeper.state = state;
        if state.mode == MODE_COUNTER {
            // Release: a reader that sees the flag also sees detection's
            // choice of ordered read (`arch::ORDERED_ALT`), which it makes
            // next with no state load in between (RDTSCP faults where the
            // choice is LFENCE;RDTSC for want of it).
            self.tk.counter_read.store(true, Ordering::Release);
        } else if state.os_for_good() {
            // No counter state comes any more: ordered readers go straight
            // to the OS clock, without a counter read first.
            self.tk.counter_read.store(false, Ordering::Relaxed);
        }
        // Save, then publish (see `KeeperCell`).
        self.save();
        self.tk.state.write(&state.to_words());
    }

    /// Saves the bookkeeping for a forked child (see `KeeperCell`).
    pub(super) fn save(&mut self) {
        let cell = &self.tk.keeper;
        let next = 1 - cell.saved_at.load(Ordering::Relaxed);
        // SAFETY: this thread holds the lock; `saved_at` does not point to
        // `saved[next]`, so a forked child would not read it.
        unsafe { *cell.saved[next].get() = *self.keeper };
        cell.saved_at.store(next, Ordering::Release);
    }

    pub(super) fn sample(&self) -> Sample {
        let c = &self.tk.clocks;
        // Twice the tightest bracket seen; until there is one, all brackets.
        let good_width = match self.keeper.min_width {
            u64::MAX => 0,
            min => min.saturating_mul(2),
        };
        calibrate::sample(|| c.counter_ordered(), || c.mono(), || c.real(), good_width)
    }

    pub(super) fn now_ticks(&self) -> u64 {
        self.tk.clocks.counter_ordered()
    }

    pub(super) fn mono(&self) -> u64 {
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
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn reader_update_cost(&self, check: bool) -> u64 {
        self.finish_warm_up();
        let start = self.clocks.mono();
        self.update_as_reader(check);
        self.clocks.mono() - start
    }

    /// One update as a reader at `trigger` does it, for timing by a caller
    /// that reads no OS clock first (which would warm the update's path).
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn reader_update(&self, check: bool) {
        self.finish_warm_up();
        self.update_as_reader(check);
    }

    #[cfg(any(test, feature = "test-hooks"))]
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
    #[cfg(any(test, feature = "test-hooks"))]
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
    pub(crate) fn force_update(&self) {
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

    /// See [`recalibrate`](crate::recalibrate).
    pub(crate) fn recalibrate(&self) {
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

    pub(crate) fn set_wall_interval(&self, ns: u64) {
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

    /// A copy of the writer's bookkeeping, once the first calibration is
    /// over: what [`clock_info`](crate::clock_info) reports.
    pub(crate) fn keeper(&self) -> Keeper {
        self.finish_warm_up();
        *Writer::new(self).keeper
    }
}

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
    pub(super) fn preempted(&self, s: &Sample) -> bool {
        s.width > 4 * self.keeper.min_width.min(s.width) + 200
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
    pub(super) fn wall_line(&self, s: &Sample, next_trigger: u64) -> (Line, u64) {
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
    pub(super) fn next_piece(&mut self, now: u64) -> State {
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
}

/// About how many ticks `nanos` take at the line's rate, for scheduling:
/// the points it places are published, never recomputed, so they need no
/// exactness, and a floating-point division costs a fraction of the 128-bit
/// one (a reader pays for the update, about once a second).
fn schedule_ticks(line: Line, nanos: u64) -> u64 {
    let ticks_per_ns = (1u128 << LINE_SHIFT) as f64 / line.slope.max(1) as f64;
    (nanos as f64 * ticks_per_ns) as u64 // saturates at u64::MAX
}
