//! The writer: the one thread at a time that holds the writers' lock, and
//! what it does with it — the state updates a reader at `trigger`, the
//! upkeep thread or a control asks for. Each update samples the counter
//! against the kernel's clocks (and, when due, re-checks the kernel's
//! verdict on the counter first), takes the measurement into the rate
//! window, and publishes the next piece with the offsets it keeps
//! (`offsets`); switches of source are in `switch`. The rules the pieces
//! follow are in spec/SEMANTICS.md ("The timeline", "Calibration", "Who
//! updates").

use crate::source::arch::FreqOrigin;
use crate::source::os::Taken;
use crate::source::{detect, os};
use crate::timekeeper::calibrate::{self, Sample, Verdict};
use crate::timekeeper::line::{Line, LINE_SHIFT};
use crate::timekeeper::state::{State, MODE_COUNTER, MODE_NONE, MODE_OS};
use crate::timekeeper::{
    grace, switch_margin, Clocks, Keeper, Rebase, Timekeeper, CHECK_PERIOD_NS,
    DEFAULT_WALL_INTERVAL_NS, FLOOR_SLACK_NS, MAX_PERIOD_NS, MAX_WALL_INTERVAL_NS, MIN_PERIOD_NS,
    MIN_WALL_INTERVAL_NS, READER_PERIOD_NS, REBASE_NS, SETTLE_NS, SLOW_SAMPLES_FOR_A_CHECK,
    SWITCH_SAMPLE_TRIES, UPKEEP_PERIOD_NS, UPKEEP_SLACK_NS,
};
use core::sync::atomic::Ordering;

/// The held lock and the bookkeeping it guards; unlocks when dropped.
pub(super) struct Writer<'a, C: Clocks> {
    pub(super) tk: &'a Timekeeper<C>,
    pub(super) keeper: &'a mut Keeper,
    /// A reader makes this update: its work is bounded (up to
    /// `READER_BRACKETS` of each kind; the kernel's verdict only where a
    /// reading showed cause).
    pub(super) reader: bool,
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
        Writer {
            tk,
            keeper,
            reader: false,
        }
    }

    fn try_new(tk: &'a Timekeeper<C>) -> Option<Writer<'a, C>> {
        tk.lock.try_lock().map(|taken| Writer::from(tk, taken))
    }

    pub(super) fn new(tk: &'a Timekeeper<C>) -> Writer<'a, C> {
        let taken = tk.lock.lock();
        Writer::from(tk, taken)
    }

    /// Publishes `state` with the offsets it keeps, measured again at
    /// every update (`offsets`: so a resume, a step of the system clock, is
    /// followed at the first update after it); `sample` is the update's
    /// (`None`: an OS state, published without one).
    pub(super) fn publish(&mut self, state: State, sample: Option<&Sample>) {
        let state = self.offsets(state, sample);
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

    /// A sample for matching two sources, where the bracket's width becomes
    /// a forward step of every reading (`switch_margin`): a preempted one is
    /// taken again, a few times (a switch happens once; a thread preempted
    /// mid-sample usually runs on undisturbed once it is back).
    pub(super) fn narrow_sample(&self) -> Sample {
        let mut best = self.sample_of(calibrate::BRACKETS);
        for _ in 0..SWITCH_SAMPLE_TRIES {
            if !self.preempted(&best) {
                break;
            }
            let s = self.sample_of(calibrate::BRACKETS);
            if s.width < best.width {
                best = s;
            }
        }
        best
    }

    /// A sample for an update: up to two brackets of each kind where a
    /// reader makes it (`calibrate::READER_BRACKETS`: the first, cold, is
    /// often disturbed; where both are, it measures nothing, and the next
    /// update samples again), up to the full set otherwise.
    pub(super) fn sample(&self) -> Sample {
        self.sample_of(if self.reader {
            calibrate::READER_BRACKETS
        } else {
            calibrate::BRACKETS
        })
    }

    /// A sample of up to `brackets` brackets of each kind.
    fn sample_of(&self, brackets: usize) -> Sample {
        let c = &self.tk.clocks;
        // Twice the tightest bracket seen; until there is one, all brackets.
        let good_width = match self.keeper.min_width {
            u64::MAX => 0,
            min => min.saturating_mul(2),
        };
        calibrate::sample(
            || c.counter_ordered(),
            || c.mono(),
            || c.real(),
            good_width,
            brackets,
        )
    }

    /// Counts samples whose every bracket was wide: three in a row is how
    /// the kernel's clock turning into a system call looks (the vDSO falls
    /// back to one once the kernel keeps time with a clocksource user space
    /// cannot read, such as the HPET), and asks for the kernel's verdict at
    /// the next update, a reader's included.
    fn note_slow_sample(&mut self, s: &Sample) {
        let wide = self.wide(s.width);
        let k = &mut *self.keeper;
        if wide {
            k.slow_samples = k.slow_samples.saturating_add(1);
            if k.slow_samples >= SLOW_SAMPLES_FOR_A_CHECK {
                k.check_wanted = true;
                k.slow_samples = 0;
            }
        } else {
            k.slow_samples = 0;
        }
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
pub(super) enum Due {
    /// A reader's counter value (or OS reading) reached `trigger`.
    Trigger(u64),
    /// A reader's reading is past `end`.
    PastEnd(u64),
    /// A reader's counter value is below the state's floor: the counter
    /// went back.
    Below(u64),
}

/// What a reader's request for a state update did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Updated {
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
    pub(super) fn update_from_reader(&self, due: Due) -> Updated {
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
            Due::Below(t) => s.mode == MODE_COUNTER && t < s.floor,
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
    pub(super) fn ensure_published(&self) -> bool {
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
    /// released included, in ns: a sample, or (`check`) a clocksource check
    /// and a sample.
    #[cfg(any(test, feature = "__test-hooks"))]
    pub(super) fn reader_update_cost(&self, check: bool) -> u64 {
        self.finish_warm_up();
        let start = self.clocks.mono();
        self.update_as_reader(check);
        self.clocks.mono() - start
    }

    /// One update as a reader at `trigger` does it, for timing by a caller
    /// that reads no OS clock first (which would warm the update's path).
    #[cfg(any(test, feature = "__test-hooks"))]
    pub(super) fn reader_update(&self, check: bool) {
        self.finish_warm_up();
        self.update_as_reader(check);
    }

    #[cfg(any(test, feature = "__test-hooks"))]
    fn update_as_reader(&self, check: bool) {
        if let Some(mut w) = Writer::try_new(self) {
            let now = w.mono();
            let k = &mut *w.keeper;
            // A check here is one a reading gave cause for (`check_wanted`):
            // a reader reads the kernel's verdict for no other reason.
            k.check_wanted = check;
            k.next_check_mono = if check {
                0
            } else {
                k.next_check_mono.max(now + 1)
            };
            w.update(Cause::Reader(Due::Trigger(0)));
        }
    }

    /// Runs `f` holding the writers' lock (tests of what readers do then).
    #[cfg(any(test, feature = "__test-hooks"))]
    pub(super) fn with_lock<R>(&self, f: impl FnOnce() -> R) -> R {
        let _w = Writer::new(self);
        f()
    }

    /// Waits until the first state is published (not for read paths).
    fn published(&self) {
        while !self.ensure_published() {
            os::yield_now();
        }
    }

    /// The upkeep thread's turn: updates the state if due (each update
    /// re-checks the kernel's verdict), and at once when `clock_was_set`,
    /// which re-anchors the wall clock. Returns the `CLOCK_MONOTONIC` time
    /// of its next turn.
    #[cfg_attr(not(feature = "std"), allow(dead_code))] // the upkeep thread needs std
    pub(super) fn upkeep_turn(&self, clock_was_set: bool) -> u64 {
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
    pub(super) fn set_upkeep(&self, running: bool) {
        self.upkeep.store(running, Ordering::Relaxed);
        self.upkeep_due.store(0, Ordering::Relaxed);
    }

    /// A state update now (recalibrate, resync, a new interval).
    pub(super) fn force_update(&self) {
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
            // Not while the verdict is awaited: that may last.
            if self.verdict_awaited() {
                return;
            }
            while self.clocks.mono() < s.trigger {
                core::hint::spin_loop();
            }
            Writer::new(self).update(Cause::Forced);
        }
    }

    /// See [`recalibrate`](crate::recalibrate).
    pub(super) fn recalibrate(&self) {
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

    pub(super) fn set_wall_interval(&self, ns: u64) {
        let ns = ns.clamp(MIN_WALL_INTERVAL_NS, MAX_WALL_INTERVAL_NS);
        self.wall_interval.store(ns, Ordering::Relaxed);
        self.force_update();
    }

    pub(super) fn wall_interval_ns(&self) -> u64 {
        match self.wall_interval.load(Ordering::Relaxed) {
            0 => DEFAULT_WALL_INTERVAL_NS,
            ns => ns.max(MIN_WALL_INTERVAL_NS),
        }
    }

    /// A copy of the writer's bookkeeping, once the first calibration is
    /// over: what [`clock_info`](crate::clock_info) reports.
    pub(super) fn keeper(&self) -> Keeper {
        self.finish_warm_up();
        let mut w = Writer::new(self);
        // The kernel's verdict, read again if a check is due: readers no
        // longer read it as a matter of course, and what this reports should
        // be no older than a second.
        if w.keeper.state.mode == MODE_COUNTER
            && w.follows_kernel()
            && w.mono() >= w.keeper.next_check_mono
        {
            w.check_kernel();
        }
        *w.keeper
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
        self.wide(s.width)
    }

    /// Whether a bracket of `width` ns was disturbed: far wider than the
    /// tightest seen.
    pub(super) fn wide(&self, width: u64) -> bool {
        width > 4 * self.keeper.min_width.min(width) + 200
    }

    /// One state update.
    fn update(&mut self, cause: Cause) {
        if self.keeper.decision.is_none() {
            return;
        }
        self.reader = matches!(cause, Cause::Reader(_));
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
        // Every update samples: the wall clock's offset is measured again
        // at each (`offsets`), and pieces last no longer than the wall
        // resync interval. The kernel's verdict is re-checked by the upkeep
        // thread at every update, just before the piece's end, so that a
        // demotion completes milliseconds after it is seen; by a forced
        // update (and `clock_info`) once it is due, once a second; and by a
        // reader only where a reading showed cause (`Keeper::check_wanted`:
        // a re-base, or the kernel's clock turned into a system call): the
        // `pread` of sysfs it takes costs tens of microseconds from cold
        // caches, which no reading should pay as a matter of course
        // (spec/SEMANTICS.md, "Who updates").
        let check_due = self.follows_kernel()
            && self.mono() >= self.keeper.next_check_mono
            && (!self.reader || self.keeper.check_wanted);
        let upkeep_check = cause == Cause::Upkeep && self.follows_kernel();
        if (check_due || upkeep_check) && self.check_kernel() {
            return;
        }
        let sample = self.sample();
        self.note_slow_sample(&sample);
        // Right after a re-base the window began past the jump: its rate is
        // the one to judge the line by, and to re-base with (the jump may
        // have come with a new rate, as a migration's does).
        let measured = self.keeper.trust_next;
        if measured {
            self.measure(&sample);
        }
        if self.rebase(&sample) {
            return;
        }
        if !measured {
            self.measure(&sample);
        }
        // A new piece can only follow one that has started: a reader holding
        // the next state converts counter values below its take-over point
        // with `prev`, the current line, which must be the right one there.
        // (Readers only get here past `trigger`, which is past the take-over;
        // forced and upkeep updates can come earlier.)
        let next = if sample.ticks >= s.takeover {
            self.next_piece(sample.ticks)
        } else {
            if self.tk.upkeep.load(Ordering::Relaxed) {
                // (At the rate in use: a piece that stands still has none.)
                let rate = Line {
                    offset: 0,
                    slope: self.next_slope(),
                };
                let wait = rate.nanos_for(s.takeover - sample.ticks);
                let due = sample.mono.saturating_add(wait);
                self.tk.upkeep_due.store(due, Ordering::Relaxed);
            }
            s
        };
        self.publish(next, Some(&sample));
    }

    /// Reads the kernel's verdict again; when it no longer vouches for the
    /// counter, switches to the OS clock (at the current piece's end) and
    /// returns true. One that cannot be read for now changes nothing and is
    /// read again at the next check (`verdict`).
    fn check_kernel(&mut self) -> bool {
        self.keeper.check_wanted = false;
        let verdict = self.tk.clocks.verdict(&mut self.keeper.verdict_file);
        self.keeper.next_check_mono = self.mono() + CHECK_PERIOD_NS;
        self.note_verdict(verdict, self.keeper.next_check_mono - CHECK_PERIOD_NS);
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
        // Across a jump of the counter nothing is measured (`None`: the
        // window restarts here).
        let measured = k.window.start_for(s).map(|start| {
            let slope = match calibrate::discontinuous(start, s) {
                true => None,
                false => calibrate::slope_between(start, s),
            };
            (slope, s.mono.saturating_sub(start.mono))
        });
        match measured {
            Some((Some(slope), window_ns)) if window_ns >= MIN_PERIOD_NS => {
                let verdict = if core::mem::take(&mut k.trust_next) {
                    Verdict::Accept(slope.max(calibrate::floor(k.rate)))
                } else {
                    calibrate::judge(k.rate, slope, k.suspect)
                };
                match verdict {
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

    /// The next counter piece, taking over where the current one ends, at
    /// the newest rate (never below 7/8 of the current one), and the
    /// schedule of the update after it; `now` is the counter value of the
    /// update's sample. The offsets are the current ones, until `publish`
    /// measures them.
    pub(super) fn next_piece(&mut self, now: u64) -> State {
        let s = self.keeper.state;
        let slope = self.next_slope();
        let takeover = s.end;
        let line = Line::through(takeover, s.line.at(takeover), slope);
        let (trigger, end) = self.schedule(slope, now, takeover);
        State {
            mode: MODE_COUNTER,
            takeover,
            trigger,
            end,
            line,
            prev: s.line,
            os_offset: 0,
            // Never below the current piece's take-over: `prev`, this
            // piece's line, converts from there only.
            floor: self.floor_at(now).max(s.takeover),
            ..s
        }
    }

    /// The slope of the next piece: the newest rate, never below 7/8 of the
    /// current piece's (a piece that stands still has no such floor).
    pub(super) fn next_slope(&self) -> u64 {
        self.keeper
            .rate
            .max(calibrate::floor(self.keeper.state.line.slope))
    }

    /// The floor of a state published from a sample at counter value `now`
    /// (see `State::floor`).
    pub(super) fn floor_at(&self, now: u64) -> u64 {
        let rate = Line {
            offset: 0,
            slope: self.keeper.rate,
        };
        now.saturating_sub(rate.ticks_for(FLOOR_SLACK_NS))
    }

    /// The trigger and end of a piece at `slope` whose update's sample read
    /// the counter at `now`: a period after it (never below the floor
    /// period, whatever the interval: a piece ending a few ticks after its
    /// sample would send every reader to the update), and never before
    /// `not_before`; also tells the upkeep thread when to update.
    fn schedule(&mut self, slope: u64, now: u64, not_before: u64) -> (u64, u64) {
        let rate = Line { offset: 0, slope };
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
            .saturating_add(schedule_ticks(rate, period))
            .max(not_before);
        let end = trigger.saturating_add(schedule_ticks(rate, grace(period)).max(1));
        (trigger, end)
    }

    /// Re-bases the timeline when the sample `s` finds the counter line
    /// astray from `CLOCK_MONOTONIC` plus `mono_offset` by more than
    /// `REBASE_NS` (and the sample's width), or the counter below the
    /// state's floor; returns whether it did (and published).
    ///
    /// That is what a counter does across a suspend it counts (an
    /// invariant TSC in suspend-to-idle runs on while `CLOCK_MONOTONIC`
    /// stops), a reset at resume (the TSC restarts near zero after
    /// suspend-to-RAM on much hardware, and the kernel re-bases its own
    /// clocksource), a migration to a host with another counter offset, or
    /// a long idle while NTP changed the rate. Continuing the line across it
    /// would carry the jump into every later reading; instead the next
    /// piece continues from where `CLOCK_MONOTONIC` says the timeline is —
    /// or, where readings already went further than that (the piece in use
    /// counted part of the jump before anyone could tell), from there,
    /// standing still until `CLOCK_MONOTONIC` catches up. No reading steps
    /// back: the value each case continues from is at or above everything
    /// a reader holding the old state can have returned (spec/SEMANTICS.md,
    /// "Suspend, resume and counter jumps").
    fn rebase(&mut self, s: &Sample) -> bool {
        let old = self.keeper.state;
        if !self.astray(s) {
            if old.mode == MODE_COUNTER && s.ticks >= old.takeover && !self.preempted(s) {
                self.keeper.settling = false;
            }
            return false;
        }
        // The piece after a re-base is short: the rate is measured again a
        // millisecond later (a jump may come with a new rate, as a
        // migration's does), over a window that begins here.
        self.keeper.period_ns = MIN_PERIOD_NS;
        // A re-base moves every later reading by what this sample says:
        // take one that was not preempted, as a source switch does.
        let s = if self.preempted(s) {
            self.narrow_sample()
        } else {
            *s
        };
        let slope = self.next_slope();
        let rate = Line { offset: 0, slope };
        let o = self.keeper.mono_offset;
        // Where the timeline kept to CLOCK_MONOTONIC stands at the sample.
        let kept = s.mono.wrapping_add(o);
        let ahead;
        let next = if s.ticks >= old.floor && s.ticks < old.end {
            // The counter is inside the piece: readers holding it may still
            // convert any value below its end with its line, so the new
            // piece takes over there, from the old line's value.
            let at_end = old.line.at(old.end);
            let kept_at_end = kept.wrapping_add(rate.nanos_for(old.end - s.ticks));
            let diff = at_end.wrapping_sub(kept_at_end) as i64;
            ahead = Some(diff);
            if diff < 0 {
                // Behind: the line ends at the end, and the first reading
                // past it updates again, re-basing from its own sample
                // (below). Stepping forward at the end within this state
                // would move the boot readings forward with it, while its
                // boot offset, measured now against the line readers are
                // still on, could not come down after.
                let line = Line::through(old.end, at_end, slope);
                State {
                    mode: MODE_COUNTER,
                    takeover: old.end,
                    trigger: old.end,
                    end: old.end.saturating_add(1),
                    line,
                    prev: old.line,
                    floor: self.floor_at(s.ticks).max(old.takeover),
                    ..old
                }
            } else {
                // Ahead: stand still at the end's value until
                // CLOCK_MONOTONIC gets there.
                let catch_up = old
                    .end
                    .saturating_add(rate.ticks_for(catch_up_ns(diff as u64, &s)));
                self.stand_still(old, old.end, at_end, catch_up, s.ticks)
            }
        } else {
            // Past the end, or below the floor (the counter went back): no
            // reader holding the old state converts such a value; those
            // that read one returned at most its lower bound, taken at the
            // latest now.
            let mono_now = self.mono();
            let bound = old.lower_bound(s.ticks, mono_now);
            ahead = (s.ticks >= old.floor).then(|| {
                let counted = old
                    .line
                    .at(old.end)
                    .wrapping_add(rate.nanos_for(s.ticks - old.end));
                counted.wrapping_sub(kept) as i64
            });
            let from = if (kept.wrapping_sub(bound) as i64) >= 0 {
                kept
            } else {
                bound
            };
            let value = from.wrapping_add(switch_margin(&s));
            if from == kept {
                self.keeper.mono_offset = value.wrapping_sub(s.mono);
                // What the readings were on: the old line past its end, or
                // (the counter went back) its end.
                let on = match ahead {
                    Some(ahead) => kept.wrapping_add(ahead as u64),
                    None => old.line.at(old.end),
                };
                if (value.wrapping_sub(on) as i64) > 0 {
                    self.keeper.boot_lowering = value.wrapping_sub(on);
                }
                let line = Line::through(s.ticks, value, slope);
                let (trigger, end) = self.schedule(slope, s.ticks, s.ticks);
                State {
                    mode: MODE_COUNTER,
                    takeover: s.ticks,
                    trigger,
                    end,
                    line,
                    prev: Line::flat(value),
                    floor: self.floor_at(s.ticks),
                    ..old
                }
            } else {
                let behind = value.wrapping_sub(kept);
                let catch_up = s
                    .ticks
                    .saturating_add(rate.ticks_for(catch_up_ns(behind, &s)));
                self.stand_still(old, s.ticks, value, catch_up, s.ticks)
            }
        };
        let k = &mut *self.keeper;
        k.rebases = k.rebases.saturating_add(1);
        k.last_rebase = Some(Rebase {
            at_unix_nanos: s.real,
            counter_ahead_ns: ahead,
        });
        // The rate window would span the jump: start a new one here, and
        // measure again a millisecond later.
        k.window.clear();
        k.window.push(s);
        k.suspect = None;
        k.trust_next = true;
        k.settling = true;
        // The kernel may have changed its mind about the counter at the
        // same event (a resume, a migration): the next update reads its
        // verdict, a reader's included.
        k.check_wanted = true;
        // The offset the timeline kept to CLOCK_MONOTONIC moved: the next
        // measurement starts afresh (`offsets`), not as a drift from the
        // last.
        k.mono_measured = None;
        k.drift_ppb = [0; 2];
        self.publish(next, Some(&s));
        true
    }

    /// Whether sample `s` finds the counter off the timeline kept to
    /// `CLOCK_MONOTONIC` (see `rebase`): below the floor, or, at the point
    /// where the next piece would take over (or at the sample, past the
    /// end), more than `REBASE_NS` and the sample's width from it.
    pub(super) fn astray(&self, s: &Sample) -> bool {
        let old = self.keeper.state;
        if old.mode != MODE_COUNTER || s.ticks < old.floor {
            return old.mode == MODE_COUNTER;
        }
        if s.ticks < old.takeover {
            // An early update (the upkeep thread's, a forced one): a new
            // piece can only follow one that has started (readers holding
            // the next state convert values below its take-over point with
            // `prev`, which must be this piece's line there). A later
            // update sees the same jump.
            return false;
        }
        let rate = Line {
            offset: 0,
            slope: self.next_slope(),
        };
        let kept = s.mono.wrapping_add(self.keeper.mono_offset);
        let (counted, kept) = if s.ticks < old.end {
            let gap = rate.nanos_for(old.end - s.ticks);
            (old.line.at(old.end), kept.wrapping_add(gap))
        } else {
            let past = rate.nanos_for(s.ticks - old.end);
            (old.line.at(old.end).wrapping_add(past), kept)
        };
        let diff = counted.wrapping_sub(kept) as i64;
        let bound = if self.keeper.settling {
            SETTLE_NS
        } else {
            REBASE_NS
        };
        diff.unsigned_abs() > bound.saturating_add(s.width)
    }

    /// A piece that stands still at `value` from counter value `takeover`
    /// until `catch_up`, where the next update continues it at the rate in
    /// use; `now` is the sample's counter value.
    fn stand_still(
        &mut self,
        old: State,
        takeover: u64,
        value: u64,
        catch_up: u64,
        now: u64,
    ) -> State {
        let end = catch_up.max(takeover.saturating_add(1));
        // The update comes a little before the end, as for any piece.
        let slope = self.keeper.rate;
        let rate = Line { offset: 0, slope };
        let grace_ticks = rate
            .ticks_for(grace(MIN_PERIOD_NS))
            .min(end - takeover.min(end));
        // A millisecond after the sample at the latest: the update there
        // measures the rate from the re-base on (a migration's new one),
        // and the piece after it stands still as long, or continues at it.
        let trigger = end
            .saturating_sub(grace_ticks)
            .min(now.saturating_add(rate.ticks_for(MIN_PERIOD_NS)))
            .max(takeover);
        if self.tk.upkeep.load(Ordering::Relaxed) {
            let wait = rate.nanos_for(trigger.saturating_sub(now));
            self.tk
                .upkeep_due
                .store(self.mono().saturating_add(wait), Ordering::Relaxed);
        }
        State {
            mode: MODE_COUNTER,
            takeover,
            trigger,
            end,
            line: Line::flat(value),
            // Below the take-over: the old line up to the old end (and the
            // floor never below the old take-over, where that line starts),
            // or, re-based from the sample, the same flat line.
            prev: if takeover == old.end {
                old.line
            } else {
                Line::flat(value)
            },
            floor: if takeover == old.end {
                self.floor_at(now).max(old.takeover)
            } else {
                self.floor_at(now)
            },
            ..old
        }
    }
}

/// How long a piece re-based from `ahead` nanoseconds ahead of the
/// timeline kept to `CLOCK_MONOTONIC` stands still: a little less, so that
/// it never outlasts the moment `CLOCK_MONOTONIC` gets there (the rate and
/// the sample are a little off; a reading's lower bound past the old end
/// starts growing at that moment).
fn catch_up_ns(ahead: u64, s: &Sample) -> u64 {
    ahead.saturating_sub(ahead / 64 + s.width)
}

/// About how many ticks `nanos` take at the line's rate, for scheduling:
/// the points it places are published, never recomputed, so they need no
/// exactness, and a floating-point division costs a fraction of the 128-bit
/// one (a reader pays for the update, about once a second).
fn schedule_ticks(line: Line, nanos: u64) -> u64 {
    let ticks_per_ns = (1u128 << LINE_SHIFT) as f64 / line.slope.max(1) as f64;
    (nanos as f64 * ticks_per_ns) as u64 // saturates at u64::MAX
}
