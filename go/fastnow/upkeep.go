package fastnow

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// The upkeep goroutine: it refreshes the coarse tier and does every state
// update, so that readers only load (spec/SEMANTICS.md, "Coarse tier"). On
// Linux the kernel wakes it when the system clock is set (upkeep_linux.go).
//
// Forked processes need nothing here (the Rust crate has a fork hook): Go
// never runs Go code in a forked child. syscall.ForkExec (behind os/exec and
// os.StartProcess) runs only raw system calls between fork and exec, and the
// new program starts with its own memory, so no fastnow state can be
// half-copied into it. The descriptors fastnow keeps open (the clocksource
// file, the upkeep's timerfd) are close-on-exec, so the new program inherits
// none of them either.

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

// ErrUpkeepRunning is returned by StartUpkeep while an upkeep goroutine runs.
var ErrUpkeepRunning = errors.New("fastnow: upkeep already running; call StopUpkeep first")

// StartUpkeep starts the goroutine that refreshes the coarse tier every
// resolution (which must be positive) and does the precise and wall tiers'
// state updates. Without it those updates (a sample of the clocks, or a
// re-check of the kernel's clocksource) fall on the reader that finds one
// due, about twice a second, and that read takes as long as the update
// (the repository's BENCHMARKS.md has the figures): programs that cannot
// have one read take that long run the upkeep.
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
		refreshAs(true)
		next := proc.upkeepTurn(wasSet)
		if wasSet {
			refreshAs(true) // the cached Unix time follows the step at once
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
