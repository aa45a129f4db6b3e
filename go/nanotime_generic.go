//go:build !amd64

package fastnow

// nanotimeCounter is Nanotime; on amd64 it is one assembly function.
func nanotimeCounter() int64 {
	if state.Load() == stateCounter {
		p := cur.Load()
		if v, ok := p.inRange(readCounter()); ok {
			return v
		}
	}
	return nanotimeSlow(false)
}
