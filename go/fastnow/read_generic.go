//go:build !amd64

package fastnow

// The read base's fast path (read.go), in Go: on amd64 each read function
// is one assembly function (read_amd64.s) doing the same, one call from
// the caller's code where a Go function around RDTSC would be two.
//
// nanotimeCounter is Nanotime, orderedNanotimeCounter OrderedNanotime,
// bootNanotimeCounter BootNanotime and unixNanoCounter UnixNano: they read
// proc.view, which a test's ManualClock can take over (UseClock). The *Real
// variants read proc.state, the real clocks only, for the package's own
// bookkeeping (the high-water mark, the coarse tier's cache).

// Each function below writes the fast path out: a shared helper is not
// inlined (its cost exceeds the inliner's budget), and its call would land
// on every reading. The shape is one: load the view, which is not nil only
// for a counter state (timekeeper.view; the *Real variants load the state
// itself and check its span), check, for a clock kept as an offset, that
// the state keeps one,
// read the counter, one compare against the piece's fast range, convert,
// add the offset word of the same state.

func nanotimeCounter() int64 {
	if s := proc.view.Load(); s != nil {
		if t := readCounter(); t-s.start < s.span {
			return int64(s.line.At(t))
		}
	}
	return nanotimeSlow()
}

// orderedNanotimeCounter reads the counter before the state: an ordered
// read waits for every earlier instruction, so loads issued before it would
// be waited for, and after it they overlap it. The result is the same: a
// counter value converts alike under every state whose piece holds it, and
// one no loaded piece holds goes to the slow path, which reads again after
// loading the state. Only counterRead must come first: before the counter
// has been the source, reading it may fault.
func orderedNanotimeCounter() int64 {
	if proc.counterRead.Load() {
		t := readCounterOrdered(orderedAlt)
		if s := proc.view.Load(); s != nil && t-s.start < s.span {
			return int64(s.line.At(t))
		}
	}
	return orderedNanotimeSlow()
}

// bootNanotimeCounter and unixNanoCounter add an offset word of the state
// the reading came from (offsets.go); a word of 0 goes to the slow path
// (for the wall: read the system clock).

func bootNanotimeCounter() int64 {
	if s := proc.view.Load(); s != nil && s.bootOffset != 0 {
		if t := readCounter(); t-s.start < s.span {
			return int64(s.line.At(t) + s.bootOffset)
		}
	}
	return bootNanotimeSlow()
}

func unixNanoCounter() int64 {
	if s := proc.view.Load(); s != nil && s.wallOffset != 0 {
		if t := readCounter(); t-s.start < s.span {
			return int64(s.line.At(t) + s.wallOffset)
		}
	}
	return unixNanoSlow()
}

func nanotimeReal() int64 {
	if s := proc.state.Load(); s != nil && s.span != 0 {
		if t := readCounter(); t-s.start < s.span {
			return int64(s.line.At(t))
		}
	}
	return nanotimeRealSlow()
}

func orderedNanotimeReal() int64 {
	if proc.counterRead.Load() {
		t := readCounterOrdered(orderedAlt)
		if s := proc.state.Load(); s != nil && t-s.start < s.span {
			return int64(s.line.At(t))
		}
	}
	return orderedNanotimeRealSlow()
}

func unixNanoReal() int64 {
	if s := proc.state.Load(); s != nil && s.span != 0 && s.wallOffset != 0 {
		if t := readCounter(); t-s.start < s.span {
			return int64(s.line.At(t) + s.wallOffset)
		}
	}
	return unixNanoRealSlow()
}
