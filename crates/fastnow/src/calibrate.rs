//! Measuring the counter against the kernel's clocks.
//!
//! A *sample* pairs a counter value with `CLOCK_MONOTONIC` (and with
//! `CLOCK_REALTIME`, for the wall tier) at one moment: the tightest of
//! several brackets `OS clock, ordered counter read, OS clock`, the counter
//! matched to the bracket's midpoint, so its error is at most half the
//! bracket's width (tens of nanoseconds through the vDSO). A sample whose
//! every bracket was wide — the thread was preempted or interrupted in each —
//! is not used to measure anything.
//!
//! The *rate* (nanoseconds per tick) is measured over the most recent
//! window of at least a second: between the newest sample and the newest
//! earlier sample that is at least [`WINDOW_NS`] older, or the oldest one
//! kept when none is (the first second of a process, when windows grow from
//! a millisecond). A one-second window gives the rate to a few hundredths of
//! a ppm, and because it is *recent*, the rate follows `CLOCK_MONOTONIC`'s
//! current rate — which NTP, chrony or PTP change at will — within about
//! two seconds of a change, instead of averaging it over a minute.
//!
//! A measurement far from the rate in use (more than 1/64) is suspect: the
//! window may span a suspend or a migration. It is set aside and the window
//! restarts; the next window is believed if it agrees with the suspect one
//! (the rate really changed, e.g. a large chrony slew) or with the rate in
//! use. And a new rate is never below 7/8 of the one in use (a larger drop
//! is followed over several windows): readers that find the state out of
//! date without being able to update it rely on that bound (see
//! `timekeeper`).

use crate::scale::Line;

/// Preferred length of a rate window.
pub(crate) const WINDOW_NS: u64 = 1_000_000_000;
/// Brackets per counter sample; the narrowest wins. Four keep a sample
/// around a microsecond even with cold caches; over a one-second window the
/// narrowest of four is as good as of more (the rate's error is a
/// bracket's over a second).
const BRACKETS: usize = 4;
/// Brackets for the real-time offset.
const REAL_BRACKETS: usize = 2;
/// A measurement more than 1/2^SUSPECT_SHIFT from the rate in use is suspect.
const SUSPECT_SHIFT: u32 = 6;

/// One moment seen by the counter and the kernel's clocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sample {
    /// The counter, read ordered.
    pub ticks: u64,
    /// `CLOCK_MONOTONIC` at that moment (the bracket's midpoint).
    pub mono: u64,
    /// Width of the bracket `mono` came from.
    pub width: u64,
    /// `CLOCK_REALTIME` at that moment, saturated to the `u64` range.
    pub real: u64,
}

/// Takes a sample from the counter (`counter`, read ordered) and the
/// kernel's two clocks; tests pass simulated ones.
pub(crate) fn sample(
    counter: impl Fn() -> u64,
    mono: impl Fn() -> u64,
    real: impl Fn() -> u64,
) -> Sample {
    let (mut best, mut fallback) = (None::<(u64, u64, u64)>, (0, 0));
    for _ in 0..BRACKETS {
        let before = mono();
        let ticks = counter();
        let after = mono();
        fallback = (ticks, after);
        // A bracket across a backward step of the reference is meaningless.
        let Some(width) = after.checked_sub(before) else {
            continue;
        };
        if best.map_or(true, |(_, _, w)| width < w) {
            best = Some((ticks, before + width / 2, width));
        }
    }
    let (ticks, mono_at, width) = best.unwrap_or((fallback.0, fallback.1, u64::MAX));
    // CLOCK_REALTIME − CLOCK_MONOTONIC only changes when the clock is set,
    // so the tightest bracket `mono, real, mono` gives it, and the real time
    // at the counter sample follows.
    let mut real_offset: Option<(i128, u64)> = None;
    for _ in 0..REAL_BRACKETS {
        let before = mono();
        let r = real();
        let after = mono();
        let Some(w) = after.checked_sub(before) else {
            continue;
        };
        if real_offset.map_or(true, |(_, bw)| w < bw) {
            real_offset = Some((r as i128 - (before + w / 2) as i128, w));
        }
    }
    let real_at = match real_offset {
        Some((offset, _)) => (mono_at as i128 + offset).clamp(0, u64::MAX as i128) as u64,
        None => real(),
    };
    Sample {
        ticks,
        mono: mono_at,
        width,
        real: real_at,
    }
}

/// The rate between two samples, as a line slope.
pub(crate) fn slope_between(a: &Sample, b: &Sample) -> Option<u64> {
    if b.ticks <= a.ticks || b.mono <= a.mono {
        return None;
    }
    Line::slope(b.mono - a.mono, b.ticks - a.ticks)
}

/// The samples of the current rate window, oldest first: the newest sample
/// at least a window old (the start of the next measurement), then samples
/// at least an eighth of a window apart, so a dozen slots always suffice.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Window {
    points: [Sample; 12],
    len: usize,
}

impl Window {
    pub(crate) const fn new() -> Window {
        Window {
            points: [Sample {
                ticks: 0,
                mono: 0,
                width: 0,
                real: 0,
            }; 12],
            len: 0,
        }
    }

    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    pub(crate) fn first(&self) -> Option<&Sample> {
        self.points[..self.len].first()
    }

    /// Adds a sample (unless it follows the last one too closely) and drops
    /// those no longer needed: everything before the newest sample that is
    /// at least a window old.
    pub(crate) fn push(&mut self, s: Sample) {
        if let Some(last) = self.points[..self.len].last() {
            if s.mono.saturating_sub(last.mono) < WINDOW_NS / 8 {
                return;
            }
        }
        let keep_from = self.points[..self.len]
            .iter()
            .rposition(|p| s.mono.saturating_sub(p.mono) >= WINDOW_NS)
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
    /// `WINDOW_NS` before it, else the oldest kept.
    pub(crate) fn start_for(&self, s: &Sample) -> Option<&Sample> {
        let kept = &self.points[..self.len];
        kept.iter()
            .rev()
            .find(|p| s.mono.saturating_sub(p.mono) >= WINDOW_NS)
            .or(kept.first())
    }
}

/// What to make of a measured rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Use this slope (already held to the 7/8 floor).
    Accept(u64),
    /// Set this slope aside as suspect and restart the window.
    Suspect(u64),
}

/// Judges `measured` against the slope in use and the last suspect one.
pub(crate) fn judge(in_use: u64, measured: u64, suspect: Option<u64>) -> Verdict {
    let near = |a: u64, b: u64| a.abs_diff(b) <= b >> SUSPECT_SHIFT;
    if near(measured, in_use) || suspect.is_some_and(|s| near(measured, s)) {
        Verdict::Accept(measured.max(floor(in_use)))
    } else {
        Verdict::Suspect(measured)
    }
}

/// The smallest slope a new state may have after one with slope `in_use`.
pub(crate) const fn floor(in_use: u64) -> u64 {
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
        // At least a second, and not much more.
        let window = newest.mono - start.mono;
        assert!(
            (WINDOW_NS..=WINDOW_NS * 5 / 4).contains(&window),
            "{window}"
        );
        assert!(w.len <= 12);
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
        let s = sample(|| counter(false), mono, real);
        // Each bracket is 10 ns wide; the counter was read at mono + 10,
        // the middle of (mono, mono + 10 + 10)... within half a width.
        assert_eq!(s.width, 10);
        assert_eq!(s.ticks % 3, 0);
        assert!((s.ticks / 3).abs_diff(s.mono) <= 5);
        assert!(s.real.abs_diff(s.mono + 5_000) <= 10);
    }
}
