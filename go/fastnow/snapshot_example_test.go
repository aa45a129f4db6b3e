package fastnow_test

import (
	"fmt"
	"time"

	"github.com/fastnow/fastnow/go/fastnow"
)

// An instant as a CLOCK_MONOTONIC timestamp, for lining it up with a
// trace of perf (-k CLOCK_MONOTONIC), eBPF (bpf_ktime_get_ns) or ftrace
// (the mono trace clock).
func ExampleInstant_MonotonicNanos() {
	t := fastnow.Now()
	mono := t.MonotonicNanos()
	back := fastnow.InstantOfMonotonic(mono)
	fmt.Println(back.Sub(t).Abs() <= 2*fastnow.ConversionError())
	// Output: true
}

// A trace's CLOCK_MONOTONIC timestamp as an Instant: how long ago the
// event was, on fastnow's timeline.
func ExampleInstantOfMonotonic() {
	event := fastnow.Now().MonotonicNanos() // a trace's timestamp
	time.Sleep(20 * time.Millisecond)
	ago := fastnow.InstantOfMonotonic(event).Elapsed()
	fmt.Println(ago >= 10*time.Millisecond, ago < time.Minute)
	// Output: true true
}

// A boot instant as a CLOCK_BOOTTIME timestamp (perf -k CLOCK_BOOTTIME,
// bpf_ktime_get_boot_ns) and back.
func ExampleBootInstant_BoottimeNanos() {
	b := fastnow.BootNow()
	back := fastnow.BootInstantOfBoottime(b.BoottimeNanos())
	fmt.Println(back.Sub(b).Abs() <= 2*fastnow.ConversionError())
	// Output: true
}

func ExampleBootInstantOfBoottime() {
	boot := fastnow.BootNow().BoottimeNanos()
	fmt.Println(fastnow.BootInstantOfBoottime(boot).Elapsed() < time.Minute)
	// Output: true
}

// What a conversion may be off by: a microsecond or so while the clocks
// are read.
func ExampleConversionError() {
	fmt.Println(fastnow.ConversionError() < time.Second)
	// Output: true
}

// Every clock read together; the precise reading converts to the
// snapshot's CLOCK_MONOTONIC within the bracket and the conversion's error.
func ExampleSnapshot() {
	s := fastnow.Snapshot()
	off := s.Instant.MonotonicNanos() - s.MonotonicNanos
	fmt.Println(time.Duration(off).Abs() <= s.Width+s.ConversionError)
	// Output: true
}

func ExampleClockSnapshot() {
	s := fastnow.Snapshot()
	fmt.Println(s.Width >= 0, s.RealtimeNanos > 0)
	// Output: true true
}

func ExampleClockSnapshot_String() {
	s := fastnow.ClockSnapshot{Instant: fastnow.InstantOf(int64(2 * time.Second)),
		MonotonicNanos: 9_000_000_001, RealtimeNanos: 1_700_000_000_000_000_000, Width: 90}
	fmt.Println(s)
	// Output: 2s after the package loaded, CLOCK_MONOTONIC 9.000000001s, CLOCK_REALTIME 1700000000.000000000s, within 90ns (conversions ±0s)
}
