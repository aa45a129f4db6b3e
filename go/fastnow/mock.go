package fastnow

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Clock is what code that wants testable time takes instead of calling the
// package functions directly; System reads the real clocks and ManualClock
// moves only when told. Both answer Since alike: Now().Sub(i), as the
// package's Since and time.Since, negative for an Instant later than now.
type Clock interface {
	Now() Instant
	Since(Instant) time.Duration
	UnixNano() int64
}

type systemClock struct{}

// System is the Clock of the package functions.
var System Clock = systemClock{}

func (systemClock) Now() Instant                  { return Now() }
func (systemClock) Since(i Instant) time.Duration { return Since(i) }
func (systemClock) UnixNano() int64               { return UnixNano() }
func (systemClock) String() string                { return "fastnow.System" }

// ManualClock is a Clock for tests: its time moves only by Advance, Set
// and Suspend. Safe for concurrent use. ThreadCPUNanotime is not mocked
// (neither by UseClock nor by the fastnow_time tag): CPU time cannot be set
// like a clock.
type ManualClock struct {
	mu        sync.Mutex
	mono      int64
	unix      int64
	suspended int64 // the time Suspend simulated, which BootNanotime adds
}

// NewManualClock returns a clock whose Unix time is start and whose
// monotonic time starts at one second. A start outside the years
// 1678-2262 (the int64 range of Unix nanoseconds) is taken as the nearer
// end of that range.
func NewManualClock(start time.Time) *ManualClock {
	return &ManualClock{mono: int64(time.Second), unix: unixNanoSat(start)}
}

// Advance moves both the monotonic and the Unix time forward by d. Each
// stops at its largest value (math.MaxInt64 nanoseconds) rather than
// wrapping: the clock never steps back, however far it is advanced. A
// negative d panics (the monotonic time never goes back; Set steps the
// Unix time).
func (c *ManualClock) Advance(d time.Duration) {
	if d < 0 {
		panic("fastnow: ManualClock.Advance with a negative duration")
	}
	c.mu.Lock()
	c.mono = addSat(c.mono, int64(d))
	c.unix = addSat(c.unix, int64(d))
	c.mu.Unlock()
}

// Suspend simulates suspending the machine for d: the Unix time and the
// boot clock (BootNanotime, BootNow, the clock's BootNow) move forward by d,
// the monotonic time (Nanotime, Now and the rest) does not, as a real
// suspend moves CLOCK_REALTIME and CLOCK_BOOTTIME but not CLOCK_MONOTONIC. A
// boot reading is the monotonic reading plus the time suspended so far.
// Each stops at its largest value, as with Advance; a negative d panics.
func (c *ManualClock) Suspend(d time.Duration) {
	if d < 0 {
		panic("fastnow: ManualClock.Suspend with a negative duration")
	}
	c.mu.Lock()
	c.suspended = addSat(c.suspended, int64(d))
	c.unix = addSat(c.unix, int64(d))
	c.mu.Unlock()
}

// BootNow returns the clock's boot time as a BootInstant: its monotonic
// time plus the time Suspend simulated.
func (c *ManualClock) BootNow() BootInstant { return BootInstant{c.bootNanotime()} }

func (c *ManualClock) bootNanotime() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return addSat(c.mono, c.suspended)
}

// Set steps the Unix time (as if the system clock were set); the monotonic
// time is unchanged. A t outside the int64 range of Unix nanoseconds is
// taken as the nearer end of that range, never a wrapped value.
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	c.unix = unixNanoSat(t)
	c.mu.Unlock()
}

// The times whose Unix nanoseconds are the ends of the int64 range.
var minUnixTime, maxUnixTime = time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64)

// unixNanoSat is t.UnixNano(), saturated to the int64 range (time.Time's
// own is undefined outside it, and wraps).
func unixNanoSat(t time.Time) int64 {
	switch {
	case t.Before(minUnixTime):
		return math.MinInt64
	case t.After(maxUnixTime):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// Now returns the clock's monotonic time as an Instant.
func (c *ManualClock) Now() Instant { return Instant{c.nanotime()} }

func (c *ManualClock) nanotime() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mono
}

// Since returns the clock's time since i (saturated, as Instant.Sub).
func (c *ManualClock) Since(i Instant) time.Duration { return c.Now().Sub(i) }

// UnixNano returns the clock's Unix time.
func (c *ManualClock) UnixNano() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unix
}

// String shows both of the clock's times: the monotonic one as a duration
// (as Instant.String does) and the Unix time in RFC 3339, UTC.
func (c *ManualClock) String() string {
	c.mu.Lock()
	mono, unix := c.mono, c.unix
	c.mu.Unlock()
	return fmt.Sprintf("ManualClock(monotonic %v, Unix %s)", time.Duration(mono), time.Unix(0, unix).UTC().Format(time.RFC3339Nano))
}

// Pointing the package-level functions at a ManualClock, for tests of code
// that calls fastnow.Now or fastnow.UnixNano directly instead of taking a
// Clock.
//
// How it stays off the read path: the package-level functions load
// proc.view, the pointer they load anyway (the published counter state,
// timekeeper.view), and UseClock sets it to nil, which fails the fast
// paths' one check; only the read base's slow path looks for the mock
// (read.go, viewSlow), which gives the mock's reading of the clock asked
// for (offsets.go, clock.mocked). MonotonicNanotime's strategy word gains
// a bit (monoMocked) that no case of its switch matches. The coarse tier's cache is emptied, so its
// one-load fast paths find the "unset" 0 and ask their slow path. The real
// clocks' state (the published state, the calibration, the upkeep, the
// high-water mark) is never written by a mock: the writer keeps
// publishing to proc.state while a mock is in use, and internal readers
// (the mark, the cache's refreshes) read proc.state.
//
// The read base's slow path (read.go, viewSlow) looks at mocked, and off
// the read paths MonotonicNanotime's strategy choice (precise.go) and the
// coarse tier's first use and refresh (coarse.go, cache.go): UseClock takes
// over the package functions themselves, so the functions must be the ones
// to look.

// mocked is the ManualClock in use, or nil.
var mocked atomic.Pointer[ManualClock]

// mockTurn serialises UseClock: one mock at a time in the process.
var mockTurn = make(chan struct{}, 1)

// mockHolder is the goroutine that holds mockTurn (0: none), so that a
// UseClock that could only wait for ever panics instead.
var mockHolder atomic.Int64

// goroutineID is the calling goroutine's number and the number of the
// goroutine that created it (0 where the runtime does not say), as its
// stack trace names them ("goroutine 18 [running]:", "created by … in
// goroutine 7"); and whether testing.(*T).Run created it. Only UseClock's
// waiting path reads this.
func goroutineID() (id, creator int64, subtest bool) {
	buf := make([]byte, 64<<10)
	trace := string(buf[:runtime.Stack(buf, false)])
	fmt.Sscanf(trace, "goroutine %d ", &id)
	if at := strings.LastIndex(trace, "\ncreated by "); at >= 0 {
		line, _, _ := strings.Cut(trace[at+1:], "\n")
		subtest = strings.HasPrefix(line, "created by testing.(*T).Run")
		if _, n, ok := strings.Cut(line, " in goroutine "); ok {
			fmt.Sscanf(n, "%d", &creator)
		}
	}
	return id, creator, subtest
}

// UseClock points every package-level clock at c until the returned
// function is called: Nanotime, Now, MonotonicNanotime, MonotonicNow,
// OrderedNanotime, OrderedNow, Instant.Elapsed, BootNanotime, BootNow,
// BootInstant.Elapsed, UnixNano, WallTime,
// RecentNanotime, Recent, RecentUnixNano and Refresh read c, and move only
// when c is advanced or set. In a test:
//
//	clock := fastnow.NewManualClock(time.Unix(1_700_000_000, 0))
//	t.Cleanup(fastnow.UseClock(clock))
//
// It applies to every goroutine of the process, including the ones the
// code under test starts. Uses are serialised: UseClock waits until the
// previous clock's restore function has been called, so tests that each
// use a clock, run in parallel, never see each other's time. A UseClock
// that could only wait for ever panics, saying what to do: a goroutine
// calling it again before restoring the clock it set, and a subtest calling
// it while the test that runs it holds one (the test's clock is restored
// only when it ends, after its subtests). While a clock is in use, tests in
// the same process that
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
	select {
	case mockTurn <- struct{}{}:
	default:
		// Another clock is in use: wait for its restore, unless the one
		// who must call it is waiting here.
		me, creator, subtest := goroutineID()
		switch holder := mockHolder.Load(); {
		case holder == me:
			panic("fastnow: UseClock called again before the clock this goroutine set was restored: call the " +
				"function the first UseClock returned first (t.Cleanup(fastnow.UseClock(c)) restores it when the " +
				"test ends), or advance the clock already in use instead of setting another")
		case subtest && holder == creator:
			panic("fastnow: UseClock in a subtest while its test's clock is in use: the test's clock is restored " +
				"only when the test ends, after its subtests, so this would wait for ever; let the subtests use the " +
				"test's clock, or restore it (call the function UseClock returned) before t.Run")
		}
		mockTurn <- struct{}{}
	}
	id, _, _ := goroutineID()
	mockHolder.Store(id)
	proc.mu.Lock()
	mocked.Store(c)
	proc.view.Store(nil)
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
			proc.view.Store(viewOf(proc.state.Load()))
			proc.mu.Unlock()
			mockHolder.Store(0)
			<-mockTurn
		})
	}
}
