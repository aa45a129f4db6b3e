//go:build linux || darwin

package osclock

import "sync"

// bootBase is CLOCK_BOOTTIME less the kernel's monotonic clock at the
// first boot reading, for the readings the OS refuses after it.
var bootBase struct {
	once sync.Once
	ok   bool
	diff uint64 // boot - mono then
}

// Boot is the boot clock on mono()'s base (the kernel's clock less
// MonoBase: its error is a constant, the same for every boot reading);
// where the OS refuses it (a seccomp filter, say), mono() itself.
func Boot() uint64 {
	b := &bootBase
	base, _, _ := MonoBase()
	b.once.Do(func() {
		raw, ok := KernelMono()
		if !ok {
			return
		}
		boot, ok := clockNanos(bootClockBoot)
		if !ok {
			return
		}
		b.diff, b.ok = boot-raw, true
	})
	if b.ok {
		if raw, ok := clockNanos(bootClockBoot); ok {
			return raw - base
		}
		// Refused since (a seccomp filter installed later): the time
		// suspended as it was then, so that readings do not fall back.
		return uint64(Mono()) + b.diff
	}
	return uint64(Mono())
}
