//go:build !linux && !darwin

package fastnow

// bootNow is the boot clock where the package has none: the monotonic
// clock. On Windows that clock is QueryPerformanceCounter, which already
// counts the time asleep or hibernating; wasm and the BSDs have no clock
// that tells suspend apart.
func bootNow() uint64 { return uint64(monoNow()) }
