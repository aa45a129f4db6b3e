package fastnow

import (
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
