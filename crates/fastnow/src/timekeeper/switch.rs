//! Switches of source, each at a take-over point like any new piece: the
//! first state (detection), the first millisecond's OS clock to the
//! counter (the warm-up's promotion), and the counter to the OS clock for
//! good when the kernel no longer vouches for it (demotion). Where a switch
//! takes over, the new source's readings start [`MARGIN_NS`] plus twice the
//! sample's bracket ahead of the old source's, which covers the error of
//! matching the two sources: readings move forward by a little, never back
//! (spec/SEMANTICS.md, "Source switches").

use crate::source::arch::FreqOrigin;
use crate::source::detect::Fallback;
use crate::timekeeper::calibrate::{self, Sample};
use crate::timekeeper::line::Line;
use crate::timekeeper::state::{State, MODE_COUNTER, MODE_OS};
use crate::timekeeper::writer::Writer;
use crate::timekeeper::{
    grace, switch_margin, Clocks, CHECK_PERIOD_NS, MAX_PERIOD_NS, MIN_PERIOD_NS, TIMELINE_OFFSET_NS,
};
use core::sync::atomic::Ordering;

impl<C: Clocks> Writer<'_, C> {
    /// Observes the machine and publishes the first state: the OS clock,
    /// for good, or for the first millisecond while the counter's rate is
    /// measured.
    pub(super) fn detect(&mut self) {
        let decision = self.tk.clocks.observe(&mut self.keeper.verdict_file);
        self.keeper.decision = Some(decision);
        if self.await_verdict() {
            return;
        }
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
        self.publish(
            State {
                mode: MODE_OS,
                trigger,
                end,
                os_offset: TIMELINE_OFFSET_NS,
                ..State::default()
            },
            None,
        );
    }

    /// Warm-up: the first window (at least a millisecond) gives the rate,
    /// and the counter takes over from the OS clock.
    pub(super) fn warm_up_step(&mut self) {
        if self.retry_verdict() {
            return;
        }
        let sample = self.sample();
        self.keeper.min_width = self.keeper.min_width.min(sample.width);
        if self.preempted(&sample) {
            // Try again a little later.
            return self.warm_up_again(sample.mono + MIN_PERIOD_NS / 4);
        }
        let measured = match self.keeper.window.first() {
            Some(&first) if calibrate::discontinuous(&first, &sample) => {
                // The counter went back or jumped (a reset at a resume, a
                // migration), or the machine suspended, during the first
                // millisecond: measure again from here.
                self.keeper.window.clear();
                self.keeper.window.push(sample);
                return self.warm_up_again(sample.mono + MIN_PERIOD_NS);
            }
            Some(first) if sample.ticks > first.ticks && sample.mono > first.mono => {
                Line::slope(sample.mono - first.mono, sample.ticks - first.ticks)
                    .ok_or(Fallback::TooSlow)
            }
            _ => Err(Fallback::Stalled),
        };
        // A frequency the hardware publishes (CPUID, CNTFRQ_EL0, CPUCFG…) is
        // exact when right — a crystal's ratio, where a millisecond's
        // measurement is good to tens of ppm — but firmware and emulators
        // publish wrong ones too, some far off. So it is used only when the
        // measurement agrees with it within 1/64.
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

    /// The warm-up's OS state again, its trigger moved to `trigger` (and its
    /// end a grace after it): the measurement goes on until then.
    fn warm_up_again(&mut self, trigger: u64) {
        let s = self.keeper.state;
        self.publish(
            State {
                trigger,
                end: trigger + grace(MIN_PERIOD_NS),
                ..s
            },
            None,
        );
    }

    /// Switches from the OS clock to the counter where the OS state ends.
    fn promote(&mut self, s: Sample, slope: Result<u64, Fallback>, origin: FreqOrigin) {
        let slope = match slope {
            Ok(slope) => slope,
            Err(reason) => return self.stay_on_os(reason),
        };
        let old = self.keeper.state;
        // The counter value matching the OS state's end, and the value it
        // continues from there (see the module docs).
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
        // The counter's readings continue the OS clock's `margin` above it:
        // the timeline is kept there from now on (see `writer`'s `rebase`).
        k.mono_offset = old.os_offset.wrapping_add(switch_margin(&s));
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
        self.publish(next, Some(&s));
    }

    /// Publishes the OS clock for good, continuing the current readings.
    pub(super) fn stay_on_os(&mut self, reason: Fallback) {
        if let Some(d) = self.keeper.decision.as_mut() {
            d.fallback = Some(reason);
        }
        self.keeper.origin = FreqOrigin::Os;
        let old = self.keeper.state;
        self.publish(
            State {
                mode: MODE_OS,
                trigger: u64::MAX,
                end: u64::MAX,
                ..old
            },
            None,
        );
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
    pub(super) fn demote_at_end(&mut self, reason: Fallback) {
        let old = self.keeper.state;
        // Until the end only the counter is read: every reader past
        // `trigger` comes here while the switch waits.
        let now = self.now_ticks();
        if now >= old.floor && now < old.end {
            if self.tk.upkeep.load(Ordering::Relaxed) {
                // (At the rate in use: a piece that stands still has none.)
                let rate = Line {
                    offset: 0,
                    slope: self.next_slope(),
                };
                let due = self.mono().saturating_add(rate.nanos_for(old.end - now));
                self.tk.upkeep_due.store(due, Ordering::Relaxed);
            }
            return;
        }
        let s = self.narrow_sample();
        let margin = switch_margin(&s);
        let (takeover, value) = if s.ticks >= old.end && !self.astray(&s) {
            // Past the end the timeline runs at the next piece's rate (the
            // piece's own, unless it stood still).
            let rate = Line {
                offset: 0,
                slope: self.next_slope(),
            };
            let takeover = s.mono.saturating_sub(rate.nanos_for(s.ticks - old.end));
            (takeover, old.line.at(old.end).wrapping_add(margin))
        } else {
            // The counter jumped, or went back, since the piece began: the
            // OS clock continues from where the timeline kept to
            // CLOCK_MONOTONIC stands, or from the lower bound readers past
            // the end may have returned when that is higher, standing
            // still until CLOCK_MONOTONIC gets there (as `rebase` does).
            let kept = s.mono.wrapping_add(self.keeper.mono_offset);
            let bound = old.lower_bound(s.ticks, self.mono());
            let ahead = bound.wrapping_sub(kept) as i64;
            let from = if ahead > 0 { bound } else { kept };
            let value = from.wrapping_add(margin);
            (
                s.mono
                    .saturating_add(value.wrapping_sub(kept).wrapping_sub(margin)),
                value,
            )
        };
        let k = &mut *self.keeper;
        k.demoted_at = Some(s.real);
        k.demote_pending = None;
        if let Some(d) = k.decision.as_mut() {
            d.fallback = Some(reason);
        }
        k.origin = FreqOrigin::Os;
        self.publish(
            State {
                mode: MODE_OS,
                takeover,
                trigger: u64::MAX,
                end: u64::MAX,
                prev: Line::flat(value),
                os_offset: value.wrapping_sub(takeover),
                ..old
            },
            None,
        );
    }
}
