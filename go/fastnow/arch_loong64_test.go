//go:build linux && loong64

package fastnow

import (
	"testing"

	"github.com/fastnow/fastnow/go/internal/counter"
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
	info := Source()
	if hz := cpucfgFrequency(counter.Cpucfg); info.PublishedFreqHz != hz {
		t.Fatalf("PublishedFreqHz %d, CPUCFG says %d", info.PublishedFreqHz, hz)
	}
	if info.Source == SourceCounter && info.FreqOrigin != OriginMeasured {
		t.Fatalf("the rate came from %s, want measured", info.FreqOrigin)
	}
}
