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
		if info := Source(); info.Source != SourceOS || info.Fallback == FallbackNone {
			t.Fatalf("without a counter: %+v", info)
		}
		return
	}
	a := readCounter()
	b := readCounterOrdered(orderedAlt)
	// The OS clock inside the counter's interval: a sleep can end early
	// (Wine's timers do), the clock that measures it cannot.
	m0 := monoNow()
	time.Sleep(2 * time.Millisecond)
	m1 := monoNow()
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
	if info.Source == SourceCounter {
		// The rate in use, converted back: the counter's interval holds the
		// OS clock's (to the rate's precision, 0.5 %).
		slope, ok := slopeOfFreq(info.FreqHz)
		os := uint64(m1 - m0)
		if !ok || (line{Slope: slope}).NanosFor(c-a) < os-os/200 {
			t.Fatalf("%d ns of the OS clock are %d ticks at %d Hz", os, c-a, info.FreqHz)
		}
	}
}
