//go:build linux && ppc64le

package fastnow

import (
	"os"

	"github.com/fastnow/fastnow/go/internal/counter"
)

// ppc64le: the Time Base, read with mftb (internal/counter's assembly
// explains the ordered read). The Power ISA makes it one 64-bit count that
// every processor of the system sees at one constant frequency (firmware
// keeps the processors' time bases in step, and Linux's own clocksource,
// "timebase", is this register), so, as on Arm, the kernel's clocksource is
// not checked. The frequency is not architected: the kernel publishes the
// one firmware gave it (the device tree's timebase-frequency) as the
// "timebase" line of /proc/cpuinfo, and like every published frequency it
// is used only where a millisecond's measurement agrees with it. Under
// qemu-user /proc/cpuinfo is the host's and has no such line, and the rate
// is measured.

// disabledWhy completes FallbackDisabled's sentence on this target (its
// probe never disables the counter).
const disabledWhy = "not set up"

func readCounter() uint64 { return counter.Mftb() }

func readCounterOrdered(bool) uint64 { return counter.SyncMftb() }

func probeCounter() probe {
	p := probe{
		counter:        "Time Base (mftb)",
		invariant:      true,
		orderedRead:    "sync;mftb;dependent load",
		orderedReadAlt: "sync;mftb;dependent load",
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		if hz := cpuinfoTimebase(b); hz != 0 {
			p.freqHz, p.freqOrigin = hz, OriginKernel
		}
	}
	return p
}
