package fastnow

import (
	"fmt"
	"strings"
	"time"

	"github.com/fastnow/fastnow/go/internal/osclock"
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
	Fallback            Fallback      // why the OS clock is used for good; FallbackNone when the counter is, and with SourceOS while the counter awaits the kernel's verdict (ClocksourceErr says why)
	FallbackClocksource string        // with FallbackKernelClocksource: the kernel's clocksource that ruled the counter out
	DemotedAt           time.Time     // when the kernel's verdict moved the clocks to the OS clock at run time; zero if it did not
	CounterJumps        int           // how many times the counter left the OS clock's line and the precise clocks were re-based (see CounterJump)
	LastCounterJump     CounterJump   // the last such jump; zero when CounterJumps is 0
	EnvOverride         EnvOverride   // what FASTNOW_CLOCK said
	EnvValue            string        // the raw FASTNOW_CLOCK value when it was invalid
	Clocksource         string        // the kernel's clocksource at the last check (Linux 386 and amd64; FreeBSD amd64: its timecounter)
	ClocksourceErr      error         // why the last read of the kernel's clocksource failed, when the failure says nothing about the counter (errors.Is(err, syscall.EMFILE): out of descriptors; ENOMEM): the decision stands and the file is read again; nil once a read succeeds
	ClocksourceFailures int           // with ClocksourceErr: how many reads in a row failed so
	ClocksourceLastRead time.Duration // with ClocksourceErr: how long ago the kernel's clocksource was last read; 0 if it never was (the first reading)
	Invariant           bool          // the counter ticks at a constant rate
	Hypervisor          string        // hypervisor signature, e.g. "KVMKVMKVM"
	MonotonicMode       MonotonicMode // MonotonicNanotime's strategy (MonotonicUndecided before its first reading)
	Upkeep              bool          // the upkeep goroutine does the state updates (readers only load)
}

// String summarises the decision in one line, for logs, e.g.
//
//	counter TSC (RDTSC) at 2.445384 GHz (measured over 1s, 12 refinements); ordered read RDTSCP; MonotonicNanotime high-water; kernel clocksource tsc; hypervisor KVMKVMKVM
//	OS clock (CLOCK_MONOTONIC); fallback: the kernel's clocksource is hpet, not the counter (...)
//	OS clock (CLOCK_MONOTONIC); counter TSC (RDTSC) awaits the kernel's verdict: the kernel's clocksource could not be read: too many open files (EMFILE), 3 attempts in a row; not read yet; retrying
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
		fmt.Fprintf(&b, "OS clock (%s)", osclock.Name)
	}
	if i.Fallback != FallbackNone {
		fmt.Fprintf(&b, "; fallback: %s", i.FallbackReason())
	}
	if !i.DemotedAt.IsZero() {
		fmt.Fprintf(&b, " (since %s)", i.DemotedAt.UTC().Format(time.RFC3339Nano))
	}
	if i.ClocksourceErr != nil {
		why := describeClocksourceErr(i.ClocksourceErr, i.ClocksourceFailures, i.ClocksourceLastRead)
		switch {
		case i.Source == SourceOS && i.Fallback == FallbackNone:
			fmt.Fprintf(&b, "; counter %s awaits the kernel's verdict: %s; retrying", i.Counter, why)
		case i.Source == SourceCounter:
			fmt.Fprintf(&b, "; %s; the counter stays in use, the verdict read again at least once a second", why)
		default:
			fmt.Fprintf(&b, "; %s", why)
		}
	}
	if i.CounterJumps > 0 {
		fmt.Fprintf(&b, "; re-based %dx, last: %s", i.CounterJumps, i.LastCounterJump)
	}
	if i.Clocksource != "" {
		fmt.Fprintf(&b, "; kernel clocksource %s", i.Clocksource)
		if i.ClocksourceErr != nil {
			b.WriteString(" when last read")
		}
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

// CounterJump is a time the counter left the line of the OS clock
// (CLOCK_MONOTONIC on Linux) and fastnow re-based the precise clocks onto
// that clock again (see Info.LastCounterJump).
//
// A counter jumps against the kernel's clock when it counts through a
// suspend that CLOCK_MONOTONIC does not count (an invariant TSC in
// suspend-to-idle), restarts near zero at a resume (the TSC after
// suspend-to-RAM on much hardware), or moves to another host's counter (a
// migrated virtual machine), which may also run at another rate. The precise
// clocks never count such a jump and never step back across it: they
// continue from where the OS clock says the timeline is, or stand still
// until it gets there.
type CounterJump struct {
	// At is the wall time of the update that found the jump.
	At time.Time
	// Ahead is how far the counter had moved beyond what the OS clock did
	// since the update before, at the counter's rate: positive when it ran
	// ahead (a suspend it counted, a jump forward), negative when it fell
	// behind. Zero when WentBack.
	Ahead time.Duration
	// WentBack reports that the counter went back below values already
	// read (a reset at a resume, a migration), where the distance means
	// nothing.
	WentBack bool
}

// String describes the jump, e.g. "counter 3600000.123 ms ahead of
// CLOCK_MONOTONIC at 2024-05-01T07:00:00.123456789Z" or "counter went back
// at ...".
func (j CounterJump) String() string {
	at := j.At.UTC().Format(time.RFC3339Nano)
	if j.WentBack {
		return "counter went back at " + at
	}
	dir, us := "ahead of", j.Ahead.Microseconds()
	if j.Ahead < 0 {
		dir, us = "behind", -us
	}
	return fmt.Sprintf("counter %d.%03d ms %s %s at %s", us/1000, us%1000, dir, osclock.Name, at)
}

// FallbackReason returns why the OS clock is used, as Info.String gives it:
// Fallback's sentence, naming FallbackClocksource for
// FallbackKernelClocksource; "" while the counter is in use.
func (i Info) FallbackReason() string {
	return reason{i.Fallback, i.FallbackClocksource}.String()
}

// Supported reports whether the counter is, or is about to be, the source
// of the precise clocks (during a process's first millisecond they read the
// OS clock while the counter's rate is measured; and, where the kernel's
// verdict could not be read yet, until it can, which Source says).
func Supported() bool { return proc.counterChosen() }

// Source describes the clock in use and why; it runs detection if nothing
// has read the clock yet, and waits out the rest of the process's first
// millisecond if the counter's rate is still being measured, so that what it
// reports is the rate in use. Not meant for the hot path.
//
// The counter is used when it ticks at a constant rate and, on Linux 386
// and amd64 (Windows amd64: through QueryPerformanceFrequency; FreeBSD
// amd64: its timecounter), the kernel itself uses it as its clocksource. The
// kernel's verdict is read again every second by the upkeep goroutine, and
// by Source when the last reading of it is a second old (readers read it
// only where a reading showed cause: a counter jump, or the kernel's clock
// turned into a system call; so without the upkeep a demotion is followed
// at the next Source): if the kernel stops trusting the counter, or the
// verdict cannot be read at all (a container that hides /sys), the OS clock
// is used, taking over without a step back. A verdict that cannot be read
// for now (the process out of descriptors or memory) changes nothing: the
// counter stays in use, or, at the first reading, waits on the OS clock
// until the verdict can be read; Info.ClocksourceErr says why.
// FASTNOW_CLOCK=counter|os overrides the decision; any other value is
// ignored and reported in Info.EnvOverride.
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
// (over the most recent second), and notices on its own when the counter
// leaves the OS clock's line — a resume, a reset, a migration (see
// CounterJump) — so most programs never need it. It restarts the
// measurement with a one-millisecond window (taking about a millisecond,
// without holding anything readers wait for) and lets windows grow again:
// for a program that knows the counter's rate just changed and wants the
// new one measured at once rather than within the second. With the OS clock
// it does nothing.
func Recalibrate() Info {
	proc.recalibrate()
	return Source()
}

// info is what Source reports.
func (tk *timekeeper) info() Info {
	tk.finishWarmUp()
	tk.mu.Lock()
	// The kernel's verdict, read again if a check is due: readers read it
	// only where a reading showed cause, and what this reports should be no
	// older than a second.
	if tk.k.state.mode == modeCounter && tk.k.decision.followsKernel() && tk.clocks.mono() >= tk.k.nextCheckMono {
		tk.checkKernel()
	}
	k := tk.k
	tk.mu.Unlock()
	d := &k.decision
	p := &d.probe
	counter := d.counter()
	info := Info{
		Source:          SourceOS,
		Counter:         p.counter,
		OrderedRead:     osclock.Name,
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
			// The rate in use where the piece stands still after a re-base.
			slope := k.state.line.Slope
			if slope == 0 {
				slope = k.rate
			}
			info.FreqHz = line{Slope: slope}.FreqHz()
		}
	}
	if k.origin == OriginMeasured {
		info.Baseline = time.Duration(k.windowNs)
	}
	if k.counterSince != 0 {
		info.CalibrationWait = time.Duration(saturatingSub(k.counterSince, k.firstMono))
	}
	if d.fallback.why == FallbackKernelClocksource {
		info.FallbackClocksource = d.fallback.clocksource
	}
	if k.demoted {
		info.DemotedAt = time.Unix(0, int64(k.demotedAt))
	}
	if v := &k.verdicts; v.err != nil {
		info.ClocksourceErr, info.ClocksourceFailures = clocksourceErr{v.err}, v.failures
		if v.readMono != 0 {
			info.ClocksourceLastRead = time.Duration(saturatingSub(tk.clocks.mono(), v.readMono))
		}
	}
	if k.rebases > 0 {
		info.CounterJumps = k.rebases
		info.LastCounterJump = CounterJump{At: time.Unix(0, int64(k.lastRebase.at)), WentBack: k.lastRebase.wentBack}
		if !k.lastRebase.wentBack {
			info.LastCounterJump.Ahead = time.Duration(k.lastRebase.ahead)
		}
	}
	return info
}
