package fastnow

import (
	"strconv"

	"github.com/fastnow/fastnow/go/internal/arch"
)

// What every architecture's counter backend (internal/arch, one file per
// architecture) reports: the counter, how to read it ordered, and its
// frequency with where that came from.

// Origin says how the frequency in use was obtained (Info.FreqOrigin).
type Origin uint8

// The values are the backends' (internal/arch), which report the origin
// they found: one list, converted value for value.
const (
	OriginCPUID      = Origin(arch.OriginCPUID)      // CPUID leaf 0x15
	OriginHypervisor = Origin(arch.OriginHypervisor) // CPUID leaf 0x40000010
	OriginRegister   = Origin(arch.OriginRegister)   // the architecture's: CNTFRQ (Arm), the TOD clock's fixed rate (s390x)
	OriginDeviceTree = Origin(arch.OriginDeviceTree) // the device tree's timebase-frequency (riscv64)
	OriginMeasured   = Origin(arch.OriginMeasured)   // against CLOCK_MONOTONIC
	OriginOS         = Origin(arch.OriginOS)         // the OS clock counts nanoseconds
	// OriginPending: the counter is chosen but not in use yet (a process's
	// first millisecond reads the OS clock while the rate is measured).
	// Source waits the warm-up out, so it never reports it.
	OriginPending = Origin(arch.OriginPending)
	OriginKernel  = Origin(arch.OriginKernel) // the kernel's word: the TSC's on macOS and FreeBSD (sysctl), /proc/cpuinfo's timebase (ppc64le)
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

// probe is what the counter backend's ProbeCounter (internal/arch)
// reports.
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

// disabledWhy completes FallbackDisabled's sentence on this target.
const disabledWhy = arch.DisabledWhy

// readCounter is the bare counter read, readCounterOrdered the ordered one
// (alt: OrderedReadAlt's instructions): the target's backend's, one
// assembly function call each.
func readCounter() uint64 { return arch.Counter() }

func readCounterOrdered(alt bool) uint64 { return arch.CounterOrdered(alt) }

// probeCounter is what the hardware and kernel say about the counter.
func probeCounter() probe {
	p := arch.ProbeCounter()
	return probe{
		counter:        p.Counter,
		invariant:      p.Invariant,
		freqHz:         p.FreqHz,
		freqOrigin:     Origin(p.FreqOrigin),
		publishedHz:    p.PublishedHz,
		orderedRead:    p.OrderedRead,
		orderedReadAlt: p.OrderedReadAlt,
		useAlt:         p.UseAlt,
		hypervisor:     p.Hypervisor,
		disabled:       p.Disabled,
	}
}
