package fastnow

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/fastnow/fastnow/go/internal/osclock"
)

// The bridges to the kernel's clocks (spec/SEMANTICS.md, "Clock snapshot
// and the kernel's clocks"; the Rust crate's snapshot.rs): conversions
// between instants and CLOCK_MONOTONIC / CLOCK_BOOTTIME, and
// ClockSnapshot, every clock read together.
//
// Nanotime's timeline is mono() (the monotonic clock since the package
// loaded) plus an offset the writer measures at every state update
// (conversion.go); CLOCK_MONOTONIC is mono() plus the value it read at the
// load (osclock.MonoBase). A conversion loads the published state and
// subtracts or adds both.

// snapshotTries is how many tries Snapshot takes; it keeps the tightest.
const snapshotTries = 4

// kernelOffsets is the precise and boot timelines less CLOCK_MONOTONIC and
// CLOCK_BOOTTIME (mod 2^64, as signed: the timelines start near 0 at the
// package's load, the kernel's clocks at boot), and what a conversion of a
// reading taken now may be off by, in ns.
type kernelOffsets struct {
	mono, boot           int64
	monoError, bootError uint64
}

func kernelConversion() kernelOffsets {
	c := proc.conversion()
	base, width, _ := osclock.MonoBase()
	return kernelOffsets{
		mono:      int64(c.monoOffset - base),
		boot:      int64(c.bootOffset - base),
		monoError: saturatingAdd(c.monoError, width/2),
		bootError: saturatingAdd(c.bootError, width/2),
	}
}

// toKernel is a reading ns on a timeline less the timeline's offset off
// from a kernel's clock: saturated to [0, MaxInt64], as the kernel's
// clocks never read below 0.
func toKernel(ns, off int64) int64 { return max(0, int64(subSat(ns, off))) }

// fromKernel is a kernel clock's reading nanos on a timeline whose offset
// from it is off, saturated to the int64 range.
func fromKernel(nanos, off int64) int64 { return addSat(nanos, off) }

// MonotonicNanos returns i as a CLOCK_MONOTONIC reading, in nanoseconds:
// what clock_gettime(CLOCK_MONOTONIC) read at the same moment, within
// ConversionError — the clock of perf's -k CLOCK_MONOTONIC, eBPF's
// bpf_ktime_get_ns() and ftrace's mono trace clock.
//
// Nanotime's timeline is CLOCK_MONOTONIC plus an offset fastnow measures at
// every state update, on the base of the monotonic clock at the package's
// load (measured once); this subtracts the offset of the state published
// now. The error grows, for an instant far from now, by 1 ppm of its
// distance from now (the rate's error): an instant of an hour ago converts
// within 3.6 ms.
//
// Where the machine has no CLOCK_MONOTONIC the clock is the one package
// time's monotonic readings follow: CLOCK_UPTIME_RAW on Apple platforms
// (the clock of mach_absolute_time, which stops while the machine sleeps),
// QueryPerformanceCounter in nanoseconds on Windows. Where the package
// cannot read that clock (wasm; Solaris, AIX and Plan 9; Windows under the
// fastnow_time tag) it is the monotonic clock since the package loaded.
//
// It saturates: an instant before CLOCK_MONOTONIC's zero (one built with
// InstantOf, or an instant minus more than the uptime) converts to 0. It
// is not mocked: under a ManualClock the process's offset is subtracted
// all the same.
func (i Instant) MonotonicNanos() int64 { return toKernel(i.ns, kernelConversion().mono) }

// InstantOfMonotonic returns the Instant a CLOCK_MONOTONIC reading of
// nanos is on Nanotime's timeline, within ConversionError: for a perf,
// eBPF or ftrace timestamp (see Instant.MonotonicNanos). It saturates at
// the ends of the Instant's range.
func InstantOfMonotonic(nanos int64) Instant {
	return Instant{fromKernel(nanos, kernelConversion().mono)}
}

// BoottimeNanos returns i as a CLOCK_BOOTTIME reading, in nanoseconds,
// within ConversionError: the clock of perf's -k CLOCK_BOOTTIME, eBPF's
// bpf_ktime_get_boot_ns() and ftrace's boot trace clock.
//
// BootNanotime's timeline is CLOCK_BOOTTIME plus an offset fastnow
// measures at every state update; this subtracts the offset of the state
// published now. After a resume the offset is measured again at the first
// update: a boot instant read before it converts within the error that
// update states.
//
// Where the machine has no CLOCK_BOOTTIME the clock is the one
// BootNanotime follows: CLOCK_MONOTONIC_RAW (mach_continuous_time's) on
// Apple platforms, elsewhere the clock of Instant.MonotonicNanos
// (QueryPerformanceCounter on Windows, which counts the time asleep).
// It saturates at 0, as Instant.MonotonicNanos does.
func (i BootInstant) BoottimeNanos() int64 { return toKernel(i.ns, kernelConversion().boot) }

// BootInstantOfBoottime returns the BootInstant of a CLOCK_BOOTTIME
// reading of nanos, within ConversionError. It saturates at the ends of
// the BootInstant's range.
func BootInstantOfBoottime(nanos int64) BootInstant {
	return BootInstant{fromKernel(nanos, kernelConversion().boot)}
}

// ConversionError is how far a conversion of an instant read now may be
// off: Instant.MonotonicNanos from CLOCK_MONOTONIC at the instant's moment,
// and the reverse; for BootInstant the larger error of the boot
// conversions.
//
// It is half the bracket of the sample that measured the offset, plus 1
// ppm (the rate's error) of the time since, plus half the bracket that
// measured CLOCK_MONOTONIC at the package's load: at most a microsecond or
// so while the clocks are read (every update measures the offset again, at
// least twice a second, four times with the upkeep). On the OS clock it is
// only the load's bracket: the offset is the OS clock's own.
//
// When it does not hold: across a suspend that the counter counts, a
// counter jump or a migration, until the next update re-bases the timeline
// (the first reading after it, or the upkeep's turn); while the precise
// clocks stand still after such a re-base it includes how far they stand
// ahead, and an instant read then converts to a CLOCK_MONOTONIC value up to
// that far ahead of its moment; and in the seconds after NTP changed
// CLOCK_MONOTONIC's rate by more than a ppm, the rate in use may be off by
// the whole change over the time since the measurement (under a second).
func ConversionError() time.Duration {
	k := kernelConversion()
	return durationOf(max(k.monoError, k.bootError))
}

// durationOf is ns as a Duration, saturated at its end.
func durationOf(ns uint64) time.Duration { return time.Duration(min(ns, math.MaxInt64)) }

// ClockSnapshot is fastnow's precise clock and the kernel's clocks, read
// together: a point at which to line up fastnow's instants with timestamps
// of other clocks (a trace's, a log's, another process's), or to see how
// the clocks relate.
//
// Snapshot reads the precise clock, then the counter and the OS clocks one
// after the other, then the precise clock again, a few times, and keeps the
// tightest try: every field was read within Width of Instant, the middle
// of that try's two precise readings.
type ClockSnapshot struct {
	// CounterTicks is the architectural counter, in its ticks, where the
	// precise clocks read it (HasCounter); 0 on the OS clock.
	CounterTicks uint64
	HasCounter   bool
	// Instant is fastnow's precise reading.
	Instant Instant
	// MonotonicNanos is CLOCK_MONOTONIC, in nanoseconds: the clock
	// Instant.MonotonicNanos converts to (CLOCK_UPTIME_RAW on Apple
	// platforms, QueryPerformanceCounter on Windows, the monotonic clock
	// since the package loaded where the package reads none of them).
	MonotonicNanos int64
	// RealtimeNanos is CLOCK_REALTIME, in nanoseconds since the Unix epoch
	// (0 before 1970, saturated after 2262).
	RealtimeNanos int64
	// BoottimeNanos is CLOCK_BOOTTIME (Apple platforms:
	// mach_continuous_time's clock, CLOCK_MONOTONIC_RAW), where the OS has a
	// clock that counts suspend apart from the monotonic one (HasBoottime;
	// Windows' QueryPerformanceCounter counts it already).
	BoottimeNanos int64
	HasBoottime   bool
	// TAINanos is CLOCK_TAI (Linux and Android, HasTAI): CLOCK_REALTIME
	// plus the kernel's TAI offset, which is 0 — TAI equal to UTC — unless
	// a time daemon set it (chrony and ptp4l do).
	TAINanos int64
	HasTAI   bool
	// Width is the time between the two precise readings of the try kept:
	// every field was read between them.
	Width time.Duration
	// ConversionError is what ConversionError said at the snapshot.
	ConversionError time.Duration
}

// Snapshot reads every clock together (see ClockSnapshot). It costs a few
// microseconds: four tries of six clock reads, some of them system calls.
// It is not mocked: it reads the machine's clocks under a ManualClock too.
func Snapshot() ClockSnapshot {
	k := kernelConversion()
	var best ClockSnapshot
	for try := 0; try < snapshotTries; try++ {
		var s ClockSnapshot
		before := orderedNanotimeReal()
		if st := proc.state.Load(); st != nil && st.mode == modeCounter {
			s.CounterTicks, s.HasCounter = proc.clocks.counter(), true
		}
		mono, ok := osclock.KernelMono()
		if !ok {
			mono = uint64(osclock.Mono())
		}
		s.MonotonicNanos = int64(min(mono, math.MaxInt64))
		s.RealtimeNanos = int64(osclock.SystemReal())
		boot, hasBoot := osclock.BootTime()
		tai, hasTAI := osclock.TAI()
		after := orderedNanotimeReal()
		s.BoottimeNanos, s.HasBoottime = int64(min(boot, math.MaxInt64)), hasBoot
		s.TAINanos, s.HasTAI = int64(min(tai, math.MaxInt64)), hasTAI
		width := max(0, after-before)
		s.Instant = Instant{before + width/2}
		s.Width = time.Duration(width)
		s.ConversionError = durationOf(max(k.monoError, k.bootError))
		if try == 0 || s.Width < best.Width {
			best = s
		}
	}
	return best
}

// String gives the clocks present, in seconds with every nanosecond:
// "counter 123 ticks, 12.5s after the package loaded, CLOCK_MONOTONIC
// 12.500000040s, CLOCK_REALTIME 1767225600.000000001s, CLOCK_BOOTTIME
// 12.500000050s, CLOCK_TAI 1767225637.000000060s, within 80ns (conversions
// ±1.2µs)".
func (s ClockSnapshot) String() string {
	var b strings.Builder
	secs := func(ns int64) string { return fmt.Sprintf("%d.%09ds", ns/1_000_000_000, ns%1_000_000_000) }
	if s.HasCounter {
		fmt.Fprintf(&b, "counter %d ticks, ", s.CounterTicks)
	}
	fmt.Fprintf(&b, "%v, CLOCK_MONOTONIC %s, CLOCK_REALTIME %s", s.Instant, secs(s.MonotonicNanos), secs(s.RealtimeNanos))
	if s.HasBoottime {
		fmt.Fprintf(&b, ", CLOCK_BOOTTIME %s", secs(s.BoottimeNanos))
	}
	if s.HasTAI {
		fmt.Fprintf(&b, ", CLOCK_TAI %s", secs(s.TAINanos))
	}
	fmt.Fprintf(&b, ", within %v (conversions ±%v)", s.Width, s.ConversionError)
	return b.String()
}
