package fastnow

import "strconv"

// What every architecture's counter backend (arch_*.go) reports: the
// counter, how to read it ordered, and its frequency with where that came
// from.

// Origin says how the frequency in use was obtained (Info.FreqOrigin).
type Origin uint8

const (
	OriginCPUID      Origin = iota + 1 // CPUID leaf 0x15
	OriginHypervisor                   // CPUID leaf 0x40000010
	OriginRegister                     // the architecture's: CNTFRQ (Arm), the TOD clock's fixed rate (s390x)
	OriginDeviceTree                   // the device tree's timebase-frequency (riscv64)
	OriginMeasured                     // against CLOCK_MONOTONIC
	OriginOS                           // the OS clock counts nanoseconds
	// OriginPending: the counter is chosen but not in use yet (a process's
	// first millisecond reads the OS clock while the rate is measured).
	// Source waits the warm-up out, so it never reports it.
	OriginPending
	OriginKernel // the kernel's word: the TSC's on macOS and FreeBSD (sysctl), /proc/cpuinfo's timebase (ppc64le)
)

// String returns "cpuid", "hypervisor", "register", "device-tree",
// "measured", "os", "pending" or "kernel".
func (o Origin) String() string {
	switch o {
	case OriginCPUID:
		return "cpuid"
	case OriginHypervisor:
		return "hypervisor"
	case OriginRegister:
		return "register"
	case OriginDeviceTree:
		return "device-tree"
	case OriginMeasured:
		return "measured"
	case OriginOS:
		return "os"
	case OriginPending:
		return "pending"
	case OriginKernel:
		return "kernel"
	}
	return "Origin(" + strconv.Itoa(int(o)) + ")"
}

// MarshalText encodes o as its String.
func (o Origin) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// probe is what a counter backend's probeCounter (arch_*.go) reports.
type probe struct {
	counter                     string // "" when the platform has no backend
	invariant                   bool
	freqHz                      uint64 // the frequency to use, 0 to measure it
	freqOrigin                  Origin
	publishedHz                 uint64 // a frequency reported only (0: freqHz's)
	orderedRead, orderedReadAlt string
	useAlt                      bool
	hypervisor                  string
	disabled                    bool
}

// orderedAlt selects LFENCE;RDTSC over RDTSCP for ordered reads; set by
// detection before the first state is published, read after loading one.
var orderedAlt bool
