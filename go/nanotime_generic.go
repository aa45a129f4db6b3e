//go:build !amd64

package fastnow

// nanotimeCounter is Nanotime, orderedNanotimeCounter OrderedNanotime and
// unixNanoCounter UnixNano; on amd64 each is one assembly function
// (counter_amd64.s) doing the same.

func nanotimeCounter() int64 {
	if s := proc.state.Load(); s != nil && s.span != 0 {
		if t := readCounter(); t-s.takeover < s.span {
			return int64(s.line.At(t))
		}
	}
	return nanotimeSlow()
}

func orderedNanotimeCounter() int64 {
	if s := proc.state.Load(); s != nil && s.span != 0 {
		if t := readCounterOrdered(orderedAlt); t-s.takeover < s.span {
			return int64(s.line.At(t))
		}
	}
	return orderedNanotimeSlow()
}

func unixNanoCounter() int64 {
	if s := proc.state.Load(); s != nil && s.wallDeadline != 0 {
		if t := readCounter(); t < s.wallDeadline {
			return int64(s.wall.At(t))
		}
	}
	return unixNanoSlow()
}
