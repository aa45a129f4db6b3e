//go:build linux && ppc64le

package arch

import "os"

// ppc64le: the Time Base, read with mftb (powerpc64_ppc64le.s
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

// DisabledWhy completes FallbackDisabled's sentence on this target (its
// probe never disables the counter).
const DisabledWhy = "not set up"

func Counter() uint64 { return Mftb() }

func CounterOrdered(bool) uint64 { return SyncMftb() }

func ProbeCounter() Probe {
	p := Probe{
		Counter:        "Time Base (mftb)",
		Invariant:      true,
		OrderedRead:    "sync;mftb;dependent load",
		OrderedReadAlt: "sync;mftb;dependent load",
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		if hz := cpuinfoTimebase(b); hz != 0 {
			p.FreqHz, p.FreqOrigin = hz, OriginKernel
		}
	}
	return p
}

// Implemented in powerpc64_ppc64le.s.

// Mftb is the bare read of the time base (MFTB), not ordered with earlier
// loads.
func Mftb() uint64

// SyncMftb reads the time base after every earlier load and store has been
// performed (SYNC), and makes a load that depends on the value, so that the
// read completes before any later store (see powerpc64_ppc64le.s).
func SyncMftb() uint64

// Raw is the bare counter instruction as an assembly function call, as Go
// requires, with its name: the floor the report compares Nanotime against.
// It never faults where the counter exists (RawFaults).
func Raw() (string, func() int64) {
	return "asm MFTB function", func() int64 { return int64(Mftb()) }
}

// RawFaults: Raw may be called whatever the source.
const RawFaults = false
