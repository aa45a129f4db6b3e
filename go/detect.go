package fastnow

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// Deciding which source the precise clocks read, and telling the caller why
// (spec/SEMANTICS.md, "Sources"): at the first reading, and again whenever
// the kernel changes its mind.

// How the frequency in use was obtained (Info.FreqOrigin).
const (
	OriginCPUID      = "cpuid"       // CPUID leaf 0x15
	OriginHypervisor = "hypervisor"  // CPUID leaf 0x40000010
	OriginRegister   = "register"    // CNTFRQ_EL0
	OriginDeviceTree = "device-tree" // the device tree's timebase-frequency (riscv64)
	OriginMeasured   = "measured"    // against CLOCK_MONOTONIC
	OriginOS         = "os"          // the OS clock counts nanoseconds
	// OriginPending: the counter is chosen but not in use yet (a process's
	// first millisecond reads the OS clock while the rate is measured).
	// Source waits the warm-up out, so it never reports it.
	OriginPending = "pending"
)

// Why the OS clock is used (Info.Fallback); empty when the counter is. A
// kernel clocksource other than the counter gives a reason of its own,
// naming it (see FallbackKernelClocksource).
const (
	FallbackNoCounter          = "this platform has no counter backend"
	FallbackNotInvariant       = "the counter is not invariant (its rate follows CPU frequency)"
	FallbackClocksourceUnknown = "the kernel's clocksource could not be read, so nothing vouches for the counter (set FASTNOW_CLOCK=counter to use it anyway)"
	FallbackDisabled           = "the counter cannot be read in this process"
	FallbackStalled            = "the counter did not advance"
	FallbackTooSlow            = "the counter is too slow for fastnow's fixed-point conversion"
	FallbackForced             = "FASTNOW_CLOCK=os"
	FallbackTimeTag            = "built with the fastnow_time tag: every read goes through package time"
)

// FallbackKernelClocksource is the fallback reason when the Linux kernel's
// clocksource is name rather than the counter: at detection, or at run time
// when the kernel demotes the counter (Info.DemotedAt then says when).
func FallbackKernelClocksource(name string) string {
	return "the kernel's clocksource is " + name + ", not the counter (set FASTNOW_CLOCK=counter to override)"
}

// What FASTNOW_CLOCK said (Info.EnvOverride).
const (
	EnvUnset   = ""
	EnvCounter = "counter"
	EnvOS      = "os"
	EnvInvalid = "invalid"
)

// Info describes the clock fastnow chose, how it is calibrated, and why.
type Info struct {
	Source          string        // "counter" or "os"
	Counter         string        // the hardware counter's name, if the platform has one
	OrderedRead     string        // the instruction sequence behind OrderedNanotime
	FreqHz          uint64        // ticks per second in use (1e9 for the OS clock)
	FreqOrigin      string        // one of the Origin constants
	PublishedFreqHz uint64        // the frequency the hardware published, 0 if none (on loong64 reported only: the rate is measured)
	Baseline        time.Duration // window the rate in use was measured over (OriginMeasured)
	CalibrationWait time.Duration // how long the process read the OS clock before the counter took over (the warm-up)
	Refinements     int           // rate measurements since start-up
	Fallback        string        // why the OS clock is used; "" when the counter is
	DemotedAt       time.Time     // when the kernel's verdict moved the clocks to the OS clock at run time; zero if it did not
	EnvOverride     string        // one of the Env constants
	EnvValue        string        // the raw FASTNOW_CLOCK value when it was invalid
	Clocksource     string        // the Linux kernel's clocksource at the last check (Linux amd64)
	Invariant       bool          // the counter ticks at a constant rate
	Hypervisor      string        // hypervisor signature, e.g. "KVMKVMKVM"
	MonotonicMode   string        // MonotonicNanotime's strategy: "high-water", "ordered", or "undecided" before its first reading
	Upkeep          bool          // the upkeep goroutine does the state updates (readers only load)
}

// String summarises the decision in one line, for logs, e.g.
//
//	counter TSC (RDTSC) at 2.445384 GHz (measured over 1s, 12 refinements); ordered read RDTSCP; MonotonicNanotime high-water; kernel clocksource tsc; hypervisor KVMKVMKVM
//	OS clock (CLOCK_MONOTONIC); fallback: the kernel's clocksource is hpet, not the counter (...)
func (i Info) String() string {
	var b strings.Builder
	if i.Source == "counter" {
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
	if i.Fallback != "" {
		fmt.Fprintf(&b, "; fallback: %s", i.Fallback)
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

// formatHz formats a frequency with six significant decimals in the
// largest unit that keeps it at 1 or more: "2.445384 GHz", "24 MHz".
func formatHz(hz uint64) string {
	units := []struct {
		name string
		size uint64
	}{{"GHz", 1e9}, {"MHz", 1e6}, {"kHz", 1e3}}
	for _, u := range units {
		if hz >= u.size {
			whole, frac := hz/u.size, hz%u.size
			if frac == 0 {
				return fmt.Sprintf("%d %s", whole, u.name)
			}
			digits := fmt.Sprintf("%0*d", len(fmt.Sprint(u.size))-1, frac)
			if len(digits) > 6 {
				digits = digits[:6]
			}
			return fmt.Sprintf("%d.%s %s", whole, strings.TrimRight(digits, "0"), u.name)
		}
	}
	return fmt.Sprintf("%d Hz", hz)
}

type probe struct {
	counter                     string // "" when the platform has no backend
	invariant                   bool
	freqHz                      uint64 // the frequency to use, 0 to measure it
	freqOrigin                  string
	publishedHz                 uint64 // a frequency reported only (0: freqHz's)
	orderedRead, orderedReadAlt string
	useAlt                      bool
	hypervisor                  string
	disabled                    bool
}

// parseEnv interprets a FASTNOW_CLOCK value: ASCII white space around it
// (space, tab, line feed, vertical tab, form feed, carriage return, nothing
// else) and ASCII case are ignored, byte by byte, with no Unicode rules
// (spec/vectors/env.json).
func parseEnv(v string) string {
	// An all-ASCII cut set: strings.Trim then works byte by byte.
	switch w := strings.Trim(v, " \t\n\v\f\r"); {
	case w == "":
		return EnvUnset
	case asciiEqualFold(w, "counter"):
		return EnvCounter
	case asciiEqualFold(w, "os"):
		return EnvOS
	}
	return EnvInvalid
}

// asciiEqualFold reports whether s equals the lower-case ASCII word lower,
// ignoring ASCII case only.
func asciiEqualFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// What the kernel says about the counter.
type verdictKind int

const (
	verdictNotApplicable verdictKind = iota // no kernel verdict on this platform
	verdictNamed                            // the kernel's clocksource is name
	verdictUnreadable                       // there should be a verdict, but it could not be read
)

type verdict struct {
	kind verdictKind
	name string
}

// fallback is the fallback reason this verdict calls for, if any, where
// kernelName is the kernel's name for the counter ("" where not checked).
func (v verdict) fallback(kernelName string) string {
	switch {
	case kernelName == "":
		return ""
	case v.kind == verdictNamed && v.name != kernelName:
		return FallbackKernelClocksource(v.name)
	case v.kind == verdictUnreadable:
		return FallbackClocksourceUnknown
	}
	return ""
}

// decision is the outcome of detection.
type decision struct {
	probe       probe
	clocksource string // the kernel's clocksource at the last check
	env, raw    string // what FASTNOW_CLOCK said, and its raw value
	fallback    string // why the OS clock is used; "" for the counter
	kernelName  string // the kernel's name for the counter, "" where not checked
}

// followsKernel reports whether the run-time re-check applies: the counter
// is in use because the kernel vouched for it (not by override).
func (d *decision) followsKernel() bool {
	return d.fallback == "" && d.env != EnvCounter && d.kernelName != ""
}

// recheck returns the fallback a fresh kernel verdict calls for, if the
// counter is in use because the kernel vouched for it.
func (d *decision) recheck(v verdict) string {
	if !d.followsKernel() {
		return ""
	}
	return v.fallback(d.kernelName)
}

// decide applies the rules in order; it returns the fallback reason, or ""
// for the counter. Pure, so every rule is tested.
func decide(p probe, v verdict, env, kernelName string) string {
	switch {
	case env == EnvOS:
		return FallbackForced
	case p.counter == "":
		return FallbackNoCounter
	case p.disabled:
		return FallbackDisabled
	case env == EnvCounter:
		return ""
	case !p.invariant:
		return FallbackNotInvariant
	}
	return v.fallback(kernelName)
}

// plausibleClocksource reports whether b looks like what the kernel writes
// in current_clocksource: a name of [a-z0-9_-], then a line feed.
func plausibleClocksource(b []byte) bool {
	n := len(b)
	if n > 0 && b[n-1] == '\n' {
		n--
	}
	if n == 0 || n > 24 {
		return false
	}
	for _, c := range b[:n] {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// machine is the clocks of this machine, for proc. Its fields are touched
// only under proc.mu.
type machine struct {
	cs clocksourceFile
}

var theMachine machine

// orderedAlt selects LFENCE;RDTSC over RDTSCP for ordered reads; set by
// detection before the first state is published, read after loading one.
var orderedAlt bool

func (*machine) counter() uint64        { return readCounter() }
func (*machine) counterOrdered() uint64 { return readCounterOrdered(orderedAlt) }
func (*machine) mono() uint64           { return uint64(monoNow()) }
func (*machine) real() uint64           { return realNow() }

func (m *machine) verdict() verdict {
	if kernelCounterName == "" {
		return verdict{kind: verdictNotApplicable}
	}
	return m.cs.read()
}

func (*machine) waitMono(until uint64) {
	for {
		now := uint64(monoNow())
		if now >= until {
			return
		}
		if d := until - now; d > 50_000 {
			time.Sleep(time.Duration(d))
		} else {
			runtime.Gosched()
		}
	}
}

func (m *machine) observe() decision {
	p := probeCounter()
	raw := os.Getenv("FASTNOW_CLOCK")
	env := parseEnv(raw)
	v := verdict{kind: verdictNotApplicable}
	if p.counter != "" {
		v = m.verdict()
	}
	fallback := decide(p, v, env, kernelCounterName)
	if forcedTimePackage {
		fallback = FallbackTimeTag
	}
	if fallback == "" && !counterAdvances() {
		fallback = FallbackStalled
	}
	orderedAlt = p.useAlt
	return decision{probe: p, clocksource: v.name, env: env, raw: raw, fallback: fallback, kernelName: kernelCounterName}
}

// counterAdvances checks the counter ticks across a few OS clock reads: one
// that never moves (a broken hypervisor, a frozen emulator) would give
// readings that never advance.
func counterAdvances() bool {
	first := readCounter()
	for i := 0; i < 64; i++ {
		_ = monoNow()
		if readCounter() != first {
			return true
		}
	}
	return false
}

// Supported reports whether the counter is, or is about to be, the source
// of the precise clocks (during a process's first millisecond they read the
// OS clock while the counter's rate is measured).
func Supported() bool { return proc.counterChosen() }

// Source describes the clock in use and why; it runs detection if nothing
// has read the clock yet, and waits out the rest of the process's first
// millisecond if the counter's rate is still being measured, so that what it
// reports is the rate in use. Not meant for the hot path.
func Source() Info {
	info := proc.info()
	switch monoMode.Load() &^ monoMocked {
	case monoHighWater:
		info.MonotonicMode = "high-water"
	case monoOrdered:
		info.MonotonicMode = "ordered"
	default:
		info.MonotonicMode = "undecided"
	}
	return info
}
