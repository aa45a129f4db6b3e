package fastnow

import (
	"math"
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

// recentAdvancesPast reports whether RecentNanotime moves past seen within
// ten seconds: the upkeep goroutine refreshes it once it runs, and on a
// loaded machine (or under an emulator) it may wait for a thread, so only
// an upkeep that does not refresh at all fails a test.
func recentAdvancesPast(seen int64) bool { return advanceWithin(seen, time.Millisecond) }

// advanceWithin reports whether RecentNanotime moves past seen within ten
// seconds, looking every poll.
func advanceWithin(seen int64, poll time.Duration) bool {
	deadline := time.Now().Add(10 * time.Second)
	for RecentNanotime() <= seen && time.Now().Before(deadline) {
		time.Sleep(poll)
	}
	return RecentNanotime() > seen
}

// shortestRefreshGap is the shortest of five gaps between successive
// advances of RecentNanotime (0 if it stopped advancing): how often the
// upkeep refreshes, as far as a loaded machine lets it show — a preemption
// lengthens some gaps, rarely all five.
func shortestRefreshGap() time.Duration {
	advance := func() bool { return advanceWithin(RecentNanotime(), 100*time.Microsecond) }
	if !advance() {
		return 0
	}
	last, shortest := time.Now(), time.Duration(math.MaxInt64)
	for i := 0; i < 5; i++ {
		if !advance() {
			return 0
		}
		now := time.Now()
		shortest, last = min(shortest, now.Sub(last)), now
	}
	return shortest
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
		if !recentAdvancesPast(RecentNanotime()) {
			t.Fatal("upkeep did not refresh")
		}
		// Every millisecond: the shortest of a few gaps is, however loaded
		// the machine (a goroutine that sleeps 5 s between refreshes fails).
		if gap := shortestRefreshGap(); gap == 0 || gap >= 50*time.Millisecond {
			t.Fatalf("refreshes %v apart at best (0: stopped)", gap)
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
