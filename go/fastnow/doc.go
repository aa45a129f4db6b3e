// Package fastnow is the cheapest correct way to read the time in a hot path.
//
// It reads the CPU's counter (RDTSC on amd64, CNTVCT_EL0 on arm64) instead of
// making the runtime's vDSO calls, converts it with a calibrated line (the
// fixed-point rules of spec/SEMANTICS.md, shared with the Rust crate), and
// states what each clock guarantees:
//
//   - Nanotime / Now: monotonic nanoseconds; never decreases within a goroutine.
//   - MonotonicNanotime / MonotonicNow: strictly monotonic across goroutines.
//   - OrderedNanotime / OrderedNow: read after every earlier load.
//   - UnixNano / WallTime: Unix time, re-anchored to the system clock at
//     least every second, so it follows NTP and steps.
//   - RecentUnixNano / RecentNanotime / Recent: one atomic load, kept fresh
//     by an upkeep goroutine started on first use, or by Refresh.
//
// Nothing runs at import, and no reading waits: the first reading decides the
// source (Source says which and why) and reads the OS clock for the
// millisecond the counter's rate takes to measure. AtomicInstant and
// AtomicUnixNano hold stamps that goroutines share without a lock.
//
// To control time in tests, take a Clock (System, or a ManualClock in
// tests), point
// every package function at a ManualClock with UseClock, or build with
// -tags fastnow_time, which routes every reading through package time so
// that testing/synctest bubbles control it (synctest needs Go 1.23's timer
// channels: a go line of 1.23 or newer in the test's go.mod, or
// //go:debug asynctimerchan=0 in a test file).
package fastnow
