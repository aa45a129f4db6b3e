//go:build !linux

package fastnow

// threadCPUOSCall: elsewhere ThreadCPUNanotime is the OS call itself.
func threadCPUOSCall() int64 { return threadCPUNanotime() }
