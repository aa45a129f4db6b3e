//go:build arm64 && !windows

package fastnow

import "github.com/fastnow/fastnow/go/internal/counter"

// disabledWhy completes FallbackDisabled's sentence on this target.
const disabledWhy = "CNTFRQ_EL0 is zero: the timer is not set up"

func readCounter() uint64 { return counter.Cntvct() }

func readCounterOrdered(bool) uint64 { return counter.IsbCntvct() }

// probeCounter: the Arm counter is architecturally shared by all cores; its
// frequency register is firmware's word (a zero means it is not set up).
// Windows on Arm has no backend: its clock is QueryPerformanceCounter, as
// in the Rust crate.
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
