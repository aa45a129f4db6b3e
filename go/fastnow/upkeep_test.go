package fastnow

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

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
