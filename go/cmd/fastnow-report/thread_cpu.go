package main

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/fastnow/fastnow/go/fastnow"
)

// ThreadCPUReport is the -json output's "thread_cpu": what
// fastnow.ThreadCPUNanotime reads here, its cost beside the OS call made
// the ordinary way, and its agreement with the kernel's thread clock over
// a busy loop and a sleep (on a goroutine locked to its thread).
type ThreadCPUReport struct {
	Clock    string `json:"source"` // fastnow.ThreadCPUClock()
	Why      string `json:"why"`
	Measures bool   `json:"measures_thread_cpu_time"`
	// ThreadCPUNs is ThreadCPUNanotime, median of interleaved rounds;
	// OSCallNs the same clock through syscall.Syscall, as
	// golang.org/x/sys/unix makes it (nil where there is no such call here).
	ThreadCPUNs float64  `json:"ns_per_call"`
	OSCallNs    *float64 `json:"os_ns_per_call"`
	VsOSCall    *float64 `json:"vs_os"`
	// PerfRouteNs is the route the package does not take, measured in the
	// same rounds (Linux, where perf events open; absent elsewhere): the
	// gettid system call that finds the calling thread's event, then the
	// perf event's ioctl and page, as the Rust crate reads it where the page
	// offers no user-space time.
	PerfRouteNs *float64 `json:"perf_route_ns_per_call,omitempty"`
	// BusyKernelNs is the CPU a busy loop burnt by the kernel's clock
	// (nil where the report cannot ask it), BusyNs by ThreadCPUNanotime;
	// AsleepNs the CPU ThreadCPUNanotime counted over a sleep of SleepNs.
	BusyKernelNs *int64 `json:"busy_kernel_ns"`
	BusyNs       int64  `json:"busy_fastnow_ns"`
	AsleepNs     int64  `json:"sleep_cpu_ns"`
	SleepNs      int64  `json:"sleep_ns"`
}

// measureThreadCPU measures the section; quick shortens it.
func measureThreadCPU(quick bool) *ThreadCPUReport {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := &ThreadCPUReport{
		Clock:    fastnow.ThreadCPUClock(),
		Measures: fastnow.MeasuresThreadCPUTime(),
		Why:      "the OS's thread clock, one call per reading (the Go package reads no perf page: see SEMANTICS.md)",
	}
	if !r.Measures {
		r.Why = "no thread CPU clock here: every duration is zero"
	}
	rounds, busy, sleep := 7, 100*time.Millisecond, 50*time.Millisecond
	if quick {
		rounds, busy, sleep = 3, 20*time.Millisecond, 10*time.Millisecond
	}
	per := func(f func() int64) float64 {
		res := testing.Benchmark(func(b *testing.B) {
			for n := 0; n < b.N; n++ {
				sink += f()
			}
		})
		return float64(res.T.Nanoseconds()) / float64(res.N)
	}
	_, hasKernel := kernelThreadCPU()
	perf := openPerfRoute()
	var ours, os, viaPerf []float64
	for i := 0; i < rounds; i++ {
		ours = append(ours, per(fastnow.ThreadCPUNanotime))
		if hasKernel {
			os = append(os, per(func() int64 { v, _ := kernelThreadCPU(); return v }))
		}
		if perf != nil {
			viaPerf = append(viaPerf, per(perf.read))
		}
	}
	if perf != nil {
		perf.close()
		perfNs := sortedMedian(viaPerf)
		r.PerfRouteNs = &perfNs
	}
	r.ThreadCPUNs = sortedMedian(ours)
	if hasKernel {
		osNs := sortedMedian(os)
		vs := r.ThreadCPUNs / osNs
		r.OSCallNs, r.VsOSCall = &osNs, &vs
	}

	k0, _ := kernelThreadCPU()
	a := fastnow.ThreadCPUNanotime()
	x := 0
	for wall := time.Now(); time.Since(wall) < busy; {
		for i := 0; i < 1000; i++ {
			x += i
		}
	}
	sink += int64(x)
	b := fastnow.ThreadCPUNanotime()
	k1, _ := kernelThreadCPU()
	r.BusyNs = b - a
	if hasKernel {
		busy := k1 - k0
		r.BusyKernelNs = &busy
	}
	wall := time.Now()
	time.Sleep(sleep)
	r.SleepNs = int64(time.Since(wall))
	r.AsleepNs = fastnow.ThreadCPUNanotime() - b
	return r
}

func printThreadCPU(r *ThreadCPUReport) {
	fmt.Printf("\nThread CPU time (fastnow.ThreadCPUNanotime): %s — %s\n", r.Clock, r.Why)
	if r.OSCallNs != nil {
		fmt.Printf("- cost: %.1f ns per call; the OS call through syscall.Syscall %.1f ns (%.2fx)\n",
			r.ThreadCPUNs, *r.OSCallNs, *r.VsOSCall)
	} else {
		fmt.Printf("- cost: %.1f ns per call\n", r.ThreadCPUNs)
	}
	if r.PerfRouteNs != nil {
		fmt.Printf("- route: the OS call; a perf event per thread would cost %.1f ns per reading (gettid to find the thread's event, then its ioctl and page) against %.1f ns for ThreadCPUNanotime (see SEMANTICS.md, \"Go reads the OS call only\")\n",
			*r.PerfRouteNs, r.ThreadCPUNs)
	}
	if r.BusyKernelNs != nil {
		fmt.Printf("- busy loop: %.3f ms of CPU by ThreadCPUNanotime, %.3f ms by the kernel's clock around it\n",
			float64(r.BusyNs)/1e6, float64(*r.BusyKernelNs)/1e6)
	} else {
		fmt.Printf("- busy loop: %.3f ms of CPU by ThreadCPUNanotime\n", float64(r.BusyNs)/1e6)
	}
	fmt.Printf("- asleep: %.3f ms of CPU over %.1f ms of sleep\n", float64(r.AsleepNs)/1e6, float64(r.SleepNs)/1e6)
}
