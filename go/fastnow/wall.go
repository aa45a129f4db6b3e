package fastnow

import "time"

// The wall tier (spec/SEMANTICS.md, "Wall tier"): Unix time as the precise
// reading plus the state's wall offset (offsets.go), CLOCK_REALTIME less
// the precise reading at the sample of the update that published the
// state. The offset is part of the published state, so a reader loads one
// pointer and never combines two anchors. It is measured again at every
// state update, and no piece lasts longer than the resync interval
// (default 1 s): so the wall follows NTP's slews and frequency changes
// within about two seconds (the rate is measured over the most recent
// second) and clock steps within one interval, or within milliseconds
// while the upkeep goroutine runs, which the kernel wakes when the clock is
// set (Linux). The error at any read is at most the rate change since the
// last measurement times the time since the anchor, plus a microsecond.
// Like time.Now, it goes backwards when the system clock is stepped back.
// The resync interval is stored and clamped by the timekeeper (writer.go),
// whose constants hold its default, floor and maximum;
// SetWallResyncInterval documents them.

// UnixNano returns nanoseconds since 1970-01-01 UTC, for a fraction of the
// cost of time.Now().UnixNano() (the repository's BENCHMARKS.md has the
// figures).
//
// Range: a system clock set before 1970 reads 0 and one set after 2262
// (the int64 limit) reads math.MaxInt64, never a negative or wrapped value.
// Near either end (within 2^41 ns, 36 minutes), on the OS source, and
// during a process's first millisecond, it reads the system clock directly
// with the same saturation instead of extrapolating.
func UnixNano() int64 { return unixNanoCounter() }

// WallTime returns UnixNano as a time.Time (in the local zone, without a
// monotonic reading: use Now for intervals).
func WallTime() time.Time { return time.Unix(0, UnixNano()) }

// SetWallResyncInterval sets how often the wall tier re-anchors to the
// system clock at the latest (default 1 s). Intervals below 1 ms (zero and
// negative ones included) are taken as 1 ms, and intervals over 2^40 ns
// (18 minutes) as 2^40 ns: the floor keeps readings a load and a compare,
// with a state update at most once a millisecond, whatever the interval.
// Shorter intervals follow clock steps sooner; each re-anchoring costs a
// sample of the clocks on the goroutine that does it, or nothing on readers
// while the upkeep goroutine runs (which also follows steps within
// milliseconds by itself, on Linux).
func SetWallResyncInterval(d time.Duration) {
	proc.setWallInterval(uint64(max(int64(d), 0)))
}

// ResyncWall re-anchors the wall tier now, e.g. right after the program
// itself set the system clock.
func ResyncWall() { proc.forceUpdate() }
