package fastnow

import (
	"math"
	"math/big"
	"strings"
	"testing"
	"testing/quick"
	"time"
)

// The conversions' arithmetic against exact integers: a timeline reading
// less its offset, saturated to [0, MaxInt64]; a kernel's reading plus the
// offset, saturated to the int64 range; and a round trip is exact wherever
// neither saturates.
func TestKernelConversionArithmetic(t *testing.T) {
	sat := func(x *big.Int, lo int64) int64 {
		if x.Cmp(big.NewInt(lo)) < 0 {
			return lo
		}
		if !x.IsInt64() {
			return math.MaxInt64
		}
		return x.Int64()
	}
	f := func(ns, off, nanos int64, pick uint8) bool {
		ns, off, nanos = edgy(ns, pick), edgy(off, pick>>2), edgy(nanos, pick>>4)
		to := sat(new(big.Int).Sub(big.NewInt(ns), big.NewInt(off)), 0)
		from := sat(new(big.Int).Add(big.NewInt(nanos), big.NewInt(off)), math.MinInt64)
		if toKernel(ns, off) != to || fromKernel(nanos, off) != from {
			t.Logf("ns %d off %d nanos %d: to %d (want %d), from %d (want %d)", ns, off, nanos, toKernel(ns, off), to, fromKernel(nanos, off), from)
			return false
		}
		if nanos >= 0 && from != math.MinInt64 && from != math.MaxInt64 && toKernel(from, off) != nanos {
			t.Logf("round trip of %d by %d: %d", nanos, off, toKernel(from, off))
			return false
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 20_000}); err != nil {
		t.Error(err)
	}
}

// Conversions saturate, never wrap or panic: an instant before the
// kernel's zero is 0, a reading past the end of the timeline its last
// instant.
func TestConversionsSaturate(t *testing.T) {
	if v := InstantOf(math.MinInt64).MonotonicNanos(); v != 0 {
		t.Errorf("the first instant converts to %d", v)
	}
	if v := BootInstantOf(math.MinInt64).BoottimeNanos(); v != 0 {
		t.Errorf("the first boot instant converts to %d", v)
	}
	// The kernel's clocks are ahead of the timelines (they count from
	// boot, the timelines from the package's load) where the package reads
	// them: the last instant converts to the last value, the least reading
	// to the first instant. Where it reads none the offsets are the
	// timelines' own, at or after the package's load: the other way round.
	k := kernelConversion()
	for _, c := range []struct {
		what string
		off  int64
		to   func(int64) int64
		from func(int64) int64
	}{
		{"monotonic", k.mono, func(ns int64) int64 { return InstantOf(ns).MonotonicNanos() },
			func(ns int64) int64 { return InstantOfMonotonic(ns).Nanotime() }},
		{"boot", k.boot, func(ns int64) int64 { return BootInstantOf(ns).BoottimeNanos() },
			func(ns int64) int64 { return BootInstantOfBoottime(ns).Nanotime() }},
	} {
		if c.off < 0 {
			if v := c.to(math.MaxInt64); v != math.MaxInt64 {
				t.Errorf("%s: the last instant converts to %d", c.what, v)
			}
			if v := c.from(math.MinInt64); v != math.MinInt64 {
				t.Errorf("%s: the least reading converts to %d", c.what, v)
			}
		} else if v := c.from(math.MaxInt64); v != math.MaxInt64 {
			t.Errorf("%s: the last reading converts to %d", c.what, v)
		}
	}
}

// A snapshot's text names every clock present, and its bracket.
func TestSnapshotString(t *testing.T) {
	s := ClockSnapshot{CounterTicks: 123, HasCounter: true, Instant: InstantOf(12_500_000_000),
		MonotonicNanos: 12_500_000_040, RealtimeNanos: 1_767_225_600_000_000_001,
		BoottimeNanos: 12_500_000_050, HasBoottime: true, Width: 80, ConversionError: 1200 * time.Nanosecond}
	want := "counter 123 ticks, 12.5s after the package loaded, CLOCK_MONOTONIC 12.500000040s, " +
		"CLOCK_REALTIME 1767225600.000000001s, CLOCK_BOOTTIME 12.500000050s, within 80ns (conversions ±1.2µs)"
	if got := s.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	s.HasCounter, s.HasBoottime, s.HasTAI, s.TAINanos = false, false, true, 37_000_000_000
	if got := s.String(); strings.Contains(got, "counter") || strings.Contains(got, "BOOTTIME") || !strings.Contains(got, "CLOCK_TAI 37.000000000s") {
		t.Errorf("absent clocks printed, or TAI missing: %s", got)
	}
}
