package fastnow

import (
	"sync"
	"sync/atomic"
	"time"
)

// The wall tier: Unix time from the counter and an anchor (counter,
// CLOCK_REALTIME) that is taken again every resync interval, so it follows
// NTP slews continuously and clock steps within one interval — unlike "start
// time + elapsed" clocks, which never follow a step. The anchor is an
// immutable value behind an atomic pointer: a reader never mixes two anchors.
// Like time.Now, it goes backwards when the system clock is stepped back.

type wallAnchor struct {
	ticks uint64
	unix  int64
	next  uint64 // the first read at or past this counter value resyncs
}

var (
	wall         atomic.Pointer[wallAnchor]
	wallMu       sync.Mutex
	wallInterval atomic.Int64
	// wallReference is CLOCK_REALTIME; tests replace it to inject steps
	// without touching the machine's clock.
	wallReference = func() int64 { return time.Now().UnixNano() }
)

// UnixNano returns nanoseconds since 1970-01-01 UTC: about a quarter of the
// cost of time.Now().UnixNano() (see BENCHMARKS.md).
func UnixNano() int64 {
	if state.Load() == stateCounter {
		t := readCounter()
		a := wall.Load()
		if a == nil || t >= a.next {
			a = resyncWall(false)
		}
		scale := cur.Load().scale
		if t >= a.ticks {
			return a.unix + int64(scale.ApplySaturating(t-a.ticks))
		}
		return a.unix - int64(scale.ApplySaturating(a.ticks-t))
	}
	return unixSlow()
}

//go:noinline
func unixSlow() int64 {
	if ensureDecided() == stateCounter {
		return UnixNano()
	}
	return wallReference()
}

// WallTime returns UnixNano as a time.Time (in the local zone, without a
// monotonic reading: use Now for intervals).
func WallTime() time.Time { return time.Unix(0, UnixNano()) }

// resyncWall takes a new anchor; without force, a goroutine that finds
// another already resyncing keeps the current anchor.
func resyncWall(force bool) *wallAnchor {
	if !wallMu.TryLock() {
		if a := wall.Load(); a != nil && !force {
			return a
		}
		wallMu.Lock()
	}
	defer wallMu.Unlock()
	t, u := sampleAgainst(wallReference)
	cal.Lock()
	interval := cal.ticksPerNs.ApplySaturating(uint64(resyncInterval()))
	cal.Unlock()
	a := &wallAnchor{ticks: t, unix: u, next: t + max(interval, 1)}
	wall.Store(a)
	return a
}

// resyncInterval is the wall resync interval; the zero value of wallInterval
// (nothing set) means the default, so importing the package runs nothing.
func resyncInterval() int64 {
	if d := wallInterval.Load(); d != 0 {
		return d
	}
	return int64(time.Second)
}

// SetWallResyncInterval sets how often the wall tier re-anchors to the
// system clock (default 1 s; values below 1 ns mean every read).
func SetWallResyncInterval(d time.Duration) {
	wallInterval.Store(max(int64(d), 1))
	if a := wall.Load(); a != nil {
		wall.Store(&wallAnchor{ticks: a.ticks, unix: a.unix, next: 0})
	}
}

// ResyncWall re-anchors the wall tier now.
func ResyncWall() {
	if ensureDecided() == stateCounter {
		resyncWall(true)
	}
}
