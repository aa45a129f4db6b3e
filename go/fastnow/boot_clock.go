//go:build linux || darwin

package fastnow

import "sync"

// bootBase is the monotonic clock (bootClockMono) at the package's load,
// which puts the boot clock on mono()'s base: monoNow() is
// time.Since(procStart). It is measured once, from the tightest of a few
// brackets monoNow, the monotonic clock, monoNow; its error is a constant,
// the same for every boot reading.
var bootBase struct {
	once sync.Once
	ok   bool
	ns   uint64
	diff uint64 // boot - mono then
}

// bootNow is the boot clock on mono()'s base; where the OS refuses it (a
// seccomp filter, say), mono() itself.
func bootNow() uint64 {
	b := &bootBase
	b.once.Do(func() {
		width := ^uint64(0)
		for i := 0; i < 8; i++ {
			m1 := uint64(monoNow())
			raw, ok := clockNanos(bootClockMono)
			m2 := uint64(monoNow())
			if !ok {
				return
			}
			boot, ok := clockNanos(bootClockBoot)
			if !ok {
				return
			}
			if m2-m1 < width {
				width, b.ns, b.diff = m2-m1, raw-(m1+(m2-m1)/2), boot-raw
			}
		}
		b.ok = true
	})
	if b.ok {
		if raw, ok := clockNanos(bootClockBoot); ok {
			return raw - b.ns
		}
		// Refused since (a seccomp filter installed later): the time
		// suspended as it was then, so that readings do not fall back.
		return uint64(monoNow()) + b.diff
	}
	return uint64(monoNow())
}
