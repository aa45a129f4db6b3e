//go:build arm64

package fastnow

import "github.com/fastnow/fastnow/go/internal/counter"

func readCounter() uint64 { return counter.Cntvct() }

func readCounterOrdered(bool) uint64 { return counter.IsbCntvct() }

// probeCounter: the Arm counter is architecturally shared by all cores; its
// frequency register is firmware's word (a zero means it is not set up).
func probeCounter() probe {
	hz := counter.Cntfrq()
	p := probe{
		counter:        "CNTVCT_EL0",
		invariant:      true,
		orderedRead:    "ISB;MRS CNTVCT_EL0;dependent load",
		orderedReadAlt: "ISB;MRS CNTVCT_EL0;dependent load",
		disabled:       hz == 0,
	}
	if hz != 0 {
		p.freqHz, p.freqOrigin = hz, OriginRegister
	}
	return p
}
