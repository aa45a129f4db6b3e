//go:build !linux

package fastnow

import "github.com/fastnow/fastnow/go/internal/threadcpu"

// threadCPUOSCall: elsewhere ThreadCPUNanotime is the OS call itself.
func threadCPUOSCall() int64 { return threadcpu.Nanotime() }
