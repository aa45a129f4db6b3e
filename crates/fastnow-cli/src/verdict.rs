//! VERDICT: which fastnow clock to use on this machine, for which job,
//! formed from the measured figures alone ([`Figures`] in, a sentence out),
//! so that it cannot say what the run did not measure:
//!
//! - each comparison is worded by its measured ratio: "2.1× faster than",
//!   "1.7× slower than", and "about as fast as" within [`SAME_BAND`];
//! - a clock measured slower than std's is not recommended, unless for a
//!   guarantee the run showed std's clock lacks (the strict test);
//! - an unsteady measurement ([`Timings::unsteady`]) is not concluded from:
//!   the report measures again, up to [`MAX_ATTEMPTS`] times, and if it
//!   stays unsteady the verdict says the machine was too busy to conclude
//!   and gives the figures with their spread instead of a recommendation.

use serde::{Deserialize, Serialize};

/// Two costs within this fraction of each other either way are "about as
/// fast": the rounds of one clock on an idle machine differ by a few
/// percent, so a smaller difference is not a finding.
pub const SAME_BAND: f64 = 0.05;

/// A clock's rounds disagree when its median round took more than this
/// times its fastest. Other work only ever adds time to a round, so the
/// fastest round is the closest to the clock's own cost, and the median is
/// reported because a minority of slowed rounds does not move it; a median
/// this far above the fastest means at least half the rounds were slowed,
/// and the median is then a figure of the other work. On an idle machine
/// the median round is within a few percent of the fastest, so this leaves
/// several times that for ordinary jitter.
pub const ROUNDS_RATIO_LIMIT: f64 = 1.25;

/// ... and by more than this many nanoseconds: below a nanosecond a call
/// is a few cycles, and the loop around it and its alignment move such a
/// figure by a quarter with no other work at all.
pub const ROUNDS_NS_LIMIT: f64 = 1.0;

/// How many times the report measures the costs before it declines to
/// conclude: a burst of other work (a build, a backup) often passes within
/// seconds, and three bound the delay a busy machine adds to the report.
pub const MAX_ATTEMPTS: u32 = 3;

/// Whether the costs the verdict compares were steady enough to conclude
/// from (`verdict::Timings::unsteady`), and how many times they were
/// measured to get there.
#[derive(Serialize, Deserialize)]
pub struct Steadiness {
    /// Times the one-thread costs and the latencies were measured: again
    /// while unsteady, up to `verdict::MAX_ATTEMPTS`.
    pub attempts: u32,
    /// Whether the last measurement was steady (false: the verdict says the
    /// machine was too busy to conclude).
    pub steady: bool,
    /// What was unsteady in the last measurement (empty when steady).
    pub unsteady: Vec<String>,
}

/// Starts from the figures `first` and, while `unsteady` finds something in
/// them, takes them `again`, up to [`MAX_ATTEMPTS`] measurements in all.
/// Returns the last figures taken and how steady they were.
pub fn until_steady<T>(
    first: T,
    mut again: impl FnMut() -> T,
    unsteady: impl Fn(&T) -> Vec<String>,
) -> (T, Steadiness) {
    let mut figures = first;
    let mut attempts = 1;
    let mut why = unsteady(&figures);
    while !why.is_empty() && attempts < MAX_ATTEMPTS {
        figures = again();
        attempts += 1;
        why = unsteady(&figures);
    }
    let steadiness = Steadiness {
        attempts,
        steady: why.is_empty(),
        unsteady: why,
    };
    (figures, steadiness)
}

/// One clock's figures: its cost per call (median, least and greatest of
/// the rounds) and, where measured, its latency histogram's p50.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measured {
    pub median_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    /// Per thread while every core calls it.
    pub all_cores_ns: f64,
    /// The latency histogram's median (None: its latency was not measured).
    pub p50_ns: Option<f64>,
}

/// The costs the verdict compares, each fastnow clock against the std
/// clock it would replace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timings {
    pub instant: Measured,
    pub monotonic: Measured,
    pub unix_nanos: Measured,
    pub recent: Measured,
    pub std_instant: Measured,
    pub system_time: Measured,
}

/// What the strict cross-thread test showed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Strict {
    /// Whether the test was shown able to fail here (its control failed).
    pub conclusive: bool,
    pub instant: u64,
    pub monotonic: u64,
    /// std::time::Instant's violations (None: not in the test).
    pub std_instant: Option<u64>,
}

/// Everything the verdict is formed from.
#[derive(Clone, Debug, PartialEq)]
pub struct Figures {
    pub timings: Timings,
    /// How many times the costs were measured (the last one is in `timings`).
    pub attempts: u32,
    pub counter: Option<String>,
    pub freq_hz: u64,
    /// Why fastnow reads the OS clock here, if it does.
    pub fallback: Option<String>,
    pub strict: Strict,
    pub wall_p99_ns: f64,
    pub coarse_resolution_ms: f64,
    pub coarse_age_p99_ms: f64,
}

/// The clocks' names as they appear in the report's tables.
pub const INSTANT: &str = "fastnow Instant::now";
pub const MONOTONIC: &str = "fastnow MonotonicInstant::now";
pub const UNIX_NANOS: &str = "fastnow unix_nanos";
pub const RECENT: &str = "fastnow recent";
pub const STD_INSTANT: &str = "std Instant::now";
pub const SYSTEM_TIME: &str = "std SystemTime::now";

impl Timings {
    fn named(&self) -> [(&'static str, &Measured); 6] {
        [
            ("fastnow::Instant", &self.instant),
            ("std::time::Instant", &self.std_instant),
            ("MonotonicInstant", &self.monotonic),
            ("unix_nanos()", &self.unix_nanos),
            ("SystemTime", &self.system_time),
            ("recent()", &self.recent),
        ]
    }

    /// (clock, its name, the std clock it is compared with, that one's name)
    fn compared(&self) -> [(&Measured, &'static str, &Measured, &'static str); 4] {
        [
            (
                &self.instant,
                "fastnow::Instant",
                &self.std_instant,
                "std::time::Instant",
            ),
            (
                &self.monotonic,
                "MonotonicInstant",
                &self.std_instant,
                "std::time::Instant",
            ),
            (
                &self.unix_nanos,
                "unix_nanos()",
                &self.system_time,
                "SystemTime",
            ),
            (
                &self.recent,
                "recent()",
                &self.std_instant,
                "std::time::Instant",
            ),
        ]
    }

    /// Why these figures are too unsteady to conclude from (empty: steady).
    ///
    /// - A clock's rounds disagree: its median round is more than
    ///   [`ROUNDS_RATIO_LIMIT`] times, and [`ROUNDS_NS_LIMIT`] above, its
    ///   fastest.
    /// - The cost medians and the latency p50s disagree on which of two
    ///   compared clocks is cheaper (each beyond [`SAME_BAND`]). The two
    ///   time the same calls differently (a loop of calls; one call between
    ///   fences), so their values differ by method, but not which clock
    ///   costs less: when they do, other work skewed one of them.
    pub fn unsteady(&self) -> Vec<String> {
        let mut why = Vec::new();
        for (name, m) in self.named() {
            let sane = m.min_ns > 0.0 && m.min_ns <= m.median_ns && m.median_ns.is_finite();
            if !sane {
                why.push(format!(
                    "{name}'s rounds are not a measurement ({})",
                    spread(m)
                ));
            } else if m.median_ns > m.min_ns * ROUNDS_RATIO_LIMIT
                && m.median_ns - m.min_ns > ROUNDS_NS_LIMIT
            {
                why.push(format!(
                    "{name}'s rounds disagree, its median round {} its fastest ({} against {})",
                    times(m.median_ns / m.min_ns),
                    ns(m.median_ns),
                    ns(m.min_ns)
                ));
            }
        }
        for (x, xname, r, rname) in self.compared() {
            let (Some(px), Some(pr)) = (x.p50_ns, r.p50_ns) else {
                continue;
            };
            let (by_cost, by_latency) = (compare(x.median_ns, r.median_ns), compare(px, pr));
            let opposite = matches!(
                (by_cost, by_latency),
                (Ratio::Faster(_), Ratio::Slower(_)) | (Ratio::Slower(_), Ratio::Faster(_))
            );
            if opposite {
                why.push(format!(
                    "the rounds put {xname} {} {rname} ({} against {}) and the latency p50s {} it ({} against {})",
                    by_cost.relation(),
                    ns(x.median_ns),
                    ns(r.median_ns),
                    by_latency.relation(),
                    ns(px),
                    ns(pr)
                ));
            }
        }
        why
    }
}

/// How a clock's cost compares with another's.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Ratio {
    /// Cheaper by this factor (> 1 + SAME_BAND).
    Faster(f64),
    Same,
    /// Dearer by this factor (> 1 + SAME_BAND).
    Slower(f64),
}

fn compare(x_ns: f64, reference_ns: f64) -> Ratio {
    if reference_ns > x_ns * (1.0 + SAME_BAND) {
        Ratio::Faster(reference_ns / x_ns)
    } else if x_ns > reference_ns * (1.0 + SAME_BAND) {
        Ratio::Slower(x_ns / reference_ns)
    } else {
        Ratio::Same
    }
}

impl Ratio {
    /// "2.1× faster than", "about as fast as", "1.7× slower than".
    fn relation(self) -> String {
        match self {
            Ratio::Faster(k) => format!("{} faster than", times(k)),
            Ratio::Same => "about as fast as".to_string(),
            Ratio::Slower(k) => format!("{} slower than", times(k)),
        }
    }
}

/// A factor as the verdict prints it: never "1.0×" for one beyond the band.
fn times(k: f64) -> String {
    if k >= 10.0 {
        format!("{k:.0}×")
    } else if k < 1.1 {
        format!("{k:.2}×")
    } else {
        format!("{k:.1}×")
    }
}

fn ns(x: f64) -> String {
    if x < 1.0 {
        format!("{x:.2} ns")
    } else {
        format!("{x:.1} ns")
    }
}

/// "38.7 ns (rounds 11.4–43.9, latency p50 10.0)"
fn spread(m: &Measured) -> String {
    let p50 = m
        .p50_ns
        .map_or(String::new(), |p| format!(", latency p50 {}", ns(p)));
    format!(
        "{} (rounds {:.1}–{:.1}{p50})",
        ns(m.median_ns),
        m.min_ns,
        m.max_ns
    )
}

fn count(n: u32) -> String {
    match n {
        1 => "once".to_string(),
        2 => "twice".to_string(),
        n => format!("{n} times"),
    }
}

/// The verdict: a recommendation worded by the measured ratios, or, when
/// the figures are unsteady, a plain statement that the machine was too
/// busy to conclude, with the figures and their spread.
pub fn verdict(f: &Figures) -> String {
    let t = &f.timings;
    let mut out = match &f.fallback {
        Some(why) => format!("fastnow uses the OS clock on this machine ({why})."),
        None => format!(
            "Here fastnow reads the {} at {:.3} GHz.",
            f.counter.as_deref().unwrap_or("counter"),
            f.freq_hz as f64 / 1e9
        ),
    };
    let strict_note = if f.strict.conclusive {
        let std = f.strict.std_instant.map_or(String::new(), |n| {
            format!(" and {n} for std::time::Instant")
        });
        format!(
            "{} violations in the strict test, against {} for Instant{std}",
            f.strict.monotonic, f.strict.instant
        )
    } else {
        "the strict test was too short to tell here".to_string()
    };
    let unsteady = t.unsteady();
    if !unsteady.is_empty() {
        let figures: Vec<String> = t
            .named()
            .iter()
            .map(|(name, m)| format!("{name} {}", spread(m)))
            .collect();
        out.push_str(&format!(
            " The machine was too busy to conclude which clock to use. Measured {}, the figures {}disagree: {}. \
             The figures, per call (median, min–max of the rounds): {}; {strict_note}. Run the report again when \
             the machine is idle for a recommendation.",
            count(f.attempts),
            if f.attempts > 1 { "still " } else { "" },
            unsteady.join("; "),
            figures.join(", "),
        ));
    } else {
        if f.attempts > 1 {
            out.push_str(&format!(
                " (Costs measured {}: the earlier ones were unsteady.)",
                count(f.attempts)
            ));
        }
        for part in [
            instant_part(t),
            monotonic_part(t, &f.strict, &strict_note),
            unix_nanos_part(t, f.wall_p99_ns),
            recent_part(t, f.coarse_resolution_ms, f.coarse_age_p99_ms),
        ] {
            out.push(' ');
            out.push_str(&part);
        }
    }
    if f.fallback.is_some() {
        out.push_str(
            " Set FASTNOW_CLOCK=counter only if you know this machine's counter is synchronised across CPUs.",
        );
    }
    out
}

fn instant_part(t: &Timings) -> String {
    let (x, r) = (t.instant.median_ns, t.std_instant.median_ns);
    let c = compare(x, r);
    let figures = format!("{} against {} a call", ns(x), ns(r));
    match c {
        Ratio::Faster(_) => format!(
            "Use fastnow::Instant to time work within a thread: {} std::time::Instant ({figures}).",
            c.relation()
        ),
        Ratio::Same => format!(
            "To time work within a thread, fastnow::Instant is {} std::time::Instant here ({figures}), so \
             switching gains nothing.",
            c.relation()
        ),
        Ratio::Slower(_) => format!(
            "To time work within a thread, keep std::time::Instant: fastnow::Instant measured {} it here \
             ({figures}).",
            c.relation()
        ),
    }
}

fn monotonic_part(t: &Timings, strict: &Strict, strict_note: &str) -> String {
    let (x, r) = (t.monotonic.median_ns, t.std_instant.median_ns);
    let c = compare(x, r);
    let figures = format!(
        "{} on one core against {}, {} with every core calling it; {strict_note}",
        ns(x),
        ns(r),
        ns(t.monotonic.all_cores_ns)
    );
    if strict.conclusive && strict.monotonic > 0 {
        return format!(
            "MonotonicInstant went backwards {} times across threads in the strict test, which it must never do: \
             do not rely on it here, and report it with this output ({} std::time::Instant, {figures}).",
            strict.monotonic,
            c.relation()
        );
    }
    // The guarantee std's clock was shown to lack here, if it was.
    let std_went_back = match strict.std_instant {
        Some(n) if strict.conclusive && n > 0 => Some(n),
        _ => None,
    };
    match (c, std_went_back) {
        (Ratio::Faster(_), _) => format!(
            "Use MonotonicInstant when stamps from several threads must never go backwards: {} \
             std::time::Instant ({figures}).",
            c.relation()
        ),
        (_, Some(n)) => format!(
            "Use MonotonicInstant when stamps from several threads must never go backwards, though it is {} \
             std::time::Instant here ({figures}): std::time::Instant went backwards {n} times in the strict test.",
            c.relation()
        ),
        (Ratio::Same, None) => format!(
            "For stamps from several threads that must never go backwards, MonotonicInstant is {} \
             std::time::Instant here ({figures}), so switching gains nothing.",
            c.relation()
        ),
        (Ratio::Slower(_), None) => format!(
            "For stamps from several threads, keep std::time::Instant: MonotonicInstant measured {} it here \
             ({figures}).",
            c.relation()
        ),
    }
}

fn unix_nanos_part(t: &Timings, wall_p99_ns: f64) -> String {
    let (x, r) = (t.unix_nanos.median_ns, t.system_time.median_ns);
    let c = compare(x, r);
    let figures = format!(
        "{} against {} a call, within {wall_p99_ns:.0} ns of CLOCK_REALTIME at p99",
        ns(x),
        ns(r)
    );
    match c {
        Ratio::Faster(_) => format!(
            "Use unix_nanos() or UnixTime for timestamps: {} SystemTime ({figures}).",
            c.relation()
        ),
        Ratio::Same => format!(
            "For timestamps, unix_nanos() is {} SystemTime here ({figures}), so switching gains nothing.",
            c.relation()
        ),
        Ratio::Slower(_) => format!(
            "For timestamps, keep SystemTime: unix_nanos() measured {} it here ({figures}).",
            c.relation()
        ),
    }
}

fn recent_part(t: &Timings, resolution_ms: f64, age_p99_ms: f64) -> String {
    let (x, r) = (t.recent.median_ns, t.std_instant.median_ns);
    let c = compare(x, r);
    let figures = format!(
        "{} against {} a call; p99 age {age_p99_ms:.2} ms with upkeep every {resolution_ms:.0} ms",
        ns(x),
        ns(r)
    );
    match c {
        Ratio::Faster(_) => format!(
            "Use recent() / recent_unix_nanos() for expiry checks that tolerate that staleness: {} \
             std::time::Instant ({figures}).",
            c.relation()
        ),
        _ => format!(
            "recent() measured {} std::time::Instant here ({figures}), so it saves nothing for its staleness.",
            c.relation()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (median, min, max, all cores, latency p50): figures as a report records them.
    fn m(
        median_ns: f64,
        min_ns: f64,
        max_ns: f64,
        all_cores_ns: f64,
        p50: Option<f64>,
    ) -> Measured {
        Measured {
            median_ns,
            min_ns,
            max_ns,
            all_cores_ns,
            p50_ns: p50,
        }
    }

    /// The verdict on steady figures (and that they are steady).
    fn steady_verdict(timings: Timings) -> String {
        let f = figures(timings);
        assert!(
            f.timings.unsteady().is_empty(),
            "{:?}",
            f.timings.unsteady()
        );
        verdict(&f)
    }

    #[track_caller]
    fn says(verdict: &str, part: &str) {
        assert!(verdict.contains(part), "{part:?} not in: {verdict}");
    }

    fn figures(timings: Timings) -> Figures {
        Figures {
            timings,
            attempts: 1,
            counter: Some("TSC (RDTSC)".into()),
            freq_hz: 2_445_000_000,
            fallback: None,
            strict: Strict {
                conclusive: true,
                instant: 147,
                monotonic: 0,
                std_instant: Some(0),
            },
            wall_p99_ns: 12.0,
            coarse_resolution_ms: 1.0,
            coarse_age_p99_ms: 1.12,
        }
    }

    /// A steady quick report on an idle 2-core KVM guest (Intel Xeon, TSC),
    /// fastnow well ahead of std.
    fn clean() -> Timings {
        Timings {
            instant: m(11.59, 11.39, 11.79, 12.1, Some(10.02)),
            monotonic: m(11.80, 11.41, 12.26, 26.16, Some(24.41)),
            unix_nanos: m(11.59, 11.43, 11.76, 11.67, Some(10.02)),
            recent: m(0.60, 0.60, 1.38, 0.69, None),
            std_instant: m(29.38, 29.14, 29.64, 31.66, Some(29.45)),
            system_time: m(29.34, 29.22, 30.36, 52.77, Some(30.06)),
        }
    }

    #[test]
    fn clean_run_where_fastnow_wins_names_each_clock_by_its_ratio() {
        let v = steady_verdict(clean());
        says(&v, "Use fastnow::Instant to time work within a thread: 2.5× faster than std::time::Instant (11.6 ns against 29.4 ns a call)");
        says(&v, "Use MonotonicInstant when stamps from several threads must never go backwards: 2.5× faster than std::time::Instant");
        says(
            &v,
            "0 violations in the strict test, against 147 for Instant and 0 for std::time::Instant",
        );
        says(
            &v,
            "Use unix_nanos() or UnixTime for timestamps: 2.5× faster than SystemTime",
        );
        says(&v, "49× faster than std::time::Instant (0.60 ns");
        says(&v, "p99 age 1.12 ms with upkeep every 1 ms");
        assert!(!v.contains("too busy"), "{v}");
        assert!(!v.contains("measured twice"), "{v}");
    }

    /// The run the issue quotes: under load, fastnow::Instant's median
    /// round was inflated (its fastest round and its latency p50 both far
    /// below std's) and the old verdict printed "0.6x faster".
    fn noisy() -> Timings {
        Timings {
            instant: m(25.8, 7.87, 285.0, 9.1, Some(8.5)),
            monotonic: m(27.3, 8.02, 190.0, 21.0, Some(17.9)),
            unix_nanos: m(9.9, 8.1, 40.2, 9.6, Some(8.7)),
            recent: m(0.61, 0.6, 2.9, 0.7, None),
            std_instant: m(15.5, 15.1, 31.0, 16.2, Some(15.4)),
            system_time: m(15.9, 15.3, 33.0, 17.0, Some(15.8)),
        }
    }

    #[test]
    fn noisy_run_says_too_busy_with_the_spread_instead_of_recommending() {
        let mut f = figures(noisy());
        f.attempts = MAX_ATTEMPTS;
        let why = f.timings.unsteady();
        assert!(
            why.iter()
                .any(|w| w.starts_with("fastnow::Instant's rounds disagree")),
            "{why:?}"
        );
        assert!(
            why.iter().any(|w| w.contains("the rounds put fastnow::Instant 1.7× slower than std::time::Instant (25.8 ns against 15.5 ns) and the latency p50s 1.8× faster than it")),
            "{why:?}"
        );
        let v = verdict(&f);
        says(&v, "The machine was too busy to conclude which clock to use. Measured 3 times, the figures still disagree: fastnow::Instant's rounds disagree, its median round 3.3× its fastest (25.8 ns against 7.9 ns); ");
        says(
            &v,
            "fastnow::Instant 25.8 ns (rounds 7.9–285.0, latency p50 8.5 ns)",
        );
        says(
            &v,
            "std::time::Instant 15.5 ns (rounds 15.1–31.0, latency p50 15.4 ns)",
        );
        says(&v, "Run the report again when the machine is idle");
        // No recommendation and no comparison worded as a finding.
        assert!(!v.contains("Use "), "{v}");
        assert!(!v.contains("0.6x"), "{v}");
    }

    #[test]
    fn rounds_that_disagree_alone_are_unsteady() {
        // Two of three rounds slowed: the median is the slowed figure, and
        // the p50s alone would not have caught it (both sides agree).
        let mut t = clean();
        t.unix_nanos = m(38.69, 11.39, 43.92, 11.67, None);
        t.system_time.p50_ns = None;
        let why = t.unsteady();
        assert_eq!(why.len(), 1, "{why:?}");
        assert!(
            why[0].contains("unix_nanos()'s rounds disagree, its median round 3.4× its fastest"),
            "{why:?}"
        );
        // One slowed round of three leaves the median alone: steady.
        t.unix_nanos = m(11.59, 11.39, 43.92, 11.67, None);
        assert!(t.unsteady().is_empty(), "{:?}", t.unsteady());
        // Below a nanosecond, a quarter is a few cycles of loop: steady.
        t.recent = m(0.60, 0.44, 0.60, 0.35, None);
        assert!(t.unsteady().is_empty(), "{:?}", t.unsteady());
    }

    #[test]
    fn unsteady_figures_are_measured_again_a_bounded_number_of_times() {
        let unsteady = |t: &Timings| t.unsteady();
        // Steady at once: measured once.
        let (_, s) = until_steady(clean(), || panic!("measured again"), unsteady);
        assert_eq!((s.attempts, s.steady), (1, true));
        // Noisy, then steady: the steady figures are kept.
        let mut next = vec![clean()];
        let (t, s) = until_steady(noisy(), || next.pop().unwrap(), unsteady);
        assert_eq!((s.attempts, s.steady), (2, true));
        assert_eq!(t, clean());
        // Noisy every time: MAX_ATTEMPTS measurements, the last kept, and
        // the reasons recorded for the verdict.
        let mut taken = 0;
        let (t, s) = until_steady(
            noisy(),
            || {
                taken += 1;
                noisy()
            },
            unsteady,
        );
        assert_eq!(taken, MAX_ATTEMPTS - 1);
        assert_eq!((s.attempts, s.steady), (MAX_ATTEMPTS, false));
        assert_eq!(s.unsteady, noisy().unsteady());
        assert_eq!(t, noisy());
    }

    #[test]
    fn steady_after_measuring_again_says_so() {
        let mut f = figures(clean());
        f.attempts = 2;
        let v = verdict(&f);
        says(
            &v,
            "(Costs measured twice: the earlier ones were unsteady.)",
        );
        says(&v, "Use fastnow::Instant");
    }

    /// Steady rounds in which fastnow's precise clocks cost more than std's
    /// (the bare counter read trapped, say): no "faster" claim, and no
    /// recommendation of a slower clock without a reason the run showed.
    fn loses() -> Timings {
        let mut t = clean();
        t.instant = m(38.7, 37.9, 39.4, 40.1, Some(36.0));
        t.monotonic = m(50.2, 49.1, 51.0, 52.0, Some(47.5));
        t.unix_nanos = m(39.3, 38.8, 40.0, 41.0, Some(37.2));
        t
    }

    #[test]
    fn fastnow_slower_than_std_is_said_and_std_recommended() {
        let v = steady_verdict(loses());
        says(&v, "To time work within a thread, keep std::time::Instant: fastnow::Instant measured 1.3× slower than it here (38.7 ns against 29.4 ns a call)");
        says(&v, "For stamps from several threads, keep std::time::Instant: MonotonicInstant measured 1.7× slower than it here");
        assert!(
            v.contains(
                "For timestamps, keep SystemTime: unix_nanos() measured 1.3× slower than it here"
            ),
            "{v}"
        );
        assert!(!v.contains("Use fastnow::Instant"), "{v}");
        assert!(!v.contains("Use MonotonicInstant"), "{v}");
        assert!(!v.contains("Use unix_nanos"), "{v}");
        assert!(!v.contains("x faster"), "{v}");
        for (i, _) in v.match_indices("faster") {
            // Only recent() is faster here.
            assert!(v[..i].ends_with("49× "), "{v}");
        }
    }

    #[test]
    fn slower_monotonic_is_recommended_only_for_a_guarantee_std_was_shown_to_lack() {
        let mut f = figures(loses());
        f.strict.std_instant = Some(12);
        let v = verdict(&f);
        says(&v, "Use MonotonicInstant when stamps from several threads must never go backwards, though it is 1.7× slower than std::time::Instant here");
        says(
            &v,
            "std::time::Instant went backwards 12 times in the strict test",
        );
        // A test that could not fail shows nothing about std.
        f.strict.conclusive = false;
        let v = verdict(&f);
        assert!(!v.contains("Use MonotonicInstant"), "{v}");
        says(&v, "the strict test was too short to tell here");
    }

    #[test]
    fn monotonic_going_backwards_is_never_recommended() {
        let mut f = figures(clean());
        f.strict.monotonic = 3;
        let v = verdict(&f);
        says(
            &v,
            "MonotonicInstant went backwards 3 times across threads in the strict test",
        );
        assert!(!v.contains("Use MonotonicInstant"), "{v}");
    }

    #[test]
    fn within_noise_is_about_as_fast() {
        let mut t = clean();
        // 3 % dearer and 4 % cheaper than std: within ±5 %.
        t.instant = m(30.26, 29.9, 30.7, 31.0, Some(30.1));
        t.monotonic = m(28.2, 27.9, 28.9, 33.0, Some(29.0));
        t.unix_nanos = m(30.5, 30.1, 31.0, 31.5, Some(30.4));
        let f = figures(t);
        assert!(
            f.timings.unsteady().is_empty(),
            "{:?}",
            f.timings.unsteady()
        );
        let v = verdict(&f);
        says(&v, "To time work within a thread, fastnow::Instant is about as fast as std::time::Instant here (30.3 ns against 29.4 ns a call), so switching gains nothing");
        says(
            &v,
            "MonotonicInstant is about as fast as std::time::Instant here",
        );
        says(&v, "unix_nanos() is about as fast as SystemTime here");
        assert!(!v.contains("Use fastnow::Instant"), "{v}");
    }

    #[test]
    fn ratios_are_worded_never_as_a_fraction_faster() {
        assert_eq!(compare(10.0, 21.0).relation(), "2.1× faster than");
        assert_eq!(compare(17.0, 10.0).relation(), "1.7× slower than");
        assert_eq!(compare(10.0, 10.4).relation(), "about as fast as");
        assert_eq!(compare(10.4, 10.0).relation(), "about as fast as");
        // Just beyond the band: two decimals, not "1.0×".
        assert_eq!(compare(10.0, 10.6).relation(), "1.06× faster than");
        assert_eq!(compare(0.6, 30.0).relation(), "50× faster than");
    }

    proptest::proptest! {
        /// Any two costs: the factor is beyond the band and printed as at
        /// least "1.05×", "faster" is said only of the cheaper clock, and
        /// swapping the two swaps faster and slower.
        #[test]
        fn faster_is_said_only_of_the_cheaper(a in 0.1f64..1e4, b in 0.1f64..1e4) {
            match compare(a, b) {
                Ratio::Faster(k) => {
                    proptest::prop_assert!(a < b && k > 1.0 + SAME_BAND);
                    proptest::prop_assert_eq!(compare(b, a), Ratio::Slower(k));
                    proptest::prop_assert!(!times(k).starts_with("1.0×") && !times(k).starts_with("0."));
                }
                Ratio::Slower(k) => {
                    proptest::prop_assert!(a > b && k > 1.0 + SAME_BAND);
                    proptest::prop_assert_eq!(compare(b, a), Ratio::Faster(k));
                }
                Ratio::Same => {
                    proptest::prop_assert!(b <= a * (1.0 + SAME_BAND) && a <= b * (1.0 + SAME_BAND));
                    proptest::prop_assert_eq!(compare(b, a), Ratio::Same);
                }
            }
        }
    }

    #[test]
    fn fallback_compares_by_the_figures_too() {
        let mut t = clean();
        t.instant = m(30.0, 29.8, 30.4, 31.0, Some(29.9));
        t.monotonic = m(30.2, 29.9, 30.5, 33.0, Some(30.0));
        t.unix_nanos = m(29.9, 29.5, 30.3, 31.0, Some(30.2));
        let mut f = figures(t);
        f.fallback = Some("the kernel's clocksource is hpet, not the counter".into());
        let v = verdict(&f);
        assert!(
            v.starts_with("fastnow uses the OS clock on this machine (the kernel's clocksource is hpet, not the counter)."),
            "{v}"
        );
        says(
            &v,
            "fastnow::Instant is about as fast as std::time::Instant",
        );
        says(&v, "Set FASTNOW_CLOCK=counter only if");
    }
}
