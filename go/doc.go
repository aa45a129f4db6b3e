// Package fastnow is the cheapest correct way to read the time in a hot path.
//
// It reads the CPU's counter (RDTSC on amd64, CNTVCT_EL0 on arm64) instead of
// making the runtime's vDSO calls, converts it at the read with a line (one
// multiply and an add: the fixed-point rules of spec/SEMANTICS.md, shared
// with the Rust crate), and states what each clock guarantees:
//
//   - Nanotime / Now: monotonic nanoseconds, about a third of time.Since's
//     cost; never decreases within a goroutine.
//   - MonotonicNanotime: strictly monotonic across goroutines.
//   - OrderedNanotime: read after every earlier load.
//   - UnixNano / WallTime: Unix time without the vDSO call, re-anchored to
//     the system clock at least every second, so it follows NTP and steps.
//   - RecentUnixNano / RecentNanotime: one atomic load, kept fresh by an
//     upkeep goroutine started on first use, or by Refresh.
//
// # One timeline, one state
//
// Everything a reading needs is one immutable state behind one atomic
// pointer; one writer at a time publishes the next. Each state converts a
// range of counter values, and a new one takes over exactly where the old
// one ends, from the old one's value there, so the conversion is one
// non-decreasing function of the counter for every goroutine, across every
// recalibration and every change of source: no reading ever steps back.
//
// # Calibration follows the kernel
//
// Nothing happens at import. The first reading decides the source (an
// invariant counter that the Linux kernel itself uses as its clocksource,
// else the OS clock; Source says which and why) and returns at once: the
// process's first millisecond reads the OS clock while the counter's rate
// is measured (a frequency the CPU publishes is used when that
// millisecond's measurement agrees with it within 1/64). The
// rate is then measured over the most recent second, so after NTP, chrony
// or PTP change the kernel clock's rate, fastnow follows within about two
// seconds. On Linux amd64 the kernel's clocksource is read again every
// second; if the kernel stops trusting the TSC (or the file cannot be read
// at all, as in a container that hides /sys), fastnow uses the OS clock,
// moving to it without a step back. FASTNOW_CLOCK=counter|os overrides the
// decision; any other value is ignored and reported in Source().EnvOverride.
//
// The updates (a sample of clock reads, or a re-check of the kernel's
// clocksource, one system call; twice a second) fall on the reader that
// finds one due, or, while the upkeep goroutine runs (StartUpkeep, or the
// first Recent* call), on that goroutine alone, which on Linux the kernel
// also wakes when the system clock is set. On a reader an update costs
// a few hundred nanoseconds to a couple of microseconds timed on its own,
// and on a shared VM, for the read in a hot loop that meets it a second
// after it last ran, 6–15 µs (a rate sample: about 1.5 times a cold
// time.Now() there) or 15–30 µs (a clocksource check): programs that
// cannot have one read take that long run the upkeep.
//
// # Processes
//
// Go never runs Go code in a forked child: syscall.ForkExec (behind os/exec
// and os.StartProcess) runs only raw system calls between fork and exec,
// and the new program starts with its own memory, so no fastnow state can
// be half-copied into it. The descriptors fastnow keeps open (the
// clocksource file, the upkeep's timerfd) are close-on-exec, so the new
// program inherits none of them either.
//
// # Stamps shared between goroutines
//
// AtomicInstant and AtomicUnixNano hold a stamp that goroutines update
// without a lock (the "last seen" time of a cache entry or a connection);
// StoreIfNewer and StoreMax only ever move it forward.
//
// # Tests
//
// Three ways to control time in a test:
//
//   - Code that takes a Clock (System, or a ManualClock in tests).
//   - Code that calls the package functions directly: t.Cleanup(UseClock(m))
//     points every one of them at the ManualClock m, for every goroutine,
//     until the test ends (tests that do so are serialised).
//   - Build with -tags fastnow_time: every reading goes through package
//     time, so testing/synctest bubbles control it (synctest needs the
//     timer channels of Go 1.23: a go line of 1.23 or newer in the test's
//     go.mod, or //go:debug asynctimerchan=0 in a test file).
package fastnow
