package fastnow

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// The coarse tier (spec/SEMANTICS.md, "Coarse tier"): the time of the last
// refresh, for one atomic load. Kept fresh by an upkeep goroutine (started
// by the first Recent* call, never at import, unless SetAutoUpkeep(false);
// or explicitly with StartUpkeep) or by Refresh, for event loops that
// refresh once per iteration. While upkeep runs it also does the precise and
// wall tiers' state updates (rate measurements, wall re-anchoring, the
// kernel clocksource check), so readers only load, and on Linux the kernel
// wakes it when the system clock is set, so the wall tier follows a step
// within milliseconds. Without upkeep the values stay at the last Refresh
// (the first read in the process refreshes, so they are never unset).
//
// Never ahead of real time: a cached value is a reading already taken (the
// cached Nanotime is a MonotonicNanotime reading), so MonotonicNanotime and
// OrderedNanotime read after RecentNanotime returned, on any goroutine that
// observed it, are at least RecentNanotime(). A plain Nanotime read is not
// ordered after the load and may come out earlier by the CPU's speculation
// window.

type paddedInt64 struct {
	_ [64]byte
	v atomic.Int64
	_ [56]byte
}

var recentUnix, recentNanotime paddedInt64

// DefaultResolution is the upkeep period used by auto-start.
const DefaultResolution = time.Millisecond

// RecentUnixNano returns the Unix nanoseconds of the last refresh (one
// atomic load).
func RecentUnixNano() int64 {
	if v := recentUnix.v.Load(); v != 0 {
		return v
	}
	return firstUse(&recentUnix)
}

// RecentNanotime returns the Nanotime of the last refresh (one atomic load).
// MonotonicNanotime and OrderedNanotime read after it returned are at least
// its value, on any goroutine that observed it.
func RecentNanotime() int64 {
	if v := recentNanotime.v.Load(); v != 0 {
		return v
	}
	return firstUse(&recentNanotime)
}

// Recent returns the Instant of the last refresh.
func Recent() Instant { return Instant{RecentNanotime()} }

// Refresh reads the clocks into the cache and returns the new Nanotime: a
// MonotonicNanotime reading and the wall tier. The cached Nanotime keeps the
// largest value stored, so it never goes back. While a test's ManualClock
// is in use (UseClock) it returns the mock's Nanotime and leaves the cache
// alone.
func Refresh() int64 {
	if c := mocked.Load(); c != nil {
		return c.nanotime()
	}
	return refreshReal()
}

// refreshReal is Refresh on the real clocks. No mock reading ever enters
// the cache, and the cache stays empty while a mock is in use (UseClock
// empties it, so that the one-load fast paths above find 0 and ask
// firstUse, which reads the mock). A refresh that found no mock counts
// itself in refreshing until its last store, and UseClock, having set the
// mock, waits for that count to reach zero before it empties the cache:
// so no real value is stored once UseClock has returned, not even for a
// moment. (The count is raised before the mock is looked at, and UseClock
// reads it after setting the mock, both sequentially consistent: a refresh
// that missed the mock is one UseClock sees.)
func refreshReal() int64 {
	n := max(monotonicReal(), 1) // never 0, the "unset" value
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

var (
	// noAutoUpkeep is set once the first use has started upkeep, or when
	// SetAutoUpkeep(false) says not to; its zero value means "start it", so
	// importing the package runs nothing.
	noAutoUpkeep atomic.Bool
	upkeepMu     sync.Mutex
	upkeep       *upkeeper
)

type upkeeper struct {
	resolution time.Duration
	stop, done chan struct{}
}

// firstUse fills the cache on the first read and starts auto upkeep. It
// always refreshes: a value another goroutine's refresh has not stored yet
// must not be read as unset or as 1970.
//
// While a test's ManualClock is in use, the cache is empty and this reads
// the mock instead (starting nothing).
//
//go:noinline
func firstUse(cached *paddedInt64) int64 {
	for {
		if c := mocked.Load(); c != nil {
			if cached == &recentUnix {
				return c.UnixNano()
			}
			return c.nanotime()
		}
		refreshReal()
		if !noAutoUpkeep.Swap(true) {
			_ = StartUpkeep(DefaultResolution) // already running is fine
		}
		if v := cached.v.Load(); v != 0 {
			return v
		}
	}
}

// ErrUpkeepRunning is returned by StartUpkeep while an upkeep goroutine runs.
var ErrUpkeepRunning = errors.New("fastnow: upkeep already running; call StopUpkeep first")

// StartUpkeep starts the goroutine that refreshes the coarse tier every
// resolution (which must be positive) and does the precise and wall tiers'
// state updates.
func StartUpkeep(resolution time.Duration) error {
	if resolution <= 0 {
		return fmt.Errorf("fastnow: upkeep resolution must be positive, got %v", resolution)
	}
	upkeepMu.Lock()
	defer upkeepMu.Unlock()
	if upkeep != nil {
		return fmt.Errorf("%w (resolution %v)", ErrUpkeepRunning, upkeep.resolution)
	}
	refreshReal()
	u := &upkeeper{resolution: resolution, stop: make(chan struct{}), done: make(chan struct{})}
	proc.setUpkeep(true)
	go u.run()
	upkeep = u
	return nil
}

func (u *upkeeper) run() {
	defer close(u.done)
	watch := newClockWatch() // nil where the kernel cannot tell
	var clockSet <-chan struct{}
	if watch != nil {
		defer watch.close()
		clockSet = watch.changed
	}
	timer := time.NewTimer(u.resolution)
	defer timer.Stop()
	wasSet := false
	for {
		refreshReal()
		next := proc.upkeepTurn(wasSet)
		if wasSet {
			refreshReal() // the cached Unix time follows the step at once
		}
		// Until the next refresh, or the next state update if sooner.
		sleep := u.resolution
		if now := proc.clocks.mono(); next <= now {
			sleep = 0
		} else if d := next - now; d < uint64(sleep) {
			sleep = time.Duration(d)
		}
		timer.Reset(sleep)
		wasSet = false
		select {
		case <-u.stop:
			return
		case <-timer.C:
		case <-clockSet:
			wasSet = true
		}
	}
}

// StopUpkeep stops the upkeep goroutine and waits for it to exit; it
// reports whether one was running. Cached values then stay as last
// refreshed, and readers do the state updates again.
func StopUpkeep() bool {
	upkeepMu.Lock()
	defer upkeepMu.Unlock()
	u := upkeep
	if u == nil {
		return false
	}
	upkeep = nil
	close(u.stop)
	<-u.done
	proc.setUpkeep(false)
	return true
}

// UpkeepResolution returns the running upkeep's resolution, if one runs.
func UpkeepResolution() (time.Duration, bool) {
	upkeepMu.Lock()
	defer upkeepMu.Unlock()
	if upkeep == nil {
		return 0, false
	}
	return upkeep.resolution, true
}

// SetAutoUpkeep sets whether the first Recent* call starts upkeep at
// DefaultResolution (default true). Event loops that call Refresh turn it off.
func SetAutoUpkeep(enabled bool) { noAutoUpkeep.Store(!enabled) }
