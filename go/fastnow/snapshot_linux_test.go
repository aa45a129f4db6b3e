//go:build linux

package fastnow

import (
	"testing"
	"testing/quick"
	"time"

	"golang.org/x/sys/unix"
)

// kernelClock reads clock id through clock_gettime.
func kernelClock(t *testing.T, id int32) int64 {
	t.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(id, &ts); err != nil {
		t.Fatalf("clock_gettime(%d): %v", id, err)
	}
	return ts.Nano()
}

// between fails unless v lies in [lo - slack, hi + slack] (saturated: an
// unmeasured error, the largest Duration, bounds nothing).
func between(t *testing.T, what string, lo, v, hi int64, slack time.Duration) {
	t.Helper()
	if v < int64(subSat(lo, int64(slack))) || v > addSat(hi, int64(slack)) {
		t.Errorf("%s: %d is not within [%d, %d] (bracket %v) ± %v: %v below, %v above",
			what, v, lo, hi, time.Duration(hi-lo), slack, time.Duration(lo-v), time.Duration(v-hi))
	}
}

// An instant read between two clock_gettime readings converts to a value
// between them, within the error ConversionError states (the larger of the
// errors it states before and after: see below); the same for boot instants and
// CLOCK_BOOTTIME, and for the reverse conversions. A goroutine preempted
// between the reads widens the bracket instead of failing the test.
func TestConversionsLandBetweenTheKernelsReadings(t *testing.T) {
	_ = Now()
	for i := 0; i < 1000; i++ {
		// The larger of the errors stated before and after: a conversion
		// uses the state of its moment, and an update after it (most
		// often in the warm-up, whose updates come milliseconds apart)
		// states a smaller error than the one its offset had.
		e0 := ConversionError()
		lo := kernelClock(t, unix.CLOCK_MONOTONIC)
		p := Now()
		hi := kernelClock(t, unix.CLOCK_MONOTONIC)
		blo := kernelClock(t, unix.CLOCK_BOOTTIME)
		b := BootNow()
		bhi := kernelClock(t, unix.CLOCK_BOOTTIME)
		m, bm := p.MonotonicNanos(), b.BoottimeNanos()
		// The reverse: a kernel reading lies between the instants read
		// around it.
		p1 := Now()
		k := kernelClock(t, unix.CLOCK_MONOTONIC)
		p2 := Now()
		back := InstantOfMonotonic(k)
		e := max(e0, ConversionError())
		between(t, "Instant.MonotonicNanos", lo, m, hi, e)
		between(t, "BootInstant.BoottimeNanos", blo, bm, bhi, e)
		between(t, "InstantOfMonotonic", p1.Nanotime(), back.Nanotime(), p2.Nanotime(), e)
		if t.Failed() {
			t.Fatalf("round %d; %v", i, Snapshot())
		}
	}
}

// A CLOCK_MONOTONIC reading converts to an instant that converts back to
// it (the offset is the same between two calls unless an update came
// between: then by at most what the offset moved, within the error); the
// same for CLOCK_BOOTTIME.
func TestFromAndToTheKernelsClocksRoundTrip(t *testing.T) {
	now := kernelClock(t, unix.CLOCK_MONOTONIC)
	f := func(back uint32, pick bool) bool {
		// Up to 71 minutes back, but never before the clock's zero: the
		// machine may have booted a minute ago.
		n := now - (int64(back)*1_000)%(now+1)
		var got int64
		if pick {
			got = InstantOfMonotonic(n).MonotonicNanos()
		} else {
			got = BootInstantOfBoottime(n).BoottimeNanos()
		}
		if d := time.Duration(got - n); d.Abs() > 2*ConversionError() {
			t.Logf("%d came back as %d (%v)", n, got, d)
			return false
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 5_000}); err != nil {
		t.Error(err)
	}
}

// Every field of a snapshot was read between clock_gettime readings taken
// around it; its bracket is tight (the tightest of a few tries), and its
// precise reading converts to its CLOCK_MONOTONIC within the bracket and the
// conversion's error.
func TestSnapshotFieldsAreConsistent(t *testing.T) {
	_ = Now()
	for i := 0; i < 100; i++ {
		mono0, real0, boot0, tai0 := kernelClock(t, unix.CLOCK_MONOTONIC), kernelClock(t, unix.CLOCK_REALTIME),
			kernelClock(t, unix.CLOCK_BOOTTIME), kernelClock(t, unix.CLOCK_TAI)
		s := Snapshot()
		mono1, real1, boot1, tai1 := kernelClock(t, unix.CLOCK_MONOTONIC), kernelClock(t, unix.CLOCK_REALTIME),
			kernelClock(t, unix.CLOCK_BOOTTIME), kernelClock(t, unix.CLOCK_TAI)
		between(t, "MonotonicNanos", mono0, s.MonotonicNanos, mono1, 0)
		between(t, "RealtimeNanos", real0, s.RealtimeNanos, real1, 0)
		if !s.HasBoottime || !s.HasTAI {
			t.Fatalf("Linux has CLOCK_BOOTTIME and CLOCK_TAI: %+v", s)
		}
		between(t, "BoottimeNanos", boot0, s.BoottimeNanos, boot1, 0)
		between(t, "TAINanos", tai0, s.TAINanos, tai1, 0)
		if s.HasCounter != (proc.state.Load().mode == modeCounter) {
			t.Errorf("a counter reading where the precise clocks read none, or none where they do: %+v", s)
		}
		if s.Width <= 0 || s.Width > time.Duration(mono1-mono0) {
			t.Errorf("width %v outside the bracket around the snapshot, %v", s.Width, time.Duration(mono1-mono0))
		}
		between(t, "the snapshot's Instant", s.MonotonicNanos, s.Instant.MonotonicNanos(), s.MonotonicNanos, s.Width+s.ConversionError)
		if t.Failed() {
			t.Fatalf("round %d: %v", i, s)
		}
	}
}
