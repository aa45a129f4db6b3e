//go:build !amd64 && !arm64 && !(linux && (riscv64 || loong64))

package fastnow

func readCounter() uint64            { return 0 }
func readCounterOrdered(bool) uint64 { return 0 }
func probeCounter() probe            { return probe{} }
