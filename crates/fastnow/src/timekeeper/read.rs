//! The read base: one read of the published state, written once, for every
//! clock (`offsets::Clock`): a consistent load of the piece's range, its line
//! and the timeline's offset, the counter, a range check, one multiply and
//! an add (the fast path); and behind it the slow path, which handles
//! everything else — the OS clock, the process's first reading, a due
//! update, a reading below the floor or past the end, a source switch, a
//! lower bound while another thread writes. No path waits for another
//! thread, so every reading may be taken in a signal handler
//! (spec/SEMANTICS.md, "Processes, signals, threads").
//!
//! A clock kept as an offset gets the offset of the very state its
//! precise reading came from, in the fast path and the slow path alike.

use crate::timekeeper::line::Line;
use crate::timekeeper::offsets::Clock;
use crate::timekeeper::state::{word, Converted, State, MODE_COUNTER, MODE_NONE, MODE_OS};
use crate::timekeeper::writer::{Due, Updated};
use crate::timekeeper::{Clocks, Timekeeper};
use core::sync::atomic::Ordering;

impl<C: Clocks> Timekeeper<C> {
    /// A reading of clock `K` (a [`Clock`]), from a bare or an ordered
    /// counter read: the precise reading plus `K`'s offset, loaded with the
    /// fast path's words (see the module docs).
    #[inline(always)]
    pub(super) fn read<const K: u8>(&self, ordered: bool) -> u64 {
        if ordered {
            return self.read_ordered::<K>();
        }
        let (start, span, line, offset) = self.fast_words::<K>();
        if span != 0 && Clock::of(K).holds(offset) {
            let t = self.clocks.counter();
            if t.wrapping_sub(start) < span {
                return line.at(t).wrapping_add(offset);
            }
        }
        self.read_slow::<K>()
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
    fn read_ordered<const K: u8>(&self) -> u64 {
        // Acquire (a plain load on x86): with it, detection's choice of
        // ordered read (see `Writer::publish`).
        if self.counter_read.load(Ordering::Acquire) {
            let t = self.clocks.counter_ordered();
            let (start, span, line, offset) = self.fast_words::<K>();
            if t.wrapping_sub(start) < span && Clock::of(K).holds(offset) {
                return line.at(t).wrapping_add(offset);
            }
        }
        self.read_slow::<K>()
    }

    /// The fast path's words: where it starts (the piece's take-over point,
    /// or the floor of the update that published it if that is later), how
    /// far it may go (0 unless the counter is the source), the line, and
    /// `K`'s offset. Loading them before the counter read lets the loads
    /// overlap it.
    #[inline(always)]
    fn fast_words<const K: u8>(&self) -> (u64, u64, Line, u64) {
        self.state.read(|w| {
            (
                w[word::START].load(Ordering::Relaxed),
                w[word::SPAN].load(Ordering::Relaxed),
                Line {
                    offset: w[word::OFFSET].load(Ordering::Relaxed),
                    slope: w[word::SLOPE].load(Ordering::Relaxed),
                },
                match Clock::of(K).word() {
                    Some(i) => w[i].load(Ordering::Relaxed),
                    None => 0,
                },
            )
        })
    }

    /// Everything off the fast path: a counter value below the piece (read
    /// just before a new state took over) or past its trigger, the OS
    /// clock, the first reading of the process, a source switch, an offset
    /// the writer does not keep. Never waits for another thread (see
    /// `State::lower_bound`).
    ///
    /// The counter is read again, ordered, after the state: the fast path's
    /// value may be older than a state published since, and only values
    /// read after a state was published are sure to lie in the range its
    /// `prev` line covers.
    #[cold]
    #[inline(never)]
    fn read_slow<const K: u8>(&self) -> u64 {
        // The OS clock's own read: where it is the source for good (no
        // usable counter, or the kernel dropped it) every reading comes
        // here, and should cost what the OS clock costs. There a clock kept
        // as an offset reads its own OS clock plus its word (see `offsets`),
        // after loading three words, and the precise timeline
        // `CLOCK_MONOTONIC` after loading the words an OS state needs (mode,
        // take-over, trigger, end, the flat line below the take-over,
        // offset): not all of them (copying every word made it measurably
        // dearer than std's; BENCHMARKS.md, "The OS-clock fallback"). The
        // rest (a due update, the end, the counter) is `read_settled`'s.
        let clock = Clock::of(K);
        if let Some(offset) = clock.word() {
            let own = self.state.read(|w| {
                let load = |i: usize| w[i].load(Ordering::Relaxed);
                (load(word::MODE) == MODE_OS && load(word::TRIGGER) == u64::MAX)
                    .then(|| clock.os(&self.clocks).wrapping_add(load(offset)))
            });
            if let Some(reading) = own {
                return reading;
            }
        }
        let os = self.state.read(|w| {
            let load = |i: usize| w[i].load(Ordering::Relaxed);
            (load(word::MODE) == MODE_OS).then(|| {
                let state = State {
                    mode: MODE_OS,
                    takeover: load(word::TAKEOVER),
                    trigger: load(word::TRIGGER),
                    end: load(word::END),
                    prev: Line {
                        offset: load(word::PREV_OFFSET),
                        slope: load(word::PREV_SLOPE),
                    },
                    os_offset: load(word::OS_OFFSET),
                    ..State::default()
                };
                let offset = clock.word().map_or(0, load);
                (state, self.clocks.mono(), offset)
            })
        });
        if let Some((state, mono, offset)) = os {
            if let Converted::Nanos { nanos, due: false } = state.convert(mono) {
                return self.finish::<K>(nanos, !state.held_at(mono), offset);
            }
        }
        self.read_settled::<K>()
    }

    /// The slow path past the OS clock's own read: loads the whole state,
    /// and acts on whatever it finds (an update, the first state, a switch,
    /// a lower bound). Apart from the OS read, so that its registers and
    /// stack do not burden that one.
    #[cold]
    #[inline(never)]
    fn read_settled<const K: u8>(&self) -> u64 {
        loop {
            // OS-clock readings are taken inside the latch read: none is
            // taken after a newer state was published (spec/SEMANTICS.md,
            // "Source switches").
            let (words, os) = self.state.read(|w| {
                let words: [u64; word::COUNT] =
                    core::array::from_fn(|i| w[i].load(Ordering::Relaxed));
                let os = match words[word::MODE] {
                    MODE_COUNTER => None,
                    MODE_OS
                        if Clock::of(K).word().is_some() && words[word::TRIGGER] == u64::MAX =>
                    {
                        Some(Err(Clock::of(K).os(&self.clocks)))
                    }
                    _ => Some(Ok(self.clocks.mono())),
                };
                (words, os)
            });
            let state = State::from_words(&words);
            let reading = match (state.mode, os) {
                (MODE_NONE, _) => {
                    if self.ensure_published() {
                        continue;
                    }
                    // Another thread is publishing the first state; until it
                    // lands, act on the one every thread agrees on.
                    let mono = self.clocks.mono();
                    let first = self.before_first(mono);
                    if !self.state.is_published() {
                        let offset = Clock::of(K).before_first(self);
                        return match first.convert(mono) {
                            Converted::Nanos { nanos, .. } => self.finish::<K>(nanos, true, offset),
                            _ => self.finish::<K>(self.slowed_reading(&first, mono), false, offset),
                        };
                    }
                    continue;
                }
                (MODE_COUNTER, _) => self.clocks.counter_ordered(),
                (_, Some(Err(own))) => return own.wrapping_add(Clock::of(K).kept(&state)),
                (_, Some(Ok(mono))) => mono,
                (_, None) => unreachable!("OS modes read the OS clock"),
            };
            let converted = state.convert(reading);
            let due = match converted {
                Converted::Nanos { nanos, due } => {
                    if due {
                        self.update_from_reader(Due::Trigger(reading));
                    }
                    let exact = !state.held_at(reading);
                    return self.finish::<K>(nanos, exact, Clock::of(K).kept(&state));
                }
                Converted::Below => Due::Below(reading),
                Converted::PastEnd => Due::PastEnd(reading),
            };
            match self.update_from_reader(due) {
                // The state this thread just published covers the reading,
                // which came before its sample: no second counter read,
                // which could be past that piece's end too, and so on
                // without end were pieces ever that short. (Its floor may
                // lie above the reading, which `before_sample` allows for.)
                Updated::Published(new) if new.mode == state.mode => {
                    if let Some(nanos) = new.before_sample(reading) {
                        let exact = !new.held_at(reading);
                        return self.finish::<K>(nanos, exact, Clock::of(K).kept(&new));
                    }
                    continue;
                }
                // A switch of source (the reading is in the old source's
                // units; at most twice in a process), or another thread's
                // newer state: read again with it.
                Updated::Published(_) | Updated::Current => continue,
                Updated::Busy if self.newer_soon(&words) => continue,
                Updated::Busy => {
                    let bound = self.slowed_reading(&state, reading);
                    return self.finish::<K>(bound, false, Clock::of(K).kept(&state));
                }
            }
        }
    }

    /// Clock `K`'s reading from a precise reading `nanos` and the offset
    /// `offset` of the state that gave it; `exact` when `nanos` is the time
    /// of its moment (not a lower bound, nor a reading that stands still).
    /// A clock whose readings must be exact reads its OS clock where
    /// they would not be, and where the state keeps no offset for it (see
    /// `offsets`).
    #[inline(always)]
    fn finish<const K: u8>(&self, nanos: u64, exact: bool, offset: u64) -> u64 {
        let clock = Clock::of(K);
        if clock.word().is_none() {
            nanos
        } else if clock.exact() && (offset == 0 || !exact) {
            clock.os(&self.clocks)
        } else {
            nanos.wrapping_add(offset)
        }
    }

    /// A reading past `state`'s end, while another thread writes: the
    /// lower bound of what the next state gives (see `State::lower_bound`),
    /// counted.
    #[cold]
    fn slowed_reading(&self, state: &State, reading: u64) -> u64 {
        self.slowed.fetch_add(1, Ordering::Relaxed);
        let mono = if state.mode == MODE_COUNTER {
            self.clocks.mono()
        } else {
            reading
        };
        state.lower_bound(reading, mono)
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

    /// Whether the counter is, or is about to be, the source; `None` while
    /// another thread is publishing the first state (not known yet).
    pub(super) fn counter_chosen(&self) -> Option<bool> {
        if !self.ensure_published() {
            return None;
        }
        let s = self.state();
        Some(s.mode == MODE_COUNTER || (s.mode == MODE_OS && s.trigger != u64::MAX))
    }
}
