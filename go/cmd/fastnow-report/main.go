// Command fastnow-report prints the Go side of fastnow's report: the clock
// fastnow chose on this machine and why, each clock's cost beside package
// time (median of interleaved rounds, measured in this one process), the
// strict cross-goroutine test, the wall tier's error, the coarse tier's
// staleness, the cost of the first reading in a fresh process (which reads
// the OS clock while the counter's rate is measured: no wait), and a
// verdict.
//
//	go run ./cmd/fastnow-report [-quick] [-json]
//
// Those two are its only flags (-h lists them). The verdict is formed from
// the figures alone, by the rules of the Rust report ("Verdict" in
// https://github.com/fastnow/fastnow/blob/main/crates/fastnow-cli/REPORT.md).
// Each fastnow clock is compared with the package time call it would replace
// (Now().Elapsed() and MonotonicNanotime with time.Since, UnixNano and
// RecentUnixNano with time.Now().UnixNano()) by the ratio of their medians,
// worded "2.1× faster than", "1.7× slower than", or "about as fast as"
// within ±5 %. A clock measured slower than package time's, or only about as
// fast, is not recommended. A compared clock whose median round took more
// than 1.25× its fastest (and over 1 ns longer) shows that other work slowed
// most of its rounds: the costs are then measured again, up to three
// measurements in all, and if they stay unsteady the verdict declines to
// conclude, saying the machine was too busy, with each clock's median and
// the min–max of its rounds. The Go report times no single calls, so the
// Rust report's second check (costs against latency percentiles) is not made
// here.
//
// # JSON
//
// With -json the report is one JSON object in the schema the Rust report
// writes too, spec/report.schema.json in the repository (version 3, its
// first field, schema_version; "language": "go"), so that `fastnow report
// --compare rust.json go.json` sets the two side by side. A Go report has
// no all-cores figures, per-thread checks, latencies, slowest reads or
// drift (the schema marks those fields Rust's), and adds "go": the
// GOMAXPROCS it ran with, the first Nanotime of a fresh process
// (first_call_ms) and named ratios of two clocks' medians. The tests check
// every report against the schema.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fastnow/fastnow/go/fastnow"
	"github.com/fastnow/fastnow/go/internal/measure"
)

type clock struct {
	Name string
	Kind string // "fastnow", "baseline" or "os", as costs[].kind
	Role string // as costs[].role ("": none)
	read func() int64
}

func main() {
	if os.Getenv("FASTNOW_REPORT_CHILD") == "first-call" {
		start := time.Now()
		sink += fastnow.Nanotime()
		fmt.Println(time.Since(start).Nanoseconds())
		return
	}
	flags, quick, asJSON := reportFlags(os.Stderr)
	if err := flags.Parse(os.Args[1:]); err == flag.ErrHelp {
		os.Exit(0)
	} else if err != nil {
		os.Exit(2)
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "fastnow-report: unexpected argument %q\n", flags.Arg(0))
		flags.Usage()
		os.Exit(2)
	}
	// testing.Benchmark runs each benchmark for -test.benchtime, a flag
	// that only testing.Init registers, on the default FlagSet; nothing
	// parses that set here, so the command line never reaches it.
	testing.Init()
	benchtime := "300ms"
	if *quick {
		benchtime = "100ms"
	}
	if err := flag.Set("test.benchtime", benchtime); err != nil {
		fmt.Fprintln(os.Stderr, "fastnow-report:", err)
		os.Exit(2)
	}
	r, err := measureReport(*quick)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fastnow-report:", err)
		os.Exit(1)
	}
	if *asJSON {
		if err := writeJSON(os.Stdout, r); err != nil {
			fmt.Fprintln(os.Stderr, "fastnow-report:", err)
			os.Exit(1)
		}
		return
	}
	print(r)
}

// measureReport measures everything and forms the verdict.
func measureReport(quick bool) (Report, error) {
	rounds, checks, samples, children := 9, 2_000_000, 2000, 15
	mode := "thorough"
	if quick {
		rounds, checks, samples, children = 3, 200_000, 300, 5
		mode = "quick"
	}
	var atom atomic.Int64
	atom.Store(1)
	start := time.Now()
	fastStart := fastnow.Now()
	fastnanoWall := start.UnixNano()
	var hlc fastnow.HLC
	clocks := []clock{
		{"fastnow.Nanotime", "fastnow", "instant", fastnow.Nanotime},
		{nameMonotonic, "fastnow", "monotonic", fastnow.MonotonicNanotime},
		{"fastnow.OrderedNanotime", "fastnow", "ordered", fastnow.OrderedNanotime},
		{nameElapsed, "fastnow", "", func() int64 { return int64(fastStart.Elapsed()) }},
		{"fastnow.BootNanotime", "fastnow", "boot", fastnow.BootNanotime},
		{nameUnixNano, "fastnow", "wall", fastnow.UnixNano},
		{"fastnow.HLC.Now", "fastnow", "hlc", func() int64 { return int64(hlc.Now()) }},
		{nameRecent, "fastnow", "recent_wall", fastnow.RecentUnixNano},
	}
	counterName, raw := rawCounter()
	if raw != nil {
		clocks = append(clocks, clock{counterName, "baseline", "counter", raw})
	}
	clocks = append(clocks,
		clock{nameSince, "os", "os_monotonic", func() int64 { return int64(time.Since(start)) }},
		clock{nameNow, "os", "os_wall", func() int64 { return time.Now().UnixNano() }},
		clock{"fastnano-style start+Since", "os", "", func() int64 { return fastnanoWall + int64(time.Since(start)) }},
		clock{"atomic.Int64 Load", "baseline", "atomic_load", atom.Load},
	)
	atStart := fastnow.Source().MonotonicMode
	r := Report{
		Language:       "go",
		FastnowVersion: moduleVersion(),
		Mode:           mode,
		Machine:        machine(),
		Go:             GoOnly{GOMAXPROCS: runtime.GOMAXPROCS(0), Ratios: map[string]float64{}},
	}

	// MonotonicNanotime's first reading picks a strategy, which it leaves
	// for good for ordered reads once goroutines contend for its mark: its
	// cost with the first, on one goroutine before anything contends; then
	// every CPU calls it, as in a long-running program, and the cost table
	// measures the strategy it settled on.
	r.Monotonic = monotonicStart(rounds)
	// Until the mark is seen contended, for a second at most (on one CPU,
	// or with the other CPUs busy, goroutines take turns and it never is).
	for i := 0; i < 10 && fastnow.Source().MonotonicMode == fastnow.MonotonicHighWater; i++ {
		contend(fastnow.MonotonicNanotime, runtime.GOMAXPROCS(0), 100*time.Millisecond)
	}
	r.Monotonic.SettledMode = modeName(fastnow.Source().MonotonicMode)

	// The verdict concludes only from steady figures: while they are
	// unsteady (other work slowed most rounds of a compared clock), measure
	// them again after a pause that lets a short burst of other work pass.
	costs, steadiness := untilSteady(costRows(clocks, rounds), func() []Cost {
		time.Sleep(remeasurePause)
		return costRows(clocks, rounds)
	}, func(c []Cost) []string {
		t, err := timingsOf(c)
		if err != nil {
			return []string{err.Error()}
		}
		return t.unsteady()
	})
	r.Costs, r.Steadiness = costs, &steadiness
	med := map[string]float64{}
	for _, c := range r.Costs {
		med[c.Name] = c.MedianNs
	}
	ratio := func(name string, a, b string) {
		if med[a] > 0 && med[b] > 0 {
			r.Go.Ratios[name] = med[a] / med[b]
		}
	}
	ratio("time.Since / Nanotime", nameSince, "fastnow.Nanotime")
	ratio("Nanotime / asm RDTSC", "fastnow.Nanotime", "asm RDTSC function")
	ratio("time.Now().UnixNano / UnixNano", nameNow, nameUnixNano)
	ratio("RecentUnixNano / atomic load", nameRecent, "atomic.Int64 Load")
	ratio("HLC.Now / UnixNano", "fastnow.HLC.Now", nameUnixNano)
	ratio("time.Since / start.Elapsed", nameSince, nameElapsed)

	// The strict test, on two goroutines pinned to two CPUs so they run in
	// parallel; the bare counter is the control, the clock that must fail
	// it (unordered reads). A control with no violation means the run could
	// not tell: said plainly, not read as a pass.
	strict := []clock{
		{"fastnow.Nanotime", "", "", fastnow.Nanotime},
		{nameMonotonic, "", "", fastnow.MonotonicNanotime},
		{"fastnow.OrderedNanotime", "", "", fastnow.OrderedNanotime},
	}
	var control *string
	if raw != nil {
		strict = append(strict, clock{counterName, "", "", raw})
		control = &counterName
	}
	pinnedAll := true
	violations := map[string]int{}
	for _, c := range strict {
		v, pinned := measure.StrictPinned(c.read, checks, true)
		unit := "ns"
		if c.Name == counterName {
			unit = "ticks"
		}
		r.Correctness = append(r.Correctness, CorrectRow{Clock: c.Name, StrictChecks: checks, StrictViolations: v, Unit: unit})
		violations[c.Name] = v
		pinnedAll = pinnedAll && pinned
	}
	r.StrictTest = StrictTest{ChecksPerClock: checks, ControlClock: control, Pinned: pinnedAll}
	r.StrictTest.Conclusive = control != nil && violations[*control] > 0
	r.StrictTest.Note = strictTestNote(r.StrictTest, pinnedAll)

	// UnixNano against the midpoint of a time.Now bracket, in integer
	// nanoseconds (a float64 resolves only 256 ns at today's Unix time).
	var wallErr []float64
	for i := 0; i < samples; i++ {
		time.Sleep(500 * time.Microsecond)
		a := time.Now().UnixNano()
		ours := fastnow.UnixNano()
		b := time.Now().UnixNano()
		d := ours - (a + (b-a)/2)
		if d < 0 {
			d = -d
		}
		wallErr = append(wallErr, float64(d)) // exact: far below 2^53
	}
	w := summary(wallErr, 1)
	r.Wall = Wall{MedianNs: w["median"], P99Ns: w["p99"], MaxNs: w["max"], BoundNs: wallBoundNs}

	fastnow.StopUpkeep()
	if err := fastnow.StartUpkeep(time.Millisecond); err != nil {
		return Report{}, err
	}
	var stale []float64
	for i := 0; i < samples; i++ {
		time.Sleep(137 * time.Microsecond)
		cached := fastnow.RecentNanotime()
		stale = append(stale, float64(fastnow.Nanotime()-cached))
	}
	fastnow.StopUpkeep()
	c := summary(stale, 1e6)
	r.Coarse = Coarse{ResolutionMs: 1, AgeMedianMs: c["median"], AgeP99Ms: c["p99"], AgeMaxMs: c["max"]}

	var first []float64
	for i := 0; i < children; i++ {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "FASTNOW_REPORT_CHILD=first-call")
		out, err := cmd.Output()
		if err != nil {
			return Report{}, fmt.Errorf("child: %w", err)
		}
		ns, _ := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
		first = append(first, ns)
	}
	r.Go.FirstCallMs = summary(first, 1e6)
	r.Boot = measureBoot(quick)
	r.Snapshot = measureSnapshot()
	r.ThreadCPU = measureThreadCPU(quick)
	r.info = fastnow.Source()
	r.Fastnow = chosen(r.info, atStart)
	if f, err := figuresOf(r); err != nil {
		r.Verdict = "No verdict: " + err.Error() + "."
	} else {
		r.Verdict = verdict(f)
	}
	return r, nil
}

// wallBoundNs is the wall tier's steady-state bound (SEMANTICS, "Wall tier").
const wallBoundNs = 1000

// strictTestNote is the sentence under the strict test.
func strictTestNote(t StrictTest, pinned bool) string {
	how := "with the writer and the checker pinned to two CPUs"
	if !pinned {
		how = "with the goroutines not pinned (fewer than two CPUs, or not Linux)"
	}
	switch {
	case t.ControlClock == nil:
		return fmt.Sprintf("no bare counter read here to check the test against: a zero shows only that %d checks saw nothing", t.ChecksPerClock)
	case !t.Conclusive:
		return fmt.Sprintf("TOO SHORT TO TELL: %s (no ordering) showed no violation in %d checks, %s, so a zero does not show a clock is strict; run without -quick", *t.ControlClock, t.ChecksPerClock, how)
	}
	return fmt.Sprintf("the test can fail here: %s (no ordering) failed, %s", *t.ControlClock, how)
}

// monotonicStart measures MonotonicNanotime (its first reading choosing the
// strategy) beside time.Since on one goroutine, before anything contends.
func monotonicStart(rounds int) *MonotonicStart {
	sink += fastnow.MonotonicNanotime()
	mode := modeName(fastnow.Source().MonotonicMode)
	start := time.Now()
	var ours, theirs []float64
	for i := 0; i < rounds; i++ {
		ours = append(ours, nsPerCall(fastnow.MonotonicNanotime))
		theirs = append(theirs, nsPerCall(func() int64 { return int64(time.Since(start)) }))
	}
	sort.Float64s(ours)
	return &MonotonicStart{
		StartMode: mode, StartNsMedian: median(ours), StartNsMin: ours[0], StartNsMax: ours[len(ours)-1],
		StartStdNsMedian: sortedMedian(theirs),
	}
}

// contend calls read on n goroutines at once for d.
func contend(read func() int64, n int, d time.Duration) {
	var wg sync.WaitGroup
	var stop atomic.Bool
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s int64
			for !stop.Load() {
				for j := 0; j < 1000; j++ {
					s += read()
				}
			}
			atomic.AddInt64(&sink, s)
		}()
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
}

// nsPerCall is one round: testing.Benchmark of read, ns per call.
func nsPerCall(read func() int64) float64 {
	res := testing.Benchmark(func(b *testing.B) {
		for n := 0; n < b.N; n++ {
			sink += read()
		}
	})
	return float64(res.T.Nanoseconds()) / float64(res.N)
}

// reportFlags is the report's command line, on a FlagSet of its own:
// testing.Init registers some thirty -test.* flags on the default one, and
// -h would list them among the report's.
func reportFlags(output io.Writer) (flags *flag.FlagSet, quick, asJSON *bool) {
	flags = flag.NewFlagSet("fastnow-report", flag.ContinueOnError)
	flags.SetOutput(output)
	quick = flags.Bool("quick", false, "fewer rounds and samples (about 10 s)")
	asJSON = flags.Bool("json", false, "print JSON instead of tables (its fields: spec/report.schema.json, shared with `fastnow report --json`)")
	flags.Usage = func() {
		fmt.Fprintln(flags.Output(), "Usage: fastnow-report [-quick] [-json]")
		flags.PrintDefaults()
	}
	return flags, quick, asJSON
}

// writeJSON writes r as indented JSON, schema_version first.
func writeJSON(w io.Writer, r Report) error {
	r.SchemaVersion = schemaVersion
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// costRows measures every clock's cost in interleaved rounds (each clock
// once per round, so a slow spell of the machine spreads over all).
func costRows(clocks []clock, rounds int) []Cost {
	samplesNs := make([][]float64, len(clocks))
	for round := 0; round < rounds; round++ {
		for i, c := range clocks {
			samplesNs[i] = append(samplesNs[i], nsPerCall(c.read))
		}
	}
	var costs []Cost
	for i, c := range clocks {
		s := append([]float64(nil), samplesNs[i]...)
		sort.Float64s(s)
		costs = append(costs, Cost{Name: c.Name, Kind: c.Kind, Role: c.Role, MedianNs: median(s), MinNs: s[0], MaxNs: s[len(s)-1], RoundsNs: samplesNs[i]})
	}
	return costs
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func summary(xs []float64, unit float64) map[string]float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	at := func(p float64) float64 { return s[int(p*float64(len(s)-1)+0.5)] / unit }
	return map[string]float64{"median": at(0.5), "p99": at(0.99), "max": s[len(s)-1] / unit}
}

func print(r Report) {
	fmt.Printf("fastnow (Go): %s\nGOMAXPROCS %d, %s/%s, %s\n\n", r.info, r.Go.GOMAXPROCS, runtime.GOOS, runtime.GOARCH, cpuName(r.Machine))
	rounds := 0
	if len(r.Costs) > 0 {
		rounds = len(r.Costs[0].RoundsNs)
	}
	fmt.Printf("| clock | ns/call (median of %d rounds) | min–max |\n|---|---:|---:|\n", rounds)
	for _, c := range r.Costs {
		fmt.Printf("| %s | %.2f | %.2f–%.2f |\n", c.Name, c.MedianNs, c.MinNs, c.MaxNs)
	}
	if m := r.Monotonic; m != nil && m.StartMode != m.SettledMode {
		fmt.Printf("\nMonotonicNanotime started with %s (kept while one goroutine reads it): %.2f ns (%.2f–%.2f) before anything contended, time.Since %.2f ns in the same rounds; the table's is %s, which it keeps for good once goroutines contend\n",
			m.StartMode, m.StartNsMedian, m.StartNsMin, m.StartNsMax, m.StartStdNsMedian, m.SettledMode)
	}
	fmt.Println()
	keys := make([]string, 0, len(r.Go.Ratios))
	for k := range r.Go.Ratios {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("- %s: %.2f\n", k, r.Go.Ratios[k])
	}
	fmt.Printf("\nStrict cross-goroutine test, %d checks:\n", r.StrictTest.ChecksPerClock)
	for _, c := range r.Correctness {
		control := ""
		if r.StrictTest.ControlClock != nil && c.Clock == *r.StrictTest.ControlClock {
			control = " (control)"
		}
		fmt.Printf("- %s%s: %d violations\n", c.Clock, control, c.StrictViolations)
	}
	fmt.Printf("  %s\n", r.StrictTest.Note)
	fmt.Printf("UnixNano − time.Now: median %.0f ns, p99 %.0f ns, max %.0f ns\n", r.Wall.MedianNs, r.Wall.P99Ns, r.Wall.MaxNs)
	fmt.Printf("RecentNanotime age, upkeep 1 ms: median %.3f ms, p99 %.3f ms, max %.3f ms\n", r.Coarse.AgeMedianMs, r.Coarse.AgeP99Ms, r.Coarse.AgeMaxMs)
	fmt.Printf("First Nanotime() in a fresh process (detection included, no calibration wait): median %.3f ms, max %.3f ms\n", r.Go.FirstCallMs["median"], r.Go.FirstCallMs["max"])
	if r.Boot != nil {
		printBoot(r.Boot)
	}
	if r.ThreadCPU != nil {
		printThreadCPU(r.ThreadCPU)
	}
	if r.Snapshot != nil {
		printSnapshot(r.Snapshot)
	}
	fmt.Printf("\nVerdict: %s\n", r.Verdict)
}
