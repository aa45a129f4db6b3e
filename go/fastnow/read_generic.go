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

func orderedNanotimeCounter() int64 {
	if s := proc.view.Load(); s != nil && s.span != 0 {
		if t := readCounterOrdered(orderedAlt); t-s.takeover < s.span {
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
	if s := proc.state.Load(); s != nil && s.span != 0 {
		if t := readCounterOrdered(orderedAlt); t-s.takeover < s.span {
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
