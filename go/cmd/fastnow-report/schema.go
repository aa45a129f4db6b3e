package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/fastnow/fastnow/go/fastnow"
)

// The -json output, in the schema both languages' reports share
// (spec/report.schema.json): field for field the Rust report's, the fields
// only the Rust report measures left out, and "go" added.

// schemaVersion is the -json output's schema_version.
const schemaVersion = 3

// Report is the -json output.
type Report struct {
	SchemaVersion  int             `json:"schema_version"` // first, so that a reader meets it before the rest
	Language       string          `json:"language"`
	FastnowVersion string          `json:"fastnow_version"`
	Mode           string          `json:"mode"`
	Machine        Machine         `json:"machine"`
	Fastnow        Chosen          `json:"fastnow"`
	Costs          []Cost          `json:"costs"`
	Monotonic      *MonotonicStart `json:"monotonic,omitempty"`
	Correctness    []CorrectRow    `json:"correctness"`
	StrictTest     StrictTest      `json:"strict_test"`
	Wall           Wall            `json:"wall"`
	Coarse         Coarse          `json:"coarse"`
	// Steadiness says how steady the costs behind the verdict were.
	Steadiness *Steadiness      `json:"steadiness"`
	ThreadCPU  *ThreadCPUReport `json:"thread_cpu,omitempty"` // thread_cpu.go
	Boot       *BootReport      `json:"boot,omitempty"`       // boot.go
	Snapshot   *SnapshotReport  `json:"snapshot,omitempty"`   // snapshot.go
	Go         GoOnly           `json:"go"`
	Verdict    string           `json:"verdict"`

	info fastnow.Info // Source() when the figures were taken
}

// Cost is one clock's measured cost.
type Cost struct {
	Name     string  `json:"clock"`
	Kind     string  `json:"kind"`           // fastnow, baseline or os
	Role     string  `json:"role,omitempty"` // what it is for, named as in the Rust report's rows
	MedianNs float64 `json:"ns_median"`
	MinNs    float64 `json:"ns_min"`
	MaxNs    float64 `json:"ns_max"`
	// RoundsNs is each round's figure, in the order run.
	RoundsNs []float64 `json:"rounds_ns"`
}

// Machine is what the report found about the machine.
type Machine struct {
	Arch                 string   `json:"arch"`
	CPUVendor            *string  `json:"cpu_vendor"`
	CPUModel             *string  `json:"cpu_model"`
	Cores                int      `json:"cores"`
	Kernel               *string  `json:"kernel"`
	TimerFlags           []string `json:"timer_flags"`
	Hypervisor           *string  `json:"hypervisor"`
	ClocksourceCurrent   *string  `json:"clocksource_current"`
	ClocksourceAvailable []string `json:"clocksource_available"`
}

// Chosen is fastnow.Source(), in the schema's names (the Rust crate's).
type Chosen struct {
	Source                   string  `json:"source"`
	Counter                  *string `json:"counter"`
	OrderedRead              string  `json:"ordered_read"`
	FreqHz                   uint64  `json:"freq_hz"`
	FreqOrigin               string  `json:"freq_origin"`
	PublishedFreqHz          *uint64 `json:"published_freq_hz"`
	CalibrationBaselineNs    int64   `json:"calibration_baseline_ns"`
	CalibrationWaitNs        int64   `json:"calibration_wait_ns"`
	Refinements              int     `json:"refinements"`
	Fallback                 *string `json:"fallback"`
	DemotedAtUnixNs          *int64  `json:"demoted_at_unix_ns"`
	KernelClocksource        *string `json:"kernel_clocksource"`
	VerdictUnavailable       *string `json:"verdict_unavailable"`
	Invariant                bool    `json:"invariant"`
	Upkeep                   bool    `json:"upkeep"`
	EnvOverride              string  `json:"env_override"`
	MonotonicModeAtStart     string  `json:"monotonic_mode_at_start"`
	MonotonicModeAfterReport string  `json:"monotonic_mode_after_report"`
}

// MonotonicStart is MonotonicNanotime on one goroutine before anything
// contended for it; the cost table has the strategy it settled on.
type MonotonicStart struct {
	StartMode        string  `json:"start_mode"`
	StartNsMedian    float64 `json:"start_ns_median"`
	StartNsMin       float64 `json:"start_ns_min"`
	StartNsMax       float64 `json:"start_ns_max"`
	StartStdNsMedian float64 `json:"start_std_ns_median"` // time.Since in the same rounds
	SettledMode      string  `json:"settled_mode"`
}

// CorrectRow is one clock's strict cross-goroutine test.
type CorrectRow struct {
	Clock            string `json:"clock"`
	StrictChecks     int    `json:"strict_checks"`
	StrictViolations int    `json:"strict_violations"`
	Unit             string `json:"unit"`
}

// StrictTest says how the strict test ran and whether it could fail.
type StrictTest struct {
	ChecksPerClock int     `json:"checks_per_clock"`
	ControlClock   *string `json:"control_clock"` // the bare counter read (nil: none here)
	Conclusive     bool    `json:"conclusive"`    // the control failed, so the test can
	Pinned         bool    `json:"pinned"`        // writer and checker pinned to two CPUs
	Note           string  `json:"note"`
}

// Wall is |UnixNano − time.Now| against the midpoint of a bracket.
type Wall struct {
	MedianNs float64 `json:"median_ns"`
	P99Ns    float64 `json:"p99_ns"`
	MaxNs    float64 `json:"max_ns"`
	BoundNs  float64 `json:"bound_ns"`
}

// Coarse is RecentNanotime's age under the upkeep.
type Coarse struct {
	ResolutionMs float64 `json:"resolution_ms"`
	AgeMedianMs  float64 `json:"age_median_ms"`
	AgeP99Ms     float64 `json:"age_p99_ms"`
	AgeMaxMs     float64 `json:"age_max_ms"`
}

// GoOnly is what only the Go report measures.
type GoOnly struct {
	GOMAXPROCS  int                `json:"gomaxprocs"`
	FirstCallMs map[string]float64 `json:"first_call_ms"` // median, p99, max
	Ratios      map[string]float64 `json:"ratios"`
}

// sink receives every reading the timing loops take, so that the compiler
// cannot drop a read whose result is unused; nothing reads it back.
//
//lint:ignore U1000 written only: it keeps the timed reads
var sink int64

// ptr is &s, or nil for "".
func ptr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// modeName is a MonotonicMode in the schema's (the Rust crate's) names.
func modeName(m fastnow.MonotonicMode) string {
	switch m {
	case fastnow.MonotonicHighWater:
		return "HighWater"
	case fastnow.MonotonicOrdered:
		return "Ordered"
	}
	return "Undecided"
}

// originName is an Origin in the schema's names.
func originName(o fastnow.Origin) string {
	switch o {
	case fastnow.OriginCPUID:
		return "Cpuid"
	case fastnow.OriginHypervisor:
		return "Hypervisor"
	case fastnow.OriginRegister:
		return "ArchRegister"
	case fastnow.OriginDeviceTree:
		return "DeviceTree"
	case fastnow.OriginKernel:
		return "Kernel"
	case fastnow.OriginMeasured:
		return "Measured"
	case fastnow.OriginPending:
		return "Pending"
	}
	return "Os"
}

// chosen is Source() in the schema's fields; atStart is MonotonicNanotime's
// strategy before the report read it.
func chosen(i fastnow.Info, atStart fastnow.MonotonicMode) Chosen {
	c := Chosen{
		Source:                   "Os",
		Counter:                  ptr(i.Counter),
		OrderedRead:              i.OrderedRead,
		FreqHz:                   i.FreqHz,
		FreqOrigin:               originName(i.FreqOrigin),
		CalibrationBaselineNs:    int64(i.Baseline),
		CalibrationWaitNs:        int64(i.CalibrationWait),
		Refinements:              i.Refinements,
		Fallback:                 ptr(i.FallbackReason()),
		KernelClocksource:        ptr(i.Clocksource),
		Invariant:                i.Invariant,
		Upkeep:                   i.Upkeep,
		MonotonicModeAtStart:     modeName(atStart),
		MonotonicModeAfterReport: modeName(i.MonotonicMode),
	}
	if i.Source == fastnow.SourceCounter {
		c.Source = "Counter"
	}
	if i.PublishedFreqHz != 0 {
		hz := i.PublishedFreqHz
		c.PublishedFreqHz = &hz
	}
	if !i.DemotedAt.IsZero() {
		ns := i.DemotedAt.UnixNano()
		c.DemotedAtUnixNs = &ns
	}
	if i.ClocksourceErr != nil {
		c.VerdictUnavailable = ptr(i.ClocksourceErr.Error())
	}
	switch i.EnvOverride {
	case fastnow.EnvCounter:
		c.EnvOverride = "Counter"
	case fastnow.EnvOS:
		c.EnvOverride = "Os"
	case fastnow.EnvInvalid:
		c.EnvOverride = "Invalid"
	default:
		c.EnvOverride = "Unset"
	}
	return c
}

// archName is GOARCH in the Rust report's names (Rust's target_arch).
func archName(goarch string) string {
	switch goarch {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	case "386":
		return "x86"
	case "ppc64le":
		return "powerpc64"
	case "loong64":
		return "loongarch64"
	}
	return goarch
}

// timerFlags are the CPU flags the MACHINE section lists, as the Rust
// report does.
var timerFlags = []string{"tsc", "rdtscp", "constant_tsc", "nonstop_tsc", "tsc_known_freq", "tsc_reliable", "tsc_adjust", "tsc_deadline_timer", "hypervisor"}

// machine reads what the kernel says about the CPU and its clocksources
// (Linux; elsewhere the fields are empty).
func machine() Machine {
	cpuinfo, _ := os.ReadFile("/proc/cpuinfo")
	field := func(name string) *string {
		for _, l := range strings.Split(string(cpuinfo), "\n") {
			if strings.HasPrefix(l, name) {
				if _, v, ok := strings.Cut(l, ":"); ok {
					return ptr(strings.TrimSpace(v))
				}
			}
		}
		return nil
	}
	m := Machine{
		Arch:                 archName(runtime.GOARCH),
		CPUVendor:            field("vendor_id"),
		CPUModel:             field("model name"),
		Cores:                runtime.NumCPU(),
		TimerFlags:           []string{},
		Hypervisor:           ptr(fastnow.Source().Hypervisor),
		ClocksourceAvailable: []string{},
	}
	if f := field("flags"); f != nil {
		for _, flag := range strings.Fields(*f) {
			for _, t := range timerFlags {
				if flag == t {
					m.TimerFlags = append(m.TimerFlags, flag)
				}
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = ptr(strings.TrimSpace(string(b)))
	}
	const sysfs = "/sys/devices/system/clocksource/clocksource0/"
	if b, err := os.ReadFile(sysfs + "current_clocksource"); err == nil {
		m.ClocksourceCurrent = ptr(strings.TrimSpace(string(b)))
	}
	if b, err := os.ReadFile(sysfs + "available_clocksource"); err == nil {
		m.ClocksourceAvailable = strings.Fields(string(b))
	}
	return m
}

// cpuName is the CPU model as the report's first lines name it.
func cpuName(m Machine) string {
	if m.CPUModel != nil {
		return *m.CPUModel
	}
	return "CPU model unknown"
}

// moduleVersion is the fastnow module's version in this build ("devel"
// when built from a checkout).
func moduleVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	for _, m := range append([]*debug.Module{&info.Main}, info.Deps...) {
		if m.Path == "github.com/fastnow/fastnow/go" && m.Version != "" && m.Version != "(devel)" {
			return m.Version
		}
	}
	return "devel"
}
