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
// To order events across machines, HLC is a hybrid logical clock: its
// HLCTimestamp stamps are one uint64 each, the Rust crate's layout, close to
// the wall clock, never going back, and above every stamp received before
// them.
//
// Nothing runs at import, and no reading waits: the first reading decides the
// source (Source says which and why) and reads the OS clock for the
// millisecond the counter's rate takes to measure (or, where the kernel's
// verdict on the counter cannot be read yet, the process being out of
// descriptors, until it can). AtomicInstant and
// AtomicUnixTime hold stamps that goroutines share without a lock.
//
// Across suspend and resume, Nanotime, MonotonicNanotime and
// OrderedNanotime keep to the clock package time's monotonic readings come
// from (CLOCK_MONOTONIC on Linux, which does not count the time the machine
// was suspended), whatever the counter did meanwhile, and never step back.
// A counter that counted the suspend (an invariant TSC in suspend-to-idle),
// restarted near zero at the resume, or jumped or changed rate (a migrated
// virtual machine) is re-based onto that clock at the next state update:
// the readings stand still for at most what the piece of the timeline in
// use had left (half a second and 2 ms where the kernel's verdict on the
// counter is followed, a second and 2 ms elsewhere, 254 ms while the upkeep
// goroutine runs), never count the time asleep, and are in step again from
// the update after. Source reports each re-base (Info.CounterJumps).
// BootNanotime counts the time suspended; UnixNano follows the system clock
// across a suspend as across a step of it.
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
