//go:build !linux

package main

import "runtime"

// bootClockName: the fastnow package reads no boot clock here. On Windows
// its monotonic clock, QueryPerformanceCounter, already counts suspend.
var bootClockName = map[bool]string{
	true:  "QueryPerformanceCounter (which counts suspend)",
	false: "no boot clock (the monotonic clock)",
}[runtime.GOOS == "windows"]

// kernelBoot: the package reads no boot clock here.
func kernelBoot() (int64, bool) { return 0, false }

// kernelMono: the report checks the conversions against CLOCK_MONOTONIC on
// Linux only.
func kernelMono() (int64, bool) { return 0, false }
