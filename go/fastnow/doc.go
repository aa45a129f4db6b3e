// Package fastnow is the cheapest correct way to read the time in a hot path.
//
// It reads the CPU's counter (RDTSC on amd64, CNTVCT_EL0 on arm64) instead of
// making the runtime's vDSO calls, converts it with a calibrated line (the
// fixed-point rules it shares with the Rust crate, written down in
// https://github.com/fastnow/fastnow/blob/main/spec/SEMANTICS.md), and
// states what each clock guarantees:
//
//   - Nanotime / Now: monotonic nanoseconds; never decreases within a goroutine.
//     Since and Until are time.Since and time.Until for an Instant.
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
// Loggers: NewSlogHandler puts log/slog records on the wall tier. The
// adapters for zap (a zapcore.Clock) and zerolog (a TimestampFunc) are in
// their own module, github.com/fastnow/fastnow/go/adapters (packages
// fastnowzap and fastnowzerolog), so that this one depends on no logging
// library.
//
// To control time in tests, take a Clock (System, or a ManualClock in
// tests), point
// every package function at a ManualClock with UseClock, or build with
// -tags fastnow_time, which routes every reading through package time so
// that testing/synctest bubbles control it (synctest needs Go 1.23's timer
// channels: a go line of 1.23 or newer in the test's go.mod, or
// //go:debug asynctimerchan=0 in a test file).
//
// Coming from package time, VictoriaMetrics' fasttime or a cached time that
// a ticker goroutine updates: the migration guide,
// https://github.com/fastnow/fastnow/blob/main/docs/MIGRATION.md, maps each
// of their names to this package's and says what behaves differently (Now,
// unlike time.Now, is ordered within one goroutine only).
package fastnow
