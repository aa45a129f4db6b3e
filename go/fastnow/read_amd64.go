//go:build amd64

package fastnow

// nanotimeCounter is Nanotime, orderedNanotimeCounter OrderedNanotime,
// bootNanotimeCounter BootNanotime and unixNanoCounter UnixNano
// (read_amd64.s): one call each from the caller's code, where a Go
// function around RDTSC would be two. They read proc.view, which a test's
// ManualClock can take over (UseClock); the *Real variants read
// proc.state, the real clocks only.
func nanotimeCounter() int64
func orderedNanotimeCounter() int64
func bootNanotimeCounter() int64
func unixNanoCounter() int64
func nanotimeReal() int64
func orderedNanotimeReal() int64
func unixNanoReal() int64

// asmLayout returns the go_asm.h offsets the assembly reads, for the test
// that holds them to the Go layout.
func asmLayout() (stateField, viewField, start, span, lineOffset, lineSlope, bootOffset, wallOffset uintptr)
