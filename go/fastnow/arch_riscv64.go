//go:build linux && riscv64

package fastnow

import (
	"encoding/binary"
	"os"

	"github.com/fastnow/fastnow/go/internal/counter"
)

// riscv64: the Zicntr time counter, read with RDTIME (internal/counter's
// assembly explains the ordered read). It is the platform's real-time
// clock, one counter that every hart sees, ticking at the device tree's
// timebase-frequency; like the Arm counter there is nothing about
// synchronisation between harts to verify, so the kernel's clocksource is
// not checked.

// disabledWhy completes FallbackDisabled's sentence on this target (its
// probe never disables the counter).
const disabledWhy = "not set up"

func readCounter() uint64 { return counter.Rdtime() }

func readCounterOrdered(bool) uint64 { return counter.FenceRdtime() }

func probeCounter() probe {
	p := probe{
		counter:        "time CSR (RDTIME)",
		invariant:      true,
		orderedRead:    "FENCE R,I;RDTIME;dependent load",
		orderedReadAlt: "FENCE R,I;RDTIME;dependent load",
	}
	if hz := timebaseFrequency("/proc/device-tree/cpus/timebase-frequency"); hz != 0 {
		p.freqHz, p.freqOrigin = hz, OriginDeviceTree
	}
	return p
}

// timebaseFrequency reads the device tree's timebase-frequency property
// (a big-endian 32- or 64-bit cell); 0 when it cannot be read or is not
// one of those.
func timebaseFrequency(path string) uint64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	switch len(b) {
	case 4:
		return uint64(binary.BigEndian.Uint32(b))
	case 8:
		return binary.BigEndian.Uint64(b)
	}
	return 0
}
