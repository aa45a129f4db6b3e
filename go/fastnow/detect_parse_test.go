package fastnow

import (
	"errors"
	"strings"
	"testing"
)

// FreeBSD's verdict: its TSC timecounters by either name vouch for the
// counter; any other timecounter, or none that can be read, does not.
func TestFreeBSDTimecounterVerdict(t *testing.T) {
	p := probe{counter: "TSC (RDTSC)", invariant: true}
	for _, c := range []struct {
		name string
		err  error
		want reason
	}{
		{"TSC", nil, reason{}},
		{"TSC-low", nil, reason{}},
		{"HPET", nil, reason{FallbackKernelClocksource, "HPET"}},
		{"ACPI-fast", nil, reason{FallbackKernelClocksource, "ACPI-fast"}},
		{"i8254", nil, reason{FallbackKernelClocksource, "i8254"}},
		{"kvmclock", nil, reason{FallbackKernelClocksource, "kvmclock"}},
		{"tsc", nil, reason{FallbackKernelClocksource, "tsc"}}, // Linux's name, not FreeBSD's
		{"TSCX", nil, reason{FallbackKernelClocksource, "TSCX"}},
		{"", nil, reason{why: FallbackClocksourceUnknown}},
		{"TSC low", nil, reason{why: FallbackClocksourceUnknown}},
		{"TSC\x00", nil, reason{why: FallbackClocksourceUnknown}},
		{strings.Repeat("T", 33), nil, reason{why: FallbackClocksourceUnknown}},
		{"TSC", errors.New("ENOENT"), reason{why: FallbackClocksourceUnknown}},
	} {
		if got := decide(p, timecounterVerdict(c.name, c.err), EnvUnset, "TSC"); got != c.want {
			t.Errorf("kern.timecounter.hardware %q (%v): %q, want %q", c.name, c.err, got, c.want)
		}
	}
	// Linux's rule is unchanged: "tsc" only.
	for name, vouches := range map[string]bool{"tsc": true, "TSC": false, "tsc-low": false, "hpet": false} {
		if got := namesTheCounter(name, "tsc"); got != vouches {
			t.Errorf("Linux clocksource %q vouches: %v", name, got)
		}
	}
}
