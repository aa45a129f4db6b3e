package fastnow

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestUnixNanoAgreesWithTimeNow(t *testing.T) {
	_ = UnixNano()
	worst := int64(0)
	for i := 0; i < 1000; i++ {
		before := time.Now().UnixNano()
		ours := UnixNano()
		after := time.Now().UnixNano()
		err := max(before-ours, ours-after, 0)
		worst = max(worst, err)
	}
	if worst > 100_000 {
		t.Fatalf("UnixNano off by %d ns", worst)
	}
	if d := time.Since(WallTime()); d > time.Millisecond || d < -time.Millisecond {
		t.Fatalf("WallTime off by %v", d)
	}
}

// Steps the reference clock (never the machine's) and checks the wall tier
// follows within one resync interval, forwards and backwards.
func TestWallFollowsSteps(t *testing.T) {
	if !Supported() {
		t.Skip("OS source reads the reference directly")
	}
	var offset atomic.Int64
	saved := wallReference
	wallReference = func() int64 { return time.Now().UnixNano() + offset.Load() }
	defer func() { wallReference = saved; SetWallResyncInterval(time.Second); ResyncWall() }()
	interval := 20 * time.Millisecond
	SetWallResyncInterval(interval)
	ResyncWall()
	near := func(want int64) {
		t.Helper()
		if d := UnixNano() - want; d > int64(2*time.Millisecond) || d < -int64(2*time.Millisecond) {
			t.Fatalf("off by %v", time.Duration(d))
		}
	}
	step := int64(10 * time.Second)
	offset.Store(step)
	ResyncWall()
	offset.Store(2 * step)
	near(time.Now().UnixNano() + step) // not followed yet
	time.Sleep(interval + 5*time.Millisecond)
	near(time.Now().UnixNano() + 2*step)
	offset.Store(-step)
	time.Sleep(interval + 5*time.Millisecond)
	near(time.Now().UnixNano() - step)
}

// Readers race goroutines that re-anchor on every read: values stay within
// bounds of time.Now (a torn anchor would not) and never jump back by more
// than an anchor correction.
func TestConcurrentResync(t *testing.T) {
	if runtime.GOARCH == "wasm" {
		t.Skip("goroutines are not preempted on wasm: the readers' busy loops would never let the test stop them")
	}
	SetWallResyncInterval(0)
	defer SetWallResyncInterval(time.Second)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := int64(0)
			for !stop.Load() {
				before := time.Now().UnixNano()
				ours := UnixNano()
				after := time.Now().UnixNano()
				if ours+200_000 < before || ours > after+200_000 {
					t.Errorf("%d not within [%d, %d]", ours, before, after)
					return
				}
				if last-ours > 50_000 {
					t.Errorf("went back %d ns", last-ours)
					return
				}
				last = ours
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
}

func goroutinesSettleTo(n int) int {
	deadline := time.Now().Add(time.Second)
	for runtime.NumGoroutine() != n && time.Now().Before(deadline) {
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
	if _, running := UpkeepResolution(); running {
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
		seen := RecentNanotime()
		time.Sleep(20 * time.Millisecond)
		if RecentNanotime() <= seen {
			t.Fatal("upkeep did not refresh")
		}
		if !StopUpkeep() {
			t.Fatal("StopUpkeep found nothing")
		}
		if n := goroutinesSettleTo(base); n != base {
			t.Fatalf("upkeep goroutine leaked: %d, want %d", n, base)
		}
	}
	if StopUpkeep() || StartUpkeep(0) == nil {
		t.Fatal("StopUpkeep with none running / zero resolution")
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
