package fastnow

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fastnow/fastnow/go/internal/osclock"
)

// wallMinusMono changes only when the system clock is set (other programs
// on a shared machine may step it while the tests run).
func wallMinusMono() int64 {
	n := time.Now()
	return n.UnixNano() - int64(n.Sub(osclock.Start))
}

// systemWallNow is the system clock the wall tier follows, in Unix
// nanoseconds: time.Now, except on Windows, where time.Now moves in steps
// of the timer interrupt (up to 15.6 ms) and the wall tier follows
// GetSystemTimePreciseAsFileTime (os_windows.go).
func systemWallNow() int64 { return int64(osclock.SystemReal()) }

// sleepAtLeast sleeps until the OS clock fastnow measures against has
// advanced by d (on Windows time.Sleep ends by a coarser clock, and may
// return early by this one).
func sleepAtLeast(d time.Duration) {
	for end := osclock.Mono() + int64(d); osclock.Mono() < end; {
		time.Sleep(time.Duration(end - osclock.Mono()))
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
		// Bracketed: a busy machine may deschedule the goroutine between
		// two reads for longer than the bound.
		before := systemWallNow()
		wall := WallTime().UnixNano()
		after := systemWallNow()
		if wall < before-int64(time.Millisecond) || wall > after+int64(time.Millisecond) {
			return fmt.Errorf("WallTime %d outside [%d, %d] by more than 1 ms", wall, before, after)
		}
		return nil
	})
}

// withReference makes the wall tier's reference f (never the machine's
// clock) until the test ends.
func withReference(t *testing.T, f func() time.Time) {
	osclock.SetReference(f)
	t.Cleanup(func() {
		osclock.SetReference(nil)
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

// The wall tier converts with one state's anchor, never
// combining two (the old code used the precise tier's line with the wall's
// anchor, so every rate refinement moved UnixNano between anchors): a wall
// reading is the state's precise reading plus the same state's wall offset.
func TestWallLineIsTheStates(t *testing.T) {
	if !Supported() {
		t.Skip("the OS source reads the system clock")
	}
	UnixNano()
	proc.published()
	s := *proc.state.Load()
	if s.mode != modeCounter || s.wallOffset == 0 {
		t.Skipf("no wall offset now: %+v", s)
	}
	now := readCounter()
	s.takeover, s.trigger, s.end = min(s.takeover, now), now+1<<40, never
	// A line 1 % faster than the measured one: the wall reading follows it.
	s.line = through(now, s.line.At(now), s.line.Slope+s.line.Slope/100)
	withState(t, s, func() {
		for i := 0; i < 1000; i++ {
			lo := s.line.At(readCounter()) + s.wallOffset
			v := UnixNano()
			hi := s.line.At(readCounter()) + s.wallOffset
			if uint64(v) < lo || uint64(v) > hi {
				t.Fatalf("UnixNano %d outside the state's [%d, %d]", v, lo, hi)
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
