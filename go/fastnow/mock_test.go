package fastnow

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fastnow/fastnow/go/internal/osclock"
)

// every reads every package-level clock: the precise tier's (as
// nanoseconds), then the wall and coarse tiers'.
func every() (precise []int64, wall []int64) {
	start := Now()
	precise = []int64{
		Nanotime(), Now().Nanotime(), MonotonicNanotime(), MonotonicNow().Nanotime(),
		OrderedNanotime(), OrderedNow().Nanotime(), RecentNanotime(), Recent().Nanotime(),
		Refresh(), start.Nanotime() + int64(start.Elapsed()),
		BootNanotime(), BootNow().Nanotime(),
	}
	wall = []int64{UnixNano(), WallTime().UnixNano(), RecentUnixNano()}
	return precise, wall
}

// expect checks that every clock reads the mock's time, on the goroutine
// that calls it.
func expect(mono, unix int64) error {
	precise, wall := every()
	for i, v := range precise {
		if v != mono {
			return errorf("precise clock %d read %d, want the mock's %d", i, v, mono)
		}
	}
	for i, v := range wall {
		if v != unix {
			return errorf("wall clock %d read %d, want the mock's %d", i, v, unix)
		}
	}
	return nil
}

func errorf(format string, args ...any) error {
	return fmt.Errorf(format, args...)
}

// Issue item: every tier reads the mock, on the test's goroutine and on the
// ones the code under test starts; the real clocks come back on restore.
func TestUseClockEveryTier(t *testing.T) {
	for round := 0; round < 2; round++ { // with and without upkeep running
		if round == 1 {
			StopUpkeep()
			SetAutoUpkeep(false)
		}
		clock := NewManualClock(time.Unix(1_700_000_000, 0))
		restore := UseClock(clock)
		if err := expect(int64(time.Second), 1_700_000_000_000_000_000); err != nil {
			restore()
			t.Fatal(err)
		}
		clock.Advance(1500 * time.Millisecond)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- expect(int64(2500*time.Millisecond), 1_700_000_001_500_000_000)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				restore()
				t.Fatal(err)
			}
		}
		clock.Set(time.Unix(0, 5))
		if err := expect(int64(2500*time.Millisecond), 5); err != nil {
			restore()
			t.Fatal(err)
		}
		restore()
		restore() // a second call does nothing
		checkReal(t)
	}
	SetAutoUpkeep(true)
}

// checkReal checks that every clock reads real time again.
func checkReal(t *testing.T) {
	t.Helper()
	mono := osclock.Mono()
	precise, wall := every()
	for i, v := range precise {
		if d := v - mono; d < -int64(time.Second) || d > int64(time.Second) {
			t.Fatalf("after restore, precise clock %d reads %d, the OS clock %d", i, v, mono)
		}
	}
	now := time.Now().UnixNano()
	for i, v := range wall {
		if d := v - now; d < -int64(time.Second) || d > int64(time.Second) {
			t.Fatalf("after restore, wall clock %d reads %d, time.Now %d", i, v, now)
		}
	}
}

// A mock far ahead of real time leaves nothing behind: the high-water mark
// (on either strategy), the coarse cache and the published state only ever
// hold real readings.
func TestUseClockLeavesTheRealClocksAlone(t *testing.T) {
	for _, hold := range []bool{true, false} {
		holdHighWater(hold)
		before := proc.state.Load()
		clock := NewManualClock(time.Unix(3_000_000_000, 0))
		clock.Advance(1000 * time.Hour)
		restore := UseClock(clock)
		_ = MonotonicNanotime()
		_ = Refresh()
		_ = RecentNanotime()
		StopUpkeep()
		if err := StartUpkeep(time.Millisecond); err != nil { // its first refresh, under the mock
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
		if v := mark.v.Load(); v >= int64(1000*time.Hour) {
			t.Fatalf("the mock's reading reached the high-water mark: %d", v)
		}
		if v := recentNanotime.v.Load(); v != 0 {
			t.Fatalf("the coarse cache holds %d under a mock", v)
		}
		if proc.view.Load() != nil || proc.state.Load() == nil && before != nil {
			t.Fatal("a publish under the mock set the view the package-level functions read")
		}
		restore()
		StopUpkeep()
		checkReal(t)
	}
	holdHighWater(false)
}

// Uses are serialised: a second UseClock waits for the first restore, so
// two tests never see each other's time.
func TestUseClockSerialises(t *testing.T) {
	a := NewManualClock(time.Unix(100, 0))
	b := NewManualClock(time.Unix(200, 0))
	restoreA := UseClock(a)
	got := make(chan func())
	go func() { got <- UseClock(b) }()
	select {
	case <-got:
		t.Fatal("a second UseClock did not wait for the first restore")
	case <-time.After(50 * time.Millisecond):
	}
	if UnixNano() != 100_000_000_000 {
		t.Fatal("the first clock is not the one in use")
	}
	restoreA()
	restoreB := <-got
	if UnixNano() != 200_000_000_000 {
		t.Fatal("the second clock is not in use after the first was restored")
	}
	restoreB()
	checkReal(t)
}

// Readers racing with UseClock and its restore (run with -race): each
// reading is the mock's or a real one, and a goroutine never sees the real
// clocks step back across a mock's use.
func TestUseClockWhileReading(t *testing.T) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	const mockBase = int64(1 << 50) // far from any real reading
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last [4]int64
			for {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				// Each clock on its own: MonotonicNanotime may be ahead of
				// this goroutine's Nanotime (another goroutine raised the
				// mark), and the coarse tier lags.
				runtime.Gosched() // wasm: goroutines are not preempted
				for i, v := range [...]int64{Nanotime(), MonotonicNanotime(), OrderedNanotime(), RecentNanotime()} {
					if v >= mockBase {
						continue
					}
					if v < last[i] {
						errs <- fmt.Errorf("real readings of clock %d stepped back from %d to %d", i, last[i], v)
						return
					}
					last[i] = v
				}
			}
		}()
	}
	for i := 0; i < 50; i++ {
		clock := NewManualClock(time.Unix(0, 0))
		clock.Advance(time.Duration(mockBase))
		restore := UseClock(clock)
		time.Sleep(200 * time.Microsecond)
		restore()
		time.Sleep(200 * time.Microsecond)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	checkReal(t)
}

// A refresh that looked for a mock just before UseClock set one (the
// upkeep's, say) stores real values; UseClock waits for it, so from its
// return on the coarse tier reads the mock, never real time, not even for
// the moment between that refresh's store and the cache being emptied
// (issue 19). The hook parks the refresh at each point of the race.
func TestUseClockWaitsForARefreshInFlight(t *testing.T) {
	StopUpkeep()
	defer SetAutoUpkeep(true)
	SetAutoUpkeep(false)
	park, release := make(chan string), make(chan struct{})
	hook := func(stage string) {
		park <- stage
		<-release
	}
	refreshHook.Store(&hook)
	defer refreshHook.Store(nil)
	refreshed := make(chan struct{})
	go func() {
		refreshReal()
		close(refreshed)
	}()
	if stage := <-park; stage != "checked" {
		t.Fatalf("parked at %q", stage)
	}
	clock := NewManualClock(time.Unix(100, 0))
	used := make(chan func(), 1)
	go func() { used <- UseClock(clock) }()
	var restore func()
	select {
	case restore = <-used: // the old code returned at once
	case <-time.After(20 * time.Millisecond):
	}
	release <- struct{}{}
	if stage := <-park; stage != "stored" {
		t.Fatalf("parked at %q", stage)
	}
	mockNow, mockUnix := clock.nanotime(), clock.UnixNano()
	if restore != nil {
		if n, u := RecentNanotime(), RecentUnixNano(); n != mockNow || u != mockUnix {
			t.Errorf("after UseClock returned, the coarse tier read real time: %d, %d (the mock: %d, %d)", n, u, mockNow, mockUnix)
		}
	}
	refreshHook.Store(nil)
	release <- struct{}{}
	<-refreshed
	if restore == nil {
		restore = <-used
	}
	defer restore()
	if n, u := RecentNanotime(), RecentUnixNano(); n != mockNow || u != mockUnix {
		t.Errorf("under the mock the coarse tier reads %d, %d, not %d, %d", n, u, mockNow, mockUnix)
	}
	if v := recentNanotime.v.Load(); v != 0 {
		t.Errorf("the coarse cache holds %d under a mock", v)
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
	// A deadline ahead: both clocks say how far, as time.Since would, so
	// code written against Clock behaves alike under test and in production.
	for _, k := range []Clock{System, c} {
		if d := k.Since(k.Now().Add(time.Hour)); d >= 0 || d < -time.Hour {
			t.Errorf("%T: Since of an instant an hour ahead = %v, want within [-1h, 0)", k, d)
		}
	}
}

// A UseClock that could only wait for ever panics with what to do: a
// goroutine setting a clock again before restoring its first, and a
// subtest setting one while its test holds one. (It used to wait: a
// watchdog fails the test, rather than the test hanging, if it waits.)
func TestUseClockThatWouldWaitForEverPanics(t *testing.T) {
	watchdog := time.AfterFunc(10*time.Second, func() {
		panic("UseClock waited for a clock its own caller holds")
	})
	defer watchdog.Stop()
	mustPanic := func(t *testing.T, want string, f func()) {
		t.Helper()
		defer func() {
			msg, _ := recover().(string)
			if !strings.Contains(msg, want) {
				t.Errorf("panic %q, want one saying %q", msg, want)
			}
		}()
		f()
	}
	restore := UseClock(NewManualClock(time.Unix(0, 0)))
	mustPanic(t, "call the function the first UseClock returned first", func() {
		UseClock(NewManualClock(time.Unix(1, 0)))
	})
	t.Run("subtest", func(t *testing.T) {
		mustPanic(t, "let the subtests use the test's clock, or restore it", func() {
			UseClock(NewManualClock(time.Unix(2, 0)))
		})
	})
	restore()
	// Restored: the next UseClock, here or in a subtest, takes its turn.
	UseClock(NewManualClock(time.Unix(3, 0)))()
	t.Run("after", func(t *testing.T) { UseClock(NewManualClock(time.Unix(4, 0)))() })
}
