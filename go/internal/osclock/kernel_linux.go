//go:build linux

package osclock

// The kernel's clocks on Linux (and Android), through the system call:
// CLOCK_MONOTONIC is the clock of package time's monotonic readings.

// KernelMono reads the clock Mono counts on its own base (CLOCK_MONOTONIC
// here), and whether the OS gave it.
func KernelMono() (uint64, bool) { return clockNanos(1) } // CLOCK_MONOTONIC

// TAI reads CLOCK_TAI: CLOCK_REALTIME plus the kernel's TAI offset (0
// unless a time daemon set it); false where the kernel refuses it.
func TAI() (uint64, bool) { return clockNanos(11) } // CLOCK_TAI
