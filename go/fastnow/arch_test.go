package fastnow

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fastnow/fastnow/go/internal/arch"

	"github.com/fastnow/fastnow/go/internal/osclock"
)

// The counter backend each target must have (Info.Counter); targets not
// listed have none and read the OS clock.
func expectedCounter() string {
	switch {
	case runtime.GOARCH == "amd64":
		return "TSC (RDTSC)"
	case runtime.GOARCH == "arm64" && runtime.GOOS != "windows":
		return "CNTVCT_EL0"
	}
	switch runtime.GOOS + "/" + runtime.GOARCH {
	case "linux/386", "android/386":
		return "TSC (RDTSC)"
	case "linux/arm", "android/arm":
		return "CNTVCT (MRRC p15)"
	case "linux/riscv64":
		return "time CSR (RDTIME)"
	case "linux/loong64":
		return "Stable Counter (RDTIME.D)"
	case "linux/ppc64le":
		return "Time Base (mftb)"
	case "linux/s390x":
		return "TOD clock (STCKF)"
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
	if p.disabled {
		// The counter exists but may not be read in this process (32-bit
		// Arm where the kernel did not say it granted access, as under
		// qemu-arm; an x86 process with RDTSC disabled): none of its
		// instructions may run, and the OS clock is used, forced or not.
		if r := decide(p, verdict{}, EnvCounter, kernelCounterName); r.why != FallbackDisabled {
			t.Fatalf("FASTNOW_CLOCK=counter with a disabled counter: %q", r)
		}
		if info := Source(); info.Source != SourceOS {
			t.Fatalf("a disabled counter is in use: %+v", info)
		}
		t.Skipf("%s cannot be read in this process; the OS clock is used", want)
	}
	a := readCounter()
	b := readCounterOrdered(orderedAlt)
	// The OS clock inside the counter's interval: a sleep can end early
	// (Wine's timers do), the clock that measures it cannot.
	m0 := osclock.Mono()
	time.Sleep(2 * time.Millisecond)
	m1 := osclock.Mono()
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

// Issue 24: FASTNOW_CLOCK=counter, in a fresh process, puts the precise
// clocks on the counter wherever it can be read, and is refused with its
// reason where it cannot, without a fault (the child runs to its end: a
// SIGILL would kill it). FASTNOW_TEST_EXPECT_COUNTER ("used" or "refused")
// makes the outcome on this machine part of the test (make test-platforms
// sets it per target).
func TestForcedCounter(t *testing.T) {
	if runtime.GOARCH == "wasm" {
		t.Skip("this target cannot start processes")
	}
	if forcedTimePackage {
		t.Skip("with the fastnow_time tag every read goes through package time, whatever FASTNOW_CLOCK says")
	}
	out, ok := runChild(t, "TestChildForcedCounter", []string{"FASTNOW_CLOCK=counter"})
	if !ok {
		t.Fatalf("child with FASTNOW_CLOCK=counter:\n%s", out)
	}
	for _, ln := range strings.Split(out, "\n") {
		if strings.Contains(ln, "FASTNOW_CLOCK=counter:") {
			t.Log(strings.TrimSpace(ln))
		}
	}
}

func TestChildForcedCounter(t *testing.T) {
	inChild(t)
	p := probeCounter()
	info := Source()
	if info.EnvOverride != EnvCounter {
		t.Fatalf("FASTNOW_CLOCK=counter read as %q", info.EnvOverride)
	}
	outcome := "used"
	switch {
	case p.counter == "":
		outcome = "no counter"
		if info.Source != SourceOS || info.Fallback != FallbackNoCounter {
			t.Fatalf("no counter on this target: %+v", info)
		}
	case p.disabled:
		outcome = "refused"
		if info.Source != SourceOS || info.Fallback != FallbackDisabled || info.Counter != p.counter {
			t.Fatalf("a counter that cannot be read was not refused: %+v", info)
		}
	default:
		if info.Source != SourceCounter || info.Fallback != FallbackNone {
			t.Fatalf("the counter was not used: %+v", info)
		}
	}
	// Every read path, on whichever source was chosen. The OS clock is read
	// inside their interval and decides when a millisecond has passed: a
	// sleep can end early (Wine's do), the clock that measures it cannot.
	a, b := Nanotime(), OrderedNanotime()
	m0 := osclock.Mono()
	sleepAtLeast(time.Millisecond)
	m1 := osclock.Mono()
	c, d := Nanotime(), MonotonicNanotime()
	// The interval holds the OS clock's, to the rate's precision (0.5 %).
	if os := m1 - m0; !(a <= b && b < c && c <= d) || c-a < os-os/200 {
		t.Fatalf("readings %d, %d, then %d ns of the OS clock later %d, %d", a, b, m1-m0, c, d)
	}
	t.Logf("FASTNOW_CLOCK=counter: %s: %s", outcome, info)
	if want := os.Getenv("FASTNOW_TEST_EXPECT_COUNTER"); want != "" && want != outcome {
		t.Fatalf("FASTNOW_TEST_EXPECT_COUNTER=%s, but the counter was %s here", want, outcome)
	}
}

// The backends (internal/arch) report a frequency's origin in their own
// type, converted value for value: the two lists must agree.
func TestOriginsAreTheBackendsOrigins(t *testing.T) {
	for _, c := range []struct {
		ours   Origin
		theirs arch.Origin
	}{
		{OriginCPUID, arch.OriginCPUID},
		{OriginHypervisor, arch.OriginHypervisor},
		{OriginRegister, arch.OriginRegister},
		{OriginDeviceTree, arch.OriginDeviceTree},
		{OriginMeasured, arch.OriginMeasured},
		{OriginOS, arch.OriginOS},
		{OriginPending, arch.OriginPending},
		{OriginKernel, arch.OriginKernel},
	} {
		if Origin(c.theirs) != c.ours {
			t.Errorf("%v is %d here, %d in internal/arch", c.ours, c.ours, c.theirs)
		}
	}
}
