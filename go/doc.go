// Package fastnow is the cheapest correct way to read the time in a hot path.
//
// It reads the CPU's counter (RDTSC on amd64, CNTVCT_EL0 on arm64) instead of
// making the runtime's two vDSO calls, converts with a calibrated
// multiply-and-shift (the fixed-point rules of spec/SEMANTICS.md, shared with
// the Rust crate), and states what each clock guarantees:
//
//   - Nanotime / Now: monotonic nanoseconds, about 12 ns versus 31 for
//     time.Since; never decreases within a goroutine.
//   - MonotonicNanotime: strictly monotonic across goroutines.
//   - OrderedNanotime: read after every earlier load.
//   - UnixNano / WallTime: Unix time without the second vDSO call,
//     re-anchored to the system clock every second so it follows NTP and steps.
//   - RecentUnixNano / RecentNanotime: one atomic load, kept fresh by an
//     upkeep goroutine started on first use, or by Refresh.
//
// The first reading decides, once, whether the counter is trustworthy (an
// invariant counter that the Linux kernel itself uses as its clocksource);
// otherwise everything reads package time. Source says which and why.
// FASTNOW_CLOCK=counter|os overrides the decision; any other value is ignored
// and reported in Source().EnvOverride. Nothing happens at import: detection
// and calibration (up to 1 ms) run at the first reading.
//
// For tests: take a Clock (System or a ManualClock), or build with
// -tags fastnow_time so every reading goes through package time and
// testing/synctest bubbles control it.
package fastnow
