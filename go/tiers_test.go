package fastnow

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// wallMinusMono changes only when the system clock is set (other programs
// on a shared machine may step it while the tests run).
func wallMinusMono() int64 {
	n := time.Now()
	return n.UnixNano() - int64(n.Sub(procStart))
}

// systemWallNow is the system clock the wall tier follows, in Unix
// nanoseconds: time.Now, except on Windows, where time.Now moves in steps
// of the timer interrupt (up to 15.6 ms) and the wall tier follows
// GetSystemTimePreciseAsFileTime (osclock_windows.go).
func systemWallNow() int64 { return int64(systemRealNow()) }

// sleepAtLeast sleeps until the OS clock fastnow measures against has
// advanced by d (on Windows time.Sleep ends by a coarser clock, and may
// return early by this one).
func sleepAtLeast(d time.Duration) {
	for end := monoNow() + int64(d); monoNow() < end; {
		time.Sleep(time.Duration(end - monoNow()))
	}
}

// steady runs f, and again (up to 3 times in all) when it failed while the
// system clock was stepped: tests that compare with time.Now cannot tell a
// step from an error.
func steady(t *testing.T, f func() error) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		before := wallMinusMono()
		err := f()
		step := time.Duration(wallMinusMono() - before)
		if err == nil {
			return
		}
		if step < 100*time.Microsecond && step > -100*time.Microsecond || attempt == 3 {
			t.Fatal(err)
		}
		t.Logf("the system clock was stepped by %v during the run; again", step)
	}
}

func TestUnixNanoAgreesWithTimeNow(t *testing.T) {
	_ = UnixNano()
	steady(t, func() error {
		worst := int64(0)
		for i := 0; i < 1000; i++ {
			before := systemWallNow()
			ours := UnixNano()
			after := systemWallNow()
			worst = max(worst, before-ours, ours-after, 0)
		}
		if worst > 100_000 {
			return fmt.Errorf("UnixNano off by %d ns", worst)
		}
		if d := time.Duration(systemWallNow() - WallTime().UnixNano()); d > time.Millisecond || d < -time.Millisecond {
			return fmt.Errorf("WallTime off by %v", d)
		}
		return nil
	})
}

// withReference makes the wall tier's reference f (never the machine's
// clock) until the test ends.
func withReference(t *testing.T, f func() time.Time) {
	realReference.Store(&f)
	t.Cleanup(func() {
		realReference.Store(nil)
		SetWallResyncInterval(time.Second)
	})
}

// Steps the reference clock and checks the wall tier follows within one
// resync interval, forwards and backwards.
func TestWallFollowsSteps(t *testing.T) {
	if !Supported() {
		t.Skip("the OS source reads the reference directly")
	}
	var offset atomic.Int64
	withReference(t, func() time.Time { return time.Unix(0, systemWallNow()+offset.Load()) })
	interval := 20 * time.Millisecond
	SetWallResyncInterval(interval)
	near := func(want int64) error {
		if d := UnixNano() - want; d > int64(2*time.Millisecond) || d < -int64(2*time.Millisecond) {
			return fmt.Errorf("off by %v", time.Duration(d))
		}
		return nil
	}
	step := int64(10 * time.Second)
	steady(t, func() error {
		offset.Store(step)
		ResyncWall()
		if err := near(systemWallNow() + step); err != nil {
			return err
		}
		offset.Store(2 * step)
		sleepAtLeast(interval + 5*time.Millisecond)
		if err := near(systemWallNow() + 2*step); err != nil {
			return err
		}
		offset.Store(-step)
		sleepAtLeast(interval + 5*time.Millisecond)
		return near(systemWallNow() - step)
	})
}

// Issue 9 item 8: UnixNano is 0 for a system clock before 1970 and
// MaxInt64 after 2262, never negative or wrapped, and so is WallTime's
// value.
func TestUnixNanoClampsAtTheEnds(t *testing.T) {
	var ref atomic.Pointer[time.Time]
	withReference(t, func() time.Time { return *ref.Load() })
	for _, c := range []struct {
		at   time.Time
		want int64
	}{
		{time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC), 0},
		{time.Date(1969, 12, 31, 23, 59, 59, 999_999_999, time.UTC), 0},
		{time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), math.MaxInt64},
		{time.Unix(0, math.MaxInt64-int64(time.Second)), math.MaxInt64 - int64(time.Second)},
	} {
		ref.Store(&c.at)
		ResyncWall()
		for i := 0; i < 100; i++ {
			if got := UnixNano(); got != c.want && !(c.want != 0 && c.want != math.MaxInt64 && got >= c.want) {
				t.Fatalf("reference %v: UnixNano %d, want %d", c.at, got, c.want)
			}
		}
	}
	// In range again: the line is used again at the next update.
	now := time.Now()
	ref.Store(&now)
	ResyncWall()
	if d := UnixNano() - now.UnixNano(); d < 0 || d > int64(time.Second) {
		t.Fatalf("back in range: off by %d", d)
	}
}

// Issue 9 item 7: the wall tier converts with the line published with the
// state, never the precise tier's line (which the old code used, so every
// rate refinement moved UnixNano between anchors).
func TestWallLineIsTheStates(t *testing.T) {
	if !Supported() {
		t.Skip("the OS source reads the system clock")
	}
	UnixNano()
	proc.published()
	s := *proc.state.Load()
	if s.mode != modeCounter || s.wallDeadline == 0 {
		t.Skipf("no wall line now: %+v", s)
	}
	now := readCounter()
	s.trigger, s.end, s.wallDeadline = now+1<<40, never, now+1<<40
	// A precise line 1 % faster than the wall's: it must not matter.
	s.line = Through(now, s.line.At(now), s.line.Slope+s.line.Slope/100)
	withState(t, s, func() {
		for i := 0; i < 1000; i++ {
			lo := s.wall.At(readCounter())
			v := UnixNano()
			hi := s.wall.At(readCounter())
			if uint64(v) < lo || uint64(v) > hi {
				t.Fatalf("UnixNano %d outside the wall line's [%d, %d]", v, lo, hi)
			}
		}
	})
}

// Readers race goroutines that re-anchor on every update: values stay
// within bounds of time.Now (a torn anchor would not) and never jump back by
// more than an anchor correction.
func TestConcurrentResync(t *testing.T) {
	if runtime.GOARCH == "wasm" {
		t.Skip("goroutines are not preempted on wasm: the readers' busy loops would never let the test stop them")
	}
	SetWallResyncInterval(0)
	defer SetWallResyncInterval(time.Second)
	steady(t, func() error {
		var stop atomic.Bool
		var failed atomic.Pointer[error]
		fail := func(err error) { failed.CompareAndSwap(nil, &err) }
		var wg sync.WaitGroup
		for g := 0; g < 3; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				last := int64(0)
				for !stop.Load() {
					before := systemWallNow()
					ours := UnixNano()
					after := systemWallNow()
					if ours+200_000 < before || ours > after+200_000 {
						fail(fmt.Errorf("%d not within [%d, %d]", ours, before, after))
						return
					}
					if last-ours > 50_000 {
						fail(fmt.Errorf("went back %d ns", last-ours))
						return
					}
					last = ours
				}
			}()
		}
		time.Sleep(300 * time.Millisecond)
		stop.Store(true)
		wg.Wait()
		if err := failed.Load(); err != nil {
			return *err
		}
		return nil
	})
}

// goroutinesSettleTo waits up to a second for the number of goroutines to
// come down to n.
func goroutinesSettleTo(n int) int {
	deadline := time.Now().Add(time.Second)
	for runtime.NumGoroutine() > n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return runtime.NumGoroutine()
}

func TestRefreshAndUpkeep(t *testing.T) {
	StopUpkeep()
	SetAutoUpkeep(false)
	defer SetAutoUpkeep(true)
	first := Refresh()
	if RecentNanotime() != first || Recent().Nanotime() != first || RecentUnixNano() == 0 {
		t.Fatal("Refresh did not fill the cache")
	}
	time.Sleep(5 * time.Millisecond)
	if RecentNanotime() != first {
		t.Fatal("no upkeep, no refresh: the cache must not move")
	}
	if _, running := UpkeepResolution(); running || Source().Upkeep {
		t.Fatal("upkeep running")
	}
	base := runtime.NumGoroutine()
	for i := 0; i < 5; i++ {
		if err := StartUpkeep(time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := StartUpkeep(time.Millisecond); err == nil {
			t.Fatal("second StartUpkeep must fail")
		}
		if !Source().Upkeep {
			t.Fatal("Source().Upkeep is false while upkeep runs")
		}
		seen := RecentNanotime()
		time.Sleep(20 * time.Millisecond)
		if RecentNanotime() <= seen {
			t.Fatal("upkeep did not refresh")
		}
		if !StopUpkeep() {
			t.Fatal("StopUpkeep found nothing")
		}
		if n := goroutinesSettleTo(base); n > base {
			t.Fatalf("upkeep goroutines leaked: %d, want %d", n, base)
		}
	}
	if StopUpkeep() || StartUpkeep(0) == nil || Source().Upkeep {
		t.Fatal("StopUpkeep with none running / zero resolution")
	}
}

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
				if RecentUnixNano() < int64(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()) {
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

func TestManualClock(t *testing.T) {
	c := NewManualClock(time.Unix(1_700_000_000, 0))
	var clock Clock = c
	start := clock.Now()
	c.Advance(1500 * time.Millisecond)
	if clock.Since(start) != 1500*time.Millisecond {
		t.Fatalf("Since = %v", clock.Since(start))
	}
	if clock.UnixNano() != 1_700_000_001_500_000_000 {
		t.Fatalf("UnixNano = %d", clock.UnixNano())
	}
	c.Set(time.Unix(0, 0))
	if clock.UnixNano() != 0 || clock.Since(start) != 1500*time.Millisecond {
		t.Fatal("Set must move only the Unix time")
	}
	if System.Since(System.Now()) < 0 {
		t.Fatal("System clock")
	}
}

// The clock watch (Linux): created, armed, and closed with its goroutine.
func TestClockWatchStartsAndStops(t *testing.T) {
	StopUpkeep()
	SetAutoUpkeep(false)
	defer SetAutoUpkeep(true)
	base := runtime.NumGoroutine()
	w := newClockWatch()
	if w == nil {
		if runtime.GOOS == "linux" && !strings.Contains(runtime.GOARCH, "wasm") {
			t.Fatal("no timerfd clock watch on Linux")
		}
		t.Skip("no clock watch on", runtime.GOOS)
	}
	select {
	case <-w.changed:
		t.Fatal("a clock change reported without one")
	case <-time.After(10 * time.Millisecond):
	}
	w.close()
	if n := goroutinesSettleTo(base); n > base {
		t.Fatalf("the watch goroutine leaked: %d, want %d", n, base)
	}
}
