//go:build (amd64 && !freebsd && !darwin) || (linux && 386)

package arch

// kernelTSCFrequency: only macOS and FreeBSD publish the TSC frequency they
// measured (x86_tscfreq_bsd.go).
func kernelTSCFrequency() uint64 { return 0 }
