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
// With -json the report is one JSON object whose first field,
// schema_version, says which fields follow and what they mean: it is raised
// when a field changes meaning or disappears (a new field does not raise
// it). It versions this report's schema alone; the Rust report's JSON
// (fastnow report --json) has other fields and a version of its own.
// Version 1:
//
//   - schema_version: 1.
//   - source: fastnow.Source(), the fields of fastnow.Info under their Go
//     names (its enumerations as their String).
//   - gomaxprocs: runtime.GOMAXPROCS(0) while measuring.
//   - costs: one object per clock, in the order of the table: name, and
//     the nanoseconds per call of its median, fastest and slowest round
//     (median_ns, min_ns, max_ns) and of every round in the order run
//     (rounds_ns).
//   - ratios: named ratios of two clocks' medians, e.g.
//     "time.Since / Nanotime" (the first over the second).
//   - strict_checks: how many times each clock was checked in the strict
//     cross-goroutine test; strict_violations: each clock's violations, by
//     name; strict_pinned: whether the two goroutines ran pinned to two
//     CPUs; strict_control: the clock that must fail the test ("" when
//     there is none here).
//   - wall_error_ns: UnixNano's distance from the midpoint of a
//     time.Now().UnixNano() bracket (median, p99, max).
//   - coarse_staleness_ms: RecentNanotime's age under a 1 ms upkeep
//     (median, p99, max).
//   - first_call_ms: the first Nanotime in a fresh process, detection
//     included (median, p99, max).
//   - steadiness: how steady the costs behind the verdict were: the
//     measurements taken (attempts), whether the last was steady (steady)
//     and what was not (unsteady).
//   - boot: fastnow.BootNanotime (BootReport): route and why, ns per call
//     of BootNanotime, Nanotime and the kernel's boot clock
//     (boot_ns_per_call, nanotime_ns_per_call, kernel_ns_per_call), and the
//     interval agreement was measured over by the kernel's boot clock and by
//     BootNanotime, with the brackets' uncertainty (interval_kernel_ns,
//     interval_boot_ns, bracket_ns). Absent in reports written before it.
//   - thread_cpu: fastnow.ThreadCPUNanotime (ThreadCPUReport): the OS call
//     behind it and why (clock, why, measures_thread_cpu_time), ns per call
//     of it and of the same call through syscall.Syscall
//     (thread_cpu_ns_per_call, os_call_ns_per_call), and a busy loop's CPU
//     by the kernel's clock and by it (busy_kernel_ns, busy_ns), and the CPU
//     it counted over a sleep (asleep_ns, sleep_ns). Absent in reports
//     written before it.
//   - verdict: the sentence printed last.
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
	"sync/atomic"
	"testing"
	"time"

	"github.com/fastnow/fastnow/go/fastnow"
	"github.com/fastnow/fastnow/go/internal/measure"
)

type clock struct {
	Name string
	read func() int64
}

// Cost is one clock's measured cost.
type Cost struct {
	Name     string  `json:"name"`
	MedianNs float64 `json:"median_ns"`
	MinNs    float64 `json:"min_ns"`
	MaxNs    float64 `json:"max_ns"`
	// RoundsNs is each round's figure, in the order run.
	RoundsNs []float64 `json:"rounds_ns"`
}

// schemaVersion is the -json output's schema_version (the command's doc
// lists the fields of each version).
const schemaVersion = 1

// Report is the -json output.
type Report struct {
	SchemaVersion    int                `json:"schema_version"` // first, so that a reader meets it before the rest
	Source           fastnow.Info       `json:"source"`
	GOMAXPROCS       int                `json:"gomaxprocs"`
	Costs            []Cost             `json:"costs"`
	Ratios           map[string]float64 `json:"ratios"`
	StrictViolations map[string]int     `json:"strict_violations"`
	StrictChecks     int                `json:"strict_checks"`
	StrictPinned     bool               `json:"strict_pinned"`  // writer and checker pinned to two CPUs
	StrictControl    string             `json:"strict_control"` // the clock that must fail the test ("": none here)
	WallErrorNs      map[string]float64 `json:"wall_error_ns"`
	StalenessMs      map[string]float64 `json:"coarse_staleness_ms"`
	FirstCallMs      map[string]float64 `json:"first_call_ms"`
	// Steadiness says how steady the costs behind the verdict were.
	Steadiness *Steadiness `json:"steadiness"`
	Boot       *BootReport `json:"boot,omitempty"` // boot.go
	Verdict    string      `json:"verdict"`

	// ThreadCPU is fastnow.ThreadCPUNanotime's section (thread_cpu.go).
	ThreadCPU *ThreadCPUReport `json:"thread_cpu,omitempty"`
}

// sink receives every reading the timing loops take, so that the compiler
// cannot drop a read whose result is unused; nothing reads it back.
//
//lint:ignore U1000 written only: it keeps the timed reads
var sink int64

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

	rounds, checks, samples, children := 9, 2_000_000, 2000, 15
	if *quick {
		rounds, checks, samples, children = 3, 200_000, 300, 5
	}
	var atom atomic.Int64
	atom.Store(1)
	start := time.Now()
	fastStart := fastnow.Now()
	fastnanoWall := start.UnixNano()
	clocks := []clock{
		{"fastnow.Nanotime", fastnow.Nanotime},
		{"fastnow.MonotonicNanotime", fastnow.MonotonicNanotime},
		{"fastnow.OrderedNanotime", fastnow.OrderedNanotime},
		{"fastnow start.Elapsed()", func() int64 { return int64(fastStart.Elapsed()) }},
		{"fastnow.UnixNano", fastnow.UnixNano},
		{"fastnow.RecentUnixNano", fastnow.RecentUnixNano},
	}
	if name, raw := rawCounter(); raw != nil {
		clocks = append(clocks, clock{name, raw})
	}
	clocks = append(clocks,
		clock{"time.Since(start)", func() int64 { return int64(time.Since(start)) }},
		clock{"time.Now().UnixNano()", func() int64 { return time.Now().UnixNano() }},
		clock{"fastnano-style start+Since", func() int64 { return fastnanoWall + int64(time.Since(start)) }},
		clock{"atomic.Int64 Load", atom.Load},
	)
	r := Report{Source: fastnow.Source(), GOMAXPROCS: runtime.GOMAXPROCS(0), Ratios: map[string]float64{}}

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
			r.Ratios[name] = med[a] / med[b]
		}
	}
	ratio("time.Since / Nanotime", "time.Since(start)", "fastnow.Nanotime")
	ratio("Nanotime / asm RDTSC", "fastnow.Nanotime", "asm RDTSC function")
	ratio("time.Now().UnixNano / UnixNano", "time.Now().UnixNano()", "fastnow.UnixNano")
	ratio("RecentUnixNano / atomic load", "fastnow.RecentUnixNano", "atomic.Int64 Load")
	ratio("time.Since / start.Elapsed", "time.Since(start)", "fastnow start.Elapsed()")

	// The strict test, on two goroutines pinned to two CPUs so they run in
	// parallel; the bare counter is the control, the clock that must fail
	// it (unordered reads). A control with no violation means the run could
	// not tell: said plainly below, not read as a pass.
	r.StrictChecks = checks
	r.StrictViolations = map[string]int{}
	r.StrictPinned = true
	strict := []clock{
		{"fastnow.Nanotime", fastnow.Nanotime},
		{"fastnow.MonotonicNanotime", fastnow.MonotonicNanotime},
		{"fastnow.OrderedNanotime", fastnow.OrderedNanotime},
	}
	if name, raw := rawCounter(); raw != nil {
		strict = append(strict, clock{name + " (control)", raw})
		r.StrictControl = name + " (control)"
	}
	for _, c := range strict {
		v, pinned := measure.StrictPinned(c.read, checks, true)
		r.StrictViolations[c.Name] = v
		r.StrictPinned = r.StrictPinned && pinned
	}

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
	r.WallErrorNs = summary(wallErr, 1)

	fastnow.StopUpkeep()
	if err := fastnow.StartUpkeep(time.Millisecond); err != nil {
		fmt.Fprintln(os.Stderr, "fastnow-report:", err)
		os.Exit(1)
	}
	var stale []float64
	for i := 0; i < samples; i++ {
		time.Sleep(137 * time.Microsecond)
		cached := fastnow.RecentNanotime()
		stale = append(stale, float64(fastnow.Nanotime()-cached))
	}
	fastnow.StopUpkeep()
	r.StalenessMs = summary(stale, 1e6)

	var first []float64
	for i := 0; i < children; i++ {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "FASTNOW_REPORT_CHILD=first-call")
		out, err := cmd.Output()
		if err != nil {
			fmt.Fprintln(os.Stderr, "fastnow-report: child:", err)
			os.Exit(1)
		}
		ns, _ := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
		first = append(first, ns)
	}
	r.FirstCallMs = summary(first, 1e6)
	r.Boot = measureBoot(*quick)
	r.ThreadCPU = measureThreadCPU(*quick)
	if f, err := figuresOf(r); err != nil {
		r.Verdict = "No verdict: " + err.Error() + "."
	} else {
		r.Verdict = verdict(f)
	}

	if *asJSON {
		if err := writeJSON(os.Stdout, r); err != nil {
			fmt.Fprintln(os.Stderr, "fastnow-report:", err)
			os.Exit(1)
		}
		return
	}
	print(r, rounds)
}

// reportFlags is the report's command line, on a FlagSet of its own:
// testing.Init registers some thirty -test.* flags on the default one, and
// -h would list them among the report's.
func reportFlags(output io.Writer) (flags *flag.FlagSet, quick, asJSON *bool) {
	flags = flag.NewFlagSet("fastnow-report", flag.ContinueOnError)
	flags.SetOutput(output)
	quick = flags.Bool("quick", false, "fewer rounds and samples (about 10 s)")
	asJSON = flags.Bool("json", false, "print JSON instead of tables (its fields: go doc github.com/fastnow/fastnow/go/cmd/fastnow-report)")
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
			read := c.read
			res := testing.Benchmark(func(b *testing.B) {
				for n := 0; n < b.N; n++ {
					sink += read()
				}
			})
			samplesNs[i] = append(samplesNs[i], float64(res.T.Nanoseconds())/float64(res.N))
		}
	}
	var costs []Cost
	for i, c := range clocks {
		s := append([]float64(nil), samplesNs[i]...)
		sort.Float64s(s)
		costs = append(costs, Cost{c.Name, median(s), s[0], s[len(s)-1], samplesNs[i]})
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

func print(r Report, rounds int) {
	fmt.Printf("fastnow (Go): %s\nGOMAXPROCS %d, %s/%s\n\n", r.Source, r.GOMAXPROCS, runtime.GOOS, runtime.GOARCH)
	fmt.Printf("| clock | ns/call (median of %d rounds) | min–max |\n|---|---:|---:|\n", rounds)
	for _, c := range r.Costs {
		fmt.Printf("| %s | %.2f | %.2f–%.2f |\n", c.Name, c.MedianNs, c.MinNs, c.MaxNs)
	}
	fmt.Println()
	keys := make([]string, 0, len(r.Ratios))
	for k := range r.Ratios {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("- %s: %.2f\n", k, r.Ratios[k])
	}
	pinned := "goroutines pinned to two CPUs"
	if !r.StrictPinned {
		pinned = "goroutines not pinned (fewer than two CPUs, or not Linux)"
	}
	fmt.Printf("\nStrict cross-goroutine test, %d checks, %s:\n", r.StrictChecks, pinned)
	names := []string{"fastnow.Nanotime", "fastnow.MonotonicNanotime", "fastnow.OrderedNanotime"}
	if r.StrictControl != "" {
		names = append(names, r.StrictControl)
	}
	for _, k := range names {
		fmt.Printf("- %s: %d violations\n", k, r.StrictViolations[k])
	}
	switch {
	case r.StrictControl == "":
		fmt.Println("  (no bare counter here to serve as the control: zero violations above cannot be told from a run too short to show any)")
	case r.StrictViolations[r.StrictControl] == 0:
		fmt.Println("  The control showed no violation: this run was too short (or this machine too ordered) to tell; zero violations above prove nothing. Run without -quick.")
	default:
		fmt.Println("  The control fails, so the test can: zero violations above mean the clock held.")
	}
	fmt.Printf("UnixNano − time.Now: median %.0f ns, p99 %.0f ns, max %.0f ns\n", r.WallErrorNs["median"], r.WallErrorNs["p99"], r.WallErrorNs["max"])
	fmt.Printf("RecentNanotime age, upkeep 1 ms: median %.3f ms, p99 %.3f ms, max %.3f ms\n", r.StalenessMs["median"], r.StalenessMs["p99"], r.StalenessMs["max"])
	fmt.Printf("First Nanotime() in a fresh process (detection included, no calibration wait): median %.3f ms, max %.3f ms\n", r.FirstCallMs["median"], r.FirstCallMs["max"])
	if r.Boot != nil {
		printBoot(r.Boot)
	}
	if r.ThreadCPU != nil {
		printThreadCPU(r.ThreadCPU)
	}
	fmt.Printf("\nVerdict: %s\n", r.Verdict)
}
