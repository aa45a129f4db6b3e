//! Every reader's paths: the precise tier's and the wall tier's fast paths
//! (a consistent load of the words they need, the counter, a range check,
//! one multiply and an add) and the slow path behind each, which handles
//! everything else — the OS clock, the process's first reading, a due
//! update, a source switch. No path waits for another thread, so every
//! reading may be taken in a signal handler (spec/SEMANTICS.md, "Processes,
//! signals, threads").

use crate::timekeeper::line::Line;
use crate::timekeeper::state::{word, Converted, State, MODE_COUNTER, MODE_NONE, MODE_OS};
use crate::timekeeper::writer::{Due, Updated};
use crate::timekeeper::{Clocks, Timekeeper, TK};
use core::sync::atomic::Ordering;

impl<C: Clocks> Timekeeper<C> {
    /// A reading, from a bare or an ordered counter read.
    #[inline(always)]
    pub(crate) fn read_nanos(&self, ordered: bool) -> u64 {
        if ordered {
            return self.read_nanos_ordered();
        }
        let (takeover, span, line) = self.fast_words();
        if span != 0 {
            let t = self.clocks.counter();
            if t.wrapping_sub(takeover) < span {
                return line.at(t);
            }
        }
        self.read_slow()
    }

    /// The ordered read's fast path: the counter first, then the words.
    ///
    /// An ordered read waits until every earlier instruction has executed,
    /// so the state's loads, were they issued before it as the bare path
    /// issues them, would be waited for too; after it they overlap the
    /// counter read instead. The order does not change the result: a
    /// counter value converts to the same nanoseconds under every state
    /// whose piece holds it (a piece's line is fixed from its take-over to
    /// its end, and the next piece continues it there), and a value no
    /// loaded piece holds — older than the piece, or past its trigger —
    /// goes to the slow path, which reads again after loading the state.
    /// Only the first check must come before the counter read: that the
    /// counter has been the source (`counter_read`), since on a machine
    /// whose counter detection refused the read may fault.
    #[inline(always)]
    fn read_nanos_ordered(&self) -> u64 {
        // Acquire (a plain load on x86): with it, detection's choice of
        // ordered read (see `Writer::publish`).
        if self.counter_read.load(Ordering::Acquire) {
            let t = self.clocks.counter_ordered();
            let (takeover, span, line) = self.fast_words();
            if t.wrapping_sub(takeover) < span {
                return line.at(t);
            }
        }
        self.read_slow()
    }

    /// The fast path's words: where the current piece starts, how far the
    /// fast path may go (0 unless the counter is the source), and the line.
    /// Loading them before the counter read lets the loads overlap it.
    #[inline(always)]
    fn fast_words(&self) -> (u64, u64, Line) {
        self.state.read(|w| {
            (
                w[word::TAKEOVER].load(Ordering::Relaxed),
                w[word::SPAN].load(Ordering::Relaxed),
                Line {
                    offset: w[word::OFFSET].load(Ordering::Relaxed),
                    slope: w[word::SLOPE].load(Ordering::Relaxed),
                },
            )
        })
    }

    /// Everything off the fast path: a counter value below the piece (read
    /// just before a new state took over) or past its trigger, the OS
    /// clock, the first reading of the process, a source switch. Never
    /// waits for another thread (see `State::lower_bound`).
    ///
    /// The counter is read again, ordered, after the state: the fast path's
    /// value may be older than a state published since, and only values
    /// read after a state was published are sure to lie in the range its
    /// `prev` line covers.
    #[cold]
    #[inline(never)]
    fn read_slow(&self) -> u64 {
        // The OS clock's own read: where it is the source for good (no
        // usable counter, or the kernel dropped it) every reading comes
        // here, and should cost what `CLOCK_MONOTONIC` costs. It loads the
        // four words an OS state needs (mode, trigger, end, offset), not all
        // thirteen (copying every word made it measurably dearer than std's;
        // BENCHMARKS.md, "The OS-clock fallback"), and leaves everything
        // else (a due update, the end) to the loop below.
        let os = self.state.read(|w| {
            let load = |i: usize| w[i].load(Ordering::Relaxed);
            (load(word::MODE) == MODE_OS).then(|| {
                let state = State {
                    mode: MODE_OS,
                    trigger: load(word::TRIGGER),
                    end: load(word::END),
                    os_offset: load(word::OS_OFFSET),
                    ..State::default()
                };
                (state, self.clocks.mono())
            })
        });
        if let Some((state, mono)) = os {
            if let Converted::Nanos { nanos, due: false } = state.convert(mono) {
                return nanos;
            }
        }
        loop {
            // OS-clock readings are taken inside the latch read: none is
            // taken after a newer state was published (spec/SEMANTICS.md,
            // "Source switches").
            let (words, mono) = self.state.read(|w| {
                let mode = w[word::MODE].load(Ordering::Relaxed);
                let words: [u64; word::COUNT] =
                    core::array::from_fn(|i| w[i].load(Ordering::Relaxed));
                let mono = (mode != MODE_COUNTER).then(|| self.clocks.mono());
                (words, mono)
            });
            let state = State::from_words(&words);
            let reading = match (state.mode, mono) {
                (MODE_NONE, _) => {
                    if self.ensure_published() {
                        continue;
                    }
                    // Another thread is publishing the first state; until it
                    // lands, act on the one every thread agrees on.
                    let mono = self.clocks.mono();
                    let first = self.before_first(mono);
                    if !self.state.is_published() {
                        return match first.convert(mono) {
                            Converted::Nanos { nanos, .. } => nanos,
                            Converted::PastEnd => self.slowed_reading(&first, mono),
                        };
                    }
                    continue;
                }
                (MODE_COUNTER, _) => self.clocks.counter_ordered(),
                (_, Some(m)) => m,
                (_, None) => unreachable!("OS modes read the OS clock"),
            };
            match state.convert(reading) {
                Converted::Nanos { nanos, due } => {
                    if due {
                        self.update_from_reader(Due::Trigger(reading));
                    }
                    return nanos;
                }
                Converted::PastEnd => match self.update_from_reader(Due::PastEnd(reading)) {
                    // The state this thread just published covers the
                    // reading (its piece takes over at or below it and ends
                    // past a sample taken after it): no second counter read,
                    // which could be past that piece's end too, and so on
                    // without end were pieces ever that short.
                    Updated::Published(new) if new.mode == state.mode => {
                        if let Converted::Nanos { nanos, .. } = new.convert(reading) {
                            return nanos;
                        }
                        continue;
                    }
                    // A switch of source (the reading is in the old
                    // source's units; at most twice in a process), or
                    // another thread's newer state: read again with it.
                    Updated::Published(_) | Updated::Current => continue,
                    Updated::Busy if self.newer_soon(&words) => continue,
                    Updated::Busy => return self.slowed_reading(&state, reading),
                },
            }
        }
    }

    /// A reading past `state`'s end, while another thread writes: the
    /// lower bound of what the next state gives (see `State::lower_bound`),
    /// counted.
    #[cold]
    fn slowed_reading(&self, state: &State, reading: u64) -> u64 {
        self.slowed.fetch_add(1, Ordering::Relaxed);
        state.lower_bound(reading)
    }

    /// Waits a few microseconds for another thread's update to land;
    /// whether it did.
    fn newer_soon(&self, seen: &[u64; word::COUNT]) -> bool {
        for _ in 0..256 {
            core::hint::spin_loop();
            if self.state.snapshot() != *seen {
                return true;
            }
        }
        false
    }

    /// The wall tier's reading (see [`unix_nanos`](crate::unix_nanos)).
    #[inline(always)]
    pub(crate) fn unix_nanos(&self) -> u64 {
        // The deadline is 0 whenever the line must not be used (not
        // published, OS source, near the ends of the range), so it also
        // stands for the source check, before any counter read.
        let (line, deadline) = self.state.read(|w| {
            (
                Line {
                    offset: w[word::WALL_OFFSET].load(Ordering::Relaxed),
                    slope: w[word::WALL_SLOPE].load(Ordering::Relaxed),
                },
                w[word::WALL_DEADLINE].load(Ordering::Relaxed),
            )
        });
        if deadline == 0 {
            return self.unix_nanos_slow(None);
        }
        let t = self.clocks.counter();
        if t >= deadline {
            return self.unix_nanos_slow(Some(t));
        }
        line.at(t)
    }

    /// Past the deadline (resync, or use the line while another thread
    /// does), or no line to use.
    #[cold]
    #[inline(never)]
    fn unix_nanos_slow(&self, ticks: Option<u64>) -> u64 {
        let state = self.state();
        if state.mode == MODE_NONE {
            self.ensure_published();
        }
        if state.mode == MODE_OS && state.trigger != u64::MAX {
            // The warm-up: a program that only reads the wall tier must end
            // it too, or it would read CLOCK_REALTIME for good.
            let mono = self.clocks.mono();
            if mono >= state.trigger {
                self.update_from_reader(Due::Trigger(mono));
            }
        }
        if let (Some(t), MODE_COUNTER) = (ticks, state.mode) {
            if state.wall_deadline != 0 && t >= state.wall_deadline {
                self.update_from_reader(Due::Wall(t));
            }
            // The freshest line: the one just published, or, while another
            // thread publishes one, the old (still about as good).
            let fresh = self.state();
            if fresh.wall_deadline != 0 {
                return fresh.wall.at(t);
            }
        }
        self.clocks.real()
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
}

/// See [`Timekeeper::counter_chosen`].
pub(crate) fn counter_chosen() -> Option<bool> {
    TK.counter_chosen()
}

impl<C: Clocks> Timekeeper<C> {
    /// A reading of the boot timeline (see [`BootInstant`](crate::BootInstant)):
    /// the precise reading from a bare counter read, plus the boot offset
    /// loaded with the fast path's words, in the same latch read.
    ///
    /// Never goes back on one thread: a later reading converts its counter
    /// value with the same state or a newer one, so its precise part is not
    /// smaller (the timeline's rule), and the offset it adds is that of the
    /// same state or a newer one, which is never smaller either (`boot`).
    /// The slow path pairs the precise reading with an offset loaded after
    /// it, from the same state or a newer one: the same argument holds.
    #[inline(always)]
    pub(crate) fn read_boot_nanos(&self) -> u64 {
        let (takeover, span, line, boot) = self.state.read(|w| {
            (
                w[word::TAKEOVER].load(Ordering::Relaxed),
                w[word::SPAN].load(Ordering::Relaxed),
                Line {
                    offset: w[word::OFFSET].load(Ordering::Relaxed),
                    slope: w[word::SLOPE].load(Ordering::Relaxed),
                },
                w[word::BOOT_OFFSET].load(Ordering::Relaxed),
            )
        });
        if span != 0 {
            let t = self.clocks.counter();
            if t.wrapping_sub(takeover) < span {
                return line.at(t).wrapping_add(boot);
            }
        }
        self.read_boot_slow()
    }

    /// Everything off the boot fast path: the precise tier's slow path plus
    /// the offset published since, or, on the OS clock for good (no update
    /// comes to measure the offset again), `CLOCK_BOOTTIME` read inside the
    /// state load, as OS readers read `CLOCK_MONOTONIC`.
    #[cold]
    #[inline(never)]
    fn read_boot_slow(&self) -> u64 {
        loop {
            let os = self.state.read(|w| {
                let load = |i: usize| w[i].load(Ordering::Relaxed);
                (load(word::MODE) == MODE_OS && load(word::TRIGGER) == u64::MAX)
                    .then(|| self.clocks.boot().wrapping_add(load(word::BOOT_OFFSET)))
            });
            if let Some(nanos) = os {
                return nanos;
            }
            let nanos = self.read_slow();
            let (mode, trigger, boot) = self.state.read(|w| {
                (
                    w[word::MODE].load(Ordering::Relaxed),
                    w[word::TRIGGER].load(Ordering::Relaxed),
                    w[word::BOOT_OFFSET].load(Ordering::Relaxed),
                )
            });
            match mode {
                // Another thread is publishing the first state: the reading
                // is `before_first`'s, and so is the offset.
                MODE_NONE => return nanos.wrapping_add(self.first_boot_offset()),
                // The OS clock took over for good since: read it (its
                // readings continue above every earlier boot reading).
                MODE_OS if trigger == u64::MAX => continue,
                _ => return nanos.wrapping_add(boot),
            }
        }
    }
}

/// See [`Timekeeper::read_boot_nanos`].
#[inline(always)]
pub(crate) fn read_boot_nanos() -> u64 {
    TK.read_boot_nanos()
}
