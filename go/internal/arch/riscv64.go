//go:build linux && riscv64

package arch

import (
	"encoding/binary"
	"os"
)

// riscv64: the Zicntr time counter, read with RDTIME
// (riscv64_riscv64.s explains the ordered read). It is the platform's real-time
// clock, one counter that every hart sees, ticking at the device tree's
// timebase-frequency; like the Arm counter there is nothing about
// synchronisation between harts to verify, so the kernel's clocksource is
// not checked.

// DisabledWhy completes FallbackDisabled's sentence on this target (its
// probe never disables the counter).
const DisabledWhy = "not set up"

func Counter() uint64 { return Rdtime() }

func CounterOrdered(bool) uint64 { return FenceRdtime() }

func ProbeCounter() Probe {
	p := Probe{
		Counter:        "time CSR (RDTIME)",
		Invariant:      true,
		OrderedRead:    "FENCE R,I;RDTIME;dependent load",
		OrderedReadAlt: "FENCE R,I;RDTIME;dependent load",
	}
	if hz := timebaseFrequency("/proc/device-tree/cpus/timebase-frequency"); hz != 0 {
		p.FreqHz, p.FreqOrigin = hz, OriginDeviceTree
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

// Implemented in riscv64_riscv64.s.

// Rdtime is the bare read of the time CSR (RDTIME), not ordered with
// earlier loads.
func Rdtime() uint64

// FenceRdtime reads the time CSR after every earlier load (FENCE R,I), and
// makes a load that depends on the value, so that the read completes
// before any later store (see riscv64_riscv64.s).
func FenceRdtime() uint64

// Raw is the bare counter instruction as an assembly function call, as Go
// requires, with its name: the floor the report compares Nanotime against.
// It never faults where the counter exists (RawFaults).
func Raw() (string, func() int64) {
	return "asm RDTIME function", func() int64 { return int64(Rdtime()) }
}

// RawFaults: Raw may be called whatever the source.
const RawFaults = false
