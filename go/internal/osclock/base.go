package osclock

import "sync"

// The kernel's monotonic clock and Mono's base: Mono counts from the
// package's load (package time's monotonic readings are relative to a
// time.Time taken then), so the kernel's clock is Mono plus the value it
// read at that load. The base is measured once, from the tightest of a
// few brackets "Mono, the kernel's clock, Mono": it is within half that
// bracket, the same for every conversion.

// monoBase is the kernel's monotonic clock less Mono, and the bracket it
// was measured within.
var monoBase struct {
	once      sync.Once
	ok        bool
	ns, width uint64
}

// MonoBase is the kernel's monotonic clock (KernelMono's) less Mono, in
// ns (mod 2^64), and twice what it may be off by; ok is false where the
// package reads no such clock (KernelMono's doc), and the base is then 0.
func MonoBase() (base, width uint64, ok bool) {
	b := &monoBase
	b.once.Do(func() {
		b.width = ^uint64(0)
		for i := 0; i < 8; i++ {
			m1 := uint64(Mono())
			k, ok := KernelMono()
			m2 := uint64(Mono())
			if !ok {
				b.ns, b.width = 0, 0
				return
			}
			if m2-m1 < b.width {
				b.width, b.ns = m2-m1, k-(m1+(m2-m1)/2)
			}
		}
		b.ok = true
	})
	return b.ns, b.width, b.ok
}
