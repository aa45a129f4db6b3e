//go:build !linux && !darwin

package osclock

// Boot is the boot clock where the package has none: the monotonic
// clock. On Windows that clock is QueryPerformanceCounter, which already
// counts the time asleep or hibernating; wasm and the BSDs have no clock
// that tells suspend apart.
func Boot() uint64 { return uint64(Mono()) }

// BootTime is absent here: no clock apart from the monotonic one counts
// suspend.
func BootTime() (uint64, bool) { return 0, false }
