package fastnow

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/fastnow/fastnow/go/internal/osclock"
)

// Deciding which source the precise clocks read, and telling the caller why
// (spec/SEMANTICS.md, "Sources"): at the first reading, and again whenever
// the kernel changes its mind.

// SourceKind is the clock the precise tier reads (Info.Source).
type SourceKind uint8

const (
	SourceCounter SourceKind = iota + 1 // the CPU's counter, converted with a calibrated line
	SourceOS                            // the OS clock (CLOCK_MONOTONIC, or the platform's equivalent)
)

// String returns "counter" or "os".
func (s SourceKind) String() string {
	switch s {
	case SourceCounter:
		return "counter"
	case SourceOS:
		return "os"
	}
	return "SourceKind(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText encodes s as its String, so that Info marshals to readable
// JSON.
func (s SourceKind) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Fallback says why the OS clock is used (Info.Fallback): FallbackNone
// while the counter is. FallbackKernelClocksource carries the name of the
// kernel's clocksource in Info.FallbackClocksource, and Info.FallbackReason
// gives the sentence with it.
type Fallback uint8

const (
	FallbackNone               Fallback = iota // the counter is in use
	FallbackNoCounter                          // this target has no counter backend
	FallbackNotInvariant                       // the counter's rate follows CPU frequency
	FallbackKernelClocksource                  // the kernel's clocksource is not the counter: at detection, or at run time (Info.DemotedAt says when)
	FallbackClocksourceUnknown                 // the kernel's clocksource could not be read: missing, or denied (a sandbox); not for want of descriptors or memory (Info.ClocksourceErr)
	FallbackDisabled                           // the counter cannot be read in this process
	FallbackStalled                            // the counter did not advance
	FallbackTooSlow                            // the counter is too slow for the fixed-point conversion
	FallbackForced                             // FASTNOW_CLOCK=os
	FallbackTimeTag                            // built with the fastnow_time tag
)

// String returns the reason as a sentence ("" for FallbackNone), the
// sentence the Rust crate's Fallback displays. For
// FallbackKernelClocksource it cannot name the clocksource:
// Info.FallbackReason does.
func (f Fallback) String() string {
	switch f {
	case FallbackNone:
		return ""
	case FallbackNoCounter:
		return "this target has no counter backend"
	case FallbackNotInvariant:
		return "the counter is not invariant (its rate follows CPU frequency)"
	case FallbackKernelClocksource:
		return "the kernel's clocksource is not the counter (set FASTNOW_CLOCK=counter to override)"
	case FallbackClocksourceUnknown:
		return "the kernel's clocksource could not be read, so nothing vouches for the counter (set FASTNOW_CLOCK=counter to use it anyway)"
	case FallbackDisabled:
		return "the counter cannot be read in this process (" + disabledWhy + ")"
	case FallbackStalled:
		return "the counter did not advance"
	case FallbackTooSlow:
		return "the counter is too slow for fastnow's fixed-point conversion"
	case FallbackForced:
		return "FASTNOW_CLOCK=os"
	case FallbackTimeTag:
		return "built with the fastnow_time tag: every read goes through package time"
	}
	return "Fallback(" + strconv.Itoa(int(f)) + ")"
}

// MarshalText encodes f as its String.
func (f Fallback) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// reason is a Fallback with the data it carries: the kernel's clocksource,
// for FallbackKernelClocksource. The zero reason is FallbackNone.
type reason struct {
	why         Fallback
	clocksource string
}

// String is the reason as a sentence, naming the clocksource if known.
func (r reason) String() string {
	if r.why == FallbackKernelClocksource && r.clocksource != "" {
		return "the kernel's clocksource is " + r.clocksource + ", not the counter (set FASTNOW_CLOCK=counter to override)"
	}
	return r.why.String()
}

// EnvOverride is what FASTNOW_CLOCK said (Info.EnvOverride).
type EnvOverride uint8

const (
	EnvUnset   EnvOverride = iota // not set, empty, or only white space
	EnvCounter                    // "counter": the counter whenever one is readable
	EnvOS                         // "os": always the OS clock
	EnvInvalid                    // anything else: ignored (Info.EnvValue holds it)
)

// String returns "" for EnvUnset, else "counter", "os" or "invalid".
func (e EnvOverride) String() string {
	switch e {
	case EnvUnset:
		return ""
	case EnvCounter:
		return "counter"
	case EnvOS:
		return "os"
	case EnvInvalid:
		return "invalid"
	}
	return "EnvOverride(" + strconv.Itoa(int(e)) + ")"
}

// MarshalText encodes e as its String.
func (e EnvOverride) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// parseEnv interprets a FASTNOW_CLOCK value: ASCII white space around it
// (space, tab, line feed, vertical tab, form feed, carriage return, nothing
// else) and ASCII case are ignored, byte by byte, with no Unicode rules
// (spec/vectors/env.json).
func parseEnv(v string) EnvOverride {
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
	verdictUnreadable                       // there should be a verdict, but it cannot be read: nothing vouches
	verdictUnavailable                      // it could not be read just now (err): it says nothing
)

type verdict struct {
	kind verdictKind
	name string
	err  error // verdictUnavailable: why (a syscall.Errno)
}

// clocksourceFailure is the verdict a failed open, pread or fstat of the
// clocksource file gives, by its error (spec/vectors/verdict.json). The
// file missing or not a file that can be read, or access denied (a
// sandbox, a container that hides /sys, sysfs not mounted, a chroot, a
// system call filter) will not change by waiting: nothing vouches for the
// counter. Every other error is taken as one of the moment, which says
// nothing about the counter: descriptors exhausted (EMFILE, ENFILE), memory
// short (ENOMEM), an interrupted call.
func clocksourceFailure(err error) verdict {
	for _, e := range [...]syscall.Errno{syscall.ENOENT, syscall.ENOTDIR, syscall.EACCES, syscall.EPERM,
		syscall.ELOOP, syscall.ENAMETOOLONG, syscall.ENODEV, syscall.ENXIO, syscall.EISDIR,
		syscall.EINVAL, syscall.ENOSYS} {
		if errors.Is(err, e) {
			return verdict{kind: verdictUnreadable}
		}
	}
	return verdict{kind: verdictUnavailable, err: err}
}

// fallback is the fallback reason this verdict calls for, if any, where
// kernelName is the kernel's name for the counter ("" where not checked).
// A verdict unavailable for now calls for none: it says nothing.
func (v verdict) fallback(kernelName string) reason {
	switch {
	case kernelName == "":
		return reason{}
	case v.kind == verdictNamed && !namesTheCounter(v.name, kernelName):
		return reason{FallbackKernelClocksource, v.name}
	case v.kind == verdictUnreadable:
		return reason{why: FallbackClocksourceUnknown}
	}
	return reason{}
}

// namesTheCounter reports whether the kernel's clocksource name vouches for
// the counter whose kernel name is kernelName: that name, or, for FreeBSD's
// "TSC", any "TSC-" variant ("TSC-low": the TSC read shifted right, where
// the full rate would overflow the kernel's 32-bit timecounter arithmetic
// too soon).
func namesTheCounter(name, kernelName string) bool {
	return name == kernelName || kernelName == "TSC" && strings.HasPrefix(name, "TSC-")
}

// decision is the outcome of detection.
type decision struct {
	probe       probe
	clocksource string      // the kernel's clocksource at the last check
	env         EnvOverride // what FASTNOW_CLOCK said
	raw         string      // its raw value
	fallback    reason      // why the OS clock is used; none for the counter
	kernelName  string      // the kernel's name for the counter, "" where not checked
	// pending is why the kernel's verdict, all the counter still needs,
	// could not be read yet; the OS clock is read until it can (verdict.go).
	pending error
}

// settle decides with verdict v: at detection, and again with each verdict
// read while the decision waits for one (pending).
func (d *decision) settle(v verdict) {
	d.fallback = decide(d.probe, v, d.env, d.kernelName)
	d.clocksource = v.name
	d.pending = nil
	if v.kind == verdictUnavailable && d.fallback.why == FallbackNone && d.env != EnvCounter {
		d.pending = v.err
	}
}

// counter reports whether the counter is chosen: no fallback, no verdict
// awaited.
func (d *decision) counter() bool { return d.fallback.why == FallbackNone && d.pending == nil }

// followsKernel reports whether the run-time re-check applies: the counter
// is in use because the kernel vouched for it (not by override).
func (d *decision) followsKernel() bool {
	return d.fallback.why == FallbackNone && d.env != EnvCounter && d.kernelName != ""
}

// recheck returns the fallback a fresh kernel verdict calls for, if the
// counter is in use because the kernel vouched for it.
func (d *decision) recheck(v verdict) reason {
	if !d.followsKernel() {
		return reason{}
	}
	return v.fallback(d.kernelName)
}

// decide applies the rules in order; it returns the fallback reason, or
// none for the counter. Pure, so every rule is tested.
func decide(p probe, v verdict, env EnvOverride, kernelName string) reason {
	switch {
	case env == EnvOS:
		return reason{why: FallbackForced}
	case p.counter == "":
		return reason{why: FallbackNoCounter}
	case p.disabled:
		return reason{why: FallbackDisabled}
	case env == EnvCounter:
		return reason{}
	case !p.invariant:
		return reason{why: FallbackNotInvariant}
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

// kernelVerdict reads the kernel's verdict on the counter, through f
// (kept open between reads), where there is one.
func kernelVerdict(f *clocksourceFile) verdict {
	if kernelCounterName == "" {
		return verdict{kind: verdictNotApplicable}
	}
	return f.read()
}

// observe observes this machine and decides; f keeps the clocksource file
// open for the run-time re-checks.
func observe(f *clocksourceFile) decision {
	p := probeCounter()
	raw := os.Getenv("FASTNOW_CLOCK")
	env := parseEnv(raw)
	v := verdict{kind: verdictNotApplicable}
	if p.counter != "" {
		v = kernelVerdict(f)
	}
	d := decision{probe: p, env: env, raw: raw, kernelName: kernelCounterName}
	d.settle(v)
	if forcedTimePackage {
		d.fallback, d.pending = reason{why: FallbackTimeTag}, nil
	}
	if d.fallback.why == FallbackNone && !counterAdvances() {
		d.fallback, d.pending = reason{why: FallbackStalled}, nil
	}
	orderedAlt = p.useAlt
	return d
}

// counterAdvances checks the counter ticks across a few OS clock reads: one
// that never moves (a broken hypervisor, a frozen emulator) would give
// readings that never advance.
func counterAdvances() bool {
	first := readCounter()
	for i := 0; i < 64; i++ {
		_ = osclock.Mono()
		if readCounter() != first {
			return true
		}
	}
	return false
}
