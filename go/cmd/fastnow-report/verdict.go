package main

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The verdict: which fastnow clock to use on this machine, for which job,
// formed from the measured figures alone (figures in, a sentence out), by
// the rules of the Rust report (crates/fastnow-cli/REPORT.md, "Verdict"):
//
//   - each comparison is worded by its measured ratio: "2.1× faster than",
//     "1.7× slower than", and "about as fast as" within sameBand;
//   - a clock measured slower than package time's is not recommended;
//   - unsteady figures (rounds that disagree) are measured again, up to
//     maxAttempts times, and if they stay unsteady the verdict says the
//     machine was too busy to conclude and gives the figures with their
//     spread instead of a recommendation.
//
// The Go report times no single calls, so the Rust report's second check
// (costs against latency percentiles) has nothing to compare here.

const (
	// sameBand: two costs within this fraction of each other either way are
	// "about as fast": an idle machine's rounds of one clock differ by a
	// few percent, so a smaller difference is not a finding.
	sameBand = 0.05
	// roundsRatioLimit: a clock's rounds disagree when its median round
	// took more than this times its fastest. Other work only ever adds
	// time to a round, so the fastest round is the closest to the clock's
	// own cost; the median is reported because a minority of slowed rounds
	// does not move it, and a median this far above the fastest means most
	// rounds were slowed.
	roundsRatioLimit = 1.25
	// roundsNsLimit: ... and by more than this many nanoseconds: below a
	// nanosecond a call is a few cycles, and the loop around it moves such
	// a figure by a quarter with no other work at all.
	roundsNsLimit = 1.0
	// maxAttempts bounds the measurements taken before declining to
	// conclude: a burst of other work often passes within seconds.
	maxAttempts = 3
	// remeasurePause lets a short burst of other work pass before the
	// costs are measured again.
	remeasurePause = 500 * time.Millisecond
)

// The clocks the verdict compares, as the cost table names them.
const (
	nameElapsed   = "fastnow start.Elapsed()"
	nameMonotonic = "fastnow.MonotonicNanotime"
	nameUnixNano  = "fastnow.UnixNano"
	nameRecent    = "fastnow.RecentUnixNano"
	nameSince     = "time.Since(start)"
	nameNow       = "time.Now().UnixNano()"
)

// Steadiness says whether the costs behind the verdict were steady enough
// to conclude from, and how many times they were measured to get there.
type Steadiness struct {
	Attempts int      `json:"attempts"` // 1..maxAttempts
	Steady   bool     `json:"steady"`   // false: the verdict says the machine was too busy
	Unsteady []string `json:"unsteady"` // what was unsteady in the last measurement
}

// timings are the costs the verdict compares, each fastnow clock against
// the package time call it would replace.
type timings struct {
	Elapsed, Monotonic, UnixNano, Recent, Since, Now Cost
}

// timingsOf picks the compared clocks from the cost table, or names one it
// lacks.
func timingsOf(costs []Cost) (timings, error) {
	get := func(name string) (Cost, error) {
		for _, c := range costs {
			if c.Name == name {
				return c, nil
			}
		}
		return Cost{}, fmt.Errorf("the report has no cost for %s", name)
	}
	var t timings
	for _, f := range []struct {
		name string
		to   *Cost
	}{
		{nameElapsed, &t.Elapsed}, {nameMonotonic, &t.Monotonic}, {nameUnixNano, &t.UnixNano},
		{nameRecent, &t.Recent}, {nameSince, &t.Since}, {nameNow, &t.Now},
	} {
		c, err := get(f.name)
		if err != nil {
			return timings{}, err
		}
		*f.to = c
	}
	return t, nil
}

func (t timings) named() []struct {
	name string
	c    Cost
} {
	return []struct {
		name string
		c    Cost
	}{
		{"Now().Elapsed()", t.Elapsed},
		{"time.Since", t.Since},
		{"MonotonicNanotime", t.Monotonic},
		{"UnixNano", t.UnixNano},
		{"time.Now().UnixNano()", t.Now},
		{"RecentUnixNano", t.Recent},
	}
}

// unsteady says why these figures are too unsteady to conclude from
// (nothing: steady): a compared clock's median round more than
// roundsRatioLimit times, and roundsNsLimit above, its fastest.
func (t timings) unsteady() []string {
	var why []string
	for _, n := range t.named() {
		c := n.c
		switch {
		case !(c.MinNs > 0 && c.MinNs <= c.MedianNs) || math.IsInf(c.MedianNs, 1):
			why = append(why, fmt.Sprintf("%s's rounds are not a measurement (%s)", n.name, spread(c)))
		case c.MedianNs > c.MinNs*roundsRatioLimit && c.MedianNs-c.MinNs > roundsNsLimit:
			why = append(why, fmt.Sprintf("%s's rounds disagree, its median round %s its fastest (%s against %s)",
				n.name, times(c.MedianNs/c.MinNs), ns(c.MedianNs), ns(c.MinNs)))
		}
	}
	return why
}

// untilSteady starts from the figures first and, while unsteady finds
// something in them, takes them again, up to maxAttempts measurements in
// all. It returns the last figures taken and how steady they were.
func untilSteady[T any](first T, again func() T, unsteady func(T) []string) (T, Steadiness) {
	figures, attempts := first, 1
	why := unsteady(figures)
	for len(why) > 0 && attempts < maxAttempts {
		figures = again()
		attempts++
		why = unsteady(figures)
	}
	if why == nil {
		why = []string{}
	}
	return figures, Steadiness{Attempts: attempts, Steady: len(why) == 0, Unsteady: why}
}

// strictFigures is what the strict cross-goroutine test showed.
type strictFigures struct {
	Conclusive bool // the control failed, so the test can fail here
	Checks     int  // checks each clock got
	Nanotime   int
	Monotonic  int
}

// monotonicFigures is MonotonicNanotime's starting strategy, measured on
// one goroutine before anything contended, beside the one it settled on
// (the cost table's).
type monotonicFigures struct {
	StartMode, SettledMode string // "HighWater" or "Ordered"
	StartNs, StartSinceNs  float64
}

// figures is everything the verdict is formed from.
type figures struct {
	Timings   timings
	Monotonic *monotonicFigures // nil: not measured
	Attempts  int
	Counter   string
	FreqHz    uint64
	Fallback  string // why fastnow reads the OS clock here ("" when it reads the counter)
	Strict    strictFigures
	// The wall tier's p99 error and the coarse tier's p99 age.
	WallP99Ns   float64
	StaleP99Ms  float64
	UpkeepEvery time.Duration
}

// figuresOf reads a report's figures (its Verdict field is not read).
func figuresOf(r Report) (figures, error) {
	t, err := timingsOf(r.Costs)
	if err != nil {
		return figures{}, err
	}
	attempts := 1
	if r.Steadiness != nil {
		attempts = r.Steadiness.Attempts
	}
	violations := func(name string) int {
		for _, c := range r.Correctness {
			if c.Clock == name {
				return c.StrictViolations
			}
		}
		return 0
	}
	f := figures{
		Timings:  t,
		Attempts: attempts,
		Counter:  r.info.Counter,
		FreqHz:   r.info.FreqHz,
		Fallback: r.info.FallbackReason(),
		Strict: strictFigures{
			Conclusive: r.StrictTest.Conclusive,
			Checks:     r.StrictTest.ChecksPerClock,
			Nanotime:   violations("fastnow.Nanotime"),
			Monotonic:  violations(nameMonotonic),
		},
		WallP99Ns:   r.Wall.P99Ns,
		StaleP99Ms:  r.Coarse.AgeP99Ms,
		UpkeepEvery: time.Millisecond,
	}
	if m := r.Monotonic; m != nil {
		f.Monotonic = &monotonicFigures{StartMode: m.StartMode, SettledMode: m.SettledMode, StartNs: m.StartNsMedian, StartSinceNs: m.StartStdNsMedian}
	}
	return f, nil
}

// ratio is how a clock's cost compares with another's: -1 cheaper by
// factor, 0 about the same, +1 dearer by factor.
type ratio struct {
	sign   int
	factor float64
}

func compare(x, reference float64) ratio {
	switch {
	case reference > x*(1+sameBand):
		return ratio{-1, reference / x}
	case x > reference*(1+sameBand):
		return ratio{+1, x / reference}
	default:
		return ratio{0, 1}
	}
}

// relation is "2.1× faster than", "about as fast as" or "1.7× slower than".
func (r ratio) relation() string {
	switch r.sign {
	case -1:
		return times(r.factor) + " faster than"
	case +1:
		return times(r.factor) + " slower than"
	}
	return "about as fast as"
}

// times prints a factor, never "1.0×" for one beyond the band.
func times(k float64) string {
	switch {
	case k >= 10:
		return fmt.Sprintf("%.0f×", k)
	case k < 1.1:
		return fmt.Sprintf("%.2f×", k)
	}
	return fmt.Sprintf("%.1f×", k)
}

func ns(x float64) string {
	if x < 1 {
		return fmt.Sprintf("%.2f ns", x)
	}
	return fmt.Sprintf("%.1f ns", x)
}

// spread is "38.7 ns (rounds 11.4–43.9)".
func spread(c Cost) string {
	return fmt.Sprintf("%s (rounds %.1f–%.1f)", ns(c.MedianNs), c.MinNs, c.MaxNs)
}

func count(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

// verdict is a recommendation worded by the measured ratios or, when the
// figures are unsteady, a plain statement that the machine was too busy to
// conclude, with the figures and their spread.
func verdict(f figures) string {
	t := f.Timings
	var b strings.Builder
	if f.Fallback != "" {
		fmt.Fprintf(&b, "fastnow uses the OS clock on this machine (%s).", f.Fallback)
	} else {
		counter := f.Counter
		if counter == "" {
			counter = "counter"
		}
		fmt.Fprintf(&b, "Here fastnow reads the %s at %.3f GHz.", counter, float64(f.FreqHz)/1e9)
	}
	strictNote := strictNote(f.Strict)
	if why := t.unsteady(); len(why) > 0 {
		var figs []string
		for _, n := range t.named() {
			figs = append(figs, n.name+" "+spread(n.c))
		}
		still := ""
		if f.Attempts > 1 {
			still = "still "
		}
		fmt.Fprintf(&b, " The machine was too busy to conclude which clock to use. Measured %s, the figures %sdisagree: %s. "+
			"The figures, per call (median, min–max of the rounds): %s; %s. Run the report again when the machine is idle for a recommendation.",
			count(f.Attempts), still, strings.Join(why, "; "), strings.Join(figs, ", "), strictNote)
	} else {
		if f.Attempts > 1 {
			fmt.Fprintf(&b, " (Costs measured %s: the earlier ones were unsteady.)", count(f.Attempts))
		}
		for _, part := range []string{
			elapsedPart(t),
			monotonicPart(t, f.Monotonic, f.Strict, strictNote),
			unixNanoPart(t, f.WallP99Ns),
			recentPart(t, f.UpkeepEvery, f.StaleP99Ms),
		} {
			b.WriteString(" " + part)
		}
	}
	if f.Fallback != "" {
		b.WriteString(" Set FASTNOW_CLOCK=counter only if you know this machine's counter is synchronised across CPUs.")
	}
	return b.String()
}

func elapsedPart(t timings) string {
	x, r := t.Elapsed.MedianNs, t.Since.MedianNs
	c := compare(x, r)
	figs := fmt.Sprintf("%s against %s a call", ns(x), ns(r))
	switch c.sign {
	case -1:
		return fmt.Sprintf("Use fastnow.Now() and Elapsed to time work within a goroutine: %s time.Since (%s).", c.relation(), figs)
	case 0:
		return fmt.Sprintf("To time work within a goroutine, Now().Elapsed() is %s time.Since here (%s), so switching gains nothing.", c.relation(), figs)
	}
	return fmt.Sprintf("To time work within a goroutine, keep time.Since: Now().Elapsed() measured %s it here (%s).", c.relation(), figs)
}

// strictNote is what the strict test showed of MonotonicNanotime against
// Nanotime: evidence for preferring it only where Nanotime went backwards.
func strictNote(s strictFigures) string {
	switch {
	case !s.Conclusive:
		return "the strict test was too short to tell here"
	case caughtNanotime(s):
		return fmt.Sprintf("%d violations in the strict test, against %d for Nanotime", s.Monotonic, s.Nanotime)
	}
	return fmt.Sprintf("%d violations in %d strict checks, and %d for Nanotime: this run did not catch Nanotime going back, "+
		"so it shows no reason to prefer MonotonicNanotime to Nanotime; the guarantee is the reason", s.Monotonic, s.Checks, s.Nanotime)
}

// caughtNanotime is whether the strict test showed Nanotime lacking the
// guarantee MonotonicNanotime gives: only then does the run argue for it.
func caughtNanotime(s strictFigures) bool { return s.Conclusive && s.Nanotime > 0 }

// strategy is a MonotonicNanotime strategy in words.
func strategy(mode string) string {
	switch mode {
	case "HighWater":
		return "a shared high-water mark (a compare-and-swap per reading)"
	case "Ordered":
		return "ordered counter reads"
	}
	return "no strategy yet"
}

func monotonicPart(t timings, start *monotonicFigures, s strictFigures, strictNote string) string {
	x, r := t.Monotonic.MedianNs, t.Since.MedianNs
	c := compare(x, r)
	// The strategy quoted is the one a program whose goroutines contend
	// ends up with; where the first reading chose another, its cost is said
	// too, with when it applies.
	how, before := "", ""
	switch {
	case start != nil && start.StartMode != start.SettledMode:
		how = "with " + strategy(start.SettledMode) + ", the strategy it keeps once several goroutines read it: "
		before = fmt.Sprintf("; before anything contends it uses %s, %s time.Since (%s against %s)",
			strategy(start.StartMode), compare(start.StartNs, start.StartSinceNs).relation(), ns(start.StartNs), ns(start.StartSinceNs))
	case start != nil && start.SettledMode == "HighWater":
		// Still on the mark after every CPU called it: the goroutines took
		// turns, and a program whose goroutines contend would leave it.
		how = "with " + strategy(start.SettledMode) + ", which the report's contention did not make it leave (its " +
			"goroutines took turns); a program whose goroutines contend for it moves to ordered reads: "
	case start != nil:
		how = "with " + strategy(start.SettledMode) + ": "
	}
	details := fmt.Sprintf(" (%s%s against %s a call)%s; %s", how, ns(x), ns(r), before, strictNote)
	if s.Conclusive && s.Monotonic > 0 {
		return fmt.Sprintf("MonotonicNanotime went backwards %d times across goroutines in the strict test, which it must never do: "+
			"do not rely on it here, and report it with this output (%s time.Since%s).", s.Monotonic, c.relation(), details)
	}
	switch c.sign {
	case -1:
		// A recommendation rests on what the run showed: with no
		// violation of Nanotime's either, it is a statement of cost and
		// guarantee.
		if s.Conclusive && !caughtNanotime(s) {
			return fmt.Sprintf("For stamps from several goroutines that must never go backwards, MonotonicNanotime is %s time.Since%s.", c.relation(), details)
		}
		return fmt.Sprintf("Use MonotonicNanotime when stamps from several goroutines must never go backwards: %s time.Since%s.", c.relation(), details)
	case 0:
		return fmt.Sprintf("For stamps from several goroutines that must never go backwards, MonotonicNanotime is %s time.Since here, so switching gains nothing%s.", c.relation(), details)
	}
	return fmt.Sprintf("For stamps from several goroutines, keep time.Since: MonotonicNanotime measured %s it here%s.", c.relation(), details)
}

func unixNanoPart(t timings, wallP99Ns float64) string {
	x, r := t.UnixNano.MedianNs, t.Now.MedianNs
	c := compare(x, r)
	figs := fmt.Sprintf("%s against %s a call, within %.0f ns of time.Now at p99", ns(x), ns(r), wallP99Ns)
	switch c.sign {
	case -1:
		return fmt.Sprintf("Use UnixNano or WallTime for timestamps: %s time.Now().UnixNano() (%s).", c.relation(), figs)
	case 0:
		return fmt.Sprintf("For timestamps, UnixNano is %s time.Now().UnixNano() here (%s), so switching gains nothing.", c.relation(), figs)
	}
	return fmt.Sprintf("For timestamps, keep time.Now().UnixNano(): UnixNano measured %s it here (%s).", c.relation(), figs)
}

func recentPart(t timings, every time.Duration, staleP99Ms float64) string {
	x, r := t.Recent.MedianNs, t.Now.MedianNs
	c := compare(x, r)
	figs := fmt.Sprintf("%s against %s a call; p99 age %.2f ms with upkeep every %.0f ms", ns(x), ns(r), staleP99Ms,
		float64(every)/float64(time.Millisecond))
	if c.sign < 0 {
		return fmt.Sprintf("Use RecentUnixNano / RecentNanotime for expiry checks that tolerate that staleness: %s time.Now().UnixNano() (%s).", c.relation(), figs)
	}
	return fmt.Sprintf("RecentUnixNano measured %s time.Now().UnixNano() here (%s), so it saves nothing for its staleness.", c.relation(), figs)
}
