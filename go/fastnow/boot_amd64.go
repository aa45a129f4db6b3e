//go:build amd64

package fastnow

// bootNanotimeCounter is BootNanotime (boot_amd64.s): one call from the
// caller's code, as Nanotime is, where a Go function around RDTSC would be
// two. It reads proc.view, which a test's ManualClock can take over.
func bootNanotimeCounter() int64
