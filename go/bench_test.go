package fastnow

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"
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
// and data come from L1/L2, L3 or DRAM). It runs only with
// FASTNOW_UPDATE_COSTS=1 and a fixed count (-benchtime 200x): the memory
// touched between updates is not timed, and at the default benchtime it
// would take hours. `make figures-go` runs it so.
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
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					for j := 0; j < mib<<20; j += 64 {
						other[j]++
					}
					b.StartTimer()
					tk.readerUpdate(kind.check)
				}
			})
		}
	}
}

// readerUpdate runs one state update as a reader at trigger does: a rate
// sample, or (check) a clocksource re-check.
func (tk *timekeeper) readerUpdate(check bool) {
	if !tk.mu.TryLock() {
		return
	}
	defer tk.mu.Unlock()
	tk.k.lastWasCheck = !check
	if check {
		tk.k.nextCheckMono = 0
	}
	tk.update(causeReader)
}
