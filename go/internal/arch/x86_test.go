//go:build amd64 || (linux && 386)

package arch

import (
	"testing"
)

func TestLfenceOnlyWhereItSerialisesOrRdtscpIsMissing(t *testing.T) {
	yes, no := func() bool { return true }, func() bool { return false }
	for _, c := range []struct {
		rdtscp, lfence, serialises bool
		cheaper                    func() bool
		want                       bool
	}{
		{false, true, false, no, true}, // RDTSCP missing: LFENCE;RDTSC
		{false, false, false, yes, false},
		{true, true, true, yes, true}, // serialising and cheaper
		{true, true, true, no, false},
		{true, true, false, yes, false}, // may not serialise: RDTSCP
		{true, false, true, yes, false},
	} {
		if got := useLfence(c.rdtscp, c.lfence, c.serialises, c.cheaper); got != c.want {
			t.Errorf("useLfence(%v, %v, %v, cheaper=%v) = %v", c.rdtscp, c.lfence, c.serialises, c.cheaper(), got)
		}
	}
}

// TestProbeFollowsTheOrderedReadRule: on this machine, LFENCE;RDTSC is
// chosen over a present RDTSCP only where the CPU says LFENCE serialises.
func TestProbeFollowsTheOrderedReadRule(t *testing.T) {
	p := ProbeCounter()
	if p.Disabled {
		t.Skip("the counter cannot be read here")
	}
	maxExt, _, _, _ := Cpuid(0x8000_0000, 0)
	hasRdtscp := false
	if maxExt >= 0x8000_0001 {
		_, _, _, edx := Cpuid(0x8000_0001, 0)
		hasRdtscp = edx&(1<<27) != 0
	}
	if p.UseAlt && hasRdtscp && !lfenceSerialises(maxExt) {
		t.Fatal("LFENCE;RDTSC chosen where LFENCE may not serialise")
	}
	orderedAltIsCheaper() // runs both reads
	if a, b := CounterOrdered(p.UseAlt), CounterOrdered(p.UseAlt); b < a {
		t.Fatalf("ordered reads went back: %d then %d", a, b)
	}
}
