//go:build !windows || fastnow_time

package osclock

import "time"

// Mono is the OS clock's monotonic nanoseconds since the package loaded:
// package time's monotonic reading (CLOCK_MONOTONIC through the vDSO on
// Linux, mach_absolute_time on darwin, the runtime's clock on wasm).
func Mono() int64 { return int64(time.Since(Start)) }

// SystemReal is the system clock in Unix nanoseconds, clamped to
// [0, MaxInt64].
func SystemReal() uint64 { return unixClamped(time.Now()) }
