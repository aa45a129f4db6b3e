package fastnow

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fastnow/fastnow/go/internal/osclock"
)

// Issue item: every exported type prints as something a person can read
// (%v and %s go through String).
func TestStrings(t *testing.T) {
	slope, _ := slopeOfFreq(2_445_384_028)
	clock := NewManualClock(time.Unix(1_700_000_000, 5))
	clock.Advance(1500 * time.Millisecond)
	var ai AtomicInstant
	ai.Store(InstantOf(int64(2 * time.Second)))
	var au AtomicUnixNano
	au.Store(1_700_000_000_123_456_789)
	counter := Info{
		Source: SourceCounter, Counter: "TSC (RDTSC)", FreqHz: 2_445_384_028, FreqOrigin: OriginMeasured,
		Baseline: 1_000_123_456, Refinements: 1, OrderedRead: "RDTSCP", MonotonicMode: MonotonicHighWater,
		Clocksource: "tsc", Hypervisor: "KVMKVMKVM", Upkeep: true,
	}
	jumped := counter
	jumped.Upkeep, jumped.CounterJumps = false, 3
	jumped.LastCounterJump = CounterJump{At: time.Unix(1_700_000_000, 0), Ahead: time.Hour + 123_456*time.Nanosecond}
	behind := CounterJump{At: time.Unix(1_700_000_000, 0), Ahead: -1_500 * time.Microsecond}
	demoted := Info{
		Source: SourceOS, Fallback: FallbackKernelClocksource, FallbackClocksource: "hpet", Clocksource: "hpet",
		DemotedAt: time.Unix(1_700_000_000, 0), EnvOverride: EnvInvalid, EnvValue: "fast",
	}
	for _, c := range []struct {
		got  fmt.Stringer
		want string
	}{
		{InstantOf(int64(1500 * time.Millisecond)), "1.5s after the package loaded"},
		{InstantOf(-2), "2ns before the package loaded"},
		{InstantOf(math.MinInt64), "2562047h47m16.854775808s before the package loaded"},
		{BootInstantOf(int64(time.Minute)), "1m0s after the package loaded, suspends since boot included"},
		{through(0, 1234, slope), "Line(at(t) = 1234 + t × 0.408933 ns, 2.445384 GHz)"},
		{line{Slope: 1 << (lineShift - 1)}, "Line(at(t) = 0 + t × 0.500000 ns, 2 GHz)"},
		{clock, "ManualClock(monotonic 2.5s, Unix 2023-11-14T22:13:21.500000005Z)"},
		{&ai, "2s after the package loaded"},
		{&au, "2023-11-14T22:13:20.123456789Z"},
		{System.(fmt.Stringer), "fastnow.System"},
		{counter, "counter TSC (RDTSC) at 2.445384 GHz (measured over 1.000123s, 1 refinement); " +
			"ordered read RDTSCP; MonotonicNanotime high-water; kernel clocksource tsc; hypervisor KVMKVMKVM; upkeep goroutine running"},
		{jumped, "counter TSC (RDTSC) at 2.445384 GHz (measured over 1.000123s, 1 refinement); " +
			"ordered read RDTSCP; MonotonicNanotime high-water; re-based 3x, last: counter 3600000.123 ms ahead of " + osclock.Name +
			" at 2023-11-14T22:13:20Z; kernel clocksource tsc; hypervisor KVMKVMKVM"},
		{behind, "counter 1.500 ms behind " + osclock.Name + " at 2023-11-14T22:13:20Z"},
		{demoted, "OS clock (" + osclock.Name + "); fallback: the kernel's clocksource is hpet, not the counter (set FASTNOW_CLOCK=counter to override)" +
			" (since 2023-11-14T22:13:20Z); kernel clocksource hpet; FASTNOW_CLOCK=\"fast\" ignored (valid values: counter, os)"},
	} {
		if got := fmt.Sprint(c.got); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
	for hz, want := range map[uint64]string{
		24_000_000: "24 MHz", 1_000_000_000: "1 GHz", 3_579_545: "3.579545 MHz",
		10_000_000: "10 MHz", 999: "999 Hz", 32_768: "32.768 kHz",
	} {
		if got := formatHz(hz); got != want {
			t.Errorf("formatHz(%d) = %q, want %q", hz, got, want)
		}
	}
	// A real reading says what it is.
	if s := fmt.Sprint(Now()); !strings.HasSuffix(s, " after the package loaded") {
		t.Errorf("fmt.Sprint(Now()) = %q", s)
	}
	if s := Source().String(); !strings.HasPrefix(s, "counter ") && !strings.HasPrefix(s, "OS clock (") {
		t.Errorf("Source().String() = %q", s)
	}
}
