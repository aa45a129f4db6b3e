//! Measuring the counter against the kernel's clocks.
//!
//! A *sample* pairs a counter value with `CLOCK_MONOTONIC` (and with
//! `CLOCK_REALTIME`, for the wall tier) at one moment: the narrowest of up
//! to several brackets `OS clock, ordered counter read, OS clock` (the first
//! within twice the narrowest ever seen ends the sample), the counter
//! matched to the bracket's midpoint, so its error is at most half the
//! bracket's width. A sample whose every bracket was wide — the thread was
//! preempted or interrupted in each — is not used to measure anything.
//!
//! The *rate* (nanoseconds per tick) is measured over the most recent
//! window of about a second ([`WINDOW_NS`]), so it follows
//! `CLOCK_MONOTONIC`'s current rate — which NTP, chrony or PTP change at
//! will — within about two seconds of a change. A measurement more than
//! 1/64 from the rate in use is suspect (the window may span a suspend or a
//! migration) until the next window agrees with it or with the rate in use.
//! A new rate is never below 7/8 of the one in use: readers that find the
//! state out of date without being able to update it rely on that bound
//! (`State::lower_bound`). The rules: spec/SEMANTICS.md, "Calibration".

use crate::timekeeper::line::Line;

/// Preferred length of a rate window.
pub(super) const WINDOW_NS: u64 = 1_000_000_000;
/// Shortest window once samples are that far apart: 7/8 of the preferred.
/// Samples come about a second apart, a little earlier or later; were a
/// window at least a full second, one that came early would double the
/// window, and the time the rate takes to follow a change of
/// `CLOCK_MONOTONIC`'s (a window after the change, then a piece).
pub(super) const MIN_WINDOW_NS: u64 = WINDOW_NS - WINDOW_NS / 8;
/// Most brackets per counter sample; the narrowest wins.
pub(super) const BRACKETS: usize = 4;
/// Most brackets for the real-time offset.
pub(super) const REAL_BRACKETS: usize = 2;
/// Most brackets of each kind a reader's update takes. The first is read
/// with the update's code cold, about a second after the last one ran, and
/// is often wider than a disturbed one; the second, warm, rarely is. With
/// one, a reader's samples could measure nothing for seconds on end (each
/// disturbed), and the rate stop following `CLOCK_MONOTONIC`'s after NTP
/// changed it.
pub(super) const READER_BRACKETS: usize = 2;
/// A measurement more than 1/2^SUSPECT_SHIFT from the rate in use is suspect.
pub(super) const SUSPECT_SHIFT: u32 = 6;

/// One moment seen by the counter and the kernel's clocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Sample {
    /// The counter, read ordered.
    pub ticks: u64,
    /// `CLOCK_MONOTONIC` at that moment (the bracket's midpoint).
    pub mono: u64,
    /// Width of the bracket `mono` came from.
    pub width: u64,
    /// `CLOCK_REALTIME` at that moment, saturated to the `u64` range.
    pub real: u64,
    /// Width of the bracket `mono, real, mono` that `real` came from
    /// (`u64::MAX`: none, `real` read alone): a reader's update takes up to
    /// two, and a disturbed one makes `real` uncertain by half its width, however
    /// narrow the counter's bracket.
    pub real_width: u64,
}

/// Takes a sample from the counter (`counter`, read ordered) and the
/// kernel's two clocks; tests pass simulated ones.
///
/// The brackets are chained — each `CLOCK_MONOTONIC` reading closes one
/// bracket and opens the next — and sampling stops at the first bracket no
/// wider than `good_width` (0: take them all). A bracket within twice the
/// tightest ever seen puts the counter within one such width of the moment,
/// as good as the tightest of several over a window of milliseconds or a
/// second; so a warm sample costs one bracket, `mono, counter, mono`, and
/// one more read of each clock for the real time, and only a disturbed one
/// (cold caches, an interrupt) costs more — up to `brackets_of_each` of each
/// kind (a reader's update takes up to two: its cost is bounded, and a
/// sample whose brackets are all disturbed just measures nothing).
pub(super) fn sample(
    counter: impl Fn() -> u64,
    mono: impl Fn() -> u64,
    real: impl Fn() -> u64,
    good_width: u64,
    brackets_of_each: usize,
) -> Sample {
    // The narrowest bracket `(before, value, after)` of up to `n`, chained
    // from `before`; also returns the last reading, which opens the next.
    // (A generic function, not a closure over `&dyn Fn`: no indirect call
    // per clock read.)
    /// `(value, midpoint, width)`.
    type Bracket = (u64, u64, u64);
    fn brackets(
        n: usize,
        read: &impl Fn() -> u64,
        mono: &impl Fn() -> u64,
        mut before: u64,
        good_width: u64,
    ) -> (Option<Bracket>, (u64, u64)) {
        let mut best: Option<Bracket> = None;
        let mut last = (0, before);
        for _ in 0..n {
            let value = read();
            let after = mono();
            last = (value, after);
            // A bracket across a backward step of the reference is meaningless.
            if let Some(width) = after.checked_sub(before) {
                if best.map_or(true, |(_, _, w)| width < w) {
                    best = Some((value, before + width / 2, width));
                }
                if width <= good_width {
                    break;
                }
            }
            before = after;
        }
        (best, last)
    }
    let (best, (last_ticks, last_mono)) = brackets(
        brackets_of_each.min(BRACKETS),
        &counter,
        &mono,
        mono(),
        good_width,
    );
    let (ticks, mono_at, width) = best.unwrap_or((last_ticks, last_mono, u64::MAX));
    // CLOCK_REALTIME − CLOCK_MONOTONIC only changes when the clock is set,
    // so the narrowest bracket `mono, real, mono` gives it, and the real
    // time at the counter sample follows.
    let real_brackets = brackets_of_each.min(REAL_BRACKETS);
    let (real_at, real_width) = match brackets(real_brackets, &real, &mono, last_mono, good_width).0
    {
        Some((r, at, w)) => (
            (mono_at as i128 + (r as i128 - at as i128)).clamp(0, u64::MAX as i128) as u64,
            w,
        ),
        None => (real(), u64::MAX),
    };
    Sample {
        ticks,
        mono: mono_at,
        width,
        real: real_at,
        real_width,
    }
}

/// The fastest counter believed: a measured rate that says the counter ran
/// faster than this spanned a jump of it (or a suspend it counted), not a
/// rate. (Counters run at tens of MHz to a few GHz.)
pub(super) const MAX_COUNTER_HZ: u64 = 20_000_000_000;

/// Whether the counter did something other than count time between two
/// samples: it went back, or ran faster against `CLOCK_MONOTONIC` than any
/// counter does (it jumped, or counted a suspend).
pub(super) fn discontinuous(a: &Sample, b: &Sample) -> bool {
    if b.ticks < a.ticks {
        return true;
    }
    let mono = b.mono.saturating_sub(a.mono) as u128;
    let fastest = mono * MAX_COUNTER_HZ as u128 / 1_000_000_000 + 1;
    (b.ticks - a.ticks) as u128 > fastest
}

/// The rate between two samples, as a line slope.
pub(super) fn slope_between(a: &Sample, b: &Sample) -> Option<u64> {
    if b.ticks <= a.ticks || b.mono <= a.mono {
        return None;
    }
    Line::slope(b.mono - a.mono, b.ticks - a.ticks)
}

/// The samples of the current rate window, oldest first: the newest sample
/// at least a window old (the start of the next measurement), then samples
/// at least an eighth of a window apart, so a dozen slots always suffice.
#[derive(Clone, Copy, Debug)]
pub(super) struct Window {
    points: [Sample; 12],
    len: usize,
}

impl Window {
    pub(super) const fn new() -> Window {
        Window {
            points: [Sample {
                ticks: 0,
                mono: 0,
                width: 0,
                real: 0,
                real_width: 0,
            }; 12],
            len: 0,
        }
    }

    pub(super) fn clear(&mut self) {
        self.len = 0;
    }

    pub(super) fn first(&self) -> Option<&Sample> {
        self.points[..self.len].first()
    }

    /// Adds a sample (unless it follows the last one too closely) and drops
    /// those no longer needed: everything before the newest sample that is
    /// at least a (shortest) window old.
    pub(super) fn push(&mut self, s: Sample) {
        if let Some(last) = self.points[..self.len].last() {
            if s.mono.saturating_sub(last.mono) < WINDOW_NS / 8 {
                return;
            }
        }
        let keep_from = self.points[..self.len]
            .iter()
            .rposition(|p| s.mono.saturating_sub(p.mono) >= MIN_WINDOW_NS)
            .unwrap_or(0);
        self.points.copy_within(keep_from..self.len, 0);
        self.len -= keep_from;
        if self.len == self.points.len() {
            self.points.copy_within(1..self.len, 0);
            self.len -= 1;
        }
        self.points[self.len] = s;
        self.len += 1;
    }

    /// Where a window ending at `s` starts: the newest sample at least
    /// `MIN_WINDOW_NS` before it, else the oldest kept.
    pub(super) fn start_for(&self, s: &Sample) -> Option<&Sample> {
        let kept = &self.points[..self.len];
        kept.iter()
            .rev()
            .find(|p| s.mono.saturating_sub(p.mono) >= MIN_WINDOW_NS)
            .or(kept.first())
    }
}

/// What to make of a measured rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Use this slope (already held to the 7/8 floor).
    Accept(u64),
    /// Set this slope aside as suspect and restart the window.
    Suspect(u64),
}

/// Judges `measured` against the slope in use and the last suspect one.
pub(super) fn judge(in_use: u64, measured: u64, suspect: Option<u64>) -> Verdict {
    let near = |a: u64, b: u64| a.abs_diff(b) <= b >> SUSPECT_SHIFT;
    if near(measured, in_use) || suspect.is_some_and(|s| near(measured, s)) {
        Verdict::Accept(measured.max(floor(in_use)))
    } else {
        Verdict::Suspect(measured)
    }
}

/// The smallest slope a new state may have after one with slope `in_use`.
pub(super) const fn floor(in_use: u64) -> u64 {
    in_use - (in_use >> 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(mono: u64, ticks: u64) -> Sample {
        Sample {
            ticks,
            mono,
            width: 40,
            real: 0,
            real_width: 40,
        }
    }

    #[test]
    fn window_keeps_a_second_and_not_more() {
        let mut w = Window::new();
        for i in 0..40u64 {
            w.push(at(i * 100_000_000, i * 250_000_000));
        }
        let newest = at(40 * 100_000_000, 40 * 250_000_000);
        let start = w.start_for(&newest).unwrap();
        // About a second: at least 7/8 of one, and not much more.
        let window = newest.mono - start.mono;
        assert!(
            (MIN_WINDOW_NS..=WINDOW_NS * 5 / 4).contains(&window),
            "{window}"
        );
        assert!(w.len <= 12);
        // Samples a little less than a second apart (an update that came a
        // little early): the window is the last gap, not two of them.
        let mut jittery = Window::new();
        for i in 0..5u64 {
            jittery.push(at(i * 990_000_000, i * 2_475_000_000));
        }
        let newest = at(5 * 990_000_000, 5 * 2_475_000_000);
        let start = jittery.start_for(&newest).unwrap();
        assert_eq!(newest.mono - start.mono, 990_000_000);
        // The first samples of a process: the window is all there is.
        let mut young = Window::new();
        young.push(at(0, 0));
        young.push(at(1_000_000, 2_500_000));
        assert_eq!(young.start_for(&at(2_000_000, 5_000_000)).unwrap().mono, 0);
    }

    #[test]
    fn judging() {
        let s = 1u64 << 60;
        assert_eq!(
            judge(s, s + (s >> 10), None),
            Verdict::Accept(s + (s >> 10))
        );
        let far = s + (s >> 4);
        assert_eq!(judge(s, far, None), Verdict::Suspect(far));
        assert_eq!(judge(s, far + 1, Some(far)), Verdict::Accept(far + 1));
        // Never below 7/8 of the slope in use, even when believed.
        let low = s / 2;
        assert_eq!(judge(s, low, Some(low)), Verdict::Accept(floor(s)));
    }

    /// The narrowest bracket wins; sampling stops at the first bracket no
    /// wider than `good_width`; the real-time brackets continue the chain.
    #[test]
    fn sample_takes_the_narrowest_bracket_and_stops_at_a_good_one() {
        use core::cell::Cell;
        // Bracket widths, in order: 50, 20, 30, 10 (counter), then 40, 8
        // (real). Each clock read advances time by 1 ns; the gaps between
        // the monotonic readings make the widths.
        let gaps = [50u64, 20, 30, 10, 40, 8];
        // (good_width, counter brackets taken, the width used, real
        // brackets taken, the real bracket's width)
        for (good_width, counter_brackets, width, real_brackets, real_width) in [
            (0, 4, 10, 2, 8),
            (25, 2, 20, 2, 10),
            (50, 1, 50, 1, 20),
            (8, 4, 10, 2, 8),
        ] {
            let now = Cell::new(1_000u64);
            let monos = Cell::new(0usize);
            let (reads_c, reads_r) = (Cell::new(0usize), Cell::new(0usize));
            let mono = || {
                let i = monos.get();
                monos.set(i + 1);
                if i > 0 {
                    now.set(now.get() + gaps[i - 1] - 1);
                }
                now.get()
            };
            let counter = || {
                reads_c.set(reads_c.get() + 1);
                now.set(now.get() + 1);
                now.get() * 3
            };
            let real = || {
                reads_r.set(reads_r.get() + 1);
                now.set(now.get() + 1);
                now.get() + 7_000
            };
            let s = sample(counter, mono, real, good_width, BRACKETS);
            assert_eq!(reads_c.get(), counter_brackets, "good_width {good_width}");
            assert_eq!(reads_r.get(), real_brackets, "good_width {good_width}");
            assert_eq!(s.width, width, "good_width {good_width}");
            // The counter was read 1 ns into its bracket; the midpoint is
            // within half the width of it.
            assert!((s.ticks / 3).abs_diff(s.mono) <= width / 2);
            assert!(s.real.abs_diff(s.mono + 7_000) <= real_width / 2 + width / 2);
        }
    }

    #[test]
    fn sample_matches_the_midpoint() {
        use core::sync::atomic::{AtomicU64, Ordering};
        static T: AtomicU64 = AtomicU64::new(1_000);
        fn mono() -> u64 {
            T.fetch_add(10, Ordering::Relaxed)
        }
        fn counter(_: bool) -> u64 {
            T.load(Ordering::Relaxed) * 3
        }
        fn real() -> u64 {
            T.load(Ordering::Relaxed) + 5_000
        }
        for good_width in [0, 10, u64::MAX] {
            let s = sample(|| counter(false), mono, real, good_width, BRACKETS);
            // Each bracket is 10 ns wide; the counter was read at its
            // start... within half a width of the midpoint.
            assert_eq!(s.width, 10);
            assert_eq!(s.ticks % 3, 0);
            assert!((s.ticks / 3).abs_diff(s.mono) <= 5);
            assert!(s.real.abs_diff(s.mono + 5_000) <= 10);
        }
    }
}
