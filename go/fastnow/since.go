package fastnow

import "time"

// Since returns the time elapsed since t: Now().Sub(t), as time.Since is
// time.Now().Sub(t) for a time.Time with a monotonic reading. It is
// negative when t is later than now (an Instant moved forward with Add),
// and the largest (or smallest) Duration when the interval does not fit in
// one, never a wrapped value, as time.Since does.
//
// Since differs from Instant.Elapsed only for an Instant later than now:
// Elapsed, which answers "how long has this been running", returns 0 there.
// Under UseClock it reads the ManualClock, like Now.
//
// Since and Until take an Instant, the reading of Now, MonotonicNow,
// OrderedNow and Recent, which share one timeline. A reading on another
// timeline has its own Elapsed and Sub: for a BootInstant b, Since is
// BootNow().Sub(b).
func Since(t Instant) time.Duration { return subSat(Nanotime(), t.ns) }

// Until returns the time until t: t.Sub(Now()), as time.Until is
// t.Sub(time.Now()). It is negative once t has passed, and saturates as
// Since does.
//
//	deadline := fastnow.Now().Add(50 * time.Millisecond)
//	for fastnow.Until(deadline) > 0 {
//		// work
//	}
func Until(t Instant) time.Duration { return subSat(t.ns, Nanotime()) }
