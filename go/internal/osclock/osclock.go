// Package osclock is the operating system's clocks fastnow reads (the Rust
// crate's source/os.rs): the monotonic clock every calibration is measured
// against and the precise tier reads wherever the counter is not used, the
// system clock the wall tier follows, and the boot clock that counts
// suspend.
package osclock

import (
	"math"
	"runtime"
	"sync/atomic"
	"time"
)

// Through package time (time.go), or on Windows its own calls
// (windows.go).

// Start anchors the monotonic readings: time.Since(Start) is
// CLOCK_MONOTONIC (through the vDSO on Linux) in nanoseconds since the
// package loaded, and what the precise clocks read on the OS source.
var Start = time.Now()

// Name names the clock the precise tier reads on the OS source,
// for Info: the one package time's monotonic readings come from, except on
// Windows (windows.go).
var Name = func() string {
	switch runtime.GOOS {
	case "darwin", "ios":
		return "mach_absolute_time"
	case "windows":
		return "QueryPerformanceCounter"
	case "js":
		return "performance.now"
	case "wasip1":
		return "the WASI monotonic clock"
	}
	return "CLOCK_MONOTONIC"
}()

// MaxUnixNano is the latest Unix time in nanoseconds that an int64 holds;
// readings of the system clock are clamped to it.
const MaxUnixNano = math.MaxInt64

// realReference, when set, replaces time.Now as the wall tier's reference
// (tests inject clock steps and the ends of the range with it, never
// touching the machine's clock).
var realReference atomic.Pointer[func() time.Time]

// SetReference makes f the system clock Real reads (nil: the machine's),
// for tests.
func SetReference(f func() time.Time) {
	if f == nil {
		realReference.Store(nil)
		return
	}
	realReference.Store(&f)
}

// Real is CLOCK_REALTIME in Unix nanoseconds, clamped to [0, MaxInt64]:
// 0 for a clock set before 1970, MaxInt64 for one set after 2262, never a
// wrapped or negative value.
func Real() uint64 {
	if f := realReference.Load(); f != nil {
		return unixClamped((*f)())
	}
	return SystemReal()
}

// unixClamped is t in Unix nanoseconds, clamped to [0, MaxInt64].
func unixClamped(t time.Time) uint64 {
	sec, nsec := t.Unix(), int64(t.Nanosecond())
	switch {
	case sec < 0:
		return 0
	case sec > (MaxUnixNano-nsec)/1_000_000_000:
		return MaxUnixNano
	}
	return uint64(sec*1_000_000_000 + nsec)
}
