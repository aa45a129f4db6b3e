//go:build !(amd64 || (arm64 && !windows) || (linux && (386 || arm || riscv64 || loong64 || ppc64le || s390x)))

package fastnow

// disabledWhy completes FallbackDisabled's sentence (never used: there is
// no counter to disable).
const disabledWhy = "not set up"

func readCounter() uint64            { return 0 }
func readCounterOrdered(bool) uint64 { return 0 }
func probeCounter() probe            { return probe{} }
