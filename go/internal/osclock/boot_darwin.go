//go:build darwin

package osclock

import "golang.org/x/sys/unix"

// The boot clock on Apple platforms: CLOCK_MONOTONIC_RAW, the clock of
// mach_continuous_time, which counts the time asleep, beside
// CLOCK_UPTIME_RAW, mach_absolute_time's, the clock of package time's
// monotonic readings there (both through libSystem's clock_gettime).

const bootClockBoot = unix.CLOCK_MONOTONIC_RAW

// clockNanos reads clock id.
func clockNanos(id uintptr) (uint64, bool) {
	var ts unix.Timespec
	err := unix.ClockGettime(int32(id), &ts)
	return uint64(ts.Nano()), err == nil
}

// BootTime is CLOCK_MONOTONIC_RAW on its own base, and whether it was
// given.
func BootTime() (uint64, bool) { return clockNanos(bootClockBoot) }
