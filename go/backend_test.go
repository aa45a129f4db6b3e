package fastnow

import (
	"runtime"
	"testing"
	"time"
)

// The counter backend each target must have (Info.Counter); targets not
// listed have none and read the OS clock.
func expectedCounter() string {
	switch runtime.GOARCH {
	case "amd64":
		return "TSC (RDTSC)"
	case "arm64":
		return "CNTVCT_EL0"
	}
	switch runtime.GOOS + "/" + runtime.GOARCH {
	case "linux/riscv64":
		return "time CSR (RDTIME)"
	case "linux/loong64":
		return "Stable Counter (RDTIME.D)"
	}
	return ""
}

// Issue item: every backend's assembly runs in the tests: the bare and the
// ordered read advance with time and agree with each other, and the probe
// names the counter this target must use.
func TestBackendOfThisTarget(t *testing.T) {
	p := probeCounter()
	want := expectedCounter()
	if p.counter != want {
		t.Fatalf("probe names the counter %q, want %q", p.counter, want)
	}
	if want == "" {
		if readCounter() != 0 || readCounterOrdered(false) != 0 {
			t.Fatal("a target without a counter read one")
		}
		if info := Source(); info.Source != "os" || info.Fallback == "" {
			t.Fatalf("without a counter: %+v", info)
		}
		return
	}
	a := readCounter()
	b := readCounterOrdered(orderedAlt)
	time.Sleep(2 * time.Millisecond)
	c := readCounter()
	d := readCounterOrdered(orderedAlt)
	if !(a <= b && b < c && c <= d) {
		t.Fatalf("counter reads out of order: bare %d, ordered %d, 2 ms later bare %d, ordered %d", a, b, c, d)
	}
	if !p.invariant {
		t.Skip("this CPU's counter is not invariant")
	}
	info := Source()
	if info.Counter != want {
		t.Fatalf("Source().Counter = %q", info.Counter)
	}
	if info.Source == "counter" {
		// The rate in use, converted back: 2 ms of sleep is at least 2 ms of
		// counter (to the rate's precision).
		slope, ok := SlopeOfFreq(info.FreqHz)
		if !ok || (Line{Slope: slope}).NanosFor(c-a) < 1_990_000 {
			t.Fatalf("2 ms of sleep is %d ticks at %d Hz", c-a, info.FreqHz)
		}
	}
}
