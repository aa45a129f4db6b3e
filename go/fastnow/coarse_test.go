package fastnow

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Issue 9 item 6: RecentUnixNano returned 0 (1970) while another
// goroutine's first Refresh had stored the Nanotime but not yet the Unix
// time. The cache in exactly that state:
func TestRecentUnixNanoDuringTheFirstRefresh(t *testing.T) {
	StopUpkeep()
	SetAutoUpkeep(false)
	defer SetAutoUpkeep(true)
	recentNanotime.v.Store(max(Nanotime(), 1))
	recentUnix.v.Store(0)
	if v := RecentUnixNano(); v <= 0 {
		t.Fatalf("RecentUnixNano = %d during the first refresh", v)
	}
	recentNanotime.v.Store(0)
	recentUnix.v.Store(1_700_000_000_000_000_000)
	if v := RecentNanotime(); v <= 0 {
		t.Fatalf("RecentNanotime = %d during the first refresh", v)
	}
}

// ... and racing goroutines in fresh processes, as a program starts.
func TestRecentIsNeverUnsetAtStart(t *testing.T) {
	if runtime.GOARCH == "wasm" {
		t.Skip("this target cannot start processes")
	}
	for i := 0; i < 3; i++ {
		if out, ok := runChild(t, "TestChildRecentAtStart", nil); !ok {
			t.Fatalf("child:\n%s", out)
		}
	}
}

func TestChildRecentAtStart(t *testing.T) {
	inChild(t)
	// A set cache holds a refresh from this child's short life: an unset
	// one reads 0, decades before the system clock (a date written here
	// would assume the machine's clock).
	floor := systemWallNow() - int64(time.Minute)
	start := make(chan struct{})
	var zeros atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if g%2 == 0 {
				if RecentNanotime() <= 0 {
					zeros.Add(1)
				}
			}
			for i := 0; i < 100; i++ {
				if RecentUnixNano() < floor {
					zeros.Add(1)
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	if n := zeros.Load(); n != 0 {
		t.Fatalf("%d readings of an unset cache", n)
	}
}

// The coarse tier is never ahead of the ordered clocks: MonotonicNanotime
// and OrderedNanotime read after RecentNanotime returned, on another
// goroutine than the one refreshing, are at least its value; and the cached
// values a goroutine sees never go back.
func TestRecentIsNeverAheadOfOrderedReads(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two cores to race")
	}
	StopUpkeep()
	SetAutoUpkeep(false)
	defer SetAutoUpkeep(true)
	check := func(read func() int64, checks int) (ahead, back int) {
		var stop atomic.Bool
		done := make(chan struct{})
		go func() {
			defer close(done)
			for !stop.Load() {
				Refresh()
			}
		}()
		var lastCached int64
		for i := 0; i < checks; i++ {
			cached := RecentNanotime()
			if read() < cached {
				ahead++
			}
			if cached < lastCached {
				back++
			}
			lastCached = cached
		}
		stop.Store(true)
		<-done
		return ahead, back
	}
	for name, read := range map[string]func() int64{"MonotonicNanotime": MonotonicNanotime, "OrderedNanotime": OrderedNanotime} {
		if ahead, back := check(read, 300_000); ahead != 0 || back != 0 {
			t.Errorf("%s: %d readings below the cache read before them; the cache went back %d times", name, ahead, back)
		}
	}
	// The check catches a clock that runs behind the cache.
	if ahead, _ := check(func() int64 { return Nanotime() - int64(time.Second) }, 10_000); ahead == 0 {
		t.Error("the check cannot fail")
	}
}
