//! The clocks kept as offsets from the precise timeline, and the writer's
//! bookkeeping of those offsets.
//!
//! Like the kernel's boot and TAI clocks (`mono + offs_boot`, `mono +
//! offs_tai`), every clock besides the precise timeline is the precise
//! reading plus an offset the writer keeps: a word of the published state,
//! loaded with the counter's line in the same state load. [`Clock`] says
//! what the read base needs to know of each (`read`: one fast path and one
//! slow path for all of them), and [`Writer::offsets`] computes every
//! offset of a state about to be published:
//!
//! - **Boot** ([`Boot`], `State::boot_offset`): `CLOCK_BOOTTIME` + 2^62 less
//!   the reading the state gives at that moment, measured again at every
//!   update (spec/SEMANTICS.md, "Time across suspend"). Measured against the
//!   precise reading itself, not against `CLOCK_MONOTONIC`: where the
//!   precise timeline matches `CLOCK_MONOTONIC` + 2^62 (the first state;
//!   every state, up to the calibration's error) that is `CLOCK_BOOTTIME −
//!   CLOCK_MONOTONIC`, the time spent suspended; where the counter kept
//!   counting through a suspend (an invariant TSC in suspend-to-idle), the
//!   precise timeline counted it too, and the difference does not double
//!   it. Each bracket of reads — the reading, `CLOCK_BOOTTIME`, the reading
//!   again — gives a lower bound of the offset at the second reading's
//!   moment (the boot clock was read first); the brackets are chained (each
//!   reading closes one and opens the next), the largest bound is kept, and
//!   the measurement stops at the first bracket within twice the tightest
//!   seen, as a calibration sample does: one bracket when undisturbed, up to
//!   [`BOOT_SAMPLE_PAIRS`] when not. The offset is never lowered (a later,
//!   less tight pair, or the calibration moving the precise timeline a
//!   little ahead, would otherwise step boot readings back) but by what a
//!   re-base just moved the precise readings forward: so a boot reading
//!   never goes back on one thread, whatever the states it combines.
//! - **Wall** ([`Wall`], `State::wall_offset`): `CLOCK_REALTIME` less the
//!   precise reading at the update's sample, which brackets
//!   `CLOCK_REALTIME` with the counter read (spec/SEMANTICS.md, "Wall
//!   tier"). Every update samples and no piece lasts longer than the wall
//!   resync interval, so the wall clock is re-anchored at every update. 0
//!   means "read `CLOCK_REALTIME`": on the OS clock, near either end of the
//!   `u64` range of Unix nanoseconds, and while a piece stands still after
//!   a re-base (a wall reading that stood still with the precise one would
//!   be wrong by as long as it stands); a measured 0 is published as 1.
//! - **Mono** (`State::mono_offset`): the timeline less `CLOCK_MONOTONIC`
//!   as the update's sample measured it — the published state's reading at
//!   the sample's counter value less the sample's `CLOCK_MONOTONIC`, within
//!   half the sample's bracket — for the conversions between instants and
//!   the kernel's clocks (`Timekeeper::conversion`); also what a lower
//!   bound past a piece's end is held to. Measured, not the offset the
//!   writer keeps the timeline to (`Keeper::mono_offset`, which only the
//!   switches and re-bases move): below the re-base threshold the timeline
//!   strays from that by what calibration strays by (microseconds; under a
//!   millisecond after NTP's largest frequency step), which a conversion
//!   would carry. A disturbed sample keeps the last measurement; on the OS
//!   clock it is the OS offset itself; while a piece stands still after a
//!   re-base it is the kept offset, where the timeline resumes.
//!
//! On the OS clock for good no update comes any more to keep an offset, so
//! there a clock kept as an offset reads its own OS clock ([`Clock::os`])
//! plus its word: the boot word is chosen, when that state is published, so
//! that boot readings continue above the ones before; the wall word is 0.
//!
//! A new clock of this kind — the precise reading plus an offset the writer
//! keeps — is a word in `state::word`, a field of `State`, a [`Clock`]
//! here and its measurement in [`Writer::offsets`]; a tier file reads it
//! with `timekeeper::read`.

use crate::timekeeper::calibrate::Sample;
use crate::timekeeper::state::{word, Converted, State, MODE_COUNTER, MODE_NONE};
use crate::timekeeper::writer::Writer;
use crate::timekeeper::{
    Clocks, Measured, MonoMeasured, Timekeeper, CONVERSION_RATE_ERROR_PPB, TIMELINE_OFFSET_NS,
    WALL_GUARD_NS,
};
use core::sync::atomic::Ordering;

/// A clock the read base reads (`Timekeeper::read`): the precise timeline,
/// or a clock the writer keeps as an offset from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Clock {
    /// The precise timeline: [`Instant`](crate::Instant) and its siblings.
    Precise,
    /// The boot timeline: [`BootInstant`](crate::BootInstant).
    Boot,
    /// The wall clock: [`unix_nanos`](crate::unix_nanos).
    Wall,
}

impl Clock {
    /// The clock a read base's constant parameter names.
    #[inline(always)]
    pub(super) const fn of(id: u8) -> Clock {
        match id {
            0 => Clock::Precise,
            1 => Clock::Boot,
            _ => Clock::Wall,
        }
    }

    /// The word of its offset; `None` for the precise timeline itself.
    #[inline(always)]
    pub(super) const fn word(self) -> Option<usize> {
        match self {
            Clock::Precise => None,
            Clock::Boot => Some(word::BOOT_OFFSET),
            Clock::Wall => Some(word::WALL_OFFSET),
        }
    }

    /// Whether a reading must be the time of its moment (the wall clock)
    /// rather than never go back (the boot clock): such a clock reads its
    /// OS clock where the precise reading is not the time of its moment (a
    /// lower bound, a reading that stands still) and where the state keeps
    /// no offset for it (0).
    #[inline(always)]
    pub(super) const fn exact(self) -> bool {
        matches!(self, Clock::Wall)
    }

    /// Whether the fast path may add `offset`, the word it loaded.
    #[inline(always)]
    pub(super) const fn holds(self, offset: u64) -> bool {
        !self.exact() || offset != 0
    }

    /// The OS clock the offset is kept to, read where the writer keeps none.
    #[inline(always)]
    pub(super) fn os<C: Clocks>(self, clocks: &C) -> u64 {
        match self {
            Clock::Precise => clocks.mono(),
            Clock::Boot => clocks.boot(),
            Clock::Wall => clocks.real(),
        }
    }

    /// The offset `s` keeps for it.
    #[inline(always)]
    pub(super) fn kept(self, s: &State) -> u64 {
        match self {
            Clock::Precise => 0,
            Clock::Boot => s.boot_offset,
            Clock::Wall => s.wall_offset,
        }
    }

    /// The offset of readings taken while the first state is being
    /// published (`Timekeeper::before_first`).
    pub(super) fn before_first<C: Clocks>(self, tk: &Timekeeper<C>) -> u64 {
        match self {
            Clock::Precise | Clock::Wall => 0,
            Clock::Boot => tk.first_boot_offset(),
        }
    }

    /// A mock clock's reading (the `mock` feature).
    #[cfg(feature = "mock")]
    #[inline(always)]
    pub(super) fn mocked(self, m: &crate::mock::Readings) -> u64 {
        match self {
            Clock::Precise => m.mono,
            Clock::Boot => m.boot,
            Clock::Wall => m.unix,
        }
    }
}

/// The most brackets a measurement of the boot offset takes (the largest
/// lower bound of them is kept). A bracket preempted between its reads gives
/// a smaller bound, which the maximum discards; one measurement whose every
/// bracket was preempted only delays part of a resume's jump to the next
/// update.
pub(super) const BOOT_SAMPLE_PAIRS: u32 = 3;

/// `first_boot` before anything was agreed: an offset of -2^63 ns, which a
/// measurement turns into its neighbour (`agreeable`).
pub(super) const NO_OFFSET: u64 = 1 << 63;

/// The larger of two offsets, compared as signed: an offset is negative
/// where a time namespace puts `CLOCK_BOOTTIME` behind `CLOCK_MONOTONIC`.
#[inline]
pub(super) const fn later(a: u64, b: u64) -> u64 {
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
    fn boot_minus_mono(&self) -> u64 {
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
    fn first_boot_offset(&self) -> u64 {
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
    /// `next`, the state about to be published, with every offset it
    /// keeps (see the module docs); `sample` is the update's sample (`None`
    /// for the OS states, which are published without one).
    pub(super) fn offsets(&mut self, next: State, sample: Option<&Sample>) -> State {
        let mono = self.mono_offset(&next, sample);
        let (boot_offset, boot) = self.boot_offset(&next);
        State {
            boot_offset,
            boot_conversion: boot.offset,
            boot_width: boot.width,
            wall_offset: self.wall_offset(&next, sample),
            mono_offset: mono.offset,
            mono_at: mono.mono,
            mono_width: mono.width,
            mono_drift: self.drift_ppb(&mono),
            ..next
        }
    }

    /// How fast the published offset may drift (`State::mono_drift`): at
    /// least [`CONVERSION_RATE_ERROR_PPB`]; more while the rate in use was
    /// measured over a short window (the warm-up's, or one after a
    /// re-base: two brackets' error over its length), and where the last
    /// updates saw the timeline drift faster (`measured_mono`).
    fn drift_ppb(&self, m: &MonoMeasured) -> u64 {
        let k = &*self.keeper;
        let window = match k.window_ns {
            0 => 0,
            w => {
                let e = u128::from(m.width.saturating_mul(2)) * 1_000_000_000 / u128::from(w);
                u64::try_from(e).unwrap_or(u64::MAX)
            }
        };
        k.drift_ppb[0]
            .max(k.drift_ppb[1])
            .max(window)
            .max(CONVERSION_RATE_ERROR_PPB)
    }

    /// Records `m`, a new measurement of the timeline less
    /// `CLOCK_MONOTONIC`, and how fast the timeline drifted since the last
    /// one: what it moved beyond the two measurements' uncertainty, over the
    /// time between them. In steady state that is a fraction of a ppm, and
    /// [`CONVERSION_RATE_ERROR_PPB`] bounds the drift; after NTP changed
    /// `CLOCK_MONOTONIC`'s rate the pieces run at the old rate until the
    /// new one is measured, and the conversions' stated error grows with
    /// what the updates see, the larger of the last two.
    fn measured_mono(&mut self, m: MonoMeasured) {
        let k = &mut *self.keeper;
        let drift = match k.mono_measured {
            Some(p) if m.mono > p.mono => {
                let moved = m.offset.wrapping_sub(p.offset) as i64;
                let unsure = (m.width / 2).saturating_add(p.width / 2);
                let beyond = moved.unsigned_abs().saturating_sub(unsure);
                let ppb = u128::from(beyond) * 1_000_000_000 / u128::from(m.mono - p.mono);
                u64::try_from(ppb).unwrap_or(u64::MAX)
            }
            _ => 0,
        };
        k.drift_ppb = [drift, k.drift_ppb[0]];
        k.mono_measured = Some(m);
    }

    /// The timeline less `CLOCK_MONOTONIC` that `next` publishes (see the
    /// module docs), with its sample's width and moment: measured at the
    /// sample where it can be, and recorded for the states that follow.
    fn mono_offset(&mut self, next: &State, sample: Option<&Sample>) -> MonoMeasured {
        if next.mode != MODE_COUNTER {
            // Readings are CLOCK_MONOTONIC plus the OS offset, exactly (but
            // below a take-over that stands still, where they resume at it).
            self.keeper.mono_measured = None;
            return MonoMeasured::exact(next.os_offset);
        }
        if next.line.slope == 0 {
            // A piece that stands still until CLOCK_MONOTONIC plus the
            // kept offset catches up: the offset its readings resume at
            // (what its readings stand ahead of that is the conversions'
            // to add: `Timekeeper::conversion`).
            self.keeper.mono_measured = None;
            let width = sample.map_or(0, |s| s.width);
            let mono = sample.map_or(self.tk.clocks.mono(), |s| s.mono);
            return MonoMeasured {
                offset: self.keeper.mono_offset,
                width,
                mono: mono.max(1),
            };
        }
        if let Some(s) = sample.filter(|s| !self.preempted(s) && !next.held_at(s.ticks)) {
            if let Some(reading) = next.before_sample(s.ticks) {
                let m = MonoMeasured {
                    offset: reading.wrapping_sub(s.mono),
                    width: s.width,
                    mono: s.mono.max(1),
                };
                self.measured_mono(m);
                return m;
            }
        }
        // A disturbed sample (its moment is uncertain by far more than the
        // last good one's) keeps the last measurement, which a new piece
        // continues; right after a re-base there is none, and the kept
        // offset is what the re-base just moved the timeline to, within
        // the re-base's margin.
        self.keeper.mono_measured.unwrap_or_else(|| MonoMeasured {
            offset: self.keeper.mono_offset,
            width: sample.map_or(0, |s| s.width),
            mono: sample.map_or(self.tk.clocks.mono(), |s| s.mono).max(1),
        })
    }

    /// `CLOCK_REALTIME` less `next`'s reading at the sample, or 0 where
    /// wall readers are to read `CLOCK_REALTIME` (see the module docs).
    fn wall_offset(&mut self, next: &State, sample: Option<&Sample>) -> u64 {
        let Some(s) = sample else { return 0 };
        if next.mode != MODE_COUNTER || next.line.slope == 0 {
            return 0;
        }
        // Well inside the range, so that a reading up to a piece (at most
        // a resync interval, 2^40 ns, and its grace) from the sample can
        // neither wrap below 1970 nor above 2554.
        if s.real < WALL_GUARD_NS || s.real > u64::MAX - WALL_GUARD_NS {
            return 0;
        }
        let Some(precise) = next.before_sample(s.ticks) else {
            return 0;
        };
        let old = self.keeper.state.wall_offset;
        // The real time at the sample is uncertain by both its brackets, the
        // counter's and the real clock's: a reader's update takes at most
        // two of each, so either may be the disturbed one.
        let width = s.width.max(s.real_width);
        if self.wide(width) {
            // A disturbed bracket measures nothing: keep the old offset (or
            // none: CLOCK_REALTIME) until the next update (kept across a new
            // piece, which continues the old readings) — unless the system
            // clock was stepped, by far more than this sample's uncertainty
            // (then the sample, uncertain as it is, is the better anchor), or
            // the old one was measured more than a resync interval ago (after
            // an idle gap: kept longer, the wall would drift by the rates'
            // difference; readers read CLOCK_REALTIME until the next update).
            if old != 0 && s.mono.saturating_sub(self.keeper.wall_at) > self.tk.wall_interval_ns() {
                return 0;
            }
            let off = precise.wrapping_add(old).abs_diff(s.real);
            if old == 0 || off <= 4 * width.saturating_add(1_000) {
                return old;
            }
        }
        self.keeper.wall_at = s.mono;
        match s.real.wrapping_sub(precise) {
            0 => 1,
            offset => offset,
        }
    }

    /// The boot offset of `next` (see the module docs), and the boot
    /// timeline less `CLOCK_BOOTTIME` with it, for the conversions.
    fn boot_offset(&mut self, next: &State) -> (u64, Measured) {
        let old = self.keeper.state;
        let old_offset = if old.mode == MODE_NONE {
            self.tk.first_boot_offset()
        } else {
            old.boot_offset
        };
        if next.os_for_good() {
            let offset = if old.os_for_good() {
                old.boot_offset
            } else {
                self.boot_offset_for_good(next, old_offset)
            };
            // Boot readings are CLOCK_BOOTTIME plus the offset, exactly.
            self.keeper.boot_measured = None;
            return (offset, Measured { offset, width: 0 });
        }
        // Lowered only by what a re-base just added to the precise
        // readings (`Keeper::boot_lowering`): the boot readings it makes
        // are then no smaller than before it.
        let lowering = core::mem::take(&mut self.keeper.boot_lowering);
        let Some((measured, width)) = self.boot_sample(next) else {
            let kept = self.keeper.boot_measured.unwrap_or(Measured {
                offset: TIMELINE_OFFSET_NS,
                width: u64::MAX,
            });
            return (old_offset, kept);
        };
        let offset = later(old_offset.wrapping_sub(lowering), measured);
        // `measured` is within `width` below `CLOCK_BOOTTIME` + 2^62 less
        // the precise reading; the boot readings add `offset` instead, so
        // they are that much more ahead of CLOCK_BOOTTIME + 2^62 (the
        // ratchet's excess), taken at the middle of the bracket.
        let conversion = Measured {
            offset: offset
                .wrapping_add(TIMELINE_OFFSET_NS)
                .wrapping_sub(measured)
                .wrapping_sub(width / 2),
            width,
        };
        self.keeper.boot_measured = Some(conversion);
        (offset, conversion)
    }

    /// The boot offset of the state that moves readers to the OS clock for
    /// good: readers move from `reading + old_offset` to `CLOCK_BOOTTIME +
    /// offset`, with `next`'s readings `CLOCK_MONOTONIC + os_offset`
    /// continuing the old ones from above (the switch's margin). The offset
    /// is 2^62, as on the counter (a boot reading is then
    /// `CLOCK_BOOTTIME` plus 2^62, a suspend not measured yet included) — unless the old
    /// readings were ahead of that: then `continued`, with which
    /// `CLOCK_BOOTTIME + offset` is `next`'s reading plus `old_offset`, plus
    /// how far the measured lower bound of `CLOCK_BOOTTIME −
    /// CLOCK_MONOTONIC` falls short: never less. (Where `next` stands still
    /// until CLOCK_MONOTONIC catches up with the counter's last readings,
    /// its reading now is above `CLOCK_MONOTONIC + os_offset`: continue
    /// from that.)
    fn boot_offset_for_good(&self, next: &State, old_offset: u64) -> u64 {
        let mono = self.tk.clocks.mono();
        let reading = match next.convert(mono) {
            Converted::Nanos { nanos, .. } => nanos,
            _ => mono.wrapping_add(next.os_offset),
        };
        let continued = reading
            .wrapping_sub(mono)
            .wrapping_add(old_offset)
            .wrapping_sub(self.tk.boot_minus_mono());
        later(TIMELINE_OFFSET_NS, continued)
    }

    /// `CLOCK_BOOTTIME` + 2^62 less `next`'s reading: the largest lower
    /// bound of up to [`BOOT_SAMPLE_PAIRS`] brackets (see the module docs),
    /// and the width of the bracket that gave it (the offset is at most
    /// that much above the bound); `None` if no reading fell within `next`
    /// (none does, short of a thread preempted for a whole piece).
    fn boot_sample(&mut self, next: &State) -> Option<(u64, u64)> {
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
        // One pair where a reader makes the update (its work is bounded).
        let pairs = if self.reader { 1 } else { BOOT_SAMPLE_PAIRS };
        for _ in 0..pairs {
            let boot = c.boot();
            let after = read();
            let ticks = after.wrapping_sub(before);
            let width = if counter {
                next.line.nanos_for(ticks)
            } else {
                ticks
            };
            if let Converted::Nanos { nanos, .. } = next.convert(after) {
                let d = boot.wrapping_add(TIMELINE_OFFSET_NS).wrapping_sub(nanos);
                best = Some(match best {
                    Some((b, w)) if later(b, d) == b && b != d => (b, w),
                    _ => (d, width),
                });
            }
            self.keeper.boot_width = self.keeper.boot_width.min(width);
            if width <= good {
                break;
            }
            before = after;
        }
        best
    }
}
