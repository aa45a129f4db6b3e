package fastnow

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// The coarse tier: the time of the last refresh, for one atomic load. Kept
// fresh by an upkeep goroutine — started by the first Recent* call (never in
// init) unless SetAutoUpkeep(false), or explicitly with StartUpkeep — or by
// Refresh, for event loops that refresh once per iteration. Cached values
// are readings already taken, so they are never ahead of real time; while
// upkeep runs they are at most one resolution plus scheduling delay old.
// Without upkeep they stay at the last Refresh (the first read refreshes).

type paddedInt64 struct {
	_ [64]byte
	v atomic.Int64
	_ [56]byte
}

var recentUnix, recentNanotime paddedInt64

// DefaultResolution is the upkeep period used by auto-start.
const DefaultResolution = time.Millisecond

// RecentUnixNano returns the Unix nanoseconds of the last refresh.
func RecentUnixNano() int64 {
	if v := recentUnix.v.Load(); v != 0 {
		return v
	}
	return firstUse(&recentUnix)
}

// RecentNanotime returns the Nanotime of the last refresh.
func RecentNanotime() int64 {
	if v := recentNanotime.v.Load(); v != 0 {
		return v
	}
	return firstUse(&recentNanotime)
}

// Recent returns the Instant of the last refresh.
func Recent() Instant { return Instant{RecentNanotime()} }

// Refresh reads the clocks into the cache and returns the new Nanotime.
// The cached Nanotime keeps the largest value stored, so it never goes back.
func Refresh() int64 {
	n := Nanotime()
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
	recentUnix.v.Store(max(UnixNano(), 1))
	return n
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

// firstUse fills the cache on the first read and starts auto upkeep.
//
//go:noinline
func firstUse(cached *paddedInt64) int64 {
	if recentNanotime.v.Load() == 0 {
		Refresh()
	}
	if !noAutoUpkeep.Swap(true) {
		_ = StartUpkeep(DefaultResolution) // already running is fine
	}
	return cached.v.Load()
}

// ErrUpkeepRunning is returned by StartUpkeep while an upkeep goroutine runs.
var ErrUpkeepRunning = errors.New("fastnow: upkeep already running; call StopUpkeep first")

// StartUpkeep starts the goroutine that refreshes the coarse tier every
// resolution (which must be positive).
func StartUpkeep(resolution time.Duration) error {
	if resolution <= 0 {
		return fmt.Errorf("fastnow: upkeep resolution must be positive, got %v", resolution)
	}
	upkeepMu.Lock()
	defer upkeepMu.Unlock()
	if upkeep != nil {
		return fmt.Errorf("%w (resolution %v)", ErrUpkeepRunning, upkeep.resolution)
	}
	Refresh()
	u := &upkeeper{resolution: resolution, stop: make(chan struct{}), done: make(chan struct{})}
	go u.run()
	upkeep = u
	return nil
}

func (u *upkeeper) run() {
	defer close(u.done)
	tick := time.NewTicker(u.resolution)
	defer tick.Stop()
	for {
		select {
		case <-u.stop:
			return
		case <-tick.C:
			Refresh()
		}
	}
}

// StopUpkeep stops the upkeep goroutine and waits for it to exit; it
// reports whether one was running. Cached values then stay as last refreshed.
func StopUpkeep() bool {
	upkeepMu.Lock()
	u := upkeep
	upkeep = nil
	upkeepMu.Unlock()
	if u == nil {
		return false
	}
	close(u.stop)
	<-u.done
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
