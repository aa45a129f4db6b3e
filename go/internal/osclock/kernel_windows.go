//go:build windows && !fastnow_time

package osclock

import "math/bits"

// KernelMono reads the clock Mono counts on its own base:
// QueryPerformanceCounter, in nanoseconds.
func KernelMono() (uint64, bool) {
	hz, ok := QPCFrequency()
	if !ok {
		return 0, false
	}
	hi, lo := bits.Mul64(qpcTicks(), 1_000_000_000)
	if hi >= hz {
		return 0, false
	}
	ns, _ := bits.Div64(hi, lo, hz)
	return ns, true
}

// TAI is absent on Windows.
func TAI() (uint64, bool) { return 0, false }
