//go:build !linux

package main

// kernelThreadCPU: elsewhere the report has no second way to the OS's
// thread clock to compare with.
func kernelThreadCPU() (int64, bool) { return 0, false }

// perfRoute: perf events are Linux's.
type perfRoute struct{}

func openPerfRoute() *perfRoute { return nil }
func (*perfRoute) read() int64  { return 0 }
func (*perfRoute) close()       {}
