//go:build arm64 && !windows

package arch

// DisabledWhy completes FallbackDisabled's sentence on this target.
const DisabledWhy = "CNTFRQ_EL0 is zero: the timer is not set up"

func Counter() uint64 { return Cntvct() }

func CounterOrdered(bool) uint64 { return IsbCntvct() }

// ProbeCounter: the Arm counter is architecturally shared by all cores; its
// frequency register is firmware's word (a zero means it is not set up).
// Windows on Arm has no backend: its clock is QueryPerformanceCounter, as
// in the Rust crate.
func ProbeCounter() Probe {
	hz := Cntfrq()
	p := Probe{
		Counter:        "CNTVCT_EL0",
		Invariant:      true,
		OrderedRead:    "ISB;MRS CNTVCT_EL0;dependent load",
		OrderedReadAlt: "ISB;MRS CNTVCT_EL0;dependent load",
		Disabled:       hz == 0,
	}
	if hz != 0 {
		p.FreqHz, p.FreqOrigin = hz, OriginRegister
	}
	return p
}

// Implemented in aarch64_arm64.s.

// Cntvct is the bare generic-timer virtual counter read (MRS CNTVCT_EL0).
func Cntvct() uint64

// IsbCntvct reads the counter after an ISB, so after every earlier load,
// and makes a load that depends on the value, so that the read completes
// before any later store (see aarch64_arm64.s).
func IsbCntvct() uint64

// Cntfrq is the counter frequency firmware published (CNTFRQ_EL0), 0 if unset.
func Cntfrq() uint64

// Raw is the bare counter instruction as an assembly function call, as Go
// requires, with its name: the floor the report compares Nanotime against.
// It never faults where the counter exists (RawFaults).
func Raw() (string, func() int64) {
	return "asm MRS CNTVCT_EL0 function", func() int64 { return int64(Cntvct()) }
}

// RawFaults: Raw may be called whatever the source.
const RawFaults = false
