//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd && !(windows && !fastnow_time)

package osclock

// KernelMono is absent where the package reads no clock of the OS's that
// Mono is known to count on (wasm, where the runtime's clock is not
// exposed; Solaris, AIX, Plan 9; Windows under fastnow_time, where
// package time reads the interrupt time): conversions to the kernel's
// monotonic clock there give Mono itself, the time since the package
// loaded.
func KernelMono() (uint64, bool) { return 0, false }

// TAI is absent here.
func TAI() (uint64, bool) { return 0, false }
