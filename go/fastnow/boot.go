package fastnow

import "time"

// BootNanotime returns nanoseconds on Nanotime's timeline plus the time the
// machine spent suspended since it booted (CLOCK_BOOTTIME − CLOCK_MONOTONIC
// at the first reading, later suspends added): a clock that keeps counting
// while the machine sleeps, at Nanotime's cost, for timeouts and ages that
// must include the time a laptop's lid was closed. Nanotime, like
// CLOCK_MONOTONIC and package time's monotonic readings on Linux, does not
// count suspend.
//
// The offset is measured again at every state update, so after a resume the
// clock jumps forward by the time suspended at the first update: at once
// while the upkeep goroutine runs on Linux (the kernel wakes it at resume),
// otherwise at the first reading that updates, within a second of reading.
// Like Nanotime it never decreases within a goroutine.
//
// Linux and Android read CLOCK_BOOTTIME, Apple platforms
// mach_continuous_time's clock (CLOCK_MONOTONIC_RAW); Windows'
// QueryPerformanceCounter, the OS clock there, already counts suspend, and
// this follows it. Elsewhere (wasm, the BSDs) no clock tells suspend apart
// and it advances as Nanotime does. A ManualClock in use (UseClock) gives
// its monotonic reading plus its simulated suspends (ManualClock.Suspend).
func BootNanotime() int64 { return bootNanotimeCounter() }

// BootInstant is a reading of BootNanotime; compare and subtract them like
// Instants. BootInstants and Instants are on different timelines: do not
// mix them.
type BootInstant struct{ ns int64 }

// BootNow reads BootNanotime.
func BootNow() BootInstant { return BootInstant{BootNanotime()} }

// BootInstantOf wraps a BootNanotime value.
func BootInstantOf(nanotime int64) BootInstant { return BootInstant{nanotime} }

// Nanotime returns the reading in nanoseconds (BootNanotime's).
func (i BootInstant) Nanotime() int64 { return i.ns }

// Elapsed is the time since i, suspend included, never negative; it
// saturates as Instant.Elapsed does.
func (i BootInstant) Elapsed() time.Duration { return max(0, subSat(BootNanotime(), i.ns)) }

// Sub returns i-j, negative if j is later, saturated as Instant.Sub.
func (i BootInstant) Sub(j BootInstant) time.Duration { return subSat(i.ns, j.ns) }

// Add returns i+d (d may be negative), saturated as Instant.Add.
func (i BootInstant) Add(d time.Duration) BootInstant {
	return BootInstant{addSat(i.ns, int64(d))}
}

// Before reports whether i is before j.
func (i BootInstant) Before(j BootInstant) bool { return i.ns < j.ns }

// After reports whether i is after j.
func (i BootInstant) After(j BootInstant) bool { return i.ns > j.ns }

// Compare returns -1, 0 or +1 as i is before, equal to or after j.
func (i BootInstant) Compare(j BootInstant) int { return Instant(i).Compare(Instant(j)) }

// String says what the reading is, as Instant.String does, with the time
// suspended that it counts besides: "1m30s after the package loaded,
// suspends since boot included".
func (i BootInstant) String() string { return sinceLoad(i.ns, bootSuffix) }

// bootSuffix ends a BootInstant's String.
const bootSuffix = ", suspends since boot included"
