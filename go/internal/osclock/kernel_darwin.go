//go:build darwin

package osclock

import "golang.org/x/sys/unix"

// KernelMono reads the clock Mono counts on its own base:
// CLOCK_UPTIME_RAW, mach_absolute_time's, which stops while the machine
// sleeps.
func KernelMono() (uint64, bool) { return clockNanos(unix.CLOCK_UPTIME_RAW) }

// TAI is absent on Apple platforms.
func TAI() (uint64, bool) { return 0, false }
