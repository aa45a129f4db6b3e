package fastnow

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// How the frequency in use was obtained (Info.FreqOrigin).
const (
	OriginCPUID      = "cpuid"      // CPUID leaf 0x15
	OriginHypervisor = "hypervisor" // CPUID leaf 0x40000010
	OriginRegister   = "register"   // CNTFRQ_EL0
	OriginMeasured   = "measured"   // against CLOCK_MONOTONIC
	OriginOS         = "os"         // the OS clock counts nanoseconds
)

// Why the OS clock is used (Info.Fallback); empty when the counter is.
const (
	FallbackNoCounter    = "this platform has no counter backend"
	FallbackNotInvariant = "the counter is not invariant (its rate follows CPU frequency)"
	FallbackDisabled     = "the counter cannot be read in this process"
	FallbackStalled      = "the counter did not advance"
	FallbackForced       = "FASTNOW_CLOCK=os"
	FallbackTimeTag      = "built with the fastnow_time tag: every read goes through package time"
)

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
	Baseline        time.Duration // interval FreqHz was measured over (OriginMeasured)
	CalibrationWait time.Duration // time the first reading spent calibrating
	Refinements     int           // refinements since start-up
	Fallback        string        // why the OS clock is used; "" when the counter is
	EnvOverride     string        // one of the Env constants
	EnvValue        string        // the raw FASTNOW_CLOCK value when it was invalid
	Clocksource     string        // the Linux kernel's current clocksource, if readable
	Invariant       bool          // the counter ticks at a constant rate
	Hypervisor      string        // hypervisor signature, e.g. "KVMKVMKVM"
	MonotonicMode   string        // MonotonicNanotime's strategy now: "high-water" or "ordered"
}

// String summarises the decision in one line, for logs.
func (i Info) String() string {
	var b strings.Builder
	if i.Source == "counter" {
		fmt.Fprintf(&b, "counter %s at %d Hz (%s", i.Counter, i.FreqHz, i.FreqOrigin)
		if i.Baseline > 0 {
			fmt.Fprintf(&b, " over %v", i.Baseline)
		}
		fmt.Fprintf(&b, "); MonotonicNanotime: %s", i.MonotonicMode)
	} else {
		b.WriteString("OS clock (time package)")
	}
	if i.Fallback != "" {
		fmt.Fprintf(&b, "; fallback: %s", i.Fallback)
	}
	if i.EnvOverride == EnvInvalid {
		fmt.Fprintf(&b, "; FASTNOW_CLOCK=%q ignored (valid values: counter, os)", i.EnvValue)
	}
	return b.String()
}

type probe struct {
	counter                     string // "" when the platform has no backend
	invariant                   bool
	freqHz                      uint64
	freqOrigin                  string
	orderedRead, orderedReadAlt string
	useAlt                      bool
	hypervisor                  string
	disabled                    bool
}

// parseEnv interprets a FASTNOW_CLOCK value (case and surrounding space ignored).
func parseEnv(v string) string {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "":
		return EnvUnset
	case "counter":
		return EnvCounter
	case "os":
		return EnvOS
	default:
		return EnvInvalid
	}
}

// decide applies the shared rules (spec/SEMANTICS.md, "Sources") in order;
// it returns the fallback reason, or "" for the counter.
func decide(p probe, clocksource, env string) string {
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
	case clocksource != "" && kernelCounterName != "" && clocksource != kernelCounterName:
		return "the kernel's clocksource is " + clocksource + ", not the counter (set FASTNOW_CLOCK=counter to override)"
	}
	return ""
}

const (
	stateUndecided uint32 = iota
	stateCounter
	stateOS
)

// state is all the hot path reads to know the source.
var state atomic.Uint32

var (
	detectOnce sync.Once
	decided    struct {
		probe       probe
		clocksource string
		env, raw    string
		fallback    string
	}
)

// ensureDecided runs detection (and the first calibration) once.
func ensureDecided() uint32 {
	detectOnce.Do(runDetection)
	return state.Load()
}

func runDetection() {
	p := probeCounter()
	cs := readClocksource()
	raw := os.Getenv("FASTNOW_CLOCK")
	env := parseEnv(raw)
	fallback := decide(p, cs, env)
	if forcedTimePackage {
		fallback = FallbackTimeTag
	}
	if fallback == "" && !counterAdvances() {
		fallback = FallbackStalled
	}
	decided.probe, decided.clocksource, decided.env, decided.raw, decided.fallback = p, cs, env, raw, fallback
	if fallback != "" {
		startMonotonic(false, false)
		state.Store(stateOS)
		return
	}
	calibrateStart(p)
	startMonotonic(true, p.useAlt)
	state.Store(stateCounter)
}

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

func readClocksource() string {
	b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Supported reports whether the counter (rather than the OS clock) is in use.
func Supported() bool { return ensureDecided() == stateCounter }

// Source describes the clock in use and why; it runs detection if nothing
// has read the clock yet. Not meant for the hot path.
func Source() Info {
	st := ensureDecided()
	d := &decided
	info := Info{
		Counter:     d.probe.counter,
		Fallback:    d.fallback,
		EnvOverride: d.env,
		Clocksource: d.clocksource,
		Invariant:   d.probe.invariant,
		Hypervisor:  d.probe.hypervisor,
	}
	if d.env == EnvInvalid {
		info.EnvValue = d.raw
	}
	info.MonotonicMode = "high-water"
	if monoMode.Load() == monoOrdered {
		info.MonotonicMode = "ordered"
	}
	if st != stateCounter {
		info.Source, info.OrderedRead, info.FreqHz, info.FreqOrigin = "os", "time.Since", 1_000_000_000, OriginOS
		return info
	}
	info.Source = "counter"
	info.OrderedRead = d.probe.orderedRead
	if d.probe.useAlt {
		info.OrderedRead = d.probe.orderedReadAlt
	}
	cal.Lock()
	defer cal.Unlock()
	info.FreqHz = cur.Load().scale.impliedFreqHz()
	info.FreqOrigin = cal.origin
	if cal.origin == OriginMeasured {
		info.Baseline = time.Duration(cal.baselineNs)
	}
	info.CalibrationWait = cal.initWait
	info.Refinements = cal.refinements
	return info
}
