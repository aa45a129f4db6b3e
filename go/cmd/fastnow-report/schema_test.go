package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/fastnow/fastnow/go/fastnow"
)

// loadSchema reads spec/report.schema.json, the schema both languages'
// reports follow.
func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "spec", "report.schema.json"))
	if err != nil {
		t.Skipf("the repository's spec/ is not here: %v", err)
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	return schema
}

// validate checks v against the part of JSON Schema the report's schema
// uses ($ref, type, const, enum, properties, required, additionalProperties,
// items, prefixItems), returning every place v departs from it.
func validate(v any, s map[string]any, root map[string]any, at string) []string {
	if ref, ok := s["$ref"].(string); ok {
		def := root["$defs"].(map[string]any)[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		return validate(v, def, root, at)
	}
	var errs []string
	if ty, ok := s["type"]; ok {
		var types []string
		switch ty := ty.(type) {
		case string:
			types = []string{ty}
		case []any:
			for _, x := range ty {
				types = append(types, x.(string))
			}
		}
		if !hasType(v, types) {
			return []string{fmt.Sprintf("%s: %v is not %v", at, v, types)}
		}
	}
	if c, ok := s["const"]; ok && v != c {
		errs = append(errs, fmt.Sprintf("%s: %v, not %v", at, v, c))
	}
	if e, ok := s["enum"].([]any); ok {
		found := false
		for _, x := range e {
			found = found || x == v
		}
		if !found {
			errs = append(errs, fmt.Sprintf("%s: %v is not one of %v", at, v, e))
		}
	}
	switch v := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for _, r := range asList(s["required"]) {
			if _, ok := v[r.(string)]; !ok {
				errs = append(errs, fmt.Sprintf("%s: no %s", at, r))
			}
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, ok := props[k].(map[string]any); ok {
				errs = append(errs, validate(v[k], p, root, at+"."+k)...)
				continue
			}
			switch extra := s["additionalProperties"].(type) {
			case bool:
				if !extra {
					errs = append(errs, fmt.Sprintf("%s.%s: not in the schema", at, k))
				}
			case map[string]any:
				errs = append(errs, validate(v[k], extra, root, at+"."+k)...)
			}
		}
	case []any:
		prefix := asList(s["prefixItems"])
		for i, x := range v {
			where := fmt.Sprintf("%s[%d]", at, i)
			if i < len(prefix) {
				errs = append(errs, validate(x, prefix[i].(map[string]any), root, where)...)
				continue
			}
			switch items := s["items"].(type) {
			case bool:
				if !items {
					errs = append(errs, where+": beyond the schema's items")
				}
			case map[string]any:
				errs = append(errs, validate(x, items, root, where)...)
			}
		}
	}
	return errs
}

func asList(x any) []any {
	l, _ := x.([]any)
	return l
}

func hasType(v any, types []string) bool {
	for _, t := range types {
		switch t {
		case "null":
			if v == nil {
				return true
			}
		case "object":
			if _, ok := v.(map[string]any); ok {
				return true
			}
		case "array":
			if _, ok := v.([]any); ok {
				return true
			}
		case "string":
			if _, ok := v.(string); ok {
				return true
			}
		case "boolean":
			if _, ok := v.(bool); ok {
				return true
			}
		case "number":
			if _, ok := v.(float64); ok {
				return true
			}
		case "integer":
			if f, ok := v.(float64); ok && f == float64(int64(f)) {
				return true
			}
		}
	}
	return false
}

// schemaErrors writes r as the report does and checks it against the
// schema.
func schemaErrors(t *testing.T, r Report) []string {
	t.Helper()
	var buf bytes.Buffer
	if err := writeJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(buf.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	schema := loadSchema(t)
	return validate(v, schema, schema, "report")
}

// A report with every section, as measureReport assembles it from this
// machine's Source() and machine(), follows the shared schema: every field
// the Go report writes is in it, under the Rust report's name.
func TestJSONFollowsTheSharedSchema(t *testing.T) {
	control := "asm RDTSC function"
	r := Report{
		Language: "go", FastnowVersion: moduleVersion(), Mode: "quick", Machine: machine(),
		Fastnow: chosen(fastnow.Source(), fastnow.MonotonicUndecided),
		Costs: []Cost{
			{Name: "fastnow.Nanotime", Kind: "fastnow", Role: "instant", MedianNs: 11, MinNs: 10, MaxNs: 12, RoundsNs: []float64{11, 10, 12}},
			{Name: nameElapsed, Kind: "fastnow", MedianNs: 12, MinNs: 11, MaxNs: 13, RoundsNs: []float64{12}},
		},
		Monotonic:   monotonicStart(1),
		Correctness: []CorrectRow{{Clock: control, StrictChecks: 10, StrictViolations: 2, Unit: "ticks"}},
		StrictTest:  StrictTest{ChecksPerClock: 10, ControlClock: &control, Conclusive: true, Pinned: true, Note: "n"},
		Wall:        Wall{MedianNs: 10, P99Ns: 20, MaxNs: 30, BoundNs: wallBoundNs},
		Coarse:      Coarse{ResolutionMs: 1, AgeMedianMs: 0.5, AgeP99Ms: 1, AgeMaxMs: 1.1},
		Steadiness:  &Steadiness{Attempts: 1, Steady: true, Unsteady: []string{}},
		ThreadCPU:   measureThreadCPU(true),
		Boot:        measureBoot(true),
		Snapshot:    measureSnapshot(),
		Go:          GoOnly{GOMAXPROCS: 2, FirstCallMs: map[string]float64{"median": 0.1, "p99": 0.2, "max": 0.3}, Ratios: map[string]float64{"time.Since / Nanotime": 2.5}},
		Verdict:     "v",
	}
	r.Monotonic.SettledMode = "Ordered"
	if errs := schemaErrors(t, r); len(errs) > 0 {
		t.Errorf("the report departs from spec/report.schema.json:\n%s", strings.Join(errs, "\n"))
	}
	// The validator sees a departure: a field the schema lacks, a value
	// of the wrong type.
	var buf bytes.Buffer
	_ = writeJSON(&buf, r)
	var v map[string]any
	_ = json.Unmarshal(buf.Bytes(), &v)
	v["extra"] = 1
	v["mode"] = "fast"
	schema := loadSchema(t)
	if errs := validate(v, schema, schema, "report"); len(errs) != 2 {
		t.Errorf("want 2 departures, got %q", errs)
	}
}

// A real -quick -json report follows the shared schema (not under the race
// detector or an emulator, where its benchmarks take minutes).
func TestQuickReportFollowsTheSharedSchema(t *testing.T) {
	if raceEnabled || os.Getenv("FASTNOW_TEST_RUNNER") != "" || testing.Short() {
		t.Skip("the report runs its benchmarks: not under -race, -short or an emulator")
	}
	if runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("this target cannot start processes")
	}
	out, err := runReport(t, "-quick -json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	schema := loadSchema(t)
	if errs := validate(v, schema, schema, "report"); len(errs) > 0 {
		t.Errorf("the report departs from spec/report.schema.json:\n%s", strings.Join(errs, "\n"))
	}
	if v.(map[string]any)["language"] != "go" {
		t.Errorf("language: %v", v.(map[string]any)["language"])
	}
}
