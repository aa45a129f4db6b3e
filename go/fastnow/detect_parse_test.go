package fastnow

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"testing/quick"
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

// machdep.tsc_freq through syscall.Sysctl, which strips one trailing zero
// byte from every value.
func TestSysctlUint64(t *testing.T) {
	asSysctl := func(v uint64) string {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		s := string(b[:])
		return strings.TrimSuffix(s, "\x00")
	}
	for _, v := range []uint64{0, 1, 2_445_426_000, 1 << 56, ^uint64(0)} {
		if got := sysctlUint64(asSysctl(v)); got != v {
			t.Errorf("%d read back as %d", v, got)
		}
	}
	if err := quick.Check(func(v uint64) bool { return sysctlUint64(asSysctl(v)) == v }, nil); err != nil {
		t.Error(err)
	}
	if got := sysctlUint64("123456789"); got != 0 {
		t.Errorf("a 9-byte value read as %d", got)
	}
}
