//go:build !amd64

package fastnow

// bootNanotimeCounter is BootNanotime: Nanotime's fast path plus the state's
// boot offset, from the same state value. On amd64 it is one assembly
// function (boot_amd64.s) doing the same.
func bootNanotimeCounter() int64 {
	if s := proc.view.Load(); s != nil && s.span != 0 {
		if t := readCounter(); t-s.takeover < s.span {
			return int64(s.line.At(t) + s.bootOffset)
		}
	}
	return bootNanotimeSlow()
}
