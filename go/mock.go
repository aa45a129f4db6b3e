package fastnow

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Pointing the package-level functions at a ManualClock, for tests of code
// that calls fastnow.Now or fastnow.UnixNano directly instead of taking a
// Clock.
//
// How it stays off the read path: the package-level functions load
// proc.view, the pointer they load anyway (the published state), and
// UseClock replaces it with mockView, whose zero span and wall deadline
// fail the fast paths' existing checks; only their slow paths look for the
// mock. MonotonicNanotime's strategy word gains a bit (monoMocked) that no
// case of its switch matches. The coarse tier's cache is emptied, so its
// one-load fast paths find the "unset" 0 and ask their slow path. The real
// clocks' state (the published state, the calibration, the upkeep, the
// high-water mark) is never written by a mock: the writer keeps
// publishing to proc.state while a mock is in use, and internal readers
// (the mark, the cache's refreshes) read proc.state.

// mocked is the ManualClock in use, or nil.
var mocked atomic.Pointer[ManualClock]

// mockView is proc.view while a mock is in use.
var mockView = state{mode: modeOS, trigger: never, end: never}

// mockTurn serialises UseClock: one mock at a time in the process.
var mockTurn = make(chan struct{}, 1)

// UseClock points every package-level clock at c until the returned
// function is called: Nanotime, Now, MonotonicNanotime, MonotonicNow,
// OrderedNanotime, OrderedNow, Instant.Elapsed, UnixNano, WallTime,
// RecentNanotime, Recent, RecentUnixNano and Refresh read c, and move only
// when c is advanced or set. In a test:
//
//	clock := fastnow.NewManualClock(time.Unix(1_700_000_000, 0))
//	t.Cleanup(fastnow.UseClock(clock))
//
// It applies to every goroutine of the process, including the ones the
// code under test starts. Uses are serialised: UseClock waits until the
// previous clock's restore function has been called, so tests that each
// use a clock, run in parallel, never see each other's time (and a
// goroutine that calls UseClock twice without restoring in between waits
// for ever). While a clock is in use, tests in the same process that
// use none see it too: keep tests that need real time out of parallel
// runs with those that use a clock, or give them a clock of their own.
//
// A mock never changes the real clocks: calibration and upkeep go on
// meanwhile, Refresh leaves the coarse tier's cache alone (it is refilled
// from the real clocks afterwards), and the readings after restore are
// real readings as if no mock had been used. Instants taken from a mock
// and from the real clocks are on different timelines; do not compare
// them. Source, Supported and Recalibrate keep describing the real clocks.
//
// The returned function may be called more than once; only the first call
// restores. Reads cost nothing extra while no clock is in use (the fast
// paths make the same checks as without this feature); while one is, each
// reading takes c's lock.
func UseClock(c *ManualClock) (restore func()) {
	if c == nil {
		panic("fastnow: UseClock(nil)")
	}
	mockTurn <- struct{}{}
	proc.mu.Lock()
	mocked.Store(c)
	proc.view.Store(&mockView)
	proc.mu.Unlock()
	setMonoMocked(true)
	// A refresh that looked for a mock before it was set may still store
	// real values: wait until none is left (a refresh takes microseconds),
	// so that the cache stays empty from here on.
	for refreshing.Load() != 0 {
		runtime.Gosched()
	}
	emptyRecent()
	var once sync.Once
	return func() {
		once.Do(func() {
			setMonoMocked(false)
			proc.mu.Lock()
			mocked.Store(nil)
			proc.view.Store(proc.state.Load())
			proc.mu.Unlock()
			<-mockTurn
		})
	}
}
