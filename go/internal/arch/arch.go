// Package arch is everything fastnow knows about each architecture's
// counter, one file per architecture (the Rust crate's source/arch/ is the
// same, file for file): its instructions (assembly functions, one each: Go
// cannot inline assembly), the bare and ordered reads the timekeeper uses,
// what the hardware and kernel say about it (ProbeCounter: name, frequency
// and where it came from, whether it may be read), and the bare read the
// report compares fastnow's readings against (Raw).
//
// The backends, each under its own build constraint:
//
//	x86.go          amd64 || (linux && 386)      x86_amd64.s, x86_386.s
//	aarch64.go      arm64 && !windows            aarch64_arm64.s
//	arm.go          linux && arm                 arm_arm.s
//	loongarch64.go  linux && loong64             loongarch64_loong64.s
//	powerpc64.go    linux && ppc64le             powerpc64_ppc64le.s
//	riscv64.go      linux && riscv64             riscv64_riscv64.s
//	s390x.go        linux && s390x               s390x_s390x.s
//	none.go         every other target: no counter, the OS clock
//
// none.go's constraint is the negation of the others'; a test
// (internal/buildcheck) checks, for every target the toolchain knows, that
// each name these files declare is declared exactly once.
//
// fastnow's amd64 read fast paths execute RDTSC themselves (fastnow's
// read_amd64.s): Go reads struct fields from assembly only in the package
// that defines the struct, so the hot path lives beside the state.
package arch

// Origin says how a frequency was obtained; fastnow.Origin's constants
// take their values from this list.
type Origin uint8

const (
	OriginCPUID      Origin = iota + 1 // CPUID leaf 0x15
	OriginHypervisor                   // CPUID leaf 0x40000010
	OriginRegister                     // the architecture's: CNTFRQ (Arm), the TOD clock's fixed rate (s390x)
	OriginDeviceTree                   // the device tree's timebase-frequency (riscv64)
	OriginMeasured                     // against CLOCK_MONOTONIC
	OriginOS                           // the OS clock counts nanoseconds
	OriginPending                      // chosen, not in use yet
	OriginKernel                       // the kernel's word (sysctl, /proc/cpuinfo)
)

// Probe is what a counter backend's ProbeCounter reports.
type Probe struct {
	Counter                     string // "" when the platform has no backend
	Invariant                   bool
	FreqHz                      uint64 // the frequency to use, 0 to measure it
	FreqOrigin                  Origin
	PublishedHz                 uint64 // a frequency reported only (0: FreqHz's)
	OrderedRead, OrderedReadAlt string
	UseAlt                      bool // the ordered read is OrderedReadAlt (CounterOrdered(true))
	Hypervisor                  string
	Disabled                    bool // the counter must not be read (DisabledWhy says why)
}
