package main

import (
	"reflect"
	"strings"
	"testing"
	"testing/quick"
)

// c is one clock's recorded cost: median, least and greatest of the rounds.
func c(name string, median, min, max float64) Cost {
	return Cost{Name: name, MedianNs: median, MinNs: min, MaxNs: max}
}

// cleanCosts: a steady -quick report on an idle 2-core KVM guest (Intel
// Xeon, TSC), fastnow well ahead of package time.
func cleanCosts() []Cost {
	return []Cost{
		c("fastnow.Nanotime", 13.45, 12.80, 13.77),
		c(nameMonotonic, 13.60, 12.89, 14.73),
		c(nameElapsed, 13.25, 12.78, 13.40),
		c(nameUnixNano, 11.89, 11.66, 11.99),
		c(nameRecent, 2.30, 1.89, 2.37),
		c(nameSince, 36.51, 32.30, 38.86),
		c(nameNow, 62.50, 61.22, 71.43),
	}
}

func recorded(t *testing.T, costs []Cost) figures {
	t.Helper()
	tm, err := timingsOf(costs)
	if err != nil {
		t.Fatal(err)
	}
	return figures{
		Timings: tm, Attempts: 1, Counter: "TSC (RDTSC)", FreqHz: 2_445_445_000,
		Strict:    strictFigures{Conclusive: true, Nanotime: 23769, Monotonic: 0},
		WallP99Ns: 210, StaleP99Ms: 1.254, UpkeepEvery: 1e6,
	}
}

// with returns costs with the named rows replaced.
func with(costs []Cost, rows ...Cost) []Cost {
	out := append([]Cost(nil), costs...)
	for _, r := range rows {
		for i := range out {
			if out[i].Name == r.Name {
				out[i] = r
			}
		}
	}
	return out
}

func mustContain(t *testing.T, v string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(v, p) {
			t.Errorf("verdict lacks %q:\n%s", p, v)
		}
	}
}

func mustNotContain(t *testing.T, v string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if strings.Contains(v, p) {
			t.Errorf("verdict has %q:\n%s", p, v)
		}
	}
}

// steadyVerdict is the verdict on recorded costs that must be steady.
func steadyVerdict(t *testing.T, costs []Cost) string {
	t.Helper()
	f := recorded(t, costs)
	if why := f.Timings.unsteady(); len(why) != 0 {
		t.Fatalf("unsteady: %v", why)
	}
	return verdict(f)
}

func TestVerdictCleanRunWhereFastnowWins(t *testing.T) {
	v := steadyVerdict(t, cleanCosts())
	mustContain(t, v,
		"Here fastnow reads the TSC (RDTSC) at 2.445 GHz.",
		"Use fastnow.Now() and Elapsed to time work within a goroutine: 2.8× faster than time.Since (13.2 ns against 36.5 ns a call).",
		"Use MonotonicNanotime when stamps from several goroutines must never go backwards: 2.7× faster than time.Since",
		"0 violations in the strict test, against 23769 for Nanotime",
		"Use UnixNano or WallTime for timestamps: 5.3× faster than time.Now().UnixNano() (11.9 ns against 62.5 ns a call, within 210 ns of time.Now at p99).",
		"27× faster than time.Now().UnixNano() (2.3 ns against 62.5 ns a call; p99 age 1.25 ms with upkeep every 1 ms)",
	)
	mustNotContain(t, v, "too busy", "measured twice")
}

// noisyCosts: most rounds of fastnow's precise clocks slowed by other work
// (the medians far above the fastest rounds), as in the run the issue
// quotes, where a verdict pasting the medians in said "0.6x faster".
func noisyCosts() []Cost {
	return with(cleanCosts(),
		c(nameElapsed, 25.8, 7.87, 285),
		c(nameMonotonic, 27.3, 8.02, 190),
		c(nameSince, 15.5, 15.1, 31.0),
	)
}

func TestVerdictNoisyRunSaysTooBusyWithTheSpread(t *testing.T) {
	f := recorded(t, noisyCosts())
	f.Attempts = maxAttempts
	why := f.Timings.unsteady()
	if len(why) != 2 || !strings.HasPrefix(why[0], "Now().Elapsed()'s rounds disagree, its median round 3.3× its fastest (25.8 ns against 7.9 ns)") {
		t.Fatalf("unsteady: %q", why)
	}
	v := verdict(f)
	mustContain(t, v,
		"The machine was too busy to conclude which clock to use. Measured 3 times, the figures still disagree: Now().Elapsed()'s rounds disagree",
		"Now().Elapsed() 25.8 ns (rounds 7.9–285.0)",
		"time.Since 15.5 ns (rounds 15.1–31.0)",
		"MonotonicNanotime 27.3 ns (rounds 8.0–190.0)",
		"Run the report again when the machine is idle",
	)
	mustNotContain(t, v, "Use ", "faster", "slower")
}

func TestVerdictRoundsThatDisagree(t *testing.T) {
	tm, _ := timingsOf(with(cleanCosts(), c(nameUnixNano, 38.69, 11.39, 43.92)))
	if why := tm.unsteady(); len(why) != 1 || !strings.Contains(why[0], "UnixNano's rounds disagree, its median round 3.4× its fastest") {
		t.Fatalf("two slowed rounds of three: %q", why)
	}
	// One slowed round of three leaves the median alone: steady.
	tm, _ = timingsOf(with(cleanCosts(), c(nameUnixNano, 11.59, 11.39, 43.92)))
	if why := tm.unsteady(); len(why) != 0 {
		t.Fatalf("one slowed round: %q", why)
	}
	// Below a nanosecond, a quarter is a few cycles of loop: steady.
	tm, _ = timingsOf(with(cleanCosts(), c(nameRecent, 0.60, 0.44, 0.60)))
	if why := tm.unsteady(); len(why) != 0 {
		t.Fatalf("sub-ns: %q", why)
	}
	var lacking []Cost
	for _, c := range cleanCosts() {
		if c.Name != nameElapsed {
			lacking = append(lacking, c)
		}
	}
	if _, err := timingsOf(lacking); err == nil || !strings.Contains(err.Error(), nameElapsed) {
		t.Fatalf("a missing row: %v", err)
	}
}

func TestVerdictMeasuresAgainABoundedNumberOfTimes(t *testing.T) {
	unsteady := func(c []Cost) []string {
		tm, err := timingsOf(c)
		if err != nil {
			t.Fatal(err)
		}
		return tm.unsteady()
	}
	_, s := untilSteady(cleanCosts(), func() []Cost { t.Fatal("measured again"); return nil }, unsteady)
	if s.Attempts != 1 || !s.Steady || len(s.Unsteady) != 0 {
		t.Fatalf("steady at once: %+v", s)
	}
	got, s := untilSteady(noisyCosts(), cleanCosts, unsteady)
	if s.Attempts != 2 || !s.Steady || !reflect.DeepEqual(got, cleanCosts()) {
		t.Fatalf("noisy then steady: %+v", s)
	}
	taken := 0
	got, s = untilSteady(noisyCosts(), func() []Cost { taken++; return noisyCosts() }, unsteady)
	if taken != maxAttempts-1 || s.Attempts != maxAttempts || s.Steady || len(s.Unsteady) != 2 || !reflect.DeepEqual(got, noisyCosts()) {
		t.Fatalf("noisy every time: taken %d, %+v", taken, s)
	}
	f := recorded(t, cleanCosts())
	f.Attempts = 2
	mustContain(t, verdict(f), "(Costs measured twice: the earlier ones were unsteady.)", "Use fastnow.Now()")
}

func TestVerdictFastnowSlowerThanTime(t *testing.T) {
	v := steadyVerdict(t, with(cleanCosts(),
		c(nameElapsed, 48.1, 47.2, 49.0),
		c(nameMonotonic, 62.0, 61.0, 63.5),
		c(nameUnixNano, 83.4, 82.0, 85.0),
	))
	mustContain(t, v,
		"To time work within a goroutine, keep time.Since: Now().Elapsed() measured 1.3× slower than it here (48.1 ns against 36.5 ns a call).",
		"For stamps from several goroutines, keep time.Since: MonotonicNanotime measured 1.7× slower than it here",
		"For timestamps, keep time.Now().UnixNano(): UnixNano measured 1.3× slower than it here",
	)
	mustNotContain(t, v, "Use fastnow.Now()", "Use MonotonicNanotime", "Use UnixNano", "x faster")
	// Only RecentUnixNano is faster here.
	if n := strings.Count(v, "faster"); n != 1 {
		t.Errorf("%d claims of faster:\n%s", n, v)
	}
}

func TestVerdictWithinNoiseIsAboutAsFast(t *testing.T) {
	f := recorded(t, with(cleanCosts(),
		c(nameElapsed, 37.6, 37.1, 38.0),   // 3 % dearer
		c(nameMonotonic, 35.1, 34.8, 35.9), // 4 % cheaper
		c(nameUnixNano, 60.5, 60.0, 61.2),
	))
	v := verdict(f)
	mustContain(t, v,
		"To time work within a goroutine, Now().Elapsed() is about as fast as time.Since here (37.6 ns against 36.5 ns a call), so switching gains nothing.",
		"MonotonicNanotime is about as fast as time.Since here",
		"UnixNano is about as fast as time.Now().UnixNano() here",
	)
	mustNotContain(t, v, "Use fastnow.Now()", "Use MonotonicNanotime", "Use UnixNano")
}

func TestVerdictMonotonicGoingBackwardsIsNeverRecommended(t *testing.T) {
	f := recorded(t, cleanCosts())
	f.Strict.Monotonic = 3
	v := verdict(f)
	mustContain(t, v, "MonotonicNanotime went backwards 3 times across goroutines in the strict test")
	mustNotContain(t, v, "Use MonotonicNanotime")
	f.Strict = strictFigures{}
	mustContain(t, verdict(f), "the strict test was too short to tell here")
}

func TestVerdictFallbackComparesByTheFiguresToo(t *testing.T) {
	f := recorded(t, with(cleanCosts(), c(nameElapsed, 36.0, 35.8, 36.4), c(nameMonotonic, 36.2, 35.9, 36.5)))
	f.Fallback = "the kernel's clocksource is hpet, not the counter"
	v := verdict(f)
	if !strings.HasPrefix(v, "fastnow uses the OS clock on this machine (the kernel's clocksource is hpet, not the counter).") {
		t.Errorf("%s", v)
	}
	mustContain(t, v, "Now().Elapsed() is about as fast as time.Since", "Set FASTNOW_CLOCK=counter only if")
}

func TestRatioWording(t *testing.T) {
	for _, tc := range []struct {
		x, ref float64
		want   string
	}{
		{10, 21, "2.1× faster than"},
		{17, 10, "1.7× slower than"},
		{10, 10.4, "about as fast as"},
		{10.4, 10, "about as fast as"},
		{10, 10.6, "1.06× faster than"},
		{0.6, 30, "50× faster than"},
	} {
		if got := compare(tc.x, tc.ref).relation(); got != tc.want {
			t.Errorf("compare(%v, %v) = %q, want %q", tc.x, tc.ref, got, tc.want)
		}
	}
	// Any two positive costs: the factor is beyond the band, and "faster"
	// is said only of the cheaper one.
	prop := func(a, b uint32) bool {
		x, y := 0.1+float64(a%100000)/100, 0.1+float64(b%100000)/100
		r := compare(x, y)
		switch r.sign {
		case -1:
			return x < y && r.factor > 1+sameBand
		case +1:
			return x > y && r.factor > 1+sameBand
		}
		return y <= x*(1+sameBand) && x <= y*(1+sameBand)
	}
	if err := quick.Check(prop, nil); err != nil {
		t.Error(err)
	}
}

// A report's figures are read by name, and the verdict is formed from them.
func TestFiguresOfReport(t *testing.T) {
	control := "asm RDTSC function"
	r := Report{
		Costs: cleanCosts(),
		Correctness: []CorrectRow{
			{Clock: "fastnow.Nanotime", StrictChecks: 1000, StrictViolations: 5},
			{Clock: nameMonotonic, StrictChecks: 1000},
			{Clock: control, StrictChecks: 1000},
		},
		StrictTest: StrictTest{ChecksPerClock: 1000, ControlClock: &control},
		Wall:       Wall{P99Ns: 210},
		Coarse:     Coarse{AgeP99Ms: 1.254},
		Steadiness: &Steadiness{Attempts: 2, Steady: true},
		Monotonic:  &MonotonicStart{StartMode: "HighWater", StartNsMedian: 11.4, StartStdNsMedian: 36.2, SettledMode: "Ordered"},
	}
	r.info.Counter, r.info.FreqHz = "TSC (RDTSC)", 2_445_445_000
	f, err := figuresOf(r)
	if err != nil {
		t.Fatal(err)
	}
	if f.Strict.Conclusive || f.Attempts != 2 || f.Timings.Since.MedianNs != 36.51 || f.Monotonic == nil || f.Monotonic.StartNs != 11.4 {
		t.Fatalf("%+v", f)
	}
	// The control never failed: the zeros prove nothing.
	mustContain(t, verdict(f), "the strict test was too short to tell here", "(Costs measured twice")
	r.StrictTest.Conclusive = true
	f, _ = figuresOf(r)
	mustContain(t, verdict(f), "0 violations in the strict test, against 5 for Nanotime")
}

// The run of the issue: MonotonicNanotime on the high-water mark before
// anything contends (its first strategy), on ordered reads after (the one
// it keeps). The verdict quotes the second, and the first with when it
// applies.
func TestVerdictQuotesTheStrategyMonotonicNanotimeSettlesOn(t *testing.T) {
	f := recorded(t, with(cleanCosts(), c(nameMonotonic, 24.1, 23.8, 24.6)))
	f.Monotonic = &monotonicFigures{StartMode: "HighWater", SettledMode: "Ordered", StartNs: 13.6, StartSinceNs: 36.2}
	v := verdict(f)
	mustContain(t, v,
		"Use MonotonicNanotime when stamps from several goroutines must never go backwards: 1.5× faster than time.Since (with ordered counter reads, the strategy it keeps once several goroutines read it: 24.1 ns against 36.5 ns a call); before anything contends it uses a shared high-water mark (a compare-and-swap per reading), 2.7× faster than time.Since (13.6 ns against 36.2 ns)",
	)
	mustNotContain(t, v, "must never go backwards: 2.7×")
	// One strategy throughout: one figure.
	f.Monotonic = &monotonicFigures{StartMode: "Ordered", SettledMode: "Ordered", StartNs: 24.0, StartSinceNs: 36.0}
	v = verdict(f)
	mustContain(t, v, "1.5× faster than time.Since (with ordered counter reads: 24.1 ns against 36.5 ns a call);")
	mustNotContain(t, v, "before anything contends", "the strategy it keeps")
	// The report's goroutines took turns: still on the mark, said so.
	f = recorded(t, with(cleanCosts(), c(nameMonotonic, 13.6, 13.4, 13.9)))
	f.Monotonic = &monotonicFigures{StartMode: "HighWater", SettledMode: "HighWater", StartNs: 13.5, StartSinceNs: 36.0}
	mustContain(t, verdict(f), "2.7× faster than time.Since (with a shared high-water mark (a compare-and-swap per reading), which the report's contention did not make it leave (its goroutines took turns); a program whose goroutines contend for it moves to ordered reads: 13.6 ns against 36.5 ns a call);")
}

// "0 violations … against 0 for Nanotime" gives no reason to switch from
// Nanotime: no recommendation cites it; the verdict says the guarantee,
// not the run, is the reason.
func TestVerdictRecommendsNothingOnZeroViolationsAgainstZero(t *testing.T) {
	f := recorded(t, cleanCosts())
	f.Strict = strictFigures{Conclusive: true, Checks: 200_000, Nanotime: 0, Monotonic: 0}
	v := verdict(f)
	mustNotContain(t, v, "Use MonotonicNanotime", "against 0 for Nanotime")
	mustContain(t, v,
		"For stamps from several goroutines that must never go backwards, MonotonicNanotime is 2.7× faster than time.Since (13.6 ns against 36.5 ns a call); 0 violations in 200000 strict checks, and 0 for Nanotime: this run did not catch Nanotime going back, so it shows no reason to prefer MonotonicNanotime to Nanotime; the guarantee is the reason.",
	)
	// Nanotime caught going back: the run itself argues for it.
	f.Strict.Nanotime = 17
	mustContain(t, verdict(f), "Use MonotonicNanotime when stamps from several goroutines must never go backwards: 2.7× faster than time.Since (13.6 ns against 36.5 ns a call); 0 violations in the strict test, against 17 for Nanotime.")
}
