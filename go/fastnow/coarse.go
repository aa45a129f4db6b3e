package fastnow

// The coarse tier (spec/SEMANTICS.md, "Coarse tier"): the time of the last
// refresh, for one atomic load. Kept fresh by an upkeep goroutine (started
// by the first Recent* call, never at import, unless SetAutoUpkeep(false);
// or explicitly with StartUpkeep) or by Refresh, for event loops that
// refresh once per iteration. While upkeep runs it also does the precise and
// wall tiers' state updates (rate measurements, wall re-anchoring, the
// kernel clocksource check), so readers only load, and on Linux the kernel
// wakes it when the system clock is set, so the wall tier follows a step
// within milliseconds. Without upkeep the values stay at the last Refresh
// (the first read in the process refreshes, so they are never unset).
//
// Never ahead of real time: a cached value is a reading already taken (the
// cached Nanotime is a MonotonicNanotime reading), so MonotonicNanotime and
// OrderedNanotime read after RecentNanotime returned, on any goroutine that
// observed it, are at least RecentNanotime(). A plain Nanotime read is not
// ordered after the load and may come out earlier by the CPU's speculation
// window.

// RecentUnixNano returns the Unix nanoseconds of the last refresh (one
// atomic load).
func RecentUnixNano() int64 {
	if v := recentUnix.v.Load(); v != 0 {
		return v
	}
	return firstUse(&recentUnix)
}

// RecentNanotime returns the Nanotime of the last refresh (one atomic load).
// MonotonicNanotime and OrderedNanotime read after it returned are at least
// its value, on any goroutine that observed it.
func RecentNanotime() int64 {
	if v := recentNanotime.v.Load(); v != 0 {
		return v
	}
	return firstUse(&recentNanotime)
}

// Recent returns the Instant of the last refresh.
func Recent() Instant { return Instant{RecentNanotime()} }

// firstUse fills the cache on the first read and starts auto upkeep. It
// always refreshes: a value another goroutine's refresh has not stored yet
// must not be read as unset or as 1970.
//
// While a test's ManualClock is in use, the cache is empty and this reads
// the mock instead (starting nothing).
//
//go:noinline
func firstUse(cached *paddedInt64) int64 {
	for {
		if c := mocked.Load(); c != nil {
			if cached == &recentUnix {
				return c.UnixNano()
			}
			return c.nanotime()
		}
		refreshReal()
		// The first use starts the upkeep goroutine (upkeep.go), which
		// refreshes the cache below both (cache.go).
		if !noAutoUpkeep.Swap(true) {
			_ = StartUpkeep(DefaultResolution) // already running is fine
		}
		if v := cached.v.Load(); v != 0 {
			return v
		}
	}
}
