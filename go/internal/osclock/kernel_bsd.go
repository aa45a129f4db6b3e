//go:build dragonfly || freebsd || netbsd || openbsd

package osclock

import "golang.org/x/sys/unix"

// KernelMono reads the clock Mono counts on its own base: CLOCK_MONOTONIC,
// package time's on the BSDs.
func KernelMono() (uint64, bool) {
	var ts unix.Timespec
	err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return uint64(ts.Nano()), err == nil
}

// TAI is absent on the BSDs.
func TAI() (uint64, bool) { return 0, false }
