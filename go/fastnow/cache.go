package fastnow

import (
	"sync/atomic"
	"time"
)

// The coarse tier's cache: the readings of the last Refresh, each on a
// cache line of its own. Below both the coarse tier's readers (coarse.go),
// whose first use starts the upkeep goroutine, and that goroutine
// (upkeep.go), which refreshes it.

type paddedInt64 struct {
	_ [64]byte
	v atomic.Int64
	_ [56]byte
}

var recentUnix, recentNanotime paddedInt64

// DefaultResolution is the upkeep period used by auto-start.
const DefaultResolution = time.Millisecond

// Refresh reads the clocks into the cache and returns the new Nanotime: a
// reading every later MonotonicNanotime is at or above, and the wall tier. The cached Nanotime keeps the
// largest value stored, so it never goes back. While a test's ManualClock
// is in use (UseClock) it returns the mock's Nanotime and leaves the cache
// alone.
func Refresh() int64 {
	if c := mocked.Load(); c != nil {
		return c.nanotime()
	}
	return refreshReal()
}

// refreshReal is refreshAs(false): a refresh the program makes.
func refreshReal() int64 { return refreshAs(false) }

// refreshAs is Refresh on the real clocks, by the upkeep goroutine or not. No mock reading ever enters
// the cache, and the cache stays empty while a mock is in use (UseClock
// empties it, so that the one-load fast paths above find 0 and ask
// firstUse, which reads the mock). A refresh that found no mock counts
// itself in refreshing until its last store, and UseClock, having set the
// mock, waits for that count to reach zero before it empties the cache:
// so no real value is stored once UseClock has returned, not even for a
// moment. (The count is raised before the mock is looked at, and UseClock
// reads it after setting the mock, both sequentially consistent: a refresh
// that missed the mock is one UseClock sees.)
func refreshAs(upkeep bool) int64 {
	// A reading that every MonotonicNanotime read after the cache is
	// loaded is at or above, taken without choosing MonotonicNanotime's
	// strategy; the upkeep's writes of the mark never count as the
	// program's contention (readingForCache).
	n := max(readingForCache(upkeep), 1) // never 0, the "unset" value
	refreshing.Add(1)
	defer refreshing.Add(-1)
	if mocked.Load() != nil {
		return n
	}
	if h := refreshHook.Load(); h != nil {
		(*h)("checked")
	}
	for {
		seen := recentNanotime.v.Load()
		if n <= seen {
			n = seen
			break
		}
		if recentNanotime.v.CompareAndSwap(seen, n) {
			break
		}
	}
	// Never 0 (the "unset" value), even for a clock read at its epoch.
	recentUnix.v.Store(max(unixNanoReal(), 1))
	if h := refreshHook.Load(); h != nil {
		(*h)("stored")
	}
	return n
}

// refreshing counts the refreshes between their look for a mock and their
// last store (see refreshReal).
var refreshing atomic.Int32

// refreshHook, for tests, is called by refreshReal once it found no mock
// ("checked") and once it stored ("stored").
var refreshHook atomic.Pointer[func(stage string)]

// emptyRecent empties the coarse tier's cache (UseClock).
func emptyRecent() {
	recentNanotime.v.Store(0)
	recentUnix.v.Store(0)
}
