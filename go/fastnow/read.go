package fastnow

import "runtime"

// nanotimeSlow is where Nanotime's fast path gives up: a test's
// ManualClock (UseClock), or the real clocks' slow path.
//
//go:noinline
//lint:ignore U1000 called from assembly (read_amd64.s)
func nanotimeSlow() int64 {
	if c := mocked.Load(); c != nil {
		return c.nanotime()
	}
	return nanotimeRealSlow()
}

// nanotimeRealSlow is where nanotimeReal's fast path gives up.
//
//go:noinline
//lint:ignore U1000 called from assembly (read_amd64.s)
func nanotimeRealSlow() int64 { return int64(proc.readSlow(0, false, false)) }

// unixNanoSlow is where UnixNano's fast path gives up.
//
//go:noinline
//lint:ignore U1000 called from assembly (read_amd64.s)
func unixNanoSlow() int64 {
	if c := mocked.Load(); c != nil {
		return c.UnixNano()
	}
	return unixNanoRealSlow()
}

// unixNanoRealSlow is where unixNanoReal's fast path gives up.
//
//go:noinline
//lint:ignore U1000 called from assembly (read_amd64.s)
func unixNanoRealSlow() int64 {
	s := proc.state.Load()
	if s == nil || s.wallDeadline == 0 {
		return int64(proc.unixSlow(0, false))
	}
	return int64(proc.unixSlow(readCounter(), true))
}

// orderedNanotimeSlow is where OrderedNanotime's fast path gives up.
//
//go:noinline
//lint:ignore U1000 called from assembly (read_amd64.s)
func orderedNanotimeSlow() int64 {
	if c := mocked.Load(); c != nil {
		return c.nanotime()
	}
	return orderedNanotimeRealSlow()
}

// orderedNanotimeRealSlow is where orderedNanotimeReal's fast path gives up.
//
//go:noinline
//lint:ignore U1000 called from assembly (read_amd64.s)
func orderedNanotimeRealSlow() int64 { return int64(proc.readSlow(0, false, true)) }

// readSlow is everything off the read fast path: a counter value below the
// piece (read just before a new state took over) or past its trigger, the
// OS clock, the first reading of the process, a source switch. haveTicks
// says whether t is a counter value the caller already read.
func (tk *timekeeper) readSlow(t uint64, haveTicks, ordered bool) uint64 {
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
				if nanos, _, past := first.convert(m); !past {
					return nanos
				}
				runtime.Gosched()
			}
			continue
		}
		var reading uint64
		if s.mode == modeCounter {
			if !haveTicks {
				if ordered {
					t = tk.clocks.counterOrdered()
				} else {
					t = tk.clocks.counter()
				}
				haveTicks = true
			}
			reading = t
		} else {
			reading = tk.clocks.mono()
			if tk.state.Load() != s {
				continue // a newer state: no OS reading after it was published
			}
		}
		nanos, due, past := s.convert(reading)
		if past {
			// A newer state is needed: publish it, or let the goroutine
			// publishing it run.
			if !tk.updateFromReader(causeReaderLate, reading) {
				runtime.Gosched()
			}
			continue
		}
		if due {
			tk.updateFromReader(causeReader, reading)
		}
		return nanos
	}
}

// unixSlow is the wall tier past its deadline (resync, or use the line
// while another goroutine does), or without a line to use: the system
// clock, after switching to the counter if the warm-up is over (a program
// that only reads the wall tier must get the counter too).
func (tk *timekeeper) unixSlow(t uint64, haveTicks bool) uint64 {
	s := tk.state.Load()
	if s == nil {
		tk.ensurePublished()
		return tk.clocks.real()
	}
	if s.mode == modeOS {
		if s.trigger == never {
			return tk.clocks.real()
		}
		if m := tk.clocks.mono(); m >= s.trigger {
			tk.updateFromReader(causeReader, m)
		}
		if s = tk.state.Load(); s.mode == modeOS {
			return tk.clocks.real()
		}
		t, haveTicks = tk.clocks.counter(), true
	}
	if haveTicks {
		if s.wallDeadline != 0 && t >= s.wallDeadline {
			tk.updateFromReader(causeReaderWall, t)
		}
		// The freshest line: the one just published, or, while another
		// goroutine publishes one, the old one (still about as good).
		if fresh := tk.state.Load(); fresh.wallDeadline != 0 {
			return fresh.wall.At(t)
		}
	}
	return tk.clocks.real()
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

// bootNanotimeSlow is where BootNanotime's fast path gives up: a test's
// ManualClock (UseClock), or the real clocks' slow path.
//
//go:noinline
//lint:ignore U1000 called from assembly (boot_amd64.s)
func bootNanotimeSlow() int64 {
	if c := mocked.Load(); c != nil {
		return c.bootNanotime()
	}
	return int64(proc.readBootSlow())
}

// readBootSlow is everything off BootNanotime's fast path: readSlow plus
// the offset of the state loaded after it (the same state or a newer one,
// whose offset is never smaller, so a later reading is never smaller), or,
// on the OS clock for good (no update comes to measure the offset again),
// the boot clock plus the state's offset.
func (tk *timekeeper) readBootSlow() uint64 {
	for {
		if s := tk.state.Load(); s != nil && s.mode == modeOS && s.trigger == never {
			mono, bound := tk.bootMinusMonoNow()
			return mono + bound + s.bootOffset
		}
		nanos := tk.readSlow(0, false, false)
		s := tk.state.Load()
		switch {
		case s == nil:
			// Another goroutine is publishing the first state: the reading
			// is beforeFirst's, and so is the offset.
			return nanos + tk.firstBootOffset()
		case s.mode == modeOS && s.trigger == never:
			continue // the OS clock took over for good since: read it
		}
		return nanos + s.bootOffset
	}
}
