//go:build linux && loong64

package arch

import (
	"testing"
)

func TestCpucfgFrequency(t *testing.T) {
	words := func(w2, w4, w5 uint32) func(uint32) uint32 {
		return func(w uint32) uint32 { return map[uint32]uint32{2: w2, 4: w4, 5: w5}[w] }
	}
	for _, c := range []struct {
		cpucfg func(uint32) uint32
		want   uint64
	}{
		{words(1<<14, 100_000_000, 1<<16|1), 100_000_000},
		{words(1<<14, 100_000_000, 2<<16|3), 150_000_000},
		{words(0, 100_000_000, 1<<16|1), 0}, // no constant-frequency timer
		{words(1<<14, 100_000_000, 1), 0},   // divisor 0
		{words(1<<14, 0, 1<<16|1), 0},       // no base frequency
	} {
		if got := cpucfgFrequency(c.cpucfg); got != c.want {
			t.Errorf("got %d Hz, want %d", got, c.want)
		}
	}
	// The CPUCFG instruction itself: what this CPU (or emulator) publishes
	// is reported, never used as the rate.
	p := ProbeCounter()
	if hz := cpucfgFrequency(Cpucfg); p.PublishedHz != hz {
		t.Fatalf("PublishedHz %d, CPUCFG says %d", p.PublishedHz, hz)
	}
	if p.FreqHz != 0 {
		t.Fatalf("the rate is %d Hz from %d, want it measured", p.FreqHz, p.FreqOrigin)
	}
}
