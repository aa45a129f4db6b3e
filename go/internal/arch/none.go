//go:build !(amd64 || (arm64 && !windows) || (linux && (386 || arm || riscv64 || loong64 || ppc64le || s390x)))

package arch

// DisabledWhy completes FallbackDisabled's sentence (never used: there is
// no counter to disable).
const DisabledWhy = "not set up"

func Counter() uint64            { return 0 }
func CounterOrdered(bool) uint64 { return 0 }
func ProbeCounter() Probe        { return Probe{} }

// Raw: no counter instruction on this target.
func Raw() (string, func() int64) { return "", nil }

// RawFaults: Raw may be called whatever the source.
const RawFaults = false
