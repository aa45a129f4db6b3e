package fastnow

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// Clock is what code that wants testable time takes instead of calling the
// package functions directly; System reads the real clocks and ManualClock
// moves only when told.
type Clock interface {
	Now() Instant
	Since(Instant) time.Duration
	UnixNano() int64
}

type systemClock struct{}

// System is the Clock of the package functions.
var System Clock = systemClock{}

func (systemClock) Now() Instant                  { return Now() }
func (systemClock) Since(i Instant) time.Duration { return i.Elapsed() }
func (systemClock) UnixNano() int64               { return UnixNano() }
func (systemClock) String() string                { return "fastnow.System" }

// ManualClock is a Clock for tests: its time moves only by Advance and Set.
// Safe for concurrent use.
type ManualClock struct {
	mu   sync.Mutex
	mono int64
	unix int64
}

// NewManualClock returns a clock whose Unix time is start and whose
// monotonic time starts at one second. A start outside the years
// 1678-2262 (the int64 range of Unix nanoseconds) is taken as the nearer
// end of that range.
func NewManualClock(start time.Time) *ManualClock {
	return &ManualClock{mono: int64(time.Second), unix: unixNanoSat(start)}
}

// Advance moves both the monotonic and the Unix time forward by d. Each
// stops at its largest value (math.MaxInt64 nanoseconds) rather than
// wrapping: the clock never steps back, however far it is advanced. A
// negative d panics (the monotonic time never goes back; Set steps the
// Unix time).
func (c *ManualClock) Advance(d time.Duration) {
	if d < 0 {
		panic("fastnow: ManualClock.Advance with a negative duration")
	}
	c.mu.Lock()
	c.mono = addSat(c.mono, int64(d))
	c.unix = addSat(c.unix, int64(d))
	c.mu.Unlock()
}

// Set steps the Unix time (as if the system clock were set); the monotonic
// time is unchanged. A t outside the int64 range of Unix nanoseconds is
// taken as the nearer end of that range, never a wrapped value.
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	c.unix = unixNanoSat(t)
	c.mu.Unlock()
}

// The times whose Unix nanoseconds are the ends of the int64 range.
var minUnixTime, maxUnixTime = time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64)

// unixNanoSat is t.UnixNano(), saturated to the int64 range (time.Time's
// own is undefined outside it, and wraps).
func unixNanoSat(t time.Time) int64 {
	switch {
	case t.Before(minUnixTime):
		return math.MinInt64
	case t.After(maxUnixTime):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// Now returns the clock's monotonic time as an Instant.
func (c *ManualClock) Now() Instant { return Instant{c.nanotime()} }

func (c *ManualClock) nanotime() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mono
}

// Since returns the clock's time since i (saturated, as Instant.Sub).
func (c *ManualClock) Since(i Instant) time.Duration { return c.Now().Sub(i) }

// UnixNano returns the clock's Unix time.
func (c *ManualClock) UnixNano() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unix
}

// String shows both of the clock's times: the monotonic one as a duration
// (as Instant.String does) and the Unix time in RFC 3339, UTC.
func (c *ManualClock) String() string {
	c.mu.Lock()
	mono, unix := c.mono, c.unix
	c.mu.Unlock()
	return fmt.Sprintf("ManualClock(monotonic %v, Unix %s)", time.Duration(mono), time.Unix(0, unix).UTC().Format(time.RFC3339Nano))
}
