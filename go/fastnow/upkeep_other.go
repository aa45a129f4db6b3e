//go:build !linux

package fastnow

// clockWatch: only Linux tells a process that the system clock was set;
// elsewhere the wall tier follows steps at the next resync.
type clockWatch struct{ changed chan struct{} }

func newClockWatch() *clockWatch { return nil }

func (*clockWatch) close() {}
