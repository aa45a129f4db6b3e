package fastnow

import (
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fastnow/fastnow/go/internal/osclock"
)

// Benchmarks beside the standard library and a "fastnano-style" baseline
// (wall time at start plus monotonic time since, the usual shortcut, which
// never follows a clock step). Run: go test -bench . -count 6 -run ^$
// (or `make figures-go`, which feeds several runs to a median table).

var sink int64

func BenchmarkNanotime(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += Nanotime()
	}
}

func BenchmarkMonotonicNanotime(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += MonotonicNanotime()
	}
}

func BenchmarkMonotonicNanotimeParallel(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		var s int64
		for pb.Next() {
			s += MonotonicNanotime()
		}
		atomic.AddInt64(&sink, s)
	})
}

func BenchmarkOrderedNanotime(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += OrderedNanotime()
	}
}

func BenchmarkNowElapsed(b *testing.B) {
	start := Now()
	for i := 0; i < b.N; i++ {
		sink += int64(start.Elapsed())
	}
}

func BenchmarkTimeSince(b *testing.B) {
	start := time.Now()
	for i := 0; i < b.N; i++ {
		sink += int64(time.Since(start))
	}
}

func BenchmarkUnixNano(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += UnixNano()
	}
}

func BenchmarkTimeNowUnixNano(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += time.Now().UnixNano()
	}
}

var benchHLC HLC

func BenchmarkHLCNow(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += int64(benchHLC.Now())
	}
}

func BenchmarkHLCNowParallel(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		var s int64
		for pb.Next() {
			s += int64(benchHLC.Now())
		}
		atomic.AddInt64(&sink, s)
	})
}

// mutexHLC is the other way to build the clock, uhlc's: the same rule
// under a lock taken for every stamp, for the contended comparison.
type mutexHLC struct {
	mu   sync.Mutex
	last uint64
}

func (h *mutexHLC) now() uint64 {
	wall := hlcWordOfNanos(UnixNano())
	h.mu.Lock()
	h.last = max(wall, h.last+1)
	t := h.last
	h.mu.Unlock()
	return t
}

var benchMutexHLC mutexHLC

func BenchmarkMutexStyleHLCNow(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += int64(benchMutexHLC.now())
	}
}

func BenchmarkMutexStyleHLCNowParallel(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		var s int64
		for pb.Next() {
			s += int64(benchMutexHLC.now())
		}
		atomic.AddInt64(&sink, s)
	})
}

func BenchmarkUnixNanoParallel(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		var s int64
		for pb.Next() {
			s += UnixNano()
		}
		atomic.AddInt64(&sink, s)
	})
}

var fastnanoStart = time.Now()
var fastnanoWall = fastnanoStart.UnixNano()

func BenchmarkFastnanoStyleUnixNano(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += fastnanoWall + int64(time.Since(fastnanoStart))
	}
}

func BenchmarkRecentUnixNano(b *testing.B) {
	_ = RecentUnixNano()
	for i := 0; i < b.N; i++ {
		sink += RecentUnixNano()
	}
}

var benchAtomic atomic.Int64

func BenchmarkAtomicLoad(b *testing.B) {
	benchAtomic.Store(1)
	for i := 0; i < b.N; i++ {
		sink += benchAtomic.Load()
	}
}

// BenchmarkReaderUpdate is what a state update costs the reader that does
// it, lock included: a rate sample or a clocksource re-check, each after the
// reader's other work touched 0, 4 or 32 MiB of memory (so the update's code
// and data come from L1/L2, L3 or DRAM). Each update is timed on its own
// with the monotonic clock and the benchmark reports the median and p99 of
// those times (its ns/op, which includes touching the memory, is left out):
// b.StopTimer and b.StartTimer around each update would read the memory
// statistics, which stops the world and leaves every update to run on
// caches that moment emptied. It runs only with FASTNOW_UPDATE_COSTS=1 and a
// fixed count (-benchtime 200x); `make figures-go` runs it so.
func BenchmarkReaderUpdate(b *testing.B) {
	if os.Getenv("FASTNOW_UPDATE_COSTS") != "1" {
		b.Skip("set FASTNOW_UPDATE_COSTS=1 and -benchtime 200x")
	}
	tk := &proc
	tk.finishWarmUp()
	other := make([]byte, 32<<20)
	for _, kind := range []struct {
		name  string
		check bool
	}{{"sample", false}, {"check", true}} {
		for _, mib := range []int{0, 4, 32} {
			b.Run(fmt.Sprintf("%s/%dMiB", kind.name, mib), func(b *testing.B) {
				took := make([]float64, 0, b.N)
				for i := 0; i < b.N; i++ {
					for j := 0; j < mib<<20; j += 64 {
						other[j]++
					}
					start := osclock.Mono()
					tk.readerUpdate(kind.check)
					took = append(took, float64(osclock.Mono()-start))
				}
				slices.Sort(took)
				b.ReportMetric(0, "ns/op")
				// The upper of the two middle updates (the Rust figures
				// average them: the same to within one update's spread).
				b.ReportMetric(took[len(took)/2], "median-ns")
				// Nearest rank, as the Rust figures: with 200 updates, the
				// third slowest.
				b.ReportMetric(took[int(math.Round(0.99*float64(len(took)-1)))], "p99-ns")
			})
		}
	}
}

// readerUpdate runs one state update as a reader at trigger does: a rate
// sample, or (check) a clocksource re-check and a sample, as a reader whose
// reading showed cause for one makes (checkWanted).
func (tk *timekeeper) readerUpdate(check bool) {
	if !tk.mu.TryLock() {
		return
	}
	defer tk.mu.Unlock()
	tk.k.checkWanted = check
	if check {
		tk.k.nextCheckMono = 0
	}
	tk.updateAsReader(causeReader)
}

// BenchmarkColdCall is what a reader's state update costs when it comes as
// it does in a program: after about a second in which its code and data
// were not used, beside time.Now(), the OS clock read a program would make
// instead, in the same conditions. Each round makes every call once, each
// after a second of a loop that reads only the counter (so nothing else is
// warmed), timed with two bare counter reads, then once more at once (the
// warm cost); the calls take turns, starting one further each round, so no
// call always follows the same neighbour. It reports, per call, the
// median of the cold times and of the warm ones. It runs only with
// FASTNOW_UPDATE_COSTS=1 (-benchtime 9x: about 50 s); `make figures-go`
// runs it.
func BenchmarkColdCall(b *testing.B) {
	if os.Getenv("FASTNOW_UPDATE_COSTS") != "1" {
		b.Skip("set FASTNOW_UPDATE_COSTS=1 and -benchtime 9x")
	}
	info := Source()
	if readCounter() == 0 || info.FreqHz == 0 {
		b.Skip("no bare counter read on this machine")
	}
	tk := &proc
	tk.finishWarmUp()
	var cs clocksourceFile
	cs.read() // open, and let the first read of the file be no call's
	type coldCall struct {
		name string
		call func()
	}
	calls := []coldCall{
		{"nothing", func() {}},
		{"time.Now", func() { sink += time.Now().UnixNano() }},
		{"sample", func() { tk.readerUpdate(false) }},
	}
	if kernelCounterName != "" { // where a clocksource file is read
		calls = append(calls, coldCall{"pread", func() { cs.read() }})
	}
	calls = append(calls, coldCall{"check", func() { tk.readerUpdate(true) }})
	toNs := func(ticks uint64) float64 { return float64(ticks) * 1e9 / float64(info.FreqHz) }
	idle := info.FreqHz // a second of ticks
	cold := make([][]float64, len(calls))
	warm := make([][]float64, len(calls))
	for round := 0; round < b.N; round++ {
		for k := range calls {
			i := (round + k) % len(calls)
			for start := readCounter(); readCounter()-start < idle; {
			}
			t0 := readCounter()
			calls[i].call()
			t1 := readCounter()
			calls[i].call()
			t2 := readCounter()
			cold[i] = append(cold[i], toNs(t1-t0))
			warm[i] = append(warm[i], toNs(t2-t1))
		}
	}
	b.ReportMetric(0, "ns/op")
	for i, c := range calls {
		slices.Sort(cold[i])
		slices.Sort(warm[i])
		b.ReportMetric(cold[i][len(cold[i])/2], c.name+"-cold-ns")
		b.ReportMetric(warm[i][len(warm[i])/2], c.name+"-warm-ns")
	}
}

// BenchmarkReadTail shows the slowest reads, with readers doing the state
// updates and with the upkeep goroutine doing them, the two ways one after
// the other for each call: every call is timed (from the monotonic reading
// before it to the next, so one such reading, about 35 ns, is included),
// and the benchmark reports how many calls per second took at least 1 µs
// and 10 µs, the 99.99th percentile and the slowest, and apart from those
// the calls during which a state was published (without upkeep, the ones
// that did an update): how many, their median and the slowest. Each
// iteration is 10 ms of back-to-back calls (-benchtime 200x: 2 s, about
// two updates of each kind without upkeep). The "nothing" rows time no
// call at all: what interrupts and the hypervisor add to any code. It runs
// only with FASTNOW_UPDATE_COSTS=1; `make figures-go` runs it.
func BenchmarkReadTail(b *testing.B) {
	if os.Getenv("FASTNOW_UPDATE_COSTS") != "1" {
		b.Skip("set FASTNOW_UPDATE_COSTS=1 and -benchtime 200x")
	}
	start := Now()
	calls := []struct {
		name string
		call func()
	}{
		{"nothing", func() {}},
		{"Nanotime", func() { sink += Nanotime() }},
		{"Elapsed", func() { sink += int64(start.Elapsed()) }},
		{"UnixNano", func() { sink += UnixNano() }},
	}
	defer StopUpkeep()
	for _, c := range calls {
		for _, mode := range []string{"readers", "upkeep"} {
			StopUpkeep()
			if mode == "upkeep" {
				if err := StartUpkeep(time.Millisecond); err != nil {
					b.Fatal(err)
				}
			}
			b.Run(c.name+"/"+mode, func(b *testing.B) {
				const bucketNs, buckets = 10, 100_000 // 10 ns buckets up to 1 ms, then the rest
				hist := make([]uint64, buckets+1)
				var n, slowest uint64
				var publishing []float64
				seen := proc.state.Load()
				for i := 0; i < b.N; i++ {
					before := osclock.Mono()
					until := before + 10_000_000
					for before < until {
						c.call()
						after := osclock.Mono()
						took := uint64(after - before)
						hist[min(took/bucketNs, buckets)]++
						slowest = max(slowest, took)
						n++
						// Each publish stores a new state pointer.
						if s := proc.state.Load(); s != seen {
							publishing = append(publishing, float64(took))
							seen = s
						}
						before = after
					}
				}
				atLeast := func(ns uint64) (k uint64) {
					for _, x := range hist[ns/bucketNs:] {
						k += x
					}
					return k
				}
				// Nearest rank: the first bucket where the count reaches it;
				// past 1 ms, the slowest call.
				p9999 := float64(slowest)
				rank, count := max(uint64(math.Ceil(0.9999*float64(n))), 1), uint64(0)
				for i, x := range hist[:buckets] {
					if count += x; count >= rank {
						p9999 = float64(i * bucketNs)
						break
					}
				}
				secs := float64(b.N) / 100
				b.ReportMetric(0, "ns/op")
				b.ReportMetric(float64(atLeast(1_000))/secs, "≥1µs/s")
				b.ReportMetric(float64(atLeast(10_000))/secs, "≥10µs/s")
				b.ReportMetric(p9999, "p99.99-ns")
				b.ReportMetric(float64(slowest), "max-ns")
				b.ReportMetric(float64(len(publishing)), "publishing-calls")
				if len(publishing) > 0 {
					slices.Sort(publishing)
					b.ReportMetric(publishing[len(publishing)/2], "publishing-median-ns")
					b.ReportMetric(publishing[len(publishing)-1], "publishing-max-ns")
				}
			})
		}
	}
}
