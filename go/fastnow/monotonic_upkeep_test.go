package fastnow

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// The upkeep goroutine alone never chooses MonotonicNanotime's strategy nor
// moves it off its high-water mark: its refreshes take their own reading
// and count as no contention. (Its refresh read a MonotonicNanotime: when
// the upkeep started before the program's first reading, the upkeep
// goroutine chose the strategy, timing both on a goroutine just woken; and
// every lost compare-and-swap counted, however far apart, so a refresh
// every millisecond beside one reading goroutine could switch it to ordered
// reads for the whole run.) In a child process: the strategy is
// process-wide.
func TestTheUpkeepAloneNeverChoosesNorSwitchesMonotonicNanotime(t *testing.T) {
	if runtime.GOARCH == "wasm" {
		t.Skip("this target cannot start processes")
	}
	if info := Source(); info.Source != SourceCounter {
		t.Skipf("the counter is not in use here: %v", info)
	}
	out, ok := runChild(t, "TestChildMonotonicUpkeep", nil)
	if strings.Contains(out, "--- SKIP: TestChildMonotonicUpkeep") {
		t.Skipf("child:\n%s", out)
	}
	if !ok {
		t.Fatalf("child:\n%s", out)
	}
}

func TestChildMonotonicUpkeep(t *testing.T) {
	inChild(t)
	if info := Source(); info.Source != SourceCounter {
		t.Skipf("the counter is not in use here: %v", info)
	}
	if err := StartUpkeep(time.Millisecond); err != nil {
		t.Fatal(err)
	}
	defer StopUpkeep()
	// Refreshes come and go: the strategy is still the program's to choose.
	start := Nanotime()
	for Nanotime()-start < 50*int64(time.Millisecond) {
		time.Sleep(5 * time.Millisecond)
	}
	if !recentAdvancesPast(start) {
		t.Fatal("the upkeep did not refresh")
	}
	if m := Source().MonotonicMode; m != MonotonicUndecided {
		t.Fatalf("the upkeep goroutine chose MonotonicNanotime's strategy: %s", m)
	}
	// The high-water mark, allowed to switch.
	holdHighWater(true)
	holdHighWater(false)
	if m := Source().MonotonicMode; m != MonotonicHighWater {
		t.Fatalf("not on the mark: %s", m)
	}
	// One goroutine reading as fast as it can for three seconds, against a
	// refresh every millisecond (timed by the readings themselves).
	first := MonotonicNanotime()
	last := first
	for last-first < 3*int64(time.Second) {
		now := MonotonicNanotime()
		if now < last {
			t.Fatalf("stepped back %d ns", last-now)
		}
		last = now
		cached := RecentNanotime()
		if v := MonotonicNanotime(); v < cached {
			t.Fatalf("a reading %d below the cache loaded before it, %d", v, cached)
		}
	}
	if !StopUpkeep() {
		t.Fatal("the upkeep was not running")
	}
	if m := Source().MonotonicMode; m != MonotonicHighWater {
		t.Fatalf("the upkeep's refreshes made MonotonicNanotime switch: %s", m)
	}
}
