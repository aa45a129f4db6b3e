package main

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/fastnow/fastnow/go/fastnow"
)

// BootReport is the -json output's "boot" (the schema's, shared with the
// Rust report): how fastnow.BootNanotime reads here and why, its cost beside
// Nanotime and the kernel's boot clock, and its agreement with that clock
// over an interval.
type BootReport struct {
	Route      string  `json:"route"` // e.g. "the counter's line plus the boot offset"
	Why        string  `json:"why"`
	BootNs     float64 `json:"ns_per_call"`         // BootNanotime, median of interleaved rounds
	NanotimeNs float64 `json:"instant_ns_per_call"` // Nanotime in the same rounds
	VsNanotime float64 `json:"vs_instant"`
	// KernelNs is clock_gettime(CLOCK_BOOTTIME) through the system call, as
	// the package reads it (nil where there is no boot clock).
	KernelNs *float64 `json:"os_ns_per_call"`
	VsKernel *float64 `json:"vs_os"`
	// IntervalKernelNs is the interval agreement was measured over, by the
	// kernel's boot clock (nil where there is none); IntervalBootNs the same
	// interval by BootNanotime; BracketNs the comparison's uncertainty (half
	// the two brackets' widths).
	IntervalKernelNs *int64 `json:"interval_kernel_ns"`
	IntervalBootNs   int64  `json:"interval_fastnow_ns"`
	BracketNs        *int64 `json:"bracket_ns"`
}

// measureBoot measures the section; quick shortens the interval to 0.2 s.
func measureBoot(quick bool) *BootReport {
	r := &BootReport{Why: "the boot offset (" + bootClockName + " less the precise timeline) is measured at state updates and published with the line"}
	if fastnow.Source().Source == fastnow.SourceCounter {
		r.Route = "the counter's line plus the boot offset"
	} else {
		r.Route = bootClockName + " plus the offset, read at each call"
		r.Why = "the OS clock is the precise tier's source for good: no update comes to measure the offset"
	}
	rounds, interval := 7, time.Second
	if quick {
		rounds, interval = 3, 200*time.Millisecond
	}
	per := func(f func() int64) float64 {
		res := testing.Benchmark(func(b *testing.B) {
			for n := 0; n < b.N; n++ {
				sink += f()
			}
		})
		return float64(res.T.Nanoseconds()) / float64(res.N)
	}
	var boot, nano, kernel []float64
	_, hasKernel := kernelBoot()
	for i := 0; i < rounds; i++ {
		boot = append(boot, per(fastnow.BootNanotime))
		nano = append(nano, per(fastnow.Nanotime))
		if hasKernel {
			kernel = append(kernel, per(func() int64 { v, _ := kernelBoot(); return v }))
		}
	}
	r.BootNs, r.NanotimeNs = sortedMedian(boot), sortedMedian(nano)
	r.VsNanotime = r.BootNs / r.NanotimeNs
	if !hasKernel {
		b0 := fastnow.BootNanotime()
		time.Sleep(interval)
		r.IntervalBootNs = fastnow.BootNanotime() - b0
		return r
	}
	k, vs := sortedMedian(kernel), r.BootNs/sortedMedian(kernel)
	r.KernelNs, r.VsKernel = &k, &vs
	ours0, k0, w0 := bootPair()
	for start := time.Now(); time.Since(start) < interval; {
		sink += fastnow.BootNanotime()
		time.Sleep(time.Millisecond)
	}
	ours1, k1, w1 := bootPair()
	ki, bracket := k1-k0, (w0+w1)/2
	r.IntervalKernelNs, r.IntervalBootNs, r.BracketNs = &ki, ours1-ours0, &bracket
	return r
}

// bootPair is a BootNanotime reading and the kernel's boot clock at its
// moment: the tightest of many brackets, matched to the midpoint.
func bootPair() (ours, kernel, width int64) {
	width = -1
	for i := 0; i < 200; i++ {
		a, _ := kernelBoot()
		v := fastnow.BootNanotime()
		b, _ := kernelBoot()
		if width < 0 || b-a < width {
			ours, kernel, width = v, a+(b-a)/2, b-a
		}
	}
	return ours, kernel, width
}

// sortedMedian sorts v and returns its median (0 for none).
func sortedMedian(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	return median(v)
}

func printBoot(r *BootReport) {
	fmt.Printf("\nTime across suspend (fastnow.BootNanotime): %s — %s\n", r.Route, r.Why)
	fmt.Printf("- cost: %.2f ns per call; Nanotime %.2f ns (%.2fx)", r.BootNs, r.NanotimeNs, r.VsNanotime)
	if r.KernelNs != nil {
		fmt.Printf("; %s %.2f ns", bootClockName, *r.KernelNs)
	}
	fmt.Println()
	if r.IntervalKernelNs != nil {
		fmt.Printf("- agreement over %.3f s of %s: %+d ns (±%d ns of brackets)\n",
			float64(*r.IntervalKernelNs)/1e9, bootClockName, r.IntervalBootNs-*r.IntervalKernelNs, *r.BracketNs)
	} else {
		fmt.Println("- no boot clock to compare here: BootNanotime advances as Nanotime does")
	}
}
