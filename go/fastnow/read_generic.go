//go:build !amd64

package fastnow

// nanotimeCounter is Nanotime, orderedNanotimeCounter OrderedNanotime and
// unixNanoCounter UnixNano: they read proc.view, which a test's
// ManualClock can take over (UseClock). The *Real variants read proc.state,
// the real clocks only, for the package's own bookkeeping (the high-water
// mark, the coarse tier's cache). On amd64 each is one assembly function
// (read_amd64.s) doing the same.

func nanotimeCounter() int64 {
	if s := proc.view.Load(); s != nil && s.span != 0 {
		if t := readCounter(); t-s.takeover < s.span {
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
		if s := proc.view.Load(); s != nil && t-s.takeover < s.span {
			return int64(s.line.At(t))
		}
	}
	return orderedNanotimeSlow()
}

func unixNanoCounter() int64 {
	if s := proc.view.Load(); s != nil && s.wallDeadline != 0 {
		if t := readCounter(); t < s.wallDeadline {
			return int64(s.wall.At(t))
		}
	}
	return unixNanoSlow()
}

func nanotimeReal() int64 {
	if s := proc.state.Load(); s != nil && s.span != 0 {
		if t := readCounter(); t-s.takeover < s.span {
			return int64(s.line.At(t))
		}
	}
	return nanotimeRealSlow()
}

func orderedNanotimeReal() int64 {
	if proc.counterRead.Load() {
		t := readCounterOrdered(orderedAlt)
		if s := proc.state.Load(); s != nil && t-s.takeover < s.span {
			return int64(s.line.At(t))
		}
	}
	return orderedNanotimeRealSlow()
}

func unixNanoReal() int64 {
	if s := proc.state.Load(); s != nil && s.wallDeadline != 0 {
		if t := readCounter(); t < s.wallDeadline {
			return int64(s.wall.At(t))
		}
	}
	return unixNanoRealSlow()
}
