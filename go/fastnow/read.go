package fastnow

import "runtime"

// The read base (the Rust crate's timekeeper/read.rs is the same design):
// one read of the precise timeline, whose fast path (read_generic.go, and
// read_amd64.s on amd64) and slow path (readSlow) are written once, and
// every other clock that reading plus an offset word of the same state
// (offsets.go), loaded in the same state load.
//
// A test's ManualClock (UseClock) is read at one place: viewSlow, the slow
// path of the package-level read functions, which loaded proc.view — nil
// while a ManualClock is in use, which sends every fast path there. The
// real clocks' slow paths (the *RealSlow functions, for the package's own
// bookkeeping) never look at it.

// viewSlow is where a fast path on proc.view gives up: a test's
// ManualClock, or the real clocks' slow path.
func viewSlow(c clock, ordered bool) int64 {
	if m := mocked.Load(); m != nil {
		return c.mocked(m)
	}
	return int64(proc.readClock(c, 0, false, ordered))
}

// The slow paths the fast paths tail-call (the assembly calls them by
// name, so each is a function of its own).

//go:noinline
//lint:ignore U1000 called from assembly (read_amd64.s)
func nanotimeSlow() int64 { return viewSlow(clockPrecise, false) }

//go:noinline
//lint:ignore U1000 called from assembly (read_amd64.s)
func orderedNanotimeSlow() int64 { return viewSlow(clockPrecise, true) }

//go:noinline
//lint:ignore U1000 called from assembly (read_amd64.s)
func bootNanotimeSlow() int64 { return viewSlow(clockBoot, false) }

//go:noinline
//lint:ignore U1000 called from assembly (read_amd64.s)
func unixNanoSlow() int64 { return viewSlow(clockWall, false) }

//go:noinline
//lint:ignore U1000 called from assembly (read_amd64.s)
func nanotimeRealSlow() int64 { return int64(proc.readClock(clockPrecise, 0, false, false)) }

//go:noinline
//lint:ignore U1000 called from assembly (read_amd64.s)
func orderedNanotimeRealSlow() int64 { return int64(proc.readClock(clockPrecise, 0, false, true)) }

//go:noinline
//lint:ignore U1000 called from assembly (read_amd64.s)
func unixNanoRealSlow() int64 { return int64(proc.readClock(clockWall, 0, false, false)) }

// readClock is the read base's slow path for clock c: readSlow's precise
// reading plus c's offset in the state that converted it (so a reading and
// its offset always belong together: a re-base may lower the boot offset
// by what it moved the precise readings forward). On the OS clock for
// good, where no update comes to measure an offset again, a clock kept as
// an offset reads its own OS clock plus its word; an exact clock (the
// wall) reads its OS clock where the state keeps no offset or the reading
// stands still, or where a precise reader would wait for the writer. t and
// haveTicks are readSlow's.
func (tk *timekeeper) readClock(c clock, t uint64, haveTicks, ordered bool) uint64 {
	if c != clockPrecise {
		if s := tk.state.Load(); s != nil && s.mode == modeOS && s.trigger == never {
			return c.os(tk) + c.kept(s)
		}
	}
	nanos, s, reading := tk.readSlow(t, haveTicks, ordered, c.exact())
	if c == clockPrecise {
		return nanos
	}
	if s != nil && s.mode == modeOS && s.trigger == never {
		// The OS clock for good, published since the check above (by this
		// goroutine's update past the counter's end, or another's): its
		// offset is to c's own OS clock, not to the precise reading.
		return c.os(tk) + c.kept(s)
	}
	off := c.beforeFirst(tk)
	if s != nil {
		off = c.kept(s)
	}
	if c.exact() && (s == nil || off == 0 || s.stillAt(reading)) {
		return c.os(tk)
	}
	return nanos + off
}

// readSlow is everything off the read fast path: a counter value below the
// piece (read just before a new state took over, or after the counter went
// back) or past its trigger, the OS clock, the first reading of the
// process, a source switch. haveTicks says whether t is a counter value the
// caller already read (after loading the state it tried). It returns the
// reading in nanoseconds, the state that converted it (nil: the one every
// goroutine agrees on while the first is published, beforeFirst) and the
// reading of that state's source it converted. A reader that asks for the
// time of its moment (exact) does not wait for the goroutine publishing a
// newer state: it gets a nil state instead, and reads the system clock.
func (tk *timekeeper) readSlow(t uint64, haveTicks, ordered, exact bool) (nanos uint64, from *state, reading uint64) {
	for {
		s := tk.state.Load()
		if s == nil {
			if tk.ensurePublished() {
				continue
			}
			// Another goroutine is publishing the first state; until it
			// lands, act on the one every goroutine agrees on.
			m := tk.clocks.mono()
			first := tk.beforeFirst(m)
			if tk.state.Load() == nil {
				if exact {
					return 0, nil, m
				}
				if nanos, _, miss := first.convert(m); miss == converted {
					return nanos, nil, m
				}
				runtime.Gosched()
			}
			continue
		}
		if s.mode == modeCounter {
			if !haveTicks {
				if ordered {
					t = tk.clocks.counterOrdered()
				} else {
					t = tk.clocks.counter()
				}
			}
			reading = t
		} else {
			reading = tk.clocks.mono()
			if tk.state.Load() != s {
				continue // a newer state: no OS reading after it was published
			}
		}
		var due bool
		var miss miss
		nanos, due, miss = s.convert(reading)
		if miss == converted {
			if due {
				_, published := tk.updateFromReader(causeReader, reading, s)
				// The time of its moment: from the state this goroutine
				// just published, re-anchored (the wall offset).
				if exact && published != nil && published.mode == s.mode {
					if nanos, ok := published.beforeSample(reading); ok {
						return nanos, published, reading
					}
				}
			}
			return nanos, s, reading
		}
		// Past the end, or below the floor (the counter went back): a newer
		// state is needed. Publish it, or let the goroutine publishing it
		// run.
		c := causeReaderLate
		if miss == belowFloor {
			c = causeReaderBelow
		}
		got, published := tk.updateFromReader(c, reading, s)
		if published != nil && published.mode == s.mode {
			// The state this goroutine just published covers the reading,
			// which came before its sample: no second counter read, which
			// could be past that piece's end too, and so on without end were
			// pieces ever that short. (Its floor may lie above the reading,
			// which beforeSample allows for.)
			if nanos, ok := published.beforeSample(reading); ok {
				return nanos, published, reading
			}
		}
		if !got {
			if exact {
				return 0, nil, reading
			}
			runtime.Gosched()
		}
		// A switch of source (the reading is in the old source's units), or
		// another goroutine's newer state: read again with it, after
		// loading it.
		haveTicks = false
	}
}

// ensurePublished runs detection and publishes the first state if nothing
// has; it never blocks. It returns false when another goroutine is doing it
// right now (the caller acts on beforeFirst meanwhile).
func (tk *timekeeper) ensurePublished() bool {
	if tk.state.Load() != nil {
		return true
	}
	if tk.mu.TryLock() {
		if !tk.k.decided {
			tk.detect()
		}
		tk.mu.Unlock()
		return true
	}
	return tk.state.Load() != nil
}

// beforeFirst is the state a reader acts on while another goroutine
// publishes the first one, given its monotonic reading: that clock
// unchanged, up to firstSpanNs past the process's first moment — the first
// reading any goroutine offered here, agreed through one compare-and-swap.
// The detecting goroutine agrees on the moment before it samples, and its
// first state ends no earlier than this one, so the rule of take-over
// points holds from the process's first reading on: a reading taken while
// the detecting goroutine was preempted for long waits for the first
// state, rather than returning a value that a later reading, converted by
// the published states, could lie below.
func (tk *timekeeper) beforeFirst(mono uint64) state {
	first := mono
	if !tk.firstMono.CompareAndSwap(0, max(mono, 1)) {
		first = tk.firstMono.Load()
	}
	end := first + firstSpanNs
	return state{mode: modeOS, trigger: end, end: end}
}
