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
    /// Per thread while every core calls it (NaN: not measured).
    pub all_cores_ns: f64,
    /// The latency histogram's median (None: its latency was not measured).
    pub p50_ns: Option<f64>,
}

/// `MonotonicInstant`'s two costs: the strategy its first reading chose,
/// measured on one thread before anything contended, and the one it
/// settled on after every core had called it (the cost table's, in
/// [`Timings::monotonic`]).
#[derive(Clone, Debug, PartialEq)]
pub struct MonotonicFigures {
    /// `HighWater` or `Ordered`.
    pub start_mode: String,
    pub start_ns: f64,
    /// `std::time::Instant::now()` in the same rounds.
    pub start_std_ns: f64,
    pub settled_mode: String,
}

/// The latency percentiles (ns per call) the verdict compares tails by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tail {
    pub p50_ns: f64,
    pub p99_ns: f64,
}

/// The p99 tails of single calls, each fastnow clock beside the std clock
/// it would replace, and the bare counter read's, which every counter clock
/// stands on.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Tails {
    pub instant: Option<Tail>,
    pub monotonic: Option<Tail>,
    pub unix_nanos: Option<Tail>,
    pub std_instant: Option<Tail>,
    pub system_time: Option<Tail>,
    /// The bare counter read (its name, its tail).
    pub control: Option<(String, Tail)>,
}

/// One clock's slowest reads, readers doing fastnow's updates: calls of at
/// least 1, 5 and 20 µs per second of calling it, fastnow's own reads not
/// counted.
pub type Over = [f64; 3];

/// The slowest reads, readers doing fastnow's updates (no upkeep thread).
#[derive(Clone, Debug, PartialEq)]
pub struct SlowFigures {
    /// Seconds the measurement ran (both ways).
    pub seconds: f64,
    pub instant: Over,
    pub std_instant: Over,
    pub unix_nanos: Over,
    pub system_time: Over,
    /// A call of nothing: the timing, interrupts and the hypervisor alone.
    pub nothing: Over,
    /// The calls during which fastnow did its own work, every fastnow clock
    /// together: with readers doing the updates, how many and per second of
    /// that part of the run; the slowest of them, ns; the most CPU one of
    /// them used, ns (the rest of a read's time it waited on the machine),
    /// and what that one did; and how many the readers had while the upkeep
    /// thread ran.
    pub own_reads: u64,
    pub own_per_s: f64,
    pub own_max_ns: Option<u64>,
    pub own_max_cpu_ns: Option<u64>,
    pub own_max_work: Option<String>,
    pub own_reads_with_upkeep: u64,
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
    /// Checks each clock got.
    pub checks: u64,
    pub instant: u64,
    pub monotonic: u64,
    /// std::time::Instant's violations (None: not in the test).
    pub std_instant: Option<u64>,
}

/// Everything the verdict is formed from.
#[derive(Clone, Debug, PartialEq)]
pub struct Figures {
    pub timings: Timings,
    /// `MonotonicInstant`'s starting strategy (None: not measured).
    pub monotonic: Option<MonotonicFigures>,
    pub tails: Tails,
    pub slow: Option<SlowFigures>,
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
    ///   compared clocks is cheaper (each beyond [`SAME_BAND`]), or give
    ///   their ratio more than [`RATIOS_APART_LIMIT`] apart. The two time
    ///   the same calls differently (a loop of calls; one call between
    ///   fences), so their values differ by method, but not which clock
    ///   costs less, nor by how much: when they do, other work skewed one
    ///   of them.
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
            // The same ratio by the two methods, as a factor of at least 1.
            let (by_rounds, by_p50s) = (x.median_ns / r.median_ns, px / pr);
            let apart = (by_rounds / by_p50s).max(by_p50s / by_rounds);
            if opposite || apart > RATIOS_APART_LIMIT {
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

/// The cost rounds and the latency p50s give the ratio of two compared
/// clocks each; more than this factor apart, other work skewed one of
/// them (on idle machines they agree within about a fifth: the methods
/// differ, a loop of calls against single calls between fences, the clocks
/// do not).
pub const RATIOS_APART_LIMIT: f64 = 1.5;

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
    let strict_note = strict_note(&f.strict);
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
            monotonic_part(t, f.monotonic.as_ref(), &f.strict, &strict_note),
            unix_nanos_part(t, f.wall_p99_ns),
            recent_part(t, f.coarse_resolution_ms, f.coarse_age_p99_ms),
            tails_part(&f.tails),
            slow_part(f.slow.as_ref()),
        ] {
            if !part.is_empty() {
                out.push('\n');
                out.push_str(&part);
            }
        }
    }
    if f.fallback.is_some() {
        out.push_str(
            " Set FASTNOW_CLOCK=counter only if you know this machine's counter is synchronised across CPUs.",
        );
    }
    out
}

/// What the strict test showed of `MonotonicInstant` against `Instant`:
/// evidence for preferring it only where `Instant` went backwards here.
fn strict_note(strict: &Strict) -> String {
    if !strict.conclusive {
        return "the strict test was too short to tell here".to_string();
    }
    let std = strict.std_instant.map_or(String::new(), |n| {
        format!(" and {n} for std::time::Instant")
    });
    if caught_instant(strict) {
        format!(
            "{} violations in the strict test, against {} for Instant{std}",
            strict.monotonic, strict.instant
        )
    } else {
        format!(
            "{} violations in {} strict checks, and {} for Instant{std}: this run did not catch Instant going \
             back, so it shows no reason to prefer MonotonicInstant to Instant; the guarantee is the reason",
            strict.monotonic, strict.checks, strict.instant
        )
    }
}

/// Whether the strict test showed `Instant` lacking the guarantee
/// `MonotonicInstant` gives: only then does the run itself argue for it.
fn caught_instant(strict: &Strict) -> bool {
    strict.conclusive && strict.instant > 0
}

/// ", and with every core calling it 45.7 ns against 23.6 ns (1.9× slower
/// than std's)" when that comparison goes the other way from the one-thread
/// one, or "" (also where the figures were not measured).
fn all_cores_clause(x: &Measured, r: &Measured, one_thread: Ratio, std_name: &str) -> String {
    if !(x.all_cores_ns > 0.0 && r.all_cores_ns > 0.0) {
        return String::new();
    }
    let c = compare(x.all_cores_ns, r.all_cores_ns);
    let differs = !matches!(
        (one_thread, c),
        (Ratio::Faster(_), Ratio::Faster(_))
            | (Ratio::Same, Ratio::Same)
            | (Ratio::Slower(_), Ratio::Slower(_))
    );
    if !differs {
        return String::new();
    }
    format!(
        "; with every core calling it, though, {} against {} ({} {std_name}'s)",
        ns(x.all_cores_ns),
        ns(r.all_cores_ns),
        c.relation()
    )
}

fn instant_part(t: &Timings) -> String {
    let (x, r) = (t.instant.median_ns, t.std_instant.median_ns);
    let c = compare(x, r);
    let figures = format!(
        "{} against {} a call{}",
        ns(x),
        ns(r),
        all_cores_clause(&t.instant, &t.std_instant, c, "std::time::Instant")
    );
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

/// A `MonotonicInstant` strategy in words.
fn strategy(mode: &str) -> &'static str {
    match mode {
        "HighWater" => "a shared high-water mark (a compare-and-swap per reading)",
        "Ordered" => "ordered counter reads",
        _ => "no strategy yet",
    }
}

fn monotonic_part(
    t: &Timings,
    start: Option<&MonotonicFigures>,
    strict: &Strict,
    strict_note: &str,
) -> String {
    let (m, r) = (&t.monotonic, &t.std_instant);
    let c = compare(m.median_ns, r.median_ns);
    let all_cores = (m.all_cores_ns > 0.0 && r.all_cores_ns > 0.0)
        .then(|| compare(m.all_cores_ns, r.all_cores_ns));
    // The strategy quoted is the one a multi-threaded program ends up
    // with; where the first reading chose another, its cost is said too,
    // with when it applies.
    let (how, before) = match start {
        Some(s) if s.start_mode != s.settled_mode => (
            format!(
                "with {}, the strategy it keeps once several threads read it: ",
                strategy(&s.settled_mode)
            ),
            format!(
                "; before anything contends it uses {}, {} std::time::Instant ({} against {})",
                strategy(&s.start_mode),
                compare(s.start_ns, s.start_std_ns).relation(),
                ns(s.start_ns),
                ns(s.start_std_ns)
            ),
        ),
        // Still on the mark after every core called it: the threads took
        // turns (one CPU, or a busy machine), and a program whose threads
        // contend would leave it.
        Some(s) if s.settled_mode == "HighWater" => (
            format!(
                "with {}, which the report's all-cores runs did not make it leave (their threads took turns); a \
                 program whose threads contend for it moves to ordered reads: ",
                strategy(&s.settled_mode)
            ),
            String::new(),
        ),
        Some(s) => (
            format!("with {}: ", strategy(&s.settled_mode)),
            String::new(),
        ),
        None => (String::new(), String::new()),
    };
    let every_core = all_cores.map_or(String::new(), |ac| {
        format!(
            "; {} against {} with every core calling, {} std's",
            ns(m.all_cores_ns),
            ns(r.all_cores_ns),
            ac.relation()
        )
    });
    let details = format!(
        " ({how}{} against {} a call on one thread{every_core}){before}; {strict_note}",
        ns(m.median_ns),
        ns(r.median_ns)
    );
    if strict.conclusive && strict.monotonic > 0 {
        return format!(
            "MonotonicInstant went backwards {} times across threads in the strict test, which it must never do: \
             do not rely on it here, and report it with this output ({} std::time::Instant{details}).",
            strict.monotonic,
            c.relation()
        );
    }
    // The guarantee std's clock was shown to lack here, if it was.
    let std_went_back = match strict.std_instant {
        Some(n) if strict.conclusive && n > 0 => Some(n),
        _ => None,
    };
    match (c, all_cores, std_went_back) {
        (Ratio::Faster(_), Some(ac @ Ratio::Slower(_)), None) => format!(
            "For stamps from several threads that must never go backwards, MonotonicInstant is {} \
             std::time::Instant on one thread but {} it with every core calling: use it where a few threads stamp \
             at a time, and keep std::time::Instant where every core does{details}.",
            c.relation(),
            ac.relation()
        ),
        // A recommendation rests on what the run showed: with no violation
        // of Instant's either, it is a statement of cost and guarantee.
        (Ratio::Faster(_), _, _) if strict.conclusive && !caught_instant(strict) => format!(
            "For stamps from several threads that must never go backwards, MonotonicInstant is {} \
             std::time::Instant{details}.",
            c.relation()
        ),
        (Ratio::Faster(_), _, _) => format!(
            "Use MonotonicInstant when stamps from several threads must never go backwards: {} \
             std::time::Instant{details}.",
            c.relation()
        ),
        (_, _, Some(n)) => format!(
            "Use MonotonicInstant when stamps from several threads must never go backwards, though it is {} \
             std::time::Instant here{details}: std::time::Instant went backwards {n} times in the strict test.",
            c.relation()
        ),
        (Ratio::Same, _, None) => format!(
            "For stamps from several threads that must never go backwards, MonotonicInstant is {} \
             std::time::Instant here, so switching gains nothing{details}.",
            c.relation()
        ),
        (Ratio::Slower(_), _, None) => format!(
            "For stamps from several threads, keep std::time::Instant: MonotonicInstant measured {} it \
             here{details}.",
            c.relation()
        ),
    }
}

fn unix_nanos_part(t: &Timings, wall_p99_ns: f64) -> String {
    let (x, r) = (t.unix_nanos.median_ns, t.system_time.median_ns);
    let c = compare(x, r);
    let figures = format!(
        "{} against {} a call, within {wall_p99_ns:.0} ns of CLOCK_REALTIME at p99{}",
        ns(x),
        ns(r),
        all_cores_clause(&t.unix_nanos, &t.system_time, c, "SystemTime")
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

/// A tail wider than the bare counter read's by no more than this many
/// nanoseconds, or this fraction, is the counter read's own: timing single
/// calls of a few nanoseconds moves a p99 by about a nanosecond.
pub const TAIL_SLACK_NS: f64 = 1.0;
pub const TAIL_SLACK: f64 = 0.1;

/// Each fastnow clock whose p99 latency is worse than its std clock's,
/// said, with why: the bare counter read's tail where that is as wide
/// (the machine's, which every counter clock pays), fastnow's otherwise.
fn tails_part(tails: &Tails) -> String {
    let pairs = [
        (
            "fastnow::Instant",
            tails.instant,
            "std::time::Instant",
            tails.std_instant,
        ),
        (
            "MonotonicInstant",
            tails.monotonic,
            "std::time::Instant",
            tails.std_instant,
        ),
        (
            "unix_nanos()",
            tails.unix_nanos,
            "SystemTime",
            tails.system_time,
        ),
    ];
    let mut worse = Vec::new();
    let mut compared = 0;
    for (name, x, std_name, r) in pairs {
        let (Some(x), Some(r)) = (x, r) else {
            continue;
        };
        compared += 1;
        if !(x.p99_ns > r.p99_ns * (1.0 + SAME_BAND) && x.p99_ns - r.p99_ns > TAIL_SLACK_NS) {
            continue;
        }
        let spread = x.p99_ns - x.p50_ns;
        let why = match &tails.control {
            Some((control, k)) => {
                let control_spread = k.p99_ns - k.p50_ns;
                if spread <= control_spread + TAIL_SLACK_NS.max(control_spread * TAIL_SLACK) {
                    format!(
                        "no wider above its median than the bare {control}'s (p99 − p50: {} against {}): the \
                         counter read's own tail on this machine, not work of fastnow's",
                        ns(spread),
                        ns(control_spread)
                    )
                } else {
                    format!(
                        "wider above its median than the bare {control}'s (p99 − p50: {} against {}), measured in \
                         the same turns: about {} of it is fastnow's own path's, not the counter read's",
                        ns(spread),
                        ns(control_spread),
                        ns(spread - control_spread)
                    )
                }
            }
            None => "with no bare counter read here to tell the machine's share from fastnow's"
                .to_string(),
        };
        worse.push(format!(
            "{name}'s is worse than {std_name}'s ({} against {}), {why}",
            ns(x.p99_ns),
            ns(r.p99_ns)
        ));
    }
    match (compared, worse.is_empty()) {
        (0, _) => String::new(),
        (_, true) => {
            "No fastnow clock's p99 latency of a single call is worse than its std clock's."
                .to_string()
        }
        (_, false) => format!("The p99 latency of a single call: {}.", worse.join("; ")),
    }
}

/// Calls per second: "0", "0.3", "12".
fn rate(x: f64) -> String {
    if x == 0.0 {
        "0".to_string()
    } else if x < 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.0}")
    }
}

fn micros(ns: u64) -> String {
    format!("{:.1} µs", ns as f64 / 1e3)
}

/// A slow-read rate is worse than another by more than this factor and
/// [`SLOW_SLACK_PER_S`] more calls a second: a rate of stalls counted over
/// seconds moves by half with the host's mood from one run to the next.
pub const SLOW_RATIO: f64 = 1.5;

/// fastnow's own work on one read above this many ns of CPU is said with
/// its remedy (the upkeep thread): about a microsecond is what a read in a
/// hot loop can pay unnoticed.
pub const OWN_WORK_NOTE_NS: u64 = 1_000;
pub const SLOW_SLACK_PER_S: f64 = 1.0;

/// The slowest reads: whether fastnow's clocks stall more often than std's
/// (fastnow's own reads apart), and what fastnow's own work cost the reads
/// that did it.
fn slow_part(slow: Option<&SlowFigures>) -> String {
    let Some(s) = slow else {
        return String::new();
    };
    let worse = |x: &Over, r: &Over| x[0] > r[0] * SLOW_RATIO + SLOW_SLACK_PER_S;
    let mut out = format!(
        "Reads of 1 µs or more, per second of calling, with readers doing fastnow's updates ({:.0} s of calls in \
         all, fastnow's own reads apart): fastnow::Instant {}, std::time::Instant {}, unix_nanos() {}, \
         SystemTime {}, a call of nothing {}",
        s.seconds,
        rate(s.instant[0]),
        rate(s.std_instant[0]),
        rate(s.unix_nanos[0]),
        rate(s.system_time[0]),
        rate(s.nothing[0]),
    );
    let mut worse_than_std = Vec::new();
    if worse(&s.instant, &s.std_instant) {
        worse_than_std.push("fastnow::Instant's than std::time::Instant's");
    }
    if worse(&s.unix_nanos, &s.system_time) {
        worse_than_std.push("unix_nanos()'s than SystemTime's");
    }
    if worse_than_std.is_empty() {
        out.push_str(": no fastnow clock stalls more often than its std clock here");
    } else {
        let machine = !worse(&s.instant, &s.nothing) && !worse(&s.unix_nanos, &s.nothing);
        out.push_str(&format!(
            ": more often {}{}",
            worse_than_std.join(", and "),
            if machine {
                ", though no more often than a call of nothing, so the machine's (the turns fall differently)"
            } else {
                ", beyond what a call of nothing shows: not the machine's alone"
            }
        ));
    }
    match (s.own_max_cpu_ns, s.own_max_ns, &s.own_max_work) {
        (Some(cpu), Some(slowest), Some(work)) => {
            out.push_str(&format!(
                ". fastnow's own work fell on {} ({} a second); the most it cost one was {} of the thread's CPU \
                 ({work}); the slowest of them took {}{}{}",
                if s.own_reads == 1 {
                    "1 read".to_string()
                } else {
                    format!("{} reads", s.own_reads)
                },
                rate(s.own_per_s),
                micros(cpu),
                micros(slowest),
                if slowest > cpu + 1_000 {
                    " in all, the rest waiting on the machine"
                } else {
                    ""
                },
                if cpu > OWN_WORK_NOTE_NS {
                    format!(
                        "; a read doing more than a microsecond of fastnow's work is one a hot loop can notice: a \
                         program that cannot have one runs the upkeep thread (start_upkeep), which did that work here \
                         while readers {}",
                        if s.own_reads_with_upkeep == 0 {
                            "did none".to_string()
                        } else {
                            format!("still did {}", s.own_reads_with_upkeep)
                        }
                    )
                } else {
                    String::new()
                }
            ));
        }
        _ => out.push_str(". No read did fastnow's own work"),
    }
    out.push('.');
    out
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
            monotonic: None,
            tails: Tails::default(),
            slow: None,
            attempts: 1,
            counter: Some("TSC (RDTSC)".into()),
            freq_hz: 2_445_000_000,
            fallback: None,
            strict: Strict {
                conclusive: true,
                checks: 1_000_000,
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
    /// fastnow well ahead of std. (That report timed MonotonicInstant's
    /// latency after its switch to ordered reads, 24.41 ns at p50, and its
    /// cost before, 11.8 ns; the p50 here is of the cost's strategy, as the
    /// report now measures both.)
    fn clean() -> Timings {
        Timings {
            instant: m(11.59, 11.39, 11.79, 12.1, Some(10.02)),
            monotonic: m(11.80, 11.41, 12.26, 26.16, Some(10.4)),
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
            // Only recent() is faster here, and unix_nanos() with every
            // core calling (41.0 against SystemTime's 52.8 ns), said so.
            assert!(
                v[..i].ends_with("49× ")
                    || v[..i].ends_with(
                        "with every core calling it, though, 41.0 ns against 52.8 ns (1.3× "
                    ),
                "{v}"
            );
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

    /// The run of the issue: MonotonicInstant measured 10.3 ns with the
    /// high-water mark it starts with, and 20.0 ns with the ordered reads it
    /// keeps once the report's all-cores runs contended for the mark; std
    /// 24.4 ns. The verdict quotes the strategy a multi-threaded program
    /// ends up with, and the other with when it applies.
    fn issue_run() -> Figures {
        let mut t = clean();
        t.instant = m(10.2, 10.0, 10.5, 10.9, Some(10.0));
        t.monotonic = m(20.0, 19.7, 20.4, 21.0, Some(20.0));
        t.unix_nanos = m(10.6, 10.4, 10.9, 11.3, Some(10.3));
        t.std_instant = m(24.4, 24.1, 24.9, 25.3, Some(24.1));
        t.system_time = m(24.9, 24.5, 25.3, 26.1, Some(24.6));
        let mut f = figures(t);
        f.monotonic = Some(MonotonicFigures {
            start_mode: "HighWater".into(),
            start_ns: 10.3,
            start_std_ns: 24.1,
            settled_mode: "Ordered".into(),
        });
        f
    }

    #[test]
    fn monotonic_is_quoted_for_the_strategy_it_settles_on_and_the_start_when_it_applies() {
        let v = verdict(&issue_run());
        says(&v, "Use MonotonicInstant when stamps from several threads must never go backwards: 1.2× faster than std::time::Instant (with ordered counter reads, the strategy it keeps once several threads read it: 20.0 ns against 24.4 ns a call on one thread; 21.0 ns against 25.3 ns with every core calling, 1.2× faster than std's)");
        says(&v, "; before anything contends it uses a shared high-water mark (a compare-and-swap per reading), 2.3× faster than std::time::Instant (10.3 ns against 24.1 ns)");
        // The start's figure is never the headline.
        assert!(!v.contains("must never go backwards: 2.3×"), "{v}");

        // An Intel core starts and stays on ordered reads: one figure.
        let mut f = issue_run();
        f.monotonic = Some(MonotonicFigures {
            start_mode: "Ordered".into(),
            start_ns: 19.9,
            start_std_ns: 24.2,
            settled_mode: "Ordered".into(),
        });
        let v = verdict(&f);
        says(&v, "1.2× faster than std::time::Instant (with ordered counter reads: 20.0 ns against 24.4 ns a call on one thread;");
        assert!(!v.contains("before anything contends"), "{v}");
        assert!(!v.contains("the strategy it keeps"), "{v}");

        // The all-cores runs' threads took turns (a busy machine): still on
        // the mark, said so, with what contention would do.
        f.monotonic = Some(MonotonicFigures {
            start_mode: "HighWater".into(),
            start_ns: 10.3,
            start_std_ns: 24.1,
            settled_mode: "HighWater".into(),
        });
        f.timings.monotonic = m(10.4, 10.2, 10.6, 11.0, Some(10.1));
        let v = verdict(&f);
        says(&v, "2.3× faster than std::time::Instant (with a shared high-water mark (a compare-and-swap per reading), which the report's all-cores runs did not make it leave (their threads took turns); a program whose threads contend for it moves to ordered reads: 10.4 ns against 24.4 ns a call on one thread;");
    }

    /// Two runs of the issue: MonotonicInstant's all-cores figure (45.7 and
    /// 51.0 ns) above std's (23.6 and 43.4 ns) while its one-thread figure
    /// was below: no plain recommendation, the two compared.
    #[test]
    fn all_cores_figures_are_compared_with_std_all_cores_figures() {
        for (ours, std) in [(45.7, 23.6), (51.0, 43.4)] {
            let mut f = issue_run();
            f.timings.monotonic.all_cores_ns = ours;
            f.timings.std_instant.all_cores_ns = std;
            f.timings.instant.all_cores_ns = ours;
            let v = verdict(&f);
            let k = times(ours / std);
            says(&v, &format!("For stamps from several threads that must never go backwards, MonotonicInstant is 1.2× faster than std::time::Instant on one thread but {k} slower than it with every core calling: use it where a few threads stamp at a time, and keep std::time::Instant where every core does"));
            says(
                &v,
                &format!(
                    "{} against {} with every core calling, {k} slower than std's",
                    ns(ours),
                    ns(std)
                ),
            );
            assert!(!v.contains("Use MonotonicInstant"), "{v}");
            // fastnow::Instant too: the one-thread win is qualified.
            says(&v, &format!("Use fastnow::Instant to time work within a thread: 2.4× faster than std::time::Instant (10.2 ns against 24.4 ns a call; with every core calling it, though, {} against {} ({k} slower than std::time::Instant's))", ns(ours), ns(std)));
        }
        // Every core and one thread agree: nothing added for Instant.
        let v = verdict(&issue_run());
        assert!(!v.contains("with every core calling it, though"), "{v}");
    }

    /// LATENCY of the issue's thorough runs: fastnow::Instant's p99 31.9
    /// ns against std's 24.4. Said, with why: the bare counter read's own
    /// tail when it is as wide (the machine's), fastnow's otherwise.
    #[test]
    fn a_worse_p99_than_std_is_said_with_why() {
        let tail = |p50_ns, p99_ns| Some(Tail { p50_ns, p99_ns });
        let mut f = issue_run();
        f.tails = Tails {
            instant: tail(10.0, 31.9),
            monotonic: tail(20.0, 24.0),
            unix_nanos: tail(10.3, 12.1),
            std_instant: tail(24.1, 24.4),
            system_time: tail(24.6, 26.0),
            control: Some((
                "RDTSC".into(),
                Tail {
                    p50_ns: 9.8,
                    p99_ns: 30.1,
                },
            )),
        };
        let v = verdict(&f);
        says(&v, "The p99 latency of a single call: fastnow::Instant's is worse than std::time::Instant's (31.9 ns against 24.4 ns), no wider above its median than the bare RDTSC's (p99 − p50: 21.9 ns against 20.3 ns): the counter read's own tail on this machine, not work of fastnow's.");
        // The others are not worse: not named.
        assert!(!v.contains("MonotonicInstant's is worse"), "{v}");
        assert!(!v.contains("unix_nanos()'s is worse"), "{v}");

        // The bare counter's tail narrow: the excess is fastnow's.
        f.tails.control = Some((
            "RDTSC".into(),
            Tail {
                p50_ns: 9.8,
                p99_ns: 12.0,
            },
        ));
        let v = verdict(&f);
        says(&v, "wider above its median than the bare RDTSC's (p99 − p50: 21.9 ns against 2.2 ns), measured in the same turns: about 19.7 ns of it is fastnow's own path's, not the counter read's");

        // No control on this target: said, not guessed.
        f.tails.control = None;
        says(
            &verdict(&f),
            "with no bare counter read here to tell the machine's share from fastnow's",
        );

        // Tails no worse: one sentence says so.
        f.tails.instant = tail(10.0, 12.0);
        says(
            &verdict(&f),
            "No fastnow clock's p99 latency of a single call is worse than its std clock's.",
        );
    }

    fn slow() -> SlowFigures {
        SlowFigures {
            seconds: 30.0,
            instant: [2.1, 0.4, 0.1],
            std_instant: [1.9, 0.5, 0.1],
            unix_nanos: [2.0, 0.4, 0.1],
            system_time: [2.2, 0.5, 0.2],
            nothing: [1.8, 0.4, 0.1],
            own_reads: 29,
            own_per_s: 1.93,
            own_max_ns: Some(47_300),
            own_max_cpu_ns: Some(41_800),
            own_max_work: Some("a clocksource re-check".into()),
            own_reads_with_upkeep: 0,
        }
    }

    /// The slowest reads: fastnow's own work (a clocksource re-check of 47
    /// µs here) said with its cost and the remedy, and stalls compared with
    /// std's, the machine's share told by a call of nothing.
    #[test]
    fn the_slowest_reads_say_whether_a_tail_is_worse_than_std_and_why() {
        let mut f = issue_run();
        f.slow = Some(slow());
        let v = verdict(&f);
        says(&v, "Reads of 1 µs or more, per second of calling, with readers doing fastnow's updates (30 s of calls in all, fastnow's own reads apart): fastnow::Instant 2.1, std::time::Instant 1.9, unix_nanos() 2.0, SystemTime 2.2, a call of nothing 1.8: no fastnow clock stalls more often than its std clock here.");
        says(&v, "fastnow's own work fell on 29 reads (1.9 a second); the most it cost one was 41.8 µs of the thread's CPU (a clocksource re-check); the slowest of them took 47.3 µs in all, the rest waiting on the machine; a read doing more than a microsecond of fastnow's work is one a hot loop can notice: a program that cannot have one runs the upkeep thread (start_upkeep), which did that work here while readers did none.");

        // Fastnow's stalls more frequent than std's and than a call of
        // nothing: not the machine's alone.
        let mut s = slow();
        s.instant = [9.0, 3.0, 1.0];
        f.slow = Some(s.clone());
        says(&verdict(&f), "more often fastnow::Instant's than std::time::Instant's, beyond what a call of nothing shows: not the machine's alone");
        // ... but no more often than a call of nothing: the machine's.
        s.nothing = [9.5, 3.0, 1.0];
        f.slow = Some(s.clone());
        says(
            &verdict(&f),
            "no more often than a call of nothing, so the machine's",
        );

        // Its own work cheaper than std's slowest read: no remedy urged.
        // A stall of the machine's on the read that did a sample: its CPU,
        // under a microsecond, is what is held against fastnow.
        let mut s = slow();
        s.own_max_ns = Some(5_490_100);
        s.own_max_cpu_ns = Some(800);
        s.own_max_work = Some("a rate measurement".into());
        f.slow = Some(s);
        let v = verdict(&f);
        says(&v, "the most it cost one was 0.8 µs of the thread's CPU (a rate measurement); the slowest of them took 5490.1 µs in all, the rest waiting on the machine.");
        assert!(!v.contains("start_upkeep"), "{v}");
    }

    /// The strict test shows a reason to prefer MonotonicInstant to
    /// Instant only where Instant went backwards in it: with 0 against 0,
    /// no recommendation cites it.
    #[test]
    fn no_recommendation_rests_on_zero_violations_against_zero() {
        let mut f = issue_run();
        f.strict.instant = 0;
        let v = verdict(&f);
        assert!(!v.contains("Use MonotonicInstant"), "{v}");
        assert!(!v.contains("against 0 for Instant"), "{v}");
        says(&v, "For stamps from several threads that must never go backwards, MonotonicInstant is 1.2× faster than std::time::Instant (with ordered counter reads");
        says(&v, "0 violations in 1000000 strict checks, and 0 for Instant and 0 for std::time::Instant: this run did not catch Instant going back, so it shows no reason to prefer MonotonicInstant to Instant; the guarantee is the reason");
    }

    /// A run on a loaded machine: every round of std's Instant::now slowed
    /// alike (72.9–74.4 ns, steady by its own spread), its latency p50 30.1
    /// ns. The rounds alone would say "5.6× faster"; against the p50s'
    /// 2.7× they are unsteady, and measured again.
    #[test]
    fn ratios_the_two_methods_give_far_apart_are_unsteady() {
        let mut t = clean();
        t.instant = m(13.23, 12.75, 13.4, 13.26, Some(11.3));
        t.std_instant = m(74.36, 72.87, 74.4, 30.57, Some(30.1));
        let why = t.unsteady();
        assert!(
            why.iter().any(|w| w.contains("the rounds put fastnow::Instant 5.6× faster than std::time::Instant (13.2 ns against 74.4 ns) and the latency p50s 2.7× faster than it (11.3 ns against 30.1 ns)")),
            "{why:?}"
        );
        // Within the limit: steady.
        t.std_instant = m(33.5, 33.1, 34.0, 34.2, Some(30.1));
        assert!(t.unsteady().is_empty(), "{:?}", t.unsteady());
    }
}
