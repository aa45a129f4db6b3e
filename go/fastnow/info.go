package fastnow

import (
	"fmt"
	"strings"
	"time"
)

// What the clocks report about themselves (Source, Supported) and the one
// control over calibration (Recalibrate).

// Info describes the clock fastnow chose, how it is calibrated, and why.
type Info struct {
	Source              SourceKind    // SourceCounter or SourceOS
	Counter             string        // the hardware counter's name, if the platform has one
	OrderedRead         string        // the instruction sequence behind OrderedNanotime
	FreqHz              uint64        // ticks per second in use (1e9 for the OS clock)
	FreqOrigin          Origin        // how FreqHz was obtained
	PublishedFreqHz     uint64        // the frequency the hardware published, 0 if none (on loong64 reported only: the rate is measured)
	Baseline            time.Duration // window the rate in use was measured over (OriginMeasured)
	CalibrationWait     time.Duration // how long the process read the OS clock before the counter took over (the warm-up)
	Refinements         int           // rate measurements since start-up
	Fallback            Fallback      // why the OS clock is used; FallbackNone when the counter is
	FallbackClocksource string        // with FallbackKernelClocksource: the kernel's clocksource that ruled the counter out
	DemotedAt           time.Time     // when the kernel's verdict moved the clocks to the OS clock at run time; zero if it did not
	EnvOverride         EnvOverride   // what FASTNOW_CLOCK said
	EnvValue            string        // the raw FASTNOW_CLOCK value when it was invalid
	Clocksource         string        // the kernel's clocksource at the last check (Linux 386 and amd64; FreeBSD amd64: its timecounter)
	Invariant           bool          // the counter ticks at a constant rate
	Hypervisor          string        // hypervisor signature, e.g. "KVMKVMKVM"
	MonotonicMode       MonotonicMode // MonotonicNanotime's strategy (MonotonicUndecided before its first reading)
	Upkeep              bool          // the upkeep goroutine does the state updates (readers only load)
}

// String summarises the decision in one line, for logs, e.g.
//
//	counter TSC (RDTSC) at 2.445384 GHz (measured over 1s, 12 refinements); ordered read RDTSCP; MonotonicNanotime high-water; kernel clocksource tsc; hypervisor KVMKVMKVM
//	OS clock (CLOCK_MONOTONIC); fallback: the kernel's clocksource is hpet, not the counter (...)
func (i Info) String() string {
	var b strings.Builder
	if i.Source == SourceCounter {
		fmt.Fprintf(&b, "counter %s at %s (%s", i.Counter, formatHz(i.FreqHz), i.FreqOrigin)
		if i.Baseline > 0 {
			fmt.Fprintf(&b, " over %v", i.Baseline.Round(time.Microsecond))
		}
		switch {
		case i.Refinements == 1:
			b.WriteString(", 1 refinement")
		case i.Refinements > 1:
			fmt.Fprintf(&b, ", %d refinements", i.Refinements)
		}
		fmt.Fprintf(&b, "); ordered read %s; MonotonicNanotime %s", i.OrderedRead, i.MonotonicMode)
	} else {
		fmt.Fprintf(&b, "OS clock (%s)", osClockName)
	}
	if i.Fallback != FallbackNone {
		fmt.Fprintf(&b, "; fallback: %s", i.FallbackReason())
	}
	if !i.DemotedAt.IsZero() {
		fmt.Fprintf(&b, " (since %s)", i.DemotedAt.UTC().Format(time.RFC3339Nano))
	}
	if i.Clocksource != "" {
		fmt.Fprintf(&b, "; kernel clocksource %s", i.Clocksource)
	}
	if i.Hypervisor != "" {
		fmt.Fprintf(&b, "; hypervisor %s", i.Hypervisor)
	}
	if i.Upkeep {
		b.WriteString("; upkeep goroutine running")
	}
	if i.EnvOverride == EnvInvalid {
		fmt.Fprintf(&b, "; FASTNOW_CLOCK=%q ignored (valid values: counter, os)", i.EnvValue)
	} else if i.EnvOverride != EnvUnset {
		fmt.Fprintf(&b, "; FASTNOW_CLOCK=%s", i.EnvOverride)
	}
	return b.String()
}

// FallbackReason returns why the OS clock is used, as Info.String gives it:
// Fallback's sentence, naming FallbackClocksource for
// FallbackKernelClocksource; "" while the counter is in use.
func (i Info) FallbackReason() string {
	return reason{i.Fallback, i.FallbackClocksource}.String()
}

// Supported reports whether the counter is, or is about to be, the source
// of the precise clocks (during a process's first millisecond they read the
// OS clock while the counter's rate is measured).
func Supported() bool { return proc.counterChosen() }

// Source describes the clock in use and why; it runs detection if nothing
// has read the clock yet, and waits out the rest of the process's first
// millisecond if the counter's rate is still being measured, so that what it
// reports is the rate in use. Not meant for the hot path.
//
// The counter is used when it ticks at a constant rate and, on Linux 386
// and amd64 (Windows amd64: through QueryPerformanceFrequency; FreeBSD
// amd64: its timecounter), the kernel itself uses it as its clocksource. The kernel's verdict is read again every
// second: if the kernel stops trusting the counter, or the verdict cannot be
// read at all (a container that hides /sys), the OS clock is used, taking
// over without a step back. FASTNOW_CLOCK=counter|os overrides the decision;
// any other value is ignored and reported in Info.EnvOverride.
func Source() Info {
	info := proc.info()
	switch monoMode.Load() &^ monoMocked {
	case monoHighWater:
		info.MonotonicMode = MonotonicHighWater
	case monoOrdered:
		info.MonotonicMode = MonotonicOrdered
	default:
		info.MonotonicMode = MonotonicUndecided
	}
	return info
}

// Recalibrate re-measures the counter's rate over a fresh window, now, and
// returns the updated Source(). fastnow measures the rate continuously
// (over the most recent second), so most programs never need it; call it
// after an event that may have changed the counter's relation to the
// kernel's clock, such as a resume from suspend or a live migration. It
// restarts the measurement with a one-millisecond window (taking about a
// millisecond, without holding anything readers wait for) and lets windows
// grow again. With the OS clock it does nothing.
func Recalibrate() Info {
	proc.recalibrate()
	return Source()
}

// info is what Source reports.
func (tk *timekeeper) info() Info {
	tk.finishWarmUp()
	tk.mu.Lock()
	k := tk.k
	tk.mu.Unlock()
	d := &k.decision
	p := &d.probe
	counter := d.fallback.why == FallbackNone
	info := Info{
		Source:          SourceOS,
		Counter:         p.counter,
		OrderedRead:     osClockName,
		FreqHz:          1_000_000_000,
		FreqOrigin:      k.origin,
		PublishedFreqHz: max(p.freqHz, p.publishedHz),
		Refinements:     k.refinements,
		Fallback:        d.fallback.why,
		EnvOverride:     d.env,
		Clocksource:     d.clocksource,
		Invariant:       p.invariant,
		Hypervisor:      p.hypervisor,
		Upkeep:          tk.upkeep.Load(),
	}
	if d.env == EnvInvalid {
		info.EnvValue = d.raw
	}
	if counter {
		info.Source = SourceCounter
		info.OrderedRead = p.orderedRead
		if p.useAlt {
			info.OrderedRead = p.orderedReadAlt
		}
		info.FreqHz = 0
		if k.state.mode == modeCounter {
			info.FreqHz = k.state.line.FreqHz()
		}
	}
	if k.origin == OriginMeasured {
		info.Baseline = time.Duration(k.windowNs)
	}
	if k.counterSince != 0 {
		info.CalibrationWait = time.Duration(satSub(k.counterSince, k.firstMono))
	}
	if d.fallback.why == FallbackKernelClocksource {
		info.FallbackClocksource = d.fallback.clocksource
	}
	if k.demoted {
		info.DemotedAt = time.Unix(0, int64(k.demotedAt))
	}
	return info
}
