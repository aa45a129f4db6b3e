//go:build darwin

package fastnow

import "golang.org/x/sys/unix"

// The boot clock on Apple platforms: CLOCK_MONOTONIC_RAW, the clock of
// mach_continuous_time, which counts the time asleep, beside
// CLOCK_UPTIME_RAW, mach_absolute_time's, the clock of package time's
// monotonic readings there (both through libSystem's clock_gettime).

const (
	bootClockMono = unix.CLOCK_UPTIME_RAW
	bootClockBoot = unix.CLOCK_MONOTONIC_RAW
)

// clockNanos reads clock id.
func clockNanos(id uintptr) (uint64, bool) {
	var ts unix.Timespec
	err := unix.ClockGettime(int32(id), &ts)
	return uint64(ts.Nano()), err == nil
}
