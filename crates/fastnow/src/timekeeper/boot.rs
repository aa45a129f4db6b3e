//! The boot timeline: the precise timeline plus an offset that counts the
//! time the machine spent suspended, published in every state
//! (`State::boot_offset`) and measured again at every update, so that
//! [`BootInstant`](crate::BootInstant) costs what [`Instant`](crate::Instant)
//! does (spec/SEMANTICS.md, "Time across suspend").
//!
//! The offset is measured against the precise reading itself, not against
//! `CLOCK_MONOTONIC`: `CLOCK_BOOTTIME` + 2^62 less the reading the state
//! being published gives at that moment. Where the precise timeline matches
//! `CLOCK_MONOTONIC` + 2^62 (the first state; every state, up to the
//! calibration's error) that is `CLOCK_BOOTTIME − CLOCK_MONOTONIC`, the time
//! spent suspended. Where the counter kept counting through a suspend (an
//! invariant TSC in suspend-to-idle), the precise timeline counted it too,
//! and the difference does not double it.
//!
//! Each bracket of reads — the reading, `CLOCK_BOOTTIME`, the reading again —
//! gives a lower bound of the offset at the second reading's moment (the
//! boot clock was read first); the brackets are chained (each reading closes
//! one and opens the next), the largest bound is kept, and the measurement
//! stops at the first bracket within twice the tightest seen, as a
//! calibration sample does: one bracket when undisturbed, up to
//! [`BOOT_SAMPLE_PAIRS`] when not. The published offset is never
//! lowered (a later, less tight pair, or the calibration moving the
//! precise timeline a little ahead, would otherwise step boot readings
//! back): so a boot reading never goes back on one thread, whatever the
//! states it combines (`read::read_boot_nanos`).
//!
//! On the OS clock for good no update comes any more, so there boot readers
//! read `CLOCK_BOOTTIME` themselves and the word is what they add to it,
//! chosen when that state is published so that readings continue above the
//! ones before (`Writer::boot_offset`).

use crate::timekeeper::state::{Converted, State, MODE_COUNTER, MODE_NONE};
use crate::timekeeper::writer::Writer;
use crate::timekeeper::{Clocks, Timekeeper, TIMELINE_OFFSET_NS};
use core::sync::atomic::Ordering;

/// The most brackets a measurement of the boot offset takes (the largest
/// lower bound of them is kept). A bracket preempted between its reads gives
/// a smaller bound, which the maximum discards; one measurement whose every
/// bracket was preempted only delays part of a resume's jump to the next
/// update.
pub(crate) const BOOT_SAMPLE_PAIRS: u32 = 3;

/// `first_boot` before anything was agreed: an offset of -2^63 ns, which a
/// measurement turns into its neighbour (`agreeable`).
pub(super) const NO_OFFSET: u64 = 1 << 63;

/// The larger of two offsets, compared as signed: an offset is negative
/// where a time namespace puts `CLOCK_BOOTTIME` behind `CLOCK_MONOTONIC`.
#[inline]
pub(crate) const fn later(a: u64, b: u64) -> u64 {
    if (a as i64) >= (b as i64) {
        a
    } else {
        b
    }
}

/// A measured offset that can be agreed on: never `NO_OFFSET` (a
/// nanosecond off, at the far end of the range).
const fn agreeable(offset: u64) -> u64 {
    if offset == NO_OFFSET {
        NO_OFFSET + 1
    } else {
        offset
    }
}

impl<C: Clocks> Timekeeper<C> {
    /// `CLOCK_BOOTTIME − CLOCK_MONOTONIC`, mod 2^64: the largest of
    /// [`BOOT_SAMPLE_PAIRS`] lower bounds (the kernel derives both clocks
    /// from one base, the boot clock read first is at most the offset
    /// ahead of the monotonic clock read after it).
    pub(super) fn boot_minus_mono(&self) -> u64 {
        let c = &self.clocks;
        let mut best = None;
        for _ in 0..BOOT_SAMPLE_PAIRS {
            let boot = c.boot();
            let d = boot.wrapping_sub(c.mono());
            best = Some(best.map_or(d, |b| later(b, d)));
        }
        best.unwrap_or(0)
    }

    /// The boot offset of the timeline before the first state: what boot
    /// readers add to the readings they take while another thread publishes
    /// that state (`before_first`), agreed through one compare-and-swap.
    /// The first state's offset is never below it (`Writer::boot_offset`),
    /// so such a reading is never above a later one.
    pub(crate) fn first_boot_offset(&self) -> u64 {
        let seen = self.first_boot.load(Ordering::Acquire);
        if seen != NO_OFFSET {
            return seen;
        }
        let mine = agreeable(self.boot_minus_mono());
        match self
            .first_boot
            .compare_exchange(NO_OFFSET, mine, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => mine,
            Err(agreed) => agreed,
        }
    }
}

impl<C: Clocks> Writer<'_, C> {
    /// The boot offset of `next`, the state about to be published (see the
    /// module docs).
    pub(super) fn boot_offset(&mut self, next: &State) -> u64 {
        let old = self.keeper.state;
        let old_offset = if old.mode == MODE_NONE {
            self.tk.first_boot_offset()
        } else {
            old.boot_offset
        };
        if next.os_for_good() {
            if old.os_for_good() {
                return old.boot_offset;
            }
            // Readers move from `reading + old_offset` to `CLOCK_BOOTTIME +
            // offset`, with `next`'s readings `CLOCK_MONOTONIC + os_offset`
            // continuing the old ones from above (the switch's margin). The
            // offset is 2^62, as on the counter (a boot reading is then
            // `CLOCK_BOOTTIME` + 2^62, a suspend not measured yet included)
            // — unless the old readings were ahead of that: then `continued`,
            // with which `CLOCK_BOOTTIME + offset` is `next`'s reading plus
            // `old_offset`, plus how far the measured lower bound of
            // `CLOCK_BOOTTIME − CLOCK_MONOTONIC` falls short: never less.
            let continued = next
                .os_offset
                .wrapping_add(old_offset)
                .wrapping_sub(self.tk.boot_minus_mono());
            return later(TIMELINE_OFFSET_NS, continued);
        }
        match self.boot_sample(next) {
            Some(measured) => later(old_offset, measured),
            None => old_offset,
        }
    }

    /// `CLOCK_BOOTTIME` + 2^62 less `next`'s reading: the largest lower
    /// bound of up to [`BOOT_SAMPLE_PAIRS`] brackets (see the module docs);
    /// `None` if no reading fell within `next` (none does, short of a thread
    /// preempted for a whole piece).
    fn boot_sample(&mut self, next: &State) -> Option<u64> {
        let c = &self.tk.clocks;
        let counter = next.mode == MODE_COUNTER;
        let read = || {
            if counter {
                c.counter_ordered()
            } else {
                c.mono()
            }
        };
        // Twice the tightest bracket seen; until there is one, all brackets.
        let good = match self.keeper.boot_width {
            u64::MAX => 0,
            w => w.saturating_mul(2),
        };
        let mut best = None;
        let mut before = read();
        for _ in 0..BOOT_SAMPLE_PAIRS {
            let boot = c.boot();
            let after = read();
            if let Converted::Nanos { nanos, .. } = next.convert(after) {
                let d = boot.wrapping_add(TIMELINE_OFFSET_NS).wrapping_sub(nanos);
                best = Some(best.map_or(d, |b| later(b, d)));
            }
            let ticks = after.wrapping_sub(before);
            let width = if counter {
                next.line.nanos_for(ticks)
            } else {
                ticks
            };
            self.keeper.boot_width = self.keeper.boot_width.min(width);
            if width <= good {
                break;
            }
            before = after;
        }
        best
    }
}
