//go:build windows && !fastnow_time

package osclock

import (
	"math/bits"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// The OS clocks on Windows: see qpc_windows.go.

// qpcBase anchors Mono: the counter and frequency at its first call,
// and package time's reading then, so that readings start near the time
// since the package loaded, as elsewhere.
var qpcBase struct {
	once          sync.Once
	ok            bool
	hz, t0, start uint64
}

func Mono() int64 {
	b := &qpcBase
	b.once.Do(func() {
		b.hz, b.ok = QPCFrequency()
		b.t0 = qpcTicks()
		b.start = uint64(time.Since(Start))
	})
	if !b.ok {
		return int64(time.Since(Start))
	}
	d := qpcTicks() - b.t0
	// d * 1e9 / hz without overflow; the quotient fits while d / hz is
	// under 2^64 ns (584 years).
	hi, lo := bits.Mul64(d, 1_000_000_000)
	if hi >= b.hz {
		return int64(MaxUnixNano)
	}
	ns, _ := bits.Div64(hi, lo, b.hz)
	return int64(b.start + ns)
}

// FILETIME is 100 ns units since 1601-01-01 UTC; this many of them lie
// before 1970.
const filetimeUnixEpoch = 116_444_736_000_000_000

func SystemReal() uint64 {
	var ft syscall.Filetime
	syscall.SyscallN(procPreciseTime.Addr(), uintptr(unsafe.Pointer(&ft)))
	units := uint64(ft.HighDateTime)<<32 | uint64(ft.LowDateTime)
	switch {
	case units < filetimeUnixEpoch:
		return 0
	case units-filetimeUnixEpoch > MaxUnixNano/100:
		return MaxUnixNano
	}
	return (units - filetimeUnixEpoch) * 100
}
